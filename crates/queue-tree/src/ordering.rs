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
/// is packed into `POLICY_WORDS` words (see `fair_words` and `drf_words` for how
/// each comparator fits), so that ties, common among members with equal
/// usage, reach the start time and name after few compares.
#[derive(Clone, Copy, Debug, Eq)]
pub(crate) struct OrderKey {
    /// [policy words..., start time, name tie-breaker high, low], compared in order.
    words: [u64; POLICY_WORDS + 3],
    pub(crate) member: u32,
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
        OrderKey { words, member }
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
        let words = PolicyWords::new(policy, m, cluster);
        OrderKey::from_parts(words.0, m.start.as_millis(), m.tie, m.member)
    }
}

/// The words of a key that a policy computes from the member's usage,
/// demand, shares and weight; the rest of a key (start, name, member) are
/// its tie-breakers, which a member's usage never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PolicyWords([u64; POLICY_WORDS]);

impl PolicyWords {
    /// The words of a member's key under `policy`, given the cluster's size.
    #[inline]
    pub(crate) fn new(policy: Policy, m: &KeyInputs, cluster: &Resource) -> PolicyWords {
        PolicyWords(match policy {
            Policy::Fair => fair_words(m),
            Policy::Drf => drf_words(m, cluster),
            Policy::Fifo => fifo_words(m),
        })
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
fn fair_words(m: &KeyInputs) -> [u64; POLICY_WORDS] {
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
        // As in `drf_words`: the same bits without the division.
        (0, usage)
    } else if weight > 0.0 {
        (0, usage / weight)
    } else {
        (TOP, usage)
    };
    let mut policy = [0; POLICY_WORDS];
    policy[0] = if demand == 0 { TOP } else { 0 } | need;
    policy[1] = zero_weight | nonneg_bits(use_ratio);
    policy
}

/// Hadoop's DRF comparator: members whose dominant resource is below their
/// min share of it first, by usage / min share of each resource in dominance
/// order; otherwise by usage / cluster / weight of each resource in dominance
/// order (dominant first); then start time; then name.
///
/// One word per resource type, the "not needy" class in the first word's top bit.
#[inline]
fn drf_words(m: &KeyInputs, cluster: &Resource) -> [u64; POLICY_WORDS] {
    if N_RESOURCE_TYPES == 2 {
        return drf_words_two(m, cluster);
    }
    drf_words_any(m, cluster)
}

/// `drf_words` for the two resource types Weft has: the same divisions in
/// the same order, so the same bits, with selects where the general version
/// indexes by dominance (a re-key's key costs half the instructions).
#[inline(always)]
fn drf_words_two(m: &KeyInputs, cluster: &Resource) -> [u64; POLICY_WORDS] {
    let (u, c, min) = (m.usage.values(), cluster.values(), m.min_share.values());
    let r = [
        canon(u[0] as f64 / c[0] as f64),
        canon(u[1] as f64 / c[1] as f64),
    ];
    // Memory is dominant on a tie, as in `dominance_order`.
    let vcores_first = r[1] > r[0];
    let pick = |pair: [u64; 2]| {
        if vcores_first {
            (pair[1], pair[0])
        } else {
            (pair[0], pair[1])
        }
    };
    let (du, su) = pick(u);
    let (dmin, smin) = pick(min);
    let (dr, sr) = if vcores_first {
        (r[1], r[0])
    } else {
        (r[0], r[1])
    };
    let needy = du < dmin;
    let weight = f64::from(m.weight);
    let (first, second) = if needy {
        (du as f64 / dmin as f64, su as f64 / smin as f64)
    } else if weight == 1.0 {
        (dr, sr)
    } else {
        (dr / weight, sr / weight)
    };
    let mut words = [0; POLICY_WORDS];
    words[0] = nonneg_bits(first) | if needy { 0 } else { TOP };
    words[1] = nonneg_bits(second);
    words
}

/// `drf_words` for any number of resource types.
fn drf_words_any(m: &KeyInputs, cluster: &Resource) -> [u64; POLICY_WORDS] {
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
    policy
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
fn fifo_words(m: &KeyInputs) -> [u64; POLICY_WORDS] {
    let mut policy = [0; POLICY_WORDS];
    // Reversed, so that a larger priority gives a smaller word.
    policy[0] = (i64::from(i32::MAX) - i64::from(m.priority)) as u64;
    policy
}

/// A queue's members with work, iterated in key order.
///
/// Each listed member owns a slot holding its key until it is removed, so
/// re-keying a member (what every allocation and completion does on each
/// level of its path) finds it without a search.
///
/// Up to `SMALL_MAX` members (every parent of a usual tree, and leaves of
/// up to a hundred or so apps) the set is a tournament: a complete binary
/// tree whose leaves are the slots' entries and whose every inner node holds
/// a copy of the smaller of its two children, so the root is the first
/// member. A re-key replays the matches on one path from its leaf to the
/// root: log2 of the capacity compares, the same whichever way the key
/// moved, where a sorted order pays a search and a shift (and churn moves
/// members both ways across the set). An entry holds only what a match
/// compares, the policy words and a rank standing for the tie-breakers, so
/// that a match is a few branch-free integer compares. The walk reads the
/// first member far more often than it reads on; reading on sorts a copy.
///
/// Past that, a `BTreeSet` of keys, whose inserts and removals stay
/// logarithmic where the tournament re-ranks every member.
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderSet {
    /// The first member, while the set is not empty: the walk reads it
    /// without touching the set's vectors.
    first: u32,
    /// Keys by slot; a free slot keeps a stale key. Under `Tournament` a
    /// listed key's policy words may be stale: re-keys write them to its
    /// entry only, and `sync_keys` copies them back when the whole key is
    /// needed.
    keys: Vec<OrderKey>,
    /// Free slots, reused last freed first.
    free: Vec<u32>,
    index: Index,
}

/// How an `OrderSet` finds its first member and its order.
#[derive(Clone, Debug)]
enum Index {
    /// A tournament over a power-of-two number of leaves at least the
    /// number of slots: `nodes[cap + s]` is slot `s`'s entry (`VACANT` if
    /// free), `nodes[k]` for `1 <= k < cap` the smaller of `nodes[2k]` and
    /// `nodes[2k + 1]`, so `nodes[1]` is the first member; `nodes[0]` is
    /// unused. Empty while the set is.
    Tournament { nodes: Vec<Entry> },
    /// The listed keys, for sets past `SMALL_MAX` members.
    Tree(BTreeSet<OrderKey>),
}

impl Default for Index {
    fn default() -> Index {
        Index::Tournament { nodes: Vec::new() }
    }
}

/// Members past which a set is kept in a B-tree.
const SMALL_MAX: usize = 128;

/// What a match compares of a key: its policy words, then the rank of its
/// tie-breakers (start, name, member) among the set's members, which orders
/// them as the tie-breakers do. So the entries' order is the keys' own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    words: [u64; POLICY_WORDS],
    /// The rank in the high half, the member in the low half: compared as
    /// one word, the member never decides (ranks are unique), and
    /// `OrderSet::first` reads it from the root.
    rank_member: u64,
}

/// A free slot's entry: above every real entry (a real key's first word is
/// at most a class bit with an infinity's bits).
const VACANT: Entry = Entry {
    words: [u64::MAX; POLICY_WORDS],
    rank_member: u64::MAX,
};

/// One step of a rank in `Entry::rank_member`.
const RANK_ONE: u64 = 1 << 32;

impl Entry {
    #[inline]
    fn new(key: &OrderKey, rank: u32) -> Entry {
        let mut words = [0; POLICY_WORDS];
        words.copy_from_slice(&key.words[..POLICY_WORDS]);
        Entry {
            words,
            rank_member: u64::from(rank) << 32 | u64::from(key.member),
        }
    }

