//! Router tests of `/logLevel` over a logging filter that is only its
//! directives: showing and setting a target's level, other targets kept,
//! bad levels and targets refused, administrators only, and the audit line
//! a change leaves.

use std::sync::Arc;

use super::*;
use crate::log_levels::{DirectivesOnly, LogLevels};
use crate::server::Embedding;

/// A service whose logging filter starts as `directives`, and the filter.
fn with_filter(extra: &[(&str, &str)], directives: &str) -> (Rm, Arc<DirectivesOnly>) {
    let config = crate::config::RmConfig::from_texts(&testing::site(extra), testing::ALLOC)
        .expect("the test configuration loads");
    let levels = Arc::new(DirectivesOnly::new(directives));
    let service = Service::start_with(
        config,
        crate::clock::Clock::with_epoch_origin(testing::EPOCH),
        Embedding {
            groups: testing::FakeGroups::with(&[("ops", &["ops", "sre"])]),
            log_levels: Some(levels.clone()),
        },
    )
    .expect("the service starts");
    (Rm::around(service), levels)
}

#[tokio::test(start_paused = true)]
async fn a_targets_level_is_shown_and_set_and_the_others_kept() {
    let (rm, levels) = with_filter(&[], "info,weft_core=warn");
    let a = get(&rm.router, "/logLevel?log=weft_rm::actor&user.name=yarn").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        a.headers["content-type"].to_str().unwrap(),
        "text/plain; charset=utf-8"
    );
    expect![[r#"
        Target: weft_rm::actor
        Effective Level: INFO
        Directives: info,weft_core=warn
    "#]]
    .assert_eq(&a.body);

    let a = get(
        &rm.router,
        "/logLevel?log=weft_rm::actor&level=debug&user.name=yarn",
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    expect![[r#"
        Target: weft_rm::actor
        Submitted Level: debug
        Set Level: DEBUG
        Effective Level: DEBUG
        Directives: info,weft_core=warn,weft_rm::actor=debug
    "#]]
    .assert_eq(&a.body);
    assert_eq!(
        levels.directives(),
        "info,weft_core=warn,weft_rm::actor=debug"
    );

    // log4j's names: FATAL is ERROR; setting a target again replaces it.
    let a = get(
        &rm.router,
        "/logLevel?log=weft_core&level=FATAL&user.name=yarn",
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(
        levels.directives(),
        "info,weft_rm::actor=debug,weft_core=error"
    );
    // A module under a target with a directive has that target's level.
    let a = get(
        &rm.router,
        "/logLevel?log=weft_rm::actor::tick&user.name=yarn",
    )
    .await;
    assert!(a.body.contains("Effective Level: DEBUG\n"), "{}", a.body);

    // The default, by an empty target; ALL is TRACE.
    let a = get(&rm.router, "/logLevel?log=&level=all&user.name=yarn").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    expect![[r#"
        Target: (default)
        Submitted Level: all
        Set Level: TRACE
        Effective Level: TRACE
        Directives: weft_rm::actor=debug,weft_core=error,trace
    "#]]
    .assert_eq(&a.body);

    // No target: every directive and the default's level.
    let a = get(&rm.router, "/logLevel?user.name=yarn").await;
    expect![[r#"
        Directives: weft_rm::actor=debug,weft_core=error,trace
        Default Level: TRACE
    "#]]
    .assert_eq(&a.body);
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn bad_levels_and_targets_are_refused_and_change_nothing() {
    let (rm, levels) = with_filter(&[], "info");
    for (uri, message) in [
        (
            "/logLevel?log=weft_rm&level=verbose",
            "400 BadRequestException: level \"verbose\" is not a level: use one of TRACE, DEBUG, INFO, WARN, ERROR, OFF (or log4j's ALL and FATAL), in any case",
        ),
        (
            "/logLevel?log=weft_rm&level=",
            "400 BadRequestException: level \"\" is not a level: use one of TRACE, DEBUG, INFO, WARN, ERROR, OFF (or log4j's ALL and FATAL), in any case",
        ),
        (
            "/logLevel?log=weft_rm%3Ddebug%2Chyper&level=info",
            "400 BadRequestException: target \"weft_rm=debug,hyper\" is not a module path: use letters, digits and _ in segments joined by :: (weft_rm::actor), or nothing for the default",
        ),
        (
            "/logLevel?log=org.apache.hadoop.yarn.server.resourcemanager.ResourceManager",
            "400 BadRequestException: target \"org.apache.hadoop.yarn.server.resourcemanager.ResourceManager\" looks like a Java class name; Weft's targets are Rust module paths such as weft_rm::actor or weft_core",
        ),
        (
            "/logLevel?level=debug",
            "400 BadRequestException: level= needs log= too: the target to set (a module path such as weft_rm::actor, or empty for the default)",
        ),
    ] {
        let a = get(&rm.router, &format!("{uri}&user.name=yarn")).await;
        assert_eq!(a.error(), message, "{uri}");
    }
    let a = get(&rm.router, "/logLevel?log=a&log=b&user.name=yarn").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    assert_eq!(levels.directives(), "info");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn only_administrators_may_read_or_set_with_acls_on() {
    let (rm, levels) = with_filter(&[("yarn.admin.acl", "yarn sre")], "info");
    for uri in [
        "/logLevel?log=weft_rm&level=debug&user.name=bob",
        "/logLevel?log=weft_rm&user.name=bob",
    ] {
        let a = get(&rm.router, uri).await;
        expect![[r#"403 ForbiddenException: user bob is not a cluster administrator (yarn.admin.acl) and may not read or set log levels"#]]
            .assert_eq(&a.error());
    }
    let a = get(&rm.router, "/logLevel?log=weft_rm&level=debug").await;
    expect![[r#"403 ForbiddenException: an anonymous caller may not read or set log levels while yarn.acl.enable is on: add ?user.name=<an administrator>"#]]
        .assert_eq(&a.error());
    assert_eq!(levels.directives(), "info");
    // A member of an administering group may.
    let a = get(
        &rm.router,
        "/logLevel?log=weft_rm&level=debug&user.name=ops",
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(levels.directives(), "info,weft_rm=debug");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn with_acls_off_anyone_may() {
    let (rm, levels) = with_filter(&[("yarn.acl.enable", "false")], "info");
    let a = get(&rm.router, "/logLevel?log=weft_rm&level=warn").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(levels.directives(), "info,weft_rm=warn");
    rm.stop().await;
}

#[tokio::test(start_paused = true)]
async fn changes_and_refused_changes_are_audited_reads_are_not() {
    let path = std::env::temp_dir().join(format!("weft-audit-loglevel-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let (rm, _) = with_filter(
        &[("weft.rm.audit-log.file", &path.display().to_string())],
        "info",
    );
    get(&rm.router, "/logLevel?log=weft_rm&user.name=yarn").await;
    get(
        &rm.router,
        "/logLevel?log=weft_rm&level=debug&user.name=yarn",
    )
    .await;
    get(
        &rm.router,
        "/logLevel?log=weft_rm&level=debug&user.name=bob",
    )
    .await;
    get(
        &rm.router,
        "/logLevel?log=weft_rm&level=loud&user.name=yarn",
    )
    .await;
    rm.stop().await;
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    expect![[r#"
        USER=yarn	OPERATION=setLogLevel	TARGET=LogLevel	RESULT=SUCCESS
        USER=bob	OPERATION=setLogLevel	TARGET=LogLevel	RESULT=FAILURE	DESCRIPTION=403: user bob is not a cluster administrator (yarn.admin.acl) and may not read or set log levels	PERMISSIONS=
        USER=yarn	OPERATION=setLogLevel	TARGET=LogLevel	RESULT=FAILURE	DESCRIPTION=400: level "loud" is not a level: use one of TRACE, DEBUG, INFO, WARN, ERROR, OFF (or log4j's ALL and FATAL), in any case	PERMISSIONS=
    "#]]
    .assert_eq(&text);
    std::fs::remove_file(&path).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_service_without_a_filter_says_so() {
    let config = crate::config::RmConfig::from_texts(&testing::site(&[]), testing::ALLOC)
        .expect("the test configuration loads");
    let service = Service::start_with(
        config,
        crate::clock::Clock::with_epoch_origin(testing::EPOCH),
        Embedding {
            groups: testing::FakeGroups::with(&[]),
            log_levels: None,
        },
    )
    .expect("the service starts");
    let rm = Rm::around(service);
    let a = get(&rm.router, "/logLevel?log=weft_rm&user.name=yarn").await;
    expect![[r#"404 NotFoundException: this process's log levels cannot be changed while it runs: it was started without a reloadable logging filter (weft rm, weft nm and weft local have one)"#]]
        .assert_eq(&a.error());
    rm.stop().await;
}
