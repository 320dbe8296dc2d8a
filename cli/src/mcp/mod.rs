//! `pyward mcp`: the warm pool as tools an agent calls, over the Model Context Protocol
//! on stdio (the official Rust SDK, `rmcp`). An agent host starts it (`pyward mcp --src
//! DIR --out DIR`) and calls `make_figure`, `check_code`, `list_inputs` and
//! `run_table_job` ([`tools`]). The same handler serves streamable HTTP at `/mcp` in
//! `pyward serve` ([`http`]), on the server's pool.
//!
//! One pool for the server's life: it warms in the background while the host
//! initializes, and every job goes through the job service ([`crate::service`], door
//! [`Door::Mcp`]) under one tenant for the session, so the session's jobs reuse a warm
//! worker that no other session's code ever ran in. Records are written as for `pyward
//! run` (`--runs`, `--no-record`). A figure comes back as an image bounded in size
//! ([`image`]), its description and the code's output as text, and a link to the
//! full-size file written under `--out` through [`OutputDir`]; a failure is a tool
//! error whose text is the job's feedback, exactly. When the host closes stdin the
//! server stops: a job still running is cancelled and the workers are stopped.

pub mod http;
mod image;
mod inputs;
mod tools;

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use clap::Args;
use pyward::output_dir::{Existing, OutputDir};
use pyward::record::Recorder;
use pyward::report::Report;
use pyward::validate::Expectations;
use pyward::{gate, Artifact, Executor, Job};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, Resource,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

use crate::exit::{EXIT_INFRA, EXIT_USAGE};
use crate::service::{self, Door, Observer, Service};
use tools::{Kind, ToolName};

/// Characters of the code's printed output a tool answer carries, by default.
pub const DEFAULT_STDOUT_CHARS: usize = 2000;

/// `pyward mcp`'s options.
#[derive(Args, Debug)]
pub struct McpArgs {
    /// Directory of input files, readable by the code through srcpath('name').
    #[arg(long)]
    src: Option<PathBuf>,
    /// Directory the figures and tables are written to (created when missing).
    #[arg(long)]
    out: PathBuf,
    /// The tools offered, comma-separated (default: all): make_figure, check_code,
    /// list_inputs, run_table_job.
    #[arg(long, value_name = "LIST")]
    tools: Option<String>,
    /// Replace a file of the same name in --out (default: the call fails).
    #[arg(long)]
    overwrite: bool,
    /// Worker processes.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// Per-job wall-clock limit, in seconds.
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
    /// Memory ceiling per worker, in MiB.
    #[arg(long, default_value_t = 2048)]
    memory: u64,
    /// Longest side of the image a figure comes back as, in pixels (the file written
    /// to --out keeps the figure's own size).
    #[arg(long, default_value_t = image::DEFAULT_MAX_SIDE, value_parser = clap::value_parser!(u32).range(64..=20000))]
    image_max_side: u32,
    /// Largest image a figure comes back as, in bytes of PNG (about 4/3 as many
    /// characters of base64).
    #[arg(long, default_value_t = image::DEFAULT_MAX_BYTES, value_parser = clap::value_parser!(u64).range(4096..=(64 << 20)))]
    image_max_bytes: u64,
    /// Characters of the code's printed output sent back.
    #[arg(long, default_value_t = DEFAULT_STDOUT_CHARS)]
    stdout_chars: usize,
    /// Directory of run records.
    #[arg(long, default_value = "runs")]
    runs: PathBuf,
    /// Do not write run records.
    #[arg(long)]
    no_record: bool,
}

/// Serves MCP on stdin and stdout until the host closes stdin; the exit code.
pub fn mcp(args: McpArgs) -> u8 {
    match start(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("pyward mcp: {message}");
            EXIT_USAGE
        }
    }
}

