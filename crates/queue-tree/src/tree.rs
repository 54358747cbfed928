//! The live queue tree: parent queues, leaf queues and app schedulables as one
//! composite in an arena, with each queue's effective settings resolved from
//! the allocation file, dynamic queue creation and removal, and config reload
//! that keeps every app and its usage.
//!
//! Apps (`apps.rs`), fair shares (`shares.rs`), running-app limits
//! (`limits.rs`) and the read-only snapshot (`snapshot.rs`) are further
//! `impl QueueTree` blocks. Nodes, containers and requests are the core's: the
//! tree only hears about their totals (usage, pending demand).

use std::collections::{BTreeMap, BTreeSet};

use weft_model::{AppId, Duration, QueuePath, Resource, ResourceSpec, Time};

use crate::acl::{Acl, QueueAccess};
use crate::config::{AllocConfig, AmShare, MAX_QUEUE_DEPTH, QueueConfig, QueueKind};
use crate::ordering::{KeyInputs, OrderKey, OrderSet, PolicyWords};
use crate::policy::Policy;

/// A queue in the arena. Stable for the queue's life; never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueId(pub(crate) u32);

impl QueueId {
    /// The arena index, below `QueueTree::queue_slot_count()`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An app in the arena. Valid from `add_app` until `remove_app`; the slot is
/// then reused, so a holder must drop it when the app goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppHandle(pub(crate) u32);

impl AppHandle {
    /// The arena index, for callers that keep per-app data in a parallel vector.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The scheduler-wide settings the tree needs (a subset of the site settings).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeSettings {
    /// `yarn.scheduler.fair.sizebasedweight`: app weight grows with log2 of its memory demand.
    pub size_based_weight: bool,
    /// `yarn.scheduler.maximum-allocation-*`: caps every queue's `maxContainerAllocation`.
    pub max_container_allocation: Resource,
}

impl Default for TreeSettings {
    fn default() -> TreeSettings {
        TreeSettings {
            size_based_weight: false,
            max_container_allocation: Resource::new(8192, 4),
        }
    }
}

/// A queue's settings after inheritance and defaults, as in force now.
///
/// Laid out in declaration order with what re-keying and the walk read
/// first (weight, policy, min and max share), as the tail of `Queue`'s hot part.
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct QueueSettings {
    /// Share weight (Hadoop keeps a `float`).
    pub weight: f32,
    /// Policy ordering this queue's children or apps.
    pub policy: Policy,
    /// Guaranteed share.
    pub min_share: Resource,
    /// Effective max share: the spec resolved against the cluster, raised to the min share.
    pub max_share: Resource,
    /// The configured max (absolute or a percentage), before resolution.
    pub max_share_spec: Option<ResourceSpec>,
    /// Max of dynamic children created under this queue.
    pub max_child_share: Option<ResourceSpec>,
    /// Running-app limit; `None` is unlimited.
    pub max_running_apps: Option<u32>,
    /// Share of the fair share AMs may use (leaves).
    pub max_am_share: AmShare,
    /// Largest container this queue may hold: the nearest setting up the tree, capped by the scheduler max.
    pub max_container_allocation: Resource,
    /// Own `aclSubmitApps` (ancestors are consulted too).
    pub acl_submit_apps: Acl,
    /// Own `aclAdministerApps` (ancestors are consulted too).
    pub acl_administer_apps: Acl,
    /// Time below min share before min-share preemption.
    pub min_share_preemption_timeout: Duration,
    /// Time below the fair-share threshold before fair-share preemption.
    pub fair_share_preemption_timeout: Duration,
    /// Fraction of fair share below which an app counts as starved.
    pub fair_share_preemption_threshold: f64,
    /// False when this queue or an ancestor sets `allowPreemptionFrom` false.
    pub preemptable: bool,
    /// A reservation-system plan queue.
    pub reservable: bool,
}

/// The live tree.
#[derive(Clone, Debug)]
pub struct QueueTree {
    pub(crate) queues: Vec<Option<Queue>>,
    pub(crate) by_path: BTreeMap<QueuePath, QueueId>,
    pub(crate) apps: Vec<Option<App>>,
    pub(crate) free_apps: Vec<u32>,
    pub(crate) app_ids: BTreeMap<AppId, AppHandle>,
    pub(crate) users: BTreeMap<String, UserState>,
    pub(crate) config: AllocConfig,
    pub(crate) settings: TreeSettings,
    pub(crate) cluster: Resource,
    pub(crate) scratch: crate::shares::Scratch,
}

/// A queue. The fields every allocation reads or writes on each level of its
/// path (the walk, the max-share check, usage and re-keying) come first and
/// the settings' hot head last among them, so that they share three or four
/// cache lines: with a thousand queues, a queue's record is rarely in cache
/// when an allocation reaches it, and each line is a miss.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct Queue {
    pub(crate) usage: Resource,
    pub(crate) demand: Resource,
    pub(crate) parent: Option<QueueId>,
    /// Its slot in the parent's `order` while `listed`.
    pub(crate) listed_slot: u32,
    /// Position among the parent's children by name: the last tie-breaker.
    pub(crate) name_rank: u32,
    pub(crate) kind: QueueKind,
    /// Listed in its parent's `order` (its key is kept there).
    pub(crate) listed: bool,
    /// Between update passes: this subtree was left all zero (no apps, every
    /// share and demand 0). During a pass: this child is skipped.
    pub(crate) skip_update: bool,
    /// Members with work to offer (children with listed members, or runnable
    /// apps with pending asks), in policy order.
    pub(crate) order: OrderSet,
    /// Every allocation's event names its leaf: kept beside the hot fields.
    pub(crate) path: QueuePath,
    /// Starts with the fields re-keying and the walk read (see `QueueSettings`).
    pub(crate) settings: QueueSettings,
    /// Children sorted by name.
    pub(crate) children: Vec<QueueId>,
    /// Declared in the allocation file now in force.
    pub(crate) configured: bool,
    /// A leaf/parent change the file asks for, applied once the queue is empty.
    pub(crate) wanted_kind: Option<QueueKind>,
    pub(crate) fair_share: Resource,
    pub(crate) steady_fair_share: Resource,
    /// Sum of the AM sizes of this leaf's runnable apps whose AM has started.
    pub(crate) am_usage: Resource,
    /// Runnable apps in the subtree.
    pub(crate) n_runnable: u32,
    /// All apps in the subtree.
    pub(crate) n_apps: u32,
    /// Leaf: runnable apps, in no particular order (each app knows its position).
    pub(crate) runnable_apps: Vec<AppHandle>,
    /// Leaf: apps waiting on a running-app limit, in start order.
    pub(crate) waiting_apps: BTreeSet<(Time, u128, AppHandle)>,
}

