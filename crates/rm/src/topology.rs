//! Racks resolved on the RM, as Hadoop's `net.topology.*` mappings resolve
//! them: a script (`ScriptBasedMapping`) or a table file (`TableMapping`),
//! asked about a node's host when it registers, the answer cached per host
//! and put in place of the rack the node declares. Without a mapping the
//! declared rack stands.
//!
//! Which mapping the site files name is `config`'s (`RackMapping`); this
//! module checks the script and reads the table at start (`Topology::load`)
//! and answers registrations (`RackResolver`). The script runs on tokio's
//! blocking pool with a deadline, killed with its process group past it, so
//! a slow or hung script delays only the registrations waiting for it and
//! never the scheduler. Which nodes are in a rack, and what rack locality
//! means, is the core's business.

use std::collections::{BTreeMap, HashMap};
use std::io::Read as _;
use std::net::{IpAddr, ToSocketAddrs as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::config::{RackMapping, read_config_file};

/// Where a node goes when no mapping knows it, or the mapping fails:
/// Hadoop's `NetworkTopology.DEFAULT_RACK`.
pub const DEFAULT_RACK: &str = "/default-rack";

/// The property naming the script.
pub const SCRIPT_PROPERTY: &str = "net.topology.script.file.name";
/// The property naming the table file.
pub const TABLE_PROPERTY: &str = "net.topology.table.file.name";

/// Registrations whose racks are worked out at once; more wait for a turn
/// (within their deadline). It bounds the processes and threads a burst of
/// registrations, after an RM restart say, can start at one time.
const CONCURRENT_RESOLUTIONS: usize = 16;

/// The most hosts cached. A cluster has far fewer; past it a host's answer
/// is simply not kept, so registrations under made-up names cannot grow
/// memory without end.
const MAX_CACHED: usize = 100_000;

/// The most of each output stream of the script kept: a rack name is short,
/// and a script that writes more is broken.
const OUTPUT_KEPT: u64 = 64 * 1024;

/// How long past its deadline a resolution is waited for before the
/// registration goes on without it: a host name lookup cannot be
/// interrupted, so one that hangs leaves its thread behind, not the node.
const LOOKUP_GRACE: Duration = Duration::from_secs(1);

/// A mapping ready to answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Topology {
    /// No mapping: the rack each node declares stands.
    #[default]
    Declared,
    /// `ScriptBasedMapping`: the script is asked about each new host.
    Script(PathBuf),
    /// `TableMapping`: hosts (or their addresses) and their racks; a host
    /// it does not list is in `/default-rack`.
    Table(RackTable),
}

/// The `host rack` lines of a topology table, by host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RackTable {
    racks: BTreeMap<String, String>,
}

/// Why the mapping the site files name cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The script cannot be run.
    #[error("the topology script {} ({SCRIPT_PROPERTY}) {why}", path.display())]
    Script {
        /// The script.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The table file cannot be read.
    #[error("cannot read the topology table {} ({TABLE_PROPERTY}): {source}", path.display())]
    ReadTable {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The table file has bad lines.
    #[error(
        "the topology table {} ({TABLE_PROPERTY}) is invalid:{}",
        path.display(),
        render_problems(problems)
    )]
    Table {
        /// The file.
        path: PathBuf,
        /// Every bad line.
        problems: Vec<TableProblem>,
    },
}

/// One bad line of a topology table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct TableProblem {
    /// The line, from 1.
    pub line: u32,
    /// What is wrong with it.
    pub why: String,
}

fn render_problems(problems: &[TableProblem]) -> String {
    problems.iter().map(|p| format!("\n  {p}")).collect()
}

