//! Group mapping: which groups a user belongs to (first is the primary group).
//!
//! Placement (`primaryGroup`, `secondaryGroupExistingQueue`) and ACL checks ask
//! a [`GroupMapping`]. This module owns the trait, an empty mapping, a mapping
//! built in code and a small text format for a mapping file. It never asks
//! the operating system or a directory service: Hadoop's shell-based mapping
//! is the service's business, and it hands the result in as a value. Reading
//! the mapping file from disk is the service's job too; [`GroupFile::parse`]
//! takes text.

use std::collections::BTreeMap;
use std::fmt;

/// Answers "which groups is this user in".
pub trait GroupMapping {
    /// The user's groups, primary group first; empty when the user has none
    /// (including a user the mapping does not know).
    fn groups(&self, user: &str) -> Vec<String>;
}

/// A mapping in which nobody has any group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoGroups;

impl GroupMapping for NoGroups {
    fn groups(&self, _user: &str) -> Vec<String> {
        Vec::new()
    }
}

/// A mapping built in code, for tests and embedders.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StaticGroups {
    /// Each user's groups, primary first. A user missing here has no groups.
    pub by_user: BTreeMap<String, Vec<String>>,
}

impl StaticGroups {
    /// A mapping that knows no user.
    pub fn new() -> StaticGroups {
        StaticGroups::default()
    }

    /// This mapping with `user` in `groups` (primary first), replacing any
    /// groups the user had.
    pub fn with_user<G: Into<String>>(
        mut self,
        user: impl Into<String>,
        groups: impl IntoIterator<Item = G>,
    ) -> StaticGroups {
        let groups = groups.into_iter().map(Into::into).collect();
        self.by_user.insert(user.into(), groups);
        self
    }
}

impl GroupMapping for StaticGroups {
    fn groups(&self, user: &str) -> Vec<String> {
        self.by_user.get(user).cloned().unwrap_or_default()
    }
}

/// A mapping read from text, one user per line:
///
/// ```text
/// # user: primary-group secondary-groups...
/// alice: eng ops
/// bob: eng
/// carol:          # listed, but in no group
/// ```
///
/// `#` starts a comment that runs to the end of the line; blank lines are
/// ignored. Names are separated by spaces or tabs. A user name cannot contain
/// whitespace, and no name can contain `:`, `,` or a control character (a
/// comma most likely means someone wrote a comma-separated list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupFile {
    by_user: BTreeMap<String, Vec<String>>,
}

/// Why a group file was refused: every problem found, in line order, so an
/// operator can fix the file in one pass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid group file: {}", join_problems(.problems))]
pub struct GroupFileError {
    /// The problems, in line order. Never empty.
    pub problems: Vec<GroupFileProblem>,
}

/// One problem on one line of a group file. Line numbers count from 1.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GroupFileProblem {
    /// The line has no `:` between the user and the groups.
    #[error("line {line}: missing ':' after the user name")]
    MissingColon {
        /// The line.
        line: usize,
    },
    /// Nothing before the `:`.
    #[error("line {line}: the user name before ':' is empty")]
    EmptyUser {
        /// The line.
        line: usize,
    },
    /// The user already had a line.
    #[error("line {line}: user {user:?} is listed again (first on line {first_line})")]
    DuplicateUser {
        /// The line of the repeat.
        line: usize,
        /// The user.
        user: String,
        /// The line that listed the user first.
        first_line: usize,
    },
    /// A user or group name holds a character names cannot hold.
    #[error("line {line}: {what} name {name:?} contains the invalid character {character:?}")]
    InvalidCharacter {
        /// The line.
        line: usize,
        /// Whether the name is the user's or a group's.
        what: NameKind,
        /// The whole name, as written.
        name: String,
        /// The first offending character.
        character: char,
    },
}

/// Which kind of name a [`GroupFileProblem`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    /// The name before `:`.
    User,
    /// A name after `:`.
    Group,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameKind::User => "user",
            NameKind::Group => "group",
        })
    }
}

impl GroupFile {
    /// Parses the format described on [`GroupFile`], reporting every problem.
    pub fn parse(text: &str) -> Result<GroupFile, GroupFileError> {
        let mut by_user = BTreeMap::new();
        let mut first_line_of: BTreeMap<String, usize> = BTreeMap::new();
        let mut problems = Vec::new();
        for (line_idx, raw) in text.lines().enumerate() {
            let line = line_idx + 1;
            let content = match raw.split_once('#') {
                Some((before, _comment)) => before,
                None => raw,
            };
            if content.trim().is_empty() {
                continue;
            }
            let Some((user, groups)) = content.split_once(':') else {
                problems.push(GroupFileProblem::MissingColon { line });
                continue;
            };
            let user = user.trim();
            if user.is_empty() {
                problems.push(GroupFileProblem::EmptyUser { line });
                continue;
            }
            let mut line_ok = true;
            if let Some(character) = user.chars().find(|c| is_invalid_in_name(*c)) {
                problems.push(GroupFileProblem::InvalidCharacter {
                    line,
                    what: NameKind::User,
                    name: user.to_owned(),
                    character,
                });
                line_ok = false;
            }
            let groups: Vec<String> = groups.split_whitespace().map(str::to_owned).collect();
            for group in &groups {
                if let Some(character) = group.chars().find(|c| is_invalid_in_name(*c)) {
                    problems.push(GroupFileProblem::InvalidCharacter {
                        line,
                        what: NameKind::Group,
                        name: group.clone(),
                        character,
                    });
                    line_ok = false;
                }
            }
            if let Some(&first_line) = first_line_of.get(user) {
                problems.push(GroupFileProblem::DuplicateUser {
                    line,
                    user: user.to_owned(),
                    first_line,
                });
                continue;
            }
            // A bad line still claims its user, so a later repeat is reported
            // as a duplicate rather than silently taking over.
            first_line_of.insert(user.to_owned(), line);
            if line_ok {
                by_user.insert(user.to_owned(), groups);
            }
        }
        if problems.is_empty() {
            Ok(GroupFile { by_user })
        } else {
            Err(GroupFileError { problems })
        }
    }

