//! Property tests of the core as a whole: random streams of inputs (nodes
//! joining, heartbeating with completions, turning unhealthy and back,
//! resized, leaving, being lost, drained and recommissioned; apps
//! submitting (some with a lifetime), asking, releasing, blacklisting,
//! finishing, being killed, moved, reprioritised and given a new lifetime
//! expiry; config and settings reloads; time passing),
//! some of them hostile (release lists naming a container twice, another
//! app's container or the AM's own), keep the books consistent after every
//! input, never panic, never place a container on a draining or unhealthy
//! node, never let an app outlive its lifetime nor kill it for its lifetime
//! early, and replay to the same outputs. Two focused properties follow: FIFO
//! order within a leaf, and DRF balance between sibling queues.
//!
//! The scenario files (`tests/scenarios/*.txt`) show exact behaviour; this
//! file only checks what must hold whatever happens.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use proptest::prelude::*;
use weft_core::{
    ANY, AllocateRequest, Ask, ContainerState, ContainerStatus, CoreSettings, Drain, Event,
    FinalStatus, Input, NodeHeartbeat, NodeRegistration, Output, RecoveredContainer, Reply,
    ResourceManager, Submission,
};
use weft_model::{
    AppId, AppPriority, ContainerId, Duration, NodeId, Priority, QueuePath, Resource, Time,
};
use weft_queue_tree::AllocConfig;
use weft_queue_tree::alloc_file::parse_alloc_file;
use weft_test_support::scenario::settings_from;

// ----- the random stream ------------------------------------------------------

/// One input to generate, in terms of small indexes the harness resolves.
#[derive(Clone, Debug)]
enum Op {
    /// Register node `node` (or re-register it, still running `keep` of its containers).
    Node { node: u8, size: u8, keep: u8 },
    /// Node heartbeat; `done` picks containers it reports complete, `exit` their status.
    /// The node reports itself unhealthy when `sick` is 0.
    Heartbeat {
        node: u8,
        done: u8,
        exit: u8,
        sick: u8,
    },
    /// The node leaves.
    Unregister { node: u8, decommissioned: bool },
    /// An operator starts (or changes) the node's graceful decommission.
    Drain { node: u8, timeout: u8, apps: bool },
    /// An operator takes the node back into service.
    Recommission { node: u8 },
    /// An operator resizes the node (with an over-commit timeout unless 0).
    Resize { node: u8, size: u8, timeout: u8 },
    /// A new app, with a lifetime unless `lifetime` is 0.
    Submit {
        queue: u8,
        user: u8,
        am: u8,
        prio: i8,
        lifetime: u8,
    },
    /// The app's AM registers.
    RegisterAm { app: u8 },
    /// An allocate call with one ask.
    Ask {
        app: u8,
        prio: u8,
        size: u8,
        count: u8,
        place: u8,
        node: u8,
    },
    /// An allocate call releasing one of the app's containers.
    Release { app: u8, pick: u8 },
    /// An allocate call changing the blacklist.
    Blacklist {
        app: u8,
        node: u8,
        rack: bool,
        remove: bool,
    },
    /// The AM finishes.
    Finish { app: u8, outcome: u8 },
    /// Someone kills the app.
    Kill { app: u8 },
    /// Move the app.
    Move { app: u8, queue: u8 },
    /// Change the app's priority.
    Priority { app: u8, prio: i8 },
    /// Give the app a new lifetime expiry, `ahead` steps from now (0: now,
    /// which is refused).
    Lifetime { app: u8, ahead: u8 },
    /// A new allocation file.
    Reload { config: u8 },
    /// New site settings.
    Settings { settings: u8 },
    /// Time passes, then a tick.
    Advance { ms: u16 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..4u8, 0..3u8, any::<u8>()).prop_map(|(node, size, keep)| Op::Node { node, size, keep }),
        12 => (any::<u8>(), any::<u8>(), 0..4u8, 0..8u8).prop_map(|(node, done, exit, sick)| Op::Heartbeat { node, done, exit, sick }),
        1 => (0..4u8, any::<bool>()).prop_map(|(node, decommissioned)| Op::Unregister { node, decommissioned }),
        1 => (0..4u8, 0..4u8, any::<bool>()).prop_map(|(node, timeout, apps)| Op::Drain { node, timeout, apps }),
        1 => (0..4u8).prop_map(|node| Op::Recommission { node }),
        1 => (0..4u8, 0..4u8, 0..3u8).prop_map(|(node, size, timeout)| Op::Resize { node, size, timeout }),
        4 => (0..8u8, 0..3u8, 0..4u8, -1..3i8, 0..4u8)
            .prop_map(|(queue, user, am, prio, lifetime)| Op::Submit { queue, user, am, prio, lifetime }),
        1 => any::<u8>().prop_map(|app| Op::RegisterAm { app }),
        6 => (any::<u8>(), 0..3u8, 0..6u8, 0..6u8, 0..4u8, 0..4u8)
            .prop_map(|(app, prio, size, count, place, node)| Op::Ask { app, prio, size, count, place, node }),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(app, pick)| Op::Release { app, pick }),
        1 => (any::<u8>(), 0..4u8, any::<bool>(), any::<bool>())
            .prop_map(|(app, node, rack, remove)| Op::Blacklist { app, node, rack, remove }),
        1 => (any::<u8>(), 0..3u8).prop_map(|(app, outcome)| Op::Finish { app, outcome }),
        1 => any::<u8>().prop_map(|app| Op::Kill { app }),
        1 => (any::<u8>(), 0..8u8).prop_map(|(app, queue)| Op::Move { app, queue }),
        1 => (any::<u8>(), -1..3i8).prop_map(|(app, prio)| Op::Priority { app, prio }),
        1 => (any::<u8>(), 0..3u8).prop_map(|(app, ahead)| Op::Lifetime { app, ahead }),
        1 => (0..3u8).prop_map(|config| Op::Reload { config }),
        1 => (0..3u8).prop_map(|settings| Op::Settings { settings }),
        3 => prop_oneof![4 => Just(0u16), 4 => Just(200), 4 => Just(1000), 2 => Just(6000), 1 => Just(25000)]
            .prop_map(|ms| Op::Advance { ms }),
    ]
}

