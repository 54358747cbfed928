//! Experiment stub.

use super::{ExperimentResult, Scale};

/// Runs it.
pub fn run(_scale: Scale) -> anyhow::Result<ExperimentResult> {
    anyhow::bail!("not yet")
}
