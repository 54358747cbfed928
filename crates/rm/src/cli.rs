//! The YARN-style commands behind `weft application`, `weft
//! applicationattempt`, `weft container`, `weft queue`, `weft node` and
//! `weft rmadmin`: each calls the REST API through `client`
//! and renders the answer as text shaped like YARN's own CLI prints it.
//!
//! Parsing the command line and printing are the binary's; these functions
//! return the text (or the error), so they are tested against a live router.
//! The one long-running command, `-refreshNodes -g -client`, hands its
//! progress to a callback as it goes and stops waiting when told.

use std::fmt::Write as _;
use std::future::Future;
use std::time::Duration;

use http::Method;
use serde::de::DeserializeOwned;

use crate::client::{ClientError, RmClient, encode_query};
use crate::dto::apps::{
    APP_STATES, AppDto, AppPriorityDto, AppQueueDto, AppStateDto, AppTimeoutUpdateDto, AppsDto,
    LIFETIME, MAX_LIFETIME_SECS,
};
use crate::dto::cluster::{
    NodeDto, NodeResourceDto, NodesDto, QueueDto, RefreshNodesDto, RefreshNodesRequest,
    RefreshQueuesDto, SchedulerDto,
};
use crate::dto::cluster::{
    NodeResizeDto, RefreshAdminAclsDto, RefreshNodesResourcesDto, RefreshUserGroupsDto,
    UserGroupsDto,
};
use crate::iso8601::EpochMs;

/// The path of an application typed on the command line, then `rest`. The
/// id is percent-encoded as one path segment, so whatever was typed (a `/`,
/// a `?`, a space) reaches the RM whole, which says what is wrong with it,
/// rather than naming another resource or failing before it is sent.
fn app_path(app: &str, rest: &str) -> String {
    format!("/ws/v1/cluster/apps/{}{rest}", encode_query(app))
}

/// Fetches `path` and unwraps Hadoop's `{"<root>": ...}`.
async fn get_wrapped<T: DeserializeOwned>(
    client: &mut RmClient,
    path: &str,
    root: &str,
) -> Result<T, ClientError> {
    let value: serde_json::Value = client.get(path).await?;
    unwrap_root(value, root)
}

/// Calls the RM and unwraps the object its answer wraps in `root`, as
/// every admin answer is wrapped (`{"refreshQueues": {...}}`).
async fn call_wrapped<T: DeserializeOwned>(
    client: &mut RmClient,
    method: Method,
    path: &str,
    body: Option<&impl serde::Serialize>,
    root: &str,
) -> Result<T, ClientError> {
    let value: serde_json::Value = client.call(method, path, body).await?;
    unwrap_root(value, root)
}

fn unwrap_root<T: DeserializeOwned>(
    mut value: serde_json::Value,
    root: &str,
) -> Result<T, ClientError> {
    let mut inner = value
        .get_mut(root)
        .map(serde_json::Value::take)
        .ok_or_else(|| ClientError::Unexpected {
            status: http::StatusCode::OK,
            why: format!("the answer has no {root:?} object"),
        })?;
    // An empty list is written `{"apps": null}`, as Hadoop writes it.
    if inner.is_null() {
        inner = serde_json::Value::Object(serde_json::Map::new());
    }
    serde_json::from_value(inner).map_err(|e| ClientError::Unexpected {
        status: http::StatusCode::OK,
        why: format!("cannot decode {root}: {e}"),
    })
}

/// The states `-list` asks for, as YARN's CLI reads `-appStates`: entries
/// trimmed and upper-cased, empty ones skipped (so `-appStates ""` means the
/// default, not every state), `ALL` for every state, duplicates dropped,
/// known states in YARN's order. A name YARN does not know is kept, after
/// the others, for the RM to refuse with the list of valid ones.
fn app_states(typed: &[String]) -> Vec<String> {
    let typed: Vec<String> = typed
        .iter()
        .map(|s| s.trim().to_ascii_uppercase())
        .filter(|s| !s.is_empty())
        .collect();
    if typed.is_empty() {
        return vec!["SUBMITTED".into(), "ACCEPTED".into(), "RUNNING".into()];
    }
    if typed.iter().any(|s| s == "ALL") {
        return APP_STATES.iter().map(|&s| s.to_owned()).collect();
    }
    let mut states: Vec<String> = APP_STATES
        .iter()
        .filter(|&&known| typed.iter().any(|t| t == known))
        .map(|&s| s.to_owned())
        .collect();
    for t in typed {
        if !states.contains(&t) {
            states.push(t);
        }
    }
    states
}

/// Comma-separated values as YARN's CLI reads them: trimmed, empty ones
/// skipped, duplicates dropped.
fn list_values(typed: &[String], upper: bool) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for v in typed {
        let v = v.trim();
        let v = if upper {
            v.to_ascii_uppercase()
        } else {
            v.to_owned()
        };
        if !v.is_empty() && !values.contains(&v) {
            values.push(v);
        }
    }
    values
}

