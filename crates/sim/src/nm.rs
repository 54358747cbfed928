//! NodeManager emulation: what one simulated node runs, what it reports on
//! its next heartbeat (RUNNING once for each launched container, COMPLETE
//! once a task's modelled duration has passed), and its heartbeat schedule
//! (a fixed phase within the heartbeat interval, so nodes do not all beat at
//! the same instant). A draining node (graceful decommissioning) runs and
//! reports as any other; it only offers no room.
//!
//! When a node heartbeats, and whether a heartbeat may be skipped because it
//! provably decides nothing, is the engine's business; so are the core's
//! replies.

use weft_core::{ContainerState, ContainerStatus};
use weft_model::{ContainerId, Duration, NodeId, Resource, Time};

/// Whether, and why, a node heartbeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeMode {
    /// Heartbeats at every tick: it has something to report or to be offered.
    Active,
    /// Heartbeats only when a container completes, for liveness, or when the
    /// engine wakes it: until then its heartbeats would decide nothing.
    Dormant,
    /// Stopped heartbeating (lost); the RM declares it lost after its expiry.
    Silent,
    /// Gone from the RM (lost, decommissioned).
    Gone,
}

/// A container the node runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NmContainer {
    pub(crate) id: ContainerId,
    /// When its task ends; `None` for an AM, which runs until stopped.
    pub(crate) end: Option<Time>,
    /// RUNNING was reported.
    pub(crate) reported: bool,
}

/// One simulated node.
#[derive(Clone, Debug)]
pub(crate) struct NodeSim {
    pub(crate) id: NodeId,
    /// Offset of its heartbeats within the interval, in ms.
    pub(crate) phase: u64,
    pub(crate) mode: NodeMode,
    /// Its scheduled heartbeat (`Time::MAX`: none); heap entries for other times are stale.
    pub(crate) next_hb: Time,
    /// Its last heartbeat, reported to the core or skipped.
    pub(crate) last_hb: Option<Time>,
    /// Its last heartbeat the core heard, for liveness.
    pub(crate) last_core_hb: Time,
    /// Its last heartbeat before a `lose-nodes` event silences it: that one
    /// reaches the core even if idle, since the RM's liveness expiry counts
    /// from it.
    pub(crate) final_beat: Option<Time>,
    /// What the core has allocated on it, mirrored from the core's events.
    pub(crate) allocated: Resource,
    pub(crate) capability: Resource,
    /// The core is decommissioning it gracefully: it takes no new containers.
    pub(crate) draining: bool,
    pub(crate) containers: Vec<NmContainer>,
}

impl NodeSim {
    pub(crate) fn new(id: NodeId, capability: Resource, phase: u64) -> NodeSim {
        NodeSim {
            id,
            phase,
            mode: NodeMode::Dormant,
            next_hb: Time::MAX,
            last_hb: None,
            last_core_hb: Time::ZERO,
            final_beat: None,
            allocated: Resource::ZERO,
            capability,
            draining: false,
            containers: Vec::new(),
        }
    }

    /// What the core may still allocate on it, as far as the engine knows:
    /// nothing while it drains (the core shrinks its capability to what its
    /// containers hold).
    pub(crate) fn room(&self) -> Resource {
        if self.draining {
            Resource::ZERO
        } else {
            self.capability - self.allocated
        }
    }

    /// True while heartbeats reach the RM.
    pub(crate) fn is_up(&self) -> bool {
        matches!(self.mode, NodeMode::Active | NodeMode::Dormant)
    }

    /// The first heartbeat tick at or after `t`.
    pub(crate) fn tick_at_or_after(&self, t: Time, interval: Duration) -> Time {
        let i = interval.as_millis();
        let t = t.as_millis();
        let k = if t <= self.phase {
            0
        } else {
            (t - self.phase).div_ceil(i)
        };
        Time::from_millis(self.phase + k * i)
    }

