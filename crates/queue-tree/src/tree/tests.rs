//! Unit tests of the live tree's mechanics (creation, apps, usage, ordering,
//! limits, moves, reload) on configurations built in code; the data-driven
//! share scenarios over real allocation files live in `tests/shares.rs`.

use weft_model::{AppId, AppPriority, QueuePath, Resource, Time};

use crate::apps::{NewApp, Visit, WaitReason};
use crate::config::{AllocConfig, QueueConfig, QueueKind};
use crate::policy::Policy;
use crate::tree::{AppHandle, QueueTree, TreeSettings};

fn path(s: &str) -> QueuePath {
    QueuePath::parse(s).unwrap()
}

/// A config with the given queues (`name` leaf, `name/` parent) and a tweak per queue.
fn config(queues: &[&str], tweak: impl Fn(&mut QueueConfig)) -> AllocConfig {
    let mut cfg = AllocConfig::default();
    for q in queues {
        let (name, kind) = match q.strip_suffix('/') {
            Some(n) => (n, QueueKind::Parent),
            None => (*q, QueueKind::Leaf),
        };
        let mut qc = QueueConfig::new(path(name), kind);
        tweak(&mut qc);
        cfg.queues.insert(qc.path.clone(), qc);
    }
    cfg
}

fn tree(cfg: AllocConfig) -> QueueTree {
    QueueTree::new(cfg, TreeSettings::default(), Resource::new(10240, 10))
}

fn add(
    t: &mut QueueTree,
    seq: u32,
    queue: &str,
    user: &str,
    start: u64,
) -> (AppHandle, Option<WaitReason>) {
    let added = t
        .add_app(NewApp {
            id: AppId::new(1, seq),
            queue: path(queue),
            create_queue: true,
            user: user.to_owned(),
            start: Time::from_millis(start),
            priority: AppPriority(0),
            am_resource: Some(Resource::new(1024, 1)),
        })
        .unwrap();
    t.check_invariants().unwrap();
    (added.handle, added.waiting)
}

/// The apps in the order the walk offers them.
fn walk_order(t: &QueueTree) -> Vec<u32> {
    let mut seen = Vec::new();
    t.walk::<()>(|h| {
        seen.push(t.app_id(h).seq);
        Visit::Pass
    });
    seen
}

#[test]
fn default_tree_has_root_and_default() {
    let t = tree(AllocConfig::default());
    let paths: Vec<String> = t.snapshot().iter().map(|q| q.path.to_string()).collect();
    assert_eq!(paths, ["root", "root.default"]);
    t.check_invariants().unwrap();
}

#[test]
fn dynamic_queues_are_created_and_removed_when_empty() {
    let mut t = tree(AllocConfig::default());
    let (h, _) = add(&mut t, 1, "root.users.alice", "alice", 0);
    assert_eq!(
        t.queue_kind(t.queue_id(&path("root.users")).unwrap()),
        QueueKind::Parent
    );
    assert!(
        t.remove_empty_dynamic_queues().is_empty(),
        "non-empty queues stay"
    );
    t.remove_app(h);
    let removed: Vec<String> = t
        .remove_empty_dynamic_queues()
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(removed, ["root.users.alice", "root.users"]);
    t.check_invariants().unwrap();
}

#[test]
fn queues_cannot_be_created_under_leaves_or_as_parents() {
    let mut t = tree(config(&["a", "p/", "p.x"], |_| {}));
    let mk = |seq, q: &str| NewApp {
        id: AppId::new(1, seq),
        queue: path(q),
        create_queue: true,
        user: "u".into(),
        start: Time::ZERO,
        priority: AppPriority(0),
        am_resource: None,
    };
    let e = t.add_app(mk(1, "root.a.b")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "queue root.a.b cannot be created: root.a is a leaf queue and cannot have children"
    );
    let e = t.add_app(mk(2, "root.p")).unwrap_err();
    assert_eq!(e.to_string(), "queue root.p is a parent queue, not a leaf");
    let e = t.add_app(mk(3, "root.default.x")).unwrap_err();
    assert!(e.to_string().contains("root.default is a leaf"), "{e}");
    let mut no_create = mk(4, "root.new");
    no_create.create_queue = false;
    let e = t.add_app(no_create).unwrap_err();
    assert_eq!(
        e.to_string(),
        "queue root.new does not exist and placement did not allow creating it"
    );
    assert!(t.queue_id(&path("root.new")).is_none());
    // No deeper than the tree's walks take, whoever asks.
    let deepest = format!("root{}", ".d".repeat(crate::MAX_QUEUE_DEPTH));
    t.add_app(mk(5, &deepest)).unwrap();
    let too_deep = format!("root.e{}", ".d".repeat(crate::MAX_QUEUE_DEPTH));
    let e = t.add_app(mk(6, &too_deep)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "queue {too_deep} cannot be created: it is {} levels below root, more than {}",
            crate::MAX_QUEUE_DEPTH + 1,
            crate::MAX_QUEUE_DEPTH
        )
    );
    assert!(t.queue_id(&path("root.e")).is_none());
    t.check_invariants().unwrap();
}

