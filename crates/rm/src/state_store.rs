//! The RM's state store (`weft.rm.state-store.dir`, off by default): what
//! it must remember across a restart to take its applications back, as
//! append-only JSON lines in `<dir>/apps.jsonl` — a submission (with the
//! queue placement chose, the AM's launch context, the app's ACLs, the
//! lifetime expiry and the submission time), an app's first container allocated, an AM
//! container allocated, an attempt's AM token (so that a running AM keeps
//! working across a restart, as YARN keeps its AMRMToken master key; the
//! files are therefore readable by their owner only), an attempt that
//! failed, a new lifetime expiry, and
//! an app that ended, with everything its report shows from then on. Times
//! are wall-clock milliseconds, since the core's clock starts again with
//! every run. The graceful decommissions under way go beside it in
//! `<dir>/nodes.jsonl` (`drains`).
//!
//! At start the file is read, folded into the apps still alive and the
//! newest ended ones (`yarn.resourcemanager.state-store.max-completed-applications`
//! of them), and rewritten with only those; while the RM runs it is
//! rewritten so again whenever enough was appended, on a thread of its own
//! rather than the actor's task (`lines`), so it never grows far beyond
//! them. The actor feeds each to
//! the core (`Input::EndedAppRecovered`, `Input::AppRecovered`), with a
//! clock whose origin reaches back to the earliest time they hold.
//! Containers are not stored: nodes bring theirs back when they
//! re-register, as YARN's work-preserving recovery does. Asks are not
//! stored either.
//!
//! Each record is one `write` on a file opened for appending, with no
//! `fsync`: the store survives the RM being killed, not the machine losing
//! power. A line that does not parse (a torn last write, even one torn
//! inside a character) or cannot be applied is skipped with a warning
//! rather than stopping the RM, and appended to `apps.jsonl.skipped` before
//! the rewrite, which would otherwise delete it for good. Both files follow
//! these rules through the same code (`lines`); what their records mean is
//! theirs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use weft_core::{AppRecord, AppState, EndedApp, FinalStatus, RecoveredApp, Submission};
use weft_model::{AppId, AppPriority, AttemptId, ContainerId, QueuePath};
use weft_queue_tree::Acl;

use crate::access::AppAcls;
use crate::clock::Clock;
use crate::dto::ResourceDto;
use crate::dto::apps::final_status_name;
use crate::token::{AmToken, AttemptToken};
use crate::view::{AmPlacement, AppExtra, AttemptHistory, EndedAttempt};

pub(crate) mod drains;
mod lines;

use lines::{Fold, JsonLines};

/// The file in the state directory.
pub const STATE_FILE_NAME: &str = "apps.jsonl";

/// Where lines skipped at start are kept, beside the state file: the
/// compaction that follows would otherwise delete them for good.
pub const SKIPPED_FILE_NAME: &str = "apps.jsonl.skipped";

/// Why the state store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateStoreError {
    /// The directory or file could not be created, read or rewritten.
    #[error("state store {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// An application the store says was alive, with what recovering it needs.
#[derive(Clone, Debug)]
pub struct StoredApp {
    /// What the core takes back (its times are left for the actor to set
    /// on its own clock, from the fields below).
    pub recovered: RecoveredApp,
    /// What the shell keeps beside it (launch context, unmanaged flag).
    pub extra: AppExtra,
    /// When it is killed for its lifetime, in wall-clock milliseconds since
    /// the epoch.
    pub lifetime_expiry_ms: Option<u64>,
    /// When it was submitted (ms since the epoch): the RM's start for an
    /// app from a file written before submission times were kept.
    pub submitted_ms: u64,
    /// When its first container was allocated (ms since the epoch), if it was.
    pub launched_ms: Option<u64>,
    /// Its attempts before the current one, and when that one began.
    history: StoredHistory,
    /// The AM token of the attempt it was at, if one was drawn.
    pub am_token: Option<AttemptToken>,
}

/// An application the store says had ended, as it ended.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredEndedApp {
    app: AppId,
    /// As the line has it, to write it back as it was.
    report: EndedReport,
    /// What the report's text fields mean, read once.
    queue: QueuePath,
    state: AppState,
    final_status: Option<FinalStatus>,
    /// Its attempts, read once.
    attempts: StoredHistory,
}

/// What the store held at start: the apps alive, in the order they were
/// submitted, and the newest ended ones, in the order they ended.
#[derive(Clone, Debug, Default)]
pub struct Stored {
    /// The live apps.
    pub apps: Vec<StoredApp>,
    /// The ended apps.
    pub ended: Vec<StoredEndedApp>,
}

/// The open store: the file it appends to, and what its records fold into
/// (the live apps: records about others are not written).
#[derive(Debug)]
pub struct StateStore {
    lines: JsonLines<KeptApps>,
}

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "camelCase")]
#[expect(
    clippy::large_enum_variant,
    reason = "a compaction's records are nearly all submissions, so boxing their fields would only add an allocation to each"
)]
enum Record {
    /// An accepted submission, placed in `queue`.
    #[serde(rename_all = "camelCase")]
    Submitted {
        app: String,
        user: String,
        name: String,
        app_type: String,
        #[serde(default)]
        tags: Vec<String>,
        queue: String,
        #[serde(default)]
        priority: i32,
        /// `None`: an unmanaged AM.
        #[serde(default)]
        am_resource: Option<ResourceDto>,
        /// Shared with the service's own copy and the store's fold, so a
        /// live app's launch context is held once however many keep it.
        #[serde(default)]
        launch_context: Option<Arc<serde_json::Value>>,
        /// Written by compaction only: the attempt the app was at.
        #[serde(default = "first_attempt")]
        attempt: u32,
        /// Written by compaction only: that attempt's AM container was allocated.
        #[serde(default)]
        am_container_allocated: bool,
        /// When it is killed for its lifetime (ms since the epoch); absent
        /// without a lifetime, and in files written before lifetimes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lifetime_expiry: Option<u64>,
        /// When it was submitted (ms since the epoch); absent in files
        /// written before submission times were kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        submitted_ms: Option<u64>,
        /// Written by compaction only: when its first container was allocated.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        launched_ms: Option<u64>,
        /// The app's own ACLs; absent when it has none, and in files
        /// written before them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        application_acls: Option<StoredAcls>,
        /// The app's own `max-app-attempts`; absent when it gave none, and
        /// in files written before it was kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_attempts: Option<u32>,
        /// Written by compaction only: when its attempt began, if not with
        /// the submission.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt_started_ms: Option<u64>,
        /// Written by compaction only: its earlier attempts, oldest first.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        earlier_attempts: Vec<StoredAttempt>,
        /// Written by compaction only: its current attempt's AM token;
        /// absent before one was drawn, and in files written before tokens.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        am_token: Option<StoredAmToken>,
    },
    /// An attempt's AM token was drawn (the id names the attempt).
    AmToken { attempt: String, token: AmToken },
    /// The app was given a new lifetime expiry (ms since the epoch).
    LifetimeSet { app: String, expiry: u64 },
    /// The app's priority was changed (to the priority in force).
    PrioritySet { app: String, priority: i32 },
    /// The app's first container was allocated (ms since the epoch).
    #[serde(rename_all = "camelCase")]
    Launched { app: String, at_ms: u64 },
    /// The AM container of an attempt was allocated (the id names the attempt).
    AmAllocated { container: String },
    /// An attempt failed; the next one starts. When (ms since the epoch),
    /// where its AM ran and why are absent in files written before
    /// attempts were kept.
    #[serde(rename_all = "camelCase")]
    AttemptFailed {
        app: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        am: Option<StoredAm>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diagnostics: Option<String>,
    },
    /// The application ended (any final state), with what its report
    /// shows; without it (files written before ended apps were kept, or
    /// an app the core would not take back), it is forgotten.
    Ended {
        app: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        report: Option<Box<EndedReport>>,
    },
}

