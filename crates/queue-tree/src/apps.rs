//! Apps as schedulables in the tree: adding, removing and moving them, their
//! usage and pending work as the core reports it, the policy-ordered walk the
//! core uses to offer a node, and the per-queue checks it makes on the way
//! (max share, AM share, container size, headroom).
//!
//! Which containers an app holds and what it asks for is the core's; the tree
//! keeps only the totals that fair sharing needs.

use weft_model::{AppId, AppPriority, QueuePath, Resource, ResourceType, Time};

use crate::config::{AmShare, QueueKind};
use crate::ordering::PolicyWords;
use crate::policy::Policy;
use crate::tree::{App, AppHandle, QueueCreateError, QueueId, QueueTree, ROOT};

/// An application entering the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct NewApp {
    /// The application.
    pub id: AppId,
    /// The leaf placement chose.
    pub queue: QueuePath,
    /// Whether placement allows creating that queue (and its missing parents).
    pub create_queue: bool,
    /// The submitting user.
    pub user: String,
    /// Submission time: FIFO order and running-app wake-up order.
    pub start: Time,
    /// App priority (a larger number is more important).
    pub priority: AppPriority,
    /// The AM container's size, or `None` for an unmanaged AM.
    pub am_resource: Option<Resource>,
}

/// The app as added.
#[derive(Clone, Debug, PartialEq)]
pub struct AddedApp {
    /// Its handle.
    pub handle: AppHandle,
    /// Its leaf.
    pub queue: QueueId,
    /// `None` when runnable; otherwise the limit it waits on.
    pub waiting: Option<WaitReason>,
}

/// Why an app is not runnable yet.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WaitReason {
    /// The user runs as many apps as allowed.
    #[error(
        "user {user} already runs {limit} applications, the most allowed (maxRunningApps for users)"
    )]
    UserLimit {
        /// The user.
        user: String,
        /// The limit.
        limit: u32,
    },
    /// A queue on the app's path runs as many apps as allowed.
    #[error("queue {queue} already runs {limit} applications, its maxRunningApps")]
    QueueLimit {
        /// The queue at its limit.
        queue: QueuePath,
        /// The limit.
        limit: u32,
    },
}

/// Why an app could not be added.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddAppError {
    /// The id is already in the tree.
    #[error("application {0} is already in a queue")]
    Duplicate(AppId),
    /// The target queue does not exist and cannot be created.
    #[error(transparent)]
    Queue(#[from] QueueCreateError),
    /// The AM asks for a resource type the queue's max share allows none of.
    #[error(
        "queue {queue} has a max share of 0 {resource_type} but the application master asks for some"
    )]
    ZeroMaxShare {
        /// The leaf.
        queue: QueuePath,
        /// The type with zero max.
        resource_type: ResourceType,
    },
}

/// Why an app could not be moved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveAppError {
    /// Hadoop: "Target queue X not found or is not a leaf queue."
    #[error("target queue {0} not found or is not a leaf queue")]
    TargetNotLeaf(QueuePath),
    /// A queue on the target's path is at its running-app limit.
    #[error("cannot move: queue {queue} already runs {limit} applications, its maxRunningApps")]
    RunningAppLimit {
        /// The queue at its limit.
        queue: QueuePath,
        /// The limit.
        limit: u32,
    },
    /// The app's usage would take a queue on the target's path over its max share.
    #[error(
        "cannot move: queue {queue} would use {would_use} with this application, over its max share {max_share}"
    )]
    OverMaxShare {
        /// The queue that would overflow.
        queue: QueuePath,
        /// Its usage plus the app's.
        would_use: Resource,
        /// Its max share.
        max_share: Resource,
    },
}

/// What the core offers an app during a walk, and what the app answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Visit<T> {
    /// The app took something: stop the walk with this value.
    Took(T),
    /// The app took nothing: offer the next one.
    Pass,
    /// Stop the walk with nothing (for example, the node got reserved).
    Stop,
}

enum Flow<T> {
    Continue,
    Done(Option<T>),
}

