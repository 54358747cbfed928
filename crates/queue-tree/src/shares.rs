//! The update pass (Hadoop's update thread, minus starvation): demand up the
//! tree, app weights, instantaneous fair shares down the tree; and steady fair
//! shares, recomputed only when the configuration or the cluster changes.
//!
//! The arithmetic of splitting one total is `fair_share::compute_shares`;
//! this module decides who splits what: each parent among its children by its
//! policy (`fair`: memory only; `drf`: every type), each leaf among its
//! runnable apps (`fifo`: all to the earliest app).
//!
//! Hadoop does demand, shares and sorting as separate passes. Weft does them
//! in one depth-first pass that allocates nothing: ComputeFairShares never
//! reads demand (only weights, min and max shares and whether a queue is
//! active), so a parent can split its share before its children's demands are
//! known, and each member is re-keyed only when an input of its key (demand,
//! weight) changed; usage changes were already re-keyed as they happened.

use weft_model::{Resource, ResourceType};

use crate::apps::app_weight;
use crate::config::QueueKind;
use crate::fair_share::{ShareInput, ShareKind, ShareScratch, compute_shares, equal_share};
use crate::policy::Policy;
use crate::tree::{App, AppHandle, QueueId, QueueTree, ROOT};

/// Reusable buffers, so an update allocates nothing once warmed up.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    inputs: Vec<ShareInput>,
    out: Vec<u64>,
    shares: Vec<Resource>,
    search: ShareScratch,
}

impl QueueTree {
    /// Recomputes demand (capped by max shares), app weights and instantaneous
    /// fair shares, and re-keys every member whose key changed. The core calls
    /// this every `update-interval-ms`.
    pub fn update(&mut self) {
        self.queue_mut(ROOT).fair_share = self.cluster;
        self.update_queue(ROOT);
    }

    /// Recomputes steady fair shares from the cluster size and the configured
    /// weights, min and max shares of every queue, active or not.
    pub fn update_steady_shares(&mut self) {
        self.queue_mut(ROOT).steady_fair_share = self.cluster;
        self.steady_shares(ROOT);
    }

    /// One queue of the update pass: its fair share is already set. Returns
    /// its demand.
    fn update_queue(&mut self, id: QueueId) -> Resource {
        let demand = match self.queue(id).kind {
            QueueKind::Parent => {
                let n = self.queue(id).children.len();
                let total = self.queue(id).fair_share;
                let policy = self.queue(id).settings.policy;
                self.split_among_children(id, policy, total, ShareKind::Instantaneous);
                for i in 0..n {
                    let child = self.queue(id).children[i];
                    let new_share = self.scratch.shares[i];
                    let q = self.queue_mut(child);
                    q.fair_share = new_share;
                    // Between passes the flag says the subtree was left all
                    // zero (no apps, every share and demand 0); it stays so,
                    // and needs no visit, while it is empty and its share 0.
                    // A zero share alone is not enough: min shares can give
                    // children of a zero-share parent a share while they are
                    // active, which must drop to 0 once they are idle.
                    q.skip_update = q.skip_update && q.n_apps == 0 && new_share.is_zero();
                }
                let mut demand = Resource::ZERO;
                for i in 0..n {
                    let child = self.queue(id).children[i];
                    if !self.queue(child).skip_update {
                        demand += self.update_queue(child);
                    }
                    // Visited or not, an empty subtree under a zero share is
                    // all zero now: inactive queues get 0 whatever their min.
                    let q = self.queue_mut(child);
                    q.skip_update = q.n_apps == 0 && q.fair_share.is_zero();
                }
                demand
            }
            QueueKind::Leaf => self.update_leaf(id),
        };
        let q = self.queue_mut(id);
        let capped = demand.component_min(q.settings.max_share);
        if capped != q.demand {
            q.demand = capped;
            self.rekey_queue(id);
        }
        capped
    }

    /// A leaf of the update pass: app demands and weights, then app shares,
    /// then re-keys. Returns the demand of all its apps, waiting ones included.
    fn update_leaf(&mut self, id: QueueId) -> Resource {
        let size_based = self.settings.size_based_weight;
        let mut demand = Resource::ZERO;
        let n_runnable = self.queue(id).runnable_apps.len();
        for i in 0..n_runnable {
            let h = self.queue(id).runnable_apps[i];
            demand += self.update_app_demand(h, size_based);
        }
        if !self.queue(id).waiting_apps.is_empty() {
            let waiting: Vec<AppHandle> = self
                .queue(id)
                .waiting_apps
                .iter()
                .map(|(_, _, h)| *h)
                .collect();
            for h in waiting {
                demand += self.update_app_demand(h, size_based);
                // Waiting apps get no share.
                self.app_mut(h).fair_share = Resource::ZERO;
            }
        }
        if n_runnable > 0 {
            let policy = self.queue(id).settings.policy;
            let total = self.queue(id).fair_share;
            self.split_among_apps(id, policy, total);
        }
        demand
    }

