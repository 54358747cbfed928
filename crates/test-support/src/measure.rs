//! One-shot measurements for benches whose work cannot be repeated
//! identically (filling a cluster once): wall time of one call, and the
//! process's resident memory.

use std::time::{Duration, Instant};

/// Runs `f` once and returns its result with the wall time it took.
pub fn time_once<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let res = f();
    (res, start.elapsed())
}

/// The process's resident set size in bytes, from `/proc/self/statm`
/// (`None` where that file does not exist).
pub fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