/// Progress as YARN's CLI prints it (`DecimalFormat("###.##%")`): at most two
/// decimals, no trailing zeros, so 12.5 reads `12.5%` and 100 reads `100%`.
fn progress(percent: f32) -> String {
    let text = format!("{:.2}", f64::from(percent));
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

/// `weft application -list [-appStates ...] [-appTypes ...] [-appTags ...]`.
/// States default to YARN's (SUBMITTED, ACCEPTED, RUNNING); `ALL` lists every app.
pub async fn application_list(
    client: &mut RmClient,
    states: &[String],
    types: &[String],
    tags: &[String],
) -> Result<String, ClientError> {
    let states = app_states(states);
    let types = list_values(types, true);
    let tags = list_values(tags, false);
    let mut path = format!(
        "/ws/v1/cluster/apps?states={}",
        encode_query(&states.join(","))
    );
    if !types.is_empty() {
        let _ = write!(path, "&applicationTypes={}", encode_query(&types.join(",")));
    }
    if !tags.is_empty() {
        let _ = write!(path, "&applicationTags={}", encode_query(&tags.join(",")));
    }
    let apps: AppsDto = get_wrapped(client, &path, "apps").await?;
    let mut out = String::new();
    // Hadoop 3's words and widths (2.x had no tags and a 20-wide queue):
    // scripts that parse `yarn application -list` read Weft's the same way.
    let _ = writeln!(
        out,
        "Total number of applications (application-types: [{}], states: [{}] and tags: [{}]):{}",
        types.join(", "),
        states.join(", "),
        tags.join(", "),
        apps.app.len()
    );
    let _ = writeln!(
        out,
        "{:>30}\t{:>20}\t{:>20}\t{:>10}\t{:>10}\t{:>18}\t{:>18}\t{:>15}\t{:>35}",
        "Application-Id",
        "Application-Name",
        "Application-Type",
        "User",
        "Queue",
        "State",
        "Final-State",
        "Progress",
        "Tracking-URL"
    );
    for a in &apps.app {
        let url = if a.tracking_url.is_empty() {
            "N/A"
        } else {
            &a.tracking_url
        };
        let _ = writeln!(
            out,
            "{:>30}\t{:>20}\t{:>20}\t{:>10}\t{:>10}\t{:>18}\t{:>18}\t{:>15}\t{:>35}",
            a.id,
            a.name,
            a.application_type,
            a.user,
            a.queue,
            a.state,
            a.final_status,
            progress(a.progress),
            url
        );
    }
    Ok(out)
}

/// `weft application -status <appId>`.
pub async fn application_status(client: &mut RmClient, app: &str) -> Result<String, ClientError> {
    let a: AppDto = get_wrapped(client, &app_path(app, ""), "app").await?;
    let mut out = String::from("Application Report : \n");
    let na = |s: &str| {
        if s.is_empty() {
            "N/A".to_owned()
        } else {
            s.to_owned()
        }
    };
    let lines = [
        ("Application-Id", a.id.clone()),
        ("Application-Name", a.name.clone()),
        ("Application-Type", a.application_type.clone()),
        ("User", a.user.clone()),
        ("Queue", a.queue.clone()),
        ("Application Priority", a.priority.to_string()),
        ("Application Tags", a.application_tags.clone()),
        ("Start-Time", a.started_time.to_string()),
        ("Finish-Time", a.finished_time.to_string()),
        ("Progress", progress(a.progress)),
        ("State", a.state.clone()),
        ("Final-State", a.final_status.clone()),
        ("Tracking-URL", na(&a.tracking_url)),
        ("AM RPC Address", na(&a.am_rpc_address)),
        ("AM Host", na(&a.am_host_http_address)),
        (
            "Aggregate Resource Allocation",
            format!(
                "{} MB-seconds, {} vcore-seconds",
                a.memory_seconds, a.vcore_seconds
            ),
        ),
        (
            "Allocated Resources",
            format!(
                "<memory:{}, vCores:{}>, {} containers",
                a.allocated_mb, a.allocated_vcores, a.running_containers
            ),
        ),
        ("Diagnostics", a.diagnostics.clone()),
        ("Unmanaged Application", a.unmanaged_application.to_string()),
    ];
    for (k, v) in lines {
        let _ = writeln!(out, "\t{k} : {v}");
    }
    // YARN's CLI prints each timeout on one line after the report.
    for t in a.timeouts.iter().flat_map(|t| &t.timeout) {
        let _ = writeln!(
            out,
            "\tTimeoutType : {}\tExpiryTime : {}\tRemainingTime : {}seconds",
            t.timeout_type, t.expiry_time, t.remaining_time_in_seconds
        );
    }
    Ok(out)
}

/// `weft application -kill <appId>...`: kills each, reporting each (an app
/// that already ended is reported, not killed, as YARN's CLI does).
pub async fn application_kill(
    client: &mut RmClient,
    apps: &[String],
) -> Result<String, ClientError> {
    let mut out = String::new();
    for app in apps {
        let path = app_path(app, "/state");
        // Not wrapped, as in Hadoop: `{"state": "RUNNING"}`.
        let current: AppStateDto = client.get(&path).await?;
        if matches!(current.state.as_str(), "FINISHED" | "FAILED" | "KILLED") {
            let _ = writeln!(
                out,
                "Application {app} has already finished ({})",
                current.state
            );
            continue;
        }
        let body = AppStateDto {
            state: "KILLED".to_owned(),
            diagnostics: None,
        };
        let _: serde_json::Value = client.call(Method::PUT, &path, Some(&body)).await?;
        let _ = writeln!(out, "Killing application {app}");
    }
    Ok(out)
}

/// `weft application -movetoqueue <appId> -queue <queue>`.
pub async fn application_move(
    client: &mut RmClient,
    app: &str,
    queue: &str,
) -> Result<String, ClientError> {
    let body = AppQueueDto {
        queue: queue.to_owned(),
    };
    let v: serde_json::Value = client
        .call(Method::PUT, &app_path(app, "/queue"), Some(&body))
        .await?;
    let to = v.get("queue").and_then(|q| q.as_str()).unwrap_or(queue);
    Ok(format!(
        "Moving application {app} to queue {queue}\nSuccessfully completed move to {to}.\n"
    ))
}

/// `weft application -appId <appId> -updatePriority <priority>`. Like
/// Hadoop's CLI, says so when the priority in force is not the one asked
/// for: the RM lowered it to `yarn.cluster.max-application-priority`.
pub async fn application_priority(
    client: &mut RmClient,
    app: &str,
    priority: i32,
) -> Result<String, ClientError> {
    let body = AppPriorityDto { priority };
    let v: serde_json::Value = client
        .call(Method::PUT, &app_path(app, "/priority"), Some(&body))
        .await?;
    let set = v
        .get("priority")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(i64::from(priority));
    if set == i64::from(priority) {
        return Ok(format!(
            "Updating priority of an application {app}\nSuccessfully updated the application {app} with priority {priority}\n"
        ));
    }
    Ok(format!(
        "Updating priority of an application {app}\nUpdated the priority of application {app} to {set}, the cluster's maximum application priority (yarn.cluster.max-application-priority), not {priority}\n"
    ))
}

/// `weft application -appId <appId> -updateLifetime <seconds>`: the app is
/// killed `secs` seconds from `now` (the client's clock, as YARN's CLI
/// counts), sooner or later than it would have been.
pub async fn application_update_lifetime(
    client: &mut RmClient,
    app: &str,
    secs: u64,
    now: EpochMs,
) -> Result<String, ClientError> {
    let ms = i64::try_from(secs.min(MAX_LIFETIME_SECS) * 1000).unwrap_or(i64::MAX);
    let body = AppTimeoutUpdateDto::lifetime(EpochMs(now.0.saturating_add(ms)));
    let v: serde_json::Value = client
        .call(Method::PUT, &app_path(app, "/timeout"), Some(&body))
        .await?;
    let expiry = v["timeout"]["expiryTime"].as_str().unwrap_or("?");
    Ok(format!(
        "Updating timeout for given timeoutType: {LIFETIME} of an application {app}\nSuccessfully updated {LIFETIME} of an application {app}. New expiry time is {expiry}\n"
    ))
}

fn find_queue<'a>(q: &'a QueueDto, name: &str) -> Option<&'a QueueDto> {
    let full = if name == "root" || name.starts_with("root.") {
        name.to_owned()
    } else {
        format!("root.{name}")
    };
    if q.queue_name == full {
        return Some(q);
    }
    q.child_queues
        .as_ref()?
        .queue
        .iter()
        .find_map(|c| find_queue(c, name))
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// `weft queue -status <queue>`: YARN's queue report, with the Fair
/// Scheduler's meaning of capacity (fair share / cluster) and current
/// capacity (usage / fair share).
pub async fn queue_status(client: &mut RmClient, queue: &str) -> Result<String, ClientError> {
    let s: SchedulerDto = get_wrapped(client, "/ws/v1/cluster/scheduler", "scheduler").await?;
    let Some(q) = find_queue(&s.scheduler_info.root_queue, queue) else {
        return Err(ClientError::Remote {
            status: http::StatusCode::NOT_FOUND,
            exception: crate::http::error::ApiError::NotFound(format!(
                "Cannot get queue from RM by queueName = {queue}, please check."
            ))
            .remote_exception(),
        });
    };
    let cluster = q.cluster_resources.memory;
    let mut out = String::from("Queue Information : \n");
    let _ = writeln!(out, "Queue Name : {}", q.queue_name);
    let lines = [
        ("State", "RUNNING".to_owned()),
        ("Scheduling Policy", q.scheduling_policy.clone()),
        ("Weight", q.weight.to_string()),
        (
            "Capacity",
            format!("{:.1}%", pct(q.fair_resources.memory, cluster)),
        ),
        (
            "Current Capacity",
            format!(
                "{:.1}%",
                pct(q.used_resources.memory, q.fair_resources.memory)
            ),
        ),
        (
            "Maximum Capacity",
            format!("{:.1}%", pct(q.max_resources.memory, cluster)),
        ),
        (
            "Used Resources",
            format!(
                "<memory:{}, vCores:{}>",
                q.used_resources.memory, q.used_resources.vcores
            ),
        ),
        (
            "Fair Share",
            format!(
                "<memory:{}, vCores:{}>",
                q.fair_resources.memory, q.fair_resources.vcores
            ),
        ),
        (
            "Steady Fair Share",
            format!(
                "<memory:{}, vCores:{}>",
                q.steady_fair_resources.memory, q.steady_fair_resources.vcores
            ),
        ),
        (
            "Default Node Label expression",
            "<DEFAULT_PARTITION>".to_owned(),
        ),
        ("Accessible Node Labels", "*".to_owned()),
    ];
    for (k, v) in lines {
        let _ = writeln!(out, "\t{k} : {v}");
    }
    if let Some(children) = &q.child_queues {
        let names: Vec<&str> = children
            .queue
            .iter()
            .map(|c| c.queue_name.as_str())
            .collect();
        let _ = writeln!(out, "\tChild Queues : {}", names.join(", "));
    }
    Ok(out)
}

