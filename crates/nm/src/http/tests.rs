//! Router tests of the node's `/logLevel` over a logging filter that is
//! only its directives: showing and setting a target's level with the
//! others kept, bad levels and targets refused, administrators only while
//! `yarn.acl.enable` is on (by name or by a group of `yarn.admin.acl`),
//! anyone while it is off, and an agent started without a filter; and of
//! its `/jmx` and `/metrics`: the node's bean through the RM's query rules,
//! Prometheus text, and `/jmx` kept to administrators when
//! `hadoop.security.instrumentation.requires.admin` says so; and of who
//! reads containers' reports and logs: with ACLs on, the app's owner, whom
//! its `VIEW_APP` names (by name or group) and the node's administrators
//! see all, anyone else (an anonymous caller too) gets reports withheld
//! and logs refused; with ACLs off, anyone sees all.

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
use weft_test_support::ScratchDir;

use super::{NodeApi, router};
use crate::agent::{AgentHandle, AppViewers};
use crate::dto::{ContainerDto, EXIT_CODE_INVALID};
use crate::health::Health;
use crate::launch::ContainerDirs;
use crate::metrics::NodeMetrics;

/// A node's router over `levels` (`None`: started without a filter), with
/// `yarn.acl.enable` as `acl_enable`, `yarn` the administrator and `sre` an
/// administering group, whose member `ops` is.
fn node(levels: Option<Arc<DirectivesOnly>>, acl_enable: bool) -> axum::Router {
    router(node_api(levels, acl_enable))
}

/// What `node` routes over.
fn node_api(levels: Option<Arc<DirectivesOnly>>, acl_enable: bool) -> NodeApi {
    let groups =
        GroupFile::parse("ops: ops sre\nerin: erin viewers\n").expect("the group file parses");
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
        filter_entity_list_by_user: false,
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

/// A directory of a test's own, removed when it ends.
/// A node's work directory for a test, removed at the end.
fn work_dir(name: &str) -> ScratchDir {
    ScratchDir::new(&format!("nm-router-{name}"))
}

/// Writes `text` as `container`'s stdout in `work`, where the agent's
/// launch puts it.
fn write_stdout(work: &ScratchDir, container: &str, text: &str) {
    let logs = ContainerDirs::of(work.path(), container.parse().unwrap()).logs;
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("stdout"), text).unwrap();
}

/// alice's app, which bob and the group `viewers` may view.
const ALICES: &str = "container_1_0001_01_000002";
/// carol's app, which nobody else may view.
const CAROLS: &str = "container_1_0002_01_000002";
/// A container from an RM that did not say whose it is.
const NOBODYS: &str = "container_1_0003_01_000002";
/// A container whose logs are on disk but which the agent has forgotten.
const FORGOTTEN: &str = "container_1_0004_01_000002";

fn running(id: &str, owner: Option<&str>, view: &str) -> (ContainerDto, AppViewers) {
    let container: weft_model::ContainerId = id.parse().unwrap();
    let dto = ContainerDto {
        id: id.to_owned(),
        app_id: container.app().to_string(),
        state: "RUNNING".to_owned(),
        exit_code: EXIT_CODE_INVALID,
        diagnostics: "the end of its stderr: password=hunter2".to_owned(),
        total_memory_needed_mb: 64,
        total_v_cores_needed: 1,
        is_am: false,
        pid: Some(4242),
        memory_used_mb: Some(12),
        node_id: "nm1:8042".to_owned(),
        container_logs_link: format!("http://nm1:8042/ws/v1/node/containers/{id}/logs"),
        user: owner.unwrap_or_default().to_owned(),
    };
    let viewers = AppViewers {
        owner: owner.map(str::to_owned),
        view: Acl::parse(view),
    };
    (dto, viewers)
}

