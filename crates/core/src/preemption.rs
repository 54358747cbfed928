//! The core's side of preemption: the read-only view `weft-preemption` reads
//! the cluster through, and carrying out what it decides (warnings in the
//! owners' allocate replies, resources set aside on nodes for the starved
//! app when the transition says so, kills at the deadline, withdrawals),
//! each as an event. Which model decides (`current` or `classic`) is a site
//! setting the preemptor reads; the core only follows each transition.
//!
//! Who is starved and which containers go is `weft-preemption`'s decision;
//! handing the freed resources back on a heartbeat is `assign`'s.

use weft_model::{Resource, Time};
use weft_preemption::AppSlot;
use weft_preemption::{
    AppHoldings, AppInfo, Ask, ContainerInfo, Location, NodeInfo, NodeSlot, PreemptionOutput,
    PreemptionView, QueueInfo, QueueSlot, Transition, TransitionKind,
};
use weft_queue_tree::{AppHandle, QueueKind};

use crate::nodes::NodeIdx;
use crate::output::{Event, StopReason, exit_status};
use crate::requests::is_rack_name;
use crate::rm::ResourceManager;

/// The core's state as preemption sees it: slots are the arenas' indices.
pub(crate) struct CoreView<'a> {
    rm: &'a ResourceManager,
}

impl PreemptionView for CoreView<'_> {
    fn cluster_capacity(&self) -> Resource {
        self.rm.nodes.capacity
    }

    fn cluster_allocated(&self) -> Resource {
        self.rm.tree.queue_usage(self.rm.tree.root())
    }

    fn queue_slots(&self) -> usize {
        self.rm.tree.queue_slot_count()
    }

    fn queues(&self) -> impl Iterator<Item = QueueInfo<'_>> {
        let tree = &self.rm.tree;
        tree.queue_ids().map(move |id| {
            let s = tree.queue_settings(id);
            QueueInfo {
                slot: QueueSlot(id.index() as u32),
                parent: tree.queue_parent(id).map(|p| QueueSlot(p.index() as u32)),
                path: tree.queue_path(id),
                is_leaf: tree.queue_kind(id) == QueueKind::Leaf,
                policy: s.policy,
                min_share: s.min_share,
                demand: tree.queue_demand(id),
                usage: tree.queue_usage(id),
                fair_share: tree.queue_fair_share(id),
                min_share_preemption_timeout: s.min_share_preemption_timeout,
                fair_share_preemption_timeout: s.fair_share_preemption_timeout,
                fair_share_preemption_threshold: s.fair_share_preemption_threshold,
                preemptable: s.preemptable,
                weight: s.weight,
            }
        })
    }

    fn app_slots(&self) -> usize {
        self.rm.active.len()
    }

    fn apps(&self, leaf: QueueSlot) -> impl Iterator<Item = AppInfo> {
        let tree = &self.rm.tree;
        let leaf = tree
            .queue_id_at(leaf.0 as usize)
            .filter(|id| tree.queue_kind(*id) == QueueKind::Leaf);
        leaf.into_iter().flat_map(move |leaf| {
            tree.leaf_apps_in_order(leaf).map(move |h| AppInfo {
                slot: AppSlot(h.index() as u32),
                id: tree.app_id(h),
                usage: tree.app_usage(h),
                demand: tree.app_demand(h),
                fair_share: tree.app_fair_share(h),
                start: tree.app_start(h),
                weight: tree.app_weight(h),
            })
        })
    }

    fn asks(&self, app: AppSlot) -> impl Iterator<Item = Ask<'_>> {
        let active = self.rm.active.get(app.0 as usize).and_then(Option::as_ref);
        active.into_iter().flat_map(|a| {
            a.requests.keys.iter().flat_map(|(key, state)| {
                let any = state.any.map(|ask| Ask {
                    priority: key.priority,
                    capability: key.capability,
                    location: Location::Any,
                    count: ask.count,
                    relax_locality: ask.relax_locality,
                });
                let racks = state.racks.iter().map(move |(rack, ask)| Ask {
                    priority: key.priority,
                    capability: key.capability,
                    location: Location::Rack(rack),
                    count: ask.count,
                    relax_locality: ask.relax_locality,
                });
                let nodes = state.nodes.iter().map(move |(node, ask)| Ask {
                    priority: key.priority,
                    capability: key.capability,
                    location: Location::Node(node),
                    count: ask.count,
                    relax_locality: ask.relax_locality,
                });
                any.into_iter().chain(racks).chain(nodes)
            })
        })
    }

    fn node_slots(&self) -> usize {
        self.rm.nodes.arena.len()
    }

    fn nodes(&self) -> impl Iterator<Item = NodeSlot> {
        self.rm
            .nodes
            .indices()
            .filter(|idx| self.in_service(*idx))
            .map(|idx| NodeSlot(idx.0))
    }

    fn nodes_at(&self, location: Location<'_>) -> impl Iterator<Item = NodeSlot> {
        let nodes = &self.rm.nodes;
        let mut found: Vec<NodeIdx> = match location {
            Location::Any => Vec::new(),
            Location::Rack(rack) => nodes
                .racks
                .get(rack)
                .map(|r| r.iter().copied().collect())
                .unwrap_or_default(),
            Location::Node(name) if !is_rack_name(name) => nodes.by_name(name).to_vec(),
            Location::Node(_) => Vec::new(),
        };
        found.retain(|idx| self.in_service(*idx));
        // The same relative order as `nodes()`: by node id.
        found.sort_by(|a, b| nodes.get(*a).id.cmp(&nodes.get(*b).id));
        found.into_iter().map(|idx| NodeSlot(idx.0))
    }

    fn node(&self, node: NodeSlot) -> Option<NodeInfo<'_>> {
        let n = self.rm.nodes.try_get(NodeIdx(node.0))?;
        Some(NodeInfo {
            slot: node,
            id: &n.id,
            rack: &n.rack,
            capability: n.capability,
            unallocated: n.available(),
            reserved: n.reservation.map_or(Resource::ZERO, |r| r.resource),
            earmarked: n.preempted_for.values().copied().sum(),
        })
    }

    fn containers(&self, node: NodeSlot) -> impl Iterator<Item = ContainerInfo> {
        let n = self.rm.nodes.try_get(NodeIdx(node.0));
        n.into_iter()
            .flat_map(move |n| n.containers.iter().map(move |c| self.info(*c)))
    }

    fn app_holdings(&self, app: AppSlot) -> Option<AppHoldings> {
        let a = self.rm.active.get(app.0 as usize)?.as_ref()?;
        Some(AppHoldings {
            least_non_am: a.holdings.least_other(),
            least_am: a.holdings.least_am(),
        })
    }

    fn app_containers(&self, app: AppSlot) -> impl Iterator<Item = (NodeSlot, ContainerInfo)> {
        let active = self.rm.active.get(app.0 as usize).and_then(Option::as_ref);
        active.into_iter().flat_map(move |a| {
            a.containers
                .values()
                .filter(move |c| self.in_service(self.rm.container(**c).node))
                .map(move |c| (NodeSlot(self.rm.container(*c).node.0), self.info(*c)))
        })
    }
}