/// An app as the tree sees it. As for `Queue`, what an allocation reads
/// and writes (its key's inputs, its leaf, its slot there) comes first, in
/// the first cache line or two.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct App {
    pub(crate) usage: Resource,
    pub(crate) demand: Resource,
    pub(crate) tie: u128,
    pub(crate) start: Time,
    pub(crate) weight: f32,
    pub(crate) priority: i32,
    pub(crate) queue: QueueId,
    /// Its slot in the leaf's `order` while `listed`.
    pub(crate) listed_slot: u32,
    /// Listed in its leaf's `order` (its key is kept there).
    pub(crate) listed: bool,
    pub(crate) runnable: bool,
    pub(crate) unmanaged_am: bool,
    pub(crate) am_started: bool,
    /// Index in the leaf's `runnable_apps` while runnable.
    pub(crate) runnable_pos: u32,
    pub(crate) pending: Resource,
    pub(crate) id: AppId,
    pub(crate) user: String,
    pub(crate) fair_share: Resource,
    /// Size of the AM container; zero for an unmanaged AM.
    pub(crate) am_resource: Resource,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct UserState {
    pub(crate) n_runnable: u32,
    pub(crate) waiting: BTreeSet<(Time, u128, AppHandle)>,
    pub(crate) n_apps: u32,
}

/// Why a queue could not be found or created for an app.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueueCreateError {
    /// The queue is a parent; apps go into leaves.
    #[error("queue {path} is a parent queue, not a leaf")]
    NotALeaf {
        /// The queue asked for.
        path: QueuePath,
    },
    /// The queue would have to be created under a leaf.
    #[error("queue {path} cannot be created: {leaf} is a leaf queue and cannot have children")]
    UnderLeaf {
        /// The queue asked for.
        path: QueuePath,
        /// The existing leaf on its path.
        leaf: QueuePath,
    },
    /// The queue does not exist and may not be created.
    #[error("queue {path} does not exist and placement did not allow creating it")]
    NotFound {
        /// The queue asked for.
        path: QueuePath,
    },
    /// The default policy for a new queue is not allowed under its parent.
    #[error(
        "queue {path} cannot be created: its parent {parent} uses {parent_policy} and cannot have a {child_policy} child"
    )]
    IncompatiblePolicy {
        /// The queue asked for.
        path: QueuePath,
        /// The parent that refuses it.
        parent: QueuePath,
        /// The parent's policy.
        parent_policy: Policy,
        /// The policy the new queue would get.
        child_policy: Policy,
    },
    /// The queue would sit deeper than the tree takes.
    #[error("queue {path} cannot be created: it is {depth} levels below root, more than {max}")]
    TooDeep {
        /// The queue asked for.
        path: QueuePath,
        /// Its levels below root.
        depth: usize,
        /// `MAX_QUEUE_DEPTH`.
        max: usize,
    },
}

