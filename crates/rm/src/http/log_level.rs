//! `GET /logLevel?log=<target>[&level=<LEVEL>]`: Hadoop's `LogLevel`
//! servlet for Weft's tracing targets. With `level`, the target's level is
//! set (until the process stops); either way the answer says the target's
//! effective level, as plain `Key: value` lines a person or a script reads.
//!
//! Every Weft daemon serves it alike, so this module holds the part they
//! share (`answer`: the query's rules, who may, the change and its log
//! line, the answer's text) beside the RM's handler, which adds the audit
//! log; the node agent's handler (`weft_nm::http`) calls `answer` too.
//! Only an administrator (`yarn.admin.acl`, when `yarn.acl.enable` is on)
//! may read or set, as Hadoop's servlet asks `hasAdministratorAccess`. The
//! names and the editing of the directives are `log_levels`'; the filter
//! itself is whatever the process handed the daemon.

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use crate::access::{AclSettings, Identity};
use crate::audit::{Entry, Outcome};
use crate::http::ApiState;
use crate::http::codec::{Caller, Params};
use crate::http::error::ApiError;
use crate::log_levels::{self, LevelChange, LogLevels, Target};

/// The query: `log` (a target; empty for the default) and `level`.
#[derive(Debug, serde::Deserialize)]
pub struct LogLevelQuery {
    log: Option<String>,
    level: Option<String>,
}

/// One `/logLevel` request as a daemon's handler has gathered it.
#[derive(Clone, Copy, Debug)]
pub struct LogLevelRequest<'a> {
    /// The daemon answering, for the log line (`resourcemanager`,
    /// `nodemanager <node id>`): in `weft local` one filter serves several.
    pub daemon: &'a str,
    /// The process's logging filter; `None` when the daemon was started
    /// without one.
    pub levels: Option<&'a dyn LogLevels>,
    /// The daemon's `yarn.acl.enable` and `yarn.admin.acl` in force.
    pub acl: &'a AclSettings,
    /// The caller; `None` when anonymous.
    pub who: Option<&'a Identity>,
    /// Where the request came from, when the server knows.
    pub from: Option<IpAddr>,
    /// What was asked.
    pub query: &'a LogLevelQuery,
}

/// The audit log's operation and target for a change, after Hadoop's
/// servlet (whose changes Hadoop does not audit).
const OPERATION: &str = "setLogLevel";
const AUDIT_TARGET: &str = "LogLevel";

pub(super) async fn log_level(
    State(s): State<ApiState>,
    Caller(who): Caller,
    Params(q): Params<LogLevelQuery>,
    parts: Parts,
) -> Result<Response, ApiError> {
    let acl = s.access().settings();
    let from = caller_ip(&parts);
    let res = answer(&LogLevelRequest {
        daemon: "resourcemanager",
        levels: s.log_levels(),
        acl: &acl,
        who: who.as_ref(),
        from,
        query: &q,
    });
    // A request to set is audited whether or not it was done, as every
    // administrator's change is; a read is not.
    if q.level.is_some() {
        let failure;
        let outcome = match &res {
            Ok(_) => Outcome::Success,
            Err(e) => {
                failure = format!("{}: {e}", e.status().as_u16());
                Outcome::Failure(&failure)
            }
        };
        s.audit().record(&Entry {
            user: who.as_ref().map_or("dr.who", |w| w.user.as_str()),
            ip: from,
            operation: OPERATION,
            target: AUDIT_TARGET,
            outcome,
            app: None,
            node: None,
        });
    }
    Ok(text(res?))
}

/// The peer's address, where the server was built to record it
/// (`into_make_service_with_connect_info`); `None` in router tests.
pub fn caller_ip(parts: &Parts) -> Option<IpAddr> {
    parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
}

/// An answer's text as the response: plain text, as Hadoop's servlet's is.
pub fn text(text: String) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
}

/// The answer's text, or why there is none. A level set is logged at info
/// with who, from where, and the directives before and after.
pub fn answer(req: &LogLevelRequest<'_>) -> Result<String, ApiError> {
    let Some(levels) = req.levels else {
        return Err(ApiError::NotFound(
            "this process's log levels cannot be changed while it runs: it was started without a reloadable logging filter (weft rm, weft nm and weft local have one)"
                .to_owned(),
        ));
    };
    admin_only(req.acl, req.who)?;
    let q = req.query;
    let bad = |e: log_levels::LogLevelError| ApiError::BadRequest(e.to_string());
    let Some(log) = &q.log else {
        if q.level.is_some() {
            return Err(ApiError::BadRequest(
                "level= needs log= too: the target to set (a module path such as weft_rm::actor, or empty for the default)"
                    .to_owned(),
            ));
        }
        let directives = levels.directives();
        let default = log_levels::effective_level(&directives, &Target::default_target());
        return Ok(format!(
            "Directives: {directives}\nDefault Level: {}\n",
            log_levels::level_name(default)
        ));
    };
    let target = Target::parse(log.trim()).map_err(bad)?;
    let mut out = format!("Target: {target}\n");
    let directives = match &q.level {
        Some(text) => {
            let level = log_levels::parse_level(text).map_err(bad)?;
            let change = set(levels, &target, level)?;
            tracing::info!(
                daemon = req.daemon,
                by = req.who.map_or("dr.who", |w| w.user.as_str()),
                from = req.from.map(tracing::field::display),
                target_name = %target,
                level = log_levels::level_name(level),
                before = %change.before,
                directives = %change.after,
                "log level set"
            );
            let _ = writeln!(out, "Submitted Level: {text}");
            let _ = writeln!(out, "Set Level: {}", log_levels::level_name(level));
            change.after
        }
        None => levels.directives(),
    };
    let effective = log_levels::effective_level(&directives, &target);
    let _ = writeln!(
        out,
        "Effective Level: {}",
        log_levels::level_name(effective)
    );
    let _ = writeln!(out, "Directives: {directives}");
    Ok(out)
}

fn set(
    levels: &dyn LogLevels,
    target: &Target,
    level: tracing::level_filters::LevelFilter,
) -> Result<LevelChange, ApiError> {
    levels.set_level(target, level).map_err(|e| {
        // The target and level were checked, so a refusal is the filter
        // disagreeing with the edited directives: still the request's
        // doing, and nothing changed.
        ApiError::BadRequest(format!("{e} (the levels in force are unchanged)"))
    })
}

/// Hadoop's `hasAdministratorAccess`: anyone when ACLs are off; otherwise
/// a named caller `yarn.admin.acl` lists. An anonymous caller gets 403, as
/// Hadoop 3's check answers one.
fn admin_only(acl: &AclSettings, who: Option<&Identity>) -> Result<(), ApiError> {
    match who {
        _ if !acl.enabled => Ok(()),
        Some(who) if acl.is_admin(who) => Ok(()),
        Some(who) => Err(ApiError::Forbidden(format!(
            "user {} is not a cluster administrator (yarn.admin.acl) and may not read or set log levels",
            who.user
        ))),
        None => Err(ApiError::Forbidden(
            "an anonymous caller may not read or set log levels while yarn.acl.enable is on: add ?user.name=<an administrator>"
                .to_owned(),
        )),
    }
}
