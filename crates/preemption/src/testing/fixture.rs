//! The hand-built cluster ([`TestView`]), its text fixture, and the `check`
//! helper that runs commands against it and renders what happened.
//!
//! Fixture lines (`#` starts a comment):
//!
//! ```text
//! settings [off] [dryrun] [classic] [wait=15s] [util=0.8] [am-off=<queue>]
//! node <name> <rack> <mb>,<vcores> [reserved=<mb>,<vcores>]
//! queue <path> [fair|drf|fifo] [min=..] [fs=..] [minto=1s] [fsto=1s] [thr=0.5] [w=1] [nopreempt]
//! app <name> <queue> [fs=..] [start=<ms>] [w=1]
//! run <app> <node> <n>x<mb>,<vcores> [pri=<p>] [at=<ms>] [am]
//! ask <app> <*|/rack|node> <n>x<mb>,<vcores> [pri=<p>] [strict]
//! ```
//!
//! and commands: `update <time>`, `end <app>#<seq>`, `apply` (carry out the
//! last update's output), `heartbeat` (hand back and schedule on every
//! node), `usage` (print usage per queue and app). Lines run in order, so
//! state lines between commands change the cluster (an `app` line naming a
//! known app changes its `fs=`, `start=`, or with `gone` removes it).
//! Fair shares are given by hand (`fs=`); usage and demand follow from the
//! containers and asks. `run ... am` makes the containers AMs.

use std::collections::BTreeMap;
use std::fmt::Write;

use expect_test::Expect;
use weft_model::{
    AppId, AttemptId, ContainerId, Duration, NodeId, Priority, QueuePath, Resource, Time,
};
use weft_queue_tree::Policy;
use weft_queue_tree::site::{Fraction, PreemptionModel, SchedulerSettings};

use crate::{
    AppHoldings, AppInfo, AppSlot, Ask, ContainerInfo, Location, NodeInfo, NodeSlot,
    PreemptionOutput, PreemptionView, Preemptor, QueueInfo, QueueSlot, Transition, TransitionKind,
};

