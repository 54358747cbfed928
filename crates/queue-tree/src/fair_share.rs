//! Hadoop's `ComputeFairShares` for one resource type: splitting a total among
//! weighted schedulables bounded by min and max shares, in both flavours
//! (instantaneous and steady), with exactly Hadoop's results, and fast.
//!
//! This module owns the arithmetic only. Which schedulables take part (a
//! parent's child queues, a leaf's runnable apps), which resource types a
//! policy shares (`fair`: memory; `drf`: every type), what counts as an active
//! queue and where the results are stored are the queue tree's business.
//! The search itself lives in `search`; this file handles the inputs.
//!
//! # What Hadoop computes
//!
//! Values are Java `long`s; here a `u64` at or above `i64::MAX` (in practice
//! `u64::MAX`, Weft's "unbounded") stands for `Long.MAX_VALUE`, and a share of
//! `Long.MAX_VALUE` comes back as `u64::MAX`.
//!
//! 1. Fixed shares first: a max share of 0 gives 0; in the instantaneous
//!    flavour an inactive input gives 0; a weight ≤ 0 gives the min share.
//!    Their sum (saturating) is "taken".
//! 2. The rest are searched. The target is `min(Σ max shares, max(total −
//!    taken, 0))`, the sum saturating at `Long.MAX_VALUE`.
//! 3. For a ratio `R`, an input's share is `(long) min(max((double) weight *
//!    R, (double) min), (double) max)` (Java's `Math.max`/`Math.min`, so a NaN
//!    weight gives 0) and `used(R)` is the saturating sum of the shares.
//! 4. `R` starts at 1 and doubles while `used(R) < target`; then 25 bisection
//!    steps over `[0, R]` follow, stopping early when `used(mid)` hits the
//!    target exactly. Every input's share is taken at the final upper bound,
//!    so truncation can make shares sum to slightly more than the total
//!    (three equal inputs on 10240 get 3414 each).
//!
//! # Where Weft differs
//!
//! When `used(R)` can never reach the target, Hadoop doubles `R` forever and
//! hangs the update thread. That needs a NaN weight (it always gets 0 but its
//! max share still counts towards the target) or a max share above 2^53 that
//! rounds down when converted to `double`. Weft stops instead and gives every
//! searched input its share at `R = ∞`: its max share (0 for a NaN weight).
//!
//! # Fast, without changing a result
//!
//! Hadoop evaluates `used(R)` over every input at up to about 60 ratios. Weft
//! reproduces the same ratios and decisions with far less work, using only
//! facts it can prove (`search` has the details):
//!
//! * An input's share is a non-decreasing function of `R` (rounding, `max`,
//!   `min` and truncation are all monotone), so `used` is monotone too.
//! * Inputs with equal (weight, min, max) form one group wherever they stand
//!   (runs of neighbours first, then equal runs merged): `k` equal shares
//!   sum to `k` times the share, and a saturating sum of non-negative terms
//!   is `min(exact sum, Long.MAX_VALUE)` in any order.
//! * By monotonicity, Hadoop's doubling ends at `2^K` for the smallest `K`
//!   with `used(2^K) ≥ target`, which can be found from a good guess.
//! * A group whose share is equal at both ends of the bisection interval has
//!   that share at every later midpoint: it is frozen into a constant.
//! * Most midpoints are decided by bounds on `used`, without evaluating it.
//! * Near the end, `used(R) ≥ target` becomes `R ≥ θ` for a threshold `θ`
//!   computed exactly, and the remaining steps are mere comparisons.
//!
//! The tests compare every result with a literal transcription of Hadoop's
//! loop on random inputs, edge values included.

mod search;

use search::{Group, Searched};

/// One schedulable's side of the computation, for one resource type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareInput {
    /// The weight, as Hadoop stores it (`float`); it is widened to `f64`
    /// before multiplying, as Java does, so rounding matches.
    pub weight: f32,
    /// The min share of this resource type.
    pub min_share: u64,
    /// The max share of this resource type; `u64::MAX` is unbounded.
    pub max_share: u64,
    /// Whether this schedulable takes part in instantaneous shares: a queue
    /// with runnable apps somewhere below it. Always true for apps.
    pub active: bool,
}

