//! Why an application is not getting containers, computed on demand from
//! the state as it is: which rules hold it back now, each with the numbers
//! behind it and what would change it, and a one-line summary.
//!
//! An explanation is a read-only dry run of what the app's next offers
//! would decide: the running-app limits, the AM share, and for each pending
//! ask every node as its next heartbeat would treat it. Each rule is checked
//! by the function the scheduler itself calls (`assign`'s
//! `has_container_for_node`, `level_on_node`, `locality_step`,
//! `takes_offers`, `reservation_is_valid`, `below_fair_share`; the tree's
//! `running_app_waits`, `can_start_am`, `max_share_blocker`), so the two
//! cannot disagree. Nothing here runs on a heartbeat or an allocate call:
//! scheduling pays nothing for it.
//!
//! What it cannot foresee is the order of apps: an ask a node has room for
//! is served at that node's next heartbeat unless apps ahead of it in
//! policy order take the room first. Rendering (JSON, HTML, text lines) is
//! the drivers'; each reason's `Display` is its sentence.

use std::fmt;

use weft_model::{AppId, Duration, NodeId, Priority, QueuePath, Resource, ResourceType, Time};
use weft_queue_tree::site::LocalityRelaxation;
use weft_queue_tree::{AmShare, AppHandle, WaitReason};

use crate::assign::{
    below_fair_share, has_container_for_node, level_on_node, locality_step,
    reaches_reservation_threshold, takes_offers,
};
use crate::input::FinalStatus;
use crate::nodes::{Node, NodeIdx};
use crate::output::{AppState, Locality, NodeState};
use crate::requests::{KeyState, SchedKey, is_rack_name};
use crate::rm::{ActiveApp, ResourceManager};

/// Why an application is or is not getting containers, as of one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct AppExplanation {
    /// The application.
    pub app: AppId,
    /// Its leaf queue.
    pub queue: QueuePath,
    /// Its state.
    pub state: AppState,
    /// The AM's verdict, once it ended.
    pub final_status: Option<FinalStatus>,
    /// The verdict in one word.
    pub outlook: Outlook,
    /// One line for a person: the most decisive reason, or why nothing
    /// holds it back.
    pub summary: String,
    /// Reasons that concern the whole application: running-app limits, the
    /// AM share, its AM, blacklist, reservations, nodes out of service.
    pub reasons: Vec<Reason>,
    /// Each pending ask (an AM container, or containers at a priority and
    /// size), in the order the scheduler tries them, with its reasons.
    pub asks: Vec<AskExplanation>,
}

/// The verdict of an explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outlook {
    /// The application ended; nothing more is allocated to it.
    Ended,
    /// Some rule holds every ask back now (the blocking reasons say which).
    HeldBack,
    /// Nothing holds it back: a node has room for one of its asks now.
    Servable,
    /// It waits for its application master to register, which is the only
    /// thing that can ask for containers.
    AwaitingAm,
    /// It asks for nothing.
    NothingAsked,
}

impl Outlook {
    /// The wire name (`HELD_BACK`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Outlook::Ended => "ENDED",
            Outlook::HeldBack => "HELD_BACK",
            Outlook::Servable => "SERVABLE",
            Outlook::AwaitingAm => "AWAITING_AM",
            Outlook::NothingAsked => "NOTHING_ASKED",
        }
    }
}

/// One pending ask: what the scheduler tries as one key (request priority
/// and container size), with the reasons that concern it.
#[derive(Clone, Debug, PartialEq)]
pub struct AskExplanation {
    /// Request priority (smaller is tried first).
    pub priority: Priority,
    /// Size of each container (as normalised).
    pub capability: Resource,
    /// Containers still asked for anywhere.
    pub containers: u32,
    /// This is the application master's container.
    pub is_am: bool,
    /// Its reasons, the most decisive first.
    pub reasons: Vec<Reason>,
}

impl AskExplanation {
    /// `AM container <memory:1024, vCores:1>` or `ask at priority 1 for 4 × <...>`.
    pub fn label(&self) -> String {
        if self.is_am {
            format!("AM container {}", self.capability)
        } else {
            format!(
                "ask at priority {} for {} \u{d7} {}",
                self.priority, self.containers, self.capability
            )
        }
    }

    /// True when some node has room for it now.
    pub fn has_room(&self) -> bool {
        self.reasons
            .iter()
            .any(|r| matches!(r.kind, ReasonKind::Room { .. }))
    }
}

/// One rule as it bears on the application (or one of its asks) now.
#[derive(Clone, Debug, PartialEq)]
pub struct Reason {
    /// This rule alone holds it back now; otherwise it is context (a
    /// reservation held, nodes out of service, a node with room).
    pub blocking: bool,
    /// The rule and its numbers.
    pub kind: ReasonKind,
}

