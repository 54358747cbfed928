//! A run's report (`Report`): per-app outcomes (submit, AM start, first
//! task, finish, response time, task locality, preemption losses), per-queue
//! series and fairness measures, preemption warnings and kills, and engine
//! counters; rendered as JSON (fixed precision, byte-identical for a given
//! scenario and seed), as a short text summary, and as SVG charts (queue
//! usage against fair share, locality per job-size bin, response times).
//!
//! The numbers are recorded by the engine and `metrics`; experiments read
//! them from here.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use weft_model::{Duration, Resource, Time};

use crate::am::{AmSim, Ending};
use crate::json::Json;
use crate::metrics::{PreemptionRecord, QueueSeries, Recorder};
use crate::runtime::TaskLocality;
use crate::scenario::Scenario;
use crate::svg::{BarChart, Bars, Line, LineChart, thin};
use crate::workload::{PAPER_BINS, paper_bin, paper_bin_label};

/// Engine counters (deterministic: no wall-clock figures here).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Events taken from the event queue.
    pub events: u64,
    /// Inputs handed to the core.
    pub core_calls: u64,
    /// Node heartbeats the core heard.
    pub heartbeats: u64,
    /// Node heartbeats skipped because they provably decided nothing.
    pub heartbeats_skipped: u64,
    /// AM allocate calls.
    pub allocates: u64,
    /// Ticks at the core's deadlines.
    pub ticks: u64,
}

/// How an app's run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Its AM finished it.
    Finished,
    /// A scenario event killed it, or its lifetime ran out.
    Killed,
    /// It failed, with the core's or the AM's reason.
    Failed(String),
    /// Placement or an ACL refused it.
    Rejected(String),
    /// Still running (or waiting) when the run stopped.
    Unfinished,
}

impl Outcome {
    /// Short name for tables.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Finished => "finished",
            Outcome::Killed => "killed",
            Outcome::Failed(_) => "failed",
            Outcome::Rejected(_) => "rejected",
            Outcome::Unfinished => "unfinished",
        }
    }
}

/// One app's run.
#[derive(Clone, Debug, PartialEq)]
pub struct AppOutcome {
    /// Its scenario name.
    pub name: String,
    /// Its YARN id, once submitted.
    pub id: Option<String>,
    /// Submitting user.
    pub user: String,
    /// Where placement put it (or the queue asked for).
    pub queue: Option<String>,
    /// First-stage tasks (the job-size bin's measure).
    pub maps: u32,
    /// All tasks.
    pub tasks: u32,
    /// Submission.
    pub submit: Option<Time>,
    /// AM container allocated (or AM registered, unmanaged).
    pub am_start: Option<Time>,
    /// First task started.
    pub first_task: Option<Time>,
    /// Ended.
    pub finish: Option<Time>,
    /// How it ended.
    pub outcome: Outcome,
    /// Task launches by locality (`TaskLocality::index`).
    pub locality: [u32; 4],
    /// Task attempts lost to preemption.
    pub preempted: u32,
    /// Task attempts lost otherwise.
    pub lost: u32,
    /// Containers released unused.
    pub released: u32,
    /// Preemption warnings for its containers.
    pub warned: u32,
}

impl AppOutcome {
    /// Submission to finish, for finished apps.
    pub fn response(&self) -> Option<Duration> {
        match (self.outcome == Outcome::Finished, self.submit, self.finish) {
            (true, Some(s), Some(f)) => Some(f.since(s)),
            _ => None,
        }
    }

    /// The delay-scheduling paper's job-size bin (0-based).
    pub fn bin(&self) -> usize {
        paper_bin(self.maps)
    }
}

/// Apps of one job-size bin.
#[derive(Clone, Debug, PartialEq)]
pub struct BinSummary {
    /// Bin index (0-based).
    pub bin: usize,
    /// Label (`1`, `3-20`, ...).
    pub label: String,
    /// Apps in it.
    pub jobs: u32,
    /// Of which finished.
    pub finished: u32,
    /// Task launches by locality.
    pub locality: [u64; 4],
    /// Mean response time of finished apps, seconds.
    pub mean_response: Option<f64>,
    /// Median response time, seconds.
    pub median_response: Option<f64>,
}

