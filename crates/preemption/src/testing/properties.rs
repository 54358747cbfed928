//! Property tests over random hand-built clusters and random time steps,
//! for both models: kills never come before their deadline, nothing is
//! taken from a subtree that disallows preemption, nor an AM its queue
//! protects; the ledger's transitions are consistent; the same inputs give
//! the same outputs; and two queues contending settle instead of preempting
//! back and forth. The current model never takes an app or queue below its
//! fair share; the classic model never takes from a leaf at or below its
//! fair share, and stops warning once the leaves' deficits are covered.
//!
//! A proptest-chosen seed drives a small generator that shapes each cluster,
//! so a failure prints the seed that reproduces it.

use std::collections::BTreeMap;

use proptest::prelude::*;
use weft_model::{ContainerId, Duration, Priority, QueuePath, Resource, Time};
use weft_queue_tree::Policy;
use weft_queue_tree::site::Fraction;

use weft_queue_tree::site::PreemptionModel;

use super::TestView;
use super::fixture::{TestAsk, TestLocation};
use crate::calc::Calc;
use crate::{PreemptionOutput, Preemptor, TransitionKind};

/// splitmix64: enough randomness to shape a test cluster from a seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

const SIZES: [Resource; 4] = [
    Resource::new(1024, 1),
    Resource::new(2048, 1),
    Resource::new(1024, 2),
    Resource::new(2048, 2),
];

/// A random cluster: nodes, a small queue tree with random policies,
/// preemption settings and min shares, apps with containers and asks.
fn random_cluster(rng: &mut Rng) -> TestView {
    let mut view = TestView::new();
    for n in 0..1 + rng.below(3) {
        view.nodes.push(super::fixture::TestNode {
            id: weft_model::NodeId::new(&format!("n{n}"), 8041).expect("node name"),
            rack: format!("/r{}", rng.below(2)),
            capability: Resource::new(1024 * (4 + rng.below(5)), 4 + rng.below(9)),
            reserved: Resource::ZERO,
            allocated: Resource::ZERO,
        });
    }
    let all_leaves = ["root.a", "root.b", "root.p.c", "root.p.d"];
    let n_leaves = 2 + rng.below(3) as usize;
    let mut leaves = Vec::new();
    for path in &all_leaves[..n_leaves] {
        leaves.push(view.ensure_queue(&QueuePath::parse(path).expect("path")));
    }
    for q in 0..view.queues.len() {
        let is_leaf = view.is_leaf(q);
        let queue = &mut view.queues[q];
        queue.policy = if is_leaf {
            *rng.pick(&[Policy::Fair, Policy::Drf, Policy::Fifo])
        } else {
            *rng.pick(&[Policy::Fair, Policy::Drf])
        };
        if q > 0 {
            queue.allow_preemption_from = rng.chance(80);
        }
        if rng.chance(30) {
            queue.min_share = Resource::new(1024 * rng.below(4), rng.below(4));
        }
        queue.min_share_timeout = Duration::from_millis(1000 * rng.below(3));
        queue.fair_share_timeout = Duration::from_millis(1000 * rng.below(3));
        queue.threshold = *rng.pick(&[0.5, 0.8, 1.0]);
        if is_leaf && rng.chance(20) {
            view.settings
                .am_preemption
                .insert(queue.path.clone(), false);
        }
    }
    view.settings.wait_time_before_kill = Duration::from_millis(1000 * rng.below(4));
    view.settings.preemption_utilization_threshold =
        Fraction::new(*rng.pick(&[0.0, 0.0, 0.5, 0.8])).expect("in range");
    for a in 0..1 + rng.below(6) as usize {
        let queue = *rng.pick(&leaves);
        let start = Time::from_millis(rng.below(2000));
        view.apps.push(super::fixture::TestApp {
            name: format!("a{a}"),
            id: weft_model::AppId::new(1, a as u32 + 1),
            queue,
            fair_share: Resource::ZERO,
            start,
            asks: Vec::new(),
            usage: Resource::ZERO,
            next_seq: 1,
            live: true,
            weight: 1.0,
        });
        let size = *rng.pick(&SIZES);
        for _ in 0..rng.below(14) {
            let node = rng.below(view.nodes.len() as u64) as usize;
            let n = &view.nodes[node];
            if size.fits_in(&(n.capability - n.allocated)) {
                let is_am = view.apps[a].next_seq == 1;
                let at = Time::from_millis(rng.below(1000));
                view.add_container(a, node, size, Priority(rng.below(3) as i32), is_am, at);
            }
        }
        view.apps[a].asks.push(TestAsk {
            priority: Priority(1),
            capability: size,
            location: TestLocation::Any,
            count: rng.below(8) as u32,
            relax: true,
        });
    }
    view.recompute_fair_shares();
    if rng.chance(50) {
        // Fair shares that do not add up: the safety rules must hold anyway.
        for app in &mut view.apps {
            app.fair_share = Resource::new(512 * rng.below(8), rng.below(4));
        }
        for queue in view.queues.iter_mut().skip(1) {
            queue.fair_share = Resource::new(1024 * rng.below(8), rng.below(8));
        }
    }
    view
}

