//! The published read model: an owned, immutable snapshot of the cluster
//! (apps, queues, nodes, totals) that the actor rebuilds from the core and
//! hands to every GET, so reads never wait behind scheduling.
//!
//! When to rebuild is the actor's decision; turning a snapshot into JSON is
//! the DTO modules'. What the shell alone knows about an app (its launch
//! context, its own ACLs, where its AM runs) is kept here too, in `AppExtra`.

use std::collections::BTreeMap;
use std::sync::Arc;

use weft_core::{AppReport, ClusterMetrics, NodeReport, QueueReport, ResourceManager};
use weft_model::{AppId, NodeId, QueuePath, Time};

use crate::access::AppAcls;
use crate::hosts::TimeoutSecs;

/// One consistent picture of the RM, as of `now`.
#[derive(Clone, Debug, Default)]
pub struct View {
    /// Increases with every rebuild.
    pub version: u64,
    /// Core time of the snapshot.
    pub now: Time,
    /// Wall-clock milliseconds at core time zero, to turn `Time` into timestamps.
    pub epoch_origin_ms: u64,
    /// Cluster totals.
    pub cluster: ClusterMetrics,
    /// Every queue, parents first, in path order.
    pub queues: Vec<QueueReport>,
    /// Index into `queues` by path.
    pub queue_index: BTreeMap<QueuePath, usize>,
    /// Every app the RM remembers, by id.
    pub apps: BTreeMap<AppId, AppView>,
    /// Every node, by id.
    pub nodes: Vec<NodeReport>,
    /// The timeout each draining node was given (what the core keeps is
    /// its deadline); set by the actor after `build`.
    pub drain_timeouts: BTreeMap<NodeId, TimeoutSecs>,
    /// What each live queue has counted since the service started (the
    /// actor's metrics keep these, not the core); set by the actor after
    /// `build`. A queue that has counted nothing yet may be missing.
    pub queue_counts: BTreeMap<QueuePath, QueueCounts>,
}

/// A queue's running totals since the service started, its subtree's
/// included (Hadoop's queue metrics count into every ancestor too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounts {
    /// Applications added to the queue.
    pub apps_submitted: u64,
    /// Applications that finished.
    pub apps_completed: u64,
    /// Applications killed.
    pub apps_killed: u64,
    /// Applications failed.
    pub apps_failed: u64,
    /// Containers allocated node-local, rack-local and off-switch.
    pub containers_allocated: [u64; 3],
    /// Containers that ended, for any reason.
    pub containers_released: u64,
    /// Containers taken back by preemption.
    pub containers_preempted: u64,
}

/// One app: the core's report plus what the shell knows.
#[derive(Clone, Debug)]
pub struct AppView {
    /// The core's report.
    pub report: AppReport,
    /// The shell's extras.
    pub extra: AppExtra,
}

/// What the service knows about an app that the core does not.
#[derive(Clone, Debug, Default)]
pub struct AppExtra {
    /// The submission's `am-container-spec`, handed to the node that runs the AM.
    pub launch_context: Option<Arc<serde_json::Value>>,
    /// True when the submitter runs the AM itself.
    pub unmanaged: bool,
    /// The app's `VIEW_APP` and `MODIFY_APP` ACLs, read from the launch
    /// context at submission.
    pub acls: AppAcls,
    /// The node running the current AM container, and its web address.
    pub am_node: Option<(NodeId, String)>,
    /// What the AM said when it registered: host, RPC port, tracking URL.
    pub am_host: Option<String>,
    /// The AM's RPC port.
    pub am_rpc_port: Option<u16>,
    /// The AM's web UI.
    pub tracking_url: Option<String>,
}

impl View {
    /// A snapshot of `core` (with the shell's `extras`).
    pub fn build(
        core: &ResourceManager,
        extras: &BTreeMap<AppId, AppExtra>,
        version: u64,
        now: Time,
        epoch_origin_ms: u64,
    ) -> View {
        let queues = core.queue_reports();
        let queue_index = queues
            .iter()
            .enumerate()
            .map(|(i, q)| (q.tree.path.clone(), i))
            .collect();
        let apps = core
            .app_reports()
            .map(|report| {
                let extra = extras.get(&report.record.id).cloned().unwrap_or_default();
                (report.record.id, AppView { report, extra })
            })
            .collect();
        View {
            version,
            now,
            epoch_origin_ms,
            cluster: core.cluster_metrics(),
            queues,
            queue_index,
            apps,
            nodes: core.node_reports(),
            drain_timeouts: BTreeMap::new(),
            queue_counts: BTreeMap::new(),
        }
    }

    /// Wall-clock milliseconds of core time `t`.
    pub fn epoch_ms(&self, t: Time) -> u64 {
        self.epoch_origin_ms + t.as_millis()
    }

    /// The queue at `path`.
    pub fn queue(&self, path: &QueuePath) -> Option<&QueueReport> {
        self.queue_index.get(path).map(|i| &self.queues[*i])
    }
}
