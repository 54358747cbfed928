//! Router tests of the node's `/logLevel` over a logging filter that is
//! only its directives: showing and setting a target's level with the
//! others kept, bad levels and targets refused, administrators only while
//! `yarn.acl.enable` is on (by name or by a group of `yarn.admin.acl`),
//! anyone while it is off, and an agent started without a filter; and of
//! its `/jmx` and `/metrics`: the node's bean through the RM's query rules,
//! Prometheus text, and `/jmx` kept to administrators when
//! `hadoop.security.instrumentation.requires.admin` says so.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use expect_test::expect;
use http_body_util::BodyExt as _;
use tokio::sync::watch;
use tower::ServiceExt as _;
use weft_model::Resource;
use weft_queue_tree::{Acl, GroupFile};
use weft_rm::access::AclSettings;
use weft_rm::groups::{GroupCacheSettings, GroupSource, OsGroups, UserGroups};
use weft_rm::log_levels::{DirectivesOnly, LogLevels};

use super::{NodeApi, router};
use crate::agent::AgentHandle;
use crate::health::Health;
use crate::metrics::NodeMetrics;

/// A node's router over `levels` (`None`: started without a filter), with
/// `yarn.acl.enable` as `acl_enable`, `yarn` the administrator and `sre` an
/// administering group, whose member `ops` is.
fn node(levels: Option<Arc<DirectivesOnly>>, acl_enable: bool) -> axum::Router {
    router(node_api(levels, acl_enable))
}

/// What `node` routes over.
fn node_api(levels: Option<Arc<DirectivesOnly>>, acl_enable: bool) -> NodeApi {
    let groups = GroupFile::parse("ops: ops sre\n").expect("the group file parses");
    NodeApi {
        handle: AgentHandle::detached(),
        node: "nm1:8042".parse().unwrap(),
        work_dir: PathBuf::from("/nonexistent"),
        log_levels: levels.map(|l| l as Arc<dyn LogLevels>),
        acl: Arc::new(AclSettings {
            enabled: acl_enable,
            admins: Acl::parse("yarn sre"),
        }),
        instrumentation_requires_admin: false,
        groups: Arc::new(UserGroups::new(
            GroupSource::File(groups),
            GroupCacheSettings::default(),
            Arc::new(OsGroups),
        )),
        metrics: Arc::new(NodeMetrics::new(Resource::new(4096, 4))),
        health: watch::channel(Health {
            unhealthy: None,
            checked_ms: 0,
        })
        .1,
    }
}

/// `GET uri`: the status and the body, an error's as `status message`.
async fn get(router: &axum::Router, uri: &str) -> (StatusCode, String) {
    let req = Request::get(uri).body(Body::empty()).unwrap();
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    let body = String::from_utf8_lossy(&body).into_owned();
    if status.is_success() {
        return (status, body);
    }
    let error: serde_json::Value = serde_json::from_str(&body).expect("a RemoteException");
    let message = error["RemoteException"]["message"].as_str().unwrap_or("?");
    (status, format!("{} {message}", status.as_u16()))
}

