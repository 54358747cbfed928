//! What a node agent is started with (`NmConfig`), its defaults, how its
//! identity (node id and advertised web address) follows from where it
//! listens, and the properties of a yarn-site file it reads (`read_site`):
//! the `yarn.nodemanager.health-checker.*` ones, `yarn.acl.enable` and
//! `yarn.admin.acl` for who may use its `/logLevel`, and
//! `hadoop.security.instrumentation.requires.admin` for who may read its
//! `/jmx`, `yarn.http.policy` with the HTTPS address and the SSL
//! resources beside the file (`load_tls`), for serving HTTPS and trusting
//! an `https://` RM, and `weft.nm.secret.file`, the RM's node secret the
//! agent shows (read here, with the RM's own checks, from
//! `weft_rm::node_secret`).
//!
//! Reading flags and the site file is the `weft` command's job; this module
//! holds values and checks them. Running the health script is `health`'s.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use weft_model::{NodeId, Resource};
use weft_queue_tree::Acl;
use weft_queue_tree::site::{self, HadoopConfig, Location, SiteError};
use weft_rm::access::AclSettings;
use weft_rm::node_secret::{self, NodeSecret};
use weft_rm::tls::{ClientTls, HttpPolicy, ServerTls, TlsError};

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
    /// The node health script, if one is configured (YARN's
    /// `yarn.nodemanager.health-checker.script.path`); `None`: the node
    /// always reports itself healthy.
    pub health_script: Option<HealthScript>,
    /// `yarn.acl.enable` and `yarn.admin.acl`, as Hadoop's NodeManager
    /// web server takes them: who may read and set the node's log levels
    /// (`/logLevel`). Hadoop's defaults: ACLs off, and everybody an
    /// administrator.
    pub acl: AclSettings,
    /// `hadoop.security.instrumentation.requires.admin`: only the
    /// administrators of `acl` may read the node's `/jmx` (Hadoop's
    /// default: false, anyone may).
    pub instrumentation_requires_admin: bool,
    /// `yarn.webapp.filter-entity-list-by-user` (Hadoop's default: false):
    /// the node's list of containers leaves out those the caller may not
    /// view rather than withholding their reports; nothing changes while
    /// `acl` is off.
    pub filter_entity_list_by_user: bool,
    /// `yarn.http.policy` (default HTTP_ONLY): under HTTPS_ONLY the node's
    /// API is served with `server_tls`, and its links say `https://`.
    pub http_policy: HttpPolicy,
    /// `yarn.nodemanager.webapp.https.address`, where the node listens
    /// under HTTPS_ONLY unless told otherwise (`None`: not set).
    pub https_address: Option<SocketAddr>,
    /// `hadoop.ssl.server.conf` and `hadoop.ssl.client.conf` (defaults
    /// `ssl-server.xml`, `ssl-client.xml`): the SSL resources `load_tls`
    /// reads, relative to the site file's directory.
    pub ssl_conf: [PathBuf; 2],
    /// The key material the node's API is served with; required under
    /// HTTPS_ONLY (`load_tls` reads it).
    pub server_tls: Option<ServerTls>,
    /// Whom the node trusts when `rm` is an `https://` address (`None`: the
    /// system's roots); `load_tls` reads `ssl-client.xml`'s truststore.
    pub rm_trust: Option<ClientTls>,
    /// The RM's node secret (`weft.nm.secret.file`), shown on every call of
    /// the node protocol; `None` for an RM that does not authenticate nodes.
    pub node_secret: Option<NodeSecret>,
    /// The file `node_secret` was read from, if any: read again when the RM
    /// refuses the node's credentials, so that an agent picks up a rolled
    /// secret without a restart.
    pub node_secret_file: Option<PathBuf>,
}

