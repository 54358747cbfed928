//! Cluster-level handlers of the YARN REST API (`info`, `metrics`,
//! `scheduler`, `nodes`), the admin `refresh-queues`, `refresh-nodes`,
//! `refresh-nodes-resources` and a node's `resource` (resizing it), and the
//! Prometheus text at `/metrics`.
//!
//! Reads come from the published views, never from the actor's queue.
//! `refresh-nodes` reads the hosts files here, off the actor, and hands it
//! the lists; what they mean for each node is the actor's. So does
//! `refresh-nodes-resources` with `dynamic-resources.xml`.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use weft_core::NodeError;
use weft_model::Resource;

use crate::actor::{RefreshTerms, RmError};
use crate::config::NodeListSettings;
use crate::dto::cluster::{
    ClusterInfoDto, ClusterMetricsDto, LooseNumber, NodeChangeDto, NodeDto, NodeFilter,
    NodeResourceDto, NodeResourceRequest, NodesDto, RefreshAdminAclsDto, RefreshNodesDto,
    RefreshNodesRequest, RefreshQueuesDto, RefreshUserGroupsDto, ResourceFieldsDto, SchedulerDto,
    UserGroupsDto,
};
use crate::dto::{InvalidField, ResourceDto};
use crate::hosts::{HostLists, TimeoutSecs};
use crate::http::codec::{Format, NamedCaller, OptionalPayload, Params, Payload, Wire};
use crate::http::error::ApiError;
use crate::http::{ApiState, NodeParam};
use crate::metrics::registry::TEXT_FORMAT;
use crate::reload::ReloadError;

use crate::dto::cluster::{NodeResizeDto, RefreshNodesResourcesDto};
use crate::dynamic_resources::DynamicResources;

pub(super) async fn info(State(s): State<ApiState>, format: Format) -> Wire<ClusterInfoDto> {
    let mut info = ClusterInfoDto::new(s.0.cluster_id);
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
    let filter = NodeFilter::from_pairs(&pairs)?;
    let view = s.rm().view();
    let node = filter.apply(&view);
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
    admin_only(&s, &who, "refresh the queues")?;
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
    admin_only(&s, &who, "refresh the nodes")?;
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
    // Hadoop re-reads yarn-site.xml on every refresh, so an exclude file
    // can be named, or the default timeout changed, without a restart.
    let conf_dir = s.0.service.conf_dir.clone();
    let at_start = s.0.service.node_lists();
    let read = tokio::task::spawn_blocking(move || {
        let (settings, mut warnings) = match &conf_dir {
            Some(dir) => NodeListSettings::reread(dir).map_err(|e| e.to_string())?,
            None => (at_start, Vec::new()),
        };
        let (lists, list_warnings) =
            HostLists::load(&settings.hosts_files).map_err(|e| e.to_string())?;
        warnings.extend(list_warnings);
        Ok::<_, String>((settings, lists, warnings))
    });
    let (settings, lists, warnings) = read
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
        default_timeout: settings.decommission_timeout,
        wait_for_apps: settings.decommission_wait_for_apps,
    };
    let files = settings.hosts_files;
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

/// What a resize asks for, read from Hadoop's `ResourceOptionInfo`.
#[derive(Debug, PartialEq, Eq)]
struct ResizeTerms {
    capability: Resource,
    /// In milliseconds, as Hadoop's `overCommitTimeout`.
    timeout_ms: Option<u64>,
    /// Where the resource was in the body, to name it when the core
    /// refuses the size.
    resource_field: &'static str,
}

/// The new size and timeout in `body`, or the field that is wrong and why.
fn resize_terms(body: NodeResourceRequest) -> Result<ResizeTerms, InvalidField> {
    let (prefix, resource, timeout) = match body.resource_option {
        Some(_) if body.resource.is_some() || body.over_commit_timeout.is_some() => {
            return Err(InvalidField::new(
                "resourceOption",
                "send the resource option either wrapped in resourceOption or as resource and overCommitTimeout at the top, not both",
            ));
        }
        Some(o) => ("resourceOption.", o.resource, o.over_commit_timeout),
        None => ("", body.resource, body.over_commit_timeout),
    };
    let resource_field = if prefix.is_empty() {
        "resource"
    } else {
        "resourceOption.resource"
    };
    let Some(ResourceFieldsDto { memory, vcores, .. }) = resource else {
        return Err(InvalidField::new(
            resource_field,
            "is missing: send the new size as {\"memory\": MB, \"vCores\": N}",
        ));
    };
    let size = |value: Option<LooseNumber>, name: &str| -> Result<u64, InvalidField> {
        let field = format!("{resource_field}.{name}");
        let n = value
            .ok_or_else(|| InvalidField::new(field.clone(), "is missing"))?
            .whole(&field)?;
        u64::try_from(n)
            .map_err(|_| InvalidField::new(field, format!("is {n}: a size cannot be negative")))
    };
    let capability = Resource::new(size(memory, "memory")?, size(vcores, "vCores")?);
    let field = format!("{prefix}overCommitTimeout");
    let timeout_ms = match timeout.map(|t| t.whole(&field)).transpose()? {
        None | Some(-1) => None,
        // Hadoop's timeout is an int of milliseconds, negative meaning none;
        // only -1 is taken for none, as `refresh-nodes` takes its timeout.
        Some(t) if (0..=i64::from(i32::MAX)).contains(&t) => Some(t.unsigned_abs()),
        Some(t) => {
            return Err(InvalidField::new(
                field,
                format!(
                    "is {t}: send milliseconds from 0 to {}, or -1 (or nothing) for no timeout",
                    i32::MAX
                ),
            ));
        }
    };
    Ok(ResizeTerms {
        capability,
        timeout_ms,
        resource_field,
    })
}

