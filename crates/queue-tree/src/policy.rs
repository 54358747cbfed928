//! The scheduling policies (`fair`, `fifo`, `drf`) as an enum, with their
//! allocation-file spelling and Hadoop's parent/child compatibility rules.
//!
//! The comparators themselves are sort keys built in `ordering`; fair-share
//! arithmetic is in `fair_share`.

use std::fmt;
use std::str::FromStr;

/// A queue's scheduling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// Fair sharing of memory (Hadoop's `FairSharePolicy`).
    Fair,
    /// First in, first out within a leaf (Hadoop's `FifoPolicy`).
    Fifo,
    /// Dominant resource fairness over every resource type (`DominantResourceFairnessPolicy`).
    Drf,
}

/// An unknown policy name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduling policy {name:?} (expected fair, fifo or drf)")]
pub struct UnknownPolicy {
    /// The name as written.
    pub name: String,
}

impl Policy {
    /// The allocation-file spelling.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Fair => "fair",
            Policy::Fifo => "fifo",
            Policy::Drf => "drf",
        }
    }

    /// The spelling Hadoop's REST API and metrics use (`fair`, `FIFO`, `DRF`).
    pub const fn hadoop_display_name(self) -> &'static str {
        match self {
            Policy::Fair => "fair",
            Policy::Fifo => "FIFO",
            Policy::Drf => "DRF",
        }
    }

    /// FIFO orders apps only: it may not be used by a parent queue.
    pub const fn can_be_parent(self) -> bool {
        !matches!(self, Policy::Fifo)
    }

    /// Hadoop's rule for a parent's children: a `fair` parent may not have a
    /// `drf` child (its memory-only shares would leave vcores unshared); a
    /// `drf` parent accepts anything.
    pub const fn accepts_child(self, child: Policy) -> bool {
        !matches!(
            (self, child),
            (Policy::Fair, Policy::Drf) | (Policy::Fifo, _)
        )
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses `fair`, `fifo`, `drf` (any case) and Hadoop's class names for them.
impl FromStr for Policy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Policy, UnknownPolicy> {
        let t = s.trim();
        let short = t.rsplit('.').next().unwrap_or(t);
        match short.to_ascii_lowercase().as_str() {
            "fair" | "fairsharepolicy" => Ok(Policy::Fair),
            "fifo" | "fifopolicy" => Ok(Policy::Fifo),
            "drf" | "dominantresourcefairnesspolicy" => Ok(Policy::Drf),
            _ => Err(UnknownPolicy { name: s.to_owned() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_and_classes() {
        assert_eq!("FAIR".parse::<Policy>().unwrap(), Policy::Fair);
        assert_eq!(" drf ".parse::<Policy>().unwrap(), Policy::Drf);
        assert_eq!(
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.policies.FifoPolicy"
                .parse::<Policy>()
                .unwrap(),
            Policy::Fifo
        );
        assert_eq!(
            "lottery".parse::<Policy>().unwrap_err().to_string(),
            "unknown scheduling policy \"lottery\" (expected fair, fifo or drf)"
        );
    }

    #[test]
    fn compatibility() {
        assert!(Policy::Drf.accepts_child(Policy::Fair));
        assert!(Policy::Drf.accepts_child(Policy::Fifo));
        assert!(Policy::Fair.accepts_child(Policy::Fifo));
        assert!(!Policy::Fair.accepts_child(Policy::Drf));
        assert!(!Policy::Fifo.can_be_parent());
    }
}
