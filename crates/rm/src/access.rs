//! Who may do what to an application or to the cluster: the caller's
//! identity (user and groups), the RM-wide switches (`yarn.acl.enable`,
//! `yarn.admin.acl`), an application's own ACLs (`AppAcls`, YARN's
//! `VIEW_APP` and `MODIFY_APP`) and Hadoop's rules for seeing an app's full
//! report, for killing, moving, re-prioritising it or changing its lifetime,
//! and for admin calls, and what a list of apps shows of each (`ListedAs`).
//!
//! The cluster administrators and the users' groups can be refreshed while
//! the RM runs (`refresh-admin-acls`, `refresh-user-groups`), so both sit in
//! `LiveAccess`, shared by the handlers and the scheduler task; what files
//! they come from is the handlers' business, and where groups come from is
//! `groups`'. Resolving an identity may wait on a name service, so only
//! handlers do it; the scheduler task is handed identities already resolved
//! and only checks them against the ACLs. Who administers a queue is asked
//! of whatever holds the queue ACLs (`QueueAdmins`): the live tree in the
//! scheduler task, a published view in a handler.
//!
//! Submission ACLs are the core's (it checks them on every submission, as
//! Hadoop's scheduler does); queue ACLs themselves are `weft-queue-tree`'s;
//! what a report leaves out for a caller who may not see it is the DTOs'.

use std::sync::{PoisonError, RwLock};

use weft_model::QueuePath;
use weft_queue_tree::{Acl, QueueAccess, QueueTree};

use crate::groups::UserGroups;

use crate::view::{AppView, View};

/// A caller: the user named by `?user.name=` and the user's groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The user.
    pub user: String,
    /// Groups, primary first, as the group mapping in force gives them.
    pub groups: Vec<String>,
}

/// An application's own ACLs, from its submission's
/// `am-container-spec.application-acls` (YARN's `ApplicationAccessType`).
/// One not given is nobody's, as in Hadoop: the owner, the cluster
/// administrators and the queue's administrators need no ACL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppAcls {
    /// `VIEW_APP`: who else sees the app's full report.
    pub view: Acl,
    /// `MODIFY_APP`: who else may kill, move, re-prioritise it or change its lifetime.
    pub modify: Acl,
}

/// YARN's name of the view ACL.
pub const VIEW_APP: &str = "VIEW_APP";

/// YARN's name of the modify ACL.
pub const MODIFY_APP: &str = "MODIFY_APP";

impl AppAcls {
    /// True when neither ACL names anyone (an app submitted without them).
    pub fn is_empty(&self) -> bool {
        self.view.is_nobody() && self.modify.is_nobody()
    }
}

/// Whoever holds the queue ACLs: says who administers a queue
/// (`aclAdministerApps` on it or a parent, as Hadoop walks them).
pub trait QueueAdmins {
    /// Whether `who` administers `queue` (for a queue that does not exist,
    /// its nearest existing parent).
    fn administers(&self, queue: &QueuePath, who: &Identity) -> bool;
}

impl QueueAdmins for QueueTree {
    fn administers(&self, queue: &QueuePath, who: &Identity) -> bool {
        self.has_access(queue, QueueAccess::AdministerQueue, &who.user, &who.groups)
    }
}

/// The ACLs as of the view's snapshot: a refresh of the allocation file
/// reaches handlers with the next view, as every other change does.
impl QueueAdmins for View {
    fn administers(&self, queue: &QueuePath, who: &Identity) -> bool {
        queue.self_and_ancestors().any(|p| {
            self.queue(&p)
                .is_some_and(|q| q.tree.acl_administer_apps.allows(&who.user, &who.groups))
        })
    }
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

    /// Hadoop's rule for changing an app (kill, move, priority, lifetime):
    /// its owner, a user its `MODIFY_APP` ACL names, a cluster
    /// administrator, or someone who administers its queue.
    pub fn may_modify_app(
        &self,
        admins: &impl QueueAdmins,
        who: &Identity,
        app: AppAccess<'_>,
    ) -> bool {
        self.is_admin(who)
            || who.user == app.owner
            || app.acls.modify.allows(&who.user, &who.groups)
            || admins.administers(app.queue, who)
    }

    /// Hadoop's rule for seeing an app's full report (its times, addresses
    /// and usage; others get the report with those left out): its owner, a
    /// user its `VIEW_APP` ACL names, a cluster administrator, or someone
    /// who administers its queue. A caller who names nobody (`who` is
    /// `None`) sees it all, as Hadoop's web services check only a named
    /// caller: with simple authentication this hides nothing from someone
    /// who wants to see it.
    pub fn may_view_app(
        &self,
        admins: &impl QueueAdmins,
        who: Option<&Identity>,
        app: AppAccess<'_>,
    ) -> bool {
        let Some(who) = who else { return true };
        self.may_view_app_by_acls(who, Some(app.owner), &app.acls.view)
            || admins.administers(app.queue, who)
    }