/// A rule and the numbers behind it.
#[derive(Clone, Debug, PartialEq)]
pub enum ReasonKind {
    /// A `maxRunningApps` is reached: the app waits to start.
    RunningAppLimit {
        /// Whose limit.
        limit: RunningAppLimit,
        /// Runnable apps counted against it.
        running: u32,
        /// The limit.
        max: u32,
        /// The app's place, from 1, in the line of apps waiting on it.
        position: u32,
        /// Apps in that line.
        waiting: u32,
    },
    /// The app waits to start, though no running-app limit holds it now;
    /// it is woken when an app under its queues leaves or on a reload.
    NotYetWoken,
    /// Its AM finished: the rest of its containers drain, no new ones.
    Finishing,
    /// Its AM has not registered: only a registered AM asks for containers.
    AwaitingAmRegistration {
        /// The node running its AM container (`None`: unmanaged AM).
        am_node: Option<NodeId>,
    },
    /// The leaf's AMs would go over `maxAMShare` with this app's AM.
    AmShare {
        /// The leaf.
        queue: QueuePath,
        /// What its running AMs use.
        am_usage: Resource,
        /// This app's AM container.
        am_resource: Resource,
        /// What its AMs may use together.
        limit: Resource,
        /// The leaf's `maxAMShare`.
        max_am_share: f64,
        /// The leaf's instantaneous fair share (the limit's base).
        fair_share: Resource,
    },
    /// The AM blacklisted nodes or racks: it is never offered them.
    Blacklist {
        /// What it blacklisted.
        entries: Vec<String>,
        /// Registered nodes excluded by it.
        nodes: Sample<NodeId>,
    },
    /// Nodes that take no containers (draining or unhealthy).
    NodesOutOfService {
        /// Each with its state.
        nodes: Sample<(NodeId, NodeState)>,
    },
    /// The app holds a node reserved for a container that did not fit.
    Reservation {
        /// The node.
        node: NodeId,
        /// The ask's priority.
        priority: Priority,
        /// The container reserved for.
        resource: Resource,
        /// The node has room for it now (its next heartbeat fills it).
        fits_now: bool,
        /// Still valid (else dropped at the node's next heartbeat).
        valid: bool,
    },
    /// Preemption freed room on a node for this app, offered to it first.
    RoomSetAside {
        /// The node.
        node: NodeId,
        /// How much is still set aside.
        resource: Resource,
    },
    /// No node is in service.
    NoNodes,
    /// No node in service could hold the container even empty.
    NeverFits {
        /// The container.
        asked: Resource,
        /// The largest node in service (most memory, then vcores) and what it offers.
        largest: Option<(NodeId, Resource)>,
    },
    /// The container is larger than the queue's `maxContainerAllocation`
    /// in force (asked before a reload lowered it); it is still served.
    AboveMaxContainerAllocation {
        /// The leaf.
        queue: QueuePath,
        /// The container.
        asked: Resource,
        /// The leaf's largest container now.
        max: Resource,
    },
    /// The container would take a queue on the app's path over `maxResources`.
    QueueMaxResources {
        /// The nearest queue without room.
        queue: QueuePath,
        /// What it uses.
        usage: Resource,
        /// Its max share.
        max: Resource,
        /// The container.
        asked: Resource,
    },
    /// `relaxLocality=false` keeps the ask on the locations it names.
    StrictLocality {
        /// Each location named, and how it stands.
        locations: Vec<LocationStatus>,
    },
    /// Delay scheduling holds the ask for a more local node.
    LocalityDelay {
        /// The level allowed now (`None`: never offered a node, it starts at node-local).
        allowed: Option<Locality>,
        /// The level at its next offer.
        next: Locality,
        /// Offers passed over since the level last rose.
        opportunities: u64,
        /// Offers past which the level rises (threshold × nodes), if counted.
        threshold: Option<f64>,
        /// Time since it was first offered a node, the level rose or it got a container.
        waited: Option<Duration>,
        /// Wait after which the level rises, if timed.
        delay: Option<Duration>,
        /// Nodes with room it does not take at the level allowed.
        nodes_waiting: Sample<NodeId>,
    },
    /// Nodes with room for the ask serve another ask of the app first: one
    /// tried before it (a higher priority, or the same priority and a
    /// smaller size), or one the app holds the node reserved for.
    HigherPriorityFirst {
        /// That ask's priority.
        priority: Priority,
        /// Nodes with room.
        nodes: Sample<NodeId>,
    },
    /// Nodes with room for the ask are reserved for other applications.
    ReservedByOthers {
        /// Each node and the app it is reserved for.
        nodes: Sample<(NodeId, AppId)>,
    },
    /// Only nodes the app blacklisted have room for the ask.
    BlacklistedRoom {
        /// Those nodes.
        nodes: Sample<NodeId>,
    },
    /// No node the ask may use has room now.
    NoRoom {
        /// Free in the whole cluster.
        free: Resource,
        /// The app's usage.
        usage: Resource,
        /// Its instantaneous fair share (computed each update pass).
        fair_share: Resource,
        /// Its usage is below that share under its leaf's policy.
        below_fair_share: bool,
        /// It may reserve a node that lacks room for the container: it is
        /// below its fair share, the container is at least the reservation
        /// threshold, and such a node can still hold the smallest container
        /// (a node that cannot is not offered at all).
        may_reserve: bool,
    },
    /// Nodes that have room for the ask now, at the locality they give.
    Room {
        /// Those nodes.
        nodes: Sample<(NodeId, Locality)>,
    },
}

/// Whose running-app limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunningAppLimit {
    /// A queue's `maxRunningApps` (the leaf's or an ancestor's).
    Queue(QueuePath),
    /// The user's `maxRunningApps`, or `userMaxAppsDefault`.
    User {
        /// The user.
        user: String,
        /// The limit is `userMaxAppsDefault`.
        from_default: bool,
    },
}

/// A location a strict ask names, and how it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocationStatus {
    /// The host or rack as asked.
    pub name: String,
    /// A rack (`/rack1`) rather than a host.
    pub is_rack: bool,
    /// How it stands.
    pub state: LocationState,
}

/// How a named location stands for an ask, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LocationState {
    /// No registered node has that name or rack.
    Unknown,
    /// A strict rack none of whose nodes is asked for by name, so nothing
    /// in it may be used.
    NoneNamed,
    /// Its nodes are draining or unhealthy.
    OutOfService,
    /// The app blacklisted it.
    Blacklisted,
    /// No node there could hold the container even empty.
    TooSmall,
    /// Its nodes with room are reserved for other applications.
    Reserved,
    /// No room there now.
    Full,
    /// Room there now.
    Room,
}

impl LocationState {
    /// The wire name (`FULL`, ...).
    pub fn name(self) -> &'static str {
        match self {
            LocationState::Unknown => "UNKNOWN",
            LocationState::NoneNamed => "NONE_NAMED",
            LocationState::OutOfService => "OUT_OF_SERVICE",
            LocationState::Blacklisted => "BLACKLISTED",
            LocationState::TooSmall => "TOO_SMALL",
            LocationState::Reserved => "RESERVED",
            LocationState::Full => "FULL",
            LocationState::Room => "ROOM",
        }
    }
}

/// The first few of a list (an explanation on a large cluster names a
/// handful of nodes, not thousands) and how many there are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample<T> {
    /// The first ones, at most `Sample::SHOWN`.
    pub shown: Vec<T>,
    /// How many in all.
    pub total: u32,
}

impl<T> Default for Sample<T> {
    fn default() -> Sample<T> {
        Sample {
            shown: Vec::new(),
            total: 0,
        }
    }
}

impl<T> Sample<T> {
    /// How many items a sample keeps.
    pub const SHOWN: usize = 5;

    fn push(&mut self, item: T) {
        if self.shown.len() < Self::SHOWN {
            self.shown.push(item);
        }
        self.total = self.total.saturating_add(1);
    }

