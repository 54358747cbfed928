//! The policies' comparators as sort keys: `OrderKey` values whose natural
//! order is exactly Hadoop's `FairShareComparator`, DRF comparator and FIFO
//! comparator, so each queue can keep its members in an ordered set and
//! re-key one member when its usage changes instead of re-sorting.
//!
//! Why keys and not comparators: every Hadoop comparator here compares
//! per-member quantities (usage, demand, min share, weight, start time, name)
//! field by field, never a quantity of the pair, so it factors into a key.
//! That turns the per-assignment sort of Hadoop's tree walk into O(log n)
//! updates along one path (see ARCHITECTURE.md, "Incremental ordering").
//! Which members are in a set, and when keys are refreshed, is the tree's
//! business.

use std::cmp::Ordering;

use weft_model::{N_RESOURCE_TYPES, Resource, ResourceType, Time};

use crate::policy::Policy;

/// What a policy needs to know about a member (queue or app) to place it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyInputs {
    pub(crate) usage: Resource,
    /// Demand as of the last update.
    pub(crate) demand: Resource,
    pub(crate) min_share: Resource,
    pub(crate) weight: f32,
    pub(crate) start: Time,
    /// App priority for FIFO (a larger number goes first); 0 for queues.
    pub(crate) priority: i32,
    /// The last tie-breaker: the name's order among the set's members.
    pub(crate) tie: u128,
    /// Index of the member, making the key unique.
    pub(crate) member: u32,
}

/// A member's position in its parent's ordered set; smaller is served first.
///
/// Invariant: no field is NaN or negative zero, so the derived-by-hand total
/// order agrees with the policy comparator it encodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct OrderKey {
    class: u8,
    ratio: f64,
    weight_class: u8,
    shares: [f64; N_RESOURCE_TYPES],
    start: u64,
    tie: u128,
    pub(crate) member: u32,
}

impl Eq for OrderKey {}

impl Ord for OrderKey {
    fn cmp(&self, other: &OrderKey) -> Ordering {
        self.class
            .cmp(&other.class)
            .then_with(|| self.ratio.total_cmp(&other.ratio))
            .then_with(|| self.weight_class.cmp(&other.weight_class))
            .then_with(|| cmp_f64_slices(&self.shares, &other.shares))
            .then_with(|| self.start.cmp(&other.start))
            .then_with(|| self.tie.cmp(&other.tie))
            .then_with(|| self.member.cmp(&other.member))
    }
}

impl PartialOrd for OrderKey {
    fn partial_cmp(&self, other: &OrderKey) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn cmp_f64_slices(a: &[f64], b: &[f64]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.total_cmp(y) {
            Ordering::Equal => continue,
            other => return other,
        }
    }
    Ordering::Equal
}

/// Maps NaN to 0 and -0.0 to 0.0 so `total_cmp` behaves like Hadoop's
/// `Math.signum(a - b)` on the values that matter.
fn canon(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x + 0.0 }
}

impl OrderKey {
    /// The key of a member under `policy`, given the cluster's size (DRF needs it).
    pub(crate) fn new(policy: Policy, m: &KeyInputs, cluster: &Resource) -> OrderKey {
        match policy {
            Policy::Fair => fair_key(m),
            Policy::Drf => drf_key(m, cluster),
            Policy::Fifo => fifo_key(m),
        }
    }
}

/// Hadoop's `FairShareComparator`: members with no memory demand last; then
/// members below min(min share, demand) first, by usage / that min; then
/// usage / weight (a zero weight after any positive weight); then start
/// time; then name. Memory only.
fn fair_key(m: &KeyInputs) -> OrderKey {
    let usage = m.usage.memory_mb() as f64;
    let demand = m.demand.memory_mb();
    let demand_zero = u8::from(demand == 0);
    let effective_min = m.min_share.memory_mb().min(demand);
    let needy = m.usage.memory_mb() < effective_min;
    let ratio = if needy {
        usage / (effective_min.max(1) as f64)
    } else {
        0.0
    };
    let weight = f64::from(m.weight);
    let (weight_class, use_ratio) = if weight > 0.0 {
        (0, usage / weight)
    } else {
        (1, usage)
    };
    let mut shares = [0.0; N_RESOURCE_TYPES];
    shares[0] = canon(use_ratio);
    OrderKey {
        class: demand_zero * 2 + u8::from(!needy),
        ratio: canon(ratio),
        weight_class,
        shares,
        start: m.start.as_millis(),
        tie: m.tie,
        member: m.member,
    }
}

