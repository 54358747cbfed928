//! The distributed shell (YARN's `DistributedShell`, as `weft app submit`):
//! submits an application, acts as its unmanaged AM, asks for containers,
//! starts the command in each through its node's API (showing the
//! container token the allocate answer gave), re-asks for
//! containers that were preempted or lost with their node, and finishes the
//! application with the outcome.
//!
//! The AM runs in the client, not in a container (an unmanaged AM, which
//! YARN supports): nothing needs installing on the nodes, and the client
//! sees progress directly. As YARN's unmanaged AM launcher does, it takes
//! its attempt's AM token from the application's report, which shows it to
//! the app's owner alone, and shows it on every AM protocol call. If the RM restarts (with its state store on), the
//! AM registers again, asks again for what it still needs, and asks the
//! nodes how the containers it started ended meanwhile.
//!
//! Printing is the caller's: progress arrives as `ShellEvent`s.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::Duration;

use http::{Method, StatusCode};
use tokio::sync::mpsc;
use tokio::time::Instant;
use weft_model::{AppId, ContainerId};
use weft_rm::client::{ClientError, RmClient, url_like};
use weft_rm::dto::ResourceDto;
use weft_rm::dto::am::{
    AllocateRequestDto, AllocateResponseDto, AmFinishRequest, AmRegisterResponse, AskDto,
};
use weft_rm::dto::apps::{LIFETIME, SubmitApplicationDto};
use weft_rm::token::ContainerToken;

use crate::dto::{ContainerBody, LaunchContext};

/// YARN's exit status of a container lost with its node or released.
const ABORTED: i32 = -100;
/// YARN's exit status of a preempted container.
const PREEMPTED: i32 = -102;
/// The request priority of the shell's containers.
const PRIORITY: i32 = 1;
/// After the RM came back, keep asking nodes about containers this long:
/// a container that ended before its node re-registered is known to no RM.
const RECONCILE_FOR: Duration = Duration::from_secs(5);

/// What to run.
#[derive(Clone, Debug)]
pub struct ShellConfig {
    /// The RM, `http://host:port`.
    pub rm: String,
    /// The submitting user.
    pub user: String,
    /// The queue asked for (placement decides).
    pub queue: Option<String>,
    /// The application's name.
    pub name: String,
    /// How many containers must succeed.
    pub num_containers: u32,
    /// Each container's size.
    pub container: ResourceDto,
    /// The shell command each container runs.
    pub command: String,
    /// Variables added to each container's environment.
    pub environment: BTreeMap<String, String>,
    /// How often the AM calls allocate (YARN's AMs: every second).
    pub interval: Duration,
    /// How long to keep trying to start a container on its node.
    pub launch_timeout: Duration,
    /// How long the RM may be unreachable before the shell gives up.
    pub rm_timeout: Duration,
    /// How long one call to the RM (or a node, for its status) may take: a
    /// call that hangs (an RM stopped with SIGSTOP, a black-holed address)
    /// then counts as the RM or node being unreachable, and is retried as
    /// such. A start call on a node is bounded by `launch_timeout`.
    pub request_timeout: Duration,
    /// How long the app may run from its submission before the RM kills
    /// it (its `LIFETIME` timeout, whole seconds); `None`: no limit.
    pub lifetime_secs: Option<u64>,
}

impl ShellConfig {
    /// `num_containers` containers of `container` running `command`, with
    /// every other setting at its default.
    pub fn new(
        rm: impl Into<String>,
        user: impl Into<String>,
        num_containers: u32,
        container: ResourceDto,
        command: impl Into<String>,
    ) -> ShellConfig {
        ShellConfig {
            rm: rm.into(),
            user: user.into(),
            queue: None,
            name: "distributed-shell".to_owned(),
            num_containers,
            container,
            command: command.into(),
            environment: BTreeMap::new(),
            interval: Duration::from_secs(1),
            launch_timeout: Duration::from_secs(10),
            rm_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(30),
            lifetime_secs: None,
        }
    }
}

