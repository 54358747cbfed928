//! `/cluster/scheduler`: the queue tree as `GET /ws/v1/cluster/scheduler`
//! gives it (`SchedulerDto`), one row per queue with its limits, shares,
//! usage against its instantaneous fair share and its apps, and the
//! allocation file's reload status; and the compact tree the overview shows.
//!
//! The one figure the DTO lacks, a leaf's configured `maxAMShare`, is read
//! from the same view.

use axum::extract::State;
use axum::response::Response;
use weft_model::QueuePath;
use weft_queue_tree::AmShare;

use crate::dto::ResourceDto;
use crate::dto::cluster::{AllocationFileDto, QueueDto, SchedulerDto};
use crate::http::ApiState;
use crate::http::codec::Params;
use crate::http::error::ApiError;
use crate::http::ui::html::{Href, Html};
use crate::http::ui::page::{self, Nav, Page};
use crate::http::ui::{Query, format, refresh};
use crate::view::View;

pub(super) async fn page(State(s): State<ApiState>, q: Query) -> Response {
    let view = s.rm().view();
    page::respond(&s, &view, build(&s, &view, q))
}

fn build(s: &ApiState, view: &View, q: Query) -> Result<Page, ApiError> {
    let Params(pairs) = q?;
    let refresh = refresh(&pairs)?;
    let dto = SchedulerDto::from_view(view, &s.0.reloader.status());
    let mut body = Html::new();
    body.text_el("h2", &[], "Queues");
    body.text_el(
        "p",
        &[("class", "muted")],
        "Fair shares are recomputed on each update pass. The bar is the queue's usage against its instantaneous fair share (the larger of memory and, where the policy counts them, vcores); red is over.",
    );
    queue_table(&mut body, view, &dto.scheduler_info.root_queue);
    body.text_el("h2", &[], "Allocation file");
    allocation_file(&mut body, &dto.scheduler_info.allocation_file);
    Ok(Page {
        title: "Scheduler".to_owned(),
        nav: Nav::Scheduler,
        refresh,
        api: Some(Href::to("/ws/v1/cluster/scheduler")),
        body,
    })
}

/// The full queue table: every queue, parents before their children.
pub(super) fn queue_table(h: &mut Html, view: &View, root: &QueueDto) {
    h.el("table", &[("class", "queues")], |h| {
        h.el("tr", &[], |h| {
            for label in [
                "Queue",
                "Policy",
                "Weight",
                "Min resources",
                "Max resources",
                "Steady fair share",
                "Instantaneous fair share",
                "Used",
                "Used / fair share",
                "Demand",
                "Apps active / pending",
                "Max running apps",
                "AM used / limit",
                "Max AM share",
            ] {
                h.text_el("th", &[], label);
            }
        });
        walk(root, 0, &mut |q, depth| queue_row(h, view, q, depth));
    });
}

/// The overview's table: each queue's usage against its fair share.
pub(super) fn compact_queue_table(h: &mut Html, root: &QueueDto) {
    h.el("table", &[("class", "queues")], |h| {
        h.el("tr", &[], |h| {
            for label in [
                "Queue",
                "Used",
                "Instantaneous fair share",
                "Used / fair share",
                "Apps active / pending",
            ] {
                h.text_el("th", &[], label);
            }
        });
        walk(root, 0, &mut |q, depth| {
            let (active, pending) = app_counts(q);
            h.el("tr", &[("class", row_class(q))], |h| {
                name_cell(h, q, depth);
                h.text_el(
                    "td",
                    &[("class", "num")],
                    format::resource(q.used_resources),
                );
                h.text_el(
                    "td",
                    &[("class", "num")],
                    format::resource(q.fair_resources),
                );
                h.el("td", &[], |h| {
                    usage_bar(h, q.used_resources, q.fair_resources)
                });
                h.text_el(
                    "td",
                    &[("class", "num")],
                    format_args!("{} / {}", format::count(active), format::count(pending)),
                );
            });
        });
    });
}

/// Calls `f` on `q` and every queue under it, depth first, with its depth.
fn walk<'q>(q: &'q QueueDto, depth: usize, f: &mut impl FnMut(&'q QueueDto, usize)) {
    f(q, depth);
    for child in q.child_queues.iter().flat_map(|c| &c.queue) {
        walk(child, depth + 1, f);
    }
}

fn is_leaf(q: &QueueDto) -> bool {
    q.kind.is_some()
}

fn row_class(q: &QueueDto) -> &'static str {
    if is_leaf(q) { "leaf" } else { "parent" }
}

/// A leaf's active and pending apps, or for a parent those of the leaves
/// under it.
fn app_counts(q: &QueueDto) -> (u64, u64) {
    if is_leaf(q) {
        return (
            u64::from(q.num_active_apps.unwrap_or(0)),
            u64::from(q.num_pending_apps.unwrap_or(0)),
        );
    }
    q.child_queues
        .iter()
        .flat_map(|c| &c.queue)
        .map(app_counts)
        .fold((0, 0), |(a, p), (ca, cp)| (a + ca, p + cp))
}

/// The queue's short name, indented by its depth, with its full name as
/// the anchor other pages link to; a leaf's name links to its apps.
fn name_cell(h: &mut Html, q: &QueueDto, depth: usize) {
    let indent = format!("padding-left:{}em", 0.5 + 1.5 * depth as f64);
    let id = format!("queue-{}", q.queue_name);
    let short = q.queue_name.rsplit('.').next().unwrap_or(&q.queue_name);
    h.el(
        "td",
        &[("id", &id), ("style", &indent), ("title", &q.queue_name)],
        |h| {
            if is_leaf(q) {
                h.link(
                    &Href::to("/cluster/apps").with_query("queue", &q.queue_name),
                    short,
                );
            } else {
                h.text(short);
            }
        },
    );
}

