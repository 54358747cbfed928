//! Benchmark of a whole fair-share recompute at the scale the update thread
//! must handle every 500 ms: root → 100 parents → 100 leaves each → 10 apps
//! each, with varied weights, min and max shares and some idle queues.
//!
//! The hierarchy is plain vectors, not a `QueueTree`: this times
//! `compute_shares` called level by level exactly as the tree calls it (one
//! call per parent and resource type; instantaneous shares down to apps,
//! steady shares down to leaves), plus the gathering of inputs the tree must
//! do anyway. A bench over the real tree belongs with the tree.
//!
//! Then it times a few typical single calls, to show where a recompute's
//! time goes. Figures are medians; on a shared machine the minimum is the
//! better guide to the code's own speed.

use weft_queue_tree::fair_share::{ShareInput, ShareKind, ShareScratch, compute_shares};
use weft_test_support::{bench, black_box};

const N_PARENTS: usize = 100;
const LEAVES_PER_PARENT: usize = 100;
const APPS_PER_LEAF: usize = 10;
const N_TYPES: usize = 2;
const MEMORY: usize = 0;
const SAMPLES: usize = 100;

/// 2000 nodes of 128 GB and 64 vcores.
const CLUSTER: [u64; N_TYPES] = [2000 * 128 * 1024, 2000 * 64];

fn main() {
    let hierarchy = Hierarchy::generate();
    let mut work = Work::new(&hierarchy);
    let fair = &[MEMORY][..];
    let drf = &[0, 1][..];
    bench("fair_share: fair, instantaneous", SAMPLES, || {
        work.instantaneous(&hierarchy, fair);
        black_box(&work.shares);
    });
    bench("fair_share: fair, steady", SAMPLES, || {
        work.steady(&hierarchy, fair);
        black_box(&work.shares);
    });
    bench("fair_share: fair, instantaneous + steady", SAMPLES, || {
        work.instantaneous(&hierarchy, fair);
        work.steady(&hierarchy, fair);
        black_box(&work.shares);
    });
    bench("fair_share: drf, instantaneous + steady", SAMPLES, || {
        work.instantaneous(&hierarchy, drf);
        work.steady(&hierarchy, drf);
        black_box(&work.shares);
    });
    single_calls(&hierarchy);
}

/// Typical single calls, 10,000 of each per sample (so 1 ms is 100 ns a
/// call), to see where a whole recompute spends its time.
fn single_calls(h: &Hierarchy) {
    const CALLS: u64 = 10_000;
    let app = |weight| ShareInput {
        weight,
        min_share: 0,
        max_share: u64::MAX,
        active: true,
    };
    let equal_apps = vec![app(1.0); APPS_PER_LEAF];
    let sized_apps: Vec<ShareInput> = (0..APPS_PER_LEAF)
        .map(|i| app(((1 << (8 + i)) as f32).log2()))
        .collect();
    let leaves: Vec<ShareInput> = h.leaves[..LEAVES_PER_PARENT]
        .iter()
        .map(|q| q.input(MEMORY))
        .collect();
    let cases = [
        ("10 apps, equal weights", &equal_apps, 26_000),
        ("10 apps, size-based weights", &sized_apps, 26_000),
        ("100 leaves of one parent", &leaves, CLUSTER[MEMORY] / 100),
    ];
    let mut scratch = ShareScratch::new();
    for (name, inputs, total) in cases {
        let mut out = vec![0; inputs.len()];
        bench(&format!("fair_share: 10k calls, {name}"), 20, || {
            for offset in 0..CALLS {
                let res = compute_shares(
                    &mut scratch,
                    black_box(inputs),
                    black_box(total + offset),
                    ShareKind::Instantaneous,
                    &mut out,
                );
                black_box((res.is_ok(), &out));
            }
        });
    }
}

