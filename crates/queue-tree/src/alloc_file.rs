//! Parsing and validation of `fair-scheduler.xml` text into an [`AllocConfig`],
//! reporting every problem and warning with its line, column and element path.
//!
//! This module owns the file's syntax and its load-time rules (what Hadoop's
//! `AllocationFileLoaderService` checks, and the few places where Weft is
//! deliberately stricter, listed in `docs/allocation-file.md`). It takes a
//! string, never a path: reading the file, and deciding what to do with a
//! reload that fails, is the service's job. Resolving inheritance and defaults
//! into per-queue settings is the queue tree's job.
//!
//! ```
//! use weft_queue_tree::alloc_file::parse_alloc_file;
//!
//! let loaded = parse_alloc_file(
//!     r#"<allocations>
//!          <queue name="eng"><weight>2</weight></queue>
//!        </allocations>"#,
//! )
//! .unwrap();
//! let eng = "root.eng".parse().unwrap();
//! assert_eq!(loaded.config.queue(&eng).unwrap().weight, Some(2.0));
//! assert!(loaded.warnings.is_empty());
//!
//! let err = parse_alloc_file("<allocations><queue name=\"a\"><weight>-1</weight></queue></allocations>")
//!     .unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "1:30: allocations/queue[@name=\"a\"]/weight: \"-1\" is negative; expected a non-negative decimal number such as 1 or 2.5"
//! );
//! ```

mod dom;
mod rules;
mod values;
mod walk;

#[cfg(test)]
mod tests;

use std::fmt;

use weft_model::{QueuePath, Resource, ResourceParseError};

use crate::config::AllocConfig;
use crate::policy::{Policy, UnknownPolicy};

/// Parses and validates a whole allocation file.
///
/// On success the configuration comes with the warnings (things Hadoop
/// accepts or ignores that probably are not what the author meant). On failure
/// every problem found in the file is reported, in document order, and no
/// configuration is returned.
pub fn parse_alloc_file(text: &str) -> Result<LoadedAllocConfig, AllocFileError> {
    walk::parse(text)
}

/// A valid allocation file, and what looked wrong in it without being fatal.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedAllocConfig {
    /// The configuration.
    pub config: AllocConfig,
    /// Warnings in document order.
    pub warnings: Vec<AllocFileWarning>,
}

/// Why an allocation file was rejected: every problem in it. Displays one
/// problem per line, then the warnings under their own heading, since
/// whoever reads the refusal (an operator's `refresh-queues`, a simulator
/// run) often needs them to see the cause.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", render_with_warnings(.problems, .warnings))]
pub struct AllocFileError {
    /// The problems in document order; never empty.
    pub problems: Vec<AllocFileProblem>,
    /// The warnings found in the same pass, in document order (often the
    /// clue to a problem: an ignored misspelt element, for example).
    pub warnings: Vec<AllocFileWarning>,
}

/// A finding tied to a place in the file. Displays as `line:col: element: message`.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<K> {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// The element path, such as `allocations/queue[@name="a"]/weight`
    /// (`(document)` when the problem is outside every element).
    pub element: String,
    /// What was found.
    pub kind: K,
}

/// A problem that makes the file invalid.
pub type AllocFileProblem = Located<ProblemKind>;

/// Something the file does that Hadoop accepts but that is probably a mistake.
pub type AllocFileWarning = Located<WarningKind>;

impl<K: fmt::Display> fmt::Display for Located<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.line, self.column, self.element, self.kind
        )
    }
}

fn render_lines(problems: &[AllocFileProblem]) -> String {
    let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
    lines.join("\n")
}

fn render_with_warnings(problems: &[AllocFileProblem], warnings: &[AllocFileWarning]) -> String {
    let mut text = render_lines(problems);
    if !warnings.is_empty() {
        text.push_str("\nwarnings, which may explain the problems:");
        for w in warnings {
            text.push('\n');
            text.push_str(&w.to_string());
        }
    }
    text
}