/// What the checks remember between updates.
#[derive(Default)]
struct Books {
    /// Warned containers: (warned at, deadline, app taken for).
    warned: BTreeMap<ContainerId, (Time, Time, weft_model::AppId)>,
}

/// Checks one update's output against the view it was computed from.
fn check_update(
    view: &TestView,
    now: Time,
    out: &PreemptionOutput,
    preemptor: &Preemptor,
    books: &mut Books,
) -> Result<(), TestCaseError> {
    let wait = view.settings.wait_time_before_kill;
    // Every warning that was live before this update and not withdrawn is
    // still taken until the core carries the kills out.
    // Container → (owner, app taken for).
    let mut taken: BTreeMap<ContainerId, (weft_model::AppId, weft_model::AppId)> = BTreeMap::new();
    for (id, (_, _, for_app)) in &books.warned {
        let withdrawn = out
            .transitions
            .iter()
            .any(|t| t.container == *id && matches!(t.kind, TransitionKind::Withdrawn { .. }));
        if !withdrawn {
            taken.insert(*id, (view.apps[view.containers[id].app].id, *for_app));
        }
    }
    let kept: Vec<ContainerId> = taken.keys().copied().collect();
    for t in &out.transitions {
        match t.kind {
            TransitionKind::Warned { deadline } => {
                prop_assert!(!books.warned.contains_key(&t.container), "warned twice");
                prop_assert_eq!(deadline, now + wait);
                books.warned.insert(t.container, (now, deadline, t.for_app));
                taken.insert(t.container, (t.app, t.for_app));
            }
            TransitionKind::Killed => {
                let (warned_at, deadline, _) =
                    books.warned.remove(&t.container).expect("was warned");
                prop_assert!(now >= deadline && now >= warned_at + wait, "killed early");
            }
            TransitionKind::Withdrawn { .. } | TransitionKind::Released => {
                prop_assert!(books.warned.remove(&t.container).is_some(), "not warned");
            }
        }
    }
    let ledger: Vec<ContainerId> = preemptor.ledger().map(|(id, _)| *id).collect();
    let books_ids: Vec<ContainerId> = books.warned.keys().copied().collect();
    prop_assert_eq!(ledger, books_ids);

    for t in &out.transitions {
        let TransitionKind::Warned { .. } = t.kind else {
            continue;
        };
        let c = view.containers[&t.container];
        let leaf = view.apps[c.app].queue;
        // Never from a subtree that disallows it, nor a protected AM.
        let mut q = Some(leaf);
        while let Some(cur) = q {
            prop_assert!(
                view.queues[cur].allow_preemption_from,
                "from a protected subtree"
            );
            q = view.queues[cur].parent;
        }
        if c.is_am {
            prop_assert!(view.settings.am_preemption_enabled(&view.queues[leaf].path));
        }
        // The model's choice of what to set aside is carried by the transition.
        prop_assert_eq!(
            t.set_aside,
            view.settings.preemption_model == PreemptionModel::Current
        );
    }
    match view.settings.preemption_model {
        PreemptionModel::Current => check_current(view, out, &taken),
        PreemptionModel::Classic => check_classic(view, out, &kept),
    }
}

