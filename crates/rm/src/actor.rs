//! The one task that owns the core: a closed `Command` enum in, typed
//! replies out, the core's deadline as the timer, and the published views.
//!
//! Each wake-up takes a batch of waiting commands, reads the clock once
//! (`Clock::now`), runs a `Tick` first if the core's deadline has passed,
//! handles the batch in order, then republishes the views when they are due:
//! at most every `weft.rm.view-refresh-ms`, and never more often than keeps
//! rebuilding them under a fiftieth of the actor's time (a 10,000-node view
//! costs milliseconds). One application's report is also served fresh on
//! request, so a client reads its own writes. Handlers never touch the core.
//!
//! The protocol bookkeeping the core leaves to drivers lives here too: the
//! `responseId` sessions that make a repeated heartbeat or allocate call
//! return the same answer without doing anything twice, launch contexts for
//! AM containers, the nodes' own words about containers that ended (handed
//! to their AMs), container tokens (drawn when the core allocates a
//! container, handed to its node and its AM, forgotten once both have them
//! or the container ends; see `token`), AM tokens (one drawn for each
//! attempt, when its AM container is allocated or an unmanaged AM's app is
//! accepted, checked on every AM protocol call, forgotten when the attempt
//! fails or the core forgets the ended app, and kept in the state store so that an AM keeps
//! working across a restart), access checks for kill, move,
//! priority and lifetime changes, the state store's records (with the
//! recovery of the apps it holds at start, and of drains as their nodes
//! come back: `drains`), and the include and exclude lists of nodes: which
//! nodes may register, and what a refresh of the lists does to the nodes
//! it disallows (Hadoop's NodesListManager rules, carried out through the
//! core's decommissioning inputs).
//!
//! So are the sizes `dynamic-resources.xml` gives nodes: a node it names
//! registers with its configured size instead of the one it reports, and a
//! refresh of the file resizes the registered nodes it changes through the
//! core's resize, as Hadoop's `refreshNodesResources` does. And each
//! application's end leaves its line in the audit log (`audit`), as
//! Hadoop's RMAppManager writes one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use weft_core::{
    AllocateError, AllocateRequest, AppError, AppState, Drain, Event, FinalStatus, Input,
    LifetimeError, MoveError, NewApplicationReply, NodeError, NodeHeartbeat, NodeRegistration,
    NodeState, RegisterReply, Reply, ResourceManager, SubmitError, SubmitReply,
};
use weft_model::{AppId, AppPriority, AttemptId, ContainerId, NodeId, QueuePath, Resource, Time};
use weft_queue_tree::{AllocConfig, ConfigApplied};

use crate::access::{AppAccess, AppAcls, Identity, LiveAccess};
use crate::audit::{AuditLog, Entry, Outcome};
use crate::clock::Clock;
use crate::dto::am::AllocateResponseDto;
use crate::dto::nm::{ContainerApp, NodeHeartbeatResponse};
use crate::dynamic_resources::{DynamicResources, Resized, ResourcesRefreshed};
use crate::event_log::EventLog;
use crate::hosts::{Disallowed, HostLists, TimeoutSecs};
use crate::metrics::{Metrics, SchedulerMetrics};
use crate::state_store::drains::{DrainStore, StoredDrain};
use crate::state_store::{StateStore, Stored};
use crate::token::{AmToken, AttemptToken, TokenLedger, TokenSource};
use crate::utilization::NodeUtilization;
use crate::view::{AmPlacement, AppExtra, AppView, MIN_KEPT_ATTEMPTS, View};

mod drains;

use drains::DrainRecovery;

/// Commands handled in one wake-up, at most.
const MAX_BATCH: usize = 512;

/// Gauges are re-set at least this often, so idle ones stay exported.
const GAUGE_REFRESH: Duration = Duration::from_secs(5);

/// Views are rebuilt no more often than every this many times their cost.
const VIEW_COST_FACTOR: u32 = 50;

/// Why the scheduler refused a command (or could not take it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RmError {
    /// A node input was refused.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// A submission was refused.
    #[error(transparent)]
    Submit(#[from] SubmitError),
    /// An app input was refused.
    #[error(transparent)]
    App(#[from] AppError),
    /// An allocate call was refused.
    #[error(transparent)]
    Allocate(#[from] AllocateError),
    /// A move was refused.
    #[error(transparent)]
    Move(#[from] MoveError),
    /// A new lifetime expiry was refused.
    #[error(transparent)]
    Lifetime(#[from] LifetimeError),
    /// A heartbeat or allocate call with a `responseId` that is neither the
    /// expected one nor a repeat of the last.
    #[error(
        "{who} sent responseId {got}, but the last answer it was sent has responseId {expected}; {advice}"
    )]
    OutOfSync {
        /// The node or application.
        who: String,
        /// The `responseId` sent.
        got: u64,
        /// The `responseId` of the last answer.
        expected: u64,
        /// What the caller should do.
        advice: &'static str,
    },
    /// A submission with an application id this RM's new-application never
    /// gave out (a later one of its own, another cluster's, or 0).
    #[error(
        "application-id {app} was not issued by this resource manager; ask POST /ws/v1/cluster/apps/new-application for one"
    )]
    NotIssued {
        /// The id submitted.
        app: AppId,
    },
    /// The caller may not do this to the app.
    #[error("user {user} may not {action} application {app} in queue {queue}{why}")]
    Forbidden {
        /// The caller.
        user: String,
        /// What was attempted (`kill`, `move`, ...).
        action: &'static str,
        /// The app.
        app: AppId,
        /// Its queue.
        queue: QueuePath,
        /// The rule that was not met.
        why: String,
    },
    /// An AM protocol call showed a token that is not its app's current
    /// attempt's (an earlier attempt's, another app's, a mistyped one), or
    /// the app has no attempt running. The token is never repeated.
    #[error(
        "the AM token presented is not that of a running attempt of application {app}; an AM container has its attempt's token in WEFT_AM_TOKEN, an unmanaged AM's owner finds it in the application's report (amRMToken), and a new attempt's token replaces the last"
    )]
    AmTokenRefused {
        /// The app.
        app: AppId,
    },
    /// A node the include or exclude list keeps out tried to register.
    #[error(
        "node {node} may not join the cluster: {why}; change the list and run `weft rmadmin -refreshNodes` to let it in"
    )]
    Disallowed {
        /// The node.
        node: NodeId,
        /// Which list says so.
        why: Disallowed,
    },
    /// The core answered with a reply of the wrong kind (a bug).
    #[error("the scheduler answered {what} with an unexpected reply")]
    Unexpected {
        /// The command.
        what: &'static str,
    },
    /// The actor has stopped.
    #[error("the scheduler has stopped")]
    Gone,
}

/// What a registered node learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRegistered {
    /// How often to heartbeat.
    pub heartbeat_interval_ms: u64,
    /// The RM's identity (its start time).
    pub rm_identifier: u64,
    /// The size the node was given in place of the one it reported,
    /// from `dynamic-resources.xml` (Hadoop's registration `resource`).
    pub resource: Option<Resource>,
}

/// What an AM says about itself when registering.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AmInfo {
    /// Its host.
    pub host: Option<String>,
    /// Its RPC port.
    pub rpc_port: Option<u16>,
    /// Its web UI.
    pub tracking_url: Option<String>,
}

/// What a refresh of the include and exclude lists did to one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeChange {
    /// The node.
    pub node: NodeId,
    /// Its state before.
    pub previous: NodeState,
    /// Its state after.
    pub state: NodeState,
    /// The drain's timeout, when it was asked to drain.
    pub timeout: Option<TimeoutSecs>,
    /// Why (which list says what about it).
    pub reason: String,
}

/// How a refresh treats the nodes the new lists disallow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefreshTerms {
    /// Drain them (DECOMMISSIONING) rather than decommission them at once.
    pub graceful: bool,
    /// With `graceful`: the timeout for nodes the exclude file gives none
    /// (`None`: `default_timeout`).
    pub timeout: Option<TimeoutSecs>,
    /// The site's drain timeout as read for this refresh
    /// (`yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs`).
    pub default_timeout: TimeoutSecs,
    /// Whether a node drained by this refresh also waits for its apps.
    pub wait_for_apps: bool,
}

type Tx<T> = oneshot::Sender<Result<T, RmError>>;