mod attempts;
mod explain;

pub use attempts::{attempt_list, attempt_status, container_list, container_status};
pub use explain::application_explain;

/// `weft node -list [-states S,...] [-all]`: running nodes by default; an
/// unhealthy node's health report follows its row.
pub async fn node_list(
    client: &mut RmClient,
    states: &[String],
    all: bool,
) -> Result<String, ClientError> {
    let path = if all {
        "/ws/v1/cluster/nodes".to_owned()
    } else if states.is_empty() {
        "/ws/v1/cluster/nodes?states=RUNNING".to_owned()
    } else {
        format!(
            "/ws/v1/cluster/nodes?states={}",
            encode_query(&states.join(","))
        )
    };
    let nodes: NodesDto = get_wrapped(client, &path, "nodes").await?;
    let mut out = String::new();
    let _ = writeln!(out, "Total Nodes:{}", nodes.node.len());
    let _ = writeln!(
        out,
        "{:>16}\t{:>15}\t{:>17}\t{:>28}",
        "Node-Id", "Node-State", "Node-Http-Address", "Number-of-Running-Containers"
    );
    for n in &nodes.node {
        let _ = writeln!(
            out,
            "{:>16}\t{:>15}\t{:>17}\t{:>28}",
            n.id, n.state, n.node_http_address, n.num_containers
        );
        // Weft's addition below the row: why an unhealthy node is out of
        // service, which Hadoop shows only with -status.
        if !n.health_report.is_empty() {
            let _ = writeln!(out, "\tHealth-Report : {}", n.health_report);
        }
    }
    Ok(out)
}

