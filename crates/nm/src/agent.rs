//! The node agent: one task owns the node's containers and talks to the RM
//! (register, heartbeat, re-register when the RM no longer knows the node,
//! unregister at shutdown); process exits, the memory monitor's samples and
//! the HTTP API's requests all come to it as messages, so the container
//! table has one owner and no lock.
//!
//! The agent also ends on the RM's word: a registration refused with 403
//! (the RM's include or exclude list keeps the node out) or a heartbeat
//! answered `SHUTDOWN` (the node was decommissioned) stops every container
//! and ends the agent, which says why (`NodeManager::ended`); retrying
//! would only be refused again.
//!
//! Launch flow (docs/api.md, "Launching containers"): the RM lists every
//! container it allocates on this node in the heartbeat answer; an AM
//! container is launched at once from the launch context the RM hands
//! over, any other waits, `ALLOCATED`, until its AM starts it through
//! `POST /ws/v1/node/containers/{id}/start` with the container's token. A
//! container the RM did not allocate here, a start without the token the
//! RM gave the node with the container, or one already started, is
//! refused: the node runs only what the RM allocated, once, for the AM the
//! RM gave it to. An AM container's process finds its attempt's AM token,
//! which the RM hands over with the container, in `WEFT_AM_TOKEN`.
//!
//! With a node secret (`NmConfig::node_secret`) every call to the RM shows
//! it; an RM that refuses the node's credentials ends the agent as a
//! refused registration does, unless the secret's file
//! (`NmConfig::node_secret_file`) holds a new one by then: the agent then
//! registers again with it, so a rolled secret costs no container.
//!
//! The node's health comes from `health`'s checker task, read (never
//! waited for) at each heartbeat: an unhealthy node says so in every
//! heartbeat, and the RM stops its containers (`NODE_UNHEALTHY`) like any
//! other stop.
//!
//! Each fresh heartbeat also carries what the machine and its running
//! containers use (`utilization`'s meter for the machine, the memory
//! monitor's latest samples for the containers), or neither where `/proc`
//! cannot be read.
//!
//! The agent counts what it decides (a launch begun, how each container
//! ended, how each call to the RM went) in its `metrics::Figures`, with its
//! containers' state, and publishes them after every step of its loop, for
//! the HTTP API's `/metrics` and `/jmx` to read without waiting for it.
//!
//! Processes are `launch`'s business, memory figures `memory`'s and
//! `cgroup`'s, the HTTP API `http`'s, metric names and formats `metrics`'.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use http::Method;
use nix::sys::signal::Signal;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use weft_model::{AppId, ContainerId, NodeId, Resource};
use weft_queue_tree::Acl;
use weft_rm::Embedding;
use weft_rm::client::{ClientError, RmClient};
use weft_rm::dto::ResourceDto;
use weft_rm::dto::nm::{
    ContainerStatusDto, NodeAction, NodeHealthDto, NodeHeartbeatRequest, NodeHeartbeatResponse,
    NodeRegisterRequest, NodeRegisterResponse, NodeUnregisterRequest, NodeUnregisterResponse,
    ResourceUtilizationDto, RunningContainerDto, StopReasonDto,
};
use weft_rm::groups::{GroupCacheSettings, GroupSource, MappingClass, UserGroups};
use weft_rm::node_secret::NodeSecret;
use weft_rm::token::{AmToken, ContainerToken};

use crate::cgroup::{CgroupError, Cgroups, ContainerCgroup};
use crate::config::{MemoryEnforcement, NmConfig, NmConfigError, identity};
use crate::dto::{ContainerDto, EXIT_CODE_INVALID, LaunchContext, NodeInfoDto};
use crate::health::{self, Health};
use crate::launch::{self, ContainerDirs, LAUNCH_FAILED, Launch};
use crate::memory::{KILLED_EXCEEDED_PMEM, ProcessTable, over_limit_diagnostic};
use crate::metrics::{
    Ended, Figures, HeartbeatOutcome, KillReason, NodeMetrics, RegistrationOutcome, Utilization,
};
use crate::utilization::{CpuRate, NodeMeter};

/// YARN's exit status of a container that was released or lost (`ABORTED`).
const ABORTED: i32 = -100;
/// YARN's exit status of a container taken back by preemption.
const PREEMPTED: i32 = -102;
/// YARN's exit status of a container the RM stopped.
const KILLED_BY_RESOURCEMANAGER: i32 = -106;
/// YARN's exit status of a container stopped because its app completed.
const KILLED_AFTER_APP_COMPLETION: i32 = -107;

/// How long shutdown waits for stopped containers to exit after SIGKILL.
const SHUTDOWN_REAP: Duration = Duration::from_secs(2);
/// The heartbeat interval before the RM has said one.
const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// Registration retries back off up to this.
const MAX_RETRY: Duration = Duration::from_secs(5);

/// Why a node agent could not start.
#[derive(Debug, thiserror::Error)]
pub enum NmStartError {
    /// The settings are unusable.
    #[error(transparent)]
    Config(#[from] NmConfigError),
    /// The RM's address is unusable.
    #[error(transparent)]
    Rm(#[from] ClientError),
    /// cgroups were asked for and cannot be used.
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
    /// The work directory or the listener failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// Why a container could not be started through the node's API.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StartContainerError {
    /// The RM did not allocate it on this node (or the node has not heard yet).
    #[error(
        "container {0} is not allocated to this node (if the RM just allocated it, retry after the node's next heartbeat)"
    )]
    NotAllocated(ContainerId),
    /// The call carries no container token.
    #[error(
        "the start call for container {0} carries no containerToken; send the one the resource manager gave with the container in its allocate answer"
    )]
    MissingToken(ContainerId),
    /// The call's container token is not the one the RM gave the node.
    #[error(
        "the containerToken does not match the one the resource manager issued for container {0}; only the application master it was allocated to may start it"
    )]
    WrongToken(ContainerId),
    /// It was started already (or has ended).
    #[error("container {container} was already started; it is {state}")]
    AlreadyStarted {
        /// The container.
        container: ContainerId,
        /// Its state now.
        state: &'static str,
    },
    /// The agent is shutting down.
    #[error("the node manager is shutting down")]
    Stopping,
}

/// Why an agent ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentEnd {
    /// It was stopped (`NodeManager::stop`), or killed.
    Stopped,
    /// The RM refused its registration (403, or 401 for a node secret it
    /// wants and did not get): its words.
    Refused(String),
    /// The RM told it to shut down (it was decommissioned): its words.
    ShutDown(String),
}

