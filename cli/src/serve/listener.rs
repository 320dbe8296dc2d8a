//! The accept loop: HTTP/1.1 on hyper with the limits a public listener needs — a cap on
//! open connections, a deadline for each request's headers (which also closes idle
//! keep-alive connections: slowloris), a cap on header count and size — and a graceful
//! stop that lets answers in progress finish.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

/// A client must send a request's headers within this time of starting it, and an idle
/// keep-alive connection is closed after it.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// At most this many headers a request.
const MAX_HEADERS: usize = 64;
/// Read buffer, and so the largest request head (line and headers).
const MAX_HEAD_BYTES: usize = 64 * 1024;
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
        .max_headers(MAX_HEADERS)
        .max_buf_size(MAX_HEAD_BYTES)
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

/// Resolves when `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is not `Send`; drop it here.
    let _ = stop.wait_for(|s| *s).await;
}
