//! Hadoop's cache of users' groups (its `Groups` class) in front of a
//! blocking name service: answers are kept for `hadoop.security.groups.cache.secs`,
//! a user found in no group is remembered for
//! `hadoop.security.groups.negative-cache.secs`, and `refresh-user-groups`
//! forgets everything.
//!
//! As with Hadoop's cache, an answer past its time is looked up again by the
//! first request that needs it while requests arriving meanwhile get the old
//! one (or, with `hadoop.security.groups.cache.background.reload`, every
//! request gets the old one while a background task looks it up); an
//! answer not looked up again for ten times its time is dropped. Requests
//! for a user nobody has looked up yet share one lookup.
//!
//! Lookups run on tokio's blocking threads, a bounded number at a time, so
//! a slow name service holds up only the requests that need its answer;
//! what a lookup asks is `GroupLookup`'s business.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;

use super::GroupLookup;

/// A user's groups as cached, shared by every request that reads them.
pub type SharedGroups = Arc<[String]>;

/// The cache's settings: Hadoop's `hadoop.security.groups.*` properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupCacheSettings {
    /// `hadoop.security.groups.cache.secs` (default 300 s): how long an
    /// answer is used before it is looked up again. Never zero.
    pub ttl: Duration,
    /// `hadoop.security.groups.negative-cache.secs` (default 30 s; 0 or
    /// less turns it off, `None`): how long a user found in no group (an
    /// unknown user, or a failed lookup) is answered "no groups" without
    /// asking again.
    pub negative_ttl: Option<Duration>,
    /// `hadoop.security.groups.cache.warn.after.ms` (default 5000 ms): a
    /// lookup slower than this is logged as a warning.
    pub warn_after: Duration,
    /// `hadoop.security.groups.cache.background.reload` (default false):
    /// look an answer past its time up again in the background, serving
    /// the old one meanwhile, rather than in the request that found it old.
    pub background_reload: bool,
    /// `hadoop.security.groups.cache.background.reload.threads` (default
    /// 3): how many background lookups run at once. Never zero.
    pub background_threads: usize,
}

impl Default for GroupCacheSettings {
    fn default() -> GroupCacheSettings {
        GroupCacheSettings {
            ttl: Duration::from_secs(300),
            negative_ttl: Some(Duration::from_secs(30)),
            warn_after: Duration::from_millis(5000),
            background_reload: false,
            background_threads: 3,
        }
    }
}

/// How many lookups requests may have running at once: enough for any
/// name service that answers, few enough that a stalled one cannot take
/// all of tokio's blocking threads (which file reads need too).
const LOOKUPS_AT_ONCE: usize = 64;

/// Hadoop drops an answer that was not looked up again within ten of its
/// lifetimes, so a user not seen for long is looked up afresh (and waited
/// for) rather than served something very old.
const EXPIRY_FACTOR: u32 = 10;

/// Entries are swept of the expired ones when their number has doubled
/// since the last sweep (and is past this), so user names that are never
/// seen again (a client inventing them) cannot grow the map without end.
const SWEEP_FLOOR: usize = 1024;

/// Users' groups from a name service, cached as Hadoop caches them.
#[derive(Debug)]
pub struct GroupCache {
    lookup: Arc<dyn GroupLookup>,
    settings: GroupCacheSettings,
    entries: Mutex<Entries>,
    /// Lookups for requests.
    lookups: Semaphore,
    /// Background lookups (`background_threads` of them).
    background: Semaphore,
}

#[derive(Debug, Default)]
struct Entries {
    by_user: HashMap<String, Entry>,
    /// How many entries the last sweep left.
    len_after_sweep: usize,
    /// Bumped by `clear`, so that a lookup begun before it does not store
    /// its answer after it.
    generation: u64,
}

#[derive(Debug)]
enum Entry {
    /// The user's groups (never empty), as looked up `at`.
    Known {
        groups: SharedGroups,
        at: Instant,
        /// A lookup is under way to replace them.
        refreshing: bool,
    },
    /// The user was found in no group; answered so until `until`.
    NoGroups { until: Instant },
    /// The first lookup is under way; requests wait for its answer.
    Loading(watch::Receiver<Option<SharedGroups>>),
}

impl GroupCache {
    /// An empty cache in front of `lookup`.
    pub fn new(lookup: Arc<dyn GroupLookup>, settings: GroupCacheSettings) -> GroupCache {
        GroupCache {
            lookup,
            settings,
            entries: Mutex::new(Entries::default()),
            lookups: Semaphore::new(LOOKUPS_AT_ONCE),
            // None would leave background lookups waiting for ever.
            background: Semaphore::new(settings.background_threads.max(1)),
        }
    }

