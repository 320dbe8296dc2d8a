//! The worker program: embeds CPython, warms up, confines itself, then runs jobs.
//!
//! The supervisor starts workers as separate processes of a program that calls
//! [`main`]. A crate that depends on pyward gets one in either of two ways:
//!
//! - **A worker binary (recommended).** Two lines in `src/bin/pyward-worker.rs`:
//!
//!   ```no_run
//!   fn main() -> std::process::ExitCode {
//!       pyward::worker::main()
//!   }
//!   ```
//!
//!   `cargo build` puts `pyward-worker` next to your own binary, where the executor
//!   looks for it (build both: `cargo run --bin app` builds only `app`).
//! - **Your own binary as the worker.** [`run_if_worker`] as the first line of `main`:
//!   when the executor starts your program as a worker, the call never returns; otherwise
//!   it returns at once and the executor starts workers from your executable.
//!
//! The trade-off, honestly: seccomp limits which system calls a worker makes, not
//! which code it has mapped. A dedicated worker maps only pyward, pyo3 and libpython;
//! your own binary also maps everything it links (an HTTP stack, a database client...),
//! more code for an attacker who already escaped the Python layers to reuse, and any
//! code that runs before `main` (a `#[tokio::main]` runtime, static constructors) runs
//! in the worker before it is confined. pyward refuses to become a worker in a
//! process that already runs other threads. Use the dedicated binary for production,
//! the single binary where one artifact matters more.
//!
//! Either way the worker and the library must come from the same build: the worker
//! compares its build id with the one the executor passes at start-up and refuses to
//! run on a mismatch ([`Error::WorkerMismatch`](crate::Error::WorkerMismatch)).
//!
//! File descriptors: the supervisor talks on the worker's stdin and stdout. Before
//! anything else the worker moves the protocol to fresh descriptors at random high
//! numbers (see `fds`), points fd 0 at `/dev/null` and fd 1 at stderr, so that nothing a
//! job or a C library prints can corrupt a frame; fd 2 goes to the supervisor, which
//! keeps a bounded tail of it. Right before the first job every other descriptor is
//! closed but read-only files inside the read roots (`fds::close_strays`).

mod array;
mod audit;
// The worker's one room for the interpreter's C API (the other unsafe room is
// `crate::sys`).
#[allow(unsafe_code)]
mod cpython;
mod fds;
mod held;
mod modules;
mod zygote;

use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyModule};

use crate::fdpass::FdReader;
use crate::protocol::{
    self, ArtifactMeta, DoneMsg, HostMsg, InitMsg, InitStage, PyErrorInfo, RawPng, ReadyMsg,
    ResetMsg, RunMsg, Versions, WorkerMsg, PROTOCOL_VERSION,
};

/// The table of removed library APIs and their replacements the diagnosis quotes.
pub(crate) const MIGRATIONS: &str = include_str!("../../python/migrations.json");

/// The environment variable the supervisor sets on every process it starts as a worker
/// (or zygote). Its value is the library's build id.
pub(crate) const BUILD_ID_ENV: &str = "PYWARD_WORKER_BUILD_ID";

/// This library's build id: a hash of the crate's sources, the same in a worker program
/// and a host built from the same pyward.
pub const BUILD_ID: &str = env!("PYWARD_BUILD_ID");

/// Exit code of a worker refusing to run for the wrong library build (`EX_CONFIG`).
pub(crate) const EXIT_MISMATCH: u8 = 78;

/// Set by [`run_if_worker`]: the executor may start workers from the current executable.
static SELF_HOSTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process opted in to serve as its own worker program.
pub(crate) fn self_hosted() -> bool {
    SELF_HOSTED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Makes this program its own worker: call it as the **first line** of `main`, before
/// any thread or async runtime starts (with `#[tokio::main]` the runtime already runs:
/// write `main` by hand and build the runtime after this call).
///
/// In a process the executor started as a worker it runs the worker and exits; it never
/// returns. Anywhere else it returns at once, and from then on executors in this
/// process start workers from the current executable (unless
/// [`ExecutorBuilder::worker_program`](crate::ExecutorBuilder::worker_program) or
/// `PYWARD_WORKER` names another program). See the [module docs](self) for the
/// trade-off against a dedicated worker binary.
pub fn run_if_worker() {
    if std::env::var_os(BUILD_ID_ENV).is_none() {
        SELF_HOSTED.store(true, std::sync::atomic::Ordering::Relaxed);
        return;
    }
    if let Some(n) = other_threads() {
        eprintln!(
            "pyward-worker: this process already runs {n} other thread(s); call \
             pyward::worker::run_if_worker() first in main, before any runtime starts"
        );
        std::process::exit(70);
    }
    std::process::exit(i32::from(serve_process()));
}

/// The number of threads besides this one, when there are any.
fn other_threads() -> Option<usize> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let n: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()?;
    (n > 1).then(|| n - 1)
}

