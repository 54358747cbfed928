//! Unit tests of explanations: each rule with its numbers, the summary it
//! gives, and that the dry run foresees what the next heartbeat does.

use expect_test::{Expect, expect};
use weft_model::{AppId, AppPriority, NodeId, Priority, Resource, Time};
use weft_queue_tree::alloc_file::parse_alloc_file;
use weft_queue_tree::site::parse_site_file;

use super::*;
use crate::input::{ANY, AllocateRequest, Ask, Input, NodeHeartbeat, NodeRegistration, Submission};
use crate::output::Reply;
use crate::settings::CoreSettings;

/// A ResourceManager driven through `handle`, with names for nodes.
struct World {
    rm: ResourceManager,
    now: Time,
}

impl World {
    fn new(site: &[(&str, &str)], alloc: &str) -> World {
        let mut xml = String::from("<configuration>");
        for (k, v) in site {
            let name = if k.starts_with("yarn.") {
                (*k).to_owned()
            } else {
                format!("yarn.scheduler.fair.{k}")
            };
            xml.push_str(&format!(
                "<property><name>{name}</name><value>{v}</value></property>"
            ));
        }
        xml.push_str("</configuration>");
        let (scheduler, _) = parse_site_file(&xml).unwrap();
        let settings = CoreSettings {
            scheduler,
            cluster_timestamp: 1,
            ..CoreSettings::default()
        };
        let config = parse_alloc_file(alloc).unwrap().config;
        World {
            rm: ResourceManager::new(config, settings, Time::ZERO),
            now: Time::ZERO,
        }
    }

    fn node(&mut self, name: &str, rack: &str, mb: u64, vcores: u64) {
        let out = self.rm.handle(
            self.now,
            Input::NodeRegistered(NodeRegistration {
                node: id(name),
                rack: rack.to_owned(),
                capability: Resource::new(mb, vcores),
                http_address: format!("{name}:8042"),
                running: vec![],
            }),
        );
        assert!(matches!(out.reply, Reply::NodeRegistered(Ok(_))));
    }

    /// A new app; `am` `None` is an unmanaged AM, registered at once.
    fn submit(&mut self, user: &str, queue: &str, am: Option<Resource>) -> AppId {
        let Reply::NewApplication(new) = self.rm.handle(self.now, Input::NewApplication).reply
        else {
            panic!("no id");
        };
        let out = self.rm.handle(
            self.now,
            Input::AppSubmitted(Submission {
                app: new.app,
                user: user.to_owned(),
                groups: vec![],
                queue: Some(queue.to_owned()),
                priority: AppPriority(0),
                am_resource: am,
                name: "job".to_owned(),
                app_type: "YARN".to_owned(),
                tags: vec![],
                max_attempts: None,
                lifetime: None,
            }),
        );
        assert!(matches!(out.reply, Reply::Submitted(Ok(_))), "{out:?}");
        if am.is_none() {
            self.register(new.app);
        }
        new.app
    }

    fn register(&mut self, app: AppId) {
        let out = self.rm.handle(self.now, Input::AmRegistered { app });
        assert!(matches!(out.reply, Reply::AmRegistered(Ok(_))), "{out:?}");
    }

    fn allocate(&mut self, app: AppId, asks: Vec<Ask>, blacklist: &[&str]) {
        let out = self.rm.handle(
            self.now,
            Input::Allocate(AllocateRequest {
                app,
                asks,
                releases: vec![],
                blacklist_additions: blacklist.iter().map(|s| (*s).to_owned()).collect(),
                blacklist_removals: vec![],
                progress: 0.0,
            }),
        );
        assert!(matches!(out.reply, Reply::Allocate(Ok(_))), "{out:?}");
    }

    /// `n` containers of `mb` MB and 1 vcore at `prio`, at each location.
    fn ask(&mut self, app: AppId, prio: i32, at: &[&str], n: u32, mb: u64, relax: bool) {
        let asks = at
            .iter()
            .map(|loc| Ask {
                priority: Priority(prio),
                resource_name: (*loc).to_owned(),
                capability: Resource::new(mb, 1),
                num_containers: n,
                relax_locality: relax,
            })
            .collect();
        self.allocate(app, asks, &[]);
    }