/// Everything handlers can ask of the scheduler.
pub(crate) enum Command {
    RegisterNode {
        reg: NodeRegistration,
        /// The machine's own size, if the node gave it.
        physical: Option<Resource>,
        reply: Tx<NodeRegistered>,
    },
    Heartbeat {
        hb: NodeHeartbeat,
        response_id: u64,
        /// The node's diagnostics of containers it reports complete.
        diagnostics: Vec<(ContainerId, String)>,
        /// What the node measured of its use, if it did.
        utilization: Option<NodeUtilization>,
        reply: Tx<Arc<NodeHeartbeatResponse>>,
    },
    UnregisterNode {
        node: NodeId,
        reply: Tx<()>,
    },
    NewApplication {
        reply: Tx<NewApplicationReply>,
    },
    Submit {
        /// Boxed, with `extra`: the largest command, and a rare one.
        sub: Box<weft_core::Submission>,
        extra: Box<AppExtra>,
        reply: Tx<SubmitReply>,
    },
    RegisterAm {
        app: AppId,
        token: String,
        info: AmInfo,
        reply: Tx<RegisterReply>,
    },
    Allocate {
        req: AllocateRequest,
        token: String,
        response_id: u64,
        reply: Tx<Arc<AllocateResponseDto>>,
    },
    FinishAm {
        app: AppId,
        token: String,
        outcome: FinalStatus,
        diagnostics: String,
        tracking_url: Option<String>,
        reply: Tx<()>,
    },
    Kill {
        app: AppId,
        who: Identity,
        diagnostics: Option<String>,
        reply: Tx<AppState>,
    },
    Move {
        app: AppId,
        who: Identity,
        queue: QueuePath,
        reply: Tx<QueuePath>,
    },
    SetPriority {
        app: AppId,
        who: Identity,
        priority: AppPriority,
        reply: Tx<AppPriority>,
    },
    SetLifetime {
        app: AppId,
        who: Identity,
        expiry: Time,
        reply: Tx<Time>,
    },
    ReplaceAllocConfig {
        config: Box<AllocConfig>,
        reply: Tx<ConfigApplied>,
    },
    RefreshNodes {
        lists: Box<HostLists>,
        terms: RefreshTerms,
        reply: Tx<Vec<NodeChange>>,
    },
    ResizeNode {
        node: NodeId,
        capability: Resource,
        overcommit_timeout: Option<weft_model::Duration>,
        reply: Tx<Resource>,
    },
    RefreshNodesResources {
        resources: Box<DynamicResources>,
        reply: Tx<ResourcesRefreshed>,
    },
    AppSnapshot {
        app: AppId,
        reply: Tx<AppSnapshot>,
    },
    AppContainers {
        app: AppId,
        reply: Tx<AppContainers>,
    },
    ExplainApp {
        app: AppId,
        reply: Tx<weft_core::AppExplanation>,
    },
    Sync {
        reply: Tx<Arc<View>>,
    },
}

/// One application as it stands now, with what its report needs.
#[derive(Clone, Debug)]
pub struct AppSnapshot {
    /// An unmanaged AM's token for its running attempt, which only the
    /// app's owner is shown (`amRMToken`); `None` for a managed AM, whose
    /// token only its container is given, and for an app with no attempt
    /// running.
    pub unmanaged_am_token: Option<AmToken>,
    /// The app.
    pub app: AppView,
    /// Its queue's instantaneous fair share of memory (MB).
    pub queue_fair_mb: u64,
    /// The cluster's memory (MB).
    pub cluster_mb: u64,
    /// Core time now.
    pub now: Time,
    /// Wall-clock milliseconds at core time zero.
    pub epoch_origin_ms: u64,
}

/// One application as it stands now with its live containers, which
/// reports of its attempts list (the views do not carry containers).
#[derive(Clone, Debug)]
pub struct AppContainers {
    /// The app.
    pub snapshot: AppSnapshot,
    /// Its live containers, in id order, each with its node's web address.
    pub containers: Vec<(weft_core::ContainerReport, String)>,
}

/// A cheap, cloneable handle to the scheduler task: commands in, replies out,
/// and the latest published views.
#[derive(Clone, Debug)]
pub struct RmHandle {
    tx: mpsc::Sender<Command>,
    views: watch::Receiver<Arc<View>>,
    clock: Clock,
}

impl RmHandle {
    /// The core's time now (not the snapshot's), for ages measured at a scrape.
    pub(crate) fn now(&self) -> Time {
        self.clock.now()
    }

    /// The service's clock, to turn wall-clock times into the core's.
    pub(crate) fn clock(&self) -> Clock {
        self.clock
    }

    /// Commands waiting for the scheduler.
    pub(crate) fn queued_commands(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }

    /// The latest published views.
    pub fn view(&self) -> Arc<View> {
        self.views.borrow().clone()
    }

    async fn call<T>(&self, make: impl FnOnce(Tx<T>) -> Command) -> Result<T, RmError> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(make(tx)).await.map_err(|_| RmError::Gone)?;
        rx.await.map_err(|_| RmError::Gone)?
    }

    /// Registers (or re-registers) a node.
    pub async fn register_node(&self, reg: NodeRegistration) -> Result<NodeRegistered, RmError> {
        self.register_node_with_physical(reg, None).await
    }

    /// Registers (or re-registers) a node that gave its machine's own
    /// size, which scales the use it reports (`utilization`).
    pub async fn register_node_with_physical(
        &self,
        reg: NodeRegistration,
        physical: Option<Resource>,
    ) -> Result<NodeRegistered, RmError> {
        self.call(|reply| Command::RegisterNode {
            reg,
            physical,
            reply,
        })
        .await
    }

    /// A node heartbeat carrying `response_id`.
    pub async fn heartbeat(
        &self,
        hb: NodeHeartbeat,
        response_id: u64,
    ) -> Result<Arc<NodeHeartbeatResponse>, RmError> {
        self.heartbeat_with_diagnostics(hb, response_id, Vec::new())
            .await
    }

    /// A node heartbeat carrying `response_id` and the node's diagnostics of
    /// containers it reports complete; the container's AM is given those
    /// words (for example why the node killed it) instead of the RM's.
    pub async fn heartbeat_with_diagnostics(
        &self,
        hb: NodeHeartbeat,
        response_id: u64,
        diagnostics: Vec<(ContainerId, String)>,
    ) -> Result<Arc<NodeHeartbeatResponse>, RmError> {
        self.heartbeat_with_reports(hb, response_id, diagnostics, None)
            .await
    }

    /// As `heartbeat_with_diagnostics`, with what the node measured of its
    /// use, kept for the views (never given to the scheduler).
    pub async fn heartbeat_with_reports(
        &self,
        hb: NodeHeartbeat,
        response_id: u64,
        diagnostics: Vec<(ContainerId, String)>,
        utilization: Option<NodeUtilization>,
    ) -> Result<Arc<NodeHeartbeatResponse>, RmError> {
        self.call(|reply| Command::Heartbeat {
            hb,
            response_id,
            diagnostics,
            utilization,
            reply,
        })
        .await
    }

    /// A node leaving.
    pub async fn unregister_node(&self, node: NodeId) -> Result<(), RmError> {
        self.call(|reply| Command::UnregisterNode { node, reply })
            .await
    }

    /// A fresh application id.
    pub async fn new_application(&self) -> Result<NewApplicationReply, RmError> {
        self.call(|reply| Command::NewApplication { reply }).await
    }

    /// A submission.
    pub async fn submit(
        &self,
        sub: weft_core::Submission,
        extra: AppExtra,
    ) -> Result<SubmitReply, RmError> {
        self.call(|reply| Command::Submit {
            sub: Box::new(sub),
            extra: Box::new(extra),
            reply,
        })
        .await
    }

    /// An AM registering, showing `token` (its attempt's AM token, as sent).
    pub async fn register_am(
        &self,
        app: AppId,
        token: String,
        info: AmInfo,
    ) -> Result<RegisterReply, RmError> {
        self.call(|reply| Command::RegisterAm {
            app,
            token,
            info,
            reply,
        })
        .await
    }

    /// An AM's allocate call carrying `response_id`, showing `token`.
    pub async fn allocate(
        &self,
        req: AllocateRequest,
        token: String,
        response_id: u64,
    ) -> Result<Arc<AllocateResponseDto>, RmError> {
        self.call(|reply| Command::Allocate {
            req,
            token,
            response_id,
            reply,
        })
        .await
    }

    /// An AM finishing its attempt, showing `token`.
    pub async fn finish_am(
        &self,
        app: AppId,
        token: String,
        outcome: FinalStatus,
        diagnostics: String,
        tracking_url: Option<String>,
    ) -> Result<(), RmError> {
        self.call(|reply| Command::FinishAm {
            app,
            token,
            outcome,
            diagnostics,
            tracking_url,
            reply,
        })
        .await
    }

    /// Kills an app on `who`'s behalf; the app's state afterwards.
    pub async fn kill(
        &self,
        app: AppId,
        who: Identity,
        diagnostics: Option<String>,
    ) -> Result<AppState, RmError> {
        self.call(|reply| Command::Kill {
            app,
            who,
            diagnostics,
            reply,
        })
        .await
    }

    /// Moves an app on `who`'s behalf; its queue afterwards.
    pub async fn move_app(
        &self,
        app: AppId,
        who: Identity,
        queue: QueuePath,
    ) -> Result<QueuePath, RmError> {
        self.call(|reply| Command::Move {
            app,
            who,
            queue,
            reply,
        })
        .await
    }

    /// Changes an app's priority on `who`'s behalf.
    pub async fn set_priority(
        &self,
        app: AppId,
        who: Identity,
        priority: AppPriority,
    ) -> Result<AppPriority, RmError> {
        self.call(|reply| Command::SetPriority {
            app,
            who,
            priority,
            reply,
        })
        .await
    }

    /// Gives an app a new lifetime expiry (core time) on `who`'s behalf;
    /// the expiry in force afterwards.
    pub async fn set_lifetime(
        &self,
        app: AppId,
        who: Identity,
        expiry: Time,
    ) -> Result<Time, RmError> {
        self.call(|reply| Command::SetLifetime {
            app,
            who,
            expiry,
            reply,
        })
        .await
    }

    /// Puts a new allocation file in force.
    pub async fn replace_alloc_config(
        &self,
        config: AllocConfig,
    ) -> Result<ConfigApplied, RmError> {
        self.call(|reply| Command::ReplaceAllocConfig {
            config: Box::new(config),
            reply,
        })
        .await
    }

    /// Puts new include and exclude lists in force and applies them to
    /// every node the RM knows; what changed, node by node.
    pub async fn refresh_nodes(
        &self,
        lists: HostLists,
        terms: RefreshTerms,
    ) -> Result<Vec<NodeChange>, RmError> {
        self.call(|reply| Command::RefreshNodes {
            lists: Box::new(lists),
            terms,
            reply,
        })
        .await
    }

    /// Changes what `node` offers (YARN's `updateNodeResource`); what it
    /// offers now, which is more than `capability` while its containers
    /// hold more (over-committed), until they end or `overcommit_timeout`
    /// passes.
    pub async fn resize_node(
        &self,
        node: NodeId,
        capability: Resource,
        overcommit_timeout: Option<weft_model::Duration>,
    ) -> Result<Resource, RmError> {
        self.call(|reply| Command::ResizeNode {
            node,
            capability,
            overcommit_timeout,
            reply,
        })
        .await
    }

    /// Puts a new `dynamic-resources.xml` in force: each registered node
    /// it gives another size is resized now, and each node it names
    /// registers with its size from now on.
    pub async fn refresh_nodes_resources(
        &self,
        resources: DynamicResources,
    ) -> Result<ResourcesRefreshed, RmError> {
        self.call(|reply| Command::RefreshNodesResources {
            resources: Box::new(resources),
            reply,
        })
        .await
    }

    /// One application's report as of now (not the published views), so a
    /// client reads its own writes; `None` when the RM does not know it.
    pub async fn app_snapshot(&self, app: AppId) -> Result<AppSnapshot, RmError> {
        self.call(|reply| Command::AppSnapshot { app, reply }).await
    }

    /// One application as of now with its live containers; an unknown app
    /// is `AppError::UnknownApp`.
    pub async fn app_containers(&self, app: AppId) -> Result<AppContainers, RmError> {
        self.call(|reply| Command::AppContainers { app, reply })
            .await
    }

    /// Why an application is or is not getting containers, as of now (not
    /// the published views); an unknown app is `AppError::UnknownApp`.
    pub async fn explain_app(&self, app: AppId) -> Result<weft_core::AppExplanation, RmError> {
        self.call(|reply| Command::ExplainApp { app, reply }).await
    }

    /// Publishes fresh views now and returns them.
    pub async fn sync(&self) -> Result<Arc<View>, RmError> {
        self.call(|reply| Command::Sync { reply }).await
    }
}

