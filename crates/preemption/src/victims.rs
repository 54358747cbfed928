//! Victim search (Hadoop's `FSPreemptionThread.identifyContainersToPreempt`):
//! for one container a starved app asks for, the set of running containers
//! on a single node whose preemption makes room for it, preferring the set
//! with the fewest AM containers.
//!
//! A container may be taken only from a preemptable queue, only if it is not
//! an AM its queue protects, only from an app strictly above its fair share,
//! and only while that app, and every queue between it and the starved app,
//! stays at or above its fair share. Candidates on a
//! node are tried non-AM first, then lowest priority, then the most recently
//! launched (the least work lost). Apps that cannot give anything, by the
//! view's summary of their containers, are left out before any node is
//! read, which changes no set. Which requests to serve, and what becomes
//! of a chosen set, is `preemptor`'s business.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use weft_model::{AppId, ContainerId, Resource};

use crate::calc::Calc;
use crate::error::{PreemptionError, SlotKind};
use crate::view::{AppSlot, ContainerInfo, NodeSlot, PreemptionView, QueueSlot};

/// What the search knows about an app during one update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct VictimApp {
    pub(crate) present: bool,
    pub(crate) id: AppId,
    pub(crate) leaf: QueueSlot,
    pub(crate) usage: Resource,
    pub(crate) fair_share: Resource,
    /// Resources of its containers already taken (warned earlier, or chosen
    /// during this update).
    pub(crate) loss: Resource,
    /// Its leaf's calculator.
    calc: Calc,
    /// Present, in a preemptable leaf.
    eligible: bool,
    /// Its leaf lets AM containers be taken.
    am_ok: bool,
    /// Eligible and, after its losses, strictly above its fair share: only
    /// then may anything more be taken from it.
    above: bool,
    /// One of the givers of the app being served.
    giver: bool,
}

impl Default for VictimApp {
    fn default() -> VictimApp {
        VictimApp {
            present: false,
            id: AppId::new(0, 0),
            leaf: QueueSlot(0),
            usage: Resource::ZERO,
            fair_share: Resource::ZERO,
            loss: Resource::ZERO,
            calc: Calc::Memory,
            eligible: false,
            am_ok: false,
            above: false,
            giver: false,
        }
    }
}

/// What the search knows about a queue during one update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct VictimQueue {
    pub(crate) present: bool,
    pub(crate) parent: Option<QueueSlot>,
    pub(crate) calc: Calc,
    pub(crate) usage: Resource,
    pub(crate) fair_share: Resource,
    /// Resources taken from the subtree for apps outside it.
    pub(crate) loss: Resource,
    pub(crate) preemptable: bool,
    pub(crate) am_preemption: bool,
    /// True for the starved app's leaf and its ancestors while it is served:
    /// moving resources inside such a queue does not shrink it.
    pub(crate) on_path: bool,
    /// After its losses, strictly above its fair share: only then may its
    /// subtree give to an app outside it.
    above: bool,
}

impl Default for VictimQueue {
    fn default() -> VictimQueue {
        VictimQueue {
            present: false,
            parent: None,
            calc: Calc::Memory,
            usage: Resource::ZERO,
            fair_share: Resource::ZERO,
            loss: Resource::ZERO,
            preemptable: false,
            am_preemption: false,
            on_path: false,
            above: false,
        }
    }
}

impl VictimQueue {
    /// A queue as the view reports it, nothing taken from it yet.
    pub(crate) fn new(
        parent: Option<QueueSlot>,
        calc: Calc,
        usage: Resource,
        fair_share: Resource,
        preemptable: bool,
        am_preemption: bool,
    ) -> VictimQueue {
        let mut queue = VictimQueue {
            present: true,
            parent,
            calc,
            usage,
            fair_share,
            loss: Resource::ZERO,
            preemptable,
            am_preemption,
            on_path: false,
            above: false,
        };
        queue.refresh();
        queue
    }

