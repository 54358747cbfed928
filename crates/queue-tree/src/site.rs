//! Site settings: the scheduler's properties in a Hadoop-style configuration
//! file (`yarn-site.xml`), read into a typed [`SchedulerSettings`], and the
//! request normalisation those settings imply.
//!
//! Two steps. [`HadoopConfig`] reads any `<configuration><property>` file and
//! remembers where each property was set; the RM service reads its own
//! `weft.*` properties through it too. [`SchedulerSettings::from_config`]
//! turns the scheduler's properties into typed values with Hadoop's defaults,
//! collecting every bad value in one pass.
//!
//! Reading the file from disk is the service's job: everything here takes
//! text. What the settings mean at run time (delay scheduling, assignment per
//! heartbeat, starvation and preemption) is carried out by `weft-core` and
//! `weft-preemption`; this module only hands them typed values. See
//! `docs/site-settings.md` for every property and where Weft differs from
//! Hadoop.
//!
//! ```
//! use weft_model::{Duration, Resource};
//! use weft_queue_tree::site::{HeartbeatAssignment, parse_site_file};
//!
//! let text = r#"<configuration>
//!   <property><name>yarn.scheduler.fair.assignmultiple</name><value>true</value></property>
//!   <property><name>yarn.scheduler.minimum-allocation-mb</name><value>0</value></property>
//!   <property><name>mapred.fairscheduler.preemption</name><value>true</value></property>
//! </configuration>"#;
//! let (settings, warnings) = parse_site_file(text).unwrap();
//! assert_eq!(settings.heartbeat_assignment(), HeartbeatAssignment::HalfOfUnallocated);
//! assert_eq!(settings.wait_time_before_kill, Duration::from_millis(15_000));
//! // The MRv1 name still works, with a deprecation warning.
//! assert!(settings.preemption);
//! assert_eq!(warnings.len(), 1);
//! // A 512 MB ask rounds up to the 1024 MB increment; the queue caps it at 4096 MB.
//! assert_eq!(settings.normalize(Resource::new(512, 1), Resource::UNBOUNDED), Resource::new(1024, 1));
//! assert_eq!(settings.normalize(Resource::new(5120, 1), Resource::new(4096, 4)), Resource::new(4096, 1));
//! ```

mod allocation;
mod hadoop_config;
mod settings;
mod values;

use std::fmt;

use weft_model::{Duration, ResourceType};

pub use allocation::{AllocationLimits, AllocationLimitsError};
pub use hadoop_config::{HadoopConfig, Layer, Property};
pub use settings::{
    Fraction, HeartbeatAssignment, LocalityDelay, LocalityRelaxation, LocalityThreshold, MaxAssign,
    OpportunityThresholds, PreemptionModel, SchedulerSettings, TimeDelays, UnknownPreemptionModel,
};
pub use values::parse_bool;

/// Parses a site file and reads the scheduler settings from it: the warnings
/// of both steps, the file's first.
pub fn parse_site_file(text: &str) -> Result<(SchedulerSettings, Vec<SiteWarning>), SiteError> {
    let config = HadoopConfig::parse(text)?;
    let (settings, warnings) = SchedulerSettings::from_config(&config)?;
    let mut all = config.warnings().to_vec();
    all.extend(warnings);
    Ok((settings, all))
}

/// A position in the configuration text, both 1-based; the column counts
/// characters, not bytes. Positions order by text, then line, then column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// Which text of a layered configuration the position is in, counted
    /// from 0 in the order the texts were layered
    /// ([`HadoopConfig::parse_layered`]); 0 for a single text. It is not
    /// shown: whoever named the texts puts the name in front.
    pub layer: u8,
    /// Line number, from 1.
    pub line: u32,
    /// Column number in characters, from 1.
    pub column: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Every problem that stopped a site file from being accepted, in file order.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", render_problems(.problems))]
pub struct SiteError {
    /// The problems; never empty.
    pub problems: Vec<SiteProblem>,
}

