//! Application handlers of the YARN REST API: list with Hadoop's filters,
//! the `appstatistics` counts, `new-application`, submission, one app, and
//! its `state`, `queue`, `priority` and `timeouts` (and `timeout`)
//! sub-resources; its attempts are `attempts`'.
//!
//! The list comes from the published views; one app's reads and every
//! write go through the actor, so a client reads its own writes. The app
//! reports are withheld from a named caller the app's
//! `VIEW_APP` rule (`crate::access`) does not let see them, as Hadoop's are;
//! with `yarn.webapp.filter-entity-list-by-user` the list leaves such apps
//! out instead (`crate::access::ListedAs`), while one app's report is still
//! withheld and `appstatistics` still counts them, as in Hadoop. One app's
//! report carries an unmanaged AM's token for its owner (`amRMToken`).

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use weft_core::{AppState, SubmitError};
use weft_model::{AppId, AppPriority, QueuePath};

use crate::access::Identity;
use crate::actor::{AppSnapshot, RmError};
use crate::dto::ResourceDto;
use crate::dto::apps::{
    AppDto, AppPriorityDto, AppQueueDto, AppStateDto, AppTimeoutDto, AppTimeoutUpdateDto,
    AppTimeoutsDto, AppsDto, AppsQuery, NewApplicationDto, SubmitApplicationDto,
    lifetime_expiry_ms, timeout_type_named,
};
use crate::dto::statistics::AppStatisticsDto;
use crate::http::codec::{Caller, Format, NamedCaller, Params, Payload, Wire};
use crate::http::error::ApiError;
use crate::http::{ApiState, AppParam, app_location, invalid_path, path_id};
use crate::iso8601::EpochMs;
use crate::token::AmToken;

/// One app as of now (not the published views, which may lag): a client
/// reads its own writes.
async fn fresh(s: &ApiState, app: AppId) -> Result<AppSnapshot, ApiError> {
    Ok(s.rm().app_snapshot(app).await?)
}

/// Whether `who` may see the app of a fresh snapshot in full: its owner
/// and ACLs are the snapshot's, its queue's ACLs the published view's.
pub(super) fn may_view(s: &ApiState, who: Option<&Identity>, snap: &AppSnapshot) -> bool {
    let view = s.rm().view();
    s.app_viewer(who, &view)(&snap.app)
}

pub(super) async fn list(
    State(s): State<ApiState>,
    format: Format,
    Caller(who): Caller,
    Params(pairs): Params<Vec<(String, String)>>,
) -> Result<Wire<AppsDto>, ApiError> {
    let filter = AppsQuery::from_pairs(&pairs).to_filter()?;
    let view = s.rm().view();
    Ok(Wire::ok(
        format,
        "apps",
        AppsDto {
            app: filter.apply(&view, s.app_lister(who.as_ref(), &view)),
        },
    ))
}

/// `GET /appstatistics`: counts by state for one type or any, over the
/// published view, every app counted whoever asks, as in Hadoop.
pub(super) async fn statistics(
    State(s): State<ApiState>,
    format: Format,
    Params(pairs): Params<Vec<(String, String)>>,
) -> Result<Wire<AppStatisticsDto>, ApiError> {
    let view = s.rm().view();
    let dto = AppStatisticsDto::count(&view, &pairs)?;
    Ok(Wire::ok(format, "appStatInfo", dto))
}

pub(super) async fn get_app(
    State(s): State<ApiState>,
    format: Format,
    Caller(who): Caller,
    AppParam(app): AppParam,
) -> Result<Wire<AppDto>, ApiError> {
    let snap = fresh(&s, app).await?;
    let mut dto = AppDto::from_snapshot(&snap);
    if !may_view(&s, who.as_ref(), &snap) {
        dto = dto.withheld();
    }
    // As Hadoop's report: an unmanaged AM's token goes to its owner alone
    // (not to administrators or ACLs), who runs that AM.
    if who
        .as_ref()
        .is_some_and(|w| w.user == snap.app.report.record.user)
    {
        dto.am_rm_token = snap.unmanaged_am_token.as_ref().map(AmToken::to_hex);
    }
    Ok(Wire::ok(format, "app", dto))
}