    #[inline]
    fn is_vacant(&self) -> bool {
        self.rank_member == VACANT.rank_member
    }

    #[inline]
    fn rank(&self) -> u32 {
        (self.rank_member >> 32) as u32
    }

    #[inline]
    fn member(&self) -> u32 {
        self.rank_member as u32
    }

    /// The keys' order, branch-free: which of two entries wins a match is
    /// as good as random to a branch predictor. With two policy words the
    /// last two words compare as one `u128` (a compare and a borrow).
    #[inline(always)]
    fn lt(&self, other: &Entry) -> bool {
        if POLICY_WORDS == 2 {
            let low = |e: &Entry| u128::from(e.words[1]) << 64 | u128::from(e.rank_member);
            let (x, y) = (self.words[0], other.words[0]);
            return (x < y) | ((x == y) & (low(self) < low(other)));
        }
        let mut lt = self.rank_member < other.rank_member;
        let mut i = POLICY_WORDS;
        while i > 0 {
            i -= 1;
            let (x, y) = (self.words[i], other.words[i]);
            lt = (x < y) | ((x == y) & lt);
        }
        lt
    }

    /// The smaller of two entries, branch-free.
    #[inline(always)]
    fn min(self, other: Entry) -> Entry {
        std::hint::select_unpredictable(other.lt(&self), other, self)
    }
}

/// The order of two keys' tie-breakers (start, name, member): what a rank stands for.
#[inline]
fn ties_cmp(a: &OrderKey, b: &OrderKey) -> std::cmp::Ordering {
    a.words[POLICY_WORDS..]
        .cmp(&b.words[POLICY_WORDS..])
        .then(a.member.cmp(&b.member))
}

impl OrderSet {
    pub(crate) fn len(&self) -> usize {
        match &self.index {
            Index::Tournament { .. } => self.keys.len() - self.free.len(),
            Index::Tree(b) => b.len(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lists a member; returns the slot it keeps until removed.
    pub(crate) fn insert(&mut self, key: OrderKey) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.keys.push(key);
                self.keys.len() as u32 - 1
            }
        };
        let len = self.len();
        match &mut self.index {
            Index::Tournament { .. } if len > SMALL_MAX => {
                self.sync_keys();
                self.keys[slot as usize] = key;
                let tree = self.listed_slots().map(|s| self.keys[s as usize]).collect();
                self.index = Index::Tree(tree);
            }
            Index::Tournament { .. } => {
                // Slots keep their keys' policy words in their entries:
                // the new key's go there, its tie-breakers to `keys`.
                self.keys[slot as usize] = key;
                self.grow_to(self.keys.len());
                let Index::Tournament { nodes } = &mut self.index else {
                    unreachable!("matched above")
                };
                let cap = nodes.len() / 2;
                let rank = rank_among(&self.keys, &nodes[cap..], slot);
                for e in &mut nodes[cap..] {
                    if e.rank() >= rank && !e.is_vacant() {
                        e.rank_member += RANK_ONE;
                    }
                }
                nodes[cap + slot as usize] = Entry::new(&key, rank);
                build(nodes);
            }
            Index::Tree(b) => {
                self.keys[slot as usize] = key;
                b.insert(key);
            }
        }
        self.refresh_first();
        slot
    }

