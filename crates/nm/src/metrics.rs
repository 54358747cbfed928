//! A node agent's metrics: what the agent counts where it decides (how each
//! container it launched ended, how its heartbeats and registrations went),
//! what its container table says, and the node's use as last measured, all
//! in `Figures`, which the agent publishes after every change; launch and
//! heartbeat times as histograms; and how they are shown, as Prometheus
//! text (`NodeMetrics::render`) and as Hadoop's `NodeManagerMetrics` JMX
//! bean (`NodeMetrics::bean`).
//!
//! Each agent has a registry of its own (`weft_rm::metrics::registry`), never
//! the process's global recorder: `weft local` runs several agents in one
//! process, and each serves its own figures. Ages (since the RM last
//! answered a heartbeat, since the health script's verdict) are measured at
//! the scrape, so an agent that stopped heartbeating shows as ever older
//! even if its task is stuck; reading the figures never waits for the agent.
//!
//! Deciding what happens to containers is `agent`'s; serving `/metrics` and
//! `/jmx`, and who may read them, is `http`'s.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Label, Unit};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use weft_model::Resource;
use weft_rm::dto::nm::{ResourceUtilizationDto, StopReasonDto};
use weft_rm::http::jmx::{Bean, ObjectName};
use weft_rm::metrics::registry::{Description, Registry, RegistrySettings};

use crate::health::Health;

/// Every metric a node agent exports.
pub mod names {
    /// Counter: containers whose launch the agent began.
    pub const CONTAINERS_LAUNCHED: &str = "weft_nm_containers_launched_total";
    /// Counter: containers whose process exited 0 on its own.
    pub const CONTAINERS_COMPLETED: &str = "weft_nm_containers_completed_total";
    /// Counter: containers whose process exited non-zero on its own.
    pub const CONTAINERS_FAILED: &str = "weft_nm_containers_failed_total";
    /// Counter: launches that started no process.
    pub const LAUNCH_FAILURES: &str = "weft_nm_container_launch_failures_total";
    /// Counter: running containers the agent stopped (label `reason`).
    pub const CONTAINERS_KILLED: &str = "weft_nm_containers_killed_total";
    /// Gauge: containers whose process runs.
    pub const CONTAINERS_RUNNING: &str = "weft_nm_containers_running";
    /// Gauge: containers allocated here that their AM has not started.
    pub const CONTAINERS_PENDING_START: &str = "weft_nm_containers_pending_start";
    /// Gauge: applications with a running container here.
    pub const APPS_RUNNING: &str = "weft_nm_apps_running";
    /// Gauge: memory the running containers were given.
    pub const ALLOCATED_MEMORY: &str = "weft_nm_allocated_memory_bytes";
    /// Gauge: vcores the running containers were given.
    pub const ALLOCATED_VCORES: &str = "weft_nm_allocated_vcores";
    /// Gauge: the capability's memory less the allocated.
    pub const AVAILABLE_MEMORY: &str = "weft_nm_available_memory_bytes";
    /// Gauge: the capability's vcores less the allocated.
    pub const AVAILABLE_VCORES: &str = "weft_nm_available_vcores";
    /// Gauge: the memory the node offers.
    pub const CAPABILITY_MEMORY: &str = "weft_nm_capability_memory_bytes";
    /// Gauge: the vcores the node offers.
    pub const CAPABILITY_VCORES: &str = "weft_nm_capability_vcores";
    /// Gauge: 1 while the node is registered with the RM.
    pub const REGISTERED: &str = "weft_nm_registered";
    /// Gauge: 1 while the health script says the node is healthy.
    pub const HEALTHY: &str = "weft_nm_healthy";
    /// Gauge: time since the health script's last verdict, at the scrape.
    pub const HEALTH_REPORT_AGE: &str = "weft_nm_health_report_age_seconds";
    /// Gauge: time since the RM last answered a heartbeat, at the scrape.
    pub const HEARTBEAT_AGE: &str = "weft_nm_heartbeat_age_seconds";
    /// Counter: heartbeats sent (label `outcome`).
    pub const HEARTBEATS: &str = "weft_nm_heartbeats_total";
    /// Counter: registrations tried (label `outcome`).
    pub const REGISTRATIONS: &str = "weft_nm_registrations_total";
    /// Histogram: a launch, from its start to its process running.
    pub const LAUNCH_DURATION: &str = "weft_nm_container_launch_duration_seconds";
    /// Histogram: an answered heartbeat's round trip.
    pub const HEARTBEAT_DURATION: &str = "weft_nm_heartbeat_duration_seconds";
    /// Gauge: physical memory in use on the machine.
    pub const NODE_USED_MEMORY: &str = "weft_nm_node_used_memory_bytes";
    /// Gauge: virtual memory (physical plus swap) in use on the machine.
    pub const NODE_USED_VIRTUAL_MEMORY: &str = "weft_nm_node_used_virtual_memory_bytes";
    /// Gauge: processors the machine keeps busy.
    pub const NODE_USED_CPU: &str = "weft_nm_node_used_cpu_cores";
    /// Gauge: physical memory the containers use.
    pub const CONTAINERS_USED_MEMORY: &str = "weft_nm_containers_used_memory_bytes";
    /// Gauge: virtual memory the containers use.
    pub const CONTAINERS_USED_VIRTUAL_MEMORY: &str = "weft_nm_containers_used_virtual_memory_bytes";
    /// Gauge: processors the containers keep busy.
    pub const CONTAINERS_USED_CPU: &str = "weft_nm_containers_used_cpu_cores";
}

