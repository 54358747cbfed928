//! Router tests of an application's own ACLs (`application-acls` in the
//! submission's `am-container-spec`, YARN's `VIEW_APP` and `MODIFY_APP`):
//! whom `MODIFY_APP` lets change the app, what a named caller without
//! `VIEW_APP` sees of it (the reports, the list, the attempts, the
//! explanation and the web UI, withheld as Hadoop withholds them), the
//! lists leaving such apps out under `yarn.webapp.filter-entity-list-by-user`,
//! bad ACLs refused at submission, and the ACLs kept across a restart.
//!
//! The test configuration turns ACLs on, makes `yarn` the only cluster
//! administrator and the only administrator of every queue, and lets
//! alice and bob submit to `root.a`, anyone to `root.b`.

use super::*;

/// alice's app in `root.b` with these ACLs (JSON values of Hadoop's
/// `application-acls`), its AM registered on h1 and holding two
/// containers besides, asking for more, its fair share computed.
async fn alices_app(rm: &Rm, acls: Value) -> String {
    let app = rm.alices_registered_app(acls, json!({}), 4, 1024).await;
    for response_id in 1..3 {
        rm.heartbeat("h1:8041", response_id, json!([])).await;
    }
    // Let the update pass compute its fair share.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    app
}

/// `PUT path` as `user`.
async fn put_as(r: &Router, path: &str, user: &str, body: Value) -> Answer {
    put(r, &format!("{path}?user.name={user}"), body).await
}

/// `GET path` as `user`.
async fn get_as(r: &Router, path: &str, user: &str) -> Answer {
    get(r, &format!("{path}?user.name={user}")).await
}

/// The fields a withheld report changes, as `name=value` pairs.
fn details(app: &Value) -> String {
    [
        "startedTime",
        "launchTime",
        "finishedTime",
        "elapsedTime",
        "amHostHttpAddress",
        "amRPCAddress",
        "allocatedMB",
        "allocatedVCores",
        "runningContainers",
        "pendingMB",
        "fairShareMB",
        "logAggregationStatus",
    ]
    .iter()
    .map(|f| format!("{f}={}", app[*f]))
    .collect::<Vec<_>>()
    .join(" ")
}

/// The fields a withheld report keeps, as `name=value` pairs.
fn kept(app: &Value) -> String {
    [
        "user",
        "queue",
        "state",
        "progress",
        "trackingUrl",
        "diagnostics",
        "priority",
    ]
    .iter()
    .map(|f| format!("{f}={}", app[*f]))
    .collect::<Vec<_>>()
    .join(" ")
}

