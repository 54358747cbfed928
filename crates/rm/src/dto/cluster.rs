//! The YARN REST API's cluster-level bodies, in Hadoop's shapes:
//! `clusterInfo`, `clusterMetrics`, the Fair Scheduler's `scheduler` tree,
//! `nodes`/`node`, and the admin refresh answer; each built from a `View`.
//!
//! The wrapping object (`{"clusterInfo": ...}`) is added by the response
//! encoder, which also writes XML; these are the inner values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use weft_core::{NodeReport, NodeState, QueueReport};
use weft_model::{QueuePath, Resource};
use weft_queue_tree::QueueKind;

use crate::dto::{EpochMillis, InvalidField, ResourceDto};
use crate::reload::ReloadStatus;
use crate::utilization::NodeUtilization;
use crate::view::View;

/// `GET /ws/v1/cluster/info`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfoDto {
    /// The cluster's id: the RM's start time.
    pub id: u64,
    /// When the RM started (ms since the epoch).
    pub started_on: EpochMillis,
    /// `STARTED`.
    pub state: String,
    /// `ACTIVE` (Weft has no standby).
    pub ha_state: String,
    /// The state store (`none`: Weft keeps no state across restarts).
    pub rm_state_store_name: String,
    /// Weft's version.
    pub resource_manager_version: String,
    /// Weft's version, as a build string.
    pub resource_manager_build_version: String,
    /// Empty.
    pub resource_manager_version_built_on: String,
    /// The YARN REST API level Weft follows.
    pub hadoop_version: String,
    /// The same.
    pub hadoop_build_version: String,
    /// Empty.
    pub hadoop_version_built_on: String,
    /// HA is not available.
    pub ha_zoo_keeper_connection_state: String,
}

impl ClusterInfoDto {
    /// The info of an RM started at `started_on`, which is also its
    /// cluster id, as in Hadoop (not the time origin of its clock, which a
    /// state store may have moved further back).
    pub fn new(started_on: EpochMillis) -> ClusterInfoDto {
        let version = env!("CARGO_PKG_VERSION");
        ClusterInfoDto {
            id: started_on,
            started_on,
            state: "STARTED".to_owned(),
            ha_state: "ACTIVE".to_owned(),
            rm_state_store_name: "none".to_owned(),
            resource_manager_version: version.to_owned(),
            resource_manager_build_version: format!("weft {version}"),
            resource_manager_version_built_on: String::new(),
            hadoop_version: HADOOP_API_LEVEL.to_owned(),
            hadoop_build_version: format!("{HADOOP_API_LEVEL} (weft {version})"),
            hadoop_version_built_on: String::new(),
            ha_zoo_keeper_connection_state: "ResourceManager HA is not enabled.".to_owned(),
        }
    }
}

/// The Hadoop release whose REST API Weft follows.
pub const HADOOP_API_LEVEL: &str = "3.3.6";