    /// The first tick at or after `t` that is later than its last heartbeat.
    pub(crate) fn next_tick(&self, t: Time, interval: Duration) -> Time {
        let floor = match self.last_hb {
            Some(last) => t.max(Time::from_millis(last.as_millis() + 1)),
            None => t,
        };
        self.tick_at_or_after(floor, interval)
    }

    /// Starts a container (a task with its end time, or an AM).
    pub(crate) fn launch(&mut self, id: ContainerId, end: Option<Time>) {
        self.containers.push(NmContainer {
            id,
            end,
            reported: false,
        });
    }

    /// Stops a container without reporting it (the RM already ended it).
    pub(crate) fn stop(&mut self, id: &ContainerId) -> bool {
        match self.containers.iter().position(|c| c.id == *id) {
            Some(i) => {
                self.containers.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// True if a launched container has not been reported RUNNING yet.
    pub(crate) fn has_unreported(&self) -> bool {
        self.containers.iter().any(|c| !c.reported)
    }

    /// The earliest task end still to report.
    pub(crate) fn next_completion(&self) -> Option<Time> {
        self.containers.iter().filter_map(|c| c.end).min()
    }

    /// What the node reports now: COMPLETE (exit 0) for tasks that ended,
    /// which it forgets, and RUNNING once for new containers. Containers it
    /// does not mention are unchanged, as the core expects.
    pub(crate) fn take_statuses(&mut self, now: Time) -> Vec<ContainerStatus> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.containers.len() {
            let c = &mut self.containers[i];
            if c.end.is_some_and(|end| end <= now) {
                out.push(ContainerStatus {
                    container: c.id,
                    state: ContainerState::Complete { exit_status: 0 },
                });
                self.containers.swap_remove(i);
                continue;
            }
            if !c.reported {
                c.reported = true;
                out.push(ContainerStatus {
                    container: c.id,
                    state: ContainerState::Running,
                });
            }
            i += 1;
        }
        // Reports in container-id order, whatever the list's order.
        out.sort_by_key(|s| s.container);
        out
    }

    /// Forgets every container (the node died).
    pub(crate) fn lose_all(&mut self) {
        self.containers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_model::{AppId, AttemptId};

    fn cid(seq: u64) -> ContainerId {
        ContainerId::new(AttemptId::new(AppId::new(1, 1), 1), seq)
    }

    #[test]
    fn ticks_follow_the_phase() {
        let mut n = NodeSim::new(NodeId::new("h", 1).unwrap(), Resource::new(1, 1), 300);
        let i = Duration::from_secs(1);
        assert_eq!(n.tick_at_or_after(Time::ZERO, i), Time::from_millis(300));
        assert_eq!(
            n.tick_at_or_after(Time::from_millis(300), i),
            Time::from_millis(300)
        );
        assert_eq!(
            n.tick_at_or_after(Time::from_millis(301), i),
            Time::from_millis(1300)
        );
        n.last_hb = Some(Time::from_millis(1300));
        assert_eq!(
            n.next_tick(Time::from_millis(1300), i),
            Time::from_millis(2300)
        );
    }

    #[test]
    fn statuses_report_running_once_and_completion_when_due() {
        let mut n = NodeSim::new(NodeId::new("h", 1).unwrap(), Resource::new(1, 1), 0);
        n.launch(cid(2), Some(Time::from_millis(5000)));
        n.launch(cid(1), None);
        let first = n.take_statuses(Time::from_millis(1000));
        assert_eq!(first.len(), 2);
        assert!(first.iter().all(|s| s.state == ContainerState::Running));
        assert!(n.take_statuses(Time::from_millis(2000)).is_empty());
        assert_eq!(n.next_completion(), Some(Time::from_millis(5000)));
        let done = n.take_statuses(Time::from_millis(5000));
        assert_eq!(
            done,
            [ContainerStatus {
                container: cid(2),
                state: ContainerState::Complete { exit_status: 0 }
            }]
        );
        assert!(n.stop(&cid(1)));
        assert!(n.containers.is_empty());
    }
}
