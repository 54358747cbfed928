//! Read-only reports of the ResourceManager's state for drivers: apps,
//! nodes, queues and cluster totals, in deterministic order, owned, so a
//! driver can publish them without holding the state machine.
//!
//! Turning them into JSON, XML or metrics is the service's business.

use weft_model::{AppId, ContainerId, NodeId, Priority, Resource, Time};
use weft_queue_tree::QueueSnapshot;

use crate::output::{AppState, NodeState};
use crate::rm::{AppRecord, ResourceManager};

/// One application, with its live figures.
#[derive(Clone, Debug, PartialEq)]
pub struct AppReport {
    /// What the RM recorded.
    pub record: AppRecord,
    /// Resources its containers hold now.
    pub allocated: Resource,
    /// Containers it holds now.
    pub running_containers: u32,
    /// Outstanding asks.
    pub pending: Resource,
    /// Outstanding containers asked for anywhere.
    pub pending_containers: u64,
    /// Instantaneous fair share.
    pub fair_share: Resource,
    /// Reserved resources.
    pub reserved: Resource,
    /// True while held back by a running-app limit.
    pub waiting: bool,
    /// Its current attempt has been allocated a container: what Hadoop's
    /// queue metrics count as a running rather than a pending app, and keep
    /// counting so until the attempt ends, containers or not.
    pub attempt_launched: bool,
}

/// One live container of an app, as its reports show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerReport {
    /// Id (it names its attempt).
    pub id: ContainerId,
    /// Its node.
    pub node: NodeId,
    /// Its size.
    pub resource: Resource,
    /// The priority of the request it was allocated for.
    pub priority: Priority,
    /// When it was allocated.
    pub allocated_at: Time,
    /// True once its node reported it running.
    pub running: bool,
    /// True for the attempt's AM container.
    pub is_am: bool,
}

/// One node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeReport {
    /// Id.
    pub id: NodeId,
    /// Rack.
    pub rack: String,
    /// HTTP address.
    pub http_address: String,
    /// State.
    pub state: NodeState,
    /// Capability.
    pub capability: Resource,
    /// Allocated to containers.
    pub allocated: Resource,
    /// Reserved for a container that did not fit yet.
    pub reserved: Resource,
    /// Containers on it.
    pub n_containers: u32,
    /// Last heartbeat (or when it left).
    pub last_heartbeat: Time,
    /// While it drains (`Decommissioning`): when its graceful decommission
    /// times out, if it has a timeout.
    pub drain_deadline: Option<Time>,
    /// While it is `Unhealthy`: its health checker's words (empty otherwise).
    pub health_report: String,
}

/// One queue: the tree's figures plus what only the core knows.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueReport {
    /// The tree's snapshot.
    pub tree: QueueSnapshot,
    /// Resources reserved on nodes for apps in the subtree.
    pub reserved: Resource,
    /// Reservations held.
    pub n_reserved: u32,
    /// Outstanding asks of apps in the subtree.
    pub pending: Resource,
    /// Outstanding containers asked for anywhere by apps in the subtree.
    pub pending_containers: u64,
    /// Live containers in the subtree.
    pub n_containers: u32,
}

/// Cluster-wide figures (YARN's `clusterMetrics`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterMetrics {
    /// Apps submitted since start.
    pub apps_submitted: u64,
    /// Apps accepted and runnable but not running yet.
    pub apps_accepted: u32,
    /// Apps waiting on a running-app limit.
    pub apps_waiting: u32,
    /// Apps running.
    pub apps_running: u32,
    /// Finished apps in history.
    pub apps_completed: u32,
    /// Failed (or rejected) apps in history.
    pub apps_failed: u32,
    /// Killed apps in history.
    pub apps_killed: u32,
    /// Total capability of running nodes.
    pub total: Resource,
    /// Allocated to containers.
    pub allocated: Resource,
    /// Reserved on nodes.
    pub reserved: Resource,
    /// Outstanding asks.
    pub pending: Resource,
    /// Live containers.
    pub containers: u64,
    /// Reservations held.
    pub containers_reserved: u32,
    /// Outstanding containers asked for anywhere.
    pub containers_pending: u64,
    /// Running nodes (not counting draining or unhealthy ones).
    pub nodes_running: u32,
    /// Nodes draining before they are decommissioned.
    pub nodes_decommissioning: u32,
    /// Registered nodes that report themselves unhealthy.
    pub nodes_unhealthy: u32,
    /// Lost nodes.
    pub nodes_lost: u32,
    /// Nodes shut down.
    pub nodes_shutdown: u32,
    /// Decommissioned nodes.
    pub nodes_decommissioned: u32,
}

