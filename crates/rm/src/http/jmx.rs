//! `GET /jmx`: Hadoop's JMX JSON servlet for the RM's `QueueMetrics` beans
//! (one per queue, with the Fair Scheduler's `FSQueueMetrics` attributes)
//! and its `ClusterMetrics` bean, so dashboards and alerts written against
//! a Hadoop RM keep working; with the servlet's `qry` (an object-name
//! pattern) and `get` (`Bean::Attribute`) parameters and its answers to
//! malformed ones.
//!
//! Every Weft daemon serves it alike, so this module holds the part they
//! share (a bean's shape, `ObjectName` and `Bean`; `answer`, the servlet's
//! parameters, patterns and answers; and `instrumentation_access`, who may
//! read) beside the RM's handler; the node agent's `/jmx` (`weft_nm::http`)
//! answers its `NodeManagerMetrics` bean through `answer` too.
//!
//! The RM's figures come from the published view and the queue totals the
//! actor keeps (`View::queue_counts`); which of Hadoop's attributes are
//! there and which are not is in `docs/api.md`. There is no MBean server:
//! the beans are built per request, and the object-name patterns are
//! matched here.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};
use weft_model::Resource;
use weft_queue_tree::QueueKind;

use crate::access::Identity;
use crate::http::ApiState;
use crate::http::codec::{Caller, Params};
use crate::http::conf;
use crate::http::error::ApiError;
use crate::metrics::queue_apps;
use crate::view::View;

/// Hadoop's content type for the servlet's answers (its spelling, `utf8`).
const CONTENT_TYPE: &str = "application/json; charset=utf8";

/// Hadoop's names for running apps by age, one per `RUNNING_AGE_MINUTES`
/// bucket (the minutes since their first container at which each starts).
const RUNNING_BUCKETS: [&str; 4] = ["running_0", "running_60", "running_300", "running_1440"];

/// The query that names every bean, the servlet's default.
const ALL: &str = "*:*";

pub(super) async fn jmx(
    State(s): State<ApiState>,
    caller: Caller,
    Params(pairs): Params<Vec<(String, String)>>,
) -> Response {
    if let Err(refused) = conf::instrumentation_access(&s, &caller, "read /jmx") {
        return refused.into_response();
    }
    let view = s.rm().view();
    answer(&pairs, || beans(&view))
}

/// Hadoop's `isInstrumentationAccessAllowed`, for a daemon's `/jmx` (and
/// the RM's `/conf`): with `hadoop.security.instrumentation.requires.admin`
/// on (`requires_admin`), only an administrator (`is_admin`) naming
/// themselves (`who`) may read what `what` says, since the figures can tell
/// an outsider about every queue, user and setting.
pub fn instrumentation_access(
    requires_admin: bool,
    who: Option<&Identity>,
    is_admin: impl FnOnce(&Identity) -> bool,
    what: &str,
) -> Result<(), ApiError> {
    if !requires_admin {
        return Ok(());
    }
    let Some(who) = who else {
        return Err(ApiError::Unauthorized(format!(
            "Unable to obtain user name, user not authenticated: add ?user.name=<user> to {what} (hadoop.security.instrumentation.requires.admin is true)"
        )));
    };
    if !is_admin(who) {
        return Err(ApiError::Forbidden(format!(
            "user {} is not a cluster administrator (yarn.admin.acl) and may not {what} (hadoop.security.instrumentation.requires.admin is true)",
            who.user
        )));
    }
    Ok(())
}

/// The servlet's answer to the query `pairs` over a daemon's beans (built
/// only when asked for): `get=Bean::Attribute` wins over `qry`, a pattern
/// that defaults to every bean.
pub fn answer(pairs: &[(String, String)], beans: impl FnOnce() -> Vec<Bean>) -> Response {
    // A servlet's getParameter is the first value given; other parameters
    // (Hadoop's `callback`, anyone's cache busters) are ignored.
    let param = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    match param("get") {
        Some(get) => attribute_answer(beans, get),
        None => {
            let qry = param("qry").unwrap_or(ALL);
            match Pattern::parse(qry) {
                Ok(pattern) => {
                    let beans: Vec<Bean> = beans()
                        .into_iter()
                        .filter(|b| pattern.matches(&b.name))
                        .collect();
                    json_answer(StatusCode::OK, &json!({ "beans": beans }))
                }
                Err(why) => malformed(qry, &why),
            }
        }
    }
}

