//! SWIM traces (Facebook 2009/2010 samples): tab-separated lines of job name,
//! submit time (s), gap since the previous job (s), map input bytes, shuffle
//! bytes and reduce output bytes, turned into jobs of maps and reduces.
//!
//! The trace has no tasks, durations or placements; the conversion is ours
//! (documented in `docs/simulator.md`): one map per input block (at least
//! one), each map's block placed with the scenario's replication, map time
//! = overhead + bytes / map rate; one reduce per `reduce_input` shuffle
//! bytes (none for map-only jobs), reduce time = overhead + (its shuffle +
//! output share) / reduce rate. `synthesize` writes a SWIM-like trace for
//! benchmarks and tests, which must not ship the real ones.

use std::fmt::Write as _;

use weft_model::{AppPriority, Duration, Priority, Resource, Time};

use super::{AppDefaults, ImportCtx, ImportError};
use crate::rng::SimRng;
use crate::workload::{AppSpec, TaskGroup};

/// How SWIM jobs become tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwimOptions {
    /// Bytes per map (HDFS block size).
    pub block_size: u64,
    /// Bytes a map reads per second.
    pub map_rate: u64,
    /// Shuffle bytes per reduce.
    pub reduce_input: u64,
    /// Bytes a reduce processes per second (shuffle in, output out).
    pub reduce_rate: u64,
    /// Fixed start-up cost of every task.
    pub task_overhead: Duration,
    /// Map container.
    pub map_size: Resource,
    /// Reduce container.
    pub reduce_size: Resource,
}

impl Default for SwimOptions {
    /// 128 MB blocks (Facebook's, per the delay-scheduling paper), maps
    /// reading 32 MB/s, a reduce per GB of shuffle processing 16 MB/s, 2 s of
    /// task start-up, 1 GB / 1 vcore containers.
    fn default() -> SwimOptions {
        SwimOptions {
            block_size: 128 << 20,
            map_rate: 32 << 20,
            reduce_input: 1 << 30,
            reduce_rate: 16 << 20,
            task_overhead: Duration::from_secs(2),
            map_size: Resource::new(1024, 1),
            reduce_size: Resource::new(1024, 1),
        }
    }
}

/// One line of a SWIM trace.
#[derive(Clone, Debug, PartialEq)]
struct SwimJob {
    /// Where it is in the trace (1-based), for errors.
    line: usize,
    name: String,
    submit_ms: u64,
    input: u64,
    shuffle: u64,
    output: u64,
}

fn parse(text: &str, path: &str) -> Result<Vec<SwimJob>, ImportError> {
    let mut jobs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |why: String| ImportError {
            path: path.to_owned(),
            line: Some(line_no),
            why,
        };
        let fields: Vec<&str> = line.split('\t').collect();
        if fields.len() < 6 {
            return Err(err(format!(
                "expected 6 tab-separated fields (name, submit s, gap s, input, shuffle, output bytes), found {}",
                fields.len()
            )));
        }
        let secs = |field: &str, what: &str| -> Result<u64, ImportError> {
            let x: f64 = field
                .trim()
                .parse()
                .map_err(|_| err(format!("{what} {field:?} is not a number")))?;
            if !(x.is_finite() && x >= 0.0) {
                return Err(err(format!("{what} {field:?} must not be negative")));
            }
            Ok((x * 1000.0).round() as u64)
        };
        let bytes = |field: &str, what: &str| -> Result<u64, ImportError> {
            let t = field.trim();
            if t.is_empty() {
                return Ok(0);
            }
            t.parse::<u64>()
                .map_err(|_| err(format!("{what} {field:?} is not a whole number of bytes")))
        };
        jobs.push(SwimJob {
            line: line_no,
            name: fields[0].trim().to_owned(),
            submit_ms: secs(fields[1], "submit time")?,
            input: bytes(fields[3], "input size")?,
            shuffle: bytes(fields[4], "shuffle size")?,
            output: bytes(fields[5], "output size")?,
        });
    }
    // Traces are in submission order; keep ties in file order.
    jobs.sort_by_key(|j| j.submit_ms);
    Ok(jobs)
}