/// Something the caller may want to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShellEvent {
    /// The app was submitted.
    Submitted {
        /// Its id.
        app: AppId,
    },
    /// The AM registered; the app runs in `queue`.
    Registered {
        /// The queue placement chose.
        queue: String,
    },
    /// A container was started on its node.
    Launched {
        /// The container.
        container: ContainerId,
        /// Its node's address.
        node: String,
    },
    /// A container ended and counts (success or failure).
    Completed {
        /// The container.
        container: ContainerId,
        /// Its exit status.
        exit_status: i32,
        /// Why, when it failed.
        diagnostics: String,
    },
    /// A container was preempted or lost: another is asked for.
    Reasked {
        /// The container.
        container: ContainerId,
        /// Its exit status (-102 preempted, -100 lost).
        exit_status: i32,
        /// The RM's or node's words.
        diagnostics: String,
    },
    /// The RM will take containers back unless they are released.
    PreemptionWarning {
        /// How many.
        containers: usize,
    },
    /// The RM cannot be reached; the shell keeps trying.
    RmUnreachable {
        /// Why.
        error: String,
    },
    /// The RM came back without knowing the AM (it restarted): the AM
    /// registered again.
    Resynced,
    /// Counts changed.
    Progress(Progress),
}

/// Where the containers stand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Allocated and started (or starting).
    pub running: u32,
    /// Exited 0.
    pub succeeded: u32,
    /// Exited otherwise.
    pub failed: u32,
    /// Not allocated yet.
    pub waiting: u32,
}

/// How it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellOutcome {
    /// The app.
    pub app: AppId,
    /// `SUCCEEDED` (every container exited 0), `FAILED` or `KILLED`.
    pub final_status: String,
    /// Containers that exited 0.
    pub succeeded: u32,
    /// Containers that failed.
    pub failed: u32,
    /// Containers asked for again after preemption or loss.
    pub reasked: u32,
}

/// Why the shell could not run the app to its end.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// A call failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The settings make no sense.
    #[error("invalid distributed shell: {0}")]
    Invalid(&'static str),
    /// The RM refused the app (placement, ACL).
    #[error("application {app} was rejected: {diagnostics}")]
    Rejected {
        /// The app.
        app: AppId,
        /// The RM's reason.
        diagnostics: String,
    },
    /// The containers asked for are larger than the queue allows.
    #[error(
        "containers of {} MB and {} vcores are larger than queue {queue} allows ({} MB and {} vcores at most)",
        asked.memory,
        asked.vcores,
        max.memory,
        max.vcores
    )]
    TooLarge {
        /// The size asked for.
        asked: ResourceDto,
        /// The queue.
        queue: String,
        /// Its largest container.
        max: ResourceDto,
    },
    /// Someone else ended the app (a kill).
    #[error("application {app} ended as {state}: {diagnostics}")]
    Ended {
        /// The app.
        app: AppId,
        /// `KILLED`, `FAILED`, ...
        state: String,
        /// The RM's words.
        diagnostics: String,
    },
    /// The RM no longer knows the app (it restarted without a state store).
    #[error(
        "the resource manager no longer knows application {0} (was it restarted without weft.rm.state-store.dir?)"
    )]
    Lost(AppId),
    /// The RM stayed unreachable too long.
    #[error("the resource manager was unreachable for {secs} s: {error}")]
    Unreachable {
        /// How long.
        secs: u64,
        /// The last error.
        error: String,
    },
}

/// Runs the distributed shell to its end; `cancel` resolving kills the app.
pub async fn run(
    config: ShellConfig,
    cancel: impl Future<Output = ()>,
    on_event: impl FnMut(ShellEvent),
) -> Result<ShellOutcome, ShellError> {
    if config.num_containers == 0 {
        return Err(ShellError::Invalid(
            "the number of containers must be positive",
        ));
    }
    if config.command.trim().is_empty() {
        return Err(ShellError::Invalid("the command is empty"));
    }
    let mut client =
        RmClient::new(&config.rm, Some(config.user.clone()))?.with_timeout(config.request_timeout);
    let app = submit(&mut client, &config).await?;
    let mut shell = Shell {
        asked: config.num_containers,
        config,
        client,
        app,
        on_event,
        response_id: 0,
        last_sent_ask: None,
        inflight: None,
        live: BTreeMap::new(),
        succeeded: 0,
        failed: 0,
        reasked: 0,
        releases: Vec::new(),
        warned: BTreeSet::new(),
        last_progress: None,
        unreachable_since: None,
        reconcile_until: None,
    };
    (shell.on_event)(ShellEvent::Submitted { app });
    shell.register().await?;
    shell.main_loop(cancel).await
}

