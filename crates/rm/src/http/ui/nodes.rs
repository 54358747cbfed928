//! `/cluster/nodes` (and Hadoop's `/cluster/nodes/{STATE}`): the nodes the
//! REST list's `states=` filter selects (`NodeFilter`), as `NodeDto`s; and
//! `/cluster/node/{nodeId}`: one node, with the AMs running on it. Both
//! show what the node reports it uses beside what it was allocated.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::response::Response;

use crate::dto::ResourceDto;
use crate::dto::apps::AppDto;
use crate::dto::cluster::{NodeDto, NodeFilter, ResourceUtilizationInfoDto};
use crate::http::codec::Params;
use crate::http::error::ApiError;
use crate::http::ui::html::{Href, Html};
use crate::http::ui::page::{self, Nav, Page};
use crate::http::ui::{Query, apps, format, refresh};
use crate::http::{ApiState, NodeParam};
use crate::view::View;

/// The states offered as filters: those a Weft node can be in (it never
/// shows YARN's `NEW` or `REBOOTED`, which the filter still takes).
const SHOWN_STATES: [&str; 6] = [
    "RUNNING",
    "UNHEALTHY",
    "DECOMMISSIONING",
    "DECOMMISSIONED",
    "LOST",
    "SHUTDOWN",
];

pub(super) async fn list(State(s): State<ApiState>, q: Query) -> Response {
    respond_list(&s, q, None)
}

/// Hadoop's `/cluster/nodes/unhealthy`: the state in the path, which
/// counts before any `states=` of the query.
pub(super) async fn list_in_state(
    State(s): State<ApiState>,
    state: Result<Path<String>, PathRejection>,
    q: Query,
) -> Response {
    match state {
        Ok(Path(state)) => respond_list(&s, q, Some(state)),
        Err(e) => page::error(&s, crate::http::invalid_path(&e)),
    }
}

pub(super) async fn node(
    State(s): State<ApiState>,
    q: Query,
    node: Result<NodeParam, ApiError>,
) -> Response {
    let view = s.rm().view();
    page::respond(&s, &view, node_page(&view, q, node))
}

fn respond_list(s: &ApiState, q: Query, state: Option<String>) -> Response {
    let view = s.rm().view();
    let built = q.and_then(|Params(mut pairs)| {
        let refresh = refresh(&pairs)?;
        if let Some(state) = state {
            pairs.insert(0, ("states".to_owned(), state));
        }
        let filter = NodeFilter::from_pairs(&pairs)?;
        let nodes = filter.apply(&view);
        let wanted = filter.states();
        let mut body = Html::new();
        body.el("p", &[("class", "filters")], |h| {
            h.text("Show: ");
            h.link_marked(&Href::to("/cluster/nodes"), "all", wanted.is_empty());
            for st in SHOWN_STATES {
                h.link_marked(
                    &Href::to("/cluster/nodes").with_query("states", st),
                    st,
                    wanted == [st],
                );
            }
        });
        body.text_el(
            "p",
            &[],
            format_args!(
                "{} {}.",
                format::count(nodes.len() as u64),
                if nodes.len() == 1 { "node" } else { "nodes" }
            ),
        );
        node_table(&mut body, &nodes);
        let title = if wanted.is_empty() {
            "Nodes".to_owned()
        } else {
            format!("Nodes: {}", wanted.join(", "))
        };
        Ok(Page {
            title,
            nav: Nav::Nodes,
            refresh,
            api: Some(Href::to("/ws/v1/cluster/nodes")),
            body,
        })
    });
    page::respond(s, &view, built)
}

