//! The search for Hadoop's final ratio: the doubling and the 25-step
//! bisection of `ComputeFairShares`, reproduced exactly with much less work.
//!
//! The caller (`fair_share`) turns inputs into [`Group`]s and constants and
//! hands out the shares at the ratio returned here. Every shortcut below
//! rests on one fact: a group's share at ratio `R`,
//! `trunc(min(max(fl(weight * R), min), max))`, is non-decreasing in `R`, as
//! rounding, `max`, `min` and truncation all are; so `used(R)` is too. Each
//! shortcut only skips evaluations whose outcome it has proved, so Hadoop's
//! sequence of midpoints and decisions is reproduced exactly.
//!
//! * Doubling: it ends at `2^K` for the smallest `K ≥ 0` with
//!   `used(2^K) ≥ target`. A guess from `target / Σ weights` is checked by
//!   evaluating `2^K` and `2^(K-1)` and walked if wrong. Hadoop's first
//!   midpoint is then `2^(K-1)`, known to fall short.
//! * Freezing: a group whose share is equal at both ends of the interval has
//!   that share at every later midpoint, which lies between the ends. Shares
//!   at ends further out (stale ones, after steps that evaluated nothing) are
//!   just as valid, only looser.
//! * Bounds: over an interval, a group unclamped at both ends (its end shares
//!   differ from its truncated min and max) is unclamped throughout, and its
//!   share at `mid` is `trunc(fl(weight * mid))`. Such linear groups sum to
//!   between `Σ count × fl(weight * mid) - Σ count` and that sum, which is
//!   within a relative `slack` of `mid * Σ count × weight`; `slack` covers
//!   the rounding of each product, of the sum of weights and of the bounds'
//!   own arithmetic eight times over. Other live groups ("clamped") lie
//!   between their shares at the ends. When the target lies outside those
//!   bounds, the midpoint is decided without evaluating anything; when it
//!   does not, the clamped groups (usually few) are first re-evaluated at the
//!   current ends to tighten the bounds.
//! * Plain groups (no min share, unbounded max share, as apps are) are
//!   unclamped until `weight * R` nears `2^63`, so when every group is plain
//!   the bounds hold from the start and settle the doubling unevaluated.
//! * Thresholds: when at most one group's share still varies, `used(mid) ≥
//!   target` exactly when that group's share reaches some integer `s`, which
//!   is when `fl(weight * mid) ≥ s`, which is when `mid ≥ θ` for the smallest
//!   double `θ` with `fl(weight * θ) ≥ s`. `θ` is found from `s / weight` by
//!   stepping one double at a time, and the remaining steps compare only.
//!   With a single group overall this replaces the whole search. When many
//!   groups vary but each rises by at most one across the interval, `used`
//!   is a staircase with a step at each such `θ`; sorting them gives where it
//!   reaches and passes the target, with the same effect.
//! * Past `R = 2^213` every positive `f32` weight times `R` exceeds `2^64`,
//!   above any max share, so `used(2^213) = used(∞)`: if that falls short,
//!   Hadoop would double forever, and the search returns infinity instead.

use std::mem;

use super::{LONG_MAX, ShareScratch};

/// Hadoop's bisection steps (`COMPUTE_FAIR_SHARES_ITERATIONS`).
const ITERATIONS: u32 = 25;

/// The exponent past which doubling can no longer change `used` (see the
/// module documentation).
const LAST_DOUBLING: i32 = 213;

/// Below this, integers and their sums and differences are exact in an `f64`.
const EXACT_IN_F64: u64 = 1 << 52;

/// Up to this many live groups, the bisection evaluates every midpoint in
/// registers instead of bounding: bounds cannot beat so little work.
const FEW: usize = 4;

/// A searched input, as the search sees it.
pub(super) enum Searched {
    /// Its share is the same at every ratio the search evaluates.
    Constant(u64),
    /// Its share depends on the ratio.
    Group(Group),
}

/// A run of searched inputs with equal weight and bounds (as doubles, which is
/// all their share depends on).
///
/// Invariant: `weight` is finite and positive; `min_share` and `max_share`
/// are `min` and `max` truncated, the shares at either clamp.
#[derive(Clone, Copy, Debug)]
pub(super) struct Group {
    weight: f64,
    min: f64,
    max: f64,
    min_share: u64,
    max_share: u64,
    /// How many inputs the run holds.
    pub(super) count: u64,
}

impl Group {
    /// Sorts a searched input (weight not ≤ 0, bounds in Hadoop's `long`
    /// range) into a constant or a group of one.
    pub(super) fn classify(weight: f32, min: u64, max: u64) -> Searched {
        if weight.is_nan() {
            // Java's Math.max and Math.min propagate NaN and (long) NaN is 0,
            // whatever the ratio.
            Searched::Constant(0)
        } else if weight.is_infinite() {
            // Every ratio the search evaluates is positive, so the product is
            // always infinite and the share always the max share.
            Searched::Constant(truncate(max as f64))
        } else {
            // Java widens long to double with round-to-nearest, as `as` does.
            let (min, max) = (min as f64, max as f64);
            Searched::Group(Group {
                weight: f64::from(weight),
                min,
                max,
                min_share: truncate(min),
                max_share: truncate(max),
                count: 1,
            })
        }
    }

