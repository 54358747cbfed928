//! `SchedulerSettings`: the scheduler's site properties as typed values with
//! Hadoop's defaults, read from a [`HadoopConfig`] with every bad value
//! reported in one pass, MRv1 names accepted as deprecated aliases, and
//! unknown scheduler names flagged as likely typos.
//!
//! The settings are inputs to `weft-core` (assignment per heartbeat, delay
//! scheduling, reservations, node liveness) and `weft-preemption` (starvation
//! and warn-then-kill timings); this module decides nothing at run time.

use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

use weft_model::{AppPriority, Duration, QueuePath, Resource, ResourceType};

use super::allocation::{AllocationLimits, AllocationLimitsError};
use super::hadoop_config::{HadoopConfig, Property};
use super::values::{QuantityError, parse_bool, parse_float, parse_int, parse_quantity};
use super::{Location, SiteError, SiteProblem, SiteWarning};
use crate::acl::Acl;

/// The site settings the scheduler reads, each with Hadoop's default.
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerSettings {
    /// `yarn.scheduler.fair.allocation.file`: where the service finds the
    /// allocation file (default `fair-scheduler.xml`).
    pub allocation_file: String,
    /// `yarn.scheduler.fair.user-as-default-queue` (default true): with no
    /// placement rules in the allocation file, an app without a queue goes to
    /// a queue named after its user.
    pub user_as_default_queue: bool,
    /// `yarn.scheduler.fair.allow-undeclared-pools` (default true): with no
    /// placement rules, apps may create queues the file does not declare.
    pub allow_undeclared_pools: bool,
    /// `yarn.scheduler.fair.preemption` (default false): track starvation and preempt.
    pub preemption: bool,
    /// `yarn.scheduler.fair.preemption.dry-run` (default false; MRv1's
    /// `mapred.fairscheduler.preemption.only.log`): decide preemptions and
    /// report them, but neither warn nor kill any container.
    pub preemption_dry_run: bool,
    /// `yarn.scheduler.fair.preemption.model` (default `current`, a Weft
    /// setting): which Hadoop era's preemption `weft-preemption` follows.
    pub preemption_model: PreemptionModel,
    /// `yarn.scheduler.fair.preemption.cluster-utilization-threshold` (default
    /// 0.8): starvation is only evaluated while the cluster's utilisation (the
    /// larger of memory and vcores allocated/total) is strictly above this.
    pub preemption_utilization_threshold: Fraction,
    /// `yarn.scheduler.fair.waitTimeBeforeKill` (default 15 s): from a
    /// preemption warning to the kill.
    pub wait_time_before_kill: Duration,
    /// `yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck` (default 10 s):
    /// part of the pause before an app that triggered preemption is
    /// considered starved again (see [`SchedulerSettings::starvation_recheck_delay`]).
    pub wait_time_before_next_starvation_check: Duration,
    /// `yarn.scheduler.fair.am.preemption` (default true): whether application
    /// masters may be preempted in queues without their own setting.
    pub am_preemption_default: bool,
    /// `yarn.scheduler.fair.am.preemption.<queue path>`: per-queue overrides,
    /// for exactly that queue (children do not inherit them).
    pub am_preemption: BTreeMap<QueuePath, bool>,
    /// `yarn.scheduler.fair.update-interval-ms` (default 500 ms): the period
    /// of the update pass (demand, fair shares, starvation). Positive.
    pub update_interval: Duration,
    /// `yarn.scheduler.fair.assignmultiple` (default false): more than one
    /// container per node heartbeat.
    pub assign_multiple: bool,
    /// `yarn.scheduler.fair.dynamic.max.assign` (default true): with
    /// `assign_multiple`, stop once half the node's unallocated resources are assigned.
    pub dynamic_max_assign: bool,
    /// `yarn.scheduler.fair.max.assign` (default unlimited): with
    /// `assign_multiple` and not `dynamic_max_assign`, the cap per heartbeat.
    pub max_assign: MaxAssign,
    /// `yarn.scheduler.fair.sizebasedweight` (default false): an app's weight
    /// grows with the log of its demand instead of being 1.
    pub size_based_weight: bool,
    /// `yarn.scheduler.fair.locality.threshold.node` (default disabled).
    pub locality_threshold_node: LocalityThreshold,
    /// `yarn.scheduler.fair.locality.threshold.rack` (default disabled).
    pub locality_threshold_rack: LocalityThreshold,
    /// `yarn.scheduler.fair.continuous-scheduling-enabled` (default false;
    /// deprecated in Hadoop). Weft runs no timer pass over the nodes and
    /// schedules on heartbeats only; the flag keeps its one effect on
    /// locality (only the time delays count), so a configuration written for
    /// Hadoop relaxes as it did there.
    pub continuous_scheduling: bool,
    /// `yarn.scheduler.fair.continuous-scheduling-sleep-ms` (default 5 ms).
    /// Positive; read and checked, used for nothing (no timer pass).
    pub continuous_scheduling_sleep: Duration,
    /// `yarn.scheduler.fair.locality-delay-node-ms` (default disabled).
    pub locality_delay_node: LocalityDelay,
    /// `yarn.scheduler.fair.locality-delay-rack-ms` (default disabled).
    pub locality_delay_rack: LocalityDelay,
    /// `yarn.scheduler.fair.reservable-nodes` (default 0.05): the share of
    /// nodes (of the rack, or of the cluster for off-switch) an app may
    /// reserve for non-node-local requests.
    pub reservable_nodes: Fraction,
    /// `yarn.scheduler.reservation-threshold.increment-multiple` (default 2):
    /// only containers of at least increment × this may reserve a node.
    /// Finite and not negative.
    pub reservation_threshold_multiple: f64,
    /// Minimum, maximum and increment of a container.
    pub allocation: AllocationLimits,
    /// `yarn.scheduler.include-port-in-node-name` (default false): a node's
    /// name is `host:port`, so several node managers on one host are distinct.
    pub include_port_in_node_name: bool,
    /// `yarn.acl.enable` (default false): enforce ACLs.
    pub acl_enable: bool,
    /// `yarn.admin.acl` (default `*`): the cluster administrators.
    pub admin_acl: Acl,
    /// `yarn.cluster.max-application-priority` (default 0): the highest
    /// application priority; a submission, a priority change or a
    /// recovered app asking for more gets this instead (see
    /// [`SchedulerSettings::cap_app_priority`]). Any integer; priorities
    /// below it are not bounded.
    pub max_app_priority: AppPriority,
    /// `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms` (default 1 s):
    /// how often node managers are told to heartbeat. Positive.
    pub node_heartbeat_interval: Duration,
    /// `yarn.nm.liveness-monitor.expiry-interval-ms` (default 10 min): a node
    /// silent this long is lost. Positive.
    pub nm_liveness_expiry: Duration,
    /// `yarn.am.liveness-monitor.expiry-interval-ms` (default 10 min): an
    /// application master that makes no allocate call this long has failed
    /// its attempt. Positive.
    pub am_liveness_expiry: Duration,
}

