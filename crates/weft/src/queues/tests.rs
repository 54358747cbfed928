//! `weft queues`' tests: its flags, and each mode run on files written for
//! the test (or the shipped ones), asserting on the lines it prints, the
//! stream they go to and the exit status.

use clap::Parser;
use weft_test_support::ScratchDir;

use super::*;

/// `weft queues` alone, as clap reads it under `weft`.
#[derive(Parser, Debug)]
struct Cli {
    #[command(flatten)]
    args: QueuesArgs,
}

fn parse(line: &str) -> Result<QueuesArgs, clap::Error> {
    Cli::try_parse_from(std::iter::once("queues").chain(line.split_whitespace())).map(|c| c.args)
}

/// A directory of a test's own, removed at the end, holding `files`.
struct Dir(ScratchDir);

impl Dir {
    fn new(name: &str, files: &[(&str, &str)]) -> Dir {
        let dir = ScratchDir::new(&format!("queues-{name}"));
        for (file, text) in files {
            dir.write(file, text);
        }
        Dir(dir)
    }

    /// Runs `weft queues <line>`, `{dir}` standing for this directory.
    fn run(&self, line: &str) -> Report {
        let line = line.replace("{dir}", &self.0.path().display().to_string());
        let args = parse(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let mut report = execute(&args);
        let dir = self.0.path().display().to_string();
        report.stdout = report.stdout.replace(&dir, "{dir}");
        report.stderr = report.stderr.replace(&dir, "{dir}");
        report
    }
}

fn repo_conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conf")
}

/// The line of `text` that starts with `prefix`.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in\n{text}"))
}

/// The cells of the table row for `queue`.
fn row<'a>(text: &'a str, queue: &str) -> Vec<&'a str> {
    text.lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect::<Vec<_>>()
        })
        .find(|cells| cells.first() == Some(&queue))
        .unwrap_or_else(|| panic!("no row for {queue} in\n{text}"))
}

#[test]
fn arguments_are_read_per_mode() {
    let QueuesCommand::Check(a) = parse("check conf/fair-scheduler.xml --strict --conf conf")
        .unwrap()
        .command
    else {
        panic!("not check")
    };
    assert_eq!(a.source.file, Path::new("conf/fair-scheduler.xml"));
    assert_eq!(a.source.conf.as_deref(), Some(Path::new("conf")));
    assert!(a.strict);

    let QueuesCommand::Show(a) = parse("show f.xml --cluster 40960mb,40vcores --format json")
        .unwrap()
        .command
    else {
        panic!("not show")
    };
    assert_eq!(a.cluster, Some(Resource::new(40960, 40)));
    assert_eq!(a.format, Format::Json);
    let QueuesCommand::Show(a) = parse("show f.xml").unwrap().command else {
        panic!("not show")
    };
    assert_eq!((a.cluster, a.format), (None, Format::Text));
    let QueuesCommand::Show(a) = parse("show f.xml --cluster memory-mb=4096,vcores=4")
        .unwrap()
        .command
    else {
        panic!("not show")
    };
    assert_eq!(a.cluster, Some(Resource::new(4096, 4)));

    let QueuesCommand::Place(a) =
        parse("place f.xml --user alice --groups eng,staff --queue root.a")
            .unwrap()
            .command
    else {
        panic!("not place")
    };
    assert_eq!(a.user, "alice");
    assert_eq!(a.groups, Some(vec!["eng".to_owned(), "staff".to_owned()]));
    assert_eq!(a.queue.as_deref(), Some("root.a"));
    let QueuesCommand::Place(a) = parse("place f.xml --user alice").unwrap().command else {
        panic!("not place")
    };
    assert_eq!((a.groups, a.queue), (None, None));

    // Usage errors (exit status 2), naming what is wrong.
    use clap::error::ErrorKind::{
        InvalidValue, MissingRequiredArgument, UnknownArgument, ValueValidation,
    };
    for (line, kind, says) in [
        ("check", MissingRequiredArgument, "<FILE>"),
        ("place f.xml", MissingRequiredArgument, "--user"),
        (
            "show f.xml --cluster 50%",
            ValueValidation,
            "not percentages",
        ),
        (
            "show f.xml --cluster 10gb",
            ValueValidation,
            "unknown unit \"gb\"",
        ),
        ("show f.xml --format yaml", InvalidValue, "--format"),
        (
            "check f.xml --cluster 1mb,1vcores",
            UnknownArgument,
            "--cluster",
        ),
        (
            "place f.xml --user alice --strict",
            UnknownArgument,
            "--strict",
        ),
    ] {
        let e = parse(line).expect_err(line);
        assert_eq!(e.kind(), kind, "{line}: {e}");
        assert_eq!(e.exit_code(), 2, "{line}");
        assert!(e.to_string().contains(says), "{line}: {e}");
    }
}

