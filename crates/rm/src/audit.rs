//! The audit log: one line for every request that asks the RM to change
//! something (submit, kill, move, reprioritise, the administrator's
//! refreshes and resizes, an AM registering and unregistering) and for
//! every application that ends: who, from where, what, on what, and
//! whether it was done. The lines are Hadoop's `RMAuditLogger` format
//! (`KEY=value` pairs separated by tabs), so tools that read Hadoop's audit
//! logs read Weft's.
//!
//! Every line goes to the `weft_rm::audit` tracing target at `info`, and,
//! with `weft.rm.audit-log.file`, is appended to that file as well, one
//! `write` per line and no buffering, so a line is on disk (in the page
//! cache) when the request's answer leaves; the file follows its path
//! through log rotation (`log_file`). Which requests count is decided
//! here, from the route they matched, by the middleware `record_requests`:
//! every method but GET, HEAD and OPTIONS on an audited router, so a route
//! added later is audited without anyone remembering to. The scheduler's own
//! decisions (each container) are the decision log's (`event_log`), not
//! this file's.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Mutex;

use axum::extract::{ConnectInfo, MatchedPath, Query, Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::http::ApiState;
use crate::http::error::RemoteException;
use crate::log_file::LogFile;

/// The tracing target of the audit lines.
pub const AUDIT_TARGET: &str = "weft_rm::audit";

/// Where audit lines go besides the tracing target.
#[derive(Debug, Default)]
pub struct AuditLog {
    file: Option<Mutex<LogFile>>,
}

/// Whether what was asked was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome<'a> {
    /// Done.
    Success,
    /// Refused or failed, with why.
    Failure(&'a str),
}

/// One audit line's fields, in Hadoop's order.
#[derive(Clone, Debug)]
pub struct Entry<'a> {
    /// Who asked (`user.name`), or the application's user for its AM.
    pub user: &'a str,
    /// The caller's address, when the connection gives one.
    pub ip: Option<IpAddr>,
    /// What was asked, in Hadoop's words where Hadoop has them.
    pub operation: &'a str,
    /// The service that was asked (Hadoop's `ClientRMService`,
    /// `AdminService`, `ApplicationMasterService`, `RMAppManager`).
    pub target: &'a str,
    /// Done or not.
    pub outcome: Outcome<'a>,
    /// The application concerned, if any.
    pub app: Option<&'a str>,
    /// The node concerned, if any (Weft's key: Hadoop's resize lines name none).
    pub node: Option<&'a str>,
}

impl Entry<'_> {
    /// The line, without its newline: tabs and line breaks inside values
    /// become spaces, so one entry is one line and its fields split on tabs.
    pub fn line(&self) -> String {
        let mut out = String::with_capacity(160);
        let mut add = |key: &str, value: &str| {
            if !out.is_empty() {
                out.push('\t');
            }
            out.push_str(key);
            out.push('=');
            out.extend(value.chars().map(|c| if c.is_control() { ' ' } else { c }));
        };
        add("USER", self.user);
        if let Some(ip) = self.ip {
            add("IP", &ip.to_string());
        }
        add("OPERATION", self.operation);
        add("TARGET", self.target);
        match self.outcome {
            Outcome::Success => add("RESULT", "SUCCESS"),
            Outcome::Failure(why) => {
                add("RESULT", "FAILURE");
                add("DESCRIPTION", why);
                // Hadoop's failure lines always say which permission was
                // lacking; Weft's REST refusals say it in the description.
                add("PERMISSIONS", "");
            }
        }
        if let Some(app) = self.app {
            add("APPID", app);
        }
        if let Some(node) = self.node {
            add("NODEID", node);
        }
        out
    }
}

impl AuditLog {
    /// Lines to the tracing target only.
    pub fn tracing_only() -> AuditLog {
        AuditLog::default()
    }

    /// Lines to the tracing target and appended to `path` (created if needed).
    pub fn open(path: &Path) -> std::io::Result<AuditLog> {
        Ok(AuditLog {
            file: Some(Mutex::new(LogFile::open("audit log", path)?)),
        })
    }

