//! The NodeManager protocol's bodies (`/ws/v1/nm/...`): registration,
//! heartbeat and unregistration, and their conversions to and from the core's
//! `NodeRegistration`, `NodeHeartbeat` and `HeartbeatReply`.
//!
//! The duplicate-heartbeat bookkeeping (`responseId`) is the actor's; this
//! module only carries the numbers.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use weft_core::{
    AllocatedContainer, ContainerState, ContainerStatus, HeartbeatReply, NodeHeartbeat,
    NodeRegistration, RecoveredContainer, StopReason,
};
use weft_model::{AppId, ContainerId, NodeId, Priority};
use weft_queue_tree::Acl;

use crate::dto::{InvalidField, ResourceDto, as_text, parse_field};
use crate::token::{AmToken, AttemptToken, ContainerToken};
use crate::utilization::{NodeUtilization, Utilization};

/// `POST /ws/v1/nm/register`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRegisterRequest {
    /// `host:port`.
    pub node_id: String,
    /// Network location (`/default-rack` when absent).
    #[serde(default)]
    pub rack: Option<String>,
    /// The node's web address, handed to AMs with its containers.
    #[serde(default)]
    pub http_address: Option<String>,
    /// What the node offers.
    pub capability: ResourceDto,
    /// Containers still running (after an RM or NM restart).
    #[serde(default)]
    pub containers: Vec<RunningContainerDto>,
    /// The machine's own memory and processors (Hadoop's
    /// `physicalResource`), which scale the node's reported use to the
    /// capability it offers; absent when the node does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_resource: Option<ResourceDto>,
}

/// A container a registering node still runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningContainerDto {
    /// The container.
    pub container_id: String,
    /// Its size.
    pub resource: ResourceDto,
    /// Its request priority.
    #[serde(default)]
    pub priority: i32,
}

impl NodeRegisterRequest {
    /// The machine's own size, if the node gave it.
    pub fn physical(&self) -> Option<weft_model::Resource> {
        self.physical_resource.map(|r| r.to_resource())
    }

    /// The core's form, or the first field that makes no sense.
    pub fn to_registration(&self) -> Result<NodeRegistration, InvalidField> {
        let node: NodeId = parse_field("nodeId", &self.node_id)?;
        let http_address = match &self.http_address {
            Some(a) if !a.trim().is_empty() => a.trim().to_owned(),
            _ => format!("{}:8042", node.host()),
        };
        let mut running = Vec::with_capacity(self.containers.len());
        for (i, c) in self.containers.iter().enumerate() {
            running.push(RecoveredContainer {
                container: parse_field(format!("containers[{i}].containerId"), &c.container_id)?,
                resource: c.resource.to_resource(),
                priority: Priority(c.priority),
            });
        }
        Ok(NodeRegistration {
            node,
            rack: self.rack.clone().unwrap_or_default(),
            capability: self.capability.to_resource(),
            http_address,
            running,
        })
    }
}

/// The answer to a registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRegisterResponse {
    /// Always `NORMAL` (refusals are errors).
    pub node_action: String,
    /// The node as the RM knows it.
    pub node_id: String,
    /// The RM's identity: its start time, which changes when it restarts.
    pub rm_identifier: u64,
    /// The RM's version.
    pub resource_manager_version: String,
    /// How often to heartbeat.
    pub heartbeat_interval_ms: u64,
    /// The `responseId` the node's first heartbeat carries.
    pub response_id: u64,
    /// The size the RM gives the node in place of the one it reported
    /// (`dynamic-resources.xml`), as Hadoop's registration `resource`;
    /// absent when the node offers what it reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceDto>,
}

/// `POST /ws/v1/nm/heartbeat`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeHeartbeatRequest {
    /// `host:port`.
    pub node_id: String,
    /// The `responseId` of the last answer the node received (0 before the first).
    pub response_id: u64,
    /// Containers whose state the node reports; unmentioned ones are unchanged.
    #[serde(default)]
    pub containers: Vec<ContainerStatusDto>,
    /// What the node's health checker says; absent means healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_health_status: Option<NodeHealthDto>,
    /// What the whole machine uses (Hadoop's `NodeStatus.nodeUtilization`);
    /// absent when the node does not measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_utilization: Option<ResourceUtilizationDto>,
    /// What the node's containers use together (Hadoop's
    /// `NodeStatus.containersUtilization`); absent when not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers_utilization: Option<ResourceUtilizationDto>,
}

