//! The load generator behind `weft load`: simulated NodeManagers and
//! ApplicationMasters speaking the real HTTP protocols to a running RM (as
//! Hadoop SLS's simulators do), and a report of throughput and latency.
//!
//! Nodes are spread over a few worker tasks, each with one kept-alive
//! connection, heartbeating on a fixed schedule (falling behind lowers the
//! rate rather than bunching requests). A node "runs" a container for a fixed
//! time, then reports it complete. An AM starts when a node is given its
//! container (with its attempt's AM token, which each of its calls shows,
//! as a node hands it to the AM it launches; the nodes show the RM's node
//! secret when the run is given one), asks for all its containers at once,
//! polls with allocate calls,
//! and finishes when they have all completed; another app is submitted in
//! its place, so the number of live apps stays constant. Counting starts
//! after a warm-up. Nothing here knows the scheduler's internals.
//!
//! When the window closes (or the run is interrupted), every application the
//! run still has alive is ended, its AM finishing it when one registered and
//! a kill through the REST API otherwise, and the simulated nodes unregister:
//! a load run leaves no applications and no phantom capacity behind it.
//!
//! Every call has a timeout (`LoadConfig::request_timeout`), so an RM that
//! stops answering (SIGSTOP, a network black hole) costs failed requests,
//! counted as timeouts, rather than workers that wait for ever: the run
//! still ends, and the end of the run gives up on a connection's share of
//! apps or nodes once the RM has let one of its calls time out.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use weft_model::{AppId, ContainerId};

use crate::client::{ClientError, RmClient, decode};
use crate::dto::ResourceDto;
use crate::dto::am::{AllocateRequestDto, AllocateResponseDto, AmFinishRequest, AskDto};
use crate::dto::apps::{AppStateDto, NewApplicationDto, SubmitApplicationDto};
use crate::dto::nm::{
    ContainerStatusDto, NodeHeartbeatRequest, NodeHeartbeatResponse, NodeRegisterRequest,
    NodeRegisterResponse, NodeUnregisterRequest,
};
use crate::node_secret::NodeSecret;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// The RM, `http://host:port`.
    pub rm: String,
    /// Simulated NodeManagers.
    pub nodes: usize,
    /// Applications alive at any time.
    pub apps: usize,
    /// Containers each application asks for (besides its AM).
    pub containers_per_app: u32,
    /// How long a container runs.
    pub container_runtime: Duration,
    /// Size of every container (the AM's too).
    pub container: ResourceDto,
    /// Capability of every node.
    pub node: ResourceDto,
    /// Racks the nodes are spread over.
    pub racks: usize,
    /// Heartbeat interval; `None` uses the one the RM gives at registration.
    pub heartbeat_interval: Option<Duration>,
    /// How often an AM calls allocate.
    pub am_interval: Duration,
    /// Queues the apps are submitted to, round robin.
    pub queues: Vec<String>,
    /// Distinct users the apps are submitted as (`load-0`, `load-1`, ...).
    pub users: usize,
    /// Connections (and worker tasks) for nodes.
    pub node_connections: usize,
    /// Connections (and worker tasks) for AMs and submissions.
    pub am_connections: usize,
    /// Time before counting starts.
    pub warmup: Duration,
    /// Time counted.
    pub duration: Duration,
    /// Host name prefix of the simulated nodes.
    pub host_prefix: String,
    /// How long any one call may take, connecting included, before it
    /// counts as a failed request (see `DEFAULT_REQUEST_TIMEOUT`).
    pub request_timeout: Duration,
    /// The RM's node secret (`weft.nm.secret.file`), which the simulated
    /// nodes show; `None` for an RM that does not authenticate nodes.
    pub node_secret: Option<NodeSecret>,
}

/// The default `LoadConfig::request_timeout`. A healthy RM answers in
/// milliseconds, so a call ten seconds late measures nothing but a stall,
/// and a stall of a few seconds (a long pause of the RM) still shows as
/// latency rather than as failures. It is fixed rather than derived from the
/// heartbeat interval: that may be the RM's to give, at a registration that
/// itself needs a timeout, and AM calls have their own interval. After the
/// window a worker is at most two calls (a heartbeat and the registration
/// that follows its failure) from noticing, and the end of the run gives up
/// on a connection after one timed-out call, so a silent RM holds the report
/// back by a handful of timeouts, under a minute.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for LoadConfig {
    fn default() -> LoadConfig {
        LoadConfig {
            rm: "http://127.0.0.1:8088".to_owned(),
            nodes: 100,
            apps: 20,
            containers_per_app: 50,
            container_runtime: Duration::from_secs(2),
            container: ResourceDto {
                memory: 1024,
                vcores: 1,
            },
            node: ResourceDto {
                memory: 8192,
                vcores: 8,
            },
            racks: 10,
            heartbeat_interval: None,
            am_interval: Duration::from_secs(1),
            queues: vec!["default".to_owned()],
            users: 64,
            node_connections: 32,
            am_connections: 8,
            warmup: Duration::from_secs(5),
            duration: Duration::from_secs(20),
            host_prefix: "sim".to_owned(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            node_secret: None,
        }
    }
}

/// Why the load run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The RM could not be reached or refused a setup call.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The configuration makes no sense.
    #[error("invalid load: {0}")]
    Invalid(&'static str),
}

/// Latency percentiles, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Percentiles {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50: u32,
    /// 90th percentile.
    pub p90: u32,
    /// 99th percentile.
    pub p99: u32,
    /// 99.9th percentile.
    pub p999: u32,
    /// Largest.
    pub max: u32,
}

