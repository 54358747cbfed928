//! The NodeManager protocol's handlers: register, heartbeat, unregister.
//!
//! Each parses its body, converts it to the core's input, awaits the actor
//! and answers JSON; `responseId` bookkeeping is the actor's. Heartbeats are
//! timed from the first byte read to the answer serialized. A registering
//! node's rack is worked out here, before the actor sees it, when a
//! topology mapping is configured: the mapping may run a script, which must
//! not hold up the scheduler. When the RM has a node secret, every call
//! must show it before its body is read (`ApiState::check_node_secret`).

use axum::extract::{FromRequest, Request, State};
use axum::response::Response;

use crate::dto::nm::{
    NodeHeartbeatRequest, NodeRegisterRequest, NodeRegisterResponse, NodeUnregisterRequest,
    NodeUnregisterResponse,
};
use crate::dto::{ResourceDto, parse_field};
use crate::http::codec::Payload;
use crate::http::error::ApiError;
use crate::http::{ApiState, json_response, timed};

pub(super) async fn register(State(s): State<ApiState>, req: Request) -> Response {
    timed(None, "/ws/v1/nm/register", async {
        s.check_node_secret(req.headers())?;
        let Payload(body) = Payload::<NodeRegisterRequest>::from_request(req, &s).await?;
        let mut reg = body.to_registration()?;
        if let Some(rack) = s.racks().resolve(reg.node.host()).await {
            // As in Hadoop, the RM's mapping decides, whatever the node says.
            if !reg.rack.is_empty() && reg.rack != rack {
                tracing::info!(node = %reg.node, declared = %reg.rack, resolved = %rack, "the node declares another rack than the topology mapping gives it; the mapping's stands");
            }
            reg.rack = rack;
        }
        let node = reg.node.to_string();
        let registered = s
            .rm()
            .register_node_with_physical(reg, body.physical())
            .await?;
        Ok(json_response(&NodeRegisterResponse {
            node_action: "NORMAL".to_owned(),
            node_id: node,
            rm_identifier: registered.rm_identifier,
            resource_manager_version: env!("CARGO_PKG_VERSION").to_owned(),
            heartbeat_interval_ms: registered.heartbeat_interval_ms,
            response_id: 0,
            resource: registered.resource.map(ResourceDto::from_resource),
        }))
    })
    .await
}

pub(super) async fn heartbeat(State(s): State<ApiState>, req: Request) -> Response {
    let histogram = &s.0.metrics.heartbeat_duration;
    timed(Some(histogram), "/ws/v1/nm/heartbeat", async {
        s.check_node_secret(req.headers())?;
        let Payload(body) = Payload::<NodeHeartbeatRequest>::from_request(req, &s).await?;
        let hb = body.to_heartbeat()?;
        let utilization = body.utilization()?;
        let diagnostics = body.completed_diagnostics();
        let reply = s
            .rm()
            .heartbeat_with_reports(hb, body.response_id, diagnostics, utilization)
            .await?;
        Ok(json_response(&*reply))
    })
    .await
}

pub(super) async fn unregister(State(s): State<ApiState>, req: Request) -> Response {
    timed(None, "/ws/v1/nm/unregister", async {
        s.check_node_secret(req.headers())?;
        let Payload(body) = Payload::<NodeUnregisterRequest>::from_request(req, &s).await?;
        let node = parse_field("nodeId", &body.node_id)?;
        s.rm().unregister_node(node).await?;
        Ok::<_, ApiError>(json_response(&NodeUnregisterResponse {
            node_id: body.node_id,
            state: "SHUTDOWN".to_owned(),
        }))
    })
    .await
}
