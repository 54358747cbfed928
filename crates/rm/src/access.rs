//! Who may do what to an application or to the cluster: the caller's
//! identity (user and groups), the RM-wide switches (`yarn.acl.enable`,
//! `yarn.admin.acl`) and Hadoop's rules for killing, moving and
//! re-prioritising apps and for admin calls.
//!
//! The cluster administrators and the users' groups can be refreshed while
//! the RM runs (`refresh-admin-acls`, `refresh-user-groups`), so both sit in
//! `LiveAccess`, shared by the handlers and the scheduler task; what files
//! they come from is the handlers' business, and where groups come from is
//! `groups`'. Resolving an identity may wait on a name service, so only
//! handlers do it; the scheduler task is handed identities already resolved
//! and only checks them against the ACLs.
//!
//! Submission ACLs are the core's (it checks them on every submission, as
//! Hadoop's scheduler does); queue ACLs themselves are `weft-queue-tree`'s.

use std::sync::{PoisonError, RwLock};

use weft_model::QueuePath;
use weft_queue_tree::{Acl, QueueAccess, QueueTree};

use crate::groups::UserGroups;

/// A caller: the user named by `?user.name=` and the user's groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The user.
    pub user: String,
    /// Groups, primary first, as the group mapping in force gives them.
    pub groups: Vec<String>,
}

/// The RM-wide access settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AclSettings {
    /// `yarn.acl.enable`: without it, anyone may administer anything
    /// (queue submission ACLs still apply, as in Hadoop's scheduler).
    pub enabled: bool,
    /// `yarn.admin.acl`: the cluster administrators.
    pub admins: Acl,
}

impl AclSettings {
    /// True when `who` is a cluster administrator (everybody is while ACLs are off).
    pub fn is_admin(&self, who: &Identity) -> bool {
        !self.enabled || self.admins.allows(&who.user, &who.groups)
    }

    /// Hadoop's rule for changing an app (kill, move, priority): its owner,
    /// a cluster administrator, or someone who administers its queue.
    pub fn may_modify_app(
        &self,
        tree: &QueueTree,
        who: &Identity,
        owner: &str,
        queue: &QueuePath,
    ) -> bool {
        self.is_admin(who)
            || who.user == owner
            || tree.has_access(queue, QueueAccess::AdministerQueue, &who.user, &who.groups)
    }

    /// Whether `who` may put apps in `queue` (moving checks the target this way).
    pub fn may_submit_to(&self, tree: &QueueTree, who: &Identity, queue: &QueuePath) -> bool {
        !self.enabled || tree.has_access(queue, QueueAccess::SubmitApps, &who.user, &who.groups)
    }
}

/// The access settings in force, which an administrator may refresh: the
/// ACL switches with the administrators, and the users' groups. Reads see
/// one version or the next, never a mix; a lock is held only to copy out or
/// swap in, never across an await.
#[derive(Debug)]
pub struct LiveAccess {
    acl: RwLock<AclSettings>,
    groups: UserGroups,
}

impl LiveAccess {
    /// Access as the configuration gave it at start.
    pub fn new(acl: AclSettings, groups: UserGroups) -> LiveAccess {
        LiveAccess {
            acl: RwLock::new(acl),
            groups,
        }
    }

    // A poisoned lock means a writer panicked between two whole values
    // (each write swaps one in), so what it holds is still sound.
    fn acl(&self) -> std::sync::RwLockReadGuard<'_, AclSettings> {
        self.acl.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `who` is a cluster administrator now.
    pub fn is_admin(&self, who: &Identity) -> bool {
        self.acl().is_admin(who)
    }

    /// Hadoop's rule for changing an app, with the administrators in force.
    pub fn may_modify_app(
        &self,
        tree: &QueueTree,
        who: &Identity,
        owner: &str,
        queue: &QueuePath,
    ) -> bool {
        self.acl().may_modify_app(tree, who, owner, queue)
    }

    /// Whether `who` may put apps in `queue`.
    pub fn may_submit_to(&self, tree: &QueueTree, who: &Identity, queue: &QueuePath) -> bool {
        self.acl().may_submit_to(tree, who, queue)
    }

    /// Whether `yarn.acl.enable` is on.
    pub fn enabled(&self) -> bool {
        self.acl().enabled
    }

    /// `yarn.admin.acl` as in force.
    pub fn admins(&self) -> Acl {
        self.acl().admins.clone()
    }

    /// Puts a new `yarn.admin.acl` in force.
    pub fn set_admins(&self, admins: Acl) {
        self.acl
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .admins = admins;
    }

    /// The group mapping in force.
    pub fn groups(&self) -> &UserGroups {
        &self.groups
    }

    /// The identity of `user` with the groups in force; may wait for the
    /// name service, so never call it on the scheduler's task.
    pub async fn identity(&self, user: &str) -> Identity {
        Identity {
            user: user.to_owned(),
            groups: self.groups.groups(user).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use weft_model::Resource;
    use weft_queue_tree::alloc_file::parse_alloc_file;
    use weft_queue_tree::{QueueTree, TreeSettings};

    use super::*;

    fn tree() -> QueueTree {
        let loaded = parse_alloc_file(
            r#"<allocations>
                 <queue name="root">
                   <aclSubmitApps> </aclSubmitApps>
                   <aclAdministerApps> </aclAdministerApps>
                   <queue name="a"><aclSubmitApps>alice</aclSubmitApps><aclAdministerApps> ops</aclAdministerApps></queue>
                   <queue name="b"><aclSubmitApps>bob</aclSubmitApps></queue>
                 </queue>
               </allocations>"#,
        )
        .unwrap();
        QueueTree::new(
            loaded.config,
            TreeSettings {
                size_based_weight: false,
                max_container_allocation: Resource::new(8192, 8),
            },
            Resource::new(8192, 8),
        )
    }

    fn who(user: &str, groups: &[&str]) -> Identity {
        Identity {
            user: user.into(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        }
    }

    #[test]
    fn hadoop_rules_for_changing_apps() {
        let t = tree();
        let acl = AclSettings {
            enabled: true,
            admins: Acl::parse("yarn"),
        };
        let a = QueuePath::parse("root.a").unwrap();
        let b = QueuePath::parse("root.b").unwrap();
        // The owner, an admin and a queue administrator may; others may not.
        assert!(acl.may_modify_app(&t, &who("alice", &[]), "alice", &a));
        assert!(acl.may_modify_app(&t, &who("yarn", &[]), "alice", &a));
        assert!(acl.may_modify_app(&t, &who("carol", &["ops"]), "alice", &a));
        assert!(!acl.may_modify_app(&t, &who("bob", &[]), "alice", &a));
        // Moving also needs the right to submit to the target.
        assert!(!acl.may_submit_to(&t, &who("alice", &[]), &b));
        assert!(acl.may_submit_to(&t, &who("bob", &[]), &b));
        // With ACLs off everybody administers.
        let off = AclSettings {
            enabled: false,
            admins: Acl::nobody(),
        };
        assert!(off.may_modify_app(&t, &who("bob", &[]), "alice", &a));
        assert!(off.may_submit_to(&t, &who("alice", &[]), &b));
        assert!(off.is_admin(&who("anyone", &[])));
    }
}
