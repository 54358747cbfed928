//! The RM's Prometheus metrics: every metric's name, unit and help text, on
//! a registry of the service's own (`registry::Registry`, which a node agent
//! builds for itself too), and the text rendering behind `GET /metrics`.
//!
//! Names follow Prometheus conventions: a `weft_` prefix, base units (bytes,
//! seconds; memory is MB × 2^20), `_total` on counters. The actor feeds the
//! scheduler's metrics (`SchedulerMetrics`); handlers time heartbeats and
//! allocate calls; the reloader counts reloads.

pub mod registry;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Label, Unit};
use weft_core::{AppState, Locality, NodeState};
use weft_model::{QueuePath, Resource, Time};

use crate::metrics::registry::{Description, Registry, RegistrySettings};
use crate::view::{QueueCounts, View};

/// Counters and gauges not touched for this long disappear: the series of
/// removed dynamic queues, which would otherwise pile up as user queues come
/// and go. The actor touches every live series at each publish (at least
/// every few seconds), so only the dead ones ever reach it. Long, because a
/// live series that idles out is never shown again (its handle keeps
/// counting where nobody reads): only a scheduler stalled this long loses
/// them, and `weft_scheduler_snapshot_age_seconds` says so long before.
const IDLE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Latency buckets in seconds, from 50 µs to 2.5 s.
const LATENCY_BUCKETS: &[f64] = &[
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5,
];

const MB: f64 = 1_048_576.0;

