//! Router tests of ended applications across an RM restart with a state
//! store: an app run to FINISHED and one KILLED read exactly the same
//! after the restart (`/apps/{id}`, its attempts, its web page), the list's
//! filters find them, a live app keeps its submission and launch times,
//! new ids do not collide with theirs, gauges and the decision log still
//! read wall-clock time from a clock that starts far above zero, and a
//! file from before ended apps were kept loads, forgetting its ended apps,
//! with a torn line kept aside, and keeps from then on the submission and
//! launch times it gave its live apps.

use std::time::Duration;

use super::*;
use crate::state_store::{SKIPPED_FILE_NAME, STATE_FILE_NAME};

/// An RM on the test configuration with a state store in `dir/state`
/// and its decision log in `dir/events.jsonl`, started `after_ms` after
/// `EPOCH` by the wall clock.
fn rm_after(dir: &TestDir, after_ms: u64) -> Rm {
    let state = dir.path("state").display().to_string();
    let events = dir.path("events.jsonl").display().to_string();
    let service = testing::service_at(
        &[
            ("weft.rm.state-store.dir", state.as_str()),
            ("weft.rm.event-log.file", events.as_str()),
        ],
        testing::EPOCH + after_ms,
    );
    Rm::around(service)
}

/// What a client sees of `app`: its report, its attempts, and the main
/// part of its web page (the page's header names the RM's start, which a
/// restart changes).
async fn seen(rm: &Rm, app: &str) -> (String, String, String) {
    let report = get(&rm.router, &format!("/ws/v1/cluster/apps/{app}")).await;
    assert_eq!(report.status, StatusCode::OK, "{}", report.body);
    let attempts = get(
        &rm.router,
        &format!("/ws/v1/cluster/apps/{app}/appattempts"),
    )
    .await;
    assert_eq!(attempts.status, StatusCode::OK, "{}", attempts.body);
    let page = get(&rm.router, &format!("/cluster/app/{app}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let main = page
        .body
        .split_once("<main>")
        .and_then(|(_, rest)| rest.split_once("</main>"))
        .map(|(main, _)| main.to_owned())
        .unwrap_or_else(|| panic!("no <main> in {}", page.body));
    (report.body, attempts.body, main)
}

/// The ids a list answer names, in order.
async fn listed(rm: &Rm, query: &str) -> Vec<String> {
    let a = get(&rm.router, &format!("/ws/v1/cluster/apps{query}")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.json()["apps"]["app"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|app| app["id"].as_str().unwrap().to_owned())
        .collect()
}

/// `app` submitted by `user` to `queue`, its AM container placed on h1 at
/// `response_id`, its AM registered with a host, RPC port and web UI.
async fn registered(rm: &Rm, user: &str, queue: &str, response_id: u64) -> String {
    let app = rm.submit(user, queue).await;
    let hb = rm.heartbeat("h1:8041", response_id, json!([])).await;
    assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
    let reg = rm.am(&app, "register", json!({"host": format!("{user}-am"), "rpcPort": 4040, "trackingUrl": format!("http://{user}-am:4041/")})).await;
    assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
    app
}

#[tokio::test(start_paused = true)]
async fn finished_and_killed_apps_read_the_same_after_a_restart() {
    let dir = TestDir::new("history-restart");
    let rm = rm_after(&dir, 0);
    rm.register("h1:8041", 8192, 8).await;
    tokio::time::advance(Duration::from_secs(5)).await;

    // Alice's app runs a worker for 30 s, reports progress, and finishes.
    let done = registered(&rm, "alice", "a", 0).await;
    let ask = json!({"responseId": 0, "progress": 0.5, "asks": [{"priority": 1, "resourceName": "*",
        "capability": {"memory": 2048, "vCores": 1}, "numContainers": 1}]});
    assert_eq!(rm.allocate(&done, ask).await.status, StatusCode::OK);
    rm.heartbeat("h1:8041", 1, json!([])).await;
    tokio::time::advance(Duration::from_secs(30)).await;
    let worker = format!("container_{}_0001_01_000002", testing::EPOCH);
    let hb = rm
        .heartbeat(
            "h1:8041",
            2,
            json!([{"containerId": worker, "state": "COMPLETE", "exitStatus": 0}]),
        )
        .await;
    assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
    // Bob's app gets a lifetime and is killed by its owner.
    tokio::time::advance(Duration::from_secs(2)).await;
    let killed = registered(&rm, "bob", "b", 3).await;
    let a = put(
        &rm.router,
        &format!("/ws/v1/cluster/apps/{killed}/timeout?user.name=bob"),
        json!({"timeout": {"type": "LIFETIME", "expiryTime": "2023-11-14T23:13:20.000+0000"}}),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let a = rm
        .allocate(&killed, json!({"responseId": 0, "progress": 0.25}))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    tokio::time::advance(Duration::from_secs(3)).await;
    let fin = rm.am(&done, "finish", json!({"finalStatus": "SUCCEEDED", "diagnostics": "all done", "trackingUrl": "http://history/alice"})).await;
    assert_eq!(fin.status, StatusCode::OK, "{}", fin.body);
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(rm.kill(&killed, "bob").await.status, StatusCode::OK);
    // A third stays alive, launched.
    tokio::time::advance(Duration::from_secs(1)).await;
    let live = rm.running("carol", "b", "h1:8041", 4).await;
    let before_done = seen(&rm, &done).await;
    let before_killed = seen(&rm, &killed).await;
    let live_before = get(&rm.router, &format!("/ws/v1/cluster/apps/{live}"))
        .await
        .json();
    let v: Value = serde_json::from_str(&before_done.0).unwrap();
    assert_eq!(
        (&v["app"]["state"], &v["app"]["finalStatus"]),
        (&json!("FINISHED"), &json!("SUCCEEDED"))
    );
    assert!(v["app"]["memorySeconds"].as_u64().unwrap() > 0, "{v}");
    let v: Value = serde_json::from_str(&before_killed.0).unwrap();
    assert_eq!(v["app"]["state"], "KILLED");
    assert_eq!(v["app"]["progress"], 25.0);
    assert_eq!(
        v["app"]["timeouts"]["timeout"][0]["expiryTime"],
        "2023-11-14T23:13:20.000+0000"
    );
    assert_ne!(live_before["app"]["launchTime"], 0);
    rm.stop().await;

    // Back ten minutes later by the wall clock.
    tokio::time::advance(Duration::from_secs(600)).await;
    let rm = rm_after(&dir, 643_000);
    let after_done = seen(&rm, &done).await;
    let after_killed = seen(&rm, &killed).await;
    assert_eq!(after_done.0, before_done.0);
    assert_eq!(after_done.1, before_done.1);
    assert_eq!(after_done.2, before_done.2);
    assert_eq!(after_killed, before_killed);
    // What the report showed, in full.
    expect![[r#"{"app":{"id":"application_1700000000000_0001","user":"alice","name":"job","queue":"root.a","state":"FINISHED","finalStatus":"SUCCEEDED","progress":100.0,"trackingUI":"History","trackingUrl":"http://history/alice","diagnostics":"all done","clusterId":1700000000000,"applicationType":"YARN","applicationTags":"","priority":0,"startedTime":1700000005000,"launchTime":1700000005000,"finishedTime":1700000040000,"elapsedTime":35000,"amContainerLogs":"","amHostHttpAddress":"","amRPCAddress":"alice-am:4040","allocatedMB":0,"allocatedVCores":0,"reservedMB":0,"reservedVCores":0,"runningContainers":0,"memorySeconds":97280,"vcoreSeconds":65,"queueUsagePercentage":0.0,"clusterUsagePercentage":0.0,"preemptedResourceMB":0,"preemptedResourceVCores":0,"numNonAMContainerPreempted":0,"numAMContainerPreempted":0,"logAggregationStatus":"DISABLED","unmanagedApplication":false,"appNodeLabelExpression":"","amNodeLabelExpression":"","pendingMB":0,"pendingVCores":0,"fairShareMB":0,"timeouts":{"timeout":[{"type":"LIFETIME","expiryTime":"UNLIMITED","remainingTimeInSeconds":-1}]}}}"#]].assert_eq(&after_done.0);
    expect![[r#"{"appAttempts":{"appAttempt":[{"id":1,"appAttemptId":"appattempt_1700000000000_0002_000001","startTime":1700000037000,"finishedTime":1700000041000,"containerId":"container_1700000000000_0002_01_000001","nodeHttpAddress":"h1:8042","nodeId":"h1:8041","logsLink":"","blacklistedNodes":"","appAttemptState":"KILLED","diagnosticsInfo":"killed by user bob"}]}}"#]].assert_eq(&after_killed.1);

    // Ages read from a clock that starts far above zero are still ages.
    rm.register("h1:8041", 8192, 8).await;
    tokio::time::advance(Duration::from_secs(3)).await;
    let metrics = get(&rm.router, "/metrics").await.body;
    let gauge = |name: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {name} in {metrics}"))
            .parse()
            .unwrap()
    };
    assert_eq!(gauge("weft_cluster_node_heartbeat_max_age_seconds"), 3.0);
    assert!(gauge("weft_scheduler_snapshot_age_seconds") <= 3.0);
    // And the decision log writes wall-clock times.
    let log = std::fs::read_to_string(dir.path("events.jsonl")).unwrap();
    let added: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "NodeAdded")
        .collect();
    assert_eq!(added.len(), 2, "{log}");
    assert_eq!(added[1]["time"], testing::EPOCH + 643_000);

    // The live app keeps its submission and launch times.
    let live_after = get(&rm.router, &format!("/ws/v1/cluster/apps/{live}"))
        .await
        .json();
    for field in ["startedTime", "launchTime", "finishedTime"] {
        assert_eq!(
            live_after["app"][field], live_before["app"][field],
            "{field}"
        );
    }
    assert_eq!(live_after["app"]["state"], "ACCEPTED");

    // The list's filters find the apps taken back.
    let r = "/ws/v1/cluster/apps";
    assert_eq!(
        listed(&rm, "?states=FINISHED").await,
        std::slice::from_ref(&done)
    );
    assert_eq!(
        listed(&rm, "?states=KILLED").await,
        std::slice::from_ref(&killed)
    );
    assert_eq!(
        listed(&rm, "?user=bob").await,
        std::slice::from_ref(&killed)
    );
    let finished_at = serde_json::from_str::<Value>(&after_done.0).unwrap()["app"]["finishedTime"]
        .as_u64()
        .unwrap();
    assert_eq!(
        listed(&rm, &format!("?finishedTimeBegin={finished_at}")).await,
        [done.clone(), killed.clone()]
    );
    assert_eq!(
        listed(&rm, &format!("?finishedTimeBegin={}", finished_at + 1)).await,
        std::slice::from_ref(&killed)
    );
    let page = get(&rm.router, "/cluster/apps?states=FINISHED,KILLED").await;
    assert!(
        page.body.contains(&done) && page.body.contains(&killed),
        "{}",
        page.body
    );
    let m = get(&rm.router, "/ws/v1/cluster/metrics").await.json();
    assert_eq!(
        (
            &m["clusterMetrics"]["appsCompleted"],
            &m["clusterMetrics"]["appsKilled"]
        ),
        (&json!(1), &json!(1))
    );

    // New ids carry the new cluster id, and the clock's reach into the
    // past does not move it.
    let info = get(&rm.router, "/ws/v1/cluster/info").await.json();
    let cluster = testing::EPOCH + 643_000;
    assert_eq!(info["clusterInfo"]["id"], cluster);
    assert_eq!(info["clusterInfo"]["startedOn"], cluster);
    let new = rm.new_app("alice").await;
    assert_eq!(new, format!("application_{cluster}_0001"));
    let a = rm.submit_to("alice", &new, "a").await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    assert_eq!(listed(&rm, "?states=FINISHED,KILLED").await.len(), 2);
    assert_eq!(
        get(&rm.router, r).await.json()["apps"]["app"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    rm.stop().await;

    // And once more: taken back, they are kept for the next start too.
    let rm = rm_after(&dir, 700_000);
    assert_eq!(seen(&rm, &done).await, before_done);
    assert_eq!(seen(&rm, &killed).await, before_killed);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn only_the_newest_ended_apps_are_kept_and_history_trims_them_in_finish_order() {
    let dir = TestDir::new("history-limit");
    let state = dir.path("state").display().to_string();
    let site = [
        ("weft.rm.state-store.dir", state.as_str()),
        ("yarn.resourcemanager.max-completed-applications", "3"),
        (
            "yarn.resourcemanager.state-store.max-completed-applications",
            "2",
        ),
    ];
    let service = testing::service_at(&site, testing::EPOCH);
    let rm = Rm::around(service);
    let mut apps = Vec::new();
    for _ in 0..3 {
        let app = rm.submit("alice", "a").await;
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(rm.kill(&app, "alice").await.status, StatusCode::OK);
        apps.push(app);
    }
    assert_eq!(listed(&rm, "?states=KILLED").await, apps);
    rm.stop().await;

    let service = testing::service_at(&site, testing::EPOCH + 60_000);
    let rm = Rm::around(service);
    assert_eq!(listed(&rm, "?states=KILLED").await, &apps[1..]);
    // Two apps ending now make room by dropping the earliest first.
    for _ in 0..2 {
        let app = rm.submit("alice", "a").await;
        assert_eq!(rm.kill(&app, "alice").await.status, StatusCode::OK);
        apps.push(app);
    }
    assert_eq!(listed(&rm, "?states=KILLED").await, &apps[2..]);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_file_from_before_ended_apps_were_kept_loads_and_keeps_a_torn_line_aside() {
    let dir = TestDir::new("history-old");
    std::fs::create_dir_all(dir.path("state")).unwrap();
    let submitted = |seq: u32| {
        format!(
            r#"{{"record":"submitted","app":"application_{}_{seq:04}","user":"alice","name":"old","appType":"YARN","queue":"root.a"}}"#,
            testing::EPOCH
        )
    };
    let text = [
        submitted(1),
        submitted(2),
        submitted(3),
        format!(
            r#"{{"record":"amAllocated","container":"container_{}_0002_01_000001"}}"#,
            testing::EPOCH
        ),
        format!(
            r#"{{"record":"ended","app":"application_{}_0001"}}"#,
            testing::EPOCH
        ),
        format!(
            r#"{{"record":"ended","app":"application_{}_0003","report":{{"user":"alice","na"#,
            testing::EPOCH
        ),
    ]
    .join("\n");
    std::fs::write(dir.path("state").join(STATE_FILE_NAME), &text).unwrap();
    let rm = rm_after(&dir, 60_000);
    let app = |seq: u32| format!("application_{}_{seq:04}", testing::EPOCH);
    // The old ended line forgets its app, as before; the torn one is
    // skipped, so its app is still alive.
    assert_eq!(
        get(&rm.router, &format!("/ws/v1/cluster/apps/{}", app(1)))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    for seq in [2, 3] {
        let v = get(&rm.router, &format!("/ws/v1/cluster/apps/{}", app(seq)))
            .await
            .json();
        assert_eq!(v["app"]["state"], "ACCEPTED");
        // No submission time was kept: it counts from its recovery.
        assert_eq!(v["app"]["startedTime"], testing::EPOCH + 60_000);
    }
    assert_eq!(
        std::fs::read_to_string(dir.path("state").join(SKIPPED_FILE_NAME)).unwrap(),
        format!("{}\n", text.lines().last().unwrap())
    );
    let new = rm.new_app("alice").await;
    assert_eq!(new, format!("application_{}_0001", testing::EPOCH + 60_000));
    // App 2's node brings its AM container back: that launches it.
    tokio::time::advance(Duration::from_secs(2)).await;
    let a = post(
        &rm.router,
        "/ws/v1/nm/register",
        json!({"nodeId": "h1:8041", "capability": {"memory": 8192, "vCores": 8},
               "containers": [{"containerId": format!("container_{}_0002_01_000001", testing::EPOCH),
                               "resource": {"memory": 1024, "vCores": 1}}]}),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let times = async |rm: &Rm| {
        let v = get(&rm.router, &format!("/ws/v1/cluster/apps/{}", app(2)))
            .await
            .json();
        (
            v["app"]["startedTime"].clone(),
            v["app"]["launchTime"].clone(),
        )
    };
    let first = times(&rm).await;
    assert_eq!(
        first,
        (
            json!(testing::EPOCH + 60_000),
            json!(testing::EPOCH + 62_000)
        )
    );
    rm.stop().await;
    // The times this start gave it are kept for the next.
    let rm = rm_after(&dir, 120_000);
    assert_eq!(times(&rm).await, first);
    rm.stop().await;
}
