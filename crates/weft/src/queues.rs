//! `weft queues check|show|place`: an allocation file looked at offline, as
//! an RM would take it, without starting one: whether it loads (every
//! problem and warning with its place), what it means once defaults,
//! inheritance and percentages are resolved (with steady fair shares for a
//! given cluster), and where a given user's application would go.
//!
//! This module reads the files, runs the libraries and words the answers.
//! Parsing and validating are `weft_queue_tree::parse_alloc_file`'s, the tree,
//! its settings and steady fair shares `QueueTree`'s, the placement trace
//! `PlacementPolicy::place`'s, the verdict on a submission `weft_core`'s (a
//! scheduler built from the file, as the RM builds one) and the site files'
//! reading `weft_rm::config`'s, so that what it says is what an RM started
//! with the same files would do. It never asks the operating system for a
//! user's groups: the tool is offline, and the groups are given with
//! `--groups`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;
use weft_core::{AppState, CoreSettings, Input, Reply, ResourceManager, Submission, SubmitError};
use weft_model::{
    AppPriority, Duration, QueuePath, Resource, ResourceSpec, ResourceType, SpecKind, Time,
    parse_resource,
};
use weft_queue_tree::site::SchedulerSettings;
use weft_queue_tree::{
    Acl, AllocConfig, AmShare, GroupMapping, LoadedAllocConfig, Placement, PlacementPolicy,
    PlacementRejection, PlacementRequest, PlacementRule, QueueAccess, QueueKind, QueueLookup,
    QueueSnapshot, QueueTree, RuleKind, StaticGroups, parse_alloc_file,
};
use weft_rm::ConfigError;
use weft_rm::config::{read_config_file, read_core_settings};

/// `weft queues`: one of three modes.
#[derive(Args, Debug)]
pub(crate) struct QueuesArgs {
    #[command(subcommand)]
    command: QueuesCommand,
}

#[derive(Subcommand, Debug)]
enum QueuesCommand {
    /// Validate an allocation file as the RM would on loading it: exit 0
    /// when valid (warnings on stderr), 1 when not, 2 for a usage error.
    Check(CheckArgs),
    /// Print the queue tree with each queue's effective settings (and
    /// steady fair shares with --cluster).
    Show(ShowArgs),
    /// Run the file's placement rules for one submission: the queue chosen
    /// and by which rule, or why the application would be rejected.
    Place(PlaceArgs),
}

/// The files every mode reads.
#[derive(Args, Debug)]
struct Source {
    /// The allocation file (fair-scheduler.xml).
    file: PathBuf,
    /// A configuration directory, as for `weft rm --conf`: its site files
    /// (core-site.xml, yarn-site.xml, weft-site.xml) give the scheduler's
    /// settings, yarn.scheduler.* and yarn.acl.enable (default: Hadoop's).
    /// Its own allocation file is not read.
    #[arg(long, value_name = "DIR")]
    conf: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct CheckArgs {
    #[command(flatten)]
    source: Source,
    /// Fail (exit 1) on warnings too, the allocation file's or the site files'.
    #[arg(long)]
    strict: bool,
}

#[derive(Args, Debug)]
struct ShowArgs {
    #[command(flatten)]
    source: Source,
    /// The cluster's size, such as 40960mb,40vcores: percentages are
    /// resolved against it and steady fair shares are shown.
    #[arg(long, value_name = "SIZE", value_parser = cluster_size)]
    cluster: Option<Resource>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// An indented table.
    Text,
    /// One JSON document (field names in docs/operations.md).
    Json,
}

#[derive(Args, Debug)]
struct PlaceArgs {
    #[command(flatten)]
    source: Source,
    /// The submitting user.
    #[arg(long, value_parser = NonEmptyStringValueParser::new())]
    user: String,
    /// The user's groups, primary first (comma-separated). Without it the
    /// user is in no group: the operating system is not asked.
    #[arg(long, value_delimiter = ',', num_args = 1)]
    groups: Option<Vec<String>>,
    /// The queue named at submission (default: none).
    #[arg(long)]
    queue: Option<String>,
}

impl QueuesCommand {
    fn source(&self) -> &Source {
        match self {
            QueuesCommand::Check(a) => &a.source,
            QueuesCommand::Show(a) => &a.source,
            QueuesCommand::Place(a) => &a.source,
        }
    }
}

/// `--cluster`: the allocation file's absolute resource forms (`40960mb,40vcores`,
/// `40960 mb, 40 vcores`, `memory-mb=40960,vcores=40`).
fn cluster_size(text: &str) -> Result<Resource, String> {
    // Refused before parsing: the parser's verdict on a percentage names
    // minResources, whose form this borrows, which would mean nothing here.
    if text.contains('%') {
        return Err(
            "expected absolute amounts such as 40960mb,40vcores, not percentages".to_owned(),
        );
    }
    parse_resource(text, SpecKind::Min)
        .map_err(|e| format!("{}; expected a size such as 40960mb,40vcores", e.reason))?
        .absolute()
        .ok_or_else(|| "expected absolute amounts such as 40960mb,40vcores".to_owned())
}

/// Runs `weft queues`, printing its answer, and returns its exit status.
#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the answer goes to stdout, problems and warnings to stderr"
)]
pub(crate) fn run(args: QueuesArgs) -> ExitCode {
    let report = execute(&args);
    eprint!("{}", report.stderr);
    print!("{}", report.stdout);
    ExitCode::from(report.status.code())
}