    /// `user`'s groups, primary first; none for a user the name service
    /// does not know or could not look up. Waits only when there is no
    /// answer to give yet, or the answer is old and this request is the one
    /// looking it up again.
    pub async fn groups(self: &Arc<Self>, user: &str) -> SharedGroups {
        let now = Instant::now();
        let pending = {
            let mut entries = self.lock();
            let generation = entries.generation;
            match entries.by_user.get_mut(user) {
                Some(Entry::NoGroups { until }) if now < *until => return no_groups(),
                Some(Entry::Known { groups, at, .. }) if within(*at, self.settings.ttl, now) => {
                    return groups.clone();
                }
                Some(Entry::Known {
                    groups,
                    at,
                    refreshing,
                }) if within(*at, self.expiry(), now) => {
                    let old = groups.clone();
                    if *refreshing {
                        return old;
                    }
                    *refreshing = true;
                    let background = self.settings.background_reload;
                    let pending = self.spawn_lookup(user, generation, background);
                    if background {
                        return old;
                    }
                    pending
                }
                Some(Entry::Loading(pending)) => pending.clone(),
                _ => {
                    let pending = self.spawn_lookup(user, generation, false);
                    entries
                        .by_user
                        .insert(user.to_owned(), Entry::Loading(pending.clone()));
                    entries.sweep_if_due(now, self.expiry());
                    pending
                }
            }
        };
        wait(pending).await
    }

    /// Forgets every answer, as `refresh-user-groups` asks: each user is
    /// looked up again when next needed. Lookups under way still answer the
    /// requests waiting for them, but are not kept. Answers how many users
    /// had an answer cached (found in no group included).
    pub fn clear(&self) -> usize {
        let mut entries = self.lock();
        entries.generation += 1;
        let cached = entries
            .by_user
            .values()
            .filter(|e| !matches!(e, Entry::Loading(_)))
            .count();
        entries.by_user.clear();
        entries.len_after_sweep = 0;
        cached
    }

    // A poisoned lock means a panic between two whole-entry updates (none
    // can panic midway), so the map is still sound.
    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn expiry(&self) -> Duration {
        self.settings.ttl.saturating_mul(EXPIRY_FACTOR)
    }

    /// Starts looking `user` up on a task of its own, so that the answer is
    /// stored even if every request that wanted it has gone; the receiver
    /// sees the answer when it comes.
    fn spawn_lookup(
        self: &Arc<Self>,
        user: &str,
        generation: u64,
        background: bool,
    ) -> watch::Receiver<Option<SharedGroups>> {
        let (answer, pending) = watch::channel(None);
        let cache = Arc::clone(self);
        let user = user.to_owned();
        tokio::spawn(async move {
            let groups = cache.look_up(&user, background).await;
            cache.store(user, generation, &groups);
            answer.send_replace(Some(groups));
        });
        pending
    }

    /// Asks the name service on a blocking thread and words what went wrong;
    /// every failure is "no groups", as in Hadoop.
    async fn look_up(&self, user: &str, background: bool) -> SharedGroups {
        let gate = if background {
            &self.background
        } else {
            &self.lookups
        };
        // Neither semaphore is ever closed.
        let _permit = gate.acquire().await.ok();
        let lookup = Arc::clone(&self.lookup);
        let name = user.to_owned();
        let done = tokio::task::spawn_blocking(move || {
            let started = std::time::Instant::now();
            let answer = lookup.lookup(&name);
            (answer, started.elapsed())
        })
        .await;
        let (answer, took) = match done {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!(user, error = %e, "looking up the user's groups failed; the user has no groups until the next lookup");
                return no_groups();
            }
        };
        if took > self.settings.warn_after {
            tracing::warn!(
                user,
                took_ms = took.as_millis(),
                "looking up the user's groups was slow (over hadoop.security.groups.cache.warn.after.ms): the name service holds up this user's requests"
            );
        }
        match answer {
            Ok(Some(groups)) if !groups.is_empty() => groups.into(),
            Ok(Some(_)) => {
                tracing::debug!(user, "the user is in no group");
                no_groups()
            }
            Ok(None) => {
                tracing::debug!(user, "no such user, so no groups");
                no_groups()
            }
            Err(e) => {
                tracing::warn!(user, error = %e, "cannot look up the user's groups; the user has none until a lookup succeeds");
                no_groups()
            }
        }
    }

    fn store(&self, user: String, generation: u64, groups: &SharedGroups) {
        let mut entries = self.lock();
        if entries.generation != generation {
            return;
        }
        let now = Instant::now();
        if !groups.is_empty() {
            let entry = Entry::Known {
                groups: groups.clone(),
                at: now,
                refreshing: false,
            };
            entries.by_user.insert(user, entry);
            return;
        }
        match self.settings.negative_ttl.and_then(|t| now.checked_add(t)) {
            Some(until) => {
                entries.by_user.insert(user, Entry::NoGroups { until });
            }
            None => {
                entries.by_user.remove(&user);
            }
        }
    }
}

