//! Loads every allocation file in `conf/examples/` through the public API and
//! checks a few values of each, so the shipped examples never rot.
//!
//! The parser's own behaviour is tested beside it (`alloc_file/tests.rs`);
//! this file only guards the examples and their README.

use std::path::{Path, PathBuf};

use weft_model::{Duration, QueuePath, Resource, ResourceSpec};
use weft_queue_tree::alloc_file::{LoadedAllocConfig, parse_alloc_file};
use weft_queue_tree::{AllocConfig, AmShare, Policy, QueueConfig, QueueKind, RuleKind};

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conf/examples")
}

fn load(name: &str) -> LoadedAllocConfig {
    let path = examples_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse_alloc_file(&text).unwrap_or_else(|e| panic!("{name} does not load:\n{e}"))
}

fn queue<'c>(config: &'c AllocConfig, path: &str) -> &'c QueueConfig {
    let path = QueuePath::parse(path).unwrap();
    config
        .queue(&path)
        .unwrap_or_else(|| panic!("{path} is not configured"))
}

fn warning_codes(loaded: &LoadedAllocConfig) -> Vec<&'static str> {
    loaded.warnings.iter().map(|w| w.kind.code()).collect()
}

#[test]
fn every_example_loads_and_is_listed_in_the_readme() {
    let readme = std::fs::read_to_string(examples_dir().join("README.md")).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(examples_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".xml"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "examples: {names:?}");
    for name in &names {
        let loaded = load(name);
        assert!(loaded.config.queue(&QueuePath::root()).is_some());
        assert!(
            readme.contains(&format!("`{name}`")),
            "{name} has no line in conf/examples/README.md"
        );
    }
}

#[test]
fn hadoop_doc_example() {
    let loaded = load("hadoop-doc-example.xml");
    let c = &loaded.config;
    let sample = queue(c, "sample_queue");
    assert_eq!(sample.kind, QueueKind::Parent);
    assert_eq!(sample.weight, Some(2.0));
    assert_eq!(sample.min_resources, Some(Resource::new(10000, 0)));
    assert_eq!(
        sample.max_resources,
        Some(ResourceSpec::Absolute(Resource::new(90000, 0)))
    );
    assert!(queue(c, "sample_queue.sample_reservable_queue").reservation);
    assert_eq!(
        queue(c, "secondary_group_queue").kind,
        QueueKind::Parent,
        "type=\"parent\" without children"
    );
    assert_eq!(c.user_max_apps("sample_user"), Some(30));
    assert_eq!(c.user_max_apps("anyone"), Some(5));
    let rules = &c.placement.as_ref().unwrap().rules;
    assert_eq!(rules.len(), 4);
    assert_eq!(
        rules[3].kind,
        RuleKind::Default {
            queue: QueuePath::parse("root.sample_queue").unwrap()
        }
    );
    assert_eq!(
        warning_codes(&loaded),
        ["max-am-share-on-parent", "placement-target-is-parent"]
    );
}

#[test]
fn seed_003_preemption_experiment() {
    let loaded = load("seed-003-preemption-experiment.xml");
    let c = &loaded.config;
    // Hadoop rejects a fifo default; Weft applies it to leaves only.
    assert_eq!(c.default_policy, Policy::Fifo);
    assert_eq!(queue(c, "root").policy, None);
    assert_eq!(queue(c, "default").policy, Some(Policy::Fair));
    assert_eq!(queue(c, "default").kind, QueueKind::Leaf);
    assert_eq!(
        queue(c, "supertool").min_resources,
        Some(Resource::new(18000, 36))
    );
    assert_eq!(
        queue(c, "supertool").min_share_preemption_timeout,
        Some(Duration::from_secs(1))
    );
    // The legacy top-level spelling becomes the default fair-share timeout.
    assert_eq!(
        c.default_fair_share_preemption_timeout,
        Duration::from_secs(1)
    );
    assert_eq!(c.user_max_apps_default, Some(5));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn seed_004_mrv1_pools() {
    let loaded = load("seed-004-mrv1-pools.xml");
    let c = &loaded.config;
    assert_eq!(queue(c, "sample_pool").weight, Some(2.0));
    assert_eq!(queue(c, "sample_pool").min_resources, None);
    assert_eq!(c.user_max_apps("sample_user"), Some(6));
    assert_eq!(c.user_max_apps_default, Some(3));
    assert_eq!(
        warning_codes(&loaded),
        ["slot-minimum", "slot-minimum", "legacy-name", "legacy-name"]
    );
}

#[test]
fn multi_tenant_drf() {
    let loaded = load("multi-tenant-drf.xml");
    let c = &loaded.config;
    assert_eq!(c.default_policy, Policy::Drf);
    assert_eq!(c.queue_max_am_share_default, AmShare::Fraction(0.3));
    assert_eq!(
        c.default_min_share_preemption_timeout,
        Duration::from_secs(120)
    );
    let eng = queue(c, "engineering");
    assert_eq!(
        eng.max_resources,
        Some(ResourceSpec::Percentage([0.6, 0.6]))
    );
    assert_eq!(
        eng.acl_submit_apps
            .as_ref()
            .unwrap()
            .groups
            .first()
            .map(String::as_str),
        Some("engineers")
    );
    assert!(
        queue(c, "root")
            .acl_submit_apps
            .as_ref()
            .unwrap()
            .is_nobody()
    );
    assert_eq!(queue(c, "engineering.users").kind, QueueKind::Parent);
    assert_eq!(
        queue(c, "engineering.users").max_child_resources,
        Some(ResourceSpec::Percentage([0.1, 0.1]))
    );
    assert_eq!(
        queue(c, "engineering.etl").max_container_allocation,
        Some(Resource::new(16384, 8))
    );
    assert_eq!(queue(c, "analytics.dashboards").policy, Some(Policy::Fifo));
    assert_eq!(
        queue(c, "analytics.research").allow_preemption_from,
        Some(false)
    );
    assert_eq!(queue(c, "default").max_am_share, Some(AmShare::Disabled));
    let rules = &c.placement.as_ref().unwrap().rules;
    assert_eq!(rules[1].kind, RuleKind::NestedUserQueue);
    assert!(rules[1].is_terminal());
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn group_placement() {
    let loaded = load("group-placement.xml");
    let c = &loaded.config;
    let rules = &c.placement.as_ref().unwrap().rules;
    let kinds: Vec<&str> = rules.iter().map(|r| r.kind.name()).collect();
    assert_eq!(
        kinds,
        [
            "specified",
            "secondaryGroupExistingQueue",
            "nestedUserQueue",
            "reject"
        ]
    );
    assert_eq!(
        rules[2].parent.as_ref().map(|p| (p.kind.name(), p.create)),
        Some(("primaryGroup", false))
    );
    assert_eq!(queue(c, "marketing").kind, QueueKind::Parent);
    assert_eq!(queue(c, "finance.forecasting").policy, Some(Policy::Fifo));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}
