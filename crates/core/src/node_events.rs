//! Node inputs: registration (with container recovery after an RM restart),
//! heartbeats (container statuses, then scheduling on the node), clean
//! departure, and loss when a node misses its liveness deadline.
//!
//! Scheduling itself is `assign`'s; container bookkeeping is `containers`'.

use std::collections::BTreeSet;

use weft_model::{ContainerId, NodeId, Resource, ResourceType, Time};

use crate::containers::Container;
use crate::input::{ContainerState, NodeHeartbeat, NodeRegistration, RecoveredContainer};
use crate::nodes::{ContainerIdx, Node, NodeIdx};
use crate::output::{Event, HeartbeatReply, NodeError, NodeState, StopReason, exit_status};
use crate::rm::{InactiveNode, ResourceManager, first_due};

/// YARN numbers an attempt's containers from 1 in 40 bits (Hadoop's `long`
/// container id keeps the restart epoch above them): a recovered container
/// numbered outside that was never issued, and one near `u64::MAX` would
/// overflow its app's numbering.
const MAX_CONTAINER_SEQ: u64 = (1 << 40) - 1;

impl ResourceManager {
    /// Whether `node` may offer `capability`: at least the smallest
    /// container, and a cluster total that stays countable.
    pub(crate) fn check_capability(
        &self,
        node: &NodeId,
        capability: Resource,
    ) -> Result<(), NodeError> {
        let min = self.settings.scheduler.min_allocation();
        if capability.memory_mb() == 0 || capability.vcores() == 0 || !min.fits_in(&capability) {
            return Err(NodeError::BadCapability {
                node: node.clone(),
                capability,
                why: "a node must offer at least the minimum allocation of memory and vcores",
            });
        }
        // The cluster's total must stay countable: resource sums saturate at
        // `u64::MAX` (unbounded), and a saturated total cannot give a node back.
        let known = self.nodes.lookup(node);
        let others = self.nodes.capacity
            - known.map_or(Resource::ZERO, |idx| self.nodes.get(idx).capability);
        let countable = ResourceType::ALL.iter().all(|ty| {
            others
                .get(*ty)
                .checked_add(capability.get(*ty))
                .is_some_and(|total| total < u64::MAX)
        });
        if !countable {
            return Err(NodeError::BadCapability {
                node: node.clone(),
                capability,
                why: "added to the other nodes', the cluster's total would be too large to count",
            });
        }
        Ok(())
    }

    pub(crate) fn register_node(
        &mut self,
        now: Time,
        reg: NodeRegistration,
    ) -> Result<(), NodeError> {
        self.check_capability(&reg.node, reg.capability)?;
        let expires = now + self.settings.scheduler.nm_liveness_expiry;
        let listed: BTreeSet<ContainerId> = reg.running.iter().map(|c| c.container).collect();
        if let Some(idx) = self.nodes.lookup(&reg.node) {
            // A known node re-registering (it restarted, or the RM did not
            // hear from it): what it no longer runs is lost.
            // One at a time from the live list: losing an AM container ends
            // its attempt's other containers, some of which may be here.
            while let Some(c) = self
                .nodes
                .get(idx)
                .containers
                .iter()
                .copied()
                .find(|c| !listed.contains(&self.container(*c).id))
            {
                self.end_container(
                    now,
                    c,
                    exit_status::ABORTED,
                    "container lost: its node re-registered without it".to_owned(),
                    None,
                );
            }
            // A node that comes back smaller keeps what fits (in the order it
            // lists them) and stops the rest, so no node is ever booked over
            // its capability.
            while let Some(c) = self.first_container_over(idx, reg.capability) {
                self.end_container(
                    now,
                    c,
                    exit_status::ABORTED,
                    "container stopped: its node re-registered with less room than its containers hold"
                        .to_owned(),
                    Some(StopReason::NoRoom),
                );
            }
            self.release_reservation(idx, "its node re-registered");
            self.clear_node_set_asides(idx);
            let mut node = self.nodes.remove(idx);
            debug_assert!(
                node.containers
                    .iter()
                    .all(|c| listed.contains(&self.container(*c).id))
            );
            // Re-insert with the new details, keeping the containers it still runs.
            let kept = node.containers.clone();
            let new_idx = self.insert_node(now, &reg, expires);
            // Stop orders not yet delivered still stand.
            self.nodes.get_mut(new_idx).to_stop = node.to_stop;
            for c in kept {
                let container = self.containers.get_mut(c).expect("live container");
                container.node = new_idx;
                let resource = container.resource;
                let n = self.nodes.get_mut(new_idx);
                self.containers.get_mut(c).expect("live container").node_pos =
                    n.containers.len() as u32;
                n.containers.push(c);
                n.allocated += resource;
            }
            self.recover_containers(now, new_idx, &reg.running);
            // Restarting does not end a drain: it goes on with the node's new
            // capability to give back if the node is recommissioned.
            if let Some(mut draining) = node.draining.take() {
                draining.full_capability = reg.capability;
                self.start_draining(new_idx, draining);
            }
        } else {
            self.inactive_nodes.remove(&reg.node);
            let idx = self.insert_node(now, &reg, expires);
            self.recover_containers(now, idx, &reg.running);
        }
        self.node_changed(&reg.node);
        self.events.push(Event::NodeAdded {
            node: reg.node,
            rack: reg.rack,
            capability: reg.capability,
        });
        self.capacity_changed();
        Ok(())
    }

