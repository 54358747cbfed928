//! The operating system's answer to "which groups is this user in", as
//! Hadoop's native group mapping gets it: the user's entry (`getpwnam_r`),
//! the groups the name service lists for the user with the entry's group
//! (`getgrouplist`), and each group's name (`getgrgid_r`). Through NSS this
//! sees LDAP and SSSD users as `id -Gn` does.
//!
//! Every call blocks; running it off the async threads and caching what it
//! says is `cache`'s job.

use nix::errno::Errno;
use nix::unistd::{Gid, Group, User};

use super::{GroupLookup, LookupError};

/// The operating system's name service.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsGroups;

impl GroupLookup for OsGroups {
    fn lookup(&self, user: &str) -> Result<Option<Vec<String>>, LookupError> {
        let entry = match User::from_name(user) {
            Ok(Some(entry)) => entry,
            Ok(None) => return Ok(None),
            // Hadoop's native code reads these as "no such user": some C
            // libraries report an unknown name with them rather than with
            // an empty answer.
            Err(Errno::ENOENT | Errno::ESRCH | Errno::EBADF | Errno::EPERM) => return Ok(None),
            Err(errno) => return Err(failed(format!("user {user}"), errno)),
        };
        let gids = member_of(&entry)?;
        let mut names: Vec<String> = Vec::with_capacity(gids.len());
        for gid in gids {
            match Group::from_gid(gid) {
                Ok(Some(group)) => {
                    // Two ids may share a name; a name is listed once.
                    if !names.contains(&group.name) {
                        names.push(group.name);
                    }
                }
                // As in Hadoop's native mapping, a group without a name is
                // left out (with a complaint) rather than failing the user.
                Ok(None) => {
                    tracing::warn!(
                        user,
                        gid = gid.as_raw(),
                        "the user's group has no name; it is left out of the user's groups"
                    );
                }
                Err(errno) => {
                    tracing::warn!(user, gid = gid.as_raw(), error = %errno, "cannot look up the name of the user's group; it is left out of the user's groups");
                }
            }
        }
        Ok(Some(names))
    }
}

/// The user's group ids, the entry's (primary) group first and the rest in
/// the order the name service gives them, each once.
fn member_of(entry: &User) -> Result<Vec<Gid>, LookupError> {
    let listed = list_groups(entry)?;
    let mut gids = Vec::with_capacity(listed.len() + 1);
    gids.push(entry.gid);
    for gid in listed {
        if !gids.contains(&gid) {
            gids.push(gid);
        }
    }
    Ok(gids)
}

#[cfg(not(target_vendor = "apple"))]
fn list_groups(entry: &User) -> Result<Vec<Gid>, LookupError> {
    // The entry's name came from a C string, so it holds no NUL; if it did,
    // the user would have only the primary group.
    let Ok(name) = std::ffi::CString::new(entry.name.as_bytes()) else {
        return Ok(Vec::new());
    };
    nix::unistd::getgrouplist(&name, entry.gid)
        .map_err(|errno| failed(format!("the groups of user {}", entry.name), errno))
}

/// Apple's systems keep memberships in a directory service that
/// `getgrouplist` only partly reflects (and `nix` does not offer it there):
/// users have their primary group only.
#[cfg(target_vendor = "apple")]
fn list_groups(_entry: &User) -> Result<Vec<Gid>, LookupError> {
    Ok(Vec::new())
}

fn failed(what: String, errno: Errno) -> LookupError {
    LookupError {
        what,
        source: std::io::Error::from(errno),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `root` exists on every Unix system, in the group `root` (gid 0) on
    /// Linux and `wheel` on the BSDs.
    #[test]
    fn root_is_in_its_primary_group_first() {
        let groups = OsGroups
            .lookup("root")
            .expect("the name service answers")
            .expect("root exists");
        let primary = Group::from_gid(Gid::from_raw(0)).unwrap().unwrap().name;
        assert_eq!(groups.first(), Some(&primary), "{groups:?}");
        let mut once = groups.clone();
        once.sort();
        once.dedup();
        assert_eq!(once.len(), groups.len(), "a group listed twice: {groups:?}");
        if cfg!(target_os = "linux") {
            assert!(groups.iter().any(|g| g == "root"), "{groups:?}");
        }
    }

    #[test]
    fn a_user_nobody_has_is_unknown_not_an_error() {
        // Longer than any login name a system allows, so it exists nowhere.
        let user = "weft-test-no-such-user-0123456789abcdef";
        assert_eq!(OsGroups.lookup(user).unwrap(), None);
        // A NUL cannot be in a C string, hence in any user's name.
        assert_eq!(OsGroups.lookup("a\0b").unwrap(), None);
    }
}