/// A running node agent: the agent task and its HTTP API.
#[derive(Debug)]
pub struct NodeManager {
    node: NodeId,
    http_address: String,
    handle: AgentHandle,
    stop: watch::Sender<bool>,
    /// Set once when the agent ends, with why.
    ended: watch::Receiver<Option<AgentEnd>>,
    agent: JoinHandle<()>,
    server: JoinHandle<()>,
    /// The health checker's task, if a script is configured.
    health: Option<JoinHandle<()>>,
}

/// Whose a container's application is and who else may see it, as the RM
/// said when it handed the container over (docs/api.md, "Who may read a
/// container's report and logs"): what the node's API checks a reader
/// against. Kept with the container, so a container the agent has
/// forgotten has none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppViewers {
    /// The user who submitted the application; `None` when the RM did not
    /// say (an RM older than this field), which makes nobody its owner.
    pub owner: Option<String>,
    /// Its `VIEW_APP` ACL (nobody when the RM did not say).
    pub view: Acl,
}

/// A cheap, cloneable handle to the agent task.
#[derive(Clone, Debug)]
pub struct AgentHandle {
    tx: mpsc::Sender<Command>,
}

#[derive(Debug)]
enum Command {
    Start {
        container: ContainerId,
        /// The token as the caller sent it (`None`: none sent).
        token: Option<String>,
        context: LaunchContext,
        reply: oneshot::Sender<Result<ContainerDto, StartContainerError>>,
    },
    List {
        reply: oneshot::Sender<Vec<(ContainerDto, AppViewers)>>,
    },
    Get {
        container: ContainerId,
        reply: oneshot::Sender<Option<(ContainerDto, AppViewers)>>,
    },
    Info {
        reply: oneshot::Sender<NodeInfoDto>,
    },
    /// The grace period of a stop is over: SIGKILL if the process still runs.
    Escalate {
        container: ContainerId,
    },
}

impl AgentHandle {
    /// A handle to no agent, for router tests of what needs none: every
    /// question to it goes unanswered, as to an agent that has stopped.
    #[cfg(test)]
    pub(crate) fn detached() -> AgentHandle {
        let (tx, _) = mpsc::channel(1);
        AgentHandle { tx }
    }

    /// A handle to a stand-in agent that knows `containers` and answers
    /// only questions about them, for router tests of the reads.
    #[cfg(test)]
    pub(crate) fn serving(containers: Vec<(ContainerDto, AppViewers)>) -> AgentHandle {
        let (tx, mut rx) = mpsc::channel(8);
        tokio::spawn(async move {
            while let Some(cmd) = rx.recv().await {
                match cmd {
                    Command::List { reply } => {
                        let _ = reply.send(containers.clone());
                    }
                    Command::Get { container, reply } => {
                        let id = container.to_string();
                        let found = containers.iter().find(|(c, _)| c.id == id).cloned();
                        let _ = reply.send(found);
                    }
                    // Nothing else is asked of it; an unanswered question
                    // reads as an agent that has stopped.
                    _ => {}
                }
            }
        });
        AgentHandle { tx }
    }

    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Command) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(make(tx)).await.ok()?;
        rx.await.ok()
    }

    /// Starts a container the RM allocated on this node with `context`,
    /// for a caller showing `token` (the container's token, as sent).
    pub async fn start_container(
        &self,
        container: ContainerId,
        token: Option<String>,
        context: LaunchContext,
    ) -> Result<ContainerDto, StartContainerError> {
        self.ask(|reply| Command::Start {
            container,
            token,
            context,
            reply,
        })
        .await
        .unwrap_or(Err(StartContainerError::Stopping))
    }

    /// Every container the node knows, by id.
    pub async fn containers(&self) -> Vec<ContainerDto> {
        self.containers_and_viewers()
            .await
            .into_iter()
            .map(|(c, _)| c)
            .collect()
    }

    /// One container, if the node knows it.
    pub async fn container(&self, container: ContainerId) -> Option<ContainerDto> {
        self.container_and_viewers(container).await.map(|(c, _)| c)
    }

    /// Every container the node knows, by id, with who may see it.
    pub async fn containers_and_viewers(&self) -> Vec<(ContainerDto, AppViewers)> {
        self.ask(|reply| Command::List { reply })
            .await
            .unwrap_or_default()
    }

    /// One container, if the node knows it, with who may see it.
    pub async fn container_and_viewers(
        &self,
        container: ContainerId,
    ) -> Option<(ContainerDto, AppViewers)> {
        self.ask(|reply| Command::Get { container, reply })
            .await
            .flatten()
    }

    /// The node's report, or `None` once the agent has stopped.
    pub async fn info(&self) -> Option<NodeInfoDto> {
        self.ask(|reply| Command::Info { reply }).await
    }
}

impl NodeManager {
    /// Starts the agent and its HTTP API on `listener`; the agent registers
    /// with the RM at once and keeps trying until the RM answers. Its
    /// `/logLevel` has no filter to change (404); see `start_with`.
    pub async fn start(
        config: NmConfig,
        listener: TcpListener,
    ) -> Result<NodeManager, NmStartError> {
        NodeManager::start_with(config, listener, Embedding::default()).await
    }