/// `GET /ws/v1/cluster/metrics`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterMetricsDto {
    /// Apps submitted since start.
    pub apps_submitted: u64,
    /// Finished apps in history.
    pub apps_completed: u32,
    /// Accepted apps without a running AM (including those waiting on a limit).
    pub apps_pending: u32,
    /// Running apps.
    pub apps_running: u32,
    /// Failed apps in history.
    pub apps_failed: u32,
    /// Killed apps in history.
    pub apps_killed: u32,
    /// Reserved memory (MB).
    #[serde(rename = "reservedMB")]
    pub reserved_mb: u64,
    /// Unallocated memory (MB).
    #[serde(rename = "availableMB")]
    pub available_mb: u64,
    /// Allocated memory (MB).
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: u64,
    /// Pending memory (MB).
    #[serde(rename = "pendingMB")]
    pub pending_mb: u64,
    /// Memory of running nodes (MB).
    #[serde(rename = "totalMB")]
    pub total_mb: u64,
    /// Reserved vcores.
    pub reserved_virtual_cores: u64,
    /// Unallocated vcores.
    pub available_virtual_cores: u64,
    /// Allocated vcores.
    pub allocated_virtual_cores: u64,
    /// Pending vcores.
    pub pending_virtual_cores: u64,
    /// Vcores of running nodes.
    pub total_virtual_cores: u64,
    /// Memory the live nodes report in use, scaled to what each offers, as
    /// a whole percentage of `totalMB` (0 until a node reports). Defaults
    /// when read, since older RMs (Hadoop's before 2.8, Weft's own) lack it.
    #[serde(default, rename = "utilizedMBPercent")]
    pub utilized_mb_percent: u64,
    /// CPU the live nodes report in use, scaled to the vcores each offers,
    /// as a whole percentage of `totalVirtualCores`.
    #[serde(default)]
    pub utilized_virtual_cores_percent: u64,
    /// Live containers.
    pub containers_allocated: u64,
    /// Reservations.
    pub containers_reserved: u32,
    /// Containers asked for and not yet allocated.
    pub containers_pending: u64,
    /// Every node the RM knows, in any state (draining and unhealthy ones
    /// included).
    pub total_nodes: u32,
    /// Running nodes (not draining or unhealthy ones, as in Hadoop).
    pub active_nodes: u32,
    /// Lost nodes.
    pub lost_nodes: u32,
    /// Nodes whose health checker reports them unfit.
    pub unhealthy_nodes: u32,
    /// Nodes draining (graceful decommissioning).
    pub decommissioning_nodes: u32,
    /// Decommissioned nodes.
    pub decommissioned_nodes: u32,
    /// Always 0.
    pub rebooted_nodes: u32,
    /// Nodes that shut down.
    pub shutdown_nodes: u32,
}

impl ClusterMetricsDto {
    /// The metrics of `view`.
    pub fn from_view(view: &View) -> ClusterMetricsDto {
        let m = &view.cluster;
        let available = m.total.saturating_sub(m.allocated);
        let (utilized_mb_percent, utilized_virtual_cores_percent) =
            view.cluster_utilization().percent_of(m.total);
        ClusterMetricsDto {
            apps_submitted: m.apps_submitted,
            apps_completed: m.apps_completed,
            apps_pending: m.apps_accepted + m.apps_waiting,
            apps_running: m.apps_running,
            apps_failed: m.apps_failed,
            apps_killed: m.apps_killed,
            reserved_mb: m.reserved.memory_mb(),
            available_mb: available.memory_mb(),
            allocated_mb: m.allocated.memory_mb(),
            pending_mb: m.pending.memory_mb(),
            total_mb: m.total.memory_mb(),
            reserved_virtual_cores: m.reserved.vcores(),
            available_virtual_cores: available.vcores(),
            allocated_virtual_cores: m.allocated.vcores(),
            pending_virtual_cores: m.pending.vcores(),
            total_virtual_cores: m.total.vcores(),
            utilized_mb_percent,
            utilized_virtual_cores_percent,
            containers_allocated: m.containers,
            containers_reserved: m.containers_reserved,
            containers_pending: m.containers_pending,
            total_nodes: m.nodes_running
                + m.nodes_decommissioning
                + m.nodes_unhealthy
                + m.nodes_lost
                + m.nodes_shutdown
                + m.nodes_decommissioned,
            active_nodes: m.nodes_running,
            lost_nodes: m.nodes_lost,
            unhealthy_nodes: m.nodes_unhealthy,
            decommissioning_nodes: m.nodes_decommissioning,
            decommissioned_nodes: m.nodes_decommissioned,
            rebooted_nodes: 0,
            shutdown_nodes: m.nodes_shutdown,
        }
    }
}

/// `GET /ws/v1/cluster/scheduler`: `{"scheduler":{"schedulerInfo":...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulerDto {
    /// The scheduler's description.
    pub scheduler_info: SchedulerInfoDto,
}

/// The Fair Scheduler's description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulerInfoDto {
    /// `fairScheduler`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The queue tree.
    pub root_queue: QueueDto,
    /// Weft's addition: the allocation file's reload state and last error.
    pub allocation_file: AllocationFileDto,
}

