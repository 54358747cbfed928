//! The real tree's update pass at scale: 10,000 leaf queues under 100
//! parents holding 100,000 apps with pending work, under `fair` and under
//! `drf`: demand, app weights, instantaneous fair shares and the re-keying of
//! every ordered set (`QueueTree::update`), and steady shares
//! (`QueueTree::update_steady_shares`). Target: ≤ 10 ms per full recompute.
//!
//! `cargo bench -p weft-queue-tree --bench tree_update`.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use weft_model::{AppId, AppPriority, QueuePath, Resource, Time};
use weft_queue_tree::{
    AllocConfig, NewApp, Policy, QueueConfig, QueueKind, QueueTree, TreeSettings,
};
use weft_test_support::bench;

fn build(policy: Policy) -> QueueTree {
    let mut config = AllocConfig {
        default_policy: policy,
        ..AllocConfig::default()
    };
    let root = QueuePath::root();
    let mut leaves = Vec::new();
    let mut add = |path: QueuePath, kind, weight: f64, min: Resource| {
        let mut qc = QueueConfig::new(path.clone(), kind);
        qc.policy = Some(policy);
        qc.weight = Some(weight);
        qc.min_resources = Some(min);
        config.queues.insert(path, qc);
    };
    add(root.clone(), QueueKind::Parent, 1.0, Resource::ZERO);
    for p in 0..100 {
        let parent = root.child(&format!("p{p:03}")).unwrap();
        add(
            parent.clone(),
            QueueKind::Parent,
            1.0 + (p % 3) as f64,
            Resource::new(1024 * (p % 5), p % 4),
        );
        for l in 0..100 {
            let leaf = parent.child(&format!("l{l:03}")).unwrap();
            add(
                leaf.clone(),
                QueueKind::Leaf,
                0.5 + (l % 4) as f64 * 0.5,
                Resource::new(512 * (l % 3), 0),
            );
            leaves.push(leaf);
        }
    }
    let cluster = Resource::new(10_000 * 65_536, 10_000 * 64);
    let mut tree = QueueTree::new(config, TreeSettings::default(), cluster);
    for i in 0..100_000u32 {
        let added = tree
            .add_app(NewApp {
                id: AppId::new(1, i + 1),
                queue: leaves[i as usize % leaves.len()].clone(),
                create_queue: false,
                user: format!("u{}", i % 1000),
                start: Time::from_millis(u64::from(i)),
                priority: AppPriority(0),
                am_resource: Some(Resource::new(1024, 1)),
            })
            .unwrap();
        // Some usage and some pending work, varied so the searches do real work.
        tree.add_usage(
            added.handle,
            Resource::new(1024 * u64::from(i % 7), u64::from(i % 5)),
        );
        tree.set_pending(
            added.handle,
            Resource::new(1024 * u64::from(1 + i % 11), u64::from(1 + i % 3)),
        );
    }
    tree.update();
    tree
}

fn main() {
    // With arguments (`cargo bench -p weft-queue-tree --bench tree_update --
    // drf`), only the policies named, so a profiler can look at one alone.
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    println!("queue tree update: 100 parents x 100 leaves, 100,000 apps");
    for policy in [Policy::Fair, Policy::Drf] {
        if !wanted.is_empty() && !wanted.contains(&policy.to_string()) {
            continue;
        }
        let mut tree = build(policy);
        bench(
            &format!("update (demand + instantaneous shares + keys), {policy}"),
            21,
            || timed_update(&mut tree),
        );
        bench(&format!("steady shares, {policy}"), 21, || {
            timed_steady_shares(&mut tree)
        });
        tree.check_invariants().unwrap();
    }
}

/// One timed update, apart from the one `build` runs, so that a profiler
/// can count this alone (`valgrind --tool=callgrind
/// --toggle-collect=tree_update::timed_update`).
#[inline(never)]
fn timed_update(tree: &mut QueueTree) {
    tree.update();
}

/// One timed recompute of the steady shares (see `timed_update`).
#[inline(never)]
fn timed_steady_shares(tree: &mut QueueTree) {
    tree.update_steady_shares();
}
