//! The scenario file (TOML, documented in `docs/simulator.md`): its raw form
//! as written (`ScenarioFile` and the `*File` tables), and its resolution into
//! a concrete, fully random-drawn `Scenario` the engine replays: nodes, the
//! allocation file and site settings, apps, imported and generated workloads,
//! and timed events.
//!
//! Files a scenario names (allocation files, site files, traces) are read
//! through `Sources`, so tests and the shipped experiments resolve them from
//! memory and the command line from disk. Parsing the traces is the
//! importers' job (`import`); running is the engine's.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Deserialize;
use weft_core::{CoreSettings, Drain};
use weft_model::{
    AppPriority, Duration, NodeId, Priority, QueuePath, Resource, SpecKind, Time, parse_resource,
};
use weft_queue_tree::AllocConfig;
use weft_queue_tree::alloc_file::parse_alloc_file;
use weft_queue_tree::site::{HadoopConfig, SchedulerSettings};

use crate::import::{self, AppDefaults, ImportCtx};
use crate::limits::{Budget, LimitError};
use crate::rng::SimRng;
use crate::runtime::RuntimeModel;
use crate::workload::{AppSpec, DataLayout, NodeSpec, ReplicaPlacement, TaskGroup};

/// Where the files a scenario names come from.
pub trait Sources {
    /// The text of `path`, as written in the scenario (relative to it).
    fn read(&self, path: &str) -> Result<String, String>;
}

/// Files on disk, relative to a directory (the scenario file's).
#[derive(Clone, Debug)]
pub struct DirSources {
    /// The directory relative paths start from.
    pub base: PathBuf,
}

impl Sources for DirSources {
    fn read(&self, path: &str) -> Result<String, String> {
        let full = self.base.join(path);
        std::fs::read_to_string(&full).map_err(|e| format!("{}: {e}", full.display()))
    }
}

/// Files held in memory, by the path the scenario names them with.
#[derive(Clone, Debug, Default)]
pub struct MemorySources {
    /// Path → text.
    pub files: BTreeMap<String, String>,
}

impl MemorySources {
    /// Adds a file.
    pub fn with(mut self, path: &str, text: &str) -> MemorySources {
        self.files.insert(path.to_owned(), text.to_owned());
        self
    }
}

impl Sources for MemorySources {
    fn read(&self, path: &str) -> Result<String, String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| format!("no file {path:?} is provided"))
    }
}

/// Why a scenario could not be loaded.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    /// The TOML itself (the message carries the line and column).
    #[error("scenario file: {0}")]
    Toml(String),
    /// A value is not acceptable.
    #[error("{what}: {why}")]
    Invalid {
        /// Which setting, as a path in the file (`apps[2].tasks[0].duration`).
        what: String,
        /// What is wrong and what would be right.
        why: String,
    },
    /// A named file could not be read.
    #[error("{what}: cannot read {path:?}: {why}")]
    Read {
        /// Which setting named it.
        what: String,
        /// The path as written.
        path: String,
        /// The reader's error.
        why: String,
    },
    /// The allocation file is invalid.
    #[error("{what} ({path}):\n{problems}")]
    AllocFile {
        /// Which setting named it.
        what: String,
        /// The path as written (`inline` for inline XML).
        path: String,
        /// One problem per line.
        problems: String,
    },
    /// The site settings are invalid.
    #[error("site settings: {0}")]
    Site(String),
    /// A trace could not be imported.
    // The cause is in the message, not a `source`, so it is not printed twice.
    #[error("{what}: {error}")]
    Import {
        /// Which setting named the trace (`workloads[1]`, `topology`).
        what: String,
        /// The trace's path and line, and what is wrong there.
        error: import::ImportError,
    },
    /// The scenario asks for more than the simulator holds, or reaches past
    /// its horizon (see `limits`).
    #[error("{what}: {limit}")]
    Limit {
        /// Which setting, as a path in the file (`apps[0].tasks[0].count`).
        what: String,
        /// The limit and why it exists.
        limit: LimitError,
    },
}

impl ScenarioError {
    /// Names the setting an importer's error came from.
    fn import(what: impl Into<String>) -> impl FnOnce(import::ImportError) -> ScenarioError {
        let what = what.into();
        move |error| ScenarioError::Import { what, error }
    }

    /// Names the setting that broke a limit.
    fn limit(what: impl Into<String>) -> impl FnOnce(LimitError) -> ScenarioError {
        let what = what.into();
        move |limit| ScenarioError::Limit { what, limit }
    }
}

fn invalid(what: impl Into<String>, why: impl Into<String>) -> ScenarioError {
    ScenarioError::Invalid {
        what: what.into(),
        why: why.into(),
    }
}

/// A scenario as written in its TOML file. Every table and key is optional
/// except where a table's own documentation says otherwise; unknown keys are
/// errors, so a misspelt setting never goes unnoticed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// A name for reports.
    pub name: Option<String>,
    /// The seed of every random draw (default 1).
    pub seed: Option<u64>,
    /// Stop at this virtual time (`2h`); by default the run ends when every
    /// app has ended and every event has happened.
    pub end: Option<String>,
    /// Groups of nodes.
    #[serde(default)]
    pub nodes: Vec<NodeGroupFile>,
    /// An SLS topology file (`--nodes` format) adding nodes.
    pub topology: Option<String>,
    /// The allocation file (`fair-scheduler.xml`), by path.
    pub allocation_file: Option<String>,
    /// The allocation file inline, as XML text.
    pub allocation: Option<String>,
    /// A Hadoop site file (`yarn-site.xml`) with the scheduler's properties.
    pub site_file: Option<String>,
    /// Site properties inline (full names, e.g. `"yarn.scheduler.fair.preemption" = true`);
    /// they override the site file's.
    #[serde(default)]
    pub site: BTreeMap<String, toml::Value>,
    /// Heartbeat and launch timings.
    #[serde(default)]
    pub timing: TimingFile,
    /// The runtime model.
    #[serde(default)]
    pub runtime: RuntimeFile,
    /// Where input blocks live.
    #[serde(default)]
    pub data: DataFile,
    /// What the report records.
    #[serde(default)]
    pub report: ReportFile,
    /// Apps written out one by one.
    #[serde(default)]
    pub apps: Vec<AppFile>,
    /// Imported or generated workloads.
    #[serde(default)]
    pub workloads: Vec<WorkloadFile>,
    /// Timed events.
    #[serde(default)]
    pub events: Vec<EventFile>,
}

/// `[[nodes]]`: identical nodes.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGroupFile {
    /// How many.
    pub count: u32,
    /// Each node's capability (`"8192 mb, 8 vcores"`).
    pub capacity: String,
    /// Host name prefix (default `node`); hosts are numbered from 1, four digits.
    pub prefix: Option<String>,
    /// Put every node of the group in this rack.
    pub rack: Option<String>,
    /// Or fill new racks (`/rack01`, `/rack02`, ...) this many nodes at a time.
    pub nodes_per_rack: Option<u32>,
}

/// `[timing]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimingFile {
    /// Node heartbeat interval (default: the site's
    /// `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`, 1 s).
    pub nm_heartbeat: Option<String>,
    /// AM heartbeat (allocate call) interval (default 1 s, as SLS).
    pub am_heartbeat: Option<String>,
    /// From AM container allocation to AM registration (default 1 s).
    pub am_launch: Option<String>,
    /// From the AM learning of a container to its task starting (default 0).
    pub container_launch: Option<String>,
}

/// `[runtime]`: duration factors by locality.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeFile {
    /// Node-local factor (default 1).
    pub node_local: Option<f64>,
    /// Rack-local factor (default 1.5).
    pub rack_local: Option<f64>,
    /// Off-rack factor (default 2).
    pub off_rack: Option<f64>,
}

/// `[data]`: how generated input blocks are placed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataFile {
    /// Replicas per block (default 3).
    pub replicas: Option<u32>,
    /// `uniform` (default) or `rack-aware`.
    pub placement: Option<String>,
}

/// `[report]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportFile {
    /// Time between samples of the queue series (default 10 s).
    pub sample_interval: Option<String>,
}

/// `[[apps]]`: one app (or `count` copies of it).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppFile {
    /// Its name (copies get `-1`, `-2`, ... appended).
    pub name: String,
    /// Submission time (default 0).
    pub at: Option<String>,
    /// User (default `user`).
    pub user: Option<String>,
    /// Queue asked for (default: none, placement decides).
    pub queue: Option<String>,
    /// Application priority (default 0).
    pub priority: Option<i32>,
    /// AM container size, or `unmanaged` (default `1024 mb, 1 vcores`).
    pub am: Option<String>,
    /// Copies (default 1).
    pub count: Option<u32>,
    /// Time between copies' submissions (default 0).
    pub every: Option<String>,
    /// How long each copy may run from its submission before the RM kills
    /// it (YARN's `LIFETIME` timeout; default: no limit).
    pub lifetime: Option<String>,
    /// Its task groups.
    #[serde(default)]
    pub tasks: Vec<TaskGroupFile>,
}

/// `[[apps.tasks]]`: a group of like tasks.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskGroupFile {
    /// How many tasks.
    pub count: u32,
    /// Container size (default `1024 mb, 1 vcores`).
    pub size: Option<String>,
    /// Node-local duration of each task.
    pub duration: String,
    /// Request priority (default 20 for stage 0, 10 after, as MapReduce's maps and reduces).
    pub priority: Option<i32>,
    /// Stage (default 0): asked for once all earlier stages are done.
    pub stage: Option<u32>,
    /// Replicas of each task's input placed at random (default `[data] replicas`; 0: no input).
    pub replicas: Option<u32>,
    /// Or each task's replica hosts explicitly (one list per task, or one list for all).
    pub hosts: Option<Vec<Vec<String>>>,
}