/// What a run prints and how it ends, kept apart from printing so that
/// tests read it.
#[derive(Debug, Default)]
struct Report {
    stdout: String,
    stderr: String,
    status: Status,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Status {
    /// Valid, shown, or the application would be accepted.
    #[default]
    Ok,
    /// Invalid (or, for `place`, rejected).
    Failed,
    /// The command could not be carried out as given: a file or directory
    /// that cannot be read.
    Usage,
}

impl Status {
    fn code(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Failed => 1,
            Status::Usage => 2,
        }
    }
}

impl Report {
    fn out(&mut self, line: impl AsRef<str>) {
        self.stdout.push_str(line.as_ref());
        self.stdout.push('\n');
    }

    fn err(&mut self, line: impl AsRef<str>) {
        self.stderr.push_str(line.as_ref());
        self.stderr.push('\n');
    }

    fn fail(&mut self, status: Status, message: impl AsRef<str>) {
        self.err(format!("weft queues: {}", message.as_ref()));
        self.status = status;
    }
}

fn execute(args: &QueuesArgs) -> Report {
    let mut report = Report::default();
    let Some(inputs) = load(args.command.source(), &mut report) else {
        return report;
    };
    match &args.command {
        QueuesCommand::Check(a) => check(&inputs, a.strict, &mut report),
        QueuesCommand::Show(a) => show(&inputs, a.cluster, a.format, &mut report),
        QueuesCommand::Place(a) => place(&inputs, a, &mut report),
    }
    report
}

/// A valid allocation file and the settings it is read with.
struct Inputs {
    /// The file as named on the command line, for messages.
    name: String,
    loaded: LoadedAllocConfig,
    settings: CoreSettings,
    /// Where `settings` came from, in words.
    settings_source: String,
    /// Warnings printed, the site files' and the allocation file's.
    n_warnings: usize,
}

/// Reads the files; `None` (with the report filled in) when there is
/// nothing to look at.
fn load(source: &Source, report: &mut Report) -> Option<Inputs> {
    let name = source.file.display().to_string();
    let text = match read_config_file(&source.file) {
        Ok(text) => text,
        Err(e) => {
            // A file that is there but is not text, or is too large, is a
            // bad file; one that is missing, unreadable or not a file at all
            // is a mistake on the command line.
            let status = if e.kind() == ErrorKind::InvalidData {
                Status::Failed
            } else {
                Status::Usage
            };
            report.fail(
                status,
                format!("cannot read the allocation file {name}: {e}"),
            );
            return None;
        }
    };
    let mut n_warnings = 0;
    let (settings, settings_source) = match &source.conf {
        None => (
            CoreSettings::default(),
            "Hadoop's defaults (no --conf)".to_owned(),
        ),
        Some(dir) => {
            let (settings, warnings) = site_settings(dir, report)?;
            n_warnings += warnings.len();
            for w in warnings {
                report.err(format!("warning: {w}"));
            }
            (settings, format!("the site files in {}", dir.display()))
        }
    };
    let loaded = match parse_alloc_file(&text) {
        Ok(loaded) => loaded,
        Err(e) => {
            for p in &e.problems {
                report.err(format!("error: {name}:{p}"));
            }
            for w in &e.warnings {
                report.err(format!("warning: {name}:{w}"));
            }
            report.fail(
                Status::Failed,
                format!(
                    "{name} is invalid: {}, {}",
                    count(e.problems.len(), "problem"),
                    count(e.warnings.len(), "warning")
                ),
            );
            return None;
        }
    };
    n_warnings += loaded.warnings.len();
    for w in &loaded.warnings {
        report.err(format!("warning: {name}:{w}"));
    }
    Some(Inputs {
        name,
        loaded,
        settings,
        settings_source,
        n_warnings,
    })
}

