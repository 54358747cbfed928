//! What the engine records while it runs: queue samples (usage, demand,
//! instantaneous and steady fair share) at a fixed interval with the
//! fairness measures derived from them, preemption warnings and kills, and
//! core events the simulator does not know by name.
//!
//! The samples take bounded memory however long the run: when they number
//! more than a cap, every other one is dropped and the interval doubles
//! (the report carries each sample's time, so the series stay readable).
//! Time-weighted totals (time below min share) are accumulated as samples
//! are taken, each weighted by the interval until the next, so thinning
//! the series does not change them.
//!
//! Turning the recording into the report (JSON, tables, charts) is
//! `report`'s job; the engine takes a sample whenever `interval` says.

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

/// Samples kept at most (then thinned to half): a day at one-second
/// samples fits whole, and a sample costs about 64 bytes per queue, so a
/// hundred queues take at most some 640 MB however long the run.
pub(crate) const MAX_SAMPLES: usize = 100_000;

/// One queue at one instant, as the recorder needs it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct QueueSample<'a> {
    pub(crate) path: &'a str,
    pub(crate) leaf: bool,
    pub(crate) min_share: Resource,
    pub(crate) usage: Resource,
    pub(crate) demand: Resource,
    pub(crate) fair_share: Resource,
    pub(crate) steady_fair_share: Resource,
}

/// Everything one sample records, read from the core (or made by a test).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Snapshot<'a> {
    /// The root's policy, which decides what "below" compares.
    pub(crate) policy: Policy,
    /// The cluster's capacity (for dominant shares).
    pub(crate) cluster: Resource,
    /// Every queue, parents included.
    pub(crate) queues: Vec<QueueSample<'a>>,
    /// Cluster allocation.
    pub(crate) allocated: Resource,
    /// Cluster capacity as the core's metrics report it.
    pub(crate) total: Resource,
}

/// The engine's recording.
#[derive(Clone, Debug)]
pub(crate) struct Recorder {
    pub(crate) samples: Vec<Time>,
    pub(crate) queues: Vec<QueueSeries>,
    index: BTreeMap<String, usize>,
    /// Jain's index over active leaves, per sample (none without such leaves).
    jain: Vec<Option<f64>>,
    /// Cluster allocation at each sample.
    pub(crate) allocated: Vec<Resource>,
    /// Cluster capacity at each sample.
    pub(crate) capacity: Vec<Resource>,
    pub(crate) preemptions: Vec<PreemptionRecord>,
    pub(crate) warnings_total: u64,
    pub(crate) kills_total: u64,
    /// Events of kinds the simulator does not handle, by kind.
    pub(crate) other_events: BTreeMap<String, u64>,
    /// Time between samples now (doubled at each thinning).
    interval: Duration,
    /// Thin the samples when there are more than this many.
    max_samples: usize,
}

/// At most this many individual preemption records are kept (counts are exact).
const MAX_PREEMPTION_RECORDS: usize = 10_000;

impl Recorder {
    /// A recorder sampling every `interval`, keeping at most `max_samples`
    /// samples (at least 2; an even cap keeps the first sample through
    /// every thinning).
    pub(crate) fn new(interval: Duration, max_samples: usize) -> Recorder {
        Recorder {
            samples: Vec::new(),
            queues: Vec::new(),
            index: BTreeMap::new(),
            jain: Vec::new(),
            allocated: Vec::new(),
            capacity: Vec::new(),
            preemptions: Vec::new(),
            warnings_total: 0,
            kills_total: 0,
            other_events: BTreeMap::new(),
            interval,
            max_samples: max_samples.max(2),
        }
    }