async fn submit(client: &mut RmClient, config: &ShellConfig) -> Result<AppId, ShellError> {
    let new = client.new_application().await?;
    let app: AppId = new
        .application_id
        .parse()
        .map_err(|_| ShellError::Invalid("the resource manager gave a malformed application id"))?;
    let body = SubmitApplicationDto {
        application_id: Some(new.application_id),
        application_name: Some(config.name.clone()),
        queue: config.queue.clone(),
        application_type: Some("WEFT-SHELL".to_owned()),
        unmanaged_am: Some(true),
        application_timeouts: config.lifetime_secs.map(|secs| {
            let secs = i64::try_from(secs).unwrap_or(i64::MAX);
            [(LIFETIME.to_owned(), secs)].into_iter().collect()
        }),
        ..SubmitApplicationDto::default()
    };
    client.submit_application(&body).await?;
    // Placement refusals are asynchronous: the app shows FAILED.
    let report = app_report(client, app).await?;
    if report.state == "FAILED" {
        return Err(ShellError::Rejected {
            app,
            diagnostics: report.diagnostics,
        });
    }
    // Without one (an RM from before AM tokens) the AM calls go without,
    // and such an RM asks for none.
    client.set_bearer(report.am_rm_token);
    Ok(app)
}

#[derive(serde::Deserialize)]
struct AppWrapper {
    app: AppReportDto,
}

#[derive(serde::Deserialize)]
struct AppReportDto {
    state: String,
    #[serde(default)]
    diagnostics: String,
    /// The unmanaged AM's token, shown to the app's owner only.
    #[serde(rename = "amRMToken", default)]
    am_rm_token: Option<String>,
}

async fn app_report(client: &mut RmClient, app: AppId) -> Result<AppReportDto, ClientError> {
    let w: AppWrapper = client.get(&format!("/ws/v1/cluster/apps/{app}")).await?;
    Ok(w.app)
}

/// A container the AM holds.
#[derive(Clone, Debug)]
struct Live {
    node: String,
    launched: bool,
}

struct Shell<F> {
    config: ShellConfig,
    client: RmClient,
    app: AppId,
    on_event: F,
    response_id: u64,
    /// Containers the RM still owes, as far as the AM knows.
    asked: u32,
    /// The `numContainers` of the last ask the RM took.
    last_sent_ask: Option<u32>,
    /// An allocate call whose answer never came: sent again unchanged (the
    /// RM replays its answer to a repeat and ignores anything new in it).
    inflight: Option<AllocateRequestDto>,
    live: BTreeMap<ContainerId, Live>,
    succeeded: u32,
    failed: u32,
    reasked: u32,
    releases: Vec<ContainerId>,
    /// Containers a preemption warning named already.
    warned: BTreeSet<String>,
    last_progress: Option<Progress>,
    unreachable_since: Option<Instant>,
    /// After a resync: ask nodes about live containers until then.
    reconcile_until: Option<Instant>,
}

type LaunchResult = (ContainerId, Result<(), String>);

impl<F: FnMut(ShellEvent)> Shell<F> {
    fn done(&self) -> bool {
        self.succeeded + self.failed >= self.config.num_containers
    }

    async fn register_am(&mut self) -> Result<AmRegisterResponse, ClientError> {
        let path = format!("/ws/v1/am/{}/register", self.app);
        self.client
            .call(
                Method::POST,
                &path,
                Some(&serde_json::json!({"host": "weft-app"})),
            )
            .await
    }

    /// Registers the AM and checks that the containers fit the queue.
    async fn register(&mut self) -> Result<(), ShellError> {
        let reg = self.register_am().await?;
        let max = reg.maximum_resource_capability;
        let asked = self.config.container;
        if asked.memory > max.memory || asked.vcores > max.vcores {
            let _ = self
                .finish("FAILED", "containers larger than the queue allows")
                .await;
            return Err(ShellError::TooLarge {
                asked,
                queue: reg.queue,
                max,
            });
        }
        (self.on_event)(ShellEvent::Registered { queue: reg.queue });
        Ok(())
    }

