//! The node registry: each NodeManager's capability, allocation, containers,
//! reservation, preempted-resource hand-back list and liveness, plus racks.
//!
//! What runs on a node is decided in `assign`; this module keeps the books
//! and answers lookups by id, host and rack.

use std::collections::{BTreeMap, BTreeSet};

use weft_model::{NodeId, Priority, Resource, Time};

use crate::output::NodeState;
use crate::requests::SchedKey;

/// Index of a node in the registry's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct NodeIdx(pub(crate) u32);

/// Index of a container in the core's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ContainerIdx(pub(crate) u32);

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) id: NodeId,
    /// The name requests use for it: the host, or `host:port` when
    /// `include-port-in-node-name` is on.
    pub(crate) name: String,
    pub(crate) rack: String,
    pub(crate) http_address: std::sync::Arc<str>,
    pub(crate) capability: Resource,
    pub(crate) allocated: Resource,
    pub(crate) state: NodeState,
    pub(crate) last_heartbeat: Time,
    /// When the node is declared lost unless it heartbeats.
    pub(crate) expires: Time,
    /// Its key in `Nodes::expiries`: `expires` as it was when the node was
    /// last filed there, at or before `expires` (see `Nodes::touch`).
    pub(crate) filed_expiry: Time,
    /// Live containers on the node, each knowing its position here.
    pub(crate) containers: Vec<ContainerIdx>,
    pub(crate) reservation: Option<Reservation>,
    /// Resources freed by preemption for a starved app: offered to it first.
    pub(crate) preempted_for: BTreeMap<weft_queue_tree::AppHandle, Resource>,
    /// Containers the node must stop, delivered with its next heartbeat reply.
    pub(crate) to_stop: Vec<(weft_model::ContainerId, crate::output::StopReason)>,
    /// Containers allocated here since the node's last heartbeat.
    pub(crate) new_allocations: Vec<crate::output::AllocatedContainer>,
    /// Set while the node drains (`decommission`); its capability then
    /// shrinks to what its containers hold.
    pub(crate) draining: Option<Box<Draining>>,
    /// Set while the node reports itself unhealthy: its capability is then
    /// nothing, and this keeps what it offers once healthy again.
    pub(crate) unhealthy: Option<Box<Unhealthy>>,
    /// Set while an operator has made the node smaller than what its
    /// containers hold (`resize`).
    pub(crate) overcommit: Option<Box<Overcommit>>,
}

/// A node resized below what its containers hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Overcommit {
    /// What it is to offer once its containers fit.
    pub(crate) target: Resource,
    /// When containers past `target` are stopped; its key in
    /// `Nodes::overcommit_deadlines`.
    pub(crate) deadline: Option<Time>,
}

/// A node whose health checker says it is unfit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unhealthy {
    pub(crate) full_capability: Resource,
    /// The health checker's words.
    pub(crate) report: String,
}

/// A node being decommissioned gracefully.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Draining {
    pub(crate) started: Time,
    /// When its remaining containers are lost with it; its key in
    /// `Nodes::drain_deadlines`.
    pub(crate) deadline: Option<Time>,
    /// What it offered before it started draining, given back if an
    /// operator recommissions it.
    pub(crate) full_capability: Resource,
    /// Apps that held containers on it when it started draining, still
    /// waited for (empty unless the drain waits for apps).
    pub(crate) apps: BTreeSet<weft_model::AppId>,
}

/// A node held for one app's container that did not fit yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reservation {
    /// The app.
    pub(crate) app: weft_queue_tree::AppHandle,
    pub(crate) key: SchedKey,
    pub(crate) priority: Priority,
    pub(crate) resource: Resource,
    pub(crate) off_switch: bool,
}

impl Node {
    /// Unallocated resources (reservations do not count as allocated).
    pub(crate) fn available(&self) -> Resource {
        self.capability - self.allocated
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Nodes {
    pub(crate) arena: Vec<Option<Node>>,
    free: Vec<u32>,
    /// Every node by id, in id order (reports, invariant checks).
    by_id: BTreeMap<NodeId, NodeIdx>,
    /// The same, for lookups only, never iterated (so hash order never
    /// shows): every heartbeat finds its node here, one hash and one
    /// compare where the B-tree compared ids all the way down.
    #[expect(
        clippy::disallowed_types,
        reason = "a lookup-only index with a fixed-seed hasher, never iterated (ARCHITECTURE.md)"
    )]
    lookup: std::collections::HashMap<NodeId, NodeIdx, foldhash::fast::FixedState>,
    by_name: BTreeMap<String, Vec<NodeIdx>>,
    /// Running nodes per rack.
    pub(crate) racks: BTreeMap<String, BTreeSet<NodeIdx>>,
    /// (filed expiry, node) for every running node: no node is lost before
    /// the first of these (see `Nodes::touch`).
    pub(crate) expiries: BTreeSet<(Time, NodeIdx)>,
    /// Nodes that are draining.
    pub(crate) draining: BTreeSet<NodeIdx>,
    /// (deadline, node) for every draining node with a timeout.
    pub(crate) drain_deadlines: BTreeSet<(Time, NodeIdx)>,
    /// (deadline, node) for every over-committed node with a timeout.
    pub(crate) overcommit_deadlines: BTreeSet<(Time, NodeIdx)>,
    /// Sum of running nodes' capabilities (a draining node's shrinks as it drains).
    pub(crate) capacity: Resource,
    pub(crate) n_running: u32,
}

