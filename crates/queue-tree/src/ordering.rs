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
/// order is the fields' order, so comparing two keys is a handful of integer
/// compares: keys are compared far more often than built. The policy's part
/// is packed into `POLICY_WORDS` words (see `fair_key` and `drf_key` for how
/// each comparator fits), so that ties, common among members with equal
/// usage, reach the start time and name after few compares.
#[derive(Clone, Copy, Debug, Eq)]
pub(crate) struct OrderKey {
    /// [policy words..., start time, name tie-breaker high, low], compared in order.
    words: [u64; POLICY_WORDS + 3],
    pub(crate) member: u32,
    /// Not part of the key: where an `OrderSet` keeps the key's slot in its
    /// ring. It rides in the key's padding so that re-keying a member finds
    /// its place on the cache line it reads the old key from.
    ring_pos: u32,
}

/// Words of a key that encode the policy's comparator: two for `fair`
/// (class with the min-share ratio, then weight class with usage / weight),
/// one per resource type for `drf` (the class rides in the first).
const POLICY_WORDS: usize = if N_RESOURCE_TYPES > 2 {
    N_RESOURCE_TYPES
} else {
    2
};

impl PartialEq for OrderKey {
    /// Written out: a derived comparison of the word array calls `memcmp`.
    #[inline]
    fn eq(&self, other: &OrderKey) -> bool {
        let mut i = 0;
        while i < self.words.len() {
            if self.words[i] != other.words[i] {
                return false;
            }
            i += 1;
        }
        self.member == other.member
    }
}