fn start(args: McpArgs) -> Result<u8, String> {
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err("--timeout must be a positive number of seconds".into());
    }
    let policy = gate::Policy::figures();
    let builder = Executor::builder()
        .workers(usize::from(args.workers))
        .timeout(Duration::from_secs_f64(args.timeout))
        .memory_limit_mib(args.memory)
        .policy(policy.clone());
    let recorder = (!args.no_record).then(|| Recorder::new(args.runs));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("pyward-mcp")
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let (ready, pool) = watch::channel(None);
    let (stdin_closed, closed) = watch::channel(false);
    let config = Config {
        src: args.src,
        out: args.out,
        tools: args.tools,
        overwrite: args.overwrite,
        timeout_secs: args.timeout,
        memory_mib: args.memory,
        image: image::Bound {
            max_side: args.image_max_side,
            max_bytes: usize::try_from(args.image_max_bytes).unwrap_or(usize::MAX),
        },
        stdout_chars: args.stdout_chars,
    };
    let service = Service::new(recorder, Arc::new(Stderr));
    let shared = config.shared(Pool::Own(pool), service, policy, "--")?;
    let server = Server::session(Arc::new(shared), Some(closed));
    let code = runtime.block_on(async move {
        // The pool warms while the host initializes; a call waits for it.
        tokio::task::spawn_blocking(move || {
            let built = builder
                .build()
                .map_err(|e| format!("cannot start the pool: {e}"));
            if let Err(e) = &built {
                eprintln!("pyward mcp: {e}");
            }
            let _ = ready.send(Some(built));
        });
        serve(server, stdin_closed).await
    });
    // Jobs still running were cancelled with their calls; a pool still warming up is not
    // waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(code)
}

/// Serves until stdin closes.
async fn serve(server: Server, stdin_closed: watch::Sender<bool>) -> u8 {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let stdin = EofWatch {
        inner: stdin,
        closed: stdin_closed,
    };
    let running = match server.serve((stdin, stdout)).await {
        Ok(running) => running,
        Err(e) => {
            eprintln!("pyward mcp: the session did not start: {e}");
            return EXIT_INFRA;
        }
    };
    match running.waiting().await {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("pyward mcp: {e}");
            EXIT_INFRA
        }
    }
}

/// Stdin, telling when it reaches its end: the session is over, and a job still running
/// is cancelled at once (the SDK would let it run on for a few seconds before it
/// cancels the call).
struct EofWatch<R> {
    inner: R,
    closed: watch::Sender<bool>,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofWatch<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        let at_end = matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() == before;
        if (at_end && buf.remaining() > 0) || matches!(read, Poll::Ready(Err(_))) {
            self.closed.send_replace(true);
        }
        read
    }
}

/// A tenant of its own for this server's session: its jobs share warm workers that no
/// other session's code ran in.
fn session_tenant() -> String {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("mcp-{hex}")
}

/// `file://` URI of a directory, with a trailing slash.
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(char::from(*b));
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// The MCP door's observer: a record that cannot be written is said on stderr.
struct Stderr;

impl Observer for Stderr {
    fn record_failed(&self, message: &str) {
        eprintln!("pyward mcp: {message}");
    }
}

/// What the tools are set up with, from `pyward mcp`'s options or `pyward serve`'s
/// `--mcp-*` ones.
pub struct Config {
    /// Directory of input files.
    pub src: Option<PathBuf>,
    /// Directory the figures and tables are written to (created when missing).
    pub out: PathBuf,
    /// The tools offered (comma-separated names; `None`: all).
    pub tools: Option<String>,
    /// Whether a file of the same name in `out` is replaced.
    pub overwrite: bool,
    /// Per-job wall-clock limit, in seconds (as the descriptions say it).
    pub timeout_secs: f64,
    /// Per-job memory limit, in MiB (as the descriptions say it).
    pub memory_mib: u64,
    /// The bound on the image a figure comes back as.
    pub image: image::Bound,
    /// Characters of the code's printed output sent back.
    pub stdout_chars: usize,
}

impl Config {
    /// The state every session shares; `flag` prefixes the option names in errors
    /// (`--` or `--mcp-`).
    pub fn shared(
        self,
        pool: Pool,
        service: Service,
        policy: gate::Policy,
        flag: &str,
    ) -> Result<Inner, String> {
        let tools = match &self.tools {
            Some(list) => tools::parse_list(list).map_err(|e| e.replacen("--", flag, 1))?,
            None => ToolName::ALL.to_vec(),
        };
        if let Some(src) = &self.src {
            if !src.is_dir() {
                return Err(format!("{flag}src {} is not a directory", src.display()));
            }
        }
        let out = OutputDir::create(&self.out).map_err(|e| format!("{flag}out: {e}"))?;
        let out_abs = std::fs::canonicalize(&self.out).map_err(|e| format!("{flag}out: {e}"))?;
        let settings = tools::Settings {
            modules: policy.allowed_imports(),
            timeout_secs: self.timeout_secs,
            memory_mib: self.memory_mib,
            image_side: self.image.max_side,
            image_bytes: self.image.max_bytes,
            stdout_chars: self.stdout_chars,
            max_code_bytes: policy.max_source_bytes(),
            overwrite: self.overwrite,
        };
        Ok(Inner {
            pool,
            service,
            policy,
            src: self.src,
            out,
            out_uri: file_uri(&out_abs),
            tools,
            settings,
            image: self.image,
            calls: AtomicU64::new(0),
        })
    }
}