    /// Whether a searched input's weight puts it in a group.
    pub(super) fn is_grouped(weight: f32) -> bool {
        weight.is_finite()
    }

    /// Hadoop's `computeShare` for a ratio that is not NaN. Comparisons rather
    /// than `f64::max`/`f64::min` because no operand can be NaN here and they
    /// compile to single instructions.
    #[inline]
    pub(super) fn share_at(&self, ratio: f64) -> u64 {
        let mut share = self.weight * ratio;
        if share < self.min {
            share = self.min;
        }
        if share > self.max {
            share = self.max;
        }
        truncate(share)
    }

    pub(super) fn same_shares_as(&self, other: &Group) -> bool {
        self.weight.to_bits() == other.weight.to_bits()
            && self.min.to_bits() == other.min.to_bits()
            && self.max.to_bits() == other.max.to_bits()
    }

    /// No min share and an unbounded max share (as apps have): the clamps
    /// only apply once `weight * R` reaches `2^63`.
    #[inline]
    fn is_plain(&self) -> bool {
        self.min_share == 0 && self.max_share == LONG_MAX
    }

    /// `count` times `share`, saturating.
    #[inline]
    fn times(&self, share: u64) -> u64 {
        share.saturating_mul(self.count)
    }

    /// `count` as a double, through `i64` because that conversion is one
    /// instruction and counts never come near `2^63`.
    #[inline]
    fn count_f64(&self) -> f64 {
        self.count as i64 as f64
    }

    /// The smallest ratio at which this group's share is at least `share`:
    /// 0 when it is at every positive ratio, infinity when never. `None` when
    /// `share` is too large for the threshold to be exact.
    fn threshold(&self, share: u64) -> Option<f64> {
        // The share just above R = 0, where fl(weight * R) is below any
        // positive min: the clamps alone decide it.
        let smallest = truncate(self.min.min(self.max));
        if share <= smallest {
            return Some(0.0);
        }
        if share > self.max_share {
            return Some(f64::INFINITY);
        }
        if share >= EXACT_IN_F64 {
            return None;
        }
        // Here min < share <= max, so the share reaches `share` exactly when
        // fl(weight * R) does; find the smallest such double R.
        let wanted = share as i64 as f64;
        let mut ratio = wanted / self.weight;
        for _ in 0..64 {
            if self.weight * ratio >= wanted {
                let below = next_down(ratio);
                if below > 0.0 && self.weight * below >= wanted {
                    ratio = below;
                } else {
                    return Some(ratio);
                }
            } else {
                ratio = next_up(ratio);
            }
        }
        // The quotient is within a few doubles of the threshold, so this is
        // never reached; the caller then evaluates as usual.
        None
    }
}

impl ShareScratch {
    /// Runs Hadoop's doubling and bisection over `self.groups` (plus
    /// `constant`, the ratio-independent part of `used`) and returns the final
    /// upper bound, at which every searched share is taken: infinity where
    /// Hadoop would double forever.
    pub(super) fn search(&mut self, constant: u64, target: u64) -> f64 {
        if let [group] = self.groups.as_slice()
            && let Some(crossing) = Crossing::find(Some(group), constant, target)
        {
            return crossing.search();
        }
        let n_groups = self.groups.len();
        for buf in [&mut self.at_lower, &mut self.at_upper, &mut self.at_mid] {
            buf.clear();
            buf.resize(n_groups, 0);
        }
        let start = match self.plain_start(constant, target) {
            Some(start) => start,
            None => {
                let Some(k) = self.doubling_bound(constant, target) else {
                    return f64::INFINITY;
                };
                let mut frozen = constant;
                let bounds = self.first_bounds(&mut frozen, target);
                Start::after_doubling(k, frozen, bounds)
            }
        };
        self.bisect(start, target)
    }