    /// True when it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

impl ReasonKind {
    /// A stable name for the rule (`QUEUE_MAX_RESOURCES`, ...), for scripts.
    pub fn code(&self) -> &'static str {
        match self {
            ReasonKind::RunningAppLimit { .. } => "RUNNING_APP_LIMIT",
            ReasonKind::NotYetWoken => "NOT_YET_WOKEN",
            ReasonKind::Finishing => "FINISHING",
            ReasonKind::AwaitingAmRegistration { .. } => "AM_NOT_REGISTERED",
            ReasonKind::AmShare { .. } => "AM_SHARE",
            ReasonKind::Blacklist { .. } => "BLACKLIST",
            ReasonKind::NodesOutOfService { .. } => "NODES_OUT_OF_SERVICE",
            ReasonKind::Reservation { .. } => "RESERVATION",
            ReasonKind::RoomSetAside { .. } => "ROOM_SET_ASIDE",
            ReasonKind::NoNodes => "NO_NODES",
            ReasonKind::NeverFits { .. } => "NO_NODE_LARGE_ENOUGH",
            ReasonKind::AboveMaxContainerAllocation { .. } => "ABOVE_MAX_CONTAINER_ALLOCATION",
            ReasonKind::QueueMaxResources { .. } => "QUEUE_MAX_RESOURCES",
            ReasonKind::StrictLocality { .. } => "STRICT_LOCALITY",
            ReasonKind::LocalityDelay { .. } => "LOCALITY_DELAY",
            ReasonKind::HigherPriorityFirst { .. } => "HIGHER_PRIORITY_FIRST",
            ReasonKind::ReservedByOthers { .. } => "RESERVED_BY_OTHERS",
            ReasonKind::BlacklistedRoom { .. } => "ROOM_ONLY_ON_BLACKLISTED",
            ReasonKind::NoRoom { .. } => "NO_ROOM",
            ReasonKind::Room { .. } => "ROOM",
        }
    }

    /// What would change it, in a sentence.
    pub fn remedy(&self) -> String {
        match self {
            ReasonKind::RunningAppLimit {
                limit: RunningAppLimit::Queue(queue),
                ..
            } => format!(
                "an application under {queue} ending, or a higher maxRunningApps for {queue}"
            ),
            ReasonKind::RunningAppLimit {
                limit: RunningAppLimit::User { user, from_default },
                ..
            } => format!(
                "one of {user}'s running applications ending, or a higher {} in the allocation file",
                if *from_default {
                    "userMaxAppsDefault (or a maxRunningApps for the user)".to_owned()
                } else {
                    format!("maxRunningApps for user {user}")
                }
            ),
            ReasonKind::NotYetWoken => {
                "an application in its queue ending, or a reload of the allocation file".to_owned()
            }
            ReasonKind::Finishing => "nothing: the application is ending".to_owned(),
            ReasonKind::AwaitingAmRegistration { .. } => {
                "the application master registering; one that never does fails its attempt \
                 after the AM liveness expiry"
                    .to_owned()
            }
            ReasonKind::AmShare { queue, .. } => format!(
                "an application master in {queue} ending, a larger fair share for {queue} \
                 (more nodes, or fewer active queues: shares are recomputed every update pass), \
                 or a higher maxAMShare (-1 turns the check off)"
            ),
            ReasonKind::Blacklist { .. } => {
                "the application master taking them off its blacklist".to_owned()
            }
            ReasonKind::NodesOutOfService { .. } => {
                "a draining node recommissioned, or an unhealthy node reporting healthy".to_owned()
            }
            ReasonKind::Reservation {
                node, valid: true, ..
            } => format!("containers on {node} ending, which fills the reservation"),
            ReasonKind::Reservation { node, .. } => {
                format!("nothing: {node}'s next heartbeat drops the reservation")
            }
            ReasonKind::RoomSetAside { node, .. } => {
                format!("nothing: {node} offers the room to this application first")
            }
            ReasonKind::NoNodes => "a node registering, or one returning to service".to_owned(),
            ReasonKind::NeverFits { .. } => {
                "a smaller ask, or a node large enough joining the cluster".to_owned()
            }
            ReasonKind::AboveMaxContainerAllocation { .. } => {
                "nothing holds it: the lower limit applies to asks made from now on".to_owned()
            }
            ReasonKind::QueueMaxResources { queue, .. } => {
                format!("containers under {queue} ending, or a higher maxResources for {queue}")
            }
            ReasonKind::StrictLocality { .. } => {
                "room on a location it names, or an ask that lets locality relax \
                 (relaxLocality=true)"
                    .to_owned()
            }
            ReasonKind::LocalityDelay { .. } => {
                "room on a more local node, or more offers or time passing; lower \
                 locality.threshold or locality-delay settings shorten the wait"
                    .to_owned()
            }
            ReasonKind::HigherPriorityFirst { .. } => {
                "that ask being served or cancelled".to_owned()
            }
            ReasonKind::ReservedByOthers { .. } => {
                "those reservations being filled or dropped".to_owned()
            }
            ReasonKind::BlacklistedRoom { .. } => {
                "room elsewhere, or the application master taking those nodes off its blacklist"
                    .to_owned()
            }
            ReasonKind::NoRoom {
                below_fair_share: true,
                ..
            } => "containers ending anywhere it may run: it is below its fair share, so it is \
                  among the first served; with preemption on, containers of applications \
                  over their shares may be taken back for it"
                .to_owned(),
            ReasonKind::NoRoom { .. } => {
                "other applications' containers ending once those below their fair shares \
                 are served, more nodes, or a larger weight for its queue"
                    .to_owned()
            }
            ReasonKind::Room { .. } => {
                "nothing: such a node serves it at its next heartbeat, after applications \
                 ahead of it in policy order"
                    .to_owned()
            }
        }
    }

