//! A text driver for the core: scenario commands in (`node n1 rack=/r1
//! 8192mb 8vc`, `submit app1 queue=root.a user=alice`, `ask app1
//! 4x1024mb,1vc`, `heartbeat n1`, `advance 5s`, `show queues`, ...), a
//! rendering of what the ResourceManager decided out.
//!
//! Files of such commands with their expected output are run by
//! [`run_file`] (raft-rs's datadriven format: a command, `----`, the
//! expected output, a blank line). Reading and rewriting files is the test
//! harness's job; this module only turns text into text.
//!
//! The commands (sizes are `1024mb,1vc`, `4g`, `8vc`; times `500ms`, `2s`, `1m`):
//!
//! - `config` with an allocation file on the following lines: replace the allocation file.
//! - `site NAME=VALUE ...`: set site properties (a short name is under
//!   `yarn.scheduler.fair.`); every `site` line adds to the earlier ones.
//! - `node NAME [rack=/R] [SIZE] [containers=C[:SIZE[:PRIO]]/...]`: register
//!   (or re-register) a node, listing the containers it still runs
//!   (`app1#2`, size default `1024mb,1vc`, request priority default 1).
//! - `unregister NAME`, `decommission NAME`: a node leaves.
//! - `drain NAME [timeout=DURATION] [apps=yes|no]`, `recommission NAME`: a
//!   graceful decommission (no timeout unless given; waiting for the apps
//!   that ran on the node unless `apps=no`), and its end by an operator.
//! - `resize NAME SIZE [timeout=DURATION]`: an operator changes what a node
//!   offers (with an over-commit timeout if given).
//! - `submit APP [queue=Q] [user=U] [groups=G1,G2] [prio=N] [am=SIZE|unmanaged]
//!   [id=application_<ts>_<seq>] [lifetime=DURATION]` (the id defaults to a
//!   fresh one from the RM; the app is killed a lifetime after its submission).
//! - `lifetime APP at=TIME`: give the app a new lifetime expiry (`TIME` as a
//!   duration since the scenario's start, `40s`).
//! - `register APP`: the AM registers.
//! - `ask APP [prio=N] [at=LOC,LOC] [relax=false] COUNTxSIZE ...`: an
//!   allocate call with asks (at every listed location; `*` by default).
//! - `release APP CONTAINER ...`, `blacklist APP [+]NAME|-NAME ...`: allocate calls.
//! - `heartbeat NODE|all [done=CONTAINER[:EXIT],...] [times=N]
//!   [unhealthy=REPORT]`: node heartbeats, reporting the running containers
//!   and the listed ones as complete (exit 0 unless given), and the node
//!   unhealthy with that report (underscores read as spaces) if given;
//!   `times` repeats the heartbeat.
//! - `finish APP [succeeded|failed|killed]`, `kill APP`, `move APP QUEUE`, `priority APP N`.
//! - `advance DURATION`: move the clock, ticking at every deadline on the way; `tick`.
//! - `show queues|apps|nodes|time`, `updates on|off` (show update passes).
//! - `explain APP`: why the app is or is not getting containers now (the
//!   core's explanation: its outlook and summary, then each reason, `holds`
//!   when it alone holds the app back, `note` for context), with nodes and
//!   apps written by their scenario names.
//!
//! Containers are written `app1#3` (`app1#3@2` for attempt 2). A node name
//! the scenario never registered, or an app written as a literal id
//! (`application_1_0099`), is passed to the core as is, so its errors show.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use weft_core::{
    AllocateRequest, Ask, ContainerState, ContainerStatus, CoreSettings, Drain, Event, FinalStatus,
    Input, LifetimeError, NodeHeartbeat, NodeRegistration, Output, RecoveredContainer, Reply,
    ResourceManager, Submission,
};
use weft_model::{
    AppId, AppPriority, ContainerId, Duration, NodeId, Priority, QueuePath, Resource, Time,
};
use weft_queue_tree::AllocConfig;
use weft_queue_tree::alloc_file::parse_alloc_file;
use weft_queue_tree::site::{HadoopConfig, SchedulerSettings};

/// A scenario in progress: the RM, the clock, and the names the text uses.
pub struct Scenario {
    rm: ResourceManager,
    now: Time,
    /// The core time the scenario started at; every time it reads or shows
    /// is counted from here, so a scenario reads the same from any start.
    start: Time,
    config: AllocConfig,
    properties: Vec<(String, String)>,
    nodes: BTreeMap<String, NodeId>,
    node_names: BTreeMap<NodeId, String>,
    apps: BTreeMap<String, AppId>,
    app_names: BTreeMap<AppId, String>,
    /// Containers each node runs, as the simulated node managers know them.
    running: BTreeMap<String, Vec<ContainerId>>,
    show_updates: bool,
}

impl Default for Scenario {
    fn default() -> Scenario {
        Scenario::new()
    }
}

impl Scenario {
    /// An empty cluster with default settings and queues.
    pub fn new() -> Scenario {
        Scenario::starting_at(Time::ZERO)
    }

