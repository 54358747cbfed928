//! `ResourceManager`: the state machine's fields, the one entry point
//! (`handle`), the periodic update and the next deadline.
//!
//! The work itself is split by subject: node inputs (`node_events`), app
//! inputs (`lifecycle`), container books (`containers`), scheduling on a
//! node (`assign`) and read-only reports (`view`), each an `impl
//! ResourceManager` block.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use weft_model::{AppId, AttemptId, NodeId, QueuePath, Resource, Time};
use weft_queue_tree::{AllocConfig, AppHandle, PlacementPolicy, QueueTree};

use crate::containers::Container;
use crate::input::{FinalStatus, Input};
use crate::nodes::{NodeIdx, Nodes};
use crate::output::{
    AllocatedContainer, AppState, CompletedContainer, Event, NodeState, Output, Reply,
};
use crate::requests::RequestTable;
use crate::settings::CoreSettings;

/// The ResourceManager as a deterministic state machine.
///
/// Feed it inputs with `handle(now, input)`; execute the `Output` it returns;
/// call it again (with `Input::Tick` if nothing else happened) at
/// `next_deadline()`. It reads no clock, does no I/O and holds no locks, so a
/// recorded sequence of inputs replays to the same outputs.
#[derive(Clone, Debug)]
pub struct ResourceManager {
    pub(crate) settings: CoreSettings,
    pub(crate) tree: QueueTree,
    /// The placement rules in force: the file's, or derived from the site flags.
    pub(crate) placement: PlacementPolicy,
    pub(crate) nodes: Nodes,
    /// Nodes that left, for reports.
    pub(crate) inactive_nodes: BTreeMap<NodeId, InactiveNode>,
    pub(crate) containers: crate::containers::ContainerSlab,
    pub(crate) n_containers: usize,
    /// Every app known, including finished ones still in history.
    pub(crate) apps: BTreeMap<AppId, AppRecord>,
    /// Scheduling state of apps in the tree, indexed by their tree handle.
    pub(crate) active: Vec<Option<ActiveApp>>,
    /// Tree handles of live apps this RM issued, by sequence number: the
    /// container lookup on every heartbeat status is then one index.
    pub(crate) handles_by_seq: SeqIndex,
    /// Finished apps in the order they finished (ended apps taken back
    /// after a restart by their finish times), for trimming history: the
    /// first is the first forgotten.
    pub(crate) finished_order: VecDeque<AppId>,
    pub(crate) next_app_seq: u32,
    pub(crate) next_update: Time,
    pub(crate) next_queue_prune: Time,
    pub(crate) last_now: Time,
    /// The cluster's size changed and the tree has not heard yet.
    pub(crate) capacity_dirty: bool,
    /// A reload, a shrinking cluster or recovered containers may have left a
    /// queue above its max share; allocations never do (the invariant check
    /// relaxes after this).
    pub(crate) max_shares_lowered: bool,
    /// Events of the input being handled.
    pub(crate) events: Vec<Event>,
    /// An empty buffer for a heartbeat's allocations: the last heartbeat
    /// reply's, when the driver hands its `Output` back to `handle_into`.
    pub(crate) spare_allocations: Vec<AllocatedContainer>,
    /// A heartbeat's reported containers as first looked up (`node_heartbeat`), reused.
    pub(crate) reported: Vec<Option<crate::nodes::ContainerIdx>>,
    pub(crate) counters: Counters,
    /// Nodes whose state changed, for AMs to hear of (`node_updates`).
    pub(crate) node_updates: crate::node_updates::NodeUpdateLog,
    /// AM liveness deadlines, soonest first (`am_liveness`).
    pub(crate) am_expiries: std::collections::BTreeSet<(Time, AppId)>,
    /// Lifetime expiries of live apps, soonest first (`lifetime`): exactly
    /// the live apps whose record has a `lifetime_expiry`, at that time.
    pub(crate) lifetime_expiries: std::collections::BTreeSet<(Time, AppId)>,
    /// Starvation timers and the warn-then-kill ledger.
    pub(crate) preemptor: weft_preemption::Preemptor,
    /// Preemption was on at its last run (so switching it off is noticed).
    pub(crate) preemption_active: bool,
}

