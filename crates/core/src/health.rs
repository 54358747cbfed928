//! Node health: a node whose health checker reports it unfit (YARN's
//! UNHEALTHY) is taken out of scheduling while it keeps heartbeating, and
//! put back when it reports healthy again.
//!
//! As in Hadoop, an unhealthy node leaves the scheduler: its containers end
//! as lost (-100) and its node is told to stop them, so no work runs where
//! the RM no longer counts it; its capability is nothing until it recovers,
//! so shares count only usable nodes. A draining node ignores its
//! health, as Hadoop's does: it is leaving either way. Reports come with
//! heartbeats (`node_events`).

use weft_model::Time;

use crate::nodes::{NodeIdx, Unhealthy};
use crate::output::{NodeState, StopReason, exit_status};
use crate::rm::ResourceManager;

impl ResourceManager {
    /// Applies the health a heartbeat reports.
    pub(crate) fn node_health(&mut self, now: Time, idx: NodeIdx, unhealthy: Option<String>) {
        let node = self.nodes.get(idx);
        if node.draining.is_some() {
            return;
        }
        match (unhealthy, node.unhealthy.is_some()) {
            (Some(report), false) => self.mark_unhealthy(now, idx, report),
            (Some(report), true) => {
                if let Some(u) = &mut self.nodes.get_mut(idx).unhealthy {
                    u.report = report;
                }
            }
            (None, true) => self.mark_healthy(idx),
            (None, false) => {}
        }
    }

    fn mark_unhealthy(&mut self, now: Time, idx: NodeIdx, report: String) {
        self.release_reservation(idx, "its node is unhealthy");
        self.clear_node_set_asides(idx);
        // One at a time from the live list: losing an AM container ends its
        // attempt's other containers, some of which may be here.
        while let Some(&c) = self.nodes.get(idx).containers.last() {
            self.end_container(
                now,
                c,
                exit_status::ABORTED,
                format!("container lost: its node is unhealthy: {report}"),
                Some(StopReason::NodeUnhealthy),
            );
        }
        let nodes = &mut self.nodes;
        let node = nodes.get_mut(idx);
        let full_capability = std::mem::take(&mut node.capability);
        node.state = NodeState::Unhealthy;
        let reason = format!("its health checker reports: {report}");
        node.unhealthy = Some(Box::new(Unhealthy {
            full_capability,
            report,
        }));
        let id = node.id.clone();
        nodes.capacity -= full_capability;
        self.capacity_changed();
        self.node_state_changed(id, NodeState::Unhealthy, reason);
    }

    fn mark_healthy(&mut self, idx: NodeIdx) {
        let nodes = &mut self.nodes;
        let node = nodes.get_mut(idx);
        let Some(was) = node.unhealthy.take() else {
            return;
        };
        node.capability = was.full_capability;
        node.state = NodeState::Running;
        let id = node.id.clone();
        nodes.capacity += was.full_capability;
        self.capacity_changed();
        self.node_state_changed(
            id,
            NodeState::Running,
            "its health checker reports it healthy again".to_owned(),
        );
    }

    /// What a node offers when usable and its containers fit: its
    /// capability, what it had before it turned unhealthy, or the size an
    /// operator gave it below what its containers hold.
    pub(crate) fn usable_capability(&self, idx: NodeIdx) -> weft_model::Resource {
        let node = self.nodes.get(idx);
        match (&node.unhealthy, &node.overcommit) {
            (Some(u), _) => u.full_capability,
            (None, Some(o)) => o.target,
            (None, None) => node.capability,
        }
    }
}
