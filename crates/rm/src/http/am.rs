//! The ApplicationMaster protocol's handlers: register, allocate, finish.
//!
//! Each takes the attempt's AM token from `Authorization: Bearer <token>`
//! (a call without one is refused here, 401, before its body is read),
//! parses its body, converts it to the core's input, awaits the actor and
//! answers JSON; whether the token is the running attempt's (else 403) and
//! `responseId` bookkeeping are the actor's, which holds the tokens.
//! Allocate calls are timed from the first byte read to the answer
//! serialized.

use axum::extract::{FromRequest, FromRequestParts, Request, State};
use axum::http::HeaderMap;
use axum::response::Response;

use crate::actor::AmInfo;
use crate::dto::am::{
    AllocateRequestDto, AmFinishRequest, AmFinishResponse, AmRegisterRequest, AmRegisterResponse,
};
use crate::http::codec::{OptionalPayload, Payload};
use crate::http::error::ApiError;
use crate::http::{ApiState, AppParam, bearer_token, json_response, timed};

/// The AM token a call shows, or the 401 that says how to show one.
fn am_token(headers: &HeaderMap) -> Result<String, ApiError> {
    bearer_token(headers).map(str::to_owned).ok_or_else(|| {
        ApiError::Unauthorized(
            "the AM protocol needs the attempt's AM token: send Authorization: Bearer <token> (an AM container has it in WEFT_AM_TOKEN; an unmanaged AM's owner finds it as amRMToken in the application's report)".to_owned(),
        )
    })
}

async fn app_and_body<T>(s: &ApiState, req: Request) -> Result<(AppParam, T), ApiError>
where
    T: serde::de::DeserializeOwned,
{
    let (mut parts, body) = req.into_parts();
    let app = AppParam::from_request_parts(&mut parts, s).await?;
    let Payload(body) = Payload::<T>::from_request(Request::from_parts(parts, body), s).await?;
    Ok((app, body))
}

pub(super) async fn register(State(s): State<ApiState>, req: Request) -> Response {
    timed(None, "/ws/v1/am/register", async {
        let token = am_token(req.headers())?;
        let (mut parts, body) = req.into_parts();
        let AppParam(app) = AppParam::from_request_parts(&mut parts, &s).await?;
        let OptionalPayload(body) = OptionalPayload::<AmRegisterRequest>::from_request(
            Request::from_parts(parts, body),
            &s,
        )
        .await?;
        let info = AmInfo {
            host: body.host,
            rpc_port: body.rpc_port,
            tracking_url: body.tracking_url,
        };
        let reply = s.rm().register_am(app, token, info).await?;
        Ok(json_response(&AmRegisterResponse::from_reply(&reply)))
    })
    .await
}

pub(super) async fn allocate(State(s): State<ApiState>, req: Request) -> Response {
    let histogram = &s.0.metrics.allocate_duration;
    timed(Some(histogram), "/ws/v1/am/allocate", async {
        let token = am_token(req.headers())?;
        let (AppParam(app), body) = app_and_body::<AllocateRequestDto>(&s, req).await?;
        let request = body.to_request(app)?;
        let reply = s.rm().allocate(request, token, body.response_id).await?;
        Ok(json_response(&*reply))
    })
    .await
}

pub(super) async fn finish(State(s): State<ApiState>, req: Request) -> Response {
    timed(None, "/ws/v1/am/finish", async {
        let token = am_token(req.headers())?;
        let (AppParam(app), body) = app_and_body::<AmFinishRequest>(&s, req).await?;
        let outcome = body.outcome()?;
        s.rm()
            .finish_am(app, token, outcome, body.diagnostics, body.tracking_url)
            .await?;
        Ok(json_response(&AmFinishResponse {
            is_unregistered: true,
        }))
    })
    .await
}