/// Every class of problem that makes an allocation file invalid.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProblemKind {
    /// The text is not well-formed XML.
    #[error("malformed xml: {message}")]
    MalformedXml {
        /// What the XML reader found.
        message: String,
    },
    /// The document's root element is not `<allocations>`.
    #[error(
        "the root element is <{found}>; an allocation file's root element must be <allocations>"
    )]
    WrongRootElement {
        /// The root element's name.
        found: String,
    },
    /// A required attribute is absent or empty.
    #[error("the {attribute} attribute is missing or empty; {why}")]
    MissingAttribute {
        /// The attribute.
        attribute: &'static str,
        /// What it is needed for.
        why: &'static str,
    },
    /// An element that needs a value has none.
    #[error("the value is empty; expected {expected}")]
    EmptyValue {
        /// The form expected.
        expected: &'static str,
    },
    /// A value is not a number of the expected form.
    #[error("{text:?} is not {expected}")]
    NotANumber {
        /// The value as written.
        text: String,
        /// The form expected.
        expected: &'static str,
    },
    /// A number is negative where only non-negative values make sense.
    #[error("{text:?} is negative; expected {expected}")]
    NegativeNumber {
        /// The value as written.
        text: String,
        /// The form expected.
        expected: &'static str,
    },
    /// A whole number does not fit.
    #[error("{text:?} is too large; expected {expected}")]
    NumberTooLarge {
        /// The value as written.
        text: String,
        /// The form expected.
        expected: &'static str,
    },
    /// A `maxAMShare` or `queueMaxAMShareDefault` below 0 other than -1.
    #[error("{text:?} is not a valid AM share; expected -1 (no limit) or a fraction from 0 to 1")]
    AmShareOutOfRange {
        /// The value as written.
        text: String,
    },
    /// A boolean element or attribute is neither `true` nor `false`.
    #[error("{name} is {text:?}; expected true or false")]
    InvalidBool {
        /// The element or attribute.
        name: &'static str,
        /// The value as written.
        text: String,
    },
    /// A resource value could not be parsed.
    #[error("{source}")]
    InvalidResource {
        /// The resource parser's verdict, naming the text and the reason.
        source: ResourceParseError,
    },
    /// A scheduling policy name is not `fair`, `fifo` or `drf`.
    #[error("{source}")]
    UnknownPolicy {
        /// The policy parser's verdict.
        source: UnknownPolicy,
    },
    /// `minResources` does not fit in the same queue's absolute `maxResources`.
    #[error(
        "minResources {min} is larger than maxResources {max}; a queue's guaranteed share must fit in its maximum"
    )]
    MinAboveMax {
        /// The configured minimum.
        min: Resource,
        /// The configured maximum.
        max: Resource,
    },
    /// `<queue name="root">` has sibling queue elements.
    #[error(
        "a queue element named root must be the only queue element at the top level; put the other queues inside it"
    )]
    RootWithSiblings,
    /// The same queue is declared by two elements.
    #[error("queue {queue} is declared twice (first at line {first_line}); merge the two elements")]
    DuplicateQueue {
        /// The queue.
        queue: QueuePath,
        /// Line of the first declaration.
        first_line: usize,
    },
    /// A queue name (or a placement rule's target) is not a valid name.
    #[error("invalid queue name {name:?}: {reason}")]
    InvalidQueueName {
        /// The name as written.
        name: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// A queue is nested deeper than the tree takes.
    #[error(
        "queue {queue} is {depth} levels below root; queues may be nested at most {max} levels deep"
    )]
    QueueTooDeep {
        /// The queue.
        queue: QueuePath,
        /// Its levels below root.
        depth: usize,
        /// `MAX_QUEUE_DEPTH`.
        max: usize,
    },
    /// A queue's `type` attribute is neither `parent` nor `leaf`.
    #[error("type is {text:?}; expected \"parent\" or \"leaf\"")]
    InvalidQueueType {
        /// The value as written.
        text: String,
    },
    /// A queue is declared both a leaf and a parent.
    #[error("{conflict}")]
    QueueTypeConflict {
        /// Which two declarations clash.
        conflict: TypeConflict,
    },
    /// `fifo` on a parent queue.
    #[error("queue {queue} is a parent queue, and fifo orders apps only; use fair or drf")]
    FifoParent {
        /// The queue.
        queue: QueuePath,
    },
    /// A parent's policy does not accept a child's (a `fair` parent with a `drf` child).
    #[error(
        "queue {child} uses {child_policy}{} but its parent {parent} uses {parent_policy}{}; a {parent_policy} parent cannot have a {child_policy} child (Hadoop drops such a queue at startup): make the parent drf or the child fair",
        default_note(*.child_from_default),
        default_note(*.parent_from_default)
    )]
    IncompatiblePolicies {
        /// The parent queue.
        parent: QueuePath,
        /// Its effective policy.
        parent_policy: Policy,
        /// True when the parent sets no policy and gets the default.
        parent_from_default: bool,
        /// The child queue.
        child: QueuePath,
        /// Its effective policy.
        child_policy: Policy,
        /// True when the child sets no policy and gets the default.
        child_from_default: bool,
    },
    /// A setting is given twice in the same element (possibly under two spellings).
    #[error("{name} is given more than once here (as {first} at line {first_line}); keep one")]
    DuplicateElement {
        /// The repeated element as written.
        name: String,
        /// The first occurrence as written.
        first: String,
        /// Line of the first occurrence.
        first_line: usize,
    },
    /// Two `user` elements for the same user.
    #[error(
        "user {user:?} is configured twice (first at line {first_line}); merge the two elements"
    )]
    DuplicateUser {
        /// The user.
        user: String,
        /// Line of the first element.
        first_line: usize,
    },
    /// `queuePlacementPolicy` contains no `rule` element.
    #[error("the placement policy has no rules; add rule elements or remove queuePlacementPolicy")]
    EmptyPlacementPolicy,
    /// A rule's name is not one Hadoop knows.
    #[error(
        "unknown placement rule {name:?} (expected specified, user, primaryGroup, secondaryGroupExistingQueue, nestedUserQueue, default or reject)"
    )]
    UnknownRule {
        /// The name as written.
        name: String,
    },
    /// A rule that cannot take a parent rule has a nested rule.
    #[error("the {rule} rule cannot have a nested rule")]
    NestedRuleNotAllowed {
        /// The rule.
        rule: &'static str,
    },
    /// `nestedUserQueue` without its nested rule.
    #[error("nestedUserQueue needs exactly one nested rule that names the parent queue")]
    MissingNestedRule,
    /// More than one nested rule.
    #[error("the {rule} rule has {count} nested rules; it takes exactly one")]
    SeveralNestedRules {
        /// The rule.
        rule: &'static str,
        /// How many were given.
        count: usize,
    },
    /// `reject` or `nestedUserQueue` used as a nested (parent) rule.
    #[error("{parent} cannot be used as the parent rule of {rule}")]
    InvalidParentRule {
        /// The outer rule.
        rule: &'static str,
        /// The nested rule.
        parent: &'static str,
    },
    /// A rule nested in a rule of its own type.
    #[error("the {rule} rule cannot have a nested {rule} rule")]
    ParentRuleSameType {
        /// The rule.
        rule: &'static str,
    },
    /// A rule after a terminal rule.
    #[error(
        "this rule can never be reached: the {terminal} rule at line {terminal_line} always places or rejects the app"
    )]
    UnreachableRule {
        /// The terminal rule before this one.
        terminal: &'static str,
        /// Its line.
        terminal_line: usize,
    },
    /// The last rule may let an app through unplaced.
    #[error(
        "the last placement rule ({rule}) can pass an app on without placing it; end with a rule that always places (default, or user or primaryGroup with create=\"true\") or with reject"
    )]
    LastRuleNotTerminal {
        /// The last rule.
        rule: &'static str,
    },
}