/// How the actor runs.
#[derive(Clone, Debug)]
pub(crate) struct ActorSettings {
    pub(crate) view_refresh: Duration,
    pub(crate) command_queue: usize,
    /// The administrators in force (refreshed by the handlers).
    pub(crate) access: Arc<LiveAccess>,
    /// The include and exclude lists in force at start.
    pub(crate) hosts: HostLists,
    /// Where each application's end is recorded, as Hadoop's RMAppManager does.
    pub(crate) audit: Arc<AuditLog>,
    /// The sizes `dynamic-resources.xml` gives nodes at start.
    pub(crate) dynamic_resources: DynamicResources,
}

#[derive(Default)]
struct NodeSession {
    last_response_id: u64,
    last: Option<Arc<NodeHeartbeatResponse>>,
    http_address: String,
    /// What the node last reported of its use, and its machine's size.
    utilization: NodeUtilization,
}

#[derive(Default)]
struct AmSession {
    last_response_id: u64,
    last: Option<Arc<AllocateResponseDto>>,
}

struct Actor {
    core: ResourceManager,
    clock: Clock,
    settings: ActorSettings,
    rx: mpsc::Receiver<Command>,
    views: watch::Sender<Arc<View>>,
    extras: BTreeMap<AppId, AppExtra>,
    nodes: BTreeMap<NodeId, NodeSession>,
    ams: BTreeMap<AppId, AmSession>,
    metrics: SchedulerMetrics,
    event_log: Option<EventLog>,
    store: Option<StateStore>,
    /// Nodes' diagnostics of completed containers, until their AM hears of them.
    node_diagnostics: BTreeMap<ContainerId, String>,
    /// The include and exclude lists in force.
    hosts: HostLists,
    /// The timeout each draining node was given, for the views (the core
    /// keeps only the deadline); an entry goes when its node stops draining.
    drain_timeouts: BTreeMap<NodeId, TimeoutSecs>,
    /// Drains kept in the state store, and those it held at start.
    drain_recovery: DrainRecovery,
    /// Why each decommissioned node was, for the answer that tells it to
    /// shut down; an entry goes when its node registers again.
    decommissioned: BTreeMap<NodeId, String>,
    /// The sizes `dynamic-resources.xml` gives nodes, in force.
    dynamic_resources: DynamicResources,
    /// The highest sequence number new-application has given out: a
    /// submission may only use an id issued already. The core counts on
    /// from the highest id submitted, so a made-up id would otherwise take
    /// ids from later callers, or exhaust the sequence.
    issued_seq: u32,
    /// Where container tokens come from.
    tokens: TokenSource,
    /// Tokens not yet handed to both a container's node and its AM.
    owed_tokens: TokenLedger,
    /// The AM token of each app's current (or, once ended, last) attempt,
    /// once it has one (a managed AM's attempt from its AM container's
    /// allocation, an unmanaged AM's from its app's acceptance). An entry
    /// goes when its attempt fails, so an earlier attempt's token never
    /// matches, or when the core forgets its ended app.
    am_tokens: BTreeMap<AppId, AttemptToken>,
    version: u64,
    dirty: bool,
    force_publish: bool,
    last_publish: Instant,
    /// What the last rebuild of the views took (real time, not the core's).
    last_publish_cost: Duration,
    /// Replies to `Sync`, held until the next rebuild of the views.
    deferred: Vec<Box<dyn FnOnce() + Send>>,
}

/// What the actor keeps across restarts: the state store, and the apps
/// (live and ended) it held when the RM started, to take back first; its
/// file of drains, and the drains it held, to take back as their nodes
/// register again.
#[derive(Default)]
pub(crate) struct Recovery {
    pub(crate) store: Option<StateStore>,
    pub(crate) stored: Stored,
    pub(crate) drain_store: Option<DrainStore>,
    pub(crate) drains: Vec<StoredDrain>,
}

/// Starts the actor on the current runtime; it stops when `shutdown`
/// resolves (or every handle is dropped), flushing the event log.
#[expect(
    clippy::too_many_arguments,
    reason = "each is a separate piece the server assembles; a struct would only rename them"
)]
pub(crate) fn spawn(
    core: ResourceManager,
    clock: Clock,
    settings: ActorSettings,
    metrics: Arc<Metrics>,
    event_log: Option<EventLog>,
    recovery: Recovery,
    tokens: TokenSource,
    shutdown: oneshot::Receiver<()>,
) -> (RmHandle, JoinHandle<()>) {
    let (tx, rx) = mpsc::channel(settings.command_queue);
    let hosts = settings.hosts.clone();
    let drains_wait_until = clock
        .now()
        .saturating_add(core.settings().scheduler.nm_liveness_expiry);
    let dynamic_resources = settings.dynamic_resources.clone();
    let mut actor = Actor {
        core,
        clock,
        settings,
        rx,
        views: watch::channel(Arc::new(View::default())).0,
        extras: BTreeMap::new(),
        nodes: BTreeMap::new(),
        ams: BTreeMap::new(),
        metrics: SchedulerMetrics::new(metrics),
        event_log,
        store: recovery.store,
        node_diagnostics: BTreeMap::new(),
        hosts,
        drain_timeouts: BTreeMap::new(),
        drain_recovery: DrainRecovery::new(
            recovery.drain_store,
            recovery.drains,
            drains_wait_until,
        ),
        decommissioned: BTreeMap::new(),
        dynamic_resources,
        issued_seq: 0,
        tokens,
        owed_tokens: TokenLedger::default(),
        am_tokens: BTreeMap::new(),
        version: 0,
        dirty: true,
        force_publish: false,
        last_publish: Instant::now(),
        last_publish_cost: Duration::ZERO,
        deferred: Vec::new(),
    };
    actor.recover(actor.clock.now(), recovery.stored);
    actor.publish(actor.clock.now());
    let handle = RmHandle {
        tx,
        views: actor.views.subscribe(),
        clock: actor.clock,
    };
    let task = tokio::spawn(actor.run(shutdown));
    (handle, task)
}

impl Actor {
    async fn run(mut self, mut shutdown: oneshot::Receiver<()>) {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        loop {
            let wake = self.next_wake();
            tokio::select! {
                biased;
                _ = &mut shutdown => break,
                n = self.rx.recv_many(&mut batch, MAX_BATCH) => {
                    if n == 0 {
                        break;
                    }
                }
                () = tokio::time::sleep_until(wake) => {}
            }
            let now = self.clock.now();
            self.tick_if_due(now);
            self.drain_recovery.expire(now);
            for cmd in batch.drain(..) {
                self.handle(now, cmd);
            }
            self.after_batch(now);
            // Compactions of the state store write on threads of their
            // own; one whose thread is done is put in place here, at the
            // latest a gauge refresh later when no command comes.
            if let Some(store) = &mut self.store {
                store.poll();
            }
            self.drain_recovery.poll_store();
        }
        let now = self.clock.now();
        self.publish(now);
        for f in self.deferred.drain(..) {
            f();
        }
        tracing::debug!("scheduler stopped");
    }

