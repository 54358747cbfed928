//! The discrete-event engine: one event queue on virtual time, emulated
//! nodes and AMs around the real `weft_core::ResourceManager`, driven through
//! exactly the inputs the service feeds it (node registration and heartbeats
//! with container statuses, app submission, AM register / allocate / finish,
//! ticks at the core's deadlines), jumping straight from one event or
//! deadline to the next.
//!
//! Speed comes from never calling the core when the call provably decides
//! nothing: a node with nothing to report whose heartbeat
//! `heartbeat_would_schedule` says is idle goes dormant (it still beats for
//! liveness, on task completions, and when the engine wakes it), and a sweep
//! walks the dormant nodes in heartbeat-phase order only while some app has
//! work for them, exactly as their skipped heartbeats would have arrived. AMs
//! with nothing to send and nothing waiting for them skip their heartbeats
//! likewise. Recording is `metrics`', the report `report`'s.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use weft_core::{
    AllocateError, AllocateRequest, AppError, AppState, CoreInvariantViolation, Drain, Event,
    FinalStatus, Input, NodeError, NodeHeartbeat, NodeRegistration, NodeState, Output, Reply,
    ResourceManager, Submission, exit_status,
};
use weft_model::{AppId, Duration, NodeId, Resource, Time};

use crate::am::{AmSim, AmStatus, Ending, Names};
use crate::metrics::{MAX_SAMPLES, Recorder};
use crate::nm::{NodeMode, NodeSim};
use crate::report::{Report, RunStats};
use crate::rng::SimRng;
use crate::scenario::{NodeChoice, Scenario, ScenarioEvent};
use crate::workload::NodeSpec;

/// How a run is checked and bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    /// Check the core's invariants after every this many core calls, and at
    /// the end (0: never; default 1 in debug builds and tests, 0 in release).
    /// Broken books stay broken, so a sparser check still catches a bug,
    /// only later than the input that caused it.
    pub check_every: u32,
    /// Stop, reporting the run as stalled, when apps remain but no task has
    /// run and nothing has been allocated for this long (default 1 h).
    pub stall_timeout: Duration,
    /// Never run past this virtual time (default 366 days).
    pub max_time: Time,
    /// Skip node and AM heartbeats that provably decide nothing (default
    /// true). Turning it off changes no decision, only the speed: a test
    /// holds the engine to that.
    pub skip_idle_heartbeats: bool,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            check_every: u32::from(cfg!(debug_assertions)),
            stall_timeout: Duration::from_secs(3600),
            max_time: Time::ZERO + Duration::from_secs(366 * 86_400),
            skip_idle_heartbeats: true,
        }
    }
}

/// Where a run is, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Virtual time now.
    pub now: Time,
    /// The scenario's end, or its last arrival.
    pub horizon: Time,
    /// Apps that ended.
    pub apps_ended: usize,
    /// Apps in the scenario.
    pub apps_total: usize,
}

/// Why a run failed: always a bug (in the core or in the simulator), never
/// the scenario's fault (bad scenarios fail to load).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The core's books broke.
    #[error("at {at}, after {after}: {violation}")]
    Invariant {
        /// Virtual time.
        at: Time,
        /// The input that broke them.
        after: String,
        /// What is broken.
        violation: CoreInvariantViolation,
    },
    /// The core refused an input the simulator should never send.
    #[error("at {at}: the core refused {what}: {why}")]
    Refused {
        /// Virtual time.
        at: Time,
        /// The input.
        what: String,
        /// The core's reason.
        why: String,
    },
}

/// Runs a scenario to its end and reports.
pub fn simulate(scenario: &Scenario, options: SimOptions) -> Result<Report, SimError> {
    Engine::new(scenario, options).run(&mut |_| {})
}

/// Runs a scenario, calling `progress` now and then.
pub fn simulate_with_progress(
    scenario: &Scenario,
    options: SimOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, SimError> {
    Engine::new(scenario, options).run(progress)
}

/// What an event-queue entry does. Entries that were superseded (a node's or
/// AM's heartbeat moved, a sweep restarted) are recognised and dropped when
/// they come up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum What {
    ScenarioEvent(u32),
    Arrival(u32),
    AmRegister(u32),
    NodeHeartbeat(u32),
    /// A node's last heartbeat before a `lose-nodes` event silences it.
    FinalBeat(u32),
    Sweep(u32),
    AmHeartbeat(u32),
    Sample,
}

/// Ordered by time, then kind (scenario events first, samples last, so a
/// sample sees everything that happened at its instant), then node (or AM)
/// index, then insertion. Heartbeats at one instant thus run in index order
/// whether they were scheduled long ago or just now, which is what lets a
/// skipped heartbeat be told apart from one still to come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    at: Time,
    class: u8,
    sub: u32,
    seq: u64,
    what: What,
}

fn class_of(what: What) -> u8 {
    match what {
        What::ScenarioEvent(_) => 0,
        What::Arrival(_) => 1,
        What::AmRegister(_) => 2,
        What::NodeHeartbeat(_) | What::FinalBeat(_) | What::Sweep(_) => 3,
        What::AmHeartbeat(_) => 4,
        What::Sample => 9,
    }
}

/// Class of node heartbeats (and sweep visits) in the event order.
const NODE_CLASS: u8 = 3;
/// Class of AM heartbeats.
const AM_CLASS: u8 = 4;

fn sub_of(what: What) -> u32 {
    match what {
        What::NodeHeartbeat(i) | What::FinalBeat(i) | What::Sweep(i) | What::AmHeartbeat(i) => i,
        _ => 0,
    }
}

struct Engine<'s> {
    sc: &'s Scenario,
    options: SimOptions,
    rm: ResourceManager,
    now: Time,
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
    nodes: Vec<NodeSim>,
    node_by_id: BTreeMap<NodeId, u32>,
    hosts: Vec<String>,
    racks: Vec<String>,
    rack_of: Vec<u32>,
    /// Dormant nodes with room for the smallest container, by (phase, node):
    /// the ones a sweep visits.
    dormant_free: BTreeSet<(u64, u32)>,
    /// The sweep's next visit (time, node), if one is under way.
    sweep: Option<(Time, u32)>,
    apps: Vec<AmSim>,
    app_by_id: BTreeMap<AppId, u32>,
    schedulable: bool,
    recorder: Recorder,
    stats: RunStats,
    phases: SimRng,
    apps_ended: usize,
    events_left: usize,
    last_activity: Time,
    /// The last tick handed to the core (a deadline that does not move is not ticked twice).
    last_tick: Option<Time>,
    /// (class, index) of what is being handled at `now`: slots at `now`
    /// ordered before it have passed.
    position: (u8, u32),
    stalled: Option<String>,
    /// Scenario events that changed nothing, with why (`kill` or `move` of
    /// an app not yet submitted or already ended, a move the core refused,
    /// a drain or recommission of a node that cannot take it).
    refused_events: Vec<String>,
    min_allocation: Resource,
}

