//! `weft app`: the distributed-shell client (`submit`, which runs an app to
//! its end as its AM) and short forms of the YARN-style application
//! commands (`status`, `list`, `kill`).
//!
//! The shell itself is `weft_nm::distributed_shell`'s; this module parses
//! arguments and prints its events.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use weft_nm::distributed_shell::{self, Progress, ShellConfig, ShellEvent};
use weft_rm::cli;
use weft_rm::dto::ResourceDto;

use crate::{Client, OneShotClient, print};

#[derive(Args, Debug)]
pub(crate) struct AppArgs {
    #[command(subcommand)]
    command: AppCommand,
}

#[derive(Subcommand, Debug)]
enum AppCommand {
    /// Submit a distributed-shell application and run it to its end: the
    /// client is its (unmanaged) AM and runs the command in each container.
    Submit(SubmitArgs),
    /// Print an application's report.
    Status {
        #[command(flatten)]
        client: OneShotClient,
        /// The application.
        app: String,
    },
    /// List applications (running and waiting ones; --all for every state).
    List {
        #[command(flatten)]
        client: OneShotClient,
        /// Every state, finished ones included.
        #[arg(long)]
        all: bool,
    },
    /// Kill applications.
    Kill {
        #[command(flatten)]
        client: OneShotClient,
        /// The applications.
        #[arg(required = true)]
        apps: Vec<String>,
    },
}

#[derive(Args, Debug)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    client: Client,
    /// The queue to ask for (placement rules decide).
    #[arg(long)]
    queue: Option<String>,
    /// The application's name.
    #[arg(long, default_value = "distributed-shell")]
    name: String,
    /// Containers that must run the command successfully.
    #[arg(long, default_value_t = 1)]
    num_containers: u32,
    /// Memory of each container, in MB (rounded up by the RM).
    #[arg(long, default_value_t = 1024)]
    memory_mb: u64,
    /// Vcores of each container.
    #[arg(long, default_value_t = 1)]
    vcores: u64,
    /// The shell command each container runs (by /bin/sh, in the container's
    /// working directory; $CONTAINER_ID and $NM_HOST are set).
    #[arg(long)]
    command: String,
    /// Environment variables for the containers.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// How often the AM calls the RM, in milliseconds (10 to 60000).
    // Past a minute the shell would sit on its app without a word, unable
    // to notice its containers or a kill: an interval typed as seconds, or
    // u64::MAX, left the app running and the client silent for ever.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    interval_ms: u64,
    /// Let the RM kill the application this many seconds after its
    /// submission if it has not ended (YARN's LIFETIME timeout).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=weft_rm::dto::apps::MAX_LIFETIME_SECS))]
    lifetime_secs: Option<u64>,
}

pub(crate) async fn run(a: AppArgs) -> anyhow::Result<()> {
    match a.command {
        AppCommand::Submit(s) => submit(s).await,
        AppCommand::Status { client, app } => {
            let mut c = client.connect()?;
            print(cli::application_status(&mut c, &app).await?);
            Ok(())
        }
        AppCommand::List { client, all } => {
            let mut c = client.connect()?;
            let states = if all {
                vec!["ALL".to_owned()]
            } else {
                Vec::new()
            };
            print(cli::application_list(&mut c, &states, &[], &[]).await?);
            Ok(())
        }
        AppCommand::Kill { client, apps } => {
            let mut c = client.connect()?;
            crate::kill_each(&mut c, &apps).await
        }
    }
}

/// Parses `NAME=VALUE` pairs.
fn environment(pairs: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for p in pairs {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("--env {p:?}: expected NAME=VALUE"))?;
        if k.is_empty() {
            anyhow::bail!("--env {p:?}: the name is empty");
        }
        env.insert(k.to_owned(), v.to_owned());
    }
    Ok(env)
}