/// Which fair share is being computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareKind {
    /// The fair share used for scheduling: inactive inputs get 0 and are left
    /// out of the split (Hadoop's `computeShares`).
    Instantaneous,
    /// The steady fair share shown to operators: every input takes part
    /// (Hadoop's `computeSteadyShares`).
    Steady,
}

/// A call the computation cannot carry out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShareError {
    /// The output slice does not have one slot per input.
    #[error(
        "fair-share output length {outputs} differs from input length {inputs}: one slot per input is needed"
    )]
    OutputLength {
        /// Number of inputs.
        inputs: usize,
        /// Number of output slots.
        outputs: usize,
    },
}

/// Reusable working memory for [`compute_shares`], so repeated calls (one per
/// parent queue, resource type and update) allocate nothing once warm.
///
/// It carries no state from one call to the next: results never depend on
/// what it was used for before.
#[derive(Clone, Debug, Default)]
pub struct ShareScratch {
    /// The groups searched: runs of equal searched inputs, in input order,
    /// or, once runs are merged, every distinct (weight, min, max) once.
    groups: Vec<Group>,
    /// When `groups` holds the runs merged: the runs, in input order.
    runs: Vec<Group>,
    /// Per group: its share at the bisection's lower end.
    at_lower: Vec<u64>,
    /// Per group: its share at the bisection's upper end.
    at_upper: Vec<u64>,
    /// Per group: its share at the latest midpoint.
    at_mid: Vec<u64>,
    /// Indexes of the groups whose share may still change inside the interval.
    live: Vec<usize>,
    /// Indexes of the live groups the bounds treat as clamped.
    clamped: Vec<usize>,
    /// Where the live groups' shares step up, and by how much `used` does.
    rises: Vec<(f64, u64)>,
}

impl ShareScratch {
    /// Empty working memory; it grows to the largest call it serves.
    pub fn new() -> ShareScratch {
        ShareScratch::default()
    }
}

/// Splits `total` among `inputs` as Hadoop's `ComputeFairShares` does for one
/// resource type, writing input `i`'s share to `out[i]`.
///
/// `total` is the parent's share of this resource type (the cluster capacity
/// at the root); `u64::MAX` is unbounded. See the module documentation for
/// the algorithm and the one place it deliberately differs from Hadoop.
///
/// # Errors
///
/// [`ShareError::OutputLength`] when `out` and `inputs` differ in length;
/// `out` is left untouched then.
pub fn compute_shares(
    scratch: &mut ShareScratch,
    inputs: &[ShareInput],
    total: u64,
    kind: ShareKind,
    out: &mut [u64],
) -> Result<(), ShareError> {
    if out.len() != inputs.len() {
        return Err(ShareError::OutputLength {
            inputs: inputs.len(),
            outputs: out.len(),
        });
    }
    scratch.groups.clear();
    let instantaneous = kind == ShareKind::Instantaneous;
    let mut taken = 0_u64;
    let mut max_sum = 0_u64;
    // Searched inputs whose share does not depend on R (NaN or infinite
    // weights) still count in every used(R).
    let mut constant = 0_u64;
    // The last grouped input as given, so equal neighbours join its group
    // without any conversion.
    let mut last: Option<(u32, u64, u64)> = None;
    for (input, slot) in inputs.iter().zip(out.iter_mut()) {
        if let Some(share) = fixed_share(input, instantaneous) {
            *slot = from_long(share);
            taken = long_add(taken, share);
            continue;
        }
        max_sum = long_add(max_sum, to_long(input.max_share));
        let raw = (input.weight.to_bits(), input.min_share, input.max_share);
        if last == Some(raw)
            && let Some(group) = scratch.groups.last_mut()
        {
            group.count += 1;
            continue;
        }
        let min = to_long(input.min_share);
        let max = to_long(input.max_share);
        match Group::classify(input.weight, min, max) {
            Searched::Constant(share) => {
                *slot = from_long(share);
                constant = long_add(constant, share);
            }
            Searched::Group(group) => {
                last = Some(raw);
                match scratch.groups.last_mut() {
                    Some(prev) if prev.same_shares_as(&group) => prev.count += 1,
                    _ => scratch.groups.push(group),
                }
            }
        }
    }
    if scratch.groups.is_empty() {
        // Every share is known already: none depends on the ratio.
        return Ok(());
    }
    // Equal inputs apart (siblings configured alike but not side by side)
    // make runs that can share one group: the search's work grows with
    // groups.
    let merged = scratch.groups.len() > MERGE_ABOVE && merge(&scratch.groups, &mut scratch.runs);
    if merged {
        std::mem::swap(&mut scratch.groups, &mut scratch.runs);
    }
    let target = max_sum.min(to_long(total).saturating_sub(taken));
    let ratio = scratch.search(constant, target);

    // Runs are of grouped inputs in input order, so walking both together
    // hands each member its run's share: the share of the run's group.
    let runs = if merged {
        &scratch.runs
    } else {
        &scratch.groups
    };
    let mut groups = runs.iter();
    let (mut share, mut left) = (0, 0);
    for (input, slot) in inputs.iter().zip(out.iter_mut()) {
        if fixed_share(input, instantaneous).is_some() || !Group::is_grouped(input.weight) {
            continue;
        }
        if left == 0 {
            // The groups were built from these very inputs, so one is there.
            let Some(group) = groups.next() else { break };
            share = from_long(group.share_at(ratio));
            left = group.count;
        }
        *slot = share;
        left -= 1;
    }
    Ok(())
}

