//! Hadoop's `ComputeFairShares` for one resource type: splitting a total among
//! weighted schedulables bounded by min and max shares, in both flavours
//! (instantaneous and steady), with exactly Hadoop's results, and fast.
//!
//! This module owns the arithmetic only. Which schedulables take part (a
//! parent's child queues, a leaf's runnable apps), which resource types a
//! policy shares (`fair`: memory; `drf`: every type), what counts as an active
//! queue and where the results are stored are the queue tree's business.
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
//! # How it is made fast without changing a result
//!
//! The search needs `used(R)` at up to about 60 ratios; everything below
//! computes exactly the values Hadoop's loop computes, only with less work.
//!
//! * An input's share is a non-decreasing function of `R` (rounding, `max`,
//!   `min` and truncation are all monotone), so `used` is monotone too.
//! * Inputs with equal (weight, min, max) next to each other form one group:
//!   `k` equal shares sum to `k` times the share, and a saturating sum of
//!   non-negative terms equals `min(exact sum, Long.MAX_VALUE)` in any order.
//! * Doubling: by monotonicity the final upper bound is `2^K` for the
//!   smallest `K ≥ 0` with `used(2^K) ≥ target`. The search guesses `K` from
//!   `target / Σ weights` and checks `used(2^K)` and `used(2^(K-1))`, walking
//!   one step at a time if the guess was wrong, instead of evaluating every
//!   power of two from 1. The bisection's first midpoint is `2^(K-1)`, already
//!   known to fall short, so it is not evaluated again.
//! * Bisection: every midpoint lies between the current bounds, so a group
//!   whose share is equal at both bounds has that share at every later
//!   midpoint. Such groups are frozen into a constant and never evaluated
//!   again; after a dozen steps only the few inputs whose truncated share
//!   still changes inside the interval are left.
//! * Past `R = 2^213` every positive `f32` weight times `R` exceeds `2^64`, more
//!   than any max share, so `used(2^213) = used(∞)`: if that still falls short,
//!   Hadoop would hang (see above) and the search stops.

use std::mem;

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
        "fair-share output has {outputs} slots for {inputs} inputs: it needs one slot per input"
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
    /// Runs of equal searched inputs, in input order.
    groups: Vec<Group>,
    /// Per group: its share at the bisection's lower bound.
    at_lower: Vec<u64>,
    /// Per group: its share at the bisection's upper bound.
    at_upper: Vec<u64>,
    /// Per group: its share at the latest midpoint.
    at_mid: Vec<u64>,
    /// Indexes of the groups whose share may still change inside the interval.
    live: Vec<usize>,
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
    let mut taken = 0_u64;
    let mut max_sum = 0_u64;
    let mut n_searched = 0_usize;
    // Searched inputs whose share does not depend on R (NaN or infinite
    // weights) still count in every used(R).
    let mut constant = 0_u64;
    for (input, slot) in inputs.iter().zip(out.iter_mut()) {
        let Searched { min, max } = match classify(input, kind) {
            Class::Fixed(share) => {
                *slot = from_long(share);
                taken = long_add(taken, share);
                continue;
            }
            Class::Searched(bounds) => bounds,
        };
        n_searched += 1;
        max_sum = long_add(max_sum, max);
        let weight = f64::from(input.weight);
        if weight.is_nan() {
            // Java's Math.max and Math.min propagate NaN and (long) NaN is 0,
            // whatever the ratio.
            *slot = 0;
            continue;
        }
        let group = Group {
            weight,
            min: min as f64,
            max: max as f64,
            count: 1,
        };
        if weight.is_infinite() {
            // Every ratio the search evaluates is positive, so the product
            // is always infinite and the share always the max share.
            let share = group.share_at(1.0);
            *slot = from_long(share);
            constant = long_add(constant, share);
            continue;
        }
        match scratch.groups.last_mut() {
            Some(last) if last.same_shares_as(&group) => last.count += 1,
            _ => scratch.groups.push(group),
        }
    }
    if n_searched == 0 || scratch.groups.is_empty() {
        // Every searched share is already known: none depends on the ratio.
        return Ok(());
    }
    let target = max_sum.min(to_long(total).saturating_sub(taken));
    let ratio = scratch.search(constant, target);
    for (input, slot) in inputs.iter().zip(out.iter_mut()) {
        if let Class::Searched(Searched { min, max }) = classify(input, kind) {
            let weight = f64::from(input.weight);
            if weight.is_nan() {
                continue;
            }
            let group = Group {
                weight,
                min: min as f64,
                max: max as f64,
                count: 1,
            };
            *slot = from_long(group.share_at(ratio));
        }
    }
    Ok(())
}

