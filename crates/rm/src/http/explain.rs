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
//! `weft.rm.explain.max-per-second` across all callers, answering 429 past
//! it (403 when the operator set it to 0).

use std::sync::Mutex;
use std::time::Duration;

use axum::extract::State;
use tokio::time::Instant;

use crate::access::Identity;
use crate::dto::explain::AppExplanationDto;
use crate::http::codec::{Caller, Format, Wire};
use crate::http::error::ApiError;
use crate::http::{ApiState, AppParam};

/// A token bucket of explanations (on tokio's clock, which tests pause):
/// `rate` a second, all callers together, with as many in a burst. The
/// default of 50 is at most about 2% of the scheduler's thread at 10,000
/// nodes, and far more than people reading pages ask for.
#[derive(Debug)]
pub(crate) struct ExplainBudget {
    rate: u32,
    /// Tokens left, and when they were counted.
    state: Mutex<(f64, Instant)>,
}

impl ExplainBudget {
    pub(crate) fn new(rate: u32) -> ExplainBudget {
        ExplainBudget {
            rate,
            state: Mutex::new((f64::from(rate), Instant::now())),
        }
    }

    /// Takes one explanation, or says how long until one is free (`None`:
    /// never, explanations are off).
    pub(crate) fn take(&self) -> Result<(), Option<Duration>> {
        if self.rate == 0 {
            return Err(None);
        }
        let rate = f64::from(self.rate);
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
            Err(Some(Duration::from_secs_f64((1.0 - tokens) / rate)))
        }
    }

    /// `take`, as the error an endpoint answers with.
    pub(crate) fn take_or_refuse(&self) -> Result<(), ApiError> {
        self.take().map_err(|wait| match wait {
            Some(wait) => ApiError::TooManyRequests(format!(
                "more than {} explanations a second were asked for (each tries every node on the scheduler's thread); retry in {} ms",
                self.rate,
                wait.as_millis().max(1)
            )),
            // 403, as Hadoop answers a submission when REST submissions are off.
            None => ApiError::Forbidden(
                "explanations are turned off on this RM (weft.rm.explain.max-per-second is 0)"
                    .to_owned(),
            ),
        })
    }
}

pub(super) async fn explain(
    State(s): State<ApiState>,
    format: Format,
    Caller(who): Caller,
    AppParam(app): AppParam,
) -> Result<Wire<AppExplanationDto>, ApiError> {
    check_view(&s, who.as_ref(), app).await?;
    s.explain_budget().take_or_refuse()?;
    let explanation = s.rm().explain_app(app).await?;
    Ok(Wire::ok(
        format,
        "appExplanation",
        AppExplanationDto::from_core(&explanation),
    ))
}

/// An explanation shows an app's asks and where they could go, which
/// Hadoop's reports withhold from a caller without `VIEW_APP` rights
/// (its `resourceRequests`), so such a caller is refused it.
async fn check_view(
    s: &ApiState,
    who: Option<&Identity>,
    app: weft_model::AppId,
) -> Result<(), ApiError> {
    // Anonymous callers and RMs without ACLs see everything: no need to ask.
    let Some(who) = who.filter(|_| s.access().enabled()) else {
        return Ok(());
    };
    let snap = s.rm().app_snapshot(app).await?;
    if super::apps::may_view(s, Some(who), &snap) {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!(
        "user {} may not see the details of application {app}: only its owner, a user its VIEW_APP ACL names, an administrator of its queue or a cluster administrator (yarn.admin.acl) may",
        who.user
    )))
}
