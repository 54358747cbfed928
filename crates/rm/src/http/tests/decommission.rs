//! Router tests of decommissioning: `refresh-nodes` with plain and XML
//! hosts files, forced and graceful (each source of a drain's timeout),
//! recommissioning, a bad file keeping the lists in force, registrations
//! the lists refuse (and the draining node that may come back), the
//! `SHUTDOWN` answer to a decommissioned node's heartbeat, the admin ACL,
//! and what the views and metrics show of draining nodes.

use std::time::Duration;

use super::*;

mod restart;

/// `POST refresh-nodes` as the administrator, with `body` (none when null).
async fn refresh(rm: &Rm, body: Value) -> Answer {
    let text = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/refresh-nodes?user.name=yarn",
        (!text.is_empty()).then_some("application/json"),
        &text,
        &[],
    )
    .await
}

/// A refresh's changes, one `node previous->state [timeout] (reason)` per line.
fn changes(a: &Answer) -> String {
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let v = a.json();
    let mut out = String::new();
    for c in v["refreshNodes"]["changes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        out.push_str(&format!(
            "{} {}->{}",
            c["nodeId"].as_str().unwrap(),
            c["previousState"].as_str().unwrap(),
            c["state"].as_str().unwrap()
        ));
        if let Some(t) = c.get("decommissioningTimeout") {
            out.push_str(&format!(" timeout={t}"));
        }
        out.push_str(&format!(" ({})\n", c["reason"].as_str().unwrap()));
    }
    out
}

async fn node(rm: &Rm, id: &str) -> Value {
    get(&rm.router, &format!("/ws/v1/cluster/nodes/{id}"))
        .await
        .json()["node"]
        .clone()
}

