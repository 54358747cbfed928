//! The body of Weft's own `GET /ws/v1/cluster/apps/{appid}/explain`: why an
//! application is or is not getting containers, converted from the core's
//! `AppExplanation` into one flat list of reasons, each with the numbers
//! behind it. `docs/api.md` documents every field.
//!
//! What the reasons mean and how they are found is the core's
//! (`weft_core::explain`); this module only names them for the wire.

use serde::{Deserialize, Serialize};
use weft_core::{
    AppExplanation, AskExplanation, Locality, LocationStatus, Reason, ReasonKind, RunningAppLimit,
    Sample,
};
use weft_model::NodeId;

use crate::dto::ResourceDto;
use crate::dto::apps::final_status_name;

/// `{"appExplanation": {...}}`: why an application is or is not getting
/// containers now.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppExplanationDto {
    /// `application_<clusterTimestamp>_<seq>`.
    pub app_id: String,
    /// Its leaf queue.
    pub queue: String,
    /// YARN's state (`ACCEPTED`, `RUNNING`, `FINISHED`, `FAILED`, `KILLED`).
    pub state: String,
    /// `UNDEFINED` until it ends, then the AM's verdict.
    pub final_status: String,
    /// `ENDED`, `HELD_BACK`, `SERVABLE`, `AWAITING_AM` or `NOTHING_ASKED`.
    pub outlook: String,
    /// One line for a person: the most decisive reason, or why nothing holds it back.
    pub summary: String,
    /// The reasons, the application's first, then each pending ask's in the
    /// order the scheduler tries the asks (absent when there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reason: Vec<ReasonDto>,
}

/// One rule as it bears on the application or one of its asks.
///
/// Only the fields that rule has numbers for are present.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReasonDto {
    /// `APPLICATION` or `ASK`.
    pub scope: String,
    /// The rule, stable for scripts (`QUEUE_MAX_RESOURCES`, ...).
    pub code: String,
    /// True when this rule alone holds the app (or the ask) back now;
    /// false for context.
    pub blocking: bool,
    /// The reason as a sentence.
    pub message: String,
    /// What would change it.
    pub remedy: String,
    /// The ask's request priority (`ASK`), or the reservation's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// The ask's container size (`ASK`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability: Option<ResourceDto>,
    /// Containers the ask still wants (`ASK`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub containers: Option<u32>,
    /// The ask is the application master's container (`ASK`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub am: Option<bool>,
    /// The priority of the app's own ask tried first on the nodes with room.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub higher_priority: Option<i32>,
    /// The queue the rule is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// The user whose running-app limit it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The user's limit is `userMaxAppsDefault`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_default: Option<bool>,
    /// Runnable applications counted against the running-app limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<u32>,
    /// The running-app limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_running: Option<u32>,
    /// The app's place, from 1, among the apps waiting on the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// Apps waiting on the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<u32>,
    /// What is in use: the queue's usage, its AMs' usage, or the app's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used: Option<ResourceDto>,
    /// The limit: the queue's max share, its AM limit, its
    /// `maxContainerAllocation`, or the largest node's capability.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<ResourceDto>,
    /// What one more container (or the AM) needs, or what is reserved or set aside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked: Option<ResourceDto>,
    /// The app's (or for the AM share the queue's) instantaneous fair share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fair_share: Option<ResourceDto>,
    /// Free in the whole cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free: Option<ResourceDto>,
    /// The queue's `maxAMShare`.
    #[serde(rename = "maxAMShare", skip_serializing_if = "Option::is_none")]
    pub max_am_share: Option<f64>,
    /// The app's usage is below its fair share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub below_fair_share: Option<bool>,
    /// The app may reserve a node that lacks room for the container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub may_reserve: Option<bool>,
    /// The node the rule is about (a reservation, room set aside, the AM's, the largest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The reserved node has room for the container now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fits_now: Option<bool>,
    /// The reservation still serves the app (else it is dropped at the node's next heartbeat).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// Delay scheduling: the level allowed now (`NONE` before the first offer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_locality: Option<String>,
    /// Delay scheduling: the level at the next offer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_locality: Option<String>,
    /// Delay scheduling: offers passed over since the level last rose.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opportunities: Option<u64>,
    /// Delay scheduling: offers past which the level rises (threshold × nodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opportunity_threshold: Option<f64>,
    /// Delay scheduling: milliseconds waited at this level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    /// Delay scheduling: the wait after which the level rises.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// What the application master blacklisted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blacklist: Vec<String>,
    /// Nodes, hosts or racks the rule names, each with how it stands (at
    /// most five; `locationsTotal` counts them all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub location: Vec<LocationDto>,
    /// How many locations the rule concerns, when more than are listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations_total: Option<u32>,
}

