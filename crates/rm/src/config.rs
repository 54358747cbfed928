//! Startup configuration: where the files come from (a directory, or the
//! copies built into the binary), reading them, and the service's own
//! properties next to the scheduler's: Weft's `weft.*` ones and the
//! ResourceManager names of Hadoop's `yarn-site.xml` and `core-site.xml`
//! that the service reads, refuses or warns about.
//!
//! A directory's `core-site.xml`, `yarn-site.xml` and `weft-site.xml` are
//! read as one configuration, layered in that order as Hadoop layers its
//! resources, so a Hadoop configuration directory works as it is and
//! `weft-site.xml` overrides it.
//!
//! Parsing the scheduler's properties and the allocation file is
//! `weft-queue-tree`'s; this module reads files, resolves paths, and turns
//! every problem into one `ConfigError` naming the file, line and column.
//! Watching the allocation file afterwards is `reload`'s job; resolving
//! racks with the topology mapping named here is `topology`'s.

pub mod listing;

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft_core::CoreSettings;
use weft_model::Duration;
use weft_queue_tree::alloc_file::parse_alloc_file;
use weft_queue_tree::site::{
    HadoopConfig, Layer, Location, SchedulerSettings, SiteError, SiteProblem,
};
use weft_queue_tree::{Acl, AllocFileError, GroupFile, GroupFileError, LoadedAllocConfig};

use crate::dynamic_resources::{DynamicResources, DynamicResourcesError};
use crate::groups::{GroupCacheSettings, GroupSource, MappingClass};
use crate::hosts::{HostLists, HostsError, HostsFiles, TimeoutSecs};
use crate::node_secret::{NodeSecret, NodeSecretError};
use crate::tls::{HttpPolicy, ServerTls, TlsError};
use crate::topology::{Topology, TopologyError};

use self::listing::{BadPattern, ConfListing, Redactor};

/// The allocation file shipped in `conf/`, built in so the binary runs anywhere.
pub const EMBEDDED_ALLOC_FILE: &str = include_str!("../../../conf/fair-scheduler.xml");
/// The site file shipped in `conf/`, built in.
pub const EMBEDDED_SITE_FILE: &str = include_str!("../../../conf/weft-site.xml");

/// The site file's name in a configuration directory.
pub const SITE_FILE_NAME: &str = "weft-site.xml";

/// Hadoop's YARN site file, read under `weft-site.xml`.
pub const YARN_SITE_FILE_NAME: &str = "yarn-site.xml";

/// The site files of a configuration directory, in the order they are
/// layered: Hadoop's `core-site.xml` (where the `net.topology.*` names
/// live) under its `yarn-site.xml`, as a YARN daemon reads them, and
/// Weft's own file on top. Those present are read.
pub const SITE_FILES: [&str; 3] = ["core-site.xml", YARN_SITE_FILE_NAME, SITE_FILE_NAME];

/// Everything the service starts with.
#[derive(Clone, Debug)]
pub struct RmConfig {
    /// Where the files came from.
    pub source: ConfSource,
    /// The allocation file to watch (`None` with the built-in copy).
    pub alloc_path: Option<PathBuf>,
    /// The allocation file as first loaded.
    pub alloc: LoadedAllocConfig,
    /// The core's settings (the cluster timestamp is set when the service starts).
    pub core: CoreSettings,
    /// The service's own settings.
    pub service: ServiceSettings,
    /// Where users' groups come from, for placement and ACLs: the group
    /// file as read, or the mapping to use.
    pub groups: GroupSource,
    /// The include and exclude lists of nodes as first read.
    pub hosts: HostLists,
    /// The sizes `dynamic-resources.xml` gives nodes, as first read.
    pub dynamic_resources: DynamicResources,
    /// How nodes' racks are resolved: the table read, the script checked.
    pub topology: Topology,
    /// The site files' properties as `GET /conf` shows them, as read now.
    pub listing: Arc<ConfListing>,
    /// The key material HTTPS is served with: `Some` exactly when
    /// `service.http_policy` is HTTPS_ONLY.
    pub tls: Option<ServerTls>,
    /// What looked wrong without being fatal, one line each with file and position.
    pub warnings: Vec<String>,
}

/// Where the configuration came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfSource {
    /// A directory holding `weft-site.xml` and the allocation file.
    Dir(PathBuf),
    /// The copies of `conf/` built into the binary.
    Embedded,
}

impl fmt::Display for ConfSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfSource::Dir(d) => write!(f, "{}", d.display()),
            ConfSource::Embedded => f.write_str("the built-in configuration"),
        }
    }
}

/// The service's settings: `weft.*` properties plus the YARN RM (and
/// `net.topology.*`) ones the service (rather than the scheduler) reads,
/// and Hadoop's group mapping (`hadoop.security.group*`), which Hadoop
/// keeps in core-site.xml.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceSettings {
    /// `weft.rm.listen`, else Hadoop's `yarn.resourcemanager.webapp.address`
    /// (with `yarn.resourcemanager.hostname` and `bind-host`) when the site
    /// files set any of the three, else `127.0.0.1:8088`; `--listen`
    /// overrides it. The last is not Hadoop's default (`0.0.0.0:8088`): the
    /// API takes callers at their word (`user.name`), so an RM started with
    /// nothing said listens where only its own machine reaches it. Under
    /// HTTPS_ONLY, the same with `yarn.resourcemanager.webapp.https.address`
    /// and port 8090.
    pub listen: ListenAddress,
    /// `yarn.http.policy` (default HTTP_ONLY): whether the RM serves HTTPS,
    /// and the scheme of the links it hands out.
    pub http_policy: HttpPolicy,
    /// `hadoop.ssl.server.conf` (default `ssl-server.xml`): the file,
    /// relative to the configuration directory, naming the key material
    /// HTTPS is served with.
    pub ssl_server_conf: PathBuf,
    /// `weft.rm.alloc-file.reload-interval-ms` (default 10 s, Hadoop's
    /// constant): how often the allocation file's modification time is polled.
    pub alloc_reload_interval: Duration,
    /// `weft.rm.alloc-file.min-age-ms` (default 5 s, Hadoop's constant): a
    /// change is loaded only once the file has been left alone this long, so
    /// a half-written file is not read.
    pub alloc_min_age: Duration,
    /// `weft.rm.view-refresh-ms` (default 100 ms): the longest that the
    /// published views (GETs, gauges) may lag behind scheduling traffic.
    /// Writes through the REST API are visible at once regardless.
    pub view_refresh: Duration,
    /// `weft.rm.max-request-bytes` (default 1 MiB): larger bodies get 413.
    pub max_request_bytes: usize,
    /// `weft.rm.command-queue` (default 65536): commands waiting for the
    /// scheduler before handlers wait to enqueue.
    pub command_queue: usize,
    /// `weft.rm.explain.max-per-second` (default 50; 0 turns explanations
    /// off): explanations served a second, all callers together, since each
    /// tries every node on the scheduler's thread.
    pub explains_per_second: u32,
    /// `weft.rm.event-log.file` (default none): write every scheduler
    /// decision to this file as JSON lines (relative to the configuration
    /// directory).
    pub event_log: Option<PathBuf>,
    /// `weft.rm.audit-log.file` (default none): also append the audit log
    /// (every request for a change, and every application's end, in
    /// Hadoop's RMAuditLogger format) to this file (relative to the
    /// configuration directory); it always goes to the `weft_rm::audit`
    /// log target.
    pub audit_log: Option<PathBuf>,
    /// `weft.rm.groups.file` (default none): users' groups, one
    /// `user: primary other...` per line (relative to the configuration
    /// directory). When set it is the whole mapping: `group_mapping` is
    /// not used.
    pub groups_file: Option<PathBuf>,
    /// `hadoop.security.group.mapping` (default Hadoop's,
    /// `JniBasedUnixGroupsMappingWithFallback`: the operating system's
    /// groups): where users' groups come from without a group file.
    pub group_mapping: MappingClass,
    /// `hadoop.security.groups.*`: the cache in front of the operating
    /// system's groups.
    pub groups_cache: GroupCacheSettings,
    /// `yarn.webapp.enable-rest-app-submissions` (default true).
    pub rest_submissions: bool,
    /// `yarn.webapp.filter-entity-list-by-user` (default false; Hadoop's
    /// older name `yarn.resourcemanager.display.per-user-apps` is read when
    /// it is unset): the lists of apps (`GET /ws/v1/cluster/apps`, the web
    /// UI's) leave out the apps their caller may not view rather than
    /// withholding their details. It changes nothing while
    /// `yarn.acl.enable` is off.
    pub filter_entity_list_by_user: bool,
    /// `hadoop.security.instrumentation.requires.admin` (default false, as
    /// in Hadoop): only administrators (`yarn.admin.acl`) may read `/conf`.
    pub instrumentation_requires_admin: bool,
    /// `weft.rm.state-store.dir` (default none: off): where the RM keeps
    /// what it needs to take its applications (and drains) back after a
    /// restart (relative to the configuration directory).
    pub state_store: Option<PathBuf>,
    /// `yarn.resourcemanager.state-store.max-completed-applications`
    /// (default: `yarn.resourcemanager.max-completed-applications`, and
    /// never more, as in Hadoop): how many ended applications the state
    /// store keeps for the next start.
    pub state_store_max_completed_apps: usize,
    /// `yarn.resourcemanager.nodes.include-path` and
    /// `yarn.resourcemanager.nodes.exclude-path` (default none; relative to
    /// the configuration directory): which nodes may join. Read at start
    /// and again on each `refresh-nodes`.
    pub hosts_files: HostsFiles,
    /// `yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs`
    /// (default 3600, Hadoop's; negative: none): how long a node drained
    /// by `refresh-nodes` with `graceful` may take when neither the exclude
    /// file nor the request says.
    pub decommission_timeout: TimeoutSecs,
    /// `yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications`
    /// (default true): a draining node also waits for the apps that ran
    /// containers on it to finish, as Hadoop's watcher always does.
    pub decommission_wait_for_apps: bool,
    /// Hadoop's `net.topology.node.switch.mapping.impl` with
    /// `net.topology.script.file.name` or `net.topology.table.file.name`
    /// (default: none, the racks nodes declare stand; paths relative to the
    /// configuration directory).
    pub rack_mapping: RackMapping,
    /// `weft.rm.topology.timeout-ms` (default 10 s): how long a
    /// registration waits for its host's rack before the node goes in
    /// `/default-rack`.
    pub topology_timeout: Duration,
    /// The configuration directory the service started from (`None`: the
    /// built-in copies); `refresh-nodes` reads its site files again.
    /// Not a property: set when the directory is loaded.
    pub conf_dir: Option<PathBuf>,
    /// `weft.nm.secret.file` (default none; relative to the configuration
    /// directory): the file holding the secret every node protocol call
    /// must show (`node_secret`).
    pub node_secret_file: Option<PathBuf>,
    /// The secret read from `node_secret_file` when the configuration was
    /// loaded; `None`: nodes are not authenticated.
    pub node_secret: Option<NodeSecret>,
}

/// Where the RM serves HTTP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenAddress {
    /// An address.
    Socket(SocketAddr),
    /// A host name and port, looked up when the service binds: Hadoop's
    /// `yarn.resourcemanager.webapp.address` is usually a name, and looking
    /// it up while reading the files would make every reread of them
    /// (`refresh-nodes`) depend on the name service.
    Host {
        /// The name.
        host: String,
        /// The port.
        port: u16,
    },
}

impl fmt::Display for ListenAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAddress::Socket(a) => write!(f, "{a}"),
            ListenAddress::Host { host, port } => write!(f, "{host}:{port}"),
        }
    }
}