    /// A short form for the summary line.
    fn short(&self) -> String {
        match self {
            ReasonKind::RunningAppLimit {
                limit: RunningAppLimit::Queue(queue),
                running,
                max,
                position,
                waiting,
            } => format!(
                "queue {queue} is at its maxRunningApps ({running} of {max} running; \
                 {position} of {waiting} in line)"
            ),
            ReasonKind::RunningAppLimit {
                limit: RunningAppLimit::User { user, from_default },
                running,
                max,
                position,
                waiting,
            } => format!(
                "user {user} is at {} ({running} of {max} running; {position} of {waiting} in line)",
                if *from_default {
                    "userMaxAppsDefault"
                } else {
                    "their maxRunningApps"
                }
            ),
            ReasonKind::AmShare {
                queue,
                am_usage,
                am_resource,
                limit,
                ..
            } => format!(
                "queue {queue} is at its maxAMShare (AMs use {}; this AM needs {am_resource})",
                over_limit(am_usage, am_resource, limit)
            ),
            ReasonKind::NeverFits { asked, largest } => match largest {
                Some((node, capability)) => format!(
                    "no node can ever hold a container of {asked} (the largest, {node}, offers {capability})"
                ),
                None => format!("no node can ever hold a container of {asked}"),
            },
            ReasonKind::QueueMaxResources {
                queue,
                usage,
                max,
                asked,
            } => format!(
                "queue {queue} is at its maxResources ({})",
                over_limit(usage, asked, max)
            ),
            ReasonKind::StrictLocality { locations } => format!(
                "strict locality keeps it on {}",
                ListOf(locations.iter().collect())
            ),
            ReasonKind::LocalityDelay { allowed, .. } => format!(
                "delay scheduling holds it for a {} node",
                allowed.unwrap_or(Locality::NodeLocal)
            ),
            ReasonKind::NoRoom {
                below_fair_share, ..
            } => format!(
                "no node it may use has room, and it is {} its fair share",
                if *below_fair_share {
                    "below"
                } else {
                    "at or above"
                }
            ),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for ReasonKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReasonKind::RunningAppLimit {
                limit: RunningAppLimit::Queue(queue),
                running,
                max,
                position,
                waiting,
            } => write!(
                f,
                "queue {queue} runs {running} applications, its maxRunningApps of {max}: \
                 this one waits to start, {position} of {waiting} in line under {queue}"
            ),
            ReasonKind::RunningAppLimit {
                limit: RunningAppLimit::User { user, from_default },
                running,
                max,
                position,
                waiting,
            } => write!(
                f,
                "user {user} runs {running} applications, the most {} allows ({max}): \
                 this one waits to start, {position} of {waiting} of {user}'s in line",
                if *from_default {
                    "userMaxAppsDefault"
                } else {
                    "their maxRunningApps"
                }
            ),
            ReasonKind::NotYetWoken => f.write_str(
                "it waits to start, though no running-app limit holds it now; it is woken \
                 when an application under its queues leaves",
            ),
            ReasonKind::Finishing => f.write_str(
                "its application master finished: its containers drain and it takes no new ones",
            ),
            ReasonKind::AwaitingAmRegistration {
                am_node: Some(node),
            } => write!(
                f,
                "its application master runs on {node} but has not registered; only a \
                 registered application master asks for containers"
            ),
            ReasonKind::AwaitingAmRegistration { am_node: None } => f.write_str(
                "its unmanaged application master has not registered; only a registered \
                 application master asks for containers",
            ),
            ReasonKind::AmShare {
                queue,
                am_usage,
                am_resource,
                limit,
                max_am_share,
                fair_share,
            } => write!(
                f,
                "queue {queue}'s application masters may use {limit} (maxAMShare {} of its \
                 fair share {fair_share}): they use {am_usage}, and this one needs \
                 {am_resource} more",
                *max_am_share as f32
            ),
            ReasonKind::Blacklist { entries, nodes } => write!(
                f,
                "it blacklisted {}, so it is not offered {} node{}{}",
                entries.join(", "),
                nodes.total,
                plural(nodes.total),
                if nodes.is_empty() {
                    String::new()
                } else {
                    format!(" ({nodes})")
                }
            ),
            ReasonKind::NodesOutOfService { nodes } => write!(
                f,
                "{} node{} take{} no containers: {}",
                nodes.total,
                plural(nodes.total),
                if nodes.total == 1 { "s" } else { "" },
                SampleOf(nodes, |(id, state): &(NodeId, NodeState)| format!(
                    "{id} ({})",
                    state.yarn_name().to_lowercase()
                ))
            ),
            ReasonKind::Reservation {
                node,
                priority,
                resource,
                fits_now,
                valid,
            } => {
                write!(
                    f,
                    "it holds {node} reserved for {resource} at priority {priority}"
                )?;
                if !valid {
                    f.write_str(", which it can no longer use: the node's next heartbeat drops it")
                } else if *fits_now {
                    f.write_str("; the node has room now, so its next heartbeat fills it")
                } else {
                    f.write_str("; it waits there until enough ends on the node")
                }
            }
            ReasonKind::RoomSetAside { node, resource } => write!(
                f,
                "preemption set aside {resource} on {node} for it, offered to it first"
            ),
            ReasonKind::NoNodes => f.write_str("no node is in service"),
            ReasonKind::NeverFits { asked, largest } => {
                write!(f, "no node in service could hold {asked} even when empty")?;
                if let Some((node, capability)) = largest {
                    write!(f, ": the largest, {node}, offers {capability}")?;
                }
                Ok(())
            }
            ReasonKind::AboveMaxContainerAllocation { queue, asked, max } => write!(
                f,
                "{asked} is larger than queue {queue}'s maxContainerAllocation {max} now in \
                 force (it was asked before a reload lowered it); it is still served"
            ),
            ReasonKind::QueueMaxResources {
                queue,
                usage,
                max,
                asked,
            } => write!(
                f,
                "queue {queue} would go over its maxResources {max}: it uses {usage}, and a \
                 container needs {asked} more"
            ),
            ReasonKind::StrictLocality { locations } => write!(
                f,
                "relaxLocality=false keeps it on {}",
                ListOf(locations.iter().collect())
            ),
            ReasonKind::LocalityDelay {
                allowed,
                next,
                opportunities,
                threshold,
                waited,
                delay,
                nodes_waiting,
            } => {
                match allowed {
                    None => f.write_str(
                        "delay scheduling: it has not been offered a node yet, and starts \
                         at node-local",
                    )?,
                    Some(level) => write!(
                        f,
                        "delay scheduling allows it only {level} placements for now"
                    )?,
                }
                if !nodes_waiting.is_empty() {
                    write!(
                        f,
                        "; {nodes_waiting} {} room but {} not local enough",
                        if nodes_waiting.total == 1 {
                            "has"
                        } else {
                            "have"
                        },
                        if nodes_waiting.total == 1 {
                            "is"
                        } else {
                            "are"
                        }
                    )?;
                }
                let from = allowed.unwrap_or(Locality::NodeLocal);
                let to = if from == Locality::NodeLocal {
                    Locality::RackLocal
                } else {
                    Locality::OffSwitch
                };
                if *next > from {
                    return write!(f, "; it relaxes to {next} at its next offer");
                }
                let mut ways = Vec::new();
                if let Some(threshold) = threshold {
                    ways.push(format!(
                        "after more than {} offers passed over ({opportunities} so far)",
                        trim_float(*threshold)
                    ));
                }
                if let Some(delay) = delay {
                    ways.push(format!(
                        "after waiting more than {delay} ({} so far)",
                        waited.unwrap_or(Duration::ZERO)
                    ));
                }
                if !ways.is_empty() {
                    write!(f, "; it relaxes to {to} {}", ways.join(" or "))?;
                }
                Ok(())
            }
            ReasonKind::HigherPriorityFirst { priority, nodes } => write!(
                f,
                "{nodes} {} room for it, but its ask at priority {priority} comes first \
                 there (tried first, or holding the node reserved), and this one waits",
                if nodes.total == 1 { "has" } else { "have" }
            ),
            ReasonKind::ReservedByOthers { nodes } => write!(
                f,
                "the nodes with room for it are reserved for other applications: {}",
                SampleOf(nodes, |(node, app): &(NodeId, AppId)| format!(
                    "{node} for {app}"
                ))
            ),
            ReasonKind::BlacklistedRoom { nodes } => {
                write!(f, "only nodes it blacklisted have room for it: {nodes}")
            }
            ReasonKind::NoRoom {
                free,
                usage,
                fair_share,
                below_fair_share,
                may_reserve,
            } => {
                write!(
                    f,
                    "no node it may use has room for it now (free in the cluster: {free}); \
                     it uses {usage}, and its fair share as of the last update pass is \
                     {fair_share}: "
                )?;
                if *below_fair_share {
                    f.write_str("below it, it is among the first served as containers end")?;
                    if *may_reserve {
                        f.write_str(", and may reserve a node that lacks room for it")?;
                    }
                    Ok(())
                } else {
                    f.write_str("at or above it, applications below theirs come first")
                }
            }
            ReasonKind::Room { nodes } => write!(
                f,
                "{} {} room for it now",
                SampleOf(nodes, |(node, locality): &(NodeId, Locality)| format!(
                    "{node} ({locality})"
                )),
                if nodes.total == 1 { "has" } else { "have" }
            ),
        }
    }
}

