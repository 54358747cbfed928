//! `/cluster/apps` (and Hadoop's `/cluster/apps/{STATE}`): the apps the
//! REST list's filters select (`AppsQuery`, so `states=`, `user=`,
//! `queue=`, ... read and fail alike), newest first; and
//! `/cluster/app/{appId}`: one app, why it is waiting while it has not
//! ended (`explain`), and its attempts, asked of the scheduler as
//! `GET /ws/v1/cluster/apps/{appId}` and `.../explain` ask.
//!
//! An app a named caller (`?user.name=`) may not see is shown as the REST
//! GETs show it, withheld (`AppDto::withheld`), or left out of the lists
//! as the REST list leaves it out under
//! `yarn.webapp.filter-entity-list-by-user`; its page leaves out
//! why it is waiting, as `.../explain` refuses it; what an app was
//! launched with (its launch context, tokens) is in no DTO and never shown.

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::response::Response;

use crate::dto::ResourceDto;
use crate::dto::apps::{AppDto, AppsQuery};
use crate::dto::attempts::AppAttemptsDto;
use crate::dto::explain::AppExplanationDto;
use crate::http::apps::may_view;
use crate::http::codec::{Caller, Params};
use crate::http::error::ApiError;
use crate::http::ui::html::{Href, Html};
use crate::http::ui::page::{self, Nav, Page};
use crate::http::ui::{Query, Viewer, explain, format, refresh};
use crate::http::{ApiState, AppParam, invalid_path};

/// The states offered as filters: those a Weft app can be in (it never
/// shows YARN's `NEW`, `NEW_SAVING` or `SUBMITTED`, which the filter
/// still takes).
const SHOWN_STATES: [&str; 5] = ["ACCEPTED", "RUNNING", "FINISHED", "FAILED", "KILLED"];

pub(super) async fn list(State(s): State<ApiState>, q: Query, caller: Viewer) -> Response {
    respond_list(&s, q, caller, None)
}

/// Hadoop's `/cluster/apps/RUNNING`: the state in the path, added to
/// any `states=` of the query as a repeated `states` parameter would be.
pub(super) async fn list_in_state(
    State(s): State<ApiState>,
    state: Result<Path<String>, PathRejection>,
    q: Query,
    caller: Viewer,
) -> Response {
    match state {
        Ok(Path(state)) => respond_list(&s, q, caller, Some(state)),
        Err(e) => page::error(&s, invalid_path(&e)),
    }
}

pub(super) async fn app(
    State(s): State<ApiState>,
    q: Query,
    caller: Viewer,
    app: Result<AppParam, ApiError>,
) -> Response {
    let built = async {
        let Params(pairs) = q?;
        let refresh = refresh(&pairs)?;
        let Caller(who) = caller?;
        let AppParam(id) = app?;
        // As `GET /ws/v1/cluster/apps/{id}` does: asked of the scheduler,
        // so an app just submitted is found.
        let snap = s.rm().app_snapshot(id).await?;
        let mut app = AppDto::from_snapshot(&snap);
        let mut attempts = AppAttemptsDto::of(snap.epoch_origin_ms, &snap.app);
        let may_view = may_view(&s, who.as_ref(), &snap);
        if !may_view {
            app = app.withheld();
            attempts = attempts.withheld();
        }
        let mut body = Html::new();
        if !may_view {
            body.text_el(
                "p",
                &[("class", "muted")],
                format_args!(
                    "Its times, where its application master runs and what it holds are not shown to {}: only its owner, a user its VIEW_APP ACL names, an administrator of its queue or a cluster administrator may see them.",
                    who.as_ref().map_or("you", |w| w.user.as_str())
                ),
            );
        }
        details(&mut body, &app);
        // Why it waits is left out for a caller who may not see the app,
        // as `.../explain` refuses them.
        if may_view && !snap.app.report.record.state.is_final() {
            // Past the explanation budget the page still shows the rest.
            match s.explain_budget().take_or_refuse() {
                Ok(()) => {
                    let explanation = s.rm().explain_app(id).await?;
                    explain::section(&mut body, &AppExplanationDto::from_core(&explanation));
                }
                Err(e) => {
                    body.text_el("h2", &[], "Why it is waiting");
                    body.text_el("p", &[("class", "muted")], e.to_string());
                }
            }
        }
        body.text_el("h2", &[], "Diagnostics");
        if app.diagnostics.is_empty() {
            body.text_el("p", &[("class", "muted")], "none");
        } else {
            body.text_el("pre", &[], &app.diagnostics);
        }
        body.text_el("h2", &[], "Attempts");
        attempt_table(&mut body, &attempts, app.withheld);
        Ok::<_, ApiError>(Page {
            title: format!("Application {}", app.id),
            nav: Nav::Apps,
            refresh,
            api: Some(Href::under("/ws/v1/cluster/apps", &app.id)),
            body,
        })
    }
    .await;
    page::respond(&s, &s.rm().view(), built)
}