/// A queue's configuration and state as the fair-share pass sees it.
#[derive(Clone, Copy)]
struct Queue {
    weight: f32,
    min: [u64; N_TYPES],
    max: [u64; N_TYPES],
    /// Has runnable apps somewhere below.
    active: bool,
}

impl Queue {
    fn input(&self, res_type: usize) -> ShareInput {
        ShareInput {
            weight: self.weight,
            min_share: self.min[res_type],
            max_share: self.max[res_type],
            active: self.active,
        }
    }
}

/// Parents, leaves (parent `p` owns leaves `p * LEAVES_PER_PARENT ..`) and
/// each leaf's runnable apps' weights (apps have no min share and an
/// unbounded max share, as in Hadoop).
struct Hierarchy {
    parents: Vec<Queue>,
    leaves: Vec<Queue>,
    runnable_apps: Vec<Vec<f32>>,
}

impl Hierarchy {
    fn generate() -> Hierarchy {
        let mut rng = SplitMix64(0x5eed_fa1e);
        let mut leaves = Vec::with_capacity(N_PARENTS * LEAVES_PER_PARENT);
        let mut runnable_apps = Vec::with_capacity(leaves.capacity());
        for _ in 0..N_PARENTS * LEAVES_PER_PARENT {
            let mut leaf = rng.queue([CLUSTER[0] / 5000, CLUSTER[1] / 5000]);
            // One leaf in ten is idle: its apps are not runnable.
            leaf.active = rng.below(10) != 0;
            let apps = if !leaf.active {
                Vec::new()
            } else if rng.below(10) < 7 {
                // Most leaves' apps share the default weight.
                vec![1.0; APPS_PER_LEAF]
            } else {
                // Size-based weights: log2(1 + demand in MB).
                (0..APPS_PER_LEAF)
                    .map(|_| ((1 + rng.below(1 << 16)) as f32).log2())
                    .collect()
            };
            leaves.push(leaf);
            runnable_apps.push(apps);
        }
        let parents = (0..N_PARENTS)
            .map(|p| {
                let mut parent = rng.queue([CLUSTER[0] / 50, CLUSTER[1] / 50]);
                parent.active = leaves[p * LEAVES_PER_PARENT..][..LEAVES_PER_PARENT]
                    .iter()
                    .any(|leaf| leaf.active);
                parent
            })
            .collect();
        Hierarchy {
            parents,
            leaves,
            runnable_apps,
        }
    }
}

/// Shares per queue and app, per resource type.
struct Shares {
    parents: Vec<[u64; N_TYPES]>,
    leaves: Vec<[u64; N_TYPES]>,
    apps: Vec<Vec<[u64; N_TYPES]>>,
    steady_parents: Vec<[u64; N_TYPES]>,
    steady_leaves: Vec<[u64; N_TYPES]>,
}

/// Reusable buffers, as the tree keeps them between updates.
struct Work {
    scratch: ShareScratch,
    inputs: Vec<ShareInput>,
    out: Vec<u64>,
    shares: Shares,
}

impl Work {
    fn new(h: &Hierarchy) -> Work {
        Work {
            scratch: ShareScratch::new(),
            inputs: Vec::new(),
            out: Vec::new(),
            shares: Shares {
                parents: vec![[0; N_TYPES]; h.parents.len()],
                leaves: vec![[0; N_TYPES]; h.leaves.len()],
                apps: h
                    .runnable_apps
                    .iter()
                    .map(|apps| vec![[0; N_TYPES]; apps.len()])
                    .collect(),
                steady_parents: vec![[0; N_TYPES]; h.parents.len()],
                steady_leaves: vec![[0; N_TYPES]; h.leaves.len()],
            },
        }
    }

