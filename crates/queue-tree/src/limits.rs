//! Running-app limits (Hadoop's `MaxRunningAppsEnforcer`): `maxRunningApps`
//! on a leaf and every ancestor, and per user; apps over a limit wait and
//! become runnable in start-time order as others leave or limits rise.
//!
//! Lowering a limit never stops a running app; only new apps wait.

use std::ops::ControlFlow;

use weft_model::{AppId, Time};

use crate::apps::WaitReason;
use crate::config::QueueKind;
use crate::tree::{AppHandle, QueueId, QueueTree, ROOT};

/// A running-app limit holding a waiting app back, with the numbers behind
/// it: what an explanation of the wait shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningAppWait {
    /// The limit reached: the user's, or a queue's on the app's path.
    pub reason: WaitReason,
    /// For a user's limit: it is `userMaxAppsDefault`, the user having no
    /// `maxRunningApps` of their own.
    pub from_default: bool,
    /// Runnable apps counted against the limit now.
    pub running: u32,
    /// The app's place, from 1, among the apps waiting under this limit,
    /// in the order they are woken (submission time, then id).
    pub position: u32,
    /// Apps waiting under this limit.
    pub waiting: u32,
}

impl QueueTree {
    /// Why an app of `user` in `leaf` could not be runnable now, if anything stops it.
    pub(crate) fn runnable_check(&self, leaf: QueueId, user: &str) -> Option<WaitReason> {
        match self.limits_reached(leaf, user, |reason, _| ControlFlow::Break(reason)) {
            ControlFlow::Break(reason) => Some(reason),
            ControlFlow::Continue(()) => None,
        }
    }

    /// Every running-app limit that holds the waiting app `h` back now,
    /// the user's first, then its leaf's and each ancestor's: the limits
    /// `runnable_check` tries, in its order, with their counts and the
    /// app's place in each waiting line. Empty for a runnable app, and for
    /// a waiting app no limit holds any more (it is woken when an app
    /// under one of its queues leaves or the configuration is reloaded).
    pub fn running_app_waits(&self, h: AppHandle) -> Vec<RunningAppWait> {
        let app = self.app(h);
        if app.runnable {
            return Vec::new();
        }
        let entry = (app.start, app.tie, h);
        let mut waits = Vec::new();
        let _ = self.limits_reached(app.queue, &app.user, |reason, running| {
            let (line, from_default) = match &reason {
                WaitReason::UserLimit { user, .. } => (
                    self.users
                        .get(user)
                        .map(|u| u.waiting.iter().copied().collect())
                        .unwrap_or_default(),
                    !self.config.user_max_apps.contains_key(user),
                ),
                WaitReason::QueueLimit { queue, .. } => {
                    let mut line = Vec::new();
                    if let Some(q) = self.queue_id(queue) {
                        self.waiting_under(q, &mut line);
                    }
                    line.sort_unstable();
                    (line, false)
                }
            };
            let position = line.iter().position(|e| *e == entry).map_or(0, |i| i + 1);
            waits.push(RunningAppWait {
                reason,
                from_default,
                running,
                position: position as u32,
                waiting: line.len() as u32,
            });
            ControlFlow::<()>::Continue(())
        });
        waits
    }

