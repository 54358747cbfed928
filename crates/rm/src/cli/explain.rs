//! `weft application -explain <appId>`: why an application is or is not
//! getting containers, as `GET /ws/v1/cluster/apps/{appid}/explain` says,
//! in the shape of YARN's reports (`Key : value` lines): the summary, then
//! each reason on its own line, `Holds` when it alone holds the app back
//! and `Note` for context, with what would change it.
//!
//! YARN has no such command (its Fair Scheduler explains nothing); the
//! words are Weft's own.

use std::fmt::Write as _;

use crate::client::{ClientError, RmClient};
use crate::dto::explain::{AppExplanationDto, ReasonDto};

use super::{app_path, get_wrapped};

/// `weft application -explain <appId>`.
pub async fn application_explain(client: &mut RmClient, app: &str) -> Result<String, ClientError> {
    let ex: AppExplanationDto =
        get_wrapped(client, &app_path(app, "/explain"), "appExplanation").await?;
    Ok(render(&ex))
}

/// The report: the app, its outlook and summary, then a line per reason.
fn render(ex: &AppExplanationDto) -> String {
    let mut out = String::from("Application Explanation : \n");
    for (k, v) in [
        ("Application-Id", &ex.app_id),
        ("Queue", &ex.queue),
        ("State", &ex.state),
        ("Final-State", &ex.final_status),
        ("Outlook", &ex.outlook),
        ("Summary", &ex.summary),
    ] {
        let _ = writeln!(out, "\t{k} : {v}");
    }
    for r in &ex.reason {
        let _ = writeln!(
            out,
            "\t{} : {}: {} (to change: {})",
            if r.blocking { "Holds" } else { "Note" },
            applies_to(r),
            r.message,
            r.remedy
        );
    }
    out
}

/// `application`, `AM container <memory:1024, vCores:1>` or `ask at
/// priority 1 for 2 × <memory:2048, vCores:1>`, as the summary names asks.
fn applies_to(r: &ReasonDto) -> String {
    if r.scope != "ASK" {
        return "application".to_owned();
    }
    let size = r.capability.unwrap_or_default().to_resource();
    if r.am == Some(true) {
        format!("AM container {size}")
    } else {
        format!(
            "ask at priority {} for {} \u{d7} {size}",
            r.priority.unwrap_or_default(),
            r.containers.unwrap_or_default()
        )
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::dto::ResourceDto;

    #[test]
    fn the_summary_comes_first_then_a_line_per_reason() {
        let ex = AppExplanationDto {
            app_id: "application_1_0001".into(),
            queue: "root.a".into(),
            state: "RUNNING".into(),
            final_status: "UNDEFINED".into(),
            outlook: "HELD_BACK".into(),
            summary: "waiting (ask at priority 1 for 2 × <memory:2048, vCores:1>): queue root.a is at its maxResources (memory 8192 of 8192 MB)".into(),
            reason: vec![
                ReasonDto {
                    scope: "APPLICATION".into(),
                    code: "BLACKLIST".into(),
                    blocking: false,
                    message: "it blacklisted h9, so it is not offered 0 nodes".into(),
                    remedy: "the application master taking them off its blacklist".into(),
                    ..ReasonDto::default()
                },
                ReasonDto {
                    scope: "ASK".into(),
                    code: "QUEUE_MAX_RESOURCES".into(),
                    blocking: true,
                    message: "queue root.a would go over its maxResources".into(),
                    remedy: "containers under root.a ending".into(),
                    priority: Some(1),
                    capability: Some(ResourceDto {
                        memory: 2048,
                        vcores: 1,
                    }),
                    containers: Some(2),
                    am: Some(false),
                    ..ReasonDto::default()
                },
            ],
        };
        expect![[r#"
            Application Explanation : 
            	Application-Id : application_1_0001
            	Queue : root.a
            	State : RUNNING
            	Final-State : UNDEFINED
            	Outlook : HELD_BACK
            	Summary : waiting (ask at priority 1 for 2 × <memory:2048, vCores:1>): queue root.a is at its maxResources (memory 8192 of 8192 MB)
            	Note : application: it blacklisted h9, so it is not offered 0 nodes (to change: the application master taking them off its blacklist)
            	Holds : ask at priority 1 for 2 × <memory:2048, vCores:1>: queue root.a would go over its maxResources (to change: containers under root.a ending)
        "#]]
        .assert_eq(&render(&ex));
    }
}