    /// The apps given containers by one heartbeat of `node`.
    fn heartbeat(&mut self, node: &str) -> Vec<AppId> {
        let out = self.rm.handle(
            self.now,
            Input::NodeHeartbeat(NodeHeartbeat {
                node: id(node),
                statuses: vec![],
                unhealthy: None,
            }),
        );
        let Reply::NodeHeartbeat(Ok(reply)) = out.reply else {
            panic!("{:?}", out.reply);
        };
        self.rm.check_invariants().unwrap();
        reply.allocated.iter().map(|c| c.container.app()).collect()
    }

    /// Moves the clock, ticking at every deadline (update passes compute fair shares).
    fn advance(&mut self, ms: u64) {
        let target = self.now + weft_model::Duration::from_millis(ms);
        while let Some(deadline) = self.rm.next_deadline().filter(|d| *d <= target) {
            self.now = deadline.max(self.now);
            self.rm.handle(self.now, Input::Tick);
            if self.rm.next_deadline() == Some(deadline) {
                break;
            }
        }
        self.now = target;
        self.rm.handle(self.now, Input::Tick);
    }

    fn explain(&self, app: AppId) -> AppExplanation {
        self.rm.explain_app(app, self.now).expect("a known app")
    }
}

fn id(name: &str) -> NodeId {
    NodeId::new(name, 8041).unwrap()
}

/// The explanation as lines: outlook and summary, then each reason with
/// whether it holds the app back and what would change it.
fn render(ex: &AppExplanation) -> String {
    let mut out = format!("{}: {}\n", ex.outlook.name(), ex.summary);
    let mut line = |scope: &str, r: &Reason| {
        out.push_str(&format!(
            "{} {} [{}] {}\n",
            if r.blocking { "HOLDS" } else { "note " },
            scope,
            r.kind.code(),
            r.kind
        ));
        if r.blocking {
            out.push_str(&format!("      to change: {}\n", r.kind.remedy()));
        }
    };
    for r in &ex.reasons {
        line("app", r);
    }
    for ask in &ex.asks {
        for r in &ask.reasons {
            line(&ask.label(), r);
        }
    }
    out
}

fn check(world: &World, app: AppId, expect: Expect) {
    expect.assert_eq(&render(&world.explain(app)));
}

/// Each node the explanation says has room for one of the app's asks.
fn nodes_with_room(ex: &AppExplanation) -> Vec<NodeId> {
    let mut out = Vec::new();
    for ask in &ex.asks {
        for r in &ask.reasons {
            if let ReasonKind::Room { nodes } = &r.kind {
                out.extend(nodes.shown.iter().map(|(n, _)| n.clone()));
            }
        }
    }
    out
}

const QUEUES: &str = r#"<allocations>
  <queue name="a"><maxRunningApps>1</maxRunningApps></queue>
  <queue name="p">
    <maxResources>4096 mb, 8 vcores</maxResources>
    <queue name="x"/>
  </queue>
  <queue name="small"><maxAMShare>0.25</maxAMShare></queue>
  <userMaxAppsDefault>2</userMaxAppsDefault>
</allocations>"#;

