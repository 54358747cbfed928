//! Memory and CPU limits through cgroups v2, where the machine lets the
//! agent use them: one cgroup per container with `memory.max` (the kernel
//! kills a container that goes over; its `memory.events` say so afterwards)
//! and `cpu.weight` proportional to its vcores; what a container uses is
//! read back from the same cgroup (`memory.current`, `cpu.stat`), with no
//! walk of its processes.
//!
//! Finding a usable hierarchy: either a directory the operator delegated
//! (`--cgroup DIR`, with `memory` and `cpu` enabled for its children), or
//! the agent's own cgroup, which it prepares by moving itself into a leaf
//! (`weft-agent`), since cgroups v2 lets only a cgroup without processes
//! hand controllers to its children, and creating `weft-containers` beside
//! it. When neither works the agent polls RSS instead (`memory`); deciding
//! that is `agent`'s.

use std::path::{Path, PathBuf};

use weft_model::ContainerId;

/// The leaf the agent moves itself into.
const AGENT_LEAF: &str = "weft-agent";
/// The parent of the containers' cgroups.
const CONTAINERS: &str = "weft-containers";

/// Why cgroups cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// No cgroup v2 hierarchy is mounted, or this process is not in it.
    #[error("no cgroup v2 hierarchy: {0}")]
    NotV2(String),
    /// The cgroup lacks a controller the agent needs.
    #[error("cgroup {} does not offer the {missing} controller to its children", dir.display())]
    MissingController {
        /// The cgroup.
        dir: PathBuf,
        /// `memory` or `cpu`.
        missing: &'static str,
    },
    /// A cgroup file could not be read or written.
    #[error("cgroup file {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// A cgroup whose children get the `memory` and `cpu` controllers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cgroups {
    dir: PathBuf,
}

/// One container's cgroup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerCgroup {
    dir: PathBuf,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CgroupError + '_ {
    move |source| CgroupError::Io {
        path: path.to_owned(),
        source,
    }
}

fn write(path: &Path, value: &str) -> Result<(), CgroupError> {
    std::fs::write(path, value).map_err(io(path))
}

fn has_controllers(file: &Path, dir: &Path) -> Result<(), CgroupError> {
    let text = std::fs::read_to_string(file).map_err(io(file))?;
    for needed in ["memory", "cpu"] {
        if !text.split_whitespace().any(|c| c == needed) {
            return Err(CgroupError::MissingController {
                dir: dir.to_owned(),
                missing: needed,
            });
        }
    }
    Ok(())
}

impl Cgroups {
    /// Uses `dir`, a cgroup delegated to the agent whose
    /// `cgroup.subtree_control` already enables `memory` and `cpu`.
    pub fn at(dir: &Path) -> Result<Cgroups, CgroupError> {
        has_controllers(&dir.join("cgroup.subtree_control"), dir)?;
        Ok(Cgroups {
            dir: dir.to_owned(),
        })
    }

    /// Prepares this process's own cgroup v2 for containers (see the module
    /// comment), or says why it cannot.
    pub fn auto() -> Result<Cgroups, CgroupError> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| CgroupError::NotV2(format!("cannot read /proc/self/mountinfo: {e}")))?;
        let membership = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| CgroupError::NotV2(format!("cannot read /proc/self/cgroup: {e}")))?;
        let base = own_cgroup_dir(&mountinfo, &membership)?;
        Cgroups::prepare(&base, std::process::id())
    }

    /// Moves `pid` into `<base>/weft-agent`, enables `memory` and `cpu` for
    /// `base`'s children, and creates `<base>/weft-containers` with both.
    pub fn prepare(base: &Path, pid: u32) -> Result<Cgroups, CgroupError> {
        // Already prepared by an earlier agent in this process: its base is the parent.
        let base = if base.file_name().is_some_and(|n| n == AGENT_LEAF) {
            base.parent().unwrap_or(base)
        } else {
            base
        };
        has_controllers(&base.join("cgroup.controllers"), base)?;
        let agent = base.join(AGENT_LEAF);
        std::fs::create_dir_all(&agent).map_err(io(&agent))?;
        write(&agent.join("cgroup.procs"), &pid.to_string())?;
        write(&base.join("cgroup.subtree_control"), "+memory +cpu")?;
        let containers = base.join(CONTAINERS);
        std::fs::create_dir_all(&containers).map_err(io(&containers))?;
        write(&containers.join("cgroup.subtree_control"), "+memory +cpu")?;
        Ok(Cgroups { dir: containers })
    }

    /// The cgroup containers are created in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates `container`'s cgroup with its limits.
    pub fn create(
        &self,
        container: ContainerId,
        memory_mb: u64,
        vcores: u64,
    ) -> Result<ContainerCgroup, CgroupError> {
        let dir = self.dir.join(container.to_string());
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        write(&dir.join("memory.max"), &(memory_mb << 20).to_string())?;
        write(&dir.join("cpu.weight"), &cpu_weight(vcores).to_string())?;
        // Best effort: without swap accounting or group OOM the limit still holds.
        let _ = std::fs::write(dir.join("memory.swap.max"), "0");
        let _ = std::fs::write(dir.join("memory.oom.group"), "1");
        Ok(ContainerCgroup { dir })
    }
}

/// `cpu.weight` for `vcores`: 100 (the kernel's default) per vcore, within
/// the kernel's range, so CPU is shared in proportion to vcores under
/// contention (YARN's v1 equivalent is 1024 `cpu.shares` per vcore).
pub fn cpu_weight(vcores: u64) -> u64 {
    vcores.saturating_mul(100).clamp(1, 10_000)
}