impl ResourceManager {
    /// One app's report.
    pub fn app_report(&self, id: AppId) -> Option<AppReport> {
        let record = self.apps.get(&id)?;
        Some(self.report_for(record))
    }

    /// Who submitted `id`, without building its whole report (the service
    /// tells each node this for every container it hands over).
    pub fn app_user(&self, id: AppId) -> Option<&str> {
        self.apps.get(&id).map(|r| r.user.as_str())
    }

    /// Every app in the RM's memory (active, and finished ones still in history), by id.
    pub fn app_reports(&self) -> impl Iterator<Item = AppReport> + '_ {
        self.apps.values().map(|r| self.report_for(r))
    }

    fn report_for(&self, record: &AppRecord) -> AppReport {
        let Some(h) = record.handle else {
            return AppReport {
                record: record.clone(),
                allocated: Resource::ZERO,
                running_containers: 0,
                pending: Resource::ZERO,
                pending_containers: 0,
                fair_share: Resource::ZERO,
                reserved: Resource::ZERO,
                waiting: false,
                attempt_launched: false,
            };
        };
        let active = self.active(h);
        let reserved = active
            .reservations
            .iter()
            .filter_map(|n| self.nodes.get(*n).reservation.map(|r| r.resource))
            .sum();
        let mut record = record.clone();
        record.memory_mb_seconds += active.memory_mb_ms / 1000;
        record.vcore_seconds += active.vcore_ms / 1000;
        AppReport {
            record,
            allocated: self.tree.app_usage(h),
            running_containers: active.containers.len() as u32,
            pending: active.requests.pending(),
            pending_containers: active.requests.pending_containers(),
            fair_share: self.tree.app_fair_share(h),
            reserved,
            waiting: !self.tree.app_is_runnable(h),
            attempt_launched: active.launched,
        }
    }

    /// The live containers of an app, by id.
    pub fn app_containers(&self, id: AppId) -> Vec<(ContainerId, NodeId, Resource)> {
        let Some(h) = self.apps.get(&id).and_then(|r| r.handle) else {
            return Vec::new();
        };
        self.active(h)
            .containers
            .values()
            .map(|c| {
                let c = self.container(*c);
                (c.id, self.nodes.get(c.node).id.clone(), c.resource)
            })
            .collect()
    }

    /// The live containers of an app with what reports show of them, in id
    /// order; none for an ended or unknown app.
    pub fn app_container_reports(&self, id: AppId) -> Vec<ContainerReport> {
        let Some(h) = self.apps.get(&id).and_then(|r| r.handle) else {
            return Vec::new();
        };
        let mut res: Vec<ContainerReport> = self
            .active(h)
            .containers
            .values()
            .map(|c| {
                let c = self.container(*c);
                ContainerReport {
                    id: c.id,
                    node: self.nodes.get(c.node).id.clone(),
                    resource: c.resource,
                    priority: c.priority,
                    allocated_at: c.allocated_at,
                    running: c.running,
                    is_am: c.is_am,
                }
            })
            .collect();
        res.sort_by_key(|c| c.id);
        res
    }

    /// A node's state, registered or gone; `None` for a node never seen (or
    /// forgotten). Drivers ask this before letting a node register: Hadoop
    /// lets a draining node back in after a restart, and no other excluded one.
    pub fn node_state(&self, node: &NodeId) -> Option<NodeState> {
        match self.nodes.lookup(node) {
            Some(idx) => Some(self.nodes.get(idx).state),
            None => self.inactive_nodes.get(node).map(|n| n.state),
        }
    }

    /// Every node, running or gone, by id.
    pub fn node_reports(&self) -> Vec<NodeReport> {
        let mut out: Vec<NodeReport> = self
            .nodes
            .indices()
            .map(|idx| self.live_node_report(idx))
            .collect();
        out.extend(
            self.inactive_nodes
                .iter()
                .map(|(id, n)| inactive_node_report(id, n)),
        );
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    /// One node's report, registered or gone.
    pub fn node_report(&self, node: &NodeId) -> Option<NodeReport> {
        match self.nodes.lookup(node) {
            Some(idx) => Some(self.live_node_report(idx)),
            None => self
                .inactive_nodes
                .get(node)
                .map(|n| inactive_node_report(node, n)),
        }
    }

    fn live_node_report(&self, idx: crate::nodes::NodeIdx) -> NodeReport {
        let n = self.nodes.get(idx);
        NodeReport {
            id: n.id.clone(),
            rack: n.rack.clone(),
            http_address: n.http_address.to_string(),
            state: n.state,
            capability: n.capability,
            allocated: n.allocated,
            reserved: n.reservation.map_or(Resource::ZERO, |r| r.resource),
            n_containers: n.containers.len() as u32,
            last_heartbeat: n.last_heartbeat,
            drain_deadline: n.draining.as_ref().and_then(|d| d.deadline),
            health_report: n
                .unhealthy
                .as_ref()
                .map_or_else(String::new, |u| u.report.clone()),
        }
    }

    /// Every queue, parents first, in path order, with the core's figures.
    pub fn queue_reports(&self) -> Vec<QueueReport> {
        let snapshots = self.tree.snapshot();
        let mut reserved: Vec<(Resource, u32)> = vec![(Resource::ZERO, 0); snapshots.len()];
        let mut pending = vec![Resource::ZERO; snapshots.len()];
        let mut pending_containers = vec![0u64; snapshots.len()];
        let mut n_containers = vec![0u32; snapshots.len()];
        let index: std::collections::BTreeMap<&weft_model::QueuePath, usize> = snapshots
            .iter()
            .enumerate()
            .map(|(i, s)| (&s.path, i))
            .collect();
        let charge = |path: &weft_model::QueuePath, f: &mut dyn FnMut(usize)| {
            for p in path.self_and_ancestors() {
                if let Some(i) = index.get(&p) {
                    f(*i);
                }
            }
        };
        for app in self.active.iter().flatten() {
            let path = self.tree.queue_path(self.tree.app_queue(app.handle));
            let p = app.requests.pending();
            let n_pending = app.requests.pending_containers();
            let n = app.containers.len() as u32;
            charge(path, &mut |i| {
                pending[i] += p;
                pending_containers[i] += n_pending;
                n_containers[i] += n;
            });
            for node in &app.reservations {
                if let Some(r) = self.nodes.get(*node).reservation {
                    charge(path, &mut |i| {
                        reserved[i].0 += r.resource;
                        reserved[i].1 += 1;
                    });
                }
            }
        }
        snapshots
            .into_iter()
            .enumerate()
            .map(|(i, tree)| QueueReport {
                tree,
                reserved: reserved[i].0,
                n_reserved: reserved[i].1,
                pending: pending[i],
                pending_containers: pending_containers[i],
                n_containers: n_containers[i],
            })
            .collect()
    }

    /// Cluster totals.
    pub fn cluster_metrics(&self) -> ClusterMetrics {
        let mut m = ClusterMetrics {
            apps_submitted: self.counters.apps_submitted,
            total: self.nodes.capacity,
            containers: self.n_containers as u64,
            nodes_running: self.nodes.n_running - self.nodes.draining.len() as u32,
            nodes_decommissioning: self.nodes.draining.len() as u32,
            ..ClusterMetrics::default()
        };
        for record in self.apps.values() {
            match record.state {
                AppState::Accepted => m.apps_accepted += 1,
                AppState::WaitingForLimit => m.apps_waiting += 1,
                AppState::Running => m.apps_running += 1,
                AppState::Finished => m.apps_completed += 1,
                AppState::Failed | AppState::Rejected => m.apps_failed += 1,
                AppState::Killed => m.apps_killed += 1,
            }
        }
        for idx in self.nodes.indices() {
            let n = self.nodes.get(idx);
            m.allocated += n.allocated;
            if n.unhealthy.is_some() {
                m.nodes_unhealthy += 1;
                m.nodes_running -= 1;
            }
            if let Some(r) = n.reservation {
                m.reserved += r.resource;
                m.containers_reserved += 1;
            }
        }
        for app in self.active.iter().flatten() {
            m.pending += app.requests.pending();
            m.containers_pending += app.requests.pending_containers();
        }
        for n in self.inactive_nodes.values() {
            match n.state {
                NodeState::Lost => m.nodes_lost += 1,
                NodeState::Shutdown => m.nodes_shutdown += 1,
                NodeState::Decommissioned => m.nodes_decommissioned += 1,
                NodeState::Running | NodeState::Decommissioning | NodeState::Unhealthy => {}
            }
        }
        m
    }
}

fn inactive_node_report(id: &NodeId, n: &crate::rm::InactiveNode) -> NodeReport {
    NodeReport {
        id: id.clone(),
        rack: n.rack.clone(),
        http_address: n.http_address.clone(),
        state: n.state,
        capability: n.capability,
        allocated: Resource::ZERO,
        reserved: Resource::ZERO,
        n_containers: 0,
        last_heartbeat: n.since,
        drain_deadline: None,
        health_report: String::new(),
    }
}
