//! Queue placement: the rule chain that turns (requested queue, user, groups)
//! into a queue or a rejection.
//!
//! The rules are data parsed from the allocation file (`alloc_file`) or built
//! from the site settings. Evaluation is a pure function of the rules, the
//! request, the user's groups (from a `GroupMapping`) and which queues exist
//! (a `QueueLookup`); creating the queue is the tree's job.

use weft_model::QueuePath;

/// An ordered list of rules; the first that places the app wins.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementPolicy {
    /// The rules, in order. Invariant: only the last can be terminal and it is.
    pub rules: Vec<PlacementRule>,
}

/// One `<rule>`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementRule {
    /// What the rule does.
    pub kind: RuleKind,
    /// `create`: whether the rule may place into a queue that is not configured.
    pub create: bool,
    /// A nested rule that decides the parent queue (`nestedUserQueue`, or any
    /// rule that Hadoop lets take a parent).
    pub parent: Option<Box<PlacementRule>>,
}

/// The rule types Hadoop knows.
#[derive(Clone, Debug, PartialEq)]
pub enum RuleKind {
    /// The queue named at submission (`specified`).
    Specified,
    /// `root.<user>` (`user`).
    User,
    /// `root.<primary group>` (`primaryGroup`).
    PrimaryGroup,
    /// The first of the user's groups with a configured queue (`secondaryGroupExistingQueue`).
    SecondaryGroupExistingQueue,
    /// `<parent rule's queue>.<user>` (`nestedUserQueue`).
    NestedUserQueue,
    /// A fixed queue (`default`, `queue` attribute, `root.default` when absent).
    Default {
        /// The queue to place into.
        queue: QueuePath,
    },
    /// Reject the application (`reject`).
    Reject,
}

impl RuleKind {
    /// The allocation-file name of the rule.
    pub fn name(&self) -> &'static str {
        match self {
            RuleKind::Specified => "specified",
            RuleKind::User => "user",
            RuleKind::PrimaryGroup => "primaryGroup",
            RuleKind::SecondaryGroupExistingQueue => "secondaryGroupExistingQueue",
            RuleKind::NestedUserQueue => "nestedUserQueue",
            RuleKind::Default { .. } => "default",
            RuleKind::Reject => "reject",
        }
    }
}

impl PlacementRule {
    /// A rule without a parent rule.
    pub fn new(kind: RuleKind, create: bool) -> PlacementRule {
        PlacementRule {
            kind,
            create,
            parent: None,
        }
    }

    /// True when the rule always places or rejects, so no rule after it can be
    /// reached (Hadoop's `isTerminal`, used to validate the chain).
    pub fn is_terminal(&self) -> bool {
        match &self.kind {
            RuleKind::Reject => true,
            RuleKind::Specified | RuleKind::SecondaryGroupExistingQueue => false,
            RuleKind::NestedUserQueue => {
                self.create && self.parent.as_ref().is_some_and(|p| p.create)
            }
            RuleKind::User | RuleKind::PrimaryGroup => match &self.parent {
                // With a parent rule the parent may resolve to a leaf, and the rule then continues.
                Some(parent) => self.create && parent.create && parent.is_terminal(),
                None => self.create,
            },
            RuleKind::Default { .. } => self.create,
        }
    }
}