/// A number in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Fraction(f64);

impl Fraction {
    /// Zero.
    pub const ZERO: Fraction = Fraction(0.0);
    /// One.
    pub const ONE: Fraction = Fraction(1.0);

    /// `value` if it lies in [0, 1].
    pub fn new(value: f64) -> Option<Fraction> {
        (0.0..=1.0).contains(&value).then_some(Fraction(value))
    }

    /// The number.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// Which Hadoop era's preemption to follow (see `docs/preemption.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreemptionModel {
    /// Hadoop 2.9 and later (YARN-4752): starvation per app, victims found
    /// node by node for a concrete request, freed room handed back to the
    /// starved app.
    #[default]
    Current,
    /// Hadoop 2.6 to 2.8: a deficit per leaf queue, victims found by walking
    /// the queue tree to the queue and app most over their fair shares,
    /// freed room left to the ordinary fair order.
    Classic,
}

impl PreemptionModel {
    /// The property's spelling of the model.
    pub fn name(self) -> &'static str {
        match self {
            PreemptionModel::Current => "current",
            PreemptionModel::Classic => "classic",
        }
    }
}

impl fmt::Display for PreemptionModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PreemptionModel {
    type Err = UnknownPreemptionModel;

    /// `current` or `classic`, in any case, surrounding blanks ignored.
    fn from_str(text: &str) -> Result<PreemptionModel, UnknownPreemptionModel> {
        let text = text.trim();
        [PreemptionModel::Current, PreemptionModel::Classic]
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(text))
            .ok_or_else(|| UnknownPreemptionModel {
                value: text.to_owned(),
            })
    }
}

/// A preemption model name that is neither `current` nor `classic`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown preemption model {value:?} (expected current or classic)")]
pub struct UnknownPreemptionModel {
    /// The text given.
    pub value: String,
}

/// How many containers one heartbeat may get when dynamic assignment is off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxAssign {
    /// No limit (Hadoop: `max.assign` ≤ 0).
    Unlimited,
    /// At most this many.
    AtMost(NonZeroU32),
}

/// A locality threshold: the share of the cluster's nodes an app may pass
/// over (scheduling opportunities) before accepting the next locality level.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LocalityThreshold {
    /// Negative in the file: no delay scheduling by opportunities.
    Disabled,
    /// The share; values above 1 in the file count as 1.
    Nodes(Fraction),
}

/// A time-based locality delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalityDelay {
    /// Negative in the file: no delay scheduling by time.
    Disabled,
    /// Wait this long since the last container (or the first look) before
    /// accepting the next locality level.
    After(Duration),
}

/// How the scheduler relaxes locality (see [`SchedulerSettings::locality_relaxation`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LocalityRelaxation {
    /// No delay scheduling: any node will do at once.
    Immediate,
    /// Delay scheduling. At least one form is present; a request moves to the
    /// next level as soon as any present form allows it.
    Delayed {
        /// Relax after passing over this share of the cluster's nodes.
        opportunities: Option<OpportunityThresholds>,
        /// Relax after waiting this long.
        time: Option<TimeDelays>,
    },
}

/// Both opportunity thresholds, when both are enabled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpportunityThresholds {
    /// Node-local → rack-local.
    pub node: Fraction,
    /// Rack-local → off-switch.
    pub rack: Fraction,
}

/// Both time delays, when both are enabled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeDelays {
    /// Node-local → rack-local.
    pub node: Duration,
    /// Rack-local → off-switch.
    pub rack: Duration,
}

/// How many containers a node heartbeat may receive (see
/// [`SchedulerSettings::heartbeat_assignment`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeartbeatAssignment {
    /// At most one.
    One,
    /// Keep assigning while what this heartbeat assigned fits in half of the
    /// node's unallocated resources at its start (so one container may overshoot).
    HalfOfUnallocated,
    /// Up to a fixed number.
    AtMost(MaxAssign),
}

impl Default for SchedulerSettings {
    /// Hadoop's defaults for every property.
    fn default() -> SchedulerSettings {
        SchedulerSettings {
            allocation_file: "fair-scheduler.xml".to_owned(),
            user_as_default_queue: true,
            allow_undeclared_pools: true,
            preemption: false,
            preemption_dry_run: false,
            preemption_model: PreemptionModel::Current,
            preemption_utilization_threshold: Fraction(0.8),
            wait_time_before_kill: Duration::from_millis(15_000),
            wait_time_before_next_starvation_check: Duration::from_millis(10_000),
            am_preemption_default: true,
            am_preemption: BTreeMap::new(),
            update_interval: DEFAULT_UPDATE_INTERVAL,
            assign_multiple: false,
            dynamic_max_assign: true,
            max_assign: MaxAssign::Unlimited,
            size_based_weight: false,
            locality_threshold_node: LocalityThreshold::Disabled,
            locality_threshold_rack: LocalityThreshold::Disabled,
            continuous_scheduling: false,
            continuous_scheduling_sleep: Duration::from_millis(5),
            locality_delay_node: LocalityDelay::Disabled,
            locality_delay_rack: LocalityDelay::Disabled,
            reservable_nodes: Fraction(0.05),
            reservation_threshold_multiple: 2.0,
            allocation: AllocationLimits::default(),
            include_port_in_node_name: false,
            acl_enable: false,
            admin_acl: Acl::everyone(),
            max_app_priority: AppPriority(0),
            node_heartbeat_interval: Duration::from_millis(1_000),
            nm_liveness_expiry: Duration::from_millis(600_000),
            am_liveness_expiry: Duration::from_millis(600_000),
        }
    }
}