const DESCRIPTIONS: &[Description] = &[
    (
        names::CONTAINERS_LAUNCHED,
        Some(Unit::Count),
        "Containers whose launch the agent began: an application master container the RM handed over, or a container its AM started (Hadoop's ContainersLaunched).",
    ),
    (
        names::CONTAINERS_COMPLETED,
        Some(Unit::Count),
        "Containers whose process exited with status 0 on its own.",
    ),
    (
        names::CONTAINERS_FAILED,
        Some(Unit::Count),
        "Containers whose process exited with a non-zero status on its own (launch failures are counted apart).",
    ),
    (
        names::LAUNCH_FAILURES,
        Some(Unit::Count),
        "Container launches that started no process: the command could not be spawned, or an AM container's launch context was unusable.",
    ),
    (
        names::CONTAINERS_KILLED,
        Some(Unit::Count),
        "Running containers the agent stopped, by why: the RM's stop reason, memory_limit (over its memory, found by the monitor or the kernel) or shutdown (the agent stopped).",
    ),
    (
        names::CONTAINERS_RUNNING,
        Some(Unit::Count),
        "Containers whose process runs, those being stopped included.",
    ),
    (
        names::CONTAINERS_PENDING_START,
        Some(Unit::Count),
        "Containers the RM allocated on this node that their application master has not started yet.",
    ),
    (
        names::APPS_RUNNING,
        Some(Unit::Count),
        "Applications with a running container on this node.",
    ),
    (
        names::ALLOCATED_MEMORY,
        Some(Unit::Bytes),
        "Memory the running containers were given.",
    ),
    (
        names::ALLOCATED_VCORES,
        Some(Unit::Count),
        "Virtual cores the running containers were given.",
    ),
    (
        names::AVAILABLE_MEMORY,
        Some(Unit::Bytes),
        "The node's capability less the memory its running containers were given (negative when the RM sized the node below that).",
    ),
    (
        names::AVAILABLE_VCORES,
        Some(Unit::Count),
        "The node's capability less the virtual cores its running containers were given.",
    ),
    (
        names::CAPABILITY_MEMORY,
        Some(Unit::Bytes),
        "Memory the node offers: the size the RM gave it at its last registration, else its own.",
    ),
    (
        names::CAPABILITY_VCORES,
        Some(Unit::Count),
        "Virtual cores the node offers: the size the RM gave it at its last registration, else its own.",
    ),
    (
        names::REGISTERED,
        None,
        "1 while the node is registered with the RM, 0 while it is not (starting, or registering again).",
    ),
    (
        names::HEALTHY,
        None,
        "1 while the node's health script says it is healthy (always without a script), 0 while it says not.",
    ),
    (
        names::HEALTH_REPORT_AGE,
        Some(Unit::Seconds),
        "Time since the health script's last verdict (since the agent started, without a script), measured at the scrape.",
    ),
    (
        names::HEARTBEAT_AGE,
        Some(Unit::Seconds),
        "Time since the RM last answered a heartbeat (since the agent started, before the first), measured at the scrape; it grows without bound while the node cannot reach the RM.",
    ),
    (
        names::HEARTBEATS,
        Some(Unit::Count),
        "Heartbeats sent, by outcome: answered, failed (no answer in time, or an error), unknown_node (the RM no longer knows the node, which registers again).",
    ),
    (
        names::REGISTRATIONS,
        Some(Unit::Count),
        "Registrations with the RM, by outcome: registered (the first and every one after the RM forgot the node), failed, refused (the RM keeps the node out).",
    ),
    (
        names::LAUNCH_DURATION,
        Some(Unit::Seconds),
        "Time to launch a container, from its start (the AM's call, or the RM's word for an AM container) to its process running.",
    ),
    (
        names::HEARTBEAT_DURATION,
        Some(Unit::Seconds),
        "Round trip of a heartbeat the RM answered.",
    ),
    (
        names::NODE_USED_MEMORY,
        Some(Unit::Bytes),
        "Physical memory in use on the machine, by every process, as last measured for a heartbeat.",
    ),
    (
        names::NODE_USED_VIRTUAL_MEMORY,
        Some(Unit::Bytes),
        "Physical memory plus swap in use on the machine, as last measured for a heartbeat.",
    ),
    (
        names::NODE_USED_CPU,
        None,
        "Processors kept busy on the machine, by every process, as last measured for a heartbeat (1 is one processor fully busy).",
    ),
    (
        names::CONTAINERS_USED_MEMORY,
        Some(Unit::Bytes),
        "Physical memory the running containers use, as last sampled for a heartbeat.",
    ),
    (
        names::CONTAINERS_USED_VIRTUAL_MEMORY,
        Some(Unit::Bytes),
        "Virtual memory the running containers use (under cgroups, memory plus swap), as last sampled for a heartbeat.",
    ),
    (
        names::CONTAINERS_USED_CPU,
        None,
        "Processors the running containers keep busy, as last sampled for a heartbeat.",
    ),
];

