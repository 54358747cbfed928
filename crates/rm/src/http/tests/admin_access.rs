//! Router tests of refreshing who administers and who belongs to which
//! group while the RM runs: `refresh-admin-acls` (the site file read
//! again), `refresh-user-groups` (the group file read again), and the
//! groups the RM maps a user to.

use super::*;

/// `POST uri` as `user`, with no body.
async fn post_as(rm: &Rm, uri: &str, user: &str) -> Answer {
    call(
        &rm.router,
        Method::POST,
        &format!("{uri}?user.name={user}"),
        None,
        "",
        &[],
    )
    .await
}

async fn groups_of(rm: &Rm, user: &str) -> Value {
    let a = get(&rm.router, &format!("/ws/v1/cluster/users/{user}/groups")).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.json()["userGroups"]["groups"].clone()
}

#[tokio::test(start_paused = true)]
async fn administrators_are_read_again_from_the_site_file() {
    let dir = TestDir::conf("admins");
    let rm = dir.start();
    const URI: &str = "/ws/v1/cluster/refresh-admin-acls";
    // bob is no administrator yet, so may not refresh them either.
    let a = post_as(&rm, URI, "bob").await;
    expect![[r#"403 ForbiddenException: user bob is not a cluster administrator (yarn.admin.acl) and may not refresh the administrators"#]]
        .assert_eq(&a.error());
    dir.write(
        crate::config::SITE_FILE_NAME,
        &testing::site(&[("yarn.admin.acl", "yarn,bob ops")]),
    );
    let a = post_as(&rm, URI, "yarn").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let r = &a.json()["refreshAdminAcls"];
    assert_eq!(r["adminAcl"], "bob,yarn ops");
    assert_eq!(r["aclEnabled"], true);
    // The test site file sets the list once already; the later value wins,
    // and the answer says so.
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .ends_with("property yarn.admin.acl is set again (first at line 3, column 38); the later value wins"),
        "{r}"
    );
    // Now bob administers: refreshing the queues is his to do.
    assert_eq!(
        post_as(&rm, "/ws/v1/cluster/refresh-queues", "bob")
            .await
            .status,
        StatusCode::OK
    );
    // A site file with a problem anywhere changes nothing.
    dir.write(
        crate::config::SITE_FILE_NAME,
        &testing::site(&[("yarn.admin.acl", "carol"), ("weft.rm.listen", "nowhere")]),
    );
    let a = post_as(&rm, URI, "bob").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    assert!(
        a.error()
            .ends_with("(the administrators in force are unchanged)"),
        "{}",
        a.error()
    );
    assert_eq!(
        post_as(&rm, "/ws/v1/cluster/refresh-queues", "bob")
            .await
            .status,
        StatusCode::OK
    );
    rm.stop().await;

    // On the built-in configuration there is no file to read again.
    let rm = Rm::new();
    let a = post_as(&rm, URI, "yarn").await;
    expect![[r#"400 BadRequestException: the resource manager runs on its built-in configuration and has no weft-site.xml to read again; start it with --conf DIR"#]]
        .assert_eq(&a.error());
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn groups_are_read_again_from_the_group_file() {
    let dir = TestDir::conf("groups");
    dir.write("groups", "alice: alice staff\n");
    dir.write(
        crate::config::SITE_FILE_NAME,
        &testing::site(&[("weft.rm.groups.file", "groups")]),
    );
    let rm = dir.start();
    const URI: &str = "/ws/v1/cluster/refresh-user-groups";
    assert_eq!(groups_of(&rm, "alice").await, json!(["alice", "staff"]));
    assert_eq!(groups_of(&rm, "nobody").await, json!([]));

    dir.write("groups", "alice: alice ops\nbob: bob\n");
    assert_eq!(post_as(&rm, URI, "bob").await.status, StatusCode::FORBIDDEN);
    // The file still read as at start until an administrator refreshes.
    assert_eq!(groups_of(&rm, "alice").await, json!(["alice", "staff"]));
    let a = post_as(&rm, URI, "yarn").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.json()["refreshUserGroups"]["users"], 2);
    assert_eq!(
        dir.hide(
            a.json()["refreshUserGroups"]["groupsFile"]
                .as_str()
                .unwrap()
        ),
        "<dir>/groups"
    );
    assert_eq!(groups_of(&rm, "alice").await, json!(["alice", "ops"]));

    // A bad file is refused whole, and the groups in force stay.
    dir.write("groups", "alice alice\n");
    let a = post_as(&rm, URI, "yarn").await;
    expect![[r#"
        400 BadRequestException: <dir>/groups: invalid group file: line 1: missing ':' after the user name
        (the groups in force are unchanged)"#]]
    .assert_eq(&dir.hide(&a.error()));
    assert_eq!(groups_of(&rm, "alice").await, json!(["alice", "ops"]));

    // A user name the RM would refuse in user.name is refused here too.
    let a = get(&rm.router, "/ws/v1/cluster/users/a%0Ab/groups").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    rm.stop().await;
}