async fn submit(a: SubmitArgs) -> anyhow::Result<()> {
    let stop = stop_requested().context("cannot listen for Ctrl-C and SIGTERM")?;
    let mut config = ShellConfig::new(
        a.client.rm.clone(),
        a.client.user(),
        a.num_containers,
        ResourceDto {
            memory: a.memory_mb,
            vcores: a.vcores,
        },
        a.command,
    );
    config.queue = a.queue;
    config.name = a.name;
    config.environment = environment(&a.env)?;
    config.interval = Duration::from_millis(a.interval_ms);
    config.lifetime_secs = a.lifetime_secs;
    let started = Instant::now();
    let mut printer = Printer::new(String::new(), started);
    let outcome = distributed_shell::run(config, stop, |e| printer.show(&e)).await?;
    print(format!(
        "{} {}: {} succeeded, {} failed, {} asked for again ({:.1} s)\n",
        outcome.app,
        outcome.final_status,
        outcome.succeeded,
        outcome.failed,
        outcome.reasked,
        started.elapsed().as_secs_f64()
    ));
    if outcome.final_status != "SUCCEEDED" {
        anyhow::bail!("application {} ended {}", outcome.app, outcome.final_status);
    }
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM, which the shell answers by killing its
/// app. SIGTERM too, because `timeout`, `kill` and service managers send it,
/// and a client that died of it left its app running with its containers:
/// nothing else ends an unmanaged app (the RM has no AM expiry). The
/// handlers are installed here, before submitting, not when the shell first
/// waits on the future, so a signal during submission is not fatal either.
fn stop_requested() -> std::io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    Ok(async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}

/// Prints a shell's events, one line each, prefixed with `prefix`.
pub(crate) struct Printer {
    prefix: String,
    started: Instant,
    last_progress: Option<Instant>,
    /// Print every container's start and end, not only the unusual ones.
    pub(crate) verbose: bool,
}

impl Printer {
    pub(crate) fn new(prefix: String, started: Instant) -> Printer {
        Printer {
            prefix,
            started,
            last_progress: None,
            verbose: true,
        }
    }

    fn line(&self, text: &str) {
        print(format!(
            "[{:5.1}s] {}{text}\n",
            self.started.elapsed().as_secs_f64(),
            self.prefix
        ));
    }

    pub(crate) fn show(&mut self, e: &ShellEvent) {
        match e {
            ShellEvent::Submitted { app } => self.line(&format!("submitted {app}")),
            ShellEvent::Registered { queue } => {
                self.line(&format!("application master registered; queue {queue}"));
            }
            ShellEvent::Launched { container, node } if self.verbose => {
                self.line(&format!("{container} started on {node}"));
            }
            ShellEvent::Completed {
                container,
                exit_status: 0,
                ..
            } if self.verbose => self.line(&format!("{container} succeeded")),
            ShellEvent::Completed {
                container,
                exit_status,
                diagnostics,
            } if *exit_status != 0 => {
                self.line(&format!(
                    "{container} failed with exit status {exit_status}: {diagnostics}"
                ));
            }
            ShellEvent::Reasked {
                container,
                exit_status,
                diagnostics,
            } => self.line(&format!(
                "{container} ended with {exit_status} ({diagnostics}); asking for another"
            )),
            ShellEvent::PreemptionWarning { containers } => self.line(&format!(
                "the RM will preempt {containers} container(s) soon"
            )),
            ShellEvent::RmUnreachable { error } => {
                self.line(&format!("resource manager unreachable ({error}); retrying"));
            }
            ShellEvent::Resynced => {
                self.line("the resource manager restarted; registered again");
            }
            ShellEvent::Progress(p) => self.progress(p),
            _ => {}
        }
    }

    fn progress(&mut self, p: &Progress) {
        // At most one progress line a second, except the last.
        let now = Instant::now();
        let last = p.running == 0 && p.waiting == 0;
        if !last
            && self
                .last_progress
                .is_some_and(|t| now - t < Duration::from_secs(1))
        {
            return;
        }
        self.last_progress = Some(now);
        self.line(&format!(
            "{} running, {} succeeded, {} failed, {} waiting",
            p.running, p.succeeded, p.failed, p.waiting
        ));
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        submit: SubmitArgs,
    }

    #[test]
    fn the_interval_is_bounded() {
        let ok = Cmd::try_parse_from(["submit", "--command", "true", "--interval-ms", "60000"]);
        assert_eq!(ok.map(|c| c.submit.interval_ms).ok(), Some(60_000));
        for bad in ["0", "9", "60001", "18446744073709551615"] {
            let e = Cmd::try_parse_from(["submit", "--command", "true", "--interval-ms", bad])
                .err()
                .unwrap_or_else(|| panic!("--interval-ms {bad} is accepted"));
            assert!(e.to_string().contains("10..=60000"), "{e}");
        }
    }

    #[test]
    fn a_lifetime_is_a_positive_number_of_seconds() {
        let ok = Cmd::try_parse_from(["submit", "--command", "true", "--lifetime-secs", "90"]);
        assert_eq!(ok.map(|c| c.submit.lifetime_secs).ok(), Some(Some(90)));
        let none = Cmd::try_parse_from(["submit", "--command", "true"]);
        assert_eq!(none.map(|c| c.submit.lifetime_secs).ok(), Some(None));
        for bad in ["0", "1.5", "100000000001"] {
            let e = Cmd::try_parse_from(["submit", "--command", "true", "--lifetime-secs", bad])
                .err()
                .unwrap_or_else(|| panic!("--lifetime-secs {bad} is accepted"));
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn environment_pairs_are_checked() {
        let env = environment(&["A=1".to_owned(), "B=x=y".to_owned()]).unwrap();
        assert_eq!(env["B"], "x=y");
        assert_eq!(
            environment(&["A".to_owned()]).unwrap_err().to_string(),
            "--env \"A\": expected NAME=VALUE"
        );
    }
}
