//! The node's wire formats: the launch context an AM (or the RM, for an AM
//! container) hands over, and the bodies of the node's HTTP API, shaped
//! after YARN's NodeManager REST API (`nodeInfo`, `containers`,
//! `container`, container log listings).
//!
//! What the node does with them is `agent`'s; routing is `http`'s.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What to run in a container: a shell command line and its environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchContext {
    /// The command line, run by `/bin/sh` in the container's working
    /// directory (`<LOG_DIR>` is replaced by the container's log directory,
    /// as YARN does).
    pub command: String,
    /// Variables added to the container's environment.
    pub environment: BTreeMap<String, String>,
}

/// Why a launch context cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid launch context: {field}: {why}")]
pub struct LaunchContextError {
    /// Where, as a path into the body (`commands.command`).
    pub field: String,
    /// What is wrong.
    pub why: String,
}

impl LaunchContext {
    /// Reads Hadoop's `ContainerLaunchContextInfo` as the REST submission
    /// writes it (`{"commands": {"command": "..."}, "environment": {"entry":
    /// [{"key": "K", "value": "V"}]}}`), also accepting a list of commands
    /// (joined with spaces, as YARN joins them), a plain `{"K": "V"}`
    /// environment, and a top-level `command`. Other fields
    /// (`local-resources`, ...) are ignored.
    pub fn from_json(v: &Value) -> Result<LaunchContext, LaunchContextError> {
        let err = |field: &str, why: &str| LaunchContextError {
            field: field.to_owned(),
            why: why.to_owned(),
        };
        let Value::Object(top) = v else {
            return Err(err("(body)", "expected a JSON object"));
        };
        let commands = match (top.get("commands"), top.get("command")) {
            (Some(Value::Object(c)), _) => c
                .get("command")
                .ok_or_else(|| err("commands.command", "missing"))?,
            (Some(other), _) => other,
            (None, Some(c)) => c,
            (None, None) => return Err(err("commands.command", "missing")),
        };
        let command = match commands {
            Value::String(s) => s.clone(),
            Value::Array(items) => {
                let mut parts = Vec::with_capacity(items.len());
                for item in items {
                    let Value::String(s) = item else {
                        return Err(err("commands.command", "expected strings"));
                    };
                    parts.push(s.as_str());
                }
                parts.join(" ")
            }
            _ => {
                return Err(err(
                    "commands.command",
                    "expected a string or a list of strings",
                ));
            }
        };
        if command.trim().is_empty() {
            return Err(err("commands.command", "is empty"));
        }
        let mut environment = BTreeMap::new();
        match top.get("environment") {
            None | Some(Value::Null) => {}
            Some(Value::Object(env)) => match env.get("entry") {
                Some(entries) => {
                    // One entry may come as an object rather than a list (XML-born JSON).
                    let list = match entries {
                        Value::Array(l) => l.clone(),
                        one => vec![one.clone()],
                    };
                    for (i, e) in list.iter().enumerate() {
                        let field = format!("environment.entry[{i}]");
                        let key = e.get("key").and_then(Value::as_str);
                        let value = e.get("value").map(text_of);
                        match (key, value) {
                            (Some(k), Some(v)) => {
                                environment.insert(k.to_owned(), v);
                            }
                            _ => {
                                return Err(err(&field, "expected {\"key\": ..., \"value\": ...}"));
                            }
                        }
                    }
                }
                None => {
                    for (k, v) in env {
                        environment.insert(k.clone(), text_of(v));
                    }
                }
            },
            Some(_) => return Err(err("environment", "expected an object")),
        }
        for k in environment.keys() {
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(err("environment", &format!("{k:?} is not a variable name")));
            }
        }
        Ok(LaunchContext {
            command,
            environment,
        })
    }

    /// Hadoop's form, as `from_json` reads it back.
    pub fn to_json(&self) -> Value {
        let entries: Vec<Value> = self
            .environment
            .iter()
            .map(|(k, v)| serde_json::json!({"key": k, "value": v}))
            .collect();
        serde_json::json!({
            "commands": {"command": self.command},
            "environment": {"entry": entries},
        })
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `GET /ws/v1/node/info`: `{"nodeInfo": ...}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfoDto {
    /// The node id, `host:port`.
    pub id: String,
    /// The host part of the id.
    pub node_host_name: String,
    /// The address AMs use.
    pub node_http_address: String,
    /// Its rack.
    pub rack: String,
    /// Memory offered to containers (MB).
    #[serde(rename = "totalPmemAllocatedContainersMB")]
    pub total_pmem_allocated_containers_mb: u64,
    /// Vcores offered to containers.
    pub total_v_cores_allocated_containers: u64,
    /// Weft's version (Hadoop's field name).
    pub node_manager_version: String,
    /// When the agent started (ms since the epoch).
    pub nm_startup_time: u64,
    /// False while the node's health script reports it unfit (always true
    /// without a script).
    pub node_healthy: bool,
    /// The health script's report while the node is unhealthy, else empty.
    pub health_report: String,
    /// When the health script last decided (ms since the epoch; the agent's
    /// start before its first verdict, or without a script).
    pub last_node_update_time: u64,
    /// True: physical memory is enforced (`memoryEnforcement` says how).
    pub pmem_check_enabled: bool,
    /// False: virtual memory is not limited.
    pub vmem_check_enabled: bool,
    /// Weft's addition: the RM reported to.
    pub resource_manager: String,
    /// Weft's addition: whether the RM has accepted the node's registration.
    pub registered: bool,
    /// Weft's addition: `cgroups-v2` or `rss-polling`.
    pub memory_enforcement: String,
    /// Weft's addition: live containers (allocated, running or stopping).
    pub num_containers: u32,
}

/// `{"nodeInfo": ...}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfoBody {
    /// The node.
    pub node_info: NodeInfoDto,
}

/// Hadoop's `ContainerExitStatus.INVALID`: the exit code of a container
/// that has not exited.
pub const EXIT_CODE_INVALID: i32 = -1000;

fn exit_code_invalid() -> i32 {
    EXIT_CODE_INVALID
}

/// One container as the node sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerDto {
    /// The container.
    pub id: String,
    /// Weft's addition: its application.
    pub app_id: String,
    /// `ALLOCATED` (not started yet), `RUNNING`, `KILLING` or `COMPLETE`.
    pub state: String,
    /// The exit status once complete (YARN's negative codes when the node or
    /// the RM ended it); until then `EXIT_CODE_INVALID`, as Hadoop writes it
    /// (the field is always there, always a number).
    #[serde(default = "exit_code_invalid")]
    pub exit_code: i32,
    /// Why it ended, or what went wrong.
    pub diagnostics: String,
    /// Memory it may use (MB).
    #[serde(rename = "totalMemoryNeededMB")]
    pub total_memory_needed_mb: u64,
    /// Vcores it was given.
    pub total_v_cores_needed: u64,
    /// Weft's addition: true for an application master's container.
    #[serde(rename = "isAM")]
    pub is_am: bool,
    /// Weft's addition: the process id of its process group leader, while it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Weft's addition: resident memory at the last sample (MB).
    #[serde(
        rename = "memoryUsedMB",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub memory_used_mb: Option<u64>,
    /// The node.
    pub node_id: String,
    /// Where its logs are listed.
    pub container_logs_link: String,
    /// Hadoop's `user`: who submitted its application, as the RM said when
    /// it handed the container over; empty when the RM did not say.
    #[serde(default)]
    pub user: String,
}

