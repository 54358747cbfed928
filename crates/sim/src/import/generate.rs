//! The simulator's own job-stream generator (`format = "generate"`): jobs of a
//! fixed number of maps or a size mix, Poisson or periodic arrivals, maps
//! reading one placed block each, optional reduces after the maps.
//!
//! This is what the delay-scheduling experiments use: the paper's analysis
//! and benchmarks are stated in exactly these terms.

use weft_model::{AppPriority, Duration, Priority, Resource, Time};

use super::{AppDefaults, ImportCtx};
use crate::limits::LimitError;
use crate::workload::{AppSpec, TaskGroup};

/// Why jobs could not be generated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GenerateError {
    /// An option is missing or contradicts another.
    #[error("{0}")]
    Invalid(String),
    /// The jobs would break a scenario limit.
    #[error("{key}: {limit}")]
    Limit {
        /// The option responsible (`jobs`, `mix`, `maps`, `arrival`).
        key: &'static str,
        /// The limit and why it exists.
        limit: LimitError,
    },
}

impl From<&str> for GenerateError {
    fn from(why: &str) -> GenerateError {
        GenerateError::Invalid(why.to_owned())
    }
}

fn limit(key: &'static str) -> impl FnOnce(LimitError) -> GenerateError {
    move |limit| GenerateError::Limit { key, limit }
}

/// When generated jobs arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Exponential gaps with this mean (a Poisson process).
    Poisson(Duration),
    /// A fixed gap.
    Every(Duration),
    /// All at this time.
    At(Duration),
}

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
pub struct GenerateOptions {
    /// Number of jobs (with `maps`).
    pub jobs: Option<u32>,
    /// Arrival process.
    pub arrival: Arrival,
    /// Maps per job.
    pub maps: Option<u32>,
    /// Or a mix: (maps per job, number of such jobs), shuffled together.
    pub mix: Option<Vec<(u32, u32)>>,
    /// Node-local map duration.
    pub map_duration: Duration,
    /// Durations are drawn uniformly from ± this fraction around their value.
    pub duration_spread: f64,
    /// Map container.
    pub map_size: Resource,
    /// Reduces per job (stage 1, no input block).
    pub reduces: u32,
    /// Reduce duration.
    pub reduce_duration: Duration,
    /// Reduce container.
    pub reduce_size: Resource,
}

/// Generates the jobs; an error says which option is missing or
/// contradictory, or which one breaks a scenario limit.
pub(crate) fn generate(
    opts: &GenerateOptions,
    defaults: &AppDefaults,
    ctx: &mut ImportCtx<'_>,
) -> Result<Vec<AppSpec>, GenerateError> {
    let kept = |jobs: u64| defaults.limit.map_or(jobs, |l| jobs.min(l as u64));
    let (mut sizes, jobs_key): (Vec<u32>, &'static str) = match (&opts.mix, opts.maps) {
        (Some(_), Some(_)) => return Err("give either maps (with jobs) or mix, not both".into()),
        (Some(mix), None) => {
            if opts.jobs.is_some() {
                return Err("a mix sets the number of jobs itself; drop jobs".into());
            }
            if mix.iter().any(|(maps, _)| *maps == 0) {
                return Err("a mix entry needs at least one map".into());
            }
            // The whole mix is drawn from before `limit` cuts it, so the
            // list of sizes is bounded by the app budget first.
            let jobs = mix.iter().map(|(_, j)| u64::from(*j)).sum::<u64>();
            ctx.budget.apps(jobs).map_err(limit("mix"))?;
            let mut v = Vec::new();
            for (maps, jobs) in mix {
                v.extend(std::iter::repeat_n(*maps, *jobs as usize));
            }
            ctx.rng.shuffle(&mut v);
            (v, "mix")
        }
        (None, Some(maps)) => {
            if maps == 0 {
                return Err("maps must be at least 1".into());
            }
            let jobs = kept(u64::from(opts.jobs.unwrap_or(1)));
            ctx.budget.apps(jobs).map_err(limit("jobs"))?;
            (vec![maps; jobs as usize], "maps")
        }
        (None, None) => return Err("give maps (and jobs) or a mix".into()),
    };
    if let Some(limit) = defaults.limit {
        sizes.truncate(limit);
    }
    let n_jobs = sizes.len() as u64;
    let maps: u64 = sizes.iter().map(|m| u64::from(*m)).sum();
    let reduces = n_jobs.saturating_mul(u64::from(opts.reduces));
    ctx.budget
        .tasks(
            maps.saturating_add(reduces),
            maps.saturating_mul(ctx.block_replicas()),
        )
        .map_err(limit(jobs_key))?;
    // Periodic and fixed arrivals are known before any job is built.
    let last_offset = match opts.arrival {
        Arrival::Poisson(_) => Duration::ZERO,
        Arrival::Every(gap) => gap.saturating_mul(n_jobs.saturating_sub(1)),
        Arrival::At(at) => at,
    };
    ctx.budget
        .within_horizon(defaults.start + last_offset)
        .map_err(limit("arrival"))?;
    let mut apps = Vec::with_capacity(sizes.len());
    let mut t = Duration::ZERO;
    for (i, maps) in sizes.into_iter().enumerate() {
        let offset = match opts.arrival {
            Arrival::Poisson(mean) => {
                let gap = ctx.rng.exponential(mean.as_millis() as f64);
                t = t + Duration::from_millis(gap.round() as u64);
                ctx.budget
                    .within_horizon(defaults.start + t)
                    .map_err(limit("arrival"))?;
                t
            }
            Arrival::Every(gap) => gap.saturating_mul(i as u64),
            Arrival::At(at) => at,
        };
        let mut map_group = TaskGroup::new(0, Priority(20), opts.map_size);
        for _ in 0..maps {
            let replicas = ctx.place_block();
            let d = spread(ctx, opts.map_duration, opts.duration_spread);
            map_group.push(d, &replicas);
        }
        let mut groups = vec![map_group];
        if opts.reduces > 0 {
            let mut reduce_group = TaskGroup::new(1, Priority(10), opts.reduce_size);
            for _ in 0..opts.reduces {
                let d = spread(ctx, opts.reduce_duration, opts.duration_spread);
                reduce_group.push(d, &[]);
            }
            groups.push(reduce_group);
        }
        apps.push(AppSpec {
            name: format!("{}-{:05}", defaults.name_prefix, i + 1),
            arrival: Time::ZERO + defaults.start + offset,
            user: defaults.user(i, None),
            queue: defaults.queue.clone(),
            priority: AppPriority(0),
            am: defaults.am(None),
            groups,
            lifetime: None,
        });
    }
    Ok(apps)
}