/// One queue, in Hadoop's `FairSchedulerQueueInfo` shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueDto {
    /// `fairSchedulerLeafQueueInfo` for leaves; absent for parents.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Full name (`root.eng.batch`).
    pub queue_name: String,
    /// `fair`, `DRF` or `FIFO`.
    pub scheduling_policy: String,
    /// Weft's addition: the queue's weight.
    pub weight: f32,
    /// `maxRunningApps` (2147483647 when unlimited).
    pub max_apps: u32,
    /// Min share.
    pub min_resources: ResourceDto,
    /// Effective max share, capped at the cluster.
    pub max_resources: ResourceDto,
    /// Usage.
    pub used_resources: ResourceDto,
    /// AM usage.
    pub am_used_resources: ResourceDto,
    /// AM limit (leaves; the max share when unlimited).
    pub am_max_resources: ResourceDto,
    /// Demand as of the last update.
    pub demand_resources: ResourceDto,
    /// Instantaneous fair share.
    pub fair_resources: ResourceDto,
    /// Steady fair share.
    pub steady_fair_resources: ResourceDto,
    /// The cluster's capacity.
    pub cluster_resources: ResourceDto,
    /// Reserved on nodes for this subtree's apps.
    pub reserved_resources: ResourceDto,
    /// Largest container allowed.
    pub max_container_allocation: ResourceDto,
    /// Live containers.
    pub allocated_containers: u32,
    /// Containers asked for and not yet allocated.
    pub pending_containers: u64,
    /// Reservations.
    pub reserved_containers: u32,
    /// Whether containers may be preempted from it.
    pub preemptable: bool,
    /// Leaves: runnable apps that hold a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_active_apps: Option<u32>,
    /// Leaves: the other apps (runnable without containers, or waiting on a limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_pending_apps: Option<u32>,
    /// Parents with children: the children (absent otherwise, as in Hadoop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_queues: Option<ChildQueuesDto>,
}

/// `{"queue": [...]}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildQueuesDto {
    /// The children, in name order.
    pub queue: Vec<QueueDto>,
}

/// The allocation file's reload state (Weft's addition to `schedulerInfo`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocationFileDto {
    /// The file watched, if any (`null`: the built-in defaults, not watched).
    pub path: Option<String>,
    /// Successful loads since start (the first load included).
    pub reloads_succeeded: u64,
    /// Failed loads since start.
    pub reloads_failed: u64,
    /// When the configuration in force was loaded.
    pub last_success: Option<EpochMillis>,
    /// When the last failed load happened.
    pub last_failure: Option<EpochMillis>,
    /// The last failure's problems, one `line:column: element: message` per line;
    /// `null` once a later load succeeds.
    pub last_error: Option<String>,
}

impl AllocationFileDto {
    /// The wire form of the reloader's status.
    pub fn from_status(status: &ReloadStatus) -> AllocationFileDto {
        AllocationFileDto {
            path: status.path.as_ref().map(|p| p.display().to_string()),
            reloads_succeeded: status.succeeded,
            reloads_failed: status.failed,
            last_success: status.last_success,
            last_failure: status.last_failure,
            last_error: status.last_error.clone(),
        }
    }
}

impl SchedulerDto {
    /// The scheduler tree of `view`.
    pub fn from_view(view: &View, reload: &ReloadStatus) -> SchedulerDto {
        let mut active: BTreeMap<&QueuePath, u32> = BTreeMap::new();
        for a in view.apps.values() {
            let r = &a.report;
            if !r.record.state.is_final() && !r.waiting && r.attempt_launched {
                *active.entry(&r.record.queue).or_default() += 1;
            }
        }
        let root = view
            .queues
            .first()
            .map(|_| queue_dto(view, &active, 0))
            .unwrap_or_else(|| empty_root(view));
        SchedulerDto {
            scheduler_info: SchedulerInfoDto {
                kind: "fairScheduler".to_owned(),
                root_queue: root,
                allocation_file: AllocationFileDto::from_status(reload),
            },
        }
    }
}