    /// As `start`, with what the process around the agent supplies: the
    /// logging filter `/logLevel` reads and changes, and where users' groups
    /// come from for `yarn.admin.acl` (Hadoop's default mapping over it:
    /// the operating system's name service, cached as Hadoop caches it).
    pub async fn start_with(
        config: NmConfig,
        listener: TcpListener,
        embedding: Embedding,
    ) -> Result<NodeManager, NmStartError> {
        let local: SocketAddr = listener.local_addr().map_err(|source| NmStartError::Io {
            what: "cannot read the listening address".to_owned(),
            source,
        })?;
        let (node, http_address) = identity(&config, local)?;
        if let Some(script) = &config.health_script {
            // Checked here too, for settings not read from a site file: a
            // script that cannot run is a mistake to fix, not a node to
            // mark unhealthy at every interval.
            health::check_runnable(&script.path).map_err(|why| NmConfigError::HealthScript {
                path: script.path.display().to_string(),
                why,
            })?;
        }
        if config.http_policy.is_https() && config.server_tls.is_none() {
            return Err(NmConfigError::HttpsWithoutKeyMaterial.into());
        }
        let rm = rm_client(&config)?;
        std::fs::create_dir_all(&config.work_dir).map_err(|source| NmStartError::Io {
            what: format!(
                "cannot create the work directory {}",
                config.work_dir.display()
            ),
            source,
        })?;
        let cgroups = match &config.memory_enforcement {
            MemoryEnforcement::RssPolling => None,
            MemoryEnforcement::Cgroup(dir) => Some(Cgroups::at(dir)?),
            MemoryEnforcement::Auto => match Cgroups::auto() {
                Ok(g) => Some(g),
                Err(e) => {
                    tracing::info!(node = %node, reason = %e, "cgroups v2 not usable; memory limits are enforced by polling each container's resident memory");
                    None
                }
            },
        };
        if let Some(g) = &cgroups {
            tracing::info!(node = %node, cgroup = %g.dir().display(), "memory and CPU limits are enforced by cgroups v2");
        }
        let started_ms = health::now_ms();
        let (health_rx, health_task) = match &config.health_script {
            Some(script) => {
                let (mut rx, task) = health::spawn(script.clone(), node.clone(), started_ms);
                // The first verdict before registering, if it comes soon.
                let wait = health::FIRST_VERDICT_WAIT.min(script.timeout);
                let _ = tokio::time::timeout(wait, rx.changed()).await;
                (rx, Some(task))
            }
            None => {
                // No checker: the node is healthy as of its start, for good.
                let (_, rx) = watch::channel(Health {
                    unhealthy: None,
                    checked_ms: started_ms,
                });
                (rx, None)
            }
        };
        let (tx, commands) = mpsc::channel(256);
        let (exits_tx, exits) = mpsc::unbounded_channel();
        let (stop, stop_rx) = watch::channel(false);
        let (ended_tx, ended) = watch::channel(None);
        let handle = AgentHandle { tx: tx.clone() };
        let metrics = Arc::new(NodeMetrics::new(config.capability));
        let api = crate::http::router(crate::http::NodeApi {
            handle: handle.clone(),
            node: node.clone(),
            work_dir: config.work_dir.clone(),
            log_levels: embedding.log_levels,
            metrics: metrics.clone(),
            health: health_rx.clone(),
            instrumentation_requires_admin: config.instrumentation_requires_admin,
            filter_entity_list_by_user: config.filter_entity_list_by_user,
            acl: Arc::new(config.acl.clone()),
            groups: Arc::new(UserGroups::new(
                GroupSource::Mapping(MappingClass::JniWithFallback),
                GroupCacheSettings::default(),
                embedding.groups,
            )),
        });
        let agent = Agent {
            session: Session {
                registered: false,
                response_id: 0,
                interval: DEFAULT_INTERVAL,
                failures: 0,
                inflight: None,
            },
            node: node.clone(),
            http_address: http_address.clone(),
            rm,
            containers: BTreeMap::new(),
            completed: VecDeque::new(),
            reports: BTreeMap::new(),
            cgroups,
            exits_tx,
            commands_tx: tx,
            end: None,
            ended: ended_tx,
            meter: NodeMeter::new(Path::new("/proc")),
            figures: Figures::new(config.capability),
            metrics,
            config,
            started_ms,
            health: health_rx,
        };
        // Before the agent starts, so that nothing is left running on failure.
        let listener =
            weft_rm::server::HttpListener::new(listener, agent.config.server_tls.as_ref())
                .map_err(|source| NmStartError::Io {
                    what: "cannot serve HTTPS".to_owned(),
                    source,
                })?;
        let agent_task = tokio::spawn(agent.run(commands, exits, stop_rx.clone()));
        let mut server_stop = stop_rx;
        let mut agent_ended = ended.clone();
        // The API closes with the agent, stopped or ended on its own.
        let stopped = async move {
            tokio::select! {
                _ = server_stop.wait_for(|s| *s) => {}
                _ = agent_ended.wait_for(Option::is_some) => {}
            }
        };
        // The callers' addresses reach `/logLevel`'s log line either way.
        let serve = tokio::spawn(listener.serve(api, stopped));
        let server = tokio::spawn(async move {
            if let Ok(Err(e)) = serve.await {
                tracing::error!(error = %e, "the node's HTTP API stopped");
            }
        });
        Ok(NodeManager {
            node,
            http_address,
            handle,
            stop,
            ended,
            agent: agent_task,
            server,
            health: health_task,
        })
    }

    /// The node's id.
    pub fn node_id(&self) -> &NodeId {
        &self.node
    }

    /// The `host:port` AMs reach the node's HTTP API at.
    pub fn http_address(&self) -> &str {
        &self.http_address
    }

    /// The agent's handle.
    pub fn handle(&self) -> &AgentHandle {
        &self.handle
    }

    /// Resolves when the agent ends, with why: on its own when the RM
    /// refuses or decommissions the node, else once it is stopped (or
    /// killed). Independent of `self`, so it can be awaited elsewhere.
    pub fn ended(&self) -> impl std::future::Future<Output = AgentEnd> + Send + 'static {
        let mut ended = self.ended.clone();
        async move {
            match ended.wait_for(Option::is_some).await {
                Ok(end) => end.clone().unwrap_or(AgentEnd::Stopped),
                // The agent went without a word: killed, or dropped.
                Err(_) => AgentEnd::Stopped,
            }
        }
    }

    /// Stops gracefully: containers are stopped (SIGTERM, then SIGKILL after
    /// the grace period), the node unregisters, the HTTP API closes. An
    /// agent that already ended on its own only closes.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.agent.await;
        let _ = self.server.await;
        if let Some(h) = self.health {
            h.abort();
        }
    }

    /// Stops abruptly, as a killed process would: no unregistering, and the
    /// containers' processes are left running (the RM declares the node lost
    /// after its liveness expiry).
    pub fn kill(self) {
        self.agent.abort();
        self.server.abort();
        if let Some(h) = self.health {
            h.abort();
        }
    }
}

/// The agent's conversation with the RM.
#[derive(Debug)]
struct Session {
    registered: bool,
    /// The `responseId` of the last answer received.
    response_id: u64,
    interval: Duration,
    /// Failed calls in a row (the first of a streak is logged as a warning).
    failures: u32,
    /// A heartbeat whose answer never came: sent again unchanged, since the
    /// RM may have handled it and would then replay its answer, ignoring
    /// anything new in the body.
    inflight: Option<NodeHeartbeatRequest>,
}

/// Why a running container is being stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
enum StopCause {
    /// The RM said so.
    Rm(StopReasonDto),
    /// It went over its memory limit (the diagnostic).
    MemoryLimit(String),
    /// The agent is shutting down.
    Shutdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Allocated by the RM, waiting for its AM to start it.
    Allocated,
    /// Its process runs; `pid` is also its process group.
    Running { pid: u32 },
    /// Ended.
    Complete { exit_status: i32 },
}

