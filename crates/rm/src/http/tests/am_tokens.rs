//! Router tests of the AM tokens and the node secret: an AM call without
//! its attempt's token (401), with another (403), with its own; a failed
//! attempt's token refused once the next attempt has its own; an unmanaged
//! AM's token shown to its owner alone; a token that keeps working across
//! a restart with the state store; and node calls with and without the
//! node secret, and the files the RM refuses to start with.

use super::*;

const APP1: &str = "application_1700000000000_0001";
const AM1: &str = "container_1700000000000_0001_01_000001";

/// The status, `WWW-Authenticate` and error of an answer, in one line.
fn refusal(a: &Answer) -> String {
    let challenge = a
        .headers
        .get("www-authenticate")
        .map_or(String::new(), |v| format!(" [{}]", v.to_str().unwrap()));
    format!("{}{challenge}", a.error())
}

#[tokio::test(start_paused = true)]
async fn an_am_call_needs_its_attempts_token() {
    let rm = Rm::new();
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    let other = rm.running("bob", "b", "h1:8041", 1).await;
    let token = rm.am_token(&app);
    let others = rm.am_token(&other);
    assert_ne!(token, others);
    let wrong = if token.starts_with('0') { "1" } else { "0" }.to_owned() + &token[1..];
    let mut rendered = String::new();
    for am_call in ["register", "allocate", "finish"] {
        let body = json!({"responseId": 0, "finalStatus": "SUCCEEDED"});
        let cases = [
            ("none", None),
            ("basic", Some(format!("Basic {token}"))),
            ("empty bearer", Some("Bearer ".to_owned())),
            ("wrong", Some(format!("Bearer {wrong}"))),
            ("bob's", Some(format!("Bearer {others}"))),
            ("not ASCII", Some("Bearer ¯\\_(ツ)_/¯".to_owned())),
        ];
        for (what, auth) in cases {
            let headers: Vec<(&str, &str)> = auth
                .as_deref()
                .map(|a| ("authorization", a))
                .into_iter()
                .collect();
            let a = call(
                &rm.router,
                Method::POST,
                &format!("/ws/v1/am/{app}/{am_call}"),
                Some("application/json"),
                &body.to_string(),
                &headers,
            )
            .await;
            assert_eq!(
                a.headers["content-type"], "application/json",
                "a RemoteException body"
            );
            for secret in [&token, &wrong, &others] {
                assert!(!a.body.contains(secret.as_str()), "echoed: {}", a.body);
            }
            rendered.push_str(&format!("{am_call} {what}: {}\n", refusal(&a)));
        }
    }
    expect![[r#"
        register none: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        register basic: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        register empty bearer: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        register wrong: 403 ForbiddenException: the AM token presented is not that of a running attempt of application application_1700000000000_0001; an AM container has its attempt's token in WEFT_AM_TOKEN, an unmanaged AM's owner finds it in the application's report (amRMToken), and a new attempt's token replaces the last
        register bob's: 403 ForbiddenException: the AM token presented is not that of a running attempt of application application_1700000000000_0001; an AM container has its attempt's token in WEFT_AM_TOKEN, an unmanaged AM's owner finds it in the application's report (amRMToken), and a new attempt's token replaces the last
        register not ASCII: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        allocate none: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        allocate basic: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        allocate empty bearer: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        allocate wrong: 403 ForbiddenException: the AM token presented is not that of a running attempt of application application_1700000000000_0001; an AM container has its attempt's token in WEFT_AM_TOKEN, an unmanaged AM's owner finds it in the application's report (amRMToken), and a new attempt's token replaces the last
        allocate bob's: 403 ForbiddenException: the AM token presented is not that of a running attempt of application application_1700000000000_0001; an AM container has its attempt's token in WEFT_AM_TOKEN, an unmanaged AM's owner finds it in the application's report (amRMToken), and a new attempt's token replaces the last
        allocate not ASCII: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        finish none: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        finish basic: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        finish empty bearer: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
        finish wrong: 403 ForbiddenException: the AM token presented is not that of a running attempt of application application_1700000000000_0001; an AM container has its attempt's token in WEFT_AM_TOKEN, an unmanaged AM's owner finds it in the application's report (amRMToken), and a new attempt's token replaces the last
        finish bob's: 403 ForbiddenException: the AM token presented is not that of a running attempt of application application_1700000000000_0001; an AM container has its attempt's token in WEFT_AM_TOKEN, an unmanaged AM's owner finds it in the application's report (amRMToken), and a new attempt's token replaces the last
        finish not ASCII: 401 AuthorizationException: the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report) [Bearer]
    "#]]
    .assert_eq(&rendered);
    // Refused calls changed nothing; the right token works, with any case
    // of the scheme.
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*",
        "capability": {"memory": 1024, "vCores": 1}, "numContainers": 1}]});
    let a = rm
        .am_with(&app, "allocate", ask, Some(&token.to_string()))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let a = call(
        &rm.router,
        Method::POST,
        &format!("/ws/v1/am/{app}/allocate"),
        Some("application/json"),
        r#"{"responseId": 1}"#,
        &[("authorization", &format!("bearer  {token}"))],
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // The AM token is no node secret, and no container token either.
    assert_eq!(
        rm.am_with(
            &app,
            "finish",
            json!({"finalStatus": "SUCCEEDED"}),
            Some(&others)
        )
        .await
        .status,
        StatusCode::FORBIDDEN
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_attempts_token_is_refused_and_the_next_attempt_has_its_own() {
    // The test configuration allows two attempts.
    let rm = Rm::new();
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    assert_eq!(app, APP1);
    let first = rm.am_token(&app);
    // The AM container exits: the attempt fails, and the same heartbeat
    // places the second attempt's AM container, with a new token.
    let hb = rm
        .heartbeat(
            "h1:8041",
            1,
            json!([{"containerId": AM1, "state": "COMPLETE", "exitStatus": 1}]),
        )
        .await
        .json();
    let second_am = &hb["allocatedContainers"][0];
    assert_eq!(
        second_am["containerId"],
        "container_1700000000000_0001_02_000001"
    );
    let second = second_am["amRMToken"].as_str().unwrap().to_owned();
    assert_ne!(first, second);
    // The first attempt's AM (still running somewhere, say) is not heard.
    let old = rm.am_with(&app, "register", json!({}), Some(&first)).await;
    assert_eq!(old.status, StatusCode::FORBIDDEN, "{}", old.body);
    let old = rm
        .am_with(&app, "allocate", json!({"responseId": 0}), Some(&first))
        .await;
    assert_eq!(old.status, StatusCode::FORBIDDEN, "{}", old.body);
    // The second attempt's AM is.
    let new = rm.am_with(&app, "register", json!({}), Some(&second)).await;
    assert_eq!(new.status, StatusCode::OK, "{}", new.body);
    // A repeated heartbeat answer carries the same token, not a new one.
    let again = rm
        .heartbeat(
            "h1:8041",
            1,
            json!([{"containerId": AM1, "state": "COMPLETE", "exitStatus": 1}]),
        )
        .await
        .json();
    assert_eq!(
        again["allocatedContainers"][0]["amRMToken"],
        second.as_str()
    );
    // Once the app ends its AM is told so (409), not that its token is wrong.
    let fin = rm
        .am_with(
            &app,
            "finish",
            json!({"finalStatus": "SUCCEEDED"}),
            Some(&second),
        )
        .await;
    assert_eq!(fin.status, StatusCode::OK, "{}", fin.body);
    let after = rm
        .am_with(&app, "allocate", json!({"responseId": 0}), Some(&second))
        .await;
    assert_eq!(
        after.error(),
        "409 YarnException: application application_1700000000000_0001 has already ended (finished)"
    );
    let after = rm
        .am_with(&app, "allocate", json!({"responseId": 0}), Some(&first))
        .await;
    assert_eq!(after.status, StatusCode::FORBIDDEN, "{}", after.body);
    rm.stop().await;
}

/// An unmanaged app of alice's in `root.b`, whose `VIEW_APP` and
/// `MODIFY_APP` name carol; returns its id.
async fn alices_unmanaged_app(rm: &Rm) -> String {
    let app = rm.new_app("alice").await;
    let a = post(
        &rm.router,
        "/ws/v1/cluster/apps?user.name=alice",
        json!({"application-id": app, "queue": "b", "unmanaged-AM": true,
               "am-container-spec": {"application-acls": {"VIEW_APP": "carol", "MODIFY_APP": "carol"}}}),
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    app
}

/// The `amRMToken` of `app`'s report as `who` (`None`: nobody named) reads
/// it, whether as one app or in the list.
async fn token_shown(rm: &Rm, app: &str, who: Option<&str>) -> (Option<String>, Option<String>) {
    let query = who.map_or(String::new(), |u| format!("?user.name={u}"));
    let one = get(&rm.router, &format!("/ws/v1/cluster/apps/{app}{query}")).await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.body);
    let list = get(&rm.router, &format!("/ws/v1/cluster/apps{query}")).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    let token = |v: &Value| v["amRMToken"].as_str().map(str::to_owned);
    (
        token(&one.json()["app"]),
        list.json()["apps"]["app"]
            .as_array()
            .and_then(|l| l.iter().find_map(token)),
    )
}

#[tokio::test(start_paused = true)]
async fn an_unmanaged_ams_token_is_shown_to_its_owner_alone() {
    let rm = Rm::new();
    let app = alices_unmanaged_app(&rm).await;
    let (token, in_list) = token_shown(&rm, &app, Some("alice")).await;
    let token = token.expect("the owner sees the token");
    assert_eq!(token.len(), 32);
    assert_eq!(in_list, None, "the list shows no token");
    // Not to a user the app's ACLs name, an administrator or an anonymous
    // caller, as Hadoop's report gives it to the owner only.
    for who in [Some("carol"), Some("yarn"), Some("bob"), None] {
        assert_eq!(token_shown(&rm, &app, who).await, (None, None), "{who:?}");
    }
    let xml = call(
        &rm.router,
        Method::GET,
        &format!("/ws/v1/cluster/apps/{app}?user.name=alice"),
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert!(
        xml.body
            .contains(&format!("<amRMToken>{token}</amRMToken>")),
        "{}",
        xml.body
    );
    // The owner's AM registers with it; a managed app's report never shows one.
    let reg = rm.am_with(&app, "register", json!({}), Some(&token)).await;
    assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
    rm.register("h1:8041", 8192, 8).await;
    let managed = rm.running("alice", "a", "h1:8041", 0).await;
    assert_eq!(
        token_shown(&rm, &managed, Some("alice")).await,
        (None, None)
    );
    // Once the app has ended, the report no longer shows it.
    let fin = rm
        .am_with(
            &app,
            "finish",
            json!({"finalStatus": "SUCCEEDED"}),
            Some(&token),
        )
        .await;
    assert_eq!(fin.status, StatusCode::OK, "{}", fin.body);
    assert_eq!(token_shown(&rm, &app, Some("alice")).await, (None, None));
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_ams_token_keeps_working_across_a_restart_with_the_state_store() {
    let dir = TestDir::new("am-token-restart");
    let state = dir.path("state").display().to_string();
    let start = |after_ms: u64| {
        Rm::around(testing::service_at(
            &[("weft.rm.state-store.dir", state.as_str())],
            testing::EPOCH + after_ms,
        ))
    };
    let rm = start(0);
    rm.register("h1:8041", 8192, 8).await;
    let managed = rm.running("alice", "a", "h1:8041", 0).await;
    let managed_token = rm.am_token(&managed);
    let unmanaged = alices_unmanaged_app(&rm).await;
    let unmanaged_token = token_shown(&rm, &unmanaged, Some("alice")).await.0.unwrap();
    rm.stop().await;
    // The store holds secrets: only its owner may read it.
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.path("state").join("apps.jsonl"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let rm = start(60_000);
    // The unmanaged AM goes on with the token it has, which its owner is
    // shown again.
    assert_eq!(
        token_shown(&rm, &unmanaged, Some("alice"))
            .await
            .0
            .as_deref(),
        Some(unmanaged_token.as_str())
    );
    let reg = rm
        .am_with(&unmanaged, "register", json!({}), Some(&unmanaged_token))
        .await;
    assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
    // The managed AM's node comes back with its container; the AM, still
    // running, registers again with the token its node gave it at launch.
    let again = rm
        .node_post(
            "/ws/v1/nm/register",
            json!({"nodeId": "h1:8041", "rack": "/r1", "capability": {"memory": 8192, "vCores": 8},
                   "containers": [{"containerId": AM1, "resource": {"memory": 1024, "vCores": 1}, "priority": 0}]}),
        )
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    let wrong = rm
        .am_with(&managed, "register", json!({}), Some(&unmanaged_token))
        .await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN, "{}", wrong.body);
    let reg = rm
        .am_with(&managed, "register", json!({}), Some(&managed_token))
        .await;
    assert_eq!(reg.status, StatusCode::OK, "{}", reg.body);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn node_calls_show_the_node_secret_when_the_rm_has_one() {
    let rm = Rm::with_node_secret();
    let register = json!({"nodeId": "h1:8041", "capability": {"memory": 8192, "vCores": 8}});
    let heartbeat = json!({"nodeId": "h1:8041", "responseId": 0});
    let unregister = json!({"nodeId": "h1:8041"});
    let mut rendered = String::new();
    for (path, body) in [
        ("/ws/v1/nm/register", &register),
        ("/ws/v1/nm/heartbeat", &heartbeat),
        ("/ws/v1/nm/unregister", &unregister),
    ] {
        for (what, auth) in [
            ("none", None),
            (
                "wrong",
                Some(format!("Bearer {}", NODE_SECRET.replace('5', "6"))),
            ),
            ("as a query", None),
        ] {
            let headers: Vec<(&str, &str)> = auth
                .as_deref()
                .map(|a| ("authorization", a))
                .into_iter()
                .collect();
            let uri = if what == "as a query" {
                format!("{path}?secret={NODE_SECRET}")
            } else {
                path.to_owned()
            };
            let a = call(
                &rm.router,
                Method::POST,
                &uri,
                Some("application/json"),
                &body.to_string(),
                &headers,
            )
            .await;
            assert!(!a.body.contains(NODE_SECRET), "echoed: {}", a.body);
            rendered.push_str(&format!("{path} {what}: {}\n", refusal(&a)));
        }
    }
    expect![[r#"
        /ws/v1/nm/register none: 401 AuthorizationException: this resource manager authenticates nodes: send its node secret as Authorization: Bearer <secret> (the node agent reads it from the file its site file names in weft.nm.secret.file) [Bearer]
        /ws/v1/nm/register wrong: 403 ForbiddenException: the node secret presented is not this resource manager's (weft.nm.secret.file); check that the node agent reads the same file
        /ws/v1/nm/register as a query: 401 AuthorizationException: this resource manager authenticates nodes: send its node secret as Authorization: Bearer <secret> (the node agent reads it from the file its site file names in weft.nm.secret.file) [Bearer]
        /ws/v1/nm/heartbeat none: 401 AuthorizationException: this resource manager authenticates nodes: send its node secret as Authorization: Bearer <secret> (the node agent reads it from the file its site file names in weft.nm.secret.file) [Bearer]
        /ws/v1/nm/heartbeat wrong: 403 ForbiddenException: the node secret presented is not this resource manager's (weft.nm.secret.file); check that the node agent reads the same file
        /ws/v1/nm/heartbeat as a query: 401 AuthorizationException: this resource manager authenticates nodes: send its node secret as Authorization: Bearer <secret> (the node agent reads it from the file its site file names in weft.nm.secret.file) [Bearer]
        /ws/v1/nm/unregister none: 401 AuthorizationException: this resource manager authenticates nodes: send its node secret as Authorization: Bearer <secret> (the node agent reads it from the file its site file names in weft.nm.secret.file) [Bearer]
        /ws/v1/nm/unregister wrong: 403 ForbiddenException: the node secret presented is not this resource manager's (weft.nm.secret.file); check that the node agent reads the same file
        /ws/v1/nm/unregister as a query: 401 AuthorizationException: this resource manager authenticates nodes: send its node secret as Authorization: Bearer <secret> (the node agent reads it from the file its site file names in weft.nm.secret.file) [Bearer]
    "#]]
    .assert_eq(&rendered);
    // Nothing was registered; with the secret, everything works.
    assert_eq!(
        get(&rm.router, "/ws/v1/cluster/nodes").await.body,
        r#"{"nodes":{}}"#
    );
    assert_eq!(rm.register("h1:8041", 8192, 8).await.status, StatusCode::OK);
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    assert_eq!(
        rm.node_post("/ws/v1/nm/unregister", unregister)
            .await
            .status,
        StatusCode::OK
    );
    // The AM protocol asks for the AM token, not the node secret.
    let a = rm
        .am_with(
            &app,
            "allocate",
            json!({"responseId": 0}),
            Some(NODE_SECRET),
        )
        .await;
    assert_eq!(a.status, StatusCode::FORBIDDEN, "{}", a.body);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn without_a_node_secret_nodes_need_none() {
    let rm = Rm::new();
    let a = call(
        &rm.router,
        Method::POST,
        "/ws/v1/nm/register",
        Some("application/json"),
        r#"{"nodeId": "h1:8041", "capability": {"memory": 8192, "vCores": 8}}"#,
        &[("authorization", "Bearer anything-at-all")],
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    rm.stop().await;
}

#[test]
fn the_rm_does_not_start_with_a_node_secret_file_it_cannot_use() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = TestDir::conf("node-secret-files");
    let open_to_all = dir.write("open.secret", "0123456789abcdef0123456789abcdef\n");
    std::fs::set_permissions(&open_to_all, std::fs::Permissions::from_mode(0o644)).unwrap();
    let short = dir.write_private("short.secret", "abc\n");
    let mut rendered = String::new();
    for file in [open_to_all.as_str(), short.as_str(), "missing.secret"] {
        dir.write(
            crate::config::SITE_FILE_NAME,
            &testing::site(&[("weft.nm.secret.file", file)]),
        );
        let e = crate::config::RmConfig::load(Some(&dir.0)).unwrap_err();
        rendered.push_str(&dir.hide(&e.to_string()));
        rendered.push('\n');
    }
    expect![[r#"
        node secret file <dir>/open.secret (weft.nm.secret.file): other users may read or change it (mode 644); run chmod o-rwx on it, as only the resource manager and its node agents may know the secret
        node secret file <dir>/short.secret (weft.nm.secret.file): the secret has 3 characters, fewer than the 16 needed to be hard to guess (openssl rand -hex 32 makes 64)
        node secret file <dir>/missing.secret (weft.nm.secret.file): No such file or directory (os error 2)
    "#]]
    .assert_eq(&rendered);
    // A relative path is the configuration directory's.
    dir.write_private("node.secret", "0123456789abcdef0123456789abcdef\n");
    dir.write(
        crate::config::SITE_FILE_NAME,
        &testing::site(&[("weft.nm.secret.file", "node.secret")]),
    );
    let config = crate::config::RmConfig::load(Some(&dir.0)).unwrap();
    let secret = config.service.node_secret.expect("the secret is read");
    assert!(secret.matches("0123456789abcdef0123456789abcdef"));
}