    /// Instantaneous shares from the root down to apps, for `types`.
    fn instantaneous(&mut self, h: &Hierarchy, types: &[usize]) {
        let kind = ShareKind::Instantaneous;
        for &t in types {
            self.inputs.clear();
            self.inputs.extend(h.parents.iter().map(|q| q.input(t)));
            self.split(CLUSTER[t], kind);
            for (share, &value) in self.shares.parents.iter_mut().zip(&self.out) {
                share[t] = value;
            }
        }
        for p in 0..h.parents.len() {
            let first_leaf = p * LEAVES_PER_PARENT;
            let leaves = first_leaf..first_leaf + LEAVES_PER_PARENT;
            for &t in types {
                self.inputs.clear();
                self.inputs
                    .extend(h.leaves[leaves.clone()].iter().map(|q| q.input(t)));
                self.split(self.shares.parents[p][t], kind);
                for (share, &value) in self.shares.leaves[leaves.clone()].iter_mut().zip(&self.out)
                {
                    share[t] = value;
                }
            }
            for leaf in leaves {
                let apps = &h.runnable_apps[leaf];
                if apps.is_empty() {
                    continue;
                }
                for &t in types {
                    self.inputs.clear();
                    self.inputs.extend(apps.iter().map(|&weight| ShareInput {
                        weight,
                        min_share: 0,
                        max_share: u64::MAX,
                        active: true,
                    }));
                    self.split(self.shares.leaves[leaf][t], kind);
                    for (share, &value) in self.shares.apps[leaf].iter_mut().zip(&self.out) {
                        share[t] = value;
                    }
                }
            }
        }
    }

    /// Steady shares from the root down to leaves, for `types`.
    fn steady(&mut self, h: &Hierarchy, types: &[usize]) {
        let kind = ShareKind::Steady;
        for &t in types {
            self.inputs.clear();
            self.inputs.extend(h.parents.iter().map(|q| q.input(t)));
            self.split(CLUSTER[t], kind);
            for (share, &value) in self.shares.steady_parents.iter_mut().zip(&self.out) {
                share[t] = value;
            }
        }
        for p in 0..h.parents.len() {
            let first_leaf = p * LEAVES_PER_PARENT;
            let leaves = first_leaf..first_leaf + LEAVES_PER_PARENT;
            for &t in types {
                self.inputs.clear();
                self.inputs
                    .extend(h.leaves[leaves.clone()].iter().map(|q| q.input(t)));
                self.split(self.shares.steady_parents[p][t], kind);
                for (share, &value) in self.shares.steady_leaves[leaves.clone()]
                    .iter_mut()
                    .zip(&self.out)
                {
                    share[t] = value;
                }
            }
        }
    }

    fn split(&mut self, total: u64, kind: ShareKind) {
        self.out.clear();
        self.out.resize(self.inputs.len(), 0);
        if let Err(err) =
            compute_shares(&mut self.scratch, &self.inputs, total, kind, &mut self.out)
        {
            unreachable!("the bench sizes `out` to its inputs: {err}");
        }
    }
}

/// A small deterministic generator (SplitMix64), so every run times the same
/// hierarchy without a dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    /// A queue with a varied weight, a min share in one queue of four (up to
    /// `min_scale`) and a max share in one of five (5 to 50 times that).
    fn queue(&mut self, min_scale: [u64; N_TYPES]) -> Queue {
        const WEIGHTS: [f32; 8] = [1.0, 1.0, 1.0, 1.0, 2.0, 0.5, 3.0, 8.0];
        let weight = WEIGHTS[self.below(WEIGHTS.len() as u64) as usize];
        let mut min = [0; N_TYPES];
        if self.below(4) == 0 {
            for (value, scale) in min.iter_mut().zip(min_scale) {
                *value = self.below(scale + 1);
            }
        }
        let mut max = [u64::MAX; N_TYPES];
        if self.below(5) == 0 {
            let factor = 5 + self.below(46);
            for ((value, scale), floor) in max.iter_mut().zip(min_scale).zip(min) {
                *value = (scale * factor).max(floor);
            }
        }
        Queue {
            weight,
            min,
            max,
            active: true,
        }
    }
}
