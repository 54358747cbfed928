//! Starting and stopping the service: build the core from the
//! configuration, start the actor, the reload watcher and the metrics
//! upkeep, serve the router on a listener, and shut down in order (stop
//! accepting, finish in-flight requests, stop the background tasks, stop the
//! actor so it flushes the event log).
//!
//! Signals are the binary's business: `serve` takes any future as the
//! shutdown trigger. Under HTTPS_ONLY the listener is wrapped in `tls`'s
//! `TlsListener`; the router, the shutdown and the callers' addresses are
//! the same either way.

use std::future::{Future, IntoFuture};
use std::sync::Arc;

use axum::Router;
use axum::serve::{Listener, ListenerExt};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use weft_core::ResourceManager;

use crate::access::{AclSettings, LiveAccess};
use crate::actor::{self, ActorSettings, Recovery, RmHandle};
use crate::audit::AuditLog;
use crate::clock::Clock;
use crate::config::RmConfig;
use crate::event_log::EventLog;
use crate::groups::{GroupLookup, OsGroups, UserGroups};
use crate::http::{ApiParts, ApiState, router};
use crate::log_levels::LogLevels;
use crate::metrics::Metrics;
use crate::reload::Reloader;
use crate::state_store::drains::DrainStore;
use crate::state_store::{StateStore, StateStoreError};
use crate::tls::{ServerTls, TlsListener};
use crate::token::{TokenError, TokenSource};
use crate::topology::RackResolver;

/// How often histogram samples are folded into buckets.
const UPKEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(5);