/// Where the executor comes from.
pub enum Pool {
    /// `pyward mcp`'s own pool: the executor once warm (or why it could not start).
    Own(watch::Receiver<Option<Result<Executor, String>>>),
    /// A pool the server admits jobs to (`pyward serve`'s: counted for its drain).
    Admitted(Arc<dyn Admit>),
}

/// A server that admits jobs to its pool one at a time.
pub trait Admit: Send + Sync {
    /// The executor for one job and a guard held while it runs; `Err`: why no job is
    /// taken now (warming up, draining).
    fn admit(&self) -> Result<(Box<dyn Send + Sync>, Executor), String>;
}

/// The server's state, shared by every session and call.
pub struct Inner {
    pool: Pool,
    service: Service,
    policy: gate::Policy,
    src: Option<PathBuf>,
    out: OutputDir,
    out_uri: String,
    tools: Vec<ToolName>,
    settings: tools::Settings,
    image: image::Bound,
    calls: AtomicU64,
}

/// The MCP server of one session: a tenant of its own, the shared state.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
    tenant: String,
    /// Whether stdin has closed (the host went away); `None` over HTTP, where the end
    /// of the session cancels its calls.
    closed: Option<watch::Receiver<bool>>,
}

impl Server {
    /// A new session on `inner`, with a tenant of its own.
    pub fn session(inner: Arc<Inner>, closed: Option<watch::Receiver<bool>>) -> Server {
        Server {
            inner,
            tenant: session_tenant(),
            closed,
        }
    }
}

/// A tool answer that is an error the model reads.
fn tool_error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("pyward", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Run Python plotting and table code in a sandbox with a warm interpreter. \
                 list_inputs shows the data files; make_figure runs code and returns the \
                 figure; check_code checks code without running it; run_table_job writes and \
                 checks a table. A failed call's text says how to fix the code.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let tool = ToolName::parse(name).filter(|t| self.inner.tools.contains(t))?;
        Some(self.inner.settings.tool(tool))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = ToolName::parse(&request.name).filter(|t| self.inner.tools.contains(t))
        else {
            let names: Vec<&str> = self.inner.tools.iter().map(|t| t.as_str()).collect();
            let shown: String = request.name.chars().take(60).collect();
            return Err(ErrorData::invalid_params(
                format!("unknown tool {shown:?}; the tools: {}", names.join(", ")),
                None,
            ));
        };
        let args = request.arguments.as_ref();
        let answer = match tool {
            ToolName::MakeFigure => self.make_figure(args, &context).await,
            ToolName::CheckCode => self.check_code(args).await,
            ToolName::ListInputs => self.list_inputs(args).await,
            ToolName::RunTableJob => self.run_table_job(args, &context).await,
        };
        Ok(answer.unwrap_or_else(tool_error).into())
    }
}

/// A string argument (checked by [`tools::arguments`]).
fn text(value: &Option<Value>) -> &str {
    value.as_ref().and_then(Value::as_str).unwrap_or_default()
}

impl Server {
    fn tools(&self) -> Vec<Tool> {
        let inner = &self.inner;
        inner
            .tools
            .iter()
            .map(|t| inner.settings.tool(*t))
            .collect()
    }

    /// The warm executor (waiting for its own pool's warm-up), with the server's guard
    /// for the job.
    async fn executor(&self) -> Result<(Option<Box<dyn Send + Sync>>, Executor), String> {
        let pool = match &self.inner.pool {
            Pool::Own(pool) => pool,
            Pool::Admitted(server) => return server.admit().map(|(g, e)| (Some(g), e)),
        };
        let mut pool = pool.clone();
        let ready = pool
            .wait_for(Option::is_some)
            .await
            .map_err(|_| "the pool is gone".to_string())?;
        let executor = ready
            .clone()
            .unwrap_or_else(|| Err("the pool is gone".into()))?;
        Ok((None, executor))
    }

    /// A job of this session: the tenant and the inputs.
    fn job(&self, code: &str) -> Job {
        let mut job = Job::new(code.as_bytes().to_vec()).tenant(&self.tenant);
        if let Some(src) = &self.inner.src {
            job = job.src_dir(src);
        }
        job
    }