impl Nodes {
    pub(crate) fn get(&self, idx: NodeIdx) -> &Node {
        self.arena[idx.0 as usize]
            .as_ref()
            .expect("live node index")
    }

    /// The node at `idx` if that slot is live (for callers holding indices
    /// they cannot vouch for: checks and the preemption view).
    pub(crate) fn try_get(&self, idx: NodeIdx) -> Option<&Node> {
        self.arena.get(idx.0 as usize)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, idx: NodeIdx) -> &mut Node {
        self.arena[idx.0 as usize]
            .as_mut()
            .expect("live node index")
    }

    pub(crate) fn lookup(&self, id: &NodeId) -> Option<NodeIdx> {
        self.lookup.get(id).copied()
    }

    /// Nodes requests may name with `name` (usually one).
    pub(crate) fn by_name(&self, name: &str) -> &[NodeIdx] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// Every known node, by id.
    pub(crate) fn indices(&self) -> impl Iterator<Item = NodeIdx> + '_ {
        self.by_id.values().copied()
    }

    pub(crate) fn insert(&mut self, node: Node) -> NodeIdx {
        let idx = match self.free.pop() {
            Some(i) => NodeIdx(i),
            None => {
                self.arena.push(None);
                NodeIdx(self.arena.len() as u32 - 1)
            }
        };
        self.by_id.insert(node.id.clone(), idx);
        self.lookup.insert(node.id.clone(), idx);
        self.by_name.entry(node.name.clone()).or_default().push(idx);
        self.racks.entry(node.rack.clone()).or_default().insert(idx);
        debug_assert_eq!(
            node.filed_expiry, node.expires,
            "a new node is filed at its deadline"
        );
        self.expiries.insert((node.filed_expiry, idx));
        self.capacity += node.capability;
        self.n_running += 1;
        self.arena[idx.0 as usize] = Some(node);
        idx
    }

    /// Forgets a node entirely; the caller has released its containers.
    pub(crate) fn remove(&mut self, idx: NodeIdx) -> Node {
        let node = self.arena[idx.0 as usize].take().expect("live node index");
        self.by_id.remove(&node.id);
        self.lookup.remove(&node.id);
        if let Some(v) = self.by_name.get_mut(&node.name) {
            v.retain(|i| *i != idx);
            if v.is_empty() {
                self.by_name.remove(&node.name);
            }
        }
        if let Some(r) = self.racks.get_mut(&node.rack) {
            r.remove(&idx);
            if r.is_empty() {
                self.racks.remove(&node.rack);
            }
        }
        self.expiries.remove(&(node.filed_expiry, idx));
        if let Some(d) = &node.draining {
            self.draining.remove(&idx);
            if let Some(at) = d.deadline {
                self.drain_deadlines.remove(&(at, idx));
            }
        }
        if let Some(at) = node.overcommit.as_ref().and_then(|o| o.deadline) {
            self.overcommit_deadlines.remove(&(at, idx));
        }
        self.capacity -= node.capability;
        self.n_running -= 1;
        self.free.push(idx.0);
        node
    }

    /// Moves a node's liveness deadline, on a heartbeat.
    ///
    /// A heartbeat moves the deadline later, and filing it anew each time
    /// cost every heartbeat a removal and an insertion in a set of every
    /// node. So the node stays filed where it was; when that time comes,
    /// `refile_if_heard` files it again at its deadline then, if it heard
    /// since. A node is re-filed once per liveness expiry rather than once
    /// per heartbeat, and the core may be called at a filed time at which no
    /// node is due (its `next_deadline` is never late, at worst early).
    pub(crate) fn touch(&mut self, idx: NodeIdx, now: Time, expires: Time) {
        let node = self.get_mut(idx);
        node.last_heartbeat = now;
        node.expires = expires;
        if expires < node.filed_expiry {
            // An earlier deadline (a shorter expiry setting): file it now.
            let filed = std::mem::replace(&mut node.filed_expiry, expires);
            self.expiries.remove(&(filed, idx));
            self.expiries.insert((expires, idx));
        }
    }

    /// For a node whose filed expiry came due: files it again at its
    /// deadline and returns true if it heard since it was filed (the
    /// deadline is later), else returns false (it is lost).
    pub(crate) fn refile_if_heard(&mut self, idx: NodeIdx) -> bool {
        let node = self.get_mut(idx);
        let (filed, expires) = (node.filed_expiry, node.expires);
        if expires <= filed {
            return false;
        }
        node.filed_expiry = expires;
        self.expiries.remove(&(filed, idx));
        self.expiries.insert((expires, idx));
        true
    }

    /// Running nodes in a rack.
    pub(crate) fn n_in_rack(&self, rack: &str) -> usize {
        self.racks.get(rack).map_or(0, BTreeSet::len)
    }
}
