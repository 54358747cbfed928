//! `weft local`: a whole cluster in one process on loopback — the RM on the
//! bundled configuration and N node agents running real processes — and,
//! unless `--no-demo`, two applications in two queues so a newcomer sees
//! containers scheduled and shared by weight within seconds. The cluster
//! then keeps running for `weft app submit` and friends until Ctrl-C.
//!
//! The RM is `weft_rm::Service`, the nodes `weft_nm::NodeManager`, the demo
//! apps `weft_nm::distributed_shell`; this module wires and prints. The
//! process has one logging filter, which the RM's `/logLevel` and every
//! node's change alike, and the nodes take the RM's `yarn.acl.enable`,
//! `yarn.admin.acl`, `hadoop.security.instrumentation.requires.admin` and
//! `yarn.webapp.filter-entity-list-by-user`.
//!
//! Under `yarn.http.policy` HTTPS_ONLY in the configuration directory, the
//! RM and the nodes serve HTTPS with the RM's key material (`ssl-server.xml`),
//! and every client of the process, nodes and demo apps included, trusts
//! what the directory's `ssl-client.xml` says (else `--ca-file`, else the
//! system's roots); the RM is called `localhost`, which its certificate
//! must list.
//!
//! A node agent that ends on its own (the RM refused or decommissioned it,
//! `weft rmadmin -refreshNodes` with a `--conf` naming hosts files) is
//! reported, and the cluster runs on without it; one that ends before the
//! cluster is up stops the start with its reason.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use tokio::sync::{mpsc, watch};
use weft_model::Resource;
use weft_nm::distributed_shell::{self, ShellConfig, ShellEvent};
use weft_nm::{AgentEnd, MemoryEnforcement, NmConfig, NodeManager};
use weft_rm::access::AclSettings;
use weft_rm::client::RmClient;
use weft_rm::dto::ResourceDto;
use weft_rm::{Embedding, RmConfig};

use crate::app::Printer;
use crate::print;

#[derive(Args, Debug)]
pub(crate) struct LocalArgs {
    /// Node agents to run.
    #[arg(long, default_value_t = 3)]
    nodes: usize,
    /// Memory of each node, in MB.
    #[arg(long, default_value_t = 8192)]
    memory_mb: u64,
    /// Vcores of each node.
    #[arg(long, default_value_t = 8)]
    vcores: u64,
    /// Configuration directory (default: ./conf when it exists, else the
    /// built-in copies).
    #[arg(long)]
    conf: Option<PathBuf>,
    /// Address the RM listens on.
    #[arg(long, default_value = "127.0.0.1:8088")]
    listen: SocketAddr,
    /// Where the nodes run containers and keep their logs (default: a
    /// weft-local directory in the system's temporary directory).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Start the cluster only; run no demo applications.
    #[arg(long)]
    no_demo: bool,
}