/// A node that knows alice's, carol's and nobody's containers, with their
/// logs and the forgotten one's on disk, its ACLs on or off.
fn node_with_containers(work: &ScratchDir, acl_enable: bool) -> axum::Router {
    for c in [ALICES, CAROLS, NOBODYS, FORGOTTEN] {
        write_stdout(work, c, &format!("secret of {c}\n"));
    }
    let mut api = node_api(None, acl_enable);
    api.work_dir = work.path().to_owned();
    api.handle = AgentHandle::serving(vec![
        running(ALICES, Some("alice"), "bob viewers"),
        running(CAROLS, Some("carol"), " "),
        running(NOBODYS, None, " "),
    ]);
    router(api)
}

/// What each caller gets of `container`: its report (whole or withheld),
/// as listed and alone, its log listing and its stdout (status, and
/// whether the secret came).
async fn reads(nm: &axum::Router, container: &str) -> String {
    let mut out = String::new();
    for user in [
        "alice",
        "bob",
        "erin",
        "yarn",
        "ops",
        "carol",
        "(anonymous)",
    ] {
        let query = match user {
            "(anonymous)" => String::new(),
            u => format!("?user.name={u}"),
        };
        let shown = |body: &str| {
            if body.contains("hunter2") && body.contains("4242") {
                "whole"
            } else if body.contains(container) {
                "withheld"
            } else {
                "absent"
            }
        };
        let (_, list) = get(nm, &format!("/ws/v1/node/containers{query}")).await;
        let listed =
            serde_json::from_str::<serde_json::Value>(&list).unwrap()["containers"]["container"]
                .as_array()
                .and_then(|l| l.iter().find(|c| c["id"] == container).cloned())
                .map_or_else(|| "absent".to_owned(), |c| shown(&c.to_string()).to_owned());
        let (status, one) = get(nm, &format!("/ws/v1/node/containers/{container}{query}")).await;
        let one = if status == StatusCode::OK {
            shown(&one).to_owned()
        } else {
            status.as_u16().to_string()
        };
        let (logs, _) = get(
            nm,
            &format!("/ws/v1/node/containers/{container}/logs{query}"),
        )
        .await;
        let (stdout, text) = get(
            nm,
            &format!("/ws/v1/node/containerlogs/{container}/stdout{query}"),
        )
        .await;
        let secret = if text.starts_with("secret of") {
            " secret"
        } else {
            ""
        };
        out.push_str(&format!(
            "{user:<12} list {listed:<8} report {one:<8} logs {} stdout {}{secret}\n",
            logs.as_u16(),
            stdout.as_u16()
        ));
    }
    out
}