#[test]
fn usage_propagates_and_walk_follows_fair_order() {
    let mut t = tree(config(&["a", "b"], |_| {}));
    let (a1, _) = add(&mut t, 1, "root.a", "u", 10);
    let (a2, _) = add(&mut t, 2, "root.a", "u", 20);
    let (b1, _) = add(&mut t, 3, "root.b", "u", 30);
    for h in [a1, a2, b1] {
        t.set_pending(h, Resource::new(4096, 4));
    }
    t.update();
    // Equal usage: queues tie on usage and go by name; apps by start time.
    assert_eq!(walk_order(&t), [1, 2, 3]);
    t.add_usage(a1, Resource::new(2048, 1));
    t.check_invariants().unwrap();
    // root.a now uses more than root.b, so b comes first; inside a, app 2 (less usage) first.
    assert_eq!(walk_order(&t), [3, 2, 1]);
    assert_eq!(t.queue_usage(t.root()), Resource::new(2048, 1));
    t.remove_usage(a1, Resource::new(2048, 1));
    t.set_pending(a2, Resource::ZERO);
    t.check_invariants().unwrap();
    assert_eq!(
        walk_order(&t),
        [1, 3],
        "apps without pending asks are not offered"
    );
}

#[test]
fn fifo_leaf_orders_by_priority_then_start() {
    let mut t = tree(config(&["f"], |q| q.policy = Some(Policy::Fifo)));
    let (x, _) = add(&mut t, 1, "root.f", "u", 10);
    let (y, _) = add(&mut t, 2, "root.f", "u", 5);
    t.set_pending(x, Resource::new(1024, 1));
    t.set_pending(y, Resource::new(1024, 1));
    t.add_usage(y, Resource::new(8192, 8));
    assert_eq!(walk_order(&t), [2, 1], "FIFO ignores usage");
    t.set_app_priority(x, AppPriority(1));
    t.check_invariants().unwrap();
    assert_eq!(walk_order(&t), [1, 2]);
}

#[test]
fn running_app_limits_wait_and_wake_in_start_order() {
    let mut cfg = config(&["a"], |q| q.max_running_apps = Some(1));
    cfg.user_max_apps.insert("bob".into(), 1);
    let mut t = tree(cfg);
    let (a1, w) = add(&mut t, 1, "root.a", "alice", 0);
    assert!(w.is_none());
    let (_a2, w) = add(&mut t, 2, "root.a", "alice", 20);
    assert_eq!(
        w.unwrap().to_string(),
        "queue root.a already runs 1 applications, its maxRunningApps"
    );
    let (_a3, _) = add(&mut t, 3, "root.a", "carol", 10);
    let woken = t.remove_app(a1);
    assert_eq!(
        woken,
        [AppId::new(1, 3)],
        "the earliest waiting app wakes first"
    );
    t.check_invariants().unwrap();

    let (b1, _) = add(&mut t, 4, "root.default", "bob", 0);
    let (_b2, w) = add(&mut t, 5, "root.default", "bob", 1);
    assert_eq!(
        w.unwrap().to_string(),
        "user bob already runs 1 applications, the most allowed (maxRunningApps for users)"
    );
    assert_eq!(t.remove_app(b1), [AppId::new(1, 5)]);
    t.check_invariants().unwrap();
}