const HISTOGRAMS: &[&str] = &[names::LAUNCH_DURATION, names::HEARTBEAT_DURATION];

/// Bucket bounds in seconds, 0.5 ms to 10 s: a launch takes milliseconds, a
/// heartbeat to a loaded RM may take seconds (and fails at the agent's
/// timeout, 10 s by default).
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

const MB: f64 = 1_048_576.0;

/// Why the agent stopped a running container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KillReason {
    /// Its AM released it.
    Released,
    /// Its application ended.
    AppFinished,
    /// Preemption took it back.
    Preempted,
    /// The RM does not know it.
    UnknownContainer,
    /// The node came back too small to hold it.
    NoRoom,
    /// The node reported itself unhealthy.
    NodeUnhealthy,
    /// It went over its memory limit.
    MemoryLimit,
    /// The agent stopped.
    Shutdown,
}

impl KillReason {
    const ALL: [KillReason; 8] = [
        KillReason::Released,
        KillReason::AppFinished,
        KillReason::Preempted,
        KillReason::UnknownContainer,
        KillReason::NoRoom,
        KillReason::NodeUnhealthy,
        KillReason::MemoryLimit,
        KillReason::Shutdown,
    ];

    /// The `reason` label's value.
    fn label(self) -> &'static str {
        match self {
            KillReason::Released => "released",
            KillReason::AppFinished => "app_finished",
            KillReason::Preempted => "preempted",
            KillReason::UnknownContainer => "unknown_container",
            KillReason::NoRoom => "no_room",
            KillReason::NodeUnhealthy => "node_unhealthy",
            KillReason::MemoryLimit => "memory_limit",
            KillReason::Shutdown => "shutdown",
        }
    }

    /// The reason of a stop the RM ordered.
    pub(crate) fn of_stop(reason: StopReasonDto) -> KillReason {
        match reason {
            StopReasonDto::Released => KillReason::Released,
            StopReasonDto::AppFinished => KillReason::AppFinished,
            StopReasonDto::Preempted => KillReason::Preempted,
            StopReasonDto::Unknown => KillReason::UnknownContainer,
            StopReasonDto::NoRoom => KillReason::NoRoom,
            StopReasonDto::NodeUnhealthy => KillReason::NodeUnhealthy,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// How a container whose launch began ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ended {
    /// No process was started.
    LaunchFailed,
    /// Its process exited 0 on its own.
    Completed,
    /// Its process exited non-zero on its own.
    Failed,
    /// The agent stopped it.
    Killed(KillReason),
}

/// How a heartbeat went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeartbeatOutcome {
    /// The RM answered.
    Answered,
    /// No answer in time, or an error.
    Failed,
    /// The RM no longer knows the node.
    UnknownNode,
}

const HEARTBEAT_OUTCOMES: [&str; 3] = ["answered", "failed", "unknown_node"];

/// How a registration went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegistrationOutcome {
    /// The RM took the node.
    Registered,
    /// No answer in time, or an error.
    Failed,
    /// The RM keeps the node out (403).
    Refused,
}