    /// Unlists the member in `slot`.
    pub(crate) fn remove(&mut self, slot: u32) {
        self.free.push(slot);
        if self.keys.len() == self.free.len() {
            // Nothing listed: start afresh rather than keep stale slots.
            *self = OrderSet::default();
            return;
        }
        match &mut self.index {
            Index::Tournament { nodes } => {
                let cap = nodes.len() / 2;
                let rank = nodes[cap + slot as usize].rank();
                nodes[cap + slot as usize] = VACANT;
                for e in &mut nodes[cap..] {
                    if e.rank() > rank && !e.is_vacant() {
                        e.rank_member -= RANK_ONE;
                    }
                }
                build(nodes);
            }
            Index::Tree(b) => {
                b.remove(&self.keys[slot as usize]);
                if b.len() < SMALL_MAX / 2 {
                    self.index = self.tournament();
                }
            }
        }
        self.refresh_first();
    }

    /// The listed slots (every slot not free), in slot order.
    fn listed_slots(&self) -> impl Iterator<Item = u32> + '_ {
        let mut is_free = vec![false; self.keys.len()];
        for s in &self.free {
            is_free[*s as usize] = true;
        }
        (0..self.keys.len() as u32).filter(move |s| !is_free[*s as usize])
    }

    /// Gives a tournament at least `slots` leaves.
    fn grow_to(&mut self, slots: usize) {
        let Index::Tournament { nodes } = &mut self.index else {
            return;
        };
        let cap = nodes.len() / 2;
        if slots <= cap {
            return;
        }
        let new_cap = slots.next_power_of_two();
        let mut grown = vec![VACANT; 2 * new_cap];
        grown[new_cap..new_cap + cap].copy_from_slice(&nodes[cap..]);
        build(&mut grown);
        *nodes = grown;
    }