impl Topology {
    /// The mapping `mapping` names, with paths as given (the caller has
    /// resolved them): the script checked, the table read. Warnings (a
    /// table mapping without a file, a host the table lists twice) name
    /// their file and line.
    pub fn load(mapping: &RackMapping) -> Result<(Topology, Vec<String>), TopologyError> {
        match mapping {
            RackMapping::Declared => Ok((Topology::Declared, Vec::new())),
            RackMapping::Script { path } => {
                check_runnable(path).map_err(|why| TopologyError::Script {
                    path: path.clone(),
                    why,
                })?;
                Ok((Topology::Script(path.clone()), Vec::new()))
            }
            RackMapping::Table { path: None } => Ok((
                Topology::Table(RackTable::default()),
                vec![format!(
                    "net.topology.node.switch.mapping.impl is TableMapping but {TABLE_PROPERTY} is not set: every node is in {DEFAULT_RACK}, as in Hadoop"
                )],
            )),
            RackMapping::Table { path: Some(path) } => {
                let text = read_config_file(path).map_err(|source| TopologyError::ReadTable {
                    path: path.clone(),
                    source,
                })?;
                let (table, warnings) =
                    RackTable::parse(&text).map_err(|problems| TopologyError::Table {
                        path: path.clone(),
                        problems,
                    })?;
                let warnings = warnings
                    .into_iter()
                    .map(|w| format!("{}: {w}", path.display()))
                    .collect();
                Ok((Topology::Table(table), warnings))
            }
        }
    }
}

impl RackTable {
    /// Reads a table as Hadoop's `TableMapping` does: a host (or address)
    /// and its rack per line, separated by white space; blank lines and
    /// lines starting with `#` are skipped. Where Hadoop skips a line that
    /// does not have two columns, and takes a rack that is not a path only
    /// to fail the node's registration, both are errors here, every one
    /// listed: a host silently left in `/default-rack` is found late.
    /// A host listed twice takes its later rack, with a warning.
    pub fn parse(text: &str) -> Result<(RackTable, Vec<TableProblem>), Vec<TableProblem>> {
        let mut racks = BTreeMap::new();
        let mut listed_at: HashMap<&str, u32> = HashMap::new();
        let mut problems = Vec::new();
        let mut warnings = Vec::new();
        for (idx, line) in text.lines().enumerate() {
            let line_no = u32::try_from(idx + 1).unwrap_or(u32::MAX);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let columns: Vec<&str> = line.split_whitespace().collect();
            let [host, rack] = columns[..] else {
                problems.push(TableProblem {
                    line: line_no,
                    why: format!(
                        "{line:?} has {} columns; each line is a host and its rack, such as `10.1.2.3 /rack1`",
                        columns.len()
                    ),
                });
                continue;
            };
            let Some(rack) = normalize_rack(rack) else {
                problems.push(TableProblem {
                    line: line_no,
                    why: format!("the rack {rack:?} of {host} is not a path such as /rack1"),
                });
                continue;
            };
            if let Some(first) = listed_at.insert(host, line_no) {
                warnings.push(TableProblem {
                    line: line_no,
                    why: format!("{host} is listed again (first on line {first}); this rack wins"),
                });
            }
            racks.insert(host.to_owned(), rack);
        }
        if problems.is_empty() {
            Ok((RackTable { racks }, warnings))
        } else {
            Err(problems)
        }
    }

    /// The rack the table gives `host`, if it lists it.
    pub fn get(&self, host: &str) -> Option<&str> {
        self.racks.get(host).map(String::as_str)
    }

    /// Number of hosts listed.
    pub fn len(&self) -> usize {
        self.racks.len()
    }

    /// True when the table lists no host.
    pub fn is_empty(&self) -> bool {
        self.racks.is_empty()
    }
}

/// A rack as Hadoop's `NodeBase.normalize` accepts it: a path starting with
/// `/`, a trailing `/` dropped; `None` for anything else.
fn normalize_rack(rack: &str) -> Option<String> {
    let rack = rack.strip_suffix('/').unwrap_or(rack);
    (rack.starts_with('/') && rack.len() > 1).then(|| rack.to_owned())
}

/// Why `path` cannot be run as an operator's script, if it cannot: a
/// topology script here, a node agent's health script in `weft-nm`.
pub fn check_runnable(path: &Path) -> Result<(), String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("does not exist".to_owned());
        }
        Err(e) => return Err(format!("cannot be read: {e}")),
    };
    if !meta.is_file() {
        return Err("is not a file".to_owned());
    }
    let mode = meta.permissions().mode();
    if mode & 0o111 == 0 {
        return Err(format!("is not executable (mode {:o})", mode & 0o7777));
    }
    Ok(())
}

