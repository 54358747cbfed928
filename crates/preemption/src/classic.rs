//! The classic model: Hadoop 2.6 to 2.8's preemption (`updateStarvationStats`,
//! `resourceDeficit`, `preemptResources` and `preemptContainer` down the
//! tree), planned from one view as data.
//!
//! Each leaf has two timers: the last update at which it was not below
//! min(min share, demand), and the last at which it was not below
//! min(fair share × threshold, demand). Once a timer is older than its
//! timeout, the leaf's deficit is its min-share or fair-share shortfall
//! (the larger by the leaf's calculator), and the deficits of all leaves
//! make one pool. Warned containers still running cover the pool first,
//! oldest warning first; then room freed lately and still free on its node;
//! what they do not cover is taken one container at a time by walking the
//! tree from root to the preemptable child most over its fair share, then
//! the app most over its fair share, then its lowest-priority, newest
//! container, until the pool is covered or the walk finds nothing. A leaf
//! the walk reaches gives only while it is over its fair share and has no
//! deficit of its own.
//!
//! Nothing is set aside for anyone: freed resources go to whoever the fair
//! order serves first, normally the starved queue. Each warning still names
//! an app of a starved leaf (`for_app`, for reports), the first in its leaf's
//! order with unmet demand. Applying the plan to the ledger, and the warn-then-
//! kill protocol itself, are `preemptor`'s business; the comparators are
//! `order`'s. `docs/preemption.md` lists where this differs from Hadoop 2.x.

mod order;

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use weft_model::{
    ContainerId, N_RESOURCE_TYPES, NodeId, QueuePath, Resource, Time, compare_share_vectors,
};
use weft_queue_tree::site::SchedulerSettings;

use crate::calc::Calc;
use crate::error::{PreemptionError, SlotKind};
use crate::ledger::{Ledger, LedgerEntry, TransitionKind, WithdrawReason};
use crate::preemptor::{StarvedApp, Victim, VictimSet};
use crate::view::{AppInfo, AppSlot, ContainerInfo, NodeSlot, PreemptionView, QueueInfo};
use order::{Member, Name};

/// What the classic model remembers between updates.
#[derive(Clone, Debug, Default)]
pub(crate) struct Classic {
    /// By queue slot: the leaf last seen there.
    leaves: Vec<Option<LeafState>>,
    /// Warned containers that ended (killed or given back) recently: while
    /// their room is still free on their nodes it is on its way to the
    /// starved queue, so it covers the pool.
    freed: Vec<Freed>,
}

/// The room of a warned container that ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Freed {
    resource: Resource,
    node: NodeSlot,
    node_id: NodeId,
    for_slot: AppSlot,
    for_app: weft_model::AppId,
    /// Until when it covers the pool: the allocation delay after the update
    /// that saw it end (`None` until an update has seen it).
    until: Option<Time>,
}

/// One leaf's timers, and what was last reported about it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LeafState {
    path: QueuePath,
    last_at_min_share: Time,
    last_at_fair_share: Time,
    /// The (fair-share, min-share) deficit last reported in `starved`; zero
    /// while the leaf has none. A leaf is reported again only when it changes
    /// or containers are warned for it, so a long wait stays quiet.
    reported: (Resource, Resource),
}

/// What one classic update decided, to be committed by the preemptor.
pub(crate) struct ClassicPlan {
    /// Ledger entries leaving (killed or withdrawn), by container id.
    pub(crate) removals: Vec<(ContainerId, TransitionKind)>,
    /// New warnings, in the order the walk chose them.
    pub(crate) warnings: Vec<(ContainerId, LedgerEntry)>,
    /// The starved leaves worth reporting, in the view's queue order.
    pub(crate) starved: Vec<StarvedApp>,
    leaves: Vec<(usize, LeafState)>,
    /// The freed room still covering the pool after this update.
    freed: Vec<Freed>,
}

impl Classic {
    /// Forgets every timer and freed room (the model was just switched on,
    /// or preemption off).
    pub(crate) fn reset(&mut self) {
        self.leaves.clear();
        self.freed.clear();
    }

    /// A warned container ended on its own (the owner gave it back, or it
    /// finished): its room covers the pool until it reaches the starved queue.
    pub(crate) fn released(&mut self, entry: &LedgerEntry) {
        self.freed.push(Freed {
            resource: entry.resource,
            node: entry.node_slot,
            node_id: entry.node.clone(),
            for_slot: entry.for_slot,
            for_app: entry.for_app,
            until: None,
        });
    }