/// A small cluster held in plain vectors; slots are indexes.
#[derive(Clone, Debug)]
pub(crate) struct TestView {
    pub(crate) settings: SchedulerSettings,
    pub(crate) nodes: Vec<TestNode>,
    /// Index 0 is root.
    pub(crate) queues: Vec<TestQueue>,
    pub(crate) apps: Vec<TestApp>,
    pub(crate) containers: BTreeMap<ContainerId, TestContainer>,
    /// Hand-back entries: (node, app) → what the node holds for the app.
    pub(crate) earmarks: BTreeMap<(usize, usize), Resource>,
    /// Whether `app_holdings` answers `None`, as a view without the summary.
    pub(crate) no_holdings: bool,
    /// Whether `app_holdings` halves its bounds: still true, less tight.
    pub(crate) loose_holdings: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct TestNode {
    pub(crate) id: NodeId,
    pub(crate) rack: String,
    pub(crate) capability: Resource,
    pub(crate) reserved: Resource,
    pub(crate) allocated: Resource,
}

#[derive(Clone, Debug)]
pub(crate) struct TestQueue {
    pub(crate) path: QueuePath,
    pub(crate) parent: Option<usize>,
    pub(crate) policy: Policy,
    pub(crate) min_share: Resource,
    pub(crate) fair_share: Resource,
    pub(crate) min_share_timeout: Duration,
    pub(crate) fair_share_timeout: Duration,
    pub(crate) threshold: f64,
    pub(crate) allow_preemption_from: bool,
    pub(crate) weight: f32,
}

#[derive(Clone, Debug)]
pub(crate) struct TestApp {
    pub(crate) name: String,
    pub(crate) id: AppId,
    pub(crate) queue: usize,
    pub(crate) fair_share: Resource,
    pub(crate) start: Time,
    pub(crate) asks: Vec<TestAsk>,
    pub(crate) usage: Resource,
    pub(crate) next_seq: u64,
    pub(crate) live: bool,
    pub(crate) weight: f32,
}

#[derive(Clone, Debug)]
pub(crate) struct TestAsk {
    pub(crate) priority: Priority,
    pub(crate) capability: Resource,
    pub(crate) location: TestLocation,
    pub(crate) count: u32,
    pub(crate) relax: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TestLocation {
    Any,
    Rack(String),
    Node(String),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct TestContainer {
    pub(crate) app: usize,
    pub(crate) node: usize,
    pub(crate) resource: Resource,
    pub(crate) priority: Priority,
    pub(crate) is_am: bool,
    pub(crate) launched: Time,
}

/// A fixture command.
#[derive(Clone, Debug)]
enum Command {
    Update(Time),
    End(ContainerId),
    Apply,
    Heartbeat,
    Usage,
}

pub(crate) fn test_settings() -> SchedulerSettings {
    SchedulerSettings {
        preemption: true,
        ..SchedulerSettings::default()
    }
}

impl TestView {
    pub(crate) fn new() -> TestView {
        TestView {
            settings: test_settings(),
            nodes: Vec::new(),
            queues: vec![TestQueue::new(QueuePath::root(), None)],
            apps: Vec::new(),
            containers: BTreeMap::new(),
            earmarks: BTreeMap::new(),
            no_holdings: false,
            loose_holdings: false,
        }
    }

    /// Reads a fixture of state lines only.
    pub(crate) fn parse(text: &str) -> TestView {
        let mut view = TestView::new();
        for line in fixture_lines(text) {
            let command = view.read_line(&line);
            assert!(command.is_none(), "commands need `check`: {line:?}");
        }
        view
    }

    /// Applies a state line, or returns the command it is.
    fn read_line(&mut self, words: &[&str]) -> Option<Command> {
        match words[0] {
            "settings" => self.parse_settings(&words[1..]),
            "node" => self.parse_node(&words[1..]),
            "queue" => self.parse_queue(&words[1..]),
            "app" => self.parse_app(&words[1..]),
            "run" => self.parse_run(&words[1..]),
            "ask" => self.parse_ask(&words[1..]),
            "update" => return Some(Command::Update(time(words[1]))),
            "end" => return Some(Command::End(self.container_named(words[1]))),
            "apply" => return Some(Command::Apply),
            "heartbeat" => return Some(Command::Heartbeat),
            "usage" => return Some(Command::Usage),
            other => panic!("unknown fixture line {other:?}"),
        }
        None
    }

    fn parse_settings(&mut self, words: &[&str]) {
        for word in words {
            match key_value(word) {
                ("off", _) => self.settings.preemption = false,
                ("dryrun", _) => self.settings.preemption_dry_run = true,
                ("classic", _) => self.settings.preemption_model = PreemptionModel::Classic,
                ("current", _) => self.settings.preemption_model = PreemptionModel::Current,
                ("wait", v) => self.settings.wait_time_before_kill = duration(v),
                ("util", v) => {
                    self.settings.preemption_utilization_threshold =
                        Fraction::new(v.parse().expect("number")).expect("in [0, 1]")
                }
                ("am-off", v) => {
                    self.settings
                        .am_preemption
                        .insert(QueuePath::parse(v).expect("queue path"), false);
                }
                _ => panic!("unknown setting {word:?}"),
            }
        }
    }

    fn parse_node(&mut self, words: &[&str]) {
        let mut node = TestNode {
            id: NodeId::new(words[0], 8041).expect("node name"),
            rack: words[1].to_owned(),
            capability: resource(words[2]),
            reserved: Resource::ZERO,
            allocated: Resource::ZERO,
        };
        for word in &words[3..] {
            match key_value(word) {
                ("reserved", v) => node.reserved = resource(v),
                _ => panic!("unknown node option {word:?}"),
            }
        }
        self.nodes.push(node);
    }

    fn parse_queue(&mut self, words: &[&str]) {
        let q = self.ensure_queue(&QueuePath::parse(words[0]).expect("queue path"));
        let queue = &mut self.queues[q];
        for word in &words[1..] {
            match key_value(word) {
                ("fair", _) => queue.policy = Policy::Fair,
                ("drf", _) => queue.policy = Policy::Drf,
                ("fifo", _) => queue.policy = Policy::Fifo,
                ("min", v) => queue.min_share = resource(v),
                ("fs", v) => queue.fair_share = resource(v),
                ("minto", v) => queue.min_share_timeout = duration(v),
                ("fsto", v) => queue.fair_share_timeout = duration(v),
                ("thr", v) => queue.threshold = v.parse().expect("threshold"),
                ("nopreempt", _) => queue.allow_preemption_from = false,
                ("w", v) => queue.weight = v.parse().expect("weight"),
                _ => panic!("unknown queue option {word:?}"),
            }
        }
    }

    fn parse_app(&mut self, words: &[&str]) {
        if let Some(a) = self.apps.iter().position(|a| a.name == words[0]) {
            self.set_app_options(a, &words[1..]);
            return;
        }
        let queue = self.ensure_queue(&QueuePath::parse(words[1]).expect("queue path"));
        self.apps.push(TestApp {
            name: words[0].to_owned(),
            id: AppId::new(1, self.apps.len() as u32 + 1),
            queue,
            fair_share: Resource::ZERO,
            start: Time::ZERO,
            asks: Vec::new(),
            usage: Resource::ZERO,
            next_seq: 1,
            live: true,
            weight: 1.0,
        });
        self.set_app_options(self.apps.len() - 1, &words[2..]);
    }

    fn set_app_options(&mut self, a: usize, words: &[&str]) {
        let app = &mut self.apps[a];
        for word in words {
            match key_value(word) {
                ("fs", v) => app.fair_share = resource(v),
                ("start", v) => app.start = time(v),
                ("gone", _) => app.live = false,
                ("w", v) => app.weight = v.parse().expect("weight"),
                _ => panic!("unknown app option {word:?}"),
            }
        }
    }

    fn parse_run(&mut self, words: &[&str]) {
        let app = self.app_named(words[0]);
        let node = self.node_named(words[1]);
        let (n, size) = count_and_size(words[2]);
        let (mut priority, mut at, mut am) = (Priority(1), Time::ZERO, false);
        for word in &words[3..] {
            match key_value(word) {
                ("pri", v) => priority = Priority(v.parse().expect("priority")),
                ("at", v) => at = time(v),
                ("am", _) => am = true,
                _ => panic!("unknown run option {word:?}"),
            }
        }
        for _ in 0..n {
            self.add_container(app, node, size, priority, am, at);
        }
    }

    fn parse_ask(&mut self, words: &[&str]) {
        let app = self.app_named(words[0]);
        let location = match words[1] {
            "*" => TestLocation::Any,
            rack if rack.starts_with('/') => TestLocation::Rack(rack.to_owned()),
            node => TestLocation::Node(node.to_owned()),
        };
        let (count, capability) = count_and_size(words[2]);
        let mut ask = TestAsk {
            priority: Priority(1),
            capability,
            location,
            count,
            relax: true,
        };
        for word in &words[3..] {
            match key_value(word) {
                ("pri", v) => ask.priority = Priority(v.parse().expect("priority")),
                ("strict", _) => ask.relax = false,
                _ => panic!("unknown ask option {word:?}"),
            }
        }
        self.apps[app].asks.push(ask);
    }

    /// The queue at `path`, created with its missing ancestors.
    pub(crate) fn ensure_queue(&mut self, path: &QueuePath) -> usize {
        if let Some(q) = self.queues.iter().position(|q| q.path == *path) {
            return q;
        }
        let parent = self.ensure_queue(&path.parent().expect("not root"));
        self.queues.push(TestQueue::new(path.clone(), Some(parent)));
        self.queues.len() - 1
    }

    pub(crate) fn app_named(&self, name: &str) -> usize {
        self.apps
            .iter()
            .position(|a| a.name == name)
            .unwrap_or_else(|| panic!("no app {name}"))
    }

    pub(crate) fn node_named(&self, name: &str) -> usize {
        self.nodes
            .iter()
            .position(|n| n.id.host() == name)
            .unwrap_or_else(|| panic!("no node {name}"))
    }

    fn container_named(&self, name: &str) -> ContainerId {
        let (app, seq) = name.split_once('#').expect("<app>#<seq>");
        let app = &self.apps[self.app_named(app)];
        ContainerId::new(AttemptId::new(app.id, 1), seq.parse().expect("sequence"))
    }

    pub(crate) fn add_container(
        &mut self,
        app: usize,
        node: usize,
        resource: Resource,
        priority: Priority,
        is_am: bool,
        launched: Time,
    ) -> ContainerId {
        let a = &mut self.apps[app];
        let id = ContainerId::new(AttemptId::new(a.id, 1), a.next_seq);
        a.next_seq += 1;
        a.usage += resource;
        self.nodes[node].allocated += resource;
        self.containers.insert(
            id,
            TestContainer {
                app,
                node,
                resource,
                priority,
                is_am,
                launched,
            },
        );
        id
    }

    pub(crate) fn remove_container(&mut self, id: &ContainerId) -> Option<TestContainer> {
        let c = self.containers.remove(id)?;
        self.apps[c.app].usage -= c.resource;
        self.nodes[c.node].allocated -= c.resource;
        Some(c)
    }

    pub(crate) fn is_leaf(&self, q: usize) -> bool {
        !self.queues.iter().any(|other| other.parent == Some(q))
    }

    pub(crate) fn is_under(&self, mut q: usize, ancestor: usize) -> bool {
        loop {
            if q == ancestor {
                return true;
            }
            match self.queues[q].parent {
                Some(p) => q = p,
                None => return false,
            }
        }
    }

    fn preemptable(&self, q: usize) -> bool {
        let mut cur = Some(q);
        while let Some(q) = cur {
            if !self.queues[q].allow_preemption_from {
                return false;
            }
            cur = self.queues[q].parent;
        }
        true
    }

    pub(crate) fn app_demand(&self, a: usize) -> Resource {
        let app = &self.apps[a];
        let asked: Resource = app
            .asks
            .iter()
            .filter(|ask| ask.location == TestLocation::Any)
            .map(|ask| ask.capability.saturating_mul(u64::from(ask.count)))
            .sum();
        app.usage + asked
    }

    pub(crate) fn queue_usage(&self, q: usize) -> Resource {
        self.live_apps()
            .filter(|a| self.is_under(self.apps[*a].queue, q))
            .map(|a| self.apps[a].usage)
            .sum()
    }

    pub(crate) fn queue_demand(&self, q: usize) -> Resource {
        self.live_apps()
            .filter(|a| self.is_under(self.apps[*a].queue, q))
            .map(|a| self.app_demand(a))
            .sum()
    }

    pub(crate) fn live_apps(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.apps.len()).filter(|a| self.apps[*a].live)
    }

    fn app_info(&self, a: usize) -> AppInfo {
        let app = &self.apps[a];
        AppInfo {
            slot: AppSlot(a as u32),
            id: app.id,
            usage: app.usage,
            demand: self.app_demand(a),
            fair_share: app.fair_share,
            start: app.start,
            weight: app.weight,
        }
    }

    pub(crate) fn app_by_id(&self, id: AppId) -> usize {
        self.apps
            .iter()
            .position(|a| a.id == id)
            .expect("known app")
    }

    pub(crate) fn container_label(&self, id: &ContainerId) -> String {
        let app = self
            .apps
            .iter()
            .find(|a| a.id == id.app())
            .map_or("?", |a| a.name.as_str());
        format!("{app}#{}", id.seq)
    }

    pub(crate) fn app_label(&self, id: AppId) -> &str {
        &self.apps[self.app_by_id(id)].name
    }
}

impl TestQueue {
    fn new(path: QueuePath, parent: Option<usize>) -> TestQueue {
        TestQueue {
            path,
            parent,
            policy: Policy::Fair,
            min_share: Resource::ZERO,
            fair_share: Resource::ZERO,
            min_share_timeout: Duration::MAX,
            fair_share_timeout: Duration::MAX,
            threshold: 0.5,
            allow_preemption_from: true,
            weight: 1.0,
        }
    }
}

impl PreemptionView for TestView {
    fn cluster_capacity(&self) -> Resource {
        self.nodes.iter().map(|n| n.capability).sum()
    }

