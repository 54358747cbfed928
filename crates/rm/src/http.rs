//! The HTTP surface: the router (every path of `docs/api.md`), the state
//! handlers share, the REST middleware (error bodies in the caller's format,
//! with logging), and the timing and logging the node and AM protocols do
//! without middleware, being the hot path.
//!
//! Handlers are thin: body → DTO → core input → actor → reply → DTO. They
//! live in the submodules by protocol; bodies and errors in `codec` and `error`.

pub mod codec;
pub mod error;
pub mod jmx;
pub mod log_level;

mod am;
mod apps;
mod attempts;
mod cluster;
mod conf;
mod explain;
mod nm;
#[cfg(test)]
mod tests;
mod ui;

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post, put};
use metrics::Histogram;
use weft_model::{AppId, NodeId, Resource};

use crate::access::{AppAccess, Identity, ListedAs, LiveAccess};
use crate::actor::RmHandle;
use crate::audit::{self, AuditLog};
use crate::config::ServiceSettings;
use crate::config::listing::ConfListing;
use crate::http::codec::Format;
use crate::http::error::{ApiError, InternalDetail, RemoteException};
use crate::log_levels::LogLevels;
use crate::metrics::Metrics;
use crate::reload::Reloader;
use crate::topology::RackResolver;
use crate::view::{AppView, View};

/// What every handler can reach: the scheduler's handle and the service's
/// static settings.
#[derive(Clone, Debug)]
pub struct ApiState(Arc<ApiInner>);

#[derive(Debug)]
struct ApiInner {
    rm: RmHandle,
    audit: Arc<AuditLog>,
    metrics: Arc<Metrics>,
    reloader: Arc<Reloader>,
    service: ServiceSettings,
    access: Arc<LiveAccess>,
    racks: Arc<RackResolver>,
    explain_budget: explain::ExplainBudget,
    min_allocation: Resource,
    cluster_id: u64,
    conf: Arc<ConfListing>,
    log_levels: Option<Arc<dyn LogLevels>>,
}

impl std::fmt::Debug for Reloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloader")
            .field("status", &self.status())
            .finish()
    }
}

/// Everything a router needs, gathered.
#[derive(Debug)]
pub struct ApiParts {
    /// The scheduler.
    pub rm: RmHandle,
    /// Where requests for changes are recorded.
    pub audit: Arc<AuditLog>,
    /// The metric registry.
    pub metrics: Arc<Metrics>,
    /// The allocation file's reloader.
    pub reloader: Arc<Reloader>,
    /// The service's settings.
    pub service: ServiceSettings,
    /// The administrators and users' groups in force.
    pub access: Arc<LiveAccess>,
    /// Where registering nodes' racks come from.
    pub racks: Arc<RackResolver>,
    /// The smallest container (the size of an AM the submission leaves unsized).
    pub min_allocation: Resource,
    /// The cluster id (the RM's start time).
    pub cluster_id: u64,
    /// The configuration `/conf` shows.
    pub conf: Arc<ConfListing>,
    /// The process's logging filter, if `/logLevel` may change it.
    pub log_levels: Option<Arc<dyn LogLevels>>,
}

impl ApiState {
    /// The state of a router over `parts`.
    pub fn new(parts: ApiParts) -> ApiState {
        if parts.service.node_secret.is_none() {
            // Once per service start: the state is built once, when the
            // service starts.
            tracing::warn!(
                "nodes are not authenticated: any caller can register and heartbeat as a node and receive its containers and their tokens; set {} (docs/operations.md, \"Authenticating nodes\")",
                crate::node_secret::PROPERTY
            );
        }
        let explain_budget = explain::ExplainBudget::new(parts.service.explains_per_second);
        ApiState(Arc::new(ApiInner {
            rm: parts.rm,
            audit: parts.audit,
            metrics: parts.metrics,
            reloader: parts.reloader,
            service: parts.service,
            access: parts.access,
            racks: parts.racks,
            explain_budget,
            min_allocation: parts.min_allocation,
            cluster_id: parts.cluster_id,
            conf: parts.conf,
            log_levels: parts.log_levels,
        }))
    }

    pub(crate) fn rm(&self) -> &RmHandle {
        &self.0.rm
    }

    pub(crate) fn audit(&self) -> &AuditLog {
        &self.0.audit
    }

    pub(crate) fn racks(&self) -> &RackResolver {
        &self.0.racks
    }