    /// Time from a sample to the next.
    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }

    /// (time, Jain's index) at the samples that have one.
    pub(crate) fn fairness(&self) -> Vec<(Time, f64)> {
        self.samples
            .iter()
            .zip(&self.jain)
            .filter_map(|(t, j)| j.map(|j| (*t, j)))
            .collect()
    }

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

    /// Records one sample of every queue in the core.
    pub(crate) fn sample(&mut self, now: Time, rm: &ResourceManager) {
        let reports = rm.queue_reports();
        let m = rm.cluster_metrics();
        let snapshot = Snapshot {
            policy: reports.first().map_or(Policy::Fair, |q| q.tree.policy),
            cluster: rm.tree().cluster_capacity(),
            queues: reports
                .iter()
                .map(|q| QueueSample {
                    path: q.tree.path.as_str(),
                    leaf: q.tree.kind == QueueKind::Leaf,
                    min_share: q.tree.min_share,
                    usage: q.tree.usage,
                    demand: q.tree.demand,
                    fair_share: q.tree.fair_share,
                    steady_fair_share: q.tree.steady_fair_share,
                })
                .collect(),
            allocated: m.allocated,
            total: m.total,
        };
        self.record(now, &snapshot);
    }

    /// Records one sample; it stands for the time until the next one.
    pub(crate) fn record(&mut self, now: Time, snap: &Snapshot<'_>) {
        let measure = |r: &Resource| -> f64 {
            match snap.policy {
                Policy::Drf => r.dominant_share(&snap.cluster),
                Policy::Fair | Policy::Fifo => r.get(ResourceType::Memory) as f64,
            }
        };
        // Series created below start with a zero for every earlier sample.
        let n = self.samples.len();
        let mut ratios = Vec::new();
        // (series, below min share, below half fair share), weighted once
        // the interval this sample stands for is known (after any thinning).
        let mut below = Vec::new();
        for t in &snap.queues {
            let i = self.series(t.path, t.leaf);
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
            below.push((i, usage + 1e-9 < min_target, usage + 1e-9 < half_fair));
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
        self.jain.push((!ratios.is_empty()).then(|| {
            let sum: f64 = ratios.iter().sum();
            let sum_sq: f64 = ratios.iter().map(|x| x * x).sum();
            if sum_sq > 0.0 {
                sum * sum / (ratios.len() as f64 * sum_sq)
            } else {
                1.0
            }
        }));
        self.allocated.push(snap.allocated);
        self.capacity.push(snap.total);
        if self.samples.len() > self.max_samples {
            self.thin();
        }
        // The next sample is `interval` away (doubled if just thinned).
        let interval = self.interval;
        for (i, below_min, below_half) in below {
            let s = &mut self.queues[i];
            if below_min {
                s.below_min_share = s.below_min_share + interval;
            }
            if below_half {
                s.below_half_fair_share = s.below_half_fair_share + interval;
            }
        }
    }

    /// Keeps every other sample, the newest included, and doubles the
    /// interval: the kept ones are then evenly spaced at the new interval
    /// (with an even cap, the first sample is kept too).
    fn thin(&mut self) {
        fn every_other<T>(v: &mut Vec<T>) {
            let newest = v.len().saturating_sub(1);
            let mut i = 0;
            v.retain(|_| {
                let keep = (newest - i).is_multiple_of(2);
                i += 1;
                keep
            });
        }
        every_other(&mut self.samples);
        every_other(&mut self.jain);
        every_other(&mut self.allocated);
        every_other(&mut self.capacity);
        for s in &mut self.queues {
            every_other(&mut s.usage);
            every_other(&mut s.demand);
            every_other(&mut s.fair_share);
            every_other(&mut s.steady_fair_share);
        }
        self.interval = self.interval.saturating_mul(2);
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
        let mut r = Recorder::new(Duration::from_secs(1), MAX_SAMPLES);
        r.sample(Time::ZERO, &rm);
        let c = ContainerId::new(
            weft_model::AttemptId::new(weft_model::AppId::new(1, 1), 1),
            2,
        );
        // A queue first seen between samples (through a kill) ...
        r.kill(Time::from_millis(500), c, "root.late");
        r.sample(Time::from_millis(1000), &rm);
        for q in &r.queues {
            assert_eq!(q.usage.len(), r.samples.len(), "{}", q.path);
            assert_eq!(q.fair_share.len(), r.samples.len(), "{}", q.path);
        }
        assert_eq!(r.queue_kills("root.late"), 1);
    }

    /// A leaf `root.a` with a min share of 1024 MB and demand of 2048 MB,
    /// starved (nothing used) when `starved`, and `at` seconds of allocation
    /// so a test can tell samples apart.
    fn snapshot(at: u64, starved: bool) -> Snapshot<'static> {
        let used = if starved {
            Resource::ZERO
        } else {
            Resource::new(2048, 2)
        };
        let queue = |path, leaf| QueueSample {
            path,
            leaf,
            min_share: Resource::new(1024, 1),
            usage: used,
            demand: Resource::new(2048, 2),
            fair_share: Resource::new(2048, 2),
            steady_fair_share: Resource::new(2048, 2),
        };
        Snapshot {
            policy: Policy::Fair,
            cluster: Resource::new(4096, 4),
            queues: vec![queue("root", false), queue("root.a", true)],
            allocated: Resource::new(at, 0),
            total: Resource::new(4096, 4),
        }
    }

    /// Samples as the engine does (each one `interval` after the last) up
    /// to `until` seconds, starved before `starved_until`.
    fn run(max_samples: usize, until: u64, starved_until: u64) -> Recorder {
        let mut r = Recorder::new(Duration::from_secs(1), max_samples);
        let mut t = Time::ZERO;
        while t.as_millis() <= until * 1000 {
            let secs = t.as_millis() / 1000;
            r.record(t, &snapshot(secs, secs < starved_until));
            t += r.interval();
        }
        r
    }

    #[test]
    fn past_the_cap_every_other_sample_goes_and_the_interval_doubles() {
        let r = run(4, 16, 8);
        // 0..=4 every second, thinned to 0, 2, 4; then 6, 8, thinned to
        // 0, 4, 8; then 12, 16, thinned to 0, 8, 16; next at 24.
        let secs: Vec<u64> = r.samples.iter().map(|t| t.as_millis() / 1000).collect();
        assert_eq!(secs, [0, 8, 16]);
        assert_eq!(r.interval(), Duration::from_secs(8));
        // Every series kept the same samples (allocation is the time here).
        let allocated: Vec<u64> = r.allocated.iter().map(Resource::memory_mb).collect();
        assert_eq!(allocated, secs);
        for q in &r.queues {
            assert_eq!(q.usage.len(), 3, "{}", q.path);
            assert_eq!(q.demand.len(), 3, "{}", q.path);
            assert_eq!(q.fair_share.len(), 3, "{}", q.path);
            assert_eq!(q.steady_fair_share.len(), 3, "{}", q.path);
        }
        assert_eq!(r.capacity.len(), 3);
        let fairness: Vec<(u64, f64)> = r
            .fairness()
            .iter()
            .map(|(t, j)| (t.as_millis() / 1000, *j))
            .collect();
        assert_eq!(fairness, [(0, 1.0), (8, 1.0), (16, 1.0)]);
        // Starved for the first 8 s: the time below stays exact although
        // the samples that measured it are gone.
        let leaf = &r.queues[1];
        assert_eq!(leaf.path, "root.a");
        assert_eq!(leaf.below_min_share, Duration::from_secs(8));
        assert_eq!(leaf.below_half_fair_share, Duration::from_secs(8));
        // The same run without a cap: every second kept, the same totals.
        let whole = run(MAX_SAMPLES, 16, 8);
        assert_eq!(whole.samples.len(), 17);
        assert_eq!(whole.interval(), Duration::from_secs(1));
        assert_eq!(whole.queues[1].below_min_share, Duration::from_secs(8));
        // Always starved: below for all the time the samples stand for, to
        // the next sample (24 s).
        let always = run(4, 16, u64::MAX);
        assert_eq!(always.queues[1].below_min_share, Duration::from_secs(24));
    }

    #[test]
    fn memory_stays_bounded_however_long_the_run() {
        // A year of 10-second samples under a cap of 64: 22 thinnings.
        let mut r = Recorder::new(Duration::from_secs(10), 64);
        let mut t = Time::ZERO;
        let year = Time::ZERO + crate::limits::HORIZON;
        let mut taken = 0u32;
        while t <= year {
            r.record(t, &snapshot(0, false));
            t += r.interval();
            taken += 1;
        }
        assert!(r.samples.len() <= 64, "{}", r.samples.len());
        assert!(taken < 64 * 24, "{taken} samples taken");
        assert_eq!(r.samples[0], Time::ZERO, "the first sample is kept");
        let gaps: Vec<u64> = r
            .samples
            .windows(2)
            .map(|w| w[1].since(w[0]).as_millis())
            .collect();
        assert!(
            gaps.iter().all(|g| *g == gaps[0]),
            "evenly spaced: {gaps:?}"
        );
    }
}