fn render_problems(problems: &[SiteProblem]) -> String {
    let mut res = match problems.len() {
        1 => "the site configuration has 1 problem:".to_owned(),
        n => format!("the site configuration has {n} problems:"),
    };
    for problem in problems {
        res.push_str("\n  ");
        res.push_str(&problem.to_string());
    }
    res
}

/// One reason a site file is rejected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SiteProblem {
    /// The text is not well-formed XML; reading stops here.
    #[error("{location}: malformed XML: {message}")]
    Xml {
        /// Where the parser gave up.
        location: Location,
        /// The XML parser's explanation.
        message: String,
    },
    /// The text ends while an element is still open.
    #[error("{location}: <{element}> is never closed")]
    Unclosed {
        /// Where the element opens.
        location: Location,
        /// The element's name.
        element: String,
    },
    /// There is no root element at all.
    #[error("{location}: no <configuration> element")]
    NoRoot {
        /// The end of the text.
        location: Location,
    },
    /// The root element is not `<configuration>`.
    #[error("{location}: the root element is <{found}>, expected <configuration>")]
    WrongRoot {
        /// Where the root element opens.
        location: Location,
        /// Its name.
        found: String,
    },
    /// An XInclude: the included file cannot be read from here, and skipping it
    /// would silently drop settings.
    #[error("{location}: <{element}> is not supported: put the included properties in this file")]
    Include {
        /// Where the include element opens.
        location: Location,
        /// Its name as written (`xi:include`).
        element: String,
    },
    /// A property gives its name, value or final flag twice.
    #[error("{location}: property {}: <{field}> is given more than once", describe(.name))]
    DuplicateField {
        /// Where the second one is.
        location: Location,
        /// The property's name, when it has one.
        name: Option<String>,
        /// `name`, `value` or `final`.
        field: &'static str,
    },
    /// A property's name, value or final flag contains an element instead of text.
    #[error("{location}: <{field}> contains the element <{element}>; expected text only")]
    ElementInField {
        /// Where the inner element opens.
        location: Location,
        /// `name`, `value` or `final`.
        field: &'static str,
        /// The inner element's name.
        element: String,
    },
    /// `<final>` is neither `true` nor `false`.
    #[error("{location}: property {}: <final> is {value:?}, expected true or false", describe(.name))]
    InvalidFinal {
        /// Where the flag is.
        location: Location,
        /// The property's name, when it has one.
        name: Option<String>,
        /// The flag as written.
        value: String,
    },
    /// A value that does not parse as the property's type.
    #[error("{location}: property {name}: {value:?} is not {expected}")]
    InvalidValue {
        /// Where the value is set.
        location: Location,
        /// The property.
        name: String,
        /// The value as written.
        value: String,
        /// What the property takes (`a boolean (true or false)`, `an integer`...).
        expected: &'static str,
    },
    /// A value of the right type outside the property's range.
    #[error("{location}: property {name}: {value} is out of range: {reason}")]
    OutOfRange {
        /// Where the value is set.
        location: Location,
        /// The property.
        name: String,
        /// The value as written.
        value: String,
        /// The rule it breaks (`must be positive`...).
        reason: &'static str,
    },
    /// A per-queue property whose queue part is not a valid queue path.
    #[error("{location}: property {name}: {reason}")]
    InvalidQueueName {
        /// Where the property is set.
        location: Location,
        /// The property.
        name: String,
        /// Why the queue part is invalid.
        reason: String,
    },
    /// The scheduler's minimum allocation is above its maximum for one resource type.
    #[error(
        "{location}: the minimum allocation of {resource} is above the maximum: {min_name} = {min} > {max_name} = {max}"
    )]
    MinAboveMax {
        /// Where the later of the two properties is set.
        location: Location,
        /// The resource type.
        resource: ResourceType,
        /// The minimum's property name.
        min_name: &'static str,
        /// The minimum.
        min: u64,
        /// The maximum's property name.
        max_name: &'static str,
        /// The maximum.
        max: u64,
    },
}