/// The current model: the owner, and every queue between it and the app
/// the container is taken for, keep their fair shares after everything
/// taken from them.
fn check_current(
    view: &TestView,
    out: &PreemptionOutput,
    taken: &BTreeMap<ContainerId, (weft_model::AppId, weft_model::AppId)>,
) -> Result<(), TestCaseError> {
    let cluster = crate::PreemptionView::cluster_capacity(view);
    for t in &out.transitions {
        let TransitionKind::Warned { .. } = t.kind else {
            continue;
        };
        let c = view.containers[&t.container];
        let owner = &view.apps[c.app];
        let leaf = owner.queue;
        // The owner keeps its fair share after everything taken from it.
        let calc = Calc::for_policy(view.queues[leaf].policy, cluster);
        let lost: Resource = taken
            .iter()
            .filter(|(_, (app, _))| *app == owner.id)
            .map(|(id, _)| view.containers[id].resource)
            .sum();
        prop_assert!(
            !calc.is_below(&(owner.usage - lost), &owner.fair_share),
            "{} taken below its fair share",
            owner.name
        );
        // So does every queue between the owner and the app it is taken for.
        let beneficiary = view.apps[view.app_by_id(t.for_app)].queue;
        let mut q = Some(leaf);
        while let Some(cur) = q {
            if view.is_under(beneficiary, cur) {
                break;
            }
            let calc = Calc::for_policy(view.queues[cur].policy, cluster);
            let lost: Resource = taken
                .iter()
                .filter(|(_, (app, for_app))| {
                    let owner_leaf = view.apps[view.app_by_id(*app)].queue;
                    let for_leaf = view.apps[view.app_by_id(*for_app)].queue;
                    view.is_under(owner_leaf, cur) && !view.is_under(for_leaf, cur)
                })
                .map(|(id, _)| view.containers[id].resource)
                .sum();
            prop_assert!(
                !calc.is_below(
                    &(view.queue_usage(cur) - lost),
                    &view.queues[cur].fair_share
                ),
                "{} taken below its fair share",
                view.queues[cur].path
            );
            q = view.queues[cur].parent;
        }
    }
    Ok(())
}

/// The classic model: a container is taken only while its leaf is over its
/// fair share (by the parent's policy) after everything taken from it
/// before; and an update stops warning once the pool is covered. The pool
/// is bounded without the model's arithmetic: each leaf's deficit is at most
/// min(max(min share, fair share), demand) less its usage, type by type.
fn check_classic(
    view: &TestView,
    out: &PreemptionOutput,
    kept: &[ContainerId],
) -> Result<(), TestCaseError> {
    let leaf_of = |id: &ContainerId| view.apps[view.containers[id].app].queue;
    let mut lost: BTreeMap<usize, Resource> = BTreeMap::new();
    let mut covered = [0i128; 2];
    for id in kept {
        *lost.entry(leaf_of(id)).or_default() += view.containers[id].resource;
        add(&mut covered, view.containers[id].resource);
    }
    let mut bound = [0i128; 2];
    for q in 0..view.queues.len() {
        if !view.is_leaf(q) {
            continue;
        }
        let queue = &view.queues[q];
        let share = queue.min_share.component_max(queue.fair_share);
        let target = share.component_min(view.queue_demand(q));
        add(&mut bound, target - view.queue_usage(q));
    }
    let warned: Vec<ContainerId> = out
        .transitions
        .iter()
        .filter(|t| matches!(t.kind, TransitionKind::Warned { .. }))
        .map(|t| t.container)
        .collect();
    for (j, id) in warned.iter().enumerate() {
        let leaf = leaf_of(id);
        let queue = &view.queues[leaf];
        let parent_policy = view.queues[queue.parent.expect("a leaf has a parent")].policy;
        let usage = view.queue_usage(leaf) - lost.get(&leaf).copied().unwrap_or_default();
        let over = match parent_policy {
            Policy::Fair | Policy::Fifo => usage.memory_mb() > queue.fair_share.memory_mb(),
            Policy::Drf => !usage.fits_in(&queue.fair_share),
        };
        prop_assert!(over, "{} taken at or below its fair share", queue.path);
        // Before each warning something was still uncovered.
        prop_assert!(
            (0..2).any(|i| covered[i] < bound[i]),
            "warning {} of {} after the pool was covered",
            j + 1,
            warned.len()
        );
        *lost.entry(leaf).or_default() += view.containers[id].resource;
        add(&mut covered, view.containers[id].resource);
    }
    Ok(())
}

