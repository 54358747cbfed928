//! Router tests of application lifetimes: the submission's
//! `application-timeouts`, `GET /apps/{id}/timeouts` and
//! `/timeouts/{type}`, `PUT /apps/{id}/timeout` (who may, and every bad
//! input), the app report's `timeouts`, the kill at the expiry, and the
//! expiry kept across a restart by the state store.

use std::time::Duration;

use super::*;

/// The test clock's start, as the API writes it.
const START: &str = "2023-11-14T22:13:20.000+0000";

impl Rm {
    /// A new app of `user` in `queue`, submitted with `timeouts` as its
    /// `application-timeouts`.
    async fn submit_with_timeouts(&self, user: &str, queue: &str, timeouts: Value) -> Answer {
        let app = self.new_app(user).await;
        post(
            &self.router,
            &format!("/ws/v1/cluster/apps?user.name={user}"),
            json!({"application-id": app, "queue": queue, "unmanaged-AM": true,
                   "application-timeouts": timeouts}),
        )
        .await
    }

    async fn timeouts(&self, app: &str) -> String {
        get(&self.router, &format!("/ws/v1/cluster/apps/{app}/timeouts"))
            .await
            .body
    }

    async fn set_expiry(&self, app: &str, user: &str, body: Value) -> Answer {
        put(
            &self.router,
            &format!("/ws/v1/cluster/apps/{app}/timeout?user.name={user}"),
            body,
        )
        .await
    }

    async fn app_json(&self, app: &str) -> Value {
        get(&self.router, &format!("/ws/v1/cluster/apps/{app}"))
            .await
            .json()["app"]
            .take()
    }
}

fn lifetime(expiry: &str) -> Value {
    json!({"timeout": {"type": "LIFETIME", "expiryTime": expiry}})
}