/// YARN's `ResourceUtilization`: memory in MB, CPU in processors.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceUtilizationDto {
    /// Physical memory in use, MB.
    pub pmem: i64,
    /// Virtual memory in use, MB.
    pub vmem: i64,
    /// CPU in use, in processors: 1.0 is one processor fully busy, as
    /// YARN's `ResourceUtilization.cpu` (not a fraction of the node).
    pub cpu: f64,
}

/// More memory than this (1 EiB) in a report is a broken measurement.
const MAX_UTILIZATION_MB: i64 = 1 << 40;
/// More processors than this in a report is a broken measurement.
const MAX_UTILIZATION_CPU: f64 = 1_048_576.0;

impl ResourceUtilizationDto {
    /// The checked form, or the first field under `field` that makes no
    /// sense (negative, not a number, or beyond any machine).
    pub fn to_utilization(&self, field: &str) -> Result<Utilization, InvalidField> {
        let mb = |name: &str, v: i64| {
            if !(0..=MAX_UTILIZATION_MB).contains(&v) {
                return Err(InvalidField::new(
                    format!("{field}.{name}"),
                    format!(
                        "{v} MB is not a measurement of memory in use; expected 0 to {MAX_UTILIZATION_MB}"
                    ),
                ));
            }
            Ok(v as u64)
        };
        let pmem_mb = mb("pmem", self.pmem)?;
        let vmem_mb = mb("vmem", self.vmem)?;
        if !self.cpu.is_finite() || !(0.0..=MAX_UTILIZATION_CPU).contains(&self.cpu) {
            return Err(InvalidField::new(
                format!("{field}.cpu"),
                format!(
                    "{} is not a measurement of processors in use; expected 0 to {MAX_UTILIZATION_CPU}",
                    // Huge values in exponent form, not hundreds of digits.
                    if self.cpu.abs() < 1e9 {
                        self.cpu.to_string()
                    } else {
                        format!("{:e}", self.cpu)
                    }
                ),
            ));
        }
        Ok(Utilization {
            pmem_mb,
            vmem_mb,
            cpu: self.cpu,
        })
    }

    /// The wire form of `u`.
    pub fn from_utilization(u: Utilization) -> ResourceUtilizationDto {
        ResourceUtilizationDto {
            pmem: i64::try_from(u.pmem_mb).unwrap_or(i64::MAX),
            vmem: i64::try_from(u.vmem_mb).unwrap_or(i64::MAX),
            cpu: u.cpu,
        }
    }
}

/// A node's health, as YARN's `NodeHealthStatus` has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeHealthDto {
    /// False when the node's health checker finds it unfit.
    pub is_node_healthy: bool,
    /// The checker's words (why it is unhealthy).
    #[serde(default)]
    pub health_report: String,
}

/// What a node says about one container.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatusDto {
    /// The container.
    pub container_id: String,
    /// `NEW`, `RUNNING` or `COMPLETE`.
    pub state: String,
    /// The exit status; required for `COMPLETE`.
    #[serde(default)]
    pub exit_status: Option<i32>,
    /// The node's words about it.
    #[serde(default)]
    pub diagnostics: Option<String>,
}

impl NodeHeartbeatRequest {
    /// The node, parsed.
    pub fn node(&self) -> Result<NodeId, InvalidField> {
        parse_field("nodeId", &self.node_id)
    }

    /// The core's form, or the first field that makes no sense.
    pub fn to_heartbeat(&self) -> Result<NodeHeartbeat, InvalidField> {
        let node = self.node()?;
        let mut statuses = Vec::with_capacity(self.containers.len());
        for (i, c) in self.containers.iter().enumerate() {
            let container = parse_field(format!("containers[{i}].containerId"), &c.container_id)?;
            let state = match c.state.as_str() {
                // Not started yet: nothing for the RM to learn.
                "NEW" => continue,
                "RUNNING" => ContainerState::Running,
                "COMPLETE" => ContainerState::Complete {
                    exit_status: c.exit_status.ok_or_else(|| {
                        InvalidField::new(
                            format!("containers[{i}].exitStatus"),
                            "a COMPLETE container needs its exitStatus",
                        )
                    })?,
                },
                other => {
                    return Err(InvalidField::new(
                        format!("containers[{i}].state"),
                        format!(
                            "{other:?} is not a container state; expected NEW, RUNNING or COMPLETE"
                        ),
                    ));
                }
            };
            statuses.push(ContainerStatus { container, state });
        }
        let unhealthy = match &self.node_health_status {
            Some(h) if !h.is_node_healthy => Some(if h.health_report.trim().is_empty() {
                "the node reports itself unhealthy, without saying why".to_owned()
            } else {
                h.health_report.trim().to_owned()
            }),
            _ => None,
        };
        Ok(NodeHeartbeat {
            node,
            statuses,
            unhealthy,
        })
    }