    /// `new`, with the core's clock starting at `start` rather than zero,
    /// as a driver whose time origin lies before its own start (the RM
    /// service after a restart with finished apps in its state store)
    /// starts it. The text in and out is the same as from zero.
    pub fn starting_at(start: Time) -> Scenario {
        let config = AllocConfig::default();
        Scenario {
            rm: ResourceManager::new(
                config.clone(),
                settings_from(&[]).expect("defaults are valid"),
                start,
            ),
            now: start,
            start,
            config,
            properties: Vec::new(),
            nodes: BTreeMap::new(),
            node_names: BTreeMap::new(),
            apps: BTreeMap::new(),
            app_names: BTreeMap::new(),
            running: BTreeMap::new(),
            show_updates: false,
        }
    }

    /// The ResourceManager being driven.
    pub fn rm(&self) -> &ResourceManager {
        &self.rm
    }

    /// Runs one command (its first line, plus any payload lines) and returns
    /// what happened, one line per decision. Invariants are checked after
    /// every command.
    pub fn run(&mut self, command: &str) -> Result<String, String> {
        let mut lines = command.lines();
        let head = lines.next().unwrap_or("").trim();
        let payload: String = lines.collect::<Vec<_>>().join("\n");
        let mut words = head.split_whitespace();
        let verb = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        let out = match verb {
            "config" => self.config(&payload),
            "site" => self.site(&args),
            "node" => self.node(&args),
            "unregister" | "decommission" => self.unregister(&args, verb == "decommission"),
            "drain" => self.drain(&args),
            "resize" => self.resize(&args),
            "recommission" => {
                let node = self.node_id(args.first().copied())?;
                Ok(self.input(Input::NodeRecommissioned { node }))
            }
            "submit" => self.submit(&args),
            "register" => self.register(&args),
            "ask" => self.ask(&args),
            "release" => self.release(&args),
            "blacklist" => self.blacklist(&args),
            "heartbeat" => self.heartbeat(&args),
            "finish" => self.finish(&args),
            "kill" => self.kill(&args),
            "move" => self.move_app(&args),
            "priority" => self.priority(&args),
            "lifetime" => self.lifetime(&args),
            "advance" => self.advance(&args),
            "tick" => Ok(self.input(Input::Tick)),
            "show" => self.show(&args),
            "explain" => self.explain(&args),
            "updates" => {
                self.show_updates = args.first() == Some(&"on");
                Ok(String::new())
            }
            "" => Ok(String::new()),
            other => Err(format!("unknown command {other:?}")),
        }?;
        self.rm
            .check_invariants()
            .map_err(|e| format!("after {head:?}: {e}"))?;
        Ok(out)
    }

    fn config(&mut self, xml: &str) -> Result<String, String> {
        let loaded = parse_alloc_file(xml).map_err(|e| e.to_string())?;
        self.config = loaded.config.clone();
        let out = self.input(Input::AllocConfigReplaced(Box::new(loaded.config)));
        let mut text = String::new();
        for w in &loaded.warnings {
            let _ = writeln!(text, "warning: {w}");
        }
        text.push_str(&out);
        Ok(text)
    }

    fn site(&mut self, args: &[&str]) -> Result<String, String> {
        for arg in args {
            let (k, v) = arg
                .split_once('=')
                .ok_or_else(|| format!("expected name=value, got {arg:?}"))?;
            let name = if k.starts_with("yarn.") {
                k.to_owned()
            } else {
                format!("yarn.scheduler.fair.{k}")
            };
            self.properties.push((name, v.to_owned()));
        }
        let settings = settings_from(&self.properties)?;
        Ok(self.input(Input::SettingsReplaced(Box::new(settings))))
    }

    fn node(&mut self, args: &[&str]) -> Result<String, String> {
        let name = *args.first().ok_or("node needs a name")?;
        let mut rack = "/default-rack".to_owned();
        let mut capability = Resource::new(8192, 8);
        let mut running = Vec::new();
        for arg in &args[1..] {
            if let Some(r) = arg.strip_prefix("rack=") {
                rack = r.to_owned();
            } else if let Some(list) = arg.strip_prefix("containers=") {
                for item in list.split('/').filter(|i| !i.is_empty()) {
                    running.push(self.recovered_container(item)?);
                }
            } else {
                capability = parse_resource_arg(arg)?;
            }
        }
        let id = NodeId::new(name, 8041).map_err(|e| e.to_string())?;
        self.nodes.insert(name.to_owned(), id.clone());
        self.node_names.insert(id.clone(), name.to_owned());
        // The simulated node runs exactly what it reports.
        self.running.insert(
            name.to_owned(),
            running
                .iter()
                .map(|c: &RecoveredContainer| c.container)
                .collect(),
        );
        Ok(self.input(Input::NodeRegistered(NodeRegistration {
            node: id,
            rack,
            capability,
            http_address: format!("{name}:8042"),
            running,
        })))
    }

    /// `app1#2`, `app1#2:2048mb,1vc` or `app1#2:2048mb,1vc:3` (request priority).
    fn recovered_container(&self, item: &str) -> Result<RecoveredContainer, String> {
        let mut parts = item.split(':');
        let container = self.container_id(parts.next().unwrap_or(""))?;
        let resource = match parts.next() {
            Some(size) => parse_resource_arg(size)?,
            None => Resource::new(1024, 1),
        };
        let priority = match parts.next() {
            Some(p) => Priority(p.parse().map_err(|_| format!("bad priority in {item:?}"))?),
            None => Priority(1),
        };
        if parts.next().is_some() {
            return Err(format!("expected CONTAINER[:SIZE[:PRIO]], got {item:?}"));
        }
        Ok(RecoveredContainer {
            container,
            resource,
            priority,
        })
    }

