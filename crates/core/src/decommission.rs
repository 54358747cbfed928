//! Graceful decommissioning (YARN's DECOMMISSIONING state): a draining node
//! takes no new containers, and leaves as decommissioned once its containers
//! (and, if asked, the apps that ran them) are done, or when its time is up.
//!
//! Which hosts an operator wants out (Hadoop's include and exclude files) is
//! the driver's business; it tells the core node by node. Forced
//! decommissioning is `NodeUnregistered` in `node_events`.
//!
//! As in Hadoop, a draining node's capability shrinks to what its containers
//! hold and goes down with every container that ends, so the cluster's size,
//! and with it every fair share, counts only room some app can still get.
//! Nothing else needs to know about draining: with no room left, the node
//! is never walked and takes no reservation.

use std::collections::BTreeSet;

use weft_model::{AppId, NodeId, Resource, Time};

use crate::input::Drain;
use crate::nodes::{Draining, NodeIdx, Overcommit};
use crate::output::{NodeError, NodeState};
use crate::rm::{ResourceManager, first_due};

impl ResourceManager {
    /// The apps a draining node waits for before it leaves (empty for a
    /// node not draining, or draining without waiting for apps), so that a
    /// driver can keep them across a restart of its own.
    pub fn drain_apps(&self, node: &NodeId) -> Vec<AppId> {
        self.nodes
            .lookup(node)
            .and_then(|idx| self.nodes.get(idx).draining.as_ref())
            .map(|d| d.apps.iter().copied().collect())
            .unwrap_or_default()
    }

    pub(crate) fn decommission_node(
        &mut self,
        now: Time,
        node: &NodeId,
        drain: Drain,
    ) -> Result<NodeState, NodeError> {
        let Some(idx) = self.nodes.lookup(node) else {
            if !self.inactive_nodes.contains_key(node) {
                return Err(NodeError::NotRegistered(node.clone()));
            }
            self.decommission_departed(now, node);
            return Ok(NodeState::Decommissioned);
        };
        let n = self.nodes.get(idx);
        // The apps with containers here now (all it has ever held while
        // draining, since it takes no new containers), and the live ones
        // among those the driver names.
        let holders = || -> BTreeSet<AppId> {
            let live = |app: &&AppId| self.apps.get(app).is_some_and(|r| !r.state.is_final());
            n.containers
                .iter()
                .map(|c| self.active(self.container(*c).app).id)
                .chain(drain.also_wait_for.iter().filter(live).copied())
                .collect()
        };
        let draining = match &n.draining {
            Some(d) => {
                // New terms for a drain under way: the clock keeps running
                // from its start.
                let mut d = d.clone();
                d.deadline = drain.timeout.map(|t| d.started + t);
                d.apps = if drain.wait_for_apps {
                    let mut apps = holders();
                    apps.extend(&d.apps);
                    apps
                } else {
                    BTreeSet::new()
                };
                d
            }
            None => Box::new(Draining {
                started: now,
                deadline: drain.timeout.map(|t| now + t),
                full_capability: self.usable_capability(idx),
                apps: if drain.wait_for_apps {
                    holders()
                } else {
                    BTreeSet::new()
                },
            }),
        };
        if n.draining.is_none() {
            let reason = match drain.timeout {
                Some(t) => format!("decommissioning gracefully by an operator (timeout {t})"),
                None => "decommissioning gracefully by an operator (no timeout)".to_owned(),
            };
            self.node_state_changed(node.clone(), NodeState::Decommissioning, reason);
        }
        self.start_draining(idx, draining);
        // New terms may put the deadline in the past: the node leaves now.
        self.expire_drains(now);
        if self.nodes.lookup(node) != Some(idx) {
            return Ok(NodeState::Decommissioned);
        }
        if self.drained(idx) {
            self.remove_node(
                now,
                idx,
                NodeState::Decommissioned,
                "decommissioned gracefully: nothing left to drain",
            );
            return Ok(NodeState::Decommissioned);
        }
        Ok(NodeState::Decommissioning)
    }

    /// Puts a node into (or keeps it in) the draining state with these terms:
    /// its room goes, with its reservation and any room preemption set aside
    /// on it, since nobody can be given it any more.
    pub(crate) fn start_draining(&mut self, idx: NodeIdx, draining: Box<Draining>) {
        // The drain's own terms govern now; its room to give back is the
        // size the operator set (`draining.full_capability`).
        self.clear_overcommit(idx);
        self.release_reservation(idx, "its node is being decommissioned");
        self.clear_node_set_asides(idx);
        let nodes = &mut self.nodes;
        if let Some(at) = nodes.get(idx).draining.as_ref().and_then(|d| d.deadline) {
            nodes.drain_deadlines.remove(&(at, idx));
        }
        if let Some(at) = draining.deadline {
            nodes.drain_deadlines.insert((at, idx));
        }
        nodes.draining.insert(idx);
        let node = nodes.get_mut(idx);
        node.draining = Some(draining);
        // An unhealthy node holds nothing: draining, it leaves at once.
        node.unhealthy = None;
        node.state = NodeState::Decommissioning;
        let idle = node.capability - node.allocated;
        node.capability = node.allocated;
        nodes.capacity -= idle;
        self.capacity_changed();
    }