    fn next_wake(&self) -> Instant {
        let deadline = self.core.next_deadline().unwrap_or(Time::MAX);
        let mut wake = self.clock.instant_at(deadline);
        if self.dirty {
            wake = wake.min(self.last_publish + self.publish_interval());
        }
        wake.min(self.last_publish + GAUGE_REFRESH)
    }

    /// The least time between two rebuilds: the configured refresh, or
    /// fifty times what the last rebuild cost, whichever is longer (0
    /// configured: after every batch, whatever the cost).
    fn publish_interval(&self) -> Duration {
        if self.settings.view_refresh.is_zero() {
            return Duration::ZERO;
        }
        self.settings
            .view_refresh
            .max(self.last_publish_cost * VIEW_COST_FACTOR)
    }

    fn tick_if_due(&mut self, now: Time) {
        if self.core.next_deadline().is_some_and(|d| d <= now) {
            let started = std::time::Instant::now();
            let out = self.core.handle(now, Input::Tick);
            if out
                .events
                .iter()
                .any(|e| matches!(e, Event::Updated { .. }))
            {
                self.metrics.update_took(started.elapsed());
            }
            self.absorb(now, &out.events);
            self.dirty = true;
        }
    }

    fn after_batch(&mut self, now: Time) {
        let since = self.last_publish.elapsed();
        if self.force_publish
            || (self.dirty && since >= self.publish_interval())
            || since >= GAUGE_REFRESH
        {
            self.publish(now);
        }
        for f in self.deferred.drain(..) {
            f();
        }
    }

    fn publish(&mut self, now: Time) {
        let started = std::time::Instant::now();
        self.version += 1;
        let mut view = View::build(
            &self.core,
            &self.extras,
            self.version,
            now,
            self.clock.epoch_origin_ms(),
        );
        view.drain_timeouts = self.drain_timeouts.clone();
        view.utilization = self
            .nodes
            .iter()
            .filter(|(_, s)| s.utilization.node.is_some() || s.utilization.containers.is_some())
            .map(|(id, s)| (id.clone(), s.utilization))
            .collect();
        // Forget what the core itself has forgotten (apps trimmed from history).
        self.extras.retain(|id, _| view.apps.contains_key(id));
        // An ended app's last token is kept as long as the app is, so that
        // its AM is told the app has ended (409) rather than that its token
        // is wrong: the core refuses every AM call for it either way.
        self.am_tokens.retain(|id, _| view.apps.contains_key(id));
        self.metrics.publish(&view);
        view.queue_counts = self.metrics.queue_counts();
        if let Some(log) = &mut self.event_log {
            log.flush();
        }
        let old = self.views.send_replace(Arc::new(view));
        // Freeing a large view is not the scheduler's work.
        if Arc::strong_count(&old) == 1 && old.nodes.len() > 1_000 {
            tokio::task::spawn_blocking(move || drop(old));
        }
        self.last_publish = Instant::now();
        self.last_publish_cost = started.elapsed();
        self.dirty = false;
        self.force_publish = false;
    }

    fn handle(&mut self, now: Time, cmd: Command) {
        let was_dirty = self.dirty;
        self.dirty = true;
        match cmd {
            Command::RegisterNode {
                reg,
                physical,
                reply,
            } => {
                let res = self.register_node(now, reg, physical);
                let _ = reply.send(res);
            }
            Command::Heartbeat {
                hb,
                response_id,
                diagnostics,
                utilization,
                reply,
            } => {
                let res = self.heartbeat(now, hb, response_id, diagnostics, utilization);
                let _ = reply.send(res);
            }
            Command::UnregisterNode { node, reply } => {
                let out = self.core.handle(
                    now,
                    Input::NodeUnregistered {
                        node: node.clone(),
                        decommissioned: false,
                    },
                );
                self.absorb(now, &out.events);
                self.nodes.remove(&node);
                let res = match out.reply {
                    Reply::NodeUnregistered(r) => r.map_err(RmError::from),
                    _ => Err(RmError::Unexpected { what: "unregister" }),
                };
                let _ = reply.send(res);
            }
            Command::NewApplication { reply } => {
                let out = self.core.handle(now, Input::NewApplication);
                let res = match out.reply {
                    Reply::NewApplication(r) => {
                        self.issued_seq = self.issued_seq.max(r.app.seq);
                        Ok(r)
                    }
                    _ => Err(RmError::Unexpected {
                        what: "new-application",
                    }),
                };
                let _ = reply.send(res);
            }
            Command::Submit { sub, extra, reply } => {
                let res = self.submit(now, *sub, *extra);
                let _ = reply.send(res);
            }
            Command::RegisterAm {
                app,
                token,
                info,
                reply,
            } => {
                if let Err(e) = self.check_am_token(app, &token) {
                    let _ = reply.send(Err(e));
                    return;
                }
                let out = self.core.handle(now, Input::AmRegistered { app });
                self.absorb(now, &out.events);
                let res = match out.reply {
                    Reply::AmRegistered(r) => r.map_err(RmError::from),
                    _ => Err(RmError::Unexpected {
                        what: "AM register",
                    }),
                };
                if res.is_ok() {
                    self.ams.insert(app, AmSession::default());
                    let extra = self.extras.entry(app).or_default();
                    extra.am_host = info.host;
                    extra.am_rpc_port = info.rpc_port;
                    extra.tracking_url = info.tracking_url;
                }
                let _ = reply.send(res);
            }
            Command::Allocate {
                req,
                token,
                response_id,
                reply,
            } => {
                let res = self
                    .check_am_token(req.app, &token)
                    .and_then(|()| self.allocate(now, req, response_id));
                let _ = reply.send(res);
            }
            Command::FinishAm {
                app,
                token,
                outcome,
                diagnostics,
                tracking_url,
                reply,
            } => {
                if let Err(e) = self.check_am_token(app, &token) {
                    let _ = reply.send(Err(e));
                    return;
                }
                let out = self.core.handle(
                    now,
                    Input::AttemptFinished {
                        app,
                        outcome,
                        diagnostics,
                    },
                );
                let res = match out.reply {
                    Reply::Done(r) => r.map_err(RmError::from),
                    _ => Err(RmError::Unexpected { what: "AM finish" }),
                };
                if res.is_ok() && tracking_url.is_some() {
                    self.extras.entry(app).or_default().tracking_url = tracking_url;
                }
                self.absorb(now, &out.events);
                let _ = reply.send(res);
            }
            Command::Kill {
                app,
                who,
                diagnostics,
                reply,
            } => {
                let res = self.kill(now, app, &who, diagnostics);
                let _ = reply.send(res);
            }
            Command::Move {
                app,
                who,
                queue,
                reply,
            } => {
                let res = self.move_app(now, app, &who, queue);
                let _ = reply.send(res);
            }
            Command::SetPriority {
                app,
                who,
                priority,
                reply,
            } => {
                let res = self.set_priority(now, app, &who, priority);
                let _ = reply.send(res);
            }
            Command::SetLifetime {
                app,
                who,
                expiry,
                reply,
            } => {
                let res = self.set_lifetime(now, app, &who, expiry);
                let _ = reply.send(res);
            }
            Command::ReplaceAllocConfig { config, reply } => {
                let out = self.core.handle(now, Input::AllocConfigReplaced(config));
                self.absorb(now, &out.events);
                let res = match out.reply {
                    Reply::ConfigApplied(applied) => Ok(applied),
                    _ => Err(RmError::Unexpected {
                        what: "allocation file replacement",
                    }),
                };
                let _ = reply.send(res);
            }
            Command::RefreshNodes {
                lists,
                terms,
                reply,
            } => {
                let changes = self.refresh_nodes(now, *lists, terms);
                let _ = reply.send(Ok(changes));
            }
            Command::ResizeNode {
                node,
                capability,
                overcommit_timeout,
                reply,
            } => {
                let out = self.core.handle(
                    now,
                    Input::NodeResized {
                        node: node.clone(),
                        capability,
                        overcommit_timeout,
                    },
                );
                self.absorb(now, &out.events);
                let res = match out.reply {
                    Reply::NodeResized(r) => r.map_err(RmError::from),
                    _ => Err(RmError::Unexpected { what: "resize" }),
                };
                if let Err(e) = &res {
                    tracing::info!(node = %node, capability = %capability, error = %e, "node resize refused");
                }
                // An operator who resized a node reads its new size in the
                // node views at once, as after a refresh of the lists.
                self.force_publish = true;
                let _ = reply.send(res);
            }
            Command::RefreshNodesResources { resources, reply } => {
                let done = self.refresh_nodes_resources(now, *resources);
                let _ = reply.send(Ok(done));
            }
            Command::AppSnapshot { app, reply } => {
                self.dirty = was_dirty;
                let _ = reply.send(self.app_snapshot(now, app));
            }
            Command::AppContainers { app, reply } => {
                self.dirty = was_dirty;
                let res = self.app_snapshot(now, app).map(|snapshot| AppContainers {
                    snapshot,
                    containers: self
                        .core
                        .app_container_reports(app)
                        .into_iter()
                        .map(|c| {
                            let http = self
                                .nodes
                                .get(&c.node)
                                .map(|n| n.http_address.clone())
                                .unwrap_or_default();
                            (c, http)
                        })
                        .collect(),
                });
                let _ = reply.send(res);
            }
            Command::ExplainApp { app, reply } => {
                // A read: nothing to republish.
                self.dirty = was_dirty;
                let explained = self
                    .core
                    .explain_app(app, now)
                    .ok_or(RmError::App(AppError::UnknownApp(app)));
                let _ = reply.send(explained);
            }
            Command::Sync { reply } => {
                self.force_publish = true;
                let views = self.views.subscribe();
                self.deferred.push(Box::new(move || {
                    let _ = reply.send(Ok(views.borrow().clone()));
                }));
            }
        }
    }

