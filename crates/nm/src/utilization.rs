//! What this node actually uses, measured for the RM's reports (YARN's
//! `NodeResourceMonitor`, and the CPU half of its `ContainersMonitor`):
//! the machine's memory from `/proc/meminfo`, its CPU from the change in
//! `/proc/stat` between two samples, and a container's CPU time (its
//! cgroup's `cpu.stat`, or its process tree's, which `memory` reads) turned
//! into processors busy.
//!
//! Measuring never fails the caller: where `/proc` cannot be read (another
//! platform, a sandbox) the figures are `None` and the agent leaves them out
//! of its heartbeats. When to sample and what to send is `agent`'s; limits
//! are `memory`'s and `cgroup`'s.

use std::path::{Path, PathBuf};
use std::time::Instant;

use weft_rm::dto::ResourceDto;
use weft_rm::dto::nm::ResourceUtilizationDto;

/// The lines of `/proc/meminfo` the agent needs, in kB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemInfo {
    /// `MemTotal`.
    pub total_kb: u64,
    /// `MemAvailable` (kernels from 3.14), else `MemFree + Buffers + Cached`:
    /// what programs could still get without swapping.
    pub available_kb: u64,
    /// `SwapTotal`.
    pub swap_total_kb: u64,
    /// `SwapFree`.
    pub swap_free_kb: u64,
}

impl MemInfo {
    /// Physical memory in use, MB.
    pub fn pmem_used_mb(&self) -> u64 {
        self.total_kb.saturating_sub(self.available_kb) >> 10
    }

    /// Virtual memory in use (physical plus swap), MB, as Hadoop's
    /// `SysInfoLinux` counts it: the machine's physical and swap space less
    /// what of each is free.
    pub fn vmem_used_mb(&self) -> u64 {
        (self.total_kb.saturating_sub(self.available_kb)
            + self.swap_total_kb.saturating_sub(self.swap_free_kb))
            >> 10
    }
}

/// `/proc/meminfo`'s figures, or `None` without `MemTotal`.
pub fn parse_meminfo(text: &str) -> Option<MemInfo> {
    let mut total = None;
    let (mut available, mut free, mut buffers, mut cached) = (None, 0, 0, 0);
    let (mut swap_total, mut swap_free) = (0, 0);
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let Some(kb) = rest
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
        else {
            continue;
        };
        match key {
            "MemTotal" => total = Some(kb),
            "MemAvailable" => available = Some(kb),
            "MemFree" => free = kb,
            "Buffers" => buffers = kb,
            "Cached" => cached = kb,
            "SwapTotal" => swap_total = kb,
            "SwapFree" => swap_free = kb,
            _ => {}
        }
    }
    let total_kb = total?;
    Some(MemInfo {
        total_kb,
        available_kb: available.unwrap_or(free + buffers + cached).min(total_kb),
        swap_total_kb: swap_total,
        swap_free_kb: swap_free.min(swap_total),
    })
}

/// The machine's CPU time since boot, from `/proc/stat`, in ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTimes {
    /// Time spent running anything (user, nice, system, interrupts, and
    /// what a hypervisor stole).
    pub busy: u64,
    /// Busy plus idle and waiting for I/O.
    pub total: u64,
    /// The processors (`cpuN` lines).
    pub processors: u32,
}

/// The `cpu` line and the processor count of a `/proc/stat` text.
pub fn parse_proc_stat(text: &str) -> Option<CpuTimes> {
    let mut times = None;
    let mut processors = 0;
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        match fields.next() {
            Some("cpu") => {
                let v: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
                // user nice system idle iowait irq softirq steal (guest time
                // is counted in user already).
                if v.len() < 4 {
                    return None;
                }
                let at = |i: usize| v.get(i).copied().unwrap_or(0);
                let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
                times = Some((busy, busy + at(3) + at(4)));
            }
            Some(name) if name.starts_with("cpu") => processors += 1,
            _ => {}
        }
    }
    let (busy, total) = times?;
    Some(CpuTimes {
        busy,
        total,
        processors: processors.max(1),
    })
}

