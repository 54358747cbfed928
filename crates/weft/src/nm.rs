//! `weft nm`: runs a node agent until SIGTERM or Ctrl-C, then stops its
//! containers and unregisters; or until the RM refuses the node (exit 1,
//! with the RM's words) or decommissions it (a clean exit: its work is done).
//!
//! The agent is `weft_nm::NodeManager`; this module turns flags (and the
//! `--site` file's health-checker and ACL properties) into its settings,
//! and hands it the process's logging filter for its `/logLevel`. Under
//! `yarn.http.policy` HTTPS_ONLY in the site file, the agent serves HTTPS
//! with the key material of `ssl-server.xml` beside it, listens by default
//! where HTTPS is expected (`yarn.nodemanager.webapp.https.address`, else
//! 127.0.0.1:8044) and calls the RM at `https://127.0.0.1:8090` unless
//! `--rm` says otherwise.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use weft_model::Resource;
use weft_nm::{AgentEnd, MemoryEnforcement, NmConfig, NodeManager};
use weft_rm::Embedding;

use crate::logging::ReloadableFilter;

/// The longest interval a flag takes: an hour, far past any sensible grace
/// or sampling period, and far from overflowing a clock reading.
const MAX_MS: u64 = 3_600_000;

#[derive(Args, Debug)]
pub(crate) struct NmArgs {
    /// The ResourceManager's address (default: http://127.0.0.1:8088, or
    /// https://127.0.0.1:8090 when the site file says HTTPS_ONLY).
    #[arg(long)]
    rm: Option<String>,
    /// Memory offered to containers, in MB.
    #[arg(long, default_value_t = 8192)]
    memory_mb: u64,
    /// Vcores offered to containers.
    #[arg(long, default_value_t = 8)]
    vcores: u64,
    /// The node's rack.
    #[arg(long, default_value = "/default-rack")]
    rack: String,
    /// Where containers run and keep their logs (default: a weft-nm
    /// directory in the system's temporary directory).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Address the node's HTTP API listens on (default: 127.0.0.1:8042;
    /// under HTTPS_ONLY yarn.nodemanager.webapp.https.address, else
    /// 127.0.0.1:8044).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// The host:port AMs reach this node at (default: the host name when
    /// listening on every address, else the listening address).
    #[arg(long)]
    http_address: Option<String>,
    /// The node id (default: the HTTP address).
    #[arg(long)]
    node_id: Option<String>,
    /// Memory enforcement: auto (cgroups v2 where usable, else polling),
    /// off (polling resident memory), or a delegated cgroup v2 directory.
    // An empty value (an unset variable in a unit file) was taken for a
    // directory, and the agent failed on `cgroup.subtree_control` without
    // saying that the flag was empty.
    #[arg(long, default_value = "auto", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    cgroup: String,
    /// Milliseconds between SIGTERM and SIGKILL when stopping a container
    /// (at most an hour: the deadline is a clock reading plus this).
    #[arg(long, default_value_t = 250, value_parser = clap::value_parser!(u64).range(0..=MAX_MS))]
    kill_grace_ms: u64,
    /// Milliseconds between memory samples (10 to an hour).
    #[arg(long, default_value_t = 3000, value_parser = clap::value_parser!(u64).range(10..=MAX_MS))]
    monitor_interval_ms: u64,
    /// A Hadoop-style yarn-site.xml; the agent reads its node health script
    /// settings (yarn.nodemanager.health-checker.*), who may change its log
    /// levels (yarn.acl.enable, yarn.admin.acl) and whether only they may
    /// read its /jmx (hadoop.security.instrumentation.requires.admin),
    /// whether it serves HTTPS (yarn.http.policy, with ssl-server.xml and
    /// ssl-client.xml beside the file), and ignores the rest.
    #[arg(long)]
    site: Option<PathBuf>,
}

impl NmArgs {
    fn config(self) -> anyhow::Result<(NmConfig, SocketAddr)> {
        let work_dir = self
            .work_dir
            .unwrap_or_else(|| std::env::temp_dir().join("weft-nm"));
        let mut config = NmConfig::new(
            self.rm.clone().unwrap_or_default(),
            Resource::new(self.memory_mb, self.vcores),
            work_dir,
        );
        config.rack = self.rack;
        config.http_address = self.http_address;
        config.node_id = match self.node_id {
            Some(id) => Some(id.parse().with_context(|| format!("--node-id {id}"))?),
            None => None,
        };
        config.memory_enforcement = match self.cgroup.as_str() {
            "auto" => MemoryEnforcement::Auto,
            "off" => MemoryEnforcement::RssPolling,
            dir => MemoryEnforcement::Cgroup(PathBuf::from(dir)),
        };
        config.kill_grace = Duration::from_millis(self.kill_grace_ms);
        config.monitor_interval = Duration::from_millis(self.monitor_interval_ms);
        if let Some(path) = &self.site {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read --site {}", path.display()))?;
            let warnings =
                weft_nm::config::read_site(&mut config, &path.display().to_string(), &text)?;
            for w in warnings {
                tracing::warn!("{w}");
            }
            let dir = path.parent().unwrap_or(std::path::Path::new("."));
            weft_nm::config::load_tls(&mut config, dir)?;
        }
        let https = config.http_policy.is_https();
        if self.rm.is_none() {
            config.rm = if https {
                "https://127.0.0.1:8090"
            } else {
                "http://127.0.0.1:8088"
            }
            .to_owned();
        }
        let listen = match self.listen {
            Some(a) => a,
            None if https => config.https_address.unwrap_or(SocketAddr::from((
                [127, 0, 0, 1],
                weft_nm::config::DEFAULT_HTTPS_PORT,
            ))),
            None => SocketAddr::from(([127, 0, 0, 1], 8042)),
        };
        Ok((config, listen))
    }
}

