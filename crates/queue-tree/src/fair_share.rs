//! Hadoop ComputeFairShares: splitting a total among weighted schedulables with min and max shares.
//!
//! Interim straightforward version; replaced by the optimised one from the fair-share branch.

/// One schedulable's inputs for one resource type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareInput {
    /// Weight (Hadoop stores `float`).
    pub weight: f32,
    /// Min share of this type.
    pub min_share: u64,
    /// Max share of this type (`u64::MAX` is unbounded).
    pub max_share: u64,
    /// False for a queue with no runnable apps (instantaneous shares only).
    pub active: bool,
}

/// Which share is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareKind {
    /// Active schedulables only.
    Instantaneous,
    /// Every configured queue.
    Steady,
}

/// Computes the shares of `total` for `inputs` into `out`.
pub fn compute_shares(inputs: &[ShareInput], total: u64, kind: ShareKind, out: &mut [u64]) {
    let mut taken: u64 = 0;
    let mut rest = Vec::new();
    for (i, s) in inputs.iter().enumerate() {
        let fixed = if s.max_share == 0 || (kind == ShareKind::Instantaneous && !s.active) {
            Some(0)
        } else if s.weight <= 0.0 {
            Some(s.min_share)
        } else {
            None
        };
        match fixed {
            Some(v) => {
                out[i] = v;
                taken = taken.saturating_add(v);
            }
            None => rest.push(i),
        }
    }
    if rest.is_empty() {
        return;
    }
    let max_sum = rest
        .iter()
        .fold(0u64, |acc, i| acc.saturating_add(inputs[*i].max_share));
    let total = max_sum.min(total.saturating_sub(taken));
    let share = |i: usize, r: f64| -> u64 {
        let s = &inputs[i];
        let x = (f64::from(s.weight) * r)
            .max(s.min_share as f64)
            .min(s.max_share as f64);
        x as u64
    };
    let used = |r: f64| -> u64 {
        rest.iter()
            .fold(0u64, |acc, i| acc.saturating_add(share(*i, r)))
    };
    let mut right = 1.0;
    while used(right) < total {
        right *= 2.0;
    }
    let mut left = 0.0;
    for _ in 0..25 {
        let mid = (left + right) / 2.0;
        let u = used(mid);
        if u == total {
            right = mid;
            break;
        } else if u < total {
            left = mid;
        } else {
            right = mid;
        }
    }
    for i in rest {
        out[i] = share(i, right);
    }
}