    fn refresh(&mut self) {
        self.above = self
            .calc
            .compare_dominant(&(self.usage - self.loss), &self.fair_share)
            .is_gt();
    }
}

/// A container chosen as a victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chosen {
    pub(crate) id: ContainerId,
    pub(crate) app: AppSlot,
    pub(crate) resource: Resource,
    pub(crate) is_am: bool,
}

/// A set of victims on one node that makes room for one container; empty
/// when the node has room already.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) node: NodeSlot,
    pub(crate) containers: Vec<Chosen>,
    pub(crate) n_ams: u32,
}

/// The search's tables for one update, reused across updates.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tables {
    /// By app slot.
    pub(crate) apps: Vec<VictimApp>,
    /// By queue slot.
    pub(crate) queues: Vec<VictimQueue>,
    /// By node slot: warned containers still running there.
    pub(crate) warned_on_node: Vec<Resource>,
    /// By node slot: room found free during this update and promised to a
    /// starved app's container, so it is not counted twice.
    pub(crate) claimed_on_node: Vec<Resource>,
    /// By node slot: whether some container there is in `marked`.
    pub(crate) marked_on_node: Vec<bool>,
    /// Containers that may not be chosen again: warned, or chosen this update.
    pub(crate) marked: BTreeSet<ContainerId>,
    /// While an app is served: the apps it may take from (given its path)
    /// whose containers can still give something. The list only grows stale
    /// one way (apps stop giving as they lose), so it stays complete.
    givers: Vec<AppSlot>,
    /// While an app is served: whether any app above its fair share may
    /// give to it, whatever its containers. Without one a search finds
    /// nothing, not even free room; leaving apps out of `givers` must not
    /// change that, so it is kept apart.
    any_giver: bool,
    /// When the givers hold little of the cluster: their containers grouped
    /// by node, so a search need not read every node's containers.
    index: Vec<ContainerInfo>,
    /// By node slot, and one more: where the node's containers start in `index`.
    index_start: Vec<u32>,
    /// The index before it is grouped by node.
    index_unsorted: Vec<(NodeSlot, ContainerInfo)>,
    /// Where the next container of each node goes while grouping.
    index_next: Vec<u32>,
    index_built: bool,
    /// Tests set this to compare the two ways of finding candidates.
    #[cfg(test)]
    pub(crate) never_index: bool,
    /// Tests set this to make every app above its fair share a giver, as
    /// if the view kept no summary of its containers.
    #[cfg(test)]
    pub(crate) never_read_holdings: bool,
    candidates: Vec<ContainerInfo>,
}

impl Tables {
    /// Empties the tables for an update over views with these slot bounds.
    pub(crate) fn reset(&mut self, n_apps: usize, n_queues: usize, n_nodes: usize) {
        self.apps.clear();
        self.apps.resize(n_apps, VictimApp::default());
        self.queues.clear();
        self.queues.resize(n_queues, VictimQueue::default());
        self.warned_on_node.clear();
        self.warned_on_node.resize(n_nodes, Resource::ZERO);
        self.claimed_on_node.clear();
        self.claimed_on_node.resize(n_nodes, Resource::ZERO);
        self.marked_on_node.clear();
        self.marked_on_node.resize(n_nodes, false);
        self.marked.clear();
        self.givers.clear();
        self.any_giver = false;
        self.index_built = false;
    }

    /// Records a present app of `leaf`, whose queue must be recorded already.
    pub(crate) fn add_app(
        &mut self,
        slot: AppSlot,
        id: AppId,
        leaf: QueueSlot,
        usage: Resource,
        fair_share: Resource,
    ) {
        let queue = &self.queues[leaf.0 as usize];
        self.apps[slot.0 as usize] = VictimApp {
            present: true,
            id,
            leaf,
            usage,
            fair_share,
            loss: Resource::ZERO,
            calc: queue.calc,
            eligible: queue.present && queue.preemptable,
            am_ok: queue.am_preemption,
            above: false,
            giver: false,
        };
        self.refresh(slot);
    }

