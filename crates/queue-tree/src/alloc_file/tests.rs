//! Tests of the allocation-file parser through two helpers: `check` renders a
//! loaded file (queues, top-level settings, users, rules, warnings) and
//! `check_err` renders the problems of a rejected one, each as
//! `line:col [code] element: message`.

use std::fmt::Write as _;

use expect_test::{Expect, expect};
use proptest::prelude::*;

use super::*;
use crate::config::{AmShare, QueueConfig, QueueKind};
use crate::placement::{PlacementRule, RuleKind};

fn check(text: &str, expected: Expect) {
    match parse_alloc_file(text) {
        Ok(loaded) => expected.assert_eq(&render_loaded(&loaded)),
        Err(err) => panic!("expected the file to load, got:\n{err}"),
    }
}

fn check_err(text: &str, expected: Expect) {
    match parse_alloc_file(text) {
        Ok(loaded) => panic!(
            "expected problems, the file loaded:\n{}",
            render_loaded(&loaded)
        ),
        Err(err) => {
            let mut out = String::new();
            for p in &err.problems {
                writeln!(
                    out,
                    "{}:{} [{}] {}: {}",
                    p.line,
                    p.column,
                    p.kind.code(),
                    p.element,
                    p.kind
                )
                .unwrap();
            }
            if !err.warnings.is_empty() {
                out.push_str("warnings:\n");
                out.push_str(&render_warnings(&err.warnings));
            }
            expected.assert_eq(&out);
        }
    }
}

/// Only the warnings of a file that loads.
fn check_warnings(text: &str, expected: Expect) {
    match parse_alloc_file(text) {
        Ok(loaded) => expected.assert_eq(&render_warnings(&loaded.warnings)),
        Err(err) => panic!("expected the file to load, got:\n{err}"),
    }
}

fn render_warnings(warnings: &[AllocFileWarning]) -> String {
    let mut out = String::new();
    for w in warnings {
        writeln!(
            out,
            "{}:{} [{}] {}: {}",
            w.line,
            w.column,
            w.kind.code(),
            w.element,
            w.kind
        )
        .unwrap();
    }
    out
}

fn render_loaded(loaded: &LoadedAllocConfig) -> String {
    let mut out = render_config(&loaded.config);
    if !loaded.warnings.is_empty() {
        out.push_str("warnings:\n");
        out.push_str(&render_warnings(&loaded.warnings));
    }
    out
}

fn render_config(c: &AllocConfig) -> String {
    let mut out = String::from("queues:\n");
    for q in c.queues.values() {
        writeln!(out, "  {}", render_queue(q)).unwrap();
    }
    writeln!(
        out,
        "defaults: policy={} maxApps={} userMaxApps={} maxResources={} maxAMShare={} minShareTimeout={} fairShareTimeout={} fairShareThreshold={}",
        c.default_policy,
        opt(c.queue_max_apps_default),
        opt(c.user_max_apps_default),
        opt(c.queue_max_resources_default),
        am_share(c.queue_max_am_share_default),
        c.default_min_share_preemption_timeout,
        c.default_fair_share_preemption_timeout,
        c.default_fair_share_preemption_threshold,
    )
    .unwrap();
    for (user, max) in &c.user_max_apps {
        writeln!(out, "user {user}: maxRunningApps={max}").unwrap();
    }
    for (name, value) in [
        ("reservation-agent", &c.reservation_agent),
        ("reservation-policy", &c.reservation_policy),
        ("reservation-planner", &c.reservation_planner),
    ] {
        if let Some(value) = value {
            writeln!(out, "{name}: {value}").unwrap();
        }
    }
    match &c.placement {
        None => out.push_str("placement: none\n"),
        Some(policy) => {
            out.push_str("placement:\n");
            for (i, rule) in policy.rules.iter().enumerate() {
                writeln!(out, "  {}. {}", i + 1, render_rule(rule)).unwrap();
            }
        }
    }
    out
}

fn render_queue(q: &QueueConfig) -> String {
    let mut s = format!(
        "{} {}",
        q.path,
        match q.kind {
            QueueKind::Leaf => "leaf",
            QueueKind::Parent => "parent",
        }
    );
    let mut field = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            write!(s, " {name}={value}").unwrap();
        }
    };
    field("min", q.min_resources.map(|r| r.to_string()));
    field("max", q.max_resources.map(|r| r.to_string()));
    field("maxChild", q.max_child_resources.map(|r| r.to_string()));
    field("maxApps", q.max_running_apps.map(|n| n.to_string()));
    field("maxAMShare", q.max_am_share.map(am_share));
    field(
        "maxContainer",
        q.max_container_allocation.map(|r| r.to_string()),
    );
    field("weight", q.weight.map(|w| w.to_string()));
    field("policy", q.policy.map(|p| p.to_string()));
    field(
        "submit",
        q.acl_submit_apps
            .as_ref()
            .map(|a| format!("{:?}", a.to_string())),
    );
    field(
        "admin",
        q.acl_administer_apps
            .as_ref()
            .map(|a| format!("{:?}", a.to_string())),
    );
    field(
        "minShareTimeout",
        q.min_share_preemption_timeout.map(|d| d.to_string()),
    );
    field(
        "fairShareTimeout",
        q.fair_share_preemption_timeout.map(|d| d.to_string()),
    );
    field(
        "fairShareThreshold",
        q.fair_share_preemption_threshold.map(|t| t.to_string()),
    );
    field(
        "allowPreemptionFrom",
        q.allow_preemption_from.map(|b| b.to_string()),
    );
    field("reservation", q.reservation.then(|| "true".to_owned()));
    s
}

fn render_rule(rule: &PlacementRule) -> String {
    let mut s = match &rule.kind {
        RuleKind::Default { queue } => format!("default({queue})"),
        kind => kind.name().to_owned(),
    };
    write!(s, " create={}", rule.create).unwrap();
    if let Some(parent) = &rule.parent {
        write!(s, " parent=[{}]", render_rule(parent)).unwrap();
    }
    s
}

fn opt<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn am_share(share: AmShare) -> String {
    match share {
        AmShare::Fraction(f) => f.to_string(),
        AmShare::Disabled => "disabled".to_owned(),
    }
}

// ---------------------------------------------------------------------------
// Files that must load.

