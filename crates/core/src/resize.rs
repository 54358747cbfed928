//! Resizing a node at an operator's request (YARN's `updateNodeResource`):
//! what it offers from now on, and what happens while its containers hold
//! more than that.
//!
//! A node resized below what its containers hold is over-committed: it
//! offers exactly what they hold (per resource type, the larger of that and
//! its new size), so it takes nothing new, and shrinks with every container
//! that ends until it reaches its new size. With a timeout, the containers
//! still past the new size then are stopped, the newest first, as Hadoop's
//! over-commit timeout has it; without one they run to their end. Either
//! way no node is ever booked over what it offers.

use weft_model::{Duration, NodeId, Resource, Time};

use crate::nodes::{NodeIdx, Overcommit};
use crate::output::{Event, NodeError, StopReason, exit_status};
use crate::rm::{ResourceManager, first_due};

impl ResourceManager {
    /// A registered node's size: what it offers once back in service with
    /// its containers fitting, whatever a drain, ill health or an
    /// over-commitment make it offer now (the size it registered with or
    /// was last resized to); `None` for a node not registered. Drivers
    /// compare it with a size they mean to give the node.
    pub fn node_size(&self, node: &NodeId) -> Option<Resource> {
        let idx = self.nodes.lookup(node)?;
        Some(match &self.nodes.get(idx).draining {
            Some(d) => d.full_capability,
            None => self.usable_capability(idx),
        })
    }

    pub(crate) fn resize_node(
        &mut self,
        now: Time,
        node: &NodeId,
        capability: Resource,
        overcommit_timeout: Option<Duration>,
    ) -> Result<Resource, NodeError> {
        let Some(idx) = self.nodes.lookup(node) else {
            return Err(self.unknown_node(node));
        };
        self.check_capability(node, capability)?;
        self.clear_overcommit(idx);
        let n = self.nodes.get_mut(idx);
        // A draining or unhealthy node offers nothing new anyway: the new
        // size is what it gives back when it returns to service.
        if let Some(d) = &mut n.draining {
            d.full_capability = capability;
        } else if let Some(u) = &mut n.unhealthy {
            u.full_capability = capability;
        } else {
            let offering = capability.component_max(n.allocated);
            if offering != capability {
                let deadline = overcommit_timeout.map(|t| now + t);
                n.overcommit = Some(Box::new(Overcommit {
                    target: capability,
                    deadline,
                }));
                if let Some(at) = deadline {
                    self.nodes.overcommit_deadlines.insert((at, idx));
                }
            }
            self.set_offering(idx, offering);
        }
        let offering = self.nodes.get(idx).capability;
        self.events.push(Event::NodeResized {
            node: node.clone(),
            capability,
            offering,
        });
        // A timeout of zero, or one already due, acts now.
        self.expire_overcommits(now);
        Ok(self.nodes.get(idx).capability)
    }

    /// A container on an over-committed node ended: it offers what is left
    /// above its new size, or its new size once its containers fit.
    pub(crate) fn overcommitted_container_ended(&mut self, idx: NodeIdx) {
        let node = self.nodes.get(idx);
        let Some(o) = &node.overcommit else {
            return;
        };
        let offering = o.target.component_max(node.allocated);
        if offering == o.target {
            self.clear_overcommit(idx);
        }
        self.set_offering(idx, offering);
    }

    /// Stops the containers past their node's new size where the
    /// over-commit timeout has passed, the newest first.
    pub(crate) fn expire_overcommits(&mut self, now: Time) {
        while let Some((deadline, idx)) = first_due(&self.nodes.overcommit_deadlines, now) {
            self.nodes.overcommit_deadlines.remove(&(deadline, idx));
            if let Some(o) = &mut self.nodes.get_mut(idx).overcommit {
                o.deadline = None;
            }
            while let Some(c) = self.newest_container_over(idx) {
                self.end_container(
                    now,
                    c,
                    exit_status::PREEMPTED,
                    "container stopped: its node was made smaller and the over-commit timeout passed",
                    Some(StopReason::NoRoom),
                );
            }
            // The last container's end cleared the over-commit; a draining
            // node's (whose ends do not look at it) is cleared here.
            self.clear_overcommit(idx);
        }
    }

    /// The newest container on an over-committed node while its containers
    /// do not fit its new size.
    fn newest_container_over(&self, idx: NodeIdx) -> Option<crate::nodes::ContainerIdx> {
        let node = self.nodes.try_get(idx)?;
        let o = node.overcommit.as_ref()?;
        if node.allocated.fits_in(&o.target) {
            return None;
        }
        node.containers.iter().copied().max_by_key(|c| {
            let c = self.container(*c);
            (c.allocated_at, c.id)
        })
    }

    pub(crate) fn clear_overcommit(&mut self, idx: NodeIdx) {
        if let Some(o) = self.nodes.get_mut(idx).overcommit.take()
            && let Some(at) = o.deadline
        {
            self.nodes.overcommit_deadlines.remove(&(at, idx));
        }
    }

    /// Sets what a node offers, keeping the cluster's total in step.
    pub(crate) fn set_offering(&mut self, idx: NodeIdx, offering: Resource) {
        let node = self.nodes.get_mut(idx);
        let old = node.capability;
        if old == offering {
            return;
        }
        node.capability = offering;
        self.nodes.capacity = self.nodes.capacity - old + offering;
        self.capacity_changed();
    }
}