const REGISTRATION_OUTCOMES: [&str; 3] = ["registered", "failed", "refused"];

/// What the agent's metrics show, but the ages measured at the scrape: the
/// agent's counts since it started, and the state of its containers and of
/// its conversation with the RM as of its last change. The agent owns one
/// and publishes a copy after every change (`NodeMetrics::publish`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Figures {
    /// Launches begun; each ends once in the counts below, or is running.
    pub(crate) launched: u64,
    pub(crate) completed: u64,
    pub(crate) failed: u64,
    pub(crate) launch_failures: u64,
    /// By `KillReason`.
    pub(crate) killed: [u64; KillReason::ALL.len()],
    /// Launches that started a process, and their time together (Hadoop's
    /// `ContainerLaunchDuration` rate).
    pub(crate) launches_timed: u64,
    pub(crate) launch_time: Duration,
    /// By `HeartbeatOutcome`.
    pub(crate) heartbeats: [u64; 3],
    /// By `RegistrationOutcome`.
    pub(crate) registrations: [u64; 3],
    /// When the RM last answered a heartbeat.
    pub(crate) last_heartbeat: Option<Instant>,
    /// Whether the node is registered now.
    pub(crate) registered: bool,
    /// What the node offers (the RM's size for it, else its own).
    pub(crate) capability: Resource,
    /// Containers whose process runs, and what they were given.
    pub(crate) running: u64,
    pub(crate) allocated: Resource,
    /// Containers allocated here, not started yet.
    pub(crate) pending_start: u64,
    /// Applications with a running container here.
    pub(crate) apps_running: u64,
    /// The machine's and the containers' use, as last measured; `None`
    /// before the first heartbeat, or where `/proc` cannot be read.
    pub(crate) utilization: Option<Utilization>,
}

/// What the machine and its running containers use, as the heartbeats
/// carry it (memory in MB, CPU in processors).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Utilization {
    pub(crate) node: ResourceUtilizationDto,
    pub(crate) containers: ResourceUtilizationDto,
}

impl Figures {
    /// Figures of a node offering `capability` that has done nothing yet.
    pub(crate) fn new(capability: Resource) -> Figures {
        Figures {
            capability,
            ..Figures::default()
        }
    }

    /// A launch began.
    pub(crate) fn launch_began(&mut self) {
        self.launched += 1;
    }

    /// A launch started its process after `took`.
    pub(crate) fn launch_took(&mut self, took: Duration) {
        self.launches_timed += 1;
        self.launch_time += took;
    }

    /// A launched container ended as `ended`.
    pub(crate) fn ended(&mut self, ended: Ended) {
        match ended {
            Ended::LaunchFailed => self.launch_failures += 1,
            Ended::Completed => self.completed += 1,
            Ended::Failed => self.failed += 1,
            Ended::Killed(reason) => self.killed[reason.index()] += 1,
        }
    }

    /// A heartbeat went as `outcome`, at `at`.
    pub(crate) fn heartbeat(&mut self, outcome: HeartbeatOutcome, at: Instant) {
        self.heartbeats[outcome as usize] += 1;
        if outcome == HeartbeatOutcome::Answered {
            self.last_heartbeat = Some(at);
        }
    }

    /// A registration went as `outcome`.
    pub(crate) fn registration(&mut self, outcome: RegistrationOutcome) {
        self.registrations[outcome as usize] += 1;
    }

    fn killed_total(&self) -> u64 {
        self.killed.iter().sum()
    }

    /// The capability less what is allocated, in MB and vcores; negative
    /// when the node was sized below what its containers hold.
    fn available(&self) -> (i64, i64) {
        let signed = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        (
            signed(self.capability.memory_mb()) - signed(self.allocated.memory_mb()),
            signed(self.capability.vcores()) - signed(self.allocated.vcores()),
        )
    }
}

/// A node agent's metrics: its registry, the agent's latest figures, and
/// the handles the scrape sets.
pub struct NodeMetrics {
    registry: Registry,
    /// The agent's latest figures, published after every change.
    figures: watch::Sender<Figures>,
    /// When the agent started: the heartbeat age before the first answer.
    started: Instant,
    launch_duration: Histogram,
    heartbeat_duration: Histogram,
    launched: Counter,
    completed: Counter,
    failed: Counter,
    launch_failures: Counter,
    /// By `KillReason`.
    killed: [Counter; KillReason::ALL.len()],
    /// By `HeartbeatOutcome`.
    heartbeats: [Counter; 3],
    /// By `RegistrationOutcome`.
    registrations: [Counter; 3],
    gauges: [Gauge; GAUGES.len()],
    /// Registered at the first measurement, so that a node that cannot
    /// measure its use shows no figure rather than a false 0.
    utilization: OnceLock<[Gauge; UTILIZATION_GAUGES.len()]>,
}

