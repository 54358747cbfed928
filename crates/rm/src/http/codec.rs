//! Bodies in and out: reading a JSON or XML request body within the size
//! limit (the `Payload` extractor), choosing JSON or XML for an answer from
//! `Accept` (`Format`), writing Hadoop's wrapped shapes (`Wire`), the query
//! string (`Params`) and the caller's name (`UserName`) and identity (`Caller`).
//!
//! Every rejection becomes an `ApiError`, so a malformed request always gets
//! Hadoop's `RemoteException` body, never a framework's default text.

use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::http::ApiState;
use crate::http::error::ApiError;

/// The representation a client asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `application/json` (the default).
    Json,
    /// `application/xml` or `text/xml`.
    Xml,
}

impl Format {
    /// The first of JSON and XML that `Accept` names; JSON when it names neither.
    pub fn from_headers(headers: &HeaderMap) -> Format {
        let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
            return Format::Json;
        };
        for media in accept.split(',') {
            let media = media.split(';').next().unwrap_or("").trim();
            if media.eq_ignore_ascii_case("application/json") {
                return Format::Json;
            }
            if media.eq_ignore_ascii_case("application/xml")
                || media.eq_ignore_ascii_case("text/xml")
            {
                return Format::Xml;
            }
        }
        Format::Json
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Format {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Format, ApiError> {
        Ok(Format::from_headers(&parts.headers))
    }
}

/// An answer in Hadoop's shape: `{"<root>": value}` in JSON, `<root>...</root>` in XML.
pub struct Wire<T> {
    /// The representation.
    pub format: Format,
    /// The wrapping element's name (`clusterInfo`, `apps`, ...).
    pub root: &'static str,
    /// The value.
    pub value: T,
    /// The status (200 unless said otherwise).
    pub status: StatusCode,
    /// False for the few answers Hadoop writes without the wrapping object in JSON.
    pub wrap_json: bool,
}

impl<T: Serialize> Wire<T> {
    /// A 200 answer.
    pub fn ok(format: Format, root: &'static str, value: T) -> Wire<T> {
        Wire {
            format,
            root,
            value,
            status: StatusCode::OK,
            wrap_json: true,
        }
    }

    /// A 200 answer that is not wrapped in JSON (XML still uses `root`).
    pub fn unwrapped(format: Format, root: &'static str, value: T) -> Wire<T> {
        Wire {
            wrap_json: false,
            ..Wire::ok(format, root, value)
        }
    }
}

/// Serializes `value` wrapped in `root`, in `format`.
pub fn encode<T: Serialize>(
    format: Format,
    root: &str,
    value: &T,
) -> Result<(Vec<u8>, &'static str), String> {
    match format {
        Format::Json if root.is_empty() => serde_json::to_vec(value)
            .map(|v| (v, "application/json"))
            .map_err(|e| e.to_string()),
        Format::Json => {
            let mut out = Vec::with_capacity(256);
            out.extend_from_slice(b"{\"");
            out.extend_from_slice(root.as_bytes());
            out.extend_from_slice(b"\":");
            serde_json::to_writer(&mut out, value).map_err(|e| e.to_string())?;
            out.push(b'}');
            Ok((out, "application/json"))
        }
        Format::Xml => {
            let mut text =
                String::from(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#);
            let body =
                quick_xml::se::to_string_with_root(root, value).map_err(|e| e.to_string())?;
            text.push_str(&body);
            Ok((text.into_bytes(), "application/xml"))
        }
    }
}

impl<T: Serialize> IntoResponse for Wire<T> {
    fn into_response(self) -> Response {
        let root = if self.wrap_json || self.format == Format::Xml {
            self.root
        } else {
            ""
        };
        match encode(self.format, root, &self.value) {
            Ok((body, content_type)) => {
                (self.status, [(header::CONTENT_TYPE, content_type)], body).into_response()
            }
            Err(e) => {
                ApiError::Internal(format!("cannot encode {}: {e}", self.root)).into_response()
            }
        }
    }
}

/// A request body, JSON or XML by `Content-Type`, read within the size limit.
pub struct Payload<T>(pub T);

/// A request body that may be absent (an empty body reads as `T::default()`).
pub struct OptionalPayload<T>(pub T);

enum BodyFormat {
    Json,
    Xml,
}

fn body_format(headers: &HeaderMap) -> Result<BodyFormat, ApiError> {
    let Some(ct) = headers.get(header::CONTENT_TYPE) else {
        return Err(ApiError::UnsupportedMediaType(
            "the request has a body but no Content-Type; send application/json or application/xml"
                .to_owned(),
        ));
    };
    let ct = ct.to_str().unwrap_or("");
    let media = ct.split(';').next().unwrap_or("").trim();
    if media.eq_ignore_ascii_case("application/json") {
        Ok(BodyFormat::Json)
    } else if media.eq_ignore_ascii_case("application/xml")
        || media.eq_ignore_ascii_case("text/xml")
    {
        Ok(BodyFormat::Xml)
    } else {
        Err(ApiError::UnsupportedMediaType(format!(
            "Content-Type {ct:?} is not supported; send application/json or application/xml"
        )))
    }
}

async fn read_body(
    state: &ApiState,
    headers: &HeaderMap,
    body: Body,
) -> Result<bytes::Bytes, ApiError> {
    let limit = state.max_request_bytes();
    let too_large = || {
        ApiError::PayloadTooLarge(format!(
            "the request body is larger than {limit} bytes (weft.rm.max-request-bytes)"
        ))
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Err(e) => Err(ApiError::BadRequest(format!(
            "cannot read the request body: {e}"
        ))),
    }
}

fn decode<T: DeserializeOwned>(format: BodyFormat, bytes: &[u8]) -> Result<T, ApiError> {
    match format {
        BodyFormat::Json => serde_json::from_slice(bytes).map_err(|e| {
            let what = if e.is_data() {
                "the JSON body does not match the expected fields"
            } else {
                "the body is not valid JSON"
            };
            ApiError::BadRequest(format!("{what}: {e}"))
        }),
        BodyFormat::Xml => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| ApiError::BadRequest("the XML body is not valid UTF-8".to_owned()))?;
            check_xml_depth(text)?;
            quick_xml::de::from_str(text)
                .map_err(|e| ApiError::BadRequest(format!("the XML body is not valid: {e}")))
        }
    }
}

