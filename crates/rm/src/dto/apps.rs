//! The YARN REST API's application bodies, in Hadoop's shapes: the `app`
//! report, the `apps` list and its query filters, `new-application`, the
//! submission context, and the `state`, `queue`, `priority`, `timeouts`
//! sub-resources (an app's attempts are in `dto::attempts`).
//!
//! Conversions: a submission becomes the core's `Submission` plus the
//! shell's `AppExtra` (with the app's ACLs, checked here); an `AppView`
//! becomes an `AppDto`, whole or withheld, and a list leaves out the apps
//! `crate::access::ListedAs` says to. Who may see what is decided by
//! `crate::access`, not here.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use weft_core::{AppState, FinalStatus, Submission};
use weft_model::{AppId, AppPriority, Duration, QueuePath, Resource, ResourceType, Time};
use weft_queue_tree::Acl;

use crate::actor::AppSnapshot;

use crate::access::{AppAcls, ListedAs, MODIFY_APP, VIEW_APP};
use crate::dto::{EpochMillis, InvalidField, ResourceDto, one_or_many, parse_field};
use crate::iso8601::EpochMs;
use crate::view::{AppExtra, AppView, View};

/// `{"apps":{"app":[...]}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppsDto {
    /// The apps (absent when there are none, as Hadoop writes it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub app: Vec<AppDto>,
}

/// One application, in Hadoop's `AppInfo` shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppDto {
    /// `application_<clusterTimestamp>_<seq>`.
    pub id: String,
    /// Submitting user.
    pub user: String,
    /// Name.
    pub name: String,
    /// Full queue name.
    pub queue: String,
    /// YARN's state (`ACCEPTED`, `RUNNING`, `FINISHED`, `FAILED`, `KILLED`).
    pub state: String,
    /// `UNDEFINED` until the app ends, then `SUCCEEDED`, `FAILED` or `KILLED`.
    pub final_status: String,
    /// Progress in percent.
    pub progress: f32,
    /// `UNASSIGNED`, `ApplicationMaster` or `History`.
    #[serde(rename = "trackingUI")]
    pub tracking_ui: String,
    /// The AM's web UI, if it gave one.
    pub tracking_url: String,
    /// A sentence a person can act on.
    pub diagnostics: String,
    /// The cluster id.
    pub cluster_id: u64,
    /// Type.
    pub application_type: String,
    /// Tags, comma-separated.
    pub application_tags: String,
    /// Priority.
    pub priority: i32,
    /// Submission time (ms since the epoch).
    pub started_time: EpochMillis,
    /// First container allocated (0 if none yet).
    pub launch_time: EpochMillis,
    /// End (0 while it runs).
    pub finished_time: EpochMillis,
    /// Milliseconds from submission to the end or now.
    pub elapsed_time: u64,
    /// Empty (Weft runs no log service).
    pub am_container_logs: String,
    /// The web address of the node running the AM.
    pub am_host_http_address: String,
    /// The AM's `host:port`, once registered.
    #[serde(rename = "amRPCAddress")]
    pub am_rpc_address: String,
    /// Allocated memory (MB).
    #[serde(rename = "allocatedMB")]
    pub allocated_mb: u64,
    /// Allocated vcores.
    #[serde(rename = "allocatedVCores")]
    pub allocated_vcores: u64,
    /// Reserved memory (MB).
    #[serde(rename = "reservedMB")]
    pub reserved_mb: u64,
    /// Reserved vcores.
    #[serde(rename = "reservedVCores")]
    pub reserved_vcores: u64,
    /// Live containers.
    pub running_containers: u32,
    /// MB × seconds of ended containers.
    pub memory_seconds: u64,
    /// Vcores × seconds of ended containers.
    pub vcore_seconds: u64,
    /// Allocated memory as a percentage of its queue's fair share.
    pub queue_usage_percentage: f64,
    /// Allocated memory as a percentage of the cluster.
    pub cluster_usage_percentage: f64,
    /// Memory of every container preemption took from the app, added up.
    #[serde(rename = "preemptedResourceMB")]
    pub preempted_resource_mb: u64,
    /// Vcores of every container preemption took from the app, added up.
    pub preempted_resource_v_cores: u64,
    /// Containers other than the AM's taken back by preemption.
    #[serde(rename = "numNonAMContainerPreempted")]
    pub num_non_am_container_preempted: u64,
    /// AM containers taken back by preemption.
    #[serde(rename = "numAMContainerPreempted")]
    pub num_am_container_preempted: u64,
    /// `DISABLED`.
    pub log_aggregation_status: String,
    /// True when the submitter runs the AM.
    pub unmanaged_application: bool,
    /// Empty (no node labels).
    pub app_node_label_expression: String,
    /// Empty (no node labels).
    pub am_node_label_expression: String,
    /// Weft's addition: outstanding memory asked for (MB).
    #[serde(rename = "pendingMB")]
    pub pending_mb: u64,
    /// Weft's addition: outstanding vcores asked for.
    #[serde(rename = "pendingVCores")]
    pub pending_vcores: u64,
    /// Weft's addition: the app's instantaneous fair share of memory (MB).
    #[serde(rename = "fairShareMB")]
    pub fair_share_mb: u64,
    /// Its timeouts (the lifetime, `UNLIMITED` when it has none); absent
    /// when the list was asked for with `deSelects=timeouts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<AppTimeoutsDto>,
    /// An unmanaged AM's token for its running attempt (YARN's
    /// `ApplicationReport.amRMToken`), given to the app's owner only, in
    /// one app's report only (`GET /ws/v1/cluster/apps/{app}`); absent
    /// otherwise.
    #[serde(rename = "amRMToken", default, skip_serializing_if = "Option::is_none")]
    pub am_rm_token: Option<String>,
    /// Not on the wire: true when the report leaves out what the caller
    /// may not see (`AppDto::withheld`), so a page can say so rather than
    /// show its zeros as figures.
    #[serde(skip)]
    pub withheld: bool,
}

