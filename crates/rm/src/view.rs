//! The published read model: an owned, immutable snapshot of the cluster
//! (apps, queues, nodes, totals) that the actor rebuilds from the core and
//! hands to every GET, so reads never wait behind scheduling.
//!
//! When to rebuild is the actor's decision; turning a snapshot into JSON is
//! the DTO modules'. What the shell alone knows about an app (its launch
//! context, its own ACLs, where its AM runs, its earlier attempts) is kept
//! here too, in `AppExtra`, and so is what nodes report of their use
//! (`utilization`).

use std::collections::BTreeMap;
use std::sync::Arc;

use weft_core::{AppReport, ClusterMetrics, NodeReport, QueueReport, ResourceManager};
use weft_model::{AppId, AttemptId, ContainerId, NodeId, QueuePath, Time};

use crate::access::AppAcls;
use crate::hosts::TimeoutSecs;
use crate::utilization::{ClusterUtilization, NodeUtilization};

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
    /// What each node last reported of its use (the core never sees it);
    /// set by the actor after `build`. Nodes that never reported are missing.
    pub utilization: BTreeMap<NodeId, NodeUtilization>,
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
    /// Its attempts as far as the core's reports do not say.
    pub attempts: AttemptHistory,
}

/// What the service remembers of an app's attempts: the core reports only
/// the current one, and the actor keeps the rest from the core's events.
///
/// Bounded: at most `keep` earlier attempts are kept (the actor passes the
/// RM-wide `yarn.resourcemanager.am.max-attempts`, or `MIN_KEPT_ATTEMPTS`
/// if more), since attempts that do not count against an app (its AM
/// preempted, its node lost) may go on without limit.
#[derive(Clone, Debug, Default)]
pub struct AttemptHistory {
    /// When the current attempt began; `None` for the first, which began
    /// with the app's submission.
    pub current_started: Option<Time>,
    /// The current attempt's AM container and where it ran; unlike
    /// `AppExtra::am_node`, kept once the app ends, for its last attempt.
    pub current_am: Option<AmPlacement>,
    /// What the AM container's node said when it ended, for the current
    /// attempt (an earlier attempt's is in its diagnostics). The actor
    /// hands it over before the core's events that end the attempt.
    pub current_am_exit: Option<String>,
    /// Earlier attempts (each failed, which is what starts another), oldest first.
    pub earlier: Vec<EndedAttempt>,
}

/// Earlier attempts kept per app at least, whatever the RM-wide maximum.
pub const MIN_KEPT_ATTEMPTS: usize = 10;

/// Where an attempt's AM container ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmPlacement {
    /// The container.
    pub container: ContainerId,
    /// Its node.
    pub node: NodeId,
    /// The node's web address.
    pub node_http_address: String,
}

/// An attempt that failed and was followed by another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndedAttempt {
    /// Its id.
    pub attempt: AttemptId,
    /// When it began; `None` for the first, which began with the app's submission.
    pub started: Option<Time>,
    /// When it failed.
    pub finished: Time,
    /// Its AM container, if one was allocated.
    pub am: Option<AmPlacement>,
    /// Why it failed.
    pub diagnostics: String,
}

impl AttemptHistory {
    /// The current attempt (`attempt`) failed at `now` for `diagnostics`
    /// and the next one began; the oldest earlier attempts past `keep` go.
    pub fn failed(&mut self, now: Time, attempt: AttemptId, diagnostics: String, keep: usize) {
        let mut diagnostics = diagnostics;
        if let Some(words) = self.current_am_exit.take() {
            diagnostics = format!("{diagnostics}; its node said: {words}");
        }
        self.earlier.push(EndedAttempt {
            attempt,
            started: self.current_started.take(),
            finished: now,
            am: self.current_am.take(),
            diagnostics,
        });
        if self.earlier.len() > keep {
            let excess = self.earlier.len() - keep;
            self.earlier.drain(..excess);
        }
        self.current_started = Some(now);
    }

    /// The node of `container` said `words` about its end: kept with the
    /// current attempt if it was its AM container.
    pub fn node_said(&mut self, container: ContainerId, words: &str) {
        if self
            .current_am
            .as_ref()
            .is_some_and(|am| am.container == container)
        {
            self.current_am_exit = Some(words.to_owned());
        }
    }
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
            utilization: BTreeMap::new(),
        }
    }

    /// Wall-clock milliseconds of core time `t`.
    pub fn epoch_ms(&self, t: Time) -> u64 {
        self.epoch_origin_ms + t.as_millis()
    }

    /// The cluster's utilization over the live nodes that reported it.
    pub fn cluster_utilization(&self) -> ClusterUtilization {
        ClusterUtilization::sum(&self.nodes, |n| self.utilization.get(&n.id))
    }

    /// The queue at `path`.
    pub fn queue(&self, path: &QueuePath) -> Option<&QueueReport> {
        self.queue_index.get(path).map(|i| &self.queues[*i])
    }
}