    /// Refuses a node protocol call that does not show the node secret,
    /// when the RM has one: 401 without a bearer token, 403 with another.
    pub(crate) fn check_node_secret(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(secret) = &self.0.service.node_secret else {
            return Ok(());
        };
        let Some(presented) = bearer_token(headers) else {
            return Err(ApiError::Unauthorized(format!(
                "this resource manager authenticates nodes: send its node secret as Authorization: Bearer <secret> (the node agent reads it from the file its site file names in {})",
                crate::node_secret::PROPERTY
            )));
        };
        if !secret.matches(presented) {
            return Err(ApiError::Forbidden(format!(
                "the node secret presented is not this resource manager's ({}); check that the node agent reads the same file",
                crate::node_secret::PROPERTY
            )));
        }
        Ok(())
    }

    pub(crate) fn max_request_bytes(&self) -> usize {
        self.0.service.max_request_bytes
    }

    pub(crate) async fn identity(&self, user: &str) -> Identity {
        self.0.access.identity(user).await
    }

    pub(crate) fn access(&self) -> &LiveAccess {
        &self.0.access
    }

    pub(crate) fn log_levels(&self) -> Option<&dyn LogLevels> {
        self.0.log_levels.as_deref()
    }

    pub(crate) fn explain_budget(&self) -> &explain::ExplainBudget {
        &self.0.explain_budget
    }

    /// Whether `who` (`None`: a caller who named nobody) may see each app's
    /// full report, under the ACL settings in force now and the queue ACLs
    /// of `view`.
    pub(crate) fn app_viewer<'a>(
        &self,
        who: Option<&'a Identity>,
        view: &'a View,
    ) -> impl Fn(&AppView) -> bool + 'a {
        let acl = self.0.access.settings();
        move |app| acl.may_view_app(view, who, AppAccess::of(app))
    }

    /// How a list shows each app to `who`: whole when `app_viewer` lets
    /// them view it, else withheld or, with
    /// `yarn.webapp.filter-entity-list-by-user`, left out.
    pub(crate) fn app_lister<'a>(
        &self,
        who: Option<&'a Identity>,
        view: &'a View,
    ) -> impl Fn(&AppView) -> ListedAs + 'a {
        let viewer = self.app_viewer(who, view);
        let filter_by_user = self.0.service.filter_entity_list_by_user;
        move |app| ListedAs::of(viewer(app), filter_by_user)
    }
}