#[test]
fn a_waiting_app_is_told_every_limit_it_meets_and_its_place_in_line() {
    let mut cfg = config(&["p/", "p.x", "p.y"], |q| {
        if q.path == path("root.p") {
            q.max_running_apps = Some(1);
        }
    });
    cfg.user_max_apps_default = Some(1);
    let mut t = tree(cfg);
    let (_a1, _) = add(&mut t, 1, "root.p.x", "alice", 0);
    // Waits on root.p only (bob runs nothing yet).
    let (b1, _) = add(&mut t, 2, "root.p.y", "bob", 30);
    // Waits on alice's default limit and on root.p, ahead of bob in root.p's line.
    let (a2, _) = add(&mut t, 3, "root.p.y", "alice", 10);
    let waits = t.running_app_waits(a2);
    let described: Vec<String> = waits
        .iter()
        .map(|w| {
            format!(
                "{} (default {}, {} running, {} of {})",
                w.reason, w.from_default, w.running, w.position, w.waiting
            )
        })
        .collect();
    assert_eq!(
        described,
        [
            "user alice already runs 1 applications, the most allowed (maxRunningApps for users) (default true, 1 running, 1 of 1)",
            "queue root.p already runs 1 applications, its maxRunningApps (default false, 1 running, 1 of 2)",
        ]
    );
    let waits = t.running_app_waits(b1);
    assert_eq!(waits.len(), 1);
    assert_eq!((waits[0].position, waits[0].waiting), (2, 2));
    assert_eq!(
        waits[0].reason,
        t.runnable_check(t.app_queue(b1), "bob").unwrap(),
        "the first limit listed is the one the scheduler stops at"
    );
    let (c, _) = add(&mut t, 4, "root.default", "carol", 0);
    assert!(
        t.running_app_waits(c).is_empty(),
        "runnable apps wait on nothing"
    );
}

#[test]
fn the_max_share_blocker_is_the_nearest_queue_without_room() {
    let mut t = tree(config(&["p/", "p.x", "p.y"], |q| {
        q.max_resources = Some(weft_model::ResourceSpec::Absolute(
            if q.path == path("root.p") {
                Resource::new(3072, 4)
            } else {
                Resource::new(2048, 2)
            },
        ));
    }));
    let (h, _) = add(&mut t, 1, "root.p.x", "u", 0);
    let x = t.queue_id(&path("root.p.x")).unwrap();
    let p = t.queue_id(&path("root.p")).unwrap();
    t.add_usage(h, Resource::new(1024, 1));
    assert_eq!(t.max_share_blocker(x, Resource::new(1024, 1)), None);
    assert!(t.fits_in_max_share(x, Resource::new(1024, 1)));
    assert_eq!(t.max_share_blocker(x, Resource::new(2048, 1)), Some(x));
    assert!(!t.fits_in_max_share(x, Resource::new(2048, 1)));
    // A parent stops a container its child has room for.
    let (g, _) = add(&mut t, 2, "root.p.y", "u", 0);
    t.add_usage(g, Resource::new(2048, 1));
    assert_eq!(t.max_share_blocker(x, Resource::new(1024, 1)), Some(p));
    assert!(!t.fits_in_max_share(x, Resource::new(1024, 1)));
    t.check_invariants().unwrap();
}

#[test]
fn raising_a_limit_on_reload_releases_waiters_lowering_stops_nobody() {
    let mut t = tree(config(&["a"], |q| q.max_running_apps = Some(1)));
    add(&mut t, 1, "root.a", "u", 0);
    add(&mut t, 2, "root.a", "u", 1);
    add(&mut t, 3, "root.a", "u", 2);
    let applied = t.apply_config(config(&["a"], |q| q.max_running_apps = Some(2)));
    assert_eq!(applied.now_runnable, [AppId::new(1, 2)]);
    let applied = t.apply_config(config(&["a"], |q| q.max_running_apps = Some(0)));
    assert!(applied.now_runnable.is_empty());
    let a = t.queue_id(&path("root.a")).unwrap();
    assert_eq!(
        t.queue_snapshot(a).n_runnable_apps,
        2,
        "lowering never stops running apps"
    );
    t.check_invariants().unwrap();
}