fn respond_list(s: &ApiState, q: Query, caller: Viewer, state: Option<String>) -> Response {
    let view = s.rm().view();
    let built = q.and_then(|Params(mut pairs)| {
        let refresh = refresh(&pairs)?;
        let Caller(who) = caller?;
        if let Some(state) = state {
            pairs.insert(0, ("states".to_owned(), state));
        }
        let filter = AppsQuery::from_pairs(&pairs).to_filter()?;
        let apps = filter.apply_newest_first(&view, s.app_lister(who.as_ref(), &view));
        let wanted: Vec<&str> = filter.states().iter().map(String::as_str).collect();
        let mut body = Html::new();
        body.el("p", &[("class", "filters")], |h| {
            h.text("Show: ");
            h.link_marked(&Href::to("/cluster/apps"), "all", wanted.is_empty());
            for st in SHOWN_STATES {
                h.link_marked(&Href::under("/cluster/apps", st), st, wanted == [st]);
            }
        });
        body.text_el(
            "p",
            &[],
            format_args!(
                "{} {}, newest first.",
                format::count(apps.len() as u64),
                if apps.len() == 1 {
                    "application"
                } else {
                    "applications"
                }
            ),
        );
        app_table(&mut body, &apps);
        let title = if wanted.is_empty() {
            "Applications".to_owned()
        } else {
            format!("Applications: {}", wanted.join(", "))
        };
        Ok(Page {
            title,
            nav: Nav::Apps,
            refresh,
            api: Some(Href::to("/ws/v1/cluster/apps")),
            body,
        })
    });
    page::respond(s, &view, built)
}

/// A table of apps, one row each, linking to each app's page.
pub(super) fn app_table(h: &mut Html, apps: &[AppDto]) {
    if apps.is_empty() {
        h.text_el("p", &[("class", "muted")], "No applications.");
        return;
    }
    h.el("table", &[("class", "apps")], |h| {
        h.el("tr", &[], |h| {
            for label in [
                "ID",
                "User",
                "Name",
                "Type",
                "Queue",
                "Priority",
                "Started",
                "Finished",
                "State",
                "Final status",
                "Containers",
                "Allocated",
                "Progress",
                "Tracking UI",
            ] {
                h.text_el("th", &[], label);
            }
        });
        for a in apps {
            let shown = |value: String| withheld_or(a, value);
            h.el("tr", &[], |h| {
                h.el("td", &[], |h| {
                    h.link(&Href::under("/cluster/app", &a.id), &a.id);
                });
                h.text_el("td", &[], &a.user);
                h.text_el("td", &[], &a.name);
                h.text_el("td", &[], &a.application_type);
                h.el("td", &[], |h| queue_link(h, &a.queue));
                h.text_el("td", &[("class", "num")], a.priority);
                h.text_el("td", &[], shown(format::time(a.started_time)));
                h.text_el("td", &[], shown(format::time(a.finished_time)));
                h.text_el("td", &[], &a.state);
                h.text_el("td", &[], &a.final_status);
                h.text_el(
                    "td",
                    &[("class", "num")],
                    shown(format::count(u64::from(a.running_containers))),
                );
                h.text_el(
                    "td",
                    &[("class", "num")],
                    shown(format::resource(ResourceDto {
                        memory: a.allocated_mb,
                        vcores: a.allocated_vcores,
                    })),
                );
                h.text_el(
                    "td",
                    &[("class", "num")],
                    format::percent(f64::from(a.progress)),
                );
                h.el("td", &[], |h| tracking(h, a));
            });
        }
    });
}

/// The queue, linking to its row on the scheduler page.
fn queue_link(h: &mut Html, queue: &str) {
    let href = Href::to("/cluster/scheduler").with_fragment(&format!("queue-{queue}"));
    h.link(&href, queue);
}

/// The tracking UI's kind, linking to the AM's URL when it is a web
/// address (anything else an AM registered is shown, not linked).
fn tracking(h: &mut Html, a: &AppDto) {
    match Href::external(&a.tracking_url) {
        Some(href) => {
            h.link(&href, &a.tracking_ui);
        }
        None => {
            h.text(&a.tracking_ui);
        }
    }
}

/// When the app's lifetime ends it (`application-timeouts`), as the
/// timeouts API reports it.
fn lifetime(a: &AppDto) -> String {
    let Some(t) = a.timeouts.as_ref().and_then(|t| t.timeout.first()) else {
        return "unlimited".to_owned();
    };
    if t.remaining_time_in_seconds < 0 {
        return "unlimited".to_owned();
    }
    format!(
        "expires {} ({} s left)",
        t.expiry_time,
        format::count(t.remaining_time_in_seconds.unsigned_abs())
    )
}

/// What a withheld report (`AppDto::withheld`) shows in place of a figure
/// it left out, so its zeros are not read as figures.
const WITHHELD: &str = "not shown";

/// `value`, or `WITHHELD` when the report left it out.
fn withheld_or(a: &AppDto, value: String) -> String {
    if a.withheld {
        WITHHELD.to_owned()
    } else {
        value
    }
}

