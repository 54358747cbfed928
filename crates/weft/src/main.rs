//! The `weft` command: `weft rm` runs the ResourceManager and `weft nm` a
//! node agent; `weft local` runs both, a whole cluster on loopback; `weft
//! app submit` runs a distributed-shell application; `weft application`,
//! `weft applicationattempt`, `weft container`, `weft queue`, `weft
//! node`, `weft rmadmin` and `weft top` are YARN-style clients of the RM's
//! REST API (YARN's single-dash spellings work: `weft application -list`);
//! `weft daemonlog` reads and sets a running RM's or node agent's log
//! levels, as `hadoop daemonlog`; `weft load` drives a running RM with
//! simulated nodes and AMs; `weft sim` runs the simulator; `weft queues`
//! checks an allocation file offline, shows its queues and tries its
//! placement rules.
//!
//! This file and its modules (`app`, `nm`, `local`, `cli_attempts`, `top`,
//! `daemonlog`, `queues`, and `logging`, the subscriber whose filter the
//! RM's and the node agents' `/logLevel` change) only parse arguments, set
//! up logging and signals,
//! and print; the work is `weft-rm`'s,
//! `weft-nm`'s and `weft-sim`'s (and, for `queues`, `weft-queue-tree`'s
//! and `weft-core`'s). A new subcommand is one more variant of
//! `Command` and one more arm in `run`.

mod app;
mod cli_attempts;
mod daemonlog;
mod local;
mod logging;
mod nm;
mod queues;
mod top;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::builder::NonEmptyStringValueParser;
use clap::{ArgGroup, Args, Parser, Subcommand};
use weft_rm::client::{ClientError, RmClient};
use weft_rm::config::ListenAddress;
use weft_rm::dto::ResourceDto;
use weft_rm::load::LoadConfig;
use weft_rm::{Clock, Embedding, RmConfig, Service, cli};

/// glibc's allocator showed up as a fifth of the RM's time under load
/// (many small, short-lived allocations across threads); mimalloc does not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Weft: a YARN-style ResourceManager with the Hadoop Fair Scheduler's semantics.
#[derive(Parser, Debug)]
#[command(name = "weft", version, about)]
struct Weft {
    /// Log format on standard error.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// PEM file of the certificate authorities to trust when calling an
    /// https:// RM or node (default: the system's trusted certificates; a
    /// node agent's own ssl-client.xml wins over it).
    #[arg(long, global = true, env = "WEFT_CA_FILE", value_name = "PEM")]
    ca_file: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the ResourceManager.
    Rm(RmArgs),
    /// Run a node agent: registers with the RM and runs its containers as processes.
    Nm(nm::NmArgs),
    /// A local cluster on loopback: the RM, node agents, and a demo.
    Local(local::LocalArgs),
    /// Distributed-shell applications: submit (and run), status, list, kill.
    App(app::AppArgs),
    /// Applications: -list, -status, -explain, -kill, -movetoqueue, -updatePriority, -updateLifetime.
    Application(ApplicationArgs),
    /// Application attempts: -list <appId>, -status <attemptId>.
    Applicationattempt(cli_attempts::AttemptArgs),
    /// Containers: -list <attemptId>, -status <containerId>.
    Container(cli_attempts::ContainerArgs),
    /// Queues: -status.
    Queue(QueueArgs),
    /// Nodes: -list, -status.
    Node(NodeArgs),
    /// Administration: -refreshQueues, -refreshNodes, -updateNodeResource.
    Rmadmin(RmadminArgs),
    /// A refreshing view of the cluster and its busiest applications, as `yarn top`.
    Top(top::TopArgs),
    /// A daemon's log levels: -getlevel <host:port> <target>, -setlevel <host:port> <target> <level>.
    Daemonlog(daemonlog::DaemonlogArgs),
    /// Drive a running RM with simulated NodeManagers and ApplicationMasters.
    Load(LoadArgs),
    /// Replay a workload through the scheduler on virtual time (no service needed).
    Sim(weft_sim::cli::SimArgs),
    /// An allocation file offline: check it, show its queues, try its placement rules.
    Queues(queues::QueuesArgs),
}

#[derive(Args, Debug)]
struct RmArgs {
    /// Configuration directory holding weft-site.xml (or a Hadoop
    /// yarn-site.xml, under it) and fair-scheduler.xml (default: ./conf
    /// when it exists, else the built-in copies).
    #[arg(long)]
    conf: Option<PathBuf>,
    /// Address to listen on (default: weft.rm.listen, else
    /// yarn.resourcemanager.webapp.address, else 127.0.0.1:8088).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Write every scheduler decision to this file as JSON lines
    /// (overrides weft.rm.event-log.file).
    #[arg(long)]
    event_log: Option<PathBuf>,
    /// Keep applications and drains across restarts in this directory
    /// (overrides weft.rm.state-store.dir).
    #[arg(long)]
    state_store: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct Client {
    /// The ResourceManager's address: host, host:port, http://host:port or https://host:port (port 8088, or 8090 for https, when none is given).
    #[arg(long = "rm", global = true, default_value = "http://127.0.0.1:8088", value_parser = rm_address)]
    rm: String,
    /// The user to act as (Hadoop's user.name; default: $USER).
    // An empty name would reach the RM as no user at all, which answers
    // with a REST hint (`add ?user.name=`) that means nothing here.
    #[arg(long = "user", global = true, value_parser = NonEmptyStringValueParser::new())]
    user: Option<String>,
}

impl Client {
    /// The user to act as.
    fn user(&self) -> String {
        user_or_default(self.user.clone())
    }
}

/// `user`, else `$USER`, else Hadoop's anonymous `dr.who`.
pub(crate) fn user_or_default(user: Option<String>) -> String {
    user.or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "dr.who".to_owned())
}

/// How long one call of a one-shot client command waits for the RM unless
/// `--request-timeout-ms` says otherwise. Without a limit, a command facing
/// an RM that stopped answering (stopped by SIGSTOP, wedged, or behind an
/// address that drops packets) waited for ever; a command run by hand or
/// from a script should rather fail and say which RM did not answer. Half a
/// minute is far longer than a busy RM takes to answer a report, a kill or
/// a refresh, so a slow RM is not taken for a stuck one.
pub(crate) const CLIENT_REQUEST_TIMEOUT_MS: u64 = 30_000;

/// [`Client`] for the one-shot commands (`application`, `queue`, `node`,
/// `rmadmin`, `app status|list|kill`), whose every call to the RM has a time
/// limit. `weft app submit` takes `Client` alone: it runs the application's
/// AM until the application ends, and its calls are the shell's.
#[derive(Args, Debug)]
pub(crate) struct OneShotClient {
    #[command(flatten)]
    client: Client,
    /// Milliseconds each call to the RM may take before the command fails
    /// with an error (10 to 600000).
    // Bounded as `weft load`'s: below 10 ms even a loopback RM may not
    // answer, and past ten minutes a script facing a stuck RM is held
    // almost as if there were no limit.
    #[arg(
        long,
        global = true,
        default_value_t = CLIENT_REQUEST_TIMEOUT_MS,
        value_parser = clap::value_parser!(u64).range(10..=600_000)
    )]
    request_timeout_ms: u64,
}

