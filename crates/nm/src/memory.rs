//! Memory enforcement by polling (YARN's container memory monitor): the
//! resident memory of each container's process tree, read from `/proc`
//! (with its virtual memory and CPU time, which `utilization` reports),
//! and the diagnostic of a container killed for exceeding its limit, with
//! YARN's exit status -104 (`KILLED_EXCEEDED_PMEM`).
//!
//! Sampling when and killing what is `agent`'s; the kernel-enforced
//! alternative is `cgroup`'s.

use std::collections::BTreeMap;
use std::path::Path;

use nix::unistd::{SysconfVar, sysconf};
use weft_model::ContainerId;

/// YARN's exit status of a container killed for exceeding its physical
/// memory limit (`ContainerExitStatus.KILLED_EXCEEDED_PMEM`).
pub const KILLED_EXCEEDED_PMEM: i32 = -104;

/// One process as `/proc` shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Its parent.
    pub ppid: u32,
    /// Resident memory in bytes.
    pub rss_bytes: u64,
    /// Virtual memory (its address space) in bytes.
    pub vmem_bytes: u64,
    /// CPU time it has used, user and system, in clock ticks.
    pub cpu_ticks: u64,
}

/// Every process, by pid: one read of `/proc`, shared by all containers of
/// a sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessTable {
    processes: BTreeMap<u32, ProcessInfo>,
    /// Clock ticks per second (`cpu_ticks`' unit).
    ticks_per_second: u64,
}

/// The memory and CPU time a process tree uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeUsage {
    /// Resident memory of all its processes, in bytes.
    pub rss_bytes: u64,
    /// Virtual memory of all its processes, in bytes.
    pub vmem_bytes: u64,
    /// CPU time its processes have used, in clock ticks (a process that
    /// ended takes its time with it).
    pub cpu_ticks: u64,
    /// How many processes it has.
    pub processes: u32,
}

impl ProcessTable {
    /// Reads `proc_root` (normally `/proc`): one `stat` file per process.
    /// Processes that vanish while it is read are left out.
    pub fn read(proc_root: &Path) -> std::io::Result<ProcessTable> {
        let page_size = sysconf_or(SysconfVar::PAGE_SIZE, 4096);
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
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            if let Some(info) = parse_stat(&stat, page_size) {
                processes.insert(pid, info);
            }
        }
        Ok(ProcessTable {
            processes,
            ticks_per_second: sysconf_or(SysconfVar::CLK_TCK, 100),
        })
    }

    /// A table of the given processes (for tests), at 100 ticks a second.
    pub fn from_processes(processes: impl IntoIterator<Item = (u32, ProcessInfo)>) -> ProcessTable {
        ProcessTable {
            processes: processes.into_iter().collect(),
            ticks_per_second: 100,
        }
    }

    /// Clock ticks per second, the unit of `TreeUsage::cpu_ticks`.
    pub fn ticks_per_second(&self) -> u64 {
        self.ticks_per_second
    }

    /// The usage of `root` and its descendants, or `None` if `root` is gone.
    pub fn tree_usage(&self, root: u32) -> Option<TreeUsage> {
        self.processes.get(&root)?;
        let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for (pid, p) in &self.processes {
            children.entry(p.ppid).or_default().push(*pid);
        }
        let mut usage = TreeUsage::default();
        let mut stack = vec![root];
        while let Some(pid) = stack.pop() {
            let Some(p) = self.processes.get(&pid) else {
                continue;
            };
            usage.rss_bytes += p.rss_bytes;
            usage.vmem_bytes += p.vmem_bytes;
            usage.cpu_ticks += p.cpu_ticks;
            usage.processes += 1;
            if let Some(c) = children.get(&pid) {
                // A pid is its own parent only for the kernel's idle task; never loop.
                stack.extend(c.iter().copied().filter(|c| *c != pid));
            }
        }
        Some(usage)
    }
}

/// A `sysconf` value, or `fallback` where the system does not say.
fn sysconf_or(var: SysconfVar, fallback: u64) -> u64 {
    match sysconf(var) {
        Ok(Some(v)) if v > 0 => v as u64,
        _ => fallback,
    }
}

/// Parent, memory and CPU time from a `/proc/<pid>/stat` text (see
/// proc(5)): the command name in parentheses may hold spaces and
/// parentheses, so fields are counted after its last `)`. Resident memory
/// is in pages of `page_size` bytes.
fn parse_stat(text: &str, page_size: u64) -> Option<ProcessInfo> {
    let (_, rest) = text.rsplit_once(')')?;
    // rest[0] is field 3 (state), so field n is rest[n - 3].
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(ProcessInfo {
        ppid: u32::try_from(field(4)?).ok()?,
        cpu_ticks: field(14)?.saturating_add(field(15)?),
        vmem_bytes: field(23)?,
        rss_bytes: field(24)?.saturating_mul(page_size),
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
            vmem_bytes: mb << 21,
            cpu_ticks: mb * 10,
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
                vmem_bytes: 18 << 20,
                cpu_ticks: 90,
                processes: 3
            })
        );
        assert_eq!(table.tree_usage(99), None);
    }

    #[test]
    fn stat_files_are_parsed() {
        // A command name with a space and a parenthesis in it.
        let text = "42 (my (odd) cmd) S 7 42 42 0 -1 4194560 120 0 0 0 250 30 0 0 20 0 1 0 \
                    12345 8474624 452 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
        assert_eq!(
            parse_stat(text, 4096),
            Some(ProcessInfo {
                ppid: 7,
                rss_bytes: 452 * 4096,
                vmem_bytes: 8_474_624,
                cpu_ticks: 280,
            })
        );
        // A kernel thread: no memory of its own.
        let kthread = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 3 0 0 20 0 1 0 \
                       10 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0\n";
        assert_eq!(
            parse_stat(kthread, 4096),
            Some(ProcessInfo {
                ppid: 0,
                rss_bytes: 0,
                vmem_bytes: 0,
                cpu_ticks: 3,
            })
        );
        assert_eq!(parse_stat("42 (truncated) S 7 42", 4096), None);
        assert_eq!(parse_stat("no parenthesis", 4096), None);
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
            ..TreeUsage::default()
        };
        assert_eq!(
            over_limit_diagnostic(c, 4321, usage, 64),
            "container container_5_0001_01_000002 (pid 4321) was killed for exceeding its memory limit: 150.0 MB of physical memory used, limit 64 MB, by a process tree of 2 process(es); exit status -104"
        );
    }
}
