//! What the ResourceManager decided, as plain data (`Output`): the reply to
//! the input that was handled, plus the events every decision produced, each
//! with its reason.
//!
//! Drivers execute replies (send them over HTTP, feed them to simulated
//! nodes) and turn events into logs, metrics and reports. Nothing here does
//! anything by itself.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use weft_model::{AppId, ContainerId, NodeId, Priority, QueuePath, Resource, Time};
use weft_queue_tree::{ConfigApplied, QueueCreateError};

use crate::input::FinalStatus;

/// The result of handling one input.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    /// The answer to the input's sender (HTTP caller, simulated node or AM).
    pub reply: Reply,
    /// Every decision taken while handling it, in order.
    pub events: Vec<Event>,
}

/// The answer to one input.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Reply {
    /// Inputs nobody waits on (`Tick`, settings).
    #[default]
    None,
    /// To `NodeRegistered`.
    NodeRegistered(Result<(), NodeError>),
    /// To `NodeHeartbeat`.
    NodeHeartbeat(Result<HeartbeatReply, NodeError>),
    /// To `NodeUnregistered`.
    NodeUnregistered(Result<(), NodeError>),
    /// To `NodeDecommissioning` and `NodeRecommissioned`: the state the node
    /// is in now (`Decommissioned` when it had nothing to drain).
    NodeState(Result<NodeState, NodeError>),
    /// To `NodeResized`: what the node offers now (more than asked while its
    /// containers hold more).
    NodeResized(Result<Resource, NodeError>),
    /// To `NewApplication`.
    NewApplication(NewApplicationReply),
    /// To `AppSubmitted`: accepted (maybe waiting) or refused, with the reason.
    Submitted(Result<SubmitReply, SubmitError>),
    /// To `EndedAppRecovered`: taken back into the finished apps, or why not.
    EndedAppRecovered(Result<(), EndedAppError>),
    /// To `AmRegistered`.
    AmRegistered(Result<RegisterReply, AppError>),
    /// To `Allocate`.
    Allocate(Result<AllocateReply, AllocateError>),
    /// To `AttemptFinished`, `KillApp`, `SetAppPriority`.
    Done(Result<(), AppError>),
    /// To `MoveApp`.
    Moved(Result<(), MoveError>),
    /// To `SetAppLifetime`: the expiry now in force.
    LifetimeSet(Result<Time, LifetimeError>),
    /// To `AllocConfigReplaced`.
    ConfigApplied(ConfigApplied),
}

/// What a heartbeating node must do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeartbeatReply {
    /// Containers to stop, with why.
    pub containers_to_stop: Vec<(ContainerId, StopReason)>,
    /// Containers allocated on this node since its last heartbeat (for
    /// drivers where the RM relays launches; AMs learn of them through
    /// `Allocate` either way).
    pub allocated: Vec<AllocatedContainer>,
}

/// A fresh application id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewApplicationReply {
    /// The id to submit with.
    pub app: AppId,
    /// The largest container anyone may ask for.
    pub max_capability: Resource,
}

/// A submission the RM took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmitReply {
    /// Where placement put it.
    pub queue: QueuePath,
    /// The state it starts in (`Accepted`, or `WaitingForLimit` with `diagnostics` saying which).
    pub state: AppState,
    /// A sentence a person can act on.
    pub diagnostics: String,
}

/// What an AM learns on registering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterReply {
    /// The largest container it may ask for in its queue.
    pub max_capability: Resource,
    /// The queue it runs in.
    pub queue: QueuePath,
}

/// What an AM learns on each allocate call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocateReply {
    /// Containers allocated since the last call.
    pub allocated: Vec<AllocatedContainer>,
    /// Containers that ended since the last call.
    pub completed: Vec<CompletedContainer>,
    /// Containers the RM will take back unless the AM releases them first.
    pub preemption: Option<PreemptionMessage>,
    /// What the app may still get (YARN's headroom).
    pub available: Resource,
    /// Nodes in the cluster.
    pub num_cluster_nodes: u32,
    /// Nodes whose state changed since the AM's last call (joined or back,
    /// draining, or gone), each as it is now: YARN's `updatedNodes`.
    pub updated_nodes: Vec<crate::view::NodeReport>,
}