impl OneShotClient {
    fn connect(&self) -> anyhow::Result<RmClient> {
        Ok(RmClient::new(&self.client.rm, Some(self.client.user()))?
            .with_timeout(Duration::from_millis(self.request_timeout_ms)))
    }
}

/// Exactly one command per call, and each modifier only with the command
/// it modifies: YARN's CLI refuses `-kill` or `-status` with anything else,
/// and one of two commands typed together must not be dropped in silence
/// (`-list -kill X` listing and not killing).
#[derive(Args, Debug)]
#[command(group(
    ArgGroup::new("command")
        .args(["list", "status", "explain", "kill", "move_to_queue", "change_queue", "update_priority", "update_lifetime"])
        .required(true)
))]
struct ApplicationArgs {
    #[command(flatten)]
    client: OneShotClient,
    /// List applications (states default to SUBMITTED, ACCEPTED, RUNNING).
    #[arg(long = "list")]
    list: bool,
    /// With -list: states to show (comma-separated, or ALL).
    #[arg(long = "appStates", value_delimiter = ',', requires = "list")]
    app_states: Vec<String>,
    /// With -list: application types to show.
    #[arg(long = "appTypes", value_delimiter = ',', requires = "list")]
    app_types: Vec<String>,
    /// With -list: tags to show.
    #[arg(long = "appTags", value_delimiter = ',', requires = "list")]
    app_tags: Vec<String>,
    /// Print an application's report.
    #[arg(long = "status", value_name = "APP_ID")]
    status: Option<String>,
    /// Print why an application is or is not getting containers now.
    #[arg(long = "explain", value_name = "APP_ID")]
    explain: Option<String>,
    /// Kill applications.
    #[arg(long = "kill", value_name = "APP_ID", num_args = 1..)]
    kill: Vec<String>,
    /// Move an application to another queue (with -queue).
    #[arg(long = "movetoqueue", value_name = "APP_ID", requires = "queue")]
    move_to_queue: Option<String>,
    /// The target queue of -movetoqueue.
    #[arg(long = "queue", requires = "move_to_queue")]
    queue: Option<String>,
    /// The application of -changeQueue, -updatePriority or -updateLifetime.
    #[arg(long = "appId", conflicts_with_all = ["list", "status", "explain", "kill", "move_to_queue"])]
    app_id: Option<String>,
    /// Move -appId to this queue.
    #[arg(long = "changeQueue", requires = "app_id")]
    change_queue: Option<String>,
    /// Set -appId's priority.
    #[arg(
        long = "updatePriority",
        allow_negative_numbers = true,
        requires = "app_id"
    )]
    update_priority: Option<i32>,
    /// Kill -appId this many seconds from now (this machine's clock), sooner
    /// or later than its lifetime said.
    #[arg(
        long = "updateLifetime",
        value_name = "SECONDS",
        allow_negative_numbers = true,
        requires = "app_id",
        value_parser = clap::value_parser!(u64).range(1..=weft_rm::dto::apps::MAX_LIFETIME_SECS)
    )]
    update_lifetime: Option<u64>,
}

#[derive(Args, Debug)]
struct QueueArgs {
    #[command(flatten)]
    client: OneShotClient,
    /// Print a queue's report.
    #[arg(long = "status", value_name = "QUEUE")]
    status: String,
}

/// One command per call, as for `application`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("command").args(["list", "status"]).required(true)))]
struct NodeArgs {
    #[command(flatten)]
    client: OneShotClient,
    /// List nodes (running ones unless -states or -all).
    #[arg(long = "list")]
    list: bool,
    /// With -list: states to show (comma-separated).
    #[arg(long = "states", value_delimiter = ',', requires = "list")]
    states: Vec<String>,
    /// With -list: every node, in any state.
    #[arg(long = "all", requires = "list")]
    all: bool,
    /// Print a node's report.
    #[arg(long = "status", value_name = "NODE_ID")]
    status: Option<String>,
}

/// One command per call, as for `application`; `weft rmadmin` alone is a
/// usage error (exit 2) like every other missing command.
#[derive(Args, Debug)]
#[command(group(
    ArgGroup::new("command")
        .args([
            "refresh_queues",
            "refresh_nodes",
            "refresh_nodes_resources",
            "update_node_resource",
            "refresh_admin_acls",
            "refresh_user_groups",
            "get_groups"
        ])
        .required(true)
))]
struct RmadminArgs {
    #[command(flatten)]
    client: OneShotClient,
    /// Reload the allocation file now.
    #[arg(long = "refreshQueues")]
    refresh_queues: bool,
    /// Reread the include and exclude files (yarn.resourcemanager.nodes.*-path)
    /// and decommission the nodes they disallow (at once, or with -g by draining).
    #[arg(long = "refreshNodes")]
    refresh_nodes: bool,
    /// With -refreshNodes: drain the nodes rather than decommission them at
    /// once, for at most TIMEOUT_SECS (-1: no limit; default: the exclude
    /// file's per-host timeout, else the RM's
    /// yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs).
    #[arg(
        short = 'g',
        long = "graceful",
        value_name = "TIMEOUT_SECS",
        num_args = 0..=1,
        allow_negative_numbers = true,
        requires = "refresh_nodes",
        // `requires` alone lets `-refreshQueues -g` through when -g has no value.
        conflicts_with_all = [
            "refresh_queues",
            "refresh_nodes_resources",
            "refresh_admin_acls",
            "refresh_user_groups",
            "get_groups"
        ],
        value_parser = clap::value_parser!(i64).range(-1..=i64::from(i32::MAX))
    )]
    graceful: Option<Option<i64>>,
    /// With -g: this command waits for the drain and enforces the timeout
    /// (the RM sets none), polling every second; Ctrl-C stops waiting and
    /// leaves the nodes draining.
    #[arg(
        long = "client",
        requires = "graceful",
        conflicts_with = "server_tracking"
    )]
    client_tracking: bool,
    /// With -g (the default): the RM enforces the timeout; the command returns at once.
    #[arg(long = "server", requires = "graceful")]
    server_tracking: bool,
    /// Resize a node: NODE_ID MEMORY_MB VCORES [TIMEOUT_MS]. Below what its
    /// containers hold, the node is over-committed: it takes nothing new
    /// until they end, and after TIMEOUT_MS (-1 or none: no limit) the
    /// newest of them past the new size are stopped.
    // Milliseconds, as Hadoop's `yarn rmadmin -updateNodeResource`, so
    // operators' scripts carry over unchanged.
    #[arg(
        long = "updateNodeResource",
        value_names = ["NODE_ID", "MEMORY_MB", "VCORES", "TIMEOUT_MS"],
        num_args = 3..=4,
        allow_negative_numbers = true
    )]
    update_node_resource: Vec<String>,
    /// Reread dynamic-resources.xml in the RM's configuration directory and
    /// resize the registered nodes it gives another size (the nodes it names
    /// register with its size from then on).
    #[arg(long = "refreshNodesResources")]
    refresh_nodes_resources: bool,
    /// Reread yarn.admin.acl from weft-site.xml in the RM's configuration
    /// directory and put it in force.
    #[arg(long = "refreshAdminAcls")]
    refresh_admin_acls: bool,
    /// Reread the group file (weft.rm.groups.file) the RM maps users to
    /// groups with, or, without one, forget the groups it cached from the
    /// operating system.
    #[arg(long = "refreshUserToGroupsMappings")]
    refresh_user_groups: bool,
    /// Print the groups the RM maps each USER to (default: the --user).
    #[arg(long = "getGroups", value_name = "USER", num_args = 0..)]
    get_groups: Option<Vec<String>>,
}

