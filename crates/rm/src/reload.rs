//! Live reload of the allocation file, Hadoop-style: poll its modification
//! time every `weft.rm.alloc-file.reload-interval-ms` (10 s) and load a
//! change once it is at least `weft.rm.alloc-file.min-age-ms` (5 s) old, so
//! half-written files are not read; `refresh-queues` loads it at once.
//!
//! A file with problems changes nothing: the configuration in force stays,
//! every problem is logged with its line and column, the failure is counted
//! (`weft_alloc_file_reloads_total{outcome="failure"}`) and the last error is
//! shown on `/ws/v1/cluster/scheduler`. A failed version of the file is not
//! retried until the file changes again. Parsing is `weft-queue-tree`'s; this
//! module reads the file and hands the result to the actor.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;
use weft_queue_tree::AllocFileError;
use weft_queue_tree::alloc_file::parse_alloc_file;

use crate::actor::{RmError, RmHandle};
use crate::metrics::Metrics;

/// What the reloader has done so far, as `/ws/v1/cluster/scheduler` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReloadStatus {
    /// The file watched (`None`: the built-in configuration, not watched).
    pub path: Option<PathBuf>,
    /// Successful loads, the first one included.
    pub succeeded: u64,
    /// Failed loads.
    pub failed: u64,
    /// When the configuration in force was loaded (ms since the epoch).
    pub last_success: Option<u64>,
    /// When a load last failed.
    pub last_failure: Option<u64>,
    /// The last failure's problems, one per line; cleared by a success.
    pub last_error: Option<String>,
}

/// Why a reload did not happen.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The service runs on the built-in configuration.
    #[error(
        "the resource manager runs on its built-in configuration and has no allocation file to reload; start it with --conf DIR"
    )]
    NoFile,
    /// The file could not be read.
    #[error("cannot read the allocation file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file has problems; the old configuration stays in force.
    #[error("the allocation file {} was not loaded; the previous configuration stays in force:\n{error}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem.
        error: AllocFileError,
    },
    /// The scheduler did not take it.
    #[error(transparent)]
    Scheduler(#[from] RmError),
}

/// A successful reload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloaded {
    /// The warnings, `line:column: element: message`.
    pub warnings: Vec<String>,
}

struct Watch {
    /// Modification time of the version in force.
    loaded: Option<SystemTime>,
    /// Modification time of the last version that failed to load.
    failed: Option<SystemTime>,
}

/// Watches and reloads the allocation file.
pub struct Reloader {
    path: Option<PathBuf>,
    min_age: Duration,
    rm: RmHandle,
    metrics: Arc<Metrics>,
    watch: Mutex<Watch>,
    /// Serialises loads so a poll and an admin call never interleave.
    loading: tokio::sync::Mutex<()>,
    status: watch::Sender<ReloadStatus>,
}

fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Reloader {
    /// A reloader for `path` (none: nothing to watch), whose configuration in
    /// force was loaded from the file as it is now.
    pub fn new(
        path: Option<PathBuf>,
        min_age: Duration,
        rm: RmHandle,
        metrics: Arc<Metrics>,
    ) -> Reloader {
        let loaded = path.as_deref().and_then(modified);
        let now = epoch_ms(SystemTime::now());
        metrics.reload_success.increment(1);
        metrics.reload_last_success.set(now as f64 / 1000.0);
        let status = ReloadStatus {
            path: path.clone(),
            succeeded: 1,
            last_success: Some(now),
            ..ReloadStatus::default()
        };
        Reloader {
            path,
            min_age,
            rm,
            metrics,
            watch: Mutex::new(Watch {
                loaded,
                failed: None,
            }),
            loading: tokio::sync::Mutex::new(()),
            status: watch::channel(status).0,
        }
    }

    /// The reload state so far.
    pub fn status(&self) -> ReloadStatus {
        self.status.borrow().clone()
    }

    /// Loads the file now, whatever its age (the admin `refresh-queues`).
    pub async fn reload_now(&self) -> Result<Reloaded, ReloadError> {
        let Some(path) = self.path.clone() else {
            return Err(ReloadError::NoFile);
        };
        let _guard = self.loading.lock().await;
        let mtime = modified(&path);
        self.load(&path, mtime, SystemTime::now()).await
    }

    /// One poll at wall-clock time `now`: loads the file if it changed since
    /// the version in force (or the last failed one) and has been left alone
    /// for the minimum age. `None` when there was nothing to do.
    pub async fn poll(&self, now: SystemTime) -> Option<Result<Reloaded, ReloadError>> {
        let path = self.path.clone()?;
        let mtime = modified(&path)?;
        {
            let w = self.watch.lock().unwrap_or_else(|p| p.into_inner());
            if Some(mtime) == w.loaded || Some(mtime) == w.failed {
                return None;
            }
        }
        if now.duration_since(mtime).unwrap_or(Duration::ZERO) < self.min_age {
            return None;
        }
        let _guard = self.loading.lock().await;
        Some(self.load(&path, Some(mtime), now).await)
    }

    async fn load(
        &self,
        path: &Path,
        mtime: Option<SystemTime>,
        now: SystemTime,
    ) -> Result<Reloaded, ReloadError> {
        let owned = path.to_owned();
        let read = tokio::task::spawn_blocking(move || crate::config::read_config_file(&owned))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        let text = match read {
            Ok(t) => t,
            Err(source) => {
                let err = ReloadError::Read {
                    path: path.to_owned(),
                    source,
                };
                self.failed(mtime, now, err.to_string());
                tracing::error!(file = %path.display(), error = %err, "allocation file not reloaded");
                return Err(err);
            }
        };
        let loaded = match parse_alloc_file(&text) {
            Ok(loaded) => loaded,
            Err(error) => {
                for p in &error.problems {
                    tracing::error!(file = %path.display(), line = p.line, column = p.column, element = %p.element, code = p.kind.code(), "allocation file problem: {}", p.kind);
                }
                for w in &error.warnings {
                    tracing::warn!(file = %path.display(), line = w.line, column = w.column, element = %w.element, code = w.kind.code(), "allocation file warning: {}", w.kind);
                }
                tracing::error!(file = %path.display(), problems = error.problems.len(), "allocation file not reloaded; the previous configuration stays in force");
                self.failed(mtime, now, error.to_string());
                return Err(ReloadError::Invalid {
                    path: path.to_owned(),
                    error,
                });
            }
        };
        let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
        for w in &loaded.warnings {
            tracing::warn!(file = %path.display(), line = w.line, column = w.column, element = %w.element, code = w.kind.code(), "allocation file warning: {}", w.kind);
        }
        let applied = self.rm.replace_alloc_config(loaded.config).await?;
        for q in &applied.pending_type_changes {
            tracing::info!(queue = %q, "queue changes between leaf and parent once it is empty");
        }
        for q in &applied.deferred_queues {
            tracing::info!(queue = %q, "queue will be created once its parent leaf is empty");
        }
        {
            let mut w = self.watch.lock().unwrap_or_else(|p| p.into_inner());
            w.loaded = mtime;
            w.failed = None;
        }
        let at = epoch_ms(now);
        self.metrics.reload_success.increment(1);
        self.metrics.reload_last_success.set(at as f64 / 1000.0);
        self.status.send_modify(|s| {
            s.succeeded += 1;
            s.last_success = Some(at);
            s.last_error = None;
        });
        tracing::info!(file = %path.display(), warnings = warnings.len(), "allocation file reloaded");
        Ok(Reloaded { warnings })
    }

    fn failed(&self, mtime: Option<SystemTime>, now: SystemTime, error: String) {
        self.watch.lock().unwrap_or_else(|p| p.into_inner()).failed = mtime;
        self.metrics.reload_failure.increment(1);
        let at = epoch_ms(now);
        self.metrics.reload_last_failure.set(at as f64 / 1000.0);
        self.status.send_modify(|s| {
            s.failed += 1;
            s.last_failure = Some(at);
            s.last_error = Some(error);
        });
    }

    /// Polls every `interval` until `shutdown` resolves.
    pub async fn run(
        self: Arc<Self>,
        interval: Duration,
        shutdown: impl std::future::Future<Output = ()>,
    ) {
        if self.path.is_none() {
            return;
        }
        tokio::pin!(shutdown);
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                _ = ticks.tick() => {
                    // Outcomes are logged and recorded by `load`.
                    let _ = self.poll(SystemTime::now()).await;
                }
            }
        }
    }
}
