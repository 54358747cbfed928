//! Preemption for Weft, as current Hadoop's Fair Scheduler does it:
//! starvation detection, victim selection node by node, and the
//! warn-then-kill ledger, all as data in and data out. A second model,
//! Hadoop 2.6 to 2.8's queue-level preemption, is chosen with the site
//! setting `yarn.scheduler.fair.preemption.model` = `classic`; both share
//! the view, the ledger and the transitions.
//!
//! The core implements [`PreemptionView`] over its state and calls
//! [`Preemptor::update`] from its update pass and at every
//! [`Preemptor::next_deadline`]; it reports ended containers with
//! [`Preemptor::container_ended`]. Each update returns a
//! [`PreemptionOutput`]: the starved apps and their victims, and the ledger's
//! [`Transition`]s (warned, killed, released, withdrawn) for the core to
//! carry out. Nothing here reads a clock or does I/O; see
//! `docs/preemption.md` for the protocol and where Weft differs from Hadoop.
//!
//! ```
//! use weft_model::{Resource, Time};
//! use weft_preemption::{
//!     AppInfo, Ask, ContainerInfo, Location, NodeInfo, NodeSlot, PreemptionView, Preemptor,
//!     QueueInfo, QueueSlot, AppSlot, TransitionKind,
//! };
//! use weft_queue_tree::site::SchedulerSettings;
//!
//! /// A cluster with nothing in it.
//! struct Empty;
//!
//! impl PreemptionView for Empty {
//!     fn cluster_capacity(&self) -> Resource { Resource::ZERO }
//!     fn cluster_allocated(&self) -> Resource { Resource::ZERO }
//!     fn queue_slots(&self) -> usize { 0 }
//!     fn queues(&self) -> impl Iterator<Item = QueueInfo<'_>> { std::iter::empty() }
//!     fn app_slots(&self) -> usize { 0 }
//!     fn apps(&self, _: QueueSlot) -> impl Iterator<Item = AppInfo> { std::iter::empty() }
//!     fn asks(&self, _: AppSlot) -> impl Iterator<Item = Ask<'_>> { std::iter::empty() }
//!     fn node_slots(&self) -> usize { 0 }
//!     fn nodes(&self) -> impl Iterator<Item = NodeSlot> { std::iter::empty() }
//!     fn nodes_at(&self, _: Location<'_>) -> impl Iterator<Item = NodeSlot> { std::iter::empty() }
//!     fn node(&self, _: NodeSlot) -> Option<NodeInfo<'_>> { None }
//!     fn containers(&self, _: NodeSlot) -> impl Iterator<Item = ContainerInfo> { std::iter::empty() }
//!     fn app_containers(&self, _: AppSlot) -> impl Iterator<Item = (NodeSlot, ContainerInfo)> {
//!         std::iter::empty()
//!     }
//! }
//!
//! let settings = SchedulerSettings { preemption: true, ..SchedulerSettings::default() };
//! let mut preemptor = Preemptor::new();
//! // The core's update pass, every update-interval-ms:
//! let out = preemptor.update(Time::from_millis(500), &Empty, &settings).unwrap();
//! for t in &out.transitions {
//!     match t.kind {
//!         TransitionKind::Warned { deadline } => { /* tell t.app; if t.set_aside, hold t.resource on t.node for t.for_app */ }
//!         TransitionKind::Killed => { /* kill t.container, then report it ended */ }
//!         TransitionKind::Withdrawn { .. } => { /* if t.set_aside, release what t.node holds for t.for_app */ }
//!         TransitionKind::Released => {}
//!     }
//! }
//! // Nothing warned, so nothing to wake up for.
//! assert_eq!(out.next_deadline, None);
//! ```

mod calc;
mod classic;
mod error;
mod ledger;
mod preemptor;
mod requests;
mod starvation;
mod victims;
mod view;

#[cfg(test)]
mod testing;

pub use error::{PreemptionError, SlotKind};
pub use ledger::{LedgerEntry, Transition, TransitionKind, WithdrawReason};
pub use preemptor::{PreemptionOutput, Preemptor, StarvedApp, Victim, VictimSet};
pub use view::{
    AppHoldings, AppInfo, AppSlot, Ask, ContainerInfo, Location, NodeInfo, NodeSlot,
    PreemptionView, QueueInfo, QueueSlot,
};