/// Entry point of a worker program (see the [module docs](self)): serves the supervisor
/// that started it on stdin/stdout, then returns the process's exit code.
pub fn main() -> ExitCode {
    ExitCode::from(serve_process())
}

/// The worker process from start to exit; returns its exit code.
fn serve_process() -> u8 {
    let started = Instant::now();
    match std::env::var(BUILD_ID_ENV) {
        Ok(expected) if expected == BUILD_ID => {}
        Ok(expected) => {
            eprintln!(
                "pyward-worker: this worker is pyward build {BUILD_ID}, the library that \
                 started it is build {expected}"
            );
            return EXIT_MISMATCH;
        }
        Err(_) => {
            eprintln!(
                "pyward-worker: this program is started by the pyward library \
                 (Executor::builder().build()), not by hand"
            );
            return 2;
        }
    }
    let (input, output) = match take_protocol_fds() {
        Ok(fds) => fds,
        Err(e) => {
            eprintln!("pyward-worker: cannot set up descriptors: {e}");
            return 70;
        }
    };
    let mut input = BufReader::new(FdReader::new(input));
    let mut output = BufWriter::new(output);
    match serve(&mut input, &mut output, started) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("pyward-worker: {e}");
            70
        }
    }
}

/// Moves the protocol off fds 0 and 1 (see the module docs), to random high numbers
/// where a probe of small numbers does not find it (see `fds`).
fn take_protocol_fds() -> std::io::Result<(File, File)> {
    let (input, output) = crate::sys::move_off_stdio()?;
    let input = fds::to_high_number(input)?;
    let output = fds::to_high_number(output)?;
    Ok((File::from(input), File::from(output)))
}