/// Answers registrations: the rack of a host, from the cache or the mapping.
#[derive(Debug)]
pub struct RackResolver {
    topology: Arc<Topology>,
    /// How long a registration waits for its host's rack.
    timeout: Duration,
    /// Hosts (as nodes register them) and their racks. Only answers are
    /// kept, as in Hadoop's `CachedDNSToSwitchMapping`, so a failed
    /// resolution is tried again at the host's next registration.
    cache: Mutex<HashMap<String, String>>,
    turns: tokio::sync::Semaphore,
}

/// Why a host's rack could not be worked out.
#[derive(Debug, thiserror::Error)]
enum ResolveError {
    #[error("cannot run the script: {0}")]
    Spawn(std::io::Error),
    #[error("the script timed out after {} ms and was killed", .0.as_millis())]
    Timeout(Duration),
    #[error("the script failed ({status}){}", stderr_tail(.stderr))]
    Failed { status: ExitStatus, stderr: String },
    #[error("the script printed {n} racks for one host (output {output:?})")]
    WrongCount { n: usize, output: String },
    #[error("the script printed {0:?}, which is not a rack path such as /rack1")]
    NotARack(String),
    #[error("no answer within {} ms (the host name lookup or the wait for a turn took too long)", .0.as_millis())]
    NoAnswer(Duration),
    #[error("the resolution stopped unexpectedly: {0}")]
    Internal(String),
}

fn stderr_tail(stderr: &str) -> String {
    match stderr.trim().lines().last() {
        Some(line) => format!(": {line}"),
        None => String::new(),
    }
}

impl RackResolver {
    /// A resolver for `topology` that gives each host `timeout` (the
    /// script's run, or a host name lookup, and any wait for a turn), with
    /// nothing cached yet.
    pub fn new(topology: Topology, timeout: Duration) -> RackResolver {
        RackResolver {
            topology: Arc::new(topology),
            timeout,
            cache: Mutex::new(HashMap::new()),
            turns: tokio::sync::Semaphore::new(CONCURRENT_RESOLUTIONS),
        }
    }

    /// The rack the mapping gives `host` (a node id's host part), or `None`
    /// when no mapping is configured and the node's declared rack stands.
    /// A mapping that fails puts the node in `/default-rack`, with an error
    /// in the log, as Hadoop does; that answer is not cached.
    pub async fn resolve(&self, host: &str) -> Option<String> {
        if *self.topology == Topology::Declared {
            return None;
        }
        if let Some(rack) = self.cached(host) {
            return Some(rack);
        }
        if let Topology::Table(table) = &*self.topology
            && let Some(rack) = table.get(host)
        {
            let rack = rack.to_owned();
            self.remember(host, &rack);
            return Some(rack);
        }
        match self.resolve_uncached(host).await {
            Ok(rack) => {
                tracing::debug!(host, rack = %rack, "rack resolved");
                self.remember(host, &rack);
                Some(rack)
            }
            Err(e) => {
                tracing::error!(host, mapping = %self.describe(), error = %e, "cannot resolve the rack of {host}; it goes in {DEFAULT_RACK}");
                Some(DEFAULT_RACK.to_owned())
            }
        }
    }

    fn describe(&self) -> String {
        match &*self.topology {
            Topology::Declared => "none".to_owned(),
            Topology::Script(path) => format!("script {}", path.display()),
            Topology::Table(_) => "table".to_owned(),
        }
    }

    fn cached(&self, host: &str) -> Option<String> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.get(host).cloned()
    }

    fn remember(&self, host: &str, rack: &str) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() < MAX_CACHED || cache.contains_key(host) {
            cache.insert(host.to_owned(), rack.to_owned());
        }
    }

    async fn resolve_uncached(&self, host: &str) -> Result<String, ResolveError> {
        let timeout = self.timeout;
        let started = tokio::time::Instant::now();
        let no_answer = || ResolveError::NoAnswer(timeout);
        let _turn = tokio::time::timeout(timeout, self.turns.acquire())
            .await
            .map_err(|_| no_answer())?
            .map_err(|e| ResolveError::Internal(e.to_string()))?;
        let left = timeout.saturating_sub(started.elapsed());
        let topology = self.topology.clone();
        let host = host.to_owned();
        // The deadline inside is the wall clock's: the work is real
        // processes and lookups, whatever clock the runtime keeps.
        let deadline = Instant::now() + left;
        let job = tokio::task::spawn_blocking(move || {
            resolve_blocking(&topology, &host, deadline, timeout)
        });
        match tokio::time::timeout(left + LOOKUP_GRACE, job).await {
            Ok(Ok(res)) => res,
            Ok(Err(e)) => Err(ResolveError::Internal(e.to_string())),
            Err(_) => Err(no_answer()),
        }
    }
}

