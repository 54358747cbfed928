//! Recovering applications after a restart of the ResourceManager
//! (`Input::AppRecovered`), as a scenario: a fresh core takes back the apps
//! its driver's state store lists, then its nodes re-register with the
//! containers they still run. Each step's state is rendered as a table and
//! compared with `expect-test` (`UPDATE_EXPECT=1` to rewrite).
//!
//! What must hold, as in Hadoop's recovery: placement and ACLs are skipped;
//! a queue that became a parent sends the app to `root.recovery`; the
//! attempt keeps its number, so the nodes' containers of that attempt are
//! taken over; a running AM container is not asked for again, and its AM
//! may register once the container is back; the submission and launch
//! times are the stored ones. Apps that had ended come back as they ended
//! (`Input::EndedAppRecovered`), among the finished apps only.

use std::fmt::Write as _;

use expect_test::{Expect, expect};
use weft_core::{
    AppState, CoreSettings, EndedApp, FinalStatus, Input, NodeHeartbeat, NodeRegistration,
    RecoveredApp, RecoveredContainer, Reply, ResourceManager, Submission, ask_anywhere,
};
use weft_model::{AppId, AppPriority, AttemptId, ContainerId, NodeId, Priority, Resource, Time};
use weft_queue_tree::alloc_file::parse_alloc_file;

/// Placement rejects everything and nobody may submit anywhere: recovery
/// must not care.
const ALLOC: &str = r#"<allocations>
  <queue name="root">
    <aclSubmitApps> </aclSubmitApps>
    <aclAdministerApps> </aclAdministerApps>
    <queue name="a"/>
    <queue name="p" type="parent"><queue name="child"/></queue>
  </queue>
  <queuePlacementPolicy><rule name="reject"/></queuePlacementPolicy>
</allocations>"#;

/// The old RM's cluster timestamp; the new one starts at 2000.
const OLD: u64 = 1000;

struct Cluster {
    rm: ResourceManager,
    now: Time,
}

impl Cluster {
    fn new() -> Cluster {
        Cluster::starting_at(Time::ZERO, CoreSettings::default().max_completed_apps)
    }

    /// A core whose clock starts at `start`, keeping `max_completed_apps`.
    fn starting_at(start: Time, max_completed_apps: usize) -> Cluster {
        let config = parse_alloc_file(ALLOC).unwrap().config;
        let settings = CoreSettings {
            cluster_timestamp: 2000,
            max_completed_apps,
            ..CoreSettings::default()
        };
        Cluster {
            rm: ResourceManager::new(config, settings, start),
            now: start,
        }
    }

    fn input(&mut self, input: Input) -> Reply {
        self.now += weft_model::Duration::from_millis(100);
        let out = self.rm.handle(self.now, input);
        self.rm.check_invariants().unwrap();
        out.reply
    }

    /// Takes back app `seq`. Its submission asks for a lifetime of 1 ms,
    /// which recovery must ignore: only `lifetime_expiry` counts.
    fn recover(
        &mut self,
        seq: u32,
        queue: &str,
        managed: bool,
        attempt: u32,
        am_up: bool,
    ) -> String {
        self.recover_expiring(seq, queue, managed, attempt, am_up, None)
    }

    fn recover_expiring(
        &mut self,
        seq: u32,
        queue: &str,
        managed: bool,
        attempt: u32,
        am_up: bool,
        lifetime_expiry: Option<Time>,
    ) -> String {
        let base = alices_recovered(seq);
        let reply = self.input(Input::AppRecovered(RecoveredApp {
            submission: Submission {
                queue: Some("ignored".into()),
                am_resource: managed.then(|| Resource::new(1024, 1)),
                lifetime: Some(weft_model::Duration::from_millis(1)),
                ..base.submission
            },
            queue: queue.parse().unwrap(),
            attempt,
            am_container_allocated: am_up,
            lifetime_expiry,
            ..base
        }));
        match reply {
            Reply::Submitted(Ok(r)) => format!("recovered into {}", r.queue),
            Reply::Submitted(Err(e)) => format!("refused: {e}"),
            other => format!("unexpected {other:?}"),
        }
    }