/// `[[workloads]]`: apps imported from a trace or generated.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFile {
    /// `generate`, `sls`, `synth` or `swim`.
    pub format: String,
    /// App name prefix (default: the format and the workload's position, `swim1`).
    pub name: Option<String>,
    /// The trace (for `sls`, `synth`, `swim`).
    pub path: Option<String>,
    /// Queue for every app (overrides the trace's).
    pub queue: Option<String>,
    /// Users, given to apps in turn (overrides the trace's).
    pub users: Option<Vec<String>>,
    /// AM size or `unmanaged` (default `1024 mb, 1 vcores`).
    pub am: Option<String>,
    /// Added to every submission time.
    pub start: Option<String>,
    /// Import only the first this many jobs.
    pub limit: Option<u32>,
    /// `generate`: number of jobs (with a fixed `maps`).
    pub jobs: Option<u32>,
    /// `generate`: `poisson <mean gap>`, `every <gap>` or `at <time>` (default `at 0s`).
    pub arrival: Option<String>,
    /// `generate`: maps per job.
    pub maps: Option<u32>,
    /// `generate`: a job-size mix instead of `jobs` × `maps`.
    pub mix: Option<Vec<MixFile>>,
    /// `generate`: node-local map duration (default 10 s).
    pub map_duration: Option<String>,
    /// `generate`: spread task durations uniformly over ± this fraction of
    /// their duration (default 0: all alike), so slots free up at scattered times.
    pub duration_spread: Option<f64>,
    /// `generate`, `swim`: map container (default `1024 mb, 1 vcores`).
    pub map_size: Option<String>,
    /// `generate`: reduces per job (default 0).
    pub reduces: Option<u32>,
    /// `generate`: reduce duration (default 10 s).
    pub reduce_duration: Option<String>,
    /// `generate`, `swim`: reduce container (default `1024 mb, 1 vcores`).
    pub reduce_size: Option<String>,
    /// `swim`: HDFS block size, one map per block (default `128MB`).
    pub block_size: Option<String>,
    /// `swim`: map read rate per task (default `32MB` per second).
    pub map_rate: Option<String>,
    /// `swim`: shuffle bytes per reduce (default `1GB`).
    pub reduce_input: Option<String>,
    /// `swim`: reduce processing rate per task (default `16MB` per second).
    pub reduce_rate: Option<String>,
    /// `swim`: fixed start-up cost of every task (default 2 s).
    pub task_overhead: Option<String>,
    /// `sls`, `synth`: scale every task duration by this factor (default 1).
    pub duration_scale: Option<f64>,
}

/// One entry of a generated job-size mix.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixFile {
    /// Maps per job.
    pub maps: u32,
    /// How many such jobs.
    pub jobs: u32,
}

/// `[[events]]`: something that happens at a virtual time.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventFile {
    /// When.
    pub at: String,
    /// `reload`, `kill`, `move`, `lose-nodes`, `decommission-nodes`,
    /// `drain-nodes`, `recommission-nodes`, `add-nodes` or `set-site`.
    pub action: String,
    /// `kill`, `move`: the app's name.
    pub app: Option<String>,
    /// `move`: the target leaf queue.
    pub queue: Option<String>,
    /// `reload`: the new allocation file, by path.
    pub allocation_file: Option<String>,
    /// `reload`: the new allocation file, inline.
    pub allocation: Option<String>,
    /// `lose-nodes`, `decommission-nodes`, `drain-nodes`,
    /// `recommission-nodes`: hosts by name.
    pub nodes: Option<Vec<String>>,
    /// `lose-nodes`, `decommission-nodes`, `drain-nodes`: this many random
    /// nodes instead; `add-nodes`: how many to add.
    pub count: Option<u32>,
    /// `drain-nodes`: how long the nodes may take to drain (default: no limit).
    pub timeout: Option<String>,
    /// `drain-nodes`: also wait for the apps that ran containers on the
    /// nodes to finish (default true).
    pub wait_for_apps: Option<bool>,
    /// `add-nodes`: their capability.
    pub capacity: Option<String>,
    /// `add-nodes`: their rack (default `/default-rack`).
    pub rack: Option<String>,
    /// `add-nodes`: host name prefix (default `added`).
    pub prefix: Option<String>,
    /// `set-site`: site properties to change.
    pub site: Option<BTreeMap<String, toml::Value>>,
}

impl ScenarioFile {
    /// Parses the TOML text.
    pub fn parse(text: &str) -> Result<ScenarioFile, ScenarioError> {
        toml::from_str(text).map_err(|e| ScenarioError::Toml(e.to_string().trim_end().to_owned()))
    }

    /// Resolves the scenario: reads the files it names, validates every value
    /// and draws every random choice from the seed (`seed` overrides the file's).
    pub fn resolve(
        &self,
        sources: &dyn Sources,
        seed: Option<u64>,
    ) -> Result<Scenario, ScenarioError> {
        Resolver {
            file: self,
            sources,
            warnings: Vec::new(),
        }
        .resolve(seed)
    }
}

/// Heartbeat and launch timings the emulated nodes and AMs follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Node heartbeat interval.
    pub nm_heartbeat: Duration,
    /// AM heartbeat interval.
    pub am_heartbeat: Duration,
    /// AM container allocated → AM registered.
    pub am_launch: Duration,
    /// Container learned of → task started.
    pub container_launch: Duration,
}

/// Something that happens at a virtual time.
#[derive(Clone, Debug, PartialEq)]
pub enum ScenarioEvent {
    /// A new allocation file.
    Reload(Box<AllocConfig>),
    /// Kill an app (by its index in `Scenario::apps`).
    Kill(usize),
    /// Move an app to a leaf queue.
    Move(usize, QueuePath),
    /// These nodes (indices into the node list) stop heartbeating; the RM
    /// declares them lost after its liveness expiry.
    LoseNodes(Vec<u32>),
    /// These nodes are decommissioned (they leave at once).
    DecommissionNodes(Vec<u32>),
    /// These nodes are decommissioned gracefully: they drain on these terms
    /// and leave once drained or when their time is up.
    DrainNodes {
        /// Which nodes.
        nodes: NodeChoice,
        /// When a node counts as drained, and how long it may take.
        drain: Drain,
    },
    /// These draining nodes go back into service (host names).
    RecommissionNodes(Vec<String>),
    /// Nodes join (they are appended to the node list).
    AddNodes(Vec<NodeSpec>),
    /// New site settings (the scenario's properties plus these).
    SetSite(Box<CoreSettings>),
}

/// Which nodes an event acts on, named or drawn when it happens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeChoice {
    /// These hosts, initial or added by an `add-nodes` event.
    Named(Vec<String>),
    /// This many nodes drawn at random among those running when the event
    /// happens (not lost, gone or already draining), from a stream seeded
    /// with `seed`. Drawn then, not when the scenario loads, because which
    /// nodes are still running depends on the run.
    Random {
        /// How many (fewer if fewer are running).
        count: u32,
        /// The draw's seed, itself drawn from the scenario's seed.
        seed: u64,
    },
}

/// A timed event.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedEvent {
    /// When.
    pub at: Time,
    /// What.
    pub event: ScenarioEvent,
}

/// A resolved scenario: everything the engine needs, every random draw made.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Name for reports.
    pub name: String,
    /// The seed (for heartbeat phases and report headers).
    pub seed: u64,
    /// Stop time, if any.
    pub end: Option<Time>,
    /// The initial nodes.
    pub nodes: Vec<NodeSpec>,
    /// The allocation file.
    pub alloc: AllocConfig,
    /// The core's settings.
    pub settings: CoreSettings,
    /// Timings.
    pub timing: Timing,
    /// The runtime model.
    pub runtime: RuntimeModel,
    /// Time between report samples.
    pub sample_interval: Duration,
    /// Apps, by arrival time (ties in file order).
    pub apps: Vec<AppSpec>,
    /// Events, by time (ties in file order).
    pub events: Vec<TimedEvent>,
    /// Warnings from the allocation file, site settings and imports.
    pub warnings: Vec<String>,
}

impl Scenario {
    /// Loads and resolves a scenario's text.
    pub fn load(
        text: &str,
        sources: &dyn Sources,
        seed: Option<u64>,
    ) -> Result<Scenario, ScenarioError> {
        ScenarioFile::parse(text)?.resolve(sources, seed)
    }

    /// Turns on preemption (and nothing else) in the site settings.
    pub fn set_preemption(&mut self, on: bool) {
        self.settings.scheduler.preemption = on;
    }
}

struct Resolver<'a> {
    file: &'a ScenarioFile,
    sources: &'a dyn Sources,
    warnings: Vec<String>,
}

/// The default container and AM size (SLS's and MapReduce's defaults).
const DEFAULT_CONTAINER: Resource = Resource::new(1024, 1);

