//! Identifiers with YARN's textual forms: applications, attempts, containers,
//! nodes, and the two kinds of priority.
//!
//! Each type parses exactly what it prints, so ids round-trip through logs,
//! the REST API and scenario files.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// Why an id could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} {text:?}: expected {expected}")]
pub struct IdParseError {
    /// Which kind of id was expected (`application id`, `node id`, ...).
    pub kind: &'static str,
    /// The offending text.
    pub text: String,
    /// The expected form.
    pub expected: &'static str,
}

/// An application: `application_<clusterTimestamp>_<sequence>`.
///
/// `Ord` is numeric (timestamp, then sequence), as YARN's `ApplicationId`
/// compares; [`AppId::cmp_as_text`] gives the string order the Fair
/// Scheduler's comparators use as their last tie-breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppId {
    /// The RM's start time, shared by every app it issued.
    pub cluster_timestamp: u64,
    /// Sequence number within that RM.
    pub seq: u32,
}

impl AppId {
    /// An application id.
    pub const fn new(cluster_timestamp: u64, seq: u32) -> AppId {
        AppId {
            cluster_timestamp,
            seq,
        }
    }

    /// Compares the textual forms (`application_1_10000` < `application_1_9999`).
    pub fn cmp_as_text(&self, other: &AppId) -> Ordering {
        self.text_order_key().cmp(&other.text_order_key())
    }

    /// A number whose order is the order of the textual forms, for sort keys
    /// that must not allocate.
    ///
    /// The text after the common `application_` prefix is at most 20 + 1 + 10
    /// characters, packed as 4-bit codes left-aligned in 128 bits: end of text
    /// is 0, a digit d is d + 1, and `_` (which sorts after the digits) is 11.
    pub fn text_order_key(&self) -> u128 {
        let mut key: u128 = 0;
        let mut shift = 128;
        let mut push = |code: u8| {
            shift -= 4;
            key |= u128::from(code) << shift;
        };
        let digits = |mut n: u64, min_width: usize| {
            let mut buf = [0u8; 20];
            let mut len = 0;
            loop {
                buf[len] = (n % 10) as u8;
                len += 1;
                n /= 10;
                if n == 0 && len >= min_width {
                    break;
                }
            }
            buf[..len].iter().rev().map(|d| d + 1).collect::<Vec<u8>>()
        };
        for code in digits(self.cluster_timestamp, 1) {
            push(code);
        }
        push(11);
        for code in digits(u64::from(self.seq), 4) {
            push(code);
        }
        key
    }
}

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "application_{}_{:04}", self.cluster_timestamp, self.seq)
    }
}

impl FromStr for AppId {
    type Err = IdParseError;

    fn from_str(s: &str) -> Result<AppId, IdParseError> {
        let err = || IdParseError {
            kind: "application id",
            text: s.to_owned(),
            expected: "application_<clusterTimestamp>_<sequence>",
        };
        let rest = s.strip_prefix("application_").ok_or_else(err)?;
        let (ts, seq) = rest.split_once('_').ok_or_else(err)?;
        Ok(AppId {
            cluster_timestamp: parse_digits(ts).ok_or_else(err)?,
            seq: parse_digits(seq).ok_or_else(err)?,
        })
    }
}

/// One attempt of an application: `appattempt_<clusterTimestamp>_<sequence>_<attempt>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AttemptId {
    /// The application.
    pub app: AppId,
    /// Attempt number, from 1.
    pub attempt: u32,
}

impl AttemptId {
    /// An attempt id.
    pub const fn new(app: AppId, attempt: u32) -> AttemptId {
        AttemptId { app, attempt }
    }
}

impl fmt::Display for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "appattempt_{}_{:04}_{:06}",
            self.app.cluster_timestamp, self.app.seq, self.attempt
        )
    }
}

impl FromStr for AttemptId {
    type Err = IdParseError;

    fn from_str(s: &str) -> Result<AttemptId, IdParseError> {
        let err = || IdParseError {
            kind: "application attempt id",
            text: s.to_owned(),
            expected: "appattempt_<clusterTimestamp>_<sequence>_<attempt>",
        };
        let rest = s.strip_prefix("appattempt_").ok_or_else(err)?;
        let mut parts = rest.split('_');
        let (Some(ts), Some(seq), Some(attempt), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(err());
        };
        Ok(AttemptId {
            app: AppId {
                cluster_timestamp: parse_digits(ts).ok_or_else(err)?,
                seq: parse_digits(seq).ok_or_else(err)?,
            },
            attempt: parse_digits(attempt).ok_or_else(err)?,
        })
    }
}

/// A container: `container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<sequence>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContainerId {
    /// The attempt that owns the container.
    pub attempt: AttemptId,
    /// RM restart epoch (0 prints no `e` part).
    pub epoch: u32,
    /// Sequence number within the attempt, from 1 (1 is the AM).
    pub seq: u64,
}

impl ContainerId {
    /// A container id in epoch 0.
    pub const fn new(attempt: AttemptId, seq: u64) -> ContainerId {
        ContainerId {
            attempt,
            epoch: 0,
            seq,
        }
    }

    /// The application owning the container.
    pub const fn app(&self) -> AppId {
        self.attempt.app
    }
}

