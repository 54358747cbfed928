//! How long one preemption update takes on a large cluster: 10,000 nodes,
//! 1,000 leaf queues (under 10 parents), 10,000 apps and 1,000,000 running
//! containers, through a flat view like the one the core will provide.
//!
//! Cases: a steady cluster where nobody is starved (the cost of every update
//! pass); one starved app whose victims are found on the first nodes
//! searched; one starved app while nothing may be taken anywhere; one
//! starved app that the apps that may give cannot serve (few givers, or
//! givers held back by their leaves); and the worst case, where many apps
//! are above their fair shares but none of their containers may be taken:
//! the view's summary of each app's containers (`app_holdings`) tells so at
//! once, and without it every node's containers are read (at most once per
//! starved app, size and place per update, and per app once per starvation
//! re-check cycle, 29 s by default), which the last current-model case
//! times; then the classic model, steady and with one starved leaf. A tiny local
//! harness times each case; the shared harness in `weft-test-support` had not
//! landed when this was written.

#![expect(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::print_stdout,
    reason = "a benchmark reads the wall clock and prints its figures"
)]

use std::hint::black_box;
use std::time::Instant;

use weft_model::{
    AppId, AttemptId, ContainerId, Duration, NodeId, Priority, QueuePath, Resource, Time,
};
use weft_preemption::{
    AppHoldings, AppInfo, AppSlot, Ask, ContainerInfo, Location, NodeInfo, NodeSlot,
    PreemptionView, Preemptor, QueueInfo, QueueSlot, TransitionKind,
};
use weft_queue_tree::Policy;
use weft_queue_tree::site::{PreemptionModel, SchedulerSettings};

const N_NODES: usize = 10_000;
const N_PARENTS: usize = 10;
const N_LEAVES: usize = 1_000;
const APPS_PER_LEAF: usize = 10;
const CONTAINERS_PER_NODE: usize = 100;
const CONTAINER: Resource = Resource::new(1024, 1);

struct Queue {
    path: QueuePath,
    parent: Option<QueueSlot>,
    is_leaf: bool,
    usage: Resource,
    demand: Resource,
    fair_share: Resource,
}

struct Node {
    id: NodeId,
    rack: String,
    containers: Vec<ContainerInfo>,
    /// By position in `containers`: false once killed (positions stay put).
    alive: Vec<bool>,
    unallocated: Resource,
    /// What preemption set aside here (the view's `earmarked`).
    earmarked: Resource,
}

/// A cluster in flat vectors: queue slot 0 is root, then the parents, then
/// the leaves; app slots follow the leaves' order.
struct Cluster {
    queues: Vec<Queue>,
    /// By leaf index: its apps.
    apps: Vec<Vec<AppInfo>>,
    nodes: Vec<Node>,
    asks: Vec<Vec<(Resource, u32)>>,
    capacity: Resource,
    am_preemption: bool,
    /// By app slot: how many running containers it holds that are not AM
    /// containers, and how many that are (the view's summary; the core
    /// keeps such counts as containers come and go).
    holdings: Vec<[u32; 2]>,
    /// Whether the view offers `holdings` (a view may not).
    offers_holdings: bool,
}