    /// Recomputes whether the app may still give, after its losses changed.
    fn refresh(&mut self, slot: AppSlot) {
        let app = &mut self.apps[slot.0 as usize];
        app.above = app.eligible
            && app
                .calc
                .compare_dominant(&(app.usage - app.loss), &app.fair_share)
                .is_gt();
    }

    /// Marks (or unmarks) `leaf` and its ancestors as the starved app's path.
    pub(crate) fn set_path(&mut self, leaf: QueueSlot, on: bool) {
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            let queue = &mut self.queues[q.0 as usize];
            queue.on_path = on;
            cur = queue.parent;
        }
    }

    /// Starts serving the starved `app` of `leaf`: marks its path and finds
    /// the apps it may take from (indexing their containers when that pays):
    /// never itself, and its leaf-mates only when `leaf_mates_open`.
    pub(crate) fn begin_serving<V: PreemptionView>(
        &mut self,
        view: &V,
        app: AppSlot,
        leaf: QueueSlot,
        leaf_mates_open: bool,
    ) {
        self.set_path(leaf, true);
        let mut givers = std::mem::take(&mut self.givers);
        givers.clear();
        for (slot, victim) in self.apps.iter().enumerate() {
            if victim.above
                && slot != app.0 as usize
                && (leaf_mates_open || victim.leaf != leaf)
                && self.subtree_may_give(victim.leaf)
            {
                givers.push(AppSlot(slot as u32));
            }
        }
        self.any_giver = !givers.is_empty();
        // An app none of whose containers may be taken adds only candidates
        // that every set skips: leaving it out changes no set, and spares
        // reading the nodes that hold its containers. Once the givers kept
        // are too many to index, the rest stay unchecked: nodes are read
        // anyway, and a check per giver would cost more than it spares.
        let mut budget = IndexBudget::default();
        givers.retain(|giver| {
            if !budget.pays {
                return true;
            }
            if !self.never_read_holdings() && !self.may_give(view, *giver) {
                return false;
            }
            budget.add(self, *giver);
            true
        });
        for giver in &givers {
            self.apps[giver.0 as usize].giver = true;
        }
        self.givers = givers;
        // With givers left but none that can give, the (empty) index still
        // spares reading every node's containers while free room is sought.
        if self.any_giver && budget.pays && !self.never_index() {
            self.build_index(view);
        }
    }

    /// Done serving the app `begin_serving` named.
    pub(crate) fn end_serving(&mut self, leaf: QueueSlot) {
        self.set_path(leaf, false);
        for giver in &self.givers {
            self.apps[giver.0 as usize].giver = false;
        }
        self.givers.clear();
        self.any_giver = false;
        self.index_built = false;
    }

    /// Whether some container of the giver `slot` may be taken now, for the
    /// app being served, as far as the view's summary of its containers
    /// tells; true without one. Losses only grow while an app is served, so
    /// a giver left out would stay unable to give.
    fn may_give<V: PreemptionView>(&self, view: &V, slot: AppSlot) -> bool {
        let Some(holdings) = view.app_holdings(slot) else {
            return true;
        };
        let app = &self.apps[slot.0 as usize];
        let am = holdings.least_am.filter(|_| app.am_ok);
        let least = match (holdings.least_non_am, am) {
            (None, None) => return false,
            (Some(least), None) | (None, Some(least)) => least,
            (Some(non_am), Some(am)) => non_am.component_min(am),
        };
        // Taking more leaves less: when the least is refused, so is every
        // container.
        self.can_take_resource(slot, least)
    }

    /// Books `resource` as taken from `app` for the app whose path is set.
    pub(crate) fn add_loss(&mut self, app: AppSlot, resource: Resource) {
        let victim = &mut self.apps[app.0 as usize];
        victim.loss += resource;
        let mut cur = Some(victim.leaf);
        self.refresh(app);
        while let Some(q) = cur {
            let queue = &mut self.queues[q.0 as usize];
            if queue.on_path {
                break;
            }
            queue.loss += resource;
            queue.refresh();
            cur = queue.parent;
        }
    }

    fn undo_loss(&mut self, app: AppSlot, resource: Resource) {
        let victim = &mut self.apps[app.0 as usize];
        victim.loss -= resource;
        let mut cur = Some(victim.leaf);
        self.refresh(app);
        while let Some(q) = cur {
            let queue = &mut self.queues[q.0 as usize];
            if queue.on_path {
                break;
            }
            queue.loss -= resource;
            queue.refresh();
            cur = queue.parent;
        }
    }

    /// Marks a container as taken, on its node.
    pub(crate) fn mark(&mut self, id: ContainerId, node: NodeSlot) {
        self.marked.insert(id);
        self.marked_on_node[node.0 as usize] = true;
    }

    /// Books a found set for good: its containers are marked and their
    /// resources count as lost for the rest of the update. A set without
    /// containers promises the node's free room instead.
    pub(crate) fn take(&mut self, found: &Found, capability: Resource) {
        if found.containers.is_empty() {
            self.claimed_on_node[found.node.0 as usize] += capability;
        }
        for c in &found.containers {
            self.mark(c.id, found.node);
            self.add_loss(c.app, c.resource);
        }
    }

    /// The best set over `nodes` (in order) for a container of `capability`:
    /// the first with no AM container, else the first with the fewest.
    pub(crate) fn search<V: PreemptionView>(
        &mut self,
        view: &V,
        nodes: &[NodeSlot],
        capability: Resource,
    ) -> Result<Option<Found>, PreemptionError> {
        if !self.any_giver {
            // Nobody may give; losses only grow from here.
            return Ok(None);
        }
        let mut best = None;
        let mut max_ams = u32::MAX;
        for node in nodes {
            if let Some(found) = self.on_node(view, *node, capability, max_ams)? {
                max_ams = found.n_ams;
                best = Some(found);
                if max_ams == 0 {
                    break;
                }
            }
        }
        Ok(best)
    }

    /// A set on one node with fewer than `max_ams` AM containers, if any.
    fn on_node<V: PreemptionView>(
        &mut self,
        view: &V,
        slot: NodeSlot,
        capability: Resource,
        max_ams: u32,
    ) -> Result<Option<Found>, PreemptionError> {
        let i = slot.0 as usize;
        if i >= self.warned_on_node.len() {
            return Err(PreemptionError::SlotOutOfRange {
                kind: SlotKind::Node,
                slot: slot.0,
                bound: self.warned_on_node.len(),
            });
        }
        let Some(node) = view.node(slot) else {
            return Err(PreemptionError::UnknownNode { slot: slot.0 });
        };
        if !capability.fits_in(&node.capability) {
            return Ok(None);
        }
        // Warned containers still run: the view counts them allocated and,
        // through the hand-back entries, set aside too. Count them once.
        let mut potential = (node.unallocated + self.warned_on_node[i])
            - (node.reserved + node.earmarked + self.claimed_on_node[i]);
        if capability.fits_in(&potential) {
            return Ok(Some(Found {
                node: slot,
                containers: Vec::new(),
                n_ams: 0,
            }));
        }

        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        let mut reachable = potential;
        let mut add = |tables: &Tables, c: ContainerInfo| -> Result<(), PreemptionError> {
            if tables.may_take(&c, i)? {
                reachable += c.resource;
                candidates.push(c);
            }
            Ok(())
        };
        let outcome = if self.index_built {
            let range = self.index_start[i] as usize..self.index_start[i + 1] as usize;
            self.index[range].iter().try_for_each(|c| add(self, *c))
        } else {
            view.containers(slot).try_for_each(|c| add(self, c))
        };
        if let Err(e) = outcome {
            self.candidates = candidates;
            return Err(e);
        }
        // Skip the sort when even every candidate would not make room.
        if !capability.fits_in(&reachable) {
            self.candidates = candidates;
            return Ok(None);
        }
        candidates.sort_unstable_by(victim_order);

        let mut chosen = Vec::new();
        let mut n_ams = 0;
        let mut res = None;
        for c in &candidates {
            if !self.can_take(c) {
                continue;
            }
            if c.is_am {
                n_ams += 1;
                if n_ams >= max_ams {
                    break;
                }
            }
            self.add_loss(c.app, c.resource);
            chosen.push(Chosen {
                id: c.id,
                app: c.app,
                resource: c.resource,
                is_am: c.is_am,
            });
            potential += c.resource;
            if capability.fits_in(&potential) {
                res = Some(Found {
                    node: slot,
                    containers: Vec::new(),
                    n_ams,
                });
                break;
            }
        }
        // The losses of a set under consideration are only tentative.
        for c in &chosen {
            self.undo_loss(c.app, c.resource);
        }
        if let Some(found) = &mut res {
            found.containers = chosen;
        }
        self.candidates = candidates;
        Ok(res)
    }

    /// Whether `c`, on node `node`, is worth looking at: its app may give
    /// to the app being served, it is no AM its queue protects, and it is
    /// not taken already.
    fn may_take(&self, c: &ContainerInfo, node: usize) -> Result<bool, PreemptionError> {
        let Some(app) = self.apps.get(c.app.0 as usize) else {
            return Err(PreemptionError::SlotOutOfRange {
                kind: SlotKind::App,
                slot: c.app.0,
                bound: self.apps.len(),
            });
        };
        // `giver` (set for the app being served) covers the app itself, its
        // leaf-mates and the queues up to its path as they stood then;
        // `can_take` checks the queues again as losses grow.
        Ok(app.giver
            && app.above
            && (app.am_ok || !c.is_am)
            && !(self.marked_on_node[node] && self.marked.contains(&c.id)))
    }

    /// Whether every queue from `leaf` up to the starved app's path is
    /// strictly above its fair share.
    fn subtree_may_give(&self, leaf: QueueSlot) -> bool {
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            let queue = &self.queues[q.0 as usize];
            if queue.on_path {
                return true;
            }
            if !queue.above {
                return false;
            }
            cur = queue.parent;
        }
        true
    }

    /// Whether taking `c` keeps its app, and every queue between it and the
    /// starved app, at or above fair share.
    fn can_take(&self, c: &ContainerInfo) -> bool {
        self.can_take_resource(c.app, c.resource)
    }

    /// Whether taking `resource` from the app at `slot` keeps it, and every
    /// queue between it and the starved app, at or above fair share. A
    /// smaller resource is never refused where a larger one is allowed:
    /// usage after the loss only shrinks as the loss grows, under either
    /// calculator.
    fn can_take_resource(&self, slot: AppSlot, resource: Resource) -> bool {
        let app = &self.apps[slot.0 as usize];
        let after = app.usage - app.loss - resource;
        if !app.above || app.calc.is_below(&after, &app.fair_share) {
            return false;
        }
        let mut cur = Some(app.leaf);
        while let Some(q) = cur {
            let queue = &self.queues[q.0 as usize];
            if queue.on_path {
                break;
            }
            let after = queue.usage - queue.loss - resource;
            if queue.calc.is_below(&after, &queue.fair_share) {
                return false;
            }
            cur = queue.parent;
        }
        true
    }
}