    async fn main_loop(
        mut self,
        cancel: impl Future<Output = ()>,
    ) -> Result<ShellOutcome, ShellError> {
        tokio::pin!(cancel);
        let (launch_tx, mut launches) = mpsc::unbounded_channel::<LaunchResult>();
        let mut ticks = tokio::time::interval(self.config.interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        while !self.done() {
            tokio::select! {
                () = &mut cancel => {
                    self.finish("KILLED", "killed by the distributed shell's client").await?;
                    return Ok(self.outcome("KILLED"));
                }
                Some((container, res)) = launches.recv() => self.launched(container, res),
                _ = ticks.tick() => self.allocate(&launch_tx).await?,
            }
            self.report_progress();
        }
        let status = if self.failed == 0 {
            "SUCCEEDED"
        } else {
            "FAILED"
        };
        let diagnostics = format!(
            "{} container(s) succeeded, {} failed, {} asked for again",
            self.succeeded, self.failed, self.reasked
        );
        self.finish(status, &diagnostics).await?;
        Ok(self.outcome(status))
    }

    fn outcome(&self, final_status: &str) -> ShellOutcome {
        ShellOutcome {
            app: self.app,
            final_status: final_status.to_owned(),
            succeeded: self.succeeded,
            failed: self.failed,
            reasked: self.reasked,
        }
    }

    fn report_progress(&mut self) {
        let running = self.live.len() as u32;
        let progress = Progress {
            running,
            succeeded: self.succeeded,
            failed: self.failed,
            waiting: self
                .config
                .num_containers
                .saturating_sub(running + self.succeeded + self.failed),
        };
        if self.last_progress != Some(progress) {
            self.last_progress = Some(progress);
            (self.on_event)(ShellEvent::Progress(progress));
        }
    }

    async fn allocate(
        &mut self,
        launch_tx: &mpsc::UnboundedSender<LaunchResult>,
    ) -> Result<(), ShellError> {
        if self.reconcile_until.is_some_and(|t| Instant::now() < t) {
            self.reconcile().await;
        }
        let request = match self.inflight.take() {
            Some(r) => r,
            None => {
                let asks = if self.last_sent_ask != Some(self.asked) {
                    vec![AskDto {
                        priority: PRIORITY,
                        resource_name: "*".to_owned(),
                        capability: self.config.container,
                        num_containers: self.asked,
                        relax_locality: true,
                    }]
                } else {
                    Vec::new()
                };
                let n = self.config.num_containers.max(1) as f32;
                AllocateRequestDto {
                    response_id: self.response_id,
                    asks,
                    releases: std::mem::take(&mut self.releases)
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                    blacklist_additions: Vec::new(),
                    blacklist_removals: Vec::new(),
                    progress: (self.succeeded + self.failed) as f32 / n,
                }
            }
        };
        let path = format!("/ws/v1/am/{}/allocate", self.app);
        let answer: AllocateResponseDto =
            match self.client.call(Method::POST, &path, Some(&request)).await {
                Ok(a) => a,
                Err(ClientError::Remote { status, .. }) if status == StatusCode::CONFLICT => {
                    return self.resync().await;
                }
                Err(ClientError::Remote { status, .. }) if status == StatusCode::NOT_FOUND => {
                    return Err(ShellError::Lost(self.app));
                }
                Err(ClientError::Remote { status, exception })
                    if status != StatusCode::SERVICE_UNAVAILABLE =>
                {
                    return Err(ClientError::Remote { status, exception }.into());
                }
                Err(e) => {
                    self.unreachable(&e)?;
                    self.inflight = Some(request);
                    return Ok(());
                }
            };
        self.unreachable_since = None;
        self.response_id = answer.response_id;
        if let Some(ask) = request.asks.first() {
            self.last_sent_ask = Some(ask.num_containers);
        }
        for a in answer.allocated {
            self.asked = self.asked.saturating_sub(1);
            let held = self.live.len() as u32 + self.succeeded + self.failed;
            if held >= self.config.num_containers {
                // More than needed (asks and allocations crossed): give it back.
                self.releases.push(a.container_id);
                continue;
            }
            self.live.insert(
                a.container_id,
                Live {
                    node: a.node_http_address.clone(),
                    launched: false,
                },
            );
            tokio::spawn(start_on_node(
                url_like(&self.config.rm, &a.node_http_address),
                a.node_http_address,
                a.container_id,
                a.container_token,
                self.context(),
                self.config.launch_timeout,
                launch_tx.clone(),
            ));
        }
        for c in answer.completed {
            self.completed(c.container_id, c.exit_status, c.diagnostics);
        }
        if let Some(p) = answer.preemption {
            let new: Vec<String> = p
                .containers
                .into_iter()
                .filter(|c| self.warned.insert(c.clone()))
                .collect();
            if !new.is_empty() {
                (self.on_event)(ShellEvent::PreemptionWarning {
                    containers: new.len(),
                });
            }
        }
        Ok(())
    }

    fn context(&self) -> LaunchContext {
        LaunchContext {
            command: self.config.command.clone(),
            environment: self.config.environment.clone(),
        }
    }

    /// A container the AM held ended.
    fn completed(&mut self, container: ContainerId, exit_status: i32, diagnostics: String) {
        // Released by the AM, or already counted.
        if self.live.remove(&container).is_none() {
            return;
        }
        match exit_status {
            0 => {
                self.succeeded += 1;
                (self.on_event)(ShellEvent::Completed {
                    container,
                    exit_status,
                    diagnostics,
                });
            }
            PREEMPTED | ABORTED => {
                self.asked += 1;
                self.reasked += 1;
                (self.on_event)(ShellEvent::Reasked {
                    container,
                    exit_status,
                    diagnostics,
                });
            }
            _ => {
                self.failed += 1;
                (self.on_event)(ShellEvent::Completed {
                    container,
                    exit_status,
                    diagnostics,
                });
            }
        }
    }

    fn launched(&mut self, container: ContainerId, res: Result<(), String>) {
        let Some(live) = self.live.get_mut(&container) else {
            return;
        };
        match res {
            Ok(()) => {
                live.launched = true;
                let node = live.node.clone();
                (self.on_event)(ShellEvent::Launched { container, node });
            }
            Err(why) => {
                // The RM still counts it: give it back, and count it failed.
                self.releases.push(container);
                self.live.remove(&container);
                self.failed += 1;
                (self.on_event)(ShellEvent::Completed {
                    container,
                    exit_status: crate::launch::LAUNCH_FAILED,
                    diagnostics: why,
                });
            }
        }
    }

    fn unreachable(&mut self, e: &ClientError) -> Result<(), ShellError> {
        let since = *self.unreachable_since.get_or_insert_with(|| {
            (self.on_event)(ShellEvent::RmUnreachable {
                error: e.to_string(),
            });
            Instant::now()
        });
        if since.elapsed() > self.config.rm_timeout {
            return Err(ShellError::Unreachable {
                secs: since.elapsed().as_secs(),
                error: e.to_string(),
            });
        }
        Ok(())
    }

    /// The RM refused an allocate call as from an unregistered AM: either
    /// the app ended (a kill), or the RM restarted and recovered it.
    async fn resync(&mut self) -> Result<(), ShellError> {
        let report = app_report(&mut self.client, self.app).await?;
        if matches!(report.state.as_str(), "FINISHED" | "FAILED" | "KILLED") {
            return Err(ShellError::Ended {
                app: self.app,
                state: report.state,
                diagnostics: report.diagnostics,
            });
        }
        self.register().await?;
        self.response_id = 0;
        self.inflight = None;
        self.last_sent_ask = None;
        self.releases.clear();
        let held = self.live.len() as u32 + self.succeeded + self.failed;
        self.asked = self.config.num_containers.saturating_sub(held);
        (self.on_event)(ShellEvent::Resynced);
        self.reconcile_until = Some(Instant::now() + RECONCILE_FOR);
        self.reconcile().await;
        Ok(())
    }

    /// Asks each live container's node how it is: ones that ended while the
    /// RM was away are counted; ones their node no longer knows are lost.
    async fn reconcile(&mut self) {
        let live: Vec<(ContainerId, String)> = self
            .live
            .iter()
            .filter(|(_, l)| l.launched)
            .map(|(c, l)| (*c, l.node.clone()))
            .collect();
        for (container, node) in live {
            // As the submitting user: a node whose ACLs are on withholds a
            // container's diagnostics from anyone its app's VIEW_APP does
            // not let see them.
            let Ok(client) = RmClient::new(
                &url_like(&self.config.rm, &node),
                Some(self.config.user.clone()),
            ) else {
                continue;
            };
            let mut client = client.with_timeout(self.config.request_timeout);
            let path = format!("/ws/v1/node/containers/{container}");
            match client.get::<ContainerBody>(&path).await {
                Ok(body) if body.container.state == "COMPLETE" => {
                    // A node that forgot the code (none exited) reports INVALID.
                    let exit = match body.container.exit_code {
                        crate::dto::EXIT_CODE_INVALID => ABORTED,
                        code => code,
                    };
                    self.completed(container, exit, body.container.diagnostics);
                }
                Ok(_) => {}
                Err(ClientError::Remote { status, .. }) if status == StatusCode::NOT_FOUND => {
                    self.completed(
                        container,
                        ABORTED,
                        format!("its node {node} no longer knows it"),
                    );
                }
                // An unreachable node is the RM's to declare lost.
                Err(_) => {}
            }
        }
    }

    async fn finish(&mut self, status: &str, diagnostics: &str) -> Result<(), ShellError> {
        let path = format!("/ws/v1/am/{}/finish", self.app);
        let body = AmFinishRequest {
            final_status: status.to_owned(),
            diagnostics: diagnostics.to_owned(),
            tracking_url: None,
        };
        loop {
            match self
                .client
                .call::<serde_json::Value>(Method::POST, &path, Some(&body))
                .await
            {
                Ok(_) => {
                    self.await_final_report().await;
                    return Ok(());
                }
                Err(ClientError::Remote { status, .. }) if status == StatusCode::CONFLICT => {
                    // Not registered (the RM restarted): register, then finish.
                    let report = app_report(&mut self.client, self.app).await?;
                    if matches!(report.state.as_str(), "FINISHED" | "FAILED" | "KILLED") {
                        return Ok(());
                    }
                    self.register_am().await?;
                }
                Err(e @ ClientError::Remote { .. }) => return Err(e.into()),
                Err(e) => {
                    self.unreachable(&e)?;
                    tokio::time::sleep(self.config.interval).await;
                }
            }
        }
    }
}

impl<F> Shell<F> {
    /// Waits (briefly) until the RM's reports show the app ended, so a
    /// `weft app status` right after the shell exits agrees with it: the
    /// RM answers reads from a view refreshed every
    /// `weft.rm.view-refresh-ms`.
    async fn await_final_report(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            match app_report(&mut self.client, self.app).await {
                Ok(r) if matches!(r.state.as_str(), "FINISHED" | "FAILED" | "KILLED") => return,
                Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                Err(_) => return,
            }
        }
    }
}

