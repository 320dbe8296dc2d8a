//! MCP over streamable HTTP, mounted by `pyward serve` at `/mcp` when `--mcp-out` is
//! given: the stdio server's handler ([`Server`]), one per MCP session (so each session
//! is a tenant of its own), on the pool behind `/v1` ([`Pool::Admitted`]), behind the
//! same token, body limit and drain.
//!
//! The SDK checks `Host` and `Origin` before anything else (a page on another site, or
//! a DNS name rebound to 127.0.0.1, reaches a loopback server through the user's
//! browser; neither check stops a client that is not a browser). `Host` must be a
//! loopback name (`localhost`, `127.0.0.1`, `::1`, any port); a browser's `Origin`, when
//! sent, a loopback origin. `--mcp-allow-host` and `--mcp-allow-origin` add to these,
//! and need `--token-file`: with a token a rebound or cross-site request has no way to
//! send it, without one the loopback checks are all that stands between a web page
//! and the pool.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use clap::Args;
use futures_util::Stream;
use pyward::gate;
use rmcp::model::{ClientJsonRpcMessage, RequestId};
use rmcp::transport::common::server_side_http::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{RestoreOutcome, SessionId};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{image, Config, Inner, Pool, Server};
use crate::service::Service;

/// The HTTP service at `/mcp`.
pub type McpService = StreamableHttpService<Server, Sessions>;

/// `pyward serve`'s MCP options.
#[derive(Args, Debug)]
pub struct McpHttpArgs {
    /// Serve MCP (streamable HTTP) at /mcp, writing figures and tables to DIR (created
    /// when missing). Without it there is no /mcp.
    #[arg(long, value_name = "DIR")]
    mcp_out: Option<PathBuf>,
    /// Directory of input files for /mcp, readable by the code through srcpath('name').
    #[arg(long, value_name = "DIR", requires = "mcp_out")]
    mcp_src: Option<PathBuf>,
    /// The tools /mcp offers, comma-separated (default: all): make_figure,
    /// check_code, list_inputs, run_table_job.
    #[arg(long, value_name = "LIST", requires = "mcp_out")]
    mcp_tools: Option<String>,
    /// Replace a file of the same name in --mcp-out (default: the call fails).
    #[arg(long, requires = "mcp_out")]
    mcp_overwrite: bool,
    /// A Host (name or name:port) /mcp answers besides the loopback ones, e.g. the
    /// server's DNS name; repeatable. Needs --token-file.
    #[arg(long, value_name = "HOST", requires = "mcp_out")]
    mcp_allow_host: Vec<String>,
    /// A browser Origin (scheme://host:port, `:*` for any port) /mcp answers besides
    /// the loopback ones; repeatable. Needs --token-file.
    #[arg(long, value_name = "ORIGIN", requires = "mcp_out")]
    mcp_allow_origin: Vec<String>,
}

/// Hosts always allowed: loopback names, any port.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// Browser origins always allowed: pages served from loopback.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// What `pyward serve` hands over to mount `/mcp`.
pub struct Mount<'a> {
    /// Whether clients must send the bearer token.
    pub token: bool,
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// The per-job limits, as the tool descriptions state them.
    pub timeout_secs: f64,
    /// Memory limit per job, in MiB.
    pub memory_mib: u64,
    /// The gate policy.
    pub policy: &'a gate::Policy,
    /// The server's job service (records, metrics).
    pub service: Service,
    /// Admits jobs to the server's pool.
    pub admit: Arc<dyn super::Admit>,
    /// Cancelled when the server stops: every session ends.
    pub stop: CancellationToken,
}