/// The settings of the site files in `dir`, as `weft rm --conf DIR` reads them.
fn site_settings(dir: &Path, report: &mut Report) -> Option<(CoreSettings, Vec<String>)> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            report.fail(
                Status::Usage,
                format!("--conf {}: not a directory", dir.display()),
            );
            return None;
        }
        Err(e) => {
            report.fail(
                Status::Usage,
                format!("--conf {}: cannot read the directory: {e}", dir.display()),
            );
            return None;
        }
    }
    match read_core_settings(dir) {
        Ok(read) => Some(read),
        Err(e @ ConfigError::Read { .. }) => {
            report.fail(Status::Usage, e.to_string());
            None
        }
        Err(e) => {
            report.fail(
                Status::Failed,
                format!(
                    "the site files in {} would not start an RM:\n{e}",
                    dir.display()
                ),
            );
            None
        }
    }
}

/// A scheduler holding the file's queues, built as the RM builds its own
/// (effective settings, placement rules, admission), so that what is
/// counted, shown and decided here is what the RM would hold.
fn build_scheduler(inputs: &Inputs) -> ResourceManager {
    ResourceManager::new(
        inputs.loaded.config.clone(),
        inputs.settings.clone(),
        Time::ZERO,
    )
}

fn check(inputs: &Inputs, strict: bool, report: &mut Report) {
    // Building the tree never refuses a file the parser took (a live RM
    // defers what it cannot apply yet, which a fresh tree never has to);
    // it is built so that what is counted is what the RM would hold.
    let rm = build_scheduler(inputs);
    let queues = rm.tree().snapshot();
    let n_parents = queues
        .iter()
        .filter(|q| q.kind == QueueKind::Parent)
        .count();
    let (policy, from_file) = policy_in_force(&inputs.loaded.config, &inputs.settings.scheduler);
    let rules = if from_file {
        count(policy.rules.len(), "placement rule")
    } else {
        "no placement rules (the site settings build them)".to_owned()
    };
    let warnings = count(inputs.n_warnings, "warning");
    if strict && inputs.n_warnings > 0 {
        report.fail(
            Status::Failed,
            format!(
                "{} is valid but has {warnings}, which --strict counts as problems",
                inputs.name
            ),
        );
        return;
    }
    let n_leaves = queues.len() - n_parents;
    report.out(format!(
        "{}: valid: {} ({n_parents} {}, {n_leaves} {}), {rules}, {warnings}",
        inputs.name,
        count(queues.len(), "queue"),
        if n_parents == 1 { "parent" } else { "parents" },
        if n_leaves == 1 { "leaf" } else { "leaves" },
    ));
}

/// The rules placement runs: the file's, else those the site flags build,
/// as the core picks them; true when they are the file's.
fn policy_in_force(config: &AllocConfig, site: &SchedulerSettings) -> (PlacementPolicy, bool) {
    match &config.placement {
        Some(policy) => (policy.clone(), true),
        None => (
            PlacementPolicy::from_site_flags(
                site.user_as_default_queue,
                site.allow_undeclared_pools,
            ),
            false,
        ),
    }
}

fn show(inputs: &Inputs, cluster: Option<Resource>, format: Format, report: &mut Report) {
    let mut tree = build_scheduler(inputs).tree().clone();
    if let Some(cluster) = cluster {
        tree.set_cluster_capacity(cluster);
    }
    let view = ShowView::new(inputs, &tree, cluster);
    match format {
        Format::Text => report.stdout.push_str(&view.text()),
        Format::Json => match serde_json::to_string_pretty(&view.json()) {
            Ok(json) => report.out(json),
            Err(e) => report.fail(Status::Failed, format!("cannot write JSON: {e}")),
        },
    }
}

/// What `show` shows, whatever the format.
struct ShowView<'a> {
    inputs: &'a Inputs,
    /// Every queue, each parent before its children, siblings by name.
    queues: Vec<QueueSnapshot>,
    cluster: Option<Resource>,
}