/// What applying a new allocation configuration did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigApplied {
    /// Apps that were waiting on a running-app limit and are now runnable.
    pub now_runnable: Vec<AppId>,
    /// Queues whose leaf/parent change waits until they are empty.
    pub pending_type_changes: Vec<QueuePath>,
    /// Configured queues that could not be created yet (under a leaf that still has apps).
    pub deferred_queues: Vec<QueuePath>,
}

pub(crate) const ROOT: QueueId = QueueId(0);

impl QueueTree {
    /// A tree holding the configured queues, on a cluster of the given size.
    pub fn new(config: AllocConfig, settings: TreeSettings, cluster: Resource) -> QueueTree {
        let root_settings = placeholder_settings();
        let root = Queue::new(
            QueuePath::root(),
            None,
            QueueKind::Parent,
            true,
            root_settings,
        );
        let mut tree = QueueTree {
            queues: vec![Some(root)],
            by_path: BTreeMap::from([(QueuePath::root(), ROOT)]),
            apps: Vec::new(),
            free_apps: Vec::new(),
            app_ids: BTreeMap::new(),
            users: BTreeMap::new(),
            config: AllocConfig::default(),
            settings,
            cluster,
            scratch: crate::shares::Scratch::default(),
        };
        tree.apply_config(config);
        tree
    }

    /// The configuration in force.
    pub fn config(&self) -> &AllocConfig {
        &self.config
    }

    /// The scheduler-wide settings in force.
    pub fn settings(&self) -> &TreeSettings {
        &self.settings
    }

    /// The cluster capacity the tree shares out.
    #[inline]
    pub fn cluster_capacity(&self) -> Resource {
        self.cluster
    }

    /// Replaces the scheduler-wide settings.
    pub fn set_settings(&mut self, settings: TreeSettings) {
        self.settings = settings;
        self.resolve_all_settings();
        self.refresh_all_keys();
    }

    /// Sets the cluster capacity (nodes joined or left): resolves percentage
    /// maxima again, recomputes steady shares and DRF orderings.
    pub fn set_cluster_capacity(&mut self, cluster: Resource) {
        if cluster == self.cluster {
            return;
        }
        self.cluster = cluster;
        self.resolve_all_settings();
        self.refresh_all_keys();
        self.update_steady_shares();
    }

    /// Replaces the allocation configuration, keeping every app and its usage.
    ///
    /// Configured queues missing from the tree are created; queues no longer
    /// in the file become dynamic (removed once empty); a leaf/parent change
    /// waits until the queue is empty; every queue's settings are resolved
    /// again; apps waiting on a running-app limit are re-checked.
    pub fn apply_config(&mut self, config: AllocConfig) -> ConfigApplied {
        self.config = config;
        let mut report = ConfigApplied::default();
        for queue in self.queues.iter_mut().flatten() {
            queue.configured = false;
            queue.wanted_kind = None;
        }
        let configured: Vec<QueueConfig> = self.config.queues.values().cloned().collect();
        for qc in &configured {
            match self.ensure_configured_queue(&qc.path, qc.kind) {
                Ok(id) => {
                    let queue = self.queue_mut(id);
                    queue.configured = true;
                    if queue.kind != qc.kind && !self.try_change_kind_to(id, qc.kind) {
                        self.queue_mut(id).wanted_kind = Some(qc.kind);
                        report.pending_type_changes.push(qc.path.clone());
                    }
                }
                Err(_) => report.deferred_queues.push(qc.path.clone()),
            }
        }
        self.resolve_all_settings();
        self.refresh_all_keys();
        self.update_steady_shares();
        report.now_runnable = self.update_runnability_on_reload();
        report
    }

    /// Removes dynamic queues that are empty and retries pending leaf/parent
    /// changes (Hadoop does both on every allocation-file poll). Returns the
    /// removed queues.
    pub fn remove_empty_dynamic_queues(&mut self) -> Vec<QueuePath> {
        let mut removed = Vec::new();
        // Deepest first, so a parent emptied by removing its children goes too.
        let mut candidates: Vec<QueueId> = self.by_path.values().copied().collect();
        candidates.sort_by_key(|id| std::cmp::Reverse(self.queue(*id).path.depth()));
        for id in candidates {
            let queue = self.queue(id);
            if id == ROOT || queue.configured || queue.n_apps > 0 || !queue.children.is_empty() {
                continue;
            }
            removed.push(queue.path.clone());
            self.remove_queue(id);
        }
        let pending: Vec<QueueId> = self
            .by_path
            .values()
            .copied()
            .filter(|id| self.queue(*id).wanted_kind.is_some())
            .collect();
        let mut changed = false;
        for id in pending {
            changed |= self.try_change_kind(id);
        }
        if changed || !removed.is_empty() {
            let config = self.config.clone();
            self.apply_config(config);
        }
        removed
    }