const DEFAULT_UPDATE_INTERVAL: Duration = Duration::from_millis(500);

impl SchedulerSettings {
    /// Reads the scheduler's properties from `config`. Every bad value is an
    /// error, all reported together; names that are deprecated, ignored or
    /// unknown under a scheduler prefix are warnings. Properties of other
    /// components are left alone.
    pub fn from_config(
        config: &HadoopConfig,
    ) -> Result<(SchedulerSettings, Vec<SiteWarning>), SiteError> {
        let mut read = Reader {
            config,
            problems: Vec::new(),
            warnings: Vec::new(),
        };
        let settings = read.settings();
        read.flag_unknown_and_ignored();
        read.problems.sort_by_key(SiteProblem::location);
        read.warnings.sort_by_key(SiteWarning::location);
        match settings {
            Some(settings) if read.problems.is_empty() => Ok((settings, read.warnings)),
            _ => Err(SiteError {
                problems: read.problems,
            }),
        }
    }

    /// The smallest container.
    pub fn min_allocation(&self) -> Resource {
        self.allocation.min()
    }

    /// The largest container anywhere.
    pub fn max_allocation(&self) -> Resource {
        self.allocation.max()
    }

    /// The step container sizes are rounded up to.
    pub fn increment(&self) -> Resource {
        self.allocation.increment()
    }

    /// Normalises an ask (see [`AllocationLimits::normalize`]);
    /// `queue_max_container` is the queue's effective `maxContainerAllocation`.
    pub fn normalize(&self, ask: Resource, queue_max_container: Resource) -> Resource {
        self.allocation.normalize(ask, queue_max_container)
    }

    /// The smallest container that may reserve a node: increment ×
    /// `reservation_threshold_multiple` (default 2048 MB / 2 vcores).
    pub fn reservation_threshold(&self) -> Resource {
        self.allocation
            .reservation_threshold(self.reservation_threshold_multiple)
    }

    /// Whether AM containers of apps in `queue` may be preempted.
    pub fn am_preemption_enabled(&self, queue: &QueuePath) -> bool {
        self.am_preemption
            .get(queue)
            .copied()
            .unwrap_or(self.am_preemption_default)
    }

    /// How many containers one node heartbeat may receive.
    pub fn heartbeat_assignment(&self) -> HeartbeatAssignment {
        if !self.assign_multiple {
            HeartbeatAssignment::One
        } else if self.dynamic_max_assign {
            HeartbeatAssignment::HalfOfUnallocated
        } else {
            HeartbeatAssignment::AtMost(self.max_assign)
        }
    }

    /// How requests relax their locality.
    ///
    /// With continuous scheduling, as in Hadoop, only the time delays count.
    /// On heartbeats Hadoop uses only the opportunity thresholds; Weft also
    /// applies the time delays when both are set, and a request relaxes as
    /// soon as either form allows. A form counts only when both its node and
    /// rack values are enabled, as Hadoop disables a form when either is negative.
    pub fn locality_relaxation(&self) -> LocalityRelaxation {
        let opportunities = match (self.locality_threshold_node, self.locality_threshold_rack) {
            (LocalityThreshold::Nodes(node), LocalityThreshold::Nodes(rack)) => {
                // Hadoop reads both with getFloat and widens them only to
                // multiply by the node count: 0.7 is 0.699999988..., so 10
                // nodes relax after 7 opportunities, not 8.
                let as_float = |f: Fraction| Fraction(f64::from(f.0 as f32));
                Some(OpportunityThresholds {
                    node: as_float(node),
                    rack: as_float(rack),
                })
            }
            _ => None,
        };
        let time = match (self.locality_delay_node, self.locality_delay_rack) {
            (LocalityDelay::After(node), LocalityDelay::After(rack)) => {
                Some(TimeDelays { node, rack })
            }
            _ => None,
        };
        let opportunities = if self.continuous_scheduling {
            None
        } else {
            opportunities
        };
        if opportunities.is_none() && time.is_none() {
            LocalityRelaxation::Immediate
        } else {
            LocalityRelaxation::Delayed {
                opportunities,
                time,
            }
        }
    }

    /// `asked`, lowered to `max_app_priority` if above it, as Hadoop's
    /// scheduler lowers a priority above `yarn.cluster.max-application-priority`
    /// (silently: the report shows what is in force). A priority below the
    /// cap is kept, however low: it only gives up its own app's share.
    pub fn cap_app_priority(&self, asked: AppPriority) -> AppPriority {
        AppPriority(asked.0.min(self.max_app_priority.0))
    }

    /// The time Hadoop allows for preempted resources to reach the starved
    /// app: 4 node heartbeats. Hadoop allows 10 continuous-scheduling passes
    /// instead when its timer runs; Weft has no timer, so freed room reaches
    /// the app on the node's next heartbeat whatever the flag says, and a
    /// window of 50 ms would close before that heartbeat came.
    pub fn preemption_allocation_delay(&self) -> Duration {
        self.node_heartbeat_interval.saturating_mul(4)
    }

    /// How long after triggering preemption an app is not considered starved
    /// again: kill wait + allocation delay + next-check wait (default 29 s).
    pub fn starvation_recheck_delay(&self) -> Duration {
        self.wait_time_before_kill
            + self.preemption_allocation_delay()
            + self.wait_time_before_next_starvation_check
    }
}