/// An ended app's report, as the `report` of an `ended` line: everything
/// the REST API, the CLI and the web UI show of a finished app, so the line
/// stands alone (compaction keeps only it). Times are ms since the epoch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EndedReport {
    user: String,
    name: String,
    app_type: String,
    #[serde(default)]
    tags: Vec<String>,
    queue: String,
    /// `FINISHED`, `FAILED`, `KILLED` or `REJECTED`.
    state: String,
    /// `SUCCEEDED`, `FAILED`, `KILLED`, or absent (`UNDEFINED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_status: Option<String>,
    #[serde(default)]
    diagnostics: String,
    #[serde(default)]
    priority: i32,
    /// `None`: an unmanaged AM.
    #[serde(default)]
    am_resource: Option<ResourceDto>,
    submitted_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    launched_ms: Option<u64>,
    finished_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lifetime_expiry_ms: Option<u64>,
    #[serde(default = "first_attempt")]
    attempt: u32,
    #[serde(default)]
    progress: f32,
    #[serde(default)]
    memory_seconds: u64,
    #[serde(default)]
    vcore_seconds: u64,
    #[serde(default)]
    preempted_containers: u64,
    #[serde(default)]
    preempted_am_containers: u64,
    #[serde(default)]
    preempted_resource: ResourceDto,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tracking_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    am_host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    am_rpc_port: Option<u16>,
    /// Its own ACLs, which still decide who sees its whole report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    application_acls: Option<StoredAcls>,
    /// When its last attempt began, if not with the submission; absent in
    /// files written before attempts were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    attempt_started_ms: Option<u64>,
    /// Its last attempt's AM container and node; absent without one, and
    /// in files written before attempts were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    am: Option<StoredAm>,
    /// What its last AM container's node said when it ended, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    am_exit: Option<String>,
    /// The attempts before its last (each failed), oldest first; absent
    /// in files written before attempts were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    earlier_attempts: Vec<StoredAttempt>,
}

/// An attempt's AM token, on a compacted `submitted` line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct StoredAmToken {
    attempt: u32,
    token: AmToken,
}

/// Where an attempt's AM container ran, by ids as text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredAm {
    container: String,
    node: String,
    #[serde(default)]
    node_http_address: String,
}

/// An attempt that failed and was followed by another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredAttempt {
    attempt: u32,
    /// Absent for the first, which began with the submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    started_ms: Option<u64>,
    finished_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    am: Option<StoredAm>,
    #[serde(default)]
    diagnostics: String,
}

impl StoredAm {
    fn of(am: &AmPlacement) -> StoredAm {
        StoredAm {
            container: am.container.to_string(),
            node: am.node.to_string(),
            node_http_address: am.node_http_address.clone(),
        }
    }

    /// The placement, or what is wrong with the ids.
    fn placement(&self) -> Result<AmPlacement, String> {
        Ok(AmPlacement {
            container: self
                .container
                .parse()
                .map_err(|e: weft_model::IdParseError| format!("am.container: {e}"))?,
            node: self
                .node
                .parse()
                .map_err(|e: weft_model::IdParseError| format!("am.node: {e}"))?,
            node_http_address: self.node_http_address.clone(),
        })
    }
}

/// An app's ACLs in Hadoop's text form, by YARN's names; one not stored is nobody's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct StoredAcls {
    #[serde(rename = "VIEW_APP", default, skip_serializing_if = "Option::is_none")]
    view: Option<String>,
    #[serde(
        rename = "MODIFY_APP",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    modify: Option<String>,
}

impl StoredAcls {
    /// What to store of `acls`: nothing when they name nobody.
    fn of(acls: &AppAcls) -> Option<StoredAcls> {
        let text = |acl: &Acl| (!acl.is_nobody()).then(|| acl.to_string());
        (!acls.is_empty()).then(|| StoredAcls {
            view: text(&acls.view),
            modify: text(&acls.modify),
        })
    }

    fn acls(&self) -> AppAcls {
        let acl = |text: &Option<String>| text.as_deref().map_or_else(Acl::nobody, Acl::parse);
        AppAcls {
            view: acl(&self.view),
            modify: acl(&self.modify),
        }
    }
}

fn first_attempt() -> u32 {
    1
}

/// The store's name of a final state (Weft's, which tells a rejected app
/// from a failed one, where YARN's names both `FAILED`); `None` for a
/// state that is not final.
fn final_state_name(state: AppState) -> Option<&'static str> {
    match state {
        AppState::Finished => Some("FINISHED"),
        AppState::Failed => Some("FAILED"),
        AppState::Killed => Some("KILLED"),
        AppState::Rejected => Some("REJECTED"),
        AppState::Accepted | AppState::WaitingForLimit | AppState::Running => None,
    }
}

fn parse_state(text: &str) -> Result<AppState, String> {
    match text {
        "FINISHED" => Ok(AppState::Finished),
        "FAILED" => Ok(AppState::Failed),
        "KILLED" => Ok(AppState::Killed),
        "REJECTED" => Ok(AppState::Rejected),
        _ => Err(format!(
            "state {text:?} is not a final state (FINISHED, FAILED, KILLED or REJECTED)"
        )),
    }
}

fn parse_final_status(text: Option<&str>) -> Result<Option<FinalStatus>, String> {
    match text {
        None | Some("UNDEFINED") => Ok(None),
        Some("SUCCEEDED") => Ok(Some(FinalStatus::Succeeded)),
        Some("FAILED") => Ok(Some(FinalStatus::Failed)),
        Some("KILLED") => Ok(Some(FinalStatus::Killed)),
        Some(other) => Err(format!(
            "finalStatus {other:?} is not SUCCEEDED, FAILED, KILLED or UNDEFINED"
        )),
    }
}

impl StateStore {
    /// Opens (creating if needed) the store in `dir` for an RM started at
    /// `started_ms` (ms since the epoch): the apps it says are alive and
    /// the newest `max_ended` of those that ended, warnings about lines it
    /// skipped, and the store, whose file now holds only those. A live app
    /// stored without its submission time (by an older Weft) is taken as
    /// submitted at `started_ms`, and the file says so from now on, so that
    /// every later start shows the same time.
    pub fn open(
        dir: &Path,
        max_ended: usize,
        started_ms: u64,
    ) -> Result<(StateStore, Stored, Vec<String>), StateStoreError> {
        let (lines, warnings) = JsonLines::open(
            dir,
            STATE_FILE_NAME,
            "applications submitted from now on will not survive a restart",
            KeptApps::new(max_ended, started_ms),
        )?;
        let stored = lines.folded().stored();
        Ok((StateStore { lines }, stored, warnings))
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        self.lines.path()
    }

    /// Finishes a compaction of the file whose thread is done (see
    /// `lines`): the actor calls it on each wake-up, so that one finishes
    /// while nothing is appended.
    pub(crate) fn poll(&mut self) {
        self.lines.poll();
    }

    /// Whether `app` is stored and has not ended.
    fn is_live(&self, app: AppId) -> bool {
        self.lines.folded().apps.contains_key(&app)
    }

    /// An accepted submission at `submitted_ms`, placed in `queue`, killed
    /// at `lifetime_expiry` (ms since the epoch) if it has a lifetime.
    pub(crate) fn submitted(
        &mut self,
        sub: &Submission,
        queue: &QueuePath,
        extra: &AppExtra,
        lifetime_expiry: Option<u64>,
        submitted_ms: u64,
    ) {
        let record = Record::Submitted {
            app: sub.app.to_string(),
            user: sub.user.clone(),
            name: sub.name.clone(),
            app_type: sub.app_type.clone(),
            tags: sub.tags.clone(),
            queue: queue.to_string(),
            priority: sub.priority.0,
            am_resource: sub.am_resource.map(ResourceDto::from_resource),
            launch_context: extra.launch_context.clone(),
            attempt: 1,
            am_container_allocated: false,
            lifetime_expiry,
            submitted_ms: Some(submitted_ms),
            launched_ms: None,
            application_acls: StoredAcls::of(&extra.acls),
            max_attempts: sub.max_attempts,
            attempt_started_ms: None,
            earlier_attempts: Vec::new(),
            am_token: None,
        };
        self.lines.append(record);
    }

    /// The AM token of `attempt` was drawn.
    pub(crate) fn am_token_issued(&mut self, attempt: AttemptId, token: &AmToken) {
        if self.is_live(attempt.app) {
            self.lines.append(Record::AmToken {
                attempt: attempt.to_string(),
                token: token.clone(),
            });
        }
    }

    /// The app was given a new lifetime expiry (ms since the epoch).
    pub(crate) fn lifetime_set(&mut self, app: AppId, expiry: u64) {
        if self.is_live(app) {
            self.lines.append(Record::LifetimeSet {
                app: app.to_string(),
                expiry,
            });
        }
    }

