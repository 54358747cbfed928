//! What a node agent is started with (`NmConfig`), its defaults, and how
//! its identity (node id and advertised web address) follows from where it
//! listens.
//!
//! Reading flags is the `weft` command's job; this module only holds values
//! and checks them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use weft_model::{NodeId, Resource};

/// How a container's memory limit is enforced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MemoryEnforcement {
    /// cgroups v2 when the agent's own cgroup can be delegated to its
    /// containers, else polling the process trees' RSS.
    #[default]
    Auto,
    /// cgroups v2 under this directory, which must already have the `memory`
    /// and `cpu` controllers enabled for its children (a delegated cgroup).
    Cgroup(PathBuf),
    /// Poll each container's process tree in `/proc` and kill it when its
    /// resident memory exceeds the limit (YARN's memory monitor).
    RssPolling,
}

/// A node agent's settings.
#[derive(Clone, Debug)]
pub struct NmConfig {
    /// The ResourceManager, `http://host:port`.
    pub rm: String,
    /// The node id (`host:port`); `None`: the advertised web address.
    pub node_id: Option<NodeId>,
    /// The `host:port` AMs use to reach this node's HTTP API; `None`: this
    /// machine's host name (or the listening address when it is a specific
    /// one) and the port listened on.
    pub http_address: Option<String>,
    /// Network location, for example `/rack1`.
    pub rack: String,
    /// What the node offers: memory in MB and vcores.
    pub capability: Resource,
    /// Where containers run and write their logs
    /// (`apps/<app>/<container>/` and `logs/<app>/<container>/`).
    pub work_dir: PathBuf,
    /// How a container's memory limit is enforced.
    pub memory_enforcement: MemoryEnforcement,
    /// How often the memory monitor samples containers (YARN's
    /// `yarn.nodemanager.container-monitor.interval-ms`, 3 s).
    pub monitor_interval: Duration,
    /// Time between SIGTERM and SIGKILL when stopping a container (YARN's
    /// `yarn.nodemanager.sleep-delay-before-sigkill.ms`, 250 ms).
    pub kill_grace: Duration,
    /// The longest a call to the RM may take before it counts as failed.
    pub rm_timeout: Duration,
    /// Completed containers kept for the HTTP API (their logs stay on disk).
    pub completed_kept: usize,
}

impl NmConfig {
    /// Settings for a node of `capability` reporting to `rm`, working in
    /// `work_dir`, with every other setting at its default.
    pub fn new(
        rm: impl Into<String>,
        capability: Resource,
        work_dir: impl Into<PathBuf>,
    ) -> NmConfig {
        NmConfig {
            rm: rm.into(),
            node_id: None,
            http_address: None,
            rack: "/default-rack".to_owned(),
            capability,
            work_dir: work_dir.into(),
            memory_enforcement: MemoryEnforcement::Auto,
            monitor_interval: Duration::from_millis(3000),
            kill_grace: Duration::from_millis(250),
            rm_timeout: Duration::from_secs(10),
            completed_kept: 1000,
        }
    }
}

/// Why a node cannot start with these settings.
#[derive(Debug, thiserror::Error)]
pub enum NmConfigError {
    /// The capability is empty.
    #[error("invalid node capability {capability}: a node needs memory and vcores")]
    EmptyCapability {
        /// What was given.
        capability: Resource,
    },
    /// The advertised address is not `host:port`.
    #[error("invalid node address {address:?}: {why}")]
    Address {
        /// What was given or derived.
        address: String,
        /// What is wrong.
        why: String,
    },
    /// The host name could not be read.
    #[error("cannot read this machine's host name ({0}); pass --http-address host:port")]
    HostName(String),
}

/// The node's identity once it listens on `local`: its node id and the
/// address it advertises.
pub fn identity(config: &NmConfig, local: SocketAddr) -> Result<(NodeId, String), NmConfigError> {
    if config.capability.memory_mb() == 0 || config.capability.vcores() == 0 {
        return Err(NmConfigError::EmptyCapability {
            capability: config.capability,
        });
    }
    let http_address = match &config.http_address {
        Some(a) => a.trim().to_owned(),
        None if local.ip().is_unspecified() => {
            let host =
                nix::unistd::gethostname().map_err(|e| NmConfigError::HostName(e.to_string()))?;
            format!("{}:{}", host.to_string_lossy(), local.port())
        }
        None if local.ip().is_loopback() => format!("localhost:{}", local.port()),
        None => local.to_string(),
    };
    let node_id = match &config.node_id {
        Some(n) => n.clone(),
        None => http_address
            .parse()
            .map_err(|e: weft_model::IdParseError| NmConfigError::Address {
                address: http_address.clone(),
                why: e.to_string(),
            })?,
    };
    Ok((node_id, http_address))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> NmConfig {
        NmConfig::new("http://rm:8088", Resource::new(4096, 4), "/tmp/nm")
    }

    #[test]
    fn identity_follows_the_listening_address() {
        let (id, http) = identity(&config(), "127.0.0.1:4242".parse().unwrap()).unwrap();
        assert_eq!(
            (id.to_string(), http.as_str()),
            ("localhost:4242".to_owned(), "localhost:4242")
        );
        let (id, _) = identity(&config(), "10.1.2.3:8042".parse().unwrap()).unwrap();
        assert_eq!(id.to_string(), "10.1.2.3:8042");
        let mut c = config();
        c.http_address = Some("nm1:8042".into());
        let (id, http) = identity(&c, "0.0.0.0:8042".parse().unwrap()).unwrap();
        assert_eq!(
            (id.to_string(), http.as_str()),
            ("nm1:8042".to_owned(), "nm1:8042")
        );
    }

    #[test]
    fn bad_settings_are_named() {
        let mut c = config();
        c.capability = Resource::new(0, 4);
        assert_eq!(
            identity(&c, "127.0.0.1:1".parse().unwrap())
                .unwrap_err()
                .to_string(),
            "invalid node capability <memory:0, vCores:4>: a node needs memory and vcores"
        );
        let mut c = config();
        c.http_address = Some("nm1".into());
        assert_eq!(
            identity(&c, "127.0.0.1:1".parse().unwrap())
                .unwrap_err()
                .to_string(),
            "invalid node address \"nm1\": invalid node id \"nm1\": expected host:port"
        );
    }
}
