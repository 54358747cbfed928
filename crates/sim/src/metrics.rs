//! What the engine records while it runs: queue samples (usage, demand,
//! instantaneous and steady fair share) at a fixed interval with the
//! fairness measures derived from them, preemption warnings and kills, and
//! core events the simulator does not know by name.
//!
//! Turning the recording into the report (JSON, tables, charts) is
//! `report`'s job; deciding when to sample is the engine's.

use std::collections::BTreeMap;

use weft_core::ResourceManager;
use weft_model::{ContainerId, Duration, Resource, ResourceType, Time};
use weft_queue_tree::{Policy, QueueKind};

/// One queue's series.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSeries {
    /// Full path.
    pub path: String,
    /// Leaf (or parent).
    pub leaf: bool,
    /// Its min share when last seen.
    pub min_share: Resource,
    /// Usage at each sample (zero where the queue did not exist).
    pub usage: Vec<Resource>,
    /// Demand at each sample.
    pub demand: Vec<Resource>,
    /// Instantaneous fair share at each sample.
    pub fair_share: Vec<Resource>,
    /// Steady fair share at each sample.
    pub steady_fair_share: Vec<Resource>,
    /// Sampled time below min(min share, demand).
    pub below_min_share: Duration,
    /// Sampled time below min(half the fair share, demand).
    pub below_half_fair_share: Duration,
    /// Preemption warnings for its containers.
    pub preemption_warnings: u64,
    /// Its containers killed by preemption.
    pub preemption_kills: u64,
}

/// One preemption warning or kill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreemptionRecord {
    /// When.
    pub at: Time,
    /// `warning` or `kill`.
    pub kind: &'static str,
    /// The container.
    pub container: ContainerId,
    /// Its queue.
    pub queue: String,
    /// For warnings: the kill deadline.
    pub deadline: Option<Time>,
}

/// The engine's recording.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) samples: Vec<Time>,
    pub(crate) queues: Vec<QueueSeries>,
    index: BTreeMap<String, usize>,
    /// (time, Jain's index over active leaves).
    pub(crate) jain: Vec<(Time, f64)>,
    /// Cluster allocation at each sample.
    pub(crate) allocated: Vec<Resource>,
    /// Cluster capacity at each sample.
    pub(crate) capacity: Vec<Resource>,
    pub(crate) preemptions: Vec<PreemptionRecord>,
    pub(crate) warnings_total: u64,
    pub(crate) kills_total: u64,
    /// Events of kinds the simulator does not handle, by kind.
    pub(crate) other_events: BTreeMap<String, u64>,
}

/// At most this many individual preemption records are kept (counts are exact).
const MAX_PREEMPTION_RECORDS: usize = 10_000;

impl Recorder {
    /// The series of a queue, created (zero for every sample so far) if new.
    fn series(&mut self, path: &str, leaf: bool) -> usize {
        if let Some(i) = self.index.get(path) {
            return *i;
        }
        let n = self.samples.len();
        self.queues.push(QueueSeries {
            path: path.to_owned(),
            leaf,
            min_share: Resource::ZERO,
            usage: vec![Resource::ZERO; n],
            demand: vec![Resource::ZERO; n],
            fair_share: vec![Resource::ZERO; n],
            steady_fair_share: vec![Resource::ZERO; n],
            below_min_share: Duration::ZERO,
            below_half_fair_share: Duration::ZERO,
            preemption_warnings: 0,
            preemption_kills: 0,
        });
        self.index.insert(path.to_owned(), self.queues.len() - 1);
        self.queues.len() - 1
    }

