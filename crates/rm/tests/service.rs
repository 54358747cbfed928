//! The service from the outside, through its public API only: end to end
//! over TCP on `127.0.0.1:0` with the crate's own client, the YARN-style CLI
//! commands (`rmadmin -refreshNodes` with its waiting included; `application
//! -status` and `-list` the same across a restart, `applicationattempt` and
//! `container`), live reload of the allocation file (a good file, then a bad
//! one), the Prometheus text checked by the real `promtool`, and a short run
//! of the load generator. Time is tokio's paused clock: nothing sleeps on the
//! wall clock.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use expect_test::expect;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tower::ServiceExt;
use weft_model::{AppId, AttemptId, ContainerId};
use weft_rm::client::{ClientError, RmClient};
use weft_rm::reload::ReloadError;
use weft_rm::{Clock, RmConfig, Service, cli};

const EPOCH: u64 = 1_700_000_000_000;

const ALLOC: &str = r#"<allocations>
  <queue name="a"><weight>3</weight></queue>
  <queue name="b"><weight>1</weight></queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="reject"/>
  </queuePlacementPolicy>
</allocations>"#;

/// The same queues, with only `yarn` administering (root's default lets everybody).
const ALLOC_WITH_ADMINS: &str = r#"<allocations>
  <queue name="root">
    <aclAdministerApps>yarn</aclAdministerApps>
    <queue name="a"><weight>3</weight></queue>
    <queue name="b"><weight>1</weight></queue>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="reject"/>
  </queuePlacementPolicy>
</allocations>"#;

fn site(extra: &[(&str, &str)]) -> String {
    let base = [
        ("yarn.scheduler.minimum-allocation-mb", "1024"),
        ("yarn.scheduler.maximum-allocation-mb", "8192"),
        ("yarn.scheduler.fair.assignmultiple", "true"),
        ("weft.rm.view-refresh-ms", "0"),
    ];
    weft_test_support::site_xml(&[&base[..], extra].concat())
}

/// A running server on an ephemeral port, and how to stop it.
struct Server {
    url: String,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), weft_rm::ServeError>>,
}

async fn serve(config: RmConfig) -> Server {
    serve_at(config, EPOCH).await
}

/// `serve`, for an RM started `epoch_ms` by the wall clock.
async fn serve_at(config: RmConfig, epoch_ms: u64) -> Server {
    let service = Service::start(config, Clock::with_epoch_origin(epoch_ms)).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(service.serve(listener, async move {
        let _ = stopped.await;
    }));
    Server { url, stop, task }
}

impl Server {
    fn client(&self, user: &str) -> RmClient {
        RmClient::new(&self.url, Some(user.to_owned())).unwrap()
    }

    async fn shutdown(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }
}

async fn register(c: &mut RmClient, node: &str) {
    let _: Value = c
        .call(
            Method::POST,
            "/ws/v1/nm/register",
            Some(&json!({"nodeId": node, "rack": "/r1", "capability": {"memory": 8192, "vCores": 8}})),
        )
        .await
        .unwrap();
}

async fn heartbeat(c: &mut RmClient, node: &str, response_id: &mut u64) -> Value {
    let v: Value = c
        .call(
            Method::POST,
            "/ws/v1/nm/heartbeat",
            Some(&json!({"nodeId": node, "responseId": *response_id})),
        )
        .await
        .unwrap();
    *response_id = v["responseId"].as_u64().unwrap();
    v
}

