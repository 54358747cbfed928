//! `weft daemonlog`: Hadoop's `hadoop daemonlog`, reading and setting a
//! tracing target's level on a running RM or node agent through its
//! `/logLevel` (`-getlevel <host:port> <target>`, `-setlevel <host:port>
//! <target> <level>`), and printing the daemon's answer.
//!
//! Which targets and levels are taken is the daemon's to say (`weft_rm::log_levels`,
//! for both): this module sends what it is given, so a daemon that takes
//! more than this command knows of is not refused here.

use std::time::Duration;

use anyhow::Context as _;
use clap::builder::NonEmptyStringValueParser;
use clap::{ArgGroup, Args};
use http::Method;
use weft_rm::client::{self, RmClient};

/// Exactly one of `-getlevel` and `-setlevel`, as Hadoop's command wants.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("command").args(["getlevel", "setlevel"]).required(true)))]
pub(crate) struct DaemonlogArgs {
    /// Print a target's effective level: HOST:PORT TARGET (TARGET a module
    /// path such as weft_rm::actor, or '' for the default).
    #[arg(long = "getlevel", num_args = 2, value_names = ["HOST:PORT", "TARGET"])]
    getlevel: Option<Vec<String>>,
    /// Set a target's level until the daemon stops: HOST:PORT TARGET LEVEL
    /// (TRACE, DEBUG, INFO, WARN, ERROR or OFF; log4j's ALL and FATAL too).
    #[arg(long = "setlevel", num_args = 3, value_names = ["HOST:PORT", "TARGET", "LEVEL"])]
    setlevel: Option<Vec<String>>,
    /// Hadoop's -protocol: https for a daemon under yarn.http.policy
    /// HTTPS_ONLY (trusting --ca-file or WEFT_CA_FILE, else the system's
    /// certificates). A daemon given as https://HOST:PORT needs no -protocol.
    #[arg(long, default_value = "http", value_parser = ["http", "https"])]
    protocol: String,
    /// The user to act as (Hadoop's user.name; default: $USER).
    #[arg(long = "user", value_parser = NonEmptyStringValueParser::new())]
    user: Option<String>,
    /// Milliseconds the call may take before the command fails (10 to 600000).
    #[arg(
        long,
        default_value_t = crate::CLIENT_REQUEST_TIMEOUT_MS,
        value_parser = clap::value_parser!(u64).range(10..=600_000)
    )]
    request_timeout_ms: u64,
}

/// What to ask, of which daemon.
#[derive(Debug, PartialEq, Eq)]
struct Request<'a> {
    daemon: &'a str,
    target: &'a str,
    level: Option<&'a str>,
}

impl DaemonlogArgs {
    fn request(&self) -> anyhow::Result<Request<'_>> {
        match (self.getlevel.as_deref(), self.setlevel.as_deref()) {
            (Some([daemon, target]), None) => Ok(Request {
                daemon,
                target,
                level: None,
            }),
            (None, Some([daemon, target, level])) => Ok(Request {
                daemon,
                target,
                level: Some(level),
            }),
            // clap's group and counts allow nothing else.
            _ => anyhow::bail!(
                "use -getlevel <host:port> <target> or -setlevel <host:port> <target> <level>"
            ),
        }
    }
}

impl Request<'_> {
    /// The daemon's address with `protocol`'s scheme, unless it has a
    /// scheme of its own (which wins, as the address is the more specific).
    fn url(&self, protocol: &str) -> String {
        if self.daemon.contains("://") {
            self.daemon.to_owned()
        } else {
            format!("{protocol}://{}", self.daemon)
        }
    }

    /// The path and query of `/logLevel` for this request.
    fn path(&self) -> String {
        let mut path = format!("/logLevel?log={}", client::encode_query(self.target));
        if let Some(level) = self.level {
            path.push_str("&level=");
            path.push_str(&client::encode_query(level));
        }
        path
    }
}