    /// Calls `f` with each running-app limit an app of `user` in `leaf`
    /// would go over now and the runnable apps counted against it: the
    /// user's first, then the leaf's and each ancestor's.
    fn limits_reached<B>(
        &self,
        leaf: QueueId,
        user: &str,
        mut f: impl FnMut(WaitReason, u32) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let user_running = self.users.get(user).map_or(0, |u| u.n_runnable);
        if let Some(limit) = self.config.user_max_apps(user)
            && user_running >= limit
        {
            f(
                WaitReason::UserLimit {
                    user: user.to_owned(),
                    limit,
                },
                user_running,
            )?;
        }
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            let queue = self.queue(q);
            if let Some(limit) = queue.settings.max_running_apps
                && queue.n_runnable >= limit
            {
                f(
                    WaitReason::QueueLimit {
                        queue: queue.path.clone(),
                        limit,
                    },
                    queue.n_runnable,
                )?;
            }
            cur = queue.parent;
        }
        ControlFlow::Continue(())
    }

    /// Every app waiting in the leaves under `id`, whatever limits they meet.
    fn waiting_under(&self, id: QueueId, out: &mut Vec<(Time, u128, AppHandle)>) {
        let queue = self.queue(id);
        match queue.kind {
            QueueKind::Leaf => out.extend(queue.waiting_apps.iter().copied()),
            QueueKind::Parent => {
                for child in &queue.children {
                    self.waiting_under(*child, out);
                }
            }
        }
    }

    /// Makes an app runnable: counted on its path and for its user, offered
    /// nodes once it has pending asks, its AM (if started) counted against the AM share.
    pub(crate) fn make_runnable(&mut self, h: AppHandle) {
        let (leaf, user) = (self.app(h).queue, self.app(h).user.clone());
        let pos = self.queue(leaf).runnable_apps.len() as u32;
        self.queue_mut(leaf).runnable_apps.push(h);
        let app = self.app_mut(h);
        app.runnable = true;
        app.runnable_pos = pos;
        if app.am_started {
            let am = app.am_resource;
            self.queue_mut(leaf).am_usage += am;
        }
        self.users.entry(user).or_default().n_runnable += 1;
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            self.queue_mut(q).n_runnable += 1;
            cur = self.queue(q).parent;
        }
        let pending = self.app(h).pending;
        self.set_pending(h, pending);
    }

    /// The reverse of `make_runnable`.
    pub(crate) fn make_not_runnable(&mut self, h: AppHandle) {
        self.set_app_listed(h, false);
        let (leaf, user, pos) = (
            self.app(h).queue,
            self.app(h).user.clone(),
            self.app(h).runnable_pos,
        );
        let list = &mut self.queue_mut(leaf).runnable_apps;
        list.swap_remove(pos as usize);
        if let Some(moved) = list.get(pos as usize).copied() {
            self.app_mut(moved).runnable_pos = pos;
        }
        let app = self.app_mut(h);
        app.runnable = false;
        if app.am_started {
            let am = app.am_resource;
            self.queue_mut(leaf).am_usage -= am;
        }
        if let Some(u) = self.users.get_mut(&user) {
            u.n_runnable -= 1;
        }
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            self.queue_mut(q).n_runnable -= 1;
            cur = self.queue(q).parent;
        }
    }

    pub(crate) fn add_waiting(&mut self, h: AppHandle) {
        let app = self.app(h);
        let entry = (app.start, app.tie, h);
        let (leaf, user) = (app.queue, app.user.clone());
        self.queue_mut(leaf).waiting_apps.insert(entry);
        self.users.entry(user).or_default().waiting.insert(entry);
    }

    pub(crate) fn remove_waiting(&mut self, h: AppHandle) {
        let app = self.app(h);
        let entry = (app.start, app.tie, h);
        let (leaf, user) = (app.queue, app.user.clone());
        self.queue_mut(leaf).waiting_apps.remove(&entry);
        if let Some(u) = self.users.get_mut(&user) {
            u.waiting.remove(&entry);
        }
    }

    /// After a runnable app of `user` left `leaf` (counts already lowered):
    /// wake waiting apps that now fit, in start-time order, as Hadoop does.
    ///
    /// Only a queue that was exactly at its limit can have freed a slot, so
    /// the candidates are the waiting lists under the highest such queue on
    /// the path, plus the user's own waiting list if the user was at theirs.
    pub(crate) fn wake_after_removal(&mut self, leaf: QueueId, user: &str) -> Vec<AppId> {
        let mut highest = None;
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            let queue = self.queue(q);
            if queue
                .settings
                .max_running_apps
                .is_some_and(|limit| queue.n_runnable + 1 == limit)
            {
                highest = Some(q);
            }
            cur = queue.parent;
        }
        let mut lists: Vec<Vec<(Time, u128, AppHandle)>> = Vec::new();
        if let Some(q) = highest {
            self.gather_waiting_lists(q, &mut lists);
        }
        let user_running = self.users.get(user).map_or(0, |u| u.n_runnable);
        if self
            .config
            .user_max_apps(user)
            .is_some_and(|limit| user_running + 1 == limit)
            && let Some(u) = self.users.get(user)
            && !u.waiting.is_empty()
        {
            lists.push(u.waiting.iter().copied().collect());
        }
        let max_woken = lists.len();
        self.wake_candidates(lists, max_woken)
    }

    /// After a new configuration: re-check every waiting app under queues
    /// with room (raising a limit releases waiters at once).
    pub(crate) fn update_runnability_on_reload(&mut self) -> Vec<AppId> {
        let mut lists = Vec::new();
        self.gather_waiting_lists(ROOT, &mut lists);
        self.wake_candidates(lists, usize::MAX)
    }

    fn gather_waiting_lists(&self, id: QueueId, lists: &mut Vec<Vec<(Time, u128, AppHandle)>>) {
        let queue = self.queue(id);
        if queue
            .settings
            .max_running_apps
            .is_some_and(|limit| queue.n_runnable >= limit)
        {
            return;
        }
        match queue.kind {
            QueueKind::Leaf => {
                if !queue.waiting_apps.is_empty() {
                    lists.push(queue.waiting_apps.iter().copied().collect());
                }
            }
            QueueKind::Parent => {
                for child in &queue.children {
                    self.gather_waiting_lists(*child, lists);
                }
            }
        }
    }

    /// Walks the candidates in start-time order (the lists merged), making
    /// each runnable if it passes every check now, until `max_woken` are.
    fn wake_candidates(
        &mut self,
        lists: Vec<Vec<(Time, u128, AppHandle)>>,
        max_woken: usize,
    ) -> Vec<AppId> {
        let mut candidates: Vec<(Time, u128, AppHandle)> = lists.into_iter().flatten().collect();
        candidates.sort();
        candidates.dedup();
        let mut woken = Vec::new();
        for (_, _, h) in candidates {
            if woken.len() >= max_woken {
                break;
            }
            let app = self.app(h);
            if app.runnable {
                continue;
            }
            if self.runnable_check(app.queue, &app.user).is_none() {
                self.remove_waiting(h);
                self.make_runnable(h);
                woken.push(self.app(h).id);
            }
        }
        woken
    }
}