impl QueueTree {
    /// Adds an app to its leaf (creating it when allowed), runnable or waiting
    /// on a running-app limit.
    pub fn add_app(&mut self, new: NewApp) -> Result<AddedApp, AddAppError> {
        if self.app_ids.contains_key(&new.id) {
            return Err(AddAppError::Duplicate(new.id));
        }
        if let Some(id) = self.queue_id(&new.queue) {
            // Check before any queue is created, so a refusal changes nothing.
            if let Some(am) = new.am_resource {
                self.check_zero_max(id, am)?;
            }
        }
        let leaf = self.ensure_leaf(&new.queue, new.create_queue)?;
        if let Some(am) = new.am_resource {
            self.check_zero_max(leaf, am)?;
        }
        let app = App {
            id: new.id,
            tie: new.id.text_order_key(),
            queue: leaf,
            user: new.user.clone(),
            start: new.start,
            priority: new.priority.0,
            weight: app_weight(
                self.settings.size_based_weight,
                Resource::ZERO,
                new.priority.0,
            ),
            usage: Resource::ZERO,
            pending: Resource::ZERO,
            demand: Resource::ZERO,
            fair_share: Resource::ZERO,
            am_resource: new.am_resource.unwrap_or(Resource::ZERO),
            unmanaged_am: new.am_resource.is_none(),
            am_started: false,
            runnable: false,
            runnable_pos: 0,
            listed: false,
            listed_slot: 0,
        };
        let handle = match self.free_apps.pop() {
            Some(slot) => {
                self.apps[slot as usize] = Some(app);
                AppHandle(slot)
            }
            None => {
                self.apps.push(Some(app));
                AppHandle(self.apps.len() as u32 - 1)
            }
        };
        self.app_ids.insert(new.id, handle);
        self.users.entry(new.user).or_default().n_apps += 1;
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            self.queue_mut(q).n_apps += 1;
            cur = self.queue(q).parent;
        }
        let waiting = self.runnable_check(leaf, &self.app(handle).user);
        match &waiting {
            None => self.make_runnable(handle),
            Some(_) => self.add_waiting(handle),
        }
        Ok(AddedApp {
            handle,
            queue: leaf,
            waiting,
        })
    }

    /// Removes an app, releasing whatever usage it still holds; returns apps
    /// that became runnable because it left.
    pub fn remove_app(&mut self, h: AppHandle) -> Vec<AppId> {
        let usage = self.app(h).usage;
        if usage.any_positive() {
            self.remove_usage(h, usage);
        }
        self.set_app_listed(h, false);
        let was_runnable = self.app(h).runnable;
        let leaf = self.app(h).queue;
        let user = self.app(h).user.clone();
        let woken = if was_runnable {
            self.make_not_runnable(h);
            self.wake_after_removal(leaf, &user)
        } else {
            self.remove_waiting(h);
            Vec::new()
        };
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            self.queue_mut(q).n_apps -= 1;
            cur = self.queue(q).parent;
        }
        if let Some(state) = self.users.get_mut(&user) {
            state.n_apps -= 1;
            if state.n_apps == 0 {
                self.users.remove(&user);
            }
        }
        let app = self.apps[h.0 as usize].take().expect("live app handle");
        self.app_ids.remove(&app.id);
        self.free_apps.push(h.0);
        woken
    }

    /// Moves an app to another leaf with its usage, demand and runnable state
    /// (Hadoop's checks: the target exists and is a leaf; for a runnable app,
    /// no queue between the target and the common ancestor is at its
    /// running-app limit or would exceed its max share). Returns apps that
    /// became runnable in the source.
    pub fn move_app(
        &mut self,
        h: AppHandle,
        target: &QueuePath,
    ) -> Result<Vec<AppId>, MoveAppError> {
        let Some(to) = self
            .queue_id(target)
            .filter(|id| self.queue(*id).kind == QueueKind::Leaf)
        else {
            return Err(MoveAppError::TargetNotLeaf(target.clone()));
        };
        let from = self.app(h).queue;
        if from == to {
            return Ok(Vec::new());
        }
        let usage = self.app(h).usage;
        let was_runnable = self.app(h).runnable;
        let common = self.common_ancestor(from, to);
        if was_runnable {
            let mut cur = Some(to);
            while let Some(q) = cur.filter(|q| *q != common) {
                let queue = self.queue(q);
                if let Some(limit) = queue.settings.max_running_apps
                    && queue.n_runnable >= limit
                {
                    return Err(MoveAppError::RunningAppLimit {
                        queue: queue.path.clone(),
                        limit,
                    });
                }
                let would_use = queue.usage + usage;
                if !would_use.fits_in(&queue.settings.max_share) {
                    return Err(MoveAppError::OverMaxShare {
                        queue: queue.path.clone(),
                        would_use,
                        max_share: queue.settings.max_share,
                    });
                }
                cur = queue.parent;
            }
        }
        let user = self.app(h).user.clone();
        let pending = self.app(h).pending;
        // Take the app out of the source...
        self.set_app_listed(h, false);
        if usage.any_positive() {
            self.remove_usage(h, usage);
        }
        if was_runnable {
            self.make_not_runnable(h);
        } else {
            self.remove_waiting(h);
        }
        let mut cur = Some(from);
        while let Some(q) = cur {
            self.queue_mut(q).n_apps -= 1;
            cur = self.queue(q).parent;
        }
        // ...put it in the target...
        self.app_mut(h).queue = to;
        let mut cur = Some(to);
        while let Some(q) = cur {
            self.queue_mut(q).n_apps += 1;
            cur = self.queue(q).parent;
        }
        if usage.any_positive() {
            self.add_usage(h, usage);
        }
        // A runnable app stays runnable: the checks above hold the queues
        // below the common ancestor, and nothing above it changes.
        if was_runnable || self.runnable_check(to, &user).is_none() {
            self.make_runnable(h);
        } else {
            self.add_waiting(h);
        }
        self.set_pending(h, pending);
        // ...and only then let waiting apps in the source take the freed
        // slot, so the common ancestors' counts never dip below the truth.
        let woken = if was_runnable {
            self.wake_after_removal(from, &user)
        } else {
            Vec::new()
        };
        Ok(woken)
    }

    /// Changes an app's priority: its weight and FIFO position follow.
    pub fn set_app_priority(&mut self, h: AppHandle, priority: AppPriority) {
        let size_based = self.settings.size_based_weight;
        let app = self.app_mut(h);
        app.priority = priority.0;
        app.weight = app_weight(size_based, app.demand, priority.0);
        self.rekey_app(h);
    }

    /// Records resources newly allocated to an app (a container started).
    pub fn add_usage(&mut self, h: AppHandle, res: Resource) {
        self.change_usage(h, |usage| *usage += res);
    }

    /// Records resources an app gave back (a container ended).
    pub fn remove_usage(&mut self, h: AppHandle, res: Resource) {
        self.change_usage(h, |usage| {
            debug_assert!(res.fits_in(usage), "releasing more than is used");
            *usage -= res;
        });
    }

    /// Applies `change` to the usage of the app and of every queue on its
    /// path, re-keying each in its parent's order on the way up.
    ///
    /// Every allocation and completion comes through here, so the path is
    /// walked once, each queue looked up once: a level re-keys the member
    /// below it (whose key inputs it carries up) in its own order, then
    /// changes its own usage and hands its inputs to its parent.
    #[inline]
    fn change_usage(&mut self, h: AppHandle, change: impl Fn(&mut Resource)) {
        let cluster = self.cluster;
        let app = self.app_mut(h);
        change(&mut app.usage);
        let (mut listed, mut slot) = (app.listed, app.listed_slot);
        let mut inputs = crate::tree::app_key_inputs(app, h);
        let mut id = app.queue;
        loop {
            let queue = self.queue_mut(id);
            if listed {
                let words = PolicyWords::new(queue.settings.policy, &inputs, &cluster);
                queue.order.set_policy(slot, words);
            }
            change(&mut queue.usage);
            let Some(parent) = queue.parent else {
                return;
            };
            (listed, slot) = (queue.listed, queue.listed_slot);
            inputs = crate::tree::queue_key_inputs(queue, id);
            id = parent;
        }
    }

    /// Sets an app's outstanding asks (their total size). An app is offered
    /// nodes only while it is runnable and has some.
    pub fn set_pending(&mut self, h: AppHandle, pending: Resource) {
        let app = self.app_mut(h);
        app.pending = pending;
        let listed = app.runnable && pending.any_positive();
        self.set_app_listed(h, listed);
    }

    /// Records that an app's AM container was allocated: its size now counts
    /// against the leaf's AM share until the app leaves.
    pub fn am_started(&mut self, h: AppHandle) {
        let app = self.app(h);
        if app.unmanaged_am || app.am_started {
            return;
        }
        let (leaf, am) = (app.queue, app.am_resource);
        self.app_mut(h).am_started = true;
        self.queue_mut(leaf).am_usage += am;
    }

    /// Records that an app's AM container ended before the app did (a new
    /// attempt will start another): its size no longer counts against the AM share.
    pub fn am_stopped(&mut self, h: AppHandle) {
        let app = self.app(h);
        if !app.am_started {
            return;
        }
        let (leaf, am, runnable) = (app.queue, app.am_resource, app.runnable);
        self.app_mut(h).am_started = false;
        if runnable {
            self.queue_mut(leaf).am_usage -= am;
        }
    }

    /// The app with this id.
    pub fn app_handle(&self, id: AppId) -> Option<AppHandle> {
        self.app_ids.get(&id).copied()
    }

    /// The app's id.
    #[inline]
    pub fn app_id(&self, h: AppHandle) -> AppId {
        self.app(h).id
    }

    /// The app's leaf.
    #[inline]
    pub fn app_queue(&self, h: AppHandle) -> QueueId {
        self.app(h).queue
    }

    /// The app's user.
    pub fn app_user(&self, h: AppHandle) -> &str {
        &self.app(h).user
    }

    /// The app's current usage.
    #[inline]
    pub fn app_usage(&self, h: AppHandle) -> Resource {
        self.app(h).usage
    }

    /// The app's outstanding asks as last reported.
    #[inline]
    pub fn app_pending(&self, h: AppHandle) -> Resource {
        self.app(h).pending
    }

    /// The app's demand as of the last update.
    pub fn app_demand(&self, h: AppHandle) -> Resource {
        self.app(h).demand
    }

    /// The app's instantaneous fair share as of the last update.
    #[inline]
    pub fn app_fair_share(&self, h: AppHandle) -> Resource {
        self.app(h).fair_share
    }

    /// The app's weight.
    pub fn app_weight(&self, h: AppHandle) -> f32 {
        self.app(h).weight
    }

    /// The app's start (submission) time.
    pub fn app_start(&self, h: AppHandle) -> Time {
        self.app(h).start
    }

    /// The app's priority.
    pub fn app_priority(&self, h: AppHandle) -> AppPriority {
        AppPriority(self.app(h).priority)
    }

    /// True when the app is runnable (not waiting on a running-app limit).
    #[inline]
    pub fn app_is_runnable(&self, h: AppHandle) -> bool {
        self.app(h).runnable
    }

    /// True once the app's AM container was allocated (always false for unmanaged AMs).
    #[inline]
    pub fn app_am_started(&self, h: AppHandle) -> bool {
        self.app(h).am_started
    }

    /// True for an unmanaged AM (it needs no AM container).
    #[inline]
    pub fn app_is_unmanaged(&self, h: AppHandle) -> bool {
        self.app(h).unmanaged_am
    }

    /// Every app, in id order.
    pub fn app_handles(&self) -> impl Iterator<Item = AppHandle> + '_ {
        self.app_ids.values().copied()
    }

    /// A leaf's runnable apps: first those with pending asks, in the order
    /// the leaf's policy offers them a node, then the others.
    pub fn leaf_apps_in_order(&self, leaf: QueueId) -> impl Iterator<Item = AppHandle> + '_ {
        let queue = self.queue(leaf);
        let listed = queue.order.iter().map(|key| AppHandle(key.member));
        let rest = queue
            .runnable_apps
            .iter()
            .copied()
            .filter(|h| !self.app(*h).listed);
        listed.chain(rest)
    }

    /// True when some runnable app has pending asks (a walk could find work).
    #[inline]
    pub fn has_schedulable_apps(&self) -> bool {
        !self.queue(ROOT).order.is_empty()
    }

    /// Number of apps in the tree.
    pub fn n_apps(&self) -> usize {
        self.app_ids.len()
    }

    /// Offers work to apps in policy order: root's listed children in order,
    /// recursively, then each leaf's listed apps in order, skipping queues
    /// whose usage no longer fits their max share (a lowered max after a
    /// reload). Stops at the first `Took` or `Stop`.
    pub fn walk<T>(&self, mut visit: impl FnMut(AppHandle) -> Visit<T>) -> Option<T> {
        match self.walk_queue(ROOT, &mut visit) {
            Flow::Continue => None,
            Flow::Done(v) => v,
        }
    }

    fn walk_queue<T>(&self, id: QueueId, visit: &mut impl FnMut(AppHandle) -> Visit<T>) -> Flow<T> {
        let queue = self.queue(id);
        let max = &queue.settings.max_share;
        if *max != Resource::UNBOUNDED && !queue.usage.fits_in(max) {
            return Flow::Continue;
        }
        // The first member usually takes the node: it is cached in the set,
        // and the others are read in order only when it passes.
        let Some(first) = queue.order.first() else {
            return Flow::Continue;
        };
        if let Flow::Done(v) = self.walk_member(queue.kind, first, visit) {
            return Flow::Done(v);
        }
        for key in queue.order.iter().skip(1) {
            if let Flow::Done(v) = self.walk_member(queue.kind, key.member, visit) {
                return Flow::Done(v);
            }
        }
        Flow::Continue
    }

    #[inline]
    fn walk_member<T>(
        &self,
        kind: QueueKind,
        member: u32,
        visit: &mut impl FnMut(AppHandle) -> Visit<T>,
    ) -> Flow<T> {
        match kind {
            QueueKind::Parent => self.walk_queue(QueueId(member), visit),
            QueueKind::Leaf => match visit(AppHandle(member)) {
                Visit::Took(v) => Flow::Done(Some(v)),
                Visit::Pass => Flow::Continue,
                Visit::Stop => Flow::Done(None),
            },
        }
    }

    /// True when `res` more would keep the queue and all its ancestors within their max shares.
    #[inline]
    pub fn fits_in_max_share(&self, leaf: QueueId, res: Resource) -> bool {
        self.max_share_blocker(leaf, res).is_none()
    }

    /// The nearest queue, from `leaf` up to root, that `res` more would take
    /// over its max share; `None` when every one has room. The one check
    /// behind `fits_in_max_share`, so an explanation names the queue the
    /// scheduler stops at.
    #[inline]
    pub fn max_share_blocker(&self, leaf: QueueId, res: Resource) -> Option<QueueId> {
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            let queue = self.queue(q);
            // Most queues have no max share: skip the sum for them.
            let max = &queue.settings.max_share;
            if *max != Resource::UNBOUNDED && !(queue.usage + res).fits_in(max) {
                return Some(q);
            }
            cur = queue.parent;
        }
        None
    }

    /// The largest container the queue may hold.
    pub fn max_container_allocation(&self, leaf: QueueId) -> Resource {
        self.queue(leaf).settings.max_container_allocation
    }

    /// Cluster capacity minus everything allocated (Hadoop's root "available").
    #[inline]
    pub fn cluster_available(&self) -> Resource {
        self.cluster - self.queue(ROOT).usage
    }

    /// The most a leaf's AMs may use together, or `None` when unlimited
    /// (Hadoop's `computeMaxAMResource`: the fair share, with any type whose
    /// fair share is 0 replaced by min(cluster available, max share), times
    /// `maxAMShare`, rounded up).
    pub fn am_limit(&self, leaf: QueueId) -> Option<Resource> {
        let queue = self.queue(leaf);
        let AmShare::Fraction(fraction) = queue.settings.max_am_share else {
            return None;
        };
        // Hadoop keeps maxAMShare as a float and widens it only to multiply,
        // so 0.1 is 0.100000001490116...: rounding up then gives ceil(10 ×
        // 0.1f) = 2, not 1. Narrowing here reproduces that without changing
        // the configured value operators see.
        let fraction = f64::from(fraction as f32);
        let available = self.cluster_available();
        let base = queue.fair_share.map(|ty, v| {
            if v == 0 {
                available.get(ty).min(queue.settings.max_share.get(ty))
            } else {
                v
            }
        });
        Some(base.scale_up(fraction))
    }

    /// The leaf's current AM usage.
    pub fn am_usage(&self, leaf: QueueId) -> Resource {
        self.queue(leaf).am_usage
    }

    /// True when the app's AM may start now under its leaf's `maxAMShare`
    /// (always for unmanaged AMs and once the AM runs).
    pub fn can_start_am(&self, h: AppHandle) -> bool {
        let app = self.app(h);
        if app.unmanaged_am || app.am_started {
            return true;
        }
        match self.am_limit(app.queue) {
            None => true,
            Some(limit) => (self.queue(app.queue).am_usage + app.am_resource).fits_in(&limit),
        }
    }

    /// What the app may still get (Hadoop's headroom): per type the least of
    /// its queue's fair share left, what is free in the cluster (`cluster_free`,
    /// which the caller may reduce by blacklisted nodes) and the queue's max
    /// share left. Under `fair` and `fifo` only memory looks at the fair share.
    pub fn headroom(&self, h: AppHandle, cluster_free: Resource) -> Resource {
        let leaf = self.queue(self.app(h).queue);
        let fair_left = leaf.fair_share - leaf.usage;
        let max_left = leaf.settings.max_share - leaf.usage;
        let mut res = cluster_free.component_min(max_left);
        match leaf.settings.policy {
            Policy::Drf => res = res.component_min(fair_left),
            Policy::Fair | Policy::Fifo => {
                let memory = res.memory_mb().min(fair_left.memory_mb());
                res.set(ResourceType::Memory, memory);
            }
        }
        res
    }

    fn check_zero_max(&self, leaf: QueueId, am: Resource) -> Result<(), AddAppError> {
        let queue = self.queue(leaf);
        for ty in ResourceType::ALL {
            if am.get(ty) > 0 && queue.settings.max_share.get(ty) == 0 {
                return Err(AddAppError::ZeroMaxShare {
                    queue: queue.path.clone(),
                    resource_type: ty,
                });
            }
        }
        Ok(())
    }

    fn common_ancestor(&self, a: QueueId, b: QueueId) -> QueueId {
        let mut path_a = Vec::new();
        let mut cur = Some(a);
        while let Some(q) = cur {
            path_a.push(q);
            cur = self.queue(q).parent;
        }
        let mut cur = Some(b);
        while let Some(q) = cur {
            if path_a.contains(&q) {
                return q;
            }
            cur = self.queue(q).parent;
        }
        ROOT
    }
}