/// Property names, spelled once.
mod names {
    pub(super) const FAIR_PREFIX: &str = "yarn.scheduler.fair.";
    pub(super) const MRV1_PREFIX: &str = "mapred.fairscheduler.";
    pub(super) const ALLOCATION_FILE: &str = "yarn.scheduler.fair.allocation.file";
    pub(super) const USER_AS_DEFAULT_QUEUE: &str = "yarn.scheduler.fair.user-as-default-queue";
    pub(super) const ALLOW_UNDECLARED_POOLS: &str = "yarn.scheduler.fair.allow-undeclared-pools";
    pub(super) const PREEMPTION: &str = "yarn.scheduler.fair.preemption";
    pub(super) const PREEMPTION_DRY_RUN: &str = "yarn.scheduler.fair.preemption.dry-run";
    pub(super) const PREEMPTION_MODEL: &str = "yarn.scheduler.fair.preemption.model";
    pub(super) const UTILIZATION_THRESHOLD: &str =
        "yarn.scheduler.fair.preemption.cluster-utilization-threshold";
    pub(super) const WAIT_TIME_BEFORE_KILL: &str = "yarn.scheduler.fair.waitTimeBeforeKill";
    pub(super) const WAIT_TIME_BEFORE_NEXT_STARVATION_CHECK: &str =
        "yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck";
    pub(super) const AM_PREEMPTION: &str = "yarn.scheduler.fair.am.preemption";
    pub(super) const AM_PREEMPTION_PREFIX: &str = "yarn.scheduler.fair.am.preemption.";
    pub(super) const UPDATE_INTERVAL: &str = "yarn.scheduler.fair.update-interval-ms";
    pub(super) const ASSIGN_MULTIPLE: &str = "yarn.scheduler.fair.assignmultiple";
    pub(super) const DYNAMIC_MAX_ASSIGN: &str = "yarn.scheduler.fair.dynamic.max.assign";
    pub(super) const MAX_ASSIGN: &str = "yarn.scheduler.fair.max.assign";
    pub(super) const SIZE_BASED_WEIGHT: &str = "yarn.scheduler.fair.sizebasedweight";
    pub(super) const LOCALITY_THRESHOLD_NODE: &str = "yarn.scheduler.fair.locality.threshold.node";
    pub(super) const LOCALITY_THRESHOLD_RACK: &str = "yarn.scheduler.fair.locality.threshold.rack";
    pub(super) const CONTINUOUS_SCHEDULING: &str =
        "yarn.scheduler.fair.continuous-scheduling-enabled";
    pub(super) const CONTINUOUS_SCHEDULING_SLEEP: &str =
        "yarn.scheduler.fair.continuous-scheduling-sleep-ms";
    pub(super) const LOCALITY_DELAY_NODE: &str = "yarn.scheduler.fair.locality-delay-node-ms";
    pub(super) const LOCALITY_DELAY_RACK: &str = "yarn.scheduler.fair.locality-delay-rack-ms";
    pub(super) const RESERVABLE_NODES: &str = "yarn.scheduler.fair.reservable-nodes";
    pub(super) const RESERVATION_MULTIPLE: &str =
        "yarn.scheduler.reservation-threshold.increment-multiple";
    pub(super) const MIN_MB: &str = "yarn.scheduler.minimum-allocation-mb";
    pub(super) const MIN_VCORES: &str = "yarn.scheduler.minimum-allocation-vcores";
    pub(super) const MAX_MB: &str = "yarn.scheduler.maximum-allocation-mb";
    pub(super) const MAX_VCORES: &str = "yarn.scheduler.maximum-allocation-vcores";
    pub(super) const INCREMENT_MB: &str = "yarn.resource-types.memory-mb.increment-allocation";
    pub(super) const INCREMENT_VCORES: &str = "yarn.resource-types.vcores.increment-allocation";
    pub(super) const OLD_INCREMENT_MB: &str = "yarn.scheduler.increment-allocation-mb";
    pub(super) const OLD_INCREMENT_VCORES: &str = "yarn.scheduler.increment-allocation-vcores";
    pub(super) const INCLUDE_PORT: &str = "yarn.scheduler.include-port-in-node-name";
    pub(super) const ACL_ENABLE: &str = "yarn.acl.enable";
    pub(super) const ADMIN_ACL: &str = "yarn.admin.acl";
    pub(super) const MAX_APP_PRIORITY: &str = "yarn.cluster.max-application-priority";
    pub(super) const HEARTBEAT_INTERVAL: &str =
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms";
    pub(super) const NM_EXPIRY: &str = "yarn.nm.liveness-monitor.expiry-interval-ms";
    pub(super) const AM_EXPIRY: &str = "yarn.am.liveness-monitor.expiry-interval-ms";

    /// Every `yarn.scheduler.fair.*` name read above (the per-queue AM
    /// preemption names are matched by prefix).
    pub(super) const KNOWN_FAIR: &[&str] = &[
        ALLOCATION_FILE,
        USER_AS_DEFAULT_QUEUE,
        ALLOW_UNDECLARED_POOLS,
        PREEMPTION,
        PREEMPTION_DRY_RUN,
        PREEMPTION_MODEL,
        UTILIZATION_THRESHOLD,
        WAIT_TIME_BEFORE_KILL,
        WAIT_TIME_BEFORE_NEXT_STARVATION_CHECK,
        AM_PREEMPTION,
        UPDATE_INTERVAL,
        ASSIGN_MULTIPLE,
        DYNAMIC_MAX_ASSIGN,
        MAX_ASSIGN,
        SIZE_BASED_WEIGHT,
        LOCALITY_THRESHOLD_NODE,
        LOCALITY_THRESHOLD_RACK,
        CONTINUOUS_SCHEDULING,
        CONTINUOUS_SCHEDULING_SLEEP,
        LOCALITY_DELAY_NODE,
        LOCALITY_DELAY_RACK,
        RESERVABLE_NODES,
    ];

