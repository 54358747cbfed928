//! Weft's discrete-event simulator: it replays a workload through the real
//! `weft_core::ResourceManager` on virtual time, as fast as the CPU allows,
//! so an allocation file can be tried against a workload before it is
//! deployed and Weft can be checked against published results.
//!
//! The pieces, in the order a run uses them:
//! - [`scenario`]: the TOML scenario file (nodes, allocation file, site
//!   settings, apps, imported workloads, timed events), resolved with a
//!   seeded random stream ([`rng`]) into a concrete [`Scenario`], within
//!   the [`limits`] on what it may materialise and how far it may reach;
//! - [`import`]: Hadoop SLS's job and topology JSON, SLS's SYNTH generator,
//!   SWIM's Facebook traces, and a job-stream generator;
//! - [`engine`]: the event queue and the emulated node managers and
//!   application masters that talk to the core exactly as the service's
//!   clients do; [`runtime`] prices each task by where it ran;
//! - [`report`]: per-app, per-queue and fairness results as JSON and SVG;
//! - [`experiments`]: the reproductions shipped with the project;
//! - [`cli`]: `weft sim ...`.
//!
//! ```
//! use weft_sim::{MemorySources, Scenario, SimOptions, simulate};
//!
//! let text = r#"
//!     [[nodes]]
//!     count = 4
//!     capacity = "4096 mb, 4 vcores"
//!     [[apps]]
//!     name = "wordcount"
//!     tasks = [ { count = 6, duration = "20s" } ]
//! "#;
//! let scenario = Scenario::load(text, &MemorySources::default(), Some(7)).unwrap();
//! let report = simulate(&scenario, SimOptions::default()).unwrap();
//! let app = &report.apps[0];
//! assert_eq!(app.outcome.name(), "finished");
//! assert!(app.response().unwrap().as_millis() >= 20_000);
//! // Same scenario, same seed: the same report, byte for byte.
//! let again = simulate(&scenario, SimOptions::default()).unwrap();
//! assert_eq!(report.to_json(), again.to_json());
//! ```

mod am;
pub mod cli;
pub mod engine;
pub mod experiments;
pub mod import;
pub mod json;
pub mod limits;
mod metrics;
mod nm;
pub mod progress;
pub mod report;
pub mod rng;
pub mod runtime;
pub mod scenario;
pub mod svg;
pub mod workload;

pub use cli::main_with_args;
pub use engine::{Progress, SimError, SimOptions, simulate, simulate_with_progress};
pub use metrics::{PreemptionRecord, QueueSeries};
pub use report::{AppOutcome, BinSummary, Outcome, Report, RunStats};
pub use scenario::{DirSources, MemorySources, Scenario, ScenarioError, ScenarioFile, Sources};