impl fmt::Display for LocationStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.state {
            LocationState::Unknown if self.is_rack => "no node in that rack",
            LocationState::Unknown => "no such node",
            LocationState::NoneNamed => "strict, and none of its nodes asked for",
            LocationState::OutOfService => "out of service",
            LocationState::Blacklisted => "blacklisted",
            LocationState::TooSmall => "too small",
            LocationState::Reserved => "reserved for another application",
            LocationState::Full => "full",
            LocationState::Room => "has room",
        };
        write!(f, "{} ({state})", self.name)
    }
}

impl<T: fmt::Display> fmt::Display for Sample<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        SampleOf(self, |t: &T| t.to_string()).fmt(f)
    }
}

/// A sample written with a function per item: `a, b and 3 more`.
struct SampleOf<'a, T, F>(&'a Sample<T>, F);

impl<T, F: Fn(&T) -> String> fmt::Display for SampleOf<'_, T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self.0.shown.iter().map(&self.1).collect();
        let more = self.0.total as usize - items.len().min(self.0.total as usize);
        f.write_str(&items.join(", "))?;
        if more > 0 {
            write!(f, " and {more} more")?;
        }
        Ok(())
    }
}

/// Items joined with commas.
struct ListOf<'a, T>(Vec<&'a T>);

impl<T: fmt::Display> fmt::Display for ListOf<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `2.5`, `5` (no trailing zeros), for a threshold of offers.
fn trim_float(v: f64) -> String {
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The types `used + more` takes over `limit`, as `memory 8192 of 8192 MB`.
fn over_limit(used: &Resource, more: &Resource, limit: &Resource) -> String {
    let parts: Vec<String> = ResourceType::ALL
        .iter()
        .filter(|ty| used.get(**ty).saturating_add(more.get(**ty)) > limit.get(**ty))
        .map(|ty| match ty {
            ResourceType::Memory => {
                format!("memory {} of {} MB", used.memory_mb(), limit.memory_mb())
            }
            ResourceType::Vcores => format!("vcores {} of {}", used.vcores(), limit.vcores()),
        })
        .collect();
    parts.join(", ")
}

fn final_status_name(status: FinalStatus) -> &'static str {
    match status {
        FinalStatus::Succeeded => "SUCCEEDED",
        FinalStatus::Failed => "FAILED",
        FinalStatus::Killed => "KILLED",
    }
}

impl ResourceManager {
    /// Why `app` is (or is not) getting containers at `now`, from the state
    /// as it is; `None` for an app the RM does not know (or forgot). An
    /// ended app's explanation says only that it ended. Read-only: calling
    /// it changes no decision.
    pub fn explain_app(&self, app: AppId, now: Time) -> Option<AppExplanation> {
        let record = self.apps.get(&app)?;
        let mut ex = AppExplanation {
            app,
            queue: record.queue.clone(),
            state: record.state,
            final_status: record.final_status,
            outlook: Outlook::HeldBack,
            summary: String::new(),
            reasons: Vec::new(),
            asks: Vec::new(),
        };
        let Some(h) = record.handle else {
            ex.outlook = Outlook::Ended;
            ex.summary = match record.final_status {
                Some(status) => format!(
                    "ended: {} with final status {}; nothing more is allocated to it",
                    record.state.yarn_name(),
                    final_status_name(status)
                ),
                None => format!(
                    "ended: {}; nothing more is allocated to it",
                    record.state.yarn_name()
                ),
            };
            return Some(ex);
        };
        let explainer = Explainer {
            rm: self,
            h,
            app: self.active(h),
            now: now.max(self.last_now),
        };
        explainer.explain(&mut ex);
        Some(ex)
    }
}

/// The read-only context of one explanation.
struct Explainer<'a> {
    rm: &'a ResourceManager,
    h: AppHandle,
    app: &'a ActiveApp,
    now: Time,
}

/// How a node stands for the app as a whole at its next heartbeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bar {
    /// Walked and offered to the app.
    Open,
    /// Draining or unhealthy: never walked.
    OutOfService,
    /// Reserved (validly) for another app: serves only that.
    ReservedFor(AppHandle),
    /// Reserved (validly) for this app's ask: serves only that ask.
    OwnReservation(SchedKey),
    /// The app blacklisted the node or its rack.
    Blacklisted,
    /// Not walked: it cannot hold the smallest container.
    NoOffers,
}

/// One node as the app's next offer of it would go.
struct NodeFacts<'a> {
    node: &'a Node,
    bar: Bar,
    /// The key the offer would go to, and at what level.
    chosen: Option<(SchedKey, Locality)>,
}

/// How one node stands for one ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NodeClass {
    OutOfService,
    TooSmall,
    /// Strict locality (or the location asked) rules it out.
    Excluded,
    Blacklisted {
        room: bool,
    },
    Reserved {
        for_app: AppHandle,
        room: bool,
    },
    /// No room for the container; `walked` when the node is still offered
    /// (it can hold the smallest container), so the app could reserve it.
    Full {
        walked: bool,
    },
    /// Room, but the level allowed does not reach it yet.
    Waits,
    /// Room, but an earlier ask of the app is tried there first.
    Behind(Priority),
    Room(Locality),
}

