//! ApplicationMaster emulation, modelled on MapReduce's AM (and SLS's, but
//! with every replica of a task's input): per task group it keeps pending
//! tasks indexed by the nodes and racks holding their data, asks for one
//! container per pending task at each replica's host, at each of their racks
//! and anywhere, resends only the counts that changed (absolute, as YARN
//! asks are), and runs on each container it receives the most local pending
//! task (node-local first, then rack-local, then any), releasing containers
//! it cannot use.
//!
//! Talking to the core, and when the AM heartbeats, is the engine's job; the
//! runtime of a task on a node is `runtime`'s.

use std::collections::{BTreeMap, BTreeSet};

use weft_core::Ask;
use weft_model::{AppId, ContainerId, Resource, Time};

use crate::runtime::TaskLocality;
use crate::workload::{AppSpec, TaskGroup};

/// Where an app is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AmStatus {
    /// Not submitted yet.
    Waiting,
    /// Submitted; waiting for its AM container.
    Accepted,
    /// Its AM container runs; it registers after the launch delay.
    Launching,
    /// Registered: it asks, runs tasks and heartbeats.
    Registered,
    /// Done, killed, failed or rejected.
    Ended,
}

/// How an app ended (for the report).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    Finished,
    Killed,
    Failed(String),
    Rejected(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TaskState {
    Inactive,
    Pending,
    Running,
    Done,
}

/// One group's tasks and asks.
#[derive(Clone, Debug)]
pub(crate) struct GroupRun {
    states: Vec<TaskState>,
    pub(crate) pending: u32,
    pub(crate) done: u32,
    pub(crate) active: bool,
    /// Pending tasks with a replica on a node (lazily cleaned: entries may be stale).
    by_node: BTreeMap<u32, Vec<u32>>,
    by_rack: BTreeMap<u32, Vec<u32>>,
    any: Vec<u32>,
    host_asks: BTreeMap<u32, u32>,
    rack_asks: BTreeMap<u32, u32>,
    any_ask: u32,
    dirty_hosts: BTreeSet<u32>,
    dirty_racks: BTreeSet<u32>,
    dirty_any: bool,
}

impl GroupRun {
    fn new(n: usize) -> GroupRun {
        GroupRun {
            states: vec![TaskState::Inactive; n],
            pending: 0,
            done: 0,
            active: false,
            by_node: BTreeMap::new(),
            by_rack: BTreeMap::new(),
            any: Vec::new(),
            host_asks: BTreeMap::new(),
            rack_asks: BTreeMap::new(),
            any_ask: 0,
            dirty_hosts: BTreeSet::new(),
            dirty_racks: BTreeSet::new(),
            dirty_any: false,
        }
    }

    fn is_complete(&self) -> bool {
        self.done as usize == self.states.len()
    }

    fn has_dirty(&self) -> bool {
        self.dirty_any || !self.dirty_hosts.is_empty() || !self.dirty_racks.is_empty()
    }

    /// Makes a task pending and asks for it.
    fn add_pending(&mut self, group: &TaskGroup, task: u32, rack_of: &[u32]) {
        self.states[task as usize] = TaskState::Pending;
        self.pending += 1;
        let replicas = group.replicas(task as usize);
        for r in replicas {
            self.by_node.entry(*r).or_default().push(task);
            *self.host_asks.entry(*r).or_default() += 1;
            self.dirty_hosts.insert(*r);
        }
        for rack in distinct_racks(replicas, rack_of) {
            self.by_rack.entry(rack).or_default().push(task);
            *self.rack_asks.entry(rack).or_default() += 1;
            self.dirty_racks.insert(rack);
        }
        self.any.push(task);
        self.any_ask += 1;
        self.dirty_any = true;
    }

    /// Takes a pending task out of the asks (it got a container).
    fn take(&mut self, group: &TaskGroup, task: u32, rack_of: &[u32]) {
        debug_assert_eq!(self.states[task as usize], TaskState::Pending);
        self.states[task as usize] = TaskState::Running;
        self.pending -= 1;
        let replicas = group.replicas(task as usize);
        for r in replicas {
            if let Some(c) = self.host_asks.get_mut(r) {
                *c = c.saturating_sub(1);
            }
            self.dirty_hosts.insert(*r);
        }
        for rack in distinct_racks(replicas, rack_of) {
            if let Some(c) = self.rack_asks.get_mut(&rack) {
                *c = c.saturating_sub(1);
            }
            self.dirty_racks.insert(rack);
        }
        self.any_ask = self.any_ask.saturating_sub(1);
        self.dirty_any = true;
    }

    fn pop_pending(&self, list: Option<&mut Vec<u32>>) -> Option<u32> {
        let list = list?;
        while let Some(t) = list.pop() {
            if self.states[t as usize] == TaskState::Pending {
                return Some(t);
            }
        }
        None
    }

    /// The most local pending task for a container on `node` in `rack`.
    fn pick(&mut self, node: u32, rack: u32) -> Option<u32> {
        let mut list = self.by_node.remove(&node);
        let found = self.pop_pending(list.as_mut());
        if let Some(l) = list.filter(|l| !l.is_empty()) {
            self.by_node.insert(node, l);
        }
        if found.is_some() {
            return found;
        }
        let mut list = self.by_rack.remove(&rack);
        let found = self.pop_pending(list.as_mut());
        if let Some(l) = list.filter(|l| !l.is_empty()) {
            self.by_rack.insert(rack, l);
        }
        if found.is_some() {
            return found;
        }
        let mut any = std::mem::take(&mut self.any);
        let found = self.pop_pending(Some(&mut any));
        self.any = any;
        found
    }

    /// The asks that changed since the last call, with absolute counts.
    fn changed_asks(&mut self, group: &TaskGroup, names: &Names<'_>, out: &mut Vec<Ask>) {
        let ask = |name: String, n: u32| Ask {
            priority: group.priority,
            resource_name: name,
            capability: group.size,
            num_containers: n,
            relax_locality: true,
        };
        for h in std::mem::take(&mut self.dirty_hosts) {
            let n = self.host_asks.get(&h).copied().unwrap_or(0);
            if n == 0 {
                self.host_asks.remove(&h);
            }
            out.push(ask(names.hosts[h as usize].to_owned(), n));
        }
        for r in std::mem::take(&mut self.dirty_racks) {
            let n = self.rack_asks.get(&r).copied().unwrap_or(0);
            if n == 0 {
                self.rack_asks.remove(&r);
            }
            out.push(ask(names.racks[r as usize].to_owned(), n));
        }
        if std::mem::take(&mut self.dirty_any) {
            out.push(ask(weft_core::ANY.to_owned(), self.any_ask));
        }
    }

    /// Marks every outstanding ask as changed (a new attempt starts from nothing).
    fn mark_all_dirty(&mut self) {
        self.dirty_hosts.extend(self.host_asks.keys().copied());
        self.dirty_racks.extend(self.rack_asks.keys().copied());
        self.dirty_any = true;
    }
}

fn distinct_racks(replicas: &[u32], rack_of: &[u32]) -> Vec<u32> {
    let mut racks: Vec<u32> = replicas.iter().map(|r| rack_of[*r as usize]).collect();
    racks.sort_unstable();
    racks.dedup();
    racks
}

/// Host and rack names by index, for building asks.
pub(crate) struct Names<'a> {
    pub(crate) hosts: &'a [String],
    pub(crate) racks: &'a [String],
}