    fn cluster_allocated(&self) -> Resource {
        self.nodes.iter().map(|n| n.allocated).sum()
    }

    fn queue_slots(&self) -> usize {
        self.queues.len()
    }

    fn queues(&self) -> impl Iterator<Item = QueueInfo<'_>> {
        (0..self.queues.len()).map(|q| {
            let queue = &self.queues[q];
            QueueInfo {
                slot: QueueSlot(q as u32),
                parent: queue.parent.map(|p| QueueSlot(p as u32)),
                path: &queue.path,
                is_leaf: self.is_leaf(q),
                policy: queue.policy,
                min_share: queue.min_share,
                demand: self.queue_demand(q),
                usage: self.queue_usage(q),
                fair_share: queue.fair_share,
                min_share_preemption_timeout: queue.min_share_timeout,
                fair_share_preemption_timeout: queue.fair_share_timeout,
                fair_share_preemption_threshold: queue.threshold,
                preemptable: self.preemptable(q),
                weight: queue.weight,
            }
        })
    }

    fn app_slots(&self) -> usize {
        self.apps.len()
    }

    fn apps(&self, leaf: QueueSlot) -> impl Iterator<Item = AppInfo> {
        let q = leaf.0 as usize;
        let policy = self.queues[q].policy;
        let cluster = self.cluster_capacity();
        let mut infos: Vec<AppInfo> = self
            .live_apps()
            .filter(|a| self.apps[*a].queue == q)
            .map(|a| self.app_info(a))
            .collect();
        // The policies' app order, for apps without min shares or weights:
        // fair by memory used, drf by dominant share, fifo by start; then
        // start, then id. Apps without unmet demand go last.
        infos.sort_by(|a, b| {
            let wants = |x: &AppInfo| (x.demand - x.usage).is_zero();
            let used = |x: &AppInfo| match policy {
                Policy::Fair => x.usage.memory_mb() as f64,
                Policy::Drf => x.usage.dominant_share(&cluster),
                Policy::Fifo => 0.0,
            };
            wants(a)
                .cmp(&wants(b))
                .then_with(|| used(a).total_cmp(&used(b)))
                .then_with(|| a.start.cmp(&b.start))
                .then_with(|| a.id.cmp(&b.id))
        });
        infos.into_iter()
    }