impl ProblemKind {
    /// A short stable identifier of the class of problem (for tools and tests).
    pub fn code(&self) -> &'static str {
        match self {
            ProblemKind::MalformedXml { .. } => "malformed-xml",
            ProblemKind::WrongRootElement { .. } => "wrong-root-element",
            ProblemKind::MissingAttribute { .. } => "missing-attribute",
            ProblemKind::EmptyValue { .. } => "empty-value",
            ProblemKind::NotANumber { .. } => "not-a-number",
            ProblemKind::NegativeNumber { .. } => "negative-number",
            ProblemKind::NumberTooLarge { .. } => "number-too-large",
            ProblemKind::AmShareOutOfRange { .. } => "am-share-out-of-range",
            ProblemKind::InvalidBool { .. } => "invalid-bool",
            ProblemKind::InvalidResource { .. } => "invalid-resource",
            ProblemKind::UnknownPolicy { .. } => "unknown-policy",
            ProblemKind::MinAboveMax { .. } => "min-above-max",
            ProblemKind::RootWithSiblings => "root-with-siblings",
            ProblemKind::DuplicateQueue { .. } => "duplicate-queue",
            ProblemKind::InvalidQueueName { .. } => "invalid-queue-name",
            ProblemKind::QueueTooDeep { .. } => "queue-too-deep",
            ProblemKind::InvalidQueueType { .. } => "invalid-queue-type",
            ProblemKind::QueueTypeConflict { .. } => "queue-type-conflict",
            ProblemKind::FifoParent { .. } => "fifo-parent",
            ProblemKind::IncompatiblePolicies { .. } => "incompatible-policies",
            ProblemKind::DuplicateElement { .. } => "duplicate-element",
            ProblemKind::DuplicateUser { .. } => "duplicate-user",
            ProblemKind::EmptyPlacementPolicy => "empty-placement-policy",
            ProblemKind::UnknownRule { .. } => "unknown-rule",
            ProblemKind::NestedRuleNotAllowed { .. } => "nested-rule-not-allowed",
            ProblemKind::MissingNestedRule => "missing-nested-rule",
            ProblemKind::SeveralNestedRules { .. } => "several-nested-rules",
            ProblemKind::InvalidParentRule { .. } => "invalid-parent-rule",
            ProblemKind::ParentRuleSameType { .. } => "parent-rule-same-type",
            ProblemKind::UnreachableRule { .. } => "unreachable-rule",
            ProblemKind::LastRuleNotTerminal { .. } => "last-rule-not-terminal",
        }
    }
}