impl Percentiles {
    /// The percentiles of `samples` (µs), which it sorts.
    pub fn of(samples: &mut [u32]) -> Percentiles {
        if samples.is_empty() {
            return Percentiles::default();
        }
        samples.sort_unstable();
        let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
        Percentiles {
            count: samples.len() as u64,
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            p999: at(0.999),
            max: samples[samples.len() - 1],
        }
    }
}

impl fmt::Display for Percentiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |us: u32| f64::from(us) / 1000.0;
        write!(
            f,
            "p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms",
            ms(self.p50),
            ms(self.p90),
            ms(self.p99),
            ms(self.p999),
            ms(self.max)
        )
    }
}

/// What a run measured (over the counted window only), and how it ended
/// what it left.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadReport {
    /// Length of the counted window (shorter than asked when interrupted).
    pub window: Duration,
    /// The run was interrupted before its window closed.
    pub interrupted: bool,
    /// Heartbeats answered.
    pub heartbeats: u64,
    /// Heartbeat latency.
    pub heartbeat_latency: Percentiles,
    /// Allocate calls answered.
    pub allocates: u64,
    /// Allocate latency.
    pub allocate_latency: Percentiles,
    /// Containers handed to nodes to launch (AM containers included).
    pub containers_launched: u64,
    /// Containers delivered to AMs in allocate answers.
    pub containers_allocated: u64,
    /// Containers the nodes reported complete.
    pub containers_completed: u64,
    /// Apps submitted.
    pub apps_submitted: u64,
    /// Apps whose AM finished.
    pub apps_finished: u64,
    /// Apps the RM failed, found when the run ended them: a submission the
    /// RM refuses (no such queue, placement, ACLs) is still answered 202, as
    /// in Hadoop, and shows only as the app's state, so without this a run
    /// whose every app was refused reported no containers and no errors.
    pub apps_failed: u64,
    /// The diagnostics of the first failed app, saying why.
    pub first_failure: Option<String>,
    /// How the run ended the applications it had alive (not counted in the window).
    pub ending: Ending,
    /// Failed calls during the run, plus `apps_failed`.
    pub errors: u64,
    /// The failed calls of `errors` that timed out.
    pub timeouts: u64,
}

/// What the run did after its window to leave nothing behind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ending {
    /// Apps whose registered AM finished them (final status KILLED).
    pub finished: u64,
    /// Apps with no registered AM, killed through `PUT .../state`.
    pub killed: u64,
    /// Apps that could not be ended and are still alive in the RM.
    pub left: u64,
    /// Simulated nodes unregistered.
    pub nodes_unregistered: u64,
    /// Simulated nodes that could not be unregistered (the RM expires them).
    pub nodes_left: u64,
    /// Calls to end apps or unregister nodes that timed out; after each,
    /// the rest of that connection's share was left untried.
    pub timeouts: u64,
}

impl Ending {
    /// Applications ended.
    pub fn apps_ended(&self) -> u64 {
        self.finished + self.killed
    }
}

impl LoadReport {
    fn per_second(&self, n: u64) -> f64 {
        n as f64 / self.window.as_secs_f64().max(1e-9)
    }

    /// Heartbeats per second.
    pub fn heartbeat_rate(&self) -> f64 {
        self.per_second(self.heartbeats)
    }

    /// Containers delivered to AMs per second (end to end).
    pub fn allocation_rate(&self) -> f64 {
        self.per_second(self.containers_allocated)
    }
}

impl fmt::Display for LoadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "window:               {:.1} s{}",
            self.window.as_secs_f64(),
            if self.interrupted {
                " (interrupted)"
            } else {
                ""
            }
        )?;
        writeln!(
            f,
            "heartbeats:           {} ({:.0}/s)",
            self.heartbeats,
            self.heartbeat_rate()
        )?;
        writeln!(f, "heartbeat latency:    {}", self.heartbeat_latency)?;
        writeln!(
            f,
            "allocate calls:       {} ({:.0}/s)",
            self.allocates,
            self.per_second(self.allocates)
        )?;
        writeln!(f, "allocate latency:     {}", self.allocate_latency)?;
        writeln!(
            f,
            "containers to AMs:    {} ({:.0}/s)",
            self.containers_allocated,
            self.allocation_rate()
        )?;
        writeln!(
            f,
            "containers launched:  {} ({:.0}/s)",
            self.containers_launched,
            self.per_second(self.containers_launched)
        )?;
        writeln!(
            f,
            "containers completed: {} ({:.0}/s)",
            self.containers_completed,
            self.per_second(self.containers_completed)
        )?;
        writeln!(
            f,
            "apps:                 {} submitted, {} finished",
            self.apps_submitted, self.apps_finished
        )?;
        // Over the whole run: a refusal at submission is usually in the warm-up.
        write!(f, "apps the RM failed:   {} in the run", self.apps_failed)?;
        match &self.first_failure {
            Some(why) => writeln!(f, ", the first {why}")?,
            None => writeln!(f)?,
        }
        let e = &self.ending;
        write!(
            f,
            "ended after the run:  {} apps ({} finished by their AM, {} killed before an AM registered), {} left alive; {} nodes unregistered, {} left",
            e.apps_ended(),
            e.finished,
            e.killed,
            e.left,
            e.nodes_unregistered,
            e.nodes_left
        )?;
        if e.timeouts > 0 {
            write!(
                f,
                " ({} calls timed out, each ending its connection's share)",
                e.timeouts
            )?;
        }
        writeln!(f)?;
        write!(f, "errors:               {}", self.errors)?;
        if self.timeouts > 0 {
            write!(f, " ({} timed out)", self.timeouts)?;
        }
        Ok(())
    }
}

#[derive(Default)]
struct Counters {
    heartbeats: AtomicU64,
    allocates: AtomicU64,
    launched: AtomicU64,
    allocated: AtomicU64,
    completed: AtomicU64,
    submitted: AtomicU64,
    finished: AtomicU64,
    errors: AtomicU64,
    timeouts: AtomicU64,
}