#[tokio::test(start_paused = true)]
async fn a_forced_refresh_decommissions_at_once_and_the_node_is_told_to_shut_down() {
    let dir = TestDir::new("forced");
    let exclude = dir.write("nodes.exclude", "");
    let rm = Rm::with(&[("yarn.resourcemanager.nodes.exclude-path", &exclude)]);
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    // Nothing listed: nothing changes.
    assert_eq!(changes(&refresh(&rm, Value::Null).await), "");

    dir.write("nodes.exclude", "# disk swap\nh1\n");
    let a = refresh(&rm, Value::Null).await;
    expect![[r#"
        h1:8041 RUNNING->DECOMMISSIONED (h1 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path))
    "#]]
    .assert_eq(&dir.hide(&changes(&a)));
    assert_eq!(a.json()["refreshNodes"]["graceful"], false);
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONED");
    // Its container was lost with it, and the app's attempt with it.
    let attempts = get(
        &rm.router,
        &format!("/ws/v1/cluster/apps/{app}/appattempts"),
    )
    .await
    .json();
    // The lost attempt is kept, failed, before the new one.
    let listed = &attempts["appAttempts"]["appAttempt"];
    assert_eq!(listed[0]["appAttemptState"], "FAILED");
    assert_eq!(listed[1]["id"], 2);

    // Whatever responseId it sends, its heartbeat is answered SHUTDOWN.
    for sent in [1, 0, 57] {
        let hb = rm.heartbeat("h1:8041", sent, json!([])).await;
        assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
        assert_eq!(hb.json()["responseId"], sent + 1);
        if sent == 57 {
            expect![[r#"{"responseId":58,"nodeAction":"SHUTDOWN","nextHeartbeatIntervalMs":1000,"containersToStop":[],"allocatedContainers":[],"diagnosticsMessage":"node h1:8041 was decommissioned (decommissioned by an operator); stop every container and shut down"}"#]]
                .assert_eq(&hb.body);
        }
    }
    // It may not register again while it is excluded.
    let again = rm.register("h1:8041", 8192, 8).await;
    expect![[r#"403 ForbiddenException: node h1:8041 may not join the cluster: h1 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path); change the list and run `weft rmadmin -refreshNodes` to let it in"#]]
        .assert_eq(&dir.hide(&again.error()));
    // A second refresh finds nothing more to do.
    assert_eq!(changes(&refresh(&rm, Value::Null).await), "");
    let m = get(&rm.router, "/ws/v1/cluster/metrics").await.json();
    let m = &m["clusterMetrics"];
    assert_eq!(
        (
            &m["activeNodes"],
            &m["decommissionedNodes"],
            &m["totalNodes"]
        ),
        (&json!(1), &json!(1), &json!(2))
    );

    // Taken off the list, it may register again (nothing else changes).
    dir.write("nodes.exclude", "");
    assert_eq!(changes(&refresh(&rm, Value::Null).await), "");
    assert_eq!(rm.register("h1:8041", 8192, 8).await.status, StatusCode::OK);
    assert_eq!(node(&rm, "h1:8041").await["state"], "RUNNING");
    assert_eq!(
        rm.heartbeat("h1:8041", 0, json!([])).await.json()["nodeAction"],
        "NORMAL"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_graceful_refresh_drains_with_the_timeout_of_the_file_the_request_or_the_site() {
    let dir = TestDir::new("graceful");
    let exclude = dir.write("exclude.xml", "<hosts/>");
    let rm = Rm::with(&[
        ("yarn.resourcemanager.nodes.exclude-path", &exclude),
        (
            "yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs",
            "300",
        ),
    ]);
    for n in ["h1:8041", "h2:8041", "h3:8041", "h4:8041"] {
        rm.register(n, 8192, 8).await;
    }
    rm.running("alice", "a", "h1:8041", 0).await;
    rm.running("alice", "a", "h2:8041", 0).await;
    rm.running("alice", "a", "h3:8041", 0).await;
    dir.write(
        "exclude.xml",
        r#"<?xml version="1.0"?>
<hosts>
  <host><name>h1</name><timeout>60</timeout></host>
  <host><name>h2, h4</name></host>
</hosts>"#,
    );
    // h1's timeout is the file's, h2's the request's; h4 runs nothing and
    // is decommissioned at once; h3 is not listed.
    let a = refresh(&rm, json!({"graceful": true, "timeoutSecs": 120})).await;
    expect![[r#"
        h1:8041 RUNNING->DECOMMISSIONING timeout=60 (h1 is listed in the exclude file <dir>/exclude.xml (yarn.resourcemanager.nodes.exclude-path))
        h2:8041 RUNNING->DECOMMISSIONING timeout=120 (h2 is listed in the exclude file <dir>/exclude.xml (yarn.resourcemanager.nodes.exclude-path))
        h4:8041 RUNNING->DECOMMISSIONED (h4 is listed in the exclude file <dir>/exclude.xml (yarn.resourcemanager.nodes.exclude-path))
    "#]]
    .assert_eq(&dir.hide(&changes(&a)));
    assert_eq!(a.json()["refreshNodes"]["graceful"], true);

    // The views show the drain.
    let h1 = node(&rm, "h1:8041").await;
    assert_eq!(h1["state"], "DECOMMISSIONING");
    assert_eq!(h1["decommissioningTimeout"], 60);
    assert_eq!(h1["decommissioningDeadline"], testing::EPOCH + 60_000);
    // Its capability is what its container holds: nothing is left to give.
    assert_eq!(h1["totalResource"], json!({"memory": 1024, "vCores": 1}));
    assert_eq!(h1["availableResource"], json!({"memory": 0, "vCores": 0}));
    assert_eq!(
        node(&rm, "h3:8041").await.get("decommissioningTimeout"),
        None
    );
    let draining = get(&rm.router, "/ws/v1/cluster/nodes?states=decommissioning")
        .await
        .json();
    let ids: Vec<&str> = draining["nodes"]["node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["h1:8041", "h2:8041"]);
    let m = get(&rm.router, "/ws/v1/cluster/metrics").await.json();
    let m = &m["clusterMetrics"];
    assert_eq!(
        [
            &m["activeNodes"],
            &m["decommissioningNodes"],
            &m["decommissionedNodes"],
            &m["totalNodes"]
        ],
        [&json!(1), &json!(2), &json!(1), &json!(4)]
    );
    let text = get(&rm.router, "/metrics").await.body;
    assert_eq!(
        metric(&text, r#"weft_cluster_nodes{state="decommissioning"}"#),
        Some(2.0)
    );
    assert_eq!(
        metric(&text, r#"weft_cluster_nodes{state="running"}"#),
        Some(1.0)
    );

    // Refreshed again without a timeout, h2 gets the site's default; h1
    // keeps its file's. The clock still runs from the drain's start.
    let a = refresh(&rm, json!({"graceful": true})).await;
    expect![[r#"
        h1:8041 DECOMMISSIONING->DECOMMISSIONING timeout=60 (h1 is listed in the exclude file <dir>/exclude.xml (yarn.resourcemanager.nodes.exclude-path))
        h2:8041 DECOMMISSIONING->DECOMMISSIONING timeout=300 (h2 is listed in the exclude file <dir>/exclude.xml (yarn.resourcemanager.nodes.exclude-path))
    "#]]
    .assert_eq(&dir.hide(&changes(&a)));
    assert_eq!(node(&rm, "h2:8041").await["decommissioningTimeout"], 300);

    // At h1's deadline its container is lost and it is decommissioned.
    tokio::time::sleep(Duration::from_secs(61)).await;
    let h1 = node(&rm, "h1:8041").await;
    assert_eq!(h1["state"], "DECOMMISSIONED");
    assert_eq!(h1.get("decommissioningTimeout"), None);
    assert_eq!(node(&rm, "h2:8041").await["state"], "DECOMMISSIONING");

    // A request's -1 is no timeout at all.
    let a = refresh(&rm, json!({"graceful": true, "timeoutSecs": -1})).await;
    assert!(changes(&a).starts_with("h2:8041 DECOMMISSIONING->DECOMMISSIONING timeout=-1 "));
    let h2 = node(&rm, "h2:8041").await;
    assert_eq!(h2["decommissioningTimeout"], -1);
    assert_eq!(h2.get("decommissioningDeadline"), None);
    // Not graceful, a draining node is decommissioned at once.
    let a = refresh(&rm, Value::Null).await;
    assert!(changes(&a).starts_with("h2:8041 DECOMMISSIONING->DECOMMISSIONED "));
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_draining_node_allowed_again_is_recommissioned_with_its_room() {
    let dir = TestDir::new("recommission");
    let exclude = dir.write("nodes.exclude", "h1:8041\n");
    let rm = Rm::with(&[("yarn.resourcemanager.nodes.exclude-path", &exclude)]);
    dir.write("nodes.exclude", "");
    refresh(&rm, Value::Null).await;
    rm.register("h1:8041", 8192, 8).await;
    rm.running("alice", "a", "h1:8041", 0).await;
    dir.write("nodes.exclude", "h1:8041 # only this one\n");
    let a = refresh(&rm, json!({"graceful": true})).await;
    assert!(
        changes(&a).starts_with("h1:8041 RUNNING->DECOMMISSIONING timeout=3600 (h1:8041 is listed")
    );
    assert_eq!(node(&rm, "h1:8041").await["totalResource"]["memory"], 1024);

    dir.write("nodes.exclude", "");
    let a = refresh(&rm, Value::Null).await;
    expect![[r#"
        h1:8041 DECOMMISSIONING->RUNNING (the include and exclude files allow it again)
    "#]]
    .assert_eq(&changes(&a));
    let h1 = node(&rm, "h1:8041").await;
    assert_eq!(h1["state"], "RUNNING");
    assert_eq!(h1["totalResource"], json!({"memory": 8192, "vCores": 8}));
    assert_eq!(h1.get("decommissioningTimeout"), None);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_bad_hosts_file_is_refused_and_the_lists_in_force_stay() {
    let dir = TestDir::new("bad");
    let exclude = dir.write("nodes.exclude", "h9\n");
    let rm = Rm::with(&[("yarn.resourcemanager.nodes.exclude-path", &exclude)]);
    rm.register("h1:8041", 8192, 8).await;
    dir.write("nodes.exclude", "h1\nbad/host h2:x\n");
    let a = refresh(&rm, Value::Null).await;
    expect![[r#"
        400 BadRequestException: the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path) is invalid:
          line 2, column 1: "bad/host" is not a host name or host:port (a host name has only letters, digits, '.', '-' and '_')
          line 2, column 10: "h2:x" is not host:port: the port must be a number from 0 to 65535
        (the lists in force are unchanged)"#]]
    .assert_eq(&dir.hide(&a.error()));
    // h1 was not decommissioned, and h9 is still kept out.
    assert_eq!(node(&rm, "h1:8041").await["state"], "RUNNING");
    assert_eq!(
        rm.register("h9:8041", 8192, 8).await.status,
        StatusCode::FORBIDDEN
    );
    std::fs::remove_file(dir.path("nodes.exclude")).unwrap();
    let a = refresh(&rm, Value::Null).await;
    expect![[r#"
        400 BadRequestException: cannot read the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path): No such file or directory (os error 2)
        (the lists in force are unchanged)"#]]
    .assert_eq(&dir.hide(&a.error()));
    assert_eq!(
        rm.register("h9:8041", 8192, 8).await.status,
        StatusCode::FORBIDDEN
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn registration_follows_the_include_and_exclude_lists() {
    let dir = TestDir::new("register");
    let include = dir.write("nodes.include", "h1 h2:8041 h3\n");
    let exclude = dir.write("nodes.exclude", "h3\n");
    let rm = Rm::with(&[
        ("yarn.resourcemanager.nodes.include-path", &include),
        ("yarn.resourcemanager.nodes.exclude-path", &exclude),
    ]);
    assert_eq!(rm.register("h1:1", 8192, 8).await.status, StatusCode::OK);
    assert_eq!(rm.register("h2:8041", 8192, 8).await.status, StatusCode::OK);
    let mut refused = String::new();
    for n in ["h2:9", "h3:8041", "h4:8041"] {
        refused.push_str(&dir.hide(&rm.register(n, 8192, 8).await.error()));
        refused.push('\n');
    }
    expect![[r#"
        403 ForbiddenException: node h2:9 may not join the cluster: neither h2 nor h2:9 is listed in the include file <dir>/nodes.include (yarn.resourcemanager.nodes.include-path); change the list and run `weft rmadmin -refreshNodes` to let it in
        403 ForbiddenException: node h3:8041 may not join the cluster: h3 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path); change the list and run `weft rmadmin -refreshNodes` to let it in
        403 ForbiddenException: node h4:8041 may not join the cluster: neither h4 nor h4:8041 is listed in the include file <dir>/nodes.include (yarn.resourcemanager.nodes.include-path); change the list and run `weft rmadmin -refreshNodes` to let it in
    "#]]
    .assert_eq(&refused);
    // Refused nodes are not known to the RM at all.
    assert_eq!(
        get(&rm.router, "/ws/v1/cluster/nodes/h4:8041").await.status,
        StatusCode::NOT_FOUND
    );
    // A node that leaves and is then dropped from the include list is
    // marked decommissioned by the next refresh.
    post(
        &rm.router,
        "/ws/v1/nm/unregister",
        json!({"nodeId": "h1:1"}),
    )
    .await;
    dir.write("nodes.include", "h2:8041 h3\n");
    let a = refresh(&rm, json!({"graceful": true})).await;
    expect![[r#"
        h1:1 SHUTDOWN->DECOMMISSIONED (neither h1 nor h1:1 is listed in the include file <dir>/nodes.include (yarn.resourcemanager.nodes.include-path))
    "#]]
    .assert_eq(&dir.hide(&changes(&a)));
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_draining_node_may_register_again_and_keeps_draining() {
    let dir = TestDir::new("reregister");
    let exclude = dir.write("nodes.exclude", "");
    let rm = Rm::with(&[("yarn.resourcemanager.nodes.exclude-path", &exclude)]);
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    dir.write("nodes.exclude", "h1\n");
    refresh(&rm, json!({"graceful": true, "timeoutSecs": 600})).await;
    // It restarted with its container still running.
    let am = "container_1700000000000_0001_01_000001";
    let again = post(
        &rm.router,
        "/ws/v1/nm/register",
        json!({"nodeId": "h1:8041", "capability": {"memory": 8192, "vCores": 8},
               "containers": [{"containerId": am, "resource": {"memory": 1024, "vCores": 1}}]}),
    )
    .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    let h1 = node(&rm, "h1:8041").await;
    assert_eq!(h1["state"], "DECOMMISSIONING");
    assert_eq!(h1["numContainers"], 1);
    assert_eq!(h1["decommissioningTimeout"], 600);
    // Once its container and its app are done, it is decommissioned, and
    // then may not register again.
    let hb = rm
        .heartbeat(
            "h1:8041",
            0,
            json!([{"containerId": am, "state": "COMPLETE", "exitStatus": 0}]),
        )
        .await;
    assert_eq!(hb.json()["nodeAction"], "NORMAL");
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONING");
    let kill = rm.kill(&app, "alice").await;
    assert!(kill.status.is_success(), "{}", kill.body);
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONED");
    let hb = rm.heartbeat("h1:8041", 1, json!([])).await;
    let hb = hb.json();
    assert_eq!(hb["nodeAction"], "SHUTDOWN");
    assert_eq!(
        hb["diagnosticsMessage"],
        "node h1:8041 was decommissioned (decommissioned gracefully: drained); stop every container and shut down"
    );
    assert_eq!(
        rm.register("h1:8041", 8192, 8).await.status,
        StatusCode::FORBIDDEN
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn refresh_nodes_needs_an_admin_and_a_sound_body() {
    let rm = Rm::new();
    let r = &rm.router;
    let uri = "/ws/v1/cluster/refresh-nodes";
    refresh_is_for_admins(r, uri, "the nodes").await;
    let mut refused = String::new();
    for body in [
        json!({"graceful": false, "timeoutSecs": 5}),
        json!({"timeoutSecs": 5}),
        json!({"graceful": true, "timeoutSecs": -2}),
        json!({"graceful": true, "timeoutSecs": 3_000_000_000_i64}),
        json!({"gracefull": true}),
        json!({"graceful": "yes"}),
    ] {
        refused.push_str(&refresh(&rm, body).await.error());
        refused.push('\n');
    }
    expect![[r#"
        400 BadRequestException: timeoutSecs applies to a graceful refresh only: send "graceful": true with it, or leave it out
        400 BadRequestException: timeoutSecs applies to a graceful refresh only: send "graceful": true with it, or leave it out
        400 BadRequestException: timeoutSecs -2 is not a number of seconds from -1 (no timeout) to 2147483647
        400 BadRequestException: timeoutSecs 3000000000 is not a number of seconds from -1 (no timeout) to 2147483647
        400 BadRequestException: the JSON body does not match the expected fields: unknown field `gracefull`, expected `graceful` or `timeoutSecs` at line 1 column 12
        400 BadRequestException: the JSON body does not match the expected fields: invalid type: string "yes", expected a boolean at line 1 column 17
    "#]]
    .assert_eq(&refused);
    // Without hosts files there is nothing to refresh, which is no error.
    let a = refresh(&rm, json!({"graceful": true})).await;
    expect![[r#"{"refreshNodes":{"graceful":true,"includePath":null,"excludePath":null,"changes":[],"warnings":[]}}"#]]
        .assert_eq(&a.body);
    // XML in and out, as the other admin call.
    let a = call(
        r,
        Method::POST,
        &format!("{uri}?user.name=yarn"),
        Some("application/xml"),
        "<refreshNodes><graceful>true</graceful><timeoutSecs>60</timeoutSecs></refreshNodes>",
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(a.body.contains("<graceful>true</graceful>"), "{}", a.body);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn refresh_nodes_reads_the_site_file_again() {
    // An RM started from a directory with no exclude file named at all.
    let dir = TestDir::conf("site");
    let rm = dir.start();
    rm.register("h1:8041", 8192, 8).await;
    rm.register("h2:8041", 8192, 8).await;
    rm.running("alice", "a", "h1:8041", 0).await;

    // The operator names an exclude file (relative to the directory), a
    // default timeout and not waiting for apps, and refreshes: no restart.
    dir.write("nodes.exclude", "h1\nh2\n");
    let site = |extra: &[(&str, &str)]| {
        let mut props = vec![
            ("yarn.resourcemanager.nodes.exclude-path", "nodes.exclude"),
            (
                "yarn.resourcemanager.nodemanager-graceful-decommission-timeout-secs",
                "90",
            ),
            (
                "yarn.resourcemanager.decommissioning-nodes-watcher.wait-for-applications",
                "false",
            ),
        ];
        props.extend_from_slice(extra);
        testing::site(&props)
    };
    dir.write(crate::config::SITE_FILE_NAME, &site(&[]));
    let a = refresh(&rm, json!({"graceful": true})).await;
    expect![[r#"
        h1:8041 RUNNING->DECOMMISSIONING timeout=90 (h1 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path))
        h2:8041 RUNNING->DECOMMISSIONED (h2 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path))
    "#]]
    .assert_eq(&dir.hide(&changes(&a)));
    assert_eq!(
        dir.hide(a.json()["refreshNodes"]["excludePath"].as_str().unwrap()),
        "<dir>/nodes.exclude"
    );

    // A site file with a problem anywhere is refused as a whole: nothing
    // changes, not even the nodes the new exclude file would let back.
    dir.write("nodes.exclude", "");
    dir.write(
        crate::config::SITE_FILE_NAME,
        &site(&[("weft.rm.command-queue", "lots")]),
    );
    let a = refresh(&rm, Value::Null).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    expect![[r#"
        400 BadRequestException: <dir>/weft-site.xml: invalid service settings:
          line 12, column 45: property weft.rm.command-queue: "lots" is not a positive whole number
        (the lists in force are unchanged)"#]]
    .assert_eq(&dir.hide(&a.error()));
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONING");

    // Not waiting for apps (as the site file now says), h1 leaves once its
    // one container ends, though its app still runs.
    dir.write("nodes.exclude", "h1\n");
    dir.write(crate::config::SITE_FILE_NAME, &site(&[]));
    let am = "container_1700000000000_0001_01_000001";
    let hb = rm
        .heartbeat(
            "h1:8041",
            1,
            json!([{"containerId": am, "state": "COMPLETE", "exitStatus": 0}]),
        )
        .await;
    assert_eq!(hb.status, StatusCode::OK, "{}", hb.body);
    assert_eq!(node(&rm, "h1:8041").await["state"], "DECOMMISSIONED");
    rm.stop().await;
}
