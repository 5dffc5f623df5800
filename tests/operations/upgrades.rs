//! Protocol upgrades through passthrough over real sockets: a WebSocket client → svcgate → a WebSocket echo server,
//! as the web interface's live updates (`/-/cable`) and terminal use them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use std::net::SocketAddr;
use std::time::Duration;

use crate::common::{within, TestGateway};
use futures_util::{SinkExt, StreamExt};
use http::StatusCode;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// What the backend saw of one upgrade request: its target and headers.
#[derive(Debug)]
struct Seen {
    target: String,
    headers: http::HeaderMap,
}

/// A WebSocket backend: `/-/cable` upgrades, greets, then echoes every message; any other path is refused with 403
/// and a body. Each handshake's request is reported on the returned channel. With `tls`, connections are TLS.
async fn websocket_backend_with(
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> (SocketAddr, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (report, seen) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let report = report.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                match tls {
                    Some(acceptor) => {
                        if let Ok(stream) = acceptor.accept(stream).await {
                            // A connection that chose HTTP/2 could not be upgraded: the test would see it fail.
                            let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                            assert_ne!(alpn.as_deref(), Some(&b"h2"[..]), "upgrade over HTTP/2");
                            serve_websocket(stream, report).await;
                        }
                    }
                    None => serve_websocket(stream, report).await,
                }
            });
        }
    });
    (address, seen)
}

async fn websocket_backend() -> (SocketAddr, mpsc::UnboundedReceiver<Seen>) {
    websocket_backend_with(None).await
}

async fn serve_websocket<S>(stream: S, report: mpsc::UnboundedSender<Seen>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    #[expect(
        clippy::result_large_err,
        reason = "tungstenite's handshake callback returns its refusal by value"
    )]
    let check = |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let target = request.uri().to_string();
        let _ = report.send(Seen {
            target: target.clone(),
            headers: request.headers().clone(),
        });
        if request.uri().path() == "/-/cable" {
            Ok(response)
        } else {
            let mut refusal = ErrorResponse::new(Some(format!("no cable at {target}")));
            *refusal.status_mut() = StatusCode::FORBIDDEN;
            Err(refusal)
        }
    };
    let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(stream, check).await else {
        return;
    };
    if socket.send(Message::text("welcome")).await.is_err() {
        return;
    }
    while let Some(Ok(message)) = socket.next().await {
        // tungstenite answers pings and a close itself; the stream then ends.
        if (message.is_text() || message.is_binary()) && socket.send(message).await.is_err() {
            return;
        }
    }
}

async fn next_message<S>(socket: &mut S) -> Message
where
    S: futures_util::Stream<Item = Result<Message, WsError>> + Unpin,
{
    within(5, "a WebSocket message", socket.next())
        .await
        .expect("the connection ended")
        .expect("a message")
}

#[tokio::test]
async fn a_websocket_exchanges_text_and_binary_both_ways_through_svcgate() {
    let (backend, mut seen) = websocket_backend().await;
    let gateway = TestGateway::start(&format!("http://{backend}")).await;
    let url = format!("ws://{}/-/cable?channel=notes", gateway.address);
    let (mut socket, response) = within(5, "the handshake", tokio_tungstenite::connect_async(url))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SWITCHING_PROTOCOLS);
    assert!(response.headers().contains_key("sec-websocket-accept"));
    assert!(response.headers().contains_key("x-request-id"));

    let request = seen.recv().await.unwrap();
    assert_eq!(request.target, "/-/cable?channel=notes");
    assert_eq!(request.headers["upgrade"], "websocket");
    assert_eq!(request.headers["connection"], "upgrade");
    assert!(request.headers.contains_key("sec-websocket-key"));
    assert_eq!(request.headers["host"], backend.to_string());
    assert_eq!(request.headers["x-forwarded-for"], "127.0.0.1");
    assert_eq!(request.headers["x-forwarded-host"], gateway.address.to_string());

    // The server speaks first, then echoes.
    assert_eq!(next_message(&mut socket).await, Message::text("welcome"));
    socket.send(Message::text("hello through svcgate")).await.unwrap();
    assert_eq!(
        next_message(&mut socket).await,
        Message::text("hello through svcgate")
    );
    let binary: Vec<u8> = (0..200_000u32).map(|index| (index % 251) as u8).collect();
    socket.send(Message::binary(binary.clone())).await.unwrap();
    assert_eq!(next_message(&mut socket).await, Message::binary(binary));
    for round in 0..20 {
        socket
            .send(Message::text(format!("round {round}")))
            .await
            .unwrap();
        assert_eq!(
            next_message(&mut socket).await,
            Message::text(format!("round {round}"))
        );
    }

    socket.close(None).await.unwrap();
    // The backend's close frame comes back, then the stream ends.
    loop {
        match within(5, "the close", socket.next()).await {
            Some(Ok(Message::Close(_))) => continue,
            Some(Ok(other)) => panic!("unexpected {other:?}"),
            Some(Err(WsError::ConnectionClosed)) | None => break,
            Some(Err(error)) => panic!("closing: {error}"),
        }
    }
    gateway.stop().await;
}