    /// Keeps the leaves' timers and the freed room as `plan` left them.
    pub(crate) fn commit(&mut self, plan: &mut ClassicPlan) {
        for (slot, state) in plan.leaves.drain(..) {
            if self.leaves.len() <= slot {
                self.leaves.resize(slot + 1, None);
            }
            self.leaves[slot] = Some(state);
        }
        self.freed = std::mem::take(&mut plan.freed);
    }

    /// Plans one update at `now` against `ledger`, touching nothing. With
    /// `evaluate` false (utilisation at or below the threshold) timers run
    /// and due kills happen, but nobody is found starved.
    pub(crate) fn plan<V: PreemptionView>(
        &self,
        now: Time,
        view: &V,
        settings: &SchedulerSettings,
        dry_run: bool,
        evaluate: bool,
        ledger: &Ledger,
    ) -> Result<ClassicPlan, PreemptionError> {
        let mut pass = Pass::gather(now, view, settings, &self.leaves)?;
        pass.deficits(now, evaluate);
        let mut pool = pass.pool();
        let delay = settings.preemption_allocation_delay();
        let mut plan = ClassicPlan {
            removals: Vec::new(),
            warnings: Vec::new(),
            starved: Vec::new(),
            leaves: Vec::new(),
            freed: Vec::new(),
        };

        // Warned containers first, oldest warning first (Hadoop's list order):
        // each one still needed covers part of the pool.
        let mut entries: Vec<(&ContainerId, &LedgerEntry)> = ledger.iter().collect();
        entries.sort_by_key(|(id, e)| (e.warned_at, **id));
        for (id, entry) in entries {
            let owner = pass.flat(entry.app_slot, entry.app);
            let reason = if dry_run {
                Some(WithdrawReason::PreemptionOff)
            } else if owner.is_none() {
                Some(WithdrawReason::OwnerGone)
            } else if evaluate && !pool.any_positive() {
                Some(WithdrawReason::NoLongerNeeded)
            } else {
                None
            };
            if let Some(reason) = reason {
                plan.removals
                    .push((*id, TransitionKind::Withdrawn { reason }));
                continue;
            }
            if evaluate {
                pool = pool.minus(entry.resource);
                let for_leaf = pass
                    .flat(entry.for_slot, entry.for_app)
                    .map(|f| pass.apps[f].leaf);
                pass.attribute(for_leaf, entry.resource);
            }
            if let Some(owner) = owner {
                pass.take(owner, *id, entry.resource);
            }
            if entry.deadline <= now {
                plan.removals.push((*id, TransitionKind::Killed));
                plan.freed.push(Freed {
                    resource: entry.resource,
                    node: entry.node_slot,
                    node_id: entry.node.clone(),
                    for_slot: entry.for_slot,
                    for_app: entry.for_app,
                    until: Some(now + delay),
                });
            }
        }
        plan.removals.sort_by_key(|(id, _)| *id);

        // Room freed lately and still free on its node is on its way to the
        // starved queue: Hadoop 2.x checked only every preemptionInterval
        // (5 s), which left the heartbeats time to hand it over; Weft checks
        // on every update. Once taken by anyone, or after the allocation
        // delay, it no longer counts.
        if !dry_run {
            let mut free_left: BTreeMap<NodeSlot, Resource> = BTreeMap::new();
            for f in &self.freed {
                let until = f.until.unwrap_or(now + delay);
                if until <= now {
                    continue;
                }
                plan.freed.push(Freed {
                    until: Some(until),
                    ..f.clone()
                });
                // A node gone, or another in its slot, holds none of it.
                let left = free_left.entry(f.node).or_insert_with(|| {
                    view.node(f.node)
                        .filter(|n| *n.id == f.node_id)
                        .map_or(Resource::ZERO, |n| n.unallocated - n.reserved)
                });
                let still_free = f.resource.component_min(*left);
                *left -= still_free;
                if evaluate && still_free.any_positive() {
                    pool = pool.minus(still_free);
                    let for_leaf = pass.flat(f.for_slot, f.for_app).map(|i| pass.apps[i].leaf);
                    pass.attribute(for_leaf, still_free);
                }
            }
        }
        for leaf in &mut pass.leaves {
            leaf.wanted = leaf.remaining.clamped();
        }

        // Then the walk, one container at a time, while the pool is not covered.
        let mut picks = Vec::new();
        if evaluate {
            while pool.any_positive() {
                let Some((app, node, c)) = pass.pick(view)? else {
                    break;
                };
                pass.take(app, c.id, c.resource);
                pool = pool.minus(c.resource);
                let leaf = pass.attribute(None, c.resource);
                picks.push((app, node, c, leaf));
            }
        }

        let wait = settings.wait_time_before_kill;
        let mut victims: Vec<Vec<VictimSet>> = vec![Vec::new(); pass.leaves.len()];
        for (app, node_slot, c, leaf) in picks {
            let Some(node) = view.node(node_slot) else {
                return Err(PreemptionError::UnknownNode { slot: node_slot.0 });
            };
            let owner = &pass.apps[app];
            let Some(leaf) = leaf else {
                continue;
            };
            let starved = &pass.leaves[leaf];
            let Some(beneficiary) = starved.designated.map(|f| pass.apps[f].info) else {
                continue;
            };
            victims[leaf].push(VictimSet {
                node: node.id.clone(),
                priority: c.priority,
                capability: c.resource,
                containers: vec![Victim {
                    container: c.id,
                    app: owner.info.id,
                    queue: pass.path(owner.leaf),
                    resource: c.resource,
                    is_am: c.is_am,
                }],
            });
            if !dry_run {
                plan.warnings.push((
                    c.id,
                    LedgerEntry {
                        app: owner.info.id,
                        node: node.id.clone(),
                        resource: c.resource,
                        for_app: beneficiary.id,
                        warned_at: now,
                        deadline: now + wait,
                        app_slot: owner.info.slot,
                        node_slot,
                        for_slot: beneficiary.slot,
                        set_aside: false,
                    },
                ));
            }
        }

        for (leaf, sets) in pass.leaves.iter().zip(victims) {
            let mut state = leaf.state.clone();
            let parts = (leaf.fair_part, leaf.min_part);
            let changed = parts != state.reported;
            state.reported = parts;
            if let Some(designated) = leaf.designated.filter(|_| leaf.deficit.any_positive())
                && (changed || (!dry_run && !sets.is_empty()))
            {
                plan.starved.push(StarvedApp {
                    app: pass.apps[designated].info.id,
                    queue: state.path.clone(),
                    fair_share_starvation: leaf.fair_part,
                    min_share_starvation: leaf.min_part,
                    requested: leaf.wanted,
                    victims: sets,
                });
            }
            plan.leaves.push((leaf.slot, state));
        }
        Ok(plan)
    }
}

