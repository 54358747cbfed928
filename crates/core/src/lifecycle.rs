//! Application inputs: ids, submission (placement, ACLs, limits), AM
//! registration, allocate calls (asks, releases, blacklist), finishing,
//! killing, moving, priority changes, and attempt failures.
//!
//! Where containers go is `assign`'s business; this module keeps each app's
//! lifecycle and requests.

use weft_model::{
    AppId, AppPriority, AttemptId, Priority, QueuePath, Resource, ResourceType, Time,
};
use weft_queue_tree::{
    GroupMapping, MAX_QUEUE_DEPTH, NewApp, Placement, PlacementRequest, QueueAccess, QueueKind,
};

use crate::input::{ANY, AllocateRequest, Ask, EndedApp, FinalStatus, RecoveredApp, Submission};
use crate::output::{
    AllocateError, AllocateReply, AppError, AppState, EndedAppError, Event, MoveError,
    NewApplicationReply, RegisterReply, StopReason, SubmitError, SubmitReply, exit_status,
};
use crate::requests::SchedKey;
use crate::rm::{ActiveApp, AppRecord, ResourceManager};

/// The AM container is asked for at priority 0, as YARN's RM does.
const AM_PRIORITY: Priority = Priority(0);

/// Where a recovered app goes when its queue can no longer hold apps (Hadoop's choice).
const RECOVERY_QUEUE: &str = "root.recovery";

/// Where and how `admit` adds an app.
struct Admission {
    queue: QueuePath,
    /// Its submission time (`now`, unless recovered with its own).
    submitted: Time,
    /// When its first container was allocated, for a recovered app that kept it.
    launched: Option<Time>,
    /// Placement allows creating the queue (and its missing parents).
    create: bool,
    /// The AM container's size, normalised; `None` for an unmanaged AM.
    am_resource: Option<Resource>,
    /// The attempt number to start at.
    attempt: u32,
    /// Ask for the AM container (false when a recovered attempt's AM container runs already).
    ask_for_am: bool,
    recovered: bool,
    /// When it is killed for its lifetime.
    lifetime_expiry: Option<Time>,
}

/// The groups a submission carries, served to placement.
struct ListedGroups<'a>(&'a [String]);

impl GroupMapping for ListedGroups<'_> {
    fn groups(&self, _user: &str) -> Vec<String> {
        self.0.to_vec()
    }
}

impl ResourceManager {
    pub(crate) fn new_application(&mut self) -> NewApplicationReply {
        let ts = self.settings.cluster_timestamp;
        // Skip ids submissions took without their being issued, so an issued
        // id is never in use; past `u32::MAX` the count starts again at 1
        // (a recovered or submitted id may have taken the last ones).
        let next = |seq: u32| seq.checked_add(1).unwrap_or(1);
        let mut seq = self.next_app_seq;
        while self.apps.contains_key(&AppId::new(ts, seq)) {
            seq = next(seq);
        }
        self.next_app_seq = next(seq);
        self.handles_by_seq.issued(seq);
        let app = AppId::new(ts, seq);
        NewApplicationReply {
            app,
            max_capability: self.settings.scheduler.max_allocation(),
        }
    }

