//! Weft's own `GET /ws/v1/cluster/apps/{appid}/explain`: why an application
//! is or is not getting containers, in JSON or XML like the other app
//! resources.
//!
//! The explanation is asked of the scheduler, as one app's report is, so it
//! reflects the state now rather than the published views; the core
//! computes it (`ResourceManager::explain_app`), the DTO names it.

use axum::extract::State;

use crate::dto::explain::AppExplanationDto;
use crate::http::codec::{Format, Wire};
use crate::http::error::ApiError;
use crate::http::{ApiState, AppParam};

pub(super) async fn explain(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
) -> Result<Wire<AppExplanationDto>, ApiError> {
    let explanation = s.rm().explain_app(app).await?;
    Ok(Wire::ok(
        format,
        "appExplanation",
        AppExplanationDto::from_core(&explanation),
    ))
}