    /// Hadoop's bisection from `start`; returns the final upper bound.
    fn bisect(&mut self, start: Start, target: u64) -> f64 {
        let Start {
            mut lower,
            mut upper,
            steps,
            mut frozen,
            mut bounds,
            fresh,
            plain_linear,
        } = start;
        // Whether at_lower and at_upper hold the live groups' shares at the
        // current ends, or at ends further out (a step decided by bounds
        // moves an end without evaluating). Shares at ends further out are
        // still bounds for every midpoint, as the interval only shrinks.
        let mut lower_fresh = fresh;
        let mut upper_fresh = fresh;
        // Whether the interval shrank since the clamped groups' end shares
        // were last computed.
        let mut shrunk = false;
        let slack = slack(self.groups.len());
        for step in 0..steps {
            if self.live.len() <= FEW {
                return Few::gather(self, frozen).bisect(lower, upper, steps - step, target);
            }
            let mid = (lower + upper) / 2.0;
            let mut surely_below = mid < bounds.below_under;
            let mut surely_above = mid > bounds.above_over;
            if !(surely_below | surely_above) && shrunk && !self.clamped.is_empty() {
                bounds = self.rebound(bounds, frozen, (lower, upper), target, slack);
                surely_below = mid < bounds.below_under;
                surely_above = mid > bounds.above_over;
            }
            let below = if surely_below | surely_above {
                shrunk = true;
                lower_fresh &= !surely_below;
                upper_fresh &= surely_below;
                surely_below
            } else {
                let ends = Ends {
                    lower,
                    upper,
                    lower_fresh,
                    upper_fresh,
                    plain_linear,
                };
                let pass = self.evaluate(mid, ends, &mut frozen);
                let used = frozen.saturating_add(pass.used).min(LONG_MAX);
                if used == target {
                    return mid;
                }
                let below = used < target;
                if below {
                    mem::swap(&mut self.at_lower, &mut self.at_mid);
                    lower_fresh = true;
                } else {
                    mem::swap(&mut self.at_upper, &mut self.at_mid);
                    upper_fresh = true;
                }
                if !pass.steep
                    && let Some(crossing) = self.crossing_of_steps(frozen, target)
                {
                    let (lower, upper) = if below { (mid, upper) } else { (lower, mid) };
                    return crossing.bisect(lower, upper, steps - step - 1);
                }
                bounds = pass.bounds_after(below, frozen, target, slack);
                shrunk = false;
                below
            };
            lower = if below { mid } else { lower };
            upper = if below { upper } else { mid };
        }
        upper
    }

    /// Tightens `bounds` for the interval `[lower, upper]` by evaluating the
    /// clamped groups (those bounded by their end shares, usually few) at
    /// its ends; those no longer clamped there join the linear groups.
    #[inline(never)] // Called a few times per search; inlined, it slows the loop.
    fn rebound(
        &mut self,
        bounds: Bounds,
        frozen: u64,
        (lower, upper): (f64, f64),
        target: u64,
        slack: f64,
    ) -> Bounds {
        let mut linear = bounds.linear;
        let (mut least, mut most) = (frozen, frozen);
        let mut n_clamped = 0;
        for clamped_idx in 0..self.clamped.len() {
            let group_idx = self.clamped[clamped_idx];
            let group = &self.groups[group_idx];
            let at_lower = group.share_at(lower);
            let at_upper = group.share_at(upper);
            self.at_lower[group_idx] = at_lower;
            self.at_upper[group_idx] = at_upper;
            if linear.add(group, at_lower, at_upper, false) {
                continue;
            }
            least = least.saturating_add(group.times(at_lower));
            most = most.saturating_add(group.times(at_upper));
            self.clamped[n_clamped] = group_idx;
            n_clamped += 1;
        }
        self.clamped.truncate(n_clamped);
        Bounds::new(linear, least, most, target, slack)
    }

    /// The crossing when every live group's share rises by at most one
    /// across the interval (its end shares differ by at most one): `used(R)`
    /// is then the shares at the lower end plus, for each rising group, its
    /// count once `R` passes the exact ratio where its share steps up.
    /// Sorting those ratios gives where `used` reaches and passes the target.
    /// `None` when the numbers are too large for exact thresholds.
    #[inline(never)] // Called once per search; inlined, it slows the loop.
    fn crossing_of_steps(&mut self, frozen: u64, target: u64) -> Option<Crossing> {
        if target >= EXACT_IN_F64 {
            return None;
        }
        self.rises.clear();
        let mut used = frozen;
        for &group_idx in &self.live {
            let group = &self.groups[group_idx];
            let at_lower = self.at_lower[group_idx];
            used = used.saturating_add(group.times(at_lower));
            if self.at_upper[group_idx] != at_lower {
                let ratio = group.threshold(at_lower + 1)?;
                self.rises.push((ratio, group.count));
            }
        }
        self.rises.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut reach = if used >= target { 0.0 } else { f64::INFINITY };
        let mut pass = if used > target { 0.0 } else { f64::INFINITY };
        for &(ratio, count) in &self.rises {
            if pass < f64::INFINITY {
                break;
            }
            used = used.saturating_add(count);
            if reach == f64::INFINITY && used >= target {
                reach = ratio;
            }
            if used > target {
                pass = ratio;
            }
        }
        Some(Crossing { reach, pass })
    }