/// Every metric the service exports.
pub mod names {
    /// Counter: apps added to a queue (label `queue`; parents count their subtree's).
    pub const QUEUE_APPS_SUBMITTED: &str = "weft_queue_apps_submitted_total";
    /// Counter: apps that finished.
    pub const QUEUE_APPS_COMPLETED: &str = "weft_queue_apps_completed_total";
    /// Counter: apps killed.
    pub const QUEUE_APPS_KILLED: &str = "weft_queue_apps_killed_total";
    /// Counter: apps failed.
    pub const QUEUE_APPS_FAILED: &str = "weft_queue_apps_failed_total";
    /// Gauge: apps holding containers.
    pub const QUEUE_APPS_RUNNING: &str = "weft_queue_apps_running";
    /// Gauge: apps without containers yet (including those waiting on a limit).
    pub const QUEUE_APPS_PENDING: &str = "weft_queue_apps_pending";
    /// Gauge: apps with outstanding asks (Hadoop's `ActiveApplications`).
    pub const QUEUE_APPS_ACTIVE: &str = "weft_queue_apps_active";
    /// Gauge: users with an app that has outstanding asks in the subtree.
    pub const QUEUE_USERS_ACTIVE: &str = "weft_queue_users_active";
    /// Gauge: running apps by age since their first container (label
    /// `age_minutes`, the bucket's lower bound: 0, 60, 300 or 1440, Hadoop's
    /// `running_0` ... `running_1440`).
    pub const QUEUE_APPS_RUNNING_BY_AGE: &str = "weft_queue_apps_running_by_age";
    /// Gauge: allocated memory.
    pub const QUEUE_ALLOCATED_MEMORY: &str = "weft_queue_allocated_memory_bytes";
    /// Gauge: allocated vcores.
    pub const QUEUE_ALLOCATED_VCORES: &str = "weft_queue_allocated_vcores";
    /// Gauge: live containers.
    pub const QUEUE_ALLOCATED_CONTAINERS: &str = "weft_queue_allocated_containers";
    /// Gauge: memory asked for and not allocated.
    pub const QUEUE_PENDING_MEMORY: &str = "weft_queue_pending_memory_bytes";
    /// Gauge: vcores asked for and not allocated.
    pub const QUEUE_PENDING_VCORES: &str = "weft_queue_pending_vcores";
    /// Gauge: containers asked for and not allocated.
    pub const QUEUE_PENDING_CONTAINERS: &str = "weft_queue_pending_containers";
    /// Gauge: memory held by reservations.
    pub const QUEUE_RESERVED_MEMORY: &str = "weft_queue_reserved_memory_bytes";
    /// Gauge: vcores held by reservations.
    pub const QUEUE_RESERVED_VCORES: &str = "weft_queue_reserved_vcores";
    /// Gauge: reservations.
    pub const QUEUE_RESERVED_CONTAINERS: &str = "weft_queue_reserved_containers";
    /// Gauge: instantaneous fair share of memory.
    pub const QUEUE_FAIR_SHARE_MEMORY: &str = "weft_queue_fair_share_memory_bytes";
    /// Gauge: instantaneous fair share of vcores.
    pub const QUEUE_FAIR_SHARE_VCORES: &str = "weft_queue_fair_share_vcores";
    /// Gauge: steady fair share of memory.
    pub const QUEUE_STEADY_FAIR_SHARE_MEMORY: &str = "weft_queue_steady_fair_share_memory_bytes";
    /// Gauge: steady fair share of vcores.
    pub const QUEUE_STEADY_FAIR_SHARE_VCORES: &str = "weft_queue_steady_fair_share_vcores";
    /// Gauge: min share of memory.
    pub const QUEUE_MIN_SHARE_MEMORY: &str = "weft_queue_min_share_memory_bytes";
    /// Gauge: min share of vcores.
    pub const QUEUE_MIN_SHARE_VCORES: &str = "weft_queue_min_share_vcores";
    /// Gauge: effective max share of memory (capped at the cluster).
    pub const QUEUE_MAX_SHARE_MEMORY: &str = "weft_queue_max_share_memory_bytes";
    /// Gauge: effective max share of vcores (capped at the cluster).
    pub const QUEUE_MAX_SHARE_VCORES: &str = "weft_queue_max_share_vcores";
    /// Gauge: memory used by application masters.
    pub const QUEUE_AM_MEMORY: &str = "weft_queue_am_used_memory_bytes";
    /// Gauge: vcores used by application masters.
    pub const QUEUE_AM_VCORES: &str = "weft_queue_am_used_vcores";
    /// Counter: containers taken back by preemption.
    pub const QUEUE_CONTAINERS_PREEMPTED: &str = "weft_queue_containers_preempted_total";
    /// Counter: containers allocated (labels `queue`, `locality`; Hadoop's
    /// `AggregateContainersAllocated` and its per-locality counts).
    pub const QUEUE_CONTAINERS_ALLOCATED: &str = "weft_queue_containers_allocated_total";
    /// Counter: containers that ended, for any reason (Hadoop's `AggregateContainersReleased`).
    pub const QUEUE_CONTAINERS_RELEASED: &str = "weft_queue_containers_released_total";
    /// Gauge: the running-app limit (`maxRunningApps`; +Inf when there is none).
    pub const QUEUE_MAX_RUNNING_APPS: &str = "weft_queue_max_running_apps";
    /// Gauge: memory the queue's application masters may use now
    /// (`maxAMShare` of its fair share; +Inf for parents and when unlimited).
    pub const QUEUE_AM_LIMIT_MEMORY: &str = "weft_queue_am_limit_memory_bytes";
    /// Gauge: virtual cores the queue's application masters may use now.
    pub const QUEUE_AM_LIMIT_VCORES: &str = "weft_queue_am_limit_vcores";
    /// Gauge: nodes by state (label `state`).
    pub const CLUSTER_NODES: &str = "weft_cluster_nodes";
    /// Gauge: memory of running nodes.
    pub const CLUSTER_CAPACITY_MEMORY: &str = "weft_cluster_capacity_memory_bytes";
    /// Gauge: vcores of running nodes.
    pub const CLUSTER_CAPACITY_VCORES: &str = "weft_cluster_capacity_vcores";
    /// Gauge: unallocated memory.
    pub const CLUSTER_AVAILABLE_MEMORY: &str = "weft_cluster_available_memory_bytes";
    /// Gauge: unallocated vcores.
    pub const CLUSTER_AVAILABLE_VCORES: &str = "weft_cluster_available_vcores";
    /// Gauge: live containers.
    pub const CLUSTER_CONTAINERS: &str = "weft_cluster_containers";
    /// Gauge: live nodes whose latest heartbeat reported their use (the
    /// utilization gauges below sum over these only).
    pub const CLUSTER_UTILIZATION_NODES: &str = "weft_cluster_utilization_reporting_nodes";
    /// Gauge: physical memory the reporting nodes' machines use, all processes.
    pub const CLUSTER_NODE_USED_MEMORY: &str = "weft_cluster_node_used_memory_bytes";
    /// Gauge: processors the reporting nodes' machines keep busy.
    pub const CLUSTER_NODE_USED_CPU: &str = "weft_cluster_node_used_cpu_cores";
    /// Gauge: physical memory the reporting nodes' containers use.
    pub const CLUSTER_CONTAINERS_USED_MEMORY: &str = "weft_cluster_containers_used_memory_bytes";
    /// Gauge: processors the reporting nodes' containers keep busy.
    pub const CLUSTER_CONTAINERS_USED_CPU: &str = "weft_cluster_containers_used_cpu_cores";
    /// Histogram: node heartbeat handling time, request to answer.
    pub const HEARTBEAT_DURATION: &str = "weft_scheduler_node_heartbeat_duration_seconds";
    /// Histogram: AM allocate call handling time, request to answer.
    pub const ALLOCATE_DURATION: &str = "weft_scheduler_allocate_duration_seconds";
    /// Histogram: the update pass (demand and fair shares).
    pub const UPDATE_DURATION: &str = "weft_scheduler_update_duration_seconds";
    /// Counter: containers allocated (label `locality`).
    pub const ALLOCATIONS: &str = "weft_scheduler_allocations_total";
    /// Counter: containers warned of preemption (each once, however often the warning is repeated).
    pub const PREEMPTION_WARNINGS: &str = "weft_scheduler_preemption_warnings_total";
    /// Counter: containers killed by preemption.
    pub const PREEMPTION_KILLS: &str = "weft_scheduler_preemption_kills_total";
    /// Counter: submissions refused (placement, ACL, size).
    pub const APPS_REJECTED: &str = "weft_scheduler_apps_rejected_total";
    /// Gauge: real time since the published snapshot was built, at the scrape.
    pub const SNAPSHOT_AGE: &str = "weft_scheduler_snapshot_age_seconds";
    /// Gauge: commands waiting for the scheduler, at the scrape.
    pub const QUEUED_COMMANDS: &str = "weft_scheduler_queued_commands";
    /// Gauge: the longest time since a registered (running or draining)
    /// node's last heartbeat, at the scrape.
    pub const HEARTBEAT_MAX_AGE: &str = "weft_cluster_node_heartbeat_max_age_seconds";
    /// Counter: allocation-file loads (label `outcome`: `success` or `failure`).
    pub const RELOADS: &str = "weft_alloc_file_reloads_total";
    /// Gauge: when the configuration in force was loaded (seconds since the epoch).
    pub const RELOAD_LAST_SUCCESS: &str = "weft_alloc_file_last_success_timestamp_seconds";
    /// Gauge: when a load last failed (seconds since the epoch; 0 before any).
    pub const RELOAD_LAST_FAILURE: &str = "weft_alloc_file_last_failure_timestamp_seconds";
}

