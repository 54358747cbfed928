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

use std::collections::BTreeSet;

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
/// The comparator's fields are encoded once, as integers whose unsigned
/// order is the fields' order (floats through their order-preserving bit
/// pattern, NaN and -0.0 first mapped to 0.0), so comparing two keys is a
/// handful of integer compares: keys are compared far more often than built.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OrderKey {
    /// [class, ratio, weight class, shares...]: the policy-specific part.
    words: [u64; 3 + N_RESOURCE_TYPES],
    start: u64,
    /// The name tie-breaker, high word first (two words keep the key 8-aligned).
    tie: [u64; 2],
    pub(crate) member: u32,
}

impl PartialEq for OrderKey {
    #[inline]
    fn eq(&self, other: &OrderKey) -> bool {
        // The member decides almost every comparison of unequal keys.
        self.member == other.member
            && self.words == other.words
            && self.start == other.start
            && self.tie == other.tie
    }
}

impl Eq for OrderKey {}

impl Ord for OrderKey {
    /// Field by field, first difference wins, written out so that it compiles
    /// to straight-line integer compares (the walk's scans make this the
    /// hottest comparison in Weft).
    #[inline]
    fn cmp(&self, other: &OrderKey) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let mut i = 0;
        while i < self.words.len() {
            let (a, b) = (self.words[i], other.words[i]);
            if a != b {
                return if a < b {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
            }
            i += 1;
        }
        if self.start != other.start {
            return self.start.cmp(&other.start);
        }
        if self.tie[0] != other.tie[0] {
            return self.tie[0].cmp(&other.tie[0]);
        }
        if self.tie[1] != other.tie[1] {
            return self.tie[1].cmp(&other.tie[1]);
        }
        self.member.cmp(&other.member)
    }
}

