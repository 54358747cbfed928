//! Scheduling on one node's heartbeat, in Hadoop's order: resources freed by
//! preemption go back to the app they were freed for; then the node's
//! reservation is served; then the tree is walked (root → children in policy
//! order → leaf → apps in policy order → each app's requests by priority)
//! until nothing more is assigned or the heartbeat's quota is reached.
//!
//! Deciding is split from committing: while the tree is walked (borrowed), an
//! app only decides what it would take; the allocation or reservation is
//! then booked. That keeps the walk a plain read of the ordered sets.

use std::cmp::Ordering;

use weft_model::{Resource, Time};
use weft_queue_tree::site::{HeartbeatAssignment, LocalityRelaxation, MaxAssign};
use weft_queue_tree::{AppHandle, QueueTree, Visit};

use crate::calc::policy_compare;
use crate::nodes::{Node, NodeIdx, Nodes, Reservation};
use crate::output::{Event, Locality};
use crate::requests::{KeyState, Location, SchedKey};
use crate::rm::{ActiveApp, ResourceManager};

/// What an app decided to do with the node it was offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Allocate {
        app: AppHandle,
        key: SchedKey,
        locality: Locality,
    },
    Reserve {
        app: AppHandle,
        key: SchedKey,
        locality: Locality,
    },
}

/// The read-only context an app needs to decide.
struct Ctx<'a> {
    tree: &'a QueueTree,
    nodes: &'a Nodes,
    node: &'a Node,
    node_idx: NodeIdx,
    params: Params,
    now: Time,
}

/// What every decision of a heartbeat reads from the settings and the
/// cluster, derived once per heartbeat rather than once per walk.
#[derive(Clone, Copy)]
pub(crate) struct Params {
    pub(crate) relaxation: LocalityRelaxation,
    pub(crate) n_nodes: u32,
    pub(crate) reservation_threshold: Resource,
    reservable_nodes: f64,
}

impl ResourceManager {
    /// Everything a heartbeat may assign on the node.
    pub(crate) fn schedule_node(&mut self, now: Time, idx: NodeIdx) {
        if !self.nodes.get(idx).preempted_for.is_empty() {
            self.hand_back_preempted(now, idx);
        }
        if self.nodes.get(idx).reservation.is_some() && self.serve_reservation(now, idx) {
            return;
        }
        let min = self.settings.scheduler.min_allocation();
        let mode = self.settings.scheduler.heartbeat_assignment();
        let params = self.params();
        let max_to_assign = self.nodes.get(idx).available().scale_down(0.5);
        let mut n_assigned: u32 = 0;
        let mut assigned = Resource::ZERO;
        loop {
            let node = self.nodes.get(idx);
            if node.reservation.is_some() || !takes_offers(node.available(), &min) {
                break;
            }
            let Some(decision) = self.decide_on_walk(now, idx, params) else {
                break;
            };
            match self.commit(now, idx, decision, false) {
                Some(resource) => {
                    n_assigned += 1;
                    assigned += resource;
                }
                None => break,
            }
            let more = match mode {
                HeartbeatAssignment::One => false,
                // `fits_in` is "≤", so one container may overshoot half, as in Hadoop.
                HeartbeatAssignment::HalfOfUnallocated => assigned.fits_in(&max_to_assign),
                HeartbeatAssignment::AtMost(MaxAssign::Unlimited) => true,
                HeartbeatAssignment::AtMost(MaxAssign::AtMost(n)) => n_assigned < n.get(),
            };
            if !more {
                break;
            }
        }
    }

    pub(crate) fn params(&self) -> Params {
        Params {
            relaxation: self.settings.scheduler.locality_relaxation(),
            n_nodes: self.nodes.n_running,
            reservation_threshold: self.settings.scheduler.reservation_threshold(),
            reservable_nodes: self.settings.scheduler.reservable_nodes.get(),
        }
    }