/// A duration drawn uniformly within ± `spread` of `d`.
fn spread(ctx: &mut ImportCtx<'_>, d: Duration, spread: f64) -> Duration {
    if spread <= 0.0 {
        return d;
    }
    let factor = 1.0 + spread * (2.0 * ctx.rng.uniform() - 1.0);
    Duration::from_millis((d.as_millis() as f64 * factor).round().max(1.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Budget;
    use crate::rng::SimRng;
    use crate::workload::{DataLayout, NodeSpec, ReplicaPlacement};

    #[test]
    fn a_mix_is_shuffled_and_counted() {
        let nodes: Vec<NodeSpec> = (0..10)
            .map(|i| NodeSpec {
                name: format!("n{i}"),
                rack: "/r".into(),
                capability: Resource::new(4096, 4),
            })
            .collect();
        let layout = DataLayout::new(&nodes, ReplicaPlacement::Uniform);
        let mut ctx = ImportCtx::new(&nodes, &layout, SimRng::new(1), 3, Budget::default());
        let opts = GenerateOptions {
            jobs: None,
            arrival: Arrival::Poisson(Duration::from_secs(14)),
            maps: None,
            mix: Some(vec![(1, 5), (10, 2)]),
            map_duration: Duration::from_secs(10),
            duration_spread: 0.5,
            map_size: Resource::new(1024, 1),
            reduces: 1,
            reduce_duration: Duration::from_secs(5),
            reduce_size: Resource::new(2048, 1),
        };
        let defaults = AppDefaults {
            name_prefix: "job".into(),
            users: vec!["a".into(), "b".into()],
            duration_scale: 1.0,
            ..AppDefaults::default()
        };
        let apps = generate(&opts, &defaults, &mut ctx).unwrap();
        assert_eq!(apps.len(), 7);
        assert_eq!(
            apps.iter()
                .filter(|a| a.n_first_stage_tasks() == 10)
                .count(),
            2
        );
        assert!(apps.windows(2).all(|w| w[0].arrival <= w[1].arrival));
        assert_eq!(apps[1].user, "b");
        assert_eq!(apps[0].groups[1].stage, 1);
        assert_eq!(apps[0].groups[0].replicas(0).len(), 3);
        let durations: Vec<u64> = apps
            .iter()
            .flat_map(|a| (0..a.groups[0].len()).map(|t| a.groups[0].duration(t).as_millis()))
            .collect();
        assert!(durations.iter().all(|d| (5000..=15_000).contains(d)));
        assert!(durations.iter().any(|d| *d != 10_000));
        let bad = GenerateOptions {
            maps: Some(3),
            ..opts
        };
        assert!(generate(&bad, &defaults, &mut ctx).is_err());
    }
}
