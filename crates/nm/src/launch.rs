//! Running a container as an operating-system process: its directories,
//! the launch script (as YARN's `launch_container.sh`), its environment,
//! stdout and stderr to files, its own process group, and the signals that
//! stop the whole group.
//!
//! Deciding when to start or stop is `agent`'s; memory limits are
//! `memory`'s and `cgroup`'s.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::process::{Child, Command};
use weft_model::ContainerId;

/// A container that could not be launched (YARN's `ContainerExitStatus` has
/// no code for it; Weft reports -1 with the reason in the diagnostics).
pub const LAUNCH_FAILED: i32 = -1;

/// Variables of the agent's own environment passed on to containers; the
/// rest is not, so containers see the same environment wherever the agent
/// was started from (YARN's `yarn.nodemanager.env-whitelist`, in spirit).
const INHERITED: &[&str] = &[
    "PATH", "LANG", "LC_ALL", "TZ", "HOME", "TMPDIR", "USER", "LOGNAME",
];

/// Where a container's files go under the agent's work directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerDirs {
    /// The working directory: `<work>/apps/<app>/<container>`.
    pub work: PathBuf,
    /// The logs (`stdout`, `stderr`): `<work>/logs/<app>/<container>`.
    pub logs: PathBuf,
}

impl ContainerDirs {
    /// The directories of `container` under `work_dir` (not created).
    pub fn of(work_dir: &Path, container: ContainerId) -> ContainerDirs {
        let app = container.app().to_string();
        let id = container.to_string();
        ContainerDirs {
            work: work_dir.join("apps").join(&app).join(&id),
            logs: work_dir.join("logs").join(&app).join(&id),
        }
    }
}

/// Everything `spawn` needs.
#[derive(Clone, Debug)]
pub struct Launch<'a> {
    /// The container.
    pub container: ContainerId,
    /// The shell command line.
    pub command: &'a str,
    /// The container's environment: the node's variables, then the launch
    /// context's (which win).
    pub environment: &'a BTreeMap<String, String>,
    /// Its directories.
    pub dirs: &'a ContainerDirs,
    /// The cgroup `cgroup.procs` file the script joins before running the
    /// command, when cgroups enforce limits.
    pub cgroup_procs: Option<&'a Path>,
}

/// Writes the launch script and starts it in a new process group; the
/// child's pid is its process group id.
pub fn spawn(launch: &Launch<'_>) -> std::io::Result<Child> {
    std::fs::create_dir_all(&launch.dirs.work)?;
    std::fs::create_dir_all(&launch.dirs.logs)?;
    let script = launch.dirs.work.join("launch_container.sh");
    let text = launch_script(launch);
    let mut f = File::create(&script)?;
    f.write_all(text.as_bytes())?;
    drop(f);
    let stdout = File::create(launch.dirs.logs.join("stdout"))?;
    let stderr = File::create(launch.dirs.logs.join("stderr"))?;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg(&script)
        .current_dir(&launch.dirs.work)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        // Its own group, so stopping it reaches everything it started.
        .process_group(0)
        .kill_on_drop(false);
    for name in INHERITED {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    if std::env::var_os("PATH").is_none() {
        cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
    }
    cmd.envs(launch.environment);
    cmd.spawn()
}

/// The script a container runs: join the cgroup if any, then the command
/// (with `<LOG_DIR>` replaced, as YARN does).
pub fn launch_script(launch: &Launch<'_>) -> String {
    let mut text = format!(
        "#!/bin/sh\n# Written by the weft node agent for {}.\n",
        launch.container
    );
    if let Some(procs) = launch.cgroup_procs {
        text.push_str(&format!(
            "echo $$ > {} || {{ echo 'cannot join the container cgroup' >&2; exit 1; }}\n",
            shell_quote(&procs.to_string_lossy())
        ));
    }
    let command = launch
        .command
        .replace("<LOG_DIR>", &launch.dirs.logs.to_string_lossy());
    text.push_str(&command);
    text.push('\n');
    text
}

/// `s` as one single-quoted shell word.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Sends `signal` to the process group `pgid`; a group that no longer
/// exists is not an error.
pub fn signal_group(pgid: u32, signal: Signal) -> Result<(), nix::Error> {
    let Ok(raw) = i32::try_from(pgid) else {
        return Err(nix::Error::EINVAL);
    };
    if raw <= 1 {
        // Never the whole session or every process.
        return Err(nix::Error::EINVAL);
    }
    match nix::sys::signal::killpg(Pid::from_raw(raw), signal) {
        Ok(()) | Err(nix::Error::ESRCH) => Ok(()),
        Err(e) => Err(e),
    }
}

/// YARN's exit code of a process: its own, or 128 plus the signal that
/// killed it (as a shell reports it: 137 for SIGKILL, 143 for SIGTERM).
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(sig)) => 128 + sig,
        (None, None) => LAUNCH_FAILED,
    }
}