/// The AM tokens a heartbeat answer hands over with AM containers, by app,
/// as the node would give each to the AM it launches.
fn am_tokens(hb: &Value) -> std::collections::BTreeMap<String, String> {
    hb["allocatedContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some((
                c["applicationId"].as_str()?.to_owned(),
                c["amRMToken"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

async fn submit(c: &mut RmClient, queue: &str) -> String {
    let app = c.new_application().await.unwrap().application_id;
    let body = json!({"application-id": app, "application-name": format!("job-{queue}"),
                      "queue": queue, "resource": {"memory": 1024, "vCores": 1}});
    c.submit_application(&body).await.unwrap();
    app
}

async fn allocate(c: &mut RmClient, app: &str, body: Value) -> Value {
    c.call(
        Method::POST,
        &format!("/ws/v1/am/{app}/allocate"),
        Some(&body),
    )
    .await
    .unwrap()
}

fn metric(text: &str, name_and_labels: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name_and_labels)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name_and_labels} in\n{text}"))
        .parse()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn end_to_end_over_tcp() {
    let server = serve(RmConfig::from_texts(&site(&[]), ALLOC).unwrap()).await;
    let mut nm = server.client("yarn");
    let mut alice = server.client("alice");
    let mut bob = server.client("bob");
    register(&mut nm, "n1:8041").await;
    register(&mut nm, "n2:8041").await;
    let mut ids = [0u64, 0u64];
    let nodes = ["n1:8041", "n2:8041"];

    // Two apps in two queues; the next heartbeats place their AMs.
    let a = submit(&mut alice, "a").await;
    let b = submit(&mut bob, "b").await;
    let mut tokens = std::collections::BTreeMap::new();
    for (node, id) in nodes.iter().zip(ids.iter_mut()) {
        tokens.extend(am_tokens(&heartbeat(&mut nm, node, id).await));
    }
    let mut am_a = server.client("yarn").with_bearer(&tokens[&a]);
    let mut am_b = server.client("yarn").with_bearer(&tokens[&b]);
    for (am, app) in [(&mut am_a, &a), (&mut am_b, &b)] {
        let _: Value = am
            .call(
                Method::POST,
                &format!("/ws/v1/am/{app}/register"),
                None::<&()>,
            )
            .await
            .unwrap();
    }
    // Each AM is refused with the other's token.
    let wrong = am_b
        .call::<Value>(
            Method::POST,
            &format!("/ws/v1/am/{a}/allocate"),
            Some(&json!({"responseId": 0})),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&wrong, ClientError::Remote { status, .. } if *status == StatusCode::FORBIDDEN),
        "{wrong}"
    );
    // Both want far more than the cluster has.
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "resourceName": "*",
        "capability": {"memory": 1024, "vCores": 1}, "numContainers": 40}]});
    allocate(&mut am_a, &a, ask.clone()).await;
    allocate(&mut am_b, &b, ask).await;
    // Fair shares are computed by the update pass; let it run, then schedule.
    tokio::time::sleep(Duration::from_millis(600)).await;
    for _ in 0..4 {
        for (node, id) in nodes.iter().zip(ids.iter_mut()) {
            heartbeat(&mut nm, node, id).await;
        }
    }
    let got_a = allocate(&mut am_a, &a, json!({"responseId": 1})).await;
    let got_b = allocate(&mut am_b, &b, json!({"responseId": 1})).await;
    let n_a = got_a["allocated"].as_array().unwrap().len();
    let n_b = got_b["allocated"].as_array().unwrap().len();
    // 16 slots: 12 for root.a (AM included), 4 for root.b, the 3:1 of their weights.
    assert_eq!((n_a + 1, n_b + 1), (12, 4));

    tokio::time::sleep(Duration::from_millis(600)).await;
    let s: Value = alice.get("/ws/v1/cluster/scheduler").await.unwrap();
    let root = &s["scheduler"]["schedulerInfo"]["rootQueue"];
    let queues: Vec<String> = root["childQueues"]["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            format!(
                "{} fair={} used={} steady={}",
                q["queueName"].as_str().unwrap(),
                q["fairResources"]["memory"],
                q["usedResources"]["memory"],
                q["steadyFairResources"]["memory"]
            )
        })
        .collect();
    expect![[r#"
        [
            "root.a fair=12288 used=12288 steady=9831",
            "root.b fair=4096 used=4096 steady=3277",
            "root.default fair=0 used=0 steady=3277",
        ]
    "#]]
    .assert_debug_eq(&queues);

    let answer = alice.request(Method::GET, "/metrics", None).await.unwrap();
    let text = String::from_utf8(answer.body.to_vec()).unwrap();
    assert_eq!(
        metric(
            &text,
            r#"weft_queue_fair_share_memory_bytes{queue="root.a"}"#
        ),
        12288.0 * 1048576.0
    );
    assert_eq!(
        metric(
            &text,
            r#"weft_queue_allocated_memory_bytes{queue="root.a"}"#
        ),
        12288.0 * 1048576.0
    );
    assert_eq!(
        metric(
            &text,
            r#"weft_queue_allocated_memory_bytes{queue="root.b"}"#
        ),
        4096.0 * 1048576.0
    );
    assert_eq!(
        metric(&text, r#"weft_queue_allocated_containers{queue="root"}"#),
        16.0
    );
    assert_eq!(metric(&text, r#"weft_cluster_available_memory_bytes"#), 0.0);
    assert_eq!(
        metric(&text, r#"weft_queue_apps_running{queue="root"}"#),
        2.0
    );
    assert!(
        metric(
            &text,
            "weft_scheduler_node_heartbeat_duration_seconds_count"
        ) >= 10.0
    );
    // Four answered, and the one refused for showing another app's token.
    assert_eq!(
        metric(&text, "weft_scheduler_allocate_duration_seconds_count"),
        5.0
    );
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn yarn_style_commands() {
    let server = serve(
        RmConfig::from_texts(
            &site(&[("yarn.acl.enable", "true"), ("yarn.admin.acl", "yarn")]),
            ALLOC_WITH_ADMINS,
        )
        .unwrap(),
    )
    .await;
    let mut nm = server.client("yarn");
    let mut alice = server.client("alice");
    register(&mut nm, "n1:8041").await;
    let a = submit(&mut alice, "a").await;
    let mut id = 0;
    heartbeat(&mut nm, "n1:8041", &mut id).await;
    let list = cli::application_list(&mut alice, &[], &[], &[])
        .await
        .unwrap();
    expect![[r#"
        Total number of applications (application-types: [], states: [SUBMITTED, ACCEPTED, RUNNING] and tags: []):1
                        Application-Id	    Application-Name	    Application-Type	      User	     Queue	             State	       Final-State	       Progress	                       Tracking-URL
        application_1700000000000_0001	               job-a	                YARN	     alice	    root.a	          ACCEPTED	         UNDEFINED	             0%	                                N/A
    "#]]
    .assert_eq(&list);
    let status = cli::application_status(&mut alice, &a).await.unwrap();
    assert!(status.contains("\tQueue : root.a\n"), "{status}");
    assert!(status.contains("\tAM Host : n1:8042\n"), "{status}");
    assert!(
        status.ends_with(
            "\tTimeoutType : LIFETIME\tExpiryTime : UNLIMITED\tRemainingTime : -1seconds\n"
        ),
        "{status}"
    );

    // Ten minutes from the client's clock; its status shows them.
    let now = weft_rm::iso8601::EpochMs(EPOCH as i64);
    let updated = cli::application_update_lifetime(&mut alice, &a, 600, now)
        .await
        .unwrap();
    expect![[r#"
        Updating timeout for given timeoutType: LIFETIME of an application application_1700000000000_0001
        Successfully updated LIFETIME of an application application_1700000000000_0001. New expiry time is 2023-11-14T22:23:20.000+0000
    "#]]
    .assert_eq(&updated);
    let status = cli::application_status(&mut alice, &a).await.unwrap();
    assert!(
        status.contains("\tExpiryTime : 2023-11-14T22:23:20.000+0000\t"),
        "{status}"
    );

    // Its AM container runs on n1 but the AM never registers here.
    let why = cli::application_explain(&mut alice, &a).await.unwrap();
    assert!(why.contains("\tOutlook : AWAITING_AM\n"), "{why}");

    let moved = cli::application_move(&mut alice, &a, "b").await.unwrap();
    expect![[r#"
        Moving application application_1700000000000_0001 to queue b
        Successfully completed move to root.b.
    "#]]
    .assert_eq(&moved);

    // The default cap (yarn.cluster.max-application-priority) is 0, and the
    // command says when the RM lowered what was asked, as Hadoop's does.
    let lowered = cli::application_priority(&mut alice, &a, 3).await.unwrap();
    expect![[r#"
        Updating priority of an application application_1700000000000_0001
        Updated the priority of application application_1700000000000_0001 to 0, the cluster's maximum application priority (yarn.cluster.max-application-priority), not 3
    "#]]
    .assert_eq(&lowered);
    let kept = cli::application_priority(&mut alice, &a, -1).await.unwrap();
    expect![[r#"
        Updating priority of an application application_1700000000000_0001
        Successfully updated the application application_1700000000000_0001 with priority -1
    "#]]
    .assert_eq(&kept);

    let queue = cli::queue_status(&mut alice, "b").await.unwrap();
    expect![[r#"
        Queue Information : 
        Queue Name : root.b
        	State : RUNNING
        	Scheduling Policy : fair
        	Weight : 1
        	Capacity : 0.0%
        	Current Capacity : 0.0%
        	Maximum Capacity : 100.0%
        	Used Resources : <memory:1024, vCores:1>
        	Fair Share : <memory:0, vCores:0>
        	Steady Fair Share : <memory:1638, vCores:0>
        	Default Node Label expression : <DEFAULT_PARTITION>
        	Accessible Node Labels : *
    "#]]
    .assert_eq(&queue);
    assert!(matches!(
        cli::queue_status(&mut alice, "nosuch").await,
        Err(ClientError::Remote {
            status: StatusCode::NOT_FOUND,
            ..
        })
    ));

    let nodes = cli::node_list(&mut alice, &[], false).await.unwrap();
    expect![[r#"
        Total Nodes:1
                 Node-Id	     Node-State	Node-Http-Address	Number-of-Running-Containers
                 n1:8041	        RUNNING	          n1:8042	                           1
    "#]]
    .assert_eq(&nodes);
    // No node in these states: an empty list.
    let lost = cli::node_list(&mut alice, &["LOST".to_owned()], false)
        .await
        .unwrap();
    assert!(lost.starts_with("Total Nodes:0\n"), "{lost}");
    let node = cli::node_status(&mut alice, "n1:8041").await.unwrap();
    assert!(node.contains("\tMemory-Used : 1024MB\n"), "{node}");

    // Whatever the ids typed, the RM judges them, and says what is wrong.
    let refused = |r: Result<String, ClientError>| match r {
        Err(ClientError::Remote { status, exception }) => {
            format!("{} {}", status.as_u16(), exception.message)
        }
        other => format!("{other:?}"),
    };
    let typed = format!("{a}/state");
    let answers = [
        refused(cli::application_status(&mut alice, &typed).await),
        refused(cli::application_status(&mut alice, "my app").await),
        refused(cli::application_kill(&mut alice, &["app?x=1".to_owned()]).await),
        refused(cli::application_move(&mut alice, "a#b", "b").await),
        refused(cli::application_priority(&mut alice, "%zz", 1).await),
        refused(cli::application_update_lifetime(&mut alice, "%zz", 1, now).await),
        refused(cli::node_status(&mut alice, "n1:8041/x").await),
    ];
    expect![[r#"
        [
            "400 invalid application id \"application_1700000000000_0001/state\": expected application_<clusterTimestamp>_<sequence>",
            "400 invalid application id \"my app\": expected application_<clusterTimestamp>_<sequence>",
            "400 invalid application id \"app?x=1\": expected application_<clusterTimestamp>_<sequence>",
            "400 invalid application id \"a#b\": expected application_<clusterTimestamp>_<sequence>",
            "400 invalid application id \"%zz\": expected application_<clusterTimestamp>_<sequence>",
            "400 invalid application id \"%zz\": expected application_<clusterTimestamp>_<sequence>",
            "400 invalid node id \"n1:8041/x\": expected host:port",
        ]
    "#]].assert_debug_eq(&answers);

    // bob may not kill alice's app; alice may; a second kill reports it ended.
    let mut bob = server.client("bob");
    let denied = cli::application_kill(&mut bob, std::slice::from_ref(&a)).await;
    assert!(
        matches!(
            &denied,
            Err(ClientError::Remote {
                status: StatusCode::FORBIDDEN,
                ..
            })
        ),
        "{denied:?}"
    );
    assert_eq!(
        cli::application_kill(&mut alice, std::slice::from_ref(&a))
            .await
            .unwrap(),
        format!("Killing application {a}\n")
    );
    assert_eq!(
        cli::application_kill(&mut alice, std::slice::from_ref(&a))
            .await
            .unwrap(),
        format!("Application {a} has already finished (KILLED)\n")
    );
    let all = cli::application_list(&mut alice, &["ALL".to_owned()], &[], &[])
        .await
        .unwrap();
    assert!(all.contains("KILLED"), "{all}");
    // Built-in configuration: nothing to refresh.
    let mut admin = server.client("yarn");
    let refresh = cli::rmadmin_refresh_queues(&mut admin).await;
    assert!(
        matches!(
            &refresh,
            Err(ClientError::Remote {
                status: StatusCode::BAD_REQUEST,
                ..
            })
        ),
        "{refresh:?}"
    );
    server.shutdown().await;
}

/// `weft node -list -states UNHEALTHY` lists the unhealthy nodes with their
/// health reports, and `weft node -status` shows the report.
#[tokio::test]
async fn node_commands_show_an_unhealthy_nodes_report() {
    let server = serve(RmConfig::from_texts(&site(&[]), ALLOC_WITH_ADMINS).unwrap()).await;
    let mut nm = server.client("yarn");
    register(&mut nm, "n1:8041").await;
    register(&mut nm, "n2:8041").await;
    let _: Value = nm
        .call(
            Method::POST,
            "/ws/v1/nm/heartbeat",
            Some(&json!({"nodeId": "n2:8041", "responseId": 0,
                         "nodeHealthStatus": {"isNodeHealthy": false, "healthReport": "ERROR /data1 is full"}})),
        )
        .await
        .unwrap();
    let mut alice = server.client("alice");
    let unhealthy = cli::node_list(&mut alice, &["UNHEALTHY".to_owned()], false)
        .await
        .unwrap();
    expect![[r#"
        Total Nodes:1
                 Node-Id	     Node-State	Node-Http-Address	Number-of-Running-Containers
                 n2:8041	      UNHEALTHY	          n2:8042	                           0
        	Health-Report : ERROR /data1 is full
    "#]]
    .assert_eq(&unhealthy);
    // Running nodes by default: the unhealthy one is not among them.
    let running = cli::node_list(&mut alice, &[], false).await.unwrap();
    assert!(running.starts_with("Total Nodes:1\n"), "{running}");
    assert!(!running.contains("n2:8041"), "{running}");
    let status = cli::node_status(&mut alice, "n2:8041").await.unwrap();
    assert!(status.contains("\tNode-State : UNHEALTHY\n"), "{status}");
    assert!(
        status.contains("\tHealth-Report : ERROR /data1 is full\n"),
        "{status}"
    );
    let status = cli::node_status(&mut alice, "n1:8041").await.unwrap();
    assert!(status.contains("\tHealth-Report : \n"), "{status}");
    server.shutdown().await;
}

/// `weft rmadmin -refreshNodes` in its three ways, over TCP: `-g -server`
/// leaves the drain to the RM; `-g -client` waits, then decommissions the
/// rest at its timeout, or sees the drain end, or stops waiting when told;
/// and `weft node -list -states DECOMMISSIONING` lists the draining nodes.
#[tokio::test(start_paused = true)]
async fn rmadmin_refresh_nodes_drains_and_waits() {
    let dir = temp_dir("refresh-nodes");
    let exclude = dir.join("nodes.exclude");
    std::fs::write(&exclude, "").unwrap();
    let server = serve(
        RmConfig::from_texts(
            &site(&[(
                "yarn.resourcemanager.nodes.exclude-path",
                &exclude.display().to_string(),
            )]),
            ALLOC,
        )
        .unwrap(),
    )
    .await;
    let hide = |text: &str| text.replace(&dir.display().to_string(), "<dir>");
    let mut nm = server.client("yarn");
    let mut alice = server.client("alice");
    let mut admin = server.client("yarn");
    let mut ids = [0u64; 3];
    for (i, n) in ["n1:8041", "n2:8041", "n3:8041"].iter().enumerate() {
        register(&mut nm, n).await;
        // One app's AM container on each node.
        submit(&mut alice, "a").await;
        heartbeat(&mut nm, n, &mut ids[i]).await;
    }
    type Stop = std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;
    let refresh = |how, stop: Stop| {
        let mut out = String::new();
        let mut admin = server.client("yarn");
        async move {
            let outcome =
                cli::rmadmin_refresh_nodes(&mut admin, how, Duration::from_secs(1), stop, |line| {
                    out.push_str(&line)
                })
                .await
                .unwrap();
            (outcome, out)
        }
    };

    // -server: the RM drains n1 with the timeout typed.
    std::fs::write(&exclude, "n1\n").unwrap();
    let (outcome, out) = refresh(
        cli::RefreshNodes::Server { timeout: Some(30) },
        Box::pin(std::future::pending()),
    )
    .await;
    assert_eq!(outcome, cli::RefreshNodesOutcome::Done);
    expect![[r#"
        n1:8041: RUNNING -> DECOMMISSIONING, timeout 30 s (n1 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path))
    "#]]
    .assert_eq(&hide(&out));
    let draining = cli::node_list(&mut admin, &["DECOMMISSIONING".to_owned()], false)
        .await
        .unwrap();
    expect![[r#"
        Total Nodes:1
                 Node-Id	     Node-State	Node-Http-Address	Number-of-Running-Containers
                 n1:8041	DECOMMISSIONING	          n1:8042	                           1
    "#]]
    .assert_eq(&draining);

    // -client with a timeout: the RM's own timeout goes, the command waits,
    // and at 3 s decommissions n1 at once.
    let (outcome, out) = refresh(
        cli::RefreshNodes::Client { timeout: Some(3) },
        Box::pin(std::future::pending()),
    )
    .await;
    assert_eq!(outcome, cli::RefreshNodesOutcome::Done);
    expect![[r#"
        n1:8041: DECOMMISSIONING -> DECOMMISSIONING, no timeout (n1 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path))
        [   1 s] still draining: n1:8041 (1 containers)
        [   2 s] still draining: n1:8041 (1 containers)
        [   3 s] still draining: n1:8041 (1 containers)
        graceful decommissioning not done in 3 s; decommissioning n1:8041 at once
        n1:8041: DECOMMISSIONING -> DECOMMISSIONED (n1 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path))
    "#]]
    .assert_eq(&hide(&out));

    // -client without a timeout: it waits until n2's drain ends (its app is
    // killed meanwhile).
    std::fs::write(&exclude, "n1\nn2\n").unwrap();
    let n2_app = "application_1700000000000_0002";
    let kill_later = async {
        tokio::time::sleep(Duration::from_millis(2500)).await;
        cli::application_kill(&mut alice, &[n2_app.to_owned()])
            .await
            .unwrap();
    };
    let ((outcome, out), ()) = tokio::join!(
        refresh(
            cli::RefreshNodes::Client { timeout: None },
            Box::pin(std::future::pending())
        ),
        kill_later
    );
    assert_eq!(outcome, cli::RefreshNodesOutcome::Done);
    expect![[r#"
        n2:8041: RUNNING -> DECOMMISSIONING, no timeout (n2 is listed in the exclude file <dir>/nodes.exclude (yarn.resourcemanager.nodes.exclude-path))
        [   1 s] still draining: n2:8041 (1 containers)
        [   2 s] still draining: n2:8041 (1 containers)
        graceful decommissioning done in 3 s
    "#]]
    .assert_eq(&hide(&out));

    // Told to stop waiting, it says which nodes keep draining.
    std::fs::write(&exclude, "n1\nn2\nn3\n").unwrap();
    let (outcome, _) = refresh(
        cli::RefreshNodes::Client { timeout: Some(-1) },
        Box::pin(tokio::time::sleep(Duration::from_millis(1500))),
    )
    .await;
    assert_eq!(
        outcome,
        cli::RefreshNodesOutcome::Interrupted {
            draining: vec!["n3:8041".to_owned()]
        }
    );
    let n3: Value = admin.get("/ws/v1/cluster/nodes/n3:8041").await.unwrap();
    assert_eq!(n3["node"]["state"], "DECOMMISSIONING");

    // Forced, the last one goes at once.
    let (_, out) = refresh(cli::RefreshNodes::Forced, Box::pin(std::future::pending())).await;
    assert!(
        out.starts_with("n3:8041: DECOMMISSIONING -> DECOMMISSIONED"),
        "{out}"
    );
    server.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `weft rmadmin -refreshNodesResources` prints each node it resized, the
/// nodes the file names that are not registered, and the file's warnings;
/// a bad file fails the command with the RM's words.
#[tokio::test(start_paused = true)]
async fn rmadmin_refresh_nodes_resources_prints_what_changed() {
    let dir = temp_dir("refresh-nodes-resources");
    std::fs::write(dir.join("weft-site.xml"), site(&[])).unwrap();
    std::fs::write(dir.join("fair-scheduler.xml"), ALLOC).unwrap();
    let file = dir.join("dynamic-resources.xml");
    let server = serve(RmConfig::load(Some(&dir)).unwrap()).await;
    let hide = |text: &str| text.replace(&dir.display().to_string(), "<dir>");
    let mut nm = server.client("yarn");
    let mut admin = server.client("yarn");
    register(&mut nm, "n1:8041").await;
    register(&mut nm, "n2:8041").await;

    let out = cli::rmadmin_refresh_nodes_resources(&mut admin)
        .await
        .unwrap();
    expect![[r#"
        <dir>/dynamic-resources.xml does not exist: no node has a configured size, and nodes register with their own (a node resized before keeps its size until it registers again)
    "#]]
    .assert_eq(&hide(&out));

    std::fs::write(
        &file,
        weft_test_support::site_xml(&[
            ("yarn.resource.dynamic.nodes", "n1:8041, n2:8041, n3:8041"),
            ("yarn.resource.dynamic.n1:8041.memory", "4096"),
            ("yarn.resource.dynamic.n1:8041.vcores", "4"),
            ("yarn.resource.dynamic.n2:8041.memory", "8192"),
            ("yarn.resource.dynamic.n2:8041.vcores", "8"),
            ("yarn.resource.dynamic.n3:8041.memory", "2048"),
            ("yarn.resource.dynamic.n3:8041.vcores", "2"),
            ("yarn.resource.dynamic.n3:8041.vcore", "2"),
        ]),
    )
    .unwrap();
    let out = cli::rmadmin_refresh_nodes_resources(&mut admin)
        .await
        .unwrap();
    expect![[r#"
        n1:8041: 8192 MB, 8 vcores -> 4096 MB, 4 vcores
        not registered, sized when they register: n3:8041
        warning: <dir>/dynamic-resources.xml: line 9, column 59: unknown property yarn.resource.dynamic.n3:8041.vcore (a typo?) is ignored: a node's properties are yarn.resource.dynamic.<host:port>.memory, .vcores and .overcommittimeout
    "#]]
    .assert_eq(&hide(&out));
    let listed = cli::node_status(&mut admin, "n1:8041").await.unwrap();
    assert!(listed.contains("Memory-Capacity : 4096MB"), "{listed}");

    let out = cli::rmadmin_refresh_nodes_resources(&mut admin)
        .await
        .unwrap();
    expect![[r#"
        no registered node changes size: <dir>/dynamic-resources.xml gives 3 nodes a size, and each registered one has it already
        not registered, sized when they register: n3:8041
        warning: <dir>/dynamic-resources.xml: line 9, column 59: unknown property yarn.resource.dynamic.n3:8041.vcore (a typo?) is ignored: a node's properties are yarn.resource.dynamic.<host:port>.memory, .vcores and .overcommittimeout
    "#]]
    .assert_eq(&hide(&out));

    std::fs::write(
        &file,
        weft_test_support::site_xml(&[("yarn.resource.dynamic.nodes", "n1:8041")]),
    )
    .unwrap();
    let e = cli::rmadmin_refresh_nodes_resources(&mut admin)
        .await
        .unwrap_err();
    expect![[r#"
        400 Bad Request: the dynamic resources file <dir>/dynamic-resources.xml is invalid, so none of it is used:
          line 2, column 51: property yarn.resource.dynamic.nodes: n1:8041 is listed, but yarn.resource.dynamic.n1:8041.memory is not set: give its memory too
          line 2, column 51: property yarn.resource.dynamic.nodes: n1:8041 is listed, but yarn.resource.dynamic.n1:8041.vcores is not set: give its vcores too
        (nothing changed: the sizes in force stay)"#]]
    .assert_eq(&hide(&e.to_string()));
    server.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_cli_shows_ended_apps_the_same_after_a_restart_with_the_state_store() {
    let dir = temp_dir("cli-history");
    let state = dir.join("state").display().to_string();
    let config =
        || RmConfig::from_texts(&site(&[("weft.rm.state-store.dir", &state)]), ALLOC).unwrap();
    let server = serve(config()).await;
    let mut nm = server.client("yarn");
    let mut alice = server.client("alice");
    register(&mut nm, "n1:8041").await;
    let done = submit(&mut alice, "a").await;
    let killed = submit(&mut alice, "b").await;
    let mut id = 0;
    let tokens = am_tokens(&heartbeat(&mut nm, "n1:8041", &mut id).await);
    let mut am = server.client("alice").with_bearer(&tokens[&done]);
    let _: Value = am
        .call(
            Method::POST,
            &format!("/ws/v1/am/{done}/register"),
            Some(
                &json!({"host": "am-host", "rpcPort": 4040, "trackingUrl": "http://am-host:4041/"}),
            ),
        )
        .await
        .unwrap();
    tokio::time::advance(Duration::from_secs(7)).await;
    let _: Value = am
        .call(
            Method::POST,
            &format!("/ws/v1/am/{done}/finish"),
            Some(&json!({"finalStatus": "SUCCEEDED", "diagnostics": "all done"})),
        )
        .await
        .unwrap();
    cli::application_kill(&mut alice, std::slice::from_ref(&killed))
        .await
        .unwrap();
    let ended = ["FINISHED".to_owned(), "KILLED".to_owned()];
    let shown = async |c: &mut RmClient| {
        let mut out = cli::application_list(c, &ended, &[], &[]).await.unwrap();
        for app in [&done, &killed] {
            out.push_str(&cli::application_status(c, app).await.unwrap());
        }
        out
    };
    let before = shown(&mut alice).await;
    assert!(
        before.contains("]):2\n") && before.contains("\tAM RPC Address : am-host:4040\n"),
        "{before}"
    );
    server.shutdown().await;

    tokio::time::advance(Duration::from_secs(60)).await;
    let server = serve_at(config(), EPOCH + 67_000).await;
    let mut alice = server.client("alice");
    assert_eq!(shown(&mut alice).await, before);
    server.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_at(path: &Path, text: &str, mtime: SystemTime) {
    std::fs::write(path, text).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(mtime).unwrap();
}

async fn get_json(router: &axum::Router, uri: &str) -> (StatusCode, Value) {
    let res = router
        .clone()
        .oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn queue_names(scheduler: &Value) -> Vec<String> {
    scheduler["scheduler"]["schedulerInfo"]["rootQueue"]["childQueues"]["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["queueName"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn allocation_file_reload_good_then_bad() {
    let dir = temp_dir("reload");
    let alloc = dir.join("fair-scheduler.xml");
    std::fs::write(
        dir.join("weft-site.xml"),
        site(&[("yarn.admin.acl", "yarn")]),
    )
    .unwrap();
    let t0 = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    write_at(&alloc, ALLOC, t0);
    let config = RmConfig::load(Some(&dir)).unwrap();
    let service = Service::start(config, Clock::with_epoch_origin(EPOCH)).unwrap();
    let router = service.router();
    let reloader = service.reloader().clone();

    // Nothing changed: nothing to do.
    assert!(reloader.poll(t0 + Duration::from_secs(100)).await.is_none());

    // A good change is loaded once it is 5 s old.
    let t1 = t0 + Duration::from_secs(200);
    write_at(
        &alloc,
        &ALLOC.replace(
            "<queuePlacementPolicy>",
            "<queue name=\"c\"/>\n  <queuePlacementPolicy>",
        ),
        t1,
    );
    assert!(reloader.poll(t1 + Duration::from_secs(1)).await.is_none());
    let done = reloader
        .poll(t1 + Duration::from_secs(6))
        .await
        .unwrap()
        .unwrap();
    assert!(done.warnings.is_empty());
    let (_, s) = get_json(&router, "/ws/v1/cluster/scheduler").await;
    assert_eq!(
        queue_names(&s),
        ["root.a", "root.b", "root.c", "root.default"]
    );
    assert_eq!(
        s["scheduler"]["schedulerInfo"]["allocationFile"]["reloadsSucceeded"],
        2
    );

    // A bad change keeps the old configuration, says why, and is counted.
    let t2 = t1 + Duration::from_secs(200);
    let bad = "<allocations>\n  <queue name=\"a\"><weight>-1</weight></queue>\n  <queue name=\"b\"><schedulingPolicy>best</schedulingPolicy><maxRunningapps>2</maxRunningapps></queue>\n</allocations>";
    write_at(&alloc, bad, t2);
    let failed = reloader.poll(t2 + Duration::from_secs(6)).await.unwrap();
    assert!(
        matches!(failed, Err(ReloadError::Invalid { .. })),
        "{failed:?}"
    );
    let (_, s) = get_json(&router, "/ws/v1/cluster/scheduler").await;
    assert_eq!(
        queue_names(&s),
        ["root.a", "root.b", "root.c", "root.default"]
    );
    let file = &s["scheduler"]["schedulerInfo"]["allocationFile"];
    assert_eq!(file["reloadsFailed"], 1);
    expect![[r#"
        2:19: allocations/queue[@name="a"]/weight: "-1" is negative; expected a non-negative decimal number such as 1 or 2.5
        3:19: allocations/queue[@name="b"]/schedulingPolicy: unknown scheduling policy "best" (expected fair, fifo or drf)
        warnings, which may explain the problems:
        3:60: allocations/queue[@name="b"]/maxRunningapps: unknown element <maxRunningapps> in a queue element is ignored; did you mean <maxRunningApps>?"#]]
    .assert_eq(file["lastError"].as_str().unwrap());
    let text = service.metrics().render();
    assert_eq!(
        metric(&text, r#"weft_alloc_file_reloads_total{outcome="failure"}"#),
        1.0
    );
    assert_eq!(
        metric(&text, r#"weft_alloc_file_reloads_total{outcome="success"}"#),
        2.0
    );
    // When it failed, later than the last success: what an alert needs to
    // tell that the file on disk is not the one in force.
    let at = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    assert_eq!(
        metric(&text, "weft_alloc_file_last_failure_timestamp_seconds"),
        at(t2 + Duration::from_secs(6))
    );
    assert_eq!(
        metric(&text, "weft_alloc_file_last_success_timestamp_seconds"),
        at(t1 + Duration::from_secs(6))
    );
    // The same broken version is not tried again.
    assert!(reloader.poll(t2 + Duration::from_secs(60)).await.is_none());

    // refresh-queues reports the problems to the admin...
    let post = |user: &str| {
        Request::builder()
            .method(Method::POST)
            .uri(format!("/ws/v1/cluster/refresh-queues?user.name={user}"))
            .body(Body::empty())
            .unwrap()
    };
    let res = router.clone().oneshot(post("yarn")).await.unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    // ...with the warnings, which are often the clue.
    let body = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .unwrap();
    let body = String::from_utf8_lossy(&body);
    assert!(body.contains("unknown scheduling policy"), "{body}");
    assert!(body.contains("did you mean <maxRunningApps>?"), "{body}");
    // ...and loads a fixed file at once, whatever its age.
    write_at(&alloc, ALLOC, t2 + Duration::from_secs(100));
    let res = router.clone().oneshot(post("yarn")).await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let (_, s) = get_json(&router, "/ws/v1/cluster/scheduler").await;
    let file = &s["scheduler"]["schedulerInfo"]["allocationFile"];
    assert_eq!(
        (
            file["reloadsSucceeded"].as_u64(),
            file["lastError"].as_str()
        ),
        (Some(3), None)
    );
    // root.c is no longer configured; it stays as a dynamic queue until empty queues are pruned.
    assert!(queue_names(&s).contains(&"root.a".to_owned()));
    service.stop().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(start_paused = true)]
async fn decisions_are_logged_as_json_lines() {
    let dir = temp_dir("events");
    let log = dir.join("decisions.jsonl");
    let mut config = RmConfig::from_texts(&site(&[]), ALLOC).unwrap();
    config.service.event_log = Some(log.clone());
    let audit = dir.join("audit.log");
    config.service.audit_log = Some(audit.clone());
    let server = serve(config).await;
    let mut nm = server.client("yarn");
    let mut alice = server.client("alice");
    register(&mut nm, "n1:8041").await;
    let app = submit(&mut alice, "a").await;
    let mut id = 0;
    heartbeat(&mut nm, "n1:8041", &mut id).await;
    server.shutdown().await;
    // Over TCP the audit lines carry the caller's address.
    let audit = std::fs::read_to_string(&audit).unwrap();
    assert!(
        audit.contains(&format!(
            "USER=alice\tIP=127.0.0.1\tOPERATION=Submit Application Request\tTARGET=ClientRMService\tRESULT=SUCCESS\tAPPID={app}\n"
        )),
        "{audit}"
    );
    // The log is flushed at shutdown; every line is one JSON object.
    let text = std::fs::read_to_string(&log).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .filter(|k| *k != "Updated")
        .collect();
    assert_eq!(
        kinds,
        ["NodeAdded", "AppStateChanged", "ContainerAllocated"]
    );
    let alloc = events
        .iter()
        .find(|e| e["event"] == "ContainerAllocated")
        .unwrap();
    assert_eq!(
        alloc["container"],
        format!("container_{}_01_000001", &app["application_".len()..])
    );
    assert_eq!(alloc["isAM"], true);
    assert_eq!(alloc["queue"], "root.a");
    assert!(alloc["time"].as_u64().unwrap() >= EPOCH);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(start_paused = true)]
async fn metrics_pass_promtool() {
    let server = serve(RmConfig::from_texts(&site(&[]), ALLOC).unwrap()).await;
    let mut nm = server.client("yarn");
    let mut alice = server.client("alice");
    register(&mut nm, "n1:8041").await;
    let a = submit(&mut alice, "a").await;
    let mut id = 0;
    let tokens = am_tokens(&heartbeat(&mut nm, "n1:8041", &mut id).await);
    let mut am = server.client("yarn").with_bearer(&tokens[&a]);
    let _: Value = am
        .call(
            Method::POST,
            &format!("/ws/v1/am/{a}/register"),
            None::<&()>,
        )
        .await
        .unwrap();
    allocate(&mut am, &a, json!({"responseId": 0, "asks": [{"priority": 1, "capability": {"memory": 1024, "vCores": 1}, "numContainers": 3}]})).await;
    heartbeat(&mut nm, "n1:8041", &mut id).await;
    // A node reporting its use, so the utilization gauges have figures.
    let _: Value = nm
        .call(
            Method::POST,
            "/ws/v1/nm/heartbeat",
            Some(&json!({"nodeId": "n1:8041", "responseId": id,
                "nodeUtilization": {"pmem": 3000, "vmem": 5000, "cpu": 1.25},
                "containersUtilization": {"pmem": 700, "vmem": 2000, "cpu": 0.75}})),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let answer = alice.request(Method::GET, "/metrics", None).await.unwrap();
    let text = String::from_utf8(answer.body.to_vec()).unwrap();
    server.shutdown().await;

    weft_test_support::assert_promtool_accepts_metrics(&text);
    // Every family the service documents is there.
    for name in [
        "weft_queue_apps_submitted_total",
        "weft_queue_steady_fair_share_memory_bytes",
        "weft_cluster_nodes",
        "weft_scheduler_update_duration_seconds",
        "weft_scheduler_preemption_kills_total",
        "weft_alloc_file_reloads_total",
        "weft_scheduler_snapshot_age_seconds",
        "weft_scheduler_queued_commands",
        "weft_cluster_node_heartbeat_max_age_seconds",
        "weft_queue_containers_allocated_total",
        "weft_queue_containers_released_total",
        "weft_queue_max_running_apps",
        "weft_queue_am_limit_memory_bytes",
        "weft_cluster_utilization_reporting_nodes",
        "weft_cluster_node_used_memory_bytes",
        "weft_cluster_node_used_cpu_cores",
        "weft_cluster_containers_used_memory_bytes",
        "weft_cluster_containers_used_cpu_cores",
    ] {
        assert!(text.contains(&format!("# TYPE {name} ")), "no {name}");
    }
    assert!(
        text.lines()
            .any(|l| l == "weft_cluster_containers_used_cpu_cores 0.75"),
        "{text}"
    );
}

#[tokio::test(start_paused = true)]
async fn load_generator_drives_a_live_rm() {
    let server = serve(RmConfig::from_texts(&site(&[]), ALLOC).unwrap()).await;
    let report = weft_rm::load::run(weft_rm::load::LoadConfig {
        rm: server.url.clone(),
        nodes: 4,
        apps: 2,
        containers_per_app: 3,
        container_runtime: Duration::from_millis(200),
        heartbeat_interval: Some(Duration::from_millis(100)),
        am_interval: Duration::from_millis(100),
        queues: vec!["a".to_owned(), "b".to_owned()],
        node_connections: 2,
        am_connections: 1,
        warmup: Duration::from_millis(500),
        duration: Duration::from_secs(5),
        ..weft_rm::load::LoadConfig::default()
    })
    .await
    .unwrap();
    assert_eq!(report.errors, 0, "{report}");
    assert!(report.heartbeats > 100, "{report}");
    assert!(report.containers_allocated >= 3, "{report}");
    assert!(report.apps_finished >= 1, "{report}");
    // The run ends what it left: the two apps alive at the end (one app in
    // flight at most per AM worker besides), and its four nodes.
    let ending = &report.ending;
    assert!(ending.apps_ended() >= 2, "{report}");
    assert_eq!((ending.left, ending.nodes_unregistered), (0, 4), "{report}");
    assert_eq!(alive_apps(&server).await, Vec::<String>::new(), "{report}");
    assert_eq!(running_nodes(&server).await, 0, "{report}");
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn load_generator_shows_the_node_secret_the_rm_asks_for() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = temp_dir("load-node-secret");
    let file = dir.join("node.secret");
    std::fs::write(&file, "0123456789abcdef0123456789abcdef\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = file.display().to_string();
    let server =
        serve(RmConfig::from_texts(&site(&[("weft.nm.secret.file", &path)]), ALLOC).unwrap()).await;
    let config = |node_secret| weft_rm::load::LoadConfig {
        rm: server.url.clone(),
        nodes: 2,
        apps: 1,
        containers_per_app: 2,
        container_runtime: Duration::from_millis(100),
        heartbeat_interval: Some(Duration::from_millis(100)),
        am_interval: Duration::from_millis(100),
        queues: vec!["a".to_owned()],
        node_connections: 1,
        am_connections: 1,
        warmup: Duration::from_millis(200),
        duration: Duration::from_secs(2),
        node_secret,
        ..weft_rm::load::LoadConfig::default()
    };
    let secret = weft_rm::node_secret::NodeSecret::read(&file).unwrap();
    let report = weft_rm::load::run(config(Some(secret))).await.unwrap();
    assert_eq!(report.errors, 0, "{report}");
    assert!(report.apps_finished >= 1, "{report}");
    assert_eq!(report.ending.nodes_unregistered, 2, "{report}");
    // Without it, its nodes are refused and nothing runs.
    let report = weft_rm::load::run(config(None)).await.unwrap();
    assert!(report.errors > 0, "{report}");
    assert_eq!(report.heartbeats, 0, "{report}");
    assert_eq!(running_nodes(&server).await, 0, "{report}");
    server.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Apps the RM has not ended.
async fn alive_apps(server: &Server) -> Vec<String> {
    let v: Value = server
        .client("yarn")
        .get("/ws/v1/cluster/apps?states=NEW,NEW_SAVING,SUBMITTED,ACCEPTED,RUNNING")
        .await
        .unwrap();
    v["apps"]["app"]
        .as_array()
        .map(|apps| {
            apps.iter()
                .map(|a| format!("{} {}", a["id"], a["state"]))
                .collect()
        })
        .unwrap_or_default()
}

async fn running_nodes(server: &Server) -> usize {
    let v: Value = server
        .client("yarn")
        .get("/ws/v1/cluster/nodes?states=RUNNING")
        .await
        .unwrap();
    v["nodes"]["node"].as_array().map_or(0, Vec::len)
}

#[tokio::test(start_paused = true)]
async fn load_generator_ends_its_apps_when_interrupted() {
    let server = serve(RmConfig::from_texts(&site(&[]), ALLOC).unwrap()).await;
    // Containers that outlive the run: every app is alive when it stops,
    // some with their AM registered, some still waiting for one.
    let config = weft_rm::load::LoadConfig {
        rm: server.url.clone(),
        nodes: 2,
        apps: 6,
        containers_per_app: 4,
        container_runtime: Duration::from_secs(3600),
        container: weft_rm::dto::ResourceDto {
            memory: 4096,
            vcores: 1,
        },
        heartbeat_interval: Some(Duration::from_millis(100)),
        am_interval: Duration::from_millis(100),
        queues: vec!["a".to_owned()],
        node_connections: 1,
        am_connections: 2,
        warmup: Duration::from_millis(500),
        duration: Duration::from_secs(60),
        ..weft_rm::load::LoadConfig::default()
    };
    let started = tokio::time::Instant::now();
    let interrupt = tokio::time::sleep(Duration::from_secs(3));
    let report = weft_rm::load::run_until(config, interrupt).await.unwrap();
    assert!(report.interrupted, "{report}");
    assert!(started.elapsed() < Duration::from_secs(10), "{report}");
    // The window is what was counted, not what was asked for.
    assert!(report.window < Duration::from_secs(3), "{report}");
    let ending = &report.ending;
    // All six were submitted in the warm-up, before anything was counted.
    assert_eq!(ending.apps_ended(), 6, "{report}");
    assert!(ending.finished >= 1 && ending.killed >= 1, "{report}");
    assert_eq!(report.errors, 0, "{report}");
    assert_eq!(alive_apps(&server).await, Vec::<String>::new(), "{report}");
    assert!(report.to_string().contains("(interrupted)"), "{report}");
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn load_generator_counts_apps_the_rm_failed() {
    let server = serve(RmConfig::from_texts(&site(&[]), ALLOC).unwrap()).await;
    // The placement policy refuses a queue it does not have, which the RM
    // answers 202 and shows as the app's state only.
    let report = weft_rm::load::run(weft_rm::load::LoadConfig {
        rm: server.url.clone(),
        nodes: 2,
        apps: 3,
        heartbeat_interval: Some(Duration::from_millis(100)),
        queues: vec!["nosuch".to_owned()],
        node_connections: 1,
        am_connections: 1,
        warmup: Duration::from_millis(200),
        duration: Duration::from_secs(2),
        ..weft_rm::load::LoadConfig::default()
    })
    .await
    .unwrap();
    assert_eq!(report.containers_allocated, 0, "{report}");
    assert_eq!(report.apps_failed, 3, "{report}");
    assert_eq!(report.errors, 3, "{report}");
    assert_eq!(report.ending.apps_ended(), 0, "{report}");
    let why = report.first_failure.as_deref().unwrap_or_default();
    assert!(why.contains("rejected by placement rules"), "{report}");
    assert!(
        report
            .to_string()
            .contains("apps the RM failed:   3 in the run, the first application_"),
        "{report}"
    );
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn load_generator_refuses_durations_it_cannot_count_to() {
    let server = serve(RmConfig::from_texts(&site(&[]), ALLOC).unwrap()).await;
    let huge = Duration::from_secs(u64::MAX);
    let base = || weft_rm::load::LoadConfig {
        rm: server.url.clone(),
        nodes: 1,
        ..weft_rm::load::LoadConfig::default()
    };
    // `weft load --duration 18446744073709551615` once panicked adding it
    // to the clock; so did the others, later.
    for config in [
        weft_rm::load::LoadConfig {
            duration: huge,
            ..base()
        },
        weft_rm::load::LoadConfig {
            warmup: huge,
            ..base()
        },
        weft_rm::load::LoadConfig {
            container_runtime: huge,
            ..base()
        },
        weft_rm::load::LoadConfig {
            am_interval: huge,
            ..base()
        },
        weft_rm::load::LoadConfig {
            heartbeat_interval: Some(huge),
            ..base()
        },
    ] {
        let err = weft_rm::load::run(config).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid load: durations and intervals must be at most a year"
        );
    }
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn attempt_and_container_commands() {
    let server = serve(RmConfig::from_texts(&site(&[]), ALLOC).unwrap()).await;
    let mut nm = server.client("yarn");
    let mut alice = server.client("alice");
    register(&mut nm, "n1:8041").await;
    let a = submit(&mut alice, "a").await;
    let app: AppId = a.parse().unwrap();
    let mut id = 0;
    heartbeat(&mut nm, "n1:8041", &mut id).await;
    // The AM container exits: a second attempt's AM is placed.
    let _: Value = nm
        .call(
            Method::POST,
            "/ws/v1/nm/heartbeat",
            Some(&json!({"nodeId": "n1:8041", "responseId": id, "containers": [
                {"containerId": "container_1700000000000_0001_01_000001", "state": "COMPLETE", "exitStatus": 1}]})),
        )
        .await
        .unwrap();
    let attempts = cli::attempt_list(&mut alice, app).await.unwrap();
    expect![[r#"
        Total number of application attempts :2
                 ApplicationAttempt-Id	               State	                    AM-Container-Id	                       Tracking-URL
        appattempt_1700000000000_0001_000001	              FAILED	container_1700000000000_0001_01_000001	                                N/A
        appattempt_1700000000000_0001_000002	           ALLOCATED	container_1700000000000_0001_02_000001	                                N/A
    "#]].assert_eq(&attempts);
    let first = cli::attempt_status(&mut alice, AttemptId::new(app, 1))
        .await
        .unwrap();
    expect![[r#"
        Application Attempt Report : 
        	ApplicationAttempt-Id : appattempt_1700000000000_0001_000001
        	State : FAILED
        	AMContainer : container_1700000000000_0001_01_000001
        	Tracking-URL : N/A
        	RPC Port : -1
        	AM Host : N/A
        	Diagnostics : application master container exited with status 1
    "#]]
    .assert_eq(&first);
    let second = AttemptId::new(app, 2);
    let containers = cli::container_list(&mut alice, second).await.unwrap();
    expect![[r#"
        Total number of containers :1
                          Container-Id	          Start Time	         Finish Time	               State	                Host	   Node Http Address	                            LOG-URL
        container_1700000000000_0001_02_000001	2023-11-14T22:13:20.000+0000	                 N/A	                 NEW	             n1:8041	             n1:8042	                                N/A
    "#]].assert_eq(&containers);
    let am = cli::container_status(&mut alice, ContainerId::new(second, 1))
        .await
        .unwrap();
    expect![[r#"
        Container Report : 
        	Container-Id : container_1700000000000_0001_02_000001
        	Start-Time : 2023-11-14T22:13:20.000+0000
        	Finish-Time : N/A
        	State : NEW
        	Execution-Type : GUARANTEED
        	LOG-URL : N/A
        	Host : n1:8041
        	NodeHttpAddress : n1:8042
        	Resource : <memory:1024, vCores:1>
        	Priority : 0
        	Diagnostics : 
    "#]]
    .assert_eq(&am);
    // What the RM does not have is its error.
    let refused = |r: Result<String, ClientError>| match r {
        Err(ClientError::Remote { status, exception }) => {
            format!("{} {}", status.as_u16(), exception.message)
        }
        other => format!("{other:?}"),
    };
    let answers = [
        refused(cli::attempt_status(&mut alice, AttemptId::new(app, 3)).await),
        refused(cli::container_status(&mut alice, ContainerId::new(second, 9)).await),
        refused(cli::attempt_list(&mut alice, AppId::new(EPOCH, 42)).await),
    ];
    expect![[r#"
        [
            "404 application application_1700000000000_0001 has no attempt appattempt_1700000000000_0001_000003: it has not started one with that number, or it is older than the attempts the resource manager keeps",
            "404 container container_1700000000000_0001_02_000009 of attempt appattempt_1700000000000_0001_000002 is not running: the resource manager reports only the containers an attempt holds now",
            "404 application application_1700000000000_0042 is not known",
        ]
    "#]].assert_debug_eq(&answers);
    server.shutdown().await;
}