/// A container given to an app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocatedContainer {
    /// The container.
    pub container: ContainerId,
    /// Where it runs.
    pub node: NodeId,
    /// The node's HTTP address.
    pub node_http_address: Arc<str>,
    /// Its size.
    pub resource: Resource,
    /// The request priority it satisfies.
    pub priority: Priority,
    /// How local it is to what was asked.
    pub locality: Locality,
    /// True for the application master's own container.
    pub is_am: bool,
}

/// A container that ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletedContainer {
    /// The container.
    pub container: ContainerId,
    /// Its exit status (YARN's conventions; see `exit_status`).
    pub exit_status: i32,
    /// Why it ended, in words.
    pub diagnostics: Cow<'static, str>,
}

/// YARN's preemption message: give these back before `deadline` or they are killed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreemptionMessage {
    /// When the RM kills what is not released.
    pub deadline: Time,
    /// The containers.
    pub containers: Vec<ContainerId>,
}

/// YARN's container exit statuses for endings the RM decides.
pub mod exit_status {
    /// Success.
    pub const SUCCESS: i32 = 0;
    /// Released by the AM, or lost with its node.
    pub const ABORTED: i32 = -100;
    /// Taken back by preemption.
    pub const PREEMPTED: i32 = -102;
    /// Killed by the RM (application killed or finished).
    pub const KILLED_BY_RESOURCEMANAGER: i32 = -106;
    /// Stopped because its application completed.
    pub const KILLED_AFTER_APP_COMPLETION: i32 = -107;
}

/// How local an allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Locality {
    /// On a node the app asked for.
    NodeLocal,
    /// On a rack the app asked for.
    RackLocal,
    /// Anywhere.
    OffSwitch,
}

impl fmt::Display for Locality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Locality::NodeLocal => "node-local",
            Locality::RackLocal => "rack-local",
            Locality::OffSwitch => "off-switch",
        })
    }
}

/// Why the RM tells a node to stop a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StopReason {
    /// The AM released it.
    Released,
    /// Its application ended.
    AppFinished,
    /// Taken back by preemption.
    Preempted,
    /// The RM does not know it (e.g. its app is gone).
    Unknown,
    /// Its node re-registered with less room than its containers hold.
    NoRoom,
    /// Its node reported itself unhealthy.
    NodeUnhealthy,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::Released => "released by the application master",
            StopReason::AppFinished => "its application ended",
            StopReason::Preempted => "preempted",
            StopReason::Unknown => "unknown to the resource manager",
            StopReason::NoRoom => "its node no longer has room for it",
            StopReason::NodeUnhealthy => "its node is unhealthy",
        })
    }
}

/// An application's lifecycle state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AppState {
    /// Placed and runnable, waiting for (or running) its AM container.
    Accepted,
    /// Placed but held back by a running-app limit.
    WaitingForLimit,
    /// Its AM registered.
    Running,
    /// The AM finished it (successfully or not: see the final status).
    Finished,
    /// It failed (its AM died, or too many attempts).
    Failed,
    /// Somebody killed it.
    Killed,
    /// Placement or an ACL refused it.
    Rejected,
}

impl AppState {
    /// YARN's name (`ACCEPTED`, `RUNNING`, ...): waiting apps are `ACCEPTED`, rejected ones `FAILED`.
    pub fn yarn_name(self) -> &'static str {
        match self {
            AppState::Accepted | AppState::WaitingForLimit => "ACCEPTED",
            AppState::Running => "RUNNING",
            AppState::Finished => "FINISHED",
            AppState::Failed | AppState::Rejected => "FAILED",
            AppState::Killed => "KILLED",
        }
    }

    /// True once the app can change no more.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            AppState::Finished | AppState::Failed | AppState::Killed | AppState::Rejected
        )
    }
}

impl fmt::Display for AppState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AppState::Accepted => "accepted",
            AppState::WaitingForLimit => "waiting for a running-app limit",
            AppState::Running => "running",
            AppState::Finished => "finished",
            AppState::Failed => "failed",
            AppState::Killed => "killed",
            AppState::Rejected => "rejected",
        })
    }
}

