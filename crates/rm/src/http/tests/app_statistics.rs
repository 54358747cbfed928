//! Router tests of `GET /ws/v1/cluster/appstatistics`: counts by state for
//! any type and for one (types matched ignoring case), the states listed
//! when none is asked for, repeated and comma-separated parameters, XML,
//! and the refusals (an unknown state, more than one type).

use super::*;

impl Rm {
    /// A new app of `app_type` submitted by `user` to `queue`, accepted.
    async fn submit_typed(&self, user: &str, queue: &str, app_type: &str) -> String {
        let app = self.new_app(user).await;
        let a = post(
            &self.router,
            &format!("/ws/v1/cluster/apps?user.name={user}"),
            json!({"application-id": app, "application-name": "job", "queue": queue,
                   "application-type": app_type,
                   "resource": {"memory": 1024, "vCores": 1},
                   "am-container-spec": {"commands": {"command": "run-am"}}}),
        )
        .await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
        app
    }
}

/// The items of an answer, one line each: `STATE type count`.
fn items(a: &Answer) -> String {
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.json()["appStatInfo"]["statItem"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{} {} {}\n",
                i["state"].as_str().unwrap(),
                i["type"].as_str().unwrap(),
                i["count"]
            )
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn apps_are_counted_by_state_for_any_type_or_one() {
    let rm = Rm::new();
    let r = &rm.router;
    rm.register("h1:8041", 8192, 8).await;
    // RUNNING: one YARN app. ACCEPTED: two MapReduce (spelled two ways),
    // one Spark. KILLED: one MapReduce, one Spark.
    rm.running("alice", "a", "h1:8041", 0).await;
    rm.submit_typed("bob", "b", "MAPREDUCE").await;
    rm.submit_typed("bob", "b", "mapreduce").await;
    rm.submit_typed("carol", "b", "Spark").await;
    let killed_mr = rm.submit_typed("bob", "b", "MapReduce").await;
    let killed_spark = rm.submit_typed("carol", "b", "SPARK").await;
    for (app, owner) in [(&killed_mr, "bob"), (&killed_spark, "carol")] {
        let k = rm.kill(app, owner).await;
        assert!(k.status.is_success(), "{}", k.body);
    }

    // No parameters: every YARN state, in YARN's order, any type.
    let all = get(r, "/ws/v1/cluster/appstatistics").await;
    assert_eq!(all.headers["content-type"], "application/json");
    expect![[r#"
        NEW * 0
        NEW_SAVING * 0
        SUBMITTED * 0
        ACCEPTED * 3
        RUNNING * 1
        FINISHED * 0
        FAILED * 0
        KILLED * 2
    "#]]
    .assert_eq(&items(&all));
    // The trailing slash, as on every REST path.
    assert_eq!(get(r, "/ws/v1/cluster/appstatistics/").await.body, all.body);

    // One type, read ignoring case and written in lower case; the states
    // asked for only, zeros included, whatever case they are given in.
    expect![[r#"
        ACCEPTED mapreduce 2
        FINISHED mapreduce 0
        KILLED mapreduce 1
    "#]]
    .assert_eq(&items(
        &get(r, "/ws/v1/cluster/appstatistics?states=killed,Accepted&states=FINISHED&applicationTypes=MapReduce").await,
    ));
    // `*` is any type; one type named twice (in two cases) is one type;
    // empty values are not given.
    expect![[r#"
        ACCEPTED * 3
    "#]]
    .assert_eq(&items(
        &get(
            r,
            "/ws/v1/cluster/appstatistics?states=ACCEPTED&applicationTypes=*",
        )
        .await,
    ));
    expect![[r#"
        ACCEPTED spark 1
        KILLED spark 1
    "#]]
    .assert_eq(&items(
        &get(r, "/ws/v1/cluster/appstatistics?states=accepted,,killed&applicationTypes=spark,&applicationTypes=SPARK").await,
    ));
    // A type no app has counts zero, as in Hadoop.
    expect![[r#"
        RUNNING tez 0
    "#]]
    .assert_eq(&items(
        &get(
            r,
            "/ws/v1/cluster/appstatistics?states=RUNNING&applicationTypes=Tez",
        )
        .await,
    ));

    // XML, in Hadoop's element names.
    let xml = call(
        r,
        Method::GET,
        "/ws/v1/cluster/appstatistics?states=RUNNING&applicationTypes=yarn",
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(xml.headers["content-type"], "application/xml");
    expect![[r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><appStatInfo><statItem><state>RUNNING</state><type>yarn</type><count>1</count></statItem></appStatInfo>"#]]
    .assert_eq(&xml.body);

    // Refusals: an unknown state (named, with the valid ones), more than
    // one type (`*` counts as one), in JSON and XML alike.
    assert_eq!(
        get(r, "/ws/v1/cluster/appstatistics?states=RUNNING,SLEEPING")
            .await
            .error(),
        "400 BadRequestException: states: invalid application state \"SLEEPING\"; expected one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED"
    );
    assert_eq!(
        get(
            r,
            "/ws/v1/cluster/appstatistics?applicationTypes=MAPREDUCE,spark"
        )
        .await
        .error(),
        "400 BadRequestException: applicationTypes: 2 application types given (mapreduce, spark); statistics count one type at a time, or any type when none (or *) is given"
    );
    assert_eq!(
        get(
            r,
            "/ws/v1/cluster/appstatistics?applicationTypes=*&applicationTypes=yarn"
        )
        .await
        .status,
        StatusCode::BAD_REQUEST
    );
    let xml_error = call(
        r,
        Method::GET,
        "/ws/v1/cluster/appstatistics?states=GONE",
        None,
        "",
        &[("accept", "application/xml")],
    )
    .await;
    assert_eq!(xml_error.status, StatusCode::BAD_REQUEST);
    assert_eq!(xml_error.headers["content-type"], "application/xml");
    assert!(xml_error.body.contains("GONE"), "{}", xml_error.body);
    rm.stop().await;
}