impl McpHttpArgs {
    /// The service for `/mcp`, or `None` without `--mcp-out`; `Err` for options that
    /// cannot work.
    pub fn service(self, mount: Mount<'_>) -> Result<Option<McpService>, String> {
        let Some(out) = self.mcp_out else {
            return Ok(None);
        };
        let widened = !(self.mcp_allow_host.is_empty() && self.mcp_allow_origin.is_empty());
        if widened && !mount.token {
            return Err(
                "--mcp-allow-host and --mcp-allow-origin need --token-file: without \
                 a token, only the loopback Host and Origin checks keep a web page from \
                 running code in the pool"
                    .into(),
            );
        }
        let config = Config {
            src: self.mcp_src,
            out,
            tools: self.mcp_tools,
            overwrite: self.mcp_overwrite,
            timeout_secs: mount.timeout_secs,
            memory_mib: mount.memory_mib,
            image: image::Bound::default(),
            stdout_chars: super::DEFAULT_STDOUT_CHARS,
        };
        let pool = Pool::Admitted(Arc::clone(&mount.admit));
        let inner: Arc<Inner> =
            Arc::new(config.shared(pool, mount.service, mount.policy.clone(), "--mcp-")?);
        let hosts = LOOPBACK_HOSTS.iter().map(|h| h.to_string());
        let origins = LOOPBACK_ORIGINS.iter().map(|o| o.to_string());
        let http = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts.chain(self.mcp_allow_host))
            .with_allowed_origins(origins.chain(self.mcp_allow_origin))
            .enforce_origin_validation()
            .with_max_request_body_bytes(mount.max_body)
            .with_cancellation_token(mount.stop);
        let manager = Arc::new(Sessions {
            local: Arc::new(LocalSessionManager::default()),
            admit: mount.admit,
        });
        let session = move || Ok(Server::session(Arc::clone(&inner), None));
        Ok(Some(StreamableHttpService::new(session, manager, http)))
    }
}

/// The SDK's sessions in memory, where a call whose client went away is cancelled: the
/// SDK keeps a call's answer for the client to resume its stream, so a dropped stream
/// alone would let the job run on to its deadline. A stream dropped before its end is
/// a `notifications/cancelled` for its request (one that already ended is ignored).
/// And a drain waits for each request's answer stream to end, not only for its job:
/// the sessions end when the drain is over, and an answer not yet sent would be lost.
pub struct Sessions {
    local: Arc<LocalSessionManager>,
    admit: Arc<dyn super::Admit>,
}

type Local = LocalSessionManager;

impl SessionManager for Sessions {
    type Error = <Local as SessionManager>::Error;
    type Transport = <Local as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.local.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<rmcp::model::ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let request = match &message {
            ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        // Not admitted (warming up, draining): no job will run for it either.
        let in_flight = request.is_some().then(|| self.admit.admit().ok()).flatten();
        let stream = self.local.create_stream(id, message).await?;
        Ok(Watched {
            stream: Box::pin(stream),
            pending: request.map(|r| (Arc::clone(&self.local), id.clone(), r)),
            _in_flight: in_flight.map(|(guard, _)| guard),
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.local.restore_session(id).await
    }
}

/// A request's answer stream; dropped before its end, it cancels the request.
struct Watched<S> {
    stream: Pin<Box<S>>,
    /// The session and request to cancel, until the stream ends.
    pending: Option<(Arc<Local>, SessionId, RequestId)>,
    /// Counted in flight for a drain until the stream ends.
    _in_flight: Option<Box<dyn Send + Sync>>,
}

impl<S: Stream<Item = ServerSseMessage>> Stream for Watched<S> {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.stream.as_mut().poll_next(cx);
        if let Poll::Ready(None) = next {
            self.pending = None;
            self._in_flight = None;
        }
        next
    }
}

impl<S> Drop for Watched<S> {
    fn drop(&mut self) {
        let Some((sessions, session, request)) = self.pending.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let cancelled = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request, "reason": "the client went away"},
        });
        let Ok(cancelled) = serde_json::from_value::<ClientJsonRpcMessage>(cancelled) else {
            return;
        };
        runtime.spawn(async move {
            // A session already closed has nothing left to cancel.
            let _ = sessions.accept_message(&session, cancelled).await;
        });
    }
}