#[tokio::test]
async fn a_targets_level_is_shown_and_set_and_the_others_kept() {
    let levels = Arc::new(DirectivesOnly::new("info,weft_rm=warn"));
    let nm = node(Some(levels.clone()), true);
    let (status, body) = get(&nm, "/logLevel?log=weft_nm::agent&user.name=yarn").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    expect![[r#"
        Target: weft_nm::agent
        Effective Level: INFO
        Directives: info,weft_rm=warn
    "#]]
    .assert_eq(&body);

    let (status, body) = get(
        &nm,
        "/logLevel?log=weft_nm::agent&level=debug&user.name=yarn",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    expect![[r#"
        Target: weft_nm::agent
        Submitted Level: debug
        Set Level: DEBUG
        Effective Level: DEBUG
        Directives: info,weft_rm=warn,weft_nm::agent=debug
    "#]]
    .assert_eq(&body);
    assert_eq!(
        levels.directives(),
        "info,weft_rm=warn,weft_nm::agent=debug"
    );

    // No target: every directive and the default's level.
    let (_, body) = get(&nm, "/logLevel?user.name=yarn").await;
    expect![[r#"
        Directives: info,weft_rm=warn,weft_nm::agent=debug
        Default Level: INFO
    "#]]
    .assert_eq(&body);
}

#[tokio::test]
async fn bad_levels_and_targets_are_refused_and_change_nothing() {
    let levels = Arc::new(DirectivesOnly::new("info"));
    let nm = node(Some(levels.clone()), true);
    for (uri, error) in [
        (
            "/logLevel?log=weft_nm&level=loud",
            "400 level \"loud\" is not a level: use one of TRACE, DEBUG, INFO, WARN, ERROR, OFF (or log4j's ALL and FATAL), in any case",
        ),
        (
            "/logLevel?log=org.apache.hadoop.yarn.server.nodemanager.NodeManager&level=debug",
            "400 target \"org.apache.hadoop.yarn.server.nodemanager.NodeManager\" looks like a Java class name; Weft's targets are Rust module paths such as weft_rm::actor or weft_core",
        ),
        (
            "/logLevel?log=weft_nm%3Ddebug&level=info",
            "400 target \"weft_nm=debug\" is not a module path: use letters, digits and _ in segments joined by :: (weft_rm::actor), or nothing for the default",
        ),
    ] {
        assert_eq!(
            get(&nm, &format!("{uri}&user.name=yarn")).await,
            (StatusCode::BAD_REQUEST, error.to_owned()),
            "{uri}"
        );
    }
    assert_eq!(levels.directives(), "info");
}

#[tokio::test]
async fn only_administrators_may_read_or_set_with_acls_on() {
    let levels = Arc::new(DirectivesOnly::new("info"));
    let nm = node(Some(levels.clone()), true);
    for uri in [
        "/logLevel?log=weft_nm&level=debug&user.name=bob",
        "/logLevel?log=weft_nm&user.name=bob",
    ] {
        assert_eq!(
            get(&nm, uri).await,
            (
                StatusCode::FORBIDDEN,
                "403 user bob is not a cluster administrator (yarn.admin.acl) and may not read or set log levels".to_owned()
            ),
            "{uri}"
        );
    }
    // An anonymous caller is refused as on the RM (and by Hadoop 3's check).
    assert_eq!(
        get(&nm, "/logLevel?log=weft_nm&level=debug").await,
        (
            StatusCode::FORBIDDEN,
            "403 an anonymous caller may not read or set log levels while yarn.acl.enable is on: add ?user.name=<an administrator>".to_owned()
        )
    );
    assert_eq!(levels.directives(), "info");
    // An administrator by name, then one by an administering group.
    let (status, body) = get(&nm, "/logLevel?log=weft_nm&level=debug&user.name=yarn").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = get(&nm, "/logLevel?log=weft_nm&level=trace&user.name=ops").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(levels.directives(), "info,weft_nm=trace");
}

#[tokio::test]
async fn with_acls_off_anyone_may() {
    let levels = Arc::new(DirectivesOnly::new("info"));
    let nm = node(Some(levels.clone()), false);
    let (status, body) = get(&nm, "/logLevel?log=weft_nm&level=warn").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = get(&nm, "/logLevel?log=&level=error&user.name=bob").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(levels.directives(), "weft_nm=warn,error");
}

#[tokio::test]
async fn an_agent_without_a_filter_says_so() {
    let nm = node(None, false);
    assert_eq!(
        get(&nm, "/logLevel?log=weft_nm").await,
        (
            StatusCode::NOT_FOUND,
            "404 this process's log levels cannot be changed while it runs: it was started without a reloadable logging filter (weft rm, weft nm and weft local have one)".to_owned()
        )
    );
}

#[tokio::test]
async fn jmx_answers_the_nodes_bean_by_hadoops_rules_and_metrics_is_text() {
    let nm = node(None, true);
    let (status, body) = get(&nm, "/jmx").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let beans: serde_json::Value = serde_json::from_str(&body).unwrap();
    let bean = &beans["beans"][0];
    assert_eq!(
        bean["name"],
        "Hadoop:service=NodeManager,name=NodeManagerMetrics"
    );
    assert_eq!(bean["modelerType"], "NodeManagerMetrics");
    assert_eq!(bean["tag.Hostname"], "nm1");
    assert_eq!(bean["AvailableGB"], 4);
    assert_eq!(beans["beans"].as_array().map(Vec::len), Some(1));
    // The servlet's patterns and `get`, as on the RM.
    let (_, body) = get(&nm, "/jmx?qry=Hadoop:service=ResourceManager,*").await;
    assert_eq!(body, r#"{"beans":[]}"#);
    let (status, body) = get(
        &nm,
        "/jmx?get=Hadoop:service=NodeManager,name=NodeManagerMetrics::AvailableVCores",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    expect![[r#"{"beans":[{"AvailableVCores":4,"modelerType":"NodeManagerMetrics","name":"Hadoop:service=NodeManager,name=NodeManagerMetrics"}]}"#]]
        .assert_eq(&body);

    let req = Request::get("/metrics").body(Body::empty()).unwrap();
    let res = nm.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        res.headers()[header::CONTENT_TYPE],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = res.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.lines()
            .any(|l| l == "weft_nm_capability_memory_bytes 4294967296"),
        "{text}"
    );
}

#[tokio::test]
async fn jmx_is_for_administrators_when_instrumentation_requires_admin() {
    let mut api = node_api(None, true);
    api.instrumentation_requires_admin = true;
    let nm = router(api);
    assert_eq!(
        get(&nm, "/jmx").await,
        (
            StatusCode::UNAUTHORIZED,
            "401 Unable to obtain user name, user not authenticated: add ?user.name=<user> to read /jmx (hadoop.security.instrumentation.requires.admin is true)".to_owned()
        )
    );
    assert_eq!(
        get(&nm, "/jmx?user.name=bob").await,
        (
            StatusCode::FORBIDDEN,
            "403 user bob is not a cluster administrator (yarn.admin.acl) and may not read /jmx (hadoop.security.instrumentation.requires.admin is true)".to_owned()
        )
    );
    for admin in ["yarn", "ops"] {
        let (status, body) = get(&nm, &format!("/jmx?user.name={admin}")).await;
        assert_eq!(status, StatusCode::OK, "{admin}: {body}");
    }
    // Prometheus's scrape stays open.
    let (status, _) = get(&nm, "/metrics").await;
    assert_eq!(status, StatusCode::OK);

    // With ACLs off everybody administers, but must still say who they are.
    let mut api = node_api(None, false);
    api.instrumentation_requires_admin = true;
    let nm = router(api);
    assert_eq!(get(&nm, "/jmx").await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(get(&nm, "/jmx?user.name=bob").await.0, StatusCode::OK);
}