    /// Sets an app's demand and weight; re-keys it if either changed.
    #[inline]
    fn update_app_demand(&mut self, h: AppHandle, size_based: bool) -> Resource {
        let app = self.app_mut(h);
        let demand = app.usage + app.pending;
        let weight = app_weight(size_based, demand, app.priority);
        if demand != app.demand || weight != app.weight {
            app.demand = demand;
            app.weight = weight;
            self.rekey_app(h);
        }
        demand
    }

    /// Steady shares below `id`, whose own steady share is set.
    fn steady_shares(&mut self, id: QueueId) {
        if self.queue(id).kind != QueueKind::Parent {
            // Steady shares stop at leaves: apps have none.
            return;
        }
        let n = self.queue(id).children.len();
        let total = self.queue(id).steady_fair_share;
        let policy = self.queue(id).settings.policy;
        self.split_among_children(id, policy, total, ShareKind::Steady);
        for i in 0..n {
            let child = self.queue(id).children[i];
            self.queue_mut(child).steady_fair_share = self.scratch.shares[i];
        }
        for i in 0..n {
            let child = self.queue(id).children[i];
            self.steady_shares(child);
        }
    }

    /// Splits `total` among `id`'s children by `policy` into `scratch.shares`.
    fn split_among_children(
        &mut self,
        id: QueueId,
        policy: Policy,
        total: Resource,
        kind: ShareKind,
    ) {
        let mut scratch = std::mem::take(&mut self.scratch);
        let n = self.queue(id).children.len();
        scratch.shares.clear();
        scratch.shares.resize(n, Resource::ZERO);
        for &ty in policy_types(policy) {
            scratch.inputs.clear();
            for &child in &self.queue(id).children {
                let q = self.queue(child);
                scratch.inputs.push(ShareInput {
                    weight: q.settings.weight,
                    min_share: q.settings.min_share.get(ty),
                    max_share: q.settings.max_share.get(ty),
                    active: q.n_runnable > 0,
                });
            }
            scratch.out.clear();
            scratch.out.resize(n, 0);
            let done = compute_shares(
                &mut scratch.search,
                &scratch.inputs,
                total.get(ty),
                kind,
                &mut scratch.out,
            );
            debug_assert!(done.is_ok(), "one output slot per input");
            for (share, v) in scratch.shares.iter_mut().zip(&scratch.out) {
                share.set(ty, *v);
            }
        }
        self.scratch = scratch;
    }

