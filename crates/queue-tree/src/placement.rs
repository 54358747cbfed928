//! Queue placement: the rule chain that turns (requested queue, user, groups)
//! into a queue or a rejection.
//!
//! The rules are data parsed from the allocation file (`alloc_file`) or built
//! from the site settings ([`PlacementPolicy::from_site_flags`]). Evaluation
//! ([`PlacementPolicy::place`]) is a pure function of the rules, the request,
//! the user's groups (from a [`GroupMapping`]) and which queues exist (a
//! [`QueueLookup`]). Validating the rule chain is the loader's job, and
//! creating the queue, checking ACLs and adding the app are the tree's.
//!
//! Semantics follow Hadoop's current Fair Scheduler rules (reference section
//! 6.1), with two choices written down here:
//!
//! * A rule whose queue is an existing parent queue (or root) ends placement
//!   with [`PlacementRejection::NotALeaf`], as Hadoop does: its rules return
//!   the parent and the scheduler then refuses the app ("not a leaf queue").
//!   Continuing to the next rule would quietly move an app whose submitter
//!   asked for a parent into some other queue.
//! * A rule whose queue would have to be created under an existing leaf queue
//!   (or under `root.default`, which never has children) does not place: the
//!   chain continues, and if no later rule places, the rejection lists the
//!   reason. Hadoop instead returns the queue and then fails to create it,
//!   rejecting the app; Weft generalises Hadoop's own parent-rule behaviour
//!   ("the parent rule gave a leaf: continue") so a later rule can still
//!   place the app.

use std::collections::BTreeMap;
use std::fmt;

use weft_model::{QueuePath, sanitize_queue_name};

use crate::config::{AllocConfig, QueueKind};
use crate::groups::GroupMapping;

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

/// What placement may ask about the live queue tree; the tree implements it.
///
/// Placement treats `root` as a parent and never places below `root.default`
/// whatever the lookup answers, so a lookup only needs to be right about the
/// other queues.
pub trait QueueLookup {
    /// The queue at `path`, or `None` when no such queue exists.
    fn queue_kind(&self, path: &QueuePath) -> Option<ExistingQueue>;
}

/// An existing queue, as placement sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExistingQueue {
    /// Leaf or parent.
    pub kind: QueueKind,
    /// True when the allocation file declares it (a static queue); false for
    /// a queue created at submission time (a dynamic queue).
    pub configured: bool,
}

/// A lookup over a plain map, for tests and tools.
impl QueueLookup for BTreeMap<QueuePath, ExistingQueue> {
    fn queue_kind(&self, path: &QueuePath) -> Option<ExistingQueue> {
        self.get(path).copied()
    }
}

/// A lookup that sees only the configured queues of an allocation file, for
/// answering "where would this app go" before any queue is live.
impl QueueLookup for AllocConfig {
    fn queue_kind(&self, path: &QueuePath) -> Option<ExistingQueue> {
        self.queues.get(path).map(|q| ExistingQueue {
            kind: q.kind,
            configured: true,
        })
    }
}

/// One application submission, as far as placement cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacementRequest<'a> {
    /// The queue named at submission, unparsed; `None` when none was named,
    /// which `specified` treats like Hadoop's literal `default`.
    pub requested_queue: Option<&'a str>,
    /// The submitting user.
    pub user: &'a str,
}

/// The outcome of placement: an ordinary result, not an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The app goes into `queue`, a leaf queue or a queue to create as a leaf.
    Placed {
        /// The target. Never root, never an existing parent queue and never
        /// below an existing leaf queue.
        queue: QueuePath,
        /// Index into [`PlacementPolicy::rules`] (from 0) of the rule that placed.
        rule: usize,
        /// True when the queue does not exist yet: the tree creates it (and
        /// any missing ancestors, as parent queues) when it adds the app.
        needs_create: bool,
    },
    /// The app is refused.
    Rejected(PlacementRejection),
}