    /// Under `Tournament`, brings the keys' policy words up to date from
    /// the entries, where re-keys write them (see `set_policy`).
    fn sync_keys(&mut self) {
        if let Index::Tournament { nodes } = &self.index {
            let cap = nodes.len() / 2;
            for (key, entry) in self.keys.iter_mut().zip(&nodes[cap..]) {
                if !entry.is_vacant() {
                    key.words[..POLICY_WORDS].copy_from_slice(&entry.words);
                }
            }
        }
    }

    /// A tournament of the listed slots, whose keys must be up to date:
    /// ranked by their tie-breakers, free slots vacant.
    fn tournament(&self) -> Index {
        let mut listed: Vec<u32> = self.listed_slots().collect();
        listed.sort_unstable_by(|a, b| ties_cmp(&self.keys[*a as usize], &self.keys[*b as usize]));
        let cap = self.keys.len().next_power_of_two();
        let mut nodes = vec![VACANT; 2 * cap];
        for (rank, s) in listed.iter().enumerate() {
            nodes[cap + *s as usize] = Entry::new(&self.keys[*s as usize], rank as u32);
        }
        build(&mut nodes);
        Index::Tournament { nodes }
    }

    /// Gives the member in `slot` a new key, tie-breakers included (a
    /// queue's name rank changed).
    pub(crate) fn replace(&mut self, slot: u32, new: OrderKey) {
        match &mut self.index {
            Index::Tournament { .. } => {
                // Rare: rank every member afresh.
                self.sync_keys();
                self.keys[slot as usize] = new;
                self.index = self.tournament();
            }
            Index::Tree(b) => {
                b.remove(&self.keys[slot as usize]);
                b.insert(new);
                self.keys[slot as usize] = new;
            }
        }
        self.refresh_first();
    }

    /// Gives the member in `slot` new policy words (its usage, demand or
    /// weight changed; its tie-breakers did not): what every allocation and
    /// completion does on each level of its path. In a tournament it writes
    /// the member's entry and replays the matches above it.
    #[inline(always)]
    pub(crate) fn set_policy(&mut self, slot: u32, words: PolicyWords) {
        match &mut self.index {
            Index::Tournament { nodes } => {
                // The length is a power of two (never 0: the slot is
                // listed), so masking keeps every index in bounds without a
                // check at each level.
                debug_assert!(nodes.len().is_power_of_two(), "re-keying an unlisted slot");
                let mask = nodes.len() - 1;
                let mut at = (nodes.len() / 2 + slot as usize) & mask;
                let mut entry = nodes[at];
                if entry.words == words.0 {
                    return;
                }
                entry.words = words.0;
                nodes[at] = entry;
                while at > 1 {
                    entry = entry.min(nodes[(at ^ 1) & mask]);
                    at >>= 1;
                    nodes[at & mask] = entry;
                }
                self.first = entry.member();
            }
            Index::Tree(b) => {
                let key = &mut self.keys[slot as usize];
                if key.words[..POLICY_WORDS] == words.0 {
                    return;
                }
                b.remove(key);
                key.words[..POLICY_WORDS].copy_from_slice(&words.0);
                b.insert(*key);
                self.refresh_first();
            }
        }
    }

