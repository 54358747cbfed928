//! Wall-clock instants in ISO 8601, as YARN's timeout API writes and reads
//! them: written as Hadoop's `Times.formatISO8601` does
//! (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`), in UTC (`+0000`) where Hadoop uses the
//! RM's local zone; read in that form and RFC 3339's (`Z`, `+05:30`, any
//! number of fraction digits or none).
//!
//! Only the proleptic Gregorian calendar and fixed offsets: no zone names,
//! no leap seconds, years 0000 to 9999. Which instants make sense (future
//! expiries) is the caller's business.

use std::fmt;

/// Why a time could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{text:?} is not an ISO 8601 time ({why}); write yyyy-MM-ddTHH:mm:ss.SSS+hhmm, for example 2030-01-31T18:30:00.000+0000"
)]
pub struct Iso8601Error {
    /// What was given.
    pub text: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Milliseconds since the Unix epoch, shown as Hadoop shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct EpochMs(pub i64);

impl fmt::Display for EpochMs {
    /// `2030-01-31T18:30:00.000+0000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.rem_euclid(1000);
        let secs = self.0.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let of_day = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}+0000",
            of_day / 3600,
            of_day / 60 % 60,
            of_day % 60
        )
    }
}

/// Reads `yyyy-MM-ddTHH:mm:ss[.fraction](Z|±hh[:]mm)`.
pub fn parse(text: &str) -> Result<EpochMs, Iso8601Error> {
    let err = |why| Iso8601Error {
        text: text.to_owned(),
        why,
    };
    let s = text.trim().as_bytes();
    let digits = |from: usize, n: usize| -> Option<i64> {
        let part = s.get(from..from + n)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(part.iter().fold(0, |acc, b| acc * 10 + i64::from(b - b'0')))
    };
    let sep = |at: usize, c: u8| s.get(at) == Some(&c);
    if !(sep(4, b'-') && sep(7, b'-')) {
        return Err(err("the date must be yyyy-MM-dd"));
    }
    let (Some(year), Some(month), Some(day)) = (digits(0, 4), digits(5, 2), digits(8, 2)) else {
        return Err(err("the date must be yyyy-MM-dd"));
    };
    if !matches!(s.get(10), Some(b'T' | b't')) {
        return Err(err("the date and the time must be joined by T"));
    }
    if !(sep(13, b':') && sep(16, b':')) {
        return Err(err("the time must be HH:mm:ss"));
    }
    let (Some(hour), Some(minute), Some(second)) = (digits(11, 2), digits(14, 2), digits(17, 2))
    else {
        return Err(err("the time must be HH:mm:ss"));
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return Err(err("no such date"));
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err(err("no such time of day"));
    }
    let mut at = 19;
    let mut millis = 0;
    if sep(at, b'.') || sep(at, b',') {
        at += 1;
        let start = at;
        while s.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return Err(err("a fraction of a second needs digits"));
        }
        // Milliseconds: the first three digits, padded; finer ones are cut.
        for i in 0..3 {
            millis = millis * 10
                + s.get(start + i)
                    .filter(|_| start + i < at)
                    .map_or(0, |b| i64::from(b - b'0'));
        }
    }
    let offset_min = match s.get(at) {
        Some(b'Z' | b'z') if at + 1 == s.len() => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let rest = &s[at + 1..];
            let (h, m) = match rest.len() {
                2 => (digits(at + 1, 2), Some(0)),
                4 => (digits(at + 1, 2), digits(at + 3, 2)),
                5 if rest[2] == b':' => (digits(at + 1, 2), digits(at + 4, 2)),
                _ => (None, None),
            };
            let (Some(h), Some(m)) = (h, m) else {
                return Err(err("the offset must be Z, +hh, +hhmm or +hh:mm"));
            };
            if h > 23 || m > 59 {
                return Err(err("no such offset"));
            }
            let off = h * 60 + m;
            if sign == b'-' { -off } else { off }
        }
        None => return Err(err("a time zone offset is needed (Z, or +0000 for UTC)")),
        _ => return Err(err("the offset must be Z, +hh, +hhmm or +hh:mm")),
    };
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_min * 60;
    Ok(EpochMs(secs * 1000 + millis))
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The Gregorian date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_hadoops_form_in_utc() {
        assert_eq!(EpochMs(0).to_string(), "1970-01-01T00:00:00.000+0000");
        assert_eq!(
            EpochMs(1_480_958_460_104).to_string(),
            "2016-12-05T17:21:00.104+0000"
        );
        assert_eq!(
            EpochMs(951_782_400_000).to_string(),
            "2000-02-29T00:00:00.000+0000"
        );
    }

    #[test]
    fn reads_hadoops_form_and_rfc_3339() {
        // Hadoop's own example: 22:51 in India is 17:21 UTC.
        let hadoop = parse("2016-12-05T22:51:00.104+0530").unwrap();
        assert_eq!(hadoop, EpochMs(1_480_958_460_104));
        for same in [
            "2016-12-05T17:21:00.104Z",
            "2016-12-05T17:21:00.104+0000",
            "2016-12-05T17:21:00.104+00:00",
            "2016-12-05T17:21:00.104+00",
            "2016-12-05T12:21:00.104-05:00",
            "2016-12-05T17:21:00.1049999Z",
            " 2016-12-05t17:21:00.104z ",
        ] {
            assert_eq!(parse(same), Ok(hadoop), "{same}");
        }
        assert_eq!(
            parse("2016-12-05T17:21:00Z"),
            Ok(EpochMs(1_480_958_460_000))
        );
        assert_eq!(
            parse("2016-12-05T17:21:00.1Z"),
            Ok(EpochMs(1_480_958_460_100))
        );
        // What it writes, it reads back.
        for ms in [0, 1, 999, 86_399_999, 1_480_958_460_104, 4_102_444_800_000] {
            assert_eq!(parse(&EpochMs(ms).to_string()), Ok(EpochMs(ms)), "{ms}");
        }
    }

    #[test]
    fn says_what_is_wrong() {
        for (text, why) in [
            ("", "the date must be yyyy-MM-dd"),
            ("tomorrow", "the date must be yyyy-MM-dd"),
            ("2016/12/05T17:21:00Z", "the date must be yyyy-MM-dd"),
            (
                "2016-12-05 17:21:00Z",
                "the date and the time must be joined by T",
            ),
            ("2016-12-05T17:21Z", "the time must be HH:mm:ss"),
            ("2016-02-30T17:21:00Z", "no such date"),
            ("2015-02-29T17:21:00Z", "no such date"),
            ("2016-13-01T17:21:00Z", "no such date"),
            ("2016-12-05T24:00:00Z", "no such time of day"),
            (
                "2016-12-05T17:21:00",
                "a time zone offset is needed (Z, or +0000 for UTC)",
            ),
            (
                "2016-12-05T17:21:00.Z",
                "a fraction of a second needs digits",
            ),
            (
                "2016-12-05T17:21:00+5",
                "the offset must be Z, +hh, +hhmm or +hh:mm",
            ),
            (
                "2016-12-05T17:21:00Zjunk",
                "the offset must be Z, +hh, +hhmm or +hh:mm",
            ),
            ("2016-12-05T17:21:00+2400", "no such offset"),
            ("２016-12-05T17:21:00Z", "the date must be yyyy-MM-dd"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.why, why, "{text:?}");
            assert!(
                e.to_string().contains("2030-01-31T18:30:00.000+0000"),
                "{e}"
            );
        }
    }
}