fn empty_root(view: &View) -> QueueDto {
    let zero = ResourceDto::default();
    QueueDto {
        kind: None,
        queue_name: "root".to_owned(),
        scheduling_policy: "fair".to_owned(),
        weight: 1.0,
        max_apps: i32::MAX as u32,
        min_resources: zero,
        max_resources: ResourceDto::from_resource(view.cluster.total),
        used_resources: zero,
        am_used_resources: zero,
        am_max_resources: zero,
        demand_resources: zero,
        fair_resources: zero,
        steady_fair_resources: zero,
        cluster_resources: ResourceDto::from_resource(view.cluster.total),
        reserved_resources: zero,
        max_container_allocation: zero,
        allocated_containers: 0,
        pending_containers: 0,
        reserved_containers: 0,
        preemptable: true,
        num_active_apps: None,
        num_pending_apps: None,
        child_queues: None,
    }
}

fn queue_dto(view: &View, active: &BTreeMap<&QueuePath, u32>, idx: usize) -> QueueDto {
    let q: &QueueReport = &view.queues[idx];
    let t = &q.tree;
    let cluster = view.cluster.total;
    let max = t.max_share.component_min(cluster);
    let is_leaf = t.kind == QueueKind::Leaf;
    let (num_active_apps, num_pending_apps) = if is_leaf {
        let active = active.get(&t.path).copied().unwrap_or(0);
        let total = t.n_runnable_apps + t.n_waiting_apps;
        (Some(active), Some(total.saturating_sub(active)))
    } else {
        (None, None)
    };
    // A parent without children has no `childQueues` at all, as Hadoop's
    // FairSchedulerQueueInfo leaves it out rather than write it empty.
    let child_queues = (!is_leaf)
        .then(|| ChildQueuesDto {
            queue: t
                .children
                .iter()
                .filter_map(|c| view.queue_index.get(c))
                .map(|i| queue_dto(view, active, *i))
                .collect(),
        })
        .filter(|c| !c.queue.is_empty());
    QueueDto {
        kind: is_leaf.then(|| "fairSchedulerLeafQueueInfo".to_owned()),
        queue_name: t.path.to_string(),
        scheduling_policy: t.policy.hadoop_display_name().to_owned(),
        weight: t.weight,
        max_apps: t.max_running_apps.unwrap_or(i32::MAX as u32),
        min_resources: ResourceDto::from_resource(t.min_share),
        max_resources: ResourceDto::from_resource(max),
        used_resources: ResourceDto::from_resource(t.usage),
        am_used_resources: ResourceDto::from_resource(t.am_usage),
        am_max_resources: ResourceDto::from_resource(if is_leaf {
            t.am_limit.unwrap_or(max)
        } else {
            Resource::ZERO
        }),
        demand_resources: ResourceDto::from_resource(t.demand),
        fair_resources: ResourceDto::from_resource(t.fair_share),
        steady_fair_resources: ResourceDto::from_resource(t.steady_fair_share),
        cluster_resources: ResourceDto::from_resource(cluster),
        reserved_resources: ResourceDto::from_resource(q.reserved),
        max_container_allocation: ResourceDto::from_resource(t.max_container_allocation),
        allocated_containers: q.n_containers,
        pending_containers: q.pending_containers,
        reserved_containers: q.n_reserved,
        preemptable: t.preemptable,
        num_active_apps,
        num_pending_apps,
        child_queues,
    }
}

/// `GET /ws/v1/cluster/nodes`: `{"nodes":{"node":[...]}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodesDto {
    /// The nodes (absent when there are none, as Hadoop writes it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub node: Vec<NodeDto>,
}