    /// MRv1 names that keep a meaning, each with the YARN name that takes its
    /// value. `locality.delay` feeds both delays, after the per-level names.
    pub(super) const MRV1_ALIASES: &[(&str, &str)] = &[
        ("mapred.fairscheduler.allocation.file", ALLOCATION_FILE),
        (
            "mapred.fairscheduler.allow.undeclared.pools",
            ALLOW_UNDECLARED_POOLS,
        ),
        ("mapred.fairscheduler.preemption", PREEMPTION),
        (
            "mapred.fairscheduler.preemption.only.log",
            PREEMPTION_DRY_RUN,
        ),
        ("mapred.fairscheduler.sizebasedweight", SIZE_BASED_WEIGHT),
        ("mapred.fairscheduler.update.interval", UPDATE_INTERVAL),
        ("mapred.fairscheduler.assignmultiple", ASSIGN_MULTIPLE),
        (
            "mapred.fairscheduler.locality.delay.nodelocal",
            LOCALITY_DELAY_NODE,
        ),
        (
            "mapred.fairscheduler.locality.delay.racklocal",
            LOCALITY_DELAY_RACK,
        ),
        ("mapred.fairscheduler.locality.delay", LOCALITY_DELAY_NODE),
        ("mapred.fairscheduler.locality.delay", LOCALITY_DELAY_RACK),
    ];

    /// What MRv1's single locality delay turns into.
    pub(super) const BOTH_LOCALITY_DELAYS: &str =
        "yarn.scheduler.fair.locality-delay-node-ms and yarn.scheduler.fair.locality-delay-rack-ms";

    /// Names that are known but have no effect, with the reason.
    pub(super) const IGNORED: &[(&str, &str)] = &[
        (
            "yarn.scheduler.fair.preemptionInterval",
            "Hadoop 2.x's preemption interval is gone: starvation is checked on every update pass",
        ),
        (
            "yarn.scheduler.fair.event-log-enabled",
            "the scheduler event log is not supported: decisions are reported as events",
        ),
        (
            "yarn.scheduler.fair.migration.mode",
            "it is internal to Hadoop's Fair-to-Capacity Scheduler converter",
        ),
        (
            "yarn.scheduler.fair.no-terminal-rule.check",
            "it is internal to Hadoop's Fair-to-Capacity Scheduler converter",
        ),
        (
            "mapred.fairscheduler.poolnameproperty",
            "YARN places apps with the allocation file's placement rules",
        ),
        (
            "mapred.fairscheduler.preemption.interval",
            "starvation is checked on every update pass",
        ),
        (
            "mapred.fairscheduler.weightadjuster",
            "pluggable weight adjusters are not supported",
        ),
        (
            "mapred.newjobweightbooster.factor",
            "pluggable weight adjusters are not supported",
        ),
        (
            "mapred.newjobweightbooster.duration",
            "pluggable weight adjusters are not supported",
        ),
        (
            "mapred.fairscheduler.loadmanager",
            "a node's capacity is what it registers with",
        ),
        (
            "mapred.fairscheduler.taskselector",
            "requests carry their own locality and there is no speculative-task selection",
        ),
        (
            "mapred.fairscheduler.eventlog.enabled",
            "the scheduler event log is not supported: decisions are reported as events",
        ),
        (
            "mapred.fairscheduler.dump.interval",
            "the scheduler event log is not supported: decisions are reported as events",
        ),
        (
            "mapred.fairscheduler.assignmultiple.maps",
            "YARN has containers, not map and reduce slots: see yarn.scheduler.fair.max.assign",
        ),
        (
            "mapred.fairscheduler.assignmultiple.reduces",
            "YARN has containers, not map and reduce slots: see yarn.scheduler.fair.max.assign",
        ),
    ];

    /// The reason given for any other MRv1 name.
    pub(super) const MRV1_UNKNOWN: &str = "it is an MRv1 setting with no meaning in YARN";
}

/// What the typed readers below expect, for error messages.
const BOOLEAN: &str = "a boolean (true or false)";
const INTEGER: &str = "an integer";
const NUMBER: &str = "a number";
const MODEL: &str = "a preemption model (current or classic)";
const QUANTITY: &str = "a whole amount with an optional unit (for example 1024, 512 Mi or 1 Gi)";
const UNIT: &str = "an amount with a known unit (k, M, G, T, P, Ki, Mi, Gi, Ti, Pi...)";

/// One pass over a config: looks values up, collects problems and warnings.
struct Reader<'a> {
    config: &'a HadoopConfig,
    problems: Vec<SiteProblem>,
    warnings: Vec<SiteWarning>,
}