/// Processors busy between two readings (since boot without an earlier
/// one): the busy share of the elapsed ticks times the processors.
pub fn processors_busy(earlier: Option<CpuTimes>, now: CpuTimes) -> f64 {
    let (busy, total) = match earlier {
        Some(e) if now.total > e.total => (now.busy.saturating_sub(e.busy), now.total - e.total),
        // No time passed, or the counters went back: nothing to compare.
        Some(_) => return 0.0,
        None => (now.busy, now.total),
    };
    if total == 0 {
        return 0.0;
    }
    (busy as f64 / total as f64).min(1.0) * f64::from(now.processors)
}

/// The machine's meter: reads `/proc` at each sample and keeps the last CPU
/// reading to compare the next with.
#[derive(Debug)]
pub struct NodeMeter {
    proc_root: PathBuf,
    last_cpu: Option<CpuTimes>,
    /// Set once the failure to read `/proc` was logged.
    said_unreadable: bool,
}

impl NodeMeter {
    /// A meter reading `proc_root` (normally `/proc`).
    pub fn new(proc_root: &Path) -> NodeMeter {
        NodeMeter {
            proc_root: proc_root.to_owned(),
            last_cpu: None,
            said_unreadable: false,
        }
    }

    /// The machine's own memory (MB) and processors, for the registration
    /// (Hadoop's `physicalResource`); `None` where `/proc` cannot be read.
    pub fn physical(&mut self) -> Option<ResourceDto> {
        let mem = self.read("meminfo", parse_meminfo)?;
        let cpu = self.read("stat", parse_proc_stat)?;
        Some(ResourceDto {
            memory: mem.total_kb >> 10,
            vcores: u64::from(cpu.processors),
        })
    }

    /// What the machine uses now (CPU since the last sample); `None` where
    /// `/proc` cannot be read.
    pub fn sample(&mut self) -> Option<ResourceUtilizationDto> {
        let mem = self.read("meminfo", parse_meminfo)?;
        let cpu = self.read("stat", parse_proc_stat)?;
        let busy = processors_busy(self.last_cpu.replace(cpu), cpu);
        Some(ResourceUtilizationDto {
            pmem: i64::try_from(mem.pmem_used_mb()).unwrap_or(i64::MAX),
            vmem: i64::try_from(mem.vmem_used_mb()).unwrap_or(i64::MAX),
            cpu: busy,
        })
    }

    fn read<T>(&mut self, file: &str, parse: fn(&str) -> Option<T>) -> Option<T> {
        let path = self.proc_root.join(file);
        let res = match std::fs::read_to_string(&path) {
            Ok(text) => parse(&text).ok_or_else(|| "no figures in it".to_owned()),
            Err(e) => Err(e.to_string()),
        };
        match res {
            Ok(v) => Some(v),
            Err(why) => {
                // Once: on a platform without /proc it would repeat forever.
                if !self.said_unreadable {
                    self.said_unreadable = true;
                    tracing::debug!(file = %path.display(), reason = %why, "cannot measure the node's use; heartbeats leave it out");
                }
                None
            }
        }
    }
}

/// A cumulative CPU-time counter (a cgroup's or a process tree's) turned
/// into processors busy between two readings.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuRate {
    last: Option<(Instant, f64)>,
}

impl CpuRate {
    /// Takes the counter's reading `cpu_seconds` at `at`; the processors
    /// busy since the previous reading, `None` at the first. A counter
    /// that went back (a process of the tree ended) counts as idle.
    pub fn update(&mut self, at: Instant, cpu_seconds: f64) -> Option<f64> {
        let (then, before) = self.last.replace((at, cpu_seconds))?;
        let elapsed = at.saturating_duration_since(then).as_secs_f64();
        if elapsed <= 0.0 {
            return None;
        }
        Some(((cpu_seconds - before) / elapsed).max(0.0))
    }
}