/// One update's tables.
struct Pass<'v> {
    cluster: Resource,
    /// By queue slot.
    queues: Vec<Option<PassQueue<'v>>>,
    /// By queue slot: its children, in the view's order.
    children: Vec<Vec<usize>>,
    root: Option<usize>,
    /// Every leaf's runnable apps, leaf after leaf, in the view's order.
    apps: Vec<PassApp>,
    /// By app slot: the index in `apps`, or `NONE`.
    flat_of_slot: Vec<u32>,
    /// The leaves, in the view's order.
    leaves: Vec<PassLeaf>,
    /// Containers taken: warned and kept, or chosen this update.
    taken: BTreeSet<ContainerId>,
}

const NONE: u32 = u32::MAX;

struct PassQueue<'v> {
    info: QueueInfo<'v>,
    /// Its calculator, by its own policy.
    calc: Calc,
    /// Taken from its subtree during this update.
    loss: Resource,
    /// Its index in `leaves`, for a leaf.
    leaf: Option<usize>,
}

struct PassLeaf {
    slot: usize,
    state: LeafState,
    apps: Range<usize>,
    /// Lets its AM containers be taken.
    am_ok: bool,
    /// The first app in the leaf's order with unmet demand: the one a
    /// warning made for the leaf names.
    designated: Option<usize>,
    deficit: Signed,
    fair_part: Resource,
    min_part: Resource,
    /// The deficit not yet covered by warnings, for attributing them.
    remaining: Signed,
    /// `remaining` once the existing warnings are counted: what the walk looked for.
    wanted: Resource,
}