/// A node health script and how it is run (Hadoop's
/// `NodeHealthScriptRunner`): every `interval`, killed after `timeout`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthScript {
    /// The executable (`...health-checker.script.path`).
    pub path: PathBuf,
    /// Its arguments (`...health-checker.script.opts`, comma-separated as
    /// Hadoop's `getStrings` reads them).
    pub opts: Vec<String>,
    /// Time between the start of one run and the next
    /// (`...health-checker.interval-ms`, 10 minutes).
    pub interval: Duration,
    /// How long a run may take before it is killed and the node counts as
    /// unhealthy (`...health-checker.script.timeout-ms`, 20 minutes).
    pub timeout: Duration,
}

impl HealthScript {
    /// The script at `path` with Hadoop's default interval and timeout.
    pub fn new(path: impl Into<PathBuf>) -> HealthScript {
        HealthScript {
            path: path.into(),
            opts: Vec::new(),
            interval: Duration::from_millis(DEFAULT_HEALTH_INTERVAL_MS),
            timeout: Duration::from_millis(DEFAULT_HEALTH_TIMEOUT_MS),
        }
    }
}

/// Hadoop's `DEFAULT_NM_HEALTH_CHECK_INTERVAL_MS`.
const DEFAULT_HEALTH_INTERVAL_MS: u64 = 600_000;
/// Hadoop's `DEFAULT_NM_HEALTH_CHECK_SCRIPT_TIMEOUT_MS` (twice the interval).
const DEFAULT_HEALTH_TIMEOUT_MS: u64 = 1_200_000;
/// The longest interval or timeout taken: a day, far from overflowing a
/// clock reading plus it.
const MAX_HEALTH_MS: u64 = 86_400_000;

/// The property names read. Hadoop 3.3 names each health script by a
/// keyword listed in `...health-checker.scripts` (default `script`), so
/// with the default keyword its per-script names are the classic
/// single-script ones; the global interval and timeout apply where the
/// script's own are not set.
mod names {
    pub(super) const PREFIX: &str = "yarn.nodemanager.health-checker.";
    pub(super) const SCRIPTS: &str = "yarn.nodemanager.health-checker.scripts";
    pub(super) const PATH: &str = "yarn.nodemanager.health-checker.script.path";
    pub(super) const OPTS: &str = "yarn.nodemanager.health-checker.script.opts";
    pub(super) const INTERVAL: &str = "yarn.nodemanager.health-checker.interval-ms";
    pub(super) const SCRIPT_INTERVAL: &str = "yarn.nodemanager.health-checker.script.interval-ms";
    pub(super) const TIMEOUT: &str = "yarn.nodemanager.health-checker.timeout-ms";
    pub(super) const SCRIPT_TIMEOUT: &str = "yarn.nodemanager.health-checker.script.timeout-ms";
    pub(super) const KNOWN: &[&str] = &[
        SCRIPTS,
        PATH,
        OPTS,
        INTERVAL,
        SCRIPT_INTERVAL,
        TIMEOUT,
        SCRIPT_TIMEOUT,
        // Hadoop's switch to run the script before the NM starts; Weft
        // always runs it first (briefly waited for before registering).
        "yarn.nodemanager.health-checker.run-before-startup",
    ];
    pub(super) const ACL_ENABLE: &str = "yarn.acl.enable";
    pub(super) const ADMIN_ACL: &str = "yarn.admin.acl";
    pub(super) const INSTRUMENTATION_REQUIRES_ADMIN: &str =
        "hadoop.security.instrumentation.requires.admin";
    pub(super) const HTTPS_ADDRESS: &str = "yarn.nodemanager.webapp.https.address";
}

/// Hadoop's `yarn.nodemanager.webapp.https.address` port; the agent
/// listens on it on the loopback under HTTPS_ONLY when nothing says where,
/// as it listens on 8042 for HTTP.
pub const DEFAULT_HTTPS_PORT: u16 = 8044;

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
            health_script: None,
            acl: AclSettings {
                enabled: false,
                admins: Acl::everyone(),
            },
            instrumentation_requires_admin: false,
            filter_entity_list_by_user: false,
            http_policy: HttpPolicy::HttpOnly,
            https_address: None,
            ssl_conf: [
                PathBuf::from(weft_rm::tls::DEFAULT_SERVER_CONF),
                PathBuf::from(weft_rm::tls::DEFAULT_CLIENT_CONF),
            ],
            server_tls: None,
            rm_trust: None,
            node_secret: None,
            node_secret_file: None,
        }
    }
}