/// One node, in Hadoop's `NodeInfo` shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeDto {
    /// Rack.
    pub rack: String,
    /// `RUNNING`, `UNHEALTHY`, `DECOMMISSIONING`, `LOST`, `SHUTDOWN` or
    /// `DECOMMISSIONED`.
    pub state: String,
    /// `host:port`.
    pub id: String,
    /// Host.
    pub node_host_name: String,
    /// Web address.
    #[serde(rename = "nodeHTTPAddress")]
    pub node_http_address: String,
    /// Last heartbeat (or when it left), ms since the epoch.
    pub last_health_update: EpochMillis,
    /// Empty (nodes report no version).
    pub version: String,
    /// While the node is `UNHEALTHY`: its health checker's report; else empty.
    pub health_report: String,
    /// Live containers.
    pub num_containers: u32,
    /// Allocated memory (MB).
    #[serde(rename = "usedMemoryMB")]
    pub used_memory_mb: u64,
    /// Unallocated memory (MB).
    #[serde(rename = "availMemoryMB")]
    pub avail_memory_mb: u64,
    /// Allocated vcores.
    pub used_virtual_cores: u64,
    /// Unallocated vcores.
    pub available_virtual_cores: u64,
    /// Capability.
    pub total_resource: ResourceDto,
    /// Allocated.
    pub used_resource: ResourceDto,
    /// Unallocated.
    pub available_resource: ResourceDto,
    /// Weft's addition: held by a reservation.
    pub reserved_resource: ResourceDto,
    /// What the node last reported it uses; zeros until it reports, as
    /// Hadoop writes it (defaults when read from an RM without it).
    #[serde(default)]
    pub resource_utilization: ResourceUtilizationInfoDto,
    /// A draining node's graceful-decommission timeout in seconds, as it
    /// was asked for (negative: none); absent for other nodes. Hadoop's
    /// `NodeReport` field of this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decommissioning_timeout: Option<i64>,
    /// Weft's addition: when a draining node is decommissioned at the
    /// latest, ms since the epoch; absent without a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decommissioning_deadline: Option<EpochMillis>,
}

impl NodeDto {
    /// The wire form of a node report.
    pub fn from_report(view: &View, n: &NodeReport) -> NodeDto {
        let available = if n.state == NodeState::Running {
            n.capability.saturating_sub(n.allocated)
        } else {
            Resource::ZERO
        };
        NodeDto {
            rack: n.rack.clone(),
            state: n.state.yarn_name().to_owned(),
            id: n.id.to_string(),
            node_host_name: n.id.host().to_owned(),
            node_http_address: n.http_address.clone(),
            last_health_update: view.epoch_ms(n.last_heartbeat),
            version: String::new(),
            health_report: n.health_report.clone(),
            num_containers: n.n_containers,
            used_memory_mb: n.allocated.memory_mb(),
            avail_memory_mb: available.memory_mb(),
            used_virtual_cores: n.allocated.vcores(),
            available_virtual_cores: available.vcores(),
            total_resource: ResourceDto::from_resource(n.capability),
            used_resource: ResourceDto::from_resource(n.allocated),
            available_resource: ResourceDto::from_resource(available),
            reserved_resource: ResourceDto::from_resource(n.reserved),
            resource_utilization: ResourceUtilizationInfoDto::from_utilization(
                view.utilization.get(&n.id),
            ),
            decommissioning_timeout: (n.state == NodeState::Decommissioning)
                .then(|| view.drain_timeouts.get(&n.id).map(|t| t.0))
                .flatten(),
            decommissioning_deadline: n.drain_deadline.map(|t| view.epoch_ms(t)),
        }
    }
}