/// Running totals since start, for metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Containers allocated.
    pub containers_allocated: u64,
    /// Containers that completed (any reason).
    pub containers_completed: u64,
    /// Node-local allocations.
    pub node_local: u64,
    /// Rack-local allocations.
    pub rack_local: u64,
    /// Off-switch allocations.
    pub off_switch: u64,
    /// Reservations made.
    pub reservations: u64,
    /// Apps submitted.
    pub apps_submitted: u64,
    /// Update passes run.
    pub updates: u64,
}

/// What the RM remembers of a node that left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InactiveNode {
    /// Its rack.
    pub rack: String,
    /// Its capability.
    pub capability: Resource,
    /// Why it left.
    pub state: NodeState,
    /// When.
    pub since: Time,
    /// Its HTTP address.
    pub http_address: String,
}

/// Everything the RM knows about an app, active or finished.
#[derive(Clone, Debug, PartialEq)]
pub struct AppRecord {
    /// Id.
    pub id: AppId,
    /// Submitting user.
    pub user: String,
    /// Name.
    pub name: String,
    /// Type.
    pub app_type: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Leaf queue (or the requested queue, when rejected).
    pub queue: QueuePath,
    /// Lifecycle state.
    pub state: AppState,
    /// The AM's own verdict, once it finished.
    pub final_status: Option<FinalStatus>,
    /// A sentence a person can act on.
    pub diagnostics: String,
    /// The priority in force: what was asked, lowered to
    /// `yarn.cluster.max-application-priority` when above it.
    pub priority: weft_model::AppPriority,
    /// AM container size (`None`: unmanaged).
    pub am_resource: Option<Resource>,
    /// Submission time.
    pub submitted: Time,
    /// When the RM kills it for its lifetime (YARN's `LIFETIME` timeout),
    /// if it has one; kept after it ends, as Hadoop reports it.
    pub lifetime_expiry: Option<Time>,
    /// When its first container was allocated.
    pub launched: Option<Time>,
    /// When it ended.
    pub finished: Option<Time>,
    /// The current (or last) attempt.
    pub attempt: AttemptId,
    /// The AM's last reported progress.
    pub progress: f32,
    /// The AM container, while it has one.
    pub am_container: Option<weft_model::ContainerId>,
    /// Memory-MB × seconds used by ended containers (YARN's `memorySeconds`, kept in MB·ms / 1000).
    pub memory_mb_seconds: u64,
    /// Vcore × seconds used by ended containers.
    pub vcore_seconds: u64,
    /// Containers other than the AM's taken back by preemption (YARN's
    /// `numNonAMContainerPreempted`).
    pub preempted_containers: u64,
    /// AM containers taken back by preemption (`numAMContainerPreempted`).
    pub preempted_am_containers: u64,
    /// What every preempted container held, added up
    /// (`preemptedResourceMB` and `preemptedResourceVCores`).
    pub preempted_resource: Resource,
    /// Tree handle while the app is in the tree.
    pub(crate) handle: Option<AppHandle>,
}

/// How many AM and other containers an app holds, and a size none of each
/// kind is below: preemption skips apps that could not give any container.
/// A bound only goes down while the app holds that kind, and resets when it
/// holds none, so it stays a valid lower bound at the cost of one compare.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Holdings {
    n_am: u32,
    n_other: u32,
    least_am: Resource,
    least_other: Resource,
}

impl Holdings {
    pub(crate) fn add(&mut self, size: Resource, is_am: bool) {
        let (n, least) = if is_am {
            (&mut self.n_am, &mut self.least_am)
        } else {
            (&mut self.n_other, &mut self.least_other)
        };
        *least = if *n == 0 {
            size
        } else {
            least.component_min(size)
        };
        *n += 1;
    }

    pub(crate) fn remove(&mut self, is_am: bool) {
        let n = if is_am {
            &mut self.n_am
        } else {
            &mut self.n_other
        };
        *n = n.saturating_sub(1);
    }