/// YARN's name of a final status.
pub fn final_status_name(status: Option<FinalStatus>) -> &'static str {
    match status {
        None => "UNDEFINED",
        Some(FinalStatus::Succeeded) => "SUCCEEDED",
        Some(FinalStatus::Failed) => "FAILED",
        Some(FinalStatus::Killed) => "KILLED",
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

impl AppDto {
    /// The wire form of one app of `view`.
    pub fn from_view(view: &View, app: &AppView) -> AppDto {
        let queue_fair = view
            .queue(&app.report.record.queue)
            .map_or(0, |q| q.tree.fair_share.memory_mb());
        AppDto::from_parts(
            app,
            queue_fair,
            view.cluster.total.memory_mb(),
            view.now,
            view.epoch_origin_ms,
        )
    }

    /// The wire form of a fresh snapshot of one app.
    pub fn from_snapshot(s: &AppSnapshot) -> AppDto {
        AppDto::from_parts(
            &s.app,
            s.queue_fair_mb,
            s.cluster_mb,
            s.now,
            s.epoch_origin_ms,
        )
    }

    fn from_parts(
        app: &AppView,
        queue_fair: u64,
        cluster_mb: u64,
        now: Time,
        epoch_origin_ms: u64,
    ) -> AppDto {
        let r = &app.report;
        let rec = &r.record;
        let extra: &AppExtra = &app.extra;
        let epoch_ms = |t: Time| epoch_origin_ms + t.as_millis();
        let started = epoch_ms(rec.submitted);
        let end = rec.finished.unwrap_or(now);
        // Hadoop's trackingUI is UNASSIGNED until the app has an attempt
        // and has left ACCEPTED; an app refused at placement never had one.
        let tracking_ui = match rec.state {
            AppState::Rejected => "UNASSIGNED",
            s if s.is_final() => "History",
            AppState::Running => "ApplicationMaster",
            _ => "UNASSIGNED",
        };
        AppDto {
            id: rec.id.to_string(),
            user: rec.user.clone(),
            name: rec.name.clone(),
            queue: rec.queue.to_string(),
            state: rec.state.yarn_name().to_owned(),
            final_status: final_status_name(rec.final_status).to_owned(),
            progress: if rec.state == AppState::Finished {
                100.0
            } else {
                rec.progress * 100.0
            },
            tracking_ui: tracking_ui.to_owned(),
            tracking_url: extra.tracking_url.clone().unwrap_or_default(),
            diagnostics: rec.diagnostics.clone(),
            cluster_id: rec.id.cluster_timestamp,
            application_type: rec.app_type.clone(),
            application_tags: rec.tags.join(","),
            priority: rec.priority.0,
            started_time: started,
            launch_time: rec.launched.map_or(0, epoch_ms),
            finished_time: rec.finished.map_or(0, epoch_ms),
            elapsed_time: end.since(rec.submitted).as_millis(),
            am_container_logs: String::new(),
            am_host_http_address: extra
                .am_node
                .as_ref()
                .map(|(_, http)| http.clone())
                .unwrap_or_default(),
            am_rpc_address: match (&extra.am_host, extra.am_rpc_port) {
                (Some(h), Some(p)) => format!("{h}:{p}"),
                (Some(h), None) => h.clone(),
                _ => String::new(),
            },
            allocated_mb: r.allocated.memory_mb(),
            allocated_vcores: r.allocated.vcores(),
            reserved_mb: r.reserved.memory_mb(),
            reserved_vcores: r.reserved.vcores(),
            running_containers: r.running_containers,
            memory_seconds: rec.memory_mb_seconds,
            vcore_seconds: rec.vcore_seconds,
            queue_usage_percentage: percent(r.allocated.memory_mb(), queue_fair),
            cluster_usage_percentage: percent(r.allocated.memory_mb(), cluster_mb),
            preempted_resource_mb: rec.preempted_resource.memory_mb(),
            preempted_resource_v_cores: rec.preempted_resource.vcores(),
            num_non_am_container_preempted: rec.preempted_containers,
            num_am_container_preempted: rec.preempted_am_containers,
            log_aggregation_status: "DISABLED".to_owned(),
            unmanaged_application: extra.unmanaged,
            app_node_label_expression: String::new(),
            am_node_label_expression: String::new(),
            pending_mb: r.pending.memory_mb(),
            pending_vcores: r.pending.vcores(),
            fair_share_mb: r.fair_share.memory_mb(),
            timeouts: Some(AppTimeoutsDto {
                timeout: vec![AppTimeoutDto::lifetime(
                    lifetime_expiry_ms(app, epoch_origin_ms),
                    rec.state.is_final(),
                    epoch_ms(now),
                )],
            }),
            am_rm_token: None,
            withheld: false,
        }
    }

    /// The report for a caller who may not see the app's details (no
    /// `VIEW_APP` right while ACLs are on), as Hadoop's `AppInfo` gives it
    /// without access: its times, where its AM runs and what it holds are
    /// left out (0, or empty where Hadoop leaves a field out), and so are
    /// Weft's usage additions; who and what it is, its state, progress,
    /// diagnostics, tracking URL, priority, aggregate and preempted
    /// resources and timeouts stay, as in Hadoop.
    pub fn withheld(self) -> AppDto {
        AppDto {
            started_time: 0,
            launch_time: 0,
            finished_time: 0,
            elapsed_time: 0,
            am_container_logs: String::new(),
            am_host_http_address: String::new(),
            am_rpc_address: String::new(),
            allocated_mb: 0,
            allocated_vcores: 0,
            reserved_mb: 0,
            reserved_vcores: 0,
            running_containers: 0,
            queue_usage_percentage: 0.0,
            cluster_usage_percentage: 0.0,
            log_aggregation_status: String::new(),
            pending_mb: 0,
            pending_vcores: 0,
            fair_share_mb: 0,
            am_rm_token: None,
            withheld: true,
            ..self
        }
    }
}

/// YARN's one application timeout type (`ApplicationTimeoutType`).
pub const LIFETIME: &str = "LIFETIME";

/// Hadoop's `expiryTime` of a timeout that is not set.
pub const UNLIMITED: &str = "UNLIMITED";

/// The longest lifetime taken, in seconds (Hadoop takes any `long`): about
/// 3,000 years, which keeps every expiry within the four-digit years ISO
/// 8601 writes.
pub const MAX_LIFETIME_SECS: u64 = 100_000_000_000;

/// One timeout, in Hadoop's `AppTimeoutInfo` shape: `{"type": "LIFETIME",
/// "expiryTime": "2030-01-31T18:30:00.000+0000", "remainingTimeInSeconds": 27}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppTimeoutDto {
    /// `LIFETIME`.
    #[serde(rename = "type")]
    pub timeout_type: String,
    /// When the app is killed, in ISO 8601 (UTC), or `UNLIMITED`.
    pub expiry_time: String,
    /// Whole seconds left (0 once passed or once the app ended), or -1
    /// when unlimited.
    pub remaining_time_in_seconds: i64,
}

/// When `app` is (or was) killed for its lifetime, in wall-clock ms.
pub fn lifetime_expiry_ms(app: &AppView, epoch_origin_ms: u64) -> Option<u64> {
    app.report
        .record
        .lifetime_expiry
        .map(|t| epoch_origin_ms.saturating_add(t.as_millis()))
}

impl AppTimeoutDto {
    /// A lifetime expiring at `expiry_ms` (wall-clock ms, `None` for no
    /// limit), as Hadoop reports it at `now_ms`.
    pub fn lifetime(expiry_ms: Option<u64>, ended: bool, now_ms: u64) -> AppTimeoutDto {
        let Some(at) = expiry_ms else {
            return AppTimeoutDto {
                timeout_type: LIFETIME.to_owned(),
                expiry_time: UNLIMITED.to_owned(),
                remaining_time_in_seconds: -1,
            };
        };
        let remaining = if ended {
            0
        } else {
            at.saturating_sub(now_ms) / 1000
        };
        AppTimeoutDto {
            timeout_type: LIFETIME.to_owned(),
            expiry_time: EpochMs(i64::try_from(at).unwrap_or(i64::MAX)).to_string(),
            remaining_time_in_seconds: i64::try_from(remaining).unwrap_or(i64::MAX),
        }
    }
}

/// `{"timeouts": {"timeout": [...]}}`: every timeout of an app.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppTimeoutsDto {
    /// The timeouts (Weft has one type, so one).
    #[serde(default)]
    pub timeout: Vec<AppTimeoutDto>,
}

