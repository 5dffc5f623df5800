//! Authentication: the token from `PRIVATE-TOKEN`, `private_token`/`access_token` parameters or
//! `Authorization: Bearer`, then `sudo` (header `Sudo` or parameter) for administrators. OAuth access tokens
//! count only as bearer tokens (`Authorization: Bearer` or `access_token`).

use crate::error::ApiError;
use crate::params::Params;
use crate::store::Store;

/// A case-insensitive header lookup over lowercase names.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The token the request carries, if any.
pub fn token_of(headers: &[(String, String)], params: &Params) -> Option<String> {
    if let Some(t) = header(headers, "private-token") {
        return Some(t.trim().to_string());
    }
    if let Some(t) = params.str("private_token").or_else(|| params.str("access_token")) {
        return Some(t);
    }
    let auth = header(headers, "authorization")?;
    let (scheme, rest) = auth.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim().to_string())
}

/// The effective caller: None when anonymous; 401 for an unknown token; `sudo` applied for admins.
pub fn authenticate(
    store: &Store,
    headers: &[(String, String)],
    params: &Params,
) -> Result<Option<u64>, ApiError> {
    let caller = token_owner(store, headers, params)?;
    let sudo = header(headers, "sudo")
        .map(str::to_string)
        .or_else(|| params.str("sudo"))
        .filter(|s| !s.trim().is_empty());
    let Some(sudo) = sudo else {
        return Ok(caller);
    };
    let uid = caller.ok_or(ApiError::Unauthorized)?;
    if !store.users.get(&uid).is_some_and(|u| u.is_admin) {
        return Err(ApiError::ForbiddenBecause("Must be admin to use sudo".into()));
    }
    store
        .user_by_id_or_username(sudo.trim())
        .map(|u| Some(u.id))
        .ok_or_else(|| ApiError::ForbiddenBecause(format!("No user id or username for: {sudo}")))
}

/// The token's own user, without `sudo`: None when anonymous; 401 for an unknown token. The service's GraphQL
/// authenticates this way (its sessionless authentication knows no `sudo`).
pub fn token_owner(
    store: &Store,
    headers: &[(String, String)],
    params: &Params,
) -> Result<Option<u64>, ApiError> {
    Ok(match token_of(headers, params) {
        None => None,
        Some(token) => {
            // As on the service, an OAuth access token is a bearer token: `PRIVATE-TOKEN` does not carry one.
            let private = header(headers, "private-token").is_some() || params.str("private_token").is_some();
            let oauth = store
                .tokens
                .values()
                .any(|t| t.kind == crate::store::TokenKind::OAuth && t.token == token);
            if private && oauth {
                return Err(ApiError::Unauthorized);
            }
            let user = store.token_owner(&token).ok_or(ApiError::Unauthorized)?;
            if user.state == "blocked" {
                return Err(ApiError::ForbiddenBecause(
                    "Your account has been blocked.".into(),
                ));
            }
            Some(user.id)
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::store::users::NewUser;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn token_sources_and_sudo() {
        let mut store = Store::new("http://x", "root-token");
        let alice = store.insert_user(NewUser {
            username: "alice".into(),
            name: "Alice".into(),
            email: "a@x".into(),
            password: None,
            is_admin: false,
        });
        let alice_token = store
            .insert_token(
                alice,
                "t",
                vec!["api".into()],
                crate::store::TokenKind::Personal,
                None,
            )
            .token
            .clone();
        let none = Params::default();
        assert_eq!(authenticate(&store, &[], &none).unwrap(), None);
        assert_eq!(
            authenticate(&store, &h(&[("private-token", "root-token")]), &none).unwrap(),
            Some(1)
        );
        let bearer = format!("Bearer {alice_token}");
        assert_eq!(
            authenticate(&store, &h(&[("authorization", &bearer)]), &none).unwrap(),
            Some(alice)
        );
        let q = Params::parse(Some("private_token=root-token&sudo=alice"), None, b"").unwrap();
        assert_eq!(authenticate(&store, &[], &q).unwrap(), Some(alice));
        assert!(matches!(
            authenticate(&store, &h(&[("private-token", "nope")]), &none),
            Err(ApiError::Unauthorized)
        ));
        let err = authenticate(
            &store,
            &h(&[("private-token", &alice_token), ("sudo", "1")]),
            &none,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "403 Forbidden - Must be admin to use sudo");
    }
}