    /// Walks the tree once and returns the first app's decision.
    fn decide_on_walk(&mut self, now: Time, idx: NodeIdx, params: Params) -> Option<Decision> {
        let ctx = Ctx {
            tree: &self.tree,
            nodes: &self.nodes,
            node: self.nodes.get(idx),
            node_idx: idx,
            params,
            now,
        };
        let active = &mut self.active;
        self.tree.walk(|h| {
            let Some(app) = active[h.index()].as_mut() else {
                return Visit::Pass;
            };
            match decide(&ctx, app, None) {
                Some(d) => Visit::Took(d),
                None => Visit::Pass,
            }
        })
    }

    /// Books a decision. Returns the resource allocated, or `None` for a reservation.
    fn commit(
        &mut self,
        now: Time,
        idx: NodeIdx,
        decision: Decision,
        from_reservation: bool,
    ) -> Option<Resource> {
        match decision {
            Decision::Allocate { app, key, locality } => {
                if from_reservation {
                    self.release_reservation(idx, "its container was allocated");
                }
                Some(self.allocate_container(now, app, idx, key, locality))
            }
            Decision::Reserve { app, key, locality } => {
                let app_id = self.active(app).id;
                let node = self.nodes.get_mut(idx);
                let fresh = node.reservation.is_none();
                node.reservation = Some(Reservation {
                    app,
                    key,
                    priority: key.priority,
                    resource: key.capability,
                    off_switch: locality == Locality::OffSwitch,
                });
                let node_id = node.id.clone();
                self.active_mut(app).reservations.insert(idx);
                if fresh {
                    self.counters.reservations += 1;
                    self.events.push(Event::ContainerReserved {
                        app: app_id,
                        node: node_id,
                        resource: key.capability,
                        priority: key.priority,
                    });
                }
                None
            }
        }
    }

    /// Hadoop's `assignReservedContainer`: drop the reservation if the app can
    /// no longer use it; otherwise try to fill it. Returns true when the
    /// reservation is (still) valid, which ends this heartbeat's scheduling.
    fn serve_reservation(&mut self, now: Time, idx: NodeIdx) -> bool {
        let res = self.nodes.get(idx).reservation.expect("caller checked");
        let h = res.app;
        if !self.reservation_is_valid(idx, &res) {
            self.release_reservation(idx, "the application can no longer use it");
            return false;
        }
        if res.resource.fits_in(&self.nodes.get(idx).available()) {
            let ctx = Ctx {
                tree: &self.tree,
                nodes: &self.nodes,
                node: self.nodes.get(idx),
                node_idx: idx,
                params: self.params(),
                now,
            };
            let app = self.active[h.index()].as_mut().expect("checked above");
            if let Some(decision) = decide(&ctx, app, Some(res.key)) {
                self.commit(now, idx, decision, true);
            }
        }
        true
    }

    /// Whether the reservation `res` on node `idx` still serves its app
    /// (Hadoop's `isValidReservation`, plus the blacklist): a reservation
    /// that is not is dropped at the node's next heartbeat.
    pub(crate) fn reservation_is_valid(&self, idx: NodeIdx, res: &Reservation) -> bool {
        let h = res.app;
        let node = self.nodes.get(idx);
        // A node the app blacklisted since it reserved would never be filled
        // (apps are not offered blacklisted nodes) yet would block everyone.
        self.active[h.index()].as_ref().is_some_and(|app| {
            !app.finishing
                && !app.blacklist.contains(&node.name)
                && !app.blacklist.contains(&node.rack)
                && app
                    .requests
                    .keys
                    .get(&res.key)
                    .is_some_and(|state| has_container_for_node(&res.key, state, node))
                && (self.tree.app_am_started(h)
                    || self.tree.app_is_unmanaged(h)
                    || self.tree.can_start_am(h))
                && self
                    .tree
                    .fits_in_max_share(self.tree.app_queue(h), res.resource)
        })
    }

