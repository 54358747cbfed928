//! The warn-then-kill ledger: one entry per container that has been warned
//! and is neither killed, released nor withdrawn yet, and the transitions
//! that move containers in and out of it.
//!
//! A container's life here: *candidate* (chosen during an update; visible
//! only in dry-run reports) → *warned* at T with deadline T + the kill wait
//! → *killed* at the deadline, or earlier *released* (it ended on its own)
//! or *withdrawn* (no longer needed). Deciding when each happens is
//! `preemptor`'s business; the ledger keeps the books and their indexes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use weft_model::{AppId, AttemptId, ContainerId, NodeId, Resource, Time};

use crate::view::{AppSlot, NodeSlot};

/// A warned container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerEntry {
    /// The app that owns the container.
    pub app: AppId,
    /// The node it runs on.
    pub node: NodeId,
    /// Its size.
    pub resource: Resource,
    /// The starved app it is taken for.
    pub for_app: AppId,
    /// When the owner was warned.
    pub warned_at: Time,
    /// When it is killed unless released first: `warned_at` plus the kill
    /// wait in force at the warning.
    pub deadline: Time,
    /// Whether its node holds its size for `for_app` (the hand-back entry):
    /// true in the current model, false in the classic model, which sets
    /// nothing aside.
    pub set_aside: bool,
    pub(crate) app_slot: AppSlot,
    pub(crate) node_slot: NodeSlot,
    pub(crate) for_slot: AppSlot,
}

/// One change of one container's state, as the core must carry it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The container.
    pub container: ContainerId,
    /// The app that owns it.
    pub app: AppId,
    /// The node it runs on.
    pub node: NodeId,
    /// Its size.
    pub resource: Resource,
    /// The starved app it is (or was) taken for.
    pub for_app: AppId,
    /// Whether its node holds (or held) its size for `for_app`: the core
    /// adds it to the node's hand-back entry at `Warned` and takes it off at
    /// `Withdrawn` only when this is true (the current model); the classic
    /// model sets nothing aside.
    pub set_aside: bool,
    /// What happened.
    pub kind: TransitionKind,
}

/// What happened to a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionKind {
    /// The owner is told to give it back before `deadline` (YARN's preemption
    /// message); with `set_aside`, its size is set aside on its node for `for_app`.
    Warned {
        /// When it will be killed.
        deadline: Time,
    },
    /// The deadline passed: the core kills it (exit status "preempted") and,
    /// with `set_aside`, keeps its size set aside on the node for `for_app`.
    Killed,
    /// It ended before its deadline (the owner gave it back, or it finished).
    Released,
    /// It is no longer to be preempted: the owner is told so, and with
    /// `set_aside` the core takes its size off what the node holds for `for_app`.
    Withdrawn {
        /// Why.
        reason: WithdrawReason,
    },
}

/// Why a warning was withdrawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WithdrawReason {
    /// The app it was taken for is no longer starved, or wants nothing more.
    NoLongerNeeded,
    /// The app it was taken for is gone.
    BeneficiaryGone,
    /// The owning app is gone while the container was never reported ended.
    OwnerGone,
    /// Preemption was switched off, or to dry run.
    PreemptionOff,
    /// The preemption model was switched: the new one starts afresh.
    ModelChanged,
}

impl fmt::Display for WithdrawReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WithdrawReason::NoLongerNeeded => "no longer needed",
            WithdrawReason::BeneficiaryGone => "beneficiary gone",
            WithdrawReason::OwnerGone => "owner gone",
            WithdrawReason::PreemptionOff => "preemption off",
            WithdrawReason::ModelChanged => "preemption model changed",
        })
    }
}

/// The warned containers, by id and by deadline.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ledger {
    entries: BTreeMap<ContainerId, LedgerEntry>,
    /// (deadline, container) of every entry.
    by_deadline: BTreeSet<(Time, ContainerId)>,
}

impl Ledger {
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ContainerId, &LedgerEntry)> {
        self.entries.iter()
    }

    pub(crate) fn insert(&mut self, id: ContainerId, entry: LedgerEntry) {
        debug_assert!(
            !self.entries.contains_key(&id),
            "container {id} warned twice"
        );
        self.remove(&id);
        self.by_deadline.insert((entry.deadline, id));
        self.entries.insert(id, entry);
    }

    pub(crate) fn remove(&mut self, id: &ContainerId) -> Option<LedgerEntry> {
        let entry = self.entries.remove(id)?;
        self.unindex(*id, &entry);
        Some(entry)
    }

    fn unindex(&mut self, id: ContainerId, entry: &LedgerEntry) {
        self.by_deadline.remove(&(entry.deadline, id));
    }

    /// Entries whose container `app` owns, by container id.
    pub(crate) fn owned_by(
        &self,
        app: AppId,
    ) -> impl Iterator<Item = (&ContainerId, &LedgerEntry)> {
        let low = ContainerId::new(AttemptId::new(app, 0), 0);
        self.entries
            .range(low..)
            .take_while(move |(id, _)| id.app() == app)
    }

    pub(crate) fn next_deadline(&self) -> Option<Time> {
        self.by_deadline.first().map(|(t, _)| *t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(owner: u32, for_app: u32, deadline: u64) -> LedgerEntry {
        LedgerEntry {
            app: AppId::new(1, owner),
            node: NodeId::new("n1", 1).unwrap(),
            resource: Resource::new(1024, 1),
            for_app: AppId::new(1, for_app),
            warned_at: Time::ZERO,
            deadline: Time::from_millis(deadline),
            set_aside: true,
            app_slot: AppSlot(owner),
            node_slot: NodeSlot(0),
            for_slot: AppSlot(for_app),
        }
    }

    fn container(app: u32, seq: u64) -> ContainerId {
        ContainerId::new(AttemptId::new(AppId::new(1, app), 1), seq)
    }

    #[test]
    fn indexes_follow_inserts_and_removals() {
        let mut ledger = Ledger::default();
        ledger.insert(container(1, 2), entry(1, 3, 500));
        ledger.insert(container(1, 1), entry(1, 3, 900));
        ledger.insert(container(2, 1), entry(2, 4, 100));
        assert_eq!(ledger.next_deadline(), Some(Time::from_millis(100)));
        let owned: Vec<ContainerId> = ledger
            .owned_by(AppId::new(1, 1))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(owned, [container(1, 1), container(1, 2)]);
        assert!(ledger.remove(&container(2, 1)).is_some());
        assert!(ledger.remove(&container(2, 1)).is_none());
        assert_eq!(ledger.next_deadline(), Some(Time::from_millis(500)));
        assert_eq!(ledger.len(), 2);
    }
}