/// A node's reported use, in Hadoop's `ResourceUtilizationInfo` shape:
/// memory in MB, CPU in processors (1.0 is one processor fully busy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResourceUtilizationInfoDto {
    /// The machine's physical memory in use.
    #[serde(rename = "nodePhysicalMemoryMB")]
    pub node_physical_memory_mb: u64,
    /// The machine's virtual memory in use.
    #[serde(rename = "nodeVirtualMemoryMB")]
    pub node_virtual_memory_mb: u64,
    /// The machine's CPU in use.
    #[serde(rename = "nodeCPUUsage")]
    pub node_cpu_usage: f64,
    /// The containers' physical memory in use, together.
    #[serde(rename = "aggregatedContainersPhysicalMemoryMB")]
    pub aggregated_containers_physical_memory_mb: u64,
    /// The containers' virtual memory in use, together.
    #[serde(rename = "aggregatedContainersVirtualMemoryMB")]
    pub aggregated_containers_virtual_memory_mb: u64,
    /// The containers' CPU in use, together.
    #[serde(rename = "containersCPUUsage")]
    pub containers_cpu_usage: f64,
}

impl ResourceUtilizationInfoDto {
    /// The wire form of a node's reported use; zeros for what it has not
    /// reported.
    pub fn from_utilization(u: Option<&NodeUtilization>) -> ResourceUtilizationInfoDto {
        let node = u.and_then(|u| u.node).unwrap_or_default();
        let containers = u.and_then(|u| u.containers).unwrap_or_default();
        ResourceUtilizationInfoDto {
            node_physical_memory_mb: node.pmem_mb,
            node_virtual_memory_mb: node.vmem_mb,
            node_cpu_usage: node.cpu,
            aggregated_containers_physical_memory_mb: containers.pmem_mb,
            aggregated_containers_virtual_memory_mb: containers.vmem_mb,
            containers_cpu_usage: containers.cpu,
        }
    }
}

/// A validated `states` filter of the nodes list (empty: every node),
/// shared by the REST list and the web UI so both read it alike.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeFilter {
    /// YARN's names of the states wanted, upper case.
    states: Vec<String>,
}

impl NodeFilter {
    /// The filter of a query string's pairs. Hadoop's `states` is one
    /// string parameter: a repeated one counts by its first value, as
    /// JAX-RS reads it, rather than being refused; other parameters are
    /// not the filter's.
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<NodeFilter, InvalidField> {
        let mut states = Vec::new();
        let Some((_, text)) = pairs.iter().find(|(k, _)| k == "states") else {
            return Ok(NodeFilter { states });
        };
        for st in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let upper = st.to_ascii_uppercase();
            if !NODE_STATES.contains(&upper.as_str()) {
                return Err(InvalidField::new(
                    "states",
                    format!(
                        "invalid node state {st:?}; expected one of {}",
                        NODE_STATES.join(", ")
                    ),
                ));
            }
            states.push(upper);
        }
        Ok(NodeFilter { states })
    }

    /// The states asked for (YARN's names, upper case); empty: any.
    pub fn states(&self) -> &[String] {
        &self.states
    }

    /// The nodes of `view` that pass, by id.
    pub fn apply(&self, view: &View) -> Vec<NodeDto> {
        view.nodes
            .iter()
            .filter(|n| {
                self.states.is_empty() || self.states.iter().any(|w| w == n.state.yarn_name())
            })
            .map(|n| NodeDto::from_report(view, n))
            .collect()
    }
}

/// The node states a `states` filter may name (YARN's `NodeState`).
pub const NODE_STATES: &[&str] = &[
    "NEW",
    "RUNNING",
    "UNHEALTHY",
    "DECOMMISSIONING",
    "DECOMMISSIONED",
    "LOST",
    "REBOOTED",
    "SHUTDOWN",
];

/// The body of `POST /ws/v1/cluster/refresh-nodes` (optional: no body is a
/// forced refresh, Hadoop's `-refreshNodes` without `-g`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefreshNodesRequest {
    /// Drain the nodes the lists now disallow (DECOMMISSIONING) rather
    /// than decommission them at once.
    #[serde(default)]
    pub graceful: bool,
    /// With `graceful`: the drain's timeout in seconds for nodes the
    /// exclude file gives none (-1: none); without it, the site's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<i64>,
}