    fn register_node(&mut self, name: &str, running: &[(u32, u32, u64)]) {
        let running = running
            .iter()
            .map(|&(seq, attempt, c)| RecoveredContainer {
                container: container(seq, attempt, c),
                resource: Resource::new(1024, 1),
                priority: Priority(if c == 1 { 0 } else { 1 }),
            })
            .collect();
        let reply = self.input(Input::NodeRegistered(NodeRegistration {
            node: NodeId::new(name, 8041).unwrap(),
            rack: "/r1".into(),
            capability: Resource::new(8192, 8),
            http_address: format!("{name}:8042"),
            running,
        }));
        assert!(matches!(reply, Reply::NodeRegistered(Ok(()))), "{reply:?}");
    }

    /// A heartbeat; what the node is told, one line.
    fn heartbeat(&mut self, name: &str) -> String {
        let reply = self.input(Input::NodeHeartbeat(NodeHeartbeat {
            node: NodeId::new(name, 8041).unwrap(),
            statuses: vec![],
            unhealthy: None,
        }));
        let Reply::NodeHeartbeat(Ok(r)) = reply else {
            return format!("{reply:?}");
        };
        let stop: Vec<String> = r
            .containers_to_stop
            .iter()
            .map(|(c, why)| format!("{c} ({why:?})"))
            .collect();
        let launch: Vec<String> = r
            .allocated
            .iter()
            .map(|c| format!("{}{}", c.container, if c.is_am { " (AM)" } else { "" }))
            .collect();
        format!("stop [{}], launch [{}]", stop.join(", "), launch.join(", "))
    }

    fn register_am(&mut self, seq: u32) -> String {
        match self.input(Input::AmRegistered {
            app: AppId::new(OLD, seq),
        }) {
            Reply::AmRegistered(Ok(r)) => format!("registered in {}", r.queue),
            Reply::AmRegistered(Err(e)) => format!("refused: {e}"),
            other => format!("unexpected {other:?}"),
        }
    }

    /// Apps, their attempt, state, containers and pending asks.
    fn render(&self) -> String {
        let mut out = String::new();
        for report in self.rm.app_reports() {
            let r = &report.record;
            let containers: Vec<String> = self
                .rm
                .app_containers(r.id)
                .iter()
                .map(|(c, n, _)| format!("{}@{}", c.seq, n.host()))
                .collect();
            writeln!(
                out,
                "{} {:<12} attempt {} {:<8} am {:<5} containers [{}] pending {}: {}",
                r.id,
                r.queue.to_string(),
                r.attempt.attempt,
                r.state.yarn_name(),
                r.am_container.map_or("-".to_owned(), |c| c.seq.to_string()),
                containers.join(" "),
                report.pending_containers,
                r.diagnostics,
            )
            .unwrap();
        }
        out
    }
}

/// alice's unmanaged app `seq` of the old cluster, back in `root.a` at its
/// first attempt, with no stored times or lifetime: what each test changes.
fn alices_recovered(seq: u32) -> RecoveredApp {
    RecoveredApp {
        submission: Submission {
            app: AppId::new(OLD, seq),
            user: "alice".into(),
            groups: vec![],
            queue: None,
            priority: AppPriority(0),
            am_resource: None,
            name: format!("app{seq}"),
            app_type: "YARN".into(),
            tags: vec![],
            max_attempts: None,
            lifetime: None,
        },
        queue: "root.a".parse().unwrap(),
        attempt: 1,
        am_container_allocated: false,
        lifetime_expiry: None,
        submitted: None,
        launched: None,
    }
}

fn container(seq: u32, attempt: u32, c: u64) -> ContainerId {
    ContainerId::new(AttemptId::new(AppId::new(OLD, seq), attempt), c)
}

fn check(actual: &str, expect: Expect) {
    expect.assert_eq(actual);
}

