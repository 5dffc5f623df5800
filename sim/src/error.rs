//! The API error type, and how each error becomes the service's response: `{"message": ...}`, or for a parameter
//! that is missing or invalid (the service's parameter validation) `{"error": ...}`.

use http::StatusCode;
use serde_json::{json, Map, Value};

/// Everything a handler can answer instead of a success.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A required parameter is absent: `{"error": "<name> is missing"}`.
    #[error("{0} is missing")]
    Missing(String),
    /// A parameter has the wrong type or an unknown value: `{"error": "<name> is invalid"}`.
    #[error("{0} is invalid")]
    Invalid(String),
    /// A 400 from parameter validation with a free-form text: `{"error": "<text>"}`.
    #[error("{0}")]
    Param(String),
    /// A 400 with a free-form message.
    #[error("{0}")]
    BadRequest(String),
    /// Model validation failures: `{"message": {"field": ["..."]}}` with 400.
    #[error("validation failed")]
    Validation(Vec<(String, String)>),
    /// No or an unknown token.
    #[error("401 Unauthorized")]
    Unauthorized,
    /// The caller may not do this.
    #[error("403 Forbidden")]
    Forbidden,
    /// The caller may not do this, with the reason.
    #[error("403 Forbidden - {0}")]
    ForbiddenBecause(String),
    /// A named resource does not exist or is not visible: `404 Project Not Found`.
    #[error("404 {0} Not Found")]
    NotFound(&'static str),
    /// The generic `404 Not found`.
    #[error("404 Not found")]
    NotFoundPlain,
    /// No route matches the path.
    #[error("404 Not Found")]
    NoRoute,
    /// V4's `not_allowed!`: the action is not allowed in the resource's state (e.g. merging a closed or draft merge
    /// request). Routing never answers it: V4's catch-all makes an unknown method a 404.
    #[error("405 Method Not Allowed")]
    MethodNotAllowed,
    /// Model validation failures answered with 409 (e.g. a fork whose name is taken).
    #[error("conflict")]
    ValidationConflict(Vec<(String, String)>),
    /// A 409 with its message.
    #[error("{0}")]
    Conflict(String),
    /// A 422 whose message is one model error as a list, as V4's `error!(errors[:key], 422)`:
    /// `{"message": ["..."]}`.
    #[error("{0}")]
    Unprocessable(String),
    /// Any other status with its message.
    #[error("{1}")]
    Status(StatusCode, String),
    /// The request body is over the size limit.
    #[error("413 Request Entity Too Large")]
    TooLarge,
}

impl ApiError {
    /// A single-field validation error.
    pub fn validation(field: &str, message: &str) -> Self {
        ApiError::Validation(vec![(field.to_string(), message.to_string())])
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Missing(_)
            | ApiError::Invalid(_)
            | ApiError::Param(_)
            | ApiError::BadRequest(_)
            | ApiError::Validation(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden | ApiError::ForbiddenBecause(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) | ApiError::NotFoundPlain | ApiError::NoRoute => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) | ApiError::ValidationConflict(_) => StatusCode::CONFLICT,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Status(status, _) => *status,
            ApiError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }

    /// The JSON body of this error.
    pub fn body(&self) -> Value {
        match self {
            ApiError::Validation(fields) | ApiError::ValidationConflict(fields) => {
                let mut map = Map::new();
                for (field, message) in fields {
                    let entry = map.entry(field.clone()).or_insert_with(|| json!([]));
                    if let Value::Array(list) = entry {
                        list.push(json!(message));
                    }
                }
                json!({ "message": map })
            }
            ApiError::Missing(_) | ApiError::Invalid(_) | ApiError::Param(_) => {
                json!({ "error": self.to_string() })
            }
            ApiError::Unprocessable(text) => json!({ "message": [text] }),
            _ => json!({ "message": self.to_string() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(
            ApiError::Missing("title".into()).body(),
            json!({"error": "title is missing"})
        );
        assert_eq!(
            ApiError::Invalid("visibility".into()).body(),
            json!({"error": "visibility is invalid"})
        );
        assert_eq!(
            ApiError::NotFound("Project").body(),
            json!({"message": "404 Project Not Found"})
        );
        assert_eq!(
            ApiError::validation("access_level", "is not included in the list").body(),
            json!({"message": {"access_level": ["is not included in the list"]}})
        );
        assert_eq!(ApiError::NoRoute.body(), json!({"message": "404 Not Found"}));
        assert_eq!(
            ApiError::MethodNotAllowed.body(),
            json!({"message": "405 Method Not Allowed"})
        );
        assert_eq!(
            ApiError::ForbiddenBecause("Must be admin to use sudo".into()).status(),
            StatusCode::FORBIDDEN
        );
    }
}