const CONFIGS: [&str; 3] = [
    "<allocations/>",
    r#"<allocations>
  <userMaxAppsDefault>3</userMaxAppsDefault>
  <queue name="a"><weight>2</weight><maxRunningApps>2</maxRunningApps><maxResources>12288mb,12vcores</maxResources></queue>
  <queue name="b"><minResources>4096mb,4vcores</minResources><schedulingPolicy>fifo</schedulingPolicy></queue>
  <queue name="p">
    <maxResources>50%</maxResources>
    <queue name="x"><maxAMShare>0.2</maxAMShare></queue>
    <queue name="y"><maxContainerAllocation>2048mb,2vcores</maxContainerAllocation></queue>
  </queue>
</allocations>"#,
    r#"<allocations>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <queue name="a"><maxRunningApps>1</maxRunningApps><minResources>2048mb,2vcores</minResources></queue>
  <queue name="b"><weight>3</weight></queue>
  <queue name="p">
    <maxResources>8192mb,8vcores</maxResources>
    <maxRunningApps>2</maxRunningApps>
    <queue name="x"/>
    <queue name="y"><maxAMShare>-1</maxAMShare></queue>
  </queue>
  <user name="bob"><maxRunningApps>1</maxRunningApps></user>
</allocations>"#,
];

const QUEUES: [&str; 8] = [
    "root.a",
    "root.b",
    "root.p.x",
    "root.p.y",
    "root.default",
    "root.dyn",
    "root.p",
    "default",
];

fn settings(idx: u8) -> CoreSettings {
    // Short expiries, so that random streams lose nodes and silent AMs.
    let mut props = vec![
        ("yarn.nm.liveness-monitor.expiry-interval-ms", "20000"),
        ("yarn.am.liveness-monitor.expiry-interval-ms", "25000"),
    ];
    match idx {
        1 => props.extend([
            ("yarn.cluster.max-application-priority", "1"),
            ("yarn.scheduler.fair.assignmultiple", "true"),
            ("yarn.scheduler.fair.locality.threshold.node", "0.5"),
            ("yarn.scheduler.fair.locality.threshold.rack", "0.5"),
        ]),
        2 => props.extend([
            ("yarn.cluster.max-application-priority", "10"),
            ("yarn.scheduler.fair.assignmultiple", "true"),
            ("yarn.scheduler.fair.dynamic.max.assign", "false"),
            ("yarn.scheduler.fair.max.assign", "3"),
            ("yarn.scheduler.fair.locality-delay-node-ms", "1000"),
            ("yarn.scheduler.fair.locality-delay-rack-ms", "1000"),
            ("yarn.scheduler.fair.reservable-nodes", "0.5"),
            ("yarn.scheduler.minimum-allocation-mb", "512"),
            ("yarn.resource-types.memory-mb.increment-allocation", "512"),
        ]),
        _ => {}
    }
    let props: Vec<(String, String)> = props
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    settings_from(&props).expect("valid settings")
}

fn config(idx: u8) -> AllocConfig {
    parse_alloc_file(CONFIGS[usize::from(idx)])
        .expect("valid allocation file")
        .config
}

// ----- the harness ------------------------------------------------------------

/// Drives a ResourceManager with generated ops, playing the node managers:
/// each node runs the containers its heartbeat replies gave it until it
/// reports them done or is told to stop them.
struct Harness {
    rm: ResourceManager,
    now: Time,
    apps: Vec<AppId>,
    running: BTreeMap<u8, Vec<(ContainerId, Resource)>>,
    /// Every output, rendered, for the determinism check.
    log: String,
}

impl Harness {
    fn new() -> Harness {
        Harness {
            rm: ResourceManager::new(config(0), settings(0), Time::ZERO),
            now: Time::ZERO,
            apps: Vec::new(),
            running: BTreeMap::new(),
            log: String::new(),
        }
    }

