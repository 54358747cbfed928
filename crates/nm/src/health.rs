//! The node health script (Hadoop's `NodeHealthScriptRunner`): run every
//! interval in a task of its own, killed with its process group at the
//! timeout, its verdict published on a watch channel the agent reads when it
//! heartbeats and when it answers `GET /ws/v1/node/info`.
//!
//! The contract is Hadoop's: a line of standard output starting with `ERROR`
//! makes the node unhealthy, with that line as the report; a run past the
//! timeout makes it unhealthy too; a non-zero exit without such a line does
//! not (a broken script should not take a node out of service), it is only
//! logged. A script that cannot be run is refused at startup
//! (`check_runnable`); one that stops being runnable later makes the node
//! unhealthy, saying why.
//!
//! The settings are `config`'s; what the RM does with an unhealthy node is
//! the core's.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use weft_model::NodeId;

use crate::config::HealthScript;
use crate::launch;

/// The most of each output stream kept; the rest is read and dropped, so a
/// chatty script neither fills memory nor blocks on a full pipe.
const OUTPUT_KEPT: usize = 64 * 1024;

/// What the node's health checker last said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// `None`: healthy; else the report (why the node is unfit).
    pub unhealthy: Option<String>,
    /// When it was last decided, ms since the epoch (before any run: when
    /// the agent started).
    pub checked_ms: u64,
}

/// Why `path` cannot be a health script, if it cannot: as any operator's
/// script (`weft_rm::topology::check_runnable`), and absolute, as Hadoop
/// requires of this one.
pub fn check_runnable(path: &Path) -> Result<(), String> {
    if !path.is_absolute() {
        return Err("is not an absolute path".to_owned());
    }
    weft_rm::topology::check_runnable(path)
}