    /// Splits a leaf's fair share among its runnable apps.
    fn split_among_apps(&mut self, leaf: QueueId, policy: Policy, total: Resource) {
        let n = self.queue(leaf).runnable_apps.len();
        if policy == Policy::Fifo {
            // Hadoop gives the earliest app everything (its apps all have the
            // same priority). Weft gives it to the app FIFO serves first, so
            // priorities count, and zeroes the others (Hadoop leaves them
            // stale): see docs/allocation-file.md.
            let runnable = &self.queue(leaf).runnable_apps;
            let earliest = runnable
                .iter()
                .copied()
                .min_by_key(|h| {
                    let app = self.app(*h);
                    (std::cmp::Reverse(app.priority), app.start, app.tie)
                })
                .expect("called with runnable apps");
            for i in 0..n {
                let h = self.queue(leaf).runnable_apps[i];
                self.app_mut(h).fair_share = if h == earliest { total } else { Resource::ZERO };
            }
            return;
        }
        // The leaf's list, the apps and the scratch are separate fields, so
        // they are borrowed apart rather than moved out and back.
        let runnable = &self.queues[leaf.0 as usize]
            .as_ref()
            .expect("live queue id")
            .runnable_apps;
        let apps = &mut self.apps;
        let scratch = &mut self.scratch;
        let app = |apps: &[Option<App>], h: AppHandle| -> f32 {
            apps[h.0 as usize].as_ref().expect("live app handle").weight
        };
        let weight = app(apps, runnable[0]);
        if runnable
            .iter()
            .all(|h| app(apps, *h).to_bits() == weight.to_bits())
        {
            // One weight for all (no size-based weight, one priority): one
            // group, searched once per type, the same share for every app.
            let mut share = Resource::ZERO;
            let searched = policy_types(policy).iter().all(|&ty| {
                equal_share(&mut scratch.search, weight, n as u64, total.get(ty))
                    .map(|v| share.set(ty, v))
                    .is_some()
            });
            if searched {
                for h in runnable {
                    apps[h.0 as usize]
                        .as_mut()
                        .expect("live app handle")
                        .fair_share = share;
                }
                return;
            }
        }
        scratch.shares.clear();
        scratch.shares.resize(n, Resource::ZERO);
        for &ty in policy_types(policy) {
            scratch.inputs.clear();
            for &h in runnable {
                scratch.inputs.push(ShareInput {
                    weight: app(apps, h),
                    min_share: 0,
                    max_share: u64::MAX,
                    active: true,
                });
            }
            scratch.out.clear();
            scratch.out.resize(n, 0);
            let done = compute_shares(
                &mut scratch.search,
                &scratch.inputs,
                total.get(ty),
                ShareKind::Instantaneous,
                &mut scratch.out,
            );
            debug_assert!(done.is_ok(), "one output slot per input");
            for (share, v) in scratch.shares.iter_mut().zip(&scratch.out) {
                share.set(ty, *v);
            }
        }
        for (h, share) in runnable.iter().zip(&scratch.shares) {
            apps[h.0 as usize]
                .as_mut()
                .expect("live app handle")
                .fair_share = *share;
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use weft_model::{AppId, AppPriority, QueuePath, Resource, Time};

    use super::policy_types;
    use crate::apps::NewApp;
    use crate::config::{AllocConfig, QueueConfig, QueueKind};
    use crate::fair_share::{ShareInput, ShareKind, ShareScratch, compute_shares};
    use crate::policy::Policy;
    use crate::tree::{QueueTree, TreeSettings};

    /// A tree of three leaves under `policy`, holding `apps` as (leaf,
    /// priority, pending memory, pending vcores), updated once.
    fn updated(policy: Policy, size_based: bool, apps: &[(usize, i32, u64, u64)]) -> QueueTree {
        let mut config = AllocConfig {
            default_policy: policy,
            ..AllocConfig::default()
        };
        for leaf in ["root.a", "root.b", "root.c"] {
            let path = QueuePath::parse(leaf).unwrap();
            config
                .queues
                .insert(path.clone(), QueueConfig::new(path, QueueKind::Leaf));
        }
        let settings = TreeSettings {
            size_based_weight: size_based,
            ..TreeSettings::default()
        };
        let mut tree = QueueTree::new(config, settings, Resource::new(100_000, 97));
        for (seq, (leaf, priority, memory, vcores)) in apps.iter().enumerate() {
            let added = tree
                .add_app(NewApp {
                    id: AppId::new(1, seq as u32 + 1),
                    queue: QueuePath::parse(["root.a", "root.b", "root.c"][*leaf]).unwrap(),
                    create_queue: false,
                    user: "u".to_owned(),
                    start: Time::from_millis(seq as u64),
                    priority: AppPriority(*priority),
                    am_resource: Some(Resource::new(1024, 1)),
                })
                .unwrap();
            tree.set_pending(added.handle, Resource::new(*memory, *vcores));
        }
        tree.update();
        tree
    }

    proptest! {
        /// Whether a leaf's apps share one weight (one search for all) or
        /// not, each app's share is what `compute_shares` gives it over the
        /// leaf's runnable apps.
        #[test]
        fn app_shares_are_the_split_of_the_leaf_share(
            drf in any::<bool>(),
            size_based in any::<bool>(),
            apps in prop::collection::vec(
                (0_usize..3, prop_oneof![3 => Just(0), 1 => -1_i32..=1], 0_u64..5000, 0_u64..5),
                0..30,
            ),
        ) {
            let policy = if drf { Policy::Drf } else { Policy::Fair };
            let tree = updated(policy, size_based, &apps);
            let mut scratch = ShareScratch::new();
            for leaf in ["root.a", "root.b", "root.c"] {
                let queue = tree.queue(tree.queue_id(&QueuePath::parse(leaf).unwrap()).unwrap());
                let runnable = &queue.runnable_apps;
                let mut expected = vec![Resource::ZERO; runnable.len()];
                for &ty in policy_types(policy) {
                    let inputs: Vec<ShareInput> = runnable
                        .iter()
                        .map(|h| ShareInput {
                            weight: tree.app(*h).weight,
                            min_share: 0,
                            max_share: u64::MAX,
                            active: true,
                        })
                        .collect();
                    let mut out = vec![0; inputs.len()];
                    compute_shares(
                        &mut scratch,
                        &inputs,
                        queue.fair_share.get(ty),
                        ShareKind::Instantaneous,
                        &mut out,
                    )
                    .unwrap();
                    for (share, v) in expected.iter_mut().zip(out) {
                        share.set(ty, v);
                    }
                }
                let got: Vec<Resource> = runnable.iter().map(|h| tree.app(*h).fair_share).collect();
                prop_assert_eq!(got, expected, "leaf {}", leaf);
            }
        }
    }
}