    /// Offers the node to apps it holds preempted resources for, until each
    /// got its amount back or takes nothing more.
    fn hand_back_preempted(&mut self, now: Time, idx: NodeIdx) {
        let entries: Vec<(AppHandle, Resource)> = self
            .nodes
            .get(idx)
            .preempted_for
            .iter()
            .map(|(h, r)| (*h, *r))
            .collect();
        let params = self.params();
        for (h, amount) in entries {
            let mut left = amount;
            while left.any_positive()
                && self.active[h.index()]
                    .as_ref()
                    .is_some_and(|a| !a.finishing)
            {
                let ctx = Ctx {
                    tree: &self.tree,
                    nodes: &self.nodes,
                    node: self.nodes.get(idx),
                    node_idx: idx,
                    params,
                    now,
                };
                let app = self.active[h.index()].as_mut().expect("checked");
                let Some(decision @ Decision::Allocate { .. }) = decide(&ctx, app, None) else {
                    break;
                };
                let Some(resource) = self.commit(now, idx, decision, false) else {
                    break;
                };
                left -= resource;
            }
            let left = if left.any_positive() {
                left
            } else {
                Resource::ZERO
            };
            self.set_aside(idx, h, left);
        }
    }

    /// Drops the node's reservation, if any.
    pub(crate) fn release_reservation(&mut self, idx: NodeIdx, reason: &str) {
        let node = self.nodes.get_mut(idx);
        let Some(res) = node.reservation.take() else {
            return;
        };
        let node_id = node.id.clone();
        if let Some(app) = self.active[res.app.index()].as_mut() {
            app.reservations.remove(&idx);
            let app_id = app.id;
            self.events.push(Event::ReservationReleased {
                app: app_id,
                node: node_id,
                reason: reason.to_owned(),
            });
        }
    }
}

/// Hadoop's `FSAppAttempt.assignContainer(node)`, deciding only. With
/// `reserved_key`, only that key is tried (the node is reserved for it).
fn decide(ctx: &Ctx<'_>, app: &mut ActiveApp, reserved_key: Option<SchedKey>) -> Option<Decision> {
    let h = app.handle;
    let tree = ctx.tree;
    let node = ctx.node;
    if app.finishing || app.blacklist.contains(&node.name) || app.blacklist.contains(&node.rack) {
        return None;
    }
    // An app whose AM has not started may only take its AM container, and
    // only within the leaf's AM share.
    if !tree.app_am_started(h)
        && !tree.app_is_unmanaged(h)
        && (app.requests.first_key().is_none() || !tree.can_start_am(h))
    {
        return None;
    }
    let leaf = tree.app_queue(h);
    for (key, state) in app.requests.keys.iter_mut() {
        if let Some(reserved) = reserved_key {
            if *key != reserved {
                continue;
            }
        } else if !has_container_for_node(key, state, node)
            || !tree.fits_in_max_share(leaf, key.capability)
        {
            continue;
        }
        state.opportunities += 1;
        let allowed = allowed_locality(state, ctx);
        // Hadoop returns from the key loop once a level applies, whether or
        // not the container could be placed: lower priorities wait.
        if let Some(locality) = level_on_node(state, node, allowed) {
            return place(
                ctx,
                app.handle,
                &app.reservations,
                *key,
                locality,
                reserved_key.is_some(),
            );
        }
    }
    None
}

/// Whether an unreserved node with `available` room is walked at all on its
/// heartbeat: it can hold the smallest container. Weft offers a node only
/// while it can (Hadoop's continuous scheduler's rule; its heartbeat path
/// walks full nodes too). See docs/scheduling.md.
#[inline]
pub(crate) fn takes_offers(available: Resource, min: &Resource) -> bool {
    min.fits_in(&available)
}

/// The level at which a key with `allowed` locality takes `node` (node-local
/// if the node and its rack are asked for; rack-local if the rack is and the
/// level allows; off-switch if asked anywhere and the level allows, or
/// nothing more local is asked), or `None` when strict locality rules the
/// node out or the level does not reach it yet.
#[inline]
pub(crate) fn level_on_node(state: &KeyState, node: &Node, allowed: Locality) -> Option<Locality> {
    let rack_count = state.rack_count(&node.rack);
    let node_count = state.node_count(&node.name);
    if rack_count > 0 && node_count > 0 {
        return Some(Locality::NodeLocal);
    }
    if !state.can_relax_beyond(Location::Rack(&node.rack)) {
        return None;
    }
    if rack_count > 0 && allowed >= Locality::RackLocal {
        return Some(Locality::RackLocal);
    }
    if !state.can_relax_beyond(Location::Any) {
        return None;
    }
    // The level check first: it spares counting locations when it decides.
    if state.any_count() > 0 && (allowed == Locality::OffSwitch || state.unique_locations() <= 1) {
        return Some(Locality::OffSwitch);
    }
    None
}

