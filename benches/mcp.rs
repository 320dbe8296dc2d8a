//! `pyward mcp` against the library, in one run: the same jobs on a one-worker pool of
//! one tenant, once through `Executor::run` and once as MCP `tools/call` requests over
//! the server's stdio (newline-delimited JSON-RPC, written and read here, so the
//! client adds nothing but a pipe), calls alternating.
//!
//! Run: `cargo build --release --workspace --bins && cargo bench --bench mcp` (`make
//! bench` does both). `PYWARD_BENCH_SCALE=0.1` shortens it for a trial.
//!
//! - **no figure**: `run_table_job` writing a text file vs the same job in the library.
//! - **typical figure**: `make_figure` (a PNG within the image bound, sent as it is) vs
//!   the library. Target (issue 39): MCP adds under 1 ms beyond the image downscale.
//! - **large figure** (2400×1800 px): `make_figure` downscales it to the bound; what it
//!   adds beyond the typical figure's overhead is the downscale, on its own line.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use pyward::{Executor, Job};
use serde_json::{json, Value};

#[path = "common/processes.rs"]
mod processes;
#[path = "common/report.rs"]
mod report;

use processes::{release_binary, Killed};

const TYPICAL: &str = include_str!("../tests/data/figures/02_typical_line_scatter_legend.py");
/// A job that draws nothing.
const NO_FIGURE: &str = "np.savetxt(OUT, [1.0])\n";
/// A figure past the image bound's 1,500 px long side: the answer's image is downscaled.
const LARGE: &str = "plt.figure(figsize=(24, 18), dpi=100)\n\
                     plt.plot(np.sin(np.linspace(0, 20, 2000)))\nplt.savefig(OUT)\n";
const TENANT: &str = "bench";

/// `pyward mcp` on stdio, spoken to line by line.
struct Server {
    _process: Killed,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(src: &std::path::Path, out: &std::path::Path) -> Server {
        let mut child = Command::new(release_binary("pyward"))
            .arg("mcp")
            .arg("--src")
            .arg(src)
            .arg("--out")
            .arg(out)
            .args(["--workers", "1", "--no-record", "--overwrite"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("pyward mcp starts");
        let to = child.stdin.take().expect("stdin");
        let from = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = Server {
            _process: Killed(child),
            to,
            from,
            next_id: 0,
        };
        server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            }),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("json");
        line.push(b'\n');
        self.to.write_all(&line).expect("writing to pyward mcp");
        self.to.flush().expect("flushing to pyward mcp");
    }

    /// Sends a request and returns its result and the answer's size on the wire,
    /// skipping notifications.
    fn request(&mut self, method: &str, params: Value) -> (Value, usize) {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.from.read_line(&mut line).expect("reading pyward mcp");
            assert!(n > 0, "pyward mcp closed its stdout");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return (message["result"].clone(), line.len());
            }
        }
    }

    /// One tool call that must succeed; its answer in bytes on the wire is returned.
    fn call(&mut self, tool: &str, arguments: Value) -> usize {
        let (result, bytes) =
            self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_ne!(result["isError"], true, "{tool}: {result}");
        bytes
    }
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let quick = std::env::args().any(|a| a == "--test");
    let mut rep = report::Report::new("mcp", "cargo bench --bench mcp");
    let dirs = tempfile::tempdir().expect("temp dir");
    let (src, out) = (dirs.path().join("src"), dirs.path().join("out"));
    std::fs::create_dir_all(&src).expect("src dir");
    let exec = Executor::builder()
        .worker_program(env!("CARGO_BIN_EXE_pyward-worker"))
        .workers(1)
        .build()
        .expect("pool starts");
    let mut server = Server::start(&src, &out);

    let workloads: [(&str, &str, &str, &str); 3] = [
        ("no figure", "run_table_job", "values.txt", NO_FIGURE),
        ("typical figure", "make_figure", "typical", TYPICAL),
        ("large figure (downscaled)", "make_figure", "large", LARGE),
    ];
    let n = if quick { 3 } else { report::iterations(40, 5) };
    println!("pyward mcp vs the library, one worker, one tenant, {n} calls each, alternating");
    let mut overheads = Vec::new();
    for (workload, tool, name, code) in workloads {
        let library_job = || {
            let mut job = Job::new(code).tenant(TENANT);
            if tool == "run_table_job" {
                job = job.out_name(name);
            }
            let o = exec.run(job).expect("library job");
            assert!(o.is_success(), "{workload}: {:?}", o.failure());
        };
        let arguments = json!({"name": name, "code": code});
        // First uses (imports, the worker's first figure of this kind) are not measured.
        for _ in 0..3 {
            library_job();
            server.call(tool, arguments.clone());
        }
        let (mut lib, mut mcp, mut bytes) = (Vec::new(), Vec::new(), 0);
        for _ in 0..n {
            lib.push(timed(library_job));
            mcp.push(timed(|| bytes = server.call(tool, arguments.clone())));
        }
        rep.latency("latency", workload, "library", &lib);
        rep.latency("latency", workload, "mcp (stdio)", &mcp)
            .note(format!("answer {bytes} bytes of JSON-RPC"));
        let ratio = rep.ratio("latency", workload, "mcp (stdio)", "library");
        let (l, m) = (report::summary_ms(&lib).0, report::summary_ms(&mcp).0);
        rep.value("overhead", workload, "mcp - library", "ms", m - l)
            .note("median of MCP calls less median of library calls");
        println!(
            "  {workload:28} library {l:8.2} ms   mcp {m:8.2} ms   +{:.2} ms ({ratio:.3}x)   answer {bytes} bytes",
            m - l
        );
        overheads.push(m - l);
    }
    let downscale = overheads[2] - overheads[1];
    rep.value(
        "overhead",
        "image downscale",
        "large less typical",
        "ms",
        downscale,
    )
    .note("the large figure's MCP overhead less the typical figure's: the downscale");
    println!(
        "  MCP beyond the library: {:.2} ms (no figure), {:.2} ms (typical; target < 1 ms); \
         the downscale of a 2400x1800 figure: {downscale:.2} ms on its own",
        overheads[0], overheads[1]
    );
    rep.write();
}
