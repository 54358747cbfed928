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

/// Placement by primary group, a queue open to one group, and
/// administrators by group, for the tests of groups from the operating
/// system.
const GROUP_ALLOC: &str = r#"<allocations>
  <queue name="root">
    <aclSubmitApps> </aclSubmitApps>
    <aclAdministerApps>yarn</aclAdministerApps>
    <queue name="eng"><aclSubmitApps> eng</aclSubmitApps></queue>
    <queue name="default"><aclSubmitApps>*</aclSubmitApps></queue>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="primaryGroup" create="false"/>
    <rule name="reject"/>
  </queuePlacementPolicy>
</allocations>"#;

#[tokio::test(start_paused = true)]
async fn without_a_group_file_placement_and_acls_use_the_operating_systems_groups() {
    let dir = TestDir::conf("os-groups");
    dir.write("fair-scheduler.xml", GROUP_ALLOC);
    dir.write(
        crate::config::SITE_FILE_NAME,
        &weft_test_support::site_xml(&[
            ("yarn.acl.enable", "true"),
            ("yarn.admin.acl", "yarn admins"),
            ("weft.rm.view-refresh-ms", "0"),
        ]),
    );
    let os = testing::FakeGroups::with(&[("alice", &["eng", "staff"]), ("carol", &["admins"])]);
    let rm = dir.start_with(os.clone());

    // Naming `default` passes the app on to the primaryGroup rule, which
    // puts alice's app in her primary group's queue, open to that group.
    let app = rm.submit("alice", "default").await;
    let a = get(&rm.router, &format!("/ws/v1/cluster/apps/{app}")).await;
    assert_eq!(a.json()["app"]["queue"], "root.eng", "{}", a.body);
    assert_eq!(groups_of(&rm, "alice").await, json!(["eng", "staff"]));
    // Three requests of alice's, one lookup: the answer is cached.
    assert_eq!(os.calls(), 1);

    // bob is unknown to the name service, so has no groups to place by.
    let bob_app = rm.new_app("bob").await;
    let a = rm.submit_to("bob", &bob_app, "default").await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    let a = get(&rm.router, &format!("/ws/v1/cluster/apps/{bob_app}")).await;
    assert_eq!(a.json()["app"]["state"], "FAILED", "{}", a.body);
    assert_eq!(groups_of(&rm, "bob").await, json!([]));

    // A change in the name service shows only once the cache is emptied,
    // which carol may do as a member of the administrators' group.
    os.set("alice", &["ops"]);
    assert_eq!(groups_of(&rm, "alice").await, json!(["eng", "staff"]));
    let a = post_as(&rm, "/ws/v1/cluster/refresh-user-groups", "carol").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    expect![[r#"{"refreshUserGroups":{"groupsFile":null,"users":0,"groupMapping":"org.apache.hadoop.security.JniBasedUnixGroupsMappingWithFallback","cachedUsersCleared":3}}"#]]
        .assert_eq(&a.body);
    assert_eq!(groups_of(&rm, "alice").await, json!(["ops"]));
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_group_file_is_the_whole_mapping() {
    let dir = TestDir::conf("file-groups");
    dir.write("groups", "alice: eng\n");
    dir.write(
        crate::config::SITE_FILE_NAME,
        &testing::site(&[("weft.rm.groups.file", "groups")]),
    );
    let os = testing::FakeGroups::with(&[("bob", &["eng"])]);
    let rm = dir.start_with(os.clone());
    assert_eq!(groups_of(&rm, "alice").await, json!(["eng"]));
    // bob is not in the file, and the name service is not asked.
    assert_eq!(groups_of(&rm, "bob").await, json!([]));
    assert_eq!(os.calls(), 0);
    let a = post_as(&rm, "/ws/v1/cluster/refresh-user-groups", "yarn").await;
    assert_eq!(
        a.json()["refreshUserGroups"]["groupMapping"],
        "weft.rm.groups.file"
    );
    rm.stop().await;
}