    fn asks(&self, app: AppSlot) -> impl Iterator<Item = Ask<'_>> {
        self.apps[app.0 as usize].asks.iter().map(|ask| Ask {
            priority: ask.priority,
            capability: ask.capability,
            location: match &ask.location {
                TestLocation::Any => Location::Any,
                TestLocation::Rack(r) => Location::Rack(r),
                TestLocation::Node(n) => Location::Node(n),
            },
            count: ask.count,
            relax_locality: ask.relax,
        })
    }

    fn node_slots(&self) -> usize {
        self.nodes.len()
    }

    fn nodes(&self) -> impl Iterator<Item = NodeSlot> {
        (0..self.nodes.len()).map(|n| NodeSlot(n as u32))
    }

    fn nodes_at(&self, location: Location<'_>) -> impl Iterator<Item = NodeSlot> {
        let matching: Vec<NodeSlot> = (0..self.nodes.len())
            .filter(|n| {
                let node = &self.nodes[*n];
                match location {
                    Location::Any => true,
                    Location::Rack(r) => node.rack == r,
                    Location::Node(name) => node.id.host() == name,
                }
            })
            .map(|n| NodeSlot(n as u32))
            .collect();
        matching.into_iter()
    }

    fn node(&self, node: NodeSlot) -> Option<NodeInfo<'_>> {
        let n = node.0 as usize;
        let info = self.nodes.get(n)?;
        let earmarked = self
            .earmarks
            .iter()
            .filter(|((en, _), _)| *en == n)
            .map(|(_, r)| *r)
            .sum();
        Some(NodeInfo {
            slot: node,
            id: &info.id,
            rack: &info.rack,
            capability: info.capability,
            unallocated: info.capability - info.allocated,
            reserved: info.reserved,
            earmarked,
        })
    }

    fn containers(&self, node: NodeSlot) -> impl Iterator<Item = ContainerInfo> {
        let n = node.0 as usize;
        self.containers
            .iter()
            .filter(move |(_, c)| c.node == n)
            .map(|(id, _)| self.container_info(*id))
    }

    fn app_containers(&self, app: AppSlot) -> impl Iterator<Item = (NodeSlot, ContainerInfo)> {
        let a = app.0 as usize;
        self.containers
            .iter()
            .filter(move |(_, c)| c.app == a)
            .map(|(id, c)| (NodeSlot(c.node as u32), self.container_info(*id)))
    }

    fn app_holdings(&self, app: AppSlot) -> Option<AppHoldings> {
        if self.no_holdings {
            return None;
        }
        let mut res = AppHoldings::default();
        for c in self.containers.values().filter(|c| c.app == app.0 as usize) {
            let least = if c.is_am {
                &mut res.least_am
            } else {
                &mut res.least_non_am
            };
            let mut size = c.resource;
            if self.loose_holdings {
                // Half of it is still a bound no container is below.
                size = size.map(|_, v| v / 2);
            }
            *least = Some(least.map_or(size, |l| l.component_min(size)));
        }
        Some(res)
    }
}