/// Hadoop's bisection steps (`COMPUTE_FAIR_SHARES_ITERATIONS`).
const ITERATIONS: u32 = 25;

/// Java's `Long.MAX_VALUE`, where every sum saturates.
const LONG_MAX: u64 = i64::MAX as u64;

/// The exponent past which doubling can no longer change `used`: the smallest
/// positive `f32` is `2^-149`, so at `R = 2^213` every searched weight times
/// `R` is at least `2^64`, above any max share (at most `2^63` as a double).
const LAST_DOUBLING: i32 = 213;

/// How Hadoop treats an input before the search.
enum Class {
    /// Its share is fixed (in Hadoop's `long` range) and it sits the search out.
    Fixed(u64),
    /// It takes part in the search.
    Searched(Searched),
}

/// A searched input's bounds in Hadoop's `long` range.
struct Searched {
    min: u64,
    max: u64,
}

/// Hadoop's `getFairShareIfFixed`, in its order: a zero max share, then (for
/// instantaneous shares) inactivity, then a weight ≤ 0 (NaN is not ≤ 0).
fn classify(input: &ShareInput, kind: ShareKind) -> Class {
    let min = to_long(input.min_share);
    let max = to_long(input.max_share);
    if max == 0 || (kind == ShareKind::Instantaneous && !input.active) {
        Class::Fixed(0)
    } else if input.weight <= 0.0 {
        Class::Fixed(min)
    } else {
        Class::Searched(Searched { min, max })
    }
}

/// A run of searched inputs with equal weight and bounds (as doubles, which is
/// all their share depends on). Invariant: `weight` is finite and positive.
#[derive(Clone, Copy, Debug)]
struct Group {
    weight: f64,
    min: f64,
    max: f64,
    count: u64,
}

impl Group {
    /// Hadoop's `computeShare` for a ratio that is not NaN. Comparisons rather
    /// than `f64::max`/`f64::min` because no operand can be NaN here and they
    /// compile to single instructions.
    #[inline]
    fn share_at(&self, ratio: f64) -> u64 {
        let mut share = self.weight * ratio;
        if share < self.min {
            share = self.min;
        }
        if share > self.max {
            share = self.max;
        }
        // Java's (long) cast: truncation, saturating at Long.MAX_VALUE.
        share as i64 as u64
    }

    /// This group's contribution to `used(ratio)`, saturating.
    #[inline]
    fn used_at(&self, ratio: f64) -> (u64, u64) {
        let share = self.share_at(ratio);
        (share, share.saturating_mul(self.count))
    }

    fn same_shares_as(&self, other: &Group) -> bool {
        self.weight.to_bits() == other.weight.to_bits()
            && self.min.to_bits() == other.min.to_bits()
            && self.max.to_bits() == other.max.to_bits()
    }
}