    /// The queue at `path`, if it exists.
    pub fn queue_id(&self, path: &QueuePath) -> Option<QueueId> {
        self.by_path.get(path).copied()
    }

    /// The live queue at an arena index.
    pub fn queue_id_at(&self, index: usize) -> Option<QueueId> {
        self.queues
            .get(index)?
            .as_ref()
            .map(|_| QueueId(index as u32))
    }

    /// Every queue index is below this.
    pub fn queue_slot_count(&self) -> usize {
        self.queues.len()
    }

    /// The root queue.
    pub fn root(&self) -> QueueId {
        ROOT
    }

    /// A queue's path.
    #[inline]
    pub fn queue_path(&self, id: QueueId) -> &QueuePath {
        &self.queue(id).path
    }

    /// A queue's kind.
    pub fn queue_kind(&self, id: QueueId) -> QueueKind {
        self.queue(id).kind
    }

    /// A queue's parent (`None` for root).
    #[inline]
    pub fn queue_parent(&self, id: QueueId) -> Option<QueueId> {
        self.queue(id).parent
    }

    /// A queue's children, by name.
    pub fn queue_children(&self, id: QueueId) -> &[QueueId] {
        &self.queue(id).children
    }

    /// A queue's effective settings.
    #[inline]
    pub fn queue_settings(&self, id: QueueId) -> &QueueSettings {
        &self.queue(id).settings
    }

    /// A queue's current usage.
    #[inline]
    pub fn queue_usage(&self, id: QueueId) -> Resource {
        self.queue(id).usage
    }

    /// A queue's demand as of the last update (capped by its max share).
    pub fn queue_demand(&self, id: QueueId) -> Resource {
        self.queue(id).demand
    }

    /// A queue's instantaneous fair share as of the last update.
    pub fn queue_fair_share(&self, id: QueueId) -> Resource {
        self.queue(id).fair_share
    }

    /// A queue's steady fair share.
    pub fn queue_steady_fair_share(&self, id: QueueId) -> Resource {
        self.queue(id).steady_fair_share
    }

    /// True when the queue was declared in the allocation file in force.
    pub fn queue_is_configured(&self, id: QueueId) -> bool {
        self.queue(id).configured
    }