/// `POST /ws/v1/cluster/nodes/{nodeid}/resource` (Hadoop's
/// `updateNodeResource`): the node offers the new size from now on, or,
/// while its containers hold more, what they hold until they end or the
/// over-commit timeout stops the newest of them.
pub(super) async fn node_resource(
    State(s): State<ApiState>,
    format: Format,
    NamedCaller(who): NamedCaller,
    NodeParam(id): NodeParam,
    Payload(body): Payload<NodeResourceRequest>,
) -> Result<Wire<NodeResourceDto>, ApiError> {
    admin_only(&s, &who, &format!("resize node {id}"))?;
    let terms = resize_terms(body)?;
    let timeout = terms.timeout_ms.map(weft_model::Duration::from_millis);
    tracing::info!(node = %id, capability = %terms.capability, timeout_ms = ?terms.timeout_ms, user = %who.user, "resizing a node");
    let offering = s
        .rm()
        .resize_node(id.clone(), terms.capability, timeout)
        .await
        .map_err(|e| match e {
            RmError::Node(e @ NodeError::BadCapability { .. }) => {
                ApiError::BadRequest(format!("{}: {e}", terms.resource_field))
            }
            // Known, but gone for good: nothing to resize until it is let
            // back in and registers, with the size it registers with.
            RmError::Node(NodeError::Decommissioned(_)) => ApiError::Conflict(format!(
                "node {id} was decommissioned: only a registered node can be resized; once let back in, it registers with its own size"
            )),
            e => e.into(),
        })?;
    Ok(Wire::ok(
        format,
        "resourceInfo",
        NodeResourceDto {
            memory: offering.memory_mb(),
            vcores: offering.vcores(),
            capability: ResourceDto::from_resource(terms.capability),
            overcommitted: offering != terms.capability,
            over_commit_timeout: terms.timeout_ms,
        },
    ))
}