impl From<SocketAddr> for ListenAddress {
    fn from(a: SocketAddr) -> ListenAddress {
        ListenAddress::Socket(a)
    }
}

/// Which topology mapping the site files name (Hadoop's
/// `net.topology.node.switch.mapping.impl` and its file).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum RackMapping {
    /// None: each node's declared rack stands. Weft's default, where
    /// Hadoop's (a `ScriptBasedMapping` without a script) puts every node
    /// in `/default-rack`.
    #[default]
    Declared,
    /// `ScriptBasedMapping` with `net.topology.script.file.name` set.
    Script {
        /// The script.
        path: PathBuf,
    },
    /// `TableMapping`, with `net.topology.table.file.name` if set.
    Table {
        /// The table file (`None`: every node in `/default-rack`, as in Hadoop).
        path: Option<PathBuf>,
    },
}

impl RackMapping {
    /// The same mapping with a relative file resolved against `dir`.
    fn resolved(self, dir: &Path) -> RackMapping {
        match self {
            RackMapping::Declared => RackMapping::Declared,
            RackMapping::Script { path } => RackMapping::Script {
                path: resolve(dir, &path.to_string_lossy()),
            },
            RackMapping::Table { path } => RackMapping::Table {
                path: path.map(|p| resolve(dir, &p.to_string_lossy())),
            },
        }
    }
}

impl Default for ServiceSettings {
    fn default() -> ServiceSettings {
        ServiceSettings {
            listen: ListenAddress::Socket(SocketAddr::from(([127, 0, 0, 1], 8088))),
            http_policy: HttpPolicy::HttpOnly,
            ssl_server_conf: PathBuf::from(crate::tls::DEFAULT_SERVER_CONF),
            alloc_reload_interval: Duration::from_millis(10_000),
            alloc_min_age: Duration::from_millis(5_000),
            view_refresh: Duration::from_millis(100),
            max_request_bytes: 1 << 20,
            command_queue: 65_536,
            explains_per_second: 50,
            event_log: None,
            audit_log: None,
            groups_file: None,
            group_mapping: MappingClass::JniWithFallback,
            groups_cache: GroupCacheSettings::default(),
            rest_submissions: true,
            filter_entity_list_by_user: false,
            instrumentation_requires_admin: false,
            state_store: None,
            state_store_max_completed_apps: CoreSettings::default().max_completed_apps,
            hosts_files: HostsFiles::default(),
            decommission_timeout: TimeoutSecs(3600),
            decommission_wait_for_apps: true,
            rack_mapping: RackMapping::Declared,
            topology_timeout: Duration::from_millis(
                u64::try_from(crate::topology::DEFAULT_TIMEOUT.as_millis()).unwrap_or(u64::MAX),
            ),
            conf_dir: None,
            node_secret_file: None,
            node_secret: None,
        }
    }
}

/// Why the service cannot start with this configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The node secret file cannot be used.
    #[error(transparent)]
    NodeSecret(#[from] NodeSecretError),
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A site file is invalid.
    #[error("{}", render_site_errors(files))]
    Site {
        /// Each file with problems (or `built-in weft-site.xml`) and every
        /// problem in it, in the order the files are layered.
        files: Vec<(String, SiteError)>,
    },
    /// The allocation file is invalid.
    #[error("{file}: invalid allocation file:\n{}", indent(&error.to_string()))]
    AllocFile {
        /// The file.
        file: String,
        /// Every problem.
        error: AllocFileError,
    },
    /// The group file is invalid.
    #[error("{}: {error}", path.display())]
    Groups {
        /// The file.
        path: PathBuf,
        /// Every problem.
        error: GroupFileError,
    },
    /// An include or exclude file cannot be read or is invalid.
    #[error(transparent)]
    Hosts(#[from] HostsError),
    /// `dynamic-resources.xml` cannot be read or is invalid.
    #[error(transparent)]
    DynamicResources(#[from] DynamicResourcesError),
    /// A service property has a bad value.
    #[error("{}", render_service_errors(files))]
    Service {
        /// Each file with bad values and every one in it, in the order the
        /// files are layered.
        files: Vec<(String, Vec<ServiceProblem>)>,
    },
    /// The topology mapping cannot be used.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// `hadoop.security.sensitive-config-keys` holds a pattern that is not
    /// a regular expression: refused, since `/conf` would otherwise show
    /// the values it was meant to hide.
    #[error("{file}: {}: property {}: {error}", location.map(|l| l.to_string()).unwrap_or_default(), listing::SENSITIVE_KEYS_PROPERTY)]
    SensitiveKeys {
        /// The file that sets it.
        file: String,
        /// Where (always known: only a pattern the files give can be bad).
        location: Option<Location>,
        /// The pattern and what is wrong with it.
        error: BadPattern,
    },
    /// HTTPS_ONLY, and its key material cannot be read or used.
    #[error("cannot serve HTTPS (yarn.http.policy is HTTPS_ONLY): {0}")]
    Tls(#[from] TlsError),
    /// HTTPS_ONLY in a configuration from texts (the built-in copies),
    /// which has no directory to find `ssl-server.xml` in.
    #[error(
        "yarn.http.policy is HTTPS_ONLY, which needs a configuration directory holding ssl-server.xml (weft rm --conf DIR)"
    )]
    HttpsWithoutDirectory,
}

/// One bad service property.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: property {name}: {value:?} {why}")]
pub struct ServiceProblem {
    /// Where it is set.
    pub location: Location,
    /// The property.
    pub name: String,
    /// The value as written.
    pub value: String,
    /// What is wrong.
    pub why: &'static str,
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn render_site_errors(files: &[(String, SiteError)]) -> String {
    let parts: Vec<String> = files
        .iter()
        .map(|(file, error)| format!("{file}: {error}"))
        .collect();
    parts.join("\n")
}

fn render_service_errors(files: &[(String, Vec<ServiceProblem>)]) -> String {
    let parts: Vec<String> = files
        .iter()
        .map(|(file, problems)| {
            let lines: Vec<String> = problems.iter().map(|p| format!("\n  {p}")).collect();
            format!("{file}: invalid service settings:{}", lines.concat())
        })
        .collect();
    parts.join("\n")
}

/// The directory `weft rm` uses without `--conf`: `./conf` when it holds an
/// allocation file, else none (the built-in copies).
pub fn default_conf_dir() -> Option<PathBuf> {
    let dir = PathBuf::from("conf");
    dir.join("fair-scheduler.xml").is_file().then_some(dir)
}

fn read(path: &Path) -> Result<String, ConfigError> {
    read_config_file(path).map_err(|source| ConfigError::Read {
        path: path.to_owned(),
        source,
    })
}

/// The largest configuration file read, far past any real allocation,
/// site or group file.
pub(crate) const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// Reads a configuration file that must be a regular file of at most
/// `MAX_CONFIG_BYTES`: a path pointing at a device or a pipe (`/dev/zero`,
/// a FIFO nobody writes) would otherwise grow memory without end or block
/// the reload for good. Public so that tools checking a file offline
/// (`weft queues`) read it as the RM would and refuse what it refuses.
pub fn read_config_file(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read as _};
    // Checked by path before opening: opening a FIFO blocks.
    if !std::fs::metadata(path)?.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::new(
            ErrorKind::InvalidData,
            format!("larger than {} MiB", MAX_CONFIG_BYTES >> 20),
        ));
    }
    Ok(text)
}

impl RmConfig {
    /// Reads the configuration in `dir`, or the built-in copies when `None`.
    /// A directory with neither `weft-site.xml` nor `yarn-site.xml` means
    /// default settings; a missing allocation file means default queues (as
    /// Hadoop runs without one), watched in case it appears.
    pub fn load(dir: Option<&Path>) -> Result<RmConfig, ConfigError> {
        let Some(dir) = dir else {
            return RmConfig::from_texts(EMBEDDED_SITE_FILE, EMBEDDED_ALLOC_FILE);
        };
        let mut warnings = Vec::new();
        let site = read_site(dir, &mut warnings)?;
        let alloc_path = resolve(dir, &site.scheduler.allocation_file);
        let alloc_name = alloc_path.display().to_string();
        let alloc = if alloc_path.exists() {
            parse_alloc(&alloc_name, &read(&alloc_path)?, &mut warnings)?
        } else {
            warnings.push(format!(
                "{alloc_name}: not found; running with default queues until it appears"
            ));
            LoadedAllocConfig {
                config: Default::default(),
                warnings: Vec::new(),
            }
        };
        let mut service = site.service;
        service.groups_file = service
            .groups_file
            .map(|p| resolve(dir, &p.to_string_lossy()));
        let groups = group_source(&service)?;
        service.event_log = service
            .event_log
            .map(|p| resolve(dir, &p.to_string_lossy()));
        service.audit_log = service
            .audit_log
            .map(|p| resolve(dir, &p.to_string_lossy()));
        service.state_store = service
            .state_store
            .map(|p| resolve(dir, &p.to_string_lossy()));
        service.hosts_files = service.hosts_files.resolved(dir);
        service.rack_mapping = service.rack_mapping.resolved(dir);
        service.conf_dir = Some(dir.to_owned());
        service.ssl_server_conf = resolve(dir, &service.ssl_server_conf.to_string_lossy());
        let tls = match service.http_policy {
            HttpPolicy::HttpOnly => None,
            HttpPolicy::HttpsOnly => Some(ServerTls::load(&service.ssl_server_conf)?),
        };
        service.node_secret_file = service
            .node_secret_file
            .map(|p| resolve(dir, &p.to_string_lossy()));
        service.node_secret = read_node_secret(&service)?;
        let (topology, topology_warnings) = Topology::load(&service.rack_mapping)?;
        warnings.extend(topology_warnings);
        // Hadoop's default scheduler is not Weft's: a directory made for
        // the CapacityScheduler runs with other queues than it says.
        if site.scheduler_class.is_none() && dir.join("capacity-scheduler.xml").exists() {
            warnings.push(format!(
                "{}: not read: Hadoop's default scheduler is the CapacityScheduler, and Weft is a Fair Scheduler that takes its queues from the allocation file ({})",
                dir.join("capacity-scheduler.xml").display(),
                alloc_path.display()
            ));
        }
        let (hosts, host_warnings) = HostLists::load(&service.hosts_files)?;
        warnings.extend(host_warnings);
        let dynamic_path = dir.join(crate::dynamic_resources::FILE_NAME);
        let min_allocation = site.core.scheduler.min_allocation();
        let (dynamic_resources, dynamic_warnings) =
            DynamicResources::load(&dynamic_path, min_allocation)?.unwrap_or_default();
        warnings.extend(dynamic_warnings);
        Ok(RmConfig {
            source: ConfSource::Dir(dir.to_owned()),
            alloc_path: Some(alloc_path),
            alloc,
            core: site.core,
            service,
            groups,
            hosts,
            dynamic_resources,
            topology,
            listing: Arc::new(site.listing),
            tls,
            warnings,
        })
    }

    /// A configuration from texts, with nothing to watch (the built-in
    /// copies, and tests). File paths in it are taken as they are.
    pub fn from_texts(site_text: &str, alloc_text: &str) -> Result<RmConfig, ConfigError> {
        let mut warnings = Vec::new();
        let site = parse_site(
            &[(
                SITE_FILE_NAME,
                "built-in weft-site.xml".to_owned(),
                site_text.to_owned(),
            )],
            &mut warnings,
        )?;
        let alloc = parse_alloc("built-in fair-scheduler.xml", alloc_text, &mut warnings)?;
        let mut site = site;
        site.service.node_secret = read_node_secret(&site.service)?;
        let groups = group_source(&site.service)?;
        let (hosts, host_warnings) = HostLists::load(&site.service.hosts_files)?;
        warnings.extend(host_warnings);
        let (topology, topology_warnings) = Topology::load(&site.service.rack_mapping)?;
        warnings.extend(topology_warnings);
        if site.service.http_policy.is_https() {
            // The key material is named relative to a directory, and texts have none.
            return Err(ConfigError::HttpsWithoutDirectory);
        }
        Ok(RmConfig {
            source: ConfSource::Embedded,
            alloc_path: None,
            alloc,
            core: site.core,
            service: site.service,
            groups,
            hosts,
            dynamic_resources: DynamicResources::default(),
            topology,
            listing: Arc::new(site.listing),
            tls: None,
            warnings,
        })
    }
}