/// The answer to `?get=Bean::Attribute`: each matching bean with only that
/// attribute; the first bean without it ends the list with an error and a
/// 404, as Hadoop's servlet answers.
fn attribute_answer(beans: impl FnOnce() -> Vec<Bean>, get: &str) -> Response {
    // Java's String.split, which Hadoop uses, drops trailing empty parts:
    // `Bean::` is one part, so not the expected format.
    let mut parts: Vec<&str> = get.split("::").collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    let [bean, attribute] = parts[..] else {
        return json_answer(
            StatusCode::BAD_REQUEST,
            &json!({"result": "ERROR", "message": "query format is not as expected."}),
        );
    };
    let pattern = match Pattern::parse(bean) {
        Ok(p) => p,
        Err(why) => return malformed(bean, &why),
    };
    let mut found = Vec::new();
    for b in beans().into_iter().filter(|b| pattern.matches(&b.name)) {
        let value = match attribute {
            "modelerType" => Some(Value::from(b.modeler_type.clone())),
            _ => b
                .attributes
                .iter()
                .find(|(name, _)| *name == attribute)
                .map(|(_, v)| v.clone()),
        };
        let mut one = serde_json::Map::new();
        one.insert("name".to_owned(), Value::from(b.name.to_string()));
        one.insert("modelerType".to_owned(), Value::from(b.modeler_type));
        let Some(value) = value else {
            one.insert("result".to_owned(), "ERROR".into());
            one.insert(
                "message".to_owned(),
                format!("No attribute with name {attribute} was found.").into(),
            );
            found.push(Value::Object(one));
            return json_answer(StatusCode::NOT_FOUND, &json!({ "beans": found }));
        };
        one.insert(attribute.to_owned(), value);
        found.push(Value::Object(one));
    }
    json_answer(StatusCode::OK, &json!({ "beans": found }))
}

/// A 400 for an object name that is not one. Hadoop's servlet answers an
/// empty object; the error fields its `get` answers use say why here.
fn malformed(text: &str, why: &str) -> Response {
    json_answer(
        StatusCode::BAD_REQUEST,
        &json!({
            "result": "ERROR",
            "message": format!("{text:?} is not a JMX object name pattern: {why}"),
        }),
    )
}

