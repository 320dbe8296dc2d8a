//! `pyward serve`: the warm pool as an HTTP service. One `Executor` behind an axum
//! router on hyper; the pool warms up while the server already answers (`/readyz` is
//! 503 until it is warm); SIGTERM drains (readiness false, no new jobs, jobs in flight
//! finish within the grace period, records written) and exits 0.
//!
//! With `--queue`, it also consumes jobs from a Redis stream ([`consumer`] over the
//! wire in [`queue`]) and takes queued jobs over HTTP ([`queued`]); with `--no-http` it
//! only consumes. Every job, whichever door it came through, runs through the job
//! service ([`crate::service`]) that [`state::App`] holds. With `--mcp-out`, `/mcp`
//! serves `pyward mcp`'s tools over streamable HTTP on the same pool
//! ([`crate::mcp::http`]).
//!
//! Modules: [`jobs`] (the job and check endpoints), [`runs`] (the run records and their
//! replay), [`pool`] (the pool view), [`page`] (the page at `/`), [`probes`] (health,
//! readiness, metrics), [`auth`], [`problem`] (error bodies), [`metrics`], [`openapi`],
//! [`state`], [`listener`] (connections and their limits), [`queue`], [`consumer`] and
//! [`queued`].

mod auth;
mod consumer;
mod jobs;
mod listener;
mod metrics;
mod openapi;
mod page;
mod pool;
mod probes;
mod problem;
mod queue;
mod queued;
mod request;
mod runs;
mod schemas;
mod state;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use clap::{Args, ValueEnum};
use pyward::record::Recorder;
use pyward::{gate, Backpressure, Executor, Isolation};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tower_http::timeout::RequestBodyTimeoutLayer;

use crate::mcp::http::{McpHttpArgs, McpService, Mount};

use problem::Problem;
use request::Limits;
use state::App;

/// `pyward serve`'s options.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on. Anything but loopback needs --token-file.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Worker processes (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    workers: Option<u16>,
    /// `reuse`: a worker serves many jobs (reset between them); `fresh`: every job gets
    /// a process that never ran another.
    #[arg(long, value_enum, default_value_t = IsolationArg::Reuse)]
    isolation: IsolationArg,
    /// Let a worker serve jobs of different tenants (and jobs without a tenant) one
    /// after another. Off by default: a worker that ran one tenant's code never runs
    /// another's, and a job without a `tenant` gets a process of its own. On, only the
    /// between-job reset stands between tenants: for one trust domain only.
    #[arg(long)]
    reuse_across_tenants: bool,
    /// File holding the bearer token clients must send (`Authorization: Bearer ...`).
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Allow listening beyond loopback without a token. Anyone who reaches the port can
    /// then run code in the pool.
    #[arg(long)]
    dangerously_allow_unauthenticated: bool,
    /// Largest request body, in MiB.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    max_body: u64,
    /// Longest pause while a request body arrives, in seconds; past it the request is
    /// answered 408. Longer lets slow clients finish; each stalled request holds a
    /// connection until then.
    #[arg(long, default_value_t = 30.0)]
    body_timeout: f64,
    /// Jobs that may wait for a worker; past it, 429 with Retry-After (default: one per
    /// worker, so an admitted job waits at most about one job's time). Deeper queues
    /// trade latency for fewer 429s.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    queue_depth: Option<u64>,
    /// Directory of run records (default: none written).
    #[arg(long)]
    records: Option<PathBuf>,
    /// Longest per-job deadline a request may ask for (and the default), in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Highest per-job memory ceiling a request may ask for (and the default), in MiB.
    #[arg(long, default_value_t = 2048)]
    memory: u64,
    /// After SIGTERM, how long jobs in flight may take to finish, in seconds.
    #[arg(long, default_value_t = 30.0)]
    grace: f64,
    /// Open connections at most; more wait in the listen backlog.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: u64,
    /// Log one JSON object per line instead of text.
    #[arg(long)]
    log_json: bool,
    /// Do not serve the page at `/` (the playground, run browser and pool view).
    #[arg(long)]
    no_page: bool,
    #[command(flatten)]
    queue: queue::QueueArgs,
    #[command(flatten)]
    mcp: McpHttpArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum IsolationArg {
    Reuse,
    Fresh,
}

/// Runs the server until SIGTERM or SIGINT; the process's exit code.
pub fn serve(args: ServeArgs) -> u8 {
    init_logging(args.log_json);
    match start(args) {
        Ok(code) => code,
        Err(message) => {
            tracing::error!("{message}");
            crate::exit::EXIT_USAGE
        }
    }
}

