//! Users' groups as the service maps them: the group mappings of Hadoop's
//! `hadoop.security.group.mapping` that Weft implements, the operating
//! system's name service behind the Unix ones (`os`), Hadoop's cache in
//! front of it (`cache`), and `weft.rm.groups.file`, which replaces the
//! mapping when it is set.
//!
//! What a group allows (placement rules, ACLs) is `weft-queue-tree`'s, and
//! reading the group file is `config`'s. A lookup may wait on a network
//! name service (LDAP or SSSD behind NSS), so it is awaited only where a
//! request may wait, in the handlers; the scheduler's task never asks and
//! only sees the groups a handler resolved (`access::Identity`).

mod cache;
mod os;

use std::fmt;
use std::sync::{Arc, PoisonError, RwLock};

use weft_queue_tree::{GroupFile, GroupMapping as _};

pub use cache::{GroupCache, GroupCacheSettings, SharedGroups};
pub use os::OsGroups;

/// Answers a user's groups from a name service. Calls block (a name
/// service may be a network away), so the cache makes them on tokio's
/// blocking threads; tests replace the operating system's with a fake.
pub trait GroupLookup: fmt::Debug + Send + Sync + 'static {
    /// The groups of `user`, primary first, each once; `Ok(None)` when the
    /// name service does not know the user.
    fn lookup(&self, user: &str) -> Result<Option<Vec<String>>, LookupError>;
}

/// A name service that failed to answer (as opposed to not knowing the user).
#[derive(Debug, thiserror::Error)]
#[error("looking up {what} failed: {source}")]
pub struct LookupError {
    /// What was being looked up (`user alice`, `group 1001`).
    pub what: String,
    /// What the operating system said.
    pub source: std::io::Error,
}

/// The values of `hadoop.security.group.mapping` Weft accepts.
///
/// The three Unix mappings all give the groups the operating system's name
/// service reports (`id -Gn`): Hadoop's JNI mapping asks libc, its shell
/// mapping runs `id`, and the fallback variant is the JNI one where Hadoop's
/// native library loads. Weft asks libc for all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingClass {
    /// `JniBasedUnixGroupsMappingWithFallback`, Hadoop's default.
    JniWithFallback,
    /// `JniBasedUnixGroupsMapping`.
    Jni,
    /// `ShellBasedUnixGroupsMapping`.
    Shell,
    /// `NullGroupsMapping`: nobody is in any group.
    Null,
}

/// Why a `hadoop.security.group.mapping` class is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsupportedMapping {
    /// One of Hadoop's netgroup mappings: they add the NIS netgroups that
    /// ACLs name (`@name`), which Weft does not resolve, so accepting them
    /// would silently drop those memberships.
    Netgroup,
    /// Any other class: LDAP, composite, rule-based, or a custom one.
    Other,
}

impl UnsupportedMapping {
    /// Why the class is refused and what to use instead, for the start's error.
    pub fn why(self) -> &'static str {
        match self {
            UnsupportedMapping::Netgroup => {
                "is a netgroup mapping, and Weft does not resolve netgroups (@name in ACLs); use org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback (the default) for the operating system's groups, or list users' groups in weft.rm.groups.file"
            }
            UnsupportedMapping::Other => {
                "is not a group mapping Weft implements; it takes org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback (the default), org.apache.hadoop.security.JniBasedUnixGroupsMapping or org.apache.hadoop.security.ShellBasedUnixGroupsMapping (each gives the groups the operating system reports, as id -Gn does) and org.apache.hadoop.security.NullGroupsMapping (no groups); groups kept elsewhere (LDAP) can be listed in weft.rm.groups.file"
            }
        }
    }
}

impl MappingClass {
    /// Every class Weft accepts.
    pub const ALL: [MappingClass; 4] = [
        MappingClass::JniWithFallback,
        MappingClass::Jni,
        MappingClass::Shell,
        MappingClass::Null,
    ];

    /// The Java class name, as `hadoop.security.group.mapping` holds it.
    pub fn class_name(self) -> &'static str {
        match self {
            MappingClass::JniWithFallback => {
                "org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback"
            }
            MappingClass::Jni => "org.apache.hadoop.security.JniBasedUnixGroupsMapping",
            MappingClass::Shell => "org.apache.hadoop.security.ShellBasedUnixGroupsMapping",
            MappingClass::Null => "org.apache.hadoop.security.NullGroupsMapping",
        }
    }

    /// The class a property value names. Names are compared exactly, as
    /// Java loads classes.
    pub fn from_class_name(name: &str) -> Result<MappingClass, UnsupportedMapping> {
        if let Some(class) = MappingClass::ALL
            .into_iter()
            .find(|c| c.class_name() == name)
        {
            return Ok(class);
        }
        const NETGROUP: [&str; 3] = [
            "org.apache.hadoop.security.JniBasedUnixGroupsNetgroupMapping",
            "org.apache.hadoop.security.JniBasedUnixGroupsNetgroupMappingWithFallback",
            "org.apache.hadoop.security.ShellBasedUnixGroupsNetgroupMapping",
        ];
        if NETGROUP.contains(&name) {
            return Err(UnsupportedMapping::Netgroup);
        }
        Err(UnsupportedMapping::Other)
    }

    /// Whether the groups come from the operating system (every class but `Null`).
    pub fn is_from_os(self) -> bool {
        self != MappingClass::Null
    }
}