impl<'s> Engine<'s> {
    fn new(sc: &'s Scenario, options: SimOptions) -> Engine<'s> {
        let rm = ResourceManager::new(sc.alloc.clone(), sc.settings.clone(), Time::ZERO);
        let root = SimRng::new(sc.seed);
        Engine {
            sc,
            options,
            min_allocation: sc.settings.scheduler.min_allocation(),
            rm,
            now: Time::ZERO,
            heap: BinaryHeap::new(),
            seq: 0,
            nodes: Vec::new(),
            node_by_id: BTreeMap::new(),
            hosts: Vec::new(),
            racks: Vec::new(),
            rack_of: Vec::new(),
            dormant_free: BTreeSet::new(),
            sweep: None,
            apps: sc.apps.iter().map(AmSim::new).collect(),
            app_by_id: BTreeMap::new(),
            schedulable: false,
            recorder: Recorder::new(sc.sample_interval, MAX_SAMPLES),
            stats: RunStats::default(),
            phases: root.fork("heartbeat-phases", 0),
            apps_ended: 0,
            events_left: sc.events.len(),
            last_activity: Time::ZERO,
            last_tick: None,
            position: (0, 0),
            stalled: None,
            refused_events: Vec::new(),
        }
    }

    fn push(&mut self, at: Time, what: What) {
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            at,
            class: class_of(what),
            sub: sub_of(what),
            seq: self.seq,
            what,
        }));
    }

    fn run(mut self, progress: &mut dyn FnMut(Progress)) -> Result<Report, SimError> {
        self.run_to_end(progress)?;
        Ok(self.into_report())
    }

    /// Runs until the scenario is done, its end, or a stall; the core is
    /// left as the run leaves it (tests read it).
    fn run_to_end(&mut self, progress: &mut dyn FnMut(Progress)) -> Result<(), SimError> {
        let horizon = self.sc.end.unwrap_or_else(|| {
            self.sc
                .apps
                .last()
                .map_or(Time::ZERO, |a| a.arrival)
                .max(self.sc.events.last().map_or(Time::ZERO, |e| e.at))
        });
        let initial: Vec<NodeSpec> = self.sc.nodes.clone();
        for spec in &initial {
            self.add_node(spec)?;
        }
        for (i, a) in self.sc.apps.iter().enumerate() {
            self.push(a.arrival, What::Arrival(i as u32));
        }
        for (i, e) in self.sc.events.iter().enumerate() {
            self.push(e.at, What::ScenarioEvent(i as u32));
        }
        self.schedule_final_beats();
        self.push(Time::ZERO, What::Sample);
        let mut steps: u64 = 0;
        loop {
            if self.finished() {
                break;
            }
            let next = self.heap.peek().map(|Reverse(e)| e.at);
            let deadline = self
                .rm
                .next_deadline()
                .filter(|d| self.last_tick.is_none_or(|last| *d > last));
            let take_deadline = match (deadline, next) {
                (Some(d), Some(n)) => d <= n,
                (Some(_), None) => true,
                (None, _) => false,
            };
            let at = if take_deadline { deadline } else { next };
            let Some(at) = at else { break };
            if self.sc.end.is_some_and(|end| at > end) || at > self.options.max_time {
                break;
            }
            self.now = at.max(self.now);
            self.position = (0, 0);
            if take_deadline {
                self.stats.ticks += 1;
                self.last_tick = Some(self.now);
                let out = self.rm.handle(self.now, Input::Tick);
                self.absorb(out, "tick")?;
            } else {
                let Reverse(entry) = self.heap.pop().expect("peeked");
                self.stats.events += 1;
                self.position = (entry.class, entry.sub);
                self.dispatch(entry)?;
            }
            steps += 1;
            if steps.is_multiple_of(16_384) {
                progress(Progress {
                    now: self.now,
                    horizon,
                    apps_ended: self.apps_ended,
                    apps_total: self.apps.len(),
                });
            }
            if self.check_stall() {
                break;
            }
        }
        if let Some(end) = self.sc.end {
            self.now = self.now.max(end.min(self.options.max_time));
        }
        if self.options.check_every > 0
            && let Err(violation) = self.rm.check_invariants()
        {
            return Err(SimError::Invariant {
                at: self.now,
                after: "the run".to_owned(),
                violation,
            });
        }
        self.recorder.sample(self.now, &self.rm);
        progress(Progress {
            now: self.now,
            horizon,
            apps_ended: self.apps_ended,
            apps_total: self.apps.len(),
        });
        Ok(())
    }

    fn into_report(self) -> Report {
        Report::build(
            self.sc,
            self.now,
            &self.apps,
            self.recorder,
            self.stats,
            self.stalled,
            self.refused_events,
        )
    }

    fn finished(&self) -> bool {
        self.sc.end.is_none() && self.apps_ended == self.apps.len() && self.events_left == 0
    }

    fn check_stall(&mut self) -> bool {
        if self.apps_ended == self.apps.len()
            || self.events_left > 0
            || self.now.since(self.last_activity) < self.options.stall_timeout
        {
            return false;
        }
        let tasks_running = self
            .nodes
            .iter()
            .any(|n| n.is_up() && n.containers.iter().any(|c| c.end.is_some()));
        if tasks_running {
            return false;
        }
        // Apps still to arrive are not stuck.
        if self.apps.iter().any(|a| a.status == AmStatus::Waiting) {
            return false;
        }
        let stuck: Vec<&str> = self
            .apps
            .iter()
            .zip(&self.sc.apps)
            .filter(|(a, _)| a.status != AmStatus::Ended)
            .map(|(_, s)| s.name.as_str())
            .take(5)
            .collect();
        // Name the likelier cause: a cluster left with no node at all (every
        // node lost or decommissioned) cannot run anything, whatever is asked.
        let why = if self.rm.tree().cluster_capacity() == Resource::ZERO {
            "the cluster has no nodes left (all lost or decommissioned)"
        } else if !self.nodes.iter().any(|n| n.is_up() && !n.draining) {
            // A drain that waits for apps which need room to finish never
            // ends on its own.
            "every node left is draining, so nothing new can be placed (a drain without a timeout \
             waits for its apps)"
        } else {
            "they probably ask for more than any node or queue can give"
        };
        self.stalled = Some(format!(
            "no task ran and nothing was allocated for {} while {} app(s) remained (e.g. {}); {why}",
            self.options.stall_timeout,
            self.apps.len() - self.apps_ended,
            stuck.join(", ")
        ));
        true
    }

    fn dispatch(&mut self, e: Entry) -> Result<(), SimError> {
        match e.what {
            What::ScenarioEvent(i) => {
                self.events_left -= 1;
                self.scenario_event(i as usize)
            }
            What::Arrival(a) => self.arrive(a),
            What::AmRegister(a) => {
                if self.apps[a as usize].register_at == e.at {
                    self.register_am(a)
                } else {
                    Ok(())
                }
            }
            What::NodeHeartbeat(n) => {
                if self.nodes[n as usize].next_hb == e.at {
                    self.node_heartbeat(n)
                } else {
                    Ok(())
                }
            }
            What::FinalBeat(n) => {
                let node = &self.nodes[n as usize];
                if node.is_up() && node.last_hb.is_none_or(|l| l < e.at) {
                    self.node_heartbeat(n)
                } else {
                    Ok(())
                }
            }
            What::Sweep(n) => {
                if self.sweep != Some((e.at, n)) {
                    return Ok(());
                }
                self.sweep = None;
                let node = &self.nodes[n as usize];
                if node.mode == NodeMode::Dormant && node.last_hb.is_none_or(|l| l < e.at) {
                    self.node_heartbeat(n)?;
                }
                self.continue_sweep(n);
                Ok(())
            }
            What::AmHeartbeat(a) => {
                if self.apps[a as usize].next_hb == e.at {
                    self.am_heartbeat(a)
                } else {
                    Ok(())
                }
            }
            What::Sample => {
                self.recorder.sample(self.now, &self.rm);
                // The recorder widens its interval to bound its memory on long runs.
                self.push(self.now + self.recorder.interval(), What::Sample);
                Ok(())
            }
        }
    }

    /// Hands an input to the core and absorbs what it decided.
    fn call(&mut self, input: Input, what: &str) -> Result<Reply, SimError> {
        let out = self.rm.handle(self.now, input);
        self.absorb(out, what)
    }

    fn absorb(&mut self, out: Output, what: &str) -> Result<Reply, SimError> {
        self.stats.core_calls += 1;
        if self.options.check_every > 0
            && self
                .stats
                .core_calls
                .is_multiple_of(u64::from(self.options.check_every))
            && let Err(violation) = self.rm.check_invariants()
        {
            return Err(SimError::Invariant {
                at: self.now,
                after: what.to_owned(),
                violation,
            });
        }
        let mut wake_all_ams = false;
        let mut capacity_changed = false;
        for event in out.events {
            match event {
                Event::ContainerAllocated {
                    container,
                    node,
                    resource,
                    is_am,
                    ..
                } => {
                    self.last_activity = self.now;
                    if let Some(n) = self.node_by_id.get(&node).copied() {
                        let node = &mut self.nodes[n as usize];
                        node.allocated += resource;
                        if !self.min_allocation.fits_in(&node.room()) {
                            self.dormant_free.remove(&(node.phase, n));
                        }
                    }
                    if !is_am {
                        self.app_news(container.app());
                    }
                }
                Event::ContainerCompleted {
                    container,
                    node,
                    queue,
                    resource,
                    exit_status: status,
                    ..
                } => {
                    self.last_activity = self.now;
                    if status == exit_status::PREEMPTED {
                        self.recorder.kill(self.now, container, queue.as_str());
                    }
                    if let Some(n) = self.node_by_id.get(&node).copied() {
                        let node = &mut self.nodes[n as usize];
                        node.allocated -= resource;
                        self.node_freed(n);
                    }
                    self.app_news(container.app());
                }
                Event::ContainerStopOrdered {
                    container, node, ..
                } => {
                    if let Some(n) = self.node_by_id.get(&node).copied() {
                        self.nodes[n as usize].stop(&container);
                        self.node_freed(n);
                    }
                }
                Event::AppStateChanged {
                    app,
                    state,
                    diagnostics,
                    ..
                } => {
                    if let Some(a) = self.app_by_id.get(&app).copied() {
                        match state {
                            AppState::Finished => self.end_app(a, Ending::Finished),
                            AppState::Killed => self.end_app(a, Ending::Killed),
                            AppState::Failed => self.end_app(a, Ending::Failed(diagnostics)),
                            AppState::Rejected => self.end_app(a, Ending::Rejected(diagnostics)),
                            AppState::Accepted | AppState::WaitingForLimit | AppState::Running => {}
                        }
                    }
                }
                Event::AttemptFinished {
                    app, outcome: None, ..
                } => {
                    // The AM container died: the core starts another attempt.
                    if let Some(a) = self.app_by_id.get(&app).copied() {
                        let sc = self.sc;
                        let sim = &mut self.apps[a as usize];
                        if sim.status != AmStatus::Ended {
                            sim.restart(&sc.apps[a as usize], &self.rack_of);
                            sim.status = AmStatus::Accepted;
                            sim.next_hb = Time::MAX;
                        }
                    }
                }
                Event::NodeAdded { .. } => capacity_changed = true,
                Event::NodeStateChanged { node, state, .. } => {
                    capacity_changed = true;
                    if let Some(n) = self.node_by_id.get(&node).copied() {
                        match state {
                            // A draining node keeps heartbeating and running
                            // its tasks; it only has no room to offer.
                            NodeState::Decommissioning => {
                                let sim = &mut self.nodes[n as usize];
                                sim.draining = true;
                                self.dormant_free.remove(&(sim.phase, n));
                            }
                            // Recommissioned: its room is back, so it may have
                            // work at its next heartbeat.
                            NodeState::Running => {
                                self.nodes[n as usize].draining = false;
                                self.activate(n);
                            }
                            NodeState::Lost | NodeState::Shutdown | NodeState::Decommissioned => {
                                self.node_gone(n);
                            }
                            // Simulated nodes report no health: never reached.
                            NodeState::Unhealthy => {}
                        }
                    }
                }
                Event::AttemptFinished { .. }
                | Event::ContainerReserved { .. }
                | Event::ReservationReleased { .. }
                | Event::QueuesChanged { .. }
                | Event::Updated { .. }
                | Event::PlacementFailed { .. } => {}
                // Kinds added after this simulator was written (preemption's
                // among them): count them, and let every AM look for news
                // such as preemption messages.
                other => {
                    self.recorder.other_event(&format!("{other:?}"));
                    wake_all_ams = true;
                }
            }
        }
        if wake_all_ams {
            for a in 0..self.apps.len() as u32 {
                if self.apps[a as usize].status == AmStatus::Registered {
                    self.apps[a as usize].news = true;
                    self.wake_am(a);
                }
            }
        }
        if capacity_changed {
            // Every node may have work now; a membership change is rare.
            let dormant: Vec<u32> = self.dormant_free.iter().map(|(_, n)| *n).collect();
            for n in dormant {
                self.activate(n);
            }
        }
        let schedulable = self.rm.tree().has_schedulable_apps();
        if schedulable && !self.schedulable {
            self.start_sweep();
        }
        self.schedulable = schedulable;
        Ok(out.reply)
    }

    // ----- nodes -----

    fn add_node(&mut self, spec: &NodeSpec) -> Result<(), SimError> {
        let id = NodeId::new(&spec.name, 8041).expect("node names are checked when loading");
        let rack = match self.racks.iter().position(|r| *r == spec.rack) {
            Some(r) => r as u32,
            None => {
                self.racks.push(spec.rack.clone());
                self.racks.len() as u32 - 1
            }
        };
        let phase = self.phases.below(self.sc.timing.nm_heartbeat.as_millis());
        let n = self.nodes.len() as u32;
        let mut sim = NodeSim::new(id.clone(), spec.capability, phase);
        sim.last_core_hb = self.now;
        self.nodes.push(sim);
        self.node_by_id.insert(id.clone(), n);
        self.hosts.push(spec.name.clone());
        self.rack_of.push(rack);
        let reply = self.call(
            Input::NodeRegistered(NodeRegistration {
                node: id,
                rack: spec.rack.clone(),
                capability: spec.capability,
                http_address: format!("{}:8042", spec.name),
                running: Vec::new(),
            }),
            "node registration",
        )?;
        if let Reply::NodeRegistered(Err(e)) = reply {
            return Err(SimError::Refused {
                at: self.now,
                what: format!("registering node {}", spec.name),
                why: e.to_string(),
            });
        }
        // Its first heartbeat: the core learns the cluster's size on it.
        self.activate(n);
        Ok(())
    }

    /// Makes a node heartbeat at its next tick.
    fn activate(&mut self, n: u32) {
        let interval = self.sc.timing.nm_heartbeat;
        let node = &mut self.nodes[n as usize];
        if !node.is_up() {
            return;
        }
        self.dormant_free.remove(&(node.phase, n));
        node.mode = NodeMode::Active;
        let mut t = node.next_tick(self.now, interval);
        if t == self.now && (NODE_CLASS, n) <= self.position {
            // Its heartbeat at this instant has passed (skipped).
            t += interval;
        }
        if node.next_hb > t {
            node.next_hb = t;
            self.push(t, What::NodeHeartbeat(n));
        }
    }

    /// Resources on a node came free: it may have work now.
    fn node_freed(&mut self, n: u32) {
        let node = &self.nodes[n as usize];
        if node.mode != NodeMode::Dormant {
            return;
        }
        if self.rm.heartbeat_would_schedule(&node.id) {
            self.activate(n);
        } else if self.min_allocation.fits_in(&node.room()) {
            self.dormant_free.insert((node.phase, n));
        }
    }

    fn node_heartbeat(&mut self, n: u32) -> Result<(), SimError> {
        let now = self.now;
        let interval = self.sc.timing.nm_heartbeat;
        let expiry = self.sc.settings.scheduler.nm_liveness_expiry;
        let node = &mut self.nodes[n as usize];
        if !node.is_up() {
            return Ok(());
        }
        node.next_hb = Time::MAX;
        node.last_hb = Some(now);
        let statuses = node.take_statuses(now);
        let keepalive_due = now.since(node.last_core_hb) + interval.saturating_mul(3) >= expiry;
        let final_beat = node.final_beat == Some(now);
        let id = node.id.clone();
        if self.options.skip_idle_heartbeats
            && statuses.is_empty()
            && !keepalive_due
            && !final_beat
            && !self.rm.heartbeat_would_schedule(&id)
        {
            self.stats.heartbeats_skipped += 1;
            self.go_dormant(n);
            return Ok(());
        }
        self.nodes[n as usize].last_core_hb = now;
        self.stats.heartbeats += 1;
        let reply = self.call(
            Input::NodeHeartbeat(NodeHeartbeat {
                node: id.clone(),
                statuses,
                // Simulated nodes are never unhealthy.
                unhealthy: None,
            }),
            "node heartbeat",
        )?;
        match reply {
            Reply::NodeHeartbeat(Ok(hb)) => {
                for c in hb.allocated {
                    if c.is_am {
                        self.am_container_allocated(n, c.container);
                    }
                }
            }
            // The core already told of it (`NodeStateChanged`), which
            // stopped the node; a node that still hears this stops for
            // good, as a real one shuts down rather than registering again.
            Reply::NodeHeartbeat(Err(NodeError::Decommissioned(_))) => {
                self.node_gone(n);
                return Ok(());
            }
            Reply::NodeHeartbeat(Err(e)) => {
                return Err(SimError::Refused {
                    at: now,
                    what: format!("a heartbeat from {id}"),
                    why: e.to_string(),
                });
            }
            _ => {}
        }
        let node = &self.nodes[n as usize];
        if !node.is_up() {
            return Ok(());
        }
        if !self.options.skip_idle_heartbeats
            || node.has_unreported()
            || self.rm.heartbeat_would_schedule(&node.id)
        {
            let node = &mut self.nodes[n as usize];
            node.mode = NodeMode::Active;
            let t = node.next_tick(now, interval);
            node.next_hb = t;
            self.push(t, What::NodeHeartbeat(n));
        } else {
            self.go_dormant(n);
        }
        Ok(())
    }

    /// Makes each node a `lose-nodes` event silences send its last heartbeat
    /// before the event, idle or not. The RM declares a silent node lost a
    /// liveness expiry after the last heartbeat it heard, so that heartbeat
    /// must be the one it would hear if none were skipped; otherwise the
    /// node (and every container on it) would be lost earlier, by up to the
    /// expiry, when idle heartbeats are skipped.
    fn schedule_final_beats(&mut self) {
        let interval = self.sc.timing.nm_heartbeat.as_millis();
        for e in &self.sc.events {
            let ScenarioEvent::LoseNodes(list) = &e.event else {
                continue;
            };
            for &n in list {
                let Some(node) = self.nodes.get_mut(n as usize) else {
                    continue;
                };
                // Scenario events come before heartbeats at one instant, so
                // a tick at the event's own instant is never heard.
                let at = e.at.as_millis();
                if at <= node.phase {
                    continue;
                }
                let last =
                    Time::from_millis(node.phase + (at - 1 - node.phase) / interval * interval);
                if node.final_beat.is_none_or(|t| last < t) {
                    node.final_beat = Some(last);
                }
            }
        }
        for n in 0..self.nodes.len() as u32 {
            if let Some(at) = self.nodes[n as usize].final_beat {
                self.push(at, What::FinalBeat(n));
            }
        }
    }

    /// The node left the RM (lost, shut down, decommissioned): it stops
    /// heartbeating for good and its containers die with it. It never
    /// registers again.
    fn node_gone(&mut self, n: u32) {
        let sim = &mut self.nodes[n as usize];
        self.dormant_free.remove(&(sim.phase, n));
        sim.mode = NodeMode::Gone;
        sim.next_hb = Time::MAX;
        sim.lose_all();
    }

    fn go_dormant(&mut self, n: u32) {
        let interval = self.sc.timing.nm_heartbeat;
        let expiry = self.sc.settings.scheduler.nm_liveness_expiry;
        let node = &mut self.nodes[n as usize];
        node.mode = NodeMode::Dormant;
        // Beat for liveness well before the RM would declare the node lost.
        let keepalive_gap = if expiry.as_millis() > interval.as_millis() * 4 {
            Duration::from_millis(expiry.as_millis() - interval.as_millis() * 3)
        } else {
            interval
        };
        let mut next = node.next_tick(node.last_core_hb + keepalive_gap, interval);
        if let Some(end) = node.next_completion() {
            next = next.min(node.next_tick(end, interval));
        }
        node.next_hb = next;
        let fits = self.min_allocation.fits_in(&node.room());
        let key = (node.phase, n);
        self.push(next, What::NodeHeartbeat(n));
        if fits {
            self.dormant_free.insert(key);
        } else {
            self.dormant_free.remove(&key);
        }
    }

    /// Some app has work: visit dormant nodes with room, in heartbeat order.
    fn start_sweep(&mut self) {
        if self.sweep.is_some() || self.dormant_free.is_empty() {
            return;
        }
        let interval = self.sc.timing.nm_heartbeat.as_millis();
        let pos = self.now.as_millis() % interval;
        let base = self.now.as_millis() - pos;
        // Heartbeats at this instant ordered before what is being handled
        // have passed.
        let from = match self.position {
            (class, _) if class < NODE_CLASS => (pos, 0),
            (NODE_CLASS, n) => (pos, n + 1),
            _ => (pos + 1, 0),
        };
        self.schedule_sweep(base, from);
    }

    /// After visiting `n`, go on to the next dormant node while apps have work.
    fn continue_sweep(&mut self, n: u32) {
        if !self.rm.tree().has_schedulable_apps() || self.dormant_free.is_empty() {
            return;
        }
        // The visit to `n` was at its tick: the cycle began `phase` earlier.
        let phase = self.nodes[n as usize].phase;
        let base = self.now.as_millis() - phase;
        self.schedule_sweep(base, (phase, n + 1));
    }

    /// Schedules the sweep's visit to the first dormant node at or after
    /// `from` in (phase, node) order, in the cycle starting at `base`,
    /// wrapping to the next cycle.
    fn schedule_sweep(&mut self, base: u64, from: (u64, u32)) {
        let interval = self.sc.timing.nm_heartbeat.as_millis();
        let now = self.now.as_millis();
        let candidates = self
            .dormant_free
            .range(from..)
            .map(|(p, n)| (base + p, *n))
            .chain(
                self.dormant_free
                    .iter()
                    .map(|(p, n)| (base + interval + p, *n)),
            );
        for (t, n) in candidates {
            if t < now {
                continue;
            }
            let last = self.nodes[n as usize].last_hb;
            if last.is_some_and(|l| l.as_millis() >= t) {
                continue;
            }
            let at = Time::from_millis(t);
            self.sweep = Some((at, n));
            self.push(at, What::Sweep(n));
            return;
        }
    }

    // ----- apps -----

    fn app_news(&mut self, app: AppId) {
        if let Some(a) = self.app_by_id.get(&app).copied() {
            let sim = &mut self.apps[a as usize];
            if sim.status == AmStatus::Registered {
                sim.news = true;
                self.wake_am(a);
            }
        }
    }

    /// Makes an AM heartbeat at its next tick.
    fn wake_am(&mut self, a: u32) {
        self.wake_am_from(a, Time::ZERO);
    }

    /// An idle AM still calls often enough for the RM's AM liveness monitor
    /// (`yarn.am.liveness-monitor.expiry-interval-ms`) to keep its attempt,
    /// as a real AM's heartbeats would: at its first tick a few intervals
    /// before the expiry. The call carries nothing, so it decides nothing.
    fn keep_am_alive(&mut self, a: u32) {
        let interval = self.sc.timing.am_heartbeat.as_millis();
        let expiry = self.sc.settings.scheduler.am_liveness_expiry.as_millis();
        let gap = if expiry > interval * 4 {
            expiry - interval * 3
        } else {
            interval
        };
        let Some(last) = self.apps[a as usize].last_hb else {
            return;
        };
        self.wake_am_from(a, Time::from_millis(last.as_millis().saturating_add(gap)));
    }

    /// Makes an AM heartbeat at its first tick at or after `from` (and after
    /// now and its last heartbeat).
    fn wake_am_from(&mut self, a: u32, from: Time) {
        let interval = self.sc.timing.am_heartbeat.as_millis();
        let sim = &mut self.apps[a as usize];
        let floor = match sim.last_hb {
            Some(l) => self.now.as_millis().max(l.as_millis() + 1),
            None => self.now.as_millis(),
        }
        .max(from.as_millis());
        let k = if floor <= sim.phase {
            0
        } else {
            (floor - sim.phase).div_ceil(interval)
        };
        let mut t = Time::from_millis(sim.phase + k * interval);
        if t == self.now && (AM_CLASS, a) <= self.position {
            // Its heartbeat at this instant has passed (skipped).
            t = Time::from_millis(t.as_millis() + interval);
        }
        if sim.next_hb > t {
            sim.next_hb = t;
            self.push(t, What::AmHeartbeat(a));
        }
    }

    fn arrive(&mut self, a: u32) -> Result<(), SimError> {
        self.last_activity = self.now;
        let sc = self.sc;
        let spec = &sc.apps[a as usize];
        let Reply::NewApplication(new) = self.call(Input::NewApplication, "new application")?
        else {
            unreachable!("the core answers NewApplication with an id");
        };
        self.app_by_id.insert(new.app, a);
        let sim = &mut self.apps[a as usize];
        sim.record.id = Some(new.app);
        sim.record.submit = Some(self.now);
        sim.status = AmStatus::Accepted;
        let reply = self.call(
            Input::AppSubmitted(Submission {
                app: new.app,
                user: spec.user.clone(),
                groups: Vec::new(),
                queue: spec.queue.clone(),
                priority: spec.priority,
                am_resource: spec.am,
                name: spec.name.clone(),
                app_type: "MAPREDUCE".to_owned(),
                tags: Vec::new(),
                max_attempts: None,
                lifetime: spec.lifetime,
            }),
            "app submission",
        )?;
        match reply {
            Reply::Submitted(Ok(r)) => {
                self.apps[a as usize].record.queue = Some(r.queue.to_string());
                if spec.am.is_none() {
                    // An unmanaged AM runs outside the cluster and registers at once.
                    self.register_am(a)?;
                }
            }
            Reply::Submitted(Err(e)) => self.end_app(a, Ending::Rejected(e.to_string())),
            _ => {}
        }
        Ok(())
    }

    fn am_container_allocated(&mut self, n: u32, container: weft_model::ContainerId) {
        let Some(a) = self.app_by_id.get(&container.app()).copied() else {
            return;
        };
        self.nodes[n as usize].launch(container, None);
        let sim = &mut self.apps[a as usize];
        if sim.status != AmStatus::Accepted {
            return;
        }
        let at = self.now + self.sc.timing.am_launch;
        sim.status = AmStatus::Launching;
        sim.am_container = Some((container, n));
        sim.register_at = at;
        sim.record.am_start.get_or_insert(self.now);
        self.push(at, What::AmRegister(a));
    }

    fn register_am(&mut self, a: u32) -> Result<(), SimError> {
        let sim = &self.apps[a as usize];
        let managed = self.sc.apps[a as usize].am.is_some();
        if (managed && sim.status != AmStatus::Launching) || sim.status == AmStatus::Ended {
            return Ok(());
        }
        let app = sim.record.id.expect("submitted");
        match self.call(Input::AmRegistered { app }, "AM registration")? {
            Reply::AmRegistered(Ok(_)) => {}
            // Killed or restarted meanwhile: its events said so.
            Reply::AmRegistered(Err(_)) => return Ok(()),
            _ => {}
        }
        let interval = self.sc.timing.am_heartbeat.as_millis();
        let sim = &mut self.apps[a as usize];
        sim.status = AmStatus::Registered;
        sim.phase = self.now.as_millis() % interval;
        sim.advance_stage(&self.sc.apps[a as usize], &self.rack_of);
        sim.next_hb = self.now;
        self.am_heartbeat(a)
    }

    fn am_heartbeat(&mut self, a: u32) -> Result<(), SimError> {
        let now = self.now;
        let sc = self.sc;
        let spec = &sc.apps[a as usize];
        let sim = &mut self.apps[a as usize];
        sim.next_hb = Time::MAX;
        if sim.status != AmStatus::Registered {
            return Ok(());
        }
        sim.last_hb = Some(now);
        sim.news = false;
        let names = Names {
            hosts: &self.hosts,
            racks: &self.racks,
        };
        let asks = sim.collect_asks(spec, &names);
        let releases = std::mem::take(&mut sim.releases);
        let progress = sim.progress();
        let app = sim.record.id.expect("registered apps have ids");
        self.stats.allocates += 1;
        let reply = self.call(
            Input::Allocate(AllocateRequest {
                app,
                asks,
                releases,
                blacklist_additions: Vec::new(),
                blacklist_removals: Vec::new(),
                progress,
            }),
            "allocate",
        )?;
        let reply = match reply {
            Reply::Allocate(Ok(r)) => r,
            Reply::Allocate(Err(AllocateError::App(AppError::AlreadyEnded { .. })))
            | Reply::Allocate(Err(AllocateError::App(AppError::UnknownApp(_))))
            | Reply::Allocate(Err(AllocateError::NotRegistered(_))) => return Ok(()),
            Reply::Allocate(Err(e)) => {
                // The job cannot run as asked (too large, or a resource its
                // queue allows none of): its AM gives up, as MapReduce's would.
                let diagnostics = format!("the AM's asks were refused: {e}");
                // Ended first: the core reports the attempt as FINISHED (with
                // final status FAILED, as YARN does), and that state change,
                // absorbed inside the call, must not record a success.
                self.end_app(a, Ending::Failed(diagnostics.clone()));
                self.call(
                    Input::AttemptFinished {
                        app,
                        outcome: FinalStatus::Failed,
                        diagnostics: diagnostics.clone(),
                    },
                    "attempt finished",
                )?;
                return Ok(());
            }
            _ => return Ok(()),
        };
        for c in &reply.allocated {
            if c.is_am {
                continue;
            }
            let Some(n) = self.node_by_id.get(&c.node).copied() else {
                self.apps[a as usize].releases.push(c.container);
                continue;
            };
            let sim = &mut self.apps[a as usize];
            match sim.assign(spec, c.priority, c.resource, n, &self.rack_of) {
                Some((g, t, locality)) => {
                    let base = spec.groups[g as usize].duration(t as usize);
                    let start = now + self.sc.timing.container_launch;
                    let end = start + self.sc.runtime.duration(base, locality);
                    sim.running.insert(c.container, (g, t, n));
                    sim.record.locality[locality.index()] += 1;
                    sim.record.first_task.get_or_insert(start);
                    self.nodes[n as usize].launch(c.container, Some(end));
                    self.activate(n);
                }
                None => {
                    sim.record.released += 1;
                    sim.releases.push(c.container);
                }
            }
        }
        for c in &reply.completed {
            let sim = &mut self.apps[a as usize];
            let Some((g, t, n)) = sim.running.remove(&c.container) else {
                continue;
            };
            if c.exit_status == exit_status::SUCCESS {
                sim.task_done(g, t);
            } else {
                if c.exit_status == exit_status::PREEMPTED {
                    sim.record.preempted += 1;
                } else {
                    sim.record.lost += 1;
                }
                sim.task_lost(spec, g, t, &self.rack_of);
                // The node may still run it (it ended before the node heard).
                self.nodes[n as usize].stop(&c.container);
            }
        }
        if let Some(p) = &reply.preemption {
            let queue = self.apps[a as usize]
                .record
                .queue
                .clone()
                .unwrap_or_default();
            for c in &p.containers {
                let sim = &mut self.apps[a as usize];
                if sim.warned.insert(*c) {
                    sim.record.warned += 1;
                    self.recorder.warning(now, *c, &queue, p.deadline);
                }
            }
        }
        let sim = &mut self.apps[a as usize];
        if sim.all_done() {
            let reply = self.call(
                Input::AttemptFinished {
                    app,
                    outcome: FinalStatus::Succeeded,
                    diagnostics: String::new(),
                },
                "attempt finished",
            )?;
            if let Reply::Done(Err(e)) = reply {
                return Err(SimError::Refused {
                    at: now,
                    what: format!("finishing {app}"),
                    why: e.to_string(),
                });
            }
            return Ok(());
        }
        sim.advance_stage(spec, &self.rack_of);
        if sim.has_changes() || sim.news || !self.options.skip_idle_heartbeats {
            self.wake_am(a);
        } else {
            self.keep_am_alive(a);
        }
        Ok(())
    }

    fn end_app(&mut self, a: u32, ending: Ending) {
        let sim = &mut self.apps[a as usize];
        if sim.status == AmStatus::Ended {
            return;
        }
        sim.status = AmStatus::Ended;
        sim.next_hb = Time::MAX;
        sim.record.finish = Some(self.now);
        sim.record.ending = Some(ending);
        sim.running.clear();
        self.apps_ended += 1;
        self.last_activity = self.now;
    }

    // ----- scenario events -----

    fn scenario_event(&mut self, i: usize) -> Result<(), SimError> {
        let event = self.sc.events[i].event.clone();
        match event {
            ScenarioEvent::Reload(config) => {
                self.call(Input::AllocConfigReplaced(config), "allocation file reload")?;
            }
            ScenarioEvent::SetSite(settings) => {
                self.min_allocation = settings.scheduler.min_allocation();
                self.call(Input::SettingsReplaced(settings), "site settings change")?;
                let dormant: Vec<u32> = self.dormant_free.iter().map(|(_, n)| *n).collect();
                for n in dormant {
                    self.activate(n);
                }
            }
            ScenarioEvent::Kill(a) => match self.live_app(a) {
                Err(why) => self.refuse(format!("kill {}: {why}", self.sc.apps[a].name)),
                Ok(app) => {
                    let reply = self.call(
                        Input::KillApp {
                            app,
                            reason: "killed by the scenario".to_owned(),
                        },
                        "kill",
                    )?;
                    if let Reply::Done(Err(e)) = reply {
                        self.refuse(format!("kill {}: {e}", self.sc.apps[a].name));
                    }
                }
            },
            ScenarioEvent::Move(a, queue) => match self.live_app(a) {
                Err(why) => {
                    self.refuse(format!("move {} to {queue}: {why}", self.sc.apps[a].name));
                }
                Ok(app) => {
                    let reply = self.call(
                        Input::MoveApp {
                            app,
                            queue: queue.clone(),
                        },
                        "move",
                    )?;
                    match reply {
                        Reply::Moved(Ok(())) => {
                            self.apps[a].record.queue = Some(queue.to_string());
                        }
                        Reply::Moved(Err(e)) => {
                            self.refuse(format!(
                                "move {} to {queue}: refused: {e}",
                                self.sc.apps[a].name
                            ));
                        }
                        _ => {}
                    }
                }
            },
            ScenarioEvent::LoseNodes(list) => {
                for n in list {
                    let Some(node) = self.nodes.get_mut(n as usize) else {
                        continue;
                    };
                    if node.is_up() {
                        node.mode = NodeMode::Silent;
                        node.next_hb = Time::MAX;
                        node.lose_all();
                        let key = (node.phase, n);
                        self.dormant_free.remove(&key);
                    }
                }
            }
            ScenarioEvent::DecommissionNodes(list) => {
                for n in list {
                    let Some(node) = self.nodes.get(n as usize) else {
                        continue;
                    };
                    if node.mode == NodeMode::Gone {
                        continue;
                    }
                    let id = node.id.clone();
                    self.call(
                        Input::NodeUnregistered {
                            node: id,
                            decommissioned: true,
                        },
                        "decommission",
                    )?;
                }
            }
            ScenarioEvent::DrainNodes { nodes, drain } => self.drain_nodes(&nodes, drain)?,
            ScenarioEvent::RecommissionNodes(names) => {
                for name in &names {
                    let n = match self.node_named(name) {
                        Ok(n) if self.nodes[n as usize].draining => n,
                        Ok(n) if self.nodes[n as usize].mode == NodeMode::Gone => {
                            self.refuse(format!(
                                "recommission {name}: it already left the cluster"
                            ));
                            continue;
                        }
                        Ok(_) => {
                            self.refuse(format!("recommission {name}: it is not draining"));
                            continue;
                        }
                        Err(why) => {
                            self.refuse(format!("recommission {name}: {why}"));
                            continue;
                        }
                    };
                    let node = self.nodes[n as usize].id.clone();
                    let reply = self.call(Input::NodeRecommissioned { node }, "recommission")?;
                    self.node_state_taken(reply, || format!("recommissioning {name}"))?;
                }
            }
            ScenarioEvent::AddNodes(list) => {
                for spec in &list {
                    self.add_node(spec)?;
                }
            }
        }
        Ok(())
    }

    /// Starts a graceful decommission of each chosen node. Random choices
    /// are drawn now among the running nodes (in node order), so a node
    /// already lost, gone or draining is never picked.
    fn drain_nodes(&mut self, nodes: &NodeChoice, drain: Drain) -> Result<(), SimError> {
        let chosen: Vec<(u32, String)> = match nodes {
            NodeChoice::Named(names) => {
                let mut chosen = Vec::new();
                for name in names {
                    match self.node_named(name) {
                        Ok(n) if self.nodes[n as usize].mode == NodeMode::Gone => {
                            self.refuse(format!("drain {name}: it already left the cluster"));
                        }
                        Ok(n) => chosen.push((n, name.clone())),
                        Err(why) => self.refuse(format!("drain {name}: {why}")),
                    }
                }
                chosen
            }
            NodeChoice::Random { count, seed } => {
                let running: Vec<u32> = (0..self.nodes.len() as u32)
                    .filter(|n| {
                        let node = &self.nodes[*n as usize];
                        node.is_up() && !node.draining
                    })
                    .collect();
                if (running.len() as u64) < u64::from(*count) {
                    self.refuse(format!(
                        "drain {count} random nodes: only {} were running",
                        running.len()
                    ));
                }
                SimRng::new(*seed)
                    .distinct(running.len() as u32, *count)
                    .into_iter()
                    .map(|i| {
                        let n = running[i as usize];
                        (n, self.hosts[n as usize].clone())
                    })
                    .collect()
            }
        };
        for (n, name) in chosen {
            let node = self.nodes[n as usize].id.clone();
            let reply = self.call(
                Input::NodeDecommissioning {
                    node,
                    drain: drain.clone(),
                },
                "drain",
            )?;
            self.node_state_taken(reply, || format!("draining {name}"))?;
        }
        Ok(())
    }

    /// A refused drain or recommission fails the run: the engine only asks
    /// for what a node can take.
    fn node_state_taken(
        &self,
        reply: Reply,
        what: impl FnOnce() -> String,
    ) -> Result<(), SimError> {
        match reply {
            Reply::NodeState(Err(e)) => Err(SimError::Refused {
                at: self.now,
                what: what(),
                why: e.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// The index of the node with this host name, or why there is none yet.
    fn node_named(&self, name: &str) -> Result<u32, &'static str> {
        NodeId::new(name, 8041)
            .ok()
            .and_then(|id| self.node_by_id.get(&id).copied())
            .ok_or("it has not joined the cluster yet")
    }

    /// The id of scenario app `a` while it is in the RM, or why a scenario
    /// event cannot act on it.
    fn live_app(&self, a: usize) -> Result<AppId, &'static str> {
        match self.apps[a].record.id {
            None => Err("not submitted yet"),
            Some(_) if self.apps[a].status == AmStatus::Ended => Err("already ended"),
            Some(id) => Ok(id),
        }
    }

    /// Records a scenario event that changed nothing.
    fn refuse(&mut self, what: String) {
        self.refused_events.push(format!("at {}: {what}", self.now));
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::scenario::MemorySources;

    fn load(text: &str) -> Scenario {
        Scenario::load(text, &MemorySources::default(), None).unwrap()
    }

    /// One line per app: outcome and times (s), task locality, losses.
    fn timeline(report: &Report) -> String {
        let mut out = String::new();
        let s = |t: Option<Time>| {
            t.map_or("-".to_owned(), |t| {
                format!("{:.3}", t.as_millis() as f64 / 1000.0)
            })
        };
        for a in &report.apps {
            let _ = writeln!(
                out,
                "{} {} in {}: submit {} am {} first {} finish {} local {:?} preempted {} lost {}",
                a.name,
                a.outcome.name(),
                a.queue.as_deref().unwrap_or("-"),
                s(a.submit),
                s(a.am_start),
                s(a.first_task),
                s(a.finish),
                a.locality,
                a.preempted,
                a.lost
            );
        }
        out
    }

    #[test]
    fn one_job_walks_through_the_protocol() {
        let sc = load(
            r#"
            seed = 3
            [[nodes]]
            count = 2
            capacity = "4096 mb, 4 vcores"
            rack = "/r1"
            [[apps]]
            name = "job"
            at = "2s"
            tasks = [ { count = 2, duration = "10s", hosts = [["node0002"]] } ]
            "#,
        );
        let phases: Vec<u64> = {
            let mut rng = SimRng::new(3).fork("heartbeat-phases", 0);
            (0..2).map(|_| rng.below(1000)).collect()
        };
        let report = simulate(&sc, SimOptions::default()).unwrap();
        expect_test::expect![[r#"
            [
                740,
                991,
            ]
        "#]]
        .assert_debug_eq(&phases);
        // Node 1 beats at x.740, node 2 at x.991. Submitted at 2.000 (to
        // root.user: no queue asked, user-as-default-queue), the AM container
        // lands on the next heartbeat (node 1, 2.740); the AM registers a
        // second later (3.740) and asks for both tasks at node 2, its rack and
        // anywhere. Node 2 takes one node-locally at 3.991; without delay
        // scheduling node 1 takes the other rack-locally at 4.740, just
        // before the AM's heartbeat at 4.740 learns of both (nodes beat
        // before AMs at the same instant) and launches them. The node-local
        // task runs 10 s (node 2 reports at 14.991), the rack-local one 15 s,
        // to 19.740, when node 1 reports it and the AM, beating right after,
        // finishes the job.
        expect_test::expect![[r#"
            job finished in root.user: submit 2.000 am 2.740 first 4.740 finish 19.740 local [1, 1, 0, 0] preempted 0 lost 0
        "#]]
        .assert_eq(&timeline(&report));
    }

    #[test]
    fn an_app_past_its_lifetime_is_killed_and_its_room_goes_to_the_next() {
        // One node fits one task at a time; "slow" holds it past its
        // 30 s lifetime, and "next" waits for the room.
        let sc = load(
            r#"
            seed = 3
            [[nodes]]
            count = 1
            capacity = "2048 mb, 2 vcores"
            [[apps]]
            name = "slow"
            lifetime = "30s"
            am = "unmanaged"
            tasks = [ { count = 2, size = "2048 mb, 2 vcores", duration = "20s" } ]
            [[apps]]
            name = "next"
            at = "1s"
            am = "unmanaged"
            lifetime = "10m"
            tasks = [ { count = 1, size = "2048 mb, 2 vcores", duration = "5s" } ]
            "#,
        );
        let report = simulate(&sc, SimOptions::default()).unwrap();
        let timeline = timeline(&report);
        // Killed at 30 s with its second task half done; the next job's
        // task starts at the node's next heartbeat.
        expect_test::expect![[r#"
            slow killed in root.user: submit 0.000 am - first 1.000 finish 30.000 local [2, 0, 0, 0] preempted 0 lost 0
            next finished in root.user: submit 1.000 am - first 31.000 finish 37.000 local [1, 0, 0, 0] preempted 0 lost 0
        "#]]
        .assert_eq(&timeline);
        assert_eq!(
            timeline,
            super::tests::timeline(&simulate(&sc, without_skipping()).unwrap())
        );
    }

    #[test]
    fn a_lifetime_of_zero_is_refused_naming_the_field() {
        let err = Scenario::load(
            r#"
            [[nodes]]
            count = 1
            capacity = "2048 mb, 2 vcores"
            [[apps]]
            name = "a"
            lifetime = "0s"
            tasks = [ { count = 1, duration = "1s" } ]
            "#,
            &MemorySources::default(),
            None,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("apps[0].lifetime: must be longer than 0s"),
            "{err}"
        );
    }

    /// Options that send every heartbeat, idle or not.
    fn without_skipping() -> SimOptions {
        SimOptions {
            skip_idle_heartbeats: false,
            ..SimOptions::default()
        }
    }

    /// A scenario's report with idle heartbeats skipped (the default) and
    /// with every heartbeat sent, to hold the two to the same decisions.
    fn with_and_without_skipping(sc: &Scenario) -> (Report, Report) {
        let fast = simulate(sc, SimOptions::default()).unwrap();
        let slow = simulate(sc, without_skipping()).unwrap();
        (fast, slow)
    }

    #[test]
    fn skipping_idle_heartbeats_changes_no_decision() {
        let text = r#"
            seed = 11
            allocation = """
              <allocations>
                <queue name="a"><weight>2</weight></queue>
                <queue name="b"><minResources>4096 mb, 4 vcores</minResources></queue>
              </allocations>"""
            site = { "yarn.scheduler.fair.locality.threshold.node" = 0.3, "yarn.scheduler.fair.locality.threshold.rack" = 0.3 }
            [[nodes]]
            count = 12
            capacity = "4096 mb, 4 vcores"
            nodes_per_rack = 4
            [report]
            sample_interval = "5s"
            [[workloads]]
            format = "generate"
            queue = "root.a"
            jobs = 6
            maps = 7
            arrival = "poisson 20s"
            map_duration = "15s"
            reduces = 2
            [[workloads]]
            format = "generate"
            queue = "root.b"
            mix = [ { maps = 1, jobs = 4 }, { maps = 30, jobs = 2 } ]
            arrival = "every 9s"
            am = "unmanaged"
            [[events]]
            at = "40s"
            action = "decommission-nodes"
            nodes = ["node0003"]
            [[events]]
            at = "50s"
            action = "add-nodes"
            count = 2
            capacity = "8192 mb, 8 vcores"
            "#;
        let (fast, slow) = with_and_without_skipping(&load(text));
        assert_eq!(timeline(&fast), timeline(&slow));
        assert_eq!(fast.queues, slow.queues);
        assert!(
            fast.apps
                .iter()
                .all(|a| a.outcome == crate::report::Outcome::Finished)
        );
        assert!(fast.stats.core_calls < slow.stats.core_calls / 2);
    }

    /// AMs whose tasks outlast the AM liveness expiry have nothing to say
    /// for a long time; skipping their idle heartbeats must not let the RM
    /// fail their attempts, managed or unmanaged.
    #[test]
    fn idle_ams_outlive_the_am_liveness_expiry() {
        let text = r#"
            seed = 5
            site = { "yarn.am.liveness-monitor.expiry-interval-ms" = 20000 }
            [[nodes]]
            count = 4
            capacity = "4096 mb, 4 vcores"
            [[workloads]]
            format = "generate"
            jobs = 3
            maps = 2
            arrival = "every 5s"
            map_duration = "90s"
            [[workloads]]
            format = "generate"
            jobs = 2
            maps = 2
            arrival = "every 7s"
            map_duration = "75s"
            am = "unmanaged"
            "#;
        let (fast, slow) = with_and_without_skipping(&load(text));
        assert_eq!(fast.apps.len(), 5);
        assert!(
            fast.apps
                .iter()
                .all(|a| a.outcome == crate::report::Outcome::Finished),
            "{}",
            timeline(&fast)
        );
        assert_eq!(timeline(&fast), timeline(&slow));
        assert!(fast.stats.allocates < slow.stats.allocates);
    }

    const FAULTS: &str = r#"
        seed = 21
        allocation = """
          <allocations>
            <queue name="a"><weight>1</weight></queue>
            <queue name="b"><weight>1</weight></queue>
            <queuePlacementPolicy>
              <rule name="specified" create="false"/>
              <rule name="reject"/>
            </queuePlacementPolicy>
          </allocations>"""
        [site]
        "yarn.nm.liveness-monitor.expiry-interval-ms" = 20000
        [[nodes]]
        count = 6
        capacity = "4096 mb, 4 vcores"
        nodes_per_rack = 3
        [report]
        sample_interval = "5s"
        # Unmanaged AMs: losing a node that runs an AM container next to its
        # tasks trips a core bug (see core_regressions below).
        [[apps]]
        name = "long"
        queue = "root.a"
        am = "unmanaged"
        tasks = [ { count = 12, duration = "60s" }, { count = 2, duration = "10s", stage = 1, replicas = 0 } ]
        [[apps]]
        name = "mover"
        at = "1s"
        queue = "root.b"
        am = "unmanaged"
        tasks = [ { count = 6, duration = "40s" } ]
        [[apps]]
        name = "victim"
        at = "2s"
        queue = "root.b"
        am = "unmanaged"
        tasks = [ { count = 4, duration = "5m" } ]
        [[apps]]
        name = "lost-soul"
        at = "3s"
        queue = "root.nowhere"
        tasks = [ { count = 1, duration = "1s" } ]
        [[events]]
        at = "20s"
        action = "lose-nodes"
        nodes = ["node0001", "node0002"]
        [[events]]
        at = "25s"
        action = "move"
        app = "mover"
        queue = "root.a"
        [[events]]
        at = "30s"
        action = "kill"
        app = "victim"
        [[events]]
        at = "35s"
        action = "reload"
        allocation = """<allocations><queue name="a"><weight>3</weight></queue><queue name="b"/></allocations>"""
        [[events]]
        at = "50s"
        action = "add-nodes"
        count = 2
        capacity = "8192 mb, 8 vcores"
        rack = "/rack9"
        [[events]]
        at = "70s"
        action = "decommission-nodes"
        nodes = ["node0006"]
        [[events]]
        at = "80s"
        action = "set-site"
        site = { "yarn.scheduler.fair.assignmultiple" = true }
    "#;

    #[test]
    fn faults_and_operator_events() {
        let sc = load(FAULTS);
        let report = simulate(&sc, SimOptions::default()).unwrap();
        let by_name = |n: &str| report.apps.iter().find(|a| a.name == n).unwrap();
        let long = by_name("long");
        assert_eq!(long.outcome, crate::report::Outcome::Finished);
        assert_eq!(long.tasks, 14);
        let mover = by_name("mover");
        assert_eq!(mover.outcome, crate::report::Outcome::Finished);
        assert_eq!(mover.queue.as_deref(), Some("root.a"));
        assert_eq!(by_name("victim").outcome, crate::report::Outcome::Killed);
        assert_eq!(by_name("victim").finish, Some(Time::from_millis(30_000)));
        match &by_name("lost-soul").outcome {
            crate::report::Outcome::Rejected(why) => assert!(why.contains("placement"), "{why}"),
            other => panic!("lost-soul was not rejected: {other:?}"),
        }
        // Two of six nodes went silent at 20 s: after the 20 s liveness
        // expiry their containers were lost and asked for again.
        let lost: u32 = report.apps.iter().map(|a| a.lost).sum();
        assert!(lost > 0, "{}", timeline(&report));
        assert!(report.queue("root.nowhere").is_none());
        let cap_mb: Vec<u64> = report.capacity.iter().map(Resource::memory_mb).collect();
        assert!(cap_mb.contains(&(6 * 4096)));
        assert!(cap_mb.contains(&(4 * 4096)), "two nodes lost");
        assert!(cap_mb.contains(&(4 * 4096 + 2 * 8192)), "two nodes added");
        assert_eq!(
            *cap_mb.last().unwrap(),
            3 * 4096 + 2 * 8192,
            "one decommissioned"
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_report_byte_for_byte() {
        let a = simulate(&load(FAULTS), SimOptions::default())
            .unwrap()
            .to_json();
        let b = simulate(&load(FAULTS), SimOptions::default())
            .unwrap()
            .to_json();
        assert_eq!(a, b);
        let other = Scenario::load(FAULTS, &MemorySources::default(), Some(22)).unwrap();
        let c = simulate(&other, SimOptions::default()).unwrap().to_json();
        assert_ne!(a, c, "another seed, other heartbeat phases and placements");
    }

    #[test]
    fn sls_traces_replay_on_the_hosts_they_name() {
        let trace = r#"
            {"job.start.ms": 0, "job.queue.name": "sls_queue_1", "job.id": "job_1", "job.user": "default",
             "job.tasks": [ {"count": 3, "container.host": "/default-rack/node1", "duration.ms": 20000},
                            {"container.host": "/default-rack/node2", "duration.ms": 10000},
                            {"container.type": "reduce", "duration.ms": 5000, "container.priority": 10} ]}
            {"job.start.ms": 15000, "job.queue.name": "sls_queue_2", "job.id": "job_2",
             "job.tasks": [ {"count": 2, "container.host": "/default-rack/node3", "duration.ms": 30000} ]}
        "#;
        let text = r#"
            allocation = """<allocations><queue name="sls_queue_1"/><queue name="sls_queue_2"/></allocations>"""
            [[workloads]]
            format = "sls"
            path = "jobs.json"
        "#;
        let sources = MemorySources::default().with("jobs.json", trace);
        let sc = Scenario::load(text, &sources, None).unwrap();
        assert_eq!(sc.nodes.len(), 3, "nodes come from the trace's hosts");
        assert_eq!(sc.nodes[0].capability, crate::import::sls::DEFAULT_NODE);
        let report = simulate(&sc, SimOptions::default()).unwrap();
        expect_test::expect![[r#"
            sls1-job_1 finished in root.sls_queue_1: submit 0.000 am 0.476 first 2.476 finish 41.476 local [1, 3, 0, 1] preempted 0 lost 0
            sls1-job_2 finished in root.sls_queue_2: submit 15.000 am 15.476 first 17.476 finish 63.476 local [1, 1, 0, 0] preempted 0 lost 0
        "#]]
        .assert_eq(&timeline(&report));
    }

    /// Regression: a core bug the simulator found. When a node left while
    /// it ran an AM container and, listed after it, containers of the same
    /// app, the core ended the AM container first, which failed the attempt
    /// and ended the app's other containers, and then tried to end those
    /// again ("live container index" panic). The core now ends the node's
    /// containers one at a time from the live list.
    #[test]
    fn core_regressions_losing_a_node_with_an_am_and_its_tasks() {
        let sc = load(
            r#"
            end = "2m"
            [[nodes]]
            count = 1
            capacity = "8192 mb, 8 vcores"
            [[apps]]
            name = "job"
            tasks = [ { count = 4, duration = "5m" } ]
            [[events]]
            at = "10s"
            action = "decommission-nodes"
            nodes = ["node0001"]
            "#,
        );
        let report = simulate(&sc, SimOptions::default()).unwrap();
        assert_eq!(report.apps[0].lost, 4);
    }

    /// A run's report and the core's node reports at its end.
    fn simulate_keeping_nodes(
        sc: &Scenario,
        options: SimOptions,
    ) -> (Report, Vec<weft_core::NodeReport>) {
        let mut engine = Engine::new(sc, options);
        engine.run_to_end(&mut |_| {}).unwrap();
        let nodes = engine.rm.node_reports();
        (engine.into_report(), nodes)
    }

    /// One line per node: its state, and when it left if it did. Heartbeat
    /// times of nodes still in the cluster are left out: they differ when
    /// idle heartbeats are skipped, and decide nothing.
    fn node_lines(nodes: &[weft_core::NodeReport]) -> String {
        let mut out = String::new();
        for n in nodes {
            let _ = match n.state {
                NodeState::Running | NodeState::Decommissioning => writeln!(
                    out,
                    "{} {} {} holding {}",
                    n.id.host(),
                    n.state.yarn_name(),
                    n.capability,
                    n.allocated
                ),
                _ => writeln!(
                    out,
                    "{} {} at {:.3}",
                    n.id.host(),
                    n.state.yarn_name(),
                    n.last_heartbeat.as_millis() as f64 / 1000.0
                ),
            };
        }
        out
    }

    /// Holds two runs' queue series equal. Steady fair shares are the one
    /// exception, at the instants of scenario events only: the core tells
    /// the tree a new cluster size lazily, on its next heartbeat, allocate
    /// or update pass, and a sample at the instant a node joins or starts
    /// draining may come before that call in one run and after it in the
    /// other (an AM heartbeat skipped as idle). Nothing decides on the
    /// stale figure: every call that schedules updates it first.
    fn assert_same_queue_series(sc: &Scenario, fast: &Report, slow: &Report) {
        assert_eq!(fast.samples, slow.samples);
        let event_times: BTreeSet<Time> = sc.events.iter().map(|e| e.at).collect();
        assert_eq!(fast.queues.len(), slow.queues.len());
        for (f, s) in fast.queues.iter().zip(&slow.queues) {
            let steady = |q: &crate::QueueSeries| -> Vec<(Time, Resource)> {
                fast.samples
                    .iter()
                    .copied()
                    .zip(q.steady_fair_share.iter().copied())
                    .filter(|(t, _)| !event_times.contains(t))
                    .collect()
            };
            assert_eq!(steady(f), steady(s), "{}", f.path);
            let without_steady = |q: &crate::QueueSeries| crate::QueueSeries {
                steady_fair_share: Vec::new(),
                ..q.clone()
            };
            assert_eq!(without_steady(f), without_steady(s));
        }
    }

    /// Regression: with idle heartbeats skipped, a node running long tasks
    /// had last been heard well before a `lose-nodes` event silenced it, so
    /// the RM declared it lost, and its tasks with it, up to the liveness
    /// expiry earlier than with every heartbeat sent (64.740 s against
    /// 109.740 s here). Its last heartbeat before the event now always
    /// reaches the core.
    #[test]
    fn skipping_idle_heartbeats_does_not_hasten_a_lost_node_s_expiry() {
        let sc = load(
            r#"
            seed = 3
            [site]
            "yarn.nm.liveness-monitor.expiry-interval-ms" = 60000
            [[nodes]]
            count = 3
            capacity = "4096 mb, 4 vcores"
            [[apps]]
            name = "job"
            am = "unmanaged"
            tasks = [ { count = 12, duration = "5m" } ]
            [[events]]
            at = "50s"
            action = "lose-nodes"
            nodes = ["node0001"]
            "#,
        );
        let (fast, fast_nodes) = simulate_keeping_nodes(&sc, SimOptions::default());
        let (slow, slow_nodes) = simulate_keeping_nodes(&sc, without_skipping());
        // Node 1 beats at x.740: last heard at 49.740, lost a minute later.
        expect_test::expect![[r#"
            node0001 LOST at 109.740
            node0002 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0003 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
        "#]]
        .assert_eq(&node_lines(&fast_nodes));
        assert_eq!(node_lines(&fast_nodes), node_lines(&slow_nodes));
        assert_eq!(timeline(&fast), timeline(&slow));
        assert_eq!(fast.apps[0].lost, 4);
    }

    /// Draining takes the node out of scheduling at once but lets what runs
    /// there finish; it leaves when its containers are done and, unless told
    /// otherwise, when the apps that ran there are done too.
    #[test]
    fn a_drain_lets_running_tasks_finish_and_the_node_leave_when_done() {
        let sc = load(
            r#"
            seed = 4
            [[nodes]]
            count = 3
            capacity = "4096 mb, 4 vcores"
            [[apps]]
            name = "job"
            am = "unmanaged"
            tasks = [ { count = 20, duration = "30s", replicas = 0 } ]
            [[events]]
            at = "10s"
            action = "drain-nodes"
            nodes = ["node0001"]
            [[events]]
            at = "10s"
            action = "drain-nodes"
            nodes = ["node0002"]
            wait_for_apps = false
            "#,
        );
        let (report, nodes) = simulate_keeping_nodes(&sc, SimOptions::default());
        // Twelve tasks start at once, four per node; from 10 s only node 3
        // takes new ones, so the other eight run there in two more rounds
        // and the job ends at 97 s with no task lost. Node 2 leaves as its
        // last task ends (34.976); node 1, drained by then too, waits for
        // the job. The cluster counts node 1 and 2's room only while their
        // tasks hold it.
        expect_test::expect![[r#"
            job finished in root.user: submit 0.000 am - first 1.000 finish 97.000 local [0, 0, 0, 20] preempted 0 lost 0
        "#]].assert_eq(&timeline(&report));
        expect_test::expect![[r#"
            node0001 DECOMMISSIONED at 97.000
            node0002 DECOMMISSIONED at 34.976
            node0003 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
        "#]]
        .assert_eq(&node_lines(&nodes));
        let cap_mb: Vec<u64> = report.capacity.iter().map(Resource::memory_mb).collect();
        expect_test::expect![[r#"
            [
                12288,
                12288,
                12288,
                12288,
                4096,
                4096,
                4096,
                4096,
                4096,
                4096,
                4096,
            ]
        "#]]
        .assert_debug_eq(&cap_mb);
    }

    /// A drain that times out loses what still runs there (-100, YARN's
    /// ABORTED), and the AMs run those tasks again elsewhere.
    #[test]
    fn a_drain_that_times_out_loses_its_tasks_which_run_again() {
        let sc = load(
            r#"
            seed = 9
            [[nodes]]
            count = 2
            capacity = "4096 mb, 4 vcores"
            [[apps]]
            name = "job"
            tasks = [ { count = 6, duration = "40s", replicas = 0 } ]
            [[events]]
            at = "10s"
            action = "drain-nodes"
            nodes = ["node0001", "node0002"]
            timeout = "20s"
            [[events]]
            at = "12s"
            action = "recommission-nodes"
            nodes = ["node0002"]
            "#,
        );
        let (report, nodes) = simulate_keeping_nodes(&sc, SimOptions::default());
        // The AM and three tasks run on node 2, recommissioned at 12 s; the
        // three tasks on node 1 are lost when its drain times out at 30 s
        // and run again on node 2: nine launches for six tasks.
        expect_test::expect![[r#"
            job finished in root.user: submit 0.000 am 0.132 first 2.132 finish 84.132 local [0, 0, 0, 9] preempted 0 lost 3
        "#]].assert_eq(&timeline(&report));
        expect_test::expect![[r#"
            node0001 DECOMMISSIONED at 30.000
            node0002 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
        "#]]
        .assert_eq(&node_lines(&nodes));
    }

    /// A recommissioned node offers its room again; events that cannot act
    /// (a node not draining, gone, or not yet added) are recorded.
    #[test]
    fn recommissioning_gives_a_node_back_and_refusals_are_recorded() {
        let sc = load(
            r#"
            seed = 2
            [[nodes]]
            count = 2
            capacity = "4096 mb, 4 vcores"
            [[apps]]
            name = "job"
            am = "unmanaged"
            tasks = [ { count = 16, duration = "20s", replicas = 0 } ]
            [[events]]
            at = "5s"
            action = "drain-nodes"
            nodes = ["node0001", "added0003"]
            [[events]]
            at = "6s"
            action = "recommission-nodes"
            nodes = ["node0001", "node0002"]
            [[events]]
            at = "7s"
            action = "decommission-nodes"
            nodes = ["node0002"]
            [[events]]
            at = "8s"
            action = "recommission-nodes"
            nodes = ["node0002"]
            [[events]]
            at = "9s"
            action = "add-nodes"
            capacity = "4096 mb, 4 vcores"
            "#,
        );
        let (report, nodes) = simulate_keeping_nodes(&sc, SimOptions::default());
        // Node 1 drains for a second and is back with all its room; node 2
        // is decommissioned outright with its four tasks, which run again.
        expect_test::expect![[r#"
            job finished in root.user: submit 0.000 am - first 1.000 finish 55.000 local [0, 0, 0, 20] preempted 0 lost 4
        "#]].assert_eq(&timeline(&report));
        expect_test::expect![[r#"
            added0003 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0001 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0002 DECOMMISSIONED at 7.000
        "#]]
        .assert_eq(&node_lines(&nodes));
        expect_test::expect![[r#"
            [
                "at 5.000s: drain added0003: it has not joined the cluster yet",
                "at 6.000s: recommission node0002: it is not draining",
                "at 8.000s: recommission node0002: it already left the cluster",
            ]
        "#]]
        .assert_debug_eq(&report.refused_events);
    }

    /// `count` draws among the nodes running when the event happens: never
    /// a lost node or one already draining.
    #[test]
    fn a_random_drain_picks_only_running_nodes() {
        let sc = load(
            r#"
            seed = 6
            end = "2m"
            [[nodes]]
            count = 5
            capacity = "4096 mb, 4 vcores"
            [[events]]
            at = "5s"
            action = "lose-nodes"
            nodes = ["node0002", "node0004"]
            [[events]]
            at = "6s"
            action = "drain-nodes"
            count = 1
            [[events]]
            at = "7s"
            action = "drain-nodes"
            count = 3
            "#,
        );
        let (report, nodes) = simulate_keeping_nodes(&sc, SimOptions::default());
        expect_test::expect![[r#"
            node0001 DECOMMISSIONED at 7.000
            node0002 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0003 DECOMMISSIONED at 6.000
            node0004 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0005 DECOMMISSIONED at 7.000
        "#]]
        .assert_eq(&node_lines(&nodes));
        expect_test::expect![[r#"
            [
                "at 7.000s: drain 3 random nodes: only 2 were running",
            ]
        "#]]
        .assert_debug_eq(&report.refused_events);
    }

    /// Draining nodes keep heartbeating while their tasks run, and are
    /// visited when those end, whether idle heartbeats are skipped or not:
    /// the two modes decide alike, with drains that wait for apps, drains
    /// that time out, a recommission, and new terms for a drain under way
    /// whose deadline has already passed (node0001 leaves when they are
    /// given, at 45.2 s).
    #[test]
    fn skipping_idle_heartbeats_changes_no_decision_with_drains() {
        let text = r#"
            seed = 13
            allocation = """
              <allocations>
                <queue name="a"/>
                <queue name="b"/>
              </allocations>"""
            [[nodes]]
            count = 10
            capacity = "4096 mb, 4 vcores"
            nodes_per_rack = 5
            [report]
            sample_interval = "5s"
            [[workloads]]
            format = "generate"
            queue = "root.a"
            jobs = 6
            maps = 9
            arrival = "poisson 15s"
            map_duration = "25s"
            duration_spread = 0.5
            reduces = 1
            [[workloads]]
            format = "generate"
            queue = "root.b"
            mix = [ { maps = 2, jobs = 4 }, { maps = 20, jobs = 1 } ]
            arrival = "every 11s"
            am = "unmanaged"
            [[events]]
            at = "20s"
            action = "drain-nodes"
            nodes = ["node0001", "node0002"]
            [[events]]
            at = "25s"
            action = "drain-nodes"
            count = 2
            timeout = "15s"
            wait_for_apps = false
            [[events]]
            at = "30s"
            action = "recommission-nodes"
            nodes = ["node0002"]
            [[events]]
            at = "45200ms"
            action = "drain-nodes"
            nodes = ["node0001"]
            timeout = "10s"
            [[events]]
            at = "50s"
            action = "add-nodes"
            count = 2
            capacity = "8192 mb, 8 vcores"
            [[events]]
            at = "60s"
            action = "drain-nodes"
            nodes = ["added0011"]
            timeout = "1m"
            "#;
        let sc = load(text);
        let (fast, fast_nodes) = simulate_keeping_nodes(&sc, SimOptions::default());
        let (slow, slow_nodes) = simulate_keeping_nodes(&sc, without_skipping());
        assert_eq!(timeline(&fast), timeline(&slow));
        assert_same_queue_series(&sc, &fast, &slow);
        assert_eq!(fast.capacity, slow.capacity);
        assert_eq!(node_lines(&fast_nodes), node_lines(&slow_nodes));
        assert_eq!(fast.refused_events, slow.refused_events);
        assert!(
            fast.apps
                .iter()
                .all(|a| a.outcome == crate::report::Outcome::Finished),
            "{}",
            timeline(&fast)
        );
        let lost: u32 = fast.apps.iter().map(|a| a.lost).sum();
        assert!(lost > 0, "the timeouts cost tasks: {}", timeline(&fast));
        let states = node_lines(&fast_nodes);
        expect_test::expect![[r#"
            added0011 DECOMMISSIONED at 120.000
            added0012 RUNNING <memory:8192, vCores:8> holding <memory:0, vCores:0>
            node0001 DECOMMISSIONED at 45.200
            node0002 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0003 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0004 DECOMMISSIONED at 40.000
            node0005 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0006 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0007 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0008 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0009 RUNNING <memory:4096, vCores:4> holding <memory:0, vCores:0>
            node0010 DECOMMISSIONED at 40.000
        "#]]
        .assert_eq(&states);
        assert!(fast.stats.core_calls < slow.stats.core_calls / 2);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

        /// Whatever the cluster, workload, delay, seed and drain: every app
        /// finishes, every task runs exactly once (plus once per attempt a
        /// drain's timeout lost), the core's books hold at every call, and
        /// skipping idle heartbeats changes no decision.
        #[test]
        fn every_small_run_finishes_with_sound_books(
            seed in 0u64..1_000_000,
            nodes in 2u32..8,
            per_rack in 1u32..4,
            jobs in 1u32..6,
            maps in 1u32..12,
            reduces in 0u32..3,
            secs in 1u64..30,
            delay in proptest::prelude::any::<bool>(),
            unmanaged in proptest::prelude::any::<bool>(),
            drain in 0usize..3,
        ) {
            let text = format!(
                r#"
                seed = {seed}
                [site]
                "yarn.scheduler.fair.locality.threshold.node" = {t}
                "yarn.scheduler.fair.locality.threshold.rack" = {t}
                [[nodes]]
                count = {nodes}
                capacity = "3072 mb, 3 vcores"
                nodes_per_rack = {per_rack}
                [[workloads]]
                format = "generate"
                jobs = {jobs}
                maps = {maps}
                reduces = {reduces}
                arrival = "poisson 7s"
                map_duration = "{secs}s"
                duration_spread = 0.5
                {am}
                {drain}
                "#,
                t = if delay { 0.5 } else { -1.0 },
                am = if unmanaged { "am = \"unmanaged\"" } else { "" },
                // One node of at least two drains: waiting for its apps, or
                // timing out and losing what it runs.
                drain = [
                    "",
                    "[[events]]\nat = \"8s\"\naction = \"drain-nodes\"\ncount = 1",
                    "[[events]]\nat = \"8s\"\naction = \"drain-nodes\"\ncount = 1\ntimeout = \"5s\"",
                ][drain],
            );
            let sc = load(&text);
            let fast = simulate(&sc, SimOptions::default()).unwrap();
            for a in &fast.apps {
                proptest::prop_assert_eq!(a.outcome.name(), "finished", "{}", timeline(&fast));
                // Every task ran once, and once more for each attempt lost.
                proptest::prop_assert_eq!(a.locality.iter().sum::<u32>(), a.tasks + a.lost);
            }
            let slow = simulate(&sc, without_skipping()).unwrap();
            proptest::prop_assert_eq!(timeline(&fast), timeline(&slow));
        }
    }

    #[test]
    fn a_job_whose_tasks_can_never_fit_fails_with_the_core_s_reason() {
        // 100,000 MB is above the default maximum allocation (8,192 MB): the
        // core refuses the ask and the AM gives up, as MapReduce's would.
        let sc = load(
            r#"
            [[nodes]]
            count = 2
            capacity = "8192 mb, 8 vcores"
            [[apps]]
            name = "huge"
            at = "0s"
            tasks = [ { count = 1, size = "100000 mb, 1 vcores", duration = "1s" } ]
            [[apps]]
            name = "small"
            at = "0s"
            tasks = [ { count = 1, duration = "1s" } ]
            "#,
        );
        let report = simulate(&sc, SimOptions::default()).unwrap();
        let by_name = |n: &str| report.apps.iter().find(|a| a.name == n).unwrap();
        match &by_name("huge").outcome {
            crate::report::Outcome::Failed(why) => {
                assert!(why.contains("larger than the maximum allocation"), "{why}")
            }
            other => panic!("the huge job did not fail: {other:?}"),
        }
        assert_eq!(by_name("huge").first_task, None);
        assert_eq!(by_name("small").outcome, crate::report::Outcome::Finished);
    }

    #[test]
    fn a_cluster_with_no_nodes_left_is_named_as_the_stall_s_cause() {
        let sc = load(
            r#"
            [[nodes]]
            count = 2
            capacity = "8192 mb, 8 vcores"
            [[apps]]
            name = "orphan"
            at = "0s"
            tasks = [ { count = 4, duration = "10m" } ]
            [[events]]
            at = "30s"
            action = "lose-nodes"
            count = 2
            "#,
        );
        let report = simulate(&sc, SimOptions::default()).unwrap();
        let stalled = report.stalled.as_deref().expect("the run stalls");
        assert!(
            stalled.ends_with("the cluster has no nodes left (all lost or decommissioned)"),
            "{stalled}"
        );
    }

    #[test]
    fn scenario_events_that_change_nothing_are_recorded() {
        let sc = load(
            r#"
            allocation = """<allocations><queue name="a"/><queue name="p"><queue name="c"/></queue></allocations>"""
            [[nodes]]
            count = 2
            capacity = "4096 mb, 4 vcores"
            [[apps]]
            name = "x"
            at = "5s"
            queue = "root.a"
            am = "unmanaged"
            tasks = [ { count = 2, duration = "20s" } ]
            [[events]]
            at = "1s"
            action = "kill"
            app = "x"
            [[events]]
            at = "10s"
            action = "move"
            app = "x"
            queue = "root.p"
            [[events]]
            at = "10m"
            action = "move"
            app = "x"
            queue = "root.p.c"
        "#,
        );
        let report = simulate(&sc, SimOptions::default()).unwrap();
        assert_eq!(report.apps[0].outcome, crate::report::Outcome::Finished);
        assert_eq!(report.apps[0].queue.as_deref(), Some("root.a"));
        let refused = &report.refused_events;
        assert_eq!(refused.len(), 3, "{refused:?}");
        assert!(
            refused[0].starts_with("at 1.000s: kill x: not submitted yet"),
            "{refused:?}"
        );
        assert!(
            refused[1].starts_with("at 10.000s: move x to root.p: refused: ")
                && refused[1].ends_with("is not a leaf queue"),
            "{refused:?}"
        );
        assert!(
            refused[2].starts_with("at 600.000s: move x to root.p.c: already ended"),
            "{refused:?}"
        );
        assert!(report.to_json().contains("\"refused_events\": ["));
        assert!(
            report
                .summary_text()
                .contains("changed nothing: at 10.000s: move x")
        );
    }
}
