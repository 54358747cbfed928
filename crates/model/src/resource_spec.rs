//! Parsing of the allocation file's resource values (`minResources`,
//! `maxResources`, ...) into a `ResourceSpec`; which element accepts which
//! form is the caller's choice of `SpecKind`.
//!
//! Three syntaxes, chosen by content as Hadoop does:
//! - contains `=`: `memory-mb=1024, vcores=2` or `memory-mb=50%, vcores=25%`;
//! - contains `%`: `50%` or `50% memory, 25% cpu`;
//! - otherwise: `1024 mb, 2 vcores` in either order, decimals truncated.
//!
//! Weft is stricter than Hadoop in two places, both written in
//! `docs/allocation-file.md`: text that is not part of an amount is an error
//! (Hadoop searches for the amounts and ignores the rest), and a percentage
//! where only absolute values make sense is an error (Hadoop silently
//! ignores it).

use std::fmt;

use crate::resource::{N_RESOURCE_TYPES, Resource, ResourceType};

/// A parsed resource value: absolute, or a percentage of the cluster resolved on use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ResourceSpec {
    /// Fixed amounts.
    Absolute(Resource),
    /// Fractions of the cluster (0.5 = 50%), in `ResourceType::ALL` order.
    Percentage([f64; N_RESOURCE_TYPES]),
}

/// Which element a value comes from, deciding the forms and defaults it accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecKind {
    /// A guarantee (`minResources`): absolute only; unnamed types are 0.
    Min,
    /// A cap on a queue (`maxResources`, `maxChildResources`,
    /// `queueMaxResourcesDefault`): percentages allowed; unnamed types are unbounded.
    Max,
    /// A cap on one container (`maxContainerAllocation`): absolute only; unnamed types are unbounded.
    ContainerMax,
}

/// Why a resource value could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot parse resource value {text:?}: {reason}")]
pub struct ResourceParseError {
    /// The offending text, as written.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl ResourceSpec {
    /// Resolves to an absolute amount against the current cluster size
    /// (truncating, as Hadoop does: 10.9% of 10240 MB is 1116 MB).
    pub fn resolve(&self, cluster: &Resource) -> Resource {
        match self {
            ResourceSpec::Absolute(res) => *res,
            ResourceSpec::Percentage(fractions) => cluster.map(|ty, v| {
                let x = v as f64 * fractions[ty.index()];
                if x <= 0.0 { 0 } else { x as u64 }
            }),
        }
    }

    /// True for the percentage form.
    pub fn is_percentage(&self) -> bool {
        matches!(self, ResourceSpec::Percentage(_))
    }

    /// The absolute amount, if this is not a percentage.
    pub fn absolute(&self) -> Option<Resource> {
        match self {
            ResourceSpec::Absolute(res) => Some(*res),
            ResourceSpec::Percentage(_) => None,
        }
    }
}

impl fmt::Display for ResourceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceSpec::Absolute(res) => {
                let mut first = true;
                for ty in ResourceType::ALL {
                    if !first {
                        f.write_str(", ")?;
                    }
                    first = false;
                    match res.get(ty) {
                        u64::MAX => write!(f, "{}=unbounded", ty.name())?,
                        v => write!(f, "{}={v}", ty.name())?,
                    }
                }
                Ok(())
            }
            ResourceSpec::Percentage(fractions) => {
                let mut first = true;
                for ty in ResourceType::ALL {
                    if !first {
                        f.write_str(", ")?;
                    }
                    first = false;
                    write!(f, "{}={}%", ty.name(), fractions[ty.index()] * 100.0)?;
                }
                Ok(())
            }
        }
    }
}

/// Parses a resource value written in any of Hadoop's syntaxes.
pub fn parse_resource(text: &str, kind: SpecKind) -> Result<ResourceSpec, ResourceParseError> {
    let err = |reason: String| ResourceParseError {
        text: text.to_owned(),
        reason,
    };
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(err("the value is empty".to_owned()));
    }
    let spec = if trimmed.contains('=') {
        parse_new_style(trimmed, kind).map_err(err)?
    } else if trimmed.contains('%') {
        parse_old_percentage(trimmed).map_err(err)?
    } else {
        ResourceSpec::Absolute(parse_old_absolute(trimmed).map_err(err)?)
    };
    if spec.is_percentage() && kind != SpecKind::Max {
        let element = match kind {
            SpecKind::Min => "minResources",
            _ => "maxContainerAllocation",
        };
        return Err(err(format!(
            "{element} takes absolute amounts only; percentages are accepted in maxResources, \
             maxChildResources and queueMaxResourcesDefault"
        )));
    }
    Ok(spec)
}