/// The answer to `POST /ws/v1/cluster/refresh-nodes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefreshNodesDto {
    /// Whether the refresh drained nodes rather than decommission them.
    pub graceful: bool,
    /// The include file read, if one is configured.
    pub include_path: Option<String>,
    /// The exclude file read, if one is configured.
    pub exclude_path: Option<String>,
    /// Each node whose state the refresh changed, by id.
    #[serde(default)]
    pub changes: Vec<NodeChangeDto>,
    /// What the files hold that was ignored, with file and position.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One node a refresh acted on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeChangeDto {
    /// `host:port`.
    pub node_id: String,
    /// Its state before.
    pub previous_state: String,
    /// Its state now: `DECOMMISSIONING` (draining), `DECOMMISSIONED`, or
    /// `RUNNING` (recommissioned).
    pub state: String,
    /// For a drain: its timeout in seconds (negative: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decommissioning_timeout: Option<i64>,
    /// Why: which list says what about it.
    pub reason: String,
}

/// `POST /ws/v1/cluster/refresh-queues`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefreshQueuesDto {
    /// True: the new configuration is in force.
    pub refreshed: bool,
    /// The file read.
    pub path: Option<String>,
    /// Warnings about the file (it loaded anyway), `line:column: element: message`.
    pub warnings: Vec<String>,
}

/// `POST /ws/v1/cluster/refresh-admin-acls`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefreshAdminAclsDto {
    /// `yarn.admin.acl` now in force, as Hadoop writes an ACL.
    pub admin_acl: String,
    /// Whether `yarn.acl.enable` is on (read at start only): while it is
    /// off everybody administers, whatever the list says.
    pub acl_enabled: bool,
    /// Warnings about the site file (it was read anyway).
    pub warnings: Vec<String>,
}

/// `POST /ws/v1/cluster/refresh-user-groups`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefreshUserGroupsDto {
    /// The group file read (`weft.rm.groups.file`), if one is configured.
    pub groups_file: Option<String>,
    /// How many users it lists (0 without one).
    pub users: usize,
    /// What maps users to groups: `weft.rm.groups.file`, or the class of
    /// `hadoop.security.group.mapping` in force. Empty from an RM older
    /// than the field.
    #[serde(default)]
    pub group_mapping: String,
    /// How many users' groups (or lack of any) were cached from the
    /// operating system and are now forgotten.
    #[serde(default)]
    pub cached_users_cleared: usize,
}

/// `GET /ws/v1/cluster/users/{user}/groups`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserGroupsDto {
    /// The user.
    pub user: String,
    /// The user's groups as the RM maps them, primary first.
    pub groups: Vec<String>,
}

/// A number in a request body as it was sent: a JSON number, or text (XML
/// carries every value as text, and Hadoop's JSON reader takes numeric
/// strings too); anything else is kept only to be refused. Read this way,
/// rather than as an integer, so that a refusal can name the field: serde
/// alone would say "expected u64 at line 1 column 40".
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum LooseNumber {
    /// A whole number.
    Int(i64),
    /// Text, to be parsed.
    Text(String),
    /// An XML element's text, which the XML reader presents as a map.
    Xml(XmlText),
    /// Anything else (a fraction, a number past `i64`, an object, ...).
    Other(serde::de::IgnoredAny),
}

impl LooseNumber {
    /// The whole number sent at `field`, or what is wrong with it.
    pub fn whole(&self, field: &str) -> Result<i64, crate::dto::InvalidField> {
        let bad = || {
            crate::dto::InvalidField::new(
                field,
                "is not a whole number (send an integer such as 4096)",
            )
        };
        match self {
            LooseNumber::Int(n) => Ok(*n),
            LooseNumber::Text(t) | LooseNumber::Xml(XmlText { text: t }) => {
                t.trim().parse().map_err(|_| {
                    crate::dto::InvalidField::new(
                        field,
                        format!("{t:?} is not a whole number (send an integer such as 4096)"),
                    )
                })
            }
            LooseNumber::Other(_) => Err(bad()),
        }
    }
}

/// `<memory>2048</memory>` as the XML reader hands it over.
#[derive(Debug, Deserialize)]
pub struct XmlText {
    /// The element's text.
    #[serde(rename = "$text")]
    pub text: String,
}

