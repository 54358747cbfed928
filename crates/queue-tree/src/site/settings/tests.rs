//! Tests of `SchedulerSettings`: Hadoop's defaults, every property read,
//! aliases and warnings, every class of error, and the derived views.

use expect_test::{Expect, expect};

use super::*;
use crate::site::parse_site_file;

use weft_test_support::site_xml as site;

fn settings(pairs: &[(&str, &str)]) -> (SchedulerSettings, Vec<SiteWarning>) {
    parse_site_file(&site(pairs)).unwrap_or_else(|err| panic!("{err}"))
}

/// Renders the warnings, or the error, of reading `pairs`.
fn check(pairs: &[(&str, &str)], expect: Expect) {
    let rendered = match parse_site_file(&site(pairs)) {
        Ok((_, warnings)) => warnings
            .iter()
            .map(|w| format!("warning: {w}\n"))
            .collect::<String>(),
        Err(err) => format!("{err}\n"),
    };
    expect.assert_eq(&rendered);
}

#[test]
fn defaults_are_hadoops() {
    let (s, warnings) = settings(&[]);
    assert!(warnings.is_empty());
    assert_eq!(s, SchedulerSettings::default());
    assert_eq!(s.allocation_file, "fair-scheduler.xml");
    assert!(s.user_as_default_queue);
    assert!(s.allow_undeclared_pools);
    assert!(!s.preemption);
    assert!(!s.preemption_dry_run);
    assert_eq!(s.preemption_model, PreemptionModel::Current);
    assert_eq!(s.preemption_utilization_threshold.get(), 0.8);
    assert_eq!(s.wait_time_before_kill, Duration::from_millis(15_000));
    assert_eq!(
        s.wait_time_before_next_starvation_check,
        Duration::from_millis(10_000)
    );
    assert!(s.am_preemption_default);
    assert!(s.am_preemption.is_empty());
    assert_eq!(s.update_interval, Duration::from_millis(500));
    assert!(!s.assign_multiple);
    assert!(s.dynamic_max_assign);
    assert_eq!(s.max_assign, MaxAssign::Unlimited);
    assert!(!s.size_based_weight);
    assert_eq!(s.locality_threshold_node, LocalityThreshold::Disabled);
    assert_eq!(s.locality_threshold_rack, LocalityThreshold::Disabled);
    assert!(!s.continuous_scheduling);
    assert_eq!(s.continuous_scheduling_sleep, Duration::from_millis(5));
    assert_eq!(s.locality_delay_node, LocalityDelay::Disabled);
    assert_eq!(s.locality_delay_rack, LocalityDelay::Disabled);
    assert_eq!(s.reservable_nodes.get(), 0.05);
    assert_eq!(s.reservation_threshold_multiple, 2.0);
    assert_eq!(s.min_allocation(), Resource::new(1024, 1));
    assert_eq!(s.max_allocation(), Resource::new(8192, 4));
    assert_eq!(s.increment(), Resource::new(1024, 1));
    assert!(!s.include_port_in_node_name);
    assert!(!s.acl_enable);
    assert_eq!(s.admin_acl, Acl::everyone());
    assert_eq!(s.max_app_priority, AppPriority(0));
    assert_eq!(s.node_heartbeat_interval, Duration::from_millis(1_000));
    assert_eq!(s.nm_liveness_expiry, Duration::from_millis(600_000));
    assert_eq!(s.am_liveness_expiry, Duration::from_millis(600_000));
    // Derived values the reference spells out.
    assert_eq!(s.reservation_threshold(), Resource::new(2048, 2));
    assert_eq!(s.starvation_recheck_delay(), Duration::from_millis(29_000));
    assert_eq!(s.heartbeat_assignment(), HeartbeatAssignment::One);
    assert_eq!(s.locality_relaxation(), LocalityRelaxation::Immediate);
}