#[tokio::test]
async fn an_upgrade_the_backend_refuses_is_answered_as_the_backend_answered() {
    let (backend, mut seen) = websocket_backend().await;
    let gateway = TestGateway::start(&format!("http://{backend}")).await;
    let url = format!("ws://{}/-/not-a-cable", gateway.address);
    let error = within(5, "the handshake", tokio_tungstenite::connect_async(url))
        .await
        .unwrap_err();
    let WsError::Http(response) = error else {
        panic!("expected an HTTP answer, got {error}");
    };
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    // tungstenite reads the body as it comes off the wire: here in one chunk of a chunked stream.
    let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default()).into_owned();
    assert!(body.contains("no cable at /-/not-a-cable"), "{body:?}");
    assert!(response.headers().contains_key("x-request-id"));
    assert_eq!(seen.recv().await.unwrap().target, "/-/not-a-cable");
    gateway.stop().await;
}

#[tokio::test]
async fn an_upgraded_connection_that_carries_nothing_for_the_idle_timeout_is_closed() {
    let (backend, _seen) = websocket_backend().await;
    let gateway = TestGateway::start_with(&format!("http://{backend}"), |raw| {
        raw.upgrade_idle_timeout = Some("400ms".to_owned());
    })
    .await;
    let url = format!("ws://{}/-/cable", gateway.address);
    let (mut socket, _) = within(5, "the handshake", tokio_tungstenite::connect_async(url))
        .await
        .unwrap();
    assert_eq!(next_message(&mut socket).await, Message::text("welcome"));

    // Traffic more often than the timeout keeps the connection open well past it.
    for round in 0..8 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        socket.send(Message::text(format!("tick {round}"))).await.unwrap();
        assert_eq!(
            next_message(&mut socket).await,
            Message::text(format!("tick {round}"))
        );
    }

    // Then silence: svcgate closes both sides, without a closing handshake.
    let started = std::time::Instant::now();
    match within(5, "the idle close", socket.next()).await {
        None | Some(Err(_)) => {}
        Some(Ok(message)) => panic!("unexpected {message:?}"),
    }
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(300), "closed after {waited:?}");
    gateway.stop().await;
}

#[tokio::test]
async fn an_upgrade_carries_the_clients_host_with_preserve_host() {
    let (backend, mut seen) = websocket_backend().await;
    let gateway = TestGateway::start_with(&format!("http://{backend}"), |raw| {
        raw.preserve_host = Some(true);
    })
    .await;
    let url = format!("ws://{}/-/cable", gateway.address);
    let (mut socket, _) = within(5, "the handshake", tokio_tungstenite::connect_async(url))
        .await
        .unwrap();
    assert_eq!(next_message(&mut socket).await, Message::text("welcome"));
    assert_eq!(
        seen.recv().await.unwrap().headers["host"],
        gateway.address.to_string()
    );
    socket.close(None).await.unwrap();
    gateway.stop().await;
}