pub(super) async fn new_application(
    State(s): State<ApiState>,
    format: Format,
    NamedCaller(_who): NamedCaller,
) -> Result<Wire<NewApplicationDto>, ApiError> {
    let reply = s.rm().new_application().await?;
    // Hadoop writes this answer without a wrapping object in JSON.
    Ok(Wire::unwrapped(
        format,
        "NewApplication",
        NewApplicationDto {
            application_id: reply.app.to_string(),
            maximum_resource_capability: ResourceDto::from_resource(reply.max_capability),
        },
    ))
}

pub(super) async fn submit(
    State(s): State<ApiState>,
    headers: HeaderMap,
    NamedCaller(who): NamedCaller,
    Payload(body): Payload<SubmitApplicationDto>,
) -> Result<Response, ApiError> {
    if !s.0.service.rest_submissions {
        return Err(ApiError::Forbidden(
            "App submission via REST is disabled.".to_owned(),
        ));
    }
    let (sub, extra) = body.to_submission(&who.user, who.groups.clone(), s.0.min_allocation)?;
    let app = sub.app;
    match s.rm().submit(sub, extra).await {
        // Placement, queue and the scheduler's ACL refusals are Hadoop's
        // asynchronous kind: the submission is accepted and the app shows
        // FAILED with the reason. With `yarn.acl.enable` the ACLs refuse
        // before the app exists instead (`AclRefused`), an error here.
        Ok(_)
        | Err(RmError::Submit(
            SubmitError::Placement(_)
            | SubmitError::Queue { .. }
            | SubmitError::AccessDenied { .. },
        )) => Ok((
            StatusCode::ACCEPTED,
            [(
                header::LOCATION,
                app_location(
                    s.0.service.http_policy.scheme(),
                    app,
                    headers.get(header::HOST),
                ),
            )],
        )
            .into_response()),
        Err(e) => Err(e.into()),
    }
}

// The `state`, `queue` and `priority` answers are not wrapped in JSON
// (`{"state": "KILLED"}`, not `{"appstate": {...}}`): Hadoop's JAXB
// configuration unwraps `AppQueue` and `AppPriority`, and `AppState` falls
// to Jersey's default, which unwraps too, so clients read `json["state"]`.
// XML keeps the root element (`<appstate>`), as Hadoop's does.

pub(super) async fn get_state(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
) -> Result<Wire<AppStateDto>, ApiError> {
    let snap = fresh(&s, app).await?;
    Ok(Wire::unwrapped(
        format,
        "appstate",
        AppStateDto {
            state: snap.app.report.record.state.yarn_name().to_owned(),
            diagnostics: None,
        },
    ))
}

pub(super) async fn put_state(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
    NamedCaller(who): NamedCaller,
    Payload(body): Payload<AppStateDto>,
) -> Result<Wire<AppStateDto>, ApiError> {
    let target = body.state.trim().to_ascii_uppercase();
    if target != "KILLED" {
        let snap = fresh(&s, app).await?;
        let current = snap.app.report.record.state.yarn_name();
        if current == target {
            return Ok(Wire::unwrapped(format, "appstate", state_dto(current)));
        }
        return Err(ApiError::BadRequest(
            "Only 'KILLED' is allowed as a target state.".to_owned(),
        ));
    }
    let state: AppState = s.rm().kill(app, who, body.diagnostics).await?;
    Ok(Wire::unwrapped(
        format,
        "appstate",
        state_dto(state.yarn_name()),
    ))
}

fn state_dto(state: &str) -> AppStateDto {
    AppStateDto {
        state: state.to_owned(),
        diagnostics: None,
    }
}

pub(super) async fn get_queue(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
) -> Result<Wire<AppQueueDto>, ApiError> {
    let snap = fresh(&s, app).await?;
    Ok(Wire::unwrapped(
        format,
        "appqueue",
        AppQueueDto {
            queue: snap.app.report.record.queue.to_string(),
        },
    ))
}