    fn node_id(node: u8) -> NodeId {
        NodeId::new(&format!("n{node}"), 8041).expect("valid node id")
    }

    /// A node to heartbeat: mostly a registered one, sometimes any (so that
    /// heartbeats from unknown nodes are exercised too).
    fn pick_node(&self, pick: u8) -> u8 {
        let running: Vec<u8> = self
            .rm
            .node_reports()
            .iter()
            .filter(|n| {
                matches!(
                    n.state,
                    weft_core::NodeState::Running
                        | weft_core::NodeState::Decommissioning
                        | weft_core::NodeState::Unhealthy
                )
            })
            .filter_map(|n| n.id.host().strip_prefix('n')?.parse().ok())
            .collect();
        if pick.is_multiple_of(8) || running.is_empty() {
            return pick % 4;
        }
        running[usize::from(pick) % running.len()]
    }

    fn rack(node: u8) -> String {
        format!("/r{}", node % 2)
    }

    /// An app whose AM may call allocate: mostly a registered one.
    fn am(&self, pick: u8) -> Option<AppId> {
        let registered: Vec<AppId> = self
            .apps
            .iter()
            .copied()
            .filter(|a| {
                self.rm
                    .app_report(*a)
                    .is_some_and(|r| r.record.state == weft_core::AppState::Running)
            })
            .collect();
        if pick.is_multiple_of(8) || registered.is_empty() {
            return self.app(pick);
        }
        Some(registered[usize::from(pick) % registered.len()])
    }

    /// An app to act on: mostly one still running, sometimes any (so that
    /// inputs for ended apps are exercised too).
    fn app(&self, pick: u8) -> Option<AppId> {
        if self.apps.is_empty() {
            return None;
        }
        let live: Vec<AppId> = self
            .apps
            .iter()
            .copied()
            .filter(|a| {
                self.rm
                    .app_report(*a)
                    .is_some_and(|r| !r.record.state.is_final())
            })
            .collect();
        if pick.is_multiple_of(8) || live.is_empty() {
            return Some(self.apps[usize::from(pick) % self.apps.len()]);
        }
        Some(live[usize::from(pick) % live.len()])
    }

    /// Handles one input and checks everything that must hold after it.
    fn handle(&mut self, input: Input) -> Result<Output, TestCaseError> {
        let out = self.rm.handle(self.now, input);
        let _ = writeln!(self.log, "{out:?}");
        if let Err(e) = self.rm.check_invariants() {
            return Err(TestCaseError::fail(e.to_string()));
        }
        check_no_allocation_over_max(&self.rm, &out)?;
        check_lifetimes(&self.rm, self.now, &out)?;
        Ok(out)
    }

