//! Weft's NodeManager agent and its distributed-shell client.
//!
//! The agent (`agent::NodeManager`) registers a node with the RM,
//! heartbeats, and runs the containers the RM allocates there as real
//! processes (`launch`): each in its own process group, with its command,
//! environment and working directory, stdout and stderr to files. It
//! enforces memory limits through cgroups v2 where it may (`cgroup`) and by
//! polling each container's resident memory otherwise (`memory`), measures
//! what the machine and its containers use for the RM (`utilization`), stops
//! containers when the RM says so, reports their exits, re-registers with
//! its running containers after an RM restart, and serves the node's HTTP
//! API (`http`, `dto`): its containers, their logs, and the start call
//! through which AMs launch the containers the RM allocated them; and its
//! metrics (`metrics`: Prometheus text and Hadoop's `NodeManagerMetrics`
//! JMX bean, each agent with figures of its own). A node health script
//! (`health`) may report the node unhealthy, which the agent tells the RM
//! with every heartbeat.
//!
//! The distributed shell (`distributed_shell`) is the other half of a
//! working cluster: a client that submits an app, acts as its unmanaged
//! AM, runs a command in each of its containers and reports progress.
//!
//! Scheduling is the RM's (`weft-rm`, `weft-core`); the wire formats of the
//! RM's protocols are `weft_rm::dto`'s; the command line is the `weft`
//! binary's.

pub mod agent;
pub mod cgroup;
pub mod config;
pub mod distributed_shell;
pub mod dto;
pub mod health;
pub mod http;
pub mod launch;
pub mod memory;
pub mod metrics;
pub mod utilization;

pub use agent::{AgentEnd, AgentHandle, NmStartError, NodeManager, StartContainerError};
pub use config::{HealthScript, MemoryEnforcement, NmConfig};
