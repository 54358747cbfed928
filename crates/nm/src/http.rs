//! The node's HTTP API, after YARN's NodeManager REST API: the node's
//! report, its containers, starting a container the RM allocated here (for
//! a caller with its token), and reading container logs (`docs/api.md`, "The node's API");
//! and Hadoop's `/logLevel` and `/jmx`, as every daemon serves them, and
//! Prometheus's `/metrics`.
//!
//! While the node's `yarn.acl.enable` is on, a container's report and logs
//! are for those who may view its application, as a Hadoop NodeManager's
//! are: its owner, whom its `VIEW_APP` ACL names, and the node's
//! administrators, by the RM's own rule (`weft_rm::access`) over what the
//! RM told the agent with the container (`agent::AppViewers`). Others get
//! the reports withheld (`ContainerDto::withheld`) and the logs refused;
//! with `yarn.webapp.filter-entity-list-by-user` the list of containers
//! leaves theirs out.
//!
//! Handlers parse and answer; every decision about containers is the
//! agent's, the figures are `metrics`', and `/logLevel`'s and `/jmx`'s
//! rules and answers are the RM's (`weft_rm::http::log_level`,
//! `weft_rm::http::jmx`), so both daemons answer them alike. Errors are
//! Hadoop's `RemoteException` bodies, as the RM answers them.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::sync::watch;
use tokio_util::io::ReaderStream;
use weft_model::{ContainerId, NodeId};
use weft_rm::ApiError;
use weft_rm::access::{AclSettings, Identity, ListedAs};
use weft_rm::groups::UserGroups;
use weft_rm::http::codec::{Params, UserName};
use weft_rm::http::jmx;
use weft_rm::http::log_level::{self, LogLevelQuery, LogLevelRequest};
use weft_rm::http::{method_not_allowed, with_trailing_slashes};
use weft_rm::log_levels::LogLevels;
use weft_rm::metrics::registry::TEXT_FORMAT;

use crate::agent::{AgentHandle, AppViewers, StartContainerError};
use crate::dto::{
    ContainerBody, ContainerDto, ContainerList, ContainerLogsBody, ContainerLogsDto,
    ContainersBody, LaunchContext, LogFileDto, NodeInfoBody,
};
use crate::health::Health;
use crate::launch::ContainerDirs;
use crate::metrics::NodeMetrics;

/// What the handlers share.
#[derive(Clone, Debug)]
pub struct NodeApi {
    /// The agent.
    pub handle: AgentHandle,
    /// The node.
    pub node: NodeId,
    /// Where container logs are (`logs/<app>/<container>/`).
    pub work_dir: PathBuf,
    /// The process's logging filter, which `/logLevel` reads and changes;
    /// `None` when the agent was started without one (`/logLevel` says so
    /// with 404).
    pub log_levels: Option<Arc<dyn LogLevels>>,
    /// Who may use `/logLevel` (`yarn.acl.enable`, `yarn.admin.acl`), and
    /// `/jmx` when `instrumentation_requires_admin` says so; and whether
    /// containers' reports and logs are checked against their apps'
    /// viewers, who always include these administrators.
    pub acl: Arc<AclSettings>,
    /// `hadoop.security.instrumentation.requires.admin`: `/jmx` is for
    /// administrators only.
    pub instrumentation_requires_admin: bool,
    /// `yarn.webapp.filter-entity-list-by-user`: the list of containers
    /// leaves out those whose reports `acl` would withhold from the caller.
    pub filter_entity_list_by_user: bool,
    /// Users' groups, for the groups `yarn.admin.acl` and `VIEW_APP` ACLs name.
    pub groups: Arc<UserGroups>,
    /// The agent's metrics, which `/metrics` and `/jmx` show.
    pub metrics: Arc<NodeMetrics>,
    /// The health checker's latest verdict, whose age `/metrics` measures.
    pub health: watch::Receiver<Health>,
}

/// The node's routes.
pub fn router(api: NodeApi) -> Router {
    // Like the RM's REST paths, and Hadoop's, each also answers with a
    // trailing slash.
    with_trailing_slashes([
        ("/ws/v1/node", get(info)),
        ("/ws/v1/node/info", get(info)),
        ("/ws/v1/node/containers", get(containers)),
        ("/ws/v1/node/containers/{container}", get(container)),
        ("/ws/v1/node/containers/{container}/start", post(start)),
        ("/ws/v1/node/containers/{container}/logs", get(logs)),
        (
            "/ws/v1/node/containerlogs/{container}/{file}",
            get(log_file),
        ),
    ])
    // Hadoop's servlet paths, outside the REST tree: no trailing slash, as the RM's.
    .route("/logLevel", get(log_level))
    .route("/jmx", get(jmx))
    .route("/metrics", get(prometheus))
    .fallback(not_found)
    .method_not_allowed_fallback(method_not_allowed)
    .with_state(api)
}

