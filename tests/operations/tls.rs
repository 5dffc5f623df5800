//! TLS on both sides: clients reach svcgate over TLS with HTTP/2 chosen by ALPN, and svcgate reaches an
//! `https://` backend that it trusts through the configured CA bundle.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::convert::Infallible;
use std::sync::Arc;

use crate::common::TestGateway;
use bytes::Bytes;
use http::{Request, Response, Version};
use http_body_util::{BodyExt, Empty, Full};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;

struct Material {
    _dir: tempfile::TempDir,
    cert: std::path::PathBuf,
    key: std::path::PathBuf,
    der: rustls::pki_types::CertificateDer<'static>,
}

fn self_signed() -> Material {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.key_pair.serialize_pem()).unwrap();
    Material {
        der: certified.cert.der().clone(),
        _dir: dir,
        cert,
        key,
    }
}

fn client_config(
    trusted: &rustls::pki_types::CertificateDer<'static>,
    alpn: &[&[u8]],
) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(trusted.clone()).unwrap();
    let mut config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    config
}

#[tokio::test]
async fn clients_get_http2_over_tls_by_alpn() {
    let origin = common::origin::Origin::start().await;
    let material = self_signed();
    let gateway = TestGateway::start_with(&origin.url(), |raw| {
        raw.tls_cert = Some(material.cert.clone());
        raw.tls_key = Some(material.key.clone());
    })
    .await;
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(client_config(&material.der, &[]))
        .https_only()
        .enable_http2()
        .build();
    let client: Client<_, Empty<Bytes>> = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build(connector);
    let url = format!("https://localhost:{}/api/v4/projects", gateway.address.port());
    let response = client
        .request(Request::get(url).body(Empty::new()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.version(), Version::HTTP_2);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let echo: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(echo["headers"]["x-forwarded-proto"], "https");
    gateway.stop().await;
}

#[tokio::test]
async fn an_https_backend_is_trusted_through_the_configured_ca_bundle() {
    let material = self_signed();
    let server_config = backend_server_config(&material);
    let port = tls_backend(server_config, |request| {
        format!("secure {}", request.uri().path())
    })
    .await;

    let trusting = TestGateway::start_with(&format!("https://localhost:{port}"), |raw| {
        raw.backend_ca_bundle = Some(material.cert.clone());
    })
    .await;
    let answer = common::send(http::Method::GET, &format!("{}/hello", trusting.url()), &[], None).await;
    assert_eq!(answer.status, http::StatusCode::OK);
    assert_eq!(answer.body, Bytes::from_static(b"secure /hello"));
    trusting.stop().await;

    let untrusting = TestGateway::start(&format!("https://localhost:{port}")).await;
    let answer = common::send(
        http::Method::GET,
        &format!("{}/hello", untrusting.url()),
        &[],
        None,
    )
    .await;
    assert_eq!(
        answer.status,
        http::StatusCode::BAD_GATEWAY,
        "an unknown certificate is refused"
    );
    untrusting.stop().await;
}

#[tokio::test]
async fn a_backend_that_requires_a_client_certificate_gets_the_configured_one() {
    // The backend's own certificate, trusted through the CA bundle, and a CA that signs client certificates.
    let server = self_signed();
    let client_ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let client_ca = ca_params.self_signed(&client_ca_key).unwrap();
    let client_key = rcgen::KeyPair::generate().unwrap();
    let client_cert = rcgen::CertificateParams::new(vec!["svcgate-client".to_owned()])
        .unwrap()
        .signed_by(&client_key, &client_ca, &client_ca_key)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (cert_path, key_path) = (dir.path().join("client.pem"), dir.path().join("client-key.pem"));
    std::fs::write(&cert_path, client_cert.pem()).unwrap();
    std::fs::write(&key_path, client_key.serialize_pem()).unwrap();

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut client_roots = rustls::RootCertStore::empty();
    client_roots.add(client_ca.der().clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(client_roots),
        Arc::clone(&provider),
    )
    .build()
    .unwrap();
    let server_config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            svcgate::util::tls::read_certs("test", &server.cert).unwrap(),
            svcgate::util::tls::read_key("test", &server.key).unwrap(),
        )
        .unwrap();
    let port = tls_backend(server_config, |_| "client verified".to_owned()).await;

    let with_certificate = TestGateway::start_with(&format!("https://localhost:{port}"), |raw| {
        raw.backend_ca_bundle = Some(server.cert.clone());
        raw.backend_client_cert = Some(cert_path.clone());
        raw.backend_client_key = Some(key_path.clone());
    })
    .await;
    let answer = common::send(
        http::Method::GET,
        &format!("{}/x", with_certificate.url()),
        &[],
        None,
    )
    .await;
    assert_eq!(answer.status, http::StatusCode::OK);
    assert_eq!(answer.body, Bytes::from_static(b"client verified"));
    with_certificate.stop().await;

    let without = TestGateway::start_with(&format!("https://localhost:{port}"), |raw| {
        raw.backend_ca_bundle = Some(server.cert.clone());
    })
    .await;
    let answer = common::send(http::Method::GET, &format!("{}/x", without.url()), &[], None).await;
    assert_eq!(
        answer.status,
        http::StatusCode::BAD_GATEWAY,
        "the backend refuses a client without a certificate"
    );
    without.stop().await;
}

