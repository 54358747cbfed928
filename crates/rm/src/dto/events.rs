//! The decision log's line format: one JSON object per core `Event`, with
//! the wall-clock time it was decided and an `event` tag naming its kind
//! (seed 000's event log, as JSON lines).
//!
//! Writing the lines to a file is `event_log`'s job.

use serde_json::{Value, json};
use weft_core::Event;
use weft_model::{ContainerId, Resource, Time};

use crate::dto::EpochMillis;
use crate::dto::am::locality_name;
use crate::dto::nm::stop_reason_name;

/// A resource as the log writes one.
fn resource(r: &Resource) -> Value {
    json!({ "memoryMB": r.memory_mb(), "vCores": r.vcores() })
}

/// One event as a JSON object: `at` is when it was decided and
/// `epoch_origin` the wall-clock time of the core's time zero, for the
/// times an event carries (deadlines, expiries). Every kind the core has
/// today has its own shape.
pub fn event_json(at: EpochMillis, epoch_origin: EpochMillis, event: &Event) -> Value {
    let wall = |t: &Time| epoch_origin + t.as_millis();
    match event {
        Event::NodeAdded {
            node,
            rack,
            capability,
        } => json!({
            "time": at, "event": "NodeAdded", "node": node.to_string(), "rack": rack,
            "memoryMB": capability.memory_mb(), "vCores": capability.vcores(),
        }),
        Event::NodeResized {
            node,
            capability,
            offering,
        } => json!({
            "time": at, "event": "NodeResized", "node": node.to_string(),
            "memoryMB": capability.memory_mb(), "vCores": capability.vcores(),
            "offeringMemoryMB": offering.memory_mb(), "offeringVCores": offering.vcores(),
        }),
        Event::NodeStateChanged {
            node,
            state,
            reason,
        } => json!({
            "time": at, "event": "NodeStateChanged", "node": node.to_string(),
            "state": state.yarn_name(), "reason": reason,
        }),
        Event::AppStateChanged {
            app,
            queue,
            state,
            diagnostics,
        } => json!({
            "time": at, "event": "AppStateChanged", "app": app.to_string(),
            "queue": queue.as_str(), "state": state.yarn_name(),
            "detail": state.to_string(), "diagnostics": diagnostics,
        }),
        Event::ContainerAllocated {
            container,
            node,
            queue,
            resource,
            priority,
            locality,
            is_am,
        } => json!({
            "time": at, "event": "ContainerAllocated", "container": container.to_string(),
            "node": node.to_string(), "queue": queue.as_str(),
            "memoryMB": resource.memory_mb(), "vCores": resource.vcores(),
            "priority": priority.0, "locality": locality_name(*locality), "isAM": is_am,
        }),
        Event::ContainerReserved {
            app,
            node,
            resource,
            priority,
        } => json!({
            "time": at, "event": "ContainerReserved", "app": app.to_string(),
            "node": node.to_string(), "memoryMB": resource.memory_mb(),
            "vCores": resource.vcores(), "priority": priority.0,
        }),
        Event::ReservationReleased { app, node, reason } => json!({
            "time": at, "event": "ReservationReleased", "app": app.to_string(),
            "node": node.to_string(), "reason": reason,
        }),
        Event::ContainerCompleted {
            container,
            node,
            queue,
            resource,
            exit_status,
            diagnostics,
        } => json!({
            "time": at, "event": "ContainerCompleted", "container": container.to_string(),
            "node": node.to_string(), "queue": queue.as_str(),
            "memoryMB": resource.memory_mb(), "vCores": resource.vcores(),
            "exitStatus": exit_status, "diagnostics": diagnostics,
        }),
        Event::ContainerStopOrdered {
            container,
            node,
            reason,
        } => json!({
            "time": at, "event": "ContainerStopOrdered", "container": container.to_string(),
            "node": node.to_string(), "reason": stop_reason_name(*reason),
        }),
        Event::AttemptFinished {
            app,
            outcome,
            diagnostics,
        } => json!({
            "time": at, "event": "AttemptFinished", "app": app.to_string(),
            "outcome": crate::dto::apps::final_status_name(*outcome),
            "diagnostics": diagnostics,
        }),
        Event::QueuesChanged { created, removed } => json!({
            "time": at, "event": "QueuesChanged",
            "created": created.iter().map(|q| q.as_str()).collect::<Vec<_>>(),
            "removed": removed.iter().map(|q| q.as_str()).collect::<Vec<_>>(),
        }),
        Event::Updated { .. } => json!({ "time": at, "event": "Updated" }),
        Event::PlacementFailed { app, error } => json!({
            "time": at, "event": "PlacementFailed", "app": app.to_string(),
            "error": error.to_string(),
        }),
        Event::Starved {
            app,
            queue,
            fair_share_starvation,
            min_share_starvation,
            victims,
            dry_run,
        } => json!({
            "time": at, "event": "Starved", "app": app.to_string(), "queue": queue.as_str(),
            "fairShareStarvation": resource(fair_share_starvation),
            "minShareStarvation": resource(min_share_starvation),
            "victims": victims.iter().map(|(c, r): &(ContainerId, Resource)| json!({
                "container": c.to_string(), "memoryMB": r.memory_mb(), "vCores": r.vcores(),
            })).collect::<Vec<_>>(),
            "dryRun": dry_run,
        }),
        Event::PreemptionWarned {
            container,
            app,
            for_app,
            resource,
            deadline,
        } => json!({
            "time": at, "event": "PreemptionWarned", "container": container.to_string(),
            "app": app.to_string(), "forApp": for_app.to_string(),
            "memoryMB": resource.memory_mb(), "vCores": resource.vcores(),
            "deadline": wall(deadline),
        }),
        Event::PreemptionKilled {
            container,
            app,
            for_app,
        } => json!({
            "time": at, "event": "PreemptionKilled", "container": container.to_string(),
            "app": app.to_string(), "forApp": for_app.to_string(),
        }),
        Event::PreemptionReleased { container, app } => json!({
            "time": at, "event": "PreemptionReleased", "container": container.to_string(),
            "app": app.to_string(),
        }),
        Event::PreemptionWithdrawn {
            container,
            app,
            reason,
        } => json!({
            "time": at, "event": "PreemptionWithdrawn", "container": container.to_string(),
            "app": app.to_string(), "reason": reason,
        }),
        Event::PreemptionError { error } => json!({
            "time": at, "event": "PreemptionError", "error": error,
        }),
        Event::AppLifetimeExpired { app, queue, expiry } => json!({
            "time": at, "event": "AppLifetimeExpired", "app": app.to_string(),
            "queue": queue.as_str(), "expiry": wall(expiry),
        }),
        Event::AppLifetimeChanged {
            app,
            previous,
            expiry,
        } => json!({
            "time": at, "event": "AppLifetimeChanged", "app": app.to_string(),
            "previous": previous.as_ref().map(wall), "expiry": wall(expiry),
        }),
        // `Event` is non-exhaustive: a kind added to the core reaches the
        // log this way until it gets its own shape here.
        other => json!({ "time": at, "event": "Other", "debug": format!("{other:?}") }),
    }
}