/// The body of `POST /ws/v1/cluster/nodes/{nodeid}/resource`: Hadoop's
/// `ResourceOptionInfo`, either wrapped (`{"resourceOption": {...}}`, as
/// the JSON is written with its root element) or not (`{"resource": ...,
/// "overCommitTimeout": ...}`, as Hadoop's own clients and every XML body
/// send it: XML's root element is not a field).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeResourceRequest {
    /// The wrapped form.
    #[serde(default)]
    pub resource_option: Option<ResourceOptionDto>,
    /// The unwrapped form's resource.
    #[serde(default)]
    pub resource: Option<ResourceFieldsDto>,
    /// The unwrapped form's timeout.
    #[serde(default)]
    pub over_commit_timeout: Option<LooseNumber>,
}

/// Hadoop's `ResourceOptionInfo`: the new size and how long the node's
/// containers may keep it over that size, in milliseconds (-1: no limit).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceOptionDto {
    /// The new size.
    #[serde(default)]
    pub resource: Option<ResourceFieldsDto>,
    /// Milliseconds; -1 or absent: no timeout.
    #[serde(default)]
    pub over_commit_timeout: Option<LooseNumber>,
}

/// Hadoop's `ResourceInfo` as a request sends it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceFieldsDto {
    /// Memory in MB.
    #[serde(default)]
    pub memory: Option<LooseNumber>,
    /// Virtual cores.
    #[serde(default, rename = "vCores")]
    pub vcores: Option<LooseNumber>,
    /// Hadoop 3's per-type list, which its own clients write beside the
    /// two above; Weft counts memory and vcores only, so it is read and
    /// set aside rather than refused.
    #[serde(default, rename = "resourceInformations")]
    pub resource_informations: Option<serde::de::IgnoredAny>,
}

/// The answer to `POST /ws/v1/cluster/nodes/{nodeid}/resource`: Hadoop's
/// `resourceInfo` (what the node offers now, as its `totalResource` shows
/// it), with Weft's additions saying what was asked for and whether the
/// node's containers hold more than that.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResourceDto {
    /// Memory the node offers now (MB): the new size, or more while it is
    /// over-committed.
    pub memory: u64,
    /// Vcores the node offers now.
    #[serde(rename = "vCores")]
    pub vcores: u64,
    /// Weft's addition: the size asked for, which the node shrinks to as
    /// its containers end.
    pub capability: ResourceDto,
    /// Weft's addition: true while its containers hold more than the new size.
    pub overcommitted: bool,
    /// Weft's addition: the over-commit timeout taken, in milliseconds
    /// (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_commit_timeout: Option<u64>,
}

/// The answer to `POST /ws/v1/cluster/refresh-nodes-resources` (Hadoop's
/// `refreshNodesResources`, whose RPC answer is empty).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefreshNodesResourcesDto {
    /// The file read (`dynamic-resources.xml` in the configuration directory).
    pub path: String,
    /// Whether it exists: without it, no node has a configured size.
    pub found: bool,
    /// How many nodes it gives a size.
    pub configured_nodes: usize,
    /// Each registered node the refresh resized, by id.
    #[serde(default)]
    pub changes: Vec<NodeResizeDto>,
    /// The nodes the file names that are not registered, by id: each
    /// takes its size when it registers.
    #[serde(default)]
    pub not_registered: Vec<String>,
    /// What the file holds that was ignored (with line and column), and
    /// any node the scheduler refused its new size.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One node a refresh of the dynamic resources resized.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResizeDto {
    /// `host:port`.
    pub node_id: String,
    /// Its size before.
    pub previous: ResourceDto,
    /// Its size now, from the file.
    pub capability: ResourceDto,
    /// True while its containers hold more than the new size: it offers
    /// what they hold and takes nothing new until they end.
    pub overcommitted: bool,
    /// The file's over-commit timeout for it, in milliseconds (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_commit_timeout: Option<u64>,
}