#[test]
fn the_shipped_and_example_files_are_valid() {
    let conf = repo_conf();
    let mut files = vec![conf.join("fair-scheduler.xml")];
    let mut examples: Vec<PathBuf> = std::fs::read_dir(conf.join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 5, "{examples:?}");
    files.extend(examples);
    for file in &files {
        let args = parse(&format!("check {}", file.display())).unwrap();
        let report = execute(&args);
        assert_eq!(
            report.status,
            Status::Ok,
            "{}: {}",
            file.display(),
            report.stderr
        );
        assert!(report.stdout.contains(": valid: "), "{}", report.stdout);
    }
    // With the shipped site file, as `weft rm --conf conf` runs it.
    let args = parse(&format!(
        "check {} --conf {} --strict",
        files[0].display(),
        conf.display()
    ))
    .unwrap();
    let report = execute(&args);
    assert_eq!(report.status, Status::Ok, "{}", report.stderr);
    assert!(
        report.stdout.ends_with(
            "fair-scheduler.xml: valid: 8 queues (4 parents, 4 leaves), 2 placement rules, 0 warnings\n"
        ),
        "{}",
        report.stdout
    );
    assert_eq!(report.stderr, "");
}

#[test]
fn a_broken_file_is_invalid_with_every_problem_located() {
    let dir = Dir::new(
        "broken",
        &[(
            "broken.xml",
            r#"<allocations>
  <queue name="a">
    <weight>-1</weight>
    <maxResource>1024 mb, 1 vcores</maxResource>
  </queue>
  <queue name="b.c"/>
</allocations>"#,
        )],
    );
    for mode in ["check", "show", "place --user alice"] {
        let report = dir.run(&format!("{mode} {{dir}}/broken.xml"));
        assert_eq!(report.status.code(), 1, "{mode}");
        assert_eq!(report.stdout, "", "{mode}");
        assert_eq!(
            report.stderr,
            r#"error: {dir}/broken.xml:3:5: allocations/queue[@name="a"]/weight: "-1" is negative; expected a non-negative decimal number such as 1 or 2.5
error: {dir}/broken.xml:6:10: allocations/queue[@name="b.c"]: invalid queue name "b.c": a single queue name cannot contain '.'
warning: {dir}/broken.xml:4:5: allocations/queue[@name="a"]/maxResource: unknown element <maxResource> in a queue element is ignored; did you mean <maxResources>?
weft queues: {dir}/broken.xml is invalid: 2 problems, 1 warning
"#,
            "{mode}"
        );
    }
}

#[test]
fn warnings_pass_unless_strict() {
    let dir = Dir::new(
        "warned",
        &[(
            "warned.xml",
            "<allocations>\n  <queue name=\"a\"><maxResource>1 mb</maxResource></queue>\n</allocations>",
        )],
    );
    let report = dir.run("check {dir}/warned.xml");
    assert_eq!(report.status, Status::Ok);
    assert_eq!(
        report.stdout,
        "{dir}/warned.xml: valid: 3 queues (1 parent, 2 leaves), no placement rules (the site settings build them), 1 warning\n"
    );
    assert!(
        report
            .stderr
            .starts_with("warning: {dir}/warned.xml:2:19: allocations/queue[@name=\"a\"]/maxResource: unknown element"),
        "{}",
        report.stderr
    );
    let report = dir.run("check {dir}/warned.xml --strict");
    assert_eq!(report.status.code(), 1);
    assert_eq!(report.stdout, "");
    assert!(
        report.stderr.ends_with(
            "weft queues: {dir}/warned.xml is valid but has 1 warning, which --strict counts as problems\n"
        ),
        "{}",
        report.stderr
    );
}