/// A node's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeState {
    /// Registered and heartbeating.
    Running,
    /// Registered and draining before it leaves: it takes no new containers.
    Decommissioning,
    /// Registered, but its health checker says it is unfit: it holds and
    /// takes no containers until it reports healthy again.
    Unhealthy,
    /// Missed heartbeats past the liveness expiry.
    Lost,
    /// Left cleanly.
    Shutdown,
    /// Decommissioned by an operator.
    Decommissioned,
}

impl NodeState {
    /// YARN's name.
    pub fn yarn_name(self) -> &'static str {
        match self {
            NodeState::Running => "RUNNING",
            NodeState::Decommissioning => "DECOMMISSIONING",
            NodeState::Unhealthy => "UNHEALTHY",
            NodeState::Lost => "LOST",
            NodeState::Shutdown => "SHUTDOWN",
            NodeState::Decommissioned => "DECOMMISSIONED",
        }
    }
}

/// Why a node input was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NodeError {
    /// The node never registered (or was forgotten after it was lost).
    #[error("node {0} is not registered; register it first")]
    NotRegistered(NodeId),
    /// The node was decommissioned: it must shut down, not register again
    /// (unless an operator lets it back in).
    #[error("node {0} was decommissioned; it must shut down")]
    Decommissioned(NodeId),
    /// The capability is not usable.
    #[error("node {node} offers {capability}, which is not a usable capability: {why}")]
    BadCapability {
        /// The node.
        node: NodeId,
        /// What it offered.
        capability: Resource,
        /// What is wrong.
        why: &'static str,
    },
}

/// Why a submission was refused. Placement, ACL, queue and AM-size
/// refusals still record the app (its report shows it refused, as
/// Hadoop's scheduler records it); a duplicate id, a zero lifetime and
/// `AclRefused` record nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The id is in use.
    #[error("application {0} already exists")]
    Duplicate(AppId),
    /// Placement refused it.
    #[error("application rejected by placement rules: {0}")]
    Placement(String),
    /// The user may not submit to the queue placement chose: the
    /// scheduler's check, made whatever `yarn.acl.enable` says, which
    /// records the app as refused (`FAILED`) as Hadoop's scheduler does.
    #[error("user {user} does not have permission to submit {app} to queue {queue}")]
    AccessDenied {
        /// The user.
        user: String,
        /// The app.
        app: AppId,
        /// The queue.
        queue: QueuePath,
    },
    /// With `yarn.acl.enable`, the user may not submit to the queue
    /// placement chose: refused before the app exists, as Hadoop's
    /// RMAppManager refuses it, so nothing is recorded and the id may be
    /// submitted again.
    #[error(
        "user {user} does not have permission to submit {app} to queue {queue}: denied by the ACLs (aclSubmitApps, aclAdministerApps) of queue {checked} and its parents"
    )]
    AclRefused {
        /// The user.
        user: String,
        /// The app.
        app: AppId,
        /// The queue placement chose.
        queue: QueuePath,
        /// The queue whose ACLs (with its parents') were checked: the one
        /// placement chose, or its nearest existing parent when it is yet
        /// to be created.
        checked: QueuePath,
    },
    /// The queue cannot take it.
    #[error("application {app} cannot be placed in {queue}: {why}")]
    Queue {
        /// The app.
        app: AppId,
        /// The queue.
        queue: QueuePath,
        /// Why.
        why: String,
    },
    /// The submission asks for a lifetime of zero (Hadoop refuses a
    /// `LIFETIME` timeout that is not positive).
    #[error(
        "application {0} asks for a lifetime of 0s; give a positive lifetime, or none for no limit"
    )]
    ZeroLifetime(AppId),
    /// The AM container is larger than the queue allows.
    #[error(
        "application master for {app} asks for {asked}, more than queue {queue} allows ({max})"
    )]
    AmTooLarge {
        /// The app.
        app: AppId,
        /// The queue.
        queue: QueuePath,
        /// The AM size asked for.
        asked: Resource,
        /// The largest container allowed.
        max: Resource,
    },
}

