//! A unit of work: code, its input files and per-job limit overrides.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use numpy::ndarray::{ArrayBase, Data, Dimension};

use crate::array::{ArrayElement, SharedArray};
use crate::validate::{Expectations, TableCheck, Validator};

/// Where a job's input files come from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Source {
    /// Every regular file below a directory, with its relative path.
    Dir(PathBuf),
    /// One in-memory file.
    Bytes {
        /// Relative path inside `SRC`.
        name: String,
        /// Contents.
        bytes: Vec<u8>,
    },
}

/// One job for the executor.
///
/// ```
/// let job = pyward::Job::new("plt.plot([1, 2, 3]); plt.savefig(OUT)")
///     .src_bytes("data.csv", b"x,y\n1,2\n".to_vec());
/// ```
#[derive(Debug, Clone)]
pub struct Job {
    pub(crate) code: Vec<u8>,
    pub(crate) sources: Vec<Source>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) memory_bytes: Option<u64>,
    pub(crate) seed: Option<u64>,
    pub(crate) out_name: String,
    pub(crate) expected: Vec<String>,
    pub(crate) validators: Vec<Arc<dyn Validator>>,
    /// The declarations given to [`Job::expect`], merged: what a run record keeps so
    /// that a replay checks the same tables.
    pub(crate) expectations: Option<Expectations>,
    pub(crate) blank_check: bool,
    pub(crate) task: Option<String>,
    pub(crate) figures_in_memory: bool,
    pub(crate) describe_figures: bool,
    pub(crate) arrays: Vec<(String, SharedArray)>,
    pub(crate) tenant: Option<Arc<str>>,
    /// Why an input could not be prepared (reported by `Executor::run`).
    pub(crate) input_error: Option<String>,
}

impl Job {
    /// A job running `code`: any bytes, so that non-UTF-8 source is reported as a typed
    /// `BadInput` failure rather than refused by the type system at the caller.
    pub fn new(code: impl Into<Vec<u8>>) -> Job {
        Job {
            code: code.into(),
            sources: Vec::new(),
            timeout: None,
            memory_bytes: None,
            seed: None,
            out_name: "figure.png".to_string(),
            expected: Vec::new(),
            validators: Vec::new(),
            expectations: None,
            blank_check: true,
            task: None,
            figures_in_memory: false,
            describe_figures: true,
            arrays: Vec::new(),
            tenant: None,
            input_error: None,
        }
    }

    /// The trust domain this job's code belongs to (a user, a session, an API key):
    /// a worker that ran code of one tenant never receives a job of another. Jobs of
    /// the same tenant reuse a warm worker (in [`Isolation::Reuse`](crate::Isolation));
    /// a job of a tenant with no idle worker of its own gets a fresh fork of the warm
    /// template. Without a tenant a job is its own tenant: it runs in a process that
    /// never ran a job, which is killed after it (unless
    /// [`ExecutorBuilder::reuse_across_tenants`](crate::ExecutorBuilder::reuse_across_tenants)
    /// says otherwise).
    pub fn tenant(mut self, tenant: impl AsRef<str>) -> Job {
        self.tenant = Some(Arc::from(tenant.as_ref()));
        self
    }

    /// Adds every file below `dir` as an input (symlinks pointing outside are refused).
    pub fn src_dir(mut self, dir: impl Into<PathBuf>) -> Job {
        self.sources.push(Source::Dir(dir.into()));
        self
    }

    /// Adds one in-memory input file at relative path `name`.
    pub fn src_bytes(mut self, name: impl Into<String>, bytes: Vec<u8>) -> Job {
        self.sources.push(Source::Bytes {
            name: name.into(),
            bytes,
        });
        self
    }

    /// Passes `array` to the job as a read-only numpy array named `name`, through
    /// sealed shared memory instead of a file (see [`SharedArray`]): one copy here,
    /// none in the worker. If the shared memory cannot be created, `Executor::run`
    /// returns `Error::InvalidJob` saying why. To pass the same data to many jobs, make
    /// one [`SharedArray`] and use [`Job::with_shared_array`].
    ///
    /// ```
    /// use pyward::ndarray::Array2;
    /// let grid = Array2::<f64>::zeros((500, 500));
    /// let job = pyward::Job::new("plt.imshow(grid); plt.savefig(OUT)").with_array("grid", &grid);
    /// ```
    pub fn with_array<A, S, D>(mut self, name: impl Into<String>, array: &ArrayBase<S, D>) -> Job
    where
        A: ArrayElement,
        S: Data<Elem = A>,
        D: Dimension,
    {
        let name = name.into();
        match SharedArray::new(array) {
            Ok(shared) => self.arrays.push((name, shared)),
            Err(e) => {
                self.input_error
                    .get_or_insert(format!("array {name}: cannot create shared memory: {e}"));
            }
        }
        self
    }