/// How deep XML elements may nest: serde_json's own limit for JSON.
const MAX_XML_DEPTH: usize = 128;

/// Refuses XML nested deeper than `MAX_XML_DEPTH`, counting with a flat
/// loop before any decoding. The decoder recurses once per level into
/// free-form values (`am-container-spec`), so a body of a few hundred
/// kilobytes of `<a>` would otherwise overflow the stack and abort the RM.
/// Malformed XML passes here and is reported by the decoder.
fn check_xml_depth(text: &str) -> Result<(), ApiError> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut depth = 0usize;
    loop {
        // Where the next event starts, to point at the offending element.
        let at = usize::try_from(reader.buffer_position()).unwrap_or(text.len());
        match reader.read_event() {
            Ok(quick_xml::events::Event::Start(_)) => {
                depth += 1;
                if depth > MAX_XML_DEPTH {
                    let before = text.get(..at).unwrap_or(text);
                    let line = before.matches('\n').count() + 1;
                    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                    return Err(ApiError::BadRequest(format!(
                        "the XML body nests elements more than {MAX_XML_DEPTH} deep (the element at line {line}, column {column})"
                    )));
                }
            }
            Ok(quick_xml::events::Event::End(_)) => depth = depth.saturating_sub(1),
            Ok(quick_xml::events::Event::Eof) | Err(_) => return Ok(()),
            Ok(_) => {}
        }
    }
}

impl<T: DeserializeOwned> FromRequest<ApiState> for Payload<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &ApiState) -> Result<Payload<T>, ApiError> {
        let (parts, body) = req.into_parts();
        let bytes = read_body(state, &parts.headers, body).await?;
        // A missing body is said to be missing, not to lack a type.
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::BadRequest("the request body is empty".to_owned()));
        }
        let format = body_format(&parts.headers)?;
        decode(format, &bytes).map(Payload)
    }
}

impl<T: DeserializeOwned + Default> FromRequest<ApiState> for OptionalPayload<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &ApiState) -> Result<OptionalPayload<T>, ApiError> {
        let (parts, body) = req.into_parts();
        let bytes = read_body(state, &parts.headers, body).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalPayload(T::default()));
        }
        let format = body_format(&parts.headers)?;
        decode(format, &bytes).map(OptionalPayload)
    }
}