impl BinSummary {
    /// Node-local share of launches of tasks with data (0 to 1).
    pub fn node_locality(&self) -> Option<f64> {
        let with_data: u64 = self.locality[..3].iter().sum();
        (with_data > 0).then(|| self.locality[0] as f64 / with_data as f64)
    }

    /// Rack-local (or better) share of launches of tasks with data.
    pub fn rack_locality(&self) -> Option<f64> {
        let with_data: u64 = self.locality[..3].iter().sum();
        (with_data > 0).then(|| (self.locality[0] + self.locality[1]) as f64 / with_data as f64)
    }
}

/// A run's report.
#[derive(Clone, Debug)]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// Seed.
    pub seed: u64,
    /// Virtual time the run stopped at.
    pub end: Time,
    /// Apps in scenario order (by arrival).
    pub apps: Vec<AppOutcome>,
    /// Sample times.
    pub samples: Vec<Time>,
    /// Queue series (parents and leaves), in order of first appearance.
    pub queues: Vec<QueueSeries>,
    /// Jain's fairness index over active leaves (usage / instantaneous fair share), by sample.
    pub fairness: Vec<(Time, f64)>,
    /// Cluster allocation by sample.
    pub allocated: Vec<Resource>,
    /// Cluster capacity by sample.
    pub capacity: Vec<Resource>,
    /// Preemption warnings (each container counted once).
    pub preemption_warnings: u64,
    /// Containers killed by preemption.
    pub preemption_kills: u64,
    /// The first warnings and kills, in time order.
    pub preemptions: Vec<PreemptionRecord>,
    /// Core events the simulator does not know by name, by kind.
    pub other_events: BTreeMap<String, u64>,
    /// Engine counters.
    pub stats: RunStats,
    /// Why the run stopped early, if it stalled.
    pub stalled: Option<String>,
    /// Warnings from loading the scenario.
    pub warnings: Vec<String>,
    /// Scenario events that changed nothing, with when and why (a `kill`
    /// or `move` of an app not yet submitted or already ended, a move the
    /// scheduler refused, a drain or recommission of a node that cannot
    /// take it, a random drain that found fewer running nodes than asked).
    pub refused_events: Vec<String>,
}

fn secs(t: Time) -> f64 {
    t.as_millis() as f64 / 1000.0
}

fn opt_secs(t: Option<Time>) -> Json {
    t.map_or(Json::Null, |t| Json::secs(secs(t)))
}

fn res_json(r: &Resource) -> Json {
    Json::obj([
        ("memory_mb", Json::count(r.memory_mb())),
        ("vcores", Json::count(r.vcores())),
    ])
}

fn median(sorted: &[f64]) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    Some(if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    })
}

impl Report {
    pub(crate) fn build(
        sc: &Scenario,
        end: Time,
        apps: &[AmSim],
        recorder: Recorder,
        stats: RunStats,
        stalled: Option<String>,
        refused_events: Vec<String>,
    ) -> Report {
        let outcomes = apps
            .iter()
            .zip(&sc.apps)
            .map(|(a, spec)| {
                let r = &a.record;
                AppOutcome {
                    name: spec.name.clone(),
                    id: r.id.map(|id| id.to_string()),
                    user: spec.user.clone(),
                    queue: r.queue.clone().or_else(|| spec.queue.clone()),
                    maps: spec.n_first_stage_tasks(),
                    tasks: spec.n_tasks() as u32,
                    submit: r.submit,
                    am_start: r.am_start,
                    first_task: r.first_task,
                    finish: r.finish,
                    outcome: match &r.ending {
                        None => Outcome::Unfinished,
                        Some(Ending::Finished) => Outcome::Finished,
                        Some(Ending::Killed) => Outcome::Killed,
                        Some(Ending::Failed(why)) => Outcome::Failed(why.clone()),
                        Some(Ending::Rejected(why)) => Outcome::Rejected(why.clone()),
                    },
                    locality: r.locality,
                    preempted: r.preempted,
                    lost: r.lost,
                    released: r.released,
                    warned: r.warned,
                }
            })
            .collect();
        let fairness = recorder.fairness();
        let mut preemptions = recorder.preemptions;
        preemptions.sort_by_key(|p| (p.at, p.container));
        Report {
            scenario: sc.name.clone(),
            seed: sc.seed,
            end,
            apps: outcomes,
            samples: recorder.samples,
            queues: recorder.queues,
            fairness,
            allocated: recorder.allocated,
            capacity: recorder.capacity,
            preemption_warnings: recorder.warnings_total,
            preemption_kills: recorder.kills_total,
            preemptions,
            other_events: recorder.other_events,
            stats,
            stalled,
            warnings: sc.warnings.clone(),
            refused_events,
        }
    }