struct PassApp {
    info: AppInfo,
    /// Its leaf's queue slot.
    leaf: usize,
    loss: Resource,
    /// Its containers that may be taken, in the order they are taken,
    /// read when the walk first reaches the app.
    candidates: Option<Vec<(NodeSlot, ContainerInfo)>>,
    next: usize,
}

impl<'v> Pass<'v> {
    /// Reads the queues and apps, checking the view's slots, with each
    /// leaf's state as the preemptor holds it.
    fn gather<V: PreemptionView>(
        now: Time,
        view: &'v V,
        settings: &SchedulerSettings,
        states: &[Option<LeafState>],
    ) -> Result<Pass<'v>, PreemptionError> {
        let n_queues = view.queue_slots();
        let n_apps = view.app_slots();
        let cluster = view.cluster_capacity();
        let mut pass = Pass {
            cluster,
            queues: (0..n_queues).map(|_| None).collect(),
            children: vec![Vec::new(); n_queues],
            root: None,
            apps: Vec::new(),
            flat_of_slot: vec![NONE; n_apps],
            leaves: Vec::new(),
            taken: BTreeSet::new(),
        };
        let mut order = Vec::new();
        for q in view.queues() {
            let i = SlotKind::Queue.index(q.slot.0, n_queues, |i| pass.queues[i].is_some())?;
            if q.is_leaf && !(0.0..=1.0).contains(&q.fair_share_preemption_threshold) {
                return Err(PreemptionError::BadThreshold {
                    queue: q.path.clone(),
                    value: q.fair_share_preemption_threshold,
                });
            }
            pass.queues[i] = Some(PassQueue {
                info: q,
                calc: Calc::for_policy(q.policy, cluster),
                loss: Resource::ZERO,
                leaf: None,
            });
            order.push(i);
        }
        pass.link(&order)?;