/// `weft node -status <nodeId>`.
pub async fn node_status(client: &mut RmClient, node: &str) -> Result<String, ClientError> {
    let path = format!("/ws/v1/cluster/nodes/{}", encode_query(node));
    let n: NodeDto = get_wrapped(client, &path, "node").await?;
    let mut out = String::from("Node Report : \n");
    let lines = [
        ("Node-Id", n.id.clone()),
        ("Rack", n.rack.clone()),
        ("Node-State", n.state.clone()),
        ("Node-Http-Address", n.node_http_address.clone()),
        ("Last-Health-Update", n.last_health_update.to_string()),
        ("Health-Report", n.health_report.clone()),
        ("Containers", n.num_containers.to_string()),
        ("Memory-Used", format!("{}MB", n.used_memory_mb)),
        ("Memory-Capacity", format!("{}MB", n.total_resource.memory)),
        ("CPU-Used", format!("{} vcores", n.used_virtual_cores)),
        (
            "CPU-Capacity",
            format!("{} vcores", n.total_resource.vcores),
        ),
    ];
    for (k, v) in lines {
        let _ = writeln!(out, "\t{k} : {v}");
    }
    Ok(out)
}

/// `weft rmadmin -refreshQueues`: prints nothing on success but the file's warnings.
pub async fn rmadmin_refresh_queues(client: &mut RmClient) -> Result<String, ClientError> {
    let r: RefreshQueuesDto = call_wrapped(
        client,
        Method::POST,
        "/ws/v1/cluster/refresh-queues",
        None::<&()>,
        "refreshQueues",
    )
    .await?;
    let mut out = String::new();
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    Ok(out)
}

/// The longest over-commit timeout `-updateNodeResource` takes, in
/// milliseconds: Hadoop's `overCommitTimeout` is an int.
pub const MAX_OVERCOMMIT_TIMEOUT_MS: i64 = i32::MAX as i64;

