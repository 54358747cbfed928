//! The command line as a user meets it: the `weft` binary run against a
//! ResourceManager served in this process on loopback, checking what it
//! prints, on which stream, and its exit status. Applications are made by
//! the distributed shell, in process, with no node to run on, so they wait
//! (RUNNING, their unmanaged AM registered) until something kills them.
//! `weft daemonlog` is run against a `weft nm` process, whose log shows
//! what it did; `weft local` over HTTPS runs as a process of its own.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use weft_nm::distributed_shell::{self, ShellConfig, ShellEvent};
use weft_rm::dto::ResourceDto;
use weft_rm::{Clock, RmConfig, Service};

mod common;

use common::{stderr, stdout, weft};

const ALLOC: &str = r#"<allocations>
  <queue name="a"/>
</allocations>"#;

/// An RM on `127.0.0.1:0`, stopped with its runtime when dropped.
struct Rm {
    runtime: tokio::runtime::Runtime,
    url: String,
}

impl Rm {
    fn start() -> Rm {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        // GETs read the snapshot; 0 rebuilds it after every change, so a
        // command sees what the one before it did.
        let site = weft_test_support::site_xml(&[("weft.rm.view-refresh-ms", "0")]);
        let config = RmConfig::from_texts(&site, ALLOC).unwrap();
        let url = runtime.block_on(async {
            let service = Service::start(config, Clock::start()).unwrap();
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            tokio::spawn(service.serve(listener, std::future::pending()));
            url
        });
        Rm { runtime, url }
    }

    /// An application of `alice`'s in `root.a`, running (its AM registered)
    /// until something kills it.
    fn app(&self) -> String {
        let (tx, rx) = mpsc::channel::<Option<String>>();
        let mut config = ShellConfig::new(
            self.url.clone(),
            "alice",
            1,
            ResourceDto {
                memory: 1024,
                vcores: 1,
            },
            "true",
        );
        config.queue = Some("a".to_owned());
        config.interval = Duration::from_millis(50);
        self.runtime.spawn(distributed_shell::run(
            config,
            std::future::pending(),
            move |e| match e {
                ShellEvent::Submitted { app } => {
                    let _ = tx.send(Some(app.to_string()));
                }
                ShellEvent::Registered { .. } => {
                    let _ = tx.send(None);
                }
                _ => {}
            },
        ));
        let wait = Duration::from_secs(30);
        let app = rx.recv_timeout(wait).expect("submitted").expect("an id");
        assert_eq!(rx.recv_timeout(wait), Ok(None), "{app} registers");
        app
    }

