//! Experiment 3, small jobs and delay scheduling (the delay-scheduling
//! paper's Facebook-derived IO-heavy benchmark): the paper's job-size mix on
//! 100 nodes × 4 slots in racks of 20, once with naive fair sharing (both
//! locality thresholds -1: every request takes the first node offered) and
//! once with delay scheduling; node locality and mean response time per
//! job-size bin, and delay scheduling's speedup.
//!
//! The scenario is `crates/sim/experiments/small-jobs/scenario.toml`.

use std::fmt::Write as _;

use super::{ExperimentResult, Scale};
use crate::engine::simulate;
use crate::report::{BinSummary, Report};
use crate::scenario::{MemorySources, MixFile, ScenarioFile};
use crate::svg::{BarChart, Bars};

/// The scenario file.
pub const SCENARIO: &str = include_str!("../../experiments/small-jobs/scenario.toml");

/// The paper's speedup of delay scheduling over naive fair sharing per bin
/// (IO-heavy workload, read off its figure), for comparison.
pub const PAPER_SPEEDUP: [f64; 9] = [1.00, 1.05, 1.22, 1.29, 1.44, 1.22, 1.18, 1.31, 1.11];

/// Both runs.
#[derive(Clone, Debug)]
pub struct SmallJobsOutcome {
    /// Naive fair sharing.
    pub naive: Report,
    /// Fair sharing with delay scheduling.
    pub delay: Report,
}

/// One bin's comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct BinComparison {
    /// Bin label.
    pub label: String,
    /// Bin index.
    pub bin: usize,
    /// Jobs.
    pub jobs: u32,
    /// Naive run's bin.
    pub naive: BinSummary,
    /// Delay run's bin.
    pub delay: BinSummary,
}

impl BinComparison {
    /// Mean response naive / mean response with delay scheduling.
    pub fn speedup(&self) -> Option<f64> {
        match (self.naive.mean_response, self.delay.mean_response) {
            (Some(n), Some(d)) if d > 0.0 => Some(n / d),
            _ => None,
        }
    }
}

impl SmallJobsOutcome {
    /// Per-bin comparison (bins present in both runs).
    pub fn bins(&self) -> Vec<BinComparison> {
        let naive = self.naive.bins();
        let delay = self.delay.bins();
        naive
            .into_iter()
            .filter_map(|n| {
                let d = delay.iter().find(|d| d.bin == n.bin)?.clone();
                Some(BinComparison {
                    label: n.label.clone(),
                    bin: n.bin,
                    jobs: n.jobs,
                    naive: n,
                    delay: d,
                })
            })
            .collect()
    }
}

/// Runs the benchmark both ways.
pub fn runs(scale: Scale) -> anyhow::Result<SmallJobsOutcome> {
    let mut reports = Vec::new();
    for delay in [false, true] {
        let mut file = ScenarioFile::parse(SCENARIO)?;
        if scale == Scale::Reduced {
            // The smaller bins of the mix at half the paper's counts (the
            // Leiden reproduction's scaled-down mix), with shorter maps.
            let w = &mut file.workloads[0];
            w.mix = Some(
                [(1, 19), (2, 8), (10, 7), (50, 4), (100, 3), (200, 2)]
                    .iter()
                    .map(|(maps, jobs)| MixFile {
                        maps: *maps,
                        jobs: *jobs,
                    })
                    .collect(),
            );
            w.map_duration = Some("10s".to_owned());
        }
        if !delay {
            for key in ["node", "rack"] {
                file.site.insert(
                    format!("yarn.scheduler.fair.locality.threshold.{key}"),
                    toml::Value::Float(-1.0),
                );
            }
        }
        file.name = Some(format!(
            "small jobs, {}",
            if delay {
                "delay scheduling"
            } else {
                "naive fair sharing"
            }
        ));
        let scenario = file.resolve(&MemorySources::default(), None)?;
        reports.push(simulate(&scenario, super::options())?);
    }
    let delay = reports.pop().expect("two runs");
    let naive = reports.pop().expect("two runs");
    Ok(SmallJobsOutcome { naive, delay })
}

/// The per-bin table.
pub fn table(outcome: &SmallJobsOutcome) -> String {
    let mut out = String::from(
        "| bin | maps | jobs | node locality naive | with delay | rack locality naive | with delay | mean response naive | with delay | speedup | paper's speedup |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let pct = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{:.0}%", 100.0 * x));
    let s = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{x:.0} s"));
    for b in outcome.bins() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2} |",
            b.bin + 1,
            b.label,
            b.jobs,
            pct(b.naive.node_locality()),
            pct(b.delay.node_locality()),
            pct(b.naive.rack_locality()),
            pct(b.delay.rack_locality()),
            s(b.naive.mean_response),
            s(b.delay.mean_response),
            b.speedup().map_or("-".to_owned(), |x| format!("{x:.2}")),
            PAPER_SPEEDUP[b.bin]
        );
    }
    out
}