#[tokio::test]
async fn an_http2_backend_sees_its_own_authority_and_no_second_host() {
    let material = self_signed();
    let mut server_config = backend_server_config(&material);
    server_config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let port = tls_backend(server_config, |request| {
        let hosts: Vec<&str> = request
            .headers()
            .get_all("host")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .collect();
        format!(
            "{:?} authority={} host=[{}]",
            request.version(),
            request
                .uri()
                .authority()
                .map_or("-", |authority| authority.as_str()),
            hosts.join(",")
        )
    })
    .await;
    let gateway = TestGateway::start_with(&format!("https://localhost:{port}"), |raw| {
        raw.backend_ca_bundle = Some(material.cert.clone());
    })
    .await;
    let answer = common::send(
        http::Method::GET,
        &format!("{}/hello", gateway.url()),
        &[("host", "gate.example")],
        None,
    )
    .await;
    assert_eq!(answer.status, http::StatusCode::OK);
    assert_eq!(
        answer.body,
        Bytes::from(format!("HTTP/2.0 authority=localhost:{port} host=[]")),
        "HTTP/2 carries the backend's authority, and neither the client's Host nor a second one"
    );
    gateway.stop().await;
}

#[tokio::test]
async fn with_preserve_host_an_http2_capable_backend_gets_http1_and_the_clients_host() {
    let material = self_signed();
    let mut server_config = backend_server_config(&material);
    server_config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let port = tls_backend(server_config, |request| {
        let hosts: Vec<&str> = request
            .headers()
            .get_all("host")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .collect();
        format!("{:?} host=[{}]", request.version(), hosts.join(","))
    })
    .await;
    let gateway = TestGateway::start_with(&format!("https://localhost:{port}"), |raw| {
        raw.backend_ca_bundle = Some(material.cert.clone());
        raw.preserve_host = Some(true);
    })
    .await;
    let answer = common::send(
        http::Method::GET,
        &format!("{}/hello", gateway.url()),
        &[("host", "gate.example")],
        None,
    )
    .await;
    assert_eq!(answer.status, http::StatusCode::OK);
    assert_eq!(
        answer.body,
        Bytes::from_static(b"HTTP/1.1 host=[gate.example]"),
        "the client's Host, once, over HTTP/1.1 (HTTP/2 would carry the backend's authority)"
    );
    gateway.stop().await;
}

/// A backend's TLS configuration serving `material`'s certificate, without client authentication.
fn backend_server_config(material: &Material) -> rustls::ServerConfig {
    let certs = svcgate::util::tls::read_certs("test", &material.cert).unwrap();
    let key = svcgate::util::tls::read_key("test", &material.key).unwrap();
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap()
}

/// A TLS backend on 127.0.0.1 with `config`, answering every request with `answer(request)`; its port.
async fn tls_backend(
    config: rustls::ServerConfig,
    answer: fn(&Request<hyper::body::Incoming>) -> String,
) -> u16 {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let service = service_fn(move |request: Request<hyper::body::Incoming>| async move {
                    let text = answer(&request);
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(text))))
                });
                let _ = auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    port
}