    /// The key in `slot` if the slot is listed (for invariant checks, which
    /// must not trust the member's record).
    pub(crate) fn listed_key(&self, slot: u32) -> Option<OrderKey> {
        let listed = (slot as usize) < self.keys.len() && !self.free.contains(&slot);
        listed.then(|| self.key_at(slot))
    }

    /// The key in a listed slot, with a tournament's policy words from its entry.
    #[inline]
    fn key_at(&self, slot: u32) -> OrderKey {
        let mut key = self.keys[slot as usize];
        if let Index::Tournament { nodes } = &self.index {
            key.words[..POLICY_WORDS]
                .copy_from_slice(&nodes[nodes.len() / 2 + slot as usize].words);
        }
        key
    }

    /// The first member, if any.
    #[inline]
    pub(crate) fn first(&self) -> Option<u32> {
        (!self.is_empty()).then_some(self.first)
    }

    fn refresh_first(&mut self) {
        let first = match &self.index {
            Index::Tournament { nodes } => nodes.get(1).map(Entry::member),
            Index::Tree(b) => b.first().map(|k| k.member),
        };
        self.first = first.unwrap_or(0);
    }

    /// The members' keys in key order.
    #[inline]
    pub(crate) fn iter(&self) -> OrderIter<'_> {
        match &self.index {
            Index::Tournament { nodes } => {
                // Reading on past the first member: sort the listed slots
                // by their entries (at most `SMALL_MAX` of them).
                let leaves = &nodes[nodes.len() / 2..];
                let mut sorted = [0u32; SMALL_MAX];
                let mut len = 0;
                for (slot, entry) in leaves.iter().enumerate() {
                    if !entry.is_vacant() {
                        sorted[len] = slot as u32;
                        len += 1;
                    }
                }
                sorted[..len].sort_unstable_by(|a, b| {
                    let (a, b) = (&leaves[*a as usize], &leaves[*b as usize]);
                    // A total order: equal only for an entry and itself.
                    if a.lt(b) {
                        std::cmp::Ordering::Less
                    } else if b.lt(a) {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Equal
                    }
                });
                OrderIter::Sorted {
                    set: self,
                    sorted,
                    next: 0,
                    len,
                }
            }
            Index::Tree(b) => OrderIter::Tree(b.iter()),
        }
    }
}

/// Plays every match of a tournament from its leaves up.
fn build(nodes: &mut [Entry]) {
    for k in (1..nodes.len() / 2).rev() {
        nodes[k] = nodes[2 * k].min(nodes[2 * k + 1]);
    }
}

/// The rank the key in `slot` takes among the other listed keys of a
/// tournament whose leaves are `leaves`: how many of them have smaller
/// tie-breakers.
fn rank_among(keys: &[OrderKey], leaves: &[Entry], slot: u32) -> u32 {
    let key = &keys[slot as usize];
    let mut rank = 0;
    for (s, (k, e)) in keys.iter().zip(leaves).enumerate() {
        if s as u32 != slot && !e.is_vacant() && ties_cmp(k, key).is_lt() {
            rank += 1;
        }
    }
    rank
}

/// Iteration in key order over either representation, yielding keys.
#[expect(
    clippy::large_enum_variant,
    reason = "lives on the stack for one walk of a set; boxing would allocate on every walk that reads past a first member"
)]
pub(crate) enum OrderIter<'a> {
    /// The first `len` of `sorted` (listed slots of a tournament, in key
    /// order), from `next` on.
    Sorted {
        set: &'a OrderSet,
        sorted: [u32; SMALL_MAX],
        next: usize,
        len: usize,
    },
    Tree(std::collections::btree_set::Iter<'a, OrderKey>),
}

impl Iterator for OrderIter<'_> {
    type Item = OrderKey;

    #[inline]
    fn next(&mut self) -> Option<OrderKey> {
        match self {
            OrderIter::Sorted {
                set,
                sorted,
                next,
                len,
            } => {
                if *next == *len {
                    return None;
                }
                let slot = sorted[*next];
                *next += 1;
                Some(set.key_at(slot))
            }
            OrderIter::Tree(i) => i.next().copied(),
        }
    }
}