impl ContainerDto {
    /// This container for a reader who may not see its application (no
    /// `VIEW_APP` right while the node's ACLs are on): what it is, whose,
    /// its size, state and exit code stay; what it said and what its
    /// process does are left out (`diagnostics`, which may quote its
    /// stderr, is empty; `pid` and `memoryUsedMB` absent), and so is the
    /// link to the logs such a reader may not read.
    pub fn withheld(self) -> ContainerDto {
        ContainerDto {
            diagnostics: String::new(),
            pid: None,
            memory_used_mb: None,
            container_logs_link: String::new(),
            ..self
        }
    }
}

/// `{"containers": {"container": [...]}}` (an empty list is `{"containers": {}}`, as in YARN).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainersBody {
    /// The list.
    pub containers: ContainerList,
}

/// The inner list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerList {
    /// The containers, by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub container: Vec<ContainerDto>,
}

/// `{"container": ...}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerBody {
    /// The container.
    pub container: ContainerDto,
}

/// One log file of a container.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogFileDto {
    /// `stdout`, `stderr`, ...
    pub file_name: String,
    /// Bytes.
    pub file_size: u64,
}

/// `GET /ws/v1/node/containers/{id}/logs`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerLogsDto {
    /// The container.
    pub container_id: String,
    /// The node.
    pub node_id: String,
    /// `LOCAL`: logs are never aggregated.
    pub log_aggregation_type: String,
    /// The files, by name.
    pub container_log_info: Vec<LogFileDto>,
}