impl Cluster {
    /// Every container is 1 GB; every app holds 100 of them spread over
    /// 100 nodes. `fair_share_of_app` sets how much each app may keep.
    fn new(fair_share_of_app: Resource) -> Cluster {
        let node_capacity = CONTAINER.saturating_mul(CONTAINERS_PER_NODE as u64);
        let capacity = node_capacity.saturating_mul(N_NODES as u64);
        let n_apps = N_LEAVES * APPS_PER_LEAF;
        let per_app = CONTAINERS_PER_NODE * N_NODES / n_apps;
        let mut queues = vec![Queue {
            path: QueuePath::root(),
            parent: None,
            is_leaf: false,
            usage: capacity,
            demand: capacity,
            fair_share: capacity,
        }];
        let app_usage = CONTAINER.saturating_mul(per_app as u64);
        let leaf_usage = app_usage.saturating_mul(APPS_PER_LEAF as u64);
        let per_parent = N_LEAVES / N_PARENTS;
        for p in 0..N_PARENTS {
            queues.push(Queue {
                path: QueuePath::parse(&format!("root.p{p}")).expect("path"),
                parent: Some(QueueSlot(0)),
                is_leaf: false,
                usage: leaf_usage.saturating_mul(per_parent as u64),
                demand: leaf_usage.saturating_mul(per_parent as u64),
                fair_share: fair_share_of_app.saturating_mul((APPS_PER_LEAF * per_parent) as u64),
            });
        }
        let mut apps = Vec::new();
        for l in 0..N_LEAVES {
            let parent = 1 + l / per_parent;
            queues.push(Queue {
                path: QueuePath::parse(&format!("root.p{}.q{l}", l / per_parent)).expect("path"),
                parent: Some(QueueSlot(parent as u32)),
                is_leaf: true,
                usage: leaf_usage,
                demand: leaf_usage,
                fair_share: fair_share_of_app.saturating_mul(APPS_PER_LEAF as u64),
            });
            let leaf_apps = (0..APPS_PER_LEAF)
                .map(|i| {
                    let slot = (l * APPS_PER_LEAF + i) as u32;
                    AppInfo {
                        slot: AppSlot(slot),
                        id: AppId::new(1, slot + 1),
                        usage: app_usage,
                        demand: app_usage,
                        fair_share: fair_share_of_app,
                        start: Time::ZERO,
                        weight: 1.0,
                    }
                })
                .collect();
            apps.push(leaf_apps);
        }
        let mut nodes: Vec<Node> = (0..N_NODES)
            .map(|n| Node {
                id: NodeId::new(&format!("node{n:05}"), 8041).expect("node id"),
                rack: format!("/rack{}", n / 40),
                containers: Vec::with_capacity(CONTAINERS_PER_NODE),
                alive: vec![true; CONTAINERS_PER_NODE],
                unallocated: Resource::ZERO,
                earmarked: Resource::ZERO,
            })
            .collect();
        for a in 0..n_apps {
            let id = AppId::new(1, a as u32 + 1);
            for c in 0..per_app {
                let node = (a * per_app + c) % N_NODES;
                nodes[node].containers.push(ContainerInfo {
                    id: ContainerId::new(AttemptId::new(id, 1), c as u64 + 1),
                    app: AppSlot(a as u32),
                    resource: CONTAINER,
                    priority: Priority(1),
                    is_am: c == 0,
                    launched: Time::from_millis(c as u64),
                });
            }
        }
        let mut cluster = Cluster {
            queues,
            apps,
            nodes,
            asks: vec![Vec::new(); n_apps],
            capacity,
            am_preemption: true,
            holdings: vec![[0; 2]; n_apps],
            offers_holdings: true,
        };
        cluster.count_holdings();
        cluster
    }

    /// Counts every app's running containers, AMs apart.
    fn count_holdings(&mut self) {
        self.holdings.iter_mut().for_each(|h| *h = [0; 2]);
        for node in &self.nodes {
            for (c, alive) in node.containers.iter().zip(&node.alive) {
                if *alive {
                    self.holdings[c.app.0 as usize][usize::from(c.is_am)] += 1;
                }
            }
        }
    }

    /// Turns the first app of leaf 0 into a starved one: it lost all its
    /// containers' worth to nobody (usage 0) and asks for 10 containers.
    fn starve_one_app(&mut self) {
        let app = &mut self.apps[0][0];
        app.demand = CONTAINER.saturating_mul(10);
        app.usage = Resource::ZERO;
        app.fair_share = CONTAINER.saturating_mul(10);
        self.asks[0] = vec![(CONTAINER, 10)];
    }

    /// Lets one app in the last leaf give a single container: not enough
    /// for a 2 GB one anywhere.
    fn one_small_giver(&mut self) {
        let last = self.apps.len() - 1;
        self.apps[last][0].fair_share = self.apps[last][0].usage - CONTAINER;
        self.asks[0] = vec![(CONTAINER.saturating_mul(2), 5)];
    }