#[test]
fn reload_keeps_apps_in_removed_queues_and_delays_type_changes() {
    let mut t = tree(config(&["a", "b"], |_| {}));
    let (h, _) = add(&mut t, 1, "root.a", "u", 0);
    t.add_usage(h, Resource::new(1024, 1));
    // root.a disappears from the file and root.b becomes a parent.
    let applied = t.apply_config(config(&["b/", "b.c"], |_| {}));
    assert!(
        applied.pending_type_changes.is_empty(),
        "empty root.b changes at once"
    );
    let a = t.queue_id(&path("root.a")).unwrap();
    assert!(!t.queue_is_configured(a));
    assert_eq!(t.queue_usage(a), Resource::new(1024, 1));
    assert!(t.queue_id(&path("root.b.c")).is_some());
    // Now ask root.a (holding an app) to become a parent: it waits.
    let applied = t.apply_config(config(&["a/", "a.x"], |_| {}));
    assert_eq!(applied.pending_type_changes, [path("root.a")]);
    assert_eq!(applied.deferred_queues, [path("root.a.x")]);
    t.check_invariants().unwrap();
    t.remove_usage(h, Resource::new(1024, 1));
    t.remove_app(h);
    t.remove_empty_dynamic_queues();
    assert_eq!(t.queue_kind(a), QueueKind::Parent);
    assert!(t.queue_id(&path("root.a.x")).is_some());
    assert!(
        t.queue_id(&path("root.b")).is_none(),
        "b dropped from the file and empty: removed"
    );
    t.check_invariants().unwrap();
}

#[test]
fn move_checks_limits_and_max_share_then_moves_usage() {
    let mut t = tree(config(&["a", "b", "c"], |q| match q.path.name() {
        "b" => q.max_running_apps = Some(0),
        "c" => q.max_resources = Some(weft_model::ResourceSpec::Absolute(Resource::new(1024, 10))),
        _ => {}
    }));
    let (h, _) = add(&mut t, 1, "root.a", "u", 0);
    t.add_usage(h, Resource::new(2048, 2));
    t.set_pending(h, Resource::new(1024, 1));
    let e = t.move_app(h, &path("root.b")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot move: queue root.b already runs 0 applications, its maxRunningApps"
    );
    let e = t.move_app(h, &path("root.c")).unwrap_err();
    assert!(e.to_string().contains("over its max share"), "{e}");
    let e = t.move_app(h, &path("root")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "target queue root not found or is not a leaf queue"
    );
    t.move_app(h, &path("root.default")).unwrap();
    t.check_invariants().unwrap();
    let d = t.queue_id(&path("root.default")).unwrap();
    assert_eq!(t.queue_usage(d), Resource::new(2048, 2));
    assert_eq!(
        t.queue_usage(t.queue_id(&path("root.a")).unwrap()),
        Resource::ZERO
    );
    assert_eq!(walk_order(&t), [1]);
}