fn queue_row(h: &mut Html, view: &View, q: &QueueDto, depth: usize) {
    let (active, pending) = app_counts(q);
    let num = [("class", "num")];
    h.el("tr", &[("class", row_class(q))], |h| {
        name_cell(h, q, depth);
        h.text_el("td", &[], &q.scheduling_policy);
        h.text_el("td", &num, q.weight);
        h.text_el("td", &num, format::resource(q.min_resources));
        h.text_el("td", &num, format::resource(q.max_resources));
        h.text_el("td", &num, format::resource(q.steady_fair_resources));
        h.text_el("td", &num, format::resource(q.fair_resources));
        h.text_el("td", &num, format::resource(q.used_resources));
        h.el("td", &[], |h| {
            usage_bar(h, q.used_resources, q.fair_resources)
        });
        h.text_el("td", &num, format::resource(q.demand_resources));
        h.text_el(
            "td",
            &num,
            format_args!("{} / {}", format::count(active), format::count(pending)),
        );
        h.text_el("td", &num, format::max_apps(q.max_apps));
        if is_leaf(q) {
            h.text_el(
                "td",
                &num,
                format_args!(
                    "{} / {}",
                    format::memory(q.am_used_resources.memory),
                    format::memory(q.am_max_resources.memory)
                ),
            );
            h.text_el("td", &num, max_am_share(view, &q.queue_name));
        } else {
            h.el("td", &[], |_| {});
            h.el("td", &[], |_| {});
        }
    });
}

/// A leaf's `maxAMShare` as configured: a fraction, or "none" for -1.
fn max_am_share(view: &View, name: &str) -> String {
    let share = QueuePath::parse(name)
        .ok()
        .and_then(|p| view.queue(&p).map(|q| q.tree.max_am_share));
    match share {
        Some(AmShare::Fraction(f)) => format!("{f}"),
        Some(AmShare::Disabled) => "none".to_owned(),
        None => String::new(),
    }
}

/// How far `used` is into `fair`: the larger ratio over the resources the
/// fair share counts (under the `fair` policy its vcores are 0, so memory
/// alone), or `None` for a queue with neither fair share nor usage.
fn share_of(used: ResourceDto, fair: ResourceDto) -> Option<f64> {
    let ratios = [(used.memory, fair.memory), (used.vcores, fair.vcores)]
        .into_iter()
        .filter(|(_, f)| *f > 0)
        .map(|(u, f)| u as f64 / f as f64);
    let ratio = ratios.fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    match ratio {
        Some(r) => Some(r),
        // Usage without a fair share is all over it.
        None if used.memory > 0 || used.vcores > 0 => Some(f64::INFINITY),
        None => None,
    }
}

/// A bar of usage against the fair share, drawn with CSS, and the figure.
fn usage_bar(h: &mut Html, used: ResourceDto, fair: ResourceDto) {
    let Some(ratio) = share_of(used, fair) else {
        h.text_el("span", &[("class", "muted")], "idle");
        return;
    };
    let class = if ratio > 1.0 { "bar over" } else { "bar" };
    let width = format!("width:{:.0}%", ratio.min(1.0) * 100.0);
    h.el("span", &[("class", class)], |h| {
        h.el("span", &[("style", &width)], |_| {});
    });
    if ratio.is_finite() {
        h.text(format_args!(" {}", format::percent(ratio * 100.0)));
    } else {
        h.text(" no fair share");
    }
}

fn allocation_file(h: &mut Html, a: &AllocationFileDto) {
    let row = |h: &mut Html, label: &str, value: &str| {
        h.el("tr", &[], |h| {
            h.text_el("th", &[], label);
            h.text_el("td", &[], value);
        });
    };
    h.el("table", &[], |h| {
        row(
            h,
            "File",
            a.path
                .as_deref()
                .unwrap_or("none: the built-in configuration, not watched"),
        );
        row(h, "Loads succeeded", &format::count(a.reloads_succeeded));
        row(h, "Loads failed", &format::count(a.reloads_failed));
        row(
            h,
            "Last success",
            &a.last_success
                .map_or_else(|| "never".to_owned(), format::time),
        );
        row(
            h,
            "Last failure",
            &a.last_failure
                .map_or_else(|| "never".to_owned(), format::time),
        );
        h.el("tr", &[], |h| {
            h.text_el("th", &[], "Last error");
            h.el("td", &[], |h| match &a.last_error {
                Some(e) => {
                    h.text_el("pre", &[], e);
                }
                None => {
                    h.text("none: the configuration in force is the file's");
                }
            });
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(memory: u64, vcores: u64) -> ResourceDto {
        ResourceDto { memory, vcores }
    }

    #[test]
    fn the_bar_measures_what_the_fair_share_counts() {
        // Under `fair` the share has no vcores: memory alone counts.
        assert_eq!(share_of(res(1024, 3), res(4096, 0)), Some(0.25));
        // Under DRF the larger ratio counts.
        assert_eq!(share_of(res(1024, 3), res(4096, 4)), Some(0.75));
        assert_eq!(share_of(res(0, 0), res(0, 0)), None);
        assert_eq!(share_of(res(1024, 1), res(0, 0)), Some(f64::INFINITY));

        let mut h = Html::new();
        usage_bar(&mut h, res(6144, 1), res(4096, 0));
        assert_eq!(
            h.as_str(),
            r#"<span class="bar over"><span style="width:100%"></span></span> 150.0%"#
        );
    }
}
