//! An axum service that runs one pyward job per request: the `Executor` goes into the
//! router's state as is (a cheap `Clone` handle), and a client that disconnects cancels
//! its job, because axum drops the handler's future and with it the `JobFuture`.
//!
//! ```sh
//! cargo run --example axum_service            # listens on 127.0.0.1:3000
//! curl --data-binary 'plt.plot([1, 3, 2]); plt.savefig(OUT)' localhost:3000/render -o fig.png
//! ```
//!
//! (`pyward serve` is the full service: auth, limits, queue mode, metrics.)

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use pyward::report::Report;
use pyward::{Executor, Job};

/// The figure as `image/png`, or the JSON report of what went wrong.
async fn render(State(exec): State<Executor>, code: Bytes) -> Response {
    match exec.run_async(Job::new(code.to_vec())).await {
        Ok(outcome) => match outcome.artifacts().first() {
            Some(png) if outcome.is_success() => {
                ([(header::CONTENT_TYPE, "image/png")], png.bytes.clone()).into_response()
            }
            // The job's own failure: 200, with the report a model can read.
            _ => axum::Json(Report::from_outcome(&outcome, false)).into_response(),
        },
        Err(e) => {
            let status = match e {
                pyward::Error::QueueFull { .. } => StatusCode::TOO_MANY_REQUESTS,
                _ => StatusCode::SERVICE_UNAVAILABLE,
            };
            (status, axum::Json(Report::from_error(&e, true))).into_response()
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".into());
    // Warm the pool before the runtime starts: build() blocks for a second or two.
    let exec = Executor::builder()
        .workers(2)
        .backpressure(pyward::Backpressure::Reject)
        .build()?;
    let app = Router::new()
        .route("/render", post(render))
        .with_state(exec);
    tokio::runtime::Runtime::new()?.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await?;
        println!("listening on {}", listener.local_addr()?);
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
    })?;
    Ok(())
}