        for i in order {
            let Some(q) = &pass.queues[i] else {
                continue;
            };
            if !q.info.is_leaf {
                continue;
            }
            let info = q.info;
            let start = pass.apps.len();
            for app in view.apps(info.slot) {
                let a =
                    SlotKind::App.index(app.slot.0, n_apps, |a| pass.flat_of_slot[a] != NONE)?;
                pass.flat_of_slot[a] = pass.apps.len() as u32;
                pass.apps.push(PassApp {
                    info: app,
                    leaf: i,
                    loss: Resource::ZERO,
                    candidates: None,
                    next: 0,
                });
            }
            let state = match states.get(i) {
                Some(Some(s)) if s.path == *info.path => s.clone(),
                _ => LeafState {
                    path: info.path.clone(),
                    last_at_min_share: now,
                    last_at_fair_share: now,
                    reported: (Resource::ZERO, Resource::ZERO),
                },
            };
            if let Some(q) = &mut pass.queues[i] {
                q.leaf = Some(pass.leaves.len());
            }
            pass.leaves.push(PassLeaf {
                slot: i,
                state,
                apps: start..pass.apps.len(),
                am_ok: settings.am_preemption_enabled(info.path),
                designated: None,
                deficit: Signed::ZERO,
                fair_part: Resource::ZERO,
                min_part: Resource::ZERO,
                remaining: Signed::ZERO,
                wanted: Resource::ZERO,
            });
        }
        Ok(pass)
    }

    /// Fills `children` and `root`, refusing parents that are not queues of
    /// the view or that loop: the walk goes down from root.
    fn link(&mut self, order: &[usize]) -> Result<(), PreemptionError> {
        let n = self.queues.len();
        for &i in order {
            let Some(q) = &self.queues[i] else {
                continue;
            };
            let mut cur = q.info.parent;
            let mut steps = 0;
            while let Some(parent) = cur {
                let p = parent.0 as usize;
                steps += 1;
                let known = self.queues.get(p).and_then(Option::as_ref);
                let Some(known) = known.filter(|_| steps <= n) else {
                    return Err(PreemptionError::BadParent {
                        queue: q.info.path.clone(),
                        parent: q.info.parent.map_or(0, |s| s.0),
                    });
                };
                cur = known.info.parent;
            }
            match q.info.parent {
                Some(p) => self.children[p.0 as usize].push(i),
                None => {
                    self.root.get_or_insert(i);
                }
            }
        }
        Ok(())
    }

    /// Refreshes every leaf's timers and, when `evaluate`, works out its deficit.
    fn deficits(&mut self, now: Time, evaluate: bool) {
        for leaf in &mut self.leaves {
            let Some(q) = &self.queues[leaf.slot] else {
                continue;
            };
            let (info, calc) = (&q.info, q.calc);
            // Hadoop judges both timers with the scheduler's memory
            // calculator; Weft with the leaf's, as for the current model.
            let min_target = calc.min(info.min_share, info.demand);
            if !calc.is_below(&info.usage, &min_target) {
                leaf.state.last_at_min_share = now;
            }
            let fair_target = calc.min(
                info.fair_share
                    .scale_down(crate::starvation::hadoop_threshold(
                        info.fair_share_preemption_threshold,
                    )),
                info.demand,
            );
            if !calc.is_below(&info.usage, &fair_target) {
                leaf.state.last_at_fair_share = now;
            }
            if !evaluate {
                continue;
            }
            leaf.designated = self.apps[leaf.apps.clone()]
                .iter()
                .position(|a| !(a.info.demand - a.info.usage).is_zero())
                .map(|i| leaf.apps.start + i);
            // Past the timeout (strictly, as Hadoop's `>`), the shortfall
            // below min(share, demand), when the calculator says there is one.
            let shortfall = |share: Resource, since: Time, timeout| {
                if now.since(since) > timeout {
                    Signed::of(share.component_min(info.demand))
                        .minus(info.usage)
                        .positive_part(&calc)
                } else {
                    Signed::ZERO
                }
            };
            let min_share = shortfall(
                info.min_share,
                leaf.state.last_at_min_share,
                info.min_share_preemption_timeout,
            );
            let fair_share = shortfall(
                info.fair_share,
                leaf.state.last_at_fair_share,
                info.fair_share_preemption_timeout,
            );
            // Hadoop's `Resources.max`: the min-share deficit on a tie.
            let (deficit, from_min_share) =
                if Signed::compare(&calc, &min_share, &fair_share) != Ordering::Less {
                    (min_share, true)
                } else {
                    (fair_share, false)
                };
            // A leaf whose runnable apps want nothing could not use what is freed.
            if leaf.designated.is_none() || !deficit.any_positive() {
                continue;
            }
            leaf.deficit = deficit;
            leaf.remaining = deficit;
            if from_min_share {
                leaf.min_part = deficit.clamped();
            } else {
                leaf.fair_part = deficit.clamped();
            }
        }
    }

    /// The sum of the leaves' deficits: what the update means to free.
    fn pool(&self) -> Signed {
        self.leaves
            .iter()
            .fold(Signed::ZERO, |acc, l| acc.plus(l.deficit))
    }

    /// The app at `slot` this update, if it is `id`.
    fn flat(&self, slot: AppSlot, id: weft_model::AppId) -> Option<usize> {
        let flat = *self.flat_of_slot.get(slot.0 as usize)?;
        (flat != NONE && self.apps[flat as usize].info.id == id).then_some(flat as usize)
    }

    fn path(&self, slot: usize) -> QueuePath {
        self.queues[slot]
            .as_ref()
            .map_or_else(QueuePath::root, |q| q.info.path.clone())
    }

    /// Counts `resource` against a starved leaf's deficit: `preferred` when it
    /// still lacks something, else the first leaf that does (else the
    /// first starved leaf). Returns the leaf's index in `leaves`.
    fn attribute(&mut self, preferred: Option<usize>, resource: Resource) -> Option<usize> {
        let starved = |l: &PassLeaf| l.deficit.any_positive();
        let preferred = preferred
            .and_then(|slot| self.queues[slot].as_ref()?.leaf)
            .filter(|l| starved(&self.leaves[*l]) && self.leaves[*l].remaining.any_positive());
        let chosen = preferred
            .or_else(|| {
                self.leaves
                    .iter()
                    .position(|l| starved(l) && l.remaining.any_positive())
            })
            .or_else(|| self.leaves.iter().position(starved))?;
        let leaf = &mut self.leaves[chosen];
        leaf.remaining = leaf.remaining.minus(resource);
        Some(chosen)
    }

    /// Books a container as taken from `app`: it and its queues count it lost.
    fn take(&mut self, app: usize, id: ContainerId, resource: Resource) {
        self.taken.insert(id);
        let a = &mut self.apps[app];
        a.loss += resource;
        let mut cur = Some(a.leaf);
        while let Some(q) = cur {
            let Some(queue) = &mut self.queues[q] else {
                break;
            };
            queue.loss += resource;
            cur = queue.info.parent.map(|p| p.0 as usize);
        }
    }

    /// One container to take, found by walking down from root: at each
    /// parent the preemptable child most over its fair share; a leaf reached
    /// so must be over its fair share (by its parent's policy, as Hadoop
    /// checks only leaves: moving resources between the children of a
    /// parent at its fair share is the ordinary case) and not starved
    /// itself; in the leaf the app most over its fair share; in the app its
    /// next container.
    fn pick<V: PreemptionView>(
        &mut self,
        view: &V,
    ) -> Result<Option<(usize, NodeSlot, ContainerInfo)>, PreemptionError> {
        let Some(mut q) = self.root else {
            return Ok(None);
        };
        loop {
            let Some(queue) = &self.queues[q] else {
                return Ok(None);
            };
            if let Some(leaf) = queue.leaf {
                return Ok(self.pick_in_leaf(view, leaf));
            }
            let policy = queue.info.policy;
            let best = self.children[q]
                .iter()
                .filter_map(|c| self.queues[*c].as_ref().map(|queue| (*c, queue)))
                .filter(|(_, child)| child.info.preemptable)
                .max_by(|(_, x), (_, y)| {
                    order::compare(policy, &self.cluster, &queue_member(x), &queue_member(y))
                });
            let Some((child, queue)) = best else {
                return Ok(None);
            };
            if let Some(leaf) = queue.leaf {
                let usage = queue.info.usage - queue.loss;
                let starved = self.leaves[leaf].deficit.any_positive();
                if starved || !order::is_over_fair_share(policy, &usage, &queue.info.fair_share) {
                    return Ok(None);
                }
            }
            q = child;
        }
    }

    /// The next container of the leaf's app most over its fair share, among
    /// the apps that still hold something that may be taken.
    fn pick_in_leaf<V: PreemptionView>(
        &mut self,
        view: &V,
        leaf: usize,
    ) -> Option<(usize, NodeSlot, ContainerInfo)> {
        let slot = self.leaves[leaf].slot;
        let policy = self.queues[slot].as_ref()?.info.policy;
        let am_ok = self.leaves[leaf].am_ok;
        let mut exhausted = BTreeSet::new();
        loop {
            let best = self.leaves[leaf]
                .apps
                .clone()
                .filter(|a| !exhausted.contains(a))
                .filter(|a| (self.apps[*a].info.usage - self.apps[*a].loss).any_positive())
                .max_by(|x, y| {
                    order::compare(
                        policy,
                        &self.cluster,
                        &app_member(&self.apps[*x]),
                        &app_member(&self.apps[*y]),
                    )
                })?;
            let app = &mut self.apps[best];
            let candidates = app.candidates.get_or_insert_with(|| {
                let mut all: Vec<(NodeSlot, ContainerInfo)> = view
                    .app_containers(app.info.slot)
                    .filter(|(_, c)| am_ok || !c.is_am)
                    .collect();
                all.sort_by(|(_, a), (_, b)| victim_order(a, b));
                all
            });
            while let Some((node, c)) = candidates.get(app.next) {
                app.next += 1;
                if !self.taken.contains(&c.id) {
                    return Some((best, *node, *c));
                }
            }
            exhausted.insert(best);
        }
    }
}