    /// Lets every tenth app give one container, and asks for 2 GB ones.
    fn many_small_givers(&mut self) {
        for leaf in &mut self.apps {
            for (i, app) in leaf.iter_mut().enumerate() {
                if i == 5 {
                    app.fair_share = app.usage - CONTAINER;
                }
            }
        }
        self.asks[0] = vec![(CONTAINER.saturating_mul(2), 5)];
    }

    /// Carries out what the core would: hold warned containers' sizes on
    /// their nodes, free killed ones (nobody takes their room here).
    fn apply(&mut self, out: &weft_preemption::PreemptionOutput) {
        for t in &out.transitions {
            let n: usize = t.node.host()["node".len()..]
                .parse()
                .expect("bench node name");
            let node = &mut self.nodes[n];
            match t.kind {
                TransitionKind::Warned { .. } if t.set_aside => node.earmarked += t.resource,
                TransitionKind::Withdrawn { .. } if t.set_aside => node.earmarked -= t.resource,
                TransitionKind::Killed => {
                    if let Some(at) = node.containers.iter().position(|c| c.id == t.container) {
                        node.alive[at] = false;
                        let c = &node.containers[at];
                        self.holdings[c.app.0 as usize][usize::from(c.is_am)] -= 1;
                    }
                    node.unallocated += t.resource;
                }
                TransitionKind::Warned { .. }
                | TransitionKind::Withdrawn { .. }
                | TransitionKind::Released => {}
            }
        }
    }

    /// Lets half the apps, and their leaves, give one container, but makes
    /// every container an AM while AM preemption is off: a search reads
    /// every node's containers and finds nothing.
    fn givers_of_protected_ams(&mut self) {
        for leaf in &mut self.apps {
            for app in leaf.iter_mut().skip(1).step_by(2) {
                app.fair_share = app.usage - CONTAINER;
            }
        }
        for queue in &mut self.queues {
            queue.fair_share = Resource::ZERO;
        }
        for node in &mut self.nodes {
            for c in &mut node.containers {
                c.is_am = true;
            }
        }
        self.count_holdings();
        self.am_preemption = false;
    }

    /// For the classic model: leaf 0 holds nothing and wants 10 containers,
    /// its fair share, so it has a deficit once the timeout has passed.
    fn starve_one_leaf(&mut self) {
        self.starve_one_app();
        let leaf = &mut self.queues[1 + N_PARENTS];
        leaf.usage = Resource::ZERO;
        leaf.demand = CONTAINER.saturating_mul(10);
        leaf.fair_share = CONTAINER.saturating_mul(10);
    }

    fn leaf_index(&self, slot: QueueSlot) -> usize {
        slot.0 as usize - 1 - N_PARENTS
    }
}

impl PreemptionView for Cluster {
    fn cluster_capacity(&self) -> Resource {
        self.capacity
    }

    fn cluster_allocated(&self) -> Resource {
        self.capacity
    }

    fn queue_slots(&self) -> usize {
        self.queues.len()
    }