    pub(crate) fn recommission_node(&mut self, node: &NodeId) -> Result<NodeState, NodeError> {
        let Some(idx) = self.nodes.lookup(node) else {
            // One that left stays out of the cluster until it registers again,
            // which the driver now lets it do.
            return match self.inactive_nodes.get(node) {
                Some(gone) => Ok(gone.state),
                None => Err(NodeError::NotRegistered(node.clone())),
            };
        };
        let nodes = &mut self.nodes;
        let Some(draining) = nodes.get_mut(idx).draining.take() else {
            return Ok(NodeState::Running);
        };
        nodes.draining.remove(&idx);
        if let Some(at) = draining.deadline {
            nodes.drain_deadlines.remove(&(at, idx));
        }
        let n = nodes.get_mut(idx);
        n.state = NodeState::Running;
        // What it offered before (or was resized to while draining); if its
        // containers hold more, it is over-committed until they end.
        let target = draining.full_capability;
        let offering = target.component_max(n.allocated);
        if offering != target {
            n.overcommit = Some(Box::new(Overcommit {
                target,
                deadline: None,
            }));
        }
        self.set_offering(idx, offering);
        self.node_state_changed(
            node.clone(),
            NodeState::Running,
            "recommissioned by an operator".to_owned(),
        );
        Ok(NodeState::Running)
    }

    /// A container on a draining node ended: the node's room goes with it.
    pub(crate) fn drain_container_ended(&mut self, idx: NodeIdx, resource: Resource) {
        self.nodes.get_mut(idx).capability -= resource;
        self.nodes.capacity -= resource;
        self.capacity_changed();
    }

    /// Decommissions every draining node that has drained; called after each
    /// input, since any input may end a node's last container or app.
    pub(crate) fn finish_drained_nodes(&mut self, now: Time) {
        if self.nodes.draining.is_empty() {
            return;
        }
        let nodes: Vec<NodeIdx> = self.nodes.draining.iter().copied().collect();
        for idx in nodes {
            if self.drained(idx) {
                self.remove_node(
                    now,
                    idx,
                    NodeState::Decommissioned,
                    "decommissioned gracefully: drained",
                );
            }
        }
    }

    /// Decommissions draining nodes whose time is up; their containers are lost.
    pub(crate) fn expire_drains(&mut self, now: Time) {
        while let Some((deadline, idx)) = first_due(&self.nodes.drain_deadlines, now) {
            let started = self.nodes.get(idx).draining.as_ref().map(|d| d.started);
            let took = started.map_or(weft_model::Duration::ZERO, |s| deadline.since(s));
            let reason =
                format!("decommissioned: its graceful decommission timed out after {took}");
            self.remove_node(now, idx, NodeState::Decommissioned, &reason);
        }
    }

    /// True when a draining node holds no container and no app it waits for
    /// is still running. Apps that ended are forgotten as a side effect.
    fn drained(&mut self, idx: NodeIdx) -> bool {
        let node = self.nodes.get(idx);
        if !node.containers.is_empty() {
            return false;
        }
        let Some(d) = &node.draining else {
            return false;
        };
        if d.apps.is_empty() {
            return true;
        }
        let running: Vec<AppId> = d
            .apps
            .iter()
            .copied()
            .filter(|app| self.apps.get(app).is_some_and(|r| !r.state.is_final()))
            .collect();
        let done = running.is_empty();
        if let Some(d) = &mut self.nodes.get_mut(idx).draining {
            d.apps = running.into_iter().collect();
        }
        done
    }

    /// Marks a node that already left (lost, shut down) as decommissioned:
    /// it has nothing to drain, and its heartbeats are now told to shut down.
    pub(crate) fn decommission_departed(&mut self, now: Time, node: &NodeId) {
        if let Some(gone) = self.inactive_nodes.get_mut(node)
            && gone.state != NodeState::Decommissioned
        {
            gone.state = NodeState::Decommissioned;
            gone.since = now;
            self.node_state_changed(
                node.clone(),
                NodeState::Decommissioned,
                "decommissioned by an operator after it left".to_owned(),
            );
        }
    }

    /// The error for a node input naming a node that is not registered.
    pub(crate) fn unknown_node(&self, node: &NodeId) -> NodeError {
        match self.inactive_nodes.get(node) {
            Some(n) if n.state == NodeState::Decommissioned => {
                NodeError::Decommissioned(node.clone())
            }
            _ => NodeError::NotRegistered(node.clone()),
        }
    }
}