impl Entries {
    fn sweep_if_due(&mut self, now: Instant, expiry: Duration) {
        if self.by_user.len() <= SWEEP_FLOOR.max(2 * self.len_after_sweep) {
            return;
        }
        self.by_user.retain(|_, e| match e {
            Entry::Known { at, refreshing, .. } => *refreshing || within(*at, expiry, now),
            Entry::NoGroups { until } => now < *until,
            Entry::Loading(_) => true,
        });
        self.len_after_sweep = self.by_user.len();
    }
}

/// Whether `now` is less than `span` after `at` (always, past the clock's range).
fn within(at: Instant, span: Duration, now: Instant) -> bool {
    at.checked_add(span).is_none_or(|end| now < end)
}

fn no_groups() -> SharedGroups {
    Arc::new([])
}

async fn wait(mut pending: watch::Receiver<Option<SharedGroups>>) -> SharedGroups {
    match pending.wait_for(Option::is_some).await {
        Ok(answer) => (*answer).clone().unwrap_or_else(no_groups),
        // The lookup's task is gone without answering: the runtime is
        // shutting down.
        Err(_) => no_groups(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Condvar;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;
    use crate::groups::LookupError;

    /// A name service in a map, counting the lookups made; it can be made
    /// to fail, or to hold every lookup until the test lets it go.
    #[derive(Debug, Default)]
    struct Fake {
        by_user: Mutex<HashMap<String, Vec<String>>>,
        calls: AtomicUsize,
        failing: AtomicBool,
        held: Mutex<bool>,
        released: Condvar,
    }

    impl Fake {
        fn with(users: &[(&str, &[&str])]) -> Arc<Fake> {
            let fake = Fake::default();
            for (user, groups) in users {
                fake.set(user, groups);
            }
            Arc::new(fake)
        }

        fn set(&self, user: &str, groups: &[&str]) {
            self.by_user.lock().unwrap().insert(
                user.to_owned(),
                groups.iter().map(|g| (*g).to_owned()).collect(),
            );
        }

        fn calls(&self) -> usize {
            self.calls.load(Ordering::SeqCst)
        }

        fn hold(&self) {
            *self.held.lock().unwrap() = true;
        }

        fn release(&self) {
            *self.held.lock().unwrap() = false;
            self.released.notify_all();
        }
    }

    impl GroupLookup for Fake {
        fn lookup(&self, user: &str) -> Result<Option<Vec<String>>, LookupError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let mut held = self.held.lock().unwrap();
            while *held {
                held = self.released.wait(held).unwrap();
            }
            if self.failing.load(Ordering::SeqCst) {
                return Err(LookupError {
                    what: format!("user {user}"),
                    source: std::io::Error::other("the directory is down"),
                });
            }
            Ok(self.by_user.lock().unwrap().get(user).cloned())
        }
    }

    fn cache(fake: &Arc<Fake>, settings: GroupCacheSettings) -> Arc<GroupCache> {
        Arc::new(GroupCache::new(fake.clone(), settings))
    }

    async fn groups_of(cache: &Arc<GroupCache>, user: &str) -> Vec<String> {
        cache.groups(user).await.to_vec()
    }

    /// Lets lookups under way on the blocking threads finish and store
    /// their answers (paused time does not move while one runs).
    async fn settle() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_is_kept_for_cache_secs_then_looked_up_again() {
        let fake = Fake::with(&[("alice", &["alice", "eng"])]);
        let c = cache(&fake, GroupCacheSettings::default());
        assert_eq!(groups_of(&c, "alice").await, ["alice", "eng"]);
        assert_eq!(groups_of(&c, "alice").await, ["alice", "eng"]);
        tokio::time::advance(secs(299)).await;
        fake.set("alice", &["alice", "ops"]);
        assert_eq!(groups_of(&c, "alice").await, ["alice", "eng"]);
        assert_eq!(fake.calls(), 1);
        // Past 300 s the request that finds the answer old waits for the
        // new one, and one arriving meanwhile gets the old one.
        tokio::time::advance(secs(2)).await;
        let (first, meanwhile) = tokio::join!(groups_of(&c, "alice"), groups_of(&c, "alice"));
        assert_eq!(first, ["alice", "ops"]);
        assert_eq!(meanwhile, ["alice", "eng"]);
        assert_eq!(fake.calls(), 2);
        assert_eq!(groups_of(&c, "alice").await, ["alice", "ops"]);
        assert_eq!(fake.calls(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn background_reload_serves_the_old_answer_while_it_looks_up() {
        let fake = Fake::with(&[("alice", &["eng"])]);
        let settings = GroupCacheSettings {
            background_reload: true,
            ..GroupCacheSettings::default()
        };
        let c = cache(&fake, settings);
        assert_eq!(groups_of(&c, "alice").await, ["eng"]);
        fake.set("alice", &["ops"]);
        tokio::time::advance(secs(301)).await;
        assert_eq!(groups_of(&c, "alice").await, ["eng"]);
        settle().await;
        assert_eq!(fake.calls(), 2);
        assert_eq!(groups_of(&c, "alice").await, ["ops"]);
        // Unused for ten times the cache time, an answer is gone: the
        // request waits for a fresh one even with background reload.
        fake.set("alice", &["sre"]);
        tokio::time::advance(secs(3001)).await;
        assert_eq!(groups_of(&c, "alice").await, ["sre"]);
        assert_eq!(fake.calls(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_user_in_no_group_is_remembered_for_negative_cache_secs() {
        let fake = Fake::with(&[("carol", &[])]);
        let c = cache(&fake, GroupCacheSettings::default());
        for user in ["bob", "carol"] {
            assert!(groups_of(&c, user).await.is_empty());
            assert!(groups_of(&c, user).await.is_empty());
        }
        assert_eq!(fake.calls(), 2);
        tokio::time::advance(secs(29)).await;
        fake.set("bob", &["eng"]);
        assert!(groups_of(&c, "bob").await.is_empty());
        assert_eq!(fake.calls(), 2);
        tokio::time::advance(secs(2)).await;
        assert_eq!(groups_of(&c, "bob").await, ["eng"]);
        assert_eq!(fake.calls(), 3);

        // Off (0 or less), every request for an unknown user asks again,
        // as Hadoop's cache keeps no empty answers.
        let fake = Fake::with(&[]);
        let settings = GroupCacheSettings {
            negative_ttl: None,
            ..GroupCacheSettings::default()
        };
        let c = cache(&fake, settings);
        for _ in 0..3 {
            assert!(groups_of(&c, "bob").await.is_empty());
        }
        assert_eq!(fake.calls(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_lookup_is_no_groups_and_cached_as_such() {
        let fake = Fake::with(&[("alice", &["eng"])]);
        let c = cache(&fake, GroupCacheSettings::default());
        assert_eq!(groups_of(&c, "alice").await, ["eng"]);
        fake.failing.store(true, Ordering::SeqCst);
        tokio::time::advance(secs(301)).await;
        assert!(groups_of(&c, "alice").await.is_empty());
        assert!(groups_of(&c, "alice").await.is_empty());
        assert_eq!(fake.calls(), 2);
        fake.failing.store(false, Ordering::SeqCst);
        tokio::time::advance(secs(31)).await;
        assert_eq!(groups_of(&c, "alice").await, ["eng"]);
        assert_eq!(fake.calls(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn requests_for_a_new_user_share_one_lookup() {
        let fake = Fake::with(&[("alice", &["eng"])]);
        let c = cache(&fake, GroupCacheSettings::default());
        let (a, b, d) = tokio::join!(
            groups_of(&c, "alice"),
            groups_of(&c, "alice"),
            groups_of(&c, "alice")
        );
        assert_eq!(
            (a, b, d),
            (
                vec!["eng".to_owned()],
                vec!["eng".to_owned()],
                vec!["eng".to_owned()]
            )
        );
        assert_eq!(fake.calls(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn clearing_forgets_every_answer_and_any_lookup_under_way() {
        let fake = Fake::with(&[("alice", &["eng"]), ("bob", &["ops"])]);
        let c = cache(&fake, GroupCacheSettings::default());
        assert_eq!(groups_of(&c, "alice").await, ["eng"]);
        assert!(groups_of(&c, "nobody").await.is_empty());
        assert_eq!(c.clear(), 2);
        assert_eq!(groups_of(&c, "alice").await, ["eng"]);
        assert_eq!(fake.calls(), 3);

        // A lookup that began before the clear answers its request but is
        // not kept: the next request asks again.
        fake.hold();
        let asking = tokio::spawn({
            let c = c.clone();
            async move { groups_of(&c, "bob").await }
        });
        while fake.calls() < 4 {
            tokio::task::yield_now().await;
        }
        assert_eq!(c.clear(), 1);
        fake.release();
        assert_eq!(asking.await.unwrap(), ["ops"]);
        assert_eq!(groups_of(&c, "bob").await, ["ops"]);
        assert_eq!(fake.calls(), 5);
    }

    #[tokio::test(start_paused = true)]
    async fn names_never_seen_again_are_swept() {
        let fake = Fake::with(&[]);
        let c = cache(&fake, GroupCacheSettings::default());
        for n in 0..SWEEP_FLOOR {
            assert!(groups_of(&c, &format!("u{n}")).await.is_empty());
        }
        tokio::time::advance(secs(31)).await;
        assert!(groups_of(&c, "one-more").await.is_empty());
        // The expired entries went; the new one (and its lookup) stayed.
        assert_eq!(c.lock().by_user.len(), 1);
    }
}