    /// Runs `job` through the job service; sends progress each second when the client
    /// asked for it; a cancelled call (or a closed session) cancels the job. `Err` is the
    /// tool error's text: the job's feedback when it failed.
    async fn run(
        &self,
        job: Job,
        context: &RequestContext<RoleServer>,
    ) -> Result<service::Done, String> {
        let (_admitted, executor) = self.executor().await?;
        let id = format!(
            "mcp-{}",
            self.inner.calls.fetch_add(1, Ordering::Relaxed) + 1
        );
        let request = service::Request::new(job, Door::Mcp, id.clone());
        let running = self.inner.service.run(&executor, request);
        tokio::pin!(running);
        let progress = context.meta.get_progress_token();
        let start = tokio::time::Instant::now();
        let second = Duration::from_secs(1);
        let mut tick = tokio::time::interval_at(start + second, second);
        let closed = self.closed.clone();
        let session_over = async move {
            match closed {
                // (Its guard is `!Send`: dropped here, before any other await.)
                Some(mut closed) => {
                    let _ = closed.wait_for(|c| *c).await.map(|_| ());
                }
                None => std::future::pending().await,
            }
        };
        tokio::pin!(session_over);
        let done = loop {
            tokio::select! {
                done = &mut running => break done,
                () = context.ct.cancelled() => {
                    self.inner.service.cancelled(Door::Mcp, &id, start.elapsed());
                    return Err("cancelled".into());
                }
                () = &mut session_over => {
                    self.inner.service.cancelled(Door::Mcp, &id, start.elapsed());
                    return Err("the session ended".into());
                }
                _ = tick.tick(), if progress.is_some() => {
                    if let Some(token) = &progress {
                        let elapsed = start.elapsed().as_secs_f64().floor();
                        let note = ProgressNotificationParam::new(token.clone(), elapsed)
                            .with_message(format!("running for {elapsed:.0} s"));
                        let _ = context.peer.notify_progress(note).await;
                    }
                }
            }
        };
        let done = done.map_err(|e| Report::from_error(&e, true).feedback)?;
        match done.outcome.feedback() {
            Some(feedback) => Err(feedback),
            None => Ok(done),
        }
    }

    /// Refuses a name already taken in --out (unless --overwrite).
    fn free(&self, name: &str) -> Result<(), String> {
        // The name was checked as one plain file name: this is a look, never a write.
        let taken = self.inner.out.path().join(name).symlink_metadata().is_ok();
        if taken && !self.inner.settings.overwrite {
            return Err(format!(
                "a file named {name:?} is already in the output directory and is not \
                 replaced: choose another name"
            ));
        }
        Ok(())
    }

    fn existing(&self) -> Existing {
        if self.inner.settings.overwrite {
            Existing::Replace
        } else {
            Existing::Refuse
        }
    }

    /// Writes `bytes` as `name` under --out; its `resource_link`.
    fn write(&self, name: &str, bytes: &[u8], media_type: &str) -> Result<ContentBlock, String> {
        self.inner
            .out
            .write_with(name, bytes, self.existing())
            .map_err(|e| match e {
                pyward::output_dir::OutputError::Io { source, .. }
                    if source.kind() == std::io::ErrorKind::AlreadyExists =>
                {
                    format!(
                        "a file named {name:?} is already in the output directory and is not \
                         replaced: choose another name"
                    )
                }
                e => format!("cannot write {name:?}: {e}"),
            })?;
        let uri = format!("{}{}", self.inner.out_uri, file_uri_part(name));
        let link = Resource::new(uri, name)
            .with_mime_type(media_type)
            .with_size(bytes.len() as u64);
        Ok(ContentBlock::resource_link(link))
    }