/// What `-updateNodeResource` asks for.
#[derive(Debug, PartialEq, Eq)]
struct NodeResize {
    node: String,
    memory_mb: u64,
    vcores: u64,
    timeout_ms: Option<i64>,
}

impl RmadminArgs {
    /// `-updateNodeResource`'s values, checked as clap checks the others
    /// (a bad one is a usage error, exit 2); `None` without it.
    fn node_resize(&self) -> Result<Option<NodeResize>, clap::Error> {
        let [node, memory, vcores, rest @ ..] = self.update_node_resource.as_slice() else {
            return Ok(None);
        };
        let bad = |what: &str, value: &str, expected: String| {
            <Weft as clap::CommandFactory>::command().error(
                clap::error::ErrorKind::ValueValidation,
                format!("-updateNodeResource: {what} {value:?} is not {expected}"),
            )
        };
        let size = |what: &str, value: &String| {
            value
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad(what, value, "a whole number above 0".to_owned()))
        };
        let timeout_ms = match rest.first() {
            None => None,
            Some(t) => Some(
                t.parse::<i64>()
                    .ok()
                    .filter(|ms| (-1..=cli::MAX_OVERCOMMIT_TIMEOUT_MS).contains(ms))
                    .ok_or_else(|| {
                        bad(
                            "TIMEOUT_MS",
                            t,
                            format!(
                                "a number of milliseconds from 0 to {}, or -1 for no timeout",
                                cli::MAX_OVERCOMMIT_TIMEOUT_MS
                            ),
                        )
                    })?,
            ),
        };
        Ok(Some(NodeResize {
            node: node.clone(),
            memory_mb: size("MEMORY_MB", memory)?,
            vcores: size("VCORES", vcores)?,
            timeout_ms,
        }))
    }
}

#[derive(Args, Debug)]
struct LoadArgs {
    /// The ResourceManager's address: host, host:port, http://host:port or https://host:port (port 8088, or 8090 for https, when none is given).
    #[arg(long, default_value = "http://127.0.0.1:8088", value_parser = rm_address)]
    rm: String,
    /// Simulated NodeManagers.
    #[arg(long, default_value_t = 100)]
    nodes: usize,
    /// Applications alive at any time.
    #[arg(long, default_value_t = 20)]
    apps: usize,
    /// Containers each application asks for.
    #[arg(long, default_value_t = 50)]
    containers_per_app: u32,
    /// How long each container runs, in milliseconds.
    #[arg(long, default_value_t = 2000)]
    container_ms: u64,
    /// Container size: memory in MB.
    #[arg(long, default_value_t = 1024)]
    container_mb: u64,
    /// Container size: vcores.
    #[arg(long, default_value_t = 1)]
    container_vcores: u64,
    /// Node size: memory in MB.
    #[arg(long, default_value_t = 8192)]
    node_mb: u64,
    /// Node size: vcores.
    #[arg(long, default_value_t = 8)]
    node_vcores: u64,
    /// Heartbeat interval in milliseconds (default: what the RM says).
    #[arg(long)]
    heartbeat_ms: Option<u64>,
    /// AM allocate interval in milliseconds.
    #[arg(long, default_value_t = 1000)]
    am_ms: u64,
    /// Queues to submit to, round robin (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "default")]
    queues: Vec<String>,
    /// Distinct submitting users.
    #[arg(long, default_value_t = 64)]
    users: usize,
    /// Connections for the simulated nodes.
    #[arg(long, default_value_t = 32)]
    node_connections: usize,
    /// Connections for the simulated AMs.
    #[arg(long, default_value_t = 8)]
    am_connections: usize,
    /// Seconds before counting starts.
    #[arg(long, default_value_t = 5)]
    warmup: u64,
    /// Seconds counted.
    #[arg(long, default_value_t = 20)]
    duration: u64,
    /// Host name prefix of the simulated nodes.
    #[arg(long, default_value = "sim")]
    host_prefix: String,
    /// Milliseconds any one call to the RM may take before it counts as a
    /// failed request (10 to 600000).
    // Without one, an RM that stopped answering held every worker, the
    // report and Ctrl-C's cleanup for ever. Past ten minutes a run against a
    // silent RM would hold its report back for hours.
    #[arg(long, default_value_t = weft_rm::load::DEFAULT_REQUEST_TIMEOUT.as_millis() as u64, value_parser = clap::value_parser!(u64).range(10..=600_000))]
    request_timeout_ms: u64,
    /// Threads of the load generator (1: a single-threaded runtime).
    // 0 used to run on one worker thread in silence, which is neither.
    #[arg(long, default_value_t = 2, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    threads: usize,
    /// The RM's node secret file (its weft.nm.secret.file), for an RM that
    /// authenticates nodes: the simulated nodes show the secret.
    #[arg(long)]
    node_secret_file: Option<std::path::PathBuf>,
}

/// `--rm`, checked as the command line is read: a bad address is a usage
/// error naming the flag and what is wrong with it, before anything is sent.
pub(crate) fn rm_address(text: &str) -> Result<String, String> {
    match weft_rm::client::rm_authority(text) {
        Ok(_) => Ok(text.to_owned()),
        Err(ClientError::InvalidUrl { why, .. }) => Err(why),
        Err(e) => Err(e.to_string()),
    }
}

/// YARN spells long options with one dash (`-list`, `-appStates`); clap
/// wants two. A single dash followed by two or more letters is rewritten;
/// negative numbers and one-letter flags are left alone.
fn yarn_spellings(args: impl Iterator<Item = String>) -> Vec<String> {
    args.map(|a| {
        let bytes = a.as_bytes();
        let single_dash_word = bytes.len() > 2
            && bytes[0] == b'-'
            && bytes[1] != b'-'
            && bytes[1..].iter().take(2).all(u8::is_ascii_alphabetic);
        if single_dash_word { format!("-{a}") } else { a }
    })
    .collect()
}

