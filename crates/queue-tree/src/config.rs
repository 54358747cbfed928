//! The validated allocation configuration: what a `fair-scheduler.xml` says,
//! as types that cannot hold an invalid file.
//!
//! `alloc_file` builds an `AllocConfig` from text; `tree` applies it to a live
//! queue tree and resolves inheritance and defaults (`QueueSettings`). Values
//! the file leaves out stay `None` here so the difference between "not set"
//! and "set to the default" survives for inheritance and for display.

use std::collections::BTreeMap;

use weft_model::{Duration, QueuePath, Resource, ResourceSpec};

use crate::acl::Acl;
use crate::placement::PlacementPolicy;
use crate::policy::Policy;

/// How many levels below root a queue may be nested (`root.a` is one).
///
/// Hadoop sets no limit, but the tree is walked (and its shares computed)
/// level by level on the stack, so a path from an allocation file or a
/// submission thousands of levels deep would overflow it. No real hierarchy
/// comes near this.
pub const MAX_QUEUE_DEPTH: usize = 64;

/// A whole allocation file, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct AllocConfig {
    /// Every configured queue by path, always including `root` and `root.default`.
    ///
    /// Invariant: each queue's parent is present and is a parent queue.
    pub queues: BTreeMap<QueuePath, QueueConfig>,
    /// Per-user running-app limits (`<user name="u"><maxRunningApps>`).
    pub user_max_apps: BTreeMap<String, u32>,
    /// Running-app limit for users without their own entry; `None` is unlimited.
    pub user_max_apps_default: Option<u32>,
    /// Default `maxRunningApps` for queues; `None` is unlimited.
    pub queue_max_apps_default: Option<u32>,
    /// Default `maxResources` for queues without their own; `None` is unbounded.
    pub queue_max_resources_default: Option<ResourceSpec>,
    /// Default `maxAMShare` for leaves (Hadoop: 0.5).
    pub queue_max_am_share_default: AmShare,
    /// Policy for queues without `schedulingPolicy` (see `QueueSettings` for how
    /// `fifo` applies to parents).
    pub default_policy: Policy,
    /// Root's min-share preemption timeout unless root sets one; `Duration::MAX` is never.
    pub default_min_share_preemption_timeout: Duration,
    /// Root's fair-share preemption timeout unless root sets one; `Duration::MAX` is never.
    pub default_fair_share_preemption_timeout: Duration,
    /// Root's fair-share preemption threshold unless root sets one, in [0, 1].
    pub default_fair_share_preemption_threshold: f64,
    /// The placement rules; `None` when the file has none (then the site
    /// settings `user-as-default-queue` and `allow-undeclared-pools` decide).
    pub placement: Option<PlacementPolicy>,
    /// ReservationSystem class names, kept for display only.
    pub reservation_agent: Option<String>,
    /// See `reservation_agent`.
    pub reservation_policy: Option<String>,
    /// See `reservation_agent`.
    pub reservation_planner: Option<String>,
}

/// The maximum share of a leaf's fair share its application masters may use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AmShare {
    /// A fraction in [0, 1].
    Fraction(f64),
    /// `-1`: no limit.
    Disabled,
}

/// Whether a queue holds apps or other queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueKind {
    /// Holds applications.
    Leaf,
    /// Holds queues.
    Parent,
}