/// An application submitted and not known to have ended.
struct LiveApp {
    /// Who submitted it: a kill is the owner's to make.
    user: String,
    /// The AM token of its AM, once that registered (and was not dropped),
    /// so that the end of the run can finish the app as its AM.
    registered: Option<String>,
}

struct Shared {
    config: LoadConfig,
    counters: Counters,
    /// Every app the run has alive, by id, so that the end of the run can
    /// end them all, whatever state each reached.
    live: Mutex<BTreeMap<String, LiveApp>>,
    /// Counting happens between these instants.
    window: (Instant, Instant),
    stop: watch::Receiver<bool>,
    am_workers: Vec<mpsc::UnboundedSender<Launch>>,
}

/// An AM container a simulated node was given: its app, and the AM token
/// the heartbeat answer carried for it, as a node would hand it to the AM.
type Launch = (AppId, String);

impl Shared {
    fn counting(&self, at: Instant) -> bool {
        at >= self.window.0 && at < self.window.1
    }

    fn count(&self, at: Instant, counter: &AtomicU64, n: u64) {
        if self.counting(at) {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }

    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Counts a failed call.
    fn failed(&self, e: &ClientError) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        if matches!(e, ClientError::Timeout { .. }) {
            self.counters.timeouts.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn am_worker_for(&self, app: AppId) -> &mpsc::UnboundedSender<Launch> {
        &self.am_workers[app.seq as usize % self.am_workers.len()]
    }

    fn live(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, LiveApp>> {
        // A worker that panicked holding the lock left the map whole: each
        // change is one insert, update or remove.
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set_registered(&self, app: AppId, am_token: Option<String>) {
        if let Some(a) = self.live().get_mut(&app.to_string()) {
            a.registered = am_token;
        }
    }
}

/// The longest duration or interval a run takes.
const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Runs the load and reports what it measured.
pub async fn run(config: LoadConfig) -> Result<LoadReport, LoadError> {
    run_until(config, std::future::pending()).await
}

/// Runs the load until its window closes or `interrupt` completes (Ctrl-C),
/// whichever is first, then ends what it left alive and reports.
pub async fn run_until(
    config: LoadConfig,
    interrupt: impl Future<Output = ()>,
) -> Result<LoadReport, LoadError> {
    if config.nodes == 0 || config.node_connections == 0 || config.am_connections == 0 {
        return Err(LoadError::Invalid(
            "nodes and connection counts must be positive",
        ));
    }
    if config.queues.is_empty() || config.users == 0 {
        return Err(LoadError::Invalid(
            "at least one queue and one user are needed",
        ));
    }
    if config.request_timeout.is_zero() {
        return Err(LoadError::Invalid("the request timeout must be positive"));
    }
    // Each is added to the clock (and the window's two to each other), which
    // panics past what an instant can hold; a year is more than any run needs.
    let longest = [
        config.warmup,
        config.duration,
        config.container_runtime,
        config.am_interval,
        config.heartbeat_interval.unwrap_or_default(),
        config.request_timeout,
    ]
    .into_iter()
    .max()
    .unwrap_or_default();
    if longest > MAX_DURATION {
        return Err(LoadError::Invalid(
            "durations and intervals must be at most a year",
        ));
    }
    // Fail early and clearly when the RM is not there.
    let mut probe = client(&config)?;
    let _: serde_json::Value = probe.get("/ws/v1/cluster/info").await?;

    let (stop_tx, stop) = watch::channel(false);
    let mut am_senders = Vec::new();
    let mut am_receivers = Vec::new();
    for _ in 0..config.am_connections {
        let (tx, rx) = mpsc::unbounded_channel();
        am_senders.push(tx);
        am_receivers.push(rx);
    }
    // Registration of many nodes takes a while; the window is placed after it.
    let registration_allowance = Duration::from_millis(200 + config.nodes as u64 / 10);
    let start = Instant::now() + registration_allowance;
    let window = (
        start + config.warmup,
        start + config.warmup + config.duration,
    );
    let shared = Arc::new(Shared {
        config: config.clone(),
        counters: Counters::default(),
        live: Mutex::new(BTreeMap::new()),
        window,
        stop,
        am_workers: am_senders,
    });

    let mut node_tasks = Vec::new();
    let per_worker = config.nodes.div_ceil(config.node_connections);
    for w in 0..config.node_connections {
        let first = w * per_worker;
        let last = ((w + 1) * per_worker).min(config.nodes);
        if first >= last {
            break;
        }
        let shared = shared.clone();
        node_tasks.push(tokio::spawn(node_worker(shared, first..last, start)));
    }
    let mut am_tasks = Vec::new();
    for (w, rx) in am_receivers.into_iter().enumerate() {
        let shared = shared.clone();
        am_tasks.push(tokio::spawn(am_worker(shared, w, rx)));
    }
    // An interrupt is only awaited while the run sleeps, so a call in
    // flight (a submission above all) completes and its app is on the books.
    let mut interrupt = std::pin::pin!(interrupt);
    let mut interrupted = tokio::select! {
        () = tokio::time::sleep_until(start) => false,
        () = &mut interrupt => true,
    };
    let mut submitter = client(&config)?;
    if !interrupted {
        // The first apps, spread over the AM workers' connections.
        for i in 0..config.apps {
            // Between submissions, never during one (see above): against an
            // RM that does not answer each takes the request timeout, and
            // all of them could outlast the window or try an operator's
            // patience.
            interrupted = tokio::select! {
                biased;
                () = &mut interrupt => true,
                () = std::future::ready(()) => false,
            };
            if interrupted || Instant::now() >= window.1 {
                break;
            }
            if let Err(e) = submit_app(&shared, &mut submitter, i).await {
                tracing::warn!(error = %e, "submission failed");
                shared.failed(&e);
            }
        }
    }
    let interrupted = interrupted
        || tokio::select! {
            () = tokio::time::sleep_until(window.1) => false,
            () = &mut interrupt => true,
        };
    let ended_at = Instant::now().clamp(window.0, window.1);
    let _ = stop_tx.send(true);
    let mut hb_lat = Vec::new();
    // A worker that panicked stopped its share of the load part way: an
    // error, not a quietly smaller run.
    let lost_worker = |e: tokio::task::JoinError| {
        tracing::error!(error = %e, "a load worker stopped");
        shared.counters.errors.fetch_add(1, Ordering::Relaxed);
    };
    for t in node_tasks {
        match t.await {
            Ok(mut l) => hb_lat.append(&mut l),
            Err(e) => lost_worker(e),
        }
    }
    let mut alloc_lat = Vec::new();
    for t in am_tasks {
        match t.await {
            Ok(mut l) => alloc_lat.append(&mut l),
            Err(e) => lost_worker(e),
        }
    }
    // Every worker has stopped: the books of live apps are final.
    if interrupted {
        tracing::info!("interrupted; ending the run's applications");
    }
    let ended = end_everything(&shared).await;
    let c = &shared.counters;
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    Ok(LoadReport {
        window: ended_at - window.0,
        interrupted,
        heartbeats: get(&c.heartbeats),
        heartbeat_latency: Percentiles::of(&mut hb_lat),
        allocates: get(&c.allocates),
        allocate_latency: Percentiles::of(&mut alloc_lat),
        containers_launched: get(&c.launched),
        containers_allocated: get(&c.allocated),
        containers_completed: get(&c.completed),
        apps_submitted: get(&c.submitted),
        apps_finished: get(&c.finished),
        apps_failed: ended.failed,
        first_failure: ended.first_failure,
        ending: ended.ending,
        errors: get(&c.errors) + ended.failed,
        timeouts: get(&c.timeouts),
    })
}

/// What ending the apps found, besides the `Ending`.
#[derive(Default)]
struct Ended {
    ending: Ending,
    failed: u64,
    first_failure: Option<String>,
}

/// How one app ended.
enum AppEnd {
    Finished,
    Killed,
    /// The RM had failed it already.
    Failed,
    /// It had ended some other way (its AM finished it as the run stopped).
    AlreadyOver,
    Left,
    /// Left because the RM did not answer in time.
    Unanswered,
}

/// Ends every app still alive, then unregisters the nodes, each spread over
/// the AM connections. All apps go first: a node unregistered under a
/// running AM would fail the attempt and have the RM start another.
async fn end_everything(shared: &Arc<Shared>) -> Ended {
    let connections = shared.config.am_connections.max(1);
    let apps: Vec<(String, LiveApp)> = std::mem::take(&mut *shared.live()).into_iter().collect();
    let mut shares: Vec<Vec<(String, LiveApp)>> = (0..connections).map(|_| Vec::new()).collect();
    for (i, app) in apps.into_iter().enumerate() {
        shares[i % connections].push(app);
    }
    let mut handles = Vec::new();
    for share in shares {
        let len = share.len() as u64;
        let shared = shared.clone();
        handles.push((
            len,
            tokio::spawn(async move { end_apps(&shared, share).await }),
        ));
    }
    let mut ended = Ended::default();
    for (len, h) in handles {
        let Ok(part) = h.await else {
            // A worker that panicked ended an unknown part of its share.
            ended.ending.left += len;
            continue;
        };
        ended.ending.finished += part.ending.finished;
        ended.ending.killed += part.ending.killed;
        ended.ending.left += part.ending.left;
        ended.ending.timeouts += part.ending.timeouts;
        ended.failed += part.failed;
        if ended.first_failure.is_none() {
            ended.first_failure = part.first_failure;
        }
    }
    let mut handles = Vec::new();
    for w in 0..connections {
        let nodes: Vec<String> = (w..shared.config.nodes)
            .step_by(connections)
            .map(|i| node_id(&shared.config, i))
            .collect();
        let len = nodes.len() as u64;
        let shared = shared.clone();
        handles.push((
            len,
            tokio::spawn(async move { unregister_nodes(&shared, nodes).await }),
        ));
    }
    for (len, h) in handles {
        let part = h.await.unwrap_or(Unregistered {
            done: 0,
            left: len,
            timed_out: false,
        });
        ended.ending.nodes_unregistered += part.done;
        ended.ending.nodes_left += part.left;
        ended.ending.timeouts += u64::from(part.timed_out);
    }
    let e = &ended.ending;
    tracing::info!(
        finished = e.finished,
        killed = e.killed,
        failed = ended.failed,
        left = e.left,
        nodes = e.nodes_unregistered,
        nodes_left = e.nodes_left,
        timeouts = e.timeouts,
        "ended the run's applications and nodes"
    );
    if let Some(why) = &ended.first_failure {
        tracing::warn!(
            failed = ended.failed,
            first = %why,
            "the RM failed applications this run submitted"
        );
    }
    ended
}

/// Ends one connection's share of the apps.
async fn end_apps(shared: &Shared, apps: Vec<(String, LiveApp)>) -> Ended {
    let mut ended = Ended::default();
    let Ok(mut client) = client(&shared.config) else {
        ended.ending.left = apps.len() as u64;
        return ended;
    };
    let mut apps = apps.into_iter();
    for (app, live) in apps.by_ref() {
        match end_app(&mut client, &app, &live).await {
            AppEnd::Finished => ended.ending.finished += 1,
            AppEnd::Killed => ended.ending.killed += 1,
            AppEnd::AlreadyOver => {}
            AppEnd::Failed => {
                ended.failed += 1;
                if ended.first_failure.is_none() {
                    ended.first_failure = Some(failure_reason(&mut client, &app).await);
                }
            }
            AppEnd::Left => ended.ending.left += 1,
            AppEnd::Unanswered => {
                ended.ending.left += 1;
                ended.ending.timeouts += 1;
                break;
            }
        }
    }
    // The RM let a call time out: waiting as long again for each of the
    // rest would only hold the report back to say the same.
    let n_untried = apps.len() as u64;
    if n_untried > 0 {
        tracing::warn!(
            apps = n_untried,
            "the RM is not answering; these applications are left alive"
        );
    }
    ended.ending.left += n_untried;
    ended
}

/// What unregistering one connection's share of the nodes did.
struct Unregistered {
    done: u64,
    left: u64,
    /// A call timed out, and the nodes after it were not tried.
    timed_out: bool,
}

/// Unregisters one connection's share of the nodes.
async fn unregister_nodes(shared: &Shared, nodes: Vec<String>) -> Unregistered {
    let mut res = Unregistered {
        done: 0,
        left: 0,
        timed_out: false,
    };
    let Ok(mut client) = node_client(&shared.config) else {
        res.left = nodes.len() as u64;
        return res;
    };
    let n_nodes = nodes.len() as u64;
    for node in nodes {
        let body = NodeUnregisterRequest { node_id: node };
        let answer: Result<serde_json::Value, _> = client
            .call(Method::POST, "/ws/v1/nm/unregister", Some(&body))
            .await;
        match answer {
            Ok(_) => res.done += 1,
            // As for apps: one timeout says the RM is not answering.
            Err(ClientError::Timeout { .. }) => {
                res.timed_out = true;
                res.left = n_nodes - res.done;
                tracing::warn!(
                    nodes = res.left,
                    "the RM is not answering; these nodes are left for it to expire"
                );
                break;
            }
            Err(e) => {
                tracing::debug!(node = %body.node_id, error = %e, "unregistration failed");
                res.left += 1;
            }
        }
    }
    res
}

/// Ends one app: its AM finishes it if one registered, else (or if that is
/// refused) a kill as its owner.
async fn end_app(client: &mut RmClient, app: &str, live: &LiveApp) -> AppEnd {
    if let Some(token) = &live.registered {
        let body = AmFinishRequest {
            final_status: "KILLED".to_owned(),
            diagnostics: "the weft load run ended".to_owned(),
            tracking_url: None,
        };
        client.set_bearer(Some(token.clone()));
        let answer: Result<serde_json::Value, _> = client
            .call(
                Method::POST,
                &format!("/ws/v1/am/{app}/finish"),
                Some(&body),
            )
            .await;
        client.set_bearer(None);
        match answer {
            Ok(_) => return AppEnd::Finished,
            Err(e @ ClientError::Timeout { .. }) => {
                tracing::debug!(%app, error = %e, "AM finish unanswered; the app is left alive");
                return AppEnd::Unanswered;
            }
            Err(e) => tracing::debug!(%app, error = %e, "AM finish refused; killing the app"),
        }
    }
    let body = AppStateDto {
        state: "KILLED".to_owned(),
        diagnostics: Some("the weft load run ended".to_owned()),
    };
    let path = format!(
        "/ws/v1/cluster/apps/{app}/state?user.name={}",
        crate::client::encode_query(&live.user)
    );
    // A kill of an app that has ended answers its final state instead.
    match client
        .call::<AppStateDto>(Method::PUT, &path, Some(&body))
        .await
    {
        Ok(s) if s.state == "KILLED" => AppEnd::Killed,
        Ok(s) if s.state == "FAILED" => AppEnd::Failed,
        Ok(_) => AppEnd::AlreadyOver,
        Err(e) => {
            tracing::warn!(%app, error = %e, "cannot end the application; it is left alive");
            match e {
                ClientError::Timeout { .. } => AppEnd::Unanswered,
                _ => AppEnd::Left,
            }
        }
    }
}

/// Why the RM failed `app`, in its own words.
async fn failure_reason(client: &mut RmClient, app: &str) -> String {
    let answer: Result<serde_json::Value, _> =
        client.get(&format!("/ws/v1/cluster/apps/{app}")).await;
    match answer {
        Ok(v) => match v["app"]["diagnostics"].as_str() {
            Some(d) if !d.trim().is_empty() => format!("{app}: {}", d.trim()),
            _ => format!("{app}: no diagnostics"),
        },
        Err(e) => format!("{app}: cannot read its report: {e}"),
    }
}

/// A client for one connection of the run.
fn client(config: &LoadConfig) -> Result<RmClient, ClientError> {
    Ok(RmClient::new(&config.rm, None)?.with_timeout(config.request_timeout))
}

/// A client for simulated nodes: it shows the node secret, if any.
fn node_client(config: &LoadConfig) -> Result<RmClient, ClientError> {
    let c = client(config)?;
    Ok(match &config.node_secret {
        Some(secret) => c.with_bearer(secret.value()),
        None => c,
    })
}

fn node_id(config: &LoadConfig, i: usize) -> String {
    format!("{}{i:05}.example:8041", config.host_prefix)
}

struct SimNode {
    id: String,
    rack: String,
    response_id: u64,
    /// Running containers and when they end; `None` for AM containers, which
    /// run until the RM says stop.
    running: Vec<(ContainerId, Option<Instant>)>,
}

async fn register_node(
    client: &mut RmClient,
    config: &LoadConfig,
    node: &mut SimNode,
) -> Result<u64, ClientError> {
    let body = NodeRegisterRequest {
        node_id: node.id.clone(),
        rack: Some(node.rack.clone()),
        http_address: Some(format!("{}:8042", node.id.split(':').next().unwrap_or(""))),
        capability: config.node,
        containers: Vec::new(),
        // Simulated nodes have no machine to measure.
        physical_resource: None,
    };
    let res: NodeRegisterResponse = client
        .call(Method::POST, "/ws/v1/nm/register", Some(&body))
        .await?;
    node.response_id = res.response_id;
    node.running.clear();
    Ok(res.heartbeat_interval_ms)
}

async fn node_worker(
    shared: Arc<Shared>,
    range: std::ops::Range<usize>,
    start: Instant,
) -> Vec<u32> {
    let config = &shared.config;
    let mut latencies = Vec::new();
    let Ok(mut client) = node_client(config) else {
        return latencies;
    };
    let mut nodes: Vec<SimNode> = range
        .map(|i| SimNode {
            id: node_id(config, i),
            rack: format!("/rack{}", i % config.racks.max(1)),
            response_id: 0,
            running: Vec::new(),
        })
        .collect();
    let mut interval = config.heartbeat_interval;
    for node in &mut nodes {
        // Against an RM that does not answer, each registration takes the
        // request timeout: the run may end before they are all done.
        if shared.stopped() {
            return latencies;
        }
        match register_node(&mut client, config, node).await {
            Ok(ms) => {
                interval.get_or_insert(Duration::from_millis(ms.max(1)));
            }
            Err(e) => {
                tracing::warn!(node = %node.id, error = %e, "registration failed");
                shared.failed(&e);
            }
        }
    }
    let interval = interval.unwrap_or(Duration::from_secs(1));
    let step = interval / nodes.len().max(1) as u32;
    // Workers start at different offsets so their heartbeats interleave.
    let offset = step / 2;
    let mut stop = shared.stop.clone();
    let mut cycle: u32 = 0;
    loop {
        for (j, node) in nodes.iter_mut().enumerate() {
            if shared.stopped() {
                return latencies;
            }
            let due = start + offset + interval * cycle + step * j as u32;
            if due > Instant::now() {
                tokio::select! {
                    () = tokio::time::sleep_until(due) => {}
                    _ = stop.changed() => return latencies,
                }
            }
            heartbeat(&shared, &mut client, node, &mut latencies).await;
        }
        cycle += 1;
    }
}

async fn heartbeat(
    shared: &Shared,
    client: &mut RmClient,
    node: &mut SimNode,
    latencies: &mut Vec<u32>,
) {
    let config = &shared.config;
    let now = Instant::now();
    let mut statuses = Vec::new();
    node.running.retain(|(id, end)| match end {
        Some(end) if *end <= now => {
            statuses.push(ContainerStatusDto {
                container_id: id.to_string(),
                state: "COMPLETE".to_owned(),
                exit_status: Some(0),
                diagnostics: None,
            });
            false
        }
        _ => true,
    });
    let n_completed = statuses.len() as u64;
    let body = NodeHeartbeatRequest {
        node_id: node.id.clone(),
        response_id: node.response_id,
        containers: statuses,
        node_health_status: None,
        node_utilization: None,
        containers_utilization: None,
    };
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let sent = Instant::now();
    let answer = client
        .request(Method::POST, "/ws/v1/nm/heartbeat", Some(bytes))
        .await;
    let done = Instant::now();
    let res: Result<NodeHeartbeatResponse, ClientError> = answer.and_then(|a| decode(&a));
    match res {
        Ok(res) => {
            if shared.counting(sent) {
                latencies.push((done - sent).as_micros().min(u128::from(u32::MAX)) as u32);
            }
            shared.count(sent, &shared.counters.heartbeats, 1);
            shared.count(sent, &shared.counters.completed, n_completed);
            node.response_id = res.response_id;
            for stop in &res.containers_to_stop {
                node.running.retain(|(id, _)| *id != stop.container_id);
            }
            shared.count(
                sent,
                &shared.counters.launched,
                res.allocated_containers.len() as u64,
            );
            for c in res.allocated_containers {
                if c.is_am {
                    // An AM container without its attempt's token (one
                    // that failed before its node heard of it) has no AM
                    // that could speak for it.
                    if let Some(token) = &c.am_rm_token {
                        let _ = shared
                            .am_worker_for(c.application_id)
                            .send((c.application_id, token.to_hex()));
                    }
                    node.running.push((c.container_id, None));
                } else {
                    node.running
                        .push((c.container_id, Some(done + config.container_runtime)));
                }
            }
        }
        Err(e) => {
            shared.failed(&e);
            tracing::debug!(node = %node.id, error = %e, "heartbeat failed; registering again");
            if let Err(e) = register_node(client, config, node).await {
                tracing::warn!(node = %node.id, error = %e, "registration failed");
                // A failed call like any other, as at the first registration.
                shared.failed(&e);
            }
        }
    }
}

async fn submit_app(shared: &Shared, client: &mut RmClient, i: usize) -> Result<(), ClientError> {
    let config = &shared.config;
    let user = format!("load-{}", i % config.users);
    let new: NewApplicationDto = client
        .call(
            Method::POST,
            &format!("/ws/v1/cluster/apps/new-application?user.name={user}"),
            None::<&()>,
        )
        .await?;
    let body = SubmitApplicationDto {
        application_id: Some(new.application_id.clone()),
        application_name: Some(format!("load-{i}")),
        queue: Some(config.queues[i % config.queues.len()].clone()),
        application_type: Some("LOAD".to_owned()),
        resource: Some(config.container),
        am_container_spec: Some(serde_json::json!({"commands": {"command": "weft-load-am"}})),
        ..SubmitApplicationDto::default()
    };
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let answer = client
        .request(
            Method::POST,
            &format!("/ws/v1/cluster/apps?user.name={user}"),
            Some(bytes),
        )
        .await?;
    if answer.status != http::StatusCode::ACCEPTED {
        return Err(crate::client::remote_error(&answer));
    }
    shared.live().insert(
        new.application_id,
        LiveApp {
            user,
            registered: None,
        },
    );
    shared.count(Instant::now(), &shared.counters.submitted, 1);
    Ok(())
}

struct SimAm {
    app: AppId,
    /// Its attempt's AM token, shown on each of its calls.
    token: String,
    response_id: u64,
    asked: bool,
    completed: u32,
    next: Instant,
}

async fn am_worker(
    shared: Arc<Shared>,
    worker: usize,
    mut launches: mpsc::UnboundedReceiver<Launch>,
) -> Vec<u32> {
    let config = &shared.config;
    let mut latencies = Vec::new();
    let Ok(mut client) = client(config) else {
        return latencies;
    };
    let mut ams: Vec<SimAm> = Vec::new();
    let mut next_app = config.apps + worker;
    let mut stop = shared.stop.clone();
    loop {
        if shared.stopped() {
            return latencies;
        }
        let next_due = ams.iter().map(|a| a.next).min();
        tokio::select! {
            launch = launches.recv() => {
                let Some((app, token)) = launch else { return latencies };
                let path = format!("/ws/v1/am/{app}/register");
                // One connection serves many AMs: each call shows its own.
                client.set_bearer(Some(token.clone()));
                match client.request(Method::POST, &path, None).await {
                    Ok(a) if a.status.is_success() => {
                        shared.set_registered(app, Some(token.clone()));
                        ams.push(SimAm {
                            app,
                            token,
                            response_id: 0,
                            asked: false,
                            completed: 0,
                            next: Instant::now(),
                        });
                    }
                    Ok(a) => {
                        tracing::debug!(error = %crate::client::remote_error(&a), "AM registration refused");
                        shared.counters.errors.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        tracing::debug!(%app, error = %e, "AM registration failed");
                        shared.failed(&e);
                    }
                }
                continue;
            }
            () = sleep_until_opt(next_due) => {}
            _ = stop.changed() => return latencies,
        }
        let now = Instant::now();
        // Indices of AMs done with, in order, and whether they completed
        // (rather than being dropped after a failed allocate call).
        let mut finished: Vec<(usize, bool)> = Vec::new();
        for (idx, am) in ams.iter_mut().enumerate() {
            // Against an RM that does not answer, each call takes the request
            // timeout; the AMs not yet called stay registered, and the end
            // of the run finishes their apps.
            if shared.stopped() {
                break;
            }
            if am.next > now {
                continue;
            }
            am.next = now + config.am_interval;
            let asks = if am.asked {
                Vec::new()
            } else {
                am.asked = true;
                vec![AskDto {
                    priority: 1,
                    resource_name: "*".to_owned(),
                    capability: config.container,
                    num_containers: config.containers_per_app,
                    relax_locality: true,
                }]
            };
            let body = AllocateRequestDto {
                response_id: am.response_id,
                asks,
                releases: Vec::new(),
                blacklist_additions: Vec::new(),
                blacklist_removals: Vec::new(),
                progress: am.completed as f32 / config.containers_per_app.max(1) as f32,
            };
            let bytes = serde_json::to_vec(&body).unwrap_or_default();
            client.set_bearer(Some(am.token.clone()));
            let sent = Instant::now();
            let answer = client
                .request(
                    Method::POST,
                    &format!("/ws/v1/am/{}/allocate", am.app),
                    Some(bytes),
                )
                .await;
            let done = Instant::now();
            match answer.and_then(|a| decode::<AllocateResponseDto>(&a)) {
                Ok(res) => {
                    if shared.counting(sent) {
                        latencies.push((done - sent).as_micros().min(u128::from(u32::MAX)) as u32);
                    }
                    shared.count(sent, &shared.counters.allocates, 1);
                    shared.count(sent, &shared.counters.allocated, res.allocated.len() as u64);
                    am.response_id = res.response_id;
                    am.completed += res.completed.len() as u32;
                    if am.completed >= config.containers_per_app {
                        finished.push((idx, true));
                    }
                }
                Err(e) => {
                    tracing::debug!(app = %am.app, error = %e, "allocate failed; dropping the AM");
                    shared.failed(&e);
                    // Its app is left to the end of the run, which kills it.
                    shared.set_registered(am.app, None);
                    finished.push((idx, false));
                }
            }
        }
        for (idx, completed) in finished.into_iter().rev() {
            let am = ams.swap_remove(idx);
            if completed {
                finish_am(&shared, &mut client, &am).await;
            }
            // Submissions are a user's calls, not an AM's.
            client.set_bearer(None);
            if shared.stopped() {
                continue;
            }
            if let Err(e) = submit_app(&shared, &mut client, next_app).await {
                tracing::debug!(error = %e, "submission failed");
                shared.failed(&e);
            }
            next_app += shared.am_workers.len();
        }
    }
}

/// An AM whose containers all completed finishes its app.
async fn finish_am(shared: &Shared, client: &mut RmClient, am: &SimAm) {
    let app = am.app;
    client.set_bearer(Some(am.token.clone()));
    let body = AmFinishRequest {
        final_status: "SUCCEEDED".to_owned(),
        diagnostics: String::new(),
        tracking_url: None,
    };
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    match client
        .request(
            Method::POST,
            &format!("/ws/v1/am/{app}/finish"),
            Some(bytes),
        )
        .await
    {
        Ok(a) if a.status.is_success() => {
            shared.live().remove(&app.to_string());
            shared.count(Instant::now(), &shared.counters.finished, 1);
        }
        Ok(a) => {
            tracing::debug!(%app, error = %crate::client::remote_error(&a), "AM finish refused");
            shared.counters.errors.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => {
            tracing::debug!(%app, error = %e, "AM finish failed");
            shared.failed(&e);
        }
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_ranked_samples() {
        let mut v: Vec<u32> = (1..=1000).rev().collect();
        let p = Percentiles::of(&mut v);
        assert_eq!(
            (p.count, p.p50, p.p90, p.p99, p.max),
            (1000, 501, 900, 990, 1000)
        );
        assert_eq!(Percentiles::of(&mut []), Percentiles::default());
    }

    /// An RM on `127.0.0.1:0` that, unless `silent`, answers the probe and
    /// submissions, and never answers anything else (nor anything after it
    /// on that connection), as an RM stopped by SIGSTOP part way through a
    /// run; the kernel still accepts connections for it.
    async fn rm_that_stops_answering(silent: bool) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let n_apps = Arc::new(AtomicU64::new(0));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                if silent {
                    tokio::spawn(async move {
                        let _held = stream;
                        std::future::pending::<()>().await;
                    });
                } else {
                    tokio::spawn(answer_until_silent(stream, n_apps.clone()));
                }
            }
        });
        url
    }

    async fn answer_until_silent(stream: tokio::net::TcpStream, n_apps: Arc<AtomicU64>) {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::io::BufReader::new(stream);
        loop {
            let mut request_line = String::new();
            if stream.read_line(&mut request_line).await.unwrap_or(0) == 0 {
                return;
            }
            let mut content_length = 0;
            loop {
                let mut line = String::new();
                if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                    return;
                }
                if line == "\r\n" {
                    break;
                }
                match line.split_once(':') {
                    Some((name, value)) if name.eq_ignore_ascii_case("content-length") => {
                        content_length = value.trim().parse().unwrap();
                    }
                    _ => {}
                }
            }
            let mut body = vec![0; content_length];
            stream.read_exact(&mut body).await.unwrap();
            let mut words = request_line.split_whitespace();
            let method = words.next().unwrap_or_default();
            let path = words.next().unwrap_or_default();
            let path = path.split('?').next().unwrap_or_default();
            let (status, body) = match (method, path) {
                ("GET", "/ws/v1/cluster/info") => ("200 OK", "{}".to_owned()),
                ("POST", "/ws/v1/cluster/apps/new-application") => {
                    let n = n_apps.fetch_add(1, Ordering::Relaxed) + 1;
                    let new = NewApplicationDto {
                        application_id: format!("application_1_{n:04}"),
                        maximum_resource_capability: ResourceDto {
                            memory: 8192,
                            vcores: 8,
                        },
                    };
                    ("200 OK", serde_json::to_string(&new).unwrap())
                }
                ("POST", "/ws/v1/cluster/apps") => ("202 Accepted", String::new()),
                _ => std::future::pending().await,
            };
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(answer.as_bytes()).await.unwrap();
        }
    }

    fn small_run(rm: String) -> LoadConfig {
        LoadConfig {
            rm,
            nodes: 2,
            apps: 2,
            node_connections: 1,
            am_connections: 1,
            warmup: Duration::ZERO,
            duration: Duration::from_millis(500),
            request_timeout: Duration::from_millis(200),
            ..LoadConfig::default()
        }
    }

    #[tokio::test]
    async fn a_zero_request_timeout_is_refused() {
        // Refused before anything is sent: nothing listens at this address.
        let config = LoadConfig {
            rm: "http://127.0.0.1:1".to_owned(),
            request_timeout: Duration::ZERO,
            ..LoadConfig::default()
        };
        let e = run(config).await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid load: the request timeout must be positive"
        );
    }

