//! End to end on loopback: a real RM service, real node agents running real
//! processes, and distributed-shell AMs, each test on its own ports
//! (`127.0.0.1:0`) and in its own directory. Containers write their pid and
//! a file into the test's directory, and most wait for a `go` file, so a
//! test can look at a cluster whose containers are all running.
//!
//! What is shown: two apps in two queues share two nodes fairly and their
//! containers really run; a preempted container's process really ends and
//! its app asks again; a node killed abruptly is declared lost and its apps
//! are told; a container over its memory limit is killed with the figures;
//! a node launches an AM container from the submission's launch context and
//! stops it when the app is killed; with ACLs on, a container's logs are
//! read by its app's owner, whom its `VIEW_APP` names and the node's
//! administrators, and refused to others; a node starts a container only for a
//! caller with the container's token from the AM's allocate answer, once; after an RM restart with its state
//! store, the node re-registers with its running containers, they keep
//! running, and the app finishes; a node drained by `refresh-nodes` keeps
//! its container running until it ends, takes no new one, and its agent
//! stops once it is decommissioned, while one the RM refuses stops at once;
//! a node whose health script reports an error is UNHEALTHY, with the
//! script's line as its report, and takes no container until the script
//! passes again; heartbeats carry what the machine and its containers
//! use, within the machine's size; the node's API answers in Hadoop's
//! shapes (names, `exitCode` always a number, `{"containers":{}}`) and
//! refuses bodies that are not JSON; a node's `/metrics` and `/jmx` count
//! how its containers ended (exited 0, exited non-zero, killed over their
//! memory, stopped by the RM) and what runs; and two agents in one process
//! keep their own figures, each passing `promtool check metrics`.
//!
//! Everything waits by polling with generous deadlines, so a loaded
//! two-core machine only makes the tests slower.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use http::Method;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use weft_model::{ContainerId, Resource};
use weft_nm::distributed_shell::{self, ShellConfig, ShellEvent, ShellOutcome};
use weft_nm::launch::is_alive;
use weft_nm::{AgentEnd, HealthScript, MemoryEnforcement, NmConfig, NodeManager};
use weft_queue_tree::Acl;
use weft_rm::access::AclSettings;
use weft_rm::client::RmClient;
use weft_rm::dto::ResourceDto;
use weft_rm::node_secret::NodeSecret;
use weft_rm::{Clock, RmConfig, Service};

/// The longest any one condition is waited for.
const PATIENCE: Duration = Duration::from_secs(40);

const ALLOC: &str = r#"<allocations>
  <queue name="a"/>
  <queue name="b"/>
  <defaultFairSharePreemptionTimeout>1</defaultFairSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>1.0</defaultFairSharePreemptionThreshold>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="reject"/>
  </queuePlacementPolicy>
</allocations>"#;

fn site(extra: &[(&str, &str)]) -> String {
    let base = [
        ("yarn.scheduler.minimum-allocation-mb", "32"),
        ("yarn.resource-types.memory-mb.increment-allocation", "32"),
        ("yarn.scheduler.maximum-allocation-mb", "512"),
        ("yarn.scheduler.fair.assignmultiple", "true"),
        ("yarn.scheduler.fair.update-interval-ms", "100"),
        (
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "100",
        ),
        ("weft.rm.view-refresh-ms", "0"),
    ];
    weft_test_support::site_xml(&[&base[..], extra].concat())
}

/// A test's own directory, empty, removed with whatever its containers
/// left running when the test ends, whether it passes or panics.
struct TestDir(PathBuf);

impl std::ops::Deref for TestDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        // Gated containers end on their own once they see `go`; anything
        // else still running in this directory is killed with its group.
        let _ = std::fs::write(self.0.join("out/go"), "");
        reap_leftovers(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn test_dir(name: &str) -> TestDir {
    let dir = std::env::temp_dir().join(format!("weft-cluster-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    TestDir(dir)
}

/// A running RM on loopback.
struct Rm {
    url: String,
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), weft_rm::ServeError>>,
}

impl Rm {
    async fn start(site: &str, listen: &str) -> Rm {
        let config = RmConfig::from_texts(site, ALLOC).unwrap();
        let service = Service::start(config, Clock::start()).unwrap();
        let listener = TcpListener::bind(listen).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(service.serve(listener, async move {
            let _ = stopped.await;
        }));
        Rm {
            url: format!("http://{addr}"),
            addr,
            stop,
            task,
        }
    }

    async fn shutdown(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap().unwrap();
    }

    fn client(&self) -> RmClient {
        RmClient::new(&self.url, Some("alice".to_owned())).unwrap()
    }

    async fn get(&self, path: &str) -> Value {
        self.client().get(path).await.unwrap()
    }
}

async fn start_nm(rm: &Rm, dir: &Path, name: &str, memory_mb: u64) -> NodeManager {
    start_nm_with(rm, dir, name, memory_mb, None).await
}

async fn start_nm_with(
    rm: &Rm,
    dir: &Path,
    name: &str,
    memory_mb: u64,
    health_script: Option<HealthScript>,
) -> NodeManager {
    let mut config = nm_config(rm, dir, name, memory_mb);
    config.health_script = health_script;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    NodeManager::start(config, listener).await.unwrap()
}

/// The settings of the tests' nodes, quick to notice and to stop things.
fn nm_config(rm: &Rm, dir: &Path, name: &str, memory_mb: u64) -> NmConfig {
    let mut config = NmConfig::new(rm.url.clone(), Resource::new(memory_mb, 4), dir.join(name));
    config.rack = "/rack1".to_owned();
    config.memory_enforcement = MemoryEnforcement::RssPolling;
    config.monitor_interval = Duration::from_millis(100);
    config.kill_grace = Duration::from_millis(200);
    config.rm_timeout = Duration::from_secs(5);
    config
}

/// A command that records its pid and a file, says hello, then waits for
/// `$OUT/go`; it gives up (failing) after some two minutes, so not even a
/// test process killed outright leaves it behind for long.
const GATED: &str = r#"echo $$ > "$OUT/$CONTAINER_ID.pid"; echo "hello from $CONTAINER_ID"; touch "$OUT/$CONTAINER_ID.ran"; i=0; while [ ! -e "$OUT/go" ]; do i=$((i+1)); [ $i -gt 2400 ] && exit 3; sleep 0.05; done"#;

fn shell(rm: &Rm, dir: &Path, queue: &str, n: u32, memory: u64, command: &str) -> ShellConfig {
    let mut c = ShellConfig::new(
        rm.url.clone(),
        "alice",
        n,
        ResourceDto { memory, vcores: 1 },
        command,
    );
    c.queue = Some(queue.to_owned());
    c.name = format!("test-{queue}");
    c.interval = Duration::from_millis(100);
    c.rm_timeout = Duration::from_secs(30);
    c.environment = BTreeMap::from([(
        "OUT".to_owned(),
        dir.join("out").to_string_lossy().into_owned(),
    )]);
    c
}

/// A shell running in the background: its events as they come, its outcome at the end.
struct RunningShell {
    events: mpsc::UnboundedReceiver<ShellEvent>,
    seen: Vec<ShellEvent>,
    task: JoinHandle<Result<ShellOutcome, distributed_shell::ShellError>>,
}

fn spawn_shell(config: ShellConfig) -> RunningShell {
    let (tx, events) = mpsc::unbounded_channel();
    let task = tokio::spawn(distributed_shell::run(
        config,
        std::future::pending(),
        move |e| {
            let _ = tx.send(e);
        },
    ));
    RunningShell {
        events,
        seen: Vec::new(),
        task,
    }
}

impl RunningShell {
    /// Waits for an event matching `pred` (earlier ones are kept in `seen`).
    async fn wait_for(&mut self, what: &str, pred: impl Fn(&ShellEvent) -> bool) -> ShellEvent {
        if let Some(e) = self.seen.iter().find(|e| pred(e)) {
            return e.clone();
        }
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(e)) => {
                    self.seen.push(e.clone());
                    if pred(&e) {
                        return e;
                    }
                }
                Ok(None) => panic!("the shell ended before {what}: {:?}", self.seen),
                Err(_) => panic!(
                    "timed out waiting for {what}; events so far: {:?}",
                    self.seen
                ),
            }
        }
    }

    async fn outcome(mut self) -> (ShellOutcome, Vec<ShellEvent>) {
        let outcome = tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("the shell did not finish in time")
            .unwrap()
            .unwrap();
        while let Ok(e) = self.events.try_recv() {
            self.seen.push(e);
        }
        (outcome, self.seen)
    }
}

