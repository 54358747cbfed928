//! Placement tests: fixture-driven tables of submissions and their outcomes,
//! and property tests of the evaluation's guarantees.

use std::collections::BTreeMap;

use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;
use crate::groups::GroupFile;

/// A parsed fixture: the queues that exist, the rules and the group mapping.
struct Fixture {
    queues: BTreeMap<QueuePath, ExistingQueue>,
    policy: PlacementPolicy,
    groups: GroupFile,
    submissions: Vec<(String, Option<String>)>,
}

/// Runs every submission of `fixture` and compares the rendered table.
///
/// The fixture has four sections, each a header line followed by indented
/// lines:
///
/// * `queues:` one queue per line, `path [parent] [dynamic]` (a configured
///   leaf by default). `root` (parent) and `root.default` (leaf) always exist,
///   as in the real tree.
/// * `rules:` one rule per line, `name [create=false] [queue=Q] [< parent rule]`.
/// * `groups:` a group file (see `GroupFile`).
/// * `submit:` one submission per line, `user [requested]`; a missing
///   requested queue is none; `"..."` quotes a name with spaces.
fn check(fixture: &str, expect: Expect) {
    let fixture = parse_fixture(fixture);
    expect.assert_eq(&render(&fixture));
}

/// Like `check`, but runs the same submissions against the default policy for
/// each pair of site flags.
fn check_site_flags(fixture: &str, expect: Expect) {
    let mut fixture = parse_fixture(fixture);
    let mut out = String::new();
    for user_as_default_queue in [true, false] {
        for allow_undeclared_pools in [true, false] {
            fixture.policy =
                PlacementPolicy::from_site_flags(user_as_default_queue, allow_undeclared_pools);
            out.push_str(&format!(
                "user-as-default-queue={user_as_default_queue} \
                 allow-undeclared-pools={allow_undeclared_pools}: {}\n",
                render_policy(&fixture.policy)
            ));
            out.push_str(&render(&fixture));
            out.push('\n');
        }
    }
    expect.assert_eq(&out);
}

