//! Router tests of drains across an RM restart with a state store: a
//! draining node that comes back is let in and drains on to its stored
//! deadline with the containers it brings back; a recommissioned one
//! comes back as any other; a node that brings nothing back still waits
//! for the apps it waited for; new terms count from the drain's start; a
//! stored drain ends when its deadline passed while the RM was down, when
//! the lists allow its node again, on a forced refresh, or when its node
//! does not come back in time.

use super::*;
use crate::state_store::drains::DrainStore;

const WAIT_FOR_APPS: &str =
    "yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications";

/// A test's directory with an empty exclude file, for `rm_after`.
fn drain_dir(name: &str) -> TestDir {
    let dir = TestDir::new(name);
    dir.write("nodes.exclude", "");
    dir
}

/// An RM on the test configuration with `dir`'s exclude file and a state
/// store in `dir/state`, plus `extra`, started `after_ms` after `EPOCH` by
/// the wall clock.
fn rm_after(dir: &TestDir, extra: &[(&str, &str)], after_ms: u64) -> Rm {
    let exclude = dir.path("nodes.exclude").display().to_string();
    let state = dir.path("state").display().to_string();
    let mut site = vec![
        ("yarn.resourcemanager.nodes.exclude-path", exclude.as_str()),
        ("weft.rm.state-store.dir", state.as_str()),
    ];
    site.extend_from_slice(extra);
    let service = testing::service_at(&site, testing::EPOCH + after_ms);
    Rm::around(service)
}

/// `node` registering with its running containers, as after an RM restart.
async fn register_with(rm: &Rm, node: &str, containers: &[&str]) -> Answer {
    let running: Vec<Value> = containers
        .iter()
        .map(|c| json!({"containerId": c, "resource": {"memory": 1024, "vCores": 1}}))
        .collect();
    post(
        &rm.router,
        "/ws/v1/nm/register",
        json!({"nodeId": node, "capability": {"memory": 8192, "vCores": 8}, "containers": running}),
    )
    .await
}

/// The AM container of the `seq`th app of the first RM.
fn am_container(seq: u32) -> String {
    format!("container_{}_{seq:04}_01_000001", testing::EPOCH)
}