    /// The users the file lists, in name order.
    pub fn users(&self) -> impl Iterator<Item = &str> {
        self.by_user.keys().map(String::as_str)
    }
}

impl GroupMapping for GroupFile {
    fn groups(&self, user: &str) -> Vec<String> {
        self.by_user.get(user).cloned().unwrap_or_default()
    }
}

/// Whitespace separates names; `:` separates the user from the groups; a comma
/// is refused because `eng,ops` is almost always a mistaken list.
fn is_invalid_in_name(c: char) -> bool {
    c.is_whitespace() || c.is_control() || c == ':' || c == ','
}

fn join_problems(problems: &[GroupFileProblem]) -> String {
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    texts.join("; ")
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};
    use proptest::prelude::*;

    use super::*;

    /// Parses `text` and renders either each user's groups or the error.
    fn check(text: &str, expect: Expect) {
        let actual = match GroupFile::parse(text) {
            Ok(file) => {
                let mut out = String::new();
                for user in file.users() {
                    out.push_str(&format!("{user}: [{}]\n", file.groups(user).join(", ")));
                }
                out
            }
            Err(err) => {
                let mut out = String::new();
                for problem in &err.problems {
                    out.push_str(&format!("{problem}\n"));
                }
                out
            }
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn parses_users_groups_comments_and_blank_lines() {
        check(
            "# the mapping\n\
             alice: eng ops\n\
             \n\
             \tbob :eng   # trailing comment\n\
             carol:\n\
             dave: first.last\tsecond\r\n\
             erin: eng eng\n",
            expect![[r#"
                alice: [eng, ops]
                bob: [eng]
                carol: []
                dave: [first.last, second]
                erin: [eng, eng]
            "#]],
        );
    }

    #[test]
    fn reports_every_problem_with_its_line() {
        check(
            "alice eng\n\
             : eng\n\
             bob: eng\n\
             bob: ops\n\
             car ol: eng\n\
             dave: eng,ops\n\
             erin: a:b\n\
             car ol: eng\n",
            expect![[r#"
                line 1: missing ':' after the user name
                line 2: the user name before ':' is empty
                line 4: user "bob" is listed again (first on line 3)
                line 5: user name "car ol" contains the invalid character ' '
                line 6: group name "eng,ops" contains the invalid character ','
                line 7: group name "a:b" contains the invalid character ':'
                line 8: user name "car ol" contains the invalid character ' '
                line 8: user "car ol" is listed again (first on line 5)
            "#]],
        );
    }

    #[test]
    fn error_display_joins_problems() {
        let err = GroupFile::parse("x\n:y\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid group file: line 1: missing ':' after the user name; \
             line 2: the user name before ':' is empty"
        );
    }

    #[test]
    fn unknown_users_have_no_groups() {
        let file = GroupFile::parse("alice: eng\n").unwrap();
        assert_eq!(file.groups("bob"), Vec::<String>::new());
        assert_eq!(NoGroups.groups("alice"), Vec::<String>::new());
        let mapping = StaticGroups::new()
            .with_user("alice", ["eng", "ops"])
            .with_user("bob", Vec::<String>::new());
        assert_eq!(mapping.groups("alice"), ["eng", "ops"]);
        assert_eq!(mapping.groups("bob"), Vec::<String>::new());
        assert_eq!(mapping.groups("carol"), Vec::<String>::new());
    }

    #[test]
    fn empty_text_is_an_empty_mapping() {
        check("", expect![[""]]);
        check("# only a comment\n\n", expect![[""]]);
    }

    proptest! {
        #[test]
        fn parse_never_panics_and_errors_name_real_lines(text in "[a-z:,# \t\n.]{0,80}") {
            let n_lines = text.lines().count();
            match GroupFile::parse(&text) {
                Ok(file) => {
                    for user in file.users() {
                        prop_assert!(!user.is_empty());
                        for group in file.groups(user) {
                            prop_assert!(!group.contains([',', ':', ' ', '#']));
                        }
                    }
                }
                Err(err) => {
                    prop_assert!(!err.problems.is_empty());
                    for problem in &err.problems {
                        let line = match problem {
                            GroupFileProblem::MissingColon { line }
                            | GroupFileProblem::EmptyUser { line }
                            | GroupFileProblem::DuplicateUser { line, .. }
                            | GroupFileProblem::InvalidCharacter { line, .. } => *line,
                        };
                        prop_assert!(line >= 1 && line <= n_lines);
                    }
                }
            }
        }

        #[test]
        fn rendered_mappings_parse_back(
            users in proptest::collection::btree_map(
                "[a-z][a-z0-9._-]{0,6}",
                proptest::collection::vec("[a-z][a-z0-9._-]{0,6}", 0..4),
                0..5,
            )
        ) {
            let mut text = String::new();
            for (user, groups) in &users {
                text.push_str(&format!("{user}: {}\n", groups.join(" ")));
            }
            let file = GroupFile::parse(&text).unwrap();
            for (user, groups) in &users {
                prop_assert_eq!(&file.groups(user), groups);
            }
            prop_assert_eq!(file.users().count(), users.len());
        }
    }
}