    /// The utilization the node reports, checked (without the machine's
    /// size, which came with the registration); `None` when it reports
    /// none (older agents, the load generator).
    pub fn utilization(&self) -> Result<Option<NodeUtilization>, InvalidField> {
        if self.node_utilization.is_none() && self.containers_utilization.is_none() {
            return Ok(None);
        }
        let node = self
            .node_utilization
            .map(|u| u.to_utilization("nodeUtilization"))
            .transpose()?;
        let containers = self
            .containers_utilization
            .map(|u| u.to_utilization("containersUtilization"))
            .transpose()?;
        Ok(Some(NodeUtilization {
            node,
            containers,
            physical: None,
        }))
    }

    /// The node's diagnostics of the containers it reports complete (only
    /// valid ids with non-empty words).
    pub fn completed_diagnostics(&self) -> Vec<(ContainerId, String)> {
        self.containers
            .iter()
            .filter(|c| c.state == "COMPLETE")
            .filter_map(|c| {
                let words = c.diagnostics.as_deref()?.trim();
                let id = c.container_id.parse().ok()?;
                (!words.is_empty()).then(|| (id, words.to_owned()))
            })
            .collect()
    }
}

/// The answer to a heartbeat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeHeartbeatResponse {
    /// The request's `responseId` plus one; the node sends it back next time.
    pub response_id: u64,
    /// `NORMAL`, or `SHUTDOWN` for a decommissioned node, which must stop
    /// its containers and exit (a node the RM does not know gets an error
    /// and re-registers).
    pub node_action: NodeAction,
    /// When to heartbeat next.
    pub next_heartbeat_interval_ms: u64,
    /// Containers the node must stop.
    pub containers_to_stop: Vec<ContainerToStopDto>,
    /// Containers allocated on the node since its last heartbeat, for the
    /// node to launch (AM containers carry the submission's launch context).
    pub allocated_containers: Vec<ContainerToLaunchDto>,
    /// Why, with `SHUTDOWN` (Hadoop's `diagnosticsMessage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics_message: Option<String>,
}

/// What the RM asks of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeAction {
    /// Carry on.
    Normal,
    /// Stop every container and exit: the node was decommissioned.
    Shutdown,
}

/// A container the node must stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerToStopDto {
    /// The container.
    #[serde(with = "as_text")]
    pub container_id: ContainerId,
    /// Why.
    pub reason: StopReasonDto,
}

/// Why a node must stop a container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StopReasonDto {
    /// Its AM released it.
    Released,
    /// Its application ended.
    AppFinished,
    /// Preemption took it back.
    Preempted,
    /// The RM does not know it.
    Unknown,
    /// The node came back too small to hold it.
    NoRoom,
    /// The node reported itself unhealthy.
    NodeUnhealthy,
}

impl StopReasonDto {
    /// The wire form of a stop reason.
    pub fn from_reason(reason: StopReason) -> StopReasonDto {
        match reason {
            StopReason::Released => StopReasonDto::Released,
            StopReason::AppFinished => StopReasonDto::AppFinished,
            StopReason::Preempted => StopReasonDto::Preempted,
            StopReason::Unknown => StopReasonDto::Unknown,
            StopReason::NoRoom => StopReasonDto::NoRoom,
            StopReason::NodeUnhealthy => StopReasonDto::NodeUnhealthy,
        }
    }
}

/// A container the node should launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerToLaunchDto {
    /// The container.
    #[serde(with = "as_text")]
    pub container_id: ContainerId,
    /// Its application.
    #[serde(with = "as_text")]
    pub application_id: AppId,
    /// Its size.
    pub resource: ResourceDto,
    /// The request priority it satisfies.
    pub priority: i32,
    /// True for an application master's container.
    #[serde(rename = "isAM")]
    pub is_am: bool,
    /// The submission's `am-container-spec`, for AM containers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_context: Option<Arc<serde_json::Value>>,
    /// The secret a start call for this container must carry (the same as
    /// its AM's allocate answer gives).
    pub container_token: ContainerToken,
    /// For an AM container, its attempt's AM token (YARN's AMRMToken),
    /// which the node gives the AM process (`WEFT_AM_TOKEN`) and the AM
    /// shows on every AM protocol call; absent for other containers.
    #[serde(rename = "amRMToken", default, skip_serializing_if = "Option::is_none")]
    pub am_rm_token: Option<AmToken>,
    /// The user who submitted its application (YARN's container token
    /// carries it), for the node to show the container's logs to; absent
    /// from an RM that does not say, which leaves the node knowing no owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Its application's `VIEW_APP` ACL in YARN's form (`"alice,bob ops"`,
    /// `" "` for nobody), as the submission gave it (YARN's launch context
    /// carries it); absent from an RM that does not say, which the node
    /// reads as nobody.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_app_acl: Option<String>,
}