/// The body of `PUT /apps/{id}/timeout`: Hadoop's
/// `{"timeout": {"type": "LIFETIME", "expiryTime": "..."}}`, or, in XML,
/// `<timeout>` with those two elements. The JSON fields are also taken
/// without the wrapping object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppTimeoutUpdateDto {
    /// The wrapped form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<AppTimeoutFields>,
    /// The type, unwrapped (and in XML).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub timeout_type: Option<String>,
    /// The expiry, unwrapped (and in XML).
    #[serde(
        rename = "expiryTime",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub expiry_time: Option<String>,
}

/// The fields of a timeout update.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppTimeoutFields {
    /// `LIFETIME`.
    #[serde(rename = "type", default)]
    pub timeout_type: Option<String>,
    /// The new expiry, in ISO 8601.
    #[serde(rename = "expiryTime", default)]
    pub expiry_time: Option<String>,
}

impl AppTimeoutUpdateDto {
    /// The body that sets the app's lifetime expiry to `expiry`.
    pub fn lifetime(expiry: EpochMs) -> AppTimeoutUpdateDto {
        AppTimeoutUpdateDto {
            timeout: Some(AppTimeoutFields {
                timeout_type: Some(LIFETIME.to_owned()),
                expiry_time: Some(expiry.to_string()),
            }),
            ..AppTimeoutUpdateDto::default()
        }
    }

    /// The new expiry, checked: the type must be `LIFETIME` and the time
    /// ISO 8601 (whether it is in the future is for the caller to say).
    pub fn expiry(&self) -> Result<EpochMs, InvalidField> {
        let wrapped = self.timeout.as_ref();
        let timeout_type = wrapped
            .and_then(|t| t.timeout_type.as_deref())
            .or(self.timeout_type.as_deref());
        let expiry_time = wrapped
            .and_then(|t| t.expiry_time.as_deref())
            .or(self.expiry_time.as_deref());
        let Some(timeout_type) = timeout_type else {
            return Err(InvalidField::new(
                "type",
                "missing: the timeout type is needed (LIFETIME)",
            ));
        };
        timeout_type_named("type", timeout_type)?;
        let Some(expiry_time) = expiry_time else {
            return Err(InvalidField::new(
                "expiryTime",
                "missing: the new expiry time is needed, in ISO 8601 (2030-01-31T18:30:00.000+0000)",
            ));
        };
        crate::iso8601::parse(expiry_time)
            .map_err(|e| InvalidField::new("expiryTime", e.to_string()))
    }
}

/// Checks a timeout type as Hadoop reads it (trimmed, any case): only `LIFETIME`.
pub fn timeout_type_named(field: &str, text: &str) -> Result<(), InvalidField> {
    if text.trim().eq_ignore_ascii_case(LIFETIME) {
        Ok(())
    } else {
        Err(InvalidField::new(
            field,
            format!("invalid timeout type {text:?}; the only type is {LIFETIME}"),
        ))
    }
}

/// YARN's application states, the values a `states` filter may name, in
/// its enum's order (the CLI's `-list` shows the states asked for in this
/// order, as YARN's prints its `EnumSet`).
pub const APP_STATES: &[&str] = &[
    "NEW",
    "NEW_SAVING",
    "SUBMITTED",
    "ACCEPTED",
    "RUNNING",
    "FINISHED",
    "FAILED",
    "KILLED",
];

/// YARN's final statuses, the values a `finalStatus` filter may name.
pub const FINAL_STATUSES: &[&str] = &["UNDEFINED", "SUCCEEDED", "FAILED", "KILLED"];

/// The fields `deSelects` may name, matched ignoring case as Hadoop's
/// `DeSelectFields` matches them: its own `resourceRequests`, and the
/// `resouceRequests` (sic) its documentation tells clients to send.
pub const DESELECTABLE: &[&str] = &[
    "resourceRequests",
    "resouceRequests",
    "timeouts",
    "appNodeLabelExpression",
    "amNodeLabelExpression",
    "resourceInfo",
];

/// The query parameters of `GET /ws/v1/cluster/apps`, as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppsQuery {
    /// Comma-separated states.
    pub states: Option<String>,
    /// One state (deprecated).
    pub state: Option<String>,
    /// Final status.
    pub final_status: Option<String>,
    /// Submitting user.
    pub user: Option<String>,
    /// Queue (short or full name).
    pub queue: Option<String>,
    /// Application name.
    pub name: Option<String>,
    /// Most apps to return.
    pub limit: Option<String>,
    /// Submitted at or after (ms).
    pub started_time_begin: Option<String>,
    /// Submitted at or before (ms).
    pub started_time_end: Option<String>,
    /// Finished at or after (ms).
    pub finished_time_begin: Option<String>,
    /// Finished at or before (ms).
    pub finished_time_end: Option<String>,
    /// Comma-separated types.
    pub application_types: Option<String>,
    /// Comma-separated tags (any matches).
    pub application_tags: Option<String>,
    /// Fields to leave out.
    pub de_selects: Option<String>,
}

/// A validated `apps` filter, built only from a query (`AppsQuery::to_filter`):
/// no `Default`, since a zeroed time range would match no app at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppFilter {
    states: BTreeSet<String>,
    final_status: Option<String>,
    user: Option<String>,
    queue: Option<QueuePath>,
    name: Option<String>,
    limit: Option<usize>,
    started: (u64, u64),
    finished: (u64, u64),
    types: BTreeSet<String>,
    tags: BTreeSet<String>,
    /// `deSelects=timeouts`: the reports leave their timeouts out.
    without_timeouts: bool,
}

fn comma_list(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty())
}

fn time_param(name: &str, text: Option<&str>) -> Result<Option<u64>, InvalidField> {
    let Some(text) = text else { return Ok(None) };
    text.trim().parse::<u64>().map(Some).map_err(|_| {
        InvalidField::new(
            name,
            format!("{text:?} is not a time: expected non-negative milliseconds since the epoch"),
        )
    })
}

fn time_range(
    begin_name: &str,
    begin: Option<&str>,
    end_name: &str,
    end: Option<&str>,
) -> Result<(u64, u64), InvalidField> {
    let b = time_param(begin_name, begin)?.unwrap_or(0);
    let e = time_param(end_name, end)?.unwrap_or(u64::MAX);
    if b > e {
        return Err(InvalidField::new(
            begin_name,
            format!("{begin_name} ({b}) is after {end_name} ({e})"),
        ));
    }
    Ok((b, e))
}

impl AppsQuery {
    /// The query from the query string's pairs, read as Hadoop's JAX-RS
    /// resource reads them: the list parameters (`states`,
    /// `applicationTypes`, `applicationTags`, `deSelects`) may be repeated
    /// and their values add up (`states=RUNNING&states=ACCEPTED`, each value
    /// itself comma-separated); any other parameter takes its first value;
    /// parameters it does not know (`user.name`, ...) are ignored.
    pub fn from_pairs(pairs: &[(String, String)]) -> AppsQuery {
        let mut q = AppsQuery::default();
        for (key, value) in pairs {
            let list = match key.as_str() {
                "states" => &mut q.states,
                "applicationTypes" => &mut q.application_types,
                "applicationTags" => &mut q.application_tags,
                "deSelects" => &mut q.de_selects,
                _ => {
                    let single = match key.as_str() {
                        "state" => &mut q.state,
                        "finalStatus" => &mut q.final_status,
                        "user" => &mut q.user,
                        "queue" => &mut q.queue,
                        "name" => &mut q.name,
                        "limit" => &mut q.limit,
                        "startedTimeBegin" => &mut q.started_time_begin,
                        "startedTimeEnd" => &mut q.started_time_end,
                        "finishedTimeBegin" => &mut q.finished_time_begin,
                        "finishedTimeEnd" => &mut q.finished_time_end,
                        _ => continue,
                    };
                    single.get_or_insert_with(|| value.clone());
                    continue;
                }
            };
            match list {
                Some(text) => {
                    text.push(',');
                    text.push_str(value);
                }
                None => *list = Some(value.clone()),
            }
        }
        q
    }