/// The service's metric registry.
pub struct Metrics {
    registry: Registry,
    /// Set at each scrape (`observe_scrape`).
    snapshot_age: Gauge,
    queued_commands: Gauge,
    heartbeat_max_age: Gauge,
    /// Heartbeat latency, recorded by the heartbeat route.
    pub(crate) heartbeat_duration: Histogram,
    /// Allocate latency, recorded by the allocate route.
    pub(crate) allocate_duration: Histogram,
    pub(crate) reload_success: Counter,
    pub(crate) reload_failure: Counter,
    pub(crate) reload_last_success: Gauge,
    /// Compared with `reload_last_success`, it says whether the file on disk
    /// is one the RM refused, which the failure counter alone cannot: a
    /// failed version is counted once and never retried.
    pub(crate) reload_last_failure: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

const QUEUE_DESCRIPTIONS: &[Description] = &[
    (
        names::QUEUE_APPS_SUBMITTED,
        Some(Unit::Count),
        "Applications submitted to the queue (or its subtree).",
    ),
    (
        names::QUEUE_APPS_COMPLETED,
        Some(Unit::Count),
        "Applications that finished in the queue.",
    ),
    (
        names::QUEUE_APPS_KILLED,
        Some(Unit::Count),
        "Applications killed in the queue.",
    ),
    (
        names::QUEUE_APPS_FAILED,
        Some(Unit::Count),
        "Applications that failed in the queue.",
    ),
    (
        names::QUEUE_APPS_RUNNING,
        Some(Unit::Count),
        "Applications whose current attempt has been allocated a container.",
    ),
    (
        names::QUEUE_APPS_PENDING,
        Some(Unit::Count),
        "Applications whose current attempt has had no container yet, including those waiting on a running-app limit.",
    ),
    (
        names::QUEUE_APPS_ACTIVE,
        Some(Unit::Count),
        "Applications with outstanding asks (Hadoop's ActiveApplications).",
    ),
    (
        names::QUEUE_USERS_ACTIVE,
        Some(Unit::Count),
        "Users with an application that has outstanding asks in the queue's subtree.",
    ),
    (
        names::QUEUE_APPS_RUNNING_BY_AGE,
        Some(Unit::Count),
        "Running applications by minutes since their first container (bucket lower bound).",
    ),
    (
        names::QUEUE_ALLOCATED_MEMORY,
        Some(Unit::Bytes),
        "Memory allocated to the queue's containers.",
    ),
    (
        names::QUEUE_ALLOCATED_VCORES,
        Some(Unit::Count),
        "Virtual cores allocated to the queue's containers.",
    ),
    (
        names::QUEUE_ALLOCATED_CONTAINERS,
        Some(Unit::Count),
        "Live containers of the queue.",
    ),
    (
        names::QUEUE_PENDING_MEMORY,
        Some(Unit::Bytes),
        "Memory asked for and not yet allocated.",
    ),
    (
        names::QUEUE_PENDING_VCORES,
        Some(Unit::Count),
        "Virtual cores asked for and not yet allocated.",
    ),
    (
        names::QUEUE_PENDING_CONTAINERS,
        Some(Unit::Count),
        "Containers asked for and not yet allocated.",
    ),
    (
        names::QUEUE_RESERVED_MEMORY,
        Some(Unit::Bytes),
        "Memory held by node reservations for the queue's applications.",
    ),
    (
        names::QUEUE_RESERVED_VCORES,
        Some(Unit::Count),
        "Virtual cores held by node reservations for the queue's applications.",
    ),
    (
        names::QUEUE_RESERVED_CONTAINERS,
        Some(Unit::Count),
        "Node reservations held for the queue's applications.",
    ),
    (
        names::QUEUE_FAIR_SHARE_MEMORY,
        Some(Unit::Bytes),
        "Instantaneous fair share of memory.",
    ),
    (
        names::QUEUE_FAIR_SHARE_VCORES,
        Some(Unit::Count),
        "Instantaneous fair share of virtual cores.",
    ),
    (
        names::QUEUE_STEADY_FAIR_SHARE_MEMORY,
        Some(Unit::Bytes),
        "Steady fair share of memory.",
    ),
    (
        names::QUEUE_STEADY_FAIR_SHARE_VCORES,
        Some(Unit::Count),
        "Steady fair share of virtual cores.",
    ),
    (
        names::QUEUE_MIN_SHARE_MEMORY,
        Some(Unit::Bytes),
        "Configured min share of memory.",
    ),
    (
        names::QUEUE_MIN_SHARE_VCORES,
        Some(Unit::Count),
        "Configured min share of virtual cores.",
    ),
    (
        names::QUEUE_MAX_SHARE_MEMORY,
        Some(Unit::Bytes),
        "Effective max share of memory, capped at the cluster's capacity.",
    ),
    (
        names::QUEUE_MAX_SHARE_VCORES,
        Some(Unit::Count),
        "Effective max share of virtual cores, capped at the cluster's capacity.",
    ),
    (
        names::QUEUE_AM_MEMORY,
        Some(Unit::Bytes),
        "Memory used by the queue's application masters.",
    ),
    (
        names::QUEUE_AM_VCORES,
        Some(Unit::Count),
        "Virtual cores used by the queue's application masters.",
    ),
    (
        names::QUEUE_CONTAINERS_PREEMPTED,
        Some(Unit::Count),
        "Containers of the queue taken back by preemption.",
    ),
    (
        names::QUEUE_CONTAINERS_ALLOCATED,
        Some(Unit::Count),
        "Containers allocated to the queue's applications, by locality.",
    ),
    (
        names::QUEUE_CONTAINERS_RELEASED,
        Some(Unit::Count),
        "Containers of the queue's applications that ended, for any reason.",
    ),
    (
        names::QUEUE_MAX_RUNNING_APPS,
        Some(Unit::Count),
        "The queue's running-app limit (maxRunningApps); +Inf when it has none.",
    ),
    (
        names::QUEUE_AM_LIMIT_MEMORY,
        Some(Unit::Bytes),
        "Memory the queue's application masters may use now (maxAMShare of its fair share); +Inf for parents and when unlimited.",
    ),
    (
        names::QUEUE_AM_LIMIT_VCORES,
        Some(Unit::Count),
        "Virtual cores the queue's application masters may use now; +Inf for parents and when unlimited.",
    ),
];

const OTHER_DESCRIPTIONS: &[Description] = &[
    (names::CLUSTER_NODES, Some(Unit::Count), "Nodes by state."),
    (
        names::CLUSTER_CAPACITY_MEMORY,
        Some(Unit::Bytes),
        "Memory of the nodes in service (a draining node counts what its containers hold).",
    ),
    (
        names::CLUSTER_CAPACITY_VCORES,
        Some(Unit::Count),
        "Virtual cores of the nodes in service (a draining node counts what its containers hold).",
    ),
    (
        names::CLUSTER_AVAILABLE_MEMORY,
        Some(Unit::Bytes),
        "Memory not allocated to any container.",
    ),
    (
        names::CLUSTER_AVAILABLE_VCORES,
        Some(Unit::Count),
        "Virtual cores not allocated to any container.",
    ),
    (
        names::CLUSTER_CONTAINERS,
        Some(Unit::Count),
        "Live containers.",
    ),
    (
        names::CLUSTER_UTILIZATION_NODES,
        Some(Unit::Count),
        "Live nodes that report what they use; the used-memory and used-CPU gauges sum over these only.",
    ),
    (
        names::CLUSTER_NODE_USED_MEMORY,
        Some(Unit::Bytes),
        "Physical memory in use on the reporting nodes' machines, by every process, as their node agents last measured it.",
    ),
    (
        names::CLUSTER_NODE_USED_CPU,
        None,
        "Processors kept busy on the reporting nodes' machines, by every process (1 is one processor fully busy).",
    ),
    (
        names::CLUSTER_CONTAINERS_USED_MEMORY,
        Some(Unit::Bytes),
        "Physical memory in use by the reporting nodes' containers, to compare with the memory allocated to them.",
    ),
    (
        names::CLUSTER_CONTAINERS_USED_CPU,
        None,
        "Processors kept busy by the reporting nodes' containers (1 is one processor fully busy).",
    ),
    (
        names::HEARTBEAT_DURATION,
        Some(Unit::Seconds),
        "Time to handle a node heartbeat, from request to answer.",
    ),
    (
        names::ALLOCATE_DURATION,
        Some(Unit::Seconds),
        "Time to handle an application master's allocate call, from request to answer.",
    ),
    (
        names::UPDATE_DURATION,
        Some(Unit::Seconds),
        "Time of the scheduler's update pass (demand and fair shares).",
    ),
    (
        names::ALLOCATIONS,
        Some(Unit::Count),
        "Containers allocated, by locality.",
    ),
    (
        names::PREEMPTION_WARNINGS,
        Some(Unit::Count),
        "Containers whose application master was warned that preemption will take them back, each counted once.",
    ),
    (
        names::PREEMPTION_KILLS,
        Some(Unit::Count),
        "Containers killed by preemption.",
    ),
    (
        names::APPS_REJECTED,
        Some(Unit::Count),
        "Submissions refused by placement, an ACL or a size limit.",
    ),
    (
        names::SNAPSHOT_AGE,
        Some(Unit::Seconds),
        "Time since the scheduler last published its snapshot (gauges, lists), measured at the scrape; it grows without bound if the scheduler stalls.",
    ),
    (
        names::QUEUED_COMMANDS,
        Some(Unit::Count),
        "Requests (heartbeats, allocate calls, submissions) waiting for the scheduler, at the scrape.",
    ),
    (
        names::HEARTBEAT_MAX_AGE,
        Some(Unit::Seconds),
        "The longest time since a registered (running or draining) node's last heartbeat, measured at the scrape; 0 with none.",
    ),
    (
        names::RELOADS,
        Some(Unit::Count),
        "Allocation file loads, by outcome.",
    ),
    (
        names::RELOAD_LAST_SUCCESS,
        Some(Unit::Seconds),
        "When the allocation file in force was loaded.",
    ),
    (
        names::RELOAD_LAST_FAILURE,
        Some(Unit::Seconds),
        "When a load of the allocation file last failed; 0 before any. Later than the last success: the file on disk is not the one in force.",
    ),
];

/// The histograms; every other name without `_total` is a gauge.
const HISTOGRAMS: &[&str] = &[
    names::HEARTBEAT_DURATION,
    names::ALLOCATE_DURATION,
    names::UPDATE_DURATION,
];

impl Metrics {
    /// A fresh registry with every metric described.
    pub fn new() -> Metrics {
        Metrics::with_idle_timeout(IDLE_TIMEOUT)
    }