/// How long a registration waits for its host's rack by default
/// (`weft.rm.topology.timeout-ms`): Hadoop waits for its script without
/// limit, holding the registration; a script that reads a local file or
/// asks an inventory service answers well within a second, and ten seconds
/// leaves room for a slow host name lookup, while a hung script costs a
/// node only a short wait before it joins `/default-rack` (it is asked
/// again when the node next registers).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The rack of `host` by `topology`, on a blocking thread.
fn resolve_blocking(
    topology: &Topology,
    host: &str,
    deadline: Instant,
    timeout: Duration,
) -> Result<String, ResolveError> {
    match topology {
        Topology::Declared => Ok(DEFAULT_RACK.to_owned()),
        Topology::Table(table) => {
            let address = normalize_host(host);
            Ok(table.get(&address).unwrap_or(DEFAULT_RACK).to_owned())
        }
        Topology::Script(path) => {
            // Hadoop hands the script addresses, not names.
            let address = normalize_host(host);
            if Instant::now() >= deadline {
                return Err(ResolveError::NoAnswer(timeout));
            }
            let output = run_script(path, &address, deadline, timeout)?;
            let racks: Vec<&str> = output.split_whitespace().collect();
            let [rack] = racks[..] else {
                return Err(ResolveError::WrongCount {
                    n: racks.len(),
                    output: output.trim().chars().take(200).collect(),
                });
            };
            normalize_rack(rack).ok_or_else(|| ResolveError::NotARack(rack.to_owned()))
        }
    }
}

/// `host` as Hadoop's `NetUtils.normalizeHostName` makes it: its address
/// when the name resolves (the first IPv4 one, as Java prefers them), else
/// the name as given.
fn normalize_host(host: &str) -> String {
    if host.parse::<IpAddr>().is_ok() {
        return host.to_owned();
    }
    let Ok(addrs) = (host, 0).to_socket_addrs() else {
        return host.to_owned();
    };
    let addrs: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .map_or_else(|| host.to_owned(), ToString::to_string)
}

/// What the script's helper threads report.
enum Report {
    Stdout(String),
    Stderr(String),
    Exited(std::io::Result<ExitStatus>),
}

/// Runs the script with `arg`, in a process group of its own, and returns
/// its standard output; past `deadline` the group is killed. Whatever the
/// script leaves running is killed when it exits, so its output ends.
fn run_script(
    path: &Path,
    arg: &str,
    deadline: Instant,
    timeout: Duration,
) -> Result<String, ResolveError> {
    let mut cmd = Command::new(path);
    cmd.arg(arg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // A script written a moment ago can still be open for writing in a
    // process forked meanwhile, and exec then fails with ETXTBSY until that
    // process execs or exits: wait for that, within the deadline. This is
    // a blocking-pool thread, so sleeping holds up no one else.
    let mut child = loop {
        match cmd.spawn() {
            Ok(c) => break c,
            Err(e)
                if e.raw_os_error() == Some(nix::errno::Errno::ETXTBSY as i32)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(ResolveError::Spawn(e)),
        }
    };
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let kill_group = || {
        let _ = killpg(group, Signal::SIGKILL);
    };
    let (tx, rx) = mpsc::channel();
    let mut helpers = Vec::new();
    if let Some(out) = child.stdout.take() {
        let tx = tx.clone();
        helpers.push(std::thread::Builder::new().spawn(move || {
            let _ = tx.send(Report::Stdout(read_capped(out)));
        }));
    }
    if let Some(err) = child.stderr.take() {
        let tx = tx.clone();
        helpers.push(std::thread::Builder::new().spawn(move || {
            let _ = tx.send(Report::Stderr(read_capped(err)));
        }));
    }
    helpers.push(std::thread::Builder::new().spawn(move || {
        let _ = tx.send(Report::Exited(child.wait()));
    }));
    if let Some(Err(e)) = helpers.into_iter().find(Result::is_err) {
        kill_group();
        return Err(ResolveError::Spawn(e));
    }
    let (mut stdout, mut stderr, mut status) = (None, None, None);
    while stdout.is_none() || stderr.is_none() || status.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Report::Stdout(s)) => stdout = Some(s),
            Ok(Report::Stderr(s)) => stderr = Some(s),
            Ok(Report::Exited(s)) => {
                // Leftovers would keep the pipes open.
                kill_group();
                status = Some(s);
            }
            Err(_) => {
                kill_group();
                return Err(ResolveError::Timeout(timeout));
            }
        }
    }
    let status = status
        .unwrap_or_else(|| Err(std::io::Error::other("no exit status")))
        .map_err(|e| ResolveError::Internal(format!("cannot wait for the script: {e}")))?;
    if !status.success() {
        return Err(ResolveError::Failed {
            status,
            stderr: stderr.unwrap_or_default(),
        });
    }
    Ok(stdout.unwrap_or_default())
}

