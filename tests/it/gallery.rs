//! Real plotting patterns that used to be refused (matplotlib gallery shapes: cbook's pure
//! helpers, its sample data, cycler) now run; what cbook offers beyond its reviewed
//! members, and file/process/import capabilities re-exported by allowed modules, stay
//! refused by the gate and, with the gate off, at run time.

use crate::common;

use pyward::gate::{self, BadInput, Policy, Rule};
use pyward::{Executor, Job, Outcome};

fn run(exec: &Executor, code: &str) -> Outcome {
    exec.run(Job::new(code)).expect("infrastructure")
}

/// The job's Python error as `Type: message`, or a panic when it did not raise.
fn python_error(outcome: &Outcome) -> String {
    match outcome.failure() {
        Some(pyward::JobFailure::PythonError(e)) => format!("{}: {}", e.type_name, e.message),
        other => panic!("expected a Python error, got {other:?}"),
    }
}

const BOXPLOT_STATS: &str = r#"
import matplotlib.cbook as cbook
data = np.random.lognormal(size=(37, 4), mean=1.5, sigma=1.75)
stats = cbook.boxplot_stats(data, labels=list('ABCD'), bootstrap=200)
for s in stats:
    s['med'] = float(np.median(data))
fig, ax = plt.subplots()
ax.bxp(stats, showmeans=True)
fig.savefig(OUT)
"#;

const SAMPLE_DATA: &str = r#"
from matplotlib import cbook
with cbook.get_sample_data('goog.npz') as datafile:
    price = datafile['price_data'].view(np.recarray)
dem = cbook.get_sample_data('jacksboro_fault_dem.npz')
z = dem['elevation']
path = cbook.get_sample_data('msft.csv', asfileobj=False)
msft = pd.read_csv(path)
fig, (a, b, c) = plt.subplots(1, 3, figsize=(9, 3))
a.plot(price.date[-250:], price.adj_close[-250:])
b.imshow(z, cmap='gist_earth')
c.plot(msft['Close'])
fig.savefig(OUT)
"#;

const ARRAY_HELPERS: &str = r#"
from matplotlib.cbook import contiguous_regions, pts_to_prestep, violin_stats, flatten
x = np.linspace(0, 10, 200)
y = np.sin(x)
fig, ax = plt.subplots()
for start, stop in contiguous_regions(y > 0.5):
    ax.axvspan(x[start], x[stop - 1], alpha=0.2)
ax.plot(*pts_to_prestep(x, y))
def kde(data, coords):
    return np.exp(-((coords[:, None] - data[None, :]) ** 2)).sum(axis=1)
stats = violin_stats([np.random.normal(size=100)], kde)
ax.set_title(f"{len(stats)} violin, {len(list(flatten([[1, [2]], 3])))} items")
fig.savefig(OUT)
"#;

const CYCLER: &str = r#"
from cycler import cycler
default_cycler = cycler(color=['r', 'g', 'b', 'y']) + cycler(linestyle=['-', '--', ':', '-.'])
plt.rc('lines', linewidth=4)
plt.rc('axes', prop_cycle=default_cycler)
custom = cycler(color=['c', 'm', 'y', 'k']) * cycler(lw=[1, 2])
fig, (a, b) = plt.subplots(1, 2)
a.plot(np.random.rand(10, 4))
b.set_prop_cycle(custom)
b.plot(np.random.rand(10, 8))
fig.savefig(OUT)
"#;

#[test]
fn gallery_patterns_pass_the_gate_and_run() {
    let exec = common::builder().preload_pandas(true).build().unwrap();
    for (name, code) in [
        ("boxplot_stats", BOXPLOT_STATS),
        ("sample data", SAMPLE_DATA),
        ("array helpers", ARRAY_HELPERS),
        ("cycler", CYCLER),
    ] {
        let outcome = run(&exec, code);
        assert!(
            outcome.is_success(),
            "{name}: {}",
            outcome.feedback().unwrap_or_default()
        );
    }
}