    /// What the code printed, and what it wrote to stderr (its warnings and log
    /// lines), each capped.
    fn printed(&self, outcome: &pyward::Outcome) -> Vec<String> {
        let cap = self.inner.settings.stdout_chars;
        let shown = |title: &str, text: &str, dropped: u64| {
            let text = text.trim_end();
            if text.is_empty() {
                return None;
            }
            let count = text.chars().count();
            let mut shown: String = text.chars().take(cap).collect();
            let more = (count.saturating_sub(cap)) as u64 + dropped;
            if more > 0 {
                shown.push_str(&format!("\n... ({more} more characters not shown)"));
            }
            Some(format!("{title}:\n{shown}"))
        };
        [
            shown("Printed", &outcome.stdout, outcome.stdout_dropped),
            shown("Warnings and log lines (stderr)", &outcome.stderr, 0),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    async fn make_figure(
        &self,
        args: Option<&rmcp::model::JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        let expected = [("name", Kind::Text, true), ("code", Kind::Text, true)];
        let [name, code] = <[_; 2]>::try_from(tools::arguments(args, &expected)?)
            .map_err(|_| "arguments".to_string())?;
        let name = text(&name);
        tools::check_name(name)?;
        let file = if name.to_ascii_lowercase().ends_with(".png") {
            name.to_string()
        } else {
            format!("{name}.png")
        };
        tools::check_name(&file)?;
        self.free(&file)?;
        let job = self.job(text(&code)).out_name(file.clone());
        let done = self.run(job, context).await?;
        let artifacts = done.outcome.result.as_deref().unwrap_or_default();
        let figure = pyward::validate::main_figure(&file, artifacts)
            .or_else(|| artifacts.iter().find(|a| a.media_type == "image/png"))
            .filter(|a| a.media_type == "image/png");
        let Some(figure) = figure else {
            let saved: Vec<&str> = artifacts.iter().map(|a| a.name.as_str()).collect();
            return Err(format!(
                "The code ran but saved no PNG figure (it saved: {}). Save the figure with \
                 plt.savefig(OUT).",
                if saved.is_empty() {
                    "nothing".to_string()
                } else {
                    saved.join(", ")
                }
            ));
        };
        let link = self.write(&file, &figure.bytes, "image/png")?;
        let bound = self.inner.image;
        let png = figure.bytes.clone();
        let bounded = tokio::task::spawn_blocking(move || image::bound(&png, bound))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("the figure does not decode as a PNG: {e}"))?;
        let mut lines = vec![match bounded.scaled_from {
            Some((w, h)) => format!(
                "Figure written to {file} ({w}x{h} px, {} bytes); the image here is scaled \
                 to {}x{} px.",
                figure.bytes.len(),
                bounded.width,
                bounded.height
            ),
            None => format!(
                "Figure written to {file} ({}x{} px, {} bytes).",
                bounded.width,
                bounded.height,
                figure.bytes.len()
            ),
        }];
        if let Some(description) = done.outcome.description() {
            lines.push(format!("Shows: {description}"));
        }
        lines.extend(self.printed(&done.outcome));
        let data = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bounded.png);
        Ok(CallToolResult::success(vec![
            ContentBlock::image(data, "image/png"),
            ContentBlock::text(lines.join("\n")),
            link,
        ]))
    }

