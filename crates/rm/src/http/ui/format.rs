//! Numbers, sizes, times and durations as the web UI shows them to people:
//! `12.0 GB`, `1,234`, `2023-11-14T22:13:20Z`, `1h 2m 3s`.
//!
//! The API keeps its raw units (MB, milliseconds since the epoch); only the
//! pages round. Everything is UTC, since an RM's operators and users are
//! rarely in one time zone.

use std::fmt::Write as _;

use crate::dto::{EpochMillis, ResourceDto};

/// What the API writes for an unbounded amount (`Long.MAX_VALUE`).
const UNBOUNDED: u64 = i64::MAX as u64;

/// A memory size given in MB: `512 MB`, `12.0 GB`, `1.5 TB`.
pub(crate) fn memory(mb: u64) -> String {
    const GB: u64 = 1024;
    const TB: u64 = 1024 * 1024;
    match mb {
        UNBOUNDED.. => "unlimited".to_owned(),
        TB.. => format!("{:.1} TB", mb as f64 / TB as f64),
        GB.. => format!("{:.1} GB", mb as f64 / GB as f64),
        _ => format!("{mb} MB"),
    }
}

/// A count with thousands separators: `1,234,567`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A number of vcores: `1 vcore`, `12 vcores`.
pub(crate) fn vcores(n: u64) -> String {
    match n {
        UNBOUNDED.. => "unlimited vcores".to_owned(),
        1 => "1 vcore".to_owned(),
        n => format!("{} vcores", count(n)),
    }
}

/// A resource: `12.0 GB, 4 vcores`.
pub(crate) fn resource(r: ResourceDto) -> String {
    format!("{}, {}", memory(r.memory), vcores(r.vcores))
}

/// A limit on running apps, where Hadoop's "none" is `Integer.MAX_VALUE`.
pub(crate) fn max_apps(n: u32) -> String {
    if n >= i32::MAX as u32 {
        "unlimited".to_owned()
    } else {
        count(u64::from(n))
    }
}

/// A percentage with one decimal: `42.5%`.
pub(crate) fn percent(p: f64) -> String {
    format!("{p:.1}%")
}

/// A timestamp as ISO-8601 UTC to the second (`2023-11-14T22:13:20Z`);
/// 0, the API's "not yet", as `N/A`, as Hadoop's pages show it.
pub(crate) fn time(ms: EpochMillis) -> String {
    if ms == 0 {
        return "N/A".to_owned();
    }
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`,
/// for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// A duration given in milliseconds, to the second and no finer than
/// people read it: `850 ms`, `45s`, `3m 5s`, `1h 2m 3s`, `2d 3h 4m`.
pub(crate) fn duration(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms} ms");
    }
    let s = ms / 1000;
    let (d, h, m, s) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60, s % 60);
    let mut out = String::new();
    if d > 0 {
        let _ = write!(out, "{}d {h}h {m}m", count(d));
    } else if h > 0 {
        let _ = write!(out, "{h}h {m}m {s}s");
    } else if m > 0 {
        let _ = write!(out, "{m}m {s}s");
    } else {
        let _ = write!(out, "{s}s");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_counts() {
        let cases = [
            (memory(0), "0 MB"),
            (memory(512), "512 MB"),
            (memory(1024), "1.0 GB"),
            (memory(12 * 1024 + 512), "12.5 GB"),
            (memory(3 * 1024 * 1024 / 2), "1.5 TB"),
            (memory(i64::MAX as u64), "unlimited"),
            (count(0), "0"),
            (count(999), "999"),
            (count(1000), "1,000"),
            (count(1_234_567), "1,234,567"),
            (vcores(1), "1 vcore"),
            (vcores(2048), "2,048 vcores"),
            (
                resource(ResourceDto {
                    memory: 12288,
                    vcores: 4,
                }),
                "12.0 GB, 4 vcores",
            ),
            (max_apps(i32::MAX as u32), "unlimited"),
            (max_apps(5), "5"),
            (percent(42.46), "42.5%"),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn times_are_utc() {
        assert_eq!(time(0), "N/A");
        assert_eq!(time(1), "1970-01-01T00:00:00Z");
        assert_eq!(time(1_700_000_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(time(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(time(1_709_251_199_999), "2024-02-29T23:59:59Z");
        assert_eq!(time(4_102_444_800_000), "2100-01-01T00:00:00Z");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        let cases = [
            (0, "0 ms"),
            (850, "850 ms"),
            (45_000, "45s"),
            (185_000, "3m 5s"),
            (3_723_000, "1h 2m 3s"),
            (183_840_000, "2d 3h 4m"),
        ];
        for (ms, want) in cases {
            assert_eq!(duration(ms), want, "{ms}");
        }
    }
}