#[tokio::test(start_paused = true)]
async fn modify_app_lets_whom_it_names_change_the_app() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = alices_app(
        &rm,
        json!({"entry": [{"key": "MODIFY_APP", "value": "bob"}, {"key": "VIEW_APP", "value": "carol"}]}),
    )
    .await;
    // bob may re-prioritise, move (he may submit to root.a) and change the
    // lifetime; carol, who may only see it, and dave may do none of these.
    let priority = format!("/ws/v1/cluster/apps/{app}/priority");
    let zero = json!({"priority": 0});
    assert_eq!(
        put_as(r, &priority, "bob", zero.clone()).await.status,
        StatusCode::OK
    );
    expect![[r#"403 ForbiddenException: user carol may not change the priority of application application_1700000000000_0001 in queue root.b: only its owner, a user its MODIFY_APP ACL names, an administrator of its queue or a cluster administrator (yarn.admin.acl) may"#]]
        .assert_eq(&put_as(r, &priority, "carol", zero).await.error());
    let timeout = format!("/ws/v1/cluster/apps/{app}/timeout");
    let expiry =
        json!({"timeout": {"type": "LIFETIME", "expiryTime": "2030-01-01T00:00:00.000+0000"}});
    assert_eq!(
        put_as(r, &timeout, "dave", expiry.clone()).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        put_as(r, &timeout, "bob", expiry).await.status,
        StatusCode::OK
    );
    let queue = format!("/ws/v1/cluster/apps/{app}/queue");
    let to_a = json!({"queue": "a"});
    assert_eq!(
        put_as(r, &queue, "carol", to_a.clone()).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        put_as(r, &queue, "bob", to_a).await.body,
        r#"{"queue":"root.a"}"#
    );
    assert_eq!(rm.kill(&app, "dave").await.status, StatusCode::FORBIDDEN);
    assert_eq!(rm.kill(&app, "bob").await.body, r#"{"state":"KILLED"}"#);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn without_view_app_a_named_caller_gets_the_report_withheld() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = alices_app(
        &rm,
        json!({"VIEW_APP": "carol viewers", "MODIFY_APP": "dave"}),
    )
    .await;
    let report = |user: Option<&str>| {
        let uri = match user {
            Some(u) => format!("/ws/v1/cluster/apps/{app}?user.name={u}"),
            None => format!("/ws/v1/cluster/apps/{app}"),
        };
        async move {
            let a = get(r, &uri).await;
            assert_eq!(a.status, StatusCode::OK, "{}", a.body);
            a.json()["app"].clone()
        }
    };
    let full = report(Some("alice")).await;
    expect![[r#"startedTime=1700000000000 launchTime=1700000000000 finishedTime=0 elapsedTime=600 amHostHttpAddress="h1:8042" amRPCAddress="am-host:7001" allocatedMB=3072 allocatedVCores=3 runningContainers=3 pendingMB=2048 fairShareMB=8192 logAggregationStatus="DISABLED""#]]
        .assert_eq(&details(&full));
    // The user VIEW_APP names, a cluster administrator (here also the
    // queues' only administrator) and a caller who names nobody (as in
    // Hadoop) see what the owner sees.
    for who in [Some("carol"), Some("yarn"), None] {
        assert_eq!(report(who).await, full, "{who:?}");
    }
    // dave may change it (MODIFY_APP) but not see it; erin may do neither.
    for who in ["dave", "erin"] {
        let withheld = report(Some(who)).await;
        expect![[r#"startedTime=0 launchTime=0 finishedTime=0 elapsedTime=0 amHostHttpAddress="" amRPCAddress="" allocatedMB=0 allocatedVCores=0 runningContainers=0 pendingMB=0 fairShareMB=0 logAggregationStatus="""#]]
            .assert_eq(&details(&withheld));
        assert_eq!(kept(&withheld), kept(&full));
    }
    // The same in the list, app by app, and in the attempts.
    let other = rm.submit("erin", "b").await;
    let list = get(r, "/ws/v1/cluster/apps?user.name=erin").await.json();
    let apps = list["apps"]["app"].as_array().unwrap();
    assert_eq!(apps[0]["id"], app);
    assert_eq!(apps[0]["allocatedMB"], 0);
    assert_eq!(apps[1]["id"], other);
    assert_ne!(apps[1]["startedTime"], 0);
    let attempts = format!("/ws/v1/cluster/apps/{app}/appattempts");
    let attempt = |a: Answer| a.json()["appAttempts"]["appAttempt"][0].clone();
    let seen = attempt(get_as(r, &attempts, "carol").await);
    assert_eq!(seen["nodeId"], "h1:8041");
    let hidden = attempt(get_as(r, &attempts, "erin").await);
    assert_eq!(
        (
            &hidden["containerId"],
            &hidden["nodeId"],
            &hidden["nodeHttpAddress"]
        ),
        (&json!(""), &json!(""), &json!(""))
    );
    assert_eq!(hidden["appAttemptId"], seen["appAttemptId"]);
    // The explanation, which shows the app's asks, is refused outright.
    let explain = format!("/ws/v1/cluster/apps/{app}/explain");
    assert_eq!(get_as(r, &explain, "carol").await.status, StatusCode::OK);
    expect![[r#"403 ForbiddenException: user erin may not see the details of application application_1700000000000_0001: only its owner, a user its VIEW_APP ACL names, an administrator of its queue or a cluster administrator (yarn.admin.acl) may"#]]
        .assert_eq(&get_as(r, &explain, "erin").await.error());
    rm.stop().await;

    // With ACLs off everybody sees everything.
    let rm = Rm::with(&[("yarn.acl.enable", "false")]);
    let app = alices_app(&rm, json!({"VIEW_APP": "carol"})).await;
    let a = get(
        &rm.router,
        &format!("/ws/v1/cluster/apps/{app}?user.name=erin"),
    )
    .await;
    assert_eq!(a.json()["app"]["allocatedMB"], 3072);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_web_ui_withholds_what_the_api_does() {
    let rm = Rm::new();
    let r = &rm.router;
    let app = alices_app(&rm, json!({"VIEW_APP": "carol"})).await;
    let page = |uri: String| ok_page(r, uri);
    let shown = page(format!("/cluster/app/{app}?user.name=carol")).await;
    assert!(!shown.contains("not shown"), "{shown}");
    assert!(shown.contains("am-host:7001"), "{shown}");
    assert!(shown.contains("Why it is waiting"), "{shown}");
    let withheld = page(format!("/cluster/app/{app}?user.name=erin")).await;
    assert!(
        withheld.contains("are not shown to erin: only its owner"),
        "{withheld}"
    );
    assert!(!withheld.contains("am-host:7001"), "{withheld}");
    assert!(!withheld.contains("h1:8041"), "{withheld}");
    assert!(!withheld.contains("Why it is waiting"), "{withheld}");
    let list = page("/cluster/apps?user.name=erin".to_owned()).await;
    assert!(list.contains("<td>not shown</td>"), "{list}");
    let overview = page("/cluster?user.name=erin".to_owned()).await;
    assert!(overview.contains("<td>not shown</td>"), "{overview}");
    // A bad user name is refused as a page.
    let a = get(r, "/cluster/apps?user.name=a%0Ab").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert!(a.body.contains("control character"), "{}", a.body);
    rm.stop().await;
}

/// The ids `/ws/v1/cluster/apps` lists to `user` (`None`: naming nobody),
/// with each one's `allocatedMB`, which a withheld report shows as 0.
async fn listed(r: &Router, user: Option<&str>, query: &str) -> Vec<(String, u64)> {
    let uri = match user {
        Some(u) => format!("/ws/v1/cluster/apps?user.name={u}&{query}"),
        None => format!("/ws/v1/cluster/apps?{query}"),
    };
    let a = get(r, &uri).await;
    assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.body);
    a.json()["apps"]["app"]
        .as_array()
        .map(|apps| {
            apps.iter()
                .map(|a| {
                    (
                        a["id"].as_str().unwrap().to_owned(),
                        a["allocatedMB"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn filter_entity_list_by_user_leaves_out_what_the_caller_may_not_view() {
    let rm = Rm::with(&[("yarn.webapp.filter-entity-list-by-user", "true")]);
    let r = &rm.router;
    let app = alices_app(&rm, json!({"VIEW_APP": "carol"})).await;
    let erins = rm.submit("erin", "b").await;
    // alice (the owner), carol (VIEW_APP), yarn (administrator) and a
    // caller who names nobody (as in Hadoop) see alice's app whole.
    for who in [Some("alice"), Some("carol"), Some("yarn"), None] {
        let apps = listed(r, who, "").await;
        assert_eq!(apps[0], (app.clone(), 3072), "{who:?}");
    }
    // erin sees only her own app: alice's is left out, not withheld.
    assert_eq!(listed(r, Some("erin"), "").await, [(erins.clone(), 0)]);
    // dave may view neither: an empty list, as Hadoop writes it.
    let a = get(r, "/ws/v1/cluster/apps?user.name=dave").await;
    assert_eq!(a.body, r#"{"apps":{}}"#);
    // The limit counts only what is listed: erin asking for one gets hers.
    assert_eq!(listed(r, Some("erin"), "limit=1").await, [(erins, 0)]);
    // One app's report is still withheld, not refused, as in Hadoop.
    let one = get_as(r, &format!("/ws/v1/cluster/apps/{app}"), "erin").await;
    assert_eq!(one.json()["app"]["allocatedMB"], 0, "{}", one.body);
    // appstatistics counts every app whoever asks, as Hadoop's does.
    let stats = get(
        r,
        "/ws/v1/cluster/appstatistics?user.name=dave&states=accepted,running",
    )
    .await;
    let total: u64 = stats.json()["appStatInfo"]["statItem"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["count"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 2, "{}", stats.body);
    rm.stop().await;

    // Off (the default): listed and withheld.
    let rm = Rm::new();
    let app = alices_app(&rm, json!({})).await;
    assert_eq!(listed(&rm.router, Some("erin"), "").await, [(app, 0)]);
    rm.stop().await;

    // With ACLs off everybody may view everything, so nothing is left out.
    let rm = Rm::with(&[
        ("yarn.acl.enable", "false"),
        ("yarn.webapp.filter-entity-list-by-user", "true"),
    ]);
    let app = alices_app(&rm, json!({})).await;
    assert_eq!(listed(&rm.router, Some("erin"), "").await, [(app, 3072)]);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_web_ui_lists_leave_out_what_the_api_list_does() {
    let rm = Rm::with(&[("yarn.resourcemanager.display.per-user-apps", "true")]);
    let r = &rm.router;
    let app = alices_app(&rm, json!({"VIEW_APP": "carol"})).await;
    let page = |uri: String| ok_page(r, uri);
    for path in ["/cluster/apps", "/cluster/apps/RUNNING", "/cluster"] {
        let hidden = page(format!("{path}?user.name=erin")).await;
        assert!(!hidden.contains(&app), "{path}: {hidden}");
        assert!(hidden.contains("No applications."), "{path}: {hidden}");
        for who in ["alice", "carol", "yarn"] {
            let shown = page(format!("{path}?user.name={who}")).await;
            assert!(shown.contains(&app), "{path} {who}: {shown}");
            assert!(
                !shown.contains("<td>not shown</td>"),
                "{path} {who}: {shown}"
            );
        }
    }
    // The count above the list is of the apps listed.
    let list = page("/cluster/apps?user.name=erin".to_owned()).await;
    assert!(list.contains("0 applications, newest first."), "{list}");
    // The app's own page is still there, withheld.
    let own = page(format!("/cluster/app/{app}?user.name=erin")).await;
    assert!(own.contains("are not shown to erin"), "{own}");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn bad_application_acls_are_refused_at_submission() {
    let rm = Rm::new();
    let app = rm.new_app("alice").await;
    let a = post(
        &rm.router,
        "/ws/v1/cluster/apps?user.name=alice",
        json!({"application-id": app, "queue": "b",
               "am-container-spec": {"commands": {"command": "x"},
                                     "application-acls": {"entry": [{"key": "VIEW_APP", "value": "bob carol dave"}]}}}),
    )
    .await;
    expect![[r#"400 BadRequestException: am-container-spec.application-acls.entry[0]: VIEW_APP ACL "bob carol dave": group "carol dave" has a space in it; an ACL is users (comma-separated), one space, then groups (comma-separated): "alice,bob admins""#]]
        .assert_eq(&a.error());
    // Nothing was recorded.
    assert_eq!(
        get(&rm.router, &format!("/ws/v1/cluster/apps/{app}"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn application_acls_survive_a_restart_with_the_state_store() {
    let dir = TestDir::new("app-acls-restart");
    let state = dir.path("state").display().to_string();
    let site = [("weft.rm.state-store.dir", state.as_str())];
    let start = || {
        let service = testing::service_at(&site, testing::EPOCH);
        Rm::around(service)
    };
    let rm = start();
    let app = alices_app(&rm, json!({"MODIFY_APP": "bob", "VIEW_APP": "carol"})).await;
    rm.stop().await;

    let rm = start();
    let a = get(
        &rm.router,
        &format!("/ws/v1/cluster/apps/{app}?user.name=erin"),
    )
    .await;
    assert_eq!(a.json()["app"]["startedTime"], 0, "{}", a.body);
    let a = get(
        &rm.router,
        &format!("/ws/v1/cluster/apps/{app}?user.name=carol"),
    )
    .await;
    assert_ne!(a.json()["app"]["startedTime"], 0, "{}", a.body);
    assert_eq!(rm.kill(&app, "erin").await.status, StatusCode::FORBIDDEN);
    assert_eq!(rm.kill(&app, "bob").await.status, StatusCode::OK);
    rm.stop().await;
}

/// A web UI page's body, which must be there (200).
async fn ok_page(r: &Router, uri: String) -> String {
    let a = get(r, &uri).await;
    assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.body);
    a.body
}
