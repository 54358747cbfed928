//! Startup configuration: where the two files come from (a directory, or
//! the copies built into the binary), reading them, and the service's own
//! properties (`weft.*`, and the YARN and Hadoop ones the service rather
//! than the scheduler reads) next to the scheduler's in `weft-site.xml`.
//!
//! Parsing the scheduler's properties and the allocation file is
//! `weft-queue-tree`'s; this module reads files, resolves paths, and turns
//! every problem into one `ConfigError` naming the file, line and column.
//! Watching the allocation file afterwards is `reload`'s job.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use weft_core::CoreSettings;
use weft_model::Duration;
use weft_queue_tree::alloc_file::parse_alloc_file;
use weft_queue_tree::site::{HadoopConfig, Location, SchedulerSettings, SiteError};
use weft_queue_tree::{Acl, AllocFileError, GroupFile, GroupFileError, LoadedAllocConfig};

use crate::dynamic_resources::{DynamicResources, DynamicResourcesError};
use crate::groups::{GroupCacheSettings, GroupSource, MappingClass};
use crate::hosts::{HostLists, HostsError, HostsFiles, TimeoutSecs};

/// The allocation file shipped in `conf/`, built in so the binary runs anywhere.
pub const EMBEDDED_ALLOC_FILE: &str = include_str!("../../../conf/fair-scheduler.xml");
/// The site file shipped in `conf/`, built in.
pub const EMBEDDED_SITE_FILE: &str = include_str!("../../../conf/weft-site.xml");

/// The site file's name in a configuration directory.
pub const SITE_FILE_NAME: &str = "weft-site.xml";

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

/// The service's settings: `weft.*` properties plus the few YARN RM ones
/// the service (rather than the scheduler) reads, and Hadoop's group
/// mapping (`hadoop.security.group*`), which Hadoop keeps in core-site.xml.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceSettings {
    /// `weft.rm.listen` (default `127.0.0.1:8088`); `--listen` overrides it.
    pub listen: SocketAddr,
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
    /// The configuration directory the service started from (`None`: the
    /// built-in copies); `refresh-nodes` reads its `weft-site.xml` again.
    /// Not a property: set when the directory is loaded.
    pub conf_dir: Option<PathBuf>,
}

impl Default for ServiceSettings {
    fn default() -> ServiceSettings {
        ServiceSettings {
            listen: SocketAddr::from(([127, 0, 0, 1], 8088)),
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
            state_store: None,
            state_store_max_completed_apps: CoreSettings::default().max_completed_apps,
            hosts_files: HostsFiles::default(),
            decommission_timeout: TimeoutSecs(3600),
            decommission_wait_for_apps: true,
            conf_dir: None,
        }
    }
}

