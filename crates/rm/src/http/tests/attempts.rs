//! Router tests of an application's attempts: an AM container that fails
//! and a second attempt that runs, both listed (`appattempts`), one
//! attempt (`appattempts/{id}`), an attempt's containers and one of them,
//! the ids refused (400) or not found (404), what a caller the app's
//! `VIEW_APP` does not name sees, and a per-app `max-app-attempts`.
//!
//! The test configuration turns ACLs on and lets anyone submit to
//! `root.b`; the RM-wide `yarn.resourcemanager.am.max-attempts` is 2.

use std::time::Duration;

use super::*;

const AM1: &str = "container_1700000000000_0001_01_000001";
const TASK: &str = "container_1700000000000_0001_01_000002";
const AM2: &str = "container_1700000000000_0001_02_000001";
const ATTEMPT1: &str = "appattempt_1700000000000_0001_000001";
const ATTEMPT2: &str = "appattempt_1700000000000_0001_000002";

/// alice's app in `root.b` (carol may view it), with `extra` fields in its
/// submission: its AM registered on h1, a task container running beside
/// it, then, 5 s later, its AM container exiting with status 1 (the node
/// saying why), which places the second attempt's AM container on h1 in
/// the same heartbeat, and 5 s more. Returns the app id.
async fn failed_once(rm: &Rm, extra: Value) -> String {
    let app = rm
        .alices_registered_app(json!({"VIEW_APP": "carol"}), extra, 1, 2048)
        .await;
    rm.heartbeat("h1:8041", 1, json!([])).await;
    rm.heartbeat(
        "h1:8041",
        2,
        json!([{"containerId": AM1, "state": "RUNNING"}, {"containerId": TASK, "state": "RUNNING"}]),
    )
    .await;
    tokio::time::advance(Duration::from_secs(5)).await;
    let done = rm
        .heartbeat(
            "h1:8041",
            3,
            json!([{"containerId": AM1, "state": "COMPLETE", "exitStatus": 1,
                    "diagnostics": "Exception from container-launch: exit code 1"}]),
        )
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    tokio::time::advance(Duration::from_secs(5)).await;
    rm.heartbeat("h1:8041", 4, json!([])).await;
    app
}

