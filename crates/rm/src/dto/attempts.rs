//! The wire forms of an application's attempts and their containers:
//! Hadoop's RM `AppAttemptInfo` for the list, its web services'
//! `AppAttemptInfo` for one attempt, and `ContainerInfo` for containers.
//!
//! Which attempts and containers an app has is the view's and the core's
//! business (`crate::view::AttemptHistory`, `weft_core::ContainerReport`);
//! who may see them is the handlers'.

use serde::{Deserialize, Serialize};
use weft_core::{AppState, ContainerReport};
use weft_model::{AttemptId, Time};

use crate::dto::EpochMillis;
use crate::view::{AmPlacement, AppView};

/// `{"appAttempts":{"appAttempt":[...]}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppAttemptsDto {
    /// The attempts Weft remembers, oldest first, the current one last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub app_attempt: Vec<AppAttemptDto>,
}

/// One attempt in a list, in Hadoop's RM `AppAttemptInfo` shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppAttemptDto {
    /// Attempt number.
    pub id: u32,
    /// `appattempt_<clusterTimestamp>_<seq>_<attempt>`.
    pub app_attempt_id: String,
    /// When the attempt began (the app's submission, for the first).
    pub start_time: EpochMillis,
    /// When it ended, or 0.
    pub finished_time: EpochMillis,
    /// The AM container, once allocated.
    pub container_id: String,
    /// The AM node's web address.
    pub node_http_address: String,
    /// The AM node.
    pub node_id: String,
    /// Empty (no log service).
    pub logs_link: String,
    /// Empty (per-app blacklists are not reported).
    pub blacklisted_nodes: String,
    /// YARN's attempt state: `SCHEDULED`, `ALLOCATED`, `RUNNING`,
    /// `FINISHED`, `FAILED` or `KILLED`.
    pub app_attempt_state: String,
    /// Weft's addition (Hadoop's RM list has no such field; its timeline
    /// server's attempt report does, under this name): why the attempt
    /// ended, empty while it runs.
    #[serde(default)]
    pub diagnostics_info: String,
}

/// One attempt, `{"appAttempt":{...}}`: Hadoop's web services'
/// `AppAttemptInfo`, what `GET .../appattempts/{id}` answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppAttemptReportDto {
    /// `appattempt_<clusterTimestamp>_<seq>_<attempt>`.
    pub app_attempt_id: String,
    /// The host its AM registered from, or `N/A`.
    pub host: String,
    /// The AM's RPC port, or -1.
    pub rpc_port: i32,
    /// The AM's web UI, or empty.
    pub tracking_url: String,
    /// The same (Weft has no proxy in front of it).
    pub original_tracking_url: String,
    /// Why the attempt ended, empty while it runs.
    pub diagnostics_info: String,
    /// YARN's attempt state.
    pub app_attempt_state: String,
    /// The AM container, once allocated.
    #[serde(default)]
    pub am_container_id: String,
    /// When the attempt began.
    pub started_time: EpochMillis,
    /// When it ended, or 0.
    pub finished_time: EpochMillis,
}

/// `{"containers":{"container":[...]}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainersDto {
    /// The containers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container: Vec<ContainerDto>,
}

/// One container, in Hadoop's `ContainerInfo` shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerDto {
    /// `container_...`.
    pub container_id: String,
    /// Memory (MB).
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: u64,
    /// Virtual cores.
    #[serde(rename = "allocatedVCores")]
    pub allocated_vcores: u64,
    /// Its node (`host:port`).
    pub assigned_node_id: String,
    /// The priority of the request it was allocated for.
    pub priority: i32,
    /// When it was allocated.
    pub started_time: EpochMillis,
    /// 0: it runs (ended containers are not listed).
    pub finished_time: EpochMillis,
    /// Milliseconds since it was allocated.
    pub elapsed_time: u64,
    /// Empty while it runs.
    pub diagnostics_info: String,
    /// Empty (no log service).
    pub log_url: String,
    /// 0 while it runs.
    pub container_exit_status: i32,
    /// `NEW` until its node reports it running, then `RUNNING`.
    pub container_state: String,
    /// Its node's web address.
    pub node_http_address: String,
    /// Its node (`host:port`).
    pub node_id: String,
}