/// The router serving every endpoint of `docs/api.md` over `state`.
pub fn router(state: ApiState) -> Router {
    // The node and AM protocols are the hot path (tens of thousands of calls
    // a second): JSON only, no middleware; their handlers time and log
    // themselves. An AM's registering and unregistering, once each per
    // attempt, are audited as Hadoop audits them.
    let audited_am = Router::new()
        .route("/ws/v1/am/{app}/register", post(am::register))
        .route("/ws/v1/am/{app}/finish", post(am::finish))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            audit::record_requests,
        ));
    let protocols = Router::new()
        .route("/ws/v1/nm/register", post(nm::register))
        .route("/ws/v1/nm/heartbeat", post(nm::heartbeat))
        .route("/ws/v1/nm/unregister", post(nm::unregister))
        .route("/ws/v1/am/{app}/allocate", post(am::allocate))
        .merge(audited_am);
    // Hadoop's REST paths (Jersey) also answer with a trailing slash, and
    // scripts use it (`/ws/v1/cluster/apps/?states=RUNNING`), so each is
    // routed both ways.
    let cluster_routes = [
        ("/ws/v1/cluster", get(cluster::info)),
        ("/ws/v1/cluster/info", get(cluster::info)),
        ("/ws/v1/cluster/metrics", get(cluster::metrics)),
        ("/ws/v1/cluster/scheduler", get(cluster::scheduler)),
        ("/ws/v1/cluster/nodes", get(cluster::nodes)),
        ("/ws/v1/cluster/nodes/{node}", get(cluster::node)),
        (
            "/ws/v1/cluster/nodes/{node}/resource",
            post(cluster::node_resource),
        ),
        (
            "/ws/v1/cluster/refresh-queues",
            post(cluster::refresh_queues),
        ),
        ("/ws/v1/cluster/refresh-nodes", post(cluster::refresh_nodes)),
        (
            "/ws/v1/cluster/refresh-admin-acls",
            post(cluster::refresh_admin_acls),
        ),
        (
            "/ws/v1/cluster/refresh-user-groups",
            post(cluster::refresh_user_groups),
        ),
        (
            "/ws/v1/cluster/users/{user}/groups",
            get(cluster::user_groups),
        ),
        (
            "/ws/v1/cluster/refresh-nodes-resources",
            post(cluster::refresh_nodes_resources),
        ),
        ("/ws/v1/cluster/apps", get(apps::list).post(apps::submit)),
        ("/ws/v1/cluster/appstatistics", get(apps::statistics)),
        (
            "/ws/v1/cluster/apps/new-application",
            post(apps::new_application),
        ),
        ("/ws/v1/cluster/apps/{app}", get(apps::get_app)),
        ("/ws/v1/cluster/apps/{app}/explain", get(explain::explain)),
        (
            "/ws/v1/cluster/apps/{app}/state",
            get(apps::get_state).put(apps::put_state),
        ),
        (
            "/ws/v1/cluster/apps/{app}/queue",
            get(apps::get_queue).put(apps::put_queue),
        ),
        (
            "/ws/v1/cluster/apps/{app}/priority",
            get(apps::get_priority).put(apps::put_priority),
        ),
        (
            "/ws/v1/cluster/apps/{app}/timeouts",
            get(apps::get_timeouts),
        ),
        (
            "/ws/v1/cluster/apps/{app}/timeouts/{type}",
            get(apps::get_timeout),
        ),
        ("/ws/v1/cluster/apps/{app}/timeout", put(apps::put_timeout)),
        ("/ws/v1/cluster/apps/{app}/appattempts", get(attempts::list)),
        (
            "/ws/v1/cluster/apps/{app}/appattempts/{attempt}",
            get(attempts::one),
        ),
        (
            "/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers",
            get(attempts::containers),
        ),
        (
            "/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers/{container}",
            get(attempts::container),
        ),
    ];
    let rest = with_trailing_slashes(cluster_routes)
        .route("/metrics", get(cluster::prometheus))
        .route("/jmx", get(jmx::jmx))
        .route("/conf", get(conf::conf))
        .route("/isActive", get(conf::is_active))
        .route("/logLevel", get(log_level::log_level))
        .layer(middleware::from_fn(negotiate_errors))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            audit::record_requests,
        ));
    protocols
        .merge(rest)
        .merge(ui::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

/// A router serving each of `routes` at its path and at the path with a
/// trailing slash, as Hadoop's (Jersey's) REST paths answer.
pub fn with_trailing_slashes<S: Clone + Send + Sync + 'static>(
    routes: impl IntoIterator<Item = (&'static str, MethodRouter<S>)>,
) -> Router<S> {
    routes
        .into_iter()
        .fold(Router::new(), |r, (path, methods)| {
            r.route(&format!("{path}/"), methods.clone())
                .route(path, methods)
        })
}

async fn not_found(req: Request) -> Response {
    let format = Format::from_headers(req.headers());
    let e = ApiError::NotFound(format!(
        "no such resource: {} {} (see docs/api.md for the endpoints)",
        req.method(),
        req.uri().path()
    ));
    log_error(req.method(), req.uri().path(), &e);
    error_response(format, e)
}

/// The answer to a known path called with a method it does not serve: a
/// 405 `RemoteException` in the format the caller accepts.
pub async fn method_not_allowed(req: Request) -> Response {
    let format = Format::from_headers(req.headers());
    let e = ApiError::MethodNotAllowed(format!(
        "{} is not allowed on {}",
        req.method(),
        req.uri().path()
    ));
    log_error(req.method(), req.uri().path(), &e);
    error_response(format, e)
}

/// Logs a refused request: bugs at error level, refusals at debug level
/// (a client's mistake is not the operator's problem).
pub(crate) fn log_error(method: &axum::http::Method, path: &str, e: &ApiError) {
    match e {
        ApiError::Internal(detail) => {
            tracing::error!(%method, path, detail = %detail, "request failed inside the resource manager");
        }
        ApiError::Unavailable => {
            tracing::warn!(%method, path, "request not served: shutting down");
        }
        _ => {
            tracing::debug!(%method, path, status = e.status().as_u16(), message = %e, "request refused");
        }
    }
}

/// The response for `e` in `format`.
pub(crate) fn error_response(format: Format, e: ApiError) -> Response {
    let remote = e.remote_exception();
    let mut res = e.into_response();
    if format == Format::Xml {
        as_xml(&mut res, &remote);
    }
    res
}

/// A JSON answer from the node and AM protocols, serialized in one buffer.
pub(crate) fn json_response<T: serde::Serialize>(value: &T) -> Response {
    let mut body = Vec::with_capacity(512);
    match serde_json::to_writer(&mut body, value) {
        Ok(()) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => ApiError::Internal(format!("cannot encode an answer: {e}")).into_response(),
    }
}

/// The credential of an `Authorization: Bearer <credential>` header (the
/// scheme in any case, as RFC 9110 has it), or `None` without one.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, credential) = value.trim().split_once(' ')?;
    let credential = credential.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !credential.is_empty()).then_some(credential)
}

