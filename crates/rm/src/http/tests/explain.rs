//! Router tests of `GET /ws/v1/cluster/apps/{appid}/explain`: an app held
//! back (JSON and XML, every number on the wire), one a node has room for
//! (asked of the scheduler, so a submission is explained at once), an
//! ended app, and unknown or malformed ids.

use super::*;

#[tokio::test(start_paused = true)]
async fn an_ask_no_node_can_hold_is_explained_in_json_and_xml() {
    let rm = Rm::new();
    rm.register("h1:8041", 4096, 4).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let asked = rm
        .allocate(
            &app,
            json!({"responseId": 0, "asks": [{"priority": 1, "capability": {"memory": 6144, "vCores": 1}, "numContainers": 2}]}),
        )
        .await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.body);
    let uri = format!("/ws/v1/cluster/apps/{app}/explain");
    let a = get(&rm.router, &uri).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.headers["content-type"], "application/json");
    let pretty = serde_json::to_string_pretty(&a.json()).unwrap();
    expect![[r#"
        {
          "appExplanation": {
            "appId": "application_1700000000000_0001",
            "finalStatus": "UNDEFINED",
            "outlook": "HELD_BACK",
            "queue": "root.a",
            "reason": [
              {
                "am": false,
                "asked": {
                  "memory": 6144,
                  "vCores": 1
                },
                "blocking": true,
                "capability": {
                  "memory": 6144,
                  "vCores": 1
                },
                "code": "NO_NODE_LARGE_ENOUGH",
                "containers": 2,
                "limit": {
                  "memory": 4096,
                  "vCores": 4
                },
                "message": "no node in service could hold <memory:6144, vCores:1> even when empty: the largest, h1:8041, offers <memory:4096, vCores:4>",
                "node": "h1:8041",
                "priority": 1,
                "remedy": "a smaller ask, or a node large enough joining the cluster",
                "scope": "ASK"
              }
            ],
            "state": "RUNNING",
            "summary": "waiting (ask at priority 1 for 2 × <memory:6144, vCores:1>): no node can ever hold a container of <memory:6144, vCores:1> (the largest, h1:8041, offers <memory:4096, vCores:4>)"
          }
        }"#]].assert_eq(&pretty);
    // The same with a trailing slash, and in XML.
    let slash = get(&rm.router, &format!("{uri}/")).await;
    assert_eq!(slash.body, a.body);
    let xml = call(
        &rm.router,
        Method::GET,
        &uri,
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(xml.status, StatusCode::OK);
    assert_eq!(xml.headers["content-type"], "application/xml");
    expect![[r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><appExplanation><appId>application_1700000000000_0001</appId><queue>root.a</queue><state>RUNNING</state><finalStatus>UNDEFINED</finalStatus><outlook>HELD_BACK</outlook><summary>waiting (ask at priority 1 for 2 × &lt;memory:6144, vCores:1&gt;): no node can ever hold a container of &lt;memory:6144, vCores:1&gt; (the largest, h1:8041, offers &lt;memory:4096, vCores:4&gt;)</summary><reason><scope>ASK</scope><code>NO_NODE_LARGE_ENOUGH</code><blocking>true</blocking><message>no node in service could hold &lt;memory:6144, vCores:1&gt; even when empty: the largest, h1:8041, offers &lt;memory:4096, vCores:4&gt;</message><remedy>a smaller ask, or a node large enough joining the cluster</remedy><priority>1</priority><capability><memory>6144</memory><vCores>1</vCores></capability><containers>2</containers><am>false</am><limit><memory>4096</memory><vCores>4</vCores></limit><asked><memory>6144</memory><vCores>1</vCores></asked><node>h1:8041</node></reason></appExplanation>"#]].assert_eq(&xml.body);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_submission_is_explained_at_once_and_an_ended_app_says_how_it_ended() {
    let rm = Rm::new();
    rm.register("h1:8041", 8192, 8).await;
    // Asked of the scheduler, not the published views: the app just
    // submitted is there, and a node has room for its AM.
    let app = rm.submit("bob", "b").await;
    let v = get(&rm.router, &format!("/ws/v1/cluster/apps/{app}/explain"))
        .await
        .json();
    let e = &v["appExplanation"];
    assert_eq!(e["outlook"], "SERVABLE");
    assert_eq!(e["state"], "ACCEPTED");
    assert_eq!(e["reason"][0]["code"], "ROOM");
    assert_eq!(e["reason"][0]["am"], true);
    assert_eq!(
        e["reason"][0]["location"],
        json!([{"name": "h1:8041", "type": "NODE", "state": "OFF_SWITCH"}])
    );

    let done = rm.running("alice", "a", "h1:8041", 0).await;
    let fin = rm
        .am(
            &done,
            "finish",
            json!({"finalStatus": "FAILED", "diagnostics": "out of luck"}),
        )
        .await;
    assert_eq!(fin.status, StatusCode::OK, "{}", fin.body);
    let a = get(&rm.router, &format!("/ws/v1/cluster/apps/{done}/explain")).await;
    assert_eq!(a.status, StatusCode::OK);
    expect![[r#"{"appExplanation":{"appId":"application_1700000000000_0002","queue":"root.a","state":"FINISHED","finalStatus":"FAILED","outlook":"ENDED","summary":"ended: FINISHED with final status FAILED; nothing more is allocated to it"}}"#]].assert_eq(&a.body);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn unknown_and_malformed_apps_are_refused() {
    let rm = Rm::new();
    let unknown = get(
        &rm.router,
        "/ws/v1/cluster/apps/application_1700000000000_0042/explain",
    )
    .await;
    let malformed = get(&rm.router, "/ws/v1/cluster/apps/app_42/explain").await;
    let wrong_method = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/apps/application_1700000000000_0042/explain",
        Some("application/json"),
        "{}",
        &[],
    )
    .await;
    expect![[r#"
        404 NotFoundException: application application_1700000000000_0042 is not known
        400 BadRequestException: invalid application id "app_42": expected application_<clusterTimestamp>_<sequence>
        405 NotAllowedException: POST is not allowed on /ws/v1/cluster/apps/application_1700000000000_0042/explain"#]].assert_eq(&format!(
        "{}\n{}\n{}",
        unknown.error(),
        malformed.error(),
        wrong_method.error()
    ));
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn explanations_past_the_budget_are_refused_with_when_to_retry() {
    let rm = Rm::new();
    rm.register("h1:8041", 4096, 4).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let uri = format!("/ws/v1/cluster/apps/{app}/explain");
    for _ in 0..50 {
        assert_eq!(get(&rm.router, &uri).await.status, StatusCode::OK);
    }
    let a = get(&rm.router, &uri).await;
    expect![[r#"429 WebApplicationException: more than 50 explanations a second were asked for (each tries every node on the scheduler's thread); retry in 20 ms"#]]
        .assert_eq(&a.error());
    // The app's page still shows, saying why its explanation is missing.
    let page = get(&rm.router, &format!("/cluster/app/{app}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("more than 50 explanations a second"),
        "{}",
        page.body
    );
    // The budget fills again with time.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert_eq!(get(&rm.router, &uri).await.status, StatusCode::OK);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_operator_sets_the_budget_or_turns_explanations_off() {
    let rm = Rm::with(&[("weft.rm.explain.max-per-second", "2")]);
    rm.register("h1:8041", 4096, 4).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let uri = format!("/ws/v1/cluster/apps/{app}/explain");
    for _ in 0..2 {
        assert_eq!(get(&rm.router, &uri).await.status, StatusCode::OK);
    }
    expect![[r#"429 WebApplicationException: more than 2 explanations a second were asked for (each tries every node on the scheduler's thread); retry in 500 ms"#]]
        .assert_eq(&get(&rm.router, &uri).await.error());
    rm.stop().await;

    let rm = Rm::with(&[("weft.rm.explain.max-per-second", "0")]);
    rm.register("h1:8041", 4096, 4).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let uri = format!("/ws/v1/cluster/apps/{app}/explain");
    expect![[r#"403 ForbiddenException: explanations are turned off on this RM (weft.rm.explain.max-per-second is 0)"#]]
        .assert_eq(&get(&rm.router, &uri).await.error());
    // The app's page still shows, saying why.
    let page = get(&rm.router, &format!("/cluster/app/{app}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("explanations are turned off"),
        "{}",
        page.body
    );
    rm.stop().await;
}
