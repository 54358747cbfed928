//! The decision log's line format: one JSON object per core `Event`, with
//! the wall-clock time it was decided and an `event` tag naming its kind
//! (seed 000's event log, as JSON lines).
//!
//! Writing the lines to a file is `event_log`'s job.

use serde_json::{Value, json};
use weft_core::Event;

use crate::dto::EpochMillis;
use crate::dto::am::locality_name;
use crate::dto::nm::stop_reason_name;

/// One event as a JSON object.
pub fn event_json(at: EpochMillis, event: &Event) -> Value {
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
        Event::AttemptFinished { app, outcome } => json!({
            "time": at, "event": "AttemptFinished", "app": app.to_string(),
            "outcome": crate::dto::apps::final_status_name(*outcome),
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
        // New kinds of decision reach the log before they get their own shape.
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
            event_json(1_000, &e).to_string(),
            r#"{"app":"application_9_0003","detail":"waiting for a running-app limit","diagnostics":"waiting","event":"AppStateChanged","queue":"root.a","state":"ACCEPTED","time":1000}"#
        );
    }
}
