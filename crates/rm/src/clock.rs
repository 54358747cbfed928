//! The one place where real time becomes the core's `Time`: milliseconds of
//! `tokio::time::Instant` since the service started, and back again for
//! deadlines, plus the wall-clock origin that turns `Time` into the epoch
//! timestamps YARN's API shows.
//!
//! Because it reads tokio's clock, tests that pause tokio's time control it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;
use weft_model::Time;

/// The service's clock.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: Instant,
    epoch_origin_ms: u64,
}

impl Clock {
    /// A clock whose core time 0 is now.
    pub fn start() -> Clock {
        let epoch_origin_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Clock::with_epoch_origin(epoch_origin_ms)
    }

    /// A clock whose core time 0 is now and is shown as `epoch_origin_ms`
    /// (tests pin it so ids and timestamps are stable).
    pub fn with_epoch_origin(epoch_origin_ms: u64) -> Clock {
        Clock {
            origin: Instant::now(),
            epoch_origin_ms,
        }
    }

    /// The core's time now.
    pub fn now(&self) -> Time {
        Time::from_millis(self.origin.elapsed().as_millis() as u64)
    }

    /// The instant at which core time reaches `t`.
    pub fn instant_at(&self, t: Time) -> Instant {
        self.origin + Duration::from_millis(t.as_millis().min(MAX_AHEAD_MS))
    }

    /// Wall-clock milliseconds since the epoch at core time zero: the RM's
    /// start time, which is also its cluster id.
    pub fn epoch_origin_ms(&self) -> u64 {
        self.epoch_origin_ms
    }

    /// Wall-clock milliseconds since the epoch of core time `t`.
    pub fn epoch_ms(&self, t: Time) -> u64 {
        self.epoch_origin_ms + t.as_millis()
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
}