    /// Records one sample of every queue; `interval` is the time it stands for.
    pub(crate) fn sample(&mut self, now: Time, rm: &ResourceManager, interval: Duration) {
        let reports = rm.queue_reports();
        let cluster = rm.tree().cluster_capacity();
        let root_policy = reports.first().map_or(Policy::Fair, |q| q.tree.policy);
        let measure = |r: &Resource| -> f64 {
            match root_policy {
                Policy::Drf => r.dominant_share(&cluster),
                Policy::Fair | Policy::Fifo => r.get(ResourceType::Memory) as f64,
            }
        };
        // Series created below start with a zero for every earlier sample.
        let n = self.samples.len();
        let mut ratios = Vec::new();
        for q in &reports {
            let t = &q.tree;
            let i = self.series(t.path.as_str(), t.kind == QueueKind::Leaf);
            let s = &mut self.queues[i];
            s.min_share = t.min_share;
            s.usage.push(t.usage);
            s.demand.push(t.demand);
            s.fair_share.push(t.fair_share);
            s.steady_fair_share.push(t.steady_fair_share);
            let usage = measure(&t.usage);
            let demand = measure(&t.demand);
            let min_target = measure(&t.min_share).min(demand);
            let half_fair = (measure(&t.fair_share) * 0.5).min(demand);
            // Below by more than rounding: a container's worth is far larger.
            if usage + 1e-9 < min_target {
                s.below_min_share = s.below_min_share + interval;
            }
            if usage + 1e-9 < half_fair {
                s.below_half_fair_share = s.below_half_fair_share + interval;
            }
            let fair = measure(&t.fair_share);
            if s.leaf && fair > 0.0 && demand > 0.0 {
                ratios.push(usage / fair);
            }
        }
        for s in &mut self.queues {
            if s.usage.len() == n {
                // The queue is gone (a removed dynamic queue): nothing in it.
                s.usage.push(Resource::ZERO);
                s.demand.push(Resource::ZERO);
                s.fair_share.push(Resource::ZERO);
                s.steady_fair_share.push(Resource::ZERO);
            }
        }
        self.samples.push(now);
        if !ratios.is_empty() {
            let sum: f64 = ratios.iter().sum();
            let sum_sq: f64 = ratios.iter().map(|x| x * x).sum();
            let jain = if sum_sq > 0.0 {
                sum * sum / (ratios.len() as f64 * sum_sq)
            } else {
                1.0
            };
            self.jain.push((now, jain));
        }
        let m = rm.cluster_metrics();
        self.allocated.push(m.allocated);
        self.capacity.push(m.total);
    }

    /// A preemption warning for a container (counted once per container by the caller).
    pub(crate) fn warning(
        &mut self,
        at: Time,
        container: ContainerId,
        queue: &str,
        deadline: Time,
    ) {
        self.warnings_total += 1;
        let i = self.series(queue, true);
        self.queues[i].preemption_warnings += 1;
        if self.preemptions.len() < MAX_PREEMPTION_RECORDS {
            self.preemptions.push(PreemptionRecord {
                at,
                kind: "warning",
                container,
                queue: queue.to_owned(),
                deadline: Some(deadline),
            });
        }
    }

    /// A container killed by preemption.
    pub(crate) fn kill(&mut self, at: Time, container: ContainerId, queue: &str) {
        self.kills_total += 1;
        let i = self.series(queue, true);
        self.queues[i].preemption_kills += 1;
        if self.preemptions.len() < MAX_PREEMPTION_RECORDS {
            self.preemptions.push(PreemptionRecord {
                at,
                kind: "kill",
                container,
                queue: queue.to_owned(),
                deadline: None,
            });
        }
    }

    #[cfg(test)]
    fn queue_kills(&self, path: &str) -> u64 {
        self.index
            .get(path)
            .map_or(0, |i| self.queues[*i].preemption_kills)
    }

    /// A core event the simulator has no handling for.
    pub(crate) fn other_event(&mut self, debug: &str) {
        let kind: String = debug
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        *self.other_events.entry(kind).or_default() += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_core::CoreSettings;
    use weft_queue_tree::AllocConfig;

    #[test]
    fn series_stay_as_long_as_the_samples() {
        let rm = ResourceManager::new(AllocConfig::default(), CoreSettings::default(), Time::ZERO);
        let mut r = Recorder::default();
        r.sample(Time::ZERO, &rm, Duration::from_secs(1));
        let c = ContainerId::new(
            weft_model::AttemptId::new(weft_model::AppId::new(1, 1), 1),
            2,
        );
        // A queue first seen between samples (through a kill) ...
        r.kill(Time::from_millis(500), c, "root.late");
        r.sample(Time::from_millis(1000), &rm, Duration::from_secs(1));
        for q in &r.queues {
            assert_eq!(q.usage.len(), r.samples.len(), "{}", q.path);
            assert_eq!(q.fair_share.len(), r.samples.len(), "{}", q.path);
        }
        assert_eq!(r.queue_kills("root.late"), 1);
    }
}
