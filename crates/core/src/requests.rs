//! An app's outstanding resource requests (YARN's AppSchedulingInfo) and the
//! delay-scheduling state kept per scheduler key: asks by priority and
//! capability, then by location (node, rack, anywhere), with the counts that
//! allocation decrements level by level.
//!
//! Which node is offered, and whether the app may take it, is `assign`'s
//! business; this module only answers "what is asked here" and keeps the books.

use std::collections::BTreeMap;

use weft_model::{Priority, Resource, Time};

use crate::input::{ANY, Ask};
use crate::output::Locality;

/// A scheduler key: request priority, then container size. Ordered so that
/// iteration serves the smallest priority number first, as YARN does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SchedKey {
    pub(crate) priority: Priority,
    pub(crate) capability: Resource,
}

impl Ord for SchedKey {
    fn cmp(&self, other: &SchedKey) -> std::cmp::Ordering {
        self.priority
            .cmp(&other.priority)
            .then_with(|| self.capability.values().cmp(&other.capability.values()))
    }
}

impl PartialOrd for SchedKey {
    fn partial_cmp(&self, other: &SchedKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// One location's ask within a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LocationAsk {
    pub(crate) count: u32,
    pub(crate) relax_locality: bool,
}

/// Everything asked under one key, and its delay-scheduling state.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyState {
    pub(crate) any: Option<LocationAsk>,
    pub(crate) racks: BTreeMap<String, LocationAsk>,
    pub(crate) nodes: BTreeMap<String, LocationAsk>,
    /// Locality allowed now; `None` until first asked (Hadoop then starts at node-local).
    pub(crate) allowed: Option<Locality>,
    /// Scheduling opportunities since the level last rose.
    pub(crate) opportunities: u64,
    /// When a container was last allocated under this key, or the level was first asked or last raised.
    pub(crate) last_scheduled: Option<Time>,
}

impl KeyState {
    pub(crate) fn any_count(&self) -> u32 {
        self.any.map_or(0, |a| a.count)
    }

    pub(crate) fn rack_count(&self, rack: &str) -> u32 {
        self.racks.get(rack).map_or(0, |a| a.count)
    }

    pub(crate) fn node_count(&self, node_name: &str) -> u32 {
        self.nodes.get(node_name).map_or(0, |a| a.count)
    }

    /// YARN's `canDelayTo`: may the scheduler go beyond this location? True
    /// unless the ask at that location says `relaxLocality=false`.
    pub(crate) fn can_relax_beyond(&self, location: Location<'_>) -> bool {
        let ask = match location {
            Location::Any => self.any,
            Location::Rack(r) => self.racks.get(r).copied(),
        };
        ask.is_none_or(|a| a.relax_locality)
    }

    /// True when nothing is outstanding at any location.
    fn is_empty(&self) -> bool {
        self.any_count() == 0
            && self.racks.values().all(|a| a.count == 0)
            && self.nodes.values().all(|a| a.count == 0)
    }

    /// Distinct locations (anywhere included) with an outstanding ask.
    pub(crate) fn unique_locations(&self) -> usize {
        usize::from(self.any_count() > 0)
            + self.racks.values().filter(|a| a.count > 0).count()
            + self.nodes.values().filter(|a| a.count > 0).count()
    }
}

/// An app's keys with their asks, in key order.
///
/// A vector sorted by key rather than a map: an app asks at a few priorities
/// and sizes, so lookups are a short binary search, and a decision reads one
/// small allocation (a B-tree leaf would be over a kilobyte per app, and
/// several cache lines apart from the state it holds).
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyTable {
    entries: Vec<(SchedKey, KeyState)>,
}

impl KeyTable {
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn get(&self, key: &SchedKey) -> Option<&KeyState> {
        let at = self.find(key).ok()?;
        Some(&self.entries[at].1)
    }

    pub(crate) fn get_mut(&mut self, key: &SchedKey) -> Option<&mut KeyState> {
        let at = self.find(key).ok()?;
        Some(&mut self.entries[at].1)
    }

    /// The state of `key`, created empty if the key is new.
    pub(crate) fn get_or_default(&mut self, key: SchedKey) -> &mut KeyState {
        let at = match self.find(&key) {
            Ok(at) => at,
            Err(at) => {
                if self.entries.capacity() == 0 {
                    // Most apps ask at one key: no room for more until needed.
                    self.entries.reserve_exact(1);
                }
                self.entries.insert(at, (key, KeyState::default()));
                at
            }
        };
        &mut self.entries[at].1
    }

    pub(crate) fn remove(&mut self, key: &SchedKey) -> Option<KeyState> {
        let at = self.find(key).ok()?;
        Some(self.entries.remove(at).1)
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// The keys in order (smallest priority number first), with their states.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&SchedKey, &KeyState)> + '_ {
        self.entries.iter().map(|(key, state)| (key, state))
    }