    /// A fresh registry whose untouched series go after `idle` (tests
    /// shorten it: the exporter measures it on the real clock).
    pub(crate) fn with_idle_timeout(idle: Duration) -> Metrics {
        let registry = Registry::new(RegistrySettings {
            descriptions: &[QUEUE_DESCRIPTIONS, OTHER_DESCRIPTIONS],
            histograms: HISTOGRAMS,
            latency_buckets: LATENCY_BUCKETS,
            idle_timeout: Some(idle),
        });
        let outcome = |o: &'static str| vec![Label::new("outcome", o)];
        let gauge = |name| registry.gauge(name, vec![]);
        Metrics {
            snapshot_age: gauge(names::SNAPSHOT_AGE),
            queued_commands: gauge(names::QUEUED_COMMANDS),
            heartbeat_max_age: gauge(names::HEARTBEAT_MAX_AGE),
            heartbeat_duration: registry.histogram(names::HEARTBEAT_DURATION),
            allocate_duration: registry.histogram(names::ALLOCATE_DURATION),
            reload_success: registry.counter(names::RELOADS, outcome("success")),
            reload_failure: registry.counter(names::RELOADS, outcome("failure")),
            reload_last_success: gauge(names::RELOAD_LAST_SUCCESS),
            reload_last_failure: gauge(names::RELOAD_LAST_FAILURE),
            registry,
        }
    }

    /// The text exposition format (version 0.0.4) of every metric.
    pub fn render(&self) -> String {
        self.registry.render()
    }

