//! The ApplicationMaster protocol's bodies (`/ws/v1/am/{appId}/...`):
//! registration, allocate calls and finishing, and their conversions to and
//! from the core's `AllocateRequest`, `AllocateReply` and `RegisterReply`.
//!
//! The duplicate-allocate bookkeeping (`responseId`) is the actor's; this
//! module only carries the numbers.

use serde::{Deserialize, Serialize};
use weft_core::{
    ANY, AllocateReply, AllocatedContainer, Ask, CompletedContainer, FinalStatus, Locality,
    NodeReport, NodeState, RegisterReply,
};
use weft_model::{AppId, ContainerId, NodeId, Priority};

use crate::dto::{EpochMillis, InvalidField, ResourceDto, as_text, parse_field};
use crate::token::ContainerToken;

/// `POST /ws/v1/am/{appId}/register` (the body is optional).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AmRegisterRequest {
    /// The host the AM runs on.
    #[serde(default)]
    pub host: Option<String>,
    /// Its RPC port.
    #[serde(default)]
    pub rpc_port: Option<u16>,
    /// Its web UI.
    #[serde(default)]
    pub tracking_url: Option<String>,
}

/// The answer to an AM registration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AmRegisterResponse {
    /// The largest container the AM may ask for in its queue.
    pub maximum_resource_capability: ResourceDto,
    /// The queue the app runs in.
    pub queue: String,
    /// The `responseId` the first allocate call carries.
    pub response_id: u64,
}

impl AmRegisterResponse {
    /// The wire form of the core's reply.
    pub fn from_reply(reply: &RegisterReply) -> AmRegisterResponse {
        AmRegisterResponse {
            maximum_resource_capability: ResourceDto::from_resource(reply.max_capability),
            queue: reply.queue.to_string(),
            response_id: 0,
        }
    }
}

/// `POST /ws/v1/am/{appId}/allocate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocateRequestDto {
    /// The `responseId` of the last answer received (0 for the first call).
    pub response_id: u64,
    /// New or replacing asks.
    #[serde(default)]
    pub asks: Vec<AskDto>,
    /// Containers given back.
    #[serde(default)]
    pub releases: Vec<String>,
    /// Hosts or racks to stop offering.
    #[serde(default)]
    pub blacklist_additions: Vec<String>,
    /// Hosts or racks to offer again.
    #[serde(default)]
    pub blacklist_removals: Vec<String>,
    /// Progress from 0 to 1.
    #[serde(default)]
    pub progress: f32,
}

/// One resource request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskDto {
    /// Request priority (smaller is served first).
    pub priority: i32,
    /// A host, a rack, or `*`.
    #[serde(default = "any")]
    pub resource_name: String,
    /// Container size.
    pub capability: ResourceDto,
    /// How many (0 cancels the ask).
    pub num_containers: u32,
    /// Whether the scheduler may go beyond this location.
    #[serde(default = "yes")]
    pub relax_locality: bool,
}

fn any() -> String {
    ANY.to_owned()
}

fn yes() -> bool {
    true
}

impl AllocateRequestDto {
    /// The core's form for `app`, or the first field that makes no sense.
    pub fn to_request(&self, app: AppId) -> Result<weft_core::AllocateRequest, InvalidField> {
        if !self.progress.is_finite() {
            return Err(InvalidField::new(
                "progress",
                "must be a number from 0 to 1",
            ));
        }
        let asks = self
            .asks
            .iter()
            .map(|a| Ask {
                priority: Priority(a.priority),
                resource_name: a.resource_name.clone(),
                capability: a.capability.to_resource(),
                num_containers: a.num_containers,
                relax_locality: a.relax_locality,
            })
            .collect();
        let mut releases = Vec::with_capacity(self.releases.len());
        for (i, r) in self.releases.iter().enumerate() {
            releases.push(parse_field(format!("releases[{i}]"), r)?);
        }
        Ok(weft_core::AllocateRequest {
            app,
            asks,
            releases,
            blacklist_additions: self.blacklist_additions.clone(),
            blacklist_removals: self.blacklist_removals.clone(),
            progress: self.progress,
        })
    }
}

/// The answer to an allocate call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocateResponseDto {
    /// The request's `responseId` plus one.
    pub response_id: u64,
    /// Containers allocated since the last call (never the AM's own
    /// container, which its node launches, as in YARN).
    pub allocated: Vec<AllocatedDto>,
    /// Containers that ended since the last call.
    pub completed: Vec<CompletedDto>,
    /// Containers to give back before the deadline, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption: Option<PreemptionDto>,
    /// What the app may still get (YARN's headroom).
    pub available_resources: ResourceDto,
    /// Running nodes.
    pub num_cluster_nodes: u32,
    /// Nodes whose state changed since the last call, each as it is now
    /// (YARN's `updatedNodes`); left out when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updated_nodes: Vec<UpdatedNodeDto>,
}