impl Explainer<'_> {
    fn explain(&self, ex: &mut AppExplanation) {
        let tree = &self.rm.tree;
        let h = self.h;
        if !tree.app_is_runnable(h) {
            let waits = tree.running_app_waits(h);
            if waits.is_empty() {
                ex.reasons.push(blocking(ReasonKind::NotYetWoken));
            }
            for wait in waits {
                let (limit, max) = match wait.reason {
                    WaitReason::QueueLimit { queue, limit } => {
                        (RunningAppLimit::Queue(queue), limit)
                    }
                    WaitReason::UserLimit { user, limit } => (
                        RunningAppLimit::User {
                            user,
                            from_default: wait.from_default,
                        },
                        limit,
                    ),
                };
                ex.reasons.push(blocking(ReasonKind::RunningAppLimit {
                    limit,
                    running: wait.running,
                    max,
                    position: wait.position,
                    waiting: wait.waiting,
                }));
            }
            ex.outlook = Outlook::HeldBack;
            ex.summary = summary(ex);
            return;
        }
        if self.app.finishing {
            ex.reasons.push(blocking(ReasonKind::Finishing));
            ex.outlook = Outlook::HeldBack;
            ex.summary = summary(ex);
            return;
        }
        let awaiting_am = !tree.app_am_started(h) && !tree.app_is_unmanaged(h);
        let has_asks = self.app.requests.first_key().is_some();
        if awaiting_am && has_asks && !tree.can_start_am(h) {
            ex.reasons.push(blocking(self.am_share()));
        }
        if !has_asks && !self.app.am_registered {
            ex.reasons
                .push(blocking(ReasonKind::AwaitingAmRegistration {
                    am_node: self.am_node(),
                }));
        }
        self.context(&mut ex.reasons);
        if has_asks {
            let nodes = self.node_facts();
            for (key, state) in self.app.requests.keys.iter() {
                if state.any_count() == 0 {
                    continue;
                }
                ex.asks.push(AskExplanation {
                    priority: key.priority,
                    capability: key.capability,
                    containers: state.any_count(),
                    is_am: awaiting_am,
                    reasons: self.ask_reasons(key, state, &nodes),
                });
            }
        }
        let app_blocked = ex.reasons.iter().any(|r| r.blocking);
        ex.outlook = if !has_asks && !self.app.am_registered {
            Outlook::AwaitingAm
        } else if !has_asks {
            Outlook::NothingAsked
        } else if !app_blocked && ex.asks.iter().any(AskExplanation::has_room) {
            Outlook::Servable
        } else {
            Outlook::HeldBack
        };
        ex.summary = summary(ex);
    }

    /// The AM share check that failed, with its numbers.
    fn am_share(&self) -> ReasonKind {
        let tree = &self.rm.tree;
        let leaf = tree.app_queue(self.h);
        let max_am_share = match tree.queue_settings(leaf).max_am_share {
            AmShare::Fraction(fraction) => fraction,
            AmShare::Disabled => -1.0,
        };
        ReasonKind::AmShare {
            queue: tree.queue_path(leaf).clone(),
            am_usage: tree.am_usage(leaf),
            am_resource: self
                .rm
                .apps
                .get(&self.app.id)
                .and_then(|r| r.am_resource)
                .unwrap_or(Resource::ZERO),
            limit: tree.am_limit(leaf).unwrap_or(Resource::UNBOUNDED),
            max_am_share,
            fair_share: tree.queue_fair_share(leaf),
        }
    }

    /// The node its AM container runs on, if it has one.
    fn am_node(&self) -> Option<NodeId> {
        let record = self.rm.apps.get(&self.app.id)?;
        let container = self.rm.find_container(&record.am_container?)?;
        Some(
            self.rm
                .nodes
                .get(self.rm.container(container).node)
                .id
                .clone(),
        )
    }

    /// Context for every ask: reservations, room set aside, the blacklist,
    /// nodes out of service.
    fn context(&self, reasons: &mut Vec<Reason>) {
        let nodes = &self.rm.nodes;
        for idx in &self.app.reservations {
            let node = nodes.get(*idx);
            let Some(res) = node.reservation.filter(|r| r.app == self.h) else {
                continue;
            };
            reasons.push(context(ReasonKind::Reservation {
                node: node.id.clone(),
                priority: res.priority,
                resource: res.resource,
                fits_now: res.resource.fits_in(&node.available()),
                valid: self.rm.reservation_is_valid(*idx, &res),
            }));
        }
        for idx in &self.app.set_aside_on {
            let node = nodes.get(*idx);
            if let Some(resource) = node.preempted_for.get(&self.h) {
                reasons.push(context(ReasonKind::RoomSetAside {
                    node: node.id.clone(),
                    resource: *resource,
                }));
            }
        }
        if !self.app.blacklist.is_empty() {
            let mut excluded = Sample::default();
            for idx in nodes.indices() {
                if self.blacklisted(nodes.get(idx)) {
                    excluded.push(nodes.get(idx).id.clone());
                }
            }
            reasons.push(context(ReasonKind::Blacklist {
                entries: self.app.blacklist.iter().cloned().collect(),
                nodes: excluded,
            }));
        }
        let mut out = Sample::default();
        for idx in nodes.indices() {
            let node = nodes.get(idx);
            if node.state != NodeState::Running {
                out.push((node.id.clone(), node.state));
            }
        }
        if !out.is_empty() {
            reasons.push(context(ReasonKind::NodesOutOfService { nodes: out }));
        }
    }

    fn blacklisted(&self, node: &Node) -> bool {
        self.app.blacklist.contains(&node.name) || self.app.blacklist.contains(&node.rack)
    }

    /// Every registered node, by id, as the app's next offer of it would go:
    /// the node's heartbeat (its reservation, whether it is walked), then
    /// `decide`'s key loop, without counting the offer.
    fn node_facts(&self) -> Vec<NodeFacts<'_>> {
        let rm = self.rm;
        let min = rm.settings.scheduler.min_allocation();
        let mut facts = Vec::new();
        for idx in rm.nodes.indices() {
            let node = rm.nodes.get(idx);
            let reservation = node.reservation.filter(|r| rm.reservation_is_valid(idx, r));
            let bar = if node.state != NodeState::Running {
                Bar::OutOfService
            } else if let Some(r) = reservation {
                if r.app == self.h {
                    Bar::OwnReservation(r.key)
                } else {
                    Bar::ReservedFor(r.app)
                }
            } else if self.blacklisted(node) {
                Bar::Blacklisted
            } else if !takes_offers(node.available(), &min) {
                // A reservation no longer valid is dropped first, so only
                // the smallest container's room decides.
                Bar::NoOffers
            } else {
                Bar::Open
            };
            let chosen = match bar {
                Bar::Open => self.chosen_key(node),
                Bar::OwnReservation(key) => self.app.requests.keys.get(&key).and_then(|state| {
                    level_on_node(state, node, self.level_at_next_offer(state)).map(|l| (key, l))
                }),
                _ => None,
            };
            facts.push(NodeFacts { node, bar, chosen });
        }
        facts
    }

    /// `decide`'s key loop on `node`: the first key that applies there, and
    /// its level.
    fn chosen_key(&self, node: &Node) -> Option<(SchedKey, Locality)> {
        let tree = &self.rm.tree;
        let leaf = tree.app_queue(self.h);
        for (key, state) in self.app.requests.keys.iter() {
            if !has_container_for_node(key, state, node)
                || !tree.fits_in_max_share(leaf, key.capability)
            {
                continue;
            }
            if let Some(level) = level_on_node(state, node, self.level_at_next_offer(state)) {
                return Some((*key, level));
            }
        }
        None
    }

    /// The locality level a key is offered its next node at.
    fn level_at_next_offer(&self, state: &KeyState) -> Locality {
        let params = self.rm.params();
        locality_step(
            state,
            state.opportunities + 1,
            params.relaxation,
            params.n_nodes,
            self.now,
        )
        .level()
    }

    fn classify(&self, key: &SchedKey, state: &KeyState, facts: &NodeFacts<'_>) -> NodeClass {
        let node = facts.node;
        if facts.bar == Bar::OutOfService {
            return NodeClass::OutOfService;
        }
        if !key.capability.fits_in(&node.capability) {
            return NodeClass::TooSmall;
        }
        let own_reservation = facts.bar == Bar::OwnReservation(*key);
        if !own_reservation && !has_container_for_node(key, state, node) {
            return NodeClass::Excluded;
        }
        let room = key.capability.fits_in(&node.available());
        match facts.bar {
            Bar::Blacklisted => return NodeClass::Blacklisted { room },
            Bar::ReservedFor(for_app) => return NodeClass::Reserved { for_app, room },
            Bar::OwnReservation(other) if other != *key => {
                return if room {
                    NodeClass::Behind(other.priority)
                } else {
                    NodeClass::Full { walked: false }
                };
            }
            Bar::NoOffers => return NodeClass::Full { walked: false },
            _ => {}
        }
        if !room {
            return NodeClass::Full {
                walked: facts.bar == Bar::Open,
            };
        }
        let Some(level) = level_on_node(state, node, self.level_at_next_offer(state)) else {
            return if level_on_node(state, node, Locality::OffSwitch).is_some() {
                NodeClass::Waits
            } else {
                NodeClass::Excluded
            };
        };
        match facts.chosen {
            Some((chosen, _)) if chosen != *key => NodeClass::Behind(chosen.priority),
            _ => NodeClass::Room(level),
        }
    }

    fn ask_reasons(
        &self,
        key: &SchedKey,
        state: &KeyState,
        nodes: &[NodeFacts<'_>],
    ) -> Vec<Reason> {
        let rm = self.rm;
        let tree = &rm.tree;
        let leaf = tree.app_queue(self.h);
        let mut reasons = Vec::new();
        let in_service: Vec<&NodeFacts<'_>> = nodes
            .iter()
            .filter(|n| n.bar != Bar::OutOfService)
            .collect();
        if in_service.is_empty() {
            reasons.push(blocking(ReasonKind::NoNodes));
            return reasons;
        }
        if !in_service
            .iter()
            .any(|n| key.capability.fits_in(&n.node.capability))
        {
            let largest = in_service
                .iter()
                .max_by(|a, b| {
                    a.node
                        .capability
                        .values()
                        .cmp(&b.node.capability.values())
                        .then_with(|| b.node.id.cmp(&a.node.id))
                })
                .map(|n| (n.node.id.clone(), n.node.capability));
            reasons.push(blocking(ReasonKind::NeverFits {
                asked: key.capability,
                largest,
            }));
            return reasons;
        }
        let max_container = tree.max_container_allocation(leaf);
        if !key.capability.fits_in(&max_container) {
            reasons.push(context(ReasonKind::AboveMaxContainerAllocation {
                queue: tree.queue_path(leaf).clone(),
                asked: key.capability,
                max: max_container,
            }));
        }
        if let Some(q) = tree.max_share_blocker(leaf, key.capability) {
            reasons.push(blocking(ReasonKind::QueueMaxResources {
                queue: tree.queue_path(q).clone(),
                usage: tree.queue_usage(q),
                max: tree.queue_settings(q).max_share,
                asked: key.capability,
            }));
            return reasons;
        }
        let mut room = Sample::default();
        let mut waits = Sample::default();
        let mut behind: Option<(Priority, Sample<NodeId>)> = None;
        let mut reserved = Sample::default();
        let mut blacklisted_room = Sample::default();
        let mut n_full = 0u32;
        let mut n_reservable = 0u32;
        for facts in &in_service {
            let id = || facts.node.id.clone();
            match self.classify(key, state, facts) {
                NodeClass::Room(level) => room.push((id(), level)),
                NodeClass::Waits => waits.push(id()),
                NodeClass::Behind(priority) => behind
                    .get_or_insert_with(|| (priority, Sample::default()))
                    .1
                    .push(id()),
                NodeClass::Reserved {
                    for_app,
                    room: true,
                } => reserved.push((id(), tree.app_id(for_app))),
                NodeClass::Blacklisted { room: true } => blacklisted_room.push(id()),
                NodeClass::Full { walked } => {
                    n_full += 1;
                    n_reservable += u32::from(walked);
                }
                NodeClass::Reserved { room: false, .. }
                | NodeClass::Blacklisted { room: false } => n_full += 1,
                NodeClass::OutOfService | NodeClass::TooSmall | NodeClass::Excluded => {}
            }
        }
        let held = room.is_empty();
        if is_strict(state) {
            reasons.push(Reason {
                blocking: held,
                kind: ReasonKind::StrictLocality {
                    locations: self.named_locations(key, state),
                },
            });
        }
        if let Some(delay) = self.delay(state, waits.clone()) {
            reasons.push(Reason {
                blocking: held && !waits.is_empty(),
                kind: delay,
            });
        }
        if !held {
            reasons.push(context(ReasonKind::Room { nodes: room }));
            return reasons;
        }
        let mut explained = !waits.is_empty();
        if let Some((priority, nodes)) = behind {
            reasons.push(blocking(ReasonKind::HigherPriorityFirst {
                priority,
                nodes,
            }));
            explained = true;
        }
        if !reserved.is_empty() {
            reasons.push(blocking(ReasonKind::ReservedByOthers { nodes: reserved }));
            explained = true;
        }
        if !blacklisted_room.is_empty() {
            reasons.push(blocking(ReasonKind::BlacklistedRoom {
                nodes: blacklisted_room,
            }));
            explained = true;
        }
        // A strict ask whose locations are all unknown or too small is
        // explained by its locations; otherwise no node it may use has room.
        if !explained && (n_full > 0 || !is_strict(state)) {
            let usage = tree.app_usage(self.h);
            let below = below_fair_share(tree, self.h);
            let threshold = rm.params().reservation_threshold;
            reasons.push(blocking(ReasonKind::NoRoom {
                free: tree.cluster_available(),
                usage,
                fair_share: tree.app_fair_share(self.h),
                below_fair_share: below,
                may_reserve: below
                    && n_reservable > 0
                    && reaches_reservation_threshold(tree, self.h, &key.capability, &threshold),
            }));
        }
        reasons
    }

    /// The delay-scheduling state of a key that has something more local
    /// than anywhere to wait for, if delay scheduling is on and its level
    /// is not already off-switch.
    fn delay(&self, state: &KeyState, nodes_waiting: Sample<NodeId>) -> Option<ReasonKind> {
        let params = self.rm.params();
        let LocalityRelaxation::Delayed {
            opportunities: by_count,
            time,
        } = params.relaxation
        else {
            return None;
        };
        if state.allowed == Some(Locality::OffSwitch) || state.unique_locations() <= 1 {
            return None;
        }
        let at_node = state.allowed.is_none_or(|l| l == Locality::NodeLocal);
        Some(ReasonKind::LocalityDelay {
            allowed: state.allowed,
            next: self.level_at_next_offer(state),
            opportunities: state.opportunities,
            threshold: by_count.map(|t| {
                let fraction = if at_node { t.node.get() } else { t.rack.get() };
                f64::from(params.n_nodes) * fraction
            }),
            waited: state.last_scheduled.map(|since| self.now.since(since)),
            delay: time.map(|t| if at_node { t.node } else { t.rack }),
            nodes_waiting,
        })
    }

    /// Each host and rack a strict key names, and how it stands for it.
    fn named_locations(&self, key: &SchedKey, state: &KeyState) -> Vec<LocationStatus> {
        let nodes = &self.rm.nodes;
        let mut out = Vec::new();
        for (name, ask) in &state.racks {
            if ask.count == 0 {
                continue;
            }
            let in_rack: Vec<NodeIdx> = nodes
                .racks
                .get(name)
                .map(|set| set.iter().copied().collect())
                .unwrap_or_default();
            // Within a strict rack only the nodes asked for by name count.
            let members: Vec<NodeIdx> = if ask.relax_locality {
                in_rack.clone()
            } else {
                in_rack
                    .iter()
                    .copied()
                    .filter(|idx| state.node_count(&nodes.get(*idx).name) > 0)
                    .collect()
            };
            let state = if in_rack.is_empty() {
                LocationState::Unknown
            } else if self.app.blacklist.contains(name) {
                LocationState::Blacklisted
            } else if members.is_empty() {
                LocationState::NoneNamed
            } else {
                self.best_state(key, &members)
            };
            out.push(LocationStatus {
                name: name.clone(),
                is_rack: true,
                state,
            });
        }
        for (name, ask) in &state.nodes {
            if ask.count == 0 || is_rack_name(name) {
                continue;
            }
            out.push(LocationStatus {
                name: name.clone(),
                is_rack: false,
                state: self.best_state(key, nodes.by_name(name)),
            });
        }
        out
    }

    /// How the best of `members` stands for a container of the key's size.
    fn best_state(&self, key: &SchedKey, members: &[NodeIdx]) -> LocationState {
        let rm = self.rm;
        let min = rm.settings.scheduler.min_allocation();
        members
            .iter()
            .map(|idx| {
                let node = rm.nodes.get(*idx);
                let reserved_for_other = node
                    .reservation
                    .is_some_and(|r| r.app != self.h && rm.reservation_is_valid(*idx, &r));
                if node.state != NodeState::Running {
                    LocationState::OutOfService
                } else if self.blacklisted(node) {
                    LocationState::Blacklisted
                } else if !key.capability.fits_in(&node.capability) {
                    LocationState::TooSmall
                } else if !key.capability.fits_in(&node.available())
                    || !min.fits_in(&node.available())
                {
                    LocationState::Full
                } else if reserved_for_other {
                    LocationState::Reserved
                } else {
                    LocationState::Room
                }
            })
            .max()
            .unwrap_or(LocationState::Unknown)
    }
}

