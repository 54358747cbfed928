//! The ResourceManager as a deterministic state machine: nodes, applications,
//! requests and containers, and the heartbeat-driven assignment that decides
//! every container. No I/O, no clock, no threads: every input carries `now`,
//! every decision comes back as data, and [`ResourceManager::next_deadline`]
//! says when to call again.
//!
//! The queue side (hierarchy, policies, fair shares, placement, limits) is
//! `weft-queue-tree`'s; this crate owns what runs where.
//!
//! A driver's loop, in full:
//!
//! ```
//! use weft_core::{CoreSettings, Input, NodeRegistration, NodeHeartbeat, Reply, ResourceManager, Submission};
//! use weft_model::{AppPriority, NodeId, Resource, Time};
//! use weft_queue_tree::AllocConfig;
//!
//! let mut rm = ResourceManager::new(AllocConfig::default(), CoreSettings::default(), Time::ZERO);
//! let node: NodeId = "host1:8041".parse().unwrap();
//! rm.handle(Time::ZERO, Input::NodeRegistered(NodeRegistration {
//!     node: node.clone(),
//!     rack: "/rack1".into(),
//!     capability: Resource::new(8192, 8),
//!     http_address: "host1:8042".into(),
//!     running: vec![],
//! }));
//! let Reply::NewApplication(new) = rm.handle(Time::ZERO, Input::NewApplication).reply else { unreachable!() };
//! rm.handle(Time::ZERO, Input::AppSubmitted(Submission {
//!     app: new.app,
//!     user: "alice".into(),
//!     groups: vec![],
//!     queue: Some("default".into()),
//!     priority: AppPriority(0),
//!     am_resource: Some(Resource::new(1024, 1)),
//!     name: "pi".into(),
//!     app_type: "MAPREDUCE".into(),
//!     tags: vec![],
//!     lifetime: None,
//!     max_attempts: None,
//! }));
//! // The node's next heartbeat places the application master's container.
//! let out = rm.handle(Time::from_millis(1000), Input::NodeHeartbeat(NodeHeartbeat { node, statuses: vec![], unhealthy: None }));
//! let Reply::NodeHeartbeat(Ok(reply)) = out.reply else { unreachable!() };
//! assert_eq!(reply.allocated.len(), 1);
//! assert!(reply.allocated[0].is_am);
//! // Call again no later than this, even if nothing happens.
//! assert!(rm.next_deadline().is_some());
//! rm.check_invariants().unwrap();
//! ```
//!
//! `Time` counts from an origin the driver picks, and the core's clock may
//! start anywhere: `ResourceManager::new` takes the first `now`. A driver
//! that takes apps back after a restart (`Input::AppRecovered`,
//! `Input::EndedAppRecovered`) passes their submission, launch and finish
//! times on the same clock, so it picks an origin no later than the
//! earliest of them and starts the core that far above zero.

mod am_liveness;
mod assign;
mod calc;
mod containers;
mod decommission;
mod explain;
mod health;
mod input;
mod invariants;
mod lifecycle;
mod lifetime;
mod node_events;
mod node_updates;
mod nodes;
mod output;
mod preemption;
mod requests;
mod resize;
mod rm;
mod settings;
mod view;

pub use explain::{
    AppExplanation, AskExplanation, LocationState, LocationStatus, Outlook, Reason, ReasonKind,
    RunningAppLimit, Sample,
};
pub use input::{
    ANY, AllocateRequest, Ask, ContainerState, ContainerStatus, Drain, EndedApp, FinalStatus,
    Input, NodeHeartbeat, NodeRegistration, RecoveredApp, RecoveredContainer, Submission,
};
pub use invariants::CoreInvariantViolation;
pub use lifecycle::ask_anywhere;
pub use lifetime::LIFETIME_EXCEEDED;
pub use output::{
    AllocateError, AllocateReply, AllocatedContainer, AppError, AppState, CompletedContainer,
    EndedAppError, Event, HeartbeatReply, LifetimeError, Locality, MoveError, NewApplicationReply,
    NodeError, NodeState, Output, PreemptionMessage, RegisterReply, Reply, StopReason, SubmitError,
    SubmitReply, exit_status,
};
pub use rm::{AppRecord, Counters, InactiveNode, ResourceManager};
pub use settings::CoreSettings;
pub use view::{AppReport, ClusterMetrics, ContainerReport, NodeReport, QueueReport};