    pub(crate) fn submit(
        &mut self,
        now: Time,
        mut sub: Submission,
    ) -> Result<SubmitReply, SubmitError> {
        // Lowered before anything is recorded, so even a refused app's
        // report shows the priority it would have had.
        sub.priority = self.settings.scheduler.cap_app_priority(sub.priority);
        if self.apps.contains_key(&sub.app) {
            return Err(SubmitError::Duplicate(sub.app));
        }
        // Refused before the app exists, as Hadoop's submission check does.
        if sub.lifetime == Some(weft_model::Duration::ZERO) {
            return Err(SubmitError::ZeroLifetime(sub.app));
        }
        self.flush_capacity();
        let requested = sub
            .queue
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty());
        let fallback_queue = requested
            .and_then(|q| QueuePath::parse(q).ok())
            .unwrap_or_else(|| QueuePath::parse("root.default").expect("valid"));
        let placement = self.placement.place(
            &PlacementRequest {
                requested_queue: requested,
                user: &sub.user,
            },
            &ListedGroups(&sub.groups),
            &self.tree,
        );
        let (queue, create) = match placement {
            Placement::Placed {
                queue,
                needs_create,
                ..
            } => (queue, needs_create),
            Placement::Rejected(why) => {
                self.counters.apps_submitted += 1;
                let err = SubmitError::Placement(why.to_string());
                self.record_rejection(now, &sub, fallback_queue, err.to_string());
                return Err(err);
            }
        };
        let allowed = self
            .tree
            .has_access(&queue, QueueAccess::SubmitApps, &sub.user, &sub.groups);
        if !allowed && self.settings.scheduler.acl_enable {
            // Hadoop's RMAppManager checks before the app exists when
            // `yarn.acl.enable` is on, so nothing is recorded or counted;
            // its scheduler's own check (below) only meets apps it let by.
            let checked = queue
                .self_and_ancestors()
                .find(|p| self.tree.queue_id(p).is_some())
                .unwrap_or_else(QueuePath::root);
            return Err(SubmitError::AclRefused {
                user: sub.user.clone(),
                app: sub.app,
                queue,
                checked,
            });
        }
        self.counters.apps_submitted += 1;
        if !allowed {
            let err = SubmitError::AccessDenied {
                user: sub.user.clone(),
                app: sub.app,
                queue: queue.clone(),
            };
            self.record_rejection(now, &sub, queue, err.to_string());
            return Err(err);
        }
        let am_resource = match sub.am_resource {
            Some(am) => {
                let max = self.settings.scheduler.max_allocation();
                if !am.fits_in(&max) {
                    let err = SubmitError::AmTooLarge {
                        app: sub.app,
                        queue: queue.clone(),
                        asked: am,
                        max,
                    };
                    self.record_rejection(now, &sub, queue, err.to_string());
                    return Err(err);
                }
                Some(self.settings.scheduler.normalize(am, max))
            }
            None => None,
        };
        let lifetime_expiry = lifetime_expiry(now, &sub);
        self.admit(
            now,
            sub,
            Admission {
                queue,
                submitted: now,
                launched: None,
                create,
                am_resource,
                attempt: 1,
                ask_for_am: true,
                recovered: false,
                lifetime_expiry,
            },
        )
    }

    /// Takes back an application after a restart of the ResourceManager:
    /// into the queue it ran in, without placement or ACL checks (as Hadoop's
    /// recovery does), or into `root.recovery` when that queue can no longer
    /// hold apps. Its attempt keeps its number; an AM container already
    /// allocated is not asked for again, since its node brings it back.
    pub(crate) fn recover_app(
        &mut self,
        now: Time,
        rec: RecoveredApp,
    ) -> Result<SubmitReply, SubmitError> {
        let RecoveredApp {
            submission: mut sub,
            queue,
            attempt,
            am_container_allocated,
            lifetime_expiry,
            submitted,
            launched,
        } = rec;
        if self.apps.contains_key(&sub.app) {
            return Err(SubmitError::Duplicate(sub.app));
        }
        // The cap in force now, which may be lower than the one the app
        // was submitted under (Hadoop keeps a recovered app's priority).
        sub.priority = self.settings.scheduler.cap_app_priority(sub.priority);
        self.issue_past(sub.app);
        self.flush_capacity();
        let am_resource = sub.am_resource.map(|am| {
            let max = self.settings.scheduler.max_allocation();
            self.settings.scheduler.normalize(am, max)
        });
        // The queue must be a leaf (or creatable as one) under parents only,
        // and no deeper than the tree takes.
        let usable = queue.depth() <= MAX_QUEUE_DEPTH
            && queue.self_and_ancestors().all(|p| {
                let wanted = if p == queue {
                    QueueKind::Leaf
                } else {
                    QueueKind::Parent
                };
                self.tree
                    .queue_id(&p)
                    .is_none_or(|q| self.tree.queue_kind(q) == wanted)
            });
        let queue = if usable {
            queue
        } else {
            QueuePath::parse(RECOVERY_QUEUE).expect("valid")
        };
        self.admit(
            now,
            sub,
            Admission {
                queue,
                submitted: submitted.unwrap_or(now),
                launched,
                create: true,
                am_resource,
                attempt: attempt.max(1),
                ask_for_am: !am_container_allocated,
                recovered: true,
                lifetime_expiry,
            },
        )
    }

    /// Adds a placed (or recovered) app to the tree and the books.
    fn admit(
        &mut self,
        now: Time,
        sub: Submission,
        admission: Admission,
    ) -> Result<SubmitReply, SubmitError> {
        let Admission {
            queue,
            submitted,
            launched,
            create,
            am_resource,
            attempt,
            ask_for_am,
            recovered,
            lifetime_expiry,
        } = admission;
        // The tree is walked level by level on the stack, and the event for
        // the queues created names each of them: a placement may create
        // however deep a path a submission names, so the depth is bounded here.
        if queue.depth() > MAX_QUEUE_DEPTH {
            let err = SubmitError::Queue {
                app: sub.app,
                queue: queue.clone(),
                why: format!(
                    "it is {} levels below root; queues may be nested at most {MAX_QUEUE_DEPTH} levels deep",
                    queue.depth()
                ),
            };
            self.record_rejection(now, &sub, queue, err.to_string());
            return Err(err);
        }
        let mut missing: Vec<QueuePath> = queue
            .self_and_ancestors()
            .filter(|p| self.tree.queue_id(p).is_none())
            .collect();
        missing.reverse();
        let added = match self.tree.add_app(NewApp {
            id: sub.app,
            queue: queue.clone(),
            create_queue: create,
            user: sub.user.clone(),
            start: now,
            priority: sub.priority,
            am_resource,
        }) {
            Ok(added) => added,
            Err(e) => {
                let err = SubmitError::Queue {
                    app: sub.app,
                    queue: queue.clone(),
                    why: e.to_string(),
                };
                self.record_rejection(now, &sub, queue, err.to_string());
                return Err(err);
            }
        };
        if !missing.is_empty() {
            self.events.push(Event::QueuesChanged {
                created: missing,
                removed: Vec::new(),
            });
        }
        // The AM container must fit the queue's largest container.
        if let Some(am) = am_resource {
            let max = self.tree.max_container_allocation(added.queue);
            if !am.fits_in(&max) {
                self.tree.remove_app(added.handle);
                let err = SubmitError::AmTooLarge {
                    app: sub.app,
                    queue: queue.clone(),
                    asked: am,
                    max,
                };
                self.record_rejection(now, &sub, queue, err.to_string());
                return Err(err);
            }
        }
        let h = added.handle;
        let attempt = AttemptId::new(sub.app, attempt);
        let mut active = ActiveApp {
            id: sub.app,
            handle: h,
            attempt,
            requests: Default::default(),
            containers: Default::default(),
            next_container_seq: 1,
            newly_allocated: Vec::new(),
            node_updates_seen: self.node_updates.end(),
            last_collected: 0,
            completed: Vec::new(),
            blacklist: Default::default(),
            am_registered: false,
            reservations: Default::default(),
            finishing: false,
            // A recovered app's earlier attempts are taken to have failed:
            // the store does not say why they ended.
            failed_attempts: attempt.attempt - 1,
            max_attempts: self.settings.app_max_attempts(sub.max_attempts),
            launched: false,
            memory_mb_ms: 0,
            vcore_ms: 0,
            holdings: Default::default(),
            set_aside_on: Default::default(),
            am_expires: None,
            am_timed_out: false,
        };
        if let Some(am) = am_resource.filter(|_| ask_for_am) {
            active.requests.add_any(
                SchedKey {
                    priority: AM_PRIORITY,
                    capability: am,
                },
                1,
            );
        }
        let pending = active.requests.pending();
        if self.active.len() <= h.index() {
            self.active.resize_with(h.index() + 1, || None);
        }
        self.active[h.index()] = Some(active);
        if sub.app.cluster_timestamp == self.settings.cluster_timestamp {
            self.handles_by_seq.insert(sub.app.seq, h);
        }
        self.tree.set_pending(h, pending);
        // An unmanaged AM runs from its submission on, and a recovered AM
        // container may be running still; a managed AM is watched from its
        // container's allocation.
        if am_resource.is_none() || !ask_for_am {
            self.am_alive(now, h);
        }
        let (state, diagnostics) = match &added.waiting {
            None if recovered && am_resource.is_some() && ask_for_am => (
                AppState::Accepted,
                "recovered after a resource manager restart: waiting for its application master container".to_owned(),
            ),
            None if recovered => (
                AppState::Accepted,
                "recovered after a resource manager restart: waiting for its application master to register again".to_owned(),
            ),
            None if am_resource.is_none() => (
                AppState::Accepted,
                "accepted: waiting for its unmanaged application master to register".to_owned(),
            ),
            None => (
                AppState::Accepted,
                "accepted: waiting for its application master container".to_owned(),
            ),
            Some(why) => (AppState::WaitingForLimit, format!("waiting: {why}")),
        };
        self.apps.insert(
            sub.app,
            AppRecord {
                id: sub.app,
                user: sub.user,
                name: sub.name,
                app_type: sub.app_type,
                tags: sub.tags,
                queue: queue.clone(),
                state,
                final_status: None,
                diagnostics: diagnostics.clone(),
                priority: sub.priority,
                am_resource,
                submitted,
                lifetime_expiry,
                launched,
                finished: None,
                attempt,
                progress: 0.0,
                am_container: None,
                memory_mb_seconds: 0,
                vcore_seconds: 0,
                preempted_containers: 0,
                preempted_am_containers: 0,
                preempted_resource: Resource::ZERO,
                handle: Some(h),
            },
        );
        self.arm_lifetime(sub.app, lifetime_expiry);
        self.events.push(Event::AppStateChanged {
            app: sub.app,
            queue: queue.clone(),
            state,
            diagnostics: diagnostics.clone(),
        });
        Ok(SubmitReply {
            queue,
            state,
            diagnostics,
        })
    }

    /// Takes back an app that had ended before a restart: straight into
    /// the finished apps, as it ended, where it is forgotten in its turn by
    /// its finish time. No queue, usage or running-app count sees it, as
    /// Hadoop's recovery of a completed app never reaches its scheduler.
    pub(crate) fn recover_ended_app(&mut self, ended: EndedApp) -> Result<(), EndedAppError> {
        let EndedApp {
            app,
            user,
            name,
            app_type,
            tags,
            queue,
            state,
            final_status,
            diagnostics,
            priority,
            am_resource,
            submitted,
            launched,
            finished,
            lifetime_expiry,
            attempt,
            progress,
            memory_mb_seconds,
            vcore_seconds,
            preempted_containers,
            preempted_am_containers,
            preempted_resource,
        } = ended;
        if !state.is_final() {
            return Err(EndedAppError::NotEnded { app, state });
        }
        if self.apps.contains_key(&app) {
            return Err(EndedAppError::Duplicate(app));
        }
        // Even if history has no room for it: its id must not be issued again.
        self.issue_past(app);
        self.apps.insert(
            app,
            AppRecord {
                id: app,
                user,
                name,
                app_type,
                tags,
                queue,
                state,
                final_status,
                diagnostics,
                priority,
                am_resource,
                submitted,
                lifetime_expiry,
                launched,
                finished: Some(finished),
                attempt: AttemptId::new(app, attempt.max(1)),
                // As an AM may report it (NaN and below 0 are 0, above 1 is 1).
                progress: if progress > 0.0 {
                    progress.min(1.0)
                } else {
                    0.0
                },
                am_container: None,
                memory_mb_seconds,
                vcore_seconds,
                preempted_containers,
                preempted_am_containers,
                preempted_resource,
                handle: None,
            },
        );
        // After every app that finished no later, so the drop order stays
        // the finish order whatever order the driver gives them in (in
        // order, this is a push at the back).
        let at = self
            .finished_order
            .iter()
            .rposition(|a| self.apps[a].finished.is_none_or(|f| f <= finished))
            .map_or(0, |i| i + 1);
        self.finished_order.insert(at, app);
        self.trim_finished();
        Ok(())
    }

    /// Never issues `app`'s number again, if this cluster issued it.
    fn issue_past(&mut self, app: AppId) {
        if app.cluster_timestamp == self.settings.cluster_timestamp {
            self.next_app_seq = self.next_app_seq.max(app.seq.saturating_add(1));
        }
    }

    fn record_rejection(
        &mut self,
        now: Time,
        sub: &Submission,
        queue: QueuePath,
        diagnostics: String,
    ) {
        self.apps.insert(
            sub.app,
            AppRecord {
                id: sub.app,
                user: sub.user.clone(),
                name: sub.name.clone(),
                app_type: sub.app_type.clone(),
                tags: sub.tags.clone(),
                queue: queue.clone(),
                state: AppState::Rejected,
                final_status: Some(FinalStatus::Failed),
                diagnostics: diagnostics.clone(),
                priority: sub.priority,
                am_resource: sub.am_resource,
                submitted: now,
                // Reported as Hadoop reports a refused app's timeouts; never watched.
                lifetime_expiry: lifetime_expiry(now, sub),
                launched: None,
                finished: Some(now),
                attempt: AttemptId::new(sub.app, 1),
                progress: 0.0,
                am_container: None,
                memory_mb_seconds: 0,
                vcore_seconds: 0,
                preempted_containers: 0,
                preempted_am_containers: 0,
                preempted_resource: Resource::ZERO,
                handle: None,
            },
        );
        self.remember_finished(sub.app);
        self.events.push(Event::AppStateChanged {
            app: sub.app,
            queue,
            state: AppState::Rejected,
            diagnostics,
        });
    }

    /// The app's tree handle if it is still scheduling, or why not.
    pub(crate) fn live_handle(&self, app: AppId) -> Result<weft_queue_tree::AppHandle, AppError> {
        let record = self.apps.get(&app).ok_or(AppError::UnknownApp(app))?;
        record.handle.ok_or(AppError::AlreadyEnded {
            app,
            state: record.state,
        })
    }

    pub(crate) fn register_am(&mut self, now: Time, app: AppId) -> Result<RegisterReply, AppError> {
        let h = self.live_handle(app)?;
        let managed_without_container = {
            let record = &self.apps[&app];
            record.am_resource.is_some() && record.am_container.is_none()
        };
        let active = self.active(h);
        if active.am_registered {
            return Err(AppError::CannotRegister {
                app,
                why: "its application master is already registered",
            });
        }
        if active.finishing {
            return Err(AppError::CannotRegister {
                app,
                why: "its attempt has finished",
            });
        }
        if managed_without_container {
            return Err(AppError::CannotRegister {
                app,
                why: "its application master container has not been allocated yet",
            });
        }
        self.active_mut(h).am_registered = true;
        self.am_alive(now, h);
        let queue = self.tree.queue_path(self.tree.app_queue(h)).clone();
        let record = self.apps.get_mut(&app).expect("known app");
        record.state = AppState::Running;
        record.diagnostics = "running".to_owned();
        self.events.push(Event::AppStateChanged {
            app,
            queue: queue.clone(),
            state: AppState::Running,
            diagnostics: "application master registered".to_owned(),
        });
        Ok(RegisterReply {
            max_capability: self.tree.max_container_allocation(self.tree.app_queue(h)),
            queue,
        })
    }

    pub(crate) fn allocate(
        &mut self,
        now: Time,
        req: AllocateRequest,
    ) -> Result<AllocateReply, AllocateError> {
        let h = self.live_handle(req.app)?;
        if !self.active(h).am_registered {
            return Err(AllocateError::NotRegistered(req.app));
        }
        // A call the RM refuses still shows the AM is alive, as in YARN.
        self.am_alive(now, h);
        self.flush_capacity();
        let leaf = self.tree.app_queue(h);
        let max_share = self.tree.queue_settings(leaf).max_share;
        let queue_max_container = self.tree.max_container_allocation(leaf);
        let scheduler_max = self.settings.scheduler.max_allocation();
        // Validate everything before changing anything: Hadoop refuses the whole list.
        let mut normalized = Vec::with_capacity(req.asks.len());
        for ask in &req.asks {
            if ask.resource_name.trim().is_empty() {
                return Err(AllocateError::InvalidAsk(format!(
                    "an ask at priority {} has an empty resource name (use a host, a rack such as /rack1, or *)",
                    ask.priority
                )));
            }
            if !ask.capability.fits_in(&scheduler_max) {
                return Err(AllocateError::InvalidAsk(format!(
                    "an ask for {} is larger than the maximum allocation {scheduler_max}",
                    ask.capability
                )));
            }
            for ty in ResourceType::ALL {
                if ask.capability.get(ty) > 0 && max_share.get(ty) == 0 {
                    return Err(AllocateError::ZeroMaxShare {
                        queue: self.tree.queue_path(leaf).clone(),
                        capability: ask.capability,
                    });
                }
            }
            let capability = self
                .settings
                .scheduler
                .normalize(ask.capability, queue_max_container);
            // A container of nothing would never be pending demand, so the
            // ask would sit unserved with nobody told why.
            if capability == Resource::ZERO && ask.num_containers > 0 {
                return Err(AllocateError::InvalidAsk(format!(
                    "an ask for {} at priority {} comes to no resources at all once normalised \
                     (the minimum allocation is {}, queue {}'s largest container {queue_max_container})",
                    ask.capability,
                    ask.priority,
                    self.settings.scheduler.min_allocation(),
                    self.tree.queue_path(leaf),
                )));
            }
            normalized.push(capability);
        }
        let finishing = self.active(h).finishing;
        if !finishing {
            let active = self.active_mut(h);
            for (ask, capability) in req.asks.iter().zip(normalized) {
                active.requests.update(ask, capability);
            }
        }
        // Each id is looked up when its turn comes, not all first: a list
        // may name a container twice, and releasing the AM's own container
        // ends its attempt's other containers (or the app) on the way.
        let attempt = self.active(h).attempt;
        for id in &req.releases {
            if let Some(c) = self.find_container(id)
                && self.container(c).app == h
            {
                self.end_container(
                    self.last_now,
                    c,
                    exit_status::ABORTED,
                    "released by the application master".to_owned(),
                    Some(StopReason::Released),
                );
            }
        }
        // The caller released its own AM container: its attempt is over, and
        // the rest of its call must not reach the next attempt (or an app
        // that failed with it).
        self.live_handle(req.app)?;
        if self.active(h).attempt != attempt {
            return Err(AllocateError::NotRegistered(req.app));
        }
        let active = self.active_mut(h);
        for name in &req.blacklist_additions {
            active.blacklist.insert(name.clone());
        }
        for name in &req.blacklist_removals {
            active.blacklist.remove(name);
        }
        let pending = active.requests.pending();
        if let Some(record) = self.apps.get_mut(&req.app) {
            // As Hadoop filters it: NaN and anything below 0 is 0 (so is -0.0,
            // which prints as "-0"), anything above 1 is 1.
            record.progress = if req.progress > 0.0 {
                req.progress.min(1.0)
            } else {
                0.0
            };
        }
        self.tree.set_pending(h, pending);
        let available = self.tree.headroom(h, self.cluster_free_for(h));
        let num_cluster_nodes = self.nodes.n_running;
        let active = self.active_mut(h);
        active.last_collected = active.newly_allocated.len() as u32;
        Ok(AllocateReply {
            allocated: std::mem::take(&mut active.newly_allocated),
            completed: std::mem::take(&mut active.completed),
            preemption: self.preemption_message(h),
            available,
            num_cluster_nodes,
            updated_nodes: self.take_node_updates(h),
        })
    }

    /// Free resources in the cluster minus what is free on the app's
    /// blacklisted nodes, whether listed by host or by rack (each node once).
    fn cluster_free_for(&self, h: weft_queue_tree::AppHandle) -> Resource {
        let mut free = self.tree.cluster_available();
        let mut blacklisted = std::collections::BTreeSet::new();
        for name in &self.active(h).blacklist {
            blacklisted.extend(self.nodes.by_name(name).iter().copied());
            if let Some(rack) = self.nodes.racks.get(name) {
                blacklisted.extend(rack.iter().copied());
            }
        }
        for idx in blacklisted {
            free -= self.nodes.get(idx).available();
        }
        free
    }

    pub(crate) fn finish_attempt(
        &mut self,
        now: Time,
        app: AppId,
        outcome: FinalStatus,
        diagnostics: String,
    ) -> Result<(), AppError> {
        let h = self.live_handle(app)?;
        if !self.active(h).am_registered {
            return Err(AppError::NotRegistered {
                app,
                action: "finishing",
            });
        }
        self.events.push(Event::AttemptFinished {
            app,
            outcome: Some(outcome),
            diagnostics: diagnostics.clone(),
        });
        let diagnostics = if diagnostics.is_empty() {
            format!("application master reported {outcome:?}")
        } else {
            diagnostics
        };
        self.end_app(now, h, AppState::Finished, Some(outcome), diagnostics);
        Ok(())
    }

    pub(crate) fn kill_app(
        &mut self,
        now: Time,
        app: AppId,
        reason: String,
    ) -> Result<(), AppError> {
        let h = self.live_handle(app)?;
        self.end_app(now, h, AppState::Killed, Some(FinalStatus::Killed), reason);
        Ok(())
    }

    pub(crate) fn move_app(
        &mut self,
        now: Time,
        app: AppId,
        queue: &QueuePath,
    ) -> Result<(), MoveError> {
        let h = self.live_handle(app)?;
        let woken = self.tree.move_app(h, queue)?;
        let target = self.tree.queue_path(self.tree.app_queue(h)).clone();
        if let Some(record) = self.apps.get_mut(&app) {
            record.queue = target;
        }
        // A waiting app that can run in its new queue says so, like any other
        // app whose wait ends.
        if self.tree.app_is_runnable(h) {
            self.app_became_runnable(now, app);
        }
        for w in woken {
            self.app_became_runnable(now, w);
        }
        Ok(())
    }

    /// Sets the app's priority, lowered to the cap as a submission's is;
    /// its report shows the priority in force.
    pub(crate) fn set_priority(
        &mut self,
        app: AppId,
        priority: AppPriority,
    ) -> Result<(), AppError> {
        let h = self.live_handle(app)?;
        let priority = self.settings.scheduler.cap_app_priority(priority);
        self.tree.set_app_priority(h, priority);
        if let Some(record) = self.apps.get_mut(&app) {
            record.priority = priority;
        }
        Ok(())
    }

    /// Ends an app: drops its reservations and hand-backs, stops its
    /// containers, takes it out of the tree (waking apps its slot frees) and
    /// records the final state.
    pub(crate) fn end_app(
        &mut self,
        now: Time,
        h: weft_queue_tree::AppHandle,
        state: AppState,
        final_status: Option<FinalStatus>,
        diagnostics: String,
    ) {
        self.active_mut(h).finishing = true;
        self.am_gone(h);
        let app = self.active(h).id;
        self.disarm_lifetime(app);
        let reserved: Vec<_> = self.active(h).reservations.iter().copied().collect();
        for node in reserved {
            self.release_reservation(node, "its application ended");
        }
        self.drop_set_asides(h);
        let containers: Vec<_> = self.active(h).containers.values().copied().collect();
        for c in containers {
            self.end_container(
                now,
                c,
                exit_status::KILLED_AFTER_APP_COMPLETION,
                format!("container stopped: its application {state}"),
                Some(StopReason::AppFinished),
            );
        }
        let queue = self.tree.queue_path(self.tree.app_queue(h)).clone();
        let woken = self.tree.remove_app(h);
        let gone = self.active[h.index()]
            .take()
            .expect("active app for a live handle");
        self.handles_by_seq.remove(app.seq, h);
        if let Some(record) = self.apps.get_mut(&app) {
            record.memory_mb_seconds += gone.memory_mb_ms / 1000;
            record.vcore_seconds += gone.vcore_ms / 1000;
            record.state = state;
            record.final_status = final_status;
            record.diagnostics = diagnostics.clone();
            record.finished = Some(now);
            record.handle = None;
        }
        self.remember_finished(app);
        self.events.push(Event::AppStateChanged {
            app,
            queue,
            state,
            diagnostics,
        });
        for w in woken {
            self.app_became_runnable(now, w);
        }
    }

    fn remember_finished(&mut self, app: AppId) {
        self.finished_order.push_back(app);
        self.trim_finished();
    }

    /// Forgets the earliest finished apps past `max_completed_apps`.
    fn trim_finished(&mut self) {
        while self.finished_order.len() > self.settings.max_completed_apps {
            if let Some(old) = self.finished_order.pop_front() {
                self.apps.remove(&old);
            }
        }
    }

    /// The AM container ended. If the attempt had not finished, the attempt
    /// failed: start another (preemption and lost nodes do not count against
    /// the app, as in YARN) or fail the app.
    pub(crate) fn am_container_ended(
        &mut self,
        now: Time,
        h: weft_queue_tree::AppHandle,
        status: i32,
    ) {
        if self.active(h).finishing {
            return;
        }
        let app = self.active(h).id;
        // A silent AM's attempt counts as failed whatever its container's
        // status, as YARN's expiry does.
        let timed_out = std::mem::take(&mut self.active_mut(h).am_timed_out);
        let cause = if timed_out {
            format!(
                "application master made no allocate call for {}",
                self.settings.scheduler.am_liveness_expiry
            )
        } else {
            format!("application master container exited with status {status}")
        };
        let counts = timed_out || !matches!(status, exit_status::PREEMPTED | exit_status::ABORTED);
        if counts {
            self.active_mut(h).failed_attempts += 1;
        }
        let failed = self.active(h).failed_attempts;
        if failed >= self.active(h).max_attempts {
            let diagnostics =
                format!("{cause}; the application failed {failed} attempt(s), the most allowed");
            self.end_app(
                now,
                h,
                AppState::Failed,
                Some(FinalStatus::Failed),
                diagnostics,
            );
            return;
        }
        // A new attempt: the old attempt's containers go, its asks are forgotten.
        self.active_mut(h).finishing = true;
        let containers: Vec<_> = self.active(h).containers.values().copied().collect();
        for c in containers {
            self.end_container(
                now,
                c,
                exit_status::KILLED_BY_RESOURCEMANAGER,
                "container stopped: its application attempt failed".to_owned(),
                Some(StopReason::AppFinished),
            );
        }
        let reserved: Vec<_> = self.active(h).reservations.iter().copied().collect();
        for node in reserved {
            self.release_reservation(node, "its application attempt failed");
        }
        self.tree.am_stopped(h);
        let am = self.apps[&app].am_resource;
        // The new attempt's AM is watched from its container's allocation.
        self.am_gone(h);
        let active = self.active_mut(h);
        active.finishing = false;
        active.attempt = AttemptId::new(app, active.attempt.attempt + 1);
        active.next_container_seq = 1;
        active.am_registered = false;
        active.launched = false;
        active.requests.clear();
        // The new attempt's AM hears only about its own containers.
        active.newly_allocated.clear();
        active.completed.clear();
        if let Some(am) = am {
            active.requests.add_any(
                SchedKey {
                    priority: AM_PRIORITY,
                    capability: am,
                },
                1,
            );
        }
        let attempt = active.attempt;
        let pending = active.requests.pending();
        self.tree.set_pending(h, pending);
        let queue = self.tree.queue_path(self.tree.app_queue(h)).clone();
        let diagnostics = if timed_out {
            format!("{cause}; starting attempt {}", attempt.attempt)
        } else {
            format!(
                "application master exited with status {status}; starting attempt {}",
                attempt.attempt
            )
        };
        if let Some(record) = self.apps.get_mut(&app) {
            record.attempt = attempt;
            record.state = AppState::Accepted;
            record.diagnostics = diagnostics.clone();
        }
        self.events.push(Event::AttemptFinished {
            app,
            outcome: None,
            diagnostics: cause,
        });
        self.events.push(Event::AppStateChanged {
            app,
            queue,
            state: AppState::Accepted,
            diagnostics,
        });
    }
}

/// When a submission at `now` is killed for its lifetime: never for no
/// lifetime, or one of `Duration::MAX` (YARN's unlimited).
fn lifetime_expiry(now: Time, sub: &Submission) -> Option<Time> {
    sub.lifetime
        .filter(|l| !l.is_forever())
        .map(|l| now.saturating_add(l))
}

/// An ask for anywhere, for tests and drivers that build requests by hand.
pub fn ask_anywhere(priority: i32, capability: Resource, num_containers: u32) -> Ask {
    Ask {
        priority: Priority(priority),
        resource_name: ANY.to_owned(),
        capability,
        num_containers,
        relax_locality: true,
    }
}
