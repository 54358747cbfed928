//! Test-only support: a hand-built cluster ([`TestView`]) read from a text
//! fixture, the `check` helper that runs preemption on it and renders a
//! stable table, and the little simulator that carries preemption's output
//! out (kills, hand-back, scheduling) so scenarios can run for many updates.
//!
//! The tests themselves live in `scenarios` and `classic_scenarios`
//! (fixtures and snapshots, one file per model) and `properties` (property
//! tests over random clusters, both models).

mod classic_scenarios;
mod fixture;
mod properties;
mod scenarios;
mod sim;

pub(crate) use fixture::{TestView, check, run, run_with};
