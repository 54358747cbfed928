//! The nodes whose state changed, as AMs hear of them in their next allocate
//! reply (YARN's `updatedNodes`): a node that joined or came back, started
//! draining, or left (lost, shut down, decommissioned).
//!
//! Hadoop tells every live app of every such change, so an AM can re-run
//! work whose output was on a lost node or move work off a draining one.
//! Rather than copying each change into every app, the changes go into one
//! log and each app keeps how far into it it has read; a reply reports each
//! node once, as it is when the AM calls. Which changes happen is
//! `node_events`' and `decommission`'s.

use std::collections::{BTreeSet, VecDeque};

use weft_model::NodeId;

use crate::output::{Event, NodeState};
use crate::rm::ResourceManager;
use crate::view::NodeReport;

/// The log keeps at least this many changes however few nodes there are.
const MIN_KEPT: usize = 4096;

/// Node ids in the order their changes happened, numbered from `first`.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeUpdateLog {
    /// The number of `ids[0]`.
    first: u64,
    ids: VecDeque<NodeId>,
}

impl NodeUpdateLog {
    /// The number the next change will get: an app that starts reading here
    /// hears only of later changes.
    pub(crate) fn end(&self) -> u64 {
        self.first + self.ids.len() as u64
    }

    pub(crate) fn push(&mut self, node: NodeId) {
        self.ids.push_back(node);
    }

    /// The nodes changed from `seen` on, each once, in id order.
    fn since(&self, seen: u64) -> BTreeSet<&NodeId> {
        let skip = seen.saturating_sub(self.first) as usize;
        self.ids.iter().skip(skip).collect()
    }

    /// Forgets the changes before `seen`, which every app has read.
    fn trim(&mut self, seen: u64) {
        while self.first < seen && self.ids.pop_front().is_some() {
            self.first += 1;
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }
}

impl ResourceManager {
    /// Notes that a node's state changed, for every live AM to hear.
    pub(crate) fn node_changed(&mut self, node: &NodeId) {
        self.node_updates.push(node.clone());
    }

    /// A node entered `state`: the event says why, and every live AM hears
    /// of the node.
    pub(crate) fn node_state_changed(&mut self, node: NodeId, state: NodeState, reason: String) {
        self.node_changed(&node);
        self.events.push(Event::NodeStateChanged {
            node,
            state,
            reason,
        });
    }

    /// The nodes that changed since the app's AM last heard, as they are
    /// now; the AM has heard of them after this.
    pub(crate) fn take_node_updates(&mut self, h: weft_queue_tree::AppHandle) -> Vec<NodeReport> {
        let end = self.node_updates.end();
        let seen = std::mem::replace(&mut self.active_mut(h).node_updates_seen, end);
        if seen == end {
            return Vec::new();
        }
        self.node_updates
            .since(seen)
            .into_iter()
            .filter_map(|node| self.node_report(node))
            .collect()
    }

    /// Drops the changes every live app has heard of (run with the update
    /// pass). An app whose AM does not call for a long time (one waiting on
    /// a running-app limit) would hold every later change, so the log keeps
    /// at most twice as many changes as there are nodes, and such an app
    /// hears of the nodes changed in what is kept: it may miss a node that
    /// changed long ago and not since, whose containers it has heard of as
    /// completed anyway.
    pub(crate) fn trim_node_updates(&mut self) {
        if self.node_updates.len() == 0 {
            return;
        }
        let end = self.node_updates.end();
        let seen = self
            .active
            .iter()
            .flatten()
            .map(|a| a.node_updates_seen)
            .min()
            .unwrap_or(end);
        let known = self.nodes.n_running as usize + self.inactive_nodes.len();
        let kept = (2 * known).max(MIN_KEPT) as u64;
        self.node_updates.trim(seen.max(end.saturating_sub(kept)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(host: &str) -> NodeId {
        NodeId::new(host, 8041).unwrap()
    }

    #[test]
    fn a_reader_sees_each_later_node_once_and_trimming_keeps_what_is_unread() {
        let mut log = NodeUpdateLog::default();
        log.push(id("a"));
        let mark = log.end();
        log.push(id("b"));
        log.push(id("a"));
        log.push(id("c"));
        let seen: Vec<_> = log.since(mark).into_iter().cloned().collect();
        assert_eq!(seen, vec![id("a"), id("b"), id("c")]);
        log.trim(mark);
        assert_eq!(log.len(), 3);
        assert_eq!(log.since(mark).len(), 3);
        assert_eq!(
            log.since(0).len(),
            3,
            "a reader behind the trim sees what is kept"
        );
        log.trim(log.end());
        assert_eq!(log.len(), 0);
        assert!(log.since(log.end()).is_empty());
    }
}