#[derive(Debug)]
struct Container {
    id: ContainerId,
    resource: Resource,
    priority: i32,
    is_am: bool,
    /// What a start call must show (the RM's, from the heartbeat answer).
    token: ContainerToken,
    /// For an AM container, its attempt's AM token (the RM's, from the
    /// heartbeat answer), for the AM process's environment.
    am_token: Option<AmToken>,
    /// Who may see its report and logs (the RM's, from the heartbeat answer).
    viewers: AppViewers,
    state: State,
    stopping: Option<StopCause>,
    diagnostics: String,
    /// Memory at the last sample, in bytes.
    memory_used: Option<u64>,
    /// Virtual memory at the last sample, in bytes (a cgroup's: memory
    /// plus swap, since a cgroup does not count address space).
    vmem_used: Option<u64>,
    /// Processors its processes kept busy between the last two samples.
    cpu_used: Option<f64>,
    /// Its CPU-time counter, for the next rate.
    cpu_rate: CpuRate,
    cgroup: Option<ContainerCgroup>,
}

impl Container {
    fn state_name(&self) -> &'static str {
        match (self.state, &self.stopping) {
            (State::Allocated, _) => "ALLOCATED",
            (State::Running { .. }, None) => "RUNNING",
            (State::Running { .. }, Some(_)) => "KILLING",
            (State::Complete { .. }, _) => "COMPLETE",
        }
    }
}

/// A process that ended: the container, its process group, how it ended.
type Exit = (ContainerId, u32, std::io::Result<ExitStatus>);

struct Agent {
    config: NmConfig,
    node: NodeId,
    http_address: String,
    rm: RmClient,
    session: Session,
    containers: BTreeMap<ContainerId, Container>,
    /// Completed containers, oldest first, for trimming.
    completed: VecDeque<ContainerId>,
    /// Container states the RM has not been told yet (the latest per container).
    reports: BTreeMap<ContainerId, ContainerStatusDto>,
    cgroups: Option<Cgroups>,
    exits_tx: mpsc::UnboundedSender<Exit>,
    /// For the agent's own timers (escalating a stop).
    commands_tx: mpsc::Sender<Command>,
    /// Set when the RM refuses or decommissions the node: the agent ends.
    end: Option<AgentEnd>,
    /// Where the agent says why it ended.
    ended: watch::Sender<Option<AgentEnd>>,
    /// When the agent started, in milliseconds since the epoch (Hadoop's `nmStartupTime`).
    started_ms: u64,
    /// The health checker's latest verdict (healthy for good without a script).
    health: watch::Receiver<Health>,
    /// What the machine uses, sampled at each heartbeat.
    meter: NodeMeter,
    /// What the agent counted and its containers' state, as of its last
    /// change (`publish` completes and shows them).
    figures: Figures,
    /// Where the figures are shown, and the histograms.
    metrics: Arc<NodeMetrics>,
}

