//! `ResourceManager::check_invariants`: the core's books checked from scratch
//! (nodes within capacity, queues within max shares, usage sums consistent
//! from containers up to root, every container owned by exactly one app and
//! one node), for tests, property tests and the simulator after every step.

use std::collections::BTreeMap;

use weft_model::Resource;

use crate::output::NodeState;
use crate::rm::ResourceManager;

/// Broken books: always a bug in Weft, never bad input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("resource manager invariants broken:\n{}", .problems.join("\n"))]
pub struct CoreInvariantViolation {
    /// One line per problem.
    pub problems: Vec<String>,
}

impl ResourceManager {
    /// Checks every invariant the core maintains, and the tree's.
    pub fn check_invariants(&self) -> Result<(), CoreInvariantViolation> {
        let mut problems = Vec::new();
        if let Err(e) = self.tree.check_invariants() {
            problems.extend(e.problems);
        }
        let mut per_app: BTreeMap<usize, Resource> = BTreeMap::new();
        let mut capacity = Resource::ZERO;
        let mut n_filed = 0;
        for idx in self.nodes.indices() {
            let node = self.nodes.get(idx);
            capacity += node.capability;
            // Filed for liveness exactly once, no later than its deadline.
            if !self.nodes.expiries.contains(&(node.filed_expiry, idx))
                || node.filed_expiry > node.expires
            {
                problems.push(format!(
                    "node {} is filed for liveness at {} with its deadline at {}",
                    node.id, node.filed_expiry, node.expires
                ));
            }
            n_filed += 1;
            let mut sum = Resource::ZERO;
            for (pos, c) in node.containers.iter().enumerate() {
                let Some(container) = self.containers.get(*c) else {
                    problems.push(format!("node {} lists a freed container slot", node.id));
                    continue;
                };
                if container.node != idx || container.node_pos as usize != pos {
                    problems.push(format!(
                        "container {} is misfiled on node {}",
                        container.id, node.id
                    ));
                }
                sum += container.resource;
                *per_app.entry(container.app.index()).or_default() += container.resource;
                let owned = self.active[container.app.index()]
                    .as_ref()
                    .is_some_and(|a| {
                        a.containers.get(&container.id.seq) == Some(c)
                            && a.attempt == container.id.attempt
                    });
                if !owned {
                    problems.push(format!(
                        "container {} is not owned by its app's current attempt",
                        container.id
                    ));
                }
            }
            if sum != node.allocated {
                problems.push(format!(
                    "node {} books {} allocated but its containers hold {sum}",
                    node.id, node.allocated
                ));
            }
            if !node.allocated.fits_in(&node.capability) {
                problems.push(format!(
                    "node {} is over capacity: {} of {}",
                    node.id, node.allocated, node.capability
                ));
            }
            for h in node.preempted_for.keys() {
                if !self.active[h.index()]
                    .as_ref()
                    .is_some_and(|a| a.set_aside_on.contains(&idx))
                {
                    problems.push(format!(
                        "node {} sets room aside for an app that does not list it",
                        node.id
                    ));
                }
            }
            if let Some(r) = node.reservation
                && !self.active[r.app.index()]
                    .as_ref()
                    .is_some_and(|a| a.reservations.contains(&idx))
            {
                problems.push(format!(
                    "node {} is reserved for an app that does not know it",
                    node.id
                ));
            }
        }
        if n_filed != self.nodes.expiries.len() {
            problems.push(format!(
                "{} liveness entries for {n_filed} nodes",
                self.nodes.expiries.len()
            ));
        }
        self.check_draining(&mut problems);
        if capacity != self.nodes.capacity {
            problems.push(format!(
                "cluster capacity is booked as {} but nodes sum to {capacity}",
                self.nodes.capacity
            ));
        }
        let mut n_live = 0;
        for (i, app) in self.active.iter().enumerate() {
            let Some(app) = app else { continue };
            n_live += app.containers.len();
            if app.node_updates_seen > self.node_updates.end() {
                problems.push(format!(
                    "app {} has read past the end of the node changes",
                    app.id
                ));
            }
            let held = per_app.get(&i).copied().unwrap_or(Resource::ZERO);
            let usage = self.tree.app_usage(app.handle);
            if held != usage {
                problems.push(format!(
                    "app {} uses {usage} in the tree but its containers hold {held}",
                    app.id
                ));
            }
            let (n_am, n_other) = app.holdings.counts();
            let ams = app
                .containers
                .values()
                .filter(|c| self.container(**c).is_am)
                .count() as u32;
            if (n_am, n_other) != (ams, app.containers.len() as u32 - ams) {
                problems.push(format!(
                    "app {} counts {n_am} AM and {n_other} other containers, holds {ams} AM of {}",
                    app.id,
                    app.containers.len()
                ));
            }
            if let Some(least) = app.holdings.least_other() {
                let below = app.containers.values().any(|c| {
                    let c = self.container(*c);
                    !c.is_am && !least.fits_in(&c.resource)
                });
                if below {
                    problems.push(format!(
                        "app {} holds a container below its recorded least size {least}",
                        app.id
                    ));
                }
            }
            if app.requests.pending() != self.tree.app_pending(app.handle) {
                problems.push(format!(
                    "app {} pending asks disagree with the tree",
                    app.id
                ));
            }
            for node in &app.set_aside_on {
                let ok = self
                    .nodes
                    .try_get(*node)
                    .is_some_and(|n| n.preempted_for.contains_key(&app.handle));
                if !ok {
                    problems.push(format!(
                        "app {} lists a node that sets no room aside for it",
                        app.id
                    ));
                }
            }
            for node in &app.reservations {
                let ok = self
                    .nodes
                    .try_get(*node)
                    .is_some_and(|n| n.reservation.is_some_and(|r| r.app == app.handle));
                if !ok {
                    problems.push(format!(
                        "app {} believes it holds a reservation it does not",
                        app.id
                    ));
                }
            }
        }
        if n_live != self.n_containers {
            problems.push(format!(
                "{} containers booked but apps hold {n_live}",
                self.n_containers
            ));
        }
        for id in self.tree.queue_ids() {
            let s = self.tree.queue_settings(id);
            let usage = self.tree.queue_usage(id);
            if !usage.fits_in(&s.max_share) && !self.max_shares_lowered {
                problems.push(format!(
                    "queue {} uses {usage}, over its max share {}",
                    self.tree.queue_path(id),
                    s.max_share
                ));
            }
        }
        // Every watched AM has exactly its deadline in the expiry set, and
        // the set holds nothing else (a stale entry would fail a new attempt).
        let mut watched = 0;
        for app in self.active.iter().flatten() {
            if let Some(t) = app.am_expires {
                watched += 1;
                if !self.am_expiries.contains(&(t, app.id)) {
                    problems.push(format!(
                        "{}'s AM deadline {t} is not in the expiry set",
                        app.id
                    ));
                }
            }
        }
        if watched != self.am_expiries.len() {
            problems.push(format!(
                "{} AM deadlines booked for {watched} watched AMs",
                self.am_expiries.len()
            ));
        }
        // The lifetime set holds exactly the live apps' expiries: a missing
        // entry would let an app outlive its lifetime, a stale one kill it
        // at a time it no longer has.
        let lifetimes: std::collections::BTreeSet<_> = self
            .apps
            .values()
            .filter(|r| r.handle.is_some())
            .filter_map(|r| Some((r.lifetime_expiry?, r.id)))
            .collect();
        if lifetimes != self.lifetime_expiries {
            problems.push(format!(
                "the lifetime deadlines {:?} are not the live apps' expiries {lifetimes:?}",
                self.lifetime_expiries
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(CoreInvariantViolation { problems })
        }
    }
}

impl ResourceManager {
    /// A draining node offers exactly what its containers hold (so nothing
    /// can be placed on it), is indexed as draining, and is indexed by its
    /// deadline if it has one.
    fn check_draining(&self, problems: &mut Vec<String>) {
        let mut draining = std::collections::BTreeSet::new();
        let mut deadlines = std::collections::BTreeSet::new();
        let mut overcommit_deadlines = std::collections::BTreeSet::new();
        for idx in self.nodes.indices() {
            let node = self.nodes.get(idx);
            if let Some(o) = &node.overcommit {
                if let Some(at) = o.deadline {
                    overcommit_deadlines.insert((at, idx));
                }
                if node.draining.is_none()
                    && (node.capability != o.target.component_max(node.allocated)
                        || node.allocated.fits_in(&o.target))
                {
                    problems.push(format!(
                        "over-committed node {} offers {} for a size of {} with {} held",
                        node.id, node.capability, o.target, node.allocated
                    ));
                }
            }
            let Some(d) = &node.draining else {
                match (&node.unhealthy, node.state) {
                    (None, NodeState::Running) => {}
                    (Some(_), NodeState::Unhealthy) => {
                        if !node.capability.is_zero() || !node.containers.is_empty() {
                            problems.push(format!(
                                "unhealthy node {} offers {} and holds {} containers",
                                node.id,
                                node.capability,
                                node.containers.len()
                            ));
                        }
                    }
                    (_, state) => {
                        problems.push(format!("node {} is registered but {state:?}", node.id));
                    }
                }
                continue;
            };
            if node.unhealthy.is_some() {
                problems.push(format!("node {} is both draining and unhealthy", node.id));
            }
            draining.insert(idx);
            if let Some(at) = d.deadline {
                deadlines.insert((at, idx));
            }
            if node.state != NodeState::Decommissioning {
                problems.push(format!("node {} drains but is {:?}", node.id, node.state));
            }
            if node.capability != node.allocated {
                problems.push(format!(
                    "draining node {} offers {} but its containers hold {}",
                    node.id, node.capability, node.allocated
                ));
            }
        }
        if overcommit_deadlines != self.nodes.overcommit_deadlines {
            problems.push("the index of over-commit deadlines is stale".to_owned());
        }
        if draining != self.nodes.draining || deadlines != self.nodes.drain_deadlines {
            problems.push("the index of draining nodes or their deadlines is stale".to_owned());
        }
    }
}