/// Hadoop's DRF comparator: members whose dominant resource is below their
/// min share of it first, by usage / min share of each resource in dominance
/// order; otherwise by usage / cluster / weight of each resource in dominance
/// order (dominant first); then start time; then name.
fn drf_key(m: &KeyInputs, cluster: &Resource) -> OrderKey {
    let weight = f64::from(m.weight);
    let mut usage_ratio = [0.0; N_RESOURCE_TYPES];
    for ty in ResourceType::ALL {
        usage_ratio[ty.index()] = canon(m.usage.get(ty) as f64 / cluster.get(ty) as f64);
    }
    // Dominance order: larger usage ratio first; on a tie the earlier type
    // (memory) is dominant, as in Hadoop's two-resource comparator.
    let mut by_dominance: [usize; N_RESOURCE_TYPES] = std::array::from_fn(|i| i);
    by_dominance.sort_by(|a, b| usage_ratio[*b].total_cmp(&usage_ratio[*a]).then(a.cmp(b)));
    let dominant = ResourceType::ALL[by_dominance[0]];
    let needy = m.usage.get(dominant) < m.min_share.get(dominant);
    let mut shares = [0.0; N_RESOURCE_TYPES];
    for (slot, idx) in shares.iter_mut().zip(by_dominance) {
        let ty = ResourceType::ALL[idx];
        *slot = if needy {
            canon(m.usage.get(ty) as f64 / m.min_share.get(ty) as f64)
        } else {
            canon(usage_ratio[idx] / weight)
        };
    }
    OrderKey {
        class: u8::from(!needy),
        ratio: 0.0,
        weight_class: 0,
        shares,
        start: m.start.as_millis(),
        tie: m.tie,
        member: m.member,
    }
}