/// Why placement refused an application.
///
/// The `rule` fields are indexes into [`PlacementPolicy::rules`] (from 0) and
/// `rule_name` is that rule's allocation-file name; when a nested parent rule
/// decided, they still name the top-level rule that holds it. Messages count
/// rules from 1, as a person reads the allocation file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlacementRejection {
    /// A `reject` rule was reached.
    #[error("rejected by rule {} (reject)", .rule + 1)]
    RejectRule {
        /// The rule.
        rule: usize,
    },
    /// Every rule continued; each entry says why.
    #[error("no rule placed the application{}", skipped_suffix(.skipped))]
    NoRulePlaced {
        /// One entry per rule evaluated, in order.
        skipped: Vec<SkippedRule>,
    },
    /// `specified` met a requested queue name that is not a valid queue path;
    /// Hadoop fails the submission instead of trying the next rule.
    #[error("requested queue name {requested:?} is invalid: {reason}")]
    InvalidRequestedQueue {
        /// The rule.
        rule: usize,
        /// The rule's allocation-file name.
        rule_name: &'static str,
        /// The requested name, as given.
        requested: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `primaryGroup` needs a group and the user has none; Hadoop fails the
    /// submission instead of trying the next rule.
    #[error("user {user} has no groups, needed by rule {} ({rule_name})", .rule + 1)]
    NoGroups {
        /// The rule.
        rule: usize,
        /// The rule's allocation-file name.
        rule_name: &'static str,
        /// The user.
        user: String,
    },
    /// The rule chose root or an existing parent queue; apps live only in leaves.
    #[error(
        "queue {queue} is a parent queue, not a leaf, chosen by rule {} ({rule_name})",
        .rule + 1
    )]
    NotALeaf {
        /// The rule.
        rule: usize,
        /// The rule's allocation-file name.
        rule_name: &'static str,
        /// The parent queue.
        queue: QueuePath,
    },
}

/// A rule that continued, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedRule {
    /// Index into [`PlacementPolicy::rules`] (from 0).
    pub rule: usize,
    /// The rule's allocation-file name.
    pub rule_name: &'static str,
    /// Why it did not place.
    pub reason: ContinueReason,
}

/// Why a rule did not place and let the next rule try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContinueReason {
    /// `specified`: no queue was requested, or literally `default`.
    NoQueueRequested,
    /// The rule has `create="false"` and its queue is not a configured queue.
    NotConfigured {
        /// The queue the rule computed.
        queue: QueuePath,
    },
    /// The queue would have to be created below an existing leaf queue.
    UnderLeaf {
        /// The queue the rule computed.
        queue: QueuePath,
        /// The leaf (the nearest existing leaf ancestor, or `root.default`).
        leaf: QueuePath,
    },
    /// The parent rule chose an existing leaf queue, so nothing can go below it.
    ParentIsLeaf {
        /// The leaf the parent rule chose.
        parent: QueuePath,
    },
    /// The parent rule itself continued.
    ParentContinued {
        /// The parent rule's allocation-file name.
        parent_rule_name: &'static str,
        /// Why the parent rule continued.
        reason: Box<ContinueReason>,
    },
    /// `nestedUserQueue` without a parent rule (the loader refuses this; a
    /// policy built in code may still hold it).
    MissingParentRule,
    /// The user or group name does not make a queue name, even after
    /// trimming whitespace and turning `.` into `_dot_`.
    InvalidName {
        /// The user or group name, as given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// `secondaryGroupExistingQueue`: the user has no groups.
    NoGroups,
    /// `secondaryGroupExistingQueue`: none of the user's groups has a
    /// configured queue under `parent`.
    NoGroupQueue {
        /// Where the group queues were looked for (root without a parent rule).
        parent: QueuePath,
        /// The user's groups, in mapping order.
        groups: Vec<String>,
    },
}

