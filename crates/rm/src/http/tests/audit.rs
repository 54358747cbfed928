//! Router tests of the audit log: which requests leave a line, in Hadoop's
//! format, with the caller, the app or node, and why a refusal was one;
//! and the line each application's end leaves.

use super::*;

/// The audit lines written so far, one string per line.
fn lines(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn changes_and_their_refusals_are_audited_reads_are_not() {
    let path = std::env::temp_dir().join(format!("weft-audit-router-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let rm = Rm::with(&[("weft.rm.audit-log.file", &path.display().to_string())]);
    rm.register("h1:8041", 8192, 8).await;
    let app = rm.running("alice", "a", "h1:8041", 0).await;
    // Reads leave nothing.
    get(&rm.router, "/ws/v1/cluster/apps").await;
    get(&rm.router, &format!("/ws/v1/cluster/apps/{app}")).await;
    // A refusal, then the kill itself.
    assert_eq!(rm.kill(&app, "bob").await.status, StatusCode::FORBIDDEN);
    assert!(rm.kill(&app, "alice").await.status.is_success());
    let refresh = call(
        &rm.router,
        Method::POST,
        "/ws/v1/cluster/refresh-queues?user.name=bob",
        None,
        "",
        &[],
    )
    .await;
    assert_eq!(refresh.status, StatusCode::FORBIDDEN);
    let resize = post(
        &rm.router,
        "/ws/v1/cluster/nodes/h1:8041/resource?user.name=yarn",
        json!({"resourceOption": {"resource": {"memory": 4096, "vCores": 4}}}),
    )
    .await;
    assert_eq!(resize.status, StatusCode::OK, "{}", resize.body);
    rm.stop().await;

    let text = lines(&path).replace(&app, "<app>");
    expect![[r#"
        USER=alice	OPERATION=Get New Application Request	TARGET=ClientRMService	RESULT=SUCCESS
        USER=alice	OPERATION=Submit Application Request	TARGET=ClientRMService	RESULT=SUCCESS	APPID=<app>
        USER=alice	OPERATION=Register App Master	TARGET=ApplicationMasterService	RESULT=SUCCESS	APPID=<app>
        USER=bob	OPERATION=Kill Application Request	TARGET=ClientRMService	RESULT=FAILURE	DESCRIPTION=403: user bob may not kill application <app> in queue root.a: only its owner, a user its MODIFY_APP ACL names, an administrator of its queue or a cluster administrator (yarn.admin.acl) may	PERMISSIONS=	APPID=<app>
        USER=alice	OPERATION=Application Finished - Killed	TARGET=RMAppManager	RESULT=FAILURE	DESCRIPTION=killed by user alice	PERMISSIONS=	APPID=<app>
        USER=alice	OPERATION=Kill Application Request	TARGET=ClientRMService	RESULT=SUCCESS	APPID=<app>
        USER=bob	OPERATION=refreshQueues	TARGET=AdminService	RESULT=FAILURE	DESCRIPTION=403: user bob is not a cluster administrator (yarn.admin.acl) and may not refresh the queues	PERMISSIONS=
        USER=yarn	OPERATION=updateNodeResource	TARGET=AdminService	RESULT=SUCCESS	NODEID=h1:8041
    "#]]
    .assert_eq(&text);
    std::fs::remove_file(&path).unwrap();
}