/// One attempt of an app, from the core's report (the current one) or the
/// view's history (earlier ones), before it is put in either wire shape.
struct Attempt<'a> {
    attempt: AttemptId,
    started: Time,
    finished: Option<Time>,
    am: Option<&'a AmPlacement>,
    state: &'static str,
    diagnostics: String,
    current: bool,
}

/// Every attempt of `app`, oldest first: what the view kept of the earlier
/// ones, then the current one. An app the scheduler refused never had an
/// attempt in Hadoop (its first attempt starts once the scheduler took
/// the app), so it has none.
fn attempts_of(app: &AppView) -> Vec<Attempt<'_>> {
    let rec = &app.report.record;
    if rec.state == AppState::Rejected {
        return Vec::new();
    }
    let history = &app.extra.attempts;
    let mut res: Vec<Attempt<'_>> = history
        .earlier
        .iter()
        .map(|e| Attempt {
            attempt: e.attempt,
            started: e.started.unwrap_or(rec.submitted),
            finished: Some(e.finished),
            am: e.am.as_ref(),
            state: "FAILED",
            diagnostics: e.diagnostics.clone(),
            current: false,
        })
        .collect();
    // The AM container the actor saw allocated is the current attempt's
    // only if it names it (a recovered app's may predate the restart).
    let am = history
        .current_am
        .as_ref()
        .filter(|am| am.container.attempt == rec.attempt);
    let state = match rec.state {
        AppState::Accepted | AppState::WaitingForLimit => {
            if rec.am_container.is_some() {
                "ALLOCATED"
            } else {
                "SCHEDULED"
            }
        }
        AppState::Running => "RUNNING",
        AppState::Finished => "FINISHED",
        AppState::Failed | AppState::Rejected => "FAILED",
        AppState::Killed => "KILLED",
    };
    // While the app runs its diagnostics are about earlier attempts.
    let diagnostics = if rec.state.is_final() {
        match &history.current_am_exit {
            Some(words) => format!("{}; its node said: {words}", rec.diagnostics),
            None => rec.diagnostics.clone(),
        }
    } else {
        String::new()
    };
    res.push(Attempt {
        attempt: rec.attempt,
        started: history.current_started.unwrap_or(rec.submitted),
        finished: rec.finished,
        am,
        state,
        diagnostics,
        current: true,
    });
    res
}

impl AppAttemptsDto {
    /// The attempts of `app`; `epoch_origin_ms` turns core time into timestamps.
    pub fn of(epoch_origin_ms: u64, app: &AppView) -> AppAttemptsDto {
        AppAttemptsDto {
            app_attempt: attempts_of(app)
                .iter()
                .map(|a| AppAttemptDto::from_attempt(epoch_origin_ms, app, a))
                .collect(),
        }
    }

    /// The attempts for a caller who may not see the app's details, as
    /// Hadoop's `AppAttemptInfo` gives them without access: the AM
    /// container and its node are left out, and so is why each ended
    /// (a node's words about its AM container name the node).
    pub fn withheld(self) -> AppAttemptsDto {
        AppAttemptsDto {
            app_attempt: self
                .app_attempt
                .into_iter()
                .map(AppAttemptDto::withheld)
                .collect(),
        }
    }
}