    /// The states in key order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &KeyState> + '_ {
        self.entries.iter().map(|(_, state)| state)
    }

    /// `iter`, with the states writable.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&SchedKey, &mut KeyState)> + '_ {
        self.entries.iter_mut().map(|(key, state)| (&*key, state))
    }

    fn find(&self, key: &SchedKey) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.cmp(key))
    }
}

/// A location that can carry a `relaxLocality` flag beyond a node.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Location<'a> {
    Any,
    Rack(&'a str),
}

/// An app's asks.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestTable {
    pub(crate) keys: KeyTable,
    /// Σ over keys of (anywhere count × capability): what the tree sees as pending.
    pending: Resource,
}

impl RequestTable {
    /// Outstanding demand: anywhere counts times sizes.
    pub(crate) fn pending(&self) -> Resource {
        self.pending
    }

    /// Outstanding containers asked for anywhere, over every key.
    pub(crate) fn pending_containers(&self) -> u64 {
        self.keys.values().map(|s| u64::from(s.any_count())).sum()
    }

    /// True when nothing is asked anywhere.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_zero()
    }

    /// Replaces the ask at (priority, capability, location), as YARN does.
    /// `capability` must already be normalised.
    pub(crate) fn update(&mut self, ask: &Ask, capability: Resource) {
        let key = SchedKey {
            priority: ask.priority,
            capability,
        };
        let state = self.keys.get_or_default(key);
        let new = LocationAsk {
            count: ask.num_containers,
            relax_locality: ask.relax_locality,
        };
        if ask.resource_name == ANY {
            let old = state.any.map_or(0, |a| a.count);
            self.pending -= capability.saturating_mul(u64::from(old));
            self.pending += capability.saturating_mul(u64::from(new.count));
            state.any = Some(new);
        } else if is_rack_name(&ask.resource_name) {
            state.racks.insert(ask.resource_name.clone(), new);
        } else {
            state.nodes.insert(ask.resource_name.clone(), new);
        }
        self.prune(key);
    }

    /// Books one container allocated under `key` at `locality` on a node named
    /// `node_name` in `rack` at `now`: the node, rack and anywhere counts go
    /// down as far as the level reaches, as in YARN; the allowed locality
    /// comes back down to what was achieved, and the time-based wait starts
    /// again.
    pub(crate) fn allocate(
        &mut self,
        key: SchedKey,
        locality: Locality,
        node_name: &str,
        rack: &str,
        now: Time,
    ) {
        let Some(state) = self.keys.get_mut(&key) else {
            return;
        };
        if state.allowed.is_some_and(|allowed| locality < allowed) {
            state.allowed = Some(locality);
        }
        state.last_scheduled = Some(now);
        if locality == Locality::NodeLocal
            && let Some(a) = state.nodes.get_mut(node_name)
        {
            a.count = a.count.saturating_sub(1);
        }
        if locality <= Locality::RackLocal
            && let Some(a) = state.racks.get_mut(rack)
        {
            a.count = a.count.saturating_sub(1);
        }
        if let Some(a) = state.any.as_mut()
            && a.count > 0
        {
            a.count -= 1;
            self.pending -= key.capability;
        }
        if state.is_empty() {
            self.keys.remove(&key);
        }
    }

    /// Puts one container back under `key` (an AM container lost before it
    /// ran, or a recovered request).
    pub(crate) fn add_any(&mut self, key: SchedKey, count: u32) {
        let state = self.keys.get_or_default(key);
        let any = state.any.get_or_insert(LocationAsk {
            count: 0,
            relax_locality: true,
        });
        any.count += count;
        self.pending += key.capability.saturating_mul(u64::from(count));
    }

    /// Drops every ask.
    pub(crate) fn clear(&mut self) {
        self.keys.clear();
        self.pending = Resource::ZERO;
    }

    /// Reads the first key's state and discards it: a hint that brings the
    /// asks into cache ahead of a likely allocation, so that their cache
    /// miss overlaps the caller's others rather than stalling the
    /// allocation (see `end_container`). Changes nothing.
    #[inline]
    pub(crate) fn warm(&self) {
        // Every field an offer reads first: the state spans two cache lines.
        std::hint::black_box(
            self.keys
                .values()
                .next()
                .map(|state| (state.any, state.racks.is_empty(), state.nodes.is_empty())),
        );
    }

    /// The first key with an outstanding anywhere ask.
    pub(crate) fn first_key(&self) -> Option<SchedKey> {
        self.keys
            .iter()
            .find(|(_, s)| s.any_count() > 0)
            .map(|(k, _)| *k)
    }

    /// Forgets a key with nothing outstanding at any location, keeping its
    /// delay-scheduling state only while something is asked.
    fn prune(&mut self, key: SchedKey) {
        if self.keys.get(&key).is_some_and(KeyState::is_empty) {
            self.keys.remove(&key);
        }
    }
}