/// Hadoop's FIFO comparator: higher app priority first, then earlier start, then name.
fn fifo_key(m: &KeyInputs) -> OrderKey {
    OrderKey {
        class: 0,
        ratio: canon(-f64::from(m.priority)),
        weight_class: 0,
        shares: [0.0; N_RESOURCE_TYPES],
        start: m.start.as_millis(),
        tie: m.tie,
        member: m.member,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(
        usage: (u64, u64),
        demand: (u64, u64),
        min: (u64, u64),
        weight: f32,
        start: u64,
        member: u32,
    ) -> KeyInputs {
        KeyInputs {
            usage: Resource::new(usage.0, usage.1),
            demand: Resource::new(demand.0, demand.1),
            min_share: Resource::new(min.0, min.1),
            weight,
            start: Time::from_millis(start),
            priority: 0,
            tie: u128::from(member),
            member,
        }
    }

    fn order(policy: Policy, members: &[KeyInputs]) -> Vec<u32> {
        let cluster = Resource::new(100_000, 100);
        let mut keys: Vec<OrderKey> = members
            .iter()
            .map(|x| OrderKey::new(policy, x, &cluster))
            .collect();
        keys.sort();
        keys.iter().map(|k| k.member).collect()
    }

    #[test]
    fn fair_zero_demand_goes_last() {
        let a = m((0, 0), (0, 0), (0, 0), 1.0, 0, 0);
        let b = m((5000, 5), (6000, 6), (0, 0), 1.0, 0, 1);
        assert_eq!(order(Policy::Fair, &[a, b]), [1, 0]);
    }

    #[test]
    fn fair_needy_first_then_by_min_share_ratio() {
        // Both needy: 1000/2000 = 0.5 against 1000/4000 = 0.25.
        let a = m((1000, 1), (10_000, 1), (2000, 0), 1.0, 0, 0);
        let b = m((1000, 1), (10_000, 1), (4000, 0), 1.0, 0, 1);
        // Not needy (min 0) with tiny usage still goes after the needy ones.
        let c = m((0, 0), (10_000, 1), (0, 0), 1.0, 0, 2);
        assert_eq!(order(Policy::Fair, &[a, b, c]), [1, 0, 2]);
        // The min share is capped by demand: demand 500 < usage 1000 means not needy.
        let d = m((1000, 1), (500, 1), (4000, 0), 1.0, 0, 3);
        assert_eq!(order(Policy::Fair, &[d, c]), [2, 3]);
    }

    #[test]
    fn fair_usage_over_weight_and_zero_weights() {
        let a = m((4000, 0), (9000, 0), (0, 0), 2.0, 0, 0); // 2000 per weight
        let b = m((3000, 0), (9000, 0), (0, 0), 1.0, 0, 1); // 3000 per weight
        let zero_small = m((0, 0), (9000, 0), (0, 0), 0.0, 0, 2);
        let zero_big = m((10, 0), (9000, 0), (0, 0), 0.0, 0, 3);
        assert_eq!(
            order(Policy::Fair, &[zero_big, b, zero_small, a]),
            [0, 1, 2, 3]
        );
    }

    #[test]
    fn fair_ties_break_on_start_then_name() {
        let a = m((0, 0), (1, 0), (0, 0), 1.0, 20, 0);
        let b = m((0, 0), (1, 0), (0, 0), 1.0, 10, 1);
        let mut c = m((0, 0), (1, 0), (0, 0), 1.0, 10, 2);
        c.tie = 0;
        assert_eq!(order(Policy::Fair, &[a, b, c]), [2, 1, 0]);
    }

    #[test]
    fn drf_orders_by_dominant_share() {
        // Cluster 100000 MB / 100 vcores. a: mem 0.3, cpu 0.1 -> dominant 0.3.
        // b: mem 0.1, cpu 0.2 -> dominant 0.2.
        let a = m((30_000, 10), (1, 1), (0, 0), 1.0, 0, 0);
        let b = m((10_000, 20), (1, 1), (0, 0), 1.0, 0, 1);
        assert_eq!(order(Policy::Drf, &[a, b]), [1, 0]);
        // Weight 2 halves a's ratio to 0.15.
        let a2 = KeyInputs { weight: 2.0, ..a };
        assert_eq!(order(Policy::Drf, &[a2, b]), [0, 1]);
        // Equal dominant shares: the other resource decides.
        let c = m((20_000, 5), (1, 1), (0, 0), 1.0, 0, 2);
        let d = m((20_000, 15), (1, 1), (0, 0), 1.0, 0, 3);
        assert_eq!(order(Policy::Drf, &[d, c]), [2, 3]);
    }

    #[test]
    fn drf_needy_first() {
        let rich = m((1000, 1), (1, 1), (0, 0), 1.0, 0, 0);
        let needy = m((50_000, 10), (1, 1), (60_000, 0), 1.0, 0, 1);
        assert_eq!(order(Policy::Drf, &[rich, needy]), [1, 0]);
        // Zero weight makes the ratio infinite: served after any positive weight.
        let zero = KeyInputs {
            weight: 0.0,
            ..m((1, 1), (1, 1), (0, 0), 1.0, 0, 2)
        };
        assert_eq!(order(Policy::Drf, &[zero, rich]), [0, 2]);
    }

    #[test]
    fn fifo_priority_then_start() {
        let mut a = m((0, 0), (0, 0), (0, 0), 1.0, 5, 0);
        let b = m((99, 0), (0, 0), (0, 0), 1.0, 1, 1);
        assert_eq!(order(Policy::Fifo, &[a, b]), [1, 0]);
        a.priority = 3;
        assert_eq!(order(Policy::Fifo, &[a, b]), [0, 1]);
    }
}