    /// Passes an array already in shared memory to the job under `name` (no copy).
    pub fn with_shared_array(mut self, name: impl Into<String>, array: &SharedArray) -> Job {
        self.arrays.push((name.into(), array.clone()));
        self
    }

    /// Overrides the executor's per-job timeout.
    pub fn timeout(mut self, t: Duration) -> Job {
        self.timeout = Some(t);
        self
    }

    /// Overrides the executor's memory ceiling for this job (bytes; it can only lower
    /// the ceiling, since the worker's rlimit was set at start-up).
    pub fn memory_limit(mut self, bytes: u64) -> Job {
        self.memory_bytes = Some(bytes);
        self
    }

    /// Fixes the seed of numpy's and `random`'s global generators (default: random,
    /// reported in the outcome so a run can be replayed).
    pub fn seed(mut self, seed: u64) -> Job {
        self.seed = Some(seed);
        self
    }

    /// File name of `OUT`, the main artifact (default `figure.png`); its extension
    /// decides the format the figure must have.
    pub fn out_name(mut self, name: impl Into<String>) -> Job {
        self.out_name = name.into();
        self
    }

    /// Requires another artifact besides `OUT` (e.g. `table.csv`).
    pub fn expect_artifact(mut self, name: impl Into<String>) -> Job {
        self.expected.push(name.into());
        self
    }

    /// Adds a check over the artifacts, run after a successful execution; a failure
    /// becomes `JobFailure::InvalidOutput`.
    pub fn validator(mut self, v: impl Validator + 'static) -> Job {
        self.validators.push(Arc::new(v));
        self
    }

    /// Adds table checks over a CSV or `.xlsx` artifact (which then becomes a required
    /// artifact).
    pub fn table_check(mut self, check: TableCheck) -> Job {
        if !self.expected.contains(&check.artifact) {
            self.expected.push(check.artifact.clone());
        }
        self.validator(check)
    }

    /// Declares what the job must write and the checks on it ([`Expectations`], the
    /// versioned form every door takes). `OUT` becomes the figure listed, else the first
    /// artifact: a job that lists tables and no figure is a table job, valid without a
    /// figure. Every listed artifact and every checked table is required.
    ///
    /// ```
    /// let e = pyward::validate::Expectations::from_toml(
    ///     "version = 1\nartifacts = [\"result.xlsx\"]",
    /// ).unwrap();
    /// let job = pyward::Job::new("df.to_excel(OUT)").expect(&e);
    /// ```
    pub fn expect(mut self, expectations: &Expectations) -> Job {
        if let Some(out) = expectations.out_name() {
            self.out_name = out.to_string();
        }
        for a in expectations.required() {
            if a != self.out_name && !self.expected.contains(&a) {
                self.expected.push(a);
            }
        }
        for t in &expectations.tables {
            self = self.table_check(t.clone());
        }
        self.expectations = Some(match self.expectations.take() {
            Some(mut kept) => {
                kept.artifacts
                    .extend(expectations.artifacts.iter().cloned());
                kept.tables.extend(expectations.tables.iter().cloned());
                kept
            }
            None => expectations.clone(),
        });
        self
    }

    /// What [`Job::expect`] declared (merged over several calls).
    pub fn expectations(&self) -> Option<&Expectations> {
        self.expectations.as_ref()
    }

    /// Accepts a PNG `OUT` whose pixels are all one colour (refused by default: a blank
    /// figure is almost always a job that forgot to draw).
    pub fn allow_blank(mut self) -> Job {
        self.blank_check = false;
        self
    }

    /// Figures saved into `out/` (to `OUT` or a sibling name) are rendered into memory
    /// and returned without touching the disk. For callers that only want the bytes:
    /// job code that reads its own saved figure back will not find the file. Other
    /// files the job writes (CSV, JSON) still go through `out/`.
    pub fn figures_in_memory(mut self) -> Job {
        self.figures_in_memory = true;
        self
    }

    /// Whether every figure the job saves is summarized (on by default): what the axes,
    /// labels and series are, read from the figure object before it is encoded
    /// ([`Artifact::figure`](crate::Artifact::figure), [`Outcome::description`](crate::Outcome::description)),
    /// ~0.1–0.5 ms per figure. Off also turns off the output checks that read the
    /// summary (a figure with nothing drawn, a series that is all NaN); the pixel check
    /// for a blank PNG stays.
    pub fn describe_figures(mut self, on: bool) -> Job {
        self.describe_figures = on;
        self
    }

    /// The task the code was written for, kept in run records and repair feedback.
    pub fn task(mut self, text: impl Into<String>) -> Job {
        self.task = Some(text.into());
        self
    }

    /// The same job with other code (inputs, limits and checks kept).
    pub fn with_code(mut self, code: impl Into<Vec<u8>>) -> Job {
        self.code = code.into();
        self
    }

    /// The job's source code.
    pub fn code(&self) -> &[u8] {
        &self.code
    }
}