    fn unregister(&mut self, args: &[&str], decommissioned: bool) -> Result<String, String> {
        let node = self.node_id(args.first().copied())?;
        Ok(self.input(Input::NodeUnregistered {
            node,
            decommissioned,
        }))
    }

    /// `drain NODE [timeout=DURATION] [apps=no]`: a graceful decommission,
    /// with no timeout unless given, waiting for the node's apps unless
    /// `apps=no`.
    fn drain(&mut self, args: &[&str]) -> Result<String, String> {
        let node = self.node_id(args.first().copied())?;
        let mut drain = Drain {
            timeout: None,
            wait_for_apps: true,
            also_wait_for: Vec::new(),
        };
        for arg in args.iter().skip(1) {
            match arg.split_once('=') {
                Some(("timeout", d)) => {
                    drain.timeout = Some(
                        d.parse()
                            .map_err(|e: weft_model::DurationParseError| e.to_string())?,
                    );
                }
                Some(("apps", "no")) => drain.wait_for_apps = false,
                Some(("apps", "yes")) => drain.wait_for_apps = true,
                _ => {
                    return Err(format!(
                        "drain takes timeout=DURATION and apps=yes|no, not {arg:?}"
                    ));
                }
            }
        }
        Ok(self.input(Input::NodeDecommissioning { node, drain }))
    }

    /// `resize NODE SIZE [timeout=DURATION]`: an operator changes what the
    /// node offers, with an over-commit timeout if given.
    fn resize(&mut self, args: &[&str]) -> Result<String, String> {
        let node = self.node_id(args.first().copied())?;
        let capability = parse_resource_arg(args.get(1).ok_or("resize needs a size")?)?;
        let mut overcommit_timeout = None;
        for arg in args.iter().skip(2) {
            let d = arg
                .strip_prefix("timeout=")
                .ok_or_else(|| format!("resize takes timeout=DURATION, not {arg:?}"))?;
            overcommit_timeout = Some(
                d.parse()
                    .map_err(|e: weft_model::DurationParseError| e.to_string())?,
            );
        }
        Ok(self.input(Input::NodeResized {
            node,
            capability,
            overcommit_timeout,
        }))
    }

    fn submit(&mut self, args: &[&str]) -> Result<String, String> {
        let name = *args.first().ok_or("submit needs an app name")?;
        if self.apps.contains_key(name) {
            return Err(format!("app {name} already submitted in this scenario"));
        }
        let literal = args[1..]
            .iter()
            .find_map(|a| a.strip_prefix("id="))
            .map(|id| id.parse::<AppId>().map_err(|e| e.to_string()))
            .transpose()?;
        let app = match literal {
            Some(id) => id,
            None => {
                let Reply::NewApplication(new) =
                    self.rm.handle(self.now, Input::NewApplication).reply
                else {
                    return Err("no application id".into());
                };
                new.app
            }
        };
        let mut sub = Submission {
            app,
            user: "user".into(),
            groups: Vec::new(),
            queue: None,
            priority: AppPriority(0),
            am_resource: Some(Resource::new(1024, 1)),
            name: name.to_owned(),
            app_type: "YARN".into(),
            tags: Vec::new(),
            max_attempts: None,
            lifetime: None,
        };
        for arg in &args[1..] {
            let (k, v) = arg
                .split_once('=')
                .ok_or_else(|| format!("expected name=value, got {arg:?}"))?;
            match k {
                "queue" => sub.queue = Some(v.to_owned()),
                "user" => sub.user = v.to_owned(),
                "groups" => sub.groups = v.split(',').map(str::to_owned).collect(),
                "prio" => {
                    sub.priority =
                        AppPriority(v.parse().map_err(|_| format!("bad priority {v:?}"))?)
                }
                "id" => {}
                "am" if v == "unmanaged" => sub.am_resource = None,
                "am" => sub.am_resource = Some(parse_resource_arg(v)?),
                "lifetime" => {
                    sub.lifetime = Some(
                        v.parse()
                            .map_err(|e: weft_model::DurationParseError| e.to_string())?,
                    )
                }
                other => return Err(format!("unknown submit option {other:?}")),
            }
        }
        self.apps.insert(name.to_owned(), app);
        self.app_names.entry(app).or_insert_with(|| name.to_owned());
        Ok(self.input(Input::AppSubmitted(sub)))
    }

    fn register(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        Ok(self.input(Input::AmRegistered { app }))
    }

    fn ask(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        let mut asks = Vec::new();
        let mut priority = Priority(1);
        let mut at = "*".to_owned();
        let mut relax = true;
        let mut specs = Vec::new();
        for arg in &args[1..] {
            if let Some(p) = arg.strip_prefix("prio=") {
                priority = Priority(p.parse().map_err(|_| format!("bad priority {p:?}"))?);
            } else if let Some(a) = arg.strip_prefix("at=") {
                at = a.to_owned();
            } else if let Some(r) = arg.strip_prefix("relax=") {
                relax = r != "false";
            } else {
                specs.push(*arg);
            }
        }
        for spec in specs {
            let (count, size) = spec
                .split_once('x')
                .ok_or_else(|| format!("expected COUNTxSIZE, got {spec:?}"))?;
            let count: u32 = count
                .parse()
                .map_err(|_| format!("bad count in {spec:?}"))?;
            for location in at.split(',') {
                asks.push(Ask {
                    priority,
                    resource_name: location.to_owned(),
                    capability: parse_resource_arg(size)?,
                    num_containers: count,
                    relax_locality: relax,
                });
            }
        }
        Ok(self.allocate(app, asks, Vec::new(), Vec::new(), Vec::new()))
    }