fn init_logging(json: bool) {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    // The MCP SDK logs each session's start and end at INFO: its warnings (a refused
    // Host or Origin) are what belongs in the server's log.
    let targets = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("rmcp", LevelFilter::WARN);
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(LevelFilter::INFO)
        .with_target(false);
    if json {
        builder
            .json()
            .flatten_event(true)
            .finish()
            .with(targets)
            .init();
    } else {
        builder.finish().with(targets).init();
    }
}

/// Checks the options, then serves; `Err` for options that cannot work.
fn start(args: ServeArgs) -> Result<u8, String> {
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err("--timeout must be a positive number of seconds".into());
    }
    if !(args.grace >= 0.0 && args.grace.is_finite()) {
        return Err("--grace must be a number of seconds".into());
    }
    if !(args.body_timeout > 0.0 && args.body_timeout <= 3600.0) {
        return Err("--body-timeout must be between 0 and 3600 seconds".into());
    }
    let token = args
        .token_file
        .as_deref()
        .map(auth::Token::from_file)
        .transpose()?;
    if token.is_none() && !args.listen.ip().is_loopback() && !args.dangerously_allow_unauthenticated
    {
        return Err(format!(
            "listening on {} (beyond loopback) needs --token-file; \
             --dangerously-allow-unauthenticated lets anyone who reaches the port run code",
            args.listen
        ));
    }
    let limits = Limits {
        max_timeout: Duration::from_secs_f64(args.timeout),
        max_memory_mib: args.memory,
        max_body: usize::try_from(args.max_body << 20).unwrap_or(usize::MAX),
        body_timeout: Duration::from_secs_f64(args.body_timeout),
    };
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = args.workers.map_or(cores, usize::from);
    let builder = Executor::builder()
        .workers(workers)
        .timeout(limits.max_timeout)
        .memory_limit_mib(args.memory)
        .queue_depth(
            args.queue_depth
                .map_or(workers, |d| usize::try_from(d).unwrap_or(usize::MAX)),
        )
        .backpressure(Backpressure::Reject)
        .isolation(match args.isolation {
            IsolationArg::Reuse => Isolation::Reuse,
            IsolationArg::Fresh => Isolation::Fresh,
        })
        .reuse_across_tenants(args.reuse_across_tenants);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("pyward-serve")
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let queue = match args.queue.url {
        // The connection manager starts its reconnecting task on the runtime.
        Some(_) => Some(Arc::new(
            runtime.block_on(async { queue::Queue::new(&args.queue) })?,
        )),
        None => None,
    };
    let policy = gate::Policy::figures();
    let recorder = args.records.map(Recorder::new);
    let app = Arc::new(App::new(policy, limits, recorder, queue));
    let mcp_stop = CancellationToken::new();
    let mcp = args.mcp.service(Mount {
        token: token.is_some(),
        max_body: app.limits.max_body,
        timeout_secs: args.timeout,
        memory_mib: args.memory,
        policy: &app.policy,
        service: app.service.clone(),
        admit: Arc::new(state::McpDoor(Arc::clone(&app))),
        stop: mcp_stop.clone(),
    })?;
    let router = router(Arc::clone(&app), token, !args.no_page, mcp);
    let grace = Duration::from_secs_f64(args.grace);
    let max_connections = usize::try_from(args.max_connections).unwrap_or(usize::MAX);
    let listen = (!args.queue.no_http).then_some(args.listen);
    let serving = run(
        app,
        router,
        builder,
        listen,
        max_connections,
        grace,
        &mcp_stop,
    );
    let code = runtime.block_on(serving);
    // A pool still warming up when a signal came: its thread is not waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(code)
}