    /// Checks every parameter, naming the first bad one. A parameter given
    /// empty (`limit=`) counts as not given, as Hadoop reads it.
    pub fn to_filter(&self) -> Result<AppFilter, InvalidField> {
        let given = |p: &Option<String>| p.clone().filter(|v| !v.trim().is_empty());
        let q = AppsQuery {
            states: given(&self.states),
            state: given(&self.state),
            final_status: given(&self.final_status),
            user: given(&self.user),
            queue: given(&self.queue),
            name: given(&self.name),
            limit: given(&self.limit),
            started_time_begin: given(&self.started_time_begin),
            started_time_end: given(&self.started_time_end),
            finished_time_begin: given(&self.finished_time_begin),
            finished_time_end: given(&self.finished_time_end),
            application_types: given(&self.application_types),
            application_tags: given(&self.application_tags),
            de_selects: given(&self.de_selects),
        };
        q.checked()
    }

    fn checked(&self) -> Result<AppFilter, InvalidField> {
        let mut states = BTreeSet::new();
        for (param, text) in [("states", &self.states), ("state", &self.state)] {
            if let Some(text) = text {
                for s in comma_list(text) {
                    let upper = s.to_ascii_uppercase();
                    if !APP_STATES.contains(&upper.as_str()) {
                        return Err(InvalidField::new(
                            param,
                            format!(
                                "invalid application state {s:?}; expected one of {}",
                                APP_STATES.join(", ")
                            ),
                        ));
                    }
                    states.insert(upper);
                }
            }
        }
        let final_status = match &self.final_status {
            Some(s) => {
                let upper = s.trim().to_ascii_uppercase();
                if !FINAL_STATUSES.contains(&upper.as_str()) {
                    return Err(InvalidField::new(
                        "finalStatus",
                        format!(
                            "invalid final status {s:?}; expected one of {}",
                            FINAL_STATUSES.join(", ")
                        ),
                    ));
                }
                Some(upper)
            }
            None => None,
        };
        let limit = match &self.limit {
            Some(text) => match text.trim().parse::<i64>() {
                Ok(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => {
                    return Err(InvalidField::new(
                        "limit",
                        format!("{text:?} is not a limit: expected a positive integer"),
                    ));
                }
            },
            None => None,
        };
        let queue = match &self.queue {
            Some(q) if !q.trim().is_empty() => Some(parse_field::<QueuePath>("queue", q.trim())?),
            _ => None,
        };
        let mut without_timeouts = false;
        if let Some(d) = &self.de_selects {
            for field in comma_list(d) {
                without_timeouts |= field.eq_ignore_ascii_case("timeouts");
                if !DESELECTABLE.iter().any(|d| d.eq_ignore_ascii_case(field)) {
                    return Err(InvalidField::new(
                        "deSelects",
                        format!(
                            "{field:?} cannot be deselected; expected one of {}",
                            DESELECTABLE.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(AppFilter {
            states,
            final_status,
            user: self.user.clone().filter(|u| !u.is_empty()),
            queue,
            name: self.name.clone().filter(|n| !n.is_empty()),
            limit,
            started: time_range(
                "startedTimeBegin",
                self.started_time_begin.as_deref(),
                "startedTimeEnd",
                self.started_time_end.as_deref(),
            )?,
            finished: time_range(
                "finishedTimeBegin",
                self.finished_time_begin.as_deref(),
                "finishedTimeEnd",
                self.finished_time_end.as_deref(),
            )?,
            types: self
                .application_types
                .as_deref()
                .map(|t| comma_list(t).map(str::to_ascii_uppercase).collect())
                .unwrap_or_default(),
            tags: self
                .application_tags
                .as_deref()
                .map(|t| comma_list(t).map(str::to_ascii_lowercase).collect())
                .unwrap_or_default(),
            without_timeouts,
        })
    }
}

impl AppFilter {
    /// The states asked for (YARN's names, upper case); empty: any.
    pub fn states(&self) -> &BTreeSet<String> {
        &self.states
    }

    /// The application types asked for (upper case); empty: any.
    pub fn types(&self) -> &BTreeSet<String> {
        &self.types
    }

    /// The apps of `view` that pass, by id, at most `limit` of them, each
    /// as `listing` says: whole, withheld (`AppDto::withheld`) or left out.
    /// The limit counts only the apps listed, so a caller asking for ten
    /// gets ten they may see when there are that many.
    pub fn apply(&self, view: &View, listing: impl Fn(&AppView) -> ListedAs) -> Vec<AppDto> {
        self.take(view, view.apps.values(), listing)
    }

    /// The apps of `view` that pass, newest (highest id) first, at most
    /// `limit` of them: the newest, as a person looking at a list wants them.
    pub fn apply_newest_first(
        &self,
        view: &View,
        listing: impl Fn(&AppView) -> ListedAs,
    ) -> Vec<AppDto> {
        self.take(view, view.apps.values().rev(), listing)
    }

    fn take<'v>(
        &self,
        view: &View,
        apps: impl Iterator<Item = &'v AppView>,
        listing: impl Fn(&AppView) -> ListedAs,
    ) -> Vec<AppDto> {
        apps.filter(|a| self.matches(view, a))
            .filter_map(|a| {
                let shown = listing(a);
                if shown == ListedAs::LeftOut {
                    return None;
                }
                let mut dto = AppDto::from_view(view, a);
                if shown == ListedAs::Withheld {
                    dto = dto.withheld();
                }
                if self.without_timeouts {
                    dto.timeouts = None;
                }
                Some(dto)
            })
            .take(self.limit.unwrap_or(usize::MAX))
            .collect()
    }

    fn matches(&self, view: &View, app: &AppView) -> bool {
        let rec = &app.report.record;
        if !self.states.is_empty() && !self.states.contains(rec.state.yarn_name()) {
            return false;
        }
        if let Some(fs) = &self.final_status
            && final_status_name(rec.final_status) != fs
        {
            return false;
        }
        if self.user.as_ref().is_some_and(|u| *u != rec.user) {
            return false;
        }
        if self.name.as_ref().is_some_and(|n| *n != rec.name) {
            return false;
        }
        if let Some(q) = &self.queue
            && (rec.state.is_final() || *q != rec.queue)
        {
            return false;
        }
        let started = view.epoch_ms(rec.submitted);
        if started < self.started.0 || started > self.started.1 {
            return false;
        }
        let finished = rec.finished.map_or(0, |t| view.epoch_ms(t));
        if finished < self.finished.0 || finished > self.finished.1 {
            return false;
        }
        if !self.types.is_empty() && !self.types.contains(&rec.app_type.to_ascii_uppercase()) {
            return false;
        }
        if !self.tags.is_empty()
            && !rec
                .tags
                .iter()
                .any(|t| self.tags.contains(&t.to_ascii_lowercase()))
        {
            return false;
        }
        true
    }
}

/// `POST /ws/v1/cluster/apps/new-application`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct NewApplicationDto {
    /// The id to submit with.
    pub application_id: String,
    /// The largest container anyone may ask for.
    pub maximum_resource_capability: ResourceDto,
}

/// `POST /ws/v1/cluster/apps`: Hadoop's application submission context.
/// Fields Weft does not use are accepted and ignored (see `docs/api.md`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct SubmitApplicationDto {
    /// The id from `new-application` (required).
    #[serde(default)]
    pub application_id: Option<String>,
    /// Name (default `N/A`).
    #[serde(default)]
    pub application_name: Option<String>,
    /// Queue asked for (placement decides).
    #[serde(default)]
    pub queue: Option<String>,
    /// Application priority (default 0).
    #[serde(default)]
    pub priority: Option<i32>,
    /// The AM's launch context, handed unchanged to the node that runs it;
    /// its `application-acls` are the app's `VIEW_APP` and `MODIFY_APP`
    /// ACLs. Read so that a key given more than once (XML's repeated
    /// `<entry>` elements) keeps every value, as a list.
    #[serde(default, deserialize_with = "launch_spec")]
    pub am_container_spec: Option<serde_json::Value>,
    /// True when the submitter runs the AM itself (no AM container).
    #[serde(rename = "unmanaged-AM", default)]
    pub unmanaged_am: Option<bool>,
    /// Attempts the app gets before it fails. Any whole number, as Hadoop's
    /// Java `int`: 0 or less, or more than the RM-wide
    /// `yarn.resourcemanager.am.max-attempts`, means the RM-wide value.
    #[serde(default)]
    pub max_app_attempts: Option<i64>,
    /// The AM container's size (default: the minimum allocation).
    #[serde(default)]
    pub resource: Option<ResourceDto>,
    /// Type (default `YARN`).
    #[serde(default)]
    pub application_type: Option<String>,
    /// Accepted and ignored.
    #[serde(default)]
    pub keep_containers_across_application_attempts: Option<bool>,
    /// Tags.
    #[serde(default)]
    pub application_tags: Option<TagsDto>,
    /// Weft's addition (Hadoop's REST submission has no timeouts, though
    /// its RPC submission context does): timeouts by type, in seconds from
    /// submission, `{"LIFETIME": 3600}`; in XML
    /// `<application-timeouts><LIFETIME>3600</LIFETIME></application-timeouts>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_timeouts: Option<BTreeMap<String, i64>>,
}

/// `{"tag": ["a", "b"]}` (or a single string); in XML, repeated `<tag>` elements.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TagsDto {
    /// The tags.
    pub tag: Vec<String>,
}

impl<'de> Deserialize<'de> for TagsDto {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TagsDto, D::Error> {
        struct Tags;
        impl<'de> serde::de::Visitor<'de> for Tags {
            type Value = TagsDto;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object with a tag field")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<TagsDto, A::Error> {
                let mut tag = Vec::new();
                // XML repeats the key once per tag; JSON gives one key with a list.
                while let Some(key) = map.next_key::<String>()? {
                    if key == "tag" {
                        tag.extend(map.next_value::<one_or_many::Strings>()?.0);
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(TagsDto { tag })
            }
        }
        d.deserialize_map(Tags)
    }
}

impl SubmitApplicationDto {
    /// The core's submission by `user` (in `groups`) and the shell's extras;
    /// `default_am` sizes an AM the body leaves unsized.
    pub fn to_submission(
        &self,
        user: &str,
        groups: Vec<String>,
        default_am: Resource,
    ) -> Result<(Submission, AppExtra), InvalidField> {
        let Some(id) = self.application_id.as_deref() else {
            return Err(InvalidField::new(
                "application-id",
                "missing: ask POST /ws/v1/cluster/apps/new-application for one",
            ));
        };
        let app: AppId = parse_field("application-id", id.trim())?;
        let unmanaged = self.unmanaged_am.unwrap_or(false);
        let am_resource = if unmanaged {
            None
        } else {
            let res = self.resource.map_or(default_am, ResourceDto::to_resource);
            if ResourceType::ALL.iter().all(|t| res.get(*t) == 0) {
                return Err(InvalidField::new(
                    "resource",
                    "the application master's container must ask for some memory or vcores",
                ));
            }
            Some(res)
        };
        let tags = match &self.application_tags {
            Some(t) => app_tags(&t.tag)?,
            None => Vec::new(),
        };
        let lifetime = match &self.application_timeouts {
            Some(timeouts) => app_lifetime(timeouts)?,
            None => None,
        };
        let submission = Submission {
            app,
            user: user.to_owned(),
            groups,
            queue: self.queue.clone(),
            priority: AppPriority(self.priority.unwrap_or(0)),
            am_resource,
            name: self
                .application_name
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "N/A".to_owned()),
            // Hadoop's RM cuts a type to its first 20 characters
            // (`APPLICATION_TYPE_LENGTH`), so that is what reports show and
            // `applicationTypes=` filters match.
            app_type: self
                .application_type
                .as_deref()
                .filter(|t| !t.is_empty())
                .map_or_else(
                    || "YARN".to_owned(),
                    |t| t.chars().take(MAX_APP_TYPE_LENGTH).collect(),
                ),
            tags,
            lifetime,
            // Past `u32` is past any RM-wide value too, so the core takes
            // the RM-wide one either way.
            max_attempts: self
                .max_app_attempts
                .filter(|n| *n > 0)
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        };
        let launch_context = self.am_container_spec.clone().map(unwrap_xml_text);
        let acls = match &launch_context {
            Some(spec) => app_acls(spec)?,
            None => AppAcls::default(),
        };
        let extra = AppExtra {
            launch_context: launch_context.map(std::sync::Arc::new),
            unmanaged,
            acls,
            ..AppExtra::default()
        };
        Ok((submission, extra))
    }
}

/// Longest application type kept (Hadoop's `APPLICATION_TYPE_LENGTH`).
pub const MAX_APP_TYPE_LENGTH: usize = 20;

/// Most tags an app may have (Hadoop's `YarnConfiguration.APPLICATION_MAX_TAGS`).
pub const MAX_APP_TAGS: usize = 10;

/// Longest tag (Hadoop's `APPLICATION_MAX_TAG_LENGTH`).
pub const MAX_APP_TAG_LENGTH: usize = 100;

/// An app's tags as Hadoop keeps them: lowercased and without repeats
/// (its submission context lowercases them into a set), so reports show
/// `etl` for `ETL` and tag filters match whatever the case; sorted, where
/// Hadoop's set has no order, so reports are the same every time. Hadoop's
/// limits apply: at most 10 tags of at most 100 ASCII characters each.
fn app_tags(given: &[String]) -> Result<Vec<String>, InvalidField> {
    let mut tags = BTreeSet::new();
    for tag in given.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        if !tag.is_ascii() {
            return Err(InvalidField::new(
                "application-tags",
                format!("tag {tag:?} has a character that is not ASCII; tags are ASCII only"),
            ));
        }
        if tag.len() > MAX_APP_TAG_LENGTH {
            return Err(InvalidField::new(
                "application-tags",
                format!(
                    "a tag is {} characters long; at most {MAX_APP_TAG_LENGTH} are allowed",
                    tag.len()
                ),
            ));
        }
        tags.insert(tag.to_ascii_lowercase());
    }
    if tags.len() > MAX_APP_TAGS {
        return Err(InvalidField::new(
            "application-tags",
            format!(
                "{} tags given; at most {MAX_APP_TAGS} are allowed",
                tags.len()
            ),
        ));
    }
    Ok(tags.into_iter().collect())
}

/// The lifetime `application-timeouts` asks for: the seconds of its one
/// `LIFETIME` entry, which must be positive (Hadoop refuses a timeout that
/// is not); any other type is refused.
fn app_lifetime(timeouts: &BTreeMap<String, i64>) -> Result<Option<Duration>, InvalidField> {
    let mut lifetime = None;
    for (kind, &secs) in timeouts {
        timeout_type_named("application-timeouts", kind)?;
        let Some(secs) = u64::try_from(secs)
            .ok()
            .filter(|s| (1..=MAX_LIFETIME_SECS).contains(s))
        else {
            return Err(InvalidField::new(
                "application-timeouts",
                format!(
                    "the {LIFETIME} timeout is {secs} seconds; it must be a positive number of seconds, at most {MAX_LIFETIME_SECS}"
                ),
            ));
        };
        if lifetime.replace(Duration::from_secs(secs)).is_some() {
            return Err(InvalidField::new(
                "application-timeouts",
                format!("{LIFETIME} is given twice"),
            ));
        }
    }
    Ok(lifetime)
}

/// Where the app's ACLs are in a submission.
const ACLS_FIELD: &str = "am-container-spec.application-acls";

/// The app's ACLs from its launch context's `application-acls`, in any
/// form Hadoop's clients send them: `{"entry": [{"key": "VIEW_APP",
/// "value": "alice,bob admins"}, ...]}` (one entry may come as an object,
/// as XML gives it), or `{"VIEW_APP": "...", "MODIFY_APP": "..."}`. A type
/// not given is nobody's. An unknown type, a type given twice, a value
/// that is not text or an ACL that cannot mean what was meant
/// (`app_acl`) is refused, naming where.
fn app_acls(spec: &serde_json::Value) -> Result<AppAcls, InvalidField> {
    use serde_json::Value;
    let mut acls = AppAcls::default();
    let Some(given) = spec.get("application-acls") else {
        return Ok(acls);
    };
    let pairs: Vec<(String, String, &Value)> = match given {
        Value::Null => return Ok(acls),
        Value::Object(map) => match map.get("entry") {
            Some(entries) => {
                let list = match entries {
                    Value::Array(list) => list.iter().collect(),
                    one => vec![one],
                };
                let mut pairs = Vec::with_capacity(list.len());
                for (i, e) in list.into_iter().enumerate() {
                    let field = format!("{ACLS_FIELD}.entry[{i}]");
                    match (e.get("key").and_then(Value::as_str), e.get("value")) {
                        (Some(key), Some(value)) => pairs.push((field, key.to_owned(), value)),
                        _ => {
                            return Err(InvalidField::new(
                                field,
                                "expected {\"key\": \"VIEW_APP\" or \"MODIFY_APP\", \"value\": \"users groups\"}",
                            ));
                        }
                    }
                }
                pairs
            }
            None => map
                .iter()
                .map(|(k, v)| (format!("{ACLS_FIELD}.{k}"), k.clone(), v))
                .collect(),
        },
        _ => {
            return Err(InvalidField::new(
                ACLS_FIELD,
                "expected an object of ACLs by type (VIEW_APP, MODIFY_APP)",
            ));
        }
    };
    let mut seen = BTreeSet::new();
    for (field, key, value) in pairs {
        let kind = key.trim().to_ascii_uppercase();
        let slot = match kind.as_str() {
            VIEW_APP => &mut acls.view,
            MODIFY_APP => &mut acls.modify,
            _ => {
                return Err(InvalidField::new(
                    field,
                    format!("unknown ACL type {key:?}; expected {VIEW_APP} or {MODIFY_APP}"),
                ));
            }
        };
        if !seen.insert(kind.clone()) {
            return Err(InvalidField::new(field, format!("{kind} is given twice")));
        }
        let text = match value {
            Value::String(text) => text.as_str(),
            // XML gives an empty element as an empty object: an empty ACL.
            Value::Null => "",
            Value::Object(map) if map.is_empty() => "",
            _ => {
                return Err(InvalidField::new(
                    field,
                    format!("the {kind} ACL must be text (\"users groups\")"),
                ));
            }
        };
        *slot = app_acl(&field, &kind, text)?;
    }
    Ok(acls)
}

/// One ACL in Hadoop's form: users, comma-separated, before the first
/// space, groups after it; `*` alone is everybody; empty or a lone space is
/// nobody. Hadoop takes any text and reads it that way, which turns some
/// slips into other lists without a word; these are refused instead, as
/// none can mean what its writer meant: a control character, a name with
/// a space inside (a third space-separated part: `alice bob carol` makes
/// `bob carol` one group), a user list ending in a comma (`alice, bob` makes
/// `bob` a group), and `*` beside names (Hadoop then lets everybody in).
fn app_acl(field: &str, kind: &str, text: &str) -> Result<Acl, InvalidField> {
    let refuse = |why: String| {
        Err(InvalidField::new(
            field,
            format!("{kind} ACL {text:?}: {why}"),
        ))
    };
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return refuse(format!("contains the control character {c:?}"));
    }
    if text.trim() == "*" {
        return Ok(Acl::everyone());
    }
    let (users, groups) = text.split_once(' ').unwrap_or((text, ""));
    if users.trim_end().ends_with(',') && !groups.trim().is_empty() {
        return refuse(format!(
            "the users end in a comma before the space that starts the groups, so {:?} would be groups; write users without spaces (\"alice,bob\"), then one space, then groups",
            groups.trim()
        ));
    }
    for (list, what) in [(users, "user"), (groups, "group")] {
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name.contains(char::is_whitespace) {
                return refuse(format!(
                    "{what} {name:?} has a space in it; an ACL is users (comma-separated), one space, then groups (comma-separated): \"alice,bob admins\""
                ));
            }
            if name.contains('*') {
                return refuse(format!(
                    "{what} {name:?} has a '*'; \"*\" (everybody) must be the whole ACL"
                ));
            }
        }
    }
    Ok(Acl::parse(text))
}

