//! Weft's own `GET /ws/v1/cluster/apps/{appid}/explain`: why an application
//! is or is not getting containers, in JSON or XML like the other app
//! resources.
//!
//! The explanation is asked of the scheduler, as one app's report is, so it
//! reflects the state now rather than the published views; the core
//! computes it (`ResourceManager::explain_app`), the DTO names it.
//!
//! An explanation tries every node on the scheduler's own thread (about
//! 40 µs per thousand nodes), so unlike the other reads, which cost it
//! nothing or next to nothing, a client polling it hard would slow
//! scheduling for everyone: `ExplainBudget` caps them at
//! `EXPLAINS_PER_SECOND` across all callers, answering 429 past it.

use std::sync::Mutex;
use std::time::Duration;

use axum::extract::State;
use tokio::time::Instant;

use crate::dto::explain::AppExplanationDto;
use crate::http::codec::{Format, Wire};
use crate::http::error::ApiError;
use crate::http::{ApiState, AppParam};

/// Explanations served a second, all callers together, with as many in a
/// burst: at 10,000 nodes that is at most about 2% of the scheduler's
/// thread, and far more than people reading pages ask for.
pub(crate) const EXPLAINS_PER_SECOND: u32 = 50;

/// A token bucket of explanations (on tokio's clock, which tests pause).
#[derive(Debug)]
pub(crate) struct ExplainBudget {
    /// Tokens left, and when they were counted.
    state: Mutex<(f64, Instant)>,
}

impl ExplainBudget {
    pub(crate) fn new() -> ExplainBudget {
        ExplainBudget {
            state: Mutex::new((f64::from(EXPLAINS_PER_SECOND), Instant::now())),
        }
    }

    /// Takes one explanation, or says how long until one is free.
    pub(crate) fn take(&self) -> Result<(), Duration> {
        let rate = f64::from(EXPLAINS_PER_SECOND);
        // Poisoned only if a holder panicked between two plain stores.
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        let (tokens, since) = *state;
        let tokens = (tokens + now.duration_since(since).as_secs_f64() * rate).min(rate);
        if tokens >= 1.0 {
            *state = (tokens - 1.0, now);
            Ok(())
        } else {
            *state = (tokens, now);
            Err(Duration::from_secs_f64((1.0 - tokens) / rate))
        }
    }

    /// `take`, as the error an endpoint answers with.
    pub(crate) fn take_or_refuse(&self) -> Result<(), ApiError> {
        self.take().map_err(|wait| {
            ApiError::TooManyRequests(format!(
                "more than {EXPLAINS_PER_SECOND} explanations a second were asked for (each tries every node on the scheduler's thread); retry in {} ms",
                wait.as_millis().max(1)
            ))
        })
    }
}

pub(super) async fn explain(
    State(s): State<ApiState>,
    format: Format,
    AppParam(app): AppParam,
) -> Result<Wire<AppExplanationDto>, ApiError> {
    s.explain_budget().take_or_refuse()?;
    let explanation = s.rm().explain_app(app).await?;
    Ok(Wire::ok(
        format,
        "appExplanation",
        AppExplanationDto::from_core(&explanation),
    ))
}