#[tokio::test(start_paused = true)]
async fn a_failed_attempt_is_listed_before_the_one_that_follows_it() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = failed_once(&rm, json!({})).await;
    let list = get(
        r,
        &format!("/ws/v1/cluster/apps/{app}/appattempts?user.name=alice"),
    )
    .await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    // The second began when the first failed; the first's AM container
    // and node stay with it, and why it failed in the core's words and
    // the node's.
    expect![[r#"{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1700000000000_0001_000001","startTime":1700000000000,"finishedTime":1700000005000,"containerId":"container_1700000000000_0001_01_000001","nodeHttpAddress":"h1:8042","nodeId":"h1:8041","logsLink":"","blacklistedNodes":"","appAttemptState":"FAILED","diagnosticsInfo":"application master container exited with status 1; its node said: Exception from container-launch: exit code 1"},{"id":2,"appAttemptId":"appattempt_1700000000000_0001_000002","startTime":1700000005000,"finishedTime":0,"containerId":"container_1700000000000_0001_02_000001","nodeHttpAddress":"h1:8042","nodeId":"h1:8041","logsLink":"","blacklistedNodes":"","appAttemptState":"ALLOCATED","diagnosticsInfo":""}]}}"#]]
    .assert_eq(&list.body);

    // One attempt, in the web services' shape: only the current one's AM
    // registered with this RM.
    let one = async |attempt: &str| {
        get(
            r,
            &format!("/ws/v1/cluster/apps/{app}/appattempts/{attempt}?user.name=alice"),
        )
        .await
    };
    expect![[r#"{"appAttempt":{"appAttemptId":"appattempt_1700000000000_0001_000001","host":"N/A","rpcPort":-1,"trackingUrl":"","originalTrackingUrl":"","diagnosticsInfo":"application master container exited with status 1; its node said: Exception from container-launch: exit code 1","appAttemptState":"FAILED","amContainerId":"container_1700000000000_0001_01_000001","startedTime":1700000000000,"finishedTime":1700000005000}}"#]]
    .assert_eq(&one(ATTEMPT1).await.body);
    // The app's web page says why the first attempt ended too.
    let page = get(r, &format!("/cluster/app/{app}?user.name=alice")).await;
    assert!(
        page.body.contains("<td>application master container exited with status 1; its node said: Exception from container-launch: exit code 1</td>"),
        "{}",
        page.body
    );
    let second = one(ATTEMPT2).await.json();
    assert_eq!(second["appAttempt"]["appAttemptState"], "ALLOCATED");
    assert_eq!(second["appAttempt"]["amContainerId"], AM2);

    // The first attempt's containers went with it; the second holds its AM's.
    let containers = async |attempt: &str| {
        get(
            r,
            &format!("/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers?user.name=alice"),
        )
        .await
    };
    assert_eq!(containers(ATTEMPT1).await.body, r#"{"containers":{}}"#);
    expect![[r#"{"containers":{"container":[{"containerId":"container_1700000000000_0001_02_000001","allocatedMB":1024,"allocatedVCores":1,"assignedNodeId":"h1:8041","priority":0,"startedTime":1700000005000,"finishedTime":0,"elapsedTime":5000,"diagnosticsInfo":"","logUrl":"","containerExitStatus":0,"containerState":"NEW","nodeHttpAddress":"h1:8042","nodeId":"h1:8041"}]}}"#]]
    .assert_eq(&containers(ATTEMPT2).await.body);
    let xml = call(
        r,
        Method::GET,
        &format!("/ws/v1/cluster/apps/{app}/appattempts/{ATTEMPT2}/containers?user.name=alice"),
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(xml.status, StatusCode::OK, "{}", xml.body);
    assert!(
        xml.body.contains(&format!(
            "<containers><container><containerId>{AM2}</containerId>"
        )),
        "{}",
        xml.body
    );
    let container = async |attempt: &str, container: &str| {
        get(
            r,
            &format!(
                "/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers/{container}?user.name=alice"
            ),
        )
        .await
    };
    let am2 = container(ATTEMPT2, AM2).await;
    assert_eq!(am2.status, StatusCode::OK, "{}", am2.body);
    assert_eq!(am2.json()["container"]["containerId"], AM2);

    // Ids that do not parse are 400s, ids the app does not have 404s,
    // each saying which and why.
    let cases = [
        (one("appattempt_x").await, "400"),
        (one("appattempt_1700000000000_0001_000007").await, "404"),
        (one("appattempt_1700000000000_0009_000001").await, "404"),
        (containers("attempt-1").await, "400"),
        (containers("appattempt_1700000000000_0001_000009").await, "404"),
        (container(ATTEMPT2, "container-1").await, "400"),
        (container(ATTEMPT2, TASK).await, "404"),
        (container(ATTEMPT1, TASK).await, "404"),
        (container(ATTEMPT2, "container_1700000000000_0001_02_000005").await, "404"),
        (
            get(
                r,
                "/ws/v1/cluster/apps/application_1700000000000_0042/appattempts/appattempt_1700000000000_0042_000001",
            )
            .await,
            "404",
        ),
    ];
    let errors: Vec<String> = cases
        .iter()
        .map(|(a, status)| {
            let e = a.error();
            assert!(e.starts_with(status), "{e}");
            e
        })
        .collect();
    expect![[r#"
        [
            "400 BadRequestException: invalid application attempt id of application application_1700000000000_0001 in the path: invalid application attempt id \"appattempt_x\": expected appattempt_<clusterTimestamp>_<sequence>_<attempt>",
            "404 NotFoundException: application application_1700000000000_0001 has no attempt appattempt_1700000000000_0001_000007: it has not started one with that number, or it is older than the attempts the resource manager keeps",
            "404 NotFoundException: application attempt appattempt_1700000000000_0009_000001 belongs to application application_1700000000000_0009, not to application_1700000000000_0001",
            "400 BadRequestException: invalid application attempt id of application application_1700000000000_0001 in the path: invalid application attempt id \"attempt-1\": expected appattempt_<clusterTimestamp>_<sequence>_<attempt>",
            "404 NotFoundException: application application_1700000000000_0001 has no attempt appattempt_1700000000000_0001_000009: it has not started one with that number, or it is older than the attempts the resource manager keeps",
            "400 BadRequestException: invalid container id in the path: invalid container id \"container-1\": expected container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<sequence>",
            "404 NotFoundException: container container_1700000000000_0001_01_000002 belongs to attempt appattempt_1700000000000_0001_000001, not to appattempt_1700000000000_0001_000002",
            "404 NotFoundException: container container_1700000000000_0001_01_000002 of attempt appattempt_1700000000000_0001_000001 is not running: the resource manager reports only the containers an attempt holds now",
            "404 NotFoundException: container container_1700000000000_0001_02_000005 of attempt appattempt_1700000000000_0001_000002 is not running: the resource manager reports only the containers an attempt holds now",
            "404 NotFoundException: application application_1700000000000_0042 is not known",
        ]
    "#]]
    .assert_debug_eq(&errors);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_caller_the_app_does_not_let_view_it_sees_no_placement_nor_why() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = failed_once(&rm, json!({})).await;
    let base = format!("/ws/v1/cluster/apps/{app}/appattempts");
    for (who, shown) in [("carol", true), ("erin", false)] {
        let list = get(r, &format!("{base}?user.name={who}")).await.json();
        let first = &list["appAttempts"]["appAttempt"][0];
        assert_eq!(first["appAttemptState"], "FAILED");
        assert_eq!(first["finishedTime"], 1_700_000_005_000_u64);
        assert_eq!(first["containerId"] == AM1, shown, "{who}: {first}");
        assert_eq!(first["nodeId"] == "h1:8041", shown, "{who}: {first}");
        assert_eq!(first["diagnosticsInfo"] != "", shown, "{who}: {first}");
        let one = get(r, &format!("{base}/{ATTEMPT1}?user.name={who}"))
            .await
            .json();
        assert_eq!(one["appAttempt"]["appAttemptState"], "FAILED");
        assert_eq!(one["appAttempt"]["amContainerId"] == AM1, shown, "{who}");
        let listed = get(r, &format!("{base}/{ATTEMPT2}/containers?user.name={who}"))
            .await
            .json();
        let c = &listed["containers"]["container"][0];
        assert_eq!(c["containerId"], AM2, "{who}");
        assert_eq!(c["nodeId"] == "h1:8041", shown, "{who}: {c}");
        let single = get(
            r,
            &format!("{base}/{ATTEMPT2}/containers/{AM2}?user.name={who}"),
        )
        .await
        .json();
        assert_eq!(single["container"]["allocatedMB"], 1024, "{who}");
        assert_eq!(
            single["container"]["nodeHttpAddress"] == "h1:8042",
            shown,
            "{who}"
        );
    }
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_apps_own_max_attempts_is_honoured_within_the_rm_wide_one() {
    // One attempt allowed: the app fails with its first, which is listed.
    let rm = Rm::new();
    let app = failed_once(&rm, json!({"max-app-attempts": 1})).await;
    let report = get(&rm.router, &format!("/ws/v1/cluster/apps/{app}"))
        .await
        .json();
    assert_eq!(report["app"]["state"], "FAILED");
    let list = get(
        &rm.router,
        &format!("/ws/v1/cluster/apps/{app}/appattempts?user.name=alice"),
    )
    .await
    .json();
    let attempts = list["appAttempts"]["appAttempt"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{list}");
    assert_eq!(attempts[0]["appAttemptState"], "FAILED");
    assert_eq!(attempts[0]["finishedTime"], 1_700_000_005_000_u64);
    assert_eq!(attempts[0]["containerId"], AM1);
    expect!["application master container exited with status 1; the application failed 1 attempt(s), the most allowed; its node said: Exception from container-launch: exit code 1"]
        .assert_eq(attempts[0]["diagnosticsInfo"].as_str().unwrap());
    rm.stop().await;

    // 0 or less, or more than the RM-wide 2, means the RM-wide value: a
    // second attempt starts.
    for asked in [0, -3, 5] {
        let rm = Rm::new();
        let app = failed_once(&rm, json!({"max-app-attempts": asked})).await;
        let report = get(&rm.router, &format!("/ws/v1/cluster/apps/{app}"))
            .await
            .json();
        assert_eq!(report["app"]["state"], "ACCEPTED", "{asked}");
        let list = get(
            &rm.router,
            &format!("/ws/v1/cluster/apps/{app}/appattempts?user.name=alice"),
        )
        .await
        .json();
        assert_eq!(list["appAttempts"]["appAttempt"][1]["id"], 2, "{asked}");
        rm.stop().await;
    }
}

#[tokio::test(start_paused = true)]
async fn attempts_read_the_same_after_a_restart_with_a_state_store() {
    let dir = TestDir::new("attempts-restart");
    let state = dir.path("state").display().to_string();
    let start = |after_ms: u64| {
        let service = testing::service_at(
            &[("weft.rm.state-store.dir", state.as_str())],
            testing::EPOCH + after_ms,
        );
        Rm::around(service)
    };
    let rm = start(0);
    // A live app on its second attempt, and one that failed with its only one.
    let live = failed_once(&rm, json!({})).await;
    let ended = rm.new_app("alice").await;
    let a = post(
        &rm.router,
        "/ws/v1/cluster/apps?user.name=alice",
        json!({"application-id": ended, "queue": "b", "max-app-attempts": 1,
               "resource": {"memory": 1024, "vCores": 1},
               "am-container-spec": {"commands": {"command": "run-am"}}}),
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    rm.heartbeat("h1:8041", 5, json!([])).await;
    let ended_am = "container_1700000000000_0002_01_000001";
    rm.heartbeat(
        "h1:8041",
        6,
        json!([{"containerId": ended_am, "state": "COMPLETE", "exitStatus": -104,
                "diagnostics": "Container killed for exceeding its memory"}]),
    )
    .await;
    let attempts = async |rm: &Rm, app: &str| {
        get(
            &rm.router,
            &format!("/ws/v1/cluster/apps/{app}/appattempts?user.name=alice"),
        )
        .await
        .body
    };
    let live_before = attempts(&rm, &live).await;
    let ended_before = attempts(&rm, &ended).await;
    rm.stop().await;

    tokio::time::advance(Duration::from_secs(60)).await;
    let rm = start(70_000);
    // The live app's current attempt is taken back waiting for its node to
    // bring its AM container back; its earlier one is as it was.
    let live_after: Value = serde_json::from_str(&attempts(&rm, &live).await).unwrap();
    let live_before: Value = serde_json::from_str(&live_before).unwrap();
    assert_eq!(
        live_after["appAttempts"]["appAttempt"][0],
        live_before["appAttempts"]["appAttempt"][0]
    );
    assert_eq!(
        live_after["appAttempts"]["appAttempt"][1]["startTime"],
        live_before["appAttempts"]["appAttempt"][1]["startTime"]
    );
    assert_eq!(attempts(&rm, &ended).await, ended_before);
    expect![[r#"{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1700000000000_0002_000001","startTime":1700000010000,"finishedTime":1700000010000,"containerId":"container_1700000000000_0002_01_000001","nodeHttpAddress":"h1:8042","nodeId":"h1:8041","logsLink":"","blacklistedNodes":"","appAttemptState":"FAILED","diagnosticsInfo":"application master container exited with status -104; the application failed 1 attempt(s), the most allowed; its node said: Container killed for exceeding its memory"}]}}"#]]
    .assert_eq(&ended_before);
    rm.stop().await;
}
