//! The one place where real time becomes the core's `Time`: milliseconds of
//! `tokio::time::Instant` since the service started, plus where core time
//! stood then, and back again for deadlines; the wall-clock origin that
//! turns `Time` into the epoch timestamps YARN's API shows; and the RM's
//! start time, which is its cluster id.
//!
//! The time origin and the start are the same instant unless the state
//! store holds times from before the start (a finished app's submission, a
//! live app's launch): the origin is then moved back to the earliest of
//! them, and core time starts above zero, so that every time the RM shows
//! is a plain `Time`. Choosing that origin is the server's business.
//!
//! Because it reads tokio's clock, tests that pause tokio's time control it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;
use weft_model::Time;

/// The service's clock.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// The instant the service started.
    started: Instant,
    /// Core time at `started`: 0, or how far the origin lies before the start.
    start_time: Time,
    /// Wall-clock milliseconds since the epoch at core time zero; never
    /// after `cluster_timestamp`.
    epoch_origin_ms: u64,
    /// Wall-clock milliseconds since the epoch when the service started.
    cluster_timestamp: u64,
}

impl Clock {
    /// A clock whose core time 0 is now.
    pub fn start() -> Clock {
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Clock::with_epoch_origin(now_ms)
    }

    /// A clock whose core time 0 is now and is shown as `epoch_origin_ms`,
    /// which is also the cluster id (tests pin it so ids and timestamps are
    /// stable).
    pub fn with_epoch_origin(epoch_origin_ms: u64) -> Clock {
        Clock {
            started: Instant::now(),
            start_time: Time::ZERO,
            epoch_origin_ms,
            cluster_timestamp: epoch_origin_ms,
        }
    }

    /// This clock with its time origin moved back to `earliest_ms`
    /// (wall-clock milliseconds) if that is before the origin, so that
    /// `earliest_ms` and everything after it is a `Time`. Core time now
    /// moves up by as much; the cluster id stays the start time. Only
    /// meaningful before the core is built, since it shifts every `Time`.
    #[must_use]
    pub(crate) fn reaching_back_to(self, earliest_ms: u64) -> Clock {
        let Some(back) = self.epoch_origin_ms.checked_sub(earliest_ms) else {
            return self;
        };
        Clock {
            start_time: self.start_time + weft_model::Duration::from_millis(back),
            epoch_origin_ms: earliest_ms,
            ..self
        }
    }

    /// The core's time now.
    pub fn now(&self) -> Time {
        self.start_time
            + weft_model::Duration::from_millis(self.started.elapsed().as_millis() as u64)
    }

    /// The instant at which core time reaches `t` (the start, for a `t`
    /// before it).
    pub fn instant_at(&self, t: Time) -> Instant {
        let ahead = t.since(self.start_time).as_millis();
        self.started + Duration::from_millis(ahead.min(MAX_AHEAD_MS))
    }

    /// Wall-clock milliseconds since the epoch at core time zero: what
    /// turns a `Time` into a timestamp. The RM's start, unless the state
    /// store reached further back.
    pub fn epoch_origin_ms(&self) -> u64 {
        self.epoch_origin_ms
    }

    /// Wall-clock milliseconds since the epoch when the RM started: its
    /// cluster id, the `<clusterTimestamp>` of every id it issues.
    pub fn cluster_timestamp(&self) -> u64 {
        self.cluster_timestamp
    }

    /// Wall-clock milliseconds since the epoch of core time `t`.
    pub fn epoch_ms(&self, t: Time) -> u64 {
        self.epoch_origin_ms.saturating_add(t.as_millis())
    }

    /// The core time of wall-clock milliseconds `ms` (the origin for any
    /// earlier `ms`).
    pub fn time_of_epoch_ms(&self, ms: u64) -> Time {
        Time::from_millis(ms.saturating_sub(self.epoch_origin_ms))
    }
}

/// Deadlines further than about thirty years out are treated as never.
const MAX_AHEAD_MS: u64 = 1 << 40;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn follows_tokio_time() {
        let clock = Clock::with_epoch_origin(1_000);
        assert_eq!(clock.now(), Time::ZERO);
        tokio::time::advance(Duration::from_millis(1_500)).await;
        assert_eq!(clock.now(), Time::from_millis(1_500));
        assert_eq!(clock.epoch_ms(clock.now()), 2_500);
        assert_eq!(
            clock.instant_at(Time::from_millis(2_000)) - clock.instant_at(Time::ZERO),
            Duration::from_millis(2_000)
        );
        // A far-away deadline does not overflow the instant.
        let _ = clock.instant_at(Time::MAX);
    }

    #[tokio::test(start_paused = true)]
    async fn an_origin_reaching_back_starts_core_time_above_zero_and_keeps_the_cluster_id() {
        let started = Instant::now();
        let clock = Clock::with_epoch_origin(1_700_000_000_000).reaching_back_to(1_699_000_000_000);
        assert_eq!(clock.cluster_timestamp(), 1_700_000_000_000);
        assert_eq!(clock.epoch_origin_ms(), 1_699_000_000_000);
        assert_eq!(clock.now(), Time::from_millis(1_000_000_000));
        assert_eq!(clock.epoch_ms(clock.now()), 1_700_000_000_000);
        assert_eq!(
            clock.time_of_epoch_ms(1_699_500_000_000),
            Time::from_millis(500_000_000)
        );
        tokio::time::advance(Duration::from_millis(250)).await;
        assert_eq!(clock.now(), Time::from_millis(1_000_000_250));
        // Deadlines map to instants after the start; past ones to the start.
        assert_eq!(
            clock.instant_at(Time::from_millis(1_000_001_000)) - started,
            Duration::from_millis(1_000)
        );
        assert_eq!(clock.instant_at(Time::from_millis(7)), started);
        // A later "earliest" moves nothing.
        let same = clock.reaching_back_to(1_699_900_000_000);
        assert_eq!(same.epoch_origin_ms(), 1_699_000_000_000);
        assert_eq!(same.now(), clock.now());
    }
}