impl CoreView<'_> {
    /// A draining or unhealthy node is out of service for preemption: what
    /// its containers free is not room for anyone, so they are never victims.
    fn in_service(&self, idx: NodeIdx) -> bool {
        let node = self.rm.nodes.get(idx);
        node.draining.is_none() && node.unhealthy.is_none()
    }

    fn info(&self, idx: crate::nodes::ContainerIdx) -> ContainerInfo {
        let c = self.rm.container(idx);
        ContainerInfo {
            id: c.id,
            app: AppSlot(c.app.index() as u32),
            resource: c.resource,
            priority: c.priority,
            is_am: c.is_am,
            launched: c.allocated_at,
        }
    }
}

impl ResourceManager {
    /// Runs preemption when it is on, or while warnings are outstanding
    /// (switching it off withdraws them).
    pub(crate) fn run_preemption(&mut self, now: Time) {
        if !self.settings.scheduler.preemption
            && self.preemptor.next_deadline().is_none()
            && !self.preemption_active
        {
            return;
        }
        self.flush_capacity();
        // The view borrows the whole RM; the preemptor is lent out meanwhile.
        let mut preemptor = std::mem::take(&mut self.preemptor);
        let result = preemptor.update(now, &CoreView { rm: self }, &self.settings.scheduler);
        self.preemptor = preemptor;
        self.preemption_active = self.settings.scheduler.preemption;
        match result {
            Ok(out) => self.apply_preemption(now, out),
            Err(e) => {
                // A refused view is a bug in the core's view, never bad input:
                // report it and leave the ledger as it was.
                debug_assert!(false, "preemption refused the core's view: {e}");
                self.events.push(Event::PreemptionError {
                    error: e.to_string(),
                });
            }
        }
    }

    fn apply_preemption(&mut self, now: Time, out: PreemptionOutput) {
        if out.dry_run || !out.starved.is_empty() {
            for starved in &out.starved {
                self.events.push(Event::Starved {
                    app: starved.app,
                    queue: starved.queue.clone(),
                    fair_share_starvation: starved.fair_share_starvation,
                    min_share_starvation: starved.min_share_starvation,
                    victims: starved
                        .victims
                        .iter()
                        .flat_map(|set| set.containers.iter().map(|v| (v.container, v.resource)))
                        .collect(),
                    dry_run: out.dry_run,
                });
            }
        }
        for t in out.transitions {
            self.apply_transition(now, t);
        }
        for app in out.claims_ended {
            if let Some(h) = self.handle_of(app) {
                self.drop_set_asides(h);
            }
        }
    }