#[test]
fn every_property_is_read() {
    let (s, warnings) = settings(&[
        (
            "yarn.scheduler.fair.allocation.file",
            " /etc/weft/fair.xml ",
        ),
        ("yarn.scheduler.fair.user-as-default-queue", "false"),
        ("yarn.scheduler.fair.allow-undeclared-pools", "FALSE"),
        ("yarn.scheduler.fair.preemption", "true"),
        ("yarn.scheduler.fair.preemption.dry-run", "true"),
        ("yarn.scheduler.fair.preemption.model", "classic"),
        (
            "yarn.scheduler.fair.preemption.cluster-utilization-threshold",
            "0.5",
        ),
        ("yarn.scheduler.fair.waitTimeBeforeKill", "3000"),
        ("yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck", "0"),
        ("yarn.scheduler.fair.am.preemption", "false"),
        ("yarn.scheduler.fair.am.preemption.root.prod", "true"),
        ("yarn.scheduler.fair.am.preemption.eng.batch", "false"),
        ("yarn.scheduler.fair.update-interval-ms", "250"),
        ("yarn.scheduler.fair.assignmultiple", "true"),
        ("yarn.scheduler.fair.dynamic.max.assign", "false"),
        ("yarn.scheduler.fair.max.assign", "3"),
        ("yarn.scheduler.fair.sizebasedweight", "true"),
        ("yarn.scheduler.fair.locality.threshold.node", "0.5"),
        ("yarn.scheduler.fair.locality.threshold.rack", "0.6f"),
        ("yarn.scheduler.fair.continuous-scheduling-enabled", "false"),
        ("yarn.scheduler.fair.continuous-scheduling-sleep-ms", "10"),
        ("yarn.scheduler.fair.locality-delay-node-ms", "2000"),
        ("yarn.scheduler.fair.locality-delay-rack-ms", "4000"),
        ("yarn.scheduler.fair.reservable-nodes", "0.1"),
        (
            "yarn.scheduler.reservation-threshold.increment-multiple",
            "1.5",
        ),
        ("yarn.scheduler.minimum-allocation-mb", "512"),
        ("yarn.scheduler.minimum-allocation-vcores", "0"),
        ("yarn.scheduler.maximum-allocation-mb", "0x4000"),
        ("yarn.scheduler.maximum-allocation-vcores", "16"),
        (
            "yarn.resource-types.memory-mb.increment-allocation",
            "512 Mi",
        ),
        ("yarn.resource-types.vcores.increment-allocation", "2"),
        ("yarn.scheduler.include-port-in-node-name", "true"),
        ("yarn.acl.enable", "true"),
        ("yarn.admin.acl", "alice admins"),
        ("yarn.cluster.max-application-priority", "10"),
        (
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "3000",
        ),
        ("yarn.nm.liveness-monitor.expiry-interval-ms", "60000"),
        ("yarn.am.liveness-monitor.expiry-interval-ms", "90000"),
        ("weft.http.address", "0.0.0.0:8088"),
        ("yarn.resourcemanager.hostname", "rm1"),
    ]);
    assert!(warnings.is_empty(), "{warnings:?}");
    expect![[r#"
        SchedulerSettings {
            allocation_file: "/etc/weft/fair.xml",
            user_as_default_queue: false,
            allow_undeclared_pools: false,
            preemption: true,
            preemption_dry_run: true,
            preemption_model: Classic,
            preemption_utilization_threshold: Fraction(
                0.5,
            ),
            wait_time_before_kill: Duration(
                3000,
            ),
            wait_time_before_next_starvation_check: Duration(
                0,
            ),
            am_preemption_default: false,
            am_preemption: {
                "root.eng.batch": false,
                "root.prod": true,
            },
            update_interval: Duration(
                250,
            ),
            assign_multiple: true,
            dynamic_max_assign: false,
            max_assign: AtMost(
                3,
            ),
            size_based_weight: true,
            locality_threshold_node: Nodes(
                Fraction(
                    0.5,
                ),
            ),
            locality_threshold_rack: Nodes(
                Fraction(
                    0.6,
                ),
            ),
            continuous_scheduling: false,
            continuous_scheduling_sleep: Duration(
                10,
            ),
            locality_delay_node: After(
                Duration(
                    2000,
                ),
            ),
            locality_delay_rack: After(
                Duration(
                    4000,
                ),
            ),
            reservable_nodes: Fraction(
                0.1,
            ),
            reservation_threshold_multiple: 1.5,
            allocation: AllocationLimits {
                min: <memory:512, vCores:0>,
                max: <memory:16384, vCores:16>,
                increment: <memory:512, vCores:2>,
            },
            include_port_in_node_name: true,
            acl_enable: true,
            admin_acl: Acl {
                everyone: false,
                users: {
                    "alice",
                },
                groups: {
                    "admins",
                },
            },
            max_app_priority: AppPriority(
                10,
            ),
            node_heartbeat_interval: Duration(
                3000,
            ),
            nm_liveness_expiry: Duration(
                60000,
            ),
            am_liveness_expiry: Duration(
                90000,
            ),
        }
    "#]]
    .assert_debug_eq(&s);
    assert!(s.am_preemption_enabled(&QueuePath::parse("root.prod").unwrap()));
    assert!(!s.am_preemption_enabled(&QueuePath::parse("root.eng.batch").unwrap()));
    // Not inherited: a child of a configured queue uses the global default.
    assert!(!s.am_preemption_enabled(&QueuePath::parse("root.prod.child").unwrap()));
    assert_eq!(
        s.heartbeat_assignment(),
        HeartbeatAssignment::AtMost(MaxAssign::AtMost(NonZeroU32::new(3).unwrap()))
    );
    assert_eq!(s.reservation_threshold(), Resource::new(768, 3));
    assert_eq!(
        s.normalize(Resource::new(700, 1), Resource::UNBOUNDED),
        Resource::new(1024, 2)
    );
    assert_eq!(
        s.preemption_allocation_delay(),
        Duration::from_millis(12_000)
    );
}

#[test]
fn every_class_of_error_in_one_pass() {
    check(
        &[
            ("yarn.scheduler.fair.preemption", "yes"),
            ("yarn.scheduler.fair.waitTimeBeforeKill", "15s"),
            (
                "yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck",
                "-1",
            ),
            (
                "yarn.scheduler.fair.preemption.cluster-utilization-threshold",
                "80",
            ),
            ("yarn.scheduler.fair.reservable-nodes", "NaN"),
            ("yarn.scheduler.fair.update-interval-ms", "0"),
            ("yarn.scheduler.fair.continuous-scheduling-sleep-ms", "0"),
            ("yarn.scheduler.fair.max.assign", "99999999999"),
            ("yarn.scheduler.fair.locality.threshold.node", "half"),
            ("yarn.scheduler.fair.locality-delay-rack-ms", "1.5"),
            (
                "yarn.scheduler.reservation-threshold.increment-multiple",
                "-2",
            ),
            ("yarn.scheduler.fair.am.preemption.root..a", "false"),
            ("yarn.scheduler.fair.am.preemption.root.b", "nope"),
            ("yarn.scheduler.minimum-allocation-mb", "-1"),
            ("yarn.scheduler.maximum-allocation-vcores", "four"),
            ("yarn.resource-types.memory-mb.increment-allocation", "1 Xi"),
            ("yarn.resource-types.vcores.increment-allocation", "1.5"),
            (
                "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
                "0",
            ),
            ("yarn.nm.liveness-monitor.expiry-interval-ms", "-5"),
            ("yarn.scheduler.include-port-in-node-name", ""),
        ],
        expect![[r#"
            the site configuration has 20 problems:
              line 2, column 54: property yarn.scheduler.fair.preemption: "yes" is not a boolean (true or false)
              line 3, column 62: property yarn.scheduler.fair.waitTimeBeforeKill: "15s" is not an integer
              line 4, column 77: property yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck: -1 is out of range: must not be negative
              line 5, column 84: property yarn.scheduler.fair.preemption.cluster-utilization-threshold: 80 is out of range: must be between 0 and 1
              line 6, column 60: property yarn.scheduler.fair.reservable-nodes: "NaN" is not a number
              line 7, column 62: property yarn.scheduler.fair.update-interval-ms: 0 is out of range: must be positive
              line 8, column 74: property yarn.scheduler.fair.continuous-scheduling-sleep-ms: 0 is out of range: must be positive
              line 9, column 54: property yarn.scheduler.fair.max.assign: 99999999999 is out of range: must fit in 32 bits
              line 10, column 67: property yarn.scheduler.fair.locality.threshold.node: "half" is not a number
              line 11, column 66: property yarn.scheduler.fair.locality-delay-rack-ms: "1.5" is not an integer
              line 12, column 79: property yarn.scheduler.reservation-threshold.increment-multiple: -2 is out of range: must not be negative
              line 13, column 65: property yarn.scheduler.fair.am.preemption.root..a: invalid queue name "root..a": it has an empty component (a leading, trailing or doubled '.')
              line 14, column 64: property yarn.scheduler.fair.am.preemption.root.b: "nope" is not a boolean (true or false)
              line 15, column 60: property yarn.scheduler.minimum-allocation-mb: -1 is out of range: must not be negative
              line 16, column 64: property yarn.scheduler.maximum-allocation-vcores: "four" is not an integer
              line 17, column 74: property yarn.resource-types.memory-mb.increment-allocation: "1 Xi" is not an amount with a known unit (k, M, G, T, P, Ki, Mi, Gi, Ti, Pi...)
              line 18, column 71: property yarn.resource-types.vcores.increment-allocation: "1.5" is not a whole amount with an optional unit (for example 1024, 512 Mi or 1 Gi)
              line 19, column 79: property yarn.resourcemanager.nodemanagers.heartbeat-interval-ms: 0 is out of range: must be positive
              line 20, column 67: property yarn.nm.liveness-monitor.expiry-interval-ms: -5 is out of range: must be positive
              line 21, column 64: property yarn.scheduler.include-port-in-node-name: "" is not a boolean (true or false)
        "#]],
    );
}

#[test]
fn the_priority_cap_lowers_only_what_is_above_it() {
    let (s, _) = settings(&[("yarn.cluster.max-application-priority", "-2")]);
    assert_eq!(s.max_app_priority, AppPriority(-2));
    assert_eq!(s.cap_app_priority(AppPriority(5)), AppPriority(-2));
    assert_eq!(s.cap_app_priority(AppPriority(-7)), AppPriority(-7));
    let d = SchedulerSettings::default();
    assert_eq!(d.cap_app_priority(AppPriority(64)), AppPriority(0));
    assert_eq!(
        d.cap_app_priority(AppPriority(i32::MIN)),
        AppPriority(i32::MIN)
    );
    check(
        &[("yarn.cluster.max-application-priority", "high")],
        expect![[r#"
            the site configuration has 1 problem:
              line 2, column 61: property yarn.cluster.max-application-priority: "high" is not an integer
        "#]],
    );
    check(
        &[("yarn.cluster.max-application-priority", "4294967296")],
        expect![[r#"
            the site configuration has 1 problem:
              line 2, column 61: property yarn.cluster.max-application-priority: 4294967296 is out of range: must fit in 32 bits
        "#]],
    );
}

#[test]
fn inconsistent_allocation_limits() {
    check(
        &[
            ("yarn.scheduler.minimum-allocation-mb", "4096"),
            ("yarn.scheduler.maximum-allocation-mb", "2048"),
            ("yarn.scheduler.minimum-allocation-vcores", "8"),
            ("yarn.resource-types.memory-mb.increment-allocation", "1 k"),
            ("yarn.scheduler.increment-allocation-vcores", "0"),
        ],
        expect![[r#"
            the site configuration has 4 problems:
              line 3, column 60: the minimum allocation of memory-mb is above the maximum: yarn.scheduler.minimum-allocation-mb = 4096 > yarn.scheduler.maximum-allocation-mb = 2048
              line 4, column 64: the minimum allocation of vcores is above the maximum: yarn.scheduler.minimum-allocation-vcores = 8 > yarn.scheduler.maximum-allocation-vcores = 4
              line 5, column 74: property yarn.resource-types.memory-mb.increment-allocation: 1 k is out of range: must be positive once converted to the resource's unit
              line 6, column 66: property yarn.scheduler.increment-allocation-vcores: 0 is out of range: must be positive
        "#]],
    );
    // Only the maximum set: the location is the maximum's.
    check(
        &[("yarn.scheduler.maximum-allocation-vcores", "0")],
        expect![[r#"
            the site configuration has 1 problem:
              line 2, column 64: the minimum allocation of vcores is above the maximum: yarn.scheduler.minimum-allocation-vcores = 1 > yarn.scheduler.maximum-allocation-vcores = 0
        "#]],
    );
}

#[test]
fn increments_with_units_and_deprecated_names() {
    let cases: &[&[(&str, &str)]] = &[
        &[("yarn.resource-types.memory-mb.increment-allocation", "1 Gi")],
        &[("yarn.resource-types.memory-mb.increment-allocation", "256")],
        &[("yarn.resource-types.memory-mb.increment-allocation", "1 G")],
        &[("yarn.resource-types.vcores.increment-allocation", "1k")],
        &[("yarn.scheduler.increment-allocation-mb", "512")],
        &[
            ("yarn.scheduler.increment-allocation-mb", "7"),
            ("yarn.resource-types.memory-mb.increment-allocation", "13"),
        ],
        &[
            ("yarn.scheduler.increment-allocation-vcores", "7"),
            ("yarn.resource-types.vcores.increment-allocation", "13"),
        ],
    ];
    let mut out = String::new();
    for pairs in cases {
        let (s, warnings) = settings(pairs);
        let set: Vec<String> = pairs.iter().map(|(n, v)| format!("{n}={v}")).collect();
        out.push_str(&format!("{} -> {}\n", set.join(" "), s.increment()));
        for w in warnings {
            out.push_str(&format!("  warning: {w}\n"));
        }
    }
    expect![[r#"
        yarn.resource-types.memory-mb.increment-allocation=1 Gi -> <memory:1024, vCores:1>
        yarn.resource-types.memory-mb.increment-allocation=256 -> <memory:256, vCores:1>
        yarn.resource-types.memory-mb.increment-allocation=1 G -> <memory:953, vCores:1>
        yarn.resource-types.vcores.increment-allocation=1k -> <memory:1024, vCores:1000>
        yarn.scheduler.increment-allocation-mb=512 -> <memory:512, vCores:1>
          warning: line 2, column 62: yarn.scheduler.increment-allocation-mb is deprecated; use yarn.resource-types.memory-mb.increment-allocation
        yarn.scheduler.increment-allocation-mb=7 yarn.resource-types.memory-mb.increment-allocation=13 -> <memory:13, vCores:1>
          warning: line 2, column 62: yarn.scheduler.increment-allocation-mb is ignored because yarn.resource-types.memory-mb.increment-allocation is also set
        yarn.scheduler.increment-allocation-vcores=7 yarn.resource-types.vcores.increment-allocation=13 -> <memory:1024, vCores:13>
          warning: line 2, column 66: yarn.scheduler.increment-allocation-vcores is ignored because yarn.resource-types.vcores.increment-allocation is also set
    "#]].assert_eq(&out);
}

#[test]
fn mrv1_names_are_deprecated_aliases() {
    let (s, _) = settings(&[
        ("mapred.fairscheduler.allocation.file", "/etc/pools.xml"),
        ("mapred.fairscheduler.preemption", "true"),
        ("mapred.fairscheduler.preemption.only.log", "true"),
        ("mapred.fairscheduler.sizebasedweight", "true"),
        ("mapred.fairscheduler.update.interval", "1000"),
        ("mapred.fairscheduler.assignmultiple", "true"),
        ("mapred.fairscheduler.allow.undeclared.pools", "false"),
        ("mapred.fairscheduler.locality.delay", "3000"),
    ]);
    assert_eq!(s.allocation_file, "/etc/pools.xml");
    assert!(s.preemption);
    assert!(s.preemption_dry_run);
    assert!(s.size_based_weight);
    assert_eq!(s.update_interval, Duration::from_millis(1000));
    assert!(s.assign_multiple);
    assert!(!s.allow_undeclared_pools);
    assert_eq!(
        s.locality_delay_node,
        LocalityDelay::After(Duration::from_millis(3000))
    );
    assert_eq!(
        s.locality_delay_rack,
        LocalityDelay::After(Duration::from_millis(3000))
    );
    check(
        &[
            ("mapred.fairscheduler.preemption", "true"),
            ("mapred.fairscheduler.preemption.only.log", "true"),
            ("mapred.fairscheduler.locality.delay", "3000"),
            ("mapred.fairscheduler.locality.delay.nodelocal", "1000"),
            ("mapred.fairscheduler.sizebasedweight", "true"),
            ("yarn.scheduler.fair.sizebasedweight", "false"),
            ("mapred.fairscheduler.poolnameproperty", "group.name"),
            ("mapred.fairscheduler.weightadjuster", "org.example.Booster"),
            ("mapred.newjobweightbooster.factor", "3"),
            ("mapred.fairscheduler.loadmanager", "org.example.Load"),
            ("mapred.fairscheduler.taskselector", "org.example.Select"),
            ("mapred.fairscheduler.eventlog.enabled", "true"),
            ("mapred.fairscheduler.preemption.interval", "15000"),
            ("mapred.fairscheduler.mapsperheartbeat", "2"),
            (
                "mapred.jobtracker.taskScheduler",
                "org.apache.hadoop.mapred.FairScheduler",
            ),
        ],
        expect![[r#"
            warning: line 2, column 55: mapred.fairscheduler.preemption is deprecated; use yarn.scheduler.fair.preemption
            warning: line 3, column 64: mapred.fairscheduler.preemption.only.log is deprecated; use yarn.scheduler.fair.preemption.dry-run
            warning: line 4, column 59: mapred.fairscheduler.locality.delay is deprecated; use yarn.scheduler.fair.locality-delay-rack-ms
            warning: line 5, column 69: mapred.fairscheduler.locality.delay.nodelocal is deprecated; use yarn.scheduler.fair.locality-delay-node-ms
            warning: line 6, column 60: mapred.fairscheduler.sizebasedweight is ignored because yarn.scheduler.fair.sizebasedweight is also set
            warning: line 8, column 61: mapred.fairscheduler.poolnameproperty is ignored: YARN places apps with the allocation file's placement rules
            warning: line 9, column 59: mapred.fairscheduler.weightadjuster is ignored: pluggable weight adjusters are not supported
            warning: line 10, column 57: mapred.newjobweightbooster.factor is ignored: pluggable weight adjusters are not supported
            warning: line 11, column 56: mapred.fairscheduler.loadmanager is ignored: a node's capacity is what it registers with
            warning: line 12, column 57: mapred.fairscheduler.taskselector is ignored: requests carry their own locality and there is no speculative-task selection
            warning: line 13, column 61: mapred.fairscheduler.eventlog.enabled is ignored: the scheduler event log is not supported: decisions are reported as events
            warning: line 14, column 64: mapred.fairscheduler.preemption.interval is ignored: starvation is checked on every update pass
            warning: line 15, column 61: mapred.fairscheduler.mapsperheartbeat is ignored: it is an MRv1 setting with no meaning in YARN
        "#]],
    );
    // MRv1's single delay feeds both levels; -1 (MRv1: "derive from the
    // heartbeat interval") is YARN's "disabled".
    check(
        &[("mapred.fairscheduler.locality.delay", "-1")],
        expect![[r#"
            warning: line 2, column 59: mapred.fairscheduler.locality.delay is deprecated; use yarn.scheduler.fair.locality-delay-node-ms and yarn.scheduler.fair.locality-delay-rack-ms
        "#]],
    );
    let (s, _) = settings(&[("mapred.fairscheduler.locality.delay", "-1")]);
    assert_eq!(s.locality_relaxation(), LocalityRelaxation::Immediate);
    // The YARN name wins over its alias.
    let (s, _) = settings(&[
        ("mapred.fairscheduler.sizebasedweight", "true"),
        ("yarn.scheduler.fair.sizebasedweight", "false"),
    ]);
    assert!(!s.size_based_weight);
}

#[test]
fn scheduler_names_nobody_reads_are_flagged() {
    check(
        &[
            ("yarn.scheduler.fair.preemtion", "true"),
            ("yarn.scheduler.fair.assignMultiple", "true"),
            ("yarn.scheduler.fair.preemptionInterval", "5000"),
            ("yarn.scheduler.fair.event-log-enabled", "true"),
            ("yarn.scheduler.fair.migration.mode", "true"),
            ("yarn.scheduler.fair.no-terminal-rule.check", "true"),
            ("yarn.scheduler.fair.continuous-scheduling-enabled", "true"),
            ("yarn.scheduler.fair.update-interval-ms", "-1"),
            ("yarn.scheduler.fair.locality.threshold.node", "1.5"),
            ("yarn.scheduler.capacity.root.queues", "a,b"),
            ("yarn.nodemanager.resource.memory-mb", "8192"),
            ("weft.anything", "x"),
        ],
        expect![[r#"
            warning: line 2, column 53: unknown scheduler property yarn.scheduler.fair.preemtion (a typo?) is ignored
            warning: line 3, column 58: unknown scheduler property yarn.scheduler.fair.assignMultiple (a typo?) is ignored
            warning: line 4, column 62: yarn.scheduler.fair.preemptionInterval is ignored: Hadoop 2.x's preemption interval is gone: starvation is checked on every update pass
            warning: line 5, column 61: yarn.scheduler.fair.event-log-enabled is ignored: the scheduler event log is not supported: decisions are reported as events
            warning: line 6, column 58: yarn.scheduler.fair.migration.mode is ignored: it is internal to Hadoop's Fair-to-Capacity Scheduler converter
            warning: line 7, column 66: yarn.scheduler.fair.no-terminal-rule.check is ignored: it is internal to Hadoop's Fair-to-Capacity Scheduler converter
            warning: line 8, column 73: yarn.scheduler.fair.continuous-scheduling-enabled is deprecated: Hadoop deprecates continuous scheduling, and Weft schedules on node heartbeats only (the flag makes only the time-based locality delays count); prefer yarn.scheduler.fair.assignmultiple
            warning: line 9, column 62: yarn.scheduler.fair.update-interval-ms = -1 is negative; the default 500ms is used
            warning: line 10, column 67: yarn.scheduler.fair.locality.threshold.node = 1.5 is above 1 and counts as 1
        "#]],
    );
}

#[test]
fn continuous_scheduling_keeps_the_heartbeat_allocation_delay() {
    // Weft has no continuous-scheduling timer, so freed room waits for the
    // node's next heartbeat: Hadoop's 10 × 5 ms window would end before it.
    let (s, _) = settings(&[
        ("yarn.scheduler.fair.continuous-scheduling-enabled", "true"),
        (
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "1000",
        ),
    ]);
    assert!(s.continuous_scheduling);
    assert_eq!(
        s.preemption_allocation_delay(),
        Duration::from_millis(4_000)
    );
}

#[test]
fn negative_update_interval_means_default() {
    let (s, _) = settings(&[("yarn.scheduler.fair.update-interval-ms", "-100")]);
    assert_eq!(s.update_interval, Duration::from_millis(500));
}

#[test]
fn heartbeat_assignment_follows_the_three_flags() {
    let mut out = String::new();
    for (multiple, dynamic, max) in [
        ("false", "true", "-1"),
        ("false", "false", "5"),
        ("true", "true", "5"),
        ("true", "false", "5"),
        ("true", "false", "0"),
        ("true", "false", "-1"),
    ] {
        let (s, _) = settings(&[
            ("yarn.scheduler.fair.assignmultiple", multiple),
            ("yarn.scheduler.fair.dynamic.max.assign", dynamic),
            ("yarn.scheduler.fair.max.assign", max),
        ]);
        out.push_str(&format!(
            "assignmultiple={multiple} dynamic={dynamic} max={max} -> {:?}\n",
            s.heartbeat_assignment()
        ));
    }
    expect![[r#"
        assignmultiple=false dynamic=true max=-1 -> One
        assignmultiple=false dynamic=false max=5 -> One
        assignmultiple=true dynamic=true max=5 -> HalfOfUnallocated
        assignmultiple=true dynamic=false max=5 -> AtMost(AtMost(5))
        assignmultiple=true dynamic=false max=0 -> AtMost(Unlimited)
        assignmultiple=true dynamic=false max=-1 -> AtMost(Unlimited)
    "#]]
    .assert_eq(&out);
}

#[test]
fn locality_relaxation_combines_both_forms() {
    let mut out = String::new();
    // (node threshold, rack threshold, node delay, rack delay, continuous)
    for (tn, tr, dn, dr, cont) in [
        ("-1", "-1", "-1", "-1", "false"),
        ("0.5", "0.6", "-1", "-1", "false"),
        ("0.5", "-1", "-1", "-1", "false"),
        ("2", "1", "-1", "-1", "false"),
        ("-1", "-1", "1000", "2000", "false"),
        ("0.5", "0.6", "1000", "2000", "false"),
        ("0.5", "0.6", "1000", "2000", "true"),
        ("0.5", "0.6", "-1", "2000", "true"),
        ("0", "0", "0", "0", "false"),
    ] {
        let (s, _) = settings(&[
            ("yarn.scheduler.fair.locality.threshold.node", tn),
            ("yarn.scheduler.fair.locality.threshold.rack", tr),
            ("yarn.scheduler.fair.locality-delay-node-ms", dn),
            ("yarn.scheduler.fair.locality-delay-rack-ms", dr),
            ("yarn.scheduler.fair.continuous-scheduling-enabled", cont),
        ]);
        out.push_str(&format!(
            "thresholds {tn}/{tr} delays {dn}/{dr} continuous={cont} -> {:?}\n",
            s.locality_relaxation()
        ));
    }
    expect![[r#"
        thresholds -1/-1 delays -1/-1 continuous=false -> Immediate
        thresholds 0.5/0.6 delays -1/-1 continuous=false -> Delayed { opportunities: Some(OpportunityThresholds { node: Fraction(0.5), rack: Fraction(0.6000000238418579) }), time: None }
        thresholds 0.5/-1 delays -1/-1 continuous=false -> Immediate
        thresholds 2/1 delays -1/-1 continuous=false -> Delayed { opportunities: Some(OpportunityThresholds { node: Fraction(1.0), rack: Fraction(1.0) }), time: None }
        thresholds -1/-1 delays 1000/2000 continuous=false -> Delayed { opportunities: None, time: Some(TimeDelays { node: Duration(1000), rack: Duration(2000) }) }
        thresholds 0.5/0.6 delays 1000/2000 continuous=false -> Delayed { opportunities: Some(OpportunityThresholds { node: Fraction(0.5), rack: Fraction(0.6000000238418579) }), time: Some(TimeDelays { node: Duration(1000), rack: Duration(2000) }) }
        thresholds 0.5/0.6 delays 1000/2000 continuous=true -> Delayed { opportunities: None, time: Some(TimeDelays { node: Duration(1000), rack: Duration(2000) }) }
        thresholds 0.5/0.6 delays -1/2000 continuous=true -> Immediate
        thresholds 0/0 delays 0/0 continuous=false -> Delayed { opportunities: Some(OpportunityThresholds { node: Fraction(0.0), rack: Fraction(0.0) }), time: Some(TimeDelays { node: Duration(0), rack: Duration(0) }) }
    "#]].assert_eq(&out);
}

#[test]
fn substituted_values_are_read() {
    let (s, _) = settings(&[
        ("weft.kill.wait", "20000"),
        (
            "yarn.scheduler.fair.waitTimeBeforeKill",
            "${weft.kill.wait}",
        ),
    ]);
    assert_eq!(s.wait_time_before_kill, Duration::from_millis(20_000));
}

#[test]
fn preemption_model_is_current_or_classic() {
    for (text, model) in [
        ("current", PreemptionModel::Current),
        (" Classic ", PreemptionModel::Classic),
        ("CLASSIC", PreemptionModel::Classic),
    ] {
        let (s, warnings) = settings(&[("yarn.scheduler.fair.preemption.model", text)]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(s.preemption_model, model, "{text:?}");
        assert_eq!(model.to_string().parse::<PreemptionModel>(), Ok(model));
    }
    check(
        &[("yarn.scheduler.fair.preemption.model", "hadoop-2.2")],
        expect![[r#"
            the site configuration has 1 problem:
              line 2, column 60: property yarn.scheduler.fair.preemption.model: "hadoop-2.2" is not a preemption model (current or classic)
        "#]],
    );
    assert_eq!(
        "2.8".parse::<PreemptionModel>().unwrap_err().to_string(),
        "unknown preemption model \"2.8\" (expected current or classic)"
    );
}