    async fn check_code(
        &self,
        args: Option<&rmcp::model::JsonObject>,
    ) -> Result<CallToolResult, String> {
        let [code] = <[_; 1]>::try_from(tools::arguments(args, &[("code", Kind::Text, true)])?)
            .map_err(|_| "arguments".to_string())?;
        let code = text(&code).to_string();
        let policy = self.inner.policy.clone();
        let report = tokio::task::spawn_blocking(move || {
            Report::from_check(gate::check_bytes(code.as_bytes(), &policy), &policy)
        })
        .await
        .map_err(|e| e.to_string())?;
        let text = if report.is_ok() {
            "ok: the code passes the sandbox's checks (it has not run: make_figure runs it)."
                .to_string()
        } else {
            format!("{}: {}", report.status, report.feedback)
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    async fn list_inputs(
        &self,
        args: Option<&rmcp::model::JsonObject>,
    ) -> Result<CallToolResult, String> {
        tools::arguments(args, &[])?;
        let src = self.inner.src.clone();
        let text = tokio::task::spawn_blocking(move || inputs::describe(src.as_deref()))
            .await
            .map_err(|e| e.to_string())?;
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    async fn run_table_job(
        &self,
        args: Option<&rmcp::model::JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, String> {
        let expected = [
            ("name", Kind::Text, true),
            ("code", Kind::Text, true),
            ("expect", Kind::Texts, false),
            ("checks", Kind::ObjectOrText, false),
        ];
        let [name, code, expect, checks] = <[_; 4]>::try_from(tools::arguments(args, &expected)?)
            .map_err(|_| "arguments".to_string())?;
        let name = text(&name);
        tools::check_name(name)?;
        let lower = name.to_ascii_lowercase();
        if ![".csv", ".xlsx", ".json", ".txt"]
            .iter()
            .any(|s| lower.ends_with(s) && lower.len() > s.len())
        {
            return Err(format!(
                "name {name:?} is refused: a table job writes a file ending in .csv, .xlsx, \
                 .json or .txt (make_figure makes figures)"
            ));
        }
        let expectations = expectations(name, expect, checks)?;
        for artifact in &expectations.artifacts {
            self.free(artifact)?;
        }
        let job = self.job(text(&code)).expect(&expectations);
        let done = self.run(job, context).await?;
        let report = done.report(false);
        let artifacts: &[Artifact] = done.outcome.result.as_deref().unwrap_or_default();
        let previews = report.run.iter().flat_map(|r| &r.artifacts);
        let mut lines = Vec::new();
        let mut links = Vec::new();
        for (artifact, shown) in artifacts.iter().zip(previews) {
            links.push(self.write(&artifact.name, &artifact.bytes, &artifact.media_type)?);
            lines.push(format!(
                "Wrote {} ({} bytes).",
                serde_json::to_string(&artifact.name).unwrap_or_default(),
                artifact.bytes.len()
            ));
            if let Some(table) = &shown.table {
                lines.extend(
                    inputs::table_lines(table)
                        .into_iter()
                        .map(|l| format!("  {l}")),
                );
            }
        }
        if !expectations.tables.is_empty() {
            lines.push(format!(
                "Every declared check passed ({} table{}).",
                expectations.tables.len(),
                if expectations.tables.len() == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        lines.extend(self.printed(&done.outcome));
        let mut content = vec![ContentBlock::text(lines.join("\n"))];
        content.extend(links);
        Ok(CallToolResult::success(content))
    }
}

/// The declaration of `run_table_job`, as `pyward run --checks FILE --expect NAME`
/// builds it: `checks` (the expectations form as a JSON object, or the TOML text of a
/// checks file; or none) with `name` first among the artifacts, so that it is `OUT`,
/// then the `expect` names, then those the form lists.
fn expectations(
    name: &str,
    expect: Option<Value>,
    checks: Option<Value>,
) -> Result<Expectations, String> {
    let declared = match checks {
        Some(Value::String(toml)) => Expectations::from_toml(&toml),
        Some(Value::Object(mut form)) => {
            form.entry("version").or_insert(Value::from(1));
            Expectations::from_json(&Value::Object(form).to_string())
        }
        _ => Expectations::from_json(r#"{"version": 1}"#),
    };
    let mut declared = declared.map_err(|e| format!("checks: {e}"))?;
    let listed = expect
        .iter()
        .flat_map(|e| e.as_array().into_iter().flatten());
    let mut artifacts = vec![name.to_string()];
    let others = listed.filter_map(|a| a.as_str().map(String::from));
    for artifact in others.chain(std::mem::take(&mut declared.artifacts)) {
        if !artifacts.contains(&artifact) {
            artifacts.push(artifact);
        }
    }
    declared.artifacts = artifacts;
    // Read again as a whole, so that an `expect` name is checked as the form's are.
    Expectations::from_json(&declared.to_json()).map_err(|e| format!("expect: {e}"))
}

/// A file name as one segment of a URI path.
fn file_uri_part(name: &str) -> String {
    file_uri(Path::new(name))
        .trim_start_matches("file://")
        .trim_end_matches('/')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_escape_what_is_not_plain() {
        assert_eq!(file_uri(Path::new("/tmp/a b")), "file:///tmp/a%20b/");
        assert_eq!(file_uri_part("销售.png"), "%E9%94%80%E5%94%AE.png");
    }

    #[test]
    fn the_table_name_comes_first() {
        let e = expectations(
            "r.csv",
            Some(serde_json::json!(["y.csv", "r.csv"])),
            Some(serde_json::json!({"artifacts": ["x.csv", "r.csv"]})),
        )
        .unwrap();
        assert_eq!(e.artifacts, ["r.csv", "y.csv", "x.csv"]);
        let toml = "version = 1\n[[tables]]\nartifact = \"y.csv\"\nrow_count = 3\n";
        let e = expectations(
            "r.csv",
            Some(serde_json::json!(["y.csv"])),
            Some(serde_json::json!(toml)),
        )
        .unwrap();
        assert_eq!(e.artifacts, ["r.csv", "y.csv"]);
        assert_eq!(e.tables.len(), 1);
        assert_eq!(
            expectations("r.csv", None, None).unwrap().artifacts,
            ["r.csv"]
        );
        assert!(expectations("r.csv", None, Some(serde_json::json!({"version": 9}))).is_err());
        assert!(expectations("r.csv", None, Some(serde_json::json!("version = 9"))).is_err());
        assert!(expectations("r.csv", Some(serde_json::json!(["../x.csv"])), None).is_err());
    }
}