#[test]
fn cbook_beyond_its_members_is_refused_by_the_gate() {
    let policy = Policy::figures();
    for code in [
        "from matplotlib.cbook import to_filehandle",
        "import matplotlib.cbook as cbook\ncbook.open_file_cm('x')",
        "from matplotlib import cbook\nf = cbook.to_filehandle",
        "import matplotlib.cbook\nmatplotlib.cbook.get_data_path()",
        "plt.matplotlib.cbook.to_filehandle('x')",
    ] {
        let v = gate::check(code, &policy).unwrap();
        assert!(!v.is_allowed(), "allowed: {code}");
    }
    let v = gate::check("from matplotlib.cbook import to_filehandle", &policy).unwrap();
    let hint = &v.violations[0].hint;
    assert_eq!(v.violations[0].rule, Rule::SubmoduleDenied);
    assert!(
        hint.contains("boxplot_stats"),
        "teaches the members: {hint}"
    );
    let v = gate::check(
        "import matplotlib.cbook as c\nc._get_data_path('x')",
        &policy,
    )
    .unwrap();
    assert!(!v.is_allowed());
}

#[test]
fn cbook_beyond_its_members_is_refused_at_run_time_with_the_gate_off() {
    let exec = common::builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let canary = std::env::temp_dir().join(format!("pyward-cbook-{}", std::process::id()));
    let cases = [
        (
            "import matplotlib.cbook as cbook\ncbook.to_filehandle('/etc/passwd')".to_string(),
            "offers only",
        ),
        (
            format!("from matplotlib.cbook import open_file_cm\nopen_file_cm({:?}, 'w')", canary),
            "ImportError",
        ),
        (
            "from matplotlib import cbook\ncbook._get_data_path('x')".into(),
            "not available",
        ),
        (
            "plt.cbook.get_sample_data('/etc/passwd', asfileobj=False)".into(),
            "PermissionError",
        ),
        (
            "from matplotlib import cbook\ncbook.get_sample_data('../../../../../../../../etc/passwd').read()".into(),
            "PermissionError",
        ),
    ];
    for (code, expected) in cases {
        let outcome = run(&exec, &code);
        let err = python_error(&outcome);
        assert!(err.contains(expected), "{code}\n-> {err}");
        assert!(!outcome.stdout.contains("root:"));
    }
    assert!(!canary.exists(), "the canary file was written");
}

#[test]
fn a_file_capability_re_exported_by_an_allowed_module_is_refused_at_run_time() {
    let canary = std::env::temp_dir().join(format!("pyward-reexport-{}", std::process::id()));
    let write = format!(
        "from matplotlib.font_manager import Path\nPath({:?}).write_text('escaped')",
        canary
    );
    for policy in [Policy::figures(), Policy::gate_disabled_for_testing()] {
        let exec = common::builder().policy(policy).build().unwrap();
        let outcome = run(&exec, &write);
        let err = python_error(&outcome);
        assert!(err.starts_with("ImportError"), "{err}");
        let outcome = run(
            &exec,
            "import matplotlib.font_manager as fm\nprint(fm.Path('/etc/passwd').read_text())",
        );
        let err = python_error(&outcome);
        assert!(err.contains("file, process or import access"), "{err}");
        assert!(!outcome.stdout.contains("root:"));
    }
    assert!(!canary.exists(), "the canary file was written");
}

#[test]
fn a_coding_declaration_other_than_utf8_is_bad_input() {
    let policy = Policy::figures();
    let err = gate::check("# -*- coding: latin-1 -*-\nx = 1\n", &policy).unwrap_err();
    assert!(
        matches!(err, BadInput::ForeignEncoding { line: 1, .. }),
        "{err:?}"
    );
    assert!(err.teaching_text().contains("UTF-8"));
    // utf-7 decodes '+AG8-' as 'o': the same bytes read as other text.
    let src = b"#!/usr/bin/env python\n# coding: utf-7\nx = '+AG8-'\n";
    assert!(matches!(
        gate::check_bytes(src, &policy),
        Err(BadInput::ForeignEncoding { line: 2, .. })
    ));
    assert!(gate::check("# coding: utf-8\nx = 1\n", &policy)
        .unwrap()
        .is_allowed());
}

#[test]
fn every_public_name_of_the_allowed_modules_is_swept_for_re_exported_capabilities() {
    let report = common::sweep("reexport_sweep.py");
    let list = |k: &str| -> Vec<String> {
        report[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert!(report["swept"].as_u64().unwrap() > 5_000, "{report}");
    assert_eq!(list("leaked"), Vec::<String>::new(), "capabilities passed");
    let refused = list("refused");
    assert!(refused
        .iter()
        .any(|r| r == "matplotlib.font_manager.Path = pathlib.Path"));
    // Every refusal is a real capability (files, introspection), not an ordinary class.
    for r in &refused {
        let origin = r.split(" = ").nth(1).unwrap();
        assert!(
            origin.starts_with("pathlib.") || origin.starts_with("inspect."),
            "refused something ordinary: {r}"
        );
    }
}