/// `name=value, name=value`: all integers or all percentages.
fn parse_new_style(text: &str, kind: SpecKind) -> Result<ResourceSpec, String> {
    let mut absolute: [Option<u64>; N_RESOURCE_TYPES] = [None; N_RESOURCE_TYPES];
    let mut percent: [Option<f64>; N_RESOURCE_TYPES] = [None; N_RESOURCE_TYPES];
    let mut saw_absolute = false;
    let mut saw_percent = false;
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err("empty item between commas".to_owned());
        }
        let Some((name, value)) = part.split_once('=') else {
            return Err(format!("{part:?} is not of the form name=value"));
        };
        let name = name.trim();
        let value = value.trim();
        let Some(ty) = new_style_type(name) else {
            return Err(format!(
                "unknown resource type {name:?} (known: memory-mb, vcores, the only types Weft schedules)"
            ));
        };
        if absolute[ty.index()].is_some() || percent[ty.index()].is_some() {
            return Err(format!("{name} is given more than once"));
        }
        if let Some(number) = value.strip_suffix('%') {
            let number = number.trim();
            let pct = parse_decimal(number)
                .ok_or_else(|| format!("{value:?} for {name} is either not a non-negative number or does not include the '%' symbol"))?;
            percent[ty.index()] = Some(pct / 100.0);
            saw_percent = true;
        } else {
            if value.starts_with('-') {
                return Err(format!(
                    "invalid value of {name}: {value} should not be negative"
                ));
            }
            let amount = value.parse::<u64>().map_err(|_| {
                format!("{value:?} for {name} is not a whole number (units are not allowed in name=value form)")
            })?;
            if amount > MAX_AMOUNT {
                return Err(too_large(value, name));
            }
            absolute[ty.index()] = Some(amount);
            saw_absolute = true;
        }
    }
    if saw_absolute && saw_percent {
        return Err("absolute values and percentages cannot be mixed".to_owned());
    }
    if saw_percent {
        let mut fractions = [1.0; N_RESOURCE_TYPES];
        for ty in ResourceType::ALL {
            if let Some(p) = percent[ty.index()] {
                fractions[ty.index()] = p;
            }
        }
        return Ok(ResourceSpec::Percentage(fractions));
    }
    let missing = match kind {
        SpecKind::Min => 0,
        SpecKind::Max | SpecKind::ContainerMax => u64::MAX,
    };
    let mut res = Resource::ZERO;
    for ty in ResourceType::ALL {
        res.set(ty, absolute[ty.index()].unwrap_or(missing));
    }
    Ok(ResourceSpec::Absolute(res))
}

fn new_style_type(name: &str) -> Option<ResourceType> {
    if name.eq_ignore_ascii_case("memory-mb") || name.eq_ignore_ascii_case("memory") {
        Some(ResourceType::Memory)
    } else if name.eq_ignore_ascii_case("vcores") {
        Some(ResourceType::Vcores)
    } else {
        None
    }
}

/// `X%` for every type, or `X% memory, Y% cpu`.
fn parse_old_percentage(text: &str) -> Result<ResourceSpec, String> {
    if let Some(number) = text.strip_suffix('%')
        && let Some(pct) = parse_decimal(number.trim())
    {
        return Ok(ResourceSpec::Percentage([pct / 100.0; N_RESOURCE_TYPES]));
    }
    let items = tokenize_amounts(text, true)?;
    let mut memory = None;
    let mut cpu = None;
    for (value, unit) in items {
        let slot = match unit.to_ascii_lowercase().as_str() {
            "memory" => &mut memory,
            "cpu" => &mut cpu,
            other => {
                return Err(format!(
                    "unknown resource {other:?} in percentage form (use memory and cpu)"
                ));
            }
        };
        if slot.is_some() {
            return Err(format!("{unit} is given more than once"));
        }
        *slot = Some(value / 100.0);
    }
    let memory = memory.ok_or("missing resource: memory")?;
    let cpu = cpu.ok_or("missing resource: cpu")?;
    let mut fractions = [1.0; N_RESOURCE_TYPES];
    fractions[ResourceType::Memory.index()] = memory;
    fractions[ResourceType::Vcores.index()] = cpu;
    Ok(ResourceSpec::Percentage(fractions))
}

