//! Scheduling throughput of the core, single thread: allocations per second
//! while filling a cluster (in a fresh process, and again once emptied:
//! "warm") and in steady-state churn, the cost per allocation
//! as apps grow from 1,000 to 100,000, the cost of a full node's heartbeat,
//! and memory per app and per running container.
//!
//! `cargo bench -p weft-core --bench scheduling` prints the figures (medians
//! over rounds; the machine is shared, so compare ratios). Set
//! `WEFT_BENCH_QUICK=1` for a smaller run.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

/// The allocator the `weft` binary (RM service and simulator) runs the core
/// with, so that these figures are the product's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::collections::VecDeque;
use std::time::Duration;

use weft_core::{
    AllocateRequest, ContainerState, ContainerStatus, CoreSettings, Input, NodeHeartbeat,
    NodeRegistration, Output, Reply, ResourceManager, Submission, ask_anywhere,
};
use weft_model::{AppId, AppPriority, ContainerId, NodeId, QueuePath, Resource, Time};
use weft_queue_tree::site::{MaxAssign, SchedulerSettings};
use weft_queue_tree::{AllocConfig, Policy, QueueConfig, QueueKind};
use weft_test_support::{black_box, rss_bytes, time_once};

/// A cluster under test, and what its simulated node managers know.
struct Cluster {
    rm: ResourceManager,
    now: Time,
    nodes: Vec<NodeId>,
    apps: Vec<AppId>,
    /// Containers each node runs, oldest first, by the node's place in
    /// `nodes`: a vector of queues, so that the driver's own bookkeeping
    /// (taking the oldest off the front) stays small beside the core's.
    running: Vec<VecDeque<ContainerId>>,
    /// Reused for every heartbeat, as a driver would.
    out: Output,
}

struct Shape {
    nodes: usize,
    node_capability: Resource,
    apps: usize,
    asks_per_app: u32,
}

/// Root → 10 parents → 10 children each → 10 leaves each: 1,000 leaves, all `drf`.
fn three_level_drf() -> (AllocConfig, Vec<QueuePath>) {
    let mut config = AllocConfig {
        default_policy: Policy::Drf,
        ..AllocConfig::default()
    };
    let mut leaves = Vec::new();
    let add = |config: &mut AllocConfig, path: QueuePath, kind| {
        let mut qc = QueueConfig::new(path.clone(), kind);
        qc.policy = Some(Policy::Drf);
        config.queues.insert(path, qc);
    };
    let root = QueuePath::root();
    add(&mut config, root.clone(), QueueKind::Parent);
    add(&mut config, root.child("default").unwrap(), QueueKind::Leaf);
    for a in 0..10 {
        let pa = root.child(&format!("p{a}")).unwrap();
        add(&mut config, pa.clone(), QueueKind::Parent);
        for b in 0..10 {
            let pb = pa.child(&format!("c{b}")).unwrap();
            add(&mut config, pb.clone(), QueueKind::Parent);
            for c in 0..10 {
                let leaf = pb.child(&format!("l{c}")).unwrap();
                add(&mut config, leaf.clone(), QueueKind::Leaf);
                leaves.push(leaf);
            }
        }
    }
    (config, leaves)
}

fn settings() -> CoreSettings {
    let scheduler = SchedulerSettings {
        assign_multiple: true,
        dynamic_max_assign: false,
        max_assign: MaxAssign::Unlimited,
        nm_liveness_expiry: weft_model::Duration::from_secs(86_400),
        ..SchedulerSettings::default()
    };
    CoreSettings {
        scheduler,
        cluster_timestamp: 1,
        ..CoreSettings::default()
    }
}

