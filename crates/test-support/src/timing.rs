//! A minimal benchmark harness: warm up, time a closure a fixed number of
//! times, print one line and return the median, minimum and maximum.
//!
//! It deliberately does no statistics beyond order statistics and no
//! comparison with earlier runs; benches that need a baseline print several
//! variants side by side. Keeping inputs opaque to the optimiser is the
//! caller's job (`black_box`, re-exported at the crate root).

use std::fmt;
use std::time::{Duration, Instant};

/// Order statistics of one benchmark's samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The median sample (the mean of the two middle samples for an even count).
    pub median: Duration,
    /// The fastest sample.
    pub min: Duration,
    /// The slowest sample.
    pub max: Duration,
    /// How many samples were timed.
    pub samples: usize,
}

/// How long warm-up may take at most; it always runs the closure at least once.
const WARM_UP_BUDGET: Duration = Duration::from_millis(200);

/// Warms `f` up, times `samples` runs of it (at least one), prints
/// `name  median …  (min …, max …, n = …)` on stdout and returns the figures.
///
/// Warm-up runs `f` until it has run `samples` times or [`WARM_UP_BUDGET`]
/// has passed, whichever comes first, so caches and lazily grown buffers are
/// in their steady state before anything is timed.
#[expect(
    clippy::print_stdout,
    reason = "a benchmark harness reports on stdout, as cargo bench's own does"
)]
pub fn bench(name: &str, samples: usize, mut f: impl FnMut()) -> Summary {
    let samples = samples.max(1);
    let warm_up_start = Instant::now();
    for _ in 0..samples {
        f();
        if warm_up_start.elapsed() >= WARM_UP_BUDGET {
            break;
        }
    }
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let start = Instant::now();
        f();
        times.push(start.elapsed());
    }
    let res = summarize(&mut times);
    println!("{name:<48} {res}");
    res
}

/// The order statistics of `times`, which it sorts; all zero when empty.
fn summarize(times: &mut [Duration]) -> Summary {
    times.sort_unstable();
    let n = times.len();
    if n == 0 {
        return Summary {
            median: Duration::ZERO,
            min: Duration::ZERO,
            max: Duration::ZERO,
            samples: 0,
        };
    }
    let median = if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2
    };
    Summary {
        median,
        min: times[0],
        max: times[n - 1],
        samples: n,
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "median {}  (min {}, max {}, n = {})",
            Millis(self.median),
            Millis(self.min),
            Millis(self.max),
            self.samples
        )
    }
}

/// A duration shown in milliseconds with microsecond precision, so every line
/// of a bench's output reads in the same unit.
struct Millis(Duration);

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} ms", self.0.as_secs_f64() * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(values: &[u64]) -> Vec<Duration> {
        values.iter().map(|&v| Duration::from_micros(v)).collect()
    }

    #[test]
    fn odd_count_takes_the_middle_sample() {
        let res = summarize(&mut micros(&[900, 100, 500]));
        assert_eq!(res.median, Duration::from_micros(500));
        assert_eq!(res.min, Duration::from_micros(100));
        assert_eq!(res.max, Duration::from_micros(900));
        assert_eq!(res.samples, 3);
    }

    #[test]
    fn even_count_averages_the_two_middle_samples() {
        let res = summarize(&mut micros(&[4, 1, 3, 2]));
        assert_eq!(res.median, Duration::from_nanos(2500));
    }

    #[test]
    fn no_samples_give_zeroes() {
        let res = summarize(&mut []);
        assert_eq!(res.median, Duration::ZERO);
        assert_eq!(res.samples, 0);
    }

    #[test]
    fn summary_reads_in_milliseconds() {
        let res = summarize(&mut micros(&[1234, 5, 2_000_000]));
        assert_eq!(
            res.to_string(),
            "median 1.234 ms  (min 0.005 ms, max 2000.000 ms, n = 3)"
        );
    }

    #[test]
    fn bench_runs_warm_up_then_every_sample() {
        let mut calls = 0;
        let res = bench("test-support self-test", 5, || calls += 1);
        assert_eq!(res.samples, 5);
        // Warm-up runs 1 to 5 times depending on the clock, then 5 timed runs.
        assert!((6..=10).contains(&calls), "{calls} calls");
        assert!(res.min <= res.median && res.median <= res.max);
    }

    #[test]
    fn zero_samples_still_time_one_run() {
        let mut calls = 0;
        let res = bench("test-support zero samples", 0, || calls += 1);
        assert_eq!(res.samples, 1);
        assert_eq!(calls, 2);
    }
}