    fn queues(&self) -> impl Iterator<Item = QueueInfo<'_>> {
        self.queues.iter().enumerate().map(|(i, q)| QueueInfo {
            slot: QueueSlot(i as u32),
            parent: q.parent,
            path: &q.path,
            is_leaf: q.is_leaf,
            policy: Policy::Fair,
            min_share: Resource::ZERO,
            demand: q.demand,
            usage: q.usage,
            fair_share: q.fair_share,
            min_share_preemption_timeout: Duration::MAX,
            fair_share_preemption_timeout: Duration::from_secs(1),
            fair_share_preemption_threshold: 0.5,
            preemptable: true,
            weight: 1.0,
        })
    }

    fn app_slots(&self) -> usize {
        N_LEAVES * APPS_PER_LEAF
    }

    fn apps(&self, leaf: QueueSlot) -> impl Iterator<Item = AppInfo> {
        self.apps[self.leaf_index(leaf)].iter().copied()
    }

    fn asks(&self, app: AppSlot) -> impl Iterator<Item = Ask<'_>> {
        self.asks[app.0 as usize]
            .iter()
            .map(|(capability, count)| Ask {
                priority: Priority(1),
                capability: *capability,
                location: Location::Any,
                count: *count,
                relax_locality: true,
            })
    }

    fn node_slots(&self) -> usize {
        self.nodes.len()
    }

    fn nodes(&self) -> impl Iterator<Item = NodeSlot> {
        (0..self.nodes.len()).map(|n| NodeSlot(n as u32))
    }

    fn nodes_at(&self, location: Location<'_>) -> impl Iterator<Item = NodeSlot> {
        let rack = match location {
            Location::Rack(r) => Some(r.to_owned()),
            _ => None,
        };
        (0..self.nodes.len())
            .filter(move |n| rack.as_deref() == Some(self.nodes[*n].rack.as_str()))
            .map(|n| NodeSlot(n as u32))
    }

    fn node(&self, node: NodeSlot) -> Option<NodeInfo<'_>> {
        let n = self.nodes.get(node.0 as usize)?;
        let capability = CONTAINER.saturating_mul(CONTAINERS_PER_NODE as u64);
        Some(NodeInfo {
            slot: node,
            id: &n.id,
            rack: &n.rack,
            capability,
            unallocated: n.unallocated,
            reserved: Resource::ZERO,
            earmarked: n.earmarked,
        })
    }

    fn containers(&self, node: NodeSlot) -> impl Iterator<Item = ContainerInfo> {
        let n = &self.nodes[node.0 as usize];
        n.containers
            .iter()
            .zip(&n.alive)
            .filter(|(_, alive)| **alive)
            .map(|(c, _)| *c)
    }

    fn app_containers(&self, app: AppSlot) -> impl Iterator<Item = (NodeSlot, ContainerInfo)> {
        // The containers were dealt out round-robin: app a's c-th is on node
        // (a × per_app + c) mod nodes, at position a × per_app / nodes there.
        let per_app = CONTAINERS_PER_NODE * N_NODES / (N_LEAVES * APPS_PER_LEAF);
        let a = app.0 as usize;
        (0..per_app).filter_map(move |c| {
            let node = (a * per_app + c) % N_NODES;
            let at = (a * per_app + c) / N_NODES;
            let n = &self.nodes[node];
            n.alive[at].then(|| (NodeSlot(node as u32), n.containers[at]))
        })
    }

    fn app_holdings(&self, app: AppSlot) -> Option<AppHoldings> {
        if !self.offers_holdings {
            return None;
        }
        // Every container here is 1 GB / 1 vcore.
        let [non_am, am] = *self.holdings.get(app.0 as usize)?;
        Some(AppHoldings {
            least_non_am: (non_am > 0).then_some(CONTAINER),
            least_am: (am > 0).then_some(CONTAINER),
        })
    }
}