    /// The app's report shows the priority asked for, lowered to the cap
    /// in force (`yarn.cluster.max-application-priority`) if above it.
    fn check_priority(&self, app: AppId, asked: i8) -> Result<(), TestCaseError> {
        let Some(report) = self.rm.app_report(app) else {
            return Ok(());
        };
        let cap = self.rm.settings().scheduler.max_app_priority.0;
        let want = i32::from(asked).min(cap);
        if report.record.priority.0 != want {
            return Err(TestCaseError::fail(format!(
                "{app} asked for priority {asked} under a cap of {cap} and has {}",
                report.record.priority
            )));
        }
        Ok(())
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match *op {
            Op::Node { node, size, keep } => {
                let capability = match size {
                    0 => Resource::new(4096, 4),
                    1 => Resource::new(8192, 8),
                    _ => Resource::new(16384, 16),
                };
                let running = self.running.entry(node).or_default();
                let mut kept = Vec::new();
                for (i, (c, r)) in running.iter().enumerate() {
                    if keep & (1 << (i % 8)) != 0 {
                        kept.push((*c, *r));
                    }
                }
                *running = kept.clone();
                let running = kept
                    .into_iter()
                    .map(|(container, resource)| RecoveredContainer {
                        container,
                        resource,
                        priority: Priority(1),
                    })
                    .collect();
                self.handle(Input::NodeRegistered(NodeRegistration {
                    node: Self::node_id(node),
                    rack: Self::rack(node),
                    capability,
                    http_address: format!("n{node}:8042"),
                    running,
                }))?;
            }
            Op::Heartbeat {
                node,
                done,
                exit,
                sick,
            } => {
                let node = self.pick_node(node);
                let running = self.running.entry(node).or_default();
                let mut statuses = Vec::new();
                let mut still = Vec::new();
                for (i, (c, r)) in running.iter().enumerate() {
                    let state = if done & (1 << (i % 8)) != 0 {
                        ContainerState::Complete {
                            exit_status: match exit {
                                0 | 1 => 0,
                                2 => 1,
                                _ => -100,
                            },
                        }
                    } else {
                        still.push((*c, *r));
                        ContainerState::Running
                    };
                    statuses.push(ContainerStatus {
                        container: *c,
                        state,
                    });
                }
                *running = still;
                let out = self.handle(Input::NodeHeartbeat(NodeHeartbeat {
                    node: Self::node_id(node),
                    statuses,
                    unhealthy: (sick == 0).then(|| "disk full".to_owned()),
                }))?;
                if let Reply::NodeHeartbeat(Ok(reply)) = out.reply {
                    let running = self.running.entry(node).or_default();
                    running.retain(|(c, _)| !reply.containers_to_stop.iter().any(|(s, _)| s == c));
                    running.extend(reply.allocated.iter().map(|a| (a.container, a.resource)));
                    // A launched AM registers, as a real one would.
                    for a in reply.allocated.iter().filter(|a| a.is_am) {
                        self.handle(Input::AmRegistered {
                            app: a.container.app(),
                        })?;
                    }
                }
            }
            Op::Unregister {
                node,
                decommissioned,
            } => {
                self.handle(Input::NodeUnregistered {
                    node: Self::node_id(node),
                    decommissioned,
                })?;
                self.running.remove(&node);
            }
            Op::Drain {
                node,
                timeout,
                apps,
            } => {
                let timeout = match timeout {
                    0 => None,
                    1 => Some(Duration::ZERO),
                    2 => Some(Duration::from_millis(3000)),
                    _ => Some(Duration::from_millis(60_000)),
                };
                self.handle(Input::NodeDecommissioning {
                    node: Self::node_id(node),
                    drain: Drain {
                        timeout,
                        wait_for_apps: apps,
                        also_wait_for: Vec::new(),
                    },
                })?;
            }
            Op::Resize {
                node,
                size,
                timeout,
            } => {
                let capability = match size {
                    0 => Resource::new(1024, 1),
                    1 => Resource::new(2048, 8),
                    2 => Resource::new(8192, 2),
                    _ => Resource::new(16384, 16),
                };
                let overcommit_timeout = match timeout {
                    0 => None,
                    1 => Some(Duration::ZERO),
                    _ => Some(Duration::from_millis(2000)),
                };
                self.handle(Input::NodeResized {
                    node: Self::node_id(node),
                    capability,
                    overcommit_timeout,
                })?;
            }
            Op::Recommission { node } => {
                self.handle(Input::NodeRecommissioned {
                    node: Self::node_id(node),
                })?;
            }
            Op::Submit {
                queue,
                user,
                am,
                prio,
                lifetime,
            } => {
                let out = self.handle(Input::NewApplication)?;
                let Reply::NewApplication(new) = out.reply else {
                    return Err(TestCaseError::fail("no new application reply"));
                };
                self.apps.push(new.app);
                let out = self.handle(Input::AppSubmitted(Submission {
                    app: new.app,
                    user: ["alice", "bob", "carol"][usize::from(user)].to_owned(),
                    groups: vec!["staff".to_owned()],
                    queue: Some(QUEUES[usize::from(queue)].to_owned()),
                    priority: AppPriority(i32::from(prio)),
                    am_resource: match am {
                        0 => None,
                        1 => Some(Resource::new(1024, 1)),
                        2 => Some(Resource::new(2048, 1)),
                        _ => Some(Resource::new(3072, 2)),
                    },
                    name: "app".to_owned(),
                    app_type: "YARN".to_owned(),
                    tags: Vec::new(),
                    max_attempts: None,
                    lifetime: match lifetime {
                        0 => None,
                        1 => Some(Duration::from_millis(500)),
                        2 => Some(Duration::from_millis(5_000)),
                        _ => Some(Duration::from_millis(30_000)),
                    },
                }))?;
                self.check_priority(new.app, prio)?;
                // An unmanaged AM runs already and registers at once.
                if am == 0 && matches!(out.reply, Reply::Submitted(Ok(_))) {
                    self.handle(Input::AmRegistered { app: new.app })?;
                }
            }
            Op::RegisterAm { app } => {
                if let Some(app) = self.app(app) {
                    self.handle(Input::AmRegistered { app })?;
                }
            }
            Op::Ask {
                app,
                prio,
                size,
                count,
                place,
                node,
            } => {
                let Some(app) = self.am(app) else {
                    return Ok(());
                };
                let capability = match size {
                    0 => Resource::new(1024, 1),
                    1 => Resource::new(2048, 1),
                    2 => Resource::new(1500, 2),
                    3 => Resource::new(4096, 2),
                    4 => Resource::new(8192, 4),
                    _ => Resource::new(512, 0),
                };
                let ask = |name: String, relax: bool| Ask {
                    priority: Priority(i32::from(prio) + 1),
                    resource_name: name,
                    capability,
                    num_containers: u32::from(count),
                    relax_locality: relax,
                };
                let host = format!("n{node}");
                let rack = Self::rack(node);
                let asks = match place {
                    0 => vec![ask(ANY.to_owned(), true)],
                    1 => vec![ask(host, true), ask(rack, true), ask(ANY.to_owned(), true)],
                    2 => vec![ask(rack, true), ask(ANY.to_owned(), false)],
                    _ => vec![
                        ask(host, true),
                        ask(rack, false),
                        ask(ANY.to_owned(), false),
                    ],
                };
                self.allocate(app, asks, Vec::new(), Vec::new(), Vec::new())?;
            }
            Op::Release { app, pick } => {
                let Some(app) = self.am(app) else {
                    return Ok(());
                };
                let live = self.rm.app_containers(app);
                if live.is_empty() {
                    return Ok(());
                }
                let (c, _, _) = live[usize::from(pick) % live.len()].clone();
                // Hostile lists too (the high bits): the same container
                // twice, another app's container, and the AM's own container
                // first, which ends the attempt and its other containers.
                let mut releases = vec![c];
                if pick & 0x20 != 0 {
                    releases.push(c);
                }
                if pick & 0x40 != 0 {
                    let others = self.apps.iter().filter(|a| **a != app);
                    if let Some(other) = others.flat_map(|a| self.rm.app_containers(*a)).next() {
                        releases.push(other.0);
                    }
                }
                if pick & 0x80 != 0
                    && let Some(report) = self.rm.app_report(app)
                {
                    releases.insert(0, ContainerId::new(report.record.attempt, 1));
                }
                self.allocate(app, Vec::new(), releases, Vec::new(), Vec::new())?;
            }
            Op::Blacklist {
                app,
                node,
                rack,
                remove,
            } => {
                let Some(app) = self.am(app) else {
                    return Ok(());
                };
                let name = if rack {
                    Self::rack(node)
                } else {
                    format!("n{node}")
                };
                let (add, rem) = if remove {
                    (Vec::new(), vec![name])
                } else {
                    (vec![name], Vec::new())
                };
                self.allocate(app, Vec::new(), Vec::new(), add, rem)?;
            }
            Op::Finish { app, outcome } => {
                if let Some(app) = self.app(app) {
                    self.handle(Input::AttemptFinished {
                        app,
                        outcome: [
                            FinalStatus::Succeeded,
                            FinalStatus::Failed,
                            FinalStatus::Killed,
                        ][usize::from(outcome)],
                        diagnostics: String::new(),
                    })?;
                }
            }
            Op::Kill { app } => {
                if let Some(app) = self.app(app) {
                    self.handle(Input::KillApp {
                        app,
                        reason: "killed".to_owned(),
                    })?;
                }
            }
            Op::Move { app, queue } => {
                if let Some(app) = self.app(app) {
                    let queue =
                        QueuePath::parse(QUEUES[usize::from(queue)]).expect("valid queue path");
                    self.handle(Input::MoveApp { app, queue })?;
                }
            }
            Op::Priority { app, prio } => {
                if let Some(app) = self.app(app) {
                    let out = self.handle(Input::SetAppPriority {
                        app,
                        priority: AppPriority(i32::from(prio)),
                    })?;
                    if matches!(out.reply, Reply::Done(Ok(()))) {
                        self.check_priority(app, prio)?;
                    }
                }
            }
            Op::Lifetime { app, ahead } => {
                if let Some(app) = self.app(app) {
                    let expiry = self.now
                        + match ahead {
                            0 => Duration::ZERO,
                            1 => Duration::from_millis(1_000),
                            _ => Duration::from_millis(20_000),
                        };
                    self.handle(Input::SetAppLifetime { app, expiry })?;
                }
            }
            Op::Reload { config: idx } => {
                self.handle(Input::AllocConfigReplaced(Box::new(config(idx))))?;
            }
            Op::Settings { settings: idx } => {
                self.handle(Input::SettingsReplaced(Box::new(settings(idx))))?;
            }
            Op::Advance { ms } => {
                self.now += weft_model::Duration::from_millis(u64::from(ms));
                self.handle(Input::Tick)?;
            }
        }
        Ok(())
    }

