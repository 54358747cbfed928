//! A small JSON value for writing reports (`Json`), printed with a fixed
//! number of decimals per number so that a report is byte-identical across
//! runs and platforms, and easy to diff.
//!
//! Reading JSON (SLS traces) is serde_json's job; this module only writes.

use std::fmt::Write as _;

/// A JSON value whose numbers carry their own precision.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float printed with this many decimals (non-finite values print as `null`).
    Num(f64, u8),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, keys in the given order.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// An object from `(key, value)` pairs.
    pub fn obj<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Json)>) -> Json {
        Json::Obj(pairs.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A string.
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// An unsigned count (saturating at `i64::MAX`).
    pub fn count(n: u64) -> Json {
        Json::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }

    /// Seconds with millisecond precision.
    pub fn secs(s: f64) -> Json {
        Json::Num(s, 3)
    }

    /// A ratio or share, four decimals.
    pub fn ratio(x: f64) -> Json {
        Json::Num(x, 4)
    }

    /// An array of numbers with one precision.
    pub fn nums(values: impl IntoIterator<Item = f64>, precision: u8) -> Json {
        Json::Arr(
            values
                .into_iter()
                .map(|v| Json::Num(v, precision))
                .collect(),
        )
    }

    /// Pretty-printed text: objects one key per line, arrays of scalars on one line.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn is_scalar(&self) -> bool {
        !matches!(self, Json::Arr(_) | Json::Obj(_))
    }

    fn write(&self, out: &mut String, indent: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::Num(x, precision) => write_num(out, *x, *precision),
            Json::Str(s) => write_str(out, s),
            Json::Arr(items) => {
                if items.is_empty() {
                    out.push_str("[]");
                } else if items.iter().all(Json::is_scalar) {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        item.write(out, indent);
                    }
                    out.push(']');
                } else {
                    out.push_str("[\n");
                    for (i, item) in items.iter().enumerate() {
                        pad(out, indent + 1);
                        item.write(out, indent + 1);
                        if i + 1 < items.len() {
                            out.push(',');
                        }
                        out.push('\n');
                    }
                    pad(out, indent);
                    out.push(']');
                }
            }
            Json::Obj(pairs) => {
                if pairs.is_empty() {
                    out.push_str("{}");
                    return;
                }
                out.push_str("{\n");
                for (i, (k, v)) in pairs.iter().enumerate() {
                    pad(out, indent + 1);
                    write_str(out, k);
                    out.push_str(": ");
                    v.write(out, indent + 1);
                    if i + 1 < pairs.len() {
                        out.push(',');
                    }
                    out.push('\n');
                }
                pad(out, indent);
                out.push('}');
            }
        }
    }
}

fn pad(out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str("  ");
    }
}

fn write_num(out: &mut String, x: f64, precision: u8) {
    if !x.is_finite() {
        out.push_str("null");
        return;
    }
    let text = format!("{:.*}", usize::from(precision), x);
    // "-0.000" and "0.000" are the same number: print one of them.
    if text.starts_with('-') && text[1..].chars().all(|c| c == '0' || c == '.') {
        out.push_str(&text[1..]);
    } else {
        out.push_str(&text);
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_fixed_precision_and_round_trips_through_serde() {
        let v = Json::obj([
            ("name", Json::str("a \"b\"\n")),
            ("n", Json::Int(-3)),
            ("x", Json::Num(1.0 / 3.0, 4)),
            ("neg_zero", Json::Num(-0.00001, 3)),
            ("nan", Json::Num(f64::NAN, 2)),
            ("series", Json::nums([0.5, 1.25], 2)),
            (
                "rows",
                Json::Arr(vec![Json::obj([("k", Json::Bool(true))])]),
            ),
            ("empty", Json::Arr(vec![])),
        ]);
        let text = v.to_pretty();
        expect_test::expect![[r#"
            {
              "name": "a \"b\"\n",
              "n": -3,
              "x": 0.3333,
              "neg_zero": 0.000,
              "nan": null,
              "series": [0.50, 1.25],
              "rows": [
                {
                  "k": true
                }
              ],
              "empty": []
            }
        "#]]
        .assert_eq(&text);
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["name"], "a \"b\"\n");
        assert_eq!(parsed["series"][1], 1.25);
    }
}