#[expect(
    clippy::print_stderr,
    reason = "errors before and after logging go to stderr"
)]
fn main() -> ExitCode {
    let args = Weft::parse_from(yarn_spellings(std::env::args()));
    // Values clap reads as text, checked before anything starts, so a
    // bad one is a usage error like clap's own (exit 2).
    if let Command::Rmadmin(a) = &args.command
        && let Err(e) = a.node_resize()
    {
        e.exit();
    }
    // `weft queues` reads files and prints; it needs neither, and has exit
    // statuses of its own (1: invalid, 2: usage).
    if let Command::Queues(a) = args.command {
        return queues::run(a);
    }
    // The simulator runs on virtual time in this thread: no logging
    // subscriber, no async runtime.
    if let Command::Sim(sim) = args.command {
        return match weft_sim::cli::run(sim) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("weft sim: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    // A local cluster prints its own story; its components' logs would drown it.
    let level = if matches!(args.command, Command::Local(_) | Command::App(_)) {
        "warn"
    } else {
        "info"
    };
    let log_levels = logging::init(args.log_format, level);
    // `weft load --threads 1` runs on one thread: each request costs less
    // without work stealing, which helps on a machine the load generator
    // has to itself with the RM; on a busy machine more threads get it more
    // of the CPU. Everything else gets a thread per core.
    let mut builder = match &args.command {
        Command::Load(l) if l.threads == 1 => tokio::runtime::Builder::new_current_thread(),
        Command::Load(l) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(l.threads.max(1));
            b
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("weft: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(path) = &args.ca_file {
        match weft_rm::tls::ClientTls::from_ca_file(path, "--ca-file or WEFT_CA_FILE") {
            Ok(trust) => {
                let _ = weft_rm::client::set_default_trust(trust);
            }
            Err(e) => {
                eprintln!("weft: {e}");
                return ExitCode::from(2);
            }
        }
    }
    match runtime.block_on(run(args.command, log_levels)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("weft: {}", describe(&e));
            ExitCode::FAILURE
        }
    }
}

/// An error and its causes on one line, each said once: some errors
/// already end with their source's words, which `{:#}` would repeat.
fn describe(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let words = cause.to_string();
        if text.contains(&words) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&words);
    }
    text
}

/// Runs `command`; the RM's and the node agents' `/logLevel` change `log_levels`.
async fn run(command: Command, log_levels: Arc<logging::ReloadableFilter>) -> anyhow::Result<()> {
    match command {
        Command::Rm(a) => rm(a, log_levels).await,
        Command::Nm(a) => nm::run(a, log_levels).await,
        Command::Local(a) => local::run(a, log_levels).await,
        Command::App(a) => app::run(a).await,
        Command::Application(a) => application(a).await,
        Command::Applicationattempt(a) => cli_attempts::application_attempt(a).await,
        Command::Container(a) => cli_attempts::container(a).await,
        Command::Queue(a) => {
            let mut c = a.client.connect()?;
            print(cli::queue_status(&mut c, &a.status).await?);
            Ok(())
        }
        Command::Node(a) => node(a).await,
        Command::Rmadmin(a) => rmadmin(a).await,
        Command::Top(a) => top::run(a).await,
        Command::Daemonlog(a) => daemonlog::run(a).await,
        Command::Load(a) => load(a).await,
        // Handled in `main`, before any runtime starts.
        Command::Sim(a) => weft_sim::cli::run(a),
        Command::Queues(_) => unreachable!("main runs weft queues before starting a runtime"),
    }
}

#[expect(clippy::print_stdout, reason = "the CLI's output is its purpose")]
pub(crate) fn print(text: String) {
    print!("{text}");
}

/// The RM service on the real clock, its log levels changed by `/logLevel`
/// through the process's filter.
pub(crate) fn start_service(
    config: RmConfig,
    log_levels: Arc<logging::ReloadableFilter>,
) -> Result<Service, weft_rm::StartError> {
    Service::start_with(
        config,
        Clock::start(),
        Embedding {
            log_levels: Some(log_levels),
            ..Embedding::default()
        },
    )
}

async fn rm(a: RmArgs, log_levels: Arc<logging::ReloadableFilter>) -> anyhow::Result<()> {
    let dir = a.conf.or_else(weft_rm::config::default_conf_dir);
    let mut config = RmConfig::load(dir.as_deref()).context("cannot load the configuration")?;
    for w in &config.warnings {
        tracing::warn!("{w}");
    }
    if let Some(path) = a.event_log {
        config.service.event_log = Some(path);
    }
    if let Some(dir) = a.state_store {
        config.service.state_store = Some(dir);
    }
    let listen = a
        .listen
        .map_or_else(|| config.service.listen.clone(), ListenAddress::from);
    let source = config.source.clone();
    let service = start_service(config, log_levels)?;
    // A host name (Hadoop's webapp address usually is one) is looked up here.
    let listener = tokio::net::TcpListener::bind(listen.to_string())
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    tracing::info!(address = %listener.local_addr()?, configuration = %source, "resource manager listening");
    service.serve(listener, shutdown_signal()).await?;
    tracing::info!("resource manager stopped");
    Ok(())
}

pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("interrupted"),
        () = term => tracing::info!("terminated"),
    }
}

async fn application(a: ApplicationArgs) -> anyhow::Result<()> {
    let mut c = a.client.connect()?;
    let out = if a.list {
        cli::application_list(&mut c, &a.app_states, &a.app_types, &a.app_tags).await?
    } else if let Some(app) = &a.status {
        cli::application_status(&mut c, app).await?
    } else if let Some(app) = &a.explain {
        cli::application_explain(&mut c, app).await?
    } else if !a.kill.is_empty() {
        return kill_each(&mut c, &a.kill).await;
    } else if let (Some(app), Some(queue)) = (&a.move_to_queue, &a.queue) {
        cli::application_move(&mut c, app, queue).await?
    } else if let (Some(app), Some(queue)) = (&a.app_id, &a.change_queue) {
        cli::application_move(&mut c, app, queue).await?
    } else if let (Some(app), Some(p)) = (&a.app_id, a.update_priority) {
        cli::application_priority(&mut c, app, p).await?
    } else if let (Some(app), Some(secs)) = (&a.app_id, a.update_lifetime) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .context("this machine's clock is before 1970")?;
        let now = weft_rm::iso8601::EpochMs(i64::try_from(now.as_millis()).unwrap_or(i64::MAX));
        cli::application_update_lifetime(&mut c, app, secs, now).await?
    } else {
        anyhow::bail!(
            "nothing to do: use -list, -status <appId>, -explain <appId>, -kill <appId>, -movetoqueue <appId> -queue <queue>, or -appId <appId> with -changeQueue, -updatePriority or -updateLifetime"
        );
    };
    print(out);
    Ok(())
}