    fn allocate(
        &mut self,
        app: AppId,
        asks: Vec<Ask>,
        releases: Vec<ContainerId>,
        blacklist_additions: Vec<String>,
        blacklist_removals: Vec<String>,
    ) -> Result<(), TestCaseError> {
        self.handle(Input::Allocate(AllocateRequest {
            app,
            asks,
            releases,
            blacklist_additions,
            blacklist_removals,
            progress: 0.5,
        }))?;
        Ok(())
    }
}

/// A queue may end up over its max share because the max went down (a
/// reload, a smaller cluster under a percentage max) or containers came back
/// with a node, but never because of an allocation: each allocation is
/// checked against the usage of the moment, and nothing else raises usage
/// while a node heartbeats. So every queue above an allocated container fits
/// its max share once the input is handled.
fn check_no_allocation_over_max(rm: &ResourceManager, out: &Output) -> Result<(), TestCaseError> {
    let queues: BTreeMap<QueuePath, (Resource, Resource)> = rm
        .queue_reports()
        .into_iter()
        .map(|q| (q.tree.path.clone(), (q.tree.usage, q.tree.max_share)))
        .collect();
    for event in &out.events {
        let Event::ContainerAllocated { queue, node, .. } = event else {
            continue;
        };
        let unusable = rm.node_reports().iter().any(|n| {
            n.id == *node
                && matches!(
                    n.state,
                    weft_core::NodeState::Decommissioning | weft_core::NodeState::Unhealthy
                )
        });
        prop_assert!(
            !unusable,
            "node {} is draining or unhealthy and got a container",
            node
        );
        for path in queue.self_and_ancestors() {
            if let Some((usage, max)) = queues.get(&path) {
                prop_assert!(
                    usage.fits_in(max),
                    "queue {} got a container and is over its max share: {} > {}",
                    path,
                    usage,
                    max
                );
            }
        }
    }
    Ok(())
}