#[cfg(test)]
mod tests {
    use weft_model::{AppId, QueuePath};

    use super::*;

    #[test]
    fn app_state_changes_render_as_one_line() {
        let e = Event::AppStateChanged {
            app: AppId::new(9, 3),
            queue: QueuePath::parse("root.a").unwrap(),
            state: weft_core::AppState::WaitingForLimit,
            diagnostics: "waiting".into(),
        };
        assert_eq!(
            event_json(1_000, 0, &e).to_string(),
            r#"{"app":"application_9_0003","detail":"waiting for a running-app limit","diagnostics":"waiting","event":"AppStateChanged","queue":"root.a","state":"ACCEPTED","time":1000}"#
        );
    }

    #[test]
    fn deadlines_and_expiries_are_wall_clock_times() {
        let app = AppId::new(9, 3);
        let container: ContainerId = "container_9_0003_01_000002".parse().unwrap();
        let warned = Event::PreemptionWarned {
            container,
            app,
            for_app: AppId::new(9, 4),
            resource: Resource::new(1024, 1),
            deadline: Time::from_millis(15_000),
        };
        assert_eq!(
            event_json(1_000, 500, &warned).to_string(),
            r#"{"app":"application_9_0003","container":"container_9_0003_01_000002","deadline":15500,"event":"PreemptionWarned","forApp":"application_9_0004","memoryMB":1024,"time":1000,"vCores":1}"#
        );
        let changed = Event::AppLifetimeChanged {
            app,
            previous: None,
            expiry: Time::from_millis(60_000),
        };
        assert_eq!(
            event_json(1_000, 500, &changed).to_string(),
            r#"{"app":"application_9_0003","event":"AppLifetimeChanged","expiry":60500,"previous":null,"time":1000}"#
        );
    }
}