/// The group file at `path` (`weft.rm.groups.file`).
pub fn read_groups(path: &Path) -> Result<GroupFile, ConfigError> {
    GroupFile::parse(&read(path)?).map_err(|error| ConfigError::Groups {
        path: path.to_owned(),
        error,
    })
}

/// The node secret of `service`'s `weft.nm.secret.file`, read now; a file
/// that cannot be used stops the start.
fn read_node_secret(service: &ServiceSettings) -> Result<Option<NodeSecret>, ConfigError> {
    match &service.node_secret_file {
        Some(path) => Ok(Some(NodeSecret::read(path)?)),
        None => Ok(None),
    }
}

/// Users' groups as `service` configures them: the group file when one is
/// set (read now), else the mapping.
fn group_source(service: &ServiceSettings) -> Result<GroupSource, ConfigError> {
    match &service.groups_file {
        Some(path) => Ok(GroupSource::File(read_groups(path)?)),
        None => Ok(GroupSource::Mapping(service.group_mapping)),
    }
}

/// `yarn.admin.acl` as the site files in `dir` now have it, with the
/// warnings they give, for `refresh-admin-acls` (Hadoop's
/// `refreshAdminAcls` re-reads yarn-site.xml). As for `refresh-nodes`, site
/// files with a problem anywhere are refused whole.
pub fn reread_admin_acl(dir: &Path) -> Result<(Acl, Vec<String>), ConfigError> {
    let mut warnings = Vec::new();
    let site = read_site(dir, &mut warnings)?;
    Ok((site.scheduler.admin_acl, warnings))
}

/// Which of Hadoop's two names for `yarn.webapp.filter-entity-list-by-user`
/// to read from `site`, for the RM's settings and a node agent's alike:
/// Hadoop maps the older `yarn.resourcemanager.display.per-user-apps` onto
/// it, and here the newer wins when a file sets both.
pub fn filter_list_by_user_property(site: &HadoopConfig) -> &'static str {
    if site.value(names::FILTER_LIST_BY_USER).is_some() {
        names::FILTER_LIST_BY_USER
    } else {
        names::DISPLAY_PER_USER_APPS
    }
}

/// The core's settings as `weft rm --conf DIR` would read them from the
/// site files in `dir`, with the warnings they give (default settings, with
/// a warning, when there are none), for tools that show what an allocation
/// file means without starting an RM (`weft queues`). As at start, site
/// files with a problem anywhere are refused whole; the directory's other
/// files (allocation, group, hosts, topology) are not read.
pub fn read_core_settings(dir: &Path) -> Result<(CoreSettings, Vec<String>), ConfigError> {
    let mut warnings = Vec::new();
    let site = read_site(dir, &mut warnings)?;
    Ok((site.core, warnings))
}

/// The site files in `dir` (`SITE_FILES`, those present) as one
/// configuration, or default settings (with a warning) when neither
/// `weft-site.xml` nor `yarn-site.xml` is there.
fn read_site(dir: &Path, warnings: &mut Vec<String>) -> Result<Site, ConfigError> {
    let mut files = Vec::new();
    for name in SITE_FILES {
        let path = dir.join(name);
        if path.exists() {
            files.push((name, path.display().to_string(), read(&path)?));
        }
    }
    if !dir.join(SITE_FILE_NAME).exists() && !dir.join(YARN_SITE_FILE_NAME).exists() {
        warnings.push(format!(
            "{}: not found (nor is {YARN_SITE_FILE_NAME}); using default settings",
            dir.join(SITE_FILE_NAME).display()
        ));
    }
    parse_site(&files, warnings)
}

/// The node-list settings of a site file: the properties `refresh-nodes`
/// reads again on every call, as Hadoop's `rmadmin -refreshNodes` re-reads
/// yarn-site.xml, so that an operator can name, move or change the exclude
/// file, or the default drain timeout, without restarting the RM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeListSettings {
    /// The include and exclude files (resolved against the configuration directory).
    pub hosts_files: HostsFiles,
    /// A drain's timeout when neither the exclude file nor the request gives one.
    pub decommission_timeout: TimeoutSecs,
    /// Whether a draining node also waits for its apps to finish.
    pub decommission_wait_for_apps: bool,
}

impl ServiceSettings {
    /// Where `dynamic-resources.xml` is read, at start and on each
    /// `refresh-nodes-resources`: in the configuration directory, as Hadoop
    /// reads it from its own (`None` with the built-in configuration).
    pub fn dynamic_resources_file(&self) -> Option<PathBuf> {
        self.conf_dir
            .as_ref()
            .map(|d| d.join(crate::dynamic_resources::FILE_NAME))
    }

    /// The node-list settings as this configuration has them.
    pub fn node_lists(&self) -> NodeListSettings {
        NodeListSettings {
            hosts_files: self.hosts_files.clone(),
            decommission_timeout: self.decommission_timeout,
            decommission_wait_for_apps: self.decommission_wait_for_apps,
        }
    }
}

impl NodeListSettings {
    /// Reads the site files in `dir` again for their node-list settings;
    /// with the warnings they give. Site files with a problem anywhere are
    /// refused as a whole, as they would be at start: applying half of a
    /// configuration that would not start the RM would hide the mistake
    /// until the next restart.
    pub fn reread(dir: &Path) -> Result<(NodeListSettings, Vec<String>), ConfigError> {
        let mut warnings = Vec::new();
        let site = read_site(dir, &mut warnings)?;
        let mut lists = site.service.node_lists();
        lists.hosts_files = lists.hosts_files.resolved(dir);
        Ok((lists, warnings))
    }
}

fn resolve(dir: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_owned()
    } else {
        dir.join(p)
    }
}

struct Site {
    scheduler: SchedulerSettings,
    core: CoreSettings,
    service: ServiceSettings,
    /// `yarn.resourcemanager.scheduler.class` when set (it can only be
    /// Hadoop's FairScheduler).
    scheduler_class: Option<String>,
    /// Every property, for `/conf`.
    listing: ConfListing,
}