    /// The first of the node's containers that does not fit in `capability`
    /// once the ones before it are placed, if any.
    fn first_container_over(&self, idx: NodeIdx, capability: Resource) -> Option<ContainerIdx> {
        let mut room = capability;
        for c in &self.nodes.get(idx).containers {
            let resource = self.container(*c).resource;
            if !resource.fits_in(&room) {
                return Some(*c);
            }
            room -= resource;
        }
        None
    }

    fn insert_node(&mut self, now: Time, reg: &NodeRegistration, expires: Time) -> NodeIdx {
        let name = if self.settings.scheduler.include_port_in_node_name {
            reg.node.to_string()
        } else {
            reg.node.host().to_owned()
        };
        let rack = if reg.rack.is_empty() {
            "/default-rack".to_owned()
        } else {
            reg.rack.clone()
        };
        self.nodes.insert(Node {
            id: reg.node.clone(),
            name,
            rack,
            http_address: std::sync::Arc::from(reg.http_address.as_str()),
            capability: reg.capability,
            allocated: weft_model::Resource::ZERO,
            state: NodeState::Running,
            last_heartbeat: now,
            expires,
            filed_expiry: expires,
            containers: Vec::new(),
            reservation: None,
            preempted_for: Default::default(),
            to_stop: Vec::new(),
            new_allocations: Vec::new(),
            draining: None,
            unhealthy: None,
            overcommit: None,
        })
    }