impl Resolver<'_> {
    fn resolve(mut self, seed: Option<u64>) -> Result<Scenario, ScenarioError> {
        let f = self.file;
        let seed = seed.or(f.seed).unwrap_or(1);
        let rng = SimRng::new(seed);
        // Everything materialised below is charged here first (see `limits`).
        let mut budget = Budget::default();
        let end = f
            .end
            .as_deref()
            .map(|e| parse_time(e, "end", &budget))
            .transpose()?;

        let mut nodes = self.nodes(&mut budget)?;
        let (alloc, _) = self.alloc(
            "allocation_file",
            f.allocation_file.as_deref(),
            f.allocation.as_deref(),
        )?;
        let site_properties = self.site_properties()?;
        let settings = settings_from(&site_properties, &mut self.warnings)?;

        let timing = Timing {
            nm_heartbeat: opt_duration(f.timing.nm_heartbeat.as_deref(), "timing.nm_heartbeat")?
                .unwrap_or(settings.scheduler.node_heartbeat_interval),
            am_heartbeat: opt_duration(f.timing.am_heartbeat.as_deref(), "timing.am_heartbeat")?
                .unwrap_or(Duration::from_secs(1)),
            am_launch: opt_duration(f.timing.am_launch.as_deref(), "timing.am_launch")?
                .unwrap_or(Duration::from_secs(1)),
            container_launch: opt_duration(
                f.timing.container_launch.as_deref(),
                "timing.container_launch",
            )?
            .unwrap_or(Duration::ZERO),
        };
        for (what, d) in [
            ("timing.nm_heartbeat", timing.nm_heartbeat),
            ("timing.am_heartbeat", timing.am_heartbeat),
        ] {
            if d == Duration::ZERO || d.is_forever() {
                return Err(invalid(what, "must be a positive, finite interval"));
            }
        }
        for (what, d) in [
            ("timing.nm_heartbeat", timing.nm_heartbeat),
            ("timing.am_heartbeat", timing.am_heartbeat),
            ("timing.am_launch", timing.am_launch),
            ("timing.container_launch", timing.container_launch),
        ] {
            budget
                .within_horizon(d)
                .map_err(ScenarioError::limit(what))?;
        }
        let defaults = RuntimeModel::default();
        let runtime = RuntimeModel {
            node_local: f.runtime.node_local.unwrap_or(defaults.node_local),
            rack_local: f.runtime.rack_local.unwrap_or(defaults.rack_local),
            off_rack: f.runtime.off_rack.unwrap_or(defaults.off_rack),
        };
        runtime.validate().map_err(|why| invalid("runtime", why))?;
        let sample_interval = opt_duration(
            f.report.sample_interval.as_deref(),
            "report.sample_interval",
        )?
        .unwrap_or(Duration::from_secs(10));
        if sample_interval == Duration::ZERO || sample_interval.is_forever() {
            return Err(invalid(
                "report.sample_interval",
                "must be a positive, finite interval",
            ));
        }
        budget
            .within_horizon(sample_interval)
            .map_err(ScenarioError::limit("report.sample_interval"))?;
        let replicas = f.data.replicas.unwrap_or(3);
        let placement = match f.data.placement.as_deref() {
            None | Some("uniform") => ReplicaPlacement::Uniform,
            Some("rack-aware") => ReplicaPlacement::RackAware,
            Some(other) => {
                return Err(invalid(
                    "data.placement",
                    format!("unknown placement {other:?}; expected uniform or rack-aware"),
                ));
            }
        };

        // SLS traces without a topology name their hosts; with no nodes
        // declared anywhere, those hosts become the cluster (as SLS does).
        if nodes.is_empty() {
            nodes = self.nodes_from_sls_traces(&mut budget)?;
        }
        if nodes.is_empty() {
            return Err(invalid(
                "nodes",
                "the scenario has no nodes: add a [[nodes]] group or a topology file",
            ));
        }
        let layout = DataLayout::new(&nodes, placement);

        let mut apps = Vec::new();
        for (i, a) in f.apps.iter().enumerate() {
            let mut app_rng = rng.fork("app", i as u64);
            apps.extend(self.app(i, a, &nodes, &layout, &mut app_rng, replicas, &mut budget)?);
        }
        for (i, w) in f.workloads.iter().enumerate() {
            let defaults = self.app_defaults(i, w, &budget)?;
            // The context carries the budget through the importer and back.
            let mut ctx = ImportCtx::new(
                &nodes,
                &layout,
                rng.fork("workload", i as u64),
                replicas,
                std::mem::take(&mut budget),
            );
            let got = self.workload(i, w, &defaults, &mut ctx)?;
            self.warnings.append(&mut ctx.warnings);
            budget = ctx.budget;
            apps.extend(got);
        }
        apps.sort_by_key(|a| a.arrival);
        let mut seen = BTreeMap::new();
        for a in &apps {
            if seen.insert(a.name.clone(), ()).is_some() {
                return Err(invalid(
                    "apps",
                    format!("two apps are named {:?}; app names must be unique", a.name),
                ));
            }
        }

        let mut events = Vec::new();
        let mut node_count = nodes.len() as u32;
        for (i, e) in f.events.iter().enumerate() {
            let mut ev_rng = rng.fork("event", i as u64);
            events.push(self.event(
                i,
                e,
                &apps,
                &nodes,
                &mut node_count,
                &site_properties,
                &mut ev_rng,
                &mut budget,
            )?);
        }
        check_drained_names(&nodes, &events)?;
        events.sort_by_key(|e| e.at);

        Ok(Scenario {
            name: f.name.clone().unwrap_or_else(|| "scenario".to_owned()),
            seed,
            end,
            nodes,
            alloc,
            settings,
            timing,
            runtime,
            sample_interval,
            apps,
            events,
            warnings: self.warnings,
        })
    }

    fn read(&self, what: &str, path: &str) -> Result<String, ScenarioError> {
        self.sources.read(path).map_err(|why| ScenarioError::Read {
            what: what.to_owned(),
            path: path.to_owned(),
            why,
        })
    }

    fn nodes(&mut self, budget: &mut Budget) -> Result<Vec<NodeSpec>, ScenarioError> {
        let mut nodes = Vec::new();
        let mut per_prefix: BTreeMap<String, u32> = BTreeMap::new();
        let mut n_racks = 0u32;
        for (gi, g) in self.file.nodes.iter().enumerate() {
            let what = format!("nodes[{gi}]");
            let capability = parse_res(&g.capacity, &format!("{what}.capacity"))?;
            if g.count == 0 {
                return Err(invalid(
                    format!("{what}.count"),
                    "a node group needs at least one node",
                ));
            }
            if g.rack.is_some() && g.nodes_per_rack.is_some() {
                return Err(invalid(
                    &what,
                    "give either rack or nodes_per_rack, not both",
                ));
            }
            if g.nodes_per_rack == Some(0) {
                return Err(invalid(
                    format!("{what}.nodes_per_rack"),
                    "must be at least 1",
                ));
            }
            budget
                .nodes(u64::from(g.count))
                .map_err(ScenarioError::limit(format!("{what}.count")))?;
            let prefix = g.prefix.clone().unwrap_or_else(|| "node".to_owned());
            for i in 0..g.count {
                let counter = per_prefix.entry(prefix.clone()).or_insert(0);
                *counter += 1;
                let name = format!("{prefix}{:04}", *counter);
                let rack = match (&g.rack, g.nodes_per_rack) {
                    (Some(r), _) => rack_name(r),
                    (None, Some(per)) => {
                        if i % per == 0 {
                            n_racks += 1;
                        }
                        format!("/rack{n_racks:02}")
                    }
                    (None, None) => "/default-rack".to_owned(),
                };
                check_host(&name, &what)?;
                nodes.push(NodeSpec {
                    name,
                    rack,
                    capability,
                });
            }
        }
        if let Some(path) = &self.file.topology {
            let text = self.read("topology", path)?;
            // Read whole before it is charged: its size is the file's, not a count's.
            let topology = import::sls::parse_topology(&text, path)
                .map_err(ScenarioError::import("topology"))?;
            budget
                .nodes(topology.len() as u64)
                .map_err(ScenarioError::limit("topology"))?;
            nodes.extend(topology);
        }
        let mut names = BTreeMap::new();
        for n in &nodes {
            if names.insert(n.name.clone(), ()).is_some() {
                return Err(invalid(
                    "nodes",
                    format!("two nodes are named {:?}", n.name),
                ));
            }
        }
        Ok(nodes)
    }

    fn nodes_from_sls_traces(
        &mut self,
        budget: &mut Budget,
    ) -> Result<Vec<NodeSpec>, ScenarioError> {
        let mut hosts: Vec<(String, String)> = Vec::new();
        for (i, w) in self.file.workloads.iter().enumerate() {
            if w.format != "sls" {
                continue;
            }
            if let Some(path) = &w.path {
                let what = format!("workloads[{i}].path");
                let text = self.read(&what, path)?;
                let traced =
                    import::sls::trace_hosts(&text, path).map_err(ScenarioError::import(&what))?;
                for (rack, host) in traced {
                    if !hosts.iter().any(|(_, h)| *h == host) {
                        hosts.push((rack, host));
                    }
                }
            }
        }
        budget
            .nodes(hosts.len() as u64)
            .map_err(ScenarioError::limit("workloads"))?;
        Ok(hosts
            .into_iter()
            .map(|(rack, name)| NodeSpec {
                name,
                rack,
                capability: import::sls::DEFAULT_NODE,
            })
            .collect())
    }

    fn alloc(
        &mut self,
        what: &str,
        path: Option<&str>,
        inline: Option<&str>,
    ) -> Result<(AllocConfig, String), ScenarioError> {
        let (text, label) = match (path, inline) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    what,
                    "give either an allocation file path or inline allocation XML, not both",
                ));
            }
            (Some(p), None) => (self.read(what, p)?, p.to_owned()),
            (None, Some(x)) => (x.to_owned(), "inline".to_owned()),
            (None, None) => return Ok((AllocConfig::default(), "default".to_owned())),
        };
        match parse_alloc_file(&text) {
            Ok(loaded) => {
                for w in loaded.warnings {
                    self.warnings.push(format!("{label}: {w}"));
                }
                Ok((loaded.config, label))
            }
            Err(e) => Err(ScenarioError::AllocFile {
                what: what.to_owned(),
                path: label,
                problems: e.to_string(),
            }),
        }
    }

    fn site_properties(&mut self) -> Result<Vec<(String, String)>, ScenarioError> {
        let mut props: Vec<(String, String)> = Vec::new();
        if let Some(path) = &self.file.site_file {
            let text = self.read("site_file", path)?;
            let config = HadoopConfig::parse(&text)
                .map_err(|e| ScenarioError::Site(format!("{path}: {e}")))?;
            // The file's own warnings (a property set twice, a final one
            // overridden) carry its real positions.
            for w in config.warnings() {
                self.warnings.push(format!("{path}: {w}"));
            }
            for p in config.properties() {
                props.push((p.name.clone(), p.value.clone()));
            }
        }
        merge_properties(&mut props, &self.file.site, "site")?;
        Ok(props)
    }

    fn app_defaults(
        &self,
        i: usize,
        w: &WorkloadFile,
        budget: &Budget,
    ) -> Result<AppDefaults, ScenarioError> {
        let what = format!("workloads[{i}]");
        let start =
            opt_duration(w.start.as_deref(), &format!("{what}.start"))?.unwrap_or(Duration::ZERO);
        budget
            .within_horizon(start)
            .map_err(ScenarioError::limit(format!("{what}.start")))?;
        Ok(AppDefaults {
            name_prefix: w
                .name
                .clone()
                .unwrap_or_else(|| format!("{}{}", w.format, i + 1)),
            queue: w.queue.clone(),
            users: w.users.clone().unwrap_or_default(),
            am: w
                .am
                .as_deref()
                .map(|t| parse_am(Some(t), &format!("{what}.am")))
                .transpose()?,
            start,
            limit: w.limit.map(|l| l as usize),
            duration_scale: w.duration_scale.unwrap_or(1.0),
        })
    }

    fn workload(
        &mut self,
        i: usize,
        w: &WorkloadFile,
        defaults: &AppDefaults,
        ctx: &mut ImportCtx<'_>,
    ) -> Result<Vec<AppSpec>, ScenarioError> {
        let what = format!("workloads[{i}]");
        if !(defaults.duration_scale.is_finite() && defaults.duration_scale > 0.0) {
            return Err(invalid(
                format!("{what}.duration_scale"),
                "must be a positive number",
            ));
        }
        let allowed: &[&str] = match w.format.as_str() {
            "generate" => &[
                "jobs",
                "duration_spread",
                "arrival",
                "maps",
                "mix",
                "map_duration",
                "map_size",
                "reduces",
                "reduce_duration",
                "reduce_size",
            ],
            "swim" => &[
                "path",
                "map_size",
                "reduce_size",
                "block_size",
                "map_rate",
                "reduce_input",
                "reduce_rate",
                "task_overhead",
            ],
            "sls" | "synth" => &["path", "duration_scale"],
            other => {
                return Err(invalid(
                    format!("{what}.format"),
                    format!("unknown format {other:?}; expected generate, sls, synth or swim"),
                ));
            }
        };
        for (key, set) in [
            ("path", w.path.is_some()),
            ("jobs", w.jobs.is_some()),
            ("arrival", w.arrival.is_some()),
            ("maps", w.maps.is_some()),
            ("mix", w.mix.is_some()),
            ("map_duration", w.map_duration.is_some()),
            ("duration_spread", w.duration_spread.is_some()),
            ("map_size", w.map_size.is_some()),
            ("reduces", w.reduces.is_some()),
            ("reduce_duration", w.reduce_duration.is_some()),
            ("reduce_size", w.reduce_size.is_some()),
            ("block_size", w.block_size.is_some()),
            ("map_rate", w.map_rate.is_some()),
            ("reduce_input", w.reduce_input.is_some()),
            ("reduce_rate", w.reduce_rate.is_some()),
            ("task_overhead", w.task_overhead.is_some()),
            ("duration_scale", w.duration_scale.is_some()),
        ] {
            if set && !allowed.contains(&key) {
                return Err(invalid(
                    format!("{what}.{key}"),
                    format!("does not apply to format {:?}", w.format),
                ));
            }
        }
        let path = |s: &Self| -> Result<(String, String), ScenarioError> {
            let p = w.path.as_deref().ok_or_else(|| {
                invalid(
                    format!("{what}.path"),
                    format!("format {:?} needs a trace path", w.format),
                )
            })?;
            Ok((p.to_owned(), s.read(&format!("{what}.path"), p)?))
        };
        let apps = match w.format.as_str() {
            "generate" => {
                let opts = import::generate::GenerateOptions {
                    jobs: w.jobs,
                    arrival: w
                        .arrival
                        .as_deref()
                        .map(|a| parse_arrival(a, &format!("{what}.arrival")))
                        .transpose()?
                        .unwrap_or(import::generate::Arrival::At(Duration::ZERO)),
                    maps: w.maps,
                    mix: w
                        .mix
                        .as_ref()
                        .map(|m| m.iter().map(|e| (e.maps, e.jobs)).collect()),
                    map_duration: opt_duration(
                        w.map_duration.as_deref(),
                        &format!("{what}.map_duration"),
                    )?
                    .unwrap_or(Duration::from_secs(10)),
                    duration_spread: match w.duration_spread {
                        None => 0.0,
                        Some(x) if (0.0..1.0).contains(&x) => x,
                        Some(x) => {
                            return Err(invalid(
                                format!("{what}.duration_spread"),
                                format!("{x} is not a fraction in [0, 1)"),
                            ));
                        }
                    },
                    map_size: opt_res(w.map_size.as_deref(), &format!("{what}.map_size"))?
                        .unwrap_or(DEFAULT_CONTAINER),
                    reduces: w.reduces.unwrap_or(0),
                    reduce_duration: opt_duration(
                        w.reduce_duration.as_deref(),
                        &format!("{what}.reduce_duration"),
                    )?
                    .unwrap_or(Duration::from_secs(10)),
                    reduce_size: opt_res(w.reduce_size.as_deref(), &format!("{what}.reduce_size"))?
                        .unwrap_or(DEFAULT_CONTAINER),
                };
                for (key, d) in [
                    ("map_duration", opts.map_duration),
                    ("reduce_duration", opts.reduce_duration),
                ] {
                    // A spread task runs up to (1 + spread) times as long.
                    let longest = d.as_millis() as f64 * (1.0 + opts.duration_spread);
                    ctx.budget
                        .within_horizon(Duration::from_millis(longest.ceil() as u64))
                        .map_err(ScenarioError::limit(format!("{what}.{key}")))?;
                }
                import::generate::generate(&opts, defaults, ctx).map_err(|e| match e {
                    import::generate::GenerateError::Invalid(why) => invalid(&what, why),
                    import::generate::GenerateError::Limit { key, limit } => ScenarioError::Limit {
                        what: format!("{what}.{key}"),
                        limit,
                    },
                })?
            }
            "swim" => {
                let (p, text) = path(self)?;
                let d = import::swim::SwimOptions::default();
                let opts = import::swim::SwimOptions {
                    block_size: opt_bytes(w.block_size.as_deref(), &format!("{what}.block_size"))?
                        .unwrap_or(d.block_size),
                    map_rate: opt_bytes(w.map_rate.as_deref(), &format!("{what}.map_rate"))?
                        .unwrap_or(d.map_rate),
                    reduce_input: opt_bytes(
                        w.reduce_input.as_deref(),
                        &format!("{what}.reduce_input"),
                    )?
                    .unwrap_or(d.reduce_input),
                    reduce_rate: opt_bytes(
                        w.reduce_rate.as_deref(),
                        &format!("{what}.reduce_rate"),
                    )?
                    .unwrap_or(d.reduce_rate),
                    task_overhead: opt_duration(
                        w.task_overhead.as_deref(),
                        &format!("{what}.task_overhead"),
                    )?
                    .unwrap_or(d.task_overhead),
                    map_size: opt_res(w.map_size.as_deref(), &format!("{what}.map_size"))?
                        .unwrap_or(d.map_size),
                    reduce_size: opt_res(w.reduce_size.as_deref(), &format!("{what}.reduce_size"))?
                        .unwrap_or(d.reduce_size),
                };
                for (key, v) in [
                    ("block_size", opts.block_size),
                    ("map_rate", opts.map_rate),
                    ("reduce_input", opts.reduce_input),
                    ("reduce_rate", opts.reduce_rate),
                ] {
                    if v == 0 {
                        return Err(invalid(format!("{what}.{key}"), "must be positive"));
                    }
                }
                import::swim::import(&text, &p, &opts, defaults, ctx)
                    .map_err(ScenarioError::import(&what))?
            }
            "sls" => {
                let (p, text) = path(self)?;
                import::sls::import(&text, &p, defaults, ctx)
                    .map_err(ScenarioError::import(&what))?
            }
            "synth" => {
                let (p, text) = path(self)?;
                import::synth::import(&text, &p, defaults, ctx)
                    .map_err(ScenarioError::import(&what))?
            }
            _ => unreachable!("checked above"),
        };
        Ok(apps)
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one resolution step with its context"
    )]
    fn app(
        &self,
        i: usize,
        a: &AppFile,
        nodes: &[NodeSpec],
        layout: &DataLayout,
        rng: &mut SimRng,
        default_replicas: u32,
        budget: &mut Budget,
    ) -> Result<Vec<AppSpec>, ScenarioError> {
        let what = format!("apps[{i}]");
        let at = opt_duration(a.at.as_deref(), &format!("{what}.at"))?.unwrap_or(Duration::ZERO);
        let every =
            opt_duration(a.every.as_deref(), &format!("{what}.every"))?.unwrap_or(Duration::ZERO);
        let count = a.count.unwrap_or(1);
        if count == 0 {
            return Err(invalid(format!("{what}.count"), "must be at least 1"));
        }
        let lifetime = opt_duration(a.lifetime.as_deref(), &format!("{what}.lifetime"))?;
        if lifetime == Some(Duration::ZERO) {
            return Err(invalid(
                format!("{what}.lifetime"),
                "must be longer than 0s (leave it out for no limit)",
            ));
        }
        budget
            .within_horizon(at)
            .map_err(ScenarioError::limit(format!("{what}.at")))?;
        budget
            .within_horizon(at + every.saturating_mul(u64::from(count - 1)))
            .map_err(ScenarioError::limit(format!(
                "{what}.every (the last of {count} copies)"
            )))?;
        budget
            .apps(u64::from(count))
            .map_err(ScenarioError::limit(format!("{what}.count")))?;
        // Every copy's tasks are charged before the first is built.
        for (gi, g) in a.tasks.iter().enumerate() {
            let gwhat = format!("{what}.tasks[{gi}]");
            let duration = parse_duration(&g.duration, &format!("{gwhat}.duration"))?;
            budget
                .within_horizon(duration)
                .map_err(ScenarioError::limit(format!("{gwhat}.duration")))?;
            let copies = u64::from(count);
            let tasks = u64::from(g.count).saturating_mul(copies);
            let replicas = match &g.hosts {
                // One list for all is copied to every task.
                Some(lists) if lists.len() == 1 => tasks.saturating_mul(lists[0].len() as u64),
                Some(lists) => lists
                    .iter()
                    .map(|l| l.len() as u64)
                    .sum::<u64>()
                    .saturating_mul(copies),
                None => tasks.saturating_mul(u64::from(
                    g.replicas
                        .unwrap_or(default_replicas)
                        .min(nodes.len() as u32),
                )),
            };
            budget
                .tasks(tasks, replicas)
                .map_err(ScenarioError::limit(format!("{gwhat}.count")))?;
        }
        let am = parse_am(a.am.as_deref(), &format!("{what}.am"))?;
        let host_index: BTreeMap<&str, u32> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i as u32))
            .collect();
        let mut out = Vec::new();
        for copy in 0..count {
            let mut groups = Vec::new();
            for (gi, g) in a.tasks.iter().enumerate() {
                let gwhat = format!("{what}.tasks[{gi}]");
                let stage = g.stage.unwrap_or(0);
                let priority = g.priority.unwrap_or(if stage == 0 { 20 } else { 10 });
                let size = opt_res(g.size.as_deref(), &format!("{gwhat}.size"))?
                    .unwrap_or(DEFAULT_CONTAINER);
                let duration = parse_duration(&g.duration, &format!("{gwhat}.duration"))?;
                let mut group = TaskGroup::new(stage, Priority(priority), size);
                if g.hosts.is_some() && g.replicas.is_some() {
                    return Err(invalid(&gwhat, "give either replicas or hosts, not both"));
                }
                let explicit: Option<Vec<Vec<u32>>> = match &g.hosts {
                    None => None,
                    Some(lists) => {
                        if lists.len() != 1 && lists.len() != g.count as usize {
                            return Err(invalid(
                                format!("{gwhat}.hosts"),
                                format!(
                                    "has {} lists; give one list per task ({}) or one list for all",
                                    lists.len(),
                                    g.count
                                ),
                            ));
                        }
                        let mut resolved = Vec::new();
                        for list in lists {
                            let mut idx = Vec::new();
                            for h in list {
                                let n = host_index.get(h.as_str()).ok_or_else(|| {
                                    invalid(
                                        format!("{gwhat}.hosts"),
                                        format!("{h:?} is not a node of the cluster"),
                                    )
                                })?;
                                idx.push(*n);
                            }
                            resolved.push(idx);
                        }
                        Some(resolved)
                    }
                };
                let replicas = g.replicas.unwrap_or(default_replicas);
                for t in 0..g.count as usize {
                    match &explicit {
                        Some(lists) => {
                            let list = if lists.len() == 1 {
                                &lists[0]
                            } else {
                                &lists[t]
                            };
                            group.push(duration, list);
                        }
                        None => {
                            let placed = layout.place(rng, replicas);
                            group.push(duration, &placed);
                        }
                    }
                }
                groups.push(group);
            }
            let name = if count == 1 {
                a.name.clone()
            } else {
                format!("{}-{}", a.name, copy + 1)
            };
            out.push(AppSpec {
                name,
                arrival: Time::ZERO + at + every.saturating_mul(u64::from(copy)),
                user: a.user.clone().unwrap_or_else(|| "user".to_owned()),
                queue: a.queue.clone(),
                priority: AppPriority(a.priority.unwrap_or(0)),
                am,
                groups,
                lifetime,
            });
        }
        Ok(out)
    }

    #[expect(
        clippy::too_many_arguments,
        reason = "one resolution step with its context"
    )]
    fn event(
        &mut self,
        i: usize,
        e: &EventFile,
        apps: &[AppSpec],
        nodes: &[NodeSpec],
        node_count: &mut u32,
        site_properties: &[(String, String)],
        rng: &mut SimRng,
        budget: &mut Budget,
    ) -> Result<TimedEvent, ScenarioError> {
        let what = format!("events[{i}]");
        let at = parse_time(&e.at, &format!("{what}.at"), budget)?;
        let used: Vec<&str> = [
            ("app", e.app.is_some()),
            ("queue", e.queue.is_some()),
            ("allocation_file", e.allocation_file.is_some()),
            ("allocation", e.allocation.is_some()),
            ("nodes", e.nodes.is_some()),
            ("count", e.count.is_some()),
            ("capacity", e.capacity.is_some()),
            ("rack", e.rack.is_some()),
            ("prefix", e.prefix.is_some()),
            ("site", e.site.is_some()),
            ("timeout", e.timeout.is_some()),
            ("wait_for_apps", e.wait_for_apps.is_some()),
        ]
        .iter()
        .filter(|(_, set)| *set)
        .map(|(k, _)| *k)
        .collect();
        let allowed: &[&str] = match e.action.as_str() {
            "reload" => &["allocation_file", "allocation"],
            "kill" => &["app"],
            "move" => &["app", "queue"],
            "lose-nodes" | "decommission-nodes" => &["nodes", "count"],
            "drain-nodes" => &["nodes", "count", "timeout", "wait_for_apps"],
            "recommission-nodes" => &["nodes"],
            "add-nodes" => &["count", "capacity", "rack", "prefix"],
            "set-site" => &["site"],
            other => {
                return Err(invalid(
                    format!("{what}.action"),
                    format!(
                        "unknown action {other:?}; expected reload, kill, move, lose-nodes, \
                         decommission-nodes, drain-nodes, recommission-nodes, add-nodes or set-site"
                    ),
                ));
            }
        };
        if let Some(k) = used.iter().find(|k| !allowed.contains(k)) {
            return Err(invalid(
                format!("{what}.{k}"),
                format!("does not apply to action {:?}", e.action),
            ));
        }
        let app_index = |name: &Option<String>| -> Result<usize, ScenarioError> {
            let name = name
                .as_deref()
                .ok_or_else(|| invalid(format!("{what}.app"), "this action needs an app name"))?;
            apps.iter()
                .position(|a| a.name == name)
                .ok_or_else(|| invalid(format!("{what}.app"), format!("no app is named {name:?}")))
        };
        let event = match e.action.as_str() {
            "reload" => {
                if e.allocation_file.is_none() && e.allocation.is_none() {
                    return Err(invalid(&what, "reload needs allocation_file or allocation"));
                }
                let (config, _) = self.alloc(
                    &format!("{what}.allocation_file"),
                    e.allocation_file.as_deref(),
                    e.allocation.as_deref(),
                )?;
                ScenarioEvent::Reload(Box::new(config))
            }
            "kill" => ScenarioEvent::Kill(app_index(&e.app)?),
            "move" => {
                let queue = e
                    .queue
                    .as_deref()
                    .ok_or_else(|| invalid(format!("{what}.queue"), "move needs a target queue"))?;
                let queue = QueuePath::parse(queue)
                    .map_err(|err| invalid(format!("{what}.queue"), err.to_string()))?;
                ScenarioEvent::Move(app_index(&e.app)?, queue)
            }
            "lose-nodes" | "decommission-nodes" => {
                let chosen: Vec<u32> = match (&e.nodes, e.count) {
                    (Some(names), None) => names
                        .iter()
                        .map(|n| {
                            nodes
                                .iter()
                                .position(|x| x.name == *n)
                                .map(|p| p as u32)
                                .ok_or_else(|| {
                                    invalid(
                                        format!("{what}.nodes"),
                                        format!("no node is named {n:?}"),
                                    )
                                })
                        })
                        .collect::<Result<_, _>>()?,
                    (None, Some(c)) => rng.distinct(nodes.len() as u32, c),
                    _ => {
                        return Err(invalid(&what, "give either nodes (names) or count"));
                    }
                };
                if e.action == "lose-nodes" {
                    ScenarioEvent::LoseNodes(chosen)
                } else {
                    ScenarioEvent::DecommissionNodes(chosen)
                }
            }
            "drain-nodes" => {
                let nodes = match (&e.nodes, e.count) {
                    (Some(names), None) => NodeChoice::Named(names.clone()),
                    (None, Some(0)) => {
                        return Err(invalid(format!("{what}.count"), "must be at least 1"));
                    }
                    (None, Some(count)) => NodeChoice::Random {
                        count,
                        seed: rng.next_u64(),
                    },
                    _ => {
                        return Err(invalid(&what, "give either nodes (names) or count"));
                    }
                };
                let timeout = e
                    .timeout
                    .as_deref()
                    .map(|t| {
                        let w = format!("{what}.timeout");
                        budget
                            .within_horizon(parse_duration(t, &w)?)
                            .map_err(ScenarioError::limit(w))
                    })
                    .transpose()?;
                ScenarioEvent::DrainNodes {
                    nodes,
                    drain: Drain {
                        timeout,
                        wait_for_apps: e.wait_for_apps.unwrap_or(true),
                        also_wait_for: Vec::new(),
                    },
                }
            }
            "recommission-nodes" => {
                let names = e.nodes.clone().ok_or_else(|| {
                    invalid(
                        format!("{what}.nodes"),
                        "recommission-nodes needs the nodes' names",
                    )
                })?;
                ScenarioEvent::RecommissionNodes(names)
            }
            "add-nodes" => {
                let count = e.count.unwrap_or(1);
                let capability = parse_res(
                    e.capacity.as_deref().ok_or_else(|| {
                        invalid(format!("{what}.capacity"), "add-nodes needs a capacity")
                    })?,
                    &format!("{what}.capacity"),
                )?;
                let rack = rack_name(e.rack.as_deref().unwrap_or("/default-rack"));
                budget
                    .nodes(u64::from(count))
                    .map_err(ScenarioError::limit(format!("{what}.count")))?;
                let prefix = e.prefix.clone().unwrap_or_else(|| "added".to_owned());
                let mut added = Vec::new();
                for _ in 0..count {
                    *node_count += 1;
                    let name = format!("{prefix}{:04}", *node_count);
                    check_host(&name, &what)?;
                    added.push(NodeSpec {
                        name,
                        rack: rack.clone(),
                        capability,
                    });
                }
                ScenarioEvent::AddNodes(added)
            }
            "set-site" => {
                let mut props = site_properties.to_vec();
                let extra = e.site.clone().unwrap_or_default();
                merge_properties(&mut props, &extra, &format!("{what}.site"))?;
                ScenarioEvent::SetSite(Box::new(settings_from(&props, &mut self.warnings)?))
            }
            _ => unreachable!("checked above"),
        };
        Ok(TimedEvent { at, event })
    }
}

