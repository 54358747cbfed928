//! The concrete workload a simulation replays: nodes (`NodeSpec`), apps
//! (`AppSpec`) made of task groups (`TaskGroup`) whose tasks carry a base
//! duration and the nodes holding their input block's replicas, how replicas
//! are spread (`DataLayout`), and the delay-scheduling paper's job-size bins.
//!
//! Everything here is plain data, already resolved from a scenario file or an
//! importer with the seeded RNG: the engine only reads it. How a task's
//! duration changes with where it runs is `runtime`'s business.

use weft_model::{AppPriority, Duration, Priority, Resource, Time};

use crate::rng::SimRng;

/// One node of the simulated cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Host name (also the name asks use for it).
    pub name: String,
    /// Rack, a network path such as `/rack01`.
    pub rack: String,
    /// What the node offers.
    pub capability: Resource,
}

/// One application to submit.
#[derive(Clone, Debug, PartialEq)]
pub struct AppSpec {
    /// A name unique within the workload (reports and events use it).
    pub name: String,
    /// When it is submitted.
    pub arrival: Time,
    /// The submitting user.
    pub user: String,
    /// The queue asked for (placement decides), or none.
    pub queue: Option<String>,
    /// Application priority.
    pub priority: AppPriority,
    /// The AM container's size; `None` for an unmanaged AM (no container, as
    /// with MRv1's job tracker, which the delay-scheduling paper measured).
    pub am: Option<Resource>,
    /// Its tasks, by group.
    pub groups: Vec<TaskGroup>,
    /// How long it may run from its submission before the RM kills it
    /// (YARN's `LIFETIME` timeout); `None`: no limit.
    pub lifetime: Option<Duration>,
}

impl AppSpec {
    /// Tasks in all groups.
    pub fn n_tasks(&self) -> usize {
        self.groups.iter().map(TaskGroup::len).sum()
    }

    /// The job's size for binning: its first stage's tasks (the maps).
    pub fn n_first_stage_tasks(&self) -> u32 {
        let first = self.groups.iter().map(|g| g.stage).min().unwrap_or(0);
        self.groups
            .iter()
            .filter(|g| g.stage == first)
            .map(|g| g.len() as u32)
            .sum()
    }
}

/// Tasks alike in size, priority and stage (maps, or reduces).
///
/// A group of stage `s` is asked for only once every task of every earlier
/// stage is done, as SLS's MapReduce AM asks for reduces after the maps.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskGroup {
    /// Stage number; groups of the lowest stage start at once.
    pub stage: u32,
    /// Request priority (MapReduce uses 20 for maps, 10 for reduces).
    pub priority: Priority,
    /// Container size asked for.
    pub size: Resource,
    durations: Vec<Duration>,
    /// Offsets into `replicas`, one more than there are tasks.
    replica_offsets: Vec<u32>,
    replicas: Vec<u32>,
}

impl TaskGroup {
    /// An empty group.
    pub fn new(stage: u32, priority: Priority, size: Resource) -> TaskGroup {
        TaskGroup {
            stage,
            priority,
            size,
            durations: Vec::new(),
            replica_offsets: vec![0],
            replicas: Vec::new(),
        }
    }

    /// Adds a task: its duration when it runs next to its data (or anywhere,
    /// without data), and the nodes (indices into the cluster's node list)
    /// holding its input's replicas.
    pub fn push(&mut self, duration: Duration, replicas: &[u32]) {
        self.durations.push(duration);
        self.replicas.extend_from_slice(replicas);
        self.replica_offsets.push(self.replicas.len() as u32);
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.durations.len()
    }

    /// True without tasks.
    pub fn is_empty(&self) -> bool {
        self.durations.is_empty()
    }

    /// A task's base duration.
    pub fn duration(&self, task: usize) -> Duration {
        self.durations[task]
    }

    /// The nodes holding a task's input (empty: no input to be near).
    pub fn replicas(&self, task: usize) -> &[u32] {
        let from = self.replica_offsets[task] as usize;
        let to = self.replica_offsets[task + 1] as usize;
        &self.replicas[from..to]
    }
}

/// How a block's replicas are spread over the nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReplicaPlacement {
    /// Distinct nodes chosen uniformly (the delay-scheduling paper's analysis).
    #[default]
    Uniform,
    /// HDFS's default: a random node, then two nodes of one other rack.
    RackAware,
}

/// The nodes data can live on, by rack, for placing replicas.
#[derive(Clone, Debug)]
pub struct DataLayout {
    rack_of: Vec<u32>,
    racks: Vec<Vec<u32>>,
    placement: ReplicaPlacement,
}