/// Hadoop's app weight (`getAppWeight`), with Weft's app priorities: 1, or
/// log2(1 + demand MB) with size-based weight, doubled for each priority level
/// above 0 and halved for each below (seed 000: "each level gives 2x more
/// weight"). Kept as `f32` like Hadoop's.
pub(crate) fn app_weight(size_based: bool, demand: Resource, priority: i32) -> f32 {
    let base = if size_based {
        (demand.memory_mb() as f64).ln_1p() / std::f64::consts::LN_2
    } else {
        1.0
    };
    (base * pow2(priority.clamp(-64, 64))) as f32
}

/// `2^k` for `-64 <= k <= 64`, built from its bits: exactly what
/// `2f64.powi(k)` gives (every power of two in that range is a normal
/// double), without a call per app and update.
fn pow2(k: i32) -> f64 {
    debug_assert!((-64..=64).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_are_powi_bit_for_bit() {
        for k in -64..=64 {
            assert_eq!(pow2(k).to_bits(), 2f64.powi(k).to_bits(), "2^{k}");
        }
    }

    #[test]
    fn weights() {
        assert_eq!(app_weight(false, Resource::ZERO, 0), 1.0);
        assert_eq!(app_weight(false, Resource::ZERO, 1), 2.0);
        assert_eq!(app_weight(false, Resource::ZERO, -1), 0.5);
        assert_eq!(app_weight(true, Resource::new(1, 0), 0), 1.0);
        assert_eq!(app_weight(true, Resource::new(1023, 0), 0), 10.0);
        assert_eq!(app_weight(true, Resource::ZERO, 0), 0.0);
    }
}