/// Checks that the nodes `drain-nodes` and `recommission-nodes` name exist
/// at some point of the run: initial ones, or ones an `add-nodes` event adds
/// (wherever it is in the file; a node drained before it joins is recorded
/// as a refused event when the run gets there).
fn check_drained_names(initial: &[NodeSpec], events: &[TimedEvent]) -> Result<(), ScenarioError> {
    let mut known: BTreeSet<&str> = initial.iter().map(|n| n.name.as_str()).collect();
    for e in events {
        if let ScenarioEvent::AddNodes(added) = &e.event {
            known.extend(added.iter().map(|n| n.name.as_str()));
        }
    }
    // `events` is still in file order, so its index is the file's.
    for (i, e) in events.iter().enumerate() {
        let names = match &e.event {
            ScenarioEvent::DrainNodes {
                nodes: NodeChoice::Named(names),
                ..
            }
            | ScenarioEvent::RecommissionNodes(names) => names,
            _ => continue,
        };
        if let Some(n) = names.iter().find(|n| !known.contains(n.as_str())) {
            return Err(invalid(
                format!("events[{i}].nodes"),
                format!("no node is named {n:?}"),
            ));
        }
    }
    Ok(())
}

fn merge_properties(
    props: &mut Vec<(String, String)>,
    extra: &BTreeMap<String, toml::Value>,
    what: &str,
) -> Result<(), ScenarioError> {
    for (name, value) in extra {
        let text = match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(x) => x.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            other => {
                return Err(invalid(
                    format!("{what}.{name:?}"),
                    format!(
                        "a property value must be a string, number or boolean, not {}",
                        other.type_str()
                    ),
                ));
            }
        };
        props.retain(|(n, _)| n != name);
        props.push((name.clone(), text));
    }
    Ok(())
}