    /// The start of the bisection without evaluating anything, when every
    /// group is plain (no min share, unbounded max share), there are more
    /// than a few, and bounds alone settle the doubling. `None` otherwise.
    ///
    /// Up to a ratio `R` with `R * weight < 2^61` for every group, no clamp
    /// applies, every group is linear and `used(R)` lies within the bounds of
    /// [`Bounds::new`]. Hadoop's doubling then ends at the first power of two
    /// the bounds show is above the target, provided the previous one is
    /// surely below it.
    fn plain_start(&mut self, constant: u64, target: u64) -> Option<Start> {
        if self.groups.len() <= FEW {
            return None;
        }
        let mut linear = Linear::default();
        let mut max_weight = 0.0_f64;
        for group in &self.groups {
            if !group.is_plain() {
                return None;
            }
            linear.add(group, 0, 0, true);
            max_weight = max_weight.max(group.weight);
        }
        let slack = slack(self.groups.len());
        let bounds = Bounds::new(linear, constant, constant, target, slack);
        let k = if bounds.below_under.is_nan() || bounds.below_under <= 1.0 {
            0
        } else if bounds.below_under < pow2(LAST_DOUBLING) {
            ceil_log2(bounds.below_under)
        } else {
            return None;
        };
        let upper = pow2(k);
        if !(upper > bounds.above_over && upper * max_weight < pow2(61)) {
            return None;
        }
        // Valid end shares for every ratio in [0, upper], stale but safe.
        self.at_lower.fill(0);
        self.at_upper.fill(LONG_MAX);
        self.live.clear();
        self.live.extend(0..self.groups.len());
        self.clamped.clear();
        let mut start = Start::after_doubling(k, constant, bounds);
        start.fresh = false;
        start.plain_linear = true;
        Some(start)
    }

    /// Lists every group as live except those frozen already (equal shares
    /// at both ends of the first interval, which are added to `frozen`), and
    /// bounds `used` over that interval from the shares at its ends.
    fn first_bounds(&mut self, frozen: &mut u64, target: u64) -> Bounds {
        self.live.clear();
        self.clamped.clear();
        let mut pass = Pass::default();
        for (group_idx, group) in self.groups.iter().enumerate() {
            let at_lower = self.at_lower[group_idx];
            let at_upper = self.at_upper[group_idx];
            if at_lower == at_upper {
                *frozen = frozen.saturating_add(group.times(at_lower));
                continue;
            }
            self.live.push(group_idx);
            if !pass.add(group, at_lower, 0, at_upper, false) {
                self.clamped.push(group_idx);
            }
        }
        let [at_lower, _, at_upper] = pass.clamped;
        Bounds::new(
            pass.linear,
            frozen.saturating_add(at_lower),
            frozen.saturating_add(at_upper),
            target,
            slack(self.groups.len()),
        )
    }

    /// Finds K, the smallest K ≥ 0 with used(2^K) ≥ target, leaving the
    /// shares at 2^K in `at_upper` and those at 2^(K-1) (or at 0 when K = 0, a
    /// lower bound for every ratio the bisection visits) in `at_lower`.
    /// `None` when no K exists, where Hadoop would double forever.
    fn doubling_bound(&mut self, constant: u64, target: u64) -> Option<i32> {
        let mut k = self.first_guess(target);
        if self.used_all(pow2(k), constant, End::Upper) < target {
            loop {
                mem::swap(&mut self.at_lower, &mut self.at_upper);
                if k == LAST_DOUBLING {
                    return None;
                }
                k += 1;
                if self.used_all(pow2(k), constant, End::Upper) >= target {
                    return Some(k);
                }
            }
        }
        loop {
            if k == 0 {
                self.used_all(0.0, constant, End::Lower);
                return Some(0);
            }
            if self.used_all(pow2(k - 1), constant, End::Lower) < target {
                return Some(k);
            }
            mem::swap(&mut self.at_lower, &mut self.at_upper);
            k -= 1;
        }
    }

    /// A guess at K from the shares' linear part: `target / Σ weights` is
    /// where the shares would add up if no min, max or truncation applied.
    /// Only the number of evaluations depends on it, never the result.
    fn first_guess(&self, target: u64) -> i32 {
        let weight_sum: f64 = self
            .groups
            .iter()
            .map(|group| group.weight * group.count_f64())
            .sum();
        let ratio = target as f64 / weight_sum;
        if ratio.is_nan() || ratio <= 1.0 {
            0
        } else if ratio >= pow2(LAST_DOUBLING) {
            LAST_DOUBLING
        } else {
            ceil_log2(ratio)
        }
    }

    /// `used(ratio)` over every group, recording each group's share in the
    /// `end` buffer.
    fn used_all(&mut self, ratio: f64, constant: u64, end: End) -> u64 {
        let shares = match end {
            End::Lower => &mut self.at_lower,
            End::Upper => &mut self.at_upper,
        };
        let mut used = constant;
        for (group, slot) in self.groups.iter().zip(shares.iter_mut()) {
            let share = group.share_at(ratio);
            *slot = share;
            used = used.saturating_add(group.times(share));
        }
        used.min(LONG_MAX)
    }