/// What the RM tells a node about the application of a container it hands
/// over: who may see the container's logs, and for an AM container how to
/// launch it.
#[derive(Clone, Debug, Default)]
pub struct ContainerApp {
    /// The submitting user; `None` for an app the RM no longer knows.
    pub user: Option<String>,
    /// The app's `VIEW_APP` ACL; `None` for an app the RM no longer knows.
    pub view_acl: Option<Acl>,
    /// The submission's `am-container-spec`, for its AM container.
    pub launch_context: Option<Arc<serde_json::Value>>,
    /// The AM token of its running attempt, for its AM container.
    pub am_token: Option<AttemptToken>,
}

/// The wire name of a stop reason.
pub fn stop_reason_name(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Released => "RELEASED",
        StopReason::AppFinished => "APP_FINISHED",
        StopReason::Preempted => "PREEMPTED",
        StopReason::Unknown => "UNKNOWN",
        StopReason::NoRoom => "NO_ROOM",
        StopReason::NodeUnhealthy => "NODE_UNHEALTHY",
    }
}

impl NodeHeartbeatResponse {
    /// The wire form of the core's reply; `app` gives what the node is told
    /// about each allocated container's application (owner, `VIEW_APP`,
    /// an AM container's launch context), `token` each allocated
    /// container's token.
    pub fn from_reply(
        response_id: u64,
        interval_ms: u64,
        reply: HeartbeatReply,
        app: impl Fn(AppId) -> ContainerApp,
        mut token: impl FnMut(ContainerId) -> ContainerToken,
    ) -> NodeHeartbeatResponse {
        NodeHeartbeatResponse {
            response_id,
            node_action: NodeAction::Normal,
            next_heartbeat_interval_ms: interval_ms,
            containers_to_stop: reply
                .containers_to_stop
                .into_iter()
                .map(|(container_id, reason)| ContainerToStopDto {
                    container_id,
                    reason: StopReasonDto::from_reason(reason),
                })
                .collect(),
            allocated_containers: reply
                .allocated
                .iter()
                .map(|c| to_launch(c, app(c.container.app()), token(c.container)))
                .collect(),
            diagnostics_message: None,
        }
    }

    /// The answer telling a node to shut down, and why.
    pub fn shutdown(
        response_id: u64,
        interval_ms: u64,
        diagnostics: String,
    ) -> NodeHeartbeatResponse {
        NodeHeartbeatResponse {
            response_id,
            node_action: NodeAction::Shutdown,
            next_heartbeat_interval_ms: interval_ms,
            containers_to_stop: Vec::new(),
            allocated_containers: Vec::new(),
            diagnostics_message: Some(diagnostics),
        }
    }
}

fn to_launch(
    c: &AllocatedContainer,
    app: ContainerApp,
    container_token: ContainerToken,
) -> ContainerToLaunchDto {
    ContainerToLaunchDto {
        container_id: c.container,
        application_id: c.container.app(),
        resource: ResourceDto::from_resource(c.resource),
        priority: c.priority.0,
        is_am: c.is_am,
        launch_context: if c.is_am { app.launch_context } else { None },
        container_token,
        // Only the attempt's own AM container carries it: an AM container
        // of an attempt that has already failed gets none.
        am_rm_token: app
            .am_token
            .filter(|t| c.is_am && t.attempt == c.container.attempt)
            .map(|t| t.token),
        user: app.user,
        view_app_acl: app.view_acl.map(|acl| acl.to_string()),
    }
}

/// `POST /ws/v1/nm/unregister`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeUnregisterRequest {
    /// `host:port`.
    pub node_id: String,
}

/// The answer to an unregistration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeUnregisterResponse {
    /// The node, now shut down.
    pub node_id: String,
    /// `SHUTDOWN`.
    pub state: String,
}

#[cfg(test)]
mod tests {
    use weft_model::{AttemptId, ContainerId, Resource};

    use super::*;