    fn release(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        let mut releases = Vec::new();
        for arg in &args[1..] {
            releases.push(self.container_id(arg)?);
        }
        Ok(self.allocate(app, Vec::new(), releases, Vec::new(), Vec::new()))
    }

    fn blacklist(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        let (mut add, mut remove) = (Vec::new(), Vec::new());
        for arg in &args[1..] {
            match arg.strip_prefix('-') {
                Some(name) => remove.push(name.to_owned()),
                None => add.push(arg.trim_start_matches('+').to_owned()),
            }
        }
        Ok(self.allocate(app, Vec::new(), Vec::new(), add, remove))
    }

    fn allocate(
        &mut self,
        app: AppId,
        asks: Vec<Ask>,
        releases: Vec<ContainerId>,
        blacklist_additions: Vec<String>,
        blacklist_removals: Vec<String>,
    ) -> String {
        let out = self.rm.handle(
            self.now,
            Input::Allocate(AllocateRequest {
                app,
                asks,
                releases,
                blacklist_additions,
                blacklist_removals,
                progress: 0.0,
            }),
        );
        let mut text = self.render_events(&out);
        match out.reply {
            Reply::Allocate(Ok(reply)) => {
                let mut parts = Vec::new();
                if !reply.allocated.is_empty() {
                    let names: Vec<String> = reply
                        .allocated
                        .iter()
                        .map(|c| self.container_name(&c.container))
                        .collect();
                    parts.push(format!("got {}", names.join(" ")));
                }
                if !reply.completed.is_empty() {
                    let names: Vec<String> = reply
                        .completed
                        .iter()
                        .map(|c| {
                            format!("{}({})", self.container_name(&c.container), c.exit_status)
                        })
                        .collect();
                    parts.push(format!("completed {}", names.join(" ")));
                }
                if let Some(p) = &reply.preemption {
                    let names: Vec<String> = p
                        .containers
                        .iter()
                        .map(|c| self.container_name(c))
                        .collect();
                    parts.push(format!(
                        "preempt {} by {}",
                        names.join(" "),
                        self.shown(p.deadline)
                    ));
                }
                parts.push(format!("headroom {}", res(&reply.available)));
                if !reply.updated_nodes.is_empty() {
                    let nodes: Vec<String> = reply
                        .updated_nodes
                        .iter()
                        .map(|n| {
                            let name = self
                                .node_names
                                .get(&n.id)
                                .cloned()
                                .unwrap_or_else(|| n.id.to_string());
                            format!("{name} {}", n.state.yarn_name().to_lowercase())
                        })
                        .collect();
                    parts.push(format!("nodes changed: {}", nodes.join(" ")));
                }
                let _ = writeln!(text, "reply: {}", parts.join("; "));
            }
            Reply::Allocate(Err(e)) => {
                let _ = writeln!(text, "error: {e}");
            }
            _ => {}
        }
        text
    }

    fn heartbeat(&mut self, args: &[&str]) -> Result<String, String> {
        let target = *args.first().ok_or("heartbeat needs a node name or `all`")?;
        let mut finished: Vec<(ContainerId, i32)> = Vec::new();
        let mut times = 1;
        let mut unhealthy = None;
        for arg in &args[1..] {
            if let Some(n) = arg.strip_prefix("times=") {
                times = n.parse().map_err(|_| format!("bad repeat count {n:?}"))?;
                continue;
            }
            if let Some(report) = arg.strip_prefix("unhealthy=") {
                unhealthy = Some(report.replace('_', " "));
                continue;
            }
            let list = arg
                .strip_prefix("done=")
                .ok_or_else(|| format!("unknown heartbeat option {arg:?}"))?;
            for item in list.split(',') {
                let (c, exit) = match item.split_once(':') {
                    Some((c, e)) => (
                        c,
                        e.parse()
                            .map_err(|_| format!("bad exit status in {item:?}"))?,
                    ),
                    None => (item, 0),
                };
                finished.push((self.container_id(c)?, exit));
            }
        }
        let names: Vec<String> = if target == "all" {
            self.nodes.keys().cloned().collect()
        } else {
            vec![target.to_owned()]
        };
        let mut text = String::new();
        for round in 0..times {
            if round > 0 {
                // Completions are reported once.
                finished.clear();
            }
            text.push_str(&self.heartbeat_round(&names, &finished, unhealthy.as_deref())?);
        }
        Ok(text)
    }