/// Reads `am-container-spec` as any JSON value, except that a key an object
/// repeats keeps all its values, as a list: XML gives a list as repeated
/// elements (`<entry>...</entry><entry>...</entry>`), which a plain
/// `serde_json::Value` would cut to the last one.
fn launch_spec<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    Ok(Option::<Listing>::deserialize(d)?.map(|l| l.0))
}

/// A value read with repeated keys kept (see `launch_spec`).
struct Listing(serde_json::Value);

impl<'de> Deserialize<'de> for Listing {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Listing, D::Error> {
        use serde::de::{MapAccess, SeqAccess, Visitor};
        use serde_json::Value;

        struct Any;

        impl<'de> Visitor<'de> for Any {
            type Value = Listing;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any value")
            }

            fn visit_bool<E>(self, v: bool) -> Result<Listing, E> {
                Ok(Listing(Value::Bool(v)))
            }

            fn visit_i64<E>(self, v: i64) -> Result<Listing, E> {
                Ok(Listing(Value::from(v)))
            }

            fn visit_u64<E>(self, v: u64) -> Result<Listing, E> {
                Ok(Listing(Value::from(v)))
            }

            fn visit_f64<E>(self, v: f64) -> Result<Listing, E> {
                Ok(Listing(Value::from(v)))
            }