impl std::fmt::Debug for NodeMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NodeMetrics")
    }
}

const GAUGES: [&str; 13] = [
    names::CONTAINERS_RUNNING,
    names::CONTAINERS_PENDING_START,
    names::APPS_RUNNING,
    names::ALLOCATED_MEMORY,
    names::ALLOCATED_VCORES,
    names::AVAILABLE_MEMORY,
    names::AVAILABLE_VCORES,
    names::CAPABILITY_MEMORY,
    names::CAPABILITY_VCORES,
    names::REGISTERED,
    names::HEALTHY,
    names::HEALTH_REPORT_AGE,
    names::HEARTBEAT_AGE,
];

const UTILIZATION_GAUGES: [&str; 6] = [
    names::NODE_USED_MEMORY,
    names::NODE_USED_VIRTUAL_MEMORY,
    names::NODE_USED_CPU,
    names::CONTAINERS_USED_MEMORY,
    names::CONTAINERS_USED_VIRTUAL_MEMORY,
    names::CONTAINERS_USED_CPU,
];

impl NodeMetrics {
    /// A fresh registry for an agent starting now, its figures a node's
    /// of `capability` that has done nothing yet.
    pub fn new(capability: Resource) -> NodeMetrics {
        let registry = Registry::new(RegistrySettings {
            descriptions: &[DESCRIPTIONS],
            histograms: HISTOGRAMS,
            latency_buckets: BUCKETS,
            // Every series lives as long as the agent.
            idle_timeout: None,
        });
        let counter = |name| registry.counter(name, vec![]);
        let labelled = |name, label: &'static str, value: &'static str| {
            registry.counter(name, vec![Label::new(label, value)])
        };
        NodeMetrics {
            figures: watch::Sender::new(Figures::new(capability)),
            started: Instant::now(),
            launch_duration: registry.histogram(names::LAUNCH_DURATION),
            heartbeat_duration: registry.histogram(names::HEARTBEAT_DURATION),
            launched: counter(names::CONTAINERS_LAUNCHED),
            completed: counter(names::CONTAINERS_COMPLETED),
            failed: counter(names::CONTAINERS_FAILED),
            launch_failures: counter(names::LAUNCH_FAILURES),
            killed: KillReason::ALL
                .map(|r| labelled(names::CONTAINERS_KILLED, "reason", r.label())),
            heartbeats: HEARTBEAT_OUTCOMES.map(|o| labelled(names::HEARTBEATS, "outcome", o)),
            registrations: REGISTRATION_OUTCOMES
                .map(|o| labelled(names::REGISTRATIONS, "outcome", o)),
            gauges: GAUGES.map(|name| registry.gauge(name, vec![])),
            utilization: OnceLock::new(),
            registry,
        }
    }

    /// Puts the agent's figures in force for the next scrape.
    pub(crate) fn publish(&self, figures: &Figures) {
        self.figures.send_if_modified(|f| {
            let changed = f != figures;
            if changed {
                f.clone_from(figures);
            }
            changed
        });
    }

    /// The figures in force.
    pub(crate) fn figures(&self) -> Figures {
        self.figures.borrow().clone()
    }

    /// Records a launch that took `took` from its start to its process.
    pub(crate) fn launch_took(&self, took: Duration) {
        self.launch_duration.record(took.as_secs_f64());
    }

    /// Records the round trip of an answered heartbeat.
    pub(crate) fn heartbeat_took(&self, took: Duration) {
        self.heartbeat_duration.record(took.as_secs_f64());
    }

    /// Drains recorded samples into the histograms; the agent runs it with
    /// its memory monitor, so samples never pile up between scrapes.
    pub(crate) fn run_upkeep(&self) {
        self.registry.run_upkeep();
    }

