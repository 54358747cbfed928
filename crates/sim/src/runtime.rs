//! The runtime model: how long a task runs given where it runs relative to
//! its input (`TaskLocality`), as a factor of its node-local duration
//! (`RuntimeModel`).
//!
//! This is what Hadoop's SLS lacks (it replays recorded durations wherever a
//! task lands), and what lets locality show up in response times. Which task
//! runs in which container is the AM emulation's choice; this module only
//! prices the result.

use std::fmt;

use weft_model::Duration;

/// Where a task ran relative to the replicas of its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskLocality {
    /// On a node holding a replica.
    NodeLocal,
    /// On another node of a rack holding a replica.
    RackLocal,
    /// On a rack holding no replica.
    OffRack,
    /// The task reads no input block (a reduce, an empty input).
    NoData,
}

impl TaskLocality {
    /// Every level, in report order.
    pub const ALL: [TaskLocality; 4] = [
        TaskLocality::NodeLocal,
        TaskLocality::RackLocal,
        TaskLocality::OffRack,
        TaskLocality::NoData,
    ];

    /// Position in [`TaskLocality::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The report's name for it.
    pub fn key(self) -> &'static str {
        match self {
            TaskLocality::NodeLocal => "node_local",
            TaskLocality::RackLocal => "rack_local",
            TaskLocality::OffRack => "off_rack",
            TaskLocality::NoData => "no_data",
        }
    }
}

impl fmt::Display for TaskLocality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TaskLocality::NodeLocal => "node-local",
            TaskLocality::RackLocal => "rack-local",
            TaskLocality::OffRack => "off-rack",
            TaskLocality::NoData => "no data",
        })
    }
}

/// Multipliers applied to a task's node-local duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RuntimeModel {
    /// Factor for a node-local task (usually 1).
    pub node_local: f64,
    /// Factor for a rack-local task.
    pub rack_local: f64,
    /// Factor for an off-rack task.
    pub off_rack: f64,
}

impl Default for RuntimeModel {
    /// Node-local 1, rack-local 1.5, off-rack 2: the delay-scheduling paper
    /// reports non-local maps running up to twice as long in its IO-heavy
    /// workload, and bandwidth within a rack lies between the two.
    fn default() -> RuntimeModel {
        RuntimeModel {
            node_local: 1.0,
            rack_local: 1.5,
            off_rack: 2.0,
        }
    }
}

impl RuntimeModel {
    /// The factor for a locality level (tasks without data run at their base duration).
    pub fn factor(&self, locality: TaskLocality) -> f64 {
        match locality {
            TaskLocality::NodeLocal => self.node_local,
            TaskLocality::RackLocal => self.rack_local,
            TaskLocality::OffRack => self.off_rack,
            TaskLocality::NoData => 1.0,
        }
    }

    /// How long a task of base duration `base` runs at `locality` (at least 1 ms).
    pub fn duration(&self, base: Duration, locality: TaskLocality) -> Duration {
        let ms = (base.as_millis() as f64 * self.factor(locality)).round();
        Duration::from_millis((ms as u64).max(1))
    }

    /// The factors must be positive and finite; says which one is not.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("node_local", self.node_local),
            ("rack_local", self.rack_local),
            ("off_rack", self.off_rack),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("runtime.{name} must be a positive number, not {v}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_scale_with_locality() {
        let m = RuntimeModel::default();
        let base = Duration::from_secs(10);
        let got: Vec<u64> = TaskLocality::ALL
            .iter()
            .map(|l| m.duration(base, *l).as_millis())
            .collect();
        assert_eq!(got, [10_000, 15_000, 20_000, 10_000]);
        assert_eq!(
            m.duration(Duration::ZERO, TaskLocality::NodeLocal)
                .as_millis(),
            1
        );
        assert!(RuntimeModel { off_rack: 0.0, ..m }.validate().is_err());
    }
}
