//! The update pass (Hadoop's update thread, minus starvation): demand up the
//! tree, app weights, instantaneous fair shares down the tree; and steady fair
//! shares, recomputed only when the configuration or the cluster changes.
//!
//! The arithmetic of splitting one total is `fair_share::compute_shares`;
//! this module decides who splits what: each parent among its children by its
//! policy (`fair`: memory only; `drf`: every type), each leaf among its
//! runnable apps (`fifo`: all to the earliest app).

use weft_model::{Resource, ResourceType};

use crate::apps::app_weight;
use crate::config::QueueKind;
use crate::fair_share::{ShareInput, ShareKind, ShareScratch, compute_shares};
use crate::policy::Policy;
use crate::tree::{AppHandle, QueueId, QueueTree, ROOT};

/// Reusable buffers, so an update allocates nothing once warmed up.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    inputs: Vec<ShareInput>,
    out: Vec<u64>,
    members: Vec<u32>,
    search: ShareScratch,
}

impl QueueTree {
    /// Recomputes demand (capped by max shares), app weights and instantaneous
    /// fair shares, then refreshes every ordering. The core calls this every
    /// `update-interval-ms`.
    pub fn update(&mut self) {
        self.update_demand(ROOT);
        self.queue_mut(ROOT).fair_share = self.cluster;
        self.compute_children_shares(ROOT, ShareKind::Instantaneous);
        self.refresh_all_keys();
    }

    /// Recomputes steady fair shares from the cluster size and the configured
    /// weights, min and max shares of every queue, active or not.
    pub fn update_steady_shares(&mut self) {
        self.queue_mut(ROOT).steady_fair_share = self.cluster;
        self.compute_children_shares(ROOT, ShareKind::Steady);
    }

    fn update_demand(&mut self, id: QueueId) -> Resource {
        let mut demand = Resource::ZERO;
        match self.queue(id).kind {
            QueueKind::Parent => {
                for i in 0..self.queue(id).children.len() {
                    let child = self.queue(id).children[i];
                    demand += self.update_demand(child);
                }
            }
            QueueKind::Leaf => {
                let size_based = self.settings.size_based_weight;
                let handles: Vec<AppHandle> = self.leaf_apps(id);
                for h in handles {
                    let app = self.app_mut(h);
                    app.demand = app.usage + app.pending;
                    app.weight = app_weight(size_based, app.demand, app.priority);
                    demand += app.demand;
                }
            }
        }
        let queue = self.queue_mut(id);
        queue.demand = demand.component_min(queue.settings.max_share);
        queue.demand
    }

    /// Every app in a leaf, runnable or waiting.
    pub(crate) fn leaf_apps(&self, id: QueueId) -> Vec<AppHandle> {
        let queue = self.queue(id);
        let mut handles = queue.runnable_apps.clone();
        handles.extend(queue.waiting_apps.iter().map(|(_, _, h)| *h));
        handles
    }

    /// Splits `id`'s share (fair or steady, per `kind`) among its members, recursively.
    fn compute_children_shares(&mut self, id: QueueId, kind: ShareKind) {
        let policy = self.queue(id).settings.policy;
        let total = match kind {
            ShareKind::Instantaneous => self.queue(id).fair_share,
            ShareKind::Steady => self.queue(id).steady_fair_share,
        };
        match self.queue(id).kind {
            QueueKind::Parent => {
                let children = self.queue(id).children.clone();
                let mut shares = vec![Resource::ZERO; children.len()];
                for &ty in policy_types(policy) {
                    let mut scratch = std::mem::take(&mut self.scratch);
                    scratch.inputs.clear();
                    for child in &children {
                        let q = self.queue(*child);
                        scratch.inputs.push(ShareInput {
                            weight: q.settings.weight,
                            min_share: q.settings.min_share.get(ty),
                            max_share: q.settings.max_share.get(ty),
                            active: q.n_runnable > 0,
                        });
                    }
                    scratch.out.clear();
                    scratch.out.resize(children.len(), 0);
                    let done = compute_shares(
                        &mut scratch.search,
                        &scratch.inputs,
                        total.get(ty),
                        kind,
                        &mut scratch.out,
                    );
                    debug_assert!(done.is_ok(), "one output slot per input");
                    for (share, v) in shares.iter_mut().zip(&scratch.out) {
                        share.set(ty, *v);
                    }
                    self.scratch = scratch;
                }
                for (child, share) in children.iter().zip(shares) {
                    let q = self.queue_mut(*child);
                    match kind {
                        ShareKind::Instantaneous => q.fair_share = share,
                        ShareKind::Steady => q.steady_fair_share = share,
                    }
                    self.compute_children_shares(*child, kind);
                }
            }
            // Steady shares stop at leaves: apps have none.
            QueueKind::Leaf if kind == ShareKind::Steady => {}
            QueueKind::Leaf => self.compute_app_shares(id, policy, total),
        }
    }

    fn compute_app_shares(&mut self, leaf: QueueId, policy: Policy, total: Resource) {
        // Waiting apps get no share.
        for (_, _, h) in self.queue(leaf).waiting_apps.clone() {
            self.app_mut(h).fair_share = Resource::ZERO;
        }
        let runnable = self.queue(leaf).runnable_apps.clone();
        if runnable.is_empty() {
            return;
        }
        if policy == Policy::Fifo {
            // Hadoop gives the earliest app everything. Weft also zeroes the
            // others (Hadoop leaves them stale): see docs/allocation-file.md.
            let earliest = runnable
                .iter()
                .copied()
                .min_by_key(|h| (self.app(*h).start, self.app(*h).tie))
                .expect("non-empty");
            for h in &runnable {
                self.app_mut(*h).fair_share = if *h == earliest {
                    total
                } else {
                    Resource::ZERO
                };
            }
            return;
        }
        let mut shares = vec![Resource::ZERO; runnable.len()];
        for &ty in policy_types(policy) {
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.inputs.clear();
            scratch.members.clear();
            for h in &runnable {
                scratch.inputs.push(ShareInput {
                    weight: self.app(*h).weight,
                    min_share: 0,
                    max_share: u64::MAX,
                    active: true,
                });
            }
            scratch.out.clear();
            scratch.out.resize(runnable.len(), 0);
            let done = compute_shares(
                &mut scratch.search,
                &scratch.inputs,
                total.get(ty),
                ShareKind::Instantaneous,
                &mut scratch.out,
            );
            debug_assert!(done.is_ok(), "one output slot per input");
            for (share, v) in shares.iter_mut().zip(&scratch.out) {
                share.set(ty, *v);
            }
            self.scratch = scratch;
        }
        for (h, share) in runnable.iter().zip(shares) {
            self.app_mut(*h).fair_share = share;
        }
    }
}

/// The resource types a policy shares out: `fair` and `fifo` memory only
/// (so vcore fair shares stay 0, as Hadoop's REST output shows), `drf` all.
fn policy_types(policy: Policy) -> &'static [ResourceType] {
    match policy {
        Policy::Fair | Policy::Fifo => &[ResourceType::Memory],
        Policy::Drf => &ResourceType::ALL,
    }
}