fn queue_member<'a>(q: &PassQueue<'a>) -> Member<'a> {
    Member {
        usage: q.info.usage - q.loss,
        demand: q.info.demand,
        min_share: q.info.min_share,
        weight: q.info.weight,
        start: Time::ZERO,
        name: Name::Queue(q.info.path),
    }
}

fn app_member(a: &PassApp) -> Member<'static> {
    Member {
        usage: a.info.usage - a.loss,
        demand: a.info.demand,
        min_share: Resource::ZERO,
        weight: a.info.weight,
        start: a.info.start,
        name: Name::App(a.info.id),
    }
}

/// Hadoop 2.x's order inside an app: the lowest priority (the largest
/// number) first, then the newest container. AM containers get no special
/// treatment: they normally hold the highest priority.
fn victim_order(a: &ContainerInfo, b: &ContainerInfo) -> Ordering {
    b.priority.cmp(&a.priority).then_with(|| b.id.cmp(&a.id))
}

/// A resource vector that may go negative, as Hadoop's `Resource` does
/// while it sums deficits and subtracts what is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Signed([i128; N_RESOURCE_TYPES]);

impl Signed {
    const ZERO: Signed = Signed([0; N_RESOURCE_TYPES]);

    fn of(r: Resource) -> Signed {
        Signed(r.values().map(i128::from))
    }

