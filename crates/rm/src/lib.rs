//! Weft's ResourceManager service: the shell around the pure `weft-core`.
//!
//! One tokio task owns the core (`actor`); axum handlers (`http`) turn
//! requests into commands and await the reply, and serve the web UI's
//! pages (`http::ui`); the real clock becomes the core's `Time` in one
//! place (`clock`); GETs read published snapshots (`view`). Around that:
//! configuration loading (`config`), users' groups from the operating
//! system or a file (`groups`), the include and exclude lists of
//! nodes (`hosts`), the sizes operators give nodes (`dynamic_resources`),
//! the racks the RM resolves for nodes with Hadoop's topology mappings
//! (`topology`), what nodes report they actually use (`utilization`),
//! the wire formats (`dto`, with the ISO 8601 times of the timeout API in
//! `iso8601`),
//! Prometheus metrics (`metrics`), live reload of the allocation
//! file (`reload`), the decision log (`event_log`), the audit log of who asked
//! for which change (`audit`), both following log rotation (`log_file`),
//! the process's log levels changed while it runs (`log_levels`, behind a
//! trait the binary implements over its logging filter),
//! the optional state store
//! that lets apps and drains survive a restart (`state_store`), the
//! container tokens that let only a container's AM start it and the AM
//! tokens that let only an attempt's AM speak for it (`token`), the node
//! secret that lets only the cluster's nodes speak as nodes
//! (`node_secret`), start
//! and shutdown (`server`), and the client side used by the `weft` command
//! (`client`, `cli`, `load`).
//!
//! Scheduling decisions are never made here: this crate only moves data
//! between the network and the core.

pub mod access;
pub mod actor;
pub mod audit;
pub mod cli;
pub mod client;
pub mod clock;
pub mod config;
pub mod dto;
pub mod dynamic_resources;
mod event_log;
pub mod groups;
pub mod hosts;
pub mod http;
pub mod iso8601;
pub mod load;
mod log_file;
pub mod log_levels;
pub mod metrics;
pub mod node_secret;
pub mod reload;
pub mod server;
pub mod state_store;
#[cfg(test)]
mod testing;
pub mod tls;
pub mod token;
pub mod topology;
pub mod utilization;
pub mod view;

pub use actor::{RmError, RmHandle};
pub use clock::Clock;
pub use config::{ConfSource, ConfigError, RmConfig, ServiceSettings};
pub use http::error::ApiError;
pub use server::{Embedding, ServeError, Service, StartError};
