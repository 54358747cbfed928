//! Graceful decommissions (drains) across an RM restart, with a state
//! store: the actor records each drain's terms as a refresh starts or
//! changes it and drops them as it ends; at start it holds the stored
//! drains until their nodes register again, lets such a node in although
//! the lists keep it out, and at once puts it back to draining with what
//! is left of its time, so the containers it brings back run to their end.
//!
//! A stored drain whose node has not registered again within the node
//! liveness expiry (`yarn.nm.liveness-monitor.expiry-interval-ms`) of the
//! start ends there: had the RM stayed up, a node silent that long would
//! have been lost, which ends a drain too. Without a state store nothing
//! is kept, as in Hadoop, whose restarted RM refuses a draining node.
//!
//! Which nodes drain, on what terms, is still decided by the lists and the
//! refresh (`refresh_nodes`) and carried out by the core; the file is
//! `state_store::drains`'s.

use std::collections::BTreeMap;

use weft_core::{Drain, Input, NodeState, Reply};
use weft_model::{Duration, NodeId, Time};

use super::Actor;
use crate::hosts::{HostLists, TimeoutSecs};
use crate::state_store::drains::{DrainStore, StoredDrain};

/// What the actor keeps of drains for the state store.
#[derive(Debug)]
pub(crate) struct DrainRecovery {
    /// `None` without a state store: then nothing below is ever filled.
    store: Option<DrainStore>,
    /// Drains stored before the restart whose nodes have not registered
    /// since.
    waiting: BTreeMap<NodeId, StoredDrain>,
    /// When the drains still waiting end (core time): the start plus the
    /// node liveness expiry.
    wait_until: Time,
    /// For each drain taken back after a restart, how long it had run by
    /// then: the core counts it from its restore, but new terms count from
    /// its real start.
    ran_before: BTreeMap<NodeId, Duration>,
}

impl DrainRecovery {
    /// The store's drains as read at start, waiting for their nodes until
    /// `wait_until`.
    pub(crate) fn new(
        store: Option<DrainStore>,
        stored: Vec<StoredDrain>,
        wait_until: Time,
    ) -> DrainRecovery {
        DrainRecovery {
            store,
            waiting: stored.into_iter().map(|d| (d.node.clone(), d)).collect(),
            wait_until,
            ran_before: BTreeMap::new(),
        }
    }

    /// Whether `node` has a stored drain to take back when it registers.
    pub(super) fn is_waiting(&self, node: &NodeId, now: Time) -> bool {
        now < self.wait_until && self.waiting.contains_key(node)
    }

    /// `node`'s drain ended (decommissioned, recommissioned, or the node
    /// left): its record goes.
    pub(super) fn ended(&mut self, node: &NodeId) {
        self.ran_before.remove(node);
        if let Some(store) = &mut self.store {
            store.ended(node);
        }
    }

    /// The terms the core is given for a drain of `node`: for a drain taken
    /// back after a restart, the timeout less what it had run before, so
    /// that the deadline still counts from its real start.
    pub(super) fn core_terms(&self, node: &NodeId, mut drain: Drain) -> Drain {
        if let Some(ran) = self.ran_before.get(node) {
            drain.timeout = drain
                .timeout
                .map(|t| Duration::from_millis(t.as_millis().saturating_sub(ran.as_millis())));
        }
        drain
    }

    /// The lists changed: a waiting drain of a node they allow again ends
    /// (the node will register as any other), and so does every other one
    /// on a refresh that is not graceful, which decommissions at once: the
    /// node will be refused. A graceful refresh leaves the stored terms.
    pub(super) fn lists_changed(&mut self, hosts: &HostLists, graceful: bool) {
        let ending: Vec<NodeId> = self
            .waiting
            .keys()
            .filter(|node| !graceful || hosts.check(node).is_ok())
            .cloned()
            .collect();
        for node in ending {
            tracing::info!(node = %node, "refresh-nodes ends the drain stored for a node that has not registered since the restart");
            self.waiting.remove(&node);
            self.ended(&node);
        }
    }

    /// Finishes a compaction of the file of drains whose thread is done.
    pub(super) fn poll_store(&mut self) {
        if let Some(store) = &mut self.store {
            store.poll();
        }
    }