/// `X mb, Y vcores` in either order.
fn parse_old_absolute(text: &str) -> Result<Resource, String> {
    let items = tokenize_amounts(text, false)?;
    let mut memory = None;
    let mut vcores = None;
    for (value, unit) in items {
        let slot = match unit.to_ascii_lowercase().as_str() {
            "mb" => &mut memory,
            "vcores" => &mut vcores,
            other => return Err(format!("unknown unit {other:?} (use mb and vcores)")),
        };
        if slot.is_some() {
            return Err(format!("{unit} is given more than once"));
        }
        // `as` would saturate a value past 2^63 instead of refusing it.
        if value.trunc() >= MAX_AMOUNT as f64 {
            return Err(too_large(&value.trunc().to_string(), &unit));
        }
        *slot = Some(value.trunc() as u64);
    }
    match (memory, vcores) {
        (Some(m), Some(v)) => Ok(Resource::new(m, v)),
        (None, _) => Err("both memory (mb) and vcores are required; memory is missing".to_owned()),
        (_, None) => Err("both memory (mb) and vcores are required; vcores is missing".to_owned()),
    }
}

/// The largest amount taken: Java's `long`, as Hadoop parses amounts into
/// one. Larger values would also reach `u64::MAX`, which here means
/// "unbounded", and turn a typo into no limit at all.
const MAX_AMOUNT: u64 = i64::MAX as u64;

fn too_large(value: &str, unit: &str) -> String {
    format!("{value} {unit} is too large (at most {MAX_AMOUNT})")
}

