//! How much a scenario may ask the simulator to hold, and how far into
//! virtual time it may reach.
//!
//! A scenario is resolved into concrete data before the run: every task of
//! every app, copy and workload is materialised with its duration and its
//! input's replicas, and every node with its name. A few characters of TOML
//! (`count = 4000000000`) or one line of a trace (an input of 10^19 bytes)
//! can therefore ask for more memory than any machine has. The simulator
//! also steps through virtual time (the core ticks every update interval,
//! the report samples every `sample_interval`), so a submission a million
//! hours away is a run that never ends. Bad input must get a clear error,
//! not a hang or an allocation that grows until the machine gives up, so the
//! resolution charges what it is about to build to a [`Budget`] first and
//! checks every time against the [`HORIZON`]; the error names the limit and
//! why it exists, and the caller adds where (`apps[0].tasks[0].count`,
//! `workloads[1]` with the trace's line).
//!
//! The budget lives here, in one type handed to each builder (apps, node
//! groups, events, importers), so a new way of making tasks or nodes gets
//! the same limits by charging the same budget.

use weft_model::Duration;

/// Tasks a scenario may materialise, across every app, copy and workload.
///
/// A loaded task costs about 250 bytes all in (its duration and replicas
/// when loaded, the AM's and the report's books while it runs: 2,000,000
/// tasks measured 477 MB), so this is about 12 GB, as much as a large
/// workstation can give; a day of Facebook's 2009 trace is well under a
/// million.
pub const MAX_TASKS: u64 = 50_000_000;

/// Replica entries (a task's input on one node, 4 bytes each) a scenario may
/// materialise: three per task at the task limit. Counted apart from tasks
/// because `replicas` or a shared `hosts` list multiplies them per task.
pub const MAX_REPLICAS: u64 = 3 * MAX_TASKS;

/// Nodes a scenario may have, initial ones and those `add-nodes` events
/// bring: ten times YARN's largest reported clusters. Every node is a
/// registration in the core and a heartbeat stream in the engine.
pub const MAX_NODES: u64 = 1_000_000;

/// Apps a scenario may submit, across every app, copy and workload: a year
/// of Facebook's 2009 trace (about 6,000 jobs a day) is 2.2 million jobs,
/// but each app is an AM, a report row and core state, and one that has
/// no tasks costs nothing to write (`count` copies of `tasks = []`).
pub const MAX_APPS: u64 = 1_000_000;

/// The latest virtual time a scenario may name, and the longest task: one
/// year (365 days). The engine steps through every instant the core or the
/// report asks for (a tick every update interval, 500 ms by default), so a
/// year of virtual time is already tens of millions of core calls; a
/// submission or a task beyond it is a typo or a unit mistake, not a plan.
pub const HORIZON: Duration = Duration::from_secs(365 * 86_400);

/// A limit a scenario would exceed: what, the limit and why it exists. The
/// caller says where (which setting, or which trace and line).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// Too many tasks in all.
    #[error(
        "{total} tasks in all would exceed the limit of {limit} per scenario: every task is \
         materialised when the scenario loads, at about 250 bytes each (so the limit is already \
         about 12 GB)"
    )]
    Tasks {
        /// Tasks so far, with this request.
        total: u64,
        /// The limit.
        limit: u64,
    },
    /// Too many replica entries in all.
    #[error(
        "{total} task input replicas in all would exceed the limit of {limit} per scenario (three \
         per task at the task limit): every task's replicas are materialised when the scenario \
         loads; lower replicas or share fewer hosts"
    )]
    Replicas {
        /// Replica entries so far, with this request.
        total: u64,
        /// The limit.
        limit: u64,
    },
    /// Too many nodes in all.
    #[error(
        "{total} nodes in all (initial and added) would exceed the limit of {limit} per scenario: \
         every node is materialised when the scenario loads and heartbeats through the run"
    )]
    Nodes {
        /// Nodes so far, with this request.
        total: u64,
        /// The limit.
        limit: u64,
    },
    /// Too many apps in all.
    #[error(
        "{total} apps in all would exceed the limit of {limit} per scenario: every app is \
         materialised when the scenario loads and is an AM, core state and a report row"
    )]
    Apps {
        /// Apps so far, with this request.
        total: u64,
        /// The limit.
        limit: u64,
    },
    /// A time or a duration past the horizon.
    #[error(
        "{value} is past the simulator's horizon of {horizon} (365 days): the run steps through \
         virtual time, so a scenario must fit within a year; check the unit"
    )]
    Horizon {
        /// The offending time (since zero) or duration.
        value: Duration,
        /// The horizon.
        horizon: Duration,
    },
}