    /// Hadoop's `ApplicationACLsManager.checkAccess` for `VIEW_APP`, the
    /// rule a NodeManager applies before it shows a container's logs: the
    /// app's owner, a user or group its `VIEW_APP` ACL (`view`) names, or an
    /// administrator. Queue administrators are not asked, as a node knows
    /// no queues; `may_view_app` adds them on the RM. An owner the caller
    /// does not know (`None`) is nobody's.
    pub fn may_view_app_by_acls(&self, who: &Identity, owner: Option<&str>, view: &Acl) -> bool {
        self.is_admin(who)
            || owner == Some(who.user.as_str())
            || view.allows(&who.user, &who.groups)
    }

    /// Whether `who` may put apps in `queue` (moving checks the target this way).
    pub fn may_submit_to(&self, tree: &QueueTree, who: &Identity, queue: &QueuePath) -> bool {
        !self.enabled || tree.has_access(queue, QueueAccess::SubmitApps, &who.user, &who.groups)
    }
}

/// What a list of apps (`GET /ws/v1/cluster/apps`, the web UI's lists)
/// shows a caller of one app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListedAs {
    /// The whole report: the caller may view the app.
    Whole,
    /// The report without what the caller may not see (Hadoop's default).
    Withheld,
    /// Nothing: the app is left out of the list, as Hadoop's
    /// `yarn.webapp.filter-entity-list-by-user` leaves it out.
    LeftOut,
}

impl ListedAs {
    /// How a list shows an app to a caller who may (`may_view`) or may not
    /// view it, when `filter_by_user` (`yarn.webapp.filter-entity-list-by-user`)
    /// is on or off. Whoever may view an app sees it whole either way; with
    /// `yarn.acl.enable` off everybody may, so the switch changes nothing.
    pub fn of(may_view: bool, filter_by_user: bool) -> ListedAs {
        match (may_view, filter_by_user) {
            (true, _) => ListedAs::Whole,
            (false, false) => ListedAs::Withheld,
            (false, true) => ListedAs::LeftOut,
        }
    }
}

/// What the rules need to know of one app.
#[derive(Clone, Copy, Debug)]
pub struct AppAccess<'a> {
    /// The user who submitted it.
    pub owner: &'a str,
    /// Its queue now.
    pub queue: &'a QueuePath,
    /// Its own ACLs.
    pub acls: &'a AppAcls,
}

