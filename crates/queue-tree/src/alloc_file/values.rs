//! The allocation file's scalar values: counts, seconds, decimals, booleans
//! and AM shares, each parsed strictly into a typed value or a `ProblemKind`.
//!
//! Where the value sits in the file, and what happens to it, is the walker's
//! concern; resource values are parsed by `weft_model::parse_resource`.

use weft_model::Duration;

use crate::alloc_file::ProblemKind;
use crate::config::AmShare;

/// What a count (`maxRunningApps`, `userMaxAppsDefault`, ...) should look like.
pub(super) const COUNT: &str = "a whole number of apps such as 10";
/// What a timeout should look like.
pub(super) const SECONDS: &str = "a whole number of seconds such as 60";
/// What a weight should look like.
pub(super) const WEIGHT: &str = "a non-negative decimal number such as 1 or 2.5";
/// What a preemption threshold should look like.
pub(super) const FRACTION: &str = "a decimal number from 0 to 1 such as 0.5";
/// What an AM share should look like.
pub(super) const AM_SHARE: &str = "-1 (no limit) or a fraction from 0 to 1 such as 0.5";

/// A value outside the accepted range that was clamped into it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Clamped {
    /// The value used.
    pub(super) value: f64,
    /// True when the written value was outside the range.
    pub(super) clamped: bool,
}

/// A non-negative whole number that fits in `u32` (Hadoop's `int`).
pub(super) fn parse_count(text: &str) -> Result<u32, ProblemKind> {
    let n = parse_whole(text, COUNT)?;
    u32::try_from(n).map_err(|_| ProblemKind::NumberTooLarge {
        text: text.to_owned(),
        expected: COUNT,
    })
}

/// Whole seconds, stored as milliseconds (saturating: a huge value means never).
pub(super) fn parse_seconds(text: &str) -> Result<Duration, ProblemKind> {
    parse_whole(text, SECONDS).map(Duration::from_secs)
}

/// A weight: a decimal finite even as an `f32`, not negative.
pub(super) fn parse_weight(text: &str) -> Result<f64, ProblemKind> {
    let value = parse_decimal(text, WEIGHT)?;
    if value < 0.0 {
        return Err(ProblemKind::NegativeNumber {
            text: text.trim().to_owned(),
            expected: WEIGHT,
        });
    }
    // The tree keeps weights as `f32` (Hadoop's `float`), where this would be infinite.
    if (value as f32).is_infinite() {
        return Err(ProblemKind::NumberTooLarge {
            text: text.trim().to_owned(),
            expected: WEIGHT,
        });
    }
    Ok(value)
}

/// A preemption threshold, clamped to [0, 1] as Hadoop does.
pub(super) fn parse_threshold(text: &str) -> Result<Clamped, ProblemKind> {
    let value = parse_decimal(text, FRACTION)?;
    let clamped_value = value.clamp(0.0, 1.0);
    Ok(Clamped {
        value: clamped_value,
        clamped: clamped_value != value,
    })
}

/// An AM share: -1 disables the check, a fraction in [0, 1] limits it, above
/// 1 is clamped to 1 (as Hadoop does); anything else below 0 is an error.
pub(super) fn parse_am_share(text: &str) -> Result<(AmShare, bool), ProblemKind> {
    let value = parse_decimal(text, AM_SHARE)?;
    if value == -1.0 {
        return Ok((AmShare::Disabled, false));
    }
    if value < 0.0 {
        return Err(ProblemKind::AmShareOutOfRange {
            text: text.trim().to_owned(),
        });
    }
    Ok((AmShare::Fraction(value.min(1.0)), value > 1.0))
}

/// `true` or `false` in any case (Hadoop's `Boolean.parseBoolean` turns every
/// other text into false; Weft refuses it).
pub(super) fn parse_bool(name: &'static str, text: &str) -> Result<bool, ProblemKind> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if t.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(ProblemKind::InvalidBool {
            name,
            text: text.to_owned(),
        })
    }
}

/// An optionally signed whole number that must not be negative.
fn parse_whole(text: &str, expected: &'static str) -> Result<u64, ProblemKind> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ProblemKind::EmptyValue { expected });
    }
    let (negative, digits) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ProblemKind::NotANumber {
            text: t.to_owned(),
            expected,
        });
    }
    if negative && digits.bytes().any(|b| b != b'0') {
        return Err(ProblemKind::NegativeNumber {
            text: t.to_owned(),
            expected,
        });
    }
    digits
        .parse::<u64>()
        .map_err(|_| ProblemKind::NumberTooLarge {
            text: t.to_owned(),
            expected,
        })
}

/// A finite decimal in Java's notation: optional sign, digits with an optional
/// point, an optional exponent, and an optional `f`/`d` type suffix (so
/// `0.5f`, which Hadoop's documentation uses, is accepted). Words such as
/// `NaN` and `Infinity` are refused.
fn parse_decimal(text: &str, expected: &'static str) -> Result<f64, ProblemKind> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ProblemKind::EmptyValue { expected });
    }
    let not_a_number = || ProblemKind::NotANumber {
        text: t.to_owned(),
        expected,
    };
    let body = t.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(t);
    if !is_java_decimal(body) {
        return Err(not_a_number());
    }
    let value: f64 = body.parse().map_err(|_| not_a_number())?;
    if !value.is_finite() {
        return Err(ProblemKind::NumberTooLarge {
            text: t.to_owned(),
            expected,
        });
    }
    // `-0` means 0; keeping the sign would only confuse displays.
    Ok(if value == 0.0 { 0.0 } else { value })
}