/// Times a protocol call into `histogram` and logs its failure. A 401 says
/// which scheme to use (`WWW-Authenticate: Bearer`), as HTTP asks: the node
/// and AM protocols' only 401s are missing bearer tokens.
pub(crate) async fn timed(
    histogram: Option<&Histogram>,
    path: &'static str,
    call: impl std::future::Future<Output = Result<Response, ApiError>>,
) -> Response {
    let started = std::time::Instant::now();
    let res = match call.await {
        Ok(res) => res,
        Err(e) => {
            log_error(&axum::http::Method::POST, path, &e);
            let unauthorized = matches!(e, ApiError::Unauthorized(_));
            let mut res = e.into_response();
            if unauthorized {
                res.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            res
        }
    };
    if let Some(h) = histogram {
        h.record(started.elapsed().as_secs_f64());
    }
    res
}

/// Logs failed REST requests and re-encodes their `RemoteException` as XML
/// when the caller asked for XML.
async fn negotiate_errors(req: Request, next: Next) -> Response {
    let format = Format::from_headers(req.headers());
    let method = req.method().clone();
    let uri = req.uri().clone();
    let mut res = next.run(req).await;
    let Some(remote) = res.extensions().get::<RemoteException>().cloned() else {
        return res;
    };
    let status = res.status();
    let path = uri.path();
    if let Some(InternalDetail(detail)) = res.extensions().get::<InternalDetail>() {
        tracing::error!(%method, %path, status = status.as_u16(), detail = %detail, "request failed inside the resource manager");
    } else if status.is_server_error() {
        tracing::warn!(%method, %path, status = status.as_u16(), message = %remote.message, "request not served");
    } else {
        tracing::debug!(%method, %path, status = status.as_u16(), message = %remote.message, "request refused");
    }
    if format == Format::Xml {
        as_xml(&mut res, &remote);
    }
    res
}

fn as_xml(res: &mut Response, remote: &RemoteException) {
    if let Ok((body, _)) = codec::encode(Format::Xml, "RemoteException", remote) {
        *res.body_mut() = axum::body::Body::from(body);
        res.headers_mut()
            .insert(header::CONTENT_TYPE, codec::xml_content_type());
        res.headers_mut().remove(header::CONTENT_LENGTH);
    }
}

/// An application id from the path; a malformed one is a 400.
pub(crate) struct AppParam(pub(crate) AppId);

impl<S: Send + Sync> FromRequestParts<S> for AppParam {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<AppParam, ApiError> {
        let Path(text) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| invalid_path(&e))?;
        path_id(&text).map(AppParam)
    }
}

/// A node id from the path; a malformed one is a 400.
pub(crate) struct NodeParam(pub(crate) NodeId);

impl<S: Send + Sync> FromRequestParts<S> for NodeParam {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<NodeParam, ApiError> {
        let Path(text) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e| invalid_path(&e))?;
        path_id(&text).map(NodeParam)
    }
}

/// A path that does not fit its route (a segment axum cannot decode): a 400.
pub(crate) fn invalid_path(e: &PathRejection) -> ApiError {
    ApiError::BadRequest(format!("invalid path: {}", e.body_text()))
}

/// An id (app, attempt, container, node) from a path segment; a malformed
/// one is a 400 saying what is wrong with it.
pub(crate) fn path_id<T>(text: &str) -> Result<T, ApiError>
where
    T: std::str::FromStr<Err = weft_model::IdParseError>,
{
    text.parse()
        .map_err(|e: weft_model::IdParseError| ApiError::BadRequest(e.to_string()))
}

/// `Location` header value for an app: an absolute URL, as Hadoop writes
/// it (the request's URL plus the id), because scripts fetch it as given
/// and an HTTP library refuses a URL with no scheme and host. The host is
/// the request's `Host` when it is a valid authority, the scheme the
/// policy's (`https` under HTTPS_ONLY); without a host the path alone is
/// given.
pub(crate) fn app_location(scheme: &str, app: AppId, host: Option<&HeaderValue>) -> HeaderValue {
    let path = format!("/ws/v1/cluster/apps/{app}");
    let authority = host
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<axum::http::uri::Authority>().ok())
        // user:password@ has no place in a URL handed back to everyone.
        .filter(|a| !a.as_str().contains('@'));
    let text = match authority {
        Some(a) => format!("{scheme}://{a}{path}"),
        None => path,
    };
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("/ws/v1/cluster/apps"))
}