/// No app outlives its lifetime (the core kills it before handling the
/// first input at or after its expiry), and none is killed for its
/// lifetime before its expiry.
fn check_lifetimes(rm: &ResourceManager, now: Time, out: &Output) -> Result<(), TestCaseError> {
    for r in rm.app_reports() {
        if let (false, Some(expiry)) = (r.record.state.is_final(), r.record.lifetime_expiry) {
            prop_assert!(
                expiry > now,
                "{} is {} at {} with a lifetime expiry of {}",
                r.record.id,
                r.record.state,
                now,
                expiry
            );
        }
    }
    for event in &out.events {
        if let Event::AppLifetimeExpired { app, expiry, .. } = event {
            prop_assert!(
                *expiry <= now,
                "{} killed at {} for an expiry of {}",
                app,
                now,
                expiry
            );
            let killed = rm
                .app_report(*app)
                .is_none_or(|r| r.record.state == weft_core::AppState::Killed);
            prop_assert!(killed, "{} expired but was not killed", app);
        }
    }
    Ok(())
}

fn run(ops: &[Op]) -> Result<String, TestCaseError> {
    let mut h = Harness::new();
    for op in ops {
        h.step(op)?;
    }
    Ok(h.log)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        // Failures become named scenarios (tests/scenarios), not seed files.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Any stream keeps the books consistent, never panics, never allocates
    /// into a queue past its max share, and replays to the same outputs.
    #[test]
    fn random_streams_keep_invariants_and_replay(ops in proptest::collection::vec(op(), 1..200)) {
        let first = run(&ops)?;
        let second = run(&ops)?;
        prop_assert_eq!(first, second, "the same inputs gave different outputs");
    }
}

// ----- FIFO: no overtaking --------------------------------------------------------

/// A FIFO leaf's app, as the FIFO test drives it.
#[derive(Clone, Debug)]
struct FifoApp {
    /// Ticks (of 1s) to wait before submitting it.
    delay: u8,
    priority: i8,
    /// Vcores of each container (memory is always 1024mb, under the
    /// reservation threshold, so no reservation holds a node for anyone).
    vcores: u8,
    count: u8,
}

#[derive(Clone, Debug)]
enum FifoOp {
    /// A heartbeat of a node, completing the containers `done` picks.
    Heartbeat { node: u8, done: u8 },
    /// An app asks for more.
    More { app: u8, count: u8 },
}

fn fifo_app() -> impl Strategy<Value = FifoApp> {
    (0..3u8, -1..2i8, 1..4u8, 1..6u8).prop_map(|(delay, priority, vcores, count)| FifoApp {
        delay,
        priority,
        vcores,
        count,
    })
}

fn fifo_op() -> impl Strategy<Value = FifoOp> {
    prop_oneof![
        4 => (0..3u8, any::<u8>()).prop_map(|(node, done)| FifoOp::Heartbeat { node, done }),
        1 => (any::<u8>(), 1..4u8).prop_map(|(app, count)| FifoOp::More { app, count }),
    ]
}