/// A node, host or rack a reason names.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LocationDto {
    /// A node id (`host:port`), or a host or rack as the ask names it.
    pub name: String,
    /// `NODE`, `HOST` or `RACK`.
    #[serde(rename = "type")]
    pub kind: String,
    /// How it stands: a node's state (`DECOMMISSIONING`, `UNHEALTHY`), the
    /// locality it gives (`NODE_LOCAL`, `RACK_LOCAL`, `OFF_SWITCH`), or
    /// `ROOM`, `FULL`, `WAITING`, `RESERVED`, `BLACKLISTED`, `TOO_SMALL`,
    /// `OUT_OF_SERVICE`, `UNKNOWN`, `NONE_NAMED`.
    pub state: String,
    /// The application a node is reserved for (`RESERVED`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
}

/// YARN's name of a locality level (its `NodeType`).
pub fn locality_name(locality: Locality) -> &'static str {
    match locality {
        Locality::NodeLocal => "NODE_LOCAL",
        Locality::RackLocal => "RACK_LOCAL",
        Locality::OffSwitch => "OFF_SWITCH",
    }
}

impl AppExplanationDto {
    /// The wire form of an explanation.
    pub fn from_core(ex: &AppExplanation) -> AppExplanationDto {
        let mut reason: Vec<ReasonDto> = ex.reasons.iter().map(|r| reason_dto(r, None)).collect();
        for ask in &ex.asks {
            reason.extend(ask.reasons.iter().map(|r| reason_dto(r, Some(ask))));
        }
        AppExplanationDto {
            app_id: ex.app.to_string(),
            queue: ex.queue.to_string(),
            state: ex.state.yarn_name().to_owned(),
            final_status: final_status_name(ex.final_status).to_owned(),
            outlook: ex.outlook.name().to_owned(),
            summary: ex.summary.clone(),
            reason,
        }
    }
}

fn res(r: weft_model::Resource) -> Option<ResourceDto> {
    Some(ResourceDto::from_resource(r))
}

fn node_locations<T>(
    sample: &Sample<T>,
    mut each: impl FnMut(&T) -> LocationDto,
) -> (Vec<LocationDto>, Option<u32>) {
    let shown: Vec<LocationDto> = sample.shown.iter().map(&mut each).collect();
    let total = (sample.total as usize > shown.len()).then_some(sample.total);
    (shown, total)
}

fn node(id: &NodeId, state: &str) -> LocationDto {
    LocationDto {
        name: id.to_string(),
        kind: "NODE".to_owned(),
        state: state.to_owned(),
        app: None,
    }
}

fn named(l: &LocationStatus) -> LocationDto {
    LocationDto {
        name: l.name.clone(),
        kind: if l.is_rack { "RACK" } else { "HOST" }.to_owned(),
        state: l.state.name().to_owned(),
        app: None,
    }
}