/// Hadoop's servlet lets any web page read its beans (dashboards served
/// from elsewhere do), and so does this: the figures are the same any GET
/// of the cluster's REST API gives.
fn json_answer(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, CONTENT_TYPE),
            (header::ACCESS_CONTROL_ALLOW_METHODS, "GET"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// A bean's object name: a domain and its key properties in the order they
/// are written (`Hadoop:service=ResourceManager,name=QueueMetrics,q0=root`).
#[derive(Clone, Debug)]
pub struct ObjectName {
    /// The domain (`Hadoop`).
    pub domain: &'static str,
    /// The key properties, in order (`service`, `name`, ...).
    pub keys: Vec<(String, String)>,
}

impl std::fmt::Display for ObjectName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:", self.domain)?;
        for (i, (k, v)) in self.keys.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// One bean: its name, Hadoop's `modelerType` and its attributes in the
/// order Hadoop's metrics system lists them (tags first).
#[derive(Debug)]
pub struct Bean {
    /// Its object name.
    pub name: ObjectName,
    /// Hadoop's `modelerType` (the metrics source's name).
    pub modeler_type: String,
    /// Its attributes, in order (Hadoop's names: `tag.Context`,
    /// `AppsSubmitted`, ...).
    pub attributes: Vec<(&'static str, Value)>,
}

impl serde::Serialize for Bean {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.attributes.len() + 2))?;
        map.serialize_entry("name", &self.name.to_string())?;
        map.serialize_entry("modelerType", &self.modeler_type)?;
        for (k, v) in &self.attributes {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Every bean: each queue's, parents first in path order, then the cluster's.
fn beans(view: &View) -> Vec<Bean> {
    let apps = queue_apps(view);
    let mut res: Vec<Bean> = view
        .queues
        .iter()
        .map(|q| {
            let t = &q.tree;
            let mut keys = vec![
                ("service".to_owned(), "ResourceManager".to_owned()),
                ("name".to_owned(), "QueueMetrics".to_owned()),
            ];
            let mut modeler_type = "QueueMetrics".to_owned();
            for (i, c) in t.path.components().enumerate() {
                keys.push((format!("q{i}"), c.to_owned()));
                modeler_type.push_str(&format!(",q{i}={c}"));
            }
            let counts = view.queue_counts.get(&t.path).copied().unwrap_or_default();
            let a = apps.get(&t.path).copied().unwrap_or_default();
            // Hadoop counts active users in a leaf's own metrics only (its
            // ActiveUsersManager); a parent's stay 0.
            let active_users = if t.kind == QueueKind::Leaf {
                a.active_users
            } else {
                0
            };
            // Hadoop sets a queue's available resources only on root (the
            // cluster less what is allocated); every other queue shows 0.
            let available = if t.path.is_root() {
                view.cluster.total.saturating_sub(view.cluster.allocated)
            } else {
                Resource::ZERO
            };
            let [node_local, rack_local, off_switch] = counts.containers_allocated;
            let mut attributes = vec![
                ("tag.Queue", Value::from(t.path.to_string())),
                ("tag.Context", Value::from("yarn")),
                ("AppsSubmitted", counts.apps_submitted.into()),
                ("AppsRunning", a.running.into()),
                ("AppsPending", a.pending.into()),
                ("AppsCompleted", counts.apps_completed.into()),
                ("AppsKilled", counts.apps_killed.into()),
                ("AppsFailed", counts.apps_failed.into()),
                ("AggregateNodeLocalContainersAllocated", node_local.into()),
                ("AggregateRackLocalContainersAllocated", rack_local.into()),
                ("AggregateOffSwitchContainersAllocated", off_switch.into()),
                (
                    "AggregateContainersPreempted",
                    counts.containers_preempted.into(),
                ),
                ("AllocatedMB", mb(t.usage).into()),
                ("AllocatedVCores", vcores(t.usage).into()),
                ("AllocatedContainers", q.n_containers.into()),
                (
                    "AggregateContainersAllocated",
                    (node_local + rack_local + off_switch).into(),
                ),
                (
                    "AggregateContainersReleased",
                    counts.containers_released.into(),
                ),
                ("AvailableMB", mb(available).into()),
                ("AvailableVCores", vcores(available).into()),
                ("PendingMB", mb(q.pending).into()),
                ("PendingVCores", vcores(q.pending).into()),
                ("PendingContainers", q.pending_containers.into()),
                ("ReservedMB", mb(q.reserved).into()),
                ("ReservedVCores", vcores(q.reserved).into()),
                ("ReservedContainers", q.n_reserved.into()),
                ("FairShareMB", mb(t.fair_share).into()),
                ("FairShareVCores", vcores(t.fair_share).into()),
                ("SteadyFairShareMB", mb(t.steady_fair_share).into()),
                ("SteadyFairShareVCores", vcores(t.steady_fair_share).into()),
                ("MinShareMB", mb(t.min_share).into()),
                ("MinShareVCores", vcores(t.min_share).into()),
                ("MaxShareMB", mb(t.max_share).into()),
                ("MaxShareVCores", vcores(t.max_share).into()),
                // Hadoop's default for no limit is Integer.MAX_VALUE.
                (
                    "MaxApps",
                    t.max_running_apps
                        .map_or(i64::from(i32::MAX), i64::from)
                        .into(),
                ),
                // Hadoop sets the AM limit only where there is one (a leaf
                // with a maxAMShare); elsewhere it stays 0.
                ("MaxAMShareMB", t.am_limit.map_or(0, mb).into()),
                ("MaxAMShareVCores", t.am_limit.map_or(0, vcores).into()),
                ("AMResourceUsageMB", mb(t.am_usage).into()),
                ("AMResourceUsageVCores", vcores(t.am_usage).into()),
                (
                    "SchedulingPolicy",
                    Value::from(t.policy.hadoop_display_name()),
                ),
                ("ActiveUsers", active_users.into()),
                ("ActiveApplications", a.active.into()),
            ];
            for (name, n) in RUNNING_BUCKETS.into_iter().zip(a.running_by_age) {
                attributes.push((name, n.into()));
            }
            Bean {
                name: ObjectName {
                    domain: "Hadoop",
                    keys,
                },
                modeler_type,
                attributes,
            }
        })
        .collect();
    let c = &view.cluster;
    let used = view.cluster_utilization();
    res.push(Bean {
        name: ObjectName {
            domain: "Hadoop",
            keys: vec![
                ("service".to_owned(), "ResourceManager".to_owned()),
                ("name".to_owned(), "ClusterMetrics".to_owned()),
            ],
        },
        modeler_type: "ClusterMetrics".to_owned(),
        attributes: vec![
            ("tag.ClusterMetrics", Value::from("ResourceManager")),
            ("tag.Context", Value::from("yarn")),
            ("NumActiveNMs", c.nodes_running.into()),
            ("NumDecommissioningNMs", c.nodes_decommissioning.into()),
            ("NumDecommissionedNMs", c.nodes_decommissioned.into()),
            ("NumLostNMs", c.nodes_lost.into()),
            ("NumUnhealthyNMs", c.nodes_unhealthy.into()),
            // A node that restarts registers again as running: Weft has no
            // rebooted state, so no node is ever in it.
            ("NumRebootedNMs", 0.into()),
            ("NumShutdownNMs", c.nodes_shutdown.into()),
            ("CapabilityMB", mb(c.total).into()),
            ("CapabilityVirtualCores", vcores(c.total).into()),
            // What the nodes report they use, scaled to what each offers;
            // whole numbers, as Hadoop's long gauges hold them.
            ("UtilizedMB", (used.utilized_mb as i64).into()),
            ("UtilizedVirtualCores", (used.utilized_vcores as i64).into()),
        ],
    });
    res
}

/// Memory in MB as Hadoop's long gauges hold it: unbounded is Long.MAX_VALUE.
fn mb(r: Resource) -> i64 {
    i64::try_from(r.memory_mb()).unwrap_or(i64::MAX)
}

/// Virtual cores as Hadoop holds them: unbounded is Integer.MAX_VALUE.
fn vcores(r: Resource) -> i64 {
    i64::try_from(r.vcores())
        .unwrap_or(i64::MAX)
        .min(i64::from(i32::MAX))
}

/// A JMX object name pattern (`javax.management.ObjectName`'s syntax):
/// a domain with `*` and `?` wildcards, a colon, and key properties, each
/// `key=value` with wildcards allowed in the value, where a `*` among them
/// lets a name have other properties too. `*:*` names everything.
#[derive(Debug, PartialEq, Eq)]
struct Pattern {
    domain: String,
    keys: Vec<(String, String)>,
    /// A `*` among the properties: names with more properties match too.
    open: bool,
}

impl Pattern {
    /// `text` read as JMX reads an object name, or why it is not one.
    fn parse(text: &str) -> Result<Pattern, String> {
        let Some((domain, properties)) = text.split_once(':') else {
            return Err("there is no ':' between the domain and the key properties".to_owned());
        };
        if domain.contains('\n') {
            return Err("the domain contains a newline".to_owned());
        }
        let mut res = Pattern {
            domain: domain.to_owned(),
            keys: Vec::new(),
            open: false,
        };
        if properties.is_empty() {
            return Err("the key properties are empty".to_owned());
        }
        for property in properties.split(',') {
            if property == "*" {
                if res.open {
                    return Err("'*' appears twice among the key properties".to_owned());
                }
                res.open = true;
                continue;
            }
            let Some((key, value)) = property.split_once('=') else {
                return Err(format!("{property:?} is not key=value"));
            };
            if key.is_empty() {
                return Err(format!("{property:?} has an empty key"));
            }
            if let Some(c) = key.chars().find(|c| matches!(c, ':' | '*' | '?' | '\n')) {
                return Err(format!("the key {key:?} contains {c:?}"));
            }
            check_value(value).map_err(|why| format!("the value of {key}: {why}"))?;
            if res.keys.iter().any(|(k, _)| k == key) {
                return Err(format!("the key {key:?} is given twice"));
            }
            res.keys.push((key.to_owned(), value.to_owned()));
        }
        Ok(res)
    }

    fn matches(&self, name: &ObjectName) -> bool {
        if !wildcard_match(&self.domain, name.domain) {
            return false;
        }
        if !self.open && self.keys.len() != name.keys.len() {
            return false;
        }
        self.keys.iter().all(|(key, value)| {
            name.keys
                .iter()
                .any(|(k, v)| k == key && wildcard_match(value, v))
        })
    }
}

/// Whether `value` may be a key property's value: unquoted, without the
/// characters that separate names; or quoted, whole. A quoted value never
/// matches one of our beans, whose values are all unquoted, as in JMX.
fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("it is empty".to_owned());
    }
    if let Some(inner) = value.strip_prefix('"') {
        let Some(inner) = inner.strip_suffix('"') else {
            return Err(format!("{value:?} opens a quote it does not close"));
        };
        if inner.contains(['"', '\\', '\n']) {
            return Err(format!(
                "{value:?} has a quote, backslash or newline inside its quotes"
            ));
        }
        return Ok(());
    }
    match value.chars().find(|c| matches!(c, ':' | '=' | '"' | '\n')) {
        Some(c) => Err(format!("{value:?} contains {c:?}")),
        None => Ok(()),
    }
}

