//! How a client reached svcgate when a TLS-terminating proxy stands in front: the proxy's `X-Forwarded-Proto`,
//! believed only from the peers named in `trusted_proxies`.
//!
//! The scheme decides whether page cookies are `Secure`, which scheme the addresses svcgate builds from a request
//! use (when `public_url` is not set), and the `X-Forwarded-Proto` the backend receives. From any other peer the
//! header is ignored and replaced, so that a client cannot claim TLS it did not use.

use std::net::IpAddr;

use http::HeaderMap;

/// The scheme of a request from `peer` that arrived over `connection_proto` (`http` or `https`): the first value
/// of its `X-Forwarded-Proto` when `peer` is a trusted proxy and that value is `http` or `https`, else the
/// connection's own.
pub fn client_proto(
    trusted: &[ipnet::IpNet],
    peer: IpAddr,
    connection_proto: &'static str,
    headers: &HeaderMap,
) -> &'static str {
    if trusted.is_empty() {
        return connection_proto;
    }
    // A listener on `[::]` sees IPv4 peers as IPv4-mapped IPv6 addresses; ranges are written in IPv4.
    let peer = peer.to_canonical();
    if !trusted.iter().any(|net| net.contains(&peer)) {
        return connection_proto;
    }
    // A chain of proxies may append: the first value is what the client itself used.
    let first = headers
        .get("x-forwarded-proto")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(',').next())
        .map(str::trim);
    match first {
        Some(proto) if proto.eq_ignore_ascii_case("https") => "https",
        Some(proto) if proto.eq_ignore_ascii_case("http") => "http",
        _ => connection_proto,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use http::HeaderValue;

    fn headers(proto: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-proto", HeaderValue::from_static(proto));
        headers
    }

    #[test]
    fn a_trusted_proxy_names_the_scheme_and_anyone_else_does_not() {
        let trusted: Vec<ipnet::IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let proxy: IpAddr = "10.1.2.3".parse().unwrap();
        let stranger: IpAddr = "192.0.2.1".parse().unwrap();
        assert_eq!(client_proto(&trusted, proxy, "http", &headers("https")), "https");
        assert_eq!(
            client_proto(&trusted, proxy, "http", &headers("HTTPS, http")),
            "https"
        );
        assert_eq!(
            client_proto(&trusted, stranger, "http", &headers("https")),
            "http"
        );
        assert_eq!(client_proto(&[], proxy, "http", &headers("https")), "http");
        assert_eq!(client_proto(&trusted, proxy, "https", &headers("http")), "http");
    }

    #[test]
    fn an_unknown_or_missing_value_keeps_the_connection_scheme() {
        let trusted: Vec<ipnet::IpNet> = vec!["127.0.0.1/32".parse().unwrap()];
        let proxy: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(client_proto(&trusted, proxy, "http", &headers("https")), "https");
        assert_eq!(client_proto(&trusted, proxy, "http", &headers("wss")), "http");
        assert_eq!(client_proto(&trusted, proxy, "https", &HeaderMap::new()), "https");
    }
}