/// Reads `files` (each the file's name in a configuration directory, what
/// messages call it, and its text, in layering order) as one
/// configuration; every problem and warning names the file it is in.
fn parse_site(
    files: &[(&'static str, String, String)],
    warnings: &mut Vec<String>,
) -> Result<Site, ConfigError> {
    let names: Vec<&str> = files.iter().map(|(_, name, _)| name.as_str()).collect();
    let sources: Vec<&'static str> = files.iter().map(|(source, _, _)| *source).collect();
    let layers: Vec<Layer<'_>> = files
        .iter()
        .map(|(_, name, text)| Layer { name, text })
        .collect();
    let file_of = |location: Location| -> &str {
        names
            .get(usize::from(location.layer))
            .copied()
            .unwrap_or_default()
    };
    let site_err = |error: SiteError| ConfigError::Site {
        files: by_file(&names, error.problems, SiteProblem::location)
            .into_iter()
            .map(|(file, problems)| (file, SiteError { problems }))
            .collect(),
    };
    let config = HadoopConfig::parse_layered(&layers).map_err(site_err)?;
    let (scheduler, site_warnings) = SchedulerSettings::from_config(&config).map_err(site_err)?;
    for w in config.warnings().iter().chain(&site_warnings) {
        warnings.push(format!("{}: {w}", file_of(w.location())));
    }
    let (service, core_extra, service_warnings) =
        read_service(&config).map_err(|problems| ConfigError::Service {
            files: by_file(&names, problems, |p| p.location),
        })?;
    warnings.extend(
        service_warnings
            .into_iter()
            .map(|(location, w)| format!("{}: {location}: {w}", file_of(location))),
    );
    let scheduler_class = config
        .value(names::SCHEDULER_CLASS)
        .map(|v| v.trim().to_owned());
    let redactor = Redactor::from_config(&config).map_err(|error| {
        // Only a pattern the files give can be bad: Hadoop's own all compile.
        let location = config
            .get(listing::SENSITIVE_KEYS_PROPERTY)
            .map(|p| p.location);
        ConfigError::SensitiveKeys {
            file: location.map(file_of).unwrap_or_default().to_owned(),
            location,
            error,
        }
    })?;
    let listing = ConfListing::new(&config, &sources, &redactor);
    let core = CoreSettings {
        scheduler: scheduler.clone(),
        max_app_attempts: core_extra.max_app_attempts,
        max_completed_apps: core_extra.max_completed_apps,
        ..CoreSettings::default()
    };
    Ok(Site {
        scheduler,
        core,
        service,
        scheduler_class,
        listing,
    })
}

/// `items` (in location order) grouped by the file each is in, in
/// layering order.
fn by_file<T>(
    names: &[&str],
    items: Vec<T>,
    location: impl Fn(&T) -> Location,
) -> Vec<(String, Vec<T>)> {
    let mut res: Vec<(String, Vec<T>)> = Vec::new();
    for item in items {
        let layer = usize::from(location(&item).layer);
        let name = names.get(layer).copied().unwrap_or_default();
        match res.last_mut() {
            Some((file, group)) if file == name => group.push(item),
            _ => res.push((name.to_owned(), vec![item])),
        }
    }
    res
}

fn parse_alloc(
    name: &str,
    text: &str,
    warnings: &mut Vec<String>,
) -> Result<LoadedAllocConfig, ConfigError> {
    let loaded = parse_alloc_file(text).map_err(|error| ConfigError::AllocFile {
        file: name.to_owned(),
        error,
    })?;
    warnings.extend(loaded.warnings.iter().map(|w| format!("{name}:{w}")));
    Ok(loaded)
}

struct CoreExtra {
    max_app_attempts: u32,
    max_completed_apps: usize,
}

/// Every `weft.rm.*` name the service reads; others under the prefix are typos.
const KNOWN_SERVICE: &[&str] = &[
    names::LISTEN,
    names::RELOAD_INTERVAL,
    names::MIN_AGE,
    names::VIEW_REFRESH,
    names::MAX_REQUEST,
    names::COMMAND_QUEUE,
    names::EXPLAINS,
    names::EVENT_LOG,
    names::AUDIT_LOG,
    names::GROUPS_FILE,
    names::STATE_STORE,
    names::TOPOLOGY_TIMEOUT,
];

mod names {
    pub(super) const PREFIX: &str = "weft.rm.";
    pub(super) const LISTEN: &str = "weft.rm.listen";
    pub(super) const RELOAD_INTERVAL: &str = "weft.rm.alloc-file.reload-interval-ms";
    pub(super) const MIN_AGE: &str = "weft.rm.alloc-file.min-age-ms";
    pub(super) const VIEW_REFRESH: &str = "weft.rm.view-refresh-ms";
    pub(super) const MAX_REQUEST: &str = "weft.rm.max-request-bytes";
    pub(super) const COMMAND_QUEUE: &str = "weft.rm.command-queue";
    pub(super) const EXPLAINS: &str = "weft.rm.explain.max-per-second";
    pub(super) const EVENT_LOG: &str = "weft.rm.event-log.file";
    pub(super) const AUDIT_LOG: &str = "weft.rm.audit-log.file";
    pub(super) const GROUPS_FILE: &str = "weft.rm.groups.file";
    pub(super) const STATE_STORE: &str = "weft.rm.state-store.dir";
    pub(super) const GROUP_MAPPING: &str = "hadoop.security.group.mapping";
    pub(super) const GROUPS_CACHE_SECS: &str = "hadoop.security.groups.cache.secs";
    pub(super) const GROUPS_NEGATIVE_CACHE_SECS: &str =
        "hadoop.security.groups.negative-cache.secs";
    pub(super) const GROUPS_WARN_AFTER: &str = "hadoop.security.groups.cache.warn.after.ms";
    pub(super) const GROUPS_BACKGROUND_RELOAD: &str =
        "hadoop.security.groups.cache.background.reload";
    pub(super) const GROUPS_BACKGROUND_THREADS: &str =
        "hadoop.security.groups.cache.background.reload.threads";
    pub(super) const REST_SUBMISSIONS: &str = "yarn.webapp.enable-rest-app-submissions";
    pub(super) const FILTER_LIST_BY_USER: &str = "yarn.webapp.filter-entity-list-by-user";
    /// Hadoop's name for `FILTER_LIST_BY_USER` before 3.1, still mapped to it.
    pub(super) const DISPLAY_PER_USER_APPS: &str = "yarn.resourcemanager.display.per-user-apps";
    pub(super) const INSTRUMENTATION_REQUIRES_ADMIN: &str =
        "hadoop.security.instrumentation.requires.admin";
    pub(super) const MAX_ATTEMPTS: &str = "yarn.resourcemanager.am.max-attempts";
    pub(super) const MAX_COMPLETED: &str = "yarn.resourcemanager.max-completed-applications";
    pub(super) const STATE_STORE_MAX_COMPLETED: &str =
        "yarn.resourcemanager.state-store.max-completed-applications";
    pub(super) const DECOMMISSION_TIMEOUT: &str =
        "yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs";
    pub(super) const WAIT_FOR_APPS: &str =
        "yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications";
    pub(super) const TOPOLOGY_TIMEOUT: &str = "weft.rm.topology.timeout-ms";
    pub(super) const WEBAPP_ADDRESS: &str = "yarn.resourcemanager.webapp.address";
    pub(super) const WEBAPP_HTTPS_ADDRESS: &str = "yarn.resourcemanager.webapp.https.address";
    // Spelt out here (rather than `crate::tls`'s) for the listing's check
    // that every name read is listed.
    pub(super) const HTTP_POLICY: &str = "yarn.http.policy";
    pub(super) const SSL_SERVER_CONF: &str = "hadoop.ssl.server.conf";
    pub(super) const REQUIRE_CLIENT_CERT: &str = "hadoop.ssl.require.client.cert";
    pub(super) const RM_HOSTNAME: &str = "yarn.resourcemanager.hostname";
    pub(super) const BIND_HOST: &str = "yarn.resourcemanager.bind-host";
    pub(super) const SCHEDULER_CLASS: &str = "yarn.resourcemanager.scheduler.class";
    pub(super) const FAIR_SCHEDULER: &str =
        "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler";
    pub(super) const MAPPING_IMPL: &str = "net.topology.node.switch.mapping.impl";
    pub(super) const SCRIPT_MAPPING: &str = "org.apache.hadoop.net.ScriptBasedMapping";
    pub(super) const SCRIPT_MAPPING_WITH_DEPENDENCY: &str =
        "org.apache.hadoop.net.ScriptBasedMappingWithDependency";
    pub(super) const TABLE_MAPPING: &str = "org.apache.hadoop.net.TableMapping";
    pub(super) const SCRIPT_NUMBER_ARGS: &str = "net.topology.script.number.args";
}

/// Hadoop's port for the RM's web address.
const HADOOP_WEBAPP_PORT: u16 = 8088;
/// Hadoop's port for the RM's HTTPS web address.
const HADOOP_WEBAPP_HTTPS_PORT: u16 = 8090;

/// Hadoop ResourceManager settings Weft does not honour, by what they are
/// for: each group found in the site files is warned about once, at its
/// first property, saying what Weft does instead. The names of other
/// daemons (`yarn.nodemanager.*`, `mapreduce.*`, ...) and RM names with
/// nothing an operator needs to hear about are left alone: a shared
/// `yarn-site.xml` holds plenty of them.
const UNHONOURED: &[Unhonoured] = &[
    Unhonoured {
        matchers: &[
            Matcher::Name("yarn.resourcemanager.address"),
            Matcher::Name("yarn.resourcemanager.scheduler.address"),
            Matcher::Name("yarn.resourcemanager.resource-tracker.address"),
            Matcher::Name("yarn.resourcemanager.admin.address"),
        ],
        instead: "Weft speaks no Hadoop RPC: clients, node agents and application masters reach it over HTTP at its listen address (weft.rm.listen, else yarn.resourcemanager.webapp.address)",
    },
    Unhonoured {
        matchers: &[Matcher::Value("yarn.resourcemanager.ha.enabled", "true")],
        instead: "Weft has no ResourceManager high availability: this RM runs alone, and the per-RM names (yarn.resourcemanager.*.<rm-id>) are not read",
    },
    Unhonoured {
        matchers: &[
            Matcher::Prefix("yarn.resourcemanager.recovery."),
            Matcher::Prefix("yarn.resourcemanager.work-preserving-recovery."),
            Matcher::Prefix("yarn.resourcemanager.store."),
            Matcher::Prefix("yarn.resourcemanager.state-store."),
            Matcher::Prefix("yarn.resourcemanager.fs.state-store."),
            Matcher::Prefix("yarn.resourcemanager.zk-state-store."),
            Matcher::Prefix("yarn.resourcemanager.leveldb-state-store."),
        ],
        instead: "Weft keeps applications and drains across restarts in a directory of its own, weft.rm.state-store.dir (or weft rm --state-store)",
    },
    Unhonoured {
        matchers: &[
            Matcher::Value("hadoop.security.authentication", "kerberos"),
            Matcher::Name("yarn.resourcemanager.principal"),
            Matcher::Name("yarn.resourcemanager.keytab"),
        ],
        instead: "Weft has no Kerberos: a caller is whoever its user.name says, and the node and AM protocols are not authenticated, so run the RM where only trusted hosts reach it",
    },
];

/// A group of Hadoop settings Weft does not honour.
struct Unhonoured {
    /// The properties that belong to it.
    matchers: &'static [Matcher],
    /// What Weft does instead.
    instead: &'static str,
}

/// Which properties belong to a group.
enum Matcher {
    /// This name, whatever its value.
    Name(&'static str),
    /// Names starting so.
    Prefix(&'static str),
    /// This name with this value (in any case): only that value asks for
    /// something Weft does not do.
    Value(&'static str, &'static str),
}

impl Matcher {
    fn matches(&self, name: &str, value: &str) -> bool {
        match self {
            Matcher::Name(n) => name == *n,
            Matcher::Prefix(p) => name.starts_with(p),
            Matcher::Value(n, v) => name == *n && value.trim().eq_ignore_ascii_case(v),
        }
    }
}

/// A warning for each group of `UNHONOURED` the configuration sets, at the
/// group's first property, naming every one it sets.
fn unhonoured_warnings(config: &HadoopConfig) -> Vec<(Location, String)> {
    let mut res = Vec::new();
    for group in UNHONOURED {
        let mut set: Vec<_> = config
            .properties()
            .filter(|p| group.matchers.iter().any(|m| m.matches(&p.name, &p.value)))
            .collect();
        set.sort_by_key(|p| p.location);
        let Some(first) = set.first() else {
            continue;
        };
        let listed: Vec<&str> = set.iter().map(|p| p.name.as_str()).collect();
        let verb = if listed.len() == 1 { "is" } else { "are" };
        res.push((
            first.location,
            format!("{} {verb} ignored: {}", listed.join(", "), group.instead),
        ));
    }
    res
}

/// The RM's web address as Hadoop works it out: `webapp.address`, by
/// default `${yarn.resourcemanager.hostname}:8088` with the host name
/// `0.0.0.0` when it is not set, and `bind-host`, when set, in place of
/// its host; under HTTPS_ONLY the same with `webapp.https.address` and
/// port 8090. On a bad value, the property to blame and why.
fn hadoop_listen(
    config: &HadoopConfig,
    policy: HttpPolicy,
) -> Result<ListenAddress, (&'static str, &'static str)> {
    let (name, default, port) = match policy {
        HttpPolicy::HttpOnly => (
            names::WEBAPP_ADDRESS,
            "${yarn.resourcemanager.hostname}:8088",
            HADOOP_WEBAPP_PORT,
        ),
        HttpPolicy::HttpsOnly => (
            names::WEBAPP_HTTPS_ADDRESS,
            "${yarn.resourcemanager.hostname}:8090",
            HADOOP_WEBAPP_HTTPS_PORT,
        ),
    };
    let webapp = config.get(name);
    let blame = if webapp.is_some() {
        name
    } else {
        names::RM_HOSTNAME
    };
    let unusable = (
        blame,
        "does not make a host:port address such as rm1.example.com:8088",
    );
    let raw = webapp.map_or(default, |p| p.raw_value.as_str());
    let address = config
        .substitute_with_defaults(raw, &[(names::RM_HOSTNAME, "0.0.0.0")])
        .and_then(|v| parse_host_port(v.trim(), port))
        .ok_or(unusable)?;
    let bind_host = config.value(names::BIND_HOST).map(str::trim);
    match bind_host {
        Some(host) if !host.is_empty() => {
            let port = match &address {
                ListenAddress::Socket(a) => a.port(),
                ListenAddress::Host { port, .. } => *port,
            };
            with_port(host, port).ok_or((names::BIND_HOST, "is not a host name or address"))
        }
        _ => Ok(address),
    }
}

/// `host:port`, `host` (with `default_port`), an address with or without
/// its port, or `[v6]` likewise; `None` for anything else.
fn parse_host_port(text: &str, default_port: u16) -> Option<ListenAddress> {
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Some(ListenAddress::Socket(a));
    }
    if let Some(v6) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return with_port(v6, default_port);
    }
    if text.parse::<std::net::IpAddr>().is_ok() {
        return with_port(text, default_port);
    }
    match text.rsplit_once(':') {
        Some((host, port)) => with_port(host, port.parse().ok()?),
        None => with_port(text, default_port),
    }
}

/// `host` (a name or an address) with `port`; `None` when `host` is neither.
fn with_port(host: &str, port: u16) -> Option<ListenAddress> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Some(ListenAddress::Socket(SocketAddr::new(ip, port)));
    }
    let is_name = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    is_name.then(|| ListenAddress::Host {
        host: host.to_owned(),
        port,
    })
}

type ServiceRead = (ServiceSettings, CoreExtra, Vec<(Location, String)>);

