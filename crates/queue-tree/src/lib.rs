//! The queue side of the Fair Scheduler, independent of nodes, I/O and time:
//! the allocation file ([`alloc_file`] → [`AllocConfig`]), the site settings
//! ([`site`]), the live queue tree ([`QueueTree`]: parent queues, leaf queues
//! and app schedulables as one composite), the policies ([`Policy`]) and their
//! orderings, fair shares ([`fair_share`]), placement ([`placement`]),
//! running-app limits and ACLs ([`Acl`]), and a read-only snapshot for display.
//!
//! Nodes, containers and requests belong to `weft-core`, which drives this
//! crate: it tells the tree about usage and pending work and asks it in which
//! order to offer a node to apps.

pub mod acl;
pub mod alloc_file;
mod apps;
pub mod config;
pub mod fair_share;
pub mod groups;
mod invariants;
mod limits;
mod ordering;
pub mod placement;
pub mod policy;
mod shares;
pub mod site;
mod snapshot;
mod tree;

pub use acl::{Acl, QueueAccess};
pub use alloc_file::{
    AllocFileError, AllocFileProblem, AllocFileWarning, LoadedAllocConfig, ProblemKind,
    WarningKind, parse_alloc_file,
};
pub use apps::{AddAppError, AddedApp, MoveAppError, NewApp, Visit, WaitReason};
pub use config::{AllocConfig, AmShare, MAX_QUEUE_DEPTH, QueueConfig, QueueKind};
pub use groups::{
    GroupFile, GroupFileError, GroupFileProblem, GroupMapping, NameKind, NoGroups, StaticGroups,
};
pub use invariants::InvariantViolation;
pub use limits::RunningAppWait;
pub use placement::{
    ContinueReason, ExistingQueue, Placement, PlacementPolicy, PlacementRejection,
    PlacementRequest, PlacementRule, QueueLookup, RuleKind, SkippedRule,
};
pub use policy::Policy;
pub use snapshot::QueueSnapshot;
pub use tree::{
    AppHandle, ConfigApplied, QueueCreateError, QueueId, QueueSettings, QueueTree, TreeSettings,
};
