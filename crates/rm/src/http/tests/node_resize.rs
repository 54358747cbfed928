//! Router tests of resizing a node (`POST /ws/v1/cluster/nodes/{id}/resource`,
//! Hadoop's `updateNodeResource`): growing, shrinking below what the
//! node's containers hold (over-committed: it offers what they hold and
//! the views show it), the over-commit timeout in Hadoop's milliseconds,
//! Hadoop's wrapped and unwrapped bodies, bad bodies and sizes, unknown and
//! decommissioned nodes, and the admin ACL.

use std::time::Duration;

use super::*;

const URI: &str = "/ws/v1/cluster/nodes/h1:8041/resource?user.name=yarn";

async fn resize(rm: &Rm, body: Value) -> Answer {
    post(&rm.router, URI, body).await
}

/// `{"resourceOption": ...}` asking for `memory` MB and `vcores`, with
/// `timeout` milliseconds when given.
fn option(memory: u64, vcores: u64, timeout: Option<i64>) -> Value {
    let mut o = json!({"resource": {"memory": memory, "vCores": vcores}});
    if let Some(t) = timeout {
        o["overCommitTimeout"] = json!(t);
    }
    json!({ "resourceOption": o })
}

/// The node's `totalResource` and `usedResource` as `total / used`.
async fn sizes(rm: &Rm) -> String {
    let a = get(&rm.router, "/ws/v1/cluster/nodes/h1:8041").await;
    let n = &a.json()["node"];
    format!(
        "{}mb,{}vc / {}mb,{}vc",
        n["totalResource"]["memory"],
        n["totalResource"]["vCores"],
        n["usedResource"]["memory"],
        n["usedResource"]["vCores"]
    )
}

/// A 4 GB, 4-vcore node h1 holding an AM and two more 1 GB containers
/// (3 GB, 3 vcores); the app's id.
async fn three_containers(rm: &Rm) -> String {
    assert_eq!(rm.register("h1:8041", 4096, 4).await.status, StatusCode::OK);
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*", "capability": {"memory": 1024, "vCores": 1}, "numContainers": 2}]});
    assert_eq!(rm.allocate(&app, ask).await.status, StatusCode::OK);
    for id in 1..=2 {
        rm.heartbeat("h1:8041", id, json!([])).await;
    }
    assert_eq!(sizes(rm).await, "4096mb,4vc / 3072mb,3vc");
    app
}