impl Agent {
    async fn run(
        mut self,
        mut commands: mpsc::Receiver<Command>,
        mut exits: mpsc::UnboundedReceiver<Exit>,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut next_call = Instant::now();
        let mut monitor = tokio::time::interval(self.config.monitor_interval);
        monitor.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            self.publish();
            tokio::select! {
                res = async { stop.wait_for(|s| *s).await.map(|_| ()) } => {
                    // The `NodeManager` was dropped without stopping: leave as if killed.
                    if res.is_err() {
                        return;
                    }
                    break;
                }
                Some(cmd) = commands.recv() => self.command(cmd),
                Some(exit) = exits.recv() => self.exited(exit),
                () = tokio::time::sleep_until(next_call) => {
                    let wait = self.talk_to_rm().await;
                    if self.end.is_some() {
                        break;
                    }
                    next_call = Instant::now() + wait;
                }
                _ = monitor.tick() => {
                    self.monitor();
                    self.metrics.run_upkeep();
                }
            }
        }
        let end = self.end.take().unwrap_or(AgentEnd::Stopped);
        let ended = self.ended.clone();
        self.shutdown(&mut exits).await;
        let _ = ended.send(Some(end));
    }

    fn command(&mut self, cmd: Command) {
        match cmd {
            Command::Start {
                container,
                token,
                context,
                reply,
            } => {
                // The token before the state: a caller without it learns
                // nothing about the container beyond its being here.
                let res = match (self.containers.get(&container), token) {
                    (None, _) => Err(StartContainerError::NotAllocated(container)),
                    (Some(_), None) => Err(StartContainerError::MissingToken(container)),
                    (Some(c), Some(t)) if !c.token.matches(&t) => {
                        Err(StartContainerError::WrongToken(container))
                    }
                    (Some(c), Some(_)) if c.state != State::Allocated => {
                        Err(StartContainerError::AlreadyStarted {
                            container,
                            state: c.state_name(),
                        })
                    }
                    (Some(_), Some(_)) => {
                        self.launch(container, &context);
                        Ok(self.dto(&self.containers[&container]).0)
                    }
                };
                let _ = reply.send(res);
            }
            Command::List { reply } => {
                let list = self.containers.values().map(|c| self.dto(c)).collect();
                let _ = reply.send(list);
            }
            Command::Get { container, reply } => {
                let _ = reply.send(self.containers.get(&container).map(|c| self.dto(c)));
            }
            Command::Info { reply } => {
                let _ = reply.send(self.info());
            }
            Command::Escalate { container } => {
                if let Some(c) = self.containers.get(&container)
                    && let State::Running { pid } = c.state
                {
                    tracing::debug!(container = %container, pid, "grace period over: SIGKILL");
                    if let Err(e) = launch::signal_group(pid, Signal::SIGKILL) {
                        tracing::warn!(container = %container, pid, error = %e, "cannot kill a container's process group");
                    }
                }
            }
        }
    }

    /// Completes the figures with the containers' state and the session's,
    /// and puts them in force for `/metrics` and `/jmx`.
    fn publish(&mut self) {
        let f = &mut self.figures;
        f.running = 0;
        f.pending_start = 0;
        f.allocated = Resource::ZERO;
        let mut apps = BTreeSet::new();
        for c in self.containers.values() {
            match c.state {
                State::Allocated => f.pending_start += 1,
                State::Running { .. } => {
                    f.running += 1;
                    f.allocated = f.allocated.saturating_add(c.resource);
                    apps.insert(c.id.app());
                }
                State::Complete { .. } => {}
            }
        }
        f.apps_running = apps.len() as u64;
        f.registered = self.session.registered;
        self.metrics.publish(f);
    }

    fn info(&self) -> NodeInfoDto {
        let live = self
            .containers
            .values()
            .filter(|c| !matches!(c.state, State::Complete { .. }))
            .count();
        let health = self.health.borrow().clone();
        NodeInfoDto {
            id: self.node.to_string(),
            node_host_name: self.node.host().to_owned(),
            node_http_address: self.http_address.clone(),
            rack: self.config.rack.clone(),
            total_pmem_allocated_containers_mb: self.config.capability.memory_mb(),
            total_v_cores_allocated_containers: self.config.capability.vcores(),
            node_manager_version: env!("CARGO_PKG_VERSION").to_owned(),
            nm_startup_time: self.started_ms,
            node_healthy: health.unhealthy.is_none(),
            health_report: health.unhealthy.unwrap_or_default(),
            last_node_update_time: health.checked_ms,
            // Physical memory is always enforced (cgroups or polling);
            // virtual memory never is.
            pmem_check_enabled: true,
            vmem_check_enabled: false,
            resource_manager: self.config.rm.clone(),
            registered: self.session.registered,
            memory_enforcement: if self.cgroups.is_some() {
                "cgroups-v2".to_owned()
            } else {
                "rss-polling".to_owned()
            },
            num_containers: live as u32,
        }
    }

    /// The container's report, and who may see all of it.
    fn dto(&self, c: &Container) -> (ContainerDto, AppViewers) {
        let (exit_code, pid) = match c.state {
            State::Complete { exit_status } => (exit_status, None),
            State::Running { pid } => (EXIT_CODE_INVALID, Some(pid)),
            State::Allocated => (EXIT_CODE_INVALID, None),
        };
        let dto = ContainerDto {
            id: c.id.to_string(),
            app_id: c.id.app().to_string(),
            state: c.state_name().to_owned(),
            exit_code,
            diagnostics: c.diagnostics.clone(),
            total_memory_needed_mb: c.resource.memory_mb(),
            total_v_cores_needed: c.resource.vcores(),
            is_am: c.is_am,
            pid,
            memory_used_mb: c.memory_used.map(|b| b >> 20),
            node_id: self.node.to_string(),
            container_logs_link: format!(
                "{}://{}/ws/v1/node/containers/{}/logs",
                self.config.http_policy.scheme(),
                self.http_address,
                c.id
            ),
            user: c.viewers.owner.clone().unwrap_or_default(),
        };
        (dto, c.viewers.clone())
    }

    /// One exchange with the RM (registering first if needed); how long to
    /// wait before the next.
    async fn talk_to_rm(&mut self) -> Duration {
        if !self.session.registered {
            return match self.register().await {
                Ok(interval) => {
                    self.figures.registration(RegistrationOutcome::Registered);
                    tracing::info!(node = %self.node, rm = %self.config.rm, "registered with the resource manager");
                    self.session = Session {
                        registered: true,
                        response_id: 0,
                        interval,
                        failures: 0,
                        inflight: None,
                    };
                    // Heartbeat at once: the first one may already bring containers.
                    Duration::ZERO
                }
                // The RM keeps this node out, or does not take its node
                // secret (or its lack of one): asking again would only be
                // refused again, unless the secret's file now holds
                // another (the secret was rolled).
                Err(ClientError::Remote { status, exception })
                    if status == http::StatusCode::FORBIDDEN
                        || status == http::StatusCode::UNAUTHORIZED =>
                {
                    if self.reread_node_secret() {
                        tracing::info!(node = %self.node, reason = %exception.message, "the resource manager refused this node; its node secret file holds a new secret, registering again with it");
                        return Duration::ZERO;
                    }
                    self.figures.registration(RegistrationOutcome::Refused);
                    tracing::error!(node = %self.node, rm = %self.config.rm, reason = %exception.message, "the resource manager refused this node; stopping");
                    self.end = Some(AgentEnd::Refused(exception.message));
                    Duration::ZERO
                }
                Err(e) => {
                    self.figures.registration(RegistrationOutcome::Failed);
                    self.failed("registration", &e);
                    (self.session.interval * self.session.failures.min(5)).min(MAX_RETRY)
                }
            };
        }
        let request = match self.session.inflight.take() {
            Some(r) => r,
            None => {
                let (node_utilization, containers_utilization) = self.utilization();
                NodeHeartbeatRequest {
                    node_id: self.node.to_string(),
                    response_id: self.session.response_id,
                    containers: self.reports.values().cloned().collect(),
                    // Only an unhealthy node says anything: absent means healthy.
                    node_health_status: self.health.borrow().unhealthy.clone().map(|report| {
                        NodeHealthDto {
                            is_node_healthy: false,
                            health_report: report,
                        }
                    }),
                    node_utilization,
                    containers_utilization,
                }
            }
        };
        let sent = Instant::now();
        match self
            .call::<NodeHeartbeatResponse>("/ws/v1/nm/heartbeat", &request)
            .await
        {
            Ok(answer) => {
                let answered = Instant::now();
                self.metrics.heartbeat_took(answered - sent);
                self.figures.heartbeat(HeartbeatOutcome::Answered, answered);
                if self.session.failures > 0 {
                    tracing::info!(node = %self.node, "heartbeats answered again");
                }
                self.session.failures = 0;
                // Forget what was reported, unless a newer state replaced it meanwhile.
                for sent in &request.containers {
                    if let Ok(id) = sent.container_id.parse::<ContainerId>()
                        && self.reports.get(&id) == Some(sent)
                    {
                        self.reports.remove(&id);
                    }
                }
                self.session.response_id = answer.response_id;
                if answer.node_action == NodeAction::Shutdown {
                    let why = answer
                        .diagnostics_message
                        .unwrap_or_else(|| "no reason given".to_owned());
                    tracing::warn!(node = %self.node, reason = %why, "the resource manager told this node to shut down; stopping every container");
                    // A decommissioned node is no longer registered: there
                    // is nothing to unregister.
                    self.session.registered = false;
                    self.end = Some(AgentEnd::ShutDown(why));
                    return Duration::ZERO;
                }
                if answer.next_heartbeat_interval_ms > 0 {
                    self.session.interval =
                        Duration::from_millis(answer.next_heartbeat_interval_ms);
                }
                self.apply(answer);
                self.session.interval
            }
            Err(ClientError::Remote { status, exception })
                if status == http::StatusCode::NOT_FOUND
                    || status == http::StatusCode::CONFLICT =>
            {
                self.figures
                    .heartbeat(HeartbeatOutcome::UnknownNode, Instant::now());
                tracing::warn!(node = %self.node, reason = %exception.message, "the resource manager no longer knows this node; registering again with its running containers");
                self.session.registered = false;
                Duration::ZERO
            }
            // The RM no longer takes the node's secret (it restarted with
            // another): registering again ends the agent with the RM's
            // words if it is refused there too.
            Err(ClientError::Remote { status, exception })
                if status == http::StatusCode::FORBIDDEN
                    || status == http::StatusCode::UNAUTHORIZED =>
            {
                self.figures
                    .heartbeat(HeartbeatOutcome::Failed, Instant::now());
                tracing::warn!(node = %self.node, reason = %exception.message, "the resource manager refused this node's heartbeat; registering again");
                self.session.registered = false;
                Duration::ZERO
            }
            Err(e) => {
                self.figures
                    .heartbeat(HeartbeatOutcome::Failed, Instant::now());
                self.failed("heartbeat", &e);
                self.session.inflight = Some(request);
                self.session.interval
            }
        }
    }

    /// Reads the node secret's file again; true when it now holds another
    /// secret, which the agent shows from then on.
    fn reread_node_secret(&mut self) -> bool {
        let Some(path) = &self.config.node_secret_file else {
            return false;
        };
        match NodeSecret::read(path) {
            Ok(secret) if self.config.node_secret.as_ref() != Some(&secret) => {
                self.config.node_secret = Some(secret);
                match rm_client(&self.config) {
                    Ok(c) => {
                        self.rm = c;
                        true
                    }
                    Err(_) => false,
                }
            }
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(node = %self.node, error = %e, "cannot read the node secret again");
                false
            }
        }
    }

    fn failed(&mut self, what: &str, e: &ClientError) {
        self.session.failures += 1;
        if self.session.failures == 1 {
            tracing::warn!(node = %self.node, rm = %self.config.rm, error = %e, "{what} failed; retrying (containers keep running)");
        } else {
            tracing::debug!(node = %self.node, error = %e, "{what} failed again");
        }
    }

    async fn call<T: serde::de::DeserializeOwned>(
        &mut self,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Result<T, ClientError> {
        let timeout = self.config.rm_timeout;
        match tokio::time::timeout(timeout, self.rm.call(Method::POST, path, Some(body))).await {
            Ok(res) => res,
            Err(_) => {
                // The connection is in an unknown state: start a new one next time.
                if let Ok(c) = rm_client(&self.config) {
                    self.rm = c;
                }
                Err(ClientError::Unexpected {
                    status: http::StatusCode::GATEWAY_TIMEOUT,
                    why: format!("no answer within {} ms", timeout.as_millis()),
                })
            }
        }
    }

    async fn register(&mut self) -> Result<Duration, ClientError> {
        let containers = self
            .containers
            .values()
            .filter(|c| !matches!(c.state, State::Complete { .. }))
            .map(|c| RunningContainerDto {
                container_id: c.id.to_string(),
                resource: ResourceDto::from_resource(c.resource),
                priority: c.priority,
            })
            .collect();
        let body = NodeRegisterRequest {
            node_id: self.node.to_string(),
            rack: Some(self.config.rack.clone()),
            http_address: Some(self.http_address.clone()),
            capability: ResourceDto::from_resource(self.config.capability),
            containers,
            physical_resource: self.meter.physical(),
        };
        let answer: NodeRegisterResponse = self.call("/ws/v1/nm/register", &body).await?;
        // The RM's dynamic-resources.xml decides what this node offers;
        // the RM sizes and counts its containers, so the agent only says so.
        let given = answer.resource.map(ResourceDto::to_resource);
        if let Some(given) = given
            && given != self.config.capability
        {
            tracing::info!(node = %self.node, reported = %self.config.capability, given = %given, "the resource manager gives this node another size (its dynamic-resources.xml)");
        }
        self.figures.capability = given.unwrap_or(self.config.capability);
        Ok(Duration::from_millis(answer.heartbeat_interval_ms.max(1)))
    }

    /// Carries out a heartbeat's answer: stops, then new containers.
    fn apply(&mut self, answer: NodeHeartbeatResponse) {
        for stop in &answer.containers_to_stop {
            let Some(c) = self.containers.get(&stop.container_id) else {
                continue;
            };
            match c.state {
                State::Allocated => {
                    // Never started: nothing to kill, and the RM already ended it.
                    self.complete(
                        stop.container_id,
                        exit_status_for(stop.reason),
                        format!("released before it started ({:?})", stop.reason),
                        false,
                    );
                }
                State::Running { .. } => self.stop(stop.container_id, StopCause::Rm(stop.reason)),
                State::Complete { .. } => {}
            }
        }
        for alloc in answer.allocated_containers {
            if self.containers.contains_key(&alloc.container_id) {
                continue;
            }
            self.containers.insert(
                alloc.container_id,
                Container {
                    id: alloc.container_id,
                    resource: alloc.resource.to_resource(),
                    priority: alloc.priority,
                    is_am: alloc.is_am,
                    token: alloc.container_token,
                    am_token: alloc.am_rm_token.clone(),
                    viewers: AppViewers {
                        owner: alloc.user.filter(|u| !u.is_empty()),
                        view: alloc
                            .view_app_acl
                            .as_deref()
                            .map_or_else(Acl::nobody, Acl::parse),
                    },
                    state: State::Allocated,
                    stopping: None,
                    diagnostics: String::new(),
                    memory_used: None,
                    vmem_used: None,
                    cpu_used: None,
                    cpu_rate: CpuRate::default(),
                    cgroup: None,
                },
            );
            if !alloc.is_am {
                continue;
            }
            let context = match &alloc.launch_context {
                Some(v) => LaunchContext::from_json(v).map_err(|e| e.to_string()),
                None => Err("the resource manager gave no launch context".to_owned()),
            };
            match context {
                Ok(ctx) => self.launch(alloc.container_id, &ctx),
                Err(why) => {
                    tracing::warn!(container = %alloc.container_id, why = %why, "cannot launch an application master container");
                    self.figures.launch_began();
                    self.figures.ended(Ended::LaunchFailed);
                    self.complete(
                        alloc.container_id,
                        LAUNCH_FAILED,
                        format!("cannot launch the application master: {why}"),
                        true,
                    );
                }
            }
        }
    }

    fn launch(&mut self, id: ContainerId, context: &LaunchContext) {
        let began = Instant::now();
        let dirs = ContainerDirs::of(&self.config.work_dir, id);
        let Some(c) = self.containers.get_mut(&id) else {
            return;
        };
        self.figures.launch_began();
        if let Some(groups) = &self.cgroups {
            match groups.create(id, c.resource.memory_mb(), c.resource.vcores()) {
                Ok(g) => c.cgroup = Some(g),
                Err(e) => {
                    tracing::warn!(container = %id, error = %e, "cannot create the container's cgroup; its memory is polled instead");
                }
            }
        }
        let env = container_env(
            &self.config,
            &self.node,
            &self.http_address,
            id,
            &dirs,
            context,
            c.am_token.as_ref(),
        );
        let procs = c.cgroup.as_ref().map(ContainerCgroup::procs);
        let spawned = launch::spawn(&Launch {
            container: id,
            command: &context.command,
            environment: &env,
            dirs: &dirs,
            cgroup_procs: procs.as_deref(),
        });
        let started = match spawned {
            Ok(child) => child
                .id()
                .map(|pid| (pid, child))
                .ok_or_else(|| "the process ended before it could be watched".to_owned()),
            Err(e) => Err(e.to_string()),
        };
        match started {
            Ok((pid, mut child)) => {
                let took = began.elapsed();
                self.metrics.launch_took(took);
                self.figures.launch_took(took);
                tracing::debug!(container = %id, pid, "container started");
                c.state = State::Running { pid };
                self.reports.insert(id, status(id, "RUNNING", None, None));
                let exits = self.exits_tx.clone();
                tokio::spawn(async move {
                    let res = child.wait().await;
                    let _ = exits.send((id, pid, res));
                });
            }
            Err(why) => {
                self.figures.ended(Ended::LaunchFailed);
                tracing::warn!(container = %id, why = %why, "container launch failed");
                self.complete(
                    id,
                    LAUNCH_FAILED,
                    format!("cannot launch the container: {why}"),
                    true,
                );
            }
        }
    }

    /// Records a container's end and queues its report.
    fn complete(&mut self, id: ContainerId, exit_status: i32, diagnostics: String, report: bool) {
        let Some(c) = self.containers.get_mut(&id) else {
            return;
        };
        c.state = State::Complete { exit_status };
        c.diagnostics = diagnostics.clone();
        if let Some(g) = c.cgroup.take() {
            g.remove();
        }
        if report {
            let words = (!diagnostics.is_empty()).then_some(diagnostics);
            self.reports
                .insert(id, status(id, "COMPLETE", Some(exit_status), words));
        }
        self.completed.push_back(id);
        while self.completed.len() > self.config.completed_kept {
            if let Some(old) = self.completed.pop_front() {
                self.containers.remove(&old);
            }
        }
    }

    fn exited(&mut self, (id, pid, res): Exit) {
        // Whatever the leader left behind in its group goes with it.
        let _ = launch::signal_group(pid, Signal::SIGKILL);
        let Some(c) = self.containers.get(&id) else {
            return;
        };
        let code = match &res {
            Ok(status) => launch::exit_code(*status),
            Err(_) => LAUNCH_FAILED,
        };
        let oom_killed = c.cgroup.as_ref().is_some_and(|g| g.oom_kills() > 0);
        let (exit_status, diagnostics, ended) = match &c.stopping {
            Some(StopCause::MemoryLimit(why)) => (
                KILLED_EXCEEDED_PMEM,
                why.clone(),
                Ended::Killed(KillReason::MemoryLimit),
            ),
            Some(StopCause::Rm(reason)) => (
                exit_status_for(*reason),
                format!(
                    "stopped at the resource manager's request ({reason:?}); the process exited with code {code}"
                ),
                Ended::Killed(KillReason::of_stop(*reason)),
            ),
            Some(StopCause::Shutdown) => (
                ABORTED,
                "stopped: the node manager shut down".to_owned(),
                Ended::Killed(KillReason::Shutdown),
            ),
            None if oom_killed => {
                let peak = c
                    .cgroup
                    .as_ref()
                    .and_then(ContainerCgroup::memory_peak)
                    .map_or_else(String::new, |b| {
                        format!(" (peak {:.1} MB)", b as f64 / 1048576.0)
                    });
                (
                    KILLED_EXCEEDED_PMEM,
                    format!(
                        "container {id} (pid {pid}) was killed by the kernel for exceeding its memory limit of {} MB{peak}; exit status {KILLED_EXCEEDED_PMEM}",
                        c.resource.memory_mb()
                    ),
                    // Reported as the memory monitor's kill is (-104), and
                    // counted alike.
                    Ended::Killed(KillReason::MemoryLimit),
                )
            }
            None if code == 0 => (0, String::new(), Ended::Completed),
            None => {
                let dirs = ContainerDirs::of(&self.config.work_dir, id);
                let tail = launch::stderr_tail(&dirs);
                let mut words = format!("the container's process exited with code {code}");
                if let Err(e) = &res {
                    words = format!("cannot wait for the container's process: {e}");
                }
                if !tail.is_empty() {
                    words.push_str("; the end of its stderr: ");
                    words.push_str(&tail);
                }
                (code, words, Ended::Failed)
            }
        };
        self.figures.ended(ended);
        tracing::debug!(container = %id, pid, exit_status, "container exited");
        self.complete(id, exit_status, diagnostics, true);
    }

    /// Starts stopping a running container: SIGTERM to its group now, SIGKILL
    /// after the grace period if it is still running.
    fn stop(&mut self, id: ContainerId, cause: StopCause) {
        let Some(c) = self.containers.get_mut(&id) else {
            return;
        };
        let State::Running { pid } = c.state else {
            return;
        };
        if c.stopping.is_some() {
            return;
        }
        tracing::debug!(container = %id, pid, cause = ?cause, "stopping container");
        c.stopping = Some(cause);
        if let Err(e) = launch::signal_group(pid, Signal::SIGTERM) {
            tracing::warn!(container = %id, pid, error = %e, "cannot signal a container's process group");
        }
        let tx = self.commands_tx.clone();
        let grace = self.config.kill_grace;
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            let _ = tx.send(Command::Escalate { container: id }).await;
        });
    }

    /// The running containers and their processes' ids.
    fn running(&self) -> Vec<(ContainerId, u32)> {
        self.containers
            .values()
            .filter_map(|c| match c.state {
                State::Running { pid } => Some((c.id, pid)),
                _ => None,
            })
            .collect()
    }

    /// What the machine uses now, and its running containers together as
    /// the monitor last sampled them; both `None` where the machine cannot
    /// be measured (the containers' figures come from the same `/proc`).
    fn utilization(
        &mut self,
    ) -> (
        Option<ResourceUtilizationDto>,
        Option<ResourceUtilizationDto>,
    ) {
        let Some(node) = self.meter.sample() else {
            return (None, None);
        };
        let (mut pmem, mut vmem, mut cpu) = (0u64, 0u64, 0.0);
        for c in self.containers.values() {
            if let State::Running { .. } = c.state {
                pmem = pmem.saturating_add(c.memory_used.unwrap_or(0));
                vmem = vmem.saturating_add(c.vmem_used.unwrap_or(0));
                cpu += c.cpu_used.unwrap_or(0.0);
            }
        }
        let mb = |bytes: u64| i64::try_from(bytes >> 20).unwrap_or(i64::MAX);
        let containers = ResourceUtilizationDto {
            pmem: mb(pmem),
            vmem: mb(vmem),
            cpu,
        };
        self.figures.utilization = Some(Utilization { node, containers });
        (Some(node), Some(containers))
    }

    /// One sample of every running container's memory and CPU; containers
    /// over their limit (polled ones) are stopped with the diagnostic.
    fn monitor(&mut self) {
        let running = self.running();
        if running.is_empty() {
            return;
        }
        let polled = running
            .iter()
            .any(|(id, _)| self.containers[id].cgroup.is_none());
        let table = if polled {
            match ProcessTable::read(Path::new("/proc")) {
                Ok(t) => Some(t),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read /proc; container memory is not checked");
                    None
                }
            }
        } else {
            None
        };
        let mut over = Vec::new();
        let now = std::time::Instant::now();
        for (id, pid) in running {
            let c = self.containers.get_mut(&id).expect("listed just above");
            if let Some(g) = &c.cgroup {
                c.memory_used = g.memory_current();
                c.vmem_used = c
                    .memory_used
                    .map(|m| m.saturating_add(g.swap_current().unwrap_or(0)));
                if let Some(usec) = g.cpu_usage_usec() {
                    c.cpu_used = c.cpu_rate.update(now, usec as f64 / 1e6).or(c.cpu_used);
                }
                continue;
            }
            let Some(usage) = table.as_ref().and_then(|t| t.tree_usage(pid)) else {
                continue;
            };
            c.memory_used = Some(usage.rss_bytes);
            c.vmem_used = Some(usage.vmem_bytes);
            let ticks_per_second = table.as_ref().map_or(100, |t| t.ticks_per_second());
            c.cpu_used = c
                .cpu_rate
                .update(now, usage.cpu_ticks as f64 / ticks_per_second as f64)
                .or(c.cpu_used);
            let limit_mb = c.resource.memory_mb();
            if usage.rss_bytes > limit_mb << 20 && c.stopping.is_none() {
                let why = over_limit_diagnostic(id, pid, usage, limit_mb);
                tracing::warn!(container = %id, "{why}");
                over.push((id, why));
            }
        }
        for (id, why) in over {
            self.stop(id, StopCause::MemoryLimit(why));
        }
    }

    /// Stops every container and unregisters.
    async fn shutdown(mut self, exits: &mut mpsc::UnboundedReceiver<Exit>) {
        let running = self.running();
        if !running.is_empty() {
            tracing::info!(node = %self.node, containers = running.len(), "stopping containers");
        }
        for (id, _) in &running {
            self.stop(*id, StopCause::Shutdown);
        }
        let mut left = running.len();
        let grace_end = Instant::now() + self.config.kill_grace;
        let mut killed = false;
        let reap_end = grace_end + SHUTDOWN_REAP;
        while left > 0 {
            let deadline = if killed { reap_end } else { grace_end };
            match tokio::time::timeout_at(deadline, exits.recv()).await {
                Ok(Some(exit)) => {
                    self.exited(exit);
                    left -= 1;
                }
                Ok(None) => break,
                Err(_) if !killed => {
                    for (_, pid) in &running {
                        let _ = launch::signal_group(*pid, Signal::SIGKILL);
                    }
                    killed = true;
                }
                Err(_) => {
                    tracing::warn!(node = %self.node, left, "containers did not exit after SIGKILL");
                    break;
                }
            }
        }
        // The stopped containers' ends, for whoever scrapes before the API closes.
        self.publish();
        if self.session.registered {
            let body = NodeUnregisterRequest {
                node_id: self.node.to_string(),
            };
            match self
                .call::<NodeUnregisterResponse>("/ws/v1/nm/unregister", &body)
                .await
            {
                Ok(_) => {
                    tracing::info!(node = %self.node, "unregistered from the resource manager")
                }
                Err(e) => {
                    tracing::warn!(node = %self.node, error = %e, "cannot unregister; the resource manager will declare the node lost")
                }
            }
        }
    }
}

