//! Container books: creating a container when `assign` decides one, and
//! ending it (completed, released, lost, preempted, app ended) with every
//! ledger it touches: the node, the app, the queue tree, the AM's
//! "completed" list and the event stream.

use std::collections::VecDeque;

use weft_model::{ContainerId, Priority, Resource, Time};

use crate::nodes::{ContainerIdx, NodeIdx};
use crate::output::{AllocatedContainer, CompletedContainer, Event, Locality, StopReason};
use crate::requests::SchedKey;
use crate::rm::ResourceManager;

/// One live container.
#[derive(Clone, Debug)]
pub(crate) struct Container {
    pub(crate) id: ContainerId,
    /// The owning app.
    pub(crate) app: weft_queue_tree::AppHandle,
    pub(crate) node: NodeIdx,
    /// Position in the node's container list.
    pub(crate) node_pos: u32,
    pub(crate) resource: Resource,
    /// Request priority: victims of preemption are taken lowest priority first.
    pub(crate) priority: Priority,
    pub(crate) is_am: bool,
    pub(crate) running: bool,
    pub(crate) allocated_at: Time,
}

/// Every live container, by index: a free list over fixed-size chunks.
///
/// Chunks rather than one vector, so that growing never copies (a vector of
/// a million containers doubling would copy some 80 MB while a heartbeat
/// waits, and touch twice the memory it ends up using); an index is the
/// chunk's number and the place in it. Generic only so that its test can
/// store plain numbers.
#[derive(Clone, Debug)]
pub(crate) struct Slab<T> {
    chunks: Vec<Box<[Option<T>]>>,
    /// Slots ever handed out; all below are in `chunks`.
    used: u32,
    /// Freed slots, reused last freed first.
    free: Vec<u32>,
}

/// The core's containers.
pub(crate) type ContainerSlab = Slab<Container>;

/// Slots per chunk (a power of two; about 300 KB of containers).
const CHUNK: u32 = 4096;

impl<T> Default for Slab<T> {
    fn default() -> Slab<T> {
        Slab {
            chunks: Vec::new(),
            used: 0,
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Stores a value in a free slot; returns its index.
    pub(crate) fn insert(&mut self, value: T) -> ContainerIdx {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                if self.used.is_multiple_of(CHUNK) {
                    self.chunks.push((0..CHUNK).map(|_| None).collect());
                }
                self.used += 1;
                self.used - 1
            }
        };
        let slot = self.slot_mut(ContainerIdx(i)).expect("slot below `used`");
        debug_assert!(slot.is_none(), "slot {i} handed out twice");
        *slot = Some(value);
        ContainerIdx(i)
    }

    #[inline]
    fn slot_mut(&mut self, idx: ContainerIdx) -> Option<&mut Option<T>> {
        self.chunks
            .get_mut((idx.0 / CHUNK) as usize)?
            .get_mut((idx.0 % CHUNK) as usize)
    }

    /// The value in a slot, if it is live.
    #[inline]
    pub(crate) fn get(&self, idx: ContainerIdx) -> Option<&T> {
        self.chunks
            .get((idx.0 / CHUNK) as usize)?
            .get((idx.0 % CHUNK) as usize)?
            .as_ref()
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, idx: ContainerIdx) -> Option<&mut T> {
        self.slot_mut(idx)?.as_mut()
    }

    /// Frees a slot, returning the value that was in it.
    pub(crate) fn take(&mut self, idx: ContainerIdx) -> Option<T> {
        let value = self.slot_mut(idx)?.take()?;
        self.free.push(idx.0);
        Some(value)
    }
}

/// An app's live containers by sequence number.
///
/// Mostly a window indexed by sequence number: an app's containers take
/// consecutive numbers and most end roughly in order, so a lookup (every
/// container status a node reports) is one index into four-byte slots, and
/// ending a container leaves a hole that is trimmed once it reaches either
/// end of the window. The lookups mostly miss the cache (the app was last
/// touched long ago), so the cache lines read matter more than instructions:
/// a binary search over (number, index) pairs read three or four.
/// A container that outlives its neighbours by far (an AM container, say)
/// would pin the window's start and let it grow with every container the app
/// ever had, so once the window is mostly holes its older half moves out to
/// a short sorted list: the window never holds more than four slots per live
/// container in it (plus `WINDOW_MIN`), and the list holds only such stragglers.
#[derive(Clone, Debug, Default)]
pub(crate) struct ContainerBook {
    /// Slot `i` holds the container numbered `base + i`, or `HOLE`.
    window: VecDeque<ContainerIdx>,
    base: u64,
    /// Live containers in the window.
    n_window: usize,
    /// Live containers numbered below `base`, by sequence number.
    older: Vec<(u64, ContainerIdx)>,
}