impl PlacementPolicy {
    /// The policy Hadoop builds when the allocation file has none (reference
    /// 6.3): `specified`, then `user` if `user_as_default_queue`, then
    /// `default` unless both flags are set. `allow_undeclared_pools` is the
    /// create flag of `specified` and `user`; `default` always creates.
    pub fn from_site_flags(
        user_as_default_queue: bool,
        allow_undeclared_pools: bool,
    ) -> PlacementPolicy {
        let mut rules = vec![PlacementRule::new(
            RuleKind::Specified,
            allow_undeclared_pools,
        )];
        if user_as_default_queue {
            rules.push(PlacementRule::new(RuleKind::User, allow_undeclared_pools));
        }
        if !user_as_default_queue || !allow_undeclared_pools {
            rules.push(PlacementRule::new(
                RuleKind::Default {
                    queue: default_queue(),
                },
                true,
            ));
        }
        PlacementPolicy { rules }
    }

    /// Runs the rules in order for one submission. The user's groups are
    /// asked for at most once, and only when a rule needs them.
    ///
    /// The chain is not validated here (the loader does that): a policy built
    /// in code that breaks Hadoop's load-time rules still evaluates without
    /// panicking. A parent rule on `specified`, `default` or `reject` is
    /// ignored, `nestedUserQueue` without one continues, and when every rule
    /// continues the result is [`PlacementRejection::NoRulePlaced`].
    pub fn place(
        &self,
        req: &PlacementRequest<'_>,
        groups: &dyn GroupMapping,
        queues: &dyn QueueLookup,
    ) -> Placement {
        let mut cx = Cx {
            req,
            group_mapping: groups,
            queues,
            groups: None,
        };
        let mut skipped = Vec::new();
        for (rule_idx, rule) in self.rules.iter().enumerate() {
            let queue = match evaluate(rule, &mut cx) {
                Outcome::Target(queue) => queue,
                Outcome::Continue(reason) => {
                    skipped.push(SkippedRule {
                        rule: rule_idx,
                        rule_name: rule.kind.name(),
                        reason,
                    });
                    continue;
                }
                Outcome::Refuse(reject) => {
                    return Placement::Rejected(reject.at(rule_idx, rule.kind.name()));
                }
            };
            let existing = cx.queues.queue_kind(&queue);
            let is_parent =
                queue.is_root() || existing.is_some_and(|q| q.kind == QueueKind::Parent);
            if is_parent {
                return Placement::Rejected(PlacementRejection::NotALeaf {
                    rule: rule_idx,
                    rule_name: rule.kind.name(),
                    queue,
                });
            }
            if let Some(leaf) = leaf_ancestor(&queue, cx.queues) {
                skipped.push(SkippedRule {
                    rule: rule_idx,
                    rule_name: rule.kind.name(),
                    reason: ContinueReason::UnderLeaf { queue, leaf },
                });
                continue;
            }
            return Placement::Placed {
                queue,
                rule: rule_idx,
                needs_create: existing.is_none(),
            };
        }
        Placement::Rejected(PlacementRejection::NoRulePlaced { skipped })
    }
}

impl fmt::Display for SkippedRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rule {} ({}): {}",
            self.rule + 1,
            self.rule_name,
            self.reason
        )
    }
}

impl fmt::Display for ContinueReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContinueReason::NoQueueRequested => f.write_str("no queue was requested"),
            ContinueReason::NotConfigured { queue } => write!(
                f,
                "queue {queue} is not a configured queue and the rule may not create queues"
            ),
            ContinueReason::UnderLeaf { queue, leaf } => write!(
                f,
                "queue {queue} cannot be created because {leaf} is a leaf queue"
            ),
            ContinueReason::ParentIsLeaf { parent } => {
                write!(f, "the parent rule chose {parent}, which is a leaf queue")
            }
            ContinueReason::ParentContinued {
                parent_rule_name,
                reason,
            } => write!(
                f,
                "the parent rule ({parent_rule_name}) did not place: {reason}"
            ),
            ContinueReason::MissingParentRule => f.write_str("the rule has no parent rule"),
            ContinueReason::InvalidName { name, reason } => {
                write!(f, "name {name:?} cannot be a queue name: {reason}")
            }
            ContinueReason::NoGroups => f.write_str("the user has no groups"),
            ContinueReason::NoGroupQueue { parent, groups } => write!(
                f,
                "none of the user's groups ({}) has a configured queue under {parent}",
                groups.join(", ")
            ),
        }
    }
}