    /// The text exposition format of the figures in force and `health`,
    /// with the ages measured now.
    pub fn render(&self, health: &Health) -> String {
        let f = self.figures();
        let now = Instant::now();
        for (c, n) in [
            (&self.launched, f.launched),
            (&self.completed, f.completed),
            (&self.failed, f.failed),
            (&self.launch_failures, f.launch_failures),
        ] {
            c.absolute(n);
        }
        for (c, n) in self.killed.iter().zip(f.killed) {
            c.absolute(n);
        }
        for (c, n) in self.heartbeats.iter().zip(f.heartbeats) {
            c.absolute(n);
        }
        for (c, n) in self.registrations.iter().zip(f.registrations) {
            c.absolute(n);
        }
        let (available_mb, available_vcores) = f.available();
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let heartbeat_age = now.saturating_duration_since(f.last_heartbeat.unwrap_or(self.started));
        let health_age_ms = crate::health::now_ms().saturating_sub(health.checked_ms);
        let values = [
            f.running as f64,
            f.pending_start as f64,
            f.apps_running as f64,
            f.allocated.memory_mb() as f64 * MB,
            f.allocated.vcores() as f64,
            available_mb as f64 * MB,
            available_vcores as f64,
            f.capability.memory_mb() as f64 * MB,
            f.capability.vcores() as f64,
            flag(f.registered),
            flag(health.unhealthy.is_none()),
            health_age_ms as f64 / 1000.0,
            heartbeat_age.as_secs_f64(),
        ];
        for (g, v) in self.gauges.iter().zip(values) {
            g.set(v);
        }
        if let Some(u) = f.utilization {
            let gauges = self
                .utilization
                .get_or_init(|| UTILIZATION_GAUGES.map(|name| self.registry.gauge(name, vec![])));
            let values = [
                u.node.pmem as f64 * MB,
                u.node.vmem as f64 * MB,
                u.node.cpu,
                u.containers.pmem as f64 * MB,
                u.containers.vmem as f64 * MB,
                u.containers.cpu,
            ];
            for (g, v) in gauges.iter().zip(values) {
                g.set(v);
            }
        }
        self.registry.render()
    }

    /// Hadoop's `NodeManagerMetrics` bean of the figures in force, for the
    /// node on `host`: Hadoop's names, units and rounding, with the
    /// attributes Weft has a figure for (`docs/api.md` lists them).
    pub fn bean(&self, host: &str) -> Bean {
        let f = self.figures();
        let (available_mb, available_vcores) = f.available();
        let u = f.utilization;
        let mb = |pick: fn(&Utilization) -> i64| u.as_ref().map_or(0, pick);
        let cpu = |pick: fn(&Utilization) -> f64| u.as_ref().map_or(0.0, pick);
        let avg_ms = if f.launches_timed == 0 {
            0.0
        } else {
            f.launch_time.as_micros() as f64 / 1000.0 / f.launches_timed as f64
        };
        let allocated_mb = i64::try_from(f.allocated.memory_mb()).unwrap_or(i64::MAX);
        Bean {
            name: ObjectName {
                domain: "Hadoop",
                keys: vec![
                    ("service".to_owned(), "NodeManager".to_owned()),
                    ("name".to_owned(), "NodeManagerMetrics".to_owned()),
                ],
            },
            modeler_type: "NodeManagerMetrics".to_owned(),
            attributes: vec![
                ("tag.Context", Value::from("yarn")),
                ("tag.Hostname", Value::from(host)),
                ("ContainersLaunched", f.launched.into()),
                ("ContainersCompleted", f.completed.into()),
                // Hadoop's failed containers include those whose launch
                // failed (its launch and localization failures).
                ("ContainersFailed", (f.failed + f.launch_failures).into()),
                ("ContainersKilled", f.killed_total().into()),
                // A launch runs to its process in one step of the agent, so
                // no container is ever seen initializing.
                ("ContainersIniting", 0.into()),
                ("ContainersRunning", f.running.into()),
                ("AllocatedGB", gb_up(allocated_mb).into()),
                ("AllocatedContainers", f.running.into()),
                ("AvailableGB", gb_down(available_mb).into()),
                ("AllocatedVCores", f.allocated.vcores().into()),
                ("AvailableVCores", available_vcores.into()),
                ("ContainerLaunchDurationNumOps", f.launches_timed.into()),
                ("ContainerLaunchDurationAvgTime", avg_ms.into()),
                (
                    "ContainerUsedMemGB",
                    gb_down(mb(|u| u.containers.pmem)).into(),
                ),
                (
                    "ContainerUsedVMemGB",
                    gb_down(mb(|u| u.containers.vmem)).into(),
                ),
                ("ContainerCpuUtilization", cpu(|u| u.containers.cpu).into()),
                ("NodeUsedMemGB", gb_down(mb(|u| u.node.pmem)).into()),
                ("NodeUsedVMemGB", gb_down(mb(|u| u.node.vmem)).into()),
                ("NodeCpuUtilization", cpu(|u| u.node.cpu).into()),
                ("ApplicationsRunning", f.apps_running.into()),
            ],
        }
    }
}

