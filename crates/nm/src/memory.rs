//! Memory enforcement by polling (YARN's container memory monitor): the
//! resident memory of each container's process tree, read from `/proc`,
//! and the diagnostic of a container killed for exceeding its limit, with
//! YARN's exit status -104 (`KILLED_EXCEEDED_PMEM`).
//!
//! Sampling when and killing what is `agent`'s; the kernel-enforced
//! alternative is `cgroup`'s.

use std::collections::BTreeMap;
use std::path::Path;

use weft_model::ContainerId;

/// YARN's exit status of a container killed for exceeding its physical
/// memory limit (`ContainerExitStatus.KILLED_EXCEEDED_PMEM`).
pub const KILLED_EXCEEDED_PMEM: i32 = -104;

/// One process as `/proc` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Its parent.
    pub ppid: u32,
    /// Resident memory in bytes.
    pub rss_bytes: u64,
}

/// Every process, by pid: one read of `/proc`, shared by all containers of
/// a sample.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessTable {
    processes: BTreeMap<u32, ProcessInfo>,
}

/// The memory a process tree uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeUsage {
    /// Resident memory of all its processes, in bytes.
    pub rss_bytes: u64,
    /// How many processes it has.
    pub processes: u32,
}

impl ProcessTable {
    /// Reads `proc_root` (normally `/proc`). Processes that vanish while it
    /// is read are left out.
    pub fn read(proc_root: &Path) -> std::io::Result<ProcessTable> {
        let mut processes = BTreeMap::new();
        for entry in std::fs::read_dir(proc_root)? {
            let Ok(entry) = entry else { continue };
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
                continue;
            };
            if let Some(info) = parse_status(&status) {
                processes.insert(pid, info);
            }
        }
        Ok(ProcessTable { processes })
    }

    /// A table of the given processes (for tests).
    pub fn from_processes(processes: impl IntoIterator<Item = (u32, ProcessInfo)>) -> ProcessTable {
        ProcessTable {
            processes: processes.into_iter().collect(),
        }
    }

    /// The usage of `root` and its descendants, or `None` if `root` is gone.
    pub fn tree_usage(&self, root: u32) -> Option<TreeUsage> {
        self.processes.get(&root)?;
        let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (pid, p) in &self.processes {
            children.entry(p.ppid).or_default().push(*pid);
        }
        let mut usage = TreeUsage {
            rss_bytes: 0,
            processes: 0,
        };
        let mut stack = vec![root];
        while let Some(pid) = stack.pop() {
            let Some(p) = self.processes.get(&pid) else {
                continue;
            };
            usage.rss_bytes += p.rss_bytes;
            usage.processes += 1;
            if let Some(c) = children.get(&pid) {
                // A pid is its own parent only for the kernel's idle task; never loop.
                stack.extend(c.iter().copied().filter(|c| *c != pid));
            }
        }
        Some(usage)
    }
}

/// `PPid` and `VmRSS` from a `/proc/<pid>/status` text (kernel threads have no `VmRSS`: 0).
fn parse_status(text: &str) -> Option<ProcessInfo> {
    let mut ppid = None;
    let mut rss_kb = 0;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("PPid:") {
            ppid = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("VmRSS:") {
            rss_kb = v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
        }
    }
    Some(ProcessInfo {
        ppid: ppid?,
        rss_bytes: rss_kb * 1024,
    })
}

/// The diagnostic of a container killed for exceeding its memory limit,
/// with the figures, as YARN gives one.
pub fn over_limit_diagnostic(
    container: ContainerId,
    pid: u32,
    usage: TreeUsage,
    limit_mb: u64,
) -> String {
    let used_mb = usage.rss_bytes as f64 / (1024.0 * 1024.0);
    format!(
        "container {container} (pid {pid}) was killed for exceeding its memory limit: \
         {used_mb:.1} MB of physical memory used, limit {limit_mb} MB, \
         by a process tree of {} process(es); exit status {KILLED_EXCEEDED_PMEM}",
        usage.processes
    )
}

#[cfg(test)]
mod tests {
    use weft_model::{AppId, AttemptId};

    use super::*;

    fn p(ppid: u32, mb: u64) -> ProcessInfo {
        ProcessInfo {
            ppid,
            rss_bytes: mb << 20,
        }
    }

    #[test]
    fn a_tree_sums_its_descendants_only() {
        let table = ProcessTable::from_processes([
            (1, p(0, 5)),
            (10, p(1, 2)),
            (11, p(10, 3)),
            (12, p(11, 4)),
            (20, p(1, 100)),
        ]);
        assert_eq!(
            table.tree_usage(10),
            Some(TreeUsage {
                rss_bytes: 9 << 20,
                processes: 3
            })
        );
        assert_eq!(table.tree_usage(99), None);
    }

    #[test]
    fn status_files_are_parsed() {
        let text = "Name:\tsleep\nState:\tS (sleeping)\nPid:\t42\nPPid:\t7\nVmRSS:\t    1808 kB\n";
        assert_eq!(
            parse_status(text),
            Some(ProcessInfo {
                ppid: 7,
                rss_bytes: 1808 * 1024
            })
        );
        assert_eq!(
            parse_status("Name:\tkthreadd\nPPid:\t0\n"),
            Some(ProcessInfo {
                ppid: 0,
                rss_bytes: 0
            })
        );
        assert_eq!(parse_status("Name:\tbroken\n"), None);
    }

    #[test]
    fn this_process_is_in_the_real_table() {
        let table = ProcessTable::read(Path::new("/proc")).unwrap();
        let me = table.tree_usage(std::process::id()).unwrap();
        assert!(me.rss_bytes > 0 && me.processes >= 1, "{me:?}");
    }

    #[test]
    fn the_diagnostic_gives_the_figures() {
        let c = ContainerId::new(AttemptId::new(AppId::new(5, 1), 1), 2);
        let usage = TreeUsage {
            rss_bytes: 150 << 20,
            processes: 2,
        };
        assert_eq!(
            over_limit_diagnostic(c, 4321, usage, 64),
            "container container_5_0001_01_000002 (pid 4321) was killed for exceeding its memory limit: 150.0 MB of physical memory used, limit 64 MB, by a process tree of 2 process(es); exit status -104"
        );
    }
}