/// YARN rack names are network paths (`/rack1`); host names never start with `/`.
pub(crate) fn is_rack_name(name: &str) -> bool {
    name.starts_with('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(prio: i32, name: &str, mb: u64, n: u32, relax: bool) -> Ask {
        Ask {
            priority: Priority(prio),
            resource_name: name.to_owned(),
            capability: Resource::new(mb, 1),
            num_containers: n,
            relax_locality: relax,
        }
    }

    #[test]
    fn asks_replace_and_pending_follows_anywhere_counts() {
        let mut t = RequestTable::default();
        let a = ask(1, ANY, 1024, 4, true);
        t.update(&a, a.capability);
        assert_eq!(t.pending(), Resource::new(4096, 4));
        let a = ask(1, ANY, 1024, 2, true);
        t.update(&a, a.capability);
        assert_eq!(t.pending(), Resource::new(2048, 2));
        let b = ask(1, ANY, 2048, 1, true);
        t.update(&b, b.capability);
        assert_eq!(
            t.pending(),
            Resource::new(4096, 3),
            "a different capability is a different key"
        );
        let a = ask(1, ANY, 1024, 0, true);
        t.update(&a, a.capability);
        assert_eq!(t.pending(), Resource::new(2048, 1));
        assert_eq!(t.keys.len(), 1, "a cancelled key is forgotten");
    }

    #[test]
    fn allocation_decrements_as_far_as_the_level_reaches() {
        let mut t = RequestTable::default();
        for a in [
            ask(1, ANY, 1024, 3, true),
            ask(1, "/r1", 1024, 2, true),
            ask(1, "h1", 1024, 1, true),
        ] {
            t.update(&a, a.capability);
        }
        let key = SchedKey {
            priority: Priority(1),
            capability: Resource::new(1024, 1),
        };
        assert_eq!(t.keys.get(&key).unwrap().unique_locations(), 3);
        t.allocate(key, Locality::NodeLocal, "h1", "/r1", Time::ZERO);
        let s = t.keys.get(&key).unwrap();
        assert_eq!(
            (s.node_count("h1"), s.rack_count("/r1"), s.any_count()),
            (0, 1, 2)
        );
        t.allocate(key, Locality::OffSwitch, "h9", "/r9", Time::ZERO);
        let s = t.keys.get(&key).unwrap();
        assert_eq!((s.rack_count("/r1"), s.any_count()), (1, 1));
        t.allocate(key, Locality::RackLocal, "h2", "/r1", Time::ZERO);
        assert!(t.is_empty());
        assert!(t.keys.is_empty());
    }

    #[test]
    fn relax_locality_flags() {
        let mut t = RequestTable::default();
        for a in [
            ask(1, ANY, 1024, 1, false),
            ask(1, "/r1", 1024, 1, false),
            ask(1, "h1", 1024, 1, true),
        ] {
            t.update(&a, a.capability);
        }
        let (_, s) = t.keys.iter().next().unwrap();
        assert!(!s.can_relax_beyond(Location::Any));
        assert!(!s.can_relax_beyond(Location::Rack("/r1")));
        assert!(
            s.can_relax_beyond(Location::Rack("/r2")),
            "no ask at a rack means no restriction there"
        );
    }

    proptest::proptest! {
        /// The key table answers as a map would, in key order.
        #[test]
        fn key_table_behaves_as_a_map(ops in proptest::collection::vec((proptest::bool::ANY, -3i32..3, 1u64..4, 0u64..1000), 0..200)) {
            let mut table = KeyTable::default();
            let mut model: BTreeMap<SchedKey, u64> = BTreeMap::new();
            for (insert, prio, mb, stamp) in ops {
                let key = SchedKey { priority: Priority(prio), capability: Resource::new(mb * 1024, mb) };
                if insert {
                    table.get_or_default(key).opportunities = stamp;
                    model.insert(key, stamp);
                } else {
                    proptest::prop_assert_eq!(table.remove(&key).map(|s| s.opportunities), model.remove(&key));
                }
                proptest::prop_assert_eq!(table.get(&key).map(|s| s.opportunities), model.get(&key).copied());
                let listed: Vec<(SchedKey, u64)> = table.iter().map(|(k, s)| (*k, s.opportunities)).collect();
                let expected: Vec<(SchedKey, u64)> = model.iter().map(|(k, v)| (*k, *v)).collect();
                proptest::prop_assert_eq!(listed, expected);
            }
        }
    }
}