/// The exit status a container stopped at the RM's request ends with
/// (the RM itself has already told the AM, with the same code).
fn exit_status_for(reason: StopReasonDto) -> i32 {
    match reason {
        // The RM counts a container of an unhealthy node as lost (-100).
        StopReasonDto::Released | StopReasonDto::NodeUnhealthy => ABORTED,
        StopReasonDto::Preempted => PREEMPTED,
        StopReasonDto::AppFinished => KILLED_AFTER_APP_COMPLETION,
        StopReasonDto::Unknown | StopReasonDto::NoRoom => KILLED_BY_RESOURCEMANAGER,
    }
}

fn status(
    id: ContainerId,
    state: &str,
    exit_status: Option<i32>,
    diagnostics: Option<String>,
) -> ContainerStatusDto {
    ContainerStatusDto {
        container_id: id.to_string(),
        state: state.to_owned(),
        exit_status,
        diagnostics,
    }
}

/// The agent's client of the RM: showing the node secret if it has one,
/// and trusting what the settings say for an `https://` RM.
fn rm_client(config: &NmConfig) -> Result<RmClient, ClientError> {
    let mut client = RmClient::new(&config.rm, None)?;
    if let Some(trust) = &config.rm_trust {
        client = client.with_tls(trust.clone());
    }
    if let Some(secret) = &config.node_secret {
        client = client.with_bearer(secret.value());
    }
    Ok(client)
}