/// Runs a FIFO leaf and checks, at every allocation, that no app ahead of
/// the one served (higher priority, or same priority and earlier) had an
/// outstanding container that fit the node at that moment.
fn check_fifo(
    apps: &[FifoApp],
    node_vcores: &[u8],
    assign_multiple: bool,
    ops: &[FifoOp],
) -> Result<(), TestCaseError> {
    let config = parse_alloc_file(
        r#"<allocations><queue name="q"><schedulingPolicy>fifo</schedulingPolicy></queue></allocations>"#,
    )
    .expect("valid allocation file")
    .config;
    // The priorities drawn are all within the cap, so the order checked is
    // the one asked for.
    let mut props = vec![(
        "yarn.cluster.max-application-priority".to_owned(),
        "10".to_owned(),
    )];
    if assign_multiple {
        props.push((
            "yarn.scheduler.fair.assignmultiple".to_owned(),
            "true".to_owned(),
        ));
    }
    let mut rm = ResourceManager::new(config, settings_from(&props).expect("settings"), Time::ZERO);
    let mut now = Time::ZERO;
    for (i, vcores) in node_vcores.iter().enumerate() {
        rm.handle(
            now,
            Input::NodeRegistered(NodeRegistration {
                node: Harness::node_id(i as u8),
                rack: "/r".to_owned(),
                capability: Resource::new(8192, u64::from(*vcores)),
                http_address: String::new(),
                running: Vec::new(),
            }),
        );
    }
    // Submission order defines "earlier": (start time, then id).
    let mut ids = Vec::new();
    for app in apps {
        now += weft_model::Duration::from_millis(1000 * u64::from(app.delay));
        let Reply::NewApplication(new) = rm.handle(now, Input::NewApplication).reply else {
            return Err(TestCaseError::fail("no application id"));
        };
        rm.handle(
            now,
            Input::AppSubmitted(Submission {
                app: new.app,
                user: "u".to_owned(),
                groups: Vec::new(),
                queue: Some("root.q".to_owned()),
                priority: AppPriority(i32::from(app.priority)),
                am_resource: None,
                name: String::new(),
                app_type: String::new(),
                tags: Vec::new(),
                max_attempts: None,
                lifetime: None,
            }),
        );
        rm.handle(now, Input::AmRegistered { app: new.app });
        ids.push(new.app);
    }
    let size = |i: usize| Resource::new(1024, u64::from(apps[i].vcores));
    let mut outstanding: Vec<u32> = apps.iter().map(|a| u32::from(a.count)).collect();
    for (i, id) in ids.iter().enumerate() {
        rm.handle(
            now,
            Input::Allocate(AllocateRequest {
                app: *id,
                asks: vec![weft_core::ask_anywhere(1, size(i), outstanding[i])],
                releases: Vec::new(),
                blacklist_additions: Vec::new(),
                blacklist_removals: Vec::new(),
                progress: 0.0,
            }),
        );
    }
    // FIFO order: higher priority, then earlier start, then smaller id.
    let ahead = |a: usize, b: usize| (-apps[a].priority, a) < (-apps[b].priority, b);
    let mut running: BTreeMap<u8, Vec<(ContainerId, Resource)>> = BTreeMap::new();
    for op in ops {
        now += weft_model::Duration::from_millis(100);
        match *op {
            FifoOp::More { app, count } => {
                let i = usize::from(app) % apps.len();
                outstanding[i] += u32::from(count);
                rm.handle(
                    now,
                    Input::Allocate(AllocateRequest {
                        app: ids[i],
                        asks: vec![weft_core::ask_anywhere(1, size(i), outstanding[i])],
                        releases: Vec::new(),
                        blacklist_additions: Vec::new(),
                        blacklist_removals: Vec::new(),
                        progress: 0.0,
                    }),
                );
            }
            FifoOp::Heartbeat { node, done } => {
                let node = node % node_vcores.len() as u8;
                let node_id = Harness::node_id(node);
                let report = rm
                    .node_reports()
                    .into_iter()
                    .find(|n| n.id == node_id)
                    .expect("registered node");
                let list = running.entry(node).or_default();
                let mut statuses = Vec::new();
                let mut freed = Resource::ZERO;
                let mut still = Vec::new();
                for (k, (c, r)) in list.iter().enumerate() {
                    let finished = done & (1 << (k % 8)) != 0;
                    if finished {
                        freed += *r;
                    } else {
                        still.push((*c, *r));
                    }
                    statuses.push(ContainerStatus {
                        container: *c,
                        state: if finished {
                            ContainerState::Complete { exit_status: 0 }
                        } else {
                            ContainerState::Running
                        },
                    });
                }
                *list = still;
                let out = rm.handle(
                    now,
                    Input::NodeHeartbeat(NodeHeartbeat {
                        node: node_id,
                        statuses,
                        unhealthy: None,
                    }),
                );
                rm.check_invariants()
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let mut free = report.capability - report.allocated + freed;
                for event in &out.events {
                    let Event::ContainerAllocated {
                        container,
                        resource,
                        ..
                    } = event
                    else {
                        continue;
                    };
                    let served = ids
                        .iter()
                        .position(|id| *id == container.app())
                        .expect("known app");
                    for earlier in (0..apps.len()).filter(|e| ahead(*e, served)) {
                        prop_assert!(
                            outstanding[earlier] == 0 || !size(earlier).fits_in(&free),
                            "app {} was served while app {} ahead of it had {} outstanding containers of {} that fit the {} free",
                            served,
                            earlier,
                            outstanding[earlier],
                            size(earlier),
                            free
                        );
                    }
                    outstanding[served] -= 1;
                    free -= *resource;
                    running
                        .entry(node)
                        .or_default()
                        .push((*container, *resource));
                }
            }
        }
    }
    Ok(())
}

// ----- DRF: balanced dominant shares --------------------------------------------

