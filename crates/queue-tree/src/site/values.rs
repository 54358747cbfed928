//! The scalar syntaxes of Hadoop's `Configuration` getters: booleans,
//! integers (decimal or `0x` hex), Java-style floats, and resource quantities
//! with a unit (`1 Gi`, `512 Mi`, `1k`).
//!
//! Each parser answers "what is this text", nothing more; which property takes
//! which syntax, its range and its error message are `settings`' business.

/// A boolean: `true` or `false` in any case, surrounding whitespace ignored
/// (Hadoop's `getBoolean`).
pub fn parse_bool(text: &str) -> Option<bool> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("true") {
        Some(true)
    } else if t.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// An integer as Hadoop's `getInt`/`getLong` read it: an optional sign, then
/// decimal digits or `0x`/`0X` and hex digits.
pub(crate) fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (digits, radix) = match rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (rest, 10),
    };
    // `from_str_radix` would accept a second sign; Hadoop's parser does not.
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(digits, radix).ok()?;
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).ok()
}

/// A finite float as Java's `Float.parseFloat` reads the usual forms
/// (`0.8`, `.5`, `1e3`, and the `0.8f` / `2d` suffixes people copy from Java).
pub(crate) fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = t.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(t);
    // Rust also reads `inf` and `NaN`, which no property can use.
    if !t.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The units YARN's resource values may carry, as a ratio to the base unit.
/// The names are case-sensitive: `m` is milli, `M` is mega.
const UNITS: &[(&str, u128, u128)] = &[
    ("p", 1, 1_000_000_000_000),
    ("n", 1, 1_000_000_000),
    ("u", 1, 1_000_000),
    ("m", 1, 1_000),
    ("", 1, 1),
    ("k", 1_000, 1),
    ("M", 1_000_000, 1),
    ("G", 1_000_000_000, 1),
    ("T", 1_000_000_000_000, 1),
    ("P", 1_000_000_000_000_000, 1),
    ("Ki", 1 << 10, 1),
    ("Mi", 1 << 20, 1),
    ("Gi", 1 << 30, 1),
    ("Ti", 1 << 40, 1),
    ("Pi", 1 << 50, 1),
];

/// Why a quantity could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QuantityError {
    /// Not `<digits>[ ]<unit>`.
    Syntax,
    /// A unit YARN does not know.
    UnknownUnit,
    /// Too large once converted.
    Overflow,
}

