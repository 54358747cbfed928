//! `weft applicationattempt -list|-status` and `weft container
//! -list|-status`: an application's attempts and an attempt's running
//! containers, from `GET /ws/v1/cluster/apps/{app}/appattempts[/...]`, in
//! the shapes YARN's `ApplicationCLI` prints them.
//!
//! The ids arrive parsed (the binary refuses a malformed one before any
//! call); an id the RM does not know comes back as its error.

use std::fmt::Write as _;

use weft_model::{AppId, AttemptId, ContainerId};

use crate::client::{ClientError, RmClient};
use crate::dto::attempts::{AppAttemptReportDto, AppAttemptsDto, ContainerDto, ContainersDto};
use crate::iso8601::EpochMs;

use super::{app_path, get_wrapped};

/// `weft applicationattempt -list <appId>`: every attempt the RM keeps.
pub async fn attempt_list(client: &mut RmClient, app: AppId) -> Result<String, ClientError> {
    let path = app_path(&app.to_string(), "/appattempts");
    let attempts: AppAttemptsDto = get_wrapped(client, &path, "appAttempts").await?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Total number of application attempts :{}",
        attempts.app_attempt.len()
    );
    let _ = writeln!(
        out,
        "{:>30}\t{:>20}\t{:>35}\t{:>35}",
        "ApplicationAttempt-Id", "State", "AM-Container-Id", "Tracking-URL"
    );
    // The list has no tracking URLs; the current attempt's is the app's,
    // which one more call would fetch, so YARN's `N/A` stands for all.
    for a in &attempts.app_attempt {
        let _ = writeln!(
            out,
            "{:>30}\t{:>20}\t{:>35}\t{:>35}",
            a.app_attempt_id,
            a.app_attempt_state,
            or_na(&a.container_id),
            "N/A"
        );
    }
    Ok(out)
}

/// `weft applicationattempt -status <attemptId>`.
pub async fn attempt_status(
    client: &mut RmClient,
    attempt: AttemptId,
) -> Result<String, ClientError> {
    let path = app_path(&attempt.app.to_string(), &format!("/appattempts/{attempt}"));
    let a: AppAttemptReportDto = get_wrapped(client, &path, "appAttempt").await?;
    let mut out = String::from("Application Attempt Report : \n");
    let lines = [
        ("ApplicationAttempt-Id", a.app_attempt_id),
        ("State", a.app_attempt_state),
        ("AMContainer", or_na(&a.am_container_id).to_owned()),
        ("Tracking-URL", or_na(&a.tracking_url).to_owned()),
        ("RPC Port", a.rpc_port.to_string()),
        ("AM Host", a.host),
        ("Diagnostics", a.diagnostics_info),
    ];
    for (k, v) in lines {
        let _ = writeln!(out, "\t{k} : {v}");
    }
    Ok(out)
}

/// `weft container -list <attemptId>`: the attempt's running containers.
pub async fn container_list(
    client: &mut RmClient,
    attempt: AttemptId,
) -> Result<String, ClientError> {
    let path = app_path(
        &attempt.app.to_string(),
        &format!("/appattempts/{attempt}/containers"),
    );
    let list: ContainersDto = get_wrapped(client, &path, "containers").await?;
    let mut out = String::new();
    let _ = writeln!(out, "Total number of containers :{}", list.container.len());
    let _ = writeln!(
        out,
        "{:>30}\t{:>20}\t{:>20}\t{:>20}\t{:>20}\t{:>20}\t{:>35}",
        "Container-Id",
        "Start Time",
        "Finish Time",
        "State",
        "Host",
        "Node Http Address",
        "LOG-URL"
    );
    for c in &list.container {
        let _ = writeln!(
            out,
            "{:>30}\t{:>20}\t{:>20}\t{:>20}\t{:>20}\t{:>20}\t{:>35}",
            c.container_id,
            time(c.started_time),
            time(c.finished_time),
            c.container_state,
            or_na(&c.node_id),
            or_na(&c.node_http_address),
            or_na(&c.log_url)
        );
    }
    Ok(out)
}

/// `weft container -status <containerId>`.
pub async fn container_status(
    client: &mut RmClient,
    container: ContainerId,
) -> Result<String, ClientError> {
    let attempt = container.attempt;
    let path = app_path(
        &attempt.app.to_string(),
        &format!("/appattempts/{attempt}/containers/{container}"),
    );
    let c: ContainerDto = get_wrapped(client, &path, "container").await?;
    let mut out = String::from("Container Report : \n");
    let lines = [
        ("Container-Id", c.container_id.clone()),
        ("Start-Time", time(c.started_time)),
        ("Finish-Time", time(c.finished_time)),
        ("State", c.container_state.clone()),
        ("Execution-Type", "GUARANTEED".to_owned()),
        ("LOG-URL", or_na(&c.log_url).to_owned()),
        ("Host", or_na(&c.node_id).to_owned()),
        ("NodeHttpAddress", or_na(&c.node_http_address).to_owned()),
        (
            "Resource",
            format!("<memory:{}, vCores:{}>", c.allocated_mb, c.allocated_vcores),
        ),
        ("Priority", c.priority.to_string()),
        ("Diagnostics", c.diagnostics_info.clone()),
    ];
    for (k, v) in lines {
        let _ = writeln!(out, "\t{k} : {v}");
    }
    Ok(out)
}

fn or_na(s: &str) -> &str {
    if s.is_empty() { "N/A" } else { s }
}

/// A timestamp as the table shows it: `N/A` for none (0), else ISO 8601.
fn time(ms: u64) -> String {
    if ms == 0 {
        return "N/A".to_owned();
    }
    EpochMs(i64::try_from(ms).unwrap_or(i64::MAX)).to_string()
}