/// A node whose state changed: it joined or came back, started draining, or
/// left. An AM re-runs work whose output was on a node that left, and may
/// move work off a draining one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatedNodeDto {
    /// The node.
    #[serde(with = "as_text")]
    pub node_id: NodeId,
    /// Its state now, by YARN's name (`RUNNING`, `DECOMMISSIONING`, `LOST`, ...).
    pub node_state: String,
    /// What the change means for the AM: YARN's `NODE_USABLE`,
    /// `NODE_DECOMMISSIONING` or `NODE_UNUSABLE`.
    pub node_update_type: String,
    /// Its web address.
    pub http_address: String,
    /// Its rack.
    pub rack_name: String,
    /// What it offers now (a draining node's shrinks with its containers).
    pub capability: ResourceDto,
    /// What its containers hold.
    pub used: ResourceDto,
    /// How many containers it runs.
    pub num_containers: u32,
    /// When a draining node's decommission times out, if it has a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decommissioning_deadline: Option<EpochMillis>,
    /// Why an unhealthy node is unfit, by its health checker.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub health_report: String,
}

impl UpdatedNodeDto {
    fn from_report(n: NodeReport, epoch_ms: impl Fn(weft_model::Time) -> EpochMillis) -> Self {
        let update_type = match n.state {
            NodeState::Running => "NODE_USABLE",
            NodeState::Decommissioning => "NODE_DECOMMISSIONING",
            NodeState::Lost
            | NodeState::Shutdown
            | NodeState::Decommissioned
            | NodeState::Unhealthy => "NODE_UNUSABLE",
        };
        UpdatedNodeDto {
            node_id: n.id,
            node_state: n.state.yarn_name().to_owned(),
            node_update_type: update_type.to_owned(),
            http_address: n.http_address,
            rack_name: n.rack,
            capability: ResourceDto::from_resource(n.capability),
            used: ResourceDto::from_resource(n.allocated),
            num_containers: n.n_containers,
            decommissioning_deadline: n.drain_deadline.map(epoch_ms),
            health_report: n.health_report,
        }
    }
}

/// A container given to the app.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AllocatedDto {
    /// The container.
    #[serde(with = "as_text")]
    pub container_id: ContainerId,
    /// Its node.
    #[serde(with = "as_text")]
    pub node_id: NodeId,
    /// The node's web address.
    pub node_http_address: String,
    /// Its size.
    pub resource: ResourceDto,
    /// The request priority it satisfies.
    pub priority: i32,
    /// How local it is to what was asked.
    pub locality: LocalityDto,
    /// The secret the node asks for when the AM starts it.
    pub container_token: ContainerToken,
}

/// How local an allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LocalityDto {
    /// On a node the app asked for.
    NodeLocal,
    /// On a rack the app asked for.
    RackLocal,
    /// Anywhere.
    OffSwitch,
}

impl LocalityDto {
    /// The wire form of a locality.
    pub fn from_locality(l: Locality) -> LocalityDto {
        match l {
            Locality::NodeLocal => LocalityDto::NodeLocal,
            Locality::RackLocal => LocalityDto::RackLocal,
            Locality::OffSwitch => LocalityDto::OffSwitch,
        }
    }
}

/// A container that ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletedDto {
    /// The container.
    #[serde(with = "as_text")]
    pub container_id: ContainerId,
    /// `COMPLETE`.
    pub state: CompletedState,
    /// Its exit status (YARN's conventions: -100 aborted, -102 preempted, ...).
    pub exit_status: i32,
    /// Why it ended.
    pub diagnostics: String,
}

/// The state of an ended container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CompletedState {
    /// Ended.
    Complete,
}

/// YARN's preemption message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreemptionDto {
    /// When the RM kills what was not released (ms since the epoch).
    pub deadline: EpochMillis,
    /// The containers.
    pub containers: Vec<String>,
}

/// The wire name of a locality level.
pub fn locality_name(locality: Locality) -> &'static str {
    match locality {
        Locality::NodeLocal => "NODE_LOCAL",
        Locality::RackLocal => "RACK_LOCAL",
        Locality::OffSwitch => "OFF_SWITCH",
    }
}