/// MB as whole GB rounded up, as Hadoop's `AllocatedGB` (`Math.ceil`).
fn gb_up(mb: i64) -> i64 {
    mb.div_euclid(1024) + i64::from(mb.rem_euclid(1024) != 0)
}

/// MB as whole GB rounded down, as Hadoop's `AvailableGB` and used-memory
/// gauges (`Math.floor`, so -1 MB is -1 GB).
fn gb_down(mb: i64) -> i64 {
    mb.div_euclid(1024)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Every sample line of a rendering, by series.
    fn samples(text: &str) -> BTreeMap<String, f64> {
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| {
                let (series, value) = l.rsplit_once(' ').expect("series value");
                (series.to_owned(), value.parse().expect("a number"))
            })
            .collect()
    }

    fn healthy() -> Health {
        Health {
            unhealthy: None,
            checked_ms: crate::health::now_ms(),
        }
    }

    fn attribute<'a>(bean: &'a Bean, name: &str) -> &'a Value {
        &bean
            .attributes
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} in {bean:?}"))
            .1
    }

    /// A node of 8 GB and 8 vcores that launched five containers: one
    /// completed, one failed, one could not start, one was preempted and
    /// one runs (1.5 GB, 3 vcores).
    fn busy_node() -> Figures {
        let mut f = Figures::new(Resource::new(8192, 8));
        for _ in 0..5 {
            f.launch_began();
        }
        for ms in [10, 20, 30, 40] {
            f.launch_took(Duration::from_millis(ms));
        }
        f.ended(Ended::Completed);
        f.ended(Ended::Failed);
        f.ended(Ended::LaunchFailed);
        f.ended(Ended::Killed(KillReason::of_stop(StopReasonDto::Preempted)));
        f.running = 1;
        f.allocated = Resource::new(1536, 3);
        f.apps_running = 1;
        f.registration(RegistrationOutcome::Failed);
        f.registration(RegistrationOutcome::Registered);
        f.registered = true;
        f.heartbeat(HeartbeatOutcome::Answered, Instant::now());
        f.heartbeat(HeartbeatOutcome::Failed, Instant::now());
        f
    }

    #[test]
    fn the_counts_and_gauges_reach_the_text() {
        let m = NodeMetrics::new(Resource::new(8192, 8));
        m.publish(&busy_node());
        let s = samples(&m.render(&healthy()));
        for (series, v) in [
            ("weft_nm_containers_launched_total", 5.0),
            ("weft_nm_containers_completed_total", 1.0),
            ("weft_nm_containers_failed_total", 1.0),
            ("weft_nm_container_launch_failures_total", 1.0),
            (
                r#"weft_nm_containers_killed_total{reason="preempted"}"#,
                1.0,
            ),
            (
                r#"weft_nm_containers_killed_total{reason="memory_limit"}"#,
                0.0,
            ),
            ("weft_nm_containers_running", 1.0),
            ("weft_nm_allocated_memory_bytes", 1536.0 * MB),
            ("weft_nm_available_memory_bytes", 6656.0 * MB),
            ("weft_nm_available_vcores", 5.0),
            ("weft_nm_capability_vcores", 8.0),
            ("weft_nm_registered", 1.0),
            ("weft_nm_healthy", 1.0),
            (r#"weft_nm_heartbeats_total{outcome="answered"}"#, 1.0),
            (r#"weft_nm_heartbeats_total{outcome="failed"}"#, 1.0),
            (r#"weft_nm_heartbeats_total{outcome="unknown_node"}"#, 0.0),
            (r#"weft_nm_registrations_total{outcome="registered"}"#, 1.0),
            (r#"weft_nm_registrations_total{outcome="failed"}"#, 1.0),
        ] {
            assert_eq!(s.get(series), Some(&v), "{series} in {s:#?}");
        }
        assert!(s["weft_nm_heartbeat_age_seconds"] < 60.0, "{s:#?}");
        // Not measured yet: no figure rather than a false 0.
        assert!(!s.contains_key("weft_nm_node_used_memory_bytes"), "{s:#?}");
    }

    #[test]
    fn an_unhealthy_node_says_so_and_the_heartbeat_age_grows_from_the_start() {
        let m = NodeMetrics::new(Resource::new(1024, 1));
        let sick = Health {
            unhealthy: Some("ERROR disk full".to_owned()),
            checked_ms: crate::health::now_ms() - 90_000,
        };
        let s = samples(&m.render(&sick));
        assert_eq!(s["weft_nm_healthy"], 0.0);
        assert!(s["weft_nm_health_report_age_seconds"] >= 90.0, "{s:#?}");
        // Never answered: the age counts from the agent's start.
        assert!(s["weft_nm_heartbeat_age_seconds"] < 60.0, "{s:#?}");
        assert_eq!(s["weft_nm_registered"], 0.0);
    }

    #[test]
    fn the_bean_rounds_gigabytes_as_hadoop_does() {
        let m = NodeMetrics::new(Resource::new(8192, 8));
        let mut f = busy_node();
        f.utilization = Some(Utilization {
            node: ResourceUtilizationDto {
                pmem: 3000,
                vmem: 5000,
                cpu: 1.25,
            },
            containers: ResourceUtilizationDto {
                pmem: 1023,
                vmem: 2048,
                cpu: 0.5,
            },
        });
        m.publish(&f);
        let bean = m.bean("nm1.example");
        assert_eq!(
            bean.name.to_string(),
            "Hadoop:service=NodeManager,name=NodeManagerMetrics"
        );
        for (name, v) in [
            ("tag.Hostname", Value::from("nm1.example")),
            ("ContainersLaunched", 5.into()),
            ("ContainersCompleted", 1.into()),
            // The failed process and the launch that started none.
            ("ContainersFailed", 2.into()),
            ("ContainersKilled", 1.into()),
            ("ContainersRunning", 1.into()),
            ("AllocatedContainers", 1.into()),
            // 1.5 GB allocated shows as 2, 6.5 GB available as 6.
            ("AllocatedGB", 2.into()),
            ("AvailableGB", 6.into()),
            ("AllocatedVCores", 3.into()),
            ("AvailableVCores", 5.into()),
            ("ContainerLaunchDurationNumOps", 4.into()),
            ("ContainerLaunchDurationAvgTime", 25.0.into()),
            ("ContainerUsedMemGB", 0.into()),
            ("ContainerUsedVMemGB", 2.into()),
            ("NodeUsedMemGB", 2.into()),
            ("NodeCpuUtilization", 1.25.into()),
            ("ApplicationsRunning", 1.into()),
        ] {
            assert_eq!(attribute(&bean, name), &v, "{name}");
        }
        // A node the RM sized below what its containers hold.
        f.capability = Resource::new(1024, 2);
        m.publish(&f);
        let bean = m.bean("nm1.example");
        assert_eq!(attribute(&bean, "AvailableGB"), &Value::from(-1));
        assert_eq!(attribute(&bean, "AvailableVCores"), &Value::from(-1));
    }

    #[test]
    fn gigabytes_round_up_for_allocation_and_down_for_the_rest() {
        assert_eq!(
            [0, 1, 1024, 1025, 2048].map(gb_up),
            [0, 1, 1, 2, 2],
            "allocated"
        );
        assert_eq!(
            [0, 1023, 1024, 1536, -1, -1024, -1025].map(gb_down),
            [0, 0, 1, 1, -1, -1, -2],
            "available"
        );
    }

    #[test]
    fn two_registries_keep_their_own_figures() {
        let a = NodeMetrics::new(Resource::new(4096, 4));
        let b = NodeMetrics::new(Resource::new(2048, 2));
        a.publish(&busy_node());
        a.launch_took(Duration::from_millis(3));
        let (a, b) = (
            samples(&a.render(&healthy())),
            samples(&b.render(&healthy())),
        );
        assert_eq!(a["weft_nm_containers_launched_total"], 5.0);
        assert_eq!(b["weft_nm_containers_launched_total"], 0.0);
        assert_eq!(a["weft_nm_container_launch_duration_seconds_count"], 1.0);
        assert_eq!(b["weft_nm_container_launch_duration_seconds_count"], 0.0);
        assert_eq!(b["weft_nm_capability_memory_bytes"], 2048.0 * MB);
    }

    #[test]
    fn every_reason_of_the_rm_has_its_label() {
        let labels: Vec<&str> = [
            StopReasonDto::Released,
            StopReasonDto::AppFinished,
            StopReasonDto::Preempted,
            StopReasonDto::Unknown,
            StopReasonDto::NoRoom,
            StopReasonDto::NodeUnhealthy,
        ]
        .map(|r| KillReason::of_stop(r).label())
        .to_vec();
        assert_eq!(
            labels,
            [
                "released",
                "app_finished",
                "preempted",
                "unknown_container",
                "no_room",
                "node_unhealthy"
            ]
        );
        for (i, r) in KillReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i, "{r:?}");
        }
    }
}