const HOLE: ContainerIdx = ContainerIdx(u32::MAX);

/// Window slots allowed whatever the number of live containers in it.
const WINDOW_MIN: usize = 64;

impl ContainerBook {
    /// Live containers.
    pub(crate) fn len(&self) -> usize {
        self.n_window + self.older.len()
    }

    /// The live container with this sequence number.
    pub(crate) fn get(&self, seq: &u64) -> Option<&ContainerIdx> {
        if *seq < self.base {
            let at = self.find_older(*seq).ok()?;
            return Some(&self.older[at].1);
        }
        let idx = self.window.get(usize::try_from(*seq - self.base).ok()?)?;
        (*idx != HOLE).then_some(idx)
    }

    /// Records a live container; returns the one it replaces, if any.
    pub(crate) fn insert(&mut self, seq: u64, idx: ContainerIdx) -> Option<ContainerIdx> {
        debug_assert!(idx != HOLE);
        if seq < self.base {
            // Containers recovered after a restart may come in any order.
            return match self.find_older(seq) {
                Ok(at) => Some(std::mem::replace(&mut self.older[at].1, idx)),
                Err(at) => {
                    self.older.insert(at, (seq, idx));
                    None
                }
            };
        }
        if self.window.is_empty() {
            self.base = seq;
        }
        if seq - self.base >= (4 * (self.n_window + 1) + WINDOW_MIN) as u64 {
            // So far past the window that it would be mostly holes (a
            // recovered container): start a new window there.
            self.retire(self.window.len());
            self.base = seq;
        }
        let at = (seq - self.base) as usize;
        if at == self.window.len() {
            // The common case: the app's next container.
            if self.window.capacity() == 0 {
                // Room for a handful at once: most apps hold several
                // containers, and growing from 4 costs a copy each time.
                self.window.reserve_exact(8);
            }
            self.window.push_back(idx);
            self.n_window += 1;
            return None;
        }
        if at > self.window.len() {
            self.window.resize(at + 1, HOLE);
        }
        let old = std::mem::replace(&mut self.window[at], idx);
        if old == HOLE {
            self.n_window += 1;
            None
        } else {
            Some(old)
        }
    }

    /// Forgets a container; returns it if it was live.
    pub(crate) fn remove(&mut self, seq: &u64) -> Option<ContainerIdx> {
        if *seq < self.base {
            let at = self.find_older(*seq).ok()?;
            return Some(self.older.remove(at).1);
        }
        let at = usize::try_from(*seq - self.base).ok()?;
        let old = std::mem::replace(self.window.get_mut(at)?, HOLE);
        if old == HOLE {
            return None;
        }
        self.n_window -= 1;
        self.trim();
        // Each turn at least halves the window, and trimming may leave it
        // still mostly holes (the live ones were in the half that went).
        while self.window.len() > WINDOW_MIN && self.window.len() > 4 * self.n_window {
            self.retire(self.window.len() / 2);
            self.trim();
        }
        Some(old)
    }

    /// The live containers, by sequence number.
    pub(crate) fn values(&self) -> impl Iterator<Item = &ContainerIdx> + '_ {
        self.older
            .iter()
            .map(|(_, idx)| idx)
            .chain(self.window.iter().filter(|idx| **idx != HOLE))
    }

    /// Moves the first `n` slots of the window out, live ones to `older`
    /// (whose numbers are all below the window's, so they go at its end).
    fn retire(&mut self, n: usize) {
        for (i, idx) in self.window.drain(..n).enumerate() {
            if idx != HOLE {
                self.older.push((self.base + i as u64, idx));
                self.n_window -= 1;
            }
        }
        self.base += n as u64;
    }

    /// Drops holes at both ends of the window.
    fn trim(&mut self) {
        while self.window.front() == Some(&HOLE) {
            self.window.pop_front();
            self.base += 1;
        }
        while self.window.back() == Some(&HOLE) {
            self.window.pop_back();
        }
    }

    fn find_older(&self, seq: u64) -> Result<usize, usize> {
        self.older.binary_search_by_key(&seq, |(s, _)| *s)
    }
}