    fn app_snapshot(&self, now: Time, app: AppId) -> Result<AppSnapshot, RmError> {
        let report = self
            .core
            .app_report(app)
            .ok_or(RmError::App(AppError::UnknownApp(app)))?;
        let tree = self.core.tree();
        let queue_fair_mb = tree
            .queue_id(&report.record.queue)
            .map_or(0, |q| tree.queue_fair_share(q).memory_mb());
        let extra = self.extras.get(&app).cloned().unwrap_or_default();
        let unmanaged_am_token = (report.record.am_resource.is_none()
            && !report.record.state.is_final())
        .then(|| self.am_tokens.get(&app).map(|t| t.token.clone()))
        .flatten();
        Ok(AppSnapshot {
            unmanaged_am_token,
            app: AppView { report, extra },
            queue_fair_mb,
            cluster_mb: tree.cluster_capacity().memory_mb(),
            now,
            epoch_origin_ms: self.clock.epoch_origin_ms(),
        })
    }

    fn register_node(
        &mut self,
        now: Time,
        mut reg: NodeRegistration,
        physical: Option<Resource>,
    ) -> Result<NodeRegistered, RmError> {
        let node = reg.node.clone();
        // As in Hadoop, a node that was draining may come back (it
        // restarted); its drain goes on.
        // So may one whose drain the state store kept across an RM restart.
        if let Err(why) = self.hosts.check(&node)
            && self.core.node_state(&node) != Some(NodeState::Decommissioning)
            && !self.drain_recovery.is_waiting(&node, now)
        {
            tracing::info!(node = %node, reason = %why, "registration refused");
            return Err(RmError::Disallowed { node, why });
        }
        // As in Hadoop, the file's size, not the node's, is what it offers.
        let configured = self.dynamic_resources.apply(&mut reg).map(|reported| {
            tracing::info!(node = %node, reported = %reported, capability = %reg.capability, "node registers with its size from dynamic-resources.xml instead of the one it reports");
            reg.capability
        });
        let http_address = reg.http_address.clone();
        // Containers a node brings back launch their app if nothing had
        // (a recovered app whose launch the store did not have): the
        // store must hear of it as of an allocation.
        let brought_back: BTreeSet<AppId> = match &self.store {
            Some(_) => reg.running.iter().map(|c| c.container.app()).collect(),
            None => BTreeSet::new(),
        };
        let out = self.core.handle(now, Input::NodeRegistered(reg));
        self.absorb(now, &out.events);
        if let Some(store) = &mut self.store {
            for app in brought_back {
                if let Some(at) = self.core.app_report(app).and_then(|r| r.record.launched) {
                    store.container_allocated(app, self.clock.epoch_ms(at));
                }
            }
        }
        match out.reply {
            Reply::NodeRegistered(Ok(())) => {
                // A (re-)registration starts a new heartbeat sequence.
                self.nodes.insert(
                    node.clone(),
                    NodeSession {
                        http_address,
                        utilization: NodeUtilization {
                            physical,
                            ..NodeUtilization::default()
                        },
                        ..NodeSession::default()
                    },
                );
                self.restore_drain(now, &node);
                Ok(NodeRegistered {
                    heartbeat_interval_ms: self
                        .core
                        .settings()
                        .scheduler
                        .node_heartbeat_interval
                        .as_millis(),
                    rm_identifier: self.clock.cluster_timestamp(),
                    resource: configured,
                })
            }
            Reply::NodeRegistered(Err(e)) => Err(e.into()),
            _ => Err(RmError::Unexpected {
                what: "node registration",
            }),
        }
    }

    fn heartbeat(
        &mut self,
        now: Time,
        hb: NodeHeartbeat,
        response_id: u64,
        diagnostics: Vec<(ContainerId, String)>,
        utilization: Option<NodeUtilization>,
    ) -> Result<Arc<NodeHeartbeatResponse>, RmError> {
        let Some(session) = self.nodes.get(&hb.node) else {
            // A decommissioned node has no session: whatever responseId it
            // sends, it is told to shut down (the answer never changes, so
            // there is nothing to keep in step).
            if self.core.node_state(&hb.node) == Some(NodeState::Decommissioned) {
                return Ok(self.shutdown_answer(&hb.node, response_id));
            }
            return Err(NodeError::NotRegistered(hb.node).into());
        };
        if let Some(last) = &session.last
            && last.response_id.checked_sub(1) == Some(response_id)
        {
            return Ok(last.clone());
        }
        if response_id != session.last_response_id {
            return Err(RmError::OutOfSync {
                who: format!("node {}", hb.node),
                got: response_id,
                expected: session.last_response_id,
                advice: "register the node again",
            });
        }
        let node = hb.node.clone();
        let out = self.core.handle(now, Input::NodeHeartbeat(hb));
        // Only completions the core took from this report reach an AM.
        // Kept before the events are absorbed, so that an AM container's
        // words go with its attempt wherever the attempt's end is recorded.
        for (container, words) in diagnostics {
            let completed_now = out.events.iter().any(
                |e| matches!(e, Event::ContainerCompleted { container: c, .. } if *c == container),
            );
            if completed_now && !words.trim().is_empty() {
                if let Some(extra) = self.extras.get_mut(&container.app()) {
                    extra.attempts.node_said(container, words.trim());
                }
                self.node_diagnostics.insert(container, words);
            }
        }
        self.absorb(now, &out.events);
        let reply = match out.reply {
            Reply::NodeHeartbeat(Ok(r)) => r,
            Reply::NodeHeartbeat(Err(NodeError::Decommissioned(_))) => {
                self.nodes.remove(&node);
                return Ok(self.shutdown_answer(&node, response_id));
            }
            Reply::NodeHeartbeat(Err(e)) => {
                self.nodes.remove(&node);
                return Err(e.into());
            }
            _ => return Err(RmError::Unexpected { what: "heartbeat" }),
        };
        let interval = self
            .core
            .settings()
            .scheduler
            .node_heartbeat_interval
            .as_millis();
        // Each app once per answer: its owner comes from the core's record.
        let mut apps: BTreeMap<AppId, ContainerApp> = BTreeMap::new();
        for c in &reply.allocated {
            let app = c.container.app();
            apps.entry(app).or_insert_with(|| self.container_app(app));
        }
        let (owed, tokens) = (&mut self.owed_tokens, &mut self.tokens);
        let res = Arc::new(NodeHeartbeatResponse::from_reply(
            response_id.saturating_add(1),
            interval,
            reply,
            |app| apps.get(&app).cloned().unwrap_or_default(),
            // A container that ended before its node heard of it gets a
            // token nobody else has: it cannot be started, as it should not.
            |c| owed.for_node(c).unwrap_or_else(|| tokens.draw()),
        ));
        if let Some(session) = self.nodes.get_mut(&node) {
            session.last_response_id = response_id.saturating_add(1);
            session.last = Some(res.clone());
            // A node that stops reporting (an older agent after an upgrade
            // went wrong) keeps its last figures, as Hadoop keeps them.
            if let Some(u) = utilization {
                session.utilization.node = u.node.or(session.utilization.node);
                session.utilization.containers = u.containers.or(session.utilization.containers);
            }
        }
        Ok(res)
    }

    /// What a node is told about an app whose container it is given: the
    /// owner and `VIEW_APP`, by which it decides who reads the container's
    /// logs, and the AM's launch context and attempt's token.
    fn container_app(&self, app: AppId) -> ContainerApp {
        let Some(user) = self.core.app_user(app) else {
            return ContainerApp::default();
        };
        let extra = self.extras.get(&app);
        ContainerApp {
            user: Some(user.to_owned()),
            view_acl: Some(extra.map(|e| e.acls.view.clone()).unwrap_or_default()),
            launch_context: extra.and_then(|e| e.launch_context.clone()),
            am_token: self.am_tokens.get(&app).cloned(),
        }
    }

    /// The heartbeat answer that tells a decommissioned node to stop its
    /// containers and exit (Hadoop's `NodeAction.SHUTDOWN`).
    fn shutdown_answer(&self, node: &NodeId, response_id: u64) -> Arc<NodeHeartbeatResponse> {
        let why = self
            .decommissioned
            .get(node)
            .map_or("decommissioned by an operator", String::as_str);
        let interval = self
            .core
            .settings()
            .scheduler
            .node_heartbeat_interval
            .as_millis();
        Arc::new(NodeHeartbeatResponse::shutdown(
            response_id.saturating_add(1),
            interval,
            format!("node {node} was decommissioned ({why}); stop every container and shut down"),
        ))
    }

