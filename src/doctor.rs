//! What `pyward doctor` checks, as data: the kernel's sandbox support, the Python the
//! workers embed, a one-worker pool's warm-up, every allowed import, a test figure and
//! the pool's own view of itself. The command line prints it; a service can serve it.

use crate::python_env::{PythonEnv, PYTHON_ENV_VAR};
use crate::sandbox::{self, Enforcement, Support};
use crate::supervisor::{Executor, PoolStats, PoolWarmup};
use crate::Job;

/// Everything the doctor found.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Diagnosis {
    /// What this kernel can enforce (probed without restricting this process).
    pub support: Support,
    /// The Python the workers embed, or why it is unusable.
    pub python: Result<PythonEnv, String>,
    /// Where that Python came from: [`PYTHON_ENV_VAR`] or the build.
    pub python_origin: &'static str,
    /// The pool's warm-up, or why no worker started (absent when Python is unusable).
    pub pool: Option<Result<PoolCheck, String>>,
}

/// What a one-worker pool showed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PoolCheck {
    /// How long it took to become ready, and the warm shortcuts it has.
    pub warmup: PoolWarmup,
    /// Every allowed import: `Ok` when it imports in a worker, else why not.
    pub imports: Vec<(String, Result<(), String>)>,
    /// A test figure: its PNG size and the confinement the worker had, or the failure.
    pub test_figure: Result<(usize, Enforcement), String>,
    /// A figure with Chinese, Japanese and Korean text: `Ok` when every glyph was drawn
    /// (a CJK font is installed: python/prelude/fonts.py), else what is missing. Not part
    /// of [`Diagnosis::healthy`]: without the font such text is drawn as boxes, and
    /// everything else works.
    pub cjk_text: Result<(), String>,
    /// The pool after those jobs.
    pub stats: PoolStats,
}

impl Diagnosis {
    /// Workers start, every allowed import works and the test figure is drawn.
    pub fn healthy(&self) -> bool {
        match &self.pool {
            Some(Ok(pool)) => {
                pool.imports.iter().all(|(_, r)| r.is_ok()) && pool.test_figure.is_ok()
            }
            _ => false,
        }
    }
}

/// The tenant of the doctor's probes.
const DOCTOR: &str = "pyward-doctor";

/// Runs every check (starts a one-worker pool: about a second).
pub fn diagnose() -> Diagnosis {
    let support = sandbox::probe();
    let python_origin = match std::env::var_os(PYTHON_ENV_VAR) {
        Some(v) if !v.is_empty() => PYTHON_ENV_VAR,
        _ => "the build",
    };
    let python = PythonEnv::from_env_or_build().map_err(|e| e.to_string());
    let pool = python.as_ref().ok().map(|env| check_pool(env.clone()));
    Diagnosis {
        support,
        python,
        python_origin,
        pool,
    }
}

fn check_pool(env: PythonEnv) -> Result<PoolCheck, String> {
    let executor = Executor::builder()
        .workers(1)
        .python_env(env)
        .build()
        .map_err(|e| e.to_string())?;
    let imports = executor
        .policy()
        .allowed_imports()
        .into_iter()
        .map(|module| {
            // One tenant for the doctor's own probes: they share its warm worker.
            let job = Job::new(format!("import {module}\nprint('ok')\n"))
                .out_name("none.txt")
                .tenant(DOCTOR);
            let verdict = match executor.run(job) {
                Ok(o) if o.stdout.trim() == "ok" => Ok(()),
                Ok(o) => Err(o.failure().map_or("no output".into(), |f| f.to_string())),
                Err(e) => Err(e.to_string()),
            };
            (module, verdict)
        })
        .collect();
    let figure = Job::new("plt.plot([1, 2, 3]); plt.savefig(OUT)").tenant(DOCTOR);
    let test_figure = match executor.run(figure) {
        Ok(o) if o.is_success() => {
            let sandbox = o.worker.as_ref().map(|w| w.sandbox.clone());
            match (o.artifacts().first(), sandbox) {
                (Some(a), Some(s)) => Ok((a.bytes.len(), s)),
                _ => Err("no figure came back".into()),
            }
        }
        Ok(o) => Err(o.failure().map(|f| f.to_string()).unwrap_or_default()),
        Err(e) => Err(e.to_string()),
    };
    let cjk = Job::new("plt.title('销售额 매출 売上'); plt.savefig(OUT)").tenant(DOCTOR);
    let cjk_text = match executor.run(cjk) {
        Ok(o) if o.is_success() && !o.stderr.contains("missing from font") => Ok(()),
        Ok(o) if o.is_success() => Err(
            "drawn as boxes: no CJK font is installed (Debian: fonts-wqy-microhei, `make fonts`)"
                .into(),
        ),
        Ok(o) => Err(o.failure().map(|f| f.to_string()).unwrap_or_default()),
        Err(e) => Err(e.to_string()),
    };
    Ok(PoolCheck {
        warmup: executor.warmup().clone(),
        imports,
        test_figure,
        cjk_text,
        stats: executor.stats(),
    })
}