impl AllocateResponseDto {
    /// The wire form of the core's reply (consumed, so nothing is copied);
    /// `epoch_ms` turns core time into wall-clock milliseconds, `token`
    /// gives each allocated container's token.
    pub fn from_reply(
        response_id: u64,
        reply: AllocateReply,
        epoch_ms: impl Fn(weft_model::Time) -> EpochMillis,
        mut token: impl FnMut(ContainerId) -> ContainerToken,
    ) -> AllocateResponseDto {
        AllocateResponseDto {
            response_id,
            allocated: reply
                .allocated
                .into_iter()
                .filter(|c| !c.is_am)
                .map(|c| {
                    let t = token(c.container);
                    allocated(c, t)
                })
                .collect(),
            completed: reply.completed.into_iter().map(completed).collect(),
            preemption: reply.preemption.map(|p| PreemptionDto {
                deadline: epoch_ms(p.deadline),
                containers: p.containers.iter().map(ToString::to_string).collect(),
            }),
            available_resources: ResourceDto::from_resource(reply.available),
            num_cluster_nodes: reply.num_cluster_nodes,
            updated_nodes: reply
                .updated_nodes
                .into_iter()
                .map(|n| UpdatedNodeDto::from_report(n, &epoch_ms))
                .collect(),
        }
    }
}

fn allocated(c: AllocatedContainer, container_token: ContainerToken) -> AllocatedDto {
    AllocatedDto {
        container_id: c.container,
        node_id: c.node,
        node_http_address: c.node_http_address.to_string(),
        resource: ResourceDto::from_resource(c.resource),
        priority: c.priority.0,
        locality: LocalityDto::from_locality(c.locality),
        container_token,
    }
}

fn completed(c: CompletedContainer) -> CompletedDto {
    CompletedDto {
        container_id: c.container,
        state: CompletedState::Complete,
        exit_status: c.exit_status,
        diagnostics: c.diagnostics.into_owned(),
    }
}

/// `POST /ws/v1/am/{appId}/finish`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AmFinishRequest {
    /// `SUCCEEDED`, `FAILED` or `KILLED`.
    pub final_status: String,
    /// The AM's own words.
    #[serde(default)]
    pub diagnostics: String,
    /// Where its history lives now.
    #[serde(default)]
    pub tracking_url: Option<String>,
}

impl AmFinishRequest {
    /// The core's final status.
    pub fn outcome(&self) -> Result<FinalStatus, InvalidField> {
        match self.final_status.as_str() {
            "SUCCEEDED" => Ok(FinalStatus::Succeeded),
            "FAILED" => Ok(FinalStatus::Failed),
            "KILLED" => Ok(FinalStatus::Killed),
            other => Err(InvalidField::new(
                "finalStatus",
                format!("{other:?} is not a final status; expected SUCCEEDED, FAILED or KILLED"),
            )),
        }
    }
}

/// The answer to finishing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AmFinishResponse {
    /// Always true: the attempt is over.
    pub is_unregistered: bool,
}

#[cfg(test)]
mod tests {
    use weft_model::{AttemptId, ContainerId, Resource, Time};

    use super::*;

    #[test]
    fn asks_default_to_anywhere_with_relaxed_locality() {
        let dto: AllocateRequestDto = serde_json::from_str(
            r#"{"responseId":0,"asks":[{"priority":1,"capability":{"memory":1024,"vCores":1},"numContainers":4}],"progress":0.5}"#,
        )
        .unwrap();
        let req = dto.to_request(AppId::new(1, 1)).unwrap();
        assert_eq!(
            req.asks,
            vec![weft_core::ask_anywhere(1, Resource::new(1024, 1), 4)]
        );
        assert_eq!(req.progress, 0.5);
    }

    #[test]
    fn a_bad_release_is_named() {
        let dto: AllocateRequestDto = serde_json::from_str(
            r#"{"responseId":0,"releases":["container_1_0001_01_000002","c2"]}"#,
        )
        .unwrap();
        let err = dto.to_request(AppId::new(1, 1)).unwrap_err();
        assert_eq!(err.field, "releases[1]");
    }

    #[test]
    fn reply_renders_preemption_deadline_in_epoch_millis() {
        let app = AppId::new(5, 2);
        let c = ContainerId::new(AttemptId::new(app, 1), 3);
        let reply = AllocateReply {
            allocated: vec![],
            completed: vec![CompletedContainer {
                container: c,
                exit_status: -102,
                diagnostics: "preempted".into(),
            }],
            preemption: Some(weft_core::PreemptionMessage {
                deadline: Time::from_millis(15_000),
                containers: vec![c],
            }),
            available: Resource::new(4096, 4),
            num_cluster_nodes: 2,
            updated_nodes: vec![],
        };
        let dto = AllocateResponseDto::from_reply(
            1,
            reply,
            |t| 1_000_000 + t.as_millis(),
            |_| unreachable!("nothing was allocated"),
        );
        assert_eq!(
            serde_json::to_string(&dto).unwrap(),
            r#"{"responseId":1,"allocated":[],"completed":[{"containerId":"container_5_0002_01_000003","state":"COMPLETE","exitStatus":-102,"diagnostics":"preempted"}],"preemption":{"deadline":1015000,"containers":["container_5_0002_01_000003"]},"availableResources":{"memory":4096,"vCores":4},"numClusterNodes":2}"#
        );
    }