/// Runs the script once: `None` when the node is healthy, else the report.
pub async fn run_once(script: &HealthScript) -> Option<String> {
    let mut cmd = tokio::process::Command::new(&script.path);
    cmd.args(&script.opts)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a timeout kills whatever it started too.
        .process_group(0)
        .kill_on_drop(true);
    // A script written a moment ago (by an operator's editor, a deploy,
    // a test) can still be open for writing in a process forked meanwhile,
    // and exec then fails with ETXTBSY until that process execs or exits:
    // wait a little for that rather than call the node unhealthy.
    let mut busy = 0;
    let mut child = loop {
        match cmd.spawn() {
            Ok(c) => break c,
            Err(e) if e.raw_os_error() == Some(nix::errno::Errno::ETXTBSY as i32) && busy < 50 => {
                busy += 1;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => {
                return Some(format!(
                    "cannot run the health script {}: {e}",
                    script.path.display()
                ));
            }
        }
    };
    let pid = child.id();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let run = async { tokio::join!(read_capped(stdout), read_capped(stderr), child.wait()) };
    let res = tokio::time::timeout(script.timeout, run).await;
    if let Some(pid) = pid {
        // Whatever the script left behind goes with it, timed out or not.
        let _ = launch::signal_group(pid, Signal::SIGKILL);
    }
    let Ok((out, err, status)) = res else {
        let _ = child.kill().await;
        return Some(format!(
            "health script timed out after {} ms",
            script.timeout.as_millis()
        ));
    };
    if let Some(line) = out.lines().find(|l| l.starts_with("ERROR")) {
        return Some(line.trim_end().to_owned());
    }
    match status {
        Ok(s) if s.success() => None,
        Ok(s) => {
            // Hadoop's rule: the script, not the node, is what failed.
            let tail: String = err.trim().lines().last().unwrap_or("").to_owned();
            tracing::warn!(script = %script.path.display(), exit = launch::exit_code(s), stderr = %tail, "the health script failed without an ERROR line; the node stays healthy");
            None
        }
        Err(e) => Some(format!(
            "cannot wait for the health script {}: {e}",
            script.path.display()
        )),
    }
}

/// Reads a stream to its end, keeping its first `OUTPUT_KEPT` bytes.
async fn read_capped(stream: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut stream) = stream else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = OUTPUT_KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Starts the checker: the script runs at once and then every interval
/// (from the start of one run to the next; a run longer than the interval
/// is followed at once). The task ends when every receiver is gone.
pub fn spawn(
    script: HealthScript,
    node: NodeId,
    started_ms: u64,
) -> (watch::Receiver<Health>, JoinHandle<()>) {
    let (tx, rx) = watch::channel(Health {
        unhealthy: None,
        checked_ms: started_ms,
    });
    let task = tokio::spawn(async move {
        loop {
            let started = Instant::now();
            let verdict = tokio::select! {
                v = run_once(&script) => v,
                () = tx.closed() => return,
            };
            let was = tx.borrow().unhealthy.clone();
            match (&was, &verdict) {
                (None, Some(report)) => {
                    tracing::warn!(node = %node, report = %report, "the health script reports this node unhealthy");
                }
                (Some(_), None) => {
                    tracing::info!(node = %node, "the health script reports this node healthy again");
                }
                (Some(old), Some(new)) if old != new => {
                    tracing::warn!(node = %node, report = %new, "the node is still unhealthy");
                }
                _ => {}
            }
            let health = Health {
                unhealthy: verdict,
                checked_ms: now_ms(),
            };
            if tx.send(health).is_err() {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep_until(started + script.interval) => {}
                () = tx.closed() => return,
            }
        }
    });
    (rx, task)
}

/// The wall clock in ms since the epoch (the node's API shows it as such).
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// How long `NodeManager::start` waits for the first verdict before the
/// node registers: long enough for a quick script, so a node that starts
/// unhealthy is never offered work, short enough not to hold up a node
/// whose script is slow (its verdict then comes with a later heartbeat).
pub(crate) const FIRST_VERDICT_WAIT: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;
    use std::path::PathBuf;

    use super::*;

    fn script(dir: &Path, name: &str, body: &str) -> HealthScript {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut s = HealthScript::new(path);
        s.timeout = Duration::from_secs(20);
        s
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("weft-health-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn an_error_line_makes_the_node_unhealthy_with_that_line() {
        let dir = temp_dir("error");
        let s = script(
            &dir,
            "check.sh",
            "echo 'disk ok'\necho 'ERROR /data1 is full'\necho 'ERROR second'\nexit 0",
        );
        assert_eq!(run_once(&s).await.as_deref(), Some("ERROR /data1 is full"));
        // Only a line that starts with it counts.
        let s = script(
            &dir,
            "ok.sh",
            "echo 'no ERROR here'; echo ' ERROR indented'",
        );
        assert_eq!(run_once(&s).await, None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn clean_output_and_a_failing_exit_leave_the_node_healthy() {
        let dir = temp_dir("clean");
        let s = script(&dir, "ok.sh", "echo all good");
        assert_eq!(run_once(&s).await, None);
        let s = script(&dir, "fails.sh", "echo oops >&2; exit 3");
        assert_eq!(run_once(&s).await, None);
        // ERROR wins whatever the exit code.
        let s = script(&dir, "both.sh", "echo ERROR bad fan; exit 1");
        assert_eq!(run_once(&s).await.as_deref(), Some("ERROR bad fan"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_script_still_open_for_writing_is_waited_for_not_called_unhealthy() {
        // Exec fails with ETXTBSY while any process holds the file open for
        // writing, as a process forked while it was being written does.
        let dir = temp_dir("busy");
        let s = script(&dir, "ok.sh", "echo all good");
        let writer = std::fs::OpenOptions::new()
            .append(true)
            .open(&s.path)
            .unwrap();
        let run = tokio::spawn(async move { run_once(&s).await });
        tokio::time::sleep(Duration::from_millis(60)).await;
        drop(writer);
        assert_eq!(run.await.unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn arguments_are_passed() {
        let dir = temp_dir("args");
        let mut s = script(
            &dir,
            "args.sh",
            r#"[ "$1" = "-x" ] && [ "$2" = "two words" ] && echo "ERROR got $2""#,
        );
        s.opts = vec!["-x".to_owned(), "two words".to_owned()];
        assert_eq!(run_once(&s).await.as_deref(), Some("ERROR got two words"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_script_past_its_timeout_is_killed_and_the_node_unhealthy() {
        let dir = temp_dir("timeout");
        let marker = dir.join("survived");
        let mut s = script(
            &dir,
            "slow.sh",
            &format!("sleep 5; touch '{}'", marker.display()),
        );
        s.timeout = Duration::from_millis(200);
        let begun = Instant::now();
        assert_eq!(
            run_once(&s).await.as_deref(),
            Some("health script timed out after 200 ms")
        );
        // Killed rather than waited for.
        assert!(begun.elapsed() < Duration::from_secs(4));
        assert!(!marker.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_script_gone_later_makes_the_node_unhealthy() {
        let dir = temp_dir("gone");
        let s = HealthScript::new(dir.join("missing.sh"));
        let report = run_once(&s).await.unwrap();
        assert!(
            report.starts_with("cannot run the health script"),
            "{report}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unrunnable_script_is_named() {
        let dir = temp_dir("runnable");
        let plain = dir.join("plain.sh");
        std::fs::write(&plain, "echo hi\n").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            check_runnable(&plain),
            Err("is not executable (mode 644)".to_owned())
        );
        assert_eq!(
            check_runnable(&dir.join("nope")),
            Err("does not exist".to_owned())
        );
        assert_eq!(check_runnable(&dir), Err("is not a file".to_owned()));
        assert_eq!(
            check_runnable(Path::new("check.sh")),
            Err("is not an absolute path".to_owned())
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