impl<'a> Reader<'a> {
    /// Every setting, or `None` when the allocation limits are inconsistent
    /// (the problems say why); other bad values leave their default in place
    /// and a problem behind.
    fn settings(&mut self) -> Option<SchedulerSettings> {
        use names::*;
        let d = SchedulerSettings::default();
        let allocation_file = self
            .lookup(ALLOCATION_FILE)
            .map_or(d.allocation_file, |p| p.value.trim().to_owned());
        let continuous_scheduling = self.boolean(CONTINUOUS_SCHEDULING, d.continuous_scheduling);
        if continuous_scheduling && let Some(p) = self.lookup(CONTINUOUS_SCHEDULING) {
            self.warnings.push(SiteWarning::DeprecatedFeature {
                    location: p.location,
                    name: p.name.clone(),
                    advice: "Hadoop deprecates continuous scheduling, and Weft schedules on node heartbeats only (the flag makes only the time-based locality delays count); prefer yarn.scheduler.fair.assignmultiple",
                });
        }
        let settings = SchedulerSettings {
            allocation_file,
            user_as_default_queue: self.boolean(USER_AS_DEFAULT_QUEUE, d.user_as_default_queue),
            allow_undeclared_pools: self.boolean(ALLOW_UNDECLARED_POOLS, d.allow_undeclared_pools),
            preemption: self.boolean(PREEMPTION, d.preemption),
            preemption_dry_run: self.boolean(PREEMPTION_DRY_RUN, d.preemption_dry_run),
            preemption_model: self.preemption_model(d.preemption_model),
            preemption_utilization_threshold: self
                .fraction(UTILIZATION_THRESHOLD, d.preemption_utilization_threshold),
            wait_time_before_kill: self.millis(WAIT_TIME_BEFORE_KILL, d.wait_time_before_kill, 0),
            wait_time_before_next_starvation_check: self.millis(
                WAIT_TIME_BEFORE_NEXT_STARVATION_CHECK,
                d.wait_time_before_next_starvation_check,
                0,
            ),
            am_preemption_default: self.boolean(AM_PREEMPTION, d.am_preemption_default),
            am_preemption: self.am_preemption(),
            update_interval: self.update_interval(),
            assign_multiple: self.boolean(ASSIGN_MULTIPLE, d.assign_multiple),
            dynamic_max_assign: self.boolean(DYNAMIC_MAX_ASSIGN, d.dynamic_max_assign),
            max_assign: self.max_assign(),
            size_based_weight: self.boolean(SIZE_BASED_WEIGHT, d.size_based_weight),
            locality_threshold_node: self.locality_threshold(LOCALITY_THRESHOLD_NODE),
            locality_threshold_rack: self.locality_threshold(LOCALITY_THRESHOLD_RACK),
            continuous_scheduling,
            continuous_scheduling_sleep: self.millis(
                CONTINUOUS_SCHEDULING_SLEEP,
                d.continuous_scheduling_sleep,
                1,
            ),
            locality_delay_node: self.locality_delay(LOCALITY_DELAY_NODE),
            locality_delay_rack: self.locality_delay(LOCALITY_DELAY_RACK),
            reservable_nodes: self.fraction(RESERVABLE_NODES, d.reservable_nodes),
            reservation_threshold_multiple: self.reservation_multiple(),
            allocation: AllocationLimits::default(),
            include_port_in_node_name: self.boolean(INCLUDE_PORT, d.include_port_in_node_name),
            acl_enable: self.boolean(ACL_ENABLE, d.acl_enable),
            admin_acl: self
                .lookup(ADMIN_ACL)
                .map_or(d.admin_acl, |p| Acl::parse(&p.value)),
            max_app_priority: self.max_app_priority(d.max_app_priority),
            node_heartbeat_interval: self.millis(HEARTBEAT_INTERVAL, d.node_heartbeat_interval, 1),
            nm_liveness_expiry: self.millis(NM_EXPIRY, d.nm_liveness_expiry, 1),
            am_liveness_expiry: self.millis(AM_EXPIRY, d.am_liveness_expiry, 1),
        };
        let allocation = self.allocation()?;
        Some(SchedulerSettings {
            allocation,
            ..settings
        })
    }