fn node_page(view: &View, q: Query, node: Result<NodeParam, ApiError>) -> Result<Page, ApiError> {
    let Params(pairs) = q?;
    let refresh = refresh(&pairs)?;
    let NodeParam(id) = node?;
    let report = view
        .nodes
        .iter()
        .find(|n| n.id == id)
        .ok_or_else(|| ApiError::NotFound(format!("node {id} is not known")))?;
    let n = NodeDto::from_report(view, report);
    let mut body = Html::new();
    body.el("table", &[("class", "details")], |h| {
        let row = |h: &mut Html, label: &str, value: &str| {
            h.el("tr", &[], |h| {
                h.text_el("th", &[], label);
                h.text_el("td", &[], value);
            });
        };
        row(h, "State", &n.state);
        row(h, "Rack", &n.rack);
        row(h, "Host", &n.node_host_name);
        row(h, "Web address", &n.node_http_address);
        row(
            h,
            "Health report",
            if n.health_report.is_empty() {
                "none"
            } else {
                &n.health_report
            },
        );
        row(h, "Last heartbeat", &format::time(n.last_health_update));
        row(h, "Containers", &format::count(u64::from(n.num_containers)));
        row(h, "Capability", &format::resource(n.total_resource));
        row(h, "Used", &format::resource(n.used_resource));
        row(h, "Available", &format::resource(n.available_resource));
        row(h, "Reserved", &format::resource(n.reserved_resource));
        let u = &n.resource_utilization;
        row(
            h,
            "In use on the machine",
            &in_use(u, u.node_physical_memory_mb, u.node_cpu_usage),
        );
        row(
            h,
            "In use by containers",
            &in_use(
                u,
                u.aggregated_containers_physical_memory_mb,
                u.containers_cpu_usage,
            ),
        );
        if n.state == "DECOMMISSIONING" {
            row(h, "Drain deadline", &drain(&n));
        }
    });
    let ams: Vec<AppDto> = view
        .apps
        .values()
        .rev()
        .filter(|a| !a.report.record.state.is_final())
        .filter(|a| {
            a.extra
                .am_node
                .as_ref()
                .is_some_and(|(node, _)| *node == id)
        })
        .map(|a| AppDto::from_view(view, a))
        .collect();
    body.text_el("h2", &[], "Application masters running here");
    apps::app_table(&mut body, &ams);
    Ok(Page {
        title: format!("Node {}", n.id),
        nav: Nav::Nodes,
        refresh,
        api: Some(Href::under("/ws/v1/cluster/nodes", &n.id)),
        body,
    })
}

/// A table of nodes, one row each, linking to each node's page.
fn node_table(h: &mut Html, nodes: &[NodeDto]) {
    if nodes.is_empty() {
        h.text_el("p", &[("class", "muted")], "No nodes.");
        return;
    }
    h.el("table", &[("class", "nodes")], |h| {
        h.el("tr", &[], |h| {
            for label in [
                "Node",
                "Rack",
                "State",
                "Health report",
                "Last heartbeat",
                "Containers",
                "Memory used / capability",
                "Vcores used / capability",
                "Reserved",
                "Containers' memory / processors in use",
                "Drain deadline",
                "Web address",
            ] {
                h.text_el("th", &[], label);
            }
        });
        for n in nodes {
            h.el("tr", &[], |h| {
                h.el("td", &[], |h| {
                    h.link(&Href::under("/cluster/node", &n.id), &n.id);
                });
                h.text_el("td", &[], &n.rack);
                h.text_el("td", &[], &n.state);
                h.text_el("td", &[], &n.health_report);
                h.text_el("td", &[], format::time(n.last_health_update));
                h.text_el(
                    "td",
                    &[("class", "num")],
                    format::count(u64::from(n.num_containers)),
                );
                h.text_el(
                    "td",
                    &[("class", "num")],
                    format_args!(
                        "{} / {}",
                        format::memory(n.used_resource.memory),
                        format::memory(n.total_resource.memory)
                    ),
                );
                h.text_el(
                    "td",
                    &[("class", "num")],
                    format_args!(
                        "{} / {}",
                        format::count(n.used_resource.vcores),
                        format::count(n.total_resource.vcores)
                    ),
                );
                h.text_el("td", &[("class", "num")], reserved(n.reserved_resource));
                let u = &n.resource_utilization;
                h.text_el(
                    "td",
                    &[("class", "num")],
                    in_use(
                        u,
                        u.aggregated_containers_physical_memory_mb,
                        u.containers_cpu_usage,
                    ),
                );
                h.text_el(
                    "td",
                    &[],
                    if n.state == "DECOMMISSIONING" {
                        drain(n)
                    } else {
                        String::new()
                    },
                );
                h.text_el("td", &[], &n.node_http_address);
            });
        }
    });
}

fn reserved(r: ResourceDto) -> String {
    if r == ResourceDto::default() {
        String::new()
    } else {
        format::resource(r)
    }
}

/// Memory and processors in use, as the node measured them; "not
/// reported" for a node that never said (its figures are all zero, which a
/// running machine's are not).
fn in_use(u: &ResourceUtilizationInfoDto, memory_mb: u64, cpu: f64) -> String {
    if *u == ResourceUtilizationInfoDto::default() {
        return "not reported".to_owned();
    }
    format!("{} / {cpu:.2}", format::memory(memory_mb))
}

/// When a draining node is decommissioned at the latest, and the timeout
/// it was given.
fn drain(n: &NodeDto) -> String {
    match (n.decommissioning_deadline, n.decommissioning_timeout) {
        (Some(deadline), Some(t)) => format!("{} (timeout {t} s)", format::time(deadline)),
        (Some(deadline), None) => format::time(deadline),
        (None, _) => "none (no timeout)".to_owned(),
    }
}