impl<'a> IntoIterator for &'a OrderSet {
    type Item = OrderKey;
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

    /// Whether two keys have the same tie-breakers.
    fn same_ties(a: &OrderKey, b: &OrderKey) -> bool {
        let mut same = a.member == b.member;
        let mut i = POLICY_WORDS;
        while i < a.words.len() {
            same &= a.words[i] == b.words[i];
            i += 1;
        }
        same
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
    fn drf_words_for_two_types_are_the_general_words_bit_for_bit() {
        use proptest::prelude::*;
        let amount = prop_oneof![0u64..6, 0u64..1_000_000, Just(u64::MAX / 2)];
        let inputs = (
            [amount.clone(), amount.clone()],
            [amount.clone(), amount.clone()],
            [amount.clone(), amount],
            prop::sample::select(vec![0.0f32, 0.25, 1.0, 3.0, f32::MIN_POSITIVE]),
        );
        proptest!(|((usage, min, cluster, weight) in inputs)| {
            let m = KeyInputs {
                usage: Resource::new(usage[0], usage[1]),
                demand: Resource::new(1, 1),
                min_share: Resource::new(min[0], min[1]),
                weight,
                start: Time::ZERO,
                priority: 0,
                tie: 0,
                member: 0,
            };
            let cluster = Resource::new(cluster[0], cluster[1]);
            prop_assert_eq!(drf_words_two(&m, &cluster), drf_words_any(&m, &cluster));
        });
    }

    #[test]
    fn order_set_matches_a_btree_set_through_every_change() {
        use proptest::prelude::*;
        // (operation, member, value): 0 inserts the member if unlisted, 1
        // removes it if listed, 2 and 3 re-key it if listed. The first
        // half of the operations only removes and re-keys, the second mostly
        // inserts, so sets shrink below SMALL_MAX / 2 and grow past SMALL_MAX,
        // or (with few members) stay tournaments whose capacity grows.
        let ops = prop::collection::vec((0u8..4, 0u32..300, 0u32..50), 0..2000);
        proptest!(|(ops in ops, initial in 0u32..160, few in any::<bool>())| {
            // Tie-breakers that differ from the member's order (start, then
            // name), and that a re-key with a value divisible by 5 changes,
            // as a queue's name rank does when a sibling is added.
            let key = |v: u32, member: u32| {
                let shuffle = if v.is_multiple_of(5) { 3 } else { 0 };
                OrderKey::from_parts(
                    [u64::from(v); POLICY_WORDS],
                    u64::from((member + shuffle) % 3),
                    u128::from((member * 7 + shuffle) % 11) << 64 | u128::from(member % 2),
                    member,
                )
            };
            let members = if few { 24 } else { 300 };
            let initial = if few { initial % 24 } else { initial };
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
                let member = member % members;
                let op = match op {
                    0 if i < half => 1,
                    1 if i >= half => 0,
                    op => op,
                };
                // Re-keys of op 3 go to the first member (odd values) or the
                // last (even ones), the moves of filling and of churn.
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
                        // The tree's two ways: new policy words only, or a
                        // new key whose tie-breakers changed too.
                        if same_ties(&old, &new) {
                            let mut words = [0; POLICY_WORDS];
                            words.copy_from_slice(&new.words[..POLICY_WORDS]);
                            set.set_policy(slot, PolicyWords(words));
                        } else {
                            set.replace(slot, new);
                        }
                        model.remove(&old);
                        model.insert(new);
                        listed.insert(member, (slot, new));
                    }
                    _ => {}
                }
                prop_assert_eq!(set.len(), model.len());
                prop_assert_eq!(set.first(), model.first().map(|k| k.member));
                prop_assert_eq!(set.iter().collect::<Vec<_>>(), model.iter().copied().collect::<Vec<_>>());
            }
        });
    }
}
