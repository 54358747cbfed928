//! The errors of one preemption update: a view that breaks its own contract
//! (slots out of range or listed twice, parents that are not queues, a bad
//! threshold) or time running backwards.
//!
//! "Nothing to preempt" or "no victims found" are ordinary outcomes reported
//! in the output, never errors.

use std::fmt;

use weft_model::{QueuePath, Time};

/// Which kind of slot a view got wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotKind {
    /// A queue slot.
    Queue,
    /// An app slot.
    App,
    /// A node slot.
    Node,
}

impl SlotKind {
    /// Where a slot the view lists goes in a table of `bound` entries; an
    /// error if it is out of range or `seen` says the table holds it already
    /// (a view that lists a queue or app twice would count it twice).
    pub(crate) fn index(
        self,
        slot: u32,
        bound: usize,
        seen: impl FnOnce(usize) -> bool,
    ) -> Result<usize, PreemptionError> {
        let i = slot as usize;
        if i >= bound {
            return Err(PreemptionError::SlotOutOfRange {
                kind: self,
                slot,
                bound,
            });
        }
        if seen(i) {
            return Err(PreemptionError::DuplicateSlot { kind: self, slot });
        }
        Ok(i)
    }
}

impl fmt::Display for SlotKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SlotKind::Queue => "queue",
            SlotKind::App => "app",
            SlotKind::Node => "node",
        })
    }
}

/// Why an update was refused. Nothing changed: the preemptor is as it was.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PreemptionError {
    /// `now` is earlier than the previous update's.
    #[error("time went backwards: update at {now} after an update at {previous}")]
    TimeWentBackwards {
        /// This update's time.
        now: Time,
        /// The previous update's time.
        previous: Time,
    },
    /// A slot is not below the bound the view reports for its kind.
    #[error("the view names {kind} slot {slot}, not below its bound {bound}")]
    SlotOutOfRange {
        /// Which kind of slot.
        kind: SlotKind,
        /// The slot.
        slot: u32,
        /// The bound the view reports.
        bound: usize,
    },
    /// The view lists the same queue or app twice.
    #[error("the view lists {kind} slot {slot} twice")]
    DuplicateSlot {
        /// Which kind of slot.
        kind: SlotKind,
        /// The slot.
        slot: u32,
    },
    /// A queue's parent slot is not a queue of the view, or the parents loop.
    #[error("queue {queue} has parent slot {parent}, which is not one of its ancestors' queues")]
    BadParent {
        /// The queue.
        queue: QueuePath,
        /// Its parent slot.
        parent: u32,
    },
    /// A queue's fair-share preemption threshold is not a number in [0, 1].
    #[error("queue {queue} has fair-share preemption threshold {value}, not in [0, 1]")]
    BadThreshold {
        /// The queue.
        queue: QueuePath,
        /// The threshold.
        value: f64,
    },
    /// A node slot from `nodes` or `nodes_at` holds no node.
    #[error("the view names node slot {slot}, which holds no node in service")]
    UnknownNode {
        /// The slot.
        slot: u32,
    },
}