pub(crate) async fn run(a: DaemonlogArgs) -> anyhow::Result<()> {
    let req = a.request()?;
    crate::rm_address(req.daemon)
        .map_err(|why| anyhow::anyhow!("invalid daemon address {:?}: {why}", req.daemon))?;
    let user = crate::user_or_default(a.user.clone());
    let daemon = req.url(&a.protocol);
    let mut c = RmClient::new(&daemon, Some(user))?
        .with_timeout(Duration::from_millis(a.request_timeout_ms));
    let path = req.path();
    let scheme = if c.is_https() { "https" } else { "http" };
    crate::print(format!(
        "Connecting to {scheme}://{}{path}\n",
        c.authority()
    ));
    let answer = c
        .request(Method::GET, &path, None)
        .await
        .with_context(|| format!("cannot ask {} for its log levels", c.authority()))?;
    if !answer.status.is_success() {
        return Err(client::remote_error(&answer).into());
    }
    crate::print(String::from_utf8_lossy(&answer.body).into_owned());
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn parse(line: &str) -> Result<DaemonlogArgs, clap::Error> {
        let words = line.split_whitespace().map(|w| match w {
            "''" => String::new(),
            w => w.to_owned(),
        });
        let parsed = crate::Weft::try_parse_from(crate::yarn_spellings(words))?;
        match parsed.command {
            crate::Command::Daemonlog(a) => Ok(a),
            other => panic!("{line} parsed as {other:?}"),
        }
    }

    #[test]
    fn hadoops_spellings_are_read() {
        let a = parse("weft daemonlog -getlevel rm1:8088 weft_rm::actor").unwrap();
        assert_eq!(
            a.request().unwrap(),
            Request {
                daemon: "rm1:8088",
                target: "weft_rm::actor",
                level: None
            }
        );
        assert_eq!(a.user, None);
        let a = parse("weft daemonlog -setlevel rm1:8088 '' DEBUG --user yarn").unwrap();
        assert_eq!(
            a.request().unwrap(),
            Request {
                daemon: "rm1:8088",
                target: "",
                level: Some("DEBUG")
            }
        );
        assert_eq!(a.user.as_deref(), Some("yarn"));
        assert!(parse("weft daemonlog -protocol http -getlevel rm1:8088 weft_core").is_ok());
    }

    #[test]
    fn the_protocol_gives_the_scheme_unless_the_address_has_one() {
        let url = |line: &str| {
            let a = parse(line).unwrap();
            a.request().unwrap().url(&a.protocol)
        };
        assert_eq!(
            url("weft daemonlog -getlevel rm1:8088 weft_rm"),
            "http://rm1:8088"
        );
        assert_eq!(
            url("weft daemonlog -protocol https -getlevel rm1:8090 weft_rm"),
            "https://rm1:8090"
        );
        assert_eq!(
            url("weft daemonlog -getlevel https://rm1:8090 weft_rm"),
            "https://rm1:8090"
        );
    }

    #[test]
    fn one_operation_with_all_its_words_or_a_usage_error() {
        use clap::error::ErrorKind::{
            ArgumentConflict, InvalidValue, MissingRequiredArgument, WrongNumberOfValues,
        };
        for (line, kind) in [
            ("weft daemonlog", MissingRequiredArgument),
            ("weft daemonlog -getlevel rm1:8088", WrongNumberOfValues),
            (
                "weft daemonlog -setlevel rm1:8088 weft_rm",
                WrongNumberOfValues,
            ),
            (
                "weft daemonlog -getlevel rm1:8088 weft_rm -setlevel rm1:8088 weft_rm debug",
                ArgumentConflict,
            ),
            (
                "weft daemonlog -getlevel rm1:8088 weft_rm -protocol ftp",
                InvalidValue,
            ),
            (
                "weft daemonlog -getlevel rm1:8088 weft_rm --user ''",
                InvalidValue,
            ),
        ] {
            let e = parse(line)
                .err()
                .unwrap_or_else(|| panic!("{line} is accepted"));
            assert_eq!(e.kind(), kind, "{line}: {e}");
        }
    }

    #[test]
    fn the_path_carries_the_target_and_level_encoded() {
        let get = Request {
            daemon: "rm1:8088",
            target: "weft_rm::actor",
            level: None,
        };
        assert_eq!(get.path(), "/logLevel?log=weft_rm%3A%3Aactor");
        let set = Request {
            daemon: "rm1:8088",
            target: "",
            level: Some("DEBUG"),
        };
        assert_eq!(set.path(), "/logLevel?log=&level=DEBUG");
    }
}