    /// Puts `lists` in force and applies Hadoop's rules to every known
    /// node: a registered node the lists now disallow is decommissioned at
    /// once, or drained when `terms.graceful` (a draining one gets the new
    /// terms, or is decommissioned at once without `graceful`); a draining
    /// node they allow again is recommissioned; one that already left and
    /// is now disallowed is marked decommissioned. A decommissioned node
    /// they allow again needs nothing: it may register.
    fn refresh_nodes(
        &mut self,
        now: Time,
        lists: HostLists,
        terms: RefreshTerms,
    ) -> Vec<NodeChange> {
        self.hosts = lists;
        self.drain_recovery
            .lists_changed(&self.hosts, terms.graceful);
        let mut changes = Vec::new();
        for report in self.core.node_reports() {
            let node = report.id;
            let previous = report.state;
            let verdict = self.hosts.check(&node);
            let (input, timeout, reason) = match (previous, verdict) {
                // An unhealthy node has nothing to drain: the core
                // decommissions it at once.
                (
                    NodeState::Running | NodeState::Decommissioning | NodeState::Unhealthy,
                    Err(why),
                ) if terms.graceful => {
                    let timeout = self
                        .hosts
                        .exclude_timeout(&node)
                        .or(terms.timeout)
                        .unwrap_or(terms.default_timeout);
                    let drain = Drain {
                        timeout: timeout.to_drain_timeout(),
                        wait_for_apps: terms.wait_for_apps,
                        also_wait_for: Vec::new(),
                    };
                    let drain = self.drain_recovery.core_terms(&node, drain);
                    let input = Input::NodeDecommissioning {
                        node: node.clone(),
                        drain,
                    };
                    (input, Some(timeout), why.to_string())
                }
                (
                    NodeState::Running
                    | NodeState::Decommissioning
                    | NodeState::Unhealthy
                    | NodeState::Lost
                    | NodeState::Shutdown,
                    Err(why),
                ) => {
                    let input = Input::NodeUnregistered {
                        node: node.clone(),
                        decommissioned: true,
                    };
                    (input, None, why.to_string())
                }
                (NodeState::Decommissioning, Ok(())) => (
                    Input::NodeRecommissioned { node: node.clone() },
                    None,
                    "the include and exclude files allow it again".to_owned(),
                ),
                _ => continue,
            };
            let out = self.core.handle(now, input);
            self.absorb(now, &out.events);
            let state = match out.reply {
                Reply::NodeState(Ok(state)) => state,
                Reply::NodeUnregistered(Ok(())) => NodeState::Decommissioned,
                Reply::NodeState(Err(e)) | Reply::NodeUnregistered(Err(e)) => {
                    tracing::warn!(node = %node, error = %e, "refresh-nodes: the scheduler refused to change the node");
                    continue;
                }
                _ => {
                    tracing::error!(node = %node, "refresh-nodes: the scheduler answered with an unexpected reply");
                    continue;
                }
            };
            if state == NodeState::Decommissioning
                && let Some(t) = timeout
            {
                self.drain_timeouts.insert(node.clone(), t);
                self.record_drain(now, &node, t, terms.wait_for_apps);
            }
            let shown_timeout = (state == NodeState::Decommissioning)
                .then_some(timeout)
                .flatten();
            match shown_timeout {
                Some(t) => {
                    tracing::info!(node = %node, from = previous.yarn_name(), to = state.yarn_name(), timeout = %t, reason = %reason, "refresh-nodes changed a node")
                }
                None => {
                    tracing::info!(node = %node, from = previous.yarn_name(), to = state.yarn_name(), reason = %reason, "refresh-nodes changed a node")
                }
            }
            changes.push(NodeChange {
                node,
                previous,
                state,
                timeout: shown_timeout,
                reason,
            });
        }
        self.force_publish = true;
        changes
    }

    /// Puts `resources` in force and resizes each registered node it gives
    /// another size, with the file's over-commit timeout for that node,
    /// as `-updateNodeResource` would; the nodes it names that are not
    /// registered take their size when they register.
    fn refresh_nodes_resources(
        &mut self,
        now: Time,
        resources: DynamicResources,
    ) -> ResourcesRefreshed {
        let plan = resources.plan(&self.core);
        self.dynamic_resources = resources;
        let mut done = ResourcesRefreshed {
            not_registered: plan.not_registered,
            ..ResourcesRefreshed::default()
        };
        for r in plan.resizes {
            let out = self.core.handle(
                now,
                Input::NodeResized {
                    node: r.node.clone(),
                    capability: r.resources.capability,
                    overcommit_timeout: r.resources.overcommit_timeout,
                },
            );
            self.absorb(now, &out.events);
            match out.reply {
                Reply::NodeResized(Ok(offering)) => {
                    tracing::info!(node = %r.node, from = %r.previous, to = %r.resources.capability, offering = %offering, "refresh-nodes-resources resized a node");
                    done.resized.push(Resized {
                        node: r.node,
                        previous: r.previous,
                        capability: r.resources.capability,
                        offering,
                        overcommit_timeout: r.resources.overcommit_timeout,
                    });
                }
                Reply::NodeResized(Err(e)) => {
                    tracing::warn!(node = %r.node, error = %e, "refresh-nodes-resources: the scheduler refused the node's new size");
                    done.refused
                        .push(format!("node {} keeps {}: {e}", r.node, r.previous));
                }
                _ => {
                    tracing::error!(node = %r.node, "refresh-nodes-resources: the scheduler answered with an unexpected reply");
                }
            }
        }
        self.force_publish = true;
        done
    }

    fn submit(
        &mut self,
        now: Time,
        sub: weft_core::Submission,
        extra: AppExtra,
    ) -> Result<SubmitReply, RmError> {
        let app = sub.app;
        let unmanaged = sub.am_resource.is_none();
        if app.cluster_timestamp != self.core.settings().cluster_timestamp
            || app.seq == 0
            || app.seq > self.issued_seq
        {
            return Err(RmError::NotIssued { app });
        }
        let known = self.extras.contains_key(&app);
        let stored = self.store.is_some().then(|| sub.clone());
        let out = self.core.handle(now, Input::AppSubmitted(sub));
        let res = match out.reply {
            Reply::Submitted(r) => r.map_err(RmError::from),
            _ => Err(RmError::Unexpected { what: "submission" }),
        };
        match &res {
            Ok(reply) => {
                self.metrics.app_submitted(&reply.queue);
                if let (Some(store), Some(mut sub)) = (&mut self.store, stored) {
                    let record = self.core.app_report(app).map(|r| r.record);
                    let expiry = record
                        .as_ref()
                        .and_then(|r| r.lifetime_expiry)
                        .map(|t| self.clock.epoch_ms(t));
                    // Stored as in force, as Hadoop stores the priority its
                    // scheduler settled on: a cap raised later does not
                    // raise the app.
                    if let Some(r) = &record {
                        sub.priority = r.priority;
                    }
                    store.submitted(&sub, &reply.queue, &extra, expiry, self.clock.epoch_ms(now));
                }
                self.extras.insert(app, extra);
                // An unmanaged AM's attempt runs from its acceptance: its
                // owner can fetch the token from the report at once. Drawn
                // before the events are absorbed, so an app that placement
                // failed in the same step forgets it again.
                if unmanaged {
                    self.issue_am_token(AttemptId::new(app, 1));
                }
            }
            Err(RmError::Submit(SubmitError::Duplicate(_))) => {}
            Err(_) => {
                self.metrics.app_rejected();
                // Kept for an app the core recorded as refused; a refusal
                // that records nothing (ACLs with `yarn.acl.enable`, a zero
                // lifetime) leaves the id free to be submitted again.
                if !known && self.core.app_report(app).is_some() {
                    self.extras.insert(app, extra);
                }
            }
        }
        self.absorb(now, &out.events);
        res
    }

    fn allocate(
        &mut self,
        now: Time,
        req: AllocateRequest,
        response_id: u64,
    ) -> Result<Arc<AllocateResponseDto>, RmError> {
        let app = req.app;
        if let Some(session) = self.ams.get(&app) {
            if let Some(last) = &session.last
                && last.response_id.checked_sub(1) == Some(response_id)
            {
                return Ok(last.clone());
            }
            if response_id != session.last_response_id {
                return Err(RmError::OutOfSync {
                    who: format!("application {app}"),
                    got: response_id,
                    expected: session.last_response_id,
                    advice: "send the responseId of the last answer received",
                });
            }
        }
        let out = self.core.handle(now, Input::Allocate(req));
        self.absorb(now, &out.events);
        let mut reply = match out.reply {
            Reply::Allocate(Ok(r)) => r,
            Reply::Allocate(Err(e)) => return Err(e.into()),
            _ => return Err(RmError::Unexpected { what: "allocate" }),
        };
        if !self.node_diagnostics.is_empty() {
            for c in &mut reply.completed {
                if let Some(words) = self.node_diagnostics.remove(&c.container) {
                    c.diagnostics = words.into();
                }
            }
        }
        let clock = self.clock;
        let (owed, tokens) = (&mut self.owed_tokens, &mut self.tokens);
        let res = Arc::new(AllocateResponseDto::from_reply(
            response_id.saturating_add(1),
            reply,
            |t| clock.epoch_ms(t),
            // As for nodes: an ended container's token matches nothing.
            |c| owed.for_am(c).unwrap_or_else(|| tokens.draw()),
        ));
        let session = self.ams.entry(app).or_default();
        session.last_response_id = response_id.saturating_add(1);
        session.last = Some(res.clone());
        Ok(res)
    }

