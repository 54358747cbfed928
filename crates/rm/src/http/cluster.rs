//! Cluster-level handlers of the YARN REST API (`info`, `metrics`,
//! `scheduler`, `nodes`), the admin `refresh-queues` and `refresh-nodes`,
//! and the Prometheus text at `/metrics`.
//!
//! Reads come from the published views, never from the actor's queue.
//! `refresh-nodes` reads the hosts files here, off the actor, and hands it
//! the lists; what they mean for each node is the actor's.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use crate::actor::RefreshTerms;
use crate::dto::cluster::{
    ClusterInfoDto, ClusterMetricsDto, NODE_STATES, NodeChangeDto, NodeDto, NodesDto,
    RefreshNodesDto, RefreshNodesRequest, RefreshQueuesDto, SchedulerDto,
};
use crate::hosts::{HostLists, TimeoutSecs};
use crate::http::codec::{Format, NamedCaller, OptionalPayload, Params, Wire};
use crate::http::error::ApiError;
use crate::http::{ApiState, NodeParam};
use crate::reload::ReloadError;

pub(super) async fn info(State(s): State<ApiState>, format: Format) -> Wire<ClusterInfoDto> {
    let view = s.rm().view();
    let mut info = ClusterInfoDto::new(s.0.cluster_id, view.epoch_origin_ms);
    if s.0.service.state_store.is_some() {
        "weft.JsonLinesStateStore".clone_into(&mut info.rm_state_store_name);
    }
    Wire::ok(format, "clusterInfo", info)
}

pub(super) async fn metrics(State(s): State<ApiState>, format: Format) -> Wire<ClusterMetricsDto> {
    let view = s.rm().view();
    Wire::ok(
        format,
        "clusterMetrics",
        ClusterMetricsDto::from_view(&view),
    )
}

pub(super) async fn scheduler(State(s): State<ApiState>, format: Format) -> Wire<SchedulerDto> {
    let view = s.rm().view();
    let reload = s.0.reloader.status();
    Wire::ok(format, "scheduler", SchedulerDto::from_view(&view, &reload))
}

pub(super) async fn nodes(
    State(s): State<ApiState>,
    format: Format,
    Params(pairs): Params<Vec<(String, String)>>,
) -> Result<Wire<NodesDto>, ApiError> {
    // Hadoop's `states` is one string parameter: a repeated one counts by
    // its first value, as JAX-RS reads it, rather than being refused.
    let states = pairs.iter().find(|(k, _)| k == "states").map(|(_, v)| v);
    let mut wanted = Vec::new();
    if let Some(states) = states {
        for st in states.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let upper = st.to_ascii_uppercase();
            if !NODE_STATES.contains(&upper.as_str()) {
                return Err(ApiError::BadRequest(format!(
                    "states: invalid node state {st:?}; expected one of {}",
                    NODE_STATES.join(", ")
                )));
            }
            wanted.push(upper);
        }
    }
    let view = s.rm().view();
    let node = view
        .nodes
        .iter()
        .filter(|n| wanted.is_empty() || wanted.iter().any(|w| w == n.state.yarn_name()))
        .map(|n| NodeDto::from_report(&view, n))
        .collect();
    Ok(Wire::ok(format, "nodes", NodesDto { node }))
}

pub(super) async fn node(
    State(s): State<ApiState>,
    format: Format,
    NodeParam(id): NodeParam,
) -> Result<Wire<NodeDto>, ApiError> {
    let view = s.rm().view();
    let n = view
        .nodes
        .iter()
        .find(|n| n.id == id)
        .ok_or_else(|| ApiError::NotFound(format!("node {id} is not known")))?;
    Ok(Wire::ok(format, "node", NodeDto::from_report(&view, n)))
}

pub(super) async fn refresh_queues(
    State(s): State<ApiState>,
    format: Format,
    NamedCaller(who): NamedCaller,
) -> Result<Wire<RefreshQueuesDto>, ApiError> {
    if !s.0.acl.is_admin(&who) {
        return Err(ApiError::Forbidden(format!(
            "user {} is not a cluster administrator (yarn.admin.acl) and may not refresh the queues",
            who.user
        )));
    }
    let path = s.0.reloader.status().path.map(|p| p.display().to_string());
    match s.0.reloader.reload_now().await {
        Ok(done) => Ok(Wire::ok(
            format,
            "refreshQueues",
            RefreshQueuesDto {
                refreshed: true,
                path,
                warnings: done.warnings,
            },
        )),
        Err(ReloadError::Scheduler(e)) => Err(e.into()),
        Err(e) => Err(ApiError::BadRequest(e.to_string())),
    }
}

pub(super) async fn refresh_nodes(
    State(s): State<ApiState>,
    format: Format,
    NamedCaller(who): NamedCaller,
    OptionalPayload(body): OptionalPayload<RefreshNodesRequest>,
) -> Result<Wire<RefreshNodesDto>, ApiError> {
    if !s.0.acl.is_admin(&who) {
        return Err(ApiError::Forbidden(format!(
            "user {} is not a cluster administrator (yarn.admin.acl) and may not refresh the nodes",
            who.user
        )));
    }
    let timeout = match body.timeout_secs {
        None => None,
        Some(_) if !body.graceful => {
            return Err(ApiError::BadRequest(
                "timeoutSecs applies to a graceful refresh only: send \"graceful\": true with it, or leave it out"
                    .to_owned(),
            ));
        }
        // Hadoop's timeout is an int, -1 meaning none (`rmadmin -g`).
        Some(t) if (-1..=i64::from(i32::MAX)).contains(&t) => Some(TimeoutSecs(t)),
        Some(t) => {
            return Err(ApiError::BadRequest(format!(
                "timeoutSecs {t} is not a number of seconds from -1 (no timeout) to {}",
                i32::MAX
            )));
        }
    };
    let files = s.0.service.hosts_files.clone();
    let read = files.clone();
    let (lists, warnings) = tokio::task::spawn_blocking(move || HostLists::load(&read))
        .await
        .map_err(|e| ApiError::Internal(format!("reading the hosts files panicked: {e}")))?
        .map_err(|e| {
            tracing::warn!(error = %e, "refresh-nodes refused: the lists in force are unchanged");
            ApiError::BadRequest(format!("{e}\n(the lists in force are unchanged)"))
        })?;
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let terms = RefreshTerms {
        graceful: body.graceful,
        timeout,
    };
    let changes = s.rm().refresh_nodes(lists, terms).await?;
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    Ok(Wire::ok(
        format,
        "refreshNodes",
        RefreshNodesDto {
            graceful: body.graceful,
            include_path: path(&files.include),
            exclude_path: path(&files.exclude),
            changes: changes
                .into_iter()
                .map(|c| NodeChangeDto {
                    node_id: c.node.to_string(),
                    previous_state: c.previous.yarn_name().to_owned(),
                    state: c.state.yarn_name().to_owned(),
                    decommissioning_timeout: c.timeout.map(|t| t.0),
                    reason: c.reason,
                })
                .collect(),
            warnings,
        },
    ))
}

pub(super) async fn prometheus(State(s): State<ApiState>) -> impl IntoResponse {
    // Ages are measured now, not when the snapshot was built, so that a
    // scheduler which stopped publishing shows as ever older.
    let rm = s.rm();
    s.0.metrics
        .observe_scrape(&rm.view(), rm.now(), rm.queued_commands());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        s.0.metrics.render(),
    )
}