/// The key keeps to locations it names: anywhere or one of its racks says
/// `relaxLocality=false` (a host's flag has no effect, as in YARN).
fn is_strict(state: &KeyState) -> bool {
    state.any.is_some_and(|a| !a.relax_locality)
        || state
            .racks
            .values()
            .any(|a| a.count > 0 && !a.relax_locality)
}

fn blocking(kind: ReasonKind) -> Reason {
    Reason {
        blocking: true,
        kind,
    }
}

fn context(kind: ReasonKind) -> Reason {
    Reason {
        blocking: false,
        kind,
    }
}

/// The summary line: the first blocking reason (the application's, then
/// each ask's in the order they are tried) when nothing can be served, or
/// why nothing holds it back.
fn summary(ex: &AppExplanation) -> String {
    match ex.outlook {
        Outlook::Ended => return String::new(),
        Outlook::AwaitingAm => {
            return "waiting for its application master to register".to_owned();
        }
        Outlook::NothingAsked => {
            return "not held back: it asks for no containers now".to_owned();
        }
        Outlook::Servable => {
            let Some(ask) = ex.asks.iter().find(|a| a.has_room()) else {
                return "not held back".to_owned();
            };
            let nodes = ask
                .reasons
                .iter()
                .find_map(|r| match &r.kind {
                    ReasonKind::Room { nodes } => Some(nodes.to_string_with_locality()),
                    _ => None,
                })
                .unwrap_or_default();
            return format!(
                "not held back: {nodes} can take its {} now, at the node's next heartbeat \
                 unless applications ahead of it in policy order take the room first",
                ask.label()
            );
        }
        Outlook::HeldBack => {}
    }
    if let Some(r) = ex.reasons.iter().find(|r| r.blocking) {
        return format!("waiting: {}", r.kind.short());
    }
    for ask in &ex.asks {
        if let Some(r) = ask.reasons.iter().find(|r| r.blocking) {
            return format!("waiting ({}): {}", ask.label(), r.kind.short());
        }
    }
    "waiting".to_owned()
}

impl Sample<(NodeId, Locality)> {
    fn to_string_with_locality(&self) -> String {
        SampleOf(self, |(node, locality): &(NodeId, Locality)| {
            format!("{node} ({locality})")
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests;