fn reason_dto(r: &Reason, ask: Option<&AskExplanation>) -> ReasonDto {
    let mut d = ReasonDto {
        scope: if ask.is_some() { "ASK" } else { "APPLICATION" }.to_owned(),
        code: r.kind.code().to_owned(),
        blocking: r.blocking,
        message: r.kind.to_string(),
        remedy: r.kind.remedy(),
        ..ReasonDto::default()
    };
    if let Some(ask) = ask {
        d.priority = Some(ask.priority.0);
        d.capability = res(ask.capability);
        d.containers = Some(ask.containers);
        d.am = Some(ask.is_am);
    }
    match &r.kind {
        ReasonKind::RunningAppLimit {
            limit,
            running,
            max,
            position,
            waiting,
        } => {
            match limit {
                RunningAppLimit::Queue(queue) => d.queue = Some(queue.to_string()),
                RunningAppLimit::User { user, from_default } => {
                    d.user = Some(user.clone());
                    d.from_default = Some(*from_default);
                }
            }
            d.running = Some(*running);
            d.max_running = Some(*max);
            d.position = Some(*position);
            d.waiting = Some(*waiting);
        }
        ReasonKind::NotYetWoken
        | ReasonKind::Finishing
        | ReasonKind::NoNodes
        | ReasonKind::AwaitingAmRegistration { am_node: None } => {}
        ReasonKind::AwaitingAmRegistration { am_node: Some(n) } => d.node = Some(n.to_string()),
        ReasonKind::AmShare {
            queue,
            am_usage,
            am_resource,
            limit,
            max_am_share,
            fair_share,
        } => {
            d.queue = Some(queue.to_string());
            d.used = res(*am_usage);
            d.asked = res(*am_resource);
            d.limit = res(*limit);
            d.max_am_share = Some(*max_am_share);
            d.fair_share = res(*fair_share);
        }
        ReasonKind::Blacklist { entries, nodes } => {
            d.blacklist = entries.clone();
            (d.location, d.locations_total) = node_locations(nodes, |n| node(n, "BLACKLISTED"));
        }
        ReasonKind::NodesOutOfService { nodes } => {
            (d.location, d.locations_total) =
                node_locations(nodes, |(n, state)| node(n, state.yarn_name()));
        }
        ReasonKind::Reservation {
            node: n,
            priority,
            resource,
            fits_now,
            valid,
        } => {
            d.node = Some(n.to_string());
            d.priority = Some(priority.0);
            d.asked = res(*resource);
            d.fits_now = Some(*fits_now);
            d.valid = Some(*valid);
        }
        ReasonKind::RoomSetAside { node: n, resource } => {
            d.node = Some(n.to_string());
            d.asked = res(*resource);
        }
        ReasonKind::NeverFits { asked, largest } => {
            d.asked = res(*asked);
            if let Some((n, capability)) = largest {
                d.node = Some(n.to_string());
                d.limit = res(*capability);
            }
        }
        ReasonKind::AboveMaxContainerAllocation { queue, asked, max } => {
            d.queue = Some(queue.to_string());
            d.asked = res(*asked);
            d.limit = res(*max);
        }
        ReasonKind::QueueMaxResources {
            queue,
            usage,
            max,
            asked,
        } => {
            d.queue = Some(queue.to_string());
            d.used = res(*usage);
            d.limit = res(*max);
            d.asked = res(*asked);
        }
        ReasonKind::StrictLocality { locations } => {
            d.location = locations.iter().map(named).collect();
        }
        ReasonKind::LocalityDelay {
            allowed,
            next,
            opportunities,
            threshold,
            waited,
            delay,
            nodes_waiting,
        } => {
            d.allowed_locality = Some(allowed.map_or("NONE", locality_name).to_owned());
            d.next_locality = Some(locality_name(*next).to_owned());
            d.opportunities = Some(*opportunities);
            d.opportunity_threshold = *threshold;
            d.waited_ms = waited.map(|w| w.as_millis());
            d.delay_ms = delay.map(|w| w.as_millis());
            (d.location, d.locations_total) = node_locations(nodes_waiting, |n| node(n, "WAITING"));
        }
        ReasonKind::HigherPriorityFirst { priority, nodes } => {
            d.higher_priority = Some(priority.0);
            (d.location, d.locations_total) = node_locations(nodes, |n| node(n, "ROOM"));
        }
        ReasonKind::ReservedByOthers { nodes } => {
            (d.location, d.locations_total) = node_locations(nodes, |(n, app)| LocationDto {
                app: Some(app.to_string()),
                ..node(n, "RESERVED")
            });
        }
        ReasonKind::BlacklistedRoom { nodes } => {
            (d.location, d.locations_total) = node_locations(nodes, |n| node(n, "BLACKLISTED"));
        }
        ReasonKind::NoRoom {
            free,
            usage,
            fair_share,
            below_fair_share,
            may_reserve,
        } => {
            d.free = res(*free);
            d.used = res(*usage);
            d.fair_share = res(*fair_share);
            d.below_fair_share = Some(*below_fair_share);
            d.may_reserve = Some(*may_reserve);
        }
        ReasonKind::Room { nodes } => {
            (d.location, d.locations_total) =
                node_locations(nodes, |(n, locality)| node(n, locality_name(*locality)));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_beyond_its_shown_nodes_says_how_many_in_all() {
        let mut sample: Sample<NodeId> = Sample {
            shown: (1..=5)
                .map(|i| NodeId::new(&format!("h{i}"), 1).unwrap())
                .collect(),
            total: 12,
        };
        let (shown, total) = node_locations(&sample, |n| node(n, "ROOM"));
        assert_eq!(shown.len(), 5);
        assert_eq!(total, Some(12));
        sample.total = 5;
        assert_eq!(node_locations(&sample, |n| node(n, "ROOM")).1, None);
    }
}
