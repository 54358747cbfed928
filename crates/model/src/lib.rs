//! Weft's vocabulary, shared by every other crate: [`Resource`] vectors and
//! their arithmetic, the allocation file's resource syntax ([`ResourceSpec`]),
//! YARN's ids ([`AppId`], [`AttemptId`], [`ContainerId`], [`NodeId`]),
//! [`QueuePath`], priorities, and logical [`Time`].
//!
//! This crate knows nothing about queues as a tree, nodes as machines or
//! scheduling: it is the leaf of the dependency graph. It reads no clock and
//! does no I/O.
//!
//! ```
//! use weft_model::{QueuePath, Resource, SpecKind, parse_resource};
//!
//! let spec = parse_resource("50% memory, 25% cpu", SpecKind::Max).unwrap();
//! assert_eq!(spec.resolve(&Resource::new(8192, 8)), Resource::new(4096, 2));
//! assert_eq!(QueuePath::parse("eng.batch").unwrap().as_str(), "root.eng.batch");
//! ```

mod ids;
mod queue_path;
mod resource;
mod resource_spec;
mod time;

pub use ids::{AppId, AppPriority, AttemptId, ContainerId, IdParseError, NodeId, Priority};
pub use queue_path::{QueuePath, QueuePathError, sanitize_queue_name};
pub use resource::{N_RESOURCE_TYPES, Resource, ResourceType, compare_share_vectors, ratio};
pub use resource_spec::{ResourceParseError, ResourceSpec, SpecKind, parse_resource};
pub use time::{Duration, DurationParseError, Time};