/// True when the app's usage is below its fair share under its leaf's
/// policy: the starvation that lets it reserve a node.
#[inline]
pub(crate) fn below_fair_share(tree: &QueueTree, h: AppHandle) -> bool {
    let policy = tree.queue_settings(tree.app_queue(h)).policy;
    policy_compare(
        policy,
        &tree.cluster_capacity(),
        &tree.app_usage(h),
        &tree.app_fair_share(h),
    ) == Ordering::Less
}

/// True when a container of `capability` is at least the reservation
/// threshold, compared under the app's leaf's policy.
#[inline]
pub(crate) fn reaches_reservation_threshold(
    tree: &QueueTree,
    h: AppHandle,
    capability: &Resource,
    threshold: &Resource,
) -> bool {
    let policy = tree.queue_settings(tree.app_queue(h)).policy;
    policy_compare(policy, &tree.cluster_capacity(), capability, threshold) != Ordering::Less
}

/// Allocate if the container fits the node's free resources, else reserve
/// if Hadoop's rules allow it.
fn place(
    ctx: &Ctx<'_>,
    h: AppHandle,
    reservations: &std::collections::BTreeSet<NodeIdx>,
    key: SchedKey,
    locality: Locality,
    reserved: bool,
) -> Option<Decision> {
    let node = ctx.node;
    if key.capability.fits_in(&node.available()) {
        return Some(Decision::Allocate {
            app: h,
            key,
            locality,
        });
    }
    if reserved {
        // The reservation stays; nothing changes until the node has room.
        return None;
    }
    let tree = ctx.tree;
    let starved = below_fair_share(tree, h);
    let big_enough =
        reaches_reservation_threshold(tree, h, &key.capability, &ctx.params.reservation_threshold);
    let free_for_app = node.reservation.is_none_or(|r| r.app == h);
    let waiting_for_preempted = node.preempted_for.contains_key(&h);
    if !starved || !big_enough || !free_for_app || waiting_for_preempted {
        return None;
    }
    if locality != Locality::NodeLocal {
        // Cap reservations for relaxed requests at a share of the rack's (or
        // the cluster's) nodes.
        let off_switch = locality == Locality::OffSwitch;
        let existing = reservations
            .iter()
            .filter(|idx| **idx != ctx.node_idx)
            .filter(|idx| off_switch || ctx.nodes.get(**idx).rack == node.rack)
            .count();
        let total = if off_switch {
            ctx.params.n_nodes as usize
        } else {
            ctx.nodes.n_in_rack(&node.rack)
        };
        let allowed = reservable_nodes_allowed(total, ctx.params.reservable_nodes);
        if existing >= allowed {
            return None;
        }
    }
    Some(Decision::Reserve {
        app: h,
        key,
        locality,
    })
}

/// How many of `total` nodes may hold an app's reservations, as Hadoop's
/// `isReservable` counts them: `(int) Math.ceil(total * ratio)` with the
/// ratio read by `getFloat`, so the product is a `float` (0.07 of 100 nodes
/// is 7 there, where the exact decimal would give 8).
fn reservable_nodes_allowed(total: usize, ratio: f64) -> usize {
    ((total as f32) * (ratio as f32)).ceil() as usize
}