pub(crate) async fn run(
    a: LocalArgs,
    log_levels: Arc<crate::logging::ReloadableFilter>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    if a.nodes == 0 {
        anyhow::bail!("--nodes must be at least 1");
    }
    if a.memory_mb == 0 || a.vcores == 0 {
        anyhow::bail!("--memory-mb and --vcores must be at least 1");
    }
    // Ctrl-C is caught from the start: the containers run in process groups
    // of their own, which the terminal's SIGINT does not reach, so only an
    // orderly stop of the nodes ends them.
    let (stop_tx, stop) = watch::channel(false);
    tokio::spawn(async move {
        crate::shutdown_signal().await;
        let _ = stop_tx.send(true);
    });
    let dir = a.conf.clone().or_else(weft_rm::config::default_conf_dir);
    let config = RmConfig::load(dir.as_deref()).context("cannot load the configuration")?;
    for w in &config.warnings {
        tracing::warn!("{w}");
    }
    let source = config.source.clone();
    // The nodes take the RM's ACL settings as of start, as a Hadoop
    // NodeManager reads the same yarn-site.xml once.
    let access = NodeAccess {
        acl: AclSettings {
            enabled: config.core.scheduler.acl_enable,
            admins: config.core.scheduler.admin_acl.clone(),
        },
        instrumentation_requires_admin: config.service.instrumentation_requires_admin,
        filter_entity_list_by_user: config.service.filter_entity_list_by_user,
        http_policy: config.service.http_policy,
        server_tls: config.tls.clone(),
        node_secret: config.service.node_secret.clone(),
    };
    if let (Some(tls), Some(dir)) = (&config.tls, &dir) {
        tracing::info!(certificate = %tls.certificate().display(), "serving HTTPS");
        let client_conf = dir.join(weft_rm::tls::DEFAULT_CLIENT_CONF);
        if let Some(trust) = weft_rm::tls::ClientTls::from_client_conf(&client_conf)? {
            // `--ca-file`, when given, was set first and stays.
            let _ = weft_rm::client::set_default_trust(trust);
        }
    }
    // One process, one filter: the RM's /logLevel and every node's change
    // the same levels.
    let embedding = Embedding {
        log_levels: Some(log_levels.clone()),
        ..Embedding::default()
    };
    let service = crate::start_service(config, log_levels)?;
    let listener = tokio::net::TcpListener::bind(a.listen).await.with_context(|| {
        format!(
            "cannot listen on {} (is another resource manager running? try --listen 127.0.0.1:0)",
            a.listen
        )
    })?;
    let rm_addr = listener.local_addr()?;
    let rm_url = match access.http_policy {
        // The name a certificate for this machine is likeliest to list.
        weft_rm::tls::HttpPolicy::HttpsOnly => format!("https://localhost:{}", rm_addr.port()),
        weft_rm::tls::HttpPolicy::HttpOnly => format!("http://{rm_addr}"),
    };
    let (stop_rm, rm_stopped) = tokio::sync::oneshot::channel::<()>();
    let rm_task = tokio::spawn(service.serve(listener, async move {
        let _ = rm_stopped.await;
    }));
    let work = a
        .work_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("weft-local"));
    let mut nodes = Vec::with_capacity(a.nodes);
    let mut outcome = Ok(());
    for i in 0..a.nodes {
        match start_node(&a, &rm_url, &work, i, &access, &embedding).await {
            Ok(n) => nodes.push(n),
            Err(e) => {
                outcome = Err(e.context(format!("cannot start node {}", i + 1)));
                break;
            }
        }
    }
    // Each node that ends on its own is reported with why.
    let (ends_tx, ends) = mpsc::unbounded_channel::<(String, AgentEnd)>();
    for n in &nodes {
        let (id, ended, tx) = (n.node_id().to_string(), n.ended(), ends_tx.clone());
        tokio::spawn(async move {
            let end = ended.await;
            if end != AgentEnd::Stopped {
                let _ = tx.send((id, end));
            }
        });
    }
    drop(ends_tx);
    if outcome.is_ok() {
        print(format!(
            "Weft local cluster: resource manager at {rm_url} ({source}), {} node(s) of {} MB and {} vcores; containers run under {}\n",
            a.nodes,
            a.memory_mb,
            a.vcores,
            work.display()
        ));
        outcome = session(&a, &rm_url, &nodes, stop.clone(), started, ends).await;
    }
    // Whatever happened, the nodes stop their containers before leaving.
    print("stopping the nodes and the resource manager\n".to_owned());
    for n in nodes {
        n.stop().await;
    }
    let _ = stop_rm.send(());
    rm_task.await??;
    outcome
}

/// Who may do what on the nodes: the RM's settings, as of start.
struct NodeAccess {
    /// `yarn.acl.enable` and `yarn.admin.acl`.
    acl: AclSettings,
    /// `hadoop.security.instrumentation.requires.admin`.
    instrumentation_requires_admin: bool,
    /// `yarn.webapp.filter-entity-list-by-user`.
    filter_entity_list_by_user: bool,
    /// `yarn.http.policy`.
    http_policy: weft_rm::tls::HttpPolicy,
    /// The RM's key material, which the nodes serve HTTPS with too.
    server_tls: Option<weft_rm::tls::ServerTls>,
    /// The RM's node secret (`weft.nm.secret.file`), which its nodes show.
    node_secret: Option<weft_rm::node_secret::NodeSecret>,
}

async fn start_node(
    a: &LocalArgs,
    rm_url: &str,
    work: &std::path::Path,
    i: usize,
    access: &NodeAccess,
    embedding: &Embedding,
) -> anyhow::Result<NodeManager> {
    let mut config = NmConfig::new(
        rm_url.to_owned(),
        Resource::new(a.memory_mb, a.vcores),
        work.join(format!("node{}", i + 1)),
    );
    config.rack = format!("/rack{}", i % 2 + 1);
    config.memory_enforcement = MemoryEnforcement::Auto;
    config.monitor_interval = Duration::from_millis(1000);
    config.acl = access.acl.clone();
    config.instrumentation_requires_admin = access.instrumentation_requires_admin;
    config.filter_entity_list_by_user = access.filter_entity_list_by_user;
    config.http_policy = access.http_policy;
    config.server_tls = access.server_tls.clone();
    config.node_secret = access.node_secret.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    Ok(NodeManager::start_with(config, listener, embedding.clone()).await?)
}