/// At most this many givers, and their containers are indexed by node
/// rather than found by reading every node's containers.
const INDEX_LIMIT: usize = 256;

/// Whether indexing the givers' containers is cheaper than reading nodes,
/// counted giver by giver: when they are few, or hold at most a quarter of
/// what all apps hold (so most nodes' containers would be read for
/// nothing). Once it does not pay, more givers cannot make it pay.
#[derive(Debug)]
struct IndexBudget {
    pays: bool,
    n_givers: usize,
    /// Memory the givers hold.
    giving: u64,
    /// Memory all apps hold, summed when first needed.
    all: Option<u64>,
}

impl Default for IndexBudget {
    fn default() -> IndexBudget {
        IndexBudget {
            pays: true,
            n_givers: 0,
            giving: 0,
            all: None,
        }
    }
}

impl IndexBudget {
    fn add(&mut self, tables: &Tables, giver: AppSlot) {
        self.n_givers += 1;
        self.giving = self
            .giving
            .saturating_add(tables.apps[giver.0 as usize].usage.memory_mb());
        if self.n_givers <= INDEX_LIMIT {
            return;
        }
        let all = *self.all.get_or_insert_with(|| {
            tables
                .apps
                .iter()
                .filter(|a| a.present)
                .map(|a| a.usage.memory_mb())
                .fold(0, u64::saturating_add)
        });
        self.pays = self.giving.saturating_mul(4) <= all;
    }
}

