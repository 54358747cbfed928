//! Regression tests for core bugs found while proving the scheduling core
//! (issue 3), each named after what broke, driving the API directly where a
//! scenario file cannot express the setup. The scenario files keep the rest:
//! `node_lost.txt` (an AM lost with its node used to panic),
//! `node_reregister.txt` (a node coming back smaller used to be booked over
//! its capability), `reservation_dropped.txt` (a reservation on a node the
//! app blacklisted blocked it for good).

use weft_core::{
    CoreSettings, Input, NodeRegistration, RecoveredContainer, Reply, ResourceManager, Submission,
};
use weft_model::{AppPriority, AttemptId, ContainerId, NodeId, Priority, Resource, Time};
use weft_queue_tree::alloc_file::parse_alloc_file;

/// Containers a node brings back when the RM starts with a capped queue may
/// put the queue over its max share: that is a fact to accept, not a broken
/// invariant (the check used to relax only after a reload or a node loss).
#[test]
fn issue3_recovered_containers_may_exceed_a_max_share_from_the_start() {
    let config = parse_alloc_file(
        r#"<allocations><queue name="q"><maxResources>2048mb,8vcores</maxResources></queue></allocations>"#,
    )
    .unwrap()
    .config;
    let mut rm = ResourceManager::new(config, CoreSettings::default(), Time::ZERO);
    let Reply::NewApplication(new) = rm.handle(Time::ZERO, Input::NewApplication).reply else {
        panic!("no application id");
    };
    let out = rm.handle(
        Time::ZERO,
        Input::AppSubmitted(Submission {
            app: new.app,
            user: "alice".into(),
            groups: vec![],
            queue: Some("root.q".into()),
            priority: AppPriority(0),
            am_resource: None,
            name: "recovered".into(),
            app_type: "YARN".into(),
            tags: vec![],
        }),
    );
    assert!(matches!(out.reply, Reply::Submitted(Ok(_))), "{out:?}");
    let running = (1..=2)
        .map(|seq| RecoveredContainer {
            container: ContainerId::new(AttemptId::new(new.app, 1), seq),
            resource: Resource::new(2048, 1),
            priority: Priority(1),
        })
        .collect();
    rm.handle(
        Time::ZERO,
        Input::NodeRegistered(NodeRegistration {
            node: NodeId::new("n1", 8041).unwrap(),
            rack: "/r1".into(),
            capability: Resource::new(8192, 8),
            http_address: "n1:8042".into(),
            running,
        }),
    );
    assert_eq!(rm.app_containers(new.app).len(), 2);
    rm.check_invariants().unwrap();
}