fn build(shape: &Shape) -> Cluster {
    let (config, leaves) = three_level_drf();
    let mut rm = ResourceManager::new(config, settings(), Time::ZERO);
    let now = Time::ZERO;
    let mut nodes = Vec::with_capacity(shape.nodes);
    for i in 0..shape.nodes {
        let node = NodeId::new(&format!("n{i}"), 8041).unwrap();
        let out = rm.handle(
            now,
            Input::NodeRegistered(NodeRegistration {
                node: node.clone(),
                rack: format!("/r{}", i / 40),
                capability: shape.node_capability,
                http_address: format!("n{i}:8042"),
                running: Vec::new(),
            }),
        );
        assert!(matches!(out.reply, Reply::NodeRegistered(Ok(()))));
        nodes.push(node);
    }
    let mut apps = Vec::with_capacity(shape.apps);
    for i in 0..shape.apps {
        let Reply::NewApplication(new) = rm.handle(now, Input::NewApplication).reply else {
            panic!("no id")
        };
        let out = rm.handle(
            now,
            Input::AppSubmitted(Submission {
                app: new.app,
                user: format!("u{}", i % 100),
                groups: Vec::new(),
                queue: Some(leaves[i % leaves.len()].to_string()),
                priority: AppPriority(0),
                am_resource: None,
                name: format!("app{i}"),
                app_type: "BENCH".into(),
                tags: Vec::new(),
                max_attempts: None,
                lifetime: None,
            }),
        );
        assert!(
            matches!(out.reply, Reply::Submitted(Ok(_))),
            "{:?}",
            out.reply
        );
        rm.handle(now, Input::AmRegistered { app: new.app });
        allocate(&mut rm, now, new.app, Some(shape.asks_per_app));
        apps.push(new.app);
    }
    let mut cluster = Cluster {
        rm,
        now,
        nodes,
        apps,
        running: vec![VecDeque::new(); shape.nodes],
        out: Output::default(),
    };
    // One update pass so demands and fair shares are known.
    cluster.advance(Duration::from_secs(1));
    cluster
}

/// An allocate call from `app`'s AM; with `count`, it (re)sets the app's
/// ask to that many 1 GB containers (0 cancels it), else only collects.
fn allocate(rm: &mut ResourceManager, now: Time, app: AppId, count: Option<u32>) {
    let asks = match count {
        Some(n) => vec![ask_anywhere(1, Resource::new(1024, 1), n)],
        None => Vec::new(),
    };
    let out = rm.handle(
        now,
        Input::Allocate(AllocateRequest {
            app,
            asks,
            releases: Vec::new(),
            blacklist_additions: Vec::new(),
            blacklist_removals: Vec::new(),
            progress: 0.0,
        }),
    );
    assert!(
        matches!(out.reply, Reply::Allocate(Ok(_))),
        "{:?}",
        out.reply
    );
}

impl Cluster {
    fn advance(&mut self, d: Duration) {
        self.now = Time::from_millis(self.now.as_millis() + d.as_millis() as u64);
        self.rm.handle(self.now, Input::Tick);
    }

    /// One heartbeat from every node, each reporting its `complete` oldest
    /// containers done. Returns the containers allocated.
    fn heartbeat_round(&mut self, complete: usize) -> usize {
        let mut allocated = 0;
        for (node, running) in self.nodes.iter().zip(&mut self.running) {
            let n_done = complete.min(running.len());
            let statuses: Vec<ContainerStatus> = running
                .drain(..n_done)
                .map(|container| ContainerStatus {
                    container,
                    state: ContainerState::Complete { exit_status: 0 },
                })
                .collect();
            self.rm.handle_into(
                self.now,
                Input::NodeHeartbeat(NodeHeartbeat {
                    node: node.clone(),
                    statuses,
                    unhealthy: None,
                }),
                &mut self.out,
            );
            let Reply::NodeHeartbeat(Ok(reply)) = &self.out.reply else {
                panic!("heartbeat refused")
            };
            allocated += reply.allocated.len();
            running.extend(reply.allocated.iter().map(|a| a.container));
            black_box(&self.out.events);
        }
        allocated
    }