#[test]
fn what_cannot_be_read_is_a_usage_error_naming_the_path() {
    let dir = Dir::new("unreadable", &[("ok.xml", "<allocations/>"), ("site", "")]);
    dir.0.write("bin.xml", [0xff, 0xfe, 0x00]);
    for (line, code, message) in [
        (
            "check {dir}/missing.xml",
            2,
            "weft queues: cannot read the allocation file {dir}/missing.xml: No such file or directory (os error 2)\n",
        ),
        (
            "show {dir}",
            2,
            "weft queues: cannot read the allocation file {dir}: not a regular file\n",
        ),
        (
            "check {dir}/bin.xml",
            1,
            "weft queues: cannot read the allocation file {dir}/bin.xml: stream did not contain valid UTF-8\n",
        ),
        (
            "check {dir}/ok.xml --conf {dir}/nope",
            2,
            "weft queues: --conf {dir}/nope: cannot read the directory: No such file or directory (os error 2)\n",
        ),
        (
            "place {dir}/ok.xml --user a --conf {dir}/site",
            2,
            "weft queues: --conf {dir}/site: not a directory\n",
        ),
    ] {
        let report = dir.run(line);
        assert_eq!(report.status.code(), code, "{line}");
        assert_eq!(report.stderr, message, "{line}");
        assert_eq!(report.stdout, "", "{line}");
    }
}

#[test]
fn site_files_with_problems_are_refused_as_at_start() {
    let dir = Dir::new(
        "bad-site",
        &[
            ("ok.xml", "<allocations/>"),
            (
                "yarn-site.xml",
                "<configuration><property><name>yarn.acl.enable</name><value>maybe</value></property></configuration>",
            ),
        ],
    );
    let report = dir.run("check {dir}/ok.xml --conf {dir}");
    assert_eq!(report.status.code(), 1);
    assert_eq!(
        report.stderr,
        "weft queues: the site files in {dir} would not start an RM:\n{dir}/yarn-site.xml: the site configuration has 1 problem:\n  line 1, column 54: property yarn.acl.enable: \"maybe\" is not a boolean (true or false)\n"
    );
}

/// Two queues weighted 1:3 under root, `root.default` weighted 0 so it
/// takes nothing, and a third capped at half the cluster.
const SHARES: &str = r#"<allocations>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <queue name="default"><weight>0</weight></queue>
  <queue name="one"><weight>1</weight></queue>
  <queue name="three">
    <weight>3</weight>
    <minResources>1024 mb, 1 vcores</minResources>
    <maxRunningApps>5</maxRunningApps>
    <maxAMShare>-1</maxAMShare>
    <aclSubmitApps>alice,bob eng</aclSubmitApps>
    <fairSharePreemptionTimeout>30</fairSharePreemptionTimeout>
    <fairSharePreemptionThreshold>0.8</fairSharePreemptionThreshold>
  </queue>
  <queue name="half">
    <weight>0</weight>
    <maxResources>memory-mb=50%, vcores=25%</maxResources>
    <queue name="x"/>
  </queue>
</allocations>"#;