pub(super) async fn put_queue(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
    NamedCaller(who): NamedCaller,
    Payload(body): Payload<AppQueueDto>,
) -> Result<Wire<AppQueueDto>, ApiError> {
    let target = QueuePath::parse(body.queue.trim())
        .map_err(|e| ApiError::BadRequest(format!("queue: {e}")))?;
    let queue = s.rm().move_app(app, who, target).await?;
    Ok(Wire::unwrapped(
        format,
        "appqueue",
        AppQueueDto {
            queue: queue.to_string(),
        },
    ))
}

pub(super) async fn get_priority(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
) -> Result<Wire<AppPriorityDto>, ApiError> {
    let snap = fresh(&s, app).await?;
    Ok(Wire::unwrapped(
        format,
        "applicationpriority",
        AppPriorityDto {
            priority: snap.app.report.record.priority.0,
        },
    ))
}

pub(super) async fn put_priority(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
    NamedCaller(who): NamedCaller,
    Payload(body): Payload<AppPriorityDto>,
) -> Result<Wire<AppPriorityDto>, ApiError> {
    let p = s
        .rm()
        .set_priority(app, who, AppPriority(body.priority))
        .await?;
    Ok(Wire::unwrapped(
        format,
        "applicationpriority",
        AppPriorityDto { priority: p.0 },
    ))
}

/// The app's lifetime as its `timeout` object shows it now.
fn lifetime_of(snap: &AppSnapshot) -> AppTimeoutDto {
    AppTimeoutDto::lifetime(
        lifetime_expiry_ms(&snap.app, snap.epoch_origin_ms),
        snap.app.report.record.state.is_final(),
        snap.epoch_origin_ms + snap.now.as_millis(),
    )
}

pub(super) async fn get_timeouts(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
) -> Result<Wire<AppTimeoutsDto>, ApiError> {
    let snap = fresh(&s, app).await?;
    Ok(Wire::ok(
        format,
        "timeouts",
        AppTimeoutsDto {
            timeout: vec![lifetime_of(&snap)],
        },
    ))
}

pub(super) async fn get_timeout(
    State(s): State<ApiState>,
    format: Format,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Wire<AppTimeoutDto>, ApiError> {
    let Path((app, kind)) = path.map_err(|e| invalid_path(&e))?;
    let app: AppId = path_id(&app)?;
    // The app first, as Hadoop checks it: an unknown app is a 404 whatever the type.
    let snap = fresh(&s, app).await?;
    timeout_type_named("timeout type", &kind)?;
    Ok(Wire::ok(format, "timeout", lifetime_of(&snap)))
}

/// `PUT /apps/{id}/timeout`: a new lifetime expiry, by the app's owner, an
/// administrator of its queue or a cluster administrator (as for a kill,
/// a move or a priority). The answer is the timeout now in force.
pub(super) async fn put_timeout(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
    NamedCaller(who): NamedCaller,
    Payload(body): Payload<AppTimeoutUpdateDto>,
) -> Result<Wire<AppTimeoutDto>, ApiError> {
    fresh(&s, app).await?;
    let expiry = body.expiry()?;
    let clock = s.rm().clock();
    let now = clock.now();
    let now_ms = clock.epoch_ms(now);
    // Said here in wall-clock time; the core refuses it too, in its own.
    if expiry.0 <= i64::try_from(now_ms).unwrap_or(i64::MAX) {
        return Err(ApiError::BadRequest(format!(
            "expiryTime {expiry} is not in the future (it is {} now); give a later time",
            EpochMs(i64::try_from(now_ms).unwrap_or(i64::MAX))
        )));
    }
    let at = clock.time_of_epoch_ms(u64::try_from(expiry.0).unwrap_or(0));
    let set = s.rm().set_lifetime(app, who, at).await?;
    Ok(Wire::ok(
        format,
        "timeout",
        AppTimeoutDto::lifetime(Some(clock.epoch_ms(set)), false, now_ms),
    ))
}