fn render(fixture: &Fixture) -> String {
    let mut rows = vec![[
        "user".to_owned(),
        "requested".to_owned(),
        "result".to_owned(),
    ]];
    for (user, requested) in &fixture.submissions {
        let req = PlacementRequest {
            requested_queue: requested.as_deref(),
            user,
        };
        let result = match fixture.policy.place(&req, &fixture.groups, &fixture.queues) {
            Placement::Placed {
                queue,
                rule,
                needs_create,
            } => {
                let new = if needs_create { ", new" } else { "" };
                format!("{queue} (rule {}{new})", rule + 1)
            }
            Placement::Rejected(rejection) => format!("rejected: {rejection}"),
        };
        let requested = requested.as_deref().map_or("-".to_owned(), quote);
        rows.push([quote(user), requested, result]);
    }
    let width = |col: usize| {
        rows.iter()
            .map(|r| r[col].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1) = (width(0), width(1));
    let mut out = String::new();
    for [user, requested, result] in &rows {
        let line = format!("{user:<w0$} | {requested:<w1$} | {result}");
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn render_policy(policy: &PlacementPolicy) -> String {
    let rules: Vec<String> = policy.rules.iter().map(render_rule).collect();
    rules.join(", ")
}

fn render_rule(rule: &PlacementRule) -> String {
    let mut out = rule.kind.name().to_owned();
    if let RuleKind::Default { queue } = &rule.kind {
        out.push_str(&format!(" queue={queue}"));
    }
    if !rule.create {
        out.push_str(" create=false");
    }
    if let Some(parent) = &rule.parent {
        out.push_str(&format!(" < {}", render_rule(parent)));
    }
    out
}

/// Quotes a name that would not read back as one token.
fn quote(name: &str) -> String {
    if name.is_empty() || name.contains(char::is_whitespace) || name.contains('"') {
        format!("{name:?}")
    } else {
        name.to_owned()
    }
}

fn parse_fixture(text: &str) -> Fixture {
    let mut sections: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            let header = line.trim().strip_suffix(':').expect("section header");
            current = Some(header);
            sections.entry(header).or_default();
        } else {
            let header = current.expect("a line before any section header");
            sections.get_mut(header).unwrap().push(line.trim());
        }
    }
    let mut queues = BTreeMap::new();
    let configured_leaf = ExistingQueue {
        kind: QueueKind::Leaf,
        configured: true,
    };
    queues.insert(
        QueuePath::root(),
        ExistingQueue {
            kind: QueueKind::Parent,
            configured: true,
        },
    );
    queues.insert(default_queue(), configured_leaf);
    for line in sections.get("queues").into_iter().flatten() {
        let mut words = line.split_whitespace();
        let path = QueuePath::parse(words.next().unwrap()).unwrap();
        let mut queue = configured_leaf;
        for word in words {
            match word {
                "parent" => queue.kind = QueueKind::Parent,
                "dynamic" => queue.configured = false,
                other => panic!("unknown queue attribute {other}"),
            }
        }
        queues.insert(path, queue);
    }
    let rules = sections
        .get("rules")
        .into_iter()
        .flatten()
        .map(|line| parse_rule(line))
        .collect();
    let group_text: Vec<&str> = sections.get("groups").cloned().unwrap_or_default();
    let groups = GroupFile::parse(&group_text.join("\n")).unwrap();
    let submissions = sections
        .get("submit")
        .into_iter()
        .flatten()
        .map(|line| {
            let mut tokens = tokens(line).into_iter();
            let user = tokens.next().expect("a user");
            let requested = tokens.next();
            assert!(tokens.next().is_none(), "too many tokens in {line:?}");
            (user, requested)
        })
        .collect();
    Fixture {
        queues,
        policy: PlacementPolicy { rules },
        groups,
        submissions,
    }
}

fn parse_rule(text: &str) -> PlacementRule {
    let (own, parent) = match text.split_once(" < ") {
        Some((own, parent)) => (own, Some(Box::new(parse_rule(parent)))),
        None => (text, None),
    };
    let mut words = own.split_whitespace();
    let name = words.next().unwrap();
    let mut create = true;
    let mut queue = default_queue();
    for word in words {
        match word.split_once('=') {
            Some(("create", value)) => create = value.parse().unwrap(),
            Some(("queue", value)) => queue = QueuePath::parse(value).unwrap(),
            _ => panic!("unknown rule attribute {word}"),
        }
    }
    let kind = match name {
        "specified" => RuleKind::Specified,
        "user" => RuleKind::User,
        "primaryGroup" => RuleKind::PrimaryGroup,
        "secondaryGroupExistingQueue" => RuleKind::SecondaryGroupExistingQueue,
        "nestedUserQueue" => RuleKind::NestedUserQueue,
        "default" => RuleKind::Default { queue },
        "reject" => RuleKind::Reject,
        other => panic!("unknown rule {other}"),
    };
    PlacementRule {
        kind,
        create,
        parent,
    }
}

/// Splits on whitespace; `"..."` is one token with Rust escapes.
fn tokens(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut token = String::new();
            let mut chars = quoted.char_indices();
            let end = loop {
                match chars.next().expect("closing quote") {
                    (i, '"') => break i,
                    (_, '\\') => match chars.next().expect("escaped char").1 {
                        'u' => {
                            let hex: String = chars
                                .by_ref()
                                .map(|(_, c)| c)
                                .skip(1)
                                .take_while(|c| *c != '}')
                                .collect();
                            let code = u32::from_str_radix(&hex, 16).unwrap();
                            token.push(char::from_u32(code).unwrap());
                        }
                        't' => token.push('\t'),
                        c => token.push(c),
                    },
                    (_, c) => token.push(c),
                }
            };
            out.push(token);
            rest = quoted[end + 1..].trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push(rest[..end].to_owned());
            rest = rest[end..].trim_start();
        }
    }
    out
}

