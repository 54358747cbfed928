//! Changing what the process logs while it runs (`GET /logLevel`, Hadoop's
//! `LogLevel` servlet): the `LogLevels` trait the service is handed, the
//! level names it takes (tracing's and log4j's), which targets it takes,
//! and the editing of a filter's directives (one target's replaced, the
//! others kept) and reading of one target's effective level.
//!
//! How the process's logging is set up (the subscriber, its format, a
//! reloadable filter) is the binary's business: this crate only sees the
//! trait, so an embedder or a test hands it whatever implementation it has
//! (`DirectivesOnly` is one with no subscriber behind it). The directives
//! are `tracing_subscriber::EnvFilter`'s text (`RUST_LOG`'s syntax), which
//! is what both sides agree on. Serving them over HTTP, to whom, is
//! `http::log_level`'s, for the RM and the node agent alike.

use std::fmt;
use std::sync::{Mutex, PoisonError};

use tracing::level_filters::LevelFilter;

/// The process's logging filter, as the service reads and changes it.
///
/// Implementations change the filter in one step (no other change lands
/// between reading the directives and writing the edited ones), so two
/// administrators setting two targets at once keep both.
pub trait LogLevels: Send + Sync + fmt::Debug {
    /// The directives in force, comma-separated in `RUST_LOG`'s syntax
    /// (`info,weft_rm::actor=debug`).
    fn directives(&self) -> String;

    /// Makes `level` the level of `target`: its directive (for the default
    /// target, the one naming no target) is replaced by `target=level` and
    /// every other directive is kept, as [`with_level`] edits them.
    /// Returns the directives the change replaced and those now in force.
    fn set_level(&self, target: &Target, level: LevelFilter) -> Result<LevelChange, LogLevelError>;
}

/// What setting a level did, as the one step that did it saw the filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelChange {
    /// The directives before the change.
    pub before: String,
    /// The directives now in force.
    pub after: String,
}

/// A filter that is only its directives, with no subscriber behind it: it
/// reads and edits them as a real filter would, and changes nothing that
/// is logged. For tests of the daemons' `/logLevel`, which have no
/// subscriber of their own to change.
#[derive(Debug)]
pub struct DirectivesOnly {
    directives: Mutex<String>,
}

impl DirectivesOnly {
    /// A filter of `directives`, taken as they are (unchecked).
    pub fn new(directives: &str) -> DirectivesOnly {
        DirectivesOnly {
            directives: Mutex::new(directives.to_owned()),
        }
    }
}

impl LogLevels for DirectivesOnly {
    fn directives(&self) -> String {
        // Each write swaps in a whole string, so a poisoned lock still holds one.
        self.directives
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_level(&self, target: &Target, level: LevelFilter) -> Result<LevelChange, LogLevelError> {
        let mut d = self
            .directives
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let after = with_level(&d, target, level);
        let before = std::mem::replace(&mut *d, after.clone());
        Ok(LevelChange { before, after })
    }
}

/// Why a level could not be read or set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogLevelError {
    /// The level is not one of the names taken.
    #[error(
        "level {given:?} is not a level: use one of TRACE, DEBUG, INFO, WARN, ERROR, OFF (or log4j's ALL and FATAL), in any case"
    )]
    BadLevel {
        /// The text given.
        given: String,
    },
    /// The target is not a tracing target Weft could have.
    #[error("target {given:?} {why}")]
    BadTarget {
        /// The text given.
        given: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The logging filter refused the edited directives.
    #[error("the logging filter refused the directives {directives:?}: {why}")]
    Refused {
        /// The directives that were to be put in force.
        directives: String,
        /// What the filter said.
        why: String,
    },
}

/// A tracing target as `/logLevel` takes it: a Rust module path
/// (`weft_rm::actor`, `weft_core`) or a prefix of one, or empty for the
/// default (every target without a directive of its own).
///
/// Invariant: empty, or ASCII letters, digits and `_` in segments joined by
/// `::`, at most [`Target::MAX_LEN`] bytes; so it cannot break the
/// directive syntax (`,`, `=`, `[`) or a log line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target(String);

impl Target {
    /// The longest target taken: far past any module path.
    pub const MAX_LEN: usize = 200;

    /// The default target (every target without a directive of its own).
    pub fn default_target() -> Target {
        Target(String::new())
    }

