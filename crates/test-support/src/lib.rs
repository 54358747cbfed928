//! Helpers shared by the tests and benchmarks of every Weft crate.
//!
//! This crate is a dev-dependency only and, unlike the pure crates, may read
//! the clock. [`scenario`] drives the core from text fixtures.

pub mod scenario;