    /// Evaluates `used(mid)` over the live groups (without `frozen`),
    /// recording each one's share at `mid` in `at_mid`, and freezes every
    /// group whose share is equal at both ends (adding it to `frozen`).
    ///
    /// A stale end share is brought up to date only for groups narrow enough
    /// to freeze (`weight × width < 1`): for the others it would cost an
    /// evaluation and change no bound worth having.
    fn evaluate(&mut self, mid: f64, ends: Ends, frozen: &mut u64) -> Pass {
        // Plain slices of one length, so the compiler neither reloads the
        // vectors after each store nor checks every index more than once.
        let groups = &self.groups[..];
        let n_groups = groups.len();
        let at_lower = &mut self.at_lower[..n_groups];
        let at_upper = &mut self.at_upper[..n_groups];
        let at_mid = &mut self.at_mid[..n_groups];
        let live = &mut self.live;
        let clamped = &mut self.clamped;
        let width = ends.upper - ends.lower;
        let mut pass = Pass::default();
        let mut n_live = 0;
        clamped.clear();
        for live_idx in 0..live.len() {
            let group_idx = live[live_idx];
            let group = &groups[group_idx];
            if group.weight * width < 1.0 {
                if !ends.lower_fresh {
                    at_lower[group_idx] = group.share_at(ends.lower);
                }
                if !ends.upper_fresh {
                    at_upper[group_idx] = group.share_at(ends.upper);
                }
            }
            let lower_share = at_lower[group_idx];
            let upper_share = at_upper[group_idx];
            if lower_share == upper_share {
                *frozen = frozen.saturating_add(group.times(lower_share));
                continue;
            }
            live[n_live] = group_idx;
            n_live += 1;
            let mid_share = group.share_at(mid);
            at_mid[group_idx] = mid_share;
            pass.used = pass.used.saturating_add(group.times(mid_share));
            pass.steep |= upper_share - lower_share > 1;
            if !pass.add(
                group,
                lower_share,
                mid_share,
                upper_share,
                ends.plain_linear,
            ) {
                clamped.push(group_idx);
            }
        }
        live.truncate(n_live);
        pass
    }
}

/// The bisection interval's ends, and whether the end share buffers hold the
/// shares at these very ends (fresh) or at ends further out (stale).
#[derive(Clone, Copy)]
struct Ends {
    lower: f64,
    upper: f64,
    lower_fresh: bool,
    upper_fresh: bool,
    /// Plain groups are unclamped everywhere in the interval.
    plain_linear: bool,
}

/// Where the bisection starts and what is known there.
struct Start {
    lower: f64,
    upper: f64,
    /// Bisection steps left.
    steps: u32,
    /// The frozen groups' and ratio-independent inputs' part of `used`.
    frozen: u64,
    bounds: Bounds,
    /// Whether the end share buffers hold the shares at `lower` and `upper`
    /// (rather than at ends further out).
    fresh: bool,
    /// Plain groups are unclamped everywhere in the interval.
    plain_linear: bool,
}

impl Start {
    /// The start after a doubling that ended at `2^k`: Hadoop's first
    /// midpoint is `2^(k-1)`, known to fall short, so the bisection starts
    /// one step in.
    fn after_doubling(k: i32, frozen: u64, bounds: Bounds) -> Start {
        let upper = pow2(k);
        let (lower, steps) = if k > 0 {
            (upper / 2.0, ITERATIONS - 1)
        } else {
            (0.0, ITERATIONS)
        };
        Start {
            lower,
            upper,
            steps,
            frozen,
            bounds,
            fresh: true,
            plain_linear: false,
        }
    }
}

/// Which end buffer an evaluation fills.
#[derive(Clone, Copy)]
enum End {
    Lower,
    Upper,
}

/// What the bisection knows about `used` inside its current interval without
/// evaluating, as thresholds on the midpoint, and the linear groups' sums it
/// was built from.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    /// `used(mid) < target` for sure when `mid` is below this.
    below_under: f64,
    /// `used(mid) > target` for sure when `mid` is above this.
    above_over: f64,
    linear: Linear,
}

impl Bounds {
    /// Nothing known: every midpoint is evaluated.
    const NONE: Bounds = Bounds {
        below_under: f64::NEG_INFINITY,
        above_over: f64::INFINITY,
        linear: Linear {
            weight: 0.0,
            count: 0,
        },
    };

    /// The bounds for an interval in which everything but the `linear`
    /// groups adds up to between `least` and `most`.
    ///
    /// There `used(mid)` is at most `most + S` and at least `least + S -
    /// linear.count`, where `S`, the linear groups' sum before truncation, is
    /// within a relative `slack` of `mid * linear.weight`. Solving for `mid`
    /// gives the thresholds; `slack` also absorbs the division's rounding.
    /// With no linear group the divisions give infinities of the right sign,
    /// or NaN (deciding nothing) for 0 / 0.
    fn new(linear: Linear, least: u64, most: u64, target: u64, slack: f64) -> Bounds {
        if target >= EXACT_IN_F64 || most >= EXACT_IN_F64 || linear.count >= EXACT_IN_F64 {
            return Bounds::NONE;
        }
        let exact = |value: u64| value as i64 as f64;
        let room_below = exact(target) - exact(most);
        let room_above = exact(target) - exact(least) + exact(linear.count);
        Bounds {
            below_under: room_below / (linear.weight * (1.0 + slack)),
            above_over: room_above / (linear.weight * (1.0 - slack)),
            linear,
        }
    }
}

