//! The accept loop: HTTP/1.1 on hyper with the limits a public listener needs — a cap on
//! open connections, a deadline for each request's headers (which also closes idle
//! keep-alive connections: slowloris), a cap on header count and size — and a graceful
//! stop that lets answers in progress finish.
//!
//! The header caps are enforced twice: by the router ([`refuse_large_heads`], a 431
//! problem like every other error), and by hyper at four times them, where hyper itself
//! answers a bare 431 before any route runs (it must stop reading somewhere).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use super::problem::Problem;

/// A client must send a request's headers within this time of starting it, and an idle
/// keep-alive connection is closed after it.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// At most this many headers a request.
const MAX_HEADERS: usize = 64;
/// The largest request head (line and headers).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// hyper's own caps (its read buffer bounds the head), past which it answers first.
const HYPER_HEAD_FACTOR: usize = 4;
/// After the stop, connections still open get this long to finish their answer.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `stop` turns true, then closes connections
/// gracefully.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    max_connections: usize,
    mut stop: watch::Receiver<bool>,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .max_headers(HYPER_HEAD_FACTOR * MAX_HEADERS)
        .max_buf_size(HYPER_HEAD_FACTOR * MAX_HEAD_BYTES)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(max_connections));
    loop {
        // A connection slot first: past the cap, new connections wait in the kernel's
        // backlog instead of costing descriptors and memory here.
        let permit = tokio::select! {
            p = Arc::clone(&slots).acquire_owned() => p.expect("the semaphore is never closed"),
            () = stopped(&mut stop) => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors, or the peer left before accept: wait, go on.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stopped(&mut stop) => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(CLOSE_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {CLOSE_TIMEOUT:?}; closing them");
    }
}

/// 431 for a request with more than [`MAX_HEADERS`] headers or a head larger than
/// [`MAX_HEAD_BYTES`].
pub async fn refuse_large_heads(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let head_bytes = request.uri().to_string().len()
        + (headers.iter())
            .map(|(k, v)| k.as_str().len() + v.len() + 4)
            .sum::<usize>();
    if headers.len() > MAX_HEADERS || head_bytes > MAX_HEAD_BYTES {
        let problem = Problem::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            format!(
                "{} headers, {head_bytes} bytes of request head: at most {MAX_HEADERS} headers and {} KiB",
                headers.len(),
                MAX_HEAD_BYTES >> 10
            ),
        );
        return problem.into_response();
    }
    next.run(request).await
}

/// Resolves when `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is not `Send`; drop it here.
    let _ = stop.wait_for(|s| *s).await;
}