fn read_service(config: &HadoopConfig) -> Result<ServiceRead, Vec<ServiceProblem>> {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let mut s = ServiceSettings::default();
    let defaults = CoreSettings::default();
    let mut extra = CoreExtra {
        max_app_attempts: defaults.max_app_attempts,
        max_completed_apps: defaults.max_completed_apps,
    };
    let mut bad = |name: &str, why: &'static str| {
        if let Some(p) = config.get(name) {
            problems.push(ServiceProblem {
                location: p.location,
                name: name.to_owned(),
                value: p.value.clone(),
                why,
            });
        }
    };
    let value = |name: &str| config.value(name).map(str::trim);
    if let Some(v) = value(names::HTTP_POLICY) {
        match HttpPolicy::parse(v) {
            Ok(policy) => s.http_policy = policy,
            Err(why) => bad(names::HTTP_POLICY, why),
        }
    }
    if value(names::REQUIRE_CLIENT_CERT).is_some_and(|v| v != "false") {
        bad(
            names::REQUIRE_CLIENT_CERT,
            "is not false: Weft does not ask clients for certificates (callers are who their user.name says); remove it or set false",
        );
    }
    if let Some(v) = value(names::SSL_SERVER_CONF).filter(|v| !v.is_empty()) {
        s.ssl_server_conf = PathBuf::from(v);
    }
    let webapp_address = match s.http_policy {
        HttpPolicy::HttpOnly => names::WEBAPP_ADDRESS,
        HttpPolicy::HttpsOnly => names::WEBAPP_HTTPS_ADDRESS,
    };
    if s.http_policy.is_https() {
        s.listen =
            ListenAddress::Socket(SocketAddr::from(([127, 0, 0, 1], HADOOP_WEBAPP_HTTPS_PORT)));
    }
    if let Some(v) = value(names::LISTEN) {
        match v.parse() {
            Ok(a) => s.listen = ListenAddress::Socket(a),
            Err(_) => bad(
                names::LISTEN,
                "is not a socket address such as 127.0.0.1:8088",
            ),
        }
    } else if [webapp_address, names::RM_HOSTNAME, names::BIND_HOST]
        .iter()
        .any(|n| config.get(n).is_some())
    {
        // Only when a Hadoop file says where: Hadoop's own default,
        // every interface, is not Weft's (see `ServiceSettings::listen`).
        match hadoop_listen(config, s.http_policy) {
            Ok(a) => s.listen = a,
            Err((name, why)) => bad(name, why),
        }
    }
    if value(names::SCHEDULER_CLASS).is_some_and(|v| v != names::FAIR_SCHEDULER) {
        bad(
            names::SCHEDULER_CLASS,
            "is not Hadoop's FairScheduler (org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler): Weft is a Fair Scheduler, and would run a configuration written for another scheduler by rules it was not written for; name the FairScheduler or remove the property",
        );
    }
    let script = value(crate::topology::SCRIPT_PROPERTY).filter(|v| !v.is_empty());
    let table = value(crate::topology::TABLE_PROPERTY).filter(|v| !v.is_empty());
    match value(names::MAPPING_IMPL) {
        None | Some(names::SCRIPT_MAPPING | names::SCRIPT_MAPPING_WITH_DEPENDENCY) => {
            if let Some(path) = script {
                s.rack_mapping = RackMapping::Script {
                    path: PathBuf::from(path),
                };
            }
        }
        Some(names::TABLE_MAPPING) => {
            s.rack_mapping = RackMapping::Table {
                path: table.map(PathBuf::from),
            };
        }
        Some(_) => bad(
            names::MAPPING_IMPL,
            "is not a mapping Weft has: org.apache.hadoop.net.ScriptBasedMapping (a script; Hadoop's default) or org.apache.hadoop.net.TableMapping (a file)",
        ),
    }
    // Weft asks about one host at a time, as Hadoop's RM does, so the
    // count never binds; a value Hadoop would fail every call with is
    // still refused.
    if value(names::SCRIPT_NUMBER_ARGS).is_some_and(|v| !v.parse::<i32>().is_ok_and(|n| n >= 1)) {
        bad(names::SCRIPT_NUMBER_ARGS, "is not a positive whole number");
    }
    let mut millis = |name: &str, target: &mut Duration, min: u64| {
        if let Some(v) = value(name) {
            match v.parse::<u64>() {
                Ok(ms) if ms >= min => *target = Duration::from_millis(ms),
                _ if min == 0 => bad(name, "is not a whole number of milliseconds (0 or more)"),
                _ => bad(name, "is not a whole number of milliseconds (1 or more)"),
            }
        }
    };
    millis(names::RELOAD_INTERVAL, &mut s.alloc_reload_interval, 1);
    millis(names::MIN_AGE, &mut s.alloc_min_age, 0);
    millis(names::VIEW_REFRESH, &mut s.view_refresh, 0);
    millis(names::TOPOLOGY_TIMEOUT, &mut s.topology_timeout, 1);
    let mut count = |name: &str, min: u64| -> Option<u64> {
        let v = value(name)?;
        match v.parse::<u64>() {
            Ok(n) if n >= min => Some(n),
            _ if min == 0 => {
                bad(name, "is not a whole number (0 or more)");
                None
            }
            _ => {
                bad(
                    name,
                    if min == 0 {
                        "is not a whole number (0 or more)"
                    } else {
                        "is not a positive whole number"
                    },
                );
                None
            }
        }
    };
    if let Some(n) = count(names::MAX_REQUEST, 1) {
        s.max_request_bytes = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(n) = count(names::COMMAND_QUEUE, 1) {
        s.command_queue = usize::try_from(n).unwrap_or(usize::MAX).min(1 << 24);
    }
    if let Some(n) = count(names::EXPLAINS, 0) {
        // A million a second is far past what one scheduler thread could
        // serve anyway; the cap keeps the token arithmetic exact.
        s.explains_per_second = u32::try_from(n).unwrap_or(u32::MAX).min(1_000_000);
    }
    if let Some(n) = count(names::MAX_ATTEMPTS, 1) {
        extra.max_app_attempts = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(n) = count(names::MAX_COMPLETED, 0) {
        extra.max_completed_apps = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(n) = count(names::GROUPS_BACKGROUND_THREADS, 1) {
        // Past a thousand threads a name service is being flooded, not helped.
        s.groups_cache.background_threads = usize::try_from(n).unwrap_or(usize::MAX).min(1024);
    }
    if let Some(n) = count(names::GROUPS_WARN_AFTER, 0) {
        s.groups_cache.warn_after = std::time::Duration::from_millis(n);
    }
    // Hadoop keeps no more in the store than in memory: the rest would be
    // forgotten again as soon as they were taken back.
    s.state_store_max_completed_apps = count(names::STATE_STORE_MAX_COMPLETED, 0)
        .map_or(extra.max_completed_apps, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        })
        .min(extra.max_completed_apps);
    let filter_list_name = filter_list_by_user_property(config);
    for (name, target) in [
        (names::REST_SUBMISSIONS, &mut s.rest_submissions),
        (filter_list_name, &mut s.filter_entity_list_by_user),
        (
            names::INSTRUMENTATION_REQUIRES_ADMIN,
            &mut s.instrumentation_requires_admin,
        ),
        (names::WAIT_FOR_APPS, &mut s.decommission_wait_for_apps),
        (
            names::GROUPS_BACKGROUND_RELOAD,
            &mut s.groups_cache.background_reload,
        ),
    ] {
        match value(name) {
            Some("true") => *target = true,
            Some("false") => *target = false,
            Some(_) => bad(name, "is not a boolean (true or false)"),
            None => {}
        }
    }
    if let Some(v) = value(names::DECOMMISSION_TIMEOUT) {
        // Hadoop reads it as an int.
        match v.parse::<i32>() {
            Ok(secs) => s.decommission_timeout = TimeoutSecs(i64::from(secs)),
            Err(_) => bad(
                names::DECOMMISSION_TIMEOUT,
                "is not a whole number of seconds (negative for no timeout)",
            ),
        }
    }
    s.hosts_files = HostsFiles {
        include: value(crate::hosts::INCLUDE_PROPERTY)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        exclude: value(crate::hosts::EXCLUDE_PROPERTY)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
    };
    s.event_log = value(names::EVENT_LOG)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    s.audit_log = value(names::AUDIT_LOG)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    s.groups_file = value(names::GROUPS_FILE)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    s.node_secret_file = value(crate::node_secret::PROPERTY)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    // Hadoop reads both as longs of seconds; its cache refuses a time of 0,
    // and takes 0 or less as "no negative cache".
    if let Some(v) = value(names::GROUPS_CACHE_SECS) {
        match v.parse::<u64>() {
            Ok(secs) if secs > 0 => s.groups_cache.ttl = std::time::Duration::from_secs(secs),
            _ => bad(
                names::GROUPS_CACHE_SECS,
                "is not a whole number of seconds (1 or more)",
            ),
        }
    }
    if let Some(v) = value(names::GROUPS_NEGATIVE_CACHE_SECS) {
        match v.parse::<i64>() {
            Ok(secs) => {
                s.groups_cache.negative_ttl = u64::try_from(secs)
                    .ok()
                    .filter(|secs| *secs > 0)
                    .map(std::time::Duration::from_secs);
            }
            Err(_) => bad(
                names::GROUPS_NEGATIVE_CACHE_SECS,
                "is not a whole number of seconds (0 or less turns the negative cache off)",
            ),
        }
    }
    if let Some(p) = config.get(names::GROUP_MAPPING) {
        let class = p.value.trim();
        if class.is_empty() {
            // An empty value leaves Hadoop's default in force.
        } else if s.groups_file.is_some() {
            warnings.push((
                p.location,
                format!(
                    "{} is not used: {} is set, and the file gives every user's groups",
                    names::GROUP_MAPPING,
                    names::GROUPS_FILE
                ),
            ));
        } else {
            match MappingClass::from_class_name(class) {
                Ok(class) => s.group_mapping = class,
                Err(unsupported) => bad(names::GROUP_MAPPING, unsupported.why()),
            }
        }
    }
    s.state_store = value(names::STATE_STORE)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    for p in config.with_prefix(names::PREFIX) {
        if !KNOWN_SERVICE.contains(&p.name.as_str()) {
            warnings.push((
                p.location,
                format!("unknown service property {} (a typo?) is ignored", p.name),
            ));
        }
    }
    warnings.extend(unhonoured_warnings(config));
    warnings.sort_by_key(|(location, _)| *location);
    if problems.is_empty() {
        Ok((s, extra, warnings))
    } else {
        problems.sort_by_key(|p| p.location);
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    use weft_test_support::site_xml as site;

    #[test]
    fn the_shipped_configuration_loads_without_warnings() {
        let config = RmConfig::load(None).unwrap();
        assert_eq!(config.warnings, Vec::<String>::new());
        assert_eq!(config.source, ConfSource::Embedded);
        assert!(config.alloc.config.queues.len() > 3);
    }

    #[test]
    fn service_properties_are_read_and_checked() {
        let text = site(&[
            ("weft.rm.listen", "0.0.0.0:9000"),
            ("weft.rm.view-refresh-ms", "0"),
            ("weft.rm.event-log.file", "events.jsonl"),
            ("weft.rm.state-store.dir", "state"),
            ("yarn.resourcemanager.am.max-attempts", "4"),
            ("weft.rm.explain.max-per-second", "7"),
            ("weft.rm.lsiten", "x"),
        ]);
        let config = RmConfig::from_texts(&text, "<allocations/>").unwrap();
        assert_eq!(config.service.listen.to_string(), "0.0.0.0:9000");
        assert_eq!(config.service.view_refresh, Duration::ZERO);
        assert_eq!(
            config.service.event_log,
            Some(PathBuf::from("events.jsonl"))
        );
        assert_eq!(config.service.state_store, Some(PathBuf::from("state")));
        assert_eq!(config.core.max_app_attempts, 4);
        assert_eq!(config.service.explains_per_second, 7);
        expect![[r#"
            [
                "built-in weft-site.xml: line 8, column 38: unknown service property weft.rm.lsiten (a typo?) is ignored",
            ]
        "#]]
        .assert_debug_eq(&config.warnings);

        let text = site(&[
            ("weft.rm.listen", "localhost"),
            ("weft.rm.max-request-bytes", "0"),
            ("yarn.webapp.enable-rest-app-submissions", "maybe"),
            ("weft.rm.explain.max-per-second", "-1"),
        ]);
        let err = RmConfig::from_texts(&text, "<allocations/>").unwrap_err();
        expect![[r#"
            built-in weft-site.xml: invalid service settings:
              line 2, column 38: property weft.rm.listen: "localhost" is not a socket address such as 127.0.0.1:8088
              line 3, column 49: property weft.rm.max-request-bytes: "0" is not a positive whole number
              line 4, column 63: property yarn.webapp.enable-rest-app-submissions: "maybe" is not a boolean (true or false)
              line 5, column 54: property weft.rm.explain.max-per-second: "-1" is not a whole number (0 or more)"#]]
        .assert_eq(&err.to_string());
    }

    #[test]
    fn group_mapping_properties_are_read_and_checked() {
        // Hadoop's defaults: the operating system's groups, cached 300 s,
        // users in no group remembered 30 s.
        let config = RmConfig::from_texts("<configuration/>", "<allocations/>").unwrap();
        assert_eq!(
            config.groups,
            GroupSource::Mapping(MappingClass::JniWithFallback)
        );
        assert_eq!(config.service.groups_cache, GroupCacheSettings::default());
        assert_eq!(
            config.service.groups_cache.ttl,
            std::time::Duration::from_secs(300)
        );
        assert_eq!(
            config.service.groups_cache.negative_ttl,
            Some(std::time::Duration::from_secs(30))
        );

        let text = site(&[
            (
                "hadoop.security.group.mapping",
                " org.apache.hadoop.security.ShellBasedUnixGroupsMapping ",
            ),
            ("hadoop.security.groups.cache.secs", "60"),
            ("hadoop.security.groups.negative-cache.secs", "-1"),
            ("hadoop.security.groups.cache.warn.after.ms", "100"),
            ("hadoop.security.groups.cache.background.reload", "true"),
            (
                "hadoop.security.groups.cache.background.reload.threads",
                "5",
            ),
        ]);
        let config = RmConfig::from_texts(&text, "<allocations/>").unwrap();
        assert_eq!(config.groups, GroupSource::Mapping(MappingClass::Shell));
        assert_eq!(
            config.service.groups_cache,
            GroupCacheSettings {
                ttl: std::time::Duration::from_secs(60),
                negative_ttl: None,
                warn_after: std::time::Duration::from_millis(100),
                background_reload: true,
                background_threads: 5,
            }
        );
        assert_eq!(config.warnings, Vec::<String>::new());

        let text = site(&[(
            "hadoop.security.group.mapping",
            "org.apache.hadoop.security.NullGroupsMapping",
        )]);
        let config = RmConfig::from_texts(&text, "<allocations/>").unwrap();
        assert_eq!(config.groups, GroupSource::Mapping(MappingClass::Null));

        let text = site(&[
            (
                "hadoop.security.group.mapping",
                "org.apache.hadoop.security.LdapGroupsMapping",
            ),
            ("hadoop.security.groups.cache.secs", "0"),
            (
                "hadoop.security.groups.negative-cache.secs",
                "half a minute",
            ),
            ("hadoop.security.groups.cache.background.reload", "yes"),
            (
                "hadoop.security.groups.cache.background.reload.threads",
                "0",
            ),
        ]);
        let err = RmConfig::from_texts(&text, "<allocations/>").unwrap_err();
        expect![[r#"
            built-in weft-site.xml: invalid service settings:
              line 2, column 53: property hadoop.security.group.mapping: "org.apache.hadoop.security.LdapGroupsMapping" is not a group mapping Weft implements; it takes org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback (the default), org.apache.hadoop.security.JniBasedUnixGroupsMapping or org.apache.hadoop.security.ShellBasedUnixGroupsMapping (each gives the groups the operating system reports, as id -Gn does) and org.apache.hadoop.security.NullGroupsMapping (no groups); groups kept elsewhere (LDAP) can be listed in weft.rm.groups.file
              line 3, column 57: property hadoop.security.groups.cache.secs: "0" is not a whole number of seconds (1 or more)
              line 4, column 66: property hadoop.security.groups.negative-cache.secs: "half a minute" is not a whole number of seconds (0 or less turns the negative cache off)
              line 5, column 70: property hadoop.security.groups.cache.background.reload: "yes" is not a boolean (true or false)
              line 6, column 78: property hadoop.security.groups.cache.background.reload.threads: "0" is not a positive whole number"#]]
        .assert_eq(&err.to_string());

        let text = site(&[(
            "hadoop.security.group.mapping",
            "org.apache.hadoop.security.ShellBasedUnixGroupsNetgroupMapping",
        )]);
        let err = RmConfig::from_texts(&text, "<allocations/>").unwrap_err();
        expect![[r#"
            built-in weft-site.xml: invalid service settings:
              line 2, column 53: property hadoop.security.group.mapping: "org.apache.hadoop.security.ShellBasedUnixGroupsNetgroupMapping" is a netgroup mapping, and Weft does not resolve netgroups (@name in ACLs); use org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback (the default) for the operating system's groups, or list users' groups in weft.rm.groups.file"#]]
        .assert_eq(&err.to_string());
    }

    #[test]
    fn the_state_store_keeps_as_many_ended_apps_as_history_unless_told_fewer() {
        let kept = |props: &[(&str, &str)]| {
            let config = RmConfig::from_texts(&site(props), "<allocations/>").unwrap();
            (
                config.core.max_completed_apps,
                config.service.state_store_max_completed_apps,
            )
        };
        const STORE: &str = "yarn.resourcemanager.state-store.max-completed-applications";
        const MEMORY: &str = "yarn.resourcemanager.max-completed-applications";
        assert_eq!(kept(&[]), (1000, 1000));
        assert_eq!(kept(&[(MEMORY, "50")]), (50, 50));
        assert_eq!(kept(&[(STORE, "20")]), (1000, 20));
        assert_eq!(kept(&[(STORE, "0")]), (1000, 0));
        // Never more than history holds, as in Hadoop.
        assert_eq!(kept(&[(MEMORY, "50"), (STORE, "5000")]), (50, 50));

        let text = site(&[(STORE, "-1"), (MEMORY, "lots")]);
        let err = RmConfig::from_texts(&text, "<allocations/>").unwrap_err();
        expect![[r#"
            built-in weft-site.xml: invalid service settings:
              line 2, column 83: property yarn.resourcemanager.state-store.max-completed-applications: "-1" is not a whole number (0 or more)
              line 3, column 71: property yarn.resourcemanager.max-completed-applications: "lots" is not a whole number (0 or more)"#]]
        .assert_eq(&err.to_string());
    }

    #[test]
    fn a_group_file_replaces_the_mapping_which_is_then_not_used() {
        let dir = std::env::temp_dir().join(format!("weft-conf-groups-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(SITE_FILE_NAME),
            site(&[
                ("weft.rm.groups.file", "groups"),
                (
                    "hadoop.security.group.mapping",
                    "org.apache.hadoop.security.LdapGroupsMapping",
                ),
            ]),
        )
        .unwrap();
        std::fs::write(dir.join("groups"), "alice: eng\n").unwrap();
        let config = RmConfig::load(Some(&dir)).unwrap();
        assert_eq!(
            config.groups,
            GroupSource::File(GroupFile::parse("alice: eng").unwrap())
        );
        let warnings: Vec<String> = config
            .warnings
            .iter()
            .map(|w| w.replace(&dir.display().to_string(), "<dir>"))
            .filter(|w| !w.contains("fair-scheduler.xml"))
            .collect();
        expect![[r#"
            [
                "<dir>/weft-site.xml: line 3, column 53: hadoop.security.group.mapping is not used: weft.rm.groups.file is set, and the file gives every user's groups",
            ]
        "#]]
        .assert_debug_eq(&warnings);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn decommissioning_properties_are_read_and_checked() {
        let config = RmConfig::from_texts("<configuration/>", "<allocations/>").unwrap();
        assert_eq!(config.service.decommission_timeout, TimeoutSecs(3600));
        assert!(config.service.decommission_wait_for_apps);
        assert_eq!(config.service.hosts_files, HostsFiles::default());
        assert_eq!(config.hosts, HostLists::default());

        let text = site(&[
            (
                "yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs",
                "-1",
            ),
            (
                "yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications",
                "false",
            ),
        ]);
        let config = RmConfig::from_texts(&text, "<allocations/>").unwrap();
        assert_eq!(config.service.decommission_timeout, TimeoutSecs(-1));
        assert!(!config.service.decommission_wait_for_apps);

        let text = site(&[
            (
                "yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs",
                "an hour",
            ),
            (
                "yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications",
                "yes",
            ),
        ]);
        let err = RmConfig::from_texts(&text, "<allocations/>").unwrap_err();
        expect![[r#"
            built-in weft-site.xml: invalid service settings:
              line 2, column 91: property yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs: "an hour" is not a whole number of seconds (negative for no timeout)
              line 3, column 96: property yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications: "yes" is not a boolean (true or false)"#]]
        .assert_eq(&err.to_string());
    }

    #[test]
    fn hosts_files_are_read_at_start_relative_to_the_directory() {
        let dir = std::env::temp_dir().join(format!("weft-conf-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(SITE_FILE_NAME),
            site(&[
                ("yarn.resourcemanager.nodes.include-path", "nodes.include"),
                (
                    "yarn.resourcemanager.nodes.exclude-path",
                    "nodes.exclude.xml",
                ),
            ]),
        )
        .unwrap();
        std::fs::write(dir.join("nodes.include"), "h1 h2\n").unwrap();
        std::fs::write(
            dir.join("nodes.exclude.xml"),
            "<hosts><host><name>h2</name><timeout>60</timeout></host></hosts>",
        )
        .unwrap();
        let config = RmConfig::load(Some(&dir)).unwrap();
        assert_eq!(
            config.service.hosts_files.include,
            Some(dir.join("nodes.include"))
        );
        let node = |id: &str| id.parse::<weft_model::NodeId>().unwrap();
        assert!(config.hosts.check(&node("h1:1")).is_ok());
        assert!(config.hosts.check(&node("h2:1")).is_err());
        assert!(config.hosts.check(&node("h3:1")).is_err());
        assert_eq!(
            config.hosts.exclude_timeout(&node("h2:1")),
            Some(TimeoutSecs(60))
        );

        // A bad or missing file stops the start, naming file and property.
        std::fs::write(dir.join("nodes.exclude.xml"), "<hosts><host/></hosts>").unwrap();
        let err = RmConfig::load(Some(&dir)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "the exclude file {} (yarn.resourcemanager.nodes.exclude-path) is invalid:\n  line 1, column 8: a <host> without a <name>: it names no host",
                dir.join("nodes.exclude.xml").display()
            )
        );
        std::fs::remove_file(dir.join("nodes.include")).unwrap();
        let err = RmConfig::load(Some(&dir)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read the include file {} (yarn.resourcemanager.nodes.include-path): No such file or directory (os error 2)",
                dir.join("nodes.include").display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A configuration directory of a test's own, removed at the end.
    struct ConfDir(PathBuf);

    impl ConfDir {
        fn new(name: &str, files: &[(&str, &str)]) -> ConfDir {
            let dir = std::env::temp_dir().join(format!("weft-conf-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            for (file, text) in files {
                std::fs::write(dir.join(file), text).unwrap();
            }
            ConfDir(dir)
        }

        fn load(&self) -> Result<RmConfig, ConfigError> {
            RmConfig::load(Some(&self.0))
        }

        /// `text` with this directory written `<dir>`.
        fn hide(&self, text: &str) -> String {
            text.replace(&self.0.display().to_string(), "<dir>")
        }
    }

    impl Drop for ConfDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn https_only_listens_on_the_https_address_with_the_key_material_beside() {
        let pki = weft_test_support::tls::TestPki::new("test CA");
        // Where the RM listens with this yarn-site.xml and the key material in place.
        let listen = |name: &str, props: &[(&str, &str)]| -> String {
            let dir = ConfDir::new(name, &[(YARN_SITE_FILE_NAME, &site(props))]);
            pki.write_conf(&dir.0);
            match dir.load() {
                Ok(config) => {
                    assert!(config.tls.is_some());
                    assert_eq!(config.service.http_policy, HttpPolicy::HttpsOnly);
                    config.service.listen.to_string()
                }
                Err(e) => dir.hide(&e.to_string()),
            }
        };
        let https = ("yarn.http.policy", "HTTPS_ONLY");
        // Nothing said: the HTTPS port on the loopback, as 8088 is for HTTP.
        assert_eq!(listen("https-default", &[https]), "127.0.0.1:8090");
        assert_eq!(
            listen(
                "https-address",
                &[
                    https,
                    ("yarn.resourcemanager.webapp.address", "rm1:8088"),
                    ("yarn.resourcemanager.webapp.https.address", "10.0.0.5:9443"),
                ]
            ),
            "10.0.0.5:9443"
        );
        // Hadoop's default for the HTTPS address, from the host name.
        assert_eq!(
            listen(
                "https-hostname",
                &[https, ("yarn.resourcemanager.hostname", "10.0.0.6")]
            ),
            "10.0.0.6:8090"
        );
        assert_eq!(
            listen(
                "https-listen",
                &[https, ("weft.rm.listen", "127.0.0.1:7443")]
            ),
            "127.0.0.1:7443"
        );
        // Hadoop names the resource in core-site.xml; here any site file will do.
        assert_eq!(
            listen(
                "https-resource",
                &[https, ("hadoop.ssl.server.conf", "nowhere/ssl-server.xml")]
            ),
            "cannot serve HTTPS (yarn.http.policy is HTTPS_ONLY): cannot read <dir>/nowhere/ssl-server.xml (the SSL resource hadoop.ssl.server.conf names): No such file or directory (os error 2)"
        );
        // HTTP_ONLY reads no key material, even where it is broken.
        let dir = ConfDir::new(
            "http-only",
            &[
                (
                    YARN_SITE_FILE_NAME,
                    &site(&[("yarn.http.policy", "http_only")]),
                ),
                ("ssl-server.xml", "<configuration>"),
            ],
        );
        let config = dir.load().unwrap();
        assert!(config.tls.is_none());
        assert_eq!(config.service.listen.to_string(), "127.0.0.1:8088");
    }

    #[test]
    fn bad_https_settings_are_located() {
        assert_eq!(names::HTTP_POLICY, crate::tls::POLICY_PROPERTY);
        assert_eq!(names::SSL_SERVER_CONF, crate::tls::SERVER_CONF_PROPERTY);
        assert_eq!(
            names::REQUIRE_CLIENT_CERT,
            crate::tls::REQUIRE_CLIENT_CERT_PROPERTY
        );
        let err =
            |props: &[(&str, &str)]| match RmConfig::from_texts(&site(props), "<allocations/>") {
                Ok(_) => "accepted".to_owned(),
                Err(e) => e.to_string(),
            };
        expect![[r#"
            built-in weft-site.xml: invalid service settings:
              line 2, column 40: property yarn.http.policy: "HTTP_AND_HTTPS" is not a policy Weft has: it serves one scheme on one address, HTTP_ONLY or HTTPS_ONLY
              line 3, column 54: property hadoop.ssl.require.client.cert: "true" is not false: Weft does not ask clients for certificates (callers are who their user.name says); remove it or set false"#]]
        .assert_eq(&err(&[
            ("yarn.http.policy", "HTTP_AND_HTTPS"),
            ("hadoop.ssl.require.client.cert", "true"),
        ]));
        assert_eq!(
            err(&[("yarn.http.policy", "SSL")]),
            "built-in weft-site.xml: invalid service settings:\n  line 2, column 40: property yarn.http.policy: \"SSL\" is not HTTP_ONLY or HTTPS_ONLY"
        );
        // The built-in copies have no directory to find ssl-server.xml in.
        assert_eq!(
            err(&[("yarn.http.policy", "HTTPS_ONLY")]),
            "yarn.http.policy is HTTPS_ONLY, which needs a configuration directory holding ssl-server.xml (weft rm --conf DIR)"
        );
    }

    /// A Hadoop cluster's yarn-site.xml, as it would be found in /etc/hadoop/conf.
    const HADOOP_YARN_SITE: &str = r#"<configuration>
  <property><name>yarn.resourcemanager.hostname</name><value>rm1.example.com</value></property>
  <property><name>yarn.resourcemanager.address</name><value>${yarn.resourcemanager.hostname}:8032</value></property>
  <property><name>yarn.resourcemanager.scheduler.address</name><value>${yarn.resourcemanager.hostname}:8030</value></property>
  <property><name>yarn.resourcemanager.scheduler.class</name><value>org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler</value></property>
  <property><name>yarn.resourcemanager.recovery.enabled</name><value>true</value></property>
  <property><name>yarn.resourcemanager.store.class</name><value>org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore</value></property>
  <property><name>yarn.nodemanager.aux-services</name><value>mapreduce_shuffle</value></property>
  <property><name>yarn.nodemanager.resource.memory-mb</name><value>65536</value></property>
  <property><name>yarn.scheduler.maximum-allocation-mb</name><value>32768</value><final>true</final></property>
  <property><name>yarn.scheduler.minimum-allocation-mb</name><value>512</value></property>
  <property><name>yarn.admin.acl</name><value>yarn</value></property>
</configuration>"#;

    #[test]
    fn a_hadoop_directory_is_read_with_weft_site_over_it() {
        let dir = ConfDir::new(
            "hadoop",
            &[
                (YARN_SITE_FILE_NAME, HADOOP_YARN_SITE),
                ("fair-scheduler.xml", "<allocations/>"),
            ],
        );
        let config = dir.load().unwrap();
        // The RM's web address is Hadoop's: the host name substituted in
        // its default, looked up when the service binds.
        assert_eq!(config.service.listen.to_string(), "rm1.example.com:8088");
        assert_eq!(config.core.scheduler.max_allocation().memory_mb(), 32768);
        assert_eq!(config.core.scheduler.min_allocation().memory_mb(), 512);
        // NodeManager properties pass in silence; the RM's unhonoured
        // groups get one warning each, naming what Weft does instead.
        expect![[r#"
            [
                "<dir>/yarn-site.xml: line 3, column 54: yarn.resourcemanager.address, yarn.resourcemanager.scheduler.address are ignored: Weft speaks no Hadoop RPC: clients, node agents and application masters reach it over HTTP at its listen address (weft.rm.listen, else yarn.resourcemanager.webapp.address)",
                "<dir>/yarn-site.xml: line 6, column 63: yarn.resourcemanager.recovery.enabled, yarn.resourcemanager.store.class are ignored: Weft keeps applications and drains across restarts in a directory of its own, weft.rm.state-store.dir (or weft rm --state-store)",
            ]
        "#]]
        .assert_debug_eq(&dir.hide(&config.warnings.join("\n")).lines().collect::<Vec<_>>());

        // weft-site.xml goes over it property by property; a final value
        // stays, with a warning naming both files.
        std::fs::write(
            dir.0.join(SITE_FILE_NAME),
            site(&[
                ("weft.rm.listen", "127.0.0.1:9088"),
                ("yarn.scheduler.minimum-allocation-mb", "1024"),
                ("yarn.scheduler.maximum-allocation-mb", "8192"),
            ]),
        )
        .unwrap();
        let config = dir.load().unwrap();
        assert_eq!(config.service.listen.to_string(), "127.0.0.1:9088");
        assert_eq!(config.core.scheduler.min_allocation().memory_mb(), 1024);
        assert_eq!(config.core.scheduler.max_allocation().memory_mb(), 32768);
        expect![[r#"
            "<dir>/weft-site.xml: line 4, column 60: property yarn.scheduler.maximum-allocation-mb is final (set at line 10, column 62 of <dir>/yarn-site.xml); this later value is ignored"
        "#]]
        .assert_debug_eq(&dir.hide(&config.warnings[0]));
        assert_eq!(config.warnings.len(), 3, "{:?}", config.warnings);
    }

    #[test]
    fn core_settings_are_read_from_the_site_files_alone() {
        // A broken allocation file and a missing group file would stop
        // `RmConfig::load`; a tool that brings its own allocation file only
        // needs the scheduler's properties.
        let dir = ConfDir::new(
            "core-settings",
            &[
                (
                    YARN_SITE_FILE_NAME,
                    site(&[
                        ("yarn.acl.enable", "true"),
                        ("yarn.scheduler.fair.user-as-default-queue", "false"),
                    ])
                    .as_str(),
                ),
                (
                    SITE_FILE_NAME,
                    site(&[
                        ("yarn.scheduler.maximum-allocation-mb", "4096"),
                        ("weft.rm.groups.file", "missing-groups"),
                    ])
                    .as_str(),
                ),
                ("fair-scheduler.xml", "<allocations><queue/>"),
            ],
        );
        assert!(dir.load().is_err());
        let (core, warnings) = read_core_settings(&dir.0).unwrap();
        assert!(core.scheduler.acl_enable);
        assert!(!core.scheduler.user_as_default_queue);
        assert_eq!(core.scheduler.max_allocation().memory_mb(), 4096);
        assert_eq!(warnings, Vec::<String>::new());
        // A bad value is refused as at start, naming its file.
        std::fs::write(
            dir.0.join(SITE_FILE_NAME),
            site(&[("yarn.acl.enable", "maybe")]),
        )
        .unwrap();
        let err = read_core_settings(&dir.0).unwrap_err();
        assert!(
            dir.hide(&err.to_string())
                .starts_with("<dir>/weft-site.xml: the site configuration has 1 problem:"),
            "{err}"
        );
        // No site file: Hadoop's defaults, with a warning.
        let empty = ConfDir::new("core-settings-empty", &[]);
        let (core, warnings) = read_core_settings(&empty.0).unwrap();
        assert_eq!(core, CoreSettings::default());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
    }

    #[test]
    fn problems_name_the_file_they_are_in() {
        let dir = ConfDir::new(
            "two-files",
            &[
                (
                    YARN_SITE_FILE_NAME,
                    &site(&[
                        (
                            "yarn.resourcemanager.scheduler.class",
                            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler",
                        ),
                        ("yarn.resourcemanager.webapp.address", "rm1:http"),
                    ]),
                ),
                (SITE_FILE_NAME, &site(&[("weft.rm.max-request-bytes", "0")])),
            ],
        );
        expect![[r#"
            <dir>/yarn-site.xml: invalid service settings:
              line 2, column 60: property yarn.resourcemanager.scheduler.class: "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler" is not Hadoop's FairScheduler (org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler): Weft is a Fair Scheduler, and would run a configuration written for another scheduler by rules it was not written for; name the FairScheduler or remove the property
              line 3, column 59: property yarn.resourcemanager.webapp.address: "rm1:http" does not make a host:port address such as rm1.example.com:8088
            <dir>/weft-site.xml: invalid service settings:
              line 2, column 49: property weft.rm.max-request-bytes: "0" is not a positive whole number"#]]
        .assert_eq(&dir.hide(&dir.load().unwrap_err().to_string()));

        // The scheduler's properties are checked across the files too.
        let dir = ConfDir::new(
            "two-files-scheduler",
            &[
                (
                    YARN_SITE_FILE_NAME,
                    &site(&[("yarn.scheduler.fair.preemption", "maybe")]),
                ),
                (
                    SITE_FILE_NAME,
                    &site(&[("yarn.scheduler.minimum-allocation-mb", "-1")]),
                ),
            ],
        );
        expect![[r#"
            <dir>/yarn-site.xml: the site configuration has 1 problem:
              line 2, column 54: property yarn.scheduler.fair.preemption: "maybe" is not a boolean (true or false)
            <dir>/weft-site.xml: the site configuration has 1 problem:
              line 2, column 60: property yarn.scheduler.minimum-allocation-mb: -1 is out of range: must not be negative"#]].assert_eq(&dir.hide(&dir.load().unwrap_err().to_string()));

        // Malformed XML in any file stops the start, naming that file.
        std::fs::write(dir.0.join("core-site.xml"), "<configuration><property>").unwrap();
        expect![[r#"
            <dir>/core-site.xml: the site configuration has 1 problem:
              line 1, column 16: <property> is never closed"#]]
        .assert_eq(&dir.hide(&dir.load().unwrap_err().to_string()));
    }

    /// The listen address the site files give.
    fn listen(props: &[(&str, &str)]) -> String {
        match RmConfig::from_texts(&site(props), "<allocations/>") {
            Ok(config) => config.service.listen.to_string(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_listen_address_follows_hadoop_when_a_hadoop_file_gives_one() {
        // Neither: Weft's loopback default, not Hadoop's every interface.
        assert_eq!(listen(&[]), "127.0.0.1:8088");
        assert_eq!(
            listen(&[("yarn.resourcemanager.hostname", "10.0.0.5")]),
            "10.0.0.5:8088"
        );
        // The default's host name is Hadoop's, 0.0.0.0, when none is set.
        assert_eq!(
            listen(&[(
                "yarn.resourcemanager.webapp.address",
                "${yarn.resourcemanager.hostname}:8090"
            )]),
            "0.0.0.0:8090"
        );
        assert_eq!(
            listen(&[
                (
                    "yarn.resourcemanager.webapp.address",
                    "${yarn.resourcemanager.hostname}:8090"
                ),
                ("yarn.resourcemanager.hostname", "rm1"),
            ]),
            "rm1:8090"
        );
        assert_eq!(
            listen(&[("yarn.resourcemanager.webapp.address", "rm1.example.com")]),
            "rm1.example.com:8088"
        );
        assert_eq!(
            listen(&[("yarn.resourcemanager.webapp.address", "[::1]:8090")]),
            "[::1]:8090"
        );
        // bind-host takes the host's place, as Hadoop binds.
        assert_eq!(
            listen(&[
                ("yarn.resourcemanager.hostname", "rm1.example.com"),
                ("yarn.resourcemanager.bind-host", "0.0.0.0"),
            ]),
            "0.0.0.0:8088"
        );
        // weft.rm.listen wins over all of them.
        assert_eq!(
            listen(&[
                ("yarn.resourcemanager.webapp.address", "rm1:8090"),
                ("weft.rm.listen", "127.0.0.1:7000"),
            ]),
            "127.0.0.1:7000"
        );
        expect![[r#"
            built-in weft-site.xml: invalid service settings:
              line 2, column 53: property yarn.resourcemanager.hostname: "rm 1" does not make a host:port address such as rm1.example.com:8088
            built-in weft-site.xml: invalid service settings:
              line 3, column 54: property yarn.resourcemanager.bind-host: "*" is not a host name or address"#]]
        .assert_eq(&format!(
            "{}\n{}",
            listen(&[("yarn.resourcemanager.hostname", "rm 1")]),
            listen(&[
                ("yarn.resourcemanager.webapp.address", "rm1:8088"),
                ("yarn.resourcemanager.bind-host", "*"),
            ])
        ));
    }

    #[test]
    fn unhonoured_hadoop_settings_are_warned_about_once_per_group() {
        let text = site(&[
            ("yarn.resourcemanager.ha.enabled", "true"),
            ("yarn.resourcemanager.ha.rm-ids", "rm1,rm2"),
            ("yarn.resourcemanager.webapp.address.rm1", "rm1:8088"),
            ("hadoop.security.authentication", "kerberos"),
            ("yarn.resourcemanager.principal", "rm/_HOST@EXAMPLE.COM"),
            ("yarn.resourcemanager.admin.address", "rm1:8033"),
            ("yarn.nodemanager.local-dirs", "/data/yarn"),
            ("mapreduce.framework.name", "yarn"),
        ]);
        let config = RmConfig::from_texts(&text, "<allocations/>").unwrap();
        expect![[r#"
            [
                "built-in weft-site.xml: line 2, column 55: yarn.resourcemanager.ha.enabled is ignored: Weft has no ResourceManager high availability: this RM runs alone, and the per-RM names (yarn.resourcemanager.*.<rm-id>) are not read",
                "built-in weft-site.xml: line 5, column 54: hadoop.security.authentication, yarn.resourcemanager.principal are ignored: Weft has no Kerberos: a caller is whoever its user.name says, and the node and AM protocols are not authenticated, so run the RM where only trusted hosts reach it",
                "built-in weft-site.xml: line 7, column 58: yarn.resourcemanager.admin.address is ignored: Weft speaks no Hadoop RPC: clients, node agents and application masters reach it over HTTP at its listen address (weft.rm.listen, else yarn.resourcemanager.webapp.address)",
            ]
        "#]]
        .assert_debug_eq(&config.warnings);
        // Values that ask for nothing Weft lacks pass in silence.
        let text = site(&[
            ("yarn.resourcemanager.ha.enabled", "false"),
            ("hadoop.security.authentication", "simple"),
            ("yarn.http.policy", "HTTP_ONLY"),
        ]);
        let config = RmConfig::from_texts(&text, "<allocations/>").unwrap();
        assert_eq!(config.warnings, Vec::<String>::new());
    }

    #[test]
    fn a_capacity_scheduler_directory_is_flagged() {
        let dir = ConfDir::new(
            "capacity",
            &[
                (YARN_SITE_FILE_NAME, &site(&[])),
                ("capacity-scheduler.xml", "<configuration/>"),
            ],
        );
        let config = dir.load().unwrap();
        expect![[r#"
            [
                "<dir>/fair-scheduler.xml: not found; running with default queues until it appears",
                "<dir>/capacity-scheduler.xml: not read: Hadoop's default scheduler is the CapacityScheduler, and Weft is a Fair Scheduler that takes its queues from the allocation file (<dir>/fair-scheduler.xml)",
            ]
        "#]]
        .assert_debug_eq(&dir.hide(&config.warnings.join("\n")).lines().collect::<Vec<_>>());
    }

    #[test]
    fn the_topology_mapping_is_read_from_core_site_relative_to_the_directory() {
        let core_site = site(&[
            (
                "net.topology.node.switch.mapping.impl",
                "org.apache.hadoop.net.TableMapping",
            ),
            ("net.topology.table.file.name", "topology.data"),
        ]);
        let dir = ConfDir::new(
            "topology-table",
            &[
                ("core-site.xml", &core_site),
                (
                    "topology.data",
                    "# host rack\n10.0.0.1 /rack1\nh2 /rack2/\n",
                ),
            ],
        );
        let config = dir.load().unwrap();
        assert_eq!(
            config.service.rack_mapping,
            RackMapping::Table {
                path: Some(dir.0.join("topology.data"))
            }
        );
        let Topology::Table(table) = &config.topology else {
            panic!("{:?}", config.topology);
        };
        assert_eq!(table.get("10.0.0.1"), Some("/rack1"));
        assert_eq!(table.get("h2"), Some("/rack2"));
        assert_eq!(table.len(), 2);

        // A table with bad lines is refused, every line named.
        std::fs::write(dir.0.join("topology.data"), "h1 /rack1 extra\nh2 rack2\n").unwrap();
        expect![[r#"
            the topology table <dir>/topology.data (net.topology.table.file.name) is invalid:
              line 1: "h1 /rack1 extra" has 3 columns; each line is a host and its rack, such as `10.1.2.3 /rack1`
              line 2: the rack "rack2" of h2 is not a path such as /rack1"#]]
        .assert_eq(&dir.hide(&dir.load().unwrap_err().to_string()));

        // A script must be there and runnable; its path is relative to the
        // directory too.
        let dir = ConfDir::new(
            "topology-script",
            &[(
                "core-site.xml",
                &site(&[("net.topology.script.file.name", "rack.sh")]),
            )],
        );
        expect![[r#"
            the topology script <dir>/rack.sh (net.topology.script.file.name) does not exist"#]]
        .assert_eq(&dir.hide(&dir.load().unwrap_err().to_string()));
        std::fs::write(dir.0.join("rack.sh"), "#!/bin/sh\necho /r1\n").unwrap();
        std::fs::set_permissions(
            dir.0.join("rack.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        expect![[r#"
            the topology script <dir>/rack.sh (net.topology.script.file.name) is not executable (mode 644)"#]]
        .assert_eq(&dir.hide(&dir.load().unwrap_err().to_string()));

        // Mappings Weft does not have, and bad counts, are refused.
        let err = RmConfig::from_texts(
            &site(&[
                (
                    "net.topology.node.switch.mapping.impl",
                    "com.example.RackAwareMapping",
                ),
                ("net.topology.script.number.args", "0"),
                ("weft.rm.topology.timeout-ms", "0"),
            ]),
            "<allocations/>",
        )
        .unwrap_err();
        expect![[r#"
            built-in weft-site.xml: invalid service settings:
              line 2, column 61: property net.topology.node.switch.mapping.impl: "com.example.RackAwareMapping" is not a mapping Weft has: org.apache.hadoop.net.ScriptBasedMapping (a script; Hadoop's default) or org.apache.hadoop.net.TableMapping (a file)
              line 3, column 55: property net.topology.script.number.args: "0" is not a positive whole number
              line 4, column 51: property weft.rm.topology.timeout-ms: "0" is not a whole number of milliseconds (1 or more)"#]]
        .assert_eq(&err.to_string());

        // Without a script, Hadoop's default mapping is no mapping here.
        let config = RmConfig::from_texts(
            &site(&[(
                "net.topology.node.switch.mapping.impl",
                "org.apache.hadoop.net.ScriptBasedMapping",
            )]),
            "<allocations/>",
        )
        .unwrap();
        assert_eq!(config.topology, Topology::Declared);
    }

    #[test]
    fn a_bad_allocation_file_names_file_line_and_column() {
        let err = RmConfig::from_texts(
            "<configuration/>",
            "<allocations>\n  <queue name=\"a\"><weight>-1</weight></queue>\n</allocations>",
        )
        .unwrap_err();
        expect![[r#"
            built-in fair-scheduler.xml: invalid allocation file:
              2:19: allocations/queue[@name="a"]/weight: "-1" is negative; expected a non-negative decimal number such as 1 or 2.5"#]]
        .assert_eq(&err.to_string());
    }

    #[test]
    fn a_directory_without_files_runs_on_defaults() {
        let dir = std::env::temp_dir().join(format!("weft-conf-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = RmConfig::load(Some(&dir)).unwrap();
        assert_eq!(config.alloc_path, Some(dir.join("fair-scheduler.xml")));
        assert_eq!(config.warnings.len(), 2, "{:?}", config.warnings);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_configuration_path_to_a_device_or_an_oversized_file_is_refused() {
        let dir = std::env::temp_dir().join(format!("weft-conf-odd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A symlink to /dev/zero would otherwise be read for ever.
        std::os::unix::fs::symlink("/dev/zero", dir.join("fair-scheduler.xml")).unwrap();
        let err = RmConfig::load(Some(&dir)).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read {}: not a regular file",
                dir.join("fair-scheduler.xml").display()
            )
        );
        std::fs::remove_file(dir.join("fair-scheduler.xml")).unwrap();
        let big = std::fs::File::create(dir.join("fair-scheduler.xml")).unwrap();
        big.set_len(MAX_CONFIG_BYTES + 1).unwrap();
        let err = RmConfig::load(Some(&dir)).unwrap_err();
        assert!(err.to_string().ends_with(": larger than 64 MiB"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
