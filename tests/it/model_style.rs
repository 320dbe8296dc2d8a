//! Code as models write it (issue 38): the model-style corpus (tests/data/model_style,
//! written by its generate.py) through the real worker, against plain Python, and the
//! hostile twins of the doors it opens.
//!
//! - Every script that plain Python (the project's venv, in a folder holding the inputs,
//!   `/mnt/data` rewritten to that folder) turns into files is `ok` unmodified, with the
//!   same artifact names, and its PNGs have the same pixels; a script plain Python makes
//!   no file of (`plt.show()`, a figure left open) returns its figures; `ace_tools`
//!   returns its table; a removed API is named in the feedback.
//! - How each artifact was obtained and the path the code asked for are reported.
//! - Writes to absolute and climbing paths create nothing outside the job, 10,000 saves
//!   answer the artifact bound, a save name with control characters or NUL is refused,
//!   and reads of host paths, traversal, a symlinked input, `io.FileIO`/`io.open` and
//!   host probes through `os.path` reveal nothing: gate on and gate off.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;

use crate::common;

use common::{builder, shared_fresh_pool, Gate};
use pyward::gate::Policy;
use pyward::{Executor, Job, JobFailure, Obtained, Outcome, RetireReason};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/model_style")
}

fn inputs() -> PathBuf {
    corpus_dir().join("inputs")
}

/// (script name, code, the names plain Python writes; None: plain Python cannot run it)
fn corpus() -> Vec<(String, String, Option<BTreeSet<String>>)> {
    let listing = std::fs::read_to_string(corpus_dir().join("expected.tsv")).unwrap();
    listing
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let (name, names) = line.split_once('\t').unwrap();
            let code = std::fs::read_to_string(corpus_dir().join("scripts").join(name)).unwrap();
            let names = (names != "?").then(|| {
                names
                    .split(' ')
                    .filter(|n| !n.is_empty())
                    .map(String::from)
                    .collect()
            });
            (name.to_string(), code, names)
        })
        .collect()
}

fn executor(policy: Policy) -> Executor {
    builder()
        .workers(2)
        .preload_pandas(true)
        .policy(policy)
        .build()
        .expect("pool starts")
}

/// Every script of `corpus` through `exec` with the corpus' inputs, two at a time (the
/// pool has two workers): the outcomes in the corpus' order.
fn run_side_by_side(
    exec: &Executor,
    corpus: &[(String, String, Option<BTreeSet<String>>)],
) -> Vec<Outcome> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outcomes = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((_, code, _)) = corpus.get(i) else {
                    break;
                };
                let o = exec.run(Job::new(code.as_str()).src_dir(inputs())).unwrap();
                outcomes.lock().unwrap().insert(i, o);
            });
        }
    });
    outcomes.into_inner().unwrap().into_values().collect()
}

/// Plain Python, one process that forks a child per script
/// (tests/data/model_style/plain_python.py): the interpreter and the libraries start
/// once, and every script still runs in a fresh process of its own.
struct PlainPython {
    child: Child,
    stdin: ChildStdin,
    answers: BufReader<ChildStdout>,
    _config: tempfile::TempDir,
}

impl PlainPython {
    fn start() -> PlainPython {
        let config = tempfile::tempdir().unwrap();
        let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
        let mut child = Command::new(python)
            .arg(corpus_dir().join("plain_python.py"))
            .env("MPLBACKEND", "Agg")
            .env("MPLCONFIGDIR", config.path())
            .env("OPENBLAS_NUM_THREADS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        PlainPython {
            stdin: child.stdin.take().unwrap(),
            answers: BufReader::new(child.stdout.take().unwrap()),
            child,
            _config: config,
        }
    }

    /// What plain Python writes for `code`, run next to a copy of the inputs with
    /// `/mnt/data` meaning that folder: (exit ok, file name -> bytes).
    fn run(&mut self, code: &str) -> Baseline {
        let dir = tempfile::tempdir().unwrap();
        let staged: BTreeSet<String> = std::fs::read_dir(inputs())
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                std::fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
                e.file_name().to_string_lossy().into_owned()
            })
            .collect();
        let code = code.replace("/mnt/data", &dir.path().display().to_string());
        std::fs::write(dir.path().join("__script__.py"), code).unwrap();
        writeln!(self.stdin, "{}", dir.path().display()).unwrap();
        let mut answer = String::new();
        self.answers.read_line(&mut answer).unwrap();
        assert!(
            matches!(answer.trim(), "ok" | "failed"),
            "plain Python's runner answered {answer:?}"
        );
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !staged.contains(n) && n != "__script__.py")
            .map(|n| {
                let bytes = std::fs::read(dir.path().join(&n)).unwrap();
                (n, bytes)
            })
            .collect();
        files.sort();
        (answer.trim() == "ok", files)
    }
}