    /// The app's priority in force is now `priority`.
    pub(crate) fn priority_set(&mut self, app: AppId, priority: AppPriority) {
        if self.is_live(app) {
            self.lines.append(Record::PrioritySet {
                app: app.to_string(),
                priority: priority.0,
            });
        }
    }

    /// A container of `app` was allocated at `at_ms`: written for its first
    /// only, which is when the app was launched.
    pub(crate) fn container_allocated(&mut self, app: AppId, at_ms: u64) {
        let unlaunched = self
            .lines
            .folded()
            .apps
            .get(&app)
            .is_some_and(|a| a.launched_ms.is_none());
        if unlaunched {
            self.lines.append(Record::Launched {
                app: app.to_string(),
                at_ms,
            });
        }
    }

    /// An attempt's AM container was allocated.
    pub(crate) fn am_allocated(&mut self, container: ContainerId) {
        if self.is_live(container.app()) {
            self.lines.append(Record::AmAllocated {
                container: container.to_string(),
            });
        }
    }

    /// An attempt failed and the next one starts.
    pub(crate) fn attempt_failed(
        &mut self,
        app: AppId,
        at_ms: u64,
        am: Option<&AmPlacement>,
        diagnostics: &str,
    ) {
        if self.is_live(app) {
            self.lines.append(Record::AttemptFailed {
                app: app.to_string(),
                at_ms: Some(at_ms),
                am: am.map(StoredAm::of),
                diagnostics: Some(diagnostics.to_owned()),
            });
        }
    }

    /// The app ended, with its final `record` (and the shell's `extra`)
    /// if the core still has it; `clock` turns its times into wall-clock
    /// ones. Without the record (the core forgot it at once, having no
    /// room in its history), the next start forgets the app.
    pub(crate) fn ended(
        &mut self,
        app: AppId,
        record: Option<&AppRecord>,
        extra: Option<&AppExtra>,
        clock: &Clock,
    ) {
        let report = record.and_then(|r| ended_report(r, extra, clock));
        self.end(app, report.map(Box::new));
    }

    /// The app is not to be taken back again (the core refused it).
    pub(crate) fn forget(&mut self, app: AppId) {
        self.end(app, None);
    }

    fn end(&mut self, app: AppId, report: Option<Box<EndedReport>>) {
        if self.is_live(app) {
            self.lines.append(Record::Ended {
                app: app.to_string(),
                report,
            });
        }
    }
}

/// What the store keeps of an ended app; `None` if `r` has not ended.
fn ended_report(r: &AppRecord, extra: Option<&AppExtra>, clock: &Clock) -> Option<EndedReport> {
    let state = final_state_name(r.state)?;
    let finished = r.finished?;
    let ms = |t| clock.epoch_ms(t);
    Some(EndedReport {
        user: r.user.clone(),
        name: r.name.clone(),
        app_type: r.app_type.clone(),
        tags: r.tags.clone(),
        queue: r.queue.to_string(),
        state: state.to_owned(),
        final_status: r
            .final_status
            .map(|s| final_status_name(Some(s)).to_owned()),
        diagnostics: r.diagnostics.clone(),
        priority: r.priority.0,
        am_resource: r.am_resource.map(ResourceDto::from_resource),
        submitted_ms: ms(r.submitted),
        launched_ms: r.launched.map(ms),
        finished_ms: ms(finished),
        lifetime_expiry_ms: r.lifetime_expiry.map(ms),
        attempt: r.attempt.attempt,
        progress: r.progress,
        memory_seconds: r.memory_mb_seconds,
        vcore_seconds: r.vcore_seconds,
        preempted_containers: r.preempted_containers,
        preempted_am_containers: r.preempted_am_containers,
        preempted_resource: ResourceDto::from_resource(r.preempted_resource),
        tracking_url: extra.and_then(|e| e.tracking_url.clone()),
        am_host: extra.and_then(|e| e.am_host.clone()),
        am_rpc_port: extra.and_then(|e| e.am_rpc_port),
        application_acls: extra.and_then(|e| StoredAcls::of(&e.acls)),
        attempt_started_ms: extra.and_then(|e| e.attempts.current_started.map(ms)),
        am: extra
            .and_then(|e| e.attempts.current_am.as_ref())
            .map(StoredAm::of),
        am_exit: extra.and_then(|e| e.attempts.current_am_exit.clone()),
        earlier_attempts: extra.map_or_else(Vec::new, |e| {
            e.attempts
                .earlier
                .iter()
                .map(|a| StoredAttempt {
                    attempt: a.attempt.attempt,
                    started_ms: a.started.map(ms),
                    finished_ms: ms(a.finished),
                    am: a.am.as_ref().map(StoredAm::of),
                    diagnostics: a.diagnostics.clone(),
                })
                .collect()
        }),
    })
}

impl Stored {
    /// The earliest wall-clock time (ms since the epoch) the apps hold:
    /// what the core's clock must reach back to so that each is a `Time`.
    pub fn earliest_ms(&self) -> Option<u64> {
        let live = self.apps.iter().flat_map(|a| {
            [Some(a.submitted_ms), a.launched_ms, a.lifetime_expiry_ms]
                .into_iter()
                .flatten()
        });
        let ended = self.ended.iter().flat_map(|e| {
            let r = &e.report;
            [
                Some(r.submitted_ms),
                r.launched_ms,
                Some(r.finished_ms),
                r.lifetime_expiry_ms,
            ]
            .into_iter()
            .flatten()
        });
        live.chain(ended).min()
    }
}

impl StoredApp {
    /// Its attempts before the current one, and when that one began, their
    /// times on `clock`, for the shell's books.
    pub fn attempts_on(&self, clock: &Clock) -> AttemptHistory {
        self.history.recovered_on(clock)
    }

    /// What the core takes back, its times on `clock`.
    pub fn recovered_on(&self, clock: &Clock) -> RecoveredApp {
        let time = |ms| clock.time_of_epoch_ms(ms);
        RecoveredApp {
            lifetime_expiry: self.lifetime_expiry_ms.map(time),
            submitted: Some(time(self.submitted_ms)),
            launched: self.launched_ms.map(time),
            ..self.recovered.clone()
        }
    }
}

impl StoredEndedApp {
    /// The app.
    pub fn app(&self) -> AppId {
        self.app
    }

    /// What the core takes back, its times on `clock`, and what the shell
    /// keeps beside it.
    pub fn recovered_on(&self, clock: &Clock) -> (EndedApp, AppExtra) {
        let r = &self.report;
        let time = |ms| clock.time_of_epoch_ms(ms);
        let ended = EndedApp {
            app: self.app,
            user: r.user.clone(),
            name: r.name.clone(),
            app_type: r.app_type.clone(),
            tags: r.tags.clone(),
            queue: self.queue.clone(),
            state: self.state,
            final_status: self.final_status,
            diagnostics: r.diagnostics.clone(),
            priority: AppPriority(r.priority),
            am_resource: r.am_resource.map(ResourceDto::to_resource),
            submitted: time(r.submitted_ms),
            launched: r.launched_ms.map(time),
            finished: time(r.finished_ms),
            lifetime_expiry: r.lifetime_expiry_ms.map(time),
            attempt: r.attempt,
            progress: r.progress,
            memory_mb_seconds: r.memory_seconds,
            vcore_seconds: r.vcore_seconds,
            preempted_containers: r.preempted_containers,
            preempted_am_containers: r.preempted_am_containers,
            preempted_resource: r.preempted_resource.to_resource(),
        };
        let extra = AppExtra {
            unmanaged: r.am_resource.is_none(),
            tracking_url: r.tracking_url.clone(),
            am_host: r.am_host.clone(),
            am_rpc_port: r.am_rpc_port,
            acls: r
                .application_acls
                .as_ref()
                .map(StoredAcls::acls)
                .unwrap_or_default(),
            attempts: self.attempts.recovered_on(clock),
            ..AppExtra::default()
        };
        (ended, extra)
    }
}