impl TestView {
    fn container_info(&self, id: ContainerId) -> ContainerInfo {
        let c = &self.containers[&id];
        ContainerInfo {
            id,
            app: AppSlot(c.app as u32),
            resource: c.resource,
            priority: c.priority,
            is_am: c.is_am,
            launched: c.launched,
        }
    }
}

/// Runs a fixture, state lines and commands in order, and compares what
/// the commands print with `expect`.
pub(crate) fn check(fixture: &str, expect: Expect) {
    expect.assert_eq(&run(fixture));
}

/// Runs a fixture and returns what its commands print.
pub(crate) fn run(fixture: &str) -> String {
    run_with(fixture, Preemptor::new())
}

/// Runs a fixture with a preemptor set up by the caller.
pub(crate) fn run_with(fixture: &str, mut preemptor: Preemptor) -> String {
    let mut view = TestView::new();
    let mut last = PreemptionOutput::default();
    let mut now = Time::ZERO;
    let mut acc = String::new();
    for line in fixture_lines(fixture) {
        let Some(command) = view.read_line(&line) else {
            continue;
        };
        match command {
            Command::Update(t) => {
                now = t;
                let settings = view.settings.clone();
                last = preemptor
                    .update(now, &view, &settings)
                    .expect("a consistent view");
                render_output(&view, now, &last, &mut acc);
            }
            Command::End(id) => {
                let released = preemptor.container_ended(id).is_some();
                view.remove_container(&id);
                let what = if released { ": released" } else { "" };
                writeln!(acc, "end {}{what}", view.container_label(&id)).unwrap();
            }
            Command::Apply => view.apply(&last),
            Command::Heartbeat => {
                for line in view.heartbeat(now) {
                    writeln!(acc, "  allocated {line}").unwrap();
                }
            }
            Command::Usage => render_usage(&view, &mut acc),
        }
    }
    acc
}

