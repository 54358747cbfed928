//! The `queuePlacementPolicy` element: its rules, their nested parent rules,
//! and Hadoop's load-time checks of the chain (no unreachable rule, a
//! terminal last rule).
//!
//! What a rule does at submission time is `placement`'s business; this module
//! only builds the `PlacementPolicy` data and reports what is wrong with it.

use std::collections::BTreeMap;

use weft_model::QueuePath;

use crate::alloc_file::dom::Element;
use crate::alloc_file::values::parse_bool;
use crate::alloc_file::walk::{Sink, child_path};
use crate::alloc_file::{ProblemKind, WarningKind};
use crate::config::{QueueConfig, QueueKind};
use crate::placement::{PlacementPolicy, PlacementRule, RuleKind};

/// Parses the policy; `None` when it has problems (they are in `sink`).
pub(super) fn placement(
    sink: &mut Sink<'_>,
    el: &Element,
    element: &str,
    queues: &BTreeMap<QueuePath, QueueConfig>,
) -> Option<PlacementPolicy> {
    sink.check_attributes(el, element, &[]);
    sink.check_no_text(el, element);
    let mut rules = Vec::new();
    let mut all_valid = true;
    for child in &el.children {
        let child_element = child_path(element, child);
        if child.name != "rule" {
            unknown_child(sink, child, &child_element, "queuePlacementPolicy");
            continue;
        }
        match rule(sink, child, &child_element) {
            Some(rule) => rules.push((rule, child.offset, child_element)),
            None => all_valid = false,
        }
    }
    if rules.is_empty() && all_valid {
        sink.error(el.offset, element, ProblemKind::EmptyPlacementPolicy);
        return None;
    }
    if !all_valid {
        // The chain checks below would only repeat the broken rule's problem.
        return None;
    }

    let mut chain_valid = true;
    let last = rules.len() - 1;
    if let Some(i) = rules[..last].iter().position(|(r, _, _)| r.is_terminal()) {
        let (terminal, terminal_at, _) = &rules[i];
        let (_, at, unreachable) = &rules[i + 1];
        let kind = ProblemKind::UnreachableRule {
            terminal: terminal.kind.name(),
            terminal_line: sink.line(*terminal_at),
        };
        sink.error(*at, unreachable, kind);
        chain_valid = false;
    }
    let (last_rule, last_at, last_element) = &rules[last];
    if !last_rule.is_terminal() {
        let kind = ProblemKind::LastRuleNotTerminal {
            rule: last_rule.kind.name(),
        };
        sink.error(*last_at, last_element, kind);
        chain_valid = false;
    }

    for (rule, at, rule_element) in &rules {
        if let RuleKind::Default { queue } = &rule.kind
            && queues
                .get(queue)
                .is_some_and(|q| q.kind == QueueKind::Parent)
        {
            let kind = WarningKind::PlacementTargetIsParent {
                queue: queue.clone(),
            };
            sink.warn(*at, rule_element, kind);
        }
    }

    chain_valid.then(|| PlacementPolicy {
        rules: rules.into_iter().map(|(rule, _, _)| rule).collect(),
    })
}