#[tokio::test(start_paused = true)]
async fn an_app_submitted_with_a_lifetime_is_killed_at_its_expiry() {
    let rm = Rm::new();
    let a = rm
        .submit_with_timeouts("alice", "a", json!({"LIFETIME": 60}))
        .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let app = "application_1700000000000_0001";
    expect![[r#"{"timeouts":{"timeout":[{"type":"LIFETIME","expiryTime":"2023-11-14T22:14:20.000+0000","remainingTimeInSeconds":60}]}}"#]]
        .assert_eq(&rm.timeouts(app).await);
    // One type, in any case; others are refused naming the only one.
    let one = format!("/ws/v1/cluster/apps/{app}/timeouts/LIFETIME");
    expect![[r#"{"timeout":{"type":"LIFETIME","expiryTime":"2023-11-14T22:14:20.000+0000","remainingTimeInSeconds":60}}"#]]
        .assert_eq(&get(&rm.router, &one).await.body);
    assert_eq!(
        get(&rm.router, &format!("{one}/")).await.status,
        StatusCode::OK
    );
    assert_eq!(
        get(
            &rm.router,
            &format!("/ws/v1/cluster/apps/{app}/timeouts/lifetime")
        )
        .await
        .status,
        StatusCode::OK
    );
    assert_eq!(
        get(
            &rm.router,
            &format!("/ws/v1/cluster/apps/{app}/timeouts/QUEUE")
        )
        .await
        .error(),
        "400 BadRequestException: timeout type: invalid timeout type \"QUEUE\"; the only type is LIFETIME"
    );
    assert_eq!(
        get(
            &rm.router,
            "/ws/v1/cluster/apps/application_1700000000000_0099/timeouts/QUEUE"
        )
        .await
        .status,
        StatusCode::NOT_FOUND
    );
    // XML, as Hadoop writes it.
    let xml = call(
        &rm.router,
        Method::GET,
        &format!("/ws/v1/cluster/apps/{app}/timeouts"),
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert!(
        xml.body.ends_with("<timeouts><timeout><type>LIFETIME</type><expiryTime>2023-11-14T22:14:20.000+0000</expiryTime><remainingTimeInSeconds>60</remainingTimeInSeconds></timeout></timeouts>"),
        "{}",
        xml.body
    );
    // The report carries them too, unless deselected.
    assert_eq!(
        rm.app_json(app).await["timeouts"],
        json!({"timeout": [{"type": "LIFETIME", "expiryTime": "2023-11-14T22:14:20.000+0000", "remainingTimeInSeconds": 60}]})
    );
    let list = get(&rm.router, "/ws/v1/cluster/apps?deSelects=timeouts")
        .await
        .json();
    assert!(list["apps"]["app"][0].get("timeouts").is_none(), "{list}");
    let list = get(&rm.router, "/ws/v1/cluster/apps").await.json();
    assert!(list["apps"]["app"][0].get("timeouts").is_some(), "{list}");

    tokio::time::advance(Duration::from_secs(45)).await;
    assert_eq!(
        rm.app_json(app).await["timeouts"]["timeout"][0]["remainingTimeInSeconds"],
        15
    );
    tokio::time::advance(Duration::from_secs(15)).await;
    let report = rm.app_json(app).await;
    assert_eq!(report["state"], "KILLED");
    assert_eq!(report["finalStatus"], "KILLED");
    assert_eq!(
        report["diagnostics"],
        "Application is killed by ResourceManager as it has exceeded the lifetime period."
    );
    // An ended app still shows its expiry, with nothing left, as Hadoop's does.
    assert_eq!(
        report["timeouts"],
        json!({"timeout": [{"type": "LIFETIME", "expiryTime": "2023-11-14T22:14:20.000+0000", "remainingTimeInSeconds": 0}]})
    );
    // And its expiry can no longer be changed.
    assert_eq!(
        rm.set_expiry(app, "alice", lifetime("2030-01-01T00:00:00.000+0000"))
            .await
            .error(),
        "409 YarnException: application application_1700000000000_0001 has already ended (killed)"
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn submissions_with_bad_timeouts_are_refused_naming_the_field() {
    let rm = Rm::new();
    for (timeouts, error) in [
        (
            json!({"LIFETIME": 0}),
            "400 BadRequestException: application-timeouts: the LIFETIME timeout is 0 seconds; it must be a positive number of seconds, at most 100000000000",
        ),
        (
            json!({"LIFETIME": -5}),
            "400 BadRequestException: application-timeouts: the LIFETIME timeout is -5 seconds; it must be a positive number of seconds, at most 100000000000",
        ),
        (
            json!({"LIFETIME": 100_000_000_001_u64}),
            "400 BadRequestException: application-timeouts: the LIFETIME timeout is 100000000001 seconds; it must be a positive number of seconds, at most 100000000000",
        ),
        (
            json!({"QUEUE": 5}),
            "400 BadRequestException: application-timeouts: invalid timeout type \"QUEUE\"; the only type is LIFETIME",
        ),
        (
            json!({"LIFETIME": 5, "lifetime": 6}),
            "400 BadRequestException: application-timeouts: LIFETIME is given twice",
        ),
    ] {
        let a = rm
            .submit_with_timeouts("alice", "a", timeouts.clone())
            .await;
        assert_eq!(a.error(), error, "{timeouts}");
    }
    let a = rm
        .submit_with_timeouts("alice", "a", json!({"LIFETIME": "soon"}))
        .await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    // No timeouts, or an empty set: no limit, shown as Hadoop shows it.
    for timeouts in [Value::Null, json!({})] {
        let a = rm.submit_with_timeouts("alice", "a", timeouts).await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    }
    expect![[r#"{"timeouts":{"timeout":[{"type":"LIFETIME","expiryTime":"UNLIMITED","remainingTimeInSeconds":-1}]}}"#]]
        .assert_eq(&rm.timeouts("application_1700000000000_0007").await);
    // In XML, the map's key is the element's name.
    let app = rm.new_app("alice").await;
    let xml = format!(
        "<application-submission-context><application-id>{app}</application-id><queue>a</queue><unmanaged-AM>true</unmanaged-AM><application-timeouts><LIFETIME>90</LIFETIME></application-timeouts></application-submission-context>"
    );
    let a = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/apps?user.name=alice",
        Some("application/xml"),
        &xml,
        &[],
    )
    .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    assert!(
        rm.timeouts(&app)
            .await
            .contains(r#""expiryTime":"2023-11-14T22:14:50.000+0000","remainingTimeInSeconds":90"#)
    );
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_owner_or_an_administrator_moves_an_expiry_into_the_future_only() {
    // The unmanaged AM never calls: its attempt must not fail first.
    let rm = Rm::with(&[("yarn.am.liveness-monitor.expiry-interval-ms", "7200000")]);
    let a = rm.submit_with_timeouts("alice", "a", Value::Null).await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let app = "application_1700000000000_0001";
    let later = "2023-11-14T22:23:20.000+0000";
    // An app without a lifetime gains one.
    let a = rm.set_expiry(app, "alice", lifetime(later)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    expect![[r#"{"timeout":{"type":"LIFETIME","expiryTime":"2023-11-14T22:23:20.000+0000","remainingTimeInSeconds":600}}"#]]
        .assert_eq(&a.body);
    // Earlier than the one in force is allowed, as in Hadoop; any offset
    // and RFC 3339's forms are read.
    let a = rm
        .set_expiry(app, "alice", lifetime("2023-11-14T23:18:20+01:00"))
        .await;
    assert_eq!(
        a.json()["timeout"]["expiryTime"],
        "2023-11-14T22:18:20.000+0000"
    );
    // The cluster administrator may too (an administrator of the queue as
    // well, as for a kill); another user may not; nobody may anonymously.
    let a = rm.set_expiry(app, "yarn", lifetime(later)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        rm.set_expiry(app, "bob", lifetime(later)).await.error(),
        "403 ForbiddenException: user bob may not change the lifetime of application application_1700000000000_0001 in queue root.a: only its owner, a user its MODIFY_APP ACL names, an administrator of its queue or a cluster administrator (yarn.admin.acl) may"
    );
    assert_eq!(
        put(
            &rm.router,
            &format!("/ws/v1/cluster/apps/{app}/timeout"),
            lifetime(later)
        )
        .await
        .status,
        StatusCode::UNAUTHORIZED
    );
    // Bad input says what is wrong and changes nothing.
    for (body, error) in [
        (
            lifetime("2023-11-14T22:13:20.000+0000"),
            format!(
                "400 BadRequestException: expiryTime {START} is not in the future (it is {START} now); give a later time"
            ),
        ),
        (
            lifetime("2001-01-01T00:00:00.000+0000"),
            format!(
                "400 BadRequestException: expiryTime 2001-01-01T00:00:00.000+0000 is not in the future (it is {START} now); give a later time"
            ),
        ),
        (
            lifetime("next tuesday"),
            "400 BadRequestException: expiryTime: \"next tuesday\" is not an ISO 8601 time (the date must be yyyy-MM-dd); write yyyy-MM-ddTHH:mm:ss.SSS+hhmm, for example 2030-01-31T18:30:00.000+0000".to_owned(),
        ),
        (
            lifetime("2030-02-30T00:00:00.000+0000"),
            "400 BadRequestException: expiryTime: \"2030-02-30T00:00:00.000+0000\" is not an ISO 8601 time (no such date); write yyyy-MM-ddTHH:mm:ss.SSS+hhmm, for example 2030-01-31T18:30:00.000+0000".to_owned(),
        ),
        (
            json!({"timeout": {"type": "QUEUE", "expiryTime": later}}),
            "400 BadRequestException: type: invalid timeout type \"QUEUE\"; the only type is LIFETIME".to_owned(),
        ),
        (
            json!({"timeout": {"expiryTime": later}}),
            "400 BadRequestException: type: missing: the timeout type is needed (LIFETIME)".to_owned(),
        ),
        (
            json!({"timeout": {"type": "LIFETIME"}}),
            "400 BadRequestException: expiryTime: missing: the new expiry time is needed, in ISO 8601 (2030-01-31T18:30:00.000+0000)".to_owned(),
        ),
    ] {
        assert_eq!(rm.set_expiry(app, "alice", body.clone()).await.error(), error, "{body}");
    }
    assert_eq!(
        rm.set_expiry(app, "alice", json!({"timeout": "LIFETIME"}))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    assert!(rm.timeouts(app).await.contains(later));
    // Unknown apps are 404s whatever the body; malformed ids 400s.
    assert_eq!(
        rm.set_expiry("application_1700000000000_0099", "alice", json!({}))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        rm.set_expiry("app_1", "alice", lifetime(later))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    // The bare fields are read too, and XML as Hadoop's clients send it.
    let a = rm
        .set_expiry(
            app,
            "alice",
            json!({"type": "LIFETIME", "expiryTime": "2023-11-14T22:33:20.000+0000"}),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let a = call(
        &rm.router,
        Method::PUT,
        &format!("/ws/v1/cluster/apps/{app}/timeout?user.name=alice"),
        Some("application/xml"),
        "<timeout><type>LIFETIME</type><expiryTime>2023-11-14T22:43:20.000+0000</expiryTime></timeout>",
        &[("accept", "application/xml")],
    )
    .await;
    assert!(
        a.body.ends_with("<timeout><type>LIFETIME</type><expiryTime>2023-11-14T22:43:20.000+0000</expiryTime><remainingTimeInSeconds>1800</remainingTimeInSeconds></timeout>"),
        "{}",
        a.body
    );
    // It holds: killed at the new expiry, not before.
    tokio::time::advance(Duration::from_secs(1799)).await;
    assert_eq!(rm.app_json(app).await["state"], "ACCEPTED");
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(rm.app_json(app).await["state"], "KILLED");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_lifetime_survives_a_restart_with_the_state_store() {
    let dir = std::env::temp_dir().join(format!("weft-lifetime-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let state = dir.display().to_string();
    let site = [("weft.rm.state-store.dir", state.as_str())];
    let service = testing::service_at(&site, testing::EPOCH);
    let rm = Rm::around(service);
    // 1: submitted with 10 minutes, moved to 20; 2: 5 minutes, which pass
    // while the RM is down; 3: no lifetime.
    for timeouts in [
        json!({"LIFETIME": 600}),
        json!({"LIFETIME": 300}),
        Value::Null,
    ] {
        let a = rm.submit_with_timeouts("alice", "a", timeouts).await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    }
    let first = "application_1700000000000_0001";
    let a = rm
        .set_expiry(first, "alice", lifetime("2023-11-14T22:33:20.000+0000"))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    rm.stop().await;

    // Back 400 s later by the wall clock.
    let service = testing::service_at(&site, testing::EPOCH + 400_000);
    let rm = Rm::around(service);
    let shown = |v: Value| {
        format!(
            "{} {} {}",
            v["state"],
            v["timeouts"]["timeout"][0]["expiryTime"],
            v["timeouts"]["timeout"][0]["remainingTimeInSeconds"]
        )
    };
    let mut seen = Vec::new();
    for seq in 1..=3 {
        seen.push(shown(
            rm.app_json(&format!("application_1700000000000_000{seq}"))
                .await,
        ));
    }
    expect![[r#"
        [
            "\"ACCEPTED\" \"2023-11-14T22:33:20.000+0000\" 800",
            "\"KILLED\" \"2023-11-14T22:18:20.000+0000\" 0",
            "\"ACCEPTED\" \"UNLIMITED\" -1",
        ]
    "#]]
    .assert_debug_eq(&seen);
    tokio::time::advance(Duration::from_secs(800)).await;
    assert_eq!(rm.app_json(first).await["state"], "KILLED");
    rm.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
