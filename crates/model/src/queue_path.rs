//! `QueuePath`: a validated full queue name such as `root.eng.batch`, and the
//! rules for turning user and group names into queue names.
//!
//! Whether a path names an existing queue, and whether it is a leaf, is the
//! queue tree's business, not this module's.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// A full, validated queue path that always starts with `root`.
///
/// Cheap to clone (shared string). Ordered by its text, which lists a parent
/// immediately before its own subtree (`root.a` < `root.a.b` < `root.ab`).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueuePath(Arc<str>);

/// Why a queue path is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid queue name {text:?}: {reason}")]
pub struct QueuePathError {
    /// The offending text, as given.
    pub text: String,
    /// What rule it breaks.
    pub reason: &'static str,
}

impl QueuePath {
    /// The root queue.
    pub fn root() -> QueuePath {
        QueuePath(Arc::from("root"))
    }

    /// Parses a queue name; `root.` is added when missing (`a.b` → `root.a.b`).
    ///
    /// Hadoop's rules: no empty component (so no leading, trailing or doubled
    /// dot), and no leading or trailing whitespace on any component, counting
    /// the non-breaking space U+00A0. Inner spaces are legal.
    pub fn parse(text: &str) -> Result<QueuePath, QueuePathError> {
        let err = |reason| QueuePathError {
            text: text.to_owned(),
            reason,
        };
        if text.is_empty() {
            return Err(err("the name is empty"));
        }
        for component in text.split('.') {
            check_component(component).map_err(err)?;
        }
        if text == "root" || text.starts_with("root.") {
            Ok(QueuePath(Arc::from(text)))
        } else {
            Ok(QueuePath(Arc::from(format!("root.{text}"))))
        }
    }

    /// The full name (`root.a.b`).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for `root`.
    pub fn is_root(&self) -> bool {
        &*self.0 == "root"
    }

    /// The components, starting with `root`.
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('.')
    }

    /// Number of components below root (`root` is 0, `root.a` is 1).
    pub fn depth(&self) -> usize {
        self.0.bytes().filter(|b| *b == b'.').count()
    }

    /// The last component (`b` for `root.a.b`).
    pub fn name(&self) -> &str {
        match self.0.rfind('.') {
            Some(i) => &self.0[i + 1..],
            None => &self.0,
        }
    }

    /// The parent queue, or `None` for root.
    pub fn parent(&self) -> Option<QueuePath> {
        self.0
            .rfind('.')
            .map(|i| QueuePath(Arc::from(&self.0[..i])))
    }

    /// The child called `name`, which must be a valid single component.
    pub fn child(&self, name: &str) -> Result<QueuePath, QueuePathError> {
        let err = |reason| QueuePathError {
            text: name.to_owned(),
            reason,
        };
        if name.contains('.') {
            return Err(err("a single queue name cannot contain '.'"));
        }
        check_component(name).map_err(err)?;
        Ok(QueuePath(Arc::from(format!("{}.{name}", self.0))))
    }

    /// True when `self` is a strict ancestor of `other`.
    pub fn is_ancestor_of(&self, other: &QueuePath) -> bool {
        other.0.len() > self.0.len()
            && other.0.starts_with(&*self.0)
            && other.0.as_bytes()[self.0.len()] == b'.'
    }

    /// `self` and each of its ancestors, from `self` up to root.
    pub fn self_and_ancestors(&self) -> impl Iterator<Item = QueuePath> + '_ {
        let mut next = Some(self.clone());
        std::iter::from_fn(move || {
            let cur = next.take()?;
            next = cur.parent();
            Some(cur)
        })
    }
}

/// Turns a user or group name into a queue name component, as Hadoop does:
/// every `.` becomes `_dot_` (so `first.last` → `first_dot_last`).
pub fn sanitize_queue_name(name: &str) -> String {
    name.replace('.', "_dot_")
}

fn check_component(component: &str) -> Result<(), &'static str> {
    if component.is_empty() {
        return Err("it has an empty component (a leading, trailing or doubled '.')");
    }
    let is_space = |c: char| c.is_whitespace() || c == '\u{a0}';
    if component.starts_with(is_space) || component.ends_with(is_space) {
        return Err("a component starts or ends with whitespace");
    }
    Ok(())
}

impl fmt::Display for QueuePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for QueuePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}

impl FromStr for QueuePath {
    type Err = QueuePathError;

    fn from_str(s: &str) -> Result<QueuePath, QueuePathError> {
        QueuePath::parse(s)
    }
}

impl AsRef<str> for QueuePath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_prefix_is_optional() {
        assert_eq!(QueuePath::parse("a.b").unwrap().as_str(), "root.a.b");
        assert_eq!(QueuePath::parse("root.a.b").unwrap().as_str(), "root.a.b");
        assert_eq!(QueuePath::parse("root").unwrap(), QueuePath::root());
        assert_eq!(
            QueuePath::parse("rootish").unwrap().as_str(),
            "root.rootish"
        );
        assert_eq!(QueuePath::parse("a b").unwrap().as_str(), "root.a b");
    }

    #[test]
    fn validity_rules() {
        for bad in [
            "",
            ".a",
            "a.",
            "a..b",
            " a",
            "a ",
            "a. b",
            "a.\u{a0}b",
            "a.b\u{a0}",
            "\t",
        ] {
            assert!(QueuePath::parse(bad).is_err(), "{bad:?} should be invalid");
        }
        let e = QueuePath::parse("a..b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid queue name \"a..b\": it has an empty component (a leading, trailing or doubled '.')"
        );
    }

    #[test]
    fn navigation() {
        let p = QueuePath::parse("root.a.b").unwrap();
        assert_eq!(p.name(), "b");
        assert_eq!(p.depth(), 2);
        assert_eq!(p.parent().unwrap().as_str(), "root.a");
        assert_eq!(QueuePath::root().parent(), None);
        assert_eq!(QueuePath::root().depth(), 0);
        assert!(QueuePath::parse("root.a").unwrap().is_ancestor_of(&p));
        assert!(QueuePath::root().is_ancestor_of(&p));
        assert!(!p.is_ancestor_of(&p));
        assert!(
            !QueuePath::parse("root.a")
                .unwrap()
                .is_ancestor_of(&QueuePath::parse("root.ab").unwrap())
        );
        let chain: Vec<String> = p.self_and_ancestors().map(|q| q.to_string()).collect();
        assert_eq!(chain, ["root.a.b", "root.a", "root"]);
        assert_eq!(p.child("c").unwrap().as_str(), "root.a.b.c");
        assert!(p.child("c.d").is_err());
        assert!(p.child("").is_err());
    }

    #[test]
    fn user_names_become_queue_names() {
        assert_eq!(sanitize_queue_name("first.last"), "first_dot_last");
        assert_eq!(sanitize_queue_name("alice"), "alice");
    }

    #[test]
    fn order_puts_a_subtree_after_its_parent() {
        let mut v: Vec<QueuePath> = ["root.ab", "root.a.b", "root.a", "root"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        v.sort();
        let names: Vec<&str> = v.iter().map(QueuePath::as_str).collect();
        assert_eq!(names, ["root", "root.a", "root.a.b", "root.ab"]);
    }
}