    #[test]
    fn changed_nodes_say_what_they_mean_for_the_am() {
        let node = |host: &str, state, deadline| NodeReport {
            id: NodeId::new(host, 8041).unwrap(),
            rack: "/r1".into(),
            http_address: format!("{host}:8042"),
            state,
            capability: Resource::new(2048, 2),
            allocated: Resource::new(2048, 2),
            reserved: Resource::ZERO,
            n_containers: 2,
            last_heartbeat: Time::from_millis(1_000),
            drain_deadline: deadline,
            health_report: String::new(),
        };
        let reply = AllocateReply {
            allocated: vec![],
            completed: vec![],
            preemption: None,
            available: Resource::new(4096, 4),
            num_cluster_nodes: 2,
            updated_nodes: vec![
                node(
                    "h1",
                    NodeState::Decommissioning,
                    Some(Time::from_millis(60_000)),
                ),
                node("h2", NodeState::Lost, None),
                NodeReport {
                    health_report: "disk full".into(),
                    ..node("h3", NodeState::Unhealthy, None)
                },
            ],
        };
        let dto = AllocateResponseDto::from_reply(
            4,
            reply,
            |t| 1_000_000 + t.as_millis(),
            |_| unreachable!("nothing was allocated"),
        );
        expect_test::expect![[r#"[{"nodeId":"h1:8041","nodeState":"DECOMMISSIONING","nodeUpdateType":"NODE_DECOMMISSIONING","httpAddress":"h1:8042","rackName":"/r1","capability":{"memory":2048,"vCores":2},"used":{"memory":2048,"vCores":2},"numContainers":2,"decommissioningDeadline":1060000},{"nodeId":"h2:8041","nodeState":"LOST","nodeUpdateType":"NODE_UNUSABLE","httpAddress":"h2:8042","rackName":"/r1","capability":{"memory":2048,"vCores":2},"used":{"memory":2048,"vCores":2},"numContainers":2},{"nodeId":"h3:8041","nodeState":"UNHEALTHY","nodeUpdateType":"NODE_UNUSABLE","httpAddress":"h3:8042","rackName":"/r1","capability":{"memory":2048,"vCores":2},"used":{"memory":2048,"vCores":2},"numContainers":2,"healthReport":"disk full"}]"#]].assert_eq(&serde_json::to_string(&dto.updated_nodes).unwrap());
        // A reply with no changes leaves the field out, as before.
        let quiet = AllocateResponseDto {
            updated_nodes: vec![],
            ..dto
        };
        assert!(
            !serde_json::to_string(&quiet)
                .unwrap()
                .contains("updatedNodes")
        );
    }

    #[test]
    fn the_am_container_is_not_offered_to_the_am() {
        let app = AppId::new(5, 2);
        let container = |seq, is_am| AllocatedContainer {
            container: ContainerId::new(AttemptId::new(app, 1), seq),
            node: "h1:1".parse().unwrap(),
            node_http_address: "h1:2".into(),
            resource: Resource::new(1024, 1),
            priority: Priority(if is_am { 0 } else { 1 }),
            locality: Locality::NodeLocal,
            is_am,
        };
        let reply = AllocateReply {
            allocated: vec![container(1, true), container(2, false)],
            ..AllocateReply::default()
        };
        let token = |c: ContainerId| ContainerToken::from_hex(&format!("{:032x}", c.seq)).unwrap();
        let dto = AllocateResponseDto::from_reply(1, reply, |t| t.as_millis(), token);
        let ids: Vec<String> = dto
            .allocated
            .iter()
            .map(|c| c.container_id.to_string())
            .collect();
        assert_eq!(ids, ["container_5_0002_01_000002"]);
        assert_eq!(dto.allocated[0].locality, LocalityDto::NodeLocal);
        expect_test::expect![[r#"{"containerId":"container_5_0002_01_000002","nodeId":"h1:1","nodeHttpAddress":"h1:2","resource":{"memory":1024,"vCores":1},"priority":1,"locality":"NODE_LOCAL","containerToken":"00000000000000000000000000000002"}"#]]
            .assert_eq(&serde_json::to_string(&dto.allocated[0]).unwrap());
    }

    #[test]
    fn finish_status_must_be_final() {
        let req = AmFinishRequest {
            final_status: "UNDEFINED".into(),
            diagnostics: String::new(),
            tracking_url: None,
        };
        assert_eq!(
            req.outcome().unwrap_err().to_string(),
            "finalStatus: \"UNDEFINED\" is not a final status; expected SUCCEEDED, FAILED or KILLED"
        );
    }
}