impl<'a> ShowView<'a> {
    fn new(inputs: &'a Inputs, tree: &QueueTree, cluster: Option<Resource>) -> ShowView<'a> {
        let mut by_path: BTreeMap<QueuePath, QueueSnapshot> = tree
            .snapshot()
            .into_iter()
            .map(|q| (q.path.clone(), q))
            .collect();
        // Depth first from root, so each queue sits under its parent: path
        // order would not do (`root.a-b` sorts between `root.a` and `root.a.x`).
        let mut queues = Vec::with_capacity(by_path.len());
        let mut stack = vec![QueuePath::root()];
        while let Some(path) = stack.pop() {
            let Some(q) = by_path.remove(&path) else {
                continue;
            };
            stack.extend(q.children.iter().rev().cloned());
            queues.push(q);
        }
        ShowView {
            inputs,
            queues,
            cluster,
        }
    }

    fn config(&self) -> &AllocConfig {
        &self.inputs.loaded.config
    }

    /// The max share as it means something: resolved (against the cluster
    /// when a percentage), or `None` for a percentage with no cluster given.
    fn max_share(&self, q: &QueueSnapshot) -> Option<Resource> {
        match (q.max_share_spec, self.cluster) {
            (Some(ResourceSpec::Percentage(_)), None) => None,
            _ => Some(q.max_share),
        }
    }

    fn text(&self) -> String {
        let mut header = vec!["QUEUE", "TYPE", "POLICY", "WEIGHT", "MIN", "MAX"];
        if self.cluster.is_some() {
            header.push("STEADY FAIR SHARE");
        }
        header.extend(["MAXAPPS", "AMSHARE", "PREEMPTION", "SUBMIT", "ADMINISTER"]);
        let mut rows = vec![header.into_iter().map(str::to_owned).collect::<Vec<_>>()];
        for q in &self.queues {
            let mut row = vec![
                format!("{}{}", "  ".repeat(q.path.depth()), q.path),
                kind_name(q.kind).to_owned(),
                q.policy.name().to_owned(),
                q.weight.to_string(),
                resource_text(q.min_share),
                match (self.max_share(q), q.max_share_spec) {
                    (Some(max), _) => resource_text(max),
                    (None, Some(spec)) => spec_text(&spec),
                    (None, None) => resource_text(q.max_share),
                },
            ];
            if self.cluster.is_some() {
                row.push(resource_text(q.steady_fair_share));
            }
            row.extend([
                q.max_running_apps
                    .map_or_else(|| "∞".to_owned(), |n| n.to_string()),
                match (q.kind, q.max_am_share) {
                    (QueueKind::Parent, _) => "-".to_owned(),
                    (QueueKind::Leaf, AmShare::Fraction(f)) => f.to_string(),
                    (QueueKind::Leaf, AmShare::Disabled) => "off".to_owned(),
                },
                preemption_text(q),
                acl_text(&q.acl_submit_apps),
                acl_text(&q.acl_administer_apps),
            ]);
            rows.push(row);
        }
        let mut out = table(&rows);
        out.push('\n');
        if let Some(cluster) = self.cluster {
            let _ = writeln!(
                out,
                "Cluster: {}; percentages are resolved against it.",
                resource_text(cluster)
            );
        } else {
            out.push_str(
                "No --cluster: percentage maxima are shown as written, and no fair shares.\n",
            );
        }
        let _ = writeln!(out, "Site settings: {}.", self.inputs.settings_source);
        out.push_str(
            "ACLs are each queue's own lists; a parent's lists also let users in, and ADMINISTER also allows submitting.\n",
        );
        let scheduler = &self.inputs.settings.scheduler;
        let any_timeout = self.queues.iter().any(|q| {
            !q.min_share_preemption_timeout.is_forever()
                || !q.fair_share_preemption_timeout.is_forever()
        });
        if any_timeout && !scheduler.preemption {
            out.push_str(
                "Preemption is off (yarn.scheduler.fair.preemption is false): the timeouts take no effect.\n",
            );
        }
        let (policy, from_file) = policy_in_force(self.config(), scheduler);
        if from_file {
            out.push_str("Placement rules (queuePlacementPolicy):\n");
        } else {
            let _ = writeln!(
                out,
                "Placement rules (none in the file; built from yarn.scheduler.fair.user-as-default-queue={} and allow-undeclared-pools={}):",
                scheduler.user_as_default_queue, scheduler.allow_undeclared_pools
            );
        }
        for (idx, rule) in policy.rules.iter().enumerate() {
            let _ = writeln!(out, "  {}. {}", idx + 1, rule_text(rule));
        }
        let config = self.config();
        let mut limits: Vec<String> = config
            .user_max_apps_default
            .map(|n| format!("default {n}"))
            .into_iter()
            .collect();
        limits.extend(config.user_max_apps.iter().map(|(u, n)| format!("{u} {n}")));
        if !limits.is_empty() {
            let _ = writeln!(out, "Running apps per user: {}", limits.join(", "));
        }
        out
    }

    fn json(&self) -> ShowJson {
        let config = self.config();
        let scheduler = &self.inputs.settings.scheduler;
        let (policy, from_file) = policy_in_force(config, scheduler);
        ShowJson {
            file: self.inputs.name.clone(),
            cluster: self.cluster.map(ResourceJson::from),
            queues: self
                .queues
                .iter()
                .map(|q| QueueJson {
                    path: q.path.to_string(),
                    parent: q.path.parent().map(|p| p.to_string()),
                    depth: q.path.depth(),
                    kind: kind_name(q.kind),
                    policy: q.policy.name(),
                    weight: q.weight,
                    min_resources: q.min_share.into(),
                    max_resources: self.max_share(q).map(ResourceJson::from),
                    max_resources_percent: q.max_share_spec.as_ref().and_then(percent_json),
                    max_child_resources: q.max_child_share.and_then(|spec| match spec {
                        ResourceSpec::Percentage(_) => {
                            self.cluster.map(|c| spec.resolve(&c).into())
                        }
                        ResourceSpec::Absolute(r) => Some(r.into()),
                    }),
                    max_child_resources_percent: q.max_child_share.as_ref().and_then(percent_json),
                    max_running_apps: q.max_running_apps,
                    max_am_share: match (q.kind, q.max_am_share) {
                        (QueueKind::Parent, _) => None,
                        (QueueKind::Leaf, AmShare::Fraction(f)) => Some(f),
                        (QueueKind::Leaf, AmShare::Disabled) => Some(-1.0),
                    },
                    max_container_allocation: q.max_container_allocation.into(),
                    min_share_preemption_timeout_ms: millis(q.min_share_preemption_timeout),
                    fair_share_preemption_timeout_ms: millis(q.fair_share_preemption_timeout),
                    fair_share_preemption_threshold: q.fair_share_preemption_threshold,
                    preemptable: q.preemptable,
                    reservable: q.reservable,
                    acl_submit_apps: (&q.acl_submit_apps).into(),
                    acl_administer_apps: (&q.acl_administer_apps).into(),
                    steady_fair_share: self.cluster.map(|_| q.steady_fair_share.into()),
                    children: q.children.iter().map(ToString::to_string).collect(),
                })
                .collect(),
            placement: PlacementJson {
                source: if from_file { "file" } else { "site" },
                rules: policy.rules.iter().map(RuleJson::from).collect(),
            },
            user_max_apps_default: config.user_max_apps_default,
            user_max_apps: config.user_max_apps.clone(),
            acl_enable: scheduler.acl_enable,
            preemption: scheduler.preemption,
        }
    }
}

/// `show --format json`. The field names are documented in
/// docs/operations.md and are kept stable.
#[derive(Debug, Serialize)]
struct ShowJson {
    file: String,
    cluster: Option<ResourceJson>,
    queues: Vec<QueueJson>,
    placement: PlacementJson,
    user_max_apps_default: Option<u32>,
    user_max_apps: BTreeMap<String, u32>,
    acl_enable: bool,
    preemption: bool,
}

#[derive(Debug, Serialize)]
struct QueueJson {
    path: String,
    parent: Option<String>,
    depth: usize,
    #[serde(rename = "type")]
    kind: &'static str,
    policy: &'static str,
    weight: f32,
    min_resources: ResourceJson,
    max_resources: Option<ResourceJson>,
    max_resources_percent: Option<PercentJson>,
    max_child_resources: Option<ResourceJson>,
    max_child_resources_percent: Option<PercentJson>,
    max_running_apps: Option<u32>,
    max_am_share: Option<f64>,
    max_container_allocation: ResourceJson,
    min_share_preemption_timeout_ms: Option<u64>,
    fair_share_preemption_timeout_ms: Option<u64>,
    fair_share_preemption_threshold: f64,
    preemptable: bool,
    reservable: bool,
    acl_submit_apps: AclJson,
    acl_administer_apps: AclJson,
    steady_fair_share: Option<ResourceJson>,
    children: Vec<String>,
}

/// An amount of each type; `null` is unbounded.
#[derive(Debug, Serialize)]
struct ResourceJson {
    memory_mb: Option<u64>,
    vcores: Option<u64>,
}

impl From<Resource> for ResourceJson {
    fn from(r: Resource) -> ResourceJson {
        let bounded = |v: u64| (v != u64::MAX).then_some(v);
        ResourceJson {
            memory_mb: bounded(r.memory_mb()),
            vcores: bounded(r.vcores()),
        }
    }
}

/// Percentages of the cluster, as the file gives them (80.0 is 80%).
#[derive(Debug, Serialize)]
struct PercentJson {
    memory_mb: f64,
    vcores: f64,
}

fn percent_json(spec: &ResourceSpec) -> Option<PercentJson> {
    match spec {
        ResourceSpec::Percentage(f) => Some(PercentJson {
            memory_mb: percent(f[ResourceType::Memory.index()]),
            vcores: percent(f[ResourceType::Vcores.index()]),
        }),
        ResourceSpec::Absolute(_) => None,
    }
}

#[derive(Debug, Serialize)]
struct AclJson {
    everyone: bool,
    users: Vec<String>,
    groups: Vec<String>,
}

impl From<&Acl> for AclJson {
    fn from(acl: &Acl) -> AclJson {
        AclJson {
            everyone: acl.everyone,
            users: acl.users.iter().cloned().collect(),
            groups: acl.groups.iter().cloned().collect(),
        }
    }
}

#[derive(Debug, Serialize)]
struct PlacementJson {
    /// `file` (queuePlacementPolicy) or `site` (built from the site flags).
    source: &'static str,
    rules: Vec<RuleJson>,
}

#[derive(Debug, Serialize)]
struct RuleJson {
    name: &'static str,
    create: bool,
    /// The `default` rule's queue.
    queue: Option<String>,
    parent: Option<Box<RuleJson>>,
}

impl From<&PlacementRule> for RuleJson {
    fn from(rule: &PlacementRule) -> RuleJson {
        RuleJson {
            name: rule.kind.name(),
            create: rule.create,
            queue: match &rule.kind {
                RuleKind::Default { queue } => Some(queue.to_string()),
                _ => None,
            },
            parent: rule.parent.as_deref().map(|p| Box::new(RuleJson::from(p))),
        }
    }
}

fn millis(d: Duration) -> Option<u64> {
    (!d.is_forever()).then(|| d.as_millis())
}

fn place(inputs: &Inputs, args: &PlaceArgs, report: &mut Report) {
    let user = args.user.as_str();
    let groups: Vec<String> = args
        .groups
        .iter()
        .flatten()
        .map(|g| g.trim().to_owned())
        .filter(|g| !g.is_empty())
        .collect();
    let scheduler = &inputs.settings.scheduler;
    let mut rm = build_scheduler(inputs);
    // The core trims the name and takes a blank one as none; so does the trace.
    let requested = args
        .queue
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty());
    let (policy, from_file) = policy_in_force(&inputs.loaded.config, scheduler);
    let mapping = StaticGroups::new().with_user(user, groups.iter().cloned());
    let request = PlacementRequest {
        requested_queue: requested,
        user,
    };
    let placement = policy.place(&request, &mapping, rm.tree());
    // Asked before the submission, which creates the queue it places into.
    let access = match &placement {
        Placement::Placed { queue, .. } => {
            let checked = queue
                .self_and_ancestors()
                .find(|p| rm.tree().queue_id(p).is_some())
                .unwrap_or_else(QueuePath::root);
            let allowed = rm
                .tree()
                .has_access(queue, QueueAccess::SubmitApps, user, &groups);
            Some((checked, allowed))
        }
        Placement::Rejected(_) => None,
    };
    // Traced before the submission too, against the same queues.
    let trace = trace(&policy, &placement, &request, &mapping, rm.tree());
    let verdict = submit(&mut rm, user, &groups, args.queue.clone());