    /// Containers counted, AM and other.
    pub(crate) fn counts(&self) -> (u32, u32) {
        (self.n_am, self.n_other)
    }

    pub(crate) fn least_am(&self) -> Option<Resource> {
        (self.n_am > 0).then_some(self.least_am)
    }

    pub(crate) fn least_other(&self) -> Option<Resource> {
        (self.n_other > 0).then_some(self.least_other)
    }
}

/// Scheduling state of an app in the tree.
#[derive(Clone, Debug)]
pub(crate) struct ActiveApp {
    pub(crate) id: AppId,
    pub(crate) handle: AppHandle,
    pub(crate) attempt: AttemptId,
    pub(crate) requests: RequestTable,
    /// Live containers by sequence number.
    pub(crate) containers: crate::containers::ContainerBook,
    pub(crate) next_container_seq: u64,
    pub(crate) newly_allocated: Vec<AllocatedContainer>,
    /// How far into the log of node changes its AM has heard (`node_updates`).
    pub(crate) node_updates_seen: u64,
    /// How many containers the AM collected last time: the list's first
    /// push after a collection reserves that much at once, rather than
    /// growing (and copying) it step by step as every batch did.
    pub(crate) last_collected: u32,
    pub(crate) completed: Vec<CompletedContainer>,
    pub(crate) blacklist: std::collections::BTreeSet<String>,
    pub(crate) am_registered: bool,
    /// Nodes this app holds reservations on.
    pub(crate) reservations: std::collections::BTreeSet<NodeIdx>,
    /// The AM finished: containers drain, no new ones.
    pub(crate) finishing: bool,
    /// Attempts that failed in a way that counts against the app.
    pub(crate) failed_attempts: u32,
    /// Counted failures that fail the app: its own `max-app-attempts`
    /// where that is usable, else the RM-wide setting.
    pub(crate) max_attempts: u32,
    /// Its current attempt has been allocated a container (so the record
    /// has a launch time); a new attempt starts over.
    pub(crate) launched: bool,
    /// MB × milliseconds of ended containers not yet folded into the record.
    pub(crate) memory_mb_ms: u64,
    /// Vcores × milliseconds of ended containers not yet folded into the record.
    pub(crate) vcore_ms: u64,
    /// Lower bounds on the sizes of the containers it holds, for preemption.
    pub(crate) holdings: Holdings,
    /// Nodes holding room preemption set aside for it: exactly the nodes
    /// whose `preempted_for` names it, so ending the app or its claim visits
    /// those instead of every node in the cluster.
    pub(crate) set_aside_on: std::collections::BTreeSet<NodeIdx>,
    /// When its AM's attempt fails unless the AM is heard from (`am_liveness`).
    pub(crate) am_expires: Option<Time>,
    /// Its AM's attempt is failing because the AM went silent (so the
    /// failure counts, and says why).
    pub(crate) am_timed_out: bool,
}

impl ResourceManager {
    /// A ResourceManager with no nodes and no apps.
    pub fn new(config: AllocConfig, settings: CoreSettings, now: Time) -> ResourceManager {
        let tree = QueueTree::new(config, settings.tree_settings(), Resource::ZERO);
        let placement = placement_for(&tree, &settings);
        let interval = settings.scheduler.update_interval;
        ResourceManager {
            settings,
            tree,
            placement,
            nodes: Nodes::default(),
            inactive_nodes: BTreeMap::new(),
            containers: Default::default(),
            n_containers: 0,
            apps: BTreeMap::new(),
            active: Vec::new(),
            handles_by_seq: SeqIndex::default(),
            finished_order: VecDeque::new(),
            next_app_seq: 1,
            next_update: now + interval,
            next_queue_prune: now + QUEUE_PRUNE_INTERVAL,
            last_now: now,
            capacity_dirty: false,
            max_shares_lowered: false,
            events: Vec::new(),
            spare_allocations: Vec::new(),
            reported: Vec::new(),
            counters: Counters::default(),
            node_updates: Default::default(),
            am_expiries: Default::default(),
            lifetime_expiries: Default::default(),
            preemptor: weft_preemption::Preemptor::new(),
            preemption_active: false,
        }
    }