/// The `usage_usec` of a cgroup v2 `cpu.stat` text: its CPU time in µs.
pub fn parse_cpu_stat_usage(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MEMINFO: &str = "\
MemTotal:       16384000 kB
MemFree:         1024000 kB
MemAvailable:    8192000 kB
Buffers:          512000 kB
Cached:          4096000 kB
SwapCached:            0 kB
SwapTotal:       2048000 kB
SwapFree:        1024000 kB
";

    #[test]
    fn meminfo_gives_memory_in_use() {
        let m = parse_meminfo(MEMINFO).unwrap();
        assert_eq!(
            m,
            MemInfo {
                total_kb: 16_384_000,
                available_kb: 8_192_000,
                swap_total_kb: 2_048_000,
                swap_free_kb: 1_024_000,
            }
        );
        assert_eq!(m.pmem_used_mb(), 8000);
        assert_eq!(m.vmem_used_mb(), 9000);
        // An old kernel without MemAvailable: free, buffers and cache count.
        let old = MEMINFO.replace("MemAvailable:    8192000 kB\n", "");
        assert_eq!(parse_meminfo(&old).unwrap().available_kb, 5_632_000);
        assert_eq!(parse_meminfo("MemFree: 1 kB\n"), None);
    }

    const STAT: &str = "\
cpu  1000 100 400 8000 300 50 50 100 0 0
cpu0 500 50 200 4000 150 25 25 50 0 0
cpu1 500 50 200 4000 150 25 25 50 0 0
intr 12345 0 0
ctxt 999
";

    #[test]
    fn proc_stat_gives_busy_and_total_ticks() {
        let t = parse_proc_stat(STAT).unwrap();
        assert_eq!(
            t,
            CpuTimes {
                busy: 1700,
                total: 10_000,
                processors: 2
            }
        );
        // Since boot, 17 % of two processors.
        assert!((processors_busy(None, t) - 0.34).abs() < 1e-9);
        // Then 300 more busy ticks of 400: three quarters of both.
        let later = CpuTimes {
            busy: 2000,
            total: 10_400,
            processors: 2,
        };
        assert!((processors_busy(Some(t), later) - 1.5).abs() < 1e-9);
        assert_eq!(processors_busy(Some(later), t), 0.0, "counters went back");
        assert_eq!(parse_proc_stat("intr 1\n"), None);
    }

    #[test]
    fn cpu_time_becomes_processors_busy() {
        let t0 = Instant::now();
        let mut rate = CpuRate::default();
        assert_eq!(rate.update(t0, 10.0), None);
        assert_eq!(rate.update(t0 + Duration::from_secs(2), 13.0), Some(1.5));
        // A process of the tree ended: its time left the sum.
        assert_eq!(rate.update(t0 + Duration::from_secs(3), 12.0), Some(0.0));
        assert_eq!(
            parse_cpu_stat_usage("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n"),
            Some(2_500_000)
        );
        assert_eq!(parse_cpu_stat_usage("user_usec 1\n"), None);
    }

    #[test]
    fn a_missing_proc_is_no_measurement_not_an_error() {
        let mut meter = NodeMeter::new(Path::new("/nonexistent-proc"));
        assert_eq!(meter.sample(), None);
        assert_eq!(meter.physical(), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_is_measured_within_its_size() {
        let mut meter = NodeMeter::new(Path::new("/proc"));
        let size = meter.physical().unwrap();
        let used = meter.sample().unwrap();
        assert!(
            used.pmem > 0 && used.pmem as u64 <= size.memory,
            "{used:?} of {size:?}"
        );
        assert!(used.vmem >= used.pmem, "{used:?}");
        assert!(
            (0.0..=size.vcores as f64).contains(&used.cpu),
            "{used:?} of {size:?}"
        );
    }
}
