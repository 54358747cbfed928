//! `ApiError`: every way a request can fail, each with its HTTP status and
//! Hadoop's `RemoteException` body; the one `IntoResponse` that decides both.
//!
//! Which domain error becomes which variant is decided here too (the
//! `From` impls); handlers only pick a different variant where Hadoop's
//! REST API does. Logging and the XML form of the body are the
//! `negotiate_errors` middleware's.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use weft_core::{AllocateError, AppError, LifetimeError, MoveError, NodeError, SubmitError};

use crate::actor::RmError;
use crate::dto::InvalidField;

/// A failed request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed or asks for something invalid (400).
    #[error("{0}")]
    BadRequest(String),
    /// No `user.name` where one is needed (401).
    #[error("{0}")]
    Unauthorized(String),
    /// The caller may not do this (403).
    #[error("{0}")]
    Forbidden(String),
    /// No such app, node, attempt or path (404).
    #[error("{0}")]
    NotFound(String),
    /// The path exists but not with this method (405).
    #[error("{0}")]
    MethodNotAllowed(String),
    /// The request conflicts with the current state, for example an
    /// out-of-sequence `responseId` (409).
    #[error("{0}")]
    Conflict(String),
    /// The body is larger than `weft.rm.max-request-bytes` (413).
    #[error("{0}")]
    PayloadTooLarge(String),
    /// The body is neither JSON nor XML, or says nothing about its type (415).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// More of an expensive request than the service serves a second (429).
    #[error("{0}")]
    TooManyRequests(String),
    /// The scheduler has stopped (the service is shutting down) (503).
    #[error("the resource manager is shutting down; retry against its replacement")]
    Unavailable,
    /// A bug in Weft (500); the detail is logged, not returned.
    #[error("internal error in the resource manager; its log has the details")]
    Internal(String),
}

/// Hadoop's error body: `{"RemoteException": {...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteException {
    /// The exception's short name (`BadRequestException`, ...).
    pub exception: String,
    /// What went wrong, for a person.
    pub message: String,
    /// The Java class Hadoop would name.
    pub java_class_name: String,
}

/// `{"RemoteException": ...}`, the JSON wrapper.
#[derive(Serialize, Deserialize)]
pub(crate) struct RemoteExceptionBody {
    #[serde(rename = "RemoteException")]
    pub(crate) remote_exception: RemoteException,
}

/// The detail of an internal error, kept on the response for the logging middleware.
#[derive(Clone, Debug)]
pub(crate) struct InternalDetail(pub(crate) String);

impl ApiError {
    /// The status code.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Hadoop's exception name and Java class for this error.
    fn exception(&self) -> (&'static str, &'static str) {
        match self {
            ApiError::BadRequest(_) => (
                "BadRequestException",
                "org.apache.hadoop.yarn.webapp.BadRequestException",
            ),
            ApiError::Unauthorized(_) => (
                "AuthorizationException",
                "org.apache.hadoop.security.authorize.AuthorizationException",
            ),
            ApiError::Forbidden(_) => (
                "ForbiddenException",
                "org.apache.hadoop.yarn.webapp.ForbiddenException",
            ),
            ApiError::NotFound(_) => (
                "NotFoundException",
                "org.apache.hadoop.yarn.webapp.NotFoundException",
            ),
            ApiError::MethodNotAllowed(_) => {
                ("NotAllowedException", "javax.ws.rs.NotAllowedException")
            }
            ApiError::Conflict(_) => (
                "YarnException",
                "org.apache.hadoop.yarn.exceptions.YarnException",
            ),
            ApiError::PayloadTooLarge(_) => (
                "WebApplicationException",
                "javax.ws.rs.WebApplicationException",
            ),
            ApiError::UnsupportedMediaType(_) => {
                ("NotSupportedException", "javax.ws.rs.NotSupportedException")
            }
            ApiError::TooManyRequests(_) => (
                "WebApplicationException",
                "javax.ws.rs.WebApplicationException",
            ),
            ApiError::Unavailable => (
                "ServiceUnavailableException",
                "javax.ws.rs.ServiceUnavailableException",
            ),
            ApiError::Internal(_) => (
                "WebApplicationException",
                "javax.ws.rs.WebApplicationException",
            ),
        }
    }

