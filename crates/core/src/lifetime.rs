//! Application lifetimes (YARN's `ApplicationTimeoutType.LIFETIME`, Hadoop's
//! `RMAppLifetimeMonitor`): an app submitted with a lifetime is killed when
//! its expiry (submission time plus lifetime) passes, unless it ended
//! first; an operator or its owner may move the expiry
//! (`Input::SetAppLifetime`). The kill itself is `lifecycle`'s, the very one
//! an operator's kill is; who may move an expiry is the driver's business.
//!
//! The deadlines sit in one ordered set keyed by (expiry, app), so each
//! input costs a look at its first entry and nothing is scanned per tick or
//! per allocation.

use weft_model::{AppId, Time};

use crate::input::FinalStatus;
use crate::output::{AppState, Event, LifetimeError};
use crate::rm::{ResourceManager, first_due};

/// The diagnostics of an app killed for its lifetime: Hadoop's words, which
/// clients match on.
pub const LIFETIME_EXCEEDED: &str =
    "Application is killed by ResourceManager as it has exceeded the lifetime period.";

impl ResourceManager {
    /// Watches a live app's expiry (its record already holds it).
    pub(crate) fn arm_lifetime(&mut self, app: AppId, expiry: Option<Time>) {
        if let Some(at) = expiry {
            self.lifetime_expiries.insert((at, app));
        }
    }

    /// Stops watching an app that ended; its record keeps the expiry for
    /// reports, as Hadoop's keeps its timeouts.
    pub(crate) fn disarm_lifetime(&mut self, app: AppId) {
        if let Some(at) = self.apps.get(&app).and_then(|r| r.lifetime_expiry) {
            self.lifetime_expiries.remove(&(at, app));
        }
    }

    /// Gives a live app a new expiry (Hadoop's `updateApplicationTimeouts`):
    /// any time after `now`, earlier or later than the one in force; an app
    /// without a lifetime gains one. The expiry in force afterwards.
    pub(crate) fn set_lifetime(
        &mut self,
        now: Time,
        app: AppId,
        expiry: Time,
    ) -> Result<Time, LifetimeError> {
        self.live_handle(app)?;
        if expiry <= now {
            return Err(LifetimeError::NotInFuture { app, expiry, now });
        }
        let record = self.apps.get_mut(&app).expect("a live app has a record");
        let previous = record.lifetime_expiry.replace(expiry);
        if let Some(old) = previous {
            self.lifetime_expiries.remove(&(old, app));
        }
        self.lifetime_expiries.insert((expiry, app));
        self.events.push(Event::AppLifetimeChanged {
            app,
            previous,
            expiry,
        });
        Ok(expiry)
    }

