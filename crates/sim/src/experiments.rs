//! The experiments shipped with the project, each a scenario file under
//! `crates/sim/experiments/<name>/` (with a README of what it reproduces)
//! plus the code that varies it, runs it and judges the outcome:
//! `preemption` (seed 003), `locality` (the delay-scheduling paper's §3.5),
//! `small_jobs` (its Facebook-derived benchmark) and `hierarchy` (seed 000's
//! pools). Each runs at a reduced size under `cargo test` and at full size
//! from `weft sim experiment`; `bench` measures the engine's speed.
//!
//! Scenario files are compiled in, so the binary runs them anywhere.

pub mod hierarchy;
pub mod locality;
pub mod preemption;
pub mod small_jobs;

use std::fmt::Write as _;
use std::time::Instant;

use crate::engine::{SimOptions, simulate};
use crate::scenario::{MemorySources, Scenario};

/// Experiment names, for `weft sim experiment`.
pub const NAMES: [&str; 4] = ["preemption", "locality", "small-jobs", "hierarchy"];

/// How big a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Small enough for `cargo test` (seconds in a debug build).
    Reduced,
    /// The published setup.
    Full,
}

/// What an experiment produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ExperimentResult {
    /// A Markdown summary: what was run, the measured table, the verdict.
    pub summary: String,
    /// Files to write: (name, contents).
    pub files: Vec<(String, String)>,
}

/// Runs an experiment by name.
pub fn run(name: &str, scale: Scale) -> anyhow::Result<ExperimentResult> {
    match name {
        "preemption" => preemption::run(scale),
        "locality" => locality::run(scale),
        "small-jobs" => small_jobs::run(scale),
        "hierarchy" => hierarchy::run(scale),
        other => anyhow::bail!(
            "unknown experiment {other:?}; expected one of {} or all",
            NAMES.join(", ")
        ),
    }
}

/// Options for the statistical experiments: in debug builds and tests the
/// core's invariants are checked every 64 calls (every call would make the
/// larger runs minutes long; the engine's own tests check every call).
pub(crate) fn options() -> SimOptions {
    SimOptions {
        check_every: if cfg!(debug_assertions) { 64 } else { 0 },
        ..SimOptions::default()
    }
}

/// Replays a SWIM day (`trace`, or a synthesized SWIM-like one of `jobs`
/// jobs) on `nodes` nodes and reports the engine's speed.
pub fn bench(nodes: u32, jobs: u32, seed: u64, trace: Option<&str>) -> anyhow::Result<String> {
    let synthesized;
    let (trace, what) = match trace {
        Some(t) => (t, "SWIM trace"),
        None => {
            let mut rng = crate::rng::SimRng::new(seed).fork("bench-trace", 0);
            synthesized = crate::import::swim::synthesize(
                &mut rng,
                jobs,
                weft_model::Duration::from_secs(86_400),
            );
            (synthesized.as_str(), "SWIM-like synthesized day")
        }
    };
    let text = format!(
        r#"
name = "bench"
[[nodes]]
count = {nodes}
capacity = "8192 mb, 8 vcores"
nodes_per_rack = 40
[data]
placement = "rack-aware"
[report]
sample_interval = "1m"
[[workloads]]
format = "swim"
name = "fb"
path = "trace.tsv"
"#
    );
    let sources = MemorySources::default().with("trace.tsv", trace);
    let load_started = Instant::now();
    let scenario = Scenario::load(&text, &sources, Some(seed))?;
    let load_wall = load_started.elapsed().as_secs_f64();
    let tasks: usize = scenario.apps.iter().map(|a| a.n_tasks()).sum();
    let options = SimOptions {
        check_every: 0,
        ..SimOptions::default()
    };
    let started = Instant::now();
    let report = simulate(&scenario, options)?;
    let wall = started.elapsed().as_secs_f64().max(1e-9);
    let virtual_s = report.end.as_millis() as f64 / 1000.0;
    let s = &report.stats;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{what}: {} jobs, {tasks} tasks on {nodes} nodes (loaded in {load_wall:.2} s)",
        scenario.apps.len()
    );
    let _ = writeln!(
        out,
        "virtual time {:.2} h in {wall:.2} s wall time: {:.0}x real time",
        virtual_s / 3600.0,
        virtual_s / wall
    );
    let _ = writeln!(
        out,
        "{} events ({:.0}/s), {} core calls ({:.0}/s)",
        s.events,
        s.events as f64 / wall,
        s.core_calls,
        s.core_calls as f64 / wall
    );
    let _ = writeln!(
        out,
        "{} heartbeats heard, {} skipped; {} allocate calls; {} ticks",
        s.heartbeats, s.heartbeats_skipped, s.allocates, s.ticks
    );
    let _ = write!(out, "{}", report.summary_text());
    Ok(out)
}