fn add(acc: &mut [i128; 2], r: Resource) {
    acc[0] += i128::from(r.memory_mb());
    acc[1] += i128::from(r.vcores());
}

/// How the victim search finds its candidates; every way must decide the same.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Search {
    /// As shipped: apps whose containers cannot give, by the view's
    /// summary, are left out, and the givers' containers are indexed by
    /// node when that pays.
    Shortcuts,
    /// Every node's containers are read.
    NoIndex,
    /// Every node's containers are read, and every app above its fair
    /// share is a giver: the search as Hadoop describes it.
    Plain,
}

/// The shape of the random clusters.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// `random_cluster`.
    Plain,
    /// `random_cluster`, then more containers per app of any size, AM
    /// containers among them: apps whose smallest container is not their
    /// first, and apps that hold only AMs; and the view's summaries of the
    /// apps' containers may be loose.
    Mixed,
}

/// Adds containers of every size to the apps of a random cluster, some of
/// them AMs, where they fit.
fn mix_containers(rng: &mut Rng, view: &mut TestView) {
    for a in 0..view.apps.len() {
        for _ in 0..rng.below(6) {
            let node = rng.below(view.nodes.len() as u64) as usize;
            let size = *rng.pick(&SIZES);
            let n = &view.nodes[node];
            if size.fits_in(&(n.capability - n.allocated)) {
                let is_am = rng.chance(40);
                let at = Time::from_millis(rng.below(1000));
                view.add_container(a, node, size, Priority(rng.below(3) as i32), is_am, at);
            }
        }
    }
}

/// Runs random steps on a random cluster, checking every update; returns
/// every output, for the determinism check.
fn run_random(
    seed: u64,
    search: Search,
    model: PreemptionModel,
    shape: Shape,
) -> Result<Vec<String>, TestCaseError> {
    let mut rng = Rng(seed);
    let mut view = random_cluster(&mut rng);
    if shape == Shape::Mixed {
        mix_containers(&mut rng, &mut view);
        view.loose_holdings = rng.chance(50);
    }
    view.settings.preemption_model = model;
    let mut preemptor = Preemptor::new();
    if search != Search::Shortcuts {
        preemptor.never_index();
    }
    if search == Search::Plain {
        preemptor.never_read_holdings();
    }
    let mut books = Books::default();
    let mut now = Time::ZERO;
    let mut outputs = Vec::new();
    for _ in 0..25 {
        now += Duration::from_millis(rng.below(3000));
        let settings = view.settings.clone();
        let out = preemptor
            .update(now, &view, &settings)
            .expect("consistent view");
        check_update(&view, now, &out, &preemptor, &mut books)?;
        outputs.push(format!("{out:?}"));
        match rng.below(4) {
            0 => {
                // A container ends on its own.
                let ids: Vec<ContainerId> = view.containers.keys().copied().collect();
                if !ids.is_empty() {
                    let id = *rng.pick(&ids);
                    if let Some(t) = preemptor.container_ended(id) {
                        prop_assert_eq!(t.kind, TransitionKind::Released);
                        books.warned.remove(&id);
                    }
                    view.remove_container(&id);
                }
            }
            1 | 2 => {
                view.apply(&out);
                view.heartbeat(now);
            }
            _ => {
                if rng.chance(20) && !view.apps.is_empty() {
                    // An app goes, with its containers.
                    let a = rng.below(view.apps.len() as u64) as usize;
                    view.apps[a].live = false;
                    let ids: Vec<ContainerId> = view
                        .containers
                        .iter()
                        .filter(|(_, c)| c.app == a)
                        .map(|(id, _)| *id)
                        .collect();
                    for id in ids {
                        if preemptor.container_ended(id).is_some() {
                            books.warned.remove(&id);
                        }
                        view.remove_container(&id);
                    }
                }
            }
        }
    }
    Ok(outputs)
}