    /// Whether `presented` is the AM token of `app`'s running attempt. An
    /// app the RM does not know is refused as the core would refuse it
    /// (404): its id is no secret, and the answer says nothing of tokens.
    fn check_am_token(&self, app: AppId, presented: &str) -> Result<(), RmError> {
        match self.am_tokens.get(&app) {
            Some(t) if t.token.matches(presented) => Ok(()),
            None if self.core.app_user(app).is_none() => {
                Err(RmError::App(AppError::UnknownApp(app)))
            }
            _ => Err(RmError::AmTokenRefused { app }),
        }
    }

    /// Draws the AM token of `attempt`, replacing its app's last one, and
    /// stores it so that the attempt's AM keeps working after a restart.
    fn issue_am_token(&mut self, attempt: AttemptId) {
        let token = self.tokens.draw_am();
        if let Some(store) = &mut self.store {
            store.am_token_issued(attempt, &token);
        }
        self.am_tokens
            .insert(attempt.app, AttemptToken { attempt, token });
    }

    /// The app's owner and queue, or why it cannot be changed.
    fn app_owner(&self, app: AppId) -> Result<(String, QueuePath, AppState), RmError> {
        let report = self
            .core
            .app_report(app)
            .ok_or(RmError::App(AppError::UnknownApp(app)))?;
        let r = report.record;
        Ok((r.user, r.queue, r.state))
    }

    fn check_modify(
        &self,
        app: AppId,
        who: &Identity,
        action: &'static str,
        owner: &str,
        queue: &QueuePath,
    ) -> Result<(), RmError> {
        let none = AppAcls::default();
        let acls = self.extras.get(&app).map_or(&none, |e| &e.acls);
        let access = AppAccess { owner, queue, acls };
        if self
            .settings
            .access
            .may_modify_app(self.core.tree(), who, access)
        {
            return Ok(());
        }
        Err(RmError::Forbidden {
            user: who.user.clone(),
            action,
            app,
            queue: queue.clone(),
            why: ": only its owner, a user its MODIFY_APP ACL names, an administrator of its queue or a cluster administrator (yarn.admin.acl) may"
                .to_owned(),
        })
    }