/// The query string, with rejections as `ApiError`.
pub struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Params<T>, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| Params(v))
            .map_err(|e| ApiError::BadRequest(format!("invalid query string: {}", e.body_text())))
    }
}

#[derive(serde::Deserialize)]
struct UserNameQuery {
    #[serde(rename = "user.name")]
    user_name: Option<String>,
}

/// Who is calling: `?user.name=` (Hadoop's simple authentication) and the
/// groups the mapping in force gives that user (looked up here, where a
/// request may wait); `None` when anonymous.
pub struct Caller(pub Option<crate::access::Identity>);

/// Longest `user.name` taken: well past any Unix login or Kerberos principal.
const MAX_USER_NAME: usize = 256;

/// A user name goes into ACL checks, queue names (`user` placement rules),
/// diagnostics and log lines, so one that could forge a log line (a
/// newline or other control character) or swamp them is refused.
pub(crate) fn check_user_name(user: &str) -> Result<(), ApiError> {
    if user.len() > MAX_USER_NAME {
        return Err(ApiError::BadRequest(format!(
            "user.name is {} bytes long; at most {MAX_USER_NAME} are accepted",
            user.len()
        )));
    }
    if let Some(c) = user.chars().find(|c| c.is_control()) {
        return Err(ApiError::BadRequest(format!(
            "user.name {user:?} contains the control character {c:?}"
        )));
    }
    Ok(())
}

/// A caller that must be named; anonymous requests get 401, as Hadoop's write endpoints do.
pub struct NamedCaller(pub crate::access::Identity);

/// `?user.name=`, trimmed and checked as `Caller` checks it, on any
/// router: `None` when absent or empty. Which groups the user has is for
/// the handler to ask of its own mapping (`Caller` asks the RM's).
pub struct UserName(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for UserName {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<UserName, ApiError> {
        let Params(q) = Params::<UserNameQuery>::from_request_parts(parts, state).await?;
        let Some(user) = q.user_name.map(|u| u.trim().to_owned()) else {
            return Ok(UserName(None));
        };
        if user.is_empty() {
            return Ok(UserName(None));
        }
        check_user_name(&user)?;
        Ok(UserName(Some(user)))
    }
}

impl FromRequestParts<ApiState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Caller, ApiError> {
        match UserName::from_request_parts(parts, state).await? {
            UserName(Some(user)) => Ok(Caller(Some(state.identity(&user).await))),
            UserName(None) => Ok(Caller(None)),
        }
    }
}

impl FromRequestParts<ApiState> for NamedCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &ApiState,
    ) -> Result<NamedCaller, ApiError> {
        match Caller::from_request_parts(parts, state).await? {
            Caller(Some(id)) => Ok(NamedCaller(id)),
            Caller(None) => Err(ApiError::Unauthorized(
                "Unable to obtain user name, user not authenticated: add ?user.name=<user>"
                    .to_owned(),
            )),
        }
    }
}

/// `application/xml` when XML was asked for, for errors re-encoded by the middleware.
pub(crate) fn xml_content_type() -> HeaderValue {
    HeaderValue::from_static("application/xml")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn accept_picks_the_first_known_type() {
        assert_eq!(Format::from_headers(&HeaderMap::new()), Format::Json);
        assert_eq!(
            Format::from_headers(&accept("application/xml")),
            Format::Xml
        );
        assert_eq!(
            Format::from_headers(&accept("text/html, text/xml;q=0.9")),
            Format::Xml
        );
        assert_eq!(
            Format::from_headers(&accept("application/json, application/xml")),
            Format::Json
        );
        assert_eq!(Format::from_headers(&accept("*/*")), Format::Json);
    }

    #[derive(Serialize)]
    struct Inner {
        id: u32,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        item: Vec<String>,
    }

    #[test]
    fn wire_wraps_in_the_root_element() {
        let v = Inner {
            id: 3,
            item: vec!["a".into(), "b".into()],
        };
        let (json, _) = encode(Format::Json, "things", &v).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            r#"{"things":{"id":3,"item":["a","b"]}}"#
        );
        let (xml, ct) = encode(Format::Xml, "things", &v).unwrap();
        assert_eq!(ct, "application/xml");
        assert_eq!(
            String::from_utf8(xml).unwrap(),
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><things><id>3</id><item>a</item><item>b</item></things>"#
        );
    }
}