/// Reads the node's properties from a yarn-site file's text (`file` names
/// it in messages): the health checker's, the ACL switch and the
/// administrators (`yarn.acl.enable`, `yarn.admin.acl`), whether the list
/// of containers leaves out those the caller may not view
/// (`yarn.webapp.filter-entity-list-by-user`), and whether `/jmx`
/// is theirs only (`hadoop.security.instrumentation.requires.admin`, which
/// Hadoop reads from core-site.xml: give it here). Other properties
/// are ignored, since a yarn-site file holds the whole cluster's settings.
/// Answers warnings (unknown `health-checker` names, typos most likely),
/// each with file and position; every bad value is an error, all at once.
pub fn read_site(
    config: &mut NmConfig,
    file: &str,
    text: &str,
) -> Result<Vec<String>, NmConfigError> {
    let site = HadoopConfig::parse(text).map_err(|error| NmConfigError::Site {
        file: file.to_owned(),
        error,
    })?;
    let mut warnings: Vec<String> = site
        .warnings()
        .iter()
        .map(|w| format!("{file}: {w}"))
        .collect();
    for p in site.with_prefix(names::PREFIX) {
        if !names::KNOWN.contains(&p.name.as_str()) {
            warnings.push(format!(
                "{file}: {}: {} is not a property Weft's node agent reads; it is ignored",
                p.location, p.name
            ));
        }
    }
    let mut problems = Vec::new();
    let mut bad = |name: &str, why: String| {
        if let Some(p) = site.get(name) {
            problems.push(PropertyProblem {
                location: p.location,
                name: name.to_owned(),
                value: p.value.clone(),
                why,
            });
        }
    };
    let value = |name: &str| site.value(name).map(str::trim);
    if let Some(keys) = value(names::SCRIPTS)
        && keys != "script"
    {
        bad(
                names::SCRIPTS,
                "names scripts other than `script`: Weft runs one health script, under Hadoop's default keyword (set yarn.nodemanager.health-checker.script.path and leave this unset)".to_owned(),
            );
    }
    let mut millis = |names: [&str; 2], default: u64| -> u64 {
        // The script's own setting first, then the global one.
        for name in names {
            let Some(v) = value(name) else { continue };
            match v.parse::<u64>() {
                Ok(ms) if (1..=MAX_HEALTH_MS).contains(&ms) => return ms,
                _ => bad(
                    name,
                    format!("is not a whole number of milliseconds from 1 to {MAX_HEALTH_MS}"),
                ),
            }
            return default;
        }
        default
    };
    let interval = millis(
        [names::SCRIPT_INTERVAL, names::INTERVAL],
        DEFAULT_HEALTH_INTERVAL_MS,
    );
    let timeout = millis(
        [names::SCRIPT_TIMEOUT, names::TIMEOUT],
        DEFAULT_HEALTH_TIMEOUT_MS,
    );
    let opts: Vec<String> = value(names::OPTS)
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(str::to_owned)
        .collect();
    match value(names::PATH) {
        // Hadoop runs no script when the path is empty.
        None | Some("") => {
            if !opts.is_empty() {
                warnings.push(format!(
                    "{file}: {} is set but no script path is: no health script runs",
                    names::OPTS
                ));
            }
            config.health_script = None;
        }
        Some(path) => {
            let script = HealthScript {
                path: PathBuf::from(path),
                opts,
                interval: Duration::from_millis(interval),
                timeout: Duration::from_millis(timeout),
            };
            if let Err(why) = crate::health::check_runnable(&script.path) {
                bad(names::PATH, why);
            }
            config.health_script = Some(script);
        }
    }
    let filter_list_name = weft_rm::config::filter_list_by_user_property(&site);
    for (name, flag) in [
        (names::ACL_ENABLE, &mut config.acl.enabled),
        (filter_list_name, &mut config.filter_entity_list_by_user),
        (
            names::INSTRUMENTATION_REQUIRES_ADMIN,
            &mut config.instrumentation_requires_admin,
        ),
    ] {
        if let Some(v) = value(name) {
            match site::parse_bool(v) {
                Some(on) => *flag = on,
                None => bad(name, "is not a boolean (true or false)".to_owned()),
            }
        }
    }
    if let Some(p) = site.get(names::ADMIN_ACL) {
        // Untrimmed: a leading space is what makes an ACL of groups only.
        config.acl.admins = Acl::parse(&p.value);
    }
    if let Some(v) = value(weft_rm::tls::POLICY_PROPERTY) {
        match HttpPolicy::parse(v) {
            Ok(policy) => config.http_policy = policy,
            Err(why) => bad(weft_rm::tls::POLICY_PROPERTY, why.to_owned()),
        }
    }
    if value(weft_rm::tls::REQUIRE_CLIENT_CERT_PROPERTY).is_some_and(|v| v != "false") {
        bad(
            weft_rm::tls::REQUIRE_CLIENT_CERT_PROPERTY,
            "is not false: Weft does not ask clients for certificates; remove it or set false"
                .to_owned(),
        );
    }
    if let Some(v) = value(names::HTTPS_ADDRESS) {
        match v.parse::<SocketAddr>() {
            Ok(a) => config.https_address = Some(a),
            Err(_) => bad(
                names::HTTPS_ADDRESS,
                "is not a socket address such as 0.0.0.0:8044".to_owned(),
            ),
        }
    }
    for (name, slot) in [
        weft_rm::tls::SERVER_CONF_PROPERTY,
        weft_rm::tls::CLIENT_CONF_PROPERTY,
    ]
    .into_iter()
    .zip(config.ssl_conf.iter_mut())
    {
        if let Some(v) = value(name).filter(|v| !v.is_empty()) {
            *slot = PathBuf::from(v);
        }
    }
    match value(node_secret::PROPERTY) {
        None | Some("") => {}
        Some(path) => {
            // Relative to the site file, as the RM resolves it against its
            // configuration directory.
            let path = Path::new(file).parent().unwrap_or(Path::new("")).join(path);
            match NodeSecret::read(&path) {
                Ok(secret) => {
                    config.node_secret = Some(secret);
                    config.node_secret_file = Some(path);
                }
                Err(e) => bad(
                    node_secret::PROPERTY,
                    format!(
                        "names a file that cannot be used: {}: {}",
                        path.display(),
                        e.reason()
                    ),
                ),
            }
        }
    }
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.location);
        return Err(NmConfigError::Properties {
            file: file.to_owned(),
            problems,
        });
    }
    Ok(warnings)
}