impl Tables {
    #[cfg(test)]
    fn never_index(&self) -> bool {
        self.never_index
    }

    #[cfg(not(test))]
    fn never_index(&self) -> bool {
        false
    }

    #[cfg(test)]
    fn never_read_holdings(&self) -> bool {
        self.never_read_holdings
    }

    #[cfg(not(test))]
    fn never_read_holdings(&self) -> bool {
        false
    }

    /// Groups the giving apps' containers by node (a counting sort: the
    /// order within a node does not matter, candidates are sorted later).
    fn build_index<V: PreemptionView>(&mut self, view: &V) {
        let n_nodes = self.warned_on_node.len();
        self.index_unsorted.clear();
        for giver in &self.givers {
            self.index_unsorted.extend(
                view.app_containers(*giver)
                    .filter(|(node, _)| (node.0 as usize) < n_nodes),
            );
        }
        self.index_start.clear();
        self.index_start.resize(n_nodes + 1, 0);
        for (node, _) in &self.index_unsorted {
            self.index_start[node.0 as usize + 1] += 1;
        }
        for i in 0..n_nodes {
            self.index_start[i + 1] += self.index_start[i];
        }
        let mut next = std::mem::take(&mut self.index_next);
        next.clear();
        next.extend_from_slice(&self.index_start);
        self.index.clear();
        if let Some((_, any)) = self.index_unsorted.first() {
            self.index.resize(self.index_unsorted.len(), *any);
        }
        for (node, c) in &self.index_unsorted {
            let at = &mut next[node.0 as usize];
            self.index[*at as usize] = *c;
            *at += 1;
        }
        self.index_next = next;
        self.index_built = true;
    }
}

