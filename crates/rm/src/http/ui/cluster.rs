//! `/cluster`: the overview. The cluster's metrics as
//! `GET /ws/v1/cluster/metrics` gives them (nodes by state, memory and
//! vcores, apps by state, containers), the queue tree's usage against its
//! fair shares, and the most recent applications.

use axum::extract::State;
use axum::response::Response;

use crate::dto::apps::AppsQuery;
use crate::dto::cluster::{ClusterMetricsDto, SchedulerDto};
use crate::http::ApiState;
use crate::http::codec::{Caller, Params};
use crate::http::error::ApiError;
use crate::http::ui::html::{Href, Html};
use crate::http::ui::page::{self, Nav, Page};
use crate::http::ui::{Query, Viewer, apps, format, refresh, scheduler};
use crate::view::View;

/// How many apps the overview lists.
const RECENT_APPS: usize = 10;

pub(super) async fn overview(State(s): State<ApiState>, q: Query, caller: Viewer) -> Response {
    let view = s.rm().view();
    page::respond(&s, &view, build(&s, &view, q, caller))
}

fn build(s: &ApiState, view: &View, q: Query, caller: Viewer) -> Result<Page, ApiError> {
    let Params(pairs) = q?;
    let refresh = refresh(&pairs)?;
    let Caller(who) = caller?;
    let m = ClusterMetricsDto::from_view(view);
    let mut body = Html::new();
    body.el("div", &[("class", "grid")], |h| {
        nodes(h, &m);
        resources(h, &m);
        applications(h, &m);
        containers(h, &m);
    });

    body.el("h2", &[], |h| {
        h.text("Queues (")
            .link(&Href::to("/cluster/scheduler"), "details")
            .text(")");
    });
    let scheduler = SchedulerDto::from_view(view, &s.0.reloader.status());
    scheduler::compact_queue_table(&mut body, &scheduler.scheduler_info.root_queue);
    if let Some(error) = &scheduler.scheduler_info.allocation_file.last_error {
        body.el("div", &[("class", "error")], |h| {
            h.text("The allocation file's last reload failed; the configuration before it stays in force:");
            h.text_el("pre", &[], error);
        });
    }

    let recent = AppsQuery {
        limit: Some(RECENT_APPS.to_string()),
        ..AppsQuery::default()
    }
    .to_filter()?
    .apply_newest_first(view, s.app_lister(who.as_ref(), view));
    body.el("h2", &[], |h| {
        h.text("Recent applications (")
            .link(&Href::to("/cluster/apps"), "all")
            .text(")");
    });
    apps::app_table(&mut body, &recent);
    Ok(Page {
        title: "Cluster".to_owned(),
        nav: Nav::Cluster,
        refresh,
        api: Some(Href::to("/ws/v1/cluster/metrics")),
        body,
    })
}

/// A small two-column table under a caption; a row with a link goes to
/// the list it counts.
fn figures(h: &mut Html, caption: &str, rows: &[(&str, u64, Option<Href>)]) {
    h.el("table", &[], |h| {
        h.text_el("caption", &[], caption);
        for (label, n, link) in rows {
            h.el("tr", &[], |h| {
                h.el("th", &[], |h| match link {
                    Some(href) => {
                        h.link(href, label);
                    }
                    None => {
                        h.text(label);
                    }
                });
                h.text_el("td", &[("class", "num")], format::count(*n));
            });
        }
    });
}

fn nodes(h: &mut Html, m: &ClusterMetricsDto) {
    let state = |s: &str| Some(Href::to("/cluster/nodes").with_query("states", s));
    figures(
        h,
        "Nodes",
        &[
            (
                "Total",
                u64::from(m.total_nodes),
                Some(Href::to("/cluster/nodes")),
            ),
            ("Active", u64::from(m.active_nodes), state("RUNNING")),
            (
                "Decommissioning",
                u64::from(m.decommissioning_nodes),
                state("DECOMMISSIONING"),
            ),
            (
                "Unhealthy",
                u64::from(m.unhealthy_nodes),
                state("UNHEALTHY"),
            ),
            ("Lost", u64::from(m.lost_nodes), state("LOST")),
            (
                "Decommissioned",
                u64::from(m.decommissioned_nodes),
                state("DECOMMISSIONED"),
            ),
            ("Shut down", u64::from(m.shutdown_nodes), state("SHUTDOWN")),
        ],
    );
}

fn resources(h: &mut Html, m: &ClusterMetricsDto) {
    h.el("table", &[], |h| {
        h.text_el("caption", &[], "Resources");
        h.el("tr", &[], |h| {
            h.el("th", &[], |_| {});
            h.text_el("th", &[], "Memory");
            h.text_el("th", &[], "Vcores");
        });
        for (label, mb, vcores) in [
            ("Total", m.total_mb, m.total_virtual_cores),
            ("Used", m.allocated_mb, m.allocated_virtual_cores),
            ("Available", m.available_mb, m.available_virtual_cores),
            ("Reserved", m.reserved_mb, m.reserved_virtual_cores),
            ("Pending", m.pending_mb, m.pending_virtual_cores),
        ] {
            h.el("tr", &[], |h| {
                h.text_el("th", &[], label);
                h.text_el("td", &[("class", "num")], format::memory(mb));
                h.text_el("td", &[("class", "num")], format::count(vcores));
            });
        }
    });
}

fn applications(h: &mut Html, m: &ClusterMetricsDto) {
    let state = |s: &'static str| Some(Href::under("/cluster/apps", s));
    figures(
        h,
        "Applications",
        &[
            (
                "Submitted",
                m.apps_submitted,
                Some(Href::to("/cluster/apps")),
            ),
            ("Pending", u64::from(m.apps_pending), state("ACCEPTED")),
            ("Running", u64::from(m.apps_running), state("RUNNING")),
            ("Completed", u64::from(m.apps_completed), None),
            ("Failed", u64::from(m.apps_failed), state("FAILED")),
            ("Killed", u64::from(m.apps_killed), state("KILLED")),
        ],
    );
}

fn containers(h: &mut Html, m: &ClusterMetricsDto) {
    figures(
        h,
        "Containers",
        &[
            ("Allocated", m.containers_allocated, None),
            ("Reserved", u64::from(m.containers_reserved), None),
            ("Pending", m.containers_pending, None),
        ],
    );
}