impl DataLayout {
    /// A layout over `nodes` (data lives on the cluster's initial nodes).
    pub fn new(nodes: &[NodeSpec], placement: ReplicaPlacement) -> DataLayout {
        let mut names: Vec<&str> = Vec::new();
        let mut rack_of = Vec::with_capacity(nodes.len());
        let mut racks: Vec<Vec<u32>> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let r = match names.iter().position(|r| *r == n.rack) {
                Some(r) => r,
                None => {
                    names.push(&n.rack);
                    racks.push(Vec::new());
                    names.len() - 1
                }
            };
            rack_of.push(r as u32);
            racks[r].push(i as u32);
        }
        DataLayout {
            rack_of,
            racks,
            placement,
        }
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> u32 {
        self.rack_of.len() as u32
    }

    /// Chooses the nodes for one block's `replicas` copies.
    pub fn place(&self, rng: &mut SimRng, replicas: u32) -> Vec<u32> {
        let n = self.n_nodes();
        if n == 0 || replicas == 0 {
            return Vec::new();
        }
        if self.placement == ReplicaPlacement::Uniform || self.racks.len() < 2 {
            return rng.distinct(n, replicas);
        }
        let first = rng.below(u64::from(n)) as u32;
        let mut out = vec![first];
        let home = self.rack_of[first as usize];
        let others: Vec<usize> = (0..self.racks.len())
            .filter(|r| *r as u32 != home)
            .collect();
        let remote = &self.racks[others[rng.below(others.len() as u64) as usize]];
        for idx in rng.distinct(remote.len() as u32, (replicas - 1).min(2)) {
            out.push(remote[idx as usize]);
        }
        while (out.len() as u32) < replicas.min(n) {
            let x = rng.below(u64::from(n)) as u32;
            if !out.contains(&x) {
                out.push(x);
            }
        }
        out
    }
}

/// The job-size bins of the delay-scheduling paper's Table 2 (maps per job,
/// inclusive bounds; the last bin is open-ended).
pub const PAPER_BINS: [(u32, u32); 9] = [
    (1, 1),
    (2, 2),
    (3, 20),
    (21, 60),
    (61, 150),
    (151, 300),
    (301, 500),
    (501, 1500),
    (1501, u32::MAX),
];

/// The paper's bin (0-based) for a job with `maps` first-stage tasks; jobs
/// without tasks count in the first bin.
pub fn paper_bin(maps: u32) -> usize {
    PAPER_BINS
        .iter()
        .position(|(lo, hi)| maps >= *lo && maps <= *hi)
        .unwrap_or(0)
}

/// A bin's label: `1`, `3-20`, `>1500`.
pub fn paper_bin_label(bin: usize) -> String {
    let (lo, hi) = PAPER_BINS[bin];
    if hi == u32::MAX {
        format!(">{}", lo - 1)
    } else if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(n: usize, per_rack: usize) -> Vec<NodeSpec> {
        (0..n)
            .map(|i| NodeSpec {
                name: format!("n{i}"),
                rack: format!("/r{}", i / per_rack),
                capability: Resource::new(4096, 4),
            })
            .collect()
    }

    #[test]
    fn rack_aware_placement_uses_two_racks() {
        let layout = DataLayout::new(&nodes(40, 10), ReplicaPlacement::RackAware);
        let mut rng = SimRng::new(3);
        for _ in 0..200 {
            let r = layout.place(&mut rng, 3);
            assert_eq!(r.len(), 3);
            let racks: Vec<u32> = r.iter().map(|n| n / 10).collect();
            assert_ne!(racks[0], racks[1]);
            assert_eq!(racks[1], racks[2]);
            assert_ne!(r[1], r[2]);
        }
    }

    #[test]
    fn groups_keep_each_tasks_replicas() {
        let mut g = TaskGroup::new(0, Priority(20), Resource::new(1024, 1));
        g.push(Duration::from_secs(5), &[1, 2, 3]);
        g.push(Duration::from_secs(6), &[]);
        g.push(Duration::from_secs(7), &[9]);
        assert_eq!(g.len(), 3);
        assert_eq!(g.replicas(0), &[1, 2, 3]);
        assert!(g.replicas(1).is_empty());
        assert_eq!(g.replicas(2), &[9]);
        assert_eq!(g.duration(2), Duration::from_secs(7));
    }

    #[test]
    fn paper_bins() {
        let labels: Vec<String> = [1, 2, 3, 20, 21, 150, 1500, 1501, 100_000]
            .iter()
            .map(|m| paper_bin_label(paper_bin(*m)))
            .collect();
        assert_eq!(
            labels,
            [
                "1", "2", "3-20", "3-20", "21-60", "61-150", "501-1500", ">1500", ">1500"
            ]
        );
    }
}