#[test]
fn fixture_tokens_round_trip_quoting() {
    assert_eq!(
        tokens(r#"a "b c" "\u{a0}x" "q\"" """#),
        ["a", "b c", "\u{a0}x", "q\"", ""]
    );
    assert_eq!(quote("\u{a0}x"), r#""\u{a0}x""#);
    assert_eq!(quote(""), "\"\"");
}

#[test]
fn specified_creates_or_needs_a_configured_queue() {
    check(
        r#"
queues:
  eng parent
  eng.batch
  dyn dynamic
rules:
  specified
  specified create=false
  reject
submit:
  alice
  alice default
  alice root.default
  alice eng.batch
  alice root.eng.batch
  alice dyn
  alice new
  alice eng.new
  alice "a b"
"#,
        expect![[r#"
            user  | requested      | result
            alice | -              | rejected: rejected by rule 3 (reject)
            alice | default        | rejected: rejected by rule 3 (reject)
            alice | root.default   | root.default (rule 1)
            alice | eng.batch      | root.eng.batch (rule 1)
            alice | root.eng.batch | root.eng.batch (rule 1)
            alice | dyn            | root.dyn (rule 1)
            alice | new            | root.new (rule 1, new)
            alice | eng.new        | root.eng.new (rule 1, new)
            alice | "a b"          | root.a b (rule 1, new)
        "#]],
    );
    check(
        r#"
queues:
  eng parent
  eng.batch
  dyn dynamic
rules:
  specified create=false
  reject
submit:
  alice
  alice default
  alice root.default
  alice eng.batch
  alice dyn
  alice new
  alice eng.new
"#,
        expect![[r#"
            user  | requested    | result
            alice | -            | rejected: rejected by rule 2 (reject)
            alice | default      | rejected: rejected by rule 2 (reject)
            alice | root.default | root.default (rule 1)
            alice | eng.batch    | root.eng.batch (rule 1)
            alice | dyn          | rejected: rejected by rule 2 (reject)
            alice | new          | rejected: rejected by rule 2 (reject)
            alice | eng.new      | rejected: rejected by rule 2 (reject)
        "#]],
    );
}

#[test]
fn specified_fails_the_submission_on_an_invalid_name() {
    check(
        r#"
rules:
  specified
  default
submit:
  alice " a"
  alice "a "
  alice " default"
  alice "a.\u{a0}b"
  alice .a
  alice a.
  alice a..b
  alice ""
"#,
        expect![[r#"
            user  | requested   | result
            alice | " a"        | rejected: requested queue name " a" is invalid: a component starts or ends with whitespace
            alice | "a "        | rejected: requested queue name "a " is invalid: a component starts or ends with whitespace
            alice | " default"  | rejected: requested queue name " default" is invalid: a component starts or ends with whitespace
            alice | "a.\u{a0}b" | rejected: requested queue name "a.\u{a0}b" is invalid: a component starts or ends with whitespace
            alice | .a          | rejected: requested queue name ".a" is invalid: it has an empty component (a leading, trailing or doubled '.')
            alice | a.          | rejected: requested queue name "a." is invalid: it has an empty component (a leading, trailing or doubled '.')
            alice | a..b        | rejected: requested queue name "a..b" is invalid: it has an empty component (a leading, trailing or doubled '.')
            alice | ""          | rejected: requested queue name "" is invalid: the name is empty
        "#]],
    );
    // The requested queue is only read by `specified`.
    check(
        r#"
rules:
  default
submit:
  alice " a"
"#,
        expect![[r#"
            user  | requested | result
            alice | " a"      | root.default (rule 1)
        "#]],
    );
}

#[test]
fn parents_reject_and_leaves_stop_creation() {
    check(
        r#"
queues:
  eng parent
  eng.batch
  dynp parent dynamic
  dynp.leaf dynamic
rules:
  specified
  user
submit:
  alice root
  alice eng
  alice root.eng
  alice dynp
  alice eng.batch.x
  alice root.default.x
  alice dynp.leaf.x.y
  eng
  eng.batch
"#,
        expect![[r#"
            user      | requested      | result
            alice     | root           | rejected: queue root is a parent queue, not a leaf, chosen by rule 1 (specified)
            alice     | eng            | rejected: queue root.eng is a parent queue, not a leaf, chosen by rule 1 (specified)
            alice     | root.eng       | rejected: queue root.eng is a parent queue, not a leaf, chosen by rule 1 (specified)
            alice     | dynp           | rejected: queue root.dynp is a parent queue, not a leaf, chosen by rule 1 (specified)
            alice     | eng.batch.x    | root.alice (rule 2, new)
            alice     | root.default.x | root.alice (rule 2, new)
            alice     | dynp.leaf.x.y  | root.alice (rule 2, new)
            eng       | -              | rejected: queue root.eng is a parent queue, not a leaf, chosen by rule 2 (user)
            eng.batch | -              | root.eng_dot_batch (rule 2, new)
        "#]],
    );
    // Nothing after the rule that cannot create: the rejection names why.
    check(
        r#"
queues:
  eng parent
  eng.batch
rules:
  specified
  default queue=root.eng.batch.sub
submit:
  alice eng.batch.x
  alice
"#,
        expect![[r#"
            user  | requested   | result
            alice | eng.batch.x | rejected: no rule placed the application: rule 1 (specified): queue root.eng.batch.x cannot be created because root.eng.batch is a leaf queue; rule 2 (default): queue root.eng.batch.sub cannot be created because root.eng.batch is a leaf queue
            alice | -           | rejected: no rule placed the application: rule 1 (specified): no queue was requested; rule 2 (default): queue root.eng.batch.sub cannot be created because root.eng.batch is a leaf queue
        "#]],
    );
}

#[test]
fn user_rule_with_and_without_create() {
    check(
        r#"
queues:
  alice
  bob dynamic
  first_dot_last
rules:
  user create=false
  user
submit:
  alice
  bob
  carol
  first.last
  "  carol "
  ""
  " "
  .
  a..b
"#,
        expect![[r#"
            user       | requested | result
            alice      | -         | root.alice (rule 1)
            bob        | -         | root.bob (rule 2)
            carol      | -         | root.carol (rule 2, new)
            first.last | -         | root.first_dot_last (rule 1)
            "  carol " | -         | root.carol (rule 2, new)
            ""         | -         | rejected: no rule placed the application: rule 1 (user): name "" cannot be a queue name: it is empty once surrounding whitespace is trimmed; rule 2 (user): name "" cannot be a queue name: it is empty once surrounding whitespace is trimmed
            " "        | -         | rejected: no rule placed the application: rule 1 (user): name " " cannot be a queue name: it is empty once surrounding whitespace is trimmed; rule 2 (user): name " " cannot be a queue name: it is empty once surrounding whitespace is trimmed
            .          | -         | root._dot_ (rule 2, new)
            a..b       | -         | root.a_dot__dot_b (rule 2, new)
        "#]],
    );
}

#[test]
fn primary_group_rule() {
    let fixture = r#"
queues:
  eng
  ops dynamic
  admins parent
rules:
  primaryGroup create=false
  primaryGroup
submit:
  alice
  bob
  carol
  dave
  erin
  frank
  ghost
  nobody
"#;
    check(
        &format!("{fixture}{GROUPS}"),
        expect![[r#"
            user   | requested | result
            alice  | -         | root.eng (rule 1)
            bob    | -         | root.ops (rule 2)
            carol  | -         | root.research (rule 2, new)
            dave   | -         | root.my_dot_team (rule 2, new)
            erin   | -         | root.default (rule 1)
            frank  | -         | rejected: queue root.admins is a parent queue, not a leaf, chosen by rule 1 (primaryGroup)
            ghost  | -         | rejected: user ghost has no groups, needed by rule 1 (primaryGroup)
            nobody | -         | rejected: user nobody has no groups, needed by rule 1 (primaryGroup)
        "#]],
    );
    let fixture = r#"
rules:
  specified
  primaryGroup
submit:
  alice
  alice eng
  ghost
  ghost eng
"#;
    check(
        &format!("{fixture}{GROUPS}"),
        expect![[r#"
            user  | requested | result
            alice | -         | root.eng (rule 2, new)
            alice | eng       | root.eng (rule 1, new)
            ghost | -         | rejected: user ghost has no groups, needed by rule 2 (primaryGroup)
            ghost | eng       | root.eng (rule 1, new)
        "#]],
    );
}

/// The group file every group test shares.
const GROUPS: &str = "\
groups:
  alice: eng ops
  bob: ops eng
  carol: research
  dave: my.team
  erin: default
  frank: admins eng
  ghost:
  henry: qa eng
  ivan: qa eng
";

#[test]
fn secondary_group_existing_queue_scans_every_group() {
    let fixture = r#"
queues:
  eng
  ops dynamic
  my_dot_team
  admins parent
rules:
  secondaryGroupExistingQueue
  secondaryGroupExistingQueue create=false
  reject
submit:
  alice
  bob
  carol
  dave
  erin
  frank
  ghost
  nobody
"#;
    check(
        &format!("{fixture}{GROUPS}"),
        expect![[r#"
            user   | requested | result
            alice  | -         | root.eng (rule 1)
            bob    | -         | root.eng (rule 1)
            carol  | -         | rejected: rejected by rule 3 (reject)
            dave   | -         | root.my_dot_team (rule 1)
            erin   | -         | root.default (rule 1)
            frank  | -         | rejected: queue root.admins is a parent queue, not a leaf, chosen by rule 1 (secondaryGroupExistingQueue)
            ghost  | -         | rejected: rejected by rule 3 (reject)
            nobody | -         | rejected: rejected by rule 3 (reject)
        "#]],
    );
}

#[test]
fn nested_user_queue_under_a_parent_rule() {
    let fixture = r#"
queues:
  eng parent
  eng.alice
  eng.henry
  ops
  research parent
  users parent
  admins parent
rules:
  nestedUserQueue < primaryGroup create=false
  nestedUserQueue create=false < secondaryGroupExistingQueue
  nestedUserQueue < default queue=root.users
submit:
  alice
  bob
  carol
  dave
  erin
  frank
  ghost
  henry
  ivan
  nobody
"#;
    check(
        &format!("{fixture}{GROUPS}"),
        expect![[r#"
            user   | requested | result
            alice  | -         | root.eng.alice (rule 1)
            bob    | -         | root.users.bob (rule 3, new)
            carol  | -         | root.research.carol (rule 1, new)
            dave   | -         | root.users.dave (rule 3, new)
            erin   | -         | root.users.erin (rule 3, new)
            frank  | -         | root.admins.frank (rule 1, new)
            ghost  | -         | rejected: user ghost has no groups, needed by rule 1 (nestedUserQueue)
            henry  | -         | root.eng.henry (rule 2)
            ivan   | -         | root.users.ivan (rule 3, new)
            nobody | -         | rejected: user nobody has no groups, needed by rule 1 (nestedUserQueue)
        "#]],
    );
}

#[test]
fn nested_rule_edge_cases() {
    let fixture = r#"
queues:
  eng parent
  ops
rules:
  nestedUserQueue
  nestedUserQueue < primaryGroup create=false
  nestedUserQueue < secondaryGroupExistingQueue
  user < primaryGroup
  default queue=root.fallback create=false
submit:
  alice
  bob
  carol
  ghost
"#;
    check(
        &format!("{fixture}{GROUPS}"),
        expect![[r#"
            user  | requested | result
            alice | -         | root.eng.alice (rule 2, new)
            bob   | -         | rejected: no rule placed the application: rule 1 (nestedUserQueue): the rule has no parent rule; rule 2 (nestedUserQueue): the parent rule chose root.ops, which is a leaf queue; rule 3 (nestedUserQueue): the parent rule chose root.ops, which is a leaf queue; rule 4 (user): the parent rule chose root.ops, which is a leaf queue; rule 5 (default): queue root.fallback is not a configured queue and the rule may not create queues
            carol | -         | root.research.carol (rule 4, new)
            ghost | -         | rejected: user ghost has no groups, needed by rule 2 (nestedUserQueue)
        "#]],
    );
    // When the parent rule itself continues, the rejection says why.
    let fixture = r#"
rules:
  nestedUserQueue < primaryGroup create=false
  nestedUserQueue < secondaryGroupExistingQueue
submit:
  carol
"#;
    check(
        &format!("{fixture}{GROUPS}"),
        expect![[r#"
            user  | requested | result
            carol | -         | rejected: no rule placed the application: rule 1 (nestedUserQueue): the parent rule (primaryGroup) did not place: queue root.research is not a configured queue and the rule may not create queues; rule 2 (nestedUserQueue): the parent rule (secondaryGroupExistingQueue) did not place: none of the user's groups (research) has a configured queue under root
        "#]],
    );
}

#[test]
fn default_and_reject_rules() {
    check(
        r#"
queues:
  fallback
  dyn dynamic
rules:
  default queue=root.missing create=false
  default queue=root.dyn create=false
  default queue=root.fallback create=false
submit:
  alice
"#,
        expect![[r#"
            user  | requested | result
            alice | -         | root.fallback (rule 3)
        "#]],
    );
    check(
        r#"
rules:
  default queue=root.missing create=false
  default queue=root.new
submit:
  alice
"#,
        expect![[r#"
            user  | requested | result
            alice | -         | root.new (rule 2, new)
        "#]],
    );
    check(
        r#"
rules:
  default create=false
submit:
  alice
"#,
        expect![[r#"
            user  | requested | result
            alice | -         | root.default (rule 1)
        "#]],
    );
    check(
        r#"
rules:
  specified create=false
  reject
submit:
  alice
  alice root.default
"#,
        expect![[r#"
            user  | requested    | result
            alice | -            | rejected: rejected by rule 2 (reject)
            alice | root.default | root.default (rule 1)
        "#]],
    );
    check(
        r#"
rules:
submit:
  alice
"#,
        expect![[r#"
            user  | requested | result
            alice | -         | rejected: no rule placed the application: the policy has no rules
        "#]],
    );
}

#[test]
fn default_policy_from_site_flags() {
    check_site_flags(
        r#"
queues:
  eng parent
  eng.batch
  bob
  dyn dynamic
submit:
  alice
  alice default
  alice eng.batch
  alice dyn
  alice new
  alice eng
  bob
  first.last
"#,
        expect![[r#"
            user-as-default-queue=true allow-undeclared-pools=true: specified, user
            user       | requested | result
            alice      | -         | root.alice (rule 2, new)
            alice      | default   | root.alice (rule 2, new)
            alice      | eng.batch | root.eng.batch (rule 1)
            alice      | dyn       | root.dyn (rule 1)
            alice      | new       | root.new (rule 1, new)
            alice      | eng       | rejected: queue root.eng is a parent queue, not a leaf, chosen by rule 1 (specified)
            bob        | -         | root.bob (rule 2)
            first.last | -         | root.first_dot_last (rule 2, new)

            user-as-default-queue=true allow-undeclared-pools=false: specified create=false, user create=false, default queue=root.default
            user       | requested | result
            alice      | -         | root.default (rule 3)
            alice      | default   | root.default (rule 3)
            alice      | eng.batch | root.eng.batch (rule 1)
            alice      | dyn       | root.default (rule 3)
            alice      | new       | root.default (rule 3)
            alice      | eng       | rejected: queue root.eng is a parent queue, not a leaf, chosen by rule 1 (specified)
            bob        | -         | root.bob (rule 2)
            first.last | -         | root.default (rule 3)

            user-as-default-queue=false allow-undeclared-pools=true: specified, default queue=root.default
            user       | requested | result
            alice      | -         | root.default (rule 2)
            alice      | default   | root.default (rule 2)
            alice      | eng.batch | root.eng.batch (rule 1)
            alice      | dyn       | root.dyn (rule 1)
            alice      | new       | root.new (rule 1, new)
            alice      | eng       | rejected: queue root.eng is a parent queue, not a leaf, chosen by rule 1 (specified)
            bob        | -         | root.default (rule 2)
            first.last | -         | root.default (rule 2)

            user-as-default-queue=false allow-undeclared-pools=false: specified create=false, default queue=root.default
            user       | requested | result
            alice      | -         | root.default (rule 2)
            alice      | default   | root.default (rule 2)
            alice      | eng.batch | root.eng.batch (rule 1)
            alice      | dyn       | root.default (rule 2)
            alice      | new       | root.default (rule 2)
            alice      | eng       | rejected: queue root.eng is a parent queue, not a leaf, chosen by rule 1 (specified)
            bob        | -         | root.default (rule 2)
            first.last | -         | root.default (rule 2)

        "#]],
    );
}

#[test]
fn policies_from_site_flags_are_well_formed() {
    for user_as_default_queue in [true, false] {
        for allow_undeclared_pools in [true, false] {
            let policy =
                PlacementPolicy::from_site_flags(user_as_default_queue, allow_undeclared_pools);
            let (last, before) = policy.rules.split_last().unwrap();
            assert!(last.is_terminal(), "{policy:?}");
            assert!(before.iter().all(|r| !r.is_terminal()), "{policy:?}");
        }
    }
}

#[test]
fn groups_are_asked_at_most_once() {
    use std::cell::Cell;

    struct Counting(Cell<usize>);
    impl GroupMapping for Counting {
        fn groups(&self, _user: &str) -> Vec<String> {
            self.0.set(self.0.get() + 1);
            vec!["eng".to_owned()]
        }
    }
    let rules = [
        "specified",
        "user create=false",
        "primaryGroup create=false",
        "secondaryGroupExistingQueue",
        "nestedUserQueue < primaryGroup",
    ];
    let policy = PlacementPolicy {
        rules: rules.iter().map(|r| parse_rule(r)).collect(),
    };
    let counting = Counting(Cell::new(0));
    let queues = BTreeMap::new();
    let req = PlacementRequest {
        requested_queue: None,
        user: "alice",
    };
    let res = policy.place(&req, &counting, &queues);
    assert_eq!(
        res,
        Placement::Placed {
            queue: QueuePath::parse("root.eng.alice").unwrap(),
            rule: 4,
            needs_create: true,
        }
    );
    assert_eq!(counting.0.get(), 1);

    // A policy that never needs groups never asks.
    let counting = Counting(Cell::new(0));
    let policy = PlacementPolicy::from_site_flags(true, true);
    policy.place(&req, &counting, &queues);
    assert_eq!(counting.0.get(), 0);
}

#[test]
fn alloc_config_lookup_sees_configured_queues() {
    let mut config = AllocConfig::default();
    let eng = QueuePath::parse("root.eng").unwrap();
    config.queues.insert(
        eng.clone(),
        crate::config::QueueConfig::new(eng.clone(), QueueKind::Parent),
    );
    let policy = PlacementPolicy {
        rules: vec![parse_rule("specified create=false"), parse_rule("default")],
    };
    let place = |requested| {
        let req = PlacementRequest {
            requested_queue: Some(requested),
            user: "alice",
        };
        policy.place(&req, &crate::groups::NoGroups, &config)
    };
    assert_eq!(
        place("eng"),
        Placement::Rejected(PlacementRejection::NotALeaf {
            rule: 0,
            rule_name: "specified",
            queue: eng,
        })
    );
    assert_eq!(
        place("other"),
        Placement::Placed {
            queue: default_queue(),
            rule: 1,
            needs_create: false,
        }
    );
}

/// Names that exercise the edges: dots, whitespace, `default`, `root`.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("a".to_owned()),
        Just("eng".to_owned()),
        Just("default".to_owned()),
        Just("root".to_owned()),
        Just("root.default".to_owned()),
        Just("a.b".to_owned()),
        Just("eng.a".to_owned()),
        Just(" a".to_owned()),
        Just("\u{a0}".to_owned()),
        Just(String::new()),
        "[a-z. ]{0,8}",
        any::<String>(),
    ]
}

/// Queue paths a lookup may hold, including ones a sane tree would not
/// (children of `root.default`), so the guarantees hold for any lookup.
fn lookup() -> impl Strategy<Value = BTreeMap<QueuePath, ExistingQueue>> {
    let paths = [
        "root",
        "root.a",
        "root.a.b",
        "root.a.b.c",
        "root.b",
        "root.eng",
        "root.eng.a",
        "root.default",
        "root.default.a",
        "root.root",
    ];
    let existing = (any::<bool>(), any::<bool>()).prop_map(|(leaf, configured)| ExistingQueue {
        kind: if leaf {
            QueueKind::Leaf
        } else {
            QueueKind::Parent
        },
        configured,
    });
    proptest::collection::vec(proptest::option::of(existing), paths.len()).prop_map(move |v| {
        paths
            .iter()
            .zip(v)
            .filter_map(|(p, q)| q.map(|q| (QueuePath::parse(p).unwrap(), q)))
            .collect()
    })
}

fn rule_kind() -> impl Strategy<Value = RuleKind> {
    prop_oneof![
        Just(RuleKind::Specified),
        Just(RuleKind::User),
        Just(RuleKind::PrimaryGroup),
        Just(RuleKind::SecondaryGroupExistingQueue),
        Just(RuleKind::NestedUserQueue),
        Just(RuleKind::Reject),
        prop::sample::select(vec![
            "root",
            "root.a",
            "root.default",
            "root.a.b.c",
            "root.x"
        ])
        .prop_map(|q| RuleKind::Default {
            queue: QueuePath::parse(q).unwrap()
        }),
    ]
}

fn rule() -> impl Strategy<Value = PlacementRule> {
    let leaf =
        (rule_kind(), any::<bool>()).prop_map(|(kind, create)| PlacementRule::new(kind, create));
    leaf.prop_recursive(2, 4, 1, |inner| {
        (rule_kind(), any::<bool>(), proptest::option::of(inner)).prop_map(
            |(kind, create, parent)| PlacementRule {
                kind,
                create,
                parent: parent.map(Box::new),
            },
        )
    })
}

proptest! {
    #[test]
    fn placement_is_pure_and_its_guarantees_hold(
        rules in proptest::collection::vec(rule(), 0..5),
        queues in lookup(),
        user in name(),
        requested in proptest::option::of(name()),
        user_groups in proptest::collection::vec(name(), 0..3),
    ) {
        let policy = PlacementPolicy { rules };
        let groups = crate::groups::StaticGroups::new().with_user(user.clone(), user_groups);
        let req = PlacementRequest { requested_queue: requested.as_deref(), user: &user };
        let res = policy.place(&req, &groups, &queues);
        prop_assert_eq!(&res, &policy.place(&req, &groups, &queues));
        // Rendering never panics either.
        let _ = format!("{res:?}");
        match res {
            Placement::Placed { queue, rule, needs_create } => {
                prop_assert!(rule < policy.rules.len());
                prop_assert_ne!(&policy.rules[rule].kind, &RuleKind::Reject);
                prop_assert_eq!(QueuePath::parse(queue.as_str()), Ok(queue.clone()));
                prop_assert!(!queue.is_root());
                let existing = queues.get(&queue);
                prop_assert!(existing.is_none_or(|q| q.kind == QueueKind::Leaf));
                prop_assert_eq!(needs_create, existing.is_none());
                for ancestor in queue.self_and_ancestors().skip(1) {
                    prop_assert!(ancestor != default_queue());
                    prop_assert!(queues.get(&ancestor).is_none_or(|q| q.kind == QueueKind::Parent));
                }
            }
            Placement::Rejected(rejection) => {
                let _ = rejection.to_string();
                match rejection {
                    PlacementRejection::NoRulePlaced { skipped } => {
                        let order: Vec<usize> = skipped.iter().map(|s| s.rule).collect();
                        prop_assert_eq!(order, (0..policy.rules.len()).collect::<Vec<_>>());
                    }
                    PlacementRejection::RejectRule { rule }
                    | PlacementRejection::InvalidRequestedQueue { rule, .. }
                    | PlacementRejection::NoGroups { rule, .. }
                    | PlacementRejection::NotALeaf { rule, .. } => {
                        prop_assert!(rule < policy.rules.len());
                    }
                }
            }
        }
    }
}