    /// The property for a setting: its own name first, else an MRv1 alias
    /// (deprecated). Shadowed aliases are flagged by `flag_unknown_and_ignored`.
    fn lookup(&self, name: &'static str) -> Option<&'a Property> {
        self.config.get(name).or_else(|| {
            names::MRV1_ALIASES
                .iter()
                .filter(|(_, target)| *target == name)
                .find_map(|(alias, _)| self.config.get(alias))
        })
    }

    fn invalid(&mut self, p: &Property, expected: &'static str) {
        self.problems.push(SiteProblem::InvalidValue {
            location: p.location,
            name: p.name.clone(),
            value: p.value.clone(),
            expected,
        });
    }

    fn out_of_range(&mut self, p: &Property, reason: &'static str) {
        self.problems.push(SiteProblem::OutOfRange {
            location: p.location,
            name: p.name.clone(),
            value: p.value.trim().to_owned(),
            reason,
        });
    }

    fn boolean(&mut self, name: &'static str, default: bool) -> bool {
        let Some(p) = self.lookup(name) else {
            return default;
        };
        parse_bool(&p.value).unwrap_or_else(|| {
            self.invalid(p, BOOLEAN);
            default
        })
    }

    fn preemption_model(&mut self, default: PreemptionModel) -> PreemptionModel {
        let Some(p) = self.lookup(names::PREEMPTION_MODEL) else {
            return default;
        };
        p.value.parse().unwrap_or_else(|_| {
            self.invalid(p, MODEL);
            default
        })
    }

    fn int(&mut self, p: &Property) -> Option<i64> {
        let res = parse_int(&p.value);
        if res.is_none() {
            self.invalid(p, INTEGER);
        }
        res
    }

    fn float(&mut self, p: &Property) -> Option<f64> {
        let res = parse_float(&p.value);
        if res.is_none() {
            self.invalid(p, NUMBER);
        }
        res
    }

    /// A duration in milliseconds, at least `min`.
    fn millis(&mut self, name: &'static str, default: Duration, min: i64) -> Duration {
        let Some(p) = self.lookup(name) else {
            return default;
        };
        match self.int(p) {
            Some(ms) if ms >= min => Duration::from_millis(ms.unsigned_abs()),
            Some(_) => {
                self.out_of_range(
                    p,
                    if min > 0 {
                        "must be positive"
                    } else {
                        "must not be negative"
                    },
                );
                default
            }
            None => default,
        }
    }

    fn fraction(&mut self, name: &'static str, default: Fraction) -> Fraction {
        let Some(p) = self.lookup(name) else {
            return default;
        };
        match self.float(p) {
            Some(x) => Fraction::new(x).unwrap_or_else(|| {
                self.out_of_range(p, "must be between 0 and 1");
                default
            }),
            None => default,
        }
    }

    /// Hadoop replaces a negative update interval with the default; zero would
    /// stop the update pass altogether, so Weft refuses it.
    fn update_interval(&mut self) -> Duration {
        let Some(p) = self.lookup(names::UPDATE_INTERVAL) else {
            return DEFAULT_UPDATE_INTERVAL;
        };
        match self.int(p) {
            Some(ms) if ms > 0 => Duration::from_millis(ms.unsigned_abs()),
            Some(0) => {
                self.out_of_range(p, "must be positive");
                DEFAULT_UPDATE_INTERVAL
            }
            Some(_) => {
                self.warnings.push(SiteWarning::NegativeUsesDefault {
                    location: p.location,
                    name: p.name.clone(),
                    value: p.value.trim().to_owned(),
                    default: DEFAULT_UPDATE_INTERVAL,
                });
                DEFAULT_UPDATE_INTERVAL
            }
            None => DEFAULT_UPDATE_INTERVAL,
        }
    }

    /// Any integer Hadoop's `getInt` takes (a Java `int`).
    fn max_app_priority(&mut self, default: AppPriority) -> AppPriority {
        let Some(p) = self.lookup(names::MAX_APP_PRIORITY) else {
            return default;
        };
        match self.int(p) {
            Some(n) => i32::try_from(n).map(AppPriority).unwrap_or_else(|_| {
                self.out_of_range(p, "must fit in 32 bits");
                default
            }),
            None => default,
        }
    }

    fn max_assign(&mut self) -> MaxAssign {
        let Some(p) = self.lookup(names::MAX_ASSIGN) else {
            return MaxAssign::Unlimited;
        };
        match self.int(p) {
            Some(n) if n <= 0 => MaxAssign::Unlimited,
            Some(n) => match u32::try_from(n).ok().and_then(NonZeroU32::new) {
                Some(n) => MaxAssign::AtMost(n),
                None => {
                    self.out_of_range(p, "must fit in 32 bits");
                    MaxAssign::Unlimited
                }
            },
            None => MaxAssign::Unlimited,
        }
    }

    fn locality_threshold(&mut self, name: &'static str) -> LocalityThreshold {
        let Some(p) = self.lookup(name) else {
            return LocalityThreshold::Disabled;
        };
        match self.float(p) {
            Some(x) if x < 0.0 => LocalityThreshold::Disabled,
            Some(x) if x > 1.0 => {
                self.warnings.push(SiteWarning::Clamped {
                    location: p.location,
                    name: p.name.clone(),
                    value: p.value.trim().to_owned(),
                });
                LocalityThreshold::Nodes(Fraction::ONE)
            }
            Some(x) => LocalityThreshold::Nodes(Fraction(x)),
            None => LocalityThreshold::Disabled,
        }
    }

    fn locality_delay(&mut self, name: &'static str) -> LocalityDelay {
        let Some(p) = self.lookup(name) else {
            return LocalityDelay::Disabled;
        };
        match self.int(p) {
            Some(ms) if ms >= 0 => LocalityDelay::After(Duration::from_millis(ms.unsigned_abs())),
            _ => LocalityDelay::Disabled,
        }
    }

    fn reservation_multiple(&mut self) -> f64 {
        let default = SchedulerSettings::default().reservation_threshold_multiple;
        let Some(p) = self.lookup(names::RESERVATION_MULTIPLE) else {
            return default;
        };
        match self.float(p) {
            Some(x) if x >= 0.0 => x,
            Some(_) => {
                self.out_of_range(p, "must not be negative");
                default
            }
            None => default,
        }
    }

    fn am_preemption(&mut self) -> BTreeMap<QueuePath, bool> {
        let mut res = BTreeMap::new();
        for p in self.config.with_prefix(names::AM_PREEMPTION_PREFIX) {
            let queue = &p.name[names::AM_PREEMPTION_PREFIX.len()..];
            let path = match QueuePath::parse(queue) {
                Ok(path) => path,
                Err(err) => {
                    self.problems.push(SiteProblem::InvalidQueueName {
                        location: p.location,
                        name: p.name.clone(),
                        reason: err.to_string(),
                    });
                    continue;
                }
            };
            match parse_bool(&p.value) {
                Some(b) => {
                    res.insert(path, b);
                }
                None => self.invalid(p, BOOLEAN),
            }
        }
        res
    }

    /// A non-negative whole amount in a plain-integer property.
    fn amount(&mut self, name: &'static str, default: u64) -> (u64, Option<Location>) {
        let Some(p) = self.config.get(name) else {
            return (default, None);
        };
        match self.int(p) {
            Some(v) if v >= 0 => (v.unsigned_abs(), Some(p.location)),
            Some(_) => {
                self.out_of_range(p, "must not be negative");
                (default, Some(p.location))
            }
            None => (default, Some(p.location)),
        }
    }

    /// An increment: the `yarn.resource-types.*` name (value with an optional
    /// unit) wins over the deprecated `yarn.scheduler.*` one (plain integer).
    fn increment(
        &mut self,
        name: &'static str,
        old_name: &'static str,
        default_unit: &str,
        default: u64,
    ) -> (u64, Option<Location>) {
        let Some(p) = self.config.get(name) else {
            if let Some(old) = self.config.get(old_name) {
                self.warnings.push(SiteWarning::DeprecatedName {
                    location: old.location,
                    name: old.name.clone(),
                    replacement: name,
                });
            }
            return self.amount(old_name, default);
        };
        if let Some(old) = self.config.get(old_name) {
            self.warnings.push(SiteWarning::Shadowed {
                location: old.location,
                name: old.name.clone(),
                by: name,
            });
        }
        match parse_quantity(&p.value, default_unit) {
            Ok(v) => (v, Some(p.location)),
            Err(QuantityError::Syntax) => {
                self.invalid(p, QUANTITY);
                (default, Some(p.location))
            }
            Err(QuantityError::UnknownUnit) => {
                self.invalid(p, UNIT);
                (default, Some(p.location))
            }
            Err(QuantityError::Overflow) => {
                self.out_of_range(p, "too large");
                (default, Some(p.location))
            }
        }
    }

    /// The container limits, cross-checked; `None` when they are inconsistent
    /// or one of them could not be read.
    fn allocation(&mut self) -> Option<AllocationLimits> {
        use names::*;
        let d = AllocationLimits::default();
        let n_problems = self.problems.len();
        let (min_mb, min_mb_at) = self.amount(MIN_MB, d.min().memory_mb());
        let (min_vc, min_vc_at) = self.amount(MIN_VCORES, d.min().vcores());
        let (max_mb, max_mb_at) = self.amount(MAX_MB, d.max().memory_mb());
        let (max_vc, max_vc_at) = self.amount(MAX_VCORES, d.max().vcores());
        let (inc_mb, inc_mb_at) = self.increment(
            INCREMENT_MB,
            OLD_INCREMENT_MB,
            "Mi",
            d.increment().memory_mb(),
        );
        let (inc_vc, inc_vc_at) = self.increment(
            INCREMENT_VCORES,
            OLD_INCREMENT_VCORES,
            "",
            d.increment().vcores(),
        );
        if self.problems.len() > n_problems {
            // A bad value was replaced by its default; cross-checking it would mislead.
            return None;
        }
        let where_ = |ty: ResourceType| match ty {
            ResourceType::Memory => (MIN_MB, min_mb_at, MAX_MB, max_mb_at, inc_mb_at),
            ResourceType::Vcores => (MIN_VCORES, min_vc_at, MAX_VCORES, max_vc_at, inc_vc_at),
        };
        let errors = match AllocationLimits::new(
            Resource::new(min_mb, min_vc),
            Resource::new(max_mb, max_vc),
            Resource::new(inc_mb, inc_vc),
        ) {
            Ok(limits) => return Some(limits),
            Err(errors) => errors,
        };
        for err in errors {
            match err {
                AllocationLimitsError::MinAboveMax { resource, min, max } => {
                    let (min_name, min_at, max_name, max_at, _) = where_(resource);
                    // Defaults are consistent, so at least one of the two is set.
                    let location = min_at.max(max_at).unwrap_or(Location {
                        layer: 0,
                        line: 1,
                        column: 1,
                    });
                    self.problems.push(SiteProblem::MinAboveMax {
                        location,
                        resource,
                        min_name,
                        min,
                        max_name,
                        max,
                    });
                }
                AllocationLimitsError::ZeroIncrement { resource } => {
                    let (.., inc_at) = where_(resource);
                    let name = match resource {
                        ResourceType::Memory => [INCREMENT_MB, OLD_INCREMENT_MB],
                        ResourceType::Vcores => [INCREMENT_VCORES, OLD_INCREMENT_VCORES],
                    };
                    let p = name.iter().find_map(|n| self.config.get(n));
                    let with_unit = p.is_some_and(|p| p.name == name[0]);
                    self.problems.push(SiteProblem::OutOfRange {
                        location: inc_at.unwrap_or(Location {
                            layer: 0,
                            line: 1,
                            column: 1,
                        }),
                        name: p.map_or(name[0], |p| p.name.as_str()).to_owned(),
                        value: p.map_or_else(|| "0".to_owned(), |p| p.value.trim().to_owned()),
                        reason: if with_unit {
                            "must be positive once converted to the resource's unit"
                        } else {
                            "must be positive"
                        },
                    });
                }
            }
        }
        None
    }

    /// Warnings for names under the scheduler prefixes that are read by
    /// nothing above, and for aliases that lose to their YARN name.
    fn flag_unknown_and_ignored(&mut self) {
        for p in self.config.properties() {
            let name = p.name.as_str();
            if let Some((_, reason)) = names::IGNORED.iter().find(|(n, _)| *n == name) {
                self.warnings.push(SiteWarning::Ignored {
                    location: p.location,
                    name: p.name.clone(),
                    reason,
                });
            } else if let Some(targets) = self.alias_targets(name) {
                self.flag_alias(p, &targets);
            } else if name.starts_with(names::MRV1_PREFIX) {
                self.warnings.push(SiteWarning::Ignored {
                    location: p.location,
                    name: p.name.clone(),
                    reason: names::MRV1_UNKNOWN,
                });
            } else if name.starts_with(names::FAIR_PREFIX)
                && !names::KNOWN_FAIR.contains(&name)
                && !name.starts_with(names::AM_PREEMPTION_PREFIX)
            {
                self.warnings.push(SiteWarning::UnknownProperty {
                    location: p.location,
                    name: p.name.clone(),
                });
            }
        }
    }

    fn alias_targets(&self, name: &str) -> Option<Vec<&'static str>> {
        let targets: Vec<&'static str> = names::MRV1_ALIASES
            .iter()
            .filter(|(alias, _)| *alias == name)
            .map(|(_, target)| *target)
            .collect();
        (!targets.is_empty()).then_some(targets)
    }