/// Two or three queues, one of which starts out holding the whole cluster,
/// every app wanting far more than it can get; fair shares follow the
/// queue tree's arithmetic. Returns the kills of each update.
fn contend(
    seed: u64,
    model: PreemptionModel,
    policies: &[Policy],
    sizes: &[Resource],
    thresholds: &[f64],
) -> Vec<usize> {
    let mut rng = Rng(seed);
    let mut view = TestView::new();
    view.settings.preemption_model = model;
    for n in 0..1 + rng.below(3) {
        view.nodes.push(super::fixture::TestNode {
            id: weft_model::NodeId::new(&format!("n{n}"), 8041).expect("node name"),
            rack: "/r".to_owned(),
            capability: Resource::new(8192, 8),
            reserved: Resource::ZERO,
            allocated: Resource::ZERO,
        });
    }
    let policy = *rng.pick(policies);
    view.queues[0].policy = policy;
    let n_leaves = 2 + rng.below(2) as usize;
    for l in 0..n_leaves {
        let q = view.ensure_queue(&QueuePath::parse(&format!("root.q{l}")).expect("path"));
        let queue = &mut view.queues[q];
        queue.policy = policy;
        queue.fair_share_timeout = Duration::from_millis(1000 * rng.below(3));
        queue.min_share_timeout = Duration::from_millis(1000 * rng.below(3));
        queue.threshold = *rng.pick(thresholds);
        if rng.chance(50) {
            queue.min_share = Resource::new(1024 * (1 + rng.below(12)), rng.below(12));
        }
        for _ in 0..1 + rng.below(2) {
            let a = view.apps.len();
            view.apps.push(super::fixture::TestApp {
                name: format!("a{a}"),
                id: weft_model::AppId::new(1, a as u32 + 1),
                queue: q,
                fair_share: Resource::ZERO,
                start: Time::ZERO,
                asks: vec![TestAsk {
                    priority: Priority(1),
                    capability: *rng.pick(sizes),
                    location: TestLocation::Any,
                    count: 1000,
                    relax: true,
                }],
                usage: Resource::ZERO,
                next_seq: 1,
                live: true,
                weight: 1.0,
            });
        }
    }
    view.settings.wait_time_before_kill = Duration::from_millis(1000 * rng.below(3));
    view.settings.preemption_utilization_threshold = Fraction::new(0.0).expect("in range");
    // The first queue's apps fill the cluster before the others arrive.
    let first: Vec<usize> = (0..view.apps.len())
        .filter(|a| view.apps[*a].queue == 1)
        .collect();
    for a in &first {
        view.apps[*a].start = Time::ZERO;
    }
    for a in 0..view.apps.len() {
        if view.apps[a].queue != 1 {
            view.apps[a].live = false;
        }
    }
    view.recompute_fair_shares();
    view.heartbeat(Time::ZERO);
    for a in 0..view.apps.len() {
        if view.apps[a].queue != 1 {
            view.apps[a].live = true;
            view.apps[a].start = Time::from_millis(500);
        }
    }
    let mut preemptor = Preemptor::new();
    let mut kills = Vec::new();
    for step in 1..=240 {
        let now = Time::from_millis(500 * step);
        view.recompute_fair_shares();
        let settings = view.settings.clone();
        let out = preemptor
            .update(now, &view, &settings)
            .expect("consistent view");
        kills.push(
            out.transitions
                .iter()
                .filter(|t| t.kind == TransitionKind::Killed)
                .count(),
        );
        view.apply(&out);
        view.heartbeat(now);
    }
    kills
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn safety_rules_hold_over_random_steps(seed in any::<u64>()) {
        run_random(seed, Search::Shortcuts, PreemptionModel::Current, Shape::Plain)?;
    }

    #[test]
    fn same_inputs_same_outputs(seed in any::<u64>()) {
        let run = |search| run_random(seed, search, PreemptionModel::Current, Shape::Plain);
        let outputs = run(Search::Shortcuts)?;
        prop_assert_eq!(&outputs, &run(Search::Shortcuts)?);
        // Whichever way candidates are found, the decisions are the same.
        prop_assert_eq!(&outputs, &run(Search::NoIndex)?);
        prop_assert_eq!(&outputs, &run(Search::Plain)?);
    }

    #[test]
    fn shortcuts_decide_as_the_plain_search(seed in any::<u64>()) {
        let run = |search| run_random(seed, search, PreemptionModel::Current, Shape::Mixed);
        let outputs = run(Search::Shortcuts)?;
        prop_assert_eq!(&outputs, &run(Search::NoIndex)?);
        prop_assert_eq!(&outputs, &run(Search::Plain)?);
    }

    #[test]
    fn contending_queues_settle(seed in any::<u64>()) {
        let kills = contend(
            seed,
            PreemptionModel::Current,
            &[Policy::Fair, Policy::Drf],
            &SIZES,
            &[0.5, 1.0],
        );
        let total: usize = kills.iter().sum();
        // Nothing is killed over the last minute (no back and forth forever),
        // and over the whole run at most twice what the cluster holds in its
        // smallest containers: with mixed sizes and thresholds up to 1 a run
        // can see more than one starvation episode (seed 12144867158608821601:
        // 20 kills, then 1, 2 and 2 as shares shift, then calm).
        prop_assert_eq!(kills[120..].iter().sum::<usize>(), 0, "still preempting: {:?}", kills);
        prop_assert!(total <= 2 * 3 * 8, "{} kills", total);
    }

    #[test]
    fn classic_safety_rules_hold_over_random_steps(seed in any::<u64>()) {
        run_random(seed, Search::Shortcuts, PreemptionModel::Classic, Shape::Plain)?;
    }

    #[test]
    fn classic_same_inputs_same_outputs(seed in any::<u64>()) {
        let run = || run_random(seed, Search::Shortcuts, PreemptionModel::Classic, Shape::Plain);
        let outputs = run()?;
        prop_assert_eq!(&outputs, &run()?);
    }

    #[test]
    fn classic_contending_queues_settle(seed in any::<u64>()) {
        // Hadoop 2.x's model settles only where the room it frees suits the
        // starved queue: one container shape, and the default threshold of
        // one half (see docs/preemption.md). The simulator orders queues by
        // memory, so DRF contention is left to the core's scenarios.
        let kills = contend(seed, PreemptionModel::Classic, &[Policy::Fair], &SIZES[..1], &[0.5]);
        let total: usize = kills.iter().sum();
        prop_assert_eq!(kills[120..].iter().sum::<usize>(), 0, "still preempting: {:?}", kills);
        prop_assert!(total <= 3 * 8, "{} kills", total);
    }
}

/// Regression: a seed whose run had 25 kills over three starvation episodes
/// before settling (more than one cluster's worth, so the first, too strict
/// bound failed); it must still settle.
#[test]
fn contending_queues_settle_after_several_episodes() {
    let kills = contend(
        12_144_867_158_608_821_601,
        PreemptionModel::Current,
        &[Policy::Fair, Policy::Drf],
        &SIZES,
        &[0.5, 1.0],
    );
    assert_eq!(
        kills[120..].iter().sum::<usize>(),
        0,
        "still preempting: {kills:?}"
    );
    assert!(kills.iter().sum::<usize>() <= 2 * 3 * 8);
}