    fn heartbeat_round(
        &mut self,
        names: &[String],
        finished: &[(ContainerId, i32)],
        unhealthy: Option<&str>,
    ) -> Result<String, String> {
        let mut text = String::new();
        for name in names {
            let node = self.node_id(Some(name))?;
            let running = self.running.entry(name.clone()).or_default();
            let mut statuses = Vec::new();
            for c in running.iter() {
                let state = match finished.iter().find(|(id, _)| id == c) {
                    Some((_, exit_status)) => ContainerState::Complete {
                        exit_status: *exit_status,
                    },
                    None => ContainerState::Running,
                };
                statuses.push(ContainerStatus {
                    container: *c,
                    state,
                });
            }
            running.retain(|c| !finished.iter().any(|(id, _)| id == c));
            let out = self.rm.handle(
                self.now,
                Input::NodeHeartbeat(NodeHeartbeat {
                    node,
                    statuses,
                    unhealthy: unhealthy.map(str::to_owned),
                }),
            );
            text.push_str(&self.render_events(&out));
            match out.reply {
                Reply::NodeHeartbeat(Ok(reply)) => {
                    let running = self.running.entry(name.clone()).or_default();
                    for (c, _) in &reply.containers_to_stop {
                        running.retain(|r| r != c);
                    }
                    for a in &reply.allocated {
                        running.push(a.container);
                    }
                }
                Reply::NodeHeartbeat(Err(e)) => {
                    let _ = writeln!(text, "error: {e}");
                }
                _ => {}
            }
        }
        Ok(text)
    }

    fn finish(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        let outcome = match args.get(1).copied() {
            None | Some("succeeded") => FinalStatus::Succeeded,
            Some("failed") => FinalStatus::Failed,
            Some("killed") => FinalStatus::Killed,
            Some(other) => return Err(format!("unknown outcome {other:?}")),
        };
        Ok(self.input(Input::AttemptFinished {
            app,
            outcome,
            diagnostics: String::new(),
        }))
    }

    fn kill(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        Ok(self.input(Input::KillApp {
            app,
            reason: "killed by the scenario".into(),
        }))
    }

    fn move_app(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        let queue = QueuePath::parse(args.get(1).ok_or("move needs a target queue")?)
            .map_err(|e| e.to_string())?;
        Ok(self.input(Input::MoveApp { app, queue }))
    }

    fn priority(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        let p: i32 = args
            .get(1)
            .ok_or("priority needs a value")?
            .parse()
            .map_err(|_| "bad priority")?;
        Ok(self.input(Input::SetAppPriority {
            app,
            priority: AppPriority(p),
        }))
    }

    /// `lifetime APP at=TIME`: a new lifetime expiry, `TIME` after the start.
    fn lifetime(&mut self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        let at = args
            .get(1)
            .and_then(|a| a.strip_prefix("at="))
            .ok_or("lifetime takes an app and at=TIME (a duration since the start, 40s)")?;
        let since_start: Duration = at
            .parse()
            .map_err(|e: weft_model::DurationParseError| e.to_string())?;
        let expiry = self.start + since_start;
        Ok(self.input(Input::SetAppLifetime { app, expiry }))
    }

    fn advance(&mut self, args: &[&str]) -> Result<String, String> {
        let d: Duration = args
            .first()
            .ok_or("advance needs a duration")?
            .parse()
            .map_err(|e: weft_model::DurationParseError| e.to_string())?;
        let target = self.now + d;
        let mut text = String::new();
        // Visit every deadline on the way, as a driver would.
        while let Some(deadline) = self.rm.next_deadline().filter(|d| *d <= target) {
            self.now = deadline.max(self.now);
            text.push_str(&self.input(Input::Tick));
            if deadline <= self.now && self.rm.next_deadline() == Some(deadline) {
                break;
            }
        }
        self.now = target;
        text.push_str(&self.input(Input::Tick));
        Ok(text)
    }

    fn show(&mut self, args: &[&str]) -> Result<String, String> {
        match args.first().copied() {
            Some("queues") => Ok(self.show_queues()),
            Some("apps") => Ok(self.show_apps()),
            Some("nodes") => Ok(self.show_nodes()),
            Some("time") => Ok(format!("{}\n", self.shown(self.now))),
            other => Err(format!("show what? {other:?} (queues, apps, nodes, time)")),
        }
    }

    fn explain(&self, args: &[&str]) -> Result<String, String> {
        let app = self.app_id(args.first().copied())?;
        let Some(ex) = self.rm.explain_app(app, self.now) else {
            return Ok(format!("no such application {app}\n"));
        };
        let mut text = format!("{}: {}\n", ex.outlook.name(), self.named(&ex.summary));
        let mut line = |scope: String, r: &weft_core::Reason| {
            let _ = writeln!(
                text,
                "  {} {scope}: {}",
                if r.blocking { "holds" } else { "note " },
                self.named(&r.kind.to_string())
            );
        };
        for r in &ex.reasons {
            line("app".to_owned(), r);
        }
        for ask in &ex.asks {
            for r in &ask.reasons {
                line(ask.label(), r);
            }
        }
        Ok(text)
    }

    /// `text` with node ids (`n1:8041`) and app ids written by their scenario names.
    fn named(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (id, name) in &self.node_names {
            text = text.replace(&id.to_string(), name);
        }
        // Longest first, so that no id is replaced inside a longer one.
        let mut apps: Vec<(String, &String)> = self
            .app_names
            .iter()
            .map(|(id, name)| (id.to_string(), name))
            .collect();
        apps.sort_by_key(|(id, _)| std::cmp::Reverse(id.len()));
        for (id, name) in apps {
            text = text.replace(&id, name);
        }
        text
    }