impl fmt::Display for MappingClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class_name())
    }
}

/// Where the configuration says users' groups come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupSource {
    /// `weft.rm.groups.file`, as read at start. It replaces the mapping
    /// whole: a user it does not list has no groups, and the operating
    /// system is not asked.
    File(GroupFile),
    /// `hadoop.security.group.mapping` (its default without the file).
    Mapping(MappingClass),
}

/// The mapping in force, which `refresh-user-groups` refreshes: the group
/// file (read again), the operating system's groups through the cache
/// (which it empties), or nobody in any group.
#[derive(Debug)]
pub struct UserGroups(Source);

#[derive(Debug)]
enum Source {
    File(RwLock<Arc<GroupFile>>),
    Os {
        class: MappingClass,
        cache: Arc<GroupCache>,
    },
    Nobody,
}

impl UserGroups {
    /// The mapping `source` configures; a Unix mapping asks `lookup` (the
    /// operating system, or a test's fake) through a cache with `settings`.
    pub fn new(
        source: GroupSource,
        settings: GroupCacheSettings,
        lookup: Arc<dyn GroupLookup>,
    ) -> UserGroups {
        UserGroups(match source {
            GroupSource::File(file) => Source::File(RwLock::new(Arc::new(file))),
            GroupSource::Mapping(class) if class.is_from_os() => Source::Os {
                class,
                cache: Arc::new(GroupCache::new(lookup, settings)),
            },
            GroupSource::Mapping(_) => Source::Nobody,
        })
    }

    /// `user`'s groups, primary first; none for a user the mapping does not
    /// know. With the operating system's groups this may wait for a lookup.
    pub async fn groups(&self, user: &str) -> Vec<String> {
        match &self.0 {
            Source::File(file) => file
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .groups(user),
            Source::Os { cache, .. } => cache.groups(user).await.to_vec(),
            Source::Nobody => Vec::new(),
        }
    }

    /// Puts a group file read again in force. False (and nothing changes)
    /// when the mapping in force is not a file's.
    pub fn set_file(&self, new: GroupFile) -> bool {
        let Source::File(file) = &self.0 else {
            return false;
        };
        *file.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(new);
        true
    }

    /// Forgets every cached answer, as Hadoop's refresh does, so the next
    /// request for each user asks the name service again; answers how many
    /// users (and unknown users) were cached.
    pub fn forget_cached(&self) -> usize {
        match &self.0 {
            Source::Os { cache, .. } => cache.clear(),
            Source::File(_) | Source::Nobody => 0,
        }
    }

    /// What maps users to groups, for answers and logs: `weft.rm.groups.file`
    /// or the mapping's class.
    pub fn describe(&self) -> &'static str {
        match &self.0 {
            Source::File(_) => "weft.rm.groups.file",
            Source::Os { class, .. } => class.class_name(),
            Source::Nobody => MappingClass::Null.class_name(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoop_class_names_are_read_exactly() {
        for class in MappingClass::ALL {
            assert_eq!(MappingClass::from_class_name(class.class_name()), Ok(class));
        }
        assert_eq!(
            MappingClass::from_class_name(
                "org.apache.hadoop.security.JniBasedUnixGroupsNetgroupMappingWithFallback"
            ),
            Err(UnsupportedMapping::Netgroup)
        );
        for other in [
            "org.apache.hadoop.security.LdapGroupsMapping",
            "org.apache.hadoop.security.CompositeGroupsMapping",
            "ShellBasedUnixGroupsMapping",
            "org.apache.hadoop.security.shellbasedunixgroupsmapping",
        ] {
            assert_eq!(
                MappingClass::from_class_name(other),
                Err(UnsupportedMapping::Other),
                "{other}"
            );
        }
        assert!(MappingClass::Shell.is_from_os());
        assert!(!MappingClass::Null.is_from_os());
    }

    #[derive(Debug)]
    struct Nobody;

    impl GroupLookup for Nobody {
        fn lookup(&self, _user: &str) -> Result<Option<Vec<String>>, LookupError> {
            Ok(None)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_group_file_replaces_the_mapping_and_can_be_swapped() {
        let file = |text: &str| GroupFile::parse(text).unwrap();
        let groups = UserGroups::new(
            GroupSource::File(file("alice: eng ops\n")),
            GroupCacheSettings::default(),
            Arc::new(Nobody),
        );
        assert_eq!(groups.groups("alice").await, ["eng", "ops"]);
        assert_eq!(groups.groups("bob").await, Vec::<String>::new());
        assert!(groups.set_file(file("bob: eng\n")));
        assert_eq!(groups.groups("alice").await, Vec::<String>::new());
        assert_eq!(groups.groups("bob").await, ["eng"]);
        assert_eq!(groups.describe(), "weft.rm.groups.file");
        assert_eq!(groups.forget_cached(), 0);

        let null = UserGroups::new(
            GroupSource::Mapping(MappingClass::Null),
            GroupCacheSettings::default(),
            Arc::new(Nobody),
        );
        assert_eq!(null.groups("root").await, Vec::<String>::new());
        assert!(!null.set_file(file("root: root\n")));
        assert_eq!(
            null.describe(),
            "org.apache.hadoop.security.NullGroupsMapping"
        );
    }
}