impl<'a> AppAccess<'a> {
    /// The app a view (or a fresh snapshot) shows.
    pub fn of(app: &'a AppView) -> AppAccess<'a> {
        AppAccess {
            owner: &app.report.record.user,
            queue: &app.report.record.queue,
            acls: &app.extra.acls,
        }
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
        admins: &impl QueueAdmins,
        who: &Identity,
        app: AppAccess<'_>,
    ) -> bool {
        self.acl().may_modify_app(admins, who, app)
    }

    /// Whether `who` may put apps in `queue`.
    pub fn may_submit_to(&self, tree: &QueueTree, who: &Identity, queue: &QueuePath) -> bool {
        self.acl().may_submit_to(tree, who, queue)
    }

    /// The settings in force now, for checks of many apps against one version.
    pub fn settings(&self) -> AclSettings {
        self.acl().clone()
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

    const ALLOC: &str = r#"<allocations>
                 <queue name="root">
                   <aclSubmitApps> </aclSubmitApps>
                   <aclAdministerApps> </aclAdministerApps>
                   <queue name="a"><aclSubmitApps>alice</aclSubmitApps><aclAdministerApps> ops</aclAdministerApps></queue>
                   <queue name="b"><aclSubmitApps>bob</aclSubmitApps></queue>
                 </queue>
               </allocations>"#;

    fn tree() -> QueueTree {
        let loaded = parse_alloc_file(ALLOC).unwrap();
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

    fn app<'a>(queue: &'a QueuePath, acls: &'a AppAcls) -> AppAccess<'a> {
        AppAccess {
            owner: "alice",
            queue,
            acls,
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
        let none = AppAcls::default();
        // The owner, an admin and a queue administrator may; others may not.
        assert!(acl.may_modify_app(&t, &who("alice", &[]), app(&a, &none)));
        assert!(acl.may_modify_app(&t, &who("yarn", &[]), app(&a, &none)));
        assert!(acl.may_modify_app(&t, &who("carol", &["ops"]), app(&a, &none)));
        assert!(!acl.may_modify_app(&t, &who("bob", &[]), app(&a, &none)));
        // The app's MODIFY_APP ACL lets in whom it names, by name or group;
        // its VIEW_APP ACL lets nobody change it.
        let acls = AppAcls {
            view: Acl::parse("bob"),
            modify: Acl::parse("dave devs"),
        };
        assert!(!acl.may_modify_app(&t, &who("bob", &[]), app(&a, &acls)));
        assert!(acl.may_modify_app(&t, &who("dave", &[]), app(&a, &acls)));
        assert!(acl.may_modify_app(&t, &who("erin", &["devs"]), app(&a, &acls)));
        // Moving also needs the right to submit to the target.
        assert!(!acl.may_submit_to(&t, &who("alice", &[]), &b));
        assert!(acl.may_submit_to(&t, &who("bob", &[]), &b));
        // With ACLs off everybody administers.
        let off = AclSettings {
            enabled: false,
            admins: Acl::nobody(),
        };
        assert!(off.may_modify_app(&t, &who("bob", &[]), app(&a, &none)));
        assert!(off.may_submit_to(&t, &who("alice", &[]), &b));
        assert!(off.is_admin(&who("anyone", &[])));
    }

    #[test]
    fn a_published_view_says_who_administers_a_queue_as_the_tree_does() {
        let t = tree();
        let loaded = parse_alloc_file(ALLOC).unwrap();
        let core = weft_core::ResourceManager::new(
            loaded.config,
            weft_core::CoreSettings::default(),
            weft_model::Time::ZERO,
        );
        let view = View::build(&core, &Default::default(), 1, weft_model::Time::ZERO, 0);
        for queue in [
            "root",
            "root.a",
            "root.b",
            "root.a.new",
            "root.nowhere.deep",
        ] {
            let queue = QueuePath::parse(queue).unwrap();
            for w in [who("carol", &["ops"]), who("bob", &[]), who("yarn", &[])] {
                assert_eq!(
                    view.administers(&queue, &w),
                    t.administers(&queue, &w),
                    "{queue} {w:?}"
                );
            }
        }
        assert!(view.administers(
            &QueuePath::parse("root.a.new").unwrap(),
            &who("carol", &["ops"])
        ));
        assert!(!view.administers(
            &QueuePath::parse("root.b").unwrap(),
            &who("carol", &["ops"])
        ));
    }

    #[test]
    fn hadoop_rules_for_seeing_apps() {
        let t = tree();
        let acl = AclSettings {
            enabled: true,
            admins: Acl::parse("yarn"),
        };
        let a = QueuePath::parse("root.a").unwrap();
        let none = AppAcls::default();
        let acls = AppAcls {
            view: Acl::parse("bob viewers"),
            modify: Acl::parse("dave"),
        };
        // The owner, an admin, a queue administrator and whom VIEW_APP names.
        for (user, groups) in [
            ("alice", &[][..]),
            ("yarn", &[]),
            ("carol", &["ops"]),
            ("bob", &[]),
            ("erin", &["viewers"]),
        ] {
            assert!(
                acl.may_view_app(&t, Some(&who(user, groups)), app(&a, &acls)),
                "{user}"
            );
        }
        // MODIFY_APP alone does not let one see, as in Hadoop.
        assert!(!acl.may_view_app(&t, Some(&who("dave", &[])), app(&a, &acls)));
        assert!(!acl.may_view_app(&t, Some(&who("bob", &[])), app(&a, &none)));
        // A caller who names nobody is not checked, as in Hadoop.
        assert!(acl.may_view_app(&t, None, app(&a, &none)));
        // ACLs off: everybody sees everything.
        let off = AclSettings {
            enabled: false,
            admins: Acl::nobody(),
        };
        assert!(off.may_view_app(&t, Some(&who("bob", &[])), app(&a, &none)));
    }

    #[test]
    fn a_nodes_rule_for_seeing_apps_asks_no_queue() {
        let acl = AclSettings {
            enabled: true,
            admins: Acl::parse("yarn"),
        };
        let view = Acl::parse("bob viewers");
        let alice = Some("alice");
        for (user, groups) in [
            ("alice", &[][..]),
            ("yarn", &[]),
            ("bob", &[]),
            ("erin", &["viewers"]),
        ] {
            assert!(
                acl.may_view_app_by_acls(&who(user, groups), alice, &view),
                "{user}"
            );
        }
        // A queue administrator is the RM's business: a node does not know queues.
        assert!(!acl.may_view_app_by_acls(&who("carol", &["ops"]), alice, &view));
        // An owner the node was not told is nobody: only the ACL and admins let in.
        assert!(!acl.may_view_app_by_acls(&who("alice", &[]), None, &Acl::nobody()));
        assert!(acl.may_view_app_by_acls(&who("yarn", &[]), None, &Acl::nobody()));
        let off = AclSettings {
            enabled: false,
            admins: Acl::nobody(),
        };
        assert!(off.may_view_app_by_acls(&who("carol", &[]), alice, &Acl::nobody()));
    }
}
