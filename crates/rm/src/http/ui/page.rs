//! The frame every web UI page shares: the document head (title, the one
//! stylesheet, the optional meta refresh), the navigation bar with the
//! cluster's id and start time, the footer, the error page, and the
//! response headers (`text/html; charset=utf-8`, a policy that lets no
//! script run).
//!
//! What goes inside the frame is each page module's.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::dto::cluster::ClusterInfoDto;
use crate::http::ApiState;
use crate::http::error::ApiError;
use crate::http::ui::format;
use crate::http::ui::html::{Href, Html};
use crate::view::View;

/// Which entry of the navigation bar a page belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nav {
    /// The overview.
    Cluster,
    /// The queue tree.
    Scheduler,
    /// Applications.
    Apps,
    /// Nodes.
    Nodes,
    /// None (an error page).
    Nothing,
}

/// A page's content, to be framed.
#[derive(Debug)]
pub(crate) struct Page {
    /// The heading, and the document's title after "Weft".
    pub(crate) title: String,
    /// Its entry in the navigation bar.
    pub(crate) nav: Nav,
    /// Seconds between reloads (`?refresh=`), if asked for.
    pub(crate) refresh: Option<u32>,
    /// The REST resource with the same data, linked from the footer.
    pub(crate) api: Option<Href>,
    /// Everything under the heading.
    pub(crate) body: Html,
}

/// An error shown as a page, kept on the response for the logging layer.
#[derive(Clone, Debug)]
pub(crate) struct Refusal(pub(crate) ApiError);

/// The entries of the navigation bar.
const NAV: [(Nav, &str, &str); 4] = [
    (Nav::Cluster, "/cluster", "Cluster"),
    (Nav::Scheduler, "/cluster/scheduler", "Scheduler"),
    (Nav::Apps, "/cluster/apps", "Applications"),
    (Nav::Nodes, "/cluster/nodes", "Nodes"),
];

/// The one stylesheet: plain tables, and the usage bars drawn with CSS.
const STYLE: &str = "\
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#f7f8fa}\
header{background:#1f3a5f;color:#fff;padding:.4em 1em;display:flex;flex-wrap:wrap;align-items:baseline;gap:.3em 1em}\
header a{color:#fff;text-decoration:none;padding:.2em .5em;border-radius:3px}\
header a.on{background:#3d6aa2}\
header .brand{font-weight:bold;margin-right:1em}\
header .meta{margin-left:auto;font-size:.85em;opacity:.9}\
main{padding:.5em 1em}\
h1{font-size:1.3em;margin:.3em 0 .6em}\
h2{font-size:1.1em;margin:1.2em 0 .4em}\
table{border-collapse:collapse;background:#fff;margin-bottom:1em}\
th,td{border:1px solid #dde1e6;padding:.2em .5em;text-align:left;vertical-align:top}\
th{background:#eef2f7;font-weight:600}\
td.num{text-align:right;white-space:nowrap}\
tr.parent>td:first-child{font-weight:bold}\
.bar{display:inline-block;width:7em;height:.8em;background:#e4e8ee;border:1px solid #b8c0cc;vertical-align:middle}\
.bar>span{display:block;height:100%;background:#4a90d9}\
.bar.over>span{background:#d9534f}\
pre{background:#fff;border:1px solid #dde1e6;padding:.5em;white-space:pre-wrap;margin:0}\
.filters a{margin-right:.7em}\
.filters a.on{font-weight:bold;text-decoration:none;color:#222}\
.grid{display:flex;flex-wrap:wrap;gap:0 1.5em;align-items:flex-start}\
.error{border-left:4px solid #d9534f;padding:.5em 1em;background:#fff;max-width:60em}\
.muted{color:#777}\
footer{padding:0 1em 1em;font-size:.85em;color:#666}";

/// No script may run, whatever a page contains; styles are the inline
/// sheet and the bars' `style` attributes.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

impl Page {
    /// The page in its frame, as a 200 answer; `view` gives the header's
    /// time of the data.
    pub(crate) fn render(self, s: &ApiState, view: &View) -> Response {
        document(s, view, self, StatusCode::OK)
    }
}

/// A built page rendered, or the page of its refusal: how every handler
/// ends.
pub(crate) fn respond(s: &ApiState, view: &View, built: Result<Page, ApiError>) -> Response {
    match built {
        Ok(p) => p.render(s, view),
        Err(e) => error(s, e),
    }
}

/// The page for a refused request: its status, and its message in words.
pub(crate) fn error(s: &ApiState, e: ApiError) -> Response {
    let status = e.status();
    let mut body = Html::new();
    body.el("div", &[("class", "error")], |h| {
        h.text_el("p", &[], &e);
    });
    body.el("p", &[], |h| {
        h.text("Start again from the ")
            .link(&Href::to("/cluster"), "cluster overview")
            .text(".");
    });
    let page = Page {
        title: format!(
            "{} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("Error")
        ),
        nav: Nav::Nothing,
        refresh: None,
        api: None,
        body,
    };
    let mut res = document(s, &s.rm().view(), page, status);
    res.extensions_mut().insert(Refusal(e));
    res
}

fn document(s: &ApiState, view: &View, page: Page, status: StatusCode) -> Response {
    let info = ClusterInfoDto::new(s.0.cluster_id);
    let mut h = Html::new();
    h.markup("<!DOCTYPE html>");
    h.el("html", &[("lang", "en")], |h| {
        h.el("head", &[], |h| {
            h.void("meta", &[("charset", "utf-8")]);
            h.void(
                "meta",
                &[
                    ("name", "viewport"),
                    ("content", "width=device-width, initial-scale=1"),
                ],
            );
            if let Some(secs) = page.refresh {
                h.void(
                    "meta",
                    &[("http-equiv", "refresh"), ("content", &secs.to_string())],
                );
            }
            h.text_el("title", &[], format_args!("{} - Weft", page.title));
            h.el("style", &[], |h| {
                h.markup(STYLE);
            });
        });
        h.el("body", &[], |h| {
            h.el("header", &[], |h| {
                h.text_el("span", &[("class", "brand")], "Weft ResourceManager");
                h.el("nav", &[], |h| {
                    for (nav, path, label) in NAV {
                        let href = Href::to(path);
                        h.link_marked(&href, label, nav == page.nav);
                    }
                });
                h.text_el(
                    "span",
                    &[("class", "meta")],
                    format_args!(
                        "cluster {} \u{b7} started {} \u{b7} as of {}",
                        info.id,
                        format::time(info.started_on),
                        format::time(view.epoch_ms(view.now)),
                    ),
                );
            });
            h.el("main", &[], |h| {
                h.text_el("h1", &[], &page.title);
                h.append(page.body);
            });
            h.el("footer", &[], |h| {
                h.text(format_args!(
                    "Weft {} (Hadoop {} REST API). Times are UTC.",
                    info.resource_manager_version, info.hadoop_version
                ));
                if let Some(api) = &page.api {
                    h.text(" This page's data as JSON: ")
                        .link(api, api.as_str())
                        .text(".");
                }
            });
        });
    });
    let mut res = (status, h.into_string()).into_response();
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}