    /// Sets `amount` aside on node `idx` for app `h` (nothing, when it is
    /// zero), keeping the app's list of such nodes in step.
    pub(crate) fn set_aside(&mut self, idx: NodeIdx, h: AppHandle, amount: Resource) {
        let app = self.active.get_mut(h.index()).and_then(Option::as_mut);
        let node = self.nodes.get_mut(idx);
        match app {
            Some(app) if !amount.is_zero() => {
                node.preempted_for.insert(h, amount);
                app.set_aside_on.insert(idx);
            }
            app => {
                node.preempted_for.remove(&h);
                if let Some(app) = app {
                    app.set_aside_on.remove(&idx);
                }
            }
        }
    }

    /// Drops the room set aside on node `idx`, which is leaving or
    /// re-registering.
    pub(crate) fn clear_node_set_asides(&mut self, idx: NodeIdx) {
        let apps: Vec<AppHandle> = self.nodes.get(idx).preempted_for.keys().copied().collect();
        for h in apps {
            self.set_aside(idx, h, Resource::ZERO);
        }
    }

    /// Drops every room set aside for `h` (its claim or the app ended).
    pub(crate) fn drop_set_asides(&mut self, h: AppHandle) {
        let Some(app) = self.active.get_mut(h.index()).and_then(Option::as_mut) else {
            return;
        };
        for idx in std::mem::take(&mut app.set_aside_on) {
            self.nodes.get_mut(idx).preempted_for.remove(&h);
        }
    }

    fn apply_transition(&mut self, now: Time, t: Transition) {
        let beneficiary = self.handle_of(t.for_app);
        let node = self.nodes.lookup(&t.node);
        match t.kind {
            TransitionKind::Warned { deadline } => {
                // The classic model sets nothing aside: the fair order hands
                // the room to the starved queue.
                if let (true, Some(h), Some(n)) = (t.set_aside, beneficiary, node) {
                    let left = self.nodes.get(n).preempted_for.get(&h).copied();
                    self.set_aside(n, h, left.unwrap_or(Resource::ZERO) + t.resource);
                }
                self.events.push(Event::PreemptionWarned {
                    container: t.container,
                    app: t.app,
                    for_app: t.for_app,
                    resource: t.resource,
                    deadline,
                });
            }
            TransitionKind::Killed => {
                self.events.push(Event::PreemptionKilled {
                    container: t.container,
                    app: t.app,
                    for_app: t.for_app,
                });
                if let Some(c) = self.find_container(&t.container) {
                    let (is_am, resource) = {
                        let container = self.container(c);
                        (container.is_am, container.resource)
                    };
                    if let Some(record) = self.apps.get_mut(&t.app) {
                        if is_am {
                            record.preempted_am_containers += 1;
                        } else {
                            record.preempted_containers += 1;
                        }
                        record.preempted_resource += resource;
                    }
                    self.end_container(
                        now,
                        c,
                        exit_status::PREEMPTED,
                        "container preempted",
                        Some(StopReason::Preempted),
                    );
                }
            }
            TransitionKind::Released => {
                self.events.push(Event::PreemptionReleased {
                    container: t.container,
                    app: t.app,
                });
            }
            TransitionKind::Withdrawn { reason } => {
                if let (true, Some(h), Some(n)) = (t.set_aside, beneficiary, node)
                    && let Some(r) = self.nodes.get(n).preempted_for.get(&h).copied()
                {
                    self.set_aside(n, h, r - t.resource);
                }
                self.events.push(Event::PreemptionWithdrawn {
                    container: t.container,
                    app: t.app,
                    reason: reason.to_string(),
                });
            }
        }
    }

    /// A container ended (any reason): the ledger forgets it.
    pub(crate) fn preemption_container_ended(&mut self, container: weft_model::ContainerId) {
        if let Some(t) = self.preemptor.container_ended(container) {
            self.events.push(Event::PreemptionReleased {
                container: t.container,
                app: t.app,
            });
        }
    }

    /// The containers an app was warned about, for its allocate reply.
    pub(crate) fn preemption_message(
        &self,
        h: AppHandle,
    ) -> Option<crate::output::PreemptionMessage> {
        let app = self.tree.app_id(h);
        let mut containers = Vec::new();
        let mut deadline = None::<Time>;
        for (c, d) in self.preemptor.warned_containers(app) {
            containers.push(c);
            deadline = Some(deadline.map_or(d, |x| x.min(d)));
        }
        deadline.map(|deadline| crate::output::PreemptionMessage {
            deadline,
            containers,
        })
    }
}