    /// Re-attaches containers a node reports after an RM restart to their
    /// apps; ones whose app is gone, that do not fit, or that are numbered
    /// as no container ever is, are stopped.
    fn recover_containers(&mut self, now: Time, idx: NodeIdx, running: &[RecoveredContainer]) {
        for rc in running {
            let stopping = self
                .nodes
                .get(idx)
                .to_stop
                .iter()
                .any(|(c, _)| *c == rc.container);
            if stopping {
                continue;
            }
            // Known already: on this node it is a repeat; on another node,
            // this one runs a copy no app will ever hear of, so it stops.
            let elsewhere = match self.find_container(&rc.container) {
                Some(c) if self.containers.get(c).is_some_and(|c| c.node == idx) => continue,
                Some(_) => true,
                None => false,
            };
            let numbered = (1..=MAX_CONTAINER_SEQ).contains(&rc.container.seq) && !elsewhere;
            let handle = self
                .tree
                .app_handle(rc.container.app())
                .filter(|_| numbered);
            let usable = handle.filter(|h| {
                self.active[h.index()]
                    .as_ref()
                    .is_some_and(|a| a.attempt == rc.container.attempt && !a.finishing)
            });
            let fits = rc.resource.fits_in(&self.nodes.get(idx).available());
            let Some(h) = usable.filter(|_| fits) else {
                self.nodes
                    .get_mut(idx)
                    .to_stop
                    .push((rc.container, StopReason::Unknown));
                self.events.push(Event::ContainerStopOrdered {
                    container: rc.container,
                    node: self.nodes.get(idx).id.clone(),
                    reason: StopReason::Unknown,
                });
                continue;
            };
            let is_am = rc.container.seq == 1 && !self.tree.app_is_unmanaged(h);
            let node = self.nodes.get_mut(idx);
            let container = Container {
                id: rc.container,
                app: h,
                node: idx,
                node_pos: node.containers.len() as u32,
                resource: rc.resource,
                priority: rc.priority,
                is_am,
                running: true,
                allocated_at: now,
            };
            let cidx = self.containers.insert(container);
            self.n_containers += 1;
            let node = self.nodes.get_mut(idx);
            node.containers.push(cidx);
            node.allocated += rc.resource;
            self.tree.add_usage(h, rc.resource);
            // A running container is a fact, not a decision: it may put its
            // queue over a max share, which allocations never do.
            self.max_shares_lowered = true;
            if is_am {
                self.tree.am_started(h);
            }
            let app = self.active_mut(h);
            app.containers.insert(rc.container.seq, cidx);
            app.holdings.add(rc.resource, is_am);
            app.next_container_seq = app.next_container_seq.max(rc.container.seq + 1);
            app.launched = true;
            let app_id = app.id;
            if let Some(record) = self.apps.get_mut(&app_id) {
                record.launched.get_or_insert(now);
                // The AM of a recovered attempt may register again once its
                // container is back.
                if is_am {
                    record.am_container = Some(rc.container);
                }
            }
        }
    }

