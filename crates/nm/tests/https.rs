//! A cluster under `yarn.http.policy` HTTPS_ONLY on loopback: an RM and a
//! node agent each serving HTTPS from one configuration directory (PEM
//! files made at test time), the agent reading its settings as `weft nm
//! --site` does (`read_site`, then `load_tls` beside the file). The node
//! registers and heartbeats over HTTPS, its own API answers over HTTPS
//! with `https://` log links, and a distributed shell runs a container on
//! it to the end, starting it through the node's HTTPS API.
//!
//! This test binary makes the test CA what every client of the process
//! trusts (`set_default_trust`), as `weft --ca-file` does; the node agent
//! trusts it through `ssl-client.xml`.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use weft_model::Resource;
use weft_nm::distributed_shell::{self, ShellConfig};
use weft_nm::{MemoryEnforcement, NmConfig, NodeManager};
use weft_rm::client::RmClient;
use weft_rm::dto::ResourceDto;
use weft_rm::tls::ClientTls;
use weft_rm::{Clock, RmConfig, Service};
use weft_test_support::ScratchDir;
use weft_test_support::tls::TestPki;

/// The longest any one condition is waited for.
const PATIENCE: Duration = Duration::from_secs(60);

const ALLOC: &str = r#"<allocations>
  <queue name="a"/>
  <queuePlacementPolicy><rule name="specified" create="false"/><rule name="reject"/></queuePlacementPolicy>
</allocations>"#;

/// A test's own directory, removed at the end.
fn test_dir(name: &str) -> ScratchDir {
    ScratchDir::new(&format!("nm-https-{name}"))
}