#[test]
fn recovered_apps_skip_placement_and_acls_and_take_back_their_containers() {
    let mut c = Cluster::new();
    let mut log = String::new();
    // 1: unmanaged, 2: managed with its AM running (attempt 2), 3: managed
    // whose AM was never allocated, 4: in a queue that is now a parent.
    for (seq, queue, managed, attempt, am_up) in [
        (1, "root.a", false, 1, false),
        (2, "root.a", true, 2, true),
        (3, "root.a", true, 1, false),
        (4, "root.p", false, 1, false),
        (5, "root.gone.new", false, 1, false),
    ] {
        let res = c.recover(seq, queue, managed, attempt, am_up);
        writeln!(log, "recover app {seq} in {queue}: {res}").unwrap();
    }
    writeln!(
        log,
        "recover app 1 again: {}",
        c.recover(1, "root.a", false, 1, false)
    )
    .unwrap();
    writeln!(
        log,
        "app 2 AM before its container is back: {}",
        c.register_am(2)
    )
    .unwrap();
    log.push_str(&c.render());
    check(
        &log,
        expect![[r#"
            recover app 1 in root.a: recovered into root.a
            recover app 2 in root.a: recovered into root.a
            recover app 3 in root.a: recovered into root.a
            recover app 4 in root.p: recovered into root.recovery
            recover app 5 in root.gone.new: recovered into root.gone.new
            recover app 1 again: refused: application application_1000_0001 already exists
            app 2 AM before its container is back: refused: application application_1000_0002 cannot register an application master now: its application master container has not been allocated yet
            application_1000_0001 root.a       attempt 1 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
            application_1000_0002 root.a       attempt 2 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
            application_1000_0003 root.a       attempt 1 ACCEPTED am -     containers [] pending 1: recovered after a resource manager restart: waiting for its application master container
            application_1000_0004 root.recovery attempt 1 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
            application_1000_0005 root.gone.new attempt 1 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
        "#]],
    );

    // The node comes back with app 1's two containers, app 2's AM container
    // of attempt 2 and a worker of its failed attempt 1, and a container of
    // an app nobody recovered.
    let mut log = String::new();
    c.register_node(
        "n1",
        &[(1, 1, 2), (1, 1, 3), (2, 2, 1), (2, 1, 4), (9, 1, 2)],
    );
    writeln!(log, "n1 heartbeat: {}", c.heartbeat("n1")).unwrap();
    writeln!(log, "n1 heartbeat: {}", c.heartbeat("n1")).unwrap();
    for seq in [1, 2, 4] {
        writeln!(log, "app {seq} AM: {}", c.register_am(seq)).unwrap();
    }
    log.push_str(&c.render());
    check(
        &log,
        expect![[r#"
            n1 heartbeat: stop [container_1000_0002_01_000004 (Unknown), container_1000_0009_01_000002 (Unknown)], launch [container_1000_0003_01_000001 (AM)]
            n1 heartbeat: stop [], launch []
            app 1 AM: registered in root.a
            app 2 AM: registered in root.a
            app 4 AM: registered in root.recovery
            application_1000_0001 root.a       attempt 1 RUNNING  am -     containers [2@n1 3@n1] pending 0: running
            application_1000_0002 root.a       attempt 2 RUNNING  am 1     containers [1@n1] pending 0: running
            application_1000_0003 root.a       attempt 1 ACCEPTED am 1     containers [1@n1] pending 0: recovered after a resource manager restart: waiting for its application master container
            application_1000_0004 root.recovery attempt 1 RUNNING  am -     containers [] pending 0: running
            application_1000_0005 root.gone.new attempt 1 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
        "#]],
    );

    // The recovered apps carry on: new containers continue the sequence,
    // and finishing works as for any app.
    let mut log = String::new();
    let reply = c.input(Input::Allocate(weft_core::AllocateRequest {
        app: AppId::new(OLD, 1),
        asks: vec![ask_anywhere(1, Resource::new(1024, 1), 1)],
        releases: vec![],
        blacklist_additions: vec![],
        blacklist_removals: vec![],
        progress: 0.5,
    }));
    assert!(matches!(reply, Reply::Allocate(Ok(_))), "{reply:?}");
    writeln!(log, "n1 heartbeat: {}", c.heartbeat("n1")).unwrap();
    let reply = c.input(Input::AttemptFinished {
        app: AppId::new(OLD, 2),
        outcome: FinalStatus::Succeeded,
        diagnostics: String::new(),
    });
    assert!(matches!(reply, Reply::Done(Ok(()))), "{reply:?}");
    writeln!(log, "n1 heartbeat: {}", c.heartbeat("n1")).unwrap();
    log.push_str(&c.render());
    check(
        &log,
        expect![[r#"
            n1 heartbeat: stop [], launch [container_1000_0001_01_000004]
            n1 heartbeat: stop [container_1000_0002_02_000001 (AppFinished)], launch []
            application_1000_0001 root.a       attempt 1 RUNNING  am -     containers [2@n1 3@n1 4@n1] pending 0: running
            application_1000_0002 root.a       attempt 2 FINISHED am -     containers [] pending 0: application master reported Succeeded
            application_1000_0003 root.a       attempt 1 ACCEPTED am 1     containers [1@n1] pending 0: recovered after a resource manager restart: waiting for its application master container
            application_1000_0004 root.recovery attempt 1 RUNNING  am -     containers [] pending 0: running
            application_1000_0005 root.gone.new attempt 1 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
        "#]],
    );
}

#[test]
fn recovered_apps_keep_their_lifetime_expiry() {
    let mut c = Cluster::new();
    let t = Time::from_millis;
    // 1: an expiry still ahead; 2: one that passed while the RM was down;
    // 3: none (its submission's lifetime is not counted again). App 2 comes
    // last, as any input after it would kill it.
    for (seq, expiry) in [(1, Some(t(60_000))), (3, None), (2, Some(t(50)))] {
        c.recover_expiring(seq, "root.a", false, 1, false, expiry);
    }
    let expiries: Vec<(u32, Option<Time>)> =
        c.rm.app_reports()
            .map(|r| (r.record.id.seq, r.record.lifetime_expiry))
            .collect();
    assert_eq!(
        expiries,
        vec![(1, Some(t(60_000))), (2, Some(t(50))), (3, None)]
    );
    // The core asks to be called at once for the expiry that has passed,
    // and kills that app at its next input, as Hadoop's monitor does on
    // its first pass after a restart.
    assert!(c.rm.next_deadline().unwrap() <= c.now);
    c.input(Input::Tick);
    let mut log = c.render();
    c.now = t(60_000);
    c.rm.handle(c.now, Input::Tick);
    c.rm.check_invariants().unwrap();
    log.push_str(&c.render());
    check(
        &log,
        expect![[r#"
            application_1000_0001 root.a       attempt 1 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
            application_1000_0002 root.a       attempt 1 KILLED   am -     containers [] pending 0: Application is killed by ResourceManager as it has exceeded the lifetime period.
            application_1000_0003 root.a       attempt 1 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
            application_1000_0001 root.a       attempt 1 KILLED   am -     containers [] pending 0: Application is killed by ResourceManager as it has exceeded the lifetime period.
            application_1000_0002 root.a       attempt 1 KILLED   am -     containers [] pending 0: Application is killed by ResourceManager as it has exceeded the lifetime period.
            application_1000_0003 root.a       attempt 1 ACCEPTED am -     containers [] pending 0: recovered after a resource manager restart: waiting for its application master to register again
        "#]],
    );
}

/// An app of cluster `ts` that ended in `state` at `finished` (ms).
fn ended(ts: u64, seq: u32, state: AppState, finished: u64) -> EndedApp {
    let t = Time::from_millis;
    EndedApp {
        app: AppId::new(ts, seq),
        user: "bob".into(),
        name: format!("done{seq}"),
        app_type: "MAPREDUCE".into(),
        tags: vec!["nightly".into()],
        queue: "root.gone".parse().unwrap(),
        state,
        final_status: match state {
            AppState::Finished => Some(FinalStatus::Succeeded),
            AppState::Killed => Some(FinalStatus::Killed),
            _ => Some(FinalStatus::Failed),
        },
        diagnostics: format!("{state} before the restart"),
        priority: AppPriority(3),
        am_resource: Some(Resource::new(2048, 1)),
        submitted: t(finished - 90),
        launched: Some(t(finished - 80)),
        finished: t(finished),
        lifetime_expiry: None,
        attempt: 2,
        progress: 0.4,
        memory_mb_seconds: 4096,
        vcore_seconds: 2,
        preempted_containers: 1,
        preempted_am_containers: 0,
        preempted_resource: Resource::new(1024, 1),
    }
}

impl Cluster {
    fn recover_ended(&mut self, app: EndedApp) -> String {
        match self.input(Input::EndedAppRecovered(Box::new(app))) {
            Reply::EndedAppRecovered(Ok(())) => "taken back".to_owned(),
            Reply::EndedAppRecovered(Err(e)) => format!("refused: {e}"),
            other => format!("unexpected {other:?}"),
        }
    }

    /// Each app's id, state, final status, queue and times (ms).
    fn render_times(&self) -> String {
        let mut out = String::new();
        for report in self.rm.app_reports() {
            let r = &report.record;
            let ms = |t: Option<Time>| t.map_or("-".to_owned(), |t| t.as_millis().to_string());
            writeln!(
                out,
                "{} {:<8} {:<9} {:<7} attempt {} submitted {} launched {} finished {}",
                r.id,
                r.state.yarn_name(),
                r.final_status.map_or("-".to_owned(), |f| format!("{f:?}")),
                r.queue.to_string(),
                r.attempt.attempt,
                ms(Some(r.submitted)),
                ms(r.launched),
                ms(r.finished),
            )
            .unwrap();
        }
        out
    }
}

#[test]
fn ended_apps_come_back_among_the_finished_only_and_are_forgotten_in_finish_order() {
    // A core whose clock starts far above the times it is given back, as
    // the service starts it when its state store reaches back.
    let start = Time::from_millis(1_000_000_000);
    let mut c = Cluster::starting_at(start, 3);
    let mut log = String::new();
    // Out of finish order; 9 ended before everything and has no room.
    for (seq, state, finished) in [
        (1, AppState::Finished, 100),
        (2, AppState::Killed, 300),
        (3, AppState::Failed, 200),
        (4, AppState::Rejected, 400),
        (9, AppState::Finished, 95),
    ] {
        writeln!(
            log,
            "app {seq}: {}",
            c.recover_ended(ended(2000, seq, state, finished))
        )
        .unwrap();
    }
    writeln!(
        log,
        "app 4 again: {}",
        c.recover_ended(ended(2000, 4, AppState::Finished, 500))
    )
    .unwrap();
    writeln!(
        log,
        "app 5 running: {}",
        c.recover_ended(ended(2000, 5, AppState::Running, 500))
    )
    .unwrap();
    // A live app keeps its submission and launch times; one stored
    // without them is taken as submitted now.
    for (seq, submitted, launched) in [(6, Some(50), Some(60)), (7, None, None)] {
        let reply = c.input(Input::AppRecovered(RecoveredApp {
            submitted: submitted.map(Time::from_millis),
            launched: launched.map(Time::from_millis),
            ..alices_recovered(seq)
        }));
        assert!(matches!(reply, Reply::Submitted(Ok(_))), "{reply:?}");
    }
    log.push_str(&c.render_times());
    check(
        &log,
        expect![[r#"
            app 1: taken back
            app 2: taken back
            app 3: taken back
            app 4: taken back
            app 9: taken back
            app 4 again: refused: application application_2000_0004 already exists
            app 5 running: refused: application application_2000_0005 cannot be taken back as ended: running is not a final state (finished, failed, killed or rejected)
            application_1000_0006 ACCEPTED -         root.a  attempt 1 submitted 50 launched 60 finished -
            application_1000_0007 ACCEPTED -         root.a  attempt 1 submitted 1000000900 launched - finished -
            application_2000_0002 KILLED   Killed    root.gone attempt 2 submitted 210 launched 220 finished 300
            application_2000_0003 FAILED   Failed    root.gone attempt 2 submitted 110 launched 120 finished 200
            application_2000_0004 FAILED   Failed    root.gone attempt 2 submitted 310 launched 320 finished 400
        "#]],
    );
    // No queue holds them, and nothing counts them as running.
    let metrics = c.rm.cluster_metrics();
    assert_eq!(
        (
            metrics.apps_running,
            metrics.apps_accepted,
            metrics.apps_completed,
            metrics.apps_failed,
            metrics.apps_killed
        ),
        (0, 2, 0, 2, 1)
    );
    let queues: Vec<String> =
        c.rm.queue_reports()
            .iter()
            .map(|q| {
                format!(
                    "{} {} {}",
                    q.tree.path, q.tree.n_runnable_apps, q.tree.usage
                )
            })
            .collect();
    expect![[r#"
        [
            "root 2 <memory:0, vCores:0>",
            "root.a 2 <memory:0, vCores:0>",
            "root.default 0 <memory:0, vCores:0>",
            "root.p 0 <memory:0, vCores:0>",
            "root.p.child 0 <memory:0, vCores:0>",
        ]
    "#]]
    .assert_debug_eq(&queues);
    // Their ids are never issued again, even 9's, which history had no room for.
    let Reply::NewApplication(new) = c.input(Input::NewApplication) else {
        panic!("no new id");
    };
    assert_eq!(new.app, AppId::new(2000, 10));
    // A node bringing back a container of one is told to stop it.
    let reply = c.input(Input::NodeRegistered(NodeRegistration {
        node: NodeId::new("n2", 8041).unwrap(),
        rack: "/r1".into(),
        capability: Resource::new(8192, 8),
        http_address: "n2:8042".into(),
        running: vec![RecoveredContainer {
            container: ContainerId::new(AttemptId::new(AppId::new(2000, 2), 2), 3),
            resource: Resource::new(1024, 1),
            priority: Priority(1),
        }],
    }));
    assert!(matches!(reply, Reply::NodeRegistered(Ok(()))), "{reply:?}");
    assert_eq!(
        c.heartbeat("n2"),
        "stop [container_2000_0002_02_000003 (Unknown)], launch []"
    );
    // An app ending now goes after them, and the earliest restored one goes.
    let reply = c.input(Input::KillApp {
        app: AppId::new(OLD, 7),
        reason: "killed by alice".into(),
    });
    assert!(matches!(reply, Reply::Done(Ok(()))), "{reply:?}");
    let left: Vec<String> =
        c.rm.app_reports()
            .filter(|r| r.record.state.is_final())
            .map(|r| r.record.id.to_string())
            .collect();
    assert_eq!(
        left,
        [
            "application_1000_0007",
            "application_2000_0002",
            "application_2000_0004"
        ]
    );
}

#[test]
fn recovered_apps_meet_the_priority_cap_in_force() {
    // The restarted RM's cap is 1; the apps were stored at 5, 1 and -3 (a
    // store written under a higher cap, or by hand).
    let config = parse_alloc_file(ALLOC).unwrap().config;
    let mut settings = CoreSettings {
        cluster_timestamp: 2000,
        ..CoreSettings::default()
    };
    settings.scheduler.max_app_priority = AppPriority(1);
    let mut rm = ResourceManager::new(config, settings, Time::ZERO);
    for (seq, priority) in [(1, 5), (2, 1), (3, -3)] {
        let out = rm.handle(
            Time::ZERO,
            Input::AppRecovered({
                let mut app = alices_recovered(seq);
                app.submission.priority = AppPriority(priority);
                app
            }),
        );
        assert!(matches!(out.reply, Reply::Submitted(Ok(_))), "{out:?}");
    }
    rm.check_invariants().unwrap();
    let priorities: Vec<(u32, i32)> = rm
        .app_reports()
        .map(|r| (r.record.id.seq, r.record.priority.0))
        .collect();
    assert_eq!(priorities, vec![(1, 1), (2, 1), (3, -3)]);
}