    fn show_queues(&self) -> String {
        let mut rows = vec![vec![
            "queue".to_owned(),
            "policy".to_owned(),
            "weight".to_owned(),
            "min".to_owned(),
            "max".to_owned(),
            "usage".to_owned(),
            "demand".to_owned(),
            "fair".to_owned(),
            "steady".to_owned(),
            "apps".to_owned(),
        ]];
        for q in self.rm.queue_reports() {
            let t = &q.tree;
            rows.push(vec![
                t.path.to_string(),
                t.policy.to_string(),
                format!("{}", t.weight),
                res(&t.min_share),
                res(&t.max_share),
                res(&t.usage),
                res(&t.demand),
                res(&t.fair_share),
                res(&t.steady_fair_share),
                if t.n_waiting_apps > 0 {
                    format!("{}+{}w", t.n_runnable_apps, t.n_waiting_apps)
                } else {
                    t.n_runnable_apps.to_string()
                },
            ]);
        }
        table(&rows)
    }

    fn show_apps(&self) -> String {
        let mut rows = vec![vec![
            "app".to_owned(),
            "state".to_owned(),
            "queue".to_owned(),
            "usage".to_owned(),
            "pending".to_owned(),
            "fair".to_owned(),
            "containers".to_owned(),
        ]];
        for r in self.rm.app_reports() {
            rows.push(vec![
                self.app_name(&r.record.id),
                r.record.state.to_string(),
                r.record.queue.to_string(),
                res(&r.allocated),
                res(&r.pending),
                res(&r.fair_share),
                r.running_containers.to_string(),
            ]);
        }
        table(&rows)
    }

    fn show_nodes(&self) -> String {
        let mut rows = vec![vec![
            "node".to_owned(),
            "rack".to_owned(),
            "state".to_owned(),
            "allocated".to_owned(),
            "capability".to_owned(),
            "reserved".to_owned(),
            "containers".to_owned(),
        ]];
        for n in self.rm.node_reports() {
            rows.push(vec![
                self.node_names
                    .get(&n.id)
                    .cloned()
                    .unwrap_or_else(|| n.id.to_string()),
                n.rack.clone(),
                n.state.yarn_name().to_lowercase(),
                res(&n.allocated),
                res(&n.capability),
                res(&n.reserved),
                n.n_containers.to_string(),
            ]);
        }
        table(&rows)
    }

    fn input(&mut self, input: Input) -> String {
        let out = self.rm.handle(self.now, input);
        let mut text = self.render_events(&out);
        match &out.reply {
            Reply::NodeRegistered(Err(e))
            | Reply::NodeUnregistered(Err(e))
            | Reply::NodeState(Err(e)) => {
                let _ = writeln!(text, "error: {e}");
            }
            Reply::NodeState(Ok(state)) => {
                let _ = writeln!(text, "node is {}", state.yarn_name().to_lowercase());
            }
            Reply::NodeResized(Err(e)) => {
                let _ = writeln!(text, "error: {e}");
            }
            Reply::Submitted(Err(e)) => {
                let _ = writeln!(text, "error: {e}");
            }
            Reply::AmRegistered(Err(e)) | Reply::Done(Err(e)) => {
                let _ = writeln!(text, "error: {e}");
            }
            Reply::Moved(Err(e)) => {
                let _ = writeln!(text, "error: {e}");
            }
            Reply::LifetimeSet(Ok(expiry)) => {
                let _ = writeln!(text, "expires at {}", self.shown(*expiry));
            }
            Reply::LifetimeSet(Err(LifetimeError::NotInFuture { app, expiry, now })) => {
                let e = LifetimeError::NotInFuture {
                    app: *app,
                    expiry: self.shown(*expiry),
                    now: self.shown(*now),
                };
                let _ = writeln!(text, "error: {e}");
            }
            Reply::LifetimeSet(Err(e)) => {
                let _ = writeln!(text, "error: {e}");
            }
            _ => {}
        }
        text
    }

