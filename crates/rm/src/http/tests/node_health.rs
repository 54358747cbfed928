//! Router tests of unhealthy nodes: a heartbeat whose `nodeHealthStatus`
//! says the node is unfit makes it `UNHEALTHY` with its report in the nodes
//! view, its containers are stopped with `NODE_UNHEALTHY` in the answer,
//! it takes no container, the metrics count it, and a healthy heartbeat
//! puts it back.

use super::*;

/// A heartbeat of `node` with a health status (`None`: the field absent).
async fn heartbeat_health(rm: &Rm, node: &str, response_id: u64, report: Option<&str>) -> Value {
    let mut body = json!({"nodeId": node, "responseId": response_id, "containers": []});
    if let Some(report) = report {
        body["nodeHealthStatus"] = json!({"isNodeHealthy": false, "healthReport": report});
    }
    let a = post(&rm.router, "/ws/v1/nm/heartbeat", body).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.json()
}

/// Each node of a nodes list as `id state report`, one per line.
async fn nodes_in(rm: &Rm, query: &str) -> String {
    let v = get(&rm.router, &format!("/ws/v1/cluster/nodes{query}"))
        .await
        .json();
    let mut out = String::new();
    for n in v["nodes"]["node"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "{} {} {:?}\n",
            n["id"].as_str().unwrap(),
            n["state"].as_str().unwrap(),
            n["healthReport"].as_str().unwrap()
        ));
    }
    out
}

#[tokio::test(start_paused = true)]
async fn an_unhealthy_node_leaves_the_scheduler_and_comes_back_when_healthy() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let am = get(r, &format!("/ws/v1/cluster/apps/{app}/appattempts"))
        .await
        .json()["appAttempts"]["appAttempt"][0]["containerId"]
        .as_str()
        .unwrap()
        .to_owned();

    let answer = heartbeat_health(&rm, "h1:8041", 1, Some("ERROR /data1 is full")).await;
    assert_eq!(
        answer["containersToStop"],
        json!([{"containerId": am, "reason": "NODE_UNHEALTHY"}])
    );
    assert_eq!(answer["allocatedContainers"], json!([]));
    assert_eq!(
        nodes_in(&rm, "?states=UNHEALTHY").await,
        "h1:8041 UNHEALTHY \"ERROR /data1 is full\"\n"
    );
    assert_eq!(
        nodes_in(&rm, "").await,
        "h1:8041 UNHEALTHY \"ERROR /data1 is full\"\nh2:8041 RUNNING \"\"\n"
    );
    let m = &get(r, "/ws/v1/cluster/metrics").await.json()["clusterMetrics"];
    assert_eq!(
        (&m["unhealthyNodes"], &m["activeNodes"], &m["totalNodes"]),
        (&json!(1), &json!(1), &json!(2)),
        "{m}"
    );
    let text = get(r, "/metrics").await.body;
    assert_eq!(
        metric(&text, r#"weft_cluster_nodes{state="unhealthy"}"#),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        metric(&text, r#"weft_cluster_nodes{state="running"}"#),
        Some(1.0),
        "{text}"
    );

    // Still unhealthy: another app's AM does not land on it.
    rm.submit("bob", "b").await;
    let answer = heartbeat_health(&rm, "h1:8041", 2, Some("ERROR /data1 is full")).await;
    assert_eq!(answer["allocatedContainers"], json!([]));
    assert_eq!(answer["containersToStop"], json!([]));

    // A heartbeat without the field is a healthy one.
    let answer = heartbeat_health(&rm, "h1:8041", 3, None).await;
    assert_eq!(nodes_in(&rm, "?states=UNHEALTHY").await, "");
    assert_eq!(
        nodes_in(&rm, "?states=RUNNING").await,
        "h1:8041 RUNNING \"\"\nh2:8041 RUNNING \"\"\n"
    );
    // It takes work again: the waiting AMs land on it.
    assert_ne!(answer["allocatedContainers"], json!([]), "{answer}");
    let m = &get(r, "/ws/v1/cluster/metrics").await.json()["clusterMetrics"];
    assert_eq!(
        (&m["unhealthyNodes"], &m["activeNodes"], &m["totalNodes"]),
        (&json!(0), &json!(2), &json!(2)),
        "{m}"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_healthy_status_or_an_empty_report_is_read_sensibly() {
    let rm = Rm::new();
    rm.register("h1:8041", 8192, 8).await;
    // `isNodeHealthy: true` is the same as no status at all.
    let a = post(
        &rm.router,
        "/ws/v1/nm/heartbeat",
        json!({"nodeId": "h1:8041", "responseId": 0, "containers": [],
               "nodeHealthStatus": {"isNodeHealthy": true, "healthReport": "fine"}}),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(nodes_in(&rm, "").await, "h1:8041 RUNNING \"\"\n");
    // Unhealthy without words still says something.
    heartbeat_health(&rm, "h1:8041", 1, Some("  ")).await;
    assert_eq!(
        nodes_in(&rm, "").await,
        "h1:8041 UNHEALTHY \"the node reports itself unhealthy, without saying why\"\n"
    );
    rm.stop().await;
}

/// An unhealthy node the exclude list now names is decommissioned, by a
/// graceful refresh too: it has nothing to drain.
#[tokio::test(start_paused = true)]
async fn an_excluded_unhealthy_node_is_decommissioned() {
    let dir = std::env::temp_dir().join(format!("weft-health-hosts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exclude = dir.join("nodes.exclude");
    std::fs::write(&exclude, "").unwrap();
    let rm = Rm::with(&[(
        "yarn.resourcemanager.nodes.exclude-path",
        &exclude.display().to_string(),
    )]);
    rm.register("h1:8041", 8192, 8).await;
    heartbeat_health(&rm, "h1:8041", 0, Some("ERROR fan failure")).await;
    std::fs::write(&exclude, "h1\n").unwrap();
    let a = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/refresh-nodes?user.name=yarn",
        Some("application/json"),
        r#"{"graceful": true}"#,
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let change = &a.json()["refreshNodes"]["changes"][0];
    assert_eq!(
        (&change["previousState"], &change["state"]),
        (&json!("UNHEALTHY"), &json!("DECOMMISSIONED")),
        "{change}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    rm.stop().await;
}