fn serve(
    input: &mut BufReader<FdReader>,
    output: &mut BufWriter<File>,
    started: Instant,
) -> std::io::Result<()> {
    let init = match protocol::recv::<HostMsg>(input)? {
        Some(HostMsg::Init(init)) if init.version == PROTOCOL_VERSION => init,
        Some(HostMsg::Init(init)) => {
            let message = format!("protocol version {} != {PROTOCOL_VERSION}", init.version);
            return init_failed(output, InitStage::Protocol, message);
        }
        Some(_) => {
            let message = "first message must be init".to_string();
            return init_failed(output, InitStage::Protocol, message);
        }
        None => return Ok(()),
    };

    // The audit hook must exist before the interpreter does (see `audit`).
    if let Err(message) = audit::register().and_then(|()| cpython::initialize(&init.python)) {
        return init_failed(output, InitStage::Interpreter, message);
    }
    let prelude = match Python::attach(|py| warm_up(py, &init)) {
        Ok(p) => p,
        Err((stage, message)) => {
            return init_failed(output, stage, message);
        }
    };
    let Warm {
        prelude,
        guard,
        versions,
        shortcuts,
    } = prelude;

    let mut started = started;
    let init = if init.zygote {
        // A zygote: report warm, unconfined, then serve fork requests. Only a forked
        // child returns from `serve_zygote` with `Some`; it continues below as a worker
        // of the slot whose init message arrives on its new protocol socket.
        // What every forked worker would otherwise do first, done once here: imports
        // closed and the state guard's template taken after that (a child then finds
        // both done unless its own set-up imported something).
        let released = Python::attach(|py| {
            let prelude = prelude.bind(py);
            prelude.call_method0("close_imports")?;
            if let Some(guard) = &guard {
                guard.bind(py).call_method0("rebase")?;
            }
            prelude.call_method0("release_files").map(drop)
        })
        .map_err(|e| e.to_string())
        .and_then(|()| {
            let keep = [input.get_ref().as_raw_fd(), output.get_ref().as_raw_fd()];
            zygote::no_open_files(&keep)
        });
        if let Err(message) = released {
            return init_failed(output, InitStage::Warmup, message);
        }
        let ready = ReadyMsg {
            version: PROTOCOL_VERSION,
            warmup_ms: started.elapsed().as_secs_f64() * 1000.0,
            versions: versions.clone(),
            sandbox: crate::sandbox::Enforcement::none(),
            render_once: shortcuts.render_once,
            render_once_off: shortcuts.render_once_off.clone(),
            text_metrics: shortcuts.text_metrics,
            text_metrics_off: shortcuts.text_metrics_off.clone(),
        };
        protocol::send(output, &WorkerMsg::Ready(ready))?;
        match zygote::serve_zygote(input, output)? {
            Some(forked_at) => started = forked_at,
            None => return Ok(()),
        }
        let init = match protocol::recv::<HostMsg>(input)? {
            Some(HostMsg::Init(init)) if init.version == PROTOCOL_VERSION && !init.zygote => init,
            Some(_) => {
                let message = "a forked worker expects one init message for its slot".into();
                return init_failed(output, InitStage::Protocol, message);
            }
            None => return Ok(()),
        };
        let dirs = &init.dirs;
        let rebound = Python::attach(|py| {
            let prelude = prelude.bind(py);
            prelude.call_method1("rebind", (&dirs.src, &dirs.out, &dirs.tmp, &dirs.home))?;
            if init.prewarm {
                prelude.call_method0("prewarm")?;
            }
            Ok::<(), PyErr>(())
        })
        .map_err(|e| e.to_string());
        if let Err(message) = rebound {
            return init_failed(output, InitStage::Warmup, message);
        }
        init
    } else {
        init
    };

    // Nothing the job could use past the hook and Landlock stays open (see `fds`).
    let keep = [input.get_ref().as_raw_fd(), output.get_ref().as_raw_fd()];
    match fds::close_strays(&keep, &init.sandbox.read_only) {
        Ok(closed) => {
            for stray in closed {
                eprintln!("pyward-worker: closed descriptor {stray} before the first job");
            }
        }
        Err(e) => {
            let message = format!("listing open descriptors: {e}");
            return init_failed(output, InitStage::Sandbox, message);
        }
    }
    // The modules nothing imports from now on leave `sys.modules` again (anything loaded
    // since warm-up) and a finder refusing them heads `sys.meta_path`: see
    // `audit::UNIMPORTABLE` and python/library_guards/.
    let closed = Python::attach(|py| prelude.bind(py).call_method0("close_imports").map(drop));
    if let Err(e) = closed {
        return init_failed(output, InitStage::Sandbox, format!("closing imports: {e}"));
    }
    audit::arm(audit::Roots {
        read: init.sandbox.read_only.clone(),
        write: init.sandbox.read_write.clone(),
    });
    // The sandbox goes on last: warm-up needed to read files (fonts, packages) that jobs
    // must not, and confinement can only ever narrow.
    let mut spec = init.sandbox.clone();
    spec.receive_fd = Some(input.get_ref().as_raw_fd());
    let sandbox = match crate::sandbox::apply(&spec) {
        Ok(enforced) => enforced,
        Err(e) => {
            let message = e.to_string();
            return init_failed(output, InitStage::Sandbox, message);
        }
    };
    let ready = ReadyMsg {
        version: PROTOCOL_VERSION,
        warmup_ms: started.elapsed().as_secs_f64() * 1000.0,
        versions,
        sandbox,
        render_once: shortcuts.render_once,
        render_once_off: shortcuts.render_once_off,
        text_metrics: shortcuts.text_metrics,
        text_metrics_off: shortcuts.text_metrics_off,
    };
    // The scratch mounts now cover tmp/: the working directory must be the mount, not
    // the directory beneath it.
    if let Err(e) = std::env::set_current_dir(&init.dirs.tmp) {
        return init_failed(output, InitStage::Sandbox, format!("chdir to tmp: {e}"));
    }
    let scratch = ready.sandbox.scratch;
    // What the worker holds now, before its first job: no reset may leave it more.
    let birth = match held::Birth::now(guard.as_ref(), scratch.then_some(Path::new(&init.dirs.out)))
    {
        Ok(birth) => birth,
        Err(e) => {
            let message = format!("the state guard's template: {e}");
            return init_failed(output, InitStage::Sandbox, message);
        }
    };
    protocol::send(output, &WorkerMsg::Ready(ready))?;

    let out_dir = Path::new(&init.dirs.out).to_path_buf();
    let writable = [
        out_dir.clone(),
        Path::new(&init.dirs.tmp).to_path_buf(),
        Path::new(&init.dirs.home).to_path_buf(),
    ];
    // The copies the next reset installs, made while the worker waited: held here, in
    // this frame, where no job's code reaches them.
    let mut prepared: Option<Py<PyAny>> = None;
    loop {
        match protocol::recv::<HostMsg>(input)? {
            Some(HostMsg::Run(run)) => {
                // The run frame brought one descriptor per array (closed if not).
                let fds = input.get_mut().take_fds(run.arrays.len());
                // The nonce stays in this Rust frame; `run_job` hands Python only the
                // fields the job needs.
                let nonce = run.nonce;
                let (done, figures) = Python::attach(|py| run_job(py, &prelude, &run, fds));
                let (mut done, blobs) = collect_artifacts(done, figures, &out_dir, &run);
                if scratch {
                    done.scratch_exhausted = crate::sandbox::scratch::exhausted(&out_dir);
                }
                protocol::send(output, &WorkerMsg::Done(Box::new(done)))?;
                for blob in blobs {
                    protocol::write_frame(output, &blob)?;
                }
                output.flush()?;
                // A single-job worker dies with its state and its scratch.
                if !init.single_job {
                    let birth = (!init.no_state_guard).then_some(&birth);
                    let reset = reset_after_job(
                        &prelude,
                        guard.as_ref(),
                        prepared.take(),
                        nonce,
                        &writable,
                        birth,
                    );
                    protocol::send(output, &WorkerMsg::Reset(reset))?;
                    output.flush()?;
                    prepared = prepare_next_reset(&prelude);
                    return_freed_memory();
                }
            }
            Some(HostMsg::Shutdown) | None => return Ok(()),
            Some(HostMsg::Init(_)) => {
                return Err(std::io::Error::other("init received twice"));
            }
        }
    }
}