/// Polls `get` until it gives `Some`, for at most `PATIENCE`.
async fn wait_for<T>(what: &str, mut get: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(v) = get().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The node agent's settings as `weft nm --site <dir>/yarn-site.xml` reads them.
fn node_config(rm: &str, conf: &Path, work: &Path) -> NmConfig {
    let mut config = NmConfig::new(rm, Resource::new(1024, 4), work);
    config.memory_enforcement = MemoryEnforcement::RssPolling;
    config.rm_timeout = Duration::from_secs(10);
    let site = conf.join("yarn-site.xml");
    let text = std::fs::read_to_string(&site).unwrap();
    let warnings = weft_nm::config::read_site(&mut config, "yarn-site.xml", &text).unwrap();
    assert_eq!(warnings, Vec::<String>::new());
    weft_nm::config::load_tls(&mut config, conf).unwrap();
    config
}

#[tokio::test]
async fn a_node_registers_heartbeats_and_runs_a_container_over_https() {
    let pki = TestPki::new("Weft test CA");
    let dir = test_dir("cluster");
    let conf = dir.path().join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    pki.write_conf(&conf);
    std::fs::write(conf.join("fair-scheduler.xml"), ALLOC).unwrap();
    // One yarn-site.xml for the RM and the node, as a cluster shares it.
    std::fs::write(
        conf.join("yarn-site.xml"),
        weft_test_support::site_xml(&[
            ("yarn.http.policy", "HTTPS_ONLY"),
            ("yarn.scheduler.minimum-allocation-mb", "32"),
            ("yarn.resource-types.memory-mb.increment-allocation", "32"),
            (
                "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
                "100",
            ),
            ("weft.rm.view-refresh-ms", "0"),
        ]),
    )
    .unwrap();
    let ca = ClientTls::from_ca_file(&conf.join("ca.pem"), "the test").unwrap();
    weft_rm::client::set_default_trust(ca).unwrap();

    let config = RmConfig::load(Some(&conf)).unwrap();
    let service = Service::start(config, Clock::start()).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let rm_url = format!(
        "https://localhost:{}",
        listener.local_addr().unwrap().port()
    );
    let (stop_rm, rm_stopped) = oneshot::channel::<()>();
    let rm_task = tokio::spawn(service.serve(listener, async move {
        let _ = rm_stopped.await;
    }));

    let nm_config = node_config(&rm_url, &conf, &dir.path().join("nm"));
    assert!(nm_config.server_tls.is_some() && nm_config.rm_trust.is_some());
    let nm = NodeManager::start(nm_config, TcpListener::bind("127.0.0.1:0").await.unwrap())
        .await
        .unwrap();
    let node = nm.node_id().to_string();

    // Registered, and heartbeating: the RM hears from it again and again.
    let mut rm = RmClient::new(&rm_url, Some("alice".to_owned())).unwrap();
    let first_heard = wait_for("the node to register", async || {
        let nodes: Value = rm.get("/ws/v1/cluster/nodes").await.ok()?;
        let n = nodes["nodes"]["node"].get(0)?.clone();
        (n["state"] == "RUNNING").then(|| n["lastHealthUpdate"].as_u64().unwrap_or(0))
    })
    .await;
    wait_for("a heartbeat after registering", async || {
        let n: Value = rm.get(&format!("/ws/v1/cluster/nodes/{node}")).await.ok()?;
        (n["node"]["lastHealthUpdate"].as_u64()? > first_heard).then_some(())
    })
    .await;

    // The node's own API speaks HTTPS only.
    let node_url = format!("https://{}", nm.http_address());
    let mut api = RmClient::new(&node_url, None).unwrap();
    let info: Value = api.get("/ws/v1/node/info").await.unwrap();
    assert_eq!(info["nodeInfo"]["id"], node.as_str(), "{info}");
    let mut plain = RmClient::new(&format!("http://{}", nm.http_address()), None).unwrap();
    let e = plain.get::<Value>("/ws/v1/node/info").await.unwrap_err();
    assert!(e.to_string().contains("speaks HTTPS only"), "{e}");

    // An app end to end: submitted, its container started through the
    // node's HTTPS API with its token, run, and its log link https://.
    let mut shell = ShellConfig::new(
        rm_url.clone(),
        "alice",
        1,
        ResourceDto {
            memory: 32,
            vcores: 1,
        },
        "echo hello over tls",
    );
    shell.queue = Some("a".to_owned());
    shell.interval = Duration::from_millis(100);
    shell.rm_timeout = Duration::from_secs(30);
    let outcome = tokio::time::timeout(
        PATIENCE,
        distributed_shell::run(shell, std::future::pending(), |_| {}),
    )
    .await
    .expect("the shell ends")
    .unwrap();
    assert_eq!(
        (outcome.final_status.as_str(), outcome.succeeded),
        ("SUCCEEDED", 1)
    );
    let containers: Value = api.get("/ws/v1/node/containers").await.unwrap();
    let links: Vec<&str> = containers["containers"]["container"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["containerLogsLink"].as_str())
        .collect();
    assert!(!links.is_empty(), "{containers}");
    for link in links {
        assert!(
            link.starts_with(&format!("{node_url}/ws/v1/node/containers/")),
            "{link}"
        );
    }

    nm.stop().await;
    let _ = stop_rm.send(());
    rm_task.await.unwrap().unwrap();
}

#[test]
fn an_https_node_without_key_material_is_refused_at_start() {
    let dir = test_dir("bad");
    std::fs::write(
        dir.path().join("yarn-site.xml"),
        weft_test_support::site_xml(&[
            ("yarn.http.policy", "HTTPS_ONLY"),
            ("yarn.nodemanager.webapp.https.address", "0.0.0.0:9044"),
        ]),
    )
    .unwrap();
    let mut config = NmConfig::new(
        "https://rm:8090",
        Resource::new(1024, 4),
        dir.path().join("nm"),
    );
    let text = std::fs::read_to_string(dir.path().join("yarn-site.xml")).unwrap();
    weft_nm::config::read_site(&mut config, "yarn-site.xml", &text).unwrap();
    assert_eq!(config.https_address, Some("0.0.0.0:9044".parse().unwrap()));
    let e = weft_nm::config::load_tls(&mut config, dir.path())
        .unwrap_err()
        .to_string();
    assert_eq!(
        dir.hide(&e),
        "cannot read <dir>/ssl-server.xml (the SSL resource hadoop.ssl.server.conf names): No such file or directory (os error 2)"
    );
    let e = weft_nm::config::read_site(
        &mut config,
        "yarn-site.xml",
        &weft_test_support::site_xml(&[("yarn.http.policy", "HTTPS")]),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "yarn-site.xml: line 2, column 40: property yarn.http.policy: \"HTTPS\" is not HTTP_ONLY or HTTPS_ONLY"
    );
}