/// Times `rounds` updates of one preemptor under `model`, each 30 s after
/// the last (so a starved app is due again and earlier warnings are
/// killed); prints the median and the fastest, in milliseconds.
fn time_model(name: &str, cluster: &mut Cluster, rounds: usize, model: PreemptionModel) {
    let settings = SchedulerSettings {
        preemption: true,
        preemption_model: model,
        am_preemption_default: cluster.am_preemption,
        ..SchedulerSettings::default()
    };
    let mut preemptor = Preemptor::new();
    let mut now = Time::ZERO;
    let mut millis = Vec::with_capacity(rounds);
    let mut warned = 0;
    // Two updates to warm the buffers up, then the measured ones.
    for round in 0..rounds + 2 {
        let start = Instant::now();
        let out = preemptor
            .update(now, &*cluster, &settings)
            .expect("a consistent view");
        if round >= 2 {
            millis.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        warned = out
            .starved
            .iter()
            .flat_map(|s| &s.victims)
            .map(|v| v.containers.len())
            .sum();
        cluster.apply(&out);
        black_box(out);
        now += Duration::from_secs(30);
    }
    millis.sort_by(f64::total_cmp);
    println!(
        "{name:<48} median {:>7.3} ms   fastest {:>7.3} ms   ({warned} victims)",
        millis[rounds / 2],
        millis[0]
    );
}

/// The cases to time: with arguments (`cargo bench -p weft-preemption --
/// worst`), only those whose names contain one of them, so a profiler can
/// look at one case alone.
struct Cases {
    filter: Vec<String>,
}

impl Cases {
    fn from_args() -> Cases {
        let filter = std::env::args()
            .skip(1)
            .filter(|arg| !arg.starts_with("--"))
            .collect();
        Cases { filter }
    }

    /// Builds the cluster and times the case, if it is wanted.
    fn run(
        &self,
        name: &str,
        rounds: usize,
        model: PreemptionModel,
        build: impl FnOnce() -> Cluster,
    ) {
        if self.filter.is_empty() || self.filter.iter().any(|f| name.contains(f.as_str())) {
            time_model(name, &mut build(), rounds, model);
        }
    }
}

fn main() {
    let cases = Cases::from_args();
    let current = PreemptionModel::Current;
    let per_app = CONTAINER
        .saturating_mul((CONTAINERS_PER_NODE * N_NODES / (N_LEAVES * APPS_PER_LEAF)) as u64);
    // Every app exactly at its fair share: nobody starved, nobody to take from.
    cases.run("steady: nobody starved", 21, current, || {
        Cluster::new(per_app)
    });

    // One app starved; the others may give half their containers.
    cases.run(
        "one starved app, victims on the first nodes",
        21,
        current,
        || {
            let mut giving = Cluster::new(CONTAINER.saturating_mul(50));
            giving.starve_one_app();
            giving
        },
    );

    // One app starved; everybody else at fair share.
    cases.run("one starved app, nothing may be taken", 21, current, || {
        let mut stuck = Cluster::new(per_app);
        stuck.starve_one_app();
        stuck
    });

    // One app starved for 2 GB containers; one app anywhere may give 1 GB.
    cases.run("one starved app, one giver too small", 21, current, || {
        let mut small = Cluster::new(per_app);
        small.starve_one_app();
        small.one_small_giver();
        small
    });

    // One app starved for 2 GB containers; 1,000 apps may give 1 GB each,
    // but their leaves are at their fair shares: every node with a giver is
    // looked at.
    cases.run(
        "one starved app, 1,000 givers held back by leaves",
        21,
        current,
        || {
            let mut many = Cluster::new(per_app);
            many.starve_one_app();
            many.many_small_givers();
            many
        },
    );

    // The worst case: one app starved; half the apps are above their fair
    // shares, but every container is a protected AM. The view's summary of
    // each app's containers says so; without it every node's containers are
    // read.
    cases.run(
        "worst: many givers, no container may go",
        21,
        current,
        || {
            let mut worst = Cluster::new(per_app);
            worst.starve_one_app();
            worst.givers_of_protected_ams();
            worst
        },
    );
    cases.run(
        "worst, no summaries: every node's containers read",
        21,
        current,
        || {
            let mut worst = Cluster::new(per_app);
            worst.starve_one_app();
            worst.givers_of_protected_ams();
            worst.offers_holdings = false;
            worst
        },
    );

    // The classic model: the same steady cluster, then one starved leaf whose
    // deficit is taken from the leaves most over their fair shares.
    cases.run(
        "classic: nobody starved",
        21,
        PreemptionModel::Classic,
        || Cluster::new(per_app),
    );
    // Warnings are made every other round (the rounds between kill them),
    // and the last of 20 measured rounds makes them.
    cases.run(
        "classic: one starved leaf, victims",
        20,
        PreemptionModel::Classic,
        || {
            let mut classic = Cluster::new(CONTAINER.saturating_mul(50));
            classic.starve_one_leaf();
            classic
        },
    );
}