/// Work for the next reset done while this worker waits for its next job, after the
/// verdict of this one is out (off the next job's wait): the prelude's fresh copies of
/// what the reset installs, returned to the caller to hold. A failure here only means
/// the next reset makes them itself.
fn prepare_next_reset(prelude: &Py<PyModule>) -> Option<Py<PyAny>> {
    Python::attach(|py| {
        prelude
            .bind(py)
            .call_method0("prepare_next_reset")
            .ok()
            .map(Bound::unbind)
    })
}

/// Hands the heap pages the job freed back to the kernel, after its answer has gone
/// out (off the job's latency). glibc keeps freed memory for reuse, so without this a
/// worker's private memory stays at the high-water mark of every job it ran: the
/// pool's per-worker cost and the soft memory limit would measure old jobs, not state.
fn return_freed_memory() {
    crate::sys::trim_heap();
}

/// The prelude module, the versions it found, and whether render-once is active.
/// Tells the supervisor why start-up failed; the worker then exits.
fn init_failed(
    output: &mut BufWriter<File>,
    stage: InitStage,
    message: String,
) -> std::io::Result<()> {
    protocol::send(output, &WorkerMsg::InitFailed { stage, message })
}

/// What warm-up leaves: the prelude, the state guard's module (none when the worker
/// has no guard), what was loaded, and the shortcuts.
struct Warm {
    prelude: Py<PyModule>,
    guard: Option<Py<PyModule>>,
    versions: Versions,
    shortcuts: Shortcuts,
}

/// The warm shortcuts warm-up installed (render-once, frozen text metrics), and why
/// one that was requested is off.
struct Shortcuts {
    render_once: bool,
    render_once_off: Option<String>,
    text_metrics: u32,
    text_metrics_off: Option<String>,
}