    /// Ends the drains still waiting once their nodes' time to come back
    /// is up.
    pub(super) fn expire(&mut self, now: Time) {
        if self.waiting.is_empty() || now < self.wait_until {
            return;
        }
        for node in std::mem::take(&mut self.waiting).into_keys() {
            tracing::info!(node = %node, "a node whose drain was stored did not register again within the node liveness expiry of the restart: its drain ends, and while the lists keep it out it is refused");
            self.ended(&node);
        }
    }
}

impl Actor {
    /// A refresh put `node` into draining, or gave its drain new terms,
    /// with `timeout` and `wait_for_apps`: the store records them, with the
    /// deadline the core set.
    pub(super) fn record_drain(
        &mut self,
        now: Time,
        node: &NodeId,
        timeout: TimeoutSecs,
        wait_for_apps: bool,
    ) {
        let now_ms = self.clock.epoch_ms(now);
        let deadline_ms = self
            .core
            .node_report(node)
            .and_then(|r| r.drain_deadline)
            .map(|t| self.clock.epoch_ms(t));
        let apps = self.core.drain_apps(node);
        let Some(store) = &mut self.drain_recovery.store else {
            return;
        };
        let started_ms = store.get(node).map_or(now_ms, |d| d.started_ms);
        store.draining(StoredDrain {
            node: node.clone(),
            started_ms,
            deadline_ms,
            wait_for_apps,
            timeout,
            apps,
        });
    }

    /// `node` has just registered: a drain stored for it before the restart
    /// goes on, with what is left of its time (none left: it is
    /// decommissioned at once), unless the lists now allow the node.
    pub(super) fn restore_drain(&mut self, now: Time, node: &NodeId) {
        let waiting = self.drain_recovery.is_waiting(node, now);
        let Some(stored) = self.drain_recovery.waiting.remove(node) else {
            return;
        };
        if !waiting || self.hosts.check(node).is_ok() {
            tracing::info!(node = %node, "the node registered as any other: the drain stored for it before the restart ends");
            self.drain_recovery.ended(node);
            return;
        }
        let now_ms = self.clock.epoch_ms(now);
        let drain = Drain {
            timeout: stored
                .deadline_ms
                .map(|d| Duration::from_millis(d.saturating_sub(now_ms))),
            wait_for_apps: stored.wait_for_apps,
            also_wait_for: stored.apps.clone(),
        };
        let left = drain.timeout;
        let out = self.core.handle(
            now,
            Input::NodeDecommissioning {
                node: node.clone(),
                drain,
            },
        );
        self.absorb(now, &out.events);
        match out.reply {
            Reply::NodeState(Ok(NodeState::Decommissioning)) => {
                self.drain_timeouts.insert(node.clone(), stored.timeout);
                let ran = Duration::from_millis(now_ms.saturating_sub(stored.started_ms));
                self.drain_recovery.ran_before.insert(node.clone(), ran);
                match left {
                    Some(left) => {
                        tracing::info!(node = %node, timeout = %stored.timeout, left = %left, "node draining again: its drain was kept across the restart")
                    }
                    None => {
                        tracing::info!(node = %node, timeout = %stored.timeout, "node draining again: its drain was kept across the restart")
                    }
                }
            }
            // Its deadline passed while the RM was down. The core, which
            // counts the drain from now, would tell the node it timed out
            // after no time at all.
            Reply::NodeState(Ok(NodeState::Decommissioned)) if left == Some(Duration::ZERO) => {
                let why = format!(
                    "decommissioned: its graceful decommission timed out after {} while the resource manager was down",
                    stored.timeout
                );
                tracing::info!(node = %node, reason = %why, "node left at once");
                self.decommissioned.insert(node.clone(), why);
            }
            // With nothing left to drain, the core decommissioned it. Here
            // as above, the node's event has ended the record.
            Reply::NodeState(Ok(_)) => {}
            Reply::NodeState(Err(e)) => {
                tracing::warn!(node = %node, error = %e, "the scheduler refused to take back the drain stored for the node");
                self.drain_recovery.ended(node);
            }
            _ => {
                tracing::error!(node = %node, "the scheduler answered a drain's restore with an unexpected reply");
                self.drain_recovery.ended(node);
            }
        }
    }
}