impl ResourceManager {
    /// Creates a container for app `h` on `node` under `key` at `locality`,
    /// and books it everywhere.
    pub(crate) fn allocate_container(
        &mut self,
        now: Time,
        h: weft_queue_tree::AppHandle,
        node_idx: NodeIdx,
        key: SchedKey,
        locality: Locality,
    ) -> Resource {
        let resource = key.capability;
        debug_assert!(
            self.tree
                .fits_in_max_share(self.tree.app_queue(h), resource),
            "allocation over a max share"
        );
        let is_am = !self.tree.app_is_unmanaged(h) && !self.tree.app_am_started(h);
        let epoch = self.settings.epoch;
        // Borrow the node and the app side by side (distinct fields).
        let node = self.nodes.get(node_idx);
        let app = self.active[h.index()]
            .as_mut()
            .expect("active app for a live handle");
        app.requests
            .allocate(key, locality, &node.name, &node.rack, now);
        let seq = app.next_container_seq;
        app.next_container_seq += 1;
        let id = ContainerId {
            attempt: app.attempt,
            epoch,
            seq,
        };
        let pending = app.requests.pending();
        let idx = self.insert_container(Container {
            id,
            app: h,
            node: node_idx,
            node_pos: 0,
            resource,
            priority: key.priority,
            is_am,
            running: false,
            allocated_at: now,
        });
        let node = self.nodes.get_mut(node_idx);
        node.allocated += resource;
        let allocated = AllocatedContainer {
            container: id,
            node: node.id.clone(),
            node_http_address: node.http_address.clone(),
            resource,
            priority: key.priority,
            locality,
            is_am,
        };
        node.new_allocations.push(allocated.clone());
        self.tree.set_pending(h, pending);
        self.tree.add_usage(h, resource);
        if is_am {
            self.tree.am_started(h);
        }
        let app = self.active_mut(h);
        app.containers.insert(seq, idx);
        app.holdings.add(resource, is_am);
        // The AM container is launched for the AM, not offered to it: YARN
        // never lists it in allocate replies, and an AM that finds a
        // container it did not ask for gives it back (which would end it).
        if !is_am {
            if app.newly_allocated.capacity() == 0 {
                app.newly_allocated
                    .reserve(app.last_collected.clamp(4, 1024) as usize);
            }
            app.newly_allocated.push(allocated);
        }
        if !app.launched || is_am {
            app.launched = true;
            let app_id = app.id;
            let record = self.apps.get_mut(&app_id).expect("record of an active app");
            if record.launched.is_none() {
                record.launched = Some(now);
            }
            if is_am {
                record.am_container = Some(id);
            }
        }
        if is_am {
            self.am_alive(now, h);
        }
        self.counters.containers_allocated += 1;
        match locality {
            Locality::NodeLocal => self.counters.node_local += 1,
            Locality::RackLocal => self.counters.rack_local += 1,
            Locality::OffSwitch => self.counters.off_switch += 1,
        }
        self.events.push(Event::ContainerAllocated {
            container: id,
            node: self.nodes.get(node_idx).id.clone(),
            queue: self.tree.queue_path(self.tree.app_queue(h)).clone(),
            resource,
            priority: key.priority,
            locality,
            is_am,
        });
        resource
    }

    fn insert_container(&mut self, mut container: Container) -> ContainerIdx {
        let node = self.nodes.get_mut(container.node);
        container.node_pos = node.containers.len() as u32;
        let idx = self.containers.insert(container);
        node.containers.push(idx);
        self.n_containers += 1;
        idx
    }

