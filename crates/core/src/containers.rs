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
        app.requests.allocate(key, locality, &node.name, &node.rack);
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
