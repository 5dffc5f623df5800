//! The named procedures: the few V3 behaviours that need several backend calls with control flow.
//!
//! Each procedure takes the translated V4 request and answers the V3 client; each has its own tests in
//! `tests/rules.rs`.

use http::{Method, StatusCode};

use super::backend::Caller;
use super::request::V3Request;
use super::rule::Procedure;
use crate::body::{json_response, Body};
use crate::error::GatewayError;
use crate::passthrough::stream_back;

/// Runs `procedure` for a request whose V4 target is `v4_target`.
pub async fn run(
    procedure: Procedure,
    caller: &Caller<'_>,
    request: V3Request,
    v4_path: &str,
    v4_target: &str,
) -> Result<http::Response<Body>, GatewayError> {
    match procedure {
        Procedure::MemberConflict => member_conflict(caller, request, v4_path, v4_target).await,
    }
}

/// `POST /projects/:id/members`: V3 answered 201 with the existing member where V4 answers 409.
async fn member_conflict(
    caller: &Caller<'_>,
    request: V3Request,
    v4_path: &str,
    v4_target: &str,
) -> Result<http::Response<Body>, GatewayError> {
    let user_id = request.number_param("user_id");
    let response = caller
        .send(Method::POST, v4_target, request.into_payload())
        .await?;
    if response.status() != StatusCode::CONFLICT {
        return Ok(stream_back(response));
    }
    let Some(user_id) = user_id else {
        return Ok(stream_back(response));
    };
    let member = caller.get_json(&format!("{v4_path}/{user_id}")).await?;
    Ok(json_response(StatusCode::CREATED, &member.body))
}