    fn render_events(&self, out: &Output) -> String {
        let mut text = String::new();
        for event in &out.events {
            let line = match event {
                Event::NodeAdded {
                    node,
                    rack,
                    capability,
                } => {
                    format!(
                        "{} added in {rack} with {}",
                        self.node_name(node),
                        res(capability)
                    )
                }
                Event::NodeResized {
                    node,
                    capability,
                    offering,
                } => {
                    format!(
                        "{} resized to {}, offering {}",
                        self.node_name(node),
                        res(capability),
                        res(offering)
                    )
                }
                Event::NodeStateChanged {
                    node,
                    state,
                    reason,
                } => {
                    format!(
                        "{} {}: {reason}",
                        self.node_name(node),
                        state.yarn_name().to_lowercase()
                    )
                }
                Event::AppStateChanged {
                    app,
                    queue,
                    state,
                    diagnostics,
                } => {
                    format!("{} {state} in {queue}: {diagnostics}", self.app_name(app))
                }
                Event::ContainerAllocated {
                    container,
                    node,
                    resource,
                    priority,
                    locality,
                    is_am,
                    ..
                } => format!(
                    "{} on {} {} prio {priority} {locality}{}",
                    self.container_name(container),
                    self.node_name(node),
                    res(resource),
                    if *is_am { " AM" } else { "" }
                ),
                Event::ContainerReserved {
                    app,
                    node,
                    resource,
                    priority,
                } => format!(
                    "{} reserves {} for {} prio {priority}",
                    self.app_name(app),
                    self.node_name(node),
                    res(resource)
                ),
                Event::ReservationReleased { app, node, reason } => {
                    format!(
                        "{} unreserves {}: {reason}",
                        self.app_name(app),
                        self.node_name(node)
                    )
                }
                Event::ContainerCompleted {
                    container,
                    node,
                    exit_status,
                    diagnostics,
                    ..
                } => format!(
                    "{} ended on {} ({exit_status}): {diagnostics}",
                    self.container_name(container),
                    self.node_name(node)
                ),
                Event::ContainerStopOrdered {
                    container,
                    node,
                    reason,
                } => {
                    format!(
                        "stop {} on {}: {reason}",
                        self.container_name(container),
                        self.node_name(node)
                    )
                }
                Event::AttemptFinished { app, outcome, .. } => match outcome {
                    Some(o) => format!("{} attempt finished: {o:?}", self.app_name(app)),
                    None => format!("{} attempt failed", self.app_name(app)),
                },
                Event::QueuesChanged { created, removed } => {
                    let mut parts = Vec::new();
                    if !created.is_empty() {
                        parts.push(format!("created {}", join(created)));
                    }
                    if !removed.is_empty() {
                        parts.push(format!("removed {}", join(removed)));
                    }
                    format!("queues {}", parts.join(", "))
                }
                Event::Updated { at } => {
                    if !self.show_updates {
                        continue;
                    }
                    format!("update at {}", self.shown(*at))
                }
                Event::AppLifetimeExpired { app, queue, expiry } => {
                    format!(
                        "{} lifetime expired at {} in {queue}",
                        self.app_name(app),
                        self.shown(*expiry)
                    )
                }
                Event::AppLifetimeChanged {
                    app,
                    previous,
                    expiry,
                } => format!(
                    "{} lifetime expiry {} -> {}",
                    self.app_name(app),
                    previous.map_or_else(|| "none".to_owned(), |t| self.shown(t).to_string()),
                    self.shown(*expiry)
                ),
                Event::PlacementFailed { app, error } => {
                    format!("{} placement failed: {error}", self.app_name(app))
                }
                Event::Starved {
                    app,
                    queue,
                    fair_share_starvation,
                    min_share_starvation,
                    victims,
                    dry_run,
                } => {
                    let names: Vec<String> = victims
                        .iter()
                        .map(|(c, _)| self.container_name(c))
                        .collect();
                    format!(
                        "{}{} starved in {queue}: fair-share {} min-share {}; victims {}",
                        if *dry_run { "dry run: " } else { "" },
                        self.app_name(app),
                        res(fair_share_starvation),
                        res(min_share_starvation),
                        if names.is_empty() {
                            "none".to_owned()
                        } else {
                            names.join(" ")
                        }
                    )
                }
                Event::PreemptionWarned {
                    container,
                    for_app,
                    deadline,
                    ..
                } => format!(
                    "preempt {} for {} by {}",
                    self.container_name(container),
                    self.app_name(for_app),
                    self.shown(*deadline)
                ),
                Event::PreemptionKilled {
                    container, for_app, ..
                } => {
                    format!(
                        "kill {} for {}",
                        self.container_name(container),
                        self.app_name(for_app)
                    )
                }
                Event::PreemptionReleased { container, .. } => {
                    format!(
                        "{} left the preemption ledger",
                        self.container_name(container)
                    )
                }
                Event::PreemptionWithdrawn {
                    container, reason, ..
                } => {
                    format!(
                        "withdraw preemption of {}: {reason}",
                        self.container_name(container)
                    )
                }
                other => format!("{other:?}"),
            };
            text.push_str(&line);
            text.push('\n');
        }
        text
    }

    /// `t` as the scenario shows it: counted from its start.
    fn shown(&self, t: Time) -> Time {
        Time::from_millis(t.since(self.start).as_millis())
    }

    /// The node a name stands for; a name never registered goes to the core as
    /// `NAME:8041`, so the core's answer to an unknown node shows.
    fn node_id(&self, name: Option<&str>) -> Result<NodeId, String> {
        let name = name.ok_or("a node name is needed")?;
        match self.nodes.get(name) {
            Some(id) => Ok(id.clone()),
            None => NodeId::new(name, 8041).map_err(|e| e.to_string()),
        }
    }

    /// The app a name stands for, or a literal `application_<ts>_<seq>`.
    fn app_id(&self, name: Option<&str>) -> Result<AppId, String> {
        let name = name.ok_or("an app name is needed")?;
        if let Some(id) = self.apps.get(name) {
            return Ok(*id);
        }
        name.parse()
            .map_err(|_| format!("unknown app {name:?} (submit it, or write an application id)"))
    }

    /// `app1#3` (or `app1#3@2` for attempt 2).
    fn container_id(&self, text: &str) -> Result<ContainerId, String> {
        let (app, rest) = text
            .split_once('#')
            .ok_or_else(|| format!("expected APP#SEQ, got {text:?}"))?;
        let app = self.app_id(Some(app))?;
        let (seq, attempt) = match rest.split_once('@') {
            Some((s, a)) => (
                s,
                a.parse().map_err(|_| format!("bad attempt in {text:?}"))?,
            ),
            None => (rest, 1),
        };
        let seq: u64 = seq
            .parse()
            .map_err(|_| format!("bad container number in {text:?}"))?;
        Ok(ContainerId::new(
            weft_model::AttemptId::new(app, attempt),
            seq,
        ))
    }