impl fmt::Display for ContainerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("container_")?;
        if self.epoch > 0 {
            write!(f, "e{:02}_", self.epoch)?;
        }
        write!(
            f,
            "{}_{:04}_{:02}_{:06}",
            self.attempt.app.cluster_timestamp,
            self.attempt.app.seq,
            self.attempt.attempt,
            self.seq
        )
    }
}

impl FromStr for ContainerId {
    type Err = IdParseError;

    fn from_str(s: &str) -> Result<ContainerId, IdParseError> {
        let err = || IdParseError {
            kind: "container id",
            text: s.to_owned(),
            expected: "container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<sequence>",
        };
        let rest = s.strip_prefix("container_").ok_or_else(err)?;
        let mut parts: Vec<&str> = rest.split('_').collect();
        let mut epoch = 0;
        if parts.first().is_some_and(|p| p.starts_with('e')) {
            epoch = parse_digits(&parts[0][1..]).ok_or_else(err)?;
            parts.remove(0);
        }
        let [ts, app, attempt, seq] = parts[..] else {
            return Err(err());
        };
        Ok(ContainerId {
            attempt: AttemptId {
                app: AppId {
                    cluster_timestamp: parse_digits(ts).ok_or_else(err)?,
                    seq: parse_digits(app).ok_or_else(err)?,
                },
                attempt: parse_digits(attempt).ok_or_else(err)?,
            },
            epoch,
            seq: parse_digits(seq).ok_or_else(err)?,
        })
    }
}

/// A NodeManager: `host:port`. Cheap to clone (the host is shared).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId {
    host: std::sync::Arc<str>,
    port: u16,
}

impl NodeId {
    /// A node id; the host must be non-empty and free of whitespace and `:`.
    pub fn new(host: &str, port: u16) -> Result<NodeId, IdParseError> {
        if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == ':' || c == '/') {
            return Err(IdParseError {
                kind: "node id",
                text: format!("{host}:{port}"),
                expected: "host:port",
            });
        }
        Ok(NodeId {
            host: std::sync::Arc::from(host),
            port,
        })
    }

    /// The host name, which is what node-local requests name.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The NodeManager's port.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

impl FromStr for NodeId {
    type Err = IdParseError;

    fn from_str(s: &str) -> Result<NodeId, IdParseError> {
        let err = || IdParseError {
            kind: "node id",
            text: s.to_owned(),
            expected: "host:port",
        };
        let (host, port) = s.rsplit_once(':').ok_or_else(err)?;
        let port: u16 = parse_digits(port).ok_or_else(err)?;
        NodeId::new(host, port).map_err(|_| err())
    }
}

/// The priority of a resource request (YARN's scheduler key): a **smaller**
/// number is served first, as in YARN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub i32);

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The priority of an application: a **larger** number is more important, as
/// in YARN's `-updatePriority`. Fair Scheduler apps default to 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppPriority(pub i32);

impl fmt::Display for AppPriority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

fn parse_digits<T: FromStr>(s: &str) -> Option<T> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let app = AppId::new(1_324_053_971_963, 1);
        assert_eq!(app.to_string(), "application_1324053971963_0001");
        assert_eq!(app.to_string().parse::<AppId>().unwrap(), app);
        let big = AppId::new(7, 123_456);
        assert_eq!(big.to_string(), "application_7_123456");
        assert_eq!(big.to_string().parse::<AppId>().unwrap(), big);

        let attempt = AttemptId::new(app, 1);
        assert_eq!(attempt.to_string(), "appattempt_1324053971963_0001_000001");
        assert_eq!(attempt.to_string().parse::<AttemptId>().unwrap(), attempt);

        let c = ContainerId::new(attempt, 2);
        assert_eq!(c.to_string(), "container_1324053971963_0001_01_000002");
        assert_eq!(c.to_string().parse::<ContainerId>().unwrap(), c);
        let e = ContainerId { epoch: 3, ..c };
        assert_eq!(e.to_string(), "container_e03_1324053971963_0001_01_000002");
        assert_eq!(e.to_string().parse::<ContainerId>().unwrap(), e);

        let n: NodeId = "host-1.example.com:8041".parse().unwrap();
        assert_eq!(n.host(), "host-1.example.com");
        assert_eq!(n.port(), 8041);
        assert_eq!(n.to_string(), "host-1.example.com:8041");
    }

    #[test]
    fn rejects_malformed() {
        for s in [
            "app_1_1",
            "application_1",
            "application_x_1",
            "application_1_1_1",
            "application__1",
        ] {
            assert!(s.parse::<AppId>().is_err(), "{s}");
        }
        for s in ["host", "host:", ":80", "host:99999", "ho st:80", "host:-1"] {
            assert!(s.parse::<NodeId>().is_err(), "{s}");
        }
        assert!("container_1_1_1".parse::<ContainerId>().is_err());
        let e = "application_x".parse::<AppId>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid application id \"application_x\": expected application_<clusterTimestamp>_<sequence>"
        );
    }

    #[test]
    fn text_order_differs_from_numeric() {
        let a = AppId::new(1, 10_000);
        let b = AppId::new(1, 9_999);
        assert!(a > b);
        assert_eq!(a.cmp_as_text(&b), Ordering::Less);
        assert_eq!(
            AppId::new(1, 2).cmp_as_text(&AppId::new(1, 3)),
            Ordering::Less
        );
    }
}