#[test]
fn show_resolves_settings_and_computes_steady_shares_for_a_cluster() {
    let dir = Dir::new("shares", &[("shares.xml", SHARES)]);
    let report = dir.run("show {dir}/shares.xml --cluster 40960mb,40vcores");
    assert_eq!(report.status, Status::Ok, "{}", report.stderr);
    let out = &report.stdout;
    // Hand-computed: 40960 mb and 40 vcores split 1:3 (drf splits both).
    assert_eq!(
        row(out, "root"),
        [
            "root",
            "parent",
            "drf",
            "1",
            "0mb,0vcores",
            "∞",
            "40960mb,40vcores",
            "∞",
            "-",
            "-",
            "*",
            "*"
        ]
    );
    assert_eq!(
        row(out, "root.one"),
        [
            "root.one",
            "leaf",
            "drf",
            "1",
            "0mb,0vcores",
            "∞",
            "10240mb,10vcores",
            "∞",
            "0.5",
            "-",
            "nobody",
            "nobody"
        ]
    );
    assert_eq!(
        row(out, "root.three"),
        [
            "root.three",
            "leaf",
            "drf",
            "3",
            "1024mb,1vcores",
            "∞",
            "30720mb,30vcores",
            "5",
            "off",
            "fair=30s threshold=0.8",
            "alice,bob groups:eng",
            "nobody"
        ]
    );
    assert_eq!(row(out, "root.default")[6], "0mb,0vcores");
    // The percentage is resolved against the cluster; a weight of 0
    // leaves the subtree without a steady share.
    assert_eq!(row(out, "root.half")[5], "20480mb,10vcores");
    assert_eq!(row(out, "root.half.x")[6], "0mb,0vcores");
    // Children sit under their parent, indented by depth.
    let order: Vec<&str> = out
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split("  ").find(|c| !c.is_empty()).unwrap_or(""))
        .collect();
    assert_eq!(
        order,
        [
            "root",
            "root.default",
            "root.half",
            "root.half.x",
            "root.one",
            "root.three"
        ]
    );
    assert!(out.contains("\n    root.half.x "), "{out}");
    assert_eq!(
        line(out, "Cluster:"),
        "Cluster: 40960mb,40vcores; percentages are resolved against it."
    );
    assert_eq!(
        line(out, "Site settings:"),
        "Site settings: Hadoop's defaults (no --conf)."
    );
    assert_eq!(
        line(out, "Preemption is off"),
        "Preemption is off (yarn.scheduler.fair.preemption is false): the timeouts take no effect."
    );
    assert!(
        out.ends_with(
            "Placement rules (none in the file; built from yarn.scheduler.fair.user-as-default-queue=true and allow-undeclared-pools=true):\n  1. specified create=true\n  2. user create=true\n"
        ),
        "{out}"
    );
}

#[test]
fn without_a_cluster_percentages_stay_as_written_and_shares_are_left_out() {
    let dir = Dir::new("no-cluster", &[("shares.xml", SHARES)]);
    let report = dir.run("show {dir}/shares.xml");
    let out = &report.stdout;
    assert_eq!(
        line(out, "QUEUE"),
        "QUEUE            TYPE    POLICY  WEIGHT  MIN             MAX              MAXAPPS  AMSHARE  PREEMPTION              SUBMIT                ADMINISTER"
    );
    assert_eq!(row(out, "root.half")[5], "50%mb,25%vcores");
    assert_eq!(row(out, "root.one").len(), 11);
    assert!(!out.contains("Cluster:"), "{out}");
}