/// `text` matched against `pattern`, where `*` is any run of characters
/// and `?` any one character.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // The classic greedy match with one backtrack point: linear in practice,
    // and never worse than quadratic however many stars a caller sends.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(text: &str) -> ObjectName {
        let (domain, props) = text.split_once(':').unwrap();
        assert_eq!(domain, "Hadoop");
        ObjectName {
            domain: "Hadoop",
            keys: props
                .split(',')
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap();
                    (k.to_owned(), v.to_owned())
                })
                .collect(),
        }
    }

    #[test]
    fn patterns_match_as_jmx_object_names() {
        let queue = name("Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=default");
        let cluster = name("Hadoop:service=ResourceManager,name=ClusterMetrics");
        let check = |pattern: &str| {
            let p = Pattern::parse(pattern).unwrap();
            (p.matches(&queue), p.matches(&cluster))
        };
        assert_eq!(check("*:*"), (true, true));
        assert_eq!(check("Hadoop:*"), (true, true));
        assert_eq!(check("Had*:*"), (true, true));
        assert_eq!(check("Hadoo?:*"), (true, true));
        assert_eq!(check("hadoop:*"), (false, false));
        assert_eq!(
            check("Hadoop:service=ResourceManager,name=QueueMetrics,*"),
            (true, false)
        );
        // Property order does not matter; without `*` the set must be whole.
        assert_eq!(
            check("Hadoop:name=ClusterMetrics,service=ResourceManager"),
            (false, true)
        );
        assert_eq!(check("Hadoop:name=ClusterMetrics"), (false, false));
        assert_eq!(check("Hadoop:*,q1=default"), (true, false));
        assert_eq!(check("Hadoop:name=*Metrics,*"), (true, true));
        assert_eq!(check("Hadoop:q1=d?f*t,*"), (true, false));
        assert_eq!(check("Hadoop:q1=\"default\",*"), (false, false));
    }

    #[test]
    fn malformed_patterns_say_why() {
        for (text, why) in [
            (
                "Hadoop",
                "there is no ':' between the domain and the key properties",
            ),
            ("Hadoop:", "the key properties are empty"),
            ("Hadoop:name", "\"name\" is not key=value"),
            ("Hadoop:=x", "\"=x\" has an empty key"),
            ("Hadoop:name=", "the value of name: it is empty"),
            ("Hadoop:n*=x", "the key \"n*\" contains '*'"),
            ("Hadoop:a=1,a=2", "the key \"a\" is given twice"),
            ("Hadoop:*,*", "'*' appears twice among the key properties"),
            (
                "Hadoop:a=\"x",
                "the value of a: \"\\\"x\" opens a quote it does not close",
            ),
        ] {
            assert_eq!(Pattern::parse(text), Err(why.to_owned()), "{text}");
        }
    }

    #[test]
    fn wildcards() {
        for (p, t, m) in [
            ("*", "", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("?", "", false),
            ("**a", "bba", true),
            ("a?c", "abc", true),
        ] {
            assert_eq!(wildcard_match(p, t), m, "{p} on {t}");
        }
    }
}
