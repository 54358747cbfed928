//! The "Why it is waiting" section of an application's page: the
//! explanation `GET /ws/v1/cluster/apps/{appId}/explain` answers with, as a
//! summary line and a table of reasons, each saying what it applies to,
//! whether it holds the app back, why, and what would change it.
//!
//! Finding the reasons is the core's, naming them the DTO's; this module
//! only lays the DTO out, escaping every word as `html` does.

use crate::dto::explain::{AppExplanationDto, ReasonDto};
use crate::http::ui::format;
use crate::http::ui::html::Html;

/// The section's heading.
pub(super) const HEADING: &str = "Why it is waiting";

/// The section for an application that has not ended.
pub(super) fn section(h: &mut Html, ex: &AppExplanationDto) {
    h.text_el("h2", &[("id", "why")], HEADING);
    h.text_el("p", &[("class", "summary")], &ex.summary);
    if ex.reason.is_empty() {
        return;
    }
    h.el("table", &[("class", "reasons")], |h| {
        h.el("tr", &[], |h| {
            for label in ["Applies to", "Holds it back", "Why", "What would change it"] {
                h.text_el("th", &[], label);
            }
        });
        for r in &ex.reason {
            h.el("tr", &[], |h| {
                h.text_el("td", &[], applies_to(r));
                h.text_el("td", &[], if r.blocking { "yes" } else { "no" });
                h.text_el("td", &[], &r.message);
                h.text_el("td", &[], &r.remedy);
            });
        }
    });
}

/// `the application`, `its AM container (1024 MB, 1 vcore)` or
/// `priority 1: 2 × 6.0 GB, 1 vcore`.
fn applies_to(r: &ReasonDto) -> String {
    if r.scope != "ASK" {
        return "the application".to_owned();
    }
    let size = format::resource(r.capability.unwrap_or_default());
    if r.am == Some(true) {
        format!("its AM container ({size})")
    } else {
        format!(
            "priority {}: {} \u{d7} {size}",
            r.priority.unwrap_or_default(),
            format::count(u64::from(r.containers.unwrap_or_default()))
        )
    }
}
