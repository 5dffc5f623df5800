//! Errors that end a request inside the gateway, each knowing whose fault it is and how it is answered.
//!
//! Every path through the gateway that fails produces a [`GatewayError`]; [`GatewayError::into_response`] is the
//! one place that turns it into a response, in the service's error shape `{"message": "..."}`. Internal detail is
//! logged, never sent to the client.

use http::StatusCode;

use crate::http::body::{error_response, Body};

/// Why a request could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The backend could not be reached (connect refused, DNS, TLS).
    #[error("backend unreachable: {0}")]
    BackendUnreachable(String),
    /// The backend did not answer within its timeout.
    #[error("backend timed out after {0:?}")]
    BackendTimeout(std::time::Duration),
    /// The backend answered with something the gateway could not use.
    #[error("bad backend answer: {0}")]
    BadBackendAnswer(String),
    /// A whole-collection list is larger than the configured cap.
    #[error("collection larger than max_collected_items ({0})")]
    CollectionTooLarge(usize),
    /// A global issue or merge request id is unknown.
    #[error("{0} Not Found")]
    NotFound(&'static str),
    /// The client sent something the gateway cannot translate.
    #[error("{0}")]
    BadRequest(String),
    /// The request would cause more backend calls than `max_backend_calls_per_request`.
    #[error("more than {limit} backend calls")]
    TooManyBackendCalls {
        /// The cap.
        limit: u32,
        /// The parameter that asked for them, when one did (`labels`).
        param: Option<String>,
    },
    /// A shared limit (a memory budget) is spent for now; the client should retry shortly.
    #[error("busy: {0}")]
    Busy(String),
    /// The client's body did not arrive within `body_read_timeout`.
    #[error("request body too slow")]
    BodyTimeout(std::time::Duration),
    /// The backend's own answer to a call the gateway made, relayed to the client as it is.
    #[error("backend answered {status}")]
    Relay {
        /// The backend's status.
        status: StatusCode,
        /// The backend's body.
        body: bytes::Bytes,
    },
    /// Nothing is served at this svcgate path (`/-/svcgate/…`).
    #[error("no such svcgate route")]
    NoRoute,
    /// The route exists but not for this method; the value is the `Allow` header.
    #[error("method not allowed")]
    MethodNotAllowed(&'static str),
    /// The gateway itself failed (store, bug); detail is logged only.
    #[error("internal: {0}")]
    Internal(String),
}

impl GatewayError {
    /// The status this error is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            GatewayError::BackendUnreachable(_) | GatewayError::BadBackendAnswer(_) => {
                StatusCode::BAD_GATEWAY
            }
            GatewayError::CollectionTooLarge(_) => StatusCode::BAD_GATEWAY,
            GatewayError::BackendTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            GatewayError::NotFound(_) | GatewayError::NoRoute => StatusCode::NOT_FOUND,
            GatewayError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            GatewayError::BadRequest(_) | GatewayError::TooManyBackendCalls { .. } => StatusCode::BAD_REQUEST,
            GatewayError::Relay { status, .. } => *status,
            GatewayError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            GatewayError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            GatewayError::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
        }
    }

    /// The message the client sees: specific for the client's and the backend's faults, generic for ours.
    pub fn client_message(&self) -> String {
        match self {
            GatewayError::BackendUnreachable(_) => {
                "502 Bad Gateway: the backend could not be reached".to_owned()
            }
            GatewayError::BackendTimeout(after) => {
                format!("504 Gateway Timeout: the backend did not answer within {after:?}")
            }
            GatewayError::BadBackendAnswer(_) => {
                "502 Bad Gateway: the backend's answer could not be read".to_owned()
            }
            GatewayError::CollectionTooLarge(cap) => format!(
                "502 Bad Gateway: the collection has more than {cap} items (max_collected_items); \
                 svcgate does not return a truncated list"
            ),
            GatewayError::NotFound(what) => format!("404 {what} Not Found"),
            GatewayError::NoRoute => "404 Not Found".to_owned(),
            GatewayError::MethodNotAllowed(_) => "405 Method Not Allowed".to_owned(),
            GatewayError::BadRequest(message) => format!("400 (Bad request) {message}"),
            GatewayError::TooManyBackendCalls {
                limit,
                param: Some(param),
            } => format!(
                "400 (Bad request) {param} is too long: svcgate asks the backend once per value, and one request may \
                 cause at most {limit} backend calls (max_backend_calls_per_request)"
            ),
            GatewayError::TooManyBackendCalls { limit, param: None } => format!(
                "400 (Bad request) this request needs more than {limit} backend calls \
                 (max_backend_calls_per_request); ask for a smaller page (per_page)"
            ),
            GatewayError::Relay { status, .. } => status.to_string(),
            GatewayError::Internal(_) => "500 Internal Server Error".to_owned(),
            GatewayError::Busy(message) => format!("503 Service Unavailable: {message}"),
            GatewayError::BodyTimeout(after) => {
                format!("408 Request Timeout: the body did not arrive within {after:?} (body_read_timeout)")
            }
        }
    }

    /// The response for this error, in the service's error shape.
    pub fn into_response(self) -> http::Response<Body> {
        if let GatewayError::Relay { status, body } = self {
            let mut response = http::Response::new(crate::http::body::full(body));
            *response.status_mut() = status;
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            return response;
        }
        if matches!(
            self,
            GatewayError::Internal(_) | GatewayError::BadBackendAnswer(_)
        ) {
            tracing::error!(error = %self, "request failed");
        }
        let mut response = error_response(self.status(), &self.client_message());
        match self {
            GatewayError::Busy(_) => {
                response.headers_mut().insert(
                    http::header::RETRY_AFTER,
                    http::HeaderValue::from(crate::http::budget::RETRY_AFTER_SECONDS),
                );
            }
            GatewayError::MethodNotAllowed(allow) => {
                response
                    .headers_mut()
                    .insert(http::header::ALLOW, http::HeaderValue::from_static(allow));
            }
            _ => {}
        }
        response
    }
}