    /// Handles one input at time `now` (which must not go backwards; an
    /// earlier `now` is treated as the last one seen).
    pub fn handle(&mut self, now: Time, input: Input) -> Output {
        let mut out = Output::default();
        self.handle_into(now, input, &mut out);
        out
    }

    /// `handle`, writing into `out` and reusing its buffers: a driver that
    /// passes the same `Output` every time allocates nothing for events in
    /// the steady state.
    pub fn handle_into(&mut self, now: Time, input: Input, out: &mut Output) {
        let now = now.max(self.last_now);
        self.last_now = now;
        out.events.clear();
        if let Reply::NodeHeartbeat(Ok(reply)) = &mut out.reply
            && reply.allocated.capacity() > self.spare_allocations.capacity()
        {
            reply.allocated.clear();
            self.spare_allocations = std::mem::take(&mut reply.allocated);
        }
        // Work in the caller's buffer (and its capacity); hand it back filled.
        std::mem::swap(&mut self.events, &mut out.events);
        self.expire_nodes(now);
        self.expire_drains(now);
        self.expire_overcommits(now);
        // Before the AMs: an app whose lifetime ran out is killed, rather
        // than first given a new attempt for a silent AM.
        self.expire_lifetimes(now);
        self.expire_ams(now);
        let reply = match input {
            Input::NodeRegistered(reg) => Reply::NodeRegistered(self.register_node(now, reg)),
            Input::NodeHeartbeat(hb) => Reply::NodeHeartbeat(self.node_heartbeat(now, hb)),
            Input::NodeUnregistered {
                node,
                decommissioned,
            } => Reply::NodeUnregistered(self.unregister_node(now, &node, decommissioned)),
            Input::NodeDecommissioning { node, drain } => {
                Reply::NodeState(self.decommission_node(now, &node, drain))
            }
            Input::NodeRecommissioned { node } => Reply::NodeState(self.recommission_node(&node)),
            Input::NodeResized {
                node,
                capability,
                overcommit_timeout,
            } => Reply::NodeResized(self.resize_node(now, &node, capability, overcommit_timeout)),
            Input::NewApplication => Reply::NewApplication(self.new_application()),
            Input::AppSubmitted(sub) => Reply::Submitted(self.submit(now, sub)),
            Input::AppRecovered(rec) => Reply::Submitted(self.recover_app(now, rec)),
            Input::EndedAppRecovered(ended) => {
                Reply::EndedAppRecovered(self.recover_ended_app(*ended))
            }
            Input::AmRegistered { app } => Reply::AmRegistered(self.register_am(now, app)),
            Input::Allocate(req) => Reply::Allocate(self.allocate(now, req)),
            Input::AttemptFinished {
                app,
                outcome,
                diagnostics,
            } => Reply::Done(self.finish_attempt(now, app, outcome, diagnostics)),
            Input::KillApp { app, reason } => Reply::Done(self.kill_app(now, app, reason)),
            Input::MoveApp { app, queue } => Reply::Moved(self.move_app(now, app, &queue)),
            Input::SetAppPriority { app, priority } => {
                Reply::Done(self.set_priority(app, priority))
            }
            Input::SetAppLifetime { app, expiry } => {
                Reply::LifetimeSet(self.set_lifetime(now, app, expiry))
            }
            Input::AllocConfigReplaced(config) => {
                Reply::ConfigApplied(self.replace_config(now, *config))
            }
            Input::SettingsReplaced(settings) => {
                self.replace_settings(*settings);
                Reply::None
            }
            Input::Tick => Reply::None,
        };
        self.maybe_update(now);
        self.finish_drained_nodes(now);
        out.reply = reply;
        std::mem::swap(&mut self.events, &mut out.events);
    }