#[tokio::test]
async fn svcgates_own_routes_do_not_upgrade() {
    let (backend, _seen) = websocket_backend().await;
    let gateway = TestGateway::start(&format!("http://{backend}")).await;
    let url = format!("ws://{}/-/svcgate/health", gateway.address);
    let error = within(5, "the handshake", tokio_tungstenite::connect_async(url))
        .await
        .unwrap_err();
    let WsError::Http(response) = error else {
        panic!("expected an HTTP answer, got {error}");
    };
    assert_eq!(response.status(), StatusCode::OK);
    gateway.stop().await;
}

#[tokio::test]
async fn a_websocket_reaches_an_https_backend_that_offers_http2_over_http1() {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca_bundle = dir.path().join("backend.pem");
    std::fs::write(&ca_bundle, certified.cert.pem()).unwrap();
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()).into();
    let mut config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![certified.cert.der().clone()], key)
    .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let (backend, mut seen) = websocket_backend_with(Some(acceptor)).await;
    let gateway = TestGateway::start_with(&format!("https://localhost:{}", backend.port()), |raw| {
        raw.backend_ca_bundle = Some(ca_bundle.clone());
    })
    .await;
    let url = format!("ws://{}/-/cable", gateway.address);
    let (mut socket, _) = within(5, "the handshake", tokio_tungstenite::connect_async(url))
        .await
        .unwrap();
    assert_eq!(next_message(&mut socket).await, Message::text("welcome"));
    socket.send(Message::binary(vec![1, 2, 3])).await.unwrap();
    assert_eq!(next_message(&mut socket).await, Message::binary(vec![1, 2, 3]));
    assert_eq!(
        seen.recv().await.unwrap().headers["host"],
        format!("localhost:{}", backend.port())
    );
    socket.close(None).await.unwrap();
    gateway.stop().await;
}

/// Reads one response (head and a `Content-Length` body) from a raw connection: its head and body.
async fn read_response(stream: &mut tokio::net::TcpStream) -> (String, Vec<u8>) {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        let read = within(5, "a response head", stream.read(&mut byte))
            .await
            .unwrap();
        assert_eq!(read, 1, "closed after {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let length: usize = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .expect("a Content-Length");
    let mut body = vec![0u8; length];
    within(5, "a response body", stream.read_exact(&mut body))
        .await
        .unwrap();
    (head, body)
}

#[tokio::test]
async fn an_upgrade_answered_without_101_leaves_the_connection_to_plain_http_and_v3_never_upgrades() {
    use tokio::io::AsyncWriteExt;
    let origin = common::origin::Origin::start().await;
    let gateway = TestGateway::start(&origin.url()).await;
    let mut stream = tokio::net::TcpStream::connect(gateway.address).await.unwrap();
    stream
        .write_all(
            b"GET /-/cable HTTP/1.1\r\nHost: gate.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
              Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        )
        .await
        .unwrap();
    let (head, body) = read_response(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    let echo: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(echo["headers"]["upgrade"], "websocket");
    assert_eq!(echo["headers"]["connection"], "upgrade");
    assert_eq!(echo["headers"]["sec-websocket-version"], "13");

    // The same connection goes on with the next request.
    stream
        .write_all(b"GET /api/v4/version HTTP/1.1\r\nHost: gate.example\r\n\r\n")
        .await
        .unwrap();
    let (head, body) = read_response(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    let echo: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(echo["target"], "/api/v4/version");
    assert!(echo["headers"].get("upgrade").is_none(), "{echo}");

    // A V3 route is never upgraded: forwarded with the prefix changed, it loses both headers.
    stream
        .write_all(
            b"GET /api/v3/no/such/route HTTP/1.1\r\nHost: gate.example\r\nConnection: Upgrade\r\n\
              Upgrade: websocket\r\n\r\n",
        )
        .await
        .unwrap();
    let (head, body) = read_response(&mut stream).await;
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    let echo: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(echo["target"], "/api/v4/no/such/route");
    assert!(echo["headers"].get("upgrade").is_none(), "{echo}");
    assert!(echo["headers"].get("connection").is_none(), "{echo}");
    gateway.stop().await;
}