    #[test]
    fn registration_defaults_the_http_address_and_rack() {
        let req: NodeRegisterRequest =
            serde_json::from_str(r#"{"nodeId":"h1:8041","capability":{"memory":8192,"vCores":8}}"#)
                .unwrap();
        let reg = req.to_registration().unwrap();
        assert_eq!(reg.http_address, "h1:8042");
        assert_eq!(reg.rack, "");
        assert_eq!(reg.capability, Resource::new(8192, 8));
    }

    #[test]
    fn heartbeat_names_the_bad_field() {
        let req: NodeHeartbeatRequest = serde_json::from_str(
            r#"{"nodeId":"h1:8041","responseId":0,"containers":[
                {"containerId":"container_1_0001_01_000001","state":"COMPLETE"}]}"#,
        )
        .unwrap();
        let err = req.to_heartbeat().unwrap_err();
        assert_eq!(
            err.to_string(),
            "containers[0].exitStatus: a COMPLETE container needs its exitStatus"
        );
        let req: NodeHeartbeatRequest = serde_json::from_str(
            r#"{"nodeId":"h1:8041","responseId":0,"containers":[
                {"containerId":"container_1_0001_01_000001","state":"DONE"}]}"#,
        )
        .unwrap();
        assert_eq!(
            req.to_heartbeat().unwrap_err().to_string(),
            "containers[0].state: \"DONE\" is not a container state; expected NEW, RUNNING or COMPLETE"
        );
    }

    #[test]
    fn am_containers_carry_the_launch_context() {
        let app = AppId::new(7, 1);
        let am = ContainerId::new(AttemptId::new(app, 1), 1);
        let reply = HeartbeatReply {
            containers_to_stop: vec![(
                ContainerId::new(AttemptId::new(app, 1), 9),
                StopReason::Released,
            )],
            allocated: vec![AllocatedContainer {
                container: am,
                node: "h1:1".parse().unwrap(),
                node_http_address: "h1:2".into(),
                resource: Resource::new(1024, 1),
                priority: Priority(0),
                locality: weft_core::Locality::OffSwitch,
                is_am: true,
            }],
        };
        let ctx = Arc::new(serde_json::json!({"commands":{"command":"sleep 1"}}));
        let token = ContainerToken::from_hex("0123456789abcdef0123456789abcdef").unwrap();
        let res = NodeHeartbeatResponse::from_reply(
            3,
            1000,
            reply,
            |a| ContainerApp {
                user: Some("alice".to_owned()),
                view_acl: Some(Acl::parse("bob ops")),
                launch_context: (a == app).then(|| ctx.clone()),
                am_token: Some(AttemptToken {
                    attempt: AttemptId::new(app, 1),
                    token: AmToken::from_hex("fedcba9876543210fedcba9876543210").unwrap(),
                }),
            },
            |_| token.clone(),
        );
        let json = serde_json::to_string(&res).unwrap();
        assert_eq!(
            json,
            r#"{"responseId":3,"nodeAction":"NORMAL","nextHeartbeatIntervalMs":1000,"containersToStop":[{"containerId":"container_7_0001_01_000009","reason":"RELEASED"}],"allocatedContainers":[{"containerId":"container_7_0001_01_000001","applicationId":"application_7_0001","resource":{"memory":1024,"vCores":1},"priority":0,"isAM":true,"launchContext":{"commands":{"command":"sleep 1"}},"containerToken":"0123456789abcdef0123456789abcdef","amRMToken":"fedcba9876543210fedcba9876543210","user":"alice","viewAppAcl":"bob ops"}]}"#
        );
        let back: NodeHeartbeatResponse = serde_json::from_str(&json).unwrap();
        assert_eq!(back, res);
    }

    /// A node reads an answer from an RM that does not say whose the
    /// container is (written before `user` and `viewAppAcl`): it knows no
    /// owner and no `VIEW_APP`, so only its administrators see the logs.
    #[test]
    fn an_answer_without_the_owner_still_parses() {
        let old = r#"{"responseId":3,"nodeAction":"NORMAL","nextHeartbeatIntervalMs":1000,"containersToStop":[],"allocatedContainers":[{"containerId":"container_7_0001_01_000002","applicationId":"application_7_0001","resource":{"memory":1024,"vCores":1},"priority":1,"isAM":false,"containerToken":"0123456789abcdef0123456789abcdef"}]}"#;
        let res: NodeHeartbeatResponse = serde_json::from_str(old).unwrap();
        let c = &res.allocated_containers[0];
        assert_eq!((c.user.as_deref(), c.view_app_acl.as_deref()), (None, None));
        // And written back as it came: nothing is added for an unknown app.
        assert_eq!(serde_json::to_string(&res).unwrap(), old);
    }
}