/// One configured queue, as written (unset fields are inherited or defaulted
/// when applied).
#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    /// Full path.
    pub path: QueuePath,
    /// Parent when it has child queues or `type="parent"`.
    pub kind: QueueKind,
    /// `minResources`.
    pub min_resources: Option<Resource>,
    /// `maxResources`.
    pub max_resources: Option<ResourceSpec>,
    /// `maxChildResources`: the max of dynamic children created under this queue.
    pub max_child_resources: Option<ResourceSpec>,
    /// `maxRunningApps`.
    pub max_running_apps: Option<u32>,
    /// `maxAMShare`.
    pub max_am_share: Option<AmShare>,
    /// `maxContainerAllocation`.
    pub max_container_allocation: Option<Resource>,
    /// `weight` (non-negative).
    pub weight: Option<f64>,
    /// `schedulingPolicy`.
    pub policy: Option<Policy>,
    /// `aclSubmitApps`.
    pub acl_submit_apps: Option<Acl>,
    /// `aclAdministerApps`.
    pub acl_administer_apps: Option<Acl>,
    /// `minSharePreemptionTimeout`.
    pub min_share_preemption_timeout: Option<Duration>,
    /// `fairSharePreemptionTimeout`.
    pub fair_share_preemption_timeout: Option<Duration>,
    /// `fairSharePreemptionThreshold`, in [0, 1].
    pub fair_share_preemption_threshold: Option<f64>,
    /// `allowPreemptionFrom`.
    pub allow_preemption_from: Option<bool>,
    /// `reservation`: a plan queue for the ReservationSystem (leaf only).
    pub reservation: bool,
}

impl QueueConfig {
    /// A queue with nothing set.
    pub fn new(path: QueuePath, kind: QueueKind) -> QueueConfig {
        QueueConfig {
            path,
            kind,
            min_resources: None,
            max_resources: None,
            max_child_resources: None,
            max_running_apps: None,
            max_am_share: None,
            max_container_allocation: None,
            weight: None,
            policy: None,
            acl_submit_apps: None,
            acl_administer_apps: None,
            min_share_preemption_timeout: None,
            fair_share_preemption_timeout: None,
            fair_share_preemption_threshold: None,
            allow_preemption_from: None,
            reservation: false,
        }
    }
}

impl Default for AllocConfig {
    /// What Hadoop runs with when there is no allocation file: `root` and `root.default`.
    fn default() -> AllocConfig {
        let mut queues = BTreeMap::new();
        let root = QueuePath::root();
        let default = QueuePath::parse("root.default").expect("valid");
        queues.insert(root.clone(), QueueConfig::new(root, QueueKind::Parent));
        queues.insert(default.clone(), QueueConfig::new(default, QueueKind::Leaf));
        AllocConfig {
            queues,
            user_max_apps: BTreeMap::new(),
            user_max_apps_default: None,
            queue_max_apps_default: None,
            queue_max_resources_default: None,
            queue_max_am_share_default: AmShare::Fraction(0.5),
            default_policy: Policy::Fair,
            default_min_share_preemption_timeout: Duration::MAX,
            default_fair_share_preemption_timeout: Duration::MAX,
            default_fair_share_preemption_threshold: 0.5,
            placement: None,
            reservation_agent: None,
            reservation_policy: None,
            reservation_planner: None,
        }
    }
}

impl AllocConfig {
    /// The configured queue at `path`, if any.
    pub fn queue(&self, path: &QueuePath) -> Option<&QueueConfig> {
        self.queues.get(path)
    }

    /// The policy `queue` runs with once the default is applied: its own, or
    /// `default_policy`, except that a `fifo` default falls back to `fair` for
    /// parents (fifo orders apps only).
    ///
    /// ```
    /// use weft_model::QueuePath;
    /// use weft_queue_tree::{AllocConfig, Policy, QueueConfig, QueueKind};
    ///
    /// let config = AllocConfig { default_policy: Policy::Fifo, ..AllocConfig::default() };
    /// let parent = QueueConfig::new(QueuePath::parse("a").unwrap(), QueueKind::Parent);
    /// let leaf = QueueConfig::new(QueuePath::parse("a.b").unwrap(), QueueKind::Leaf);
    /// assert_eq!(config.effective_policy(&parent), Policy::Fair);
    /// assert_eq!(config.effective_policy(&leaf), Policy::Fifo);
    /// ```
    pub fn effective_policy(&self, queue: &QueueConfig) -> Policy {
        match queue.policy {
            Some(policy) => policy,
            None if self.default_policy == Policy::Fifo && queue.kind == QueueKind::Parent => {
                Policy::Fair
            }
            None => self.default_policy,
        }
    }

    /// The running-app limit for `user` (`None` is unlimited).
    pub fn user_max_apps(&self, user: &str) -> Option<u32> {
        self.user_max_apps
            .get(user)
            .copied()
            .or(self.user_max_apps_default)
    }
}