    fn minus(self, r: Resource) -> Signed {
        let mut res = self;
        for (x, v) in res.0.iter_mut().zip(r.values()) {
            *x -= i128::from(v);
        }
        res
    }

    fn plus(self, other: Signed) -> Signed {
        let mut res = self;
        for (x, v) in res.0.iter_mut().zip(other.0) {
            *x += v;
        }
        res
    }

    /// Hadoop's `isResourceGreaterThanNone`: some component is positive.
    fn any_positive(&self) -> bool {
        self.0.iter().any(|x| *x > 0)
    }

    /// Negative components as zero.
    fn clamped(&self) -> Resource {
        Resource::from_values(self.0.map(|x| u64::try_from(x.max(0)).unwrap_or(u64::MAX)))
    }

    /// Hadoop's `Resources.max(calc, none, self)`: itself when the calculator
    /// finds it above zero, else zero.
    fn positive_part(self, calc: &Calc) -> Signed {
        if Signed::compare(calc, &self, &Signed::ZERO) == Ordering::Greater {
            self
        } else {
            Signed::ZERO
        }
    }

    /// The calculator's comparison: memory, or the shares of the cluster
    /// from the largest down.
    fn compare(calc: &Calc, a: &Signed, b: &Signed) -> Ordering {
        match calc {
            Calc::Memory => a.0[0].cmp(&b.0[0]),
            Calc::Dominant { cluster } => {
                if a == b {
                    return Ordering::Equal;
                }
                let shares = |s: &Signed| {
                    let mut shares = [0.0; N_RESOURCE_TYPES];
                    for ((share, x), c) in shares.iter_mut().zip(s.0).zip(cluster.values()) {
                        *share = if c == 0 { 0.0 } else { x as f64 / c as f64 };
                    }
                    shares
                };
                compare_share_vectors(shares(a), shares(b))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_model::Priority;

    #[test]
    fn deficits_stay_signed_as_in_hadoop() {
        // A fair leaf 1000 MB short but 4 vcores over: the memory calculator
        // sees a deficit, and the negative vcores offset another leaf's.
        let memory = Calc::Memory;
        let a = Signed::of(Resource::new(2000, 1))
            .minus(Resource::new(1000, 5))
            .positive_part(&memory);
        assert_eq!(a, Signed([1000, -4]));
        let b = Signed::of(Resource::new(500, 3)).positive_part(&memory);
        let pool = a.plus(b);
        assert_eq!(pool, Signed([1500, -1]));
        assert_eq!(pool.clamped(), Resource::new(1500, 0));
        // Taking 1500 MB covers it: no component is left positive.
        assert!(!pool.minus(Resource::new(1500, 0)).any_positive());
        // Under DRF any positive share counts.
        let drf = Calc::Dominant {
            cluster: Resource::new(10_000, 10),
        };
        let vcores_short = Signed([-100, 2]);
        assert_eq!(vcores_short.positive_part(&drf), vcores_short);
        assert_eq!(Signed([-100, 0]).positive_part(&drf), Signed::ZERO);
    }

    #[test]
    fn containers_go_lowest_priority_then_newest_first() {
        use weft_model::{AppId, AttemptId};
        let c = |seq: u64, priority: i32| ContainerInfo {
            id: ContainerId::new(AttemptId::new(AppId::new(1, 1), 1), seq),
            app: AppSlot(0),
            resource: Resource::new(1024, 1),
            priority: Priority(priority),
            is_am: seq == 1,
            launched: Time::ZERO,
        };
        let mut all = [c(1, 0), c(2, 1), c(3, 5), c(4, 1)];
        all.sort_by(victim_order);
        let order: Vec<u64> = all.iter().map(|c| c.id.seq).collect();
        assert_eq!(order, [3, 4, 2, 1]);
    }
}