/// Sums over the groups unclamped across an interval (linear groups).
#[derive(Clone, Copy, Debug, Default)]
struct Linear {
    /// Σ count × weight.
    weight: f64,
    /// Σ count.
    count: u64,
}

impl Linear {
    /// Counts `group` if it is linear given its shares at the interval's ends
    /// (or further out), or if it is plain and `plain_linear` says plain
    /// groups are unclamped in the interval; says whether it counted it.
    #[inline]
    fn add(&mut self, group: &Group, at_lower: u64, at_upper: u64, plain_linear: bool) -> bool {
        // A clamped end would give exactly the truncated bound, so these ends
        // are unclamped, and so is everything between.
        let unclamped = at_lower > group.min_share && at_upper < group.max_share;
        if unclamped || (plain_linear && group.is_plain()) {
            self.weight += group.weight * group.count_f64();
            self.count = self.count.saturating_add(group.count);
            true
        } else {
            false
        }
    }
}

/// The sums an exact evaluation gathers besides `used`.
#[derive(Clone, Copy, Debug, Default)]
struct Pass {
    /// `used(mid)` over the live groups.
    used: u64,
    linear: Linear,
    /// Σ count × share over the other live groups, at the interval's lower
    /// end, at the midpoint and at the upper end.
    clamped: [u64; 3],
    /// Whether some live group's share rises by more than one across the
    /// interval.
    steep: bool,
}

impl Pass {
    /// Counts a live group in the linear or the clamped sums, given its
    /// shares at the interval's ends (or further out) and at the midpoint;
    /// says whether it was linear.
    #[inline]
    fn add(
        &mut self,
        group: &Group,
        at_lower: u64,
        at_mid: u64,
        at_upper: u64,
        plain_linear: bool,
    ) -> bool {
        if self.linear.add(group, at_lower, at_upper, plain_linear) {
            return true;
        }
        let clamped = &mut self.clamped;
        clamped[0] = clamped[0].saturating_add(group.times(at_lower));
        clamped[1] = clamped[1].saturating_add(group.times(at_mid));
        clamped[2] = clamped[2].saturating_add(group.times(at_upper));
        false
    }

    /// The bounds for the interval left once the midpoint became its lower
    /// end (`below`) or its upper end.
    fn bounds_after(&self, below: bool, frozen: u64, target: u64, slack: f64) -> Bounds {
        let [at_lower, at_mid, at_upper] = self.clamped;
        let (at_lower, at_upper) = if below {
            (at_mid, at_upper)
        } else {
            (at_lower, at_mid)
        };
        Bounds::new(
            self.linear,
            frozen.saturating_add(at_lower),
            frozen.saturating_add(at_upper),
            target,
            slack,
        )
    }
}

/// The last few live groups, with their shares at both ends of the interval,
/// copied out of the scratch so the remaining steps run without indexing.
/// Unused slots have a zero count and equal end shares: they add nothing.
struct Few {
    len: usize,
    groups: [Group; FEW],
    at_lower: [u64; FEW],
    at_upper: [u64; FEW],
    /// The frozen groups' and ratio-independent inputs' part of `used`.
    frozen: u64,
}

impl Few {
    fn gather(scratch: &ShareScratch, frozen: u64) -> Few {
        let empty = Group {
            weight: 1.0,
            min: 0.0,
            max: 0.0,
            min_share: 0,
            max_share: 0,
            count: 0,
        };
        let mut few = Few {
            len: scratch.live.len(),
            groups: [empty; FEW],
            at_lower: [0; FEW],
            at_upper: [0; FEW],
            frozen,
        };
        for (slot, &group_idx) in scratch.live.iter().enumerate() {
            few.groups[slot] = scratch.groups[group_idx];
            few.at_lower[slot] = scratch.at_lower[group_idx];
            few.at_upper[slot] = scratch.at_upper[group_idx];
        }
        few
    }

    /// The last `steps` steps of Hadoop's bisection over `[lower, upper]`;
    /// returns the final upper bound.
    fn bisect(mut self, mut lower: f64, mut upper: f64, steps: u32, target: u64) -> f64 {
        for step in 0..steps {
            let mut frozen = self.frozen;
            let mut varying = None;
            let mut n_varying = 0;
            for slot in 0..self.len {
                if self.at_lower[slot] == self.at_upper[slot] {
                    frozen = frozen.saturating_add(self.groups[slot].times(self.at_lower[slot]));
                } else {
                    varying = Some(&self.groups[slot]);
                    n_varying += 1;
                }
            }
            if n_varying <= 1
                && let Some(crossing) = Crossing::find(varying, frozen, target)
            {
                return crossing.bisect(lower, upper, steps - step);
            }
            let mid = (lower + upper) / 2.0;
            let mut at_mid = [0; FEW];
            let mut used = self.frozen;
            for (share, group) in at_mid.iter_mut().zip(&self.groups[..self.len]) {
                *share = group.share_at(mid);
                used = used.saturating_add(group.times(*share));
            }
            let used = used.min(LONG_MAX);
            if used == target {
                return mid;
            }
            if used < target {
                lower = mid;
                self.at_lower = at_mid;
            } else {
                upper = mid;
                self.at_upper = at_mid;
            }
        }
        upper
    }
}