fn in_text(name: &Option<String>) -> String {
    match name {
        Some(name) => format!(" of {name}"),
        None => String::new(),
    }
}

fn describe(name: &Option<String>) -> String {
    match name {
        Some(name) => name.clone(),
        None => "(unnamed)".to_owned(),
    }
}

impl SiteProblem {
    /// Where the problem is.
    pub fn location(&self) -> Location {
        match self {
            SiteProblem::Xml { location, .. }
            | SiteProblem::Unclosed { location, .. }
            | SiteProblem::NoRoot { location }
            | SiteProblem::WrongRoot { location, .. }
            | SiteProblem::Include { location, .. }
            | SiteProblem::DuplicateField { location, .. }
            | SiteProblem::ElementInField { location, .. }
            | SiteProblem::InvalidFinal { location, .. }
            | SiteProblem::InvalidValue { location, .. }
            | SiteProblem::OutOfRange { location, .. }
            | SiteProblem::InvalidQueueName { location, .. }
            | SiteProblem::MinAboveMax { location, .. } => *location,
        }
    }
}

/// Something worth an operator's attention that does not stop the file from
/// being used. The service logs these.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SiteWarning {
    /// A property set twice; the later value wins (Hadoop's rule).
    #[error("{location}: property {name} is set again (first at {previous}); the later value wins")]
    DuplicateProperty {
        /// Where the later value is.
        location: Location,
        /// The property.
        name: String,
        /// Where the earlier value is.
        previous: Location,
    },
    /// A later value of a property marked final; it is ignored (Hadoop's rule).
    #[error(
        "{location}: property {name} is final (set at {final_at}{}); this later value is ignored",
        in_text(.final_in)
    )]
    FinalOverride {
        /// Where the ignored value is.
        location: Location,
        /// The property.
        name: String,
        /// Where the final value is.
        final_at: Location,
        /// The name of the text the final value is in, when that is an
        /// earlier text of a layered configuration than this value's.
        final_in: Option<String>,
    },
    /// A `<property>` without a name; ignored, as Hadoop does.
    #[error("{location}: a <property> without a <name> is ignored")]
    MissingName {
        /// Where the property opens.
        location: Location,
    },
    /// A `<property>` without a value; ignored, as Hadoop does.
    #[error("{location}: property {name} has no <value> and is ignored")]
    MissingValue {
        /// Where the property opens.
        location: Location,
        /// The property.
        name: String,
    },
    /// An element Hadoop's format does not define there; skipped.
    #[error("{location}: <{element}> inside <{parent}> is ignored")]
    IgnoredElement {
        /// Where the element opens.
        location: Location,
        /// Its name.
        element: String,
        /// The enclosing element.
        parent: String,
    },
    /// Text directly inside `<configuration>` or `<property>`; skipped.
    #[error("{location}: text directly inside <{parent}> is ignored")]
    IgnoredText {
        /// Where the text starts.
        location: Location,
        /// The enclosing element.
        parent: String,
    },
    /// `${...}` substitution nested more than 20 deep (a cycle); the value is
    /// kept as written, as if nothing were substituted.
    #[error(
        "{location}: property {name}: variable substitution is nested too deep (a cycle?); the value is kept as written"
    )]
    SubstitutionTooDeep {
        /// Where the value is set.
        location: Location,
        /// The property.
        name: String,
    },
    /// A deprecated or MRv1 name used in place of the current one.
    #[error("{location}: {name} is deprecated; use {replacement}")]
    DeprecatedName {
        /// Where it is set.
        location: Location,
        /// The old name.
        name: String,
        /// The current name, which takes the value.
        replacement: &'static str,
    },
    /// A setting Hadoop has deprecated, still honoured.
    #[error("{location}: {name} is deprecated: {advice}")]
    DeprecatedFeature {
        /// Where it is set.
        location: Location,
        /// The property.
        name: String,
        /// What to do instead.
        advice: &'static str,
    },
    /// An old name set together with the name that replaces it; the old one is ignored.
    #[error("{location}: {name} is ignored because {by} is also set")]
    Shadowed {
        /// Where the ignored property is set.
        location: Location,
        /// The ignored property.
        name: String,
        /// The property that wins.
        by: &'static str,
    },
    /// A known property with no effect in Weft.
    #[error("{location}: {name} is ignored: {reason}")]
    Ignored {
        /// Where it is set.
        location: Location,
        /// The property.
        name: String,
        /// Why it has no effect.
        reason: &'static str,
    },
    /// An unknown name under a scheduler prefix: probably a typo.
    #[error("{location}: unknown scheduler property {name} (a typo?) is ignored")]
    UnknownProperty {
        /// Where it is set.
        location: Location,
        /// The property.
        name: String,
    },
    /// A negative value Hadoop replaces with the default.
    #[error("{location}: {name} = {value} is negative; the default {default} is used")]
    NegativeUsesDefault {
        /// Where it is set.
        location: Location,
        /// The property.
        name: String,
        /// The value as written.
        value: String,
        /// The value used instead.
        default: Duration,
    },
    /// A fraction above 1 that counts as 1.
    #[error("{location}: {name} = {value} is above 1 and counts as 1")]
    Clamped {
        /// Where it is set.
        location: Location,
        /// The property.
        name: String,
        /// The value as written.
        value: String,
    },
}