            fn visit_str<E>(self, v: &str) -> Result<Listing, E> {
                Ok(Listing(Value::String(v.to_owned())))
            }

            fn visit_string<E>(self, v: String) -> Result<Listing, E> {
                Ok(Listing(Value::String(v)))
            }

            fn visit_none<E>(self) -> Result<Listing, E> {
                Ok(Listing(Value::Null))
            }

            fn visit_unit<E>(self) -> Result<Listing, E> {
                Ok(Listing(Value::Null))
            }

            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Listing, D::Error> {
                Listing::deserialize(d)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Listing, A::Error> {
                let mut items = Vec::new();
                while let Some(Listing(v)) = seq.next_element()? {
                    items.push(v);
                }
                Ok(Listing(Value::Array(items)))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Listing, A::Error> {
                let mut out = serde_json::Map::new();
                let mut repeated = BTreeSet::new();
                while let Some((key, Listing(v))) = map.next_entry::<String, Listing>()? {
                    match out.get_mut(&key) {
                        None => {
                            out.insert(key, v);
                        }
                        Some(Value::Array(items)) if repeated.contains(&key) => items.push(v),
                        Some(first) => {
                            let first = first.take();
                            out.insert(key.clone(), Value::Array(vec![first, v]));
                            repeated.insert(key);
                        }
                    }
                }
                Ok(Listing(Value::Object(out)))
            }
        }

        d.deserialize_any(Any)
    }
}

/// An XML body read as JSON values shows an element's text as
/// `{"$text": "..."}`; the launch context is handed on as if it had been JSON.
fn unwrap_xml_text(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(map) if map.len() == 1 && map.contains_key("$text") => map
            .into_iter()
            .next()
            .map(|(_, v)| v)
            .unwrap_or(Value::Null),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, unwrap_xml_text(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(unwrap_xml_text).collect()),
        other => other,
    }
}