    let mut lines: Vec<(&str, String)> = vec![("user", user.to_owned())];
    lines.push((
        "groups",
        match (&args.groups, groups.is_empty()) {
            (None, _) => "none: without --groups the user is in no group, so rules that need groups do not match (primaryGroup rejects, secondaryGroupExistingQueue passes on); the operating system's groups are not read: give them with --groups g1,g2, primary first".to_owned(),
            (Some(_), true) => "none".to_owned(),
            (Some(_), false) => groups.join(", "),
        },
    ));
    lines.push((
        "queue",
        match requested {
            None => "none named (a submission without a queue)".to_owned(),
            Some("default") => "default (taken as no queue named, as Hadoop takes it)".to_owned(),
            Some(q) => q.to_owned(),
        },
    ));
    lines.push(("settings", inputs.settings_source.clone()));
    lines.push((
        "rules",
        if from_file {
            "the file's queuePlacementPolicy".to_owned()
        } else {
            format!(
                "none in the file; built from yarn.scheduler.fair.user-as-default-queue={} and allow-undeclared-pools={}",
                scheduler.user_as_default_queue, scheduler.allow_undeclared_pools
            )
        },
    ));
    let head = lines;
    let mut lines: Vec<(&str, String)> = Vec::new();
    match &placement {
        Placement::Placed {
            queue,
            rule,
            needs_create,
            ..
        } => {
            let by = format!("rule {} ({})", rule + 1, policy.rules[*rule].kind.name());
            lines.push(("placed", format!("{queue}, by {by}")));
            lines.push((
                "created",
                if *needs_create {
                    format!(
                        "yes: {queue} is not a configured queue; {by} may create queues, so the RM creates it (and any missing parent) at submission and removes it once it is empty"
                    )
                } else {
                    format!("no: {queue} is a configured leaf queue")
                },
            ));
            if let Some((checked, allowed)) = &access {
                let acls = if scheduler.acl_enable {
                    "yarn.acl.enable is on, so a refused submission is turned away before the application exists"
                } else {
                    "yarn.acl.enable is off, but the scheduler checks queue ACLs whatever it says, as Hadoop's does, and rejects the application (state FAILED)"
                };
                // The queue's own lists and those of every queue above it.
                let scope = if checked.is_root() {
                    "root".to_owned()
                } else {
                    format!("{checked} or a queue above it")
                };
                lines.push((
                    "access",
                    if *allowed {
                        format!(
                            "{user} may submit to {queue}: aclSubmitApps or aclAdministerApps of {scope} lets the user in"
                        )
                    } else {
                        format!(
                            "{user} may not submit to {queue}: no aclSubmitApps or aclAdministerApps of {scope} names the user or one of the groups given; {acls}"
                        )
                    },
                ));
            }
        }
        Placement::Rejected(rejection) => {
            let mut why = rejection.to_string();
            if matches!(rejection, PlacementRejection::NoGroups { .. }) && args.groups.is_none() {
                why.push_str(" (no --groups given)");
            }
            lines.push(("placed", format!("nowhere: {why}")));
        }
    }
    match verdict {
        Ok((queue, state, diagnostics)) => {
            let text = match state {
                AppState::WaitingForLimit => {
                    format!("accepted into {queue}, but it would wait: {diagnostics}")
                }
                _ => format!("accepted into {queue}"),
            };
            lines.push(("verdict", text));
        }
        Err(why) => {
            lines.push(("verdict", format!("rejected: {why}")));
            report.status = Status::Failed;
        }
    }
    let width = head
        .iter()
        .chain(&lines)
        .map(|(k, _)| k.len())
        .max()
        .unwrap_or(0);
    report.stdout.push_str(&key_values(&head, width));
    report.stdout.push_str(&trace);
    report.stdout.push_str(&key_values(&lines, width));
}