impl SiteWarning {
    /// Where the warning points.
    pub fn location(&self) -> Location {
        match self {
            SiteWarning::DuplicateProperty { location, .. }
            | SiteWarning::FinalOverride { location, .. }
            | SiteWarning::MissingName { location }
            | SiteWarning::MissingValue { location, .. }
            | SiteWarning::IgnoredElement { location, .. }
            | SiteWarning::IgnoredText { location, .. }
            | SiteWarning::SubstitutionTooDeep { location, .. }
            | SiteWarning::DeprecatedName { location, .. }
            | SiteWarning::DeprecatedFeature { location, .. }
            | SiteWarning::Shadowed { location, .. }
            | SiteWarning::Ignored { location, .. }
            | SiteWarning::UnknownProperty { location, .. }
            | SiteWarning::NegativeUsesDefault { location, .. }
            | SiteWarning::Clamped { location, .. } => *location,
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn parse_site_file_keeps_both_kinds_of_warning() {
        let text = r#"<configuration>
  <property><name>yarn.scheduler.fair.preemption</name><value>true</value></property>
  <property><name>yarn.scheduler.fair.preemption</name><value>false</value></property>
  <property><name>mapred.fairscheduler.sizebasedweight</name><value>true</value></property>
</configuration>"#;
        let (settings, warnings) = parse_site_file(text).unwrap();
        assert!(!settings.preemption);
        assert!(settings.size_based_weight);
        let rendered: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        expect![[r#"
            [
                "line 3, column 56: property yarn.scheduler.fair.preemption is set again (first at line 2, column 56); the later value wins",
                "line 4, column 62: mapred.fairscheduler.sizebasedweight is deprecated; use yarn.scheduler.fair.sizebasedweight",
            ]
        "#]]
        .assert_debug_eq(&rendered);
    }

    #[test]
    fn error_lists_every_problem() {
        let text = r#"<configuration>
  <property><name>yarn.scheduler.fair.preemption</name><value>yes</value></property>
  <property><name>yarn.scheduler.minimum-allocation-mb</name><value>-1</value></property>
</configuration>"#;
        let err = parse_site_file(text).unwrap_err();
        assert_eq!(err.problems.len(), 2);
        expect![[r#"
            the site configuration has 2 problems:
              line 2, column 56: property yarn.scheduler.fair.preemption: "yes" is not a boolean (true or false)
              line 3, column 62: property yarn.scheduler.minimum-allocation-mb: -1 is out of range: must not be negative"#]]
        .assert_eq(&err.to_string());
    }
}