/// What the file folds into: the apps alive at its end, in the order they
/// were submitted, and the newest ended ones, in the order they ended.
#[derive(Debug)]
struct KeptApps {
    apps: BTreeMap<AppId, StoredApp>,
    order: Vec<AppId>,
    /// Ended apps by id, each with its place in `ended_order`.
    ended: BTreeMap<AppId, (u64, StoredEndedApp)>,
    /// Ended apps by the order their lines came in; the first is dropped
    /// first once there are more than `max_ended`.
    ended_order: BTreeMap<u64, AppId>,
    next_ended: u64,
    max_ended: usize,
    /// When the RM started: the submission time of an app stored without one.
    started_ms: u64,
}

impl KeptApps {
    fn new(max_ended: usize, started_ms: u64) -> KeptApps {
        KeptApps {
            apps: BTreeMap::new(),
            order: Vec::new(),
            ended: BTreeMap::new(),
            ended_order: BTreeMap::new(),
            next_ended: 0,
            max_ended,
            started_ms,
        }
    }

    fn stored(&self) -> Stored {
        Stored {
            apps: self
                .order
                .iter()
                .filter_map(|id| self.apps.get(id))
                .cloned()
                .collect(),
            ended: self
                .ended_order
                .values()
                .filter_map(|id| self.ended.get(id).map(|(_, e)| e.clone()))
                .collect(),
        }
    }

    fn forget_ended(&mut self, id: AppId) {
        if let Some((at, _)) = self.ended.remove(&id) {
            self.ended_order.remove(&at);
        }
    }

    fn keep_ended(&mut self, ended: StoredEndedApp) {
        let id = ended.app;
        self.forget_ended(id);
        let at = self.next_ended;
        self.next_ended += 1;
        self.ended.insert(id, (at, ended));
        self.ended_order.insert(at, id);
        while self.ended.len() > self.max_ended {
            let Some((_, oldest)) = self.ended_order.pop_first() else {
                break;
            };
            self.ended.remove(&oldest);
        }
    }
}

impl Fold for KeptApps {
    type Record = Record;

    fn apply(&mut self, record: Record) -> Result<(), String> {
        apply(self, record)
    }

    fn compacted(&self) -> Vec<Record> {
        let live = self
            .order
            .iter()
            .filter_map(|id| self.apps.get(id))
            .map(compacted);
        let ended = self
            .ended_order
            .values()
            .filter_map(|id| self.ended.get(id))
            .map(|(_, e)| Record::Ended {
                app: e.app.to_string(),
                report: Some(Box::new(e.report.clone())),
            });
        live.chain(ended).collect()
    }
}

/// `attempt` if an attempt after it can still be numbered: the core counts
/// attempts on by one, so the last number would leave it nowhere to go.
fn usable_attempt(attempt: u32) -> Result<u32, String> {
    if attempt == u32::MAX {
        return Err(format!(
            "attempt {attempt} leaves no number for a next attempt"
        ));
    }
    Ok(attempt)
}

fn apply(kept: &mut KeptApps, record: Record) -> Result<(), String> {
    let parse_app = |text: &str| -> Result<AppId, String> {
        text.parse()
            .map_err(|e: weft_model::IdParseError| e.to_string())
    };
    match record {
        Record::Submitted {
            app,
            user,
            name,
            app_type,
            tags,
            queue,
            priority,
            am_resource,
            launch_context,
            attempt,
            am_container_allocated,
            lifetime_expiry,
            submitted_ms,
            launched_ms,
            application_acls,
            max_attempts,
            attempt_started_ms,
            earlier_attempts,
            am_token,
        } => {
            let id = parse_app(&app)?;
            let history = read_attempts(id, attempt_started_ms, None, &earlier_attempts)?;
            let queue = QueuePath::parse(&queue).map_err(|e| e.to_string())?;
            let unmanaged = am_resource.is_none();
            let stored = StoredApp {
                recovered: RecoveredApp {
                    submission: Submission {
                        app: id,
                        user,
                        groups: Vec::new(),
                        queue: Some(queue.to_string()),
                        priority: AppPriority(priority),
                        am_resource: am_resource.map(ResourceDto::to_resource),
                        name,
                        app_type,
                        tags,
                        lifetime: None,
                        max_attempts,
                    },
                    queue,
                    attempt: usable_attempt(attempt)?.max(1),
                    am_container_allocated,
                    lifetime_expiry: None,
                    submitted: None,
                    launched: None,
                },
                extra: AppExtra {
                    launch_context,
                    unmanaged,
                    acls: application_acls.map(|a| a.acls()).unwrap_or_default(),
                    ..AppExtra::default()
                },
                lifetime_expiry_ms: lifetime_expiry,
                submitted_ms: submitted_ms.unwrap_or(kept.started_ms),
                launched_ms,
                history,
                am_token: am_token.map(|t| AttemptToken {
                    attempt: AttemptId::new(id, t.attempt),
                    token: t.token,
                }),
            };
            kept.forget_ended(id);
            if kept.apps.insert(id, stored).is_none() {
                kept.order.push(id);
            }
        }
        Record::Launched { app, at_ms } => {
            if let Some(app) = kept.apps.get_mut(&parse_app(&app)?) {
                app.launched_ms.get_or_insert(at_ms);
            }
        }
        Record::AmAllocated { container } => {
            let c: ContainerId = container
                .parse()
                .map_err(|e: weft_model::IdParseError| e.to_string())?;
            if let Some(app) = kept.apps.get_mut(&c.app()) {
                app.recovered.attempt = usable_attempt(c.attempt.attempt)?;
                app.recovered.am_container_allocated = true;
            }
        }
        Record::AmToken { attempt, token } => {
            let attempt: AttemptId = attempt
                .parse()
                .map_err(|e: weft_model::IdParseError| e.to_string())?;
            if let Some(app) = kept.apps.get_mut(&attempt.app) {
                app.am_token = Some(AttemptToken { attempt, token });
            }
        }
        Record::AttemptFailed {
            app,
            at_ms,
            am,
            diagnostics,
        } => {
            let id = parse_app(&app)?;
            if let Some(app) = kept.apps.get_mut(&id) {
                let failed = app.recovered.attempt;
                // The failed attempt's token is of no use to the next.
                app.am_token = None;
                app.recovered.attempt = usable_attempt(failed.saturating_add(1))?;
                app.recovered.am_container_allocated = false;
                let am = am.as_ref().map(StoredAm::placement).transpose()?;
                let history = &mut app.history;
                // A line from before attempts were kept says only that
                // one failed: the history from then on is unknown.
                match at_ms {
                    Some(at_ms) => {
                        history.earlier.push(EarlierAttemptMs {
                            attempt: AttemptId::new(id, failed),
                            started_ms: history.current_started_ms.take(),
                            finished_ms: at_ms,
                            am,
                            diagnostics: diagnostics.unwrap_or_default(),
                        });
                        if history.earlier.len() > MAX_STORED_ATTEMPTS {
                            history.earlier.remove(0);
                        }
                        history.current_started_ms = Some(at_ms);
                    }
                    None => *history = StoredHistory::default(),
                }
            }
        }
        Record::LifetimeSet { app, expiry } => {
            if let Some(app) = kept.apps.get_mut(&parse_app(&app)?) {
                app.lifetime_expiry_ms = Some(expiry);
            }
        }
        Record::PrioritySet { app, priority } => {
            if let Some(app) = kept.apps.get_mut(&parse_app(&app)?) {
                app.recovered.submission.priority = AppPriority(priority);
            }
        }
        Record::Ended { app, report } => {
            let id = parse_app(&app)?;
            // Read before anything changes: a line that cannot be used is
            // kept aside whole, and the app stays as it was.
            let ended = report.map(|r| read_report(id, *r)).transpose()?;
            if kept.apps.remove(&id).is_some() {
                kept.order.retain(|a| *a != id);
            }
            match ended {
                Some(ended) => kept.keep_ended(ended),
                None => kept.forget_ended(id),
            }
        }
    }
    Ok(())
}

/// `app`'s report read, or why it cannot be taken back.
fn read_report(app: AppId, report: EndedReport) -> Result<StoredEndedApp, String> {
    let queue = QueuePath::parse(&report.queue).map_err(|e| e.to_string())?;
    let state = parse_state(&report.state)?;
    let final_status = parse_final_status(report.final_status.as_deref())?;
    let mut attempts = read_attempts(
        app,
        report.attempt_started_ms,
        report.am.as_ref(),
        &report.earlier_attempts,
    )?;
    attempts.current_am_exit.clone_from(&report.am_exit);
    Ok(StoredEndedApp {
        app,
        report,
        queue,
        state,
        final_status,
        attempts,
    })
}