/// Sibling DRF queues with unmet demand: at every point while every queue's
/// container still fits every node, the weighted dominant shares differ by at
/// most the largest weighted dominant share of one container. (Serving the
/// queue with the smallest weighted share first keeps the gap within that:
/// one container raises a queue's dominant share by at most its own.)
fn check_drf(
    queues: &[(u8, u64, u64)],
    nodes: &[u8],
    assign_multiple: bool,
    heartbeats: &[u8],
) -> Result<(), TestCaseError> {
    let mut xml = String::from(
        "<allocations><defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>",
    );
    for (i, (weight, _, _)) in queues.iter().enumerate() {
        let _ = write!(
            xml,
            r#"<queue name="q{i}"><weight>{weight}</weight></queue>"#
        );
    }
    xml.push_str("</allocations>");
    let config = parse_alloc_file(&xml)
        .expect("valid allocation file")
        .config;
    // The priorities drawn are all within the cap, so the order checked is
    // the one asked for.
    let mut props = vec![(
        "yarn.cluster.max-application-priority".to_owned(),
        "10".to_owned(),
    )];
    if assign_multiple {
        props.push((
            "yarn.scheduler.fair.assignmultiple".to_owned(),
            "true".to_owned(),
        ));
    }
    let mut rm = ResourceManager::new(config, settings_from(&props).expect("settings"), Time::ZERO);
    let now = Time::ZERO;
    for (i, kind) in nodes.iter().enumerate() {
        let capability = match kind {
            0 => Resource::new(16384, 16),
            1 => Resource::new(32768, 8),
            _ => Resource::new(8192, 32),
        };
        rm.handle(
            now,
            Input::NodeRegistered(NodeRegistration {
                node: Harness::node_id(i as u8),
                rack: "/r".to_owned(),
                capability,
                http_address: String::new(),
                running: Vec::new(),
            }),
        );
    }
    let mut shapes = Vec::new();
    for (i, (_, memory, vcores)) in queues.iter().enumerate() {
        let Reply::NewApplication(new) = rm.handle(now, Input::NewApplication).reply else {
            return Err(TestCaseError::fail("no application id"));
        };
        rm.handle(
            now,
            Input::AppSubmitted(Submission {
                app: new.app,
                user: "u".to_owned(),
                groups: Vec::new(),
                queue: Some(format!("root.q{i}")),
                priority: AppPriority(0),
                am_resource: None,
                name: String::new(),
                app_type: String::new(),
                tags: Vec::new(),
                max_attempts: None,
                lifetime: None,
            }),
        );
        rm.handle(now, Input::AmRegistered { app: new.app });
        let shape = Resource::new(memory * 1024, *vcores);
        shapes.push(shape);
        rm.handle(
            now,
            Input::Allocate(AllocateRequest {
                app: new.app,
                asks: vec![weft_core::ask_anywhere(1, shape, 10_000)],
                releases: Vec::new(),
                blacklist_additions: Vec::new(),
                blacklist_removals: Vec::new(),
                progress: 0.0,
            }),
        );
    }
    let cluster = rm.cluster_metrics().total;
    let weighted = |r: &Resource, w: u8| r.dominant_share(&cluster) / f64::from(w);
    let gap_allowed = queues
        .iter()
        .zip(&shapes)
        .map(|((w, _, _), shape)| weighted(shape, *w))
        .fold(0.0, f64::max);
    let mut now = now;
    for pick in heartbeats {
        let node = Harness::node_id(pick % nodes.len() as u8);
        // Time passes, so update passes run as they would.
        now += weft_model::Duration::from_millis(300);
        rm.handle(
            now,
            Input::NodeHeartbeat(NodeHeartbeat {
                node: node.clone(),
                statuses: Vec::new(),
                unhealthy: None,
            }),
        );
        let report = rm
            .node_reports()
            .into_iter()
            .find(|n| n.id == node)
            .expect("registered node");
        let free = report.capability - report.allocated;
        if shapes.iter().any(|s| !s.fits_in(&free)) {
            // Some queue's container stopped fitting this node during the
            // heartbeat (free room only shrinks while a node is scheduled),
            // so a queue may have been skipped for want of room, not by
            // order: the balance no longer has to hold.
            break;
        }
        rm.check_invariants()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let shares: Vec<f64> = rm
            .queue_reports()
            .iter()
            .filter_map(|q| {
                let name = q.tree.path.to_string();
                let i: usize = name.strip_prefix("root.q")?.parse().ok()?;
                Some(weighted(&q.tree.usage, queues[i].0))
            })
            .collect();
        let max = shares.iter().copied().fold(f64::MIN, f64::max);
        let min = shares.iter().copied().fold(f64::MAX, f64::min);
        prop_assert!(
            max - min <= gap_allowed + 1e-9,
            "weighted dominant shares {:?} differ by {} > one container's {}",
            shares,
            max - min,
            gap_allowed
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        // Failures become named scenarios (tests/scenarios), not seed files.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// FIFO never lets an app overtake one ahead of it whose container fits.
    #[test]
    fn fifo_never_overtakes(
        apps in proptest::collection::vec(fifo_app(), 2..5),
        node_vcores in proptest::collection::vec(2..9u8, 1..3),
        assign_multiple in any::<bool>(),
        ops in proptest::collection::vec(fifo_op(), 1..60),
    ) {
        check_fifo(&apps, &node_vcores, assign_multiple, &ops)?;
    }

    /// DRF keeps sibling queues' weighted dominant shares within one container.
    #[test]
    fn drf_balances_siblings(
        queues in proptest::collection::vec((1..4u8, 1..4u64, 1..5u64), 2..5),
        nodes in proptest::collection::vec(0..3u8, 1..4),
        assign_multiple in any::<bool>(),
        heartbeats in proptest::collection::vec(any::<u8>(), 1..80),
    ) {
        check_drf(&queues, &nodes, assign_multiple, &heartbeats)?;
    }
}
