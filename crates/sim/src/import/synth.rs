//! Hadoop SLS's SYNTH workload description: `num_jobs` jobs drawn from
//! weighted workloads (each with a queue, weighted job classes and a start
//! time distribution), each class giving map and reduce counts, durations
//! (seconds) and sizes as constants, log-normal or normal distributions
//! (mean and standard deviation of the distribution itself) or weighted
//! discrete choices. Both the old flat class format (`mtasks_avg`, ...) and
//! the newer `tasks` list are read.
//!
//! The draws come from the scenario's seeded stream (mixed with the file's
//! `rand_seed`), not Java's generator, so a SYNTH file yields the same kind
//! of workload as in SLS, not the same jobs. Maps get input blocks placed
//! with the scenario's replication (SYNTH has no data layout); reduces none.
//! Reservations and deadlines are ignored (Weft has no reservation system).

use serde_json::Value;
use weft_model::{AppPriority, Duration, Priority, Resource, Time};

use super::{AppDefaults, ImportCtx, ImportError};
use crate::rng::SimRng;
use crate::workload::{AppSpec, TaskGroup};

/// A value to draw.
#[derive(Clone, Debug, PartialEq)]
enum Sample {
    Const(f64),
    LogNormal(f64, f64),
    Normal(f64, f64),
    Discrete(Vec<f64>, Vec<f64>),
}

impl Sample {
    fn draw(&self, rng: &mut SimRng) -> f64 {
        match self {
            Sample::Const(x) => *x,
            Sample::LogNormal(mean, std) => rng.log_normal(*mean, *std),
            Sample::Normal(mean, std) => {
                let std = if *std == 0.0 { mean / 6.0 } else { *std };
                mean + std * rng.normal()
            }
            Sample::Discrete(values, weights) => values[rng.weighted(weights)],
        }
    }

    /// A draw rounded to a whole number, not below zero.
    fn draw_u64(&self, rng: &mut SimRng) -> u64 {
        let x = self.draw(rng).round();
        if x.is_finite() && x > 0.0 {
            x as u64
        } else {
            0
        }
    }
}

struct TaskDef {
    stage: u32,
    priority: i32,
    count: Sample,
    time: Sample,
    memory: Sample,
    vcores: Sample,
}

struct ClassDef {
    weight: f64,
    user: Option<String>,
    tasks: Vec<TaskDef>,
}

struct WorkloadDef {
    weight: f64,
    queue: Option<String>,
    classes: Vec<ClassDef>,
    /// (start second, weight).
    times: Vec<(u64, f64)>,
}

struct Reader<'a> {
    path: &'a str,
}