/// Why an ended application was not taken back after a restart.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndedAppError {
    /// The id is in use.
    #[error("application {0} already exists")]
    Duplicate(AppId),
    /// The state given is not a final one.
    #[error(
        "application {app} cannot be taken back as ended: {state} is not a final state (finished, failed, killed or rejected)"
    )]
    NotEnded {
        /// The app.
        app: AppId,
        /// The state given.
        state: AppState,
    },
}

/// Why an app-level input was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// No such application.
    #[error("application {0} is not known")]
    UnknownApp(AppId),
    /// The application already ended.
    #[error("application {app} has already ended ({state})")]
    AlreadyEnded {
        /// The app.
        app: AppId,
        /// Its final state.
        state: AppState,
    },
    /// The AM did something only a registered AM may do.
    #[error("application {app} must register its application master before {action}")]
    NotRegistered {
        /// The app.
        app: AppId,
        /// What it tried.
        action: &'static str,
    },
    /// The AM registered twice, or for an app without a running attempt.
    #[error("application {app} cannot register an application master now: {why}")]
    CannotRegister {
        /// The app.
        app: AppId,
        /// Why.
        why: &'static str,
    },
}

/// Why an allocate call was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocateError {
    /// The app-level problem.
    #[error(transparent)]
    App(#[from] AppError),
    /// The AM must register before allocating.
    #[error("application {0} must register its application master before asking for containers")]
    NotRegistered(AppId),
    /// An ask is malformed.
    #[error("invalid ask: {0}")]
    InvalidAsk(String),
    /// An ask needs a resource type the queue may have none of (Hadoop refuses the whole list).
    #[error(
        "ask for {capability} in queue {queue} includes a resource the queue's max share allows none of"
    )]
    ZeroMaxShare {
        /// The queue.
        queue: QueuePath,
        /// The capability asked for.
        capability: Resource,
    },
}

/// Why a new lifetime expiry was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LifetimeError {
    /// The app-level problem (unknown, or already ended).
    #[error(transparent)]
    App(#[from] AppError),
    /// The expiry is not in the future: Hadoop refuses an expiry before the
    /// current time (Weft also one equal to it, which would kill at once).
    #[error(
        "the new lifetime expiry of application {app} ({expiry} on the scheduler's clock) is not after the current time ({now}); give a time in the future"
    )]
    NotInFuture {
        /// The app.
        app: AppId,
        /// The expiry asked for.
        expiry: Time,
        /// The time it was asked at.
        now: Time,
    },
}