    /// A queue's series by path (`root.a`).
    pub fn queue(&self, path: &str) -> Option<&QueueSeries> {
        self.queues.iter().find(|q| q.path == path)
    }

    /// Task launches by locality over all apps.
    pub fn locality_totals(&self) -> [u64; 4] {
        let mut t = [0u64; 4];
        for a in &self.apps {
            for (i, n) in a.locality.iter().enumerate() {
                t[i] += u64::from(*n);
            }
        }
        t
    }

    /// Apps by outcome name.
    pub fn outcome_counts(&self) -> BTreeMap<&'static str, u32> {
        let mut m = BTreeMap::new();
        for a in &self.apps {
            *m.entry(a.outcome.name()).or_default() += 1;
        }
        m
    }

    /// Mean Jain's index over the samples that have one.
    pub fn mean_fairness(&self) -> Option<f64> {
        (!self.fairness.is_empty())
            .then(|| self.fairness.iter().map(|(_, j)| j).sum::<f64>() / self.fairness.len() as f64)
    }

    /// Mean response time of finished apps, seconds.
    pub fn mean_response(&self) -> Option<f64> {
        let r: Vec<f64> = self
            .apps
            .iter()
            .filter_map(AppOutcome::response)
            .map(|d| d.as_millis() as f64 / 1000.0)
            .collect();
        (!r.is_empty()).then(|| r.iter().sum::<f64>() / r.len() as f64)
    }

    /// Apps grouped by the paper's job-size bins (non-empty bins only).
    pub fn bins(&self) -> Vec<BinSummary> {
        let mut out = Vec::new();
        for bin in 0..PAPER_BINS.len() {
            let apps: Vec<&AppOutcome> = self.apps.iter().filter(|a| a.bin() == bin).collect();
            if apps.is_empty() {
                continue;
            }
            let mut locality = [0u64; 4];
            for a in &apps {
                for (i, n) in a.locality.iter().enumerate() {
                    locality[i] += u64::from(*n);
                }
            }
            let mut responses: Vec<f64> = apps
                .iter()
                .filter_map(|a| a.response())
                .map(|d| d.as_millis() as f64 / 1000.0)
                .collect();
            responses.sort_by(f64::total_cmp);
            out.push(BinSummary {
                bin,
                label: paper_bin_label(bin),
                jobs: apps.len() as u32,
                finished: responses.len() as u32,
                locality,
                mean_response: (!responses.is_empty())
                    .then(|| responses.iter().sum::<f64>() / responses.len() as f64),
                median_response: median(&responses),
            });
        }
        out
    }

    /// The report as JSON text.
    pub fn to_json(&self) -> String {
        let totals = self.locality_totals();
        let with_data: u64 = totals[..3].iter().sum();
        let counts = self.outcome_counts();
        let summary = Json::obj([
            ("virtual_time_s", Json::secs(secs(self.end))),
            (
                "apps",
                Json::obj(
                    ["finished", "killed", "failed", "rejected", "unfinished"]
                        .iter()
                        .map(|k| {
                            (
                                *k,
                                Json::count(u64::from(counts.get(k).copied().unwrap_or(0))),
                            )
                        }),
                ),
            ),
            (
                "task_locality",
                Json::obj(
                    TaskLocality::ALL
                        .iter()
                        .map(|l| (l.key(), Json::count(totals[l.index()]))),
                ),
            ),
            (
                "node_locality",
                if with_data > 0 {
                    Json::ratio(totals[0] as f64 / with_data as f64)
                } else {
                    Json::Null
                },
            ),
            (
                "mean_response_s",
                self.mean_response().map_or(Json::Null, Json::secs),
            ),
            (
                "mean_jain_index",
                self.mean_fairness().map_or(Json::Null, Json::ratio),
            ),
            ("preemption_warnings", Json::count(self.preemption_warnings)),
            ("preemption_kills", Json::count(self.preemption_kills)),
            (
                "stalled",
                self.stalled
                    .as_ref()
                    .map_or(Json::Null, |s| Json::str(s.clone())),
            ),
        ]);
        let queues = Json::Arr(
            self.queues
                .iter()
                .map(|q| {
                    let series = |v: &[Resource], mem: bool| {
                        Json::Arr(
                            v.iter()
                                .map(|r| Json::count(if mem { r.memory_mb() } else { r.vcores() }))
                                .collect(),
                        )
                    };
                    Json::obj([
                        ("path", Json::str(q.path.clone())),
                        ("leaf", Json::Bool(q.leaf)),
                        ("min_share", res_json(&q.min_share)),
                        (
                            "time_below_min_share_s",
                            Json::secs(q.below_min_share.as_millis() as f64 / 1000.0),
                        ),
                        (
                            "time_below_half_fair_share_s",
                            Json::secs(q.below_half_fair_share.as_millis() as f64 / 1000.0),
                        ),
                        ("preemption_warnings", Json::count(q.preemption_warnings)),
                        ("preemption_kills", Json::count(q.preemption_kills)),
                        ("usage_mb", series(&q.usage, true)),
                        ("usage_vcores", series(&q.usage, false)),
                        ("demand_mb", series(&q.demand, true)),
                        ("demand_vcores", series(&q.demand, false)),
                        ("fair_share_mb", series(&q.fair_share, true)),
                        ("fair_share_vcores", series(&q.fair_share, false)),
                        ("steady_fair_share_mb", series(&q.steady_fair_share, true)),
                        (
                            "steady_fair_share_vcores",
                            series(&q.steady_fair_share, false),
                        ),
                    ])
                })
                .collect(),
        );
        let apps = Json::Arr(
            self.apps
                .iter()
                .map(|a| {
                    let reason = match &a.outcome {
                        Outcome::Failed(w) | Outcome::Rejected(w) => Json::str(w.clone()),
                        _ => Json::Null,
                    };
                    Json::obj([
                        ("name", Json::str(a.name.clone())),
                        ("id", a.id.clone().map_or(Json::Null, Json::Str)),
                        ("user", Json::str(a.user.clone())),
                        ("queue", a.queue.clone().map_or(Json::Null, Json::Str)),
                        ("maps", Json::count(u64::from(a.maps))),
                        ("tasks", Json::count(u64::from(a.tasks))),
                        ("outcome", Json::str(a.outcome.name())),
                        ("reason", reason),
                        ("submit_s", opt_secs(a.submit)),
                        ("am_start_s", opt_secs(a.am_start)),
                        ("first_task_s", opt_secs(a.first_task)),
                        ("finish_s", opt_secs(a.finish)),
                        (
                            "response_s",
                            a.response()
                                .map_or(Json::Null, |d| Json::secs(d.as_millis() as f64 / 1000.0)),
                        ),
                        (
                            "locality",
                            Json::obj(
                                TaskLocality::ALL.iter().map(|l| {
                                    (l.key(), Json::count(u64::from(a.locality[l.index()])))
                                }),
                            ),
                        ),
                        ("preempted_tasks", Json::count(u64::from(a.preempted))),
                        ("lost_tasks", Json::count(u64::from(a.lost))),
                        ("released_containers", Json::count(u64::from(a.released))),
                        ("preemption_warnings", Json::count(u64::from(a.warned))),
                    ])
                })
                .collect(),
        );
        let bins = Json::Arr(
            self.bins()
                .iter()
                .map(|b| {
                    Json::obj([
                        ("bin", Json::count(b.bin as u64 + 1)),
                        ("maps", Json::str(b.label.clone())),
                        ("jobs", Json::count(u64::from(b.jobs))),
                        ("finished", Json::count(u64::from(b.finished))),
                        (
                            "node_locality",
                            b.node_locality().map_or(Json::Null, Json::ratio),
                        ),
                        (
                            "rack_locality",
                            b.rack_locality().map_or(Json::Null, Json::ratio),
                        ),
                        (
                            "mean_response_s",
                            b.mean_response.map_or(Json::Null, Json::secs),
                        ),
                        (
                            "median_response_s",
                            b.median_response.map_or(Json::Null, Json::secs),
                        ),
                    ])
                })
                .collect(),
        );
        let preemption = Json::obj([
            ("warnings", Json::count(self.preemption_warnings)),
            ("kills", Json::count(self.preemption_kills)),
            (
                "events",
                Json::Arr(
                    self.preemptions
                        .iter()
                        .map(|p| {
                            Json::obj([
                                ("at_s", Json::secs(secs(p.at))),
                                ("kind", Json::str(p.kind)),
                                ("container", Json::str(p.container.to_string())),
                                ("queue", Json::str(p.queue.clone())),
                                ("deadline_s", opt_secs(p.deadline)),
                            ])
                        })
                        .collect(),
                ),
            ),
        ]);
        Json::obj([
            ("weft_sim_report", Json::Int(1)),
            ("scenario", Json::str(self.scenario.clone())),
            ("seed", Json::count(self.seed)),
            ("summary", summary),
            (
                "sample_times_s",
                Json::nums(self.samples.iter().map(|t| secs(*t)), 3),
            ),
            (
                "cluster",
                Json::obj([
                    (
                        "allocated_mb",
                        Json::Arr(
                            self.allocated
                                .iter()
                                .map(|r| Json::count(r.memory_mb()))
                                .collect(),
                        ),
                    ),
                    (
                        "capacity_mb",
                        Json::Arr(
                            self.capacity
                                .iter()
                                .map(|r| Json::count(r.memory_mb()))
                                .collect(),
                        ),
                    ),
                ]),
            ),
            ("queues", queues),
            (
                "fairness",
                Json::obj([
                    (
                        "times_s",
                        Json::nums(self.fairness.iter().map(|(t, _)| secs(*t)), 3),
                    ),
                    (
                        "jain_index",
                        Json::nums(self.fairness.iter().map(|(_, j)| *j), 4),
                    ),
                ]),
            ),
            ("bins", bins),
            ("apps", apps),
            ("preemption", preemption),
            (
                "other_core_events",
                Json::obj(
                    self.other_events
                        .iter()
                        .map(|(k, v)| (k.clone(), Json::count(*v))),
                ),
            ),
            (
                "engine",
                Json::obj([
                    ("events", Json::count(self.stats.events)),
                    ("core_calls", Json::count(self.stats.core_calls)),
                    ("heartbeats", Json::count(self.stats.heartbeats)),
                    (
                        "heartbeats_skipped",
                        Json::count(self.stats.heartbeats_skipped),
                    ),
                    ("allocate_calls", Json::count(self.stats.allocates)),
                    ("ticks", Json::count(self.stats.ticks)),
                ]),
            ),
            (
                "warnings",
                Json::Arr(self.warnings.iter().map(|w| Json::str(w.clone())).collect()),
            ),
            (
                "refused_events",
                Json::Arr(
                    self.refused_events
                        .iter()
                        .map(|w| Json::str(w.clone()))
                        .collect(),
                ),
            ),
        ])
        .to_pretty()
    }

    /// A few lines for a terminal.
    pub fn summary_text(&self) -> String {
        let mut out = String::new();
        let counts = self.outcome_counts();
        let _ = writeln!(
            out,
            "scenario {} (seed {}): {} apps over {:.1} virtual hours",
            self.scenario,
            self.seed,
            self.apps.len(),
            self.end.as_millis() as f64 / 3_600_000.0
        );
        let _ = writeln!(
            out,
            "  outcomes: {}",
            counts
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let t = self.locality_totals();
        let with_data: u64 = t[..3].iter().sum();
        if with_data > 0 {
            let pct = |x: u64| 100.0 * x as f64 / with_data as f64;
            let _ = writeln!(
                out,
                "  task locality: {:.1}% node-local, {:.1}% rack-local, {:.1}% off-rack ({} tasks without data)",
                pct(t[0]),
                pct(t[1]),
                pct(t[2]),
                t[3]
            );
        }
        if let Some(r) = self.mean_response() {
            let _ = writeln!(out, "  mean response time: {r:.1} s");
        }
        if let Some(j) = self.mean_fairness() {
            let _ = writeln!(out, "  mean Jain's index over active leaves: {j:.3}");
        }
        let _ = writeln!(
            out,
            "  preemption: {} warnings, {} kills",
            self.preemption_warnings, self.preemption_kills
        );
        for r in &self.refused_events {
            let _ = writeln!(out, "  scenario event changed nothing: {r}");
        }
        if let Some(s) = &self.stalled {
            let _ = writeln!(out, "  STALLED: {s}");
        }
        out
    }

    /// The report's charts: (file name, SVG).
    pub fn charts(&self) -> Vec<(String, String)> {
        vec![
            ("queues.svg".to_owned(), self.queue_chart(None).render()),
            ("locality.svg".to_owned(), self.locality_chart().render()),
            (
                "response-times.svg".to_owned(),
                self.response_chart().render(),
            ),
        ]
    }

    /// Time axis unit for this run: (divisor in seconds, name).
    fn time_unit(&self) -> (f64, &'static str) {
        let s = secs(self.end);
        if s > 4.0 * 3600.0 {
            (3600.0, "hours")
        } else if s > 600.0 {
            (60.0, "minutes")
        } else {
            (1.0, "seconds")
        }
    }

    /// Leaf queues' memory usage (solid) against instantaneous fair share
    /// (dashed), as a share of the cluster; `only` restricts the leaves.
    pub fn queue_chart(&self, only: Option<&[&str]>) -> LineChart {
        let (unit, unit_name) = self.time_unit();
        let mut leaves: Vec<&QueueSeries> = self
            .queues
            .iter()
            .filter(|q| q.leaf)
            .filter(|q| only.is_none_or(|o| o.contains(&q.path.as_str())))
            .filter(|q| q.usage.iter().any(|r| r.memory_mb() > 0) || only.is_some())
            .collect();
        // The busiest few, in path order.
        leaves.sort_by_key(|q| std::cmp::Reverse(q.usage.iter().map(Resource::memory_mb).max()));
        leaves.truncate(8);
        leaves.sort_by(|a, b| a.path.cmp(&b.path));
        let share = |r: &Resource, i: usize| {
            let cap = self.capacity.get(i).map_or(0, Resource::memory_mb);
            if cap == 0 {
                0.0
            } else {
                100.0 * r.memory_mb() as f64 / cap as f64
            }
        };
        let mut lines = Vec::new();
        for (c, q) in leaves.iter().enumerate() {
            let usage: Vec<(f64, f64)> = self
                .samples
                .iter()
                .enumerate()
                .map(|(i, t)| (secs(*t) / unit, share(&q.usage[i], i)))
                .collect();
            let fair: Vec<(f64, f64)> = self
                .samples
                .iter()
                .enumerate()
                .map(|(i, t)| (secs(*t) / unit, share(&q.fair_share[i], i)))
                .collect();
            let name = q.path.strip_prefix("root.").unwrap_or(&q.path);
            lines.push(Line {
                step: true,
                ..Line::new(format!("{name} usage"), c, thin(usage, 1500))
            });
            lines.push(Line {
                step: true,
                dashed: true,
                ..Line::new(format!("{name} fair share"), c, thin(fair, 1500))
            });
        }
        LineChart {
            title: format!(
                "{}: queue usage against instantaneous fair share",
                self.scenario
            ),
            x_label: format!("virtual time ({unit_name})"),
            y_label: "% of cluster memory".to_owned(),
            x_log: false,
            y_max: Some(100.0),
            lines,
        }
    }

    /// Task locality per job-size bin, stacked.
    pub fn locality_chart(&self) -> BarChart {
        let bins = self.bins();
        let pct = |b: &BinSummary, i: usize| {
            let with_data: u64 = b.locality[..3].iter().sum();
            if with_data == 0 {
                0.0
            } else {
                100.0 * b.locality[i] as f64 / with_data as f64
            }
        };
        BarChart {
            title: format!("{}: task locality by job size", self.scenario),
            x_label: "maps per job (the delay-scheduling paper's bins)".to_owned(),
            y_label: "% of tasks with input".to_owned(),
            categories: bins.iter().map(|b| b.label.clone()).collect(),
            series: (0..3)
                .map(|i| Bars {
                    name: TaskLocality::ALL[i].to_string(),
                    values: bins.iter().map(|b| pct(b, i)).collect(),
                    color: [2, 4, 1][i],
                })
                .collect(),
            stacked: true,
            y_max: Some(100.0),
        }
    }

    /// Response-time CDFs: all apps, and small / medium / large jobs.
    pub fn response_chart(&self) -> LineChart {
        let groups: [(&str, std::ops::Range<usize>); 4] = [
            ("all jobs", 0..9),
            ("1-20 maps", 0..3),
            ("21-1500 maps", 3..8),
            (">1500 maps", 8..9),
        ];
        let mut lines = Vec::new();
        for (c, (name, bins)) in groups.iter().enumerate() {
            let mut r: Vec<f64> = self
                .apps
                .iter()
                .filter(|a| bins.contains(&a.bin()))
                .filter_map(AppOutcome::response)
                .map(|d| (d.as_millis() as f64 / 1000.0).max(0.001))
                .collect();
            if r.is_empty() {
                continue;
            }
            r.sort_by(f64::total_cmp);
            let n = r.len() as f64;
            let points: Vec<(f64, f64)> = r
                .iter()
                .enumerate()
                .map(|(i, x)| (*x, (i + 1) as f64 / n))
                .collect();
            lines.push(Line {
                step: true,
                ..Line::new(*name, c, thin(points, 1500))
            });
        }
        LineChart {
            title: format!("{}: response-time distribution", self.scenario),
            x_label: "response time (s, log scale)".to_owned(),
            y_label: "fraction of finished jobs".to_owned(),
            x_log: true,
            y_max: Some(1.0),
            lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{SimOptions, simulate};
    use crate::scenario::{MemorySources, Scenario};

    #[test]
    fn the_json_report_has_every_section() {
        let sc = Scenario::load(
            r#"
            name = "tiny"
            seed = 2
            [[nodes]]
            count = 1
            capacity = "2048 mb, 2 vcores"
            [report]
            sample_interval = "4s"
            [[apps]]
            name = "one"
            am = "unmanaged"
            queue = "root.q"
            tasks = [ { count = 1, duration = "5s", replicas = 0 } ]
            "#,
            &MemorySources::default(),
            None,
        )
        .unwrap();
        let report = simulate(&sc, SimOptions::default()).unwrap();
        // The unmanaged AM registers and asks at 0 and heartbeats on whole
        // seconds; the node (phase under a second) is given the task on its
        // first heartbeat, the AM launches it at 1.000, it ends at 6.000, the
        // node reports it at 6 s plus its phase and the AM finishes at 7.000.
        // Samples at 0, 4 and the end. Engine: 14 ticks (every 500 ms), 3
        // heartbeats heard (allocation, RUNNING, COMPLETE), 4 allocate calls
        // (registration, launch, the ask cancelled, the finish), plus
        // registration, new application, submission, AM registration and
        // finish: 26 core calls.
        expect_test::expect![[r#"
            {
              "weft_sim_report": 1,
              "scenario": "tiny",
              "seed": 2,
              "summary": {
                "virtual_time_s": 7.000,
                "apps": {
                  "finished": 1,
                  "killed": 0,
                  "failed": 0,
                  "rejected": 0,
                  "unfinished": 0
                },
                "task_locality": {
                  "node_local": 0,
                  "rack_local": 0,
                  "off_rack": 0,
                  "no_data": 1
                },
                "node_locality": null,
                "mean_response_s": 7.000,
                "mean_jain_index": 1.0000,
                "preemption_warnings": 0,
                "preemption_kills": 0,
                "stalled": null
              },
              "sample_times_s": [0.000, 4.000, 7.000],
              "cluster": {
                "allocated_mb": [0, 1024, 0],
                "capacity_mb": [2048, 2048, 2048]
              },
              "queues": [
                {
                  "path": "root",
                  "leaf": false,
                  "min_share": {
                    "memory_mb": 0,
                    "vcores": 0
                  },
                  "time_below_min_share_s": 0.000,
                  "time_below_half_fair_share_s": 0.000,
                  "preemption_warnings": 0,
                  "preemption_kills": 0,
                  "usage_mb": [0, 1024, 0],
                  "usage_vcores": [0, 1, 0],
                  "demand_mb": [0, 1024, 0],
                  "demand_vcores": [0, 1, 0],
                  "fair_share_mb": [0, 2048, 2048],
                  "fair_share_vcores": [0, 2, 2],
                  "steady_fair_share_mb": [2048, 2048, 2048],
                  "steady_fair_share_vcores": [2, 2, 2]
                },
                {
                  "path": "root.default",
                  "leaf": true,
                  "min_share": {
                    "memory_mb": 0,
                    "vcores": 0
                  },
                  "time_below_min_share_s": 0.000,
                  "time_below_half_fair_share_s": 0.000,
                  "preemption_warnings": 0,
                  "preemption_kills": 0,
                  "usage_mb": [0, 0, 0],
                  "usage_vcores": [0, 0, 0],
                  "demand_mb": [0, 0, 0],
                  "demand_vcores": [0, 0, 0],
                  "fair_share_mb": [0, 0, 0],
                  "fair_share_vcores": [0, 0, 0],
                  "steady_fair_share_mb": [1024, 1024, 1024],
                  "steady_fair_share_vcores": [0, 0, 0]
                },
                {
                  "path": "root.q",
                  "leaf": true,
                  "min_share": {
                    "memory_mb": 0,
                    "vcores": 0
                  },
                  "time_below_min_share_s": 0.000,
                  "time_below_half_fair_share_s": 0.000,
                  "preemption_warnings": 0,
                  "preemption_kills": 0,
                  "usage_mb": [0, 1024, 0],
                  "usage_vcores": [0, 1, 0],
                  "demand_mb": [0, 1024, 0],
                  "demand_vcores": [0, 1, 0],
                  "fair_share_mb": [0, 2048, 2048],
                  "fair_share_vcores": [0, 0, 0],
                  "steady_fair_share_mb": [1024, 1024, 1024],
                  "steady_fair_share_vcores": [0, 0, 0]
                }
              ],
              "fairness": {
                "times_s": [4.000],
                "jain_index": [1.0000]
              },
              "bins": [
                {
                  "bin": 1,
                  "maps": "1",
                  "jobs": 1,
                  "finished": 1,
                  "node_locality": null,
                  "rack_locality": null,
                  "mean_response_s": 7.000,
                  "median_response_s": 7.000
                }
              ],
              "apps": [
                {
                  "name": "one",
                  "id": "application_1_0001",
                  "user": "user",
                  "queue": "root.q",
                  "maps": 1,
                  "tasks": 1,
                  "outcome": "finished",
                  "reason": null,
                  "submit_s": 0.000,
                  "am_start_s": null,
                  "first_task_s": 1.000,
                  "finish_s": 7.000,
                  "response_s": 7.000,
                  "locality": {
                    "node_local": 0,
                    "rack_local": 0,
                    "off_rack": 0,
                    "no_data": 1
                  },
                  "preempted_tasks": 0,
                  "lost_tasks": 0,
                  "released_containers": 0,
                  "preemption_warnings": 0
                }
              ],
              "preemption": {
                "warnings": 0,
                "kills": 0,
                "events": []
              },
              "other_core_events": {},
              "engine": {
                "events": 9,
                "core_calls": 26,
                "heartbeats": 3,
                "heartbeats_skipped": 0,
                "allocate_calls": 4,
                "ticks": 14
              },
              "warnings": [],
              "refused_events": []
            }
        "#]]
        .assert_eq(&report.to_json());
        let charts = report.charts();
        assert_eq!(charts.len(), 3);
        assert!(
            charts
                .iter()
                .all(|(name, svg)| name.ends_with(".svg") && svg.ends_with("</svg>\n"))
        );
    }
}
