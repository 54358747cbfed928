//! Router tests of node utilization: what nodes report they use reaches
//! the node reports (`resourceUtilization`, zeros until a node reports, as
//! Hadoop writes it), `clusterMetrics`' utilized percentages (scaled to
//! what each node offers, over the nodes that reported), the `/jmx`
//! `ClusterMetrics` bean, the Prometheus gauges and the web UI; bad figures are a 400 naming the field, and
//! heartbeats without them stay valid.

use super::*;

/// A heartbeat of `node` carrying `node_u` and `containers_u` (JSON
/// `ResourceUtilization`s; `Value::Null` leaves the field out).
async fn heartbeat_using(
    rm: &Rm,
    node: &str,
    response_id: u64,
    node_u: Value,
    containers_u: Value,
) -> Answer {
    let mut body = json!({"nodeId": node, "responseId": response_id, "containers": []});
    if !node_u.is_null() {
        body["nodeUtilization"] = node_u;
    }
    if !containers_u.is_null() {
        body["containersUtilization"] = containers_u;
    }
    post(&rm.router, "/ws/v1/nm/heartbeat", body).await
}

/// Registers `node` offering `memory` MB and `vcores`, on a machine of
/// `physical` (`Value::Null`: the node does not say).
async fn register_on(rm: &Rm, node: &str, memory: u64, vcores: u64, physical: Value) {
    let mut body =
        json!({"nodeId": node, "rack": "/r1", "capability": {"memory": memory, "vCores": vcores}});
    if !physical.is_null() {
        body["physicalResource"] = physical;
    }
    let a = post(&rm.router, "/ws/v1/nm/register", body).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

fn utilization_of(v: &Value) -> String {
    v["resourceUtilization"].to_string()
}

#[tokio::test(start_paused = true)]
async fn reported_use_reaches_the_node_reports_and_cluster_metrics() {
    let rm = Rm::new();
    let r = &rm.router;
    // h1: a 64 GB, 16-processor machine offering 8 GB and 8 vcores.
    register_on(
        &rm,
        "h1:8041",
        8192,
        8,
        json!({"memory": 65536, "vCores": 16}),
    )
    .await;
    // h2 runs an older agent: it never reports.
    register_on(&rm, "h2:8041", 8192, 8, Value::Null).await;

    // Before any report: zeros, as Hadoop writes them, and 0 %.
    let n = get(r, "/ws/v1/cluster/nodes/h1:8041").await.json();
    expect![[r#"{"aggregatedContainersPhysicalMemoryMB":0,"aggregatedContainersVirtualMemoryMB":0,"containersCPUUsage":0.0,"nodeCPUUsage":0.0,"nodePhysicalMemoryMB":0,"nodeVirtualMemoryMB":0}"#]]
        .assert_eq(&utilization_of(&n["node"]));
    let m = get(r, "/ws/v1/cluster/metrics").await.json();
    assert_eq!(
        (
            &m["clusterMetrics"]["utilizedMBPercent"],
            &m["clusterMetrics"]["utilizedVirtualCoresPercent"]
        ),
        (&json!(0), &json!(0))
    );

    let a = heartbeat_using(
        &rm,
        "h1:8041",
        0,
        json!({"pmem": 16384, "vmem": 40000, "cpu": 4.0}),
        json!({"pmem": 1024, "vmem": 3000, "cpu": 0.5}),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let a = heartbeat_using(&rm, "h2:8041", 0, Value::Null, Value::Null).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);

    let n = get(r, "/ws/v1/cluster/nodes/h1:8041").await.json();
    expect![[r#"{"aggregatedContainersPhysicalMemoryMB":1024,"aggregatedContainersVirtualMemoryMB":3000,"containersCPUUsage":0.5,"nodeCPUUsage":4.0,"nodePhysicalMemoryMB":16384,"nodeVirtualMemoryMB":40000}"#]]
        .assert_eq(&utilization_of(&n["node"]));
    let list = get(r, "/ws/v1/cluster/nodes").await.json();
    assert_eq!(
        list["nodes"]["node"][1]["resourceUtilization"]["nodePhysicalMemoryMB"], 0,
        "h2 never reported"
    );
    // h1 uses a quarter of its machine: 2048 of the 8192 MB and 2 of the 8
    // vcores it offers; against the cluster's 16384 MB and 16 vcores that
    // is 12 % of the memory and 12 % of the vcores (truncated).
    let m = get(r, "/ws/v1/cluster/metrics").await.json();
    assert_eq!(
        (
            &m["clusterMetrics"]["utilizedMBPercent"],
            &m["clusterMetrics"]["utilizedVirtualCoresPercent"]
        ),
        (&json!(12), &json!(12))
    );

    // Hadoop's ClusterMetrics bean has the same scaled figures.
    let jmx = get(
        r,
        "/jmx?qry=Hadoop:service=ResourceManager,name=ClusterMetrics",
    )
    .await
    .json();
    let bean = &jmx["beans"][0];
    assert_eq!(
        (&bean["UtilizedMB"], &bean["UtilizedVirtualCores"]),
        (&json!(2048), &json!(2)),
        "{bean}"
    );

    // A heartbeat without the fields keeps the last figures.
    let a = heartbeat_using(&rm, "h1:8041", 1, Value::Null, Value::Null).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let n = get(r, "/ws/v1/cluster/nodes/h1:8041").await.json();
    assert_eq!(n["node"]["resourceUtilization"]["nodeCPUUsage"], 4.0);

    // XML has Hadoop's element names.
    let x = call(
        r,
        Method::GET,
        "/ws/v1/cluster/nodes/h1:8041",
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert!(
        x.body
            .contains("<resourceUtilization><nodePhysicalMemoryMB>16384</nodePhysicalMemoryMB>"),
        "{}",
        x.body
    );

    // Prometheus: cluster totals only.
    let p = get(r, "/metrics").await.body;
    for line in [
        "weft_cluster_utilization_reporting_nodes 1",
        "weft_cluster_node_used_memory_bytes 17179869184",
        "weft_cluster_node_used_cpu_cores 4",
        "weft_cluster_containers_used_memory_bytes 1073741824",
        "weft_cluster_containers_used_cpu_cores 0.5",
    ] {
        assert!(p.lines().any(|l| l == line), "missing {line:?} in\n{p}");
    }

    // The web UI shows the containers' use in the list, both on the node's page.
    let page = get(r, "/cluster/nodes").await.body;
    assert!(page.contains("1.0 GB / 0.50"), "{page}");
    assert!(page.contains("not reported"), "h2: {page}");
    let page = get(r, "/cluster/node/h1:8041").await.body;
    assert!(page.contains("16.0 GB / 4.00"), "{page}");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_lost_node_no_longer_counts() {
    let rm = Rm::new();
    let r = &rm.router;
    register_on(&rm, "h1:8041", 4096, 4, Value::Null).await;
    let a = heartbeat_using(
        &rm,
        "h1:8041",
        0,
        json!({"pmem": 2048, "vmem": 4096, "cpu": 2.0}),
        Value::Null,
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let m = get(r, "/ws/v1/cluster/metrics").await.json();
    assert_eq!(m["clusterMetrics"]["utilizedMBPercent"], 50);
    assert_eq!(m["clusterMetrics"]["utilizedVirtualCoresPercent"], 50);
    // Silent past the liveness expiry: lost.
    tokio::time::sleep(std::time::Duration::from_secs(700)).await;
    let n = get(r, "/ws/v1/cluster/nodes/h1:8041").await.json();
    assert_eq!(n["node"]["state"], "LOST");
    let p = get(r, "/metrics").await.body;
    assert!(
        p.lines()
            .any(|l| l == "weft_cluster_utilization_reporting_nodes 0"),
        "{p}"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn bad_figures_are_refused_naming_the_field() {
    let rm = Rm::new();
    register_on(&rm, "h1:8041", 4096, 4, Value::Null).await;
    let ok = json!({"pmem": 1, "vmem": 1, "cpu": 0.0});
    for (node_u, containers_u, want) in [
        (
            json!({"pmem": -1, "vmem": 1, "cpu": 0.1}),
            Value::Null,
            "400 BadRequestException: nodeUtilization.pmem: -1 MB is not a measurement of memory in use; expected 0 to 1099511627776",
        ),
        (
            ok.clone(),
            json!({"pmem": 1, "vmem": 2199023255552i64, "cpu": 0.1}),
            "400 BadRequestException: containersUtilization.vmem: 2199023255552 MB is not a measurement of memory in use; expected 0 to 1099511627776",
        ),
        (
            json!({"pmem": 1, "vmem": 1, "cpu": -0.5}),
            Value::Null,
            "400 BadRequestException: nodeUtilization.cpu: -0.5 is not a measurement of processors in use; expected 0 to 1048576",
        ),
        (
            ok.clone(),
            json!({"pmem": 1, "vmem": 1, "cpu": 1e300}),
            "400 BadRequestException: containersUtilization.cpu: 1e300 is not a measurement of processors in use; expected 0 to 1048576",
        ),
    ] {
        let a = heartbeat_using(&rm, "h1:8041", 0, node_u, containers_u).await;
        assert_eq!(a.error(), want);
    }
    // Not a number at all: still a 400, never a 500.
    let a = post(
        &rm.router,
        "/ws/v1/nm/heartbeat",
        json!({"nodeId": "h1:8041", "responseId": 0, "nodeUtilization": {"pmem": "lots", "vmem": 1, "cpu": 1.0}}),
    )
    .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    // Nothing refused was kept, and the node heartbeats on.
    let a = heartbeat_using(&rm, "h1:8041", 0, ok, Value::Null).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    rm.stop().await;
}
