//! `weft applicationattempt -list <appId> | -status <attemptId>` and `weft
//! container -list <attemptId> | -status <containerId>`: YARN's
//! `ApplicationCLI` commands of the same names, over the RM's REST API.
//!
//! This module parses the arguments and the ids (a malformed id is refused
//! here, before any call, naming the option and the expected form); the
//! calls and the text are `weft_rm::cli`'s.

use anyhow::Context as _;
use clap::{ArgGroup, Args};
use weft_model::{AppId, AttemptId, ContainerId};
use weft_rm::cli;

use crate::{OneShotClient, print};

/// Exactly one of `-list` and `-status`, as YARN's CLI takes them.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("command").args(["list", "status"]).required(true)))]
pub(crate) struct AttemptArgs {
    #[command(flatten)]
    pub(crate) client: OneShotClient,
    /// List an application's attempts.
    #[arg(long = "list", value_name = "APP_ID", value_parser = parse_id::<AppId>)]
    pub(crate) list: Option<AppId>,
    /// Print an attempt's report.
    #[arg(long = "status", value_name = "ATTEMPT_ID", value_parser = parse_id::<AttemptId>)]
    pub(crate) status: Option<AttemptId>,
}

/// Exactly one of `-list` and `-status`, as YARN's CLI takes them.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("command").args(["list", "status"]).required(true)))]
pub(crate) struct ContainerArgs {
    #[command(flatten)]
    pub(crate) client: OneShotClient,
    /// List an attempt's running containers.
    #[arg(long = "list", value_name = "ATTEMPT_ID", value_parser = parse_id::<AttemptId>)]
    pub(crate) list: Option<AttemptId>,
    /// Print a running container's report.
    #[arg(long = "status", value_name = "CONTAINER_ID", value_parser = parse_id::<ContainerId>)]
    pub(crate) status: Option<ContainerId>,
}

/// A YARN id, or the parser's words (what was expected) for clap's usage error.
fn parse_id<T>(text: &str) -> Result<T, String>
where
    T: std::str::FromStr<Err = weft_model::IdParseError>,
{
    text.parse()
        .map_err(|e: weft_model::IdParseError| e.to_string())
}

/// `weft applicationattempt`.
pub(crate) async fn application_attempt(a: AttemptArgs) -> anyhow::Result<()> {
    let mut c = a.client.connect()?;
    let out = match (a.list, a.status) {
        (Some(app), _) => cli::attempt_list(&mut c, app)
            .await
            .with_context(|| format!("cannot list the attempts of {app}"))?,
        (None, Some(attempt)) => cli::attempt_status(&mut c, attempt)
            .await
            .with_context(|| format!("cannot report on {attempt}"))?,
        (None, None) => anyhow::bail!("nothing to do: use -list <appId> or -status <attemptId>"),
    };
    print(out);
    Ok(())
}

/// `weft container`.
pub(crate) async fn container(a: ContainerArgs) -> anyhow::Result<()> {
    let mut c = a.client.connect()?;
    let out = match (a.list, a.status) {
        (Some(attempt), _) => cli::container_list(&mut c, attempt)
            .await
            .with_context(|| format!("cannot list the containers of {attempt}"))?,
        (None, Some(container)) => cli::container_status(&mut c, container)
            .await
            .with_context(|| format!("cannot report on {container}"))?,
        (None, None) => {
            anyhow::bail!("nothing to do: use -list <attemptId> or -status <containerId>")
        }
    };
    print(out);
    Ok(())
}
