//! Hadoop SLS's native inputs: the JSON job stream (concatenated objects
//! with `job.start.ms`, `job.queue.name`, `job.tasks`, ...) and the topology
//! file (`{"rack": ..., "nodes": [{"node": ...}]}` objects).
//!
//! SLS gives each task one preferred host (`container.host`, written
//! `/rack/host`); that host becomes the task's only replica, so locality is
//! measured against it. Task durations are the trace's, scaled by the
//! runtime model like any other (SLS itself replays them unchanged).

use serde_json::Value;
use weft_model::{AppPriority, Duration, Priority, Resource, Time};

use super::{AppDefaults, ImportCtx, ImportError};
use crate::workload::{AppSpec, NodeSpec, TaskGroup};

/// SLS's default node (`yarn.sls.nm.memory.mb`, `yarn.sls.nm.vcores`).
pub const DEFAULT_NODE: Resource = Resource::new(10240, 10);

/// SLS's default task container (`yarn.sls.container.memory.mb`, `.vcores`).
const DEFAULT_CONTAINER: Resource = Resource::new(1024, 1);

/// The JSON values in a stream, each with the line it starts on.
fn values(text: &str, path: &str) -> Result<Vec<(usize, Value)>, ImportError> {
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    loop {
        let start = stream.byte_offset();
        match stream.next() {
            None => break,
            Some(Ok(v)) => {
                let skipped = text[start..].len() - text[start..].trim_start().len();
                let line = text[..start + skipped].matches('\n').count() + 1;
                out.push((line, v));
            }
            Some(Err(e)) => {
                return Err(ImportError {
                    path: path.to_owned(),
                    line: Some(e.line()),
                    why: format!("not valid JSON: {e}"),
                });
            }
        }
    }
    Ok(out)
}

fn err(path: &str, line: usize, why: impl Into<String>) -> ImportError {
    ImportError {
        path: path.to_owned(),
        line: Some(line),
        why: why.into(),
    }
}

/// A field as an integer (SLS accepts numbers and numeric strings).
fn int(v: &Value, key: &str, path: &str, line: usize) -> Result<Option<i64>, ImportError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|x| x as i64))
            .map(Some)
            .ok_or_else(|| err(path, line, format!("{key} is not an integer"))),
        Some(Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| err(path, line, format!("{key} {s:?} is not an integer"))),
        Some(other) => Err(err(
            path,
            line,
            format!("{key} must be a number, not {other}"),
        )),
    }
}

fn field<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// Splits `/rack/host` (or `host`) into rack and host.
fn split_host(h: &str) -> (String, String) {
    let h = h.trim();
    match h.rfind('/') {
        Some(i) if i > 0 => (h[..i].to_owned(), h[i + 1..].to_owned()),
        Some(_) => ("/default-rack".to_owned(), h[1..].to_owned()),
        None => ("/default-rack".to_owned(), h.to_owned()),
    }
}

/// Every `container.host` of a job stream, in order of first appearance.
pub(crate) fn trace_hosts(text: &str, path: &str) -> Result<Vec<(String, String)>, ImportError> {
    let mut hosts: Vec<(String, String)> = Vec::new();
    for (_, job) in values(text, path)? {
        let Some(tasks) = job.get("job.tasks").and_then(Value::as_array) else {
            continue;
        };
        for t in tasks {
            if let Some(h) = field(t, "container.host") {
                let (rack, host) = split_host(h);
                if !host.is_empty() && !hosts.iter().any(|(_, x)| *x == host) {
                    hosts.push((rack, host));
                }
            }
        }
    }
    Ok(hosts)
}