fn warm_up(py: Python<'_>, init: &InitMsg) -> Result<Warm, (InitStage, String)> {
    let describe = |stage: InitStage| move |e: PyErr| (stage, e.to_string());
    // The worker's Python modules, in the table's order (src/worker/modules.rs): the
    // prelude, then the ones its warm-up is given by keyword.
    let options = PyDict::new(py);
    let mut prelude = None;
    let mut guard = None;
    for module in modules::MODULES {
        let loaded = module
            .load(py, init)
            .map_err(describe(InitStage::Interpreter))?;
        if module.option == Some(modules::STATE_GUARD) {
            guard = loaded.clone();
        }
        match module.option {
            None => prelude = loaded,
            Some(keyword) => options
                .set_item(keyword, loaded)
                .map_err(describe(InitStage::Interpreter))?,
        }
    }
    let prelude = prelude.expect("the prelude is in the table and always loaded");
    if let Some(guard) = &guard {
        // The template lives in the guard's module: held by this worker alone, out of
        // `sys.modules` (which a job's code reaches through a library's real `sys`).
        modules::unlist(py, guard).map_err(describe(InitStage::Interpreter))?;
    }
    let rules = PyDict::new(py);
    let set = |k: &str, v: &Vec<String>| rules.set_item(k, v.clone());
    set("allowed_modules", &init.rules.allowed_modules)
        .and_then(|()| set("denied_modules", &init.rules.denied_modules))
        .and_then(|()| set("banned_builtins", &init.rules.banned_builtins))
        .and_then(|()| set("banned_attributes", &init.rules.banned_attributes))
        .and_then(|()| {
            set(
                "banned_attribute_prefixes",
                &init.rules.banned_attribute_prefixes,
            )
        })
        .and_then(|()| {
            set(
                "guarded_setting_prefixes",
                &init.rules.guarded_setting_prefixes,
            )
        })
        .and_then(|()| set("capability_modules", &init.rules.capability_modules))
        .and_then(|()| set("capability_exempt", &init.rules.capability_exempt))
        .and_then(|()| rules.set_item("unimportable", audit::unimportable_names(None)))
        .and_then(|()| {
            let kept = audit::unimportable_names(Some(audit::AtWarmUp::Kept));
            rules.set_item("unimportable_kept", kept)
        })
        .and_then(|()| set("allowed_dunder_reads", &init.rules.allowed_dunder_reads))
        .and_then(|()| set("reviewed_paths", &init.rules.reviewed_paths))
        .and_then(|()| rules.set_item("module_members", init.rules.module_members.clone()))
        .and_then(|()| rules.set_item("injected", init.rules.injected.clone()))
        .map_err(describe(InitStage::Interpreter))?;
    options
        .set_item("before_render_once", init.warm_up_code.as_deref())
        .and_then(|()| options.set_item("one_shot", init.one_shot))
        .and_then(|()| options.set_item("preload_loadmat", init.preload_loadmat))
        .map_err(describe(InitStage::Interpreter))?;
    let versions = prelude
        .call_method(
            "warm_up",
            (
                rules,
                &init.dirs.src,
                &init.dirs.out,
                &init.dirs.tmp,
                init.preload_pandas,
            ),
            Some(&options),
        )
        .map_err(|e| {
            let stage = if e.is_instance_of::<pyo3::exceptions::PyImportError>(py) {
                InitStage::Import
            } else {
                InitStage::Warmup
            };
            (stage, e.to_string())
        })?;
    // After warm-up (the checks read the runtime rules warm-up stored), before the zygote
    // forks and before the audit hook is armed: see `cpython::replace_str_methods`.
    prelude
        .getattr("STR_METHODS")
        .and_then(|m| Ok(m.cast_into::<PyDict>()?))
        .and_then(|m| cpython::replace_str_methods(&m))
        .map_err(describe(InitStage::Warmup))?;
    let get = |k: &str| -> String {
        versions
            .get_item(k)
            .and_then(|v| v.extract())
            .unwrap_or_default()
    };
    let off_because = |k: &str| -> Option<String> {
        versions
            .get_item(k)
            .and_then(|v| v.extract())
            .unwrap_or(None)
    };
    let shortcuts = Shortcuts {
        render_once: versions
            .get_item("render_once")
            .and_then(|v| v.extract())
            .unwrap_or(false),
        render_once_off: off_because("render_once_off"),
        text_metrics: versions
            .get_item("text_metrics")
            .and_then(|v| v.extract())
            .unwrap_or(0),
        text_metrics_off: off_because("text_metrics_off"),
    };
    let versions = Versions {
        python: get("python"),
        numpy: get("numpy"),
        matplotlib: get("matplotlib"),
    };
    Ok(Warm {
        prelude: prelude.unbind(),
        guard: guard.map(Bound::unbind),
        versions,
        shortcuts,
    })
}