impl Ord for OrderKey {
    /// Word by word, first difference wins, written out so that it compiles
    /// to straight-line integer compares (re-keying's binary searches make
    /// this the hottest comparison in Weft).
    #[inline]
    fn cmp(&self, other: &OrderKey) -> std::cmp::Ordering {
        let mut i = 0;
        while i < self.words.len() {
            let (a, b) = (self.words[i], other.words[i]);
            if a != b {
                return if a < b {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Greater
                };
            }
            i += 1;
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

/// A float that is never negative, as an unsigned integer with the same
/// order, in the low 63 bits (the top bit is left for a class). NaN counts
/// as 0, as `canon` has it; every value encoded here is a quotient of
/// non-negative quantities (usage, minimums, cluster size, weights, which
/// the allocation file keeps non-negative), so nothing negative arrives,
/// and -0.0 and anything below 0 would count as 0 too.
fn nonneg_bits(x: f64) -> u64 {
    if x > 0.0 { x.to_bits() } else { 0 }
}

const TOP: u64 = 1 << 63;

impl OrderKey {
    fn from_parts(policy: [u64; POLICY_WORDS], start: u64, tie: u128, member: u32) -> OrderKey {
        let mut words = [0u64; POLICY_WORDS + 3];
        words[..POLICY_WORDS].copy_from_slice(&policy);
        words[POLICY_WORDS] = start;
        words[POLICY_WORDS + 1] = (tie >> 64) as u64;
        words[POLICY_WORDS + 2] = tie as u64;
        OrderKey {
            words,
            member,
            ring_pos: 0,
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
    #[inline]
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
///
/// Two words: (no demand, needy ratio or "not needy") and (zero weight,
/// usage / weight). A needy member's ratio is usage / min with usage below
/// the min, so at most 1.0, whose bits are below 2^62; "not needy" is 2^62,
/// after every needy ratio, as Hadoop puts needy members first.
#[inline]
fn fair_key(m: &KeyInputs) -> OrderKey {
    let usage = m.usage.memory_mb() as f64;
    let demand = m.demand.memory_mb();
    let effective_min = m.min_share.memory_mb().min(demand);
    let needy = m.usage.memory_mb() < effective_min;
    let need = if needy {
        nonneg_bits(usage / (effective_min.max(1) as f64))
    } else {
        1 << 62
    };
    let weight = f64::from(m.weight);
    let (zero_weight, use_ratio) = if weight == 1.0 {
        // As in `drf_key`: the same bits without the division.
        (0, usage)
    } else if weight > 0.0 {
        (0, usage / weight)
    } else {
        (TOP, usage)
    };
    let mut policy = [0; POLICY_WORDS];
    policy[0] = if demand == 0 { TOP } else { 0 } | need;
    policy[1] = zero_weight | nonneg_bits(use_ratio);
    OrderKey::from_parts(policy, m.start.as_millis(), m.tie, m.member)
}

/// Hadoop's DRF comparator: members whose dominant resource is below their
/// min share of it first, by usage / min share of each resource in dominance
/// order; otherwise by usage / cluster / weight of each resource in dominance
/// order (dominant first); then start time; then name.
///
/// One word per resource type, the "not needy" class in the first word's top bit.
#[inline]
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
    let mut policy = [0; POLICY_WORDS];
    for (slot, idx) in policy.iter_mut().zip(by_dominance) {
        let ty = ResourceType::ALL[idx];
        *slot = nonneg_bits(if needy {
            m.usage.get(ty) as f64 / m.min_share.get(ty) as f64
        } else if weight == 1.0 {
            // The common weight: x / 1.0 is x, bit for bit, without the
            // division's latency on every re-key.
            usage_ratio[idx]
        } else {
            usage_ratio[idx] / weight
        });
    }
    if !needy {
        policy[0] |= TOP;
    }
    OrderKey::from_parts(policy, m.start.as_millis(), m.tie, m.member)
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
    let mut policy = [0; POLICY_WORDS];
    // Reversed, so that a larger priority gives a smaller word.
    policy[0] = (i64::from(i32::MAX) - i64::from(m.priority)) as u64;
    OrderKey::from_parts(policy, m.start.as_millis(), m.tie, m.member)
}

/// A queue's members with work, iterated in key order.
///
/// Each listed member owns a slot holding its key until it is removed, so
/// re-keying a member (what every allocation and completion does on each
/// level of its path) finds it without a search. Most sets are small (a
/// parent's children, a leaf's apps) and keep their slots in key order in a
/// ring of slot numbers exactly as long as the set: a re-key binary-searches
/// the member's new place on the side its key moved to and shifts the slot
/// numbers in between; the walk reads the first member directly and iterates
/// in order by reading on. The ring is for the commonest move of all: the
/// member just served was first and, having grown, is now last among
/// near-equals, and moving the first of a full ring to its end is one step
/// of the head. Shifting is linear in the set's size, so past `SMALL_MAX`
/// members the set becomes a `BTreeSet` of keys.
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderSet {
    /// The first member, while the set is not empty: the walk reads it
    /// without touching the set's vectors.
    first: u32,
    /// Keys by slot; a free slot keeps a stale key.
    keys: Vec<OrderKey>,
    /// Free slots, reused last freed first.
    free: Vec<u32>,
    index: Index,
}

/// How an `OrderSet` keeps its slots in key order.
#[derive(Clone, Debug)]
enum Index {
    /// `order` holds the listed slots in key order starting at `head` and
    /// wrapping around; each listed slot's key carries its index in `order`
    /// (`OrderKey::ring_pos`; stale for free slots).
    Ring { order: Vec<u32>, head: usize },
    /// The listed keys, for sets past `SMALL_MAX` members.
    Tree(BTreeSet<OrderKey>),
}

impl Default for Index {
    fn default() -> Index {
        Index::Ring {
            order: Vec::new(),
            head: 0,
        }
    }
}

/// Members past which a set is kept in a B-tree.
const SMALL_MAX: usize = 128;

impl OrderSet {
    pub(crate) fn len(&self) -> usize {
        match &self.index {
            Index::Ring { order, .. } => order.len(),
            Index::Tree(b) => b.len(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lists a member; returns the slot it keeps until removed.
    pub(crate) fn insert(&mut self, key: OrderKey) -> u32 {
        let slot = self.insert_slot(key);
        self.refresh_first();
        slot
    }

    fn insert_slot(&mut self, key: OrderKey) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.keys[slot as usize] = key;
                slot
            }
            None => {
                self.keys.push(key);
                self.keys.len() as u32 - 1
            }
        };
        match &mut self.index {
            Index::Ring { order, head } => {
                let keys = &mut self.keys;
                unwrap_ring(order, head, keys);
                let at = order.partition_point(|s| keys[*s as usize] < key);
                order.insert(at, slot);
                for (i, s) in order.iter().enumerate().skip(at) {
                    keys[*s as usize].ring_pos = i as u32;
                }
                if order.len() > SMALL_MAX {
                    let tree = order.iter().map(|s| keys[*s as usize]).collect();
                    self.index = Index::Tree(tree);
                }
            }
            Index::Tree(b) => {
                b.insert(key);
            }
        }
        slot
    }

    /// Unlists the member in `slot`.
    pub(crate) fn remove(&mut self, slot: u32) {
        self.remove_slot(slot);
        self.refresh_first();
    }

    fn remove_slot(&mut self, slot: u32) {
        self.free.push(slot);
        let mut shrunk = false;
        match &mut self.index {
            Index::Ring { order, head } => {
                let keys = &mut self.keys;
                unwrap_ring(order, head, keys);
                let at = keys[slot as usize].ring_pos as usize;
                debug_assert_eq!(order[at], slot, "removing a slot that is not listed");
                order.remove(at);
                for (i, s) in order.iter().enumerate().skip(at) {
                    keys[*s as usize].ring_pos = i as u32;
                }
            }
            Index::Tree(b) => {
                b.remove(&self.keys[slot as usize]);
                shrunk = b.len() < SMALL_MAX / 2;
            }
        }
        if self.is_empty() {
            // Nothing listed: start afresh rather than keep stale slots.
            self.keys.clear();
            self.free.clear();
            self.index = Index::default();
        } else if shrunk {
            self.index = self.ring_index();
        }
    }

    /// A ring index of the listed slots (every slot not free).
    fn ring_index(&mut self) -> Index {
        let mut is_free = vec![false; self.keys.len()];
        for s in &self.free {
            is_free[*s as usize] = true;
        }
        let mut order: Vec<u32> = (0..self.keys.len() as u32)
            .filter(|s| !is_free[*s as usize])
            .collect();
        order.sort_unstable_by(|a, b| self.keys[*a as usize].cmp(&self.keys[*b as usize]));
        for (i, s) in order.iter().enumerate() {
            self.keys[*s as usize].ring_pos = i as u32;
        }
        Index::Ring { order, head: 0 }
    }

    /// Gives the member in `slot` a new key (its inputs changed).
    pub(crate) fn replace(&mut self, slot: u32, new: OrderKey) {
        self.move_slot(slot, new);
        self.refresh_first();
    }

    /// The key of the member in `slot`, which must be listed: the member's
    /// own record keeps only the slot, so that re-keying reads the old key
    /// from the line it is about to write anyway.
    #[inline]
    pub(crate) fn key(&self, slot: u32) -> &OrderKey {
        &self.keys[slot as usize]
    }

    /// The key in `slot` if the slot is listed (for invariant checks, which
    /// must not trust the member's record).
    pub(crate) fn listed_key(&self, slot: u32) -> Option<OrderKey> {
        let listed = (slot as usize) < self.keys.len() && !self.free.contains(&slot);
        listed.then(|| self.keys[slot as usize])
    }

    /// The first member, if any.
    #[inline]
    pub(crate) fn first(&self) -> Option<u32> {
        (!self.is_empty()).then_some(self.first)
    }

    fn refresh_first(&mut self) {
        let first = match &self.index {
            Index::Ring { order, head, .. } => order.get(*head).map(|s| &self.keys[*s as usize]),
            Index::Tree(b) => b.first(),
        };
        self.first = first.map_or(0, |k| k.member);
    }

    fn move_slot(&mut self, slot: u32, mut new: OrderKey) {
        let entry = &mut self.keys[slot as usize];
        new.ring_pos = entry.ring_pos;
        let old = std::mem::replace(entry, new);
        let (order, head) = match &mut self.index {
            Index::Ring { order, head } => (order, head),
            Index::Tree(b) => {
                b.remove(&old);
                b.insert(new);
                return;
            }
        };
        let len = order.len();
        let here = new.ring_pos as usize;
        debug_assert_eq!(order[here], slot, "re-keying a slot that is not listed");
        let last = if *head == 0 { len - 1 } else { *head - 1 };
        // Each branch compares with the far end once: past it, the member
        // goes there (a turn of the ring if it is at the near end, needing
        // no shifting at all); otherwise a binary search finds its place.
        if new > old {
            if here == last {
                return;
            }
            let past_last = self.keys[order[last] as usize] < new;
            if past_last && here == *head {
                // First to last: the slot stays where it is and the ring turns by one.
                *head = if *head + 1 == len { 0 } else { *head + 1 };
                return;
            }
            let mut ring = Ring {
                keys: &mut self.keys,
                order,
                head: *head,
            };
            let at = ring.logical(here);
            let to = if past_last {
                len - 1
            } else {
                ring.partition(at + 1, len - 1, &new) - 1
            };
            ring.move_right(at, to);
        } else {
            if here == *head {
                return;
            }
            let before_first = new < self.keys[order[*head] as usize];
            if before_first && here == last {
                // Last to first: the ring turns back by one.
                *head = last;
                return;
            }
            let mut ring = Ring {
                keys: &mut self.keys,
                order,
                head: *head,
            };
            let at = ring.logical(here);
            let to = if before_first {
                0
            } else {
                ring.partition(1, at, &new)
            };
            ring.move_left(at, to);
        }
    }

    /// The members in key order.
    #[inline]
    pub(crate) fn iter(&self) -> OrderIter<'_> {
        match &self.index {
            Index::Ring { order, head, .. } => OrderIter::Ring {
                keys: &self.keys,
                order,
                next: *head,
                left: order.len(),
            },
            Index::Tree(b) => OrderIter::Tree(b.iter()),
        }
    }
}

/// Turns a ring so that it starts at index 0 (before an insert or a
/// removal, which change its length).
fn unwrap_ring(order: &mut [u32], head: &mut usize, keys: &mut [OrderKey]) {
    if *head == 0 {
        return;
    }
    order.rotate_left(*head);
    *head = 0;
    for (i, s) in order.iter().enumerate() {
        keys[*s as usize].ring_pos = i as u32;
    }
}

/// A ring index borrowed for one re-key: logical positions (0 is the first
/// member) map to indices in `order` past `head`, wrapping around.
struct Ring<'a> {
    keys: &'a mut [OrderKey],
    order: &'a mut [u32],
    head: usize,
}

impl Ring<'_> {
    #[inline]
    fn physical(&self, logical: usize) -> usize {
        let i = self.head + logical;
        if i >= self.order.len() {
            i - self.order.len()
        } else {
            i
        }
    }

    #[inline]
    fn logical(&self, physical: usize) -> usize {
        if physical >= self.head {
            physical - self.head
        } else {
            physical + self.order.len() - self.head
        }
    }

    #[inline]
    fn slot_at(&self, logical: usize) -> u32 {
        self.order[self.physical(logical)]
    }

    #[inline]
    fn key_at(&self, logical: usize) -> &OrderKey {
        &self.keys[self.slot_at(logical) as usize]
    }

    /// The first logical position in `lo..hi` whose key is not below `key`
    /// (`hi` if none), the keys there being sorted.
    fn partition(&self, mut lo: usize, mut hi: usize, key: &OrderKey) -> usize {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key_at(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Moves the slot at logical `from` to `to` (after it), shifting those
    /// in between one place towards the front.
    fn move_right(&mut self, from: usize, to: usize) {
        let len = self.order.len();
        let mut i = self.physical(from);
        let slot = self.order[i];
        for _ in from..to {
            let next = if i + 1 == len { 0 } else { i + 1 };
            let s = self.order[next];
            self.order[i] = s;
            self.keys[s as usize].ring_pos = i as u32;
            i = next;
        }
        self.order[i] = slot;
        self.keys[slot as usize].ring_pos = i as u32;
    }

    /// Moves the slot at logical `from` to `to` (before it), shifting those
    /// in between one place towards the end.
    fn move_left(&mut self, from: usize, to: usize) {
        let len = self.order.len();
        let mut i = self.physical(from);
        let slot = self.order[i];
        for _ in to..from {
            let prev = if i == 0 { len - 1 } else { i - 1 };
            let s = self.order[prev];
            self.order[i] = s;
            self.keys[s as usize].ring_pos = i as u32;
            i = prev;
        }
        self.order[i] = slot;
        self.keys[slot as usize].ring_pos = i as u32;
    }
}

/// Iteration in key order over either representation.
pub(crate) enum OrderIter<'a> {
    /// `left` members from index `next` of `order` on, wrapping around.
    Ring {
        keys: &'a [OrderKey],
        order: &'a [u32],
        next: usize,
        left: usize,
    },
    Tree(std::collections::btree_set::Iter<'a, OrderKey>),
}

impl<'a> Iterator for OrderIter<'a> {
    type Item = &'a OrderKey;

    #[inline]
    fn next(&mut self) -> Option<&'a OrderKey> {
        match self {
            OrderIter::Ring {
                keys,
                order,
                next,
                left,
            } => {
                if *left == 0 {
                    return None;
                }
                let slot = order[*next];
                *left -= 1;
                *next = if *next + 1 == order.len() {
                    0
                } else {
                    *next + 1
                };
                Some(&keys[slot as usize])
            }
            OrderIter::Tree(i) => i.next(),
        }
    }
}

impl<'a> IntoIterator for &'a OrderSet {
    type Item = &'a OrderKey;
    type IntoIter = OrderIter<'a>;

    #[inline]
    fn into_iter(self) -> OrderIter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;
    use std::collections::BTreeMap;

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

    /// The three comparators as Hadoop writes them (pairwise, rule after
    /// rule, reference section 5), with Weft's float comparison (`canon`,
    /// then `total_cmp`), as the specification the packed keys must match.
    fn hadoop_cmp(policy: Policy, a: &KeyInputs, b: &KeyInputs, cluster: &Resource) -> Ordering {
        let f = |x: f64, y: f64| canon(x).total_cmp(&canon(y));
        let policy_part = match policy {
            Policy::Fair => {
                let mem = |r: Resource| r.memory_mb();
                let a_zero = mem(a.demand) == 0;
                let b_zero = mem(b.demand) == 0;
                let eff = |m: &KeyInputs| mem(m.min_share).min(mem(m.demand));
                let a_needy = mem(a.usage) < eff(a);
                let b_needy = mem(b.usage) < eff(b);
                let ratio = |m: &KeyInputs| mem(m.usage) as f64 / eff(m).max(1) as f64;
                let use_to_weight = || match (a.weight > 0.0, b.weight > 0.0) {
                    (true, true) => f(
                        mem(a.usage) as f64 / f64::from(a.weight),
                        mem(b.usage) as f64 / f64::from(b.weight),
                    ),
                    (false, false) => mem(a.usage).cmp(&mem(b.usage)),
                    (true, false) => Ordering::Less,
                    (false, true) => Ordering::Greater,
                };
                a_zero
                    .cmp(&b_zero)
                    .then(b_needy.cmp(&a_needy))
                    .then_with(|| {
                        if a_needy && b_needy {
                            f(ratio(a), ratio(b))
                        } else {
                            Ordering::Equal
                        }
                    })
                    .then_with(use_to_weight)
            }
            Policy::Drf => {
                let ratios = |m: &KeyInputs| {
                    let r: Vec<f64> = ResourceType::ALL
                        .iter()
                        .map(|ty| m.usage.get(*ty) as f64 / cluster.get(*ty) as f64)
                        .collect();
                    let mut order: Vec<usize> = (0..r.len()).collect();
                    order.sort_by(|x, y| f(r[*y], r[*x]).then(x.cmp(y)));
                    (r, order)
                };
                let (ra, oa) = ratios(a);
                let (rb, ob) = ratios(b);
                let a_needy = a.usage.get(ResourceType::ALL[oa[0]])
                    < a.min_share.get(ResourceType::ALL[oa[0]]);
                let b_needy = b.usage.get(ResourceType::ALL[ob[0]])
                    < b.min_share.get(ResourceType::ALL[ob[0]]);
                let values = |m: &KeyInputs, r: &[f64], order: &[usize], needy: bool| -> Vec<f64> {
                    order
                        .iter()
                        .map(|i| {
                            let ty = ResourceType::ALL[*i];
                            if needy {
                                m.usage.get(ty) as f64 / m.min_share.get(ty) as f64
                            } else {
                                r[*i] / f64::from(m.weight)
                            }
                        })
                        .collect()
                };
                let va = values(a, &ra, &oa, a_needy);
                let vb = values(b, &rb, &ob, b_needy);
                b_needy.cmp(&a_needy).then_with(|| {
                    va.iter()
                        .zip(&vb)
                        .map(|(x, y)| f(*x, *y))
                        .find(|o| o.is_ne())
                        .unwrap_or(Ordering::Equal)
                })
            }
            Policy::Fifo => b.priority.cmp(&a.priority),
        };
        policy_part
            .then(a.start.cmp(&b.start))
            .then(a.tie.cmp(&b.tie))
            .then(a.member.cmp(&b.member))
    }

    #[test]
    fn keys_order_members_as_the_comparators_do() {
        use proptest::prelude::*;
        let inputs = (
            (0u64..5, 0u64..5),
            (0u64..5, 0u64..5),
            (0u64..5, 0u64..5),
            prop::sample::select(vec![0.0f32, 0.5, 1.0, 2.0, 3.0]),
            0u64..3,
            -2i32..3,
            0u128..3,
        );
        proptest!(|(members in prop::collection::vec(inputs, 2..12), big in any::<bool>())| {
            // Small quantities make ties, needy members and zero weights common;
            // `big` scales usage so that ratios differ in their low bits too.
            let scale = if big { 1_000_003 } else { 1 };
            let cluster = Resource::new(20 * scale, 10 * scale);
            let members: Vec<KeyInputs> = members
                .into_iter()
                .enumerate()
                .map(|(i, (usage, demand, min, weight, start, priority, tie))| KeyInputs {
                    usage: Resource::new(usage.0 * scale, usage.1 * scale / 3),
                    demand: Resource::new(demand.0 * scale, demand.1),
                    min_share: Resource::new(min.0 * scale, min.1 * scale / 2),
                    weight,
                    start: Time::from_millis(start),
                    priority,
                    tie,
                    member: i as u32,
                })
                .collect();
            for policy in [Policy::Fair, Policy::Drf, Policy::Fifo] {
                for a in &members {
                    for b in &members {
                        let by_key = OrderKey::new(policy, a, &cluster).cmp(&OrderKey::new(policy, b, &cluster));
                        prop_assert_eq!(by_key, hadoop_cmp(policy, a, b, &cluster), "{} {:?} {:?}", policy, a, b);
                    }
                }
            }
        });
    }

    #[test]
    fn order_set_matches_a_btree_set_through_every_change() {
        use proptest::prelude::*;
        // (operation, member, value): 0 inserts the member if unlisted, 1
        // removes it if listed, 2 and 3 re-key it if listed. The first
        // half of the operations only removes and re-keys, the second mostly
        // inserts, so sets shrink below SMALL_MAX / 2 and grow past SMALL_MAX.
        let ops = prop::collection::vec((0u8..4, 0u32..300, 0u32..50), 0..2000);
        proptest!(|(ops in ops, initial in 0u32..160)| {
            let key = |v: u32, member: u32| OrderKey::from_parts([u64::from(v); POLICY_WORDS], 0, 0, member);
            let mut set = OrderSet::default();
            let mut model = BTreeSet::new();
            let mut listed: BTreeMap<u32, (u32, OrderKey)> = BTreeMap::new();
            // Start at any size, past the threshold too, so that shrinking
            // back is exercised.
            for member in 0..initial {
                let k = key(member % 7, member);
                listed.insert(member, (set.insert(k), k));
                model.insert(k);
            }
            let half = ops.len() / 2;
            for (i, (op, member, v)) in ops.into_iter().enumerate() {
                let op = match op {
                    0 if i < half => 1,
                    1 if i >= half => 0,
                    op => op,
                };
                // Re-keys of op 3 go to the first member (odd values) or the
                // last (even ones), the moves a ring makes by turning.
                let member = match (op, v % 2) {
                    (3, 1) => model.first().map_or(member, |k| k.member),
                    (3, _) => model.last().map_or(member, |k| k.member),
                    _ => member,
                };
                match (op, listed.get(&member).copied()) {
                    (0, None) => {
                        let k = key(v, member);
                        listed.insert(member, (set.insert(k), k));
                        model.insert(k);
                    }
                    (1, Some((slot, k))) => {
                        set.remove(slot);
                        model.remove(&k);
                        listed.remove(&member);
                    }
                    (2 | 3, Some((slot, old))) => {
                        let new = key(v, member);
                        set.replace(slot, new);
                        model.remove(&old);
                        model.insert(new);
                        listed.insert(member, (slot, new));
                    }
                    _ => {}
                }
                prop_assert_eq!(set.len(), model.len());
                prop_assert_eq!(set.first(), model.first().map(|k| k.member));
                prop_assert_eq!(set.iter().copied().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
            }
        });
    }
}
