//! Container books: creating a container when `assign` decides one, and
//! ending it (completed, released, lost, preempted, app ended) with every
//! ledger it touches: the node, the app, the queue tree, the AM's
//! "completed" list and the event stream.

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

/// An app's live containers by sequence number.
///
/// A vector sorted by sequence number: a new container takes the app's next
/// number, so it goes at the end, and a lookup is a binary search. An ended
/// container leaves a hole (cheaper than a B-tree node update or shifting
/// the rest); the holes are swept out once they outnumber the live entries,
/// so the vector never holds more than twice the live containers.
#[derive(Clone, Debug, Default)]
pub(crate) struct ContainerBook {
    /// (sequence number, container) by sequence number; `HOLE` marks an ended one.
    entries: Vec<(u64, ContainerIdx)>,
    n_live: usize,
}

const HOLE: ContainerIdx = ContainerIdx(u32::MAX);

impl ContainerBook {
    /// Live containers.
    pub(crate) fn len(&self) -> usize {
        self.n_live
    }

    /// The live container with this sequence number.
    pub(crate) fn get(&self, seq: &u64) -> Option<&ContainerIdx> {
        let at = self.find(*seq).ok()?;
        let (_, idx) = &self.entries[at];
        (*idx != HOLE).then_some(idx)
    }

    /// Records a live container; returns the one it replaces, if any.
    pub(crate) fn insert(&mut self, seq: u64, idx: ContainerIdx) -> Option<ContainerIdx> {
        debug_assert!(idx != HOLE);
        let old = match self.find(seq) {
            Ok(at) => std::mem::replace(&mut self.entries[at].1, idx),
            // Containers recovered after a restart may come in any order.
            Err(at) => {
                if self.entries.capacity() == 0 {
                    // Room for a handful at once: most apps hold several
                    // containers, and growing from 4 costs a copy each time.
                    self.entries.reserve_exact(8);
                }
                self.entries.insert(at, (seq, idx));
                HOLE
            }
        };
        if old == HOLE {
            self.n_live += 1;
            None
        } else {
            Some(old)
        }
    }

    /// Forgets a container; returns it if it was live.
    pub(crate) fn remove(&mut self, seq: &u64) -> Option<ContainerIdx> {
        let at = self.find(*seq).ok()?;
        let old = std::mem::replace(&mut self.entries[at].1, HOLE);
        if old == HOLE {
            return None;
        }
        self.n_live -= 1;
        if self.entries.len() > 2 * self.n_live + 8 {
            self.entries.retain(|(_, idx)| *idx != HOLE);
        }
        Some(old)
    }

    /// The live containers, by sequence number.
    pub(crate) fn values(&self) -> impl Iterator<Item = &ContainerIdx> + '_ {
        self.entries
            .iter()
            .map(|(_, idx)| idx)
            .filter(|idx| **idx != HOLE)
    }

    fn find(&self, seq: u64) -> Result<usize, usize> {
        // New containers are the last; most lookups are of recent ones.
        match self.entries.last() {
            Some((last, _)) if *last < seq => Err(self.entries.len()),
            _ => self.entries.binary_search_by_key(&seq, |(s, _)| *s),
        }
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
        let idx = match self.free_containers.pop() {
            Some(i) => ContainerIdx(i),
            None => {
                self.containers.push(None);
                ContainerIdx(self.containers.len() as u32 - 1)
            }
        };
        container.node_pos = node.containers.len() as u32;
        node.containers.push(idx);
        self.containers[idx.0 as usize] = Some(container);
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
        let container = self.containers[idx.0 as usize]
            .take()
            .expect("live container index");
        self.free_containers.push(idx.0);
        self.n_containers -= 1;
        let node = self.nodes.get_mut(container.node);
        node.allocated -= container.resource;
        let pos = container.node_pos as usize;
        node.containers.swap_remove(pos);
        if let Some(moved) = node.containers.get(pos).copied() {
            self.containers[moved.0 as usize]
                .as_mut()
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
        let queue = self.tree.queue_path(self.tree.app_queue(h)).clone();
        self.tree.remove_usage(h, container.resource);
        let app = self.active_mut(h);
        app.containers.remove(&container.id.seq);
        app.holdings.remove(container.is_am);
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
        if container.is_am {
            let app_id = app.id;
            if let Some(record) = self.apps.get_mut(&app_id) {
                if record.am_container == Some(container.id) {
                    record.am_container = None;
                }
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

    proptest! {
        /// The book answers as a map from sequence numbers would, whatever
        /// the order of insertions (recovery) and removals.
        #[test]
        fn container_book_behaves_as_a_map(ops in prop::collection::vec((any::<bool>(), 0u64..64, 0u32..1000), 0..400)) {
            let mut book = ContainerBook::default();
            let mut model: BTreeMap<u64, ContainerIdx> = BTreeMap::new();
            let mut next_seq = 64;
            for (insert, seq, idx) in ops {
                if insert {
                    // Mostly the app's next number, sometimes an older one.
                    let seq = if idx % 4 == 0 { seq } else { next_seq += 1; next_seq };
                    prop_assert_eq!(book.insert(seq, ContainerIdx(idx)), model.insert(seq, ContainerIdx(idx)));
                } else {
                    // Remove a live one most of the time.
                    let seq = model.keys().nth(idx as usize % model.len().max(1)).copied().unwrap_or(seq);
                    prop_assert_eq!(book.remove(&seq), model.remove(&seq));
                }
                prop_assert_eq!(book.len(), model.len());
                prop_assert!(book.entries.len() <= 2 * book.len() + 8);
                prop_assert_eq!(book.values().copied().collect::<Vec<_>>(), model.values().copied().collect::<Vec<_>>());
                for s in [seq, next_seq, next_seq + 1] {
                    prop_assert_eq!(book.get(&s), model.get(&s));
                }
            }
        }
    }
}