/// What the AM records about itself for the report.
#[derive(Clone, Debug, Default)]
pub(crate) struct AmRecord {
    pub(crate) id: Option<AppId>,
    pub(crate) queue: Option<String>,
    pub(crate) submit: Option<Time>,
    pub(crate) am_start: Option<Time>,
    pub(crate) first_task: Option<Time>,
    pub(crate) finish: Option<Time>,
    pub(crate) ending: Option<Ending>,
    /// Task launches by `TaskLocality::index`.
    pub(crate) locality: [u32; 4],
    /// Task attempts lost to preemption.
    pub(crate) preempted: u32,
    /// Task attempts lost otherwise (node loss, AM restart).
    pub(crate) lost: u32,
    /// Containers it released unused.
    pub(crate) released: u32,
    /// Preemption warnings received for its containers.
    pub(crate) warned: u32,
}

/// One simulated AM.
#[derive(Clone, Debug)]
pub(crate) struct AmSim {
    pub(crate) status: AmStatus,
    pub(crate) groups: Vec<GroupRun>,
    /// Container → (group, task, node index).
    pub(crate) running: BTreeMap<ContainerId, (u16, u32, u32)>,
    pub(crate) releases: Vec<ContainerId>,
    pub(crate) am_container: Option<(ContainerId, u32)>,
    /// The core has something new for it (allocations, completions).
    pub(crate) news: bool,
    /// Its scheduled heartbeat (`Time::MAX`: none).
    pub(crate) next_hb: Time,
    pub(crate) last_hb: Option<Time>,
    /// Heartbeat phase in ms (set when it registers).
    pub(crate) phase: u64,
    /// When its pending registration is due (other registration entries are stale).
    pub(crate) register_at: Time,
    /// Containers already counted as warned.
    pub(crate) warned: BTreeSet<ContainerId>,
    pub(crate) record: AmRecord,
}