/// Runs a node agent; its `/logLevel` changes `log_levels`, the process's
/// own filter (the agent is the whole process).
pub(crate) async fn run(a: NmArgs, log_levels: Arc<ReloadableFilter>) -> anyhow::Result<()> {
    let (config, listen) = a.config()?;
    let work_dir = config.work_dir.clone();
    let rm = config.rm.clone();
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    if let Some(script) = &config.health_script {
        tracing::info!(script = %script.path.display(), interval_ms = script.interval.as_millis() as u64, timeout_ms = script.timeout.as_millis() as u64, "node health script configured");
    }
    let embedding = Embedding {
        log_levels: Some(log_levels),
        ..Embedding::default()
    };
    let nm = NodeManager::start_with(config, listener, embedding).await?;
    tracing::info!(node = %nm.node_id(), http = nm.http_address(), rm = %rm, work_dir = %work_dir.display(), "node manager running");
    let end = tokio::select! {
        () = crate::shutdown_signal() => AgentEnd::Stopped,
        end = nm.ended() => end,
    };
    nm.stop().await;
    match end {
        AgentEnd::Stopped => tracing::info!("node manager stopped"),
        // Decommissioned: the operator wanted it gone, so this is no failure.
        AgentEnd::ShutDown(why) => {
            tracing::info!(reason = %why, "node manager stopped at the resource manager's request");
        }
        AgentEnd::Refused(why) => {
            anyhow::bail!("the resource manager at {rm} refused this node: {why}")
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        nm: NmArgs,
    }

    #[test]
    fn flags_become_settings() {
        let cmd = Cmd::parse_from([
            "nm",
            "--rm",
            "http://rm:8088",
            "--memory-mb",
            "4096",
            "--vcores",
            "2",
            "--rack",
            "/r2",
            "--work-dir",
            "/var/lib/weft",
            "--cgroup",
            "off",
            "--node-id",
            "n1:8042",
        ]);
        let (config, listen) = cmd.nm.config().unwrap();
        assert_eq!(config.capability, Resource::new(4096, 2));
        assert_eq!(config.memory_enforcement, MemoryEnforcement::RssPolling);
        assert_eq!(config.node_id.unwrap().to_string(), "n1:8042");
        assert_eq!(listen.to_string(), "127.0.0.1:8042");
        let bad = Cmd::parse_from(["nm", "--node-id", "nope"]);
        assert_eq!(bad.nm.config().unwrap_err().to_string(), "--node-id nope");
        for flag in ["--kill-grace-ms", "--monitor-interval-ms"] {
            let e = Cmd::try_parse_from(["nm", flag, "18446744073709551615"])
                .err()
                .expect("a huge interval is refused");
            assert!(
                e.to_string().contains("not in 0..=3600000")
                    || e.to_string().contains("not in 10..=3600000"),
                "{e}"
            );
        }
        let e = Cmd::try_parse_from(["nm", "--cgroup", ""])
            .err()
            .expect("an empty --cgroup is not a directory");
        assert!(e.to_string().contains("--cgroup"), "{e}");
        let dir = std::env::temp_dir().join(format!("weft-nm-site-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let site = dir.join("yarn-site.xml");
        std::fs::write(
            &site,
            "<configuration><property><name>yarn.nodemanager.health-checker.script.path</name><value>/bin/sh</value></property></configuration>",
        )
        .unwrap();
        let cmd = Cmd::parse_from(["nm", "--site", &site.display().to_string()]);
        let (config, _) = cmd.nm.config().unwrap();
        assert_eq!(
            config.health_script.map(|s| s.path),
            Some(PathBuf::from("/bin/sh"))
        );
        std::fs::write(
            &site,
            "<configuration><property><name>yarn.nodemanager.health-checker.script.path</name><value>/no/such/script</value></property></configuration>",
        )
        .unwrap();
        let cmd = Cmd::parse_from(["nm", "--site", &site.display().to_string()]);
        let e = cmd.nm.config().unwrap_err().to_string();
        assert!(e.contains("/no/such/script\" does not exist"), "{e}");
        // HTTPS_ONLY needs the key material beside the site file.
        std::fs::write(
            &site,
            "<configuration><property><name>yarn.http.policy</name><value>HTTPS_ONLY</value></property></configuration>",
        )
        .unwrap();
        let cmd = Cmd::parse_from(["nm", "--site", &site.display().to_string()]);
        let e = cmd.nm.config().unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "cannot read {} (the SSL resource hadoop.ssl.server.conf names): No such file or directory (os error 2)",
                dir.join("ssl-server.xml").display()
            )
        );
        let _ = std::fs::remove_dir_all(&dir);
        let e = Cmd::try_parse_from(["nm", "--monitor-interval-ms", "0"])
            .err()
            .expect("no sampling loop without a pause");
        assert!(e.to_string().contains("0 is not in 10..=3600000"), "{e}");
    }
}