    /// The body Hadoop's clients parse.
    pub fn remote_exception(&self) -> RemoteException {
        let (exception, class) = self.exception();
        RemoteException {
            exception: exception.to_owned(),
            message: self.to_string(),
            java_class_name: class.to_owned(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let remote = self.remote_exception();
        let body = serde_json::to_vec(&RemoteExceptionBody {
            remote_exception: remote.clone(),
        })
        .unwrap_or_default();
        let mut res = (
            self.status(),
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        res.extensions_mut().insert(remote);
        if let ApiError::Internal(detail) = self {
            res.extensions_mut().insert(InternalDetail(detail));
        }
        res
    }
}

impl From<InvalidField> for ApiError {
    fn from(e: InvalidField) -> ApiError {
        ApiError::BadRequest(e.to_string())
    }
}

impl From<NodeError> for ApiError {
    fn from(e: NodeError) -> ApiError {
        match e {
            NodeError::NotRegistered(_) => ApiError::NotFound(e.to_string()),
            // Only a heartbeat meets this, and the actor answers it with
            // SHUTDOWN instead; should another call ever meet it, it is a
            // refusal, not a missing node.
            NodeError::Decommissioned(_) => ApiError::Forbidden(e.to_string()),
            NodeError::BadCapability { .. } => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> ApiError {
        match e {
            AppError::UnknownApp(_) => ApiError::NotFound(e.to_string()),
            AppError::AlreadyEnded { .. }
            | AppError::CannotRegister { .. }
            | AppError::NotRegistered { .. } => ApiError::Conflict(e.to_string()),
        }
    }
}

impl From<AllocateError> for ApiError {
    fn from(e: AllocateError) -> ApiError {
        match e {
            AllocateError::App(app) => app.into(),
            AllocateError::NotRegistered(_) => ApiError::Conflict(e.to_string()),
            AllocateError::InvalidAsk(_) | AllocateError::ZeroMaxShare { .. } => {
                ApiError::BadRequest(e.to_string())
            }
        }
    }
}

impl From<SubmitError> for ApiError {
    fn from(e: SubmitError) -> ApiError {
        match e {
            // Hadoop's RMAppManager refusal surfaces from its REST call as
            // a 400; a 403 says what happened (see docs/api.md). The
            // scheduler's own refusal never gets here: the app is recorded
            // and the submission answered 202 (`http::apps::submit`).
            SubmitError::AclRefused { .. } | SubmitError::AccessDenied { .. } => {
                ApiError::Forbidden(e.to_string())
            }
            SubmitError::Duplicate(_)
            | SubmitError::ZeroLifetime(_)
            | SubmitError::Placement(_)
            | SubmitError::Queue { .. }
            | SubmitError::AmTooLarge { .. } => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<MoveError> for ApiError {
    fn from(e: MoveError) -> ApiError {
        match e {
            MoveError::App(AppError::AlreadyEnded { state, .. }) => {
                // Hadoop's words and status for moving a finished app.
                ApiError::BadRequest(format!(
                    "App in {} state cannot be moved.",
                    state.yarn_name()
                ))
            }
            MoveError::App(app) => app.into(),
            MoveError::Tree(weft_queue_tree::MoveAppError::TargetNotLeaf(_)) => {
                ApiError::BadRequest(e.to_string())
            }
            MoveError::Tree(_) => ApiError::Conflict(e.to_string()),
        }
    }
}

impl From<LifetimeError> for ApiError {
    fn from(e: LifetimeError) -> ApiError {
        match e {
            LifetimeError::App(app) => app.into(),
            LifetimeError::NotInFuture { .. } => ApiError::BadRequest(e.to_string()),
        }
    }
}

impl From<RmError> for ApiError {
    fn from(e: RmError) -> ApiError {
        match e {
            RmError::Node(e) => e.into(),
            RmError::App(e) => e.into(),
            RmError::Allocate(e) => e.into(),
            RmError::Submit(e) => e.into(),
            RmError::Move(e) => e.into(),
            RmError::Lifetime(e) => e.into(),
            RmError::OutOfSync { .. } => ApiError::Conflict(e.to_string()),
            RmError::NotIssued { .. } => ApiError::BadRequest(e.to_string()),
            RmError::Forbidden { .. }
            | RmError::Disallowed { .. }
            | RmError::AmTokenRefused { .. } => ApiError::Forbidden(e.to_string()),
            RmError::Unexpected { .. } => ApiError::Internal(e.to_string()),
            RmError::Gone => ApiError::Unavailable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_is_hadoops_remote_exception() {
        let res = ApiError::NotFound("application application_1_0001 is not known".into());
        let body = serde_json::to_string(&RemoteExceptionBody {
            remote_exception: res.remote_exception(),
        })
        .unwrap();
        assert_eq!(
            body,
            r#"{"RemoteException":{"exception":"NotFoundException","message":"application application_1_0001 is not known","javaClassName":"org.apache.hadoop.yarn.webapp.NotFoundException"}}"#
        );
    }

    #[test]
    fn internal_details_are_not_returned() {
        let e = ApiError::Internal("reply mismatch in heartbeat".into());
        assert!(!e.remote_exception().message.contains("mismatch"));
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