/// Imports a SWIM trace.
pub(crate) fn import(
    text: &str,
    path: &str,
    opts: &SwimOptions,
    defaults: &AppDefaults,
    ctx: &mut ImportCtx<'_>,
) -> Result<Vec<AppSpec>, ImportError> {
    let mut jobs = parse(text, path)?;
    if let Some(limit) = defaults.limit {
        jobs.truncate(limit);
    }
    ctx.budget
        .apps(jobs.len() as u64)
        .map_err(|e| ImportError::limit(path, None, e))?;
    let overhead_ms = opts.task_overhead.as_millis();
    // Saturating: a trace's byte counts reach u64::MAX, and a saturated
    // duration is past the horizon, which is checked before anything is built.
    let ms_for = |bytes: u64, rate: u64| -> u64 {
        overhead_ms.saturating_add(((bytes as f64 / rate as f64) * 1000.0).round() as u64)
    };
    let mut apps = Vec::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        let n_maps = job.input.div_ceil(opts.block_size).max(1);
        let n_reduces = if job.shuffle > 0 {
            job.shuffle.div_ceil(opts.reduce_input).max(1)
        } else {
            0
        };
        let per_reduce = job.shuffle.saturating_add(job.output) / n_reduces.max(1);
        // One map per block: an input of 10^19 bytes is 7e10 maps, so the
        // job is charged (and its times checked) before any task is built.
        let limit_err = |e| ImportError::limit(path, Some(job.line), e);
        let read = if job.input == 0 { 0 } else { n_maps };
        ctx.budget
            .tasks(
                n_maps.saturating_add(n_reduces),
                read.saturating_mul(ctx.block_replicas()),
            )
            .map_err(limit_err)?;
        let longest_map = ms_for(job.input.min(opts.block_size), opts.map_rate);
        let longest_reduce = if n_reduces > 0 {
            ms_for(per_reduce, opts.reduce_rate)
        } else {
            0
        };
        for d in [
            Duration::from_millis(job.submit_ms) + defaults.start,
            Duration::from_millis(longest_map.max(longest_reduce)),
        ] {
            ctx.budget.within_horizon(d).map_err(limit_err)?;
        }
        let mut maps = TaskGroup::new(0, Priority(20), opts.map_size);
        for m in 0..n_maps {
            let bytes = if job.input == 0 {
                0
            } else if m + 1 < n_maps {
                opts.block_size
            } else {
                job.input - opts.block_size * (n_maps - 1)
            };
            // A job with no input reads no block: its one map has no locality.
            let replicas = if bytes == 0 {
                Vec::new()
            } else {
                ctx.place_block()
            };
            maps.push(
                Duration::from_millis(ms_for(bytes, opts.map_rate)),
                &replicas,
            );
        }
        let mut groups = vec![maps];
        if n_reduces > 0 {
            let mut reduces = TaskGroup::new(1, Priority(10), opts.reduce_size);
            for _ in 0..n_reduces {
                reduces.push(
                    Duration::from_millis(ms_for(per_reduce, opts.reduce_rate)),
                    &[],
                );
            }
            groups.push(reduces);
        }
        let name = if job.name.is_empty() {
            format!("{}-{:05}", defaults.name_prefix, i + 1)
        } else {
            format!("{}-{}", defaults.name_prefix, job.name)
        };
        apps.push(AppSpec {
            name,
            arrival: Time::from_millis(job.submit_ms) + defaults.start,
            user: defaults.user(i, None),
            queue: defaults.queue.clone(),
            priority: AppPriority(0),
            am: defaults.am(None),
            groups,
            lifetime: None,
        });
    }
    Ok(apps)
}