#[test]
fn show_as_json_has_the_documented_fields() {
    let dir = Dir::new("json", &[("shares.xml", SHARES)]);
    let queue = |v: &serde_json::Value, path: &str| -> serde_json::Value {
        v["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["path"] == path)
            .unwrap_or_else(|| panic!("no {path}"))
            .clone()
    };
    let report = dir.run("show {dir}/shares.xml --cluster 40960mb,40vcores --format json");
    let v: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(v["file"], "{dir}/shares.xml");
    assert_eq!(
        v["cluster"],
        serde_json::json!({"memory_mb": 40960, "vcores": 40})
    );
    let three = queue(&v, "root.three");
    assert_eq!(
        three["steady_fair_share"],
        serde_json::json!({"memory_mb": 30720, "vcores": 30})
    );
    assert_eq!(three["parent"], "root");
    assert_eq!(three["depth"], 1);
    assert_eq!(three["type"], "leaf");
    assert_eq!(three["weight"], 3.0);
    assert_eq!(three["max_running_apps"], 5);
    assert_eq!(three["max_am_share"], -1.0);
    assert_eq!(
        three["max_resources"],
        serde_json::json!({"memory_mb": null, "vcores": null})
    );
    assert_eq!(three["fair_share_preemption_timeout_ms"], 30000);
    assert_eq!(
        three["min_share_preemption_timeout_ms"],
        serde_json::Value::Null
    );
    assert_eq!(three["fair_share_preemption_threshold"], 0.8);
    assert_eq!(
        three["acl_submit_apps"],
        serde_json::json!({"everyone": false, "users": ["alice", "bob"], "groups": ["eng"]})
    );
    let half = queue(&v, "root.half");
    assert_eq!(
        half["max_resources"],
        serde_json::json!({"memory_mb": 20480, "vcores": 10})
    );
    assert_eq!(
        half["max_resources_percent"],
        serde_json::json!({"memory_mb": 50.0, "vcores": 25.0})
    );
    assert_eq!(half["children"], serde_json::json!(["root.half.x"]));
    assert_eq!(queue(&v, "root")["max_am_share"], serde_json::Value::Null);
    assert_eq!(v["placement"]["source"], "site");
    assert_eq!(
        v["placement"]["rules"][1],
        serde_json::json!({"name": "user", "create": true, "queue": null, "parent": null})
    );
    assert_eq!(v["acl_enable"], false);
    // Without a cluster: no shares, and a percentage is not resolved.
    let report = dir.run("show {dir}/shares.xml --format json");
    let v: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
    assert_eq!(v["cluster"], serde_json::Value::Null);
    assert_eq!(
        queue(&v, "root.one")["steady_fair_share"],
        serde_json::Value::Null
    );
    assert_eq!(
        queue(&v, "root.half")["max_resources"],
        serde_json::Value::Null
    );
    assert_eq!(
        queue(&v, "root.half")["max_resources_percent"]["memory_mb"],
        50.0
    );
}

/// Rules that exercise each kind of answer, and ACLs that keep root closed.
const PLACEMENT: &str = r#"<allocations>
  <queue name="root">
    <aclSubmitApps> </aclSubmitApps>
    <aclAdministerApps>admin</aclAdministerApps>
    <queue name="eng"><aclSubmitApps> eng</aclSubmitApps></queue>
    <queue name="alice"><aclSubmitApps>alice</aclSubmitApps></queue>
    <queue name="ops"><aclSubmitApps>carol</aclSubmitApps></queue>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="user" create="false"/>
    <rule name="primaryGroup" create="false"/>
    <rule name="reject"/>
  </queuePlacementPolicy>
</allocations>"#;

fn placement_dir(name: &str) -> Dir {
    Dir::new(
        name,
        &[
            ("alloc.xml", PLACEMENT),
            (
                "weft-site.xml",
                "<configuration><property><name>yarn.acl.enable</name><value>true</value></property></configuration>",
            ),
        ],
    )
}

#[test]
fn place_by_the_user_rule() {
    let dir = placement_dir("place-user");
    let report = dir.run("place {dir}/alloc.xml --user alice");
    assert_eq!(report.status, Status::Ok, "{}", report.stderr);
    assert_eq!(
        report.stdout,
        r#"user:     alice
groups:   none: without --groups the user is in no group, so rules that need groups do not match (primaryGroup rejects, secondaryGroupExistingQueue passes on); the operating system's groups are not read: give them with --groups g1,g2, primary first
queue:    none named (a submission without a queue)
settings: Hadoop's defaults (no --conf)
rules:    the file's queuePlacementPolicy
  1. specified create=false: passed on: no queue was requested
  2. user create=false: places the app in root.alice
  3. primaryGroup create=false: not reached
  4. reject: not reached
placed:   root.alice, by rule 2 (user)
created:  no: root.alice is a configured leaf queue
access:   alice may submit to root.alice: aclSubmitApps or aclAdministerApps of root.alice or a queue above it lets the user in
verdict:  accepted into root.alice
"#
    );
}

#[test]
fn place_by_the_primary_group_rule_with_groups() {
    let dir = placement_dir("place-group");
    let report = dir.run("place {dir}/alloc.xml --user bob --groups eng,staff");
    assert_eq!(report.status, Status::Ok, "{}", report.stdout);
    let out = &report.stdout;
    assert_eq!(line(out, "groups:"), "groups:   eng, staff");
    assert_eq!(
        line(out, "  2."),
        "  2. user create=false: passed on: queue root.bob is not a configured queue and the rule may not create queues"
    );
    assert_eq!(
        line(out, "  3."),
        "  3. primaryGroup create=false: places the app in root.eng"
    );
    assert_eq!(
        line(out, "placed:"),
        "placed:   root.eng, by rule 3 (primaryGroup)"
    );
    assert_eq!(line(out, "verdict:"), "verdict:  accepted into root.eng");
}

#[test]
fn place_by_the_specified_rule_with_a_queue() {
    let dir = placement_dir("place-specified");
    let report = dir.run("place {dir}/alloc.xml --user bob --groups eng --queue root.eng");
    assert_eq!(report.status, Status::Ok, "{}", report.stdout);
    let out = &report.stdout;
    assert_eq!(line(out, "queue:"), "queue:    root.eng");
    assert_eq!(
        line(out, "  1."),
        "  1. specified create=false: places the app in root.eng"
    );
    assert_eq!(line(out, "  2."), "  2. user create=false: not reached");
    assert_eq!(
        line(out, "placed:"),
        "placed:   root.eng, by rule 1 (specified)"
    );
    // `default` names no queue, as in Hadoop.
    let report = dir.run("place {dir}/alloc.xml --user alice --queue default");
    assert_eq!(
        line(&report.stdout, "queue:"),
        "queue:    default (taken as no queue named, as Hadoop takes it)"
    );
    assert_eq!(
        line(&report.stdout, "placed:"),
        "placed:   root.alice, by rule 2 (user)"
    );
}

#[test]
fn place_rejects_and_says_why() {
    let dir = placement_dir("place-reject");
    // Groups given, none with a queue: the reject rule.
    let report = dir.run("place {dir}/alloc.xml --user dave --groups sales");
    assert_eq!(report.status.code(), 1);
    let out = &report.stdout;
    assert_eq!(
        line(out, "  3."),
        "  3. primaryGroup create=false: passed on: queue root.sales is not a configured queue and the rule may not create queues"
    );
    assert_eq!(line(out, "  4."), "  4. reject: rejects the app");
    assert_eq!(
        line(out, "placed:"),
        "placed:   nowhere: rejected by rule 4 (reject)"
    );
    assert_eq!(
        line(out, "verdict:"),
        "verdict:  rejected: by the placement rules: rejected by rule 4 (reject)"
    );
    assert!(!out.contains("access:"), "{out}");
    // No groups given: primaryGroup refuses, and the answer says why.
    let report = dir.run("place {dir}/alloc.xml --user dave");
    assert_eq!(report.status.code(), 1);
    let out = &report.stdout;
    assert_eq!(
        line(out, "  2."),
        "  2. user create=false: passed on: queue root.dave is not a configured queue and the rule may not create queues"
    );
    assert_eq!(
        line(out, "  3."),
        "  3. primaryGroup create=false: needs the user's primary group and there is none, so the app is rejected"
    );
    assert_eq!(
        line(out, "placed:"),
        "placed:   nowhere: user dave has no groups, needed by rule 3 (primaryGroup) (no --groups given)"
    );
}

#[test]
fn place_checks_queue_acls_whatever_yarn_acl_enable_says() {
    let dir = placement_dir("place-acl");
    // Off (Hadoop's default): the scheduler still refuses.
    let report = dir.run("place {dir}/alloc.xml --user bob --queue ops");
    assert_eq!(report.status.code(), 1);
    let out = &report.stdout;
    assert_eq!(
        line(out, "placed:"),
        "placed:   root.ops, by rule 1 (specified)"
    );
    assert_eq!(
        line(out, "access:"),
        "access:   bob may not submit to root.ops: no aclSubmitApps or aclAdministerApps of root.ops or a queue above it names the user or one of the groups given; yarn.acl.enable is off, but the scheduler checks queue ACLs whatever it says, as Hadoop's does, and rejects the application (state FAILED)"
    );
    assert_eq!(
        line(out, "verdict:"),
        "verdict:  rejected: user bob may not submit to queue root.ops (the application is recorded as FAILED)"
    );
    // On: turned away before the application exists.
    let report = dir.run("place {dir}/alloc.xml --user bob --queue ops --conf {dir}");
    assert_eq!(report.status.code(), 1);
    let out = &report.stdout;
    assert_eq!(line(out, "settings:"), "settings: the site files in {dir}");
    assert_eq!(
        line(out, "verdict:"),
        "verdict:  rejected: user bob may not submit to queue root.ops: denied by the ACLs of root.ops and its parents (turned away before the application exists)"
    );
    // An administrator of root may submit anywhere.
    let report = dir.run("place {dir}/alloc.xml --user admin --queue ops --conf {dir}");
    assert_eq!(report.status, Status::Ok, "{}", report.stdout);
}

#[test]
fn place_says_when_the_queue_would_be_created() {
    let dir = Dir::new(
        "place-create",
        &[(
            "alloc.xml",
            "<allocations><queue name=\"a\"><maxRunningApps>0</maxRunningApps></queue></allocations>",
        )],
    );
    let report = dir.run("place {dir}/alloc.xml --user erin.e");
    assert_eq!(report.status, Status::Ok, "{}", report.stdout);
    let out = &report.stdout;
    assert_eq!(
        line(out, "rules:"),
        "rules:    none in the file; built from yarn.scheduler.fair.user-as-default-queue=true and allow-undeclared-pools=true"
    );
    assert_eq!(
        line(out, "placed:"),
        "placed:   root.erin_dot_e, by rule 2 (user)"
    );
    assert_eq!(
        line(out, "created:"),
        "created:  yes: root.erin_dot_e is not a configured queue; rule 2 (user) may create queues, so the RM creates it (and any missing parent) at submission and removes it once it is empty"
    );
    // Its nearest existing queue is root, whose lists let everybody in.
    assert_eq!(
        line(out, "access:"),
        "access:   erin.e may submit to root.erin_dot_e: aclSubmitApps or aclAdministerApps of root lets the user in"
    );
    assert_eq!(
        line(out, "verdict:"),
        "verdict:  accepted into root.erin_dot_e"
    );
    // A queue that takes no more applications: accepted, and waiting.
    let report = dir.run("place {dir}/alloc.xml --user erin --queue a");
    assert_eq!(report.status, Status::Ok);
    assert!(
        line(&report.stdout, "verdict:")
            .starts_with("verdict:  accepted into root.a, but it would wait: "),
        "{}",
        report.stdout
    );
}

#[test]
fn the_table_pads_by_characters() {
    let rows = vec![
        vec!["A".to_owned(), "B".to_owned(), "C".to_owned()],
        vec!["∞".to_owned(), "long cell".to_owned(), String::new()],
    ];
    assert_eq!(table(&rows), "A  B          C\n∞  long cell\n");
    assert_eq!(resource_text(Resource::UNBOUNDED), "∞");
    assert_eq!(
        resource_text(Resource::new(4096, u64::MAX)),
        "4096mb,∞vcores"
    );
    assert_eq!(
        spec_text(&ResourceSpec::Percentage([0.07, 1.0])),
        "7%mb,100%vcores"
    );
    assert_eq!(acl_text(&Acl::parse(" admins,ops")), "groups:admins,ops");
    assert_eq!(acl_text(&Acl::parse(" ")), "nobody");
}
