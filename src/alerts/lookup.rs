//! Request ids that can be looked up: what a format with a lookup route (`[[receive.route]]` with
//! `method = "GET"` and `lookup = true`, Opsgenie's `GET …/v2/alerts/requests/{request_id}`) answers a delivery
//! with, and the answer to their lookup.
//!
//! An id is issued only once a delivery is stored (or deliberately ignored), and it carries what svcgate did:
//! the outcome, the alert's per-project number and the sender's own key of the alert (Opsgenie's alias), signed
//! with HMAC-SHA-256 under the integration's key. Any replica sharing the store answers its lookup without
//! keeping anything, and an id that svcgate did not issue to this integration, or that was altered, is answered
//! 404 in Opsgenie's error shape. Pure: the intake ([`super::intake`]) supplies the key and sends the answer.

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Hex digits of the signature an id ends with (128 bits).
const SIGNATURE_HEX: usize = 32;

/// The longest id looked up; a longer one was not issued here.
const MAX_ID_LEN: usize = 2048;

/// What a delivery came to, as its request id carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issued {
    /// `created`, `grouped`, `resolved`, `no_open_alert`, or `ignored`.
    #[serde(rename = "o")]
    pub outcome: String,
    /// The alert's per-project number, when an alert was touched.
    #[serde(rename = "i", default, skip_serializing_if = "Option::is_none")]
    pub iid: Option<u64>,
    /// The sender's own key of the alert (Opsgenie's alias).
    #[serde(rename = "k", default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Why the delivery was ignored.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Makes every id unique, as the sender's own service's are.
    #[serde(rename = "n")]
    pub nonce: u64,
}

/// The request id of a delivery: `<what was done, base64url>.<signature>`, signed with `secret` (the integration's
/// key).
pub fn issue(secret: &str, issued: &Issued) -> String {
    // A struct of strings and numbers always serializes; the fallback is never taken.
    let payload = serde_json::to_vec(issued).unwrap_or_default();
    let encoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(payload);
    let signature = signature(secret, encoded.as_bytes());
    format!("{encoded}.{signature}")
}

/// What `request_id` says was done, when svcgate issued it under `secret`; `None` for any other id.
pub fn read(secret: &str, request_id: &str) -> Option<Issued> {
    if request_id.len() > MAX_ID_LEN {
        return None;
    }
    let (encoded, given) = request_id.rsplit_once('.')?;
    let expected = signature(secret, encoded.as_bytes());
    if !bool::from(expected.as_bytes().ct_eq(given.as_bytes())) {
        return None;
    }
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(encoded)
        .ok()?;
    serde_json::from_slice(&payload).ok()
}

/// The lookup's answer, in Opsgenie's request status shape: 200 with `data` (`success`, `action`, `status`,
/// `alertId`, `alias`) for an id svcgate issued under `secret`, else 404 with Opsgenie's error body.
pub fn answer(secret: &str, request_id: &str) -> (http::StatusCode, Value) {
    let Some(issued) = read(secret, request_id) else {
        return (
            http::StatusCode::NOT_FOUND,
            json!({
                "message": "Request not found. It might not be processed, yet.",
                "took": 0.0,
                "requestId": request_id,
            }),
        );
    };
    let alias = issued.key.clone().unwrap_or_default();
    let (success, action, status) = match issued.outcome.as_str() {
        "created" => (true, "Create", "Created alert".to_owned()),
        "grouped" => (
            true,
            "Create",
            "Alert deduplicated: grouped into the open alert".to_owned(),
        ),
        "resolved" => (true, "Close", "Closed alert".to_owned()),
        "no_open_alert" => (
            false,
            "Close",
            format!("There is no open alert with alias {alias}"),
        ),
        _ => (
            true,
            "Ignore",
            issued
                .reason
                .clone()
                .unwrap_or_else(|| "Nothing to do: the delivery carried no alert".to_owned()),
        ),
    };
    let alert_id = issued.iid.map(|iid| iid.to_string()).unwrap_or_default();
    (
        http::StatusCode::OK,
        json!({
            "data": {
                "success": success,
                "action": action,
                "status": status,
                "alertId": alert_id,
                "alias": alias,
            },
            "took": 0.0,
            "requestId": request_id,
        }),
    )
}

/// HMAC-SHA-256 of `message` under `secret`, the first [`SIGNATURE_HEX`] hex digits.
fn signature(secret: &str, message: &[u8]) -> String {
    let mut block = [0u8; 64];
    let key = secret.as_bytes();
    if key.len() > block.len() {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|byte| byte ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(block.map(|byte| byte ^ 0x5c));
    outer.update(inner.finalize());
    let digest = outer.finalize();
    let mut hex = String::with_capacity(SIGNATURE_HEX);
    for byte in digest.iter().take(SIGNATURE_HEX / 2) {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn created() -> Issued {
        Issued {
            outcome: "created".to_owned(),
            iid: Some(4),
            key: Some("12345".to_owned()),
            reason: None,
            nonce: 9,
        }
    }

    #[test]
    fn an_issued_id_is_answered_with_what_was_done() {
        let id = issue("k1", &created());
        assert_eq!(read("k1", &id), Some(created()));
        let (status, body) = answer("k1", &id);
        assert_eq!(status, http::StatusCode::OK);
        assert_eq!(body["data"]["success"], true);
        assert_eq!(body["data"]["action"], "Create");
        assert_eq!(body["data"]["alertId"], "4");
        assert_eq!(body["data"]["alias"], "12345");
        assert_eq!(body["requestId"], id.as_str());
    }

    #[test]
    fn an_id_of_another_key_or_altered_is_not_found() {
        let id = issue("k1", &created());
        assert_eq!(read("k2", &id), None);
        let (encoded, signature) = id.rsplit_once('.').unwrap();
        let mut other = created();
        other.outcome = "resolved".to_owned();
        let forged = format!("{}.{signature}", issue("k1", &other).rsplit_once('.').unwrap().0);
        assert_eq!(read("k1", &forged), None);
        assert_eq!(read("k1", encoded), None);
        let (status, body) = answer("k1", "0f0e-unknown");
        assert_eq!(status, http::StatusCode::NOT_FOUND);
        assert_eq!(
            body["message"],
            "Request not found. It might not be processed, yet."
        );
    }

    #[test]
    fn a_close_without_an_open_alert_is_not_a_success() {
        let mut issued = created();
        issued.outcome = "no_open_alert".to_owned();
        issued.iid = None;
        let (_, body) = answer("k", &issue("k", &issued));
        assert_eq!(body["data"]["success"], false);
        assert_eq!(body["data"]["action"], "Close");
        assert_eq!(body["data"]["alertId"], "");
    }

    #[test]
    fn signatures_are_hmac_sha256() {
        // RFC 4231, test case 2: key "Jefe".
        let mac = signature("Jefe", b"what do ya want for nothing?");
        assert_eq!(mac, "5bdcc146bf60754e6a042426089575c7");
    }
}