/// Hadoop's `hasContainerForNode`: something is asked anywhere; if the app
/// will not relax beyond its racks, this node's rack is asked for; if it will
/// not relax beyond this rack, this node is asked for; and the container fits
/// the node's total capability.
pub(crate) fn has_container_for_node(key: &SchedKey, state: &KeyState, node: &Node) -> bool {
    let any = state.any_count() > 0;
    let rack_asked = state.rack_count(&node.rack) > 0;
    let node_asked = state.node_count(&node.name) > 0;
    any && (state.can_relax_beyond(Location::Any) || rack_asked)
        && (!rack_asked || state.can_relax_beyond(Location::Rack(&node.rack)) || node_asked)
        && key.capability.fits_in(&node.capability)
}

/// The locality level a key may use now (delay scheduling), raising it when
/// enough opportunities were passed over or enough time went by.
fn allowed_locality(state: &mut KeyState, ctx: &Ctx<'_>) -> Locality {
    let step = locality_step(
        state,
        state.opportunities,
        ctx.params.relaxation,
        ctx.params.n_nodes,
        ctx.now,
    );
    match step {
        LocalityStep::Stay(level) => level,
        LocalityStep::Start | LocalityStep::Rise(_) => {
            let level = step.level();
            state.allowed = Some(level);
            if matches!(step, LocalityStep::Rise(_)) {
                state.opportunities = 0;
            }
            state.last_scheduled = Some(ctx.now);
            level
        }
    }
}

/// What delay scheduling does to a key's level when it is offered a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LocalityStep {
    /// The level stays (off-switch at once when delay scheduling is off).
    Stay(Locality),
    /// The key's first offer: it starts at node-local.
    Start,
    /// Enough opportunities were passed over, or time went by: the level
    /// rises to this one.
    Rise(Locality),
}

impl LocalityStep {
    /// The level the key is offered the node at.
    #[inline]
    pub(crate) fn level(self) -> Locality {
        match self {
            LocalityStep::Stay(level) | LocalityStep::Rise(level) => level,
            LocalityStep::Start => Locality::NodeLocal,
        }
    }
}

/// The step `allowed_locality` takes for a key with `state` when it has
/// counted `opportunities` (this offer included) at `now`, without taking it:
/// the scheduler applies it, an explanation reports it.
#[inline]
pub(crate) fn locality_step(
    state: &KeyState,
    opportunities: u64,
    relaxation: LocalityRelaxation,
    n_nodes: u32,
    now: Time,
) -> LocalityStep {
    let LocalityRelaxation::Delayed {
        opportunities: by_count,
        time,
    } = relaxation
    else {
        return LocalityStep::Stay(Locality::OffSwitch);
    };
    let Some(allowed) = state.allowed else {
        return LocalityStep::Start;
    };
    if allowed == Locality::OffSwitch {
        return LocalityStep::Stay(allowed);
    }
    let at_node = allowed == Locality::NodeLocal;
    let by_opportunities = by_count.is_some_and(|t| {
        let threshold = if at_node { t.node.get() } else { t.rack.get() };
        opportunities as f64 > f64::from(n_nodes) * threshold
    });
    let by_time = time.is_some_and(|t| {
        let wait = if at_node { t.node } else { t.rack };
        state
            .last_scheduled
            .is_some_and(|since| now.since(since) > wait)
    });
    if by_opportunities || by_time {
        LocalityStep::Rise(if at_node {
            Locality::RackLocal
        } else {
            Locality::OffSwitch
        })
    } else {
        LocalityStep::Stay(allowed)
    }
}

#[cfg(test)]
mod tests {
    use super::reservable_nodes_allowed;

    #[test]
    fn reservable_nodes_are_counted_in_floats() {
        // Each differs from the exact decimal's ceiling.
        assert_eq!(reservable_nodes_allowed(100, 0.07), 7);
        assert_eq!(reservable_nodes_allowed(100, 0.15), 16);
        assert_eq!(reservable_nodes_allowed(200, 0.55), 110);
        // The default, and the edges.
        assert_eq!(reservable_nodes_allowed(100, 0.05), 5);
        assert_eq!(reservable_nodes_allowed(1, 0.05), 1);
        assert_eq!(reservable_nodes_allowed(0, 0.05), 0);
        assert_eq!(reservable_nodes_allowed(10, 1.0), 10);
        assert_eq!(reservable_nodes_allowed(10, 0.0), 0);
    }
}