#[test]
fn an_unknown_app_has_no_explanation_and_an_ended_one_says_how_it_ended() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 8192, 8);
    assert_eq!(w.rm.explain_app(AppId::new(1, 99), w.now), None);
    let app = w.submit("alice", "root.default", None);
    let out = w.rm.handle(
        w.now,
        Input::AttemptFinished {
            app,
            outcome: FinalStatus::Succeeded,
            diagnostics: String::new(),
        },
    );
    assert!(matches!(out.reply, Reply::Done(Ok(()))));
    let ex = w.explain(app);
    assert_eq!(ex.outlook, Outlook::Ended);
    assert_eq!(ex.final_status, Some(FinalStatus::Succeeded));
    assert!(ex.reasons.is_empty() && ex.asks.is_empty());
    check(
        &w,
        app,
        expect![[r#"
            ENDED: ended: FINISHED with final status SUCCEEDED; nothing more is allocated to it
        "#]],
    );
}

#[test]
fn a_waiting_app_names_each_limit_with_its_count_and_place_in_line() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 8192, 8);
    let first = w.submit("alice", "root.a", None);
    let bob = w.submit("bob", "root.a", None);
    let carol = w.submit("carol", "root.a", None);
    let ex = w.explain(carol);
    assert_eq!(ex.outlook, Outlook::HeldBack);
    assert_eq!(
        ex.reasons[0].kind,
        ReasonKind::RunningAppLimit {
            limit: RunningAppLimit::Queue("root.a".parse().unwrap()),
            running: 1,
            max: 1,
            position: 2,
            waiting: 2,
        }
    );
    check(
        &w,
        bob,
        expect![[r#"
            HELD_BACK: waiting: queue root.a is at its maxRunningApps (1 of 1 running; 1 of 2 in line)
            HOLDS app [RUNNING_APP_LIMIT] queue root.a runs 1 applications, its maxRunningApps of 1: this one waits to start, 1 of 2 in line under root.a
                  to change: an application under root.a ending, or a higher maxRunningApps for root.a
        "#]],
    );
    // Alice runs two apps now (userMaxAppsDefault); her third meets both limits.
    w.submit("alice", "root.default", None);
    let third = w.submit("alice", "root.a", None);
    check(
        &w,
        third,
        expect![[r#"
            HELD_BACK: waiting: user alice is at userMaxAppsDefault (2 of 2 running; 1 of 1 in line)
            HOLDS app [RUNNING_APP_LIMIT] user alice runs 2 applications, the most userMaxAppsDefault allows (2): this one waits to start, 1 of 1 of alice's in line
                  to change: one of alice's running applications ending, or a higher userMaxAppsDefault (or a maxRunningApps for the user) in the allocation file
            HOLDS app [RUNNING_APP_LIMIT] queue root.a runs 1 applications, its maxRunningApps of 1: this one waits to start, 3 of 3 in line under root.a
                  to change: an application under root.a ending, or a higher maxRunningApps for root.a
        "#]],
    );
    assert_eq!(w.explain(first).outlook, Outlook::NothingAsked);
}

#[test]
fn an_am_over_the_am_share_is_held_back_with_the_numbers() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 8192, 8);
    let am = Some(Resource::new(2048, 1));
    let a1 = w.submit("u", "root.small", am);
    w.advance(1000);
    assert_eq!(w.heartbeat("n1"), [a1]);
    let a2 = w.submit("u", "root.small", am);
    w.advance(1000);
    // root.small's fair share is the whole cluster; a quarter of it is 2048 MB.
    check(
        &w,
        a2,
        expect![[r#"
            HELD_BACK: waiting: queue root.small is at its maxAMShare (AMs use memory 2048 of 2048 MB; this AM needs <memory:2048, vCores:1>)
            HOLDS app [AM_SHARE] queue root.small's application masters may use <memory:2048, vCores:2> (maxAMShare 0.25 of its fair share <memory:8192, vCores:0>): they use <memory:2048, vCores:1>, and this one needs <memory:2048, vCores:1> more
                  to change: an application master in root.small ending, a larger fair share for root.small (more nodes, or fewer active queues: shares are recomputed every update pass), or a higher maxAMShare (-1 turns the check off)
            note  AM container <memory:2048, vCores:1> [ROOM] n1:8041 (off-switch) has room for it now
        "#]],
    );
    assert!(w.heartbeat("n1").is_empty(), "the scheduler agrees");
    // The first app's AM has a container but has not registered.
    check(
        &w,
        a1,
        expect![[r#"
            AWAITING_AM: waiting for its application master to register
            HOLDS app [AM_NOT_REGISTERED] its application master runs on n1:8041 but has not registered; only a registered application master asks for containers
                  to change: the application master registering; one that never does fails its attempt after the AM liveness expiry
        "#]],
    );
}

#[test]
fn the_queue_whose_max_resources_stops_a_container_is_named() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 8192, 8);
    let app = w.submit("u", "root.p.x", None);
    w.ask(app, 1, &[ANY], 5, 1024, true);
    w.heartbeat("n1");
    w.heartbeat("n1");
    w.heartbeat("n1");
    w.heartbeat("n1");
    check(
        &w,
        app,
        expect![[r#"
            HELD_BACK: waiting (ask at priority 1 for 1 × <memory:1024, vCores:1>): queue root.p is at its maxResources (memory 4096 of 4096 MB)
            HOLDS ask at priority 1 for 1 × <memory:1024, vCores:1> [QUEUE_MAX_RESOURCES] queue root.p would go over its maxResources <memory:4096, vCores:8>: it uses <memory:4096, vCores:4>, and a container needs <memory:1024, vCores:1> more
                  to change: containers under root.p ending, or a higher maxResources for root.p
        "#]],
    );
}

#[test]
fn a_container_no_node_can_hold_names_the_largest_node() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 4096, 4);
    w.node("n2", "/r1", 6144, 2);
    let app = w.submit("u", "root.default", None);
    w.ask(app, 1, &[ANY], 1, 7168, true);
    let ex = w.explain(app);
    assert_eq!(
        ex.asks[0].reasons[0].kind,
        ReasonKind::NeverFits {
            asked: Resource::new(7168, 1),
            largest: Some((id("n2"), Resource::new(6144, 2))),
        }
    );
    assert_eq!(
        ex.summary,
        "waiting (ask at priority 1 for 1 × <memory:7168, vCores:1>): no node can ever hold a \
         container of <memory:7168, vCores:1> (the largest, n2:8041, offers <memory:6144, vCores:2>)"
    );
}

#[test]
fn strict_locality_names_each_location_and_how_it_stands() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 2048, 2);
    w.node("n2", "/r1", 8192, 8);
    let filler = w.submit("u", "root.default", None);
    w.ask(filler, 1, &["n1", "/r1"], 2, 1024, true);
    w.ask(filler, 1, &[ANY], 2, 1024, true);
    w.heartbeat("n1");
    w.heartbeat("n1");
    let app = w.submit("v", "root.default", None);
    w.ask(app, 1, &["n1", "ghost"], 1, 1024, true);
    w.ask(app, 1, &["/r1"], 1, 1024, false);
    w.ask(app, 1, &[ANY], 1, 1024, false);
    check(
        &w,
        app,
        expect![[r#"
            HELD_BACK: waiting (ask at priority 1 for 1 × <memory:1024, vCores:1>): strict locality keeps it on /r1 (full), ghost (no such node), n1 (full)
            HOLDS ask at priority 1 for 1 × <memory:1024, vCores:1> [STRICT_LOCALITY] relaxLocality=false keeps it on /r1 (full), ghost (no such node), n1 (full)
                  to change: room on a location it names, or an ask that lets locality relax (relaxLocality=true)
            HOLDS ask at priority 1 for 1 × <memory:1024, vCores:1> [NO_ROOM] no node it may use has room for it now (free in the cluster: <memory:8192, vCores:8>); it uses <memory:0, vCores:0>, and its fair share as of the last update pass is <memory:0, vCores:0>: at or above it, applications below theirs come first
                  to change: other applications' containers ending once those below their fair shares are served, more nodes, or a larger weight for its queue
        "#]],
    );
    assert!(
        w.heartbeat("n2").is_empty(),
        "n2 is in /r1 but not named, and /r1 is strict"
    );
}

#[test]
fn delay_scheduling_shows_the_level_and_what_raises_it() {
    let mut w = World::new(
        &[
            ("locality.threshold.node", "0.5"),
            ("locality.threshold.rack", "0.5"),
            ("locality-delay-node-ms", "5000"),
            ("locality-delay-rack-ms", "5000"),
        ],
        QUEUES,
    );
    for (n, rack) in [("n1", "/r1"), ("n2", "/r2"), ("n3", "/r2"), ("n4", "/r2")] {
        w.node(n, rack, 8192, 8);
    }
    // Fill n1 so that only nodes far from it have room.
    let other = w.submit("v", "root.default", None);
    w.ask(other, 1, &["n1", "/r1", ANY], 8, 1024, true);
    for _ in 0..8 {
        w.heartbeat("n1");
    }
    let app = w.submit("u", "root.default", None);
    w.ask(app, 1, &["n1", "/r1", ANY], 1, 1024, true);
    check(
        &w,
        app,
        expect![[r#"
            HELD_BACK: waiting (ask at priority 1 for 1 × <memory:1024, vCores:1>): delay scheduling holds it for a node-local node
            HOLDS ask at priority 1 for 1 × <memory:1024, vCores:1> [LOCALITY_DELAY] delay scheduling: it has not been offered a node yet, and starts at node-local; n2:8041, n3:8041, n4:8041 have room but are not local enough; it relaxes to rack-local after more than 2 offers passed over (0 so far) or after waiting more than 5s (0s so far)
                  to change: room on a more local node, or more offers or time passing; lower locality.threshold or locality-delay settings shorten the wait
        "#]],
    );
    assert!(w.heartbeat("n2").is_empty());
    assert!(w.heartbeat("n3").is_empty());
    // Two offers passed over; the third relaxes it (off-switch, as no rack
    // in /r2 is asked for, waits for the rack level to relax too).
    let ex = w.explain(app);
    let ReasonKind::LocalityDelay { next, .. } = ex.asks[0].reasons[0].kind else {
        panic!("{ex:?}");
    };
    assert_eq!(next, Locality::RackLocal);
    w.advance(6000);
    check(
        &w,
        app,
        expect![[r#"
            HELD_BACK: waiting (ask at priority 1 for 1 × <memory:1024, vCores:1>): delay scheduling holds it for a node-local node
            HOLDS ask at priority 1 for 1 × <memory:1024, vCores:1> [LOCALITY_DELAY] delay scheduling allows it only node-local placements for now; n2:8041, n3:8041, n4:8041 have room but are not local enough; it relaxes to rack-local at its next offer
                  to change: room on a more local node, or more offers or time passing; lower locality.threshold or locality-delay settings shorten the wait
        "#]],
    );
}

#[test]
fn below_its_fair_share_on_a_full_cluster_it_waits_first_in_line_and_may_reserve() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 8192, 8);
    let hog = w.submit("u", "root.default", None);
    w.ask(hog, 1, &[ANY], 7, 1024, true);
    while !w.heartbeat("n1").is_empty() {}
    let app = w.submit("v", "root.default", None);
    w.ask(app, 1, &[ANY], 2, 2048, true);
    w.advance(1000);
    check(
        &w,
        app,
        expect![[r#"
            HELD_BACK: waiting (ask at priority 1 for 2 × <memory:2048, vCores:1>): no node it may use has room, and it is below its fair share
            HOLDS ask at priority 1 for 2 × <memory:2048, vCores:1> [NO_ROOM] no node it may use has room for it now (free in the cluster: <memory:1024, vCores:1>); it uses <memory:0, vCores:0>, and its fair share as of the last update pass is <memory:4096, vCores:0>: below it, it is among the first served as containers end, and may reserve a node that lacks room for it
                  to change: containers ending anywhere it may run: it is below its fair share, so it is among the first served; with preemption on, containers of applications over their shares may be taken back for it
        "#]],
    );
    let ex = w.explain(hog);
    assert_eq!(ex.outlook, Outlook::NothingAsked);
    // The hog asks for more: it is above its fair share, so others come first.
    w.ask(hog, 2, &[ANY], 1, 2048, true);
    let ex = w.explain(hog);
    assert!(matches!(
        ex.asks[0].reasons[0].kind,
        ReasonKind::NoRoom {
            below_fair_share: false,
            may_reserve: false,
            ..
        }
    ));
    // The starved app reserves the node, and the explanation shows it.
    assert!(w.heartbeat("n1").is_empty());
    let ex = w.explain(app);
    assert_eq!(
        ex.reasons[0].kind,
        ReasonKind::Reservation {
            node: id("n1"),
            priority: Priority(1),
            resource: Resource::new(2048, 1),
            fits_now: false,
            valid: true,
        }
    );
}

#[test]
fn an_ask_waits_behind_a_higher_priority_one_that_does_not_fit() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 4096, 4);
    let filler = w.submit("u", "root.default", None);
    w.ask(filler, 1, &[ANY], 2, 1024, true);
    w.heartbeat("n1");
    w.heartbeat("n1");
    let app = w.submit("v", "root.default", None);
    w.ask(app, 1, &[ANY], 1, 3072, true);
    w.ask(app, 2, &[ANY], 1, 1024, true);
    w.advance(1000);
    check(
        &w,
        app,
        expect![[r#"
            HELD_BACK: waiting (ask at priority 1 for 1 × <memory:3072, vCores:1>): no node it may use has room, and it is below its fair share
            HOLDS ask at priority 1 for 1 × <memory:3072, vCores:1> [NO_ROOM] no node it may use has room for it now (free in the cluster: <memory:2048, vCores:2>); it uses <memory:0, vCores:0>, and its fair share as of the last update pass is <memory:2048, vCores:0>: below it, it is among the first served as containers end, and may reserve a node that lacks room for it
                  to change: containers ending anywhere it may run: it is below its fair share, so it is among the first served; with preemption on, containers of applications over their shares may be taken back for it
            HOLDS ask at priority 2 for 1 × <memory:1024, vCores:1> [HIGHER_PRIORITY_FIRST] n1:8041 has room for it, but its ask at priority 1 comes first there (tried first, or holding the node reserved), and this one waits
                  to change: that ask being served or cancelled
        "#]],
    );
    assert!(
        w.heartbeat("n1").is_empty(),
        "the 3 GB ask applies on n1 and ends the search (reserving the node)"
    );
}

#[test]
fn room_only_on_blacklisted_nodes_holds_an_ask_back() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 1024, 1);
    w.node("n2", "/r2", 8192, 8);
    let app = w.submit("u", "root.default", None);
    w.allocate(app, vec![], &["n2"]);
    w.ask(app, 1, &[ANY], 1, 2048, true);
    check(
        &w,
        app,
        expect![[r#"
            HELD_BACK: waiting (ask at priority 1 for 1 × <memory:2048, vCores:1>): only nodes it blacklisted have room for it: n2:8041
            note  app [BLACKLIST] it blacklisted n2, so it is not offered 1 node (n2:8041)
            HOLDS ask at priority 1 for 1 × <memory:2048, vCores:1> [ROOM_ONLY_ON_BLACKLISTED] only nodes it blacklisted have room for it: n2:8041
                  to change: room elsewhere, or the application master taking those nodes off its blacklist
        "#]],
    );
}

#[test]
fn nothing_holds_back_an_app_a_node_has_room_for() {
    let mut w = World::new(&[], QUEUES);
    w.node("n1", "/r1", 8192, 8);
    w.node("n2", "/r1", 8192, 8);
    let sick = w.rm.handle(
        w.now,
        Input::NodeHeartbeat(NodeHeartbeat {
            node: id("n2"),
            statuses: vec![],
            unhealthy: Some("disk full".to_owned()),
        }),
    );
    assert!(matches!(sick.reply, Reply::NodeHeartbeat(Ok(_))));
    let app = w.submit("u", "root.default", Some(Resource::new(1024, 1)));
    check(
        &w,
        app,
        expect![[r#"
            SERVABLE: not held back: n1:8041 (off-switch) can take its AM container <memory:1024, vCores:1> now, at the node's next heartbeat unless applications ahead of it in policy order take the room first
            note  app [NODES_OUT_OF_SERVICE] 1 node takes no containers: n2:8041 (unhealthy)
            note  AM container <memory:1024, vCores:1> [ROOM] n1:8041 (off-switch) has room for it now
        "#]],
    );
}

/// The dry run and the scheduler agree: at every step of a cluster with
/// delay scheduling, strict and relaxed asks at two priorities, a node
/// heartbeat gives the app a container exactly when the explanation just
/// before said that node had room for one of its asks.
#[test]
fn the_explanation_foresees_each_heartbeat() {
    let mut w = World::new(
        &[
            ("locality.threshold.node", "0.4"),
            ("locality.threshold.rack", "0.4"),
        ],
        QUEUES,
    );
    let nodes = [("n1", "/r1"), ("n2", "/r1"), ("n3", "/r2"), ("n4", "/r2")];
    for (n, rack) in nodes {
        w.node(n, rack, 4096, 4);
    }
    let app = w.submit("u", "root.default", None);
    w.ask(app, 1, &["n1", "/r1", ANY], 6, 1024, true);
    w.ask(app, 2, &["n3"], 3, 2048, true);
    w.ask(app, 2, &["/r2"], 3, 2048, false);
    w.ask(app, 2, &[ANY], 3, 2048, false);
    let mut served = 0;
    for step in 0..40 {
        let (node, _) = nodes[(step * 3) % nodes.len()];
        let ex = w.explain(app);
        let predicted = nodes_with_room(&ex).contains(&id(node));
        let got = w.heartbeat(node).contains(&app);
        assert_eq!(
            predicted,
            got,
            "step {step}, {node}: the explanation said\n{}",
            render(&ex)
        );
        served += usize::from(got);
    }
    assert!(served >= 4, "the walk served only {served}");
}
