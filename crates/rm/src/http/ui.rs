//! The web UI: server-rendered HTML pages at Hadoop's RM paths (`/cluster`,
//! `/cluster/scheduler`, `/cluster/apps`, `/cluster/app/{id}`,
//! `/cluster/nodes`), for people rather than scripts; no JavaScript.
//!
//! Pages render the published view through the REST API's own DTO
//! conversions and filters (`crate::dto`), and one app's page asks the
//! scheduler as `GET /ws/v1/cluster/apps/{id}` does, so a page and the
//! API never disagree: an app a named caller may not see is shown
//! withheld in both. Markup is `html`'s, the human forms of numbers and
//! times `format`'s, the frame `page`'s; each page module builds content.
//! A refused request gets an HTML page with the REST API's status and
//! message; errors outside `/` and `/cluster...` stay the REST API's.

mod apps;
mod cluster;
mod explain;
mod format;
mod html;
mod nodes;
mod page;
mod scheduler;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{Redirect, Response};
use axum::routing::get;

use crate::http::codec::{Caller, Params};
use crate::http::error::ApiError;
use crate::http::{ApiState, log_error, with_trailing_slashes};

/// The query string as pairs, or why it could not be read (shown as a page).
type Query = Result<Params<Vec<(String, String)>>, ApiError>;

/// Who asks for a page (`?user.name=`, as for the REST API), or why the
/// name is refused (shown as a page). The pages' links do not carry the
/// name on, so a page reached by a link is an anonymous caller's.
type Viewer = Result<Caller, ApiError>;

/// Longest `?refresh=` taken, in seconds: an hour.
const MAX_REFRESH_SECS: u32 = 3600;

/// The UI's routes, to be merged into the service's router.
pub(crate) fn routes() -> Router<ApiState> {
    let pages = [
        ("/cluster", get(cluster::overview)),
        ("/cluster/scheduler", get(scheduler::page)),
        ("/cluster/apps", get(apps::list)),
        ("/cluster/apps/{state}", get(apps::list_in_state)),
        ("/cluster/app/{app}", get(apps::app)),
        ("/cluster/nodes", get(nodes::list)),
        ("/cluster/nodes/{state}", get(nodes::list_in_state)),
        ("/cluster/node/{node}", get(nodes::node)),
    ];
    with_trailing_slashes(pages)
        .route("/", get(|| async { Redirect::to("/cluster") }))
        // Any other page under /cluster gets an HTML 404 rather than the
        // REST API's JSON one: whoever asked is most likely a browser.
        .route("/cluster/{*rest}", get(no_such_page))
        .layer(middleware::from_fn(log_refusals))
}

/// The meta refresh asked for with `?refresh=N` (its first value; empty is
/// none), or why `N` is not a number of seconds from 1 to 3600.
fn refresh(pairs: &[(String, String)]) -> Result<Option<u32>, ApiError> {
    let Some((_, text)) = pairs.iter().find(|(k, _)| k == "refresh") else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_REFRESH_SECS).contains(&n) => Ok(Some(n)),
        _ => Err(ApiError::BadRequest(format!(
            "refresh: {text:?} is not a number of seconds from 1 to {MAX_REFRESH_SECS}"
        ))),
    }
}

async fn no_such_page(
    axum::extract::State(s): axum::extract::State<ApiState>,
    uri: axum::http::Uri,
) -> Response {
    page::error(
        &s,
        ApiError::NotFound(format!(
            "no such page: {}; the pages are /cluster, /cluster/scheduler, /cluster/apps, /cluster/app/{{appId}}, /cluster/nodes and /cluster/node/{{nodeId}}",
            uri.path()
        )),
    )
}

/// Logs a page refused as the REST middleware logs a refused call: bugs at
/// error level, a caller's mistakes at debug level.
async fn log_refusals(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let uri = req.uri().clone();
    let res = next.run(req).await;
    if let Some(page::Refusal(e)) = res.extensions().get::<page::Refusal>() {
        log_error(&method, uri.path(), e);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn refresh_takes_seconds_from_one_to_an_hour() {
        assert_eq!(refresh(&pairs(&[])), Ok(None));
        assert_eq!(refresh(&pairs(&[("refresh", "")])), Ok(None));
        assert_eq!(refresh(&pairs(&[("refresh", "1")])), Ok(Some(1)));
        assert_eq!(
            refresh(&pairs(&[("refresh", " 3600 "), ("refresh", "x")])),
            Ok(Some(3600))
        );
        for bad in ["0", "3601", "-5", "1.5", "soon", "99999999999"] {
            assert_eq!(
                refresh(&pairs(&[("refresh", bad)])),
                Err(ApiError::BadRequest(format!(
                    "refresh: {bad:?} is not a number of seconds from 1 to 3600"
                ))),
            );
        }
    }
}
