//! Logical time: `Time` (an instant in milliseconds) and `Duration`.
//!
//! Nothing here reads a clock. The RM service maps its real clock onto `Time`
//! in one place; the simulator advances it by itself; the pure crates only
//! receive it as an argument.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::str::FromStr;

/// A logical instant: milliseconds since an origin chosen by the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

/// A span of logical time in milliseconds. `Duration::MAX` means "never".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

impl Time {
    /// The origin.
    pub const ZERO: Time = Time(0);
    /// The far future: a deadline that never comes.
    pub const MAX: Time = Time(u64::MAX);

    /// An instant `ms` milliseconds after the origin.
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms)
    }

    /// Milliseconds since the origin.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub const fn since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, saturating at `Time::MAX`.
    #[must_use]
    pub const fn saturating_add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl Duration {
    /// No time.
    pub const ZERO: Duration = Duration(0);
    /// Forever (Hadoop's `Long.MAX_VALUE` timeouts).
    pub const MAX: Duration = Duration(u64::MAX);

    /// `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms)
    }

    /// `s` seconds, saturating.
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s.saturating_mul(1000))
    }

    /// Length in milliseconds.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// True for `Duration::MAX`.
    pub const fn is_forever(self) -> bool {
        self.0 == u64::MAX
    }

    /// `self * n`, saturating.
    #[must_use]
    pub const fn saturating_mul(self, n: u64) -> Duration {
        Duration(self.0.saturating_mul(n))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, rhs: Duration) -> Time {
        self.saturating_add(rhs)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, rhs: Duration) {
        *self = self.saturating_add(rhs);
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, rhs: Time) -> Duration {
        self.since(rhs)
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_add(rhs.0))
    }
}

/// `12.345s`, or `never` for `Time::MAX`.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Time::MAX {
            return f.write_str("never");
        }
        write!(f, "{}.{:03}s", self.0 / 1000, self.0 % 1000)
    }
}

/// `1500ms`, `2s`, `3m`, `1h`, or `forever`: the shortest exact form.
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        if ms == u64::MAX {
            f.write_str("forever")
        } else if ms != 0 && ms.is_multiple_of(3_600_000) {
            write!(f, "{}h", ms / 3_600_000)
        } else if ms != 0 && ms.is_multiple_of(60_000) {
            write!(f, "{}m", ms / 60_000)
        } else if ms.is_multiple_of(1000) {
            write!(f, "{}s", ms / 1000)
        } else {
            write!(f, "{ms}ms")
        }
    }
}

/// Why a duration could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid duration {text:?}: expected a whole number followed by ms, s, m or h (for example 500ms or 10s)"
)]
pub struct DurationParseError {
    /// The offending text.
    pub text: String,
}

/// Parses `500ms`, `10s`, `2m`, `1h`, `forever`.
impl FromStr for Duration {
    type Err = DurationParseError;

    fn from_str(s: &str) -> Result<Duration, DurationParseError> {
        let err = || DurationParseError { text: s.to_owned() };
        let t = s.trim();
        if t == "forever" || t == "never" {
            return Ok(Duration::MAX);
        }
        let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(err)?;
        let (number, unit) = t.split_at(split);
        let n: u64 = number.parse().map_err(|_| err())?;
        let factor = match unit.trim() {
            "ms" => 1,
            "s" => 1000,
            "m" | "min" => 60_000,
            "h" => 3_600_000,
            _ => return Err(err()),
        };
        n.checked_mul(factor).map(Duration).ok_or_else(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        let t = Time::from_millis(1000);
        assert_eq!(t + Duration::from_secs(2), Time::from_millis(3000));
        assert_eq!(Time::from_millis(3000) - t, Duration::from_millis(2000));
        assert_eq!(t - Time::from_millis(3000), Duration::ZERO);
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(t + Duration::MAX, Time::MAX);
    }

    #[test]
    fn display_and_parse() {
        assert_eq!(Time::from_millis(12_345).to_string(), "12.345s");
        for (text, ms) in [
            ("500ms", 500),
            ("10s", 10_000),
            ("2m", 120_000),
            ("1h", 3_600_000),
            ("0s", 0),
        ] {
            let d: Duration = text.parse().unwrap();
            assert_eq!(d.as_millis(), ms);
            assert_eq!(d.to_string(), text);
        }
        assert_eq!("forever".parse::<Duration>().unwrap(), Duration::MAX);
        assert!("10".parse::<Duration>().is_err());
        assert!("ten s".parse::<Duration>().is_err());
        assert!("-1s".parse::<Duration>().is_err());
    }
}