fn details(h: &mut Html, a: &AppDto) {
    let res = |memory, vcores| format::resource(ResourceDto { memory, vcores });
    let shown = |value: String| withheld_or(a, value);
    let rows: Vec<(&str, String)> = vec![
        ("Name", a.name.clone()),
        ("User", a.user.clone()),
        ("Type", a.application_type.clone()),
        (
            "Tags",
            or_none(&a.application_tags.replace(',', ", ")).to_owned(),
        ),
        ("State", a.state.clone()),
        ("Final status", a.final_status.clone()),
        ("Progress", format::percent(f64::from(a.progress))),
        ("Priority", a.priority.to_string()),
        (
            "Unmanaged AM",
            if a.unmanaged_application { "yes" } else { "no" }.to_owned(),
        ),
        ("Started", shown(format::time(a.started_time))),
        ("Launched", shown(format::time(a.launch_time))),
        ("Finished", shown(format::time(a.finished_time))),
        ("Elapsed", shown(format::duration(a.elapsed_time))),
        ("Lifetime", lifetime(a)),
        ("Allocated", shown(res(a.allocated_mb, a.allocated_vcores))),
        ("Reserved", shown(res(a.reserved_mb, a.reserved_vcores))),
        ("Pending", shown(res(a.pending_mb, a.pending_vcores))),
        (
            "Running containers",
            shown(format::count(u64::from(a.running_containers))),
        ),
        (
            "Fair share (memory)",
            shown(format::memory(a.fair_share_mb)),
        ),
        (
            "Allocated memory / queue's fair share",
            shown(format::percent(a.queue_usage_percentage)),
        ),
        (
            "Allocated memory / cluster",
            shown(format::percent(a.cluster_usage_percentage)),
        ),
        (
            "Aggregate usage",
            format!(
                "{} MB-seconds, {} vcore-seconds",
                format::count(a.memory_seconds),
                format::count(a.vcore_seconds)
            ),
        ),
        (
            "Preempted",
            format!(
                "{} from {} containers and {} AM containers",
                res(a.preempted_resource_mb, a.preempted_resource_v_cores),
                format::count(a.num_non_am_container_preempted),
                format::count(a.num_am_container_preempted)
            ),
        ),
        (
            "AM RPC address",
            shown(or_none(&a.am_rpc_address).to_owned()),
        ),
        (
            "AM node web address",
            shown(or_none(&a.am_host_http_address).to_owned()),
        ),
    ];
    let row = |h: &mut Html, label: &str, value: &str| {
        h.el("tr", &[], |h| {
            h.text_el("th", &[], label);
            h.text_el("td", &[], value);
        });
    };
    h.el("table", &[("class", "details")], |h| {
        h.el("tr", &[], |h| {
            h.text_el("th", &[], "Queue");
            h.el("td", &[], |h| queue_link(h, &a.queue));
        });
        for (label, value) in &rows {
            row(h, label, value);
        }
        h.el("tr", &[], |h| {
            h.text_el("th", &[], "Tracking URL");
            h.el("td", &[], |h| match Href::external(&a.tracking_url) {
                Some(href) => {
                    h.link(&href, &a.tracking_url);
                }
                None if a.tracking_url.is_empty() => {
                    h.text("none");
                }
                None => {
                    h.text(&a.tracking_url).text_el(
                        "span",
                        &[("class", "muted")],
                        " (not an http(s) URL, so not linked)",
                    );
                }
            });
        });
    });
}

/// The attempts; `withheld` when they leave out the AM container and its node.
fn attempt_table(h: &mut Html, attempts: &AppAttemptsDto, withheld: bool) {
    if attempts.app_attempt.is_empty() {
        h.text_el(
            "p",
            &[("class", "muted")],
            "None: the scheduler refused the application before it had one.",
        );
        return;
    }
    h.el("table", &[], |h| {
        h.el("tr", &[], |h| {
            for label in [
                "Attempt",
                "State",
                "Started",
                "Finished",
                "AM container",
                "Node",
                "Node web address",
                "Why it ended",
            ] {
                h.text_el("th", &[], label);
            }
        });
        for at in &attempts.app_attempt {
            h.el("tr", &[], |h| {
                h.text_el("td", &[], &at.app_attempt_id);
                h.text_el("td", &[], &at.app_attempt_state);
                h.text_el("td", &[], format::time(at.start_time));
                h.text_el("td", &[], format::time(at.finished_time));
                if withheld {
                    for _ in 0..4 {
                        h.text_el("td", &[], WITHHELD);
                    }
                    return;
                }
                h.text_el("td", &[], or_none(&at.container_id));
                h.el("td", &[], |h| {
                    if at.node_id.is_empty() {
                        h.text("none");
                    } else {
                        h.link(&Href::under("/cluster/node", &at.node_id), &at.node_id);
                    }
                });
                h.text_el("td", &[], or_none(&at.node_http_address));
                h.text_el("td", &[], &at.diagnostics_info);
            });
        }
    });
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "none" } else { s }
}