    fn node_name(&self, id: &NodeId) -> String {
        self.node_names
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn app_name(&self, id: &AppId) -> String {
        self.app_names
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    fn container_name(&self, id: &ContainerId) -> String {
        let app = self.app_name(&id.app());
        if id.attempt.attempt == 1 {
            format!("{app}#{}", id.seq)
        } else {
            format!("{app}#{}@{}", id.seq, id.attempt.attempt)
        }
    }
}

/// Core settings from site properties given by their full names (as a
/// Hadoop configuration file would hold them), on top of the defaults.
pub fn settings_from(properties: &[(String, String)]) -> Result<CoreSettings, String> {
    let mut xml = String::from("<configuration>\n");
    for (k, v) in properties {
        let _ = writeln!(
            xml,
            "<property><name>{k}</name><value>{v}</value></property>"
        );
    }
    xml.push_str("</configuration>\n");
    let config = HadoopConfig::parse(&xml).map_err(|e| e.to_string())?;
    let (scheduler, _warnings) =
        SchedulerSettings::from_config(&config).map_err(|e| e.to_string())?;
    Ok(CoreSettings {
        scheduler,
        cluster_timestamp: 1,
        ..CoreSettings::default()
    })
}

/// `1024mb,1vc`, `4g,2vc`, `8192mb`, `8vc` (a missing part is 0... except for
/// node sizes, where the caller defaults it).
fn parse_resource_arg(text: &str) -> Result<Resource, String> {
    let mut memory = None;
    let mut vcores = None;
    for part in text.split(',') {
        let part = part.trim();
        if let Some(n) = part.strip_suffix("mb") {
            memory = Some(
                n.parse::<u64>()
                    .map_err(|_| format!("bad memory in {text:?}"))?,
            );
        } else if let Some(n) = part.strip_suffix('g') {
            memory = Some(
                n.parse::<u64>()
                    .map_err(|_| format!("bad memory in {text:?}"))?
                    * 1024,
            );
        } else if let Some(n) = part.strip_suffix("vc") {
            vcores = Some(
                n.parse::<u64>()
                    .map_err(|_| format!("bad vcores in {text:?}"))?,
            );
        } else {
            return Err(format!(
                "cannot read resource {text:?} (write e.g. 1024mb,1vc)"
            ));
        }
    }
    Ok(Resource::new(memory.unwrap_or(0), vcores.unwrap_or(0)))
}

/// `1024mb,1vc`; unbounded parts print as `∞`.
fn res(r: &Resource) -> String {
    let part = |v: u64, unit: &str| {
        if v == u64::MAX {
            "∞".to_owned()
        } else {
            format!("{v}{unit}")
        }
    };
    format!("{},{}", part(r.memory_mb(), "mb"), part(r.vcores(), "vc"))
}

fn join(paths: &[QueuePath]) -> String {
    paths
        .iter()
        .map(QueuePath::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Aligned columns, two spaces apart.
fn table(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < row.len() {
                line.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// One case of a scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The comment lines (and blank lines between them) before the command,
    /// kept so that rewriting a file keeps its explanations.
    pub comment: String,
    /// The command (first line) and payload.
    pub command: String,
    /// The expected output, as written.
    pub expected: String,
}

/// Splits a scenario file into cases: a command (possibly several lines),
/// a `----` line, the expected output, then a blank line. `#` lines between
/// cases are comments, kept with the case they precede.
pub fn parse_cases(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut lines = text.lines().peekable();
    loop {
        let mut comment: Vec<&str> = Vec::new();
        while let Some(line) = lines.peek() {
            if line.starts_with('#') {
                comment.push(line);
            } else if line.trim().is_empty() {
                if !comment.is_empty() {
                    comment.push("");
                }
            } else {
                break;
            }
            lines.next();
        }
        let mut command = Vec::new();
        for line in lines.by_ref() {
            if line == "----" {
                break;
            }
            command.push(line);
        }
        if command.is_empty() {
            break;
        }
        let mut expected = Vec::new();
        while let Some(line) = lines.peek() {
            if line.is_empty() {
                break;
            }
            expected.push(*line);
            lines.next();
        }
        let mut expected = expected.join("\n");
        if !expected.is_empty() {
            expected.push('\n');
        }
        let comment: String = comment.iter().map(|l| format!("{l}\n")).collect();
        cases.push(Case {
            comment,
            command: command.join("\n"),
            expected,
        });
    }
    cases
}

/// Runs a scenario file; returns the file as it should be (every case's
/// actual output in place of the expected one), so a harness can compare it
/// with the original or write it back.
pub fn run_file(text: &str) -> String {
    run_file_from(text, Time::ZERO)
}

/// `run_file` with the core's clock starting at `start`: the same file
/// must give the same text from any start, since the scenario counts every
/// time it reads or shows from there.
pub fn run_file_from(text: &str, start: Time) -> String {
    let mut scenario = Scenario::starting_at(start);
    let mut out = String::new();
    for case in parse_cases(text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&case.comment);
        let actual = match scenario.run(&case.command) {
            Ok(text) => text,
            Err(e) => format!("error: {e}\n"),
        };
        out.push_str(&case.command);
        out.push_str("\n----\n");
        // Blank lines inside output would end the case; mark them.
        for line in actual.lines() {
            out.push_str(if line.is_empty() { "." } else { line });
            out.push('\n');
        }
    }
    out
}