/// A SWIM-like trace (same columns, statistically similar to the FB-2009
/// sample: most jobs tiny, a few huge, three in four map-only), `jobs` jobs
/// spread over `span` with exponential gaps.
pub fn synthesize(rng: &mut SimRng, jobs: u32, span: Duration) -> String {
    let mean_gap_ms = span.as_millis() as f64 / f64::from(jobs.max(1));
    let mut out = String::new();
    let mut t_ms = 0.0f64;
    for i in 0..jobs {
        let gap = rng.exponential(mean_gap_ms);
        t_ms += gap;
        // Job sizes: a mixture of tiny, medium and large jobs.
        let class = rng.weighted(&[0.80, 0.17, 0.03]);
        let mean_input = [
            64.0 * 1024.0,
            2.0 * (1u64 << 30) as f64,
            200.0 * (1u64 << 30) as f64,
        ][class];
        let input = rng.log_normal(mean_input, mean_input * 2.0) as u64;
        let shuffle = if rng.uniform() < 0.25 {
            (input as f64 * rng.uniform() * 0.5) as u64
        } else {
            0
        };
        let output = (shuffle as f64 * rng.uniform()) as u64;
        let _ = writeln!(
            out,
            "job{i}\t{}\t{}\t{input}\t{shuffle}\t{output}",
            (t_ms / 1000.0).round() as u64,
            (gap / 1000.0).round() as u64
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Budget;
    use crate::workload::{DataLayout, NodeSpec, ReplicaPlacement};

    fn ctx_nodes() -> Vec<NodeSpec> {
        (0..20)
            .map(|i| NodeSpec {
                name: format!("n{i}"),
                rack: format!("/r{}", i / 10),
                capability: Resource::new(8192, 8),
            })
            .collect()
    }

    #[test]
    fn jobs_become_maps_by_block_and_reduces_by_shuffle() {
        let nodes = ctx_nodes();
        let layout = DataLayout::new(&nodes, ReplicaPlacement::RackAware);
        let mut ctx = ImportCtx::new(&nodes, &layout, SimRng::new(2), 3, Budget::default());
        let trace = "job0\t49\t49\t740773\t2339561\t627471\njob1\t101\t52\t268435457\t0\t9\njob2\t122\t21\t0\t0\t0\n";
        let defaults = AppDefaults {
            name_prefix: "fb".into(),
            duration_scale: 1.0,
            ..AppDefaults::default()
        };
        let apps = import(trace, "t.tsv", &SwimOptions::default(), &defaults, &mut ctx).unwrap();
        let summary: Vec<(String, u64, usize, Vec<u64>)> = apps
            .iter()
            .map(|a| {
                (
                    a.name.clone(),
                    a.arrival.as_millis(),
                    a.groups.len(),
                    a.groups
                        .iter()
                        .flat_map(|g| (0..g.len()).map(|t| g.duration(t).as_millis()))
                        .collect(),
                )
            })
            .collect();
        expect_test::expect![[r#"
            [
                (
                    "fb-job0",
                    49000,
                    2,
                    [
                        2022,
                        2177,
                    ],
                ),
                (
                    "fb-job1",
                    101000,
                    1,
                    [
                        6000,
                        6000,
                        2000,
                    ],
                ),
                (
                    "fb-job2",
                    122000,
                    1,
                    [
                        2000,
                    ],
                ),
            ]
        "#]]
        .assert_debug_eq(&summary);
        assert_eq!(apps[1].groups[0].replicas(2).len(), 3);
        assert!(
            apps[2].groups[0].replicas(0).is_empty(),
            "no input, no block"
        );
    }

    #[test]
    fn bad_lines_are_reported_with_their_number() {
        let nodes = ctx_nodes();
        let layout = DataLayout::new(&nodes, ReplicaPlacement::Uniform);
        let mut ctx = ImportCtx::new(&nodes, &layout, SimRng::new(2), 3, Budget::default());
        let defaults = AppDefaults::default();
        let err = import(
            "job0\t1\t1\t1\t1\t1\njob1\tsoon\t1\t1\t1\t1\n",
            "t.tsv",
            &SwimOptions::default(),
            &defaults,
            &mut ctx,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.tsv:2: submit time \"soon\" is not a number"
        );
    }

    #[test]
    fn synthesized_traces_parse() {
        let text = synthesize(&mut SimRng::new(5), 200, Duration::from_secs(3600));
        let jobs = parse(&text, "synth").unwrap();
        assert_eq!(jobs.len(), 200);
        assert!(jobs.last().unwrap().submit_ms <= 4_000_000);
        let map_only = jobs.iter().filter(|j| j.shuffle == 0).count();
        assert!(map_only > 100, "most jobs are map-only ({map_only})");
    }
}