impl WarningKind {
    /// A short stable identifier of the class of warning (for tools and tests).
    pub fn code(&self) -> &'static str {
        match self {
            WarningKind::UnknownElement { .. } => "unknown-element",
            WarningKind::UnknownAttribute { .. } => "unknown-attribute",
            WarningKind::UnexpectedText { .. } => "unexpected-text",
            WarningKind::Clamped { .. } => "clamped",
            WarningKind::MaxContainerAllocationOnRoot => "max-container-allocation-on-root",
            WarningKind::MaxAmShareOnParent { .. } => "max-am-share-on-parent",
            WarningKind::SlotMinimum { .. } => "slot-minimum",
            WarningKind::LegacyName { .. } => "legacy-name",
            WarningKind::LegacyTimeoutShadowed => "legacy-timeout-shadowed",
            WarningKind::ReservationValueIgnored { .. } => "reservation-value-ignored",
            WarningKind::PlacementTargetIsParent { .. } => "placement-target-is-parent",
        }
    }
}

fn unknown_element_hint(
    name: &str,
    did_you_mean: Option<&str>,
    belongs_in: Option<&str>,
) -> String {
    match (did_you_mean, belongs_in) {
        (Some(similar), None) => format!("; did you mean <{similar}>?"),
        (Some(similar), Some(place)) => {
            format!("; did you mean <{similar}>? (it belongs in {place})")
        }
        (None, Some(place)) => format!("; <{name}> belongs in {place}"),
        (None, None) => String::new(),
    }
}

fn default_note(from_default: bool) -> &'static str {
    if from_default { " (by default)" } else { "" }
}