/// Binds (unless `listen` is `None`: consume only), warms the pool in the background,
/// consumes the queue once warm (queue mode), serves until a signal, drains, stops.
async fn run(
    app: Arc<App>,
    router: Router,
    builder: pyward::ExecutorBuilder,
    listen: Option<SocketAddr>,
    max_connections: usize,
    grace: Duration,
    mcp_stop: &CancellationToken,
) -> u8 {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut server = None;
    if let Some(listen) = listen {
        let listener = match tokio::net::TcpListener::bind(listen).await {
            Ok(l) => l,
            Err(e) => {
                tracing::error!("cannot listen on {listen}: {e}");
                return crate::exit::EXIT_USAGE;
            }
        };
        let addr = listener.local_addr().map_or(listen, |a| a);
        // The first line on stdout, for scripts and tests that start the server on port 0.
        println!("pyward serve: listening on http://{addr}");
        tracing::info!(%addr, "listening; warming up the pool");
        let serving = listener::serve(listener, router, max_connections, stop_rx);
        server = Some(tokio::spawn(serving));
    }
    let warm = {
        let app = Arc::clone(&app);
        tokio::task::spawn_blocking(move || match builder.build() {
            Ok(executor) => {
                let warmup = executor.warmup().total;
                app.metrics.pool_warm(warmup);
                let workers = executor.workers();
                let _ = app.executor.set(executor);
                tracing::info!(
                    workers,
                    warmup_ms = warmup.as_millis() as u64,
                    "pool warm; ready"
                );
                Some(workers)
            }
            Err(e) => {
                tracing::error!("cannot start the worker pool: {e}");
                None
            }
        })
    };
    let mut consumer = None;
    let pool_failed = async {
        let Ok(Some(workers)) = warm.await else {
            return;
        };
        if let Some(queue) = &app.queue {
            tokio::spawn(queue::announcements(Arc::clone(queue)));
            let consuming = consumer::consume(Arc::clone(&app), Arc::clone(queue), workers);
            consumer = Some(tokio::spawn(consuming));
        }
        std::future::pending::<()>().await
    };
    let code = tokio::select! {
        signal = shutdown_signal() => {
            tracing::info!(signal, "draining: no new jobs; waiting for jobs in flight");
            0
        }
        () = pool_failed => crate::exit::EXIT_INFRA,
    };
    let left = app.drain(grace).await;
    if left > 0 {
        tracing::warn!(
            jobs = left,
            ?grace,
            "grace period over; cancelling jobs in flight"
        );
    }
    if let Some(consumer) = consumer {
        // Stops within one blocking read once the drain is seen.
        let _ = tokio::time::timeout(Duration::from_secs(5), consumer).await;
    }
    // MCP sessions end (their event streams too), and with them any call still running.
    mcp_stop.cancel();
    let _ = stop_tx.send(true);
    if let Some(server) = server {
        let _ = server.await;
    }
    tracing::info!("stopped");
    code
}

/// Waits for SIGTERM or SIGINT; the signal's name.
async fn shutdown_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot install the signal handlers; stop with SIGKILL");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}

/// The routes: jobs, check, runs, pool, metrics and MCP (with `--mcp-out`) behind the
/// token; probes, the API description and the page (a static shell that holds no data)
/// open.
fn router(
    app: Arc<App>,
    token: Option<auth::Token>,
    with_page: bool,
    mcp: Option<McpService>,
) -> Router {
    let max_body = app.limits.max_body;
    let body_timeout = app.limits.body_timeout;
    let mut protected = Router::new()
        .route("/v1/jobs", post(jobs::submit))
        .route("/v1/check", post(jobs::check))
        .route("/v1/jobs/{id}", get(queued::result))
        .route("/v1/runs", get(runs::list))
        .route("/v1/runs/{name}", get(runs::show))
        .route(
            "/v1/runs/{name}/attempts/{attempt}/{artifact}",
            get(runs::artifact),
        )
        .route("/v1/runs/{name}/replay", post(runs::replay))
        .route("/v1/pool", get(pool::pool))
        .route("/metrics", get(probes::metrics));
    if let Some(mcp) = mcp {
        protected = protected.route_service("/mcp", mcp);
    }
    let protected =
        protected.route_layer(middleware::from_fn_with_state(token, auth::require_token));
    let mut open = Router::new()
        .merge(protected)
        .route("/healthz", get(probes::healthz))
        .route("/readyz", get(probes::readyz))
        .route("/v1/openapi.json", get(openapi::openapi_json));
    if with_page {
        open = open.merge(page::routes());
    }
    open.fallback(not_found)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&app),
            refuse_announced_oversize,
        ))
        .layer(RequestBodyTimeoutLayer::new(body_timeout))
        .layer(middleware::from_fn(listener::refuse_large_heads))
        .layer(middleware::from_fn(problem::bare_errors_as_problems))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&app),
            count_response,
        ))
        .with_state(app)
}

async fn not_found() -> Response {
    Problem::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such route; see /v1/openapi.json",
    )
    .into_response()
}

/// 413 before reading a byte of a body whose announced length is over the limit (a
/// streamed body is cut off at the limit as it is read).
async fn refuse_announced_oversize(
    State(app): State<Arc<App>>,
    request: Request,
    next: Next,
) -> Response {
    let announced = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    match announced {
        Some(n) if n > app.limits.max_body as u64 => {
            request::body_too_large(&app.limits).into_response()
        }
        _ => next.run(request).await,
    }
}

/// Counts every answer by status.
async fn count_response(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    app.metrics.response(response.status().as_u16());
    response
}