fn locality_chart(outcome: &SmallJobsOutcome) -> BarChart {
    let bins = outcome.bins();
    let pct = |x: Option<f64>| 100.0 * x.unwrap_or(0.0);
    BarChart {
        title: "Node locality per job-size bin: naive fair sharing against delay scheduling"
            .to_owned(),
        x_label: "maps per job".to_owned(),
        y_label: "% node-local maps".to_owned(),
        categories: bins.iter().map(|b| b.label.clone()).collect(),
        series: vec![
            Bars {
                name: "naive fair".to_owned(),
                values: bins.iter().map(|b| pct(b.naive.node_locality())).collect(),
                color: 1,
            },
            Bars {
                name: "delay scheduling".to_owned(),
                values: bins.iter().map(|b| pct(b.delay.node_locality())).collect(),
                color: 0,
            },
        ],
        stacked: false,
        y_max: Some(100.0),
    }
}

fn speedup_chart(outcome: &SmallJobsOutcome) -> BarChart {
    let bins = outcome.bins();
    BarChart {
        title: "Speedup of delay scheduling over naive fair sharing (mean response time)"
            .to_owned(),
        x_label: "maps per job".to_owned(),
        y_label: "speedup".to_owned(),
        categories: bins.iter().map(|b| b.label.clone()).collect(),
        series: vec![
            Bars {
                name: "Weft".to_owned(),
                values: bins.iter().map(|b| b.speedup().unwrap_or(0.0)).collect(),
                color: 0,
            },
            Bars {
                name: "paper (IO-heavy)".to_owned(),
                values: bins.iter().map(|b| PAPER_SPEEDUP[b.bin]).collect(),
                color: 8,
            },
        ],
        stacked: false,
        y_max: None,
    }
}

/// Runs the experiment and renders its results.
pub fn run(scale: Scale) -> anyhow::Result<ExperimentResult> {
    let outcome = runs(scale)?;
    let mut summary = format!("## Small jobs and delay scheduling\n\n{}", table(&outcome));
    let _ = writeln!(
        summary,
        "\nMean response time over all jobs: naive {:.1} s, with delay scheduling {:.1} s.",
        outcome.naive.mean_response().unwrap_or(0.0),
        outcome.delay.mean_response().unwrap_or(0.0)
    );
    let files = vec![
        (
            "locality-by-bin.svg".to_owned(),
            locality_chart(&outcome).render(),
        ),
        (
            "speedup-by-bin.svg".to_owned(),
            speedup_chart(&outcome).render(),
        ),
        (
            "response-times-naive.svg".to_owned(),
            outcome.naive.response_chart().render(),
        ),
        (
            "response-times-delay.svg".to_owned(),
            outcome.delay.response_chart().render(),
        ),
        ("report-naive.json".to_owned(), outcome.naive.to_json()),
        ("report-delay.json".to_owned(), outcome.delay.to_json()),
        ("summary.md".to_owned(), summary.clone()),
    ];
    Ok(ExperimentResult { summary, files })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_scheduling_makes_small_jobs_local_and_faster() {
        let outcome = runs(Scale::Reduced).unwrap();
        let table = table(&outcome);
        for r in [&outcome.naive, &outcome.delay] {
            assert!(
                r.apps.iter().all(|a| a.outcome.name() == "finished"),
                "{table}"
            );
        }
        let bins = outcome.bins();
        // The smallest jobs: head-of-line scheduling gives them the first
        // node that frees up, which rarely holds their data.
        for b in bins.iter().filter(|b| b.bin < 2) {
            let naive = b.naive.node_locality().unwrap();
            let delay = b.delay.node_locality().unwrap();
            assert!(naive < 0.15, "naive bin {}: {naive:.2}\n{table}", b.label);
            assert!(delay > 0.8, "delay bin {}: {delay:.2}\n{table}", b.label);
        }
        for b in &bins {
            assert!(
                b.delay.node_locality() >= b.naive.node_locality(),
                "bin {}\n{table}",
                b.label
            );
            assert!(b.speedup().unwrap() > 0.9, "bin {}\n{table}", b.label);
        }
        let (n, d) = (
            outcome.naive.mean_response().unwrap(),
            outcome.delay.mean_response().unwrap(),
        );
        assert!(
            d < n,
            "delay scheduling is faster overall: {d:.1} s against {n:.1} s\n{table}"
        );
    }
}