/// The drains the store holds now, one `node timeout deadline` each.
fn stored(dir: &TestDir) -> Vec<String> {
    let (_store, drains, warnings) = DrainStore::open(&dir.path("state")).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    drains
        .iter()
        .map(|d| format!("{} {} {:?}", d.node, d.timeout, d.deadline_ms))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_draining_node_comes_back_draining_after_a_restart_and_leaves_when_drained() {
    let dir = drain_dir("restart-drain");
    let rm = rm_after(&dir, &[(WAIT_FOR_APPS, "false")], 0);
    rm.register("h1:8041", 8192, 8).await;
    rm.running("alice", "a", "h1:8041", 0).await;
    // h3 is excluded too, but never drained.
    dir.write("nodes.exclude", "h1\nh3\n");
    let a = refresh(&rm, json!({"graceful": true, "timeoutSecs": 600})).await;
    assert!(
        changes(&a).starts_with("h1:8041 RUNNING->DECOMMISSIONING timeout=600 "),
        "{}",
        a.body
    );
    tokio::time::advance(Duration::from_secs(100)).await;
    rm.stop().await;
    assert_eq!(stored(&dir), ["h1:8041 600 s Some(1700000600000)"]);

    // Restarted 100 s later, and by a site that waits for applications:
    // the drain keeps the terms it was given.
    let rm = rm_after(&dir, &[], 100_000);
    assert_eq!(
        get(&rm.router, "/ws/v1/cluster/nodes/h1:8041").await.status,
        StatusCode::NOT_FOUND
    );
    let am = am_container(1);
    let again = register_with(&rm, "h1:8041", &[&am]).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    let h1 = node(&rm, "h1:8041").await;
    assert_eq!(h1["state"], "DECOMMISSIONING");
    assert_eq!(h1["numContainers"], 1);
    assert_eq!(h1["decommissioningTimeout"], 600);
    assert_eq!(h1["decommissioningDeadline"], testing::EPOCH + 600_000);
    assert_eq!(h1["totalResource"], json!({"memory": 1024, "vCores": 1}));
    // Only a node whose drain was kept is let in.
    assert_eq!(
        rm.register("h3:8041", 8192, 8).await.status,
        StatusCode::FORBIDDEN
    );

    // Its container done, it leaves (its app still runs: the drain does
    // not wait for it, as when it began), and is told to shut down.
    let hb = rm
        .heartbeat(
            "h1:8041",
            0,
            json!([{"containerId": am, "state": "COMPLETE", "exitStatus": 0}]),
        )
        .await;
    assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONED");
    let hb = rm.heartbeat("h1:8041", 1, json!([])).await.json();
    assert_eq!(hb["nodeAction"], "SHUTDOWN");
    assert_eq!(
        hb["diagnosticsMessage"],
        "node h1:8041 was decommissioned (decommissioned gracefully: drained); stop every container and shut down"
    );
    rm.stop().await;
    assert!(stored(&dir).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_node_recommissioned_before_a_restart_comes_back_as_any_other() {
    let dir = drain_dir("restart-recommission");
    let rm = rm_after(&dir, &[], 0);
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    rm.running("alice", "a", "h1:8041", 0).await;
    rm.running("alice", "a", "h2:8041", 0).await;
    dir.write("nodes.exclude", "h1 h2\n");
    refresh(&rm, json!({"graceful": true})).await;
    assert_eq!(stored_lines(&dir).lines().count(), 2);
    dir.write("nodes.exclude", "");
    let a = refresh(&rm, Value::Null).await;
    assert_eq!(
        changes(&a).matches("DECOMMISSIONING->RUNNING").count(),
        2,
        "{}",
        a.body
    );
    rm.stop().await;
    assert!(stored(&dir).is_empty());

    // h2 is excluded again in the file, with no refresh: nothing was
    // draining when the RM stopped, so it is refused as Hadoop refuses it.
    dir.write("nodes.exclude", "h2\n");
    let rm = rm_after(&dir, &[], 60_000);
    let h1 = register_with(&rm, "h1:8041", &[&am_container(1)]).await;
    assert_eq!(h1.status, StatusCode::OK, "{}", h1.body);
    let h1 = node(&rm, "h1:8041").await;
    assert_eq!(h1["state"], "RUNNING");
    assert_eq!(h1["numContainers"], 1);
    assert_eq!(h1.get("decommissioningTimeout"), None);
    let h2 = register_with(&rm, "h2:8041", &[&am_container(2)]).await;
    assert_eq!(h2.status, StatusCode::FORBIDDEN, "{}", h2.body);
    rm.stop().await;
}

/// The lines of the file of drains as they stand: each record is written
/// before the call that caused it is answered.
fn stored_lines(dir: &TestDir) -> String {
    std::fs::read_to_string(dir.path("state").join("nodes.jsonl")).unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_stored_drain_ends_when_it_is_past_due_allowed_again_or_its_node_stays_away() {
    let dir = drain_dir("restart-ends");
    let rm = rm_after(&dir, &[], 0);
    let nodes = ["h1:8041", "h2:8041", "h3:8041", "h4:8041"];
    for n in nodes {
        rm.register(n, 8192, 8).await;
    }
    for n in nodes {
        rm.running("alice", "a", n, 0).await;
    }
    dir.write("nodes.exclude", "h1 h2 h3 h4\n");
    refresh(&rm, json!({"graceful": true, "timeoutSecs": 60})).await;
    rm.stop().await;
    assert_eq!(stored(&dir).len(), 4);

    // Back two minutes later, past every deadline, with h2 allowed again
    // and nodes lost after a minute's silence.
    dir.write("nodes.exclude", "h1 h3 h4\n");
    let rm = rm_after(
        &dir,
        &[("yarn.nm.liveness-monitor.expiry-interval-ms", "60000")],
        120_000,
    );
    // h1 is let in and decommissioned at once: its time was up.
    let h1 = register_with(&rm, "h1:8041", &[&am_container(1)]).await;
    assert_eq!(h1.status, StatusCode::OK, "{}", h1.body);
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONED");
    let hb = rm.heartbeat("h1:8041", 0, json!([])).await.json();
    assert_eq!(hb["nodeAction"], "SHUTDOWN");
    assert_eq!(
        hb["diagnosticsMessage"],
        "node h1:8041 was decommissioned (decommissioned: its graceful decommission timed out after 60 s while the resource manager was down); stop every container and shut down"
    );
    // h2 registers as any node the lists allow.
    let h2 = register_with(&rm, "h2:8041", &[&am_container(2)]).await;
    assert_eq!(h2.status, StatusCode::OK, "{}", h2.body);
    let h2 = node(&rm, "h2:8041").await;
    assert_eq!(
        (&h2["state"], &h2["numContainers"]),
        (&json!("RUNNING"), &json!(1))
    );
    // h3 and h4 stay away past the liveness expiry: their drains end, and
    // they are refused.
    tokio::time::sleep(Duration::from_secs(61)).await;
    expect![[r#"
        {"record":"draining","node":"h1:8041","startedMs":1700000000000,"deadlineMs":1700000060000,"waitForApps":true,"timeoutSecs":60,"apps":["application_1700000000000_0001"]}
        {"record":"draining","node":"h2:8041","startedMs":1700000000000,"deadlineMs":1700000060000,"waitForApps":true,"timeoutSecs":60,"apps":["application_1700000000000_0002"]}
        {"record":"draining","node":"h3:8041","startedMs":1700000000000,"deadlineMs":1700000060000,"waitForApps":true,"timeoutSecs":60,"apps":["application_1700000000000_0003"]}
        {"record":"draining","node":"h4:8041","startedMs":1700000000000,"deadlineMs":1700000060000,"waitForApps":true,"timeoutSecs":60,"apps":["application_1700000000000_0004"]}
        {"record":"ended","node":"h1:8041"}
        {"record":"ended","node":"h2:8041"}
        {"record":"ended","node":"h3:8041"}
        {"record":"ended","node":"h4:8041"}
    "#]]
    .assert_eq(&stored_lines(&dir));
    assert_eq!(
        register_with(&rm, "h4:8041", &[&am_container(4)])
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    rm.stop().await;
    assert!(stored(&dir).is_empty());
}

#[tokio::test(start_paused = true)]
async fn after_a_restart_new_terms_count_from_the_drains_start_and_a_forced_refresh_ends_drains() {
    let dir = drain_dir("restart-terms");
    let rm = rm_after(&dir, &[], 0);
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    rm.running("alice", "a", "h1:8041", 0).await;
    rm.running("alice", "a", "h2:8041", 0).await;
    dir.write("nodes.exclude", "h1 h2\n");
    refresh(&rm, json!({"graceful": true, "timeoutSecs": 600})).await;
    tokio::time::advance(Duration::from_secs(100)).await;
    rm.stop().await;

    let rm = rm_after(&dir, &[], 100_000);
    let h1 = register_with(&rm, "h1:8041", &[&am_container(1)]).await;
    assert_eq!(h1.status, StatusCode::OK, "{}", h1.body);
    assert_eq!(
        node(&rm, "h1:8041").await["decommissioningDeadline"],
        testing::EPOCH + 600_000
    );
    // Five minutes from the start of the drain, not from the restart; h2,
    // not back yet, keeps its stored terms.
    let a = refresh(&rm, json!({"graceful": true, "timeoutSecs": 300})).await;
    assert!(
        changes(&a).starts_with("h1:8041 DECOMMISSIONING->DECOMMISSIONING timeout=300 "),
        "{}",
        a.body
    );
    let h1 = node(&rm, "h1:8041").await;
    assert_eq!(h1["decommissioningDeadline"], testing::EPOCH + 300_000);
    assert_eq!(h1["decommissioningTimeout"], 300);
    // Not graceful, the refresh decommissions h1 and ends h2's drain: h2
    // is refused when it comes back.
    let a = refresh(&rm, Value::Null).await;
    assert!(
        changes(&a).starts_with("h1:8041 DECOMMISSIONING->DECOMMISSIONED "),
        "{}",
        a.body
    );
    assert_eq!(
        register_with(&rm, "h2:8041", &[&am_container(2)])
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    expect![[r#"
        {"record":"draining","node":"h1:8041","startedMs":1700000000000,"deadlineMs":1700000600000,"waitForApps":true,"timeoutSecs":600,"apps":["application_1700000000000_0001"]}
        {"record":"draining","node":"h2:8041","startedMs":1700000000000,"deadlineMs":1700000600000,"waitForApps":true,"timeoutSecs":600,"apps":["application_1700000000000_0002"]}
        {"record":"draining","node":"h1:8041","startedMs":1700000000000,"deadlineMs":1700000300000,"waitForApps":true,"timeoutSecs":300,"apps":["application_1700000000000_0001"]}
        {"record":"ended","node":"h2:8041"}
        {"record":"ended","node":"h1:8041"}
    "#]]
    .assert_eq(&stored_lines(&dir));
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_drain_taken_back_waits_for_the_apps_it_waited_for_before_the_restart() {
    let dir = drain_dir("restart-apps");
    let rm = rm_after(&dir, &[], 0);
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    dir.write("nodes.exclude", "h1\n");
    refresh(&rm, json!({"graceful": true, "timeoutSecs": 600})).await;
    // Its AM container there fails; the app lives on, waiting for another
    // attempt, so the node keeps draining for it.
    let hb = rm
        .heartbeat(
            "h1:8041",
            1,
            json!([{"containerId": am_container(1), "state": "COMPLETE", "exitStatus": 1}]),
        )
        .await;
    assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONING");
    rm.stop().await;

    // After the restart the node brings nothing back, yet still waits for
    // the app, which the state store brought back too.
    let rm = rm_after(&dir, &[], 10_000);
    let again = register_with(&rm, "h1:8041", &[]).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONING");
    let kill = rm.kill(&app, "alice").await;
    assert!(kill.status.is_success(), "{}", kill.body);
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONED");
    rm.stop().await;
}