    /// Ends a container: frees it on its node and in the tree, tells its app
    /// (in the next allocate reply), and records the event. When `stop` is
    /// set the node is also told to stop the process.
    pub(crate) fn end_container(
        &mut self,
        now: Time,
        idx: ContainerIdx,
        exit_status: i32,
        diagnostics: impl Into<std::borrow::Cow<'static, str>>,
        stop: Option<StopReason>,
    ) {
        let diagnostics = diagnostics.into();
        let container = self.containers.take(idx).expect("live container index");
        self.n_containers -= 1;
        let node = self.nodes.get_mut(container.node);
        node.allocated -= container.resource;
        if node.draining.is_some() {
            self.drain_container_ended(container.node, container.resource);
        } else if node.overcommit.is_some() {
            self.overcommitted_container_ended(container.node);
        }
        let node = self.nodes.get_mut(container.node);
        let pos = container.node_pos as usize;
        node.containers.swap_remove(pos);
        if let Some(moved) = node.containers.get(pos).copied() {
            self.containers
                .get_mut(moved)
                .expect("live container index")
                .node_pos = pos as u32;
        }
        let node = self.nodes.get_mut(container.node);
        if let Some(reason) = stop {
            node.to_stop.push((container.id, reason));
            self.events.push(Event::ContainerStopOrdered {
                container: container.id,
                node: node.id.clone(),
                reason,
            });
        }
        let node_id = self.nodes.get(container.node).id.clone();
        let h = container.app;
        // The tree's record of the app is read first (its leaf), then the
        // app's own, then the tree's re-keying: each is a cache miss when the
        // app was last touched long ago, and issued close together they
        // overlap, where the re-keying between them would keep them apart.
        let leaf = self.tree.app_queue(h);
        let app = self.active_mut(h);
        app.containers.remove(&container.id.seq);
        app.holdings.remove(container.is_am);
        // Under fair and DRF ordering the app that freed a container is the
        // likeliest to be offered the room next, and its asks (kept apart
        // from its record) are then the allocation's first cache miss:
        // start it now, beside this record's.
        app.requests.warm();
        app.completed.push(CompletedContainer {
            container: container.id,
            exit_status,
            diagnostics: diagnostics.clone(),
        });
        let ms = now.since(container.allocated_at).as_millis();
        app.memory_mb_ms = app
            .memory_mb_ms
            .saturating_add(container.resource.memory_mb().saturating_mul(ms));
        app.vcore_ms = app
            .vcore_ms
            .saturating_add(container.resource.vcores().saturating_mul(ms));
        // The leaf's name is copied last: its locked increment waits for
        // the misses before it, which by then have long returned.
        self.tree.remove_usage(h, container.resource);
        let queue = self.tree.queue_path(leaf).clone();
        if container.is_am {
            let app = self.active(h);
            let app_id = app.id;
            if let Some(record) = self.apps.get_mut(&app_id)
                && record.am_container == Some(container.id)
            {
                record.am_container = None;
            }
        }
        self.counters.containers_completed += 1;
        self.preemption_container_ended(container.id);
        self.events.push(Event::ContainerCompleted {
            container: container.id,
            node: node_id,
            queue,
            resource: container.resource,
            exit_status,
            diagnostics,
        });
        if container.is_am {
            self.am_container_ended(now, h, exit_status);
        }
    }