    /// Sets the gauges measured at a scrape from the latest snapshot and the
    /// time `now`: they must move even when the scheduler does not.
    pub(crate) fn observe_scrape(&self, view: &View, now: Time, queued_commands: usize) {
        let secs = |d: weft_model::Duration| d.as_millis() as f64 / 1000.0;
        self.snapshot_age.set(secs(now.since(view.now)));
        self.queued_commands.set(queued_commands as f64);
        let oldest = view
            .nodes
            .iter()
            // Draining and unhealthy nodes heartbeat too, and are lost alike
            // when they stop.
            .filter(|n| {
                matches!(
                    n.state,
                    NodeState::Running | NodeState::Decommissioning | NodeState::Unhealthy
                )
            })
            .map(|n| now.since(n.last_heartbeat))
            .max()
            .unwrap_or(weft_model::Duration::ZERO);
        self.heartbeat_max_age.set(secs(oldest));
    }

    /// Drains recorded histogram samples into their buckets; run every few seconds.
    pub fn run_upkeep(&self) {
        self.registry.run_upkeep();
    }

    /// Marks the series the actor does not set as alive: the reloader's
    /// change only on a reload, which may not happen for months, and the
    /// scrape's only when Prometheus calls (once its handle's series has
    /// idled out, setting it would no longer show).
    fn keep_alive(&self) {
        self.reload_success.increment(0);
        self.reload_failure.increment(0);
        for g in [
            &self.reload_last_success,
            &self.reload_last_failure,
            &self.snapshot_age,
            &self.queued_commands,
            &self.heartbeat_max_age,
        ] {
            g.increment(0.0);
        }
    }

    fn counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.registry.counter(name, labels)
    }

    fn gauge(&self, name: &'static str, labels: Vec<Label>) -> Gauge {
        self.registry.gauge(name, labels)
    }