    /// Records one entry.
    pub fn record(&self, entry: &Entry<'_>) {
        let line = entry.line();
        tracing::info!(target: AUDIT_TARGET, "{line}");
        let Some(file) = &self.file else {
            return;
        };
        // A poisoned lock only means another writer panicked mid-line;
        // the file is still the right place for this one.
        let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        f.append(&bytes);
    }
}

/// What a route does, for the audit: Hadoop's operation name and the
/// service Hadoop would log as its target. `None` for a route that changes
/// nothing.
fn operation(method: &Method, route: &str) -> Option<(&'static str, &'static str)> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return None;
    }
    const CLIENT: &str = "ClientRMService";
    const ADMIN: &str = "AdminService";
    const AM: &str = "ApplicationMasterService";
    let route = route.strip_suffix('/').unwrap_or(route);
    Some(match (method.as_str(), route) {
        ("POST", "/ws/v1/cluster/apps") => ("Submit Application Request", CLIENT),
        ("POST", "/ws/v1/cluster/apps/new-application") => ("Get New Application Request", CLIENT),
        ("PUT", "/ws/v1/cluster/apps/{app}/state") => ("Kill Application Request", CLIENT),
        ("PUT", "/ws/v1/cluster/apps/{app}/queue") => ("Move Application Request", CLIENT),
        ("PUT", "/ws/v1/cluster/apps/{app}/timeout") => ("Update Application Timeouts", CLIENT),
        ("PUT", "/ws/v1/cluster/apps/{app}/priority") => {
            ("Update Application Priority Request", CLIENT)
        }
        ("POST", "/ws/v1/cluster/refresh-queues") => ("refreshQueues", ADMIN),
        ("POST", "/ws/v1/cluster/refresh-nodes") => ("refreshNodes", ADMIN),
        ("POST", "/ws/v1/cluster/refresh-nodes-resources") => ("refreshNodesResources", ADMIN),
        ("POST", "/ws/v1/cluster/refresh-admin-acls") => ("refreshAdminAcls", ADMIN),
        ("POST", "/ws/v1/cluster/refresh-user-groups") => ("refreshUserToGroupsMappings", ADMIN),
        ("POST", "/ws/v1/cluster/nodes/{node}/resource") => ("updateNodeResource", ADMIN),
        ("POST", "/ws/v1/am/{app}/register") => ("Register App Master", AM),
        ("POST", "/ws/v1/am/{app}/finish") => ("Unregister App Master", AM),
        // A route nobody named here is still audited, under its own name.
        _ => ("Unnamed Request", CLIENT),
    })
}

/// The value of `{name}` in `path`, matched against its route `template`.
fn path_param<'a>(template: &str, path: &'a str, name: &str) -> Option<&'a str> {
    let wanted = format!("{{{name}}}");
    let at = template.split('/').position(|s| s == wanted)?;
    path.split('/').nth(at).filter(|s| !s.is_empty())
}

/// The `user.name` of the query, as the handlers read it, or `dr.who`,
/// Hadoop's name for an anonymous web caller.
fn user_name(req: &Request) -> String {
    #[derive(serde::Deserialize)]
    struct UserName {
        #[serde(rename = "user.name")]
        user_name: Option<String>,
    }
    // A query the handler will refuse (a repeated user.name, say) is
    // audited as anonymous: its refusal is what the line records.
    Query::<UserName>::try_from_uri(req.uri())
        .ok()
        .and_then(|Query(q)| q.user_name)
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "dr.who".to_owned())
}