impl AmSim {
    pub(crate) fn new(spec: &AppSpec) -> AmSim {
        AmSim {
            status: AmStatus::Waiting,
            groups: spec.groups.iter().map(|g| GroupRun::new(g.len())).collect(),
            running: BTreeMap::new(),
            releases: Vec::new(),
            am_container: None,
            news: false,
            next_hb: Time::MAX,
            last_hb: None,
            phase: 0,
            register_at: Time::MAX,
            warned: BTreeSet::new(),
            record: AmRecord::default(),
        }
    }

    /// Starts the groups of the lowest stage with unfinished tasks, if none is
    /// running. Returns true if it started any.
    pub(crate) fn advance_stage(&mut self, spec: &AppSpec, rack_of: &[u32]) -> bool {
        if self.groups.iter().any(|g| g.active && !g.is_complete()) {
            return false;
        }
        let next = spec
            .groups
            .iter()
            .zip(&self.groups)
            .filter(|(_, run)| !run.active && !run.is_complete())
            .map(|(g, _)| g.stage)
            .min();
        let Some(stage) = next else { return false };
        for (g, run) in spec.groups.iter().zip(self.groups.iter_mut()) {
            if g.stage == stage && !run.active {
                run.active = true;
                for t in 0..g.len() as u32 {
                    run.add_pending(g, t, rack_of);
                }
            }
        }
        true
    }

    /// True once every task is done.
    pub(crate) fn all_done(&self) -> bool {
        self.groups.iter().all(GroupRun::is_complete)
    }

    /// True if it has asks or releases to send.
    pub(crate) fn has_changes(&self) -> bool {
        !self.releases.is_empty() || self.groups.iter().any(GroupRun::has_dirty)
    }

    /// The asks to send now.
    pub(crate) fn collect_asks(&mut self, spec: &AppSpec, names: &Names<'_>) -> Vec<Ask> {
        let mut out = Vec::new();
        for (g, run) in spec.groups.iter().zip(self.groups.iter_mut()) {
            if run.active {
                run.changed_asks(g, names, &mut out);
            }
        }
        out
    }

    /// Chooses the task a container runs: a pending task of an active group
    /// asked at the container's priority that fits it, the most local first.
    /// Returns (group, task, locality), or `None` if nothing fits (the
    /// container is then released).
    pub(crate) fn assign(
        &mut self,
        spec: &AppSpec,
        priority: weft_model::Priority,
        resource: Resource,
        node: u32,
        rack_of: &[u32],
    ) -> Option<(u16, u32, TaskLocality)> {
        let rack = rack_of[node as usize];
        let gi = spec.groups.iter().zip(&self.groups).position(|(g, run)| {
            run.active && run.pending > 0 && g.priority == priority && g.size.fits_in(&resource)
        })?;
        let g = &spec.groups[gi];
        let run = &mut self.groups[gi];
        let task = run.pick(node, rack)?;
        run.take(g, task, rack_of);
        let replicas = g.replicas(task as usize);
        let locality = if replicas.is_empty() {
            TaskLocality::NoData
        } else if replicas.contains(&node) {
            TaskLocality::NodeLocal
        } else if replicas.iter().any(|r| rack_of[*r as usize] == rack) {
            TaskLocality::RackLocal
        } else {
            TaskLocality::OffRack
        };
        Some((gi as u16, task, locality))
    }

    /// A task finished.
    pub(crate) fn task_done(&mut self, group: u16, task: u32) {
        let run = &mut self.groups[group as usize];
        run.states[task as usize] = TaskState::Done;
        run.done += 1;
    }

    /// A task's container ended without finishing it: ask again.
    pub(crate) fn task_lost(&mut self, spec: &AppSpec, group: u16, task: u32, rack_of: &[u32]) {
        let g = &spec.groups[group as usize];
        self.groups[group as usize].add_pending(g, task, rack_of);
    }

