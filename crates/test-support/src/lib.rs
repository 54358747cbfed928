//! Helpers shared by the tests and benchmarks of every Weft crate.
//!
//! This crate is a dev-dependency only and, unlike the pure crates, may read
//! the clock: [`timing`] is the tiny benchmark harness every `benches/` target
//! uses, so the pure crates' own code never touches `Instant`. [`scenario`]
//! drives the core from text fixtures for the data-driven tests; [`fixtures`]
//! holds the small ones several crates' tests share, [`scratch`] the
//! directories tests write files in; [`tls`] (feature
//! `tls`) makes test certificates.

pub mod fixtures;
pub mod measure;
pub mod scenario;
pub mod scratch;
pub mod timing;
#[cfg(feature = "tls")]
pub mod tls;

pub use fixtures::{assert_promtool_accepts_metrics, promtool, site_xml};
pub use measure::{rss_bytes, time_once};
pub use scratch::ScratchDir;
pub use std::hint::black_box;
pub use timing::{Summary, bench};