    /// When the core next needs to be called even if nothing happens: the
    /// next update pass, sweep of empty queues, node or AM expiry, end of a
    /// node's graceful decommission, app lifetime expiry, or preemption kill.
    pub fn next_deadline(&self) -> Option<Time> {
        let mut next = self.next_update.min(self.next_queue_prune);
        if let Some((expiry, _)) = self.nodes.expiries.first() {
            next = next.min(*expiry);
        }
        if let Some((expiry, _)) = self.am_expiries.first() {
            next = next.min(*expiry);
        }
        if let Some((expiry, _)) = self.lifetime_expiries.first() {
            next = next.min(*expiry);
        }
        if let Some((deadline, _)) = self.nodes.drain_deadlines.first() {
            next = next.min(*deadline);
        }
        if let Some((deadline, _)) = self.nodes.overcommit_deadlines.first() {
            next = next.min(*deadline);
        }
        if let Some(kill) = self.preemptor.next_deadline() {
            next = next.min(kill);
        }
        Some(next)
    }

    /// False when a heartbeat from `node` reporting no container changes
    /// would decide nothing: the node holds no reservation and no preempted
    /// resources, and either it cannot fit the smallest container or no app
    /// has pending asks. Drivers that model many idle nodes (the simulator)
    /// may skip such heartbeats without changing any decision; they must then
    /// keep nodes alive by other means (a long liveness expiry).
    pub fn heartbeat_would_schedule(&self, node: &NodeId) -> bool {
        let Some(idx) = self.nodes.lookup(node) else {
            return true;
        };
        let n = self.nodes.get(idx);
        if n.reservation.is_some() || !n.preempted_for.is_empty() || self.capacity_dirty {
            return true;
        }
        self.settings
            .scheduler
            .min_allocation()
            .fits_in(&n.available())
            && self.tree.has_schedulable_apps()
    }

    /// The settings in force.
    pub fn settings(&self) -> &CoreSettings {
        &self.settings
    }

    /// The queue tree (read-only).
    pub fn tree(&self) -> &QueueTree {
        &self.tree
    }

    /// Running totals since start.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    fn maybe_update(&mut self, now: Time) {
        let kills_due = self.preemptor.next_deadline().is_some_and(|d| d <= now);
        if now >= self.next_update {
            self.update(now);
            // Skip missed passes rather than running them back to back.
            let interval = self.settings.scheduler.update_interval;
            self.next_update = now + interval;
        } else if kills_due {
            self.run_preemption(now);
        }
        if now >= self.next_queue_prune {
            let removed = self.tree.remove_empty_dynamic_queues();
            if !removed.is_empty() {
                self.events.push(Event::QueuesChanged {
                    created: Vec::new(),
                    removed,
                });
            }
            self.next_queue_prune = now + QUEUE_PRUNE_INTERVAL;
        }
    }

    /// The update pass: demand, fair shares, orderings (Hadoop's update thread).
    pub(crate) fn update(&mut self, now: Time) {
        self.flush_capacity();
        self.tree.update();
        self.trim_node_updates();
        self.run_preemption(now);
        self.counters.updates += 1;
        self.events.push(Event::Updated { at: now });
    }

    fn replace_config(&mut self, now: Time, config: AllocConfig) -> weft_queue_tree::ConfigApplied {
        self.max_shares_lowered = true;
        let applied = self.tree.apply_config(config);
        self.placement = placement_for(&self.tree, &self.settings);
        for app in &applied.now_runnable {
            self.app_became_runnable(now, *app);
        }
        // Reservations the new limits no longer allow are dropped on the
        // nodes' next heartbeats; shares follow at once.
        self.update(now);
        applied
    }

    fn replace_settings(&mut self, settings: CoreSettings) {
        self.settings = settings;
        self.tree.set_settings(self.settings.tree_settings());
        self.placement = placement_for(&self.tree, &self.settings);
    }

    /// Records that a waiting app became runnable.
    pub(crate) fn app_became_runnable(&mut self, _now: Time, app: AppId) {
        let Some(record) = self.apps.get_mut(&app) else {
            return;
        };
        if record.state == AppState::WaitingForLimit {
            record.state = AppState::Accepted;
            record.diagnostics =
                "runnable: waiting for its application master container".to_owned();
            self.events.push(Event::AppStateChanged {
                app,
                queue: record.queue.clone(),
                state: AppState::Accepted,
                diagnostics: record.diagnostics.clone(),
            });
        }
    }

    /// The tree handle of a live app.
    pub(crate) fn handle_of(&self, app: AppId) -> Option<AppHandle> {
        if app.cluster_timestamp == self.settings.cluster_timestamp
            && let Some(h) = self.handles_by_seq.get(app.seq)
        {
            return Some(h);
        }
        self.tree.app_handle(app)
    }

    pub(crate) fn active(&self, h: AppHandle) -> &ActiveApp {
        self.active[h.index()]
            .as_ref()
            .expect("active app for a live handle")
    }

    pub(crate) fn active_mut(&mut self, h: AppHandle) -> &mut ActiveApp {
        self.active[h.index()]
            .as_mut()
            .expect("active app for a live handle")
    }

    pub(crate) fn container(&self, idx: crate::nodes::ContainerIdx) -> &Container {
        self.containers.get(idx).expect("live container index")
    }
}