/// Splits `12 mb, 3 vcores` (or `12%memory,3% cpu` when `percent`) into
/// (number, unit) pairs; anything else in the text is an error.
fn tokenize_amounts(text: &str, percent: bool) -> Result<Vec<(f64, String)>, String> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    let skip_separators = |i: &mut usize| {
        while *i < bytes.len() && (bytes[*i].is_ascii_whitespace() || bytes[*i] == b',') {
            *i += 1;
        }
    };
    loop {
        skip_separators(&mut i);
        if i >= bytes.len() {
            break;
        }
        if bytes[i] == b'-' {
            return Err(format!("{:?}: amounts should not be negative", &text[i..]));
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        let number = &text[start..i];
        let value = parse_decimal(number)
            .ok_or_else(|| format!("expected a number at {:?}", &text[start..]))?;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if percent {
            if i >= bytes.len() || bytes[i] != b'%' {
                return Err(format!("expected '%' after {number}"));
            }
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        let unit_start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        if unit_start == i {
            return Err(format!("expected a unit after {number}"));
        }
        items.push((value, text[unit_start..i].to_owned()));
        if i < bytes.len() && !(bytes[i].is_ascii_whitespace() || bytes[i] == b',') {
            return Err(format!("unexpected text {:?}", &text[i..]));
        }
    }
    Ok(items)
}

/// A non-negative decimal such as `12`, `12.5` or `12.`.
fn parse_decimal(s: &str) -> Option<f64> {
    if s.is_empty()
        || !s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || !s.as_bytes()[0].is_ascii_digit()
    {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn abs(text: &str) -> Resource {
        parse_resource(text, SpecKind::Max)
            .unwrap()
            .absolute()
            .unwrap()
    }

    fn pct(text: &str) -> [f64; N_RESOURCE_TYPES] {
        match parse_resource(text, SpecKind::Max).unwrap() {
            ResourceSpec::Percentage(p) => p,
            other => panic!("expected a percentage, got {other:?}"),
        }
    }

    fn err(text: &str, kind: SpecKind) -> String {
        parse_resource(text, kind).unwrap_err().to_string()
    }

    #[test]
    fn old_style_absolute_any_order_spacing_case() {
        assert_eq!(abs("1024 mb, 2 vcores"), Resource::new(1024, 2));
        assert_eq!(abs("2 vcores, 1024 mb"), Resource::new(1024, 2));
        assert_eq!(abs("1024mb,2vcores"), Resource::new(1024, 2));
        assert_eq!(abs("  1024 MB   2 VCores "), Resource::new(1024, 2));
        assert_eq!(abs("10000 mb,0vcores"), Resource::new(10000, 0));
        assert_eq!(abs("5120.3 mb, 2.35 vcores"), Resource::new(5120, 2));
        assert_eq!(abs("6000 mb,12vcores"), Resource::new(6000, 12));
    }

    #[test]
    fn old_style_absolute_requires_both() {
        for text in ["1024", "1024mb", "1024vcores", "mb vcores"] {
            assert!(parse_resource(text, SpecKind::Max).is_err(), "{text}");
        }
        expect_contains(&err("1024 mb", SpecKind::Max), "vcores is missing");
        expect_contains(
            &err("1024 mb, 2 vcores, 3 gpus", SpecKind::Max),
            "unknown unit \"gpus\"",
        );
        expect_contains(&err("-1024 mb, 2 vcores", SpecKind::Max), "negative");
    }

    #[test]
    fn new_style() {
        assert_eq!(abs("vcores=2, memory-mb=5120"), Resource::new(5120, 2));
        assert_eq!(abs("memory-mb = 5120"), Resource::new(5120, u64::MAX));
        assert_eq!(
            parse_resource("memory-mb=5120", SpecKind::Min).unwrap(),
            ResourceSpec::Absolute(Resource::new(5120, 0))
        );
        assert_eq!(pct("memory-mb=40%, vcores=75%"), [0.4, 0.75]);
        assert_eq!(pct("memory-mb=40%"), [0.4, 1.0]);
        expect_contains(
            &err("memory-mb=40%, vcores=2", SpecKind::Max),
            "cannot be mixed",
        );
        expect_contains(
            &err("gpu=2", SpecKind::Max),
            "the only types Weft schedules",
        );
        expect_contains(
            &err("memory-mb=-5", SpecKind::Max),
            "should not be negative",
        );
        expect_contains(
            &err("memory-mb=-5%", SpecKind::Max),
            "not a non-negative number",
        );
        expect_contains(
            &err("memory-mb=1024mb", SpecKind::Max),
            "units are not allowed",
        );
    }

    #[test]
    fn old_style_percentages() {
        assert_eq!(pct("50%"), [0.5, 0.5]);
        assert_eq!(pct("50% memory, 25% cpu"), [0.5, 0.25]);
        assert_eq!(pct("50 % memory, 25 % CPU"), [0.5, 0.25]);
        assert_eq!(pct("50%memory,50%cpu"), [0.5, 0.5]);
        let p = pct("10.9% memory, 50.6% cpu");
        assert_eq!(
            ResourceSpec::Percentage(p).resolve(&Resource::new(10240, 4)),
            Resource::new(1116, 2)
        );
        expect_contains(&err("50% memory", SpecKind::Max), "missing resource: cpu");
        expect_contains(&err("25% cpu", SpecKind::Max), "missing resource: memory");
        expect_contains(&err("-50%", SpecKind::Max), "negative");
    }

    #[test]
    fn percentages_only_where_hadoop_honours_them() {
        expect_contains(
            &err("50%", SpecKind::Min),
            "minResources takes absolute amounts only",
        );
        expect_contains(
            &err("memory-mb=50%", SpecKind::ContainerMax),
            "maxContainerAllocation",
        );
    }

    #[test]
    fn errors_name_the_text() {
        let e = err("lots of memory", SpecKind::Max);
        expect_contains(&e, "\"lots of memory\"");
        expect_contains(&err("", SpecKind::Max), "empty");
    }

    #[test]
    fn amounts_past_a_java_long_are_refused_not_made_unbounded() {
        // Saturating would have made a typo mean "no limit" (u64::MAX).
        expect_contains(
            &err("99999999999999999999 mb, 1 vcores", SpecKind::Min),
            "100000000000000000000 mb is too large (at most 9223372036854775807)",
        );
        expect_contains(
            &err("memory-mb=18446744073709551615", SpecKind::Max),
            "18446744073709551615 memory-mb is too large",
        );
        assert_eq!(
            abs("memory-mb=9223372036854775807, vcores=1"),
            Resource::new(9_223_372_036_854_775_807, 1)
        );
    }

    fn expect_contains(haystack: &str, needle: &str) {
        assert!(
            haystack.contains(needle),
            "{haystack:?} does not contain {needle:?}"
        );
    }
}
