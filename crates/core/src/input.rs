//! Everything that can happen to the ResourceManager, as one closed enum of
//! plain data (`Input`); each arrives with the time it happened, passed to
//! `ResourceManager::handle`.
//!
//! Turning HTTP bodies, simulator events or test fixtures into these values is
//! the drivers' job.

use weft_model::{
    AppId, AppPriority, ContainerId, Duration, NodeId, Priority, QueuePath, Resource, Time,
};
use weft_queue_tree::AllocConfig;

use crate::output::AppState;
use crate::settings::CoreSettings;

/// One input to the state machine.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// A NodeManager joined (or re-joined after an RM restart, with its running containers).
    NodeRegistered(NodeRegistration),
    /// A NodeManager's periodic report; the main scheduling trigger.
    NodeHeartbeat(NodeHeartbeat),
    /// A NodeManager left cleanly, or was decommissioned.
    NodeUnregistered {
        /// The node.
        node: NodeId,
        /// True when an operator decommissioned it (its containers are stopped as lost either way).
        decommissioned: bool,
    },
    /// An operator decommissions a node gracefully: it takes no new
    /// containers, and leaves (as decommissioned) once it has drained, or
    /// when its drain times out. Sent again for a node already draining, it
    /// changes the drain's terms; the timeout still counts from the start.
    NodeDecommissioning {
        /// The node.
        node: NodeId,
        /// When the node counts as drained, and how long it may take.
        drain: Drain,
    },
    /// An operator takes a draining node back into service.
    NodeRecommissioned {
        /// The node.
        node: NodeId,
    },
    /// An operator changes what a node offers (YARN's `updateNodeResource`).
    /// Below what its containers hold, the node is over-committed: it takes
    /// nothing new, and shrinks as its containers end, until it reaches the
    /// new size; at `overcommit_timeout` (if any) containers past the new size
    /// are stopped.
    NodeResized {
        /// The node.
        node: NodeId,
        /// What it offers from now on.
        capability: Resource,
        /// How long its containers may keep it over the new size.
        overcommit_timeout: Option<Duration>,
    },
    /// A client asks for a new application id (YARN's `new-application`).
    NewApplication,
    /// A client submits an application.
    AppSubmitted(Submission),
    /// The driver takes back an application it knew before a restart (from
    /// its state store); answered like a submission.
    AppRecovered(RecoveredApp),
    /// The driver takes back an application that had already ended before
    /// a restart, so that its report outlives the restart (Hadoop's
    /// recovery of completed apps): it joins the finished apps as it
    /// ended, and never enters a queue.
    EndedAppRecovered(Box<EndedApp>),
    /// The application master registered with the RM.
    AmRegistered {
        /// The application.
        app: AppId,
    },
    /// The application master's periodic call: new asks, releases, blacklist, progress.
    Allocate(AllocateRequest),
    /// The application master says it is done.
    AttemptFinished {
        /// The application.
        app: AppId,
        /// How it ended.
        outcome: FinalStatus,
        /// Its own words about why.
        diagnostics: String,
    },
    /// Someone killed the application.
    KillApp {
        /// The application.
        app: AppId,
        /// Why, for the diagnostics (for example "killed by user alice").
        reason: String,
    },
    /// Move an application to another leaf queue.
    MoveApp {
        /// The application.
        app: AppId,
        /// The target leaf.
        queue: QueuePath,
    },
    /// Change an application's priority (lowered to
    /// `yarn.cluster.max-application-priority` if above it; the app's
    /// report shows the priority in force).
    SetAppPriority {
        /// The application.
        app: AppId,
        /// The new priority.
        priority: AppPriority,
    },
    /// Give an application a new lifetime expiry (YARN's
    /// `updateApplicationTimeouts` for `LIFETIME`): it is killed at
    /// `expiry` unless it ends first. The expiry must be after `now`; it may
    /// be earlier or later than the one in force, and an app submitted
    /// without a lifetime gains one, as in Hadoop.
    SetAppLifetime {
        /// The application.
        app: AppId,
        /// When it is killed.
        expiry: Time,
    },
    /// A new, validated allocation file.
    AllocConfigReplaced(Box<AllocConfig>),
    /// New scheduler settings. A lower `yarn.cluster.max-application-priority`
    /// applies from the next submission or priority change on: apps already
    /// admitted keep theirs, as in Hadoop.
    SettingsReplaced(Box<CoreSettings>),
    /// Time passed; nothing else happened. Drivers send it at `next_deadline()`.
    Tick,
}