/// `POST /ws/v1/cluster/refresh-nodes-resources` (Hadoop's
/// `refreshNodesResources`): rereads `dynamic-resources.xml`, puts it in
/// force, and resizes each registered node it gives another size.
pub(super) async fn refresh_nodes_resources(
    State(s): State<ApiState>,
    format: Format,
    NamedCaller(who): NamedCaller,
) -> Result<Wire<RefreshNodesResourcesDto>, ApiError> {
    admin_only(&s, &who, "refresh the nodes' resources")?;
    let Some(path) = s.0.service.dynamic_resources_file() else {
        return Err(ApiError::BadRequest(
            "the resource manager runs on its built-in configuration and has no dynamic-resources.xml to read; start it with --conf DIR".to_owned(),
        ));
    };
    let min_allocation = s.0.min_allocation;
    let read = path.clone();
    let loaded = tokio::task::spawn_blocking(move || DynamicResources::load(&read, min_allocation))
        .await
        .map_err(|e| ApiError::Internal(format!("reading {} panicked: {e}", path.display())))?
        .map_err(|e| {
            tracing::warn!(error = %e, "refresh-nodes-resources refused: the sizes in force are unchanged");
            ApiError::BadRequest(format!("{e}\n(nothing changed: the sizes in force stay)"))
        })?;
    let found = loaded.is_some();
    let (resources, mut warnings) = loaded.unwrap_or_default();
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let configured_nodes = resources.nodes.len();
    tracing::info!(path = %path.display(), found, nodes = configured_nodes, user = %who.user, "refreshing the nodes' resources");
    let done = s.rm().refresh_nodes_resources(resources).await?;
    warnings.extend(done.refused);
    Ok(Wire::ok(
        format,
        "refreshNodesResources",
        RefreshNodesResourcesDto {
            path: path.display().to_string(),
            found,
            configured_nodes,
            changes: done
                .resized
                .into_iter()
                .map(|r| NodeResizeDto {
                    node_id: r.node.to_string(),
                    previous: ResourceDto::from_resource(r.previous),
                    capability: ResourceDto::from_resource(r.capability),
                    overcommitted: r.offering != r.capability,
                    over_commit_timeout: r.overcommit_timeout.map(|t| t.as_millis()),
                })
                .collect(),
            not_registered: done
                .not_registered
                .iter()
                .map(ToString::to_string)
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
    ([(header::CONTENT_TYPE, TEXT_FORMAT)], s.0.metrics.render())
}

/// The 403 for an admin call (`yarn.admin.acl`) by anyone else; `what` is
/// what they may not do.
/// `yarn rmadmin -refreshAdminAcls`: reads `weft-site.xml` again and puts
/// its `yarn.admin.acl` in force, as Hadoop re-reads yarn-site.xml. The
/// caller must be an administrator under the list in force before it.
pub(super) async fn refresh_admin_acls(
    State(s): State<ApiState>,
    format: Format,
    NamedCaller(who): NamedCaller,
) -> Result<Wire<RefreshAdminAclsDto>, ApiError> {
    admin_only(&s, &who, "refresh the administrators")?;
    let Some(dir) = s.0.service.conf_dir.clone() else {
        return Err(ApiError::BadRequest(
            "the resource manager runs on its built-in configuration and has no weft-site.xml to read again; start it with --conf DIR"
                .to_owned(),
        ));
    };
    let (admins, warnings) =
        tokio::task::spawn_blocking(move || crate::config::reread_admin_acl(&dir))
            .await
            .map_err(|e| ApiError::Internal(format!("reading the site file panicked: {e}")))?
            .map_err(|e| {
                ApiError::BadRequest(format!("{e}\n(the administrators in force are unchanged)"))
            })?;
    for w in &warnings {
        tracing::warn!("{w}");
    }
    tracing::info!(admins = %admins, by = %who.user, "administrators (yarn.admin.acl) refreshed");
    let access = s.access();
    access.set_admins(admins.clone());
    Ok(Wire::ok(
        format,
        "refreshAdminAcls",
        RefreshAdminAclsDto {
            admin_acl: admins.to_string(),
            acl_enabled: access.enabled(),
            warnings,
        },
    ))
}

/// `yarn rmadmin -refreshUserToGroupsMappings`: reads the group file
/// (`weft.rm.groups.file`) again, or forgets the groups cached from the
/// operating system, as Hadoop's refresh empties its cache; later requests
/// see the new groups.
pub(super) async fn refresh_user_groups(
    State(s): State<ApiState>,
    format: Format,
    NamedCaller(who): NamedCaller,
) -> Result<Wire<RefreshUserGroupsDto>, ApiError> {
    admin_only(&s, &who, "refresh the user-to-groups mappings")?;
    let groups = s.access().groups();
    let path = s.0.service.groups_file.clone();
    let mut users = 0;
    if let Some(read) = path.clone() {
        let file = tokio::task::spawn_blocking(move || crate::config::read_groups(&read))
            .await
            .map_err(|e| ApiError::Internal(format!("reading the group file panicked: {e}")))?
            .map_err(|e| {
                ApiError::BadRequest(format!("{e}\n(the groups in force are unchanged)"))
            })?;
        users = file.users().count();
        groups.set_file(file);
    }
    let cleared = groups.forget_cached();
    let mapping = groups.describe();
    tracing::info!(mapping, users, cleared, by = %who.user, "user-to-groups mappings refreshed");
    Ok(Wire::ok(
        format,
        "refreshUserGroups",
        RefreshUserGroupsDto {
            groups_file: path.map(|p| p.display().to_string()),
            users,
            group_mapping: mapping.to_owned(),
            cached_users_cleared: cleared,
        },
    ))
}

/// `yarn rmadmin -getGroups USER`: the groups the RM maps `user` to now.
pub(super) async fn user_groups(
    State(s): State<ApiState>,
    format: Format,
    axum::extract::Path(user): axum::extract::Path<String>,
) -> Result<Wire<UserGroupsDto>, ApiError> {
    crate::http::codec::check_user_name(&user)?;
    let groups = s.access().groups().groups(&user).await;
    Ok(Wire::ok(
        format,
        "userGroups",
        UserGroupsDto { user, groups },
    ))
}

fn admin_only(s: &ApiState, who: &crate::access::Identity, what: &str) -> Result<(), ApiError> {
    if s.access().is_admin(who) {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!(
        "user {} is not a cluster administrator (yarn.admin.acl) and may not {what}",
        who.user
    )))
}