#[test]
fn am_share_limit_uses_fair_share_and_available_resources() {
    let mut t = tree(config(&["a", "b"], |_| {}));
    let (h, _) = add(&mut t, 1, "root.a", "u", 0);
    t.set_pending(h, Resource::new(1024, 1));
    t.update();
    let a = t.queue_id(&path("root.a")).unwrap();
    // root.a is the only active queue: fair share 10240 MB, vcores 0 under `fair`,
    // so the vcore base is the available 10 vcores; half of each, rounded up.
    assert_eq!(t.am_limit(a), Some(Resource::new(5120, 5)));
    assert!(t.can_start_am(h));
    t.am_started(h);
    t.add_usage(h, Resource::new(1024, 1));
    assert_eq!(t.am_usage(a), Resource::new(1024, 1));
    t.check_invariants().unwrap();
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    #[derive(Clone, Debug)]
    enum Op {
        Add { queue: usize, user: usize },
        Remove(usize),
        Use(usize, u64),
        Release(usize, u64),
        Pending(usize, u64),
        Move(usize, usize),
        Priority(usize, i32),
        AmStarted(usize),
        Update,
        Reload(u32),
        Prune,
    }

    const QUEUES: &[&str] = &[
        "root.a",
        "root.b",
        "root.p.x",
        "root.p.y",
        "root.dyn.u1",
        "root.default",
    ];

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..QUEUES.len(), 0..3usize).prop_map(|(queue, user)| Op::Add { queue, user }),
            1 => any::<usize>().prop_map(Op::Remove),
            3 => (any::<usize>(), 1..4096u64).prop_map(|(a, m)| Op::Use(a, m)),
            2 => (any::<usize>(), 1..4096u64).prop_map(|(a, m)| Op::Release(a, m)),
            2 => (any::<usize>(), 0..8192u64).prop_map(|(a, m)| Op::Pending(a, m)),
            1 => (any::<usize>(), 0..QUEUES.len()).prop_map(|(a, q)| Op::Move(a, q)),
            1 => (any::<usize>(), -2..3i32).prop_map(|(a, p)| Op::Priority(a, p)),
            1 => any::<usize>().prop_map(Op::AmStarted),
            1 => Just(Op::Update),
            1 => (0..4u32).prop_map(Op::Reload),
            1 => Just(Op::Prune),
        ]
    }

    fn limited(limit: u32) -> AllocConfig {
        config(&["a", "b", "p/", "p.x", "p.y"], |q| {
            if q.path.name() == "p" {
                q.max_running_apps = Some(limit);
                q.policy = Some(Policy::Drf);
            }
            if q.path.name() == "b" {
                q.policy = Some(Policy::Fifo);
            }
        })
    }

    /// Runs the ops, checking invariants after each; returns a rendering of the end state.
    fn run(ops: &[Op]) -> String {
        let mut t = tree(limited(2));
        let mut live: Vec<AppHandle> = Vec::new();
        let mut seq = 0;
        for (step, op) in ops.iter().enumerate() {
            let pick = |i: usize| (!live.is_empty()).then(|| live[i % live.len()]);
            match op {
                Op::Add { queue, user } => {
                    seq += 1;
                    let res = t.add_app(NewApp {
                        id: AppId::new(1, seq),
                        queue: path(QUEUES[*queue]),
                        create_queue: true,
                        user: format!("u{user}"),
                        start: Time::from_millis(step as u64),
                        priority: AppPriority(0),
                        am_resource: Some(Resource::new(1024, 1)),
                    });
                    if let Ok(added) = res {
                        live.push(added.handle);
                    }
                }
                Op::Remove(i) => {
                    if let Some(h) = pick(*i) {
                        live.retain(|x| *x != h);
                        t.remove_app(h);
                    }
                }
                Op::Use(i, m) => {
                    if let Some(h) = pick(*i) {
                        let leaf = t.app_queue(h);
                        let r = Resource::new(*m, 1);
                        if t.fits_in_max_share(leaf, r) {
                            t.add_usage(h, r);
                        }
                    }
                }
                Op::Release(i, m) => {
                    if let Some(h) = pick(*i) {
                        let r = Resource::new(*m, 1).component_min(t.app_usage(h));
                        t.remove_usage(h, r);
                    }
                }
                Op::Pending(i, m) => {
                    if let Some(h) = pick(*i) {
                        t.set_pending(h, Resource::new(*m, m.div_ceil(1024)));
                    }
                }
                Op::Move(i, q) => {
                    if let Some(h) = pick(*i) {
                        let _ = t.move_app(h, &path(QUEUES[*q]));
                    }
                }
                Op::Priority(i, p) => {
                    if let Some(h) = pick(*i) {
                        t.set_app_priority(h, AppPriority(*p));
                    }
                }
                Op::AmStarted(i) => {
                    if let Some(h) = pick(*i)
                        && t.app_is_runnable(h)
                    {
                        t.am_started(h);
                    }
                }
                Op::Update => t.update(),
                Op::Reload(limit) => {
                    t.apply_config(limited(*limit));
                }
                Op::Prune => {
                    t.remove_empty_dynamic_queues();
                }
            }
            if let Err(e) = t.check_invariants() {
                panic!("after step {step} ({op:?}): {e}");
            }
            for id in t.queue_ids() {
                let s = t.queue_snapshot(id);
                if let Some(limit) = s.max_running_apps {
                    // Only a reload can leave a queue over its limit; otherwise it never exceeds it.
                    if s.n_runnable_apps > limit
                        && !matches!(op, Op::Reload(_))
                        && !ops[..step].iter().any(|o| matches!(o, Op::Reload(_)))
                    {
                        panic!(
                            "{} runs {} apps over its limit {limit}",
                            s.path, s.n_runnable_apps
                        );
                    }
                }
            }
        }
        t.update();
        let mut out = String::new();
        for s in t.snapshot() {
            out.push_str(&format!(
                "{} {:?} {} {} {} {}\n",
                s.path, s.kind, s.usage, s.demand, s.fair_share, s.n_runnable_apps
            ));
        }
        out.push_str(&format!("{:?}", walk_order(&t)));
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        #[test]
        fn random_operations_keep_every_invariant_and_are_deterministic(ops in prop::collection::vec(op(), 1..120)) {
            let first = run(&ops);
            let second = run(&ops);
            prop_assert_eq!(first, second);
        }
    }
}