/// Non-AM containers first, then the lowest priority (the largest number),
/// then the most recently launched, then the newest id.
pub(crate) fn victim_order(a: &ContainerInfo, b: &ContainerInfo) -> Ordering {
    a.is_am
        .cmp(&b.is_am)
        .then_with(|| b.priority.cmp(&a.priority))
        .then_with(|| b.launched.cmp(&a.launched))
        .then_with(|| b.id.cmp(&a.id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_model::{AppId, AttemptId, Priority, Time};

    fn c(seq: u64, is_am: bool, priority: i32, launched: u64) -> ContainerInfo {
        ContainerInfo {
            id: ContainerId::new(AttemptId::new(AppId::new(1, 1), 1), seq),
            app: AppSlot(0),
            resource: Resource::new(1024, 1),
            priority: Priority(priority),
            is_am,
            launched: Time::from_millis(launched),
        }
    }

    #[test]
    fn victims_are_ordered_to_lose_the_least_work() {
        let mut all = [
            c(1, true, 0, 0),
            c(2, false, 1, 10),
            c(3, false, 5, 10),
            c(4, false, 1, 30),
            c(5, false, 1, 30),
        ];
        all.sort_by(victim_order);
        let order: Vec<u64> = all.iter().map(|c| c.id.seq).collect();
        // Priority 5 is the lowest; among priority 1 the latest launched
        // (4 and 5, the newer id first); the AM last.
        assert_eq!(order, [3, 5, 4, 2, 1]);
    }
}