    /// Kills every app whose expiry has come, soonest first, exactly as an
    /// operator's kill would (containers stopped, reservations dropped, its
    /// running-app slot handed on, the AM refused from then on).
    pub(crate) fn expire_lifetimes(&mut self, now: Time) {
        while let Some((expiry, app)) = first_due(&self.lifetime_expiries, now) {
            self.lifetime_expiries.pop_first();
            let Ok(h) = self.live_handle(app) else {
                continue;
            };
            let queue = self.tree.queue_path(self.tree.app_queue(h)).clone();
            self.events
                .push(Event::AppLifetimeExpired { app, queue, expiry });
            self.end_app(
                now,
                h,
                AppState::Killed,
                Some(FinalStatus::Killed),
                LIFETIME_EXCEEDED.to_owned(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use weft_model::{AppPriority, Duration, NodeId, Resource};
    use weft_queue_tree::AllocConfig;

    use super::*;
    use crate::input::{Input, NodeRegistration, Submission};
    use crate::output::{Reply, SubmitError};
    use crate::settings::CoreSettings;

    fn rm_with_node() -> ResourceManager {
        let mut rm =
            ResourceManager::new(AllocConfig::default(), CoreSettings::default(), Time::ZERO);
        rm.handle(
            Time::ZERO,
            Input::NodeRegistered(NodeRegistration {
                node: NodeId::new("n1", 8041).unwrap(),
                rack: "/r1".into(),
                capability: Resource::new(8192, 8),
                http_address: "n1:8042".into(),
                running: vec![],
            }),
        );
        rm
    }

    fn submit(rm: &mut ResourceManager, now: Time, lifetime: Option<Duration>) -> Reply {
        let Reply::NewApplication(new) = rm.handle(now, Input::NewApplication).reply else {
            panic!("no new application id");
        };
        rm.handle(
            now,
            Input::AppSubmitted(Submission {
                app: new.app,
                user: "alice".into(),
                groups: vec![],
                queue: None,
                priority: AppPriority(0),
                am_resource: Some(Resource::new(1024, 1)),
                name: "job".into(),
                app_type: "YARN".into(),
                tags: vec![],
                max_attempts: None,
                lifetime,
            }),
        )
        .reply
    }

    fn app(seq: u32) -> AppId {
        AppId::new(CoreSettings::default().cluster_timestamp, seq)
    }

    #[test]
    fn an_app_is_killed_at_its_expiry_and_not_before() {
        let mut rm = rm_with_node();
        let t = Time::from_millis;
        submit(&mut rm, t(1_000), Some(Duration::from_secs(30)));
        let a = app(1);
        assert_eq!(
            rm.app_report(a).unwrap().record.lifetime_expiry,
            Some(t(31_000))
        );
        assert!(rm.next_deadline().unwrap() <= t(31_000));
        rm.handle(t(30_999), Input::Tick);
        assert_eq!(rm.app_report(a).unwrap().record.state, AppState::Accepted);
        let out = rm.handle(t(31_000), Input::Tick);
        let record = rm.app_report(a).unwrap().record;
        assert_eq!(record.state, AppState::Killed);
        assert_eq!(record.final_status, Some(FinalStatus::Killed));
        assert_eq!(record.diagnostics, LIFETIME_EXCEEDED);
        // The report still shows the expiry that passed.
        assert_eq!(record.lifetime_expiry, Some(t(31_000)));
        assert!(matches!(
            out.events[0],
            Event::AppLifetimeExpired { app, expiry, .. } if app == a && expiry == t(31_000)
        ));
        assert!(rm.lifetime_expiries.is_empty());
        rm.check_invariants().unwrap();
    }

    #[test]
    fn an_app_that_ends_first_is_not_watched_any_more() {
        let mut rm = rm_with_node();
        submit(&mut rm, Time::ZERO, Some(Duration::from_secs(10)));
        rm.handle(
            Time::from_millis(5),
            Input::KillApp {
                app: app(1),
                reason: "killed by user alice".into(),
            },
        );
        assert!(rm.lifetime_expiries.is_empty());
        let out = rm.handle(Time::from_millis(20_000), Input::Tick);
        assert!(
            !out.events
                .iter()
                .any(|e| matches!(e, Event::AppLifetimeExpired { .. }))
        );
        let record = rm.app_report(app(1)).unwrap().record;
        assert_eq!(record.diagnostics, "killed by user alice");
        rm.check_invariants().unwrap();
    }

    #[test]
    fn an_expiry_moves_either_way_and_must_be_in_the_future() {
        let mut rm = rm_with_node();
        let t = Time::from_millis;
        submit(&mut rm, Time::ZERO, None);
        let a = app(1);
        assert_eq!(rm.app_report(a).unwrap().record.lifetime_expiry, None);
        // An app without a lifetime gains one.
        let out = rm.handle(
            t(1_000),
            Input::SetAppLifetime {
                app: a,
                expiry: t(60_000),
            },
        );
        assert_eq!(out.reply, Reply::LifetimeSet(Ok(t(60_000))));
        // Shorter than the one in force is allowed, as in Hadoop.
        let out = rm.handle(
            t(2_000),
            Input::SetAppLifetime {
                app: a,
                expiry: t(10_000),
            },
        );
        assert_eq!(out.reply, Reply::LifetimeSet(Ok(t(10_000))));
        assert_eq!(
            out.events[0],
            Event::AppLifetimeChanged {
                app: a,
                previous: Some(t(60_000)),
                expiry: t(10_000),
            }
        );
        // Now, or the past, is refused and changes nothing.
        for expiry in [t(3_000), t(2_500)] {
            let out = rm.handle(t(3_000), Input::SetAppLifetime { app: a, expiry });
            assert_eq!(
                out.reply,
                Reply::LifetimeSet(Err(LifetimeError::NotInFuture {
                    app: a,
                    expiry,
                    now: t(3_000)
                }))
            );
        }
        assert_eq!(rm.lifetime_expiries.len(), 1);
        rm.check_invariants().unwrap();
        rm.handle(t(10_000), Input::Tick);
        assert_eq!(rm.app_report(a).unwrap().record.state, AppState::Killed);
        // Ended and unknown apps are refused.
        let out = rm.handle(
            t(11_000),
            Input::SetAppLifetime {
                app: a,
                expiry: t(90_000),
            },
        );
        assert_eq!(
            out.reply,
            Reply::LifetimeSet(Err(LifetimeError::App(crate::AppError::AlreadyEnded {
                app: a,
                state: AppState::Killed
            })))
        );
        let out = rm.handle(
            t(11_000),
            Input::SetAppLifetime {
                app: app(9),
                expiry: t(90_000),
            },
        );
        assert_eq!(
            out.reply,
            Reply::LifetimeSet(Err(LifetimeError::App(crate::AppError::UnknownApp(app(9)))))
        );
        rm.check_invariants().unwrap();
    }

    #[test]
    fn a_zero_lifetime_is_refused_and_forever_is_no_limit() {
        let mut rm = rm_with_node();
        let reply = submit(&mut rm, Time::ZERO, Some(Duration::ZERO));
        assert_eq!(
            reply,
            Reply::Submitted(Err(SubmitError::ZeroLifetime(app(1))))
        );
        // Refused before the RM took it, as Hadoop refuses it at submission.
        assert!(rm.app_report(app(1)).is_none());
        submit(&mut rm, Time::ZERO, Some(Duration::MAX));
        assert_eq!(rm.app_report(app(2)).unwrap().record.lifetime_expiry, None);
        assert!(rm.lifetime_expiries.is_empty());
        rm.check_invariants().unwrap();
    }

    #[test]
    fn apps_expiring_together_are_killed_in_order_of_id() {
        let mut rm = rm_with_node();
        for _ in 0..3 {
            submit(&mut rm, Time::ZERO, Some(Duration::from_secs(5)));
        }
        let out = rm.handle(Time::from_millis(9_000), Input::Tick);
        let expired: Vec<AppId> = out
            .events
            .iter()
            .filter_map(|e| match e {
                Event::AppLifetimeExpired { app, .. } => Some(*app),
                _ => None,
            })
            .collect();
        assert_eq!(expired, vec![app(1), app(2), app(3)]);
        rm.check_invariants().unwrap();
    }
}