/// Reads the SSL resources a site file in `dir` names (`read_site` first):
/// under HTTPS_ONLY the server's key material from `ssl-server.xml`, and
/// whatever the policy, whom to trust for an `https://` RM from
/// `ssl-client.xml`'s truststore (the system's roots when it names none).
pub fn load_tls(config: &mut NmConfig, dir: &Path) -> Result<(), NmConfigError> {
    let [server, client] = config.ssl_conf.clone().map(|p| dir.join(p));
    if config.http_policy.is_https() {
        config.server_tls = Some(ServerTls::load(&server)?);
    }
    config.rm_trust = ClientTls::from_client_conf(&client)?;
    Ok(())
}

/// One property with a bad value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyProblem {
    /// Where its value is set.
    pub location: Location,
    /// The property.
    pub name: String,
    /// Its value.
    pub value: String,
    /// What is wrong.
    pub why: String,
}

impl std::fmt::Display for PropertyProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: property {}: {:?} {}",
            self.location, self.name, self.value, self.why
        )
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
    /// The yarn-site file is not a readable configuration file.
    #[error("{file}: {error}")]
    Site {
        /// The file.
        file: String,
        /// What the reader found.
        error: SiteError,
    },
    /// Properties of the yarn-site file have bad values.
    #[error("{file}: {}", problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Properties {
        /// The file.
        file: String,
        /// Every bad property, in file order.
        problems: Vec<PropertyProblem>,
    },
    /// The key material or the truststore cannot be read or used.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// HTTPS_ONLY without key material (settings not read with `load_tls`).
    #[error(
        "yarn.http.policy is HTTPS_ONLY, but no key material was given (ssl-server.xml beside the site file)"
    )]
    HttpsWithoutKeyMaterial,
    /// The health script cannot be run.
    #[error("health script {path}: {why}")]
    HealthScript {
        /// The configured path.
        path: String,
        /// What is wrong.
        why: String,
    },
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

    fn site(props: &[(&str, &str)]) -> String {
        let mut text = String::from("<configuration>\n");
        for (k, v) in props {
            text.push_str(&format!(
                "<property><name>{k}</name><value>{v}</value></property>\n"
            ));
        }
        text.push_str("</configuration>\n");
        text
    }

    #[test]
    fn the_health_checker_is_read_from_a_site_file() {
        let mut c = config();
        // No script: nothing runs, whatever else the file holds.
        let warnings = read_site(
            &mut c,
            "yarn-site.xml",
            &site(&[("yarn.nodemanager.resource.memory-mb", "4096")]),
        )
        .unwrap();
        assert_eq!((c.health_script.clone(), warnings), (None, vec![]));

        // `sh` is an executable anyone may run.
        let sh = std::path::Path::new("/bin/sh");
        let warnings = read_site(
            &mut c,
            "yarn-site.xml",
            &site(&[
                ("yarn.nodemanager.health-checker.script.path", "/bin/sh"),
                ("yarn.nodemanager.health-checker.script.opts", "-c, exit 0"),
                ("yarn.nodemanager.health-checker.interval-ms", "500"),
                ("yarn.nodemanager.health-checker.timeout-ms", "9000"),
                ("yarn.nodemanager.health-checker.script.timeout-ms", "700"),
                ("yarn.nodemanager.health-checker.scripts", "script"),
                ("yarn.nodemanager.health-checker.script.pth", "/x"),
            ]),
        )
        .unwrap();
        assert_eq!(
            c.health_script,
            Some(HealthScript {
                path: sh.to_owned(),
                opts: vec!["-c".to_owned(), "exit 0".to_owned()],
                interval: Duration::from_millis(500),
                // The script's own timeout wins over the global one.
                timeout: Duration::from_millis(700),
            })
        );
        assert_eq!(
            warnings,
            vec![
                "yarn-site.xml: line 8, column 66: yarn.nodemanager.health-checker.script.pth is not a property Weft's node agent reads; it is ignored"
            ]
        );
        let mut c = config();
        read_site(
            &mut c,
            "yarn-site.xml",
            &site(&[("yarn.nodemanager.health-checker.script.path", "/bin/sh")]),
        )
        .unwrap();
        let script = c.health_script.unwrap();
        assert_eq!(
            (script.interval, script.timeout),
            (Duration::from_secs(600), Duration::from_secs(1200))
        );
    }

    #[test]
    fn bad_health_checker_settings_are_named_together() {
        let mut c = config();
        let err = read_site(
            &mut c,
            "yarn-site.xml",
            &site(&[
                (
                    "yarn.nodemanager.health-checker.script.path",
                    "/nonexistent/check.sh",
                ),
                ("yarn.nodemanager.health-checker.interval-ms", "0"),
                ("yarn.nodemanager.health-checker.scripts", "disk,net"),
            ]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "yarn-site.xml: line 2, column 67: property yarn.nodemanager.health-checker.script.path: \"/nonexistent/check.sh\" does not exist; \
             line 3, column 67: property yarn.nodemanager.health-checker.interval-ms: \"0\" is not a whole number of milliseconds from 1 to 86400000; \
             line 4, column 63: property yarn.nodemanager.health-checker.scripts: \"disk,net\" names scripts other than `script`: Weft runs one health script, under Hadoop's default keyword (set yarn.nodemanager.health-checker.script.path and leave this unset)"
        );
        let err = read_site(&mut c, "yarn-site.xml", "<configuration>").unwrap_err();
        assert!(err.to_string().starts_with("yarn-site.xml: "), "{err}");
    }

    #[test]
    fn the_acl_switch_and_administrators_are_read_from_a_site_file() {
        let mut c = config();
        // Hadoop's defaults: off, and everybody an administrator.
        assert!(!c.acl.enabled);
        assert!(c.acl.admins.everyone);
        read_site(
            &mut c,
            "yarn-site.xml",
            &site(&[
                ("yarn.acl.enable", " TRUE "),
                ("yarn.admin.acl", "yarn,hdfs ops"),
            ]),
        )
        .unwrap();
        assert!(c.acl.enabled);
        assert_eq!(c.acl.admins, Acl::parse("yarn,hdfs ops"));
        assert!(c.acl.admins.groups.contains("ops"));

        let err = read_site(
            &mut c,
            "yarn-site.xml",
            &site(&[("yarn.acl.enable", "yes")]),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "yarn-site.xml: line 2, column 39: property yarn.acl.enable: \"yes\" is not a boolean (true or false)"
        );
    }

    #[test]
    fn the_list_filter_is_read_by_either_of_hadoops_names() {
        let mut c = config();
        assert!(!c.filter_entity_list_by_user);
        let key = "yarn.webapp.filter-entity-list-by-user";
        let old = "yarn.resourcemanager.display.per-user-apps";
        read_site(&mut c, "yarn-site.xml", &site(&[(old, "true")])).unwrap();
        assert!(c.filter_entity_list_by_user);
        // The newer name wins over the older.
        read_site(
            &mut c,
            "yarn-site.xml",
            &site(&[(old, "true"), (key, "false")]),
        )
        .unwrap();
        assert!(!c.filter_entity_list_by_user);
        let err = read_site(&mut c, "yarn-site.xml", &site(&[(key, "on")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "property yarn.webapp.filter-entity-list-by-user: \"on\" is not a boolean"
            ),
            "{err}"
        );
    }

    #[test]
    fn jmx_is_kept_to_administrators_when_the_site_file_says_so() {
        let mut c = config();
        // Hadoop's default: anyone may read.
        assert!(!c.instrumentation_requires_admin);
        let key = "hadoop.security.instrumentation.requires.admin";
        read_site(&mut c, "core-site.xml", &site(&[(key, "true")])).unwrap();
        assert!(c.instrumentation_requires_admin);
        let err = read_site(&mut c, "core-site.xml", &site(&[(key, "1")]))
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with(&format!(
                "property {key}: \"1\" is not a boolean (true or false)"
            )),
            "{err}"
        );
    }

    #[test]
    fn the_node_secret_is_read_beside_the_site_file_and_a_bad_one_is_named() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = std::env::temp_dir().join(format!("weft-nm-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str, mode: u32| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write("good.secret", "0123456789abcdef0123456789abcdef\n", 0o640);
        write("open.secret", "0123456789abcdef0123456789abcdef\n", 0o604);
        let file = dir.join("yarn-site.xml").display().to_string();
        let mut c = config();
        read_site(
            &mut c,
            &file,
            &site(&[("weft.nm.secret.file", "good.secret")]),
        )
        .unwrap();
        assert!(
            c.node_secret
                .as_ref()
                .is_some_and(|s| s.matches("0123456789abcdef0123456789abcdef"))
        );
        assert_eq!(c.node_secret_file, Some(dir.join("good.secret")));
        let err = read_site(
            &mut config(),
            &file,
            &site(&[("weft.nm.secret.file", "open.secret")]),
        )
        .unwrap_err()
        .to_string()
        .replace(&dir.display().to_string(), "<dir>");
        assert_eq!(
            err,
            "<dir>/yarn-site.xml: line 2, column 43: property weft.nm.secret.file: \"open.secret\" names a file that cannot be used: <dir>/open.secret: other users may read or change it (mode 604); run chmod o-rwx on it, as only the resource manager and its node agents may know the secret"
        );
        let _ = std::fs::remove_dir_all(&dir);
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