/// A stream to its end, keeping its first `OUTPUT_KEPT` bytes.
fn read_capped(stream: impl std::io::Read) -> String {
    let mut kept = Vec::new();
    let mut stream = stream;
    let _ = (&mut stream).take(OUTPUT_KEPT).read_to_end(&mut kept);
    // The rest is read and dropped, so the script never blocks on a full pipe.
    let _ = std::io::copy(&mut stream, &mut std::io::sink());
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of a test's own, removed at the end.
    struct TestDir(PathBuf);

    impl TestDir {
        fn new(name: &str) -> TestDir {
            let dir =
                std::env::temp_dir().join(format!("weft-topology-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TestDir(dir)
        }

        /// An executable `#!/bin/sh` script with `body`.
        fn script(&self, name: &str, body: &str) -> PathBuf {
            let path = self.0.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path
        }
    }

    impl Drop for TestDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn resolver(script: PathBuf, timeout: Duration) -> RackResolver {
        RackResolver::new(Topology::Script(script), timeout)
    }

    #[tokio::test]
    async fn the_script_is_given_the_host_and_its_answer_cached() {
        let dir = TestDir::new("answer");
        let calls = dir.0.join("calls");
        let script = dir.script(
            "rack.sh",
            &format!(
                r#"echo "$@" >> '{}'
case "$1" in 10.0.0.*) echo /dc1/rack1/ ;; *) echo /default-rack ;; esac"#,
                calls.display()
            ),
        );
        let racks = resolver(script, Duration::from_secs(20));
        assert_eq!(
            racks.resolve("10.0.0.7").await.as_deref(),
            Some("/dc1/rack1")
        );
        assert_eq!(
            racks.resolve("10.0.0.7").await.as_deref(),
            Some("/dc1/rack1")
        );
        assert_eq!(
            racks.resolve("10.9.0.1").await.as_deref(),
            Some("/default-rack")
        );
        // One run per host: the second answer came from the cache.
        assert_eq!(
            std::fs::read_to_string(&calls).unwrap(),
            "10.0.0.7\n10.9.0.1\n"
        );
    }

    #[tokio::test]
    async fn a_failing_script_puts_the_node_in_the_default_rack_and_is_asked_again() {
        let dir = TestDir::new("fails");
        let calls = dir.0.join("calls");
        let script = dir.script(
            "rack.sh",
            &format!(
                "echo x >> '{}'\necho /rack1\necho 'no inventory' >&2\nexit 2",
                calls.display()
            ),
        );
        let racks = resolver(script, Duration::from_secs(20));
        assert_eq!(
            racks.resolve("10.0.0.1").await.as_deref(),
            Some(DEFAULT_RACK)
        );
        assert_eq!(
            racks.resolve("10.0.0.1").await.as_deref(),
            Some(DEFAULT_RACK)
        );
        // Failures are not cached, as in Hadoop.
        assert_eq!(std::fs::read_to_string(&calls).unwrap(), "x\nx\n");
    }

    #[test]
    fn what_the_script_prints_is_checked() {
        let dir = TestDir::new("output");
        let far = Instant::now() + Duration::from_secs(20);
        let run = |body: &str| {
            let script = Topology::Script(dir.script("rack.sh", body));
            match resolve_blocking(&script, "10.0.0.1", far, Duration::from_secs(20)) {
                Ok(rack) => rack,
                Err(e) => e.to_string(),
            }
        };
        assert_eq!(run(r#"echo "  /r$1 ""#), "/r10.0.0.1");
        assert_eq!(
            run("echo /r1 /r2"),
            r#"the script printed 2 racks for one host (output "/r1 /r2")"#
        );
        assert_eq!(
            run("true"),
            r#"the script printed 0 racks for one host (output "")"#
        );
        assert_eq!(
            run("echo rack1"),
            r#"the script printed "rack1", which is not a rack path such as /rack1"#
        );
        assert_eq!(
            run("echo oops >&2; exit 3"),
            "the script failed (exit status: 3): oops"
        );
        std::fs::remove_file(dir.0.join("rack.sh")).unwrap();
        let gone = Topology::Script(dir.0.join("rack.sh"));
        let err = resolve_blocking(&gone, "10.0.0.1", far, Duration::from_secs(20)).unwrap_err();
        assert!(
            err.to_string().starts_with("cannot run the script: "),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_hung_script_is_killed_at_the_timeout() {
        let dir = TestDir::new("hangs");
        let marker = dir.0.join("survived");
        // The child of the script is killed too, with its process group.
        let script = dir.script(
            "rack.sh",
            &format!(
                "(sleep 2; touch '{}') &\nsleep 30\necho /rack1",
                marker.display()
            ),
        );
        let racks = resolver(script, Duration::from_millis(300));
        let begun = Instant::now();
        assert_eq!(
            racks.resolve("10.0.0.1").await.as_deref(),
            Some(DEFAULT_RACK)
        );
        assert!(
            begun.elapsed() < Duration::from_secs(2),
            "{:?}",
            begun.elapsed()
        );
        std::thread::sleep(Duration::from_millis(2500).saturating_sub(begun.elapsed()));
        assert!(!marker.exists());
    }

    #[tokio::test]
    async fn what_a_script_leaves_behind_does_not_hold_up_its_answer() {
        let dir = TestDir::new("leftover");
        // A background child keeps stdout open after the script exits.
        let script = dir.script("rack.sh", "sleep 30 &\necho /rack1");
        let racks = resolver(script, Duration::from_secs(20));
        let begun = Instant::now();
        assert_eq!(racks.resolve("10.0.0.1").await.as_deref(), Some("/rack1"));
        assert!(
            begun.elapsed() < Duration::from_secs(10),
            "{:?}",
            begun.elapsed()
        );
    }

    #[tokio::test]
    async fn a_table_answers_by_name_or_address_and_the_default_rack_otherwise() {
        let (table, warnings) = RackTable::parse(
            "# hosts and racks\n\n  10.0.0.1\t/rack1  \nnm2.example /rack2\n10.0.0.1 /rack3\n",
        )
        .unwrap();
        assert_eq!(
            warnings,
            [TableProblem {
                line: 5,
                why: "10.0.0.1 is listed again (first on line 3); this rack wins".to_owned()
            }]
        );
        let racks = RackResolver::new(Topology::Table(table), Duration::from_secs(20));
        assert_eq!(racks.resolve("10.0.0.1").await.as_deref(), Some("/rack3"));
        assert_eq!(
            racks.resolve("nm2.example").await.as_deref(),
            Some("/rack2")
        );
        assert_eq!(
            racks.resolve("10.0.0.9").await.as_deref(),
            Some(DEFAULT_RACK)
        );
        // A name the table does not list is looked for by its address.
        assert_eq!(
            normalize_host("localhost")
                .parse::<IpAddr>()
                .map(|a| a.is_loopback()),
            Ok(true)
        );
        let (table, _) = RackTable::parse("127.0.0.1 /local\n").unwrap();
        let racks = RackResolver::new(Topology::Table(table), Duration::from_secs(20));
        assert_eq!(racks.resolve("localhost").await.as_deref(), Some("/local"));
    }

    #[tokio::test]
    async fn without_a_mapping_the_declared_rack_stands() {
        let racks = RackResolver::new(Topology::Declared, Duration::from_secs(20));
        assert_eq!(racks.resolve("10.0.0.1").await, None);
    }
}