    pub(crate) fn node_heartbeat(
        &mut self,
        now: Time,
        hb: NodeHeartbeat,
    ) -> Result<HeartbeatReply, NodeError> {
        let Some(idx) = self.nodes.lookup(&hb.node) else {
            return Err(self.unknown_node(&hb.node));
        };
        self.flush_capacity();
        let expires = now + self.settings.scheduler.nm_liveness_expiry;
        self.nodes.touch(idx, now, expires);
        // Look every reported container up before acting on any: each
        // lookup is a chain of cache misses (the app's record, its container
        // window, the container), and chains issued back to back overlap
        // where one completion at a time would wait for each in turn.
        let mut reported = std::mem::take(&mut self.reported);
        reported.clear();
        reported.extend(hb.statuses.iter().map(|status| {
            self.find_container(&status.container)
                .filter(|c| self.container(*c).node == idx)
        }));
        for (status, found) in hb.statuses.iter().zip(&reported) {
            // An earlier status's completion may have ended this container
            // (an AM's ends its attempt's others): look again if so.
            let found = found.filter(|c| {
                self.containers
                    .get(*c)
                    .is_some_and(|k| k.id == status.container)
            });
            let found = match found {
                Some(c) => Some(c),
                None => self.find_container(&status.container),
            };
            match (found, status.state) {
                (Some(c), ContainerState::Running) => {
                    if self.container(c).node == idx {
                        self.containers.get_mut(c).expect("live container").running = true;
                    }
                }
                (Some(c), ContainerState::Complete { exit_status }) => {
                    if self.container(c).node == idx {
                        // The common case borrows a static text: no string per container.
                        let diagnostics: std::borrow::Cow<'static, str> = if exit_status == 0 {
                            "container exited successfully".into()
                        } else {
                            format!("container exited with status {exit_status}").into()
                        };
                        self.end_container(now, c, exit_status, diagnostics, None);
                    }
                }
                (None, ContainerState::Running) => {
                    // The RM no longer knows it (released, its app ended): stop it again.
                    let node = self.nodes.get_mut(idx);
                    if !node.to_stop.iter().any(|(id, _)| *id == status.container) {
                        node.to_stop.push((status.container, StopReason::Unknown));
                    }
                }
                // A completion the RM already processed (it ended the container itself).
                (None, ContainerState::Complete { .. }) => {}
            }
        }
        self.reported = reported;
        self.node_health(now, idx, hb.unhealthy);
        // What the heartbeat ended may have shrunk the cluster (a draining
        // node's last container, here or on another node through an
        // attempt's end; this node's health): the percentage max shares
        // the allocations below are held to must be the smaller ones.
        self.flush_capacity();
        let node = self.nodes.get_mut(idx);
        if node.new_allocations.capacity() == 0 {
            // Fill a buffer a driver gave back rather than grow a new one.
            std::mem::swap(&mut node.new_allocations, &mut self.spare_allocations);
        }
        self.schedule_node(now, idx);
        let node = self.nodes.get_mut(idx);
        Ok(HeartbeatReply {
            containers_to_stop: std::mem::take(&mut node.to_stop),
            allocated: std::mem::take(&mut node.new_allocations),
        })
    }

    pub(crate) fn unregister_node(
        &mut self,
        now: Time,
        node: &NodeId,
        decommissioned: bool,
    ) -> Result<(), NodeError> {
        let Some(idx) = self.nodes.lookup(node) else {
            if decommissioned && self.inactive_nodes.contains_key(node) {
                self.decommission_departed(now, node);
                return Ok(());
            }
            return Err(NodeError::NotRegistered(node.clone()));
        };
        let (state, reason) = if decommissioned {
            (NodeState::Decommissioned, "decommissioned by an operator")
        } else {
            (NodeState::Shutdown, "the node manager shut down")
        };
        self.remove_node(now, idx, state, reason);
        Ok(())
    }

    /// Declares lost every node whose liveness deadline has passed.
    pub(crate) fn expire_nodes(&mut self, now: Time) {
        while let Some((_, idx)) = first_due(&self.nodes.expiries, now) {
            if self.nodes.refile_if_heard(idx) {
                continue;
            }
            let silent = now.since(self.nodes.get(idx).last_heartbeat);
            let reason = format!(
                "no heartbeat for {silent} (liveness expiry {})",
                self.settings.scheduler.nm_liveness_expiry
            );
            self.remove_node(now, idx, NodeState::Lost, &reason);
        }
    }

    /// Takes a node out: its containers end as lost, its reservation goes,
    /// and the cluster shrinks.
    pub(crate) fn remove_node(&mut self, now: Time, idx: NodeIdx, state: NodeState, reason: &str) {
        self.release_reservation(idx, "its node left");
        // One at a time from the live list: losing an AM container ends its
        // attempt's other containers, some of which may be on this node.
        while let Some(&c) = self.nodes.get(idx).containers.last() {
            self.end_container(
                now,
                c,
                exit_status::ABORTED,
                format!("container lost with its node: {reason}"),
                None,
            );
        }
        self.clear_node_set_asides(idx);
        let node = self.nodes.remove(idx);
        self.inactive_nodes.insert(
            node.id.clone(),
            InactiveNode {
                rack: node.rack,
                // A drained or unhealthy node's own capability has shrunk
                // to nothing.
                capability: match (&node.draining, &node.unhealthy) {
                    (Some(d), _) => d.full_capability,
                    (None, Some(u)) => u.full_capability,
                    (None, None) => node.capability,
                },
                state,
                since: now,
                http_address: node.http_address.to_string(),
            },
        );
        self.node_state_changed(node.id, state, reason.to_owned());
        self.capacity_changed();
        self.flush_capacity();
    }

    /// The cluster's size changed; the tree learns it before it next schedules.
    pub(crate) fn capacity_changed(&mut self) {
        self.capacity_dirty = true;
    }

    /// Applies a pending cluster-size change to the tree (percentages, steady
    /// shares, DRF orderings). Deferred so that a burst of registrations
    /// costs one recomputation.
    pub(crate) fn flush_capacity(&mut self) {
        if self.capacity_dirty {
            self.capacity_dirty = false;
            // A smaller cluster lowers every percentage max share, which may
            // leave a queue above its max (a node left, drained, fell sick or
            // was made smaller): the books are right, allocations never do it.
            if !self.tree.cluster_capacity().fits_in(&self.nodes.capacity) {
                self.max_shares_lowered = true;
            }
            self.tree.set_cluster_capacity(self.nodes.capacity);
        }
    }
}