/// Middleware: audits every request of the router it wraps that asks for a
/// change, once its answer is known.
pub(crate) async fn record_requests(
    State(s): State<ApiState>,
    req: Request,
    next: Next,
) -> Response {
    let Some(route) = req.extensions().get::<MatchedPath>().cloned() else {
        return next.run(req).await;
    };
    let Some((op, target)) = operation(req.method(), route.as_str()) else {
        return next.run(req).await;
    };
    let ip = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let path = req.uri().path().to_owned();
    let app = path_param(route.as_str(), &path, "app").map(str::to_owned);
    let node = path_param(route.as_str(), &path, "node").map(str::to_owned);
    let user = match (&app, target) {
        // An AM's calls name no user: they act for the application's, asked
        // of the scheduler itself since the published view may not have an
        // app submitted a moment ago (once per attempt, so the round trip
        // costs nothing that matters).
        (Some(app), "ApplicationMasterService") => match app.parse() {
            Ok(id) => s
                .rm()
                .app_snapshot(id)
                .await
                .map(|snap| snap.app.report.record.user)
                .unwrap_or_else(|_| "dr.who".to_owned()),
            Err(_) => "dr.who".to_owned(),
        },
        _ => user_name(&req),
    };
    let res = next.run(req).await;
    // A submission names its app in the body; the answer's Location says it.
    let app = app.or_else(|| {
        let location = res.headers().get(header::LOCATION)?.to_str().ok()?;
        Some(location.rsplit('/').next()?.to_owned())
    });
    let failure;
    let outcome = if res.status().is_success() {
        Outcome::Success
    } else {
        failure = match res.extensions().get::<RemoteException>() {
            Some(remote) => format!("{}: {}", res.status().as_u16(), remote.message),
            None => res.status().to_string(),
        };
        Outcome::Failure(&failure)
    };
    s.audit().record(&Entry {
        user: &user,
        ip,
        operation: op,
        target,
        outcome,
        app: app.as_deref(),
        node: node.as_deref(),
    });
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_hadoops_tab_separated_pairs() {
        let ok = Entry {
            user: "alice",
            ip: Some("10.0.0.7".parse().unwrap()),
            operation: "Kill Application Request",
            target: "ClientRMService",
            outcome: Outcome::Success,
            app: Some("application_1700000000000_0001"),
            node: None,
        };
        assert_eq!(
            ok.line(),
            "USER=alice\tIP=10.0.0.7\tOPERATION=Kill Application Request\tTARGET=ClientRMService\tRESULT=SUCCESS\tAPPID=application_1700000000000_0001"
        );
        let refused = Entry {
            user: "bob",
            ip: None,
            operation: "updateNodeResource",
            target: "AdminService",
            outcome: Outcome::Failure("403: not an admin\n\tforged=1"),
            app: None,
            node: Some("h1:8041"),
        };
        assert_eq!(
            refused.line(),
            "USER=bob\tOPERATION=updateNodeResource\tTARGET=AdminService\tRESULT=FAILURE\tDESCRIPTION=403: not an admin  forged=1\tPERMISSIONS=\tNODEID=h1:8041"
        );
    }

    #[test]
    fn path_parameters_are_found_by_their_place_in_the_route() {
        let route = "/ws/v1/cluster/apps/{app}/state";
        let path = "/ws/v1/cluster/apps/application_1_0002/state";
        assert_eq!(path_param(route, path, "app"), Some("application_1_0002"));
        assert_eq!(path_param(route, path, "node"), None);
        assert_eq!(
            path_param("/ws/v1/cluster/apps", "/ws/v1/cluster/apps", "app"),
            None
        );
    }

    #[test]
    fn only_changes_are_audited_and_unnamed_routes_still_are() {
        assert_eq!(operation(&Method::GET, "/ws/v1/cluster/apps"), None);
        assert_eq!(
            operation(&Method::PUT, "/ws/v1/cluster/apps/{app}/queue/"),
            Some(("Move Application Request", "ClientRMService"))
        );
        assert_eq!(
            operation(&Method::DELETE, "/ws/v1/cluster/something-new"),
            Some(("Unnamed Request", "ClientRMService"))
        );
    }

    #[test]
    fn the_file_gets_one_line_per_entry() {
        let path = std::env::temp_dir().join(format!("weft-audit-{}.log", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let log = AuditLog::open(&path).unwrap();
        let entry = Entry {
            user: "yarn",
            ip: None,
            operation: "refreshQueues",
            target: "AdminService",
            outcome: Outcome::Success,
            app: None,
            node: None,
        };
        log.record(&entry);
        log.record(&entry);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "USER=yarn\tOPERATION=refreshQueues\tTARGET=AdminService\tRESULT=SUCCESS\n".repeat(2)
        );
        std::fs::remove_file(&path).unwrap();
    }
}