/// `GET /logLevel`: the RM's rules and answer (`weft_rm::http::log_level`)
/// over this process's filter and this node's administrators. The node
/// has no audit log, so a set is only logged.
async fn log_level(
    State(api): State<NodeApi>,
    UserName(user): UserName,
    Params(query): Params<LogLevelQuery>,
    parts: Parts,
) -> Result<Response, ApiError> {
    let who = identity(&api, user).await;
    let daemon = format!("nodemanager {}", api.node);
    let text = log_level::answer(&LogLevelRequest {
        daemon: &daemon,
        levels: api.log_levels.as_deref(),
        acl: &api.acl,
        who: who.as_ref(),
        from: log_level::caller_ip(&parts),
        query: &query,
    })?;
    Ok(log_level::text(text))
}

/// `GET /jmx`: Hadoop's JMX JSON servlet (the RM's rules and answers,
/// `weft_rm::http::jmx`) over the node's `NodeManagerMetrics` bean; for
/// administrators only when `hadoop.security.instrumentation.requires.admin`
/// says so, as on the RM.
async fn jmx(
    State(api): State<NodeApi>,
    UserName(user): UserName,
    Params(pairs): Params<Vec<(String, String)>>,
) -> Response {
    // Nobody's groups are looked up unless they decide something.
    let who = if api.instrumentation_requires_admin {
        identity(&api, user).await
    } else {
        None
    };
    let allowed = jmx::instrumentation_access(
        api.instrumentation_requires_admin,
        who.as_ref(),
        |w| api.acl.is_admin(w),
        "read /jmx",
    );
    if let Err(refused) = allowed {
        return refused.into_response();
    }
    jmx::answer(&pairs, || vec![api.metrics.bean(api.node.host())])
}

/// `GET /metrics`: the agent's figures as Prometheus text, open to anyone
/// as the RM's is (and Hadoop's `/prom`).
async fn prometheus(State(api): State<NodeApi>) -> Response {
    let health = api.health.borrow().clone();
    (
        [(header::CONTENT_TYPE, TEXT_FORMAT)],
        api.metrics.render(&health),
    )
        .into_response()
}

/// The caller `user.name` names, with the groups the node's ACLs need: with
/// them off nobody is checked, so nobody's groups are looked up.
async fn identity(api: &NodeApi, user: Option<String>) -> Option<Identity> {
    let user = user?;
    let groups = if api.acl.enabled {
        api.groups.groups(&user).await
    } else {
        Vec::new()
    };
    Some(Identity { user, groups })
}

/// Hadoop's `hadoop.http.staticuser.user`: who an anonymous caller is to
/// Hadoop's web servers (its default `StaticUserWebFilter`), with no groups
/// (its static group mapping gives this user none).
const ANONYMOUS: &str = "dr.who";

/// Who reads a container's report or logs while the node's ACLs are on.
struct Reader {
    who: Identity,
    /// True when the request named nobody (`who` is then `ANONYMOUS`).
    anonymous: bool,
}

/// The reader `user.name` names, checked like any other user when it names
/// nobody, as Hadoop checks its static user; `None` while the node's ACLs
/// are off, when nobody is checked (and nobody's groups looked up).
async fn reader(api: &NodeApi, user: Option<String>) -> Option<Reader> {
    if !api.acl.enabled {
        return None;
    }
    Some(match identity(api, user).await {
        Some(who) => Reader {
            who,
            anonymous: false,
        },
        None => Reader {
            who: Identity {
                user: ANONYMOUS.to_owned(),
                groups: Vec::new(),
            },
            anonymous: true,
        },
    })
}

impl Reader {
    /// Hadoop's NodeManager rule (`weft_rm::access`): the owner, whom
    /// `VIEW_APP` names, or an administrator of this node.
    fn may_view(&self, acl: &AclSettings, viewers: &AppViewers) -> bool {
        acl.may_view_app_by_acls(&self.who, viewers.owner.as_deref(), &viewers.view)
    }
}

