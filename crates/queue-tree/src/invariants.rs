//! `QueueTree::check_invariants`: the tree's bookkeeping checked from
//! scratch, for tests, property tests and the simulator to call after every
//! step.
//!
//! It recomputes what the tree maintains incrementally (usage sums, counts,
//! ordered sets and their keys) and reports every disagreement.

use weft_model::Resource;

use crate::config::QueueKind;
use crate::ordering::OrderKey;
use crate::tree::{AppHandle, QueueId, QueueTree, ROOT};

/// Broken bookkeeping: always a bug in Weft, never bad input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("queue tree invariants broken:\n{}", .problems.join("\n"))]
pub struct InvariantViolation {
    /// One line per problem.
    pub problems: Vec<String>,
}

impl QueueTree {
    /// Checks every invariant the tree maintains incrementally.
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        let mut problems = Vec::new();
        self.check_queue(ROOT, &mut problems);
        for (id, h) in &self.app_ids {
            let app = self.app(*h);
            if app.id != *id {
                problems.push(format!("app index maps {id} to the slot of {}", app.id));
            }
        }
        let mut user_runnable = std::collections::BTreeMap::<&str, u32>::new();
        for h in self.app_ids.values() {
            let app = self.app(*h);
            if app.runnable {
                *user_runnable.entry(app.user.as_str()).or_default() += 1;
            }
        }
        for (user, state) in &self.users {
            let expected = user_runnable.get(user.as_str()).copied().unwrap_or(0);
            if state.n_runnable != expected {
                problems.push(format!(
                    "user {user} counts {} runnable apps, has {expected}",
                    state.n_runnable
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(InvariantViolation { problems })
        }
    }

    /// Returns (usage, runnable apps, all apps) of the subtree as recounted.
    fn check_queue(&self, id: QueueId, problems: &mut Vec<String>) -> (Resource, u32, u32) {
        let q = self.queue(id);
        let path = &q.path;
        let (mut usage, mut n_runnable, mut n_apps) = (Resource::ZERO, 0, 0);
        let mut expected_order: Vec<OrderKey> = Vec::new();
        match q.kind {
            QueueKind::Parent => {
                if !q.runnable_apps.is_empty() || !q.waiting_apps.is_empty() {
                    problems.push(format!("parent {path} holds apps"));
                }
                for child in &q.children {
                    if self.queue(*child).parent != Some(id) {
                        problems.push(format!(
                            "{} does not name {path} as its parent",
                            self.queue(*child).path
                        ));
                    }
                    let (u, r, a) = self.check_queue(*child, problems);
                    usage += u;
                    n_runnable += r;
                    n_apps += a;
                    let c = self.queue(*child);
                    let listed_key = c.listed.then(|| q.order.listed_key(c.listed_slot));
                    match (c.order.is_empty(), listed_key) {
                        (false, Some(None)) => problems.push(format!(
                            "{} claims slot {} in {path}, which is not listed",
                            c.path, c.listed_slot
                        )),
                        (false, Some(Some(key))) => {
                            let fresh = OrderKey::new(
                                q.settings.policy,
                                &self.queue_key_inputs(*child),
                                &self.cluster,
                            );
                            if fresh != key {
                                problems.push(format!("{}'s key in {path} is stale", c.path));
                            }
                            expected_order.push(key);
                        }
                        (true, None) => {}
                        (false, None) => problems
                            .push(format!("{} has work but is not listed in {path}", c.path)),
                        (true, Some(_)) => {
                            problems.push(format!("{} is listed in {path} with no work", c.path))
                        }
                    }
                }
            }
            QueueKind::Leaf => {
                let mut am_usage = Resource::ZERO;
                for (pos, h) in q.runnable_apps.iter().enumerate() {
                    let app = self.app(*h);
                    if !app.runnable || app.queue != id || app.runnable_pos as usize != pos {
                        problems.push(format!(
                            "runnable list of {path} is inconsistent at {}",
                            app.id
                        ));
                    }
                    if app.am_started {
                        am_usage += app.am_resource;
                    }
                    self.check_app_listing(*h, id, &mut expected_order, problems);
                    usage += app.usage;
                    n_runnable += 1;
                    n_apps += 1;
                }
                for (_, _, h) in &q.waiting_apps {
                    let app = self.app(*h);
                    if app.runnable || app.queue != id || app.listed {
                        problems.push(format!(
                            "waiting list of {path} is inconsistent at {}",
                            app.id
                        ));
                    }
                    usage += app.usage;
                    n_apps += 1;
                }
                if am_usage != q.am_usage {
                    problems.push(format!(
                        "{path} AM usage is {} but its started AMs use {am_usage}",
                        q.am_usage
                    ));
                }
            }
        }
        if usage != q.usage {
            problems.push(format!(
                "{path} usage is {} but its members use {usage}",
                q.usage
            ));
        }
        if n_runnable != q.n_runnable {
            problems.push(format!(
                "{path} counts {} runnable apps, has {n_runnable}",
                q.n_runnable
            ));
        }
        if n_apps != q.n_apps {
            problems.push(format!("{path} counts {} apps, has {n_apps}", q.n_apps));
        }
        expected_order.sort();
        let actual: Vec<OrderKey> = q.order.iter().collect();
        if actual != expected_order {
            problems.push(format!(
                "{path} order set does not match its listed members"
            ));
        }
        (usage, n_runnable, n_apps)
    }

    fn check_app_listing(
        &self,
        h: AppHandle,
        leaf: QueueId,
        expected: &mut Vec<OrderKey>,
        problems: &mut Vec<String>,
    ) {
        let app = self.app(h);
        let should_list = app.runnable && app.pending.any_positive();
        let listed_key = app
            .listed
            .then(|| self.queue(leaf).order.listed_key(app.listed_slot));
        match (should_list, listed_key) {
            (true, Some(None)) => problems.push(format!(
                "{} claims slot {} in its leaf, which is not listed",
                app.id, app.listed_slot
            )),
            (true, Some(Some(key))) => {
                let fresh = OrderKey::new(
                    self.queue(leaf).settings.policy,
                    &self.app_key_inputs(h),
                    &self.cluster,
                );
                if fresh != key {
                    problems.push(format!("{}'s key is stale", app.id));
                }
                expected.push(key);
            }
            (false, None) => {}
            (true, None) => problems.push(format!("{} has pending asks but is not listed", app.id)),
            (false, Some(_)) => problems.push(format!("{} is listed without pending asks", app.id)),
        }
    }
}