/// Starts `container` on its node, retrying while the node has not heard of
/// the allocation yet (its heartbeat answer and the AM's allocate answer
/// race) or cannot be reached, for at most `timeout`.
async fn start_on_node(
    node_url: String,
    node: String,
    container: ContainerId,
    token: ContainerToken,
    context: LaunchContext,
    timeout: Duration,
    done: mpsc::UnboundedSender<LaunchResult>,
) {
    let res = async {
        let mut client = RmClient::new(&node_url, None)
            .map_err(|e| format!("node {node}: {e}"))?
            .with_timeout(timeout);
        let path = format!("/ws/v1/node/containers/{container}/start");
        let mut body = context.to_json();
        // The node starts the container only for whoever shows the token
        // the RM gave this AM with it.
        body["containerToken"] = serde_json::Value::String(token.to_hex());
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_millis(50);
        loop {
            let err = match client
                .call::<ContainerBody>(Method::POST, &path, Some(&body))
                .await
            {
                Ok(_) => return Ok(()),
                // Started by an earlier try whose answer was lost.
                Err(ClientError::Remote { status, .. }) if status == StatusCode::CONFLICT => {
                    return Ok(());
                }
                Err(ClientError::Remote { status, exception })
                    if status != StatusCode::NOT_FOUND =>
                {
                    return Err(format!(
                        "node {node} refused to start it: {}",
                        exception.message
                    ));
                }
                Err(e) => e,
            };
            if Instant::now() + pause > deadline {
                return Err(format!("could not start it on node {node}: {err}"));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }
    .await;
    let _ = done.send((container, res));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RM that accepts connections and never answers must not hang the
    /// shell: its submission times out with the client's message.
    #[tokio::test]
    async fn a_silent_rm_fails_the_submission_instead_of_hanging_it() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let mut config = ShellConfig::new(
            format!("http://{addr}"),
            "alice",
            1,
            ResourceDto {
                memory: 128,
                vcores: 1,
            },
            "true",
        );
        config.request_timeout = Duration::from_millis(200);
        let outcome = tokio::time::timeout(
            Duration::from_secs(20),
            run(config, std::future::pending(), |_| {}),
        )
        .await
        .expect("the shell gave up rather than hanging");
        let err = outcome.unwrap_err().to_string();
        assert!(err.contains("did not answer within 200 ms"), "{err}");
        held.abort();
    }
}