#[test]
fn empty_allocations_is_hadoops_default() {
    let loaded = parse_alloc_file("<allocations/>").unwrap();
    assert_eq!(loaded.config, AllocConfig::default());
    assert!(loaded.warnings.is_empty());
    check(
        "<?xml version=\"1.0\"?>\n<!-- nothing configured -->\n<allocations>\n</allocations>\n",
        expect![[r#"
            queues:
              root parent
              root.default leaf
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement: none
        "#]],
    );
}

#[test]
fn hadoop_documentation_example() {
    check(
        include_str!("../../../../conf/examples/hadoop-doc-example.xml"),
        expect![[r#"
            queues:
              root parent
              root.default leaf
              root.sample_queue parent min=<memory:10000, vCores:0> max=memory-mb=90000, vcores=0 maxApps=50 maxAMShare=0.1 weight=2 policy=fair
              root.sample_queue.sample_reservable_queue leaf reservation=true
              root.sample_queue.sample_sub_queue leaf min=<memory:5000, vCores:0> submit="charlie "
              root.secondary_group_queue parent maxChild=memory-mb=4096, vcores=4 weight=3
            defaults: policy=fair maxApps=- userMaxApps=5 maxResources=memory-mb=40000, vcores=0 maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            user sample_user: maxRunningApps=30
            placement:
              1. specified create=true
              2. primaryGroup create=false
              3. nestedUserQueue create=true parent=[secondaryGroupExistingQueue create=false]
              4. default(root.sample_queue) create=true
            warnings:
            11:5 [max-am-share-on-parent] allocations/queue[@name="sample_queue"]/maxAMShare: maxAMShare only applies to leaf queues and is not inherited; on parent root.sample_queue it has no effect
            44:5 [placement-target-is-parent] allocations/queuePlacementPolicy/rule[@name="default"]: the default rule places apps into root.sample_queue, which is a parent queue; those apps will be rejected
        "#]],
    );
}

#[test]
fn seed_003_fifo_default_applies_to_leaves_only() {
    check(
        include_str!("../../../../conf/examples/seed-003-preemption-experiment.xml"),
        expect![[r#"
            queues:
              root parent
              root.default leaf min=<memory:6000, vCores:12> max=memory-mb=300000, vcores=48 maxApps=60 weight=1 policy=fair minShareTimeout=1s
              root.supertool leaf min=<memory:18000, vCores:36> max=memory-mb=30000, vcores=48 maxApps=60 weight=1 policy=fair minShareTimeout=1s
            defaults: policy=fifo maxApps=- userMaxApps=5 maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=1s fairShareThreshold=0.5
            placement: none
        "#]],
    );
}

#[test]
fn seed_004_mrv1_names() {
    check(
        include_str!("../../../../conf/examples/seed-004-mrv1-pools.xml"),
        expect![[r#"
            queues:
              root parent
              root.default leaf
              root.sample_pool leaf weight=2
            defaults: policy=fair maxApps=- userMaxApps=3 maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            user sample_user: maxRunningApps=6
            placement: none
            warnings:
            4:5 [slot-minimum] allocations/pool[@name="sample_pool"]/minMaps: minMaps is an MRv1 slot minimum with no YARN equivalent and is ignored; use minResources (for example "4096 mb, 4 vcores")
            5:5 [slot-minimum] allocations/pool[@name="sample_pool"]/minReduces: minReduces is an MRv1 slot minimum with no YARN equivalent and is ignored; use minResources (for example "4096 mb, 4 vcores")
            9:3 [legacy-name] allocations/user[@name="sample_user"]/maxRunningJobs: maxRunningJobs is the MRv1 name of maxRunningApps; Weft reads it as maxRunningApps, but Hadoop's YARN scheduler ignores it: rename it
            11:1 [legacy-name] allocations/userMaxJobsDefault: userMaxJobsDefault is the MRv1 name of userMaxAppsDefault; Weft reads it as userMaxAppsDefault, but Hadoop's YARN scheduler ignores it: rename it
        "#]],
    );
}

#[test]
fn multi_tenant_drf() {
    check(
        include_str!("../../../../conf/examples/multi-tenant-drf.xml"),
        expect![[r#"
            queues:
              root parent submit=" " admin="yarn admins"
              root.analytics parent max=memory-mb=40%, vcores=40% weight=2 submit="tableau-svc analysts"
              root.analytics.dashboards leaf maxApps=5 policy=fifo
              root.analytics.research leaf fairShareTimeout=10m allowPreemptionFrom=false
              root.default leaf max=memory-mb=50%, vcores=25% maxAMShare=disabled weight=0.5
              root.engineering parent min=<memory:204800, vCores:100> max=memory-mb=60%, vcores=60% weight=3 submit=" engineers"
              root.engineering.adhoc leaf maxApps=20 maxAMShare=0.5 policy=fair
              root.engineering.etl leaf min=<memory:102400, vCores:50> maxContainer=<memory:16384, vCores:8> weight=2 minShareTimeout=1m
              root.engineering.users parent maxChild=memory-mb=10%, vcores=10% fairShareThreshold=0.8
            defaults: policy=drf maxApps=50 userMaxApps=10 maxResources=- maxAMShare=0.3 minShareTimeout=2m fairShareTimeout=5m fairShareThreshold=0.6
            user etl-bot: maxRunningApps=40
            placement:
              1. specified create=false
              2. nestedUserQueue create=true parent=[default(root.engineering.users) create=true]
        "#]],
    );
}

#[test]
fn group_placement() {
    check(
        include_str!("../../../../conf/examples/group-placement.xml"),
        expect![[r#"
            queues:
              root parent
              root.default leaf
              root.finance parent weight=2
              root.finance.forecasting leaf policy=fifo
              root.finance.reporting leaf maxApps=10
              root.marketing parent maxChild=memory-mb=8192, vcores=8 weight=1
              root.ops leaf min=<memory:8192, vCores:8> max=memory-mb=32768, vcores=32
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement:
              1. specified create=false
              2. secondaryGroupExistingQueue create=false
              3. nestedUserQueue create=true parent=[primaryGroup create=false]
              4. reject create=true
        "#]],
    );
}

#[test]
fn every_top_level_setting() {
    check(
        r#"<allocations>
  <userMaxAppsDefault>7</userMaxAppsDefault>
  <queueMaxAppsDefault>12</queueMaxAppsDefault>
  <queueMaxResourcesDefault>vcores=10, memory-mb=20480</queueMaxResourcesDefault>
  <queueMaxAMShareDefault>-1</queueMaxAMShareDefault>
  <defaultQueueSchedulingMode>DRF</defaultQueueSchedulingMode>
  <defaultMinSharePreemptionTimeout>30</defaultMinSharePreemptionTimeout>
  <fairSharePreemptionTimeout>90</fairSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>0.25</defaultFairSharePreemptionThreshold>
  <reservation-agent> org.example.Agent </reservation-agent>
  <reservation-policy>org.example.Policy</reservation-policy>
  <reservation-planner>org.example.Planner</reservation-planner>
  <user name="alice"><maxRunningApps>3</maxRunningApps></user>
  <user name="first.last"/>
</allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.default leaf
            defaults: policy=drf maxApps=12 userMaxApps=7 maxResources=memory-mb=20480, vcores=10 maxAMShare=disabled minShareTimeout=30s fairShareTimeout=90s fairShareThreshold=0.25
            user alice: maxRunningApps=3
            reservation-agent: org.example.Agent
            reservation-policy: org.example.Policy
            reservation-planner: org.example.Planner
            placement: none
        "#]],
    );
}

#[test]
fn every_queue_setting_and_root_element() {
    check(
        r#"<allocations>
  <queue name="root">
    <aclSubmitApps>alice,bob admins</aclSubmitApps>
    <minSharePreemptionTimeout>5</minSharePreemptionTimeout>
    <schedulingPolicy>drf</schedulingPolicy>
    <pool name="a" type="parent">
      <minResources>1024 mb, 1 vcores</minResources>
      <maxResources>memory-mb=4096, vcores=4</maxResources>
      <maxChildResources>25%</maxChildResources>
      <maxRunningApps>4</maxRunningApps>
      <maxContainerAllocation>2048 mb, 2 vcores</maxContainerAllocation>
      <weight>0</weight>
      <schedulingMode>org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.policies.DominantResourceFairnessPolicy</schedulingMode>
      <aclAdministerApps> ops</aclAdministerApps>
      <aclSubmitReservations>alice</aclSubmitReservations>
      <aclListReservations>*</aclListReservations>
      <aclAdministerReservations>admins</aclAdministerReservations>
      <fairSharePreemptionTimeout>60</fairSharePreemptionTimeout>
      <fairSharePreemptionThreshold>0.7</fairSharePreemptionThreshold>
      <allowPreemptionFrom>FALSE</allowPreemptionFrom>
    </pool>
    <queue name="plan">
      <reservation/>
      <maxAMShare>0.75f</maxAMShare>
    </queue>
    <queue name="with space"/>
  </queue>
</allocations>"#,
        expect![[r#"
            queues:
              root parent policy=drf submit="alice,bob admins" minShareTimeout=5s
              root.a parent min=<memory:1024, vCores:1> max=memory-mb=4096, vcores=4 maxChild=memory-mb=25%, vcores=25% maxApps=4 maxContainer=<memory:2048, vCores:2> weight=0 policy=drf admin=" ops" fairShareTimeout=1m fairShareThreshold=0.7 allowPreemptionFrom=false
              root.default leaf
              root.plan leaf maxAMShare=0.75 reservation=true
              root.with space leaf
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement: none
        "#]],
    );
}

#[test]
fn placement_rules_and_nesting() {
    check(
        r#"<allocations>
  <queue name="users" type="parent"/>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="user" create="false"/>
    <rule name="primaryGroup" create="false">
      <rule name="default" queue="users" create="false"/>
    </rule>
    <rule name="secondaryGroupExistingQueue"/>
    <rule name="nestedUserQueue">
      <rule name="user" create="false">
        <rule name="primaryGroup"/>
      </rule>
    </rule>
    <rule name="default" queue="root.fallback"/>
  </queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.default leaf
              root.users parent
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement:
              1. specified create=false
              2. user create=false
              3. primaryGroup create=false parent=[default(root.users) create=false]
              4. secondaryGroupExistingQueue create=true
              5. nestedUserQueue create=true parent=[user create=false parent=[primaryGroup create=true]]
              6. default(root.fallback) create=true
        "#]],
    );
    check(
        r#"<allocations><queuePlacementPolicy><rule name="reject"/></queuePlacementPolicy></allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.default leaf
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement:
              1. reject create=true
        "#]],
    );
    check(
        r#"<allocations><queuePlacementPolicy><rule name="user"/></queuePlacementPolicy></allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.default leaf
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement:
              1. user create=true
        "#]],
    );
}

#[test]
fn policy_compatibility_after_defaults() {
    // A drf default under a drf root is fine, and a fair leaf under a drf parent too.
    check(
        r#"<allocations>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <queue name="a"><queue name="b"><schedulingPolicy>fair</schedulingPolicy></queue></queue>
</allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.a parent
              root.a.b leaf policy=fair
              root.default leaf
            defaults: policy=drf maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement: none
        "#]],
    );
    // A fifo default: parents fall back to fair, so an explicit fair parent is fine.
    check(
        r#"<allocations>
  <defaultQueueSchedulingPolicy>fifo</defaultQueueSchedulingPolicy>
  <queue name="a"><queue name="b"/></queue>
</allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.a parent
              root.a.b leaf
              root.default leaf
            defaults: policy=fifo maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement: none
        "#]],
    );
}

// ---------------------------------------------------------------------------
// Problems: each asserts the kind, line and column.

#[test]
fn malformed_xml() {
    check_err(
        "<allocations>\n  <queue name=\"a\">\n  </pool>\n</allocations>",
        expect![[r#"
            3:3 [malformed-xml] allocations/queue: malformed xml: ill-formed document: expected `</queue>`, but `</pool>` was found
        "#]],
    );
    check_err(
        "<allocations>\n  <queue name=\"a\">\n",
        expect![[r#"
            2:3 [malformed-xml] allocations/queue: malformed xml: element <queue> is never closed
        "#]],
    );
    check_err(
        "<allocations>\n  <queue name=\"a &amp b\"/>\n</allocations>",
        expect![[r#"
            2:18 [malformed-xml] allocations/queue: malformed xml: in attribute name: '&' starts an entity without a closing ';' (write &amp; for a literal &)
        "#]],
    );
    check_err(
        "<allocations>\n  <queue name=\"a\" name=\"b\"/>\n</allocations>",
        expect![[r#"
            2:19 [malformed-xml] allocations/queue: malformed xml: the attribute is given twice
        "#]],
    );
    check_err(
        "",
        expect![[r#"
            1:1 [malformed-xml] (document): malformed xml: the document has no root element
        "#]],
    );
    check_err(
        "<allocations/>\n<allocations/>",
        expect![[r#"
            2:1 [malformed-xml] (document): malformed xml: a second top-level element <allocations>: a document has exactly one root element
        "#]],
    );
}

#[test]
fn wrong_root_element() {
    check_err(
        "<?xml version=\"1.0\"?>\n<configuration>\n  <queue name=\"a\"/>\n</configuration>",
        expect![[r#"
            2:1 [wrong-root-element] configuration: the root element is <configuration>; an allocation file's root element must be <allocations>
        "#]],
    );
}

#[test]
fn unknown_policy() {
    check_err(
        r#"<allocations>
  <defaultQueueSchedulingPolicy>lottery</defaultQueueSchedulingPolicy>
  <queue name="a">
    <schedulingPolicy>com.example.MyPolicy</schedulingPolicy>
  </queue>
  <queue name="b"><schedulingPolicy></schedulingPolicy></queue>
</allocations>"#,
        expect![[r#"
            2:3 [unknown-policy] allocations/defaultQueueSchedulingPolicy: unknown scheduling policy "lottery" (expected fair, fifo or drf)
            4:5 [unknown-policy] allocations/queue[@name="a"]/schedulingPolicy: unknown scheduling policy "com.example.MyPolicy" (expected fair, fifo or drf)
            6:19 [empty-value] allocations/queue[@name="b"]/schedulingPolicy: the value is empty; expected a scheduling policy: fair, fifo or drf
        "#]],
    );
}

#[test]
fn an_invalid_policy_does_not_cascade() {
    check_err(
        r#"<allocations>
  <queue name="a">
    <schedulingPolicy>best</schedulingPolicy>
    <queue name="b"><schedulingPolicy>drf</schedulingPolicy></queue>
  </queue>
</allocations>"#,
        expect![[r#"
            3:5 [unknown-policy] allocations/queue[@name="a"]/schedulingPolicy: unknown scheduling policy "best" (expected fair, fifo or drf)
        "#]],
    );
    check_err(
        r#"<allocations>
  <defaultQueueSchedulingPolicy>dfr</defaultQueueSchedulingPolicy>
  <queue name="root">
    <schedulingPolicy>fair</schedulingPolicy>
    <queue name="a"><schedulingPolicy>drf</schedulingPolicy></queue>
  </queue>
</allocations>"#,
        expect![[r#"
            2:3 [unknown-policy] allocations/defaultQueueSchedulingPolicy: unknown scheduling policy "dfr" (expected fair, fifo or drf)
        "#]],
    );
}

#[test]
fn bad_numbers() {
    check_err(
        r#"<allocations>
  <queueMaxAppsDefault>lots</queueMaxAppsDefault>
  <userMaxAppsDefault>-3</userMaxAppsDefault>
  <defaultMinSharePreemptionTimeout>1.5</defaultMinSharePreemptionTimeout>
  <defaultFairSharePreemptionTimeout>-60</defaultFairSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>half</defaultFairSharePreemptionThreshold>
  <queueMaxAMShareDefault>-0.5</queueMaxAMShareDefault>
  <queue name="a">
    <weight>heavy</weight>
    <maxRunningApps>-1</maxRunningApps>
    <maxAMShare>-2</maxAMShare>
    <minSharePreemptionTimeout>-1</minSharePreemptionTimeout>
    <fairSharePreemptionThreshold></fairSharePreemptionThreshold>
    <allowPreemptionFrom>no</allowPreemptionFrom>
  </queue>
  <queue name="b">
    <weight>-1.5</weight>
    <maxRunningApps>99999999999</maxRunningApps>
  </queue>
  <user name="u"><maxRunningApps>NaN</maxRunningApps></user>
</allocations>"#,
        expect![[r#"
            2:3 [not-a-number] allocations/queueMaxAppsDefault: "lots" is not a whole number of apps such as 10
            3:3 [negative-number] allocations/userMaxAppsDefault: "-3" is negative; expected a whole number of apps such as 10
            4:3 [not-a-number] allocations/defaultMinSharePreemptionTimeout: "1.5" is not a whole number of seconds such as 60
            5:3 [negative-number] allocations/defaultFairSharePreemptionTimeout: "-60" is negative; expected a whole number of seconds such as 60
            6:3 [not-a-number] allocations/defaultFairSharePreemptionThreshold: "half" is not a decimal number from 0 to 1 such as 0.5
            7:3 [am-share-out-of-range] allocations/queueMaxAMShareDefault: "-0.5" is not a valid AM share; expected -1 (no limit) or a fraction from 0 to 1
            9:5 [not-a-number] allocations/queue[@name="a"]/weight: "heavy" is not a non-negative decimal number such as 1 or 2.5
            10:5 [negative-number] allocations/queue[@name="a"]/maxRunningApps: "-1" is negative; expected a whole number of apps such as 10
            11:5 [am-share-out-of-range] allocations/queue[@name="a"]/maxAMShare: "-2" is not a valid AM share; expected -1 (no limit) or a fraction from 0 to 1
            12:5 [negative-number] allocations/queue[@name="a"]/minSharePreemptionTimeout: "-1" is negative; expected a whole number of seconds such as 60
            13:5 [empty-value] allocations/queue[@name="a"]/fairSharePreemptionThreshold: the value is empty; expected a decimal number from 0 to 1 such as 0.5
            14:5 [invalid-bool] allocations/queue[@name="a"]/allowPreemptionFrom: allowPreemptionFrom is "no"; expected true or false
            17:5 [negative-number] allocations/queue[@name="b"]/weight: "-1.5" is negative; expected a non-negative decimal number such as 1 or 2.5
            18:5 [number-too-large] allocations/queue[@name="b"]/maxRunningApps: "99999999999" is too large; expected a whole number of apps such as 10
            20:18 [not-a-number] allocations/user[@name="u"]/maxRunningApps: "NaN" is not a whole number of apps such as 10
        "#]],
    );
}

#[test]
fn bad_resources() {
    check_err(
        r#"<allocations>
  <queueMaxResourcesDefault>lots of memory</queueMaxResourcesDefault>
  <queue name="a">
    <minResources>50%</minResources>
    <maxResources>1024</maxResources>
    <maxChildResources>memory-mb=1024, gpus=2</maxChildResources>
    <maxContainerAllocation>memory-mb=10%</maxContainerAllocation>
  </queue>
  <queue name="b"><minResources>1024 mb, 1 vcores, 3 disks</minResources></queue>
</allocations>"#,
        expect![[r#"
            2:3 [invalid-resource] allocations/queueMaxResourcesDefault: cannot parse resource value "lots of memory": expected a number at "lots of memory"
            4:5 [invalid-resource] allocations/queue[@name="a"]/minResources: cannot parse resource value "50%": minResources takes absolute amounts only; percentages are accepted in maxResources, maxChildResources and queueMaxResourcesDefault
            5:5 [invalid-resource] allocations/queue[@name="a"]/maxResources: cannot parse resource value "1024": expected a unit after 1024
            6:5 [invalid-resource] allocations/queue[@name="a"]/maxChildResources: cannot parse resource value "memory-mb=1024, gpus=2": unknown resource type "gpus" (known: memory-mb, vcores, the only types Weft schedules)
            7:5 [invalid-resource] allocations/queue[@name="a"]/maxContainerAllocation: cannot parse resource value "memory-mb=10%": maxContainerAllocation takes absolute amounts only; percentages are accepted in maxResources, maxChildResources and queueMaxResourcesDefault
            9:19 [invalid-resource] allocations/queue[@name="b"]/minResources: cannot parse resource value "1024 mb, 1 vcores, 3 disks": unknown unit "disks" (use mb and vcores)
        "#]],
    );
}

#[test]
fn min_above_max() {
    check_err(
        r#"<allocations>
  <queue name="a">
    <maxResources>4096 mb, 4 vcores</maxResources>
    <minResources>8192 mb, 2 vcores</minResources>
  </queue>
</allocations>"#,
        expect![[r#"
            4:5 [min-above-max] allocations/queue[@name="a"]/minResources: minResources <memory:8192, vCores:2> is larger than maxResources <memory:4096, vCores:4>; a queue's guaranteed share must fit in its maximum
        "#]],
    );
    // A percentage max is resolved against the cluster later: no check here.
    check(
        r#"<allocations><queue name="a"><minResources>8192 mb, 2 vcores</minResources><maxResources>10%</maxResources></queue></allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.a leaf min=<memory:8192, vCores:2> max=memory-mb=10%, vcores=10%
              root.default leaf
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement: none
        "#]],
    );
}

#[test]
fn root_with_siblings() {
    check_err(
        r#"<allocations>
  <queue name="a"/>
  <queue name="root">
    <queue name="b"/>
  </queue>
</allocations>"#,
        expect![[r#"
            3:3 [root-with-siblings] allocations/queue[@name="root"]: a queue element named root must be the only queue element at the top level; put the other queues inside it
        "#]],
    );
}

#[test]
fn queue_declared_twice() {
    check_err(
        r#"<allocations>
  <queue name="a"><queue name="x"/></queue>
  <queue name="b"/>
  <pool name="a"/>
  <queue name="default"/>
  <queue name="default"/>
</allocations>"#,
        expect![[r#"
            4:3 [duplicate-queue] allocations/pool[@name="a"]: queue root.a is declared twice (first at line 2); merge the two elements
            6:3 [duplicate-queue] allocations/queue[@name="default"]: queue root.default is declared twice (first at line 5); merge the two elements
        "#]],
    );
}

#[test]
fn leaf_and_parent_at_once() {
    check_err(
        r#"<allocations>
  <queue name="a" type="parent">
    <reservation/>
  </queue>
  <queue name="b">
    <reservation></reservation>
    <queue name="c"/>
  </queue>
  <queue name="default">
    <queue name="d"/>
  </queue>
  <queue name="e" type="leaf">
    <queue name="f"/>
  </queue>
  <queue name="g" type="Parent"/>
</allocations>"#,
        expect![[r#"
            3:5 [queue-type-conflict] allocations/queue[@name="a"]: a queue with child queues or type="parent" cannot also have a reservation element (plan queues are leaves)
            6:5 [queue-type-conflict] allocations/queue[@name="b"]: a queue with child queues or type="parent" cannot also have a reservation element (plan queues are leaves)
            9:3 [queue-type-conflict] allocations/queue[@name="default"]: root.default is always a leaf queue; it cannot have child queues or type="parent"
            12:19 [queue-type-conflict] allocations/queue[@name="e"]: the queue is declared type="leaf" but has child queues
            15:19 [invalid-queue-type] allocations/queue[@name="g"]: type is "Parent"; expected "parent" or "leaf"
        "#]],
    );
    check_err(
        r#"<allocations><queue name="default" type="parent"/></allocations>"#,
        expect![[r#"
            1:14 [queue-type-conflict] allocations/queue[@name="default"]: root.default is always a leaf queue; it cannot have child queues or type="parent"
        "#]],
    );
    check_err(
        r#"<allocations><queue name="root" type="leaf"/></allocations>"#,
        expect![[r#"
            1:33 [queue-type-conflict] allocations/queue[@name="root"]: root is always a parent queue; it cannot be a leaf or have a reservation element
        "#]],
    );
}

#[test]
fn invalid_queue_names() {
    check_err(
        "<allocations>
  <queue name=\"\"/>
  <queue/>
  <queue name=\"a.b\"/>
  <queue name=\" a\"/>
  <queue name=\"b \"/>
  <queue name=\"c\u{a0}\"/>
  <queue name=\"   \"/>
  <queue name=\"bad.parent\">
    <queue name=\"child\"><weight>x</weight></queue>
  </queue>
</allocations>",
        expect![[r#"
            2:3 [missing-attribute] allocations/queue[@name=""]: the name attribute is missing or empty; every queue needs a name
            3:3 [missing-attribute] allocations/queue: the name attribute is missing or empty; every queue needs a name
            4:10 [invalid-queue-name] allocations/queue[@name="a.b"]: invalid queue name "a.b": a single queue name cannot contain '.'
            5:10 [invalid-queue-name] allocations/queue[@name=" a"]: invalid queue name " a": a component starts or ends with whitespace
            6:10 [invalid-queue-name] allocations/queue[@name="b "]: invalid queue name "b ": a component starts or ends with whitespace
            7:10 [invalid-queue-name] allocations/queue[@name="c\u{a0}"]: invalid queue name "c\u{a0}": a component starts or ends with whitespace
            8:10 [invalid-queue-name] allocations/queue[@name="   "]: invalid queue name "   ": a component starts or ends with whitespace
            9:10 [invalid-queue-name] allocations/queue[@name="bad.parent"]: invalid queue name "bad.parent": a single queue name cannot contain '.'
            10:25 [not-a-number] allocations/queue[@name="bad.parent"]/queue[@name="child"]/weight: "x" is not a non-negative decimal number such as 1 or 2.5
        "#]],
    );
}

#[test]
fn fifo_parent() {
    check_err(
        r#"<allocations>
  <queue name="a">
    <schedulingPolicy>fifo</schedulingPolicy>
    <queue name="b"/>
  </queue>
  <queue name="c" type="parent"><schedulingPolicy>FIFO</schedulingPolicy></queue>
  <queue name="root2"><queue name="x"/></queue>
</allocations>"#,
        expect![[r#"
            3:5 [fifo-parent] allocations/queue[@name="a"]/schedulingPolicy: queue root.a is a parent queue, and fifo orders apps only; use fair or drf
            6:33 [fifo-parent] allocations/queue[@name="c"]/schedulingPolicy: queue root.c is a parent queue, and fifo orders apps only; use fair or drf
        "#]],
    );
}

#[test]
fn fair_parent_with_drf_child() {
    // Explicit on both sides.
    check_err(
        r#"<allocations>
  <queue name="a">
    <schedulingPolicy>fair</schedulingPolicy>
    <queue name="b"><schedulingPolicy>drf</schedulingPolicy></queue>
  </queue>
</allocations>"#,
        expect![[r#"
            4:21 [incompatible-policies] allocations/queue[@name="a"]/queue[@name="b"]/schedulingPolicy: queue root.a.b uses drf but its parent root.a uses fair; a fair parent cannot have a drf child (Hadoop drops such a queue at startup): make the parent drf or the child fair
        "#]],
    );
    // The root is fair by default: a drf queue directly under it is dropped by Hadoop.
    check_err(
        r#"<allocations>
  <queue name="a"><schedulingPolicy>drf</schedulingPolicy></queue>
</allocations>"#,
        expect![[r#"
            2:19 [incompatible-policies] allocations/queue[@name="a"]/schedulingPolicy: queue root.a uses drf but its parent root uses fair (by default); a fair parent cannot have a drf child (Hadoop drops such a queue at startup): make the parent drf or the child fair
        "#]],
    );
    // The default is drf, but a parent says fair: its children inherit drf.
    check_err(
        r#"<allocations>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <queue name="root">
    <schedulingPolicy>fair</schedulingPolicy>
    <queue name="a"/>
  </queue>
</allocations>"#,
        expect![[r#"
            4:5 [incompatible-policies] allocations/queue[@name="root"]/schedulingPolicy: queue root.default uses drf (by default) but its parent root uses fair; a fair parent cannot have a drf child (Hadoop drops such a queue at startup): make the parent drf or the child fair
            5:5 [incompatible-policies] allocations/queue[@name="root"]/queue[@name="a"]: queue root.a uses drf (by default) but its parent root uses fair; a fair parent cannot have a drf child (Hadoop drops such a queue at startup): make the parent drf or the child fair
        "#]],
    );
}

#[test]
fn placement_problems() {
    check_err(
        r#"<allocations>
  <queuePlacementPolicy>
  </queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            2:3 [empty-placement-policy] allocations/queuePlacementPolicy: the placement policy has no rules; add rule elements or remove queuePlacementPolicy
        "#]],
    );
    check_err(
        r#"<allocations>
  <queuePlacementPolicy>
    <specified/>
  </queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            2:3 [empty-placement-policy] allocations/queuePlacementPolicy: the placement policy has no rules; add rule elements or remove queuePlacementPolicy
            warnings:
            3:5 [unknown-element] allocations/queuePlacementPolicy/specified: unknown element <specified> in queuePlacementPolicy is ignored; did you mean <rule name="specified"/>?
        "#]],
    );
    check_err(
        r#"<allocations>
  <queuePlacementPolicy>
    <rule/>
    <rule name="roundRobin"/>
    <rule name="specified" create="yes"/>
    <rule name="default" queue="a..b"/>
  </queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            3:5 [missing-attribute] allocations/queuePlacementPolicy/rule: the name attribute is missing or empty; every rule needs a name such as specified, user or default
            4:11 [unknown-rule] allocations/queuePlacementPolicy/rule[@name="roundRobin"]: unknown placement rule "roundRobin" (expected specified, user, primaryGroup, secondaryGroupExistingQueue, nestedUserQueue, default or reject)
            5:28 [invalid-bool] allocations/queuePlacementPolicy/rule[@name="specified"]: create is "yes"; expected true or false
            6:26 [invalid-queue-name] allocations/queuePlacementPolicy/rule[@name="default"]: invalid queue name "a..b": it has an empty component (a leading, trailing or doubled '.')
        "#]],
    );
    check_err(
        r#"<allocations>
  <queuePlacementPolicy>
    <rule name="nestedUserQueue"><rule name="reject"/></rule>
    <rule name="user"><rule name="nestedUserQueue"><rule name="default"/></rule></rule>
    <rule name="primaryGroup"><rule name="primaryGroup"/></rule>
    <rule name="specified"><rule name="default"/></rule>
    <rule name="nestedUserQueue"/>
    <rule name="user"><rule name="default"/><rule name="specified"/></rule>
    <rule name="reject"/>
  </queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            3:34 [invalid-parent-rule] allocations/queuePlacementPolicy/rule[@name="nestedUserQueue"]/rule[@name="reject"]: reject cannot be used as the parent rule of nestedUserQueue
            4:23 [invalid-parent-rule] allocations/queuePlacementPolicy/rule[@name="user"]/rule[@name="nestedUserQueue"]: nestedUserQueue cannot be used as the parent rule of user
            5:31 [parent-rule-same-type] allocations/queuePlacementPolicy/rule[@name="primaryGroup"]/rule[@name="primaryGroup"]: the primaryGroup rule cannot have a nested primaryGroup rule
            6:28 [nested-rule-not-allowed] allocations/queuePlacementPolicy/rule[@name="specified"]/rule[@name="default"]: the specified rule cannot have a nested rule
            7:5 [missing-nested-rule] allocations/queuePlacementPolicy/rule[@name="nestedUserQueue"]: nestedUserQueue needs exactly one nested rule that names the parent queue
            8:45 [several-nested-rules] allocations/queuePlacementPolicy/rule[@name="user"]/rule[@name="specified"]: the user rule has 2 nested rules; it takes exactly one
        "#]],
    );
    check_err(
        r#"<allocations>
  <queuePlacementPolicy>
    <rule name="specified"/>
    <rule name="user"/>
    <rule name="default"/>
    <rule name="primaryGroup" create="false"/>
  </queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            5:5 [unreachable-rule] allocations/queuePlacementPolicy/rule[@name="default"]: this rule can never be reached: the user rule at line 4 always places or rejects the app
            6:5 [last-rule-not-terminal] allocations/queuePlacementPolicy/rule[@name="primaryGroup"]: the last placement rule (primaryGroup) can pass an app on without placing it; end with a rule that always places (default, or user or primaryGroup with create="true") or with reject
        "#]],
    );
    check_err(
        r#"<allocations>
  <queuePlacementPolicy>
    <rule name="specified"/>
    <rule name="nestedUserQueue"><rule name="default" create="false"/></rule>
  </queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            4:5 [last-rule-not-terminal] allocations/queuePlacementPolicy/rule[@name="nestedUserQueue"]: the last placement rule (nestedUserQueue) can pass an app on without placing it; end with a rule that always places (default, or user or primaryGroup with create="true") or with reject
        "#]],
    );
}

#[test]
fn repeated_settings_and_users() {
    check_err(
        r#"<allocations>
  <queue name="a">
    <weight>1</weight>
    <weight>2</weight>
    <maxRunningApps>1</maxRunningApps>
    <maxRunningJobs>2</maxRunningJobs>
  </queue>
  <defaultQueueSchedulingPolicy>fair</defaultQueueSchedulingPolicy>
  <defaultQueueSchedulingMode>drf</defaultQueueSchedulingMode>
  <user name="u"><maxRunningApps>1</maxRunningApps></user>
  <user name="u"><maxRunningApps>2</maxRunningApps></user>
  <user><maxRunningApps>2</maxRunningApps></user>
  <queuePlacementPolicy><rule name="reject"/></queuePlacementPolicy>
  <queuePlacementPolicy><rule name="user"/></queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            4:5 [duplicate-element] allocations/queue[@name="a"]/weight: weight is given more than once here (as weight at line 3); keep one
            6:5 [duplicate-element] allocations/queue[@name="a"]/maxRunningJobs: maxRunningJobs is given more than once here (as maxRunningApps at line 5); keep one
            9:3 [duplicate-element] allocations/defaultQueueSchedulingMode: defaultQueueSchedulingMode is given more than once here (as defaultQueueSchedulingPolicy at line 8); keep one
            11:3 [duplicate-user] allocations/user[@name="u"]: user "u" is configured twice (first at line 10); merge the two elements
            12:3 [missing-attribute] allocations/user: the name attribute is missing or empty; a user element applies to the user it names
            14:3 [duplicate-element] allocations/queuePlacementPolicy: queuePlacementPolicy is given more than once here (as queuePlacementPolicy at line 13); keep one
            warnings:
            6:5 [legacy-name] allocations/queue[@name="a"]/maxRunningJobs: maxRunningJobs is the MRv1 name of maxRunningApps; Weft reads it as maxRunningApps, but Hadoop's YARN scheduler ignores it: rename it
        "#]],
    );
}

#[test]
fn many_problems_in_one_pass() {
    let text = r#"<allocations>
  <queue name="a">
    <weight>x</weight>
    <maxResources>lots</maxResources>
    <schedulingPolicy>best</schedulingPolicy>
  </queue>
  <queue name="a"/>
  <queue name="b.c"/>
  <userMaxAppsDefault>-1</userMaxAppsDefault>
  <queuePlacementPolicy>
    <rule name="specified"/>
  </queuePlacementPolicy>
  <maxResource>1 mb, 1 vcores</maxResource>
</allocations>"#;
    check_err(
        text,
        expect![[r#"
            3:5 [not-a-number] allocations/queue[@name="a"]/weight: "x" is not a non-negative decimal number such as 1 or 2.5
            4:5 [invalid-resource] allocations/queue[@name="a"]/maxResources: cannot parse resource value "lots": expected a number at "lots"
            5:5 [unknown-policy] allocations/queue[@name="a"]/schedulingPolicy: unknown scheduling policy "best" (expected fair, fifo or drf)
            7:3 [duplicate-queue] allocations/queue[@name="a"]: queue root.a is declared twice (first at line 2); merge the two elements
            8:10 [invalid-queue-name] allocations/queue[@name="b.c"]: invalid queue name "b.c": a single queue name cannot contain '.'
            9:3 [negative-number] allocations/userMaxAppsDefault: "-1" is negative; expected a whole number of apps such as 10
            11:5 [last-rule-not-terminal] allocations/queuePlacementPolicy/rule[@name="specified"]: the last placement rule (specified) can pass an app on without placing it; end with a rule that always places (default, or user or primaryGroup with create="true") or with reject
            warnings:
            13:3 [unknown-element] allocations/maxResource: unknown element <maxResource> in allocations is ignored; did you mean <maxResources>? (it belongs in a queue element)
        "#]],
    );
    let err = parse_alloc_file(text).unwrap_err();
    let display = err.to_string();
    // One line per problem, then the warnings under a heading: whoever
    // reads only the refusal (refresh-queues, the simulator) sees the clue.
    assert_eq!(
        display.lines().count(),
        err.problems.len() + 1 + err.warnings.len()
    );
    assert!(
        display.starts_with(
            "3:5: allocations/queue[@name=\"a\"]/weight: \"x\" is not a non-negative decimal number"
        ),
        "{display}"
    );
    assert!(
        display.ends_with(
            "warnings, which may explain the problems:\n13:3: allocations/maxResource: unknown element <maxResource> in allocations is ignored; did you mean <maxResources>? (it belongs in a queue element)"
        ),
        "{display}"
    );
}

// ---------------------------------------------------------------------------
// Warnings: the file loads.

#[test]
fn unknown_elements_and_attributes() {
    check_warnings(
        r#"<allocations xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="2">
  <queue name="a" weight="3">
    <maxResource>1024 mb, 1 vcores</maxResource>
    <userMaxAppsDefault>3</userMaxAppsDefault>
    <colour>blue</colour>
    stray text
  </queue>
  <weight>2</weight>
  <queuePlacementPolicy>
    <comment>hello</comment>
    <rule name="default" queue="a" create="true" extra="1"><note/></rule>
  </queuePlacementPolicy>
  <user name="u"><maxRunningApp>2</maxRunningApp></user>
  <queueMaxAppsDefault unit="apps">3<b/></queueMaxAppsDefault>
</allocations>"#,
        expect![[r#"
            1:68 [unknown-attribute] allocations: unknown attribute "version" is ignored
            2:19 [unknown-attribute] allocations/queue[@name="a"]: unknown attribute "weight" is ignored
            3:5 [unknown-element] allocations/queue[@name="a"]/maxResource: unknown element <maxResource> in a queue element is ignored; did you mean <maxResources>?
            4:5 [unknown-element] allocations/queue[@name="a"]/userMaxAppsDefault: unknown element <userMaxAppsDefault> in a queue element is ignored; <userMaxAppsDefault> belongs in allocations (the top level)
            5:5 [unknown-element] allocations/queue[@name="a"]/colour: unknown element <colour> in a queue element is ignored
            6:5 [unexpected-text] allocations/queue[@name="a"]: text "stray text" is ignored; only elements belong here
            8:3 [unknown-element] allocations/weight: unknown element <weight> in allocations is ignored; <weight> belongs in a queue element
            10:5 [unknown-element] allocations/queuePlacementPolicy/comment: unknown element <comment> in queuePlacementPolicy is ignored
            11:50 [unknown-attribute] allocations/queuePlacementPolicy/rule[@name="default"]: unknown attribute "extra" is ignored
            11:60 [unknown-element] allocations/queuePlacementPolicy/rule[@name="default"]/note: unknown element <note> in a rule element is ignored
            13:18 [unknown-element] allocations/user[@name="u"]/maxRunningApp: unknown element <maxRunningApp> in a user element is ignored; did you mean <maxRunningApps>?
            14:24 [unknown-attribute] allocations/queueMaxAppsDefault: unknown attribute "unit" is ignored
            14:37 [unknown-element] allocations/queueMaxAppsDefault/b: unknown element <b> in a value is ignored
        "#]],
    );
}

#[test]
fn clamped_values() {
    check(
        r#"<allocations>
  <queueMaxAMShareDefault>2</queueMaxAMShareDefault>
  <defaultFairSharePreemptionThreshold>1.5</defaultFairSharePreemptionThreshold>
  <queue name="a">
    <maxAMShare>1.01</maxAMShare>
    <fairSharePreemptionThreshold>-0.2</fairSharePreemptionThreshold>
  </queue>
</allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.a leaf maxAMShare=1 fairShareThreshold=0
              root.default leaf
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=1 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=1
            placement: none
            warnings:
            2:3 [clamped] allocations/queueMaxAMShareDefault: "2" is outside [0, 1]; it is clamped to 1, as Hadoop does
            3:3 [clamped] allocations/defaultFairSharePreemptionThreshold: "1.5" is outside [0, 1]; it is clamped to 1, as Hadoop does
            5:5 [clamped] allocations/queue[@name="a"]/maxAMShare: "1.01" is outside [0, 1]; it is clamped to 1, as Hadoop does
            6:5 [clamped] allocations/queue[@name="a"]/fairSharePreemptionThreshold: "-0.2" is outside [0, 1]; it is clamped to 0, as Hadoop does
        "#]],
    );
}

#[test]
fn hadoop_quirks_that_load_with_warnings() {
    check(
        r#"<allocations>
  <queue name="root">
    <maxContainerAllocation>8192 mb, 4 vcores</maxContainerAllocation>
    <queue name="p">
      <maxAMShare>0.2</maxAMShare>
      <queue name="q"><reservation>false</reservation></queue>
    </queue>
  </queue>
  <defaultFairSharePreemptionTimeout>30</defaultFairSharePreemptionTimeout>
  <fairSharePreemptionTimeout>60</fairSharePreemptionTimeout>
  <queuePlacementPolicy>
    <rule name="default" queue="p"/>
  </queuePlacementPolicy>
</allocations>"#,
        expect![[r#"
            queues:
              root parent maxContainer=<memory:8192, vCores:4>
              root.default leaf
              root.p parent maxAMShare=0.2
              root.p.q leaf reservation=true
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=30s fairShareThreshold=0.5
            placement:
              1. default(root.p) create=true
            warnings:
            3:5 [max-container-allocation-on-root] allocations/queue[@name="root"]/maxContainerAllocation: Hadoop documents maxContainerAllocation as invalid on root; it is kept and inherited by queues that set none, but the cluster-wide cap belongs in yarn.scheduler.maximum-allocation-mb and -vcores
            5:7 [max-am-share-on-parent] allocations/queue[@name="root"]/queue[@name="p"]/maxAMShare: maxAMShare only applies to leaf queues and is not inherited; on parent root.p it has no effect
            6:23 [reservation-value-ignored] allocations/queue[@name="root"]/queue[@name="p"]/queue[@name="q"]/reservation: reservation takes no value and "false" is ignored: the element's presence alone makes the queue reservable
            10:3 [legacy-timeout-shadowed] allocations/fairSharePreemptionTimeout: fairSharePreemptionTimeout at the top level is ignored because defaultFairSharePreemptionTimeout is also set
            12:5 [placement-target-is-parent] allocations/queuePlacementPolicy/rule[@name="default"]: the default rule places apps into root.p, which is a parent queue; those apps will be rejected
        "#]],
    );
}

#[test]
fn mrv1_slot_minimums_and_legacy_names() {
    check(
        r#"<allocations>
  <pool name="etl">
    <minMaps>10</minMaps>
    <minReduces>4</minReduces>
    <maxRunningJobs>8</maxRunningJobs>
  </pool>
  <poolMaxJobsDefault>20</poolMaxJobsDefault>
  <userMaxJobsDefault>5</userMaxJobsDefault>
</allocations>"#,
        expect![[r#"
            queues:
              root parent
              root.default leaf
              root.etl leaf maxApps=8
            defaults: policy=fair maxApps=20 userMaxApps=5 maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement: none
            warnings:
            3:5 [slot-minimum] allocations/pool[@name="etl"]/minMaps: minMaps is an MRv1 slot minimum with no YARN equivalent and is ignored; use minResources (for example "4096 mb, 4 vcores")
            4:5 [slot-minimum] allocations/pool[@name="etl"]/minReduces: minReduces is an MRv1 slot minimum with no YARN equivalent and is ignored; use minResources (for example "4096 mb, 4 vcores")
            5:5 [legacy-name] allocations/pool[@name="etl"]/maxRunningJobs: maxRunningJobs is the MRv1 name of maxRunningApps; Weft reads it as maxRunningApps, but Hadoop's YARN scheduler ignores it: rename it
            7:3 [legacy-name] allocations/poolMaxJobsDefault: poolMaxJobsDefault is the MRv1 name of queueMaxAppsDefault; Weft reads it as queueMaxAppsDefault, but Hadoop's YARN scheduler ignores it: rename it
            8:3 [legacy-name] allocations/userMaxJobsDefault: userMaxJobsDefault is the MRv1 name of userMaxAppsDefault; Weft reads it as userMaxAppsDefault, but Hadoop's YARN scheduler ignores it: rename it
        "#]],
    );
}

// ---------------------------------------------------------------------------
// Properties.

/// A small random queue tree: (name, weight, children).
#[derive(Clone, Debug)]
struct Tree {
    name: String,
    weight: Option<u32>,
    max_apps: Option<u32>,
    children: Vec<Tree>,
}

fn queue_name() -> impl Strategy<Value = String> {
    // A top-level queue named root would be root itself.
    "[a-z][a-z0-9_-]{0,6}".prop_filter("not root", |n| n != "root")
}

fn tree() -> impl Strategy<Value = Vec<Tree>> {
    let leaf = (
        queue_name(),
        proptest::option::of(0u32..100),
        proptest::option::of(any::<u32>()),
    )
        .prop_map(|(name, weight, max_apps)| Tree {
            name,
            weight,
            max_apps,
            children: Vec::new(),
        });
    let node = leaf.prop_recursive(3, 20, 4, |inner| {
        (
            queue_name(),
            proptest::option::of(0u32..100),
            proptest::collection::vec(inner, 1..4),
        )
            .prop_map(|(name, weight, children)| Tree {
                name,
                weight,
                max_apps: None,
                children,
            })
    });
    proptest::collection::vec(node, 0..4)
}

fn write_tree(out: &mut String, trees: &[Tree], depth: usize) {
    for t in trees {
        let pad = "  ".repeat(depth);
        writeln!(out, "{pad}<queue name=\"{}\">", t.name).unwrap();
        if let Some(w) = t.weight {
            writeln!(out, "{pad}  <weight>{w}</weight>").unwrap();
        }
        if let Some(m) = t.max_apps {
            writeln!(out, "{pad}  <maxRunningApps>{m}</maxRunningApps>").unwrap();
        }
        write_tree(out, &t.children, depth + 1);
        writeln!(out, "{pad}</queue>").unwrap();
    }
}

fn collect(trees: &[Tree], parent: &str, out: &mut Vec<(String, bool, Option<u32>, Option<u32>)>) {
    for t in trees {
        let path = format!("{parent}.{}", t.name);
        out.push((path.clone(), !t.children.is_empty(), t.weight, t.max_apps));
        collect(&t.children, &path, out);
    }
}

proptest! {
    #[test]
    fn generated_trees_round_trip(trees in tree()) {
        let mut text = String::from("<allocations>\n");
        write_tree(&mut text, &trees, 1);
        text.push_str("</allocations>\n");
        let mut expected = Vec::new();
        collect(&trees, "root", &mut expected);
        let mut paths: Vec<&str> = expected.iter().map(|e| e.0.as_str()).collect();
        paths.sort_unstable();
        let has_duplicates = paths.windows(2).any(|w| w[0] == w[1]);
        let default_has_children = expected.iter().any(|e| e.0 == "root.default" && e.1);
        match parse_alloc_file(&text) {
            Ok(loaded) => {
                prop_assert!(!has_duplicates && !default_has_children);
                for (path, is_parent, weight, max_apps) in &expected {
                    let q = loaded.config.queue(&path.parse().unwrap()).unwrap();
                    prop_assert_eq!(q.kind == QueueKind::Parent, *is_parent);
                    prop_assert_eq!(q.weight, weight.map(f64::from));
                    prop_assert_eq!(q.max_running_apps, *max_apps);
                }
                let n_implicit = 1 + usize::from(!expected.iter().any(|e| e.0 == "root.default"));
                prop_assert_eq!(loaded.config.queues.len(), expected.len() + n_implicit);
                for (path, q) in &loaded.config.queues {
                    if let Some(parent) = path.parent() {
                        prop_assert_eq!(loaded.config.queues[&parent].kind, QueueKind::Parent);
                    }
                    prop_assert_eq!(&q.path, path);
                }
            }
            Err(err) => {
                prop_assert!(has_duplicates || default_has_children, "{}", err);
                for p in &err.problems {
                    prop_assert!(matches!(p.kind.code(), "duplicate-queue" | "queue-type-conflict"), "{}", p);
                }
            }
        }
    }

    #[test]
    fn any_text_gives_a_config_or_located_problems(text in "\\PC{0,200}") {
        check_located(&text)?;
    }

    #[test]
    fn damaged_files_give_a_config_or_located_problems(
        cut in 0usize..2000,
        len in 0usize..40,
        insert in "[<>/=\"a-z &;]{0,6}",
    ) {
        let original = include_str!("../../../../conf/examples/multi-tenant-drf.xml");
        let mut text = original.to_owned();
        let mut start = cut.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (start + len).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.replace_range(start..end, &insert);
        check_located(&text)?;
    }
}

const RULE_NAMES: [&str; 7] = [
    "specified",
    "user",
    "primaryGroup",
    "secondaryGroupExistingQueue",
    "nestedUserQueue",
    "default",
    "reject",
];

fn rule_xml(name: usize, create: bool, nested: Option<(usize, bool)>) -> String {
    let open = format!("<rule name=\"{}\" create=\"{create}\"", RULE_NAMES[name]);
    match nested {
        None => format!("{open}/>"),
        Some((n, c)) => format!("{open}>{}</rule>", rule_xml(n, c, None)),
    }
}

proptest! {
    #[test]
    fn accepted_rule_chains_end_in_exactly_one_terminal_rule(
        rules in proptest::collection::vec(
            (0..7usize, any::<bool>(), proptest::option::of((0..7usize, any::<bool>()))),
            1..5,
        )
    ) {
        let body: String = rules.iter().map(|(n, c, nested)| rule_xml(*n, *c, *nested)).collect();
        let text = format!("<allocations><queuePlacementPolicy>{body}</queuePlacementPolicy></allocations>");
        match parse_alloc_file(&text) {
            Ok(loaded) => {
                let policy = loaded.config.placement.unwrap();
                prop_assert_eq!(policy.rules.len(), rules.len());
                let (last, before) = policy.rules.split_last().unwrap();
                prop_assert!(last.is_terminal());
                prop_assert!(before.iter().all(|r| !r.is_terminal()));
            }
            Err(err) => {
                for p in &err.problems {
                    prop_assert!(
                        matches!(
                            p.kind.code(),
                            "unreachable-rule"
                                | "last-rule-not-terminal"
                                | "nested-rule-not-allowed"
                                | "missing-nested-rule"
                                | "invalid-parent-rule"
                                | "parent-rule-same-type"
                        ),
                        "{}", p
                    );
                }
            }
        }
    }
}

/// Every finding has a position inside the text and a path.
fn check_located(text: &str) -> Result<(), TestCaseError> {
    let n_lines = text.lines().count().max(1) + 1;
    let findings: Vec<(usize, usize, String)> = match parse_alloc_file(text) {
        Ok(loaded) => loaded
            .warnings
            .iter()
            .map(|w| (w.line, w.column, w.element.clone()))
            .collect(),
        Err(err) => {
            prop_assert!(!err.problems.is_empty());
            err.problems
                .iter()
                .map(|p| (p.line, p.column, p.element.clone()))
                .collect()
        }
    };
    for (line, column, element) in findings {
        prop_assert!(line >= 1 && line <= n_lines, "line {} of {}", line, n_lines);
        prop_assert!(column >= 1);
        prop_assert!(!element.is_empty());
    }
    Ok(())
}

#[test]
fn byte_order_mark_and_crlf() {
    check(
        "\u{feff}<?xml version=\"1.0\"?>\r\n<allocations>\r\n  <queue name=\"a\"><weight>3</weight></queue>\r\n</allocations>\r\n",
        expect![[r#"
            queues:
              root parent
              root.a leaf weight=3
              root.default leaf
            defaults: policy=fair maxApps=- userMaxApps=- maxResources=- maxAMShare=0.5 minShareTimeout=forever fairShareTimeout=forever fairShareThreshold=0.5
            placement: none
        "#]],
    );
    check_err(
        "\u{feff}<allocations>\r\n  <queue name=\"a\"><weight>x</weight></queue>\r\n</allocations>\r\n",
        expect![[r#"
            2:19 [not-a-number] allocations/queue[@name="a"]/weight: "x" is not a non-negative decimal number such as 1 or 2.5
        "#]],
    );
}

#[test]
fn an_empty_tag_is_reported_with_a_location() {
    for text in ["<>", "<></>", "<allocations><></></allocations>"] {
        let Err(err) = parse_alloc_file(text) else {
            continue;
        };
        for p in &err.problems {
            assert!(p.line >= 1 && p.column >= 1, "{p:?}");
            assert!(
                !p.element.is_empty(),
                "problem without an element path: {p:?}"
            );
        }
    }
}

/// Elements nested as deep as the text allows used to be built, walked and
/// dropped recursively: 100 000 levels overflowed the stack (an abort, not
/// an error). The reader now stops at a depth no allocation file needs.
#[test]
fn absurdly_deep_nesting_is_an_error_not_a_crash() {
    for open in ["<queue name=\"a\">", "<x>"] {
        let close = if open == "<x>" { "</x>" } else { "</queue>" };
        let text = format!(
            "<allocations>{}{}</allocations>",
            open.repeat(100_000),
            close.repeat(100_000)
        );
        let err = parse_alloc_file(&text).unwrap_err();
        assert_eq!(err.problems.len(), 1, "{err}");
        assert_eq!(err.problems[0].kind.code(), "malformed-xml");
        assert!(
            err.problems[0]
                .kind
                .to_string()
                .contains("nested more than 128 deep"),
            "{err}"
        );
    }
}

/// A queue nested deeper than the tree takes (`MAX_QUEUE_DEPTH` levels
/// below root) is refused where it is declared; the deepest allowed loads.
#[test]
fn queues_nested_deeper_than_the_tree_takes() {
    let nested = |depth: usize| {
        let mut text = String::from("<allocations>");
        for i in 1..=depth {
            write!(text, "\n<queue name=\"q{i}\">").unwrap();
        }
        text.push_str(&"</queue>".repeat(depth));
        text.push_str("</allocations>");
        text
    };
    let deepest = parse_alloc_file(&nested(crate::MAX_QUEUE_DEPTH)).unwrap();
    assert!(
        deepest
            .config
            .queues
            .keys()
            .any(|q| q.depth() == crate::MAX_QUEUE_DEPTH)
    );
    let err = parse_alloc_file(&nested(crate::MAX_QUEUE_DEPTH + 1)).unwrap_err();
    let rendered: Vec<String> = err
        .problems
        .iter()
        .map(|p| format!("{}:{} [{}] {}", p.line, p.column, p.kind.code(), p.kind))
        .collect();
    expect![[r#"
        [
            "66:8 [queue-too-deep] queue root.q1.q2.q3.q4.q5.q6.q7.q8.q9.q10.q11.q12.q13.q14.q15.q16.q17.q18.q19.q20.q21.q22.q23.q24.q25.q26.q27.q28.q29.q30.q31.q32.q33.q34.q35.q36.q37.q38.q39.q40.q41.q42.q43.q44.q45.q46.q47.q48.q49.q50.q51.q52.q53.q54.q55.q56.q57.q58.q59.q60.q61.q62.q63.q64.q65 is 65 levels below root; queues may be nested at most 64 levels deep",
        ]
    "#]]
    .assert_debug_eq(&rendered);
}