    /// Real time: the paused clock would jump to the request timeout while
    /// an answer is on its way through the loopback interface.
    #[tokio::test]
    async fn a_run_against_a_silent_rm_ends_with_the_timeout() {
        let rm = rm_that_stops_answering(true).await;
        let run = run(small_run(rm.clone()));
        let res = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the run ends");
        let e = res.unwrap_err();
        assert!(
            matches!(e, LoadError::Client(ClientError::Timeout { .. })),
            "{e:?}"
        );
        let addr = rm.trim_start_matches("http://");
        assert_eq!(
            e.to_string(),
            format!("the resource manager at {addr} did not answer within 200 ms")
        );
    }

    #[tokio::test]
    async fn a_run_whose_rm_stops_answering_ends_and_reports_what_it_left() {
        let rm = rm_that_stops_answering(false).await;
        let run = run(small_run(rm));
        let report = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the run ends")
            .unwrap();
        // Both apps were submitted; no node registration, heartbeat or kill
        // was ever answered.
        assert_eq!(report.apps_submitted, 2, "{report}");
        assert_eq!(report.heartbeats, 0, "{report}");
        assert!(report.errors >= 2, "{report}");
        assert_eq!(report.timeouts, report.errors, "{report}");
        // One timeout on the one cleanup connection gives up on the rest of
        // its share: the first kill for the apps, the first unregistration
        // for the nodes.
        let ending = &report.ending;
        assert_eq!(
            (ending.apps_ended(), ending.left, ending.timeouts),
            (0, 2, 2),
            "{report}"
        );
        assert_eq!(
            (ending.nodes_unregistered, ending.nodes_left),
            (0, 2),
            "{report}"
        );
        let text = report.to_string();
        assert!(text.contains("2 left alive; 0 nodes unregistered, 2 left (2 calls timed out, each ending its connection's share)"), "{text}");
        assert!(
            text.contains(&format!(
                "errors:               {} ({} timed out)",
                report.errors, report.timeouts
            )),
            "{text}"
        );
    }
}