fn skipped_suffix(skipped: &[SkippedRule]) -> String {
    if skipped.is_empty() {
        return ": the policy has no rules".to_owned();
    }
    let texts: Vec<String> = skipped.iter().map(ToString::to_string).collect();
    format!(": {}", texts.join("; "))
}

fn default_queue() -> QueuePath {
    QueuePath::root()
        .child("default")
        .expect("\"default\" is a valid queue name")
}

/// Per-call state: the request, what to ask, and the groups once fetched.
struct Cx<'a> {
    req: &'a PlacementRequest<'a>,
    group_mapping: &'a dyn GroupMapping,
    queues: &'a dyn QueueLookup,
    groups: Option<Vec<String>>,
}

impl Cx<'_> {
    fn groups(&mut self) -> &[String] {
        let (mapping, user) = (self.group_mapping, self.req.user);
        self.groups.get_or_insert_with(|| mapping.groups(user))
    }

    fn is_configured(&self, queue: &QueuePath) -> bool {
        self.queues.queue_kind(queue).is_some_and(|q| q.configured)
    }

    fn is_existing_leaf(&self, queue: &QueuePath) -> bool {
        self.queues
            .queue_kind(queue)
            .is_some_and(|q| q.kind == QueueKind::Leaf)
    }
}

/// What one rule (possibly nested) says.
enum Outcome {
    Target(QueuePath),
    Continue(ContinueReason),
    /// A rejection whose `rule` index is filled in by the caller.
    Refuse(Refusal),
}

/// A rejection before the top-level rule is known (nested rules do not know
/// where they sit).
enum Refusal {
    RejectRule,
    InvalidRequestedQueue {
        requested: String,
        reason: &'static str,
    },
    NoGroups {
        user: String,
    },
}

impl Refusal {
    fn at(self, rule: usize, rule_name: &'static str) -> PlacementRejection {
        match self {
            Refusal::RejectRule => PlacementRejection::RejectRule { rule },
            Refusal::InvalidRequestedQueue { requested, reason } => {
                PlacementRejection::InvalidRequestedQueue {
                    rule,
                    rule_name,
                    requested,
                    reason,
                }
            }
            Refusal::NoGroups { user } => PlacementRejection::NoGroups {
                rule,
                rule_name,
                user,
            },
        }
    }
}