/// `{"state": "KILLED"}`: the body and answer of `/apps/{id}/state`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppStateDto {
    /// YARN's state name.
    pub state: String,
    /// Why (accepted on PUT, used as the kill's diagnostics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<String>,
}

/// `{"queue": "root.a"}`: the body and answer of `/apps/{id}/queue`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppQueueDto {
    /// The queue.
    pub queue: String,
}

/// `{"priority": 3}`: the body and answer of `/apps/{id}/priority`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppPriorityDto {
    /// The priority.
    pub priority: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> AppsQuery {
        let mut map = serde_json::Map::new();
        for (k, v) in pairs {
            map.insert((*k).to_owned(), serde_json::Value::String((*v).to_owned()));
        }
        serde_json::from_value(serde_json::Value::Object(map)).unwrap()
    }

    #[test]
    fn filters_reject_bad_values_naming_the_parameter() {
        let cases = [
            (vec![("states", "RUNNING,BOGUS")], "states"),
            (vec![("state", "nope")], "state"),
            (vec![("finalStatus", "ENDED")], "finalStatus"),
            (vec![("limit", "0")], "limit"),
            (vec![("limit", "-3")], "limit"),
            (vec![("startedTimeBegin", "-1")], "startedTimeBegin"),
            (
                vec![("startedTimeBegin", "10"), ("startedTimeEnd", "5")],
                "startedTimeBegin",
            ),
            (vec![("finishedTimeEnd", "soon")], "finishedTimeEnd"),
            (vec![("deSelects", "everything")], "deSelects"),
            (vec![("queue", "a..b")], "queue"),
        ];
        for (pairs, field) in cases {
            let err = query(&pairs).to_filter().unwrap_err();
            assert_eq!(err.field, field, "{pairs:?}: {err}");
        }
    }

    #[test]
    fn filters_accept_hadoop_spellings() {
        let f = query(&[
            ("states", "running, accepted"),
            ("state", "FINISHED"),
            ("limit", "2"),
            ("queue", "eng"),
            ("applicationTypes", "mapreduce"),
            ("deSelects", "resouceRequests,ResourceRequests,TIMEOUTS"),
        ])
        .to_filter()
        .unwrap();
        assert_eq!(
            f.states.iter().cloned().collect::<Vec<_>>(),
            vec!["ACCEPTED", "FINISHED", "RUNNING"]
        );
        assert_eq!(f.limit, Some(2));
        assert_eq!(f.queue.unwrap().as_str(), "root.eng");
        assert!(f.types.contains("MAPREDUCE"));
    }

    #[test]
    fn list_parameters_add_up_and_others_take_their_first_value() {
        let pairs: Vec<(String, String)> = [
            ("states", "RUNNING"),
            ("user.name", "alice"),
            ("states", "accepted,FINISHED"),
            ("applicationTypes", "spark"),
            ("applicationTypes", "MAPREDUCE"),
            ("user", "bob"),
            ("user", "carol"),
            ("limit", ""),
            ("finalStatus", ""),
            ("startedTimeBegin", " "),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let f = AppsQuery::from_pairs(&pairs).to_filter().unwrap();
        assert_eq!(
            f.states.iter().cloned().collect::<Vec<_>>(),
            vec!["ACCEPTED", "FINISHED", "RUNNING"]
        );
        assert_eq!(
            f.types.iter().cloned().collect::<Vec<_>>(),
            vec!["MAPREDUCE", "SPARK"]
        );
        assert_eq!(f.user.as_deref(), Some("bob"));
        // Given empty: not given.
        assert_eq!(
            (f.limit, f.final_status, f.started),
            (None, None, (0, u64::MAX))
        );
    }

    #[test]
    fn submission_defaults_follow_hadoop() {
        let dto: SubmitApplicationDto = serde_json::from_str(
            r#"{"application-id":"application_5_0001","application-tags":{"tag":"etl"}}"#,
        )
        .unwrap();
        let (sub, extra) = dto
            .to_submission("alice", vec!["eng".into()], Resource::new(1024, 1))
            .unwrap();
        assert_eq!(sub.app, AppId::new(5, 1));
        assert_eq!(sub.name, "N/A");
        assert_eq!(sub.app_type, "YARN");
        assert_eq!(sub.tags, vec!["etl"]);
        assert_eq!(sub.am_resource, Some(Resource::new(1024, 1)));
        assert!(!extra.unmanaged);

        let dto: SubmitApplicationDto = serde_json::from_str(
            r#"{"application-id":"application_5_0002","unmanaged-AM":true,"application-tags":{"tag":["a","b"]}}"#,
        )
        .unwrap();
        let (sub, extra) = dto
            .to_submission("bob", vec![], Resource::new(1024, 1))
            .unwrap();
        assert_eq!(sub.am_resource, None);
        assert_eq!(sub.tags, vec!["a", "b"]);
        assert!(extra.unmanaged);

        // A type is cut to 20 characters, as Hadoop's RM cuts it.
        let dto: SubmitApplicationDto = serde_json::from_str(
            r#"{"application-id":"application_5_0004","application-type":"a-type-of-twenty-five-ch"}"#,
        )
        .unwrap();
        let (sub, _) = dto
            .to_submission("bob", vec![], Resource::new(1024, 1))
            .unwrap();
        assert_eq!(sub.app_type, "a-type-of-twenty-fiv");

        // Ignored, so any whole number will do, as in Hadoop (-1: the default).
        let dto: SubmitApplicationDto = serde_json::from_str(
            r#"{"application-id":"application_5_0003","max-app-attempts":-1}"#,
        )
        .unwrap();
        assert!(
            dto.to_submission("carol", vec![], Resource::new(1024, 1))
                .is_ok()
        );
    }

    #[test]
    fn tags_are_kept_as_hadoop_keeps_them() {
        let submit = |tags: serde_json::Value| {
            let dto: SubmitApplicationDto = serde_json::from_value(serde_json::json!({
                "application-id": "application_5_0001",
                "application-tags": {"tag": tags},
            }))
            .unwrap();
            dto.to_submission("alice", vec![], Resource::new(1024, 1))
                .map(|(sub, _)| sub.tags)
        };
        // Lowercased, each once.
        assert_eq!(
            submit(serde_json::json!(["Nightly", "ETL", "etl", " "])).unwrap(),
            vec!["etl", "nightly"]
        );
        // Hadoop's limits: 10 tags, 100 ASCII characters each.
        let ten: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        assert_eq!(submit(serde_json::json!(ten)).unwrap().len(), 10);
        let eleven: Vec<String> = (0..11).map(|i| format!("t{i}")).collect();
        for bad in [
            serde_json::json!(eleven),
            serde_json::json!("x".repeat(101)),
            serde_json::json!("café"),
        ] {
            let err = submit(bad.clone()).unwrap_err();
            assert_eq!(err.field, "application-tags", "{bad}: {err}");
        }
    }

    #[test]
    fn submission_needs_an_id() {
        let dto = SubmitApplicationDto::default();
        let err = dto
            .to_submission("alice", vec![], Resource::new(1024, 1))
            .unwrap_err();
        assert_eq!(err.field, "application-id");
        let dto = SubmitApplicationDto {
            application_id: Some("app_1".into()),
            ..SubmitApplicationDto::default()
        };
        let err = dto
            .to_submission("alice", vec![], Resource::new(1024, 1))
            .unwrap_err();
        assert_eq!(err.field, "application-id");
    }

    /// The ACLs a JSON submission with this `am-container-spec` gives, or
    /// its error as `field: why`.
    fn acls_of(spec: &str) -> Result<(String, String), String> {
        let body =
            format!(r#"{{"application-id":"application_5_0001","am-container-spec":{spec}}}"#);
        let dto: SubmitApplicationDto = serde_json::from_str(&body).unwrap();
        dto.to_submission("alice", vec![], Resource::new(1024, 1))
            .map(|(_, extra)| (extra.acls.view.to_string(), extra.acls.modify.to_string()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn application_acls_are_read_in_hadoops_forms() {
        let both = |v: &str, m: &str| Ok((v.to_owned(), m.to_owned()));
        // Hadoop's JSON (its JAXB map), one entry as an object, a plain map.
        assert_eq!(
            acls_of(
                r#"{"application-acls":{"entry":[{"key":"VIEW_APP","value":"bob,carol viewers"},{"key":"MODIFY_APP","value":" ops"}]}}"#
            ),
            both("bob,carol viewers", " ops")
        );
        assert_eq!(
            acls_of(r#"{"application-acls":{"entry":{"key":"modify_app","value":"*"}}}"#),
            both(" ", "*")
        );
        assert_eq!(
            acls_of(r#"{"application-acls":{"VIEW_APP":"dave","MODIFY_APP":""}}"#),
            both("dave ", " ")
        );
        // None given: nobody's, as in Hadoop.
        assert_eq!(acls_of(r#"{"commands":{"command":"x"}}"#), both(" ", " "));
        assert_eq!(acls_of(r#"{"application-acls":null}"#), both(" ", " "));
    }

    #[test]
    fn application_acls_in_xml_keep_every_entry() {
        let xml = r#"<application-submission-context>
  <application-id>application_5_0001</application-id>
  <am-container-spec>
    <commands><command>x</command></commands>
    <environment>
      <entry><key>A</key><value>1</value></entry>
      <entry><key>B</key><value>2</value></entry>
    </environment>
    <application-acls>
      <entry><key>VIEW_APP</key><value>bob viewers</value></entry>
      <entry><key>MODIFY_APP</key><value></value></entry>
    </application-acls>
  </am-container-spec>
</application-submission-context>"#;
        let dto: SubmitApplicationDto = quick_xml::de::from_str(xml).unwrap();
        let (_, extra) = dto
            .to_submission("alice", vec![], Resource::new(1024, 1))
            .unwrap();
        assert_eq!(extra.acls.view.to_string(), "bob viewers");
        assert!(extra.acls.modify.is_nobody());
        // Both environment entries reach the node, not just the last one.
        let spec = extra.launch_context.unwrap();
        assert_eq!(
            spec["environment"]["entry"],
            serde_json::json!([{"key": "A", "value": "1"}, {"key": "B", "value": "2"}])
        );
    }

    #[test]
    fn bad_application_acls_are_refused_naming_where() {
        let refused = |spec: &str| acls_of(spec).unwrap_err();
        expect_test::expect![[r#"
            [
                "am-container-spec.application-acls.entry[1]: unknown ACL type \"ADMINISTER_APP\"; expected VIEW_APP or MODIFY_APP",
                "am-container-spec.application-acls.entry[1]: VIEW_APP is given twice",
                "am-container-spec.application-acls.entry[0]: expected {\"key\": \"VIEW_APP\" or \"MODIFY_APP\", \"value\": \"users groups\"}",
                "am-container-spec.application-acls.MODIFY_APP: the MODIFY_APP ACL must be text (\"users groups\")",
                "am-container-spec.application-acls: expected an object of ACLs by type (VIEW_APP, MODIFY_APP)",
                "am-container-spec.application-acls.VIEW_APP: VIEW_APP ACL \"alice bob carol\": group \"bob carol\" has a space in it; an ACL is users (comma-separated), one space, then groups (comma-separated): \"alice,bob admins\"",
                "am-container-spec.application-acls.VIEW_APP: VIEW_APP ACL \"testuser3, testuser4\": the users end in a comma before the space that starts the groups, so \"testuser4\" would be groups; write users without spaces (\"alice,bob\"), then one space, then groups",
                "am-container-spec.application-acls.MODIFY_APP: MODIFY_APP ACL \"* admins\": user \"*\" has a '*'; \"*\" (everybody) must be the whole ACL",
                "am-container-spec.application-acls.VIEW_APP: VIEW_APP ACL \"bob\\nyarn\": contains the control character '\\n'",
            ]
        "#]]
        .assert_debug_eq(&[
            refused(r#"{"application-acls":{"entry":[{"key":"VIEW_APP","value":"a"},{"key":"ADMINISTER_APP","value":"b"}]}}"#),
            refused(r#"{"application-acls":{"entry":[{"key":"VIEW_APP","value":"a"},{"key":"view_app","value":"b"}]}}"#),
            refused(r#"{"application-acls":{"entry":[{"key":"VIEW_APP"}]}}"#),
            refused(r#"{"application-acls":{"MODIFY_APP":["bob"]}}"#),
            refused(r#"{"application-acls":"bob"}"#),
            refused(r#"{"application-acls":{"VIEW_APP":"alice bob carol"}}"#),
            refused(r#"{"application-acls":{"VIEW_APP":"testuser3, testuser4"}}"#),
            refused(r#"{"application-acls":{"MODIFY_APP":"* admins"}}"#),
            refused(r#"{"application-acls":{"VIEW_APP":"bob\nyarn"}}"#),
        ]);
    }
}