/// Submits the application to `rm` as the service would (an unmanaged AM,
/// so no container size comes into it): the queue it goes to, the state it
/// starts in and why, or why it is refused, in words without the made-up
/// application id.
fn submit(
    rm: &mut ResourceManager,
    user: &str,
    groups: &[String],
    queue: Option<String>,
) -> Result<(QueuePath, AppState, String), String> {
    let Reply::NewApplication(new) = rm.handle(Time::ZERO, Input::NewApplication).reply else {
        return Err("the scheduler issued no application id".to_owned());
    };
    let submission = Submission {
        app: new.app,
        user: user.to_owned(),
        groups: groups.to_vec(),
        queue,
        priority: AppPriority(0),
        am_resource: None,
        name: "weft queues place".to_owned(),
        app_type: "YARN".to_owned(),
        tags: Vec::new(),
        lifetime: None,
        max_attempts: None,
    };
    match rm.handle(Time::ZERO, Input::AppSubmitted(submission)).reply {
        Reply::Submitted(Ok(reply)) => Ok((reply.queue, reply.state, reply.diagnostics)),
        Reply::Submitted(Err(e)) => Err(match e {
            SubmitError::Placement(why) => format!("by the placement rules: {why}"),
            SubmitError::AccessDenied { user, queue, .. } => format!(
                "user {user} may not submit to queue {queue} (the application is recorded as FAILED)"
            ),
            SubmitError::AclRefused {
                user,
                queue,
                checked,
                ..
            } => format!(
                "user {user} may not submit to queue {queue}: denied by the ACLs of {checked} and its parents (turned away before the application exists)"
            ),
            SubmitError::Queue { queue, why, .. } => format!("queue {queue} cannot take it: {why}"),
            other => other.to_string(),
        }),
        other => Err(format!("the scheduler answered {other:?}")),
    }
}