fn evaluate(rule: &PlacementRule, cx: &mut Cx<'_>) -> Outcome {
    match &rule.kind {
        RuleKind::Specified => {
            let Some(requested) = cx.req.requested_queue else {
                return Outcome::Continue(ContinueReason::NoQueueRequested);
            };
            // Hadoop checks the name before looking for `default`, so
            // " default" fails rather than continuing.
            let queue = match QueuePath::parse(requested) {
                Ok(queue) => queue,
                Err(err) => {
                    return Outcome::Refuse(Refusal::InvalidRequestedQueue {
                        requested: requested.to_owned(),
                        reason: err.reason,
                    });
                }
            };
            if requested == "default" {
                return Outcome::Continue(ContinueReason::NoQueueRequested);
            }
            create_or_configured(rule, queue, cx)
        }
        RuleKind::User | RuleKind::NestedUserQueue => {
            if rule.kind == RuleKind::NestedUserQueue && rule.parent.is_none() {
                return Outcome::Continue(ContinueReason::MissingParentRule);
            }
            let base = match parent_queue(rule, cx) {
                Ok(base) => base,
                Err(outcome) => return outcome,
            };
            match child_for_name(&base, cx.req.user) {
                Ok(queue) => create_or_configured(rule, queue, cx),
                Err(reason) => Outcome::Continue(reason),
            }
        }
        RuleKind::PrimaryGroup => {
            let Some(primary) = cx.groups().first().cloned() else {
                return Outcome::Refuse(Refusal::NoGroups {
                    user: cx.req.user.to_owned(),
                });
            };
            let base = match parent_queue(rule, cx) {
                Ok(base) => base,
                Err(outcome) => return outcome,
            };
            match child_for_name(&base, &primary) {
                Ok(queue) => create_or_configured(rule, queue, cx),
                Err(reason) => Outcome::Continue(reason),
            }
        }
        RuleKind::SecondaryGroupExistingQueue => {
            if cx.groups().is_empty() {
                return Outcome::Continue(ContinueReason::NoGroups);
            }
            let base = match parent_queue(rule, cx) {
                Ok(base) => base,
                Err(outcome) => return outcome,
            };
            // Current Hadoop scans every group, the primary one included; a
            // group whose name cannot be a queue name simply matches nothing.
            let groups = cx.groups().to_vec();
            for group in &groups {
                if let Ok(queue) = child_for_name(&base, group)
                    && cx.is_configured(&queue)
                {
                    return Outcome::Target(queue);
                }
            }
            Outcome::Continue(ContinueReason::NoGroupQueue {
                parent: base,
                groups,
            })
        }
        RuleKind::Default { queue } => create_or_configured(rule, queue.clone(), cx),
        RuleKind::Reject => Outcome::Refuse(Refusal::RejectRule),
    }
}

/// The queue below which a rule puts its name: root without a parent rule,
/// else what the parent rule chose, unless that is an existing leaf.
fn parent_queue(rule: &PlacementRule, cx: &mut Cx<'_>) -> Result<QueuePath, Outcome> {
    let Some(parent_rule) = &rule.parent else {
        return Ok(QueuePath::root());
    };
    match evaluate(parent_rule, cx) {
        Outcome::Target(queue) if cx.is_existing_leaf(&queue) => {
            Err(Outcome::Continue(ContinueReason::ParentIsLeaf {
                parent: queue,
            }))
        }
        Outcome::Target(queue) => Ok(queue),
        Outcome::Continue(reason) => Err(Outcome::Continue(ContinueReason::ParentContinued {
            parent_rule_name: parent_rule.kind.name(),
            reason: Box::new(reason),
        })),
        reject @ Outcome::Refuse(_) => Err(reject),
    }
}

/// `base.<name>` for a user or group name, cleaned as Hadoop cleans it:
/// surrounding whitespace trimmed, `.` turned into `_dot_`.
fn child_for_name(base: &QueuePath, name: &str) -> Result<QueuePath, ContinueReason> {
    let trimmed = name.trim_matches(|c: char| c.is_whitespace() || c == '\u{a0}');
    let invalid = |reason| ContinueReason::InvalidName {
        name: name.to_owned(),
        reason,
    };
    if trimmed.is_empty() {
        return Err(invalid(
            "it is empty once surrounding whitespace is trimmed",
        ));
    }
    base.child(&sanitize_queue_name(trimmed))
        .map_err(|err| invalid(err.reason))
}

/// The create flag's test: a rule that may not create places only into a
/// queue the allocation file declares.
fn create_or_configured(rule: &PlacementRule, queue: QueuePath, cx: &Cx<'_>) -> Outcome {
    if rule.create || cx.is_configured(&queue) {
        Outcome::Target(queue)
    } else {
        Outcome::Continue(ContinueReason::NotConfigured { queue })
    }
}

/// The nearest strict ancestor of `queue` that is an existing leaf, counting
/// `root.default` as one whatever the lookup says (it never has children).
fn leaf_ancestor(queue: &QueuePath, queues: &dyn QueueLookup) -> Option<QueuePath> {
    let default = default_queue();
    queue.self_and_ancestors().skip(1).find(|ancestor| {
        *ancestor == default
            || queues
                .queue_kind(ancestor)
                .is_some_and(|q| q.kind == QueueKind::Leaf)
    })
}

#[cfg(test)]
mod tests;