    fn histogram(&self, name: &'static str) -> Histogram {
        self.registry.histogram(name)
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

/// The scheduler's metrics, owned by the actor: per-queue handles created as
/// queues appear, cluster gauges, and counters fed by the core's events.
pub(crate) struct SchedulerMetrics {
    metrics: Arc<Metrics>,
    queues: BTreeMap<QueuePath, QueueMetrics>,
    allocations: [Counter; 3],
    preemption_warnings: Counter,
    preemption_kills: Counter,
    apps_rejected: Counter,
    update_duration: Histogram,
    /// Containers allocated (by locality) and ended in each leaf since the
    /// last publish, which adds them to the leaf's and its ancestors'
    /// counters: one map entry per container instead of a counter per level.
    container_counts: BTreeMap<QueuePath, [u64; 4]>,
    nodes: [Gauge; 6],
    capacity: [Gauge; 2],
    available: [Gauge; 2],
    containers: Gauge,
    /// Reporting nodes, node memory and CPU, containers' memory and CPU.
    utilization: [Gauge; 5],
}

struct QueueMetrics {
    submitted: Counter,
    completed: Counter,
    killed: Counter,
    failed: Counter,
    preempted: Counter,
    /// By locality, as `locality_index` numbers them.
    allocated: [Counter; 3],
    released: Counter,
    gauges: [Gauge; QUEUE_GAUGES.len()],
    /// By `RUNNING_AGE_MINUTES`.
    running_by_age: [Gauge; 4],
    /// The counters' values, which the exporter's handles cannot be asked
    /// for, kept for `/jmx`.
    counts: QueueCounts,
}

const LOCALITY_LABELS: [&str; 3] = ["node_local", "rack_local", "off_switch"];

fn locality_index(locality: Locality) -> usize {
    match locality {
        Locality::NodeLocal => 0,
        Locality::RackLocal => 1,
        Locality::OffSwitch => 2,
    }
}

const QUEUE_GAUGES: [&str; 26] = [
    names::QUEUE_APPS_RUNNING,
    names::QUEUE_APPS_PENDING,
    names::QUEUE_APPS_ACTIVE,
    names::QUEUE_USERS_ACTIVE,
    names::QUEUE_ALLOCATED_MEMORY,
    names::QUEUE_ALLOCATED_VCORES,
    names::QUEUE_ALLOCATED_CONTAINERS,
    names::QUEUE_PENDING_MEMORY,
    names::QUEUE_PENDING_VCORES,
    names::QUEUE_PENDING_CONTAINERS,
    names::QUEUE_RESERVED_MEMORY,
    names::QUEUE_RESERVED_VCORES,
    names::QUEUE_RESERVED_CONTAINERS,
    names::QUEUE_FAIR_SHARE_MEMORY,
    names::QUEUE_FAIR_SHARE_VCORES,
    names::QUEUE_STEADY_FAIR_SHARE_MEMORY,
    names::QUEUE_STEADY_FAIR_SHARE_VCORES,
    names::QUEUE_MIN_SHARE_MEMORY,
    names::QUEUE_MIN_SHARE_VCORES,
    names::QUEUE_MAX_SHARE_MEMORY,
    names::QUEUE_MAX_SHARE_VCORES,
    names::QUEUE_AM_MEMORY,
    names::QUEUE_AM_VCORES,
    names::QUEUE_MAX_RUNNING_APPS,
    names::QUEUE_AM_LIMIT_MEMORY,
    names::QUEUE_AM_LIMIT_VCORES,
];

fn memory_and_vcores(res: Resource) -> [f64; 2] {
    [res.memory_mb() as f64 * MB, res.vcores() as f64]
}

impl QueueMetrics {
    fn new(m: &Metrics, queue: &QueuePath) -> QueueMetrics {
        let label = || vec![Label::new("queue", queue.to_string())];
        QueueMetrics {
            submitted: m.counter(names::QUEUE_APPS_SUBMITTED, label()),
            completed: m.counter(names::QUEUE_APPS_COMPLETED, label()),
            killed: m.counter(names::QUEUE_APPS_KILLED, label()),
            failed: m.counter(names::QUEUE_APPS_FAILED, label()),
            preempted: m.counter(names::QUEUE_CONTAINERS_PREEMPTED, label()),
            allocated: LOCALITY_LABELS.map(|l| {
                m.counter(
                    names::QUEUE_CONTAINERS_ALLOCATED,
                    vec![
                        Label::new("queue", queue.to_string()),
                        Label::new("locality", l),
                    ],
                )
            }),
            released: m.counter(names::QUEUE_CONTAINERS_RELEASED, label()),
            gauges: QUEUE_GAUGES.map(|name| m.gauge(name, label())),
            running_by_age: RUNNING_AGE_MINUTES.map(|minutes| {
                m.gauge(
                    names::QUEUE_APPS_RUNNING_BY_AGE,
                    vec![
                        Label::new("queue", queue.to_string()),
                        Label::new("age_minutes", minutes.to_string()),
                    ],
                )
            }),
            counts: QueueCounts::default(),
        }
    }
}

impl SchedulerMetrics {
    pub(crate) fn new(metrics: Arc<Metrics>) -> SchedulerMetrics {
        let m = &metrics;
        let locality = |l: &str| {
            m.counter(
                names::ALLOCATIONS,
                vec![Label::new("locality", l.to_owned())],
            )
        };
        let state = |s: &str| {
            m.gauge(
                names::CLUSTER_NODES,
                vec![Label::new("state", s.to_owned())],
            )
        };
        SchedulerMetrics {
            allocations: LOCALITY_LABELS.map(locality),
            container_counts: BTreeMap::new(),
            preemption_warnings: m.counter(names::PREEMPTION_WARNINGS, vec![]),
            preemption_kills: m.counter(names::PREEMPTION_KILLS, vec![]),
            apps_rejected: m.counter(names::APPS_REJECTED, vec![]),
            update_duration: m.histogram(names::UPDATE_DURATION),
            nodes: [
                state("running"),
                state("decommissioning"),
                state("unhealthy"),
                state("lost"),
                state("shutdown"),
                state("decommissioned"),
            ],
            capacity: [
                m.gauge(names::CLUSTER_CAPACITY_MEMORY, vec![]),
                m.gauge(names::CLUSTER_CAPACITY_VCORES, vec![]),
            ],
            available: [
                m.gauge(names::CLUSTER_AVAILABLE_MEMORY, vec![]),
                m.gauge(names::CLUSTER_AVAILABLE_VCORES, vec![]),
            ],
            containers: m.gauge(names::CLUSTER_CONTAINERS, vec![]),
            utilization: [
                names::CLUSTER_UTILIZATION_NODES,
                names::CLUSTER_NODE_USED_MEMORY,
                names::CLUSTER_NODE_USED_CPU,
                names::CLUSTER_CONTAINERS_USED_MEMORY,
                names::CLUSTER_CONTAINERS_USED_CPU,
            ]
            .map(|name| m.gauge(name, vec![])),
            queues: BTreeMap::new(),
            metrics,
        }
    }

    /// Runs `f` on the queue's metrics and each ancestor's (Hadoop propagates
    /// queue metrics to parents).
    fn for_queue_and_ancestors(&mut self, queue: &QueuePath, mut f: impl FnMut(&mut QueueMetrics)) {
        for path in queue.self_and_ancestors() {
            let m = &self.metrics;
            let qm = self
                .queues
                .entry(path)
                .or_insert_with_key(|p| QueueMetrics::new(m, p));
            f(qm);
        }
    }

    pub(crate) fn app_submitted(&mut self, queue: &QueuePath) {
        self.for_queue_and_ancestors(queue, |q| {
            q.submitted.increment(1);
            q.counts.apps_submitted += 1;
        });
    }

    pub(crate) fn app_rejected(&self) {
        self.apps_rejected.increment(1);
    }

    pub(crate) fn app_ended(&mut self, queue: &QueuePath, state: AppState) {
        match state {
            AppState::Finished => self.for_queue_and_ancestors(queue, |q| {
                q.completed.increment(1);
                q.counts.apps_completed += 1;
            }),
            AppState::Killed => self.for_queue_and_ancestors(queue, |q| {
                q.killed.increment(1);
                q.counts.apps_killed += 1;
            }),
            AppState::Failed => self.for_queue_and_ancestors(queue, |q| {
                q.failed.increment(1);
                q.counts.apps_failed += 1;
            }),
            _ => {}
        }
    }

    pub(crate) fn container_allocated(&mut self, queue: &QueuePath, locality: Locality) {
        let idx = locality_index(locality);
        self.allocations[idx].increment(1);
        self.count_container(queue, idx);
    }

    pub(crate) fn container_ended(&mut self, queue: &QueuePath) {
        self.count_container(queue, 3);
    }

    fn count_container(&mut self, queue: &QueuePath, idx: usize) {
        match self.container_counts.get_mut(queue) {
            Some(counts) => counts[idx] += 1,
            None => {
                let mut counts = [0; 4];
                counts[idx] = 1;
                self.container_counts.insert(queue.clone(), counts);
            }
        }
    }

    pub(crate) fn container_preempted(&mut self, queue: &QueuePath) {
        self.preemption_kills.increment(1);
        self.for_queue_and_ancestors(queue, |q| {
            q.preempted.increment(1);
            q.counts.containers_preempted += 1;
        });
    }

    pub(crate) fn preemption_warned(&self) {
        self.preemption_warnings.increment(1);
    }

    pub(crate) fn update_took(&self, d: Duration) {
        self.update_duration.record(d.as_secs_f64());
    }

    /// Every live queue's totals, as of the last `publish` (which adds the
    /// containers counted since the one before).
    pub(crate) fn queue_counts(&self) -> BTreeMap<QueuePath, QueueCounts> {
        self.queues
            .iter()
            .map(|(path, q)| (path.clone(), q.counts))
            .collect()
    }

    /// Sets every gauge from a freshly built view, forgets queues that no
    /// longer exist, and touches every counter still alive (adding 0), so
    /// that only the series of removed queues reach the idle timeout.
    pub(crate) fn publish(&mut self, view: &View) {
        self.metrics.keep_alive();
        for c in self.allocations.iter().chain([
            &self.preemption_warnings,
            &self.preemption_kills,
            &self.apps_rejected,
        ]) {
            c.increment(0);
        }
        let c = &view.cluster;
        let node_counts = [
            c.nodes_running,
            c.nodes_decommissioning,
            c.nodes_unhealthy,
            c.nodes_lost,
            c.nodes_shutdown,
            c.nodes_decommissioned,
        ];
        for (g, n) in self.nodes.iter().zip(node_counts) {
            g.set(f64::from(n));
        }
        for (g, v) in self.capacity.iter().zip(memory_and_vcores(c.total)) {
            g.set(v);
        }
        for (g, v) in self
            .available
            .iter()
            .zip(memory_and_vcores(c.total.saturating_sub(c.allocated)))
        {
            g.set(v);
        }
        self.containers.set(c.containers as f64);
        let u = view.cluster_utilization();
        let values = [
            f64::from(u.reporting_nodes),
            u.node_pmem_mb as f64 * MB,
            u.node_cpu,
            u.containers_pmem_mb as f64 * MB,
            u.containers_cpu,
        ];
        for (g, v) in self.utilization.iter().zip(values) {
            g.set(v);
        }
        for (leaf, counts) in std::mem::take(&mut self.container_counts) {
            self.for_queue_and_ancestors(&leaf, |q| {
                for ((c, total), n) in q
                    .allocated
                    .iter()
                    .zip(&mut q.counts.containers_allocated)
                    .zip(counts)
                {
                    c.increment(n);
                    *total += n;
                }
                q.released.increment(counts[3]);
                q.counts.containers_released += counts[3];
            });
        }

        let apps = queue_apps(view);
        let live: std::collections::BTreeSet<&QueuePath> =
            view.queues.iter().map(|q| &q.tree.path).collect();
        self.queues.retain(|p, _| live.contains(p));
        for q in self.queues.values() {
            for c in [
                &q.submitted,
                &q.completed,
                &q.killed,
                &q.failed,
                &q.preempted,
                &q.released,
            ]
            .into_iter()
            .chain(&q.allocated)
            {
                c.increment(0);
            }
        }
        for q in &view.queues {
            let t = &q.tree;
            let m = &self.metrics;
            let qm = self
                .queues
                .entry(t.path.clone())
                .or_insert_with_key(|p| QueueMetrics::new(m, p));
            let a = apps.get(&t.path).copied().unwrap_or_default();
            let [am, av] = memory_and_vcores(t.usage);
            let [pm, pv] = memory_and_vcores(q.pending);
            let [rm, rv] = memory_and_vcores(q.reserved);
            let [fm, fv] = memory_and_vcores(t.fair_share);
            let [sm, sv] = memory_and_vcores(t.steady_fair_share);
            let [nm, nv] = memory_and_vcores(t.min_share);
            let [xm, xv] = memory_and_vcores(t.max_share.component_min(c.total));
            let [um, uv] = memory_and_vcores(t.am_usage);
            let [lm, lv] = t.am_limit.map_or([f64::INFINITY; 2], memory_and_vcores);
            let values = [
                f64::from(a.running),
                f64::from(a.pending),
                f64::from(a.active),
                f64::from(a.active_users),
                am,
                av,
                f64::from(q.n_containers),
                pm,
                pv,
                q.pending_containers as f64,
                rm,
                rv,
                f64::from(q.n_reserved),
                fm,
                fv,
                sm,
                sv,
                nm,
                nv,
                xm,
                xv,
                um,
                uv,
                t.max_running_apps.map_or(f64::INFINITY, f64::from),
                lm,
                lv,
            ];
            for (g, v) in qm.gauges.iter().zip(values) {
                g.set(v);
            }
            for (g, n) in qm.running_by_age.iter().zip(a.running_by_age) {
                g.set(f64::from(n));
            }
        }
    }
}

/// What a queue's apps are doing, its subtree's included, as Hadoop's queue
/// metrics count them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueueApps {
    /// Apps whose current attempt has had a container, even if it holds
    /// none now (an AM-less unmanaged app between asks): Hadoop's `AppsRunning`.
    pub(crate) running: u32,
    /// The other apps not ended, those waiting on a limit included.
    pub(crate) pending: u32,
    /// Apps not ended with outstanding asks (`ActiveApplications`).
    pub(crate) active: u32,
    /// Users with an active app in the subtree.
    pub(crate) active_users: u32,
    /// Running apps by how long since their first container, split at
    /// `RUNNING_AGE_MINUTES` (Hadoop's `running_0` ... `running_1440`).
    pub(crate) running_by_age: [u32; 4],
}

/// Where Hadoop's queue metrics split running apps by age: under an hour,
/// under five hours, under a day, and longer.
pub(crate) const RUNNING_AGE_MINUTES: [u64; 4] = [0, 60, 300, 1440];

/// Each queue's `QueueApps`. A queue with no app not ended is missing.
pub(crate) fn queue_apps(view: &View) -> BTreeMap<QueuePath, QueueApps> {
    let mut res: BTreeMap<QueuePath, QueueApps> = BTreeMap::new();
    let mut users: BTreeMap<QueuePath, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for app in view.apps.values() {
        let r = &app.report;
        if r.record.state.is_final() {
            continue;
        }
        let running = r.attempt_launched;
        let active = r.pending_containers > 0;
        let age = running.then(|| {
            let since = r.record.launched.unwrap_or(view.now);
            let minutes = view.now.since(since).as_millis() / 60_000;
            RUNNING_AGE_MINUTES
                .iter()
                .rposition(|m| minutes >= *m)
                .unwrap_or(0)
        });
        for p in r.record.queue.self_and_ancestors() {
            if active {
                users.entry(p.clone()).or_default().insert(&r.record.user);
            }
            let e = res.entry(p).or_default();
            if let Some(age) = age {
                e.running += 1;
                e.running_by_age[age] += 1;
            } else {
                e.pending += 1;
            }
            e.active += u32::from(active);
        }
    }
    for (p, u) in users {
        if let Some(e) = res.get_mut(&p) {
            e.active_users = u.len() as u32;
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use weft_core::ResourceManager;

    use super::*;
    use crate::config::RmConfig;
    use crate::testing;

    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines().find_map(|l| {
            let v = l.strip_prefix(series)?.strip_prefix(' ')?;
            Some(v.parse().unwrap_or_else(|e| panic!("{l:?}: {e}")))
        })
    }

    /// The test configuration's queues (`root`, `root.a`, ...), as the actor publishes them.
    fn view() -> View {
        let config = RmConfig::from_texts(&testing::site(&[]), testing::ALLOC).unwrap();
        let core = ResourceManager::new(config.alloc.config.clone(), config.core, Time::ZERO);
        View::build(&core, &BTreeMap::new(), 1, Time::ZERO, 0)
    }

    #[test]
    fn apps_are_counted_as_running_by_age_active_and_by_active_user() {
        let mut sc = weft_test_support::scenario::Scenario::new();
        let mut run = |cmd: &str| {
            sc.run(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        };
        run("config\n<allocations><queue name=\"a\"/><queue name=\"b\"/></allocations>");
        // An hour passes below without heartbeats or allocate calls.
        run(
            "site yarn.nm.liveness-monitor.expiry-interval-ms=86400000 yarn.am.liveness-monitor.expiry-interval-ms=86400000",
        );
        // One container a heartbeat: the last app, submitted after the last
        // heartbeat, waits for its AM container.
        run("node n1 8192mb,8vc");
        run("submit old queue=root.a user=alice");
        run("heartbeat n1");
        run("register old");
        run("ask old 3x1024mb,1vc");
        run("advance 61m");
        run("submit new queue=root.a user=bob");
        // The update pass sees its demand: it goes before `old` then.
        run("advance 1s");
        run("heartbeat n1");
        run("submit waiting queue=root.b user=alice");
        run("advance 1s");
        let now = Time::from_millis((61 * 60 + 2) * 1000);
        let view = View::build(sc.rm(), &BTreeMap::new(), 1, now, 0);
        let apps = queue_apps(&view);
        let at = |q: &str| apps[&q.parse::<QueuePath>().unwrap()];
        // `old` has asks left and has run for an hour; `new` has none and
        // has just started; `waiting` has only its AM's ask.
        let a = QueueApps {
            running: 2,
            pending: 0,
            active: 1,
            active_users: 1,
            running_by_age: [1, 1, 0, 0],
        };
        assert_eq!(at("root.a"), a);
        let b = QueueApps {
            running: 0,
            pending: 1,
            active: 1,
            active_users: 1,
            running_by_age: [0; 4],
        };
        assert_eq!(at("root.b"), b);
        // Alice is active in both leaves and counts once at the root.
        let root = QueueApps {
            running: 2,
            pending: 1,
            active: 2,
            active_users: 1,
            running_by_age: [1, 1, 0, 0],
        };
        assert_eq!(at("root"), root);
    }

    #[test]
    fn a_removed_queues_series_go_and_every_live_series_stays() {
        let idle = Duration::from_millis(300);
        let metrics = Arc::new(Metrics::with_idle_timeout(idle));
        // As at startup: the reloader counts the first load.
        metrics.reload_success.increment(1);
        metrics.reload_last_success.set(1_700_000_000.0);
        let mut sched = SchedulerMetrics::new(metrics.clone());
        let live: QueuePath = "root.a".parse().unwrap();
        let gone: QueuePath = "root.users.bob".parse().unwrap();
        sched.app_submitted(&live);
        sched.app_submitted(&gone);
        sched.app_ended(&gone, AppState::Killed);
        sched.container_allocated(&live, Locality::NodeLocal);
        sched.container_allocated(&live, Locality::NodeLocal);
        sched.container_allocated(&live, Locality::OffSwitch);
        sched.container_ended(&live);
        let view = view();
        sched.publish(&view);
        let before = metrics.render();
        let bob = r#"weft_queue_apps_killed_total{queue="root.users.bob"}"#;
        assert_eq!(value(&before, bob), Some(1.0), "{before}");

        // A dynamic queue that came and went must not stay in every scrape
        // for ever (user queues come and go without bound); what is still
        // there must stay however long nobody changes it.
        std::thread::sleep(idle * 2);
        sched.publish(&view);
        let after = metrics.render();
        assert!(!after.contains("root.users.bob"), "{after}");
        for (series, v) in [
            (r#"weft_queue_apps_submitted_total{queue="root.a"}"#, 1.0),
            (r#"weft_queue_apps_submitted_total{queue="root"}"#, 2.0),
            (r#"weft_queue_apps_killed_total{queue="root"}"#, 1.0),
            (r#"weft_queue_allocated_memory_bytes{queue="root.a"}"#, 0.0),
            (r#"weft_alloc_file_reloads_total{outcome="success"}"#, 1.0),
            (r#"weft_alloc_file_reloads_total{outcome="failure"}"#, 0.0),
            (
                "weft_alloc_file_last_success_timestamp_seconds",
                1_700_000_000.0,
            ),
            (
                r#"weft_queue_containers_allocated_total{queue="root.a",locality="node_local"}"#,
                2.0,
            ),
            (
                r#"weft_queue_containers_allocated_total{queue="root",locality="off_switch"}"#,
                1.0,
            ),
            (
                r#"weft_queue_containers_allocated_total{queue="root",locality="rack_local"}"#,
                0.0,
            ),
            (r#"weft_queue_containers_released_total{queue="root"}"#, 1.0),
            (
                r#"weft_queue_max_running_apps{queue="root.a"}"#,
                f64::INFINITY,
            ),
            (
                r#"weft_queue_am_limit_memory_bytes{queue="root"}"#,
                f64::INFINITY,
            ),
            ("weft_alloc_file_last_failure_timestamp_seconds", 0.0),
            ("weft_scheduler_apps_rejected_total", 0.0),
            ("weft_scheduler_snapshot_age_seconds", 0.0),
            ("weft_scheduler_preemption_kills_total", 0.0),
            (r#"weft_cluster_nodes{state="lost"}"#, 0.0),
        ] {
            assert_eq!(value(&after, series), Some(v), "{series} in\n{after}");
        }
    }
}