/// The fixture's lines as words, comments and blank lines dropped.
fn fixture_lines(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines().filter_map(|line| {
        let words: Vec<&str> = line
            .split(" #")
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        (!words.is_empty() && !words[0].starts_with('#')).then_some(words)
    })
}

/// One update's output as indented lines.
pub(crate) fn render_output(view: &TestView, now: Time, out: &PreemptionOutput, acc: &mut String) {
    let dry = if out.dry_run { " (dry run)" } else { "" };
    writeln!(
        acc,
        "update {now}: utilisation {:.0}%{dry}",
        out.utilization * 100.0
    )
    .unwrap();
    for s in &out.starved {
        writeln!(
            acc,
            "  starved {} in {}: fair-share {} + min-share {}; looking for {}",
            view.app_label(s.app),
            s.queue,
            res(s.fair_share_starvation),
            res(s.min_share_starvation),
            res(s.requested),
        )
        .unwrap();
        if s.victims.is_empty() {
            writeln!(acc, "    no victims").unwrap();
        }
        for set in &s.victims {
            let victims: Vec<String> = set
                .containers
                .iter()
                .map(|v| {
                    let am = if v.is_am { " am" } else { "" };
                    format!(
                        "{} {}{am}",
                        view.container_label(&v.container),
                        res(v.resource)
                    )
                })
                .collect();
            writeln!(
                acc,
                "    on {} for {}: {}",
                set.node.host(),
                res(set.capability),
                victims.join(", ")
            )
            .unwrap();
        }
    }
    for t in &out.transitions {
        writeln!(acc, "  {}", render_transition(view, t)).unwrap();
    }
    for app in &out.claims_ended {
        writeln!(acc, "  claim ended: {}", view.app_label(*app)).unwrap();
    }
    if let Some(deadline) = out.next_deadline {
        writeln!(acc, "  next deadline {deadline}").unwrap();
    }
}