/// Figures the job rendered to memory: encoded files, and PNGs as pixels for the host.
#[derive(Default)]
struct MemoryFigures {
    encoded: Vec<(String, Vec<u8>)>,
    raw: Vec<(String, RawPng, Vec<u8>)>,
}

/// The `raw_figures` of `run_job`'s answer: name and a dict of the image (pixels in
/// `rgba`, copied out of the Python bytes object once).
fn raw_figures(list: &Bound<'_, PyAny>) -> PyResult<Vec<(String, RawPng, Vec<u8>)>> {
    let mut out = Vec::new();
    for item in list.try_iter()? {
        let (name, image): (String, Bound<'_, PyDict>) = item?.extract()?;
        let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
            image
                .get_item(k)?
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(k.to_string()))
        };
        let raw = RawPng {
            width: get("width")?.extract()?,
            height: get("height")?.extract()?,
            dpi: get("dpi")?.extract()?,
            text: get("text")?.extract()?,
        };
        let rgba = get("rgba")?.cast::<PyBytes>()?.as_bytes().to_vec();
        out.push((name, raw, rgba));
    }
    Ok(out)
}

/// The between-job reset, once the answer is out: the prelude's housekeeping and state
/// check, then emptying what the job could write (the host never sees the scratch file
/// system to empty it), so that nothing of this job reaches the next; last, whether the
/// worker now holds more descriptors or scratch space than at its `birth` (see `held`;
/// `None`: that check is off with the state guard, for tests). `guard`: the state
/// guard's module; `prepared`: what `prepare_next_reset` made for this reset, if anything.
fn reset_after_job(
    prelude: &Py<PyModule>,
    guard: Option<&Py<PyModule>>,
    prepared: Option<Py<PyAny>>,
    nonce: protocol::Nonce,
    writable: &[PathBuf],
    birth: Option<&held::Birth>,
) -> ResetMsg {
    let mut reset = Python::attach(|py| {
        let r = prelude
            .bind(py)
            .call_method1("reset_after_job", (prepared, guard))?;
        let list = |k: &str| -> PyResult<Vec<String>> { r.get_item(k)?.extract() };
        Ok::<_, PyErr>(ResetMsg {
            nonce,
            housekeeping_failures: list("housekeeping_failures")?,
            state_changes: list("state_changes")?,
        })
    })
    .unwrap_or_else(|e| ResetMsg {
        nonce,
        housekeeping_failures: vec![format!("the reset failed: {e}")],
        state_changes: Vec::new(),
    });
    for dir in writable {
        if let Err(e) = crate::workspace::clear_dir(dir) {
            let failure = format!("emptying {}: {e}", dir.display());
            reset.housekeeping_failures.push(failure);
        }
    }
    if let Some(birth) = birth {
        reset.state_changes.extend(birth.grown(guard));
    }
    reset
}