/// Whether `reader` may see the whole report of a container of an app
/// with `viewers`: anyone may while the node's ACLs are off (no reader).
fn may_view(reader: Option<&Reader>, acl: &AclSettings, viewers: &AppViewers) -> bool {
    match reader {
        Some(r) => r.may_view(acl, viewers),
        None => true,
    }
}

/// A container's report as `reader` may see it: whole, or withheld.
fn as_seen_by(
    reader: Option<&Reader>,
    acl: &AclSettings,
    (container, viewers): (ContainerDto, AppViewers),
) -> ContainerDto {
    if may_view(reader, acl, &viewers) {
        container
    } else {
        container.withheld()
    }
}

/// Whether the caller may read container `id`'s logs: anyone while the
/// node's ACLs are off; else an administrator of the node, or, for a
/// container the agent still knows, its app's owner or whom its `VIEW_APP`
/// names. A container the agent has forgotten has no known viewers, so
/// only administrators read its logs (Hadoop's NodeManager serves no
/// logs of an application it has forgotten).
async fn may_read_logs(
    api: &NodeApi,
    user: Option<String>,
    id: ContainerId,
) -> Result<(), ApiError> {
    let Some(reader) = reader(api, user).await else {
        return Ok(());
    };
    // The agent need not be asked about an administrator.
    if api.acl.is_admin(&reader.who) {
        return Ok(());
    }
    let Some((_, viewers)) = api.handle.container_and_viewers(id).await else {
        return Err(ApiError::NotFound(format!(
            "container {id} is not known on this node (never allocated here, or ended long ago and forgotten), so who may read its logs is not known; only an administrator of this node (yarn.admin.acl) may read them"
        )));
    };
    if reader.may_view(&api.acl, &viewers) {
        return Ok(());
    }
    let app = id.app();
    let who_may = match &viewers.owner {
        Some(owner) => format!(
            "only its owner ({owner}), a user or group its VIEW_APP ACL names, or an administrator of this node (yarn.admin.acl) may"
        ),
        None => "only a user or group its VIEW_APP ACL names, or an administrator of this node (yarn.admin.acl) may (the resource manager did not say who owns it)".to_owned(),
    };
    if reader.anonymous {
        return Err(ApiError::Unauthorized(format!(
            "an anonymous caller may not read the logs of container {id} of application {app} while yarn.acl.enable is on: add ?user.name=<user>; {who_may}"
        )));
    }
    Err(ApiError::Forbidden(format!(
        "user {} may not read the logs of container {id} of application {app}: {who_may}",
        reader.who.user
    )))
}

fn json(status: StatusCode, body: &impl serde::Serialize) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

fn parse_container(text: &str) -> Result<ContainerId, ApiError> {
    text.parse()
        .map_err(|e: weft_model::IdParseError| ApiError::BadRequest(e.to_string()))
}

async fn not_found() -> ApiError {
    ApiError::NotFound("no such path on the node's API (see docs/api.md)".to_owned())
}

async fn info(State(api): State<NodeApi>) -> Result<Response, ApiError> {
    let node_info = api
        .handle
        .info()
        .await
        .ok_or_else(|| ApiError::Conflict("the node manager is shutting down".to_owned()))?;
    Ok(json(StatusCode::OK, &NodeInfoBody { node_info }))
}

/// Every container, each whole or withheld as the caller may see it, or,
/// with `yarn.webapp.filter-entity-list-by-user`, only those the caller
/// may see, as Hadoop's `NMWebServices.getNodeContainers` and the RM's
/// list of apps leave the others out.
async fn containers(State(api): State<NodeApi>, UserName(user): UserName) -> Response {
    let reader = reader(&api, user).await;
    let container = api
        .handle
        .containers_and_viewers()
        .await
        .into_iter()
        .filter_map(|(container, viewers)| {
            let whole = may_view(reader.as_ref(), &api.acl, &viewers);
            match ListedAs::of(whole, api.filter_entity_list_by_user) {
                ListedAs::Whole => Some(container),
                ListedAs::Withheld => Some(container.withheld()),
                ListedAs::LeftOut => None,
            }
        })
        .collect();
    json(
        StatusCode::OK,
        &ContainersBody {
            containers: ContainerList { container },
        },
    )
}