    /// `weft <args> --rm <this RM> --user alice`.
    fn weft(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_weft"))
            .args(args)
            .args(["--rm", &self.url, "--user", "alice"])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

/// `-status`'s `Final-State`.
fn final_state(rm: &Rm, app: &str) -> String {
    let o = rm.weft(&["application", "-status", app]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    text.lines()
        .find_map(|l| l.strip_prefix("\tFinal-State : "))
        .unwrap_or_else(|| panic!("no Final-State in {text}"))
        .to_owned()
}

#[test]
fn kill_goes_on_past_a_refusal_and_fails_the_command() {
    let rm = Rm::start();
    let first = rm.app();
    let last = rm.app();
    let unknown = "application_1_0001";
    let o = rm.weft(&["application", "-kill", &first, unknown, &last]);
    // The kills before and after the unknown id are done and reported.
    assert_eq!(
        stdout(&o),
        format!("Killing application {first}\nKilling application {last}\n")
    );
    assert_eq!(final_state(&rm, &first), "KILLED");
    assert_eq!(final_state(&rm, &last), "KILLED");
    // The refusal says which id and why, and the command fails.
    let err = stderr(&o);
    assert!(
        err.contains(&format!("cannot kill {unknown}: 404 Not Found:")),
        "{err}"
    );
    assert!(
        err.contains(&format!("1 of 3 application(s) not killed: {unknown}")),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(1), "{err}");

    // `weft app kill` is the same command.
    let o = rm.weft(&["app", "kill", unknown, &first]);
    assert_eq!(
        stdout(&o),
        format!("Application {first} has already finished (KILLED)\n")
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn app_states_are_read_as_yarn_reads_them() {
    let rm = Rm::start();
    let running = rm.app();
    let killed = rm.app();
    assert!(rm.weft(&["application", "-kill", &killed]).status.success());
    let header = |o: &Output| stdout(o).lines().next().unwrap_or_default().to_owned();
    let ids = |o: &Output| -> Vec<String> {
        assert!(o.status.success(), "{}", stderr(o));
        stdout(o)
            .lines()
            .skip(2)
            .map(|l| l.split('\t').next().unwrap().trim().to_owned())
            .collect()
    };
    // A blank -appStates is the default states, not every state.
    let o = rm.weft(&["application", "-list", "-appStates", ""]);
    assert_eq!(ids(&o), std::slice::from_ref(&running));
    // Hadoop 3's header, tags included.
    assert_eq!(
        header(&o),
        "Total number of applications (application-types: [], states: [SUBMITTED, ACCEPTED, RUNNING] and tags: []):1"
    );
    // ALL names every state, as YARN prints them.
    let o = rm.weft(&["application", "-list", "-appStates", "all"]);
    assert_eq!(ids(&o), [running.clone(), killed]);
    assert_eq!(
        header(&o),
        "Total number of applications (application-types: [], states: [NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED] and tags: []):2"
    );
    // Trimmed and in YARN's order.
    let o = rm.weft(&["application", "-list", "-appStates", " running ,accepted"]);
    assert_eq!(ids(&o), std::slice::from_ref(&running));
    assert_eq!(
        header(&o),
        "Total number of applications (application-types: [], states: [ACCEPTED, RUNNING] and tags: []):1"
    );
    // Types and tags are named as they were read; the columns are Hadoop 3's
    // (a 10-wide queue).
    let o = rm.weft(&[
        "application",
        "-list",
        "-appTypes",
        " weft-shell,",
        "-appTags",
        "nightly, ",
    ]);
    assert_eq!(
        header(&o),
        "Total number of applications (application-types: [WEFT-SHELL], states: [SUBMITTED, ACCEPTED, RUNNING] and tags: [nightly]):0"
    );
    let o = rm.weft(&["application", "-list"]);
    let row = stdout(&o).lines().nth(2).unwrap_or_default().to_owned();
    let columns: Vec<&str> = row.split('\t').collect();
    assert_eq!(columns[0].trim(), running, "{row}");
    assert_eq!(columns[4], "    root.a", "{row}");
}

#[test]
fn an_rm_address_without_a_port_is_port_8088() {
    // `.invalid` never resolves (RFC 2606), so the error names where the
    // command tried to go without anything answering there.
    for rm in ["rm.invalid", "http://rm.invalid", "http://rm.invalid/"] {
        let o = weft(&["application", "-list", "--rm", rm, "--user", "alice"]);
        let err = stderr(&o);
        assert!(
            err.contains("cannot connect to the resource manager at rm.invalid:8088"),
            "{rm}: {err}"
        );
        assert_eq!(o.status.code(), Some(1), "{rm}: {err}");
    }
    // An explicit port is kept, 80 too.
    let o = weft(&["node", "-list", "--rm", "http://rm.invalid:80"]);
    let err = stderr(&o);
    assert!(
        err.contains("cannot connect to the resource manager at rm.invalid:80:"),
        "{err}"
    );
}

#[test]
fn a_bad_rm_address_is_a_usage_error_saying_what_is_wrong() {
    let o = weft(&["application", "-list", "--rm", "rm:80x"]);
    let err = stderr(&o);
    assert!(
        err.contains(
            "invalid value 'rm:80x' for '--rm <RM>': port \"80x\" is not a number from 1 to 65535"
        ),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(2), "{err}");
    let o = weft(&["load", "--rm", "ftp://rm:8088"]);
    let err = stderr(&o);
    assert!(
        err.contains("only http:// and https:// are supported, not ftp://"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(2), "{err}");
}

/// Waits for the child's stdout to print a line starting with `prefix`,
/// and returns the line's last word.
fn wait_for_line(child: &mut Child, prefix: &str) -> String {
    let lines = lines_of(child.stdout.take().unwrap());
    let line = line_with(&lines, prefix);
    line[line.find(prefix).unwrap_or(0)..]
        .split_whitespace()
        .last()
        .unwrap()
        .to_owned()
}

/// The lines of a child's output stream as they come, read to its end on
/// a thread of their own (so the child never blocks on a full pipe).
fn lines_of(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    rx
}

/// The next of `lines` that holds `needle`, waiting up to 30 s for it.
fn line_with(lines: &mpsc::Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("no line with {needle:?}: {e}"));
        if line.contains(needle) {
            return line;
        }
    }
}

#[test]
fn sigterm_kills_the_distributed_shells_app() {
    let rm = Rm::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["app", "submit", "--rm", &rm.url, "--user", "alice"])
        .args(["--queue", "a", "--command", "true", "--interval-ms", "50"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let app = wait_for_line(&mut child, "submitted ");
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "weft app submit ignores SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    // It ended its app rather than dying of the signal and leaving it running.
    assert_eq!(status.code(), Some(1), "{status:?}");
    assert_eq!(final_state(&rm, &app), "KILLED");
}

/// The count `-list` prints in its header.
fn listed(rm: &Rm) -> usize {
    let o = rm.weft(&["application", "-list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let first = text.lines().next().unwrap_or_default();
    first
        .rsplit(':')
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count in {text}"))
}

#[test]
fn ctrl_c_ends_the_load_runs_applications() {
    let rm = Rm::start();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["load", "--rm", &rm.url, "--nodes", "2", "--apps", "3"])
        .args(["--container-ms", "600000", "--heartbeat-ms", "100"])
        .args(["--am-ms", "100", "--queues", "a", "--warmup", "0"])
        .args(["--duration", "600", "--threads", "1"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while listed(&rm) < 3 {
        assert!(Instant::now() < deadline, "the load run submits nothing");
        std::thread::sleep(Duration::from_millis(50));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("weft load ignores Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    // It reported, ended what it had alive, and says it was interrupted.
    assert!(out.contains(" s (interrupted)\n"), "{out}");
    assert!(out.contains("ended after the run:  3 apps"), "{out}");
    assert!(
        err.contains("interrupted before the window closed"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(listed(&rm), 0);
}

/// A `weft nm` process reporting to an RM of ours, its `--site` file and
/// work directory in a directory of its own; killed, and its directory
/// removed, when dropped.
struct Nm {
    child: Child,
    /// The node's address (`localhost:<port>`), from its log.
    address: String,
    /// Its log (standard error), line by line.
    log: mpsc::Receiver<String>,
    dir: std::path::PathBuf,
}

impl Nm {
    fn start(rm: &Rm, name: &str, site: &[(&str, &str)]) -> Nm {
        let dir = std::env::temp_dir().join(format!("weft-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let site_file = dir.join("yarn-site.xml");
        std::fs::write(&site_file, weft_test_support::site_xml(site)).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
            .args([
                "nm",
                "--rm",
                &rm.url,
                "--listen",
                "127.0.0.1:0",
                "--cgroup",
                "off",
            ])
            .args(["--memory-mb", "1024", "--vcores", "1"])
            .arg("--work-dir")
            .arg(dir.join("work"))
            .arg("--site")
            .arg(&site_file)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = lines_of(child.stderr.take().unwrap());
        let running = line_with(&log, "node manager running");
        let address = running
            .split_whitespace()
            .find_map(|w| w.strip_prefix("node="))
            .unwrap_or_else(|| panic!("no node= in {running}"))
            .to_owned();
        Nm {
            child,
            address,
            log,
            dir,
        }
    }
}

impl Drop for Nm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn daemonlog_reads_and_sets_a_node_agents_levels_for_its_administrators() {
    let rm = Rm::start();
    let nm = Nm::start(
        &rm,
        "daemonlog",
        &[("yarn.acl.enable", "true"), ("yarn.admin.acl", "yarn")],
    );
    let daemonlog = |args: &[&str], user: &str| {
        let mut all = vec!["daemonlog"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--user", user]);
        weft(&all)
    };
    let o = daemonlog(&["-getlevel", &nm.address, "weft_nm::agent"], "yarn");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "Connecting to http://{}/logLevel?log=weft_nm%3A%3Aagent\n",
            nm.address
        )),
        "{out}"
    );
    assert!(out.contains("Effective Level: INFO\n"), "{out}");

    // The node's yarn.admin.acl, from its --site file, keeps others out.
    let o = daemonlog(
        &["-setlevel", &nm.address, "weft_nm::agent", "DEBUG"],
        "bob",
    );
    let err = stderr(&o);
    assert!(
        err.contains("user bob is not a cluster administrator (yarn.admin.acl)"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(1), "{err}");

    let o = daemonlog(
        &["-setlevel", &nm.address, "weft_nm::agent", "DEBUG"],
        "yarn",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("Set Level: DEBUG\nEffective Level: DEBUG\n"),
        "{out}"
    );
    assert!(
        out.contains("Directives: weft_nm::agent=debug,info\n"),
        "{out}"
    );
    // The agent's own filter changed: it logs the change, with who, from
    // where, and the directives before and after.
    let line = line_with(&nm.log, "log level set");
    for part in [
        "by=\"yarn\"",
        "from=127.0.0.1",
        "target_name=weft_nm::agent",
        "before=info",
        "directives=weft_nm::agent=debug,info",
    ] {
        assert!(line.contains(part), "{part} in {line}");
    }
    let o = daemonlog(&["-getlevel", &nm.address, "weft_nm::agent::inner"], "yarn");
    assert!(
        stdout(&o).contains("Effective Level: DEBUG\n"),
        "{}",
        stdout(&o)
    );
}

/// `weft local` with a configuration saying HTTPS_ONLY: the RM and its
/// nodes serve HTTPS with the directory's key material, the nodes join
/// over it, and a client trusting the directory's CA reads both.
#[test]
fn weft_local_serves_a_whole_cluster_over_https() {
    let dir = weft_test_support::ScratchDir::new("cli-local-https");
    let pki = weft_test_support::tls::TestPki::new("local CA");
    pki.write_conf(dir.path());
    dir.write("fair-scheduler.xml", ALLOC);
    dir.write(
        "weft-site.xml",
        weft_test_support::site_xml(&[("yarn.http.policy", "HTTPS_ONLY")]),
    );
    let conf = dir.path().display().to_string();
    let work = dir.path().join("work").display().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["local", "--conf", &conf, "--work-dir", &work])
        .args(["--listen", "127.0.0.1:0", "--nodes", "2", "--no-demo"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let started = line_with(&out, "resource manager at ");
    let rm = started
        .split_whitespace()
        .find(|w| w.starts_with("https://"))
        .unwrap_or_else(|| panic!("no https:// address in {started}"))
        .to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ca = weft_rm::tls::ClientTls::from_ca_file(&dir.path().join("ca.pem"), "the test").unwrap();
    let (nodes, node_info) = runtime.block_on(async {
        let mut client = weft_rm::client::RmClient::new(&rm, None)
            .unwrap()
            .with_tls(ca.clone());
        let deadline = Instant::now() + Duration::from_secs(30);
        let nodes = loop {
            let nodes: serde_json::Value = client
                .call(http::Method::GET, "/ws/v1/cluster/nodes", None::<&()>)
                .await
                .unwrap();
            let list = nodes["nodes"]["node"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if list.len() == 2 {
                break list;
            }
            assert!(Instant::now() < deadline, "the nodes never joined: {nodes}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let address = nodes[0]["nodeHTTPAddress"].as_str().unwrap().to_owned();
        let mut node = weft_rm::client::RmClient::new(&format!("https://{address}"), None)
            .unwrap()
            .with_tls(ca);
        let info: serde_json::Value = node
            .call(http::Method::GET, "/ws/v1/node/info", None::<&()>)
            .await
            .unwrap();
        (nodes, info)
    });
    let _ = child.kill();
    let _ = child.wait();
    for n in &nodes {
        assert_eq!(n["state"], "RUNNING", "{n}");
    }
    assert!(node_info["nodeInfo"]["id"].is_string(), "{node_info}");
}
