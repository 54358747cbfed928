//! The NodeManager protocol's handlers: register, heartbeat, unregister.
//!
//! Each parses its body, converts it to the core's input, awaits the actor
//! and answers JSON; `responseId` bookkeeping is the actor's.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;

use crate::dto::nm::{
    NodeHeartbeatRequest, NodeHeartbeatResponse, NodeRegisterRequest, NodeRegisterResponse,
    NodeUnregisterRequest, NodeUnregisterResponse,
};
use crate::dto::parse_field;
use crate::http::ApiState;
use crate::http::codec::Payload;
use crate::http::error::ApiError;

pub(super) async fn register(
    State(s): State<ApiState>,
    Payload(body): Payload<NodeRegisterRequest>,
) -> Result<Json<NodeRegisterResponse>, ApiError> {
    let reg = body.to_registration()?;
    let node = reg.node.to_string();
    let registered = s.rm().register_node(reg).await?;
    Ok(Json(NodeRegisterResponse {
        node_action: "NORMAL".to_owned(),
        node_id: node,
        rm_identifier: registered.rm_identifier,
        resource_manager_version: env!("CARGO_PKG_VERSION").to_owned(),
        heartbeat_interval_ms: registered.heartbeat_interval_ms,
        response_id: 0,
    }))
}

pub(super) async fn heartbeat(
    State(s): State<ApiState>,
    Payload(body): Payload<NodeHeartbeatRequest>,
) -> Result<Json<Arc<NodeHeartbeatResponse>>, ApiError> {
    let hb = body.to_heartbeat()?;
    Ok(Json(s.rm().heartbeat(hb, body.response_id).await?))
}

pub(super) async fn unregister(
    State(s): State<ApiState>,
    Payload(body): Payload<NodeUnregisterRequest>,
) -> Result<Json<NodeUnregisterResponse>, ApiError> {
    let node = parse_field("nodeId", &body.node_id)?;
    s.rm().unregister_node(node).await?;
    Ok(Json(NodeUnregisterResponse {
        node_id: body.node_id,
        state: "SHUTDOWN".to_owned(),
    }))
}