pub(crate) fn render_transition(view: &TestView, t: &Transition) -> String {
    let what = match t.kind {
        TransitionKind::Warned { deadline } => format!("warned, deadline {deadline}"),
        TransitionKind::Killed => "killed".to_owned(),
        TransitionKind::Released => "released".to_owned(),
        TransitionKind::Withdrawn { reason } => format!("withdrawn ({reason})"),
    };
    format!(
        "{} on {} for {}: {what}",
        view.container_label(&t.container),
        t.node.host(),
        view.app_label(t.for_app)
    )
}

fn render_usage(view: &TestView, acc: &mut String) {
    for q in 1..view.queues.len() {
        let queue = &view.queues[q];
        writeln!(
            acc,
            "  {} uses {} (fair share {})",
            queue.path,
            res(view.queue_usage(q)),
            res(queue.fair_share)
        )
        .unwrap();
    }
    for a in view.live_apps() {
        let app = &view.apps[a];
        writeln!(
            acc,
            "    {} uses {} (fair share {})",
            app.name,
            res(app.usage),
            res(app.fair_share)
        )
        .unwrap();
    }
}

/// `1024,1`.
pub(crate) fn res(r: Resource) -> String {
    format!("{},{}", r.memory_mb(), r.vcores())
}

fn key_value(word: &str) -> (&str, &str) {
    word.split_once('=').unwrap_or((word, ""))
}

fn resource(text: &str) -> Resource {
    let (mb, vcores) = text.split_once(',').expect("<mb>,<vcores>");
    Resource::new(mb.parse().expect("memory"), vcores.parse().expect("vcores"))
}

fn count_and_size(text: &str) -> (u32, Resource) {
    let (n, size) = text.split_once('x').expect("<n>x<mb>,<vcores>");
    (n.parse().expect("count"), resource(size))
}

fn duration(text: &str) -> Duration {
    text.parse().expect("duration")
}

fn time(text: &str) -> Time {
    match text.parse::<u64>() {
        Ok(ms) => Time::from_millis(ms),
        Err(_) => Time::from_millis(duration(text).as_millis()),
    }
}