/// The variable an AM container finds its attempt's AM token in, which it
/// shows on every AM protocol call (`Authorization: Bearer <token>`).
pub const AM_TOKEN_ENV: &str = "WEFT_AM_TOKEN";

/// The environment the node gives a container (YARN's names where YARN has
/// one), before the launch context's own variables, which win; then an AM
/// container's token, which the RM's word decides, not the submitter's.
fn container_env(
    config: &NmConfig,
    node: &NodeId,
    http_address: &str,
    id: ContainerId,
    dirs: &ContainerDirs,
    context: &LaunchContext,
    am_token: Option<&AmToken>,
) -> BTreeMap<String, String> {
    let app: AppId = id.app();
    let http_port = http_address.rsplit_once(':').map_or("", |(_, p)| p);
    let mut env = BTreeMap::from([
        ("CONTAINER_ID".to_owned(), id.to_string()),
        ("APPLICATION_ID".to_owned(), app.to_string()),
        ("NM_HOST".to_owned(), node.host().to_owned()),
        ("NM_PORT".to_owned(), node.port().to_string()),
        ("NM_HTTP_PORT".to_owned(), http_port.to_owned()),
        ("NM_HTTP_ADDRESS".to_owned(), http_address.to_owned()),
        (
            "LOG_DIRS".to_owned(),
            dirs.logs.to_string_lossy().into_owned(),
        ),
        ("PWD".to_owned(), dirs.work.to_string_lossy().into_owned()),
        ("WEFT_RM".to_owned(), config.rm.clone()),
    ]);
    env.extend(context.environment.clone());
    if let Some(token) = am_token {
        env.insert(AM_TOKEN_ENV.to_owned(), token.to_hex());
    }
    env
}