/// This process's cgroup v2 directory, from `/proc/self/mountinfo` and
/// `/proc/self/cgroup`.
pub fn own_cgroup_dir(mountinfo: &str, membership: &str) -> Result<PathBuf, CgroupError> {
    let own = membership
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or_else(|| CgroupError::NotV2("this process is in no cgroup v2 group".to_owned()))?;
    for line in mountinfo.lines() {
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        if after.split_whitespace().next() != Some("cgroup2") {
            continue;
        }
        let fields: Vec<&str> = before.split_whitespace().collect();
        let (Some(root), Some(mount)) = (fields.get(3), fields.get(4)) else {
            continue;
        };
        let Some(rel) = own.strip_prefix(root) else {
            continue;
        };
        let mut dir = PathBuf::from(mount);
        dir.extend(rel.split('/').filter(|p| !p.is_empty()));
        return Ok(dir);
    }
    Err(CgroupError::NotV2(
        "no cgroup2 file system is mounted".to_owned(),
    ))
}

impl ContainerCgroup {
    /// The `cgroup.procs` file a process joins the cgroup through.
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// How many times the kernel's OOM killer acted in this cgroup.
    pub fn oom_kills(&self) -> u64 {
        let text = std::fs::read_to_string(self.dir.join("memory.events")).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("oom_kill "))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Memory in use now, in bytes.
    pub fn memory_current(&self) -> Option<u64> {
        read_number(&self.dir.join("memory.current"))
    }

    /// Swap in use now, in bytes (absent without swap accounting).
    pub fn swap_current(&self) -> Option<u64> {
        read_number(&self.dir.join("memory.swap.current"))
    }

    /// The CPU time its processes have used, in µs (`cpu.stat`'s `usage_usec`).
    pub fn cpu_usage_usec(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?;
        crate::utilization::parse_cpu_stat_usage(&text)
    }

    /// The most memory it used, in bytes (kernels from 5.19).
    pub fn memory_peak(&self) -> Option<u64> {
        read_number(&self.dir.join("memory.peak"))
    }

    /// Kills what is left in it and removes it.
    pub fn remove(&self) {
        let _ = std::fs::write(self.dir.join("cgroup.kill"), "1");
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            tracing::debug!(cgroup = %self.dir.display(), error = %e, "cannot remove a container's cgroup");
        }
    }
}

fn read_number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use weft_model::{AppId, AttemptId};

    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-cgroup-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_own_cgroup_is_found_under_the_cgroup2_mount() {
        let mountinfo = "\
25 30 0:23 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
";
        let dir = own_cgroup_dir(mountinfo, "0::/system.slice/weft.service\n").unwrap();
        assert_eq!(dir, Path::new("/sys/fs/cgroup/system.slice/weft.service"));
        // A hybrid machine (cgroup2 beside v1, as this test's host may be).
        let hybrid = "31 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            own_cgroup_dir(hybrid, "4:memory:/x\n0::/\n").unwrap(),
            Path::new("/sys/fs/cgroup/unified")
        );
        assert!(matches!(
            own_cgroup_dir(mountinfo, "4:memory:/x\n"),
            Err(CgroupError::NotV2(_))
        ));
        assert!(matches!(
            own_cgroup_dir("", "0::/\n"),
            Err(CgroupError::NotV2(_))
        ));
    }

    /// A cgroup file system cannot be mounted in a test, so the files are
    /// plain ones: what is checked is what the agent reads and writes.
    #[test]
    fn an_own_cgroup_is_prepared_and_containers_get_their_limits() {
        let base = temp("prepare");
        std::fs::write(
            base.join("cgroup.controllers"),
            "cpuset cpu io memory pids\n",
        )
        .unwrap();
        let groups = Cgroups::prepare(&base, 4242).unwrap();
        assert_eq!(
            std::fs::read_to_string(base.join("weft-agent/cgroup.procs")).unwrap(),
            "4242"
        );
        assert_eq!(
            std::fs::read_to_string(base.join("cgroup.subtree_control")).unwrap(),
            "+memory +cpu"
        );
        assert_eq!(groups.dir(), base.join("weft-containers"));
        // A second agent in the same process finds the same place.
        assert_eq!(
            Cgroups::prepare(&base.join("weft-agent"), 4242).unwrap(),
            groups
        );

        let c = ContainerId::new(AttemptId::new(AppId::new(5, 1), 1), 2);
        let cg = groups.create(c, 512, 3).unwrap();
        let dir = base.join("weft-containers/container_5_0001_01_000002");
        assert_eq!(
            std::fs::read_to_string(dir.join("memory.max")).unwrap(),
            "536870912"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("cpu.weight")).unwrap(),
            "300"
        );
        assert_eq!(cg.procs(), dir.join("cgroup.procs"));
        assert_eq!(cg.oom_kills(), 0);
        std::fs::write(
            dir.join("memory.events"),
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
        )
        .unwrap();
        assert_eq!(cg.oom_kills(), 1);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn missing_controllers_are_named() {
        let base = temp("missing");
        std::fs::write(base.join("cgroup.controllers"), "cpu pids\n").unwrap();
        assert_eq!(
            Cgroups::prepare(&base, 1).unwrap_err().to_string(),
            format!(
                "cgroup {} does not offer the memory controller to its children",
                base.display()
            )
        );
        std::fs::write(base.join("cgroup.subtree_control"), "memory\n").unwrap();
        assert!(matches!(
            Cgroups::at(&base),
            Err(CgroupError::MissingController { missing: "cpu", .. })
        ));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn cpu_weight_follows_vcores_within_the_kernel_range() {
        assert_eq!(
            (cpu_weight(0), cpu_weight(1), cpu_weight(8), cpu_weight(500)),
            (1, 100, 800, 10_000)
        );
    }
}