/// One container, whole or withheld as the caller may see it (as the RM
/// withholds an app's report rather than refusing it).
async fn container(
    State(api): State<NodeApi>,
    UserName(user): UserName,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = parse_container(&id)?;
    let found =
        api.handle.container_and_viewers(id).await.ok_or_else(|| {
            ApiError::NotFound(format!("container {id} is not known on this node"))
        })?;
    let reader = reader(&api, user).await;
    let container = as_seen_by(reader.as_ref(), &api.acl, found);
    Ok(json(StatusCode::OK, &ContainerBody { container }))
}

async fn start(
    State(api): State<NodeApi>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let id = parse_container(&id)?;
    let value: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("the launch context is not valid JSON: {e}")))?;
    let context =
        LaunchContext::from_json(&value).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let token = match value.get("containerToken") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(t)) => Some(t.clone()),
        Some(_) => {
            return Err(ApiError::BadRequest(
                "containerToken: expected a string (the token the allocate answer gave)".to_owned(),
            ));
        }
    };
    match api.handle.start_container(id, token, context).await {
        Ok(container) => Ok(json(StatusCode::OK, &ContainerBody { container })),
        Err(e @ StartContainerError::NotAllocated(_)) => Err(ApiError::NotFound(e.to_string())),
        Err(e @ (StartContainerError::MissingToken(_) | StartContainerError::WrongToken(_))) => {
            Err(ApiError::Forbidden(e.to_string()))
        }
        Err(e @ (StartContainerError::AlreadyStarted { .. } | StartContainerError::Stopping)) => {
            Err(ApiError::Conflict(e.to_string()))
        }
    }
}

async fn logs(
    State(api): State<NodeApi>,
    UserName(user): UserName,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = parse_container(&id)?;
    may_read_logs(&api, user, id).await?;
    let dirs = ContainerDirs::of(&api.work_dir, id);
    let mut files = Vec::new();
    let entries = std::fs::read_dir(&dirs.logs)
        .map_err(|_| ApiError::NotFound(format!("container {id} has no logs on this node")))?;
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_file() {
            files.push(LogFileDto {
                file_name: entry.file_name().to_string_lossy().into_owned(),
                file_size: meta.len(),
            });
        }
    }
    files.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    Ok(json(
        StatusCode::OK,
        &ContainerLogsBody {
            container_logs_info: ContainerLogsDto {
                container_id: id.to_string(),
                node_id: api.node.to_string(),
                log_aggregation_type: "LOCAL".to_owned(),
                container_log_info: files,
            },
        },
    ))
}

/// `?size=`: as Hadoop's NodeManager (YARN-5088), the first `size` bytes,
/// or the last `-size` bytes when negative; the whole file when absent.
#[derive(serde::Deserialize)]
struct LogFileQuery {
    size: Option<i64>,
}

async fn log_file(
    State(api): State<NodeApi>,
    UserName(user): UserName,
    Path((id, file)): Path<(String, String)>,
    Params(query): Params<LogFileQuery>,
) -> Result<Response, ApiError> {
    let id = parse_container(&id)?;
    // A plain file name: nothing outside the container's log directory.
    if file.is_empty() || file.contains('/') || file.contains('\\') || file.starts_with('.') {
        return Err(ApiError::BadRequest(format!(
            "{file:?} is not a log file name"
        )));
    }
    may_read_logs(&api, user, id).await?;
    let path = ContainerDirs::of(&api.work_dir, id).logs.join(&file);
    let missing = || {
        ApiError::NotFound(format!(
            "container {id} has no log file {file:?} on this node"
        ))
    };
    let mut f = tokio::fs::File::open(&path).await.map_err(|_| missing())?;
    let len = f.metadata().await.map_err(|_| missing())?.len();
    let (start, count) = log_range(len, query.size);
    if start > 0 {
        f.seek(std::io::SeekFrom::Start(start))
            .await
            .map_err(|e| ApiError::Internal(format!("seeking in {}: {e}", path.display())))?;
    }
    // Streamed, and cut at the length seen now: a running container's log
    // keeps growing, and a large one need not fit in the agent's memory.
    let body = Body::from_stream(ReaderStream::new(f.take(count)));
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response())
}

/// The byte range `?size=` selects from a file of `len` bytes: (start, count).
fn log_range(len: u64, size: Option<i64>) -> (u64, u64) {
    match size {
        None => (0, len),
        Some(n) if n >= 0 => (0, n.unsigned_abs().min(len)),
        Some(n) => {
            let count = n.unsigned_abs().min(len);
            (len - count, count)
        }
    }
}

#[cfg(test)]
mod tests;