/// The limits a [`Budget`] enforces (the constants above by default; tests
/// use smaller ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Tasks in all.
    pub tasks: u64,
    /// Replica entries in all.
    pub replicas: u64,
    /// Nodes in all.
    pub nodes: u64,
    /// Apps in all.
    pub apps: u64,
    /// The latest time and the longest duration.
    pub horizon: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            tasks: MAX_TASKS,
            replicas: MAX_REPLICAS,
            nodes: MAX_NODES,
            apps: MAX_APPS,
            horizon: HORIZON,
        }
    }
}

/// What a scenario has materialised so far, against its [`Limits`].
///
/// Builders charge what they are about to build before building it, so an
/// excessive request fails at once instead of after allocating.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    limits: Limits,
    tasks: u64,
    replicas: u64,
    nodes: u64,
    apps: u64,
}

/// Adds a request to a running total, or says which limit it breaks.
fn charge(
    used: &mut u64,
    n: u64,
    limit: u64,
    err: fn(u64, u64) -> LimitError,
) -> Result<(), LimitError> {
    let total = used.saturating_add(n);
    if total > limit {
        return Err(err(total, limit));
    }
    *used = total;
    Ok(())
}

impl Budget {
    /// A budget with nothing spent.
    pub fn new(limits: Limits) -> Budget {
        Budget {
            limits,
            ..Budget::default()
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Charges `tasks` tasks carrying `replicas` replica entries between
    /// them. Callers compute products with saturating arithmetic: a
    /// saturated count is over any limit.
    pub fn tasks(&mut self, tasks: u64, replicas: u64) -> Result<(), LimitError> {
        // Check both before charging either, so a refusal leaves the books as they were.
        let total = self.tasks.saturating_add(tasks);
        if total > self.limits.tasks {
            return Err(LimitError::Tasks {
                total,
                limit: self.limits.tasks,
            });
        }
        charge(
            &mut self.replicas,
            replicas,
            self.limits.replicas,
            |total, limit| LimitError::Replicas { total, limit },
        )?;
        self.tasks = total;
        Ok(())
    }

    /// Charges `n` nodes.
    pub fn nodes(&mut self, n: u64) -> Result<(), LimitError> {
        charge(&mut self.nodes, n, self.limits.nodes, |total, limit| {
            LimitError::Nodes { total, limit }
        })
    }

    /// Charges `n` apps.
    pub fn apps(&mut self, n: u64) -> Result<(), LimitError> {
        charge(&mut self.apps, n, self.limits.apps, |total, limit| {
            LimitError::Apps { total, limit }
        })
    }

    /// A time (as the duration since zero) or a duration, if within the horizon.
    pub fn within_horizon(&self, value: Duration) -> Result<Duration, LimitError> {
        if value > self.limits.horizon {
            return Err(LimitError::Horizon {
                value,
                horizon: self.limits.horizon,
            });
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_add_up_and_a_refusal_changes_nothing() {
        let mut b = Budget::new(Limits {
            tasks: 10,
            replicas: 20,
            nodes: 3,
            apps: 2,
            horizon: Duration::from_secs(60),
        });
        b.tasks(6, 12).unwrap();
        assert_eq!(
            b.tasks(5, 0),
            Err(LimitError::Tasks {
                total: 11,
                limit: 10
            })
        );
        assert_eq!(
            b.tasks(1, 9),
            Err(LimitError::Replicas {
                total: 21,
                limit: 20
            })
        );
        b.tasks(4, 8).unwrap();
        b.nodes(3).unwrap();
        assert!(b.nodes(1).is_err());
        assert!(b.apps(u64::MAX).is_err(), "saturated requests are refused");
        b.apps(2).unwrap();
        assert_eq!(
            b.within_horizon(Duration::from_secs(60)),
            Ok(Duration::from_secs(60))
        );
        let err = b.within_horizon(Duration::MAX).unwrap_err().to_string();
        assert!(
            err.starts_with("forever is past the simulator's horizon of 1m"),
            "{err}"
        );
    }

    #[test]
    fn messages_say_the_limit_and_why() {
        let e = LimitError::Tasks {
            total: 4_000_000_000,
            limit: MAX_TASKS,
        };
        expect_test::expect![[r#"4000000000 tasks in all would exceed the limit of 50000000 per scenario: every task is materialised when the scenario loads, at about 250 bytes each (so the limit is already about 12 GB)"#]]
        .assert_eq(&e.to_string());
        let e = LimitError::Horizon {
            value: Duration::from_secs(400 * 86_400),
            horizon: HORIZON,
        };
        expect_test::expect![[r#"9600h is past the simulator's horizon of 8760h (365 days): the run steps through virtual time, so a scenario must fit within a year; check the unit"#]]
        .assert_eq(&e.to_string());
    }
}