    /// Every AM collects its allocate reply (so per-app lists do not grow).
    fn drain_ams(&mut self) {
        for app in self.apps.clone() {
            allocate(&mut self.rm, self.now, app, None);
        }
    }
}

fn per_second(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

impl Cluster {
    /// Ends every container with no asks outstanding, then asks again: the
    /// next fill reuses what the RM already holds, as in a long-running RM
    /// (a fresh process's first fill also pays for the memory it touches
    /// first, which this virtual machine makes dear).
    fn empty_and_ask_again(&mut self, asks_per_app: u32) {
        for app in self.apps.clone() {
            allocate(&mut self.rm, self.now, app, Some(0));
        }
        self.heartbeat_round(usize::MAX);
        self.drain_ams();
        for app in self.apps.clone() {
            allocate(&mut self.rm, self.now, app, Some(asks_per_app));
        }
        self.advance(Duration::from_millis(1000));
    }
}

/// Fill the cluster, then run churn rounds, then fill again from empty;
/// returns (fill rate, churn rate, nanoseconds per allocation in churn,
/// warm fill rate).
fn throughput(label: &str, shape: &Shape, rounds: usize) -> (f64, f64, f64, f64) {
    let mut c = build(shape);
    let (filled, fill_time) = time_once(|| c.heartbeat_round(0));
    c.drain_ams();
    let fill_rate = per_second(filled, fill_time);
    let mut times = Vec::new();
    let mut per_round = 0;
    for _ in 0..rounds {
        c.advance(Duration::from_millis(1000));
        let (n, t) = time_once(|| c.heartbeat_round(8));
        per_round = n;
        times.push(t);
        c.drain_ams();
    }
    let t = median(times);
    let churn_rate = per_second(per_round, t);
    let ns = t.as_nanos() as f64 / per_round.max(1) as f64;
    c.empty_and_ask_again(shape.asks_per_app);
    let (refilled, warm_time) = time_once(|| c.heartbeat_round(0));
    c.drain_ams();
    assert_eq!(
        refilled, filled,
        "the warm fill should fill the cluster again"
    );
    let warm_rate = per_second(refilled, warm_time);
    println!(
        "{label:<44} fill {:>10.0} alloc/s ({filled} in {:.1} ms)   churn {:>10.0} alloc/s ({per_round}/round, {ns:.0} ns each)   warm fill {:>10.0} alloc/s",
        fill_rate,
        fill_time.as_secs_f64() * 1e3,
        churn_rate,
        warm_rate
    );
    c.rm.check_invariants().unwrap();
    (fill_rate, churn_rate, ns, warm_rate)
}

fn full_node_heartbeat(shape: &Shape) {
    let mut c = build(shape);
    c.heartbeat_round(0);
    c.drain_ams();
    let nodes = c.nodes.clone();
    let mut times = Vec::new();
    for _ in 0..5 {
        let (_, t) = time_once(|| {
            for node in &nodes {
                let out = c.rm.handle(
                    c.now,
                    Input::NodeHeartbeat(NodeHeartbeat {
                        node: node.clone(),
                        statuses: Vec::new(),
                        unhealthy: None,
                    }),
                );
                black_box(out);
            }
        });
        times.push(t);
    }
    let t = median(times);
    println!(
        "{:<44} {:.0} ns per heartbeat ({} nodes, median of 5 rounds)",
        "full-node heartbeat (nothing to assign)",
        t.as_nanos() as f64 / nodes.len() as f64,
        nodes.len()
    );
}

/// What one explanation costs on a full cluster, where every app has
/// pending asks and no node has room, so each call tries every node: the
/// time a client asking `explain` takes from the scheduler's thread.
fn explain_cost(shape: &Shape) {
    let mut c = build(shape);
    c.heartbeat_round(0);
    c.drain_ams();
    let apps: Vec<AppId> = c.apps.iter().step_by(c.apps.len() / 100).copied().collect();
    let mut times = Vec::new();
    for _ in 0..5 {
        let (_, t) = time_once(|| {
            for app in &apps {
                black_box(c.rm.explain_app(*app, c.now));
            }
        });
        times.push(t);
    }
    let t = median(times);
    println!(
        "{:<44} {:.0} µs per call ({} nodes, full, {} apps asked, median of 5 rounds)",
        "explain an app",
        t.as_nanos() as f64 / apps.len() as f64 / 1000.0,
        shape.nodes,
        apps.len()
    );
}

fn memory(nodes: usize, apps: usize, per_app: u32) {
    let before = rss_bytes().unwrap_or(0);
    let shape = Shape {
        nodes,
        node_capability: Resource::new(128 * 1024, 128),
        apps,
        asks_per_app: per_app,
    };
    let mut c = build(&shape);
    let with_apps = rss_bytes().unwrap_or(0);
    let allocated = c.heartbeat_round(0);
    c.drain_ams();
    let full = rss_bytes().unwrap_or(0);
    let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!(
        "memory: {nodes} nodes + {apps} apps: {:.0} MiB; + {allocated} running containers: {:.0} MiB total RSS \
         ({:.0} bytes/app incl. its asks, {:.0} bytes/container)",
        mb(with_apps.saturating_sub(before)),
        mb(full),
        with_apps.saturating_sub(before) as f64 / apps as f64,
        full.saturating_sub(with_apps) as f64 / allocated.max(1) as f64,
    );
    black_box(&c.rm);
}

fn main() {
    let quick = std::env::var_os("WEFT_BENCH_QUICK").is_some();
    if std::env::var_os("WEFT_BENCH_PROFILE").is_some() {
        // For profilers: one shape (2,000 nodes and 10,000 apps unless
        // WEFT_BENCH_NODES and WEFT_BENCH_APPS say otherwise), many churn rounds.
        let var = |name: &str, default: usize| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let shape = Shape {
            nodes: var("WEFT_BENCH_NODES", 2_000),
            node_capability: Resource::new(64 * 1024, 64),
            apps: var("WEFT_BENCH_APPS", 10_000),
            asks_per_app: 1_000_000,
        };
        let rounds = var("WEFT_BENCH_ROUNDS", 60);
        throughput("profile", &shape, rounds);
        return;
    }
    let nodes = if quick { 1_000 } else { 10_000 };
    let rounds = if quick { 3 } else { 7 };
    println!(
        "weft-core scheduling bench: 1,000 leaf queues in three levels, DRF everywhere, assignmultiple"
    );
    // Memory first: later runs leave freed memory in the allocator, which would hide growth.
    if quick {
        memory(1_000, 10_000, 10);
    } else {
        memory(10_000, 100_000, 10);
    }
    let mut costs = Vec::new();
    for apps in [1_000, 10_000, 100_000] {
        if quick && apps > 10_000 {
            continue;
        }
        let shape = Shape {
            nodes,
            node_capability: Resource::new(64 * 1024, 64),
            apps,
            asks_per_app: 1_000_000,
        };
        let (_, _, ns, _) = throughput(
            &format!("{nodes} nodes x 64 slots, {apps} apps"),
            &shape,
            rounds,
        );
        costs.push((apps, ns));
    }
    if let (Some(first), Some(last)) = (costs.first(), costs.last()) {
        println!(
            "cost per allocation grows {:.2}x from {} to {} apps ({}x more apps; log ratio {:.2})",
            last.1 / first.1,
            first.0,
            last.0,
            last.0 / first.0,
            (last.0 as f64).ln() / (first.0 as f64).ln()
        );
    }
    let shape = Shape {
        nodes,
        node_capability: Resource::new(64 * 1024, 64),
        apps: 10_000,
        asks_per_app: 1_000_000,
    };
    full_node_heartbeat(&shape);
    explain_cost(&shape);
}