/// The cluster's life once it is up: the nodes registered, the demo, then
/// waiting for Ctrl-C; nodes that end on their own (`ends`) are reported.
async fn session(
    a: &LocalArgs,
    rm_url: &str,
    nodes: &[NodeManager],
    mut stop: watch::Receiver<bool>,
    started: Instant,
    mut ends: mpsc::UnboundedReceiver<(String, AgentEnd)>,
) -> anyhow::Result<()> {
    tokio::select! {
        res = wait_for_nodes(rm_url, nodes.len()) => res?,
        Some((id, end)) = ends.recv() => {
            anyhow::bail!("node {id} stopped before the cluster was up: {}", why_ended(&end));
        }
        _ = stop.wait_for(|s| *s) => return Ok(()),
    }
    tokio::spawn(async move {
        while let Some((id, end)) = ends.recv().await {
            print(format!(
                "node {id} stopped, and the cluster runs on without it: {}\n",
                why_ended(&end)
            ));
        }
    });
    for n in nodes {
        print(format!(
            "  node {} at {}\n",
            n.node_id(),
            weft_rm::client::url_like(rm_url, n.http_address())
        ));
    }
    if !a.no_demo {
        demo(rm_url, started, stop.clone()).await?;
    }
    if *stop.borrow() {
        return Ok(());
    }
    // The clients' default address needs no flag.
    let rm = if rm_url == "http://127.0.0.1:8088" {
        String::new()
    } else {
        format!(" --rm {rm_url}")
    };
    print(format!(
        "\nThe cluster keeps running; Ctrl-C stops it. Try, from another terminal:\n  \
         weft app submit{rm} --queue root.dev.shared --num-containers 4 --command 'echo hello from $CONTAINER_ID; sleep 3'\n  \
         weft application -list -appStates ALL{rm}\n  \
         weft node -list{rm}\n  \
         curl {rm_url}/ws/v1/cluster/scheduler\n\
         and open {rm_url}/cluster in a browser for the web UI.\n\
         (weft is target/release/weft, or `cargo run --release -p weft --`.)\n"
    ));
    let _ = stop.wait_for(|s| *s).await;
    Ok(())
}

/// Why a node ended, in the RM's words when it had any.
fn why_ended(end: &AgentEnd) -> String {
    match end {
        AgentEnd::Stopped => "it was stopped".to_owned(),
        AgentEnd::Refused(why) => format!("registration refused: {why}"),
        AgentEnd::ShutDown(why) => why.clone(),
    }
}

async fn wait_for_nodes(rm_url: &str, n: usize) -> anyhow::Result<()> {
    let mut client = RmClient::new(rm_url, None)?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let nodes: serde_json::Value = client.get("/ws/v1/cluster/nodes?states=RUNNING").await?;
        let running = nodes["nodes"]["node"].as_array().map_or(0, Vec::len);
        if running >= n {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!("only {running} of {n} nodes registered within 30 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Two apps in two queues of the bundled configuration: `etl-bot` in
/// `root.prod.etl` (weight 3) and `alice` in `root.dev.shared` (weight 1),
/// each wanting more than half the cluster, so the shares show.
async fn demo(rm_url: &str, started: Instant, stop: watch::Receiver<bool>) -> anyhow::Result<()> {
    print("\nDemo: two applications of 16 containers (1 GB, 1 vcore, 4 s each) in root.prod.etl (weight 3) and root.dev.shared (weight 1).\n".to_owned());
    let command = "echo \"hello from $CONTAINER_ID on $NM_HTTP_ADDRESS\"; sleep 4";
    let (tx, mut events) = mpsc::unbounded_channel::<(usize, ShellEvent)>();
    let mut tasks = Vec::new();
    let apps = [
        ("prod", "etl-bot", "root.prod.etl"),
        ("dev", "alice", "root.dev.shared"),
    ];
    for (i, (name, user, queue)) in apps.iter().enumerate() {
        let mut config = ShellConfig::new(
            rm_url,
            *user,
            16,
            ResourceDto {
                memory: 1024,
                vcores: 1,
            },
            command,
        );
        config.queue = Some((*queue).to_owned());
        config.name = format!("demo-{name}");
        config.interval = Duration::from_millis(250);
        let tx = tx.clone();
        let mut stop = stop.clone();
        // Ctrl-C kills the demo's apps, whose containers the RM then stops.
        let cancel = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        tasks.push(tokio::spawn(distributed_shell::run(
            config,
            cancel,
            move |e| {
                let _ = tx.send((i, e));
            },
        )));
    }
    drop(tx);
    let mut printers: Vec<Printer> = apps
        .iter()
        .map(|(name, _, _)| {
            let mut p = Printer::new(format!("{name:<4} "), started);
            p.verbose = false;
            p
        })
        .collect();
    let mut first_container = None;
    while let Some((i, e)) = events.recv().await {
        if first_container.is_none() && matches!(e, ShellEvent::Launched { .. }) {
            let at = started.elapsed();
            first_container = Some(at);
            print(format!(
                "[{:5.1}s] first container running, {} ms after start\n",
                at.as_secs_f64(),
                at.as_millis()
            ));
        }
        printers[i].show(&e);
    }
    for (t, (name, _, _)) in tasks.into_iter().zip(apps) {
        let outcome = t.await?.with_context(|| format!("demo app {name}"))?;
        print(format!(
            "{name}: {} {} ({} succeeded, {} failed)\n",
            outcome.app, outcome.final_status, outcome.succeeded, outcome.failed
        ));
    }
    Ok(())
}
