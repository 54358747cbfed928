//! Hadoop's `/conf` (its `ConfServlet`: the configuration the RM runs with,
//! in Hadoop's XML or JSON) and `/isActive` (its `IsActiveServlet`, which
//! load balancers ask for the active RM).
//!
//! What is listed, and which values are redacted, is `config::listing`'s;
//! this module chooses the format, checks who may read, and writes the
//! answer in Hadoop's shapes. Weft has no high availability, so `/isActive`
//! always answers as an active RM does.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::config::listing::ListedProperty;
use crate::http::codec::{Caller, Params};
use crate::http::error::ApiError;
use crate::http::{ApiState, jmx};

/// Hadoop's body for an active RM.
pub(crate) const ACTIVE: &str = "I am Active!";

/// `GET /conf[?name=P][&format=xml|json]`: every property the site files
/// set, or only `P`, in Hadoop's XML (the default) or JSON.
pub(super) async fn conf(
    State(s): State<ApiState>,
    headers: HeaderMap,
    caller: Caller,
    Params(pairs): Params<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    instrumentation_access(&s, &caller, "read the configuration")?;
    let query = ConfQuery::parse(&pairs)?;
    let format = query
        .format
        .unwrap_or_else(|| ConfFormat::from_headers(&headers));
    let listing = &s.0.conf;
    let body = match query.name.as_deref().filter(|n| !n.is_empty()) {
        None => match format {
            ConfFormat::Xml => xml(listing.properties().iter()),
            ConfFormat::Json => json(&AllDto {
                properties: listing.properties().iter().map(PropertyDto::of).collect(),
            })?,
        },
        Some(name) => {
            let Some(p) = listing.get(name) else {
                // Hadoop's message (`Configuration.writeXml`), and its 404.
                return Err(ApiError::NotFound(format!("Property {name} not found")));
            };
            match format {
                ConfFormat::Xml => xml(std::iter::once(p)),
                ConfFormat::Json => json(&OneDto {
                    property: PropertyDto::of(p),
                })?,
            }
        }
    };
    Ok(([(header::CONTENT_TYPE, format.content_type())], body).into_response())
}

/// Who may read the RM's instrumentation (`/conf`, `/jmx`): the rule every
/// daemon shares (`jmx::instrumentation_access`), with the RM's setting and
/// administrators in force.
pub(super) fn instrumentation_access(
    s: &ApiState,
    caller: &Caller,
    what: &str,
) -> Result<(), ApiError> {
    jmx::instrumentation_access(
        s.0.service.instrumentation_requires_admin,
        caller.0.as_ref(),
        |who| s.access().is_admin(who),
        what,
    )
}

/// `GET /isActive`: 200 with Hadoop's text, and the connection closed, as
/// Hadoop closes it so that a load balancer's probes hold no connection.
pub(super) async fn is_active() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CONNECTION, "close"),
        ],
        ACTIVE,
    )
        .into_response()
}

/// The two formats of Hadoop's `ConfServlet`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConfFormat {
    Xml,
    Json,
}

impl ConfFormat {
    /// Hadoop 3's rule: JSON when `Accept` mentions json anywhere, else XML
    /// (not the REST API's rule, whose default is JSON).
    fn from_headers(headers: &HeaderMap) -> ConfFormat {
        let json = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("json"));
        if json {
            ConfFormat::Json
        } else {
            ConfFormat::Xml
        }
    }

    /// Hadoop's content types.
    fn content_type(self) -> &'static str {
        match self {
            ConfFormat::Xml => "text/xml; charset=utf-8",
            ConfFormat::Json => "application/json; charset=utf-8",
        }
    }
}

/// The query: `name` (Hadoop's) and `format` (Hadoop 2's, which Hadoop 3
/// replaced by `Accept`; both are honoured, `format` first).
struct ConfQuery {
    name: Option<String>,
    format: Option<ConfFormat>,
}

impl ConfQuery {
    fn parse(pairs: &[(String, String)]) -> Result<ConfQuery, ApiError> {
        let mut query = ConfQuery {
            name: None,
            format: None,
        };
        for (key, value) in pairs {
            match key.as_str() {
                "name" => query.name = Some(value.trim().to_owned()),
                "format" => {
                    query.format = Some(match value.as_str() {
                        "xml" => ConfFormat::Xml,
                        "json" => ConfFormat::Json,
                        _ => {
                            return Err(ApiError::BadRequest(format!(
                                "Bad format: {value} (format is xml or json)"
                            )));
                        }
                    });
                }
                // `user.name` is the caller's; anything else is left alone,
                // as Hadoop's servlet leaves it.
                _ => {}
            }
        }
        Ok(query)
    }
}

/// Hadoop's `writeXml`: the value as written, whether it is final, and the
/// file it came from.
fn xml<'a>(properties: impl Iterator<Item = &'a ListedProperty>) -> Vec<u8> {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?><configuration>\n",
    );
    for p in properties {
        let _ = writeln!(
            out,
            "<property><name>{}</name><value>{}</value><final>{}</final><source>{}</source></property>",
            quick_xml::escape::escape(p.name.as_str()),
            quick_xml::escape::escape(p.raw_value.as_str()),
            p.is_final,
            quick_xml::escape::escape(p.source),
        );
    }
    out.push_str("</configuration>\n");
    out.into_bytes()
}

fn json<T: Serialize>(value: &T) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(value)
        .map_err(|e| ApiError::Internal(format!("cannot encode the configuration: {e}")))
}

/// Hadoop's `dumpConfiguration`.
#[derive(Serialize)]
struct AllDto<'a> {
    properties: Vec<PropertyDto<'a>>,
}

/// Hadoop's `dumpConfiguration` with a property name.
#[derive(Serialize)]
struct OneDto<'a> {
    property: PropertyDto<'a>,
}

/// One property as Hadoop's JSON has it: the value after substitution.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PropertyDto<'a> {
    key: &'a str,
    value: &'a str,
    is_final: bool,
    resource: &'a str,
}

impl<'a> PropertyDto<'a> {
    fn of(p: &'a ListedProperty) -> PropertyDto<'a> {
        PropertyDto {
            key: &p.name,
            value: &p.value,
            is_final: p.is_final,
            resource: p.source,
        }
    }
}