/// The attempts of `app`'s report, in wall-clock milliseconds, or what
/// is wrong with them.
fn read_attempts(
    app: AppId,
    current_started_ms: Option<u64>,
    current_am: Option<&StoredAm>,
    earlier: &[StoredAttempt],
) -> Result<StoredHistory, String> {
    let current_am = current_am.map(StoredAm::placement).transpose()?;
    let earlier = earlier
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let am =
                a.am.as_ref()
                    .map(StoredAm::placement)
                    .transpose()
                    .map_err(|e| format!("earlierAttempts[{i}].{e}"))?;
            Ok(EarlierAttemptMs {
                attempt: AttemptId::new(app, a.attempt),
                started_ms: a.started_ms,
                finished_ms: a.finished_ms,
                am,
                diagnostics: a.diagnostics.clone(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(StoredHistory {
        current_started_ms,
        current_am,
        current_am_exit: None,
        earlier,
    })
}

/// An ended app's attempts as its line gives them, times in wall-clock ms.
#[derive(Clone, Debug, Default, PartialEq)]
struct StoredHistory {
    current_started_ms: Option<u64>,
    current_am: Option<AmPlacement>,
    current_am_exit: Option<String>,
    earlier: Vec<EarlierAttemptMs>,
}

/// An earlier attempt, times in wall-clock ms.
#[derive(Clone, Debug, PartialEq)]
struct EarlierAttemptMs {
    attempt: AttemptId,
    started_ms: Option<u64>,
    finished_ms: u64,
    am: Option<AmPlacement>,
    diagnostics: String,
}

/// Earlier attempts the store keeps per live app at most: attempts that
/// do not count against an app (its AM preempted, its node lost) may go on
/// without limit, and the file must not.
const MAX_STORED_ATTEMPTS: usize = 100;

impl StoredHistory {
    /// The earlier attempts as a line writes them.
    fn stored_earlier(&self) -> Vec<StoredAttempt> {
        self.earlier
            .iter()
            .map(|a| StoredAttempt {
                attempt: a.attempt.attempt,
                started_ms: a.started_ms,
                finished_ms: a.finished_ms,
                am: a.am.as_ref().map(StoredAm::of),
                diagnostics: a.diagnostics.clone(),
            })
            .collect()
    }

    /// The history, its times on `clock`.
    fn recovered_on(&self, clock: &Clock) -> AttemptHistory {
        let time = |ms| clock.time_of_epoch_ms(ms);
        AttemptHistory {
            current_started: self.current_started_ms.map(time),
            current_am: self.current_am.clone(),
            current_am_exit: self.current_am_exit.clone(),
            earlier: self
                .earlier
                .iter()
                .map(|a| EndedAttempt {
                    attempt: a.attempt,
                    started: a.started_ms.map(time),
                    finished: time(a.finished_ms),
                    am: a.am.clone(),
                    diagnostics: a.diagnostics.clone(),
                })
                .collect(),
        }
    }
}

fn compacted(app: &StoredApp) -> Record {
    let sub = &app.recovered.submission;
    Record::Submitted {
        app: sub.app.to_string(),
        user: sub.user.clone(),
        name: sub.name.clone(),
        app_type: sub.app_type.clone(),
        tags: sub.tags.clone(),
        queue: app.recovered.queue.to_string(),
        priority: sub.priority.0,
        am_resource: sub.am_resource.map(ResourceDto::from_resource),
        launch_context: app.extra.launch_context.clone(),
        attempt: app.recovered.attempt,
        am_container_allocated: app.recovered.am_container_allocated,
        lifetime_expiry: app.lifetime_expiry_ms,
        submitted_ms: Some(app.submitted_ms),
        launched_ms: app.launched_ms,
        application_acls: StoredAcls::of(&app.extra.acls),
        max_attempts: sub.max_attempts,
        attempt_started_ms: app.history.current_started_ms,
        earlier_attempts: app.history.stored_earlier(),
        am_token: app.am_token.as_ref().map(|t| StoredAmToken {
            attempt: t.attempt.attempt,
            token: t.token.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use weft_core::{CoreSettings, Input, Reply, ResourceManager};
    use weft_model::{AttemptId, Resource, Time};
    use weft_queue_tree::AllocConfig;

    use super::*;

    /// The store in `dir`, keeping up to 10 ended apps, and the live apps it holds.
    fn open(dir: &Path) -> Result<(StateStore, Vec<StoredApp>, Vec<String>), StateStoreError> {
        StateStore::open(dir, 10, ORIGIN)
            .map(|(store, stored, warnings)| (store, stored.apps, warnings))
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn submission(seq: u32, managed: bool) -> Submission {
        Submission {
            app: AppId::new(7, seq),
            user: "alice".into(),
            groups: vec!["staff".into()],
            queue: Some("asked".into()),
            priority: AppPriority(2),
            am_resource: managed.then(|| Resource::new(1024, 1)),
            name: format!("job{seq}"),
            app_type: "YARN".into(),
            tags: vec!["t".into()],
            max_attempts: None,
            lifetime: None,
        }
    }

    fn render(apps: &[StoredApp]) -> Vec<String> {
        apps.iter()
            .map(|a| {
                let r = &a.recovered;
                format!(
                    "{} {} attempt {} am allocated {} unmanaged {} context {}",
                    r.submission.app,
                    r.queue,
                    r.attempt,
                    r.am_container_allocated,
                    a.extra.unmanaged,
                    a.extra
                        .launch_context
                        .as_ref()
                        .map_or("-".to_owned(), |c| c.to_string())
                )
            })
            .collect()
    }

    #[test]
    fn live_apps_survive_a_reopen_with_their_attempt_and_the_file_is_compacted() {
        let dir = temp_dir("reopen");
        let (mut store, apps, warnings) = open(&dir).unwrap();
        assert!(apps.is_empty() && warnings.is_empty());
        let queue: QueuePath = "root.a".parse().unwrap();
        let ctx = AppExtra {
            launch_context: Some(Arc::new(
                serde_json::json!({"commands": {"command": "sleep 9"}}),
            )),
            ..AppExtra::default()
        };
        store.submitted(&submission(1, true), &queue, &ctx, None, 5);
        // The store keeps the service's launch context, not a copy of it.
        let kept = &store.lines.folded().apps[&AppId::new(7, 1)];
        let shared = kept.extra.launch_context.as_ref().unwrap();
        assert!(Arc::ptr_eq(shared, ctx.launch_context.as_ref().unwrap()));
        store.submitted(&submission(2, false), &queue, &AppExtra::default(), None, 5);
        store.submitted(&submission(3, false), &queue, &AppExtra::default(), None, 5);
        let attempt1 = AttemptId::new(AppId::new(7, 1), 1);
        store.am_allocated(ContainerId::new(attempt1, 1));
        store.attempt_failed(AppId::new(7, 1), 7, None, "its AM exited");
        store.am_allocated(ContainerId::new(AttemptId::new(AppId::new(7, 1), 2), 1));
        store.forget(AppId::new(7, 3));
        // Records about apps the store does not hold are not written.
        store.forget(AppId::new(7, 9));
        drop(store);
        // A torn last line, as a crash mid-write leaves.
        let path = dir.join(STATE_FILE_NAME);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"record\":\"ended\",\"app\":\"applic");
        std::fs::write(&path, text).unwrap();

        let (_store, apps, warnings) = open(&dir).unwrap();
        let shown = render(&apps);
        expect![[r#"
            [
                "application_7_0001 root.a attempt 2 am allocated true unmanaged false context {\"commands\":{\"command\":\"sleep 9\"}}",
                "application_7_0002 root.a attempt 1 am allocated false unmanaged true context -",
            ]
        "#]]
        .assert_debug_eq(&shown);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].ends_with(&format!(
                ":8: skipped: not a state record (EOF while parsing a string at line 1 column 31); kept in {}",
                dir.join(SKIPPED_FILE_NAME).display()
            )),
            "{warnings:?}"
        );
        // Compacted: one line per live app, and it reads back the same.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        let (_store, again, warnings) = open(&dir).unwrap();
        assert_eq!(render(&again), shown);
        assert_eq!(again[0].recovered.submission, apps[0].recovered.submission);
        assert!(warnings.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn submitted_line(seq: u32, name: &str, attempt: u32) -> String {
        format!(
            r#"{{"record":"submitted","app":"application_7_{seq:04}","user":"alice","name":"{name}","appType":"YARN","queue":"root.a","amResource":{{"memory":1024,"vCores":1}},"attempt":{attempt}}}"#
        )
    }

    #[test]
    fn a_write_torn_inside_a_character_is_skipped_like_any_torn_line() {
        let dir = temp_dir("torn-utf8");
        std::fs::create_dir_all(&dir).unwrap();
        // serde_json writes non-ASCII text as raw UTF-8: a crash can cut a
        // character in half, which used to make the whole file unreadable.
        let mut bytes = format!("{}\n", submitted_line(1, "jöb", 1)).into_bytes();
        let torn = submitted_line(2, "é", 1);
        let cut = torn.find('é').unwrap() + 1;
        bytes.extend_from_slice(&torn.as_bytes()[..cut]);
        std::fs::write(dir.join(STATE_FILE_NAME), &bytes).unwrap();
        let (_store, apps, warnings) = open(&dir).unwrap();
        assert_eq!(apps.len(), 1);
        assert_eq!(apps[0].recovered.submission.name, "jöb");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains(":2: skipped: not a state record ("),
            "{warnings:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn attempt_numbers_that_leave_no_next_attempt_are_skipped() {
        let dir = temp_dir("attempts");
        std::fs::create_dir_all(&dir).unwrap();
        let text = [
            submitted_line(1, "a", u32::MAX - 1),
            r#"{"record":"attemptFailed","app":"application_7_0001"}"#.to_owned(),
            submitted_line(2, "b", u32::MAX),
            // Once a panic on overflow at start.
            r#"{"record":"attemptFailed","app":"application_7_0002"}"#.to_owned(),
            submitted_line(3, "c", 1),
            r#"{"record":"amAllocated","container":"container_7_0003_4294967295_000001"}"#
                .to_owned(),
        ]
        .join("\n");
        std::fs::write(dir.join(STATE_FILE_NAME), text).unwrap();
        let (_store, apps, warnings) = open(&dir).unwrap();
        let attempts: Vec<(String, u32)> = apps
            .iter()
            .map(|a| (a.recovered.submission.app.to_string(), a.recovered.attempt))
            .collect();
        assert_eq!(
            attempts,
            [
                ("application_7_0001".to_owned(), u32::MAX - 1),
                ("application_7_0003".to_owned(), 1)
            ]
        );
        let why = lines::skip_reasons(&warnings);
        expect![[r#"
            [
                "attempt 4294967295 leaves no number for a next attempt",
                "attempt 4294967295 leaves no number for a next attempt",
                "attempt 4294967295 leaves no number for a next attempt",
            ]
        "#]]
        .assert_debug_eq(&why);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn attempt_histories_survive_a_reopen_and_lines_from_before_them_load() {
        let dir = temp_dir("attempt-history");
        let (mut store, _, _) = open(&dir).unwrap();
        let queue: QueuePath = "root.a".parse().unwrap();
        let app = AppId::new(7, 1);
        let sub = Submission {
            max_attempts: Some(3),
            ..submission(1, true)
        };
        store.submitted(&sub, &queue, &AppExtra::default(), None, 5);
        store.submitted(&submission(2, true), &queue, &AppExtra::default(), None, 5);
        let am = AmPlacement {
            container: ContainerId::new(AttemptId::new(app, 1), 1),
            node: "h1:8041".parse().unwrap(),
            node_http_address: "h1:8042".to_owned(),
        };
        store.am_allocated(am.container);
        store.attempt_failed(app, 20, Some(&am), "its AM exited with status 1");
        store.attempt_failed(app, 30, None, "its AM was silent");
        // A line as written before attempts were kept: app 2's history
        // from then on is unknown, and it starts again empty.
        store.attempt_failed(AppId::new(7, 2), 25, None, "its AM exited");
        drop(store);
        let path = dir.join(STATE_FILE_NAME);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"record\":\"attemptFailed\",\"app\":\"application_7_0002\"}\n");
        std::fs::write(&path, text).unwrap();
        let show = |apps: &[StoredApp]| -> Vec<String> {
            apps.iter()
                .map(|a| {
                    let h = &a.history;
                    let earlier: Vec<String> = h
                        .earlier
                        .iter()
                        .map(|e| {
                            format!(
                                "{} {:?}..{} am {:?}: {}",
                                e.attempt,
                                e.started_ms,
                                e.finished_ms,
                                e.am.as_ref().map(|am| format!(
                                    "{} on {} ({})",
                                    am.container, am.node, am.node_http_address
                                )),
                                e.diagnostics
                            )
                        })
                        .collect();
                    format!(
                        "{} attempt {} (max {:?}) since {:?}; earlier: {earlier:?}",
                        a.recovered.submission.app,
                        a.recovered.attempt,
                        a.recovered.submission.max_attempts,
                        h.current_started_ms
                    )
                })
                .collect()
        };
        // Once from the lines as appended, once from the compacted file.
        let mut seen = Vec::new();
        for _ in 0..2 {
            let (_store, apps, warnings) = open(&dir).unwrap();
            assert!(warnings.is_empty(), "{warnings:?}");
            seen.push(show(&apps));
        }
        assert_eq!(seen[0], seen[1]);
        expect![[r#"
            [
                "application_7_0001 attempt 3 (max Some(3)) since Some(30); earlier: [\"appattempt_7_0001_000001 None..20 am Some(\\\"container_7_0001_01_000001 on h1:8041 (h1:8042)\\\"): its AM exited with status 1\", \"appattempt_7_0001_000002 Some(20)..30 am None: its AM was silent\"]",
                "application_7_0002 attempt 3 (max None) since None; earlier: []",
            ]
        "#]]
        .assert_debug_eq(&seen[0]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn priority_changes_survive_a_reopen() {
        let dir = temp_dir("priority");
        let (mut store, _, _) = open(&dir).unwrap();
        let queue: QueuePath = "root.a".parse().unwrap();
        for seq in [1, 2] {
            store.submitted(
                &submission(seq, true),
                &queue,
                &AppExtra::default(),
                None,
                ORIGIN,
            );
        }
        store.priority_set(AppId::new(7, 1), AppPriority(-1));
        store.priority_set(AppId::new(7, 1), AppPriority(0));
        // Records about apps the store does not hold are not written.
        store.priority_set(AppId::new(7, 9), AppPriority(5));
        drop(store);
        let text = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        assert_eq!(
            text.matches(r#""record":"prioritySet""#).count(),
            2,
            "{text}"
        );
        let priorities = |apps: &[StoredApp]| -> Vec<(u32, i32)> {
            apps.iter()
                .map(|a| {
                    (
                        a.recovered.submission.app.seq,
                        a.recovered.submission.priority.0,
                    )
                })
                .collect()
        };
        for _ in 0..2 {
            // Read back, then read back the compacted file.
            let (_store, apps, warnings) = open(&dir).unwrap();
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(priorities(&apps), [(1, 0), (2, 2)]);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn lifetime_expiries_survive_a_reopen_and_files_from_before_them_load() {
        let dir = temp_dir("lifetime");
        std::fs::create_dir_all(&dir).unwrap();
        // A file written before lifetimes existed.
        let old = format!("{}\n", submitted_line(1, "old", 1));
        std::fs::write(dir.join(STATE_FILE_NAME), &old).unwrap();
        let (mut store, apps, warnings) = open(&dir).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(apps[0].lifetime_expiry_ms, None);
        // An app without a lifetime is written without the field, so an
        // older Weft reads the file as it wrote it.
        let compacted = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        assert!(!compacted.contains("lifetime"), "{compacted}");
        let queue: QueuePath = "root.a".parse().unwrap();
        store.submitted(
            &submission(2, true),
            &queue,
            &AppExtra::default(),
            Some(1_700_000_600_000),
            1_700_000_000_000,
        );
        store.lifetime_set(AppId::new(7, 2), 1_700_001_200_000);
        // An app that had none gains one.
        store.lifetime_set(AppId::new(7, 1), 1_700_000_900_000);
        // Records about apps the store does not hold are not written.
        store.lifetime_set(AppId::new(7, 9), 1);
        drop(store);
        let text = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        assert_eq!(
            text.matches(r#""record":"lifetimeSet""#).count(),
            2,
            "{text}"
        );
        let expiries = |apps: &[StoredApp]| -> Vec<(u32, Option<u64>)> {
            apps.iter()
                .map(|a| (a.recovered.submission.app.seq, a.lifetime_expiry_ms))
                .collect()
        };
        let (_store, apps, warnings) = open(&dir).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let want = vec![(1, Some(1_700_000_900_000)), (2, Some(1_700_001_200_000))];
        assert_eq!(expiries(&apps), want);
        // Compacted into the submissions, and read back the same.
        let text = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.contains(r#""lifetimeExpiry":1700001200000"#), "{text}");
        let (_store, again, _) = open(&dir).unwrap();
        assert_eq!(expiries(&again), want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn application_acls_survive_a_reopen_and_files_from_before_them_load() {
        let dir = temp_dir("acls");
        std::fs::create_dir_all(&dir).unwrap();
        // A file written before application ACLs: the app has none.
        std::fs::write(
            dir.join(STATE_FILE_NAME),
            format!("{}\n", submitted_line(1, "old", 1)),
        )
        .unwrap();
        let (mut store, apps, warnings) = open(&dir).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(apps[0].extra.acls, AppAcls::default());
        let queue: QueuePath = "root.a".parse().unwrap();
        let with_acls = AppExtra {
            acls: AppAcls {
                view: Acl::parse("bob viewers"),
                modify: Acl::nobody(),
            },
            ..AppExtra::default()
        };
        store.submitted(&submission(2, true), &queue, &with_acls, None, ORIGIN);
        store.submitted(&submission(3, true), &queue, &with_acls, None, ORIGIN);
        // An ended app keeps them too: they still decide who sees its report.
        let clock = Clock::with_epoch_origin(ORIGIN);
        let record = ended_record(3, AppState::Finished, 1_000);
        store.ended(AppId::new(7, 3), Some(&record), Some(&with_acls), &clock);
        drop(store);
        let text = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        // An app without ACLs is written without the field.
        assert_eq!(text.matches("applicationAcls").count(), 3, "{text}");
        assert!(
            text.contains(r#""applicationAcls":{"VIEW_APP":"bob viewers"}"#),
            "{text}"
        );
        for _ in 0..2 {
            // Read back, then read back the compacted file.
            let (_store, stored, warnings) = StateStore::open(&dir, 10, ORIGIN).unwrap();
            assert!(warnings.is_empty(), "{warnings:?}");
            assert_eq!(stored.apps[0].extra.acls, AppAcls::default());
            assert_eq!(stored.apps[1].extra.acls, with_acls.acls);
            let (_, extra) = stored.ended[0].recovered_on(&clock);
            assert_eq!(extra.acls, with_acls.acls);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn skipped_lines_are_kept_aside_not_compacted_away() {
        let dir = temp_dir("kept");
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!(
            "{}\n{{\"record\":\"ended\",\"app\":\"appl\0\0\n{{\"record\":\"renamed\"}}\n{}\n",
            submitted_line(1, "a", 1),
            submitted_line(2, "b", 1)
        );
        std::fs::write(dir.join(STATE_FILE_NAME), &text).unwrap();
        let (_store, apps, warnings) = open(&dir).unwrap();
        assert_eq!(apps.len(), 2);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        let kept = dir.join(SKIPPED_FILE_NAME);
        assert!(
            warnings
                .iter()
                .all(|w| w.ends_with(&format!("; kept in {}", kept.display()))),
            "{warnings:?}"
        );
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            format!("{}\n{}\n", lines[1], lines[2])
        );
        // A later start with more to skip adds to the lines kept.
        let mut again = std::fs::read_to_string(dir.join(STATE_FILE_NAME)).unwrap();
        again.push_str("garbage\n");
        std::fs::write(dir.join(STATE_FILE_NAME), again).unwrap();
        let (_store, apps, _) = open(&dir).unwrap();
        assert_eq!(apps.len(), 2);
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            format!("{}\n{}\ngarbage\n", lines[1], lines[2])
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Wall-clock ms at the first RM's start.
    const ORIGIN: u64 = 1_700_000_000_000;

    /// The record a core keeps of app `seq` after it ended in `state`
    /// `finished` ms after the first RM's start (submitted 90 ms before,
    /// launched 80 ms before), with a clock starting at `ORIGIN`.
    fn ended_record(seq: u32, state: AppState, finished: u64) -> AppRecord {
        let mut rm =
            ResourceManager::new(AllocConfig::default(), CoreSettings::default(), Time::ZERO);
        let t = Time::from_millis;
        let ended = EndedApp {
            app: AppId::new(7, seq),
            user: "alice".into(),
            name: format!("job{seq}"),
            app_type: "YARN".into(),
            tags: vec!["t".into()],
            queue: "root.a".parse().unwrap(),
            state,
            final_status: (state == AppState::Finished).then_some(FinalStatus::Succeeded),
            diagnostics: format!("{state}, with a \"quote\" and ünïcode"),
            priority: AppPriority(2),
            am_resource: (seq != 2).then(|| Resource::new(1024, 1)),
            submitted: t(finished - 90),
            launched: (seq != 3).then(|| t(finished - 80)),
            finished: t(finished),
            lifetime_expiry: (seq == 1).then(|| t(finished + 1_000)),
            attempt: seq,
            progress: 0.25,
            memory_mb_seconds: 100 * u64::from(seq),
            vcore_seconds: u64::from(seq),
            preempted_containers: 1,
            preempted_am_containers: 0,
            preempted_resource: Resource::new(2048, 2),
        };
        let out = rm.handle(t(finished), Input::EndedAppRecovered(Box::new(ended)));
        assert_eq!(out.reply, Reply::EndedAppRecovered(Ok(())));
        rm.app_report(AppId::new(7, seq)).unwrap().record
    }

    /// One line per ended app, its times in wall-clock ms on `clock`.
    fn render_ended(ended: &[StoredEndedApp], clock: &Clock) -> Vec<String> {
        ended
            .iter()
            .map(|e| {
                let (a, extra) = e.recovered_on(clock);
                let ms = |t: Time| clock.epoch_ms(t) - ORIGIN;
                format!(
                    "{} {} {:?} {:?} in {} by {} prio {} am {:?} submitted {} launched {:?} finished {} expiry {:?} attempt {} progress {} {}MBs {}vcs preempted {}/{} {} tracking {:?} host {:?}:{:?} unmanaged {}: {}",
                    a.app,
                    a.state,
                    a.final_status,
                    a.tags,
                    a.queue,
                    a.user,
                    a.priority.0,
                    a.am_resource.map(|r| r.to_string()),
                    ms(a.submitted),
                    a.launched.map(ms),
                    ms(a.finished),
                    a.lifetime_expiry.map(ms),
                    a.attempt,
                    a.progress,
                    a.memory_mb_seconds,
                    a.vcore_seconds,
                    a.preempted_containers,
                    a.preempted_am_containers,
                    a.preempted_resource,
                    extra.tracking_url,
                    extra.am_host,
                    extra.am_rpc_port,
                    extra.unmanaged,
                    a.diagnostics,
                )
            })
            .collect()
    }

    #[test]
    fn ended_apps_survive_a_reopen_as_they_ended_and_only_the_newest_are_kept() {
        let dir = temp_dir("ended");
        let clock = Clock::with_epoch_origin(ORIGIN);
        let (mut store, _, _) = StateStore::open(&dir, 2, ORIGIN).unwrap();
        let queue: QueuePath = "root.a".parse().unwrap();
        for seq in 1..=4 {
            store.submitted(
                &submission(seq, seq != 2),
                &queue,
                &AppExtra::default(),
                None,
                ORIGIN + 10,
            );
        }
        store.container_allocated(AppId::new(7, 4), ORIGIN + 20);
        // Only the first allocation is the launch.
        store.container_allocated(AppId::new(7, 4), ORIGIN + 30);
        let extra = AppExtra {
            tracking_url: Some("http://am:8080/ui".into()),
            am_host: Some("am".into()),
            am_rpc_port: Some(4040),
            ..AppExtra::default()
        };
        for (seq, state, finished) in [
            (1, AppState::Finished, 1_000),
            (2, AppState::Killed, 2_000),
            (3, AppState::Failed, 3_000),
        ] {
            let record = ended_record(seq, state, finished);
            store.ended(AppId::new(7, seq), Some(&record), Some(&extra), &clock);
        }
        // Never stored as submitted: not written.
        let record = ended_record(9, AppState::Finished, 4_000);
        store.ended(AppId::new(7, 9), Some(&record), None, &clock);
        drop(store);
        let path = dir.join(STATE_FILE_NAME);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 4 + 1 + 3, "{text}");
        assert!(!text.contains("application_7_0009"), "{text}");

        // Back later: its clock starts at zero there, and reaches back to
        // the earliest time the store holds.
        let (_store, stored, warnings) = StateStore::open(&dir, 2, ORIGIN).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let earliest = stored.earliest_ms().unwrap();
        assert_eq!(earliest, ORIGIN + 10);
        let later = Clock::with_epoch_origin(ORIGIN + 60_000).reaching_back_to(earliest);
        expect![[r#"
            [
                "application_7_0002 killed None [\"t\"] in root.a by alice prio 2 am None submitted 1910 launched Some(1920) finished 2000 expiry None attempt 2 progress 0.25 200MBs 2vcs preempted 1/0 <memory:2048, vCores:2> tracking Some(\"http://am:8080/ui\") host Some(\"am\"):Some(4040) unmanaged true: killed, with a \"quote\" and ünïcode",
                "application_7_0003 failed None [\"t\"] in root.a by alice prio 2 am Some(\"<memory:1024, vCores:1>\") submitted 2910 launched None finished 3000 expiry None attempt 3 progress 0.25 300MBs 3vcs preempted 1/0 <memory:2048, vCores:2> tracking Some(\"http://am:8080/ui\") host Some(\"am\"):Some(4040) unmanaged false: failed, with a \"quote\" and ünïcode",
            ]
        "#]].assert_debug_eq(&render_ended(&stored.ended, &later));
        let live: Vec<(String, Option<u64>, Option<u64>)> = stored
            .apps
            .iter()
            .map(|a| {
                let r = a.recovered_on(&later);
                (
                    r.submission.app.to_string(),
                    r.submitted.map(|t| later.epoch_ms(t) - ORIGIN),
                    r.launched.map(|t| later.epoch_ms(t) - ORIGIN),
                )
            })
            .collect();
        assert_eq!(
            live,
            [("application_7_0004".to_owned(), Some(10), Some(20))]
        );
        // Compacted: the live app, then the two newest ended ones, and it
        // reads back the same.
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        let (_store, again, _) = StateStore::open(&dir, 2, ORIGIN).unwrap();
        assert_eq!(again.ended, stored.ended);
        // A smaller limit keeps the newest.
        let (_store, fewer, _) = StateStore::open(&dir, 1, ORIGIN).unwrap();
        let ids: Vec<String> = fewer.ended.iter().map(|e| e.app().to_string()).collect();
        assert_eq!(ids, ["application_7_0003"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_long_run_compacts_the_file_while_appending_and_it_reads_back_the_same() {
        let dir = temp_dir("running-compaction");
        let clock = Clock::with_epoch_origin(ORIGIN);
        let (mut store, _, _) = StateStore::open(&dir, 3, ORIGIN).unwrap();
        store.lines.set_compaction_floor(4096);
        let queue: QueuePath = "root.a".parse().unwrap();
        let path = dir.join(STATE_FILE_NAME);
        let mut largest = 0;
        // Apps come and go, two at a time alive: without compaction the
        // file would hold every one of them.
        for seq in 1..=200 {
            store.submitted(
                &submission(seq, true),
                &queue,
                &AppExtra::default(),
                None,
                ORIGIN + u64::from(seq),
            );
            store.container_allocated(AppId::new(7, seq), ORIGIN + u64::from(seq) + 1);
            if seq > 2 {
                let done = seq - 2;
                let record = ended_record(done, AppState::Finished, 10_000 + u64::from(done));
                store.ended(AppId::new(7, done), Some(&record), None, &clock);
            }
            // Once a compaction has started, the file stays as it was,
            // appended to, until its thread is done; waiting for it makes
            // the largest size below the same on any machine.
            store.lines.wait_for_compaction();
            largest = largest.max(std::fs::metadata(&path).unwrap().len());
        }
        // Bounded by the floor plus what is live, not by the 200 apps.
        assert!(largest < 3 * 4096, "the file reached {largest} bytes");
        drop(store);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("application_7_0001\""), "{text}");
        let (_store, stored, warnings) = StateStore::open(&dir, 3, ORIGIN).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let live: Vec<String> = stored
            .apps
            .iter()
            .map(|a| a.recovered.submission.app.to_string())
            .collect();
        assert_eq!(live, ["application_7_0199", "application_7_0200"]);
        let ended: Vec<String> = stored.ended.iter().map(|e| e.app().to_string()).collect();
        assert_eq!(
            ended,
            [
                "application_7_0196",
                "application_7_0197",
                "application_7_0198"
            ]
        );
        assert!(stored.apps.iter().all(|a| a.launched_ms.is_some()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_from_before_ended_apps_were_kept_load_and_forget_their_ended_apps() {
        let dir = temp_dir("old-ended");
        std::fs::create_dir_all(&dir).unwrap();
        let text = [
            submitted_line(1, "a", 1),
            submitted_line(2, "b", 1),
            r#"{"record":"ended","app":"application_7_0001"}"#.to_owned(),
        ]
        .join("\n");
        std::fs::write(dir.join(STATE_FILE_NAME), text).unwrap();
        let (_store, stored, warnings) = StateStore::open(&dir, 10, ORIGIN).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(stored.ended.is_empty());
        assert_eq!(render(&stored.apps).len(), 1);
        // Taken as submitted at the start, which the clock's origin is already.
        assert_eq!(stored.apps[0].submitted_ms, ORIGIN);
        assert_eq!(stored.earliest_ms(), Some(ORIGIN));
        // The file now says so: a later start shows the same time.
        let (_store, again, _) = StateStore::open(&dir, 10, ORIGIN + 60_000).unwrap();
        assert_eq!(again.apps[0].submitted_ms, ORIGIN);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn torn_and_unusable_ended_lines_are_kept_aside_and_the_app_stays_alive() {
        let dir = temp_dir("torn-ended");
        let clock = Clock::with_epoch_origin(ORIGIN);
        let (mut store, _, _) = StateStore::open(&dir, 10, ORIGIN).unwrap();
        let queue: QueuePath = "root.a".parse().unwrap();
        store.submitted(
            &submission(1, true),
            &queue,
            &AppExtra::default(),
            None,
            ORIGIN,
        );
        let record = ended_record(1, AppState::Finished, 500);
        store.ended(AppId::new(7, 1), Some(&record), None, &clock);
        drop(store);
        let path = dir.join(STATE_FILE_NAME);
        let full = std::fs::read_to_string(&path).unwrap();
        let ended = full.lines().nth(1).unwrap().to_owned();
        let submitted = full.lines().next().unwrap().to_owned();
        let text = [
            submitted,
            ended.replace(r#""state":"FINISHED""#, r#""state":"RUNNING""#),
            ended.replace(r#""finalStatus":"SUCCEEDED""#, r#""finalStatus":"GREAT""#),
            ended.replace(r#""queue":"root.a""#, r#""queue":"root..a""#),
            ended[..ended.len() / 2].to_owned(),
        ]
        .join("\n");
        std::fs::write(&path, &text).unwrap();
        let (_store, stored, warnings) = StateStore::open(&dir, 10, ORIGIN).unwrap();
        assert!(stored.ended.is_empty());
        assert_eq!(render(&stored.apps).len(), 1);
        let why = lines::skip_reasons(&warnings);
        expect![[r#"
            [
                "state \"RUNNING\" is not a final state (FINISHED, FAILED, KILLED or REJECTED)",
                "finalStatus \"GREAT\" is not SUCCEEDED, FAILED, KILLED or UNDEFINED",
                "invalid queue name \"root..a\": it has an empty component (a leading, trailing or doubled '.')",
                "not a state record (EOF while parsing an object at line 1 column 282)",
            ]
        "#]].assert_debug_eq(&why);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            std::fs::read_to_string(dir.join(SKIPPED_FILE_NAME)).unwrap(),
            format!("{}\n", lines[1..].join("\n"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