/// `{"containerLogsInfo": ...}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerLogsBody {
    /// The listing.
    pub container_logs_info: ContainerLogsDto,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hadoop_launch_contexts_are_read() {
        let ctx = LaunchContext::from_json(&json!({
            "commands": {"command": "sleep 1"},
            "environment": {"entry": [{"key": "A", "value": "1"}, {"key": "B", "value": 2}]},
            "local-resources": {"entry": []},
        }))
        .unwrap();
        assert_eq!(ctx.command, "sleep 1");
        assert_eq!(ctx.environment["B"], "2");
        assert_eq!(LaunchContext::from_json(&ctx.to_json()).unwrap(), ctx);
        let ctx = LaunchContext::from_json(&json!({
            "commands": {"command": ["echo", "hi"]},
            "environment": {"entry": {"key": "ONE", "value": "x"}},
        }))
        .unwrap();
        assert_eq!(
            (ctx.command.as_str(), ctx.environment.len()),
            ("echo hi", 1)
        );
        let ctx = LaunchContext::from_json(&json!({"command": "true", "environment": {"K": "v"}}))
            .unwrap();
        assert_eq!(ctx.environment["K"], "v");
    }

    #[test]
    fn bad_launch_contexts_are_named() {
        let cases = [
            json!([]),
            json!({"environment": {}}),
            json!({"commands": {"command": "  "}}),
            json!({"commands": {"command": 3}}),
            json!({"command": "x", "environment": {"entry": [{"key": "A"}]}}),
            json!({"command": "x", "environment": {"A=B": "c"}}),
        ];
        let errors: Vec<String> = cases
            .iter()
            .map(|c| LaunchContext::from_json(c).unwrap_err().to_string())
            .collect();
        expect_test::expect![[r#"
            [
                "invalid launch context: (body): expected a JSON object",
                "invalid launch context: commands.command: missing",
                "invalid launch context: commands.command: is empty",
                "invalid launch context: commands.command: expected a string or a list of strings",
                "invalid launch context: environment.entry[0]: expected {\"key\": ..., \"value\": ...}",
                "invalid launch context: environment: \"A=B\" is not a variable name",
            ]
        "#]]
        .assert_debug_eq(&errors);
    }

    fn keys(v: &impl Serialize) -> Vec<String> {
        match serde_json::to_value(v).unwrap() {
            Value::Object(m) => m.keys().cloned().collect(),
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn field_names_are_hadoops_with_mb_in_capitals() {
        let c = ContainerDto {
            id: "container_1_0001_01_000002".to_owned(),
            app_id: "application_1_0001".to_owned(),
            state: "RUNNING".to_owned(),
            exit_code: EXIT_CODE_INVALID,
            diagnostics: String::new(),
            total_memory_needed_mb: 1024,
            total_v_cores_needed: 1,
            is_am: false,
            pid: Some(42),
            memory_used_mb: Some(12),
            node_id: "h1:8041".to_owned(),
            container_logs_link: String::new(),
            user: "alice".to_owned(),
        };
        expect_test::expect![[r#"
            [
                "appId",
                "containerLogsLink",
                "diagnostics",
                "exitCode",
                "id",
                "isAM",
                "memoryUsedMB",
                "nodeId",
                "pid",
                "state",
                "totalMemoryNeededMB",
                "totalVCoresNeeded",
                "user",
            ]
        "#]]
        .assert_debug_eq(&keys(&c));
        let info = NodeInfoDto {
            id: "h1:8041".to_owned(),
            node_host_name: "h1".to_owned(),
            node_http_address: "h1:8042".to_owned(),
            rack: "/r1".to_owned(),
            total_pmem_allocated_containers_mb: 8192,
            total_v_cores_allocated_containers: 8,
            node_manager_version: "0.1.0".to_owned(),
            nm_startup_time: 1,
            node_healthy: true,
            health_report: String::new(),
            last_node_update_time: 1,
            pmem_check_enabled: true,
            vmem_check_enabled: false,
            resource_manager: "http://rm:8088".to_owned(),
            registered: true,
            memory_enforcement: "rss-polling".to_owned(),
            num_containers: 0,
        };
        expect_test::expect![[r#"
            [
                "healthReport",
                "id",
                "lastNodeUpdateTime",
                "memoryEnforcement",
                "nmStartupTime",
                "nodeHealthy",
                "nodeHostName",
                "nodeHttpAddress",
                "nodeManagerVersion",
                "numContainers",
                "pmemCheckEnabled",
                "rack",
                "registered",
                "resourceManager",
                "totalPmemAllocatedContainersMB",
                "totalVCoresAllocatedContainers",
                "vmemCheckEnabled",
            ]
        "#]]
        .assert_debug_eq(&keys(&info));
    }

    #[test]
    fn an_empty_container_list_is_an_empty_object() {
        let body = ContainersBody {
            containers: ContainerList::default(),
        };
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"containers":{}}"#
        );
    }
}