/// Each rule and what it did: passed the app on (and why), decided, or
/// was not reached.
fn trace(
    policy: &PlacementPolicy,
    placement: &Placement,
    request: &PlacementRequest<'_>,
    groups: &dyn GroupMapping,
    queues: &dyn QueueLookup,
) -> String {
    let decided = match placement {
        Placement::Placed { rule, .. }
        | Placement::Rejected(
            PlacementRejection::RejectRule { rule }
            | PlacementRejection::InvalidRequestedQueue { rule, .. }
            | PlacementRejection::NoGroups { rule, .. }
            | PlacementRejection::NotALeaf { rule, .. },
        ) => Some(*rule),
        Placement::Rejected(PlacementRejection::NoRulePlaced { .. }) => None,
    };
    // Every rule before the deciding one passed the app on. The outcome
    // names only the deciding rule, so the reasons come from running the
    // rules before it alone: placement is a pure function of the rules and
    // the request, and those rules see the same request, groups and queues.
    let passed_on = match placement {
        Placement::Rejected(PlacementRejection::NoRulePlaced { skipped }) => skipped.clone(),
        _ => {
            let before = PlacementPolicy {
                rules: policy.rules[..decided.unwrap_or(0)].to_vec(),
            };
            match before.place(request, groups, queues) {
                Placement::Rejected(PlacementRejection::NoRulePlaced { skipped }) => skipped,
                // Not reached for rules that passed the app on; the trace
                // then says so rather than inventing reasons.
                _ => Vec::new(),
            }
        }
    };
    let mut out = String::new();
    for (idx, rule) in policy.rules.iter().enumerate() {
        let outcome = if let Some(s) = passed_on.iter().find(|s| s.rule == idx) {
            format!("passed on: {}", s.reason)
        } else if Some(idx) == decided {
            match placement {
                Placement::Placed { queue, .. } => format!("places the app in {queue}"),
                Placement::Rejected(PlacementRejection::NotALeaf { queue, .. }) => {
                    format!("chooses {queue}, a parent queue, so the app is rejected")
                }
                Placement::Rejected(PlacementRejection::NoGroups { .. }) => {
                    "needs the user's primary group and there is none, so the app is rejected"
                        .to_owned()
                }
                Placement::Rejected(PlacementRejection::InvalidRequestedQueue {
                    requested,
                    reason,
                    ..
                }) => format!(
                    "the queue named, {requested:?}, is not a valid queue name ({reason}), so the app is rejected"
                ),
                Placement::Rejected(_) => "rejects the app".to_owned(),
            }
        } else if decided.is_some_and(|d| idx < d) {
            "passed on".to_owned()
        } else {
            "not reached".to_owned()
        };
        let _ = writeln!(out, "  {}. {}: {outcome}", idx + 1, rule_text(rule));
    }
    out
}

