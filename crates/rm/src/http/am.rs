//! The ApplicationMaster protocol's handlers: register, allocate, finish.
//!
//! Each parses its body, converts it to the core's input, awaits the actor
//! and answers JSON; `responseId` bookkeeping is the actor's.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use crate::actor::AmInfo;
use crate::dto::am::{
    AllocateRequestDto, AllocateResponseDto, AmFinishRequest, AmFinishResponse, AmRegisterRequest,
    AmRegisterResponse,
};
use crate::http::codec::{OptionalPayload, Payload};
use crate::http::error::ApiError;
use crate::http::{ApiState, AppParam};

pub(super) async fn register(
    State(s): State<ApiState>,
    AppParam(app): AppParam,
    OptionalPayload(body): OptionalPayload<AmRegisterRequest>,
) -> Result<Json<AmRegisterResponse>, ApiError> {
    let info = AmInfo {
        host: body.host,
        rpc_port: body.rpc_port,
        tracking_url: body.tracking_url,
    };
    let reply = s.rm().register_am(app, info).await?;
    Ok(Json(AmRegisterResponse::from_reply(&reply)))
}

pub(super) async fn allocate(
    State(s): State<ApiState>,
    AppParam(app): AppParam,
    Payload(body): Payload<AllocateRequestDto>,
) -> Result<Json<Arc<AllocateResponseDto>>, ApiError> {
    let req = body.to_request(app)?;
    Ok(Json(s.rm().allocate(req, body.response_id).await?))
}

pub(super) async fn finish(
    State(s): State<ApiState>,
    AppParam(app): AppParam,
    Payload(body): Payload<AmFinishRequest>,
) -> Result<Json<AmFinishResponse>, ApiError> {
    let outcome = body.outcome()?;
    s.rm()
        .finish_am(app, outcome, body.diagnostics, body.tracking_url)
        .await?;
    Ok(Json(AmFinishResponse {
        is_unregistered: true,
    }))
}