/// Why a move was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The app-level problem.
    #[error(transparent)]
    App(#[from] AppError),
    /// The tree refused.
    #[error(transparent)]
    Tree(#[from] weft_queue_tree::MoveAppError),
}

/// One decision, with its reason: the stream the service turns into logs and
/// metrics and the simulator into reports (seed 000's event log). New kinds
/// of decision will be added: drivers keep a catch-all arm.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A node joined.
    NodeAdded {
        /// The node.
        node: NodeId,
        /// Its rack.
        rack: String,
        /// Its capability.
        capability: Resource,
    },
    /// An operator changed what a node offers.
    NodeResized {
        /// The node.
        node: NodeId,
        /// What it offers from now on.
        capability: Resource,
        /// What it offers now: more while its containers hold more.
        offering: Resource,
    },
    /// A node changed state (lost, shut down, unhealthy, draining,
    /// decommissioned, or running again when healthy or recommissioned).
    NodeStateChanged {
        /// The node.
        node: NodeId,
        /// The new state.
        state: NodeState,
        /// Why.
        reason: String,
    },
    /// An application changed state.
    AppStateChanged {
        /// The app.
        app: AppId,
        /// Its queue (the requested one for rejections).
        queue: QueuePath,
        /// The new state.
        state: AppState,
        /// A sentence a person can act on.
        diagnostics: String,
    },
    /// A container was allocated.
    ContainerAllocated {
        /// The container.
        container: ContainerId,
        /// Its node.
        node: NodeId,
        /// Its app's leaf queue.
        queue: QueuePath,
        /// Its size.
        resource: Resource,
        /// Request priority.
        priority: Priority,
        /// Locality achieved.
        locality: Locality,
        /// True for the AM container.
        is_am: bool,
    },
    /// A node was reserved for an app whose container does not fit yet.
    ContainerReserved {
        /// The app.
        app: AppId,
        /// The node.
        node: NodeId,
        /// What it waits for.
        resource: Resource,
        /// Request priority.
        priority: Priority,
    },
    /// A reservation was dropped (used, or no longer valid).
    ReservationReleased {
        /// The app.
        app: AppId,
        /// The node.
        node: NodeId,
        /// Why.
        reason: String,
    },
    /// A container ended and its resources were freed.
    ContainerCompleted {
        /// The container.
        container: ContainerId,
        /// Its node.
        node: NodeId,
        /// Its app's leaf queue.
        queue: QueuePath,
        /// Its size.
        resource: Resource,
        /// Its exit status.
        exit_status: i32,
        /// Why it ended.
        diagnostics: Cow<'static, str>,
    },
    /// The RM told a node to stop a container.
    ContainerStopOrdered {
        /// The container.
        container: ContainerId,
        /// Its node.
        node: NodeId,
        /// Why.
        reason: StopReason,
    },
    /// An attempt ended.
    AttemptFinished {
        /// The app.
        app: AppId,
        /// The status its AM reported, if it reported one.
        outcome: Option<FinalStatus>,
        /// Why it ended: the AM's own words when it finished, the cause
        /// (its container's exit, its silence) when it failed.
        diagnostics: String,
    },
    /// Queues appeared or disappeared.
    QueuesChanged {
        /// New dynamic queues.
        created: Vec<QueuePath>,
        /// Removed empty dynamic queues.
        removed: Vec<QueuePath>,
    },
    /// The update pass ran (fair shares recomputed).
    Updated {
        /// When.
        at: Time,
    },
    /// An app is starved and preemption chose victims for it (in a dry run,
    /// what would be preempted).
    Starved {
        /// The starved app.
        app: AppId,
        /// Its leaf.
        queue: QueuePath,
        /// Below its fair-share threshold by this much, past the timeout.
        fair_share_starvation: Resource,
        /// Its part of its leaf's min-share starvation, past the timeout.
        min_share_starvation: Resource,
        /// The containers chosen, with their sizes.
        victims: Vec<(ContainerId, Resource)>,
        /// True when preemption only reports (`preemption.dry-run`).
        dry_run: bool,
    },
    /// A container's owner was warned: give it back before `deadline`.
    PreemptionWarned {
        /// The container.
        container: ContainerId,
        /// Its owner.
        app: AppId,
        /// The starved app it is taken for.
        for_app: AppId,
        /// Its size.
        resource: Resource,
        /// When it will be killed.
        deadline: Time,
    },
    /// The deadline passed: the container is killed.
    PreemptionKilled {
        /// The container.
        container: ContainerId,
        /// Its owner.
        app: AppId,
        /// The starved app it was taken for.
        for_app: AppId,
    },
    /// A warned container ended before its deadline.
    PreemptionReleased {
        /// The container.
        container: ContainerId,
        /// Its owner.
        app: AppId,
    },
    /// A warning was withdrawn.
    PreemptionWithdrawn {
        /// The container.
        container: ContainerId,
        /// Its owner.
        app: AppId,
        /// Why.
        reason: String,
    },
    /// Preemption refused the core's view of the cluster (a bug; nothing was preempted).
    PreemptionError {
        /// What it said.
        error: String,
    },
    /// An application's lifetime ran out: it is killed (the kill's own
    /// events follow).
    AppLifetimeExpired {
        /// The app.
        app: AppId,
        /// Its queue.
        queue: QueuePath,
        /// The expiry that passed.
        expiry: Time,
    },
    /// An application was given a new lifetime expiry.
    AppLifetimeChanged {
        /// The app.
        app: AppId,
        /// The expiry before (`None`: it had no lifetime).
        previous: Option<Time>,
        /// The expiry now in force.
        expiry: Time,
    },
    /// Placement could not find a queue.
    PlacementFailed {
        /// The app.
        app: AppId,
        /// Why.
        error: QueueCreateError,
    },
}
