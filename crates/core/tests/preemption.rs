//! Seed 003's preemption experiment through the core, deterministic: the
//! seed's allocation file as written, a 24 GB cluster (three nodes of 8 GB /
//! 16 vcores), four greedy apps in root.default filling it with 1 GB
//! containers, then one app in root.supertool. With preemption on, supertool
//! takes containers back from default within a bounded number of kills:
//! 16 : 8 under the current model, the seed's 18 : 6 under the classic
//! model (Hadoop 2.x's queue-level preemption). With it off, nothing is
//! killed and supertool only grows as containers finish.

use weft_model::QueuePath;
use weft_test_support::scenario::Scenario;

const SEED_003: &str = include_str!("../../../conf/examples/seed-003-preemption-experiment.xml");

struct Run {
    scenario: Scenario,
    kills: usize,
    warnings: usize,
    /// (seconds, supertool containers, default containers) after each second.
    history: Vec<(u64, u32, u32)>,
}

fn run(cmd: &mut Scenario, text: &str) -> String {
    cmd.run(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Containers held by apps in a queue (AM containers included).
fn containers_in(s: &Scenario, queue: &str) -> u32 {
    let queue = QueuePath::parse(queue).unwrap();
    s.rm()
        .app_reports()
        .filter(|r| r.record.queue == queue)
        .map(|r| r.running_containers)
        .sum()
}

fn experiment(preemption: bool, model: &str, seconds: u64, finish_tasks: bool) -> Run {
    let mut s = Scenario::new();
    run(&mut s, &format!("config\n{SEED_003}"));
    run(
        &mut s,
        &format!("site preemption={preemption} preemption.model={model}"),
    );
    for n in ["n1", "n2", "n3"] {
        run(&mut s, &format!("node {n} rack=/r1 8192mb,16vc"));
    }
    for app in ["d1", "d2", "d3", "d4"] {
        run(
            &mut s,
            &format!("submit {app} queue=root.default user=u{app} am=1024mb,1vc"),
        );
    }
    // AMs, then every app asks for far more than the cluster holds.
    run(&mut s, "heartbeat all times=2");
    for app in ["d1", "d2", "d3", "d4"] {
        run(&mut s, &format!("register {app}"));
        run(&mut s, &format!("ask {app} 100x1024mb,1vc"));
    }
    for _ in 0..10 {
        run(&mut s, "advance 1s");
        run(&mut s, "heartbeat all times=8");
    }
    assert_eq!(
        containers_in(&s, "root.default"),
        24,
        "the four default apps fill the cluster"
    );
    run(
        &mut s,
        "submit sup queue=root.supertool user=tool am=1024mb,1vc",
    );
    let mut out = Run {
        scenario: s,
        kills: 0,
        warnings: 0,
        history: Vec::new(),
    };
    let mut registered = false;
    for second in 1..=seconds {
        let mut text = run(&mut out.scenario, "advance 1s");
        if finish_tasks && second % 5 == 0 {
            // Without preemption, room only appears as tasks finish.
            text.push_str(&finish_one_default_task(&mut out.scenario));
        }
        text.push_str(&run(&mut out.scenario, "heartbeat all times=4"));
        if !registered && containers_in(&out.scenario, "root.supertool") > 0 {
            run(&mut out.scenario, "register sup");
            text.push_str(&run(&mut out.scenario, "ask sup 100x1024mb,1vc"));
            registered = true;
        }
        out.kills += text.lines().filter(|l| l.starts_with("kill ")).count();
        out.warnings += text.lines().filter(|l| l.starts_with("preempt ")).count();
        out.history.push((
            second,
            containers_in(&out.scenario, "root.supertool"),
            containers_in(&out.scenario, "root.default"),
        ));
    }
    out
}

/// The newest task container (not an AM) of the default app holding the
/// most: its node reports it complete.
fn finish_one_default_task(s: &mut Scenario) -> String {
    let default = QueuePath::parse("root.default").unwrap();
    let busiest = s
        .rm()
        .app_reports()
        .filter(|r| r.record.queue == default && r.running_containers > 1)
        .max_by_key(|r| (r.running_containers, std::cmp::Reverse(r.record.id)))
        .map(|r| (r.record.id, r.record.name.clone()));
    let Some((id, name)) = busiest else {
        return String::new();
    };
    let newest = s
        .rm()
        .app_containers(id)
        .into_iter()
        .filter(|(c, _, _)| c.seq > 1)
        .max_by_key(|(c, _, _)| c.seq);
    let Some((container, node, _)) = newest else {
        return String::new();
    };
    run(
        s,
        &format!("heartbeat {} done={name}#{}", node.host(), container.seq),
    )
}

/// Converged: the split does not change in the last minute of the run.
fn assert_converged(run: &Run) {
    let tail: Vec<_> = run
        .history
        .iter()
        .rev()
        .take(60)
        .map(|(_, s, d)| (*s, *d))
        .collect();
    assert!(
        tail.windows(2).all(|w| w[0] == w[1]),
        "still changing: {tail:?}"
    );
}

#[test]
fn seed_003_with_preemption_supertool_takes_its_min_share_back() {
    let run = experiment(true, "current", 120, false);
    let (_, sup, def) = *run.history.last().unwrap();
    assert_eq!(sup + def, 24, "the cluster stays full");
    // Current Hadoop never takes an app below its own fair share: default's
    // 6576 MB fair share splits into 1644 MB per app, so each of its four apps
    // keeps two 1 GB containers and supertool stops at 16 (the seed's 18 : 6
    // came from Hadoop 2.2's queue-level preemption; see docs/preemption.md).
    assert_eq!((sup, def), (16, 8));
    // One kill freed room for supertool's AM, fifteen more its tasks.
    assert_eq!(run.kills, 16, "kills are bounded");
    assert_converged(&run);
    // Each app's record counts what was taken from it (the REST report's
    // numNonAMContainerPreempted, numAMContainerPreempted and
    // preemptedResourceMB / VCores): 16 task containers of 1 GB, no AM.
    let (mut tasks, mut ams, mut resource) = (0, 0, weft_model::Resource::ZERO);
    for r in run.scenario.rm().app_reports() {
        tasks += r.record.preempted_containers;
        ams += r.record.preempted_am_containers;
        resource += r.record.preempted_resource;
    }
    assert_eq!((tasks, ams), (16, 0));
    assert_eq!(resource, weft_model::Resource::new(16 * 1024, 16));
}

#[test]
fn seed_003_without_preemption_nothing_is_killed() {
    let run = experiment(false, "current", 60, true);
    assert_eq!(run.kills, 0);
    assert_eq!(run.warnings, 0);
    // supertool only grows as containers finish (one every five seconds here).
    let sups: Vec<u32> = run.history.iter().map(|(_, s, _)| *s).collect();
    assert!(sups.windows(2).all(|w| w[1] >= w[0]));
    assert!(*sups.last().unwrap() <= 12);
}

#[test]
fn seed_003_with_classic_preemption_converges_to_the_seed_s_3_to_1() {
    let run = experiment(true, "classic", 120, false);
    let (_, sup, def) = *run.history.last().unwrap();
    assert_eq!(sup + def, 24, "the cluster stays full");
    // Hadoop 2.x takes from the queue over its fair share while it is over:
    // default gives until it holds 6144 MB, below its 6576 MB, whatever its
    // apps' own shares; supertool ends with 18 GB, the seed's 3 : 1.
    assert_eq!((sup, def), (18, 6));
    // One kill freed room for supertool's AM, seventeen more its tasks.
    assert_eq!(run.kills, 18, "kills are bounded");
    assert_eq!(run.warnings, 18, "every warning was carried out");
    assert_converged(&run);
}

#[test]
fn seed_003_with_classic_model_but_preemption_off_nothing_is_killed() {
    let run = experiment(false, "classic", 60, true);
    assert_eq!(run.kills, 0);
    assert_eq!(run.warnings, 0);
}
