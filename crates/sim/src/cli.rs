//! The `weft sim` command line: `run` a scenario file and write its report
//! and charts, run the shipped `experiment`s, or `bench` the engine on a
//! SWIM-like day. `SimArgs` is a clap `Args` so the `weft` binary can mount
//! it as its `sim` subcommand; `main_with_args` parses on its own.
//!
//! Files, the terminal and the wall clock are touched here and in
//! `progress` only; everything below takes and returns values.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use crate::engine::{SimOptions, simulate_with_progress};
use crate::experiments::{self, Scale};
use crate::progress::ProgressBar;
use crate::scenario::{DirSources, Scenario};

/// `weft sim`: replay workloads through Weft's scheduler on virtual time.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: SimCommand,
}

/// The `weft sim` subcommands.
#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// Run a scenario file; write report.json and charts.
    Run {
        /// The scenario (TOML; see docs/simulator.md).
        scenario: PathBuf,
        /// Directory for report.json and the charts.
        #[arg(long, default_value = "sim-out")]
        out: PathBuf,
        /// Seed (overrides the file's).
        #[arg(long)]
        seed: Option<u64>,
        /// Check the core's invariants after every step (slow; on in debug builds).
        #[arg(long)]
        check: bool,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Run a shipped experiment (preemption, locality, small-jobs, hierarchy, or all).
    Experiment {
        /// Which.
        name: String,
        /// Directory for its results (a subdirectory per experiment).
        #[arg(long, default_value = "sim-out")]
        out: PathBuf,
        /// The reduced size `cargo test` runs, instead of the full one.
        #[arg(long)]
        reduced: bool,
    },
    /// Measure simulation speed on a SWIM-like day (or a SWIM trace).
    Bench {
        /// Nodes (8 GB, 8 vcores each, 40 per rack).
        #[arg(long, default_value_t = 1000)]
        nodes: u32,
        /// A SWIM trace to replay instead of a synthesized one.
        #[arg(long)]
        trace: Option<PathBuf>,
        /// Jobs in the synthesized day.
        #[arg(long, default_value_t = 6000)]
        jobs: u32,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

#[derive(Debug, Parser)]
#[command(
    name = "weft-sim",
    about = "Replay workloads through Weft's scheduler on virtual time"
)]
struct Standalone {
    #[command(flatten)]
    sim: SimArgs,
}

/// Runs `weft sim` with these arguments (the first is the program name).
pub fn main_with_args<I, T>(args: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let parsed = Standalone::try_parse_from(args);
    match parsed {
        Ok(p) => match run(p.sim) {
            // A closed pipe (`weft sim ... | head`) is not a failure.
            Err(e)
                if e.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
            {
                Ok(())
            }
            other => other,
        },
        Err(e) => {
            // Help and version are not failures.
            if !e.use_stderr() {
                let _ = write!(std::io::stdout().lock(), "{e}");
                return Ok(());
            }
            Err(anyhow::anyhow!("{e}"))
        }
    }
}

/// Runs a parsed `weft sim` command.
pub fn run(args: SimArgs) -> anyhow::Result<()> {
    match args.command {
        SimCommand::Run {
            scenario,
            out,
            seed,
            check,
            quiet,
        } => run_scenario(&scenario, &out, seed, check, quiet),
        SimCommand::Experiment { name, out, reduced } => {
            let scale = if reduced { Scale::Reduced } else { Scale::Full };
            let names: Vec<&str> = if name == "all" {
                experiments::NAMES.to_vec()
            } else {
                vec![name.as_str()]
            };
            for n in names {
                let started = Instant::now();
                let result = experiments::run(n, scale)?;
                let dir = out.join(n);
                write_files(&dir, &result.files)?;
                let mut stdout = std::io::stdout().lock();
                writeln!(stdout, "{}", result.summary)?;
                writeln!(
                    stdout,
                    "({} written to {} in {:.1} s)",
                    result.files.len(),
                    dir.display(),
                    started.elapsed().as_secs_f64()
                )?;
            }
            Ok(())
        }
        SimCommand::Bench {
            nodes,
            trace,
            jobs,
            seed,
        } => {
            let trace_text = match &trace {
                Some(p) => Some(
                    std::fs::read_to_string(p)
                        .with_context(|| format!("reading {}", p.display()))?,
                ),
                None => None,
            };
            let result = crate::experiments::bench(nodes, jobs, seed, trace_text.as_deref())?;
            write!(std::io::stdout().lock(), "{result}")?;
            Ok(())
        }
    }
}

fn run_scenario(
    path: &Path,
    out: &Path,
    seed: Option<u64>,
    check: bool,
    quiet: bool,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let scenario = Scenario::load(&text, &DirSources { base }, seed)
        .with_context(|| format!("loading {}", path.display()))?;
    let mut stderr = std::io::stderr().lock();
    for w in &scenario.warnings {
        writeln!(stderr, "warning: {w}")?;
    }
    drop(stderr);
    let options = SimOptions {
        check_every: u32::from(check || cfg!(debug_assertions)),
        ..SimOptions::default()
    };
    let mut bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::for_terminal()
    };
    let started = Instant::now();
    let report = simulate_with_progress(&scenario, options, &mut |p| bar.update(p))?;
    bar.finish();
    let wall = started.elapsed().as_secs_f64();
    let mut files = vec![("report.json".to_owned(), report.to_json())];
    files.extend(report.charts());
    write_files(out, &files)?;
    let mut stdout = std::io::stdout().lock();
    write!(stdout, "{}", report.summary_text())?;
    writeln!(
        stdout,
        "  {} events, {} core calls in {wall:.2} s wall time ({:.0}x real time); written to {}",
        report.stats.events,
        report.stats.core_calls,
        report.end.as_millis() as f64 / 1000.0 / wall.max(1e-6),
        out.display()
    )?;
    Ok(())
}

fn write_files(dir: &Path, files: &[(String, String)]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}