/// Why the service cannot start with this configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The site file is invalid.
    #[error("{file}: {error}")]
    Site {
        /// The file (or `built-in weft-site.xml`).
        file: String,
        /// Every problem.
        error: SiteError,
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
    #[error("{file}: {}", render_service_problems(problems))]
    Service {
        /// The file.
        file: String,
        /// Every problem.
        problems: Vec<ServiceProblem>,
    },
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

fn render_service_problems(problems: &[ServiceProblem]) -> String {
    let lines: Vec<String> = problems.iter().map(|p| format!("\n  {p}")).collect();
    format!("invalid service settings:{}", lines.concat())
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
/// the reload for good.
pub(crate) fn read_config_file(path: &Path) -> std::io::Result<String> {
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
    /// A directory without `weft-site.xml` means default settings; a missing
    /// allocation file means default queues (as Hadoop runs without one),
    /// watched in case it appears.
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
        service.conf_dir = Some(dir.to_owned());
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
            warnings,
        })
    }

    /// A configuration from texts, with nothing to watch (the built-in
    /// copies, and tests). File paths in it are taken as they are.
    pub fn from_texts(site_text: &str, alloc_text: &str) -> Result<RmConfig, ConfigError> {
        let mut warnings = Vec::new();
        let site = parse_site("built-in weft-site.xml", site_text, &mut warnings)?;
        let alloc = parse_alloc("built-in fair-scheduler.xml", alloc_text, &mut warnings)?;
        let groups = group_source(&site.service)?;
        let (hosts, host_warnings) = HostLists::load(&site.service.hosts_files)?;
        warnings.extend(host_warnings);
        Ok(RmConfig {
            source: ConfSource::Embedded,
            alloc_path: None,
            alloc,
            core: site.core,
            service: site.service,
            groups,
            hosts,
            dynamic_resources: DynamicResources::default(),
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

/// Users' groups as `service` configures them: the group file when one is
/// set (read now), else the mapping.
fn group_source(service: &ServiceSettings) -> Result<GroupSource, ConfigError> {
    match &service.groups_file {
        Some(path) => Ok(GroupSource::File(read_groups(path)?)),
        None => Ok(GroupSource::Mapping(service.group_mapping)),
    }
}

/// `yarn.admin.acl` as `weft-site.xml` in `dir` now has it, with the
/// warnings the whole file gives, for `refresh-admin-acls` (Hadoop's
/// `refreshAdminAcls` re-reads yarn-site.xml). As for `refresh-nodes`, a
/// site file with a problem anywhere is refused whole.
pub fn reread_admin_acl(dir: &Path) -> Result<(Acl, Vec<String>), ConfigError> {
    let mut warnings = Vec::new();
    let site = read_site(dir, &mut warnings)?;
    Ok((site.scheduler.admin_acl, warnings))
}

/// `weft-site.xml` in `dir`, or default settings (with a warning) when it
/// is not there.
fn read_site(dir: &Path, warnings: &mut Vec<String>) -> Result<Site, ConfigError> {
    let site_path = dir.join(SITE_FILE_NAME);
    let site_name = site_path.display().to_string();
    let site_text = if site_path.exists() {
        read(&site_path)?
    } else {
        warnings.push(format!("{site_name}: not found; using default settings"));
        "<configuration/>".to_owned()
    };
    parse_site(&site_name, &site_text, warnings)
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
    /// Reads `weft-site.xml` in `dir` again for its node-list settings; with
    /// the warnings the whole file gives. A site file with a problem
    /// anywhere is refused as a whole, as it would be at start: applying
    /// half of a file that would not start the RM would hide the mistake
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
}

fn parse_site(name: &str, text: &str, warnings: &mut Vec<String>) -> Result<Site, ConfigError> {
    let site_err = |error| ConfigError::Site {
        file: name.to_owned(),
        error,
    };
    let config = HadoopConfig::parse(text).map_err(site_err)?;
    let (scheduler, site_warnings) = SchedulerSettings::from_config(&config).map_err(site_err)?;
    for w in config.warnings().iter().chain(&site_warnings) {
        warnings.push(format!("{name}: {w}"));
    }
    let (service, core_extra, service_warnings) =
        read_service(&config).map_err(|problems| ConfigError::Service {
            file: name.to_owned(),
            problems,
        })?;
    warnings.extend(service_warnings.into_iter().map(|w| format!("{name}: {w}")));
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
    })
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
    pub(super) const MAX_ATTEMPTS: &str = "yarn.resourcemanager.am.max-attempts";
    pub(super) const MAX_COMPLETED: &str = "yarn.resourcemanager.max-completed-applications";
    pub(super) const STATE_STORE_MAX_COMPLETED: &str =
        "yarn.resourcemanager.state-store.max-completed-applications";
    pub(super) const DECOMMISSION_TIMEOUT: &str =
        "yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs";
    pub(super) const WAIT_FOR_APPS: &str =
        "yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications";
}

type ServiceRead = (ServiceSettings, CoreExtra, Vec<String>);

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
    if let Some(v) = value(names::LISTEN) {
        match v.parse() {
            Ok(a) => s.listen = a,
            Err(_) => bad(
                names::LISTEN,
                "is not a socket address such as 127.0.0.1:8088",
            ),
        }
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
    for (name, target) in [
        (names::REST_SUBMISSIONS, &mut s.rest_submissions),
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
            warnings.push(format!(
                "{}: {} is not used: {} is set, and the file gives every user's groups",
                p.location,
                names::GROUP_MAPPING,
                names::GROUPS_FILE
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
            warnings.push(format!(
                "{}: unknown service property {} (a typo?) is ignored",
                p.location, p.name
            ));
        }
    }
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
        assert_eq!(config.service.listen.port(), 9000);
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