/// One `<rule>` with its nested parent rule, if any.
fn rule(sink: &mut Sink<'_>, el: &Element, element: &str) -> Option<PlacementRule> {
    sink.check_no_text(el, element);
    let Some(name) = el.attribute("name").filter(|a| !a.value.is_empty()) else {
        sink.check_attributes(el, element, &["name", "create", "queue"]);
        let kind = ProblemKind::MissingAttribute {
            attribute: "name",
            why: "every rule needs a name such as specified, user or default",
        };
        sink.error(el.offset, element, kind);
        return None;
    };
    let mut valid = true;
    let kind = match name.value.as_str() {
        "specified" => RuleKind::Specified,
        "user" => RuleKind::User,
        "primaryGroup" => RuleKind::PrimaryGroup,
        "secondaryGroupExistingQueue" => RuleKind::SecondaryGroupExistingQueue,
        "nestedUserQueue" => RuleKind::NestedUserQueue,
        "reject" => RuleKind::Reject,
        "default" => match el.attribute("queue") {
            None => RuleKind::Default {
                queue: QueuePath::root().child("default").expect("a valid name"),
            },
            Some(queue) => match QueuePath::parse(&queue.value) {
                Ok(queue) => RuleKind::Default { queue },
                Err(err) => {
                    let kind = ProblemKind::InvalidQueueName {
                        name: queue.value.clone(),
                        reason: err.reason,
                    };
                    sink.error(queue.offset, element, kind);
                    return None;
                }
            },
        },
        other => {
            let kind = ProblemKind::UnknownRule {
                name: other.to_owned(),
            };
            sink.error(name.offset, element, kind);
            return None;
        }
    };
    let allowed: &[&str] = match kind {
        RuleKind::Default { .. } => &["name", "create", "queue"],
        _ => &["name", "create"],
    };
    sink.check_attributes(el, element, allowed);
    let create = match el.attribute("create") {
        None => true,
        Some(create) => match parse_bool("create", &create.value) {
            Ok(create) => create,
            Err(kind) => {
                sink.error(create.offset, element, kind);
                valid = false;
                true
            }
        },
    };

    let mut nested = Vec::new();
    for child in &el.children {
        let child_element = child_path(element, child);
        if child.name == "rule" {
            nested.push((child, child_element));
        } else {
            unknown_child(sink, child, &child_element, "a rule element");
        }
    }
    let rule_name = kind.name();
    let takes_parent = matches!(
        kind,
        RuleKind::User
            | RuleKind::PrimaryGroup
            | RuleKind::SecondaryGroupExistingQueue
            | RuleKind::NestedUserQueue
    );
    let mut parent = None;
    match nested.as_slice() {
        [] if kind == RuleKind::NestedUserQueue => {
            sink.error(el.offset, element, ProblemKind::MissingNestedRule);
            valid = false;
        }
        [] => {}
        [(first, first_element), ..] if !takes_parent => {
            let kind = ProblemKind::NestedRuleNotAllowed { rule: rule_name };
            sink.error(first.offset, first_element, kind);
            valid = false;
        }
        [_, (second, second_element), ..] => {
            let kind = ProblemKind::SeveralNestedRules {
                rule: rule_name,
                count: nested.len(),
            };
            sink.error(second.offset, second_element, kind);
            valid = false;
        }
        [(child, child_element)] => match self::rule(sink, child, child_element) {
            Some(nested_rule) => {
                let parent_name = nested_rule.kind.name();
                if matches!(
                    nested_rule.kind,
                    RuleKind::Reject | RuleKind::NestedUserQueue
                ) {
                    let kind = ProblemKind::InvalidParentRule {
                        rule: rule_name,
                        parent: parent_name,
                    };
                    sink.error(child.offset, child_element, kind);
                    valid = false;
                } else if parent_name == rule_name {
                    let kind = ProblemKind::ParentRuleSameType { rule: rule_name };
                    sink.error(child.offset, child_element, kind);
                    valid = false;
                } else {
                    parent = Some(Box::new(nested_rule));
                }
            }
            None => valid = false,
        },
    }

    valid.then_some(PlacementRule {
        kind,
        create,
        parent,
    })
}

/// Rule names written as elements, and how Hadoop spells them.
const RULE_ELEMENT_HINTS: &[(&str, &str)] = &[
    ("specified", "rule name=\"specified\"/"),
    ("user", "rule name=\"user\"/"),
    ("primaryGroup", "rule name=\"primaryGroup\"/"),
    (
        "secondaryGroupExistingQueue",
        "rule name=\"secondaryGroupExistingQueue\"/",
    ),
    ("nestedUserQueue", "rule name=\"nestedUserQueue\""),
    ("default", "rule name=\"default\"/"),
    ("reject", "rule name=\"reject\"/"),
];

/// Warns about an element other than `rule`, pointing out a rule written as
/// an element of its own name (`<specified/>` for `<rule name="specified"/>`).
fn unknown_child(sink: &mut Sink<'_>, el: &Element, element: &str, within: &'static str) {
    match RULE_ELEMENT_HINTS.iter().find(|(name, _)| *name == el.name) {
        Some((_, hint)) => {
            let kind = WarningKind::UnknownElement {
                name: el.name.clone(),
                within,
                did_you_mean: Some(hint),
                belongs_in: None,
            };
            sink.warn(el.offset, element, kind);
        }
        None => sink.unknown_element(el, element, within, &["rule"]),
    }
}