    fn kill(
        &mut self,
        now: Time,
        app: AppId,
        who: &Identity,
        diagnostics: Option<String>,
    ) -> Result<AppState, RmError> {
        let (owner, queue, state) = self.app_owner(app)?;
        if state.is_final() {
            // Hadoop answers a kill of an ended app with its final state.
            return Ok(state);
        }
        self.check_modify(app, who, "kill", &owner, &queue)?;
        let reason = diagnostics
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| format!("killed by user {}", who.user));
        let out = self.core.handle(now, Input::KillApp { app, reason });
        self.absorb(now, &out.events);
        match out.reply {
            Reply::Done(Ok(())) => Ok(AppState::Killed),
            Reply::Done(Err(e)) => Err(e.into()),
            _ => Err(RmError::Unexpected { what: "kill" }),
        }
    }

    fn move_app(
        &mut self,
        now: Time,
        app: AppId,
        who: &Identity,
        target: QueuePath,
    ) -> Result<QueuePath, RmError> {
        let (owner, queue, state) = self.app_owner(app)?;
        if state.is_final() {
            return Err(MoveError::App(AppError::AlreadyEnded { app, state }).into());
        }
        self.check_modify(app, who, "move", &owner, &queue)?;
        if !self
            .settings
            .access
            .may_submit_to(self.core.tree(), who, &target)
        {
            return Err(RmError::Forbidden {
                user: who.user.clone(),
                action: "move",
                app,
                queue,
                why: format!(": the user may not submit to the target queue {target}"),
            });
        }
        let out = self.core.handle(now, Input::MoveApp { app, queue: target });
        self.absorb(now, &out.events);
        match out.reply {
            Reply::Moved(Ok(())) => {
                let (_, queue, _) = self.app_owner(app)?;
                Ok(queue)
            }
            Reply::Moved(Err(e)) => Err(e.into()),
            _ => Err(RmError::Unexpected { what: "move" }),
        }
    }

    fn set_priority(
        &mut self,
        now: Time,
        app: AppId,
        who: &Identity,
        priority: AppPriority,
    ) -> Result<AppPriority, RmError> {
        let (owner, queue, state) = self.app_owner(app)?;
        if state.is_final() {
            return Err(AppError::AlreadyEnded { app, state }.into());
        }
        self.check_modify(app, who, "change the priority of", &owner, &queue)?;
        let out = self
            .core
            .handle(now, Input::SetAppPriority { app, priority });
        self.absorb(now, &out.events);
        match out.reply {
            // The priority in force, which the cap may have lowered: Hadoop's
            // answer is the app's priority after the update too.
            Reply::Done(Ok(())) => {
                let in_force = self
                    .core
                    .app_report(app)
                    .map_or(priority, |r| r.record.priority);
                if let Some(store) = &mut self.store {
                    store.priority_set(app, in_force);
                }
                Ok(in_force)
            }
            Reply::Done(Err(e)) => Err(e.into()),
            _ => Err(RmError::Unexpected { what: "priority" }),
        }
    }

    fn set_lifetime(
        &mut self,
        now: Time,
        app: AppId,
        who: &Identity,
        expiry: Time,
    ) -> Result<Time, RmError> {
        let (owner, queue, state) = self.app_owner(app)?;
        if state.is_final() {
            return Err(AppError::AlreadyEnded { app, state }.into());
        }
        self.check_modify(app, who, "change the lifetime of", &owner, &queue)?;
        let out = self.core.handle(now, Input::SetAppLifetime { app, expiry });
        self.absorb(now, &out.events);
        match out.reply {
            Reply::LifetimeSet(Ok(expiry)) => {
                if let Some(store) = &mut self.store {
                    store.lifetime_set(app, self.clock.epoch_ms(expiry));
                }
                Ok(expiry)
            }
            Reply::LifetimeSet(Err(e)) => Err(e.into()),
            _ => Err(RmError::Unexpected { what: "lifetime" }),
        }
    }

    /// Takes back the apps the state store held when the RM started: the
    /// ended ones first, in the order they ended, then the live ones. The
    /// clock's origin lies at or before every time they hold (the server
    /// moved it there), so each converts to a `Time` as it was.
    fn recover(&mut self, now: Time, stored: Stored) {
        for ended in stored.ended {
            let app = ended.app();
            let (ended, extra) = ended.recovered_on(&self.clock);
            // Not logged as an event, nor audited or counted again: the app
            // ended in an earlier run, which did all that.
            let out = self
                .core
                .handle(now, Input::EndedAppRecovered(Box::new(ended)));
            match out.reply {
                Reply::EndedAppRecovered(Ok(())) => {
                    tracing::debug!(app = %app, "ended application recovered from the state store");
                    self.extras.insert(app, extra);
                }
                Reply::EndedAppRecovered(Err(e)) => {
                    tracing::warn!(app = %app, error = %e, "ended application in the state store not recovered");
                }
                _ => {
                    tracing::error!(app = %app, "the scheduler answered a recovery with an unexpected reply")
                }
            }
            self.absorb(now, &out.events);
        }
        for stored in stored.apps {
            let app = stored.recovered.submission.app;
            // An expiry that passed while the RM was down kills the app at
            // the core's next input, as Hadoop's monitor does on its first
            // pass.
            let recovered = stored.recovered_on(&self.clock);
            let attempts = stored.attempts_on(&self.clock);
            let out = self.core.handle(now, Input::AppRecovered(recovered));
            match out.reply {
                Reply::Submitted(Ok(reply)) => {
                    tracing::info!(app = %app, queue = %reply.queue, "application recovered from the state store");
                    let mut extra = stored.extra;
                    extra.attempts = attempts;
                    let unmanaged = extra.unmanaged;
                    self.extras.insert(app, extra);
                    self.recover_am_token(
                        app,
                        stored.am_token,
                        unmanaged || stored.recovered.am_container_allocated,
                    );
                }
                Reply::Submitted(Err(e)) => {
                    tracing::warn!(app = %app, error = %e, "application in the state store not recovered");
                    if let Some(store) = &mut self.store {
                        store.forget(app);
                    }
                }
                _ => {
                    tracing::error!(app = %app, "the scheduler answered a recovery with an unexpected reply")
                }
            }
            self.absorb(now, &out.events);
        }
    }

    /// Puts back the AM token `stored` for `app`'s attempt, so that an AM
    /// that ran through the restart goes on with the token it has. Without
    /// one for the attempt the core took back (a file from before tokens
    /// were kept), an attempt whose AM may already run (`running`: an
    /// unmanaged AM, an allocated AM container) gets a new token, which an
    /// unmanaged AM's owner can fetch again but a running AM container
    /// never receives: that AM is refused until the attempt expires and
    /// the next one starts.
    fn recover_am_token(&mut self, app: AppId, stored: Option<AttemptToken>, running: bool) {
        let Some(current) = self.core.app_report(app).map(|r| r.record.attempt) else {
            return;
        };
        match stored {
            Some(t) if t.attempt == current => {
                self.am_tokens.insert(app, t);
            }
            _ if running => {
                tracing::warn!(app = %app, attempt = %current, "no AM token stored for the attempt (a state store written before AM tokens): a new one is drawn, which an unmanaged AM fetches from the report again and an AM container already running never receives");
                self.issue_am_token(current);
            }
            // The AM container is still to be allocated: its token is
            // drawn then.
            _ => {}
        }
    }

    /// Records an application's end in the audit log, in Hadoop's words
    /// (RMAppManager's): a success when it finished, a failure when it
    /// failed, was rejected or was killed.
    fn audit_app_end(&self, app: AppId, state: AppState, diagnostics: &str) {
        let (operation, outcome) = match state {
            AppState::Finished => ("Application Finished - Succeeded", Outcome::Success),
            AppState::Killed => (
                "Application Finished - Killed",
                Outcome::Failure(diagnostics),
            ),
            _ => (
                "Application Finished - Failed",
                Outcome::Failure(diagnostics),
            ),
        };
        let user = self.core.app_report(app).map(|r| r.record.user);
        let app = app.to_string();
        self.settings.audit.record(&Entry {
            user: user.as_deref().unwrap_or("dr.who"),
            ip: None,
            operation,
            target: "RMAppManager",
            outcome,
            app: Some(&app),
            node: None,
        });
    }

    /// Turns the core's decisions into logs, metrics, the event log, the
    /// state store and the shell's own books.
    fn absorb(&mut self, now: Time, events: &[Event]) {
        if events.is_empty() {
            return;
        }
        let at = self.clock.epoch_ms(now);
        let origin = self.clock.epoch_origin_ms();
        // Kills are counted from the core's word that preemption ended the
        // container (its completion follows in the same batch), not from
        // the exit status, which a node may report on its own.
        let mut preempted: Vec<ContainerId> = Vec::new();
        for e in events {
            if let Some(log) = &mut self.event_log {
                log.write(at, origin, e);
            }
            if let Some(store) = &mut self.store {
                match e {
                    Event::ContainerAllocated {
                        container, is_am, ..
                    } => {
                        store.container_allocated(container.app(), at);
                        if *is_am {
                            store.am_allocated(*container);
                        }
                    }
                    Event::AppStateChanged { app, state, .. } if state.is_final() => {
                        let report = self.core.app_report(*app);
                        store.ended(
                            *app,
                            report.as_ref().map(|r| &r.record),
                            self.extras.get(app),
                            &self.clock,
                        );
                    }
                    _ => {}
                }
            }
            match e {
                Event::ContainerAllocated {
                    container,
                    node,
                    queue,
                    locality,
                    is_am,
                    ..
                } => {
                    self.metrics.container_allocated(queue, *locality);
                    let token = self.tokens.draw();
                    self.owed_tokens.allocated(*container, *is_am, token);
                    if *is_am {
                        self.issue_am_token(container.attempt);
                        let http = self
                            .nodes
                            .get(node)
                            .map(|s| s.http_address.clone())
                            .unwrap_or_default();
                        let extra = self.extras.entry(container.app()).or_default();
                        extra.attempts.current_am = Some(AmPlacement {
                            container: *container,
                            node: node.clone(),
                            node_http_address: http.clone(),
                        });
                        extra.am_node = Some((node.clone(), http));
                    }
                    tracing::debug!(container = %container, node = %node, queue = %queue, is_am, "container allocated");
                }
                Event::ContainerCompleted {
                    container,
                    queue,
                    exit_status,
                    ..
                } => {
                    self.owed_tokens.ended(*container);
                    self.metrics.container_ended(queue);
                    if let Some(i) = preempted.iter().position(|c| c == container) {
                        preempted.swap_remove(i);
                        self.metrics.container_preempted(queue);
                    }
                    tracing::debug!(container = %container, exit_status, "container completed");
                }
                Event::AttemptFinished {
                    app,
                    outcome: None,
                    diagnostics,
                } => {
                    let keep = usize::try_from(self.core.settings().max_app_attempts)
                        .unwrap_or(usize::MAX)
                        .max(MIN_KEPT_ATTEMPTS);
                    let extra = self.extras.entry(*app).or_default();
                    // The core has moved the app on to its next attempt:
                    // the failed one is the AM container's, or the one before.
                    let attempt = match &extra.attempts.current_am {
                        Some(am) => am.container.attempt,
                        None => self
                            .core
                            .app_report(*app)
                            .map_or(AttemptId::new(*app, 1), |r| {
                                AttemptId::new(
                                    *app,
                                    r.record.attempt.attempt.saturating_sub(1).max(1),
                                )
                            }),
                    };
                    extra.am_node = None;
                    extra
                        .attempts
                        .failed(now, attempt, diagnostics.clone(), keep);
                    // The failed attempt's AM may still be running (a
                    // silent AM, a lost node): its token stops working now.
                    if self
                        .am_tokens
                        .get(app)
                        .is_some_and(|t| t.attempt.attempt <= attempt.attempt)
                    {
                        self.am_tokens.remove(app);
                    }
                    if let (Some(store), Some(failed)) =
                        (&mut self.store, extra.attempts.earlier.last())
                    {
                        store.attempt_failed(*app, at, failed.am.as_ref(), &failed.diagnostics);
                    }
                    tracing::info!(attempt = %attempt, diagnostics = %diagnostics, "application attempt failed");
                }
                Event::AppStateChanged {
                    app,
                    queue,
                    state,
                    diagnostics,
                } => {
                    tracing::info!(app = %app, queue = %queue, state = state.yarn_name(), diagnostics = %diagnostics, "application {state}");
                    if state.is_final() {
                        self.audit_app_end(*app, *state, diagnostics);
                        self.metrics.app_ended(queue, *state);
                        self.ams.remove(app);
                        self.owed_tokens.app_ended(*app);
                        if !self.node_diagnostics.is_empty() {
                            self.node_diagnostics.retain(|c, _| c.app() != *app);
                        }
                        if let Some(extra) = self.extras.get_mut(app) {
                            extra.launch_context = None;
                            extra.am_node = None;
                        }
                    }
                }
                Event::NodeAdded {
                    node,
                    rack,
                    capability,
                } => {
                    tracing::info!(node = %node, rack = %rack, capability = %capability, "node registered");
                    self.decommissioned.remove(node);
                }
                // Logged here, where every resize passes, rather than in the
                // handler, so the log says what the core decided (offering).
                Event::NodeResized {
                    node,
                    capability,
                    offering,
                } => {
                    if offering == capability {
                        tracing::info!(node = %node, capability = %capability, "node resized");
                    } else {
                        tracing::info!(node = %node, capability = %capability, offering = %offering, "node resized below what its containers hold: over-committed until they end or the over-commit timeout passes");
                    }
                }
                Event::NodeStateChanged {
                    node,
                    state,
                    reason,
                } => match state {
                    // Still registered: its heartbeats go on.
                    NodeState::Decommissioning => {
                        tracing::info!(node = %node, reason = %reason, "node draining");
                    }
                    NodeState::Running => {
                        tracing::info!(node = %node, reason = %reason, "node back in service");
                        self.drain_timeouts.remove(node);
                        self.drain_recovery.ended(node);
                    }
                    // Still registered: its heartbeats go on, and a healthy
                    // report puts it back (`Running` above).
                    NodeState::Unhealthy => {
                        tracing::warn!(node = %node, reason = %reason, "node unhealthy: it takes no containers and its containers are stopped");
                    }
                    NodeState::Lost | NodeState::Shutdown | NodeState::Decommissioned => {
                        tracing::info!(node = %node, state = state.yarn_name(), reason = %reason, "node left");
                        self.nodes.remove(node);
                        self.drain_timeouts.remove(node);
                        self.drain_recovery.ended(node);
                        if *state == NodeState::Decommissioned {
                            self.decommissioned.insert(node.clone(), reason.clone());
                        }
                    }
                },
                Event::QueuesChanged { created, removed } => {
                    for q in created {
                        tracing::info!(queue = %q, "queue created");
                    }
                    for q in removed {
                        tracing::info!(queue = %q, "empty dynamic queue removed");
                    }
                }
                // Counted from the core's event, once per container: an
                // allocate answer repeats every warning still in force.
                Event::PreemptionWarned { .. } => self.metrics.preemption_warned(),
                Event::PreemptionKilled { container, .. } => preempted.push(*container),
                Event::PlacementFailed { app, error } => {
                    tracing::info!(app = %app, error = %error, "placement failed");
                }
                Event::AppLifetimeExpired { app, queue, .. } => {
                    tracing::info!(app = %app, queue = %queue, "application lifetime expired: killing it");
                }
                Event::AppLifetimeChanged { app, expiry, .. } => {
                    let at = crate::iso8601::EpochMs(
                        i64::try_from(self.clock.epoch_ms(*expiry)).unwrap_or(i64::MAX),
                    );
                    tracing::info!(app = %app, expiry = %at, "application lifetime expiry changed");
                }
                _ => {}
            }
        }
    }
}