impl Drop for PlainPython {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Same pixels, or same bytes.
fn same_png(a: &[u8], b: &[u8]) -> Result<(), String> {
    if a == b {
        return Ok(());
    }
    let (x, y) = (
        pyward::validate::png_pixels(a)?,
        pyward::validate::png_pixels(b)?,
    );
    if (x.width, x.height) != (y.width, y.height) {
        return Err(format!(
            "{}x{} vs {}x{}",
            x.width, x.height, y.width, y.height
        ));
    }
    let differ = x.data.iter().zip(&y.data).filter(|(p, q)| p != q).count();
    if differ == 0 && x.data.len() == y.data.len() {
        Ok(())
    } else {
        Err(format!("{differ} bytes of pixels differ"))
    }
}

fn names(o: &Outcome) -> BTreeSet<String> {
    o.artifacts().iter().map(|a| a.name.clone()).collect()
}

/// What plain Python made of a script: whether it ran, and the files it wrote.
type Baseline = (bool, Vec<(String, Vec<u8>)>);

#[test]
fn the_corpus_runs_unmodified_as_plain_python_does() {
    let corpus = corpus();
    assert!(corpus.len() >= 100, "{} scripts", corpus.len());
    // Plain Python first, two at a time.
    let baselines: Vec<Baseline> = {
        let half = corpus.len() / 2;
        let (a, b) = corpus.split_at(half);
        std::thread::scope(|s| {
            let one = s.spawn(|| {
                let mut python = PlainPython::start();
                a.iter().map(|(_, c, _)| python.run(c)).collect::<Vec<_>>()
            });
            let two = s.spawn(|| {
                let mut python = PlainPython::start();
                b.iter().map(|(_, c, _)| python.run(c)).collect::<Vec<_>>()
            });
            let mut all = one.join().unwrap();
            all.extend(two.join().unwrap());
            all
        })
    };
    let exec = executor(Policy::figures());
    let outcomes = run_side_by_side(&exec, &corpus);
    let mut problems = Vec::new();
    let mut compared = 0;
    for (((name, code, expected), (plain_ok, plain_files)), o) in
        corpus.iter().zip(&baselines).zip(outcomes)
    {
        let plain_names: BTreeSet<String> = plain_files.iter().map(|(n, _)| n.clone()).collect();
        match expected {
            Some(expected) => {
                if !plain_ok || &plain_names != expected {
                    problems.push(format!(
                        "{name}: plain Python wrote {plain_names:?} (ok: {plain_ok}), the \
                         corpus says {expected:?}"
                    ));
                    continue;
                }
                if let Err(f) = &o.result {
                    problems.push(format!("{name}: {}: {}", f.status(), f.feedback()));
                    continue;
                }
                // Beyond plain Python's files: the figures of plt.show() or left open,
                // which plain Python writes nothing of.
                let extra: Vec<_> = o
                    .artifacts()
                    .iter()
                    .filter(|a| !expected.contains(&a.name))
                    .map(|a| (a.name.clone(), a.obtained))
                    .collect();
                let displayed = code.contains("plt.show()") || name == "left_open.py";
                if extra
                    .iter()
                    .any(|(_, how)| !matches!(how, Some(Obtained::Shown | Obtained::OpenAtEnd)))
                    || (displayed
                        && expected.iter().all(|n| !n.ends_with(".png"))
                        && extra.is_empty())
                {
                    problems.push(format!("{name}: returned {extra:?} beyond {expected:?}"));
                }
                if !names(&o).is_superset(expected) {
                    problems.push(format!(
                        "{name}: artifacts {:?}, plain Python {expected:?}",
                        names(&o)
                    ));
                    continue;
                }
                for (file, bytes) in plain_files {
                    let ours = o.artifact(file).unwrap();
                    if file.ends_with(".png") {
                        compared += 1;
                        if let Err(why) = same_png(&ours.bytes, bytes) {
                            problems.push(format!("{name}: {file}: {why}"));
                        }
                    } else if (file.ends_with(".csv") || file.ends_with(".json"))
                        && &ours.bytes != bytes
                    {
                        problems.push(format!("{name}: {file} differs"));
                    }
                    // A path the code asked for is the one it wrote ('/mnt/data/x.png'),
                    // or joined (Path('/mnt/data') / 'x.png', Path.cwd() / 'x.png').
                    let mnt = format!("/mnt/data/{file}");
                    let fine = match ours.requested.as_deref() {
                        None => !code.contains(&mnt),
                        Some(asked) => {
                            asked == mnt && (code.contains("/mnt/data") || code.contains("cwd()"))
                        }
                    };
                    if !fine {
                        problems.push(format!("{name}: {file} requested {:?}", ours.requested));
                    }
                }
            }
            None if name.starts_with("ace_tools") => match &o.result {
                Ok(_) if o.stdout.contains("region") || o.stdout.contains("month") => {
                    let table = o.artifacts().iter().find(|a| a.name.ends_with(".csv"));
                    if !table.is_some_and(|t| t.obtained == Some(Obtained::Written)) {
                        problems.push(format!("{name}: no table artifact: {:?}", names(&o)));
                    }
                }
                _ => problems.push(format!(
                    "{name}: {:?} {}",
                    o.result.as_ref().err(),
                    o.stdout
                )),
            },
            None => match o.failure() {
                Some(f) if !f.feedback().is_empty() => {}
                other => problems.push(format!("{name}: a removed API passed: {other:?}")),
            },
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(compared >= 60, "{compared} PNGs compared");
}

/// A pool on each side of the gate, shared by the tests of this binary. Every job runs
/// in a process of its own, forked from the warm template (jobs without a tenant,
/// tenants not shared): what one attack does to its process never decides what the
/// next one sees.
struct Sides([(&'static str, Arc<Executor>); 2]);

impl Sides {
    fn new() -> Sides {
        Sides([
            ("gate on", shared_fresh_pool(Gate::Figures)),
            ("gate off", shared_fresh_pool(Gate::Off)),
        ])
    }

    /// Runs `code` on both sides of the gate; `check` gets (side, outcome).
    fn run(&self, code: &str, src: Option<&std::path::Path>, check: impl Fn(&str, &Outcome)) {
        for (side, exec) in &self.0 {
            let mut job = Job::new(code);
            if let Some(src) = src {
                job = job.src_dir(src);
            }
            check(side, &exec.run(job).unwrap());
        }
    }
}

fn seen(o: &Outcome) -> String {
    format!(
        "{}\n{:?}",
        o.stdout,
        o.result.as_ref().err().map(|f| f.feedback())
    )
}

#[test]
fn writes_aimed_outside_become_artifacts_and_create_nothing_there() {
    let sides = Sides::new();
    let outside = tempfile::tempdir().unwrap();
    let o_path = outside.path().display().to_string();
    let tmp_canary = format!("/tmp/pyward-canary-{}.png", std::process::id());
    let code = format!(
        "import json\nplt.plot([1, 2, 3])\nplt.savefig('{o}/escape.png')\n\
         plt.savefig('../climb.png')\nplt.savefig('{tmp_canary}')\n\
         plt.savefig('/mnt/data/plot.png')\nplt.savefig('sub/dir/deep.png')\n\
         pd.DataFrame({{'a': [1]}}).to_csv('{o}/table.csv')\n\
         np.save('{o}/arr.npy', np.zeros(2))\n\
         json.dump({{'a': 1}}, open('{o}/stats.json', 'w'))\n\
         open('../../up.txt', 'w').write('x')\n",
        o = o_path
    );
    sides.run(&code, None, |side, o| {
        assert!(o.is_success(), "{side}: {:?}", o.result);
        let left: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert!(left.is_empty(), "{side}: written outside: {left:?}");
        assert!(!std::path::Path::new(&tmp_canary).exists(), "{side}");
        let asked = |name: &str| o.artifact(name).and_then(|a| a.requested.clone());
        assert_eq!(
            asked("escape.png"),
            Some(format!("{o_path}/escape.png")),
            "{side}"
        );
        assert_eq!(
            asked("climb.png").as_deref(),
            Some("../climb.png"),
            "{side}"
        );
        assert_eq!(
            asked("plot.png").as_deref(),
            Some("/mnt/data/plot.png"),
            "{side}"
        );
        assert_eq!(
            asked("deep.png").as_deref(),
            Some("sub/dir/deep.png"),
            "{side}"
        );
        for name in ["table.csv", "arr.npy", "stats.json", "up.txt"] {
            let a = o.artifact(name).unwrap_or_else(|| panic!("{side}: {name}"));
            assert_eq!(a.obtained, Some(Obtained::Written), "{side}: {name}");
        }
        assert_eq!(
            o.artifact("escape.png").unwrap().obtained,
            Some(Obtained::Saved)
        );
    });
}

#[test]
fn ten_thousand_saves_answer_the_artifact_bound() {
    let sides = Sides::new();
    let code = "fig = plt.figure()\nplt.plot([1, 2])\nfor i in range(10000):\n    fig.savefig(f'f{i}.png', dpi=10)\n";
    sides.run(code, None, |side, o| match o.failure() {
        Some(JobFailure::InvalidOutput { check, detail }) => {
            assert_eq!(check, "max_artifacts", "{side}");
            assert!(detail.contains("max_artifacts"), "{side}: {detail}");
        }
        other => panic!("{side}: {other:?}"),
    });
    // Caught and ignored by the code: still the bound.
    let code = "fig = plt.figure()\nplt.plot([1, 2])\nfor i in range(40):\n    try:\n        fig.savefig(f'f{i}.png', dpi=10)\n    except OSError:\n        pass\n";
    sides.run(code, None, |side, o| {
        assert!(
            matches!(o.failure(), Some(JobFailure::InvalidOutput { check, .. }) if check == "max_artifacts"),
            "{side}: {:?}",
            o.result
        );
    });
}

#[test]
fn save_names_with_control_characters_are_refused() {
    let sides = Sides::new();
    for name in [
        "a\\x01b.png",
        "a\\x00b.png",
        "bad\\nname.png",
        "x\\x7f.csv",
        "\\x85.png",
    ] {
        let code = format!("plt.plot([1])\nplt.savefig('{name}')\n");
        sides.run(&code, None, |side, o| {
            assert!(
                matches!(o.failure(), Some(JobFailure::PythonError(_))),
                "{side}: {name}: {:?}",
                o.result
            );
        });
        let code = format!("open('{name}', 'w').write('x')\n");
        sides.run(&code, None, |side, o| {
            assert!(o.failure().is_some(), "{side}: {name}: {:?}", o.result);
        });
    }
}

#[test]
fn reads_reach_the_inputs_only() {
    let sides = Sides::new();
    let (_secret_dir, secret, src) = canary_and_input();
    let s = secret.display();
    for code in [
        "print(open('/etc/passwd').read())".to_string(),
        "print(open('/mnt/data/../../etc/passwd').read())".into(),
        "print(pd.read_csv('/mnt/data/../../etc/passwd'))".into(),
        "print(pd.read_csv('../../../../../../etc/passwd'))".into(),
        "print(open('../x').read())".into(),
        format!("print(open('{s}').read())"),
        format!("print(np.loadtxt('{s}', dtype=str))"),
        format!("print(pd.read_csv('{s}'))"),
        "import io\nprint(io.FileIO('/etc/passwd').read())".into(),
        "import io\nprint(io.open('/etc/passwd').read())".into(),
        "import os\nprint(os.path.realpath('/etc/passwd'))".into(),
        format!("import os\nprint('EXISTS', os.path.exists('/etc/passwd'), os.path.exists('{s}'), os.path.isfile('/mnt/data/../../etc/passwd'))"),
        format!("print(open('/mnt/data/sales.csv').read()); print(open('sales.csv').read()); print(open('{s}').read())"),
    ] {
        sides.run(&code, Some(src.path()), |side, o| {
            let text = seen(o);
            assert!(!text.contains("root:x:0:0"), "{side}: {code}: {text}");
            assert!(!text.contains("CANARY-SECRET-38"), "{side}: {code}: {text}");
            assert!(!text.contains("EXISTS True") && !text.contains("True True"), "{side}: {code}: {text}");
        });
    }
    // A name that is no input lists the inputs.
    sides.run("pd.read_csv('sale.csv')", Some(src.path()), |side, o| {
        assert!(seen(o).contains("sales.csv"), "{side}: {}", seen(o));
    });
    // Writing into the inputs is refused; a write under an input's name is an artifact.
    sides.run(
        "open(srcpath('sales.csv'), 'w').write('x')",
        Some(src.path()),
        |side, o| assert!(o.failure().is_some(), "{side}"),
    );
    assert_eq!(
        std::fs::read_to_string(src.path().join("sales.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    // A symlinked input never reaches its target.
    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&secret, linked.path().join("data.csv")).unwrap();
    for code in [
        "print(open('data.csv').read())",
        "print(pd.read_csv('/mnt/data/data.csv'))",
        "from pathlib import Path\nprint(Path('data.csv').read_text(), list(Path('.').iterdir()))",
    ] {
        for (_, exec) in &sides.0 {
            if let Ok(o) = exec.run(Job::new(code).src_dir(linked.path())) {
                assert!(
                    !seen(&o).contains("CANARY-SECRET-38"),
                    "{code}: {}",
                    seen(&o)
                );
            }
        }
    }
}

/// A host file holding a canary, and an input folder holding `sales.csv`.
fn canary_and_input() -> (tempfile::TempDir, PathBuf, tempfile::TempDir) {
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = secret_dir.path().join("secret.txt");
    std::fs::write(&secret, "CANARY-SECRET-38").unwrap();
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("sales.csv"), "a,b\n1,2\n").unwrap();
    (secret_dir, secret, src)
}

/// Python: `attempt(label, f)` prints `label | refused <exception type>` or
/// `label | gave <repr>`.
const ATTEMPT: &str = "def attempt(label, f):\n    try:\n        r = f()\n    except Exception as e:\n        \
     print(label, '| refused', type(e).__name__)\n    else:\n        print(label, '| gave', repr(r)[:300])\n";

/// `from pathlib import Path` (the reviewed class): reads reach the job's files only,
/// questions about host paths answer False or nothing, host-touching methods are
/// refused, and the logical paths it computes name no host folder. Gate on and off.
#[test]
fn pathlib_reaches_the_job_files_only() {
    let sides = Sides::new();
    let (_secret_dir, secret, src) = canary_and_input();
    let code = format!(
        "from pathlib import Path\nsecret = Path('{s}')\n\
         {ATTEMPT}\
         attempt('passwd', lambda: Path('/etc/passwd').read_text())\n\
         attempt('mnt climb', lambda: Path('/mnt/data/../../etc/passwd').read_text())\n\
         attempt('climb', lambda: Path('../x').read_text())\n\
         attempt('secret text', lambda: secret.read_text())\n\
         attempt('secret bytes', lambda: secret.read_bytes())\n\
         attempt('secret csv', lambda: pd.read_csv(secret))\n\
         attempt('secret open', lambda: open(secret).read())\n\
         attempt('secret loadtxt', lambda: np.loadtxt(secret, dtype=str))\n\
         attempt('secret stat', lambda: secret.stat().st_size)\n\
         attempt('etc iterdir', lambda: [p.name for p in Path('/etc').iterdir()])\n\
         attempt('home', lambda: Path.home())\n\
         attempt('expanduser', lambda: Path('~/.ssh').expanduser())\n\
         attempt('unlink', lambda: Path('sales.csv').unlink())\n\
         attempt('unlink mnt', lambda: Path('/mnt/data/sales.csv').unlink())\n\
         attempt('rename', lambda: Path('sales.csv').rename('x.csv'))\n\
         attempt('chmod', lambda: Path('sales.csv').chmod(0o777))\n\
         attempt('symlink', lambda: Path('link.csv').symlink_to('/etc/passwd'))\n\
         attempt('into inputs', lambda: Path(SRC, 'sales.csv').write_text('x'))\n\
         print('GLOBS', [p.name for p in Path('/etc').glob('*')], [p.name for p in secret.parent.glob('*')])\n\
         print('EXISTS', secret.exists(), Path('/etc/passwd').exists(), Path('/etc').is_dir(), \
         Path('/mnt/data/../../etc/passwd').is_file())\n\
         print('LOGICAL', Path('sales.csv').resolve(), Path('.').absolute(), Path.cwd(), \
         Path('/mnt/data/../x').resolve())\n\
         print('INPUTS', Path('sales.csv').exists(), Path('/mnt/data/sales.csv').is_file(), \
         [p.name for p in Path('/mnt/data').glob('*.csv')], (Path(SRC) / 'sales.csv').is_file())\n\
         plt.plot([1, 2])\nplt.savefig(OUT)\n",
        s = secret.display()
    );
    sides.run(&code, Some(src.path()), |side, o| {
        assert!(o.is_success(), "{side}: {:?}", o.result);
        let text = seen(o);
        assert!(!text.contains("CANARY-SECRET-38"), "{side}: {text}");
        assert!(!text.contains("root:x:0:0"), "{side}: {text}");
        for line in o.stdout.lines().filter(|l| l.contains(" | ")) {
            assert!(line.contains("| refused"), "{side}: {line}");
        }
        assert_eq!(o.stdout.matches("| refused").count(), 18, "{side}: {text}");
        for line in [
            "GLOBS [] []",
            "EXISTS False False False False",
            "LOGICAL /mnt/data/sales.csv /mnt/data /mnt/data /mnt/x",
            "INPUTS True True ['sales.csv'] True",
        ] {
            assert!(
                o.stdout.lines().any(|l| l == line),
                "{side}: {line}: {text}"
            );
        }
    });
    assert_eq!(
        std::fs::read_to_string(src.path().join("sales.csv")).unwrap(),
        "a,b\n1,2\n"
    );
    assert_eq!(std::fs::read_dir(src.path()).unwrap().count(), 1);
}

/// Writes through a Path are artifacts under their base name, wherever the path points;
/// nothing is created outside the job. `mkdir` of the output folders models use changes
/// nothing, and the folder answers as the job's own.
#[test]
fn pathlib_writes_become_artifacts_and_create_nothing_outside() {
    let sides = Sides::new();
    let outside = tempfile::tempdir().unwrap();
    let o_path = outside.path().display().to_string();
    let tmp_canary = format!("/tmp/pyward-path-canary-{}.txt", std::process::id());
    let code = format!(
        "from pathlib import Path\nout = Path('{o}')\nplt.plot([1, 2, 3])\n\
         plt.savefig(out / 'escape.png')\nPath('../climb.txt').write_text('x')\n\
         Path('{tmp_canary}').write_text('x')\n(out / 'table.csv').write_text('a\\n1\\n')\n\
         pd.DataFrame({{'a': [1]}}).to_csv(out / 'frame.csv')\nnp.save(out / 'arr.npy', np.zeros(2))\n\
         (out / 'raw.bin').write_bytes(b'x')\n(out / 'made').mkdir(parents=True)\n\
         Path('output').mkdir(parents=True, exist_ok=True)\nplt.savefig(Path('output') / 'fig.png')\n\
         Path('/mnt/data').mkdir(exist_ok=True)\n\
         print('FOLDER', Path('output').is_dir(), (Path('output') / 'fig.png').exists(), \
         [p.name for p in Path('output').iterdir()], Path('fig.png').is_file(), \
         (out / 'made').is_dir())\n",
        o = o_path
    );
    sides.run(&code, None, |side, o| {
        assert!(o.is_success(), "{side}: {:?}", o.result);
        // Nothing of pathlib's state or of the reviewed class changed: the worker serves on.
        assert!(o.retired.is_none(), "{side}: retired: {:?}", o.retired);
        let left: Vec<_> = std::fs::read_dir(outside.path()).unwrap().collect();
        assert!(left.is_empty(), "{side}: written outside: {left:?}");
        assert!(!std::path::Path::new(&tmp_canary).exists(), "{side}");
        assert!(
            o.stdout.contains("FOLDER True True ['fig.png'] True True"),
            "{side}: {}",
            o.stdout
        );
        let asked = |name: &str| {
            o.artifact(name)
                .unwrap_or_else(|| panic!("{side}: {name}: {:?}", names(o)))
                .requested
                .clone()
        };
        assert_eq!(asked("escape.png"), Some(format!("{o_path}/escape.png")));
        assert_eq!(asked("climb.txt").as_deref(), Some("../climb.txt"));
        assert_eq!(asked("fig.png").as_deref(), Some("output/fig.png"));
        let canary = tmp_canary.rsplit('/').next().unwrap();
        assert_eq!(asked(canary), Some(tmp_canary.clone()));
        for name in ["table.csv", "frame.csv", "arr.npy", "raw.bin"] {
            assert_eq!(asked(name), Some(format!("{o_path}/{name}")), "{side}");
        }
        assert_eq!(o.artifact("table.csv").unwrap().bytes, b"a\n1\n");
    });

    // SRC and OUT as paths: the input read, the figure saved as OUT.
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("sales.csv"), "a,b\n1,2\n3,4\n").unwrap();
    let code = "from pathlib import Path\ndf = pd.read_csv(Path(SRC) / 'sales.csv')\n\
                plt.plot(df['a'], df['b'])\nplt.savefig(Path(OUT))\n\
                print('OUT', Path(OUT).exists(), Path(OUT).name)\n";
    sides.run(code, Some(src.path()), |side, o| {
        assert!(o.is_success(), "{side}: {:?}", o.result);
        let figure = o.artifact("figure.png").expect("OUT");
        assert_eq!(figure.requested, None, "{side}");
        assert!(
            o.stdout.contains("OUT True figure.png"),
            "{side}: {}",
            o.stdout
        );
    });
    // Path.open: the gate refuses the attribute `open` and says to use open(path);
    // without the gate the reviewed method reads the input as open() does.
    sides.run(
        "from pathlib import Path\nprint(Path('sales.csv').open().read())\n",
        Some(src.path()),
        |side, o| match side {
            "gate on" => assert!(seen(o).contains("open(Path("), "{side}: {}", seen(o)),
            _ => assert!(o.stdout.contains("a,b\n1,2"), "{side}: {}", seen(o)),
        },
    );
}

/// A job's subclass of Path whose `__fspath__` and `__str__` name a host file fools no
/// guard: the guards take the reviewed class by exact type and read its text, never its
/// methods; a class patched with the gate off is put back before the next job.
#[test]
fn a_lying_path_subclass_fools_no_guard_and_patches_do_not_outlive_the_job() {
    let sides = Sides::new();
    let (_secret_dir, secret, src) = canary_and_input();
    let code = format!(
        "import os\nfrom pathlib import Path\nclass Lying(Path):\n    def __fspath__(self):\n        \
         return '{s}'\n    def __str__(self):\n        return '{s}'\n\
         {ATTEMPT}\
         attempt('open', lambda: open(Lying('sales.csv')).read())\n\
         attempt('read_text', lambda: Lying('sales.csv').read_text())\n\
         attempt('read_csv', lambda: pd.read_csv(Lying('sales.csv')))\n\
         attempt('loadtxt', lambda: np.loadtxt(Lying('sales.csv'), dtype=str))\n\
         attempt('exists', lambda: os.path.exists(Lying('sales.csv')))\n\
         attempt('joined', lambda: open(Path('.') / Lying('sales.csv')).read())\n\
         plt.plot([1, 2])\nattempt('savefig', lambda: plt.savefig(Lying('lie.png')))\n\
         plt.savefig(OUT)\n",
        s = secret.display()
    );
    sides.run(&code, Some(src.path()), |side, o| {
        let text = seen(o);
        assert!(!text.contains("CANARY-SECRET-38"), "{side}: {text}");
        if side == "gate off" {
            for line in [
                "open | refused PermissionError",
                "read_text | gave 'a,b\\n1,2\\n'",
                "exists | gave False",
                "joined | gave 'a,b\\n1,2\\n'",
                "savefig | refused TypeError",
            ] {
                assert!(o.stdout.lines().any(|l| l == line), "{line}: {text}");
            }
            assert!(o.artifact("lie.png").is_none());
        }
    });

    // Gate off, the class itself patched: the next job on the worker sees the reviewed
    // class (the worker is retired, or the class put back).
    let exec = builder()
        .workers(1)
        .preload_pandas(true)
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let patch = "from pathlib import Path\n\
                 type.__setattr__(Path, 'read_text', lambda self, *a, **k: 'PATCHED')\n\
                 type.__setattr__(Path, 'extra', 1)\nprint(Path('sales.csv').read_text())\n";
    let o = exec.run(Job::new(patch).src_dir(src.path())).unwrap();
    assert!(o.stdout.contains("PATCHED"), "{}", seen(&o));
    assert_eq!(
        o.retired.as_ref().map(|r| r.reason),
        Some(RetireReason::ResetFailed),
        "{:?}",
        o.retired
    );
    let next = "from pathlib import Path\nprint('NEXT', Path('sales.csv').read_text(), hasattr(Path, 'extra'))\n";
    let o = exec.run(Job::new(next).src_dir(src.path())).unwrap();
    assert!(o.stdout.contains("NEXT a,b\n1,2\n False"), "{}", seen(&o));
}