/// `-kill A B C`: each application in turn, each reported as it goes. One
/// the RM refuses (unknown, not the caller's) does not stop the others, as
/// in YARN's CLI; unlike it, any refusal fails the command, so a script
/// learns that something is still running. A failure to reach the RM stops
/// at once: the others would fail the same way.
#[expect(
    clippy::print_stderr,
    reason = "each refusal is reported as it happens"
)]
pub(crate) async fn kill_each(c: &mut RmClient, apps: &[String]) -> anyhow::Result<()> {
    let mut refused = Vec::new();
    for app in apps {
        match cli::application_kill(c, std::slice::from_ref(app)).await {
            Ok(out) => print(out),
            Err(e @ ClientError::Remote { .. }) => {
                eprintln!("weft: cannot kill {app}: {e}");
                refused.push(app.as_str());
            }
            Err(e) => return Err(e).with_context(|| format!("cannot kill {app}")),
        }
    }
    if !refused.is_empty() {
        anyhow::bail!(
            "{} of {} application(s) not killed: {}",
            refused.len(),
            apps.len(),
            refused.join(", ")
        );
    }
    Ok(())
}

async fn node(a: NodeArgs) -> anyhow::Result<()> {
    let mut c = a.client.connect()?;
    let out = if a.list {
        cli::node_list(&mut c, &a.states, a.all).await?
    } else if let Some(id) = &a.status {
        cli::node_status(&mut c, id).await?
    } else {
        anyhow::bail!("nothing to do: use -list or -status <nodeId>");
    };
    print(out);
    Ok(())
}

async fn rmadmin(a: RmadminArgs) -> anyhow::Result<()> {
    let mut c = a.client.connect()?;
    if let Some(r) = a.node_resize()? {
        print(
            cli::rmadmin_update_node_resource(&mut c, &r.node, r.memory_mb, r.vcores, r.timeout_ms)
                .await?,
        );
        return Ok(());
    }
    if a.refresh_queues {
        print(cli::rmadmin_refresh_queues(&mut c).await?);
        return Ok(());
    }
    if a.refresh_nodes_resources {
        print(cli::rmadmin_refresh_nodes_resources(&mut c).await?);
        return Ok(());
    }
    if a.refresh_admin_acls {
        print(cli::rmadmin_refresh_admin_acls(&mut c).await?);
        return Ok(());
    }
    if a.refresh_user_groups {
        print(cli::rmadmin_refresh_user_groups(&mut c).await?);
        return Ok(());
    }
    if let Some(users) = &a.get_groups {
        let users = if users.is_empty() {
            vec![a.client.client.user()]
        } else {
            users.clone()
        };
        print(cli::rmadmin_get_groups(&mut c, &users).await?);
        return Ok(());
    }
    if !a.refresh_nodes {
        anyhow::bail!(
            "nothing to do: use -refreshQueues, -refreshNodes, -refreshNodesResources, -updateNodeResource, -refreshAdminAcls, -refreshUserToGroupsMappings or -getGroups"
        );
    }
    let how = match a.graceful {
        None => cli::RefreshNodes::Forced,
        Some(timeout) if a.client_tracking => cli::RefreshNodes::Client { timeout },
        Some(timeout) => cli::RefreshNodes::Server { timeout },
    };
    let outcome = cli::rmadmin_refresh_nodes(
        &mut c,
        how,
        Duration::from_secs(1),
        shutdown_signal(),
        print,
    )
    .await?;
    if let cli::RefreshNodesOutcome::Interrupted { draining } = outcome {
        anyhow::bail!("stopped waiting; {}", cli::still_draining(&draining));
    }
    Ok(())
}

async fn load(a: LoadArgs) -> anyhow::Result<()> {
    let node_secret = match &a.node_secret_file {
        Some(path) => Some(weft_rm::node_secret::NodeSecret::read(path)?),
        None => None,
    };
    let config = LoadConfig {
        rm: a.rm,
        nodes: a.nodes,
        apps: a.apps,
        containers_per_app: a.containers_per_app,
        container_runtime: Duration::from_millis(a.container_ms),
        container: ResourceDto {
            memory: a.container_mb,
            vcores: a.container_vcores,
        },
        node: ResourceDto {
            memory: a.node_mb,
            vcores: a.node_vcores,
        },
        racks: 20,
        heartbeat_interval: a.heartbeat_ms.map(Duration::from_millis),
        am_interval: Duration::from_millis(a.am_ms),
        queues: a.queues,
        users: a.users,
        node_connections: a.node_connections,
        am_connections: a.am_connections,
        warmup: Duration::from_secs(a.warmup),
        duration: Duration::from_secs(a.duration),
        host_prefix: a.host_prefix,
        request_timeout: Duration::from_millis(a.request_timeout_ms),
        node_secret,
    };
    tracing::info!(nodes = config.nodes, apps = config.apps, rm = %config.rm, "load starting");
    // The first Ctrl-C or SIGTERM stops the run, which still ends the apps
    // and nodes it made and reports; a second one leaves at once.
    let (interrupt, interrupted) = tokio::sync::oneshot::channel::<()>();
    let signals = tokio::spawn(async move {
        shutdown_signal().await;
        let _ = interrupt.send(());
        shutdown_signal().await;
        leave_now();
    });
    let report = weft_rm::load::run_until(config, async {
        let _ = interrupted.await;
    })
    .await;
    signals.abort();
    let report = report?;
    print(format!("{report}\n"));
    if report.ending.left > 0 {
        anyhow::bail!(
            "{} application(s) could not be ended and are still alive in the RM",
            report.ending.left
        );
    }
    if report.interrupted {
        anyhow::bail!("interrupted before the window closed");
    }
    Ok(())
}