    /// A new attempt starts: running tasks are lost (the core stopped their
    /// containers), and everything outstanding is asked again from scratch.
    pub(crate) fn restart(&mut self, spec: &AppSpec, rack_of: &[u32]) {
        let running = std::mem::take(&mut self.running);
        for (_, (g, t, _)) in running {
            self.record.lost += 1;
            self.task_lost(spec, g, t, rack_of);
        }
        self.releases.clear();
        self.am_container = None;
        for run in &mut self.groups {
            if run.active {
                run.mark_all_dirty();
            }
        }
    }

    /// Tasks finished over tasks in total, for the AM's progress report.
    pub(crate) fn progress(&self) -> f32 {
        let total: usize = self.groups.iter().map(|g| g.states.len()).sum();
        let done: u32 = self.groups.iter().map(|g| g.done).sum();
        if total == 0 {
            1.0
        } else {
            done as f32 / total as f32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_model::{AppPriority, Duration, Priority, Time};

    fn spec() -> AppSpec {
        let mut maps = TaskGroup::new(0, Priority(20), Resource::new(1024, 1));
        maps.push(Duration::from_secs(1), &[0, 1, 2]);
        maps.push(Duration::from_secs(1), &[2, 3, 4]);
        maps.push(Duration::from_secs(1), &[]);
        let mut reduces = TaskGroup::new(1, Priority(10), Resource::new(2048, 1));
        reduces.push(Duration::from_secs(1), &[]);
        AppSpec {
            name: "a".into(),
            arrival: Time::ZERO,
            user: "u".into(),
            queue: None,
            priority: AppPriority(0),
            am: None,
            groups: vec![maps, reduces],
            lifetime: None,
        }
    }

    fn render(asks: &[Ask]) -> Vec<String> {
        asks.iter()
            .map(|a| format!("{}@{}x{}", a.priority, a.resource_name, a.num_containers))
            .collect()
    }

    #[test]
    fn asks_follow_tasks_and_containers_go_to_the_most_local_task() {
        let spec = spec();
        // Nodes 0-2 in rack 0, 3-5 in rack 1.
        let rack_of = [0, 0, 0, 1, 1, 1];
        let hosts: Vec<String> = (0..6).map(|i| format!("h{i}")).collect();
        let racks = vec!["/r0".to_owned(), "/r1".to_owned()];
        let names = Names {
            hosts: &hosts,
            racks: &racks,
        };
        let mut am = AmSim::new(&spec);
        assert!(am.advance_stage(&spec, &rack_of));
        assert_eq!(
            render(&am.collect_asks(&spec, &names)),
            [
                "20@h0x1", "20@h1x1", "20@h2x2", "20@h3x1", "20@h4x1", "20@/r0x2", "20@/r1x1",
                "20@*x3"
            ]
        );
        assert!(!am.has_changes());
        // A container on h4 runs the task with a replica there.
        let (g, t, loc) = am
            .assign(&spec, Priority(20), Resource::new(1024, 1), 4, &rack_of)
            .unwrap();
        assert_eq!((g, t, loc), (0, 1, TaskLocality::NodeLocal));
        assert_eq!(
            render(&am.collect_asks(&spec, &names)),
            [
                "20@h2x1", "20@h3x0", "20@h4x0", "20@/r0x1", "20@/r1x0", "20@*x2"
            ]
        );
        // A container on h5 (rack 1, no replica left there) takes any task.
        let (_, t, loc) = am
            .assign(&spec, Priority(20), Resource::new(1024, 1), 5, &rack_of)
            .unwrap();
        assert_eq!((t, loc), (2, TaskLocality::NoData));
        // A reduce-sized container at the map priority does not fit... a map does.
        assert!(
            am.assign(&spec, Priority(10), Resource::new(2048, 1), 0, &rack_of)
                .is_none()
        );
        let (_, t, loc) = am
            .assign(&spec, Priority(20), Resource::new(1024, 1), 1, &rack_of)
            .unwrap();
        assert_eq!((t, loc), (0, TaskLocality::NodeLocal));
        assert!(
            am.assign(&spec, Priority(20), Resource::new(1024, 1), 1, &rack_of)
                .is_none()
        );
        for t in 0..3 {
            am.task_done(0, t);
        }
        assert!(
            am.advance_stage(&spec, &rack_of),
            "reduces start after the maps"
        );
        assert_eq!(
            render(&am.collect_asks(&spec, &names))[..],
            [
                "20@h0x0", "20@h1x0", "20@h2x0", "20@/r0x0", "20@*x0", "10@*x1"
            ][..]
        );
        assert!(!am.all_done());
        am.task_done(1, 0);
        assert!(am.all_done());
        assert!((am.progress() - 1.0).abs() < f32::EPSILON);
    }
}