#[tokio::test(start_paused = true)]
async fn a_node_grows_and_shrinks_below_what_its_containers_hold() {
    let rm = Rm::new();
    three_containers(&rm).await;

    let a = resize(&rm, option(8192, 8, None)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    expect![[r#"{"resourceInfo":{"memory":8192,"vCores":8,"capability":{"memory":8192,"vCores":8},"overcommitted":false}}"#]]
        .assert_eq(&a.body);
    assert_eq!(sizes(&rm).await, "8192mb,8vc / 3072mb,3vc");
    let metrics = get(&rm.router, "/ws/v1/cluster/metrics").await.json();
    assert_eq!(metrics["clusterMetrics"]["totalMB"], 8192);

    // Below the 3 GB its containers hold: over-committed, offering what
    // they hold (the larger of that and the new size, type by type).
    let a = resize(&rm, option(2048, 4, Some(-1))).await;
    expect![[r#"{"resourceInfo":{"memory":3072,"vCores":4,"capability":{"memory":2048,"vCores":4},"overcommitted":true}}"#]]
        .assert_eq(&a.body);
    assert_eq!(sizes(&rm).await, "3072mb,4vc / 3072mb,3vc");
    let n = get(&rm.router, "/ws/v1/cluster/nodes/h1:8041").await.json();
    assert_eq!(n["node"]["availMemoryMB"], 0);

    // Hadoop's clients send the option unwrapped; XML always is.
    let a = resize(
        &rm,
        json!({"resource": {"memory": 4096, "vCores": 4, "resourceInformations": {}}, "overCommitTimeout": -1}),
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.json()["resourceInfo"]["memory"], 4096);
    let xml = "<resourceOption><resource><memory>2048</memory><vCores>4</vCores></resource><overCommitTimeout>-1</overCommitTimeout></resourceOption>";
    let a = call(
        &rm.router,
        Method::POST,
        URI,
        Some("application/xml"),
        xml,
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(
        a.body
            .contains("<resourceInfo><memory>3072</memory><vCores>4</vCores>"),
        "{}",
        a.body
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_overcommit_timeout_is_hadoops_milliseconds_and_stops_the_newest() {
    let rm = Rm::new();
    let app = three_containers(&rm).await;
    let a = resize(&rm, option(2048, 4, Some(30_000))).await;
    expect![[r#"{"resourceInfo":{"memory":3072,"vCores":4,"capability":{"memory":2048,"vCores":4},"overcommitted":true,"overCommitTimeout":30000}}"#]]
        .assert_eq(&a.body);
    tokio::time::sleep(Duration::from_secs(29)).await;
    let hb = rm.heartbeat("h1:8041", 3, json!([])).await.json();
    assert_eq!(hb["containersToStop"], json!([]), "{hb}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let hb = rm.heartbeat("h1:8041", 4, json!([])).await.json();
    // The newest container past the new size, and no more.
    assert_eq!(
        hb["containersToStop"],
        json!([{"containerId": format!("container_{}_01_000003", &app["application_".len()..]), "reason": "NO_ROOM"}]),
        "{hb}"
    );
    assert_eq!(sizes(&rm).await, "2048mb,4vc / 2048mb,2vc");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn bad_bodies_sizes_and_nodes_are_refused_naming_what_is_wrong() {
    let rm = Rm::new();
    three_containers(&rm).await;
    let mut out = String::new();
    for body in [
        json!({}),
        json!({"resourceOption": {}}),
        json!({"resourceOption": {"resource": {"vCores": 2}}}),
        json!({"resourceOption": {"resource": {"memory": -1, "vCores": 2}}}),
        json!({"resourceOption": {"resource": {"memory": 1.5, "vCores": 2}}}),
        json!({"resourceOption": {"resource": {"memory": "lots", "vCores": 2}}}),
        json!({"resource": {"memory": 2048, "vCores": 2}, "overCommitTimeout": -5}),
        json!({"resourceOption": {"resource": {"memory": 2048, "vCores": 2}, "overCommitTimeout": 2_147_483_648_i64}}),
        json!({"resourceOption": {"resource": {"memory": 2048, "vCores": 2}}, "overCommitTimeout": 5}),
        json!({"resourceOption": {"resource": {"memory": 2048, "vCores": 2, "gpus": 1}}}),
        json!({"resourceOption": {"resource": {"memory": 0, "vCores": 2}}}),
        json!({"resourceOption": {"resource": {"memory": 512, "vCores": 2}}}),
    ] {
        let a = resize(&rm, body.clone()).await;
        out.push_str(&format!("{body}\n  {}\n", a.error()));
    }
    let empty = call(
        &rm.router,
        Method::POST,
        URI,
        Some("application/json"),
        "",
        &[],
    )
    .await;
    out.push_str(&format!("(no body)\n  {}\n", empty.error()));
    let unknown = post(
        &rm.router,
        "/ws/v1/cluster/nodes/h9:8041/resource?user.name=yarn",
        option(2048, 2, None),
    )
    .await;
    out.push_str(&format!("h9:8041\n  {}\n", unknown.error()));
    let malformed = post(
        &rm.router,
        "/ws/v1/cluster/nodes/h1/resource?user.name=yarn",
        option(2048, 2, None),
    )
    .await;
    out.push_str(&format!("h1\n  {}\n", malformed.error()));
    expect![[r#"
        {}
          400 BadRequestException: resource: is missing: send the new size as {"memory": MB, "vCores": N}
        {"resourceOption":{}}
          400 BadRequestException: resourceOption.resource: is missing: send the new size as {"memory": MB, "vCores": N}
        {"resourceOption":{"resource":{"vCores":2}}}
          400 BadRequestException: resourceOption.resource.memory: is missing
        {"resourceOption":{"resource":{"memory":-1,"vCores":2}}}
          400 BadRequestException: resourceOption.resource.memory: is -1: a size cannot be negative
        {"resourceOption":{"resource":{"memory":1.5,"vCores":2}}}
          400 BadRequestException: resourceOption.resource.memory: is not a whole number (send an integer such as 4096)
        {"resourceOption":{"resource":{"memory":"lots","vCores":2}}}
          400 BadRequestException: resourceOption.resource.memory: "lots" is not a whole number (send an integer such as 4096)
        {"overCommitTimeout":-5,"resource":{"memory":2048,"vCores":2}}
          400 BadRequestException: overCommitTimeout: is -5: send milliseconds from 0 to 2147483647, or -1 (or nothing) for no timeout
        {"resourceOption":{"overCommitTimeout":2147483648,"resource":{"memory":2048,"vCores":2}}}
          400 BadRequestException: resourceOption.overCommitTimeout: is 2147483648: send milliseconds from 0 to 2147483647, or -1 (or nothing) for no timeout
        {"overCommitTimeout":5,"resourceOption":{"resource":{"memory":2048,"vCores":2}}}
          400 BadRequestException: resourceOption: send the resource option either wrapped in resourceOption or as resource and overCommitTimeout at the top, not both
        {"resourceOption":{"resource":{"gpus":1,"memory":2048,"vCores":2}}}
          400 BadRequestException: the JSON body does not match the expected fields: unknown field `gpus`, expected one of `memory`, `vCores`, `resourceInformations` at line 1 column 37
        {"resourceOption":{"resource":{"memory":0,"vCores":2}}}
          400 BadRequestException: resourceOption.resource: node h1:8041 offers <memory:0, vCores:2>, which is not a usable capability: a node must offer at least the minimum allocation of memory and vcores
        {"resourceOption":{"resource":{"memory":512,"vCores":2}}}
          400 BadRequestException: resourceOption.resource: node h1:8041 offers <memory:512, vCores:2>, which is not a usable capability: a node must offer at least the minimum allocation of memory and vcores
        (no body)
          400 BadRequestException: the request body is empty
        h9:8041
          404 NotFoundException: node h9:8041 is not registered; register it first
        h1
          400 BadRequestException: invalid node id "h1": expected host:port
    "#]].assert_eq(&out);
    // Nothing refused changed the node.
    assert_eq!(sizes(&rm).await, "4096mb,4vc / 3072mb,3vc");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn resizing_is_for_admins() {
    let rm = Rm::new();
    rm.register("h1:8041", 4096, 4).await;
    let body = option(2048, 2, None).to_string();
    let anonymous = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/nodes/h1:8041/resource",
        Some("application/json"),
        &body,
        &[],
    )
    .await;
    assert_eq!(
        anonymous.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        anonymous.body
    );
    let alice = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/nodes/h1:8041/resource?user.name=alice",
        Some("application/json"),
        &body,
        &[],
    )
    .await;
    assert_eq!(
        alice.error(),
        "403 ForbiddenException: user alice is not a cluster administrator (yarn.admin.acl) and may not resize node h1:8041"
    );
    assert_eq!(sizes(&rm).await, "4096mb,4vc / 0mb,0vc");
    rm.stop().await;
}