    /// Every queue, parents before their children, in path order.
    pub fn queue_ids(&self) -> impl Iterator<Item = QueueId> + '_ {
        self.by_path.values().copied()
    }

    /// True when `user` (with `groups`) has `access` on the queue at `path`,
    /// through its own ACL or any ancestor's. For a queue that does not exist
    /// yet the nearest existing ancestor decides. Submitting is also allowed
    /// by administer rights.
    pub fn has_access(
        &self,
        path: &QueuePath,
        access: QueueAccess,
        user: &str,
        groups: &[String],
    ) -> bool {
        let start = path
            .self_and_ancestors()
            .find_map(|p| self.queue_id(&p))
            .unwrap_or(ROOT);
        let mut cur = Some(start);
        while let Some(id) = cur {
            let s = &self.queue(id).settings;
            let allowed = match access {
                QueueAccess::SubmitApps => {
                    s.acl_submit_apps.allows(user, groups)
                        || s.acl_administer_apps.allows(user, groups)
                }
                QueueAccess::AdministerQueue => s.acl_administer_apps.allows(user, groups),
            };
            if allowed {
                return true;
            }
            cur = self.queue(id).parent;
        }
        false
    }

    /// The leaf at `path`, creating it and any missing parents as dynamic
    /// queues when `create` allows.
    pub fn ensure_leaf(
        &mut self,
        path: &QueuePath,
        create: bool,
    ) -> Result<QueueId, QueueCreateError> {
        if let Some(id) = self.queue_id(path) {
            return match self.queue(id).kind {
                QueueKind::Leaf => Ok(id),
                QueueKind::Parent => Err(QueueCreateError::NotALeaf { path: path.clone() }),
            };
        }
        // Check the whole path before creating anything.
        let ancestors: Vec<QueuePath> = {
            let mut v: Vec<QueuePath> = path.self_and_ancestors().skip(1).collect();
            v.reverse();
            v
        };
        for anc in &ancestors {
            if let Some(id) = self.queue_id(anc)
                && self.queue(id).kind == QueueKind::Leaf
            {
                return Err(QueueCreateError::UnderLeaf {
                    path: path.clone(),
                    leaf: anc.clone(),
                });
            }
        }
        if !create {
            return Err(QueueCreateError::NotFound { path: path.clone() });
        }
        // Every caller that creates queues checks this first (the parser, the
        // core's placement); the tree refuses too, as its walks recurse once
        // per level and a path from anywhere else must not overflow them.
        if path.depth() > MAX_QUEUE_DEPTH {
            return Err(QueueCreateError::TooDeep {
                path: path.clone(),
                depth: path.depth(),
                max: MAX_QUEUE_DEPTH,
            });
        }
        let mut parent_policy = None;
        for p in ancestors.iter().chain(std::iter::once(path)) {
            let kind = if p == path {
                QueueKind::Leaf
            } else {
                QueueKind::Parent
            };
            let policy = match self.queue_id(p) {
                Some(id) => self.queue(id).settings.policy,
                None => self.default_policy_for(kind),
            };
            if let Some((parent_path, pp)) = &parent_policy
                && self.queue_id(p).is_none()
                && !Policy::accepts_child(*pp, policy)
            {
                return Err(QueueCreateError::IncompatiblePolicy {
                    path: path.clone(),
                    parent: QueuePath::clone(parent_path),
                    parent_policy: *pp,
                    child_policy: policy,
                });
            }
            parent_policy = Some((p.clone(), policy));
        }
        let mut created = None;
        for p in ancestors.iter().chain(std::iter::once(path)) {
            if self.queue_id(p).is_none() {
                let kind = if p == path {
                    QueueKind::Leaf
                } else {
                    QueueKind::Parent
                };
                created = Some(self.create_queue(p, kind, false));
            }
        }
        self.update_steady_shares();
        Ok(created.expect("the leaf itself was missing"))
    }

    #[inline]
    pub(crate) fn queue(&self, id: QueueId) -> &Queue {
        self.queues[id.0 as usize].as_ref().expect("live queue id")
    }

    #[inline]
    pub(crate) fn queue_mut(&mut self, id: QueueId) -> &mut Queue {
        self.queues[id.0 as usize].as_mut().expect("live queue id")
    }

    #[inline]
    pub(crate) fn app(&self, h: AppHandle) -> &App {
        self.apps[h.0 as usize].as_ref().expect("live app handle")
    }

    #[inline]
    pub(crate) fn app_mut(&mut self, h: AppHandle) -> &mut App {
        self.apps[h.0 as usize].as_mut().expect("live app handle")
    }

    fn default_policy_for(&self, kind: QueueKind) -> Policy {
        match (kind, self.config.default_policy) {
            // Weft accepts `fifo` as the default (seed 003's file) and applies it to leaves only.
            (QueueKind::Parent, Policy::Fifo) => Policy::Fair,
            (_, p) => p,
        }
    }

    /// Finds or creates a configured queue (and missing parents). Fails when
    /// an existing leaf on the path still holds apps and cannot become a parent.
    fn ensure_configured_queue(
        &mut self,
        path: &QueuePath,
        kind: QueueKind,
    ) -> Result<QueueId, ()> {
        if let Some(id) = self.queue_id(path) {
            return Ok(id);
        }
        let mut ancestors: Vec<QueuePath> = path.self_and_ancestors().skip(1).collect();
        ancestors.reverse();
        for anc in &ancestors {
            match self.queue_id(anc) {
                Some(id) if self.queue(id).kind == QueueKind::Leaf => {
                    if !self.try_change_kind_to(id, QueueKind::Parent) {
                        return Err(());
                    }
                }
                Some(_) => {}
                None => {
                    let id = self.create_queue(anc, QueueKind::Parent, true);
                    self.queue_mut(id).configured = true;
                }
            }
        }
        Ok(self.create_queue(path, kind, true))
    }

    fn create_queue(&mut self, path: &QueuePath, kind: QueueKind, configured: bool) -> QueueId {
        let parent_path = path
            .parent()
            .expect("only root has no parent, and root always exists");
        let parent = self
            .queue_id(&parent_path)
            .expect("parents are created first");
        let id = QueueId(self.queues.len() as u32);
        let settings = self.resolve_settings(path, kind, configured, Some(parent));
        self.queues.push(Some(Queue::new(
            path.clone(),
            Some(parent),
            kind,
            configured,
            settings,
        )));
        self.by_path.insert(path.clone(), id);
        let mut children = std::mem::take(&mut self.queue_mut(parent).children);
        let pos = children.partition_point(|c| self.queue(*c).path.name() < path.name());
        children.insert(pos, id);
        self.queue_mut(parent).children = children;
        self.rerank_children(parent);
        id
    }

    fn remove_queue(&mut self, id: QueueId) {
        let queue = self.queues[id.0 as usize].take().expect("live queue id");
        debug_assert!(queue.n_apps == 0 && queue.children.is_empty() && queue.order.is_empty());
        self.by_path.remove(&queue.path);
        if let Some(parent) = queue.parent {
            if queue.listed {
                self.queue_mut(parent).order.remove(queue.listed_slot);
            }
            self.queue_mut(parent).children.retain(|c| *c != id);
            self.rerank_children(parent);
        }
    }

    fn rerank_children(&mut self, parent: QueueId) {
        let children = self.queue(parent).children.clone();
        for (rank, child) in children.iter().enumerate() {
            if self.queue(*child).name_rank != rank as u32 {
                self.queue_mut(*child).name_rank = rank as u32;
                self.rekey_queue_in_parent(*child, true);
            }
        }
    }

    /// Applies a wanted leaf/parent change if the queue is empty now.
    fn try_change_kind(&mut self, id: QueueId) -> bool {
        match self.queue(id).wanted_kind {
            Some(kind) => self.try_change_kind_to(id, kind),
            None => false,
        }
    }

    fn try_change_kind_to(&mut self, id: QueueId, kind: QueueKind) -> bool {
        let queue = self.queue(id);
        if queue.kind == kind {
            return true;
        }
        if queue.n_apps > 0 || !queue.children.is_empty() {
            return false;
        }
        let queue = self.queue_mut(id);
        queue.kind = kind;
        queue.wanted_kind = None;
        true
    }

    pub(crate) fn resolve_all_settings(&mut self) {
        let ids: Vec<QueueId> = self.by_path.values().copied().collect();
        // `by_path` lists parents before children, so inheritance sees resolved parents.
        for id in ids {
            let queue = self.queue(id);
            let (path, kind, configured, parent) = (
                queue.path.clone(),
                queue.kind,
                queue.configured,
                queue.parent,
            );
            let mut settings = self.resolve_settings(&path, kind, configured, parent);
            // Hadoop keeps the old policy when the new one breaks the parent/child rules.
            if let Some(p) = parent {
                let parent_policy = self.queue(p).settings.policy;
                if !parent_policy.accepts_child(settings.policy)
                    || (kind == QueueKind::Parent && !settings.policy.can_be_parent())
                {
                    settings.policy = self.queue(id).settings.policy;
                }
            }
            let old_policy = self.queue(id).settings.policy;
            self.queue_mut(id).settings = settings;
            if old_policy != self.queue(id).settings.policy {
                self.rekey_members(id);
            }
        }
    }

    /// Resolves one queue's settings from the file, the defaults and its parent's settings.
    fn resolve_settings(
        &self,
        path: &QueuePath,
        kind: QueueKind,
        configured: bool,
        parent: Option<QueueId>,
    ) -> QueueSettings {
        let cfg = &self.config;
        let own = if configured { cfg.queue(path) } else { None };
        let parent_settings = parent.map(|p| &self.queue(p).settings);
        let is_root = parent.is_none();
        let min_share = own.and_then(|q| q.min_resources).unwrap_or(Resource::ZERO);
        // Weft applies the queue defaults to every queue but root: a default
        // cap on root would cap the whole cluster (see docs/allocation-file.md).
        let max_share_spec = own.and_then(|q| q.max_resources).or_else(|| {
            if is_root {
                return None;
            }
            let from_parent = if configured {
                None
            } else {
                parent_settings.and_then(|p| p.max_child_share)
            };
            from_parent.or(cfg.queue_max_resources_default)
        });
        let max_share = max_share_spec
            .map(|spec| spec.resolve(&self.cluster))
            .unwrap_or(Resource::UNBOUNDED)
            .component_max(min_share);
        let max_running_apps = own.and_then(|q| q.max_running_apps).or(if is_root {
            None
        } else {
            cfg.queue_max_apps_default
        });
        let max_am_share = own
            .and_then(|q| q.max_am_share)
            .unwrap_or(cfg.queue_max_am_share_default);
        let max_container_allocation = own
            .and_then(|q| q.max_container_allocation)
            .or(parent_settings.map(|p| p.max_container_allocation))
            .unwrap_or(Resource::UNBOUNDED)
            .component_min(self.settings.max_container_allocation);
        let policy = own
            .and_then(|q| q.policy)
            .unwrap_or_else(|| self.default_policy_for(kind));
        let (acl_submit_apps, acl_administer_apps) = match own {
            Some(q) => (
                q.acl_submit_apps
                    .clone()
                    .unwrap_or_else(|| default_acl(is_root)),
                q.acl_administer_apps
                    .clone()
                    .unwrap_or_else(|| default_acl(is_root)),
            ),
            None => (default_acl(is_root), default_acl(is_root)),
        };
        let min_share_preemption_timeout = own
            .and_then(|q| q.min_share_preemption_timeout)
            .or(parent_settings.map(|p| p.min_share_preemption_timeout))
            .unwrap_or(cfg.default_min_share_preemption_timeout);
        let fair_share_preemption_timeout = own
            .and_then(|q| q.fair_share_preemption_timeout)
            .or(parent_settings.map(|p| p.fair_share_preemption_timeout))
            .unwrap_or(cfg.default_fair_share_preemption_timeout);
        let fair_share_preemption_threshold = own
            .and_then(|q| q.fair_share_preemption_threshold)
            .or(parent_settings.map(|p| p.fair_share_preemption_threshold))
            .unwrap_or(cfg.default_fair_share_preemption_threshold);
        let preemptable = parent_settings.is_none_or(|p| p.preemptable)
            && own.and_then(|q| q.allow_preemption_from).unwrap_or(true);
        QueueSettings {
            weight: own.and_then(|q| q.weight).unwrap_or(1.0) as f32,
            min_share,
            max_share_spec,
            max_share,
            max_child_share: own.and_then(|q| q.max_child_resources),
            max_running_apps,
            max_am_share,
            max_container_allocation,
            policy,
            acl_submit_apps,
            acl_administer_apps,
            min_share_preemption_timeout,
            fair_share_preemption_timeout,
            fair_share_preemption_threshold,
            preemptable,
            reservable: own.is_some_and(|q| q.reservation),
        }
    }

    // ----- ordering maintenance -------------------------------------------------

    pub(crate) fn queue_key_inputs(&self, id: QueueId) -> KeyInputs {
        queue_key_inputs(self.queue(id), id)
    }

    pub(crate) fn app_key_inputs(&self, h: AppHandle) -> KeyInputs {
        app_key_inputs(self.app(h), h)
    }

    /// Recomputes a listed queue's key in its parent's order, after its
    /// demand, min share or weight changed (the update pass; a usage change
    /// re-keys its whole path in `change_usage`): only the key's policy
    /// words, since those inputs never change its tie-breakers.
    pub(crate) fn rekey_queue(&mut self, id: QueueId) {
        self.rekey_queue_in_parent(id, false);
    }

    /// Recomputes a listed queue's key; with `ties`, its whole key,
    /// tie-breakers included (its name's rank among its siblings changed).
    fn rekey_queue_in_parent(&mut self, id: QueueId, ties: bool) {
        let cluster = self.cluster;
        let q = self.queue(id);
        let (true, Some(parent)) = (q.listed, q.parent) else {
            return;
        };
        let inputs = queue_key_inputs(q, id);
        let slot = q.listed_slot;
        let p = self.queue_mut(parent);
        if ties {
            let new = OrderKey::new(p.settings.policy, &inputs, &cluster);
            p.order.replace(slot, new);
        } else {
            let words = PolicyWords::new(p.settings.policy, &inputs, &cluster);
            p.order.set_policy(slot, words);
        }
    }

    /// Recomputes a listed app's key in its leaf's order, after its usage,
    /// demand, weight or priority changed (never its tie-breakers).
    pub(crate) fn rekey_app(&mut self, h: AppHandle) {
        let cluster = self.cluster;
        let a = self.app(h);
        if !a.listed {
            return;
        }
        let inputs = app_key_inputs(a, h);
        let (leaf, slot) = (a.queue, a.listed_slot);
        let q = self.queue_mut(leaf);
        let words = PolicyWords::new(q.settings.policy, &inputs, &cluster);
        q.order.set_policy(slot, words);
    }

    /// Re-keys every member of a queue (its policy changed).
    fn rekey_members(&mut self, id: QueueId) {
        match self.queue(id).kind {
            QueueKind::Parent => {
                for child in self.queue(id).children.clone() {
                    self.rekey_queue(child);
                }
            }
            QueueKind::Leaf => {
                for h in self.queue(id).runnable_apps.clone() {
                    self.rekey_app(h);
                }
            }
        }
    }

    /// Re-keys every listed member of every queue.
    pub(crate) fn refresh_all_keys(&mut self) {
        let ids: Vec<QueueId> = self.by_path.values().copied().collect();
        for id in ids {
            self.rekey_members(id);
        }
    }

    /// Lists or unlists an app in its leaf's order, propagating up the tree.
    pub(crate) fn set_app_listed(&mut self, h: AppHandle, listed: bool) {
        let leaf = self.app(h).queue;
        match (self.app(h).listed, listed) {
            (false, true) => {
                let key = OrderKey::new(
                    self.queue(leaf).settings.policy,
                    &self.app_key_inputs(h),
                    &self.cluster,
                );
                let slot = self.queue_mut(leaf).order.insert(key);
                let app = self.app_mut(h);
                app.listed = true;
                app.listed_slot = slot;
                if self.queue(leaf).order.len() == 1 {
                    self.set_queue_listed(leaf, true);
                }
            }
            (true, false) => {
                self.app_mut(h).listed = false;
                let slot = self.app(h).listed_slot;
                self.queue_mut(leaf).order.remove(slot);
                if self.queue(leaf).order.is_empty() {
                    self.set_queue_listed(leaf, false);
                }
            }
            _ => {}
        }
    }

    fn set_queue_listed(&mut self, id: QueueId, listed: bool) {
        let mut cur = id;
        loop {
            let Some(parent) = self.queue(cur).parent else {
                return;
            };
            match (self.queue(cur).listed, listed) {
                (false, true) => {
                    let key = OrderKey::new(
                        self.queue(parent).settings.policy,
                        &self.queue_key_inputs(cur),
                        &self.cluster,
                    );
                    let slot = self.queue_mut(parent).order.insert(key);
                    let queue = self.queue_mut(cur);
                    queue.listed = true;
                    queue.listed_slot = slot;
                    if self.queue(parent).order.len() != 1 {
                        return;
                    }
                }
                (true, false) => {
                    self.queue_mut(cur).listed = false;
                    let slot = self.queue(cur).listed_slot;
                    self.queue_mut(parent).order.remove(slot);
                    if !self.queue(parent).order.is_empty() {
                        return;
                    }
                }
                _ => return,
            }
            // The parent just gained its first member or lost its last one:
            // the same change applies one level up.
            cur = parent;
        }
    }
}

