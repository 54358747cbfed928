//! Workload importers and generators: Hadoop SLS's JSON job stream and
//! topology file (`sls`), SLS's SYNTH generator description (`synth`), SWIM's
//! Facebook traces (`swim`), and the simulator's own job-stream generator
//! (`generate`), each turning its input into `AppSpec`s.
//!
//! What they share lives here: per-workload defaults that override a trace's
//! own values (`AppDefaults`), the context that places input blocks and
//! resolves host names and carries the scenario's budget (`ImportCtx`), and
//! the error type with the trace's path and line. Reading the files is the
//! scenario's job.

pub mod generate;
pub mod sls;
pub mod swim;
pub mod synth;

use std::collections::BTreeMap;

use weft_model::{Duration, Resource};

use crate::limits::{Budget, LimitError};
use crate::rng::SimRng;
use crate::workload::{DataLayout, NodeSpec};

/// A trace that could not be imported: where, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}{}: {why}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ImportError {
    /// The trace's path as the scenario names it.
    pub path: String,
    /// The line (1-based), when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub why: String,
}

/// What a workload entry says about all of its apps, overriding the trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppDefaults {
    /// App names start with this.
    pub name_prefix: String,
    /// Queue for every app.
    pub queue: Option<String>,
    /// Users, handed out in turn.
    pub users: Vec<String>,
    /// AM size (`Some(None)`: unmanaged); `None` keeps the trace's or the default.
    pub am: Option<Option<Resource>>,
    /// Added to every submission time.
    pub start: Duration,
    /// Keep only the first this many jobs (by submission time).
    pub limit: Option<usize>,
    /// Task durations are multiplied by this.
    pub duration_scale: f64,
}

impl AppDefaults {
    /// The user for the `i`-th app, given the trace's own (if any).
    pub(crate) fn user(&self, i: usize, traced: Option<&str>) -> String {
        if !self.users.is_empty() {
            return self.users[i % self.users.len()].clone();
        }
        traced.unwrap_or("user").to_owned()
    }

    /// The AM size given the trace's own (default 1024 MB, 1 vcore).
    pub(crate) fn am(&self, traced: Option<Resource>) -> Option<Resource> {
        match self.am {
            Some(am) => am,
            None => Some(traced.unwrap_or(Resource::new(1024, 1))),
        }
    }

    /// A base duration after scaling.
    pub(crate) fn scale(&self, d: Duration) -> Duration {
        if self.duration_scale == 1.0 {
            return d;
        }
        Duration::from_millis((d.as_millis() as f64 * self.duration_scale).round() as u64)
    }
}

impl ImportError {
    /// A limit broken at a place in a trace.
    pub(crate) fn limit(path: &str, line: Option<usize>, e: LimitError) -> ImportError {
        ImportError {
            path: path.to_owned(),
            line,
            why: e.to_string(),
        }
    }
}

/// What importers need from the scenario: the nodes (to resolve host
/// names), where to place generated blocks, a random stream of their own,
/// and the scenario's budget, charged before anything is built.
pub(crate) struct ImportCtx<'a> {
    pub(crate) layout: &'a DataLayout,
    pub(crate) rng: SimRng,
    /// Replicas per generated block.
    pub(crate) replicas: u32,
    pub(crate) warnings: Vec<String>,
    /// What the scenario has materialised so far (given back after the import).
    pub(crate) budget: Budget,
    host_index: BTreeMap<&'a str, u32>,
}

impl<'a> ImportCtx<'a> {
    pub(crate) fn new(
        nodes: &'a [NodeSpec],
        layout: &'a DataLayout,
        rng: SimRng,
        replicas: u32,
        budget: Budget,
    ) -> ImportCtx<'a> {
        ImportCtx {
            layout,
            rng,
            replicas,
            warnings: Vec::new(),
            budget,
            host_index: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.name.as_str(), i as u32))
                .collect(),
        }
    }

    /// The node index of a host name.
    pub(crate) fn host(&self, name: &str) -> Option<u32> {
        self.host_index.get(name).copied()
    }

    /// Replicas for one new block.
    pub(crate) fn place_block(&mut self) -> Vec<u32> {
        self.layout.place(&mut self.rng, self.replicas)
    }

    /// How many replicas `place_block` gives a block (for charging the budget).
    pub(crate) fn block_replicas(&self) -> u64 {
        u64::from(self.replicas.min(self.layout.n_nodes()))
    }
}