/// Polls `cond` until it holds.
async fn wait_until<F, Fut>(what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !cond().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Containers that have written their `.ran` file.
fn ran(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".ran").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

fn pid_of(dir: &Path, container: &str) -> u32 {
    std::fs::read_to_string(dir.join("out").join(format!("{container}.pid")))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn release(dir: &Path) {
    std::fs::write(dir.join("out/go"), "").unwrap();
}

/// Kills whatever a test's containers left running (an abruptly killed
/// node's, or every one when a test fails): each container's process group,
/// if its leader is still alive and still works under `dir` (a pid may have
/// been reused since).
fn reap_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir.join("out")) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".pid") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let Ok(pid) = text.trim().parse::<u32>() else {
            continue;
        };
        let ours =
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir));
        if is_alive(pid) && ours {
            let _ = weft_nm::launch::signal_group(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// A new application id from the RM, as `yarn application` gets one.
async fn new_application(client: &mut RmClient) -> String {
    client.new_application().await.unwrap().application_id
}

/// Kills `app` through the REST API, as its owner would.
async fn kill_app(client: &mut RmClient, app: &str) {
    let killed: Value = client
        .call(
            Method::PUT,
            &format!("/ws/v1/cluster/apps/{app}/state"),
            Some(&json!({"state": "KILLED"})),
        )
        .await
        .unwrap();
    assert_eq!(killed["state"], "KILLED");
}

/// Submits an app to queue `a` whose AM the caller plays (unmanaged), and
/// registers that AM with the token the app's report shows its owner, which
/// the client shows from then on; answers the app's id.
async fn unmanaged_app_in_a(am: &mut RmClient) -> String {
    let app = new_application(am).await;
    let submission = json!({"application-id": app, "queue": "a", "unmanaged-AM": true});
    am.submit_application(&submission).await.unwrap();
    let report: Value = am.get(&format!("/ws/v1/cluster/apps/{app}")).await.unwrap();
    let token = report["app"]["amRMToken"]
        .as_str()
        .expect("the owner is shown the unmanaged AM's token");
    am.set_bearer(Some(token.to_owned()));
    let _: Value = am
        .call(
            Method::POST,
            &format!("/ws/v1/am/{app}/register"),
            Some(&json!({})),
        )
        .await
        .unwrap();
    app
}

/// An unmanaged app in `a` that asked for one 64 MB container, returned
/// once `node` (the only one with room) has heard of the container.
async fn one_container_on(rm: &Rm, node: &NodeManager) -> String {
    let mut am = rm.client();
    let app = unmanaged_app_in_a(&mut am).await;
    let ask = json!({"responseId": 0, "asks": [{"priority": 1, "capability": {"memory": 64, "vCores": 1}, "numContainers": 1}]});
    let _: Value = am
        .call(
            Method::POST,
            &format!("/ws/v1/am/{app}/allocate"),
            Some(&ask),
        )
        .await
        .unwrap();
    wait_until("the node to hear of the container", || async {
        !node.handle().containers().await.is_empty()
    })
    .await;
    app
}

/// A queue's demand (as of the last update pass) in the scheduler's report.
fn queue_demand_mb(report: &Value, queue: &str) -> Option<u64> {
    match report {
        Value::Object(o) if o.get("queueName").and_then(Value::as_str) == Some(queue) => {
            o.get("demandResources")?.get("memory")?.as_u64()
        }
        Value::Object(o) => o.values().find_map(|v| queue_demand_mb(v, queue)),
        Value::Array(a) => a.iter().find_map(|v| queue_demand_mb(v, queue)),
        _ => None,
    }
}

/// Running containers per app, from the RM's REST API.
async fn running_by_app(rm: &Rm) -> BTreeMap<String, u64> {
    let apps = rm.get("/ws/v1/cluster/apps?states=RUNNING").await;
    let mut res = BTreeMap::new();
    for app in apps["apps"]["app"].as_array().into_iter().flatten() {
        res.insert(
            app["queue"].as_str().unwrap().to_owned(),
            app["runningContainers"].as_u64().unwrap(),
        );
    }
    res
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_apps_in_two_queues_share_two_nodes_and_their_containers_run() {
    let dir = test_dir("share");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    // Both apps ask before any node exists, so neither starts ahead.
    let mut a = spawn_shell(shell(&rm, &dir, "a", 8, 128, GATED));
    let mut b = spawn_shell(shell(&rm, &dir, "b", 8, 128, GATED));
    a.wait_for("a registered", |e| {
        matches!(e, ShellEvent::Registered { .. })
    })
    .await;
    b.wait_for("b registered", |e| {
        matches!(e, ShellEvent::Registered { .. })
    })
    .await;
    // Registered is not enough: both apps' asks must be in, and counted in
    // their queues' demand by an update pass, before the nodes' first
    // heartbeats; the scheduler skips a queue whose demand it has not seen,
    // so the first to ask would take the nodes' room.
    wait_until("both queues' demand to include the apps' asks", || async {
        let scheduler = rm.get("/ws/v1/cluster/scheduler").await;
        ["root.a", "root.b"]
            .iter()
            .all(|q| queue_demand_mb(&scheduler, q) == Some(8 * 128))
    })
    .await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let n2 = start_nm(&rm, &dir, "n2", 512).await;
    wait_until("eight containers running", || async {
        ran(&dir).len() == 8
    })
    .await;
    // Equal weights, equal demand: four each.
    wait_until("the RM to report them", || async {
        running_by_app(&rm).await.values().sum::<u64>() == 8
    })
    .await;
    let shares = running_by_app(&rm).await;
    assert_eq!(
        shares,
        BTreeMap::from([("root.a".to_owned(), 4), ("root.b".to_owned(), 4)])
    );

    // The node runs only what the RM allocated it, for its AM only.
    let running = ran(&dir)[0].clone();
    let on_n1 = n1.handle().container(running.parse().unwrap()).await;
    let node = if on_n1.is_some() { &n1 } else { &n2 };
    let mut api = RmClient::new(&format!("http://{}", node.http_address()), None).unwrap();
    let ctx = json!({"commands": {"command": "touch /tmp/should-not-run"}});
    let again = api
        .call::<Value>(
            Method::POST,
            &format!("/ws/v1/node/containers/{running}/start"),
            Some(&ctx),
        )
        .await
        .unwrap_err();
    assert!(
        again
            .to_string()
            .starts_with("403 Forbidden: the start call for container"),
        "{again}"
    );
    let made_up = "container_1_0001_01_000042";
    let refused = api
        .call::<Value>(
            Method::POST,
            &format!("/ws/v1/node/containers/{made_up}/start"),
            Some(&ctx),
        )
        .await
        .unwrap_err();
    assert!(
        refused.to_string().starts_with(
            "404 Not Found: container container_1_0001_01_000042 is not allocated to this node"
        ),
        "{refused}"
    );
    // Its logs are readable over the node's API.
    let log = api
        .request(
            Method::GET,
            &format!("/ws/v1/node/containerlogs/{running}/stdout"),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.body),
        format!("hello from {running}\n")
    );
    // `?size=` as Hadoop's: the first bytes, or the last when negative.
    for (size, want) in [
        ("5", "hello".to_owned()),
        (
            "-5",
            format!(
                "{}\n",
                &running.to_string()[running.to_string().len() - 4..]
            ),
        ),
        ("0", String::new()),
        ("1000000", format!("hello from {running}\n")),
        ("-1000000", format!("hello from {running}\n")),
    ] {
        let part = api
            .request(
                Method::GET,
                &format!("/ws/v1/node/containerlogs/{running}/stdout?size={size}"),
                None,
            )
            .await
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&part.body), want, "size={size}");
    }
    let bad_size = api
        .request(
            Method::GET,
            &format!("/ws/v1/node/containerlogs/{running}/stdout?size=lots"),
            None,
        )
        .await
        .unwrap();
    let why = String::from_utf8_lossy(&bad_size.body);
    assert_eq!(bad_size.status, 400, "{why}");
    assert!(
        why.contains("invalid query string") && why.contains("size"),
        "{why}"
    );
    let listing: Value = api
        .get(&format!("/ws/v1/node/containers/{running}/logs"))
        .await
        .unwrap();
    let files: Vec<&str> = listing["containerLogsInfo"]["containerLogInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileName"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["stderr", "stdout"]);

    release(&dir);
    let (a, _) = a.outcome().await;
    let (b, _) = b.outcome().await;
    for o in [&a, &b] {
        assert_eq!(
            (o.final_status.as_str(), o.succeeded, o.failed),
            ("SUCCEEDED", 8, 0),
            "{o:?}"
        );
    }
    // Sixteen containers ran, each exactly once.
    assert_eq!(ran(&dir).len(), 16);
    let finished = rm.get(&format!("/ws/v1/cluster/apps/{}", a.app)).await;
    assert_eq!(finished["app"]["state"], "FINISHED");
    assert_eq!(finished["app"]["finalStatus"], "SUCCEEDED");
    n1.stop().await;
    n2.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preempted_container_really_ends_and_its_app_asks_again() {
    let dir = test_dir("preempt");
    let rm = Rm::start(
        &site(&[
            ("yarn.scheduler.fair.preemption", "true"),
            ("yarn.scheduler.fair.waitTimeBeforeKill", "300"),
            (
                "yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck",
                "300",
            ),
        ]),
        "127.0.0.1:0",
    )
    .await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let n2 = start_nm(&rm, &dir, "n2", 512).await;
    // a fills the cluster and holds on.
    let mut a = spawn_shell(shell(&rm, &dir, "a", 8, 128, GATED));
    wait_until("a to fill the cluster", || async { ran(&dir).len() == 8 }).await;
    // b arrives: it is starved of its fair share, so a's containers are taken back.
    let mut b = spawn_shell(shell(&rm, &dir, "b", 4, 128, GATED));
    let ShellEvent::Reasked {
        container,
        exit_status,
        ..
    } = a
        .wait_for("a container of a preempted", |e| {
            matches!(e, ShellEvent::Reasked { .. })
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(exit_status, -102);
    let pid = pid_of(&dir, &container.to_string());
    wait_until("the preempted container's process to end", || async {
        !is_alive(pid)
    })
    .await;
    b.wait_for("b to get a container", |e| {
        matches!(e, ShellEvent::Launched { .. })
    })
    .await;
    release(&dir);
    let (b, _) = b.outcome().await;
    let (a, _) = a.outcome().await;
    assert_eq!(
        (b.final_status.as_str(), b.succeeded),
        ("SUCCEEDED", 4),
        "{b:?}"
    );
    assert_eq!(
        (a.final_status.as_str(), a.succeeded),
        ("SUCCEEDED", 8),
        "{a:?}"
    );
    assert!(a.reasked >= 1, "{a:?}");
    n1.stop().await;
    n2.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_abruptly_is_lost_and_its_apps_are_told() {
    let dir = test_dir("lost");
    let rm = Rm::start(
        &site(&[("yarn.nm.liveness-monitor.expiry-interval-ms", "1500")]),
        "127.0.0.1:0",
    )
    .await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let n2 = start_nm(&rm, &dir, "n2", 512).await;
    let lost = n2.node_id().to_string();
    let mut a = spawn_shell(shell(&rm, &dir, "a", 8, 128, GATED));
    wait_until("a to fill both nodes", || async { ran(&dir).len() == 8 }).await;
    n2.kill();
    let ShellEvent::Reasked {
        exit_status,
        diagnostics,
        ..
    } = a
        .wait_for("a container lost with its node", |e| {
            matches!(e, ShellEvent::Reasked { .. })
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(exit_status, -100);
    assert!(diagnostics.contains("lost with its node"), "{diagnostics}");
    let node = rm.get(&format!("/ws/v1/cluster/nodes/{lost}")).await;
    assert_eq!(node["node"]["state"], "LOST");
    // The lost node's containers are asked for again and run on the other.
    release(&dir);
    let (a, _) = a.outcome().await;
    assert_eq!(
        (a.final_status.as_str(), a.succeeded, a.reasked),
        ("SUCCEEDED", 8, 4),
        "{a:?}"
    );
    n1.stop().await;
    rm.shutdown().await;
}

/// An unmanaged AM whose client goes silent (killed outright, say) loses
/// its app at the RM's AM liveness deadline, which the service ticks at
/// without any other input, and the app's containers are stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_unmanaged_am_fails_its_app_at_the_liveness_deadline() {
    let dir = test_dir("am-expiry");
    let rm = Rm::start(
        &site(&[("yarn.am.liveness-monitor.expiry-interval-ms", "1500")]),
        "127.0.0.1:0",
    )
    .await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let app = one_container_on(&rm, &n1).await;
    // The AM says nothing more.
    wait_until("the app to fail", || async {
        rm.get(&format!("/ws/v1/cluster/apps/{app}")).await["app"]["state"] == "FAILED"
    })
    .await;
    let report = rm.get(&format!("/ws/v1/cluster/apps/{app}")).await;
    let diagnostics = report["app"]["diagnostics"].as_str().unwrap_or_default();
    assert!(
        diagnostics.contains("made no allocate call for 1500ms"),
        "{report}"
    );
    wait_until("the node to drop the container", || async {
        n1.handle()
            .containers()
            .await
            .iter()
            .all(|c| c.state == "COMPLETE")
    })
    .await;
    n1.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_app_past_its_lifetime_is_killed_with_its_containers() {
    let dir = test_dir("lifetime");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let mut config = shell(&rm, &dir, "a", 1, 128, GATED);
    config.lifetime_secs = Some(2);
    let shell = spawn_shell(config);
    wait_until("the container to run", || async { ran(&dir).len() == 1 }).await;
    let pid = pid_of(&dir, &ran(&dir)[0]);
    // Never released: only the lifetime ends it.
    let ended = tokio::time::timeout(PATIENCE, shell.task)
        .await
        .expect("the shell did not end in time")
        .unwrap();
    match ended {
        Err(distributed_shell::ShellError::Ended {
            state, diagnostics, ..
        }) => {
            assert_eq!(state, "KILLED");
            assert_eq!(
                diagnostics,
                "Application is killed by ResourceManager as it has exceeded the lifetime period."
            );
        }
        other => panic!("the shell ended with {other:?}"),
    }
    wait_until("the container's process to end", || async {
        !is_alive(pid)
    })
    .await;
    n1.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_over_its_memory_limit_is_killed_with_the_figures() {
    let dir = test_dir("memory");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    // About 130 MB in a 64 MB container.
    let hog = r#"echo $$ > "$OUT/$CONTAINER_ID.pid"; awk 'BEGIN { s = "x"; while (length(s) < 100000000) s = s s; system("sleep 60") }'"#;
    let (outcome, events) = {
        let s = spawn_shell(shell(&rm, &dir, "a", 1, 64, hog));
        s.outcome().await
    };
    assert_eq!(
        (outcome.final_status.as_str(), outcome.failed),
        ("FAILED", 1),
        "{outcome:?}"
    );
    let (container, exit_status, diagnostics) = events
        .iter()
        .find_map(|e| match e {
            ShellEvent::Completed {
                container,
                exit_status,
                diagnostics,
            } => Some((*container, *exit_status, diagnostics.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(exit_status, -104);
    let expected = format!(
        "container {container} (pid {}) was killed for exceeding its memory limit: ",
        pid_of(&dir, &container.to_string())
    );
    assert!(diagnostics.starts_with(&expected), "{diagnostics}");
    assert!(
        diagnostics.contains(" MB of physical memory used, limit 64 MB"),
        "{diagnostics}"
    );
    wait_until("the hog to be gone", || async {
        !is_alive(pid_of(&dir, &container.to_string()))
    })
    .await;
    let c = n1.handle().container(container).await.unwrap();
    assert_eq!((c.state.as_str(), c.exit_code), ("COMPLETE", -104));
    n1.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_launches_an_am_container_and_stops_it_when_the_app_is_killed() {
    let dir = test_dir("am");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let mut alice = rm.client();
    let app = new_application(&mut alice).await;
    let out = dir.join("out");
    let submission = json!({
        "application-id": app,
        "application-name": "am-in-a-container",
        "queue": "a",
        "resource": {"memory": 64, "vCores": 1},
        "am-container-spec": {
            "commands": {"command": "echo \"$WEFT_AM_TOKEN\" > \"$OUT/am.token\"; echo $$ > \"$OUT/am.pid\"; echo \"$CONTAINER_ID\" > \"$OUT/am.id\"; echo started; sleep 60"},
            "environment": {"entry": [{"key": "OUT", "value": out.to_string_lossy()}]},
        },
    });
    alice.submit_application(&submission).await.unwrap();
    // A file exists as soon as the shell opens it, before it is written.
    let written =
        |name: &str| std::fs::read_to_string(out.join(name)).is_ok_and(|s| s.ends_with('\n'));
    wait_until("the AM container to start", || async {
        written("am.token") && written("am.pid") && written("am.id")
    })
    .await;
    // The AM process speaks for its attempt with the token its node gave it.
    let token = std::fs::read_to_string(out.join("am.token")).unwrap();
    let mut am_client = rm.client().with_bearer(token.trim());
    let registered: Value = am_client
        .call(
            Method::POST,
            &format!("/ws/v1/am/{app}/register"),
            Some(&json!({})),
        )
        .await
        .unwrap();
    assert_eq!(registered["queue"], "root.a", "{registered}");
    // Another caller, without it, is not heard.
    let refused = rm
        .client()
        .call::<Value>(
            Method::POST,
            &format!("/ws/v1/am/{app}/allocate"),
            Some(&json!({"responseId": 0})),
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().starts_with("401 "), "{refused}");
    let am: ContainerId = std::fs::read_to_string(out.join("am.id"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!((am.app().to_string(), am.seq), (app.clone(), 1));
    let c = n1.handle().container(am).await.unwrap();
    assert!(c.is_am && c.state == "RUNNING", "{c:?}");
    let pid = pid_of(&dir, "am");
    assert_eq!(c.pid, Some(pid));
    wait_until("its stdout", || async {
        std::fs::read_to_string(dir.join(format!("n1/logs/{app}/{am}/stdout")))
            .is_ok_and(|s| s == "started\n")
    })
    .await;
    kill_app(&mut alice, &app).await;
    wait_until("the AM's process to end", || async { !is_alive(pid) }).await;
    wait_until("the node to report it", || async {
        n1.handle()
            .container(am)
            .await
            .is_some_and(|c| c.state == "COMPLETE")
    })
    .await;
    let c = n1.handle().container(am).await.unwrap();
    assert_eq!(c.exit_code, -107, "{c:?}");
    n1.stop().await;
    rm.shutdown().await;
}

/// `path` on a node as `user` (`None`: anonymous): the status and the body.
async fn node_get_as(node: &NodeManager, user: Option<&str>, path: &str) -> (u16, String) {
    let mut client = RmClient::new(
        &format!("http://{}", node.http_address()),
        user.map(str::to_owned),
    )
    .unwrap();
    node_get(&mut client, path).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_acls_on_a_containers_logs_are_for_its_apps_viewers() {
    let dir = test_dir("viewers");
    let rm = Rm::start(
        &site(&[("yarn.acl.enable", "true"), ("yarn.admin.acl", "yarn")]),
        "127.0.0.1:0",
    )
    .await;
    // The node's own ACL settings, as `weft nm --site` reads them.
    let mut config = NmConfig::new(rm.url.clone(), Resource::new(512, 4), dir.join("n1"));
    config.memory_enforcement = MemoryEnforcement::RssPolling;
    config.acl = AclSettings {
        enabled: true,
        admins: Acl::parse("yarn"),
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let n1 = NodeManager::start(config, listener).await.unwrap();

    // alice's app, which bob may view; its AM container says something
    // only its viewers should read.
    let mut alice = rm.client();
    let app = new_application(&mut alice).await;
    let out = dir.join("out");
    let submission = json!({
        "application-id": app,
        "queue": "a",
        "resource": {"memory": 64, "vCores": 1},
        "am-container-spec": {
            "commands": {"command": "echo \"$CONTAINER_ID\" > \"$OUT/am.id\"; echo the-secret; sleep 60"},
            "environment": {"entry": [{"key": "OUT", "value": out.to_string_lossy()}]},
            "application-acls": {"entry": [{"key": "VIEW_APP", "value": "bob"}]},
        },
    });
    alice.submit_application(&submission).await.unwrap();
    wait_until("the AM container to start", || async {
        std::fs::read_to_string(out.join("am.id")).is_ok_and(|s| s.ends_with('\n'))
    })
    .await;
    let am = std::fs::read_to_string(out.join("am.id"))
        .unwrap()
        .trim()
        .to_owned();
    let stdout = format!("/ws/v1/node/containerlogs/{am}/stdout");
    wait_until("its stdout", || async {
        node_get_as(&n1, Some("alice"), &stdout).await == (200, "the-secret\n".to_owned())
    })
    .await;

    // The owner, whom VIEW_APP names and the node's administrator read it.
    for user in ["alice", "bob", "yarn"] {
        assert_eq!(
            node_get_as(&n1, Some(user), &stdout).await,
            (200, "the-secret\n".to_owned()),
            "{user}"
        );
        let (status, body) = node_get_as(
            &n1,
            Some(user),
            &format!("/ws/v1/node/containers/{am}/logs"),
        )
        .await;
        assert_eq!(status, 200, "{user}: {body}");
        assert!(body.contains(r#""fileName":"stdout""#), "{user}: {body}");
    }
    // Anyone else is refused, 401 when they do not say who they are.
    let (status, body) = node_get_as(&n1, Some("carol"), &stdout).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains(&format!(
            "user carol may not read the logs of container {am} of application {app}: only its owner (alice)"
        )),
        "{body}"
    );
    assert_eq!(node_get_as(&n1, None, &stdout).await.0, 401);
    // The node learned the owner from the RM: the report says whose, and
    // carol's is withheld.
    let report = |body: String| serde_json::from_str::<Value>(&body).unwrap()["container"].clone();
    let (_, body) = node_get_as(&n1, Some("bob"), &format!("/ws/v1/node/containers/{am}")).await;
    let c = report(body);
    assert_eq!(
        (c["user"].as_str(), c["pid"].is_u64()),
        (Some("alice"), true),
        "{c}"
    );
    let (_, body) = node_get_as(&n1, Some("carol"), &format!("/ws/v1/node/containers/{am}")).await;
    let c = report(body);
    assert_eq!(
        (c["user"].as_str(), c["pid"].is_null()),
        (Some("alice"), true),
        "{c}"
    );

    kill_app(&mut alice, &app).await;
    n1.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_caller_with_the_container_token_starts_a_container() {
    let dir = test_dir("token");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    // An unmanaged AM, played by the test.
    let mut am = rm.client();
    let app = unmanaged_app_in_a(&mut am).await;
    let mut body = json!({"responseId": 0, "asks": [{"priority": 1, "capability": {"memory": 64, "vCores": 1}, "numContainers": 1}]});
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let allocated = loop {
        let answer: Value = am
            .call(
                Method::POST,
                &format!("/ws/v1/am/{app}/allocate"),
                Some(&body),
            )
            .await
            .unwrap();
        let response_id = answer["responseId"].as_u64().unwrap();
        if let Some(c) = answer["allocated"].as_array().and_then(|l| l.first()) {
            break c.clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "nothing allocated");
        body = json!({"responseId": response_id});
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let container = allocated["containerId"].as_str().unwrap().to_owned();
    let token = allocated["containerToken"].as_str().unwrap().to_owned();
    let id: ContainerId = container.parse().unwrap();
    wait_until("the node to hear of the container", || async {
        n1.handle().container(id).await.is_some()
    })
    .await;
    let mut node = RmClient::new(&format!("http://{}", n1.http_address()), None).unwrap();
    let out = dir.join("out").to_string_lossy().into_owned();
    let start = |command: &str, token: Option<&str>| {
        let mut body = json!({"commands": {"command": command},
                              "environment": {"entry": [{"key": "OUT", "value": out}]}});
        if let Some(t) = token {
            body["containerToken"] = json!(t);
        }
        body
    };
    let path = format!("/ws/v1/node/containers/{container}/start");
    let hijack = r#"touch "$OUT/hijacked""#;
    // A token of the right shape that differs in one digit is wrong.
    let flipped = if token.starts_with('0') { "1" } else { "0" };
    let wrong = format!("{flipped}{}", &token[1..]);
    let mut refusals = String::new();
    for t in [None, Some(wrong.as_str()), Some("not-a-token")] {
        let e = node
            .call::<Value>(Method::POST, &path, Some(&start(hijack, t)))
            .await
            .unwrap_err();
        refusals.push_str(&e.to_string().replace(&container, "<container>"));
        refusals.push('\n');
        assert!(!e.to_string().contains(&wrong), "the token is echoed: {e}");
    }
    expect_test::expect![[r#"
        403 Forbidden: the start call for container <container> carries no containerToken; send the one the resource manager gave with the container in its allocate answer
        403 Forbidden: the containerToken does not match the one the resource manager issued for container <container>; only the application master it was allocated to may start it
        403 Forbidden: the containerToken does not match the one the resource manager issued for container <container>; only the application master it was allocated to may start it
    "#]]
    .assert_eq(&refusals);
    let c = n1.handle().container(id).await.unwrap();
    assert_eq!(c.state, "ALLOCATED");
    // The AM's token starts it, once.
    let started: Value = node
        .call(Method::POST, &path, Some(&start(GATED, Some(&token))))
        .await
        .unwrap();
    assert_eq!(started["container"]["state"], "RUNNING");
    let again = node
        .call::<Value>(Method::POST, &path, Some(&start(hijack, Some(&token))))
        .await
        .unwrap_err();
    assert!(
        again.to_string().starts_with("409 Conflict: container"),
        "{again}"
    );
    wait_until("the container to run", || async {
        ran(&dir) == [container.clone()]
    })
    .await;
    assert!(!dir.join("out/hijacked").exists());
    release(&dir);
    let _: Value = am
        .call(
            Method::POST,
            &format!("/ws/v1/am/{app}/finish"),
            Some(&json!({"finalStatus": "SUCCEEDED"})),
        )
        .await
        .unwrap();
    n1.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_rm_restart_running_containers_keep_running_and_the_app_finishes() {
    let dir = test_dir("restart");
    let state = dir.join("state");
    let state_prop = state.to_string_lossy().into_owned();
    let site = site(&[("weft.rm.state-store.dir", &state_prop)]);
    let rm = Rm::start(&site, "127.0.0.1:0").await;
    let addr = rm.addr;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let mut a = spawn_shell(shell(&rm, &dir, "a", 2, 128, GATED));
    wait_until("two containers running", || async { ran(&dir).len() == 2 }).await;
    let pids: Vec<u32> = ran(&dir).iter().map(|c| pid_of(&dir, c)).collect();

    rm.shutdown().await;
    let rm = Rm::start(&site, &addr.to_string()).await;
    a.wait_for("the AM to register again", |e| {
        matches!(e, ShellEvent::Resynced)
    })
    .await;
    // The node came back with both containers; nothing was restarted.
    wait_until("the node to re-register with its containers", || async {
        let nodes = rm.get("/ws/v1/cluster/nodes").await;
        nodes["nodes"]["node"][0]["numContainers"] == 2
    })
    .await;
    assert!(
        pids.iter().all(|p| is_alive(*p)),
        "a container died with the RM"
    );
    let app = rm
        .get(&format!("/ws/v1/cluster/apps/{}", a.task_app().await))
        .await;
    assert_eq!(app["app"]["queue"], "root.a");
    release(&dir);
    let (a, events) = a.outcome().await;
    assert_eq!(
        (a.final_status.as_str(), a.succeeded, a.reasked),
        ("SUCCEEDED", 2, 0),
        "{a:?} {events:?}"
    );
    assert_eq!(ran(&dir).len(), 2, "a container ran twice");
    n1.stop().await;
    rm.shutdown().await;
}

impl RunningShell {
    /// The app's id, from the events.
    async fn task_app(&mut self) -> weft_model::AppId {
        match self
            .wait_for("the submission", |e| {
                matches!(e, ShellEvent::Submitted { .. })
            })
            .await
        {
            ShellEvent::Submitted { app } => app,
            _ => unreachable!(),
        }
    }
}

/// An RM whose include or exclude list (`which`) is the file at `path`.
async fn rm_with_hosts_file(which: &str, path: &Path) -> Rm {
    let property = format!("yarn.resourcemanager.nodes.{which}-path");
    Rm::start(
        &site(&[(property.as_str(), &path.display().to_string())]),
        "127.0.0.1:0",
    )
    .await
}

/// A node drained gracefully (`refresh-nodes` with `graceful`) keeps
/// running its container until it ends and takes no new one; once its
/// container and its app are done it is decommissioned, told to shut down
/// at its next heartbeat, and its agent stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drained_node_keeps_its_container_takes_no_new_one_then_its_agent_stops() {
    let dir = test_dir("drain");
    let exclude = dir.join("nodes.exclude");
    std::fs::write(&exclude, "").unwrap();
    let rm = rm_with_hosts_file("exclude", &exclude).await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let drained = n1.node_id().to_string();
    // a's one container runs on n1, the only node.
    let a = spawn_shell(shell(&rm, &dir, "a", 1, 128, GATED));
    wait_until("a's container to run", || async { ran(&dir).len() == 1 }).await;
    let first = ran(&dir)[0].clone();
    let pid = pid_of(&dir, &first);
    let n2 = start_nm(&rm, &dir, "n2", 512).await;
    wait_until("n2 to register", || async {
        let nodes = rm.get("/ws/v1/cluster/nodes?states=RUNNING").await;
        nodes["nodes"]["node"].as_array().map_or(0, Vec::len) == 2
    })
    .await;

    std::fs::write(&exclude, format!("{drained}\n")).unwrap();
    let refreshed: Value = rm
        .client()
        .call(
            Method::POST,
            "/ws/v1/cluster/refresh-nodes",
            Some(&json!({"graceful": true})),
        )
        .await
        .unwrap();
    let change = &refreshed["refreshNodes"]["changes"][0];
    assert_eq!(
        (change["nodeId"].as_str(), change["state"].as_str()),
        (Some(drained.as_str()), Some("DECOMMISSIONING")),
        "{refreshed}"
    );

    // b's container goes to n2, though n1 has room for it.
    let mut b = spawn_shell(shell(&rm, &dir, "b", 1, 128, GATED));
    let ShellEvent::Launched { node, .. } = b
        .wait_for("b's container launched", |e| {
            matches!(e, ShellEvent::Launched { .. })
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(node, n2.http_address());
    wait_until("b's container to run", || async { ran(&dir).len() == 2 }).await;
    // n1 still runs a's container, and only that.
    assert!(
        is_alive(pid),
        "a's container on the draining node was stopped"
    );
    let on_n1 = rm.get(&format!("/ws/v1/cluster/nodes/{drained}")).await;
    assert_eq!(on_n1["node"]["state"], "DECOMMISSIONING");
    assert_eq!(on_n1["node"]["numContainers"], 1);
    assert_eq!(n1.handle().containers().await.len(), 1);

    // The containers end, a finishes: n1 has drained, and its agent stops.
    release(&dir);
    let (a, _) = a.outcome().await;
    assert_eq!(
        (a.final_status.as_str(), a.succeeded),
        ("SUCCEEDED", 1),
        "{a:?}"
    );
    let end = tokio::time::timeout(PATIENCE, n1.ended())
        .await
        .expect("the drained node's agent did not stop");
    let AgentEnd::ShutDown(why) = end else {
        panic!("the agent ended otherwise: {end:?}")
    };
    assert!(why.contains("decommissioned gracefully"), "{why}");
    let gone = rm.get(&format!("/ws/v1/cluster/nodes/{drained}")).await;
    assert_eq!(gone["node"]["state"], "DECOMMISSIONED");
    let (b, _) = b.outcome().await;
    assert_eq!(b.final_status, "SUCCEEDED", "{b:?}");
    n1.stop().await;
    n2.stop().await;
    rm.shutdown().await;
}

/// A node whose health script prints an `ERROR` line is UNHEALTHY with that
/// line as its report, in the RM's view and its own, and runs nothing; once
/// the script passes (the test deletes the file it looks for), the node is
/// RUNNING again and the waiting container runs there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unhealthy_node_takes_no_container_until_its_health_script_passes() {
    use std::os::unix::fs::PermissionsExt as _;

    let dir = test_dir("health");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let sick = dir.join("sick");
    std::fs::write(&sick, "").unwrap();
    let path = dir.join("health.sh");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho checking\nif [ -e '{}' ]; then echo 'ERROR disk /data1 is full'; fi\n",
            sick.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut script = HealthScript::new(&path);
    script.interval = Duration::from_millis(200);
    script.timeout = Duration::from_secs(10);
    let n1 = start_nm_with(&rm, &dir, "n1", 512, Some(script)).await;
    let id = n1.node_id().to_string();
    // Null until the node has registered.
    let node_view = |rm: &Rm| {
        let id = id.clone();
        let mut client = rm.client();
        async move {
            client
                .get::<Value>(&format!("/ws/v1/cluster/nodes/{id}"))
                .await
                .map_or(Value::Null, |v| v["node"].clone())
        }
    };
    wait_until("the node to be unhealthy", || async {
        node_view(&rm).await["state"] == "UNHEALTHY"
    })
    .await;
    assert_eq!(
        node_view(&rm).await["healthReport"],
        "ERROR disk /data1 is full"
    );
    let info = n1.handle().info().await.unwrap();
    assert_eq!(
        (info.node_healthy, info.health_report.as_str()),
        (false, "ERROR disk /data1 is full")
    );

    // An app asks; the node heartbeats twice more and is given nothing.
    let a = spawn_shell(shell(&rm, &dir, "a", 1, 128, GATED));
    wait_until("a's ask to reach the RM", || async {
        rm.get("/ws/v1/cluster/metrics").await["clusterMetrics"]["containersPending"]
            .as_u64()
            .unwrap_or(0)
            > 0
    })
    .await;
    let asked_at = node_view(&rm).await["lastHealthUpdate"].as_u64().unwrap();
    wait_until("two more heartbeats", || async {
        node_view(&rm).await["lastHealthUpdate"].as_u64().unwrap() > asked_at + 100
    })
    .await;
    assert!(n1.handle().containers().await.is_empty());
    assert!(ran(&dir).is_empty());

    // Healthy again: back in service, and a's container runs on it.
    std::fs::remove_file(&sick).unwrap();
    wait_until("the node to run again", || async {
        node_view(&rm).await["state"] == "RUNNING"
    })
    .await;
    assert_eq!(node_view(&rm).await["healthReport"], "");
    wait_until("a's container to run", || async { ran(&dir).len() == 1 }).await;
    let info = n1.handle().info().await.unwrap();
    assert_eq!((info.node_healthy, info.health_report.as_str()), (true, ""));
    release(&dir);
    let (a, _) = a.outcome().await;
    assert_eq!(
        (a.final_status.as_str(), a.succeeded),
        ("SUCCEEDED", 1),
        "{a:?}"
    );
    n1.stop().await;
    rm.shutdown().await;
}

/// A node the RM's include list leaves out is refused at registration;
/// its agent stops at once with the RM's words rather than asking again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_the_rm_refuses_stops_with_the_rms_words() {
    let dir = test_dir("refused");
    let include = dir.join("nodes.include");
    std::fs::write(&include, "elsewhere\n").unwrap();
    let rm = rm_with_hosts_file("include", &include).await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let id = n1.node_id().to_string();
    let end = tokio::time::timeout(PATIENCE, n1.ended())
        .await
        .expect("the refused node's agent did not stop");
    let AgentEnd::Refused(why) = end else {
        panic!("the agent ended otherwise: {end:?}")
    };
    assert!(
        why.starts_with(&format!("node {id} may not join the cluster: neither localhost nor {id} is listed in the include file")),
        "{why}"
    );
    let nodes = rm.get("/ws/v1/cluster/nodes").await;
    assert_eq!(nodes["nodes"].get("node"), None, "{nodes}");
    n1.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_node_secret_only_agents_showing_it_join_and_the_shell_runs() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = test_dir("secret");
    let file = dir.join("node.secret");
    std::fs::write(&file, "0123456789abcdef0123456789abcdef\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = file.to_string_lossy().into_owned();
    let rm = Rm::start(&site(&[("weft.nm.secret.file", &path)]), "127.0.0.1:0").await;
    // An agent without the secret, or with another, is refused and stops.
    let mut refusals = String::new();
    for (name, secret) in [
        ("n0", None),
        ("n9", Some("ffffffffffffffffffffffffffffffff")),
    ] {
        let mut config = nm_config(&rm, &dir, name, 512);
        config.node_secret = secret.map(|s| NodeSecret::from_text(s).unwrap());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let n = NodeManager::start(config, listener).await.unwrap();
        let end = tokio::time::timeout(PATIENCE, n.ended())
            .await
            .expect("the refused node's agent did not stop");
        let AgentEnd::Refused(why) = end else {
            panic!("the agent ended otherwise: {end:?}")
        };
        refusals.push_str(&why);
        refusals.push('\n');
        n.stop().await;
    }
    expect_test::expect![[r#"
        this resource manager authenticates nodes: send its node secret as Authorization: Bearer <secret> (the node agent reads it from the file its site file names in weft.nm.secret.file)
        the node secret presented is not this resource manager's (weft.nm.secret.file); check that the node agent reads the same file
    "#]]
    .assert_eq(&refusals);
    let nodes = rm.get("/ws/v1/cluster/nodes").await;
    assert_eq!(nodes["nodes"].get("node"), None, "{nodes}");
    // The agent with the secret joins, and a shell's container runs on it.
    let mut config = nm_config(&rm, &dir, "n1", 512);
    config.node_secret = Some(NodeSecret::read(&file).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let n1 = NodeManager::start(config, listener).await.unwrap();
    let (outcome, _) = spawn_shell(shell(&rm, &dir, "a", 1, 64, "echo hi"))
        .outcome()
        .await;
    assert_eq!(
        (outcome.final_status.as_str(), outcome.succeeded),
        ("SUCCEEDED", 1),
        "{outcome:?}"
    );
    n1.stop().await;
    rm.shutdown().await;
}

/// Writes `secret` to `path`, readable by its owner only.
fn write_secret(path: &Path, secret: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::write(path, format!("{secret}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_node_secret_is_picked_up_and_the_containers_keep_running() {
    let dir = test_dir("secret-roll");
    let (rm_file, nm_file) = (dir.join("rm.secret"), dir.join("nm.secret"));
    let old = "0123456789abcdef0123456789abcdef";
    let new = "fedcba9876543210fedcba9876543210";
    write_secret(&rm_file, old);
    write_secret(&nm_file, old);
    let state = dir.join("state").to_string_lossy().into_owned();
    let rm_secret = rm_file.to_string_lossy().into_owned();
    let site = site(&[
        ("weft.rm.state-store.dir", &state),
        ("weft.nm.secret.file", &rm_secret),
    ]);
    let rm = Rm::start(&site, "127.0.0.1:0").await;
    let addr = rm.addr;
    let mut config = nm_config(&rm, &dir, "n1", 512);
    config.node_secret = Some(NodeSecret::read(&nm_file).unwrap());
    config.node_secret_file = Some(nm_file.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let n1 = NodeManager::start(config, listener).await.unwrap();
    let a = spawn_shell(shell(&rm, &dir, "a", 1, 128, GATED));
    wait_until("the container to run", || async { ran(&dir).len() == 1 }).await;
    let pid = pid_of(&dir, &ran(&dir)[0]);

    // The node's file first, then the RM's, then the RM restarts.
    write_secret(&nm_file, new);
    write_secret(&rm_file, new);
    rm.shutdown().await;
    let rm = Rm::start(&site, &addr.to_string()).await;
    wait_until("the node to register again with its container", || async {
        let nodes = rm.get("/ws/v1/cluster/nodes").await;
        nodes["nodes"]["node"][0]["numContainers"] == 1
    })
    .await;
    assert!(is_alive(pid), "the container died with the old secret");
    release(&dir);
    let (outcome, events) = a.outcome().await;
    assert_eq!(
        (outcome.final_status.as_str(), outcome.succeeded),
        ("SUCCEEDED", 1),
        "{outcome:?} {events:?}"
    );
    let ended = tokio::time::timeout(Duration::from_millis(100), n1.ended()).await;
    assert!(ended.is_err(), "the agent stopped: {ended:?}");
    n1.stop().await;
    rm.shutdown().await;
}

/// The raw body of `GET path` on a node, and its status.
async fn node_get(node: &mut RmClient, path: &str) -> (u16, String) {
    let a = node.request(Method::GET, path, None).await.unwrap();
    (
        a.status.as_u16(),
        String::from_utf8_lossy(&a.body).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_api_answers_in_hadoops_shapes() {
    let dir = test_dir("shapes");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let mut node = RmClient::new(&format!("http://{}", n1.http_address()), None).unwrap();
    // An empty list is an empty wrapper, as the RM writes {"apps":{}}.
    assert_eq!(
        node_get(&mut node, "/ws/v1/node/containers").await,
        (200, r#"{"containers":{}}"#.to_owned())
    );
    // Hadoop's names and types for what a Weft node has.
    for path in ["/ws/v1/node", "/ws/v1/node/info"] {
        let (status, body) = node_get(&mut node, path).await;
        assert_eq!(status, 200, "{body}");
        let info = &serde_json::from_str::<Value>(&body).unwrap()["nodeInfo"];
        assert_eq!(info["id"], json!(n1.node_id().to_string()));
        assert_eq!(info["nodeManagerVersion"], json!(env!("CARGO_PKG_VERSION")));
        assert_eq!(info["nodeHealthy"], json!(true));
        assert_eq!(info["healthReport"], json!(""));
        assert_eq!(info["pmemCheckEnabled"], json!(true));
        assert_eq!(info["vmemCheckEnabled"], json!(false));
        assert_eq!(info["totalPmemAllocatedContainersMB"], json!(512));
        assert_eq!(info["totalVCoresAllocatedContainers"], json!(4));
        assert!(
            info["nmStartupTime"].as_u64().unwrap() > 1_600_000_000_000,
            "{info}"
        );
    }

    // A container allocated here and not started yet.
    let _app = one_container_on(&rm, &n1).await;
    let id = n1.handle().containers().await[0].id.clone();
    let (status, body) = node_get(&mut node, &format!("/ws/v1/node/containers/{id}")).await;
    assert_eq!(status, 200, "{body}");
    let c = &serde_json::from_str::<Value>(&body).unwrap()["container"];
    // Hadoop writes exitCode always, ContainerExitStatus.INVALID (-1000)
    // until the container has exited.
    assert_eq!(c["exitCode"], json!(-1000), "{c}");
    assert_eq!(c["state"], json!("ALLOCATED"));
    assert_eq!(
        (
            c["totalMemoryNeededMB"].as_u64(),
            c["totalVCoresNeeded"].as_u64()
        ),
        (Some(64), Some(1))
    );
    let (_, body) = node_get(&mut node, "/ws/v1/node/containers").await;
    let list = &serde_json::from_str::<Value>(&body).unwrap()["containers"]["container"];
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{body}");
    assert_eq!(list[0]["exitCode"], json!(-1000));
    // Every path also answers with a trailing slash, as Hadoop's do.
    for path in [
        "/ws/v1/node/".to_owned(),
        "/ws/v1/node/info/".to_owned(),
        "/ws/v1/node/containers/".to_owned(),
        format!("/ws/v1/node/containers/{id}/"),
    ] {
        let (status, body) = node_get(&mut node, &path).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    // A wrong method is a 405 that says so, in Hadoop's error shape.
    let a = node
        .request(Method::DELETE, "/ws/v1/node/containers", None)
        .await
        .unwrap();
    let body = String::from_utf8_lossy(&a.body);
    assert_eq!(a.status.as_u16(), 405, "{body}");
    assert!(
        body.contains("DELETE is not allowed on /ws/v1/node/containers"),
        "{body}"
    );

    // The node takes only JSON bodies: XML, however nested, is refused
    // before anything else is looked at, as is JSON nested past serde's limit.
    let start = format!("/ws/v1/node/containers/{id}/start");
    let deep_xml = format!("{}x{}", "<a>".repeat(100_000), "</a>".repeat(100_000));
    let deep_json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for body in [deep_xml, deep_json] {
        let a = node
            .request(Method::POST, &start, Some(body.into_bytes()))
            .await
            .unwrap();
        assert_eq!(
            a.status.as_u16(),
            400,
            "{}",
            String::from_utf8_lossy(&a.body)
        );
    }
    n1.stop().await;
    rm.shutdown().await;
}

/// The machine's memory in MB and its processors, read here the way a
/// person would, to hold the agent's figures against.
#[cfg(target_os = "linux")]
fn machine_size() -> (u64, f64) {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let total_kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let processors = stat
        .lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
        .count();
    (total_kb >> 10, processors as f64)
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_carry_what_the_machine_and_its_containers_use() {
    let dir = test_dir("utilization");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let id = n1.node_id().to_string();
    let running = spawn_shell(shell(&rm, &dir, "a", 1, 64, GATED));
    wait_until("the container to run", || async { ran(&dir).len() == 1 }).await;
    let (machine_mb, processors) = machine_size();
    // The monitor samples the container, then a heartbeat carries it.
    let report = || async {
        rm.get(&format!("/ws/v1/cluster/nodes/{id}")).await["node"]["resourceUtilization"].clone()
    };
    wait_until(
        "the node's and its container's use in the node report",
        || async { report().await["aggregatedContainersVirtualMemoryMB"].as_u64() > Some(0) },
    )
    .await;
    let last = report().await;
    let u = &last;
    let node_pmem = u["nodePhysicalMemoryMB"].as_u64().unwrap();
    assert!(node_pmem > 0 && node_pmem <= machine_mb, "{u}");
    assert!(
        u["nodeVirtualMemoryMB"].as_u64().unwrap() >= node_pmem,
        "{u}"
    );
    let cpu = u["nodeCPUUsage"].as_f64().unwrap();
    assert!((0.0..=processors).contains(&cpu), "{u}");
    assert!(
        u["aggregatedContainersPhysicalMemoryMB"].as_u64().unwrap() <= node_pmem,
        "{u}"
    );
    let containers_cpu = u["containersCPUUsage"].as_f64().unwrap();
    assert!((0.0..=processors).contains(&containers_cpu), "{u}");
    let metrics = rm.get("/ws/v1/cluster/metrics").await;
    assert!(
        metrics["clusterMetrics"]["utilizedMBPercent"]
            .as_u64()
            .is_some(),
        "{metrics}"
    );
    release(&dir);
    let (outcome, _) = running.outcome().await;
    assert_eq!(outcome.final_status, "SUCCEEDED", "{outcome:?}");
    n1.stop().await;
    rm.shutdown().await;
}

/// A node's `/metrics`: the text, and each sample by series.
async fn node_metrics(node: &NodeManager) -> (String, BTreeMap<String, f64>) {
    let mut client = RmClient::new(&format!("http://{}", node.http_address()), None).unwrap();
    let (status, text) = node_get(&mut client, "/metrics").await;
    assert_eq!(status, 200, "{text}");
    let samples = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("series value");
            (series.to_owned(), value.parse().expect("a number"))
        })
        .collect();
    (text, samples)
}

/// Asserts that each series has its value.
fn assert_samples(samples: &BTreeMap<String, f64>, expected: &[(&str, f64)]) {
    for (series, v) in expected {
        assert_eq!(samples.get(*series), Some(v), "{series} in {samples:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nodes_metrics_count_how_its_containers_ended() {
    let dir = test_dir("metrics");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    // Side by side, well within the node: two containers that exit 0, one
    // that exits 3, and one over its memory (about 130 MB in 64 MB).
    let hog = r#"echo $$ > "$OUT/$CONTAINER_ID.pid"; awk 'BEGIN { s = "x"; while (length(s) < 100000000) s = s s; system("sleep 60") }'"#;
    let fine = spawn_shell(shell(&rm, &dir, "a", 2, 64, "exit 0"));
    let failing = spawn_shell(shell(&rm, &dir, "b", 1, 64, "exit 3"));
    let hungry = spawn_shell(shell(&rm, &dir, "a", 1, 64, hog));
    for (shell, status) in [(fine, "SUCCEEDED"), (failing, "FAILED"), (hungry, "FAILED")] {
        let (outcome, _) = shell.outcome().await;
        assert_eq!(outcome.final_status, status, "{outcome:?}");
    }
    // And an application master container the RM stops when its app is
    // killed.
    let mut alice = rm.client();
    let app = new_application(&mut alice).await;
    let submission = json!({
        "application-id": app,
        "queue": "a",
        "resource": {"memory": 64, "vCores": 1},
        "am-container-spec": {
            "commands": {"command": "echo $$ > \"$OUT/am.pid\"; sleep 60"},
            "environment": {"entry": [{"key": "OUT", "value": dir.join("out").to_string_lossy()}]},
        },
    });
    alice.submit_application(&submission).await.unwrap();
    let am_is = |state: &'static str| {
        let n1 = &n1;
        async move {
            n1.handle()
                .containers()
                .await
                .iter()
                .any(|c| c.is_am && c.state == state)
        }
    };
    wait_until("the AM container to run", || am_is("RUNNING")).await;
    let (_, running) = node_metrics(&n1).await;
    assert_samples(
        &running,
        &[
            ("weft_nm_containers_running", 1.0),
            ("weft_nm_apps_running", 1.0),
            ("weft_nm_allocated_memory_bytes", 64.0 * 1048576.0),
            ("weft_nm_available_memory_bytes", 448.0 * 1048576.0),
            ("weft_nm_available_vcores", 3.0),
        ],
    );
    kill_app(&mut alice, &app).await;
    wait_until("the node to stop the AM", || am_is("COMPLETE")).await;

    let (_, m) = node_metrics(&n1).await;
    assert_samples(
        &m,
        &[
            ("weft_nm_containers_launched_total", 5.0),
            ("weft_nm_containers_completed_total", 2.0),
            ("weft_nm_containers_failed_total", 1.0),
            ("weft_nm_container_launch_failures_total", 0.0),
            (
                r#"weft_nm_containers_killed_total{reason="memory_limit"}"#,
                1.0,
            ),
            (
                r#"weft_nm_containers_killed_total{reason="app_finished"}"#,
                1.0,
            ),
            (r#"weft_nm_containers_killed_total{reason="released"}"#, 0.0),
            ("weft_nm_containers_running", 0.0),
            ("weft_nm_containers_pending_start", 0.0),
            ("weft_nm_allocated_memory_bytes", 0.0),
            ("weft_nm_capability_memory_bytes", 512.0 * 1048576.0),
            ("weft_nm_container_launch_duration_seconds_count", 5.0),
            (r#"weft_nm_registrations_total{outcome="registered"}"#, 1.0),
            ("weft_nm_registered", 1.0),
            ("weft_nm_healthy", 1.0),
        ],
    );
    assert!(
        m[r#"weft_nm_heartbeats_total{outcome="answered"}"#] >= 1.0,
        "{m:#?}"
    );
    // Heartbeats go every 100 ms here.
    assert!(m["weft_nm_heartbeat_age_seconds"] < 10.0, "{m:#?}");

    // The same figures in Hadoop's bean.
    let mut node = RmClient::new(&format!("http://{}", n1.http_address()), None).unwrap();
    let (status, body) = node_get(
        &mut node,
        "/jmx?qry=Hadoop:service=NodeManager,name=NodeManagerMetrics",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let beans: Value = serde_json::from_str(&body).unwrap();
    let bean = &beans["beans"][0];
    for (attribute, v) in [
        ("tag.Hostname", json!("localhost")),
        ("ContainersLaunched", json!(5)),
        ("ContainersCompleted", json!(2)),
        ("ContainersFailed", json!(1)),
        ("ContainersKilled", json!(2)),
        ("ContainersRunning", json!(0)),
        ("AllocatedContainers", json!(0)),
        ("AllocatedGB", json!(0)),
        ("AvailableGB", json!(0)),
        ("AvailableVCores", json!(4)),
        ("ContainerLaunchDurationNumOps", json!(5)),
    ] {
        assert_eq!(bean[attribute], v, "{attribute} in {bean}");
    }
    n1.stop().await;
    rm.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_in_one_process_keep_their_own_figures() {
    let dir = test_dir("metrics-two");
    let rm = Rm::start(&site(&[]), "127.0.0.1:0").await;
    let n1 = start_nm(&rm, &dir, "n1", 512).await;
    let running = spawn_shell(shell(&rm, &dir, "a", 1, 128, GATED));
    wait_until("the container to run", || async { ran(&dir).len() == 1 }).await;
    let n2 = start_nm(&rm, &dir, "n2", 256).await;
    wait_until("the second node to register", || async {
        node_metrics(&n2).await.1["weft_nm_registered"] == 1.0
    })
    .await;
    // The running node's use reaches its gauges with a heartbeat after
    // the monitor sampled the container.
    wait_until("the first node's measured use", || async {
        node_metrics(&n1)
            .await
            .1
            .get("weft_nm_containers_used_virtual_memory_bytes")
            .is_some_and(|b| *b > 0.0)
    })
    .await;
    let (text1, m1) = node_metrics(&n1).await;
    let (text2, m2) = node_metrics(&n2).await;
    assert_samples(
        &m1,
        &[
            ("weft_nm_containers_launched_total", 1.0),
            ("weft_nm_containers_running", 1.0),
            ("weft_nm_allocated_memory_bytes", 128.0 * 1048576.0),
            ("weft_nm_capability_memory_bytes", 512.0 * 1048576.0),
        ],
    );
    assert_samples(
        &m2,
        &[
            ("weft_nm_containers_launched_total", 0.0),
            ("weft_nm_containers_running", 0.0),
            ("weft_nm_allocated_memory_bytes", 0.0),
            ("weft_nm_capability_memory_bytes", 256.0 * 1048576.0),
            ("weft_nm_container_launch_duration_seconds_count", 0.0),
        ],
    );
    assert!(m1["weft_nm_node_used_memory_bytes"] > 0.0, "{m1:#?}");
    // Both pass Prometheus's own lint.
    for text in [&text1, &text2] {
        weft_test_support::assert_promtool_accepts_metrics(text);
    }
    release(&dir);
    let (outcome, _) = running.outcome().await;
    assert_eq!(outcome.final_status, "SUCCEEDED", "{outcome:?}");
    n2.stop().await;
    n1.stop().await;
    rm.shutdown().await;
}