impl AppAttemptDto {
    fn from_attempt(epoch_origin_ms: u64, app: &AppView, a: &Attempt<'_>) -> AppAttemptDto {
        let epoch_ms = |t: Time| epoch_origin_ms + t.as_millis();
        // A recovered app's current AM container is in the core's record
        // even when the actor did not see it allocated.
        let container_id = match (a.am, a.current) {
            (Some(am), _) => am.container.to_string(),
            (None, true) => app
                .report
                .record
                .am_container
                .map(|c| c.to_string())
                .unwrap_or_default(),
            (None, false) => String::new(),
        };
        AppAttemptDto {
            id: a.attempt.attempt,
            app_attempt_id: a.attempt.to_string(),
            start_time: epoch_ms(a.started),
            finished_time: a.finished.map_or(0, epoch_ms),
            container_id,
            node_http_address: a
                .am
                .map(|am| am.node_http_address.clone())
                .unwrap_or_default(),
            node_id: a.am.map(|am| am.node.to_string()).unwrap_or_default(),
            logs_link: String::new(),
            blacklisted_nodes: String::new(),
            app_attempt_state: a.state.to_owned(),
            diagnostics_info: a.diagnostics.clone(),
        }
    }

    /// This attempt for a caller who may not see the app's details.
    pub fn withheld(self) -> AppAttemptDto {
        AppAttemptDto {
            container_id: String::new(),
            node_http_address: String::new(),
            node_id: String::new(),
            logs_link: String::new(),
            diagnostics_info: String::new(),
            ..self
        }
    }
}

impl AppAttemptReportDto {
    /// Attempt `attempt` of `app`, or `None` if the app has no such attempt
    /// (or Weft no longer keeps it).
    pub fn of(
        epoch_origin_ms: u64,
        app: &AppView,
        attempt: AttemptId,
    ) -> Option<AppAttemptReportDto> {
        let attempts = attempts_of(app);
        let a = attempts.iter().find(|a| a.attempt == attempt)?;
        let listed = AppAttemptDto::from_attempt(epoch_origin_ms, app, a);
        let extra = &app.extra;
        // Only the current attempt's AM may have registered with this RM.
        let (host, rpc_port, tracking_url) = if a.current {
            (
                extra.am_host.clone().unwrap_or_else(|| "N/A".to_owned()),
                extra.am_rpc_port.map_or(-1, i32::from),
                extra.tracking_url.clone().unwrap_or_default(),
            )
        } else {
            ("N/A".to_owned(), -1, String::new())
        };
        Some(AppAttemptReportDto {
            app_attempt_id: listed.app_attempt_id,
            host,
            rpc_port,
            original_tracking_url: tracking_url.clone(),
            tracking_url,
            diagnostics_info: listed.diagnostics_info,
            app_attempt_state: listed.app_attempt_state,
            am_container_id: listed.container_id,
            started_time: listed.start_time,
            finished_time: listed.finished_time,
        })
    }

    /// This attempt for a caller who may not see the app's details: where
    /// its AM runs and why it ended are left out.
    pub fn withheld(self) -> AppAttemptReportDto {
        AppAttemptReportDto {
            host: "N/A".to_owned(),
            rpc_port: -1,
            tracking_url: String::new(),
            original_tracking_url: String::new(),
            diagnostics_info: String::new(),
            am_container_id: String::new(),
            ..self
        }
    }
}

impl ContainerDto {
    /// A live container at core time `now`, on a node at `node_http_address`.
    pub fn live(
        epoch_origin_ms: u64,
        now: Time,
        c: &ContainerReport,
        node_http_address: &str,
    ) -> ContainerDto {
        ContainerDto {
            container_id: c.id.to_string(),
            allocated_mb: c.resource.memory_mb(),
            allocated_vcores: c.resource.vcores(),
            assigned_node_id: c.node.to_string(),
            priority: c.priority.0,
            started_time: epoch_origin_ms + c.allocated_at.as_millis(),
            finished_time: 0,
            elapsed_time: now.as_millis().saturating_sub(c.allocated_at.as_millis()),
            diagnostics_info: String::new(),
            log_url: String::new(),
            container_exit_status: 0,
            container_state: if c.running { "RUNNING" } else { "NEW" }.to_owned(),
            node_http_address: node_http_address.to_owned(),
            node_id: c.node.to_string(),
        }
    }

    /// This container for a caller who may not see the app's details:
    /// where it runs is left out.
    pub fn withheld(self) -> ContainerDto {
        ContainerDto {
            assigned_node_id: String::new(),
            node_http_address: String::new(),
            node_id: String::new(),
            ..self
        }
    }
}
