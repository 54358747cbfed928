//! Queue access control lists in Hadoop's `"user1,user2 group1,group2"` form,
//! and the check that walks a queue's ancestors.
//!
//! Who the caller is and which groups they belong to is decided by the caller
//! (the service, from `user.name` and a `GroupMapping`); this module only
//! answers "does this list let them in".

use std::collections::BTreeSet;
use std::fmt;

/// One access control list.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Acl {
    /// `*`: everybody.
    pub everyone: bool,
    /// Users named before the first space.
    pub users: BTreeSet<String>,
    /// Groups named after the first space.
    pub groups: BTreeSet<String>,
}

/// The kind of access a check is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueAccess {
    /// Submitting applications (`aclSubmitApps`).
    SubmitApps,
    /// Administering the queue and others' applications in it (`aclAdministerApps`).
    AdministerQueue,
}

impl Acl {
    /// Nobody (Hadoop's `" "`): the default on every queue but root.
    pub fn nobody() -> Acl {
        Acl::default()
    }

    /// Everybody (`*`): root's default.
    pub fn everyone() -> Acl {
        Acl {
            everyone: true,
            ..Acl::default()
        }
    }

    /// Parses Hadoop's form: users (comma-separated) before the first space,
    /// groups after it; `*` alone is everybody; a lone space is nobody.
    /// Empty names between commas are ignored, as Hadoop does.
    pub fn parse(text: &str) -> Acl {
        if text.trim() == "*" {
            return Acl::everyone();
        }
        let (users, groups) = match text.split_once(' ') {
            Some((u, g)) => (u, g),
            None => (text, ""),
        };
        let names = |s: &str| -> BTreeSet<String> {
            s.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect()
        };
        Acl {
            everyone: false,
            users: names(users),
            groups: names(groups),
        }
    }

    /// True when the user, or one of their groups, is on the list.
    pub fn allows(&self, user: &str, groups: &[String]) -> bool {
        self.everyone || self.users.contains(user) || groups.iter().any(|g| self.groups.contains(g))
    }

    /// True for the empty list.
    pub fn is_nobody(&self) -> bool {
        !self.everyone && self.users.is_empty() && self.groups.is_empty()
    }
}

/// Hadoop's textual form (`*`, `" "`, `alice,bob admins`).
impl fmt::Display for Acl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.everyone {
            return f.write_str("*");
        }
        let users: Vec<&str> = self.users.iter().map(String::as_str).collect();
        let groups: Vec<&str> = self.groups.iter().map(String::as_str).collect();
        write!(f, "{} {}", users.join(","), groups.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hadoop_forms() {
        let acl = Acl::parse("alice,bob admins,ops");
        assert!(acl.allows("alice", &[]));
        assert!(acl.allows("carol", &g(&["ops"])));
        assert!(!acl.allows("carol", &g(&["dev"])));
        assert_eq!(acl.to_string(), "alice,bob admins,ops");

        let groups_only = Acl::parse(" admins");
        assert!(groups_only.users.is_empty());
        assert!(groups_only.allows("x", &g(&["admins"])));

        assert!(Acl::parse(" ").is_nobody());
        assert!(Acl::parse("").is_nobody());
        assert!(Acl::parse("*").allows("anyone", &[]));
        assert_eq!(Acl::parse(" ").to_string(), " ");
        assert!(Acl::parse("alice,,bob").users.contains("bob"));
    }
}