/// The last lines of a container's stderr (at most a few hundred bytes, on
/// one line), for the diagnostics of a failed container.
pub fn stderr_tail(dirs: &ContainerDirs) -> String {
    const MAX: usize = 400;
    let Ok(text) = std::fs::read(dirs.logs.join("stderr")) else {
        return String::new();
    };
    let start = text.len().saturating_sub(MAX);
    let tail = String::from_utf8_lossy(&text[start..]);
    let lines: Vec<&str> = tail
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let from = lines.len().saturating_sub(3);
    lines[from..].join(" | ")
}

/// True while `pid` names a process that has not exited (a zombie has).
pub fn is_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may hold anything.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|state| state != "Z" && state != "X")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use weft_model::{AppId, AttemptId};

    use super::*;

    fn container() -> ContainerId {
        ContainerId::new(AttemptId::new(AppId::new(5, 1), 1), 2)
    }

    #[test]
    fn the_script_joins_the_cgroup_and_fills_in_the_log_dir() {
        let dirs = ContainerDirs::of(Path::new("/w"), container());
        assert_eq!(
            dirs.logs,
            Path::new("/w/logs/application_5_0001/container_5_0001_01_000002")
        );
        let env = BTreeMap::new();
        let procs = PathBuf::from("/sys/fs/cgroup/x's/cgroup.procs");
        let launch = Launch {
            container: container(),
            command: "echo hi 1><LOG_DIR>/out",
            environment: &env,
            dirs: &dirs,
            cgroup_procs: Some(&procs),
        };
        expect_test::expect![[r#"
            #!/bin/sh
            # Written by the weft node agent for container_5_0001_01_000002.
            echo $$ > '/sys/fs/cgroup/x'\''s/cgroup.procs' || { echo 'cannot join the container cgroup' >&2; exit 1; }
            echo hi 1>/w/logs/application_5_0001/container_5_0001_01_000002/out
        "#]]
        .assert_eq(&launch_script(&launch));
    }

    #[tokio::test]
    async fn a_container_runs_with_its_environment_and_its_group_is_stopped() {
        let work = std::env::temp_dir().join(format!("weft-launch-{}", std::process::id()));
        let dirs = ContainerDirs::of(&work, container());
        let env = BTreeMap::from([("GREETING".to_owned(), "hello".to_owned())]);
        let launch = Launch {
            container: container(),
            command: "echo $GREETING from $(pwd); echo oops >&2; sleep 30 & echo $! > child; wait",
            environment: &env,
            dirs: &dirs,
            cgroup_procs: None,
        };
        let mut child = spawn(&launch).unwrap();
        let pid = child.id().unwrap();
        assert!(is_alive(pid));
        // Wait for the background sleep to be started.
        let child_pid_file = dirs.work.join("child");
        let mut tries = 0;
        let sleeper: u32 = loop {
            if let Ok(text) = std::fs::read_to_string(&child_pid_file)
                && let Ok(p) = text.trim().parse()
            {
                break p;
            }
            tries += 1;
            assert!(tries < 500, "the container never started its child");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        signal_group(pid, Signal::SIGKILL).unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(exit_code(status), 137);
        // The whole group went, not only its leader.
        let mut tries = 0;
        while is_alive(sleeper) {
            tries += 1;
            assert!(tries < 500, "the group's other process survived");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let out = std::fs::read_to_string(dirs.logs.join("stdout")).unwrap();
        assert_eq!(out, format!("hello from {}\n", dirs.work.display()));
        assert_eq!(
            std::fs::read_to_string(dirs.logs.join("stderr")).unwrap(),
            "oops\n"
        );
        // Signalling a group that is gone is fine; signalling everything is refused.
        signal_group(pid, Signal::SIGTERM).unwrap();
        assert!(signal_group(1, Signal::SIGTERM).is_err());
        std::fs::remove_dir_all(&work).unwrap();
    }
}
