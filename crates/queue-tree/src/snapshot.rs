//! A read-only, owned view of every queue: each figure the REST API, the
//! metrics and the web page show, taken in one pass so a reader never sees a
//! half-updated tree.
//!
//! What the core alone knows (reservations, pending containers) it adds to
//! its own snapshot; this one covers the tree.

use weft_model::{Duration, QueuePath, Resource, ResourceSpec};

use crate::acl::Acl;
use crate::config::{AmShare, QueueKind};
use crate::policy::Policy;
use crate::tree::{QueueId, QueueTree};

/// One queue as it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueSnapshot {
    /// Full path.
    pub path: QueuePath,
    /// Leaf or parent.
    pub kind: QueueKind,
    /// A leaf/parent change waiting for the queue to empty.
    pub wanted_kind: Option<QueueKind>,
    /// False for a dynamic queue (created by placement, or dropped from the file).
    pub configured: bool,
    /// Policy.
    pub policy: Policy,
    /// Weight.
    pub weight: f32,
    /// Min share.
    pub min_share: Resource,
    /// Effective max share.
    pub max_share: Resource,
    /// The max as configured (a percentage stays a percentage).
    pub max_share_spec: Option<ResourceSpec>,
    /// Max of dynamic children.
    pub max_child_share: Option<ResourceSpec>,
    /// Running-app limit (`None` is unlimited).
    pub max_running_apps: Option<u32>,
    /// `maxAMShare`.
    pub max_am_share: AmShare,
    /// The AM limit now (`None` when unlimited or not a leaf).
    pub am_limit: Option<Resource>,
    /// AM usage (leaves).
    pub am_usage: Resource,
    /// Largest container allowed.
    pub max_container_allocation: Resource,
    /// Usage.
    pub usage: Resource,
    /// Demand as of the last update.
    pub demand: Resource,
    /// Instantaneous fair share.
    pub fair_share: Resource,
    /// Steady fair share.
    pub steady_fair_share: Resource,
    /// Runnable apps in the subtree.
    pub n_runnable_apps: u32,
    /// Apps waiting on a running-app limit in the subtree.
    pub n_waiting_apps: u32,
    /// Min-share preemption timeout.
    pub min_share_preemption_timeout: Duration,
    /// Fair-share preemption timeout.
    pub fair_share_preemption_timeout: Duration,
    /// Fair-share preemption threshold.
    pub fair_share_preemption_threshold: f64,
    /// Whether containers may be preempted from this queue.
    pub preemptable: bool,
    /// A reservation-system plan queue.
    pub reservable: bool,
    /// Own submit ACL.
    pub acl_submit_apps: Acl,
    /// Own administer ACL.
    pub acl_administer_apps: Acl,
    /// Child queue paths, by name.
    pub children: Vec<QueuePath>,
}

impl QueueTree {
    /// A snapshot of every queue, parents before children, in path order.
    pub fn snapshot(&self) -> Vec<QueueSnapshot> {
        self.queue_ids().map(|id| self.queue_snapshot(id)).collect()
    }

    /// A snapshot of one queue.
    pub fn queue_snapshot(&self, id: QueueId) -> QueueSnapshot {
        let q = self.queue(id);
        let s = &q.settings;
        let n_waiting = self.subtree_waiting(id);
        QueueSnapshot {
            path: q.path.clone(),
            kind: q.kind,
            wanted_kind: q.wanted_kind,
            configured: q.configured,
            policy: s.policy,
            weight: s.weight,
            min_share: s.min_share,
            max_share: s.max_share,
            max_share_spec: s.max_share_spec,
            max_child_share: s.max_child_share,
            max_running_apps: s.max_running_apps,
            max_am_share: s.max_am_share,
            am_limit: if q.kind == QueueKind::Leaf {
                self.am_limit(id)
            } else {
                None
            },
            am_usage: q.am_usage,
            max_container_allocation: s.max_container_allocation,
            usage: q.usage,
            demand: q.demand,
            fair_share: q.fair_share,
            steady_fair_share: q.steady_fair_share,
            n_runnable_apps: q.n_runnable,
            n_waiting_apps: n_waiting,
            min_share_preemption_timeout: s.min_share_preemption_timeout,
            fair_share_preemption_timeout: s.fair_share_preemption_timeout,
            fair_share_preemption_threshold: s.fair_share_preemption_threshold,
            preemptable: s.preemptable,
            reservable: s.reservable,
            acl_submit_apps: s.acl_submit_apps.clone(),
            acl_administer_apps: s.acl_administer_apps.clone(),
            children: q
                .children
                .iter()
                .map(|c| self.queue(*c).path.clone())
                .collect(),
        }
    }

    fn subtree_waiting(&self, id: QueueId) -> u32 {
        let q = self.queue(id);
        q.n_apps - q.n_runnable
    }
}