impl Reader<'_> {
    fn err(&self, why: impl Into<String>) -> ImportError {
        ImportError {
            path: self.path.to_owned(),
            line: None,
            why: why.into(),
        }
    }

    fn num(&self, v: &Value, key: &str, within: &str) -> Result<Option<f64>, ImportError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(Value::String(s)) => s
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| self.err(format!("{within}: {key} {s:?} is not a number"))),
            Some(other) => Err(self.err(format!("{within}: {key} must be a number, not {other}"))),
        }
    }

    fn sample(&self, v: Option<&Value>, within: &str) -> Result<Sample, ImportError> {
        let Some(v) = v else {
            return Ok(Sample::Const(0.0));
        };
        if let Some(x) = v.as_f64() {
            return Ok(Sample::Const(x));
        }
        if !v.is_object() {
            return Err(self.err(format!("{within}: expected a number or {{\"val\": ..}}")));
        }
        let val = self.num(v, "val", within)?;
        let std = self.num(v, "std", within)?;
        if let Some(list) = v.get("discrete").and_then(Value::as_array) {
            let values: Vec<f64> = list
                .iter()
                .map(|x| {
                    x.as_f64()
                        .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
                        .ok_or_else(|| {
                            self.err(format!("{within}: discrete values must be numbers"))
                        })
                })
                .collect::<Result<_, _>>()?;
            let weights: Vec<f64> = match v.get("weights").and_then(Value::as_array) {
                Some(w) => w.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect(),
                None => vec![1.0; values.len()],
            };
            if values.is_empty() || weights.len() != values.len() {
                return Err(self.err(format!(
                    "{within}: discrete needs values and as many weights"
                )));
            }
            return Ok(Sample::Discrete(values, weights));
        }
        match (val, std) {
            (Some(x), None) => Ok(Sample::Const(x)),
            (Some(x), Some(s)) => match v.get("dist").and_then(Value::as_str) {
                None | Some("LOGNORM") => Ok(Sample::LogNormal(x, s)),
                Some("NORM") => Ok(Sample::Normal(x, s)),
                Some(other) => Err(self.err(format!(
                    "{within}: unknown dist {other:?} (LOGNORM or NORM)"
                ))),
            },
            _ => Err(self.err(format!(
                "{within}: a sample needs val (and std) or discrete"
            ))),
        }
    }

    fn old_pair(
        &self,
        c: &Value,
        avg: &str,
        std: &str,
        within: &str,
    ) -> Result<Sample, ImportError> {
        let a = self.num(c, avg, within)?.unwrap_or(0.0);
        let s = self.num(c, std, within)?.unwrap_or(0.0);
        Ok(Sample::LogNormal(a, s))
    }

    fn class(&self, c: &Value, within: &str) -> Result<ClassDef, ImportError> {
        let weight = self.num(c, "class_weight", within)?.unwrap_or(1.0);
        let user = c
            .get("user_name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut tasks = Vec::new();
        match c.get("tasks").and_then(Value::as_array) {
            Some(list) => {
                for (i, t) in list.iter().enumerate() {
                    let tw = format!("{within}.tasks[{i}]");
                    let kind = t.get("type").and_then(Value::as_str).unwrap_or("map");
                    let stage = u32::from(kind == "reduce");
                    let priority = self
                        .num(t, "priority", &tw)?
                        .map_or(if stage == 0 { 20 } else { 10 }, |p| p as i32);
                    tasks.push(TaskDef {
                        stage,
                        priority,
                        count: self.sample(t.get("count"), &format!("{tw}.count"))?,
                        time: self.sample(t.get("time"), &format!("{tw}.time"))?,
                        memory: self.sample(t.get("max_memory"), &format!("{tw}.max_memory"))?,
                        vcores: self.sample(t.get("max_vcores"), &format!("{tw}.max_vcores"))?,
                    });
                }
            }
            None => {
                for (stage, prefix, short, priority) in
                    [(0, "map", "m", 20), (1, "reduce", "r", 10)]
                {
                    tasks.push(TaskDef {
                        stage,
                        priority,
                        count: self.old_pair(
                            c,
                            &format!("{short}tasks_avg"),
                            &format!("{short}tasks_stddev"),
                            within,
                        )?,
                        time: self.old_pair(
                            c,
                            &format!("{short}time_avg"),
                            &format!("{short}time_stddev"),
                            within,
                        )?,
                        memory: self.old_pair(
                            c,
                            &format!("{prefix}_max_memory_avg"),
                            &format!("{prefix}_max_memory_stddev"),
                            within,
                        )?,
                        vcores: self.old_pair(
                            c,
                            &format!("{prefix}_max_vcores_avg"),
                            &format!("{prefix}_max_vcores_stddev"),
                            within,
                        )?,
                    });
                }
            }
        }
        Ok(ClassDef {
            weight,
            user,
            tasks,
        })
    }

    fn workload(&self, w: &Value, within: &str) -> Result<WorkloadDef, ImportError> {
        let classes = w
            .get("job_classes")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty())
            .ok_or_else(|| self.err(format!("{within}: needs a non-empty job_classes list")))?
            .iter()
            .enumerate()
            .map(|(i, c)| self.class(c, &format!("{within}.job_classes[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut times = Vec::new();
        if let Some(list) = w.get("time_distribution").and_then(Value::as_array) {
            for (i, t) in list.iter().enumerate() {
                let tw = format!("{within}.time_distribution[{i}]");
                let time = self.num(t, "time", &tw)?.unwrap_or(0.0).max(0.0) as u64;
                let weight = match self.num(t, "weight", &tw)? {
                    Some(x) => x,
                    None => self.num(t, "jobs", &tw)?.unwrap_or(0.0),
                };
                times.push((time, weight));
            }
        }
        if times.is_empty() || times.iter().all(|(_, w)| *w <= 0.0) {
            times = vec![(0, 1.0)];
        }
        Ok(WorkloadDef {
            weight: self.num(w, "workload_weight", within)?.unwrap_or(1.0),
            queue: w
                .get("queue_name")
                .and_then(Value::as_str)
                .map(str::to_owned),
            classes,
            times,
        })
    }
}

/// Imports (generates) a SYNTH workload.
pub(crate) fn import(
    text: &str,
    path: &str,
    defaults: &AppDefaults,
    ctx: &mut ImportCtx<'_>,
) -> Result<Vec<AppSpec>, ImportError> {
    let r = Reader { path };
    let root: Value = serde_json::from_str(text).map_err(|e| ImportError {
        path: path.to_owned(),
        line: Some(e.line()),
        why: format!("not valid JSON: {e}"),
    })?;
    let n_jobs = r
        .num(&root, "num_jobs", "top level")?
        .unwrap_or(0.0)
        .max(0.0) as usize;
    let seed = r.num(&root, "rand_seed", "top level")?.unwrap_or(0.0) as u64;
    let workloads = root
        .get("workloads")
        .and_then(Value::as_array)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| r.err("needs a non-empty workloads list"))?
        .iter()
        .enumerate()
        .map(|(i, w)| r.workload(w, &format!("workloads[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rng = ctx.rng.fork("synth", seed);
    let weights: Vec<f64> = workloads.iter().map(|w| w.weight).collect();
    if weights.iter().all(|w| *w <= 0.0) {
        return Err(r.err("every workload_weight is zero"));
    }
    // Charged before the job list is even reserved: `num_jobs` is any number.
    let limit_err = |e| ImportError::limit(path, None, e);
    ctx.budget.apps(n_jobs as u64).map_err(limit_err)?;
    let mut jobs = Vec::with_capacity(n_jobs);
    for i in 0..n_jobs {
        let w = &workloads[rng.weighted(&weights)];
        let tw: Vec<f64> = w.times.iter().map(|t| t.1).collect();
        let ti = rng.weighted(&tw);
        let start = w.times[ti].0;
        let end = w.times.get(ti + 1).map_or(start, |t| t.0);
        let secs = if end > start {
            start + rng.below(end - start)
        } else {
            start
        };
        ctx.budget
            .within_horizon(Duration::from_millis(secs.saturating_mul(1000)) + defaults.start)
            .map_err(limit_err)?;
        let cw: Vec<f64> = w.classes.iter().map(|c| c.weight).collect();
        if cw.iter().all(|x| *x <= 0.0) {
            return Err(r.err("every class_weight of a workload is zero"));
        }
        let class = &w.classes[rng.weighted(&cw)];
        let mut groups: Vec<TaskGroup> = Vec::new();
        for t in &class.tasks {
            let n = t.count.draw_u64(&mut rng);
            // SLS's floor for synthetic containers.
            let size = Resource::new(
                t.memory.draw_u64(&mut rng).max(1024),
                t.vcores.draw_u64(&mut rng).max(1),
            );
            let mut g = TaskGroup::new(t.stage, Priority(t.priority), size);
            let replicas = if t.stage == 0 {
                ctx.block_replicas()
            } else {
                0
            };
            ctx.budget
                .tasks(n, n.saturating_mul(replicas))
                .map_err(limit_err)?;
            for _ in 0..n {
                let secs = t.time.draw(&mut rng).max(0.001);
                let d = defaults.scale(Duration::from_millis((secs * 1000.0).round() as u64));
                ctx.budget.within_horizon(d).map_err(limit_err)?;
                let replicas = if t.stage == 0 {
                    ctx.layout.place(&mut rng, ctx.replicas)
                } else {
                    Vec::new()
                };
                g.push(d, &replicas);
            }
            if !g.is_empty() {
                groups.push(g);
            }
        }
        if groups.is_empty() {
            // A job must do something: SLS rejects task-less jobs.
            continue;
        }
        jobs.push((secs, i, w.queue.clone(), class.user.clone(), groups));
    }
    jobs.sort_by_key(|j| (j.0, j.1));
    if let Some(limit) = defaults.limit {
        jobs.truncate(limit);
    }
    Ok(jobs
        .into_iter()
        .enumerate()
        .map(|(k, (secs, _, queue, user, groups))| AppSpec {
            name: format!("{}-{:05}", defaults.name_prefix, k + 1),
            arrival: Time::from_millis(secs * 1000) + defaults.start,
            user: defaults.user(k, user.as_deref()),
            queue: defaults.queue.clone().or(queue),
            priority: AppPriority(0),
            am: defaults.am(None),
            groups,
            lifetime: None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Budget;
    use crate::workload::{DataLayout, NodeSpec, ReplicaPlacement};

    const SYN: &str = r#"{
      "description": "tiny jobs workload", "num_nodes": 20, "nodes_per_rack": 4,
      "num_jobs": 40, "rand_seed": 2,
      "workloads": [
        { "workload_name": "tiny-test", "workload_weight": 0.5, "queue_name": "sls_queue_1",
          "job_classes": [
            { "class_name": "class_1", "user_name": "foobar", "class_weight": 1.0,
              "mtasks_avg": 5, "mtasks_stddev": 1, "rtasks_avg": 5, "rtasks_stddev": 1,
              "dur_avg": 60, "dur_stddev": 5, "mtime_avg": 10, "mtime_stddev": 2,
              "rtime_avg": 20, "rtime_stddev": 4,
              "map_max_memory_avg": 1024, "map_max_memory_stddev": 0.001,
              "reduce_max_memory_avg": 2048, "reduce_max_memory_stddev": 0.001,
              "map_max_vcores_avg": 1, "map_max_vcores_stddev": 0.001,
              "reduce_max_vcores_avg": 2, "reduce_max_vcores_stddev": 0.001,
              "chance_of_reservation": 0.5, "deadline_factor_avg": 10.0, "deadline_factor_stddev": 0.001 } ],
          "time_distribution": [ { "time": 1, "weight": 100 }, { "time": 60, "weight": 0 } ] },
        { "workload_name": "generic", "workload_weight": 0.5, "queue_name": "sls_queue_2",
          "job_classes": [
            { "class_name": "c2", "class_weight": 1.0,
              "tasks": [ { "type": "map", "priority": 20, "count": { "val": 3 }, "time": { "val": 5, "std": 1 },
                           "max_memory": { "val": 1024 }, "max_vcores": { "val": 1 } } ] } ],
          "time_distribution": [ { "time": 10, "weight": 1 }, { "time": 20, "weight": 0 } ] }
      ]
    }"#;

    #[test]
    fn both_class_formats_generate_jobs() {
        let nodes: Vec<NodeSpec> = (0..20)
            .map(|i| NodeSpec {
                name: format!("n{i}"),
                rack: format!("/r{}", i / 4),
                capability: Resource::new(10240, 10),
            })
            .collect();
        let layout = DataLayout::new(&nodes, ReplicaPlacement::Uniform);
        let mut ctx = ImportCtx::new(&nodes, &layout, SimRng::new(9), 3, Budget::default());
        let defaults = AppDefaults {
            name_prefix: "syn".into(),
            duration_scale: 1.0,
            ..AppDefaults::default()
        };
        let apps = import(SYN, "syn.json", &defaults, &mut ctx).unwrap();
        assert_eq!(apps.len(), 40);
        assert!(apps.windows(2).all(|w| w[0].arrival <= w[1].arrival));
        let old: Vec<&AppSpec> = apps
            .iter()
            .filter(|a| a.queue.as_deref() == Some("sls_queue_1"))
            .collect();
        let new: Vec<&AppSpec> = apps
            .iter()
            .filter(|a| a.queue.as_deref() == Some("sls_queue_2"))
            .collect();
        assert!(!old.is_empty() && !new.is_empty());
        for a in &old {
            assert!(a.arrival.as_millis() >= 1000 && a.arrival.as_millis() < 60_000);
            assert_eq!(a.user, "foobar");
            let reduces = a.groups.iter().find(|g| g.stage == 1).unwrap();
            assert_eq!(reduces.size, Resource::new(2048, 2));
            assert!(reduces.replicas(0).is_empty());
        }
        for a in &new {
            assert!(a.arrival.as_millis() >= 10_000 && a.arrival.as_millis() < 20_000);
            assert_eq!(a.n_first_stage_tasks(), 3);
            assert_eq!(a.groups[0].replicas(0).len(), 3);
        }
        let mean_maps: f64 = old
            .iter()
            .map(|a| f64::from(a.n_first_stage_tasks()))
            .sum::<f64>()
            / old.len() as f64;
        assert!(
            (mean_maps - 5.0).abs() < 1.0,
            "maps average about 5 ({mean_maps})"
        );
    }

    #[test]
    fn bad_samples_are_named() {
        let nodes = vec![];
        let layout = DataLayout::new(&nodes, ReplicaPlacement::Uniform);
        let mut ctx = ImportCtx::new(&nodes, &layout, SimRng::new(9), 3, Budget::default());
        let text = r#"{"num_jobs": 1, "workloads": [ { "job_classes": [ { "tasks": [ { "count": { "std": 1 } } ] } ] } ] }"#;
        let e = import(text, "s.json", &AppDefaults::default(), &mut ctx).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.json: workloads[0].job_classes[0].tasks[0].count: a sample needs val (and std) or discrete"
        );
    }
}
