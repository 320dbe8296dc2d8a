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
use std::sync::Arc;

use clap::Args;
use pyward::gate;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{image, Config, Inner, Pool, Server};
use crate::service::Service;

/// The HTTP service at `/mcp`.
pub type McpService = StreamableHttpService<Server, LocalSessionManager>;

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
        let pool = Pool::Admitted(mount.admit);
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
        let manager = Arc::new(LocalSessionManager::default());
        let session = move || Ok(Server::session(Arc::clone(&inner), None));
        Ok(Some(StreamableHttpService::new(session, manager, http)))
    }
}