impl ShareScratch {
    /// Runs Hadoop's doubling and bisection over `self.groups` (plus
    /// `constant`, the ratio-independent part of `used`) and returns the final
    /// upper bound, at which every searched share is taken.
    fn search(&mut self, constant: u64, target: u64) -> f64 {
        let n_groups = self.groups.len();
        for buf in [&mut self.at_lower, &mut self.at_upper, &mut self.at_mid] {
            buf.clear();
            buf.resize(n_groups, 0);
        }

        // Find K, the smallest K >= 0 with used(2^K) >= target, leaving the
        // shares at 2^K in at_upper and those at 2^(K-1) (or at 0 when K = 0,
        // a lower bound for every ratio the bisection visits) in at_lower.
        let mut k = self.first_guess(target);
        if self.used_all(pow2(k), constant, Bound::Upper) < target {
            loop {
                mem::swap(&mut self.at_lower, &mut self.at_upper);
                if k == LAST_DOUBLING {
                    // used(∞) falls short: Hadoop would double forever.
                    return f64::INFINITY;
                }
                k += 1;
                if self.used_all(pow2(k), constant, Bound::Upper) >= target {
                    break;
                }
            }
        } else {
            loop {
                if k == 0 {
                    self.used_all(0.0, constant, Bound::Lower);
                    break;
                }
                if self.used_all(pow2(k - 1), constant, Bound::Lower) < target {
                    break;
                }
                mem::swap(&mut self.at_lower, &mut self.at_upper);
                k -= 1;
            }
        }

        let mut lower = 0.0;
        let mut upper = pow2(k);
        let mut steps = ITERATIONS;
        if k > 0 {
            // Hadoop's first midpoint is 2^(K-1): known to fall short.
            lower = upper / 2.0;
            steps -= 1;
        }
        self.live.clear();
        self.live.extend(0..n_groups);
        let mut frozen = constant;
        for _ in 0..steps {
            let mid = (lower + upper) / 2.0;
            let mut used = 0_u64;
            let mut n_live = 0;
            for live_idx in 0..self.live.len() {
                let group_idx = self.live[live_idx];
                let group = &self.groups[group_idx];
                let at_lower = self.at_lower[group_idx];
                if at_lower == self.at_upper[group_idx] {
                    frozen = frozen.saturating_add(at_lower.saturating_mul(group.count));
                    continue;
                }
                let (share, contribution) = group.used_at(mid);
                self.at_mid[group_idx] = share;
                used = used.saturating_add(contribution);
                self.live[n_live] = group_idx;
                n_live += 1;
            }
            self.live.truncate(n_live);
            let used = frozen.saturating_add(used).min(LONG_MAX);
            if used == target {
                upper = mid;
                break;
            } else if used < target {
                lower = mid;
                mem::swap(&mut self.at_lower, &mut self.at_mid);
            } else {
                upper = mid;
                mem::swap(&mut self.at_upper, &mut self.at_mid);
            }
        }
        upper
    }

    /// `used(ratio)` over every group, recording each group's share in the
    /// `bound` buffer.
    fn used_all(&mut self, ratio: f64, constant: u64, bound: Bound) -> u64 {
        let shares = match bound {
            Bound::Lower => &mut self.at_lower,
            Bound::Upper => &mut self.at_upper,
        };
        let mut used = constant;
        for (group, slot) in self.groups.iter().zip(shares.iter_mut()) {
            let (share, contribution) = group.used_at(ratio);
            *slot = share;
            used = used.saturating_add(contribution);
        }
        used.min(LONG_MAX)
    }

    /// A guess at K from the shares' linear part: `target / Σ weights` is
    /// where the shares would add up if no min, max or truncation applied.
    /// Only the number of evaluations depends on it, never the result.
    fn first_guess(&self, target: u64) -> i32 {
        let weight_sum: f64 = self
            .groups
            .iter()
            .map(|group| group.weight * group.count as f64)
            .sum();
        let ratio = target as f64 / weight_sum;
        if ratio.is_nan() || ratio <= 1.0 {
            return 0;
        }
        if ratio >= pow2(LAST_DOUBLING) {
            return LAST_DOUBLING;
        }
        // ceil(log2(ratio)) from the bits: exact, and no libm in the way.
        let bits = ratio.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i32 - 1023;
        let is_power_of_two = bits & ((1 << 52) - 1) == 0;
        if is_power_of_two {
            exponent
        } else {
            exponent + 1
        }
    }
}

/// Which endpoint buffer an evaluation fills.
#[derive(Clone, Copy)]
enum Bound {
    Lower,
    Upper,
}

/// `2^k` exactly, for `0 <= k <= LAST_DOUBLING`.
fn pow2(k: i32) -> f64 {
    debug_assert!((0..=LAST_DOUBLING).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
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