/// `[+-]? digits? (. digits?)? ([eE] [+-]? digits)?` with at least one mantissa digit.
fn is_java_decimal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut mantissa_digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        mantissa_digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            mantissa_digits += 1;
        }
    }
    if mantissa_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count(" 50 "), Ok(50));
        assert_eq!(parse_count("+7"), Ok(7));
        assert_eq!(parse_count("-0"), Ok(0));
        assert!(matches!(
            parse_count("-1"),
            Err(ProblemKind::NegativeNumber { .. })
        ));
        assert!(matches!(
            parse_count("1.5"),
            Err(ProblemKind::NotANumber { .. })
        ));
        assert!(matches!(
            parse_count("ten"),
            Err(ProblemKind::NotANumber { .. })
        ));
        assert!(matches!(
            parse_count(""),
            Err(ProblemKind::EmptyValue { .. })
        ));
        assert!(matches!(
            parse_count("4294967296"),
            Err(ProblemKind::NumberTooLarge { .. })
        ));
        assert_eq!(parse_count("4294967295"), Ok(u32::MAX));
    }

    #[test]
    fn seconds_become_milliseconds() {
        assert_eq!(parse_seconds("30"), Ok(Duration::from_millis(30_000)));
        assert_eq!(parse_seconds("0"), Ok(Duration::ZERO));
        assert!(parse_seconds("99999999999999999999").is_err());
        assert!(parse_seconds("18446744073709551615").unwrap().is_forever());
        assert!(matches!(
            parse_seconds("-5"),
            Err(ProblemKind::NegativeNumber { .. })
        ));
        assert!(matches!(
            parse_seconds("5s"),
            Err(ProblemKind::NotANumber { .. })
        ));
    }

    #[test]
    fn decimals_in_java_notation() {
        for (text, value) in [
            ("1", 1.0),
            ("2.5", 2.5),
            (".5", 0.5),
            ("5.", 5.0),
            ("1e1", 10.0),
            ("0.5f", 0.5),
            ("1.0F", 1.0),
            ("3d", 3.0),
            ("+2", 2.0),
        ] {
            assert_eq!(parse_weight(text), Ok(value), "{text}");
        }
        for text in [
            "NaN", "Infinity", "inf", "1,5", "e5", ".", "1e", "0x10", "1 2", "f",
        ] {
            assert!(
                matches!(parse_weight(text), Err(ProblemKind::NotANumber { .. })),
                "{text}"
            );
        }
        assert!(matches!(
            parse_weight("1e999"),
            Err(ProblemKind::NumberTooLarge { .. })
        ));
        assert!(matches!(
            parse_weight("-0.5"),
            Err(ProblemKind::NegativeNumber { .. })
        ));
    }

    /// Weights are kept as `f32`, as Hadoop keeps them: a value finite as an
    /// `f64` but beyond `f32::MAX` would become an infinite weight (and NaN
    /// shares), so it is too large, like `1e999`.
    #[test]
    fn weights_must_be_finite_as_f32() {
        assert_eq!(parse_weight("3.4e38"), Ok(3.4e38));
        for text in ["3.5e38", "1e39", "1e300"] {
            assert!(
                matches!(parse_weight(text), Err(ProblemKind::NumberTooLarge { .. })),
                "{text}"
            );
        }
    }

    #[test]
    fn am_shares() {
        assert_eq!(parse_am_share("-1"), Ok((AmShare::Disabled, false)));
        assert_eq!(parse_am_share("-1.0f"), Ok((AmShare::Disabled, false)));
        assert_eq!(parse_am_share("0"), Ok((AmShare::Fraction(0.0), false)));
        assert_eq!(parse_am_share("0.1"), Ok((AmShare::Fraction(0.1), false)));
        assert_eq!(parse_am_share("1.5"), Ok((AmShare::Fraction(1.0), true)));
        for text in ["-0.5", "-2", "-1.5"] {
            assert!(
                matches!(
                    parse_am_share(text),
                    Err(ProblemKind::AmShareOutOfRange { .. })
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn thresholds_are_clamped() {
        assert_eq!(
            parse_threshold("0.8").unwrap(),
            Clamped {
                value: 0.8,
                clamped: false
            }
        );
        assert_eq!(
            parse_threshold("1.2").unwrap(),
            Clamped {
                value: 1.0,
                clamped: true
            }
        );
        assert_eq!(
            parse_threshold("-0.1").unwrap(),
            Clamped {
                value: 0.0,
                clamped: true
            }
        );
    }

    #[test]
    fn booleans() {
        assert_eq!(parse_bool("create", "TRUE"), Ok(true));
        assert_eq!(parse_bool("create", " false "), Ok(false));
        assert_eq!(
            parse_bool("create", "yes").unwrap_err().to_string(),
            "create is \"yes\"; expected true or false"
        );
    }

    proptest! {
        #[test]
        fn any_count_round_trips(n: u32) {
            prop_assert_eq!(parse_count(&n.to_string()), Ok(n));
        }

        #[test]
        fn finite_decimals_round_trip(x in 0.0f64..1e12) {
            prop_assert_eq!(parse_weight(&x.to_string()), Ok(x));
        }

        #[test]
        fn accepted_values_are_in_range(s in "[-+0-9.eEfd ]{0,8}|\\PC{0,8}") {
            if let Ok(w) = parse_weight(&s) {
                prop_assert!(w.is_finite() && w >= 0.0, "{s:?} gave weight {w}");
            }
            match parse_am_share(&s) {
                Ok((AmShare::Fraction(f), _)) => prop_assert!((0.0..=1.0).contains(&f), "{s:?} gave {f}"),
                Ok((AmShare::Disabled, _)) | Err(_) => {}
            }
            if let Ok(c) = parse_threshold(&s) {
                prop_assert!((0.0..=1.0).contains(&c.value), "{s:?} gave {}", c.value);
            }
        }
    }
}