/// Parses an SLS topology file.
pub(crate) fn parse_topology(text: &str, path: &str) -> Result<Vec<NodeSpec>, ImportError> {
    let mut nodes = Vec::new();
    for (line, v) in values(text, path)? {
        let racks: Vec<&Value> = match &v {
            Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for r in racks {
            let rack = field(r, "rack")
                .ok_or_else(|| err(path, line, "a topology entry needs a \"rack\""))?;
            let rack = if rack.starts_with('/') {
                rack.to_owned()
            } else {
                format!("/{rack}")
            };
            let list = r
                .get("nodes")
                .and_then(Value::as_array)
                .ok_or_else(|| err(path, line, format!("rack {rack} needs a \"nodes\" list")))?;
            for n in list {
                let name = field(n, "node").ok_or_else(|| {
                    err(
                        path,
                        line,
                        format!("a node of rack {rack} has no \"node\" name"),
                    )
                })?;
                let memory = int(n, "memory-mb", path, line)?;
                let vcores = int(n, "vcores", path, line)?;
                let capability = Resource::new(
                    memory.map_or(DEFAULT_NODE.memory_mb(), |m| m.max(0) as u64),
                    vcores.map_or(DEFAULT_NODE.vcores(), |v| v.max(0) as u64),
                );
                nodes.push(NodeSpec {
                    name: name.trim().to_owned(),
                    rack: rack.clone(),
                    capability,
                });
            }
        }
    }
    Ok(nodes)
}

/// Imports an SLS job stream.
pub(crate) fn import(
    text: &str,
    path: &str,
    defaults: &AppDefaults,
    ctx: &mut ImportCtx<'_>,
) -> Result<Vec<AppSpec>, ImportError> {
    let mut apps = Vec::new();
    let mut unknown_hosts: Vec<String> = Vec::new();
    for (line, job) in values(text, path)? {
        if job.get("job.start.ms").is_none()
            && (job.get("num.nodes").is_some() || job.get("num.racks").is_some())
        {
            // A topology hint: the scenario's nodes are the topology here.
            continue;
        }
        let start = int(&job, "job.start.ms", path, line)?
            .ok_or_else(|| err(path, line, "a job needs \"job.start.ms\""))?;
        if start < 0 {
            return Err(err(path, line, "job.start.ms must not be negative"));
        }
        let limit_err = |e| ImportError::limit(path, Some(line), e);
        ctx.budget
            .within_horizon(Duration::from_millis(start as u64) + defaults.start)
            .map_err(limit_err)?;
        let count = int(&job, "job.count", path, line)?.unwrap_or(1).max(1);
        // Copies share the tasks built below: charged once per copy.
        let copies = count as u64;
        ctx.budget.apps(copies).map_err(limit_err)?;
        if let Some(am_type) = field(&job, "am.type")
            && am_type != "mapreduce"
            && am_type != "stream"
        {
            ctx.warnings.push(format!(
                "{path}:{line}: am.type {am_type:?} is simulated as a MapReduce AM"
            ));
        }
        let am_memory = int(&job, "am.memory-mb", path, line)?;
        let am_vcores = int(&job, "am.vcores", path, line)?;
        let traced_am = (am_memory.is_some() || am_vcores.is_some()).then(|| {
            Resource::new(
                am_memory.map_or(1024, |m| m.max(0) as u64),
                am_vcores.map_or(1, |v| v.max(0) as u64),
            )
        });
        let tasks = job
            .get("job.tasks")
            .and_then(Value::as_array)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| err(path, line, "a job needs a non-empty \"job.tasks\" list"))?;
        let mut groups: Vec<TaskGroup> = Vec::new();
        for t in tasks {
            let n = int(t, "count", path, line)?.unwrap_or(1).max(1);
            let duration = match (
                int(t, "container.duration.ms", path, line)?,
                int(t, "duration.ms", path, line)?,
                int(t, "container.start.ms", path, line)?,
                int(t, "container.end.ms", path, line)?,
            ) {
                (Some(d), _, _, _) | (None, Some(d), _, _) => d,
                (None, None, Some(s), Some(e)) => e.saturating_sub(s),
                _ => {
                    return Err(err(
                        path,
                        line,
                        "a task needs duration.ms, or container.start.ms and container.end.ms",
                    ));
                }
            };
            if duration <= 0 {
                return Err(err(path, line, "a task's duration must be positive"));
            }
            let kind = field(t, "container.type").unwrap_or("map");
            let stage = u32::from(kind == "reduce");
            let priority = int(t, "container.priority", path, line)?.unwrap_or(20);
            let size = Resource::new(
                int(t, "container.memory-mb", path, line)?
                    .map_or(DEFAULT_CONTAINER.memory_mb(), |m| m.max(0) as u64),
                int(t, "container.vcores", path, line)?
                    .map_or(DEFAULT_CONTAINER.vcores(), |v| v.max(0) as u64),
            );
            let replicas: Vec<u32> = match field(t, "container.host") {
                Some(h) => {
                    let (_, host) = split_host(h);
                    match ctx.host(&host) {
                        Some(idx) => vec![idx],
                        None => {
                            if !unknown_hosts.contains(&host) {
                                unknown_hosts.push(host);
                            }
                            Vec::new()
                        }
                    }
                }
                None => Vec::new(),
            };
            let priority = Priority(i32::try_from(priority).unwrap_or(i32::MAX));
            let idx = match groups
                .iter()
                .position(|g| g.stage == stage && g.priority == priority && g.size == size)
            {
                Some(i) => i,
                None => {
                    groups.push(TaskGroup::new(stage, priority, size));
                    groups.len() - 1
                }
            };
            let d = defaults.scale(Duration::from_millis(duration as u64));
            ctx.budget.within_horizon(d).map_err(limit_err)?;
            let n_tasks = (n as u64).saturating_mul(copies);
            ctx.budget
                .tasks(n_tasks, n_tasks.saturating_mul(replicas.len() as u64))
                .map_err(limit_err)?;
            for _ in 0..n {
                groups[idx].push(d, &replicas);
            }
        }
        for _ in 0..count {
            let i = apps.len();
            let name = match field(&job, "job.id") {
                Some(id) if count == 1 => format!("{}-{id}", defaults.name_prefix),
                _ => format!("{}-{:05}", defaults.name_prefix, i + 1),
            };
            apps.push(AppSpec {
                name,
                arrival: Time::from_millis(start as u64) + defaults.start,
                user: defaults.user(i, Some(field(&job, "job.user").unwrap_or("default"))),
                queue: defaults
                    .queue
                    .clone()
                    .or_else(|| field(&job, "job.queue.name").map(str::to_owned)),
                priority: AppPriority(0),
                am: defaults.am(traced_am),
                groups: groups.clone(),
                lifetime: None,
            });
        }
    }
    if !unknown_hosts.is_empty() {
        ctx.warnings.push(format!(
            "{path}: {} host(s) are not nodes of the cluster ({}{}); their tasks have no locality preference",
            unknown_hosts.len(),
            unknown_hosts.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
            if unknown_hosts.len() > 3 { ", ..." } else { "" }
        ));
    }
    apps.sort_by_key(|a| a.arrival);
    if let Some(limit) = defaults.limit {
        apps.truncate(limit);
    }
    Ok(apps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Budget;
    use crate::rng::SimRng;
    use crate::workload::{DataLayout, ReplicaPlacement};

    const TRACE: &str = r#"
{ "num.nodes": 3, "num.racks": 1 }
{
  "am.type": "mapreduce",
  "job.start.ms": 0,
  "job.queue.name": "sls_queue_1",
  "job.id": "job_1",
  "job.user": "default",
  "job.tasks": [
    { "count": 2, "container.host": "/default-rack/node1", "duration.ms": 50000, "container.type": "map" },
    { "container.host": "/default-rack/node9", "container.start.ms": 100, "container.end.ms": 2100 },
    { "container.type": "reduce", "duration.ms": 3000, "container.priority": 10, "container.memory-mb": 2048 }
  ]
}
{ "job.start.ms": 5000, "job.count": 2, "am.memory-mb": 2048,
  "job.tasks": [ { "duration.ms": 1000 } ] }
"#;

    #[test]
    fn jobs_tasks_hosts_and_topology_hints() {
        let hosts = trace_hosts(TRACE, "t.json").unwrap();
        assert_eq!(
            hosts,
            [
                ("/default-rack".to_owned(), "node1".to_owned()),
                ("/default-rack".to_owned(), "node9".to_owned())
            ]
        );
        let nodes = vec![NodeSpec {
            name: "node1".into(),
            rack: "/default-rack".into(),
            capability: DEFAULT_NODE,
        }];
        let layout = DataLayout::new(&nodes, ReplicaPlacement::Uniform);
        let mut ctx = ImportCtx::new(&nodes, &layout, SimRng::new(1), 3, Budget::default());
        let defaults = AppDefaults {
            name_prefix: "sls".into(),
            duration_scale: 1.0,
            ..AppDefaults::default()
        };
        let apps = import(TRACE, "t.json", &defaults, &mut ctx).unwrap();
        assert_eq!(apps.len(), 3);
        let a = &apps[0];
        assert_eq!(a.name, "sls-job_1");
        assert_eq!(a.queue.as_deref(), Some("sls_queue_1"));
        assert_eq!(
            a.groups.len(),
            2,
            "maps merge into one group, reduces in another"
        );
        assert_eq!(a.groups[0].len(), 3);
        assert_eq!(a.groups[0].replicas(0), &[0]);
        assert!(
            a.groups[0].replicas(2).is_empty(),
            "node9 is not in the cluster"
        );
        assert_eq!(a.groups[0].duration(2), Duration::from_millis(2000));
        assert_eq!(a.groups[1].stage, 1);
        assert_eq!(a.groups[1].size, Resource::new(2048, 1));
        assert_eq!(apps[1].am, Some(Resource::new(2048, 1)));
        assert_eq!(apps[1].name, "sls-00002");
        assert_eq!(ctx.warnings.len(), 1);
    }

    #[test]
    fn errors_carry_the_line() {
        let nodes = vec![];
        let layout = DataLayout::new(&nodes, ReplicaPlacement::Uniform);
        let mut ctx = ImportCtx::new(&nodes, &layout, SimRng::new(1), 3, Budget::default());
        let e = import(
            "{ \"job.start.ms\": 0 }\n\n{ \"job.start.ms\": 1, \"job.tasks\": [ {} ] }",
            "t.json",
            &AppDefaults::default(),
            &mut ctx,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json:1: a job needs a non-empty \"job.tasks\" list"
        );
        let e = import("{ \"job.start.ms\": 0, \"job.tasks\": [ {\"duration.ms\": 5} ] }\n\n{ \"job.start.ms\": 1, \"job.tasks\": [ {} ] }", "t.json", &AppDefaults::default(), &mut ctx)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json:3: a task needs duration.ms, or container.start.ms and container.end.ms"
        );
    }

    #[test]
    fn topology_files() {
        let nodes = parse_topology(
            r#"{ "rack": "rack1", "nodes": [ { "node": "n1" }, { "node": "n2", "memory-mb": 6144, "vcores": 12 } ] }"#,
            "nodes.json",
        )
        .unwrap();
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[0].rack, "/rack1");
        assert_eq!(nodes[0].capability, DEFAULT_NODE);
        assert_eq!(nodes[1].capability, Resource::new(6144, 12));
    }
}