/// `weft rmadmin -updateNodeResource <nodeId> <memMB> <vcores>
/// [timeoutMs]`: what the node offers now, and whether its containers
/// hold more than the new size (over-committed). The timeout is in
/// milliseconds, as Hadoop's; -1 or none: no timeout.
pub async fn rmadmin_update_node_resource(
    client: &mut RmClient,
    node: &str,
    memory_mb: u64,
    vcores: u64,
    timeout_ms: Option<i64>,
) -> Result<String, ClientError> {
    let timeout_ms = timeout_ms.unwrap_or(-1);
    let body = serde_json::json!({
        "resourceOption": {
            "resource": {"memory": memory_mb, "vCores": vcores},
            "overCommitTimeout": timeout_ms,
        }
    });
    let path = format!("/ws/v1/cluster/nodes/{}/resource", encode_query(node));
    let r: NodeResourceDto =
        call_wrapped(client, Method::POST, &path, Some(&body), "resourceInfo").await?;
    let mut out = format!(
        "Node {node} resized to {} MB, {} vcores",
        r.capability.memory, r.capability.vcores
    );
    if r.overcommitted {
        let _ = write!(
            out,
            "; it is over-committed: its containers hold more, so it offers {} MB, {} vcores and takes nothing new until they end",
            r.memory, r.vcores
        );
        match timeout_ms {
            ms if ms >= 0 => {
                let _ = write!(
                    out,
                    " (in {ms} ms the newest containers past the new size are stopped)"
                );
            }
            _ => out.push_str(" (no timeout: they run to their end)"),
        }
    }
    out.push('\n');
    Ok(out)
}

/// How `weft rmadmin -refreshNodes` treats the nodes the include and
/// exclude files now disallow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefreshNodes {
    /// Without `-g`: decommission them at once.
    Forced,
    /// `-g [timeout] -server` (or `-g` alone): the RM drains them and ends
    /// each drain at its timeout: the exclude file's for the host, else
    /// `timeout` (seconds, -1 for none), else the site's default.
    Server {
        /// The timeout typed after `-g`, if any.
        timeout: Option<i64>,
    },
    /// `-g [timeout] -client`: the RM drains them with no timeout of its
    /// own (the exclude file's per-host timeouts still hold); this command
    /// waits for them, then decommissions at once whatever still drains
    /// after `timeout` seconds (none or -1: it waits as long as it takes).
    Client {
        /// The timeout typed after `-g`, if any.
        timeout: Option<i64>,
    },
}

/// How a `-refreshNodes` ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefreshNodesOutcome {
    /// The refresh is done (with `-client`: every node it drained has
    /// left, or the rest were decommissioned at the timeout).
    Done,
    /// `-client` stopped waiting when told to; these nodes keep draining
    /// on the RM.
    Interrupted {
        /// The nodes still draining.
        draining: Vec<String>,
    },
}

async fn post_refresh_nodes(
    client: &mut RmClient,
    body: Option<&RefreshNodesRequest>,
) -> Result<RefreshNodesDto, ClientError> {
    call_wrapped(
        client,
        Method::POST,
        "/ws/v1/cluster/refresh-nodes",
        body,
        "refreshNodes",
    )
    .await
}