    /// The live container with this id, if any.
    pub(crate) fn find_container(&self, id: &ContainerId) -> Option<ContainerIdx> {
        let h = self.handle_of(id.app())?;
        let app = self.active[h.index()].as_ref()?;
        if app.attempt != id.attempt {
            return None;
        }
        app.containers.get(&id.seq).copied()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_slab_spans_chunks_and_reuses_the_last_freed_slot() {
        let mut slab = Slab::default();
        let n = u64::from(CHUNK) * 2 + 5;
        let idx: Vec<ContainerIdx> = (0..n).map(|v| slab.insert(v)).collect();
        assert_eq!(slab.chunks.len(), 3);
        for (v, i) in idx.iter().enumerate() {
            assert_eq!(slab.get(*i), Some(&(v as u64)));
        }
        let (a, b) = (idx[5], idx[CHUNK as usize + 7]);
        assert_eq!(slab.take(a), Some(5));
        assert_eq!(slab.take(b), Some(u64::from(CHUNK) + 7));
        assert!(slab.get(a).is_none() && slab.take(a).is_none());
        assert!(slab.get(ContainerIdx(u32::MAX)).is_none());
        assert_eq!(slab.insert(100), b);
        assert_eq!(slab.insert(101), a);
        assert_eq!(slab.insert(102), ContainerIdx(n as u32));
        *slab.get_mut(a).expect("live") += 1;
        assert_eq!(slab.get(a), Some(&102));
    }

    #[test]
    fn a_long_lived_container_does_not_pin_the_window() {
        let mut book = ContainerBook::default();
        book.insert(1, ContainerIdx(1));
        for seq in 2..10_000 {
            book.insert(seq, ContainerIdx(seq as u32));
            book.remove(&seq);
        }
        assert_eq!(book.len(), 1);
        assert!(book.window.len() <= WINDOW_MIN, "{}", book.window.len());
        assert_eq!(book.get(&1), Some(&ContainerIdx(1)));
        // A container recovered far ahead, then one far behind.
        assert_eq!(book.insert(1_000_000, ContainerIdx(7)), None);
        assert_eq!(book.insert(5, ContainerIdx(5)), None);
        assert_eq!(
            book.values().copied().collect::<Vec<_>>(),
            [ContainerIdx(1), ContainerIdx(5), ContainerIdx(7)]
        );
        assert!(book.window.len() <= WINDOW_MIN);
    }

    #[test]
    fn a_window_left_with_live_ends_only_is_cut_to_its_bound() {
        // Live ones are crowded into the window's older half when it comes
        // to be cut: cutting that half leaves two live containers 99 apart,
        // so the cut goes on.
        let mut book = ContainerBook::default();
        let mut model = BTreeMap::new();
        let removals = (102..=198).chain([100]).chain((47..=99).rev());
        let ops = (0..=199)
            .map(|s| (true, s))
            .chain(removals.map(|s| (false, s)));
        for (insert, seq) in ops {
            if insert {
                book.insert(seq, ContainerIdx(seq as u32));
                model.insert(seq, ContainerIdx(seq as u32));
            } else {
                assert_eq!(book.remove(&seq), model.remove(&seq));
            }
            assert!(
                book.window.len() <= 4 * book.n_window + WINDOW_MIN,
                "{} slots for {} live after {seq}",
                book.window.len(),
                book.n_window
            );
        }
        assert_eq!(book.len(), 49);
        assert!(book.values().eq(model.values()));
    }

    proptest! {
        /// The book answers as a map from sequence numbers would (a
        /// `BTreeMap` here), whatever the order of insertions (recovery:
        /// older numbers, numbers far ahead) and removals (mostly the
        /// oldest, as containers end, or any), and keeps its bound on slots.
        #[test]
        fn container_book_behaves_as_a_map(ops in prop::collection::vec((0u8..10, 0u64..100_000, 0u32..1000), 0..600)) {
            let mut book = ContainerBook::default();
            let mut model: BTreeMap<u64, ContainerIdx> = BTreeMap::new();
            let mut next_seq = 64;
            for (kind, far, idx) in ops {
                let seq = match kind {
                    // Mostly the app's next number.
                    0..=3 => { next_seq += 1; next_seq }
                    // One recovered below, maybe live already.
                    4 => far % next_seq,
                    // One recovered far ahead; the app carries on from there.
                    5 => { next_seq += far % 1_000; next_seq }
                    // The oldest live one, or a random live one, or any.
                    6 | 7 => model.keys().next().copied().unwrap_or(far),
                    8 => model.keys().nth(idx as usize % model.len().max(1)).copied().unwrap_or(far),
                    _ => far % (next_seq + 2),
                };
                if kind <= 5 {
                    prop_assert_eq!(book.insert(seq, ContainerIdx(idx)), model.insert(seq, ContainerIdx(idx)));
                } else {
                    prop_assert_eq!(book.remove(&seq), model.remove(&seq));
                }
                prop_assert_eq!(book.len(), model.len());
                prop_assert!(book.window.len() <= 4 * book.n_window + WINDOW_MIN, "{} slots for {} live", book.window.len(), book.n_window);
                prop_assert!(book.older.windows(2).all(|w| w[0].0 < w[1].0));
                prop_assert!(book.older.iter().all(|(s, _)| *s < book.base));
                prop_assert_eq!(book.values().copied().collect::<Vec<_>>(), model.values().copied().collect::<Vec<_>>());
                for s in [seq, seq + 1, next_seq, next_seq + 1, book.base.wrapping_sub(1)] {
                    prop_assert_eq!(book.get(&s), model.get(&s));
                }
            }
        }
    }
}