/// The ways a queue element can claim to be both a leaf and a parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TypeConflict {
    /// `reservation` together with child queues or `type="parent"`.
    #[error(
        "a queue with child queues or type=\"parent\" cannot also have a reservation element (plan queues are leaves)"
    )]
    ReservationOnParent,
    /// `type="leaf"` on an element with child queues.
    #[error("the queue is declared type=\"leaf\" but has child queues")]
    LeafWithChildren,
    /// `root` declared a leaf or reservable.
    #[error("root is always a parent queue; it cannot be a leaf or have a reservation element")]
    RootNotParent,
    /// `root.default` given children or `type="parent"`.
    #[error("root.default is always a leaf queue; it cannot have child queues or type=\"parent\"")]
    DefaultQueueAsParent,
}

/// Every class of warning: the file loads, but something in it is probably not
/// what its author meant.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WarningKind {
    /// An element that is not known where it appears (Hadoop ignores it).
    #[error(
        "unknown element <{name}> in {within} is ignored{}",
        unknown_element_hint(name, *did_you_mean, *belongs_in)
    )]
    UnknownElement {
        /// The element's name.
        name: String,
        /// Where it was found (`a queue element`, `allocations`, ...).
        within: &'static str,
        /// A known element with a similar name.
        did_you_mean: Option<&'static str>,
        /// Where the element (or the similar one) does have a meaning, when
        /// that is somewhere else.
        belongs_in: Option<&'static str>,
    },
    /// An attribute with no meaning on this element.
    #[error("unknown attribute {name:?} is ignored")]
    UnknownAttribute {
        /// The attribute's name.
        name: String,
    },
    /// Text where only elements are expected.
    #[error("text {text:?} is ignored; only elements belong here")]
    UnexpectedText {
        /// The text (trimmed, cut to a few words).
        text: String,
    },
    /// A value outside the range Hadoop accepts, clamped as Hadoop does.
    #[error("{text:?} is outside {range}; it is clamped to {to}, as Hadoop does")]
    Clamped {
        /// The value as written.
        text: String,
        /// The accepted range.
        range: &'static str,
        /// The value used.
        to: f64,
    },
    /// `maxContainerAllocation` on root.
    #[error(
        "Hadoop documents maxContainerAllocation as invalid on root; it is kept and inherited by queues that set none, but the cluster-wide cap belongs in yarn.scheduler.maximum-allocation-mb and -vcores"
    )]
    MaxContainerAllocationOnRoot,
    /// `maxAMShare` on a parent queue, where it has no effect.
    #[error(
        "maxAMShare only applies to leaf queues and is not inherited; on parent {queue} it has no effect"
    )]
    MaxAmShareOnParent {
        /// The parent queue.
        queue: QueuePath,
    },
    /// MRv1 `minMaps` / `minReduces`.
    #[error(
        "{name} is an MRv1 slot minimum with no YARN equivalent and is ignored; use minResources (for example \"4096 mb, 4 vcores\")"
    )]
    SlotMinimum {
        /// The element's name.
        name: &'static str,
    },
    /// An MRv1 spelling that Weft reads but Hadoop's YARN Fair Scheduler ignores.
    #[error(
        "{name} is the MRv1 name of {replacement}; Weft reads it as {replacement}, but Hadoop's YARN scheduler ignores it: rename it"
    )]
    LegacyName {
        /// The element as written.
        name: &'static str,
        /// The current name.
        replacement: &'static str,
    },
    /// The legacy top-level `fairSharePreemptionTimeout` next to `defaultFairSharePreemptionTimeout`.
    #[error(
        "fairSharePreemptionTimeout at the top level is ignored because defaultFairSharePreemptionTimeout is also set"
    )]
    LegacyTimeoutShadowed,
    /// Text inside `reservation`, which takes none.
    #[error(
        "reservation takes no value and {text:?} is ignored: the element's presence alone makes the queue reservable"
    )]
    ReservationValueIgnored {
        /// The text.
        text: String,
    },
    /// A top-level `default` rule places into a configured parent queue.
    #[error(
        "the default rule places apps into {queue}, which is a parent queue; those apps will be rejected"
    )]
    PlacementTargetIsParent {
        /// The target.
        queue: QueuePath,
    },
}
