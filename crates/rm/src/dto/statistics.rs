//! The `appstatistics` answer: how many applications the RM remembers in
//! each state, of one type or of any, in Hadoop's `appStatInfo` shape.
//!
//! The query is read by the `apps` list's own parser (`AppsQuery`), so a
//! state is spelled and refused alike on both paths; what only this
//! resource adds is Hadoop's rule of at most one application type. Who may
//! ask is the router's business: Hadoop counts every app for any caller,
//! and so does this.

use serde::{Deserialize, Serialize};

use crate::dto::InvalidField;
use crate::dto::apps::{APP_STATES, AppsQuery};
use crate::view::View;

/// The type an item counts when no type was asked for: every type.
pub const ANY_TYPE: &str = "*";

/// `{"appStatInfo":{"statItem":[...]}}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppStatisticsDto {
    /// One item per state asked for, in YARN's order of states.
    #[serde(rename = "statItem", default)]
    pub stat_item: Vec<StatItemDto>,
}

/// One count, Hadoop's `StatisticsItemInfo`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatItemDto {
    /// YARN's state name (`RUNNING`).
    pub state: String,
    /// The type counted, in lower case as Hadoop writes it, or `*` for any.
    #[serde(rename = "type")]
    pub app_type: String,
    /// How many apps are in `state` with that type.
    pub count: u64,
}

impl AppStatisticsDto {
    /// The counts over `view` for the query string's `pairs`.
    ///
    /// As in Hadoop: `states` and `applicationTypes` may be repeated and
    /// comma-separated, and are read ignoring case; no state means every
    /// state; no type (or `*`) means any type; more than one distinct type
    /// is refused; every state asked for gets an item, zero included.
    /// Other parameters are ignored, as Hadoop ignores them here.
    pub fn count(
        view: &View,
        pairs: &[(String, String)],
    ) -> Result<AppStatisticsDto, InvalidField> {
        let given = AppsQuery::from_pairs(pairs);
        let filter = AppsQuery {
            states: given.states,
            application_types: given.application_types,
            ..AppsQuery::default()
        }
        .to_filter()?;
        let wanted = match filter.types().len() {
            0 => None,
            1 => filter.types().first().filter(|t| *t != ANY_TYPE),
            n => {
                let names: Vec<String> = filter
                    .types()
                    .iter()
                    .map(|t| t.to_ascii_lowercase())
                    .collect();
                return Err(InvalidField::new(
                    "applicationTypes",
                    format!(
                        "{n} application types given ({}); statistics count one type at a time, \
                         or any type when none (or {ANY_TYPE}) is given",
                        names.join(", ")
                    ),
                ));
            }
        };
        let label = wanted.map_or_else(|| ANY_TYPE.to_owned(), |t| t.to_ascii_lowercase());
        let stat_item = APP_STATES
            .iter()
            .filter(|s| filter.states().is_empty() || filter.states().contains(**s))
            .map(|&state| StatItemDto {
                state: state.to_owned(),
                app_type: label.clone(),
                count: view
                    .apps
                    .values()
                    .map(|a| &a.report.record)
                    .filter(|rec| rec.state.yarn_name() == state)
                    .filter(|rec| {
                        wanted.is_none_or(|t| rec.app_type.trim().eq_ignore_ascii_case(t))
                    })
                    .count() as u64,
            })
            .collect();
        Ok(AppStatisticsDto { stat_item })
    }
}