impl PartialOrd for OrderKey {
    #[inline]
    fn partial_cmp(&self, other: &OrderKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A float as an unsigned integer with the same order (after `canon`).
fn ordered_bits(x: f64) -> u64 {
    let bits = canon(x).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

impl OrderKey {
    fn from_parts(
        class: u8,
        ratio: f64,
        weight_class: u8,
        shares: [f64; N_RESOURCE_TYPES],
        start: u64,
        tie: u128,
        member: u32,
    ) -> OrderKey {
        let mut words = [0u64; 3 + N_RESOURCE_TYPES];
        words[0] = u64::from(class);
        words[1] = ordered_bits(ratio);
        words[2] = u64::from(weight_class);
        for (w, s) in words[3..].iter_mut().zip(shares) {
            *w = ordered_bits(s);
        }
        OrderKey {
            words,
            start,
            tie: [(tie >> 64) as u64, tie as u64],
            member,
        }
    }
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
    OrderKey::from_parts(
        demand_zero * 2 + u8::from(!needy),
        ratio,
        weight_class,
        shares,
        m.start.as_millis(),
        m.tie,
        m.member,
    )
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
    let by_dominance = dominance_order(&usage_ratio);
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
    OrderKey::from_parts(
        u8::from(!needy),
        0.0,
        0,
        shares,
        m.start.as_millis(),
        m.tie,
        m.member,
    )
}

/// Resource indices by descending usage ratio; on a tie the earlier type
/// (memory) first, as in Hadoop's two-resource comparator.
fn dominance_order(usage_ratio: &[f64; N_RESOURCE_TYPES]) -> [usize; N_RESOURCE_TYPES] {
    let mut order: [usize; N_RESOURCE_TYPES] = std::array::from_fn(|i| i);
    if N_RESOURCE_TYPES == 2 {
        // The common case, without a general sort on the hot path.
        if usage_ratio[1] > usage_ratio[0] {
            order.swap(0, 1);
        }
    } else {
        order.sort_by(|a, b| usage_ratio[*b].total_cmp(&usage_ratio[*a]).then(a.cmp(b)));
    }
    order
}

/// Hadoop's FIFO comparator: higher app priority first, then earlier start, then name.
fn fifo_key(m: &KeyInputs) -> OrderKey {
    OrderKey::from_parts(
        0,
        -f64::from(m.priority),
        0,
        [0.0; N_RESOURCE_TYPES],
        m.start.as_millis(),
        m.tie,
        m.member,
    )
}

/// A queue's members with work, iterated in key order.
///
/// Most sets are small (a parent's children, a leaf's apps), and the walk
/// usually needs only their first member, while every allocation and
/// completion re-keys one member of each set on its path. For small sets an
/// unsorted vector wins: re-keying overwrites one slot, and the walk finds
/// the smallest key with one linear scan (each further member it needs costs
/// another scan, which only happens when apps pass over a node). Past
/// `SMALL_MAX` members scans would cost too much, so the set becomes a
/// `BTreeSet`.
#[derive(Clone, Debug)]
pub(crate) enum OrderSet {
    Small(Vec<OrderKey>),
    Large(BTreeSet<OrderKey>),
}

/// Members past which a set is kept in a B-tree.
const SMALL_MAX: usize = 64;

impl Default for OrderSet {
    fn default() -> OrderSet {
        OrderSet::Small(Vec::new())
    }
}

impl OrderSet {
    pub(crate) fn len(&self) -> usize {
        match self {
            OrderSet::Small(v) => v.len(),
            OrderSet::Large(b) => b.len(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn insert(&mut self, key: OrderKey) {
        match self {
            OrderSet::Small(v) => {
                v.push(key);
                if v.len() > SMALL_MAX {
                    *self = OrderSet::Large(std::mem::take(v).into_iter().collect());
                }
            }
            OrderSet::Large(b) => {
                b.insert(key);
            }
        }
    }

    pub(crate) fn remove(&mut self, key: &OrderKey) {
        match self {
            OrderSet::Small(v) => {
                if let Some(pos) = v.iter().position(|k| k.member == key.member && k == key) {
                    v.swap_remove(pos);
                }
            }
            OrderSet::Large(b) => {
                b.remove(key);
                if b.len() < SMALL_MAX / 2 {
                    *self = OrderSet::Small(std::mem::take(b).into_iter().collect());
                }
            }
        }
    }

    /// Replaces `old` by `new` (a member's key changed).
    pub(crate) fn replace(&mut self, old: &OrderKey, new: OrderKey) {
        match self {
            OrderSet::Small(v) => {
                match v.iter_mut().find(|k| k.member == old.member && *k == old) {
                    Some(slot) => *slot = new,
                    None => debug_assert!(false, "replacing a key that is not in the set"),
                }
            }
            OrderSet::Large(b) => {
                b.remove(old);
                b.insert(new);
            }
        }
    }

    /// The members in key order.
    pub(crate) fn iter(&self) -> OrderIter<'_> {
        match self {
            OrderSet::Small(v) => OrderIter::Small {
                keys: v,
                last: None,
            },
            OrderSet::Large(b) => OrderIter::Large(b.iter()),
        }
    }
}

/// Iteration in key order over either representation.
pub(crate) enum OrderIter<'a> {
    /// Selection: each step scans for the smallest key above the last one.
    Small {
        keys: &'a [OrderKey],
        last: Option<&'a OrderKey>,
    },
    Large(std::collections::btree_set::Iter<'a, OrderKey>),
}

impl<'a> Iterator for OrderIter<'a> {
    type Item = &'a OrderKey;

    fn next(&mut self) -> Option<&'a OrderKey> {
        match self {
            OrderIter::Small { keys, last } => {
                let best = match *last {
                    // The common case, the first member: a plain minimum.
                    None => keys.iter().min(),
                    Some(l) => keys.iter().filter(|k| *k > l).min(),
                };
                *last = best;
                best
            }
            OrderIter::Large(i) => i.next(),
        }
    }
}

impl<'a> IntoIterator for &'a OrderSet {
    type Item = &'a OrderKey;
    type IntoIter = OrderIter<'a>;

    fn into_iter(self) -> OrderIter<'a> {
        self.iter()
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

    #[test]
    fn order_set_moves_keys_and_switches_representation() {
        use proptest::prelude::*;
        proptest!(|(values in prop::collection::vec(0u32..1000, 1..150), moves in prop::collection::vec((any::<prop::sample::Index>(), 0u32..1000), 0..200))| {
            let key = |v: u32, member: u32| OrderKey::from_parts(0, f64::from(v), 0, [0.0; N_RESOURCE_TYPES], 0, 0, member);
            let mut set = OrderSet::default();
            let mut model = BTreeSet::new();
            let mut current: Vec<OrderKey> = Vec::new();
            for (member, v) in values.iter().enumerate() {
                let k = key(*v, member as u32);
                set.insert(k);
                model.insert(k);
                current.push(k);
            }
            for (idx, v) in moves {
                let i = idx.index(current.len());
                let old = current[i];
                let new = key(v, old.member);
                set.replace(&old, new);
                model.remove(&old);
                model.insert(new);
                current[i] = new;
                prop_assert_eq!(set.iter().copied().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
            }
            for k in current.iter().take(current.len() / 2 + 1) {
                set.remove(k);
                model.remove(k);
            }
            prop_assert_eq!(set.len(), model.len());
            prop_assert_eq!(set.iter().copied().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
        });
    }
}
