//! A bare hyper 1 reverse proxy, the reference for svcgate's passthrough in `bench/run`.
//!
//! It owns nothing but what any hyper reverse proxy needs: one current-thread runtime, an accept loop, hyper's
//! HTTP/1 server and hyper-util's pooled client, built with the settings of svcgate's client for TLS backends
//! (`src/backend/upstream.rs`: `TokioExecutor`, a 90 s `pool_idle_timeout` on a `TokioTimer`, an `HttpConnector`
//! with `TCP_NODELAY` and a 5 s connect timeout; svcgate pools a cleartext backend's connections itself, in
//! `src/backend/pool.rs`, with the same idle and connect timeouts) and of svcgate's server (a `TokioTimer`, keep-alive, `TCP_NODELAY`
//! on accepted connections). Bodies stream both ways: the request's `Incoming` goes to the client as it is, and the
//! origin's `Incoming` comes back as it is. No rules, no logs, no metrics, no header hygiene: what svcgate adds over
//! this is what `bench/run`'s "svcgate / bare" rows measure.
//!
//! `bare-proxy LISTEN_ADDR ORIGIN_HOST:PORT`, e.g. `bare-proxy 127.0.0.1:18098 127.0.0.1:18090`.

use std::convert::Infallible;
use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{Either, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::http::uri::{Authority, PathAndQuery, Scheme};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;

/// svcgate's default `backend_pool_idle_timeout`.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// svcgate's default `backend_connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to pause after a failed accept (out of file descriptors and the like) instead of spinning.
const ACCEPT_PAUSE: Duration = Duration::from_millis(10);

/// The origin's answer as it streams in, or an empty 502 when it could not be reached.
type Reply = Response<Either<Incoming, Empty<Bytes>>>;

/// The pooled client and the origin every request goes to, shared by every connection.
struct Proxy {
    client: Client<HttpConnector, Incoming>,
    origin: Authority,
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(origin), None) = (args.next(), args.next(), args.next()) else {
        return Err("usage: bare-proxy LISTEN_ADDR ORIGIN_HOST:PORT".into());
    };
    let listen: SocketAddr = listen.parse()?;
    let origin: Authority = origin.parse()?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve(listen, origin))?;
    Ok(())
}

/// Accepts connections on `listen` for ever and forwards each request to `origin`.
async fn serve(listen: SocketAddr, origin: Authority) -> std::io::Result<()> {
    let listener = TcpListener::bind(listen).await?;
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
    let client = Client::builder(TokioExecutor::new())
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .pool_timer(TokioTimer::new())
        .build(connector);
    let proxy = Arc::new(Proxy { client, origin });
    let mut server = http1::Builder::new();
    server.timer(TokioTimer::new()).keep_alive(true);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _peer)) => stream,
            Err(error) => {
                eprintln!("bare-proxy: accept failed: {error}");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        // Nagle's delay would hold back small responses; failure to set it is harmless.
        drop(stream.set_nodelay(true));
        let proxy = Arc::clone(&proxy);
        let server = server.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| forward(Arc::clone(&proxy), request));
            // A client that goes away mid-request is not the proxy's failure: nothing to report.
            drop(server.serve_connection(TokioIo::new(stream), service).await);
        });
    }
}

/// Sends `request` to the origin with the same path and query and hands back its answer, streaming.
async fn forward(proxy: Arc<Proxy>, mut request: Request<Incoming>) -> Result<Reply, Infallible> {
    let path = request
        .uri()
        .path_and_query()
        .cloned()
        .unwrap_or_else(|| PathAndQuery::from_static("/"));
    let mut parts = hyper::http::uri::Parts::default();
    parts.scheme = Some(Scheme::HTTP);
    parts.authority = Some(proxy.origin.clone());
    parts.path_and_query = Some(path);
    match Uri::from_parts(parts) {
        Ok(uri) => *request.uri_mut() = uri,
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    }
    match proxy.client.request(request).await {
        Ok(response) => Ok(response.map(Either::Left)),
        Err(_) => Ok(status(StatusCode::BAD_GATEWAY)),
    }
}

/// An empty answer with `code`.
fn status(code: StatusCode) -> Reply {
    let mut response = Response::new(Either::Right(Empty::new()));
    *response.status_mut() = code;
    response
}