fn run_job(
    py: Python<'_>,
    prelude: &Py<PyModule>,
    run: &RunMsg,
    array_fds: Option<Vec<std::os::fd::OwnedFd>>,
) -> (DoneMsg, MemoryFigures) {
    let mut done = DoneMsg::new(run.nonce);
    let mut figures = MemoryFigures::default();
    let arrays = match array_fds {
        Some(fds) => array::expose(py, &run.arrays, fds),
        None => Err(pyo3::exceptions::PyValueError::new_err(
            "the job's shared arrays did not arrive with it",
        )),
    };
    let result = arrays.and_then(|arrays| {
        prelude.bind(py).call_method1(
            "run_job",
            (
                &run.code,
                run.seed,
                &run.out_name,
                run.stdout_cap,
                run.figures_in_memory,
                arrays,
                run.describe_figures,
                run.raw_png_limit,
                run.max_artifacts,
            ),
        )
    });
    match result {
        Ok(r) => {
            figures.encoded = r
                .get_item("figures")
                .and_then(|v| v.extract())
                .unwrap_or_default();

            let s =
                |k: &str| -> String { r.get_item(k).and_then(|v| v.extract()).unwrap_or_default() };
            done.exec_ms = r
                .get_item("exec_ms")
                .and_then(|v| v.extract())
                .unwrap_or(0.0);
            done.stdout = s("stdout");
            done.stderr = s("stderr");
            done.stdout_dropped = r
                .get_item("stdout_dropped")
                .and_then(|v| v.extract())
                .unwrap_or(0);
            // A result we cannot read is itself a reason not to trust the worker.
            match r.get_item("raw_figures").and_then(|v| raw_figures(&v)) {
                Ok(raw) => figures.raw = raw,
                Err(e) => done
                    .housekeeping_failures
                    .push(format!("unreadable raw figures: {e}")),
            }
            match serde_json::from_str::<JobDetails>(&s("details")) {
                Ok(details) => {
                    done.error = details.error;
                    done.figures = details.figures;
                    done.files = details.files;
                    done.bound = details.bound;
                }
                Err(e) => done
                    .housekeeping_failures
                    .push(format!("unreadable job details: {e}")),
            }
        }
        // run_job catches everything the job raises; reaching this means the prelude
        // itself failed (e.g. a MemoryError while describing an exception), so the
        // between-job reset did not run either: the worker must not serve again.
        Err(e) => {
            done.housekeeping_failures
                .push(format!("the prelude failed: {e}"));
            done.error = Some(PyErrorInfo {
                type_name: e
                    .get_type(py)
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
                message: e.to_string(),
                line: None,
                traceback: String::new(),
                hint: String::new(),
            });
        }
    }
    (done, figures)
}

/// The structured part of `run_job`'s answer, which the prelude encodes as JSON.
#[derive(serde::Deserialize)]
struct JobDetails {
    error: Option<PyErrorInfo>,
    #[serde(default)]
    figures: crate::figure::FigureNotes,
    #[serde(default)]
    files: Vec<crate::protocol::FileOrigin>,
    #[serde(default)]
    bound: Option<crate::protocol::ArtifactBound>,
}

/// The job's artifacts: figures it rendered to memory and the files it left in `out/`
/// (a figure in memory wins over a file of the same name), sorted by name, within the
/// count and size caps; the rest are listed as refused.
fn collect_artifacts(
    mut done: DoneMsg,
    figures: MemoryFigures,
    out_dir: &Path,
    run: &RunMsg,
) -> (DoneMsg, Vec<Vec<u8>>) {
    enum Found {
        Memory(Vec<u8>),
        Raw(RawPng, Vec<u8>),
        File(u64),
    }
    let mut found: std::collections::BTreeMap<String, Found> = figures
        .encoded
        .into_iter()
        .map(|(name, bytes)| (name, Found::Memory(bytes)))
        .chain(
            figures
                .raw
                .into_iter()
                .map(|(name, raw, rgba)| (name, Found::Raw(raw, rgba))),
        )
        .collect();
    if let Ok(entries) = fs::read_dir(out_dir) {
        for e in entries.filter_map(Result::ok) {
            if e.file_type().is_ok_and(|t| t.is_file()) {
                let size = e.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
                let name = e.file_name().to_string_lossy().into_owned();
                found.entry(name).or_insert(Found::File(size));
            }
        }
    }
    let mut blobs = Vec::new();
    for (name, item) in found {
        let size = match &item {
            Found::Memory(bytes) => bytes.len() as u64,
            // Its encoded size is checked by the host, which encodes it.
            Found::Raw(..) => 0,
            Found::File(size) => *size,
        };
        if blobs.len() >= run.max_artifacts || size > run.max_artifact_bytes {
            done.artifacts_refused.push(name);
            continue;
        }
        let (bytes, raw) = match item {
            Found::Memory(bytes) => (bytes, None),
            Found::Raw(raw, rgba) => (rgba, Some(raw)),
            Found::File(_) => match fs::read(out_dir.join(&name)) {
                Ok(bytes) => (bytes, None),
                Err(_) => {
                    done.artifacts_refused.push(name);
                    continue;
                }
            },
        };
        done.artifacts.push(ArtifactMeta {
            name,
            len: bytes.len() as u64,
            raw,
        });
        blobs.push(bytes);
    }
    (done, blobs)
}
