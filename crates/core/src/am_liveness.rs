//! AM liveness: when an application master that has stopped calling fails
//! its attempt, as YARN's `AMLivelinessMonitor` decides
//! (`yarn.am.liveness-monitor.expiry-interval-ms`). Ending the attempt, and
//! whether the app gets another, is `lifecycle`'s business.
//!
//! Without it an AM that dies where no one sees (an unmanaged AM's client
//! killed outright, an AM process hung on a healthy node) would keep its
//! containers and its running-app slot for ever.

use weft_model::Time;
use weft_queue_tree::AppHandle;

use crate::input::FinalStatus;
use crate::output::{AppState, StopReason, exit_status};
use crate::rm::{ResourceManager, first_due};

impl ResourceManager {
    /// The app's AM is alive at `now`: its attempt fails if it is not heard
    /// from again within the expiry. Armed when the AM may first run (its
    /// container allocated, an unmanaged AM accepted, an app recovered) and
    /// moved by every register and allocate call.
    pub(crate) fn am_alive(&mut self, now: Time, h: AppHandle) {
        let expires = now + self.settings.scheduler.am_liveness_expiry;
        let app = self.active_mut(h);
        let id = app.id;
        if let Some(old) = app.am_expires.replace(expires) {
            self.am_expiries.remove(&(old, id));
        }
        self.am_expiries.insert((expires, id));
    }

    /// No AM to watch: the attempt ended, or a new one waits for its container.
    pub(crate) fn am_gone(&mut self, h: AppHandle) {
        let app = self.active_mut(h);
        let id = app.id;
        if let Some(old) = app.am_expires.take() {
            self.am_expiries.remove(&(old, id));
        }
    }

    /// Fails the attempt of every AM silent past its deadline. A managed
    /// AM's container is stopped, which fails the attempt as its exit would
    /// (another attempt if the app has any left); an unmanaged AM's app
    /// fails, as YARN never retries an unmanaged AM.
    pub(crate) fn expire_ams(&mut self, now: Time) {
        while let Some((_, app)) = first_due(&self.am_expiries, now) {
            self.am_expiries.pop_first();
            let Ok(h) = self.live_handle(app) else {
                continue;
            };
            self.active_mut(h).am_expires = None;
            let expiry = self.settings.scheduler.am_liveness_expiry;
            let attempt = self.active(h).attempt;
            let record = &self.apps[&app];
            let managed = record.am_resource.is_some();
            let am = record.am_container.and_then(|c| self.find_container(&c));
            match am {
                Some(idx) => {
                    self.active_mut(h).am_timed_out = true;
                    self.end_container(
                        now,
                        idx,
                        exit_status::KILLED_BY_RESOURCEMANAGER,
                        format!(
                            "container stopped: the application master of {attempt} made no allocate call for {expiry} (yarn.am.liveness-monitor.expiry-interval-ms)"
                        ),
                        Some(StopReason::AppFinished),
                    );
                }
                // A recovered attempt whose AM container never came back.
                None if managed => {
                    self.active_mut(h).am_timed_out = true;
                    self.am_container_ended(now, h, exit_status::KILLED_BY_RESOURCEMANAGER);
                }
                None => {
                    let diagnostics = format!(
                        "the application master of {attempt} made no allocate call for {expiry} (yarn.am.liveness-monitor.expiry-interval-ms); the application failed"
                    );
                    self.end_app(
                        now,
                        h,
                        AppState::Failed,
                        Some(FinalStatus::Failed),
                        diagnostics,
                    );
                }
            }
        }
    }
}
