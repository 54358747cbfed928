//! Attempt handlers of the YARN REST API: an app's `appattempts`, one
//! attempt, and the attempt's running containers, one or all.
//!
//! Every answer is asked of the scheduler as of now (not the published
//! views), as one app's report is. What an attempt or a container shows is
//! `dto::attempts`'; a caller the app's `VIEW_APP` rule does not let see
//! it gets the withheld forms, as for the app's report (`apps::may_view`).

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use weft_model::{AppId, AttemptId, ContainerId, IdParseError};

use crate::dto::attempts::{AppAttemptReportDto, AppAttemptsDto, ContainerDto, ContainersDto};
use crate::http::apps::may_view;
use crate::http::codec::{Caller, Format, Wire};
use crate::http::error::ApiError;
use crate::http::{ApiState, AppParam, invalid_path, path_id};

/// `GET /apps/{app}/appattempts`: every attempt Weft keeps, oldest first.
pub(super) async fn list(
    State(s): State<ApiState>,
    format: Format,
    Caller(who): Caller,
    AppParam(app): AppParam,
) -> Result<Wire<AppAttemptsDto>, ApiError> {
    let snap = s.rm().app_snapshot(app).await?;
    let mut dto = AppAttemptsDto::of(snap.epoch_origin_ms, &snap.app);
    if !may_view(&s, who.as_ref(), &snap) {
        dto = dto.withheld();
    }
    Ok(Wire::ok(format, "appAttempts", dto))
}

/// `GET /apps/{app}/appattempts/{attempt}`.
pub(super) async fn one(
    State(s): State<ApiState>,
    format: Format,
    Caller(who): Caller,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Wire<AppAttemptReportDto>, ApiError> {
    let Path((app, attempt)) = path.map_err(|e| invalid_path(&e))?;
    let app: AppId = path_id(&app)?;
    let attempt = parse_attempt(app, &attempt)?;
    let snap = s.rm().app_snapshot(app).await?;
    attempt_of(app, attempt)?;
    let dto = AppAttemptReportDto::of(snap.epoch_origin_ms, &snap.app, attempt)
        .ok_or_else(|| unknown_attempt(app, attempt))?;
    let dto = if may_view(&s, who.as_ref(), &snap) {
        dto
    } else {
        dto.withheld()
    };
    Ok(Wire::ok(format, "appAttempt", dto))
}

/// `GET /apps/{app}/appattempts/{attempt}/containers`: the attempt's live
/// containers (none for an attempt that ended: its containers went with it).
pub(super) async fn containers(
    State(s): State<ApiState>,
    format: Format,
    Caller(who): Caller,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Wire<ContainersDto>, ApiError> {
    let Path((app, attempt)) = path.map_err(|e| invalid_path(&e))?;
    let app: AppId = path_id(&app)?;
    let attempt = parse_attempt(app, &attempt)?;
    attempt_of(app, attempt)?;
    let live = s.rm().app_containers(app).await?;
    let snap = &live.snapshot;
    if AppAttemptReportDto::of(snap.epoch_origin_ms, &snap.app, attempt).is_none() {
        return Err(unknown_attempt(app, attempt));
    }
    let viewer = may_view(&s, who.as_ref(), snap);
    let container = live
        .containers
        .iter()
        .filter(|(c, _)| c.id.attempt == attempt)
        .map(|(c, http)| {
            let dto = ContainerDto::live(snap.epoch_origin_ms, snap.now, c, http);
            if viewer { dto } else { dto.withheld() }
        })
        .collect();
    Ok(Wire::ok(format, "containers", ContainersDto { container }))
}

/// `GET /apps/{app}/appattempts/{attempt}/containers/{container}`: one live
/// container of the attempt.
pub(super) async fn container(
    State(s): State<ApiState>,
    format: Format,
    Caller(who): Caller,
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Result<Wire<ContainerDto>, ApiError> {
    let Path((app, attempt, container)) = path.map_err(|e| invalid_path(&e))?;
    let app: AppId = path_id(&app)?;
    let attempt = parse_attempt(app, &attempt)?;
    let container: ContainerId = container.parse().map_err(|e: IdParseError| {
        ApiError::BadRequest(format!("invalid container id in the path: {e}"))
    })?;
    attempt_of(app, attempt)?;
    if container.attempt != attempt {
        return Err(ApiError::NotFound(format!(
            "container {container} belongs to attempt {}, not to {attempt}",
            container.attempt
        )));
    }
    let live = s.rm().app_containers(app).await?;
    let snap = &live.snapshot;
    if AppAttemptReportDto::of(snap.epoch_origin_ms, &snap.app, attempt).is_none() {
        return Err(unknown_attempt(app, attempt));
    }
    let (c, http) = live
        .containers
        .iter()
        .find(|(c, _)| c.id == container)
        .ok_or_else(|| {
            ApiError::NotFound(format!(
                "container {container} of attempt {attempt} is not running: the resource manager reports only the containers an attempt holds now"
            ))
        })?;
    let dto = ContainerDto::live(snap.epoch_origin_ms, snap.now, c, http);
    let dto = if may_view(&s, who.as_ref(), snap) {
        dto
    } else {
        dto.withheld()
    };
    Ok(Wire::ok(format, "container", dto))
}

fn parse_attempt(app: AppId, text: &str) -> Result<AttemptId, ApiError> {
    text.parse().map_err(|e: IdParseError| {
        ApiError::BadRequest(format!(
            "invalid application attempt id of application {app} in the path: {e}"
        ))
    })
}

/// Refuses an attempt id that names another app than the path's.
fn attempt_of(app: AppId, attempt: AttemptId) -> Result<(), ApiError> {
    if attempt.app != app {
        return Err(ApiError::NotFound(format!(
            "application attempt {attempt} belongs to application {}, not to {app}",
            attempt.app
        )));
    }
    Ok(())
}

fn unknown_attempt(app: AppId, attempt: AttemptId) -> ApiError {
    ApiError::NotFound(format!(
        "application {app} has no attempt {attempt}: it has not started one with that number, or it is older than the attempts the resource manager keeps"
    ))
}