#[expect(
    clippy::print_stderr,
    reason = "the run's report will not come; say why"
)]
fn leave_now() -> ! {
    eprintln!("weft load: interrupted again; applications and nodes of the run may be left");
    std::process::exit(130)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        yarn_spellings(text.split_whitespace().map(str::to_owned))
    }

    #[test]
    fn causes_are_said_once() {
        #[derive(Debug)]
        struct Connect(std::io::Error);
        impl std::fmt::Display for Connect {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "cannot connect: {}", self.0)
            }
        }
        impl std::error::Error for Connect {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let io = std::io::Error::other("connection refused");
        let e = anyhow::Error::new(Connect(io)).context("cannot list the nodes");
        assert_eq!(
            describe(&e),
            "cannot list the nodes: cannot connect: connection refused"
        );
    }

    #[test]
    fn app_submit_keeps_its_command_whole() {
        let parsed = Weft::try_parse_from(yarn_spellings(
            [
                "weft",
                "app",
                "submit",
                "--queue",
                "root.a",
                "--user",
                "alice",
                "--num-containers",
                "4",
                "--memory-mb",
                "512",
                "--vcores",
                "1",
                "--command",
                "sh -c \"echo -n hi\"",
                "--env",
                "A=1",
            ]
            .into_iter()
            .map(str::to_owned),
        ))
        .unwrap();
        let Command::App(a) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        let text = format!("{a:?}");
        assert!(
            text.contains(r#"command: "sh -c \"echo -n hi\"""#),
            "{text}"
        );
        assert!(text.contains(r#"user: Some("alice")"#), "{text}");
    }

    #[test]
    fn one_command_at_a_time_and_modifiers_only_with_theirs() {
        use clap::error::ErrorKind::{ArgumentConflict, MissingRequiredArgument, UnknownArgument};
        let refused = [
            // Two commands: one of them used to be dropped in silence.
            (
                "weft application -list -status application_1_0001",
                ArgumentConflict,
            ),
            (
                "weft application -list -kill application_1_0001",
                ArgumentConflict,
            ),
            (
                "weft application -explain application_1_0001 -status application_1_0001",
                ArgumentConflict,
            ),
            (
                "weft application -explain application_1_0001 -appId application_1_0001 -updatePriority 1",
                ArgumentConflict,
            ),
            (
                "weft application -status application_1_0001 -movetoqueue application_1_0001 -queue q",
                ArgumentConflict,
            ),
            (
                "weft application -kill application_1_0001 -appId application_1_0002 -updatePriority 1",
                ArgumentConflict,
            ),
            ("weft node -list -status n1:8041", ArgumentConflict),
            // A modifier without its command.
            ("weft application -appStates ALL", MissingRequiredArgument),
            ("weft application -queue root.a", MissingRequiredArgument),
            (
                "weft application -movetoqueue application_1_0001",
                MissingRequiredArgument,
            ),
            (
                "weft application -updatePriority 3",
                MissingRequiredArgument,
            ),
            (
                "weft application -changeQueue root.a",
                MissingRequiredArgument,
            ),
            (
                "weft application -updateLifetime 60",
                MissingRequiredArgument,
            ),
            (
                "weft application -appId application_1_0001 -updatePriority 1 -updateLifetime 60",
                ArgumentConflict,
            ),
            (
                "weft application -appId application_1_0001",
                MissingRequiredArgument,
            ),
            ("weft node -states LOST", MissingRequiredArgument),
            ("weft node -all", MissingRequiredArgument),
            // No command at all.
            ("weft application", MissingRequiredArgument),
            ("weft node", MissingRequiredArgument),
            ("weft rmadmin", MissingRequiredArgument),
            (
                "weft rmadmin -refreshQueues -refreshNodes",
                ArgumentConflict,
            ),
            ("weft rmadmin -refreshQueues -g", ArgumentConflict),
            ("weft rmadmin -refreshQueues -g 5", ArgumentConflict),
            ("weft rmadmin -g 60", MissingRequiredArgument),
            (
                "weft rmadmin -refreshNodes -client",
                MissingRequiredArgument,
            ),
            (
                "weft rmadmin -refreshNodes -server",
                MissingRequiredArgument,
            ),
            (
                "weft rmadmin -refreshNodes -g -client -server",
                ArgumentConflict,
            ),
            (
                "weft rmadmin -refreshNodesResources -refreshNodes",
                ArgumentConflict,
            ),
            ("weft rmadmin -refreshNodesResources -g", ArgumentConflict),
            ("weft rmadmin -refreshAdminAcls -g", ArgumentConflict),
            ("weft rmadmin -getGroups -g", ArgumentConflict),
            (
                "weft rmadmin -refreshUserToGroupsMappings -refreshAdminAcls",
                ArgumentConflict,
            ),
            (
                "weft rmadmin -getGroups alice -refreshQueues",
                ArgumentConflict,
            ),
            (
                "weft rmadmin -refreshNodesResources h1:8041",
                UnknownArgument,
            ),
        ];
        for (line, kind) in refused {
            let e = Weft::try_parse_from(args(line))
                .err()
                .unwrap_or_else(|| panic!("{line} is accepted"));
            assert_eq!(e.kind(), kind, "{line}: {e}");
        }
        for line in [
            "weft application -list -appStates ALL -appTypes T -appTags t",
            "weft application -kill application_1_0001 application_1_0002",
            "weft application -explain application_1_0001",
            "weft application -movetoqueue application_1_0001 -queue root.b",
            "weft application -appId application_1_0001 -changeQueue root.b",
            "weft application -appId application_1_0001 -updatePriority -1",
            "weft application -appId application_1_0001 -updateLifetime 3600",
            "weft node -list -states RUNNING,LOST",
            "weft node -list -all",
            "weft node -status n1:8041",
            "weft node -list -states DECOMMISSIONING",
            "weft rmadmin -refreshQueues",
            "weft rmadmin -refreshNodes",
            "weft rmadmin -refreshNodes -g",
            "weft rmadmin -refreshNodes -g 60 -client",
            "weft rmadmin -refreshNodes -g -1 -server",
            "weft rmadmin -refreshNodes -g -client",
            "weft rmadmin -refreshNodesResources",
            "weft rmadmin --refreshNodesResources --request-timeout-ms 100",
            "weft rmadmin -refreshAdminAcls",
            "weft rmadmin -refreshUserToGroupsMappings",
            "weft rmadmin -getGroups",
            "weft rmadmin -getGroups alice bob",
        ] {
            if let Err(e) = Weft::try_parse_from(args(line)) {
                panic!("{line} is refused: {e}");
            }
        }
    }

    #[test]
    fn refresh_nodes_reads_yarns_graceful_flags() {
        let parse = |line: &str| {
            let parsed = Weft::try_parse_from(args(line)).unwrap();
            let Command::Rmadmin(a) = parsed.command else {
                panic!("parsed as {:?}", parsed.command)
            };
            (
                a.refresh_nodes,
                a.graceful,
                a.client_tracking,
                a.server_tracking,
            )
        };
        assert_eq!(
            parse("weft rmadmin -refreshNodes"),
            (true, None, false, false)
        );
        assert_eq!(
            parse("weft rmadmin -refreshNodes -g"),
            (true, Some(None), false, false)
        );
        assert_eq!(
            parse("weft rmadmin -refreshNodes -g 60 -client"),
            (true, Some(Some(60)), true, false)
        );
        assert_eq!(
            parse("weft rmadmin -refreshNodes -g -1 -server"),
            (true, Some(Some(-1)), false, true)
        );
        assert_eq!(
            parse("weft rmadmin -refreshNodes --graceful 5"),
            (true, Some(Some(5)), false, false)
        );
        // As Hadoop's: a timeout is a whole number of seconds from -1.
        for bad in ["-2", "soon", "2147483648"] {
            let e = Weft::try_parse_from(args(&format!("weft rmadmin -refreshNodes -g {bad}")))
                .err()
                .unwrap_or_else(|| panic!("-g {bad} is accepted"));
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{e}");
        }
    }

    #[test]
    fn refresh_nodes_resources_is_a_command_of_its_own() {
        let parsed = Weft::try_parse_from(args("weft rmadmin -refreshNodesResources")).unwrap();
        let Command::Rmadmin(a) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        assert!(a.refresh_nodes_resources);
        assert!(!a.refresh_nodes && !a.refresh_queues);
        assert_eq!(a.node_resize().unwrap(), None);
    }

    #[test]
    fn update_node_resource_reads_a_node_a_size_and_a_timeout_in_milliseconds() {
        let parse = |line: &str| {
            let parsed = Weft::try_parse_from(args(line))?;
            let Command::Rmadmin(a) = parsed.command else {
                panic!("parsed as {:?}", parsed.command)
            };
            a.node_resize()
        };
        assert_eq!(
            parse("weft rmadmin -updateNodeResource h1:8041 4096 4").unwrap(),
            Some(NodeResize {
                node: "h1:8041".into(),
                memory_mb: 4096,
                vcores: 4,
                timeout_ms: None
            })
        );
        let with = |t: &str| {
            parse(&format!(
                "weft rmadmin -updateNodeResource h1:8041 4096 4 {t} --request-timeout-ms 100"
            ))
        };
        assert_eq!(with("-1").unwrap().unwrap().timeout_ms, Some(-1));
        assert_eq!(with("30000").unwrap().unwrap().timeout_ms, Some(30000));
        assert!(parse("weft rmadmin -updateNodeResource h1:8041 4096 4 2147483647").is_ok());
        // Usage errors (exit 2): values, their number, another command.
        for (line, kind) in [
            ("h1:8041 4096", clap::error::ErrorKind::TooFewValues),
            (
                "h1:8041 4096 4 30 5",
                clap::error::ErrorKind::UnknownArgument,
            ),
            ("h1:8041 0 4", clap::error::ErrorKind::ValueValidation),
            ("h1:8041 4g 4", clap::error::ErrorKind::ValueValidation),
            ("h1:8041 4096 -4", clap::error::ErrorKind::ValueValidation),
            ("h1:8041 4096 4 -2", clap::error::ErrorKind::ValueValidation),
            (
                "h1:8041 4096 4 2147483648",
                clap::error::ErrorKind::ValueValidation,
            ),
            (
                "h1:8041 4096 4 soon",
                clap::error::ErrorKind::ValueValidation,
            ),
            (
                "h1:8041 4096 4 -refreshQueues",
                clap::error::ErrorKind::ArgumentConflict,
            ),
        ] {
            let e = parse(&format!("weft rmadmin -updateNodeResource {line}"))
                .err()
                .unwrap_or_else(|| panic!("{line} is accepted"));
            assert_eq!(e.kind(), kind, "{line}: {e}");
            assert_eq!(e.exit_code(), 2, "{line}");
        }
        let e = parse("weft rmadmin -updateNodeResource h1:8041 4g 4").unwrap_err();
        assert!(e.to_string().contains("MEMORY_MB \"4g\""), "{e}");
    }

    #[test]
    fn queues_is_a_command_of_its_own() {
        for line in [
            "weft queues check conf/fair-scheduler.xml --strict",
            "weft queues show conf/fair-scheduler.xml --cluster 40960mb,40vcores --format json",
            "weft queues place conf/fair-scheduler.xml --user alice --groups dev,staff --queue a",
        ] {
            match Weft::try_parse_from(args(line)) {
                Ok(Weft {
                    command: Command::Queues(_),
                    ..
                }) => {}
                other => panic!("{line} parsed as {other:?}"),
            }
        }
        // `weft queue` (YARN's -status) is another command.
        let e = Weft::try_parse_from(args("weft queues -status root")).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
    }

    #[test]
    fn the_load_generator_needs_a_thread() {
        let e = Weft::try_parse_from(["weft", "load", "--threads", "0"])
            .expect_err("no runtime runs on no thread");
        assert!(e.to_string().contains("--threads"), "{e}");
        assert!(Weft::try_parse_from(["weft", "load", "--threads", "1"]).is_ok());
    }

    #[test]
    fn the_request_timeout_is_bounded() {
        let parsed = Weft::try_parse_from(["weft", "load", "--request-timeout-ms", "600000"]);
        let Ok(Weft {
            command: Command::Load(a),
            ..
        }) = parsed
        else {
            panic!("parsed as {parsed:?}")
        };
        assert_eq!(a.request_timeout_ms, 600_000);
        for bad in ["0", "9", "600001", "18446744073709551615"] {
            let e = Weft::try_parse_from(["weft", "load", "--request-timeout-ms", bad])
                .err()
                .unwrap_or_else(|| panic!("--request-timeout-ms {bad} is accepted"));
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{e}");
            assert!(e.to_string().contains("10..=600000"), "{e}");
        }
    }

    #[test]
    fn one_shot_commands_have_a_bounded_request_timeout() {
        let timeout = |line: &str| match Weft::try_parse_from(args(line)) {
            Ok(Weft {
                command: Command::Application(a),
                ..
            }) => a.client.request_timeout_ms,
            Ok(Weft {
                command: Command::Node(a),
                ..
            }) => a.client.request_timeout_ms,
            Ok(Weft {
                command: Command::Rmadmin(a),
                ..
            }) => a.client.request_timeout_ms,
            Ok(Weft {
                command: Command::Queue(a),
                ..
            }) => a.client.request_timeout_ms,
            other => panic!("{line} parsed as {other:?}"),
        };
        assert_eq!(timeout("weft application -list"), 30_000);
        assert_eq!(
            timeout("weft node -list --request-timeout-ms 10 --rm rm1"),
            10
        );
        assert_eq!(
            timeout("weft rmadmin -refreshNodes -g 3600 -client -request-timeout-ms 600000"),
            600_000
        );
        assert_eq!(
            timeout("weft rmadmin -updateNodeResource h1:8041 4096 4 -1 -request-timeout-ms 500"),
            500
        );
        assert_eq!(
            timeout("weft queue -status root --request-timeout-ms 5000"),
            5000
        );
        for bad in ["0", "9", "600001", "18446744073709551615", "5s"] {
            let line = format!("weft node -list --request-timeout-ms {bad}");
            let e = Weft::try_parse_from(args(&line))
                .err()
                .unwrap_or_else(|| panic!("{line} is accepted"));
            // A usage error: exit status 2.
            assert_eq!(e.exit_code(), 2, "{line}: {e}");
            assert!(e.to_string().contains("--request-timeout-ms"), "{e}");
        }
        for line in [
            "weft app list --request-timeout-ms 1000",
            "weft app status application_1_0001 --request-timeout-ms 1000",
            "weft app kill application_1_0001 --request-timeout-ms 1000",
        ] {
            if let Err(e) = Weft::try_parse_from(args(line)) {
                panic!("{line} is refused: {e}");
            }
        }
        // `app submit` runs the application's AM to its end: one limit for
        // every call would not fit it, and a flag taken and ignored misleads.
        let e = Weft::try_parse_from(args(
            "weft app submit --command true --request-timeout-ms 1000",
        ))
        .expect_err("app submit takes no request timeout");
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument, "{e}");
    }

    #[test]
    fn a_bad_rm_address_is_a_usage_error() {
        for line in [
            "weft application -list --rm rm:x",
            "weft node -list --rm ftp://rm:8088",
            "weft load --rm http://rm:8088/ws",
        ] {
            let e = Weft::try_parse_from(args(line))
                .err()
                .unwrap_or_else(|| panic!("{line} is accepted"));
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{line}: {e}"
            );
            assert!(e.to_string().contains("--rm"), "{e}");
        }
        let parsed = Weft::try_parse_from(args("weft application -list --rm rm1")).unwrap();
        let Command::Application(a) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        assert_eq!(a.client.client.rm, "rm1");
        // HTTPS is an address like another; whom to trust is --ca-file's.
        let parsed = Weft::try_parse_from(args(
            "weft node -list --rm https://rm1 --ca-file /etc/weft/ca.pem",
        ))
        .unwrap();
        assert_eq!(parsed.ca_file, Some(PathBuf::from("/etc/weft/ca.pem")));
    }

    #[test]
    fn an_empty_user_is_refused_before_the_rm_is_called() {
        let e = Weft::try_parse_from(["weft", "application", "--list", "--user", ""])
            .expect_err("an empty --user is refused");
        assert_eq!(e.kind(), clap::error::ErrorKind::InvalidValue, "{e}");
        assert!(e.to_string().contains("--user"), "{e}");
    }

    #[test]
    fn a_lifetime_must_be_a_positive_number_of_seconds() {
        for secs in ["0", "-5", "ten", "100000000001"] {
            let e = Weft::try_parse_from(args(&format!(
                "weft application -appId application_1_0001 -updateLifetime {secs}"
            )))
            .expect_err(secs);
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{secs}: {e}"
            );
            assert!(e.to_string().contains("--updateLifetime"), "{e}");
        }
    }

    #[test]
    fn attempt_and_container_commands_take_yarn_ids() {
        let parsed = Weft::try_parse_from(args(
            "weft applicationattempt -list application_1_0001 --rm rm1 --request-timeout-ms 50",
        ))
        .unwrap();
        let Command::Applicationattempt(a) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        assert_eq!(a.list, Some(weft_model::AppId::new(1, 1)));
        assert_eq!(a.status, None);
        assert_eq!(a.client.client.rm, "rm1");
        assert_eq!(a.client.request_timeout_ms, 50);
        let parsed = Weft::try_parse_from(args(
            "weft applicationattempt -status appattempt_1_0001_000002 --user carol",
        ))
        .unwrap();
        let Command::Applicationattempt(a) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        assert_eq!(
            a.status.map(|s| s.to_string()).as_deref(),
            Some("appattempt_1_0001_000002")
        );
        assert_eq!(a.client.client.user(), "carol");
        let parsed =
            Weft::try_parse_from(args("weft container -list appattempt_1_0001_000002")).unwrap();
        let Command::Container(c) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        assert_eq!(
            c.list.map(|s| s.to_string()).as_deref(),
            Some("appattempt_1_0001_000002")
        );
        let parsed = Weft::try_parse_from(args(
            "weft container -status container_e03_1_0001_02_000007",
        ))
        .unwrap();
        let Command::Container(c) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        assert_eq!(
            c.status.map(|s| s.to_string()).as_deref(),
            Some("container_e03_1_0001_02_000007")
        );
        assert_eq!(c.client.request_timeout_ms, CLIENT_REQUEST_TIMEOUT_MS);
        // A malformed id is a usage error naming the option and the form.
        for (line, option, form) in [
            (
                "weft applicationattempt -list app_1",
                "--list",
                "application_<clusterTimestamp>_<sequence>",
            ),
            (
                "weft applicationattempt -status application_1_0001",
                "--status",
                "appattempt_<clusterTimestamp>_<sequence>_<attempt>",
            ),
            (
                "weft container -list container_1_0001_01_000001",
                "--list",
                "appattempt_<clusterTimestamp>_<sequence>_<attempt>",
            ),
            (
                "weft container -status appattempt_1_0001_000001",
                "--status",
                "container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<sequence>",
            ),
        ] {
            let e = Weft::try_parse_from(args(line)).expect_err(line);
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{line}: {e}"
            );
            let text = e.to_string();
            assert!(
                text.contains(option) && text.contains(form),
                "{line}: {text}"
            );
        }
        // Exactly one command.
        for line in [
            "weft applicationattempt",
            "weft container --rm rm1",
            "weft applicationattempt -list application_1_0001 -status appattempt_1_0001_000001",
            "weft container -list appattempt_1_0001_000001 -status container_1_0001_01_000001",
        ] {
            let e = Weft::try_parse_from(args(line)).expect_err(line);
            assert!(
                matches!(
                    e.kind(),
                    clap::error::ErrorKind::MissingRequiredArgument
                        | clap::error::ErrorKind::ArgumentConflict
                ),
                "{line}: {e}"
            );
        }
    }

    #[test]
    fn yarn_single_dash_options_are_accepted() {
        assert_eq!(
            args("weft application -list -appStates ALL"),
            ["weft", "application", "--list", "--appStates", "ALL"]
        );
        assert_eq!(
            args("weft application -appId a -updatePriority -1"),
            [
                "weft",
                "application",
                "--appId",
                "a",
                "--updatePriority",
                "-1"
            ]
        );
        let parsed = Weft::try_parse_from(args(
            "weft application -movetoqueue application_1_0001 -queue root.b --rm http://rm:1",
        ))
        .unwrap();
        let Command::Application(a) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        assert_eq!(a.move_to_queue.as_deref(), Some("application_1_0001"));
        assert_eq!(a.queue.as_deref(), Some("root.b"));
        assert_eq!(a.client.client.rm, "http://rm:1");
        let parsed =
            Weft::try_parse_from(args("weft application -explain application_1_0001")).unwrap();
        let Command::Application(a) = parsed.command else {
            panic!("parsed as {:?}", parsed.command)
        };
        assert_eq!(a.explain.as_deref(), Some("application_1_0001"));
        assert!(Weft::try_parse_from(args("weft rmadmin -refreshQueues")).is_ok());
        assert!(Weft::try_parse_from(args("weft node -list -states RUNNING,LOST")).is_ok());
        assert!(Weft::try_parse_from(args("weft queue -status root.dev")).is_ok());
        assert!(Weft::try_parse_from(args("weft rm --conf conf --listen 127.0.0.1:0")).is_ok());
        assert!(Weft::try_parse_from(args("weft rm --state-store /var/lib/weft")).is_ok());
        assert!(Weft::try_parse_from(args("weft local --nodes 2 --no-demo")).is_ok());
        assert!(
            Weft::try_parse_from(args("weft app status application_1_0001 --rm http://rm:1"))
                .is_ok()
        );
        assert!(Weft::try_parse_from(args("weft app kill application_1_0001")).is_ok());
        assert!(Weft::try_parse_from(args("weft app list --all")).is_ok());
    }
}