#[tokio::test]
async fn with_acls_on_only_the_apps_viewers_read_its_containers_logs() {
    let work = work_dir("acl-on");
    let nm = node_with_containers(&work, true);
    // The owner, whom VIEW_APP names (bob by name, erin by her group) and
    // the node's administrators (yarn by name, ops by group) see all;
    // carol and an anonymous caller get the report withheld and the logs
    // refused, 401 asking the anonymous one to say who they are.
    expect![[r#"
        alice        list whole    report whole    logs 200 stdout 200 secret
        bob          list whole    report whole    logs 200 stdout 200 secret
        erin         list whole    report whole    logs 200 stdout 200 secret
        yarn         list whole    report whole    logs 200 stdout 200 secret
        ops          list whole    report whole    logs 200 stdout 200 secret
        carol        list withheld report withheld logs 403 stdout 403
        (anonymous)  list withheld report withheld logs 401 stdout 401
    "#]]
    .assert_eq(&reads(&nm, ALICES).await);
    // carol's own app: nobody but her and the administrators.
    expect![[r#"
        alice        list withheld report withheld logs 403 stdout 403
        bob          list withheld report withheld logs 403 stdout 403
        erin         list withheld report withheld logs 403 stdout 403
        yarn         list whole    report whole    logs 200 stdout 200 secret
        ops          list whole    report whole    logs 200 stdout 200 secret
        carol        list whole    report whole    logs 200 stdout 200 secret
        (anonymous)  list withheld report withheld logs 401 stdout 401
    "#]]
    .assert_eq(&reads(&nm, CAROLS).await);
    // An RM that did not say whose: only the administrators.
    expect![[r#"
        alice        list withheld report withheld logs 403 stdout 403
        bob          list withheld report withheld logs 403 stdout 403
        erin         list withheld report withheld logs 403 stdout 403
        yarn         list whole    report whole    logs 200 stdout 200 secret
        ops          list whole    report whole    logs 200 stdout 200 secret
        carol        list withheld report withheld logs 403 stdout 403
        (anonymous)  list withheld report withheld logs 401 stdout 401
    "#]]
    .assert_eq(&reads(&nm, NOBODYS).await);
    // Forgotten: not listed, no report, logs only for administrators.
    expect![[r#"
        alice        list absent   report 404      logs 404 stdout 404
        bob          list absent   report 404      logs 404 stdout 404
        erin         list absent   report 404      logs 404 stdout 404
        yarn         list absent   report 404      logs 200 stdout 200 secret
        ops          list absent   report 404      logs 200 stdout 200 secret
        carol        list absent   report 404      logs 404 stdout 404
        (anonymous)  list absent   report 404      logs 404 stdout 404
    "#]]
    .assert_eq(&reads(&nm, FORGOTTEN).await);
}

/// The containers `/ws/v1/node/containers` lists to `user` (`None`:
/// naming nobody), each with `whole` or `withheld`.
async fn listed(nm: &axum::Router, user: Option<&str>) -> Vec<String> {
    let query = user.map(|u| format!("?user.name={u}")).unwrap_or_default();
    let (status, body) = get(nm, &format!("/ws/v1/node/containers{query}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_str::<serde_json::Value>(&body).unwrap()["containers"]["container"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let shown = if c["pid"].is_null() {
                "withheld"
            } else {
                "whole"
            };
            format!("{} {shown}", c["id"].as_str().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn filter_entity_list_by_user_leaves_out_the_containers_the_caller_may_not_view() {
    let work = work_dir("filter-list");
    let serving = || {
        AgentHandle::serving(vec![
            running(ALICES, Some("alice"), "bob viewers"),
            running(CAROLS, Some("carol"), " "),
        ])
    };
    let node = |acl_enable: bool, filter: bool| {
        let mut api = node_api(None, acl_enable);
        api.work_dir = work.path().to_owned();
        api.handle = serving();
        api.filter_entity_list_by_user = filter;
        router(api)
    };
    let nm = node(true, true);
    // The owner and whom VIEW_APP names see alice's; an administrator sees
    // both; carol only hers; an anonymous caller (Hadoop's static user)
    // neither. What is listed is whole.
    let alices = format!("{ALICES} whole");
    let carols = format!("{CAROLS} whole");
    for (who, seen) in [
        (Some("alice"), vec![alices.clone()]),
        (Some("bob"), vec![alices.clone()]),
        (Some("erin"), vec![alices.clone()]),
        (Some("yarn"), vec![alices.clone(), carols.clone()]),
        (Some("carol"), vec![carols.clone()]),
        (None, vec![]),
    ] {
        assert_eq!(listed(&nm, who).await, seen, "{who:?}");
    }
    // One container's report is still withheld, not refused.
    let (status, _) = get(
        &nm,
        &format!("/ws/v1/node/containers/{CAROLS}?user.name=alice"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // Off: listed and withheld; ACLs off: everybody sees everything.
    assert_eq!(
        listed(&node(true, false), Some("carol")).await,
        [format!("{ALICES} withheld"), carols.clone()]
    );
    assert_eq!(
        listed(&node(false, true), Some("carol")).await,
        [alices, carols]
    );
}

#[tokio::test]
async fn refusals_name_the_app_and_who_may_read() {
    let work = work_dir("acl-words");
    let nm = node_with_containers(&work, true);
    expect![[r#"
        (
            403,
            "403 user carol may not read the logs of container container_1_0001_01_000002 of application application_1_0001: only its owner (alice), a user or group its VIEW_APP ACL names, or an administrator of this node (yarn.admin.acl) may",
        )
    "#]]
    .assert_debug_eq(&get(&nm, &format!("/ws/v1/node/containerlogs/{ALICES}/stdout?user.name=carol")).await);
    expect![[r#"
        (
            401,
            "401 an anonymous caller may not read the logs of container container_1_0001_01_000002 of application application_1_0001 while yarn.acl.enable is on: add ?user.name=<user>; only its owner (alice), a user or group its VIEW_APP ACL names, or an administrator of this node (yarn.admin.acl) may",
        )
    "#]]
    .assert_debug_eq(&get(&nm, &format!("/ws/v1/node/containers/{ALICES}/logs")).await);
    expect![[r#"
        (
            403,
            "403 user alice may not read the logs of container container_1_0003_01_000002 of application application_1_0003: only a user or group its VIEW_APP ACL names, or an administrator of this node (yarn.admin.acl) may (the resource manager did not say who owns it)",
        )
    "#]]
    .assert_debug_eq(&get(&nm, &format!("/ws/v1/node/containers/{NOBODYS}/logs?user.name=alice")).await);
    expect![[r#"
        (
            404,
            "404 container container_1_0004_01_000002 is not known on this node (never allocated here, or ended long ago and forgotten), so who may read its logs is not known; only an administrator of this node (yarn.admin.acl) may read them",
        )
    "#]]
    .assert_debug_eq(&get(&nm, &format!("/ws/v1/node/containerlogs/{FORGOTTEN}/stdout?user.name=alice")).await);
    // A bad file name is refused before anyone is asked who may read it.
    assert_eq!(
        get(
            &nm,
            &format!("/ws/v1/node/containerlogs/{ALICES}/.hidden?user.name=carol")
        )
        .await
        .0,
        StatusCode::BAD_REQUEST
    );
    // A withheld report keeps what the container is, whose, and how it stands.
    let (_, body) = get(
        &nm,
        &format!("/ws/v1/node/containers/{ALICES}?user.name=carol"),
    )
    .await;
    let c: serde_json::Value = serde_json::from_str(&body).unwrap();
    expect![[r#"{"container":{"appId":"application_1_0001","containerLogsLink":"","diagnostics":"","exitCode":-1000,"id":"container_1_0001_01_000002","isAM":false,"nodeId":"nm1:8042","state":"RUNNING","totalMemoryNeededMB":64,"totalVCoresNeeded":1,"user":"alice"}}"#]]
        .assert_eq(&c.to_string());
}

#[tokio::test]
async fn with_acls_off_anyone_reads_every_containers_logs() {
    let work = work_dir("acl-off");
    let nm = node_with_containers(&work, false);
    expect![[r#"
        alice        list whole    report whole    logs 200 stdout 200 secret
        bob          list whole    report whole    logs 200 stdout 200 secret
        erin         list whole    report whole    logs 200 stdout 200 secret
        yarn         list whole    report whole    logs 200 stdout 200 secret
        ops          list whole    report whole    logs 200 stdout 200 secret
        carol        list whole    report whole    logs 200 stdout 200 secret
        (anonymous)  list whole    report whole    logs 200 stdout 200 secret
    "#]]
    .assert_eq(&reads(&nm, CAROLS).await);
    // Logs the agent has forgotten are read as before, by anyone.
    let (status, text) = get(
        &nm,
        &format!("/ws/v1/node/containerlogs/{FORGOTTEN}/stdout"),
    )
    .await;
    assert_eq!(
        (status, text.as_str()),
        (StatusCode::OK, "secret of container_1_0004_01_000002\n")
    );
}

#[tokio::test]
async fn everyone_is_an_administrator_under_the_default_admin_acl() {
    // yarn.admin.acl's default is `*`: with ACLs on, everyone still reads
    // everything, as on a Hadoop NodeManager.
    let work = work_dir("acl-star");
    write_stdout(&work, CAROLS, "secret\n");
    let mut api = node_api(None, true);
    api.work_dir = work.path().to_owned();
    api.acl = Arc::new(AclSettings {
        enabled: true,
        admins: Acl::everyone(),
    });
    api.handle = AgentHandle::serving(vec![running(CAROLS, Some("carol"), " ")]);
    let nm = router(api);
    for query in ["", "?user.name=bob"] {
        let (status, _) = get(
            &nm,
            &format!("/ws/v1/node/containerlogs/{CAROLS}/stdout{query}"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{query}");
    }
}