/// Core settings from site properties (Hadoop's defaults for the rest).
pub(crate) fn settings_from(
    props: &[(String, String)],
    warnings: &mut Vec<String>,
) -> Result<CoreSettings, ScenarioError> {
    let mut xml = String::from("<configuration>\n");
    for (k, v) in props {
        let _ = writeln!(
            xml,
            "<property><name>{}</name><value>{}</value></property>",
            xml_escape(k),
            xml_escape(v)
        );
    }
    xml.push_str("</configuration>\n");
    // Positions in `xml` point into this generated text, which nobody wrote
    // or sees; every message names its property, so they are left out.
    let config = HadoopConfig::parse(&xml)
        .map_err(|e| ScenarioError::Site(without_positions(&e.to_string())))?;
    let (scheduler, site_warnings) = SchedulerSettings::from_config(&config)
        .map_err(|e| ScenarioError::Site(without_positions(&e.to_string())))?;
    for w in site_warnings {
        warnings.push(format!("site: {}", without_positions(&w.to_string())));
    }
    Ok(CoreSettings {
        scheduler,
        cluster_timestamp: 1,
        ..CoreSettings::default()
    })
}

/// `text` without the `line L, column C: ` that starts a site message's
/// lines.
fn without_positions(text: &str) -> String {
    text.lines()
        .map(|line| {
            let body = line.trim_start();
            let indent = &line[..line.len() - body.len()];
            let rest = body.strip_prefix("line ").and_then(|r| {
                let (l, r) = r.split_once(", column ")?;
                let (c, r) = r.split_once(": ")?;
                let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
                (digits(l) && digits(c)).then_some(r)
            });
            match rest {
                Some(r) => format!("{indent}{r}"),
                None => line.to_owned(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn rack_name(r: &str) -> String {
    if r.starts_with('/') {
        r.to_owned()
    } else {
        format!("/{r}")
    }
}

fn check_host(name: &str, what: &str) -> Result<(), ScenarioError> {
    NodeId::new(name, 8041)
        .map(|_| ())
        .map_err(|e| invalid(what, format!("node name {name:?} is not a host name: {e}")))
}

/// Parses `500ms`, `10s`, `2m`, `1h`.
pub(crate) fn parse_duration(text: &str, what: &str) -> Result<Duration, ScenarioError> {
    text.trim()
        .parse::<Duration>()
        .map_err(|e| invalid(what, e.to_string()))
}

/// Parses a virtual time (a duration since zero) within the horizon.
fn parse_time(text: &str, what: &str, budget: &Budget) -> Result<Time, ScenarioError> {
    let since_zero = budget
        .within_horizon(parse_duration(text, what)?)
        .map_err(ScenarioError::limit(what))?;
    Ok(Time::ZERO + since_zero)
}

fn opt_duration(text: Option<&str>, what: &str) -> Result<Option<Duration>, ScenarioError> {
    text.map(|t| parse_duration(t, what)).transpose()
}

/// Parses an absolute resource (`"1024 mb, 1 vcores"`, `"memory-mb=1024, vcores=1"`).
pub(crate) fn parse_res(text: &str, what: &str) -> Result<Resource, ScenarioError> {
    let spec = parse_resource(text, SpecKind::Min).map_err(|e| invalid(what, e.to_string()))?;
    spec.absolute().ok_or_else(|| {
        invalid(
            what,
            "expected absolute amounts such as \"1024 mb, 1 vcores\"",
        )
    })
}

fn opt_res(text: Option<&str>, what: &str) -> Result<Option<Resource>, ScenarioError> {
    text.map(|t| parse_res(t, what)).transpose()
}

/// An AM size, or `unmanaged`; the default is 1024 MB, 1 vcore.
fn parse_am(text: Option<&str>, what: &str) -> Result<Option<Resource>, ScenarioError> {
    match text.map(str::trim) {
        None => Ok(Some(DEFAULT_CONTAINER)),
        Some("unmanaged") => Ok(None),
        Some(t) => parse_res(t, what).map(Some),
    }
}

/// Parses a byte size: `128MB`, `1GB`, `512KB`, `4096` (binary units).
pub(crate) fn parse_bytes(text: &str, what: &str) -> Result<u64, ScenarioError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        invalid(
            what,
            format!("{text:?} is not a size; write e.g. 128MB or 1GB"),
        )
    })?;
    let mult: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" => 1 << 10,
        "M" | "MB" => 1 << 20,
        "G" | "GB" => 1 << 30,
        "T" | "TB" => 1 << 40,
        other => {
            return Err(invalid(
                what,
                format!("unknown unit {other:?} in {text:?}; use B, KB, MB, GB or TB"),
            ));
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| invalid(what, format!("{text:?} is too large")))
}

fn opt_bytes(text: Option<&str>, what: &str) -> Result<Option<u64>, ScenarioError> {
    text.map(|t| parse_bytes(t, what)).transpose()
}

fn parse_arrival(text: &str, what: &str) -> Result<import::generate::Arrival, ScenarioError> {
    let mut words = text.split_whitespace();
    let kind = words.next().unwrap_or("");
    let value = words.next();
    let extra = words.next();
    let d = match (value, extra) {
        (Some(v), None) => parse_duration(v, what)?,
        _ => {
            return Err(invalid(
                what,
                format!("{text:?}: expected `poisson <mean gap>`, `every <gap>` or `at <time>`"),
            ));
        }
    };
    match kind {
        "poisson" if d > Duration::ZERO => Ok(import::generate::Arrival::Poisson(d)),
        "poisson" => Err(invalid(what, "a Poisson mean gap must be positive")),
        "every" => Ok(import::generate::Arrival::Every(d)),
        "at" => Ok(import::generate::Arrival::At(d)),
        _ => Err(invalid(
            what,
            format!("{text:?}: expected `poisson <mean gap>`, `every <gap>` or `at <time>`"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Scenario, ScenarioError> {
        let sources = MemorySources::default().with(
            "fs.xml",
            "<allocations><queue name=\"a\"/><queue name=\"b\"/></allocations>",
        );
        Scenario::load(text, &sources, None)
    }

    #[test]
    fn a_small_scenario_resolves() {
        let s = load(
            r#"
            name = "small"
            seed = 7
            allocation_file = "fs.xml"
            site = { "yarn.scheduler.fair.locality.threshold.node" = 0.5, "yarn.scheduler.fair.locality.threshold.rack" = "0.5" }
            [[nodes]]
            count = 4
            capacity = "4096 mb, 4 vcores"
            nodes_per_rack = 2
            [[apps]]
            name = "etl"
            at = "5s"
            queue = "root.a"
            tasks = [ { count = 3, duration = "10s" }, { count = 1, duration = "20s", stage = 1, replicas = 0 } ]
            [[apps]]
            name = "pinned"
            am = "unmanaged"
            tasks = [ { count = 2, duration = "1s", hosts = [["node0001", "node0003"]] } ]
            [[events]]
            at = "1m"
            action = "kill"
            app = "etl"
            "#,
        )
        .unwrap();
        assert_eq!(s.name, "small");
        assert_eq!(s.nodes.len(), 4);
        assert_eq!(s.nodes[2].rack, "/rack02");
        assert_eq!(s.apps[0].name, "pinned", "apps are ordered by arrival");
        assert_eq!(s.apps[0].am, None);
        assert_eq!(s.apps[0].groups[0].replicas(1), &[0, 2]);
        let etl = &s.apps[1];
        assert_eq!(etl.arrival, Time::from_millis(5000));
        assert_eq!(etl.groups[0].replicas(0).len(), 3);
        assert_eq!(etl.groups[1].priority, Priority(10));
        assert!(etl.groups[1].replicas(0).is_empty());
        assert_eq!(s.events[0].event, ScenarioEvent::Kill(1));
        assert_eq!(
            s.settings.scheduler.locality_threshold_node,
            weft_queue_tree::site::LocalityThreshold::Nodes(
                weft_queue_tree::site::Fraction::new(0.5).unwrap()
            )
        );
        assert_eq!(s.timing.nm_heartbeat, Duration::from_secs(1));
    }

    #[test]
    fn errors_name_the_setting() {
        let cases = [
            (
                "[[nodes]]\ncount = 1\ncapacity = \"lots\"",
                "nodes[0].capacity",
            ),
            (
                "[[nodes]]\ncount = 1\ncapacity = \"1024 mb, 1 vcores\"\n[[apps]]\nname = \"a\"\ntasks = [{ count = 1, duration = \"soon\" }]",
                "apps[0].tasks[0].duration",
            ),
            (
                "[[nodes]]\ncount = 1\ncapacity = \"1024 mb, 1 vcores\"\n[[events]]\nat = \"1s\"\naction = \"explode\"",
                "events[0].action",
            ),
            (
                "[[nodes]]\ncount = 1\ncapacity = \"1024 mb, 1 vcores\"\n[[workloads]]\nformat = \"generate\"\nblock_size = \"1MB\"",
                "workloads[0].block_size",
            ),
            (
                "[[nodes]]\ncount = 1\ncapcity = \"x\"",
                "unknown field `capcity`",
            ),
            ("", "the scenario has no nodes"),
            (
                "allocation_file = \"missing.xml\"\n[[nodes]]\ncount = 1\ncapacity = \"1024 mb, 1 vcores\"",
                "no file \"missing.xml\"",
            ),
        ];
        for (text, expected) in cases {
            let err = load(text).unwrap_err().to_string();
            assert!(
                err.contains(expected),
                "{err:?} should mention {expected:?}"
            );
        }
    }

    #[test]
    fn drain_and_recommission_events_resolve() {
        let s = load(
            r#"
            [[nodes]]
            count = 3
            capacity = "1024 mb, 1 vcores"
            [[events]]
            at = "1m"
            action = "drain-nodes"
            nodes = ["node0001", "added0004"]
            timeout = "10m"
            [[events]]
            at = "2m"
            action = "drain-nodes"
            count = 2
            wait_for_apps = false
            [[events]]
            at = "3m"
            action = "recommission-nodes"
            nodes = ["node0001"]
            [[events]]
            at = "4m"
            action = "add-nodes"
            capacity = "1024 mb, 1 vcores"
            "#,
        )
        .unwrap();
        assert_eq!(
            s.events[0].event,
            ScenarioEvent::DrainNodes {
                nodes: NodeChoice::Named(vec!["node0001".to_owned(), "added0004".to_owned()]),
                drain: Drain {
                    timeout: Some(Duration::from_secs(600)),
                    wait_for_apps: true,
                    also_wait_for: Vec::new(),
                },
            }
        );
        match &s.events[1].event {
            ScenarioEvent::DrainNodes {
                nodes: NodeChoice::Random { count: 2, .. },
                drain,
            } => assert_eq!(
                *drain,
                Drain {
                    timeout: None,
                    wait_for_apps: false,
                    also_wait_for: Vec::new(),
                }
            ),
            other => panic!("not a random drain: {other:?}"),
        }
        assert_eq!(
            s.events[2].event,
            ScenarioEvent::RecommissionNodes(vec!["node0001".to_owned()])
        );
        // The random draw's seed comes from the scenario's seed, so the
        // same file draws the same nodes, and another seed others.
        let text = "[[nodes]]\ncount = 3\ncapacity = \"1024 mb, 1 vcores\"\n\
                    [[events]]\nat = \"2m\"\naction = \"drain-nodes\"\ncount = 2";
        let seed_of = |s: Scenario| match &s.events[0].event {
            ScenarioEvent::DrainNodes {
                nodes: NodeChoice::Random { seed, .. },
                ..
            } => *seed,
            other => panic!("not a random drain: {other:?}"),
        };
        let sources = MemorySources::default();
        assert_eq!(seed_of(load(text).unwrap()), seed_of(load(text).unwrap()));
        assert_ne!(
            seed_of(load(text).unwrap()),
            seed_of(Scenario::load(text, &sources, Some(2)).unwrap())
        );
    }

    #[test]
    fn drain_and_recommission_errors_name_the_event_and_the_field() {
        let nodes = "[[nodes]]\ncount = 2\ncapacity = \"1024 mb, 1 vcores\"\n";
        let event = |body: &str| format!("{nodes}[[events]]\nat = \"1s\"\n{body}");
        let cases = [
            (
                "action = \"drain-nodes\"\nnodes = [\"node0001\"]\ntimeout = \"soon\"",
                "events[0].timeout: ",
            ),
            (
                "action = \"drain-nodes\"\nnodes = [\"node0001\"]\ntimeout = \"9000h\"",
                "events[0].timeout: ",
            ),
            (
                "action = \"drain-nodes\"\nnodes = [\"node0001\"]\nwait_for_apps = \"yes\"",
                "wait_for_apps",
            ),
            (
                "action = \"drain-nodes\"\nnodes = [\"node0009\"]",
                "events[0].nodes: no node is named \"node0009\"",
            ),
            (
                "action = \"drain-nodes\"\ncount = 0",
                "events[0].count: must be at least 1",
            ),
            (
                "action = \"drain-nodes\"",
                "events[0]: give either nodes (names) or count",
            ),
            (
                "action = \"drain-nodes\"\nnodes = [\"node0001\"]\ncount = 1",
                "events[0]: give either nodes (names) or count",
            ),
            (
                "action = \"drain-nodes\"\nnodes = [\"node0001\"]\ncapacity = \"1 mb, 1 vcores\"",
                "events[0].capacity: does not apply to action \"drain-nodes\"",
            ),
            (
                "action = \"recommission-nodes\"",
                "events[0].nodes: recommission-nodes needs the nodes' names",
            ),
            (
                "action = \"recommission-nodes\"\ncount = 1",
                "events[0].count: does not apply to action \"recommission-nodes\"",
            ),
            (
                "action = \"recommission-nodes\"\nnodes = [\"added0001\"]",
                "events[0].nodes: no node is named \"added0001\"",
            ),
            (
                "action = \"lose-nodes\"\nnodes = [\"node0001\"]\ntimeout = \"1m\"",
                "events[0].timeout: does not apply to action \"lose-nodes\"",
            ),
            (
                "action = \"decommission-nodes\"\nnodes = [\"node0001\"]\nwait_for_apps = false",
                "events[0].wait_for_apps: does not apply to action \"decommission-nodes\"",
            ),
        ];
        for (body, expected) in cases {
            let err = load(&event(body)).unwrap_err().to_string();
            assert!(
                err.contains(expected),
                "{err:?} should mention {expected:?}"
            );
        }
        // The event's index is the file's, whatever the events' times.
        let err = load(&format!(
            "{nodes}[[events]]\nat = \"5s\"\naction = \"add-nodes\"\ncapacity = \"1024 mb, 1 vcores\"\n\
             [[events]]\nat = \"1s\"\naction = \"drain-nodes\"\nnodes = [\"nope\"]"
        ))
        .unwrap_err()
        .to_string();
        assert_eq!(err, "events[1].nodes: no node is named \"nope\"");
    }

    #[test]
    fn site_messages_name_properties_not_positions_in_text_nobody_wrote() {
        let nodes = "[[nodes]]\ncount = 1\ncapacity = \"1024 mb, 1 vcores\"\n";
        let err = load(&format!(
            "[site]\n\"yarn.scheduler.fair.waitTimeBeforeKill\" = -1\n{nodes}"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("property yarn.scheduler.fair.waitTimeBeforeKill: -1 is out of range"),
            "{err}"
        );
        assert!(!err.contains("column"), "{err}");
        let ok = load(&format!(
            "[site]\n\"yarn.scheduler.fair.fooo\" = 1\n{nodes}"
        ))
        .unwrap();
        assert_eq!(ok.warnings.len(), 1, "{:?}", ok.warnings);
        assert!(
            ok.warnings[0].starts_with("site: unknown scheduler property yarn.scheduler.fair.fooo"),
            "{:?}",
            ok.warnings
        );
        // A site file's own warnings keep the file's real positions.
        let sources = MemorySources::default().with(
            "site.xml",
            "<configuration>\n<property><name>yarn.acl.enable</name><value>true</value></property>\n\
             <property><name>yarn.acl.enable</name><value>false</value></property>\n</configuration>\n",
        );
        let with_file = Scenario::load(
            &format!("site_file = \"site.xml\"\n{nodes}"),
            &sources,
            None,
        )
        .unwrap();
        assert!(
            with_file
                .warnings
                .iter()
                .any(|w| w.starts_with("site.xml: line 3, column") && w.contains("yarn.acl.enable")),
            "{:?}",
            with_file.warnings
        );
        assert_eq!(without_positions("  line 2, column 62: x: y"), "  x: y");
        assert_eq!(
            without_positions("line two, column 6: x"),
            "line two, column 6: x"
        );
    }

    /// Loads with a trace beside the scenario, expecting an error.
    fn load_err(text: &str, trace: &str) -> String {
        let sources = MemorySources::default().with("t", trace);
        // The cluster goes last, so top-level keys in `text` stay top-level.
        let text = format!("{text}\n[[nodes]]\ncount = 2\ncapacity = \"8192 mb, 8 vcores\"\n");
        Scenario::load(&text, &sources, None)
            .map(|s| format!("loaded {} apps", s.apps.len()))
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn what_a_scenario_would_materialise_is_refused_before_it_is_built() {
        // Each of these would take gigabytes if built; the budget refuses
        // them at once, naming the setting, the limit and why.
        let cases = [
            (
                r#"[[apps]]
                name = "a"
                tasks = [{ count = 4000000000, duration = "1s" }]"#,
                "",
                "apps[0].tasks[0].count: 4000000000 tasks in all would exceed the limit of 50000000 per scenario: every task is materialised when the scenario loads, at about 250 bytes each",
            ),
            (
                r#"[[apps]]
                name = "a"
                count = 100000
                tasks = [{ count = 1000, duration = "1s" }]"#,
                "",
                "apps[0].tasks[0].count: 100000000 tasks in all would exceed",
            ),
            (
                r#"[[apps]]
                name = "a"
                count = 4000000000
                tasks = []"#,
                "",
                "apps[0].count: 4000000000 apps in all would exceed the limit of 1000000",
            ),
            (
                r#"[[apps]]
                name = "a"
                tasks = [{ count = 40000000, duration = "1s", hosts = [["node0001", "node0002", "node0001", "node0002", "node0001"]] }]"#,
                "",
                "apps[0].tasks[0].count: 200000000 task input replicas in all would exceed the limit of 150000000",
            ),
            (
                r#"[[nodes]]
                count = 4000000000
                capacity = "1024 mb, 1 vcores""#,
                "",
                "nodes[0].count: 4000000000 nodes in all (initial and added) would exceed the limit of 1000000",
            ),
            (
                r#"[[events]]
                at = "1s"
                action = "add-nodes"
                count = 999999
                capacity = "1024 mb, 1 vcores""#,
                "",
                "events[0].count: 1000001 nodes in all",
            ),
            (
                r#"[[workloads]]
                format = "generate"
                jobs = 4000000
                maps = 4000"#,
                "",
                "workloads[0].jobs: 4000000 apps in all would exceed",
            ),
            (
                r#"[[workloads]]
                format = "generate"
                jobs = 400000
                maps = 4000"#,
                "",
                "workloads[0].maps: 1600000000 tasks in all would exceed",
            ),
            (
                r#"[[workloads]]
                format = "generate"
                mix = [{ maps = 1, jobs = 10 }, { maps = 4000000000, jobs = 1 }]"#,
                "",
                "workloads[0].mix: 4000000010 tasks in all would exceed",
            ),
            (
                r#"[[workloads]]
                format = "swim"
                path = "t""#,
                "j1\t1\t1\t1000\t0\t0\nj2\t2\t1\t9999999999999999999\t0\t0\n",
                "workloads[0]: t:2: 74505805971 tasks in all would exceed",
            ),
            (
                r#"[[workloads]]
                format = "sls"
                path = "t""#,
                r#"{ "job.start.ms": 0, "job.count": 100000, "job.tasks": [ { "count": 1000, "duration.ms": 1000 } ] }"#,
                "workloads[0]: t:1: 100000000 tasks in all would exceed",
            ),
            (
                r#"[[workloads]]
                format = "synth"
                path = "t""#,
                r#"{ "num_jobs": 1e30, "workloads": [ { "job_classes": [ { "mtasks_avg": 1 } ] } ] }"#,
                "workloads[0]: t: 18446744073709551615 apps in all would exceed",
            ),
        ];
        for (text, trace, expected) in cases {
            let err = load_err(text, trace);
            assert!(
                err.starts_with(expected),
                "{err:?} should start with {expected:?}"
            );
        }
    }

    #[test]
    fn times_past_the_horizon_are_refused() {
        let cases = [
            (
                r#"[[apps]]
                name = "a"
                at = "99999999999h"
                tasks = [{ count = 1, duration = "1s" }]"#,
                "",
                "apps[0].at: 99999999999h is past the simulator's horizon of 8760h (365 days): the run steps through virtual time",
            ),
            (
                r#"[[apps]]
                name = "a"
                count = 1000
                every = "10h"
                tasks = [{ count = 1, duration = "1s" }]"#,
                "",
                "apps[0].every (the last of 1000 copies): 9990h is past",
            ),
            (
                r#"[[apps]]
                name = "a"
                tasks = [{ count = 1, duration = "forever" }]"#,
                "",
                "apps[0].tasks[0].duration: forever is past",
            ),
            ("end = \"9000h\"", "", "end: 9000h is past"),
            (
                r#"[[events]]
                at = "9000h"
                action = "add-nodes"
                capacity = "1024 mb, 1 vcores""#,
                "",
                "events[0].at: 9000h is past",
            ),
            (
                "[report]\nsample_interval = \"9000h\"",
                "",
                "report.sample_interval: 9000h is past",
            ),
            (
                r#"[[workloads]]
                format = "generate"
                maps = 1
                jobs = 10
                arrival = "every 1000h""#,
                "",
                "workloads[0].arrival: 9000h is past",
            ),
            (
                r#"[[workloads]]
                format = "generate"
                maps = 1
                map_duration = "6000h"
                duration_spread = 0.5"#,
                "",
                "workloads[0].map_duration: 9000h is past",
            ),
            (
                r#"[[workloads]]
                format = "swim"
                path = "t"
                start = "9000h""#,
                "",
                "workloads[0].start: 9000h is past",
            ),
            (
                r#"[[workloads]]
                format = "swim"
                path = "t""#,
                "j1\t1\t1\t1000\t0\t0\nj2\t32400000\t1\t1000\t0\t0\n",
                "workloads[0]: t:2: 9000h is past",
            ),
            (
                r#"[[workloads]]
                format = "swim"
                path = "t"
                map_rate = "1"
                block_size = "1TB""#,
                "j1\t1\t1\t1099511627776\t0\t0\n",
                "workloads[0]: t:1: 1099511627778s is past",
            ),
            (
                r#"[[workloads]]
                format = "sls"
                path = "t""#,
                "\n{ \"job.start.ms\": 32400000000, \"job.tasks\": [ { \"duration.ms\": 1000 } ] }",
                "workloads[0]: t:2: 9000h is past",
            ),
            (
                r#"[[workloads]]
                format = "sls"
                path = "t""#,
                "{ \"job.start.ms\": 0, \"job.tasks\": [ { \"container.start.ms\": -9223372036854775807, \"container.end.ms\": 9223372036854775807 } ] }",
                "workloads[0]: t:1: 9223372036854775807ms is past",
            ),
            (
                r#"[[workloads]]
                format = "synth"
                path = "t""#,
                r#"{ "num_jobs": 1, "workloads": [ { "job_classes": [ { "mtasks_avg": 1 } ], "time_distribution": [ { "time": 1e25, "weight": 1 } ] } ] }"#,
                "workloads[0]: t: forever is past",
            ),
        ];
        for (text, trace, expected) in cases {
            let err = load_err(text, trace);
            assert!(
                err.starts_with(expected),
                "{err:?} should start with {expected:?}"
            );
        }
        // The horizon itself is allowed.
        let ok = load_err(
            r#"[[apps]]
            name = "a"
            at = "8760h"
            tasks = [{ count = 1, duration = "8760h" }]"#,
            "",
        );
        assert_eq!(ok, "loaded 1 apps");
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_bytes("128MB", "x").unwrap(), 128 << 20);
        assert_eq!(parse_bytes("1 GB", "x").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("7", "x").unwrap(), 7);
        assert!(parse_bytes("1PB", "x").is_err());
        assert!(parse_bytes("MB", "x").is_err());
    }
}