    /// An alias is deprecated when it supplies a value, shadowed when
    /// something of higher precedence supplies every value it could.
    fn flag_alias(&mut self, p: &Property, targets: &[&'static str]) {
        let mut used_for = Vec::new();
        let mut shadowed_by = None;
        for target in targets {
            match self.lookup(target) {
                Some(winner) if std::ptr::eq(winner, p) => used_for.push(*target),
                _ => shadowed_by = shadowed_by.or(Some(*target)),
            }
        }
        let replacement = match used_for.as_slice() {
            [] => None,
            [one] => Some(*one),
            // Only `locality.delay` feeds two settings.
            _ => Some(names::BOTH_LOCALITY_DELAYS),
        };
        if let Some(replacement) = replacement {
            self.warnings.push(SiteWarning::DeprecatedName {
                location: p.location,
                name: p.name.clone(),
                replacement,
            });
        } else if let Some(by) = shadowed_by {
            let by = self
                .lookup(by)
                .map_or(by, |winner| static_name(&winner.name).unwrap_or(by));
            self.warnings.push(SiteWarning::Shadowed {
                location: p.location,
                name: p.name.clone(),
                by,
            });
        }
    }
}

/// The static spelling of a known name, so a warning can hold it.
fn static_name(name: &str) -> Option<&'static str> {
    names::KNOWN_FAIR
        .iter()
        .chain(names::MRV1_ALIASES.iter().map(|(alias, _)| alias))
        .find(|n| **n == name)
        .copied()
}

#[cfg(test)]
mod tests;