/// Why the service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The decision log could not be opened.
    #[error("cannot open the event log {}: {source}", path.display())]
    EventLog {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The audit log could not be opened.
    #[error("cannot open the audit log {} (weft.rm.audit-log.file): {source}", path.display())]
    AuditLog {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The state store could not be opened.
    #[error(transparent)]
    StateStore(#[from] StateStoreError),
    /// Container tokens cannot be drawn.
    #[error("cannot make container tokens: {0}")]
    Tokens(#[from] TokenError),
}

/// Why serving stopped other than by the shutdown trigger.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Accepting connections failed.
    #[error("the HTTP server failed: {0}")]
    Http(#[from] std::io::Error),
    /// The scheduler task ended on its own (a bug: see the log).
    #[error("the scheduler stopped unexpectedly; see the log")]
    SchedulerStopped,
}

/// What the process around the service supplies, which the service
/// cannot make for itself. A node agent (`weft_nm::NodeManager::start_with`)
/// takes the same.
#[derive(Clone, Debug)]
pub struct Embedding {
    /// Where users' groups come from wherever the configuration maps them
    /// from the operating system (default: its name service).
    pub groups: Arc<dyn GroupLookup>,
    /// The process's logging filter, for `/logLevel`; `None` (the
    /// default) when the process's logging is not the service's to change,
    /// and `/logLevel` answers 404.
    pub log_levels: Option<Arc<dyn LogLevels>>,
}

impl Default for Embedding {
    fn default() -> Embedding {
        Embedding {
            groups: Arc::new(OsGroups),
            log_levels: None,
        }
    }
}

/// A running service: the actor and background tasks, and the router over them.
pub struct Service {
    state: ApiState,
    handle: RmHandle,
    reloader: Arc<Reloader>,
    metrics: Arc<Metrics>,
    /// `None` once it has been awaited.
    actor: Option<JoinHandle<()>>,
    stop_actor: oneshot::Sender<()>,
    stop_background: watch::Sender<bool>,
    background: Vec<JoinHandle<()>>,
    reload_interval: std::time::Duration,
    /// The key material `serve` serves HTTPS with; `None`: plain HTTP.
    tls: Option<ServerTls>,
}

impl Service {
    /// Starts the scheduler and the background tasks on the current tokio
    /// runtime. `clock` maps real time to the core's; its start is the
    /// cluster id, and its time origin moves back to the earliest time the
    /// state store holds, if any.
    pub fn start(config: RmConfig, clock: Clock) -> Result<Service, StartError> {
        Service::start_with(config, clock, Embedding::default())
    }

    /// As `start`, with what the process around the service supplies:
    /// where users' groups come from (tests; an embedder with a directory
    /// of its own), and the logging filter `/logLevel` reads and changes.
    pub fn start_with(
        config: RmConfig,
        clock: Clock,
        embedding: Embedding,
    ) -> Result<Service, StartError> {
        let (recovery, clock) = match &config.service.state_store {
            Some(dir) => open_state_store(dir, &config, clock)?,
            None => (Recovery::default(), clock),
        };
        let mut core_settings = config.core.clone();
        core_settings.cluster_timestamp = clock.cluster_timestamp();
        let scheduler = core_settings.scheduler.clone();
        let core = ResourceManager::new(config.alloc.config.clone(), core_settings, clock.now());
        let metrics = Arc::new(Metrics::new());
        let event_log = match &config.service.event_log {
            Some(path) => Some(EventLog::open(path).map_err(|source| StartError::EventLog {
                path: path.clone(),
                source,
            })?),
            None => None,
        };
        let audit = Arc::new(match &config.service.audit_log {
            Some(path) => AuditLog::open(path).map_err(|source| StartError::AuditLog {
                path: path.clone(),
                source,
            })?,
            None => AuditLog::tracing_only(),
        });
        let groups = UserGroups::new(
            config.groups.clone(),
            config.service.groups_cache,
            embedding.groups,
        );
        tracing::info!(mapping = groups.describe(), "users' groups");
        let access = Arc::new(LiveAccess::new(
            AclSettings {
                enabled: scheduler.acl_enable,
                admins: scheduler.admin_acl.clone(),
            },
            groups,
        ));
        let tokens = TokenSource::new()?;
        let (stop_actor, actor_stop_rx) = oneshot::channel();
        let (handle, actor) = actor::spawn(
            core,
            clock,
            ActorSettings {
                view_refresh: std::time::Duration::from_millis(
                    config.service.view_refresh.as_millis(),
                ),
                command_queue: config.service.command_queue,
                access: access.clone(),
                hosts: config.hosts.clone(),
                audit: audit.clone(),
                dynamic_resources: config.dynamic_resources.clone(),
            },
            metrics.clone(),
            event_log,
            recovery,
            tokens,
            actor_stop_rx,
        );
        let reloader = Arc::new(Reloader::new(
            config.alloc_path.clone(),
            std::time::Duration::from_millis(config.service.alloc_min_age.as_millis()),
            handle.clone(),
            metrics.clone(),
        ));
        let state = ApiState::new(ApiParts {
            rm: handle.clone(),
            audit: audit.clone(),
            metrics: metrics.clone(),
            reloader: reloader.clone(),
            service: config.service.clone(),
            access,
            racks: Arc::new(RackResolver::new(
                config.topology.clone(),
                std::time::Duration::from_millis(config.service.topology_timeout.as_millis()),
            )),
            min_allocation: scheduler.min_allocation(),
            cluster_id: clock.cluster_timestamp(),
            conf: config.listing.clone(),
            log_levels: embedding.log_levels,
        });
        let (stop_background, _) = watch::channel(false);
        let tls = config.tls.clone();
        let mut service = Service {
            state,
            handle,
            reloader,
            metrics,
            actor: Some(actor),
            stop_actor,
            stop_background,
            background: Vec::new(),
            reload_interval: std::time::Duration::from_millis(
                config.service.alloc_reload_interval.as_millis(),
            ),
            tls,
        };
        service.spawn_background();
        Ok(service)
    }

    fn spawn_background(&mut self) {
        let stopped = |mut rx: watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        let reloader = self.reloader.clone();
        let interval = self.reload_interval;
        let rx = self.stop_background.subscribe();
        self.background
            .push(tokio::spawn(reloader.run(interval, stopped(rx))));
        let metrics = self.metrics.clone();
        let rx = self.stop_background.subscribe();
        self.background.push(tokio::spawn(async move {
            let mut ticks = tokio::time::interval(UPKEEP_INTERVAL);
            let stop = stopped(rx);
            tokio::pin!(stop);
            loop {
                tokio::select! {
                    () = &mut stop => return,
                    _ = ticks.tick() => metrics.run_upkeep(),
                }
            }
        }));
    }

    /// The router over this service (for tests, or to serve it yourself).
    pub fn router(&self) -> Router {
        router(self.state.clone())
    }

    /// The scheduler's handle.
    pub fn handle(&self) -> &RmHandle {
        &self.handle
    }

    /// The allocation file's reloader.
    pub fn reloader(&self) -> &Arc<Reloader> {
        &self.reloader
    }

    /// The metric registry.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Serves HTTP (HTTPS under HTTPS_ONLY) on `listener` until `shutdown`
    /// resolves, then stops everything.
    pub async fn serve(
        mut self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let (stop_http, stop_http_rx) = oneshot::channel::<()>();
        let stopped = async move {
            let _ = stop_http_rx.await;
        };
        if let Some(tls) = &self.tls {
            tracing::info!(certificate = %tls.certificate().display(), "serving HTTPS");
        }
        let listener = HttpListener::new(listener, self.tls.as_ref())?;
        let server = tokio::spawn(listener.serve(self.router(), stopped));
        let mut actor_died = false;
        if let Some(actor) = &mut self.actor {
            tokio::select! {
                () = shutdown => {}
                _ = actor => actor_died = true,
            }
        }
        if actor_died {
            self.actor = None;
        }
        tracing::info!("shutting down: finishing requests in flight");
        let _ = stop_http.send(());
        let served = server.await;
        self.stop().await;
        if actor_died {
            return Err(ServeError::SchedulerStopped);
        }
        match served {
            Ok(res) => res.map_err(ServeError::from),
            Err(_) => Err(ServeError::Http(std::io::Error::other(
                "the HTTP server task panicked",
            ))),
        }
    }

    /// Stops the background tasks and the scheduler (which flushes the event log).
    pub async fn stop(self) {
        let _ = self.stop_background.send(true);
        for task in self.background {
            let _ = task.await;
        }
        let _ = self.stop_actor.send(());
        if let Some(actor) = self.actor {
            let _ = actor.await;
        }
    }
}

/// A bound port, served as plain HTTP or, with key material, as HTTPS.
///
/// Made before the daemon starts anything else, so that a port that
/// cannot serve stops the start with nothing left running.
pub enum HttpListener {
    /// Plain HTTP.
    Plain(TcpListener),
    /// HTTPS: handshakes already under way in the listener's own task.
    Tls(TlsListener),
}

impl HttpListener {
    /// `listener` served with `tls` when given, else as plain HTTP.
    pub fn new(listener: TcpListener, tls: Option<&ServerTls>) -> std::io::Result<HttpListener> {
        Ok(match tls {
            None => HttpListener::Plain(listener),
            Some(tls) => HttpListener::Tls(TlsListener::new(listener, tls)?),
        })
    }

    /// Serves `router` until `stopped` resolves.
    pub async fn serve(
        self,
        router: Router,
        stopped: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        match self {
            HttpListener::Plain(tcp) => {
                let tcp = tcp.tap_io(|tcp| {
                    // Small request/answer exchanges: do not let Nagle hold them back.
                    let _ = tcp.set_nodelay(true);
                });
                serve_router(tcp, router, stopped).await
            }
            // `tap_io` only for axum's `ConnectInfo`, which it implements
            // for tapped listeners; the TLS listener sets `nodelay` itself.
            HttpListener::Tls(tls) => serve_router(tls.tap_io(|_| {}), router, stopped).await,
        }
    }
}

/// Serves `router` on `listener` until `stopped` resolves, with the
/// callers' addresses (`ConnectInfo<SocketAddr>`) for the audit log and
/// `/logLevel`. Shared by the RM and the node agents, over TCP or TLS.
async fn serve_router<L>(
    listener: L,
    router: Router,
    stopped: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: Listener<Addr = std::net::SocketAddr>,
    for<'a> std::net::SocketAddr:
        axum::extract::connect_info::Connected<axum::serve::IncomingStream<'a, L>>,
{
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(stopped)
    .into_future()
    .await
}

/// The state store in `dir`, what it holds, and `clock` with its time
/// origin moved back to the earliest time that holds: the core's clock
/// then starts above zero, and every submission, launch, finish and expiry
/// it is given back is a plain `Time`.
fn open_state_store(
    dir: &std::path::Path,
    config: &RmConfig,
    clock: Clock,
) -> Result<(Recovery, Clock), StartError> {
    let (store, stored, warnings) = StateStore::open(
        dir,
        config.service.state_store_max_completed_apps,
        clock.cluster_timestamp(),
    )?;
    for w in &warnings {
        tracing::warn!("{w}");
    }
    tracing::info!(path = %store.path().display(), apps = stored.apps.len(), ended = stored.ended.len(), "state store open");
    let clock = stored
        .earliest_ms()
        .map_or(clock, |ms| clock.reaching_back_to(ms));
    if clock.epoch_origin_ms() < clock.cluster_timestamp() {
        tracing::info!(
            origin_ms = clock.epoch_origin_ms(),
            "the scheduler's clock starts at {}: its origin is the earliest time the state store holds",
            clock.now()
        );
    }
    let (drain_store, drains, warnings) = DrainStore::open(dir)?;
    for w in &warnings {
        tracing::warn!("{w}");
    }
    tracing::info!(path = %drain_store.path().display(), drains = drains.len(), "state store of drains open");
    let recovery = Recovery {
        store: Some(store),
        stored,
        drain_store: Some(drain_store),
        drains,
    };
    Ok((recovery, clock))
}