/// Where `used` reaches and passes the target when at most one group's share
/// varies: `used(R) < target` exactly when `R < reach`, and `used(R) ==
/// target` exactly when `reach <= R < pass`.
#[derive(Clone, Copy, Debug)]
struct Crossing {
    reach: f64,
    pass: f64,
}

impl Crossing {
    /// The crossing for `used(R) = constant + count × share(R)` (or just
    /// `constant`); `None` when the numbers are too large to be exact.
    fn find(group: Option<&Group>, constant: u64, target: u64) -> Option<Crossing> {
        if target >= EXACT_IN_F64 {
            return None;
        }
        let Some(group) = group else {
            let (reach, pass) = if constant < target {
                (f64::INFINITY, f64::INFINITY)
            } else if constant == target {
                (0.0, f64::INFINITY)
            } else {
                (0.0, 0.0)
            };
            return Some(Crossing { reach, pass });
        };
        if constant > target {
            return Some(Crossing {
                reach: 0.0,
                pass: 0.0,
            });
        }
        // used(R) >= target exactly when the share reaches `needed`; it
        // equals target only if `count` divides the rest, while the share
        // is exactly `needed`.
        let rest = target - constant;
        let needed = rest.div_ceil(group.count);
        let reach = group.threshold(needed)?;
        let pass = if rest.is_multiple_of(group.count) {
            group.threshold(needed + 1)?
        } else {
            reach
        };
        Some(Crossing { reach, pass })
    }

    /// Hadoop's whole search, doubling included, for a single group.
    fn search(self) -> f64 {
        if self.reach.is_infinite() {
            // used never reaches the target: Hadoop would double forever.
            return f64::INFINITY;
        }
        // The doubling stops at the first power of two at or above `reach`.
        let k = if self.reach <= 1.0 {
            0
        } else {
            ceil_log2(self.reach)
        };
        if k > LAST_DOUBLING {
            return self.bisect(0.0, pow2(k), ITERATIONS);
        }
        self.bisect_from_zero(k)
    }

    /// `self.bisect(0.0, 2^k, ITERATIONS)`, worked out instead of stepped.
    ///
    /// Every midpoint over `[0, 2^k]` is `j × h` for `h = 2^(k - ITERATIONS)`
    /// and some `0 < j < 2^ITERATIONS`, exact in a double (sums and halvings
    /// of such numbers need 26 significant bits at most); `j × h` can be
    /// visited at step `ITERATIONS - tz(j)` (`tz`: trailing zeros) and no
    /// other. While `reach > 0` the interval keeps `lower < reach <= upper`,
    /// so the midpoints visited are the binary search for `reach`, and when
    /// some `j × h` lies in `[reach, pass)` the first one visited there is
    /// the one with the most trailing zeros: any earlier midpoint has more,
    /// so lies outside, and at its step the interval's midpoint is it (the
    /// ends, visited earlier or the outer ends, are outside it or beyond).
    /// The one with the most trailing zeros in `[lo, hi]` is `hi` with the
    /// bits below the highest bit where `lo - 1` and `hi` differ cleared. With
    /// `reach == 0` every midpoint is reached, and the same holds with `lo
    /// = 1`. Without such a `j`, the bisection ends with `upper = lo × h`,
    /// the first multiple of `h` at or above `reach` (and above 0).
    fn bisect_from_zero(self, k: i32) -> f64 {
        const GRID: u64 = 1 << ITERATIONS;
        let h = f64::from_bits(((k - ITERATIONS as i32 + 1023) as u64) << 52);
        // Scaling by a power of two is exact here: reach <= 2^k, and any
        // quotient that is not an integer is below 2^ITERATIONS.
        let lo = ceil_below_grid(self.reach / h).max(1);
        let scaled_pass = self.pass / h;
        let hi = if scaled_pass >= GRID as f64 {
            GRID - 1
        } else {
            // The largest j with j × h < pass; none when pass is 0.
            match ceil_below_grid(scaled_pass).checked_sub(1) {
                Some(hi) => hi,
                None => return lo as f64 * h,
            }
        };
        if lo > hi {
            return lo as f64 * h;
        }
        // Above the highest bit where lo - 1 and hi differ they agree, and
        // there hi has a one: keeping hi's bits from there up gives a
        // number above lo - 1, and clearing one more bit would not.
        let highest_difference = 63 - ((lo - 1) ^ hi).leading_zeros();
        let j = (hi >> highest_difference) << highest_difference;
        j as f64 * h
    }