/// A rule as the file would write it, roughly: `nestedUserQueue
/// create=true, parent: default queue=root.dev.users create=true`.
fn rule_text(rule: &PlacementRule) -> String {
    let mut out = rule.kind.name().to_owned();
    if let RuleKind::Default { queue } = &rule.kind {
        let _ = write!(out, " queue={queue}");
    }
    if rule.kind != RuleKind::Reject {
        let _ = write!(out, " create={}", rule.create);
    }
    if let Some(parent) = &rule.parent {
        let _ = write!(out, ", parent: {}", rule_text(parent));
    }
    out
}

fn kind_name(kind: QueueKind) -> &'static str {
    match kind {
        QueueKind::Parent => "parent",
        QueueKind::Leaf => "leaf",
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// `8192mb,8vcores`, with `∞` for an unbounded amount (alone when both are).
fn resource_text(r: Resource) -> String {
    if r == Resource::UNBOUNDED {
        return "∞".to_owned();
    }
    let amount = |v: u64| {
        if v == u64::MAX {
            "∞".to_owned()
        } else {
            v.to_string()
        }
    };
    format!("{}mb,{}vcores", amount(r.memory_mb()), amount(r.vcores()))
}

/// A max share as written: a percentage stays one (`80%mb,50%vcores`).
fn spec_text(spec: &ResourceSpec) -> String {
    match spec {
        ResourceSpec::Absolute(r) => resource_text(*r),
        ResourceSpec::Percentage(f) => format!(
            "{}%mb,{}%vcores",
            percent(f[ResourceType::Memory.index()]),
            percent(f[ResourceType::Vcores.index()])
        ),
    }
}

/// A fraction as the percentage it was written as: 0.07 is 7, not
/// 7.000000000000001.
fn percent(fraction: f64) -> f64 {
    (fraction * 100.0 * 1e6).round() / 1e6
}

/// The preemption settings that have an effect: the timeouts that are set
/// (with the fair-share threshold beside its timeout), and `from=false`
/// when containers may not be taken from the queue.
fn preemption_text(q: &QueueSnapshot) -> String {
    let mut parts = Vec::new();
    if !q.min_share_preemption_timeout.is_forever() {
        parts.push(format!("min={}", q.min_share_preemption_timeout));
    }
    if !q.fair_share_preemption_timeout.is_forever() {
        parts.push(format!(
            "fair={} threshold={}",
            q.fair_share_preemption_timeout, q.fair_share_preemption_threshold
        ));
    }
    if !q.preemptable {
        parts.push("from=false".to_owned());
    }
    if parts.is_empty() {
        "-".to_owned()
    } else {
        parts.join(" ")
    }
}

/// `*`, `nobody`, or the users then `groups:` and the groups.
fn acl_text(acl: &Acl) -> String {
    if acl.everyone {
        return "*".to_owned();
    }
    if acl.is_nobody() {
        return "nobody".to_owned();
    }
    let mut parts = Vec::new();
    if !acl.users.is_empty() {
        parts.push(acl.users.iter().cloned().collect::<Vec<_>>().join(","));
    }
    if !acl.groups.is_empty() {
        parts.push(format!(
            "groups:{}",
            acl.groups.iter().cloned().collect::<Vec<_>>().join(",")
        ));
    }
    parts.join(" ")
}

/// Rows as columns two spaces apart, each as wide as its widest cell.
fn table(rows: &[Vec<String>]) -> String {
    let n_columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n_columns)
        .map(|col| {
            rows.iter()
                .filter_map(|r| r.get(col))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(&widths) {
            let _ = write!(line, "{cell:<width$}  ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `key: value` lines with the values aligned for keys up to `width` long.
fn key_values(lines: &[(&str, String)], width: usize) -> String {
    let mut out = String::new();
    for (key, value) in lines {
        let _ = writeln!(out, "{:<w$} {value}", format!("{key}:"), w = width + 1);
    }
    out
}

#[cfg(test)]
mod tests;