/// What a queue's policy ordering reads about a child queue.
pub(crate) fn queue_key_inputs(q: &Queue, id: QueueId) -> KeyInputs {
    KeyInputs {
        usage: q.usage,
        demand: q.demand,
        min_share: q.settings.min_share,
        weight: q.settings.weight,
        start: Time::ZERO,
        priority: 0,
        tie: u128::from(q.name_rank),
        member: id.0,
    }
}

/// What a leaf's policy ordering reads about an app.
pub(crate) fn app_key_inputs(a: &App, h: AppHandle) -> KeyInputs {
    KeyInputs {
        usage: a.usage,
        demand: a.demand,
        min_share: Resource::ZERO,
        weight: a.weight,
        start: a.start,
        priority: a.priority,
        tie: a.tie,
        member: h.0,
    }
}

/// Placement asks the live tree which queues exist; "configured" means
/// declared in the allocation file in force.
impl crate::placement::QueueLookup for QueueTree {
    fn queue_kind(&self, path: &QueuePath) -> Option<crate::placement::ExistingQueue> {
        let queue = self.queue(self.queue_id(path)?);
        Some(crate::placement::ExistingQueue {
            kind: queue.kind,
            configured: queue.configured,
        })
    }
}

impl Queue {
    fn new(
        path: QueuePath,
        parent: Option<QueueId>,
        kind: QueueKind,
        configured: bool,
        settings: QueueSettings,
    ) -> Queue {
        Queue {
            path,
            parent,
            children: Vec::new(),
            name_rank: 0,
            kind,
            configured,
            wanted_kind: None,
            settings,
            usage: Resource::ZERO,
            demand: Resource::ZERO,
            fair_share: Resource::ZERO,
            steady_fair_share: Resource::ZERO,
            am_usage: Resource::ZERO,
            n_runnable: 0,
            n_apps: 0,
            runnable_apps: Vec::new(),
            waiting_apps: BTreeSet::new(),
            order: OrderSet::default(),
            listed: false,
            listed_slot: 0,
            skip_update: false,
        }
    }
}

fn default_acl(is_root: bool) -> Acl {
    if is_root {
        Acl::everyone()
    } else {
        Acl::nobody()
    }
}

fn placeholder_settings() -> QueueSettings {
    QueueSettings {
        weight: 1.0,
        min_share: Resource::ZERO,
        max_share_spec: None,
        max_share: Resource::UNBOUNDED,
        max_child_share: None,
        max_running_apps: None,
        max_am_share: AmShare::Fraction(0.5),
        max_container_allocation: Resource::UNBOUNDED,
        policy: Policy::Fair,
        acl_submit_apps: Acl::everyone(),
        acl_administer_apps: Acl::everyone(),
        min_share_preemption_timeout: Duration::MAX,
        fair_share_preemption_timeout: Duration::MAX,
        fair_share_preemption_threshold: 0.5,
        preemptable: true,
        reservable: false,
    }
}

#[cfg(test)]
mod tests;