    /// The last `steps` steps of Hadoop's bisection over `[lower, upper]`;
    /// returns the final upper bound.
    fn bisect(self, mut lower: f64, mut upper: f64, steps: u32) -> f64 {
        for _ in 0..steps {
            let mid = (lower + upper) / 2.0;
            let reached = mid >= self.reach;
            if reached && mid < self.pass {
                return mid;
            }
            lower = if reached { lower } else { mid };
            upper = if reached { mid } else { upper };
        }
        upper
    }
}

/// The bounds' relative slack for `n_groups` groups: the products, the sum
/// of weights and the bounds' own arithmetic err by at most `n_groups + 5`
/// units in the last place (`f64::EPSILON / 2` each); this is eight times that.
fn slack(n_groups: usize) -> f64 {
    (n_groups as f64 + 8.0) * f64::EPSILON * 4.0
}

/// `2^k` exactly, for `0 <= k <= LAST_DOUBLING`.
fn pow2(k: i32) -> f64 {
    debug_assert!((0..=LAST_DOUBLING).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `ceil(log2(x))` for a finite `x > 1`, from the bits: exact, no libm.
fn ceil_log2(x: f64) -> i32 {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let is_power_of_two = bits & ((1 << 52) - 1) == 0;
    if is_power_of_two {
        exponent
    } else {
        exponent + 1
    }
}

/// `ceil(x)` for `0 <= x <= 2^ITERATIONS`, in integers (exact: `x` is far
/// below `2^53`).
fn ceil_below_grid(x: f64) -> u64 {
    let floor = x as u64;
    if (floor as f64) < x { floor + 1 } else { floor }
}

/// The next double above a positive finite `x`.
fn next_up(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

/// The next double below a positive finite `x`.
fn next_down(x: f64) -> f64 {
    f64::from_bits(x.to_bits() - 1)
}

/// Java's `(long)` cast of a non-negative double: truncation, saturating at
/// `Long.MAX_VALUE`.
fn truncate(value: f64) -> u64 {
    value as i64 as u64
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Crossing, ITERATIONS, LAST_DOUBLING, ceil_log2, next_down, next_up, pow2};

    /// Ratios near the bisection's grid for `k`: multiples of its spacing,
    /// a double either side, anything, and the ends.
    fn near_grid(k: i32) -> impl Strategy<Value = f64> {
        let h = pow2(k) / f64::from(1_u32 << ITERATIONS);
        prop_oneof![
            2 => (0_u64..=(1 << ITERATIONS)).prop_map(move |j| j as f64 * h),
            1 => (1_u64..=(1 << ITERATIONS)).prop_map(move |j| next_down(j as f64 * h)),
            1 => (0_u64..(1 << ITERATIONS)).prop_map(move |j| next_up(j as f64 * h)),
            1 => (0.0..=1.0_f64).prop_map(move |x| x * pow2(k)),
            1 => prop::sample::select(vec![
                0.0,
                next_down(h),
                h,
                next_up(h),
                next_down(pow2(k) - h),
                pow2(k) - h,
                next_up(pow2(k) - h),
                next_down(pow2(k)),
                pow2(k),
            ]),
        ]
    }

    fn crossing() -> impl Strategy<Value = Crossing> {
        (0_i32..=LAST_DOUBLING, 0_u8..4)
            .prop_flat_map(|(k, shape)| (near_grid(k), near_grid(k), Just(shape)))
            .prop_map(|(a, b, shape)| {
                let (reach, pass) = (a.min(b), a.max(b));
                match shape {
                    0 => Crossing { reach, pass: reach },
                    1 => Crossing {
                        reach,
                        pass: f64::INFINITY,
                    },
                    2 => Crossing { reach: 0.0, pass },
                    _ => Crossing { reach, pass },
                }
            })
    }

    /// Cases an earlier, wrong working-out got wrong: the first midpoint
    /// itself in range, nothing in range, and the grid's first point.
    #[test]
    fn bisection_from_zero_at_the_edges() {
        let h = pow2(0) / f64::from(1_u32 << ITERATIONS);
        for (reach, pass) in [
            (0.5, f64::INFINITY),
            (0.0, f64::INFINITY),
            (0.0, 0.0),
            (h, h),
            (0.25, 0.75),
        ] {
            let crossing = Crossing { reach, pass };
            assert_eq!(
                crossing.bisect_from_zero(0).to_bits(),
                crossing.bisect(0.0, 1.0, ITERATIONS).to_bits(),
                "{crossing:?}"
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5_000))]

        /// The worked-out bisection from zero ends where stepping does.
        #[test]
        fn bisection_from_zero_is_worked_out_exactly(crossing in crossing()) {
            let k = if crossing.reach <= 1.0 { 0 } else { ceil_log2(crossing.reach) };
            let stepped = crossing.bisect(0.0, pow2(k), ITERATIONS);
            let worked_out = crossing.bisect_from_zero(k);
            prop_assert_eq!(stepped.to_bits(), worked_out.to_bits(), "{:?} k {}", crossing, k);
        }
    }
}