/// The terms of a graceful decommission (YARN's DECOMMISSIONING state).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Drain {
    /// How long the node may take to drain, counted from when it started;
    /// then its remaining containers are lost with it. `None`: no limit.
    pub timeout: Option<Duration>,
    /// Also wait until the apps that held containers on the node when it
    /// started draining have finished, so outputs they left there (a map's
    /// shuffle data) stay readable. Apache Hadoop always waits; the service
    /// reads this from `yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications`,
    /// the name Amazon EMR's Hadoop gives the same switch.
    pub wait_for_apps: bool,
    /// With `wait_for_apps`, apps to wait for besides those holding
    /// containers on the node now (those still live): a drain a driver
    /// takes back after a restart passes the apps it waited for before,
    /// whose containers there may have ended already, leaving their outputs.
    pub also_wait_for: Vec<AppId>,
}

/// A NodeManager registering.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRegistration {
    /// `host:port`.
    pub node: NodeId,
    /// Network location, e.g. `/rack1` (`/default-rack` when unknown).
    pub rack: String,
    /// What the node offers.
    pub capability: Resource,
    /// The node's HTTP address, echoed to AMs with its containers.
    pub http_address: String,
    /// Containers still running on the node (after an RM restart).
    pub running: Vec<RecoveredContainer>,
}

/// A container a re-registering node still runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoveredContainer {
    /// The container.
    pub container: ContainerId,
    /// Its size.
    pub resource: Resource,
    /// Its request priority.
    pub priority: Priority,
}

/// A NodeManager heartbeat.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeHeartbeat {
    /// The node.
    pub node: NodeId,
    /// Containers the node reports on; ones it does not mention are unchanged.
    pub statuses: Vec<ContainerStatus>,
    /// What the node's health checker says when it finds the node unhealthy
    /// (a failed disk, say: YARN's `nodeHealthStatus`); `None` when healthy.
    pub unhealthy: Option<String>,
}

/// What a node says about one container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerStatus {
    /// The container.
    pub container: ContainerId,
    /// Running, or complete with an exit status.
    pub state: ContainerState,
}

/// A container's state as a node reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerState {
    /// The process runs.
    Running,
    /// The process ended.
    Complete {
        /// Its exit status (YARN's conventions: 0 success, negative codes from YARN itself).
        exit_status: i32,
    },
}

/// An application submission.
#[derive(Clone, Debug, PartialEq)]
pub struct Submission {
    /// The id from `NewApplication` (or any unused id).
    pub app: AppId,
    /// The submitting user.
    pub user: String,
    /// The user's groups, primary first, as the driver's group mapping says.
    pub groups: Vec<String>,
    /// The queue asked for, as typed (placement decides where it goes).
    pub queue: Option<String>,
    /// Application priority: the larger, the more weight in a `fair` or
    /// `drf` leaf and the earlier in a `fifo` one. Above
    /// `yarn.cluster.max-application-priority` (default 0) it is lowered
    /// to that, as Hadoop's scheduler does.
    pub priority: AppPriority,
    /// The AM container's size, or `None` for an unmanaged AM.
    pub am_resource: Option<Resource>,
    /// Application name.
    pub name: String,
    /// Application type (`MAPREDUCE`, `SPARK`, ...).
    pub app_type: String,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// How long it may run from its submission before the RM kills it
    /// (YARN's `LIFETIME` timeout); `None` (or `Duration::MAX`): no limit.
    /// Zero is refused.
    pub lifetime: Option<Duration>,
    /// Attempts it gets before it fails (YARN's per-app `max-app-attempts`);
    /// `None`, zero or more than `CoreSettings::max_app_attempts` means the
    /// RM-wide value, as in Hadoop.
    pub max_attempts: Option<u32>,
}