/// One line per node a refresh changed, then the files' warnings.
fn describe_refresh(r: &RefreshNodesDto) -> String {
    let mut out = String::new();
    if r.include_path.is_none() && r.exclude_path.is_none() {
        out.push_str("no include or exclude file is configured (yarn.resourcemanager.nodes.include-path, yarn.resourcemanager.nodes.exclude-path): every node is allowed\n");
    }
    for c in &r.changes {
        let timeout = match c.decommissioning_timeout {
            Some(t) if t < 0 => ", no timeout".to_owned(),
            Some(t) => format!(", timeout {t} s"),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "{}: {} -> {}{timeout} ({})",
            c.node_id, c.previous_state, c.state, c.reason
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// What an operator is told when `-refreshNodes -g -client` ends before
/// the nodes it drained have left: the RM was asked for no timeout, so they
/// drain until told otherwise.
pub fn still_draining(draining: &[String]) -> String {
    format!(
        "still draining on the resource manager, with no timeout unless their exclude entries give one: {} (decommission them at once with weft rmadmin -refreshNodes)",
        draining.join(", ")
    )
}

/// `weft rmadmin -refreshNodes [-g [timeout] -client|-server]`: the RM
/// rereads its include and exclude files and applies them. Each line of
/// what happens goes to `say` as it happens; with `-client`, the nodes it
/// drained are polled every `poll`, and `stop` resolving (Ctrl-C) ends
/// the wait, leaving them draining.
///
/// The client's own timeout, if it has one, bounds each call, not the
/// wait: a poll the RM does not answer in time is said and tried again at
/// the next one, and the wait still ends when the nodes have left or at
/// `timeout` (later by at most the poll in flight then). Any other failed
/// poll ends it, naming the nodes left draining.
pub async fn rmadmin_refresh_nodes(
    client: &mut RmClient,
    how: RefreshNodes,
    poll: Duration,
    stop: impl Future<Output = ()>,
    mut say: impl FnMut(String),
) -> Result<RefreshNodesOutcome, ClientError> {
    let body = match how {
        RefreshNodes::Forced => None,
        RefreshNodes::Server { timeout } => Some(RefreshNodesRequest {
            graceful: true,
            timeout_secs: timeout,
        }),
        // The RM keeps no timeout of its own: this command enforces it.
        RefreshNodes::Client { .. } => Some(RefreshNodesRequest {
            graceful: true,
            timeout_secs: Some(-1),
        }),
    };
    let r = post_refresh_nodes(client, body.as_ref()).await?;
    say(describe_refresh(&r));
    let RefreshNodes::Client { timeout } = how else {
        return Ok(RefreshNodesOutcome::Done);
    };
    let mut draining: Vec<String> = r
        .changes
        .iter()
        .filter(|c| c.state == "DECOMMISSIONING")
        .map(|c| c.node_id.clone())
        .collect();
    let limit = timeout
        .and_then(|t| u64::try_from(t).ok())
        .map(Duration::from_secs);
    let started = tokio::time::Instant::now();
    tokio::pin!(stop);
    while !draining.is_empty() {
        let waited = started.elapsed();
        if limit.is_some_and(|l| waited >= l) {
            say(format!(
                "graceful decommissioning not done in {} s; decommissioning {} at once\n",
                waited.as_secs(),
                draining.join(", ")
            ));
            let r = post_refresh_nodes(client, None).await?;
            say(describe_refresh(&r));
            return Ok(RefreshNodesOutcome::Done);
        }
        // Ctrl-C is heard during a poll too, which the RM may take up to
        // the client's timeout to answer, or never without one.
        let polled = tokio::select! {
            () = &mut stop => return Ok(RefreshNodesOutcome::Interrupted { draining }),
            polled = async {
                tokio::time::sleep(poll).await;
                get_wrapped::<NodesDto>(
                    client,
                    "/ws/v1/cluster/nodes?states=DECOMMISSIONING",
                    "nodes",
                )
                .await
            } => polled,
        };
        let now = match polled {
            Ok(now) => now,
            // A busy or stopped RM's one late answer does not end the wait:
            // the drains have no timeout but this command's, so giving up
            // here would leave them draining for ever. The next poll tries
            // again, and the timeout above still ends the wait.
            Err(e @ ClientError::Timeout { .. }) => {
                say(format!(
                    "[{:>4} s] {e}; still waiting\n",
                    started.elapsed().as_secs()
                ));
                continue;
            }
            Err(e) => {
                say(format!("stopped waiting; {}\n", still_draining(&draining)));
                return Err(e);
            }
        };
        draining.retain(|id| now.node.iter().any(|n| &n.id == id));
        let still: Vec<String> = now
            .node
            .iter()
            .filter(|n| draining.contains(&n.id))
            .map(|n| format!("{} ({} containers)", n.id, n.num_containers))
            .collect();
        if !still.is_empty() {
            say(format!(
                "[{:>4} s] still draining: {}\n",
                started.elapsed().as_secs(),
                still.join(", ")
            ));
        }
    }
    say(format!(
        "graceful decommissioning done in {} s\n",
        started.elapsed().as_secs()
    ));
    Ok(RefreshNodesOutcome::Done)
}

/// `weft rmadmin -refreshNodesResources`: the RM rereads
/// `dynamic-resources.xml` and resizes the registered nodes it changes;
/// one line per node resized, then the nodes it names that are not
/// registered, then the file's warnings.
pub async fn rmadmin_refresh_nodes_resources(client: &mut RmClient) -> Result<String, ClientError> {
    let r: RefreshNodesResourcesDto = call_wrapped(
        client,
        Method::POST,
        "/ws/v1/cluster/refresh-nodes-resources",
        None::<&()>,
        "refreshNodesResources",
    )
    .await?;
    Ok(describe_nodes_resources(&r))
}

/// `weft rmadmin -refreshAdminAcls`: the administrators now in force.
pub async fn rmadmin_refresh_admin_acls(client: &mut RmClient) -> Result<String, ClientError> {
    let r: RefreshAdminAclsDto = call_wrapped(
        client,
        Method::POST,
        "/ws/v1/cluster/refresh-admin-acls",
        None::<&()>,
        "refreshAdminAcls",
    )
    .await?;
    let mut out = String::new();
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let _ = writeln!(out, "yarn.admin.acl is now {:?}", r.admin_acl);
    if !r.acl_enabled {
        let _ = writeln!(
            out,
            "note: yarn.acl.enable is off, so everybody administers whatever the list says"
        );
    }
    Ok(out)
}

/// `weft rmadmin -refreshUserToGroupsMappings`: how many users the group
/// file now maps, or how many users' cached groups were forgotten.
pub async fn rmadmin_refresh_user_groups(client: &mut RmClient) -> Result<String, ClientError> {
    let r: RefreshUserGroupsDto = call_wrapped(
        client,
        Method::POST,
        "/ws/v1/cluster/refresh-user-groups",
        None::<&()>,
        "refreshUserGroups",
    )
    .await?;
    Ok(describe_user_groups(&r))
}

fn describe_user_groups(r: &RefreshUserGroupsDto) -> String {
    if let Some(f) = &r.groups_file {
        return format!("{f}: {} user(s) mapped to groups\n", r.users);
    }
    match r.group_mapping.as_str() {
        "org.apache.hadoop.security.NullGroupsMapping" => {
            "org.apache.hadoop.security.NullGroupsMapping: every user has no groups\n".to_owned()
        }
        // An RM from before the mapping was reported, without a file.
        "" => "no group file is configured (weft.rm.groups.file): every user has no groups\n"
            .to_owned(),
        class => format!(
            "{class}: the groups of {} user(s) cached from the operating system are forgotten; each is looked up again when next needed\n",
            r.cached_users_cleared
        ),
    }
}

/// `weft rmadmin -getGroups USER...`: one `user : group...` line per user,
/// as Hadoop prints them.
pub async fn rmadmin_get_groups(
    client: &mut RmClient,
    users: &[String],
) -> Result<String, ClientError> {
    let mut out = String::new();
    for user in users {
        let path = format!("/ws/v1/cluster/users/{}/groups", encode_query(user));
        let r: UserGroupsDto =
            call_wrapped(client, Method::GET, &path, None::<&()>, "userGroups").await?;
        // Hadoop's GetGroups: `user :` then ` group` for each.
        let _ = write!(out, "{} :", r.user);
        for g in &r.groups {
            let _ = write!(out, " {g}");
        }
        out.push('\n');
    }
    Ok(out)
}

fn describe_nodes_resources(r: &RefreshNodesResourcesDto) -> String {
    let mut out = String::new();
    if !r.found {
        let _ = writeln!(
            out,
            "{} does not exist: no node has a configured size, and nodes register with their own (a node resized before keeps its size until it registers again)",
            r.path
        );
    }
    let size = |d: &crate::dto::ResourceDto| format!("{} MB, {} vcores", d.memory, d.vcores);
    for c in &r.changes {
        let NodeResizeDto {
            node_id,
            previous,
            capability,
            overcommitted,
            over_commit_timeout,
        } = c;
        let _ = write!(out, "{node_id}: {} -> {}", size(previous), size(capability));
        if *overcommitted {
            match over_commit_timeout {
                Some(ms) => {
                    let _ = write!(
                        out,
                        " (over-committed: its containers hold more; in {ms} ms the newest past the new size are stopped)"
                    );
                }
                None => {
                    out.push_str(" (over-committed: its containers hold more and run to their end)")
                }
            }
        }
        out.push('\n');
    }
    if r.found && r.changes.is_empty() {
        match r.configured_nodes {
            0 => {
                let _ = writeln!(out, "{} gives no node a size", r.path);
            }
            n => {
                let nodes = if n == 1 { "node" } else { "nodes" };
                let _ = writeln!(
                    out,
                    "no registered node changes size: {} gives {n} {nodes} a size, and each registered one has it already",
                    r.path
                );
            }
        }
    }
    if !r.not_registered.is_empty() {
        let _ = writeln!(
            out,
            "not registered, sized when they register: {}",
            r.not_registered.join(", ")
        );
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(typed: &[&str]) -> Vec<String> {
        app_states(&typed.iter().map(|&s| s.to_owned()).collect::<Vec<_>>())
    }

    #[test]
    fn app_states_are_read_as_yarn_reads_them() {
        let default = ["SUBMITTED", "ACCEPTED", "RUNNING"];
        // An empty or blank -appStates is the default, not every state.
        assert_eq!(states(&[]), default);
        assert_eq!(states(&[""]), default);
        assert_eq!(states(&[" ", ""]), default);
        // Trimmed, upper-cased, in YARN's order, each once.
        assert_eq!(
            states(&[" running", "accepted ", "RUNNING"]),
            ["ACCEPTED", "RUNNING"]
        );
        // ALL (any case) is every state, by name, whatever else is typed.
        assert_eq!(states(&["killed", "all", "bogus"]), APP_STATES);
        // An unknown name is kept for the RM to refuse.
        assert_eq!(states(&["bogus", "new"]), ["NEW", "BOGUS"]);
    }

    #[test]
    fn types_and_tags_are_trimmed_and_blank_ones_skipped() {
        let typed = [" weft-shell", "", "WEFT-SHELL", "mapreduce "].map(str::to_owned);
        assert_eq!(list_values(&typed, true), ["WEFT-SHELL", "MAPREDUCE"]);
        let tags = [" Nightly ", " "].map(str::to_owned);
        assert_eq!(list_values(&tags, false), ["Nightly"]);
    }

    /// A listener that accepts every connection, as the kernel does for an
    /// RM stopped by SIGSTOP, and answers nothing but `POST`s, with
    /// `post_answer` (none: it answers nothing at all).
    async fn stuck_rm(post_answer: Option<&'static str>) -> String {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    while let Ok(n @ 1..) = stream.read(&mut buf).await {
                        match post_answer {
                            Some(body) if buf[..n].starts_with(b"POST ") => {
                                let answer = format!(
                                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                                    body.len()
                                );
                                let _ = stream.write_all(answer.as_bytes()).await;
                            }
                            _ => {}
                        }
                    }
                });
            }
        });
        addr
    }

    #[tokio::test]
    async fn a_one_shot_command_fails_when_the_rm_never_answers() {
        let addr = stuck_rm(None).await;
        let mut client = RmClient::new(&addr, Some("alice".to_owned()))
            .unwrap()
            .with_timeout(Duration::from_millis(200));
        let e = tokio::time::timeout(Duration::from_secs(30), node_list(&mut client, &[], false))
            .await
            .expect("the client's timeout ends the command")
            .unwrap_err();
        assert!(matches!(e, ClientError::Timeout { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!("the resource manager at {addr} did not answer within 200 ms")
        );
    }

    #[tokio::test]
    async fn refresh_nodes_client_waits_through_polls_the_rm_does_not_answer() {
        // The refresh drains n1; then the RM stops answering.
        let addr = stuck_rm(Some(
            r#"{"refreshNodes":{"graceful":true,"includePath":null,"excludePath":"/x","changes":[{"nodeId":"n1:8041","previousState":"RUNNING","state":"DECOMMISSIONING","decommissioningTimeout":-1,"reason":"excluded"}],"warnings":[]}}"#,
        ))
        .await;
        let mut client = RmClient::new(&addr, Some("yarn".to_owned()))
            .unwrap()
            .with_timeout(Duration::from_millis(100));
        let late = tokio::sync::Notify::new();
        let mut lines = Vec::new();
        let refresh = rmadmin_refresh_nodes(
            &mut client,
            RefreshNodes::Client { timeout: None },
            Duration::from_millis(10),
            // Told to stop once two polls went unanswered.
            late.notified(),
            |line| {
                if line.contains("did not answer")
                    && lines.iter().any(|l: &String| l.contains("did not answer"))
                {
                    late.notify_one();
                }
                lines.push(line);
            },
        );
        let outcome = tokio::time::timeout(Duration::from_secs(30), refresh)
            .await
            .expect("the wait goes on through late polls until told to stop")
            .unwrap();
        assert_eq!(
            outcome,
            RefreshNodesOutcome::Interrupted {
                draining: vec!["n1:8041".to_owned()]
            }
        );
        assert_eq!(
            lines[0],
            "n1:8041: RUNNING -> DECOMMISSIONING, no timeout (excluded)\n"
        );
        assert!(lines.len() >= 3, "{lines:?}");
        for line in &lines[1..] {
            assert!(
                line.ends_with(&format!(
                    "the resource manager at {addr} did not answer within 100 ms; still waiting\n"
                )),
                "{line}"
            );
        }
    }

    #[test]
    fn a_refresh_of_groups_says_what_maps_them() {
        let answer = |file: Option<&str>, mapping: &str| RefreshUserGroupsDto {
            groups_file: file.map(str::to_owned),
            users: 2,
            group_mapping: mapping.to_owned(),
            cached_users_cleared: 5,
        };
        let os = "org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback";
        assert_eq!(
            describe_user_groups(&answer(Some("/etc/weft/groups"), "weft.rm.groups.file")),
            "/etc/weft/groups: 2 user(s) mapped to groups\n"
        );
        assert_eq!(
            describe_user_groups(&answer(None, os)),
            format!(
                "{os}: the groups of 5 user(s) cached from the operating system are forgotten; each is looked up again when next needed\n"
            )
        );
        assert_eq!(
            describe_user_groups(&answer(
                None,
                "org.apache.hadoop.security.NullGroupsMapping"
            )),
            "org.apache.hadoop.security.NullGroupsMapping: every user has no groups\n"
        );
        // An RM from before `groupMapping`, without a file.
        assert_eq!(
            describe_user_groups(&answer(None, "")),
            "no group file is configured (weft.rm.groups.file): every user has no groups\n"
        );
    }

    #[test]
    fn progress_reads_as_yarn_prints_it() {
        assert_eq!(progress(0.0), "0%");
        assert_eq!(progress(12.5), "12.5%");
        assert_eq!(progress(100.0 / 3.0), "33.33%");
        assert_eq!(progress(99.999), "100%");
        assert_eq!(progress(100.0), "100%");
    }
}