/// What [`compute_shares`] gives each of `count` active inputs that all have
/// weight `weight`, no min share and an unbounded max share (a leaf's
/// runnable apps when their weights are equal), for `total`, computed
/// without reading them one by one: such inputs form one group, and this
/// runs the same search on that group. `None` when the weight is not finite
/// and positive (or `count` is 0): the inputs are then not searched as one
/// group, and the caller uses `compute_shares`.
pub(crate) fn equal_share(
    scratch: &mut ShareScratch,
    weight: f32,
    count: u64,
    total: u64,
) -> Option<u64> {
    if count == 0 || !(weight.is_finite() && weight > 0.0) {
        return None;
    }
    // As compute_shares finds: nothing is fixed (nothing taken), nothing is
    // constant, and the max shares sum to Long.MAX_VALUE, so the target is
    // the total as a long.
    let Searched::Group(mut group) = Group::classify(weight, 0, LONG_MAX) else {
        return None;
    };
    group.count = count;
    scratch.groups.clear();
    scratch.groups.push(group);
    let ratio = scratch.search(0, to_long(total));
    Some(from_long(group.share_at(ratio)))
}

/// Above this many runs, equal runs are merged before the search: with so
/// few, looking for equal ones would cost more than it could spare.
const MERGE_ABOVE: usize = 4;

/// At most this many distinct groups are looked for among the runs; with
/// more, the runs are searched as they are.
const MERGE_LIMIT: usize = 16;

/// Merges equal `runs` into `out`, each distinct (weight, min, max) once,
/// counting all its inputs. False, with `out` to be ignored, when the runs
/// hold more than `MERGE_LIMIT` distinct groups or none to merge.
fn merge(runs: &[Group], out: &mut Vec<Group>) -> bool {
    out.clear();
    for run in runs {
        if let Some(group) = out.iter_mut().find(|group| group.same_shares_as(run)) {
            group.count += run.count;
        } else if out.len() < MERGE_LIMIT {
            out.push(*run);
        } else {
            return false;
        }
    }
    out.len() < runs.len()
}

/// Java's `Long.MAX_VALUE`, where every sum saturates.
const LONG_MAX: u64 = i64::MAX as u64;

/// Hadoop's `getFairShareIfFixed`, in its order: a zero max share, then (for
/// instantaneous shares) inactivity, then a weight ≤ 0 (NaN is not ≤ 0). The
/// share is in Hadoop's `long` range; `None` means the input is searched.
#[inline]
fn fixed_share(input: &ShareInput, instantaneous: bool) -> Option<u64> {
    if input.max_share == 0 || (instantaneous && !input.active) {
        Some(0)
    } else if input.weight <= 0.0 {
        Some(to_long(input.min_share))
    } else {
        None
    }
}

/// A `u64` as a Java `long`: everything from `i64::MAX` up is `Long.MAX_VALUE`.
fn to_long(value: u64) -> u64 {
    value.min(LONG_MAX)
}

/// A Java `long` share back as Weft's `u64`: `Long.MAX_VALUE` is unbounded.
fn from_long(value: u64) -> u64 {
    if value == LONG_MAX { u64::MAX } else { value }
}

/// Hadoop's `safeAdd` for non-negative `long`s: saturates at `Long.MAX_VALUE`.
fn long_add(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(LONG_MAX)
}

#[cfg(test)]
mod tests;