/// An application taken back after a restart of the ResourceManager.
#[derive(Clone, Debug, PartialEq)]
pub struct RecoveredApp {
    /// The submission as first accepted; its `queue` and `groups` are not
    /// used, since a recovered app skips placement and ACL checks, as in Hadoop.
    pub submission: Submission,
    /// The leaf queue it ran in (`root.recovery` is used if that queue is now
    /// a parent, as in Hadoop).
    pub queue: QueuePath,
    /// Its current attempt's number (1 for the first); earlier attempts
    /// count as failed towards `max_app_attempts`.
    pub attempt: u32,
    /// True when that attempt's AM container had been allocated: its node
    /// is expected to bring it back on re-registering, so none is asked for.
    pub am_container_allocated: bool,
    /// When it is killed for its lifetime, on this core's clock, as it
    /// stood before the restart (the submission's `lifetime` is not used:
    /// the expiry counts from the first submission, as Hadoop keeps it). An
    /// expiry already past kills it at the next input.
    pub lifetime_expiry: Option<Time>,
    /// When it was first submitted, on this core's clock, as Hadoop keeps
    /// an app's submission time across a restart; `None` (a driver that
    /// did not keep it): the time of its recovery.
    pub submitted: Option<Time>,
    /// When its first container was allocated, if it had been and the
    /// driver kept it; otherwise the first container it holds in this run
    /// sets it, as for any app.
    pub launched: Option<Time>,
}

/// An application that had ended before a restart of the ResourceManager,
/// as it ended: what its report shows. Times are on this core's clock, so
/// its driver starts that clock high enough for the earliest of them (see
/// the crate's documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct EndedApp {
    /// Id. An id of this core's cluster timestamp is never issued again.
    pub app: AppId,
    /// Submitting user.
    pub user: String,
    /// Name.
    pub name: String,
    /// Type.
    pub app_type: String,
    /// Tags.
    pub tags: Vec<String>,
    /// The queue it ended in (not checked against the tree: it holds no
    /// queue's resources, and the queue may be gone).
    pub queue: QueuePath,
    /// Its final state: `Finished`, `Failed`, `Killed` or `Rejected`.
    pub state: AppState,
    /// The AM's or the RM's verdict.
    pub final_status: Option<FinalStatus>,
    /// Why it ended.
    pub diagnostics: String,
    /// Priority.
    pub priority: AppPriority,
    /// AM container size (`None`: unmanaged).
    pub am_resource: Option<Resource>,
    /// Submission time.
    pub submitted: Time,
    /// When its first container was allocated, if ever.
    pub launched: Option<Time>,
    /// When it ended.
    pub finished: Time,
    /// The lifetime expiry it had, if any (reported, never watched).
    pub lifetime_expiry: Option<Time>,
    /// Its last attempt's number (1 for the first; 0 is read as 1).
    pub attempt: u32,
    /// The AM's last reported progress, 0 to 1.
    pub progress: f32,
    /// Memory-MB × seconds its containers used.
    pub memory_mb_seconds: u64,
    /// Vcore × seconds its containers used.
    pub vcore_seconds: u64,
    /// Containers other than the AM's taken back by preemption.
    pub preempted_containers: u64,
    /// AM containers taken back by preemption.
    pub preempted_am_containers: u64,
    /// What every preempted container held, added up.
    pub preempted_resource: Resource,
}

/// An AM's allocate call.
#[derive(Clone, Debug, PartialEq)]
pub struct AllocateRequest {
    /// The application.
    pub app: AppId,
    /// New or replaced asks: each replaces any earlier ask with the same
    /// priority, resource name and capability (as YARN's do).
    pub asks: Vec<Ask>,
    /// Containers the AM gives back.
    pub releases: Vec<ContainerId>,
    /// Hosts or racks to add to the app's blacklist.
    pub blacklist_additions: Vec<String>,
    /// Hosts or racks to remove from it.
    pub blacklist_removals: Vec<String>,
    /// The AM's progress, 0 to 1.
    pub progress: f32,
}

/// One resource request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ask {
    /// Request priority (smaller is served first).
    pub priority: Priority,
    /// A host name, a rack name, or `*` for anywhere.
    pub resource_name: String,
    /// Container size (normalised by the RM).
    pub capability: Resource,
    /// How many containers (0 cancels).
    pub num_containers: u32,
    /// Whether the scheduler may go beyond this location (YARN's `relaxLocality`).
    pub relax_locality: bool,
}

/// How an attempt ended, as the AM reports it (YARN's `FinalApplicationStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FinalStatus {
    /// Success.
    Succeeded,
    /// Failure.
    Failed,
    /// Killed.
    Killed,
}

/// The name YARN uses for "anywhere" in a resource request.
pub const ANY: &str = "*";