/// Tree handles of live apps by sequence number, for the ids this RM issues.
///
/// `NewApplication` issues ids one after another, so the index starts at the
/// first one issued and grows a slot at a time. An id far beyond its end (a
/// submission may carry any unused id, and recovery brings back the state
/// store's) is not indexed: its app is found through the tree instead, so no
/// input can make the index large.
#[derive(Clone, Debug, Default)]
pub(crate) struct SeqIndex {
    /// The sequence number of `slots[0]`.
    base: u32,
    slots: Vec<Option<AppHandle>>,
}

/// How far past the index's end an app may be numbered and still be indexed.
const SEQ_INDEX_REACH: usize = 1024;

impl SeqIndex {
    pub(crate) fn get(&self, seq: u32) -> Option<AppHandle> {
        let at = seq.checked_sub(self.base)?;
        self.slots.get(at as usize).copied().flatten()
    }

    /// Notes an id just issued: an index still empty starts there.
    pub(crate) fn issued(&mut self, seq: u32) {
        if self.slots.is_empty() {
            self.base = seq;
        }
    }

    /// Indexes a live app, if its number is within reach.
    pub(crate) fn insert(&mut self, seq: u32, h: AppHandle) {
        let Some(at) = seq.checked_sub(self.base) else {
            return;
        };
        let at = at as usize;
        if at >= self.slots.len() + SEQ_INDEX_REACH {
            return;
        }
        if self.slots.len() <= at {
            self.slots.resize(at + 1, None);
        }
        self.slots[at] = Some(h);
    }

    /// Forgets an app that ended, if it is the one indexed there.
    pub(crate) fn remove(&mut self, seq: u32, h: AppHandle) {
        let Some(at) = seq.checked_sub(self.base) else {
            return;
        };
        if let Some(slot) = self.slots.get_mut(at as usize)
            && *slot == Some(h)
        {
            *slot = None;
        }
    }
}

/// Hadoop removes empty dynamic queues on each allocation-file poll (10 s).
const QUEUE_PRUNE_INTERVAL: weft_model::Duration = weft_model::Duration::from_millis(10_000);

/// The soonest entry of a set of deadlines if it is due at `now`: the one
/// check every expiry pass (nodes, drains, over-commits, AMs, lifetimes)
/// loops on, taking the entry out itself or having it taken.
pub(crate) fn first_due<T: Copy + Ord>(
    deadlines: &BTreeSet<(Time, T)>,
    now: Time,
) -> Option<(Time, T)> {
    deadlines.first().copied().filter(|(at, _)| *at <= now)
}

fn placement_for(tree: &QueueTree, settings: &CoreSettings) -> PlacementPolicy {
    tree.config().placement.clone().unwrap_or_else(|| {
        PlacementPolicy::from_site_flags(
            settings.scheduler.user_as_default_queue,
            settings.scheduler.allow_undeclared_pools,
        )
    })
}