    /// `text` checked as a target.
    pub fn parse(text: &str) -> Result<Target, LogLevelError> {
        let bad = |why| LogLevelError::BadTarget {
            given: text.to_owned(),
            why,
        };
        if text.is_empty() {
            return Ok(Target::default_target());
        }
        if text.len() > Target::MAX_LEN {
            return Err(bad(
                "is too long: targets are module paths of at most 200 bytes",
            ));
        }
        if text.contains('.') && !text.contains("::") {
            return Err(bad(
                "looks like a Java class name; Weft's targets are Rust module paths such as weft_rm::actor or weft_core",
            ));
        }
        let segments_ok = text.split("::").all(|segment| {
            !segment.is_empty()
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        if !segments_ok {
            return Err(bad(
                "is not a module path: use letters, digits and _ in segments joined by :: (weft_rm::actor), or nothing for the default",
            ));
        }
        Ok(Target(text.to_owned()))
    }

    /// The target's text (empty for the default).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the default target.
    pub fn is_default(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_default() {
            f.write_str("(default)")
        } else {
            f.write_str(&self.0)
        }
    }
}

/// `text` as a level: tracing's names and log4j's, in any case. log4j's
/// `ALL` is `TRACE` (the most verbose there is) and `FATAL` is `ERROR`
/// (tracing has nothing above it).
pub fn parse_level(text: &str) -> Result<LevelFilter, LogLevelError> {
    Ok(match text.trim().to_ascii_uppercase().as_str() {
        "ALL" | "TRACE" => LevelFilter::TRACE,
        "DEBUG" => LevelFilter::DEBUG,
        "INFO" => LevelFilter::INFO,
        "WARN" | "WARNING" => LevelFilter::WARN,
        "ERROR" | "FATAL" => LevelFilter::ERROR,
        "OFF" => LevelFilter::OFF,
        _ => {
            return Err(LogLevelError::BadLevel {
                given: text.to_owned(),
            });
        }
    })
}

/// A level's name as `/logLevel` writes it: upper case, as log4j does.
pub fn level_name(level: LevelFilter) -> &'static str {
    match level {
        LevelFilter::TRACE => "TRACE",
        LevelFilter::DEBUG => "DEBUG",
        LevelFilter::INFO => "INFO",
        LevelFilter::WARN => "WARN",
        LevelFilter::ERROR => "ERROR",
        _ => "OFF",
    }
}

/// `directives` with `target`'s directive replaced by `target=level` (for
/// the default target, the directive naming no target replaced by `level`)
/// and every other directive kept in its place.
///
/// A directive with a span or fields (`weft_rm[request]=debug`) is never
/// the one replaced: it applies to fewer events than the target's plain
/// directive, and the caller asked about the target as a whole.
pub fn with_level(directives: &str, target: &Target, level: LevelFilter) -> String {
    let new = if target.is_default() {
        level.to_string()
    } else {
        format!("{}={level}", target.as_str())
    };
    let mut kept: Vec<&str> = split_directives(directives)
        .filter(|d| plain_directive(d).is_none_or(|(t, _)| t != target.as_str()))
        .collect();
    kept.push(&new);
    kept.join(",")
}

/// The level `target`'s events are logged at under `directives`, as the
/// filter decides for an event outside any span: the plain directive with
/// the longest target that `target` begins with (the default directive
/// matches every target), or OFF when none does.
pub fn effective_level(directives: &str, target: &Target) -> LevelFilter {
    split_directives(directives)
        .filter_map(plain_directive)
        .filter(|(t, _)| target.as_str().starts_with(t))
        .max_by_key(|(t, _)| t.len())
        .map_or(LevelFilter::OFF, |(_, level)| level)
}

/// The directives of a filter's text, split at commas outside brackets
/// (a field list, `[{a,b}]`, has commas of its own).
fn split_directives(directives: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0usize;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in directives.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&directives[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&directives[start..]);
    parts.into_iter().map(str::trim).filter(|d| !d.is_empty())
}

/// A directive naming at most a target and a level (no span, no fields),
/// as `(target, level)`: `info` is the default's, `weft_rm=debug` the
/// target's, and a bare `weft_rm` means every level of it, as the filter
/// reads it. `None` for any other directive.
fn plain_directive(directive: &str) -> Option<(&str, LevelFilter)> {
    if directive.contains('[') {
        return None;
    }
    match directive.rsplit_once('=') {
        Some((target, level)) => Some((target, level.parse().ok()?)),
        None => match directive.parse::<LevelFilter>() {
            Ok(level) => Some(("", level)),
            Err(_) => Some((directive, LevelFilter::TRACE)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(text: &str) -> Target {
        Target::parse(text).unwrap()
    }

    #[test]
    fn levels_take_tracing_and_log4j_names_in_any_case() {
        assert_eq!(parse_level("debug"), Ok(LevelFilter::DEBUG));
        assert_eq!(parse_level("Warn"), Ok(LevelFilter::WARN));
        assert_eq!(parse_level("ALL"), Ok(LevelFilter::TRACE));
        assert_eq!(parse_level("fatal"), Ok(LevelFilter::ERROR));
        assert_eq!(parse_level("OFF"), Ok(LevelFilter::OFF));
        assert_eq!(
            parse_level("5").unwrap_err().to_string(),
            "level \"5\" is not a level: use one of TRACE, DEBUG, INFO, WARN, ERROR, OFF (or log4j's ALL and FATAL), in any case"
        );
        assert!(parse_level("").is_err());
        for level in [
            LevelFilter::TRACE,
            LevelFilter::DEBUG,
            LevelFilter::INFO,
            LevelFilter::WARN,
            LevelFilter::ERROR,
            LevelFilter::OFF,
        ] {
            assert_eq!(parse_level(level_name(level)), Ok(level));
        }
    }

    #[test]
    fn targets_are_module_paths_or_nothing() {
        assert!(target("").is_default());
        assert_eq!(target("weft_rm::actor").as_str(), "weft_rm::actor");
        assert_eq!(target("").to_string(), "(default)");
        let why = |text: &str| Target::parse(text).unwrap_err().to_string();
        assert_eq!(
            why("org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"),
            "target \"org.apache.hadoop.yarn.server.resourcemanager.ResourceManager\" looks like a Java class name; Weft's targets are Rust module paths such as weft_rm::actor or weft_core"
        );
        for bad in [
            "weft_rm=debug",
            "a,b",
            "weft_rm::",
            "::x",
            "a:b",
            "a b",
            "x[y]",
        ] {
            assert!(
                why(bad).contains("is not a module path"),
                "{bad}: {}",
                why(bad)
            );
        }
        assert!(why(&"a".repeat(201)).contains("too long"));
    }

    #[test]
    fn setting_a_level_replaces_that_targets_directive_only() {
        let d = "info,weft_rm::actor=debug,weft_core[assign]=trace";
        assert_eq!(
            with_level(d, &target("weft_rm::actor"), LevelFilter::WARN),
            "info,weft_core[assign]=trace,weft_rm::actor=warn"
        );
        assert_eq!(
            with_level(d, &target("weft_core"), LevelFilter::DEBUG),
            "info,weft_rm::actor=debug,weft_core[assign]=trace,weft_core=debug"
        );
        assert_eq!(
            with_level(d, &target(""), LevelFilter::OFF),
            "weft_rm::actor=debug,weft_core[assign]=trace,off"
        );
        // A bare target is that target's directive too.
        assert_eq!(
            with_level("warn,hyper", &target("hyper"), LevelFilter::INFO),
            "warn,hyper=info"
        );
        assert_eq!(
            with_level("", &target("weft_rm"), LevelFilter::DEBUG),
            "weft_rm=debug"
        );
    }

    #[test]
    fn the_effective_level_is_the_longest_matching_targets() {
        let d = "warn,weft_rm=info,weft_rm::actor=debug,weft_core[assign]=trace";
        let at = |t: &str| effective_level(d, &target(t));
        assert_eq!(at("weft_rm::actor"), LevelFilter::DEBUG);
        assert_eq!(at("weft_rm::actor::inner"), LevelFilter::DEBUG);
        assert_eq!(at("weft_rm::http"), LevelFilter::INFO);
        assert_eq!(at("weft_core"), LevelFilter::WARN);
        assert_eq!(at(""), LevelFilter::WARN);
        assert_eq!(
            effective_level("weft_rm=debug", &target("hyper")),
            LevelFilter::OFF
        );
        assert_eq!(
            effective_level("hyper", &target("hyper::proto")),
            LevelFilter::TRACE
        );
    }

    #[test]
    fn a_filter_of_directives_alone_reports_what_each_set_replaced() {
        let levels = DirectivesOnly::new("info,hyper=warn");
        let change = levels
            .set_level(&target("weft_core"), LevelFilter::DEBUG)
            .unwrap();
        assert_eq!(
            change,
            LevelChange {
                before: "info,hyper=warn".to_owned(),
                after: "info,hyper=warn,weft_core=debug".to_owned(),
            }
        );
        let change = levels.set_level(&target(""), LevelFilter::WARN).unwrap();
        assert_eq!(change.before, "info,hyper=warn,weft_core=debug");
        assert_eq!(levels.directives(), "hyper=warn,weft_core=debug,warn");
    }

    #[test]
    fn field_lists_do_not_split_a_directive() {
        let parts: Vec<&str> = split_directives("info, a[{x,y}]=debug ,b=warn,").collect();
        assert_eq!(parts, ["info", "a[{x,y}]=debug", "b=warn"]);
    }
}