/// A non-negative quantity `<digits>[ ]<unit>` converted to `default_unit`,
/// truncating as YARN's unit conversion does (`1 G` of memory in `Mi` is 953).
/// A missing unit means the value is already in `default_unit`.
pub(crate) fn parse_quantity(text: &str, default_unit: &str) -> Result<u64, QuantityError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let unit = unit.trim_start();
    if digits.is_empty() || !unit.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(QuantityError::Syntax);
    }
    let value: u128 = digits.parse().map_err(|_| QuantityError::Overflow)?;
    if unit.is_empty() {
        return u64::try_from(value).map_err(|_| QuantityError::Overflow);
    }
    let ratio = |name: &str| {
        UNITS
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, num, den)| (*num, *den))
    };
    let (from_num, from_den) = ratio(unit).ok_or(QuantityError::UnknownUnit)?;
    // The default unit is one of ours, so this lookup cannot miss; treat a miss as the base unit.
    let (to_num, to_den) = ratio(default_unit).unwrap_or((1, 1));
    let scaled = value
        .checked_mul(from_num)
        .and_then(|v| v.checked_mul(to_den))
        .ok_or(QuantityError::Overflow)?;
    u64::try_from(scaled / (from_den * to_num)).map_err(|_| QuantityError::Overflow)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn booleans() {
        assert_eq!(parse_bool(" TRUE "), Some(true));
        assert_eq!(parse_bool("False"), Some(false));
        assert_eq!(parse_bool("yes"), None);
        assert_eq!(parse_bool("1"), None);
        assert_eq!(parse_bool(""), None);
    }

    #[test]
    fn integers() {
        let cases = [
            "500",
            " -1 ",
            "+7",
            "0x1F",
            "-0x10",
            "0X10",
            "",
            "-",
            "0x",
            "1.5",
            "1e3",
            "--1",
            "+-1",
            "12ab",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
        ];
        let rendered: Vec<String> = cases
            .iter()
            .map(|c| format!("{c:?} -> {:?}", parse_int(c)))
            .collect();
        expect![[r#"
            [
                "\"500\" -> Some(500)",
                "\" -1 \" -> Some(-1)",
                "\"+7\" -> Some(7)",
                "\"0x1F\" -> Some(31)",
                "\"-0x10\" -> Some(-16)",
                "\"0X10\" -> Some(16)",
                "\"\" -> None",
                "\"-\" -> None",
                "\"0x\" -> None",
                "\"1.5\" -> None",
                "\"1e3\" -> None",
                "\"--1\" -> None",
                "\"+-1\" -> None",
                "\"12ab\" -> None",
                "\"9223372036854775807\" -> Some(9223372036854775807)",
                "\"9223372036854775808\" -> None",
                "\"-9223372036854775808\" -> Some(-9223372036854775808)",
            ]
        "#]]
        .assert_debug_eq(&rendered);
    }

    #[test]
    fn floats() {
        assert_eq!(parse_float("0.8"), Some(0.8));
        assert_eq!(parse_float(" 0.8f "), Some(0.8));
        assert_eq!(parse_float("2D"), Some(2.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("-1"), Some(-1.0));
        assert_eq!(parse_float("1e3"), Some(1000.0));
        assert_eq!(parse_float("NaN"), None);
        assert_eq!(parse_float("inf"), None);
        assert_eq!(parse_float("1e999"), None);
        assert_eq!(parse_float("f"), None);
        assert_eq!(parse_float("eighty"), None);
        assert_eq!(parse_float(""), None);
    }

    #[test]
    fn quantities() {
        let cases = [
            ("1024", "Mi"),
            ("1 Gi", "Mi"),
            ("512 Mi", "Mi"),
            ("512Mi", "Mi"),
            ("1 G", "Mi"),
            ("2048 Ki", "Mi"),
            ("1 k", "Mi"),
            ("1 Ti", "Mi"),
            ("1k", ""),
            ("10", ""),
            ("1 Xi", "Mi"),
            ("1 gi", "Mi"),
            ("-1", "Mi"),
            ("1.5 Gi", "Mi"),
            ("Gi", "Mi"),
            ("1 G i", "Mi"),
            ("99999999999999999999 Pi", "Mi"),
        ];
        let rendered: Vec<String> = cases
            .iter()
            .map(|(text, unit)| format!("{text:?} in {unit:?} -> {:?}", parse_quantity(text, unit)))
            .collect();
        expect![[r#"
            [
                "\"1024\" in \"Mi\" -> Ok(1024)",
                "\"1 Gi\" in \"Mi\" -> Ok(1024)",
                "\"512 Mi\" in \"Mi\" -> Ok(512)",
                "\"512Mi\" in \"Mi\" -> Ok(512)",
                "\"1 G\" in \"Mi\" -> Ok(953)",
                "\"2048 Ki\" in \"Mi\" -> Ok(2)",
                "\"1 k\" in \"Mi\" -> Ok(0)",
                "\"1 Ti\" in \"Mi\" -> Ok(1048576)",
                "\"1k\" in \"\" -> Ok(1000)",
                "\"10\" in \"\" -> Ok(10)",
                "\"1 Xi\" in \"Mi\" -> Err(UnknownUnit)",
                "\"1 gi\" in \"Mi\" -> Err(UnknownUnit)",
                "\"-1\" in \"Mi\" -> Err(Syntax)",
                "\"1.5 Gi\" in \"Mi\" -> Err(Syntax)",
                "\"Gi\" in \"Mi\" -> Err(Syntax)",
                "\"1 G i\" in \"Mi\" -> Err(Syntax)",
                "\"99999999999999999999 Pi\" in \"Mi\" -> Err(Overflow)",
            ]
        "#]]
        .assert_debug_eq(&rendered);
    }
}
