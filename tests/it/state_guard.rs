//! No state passes between jobs through library registries: for each family, job A
//! changes process-wide state and job B on the same worker sees the pristine state
//! (the after-job state guard restores it, or retires the worker). Run with the gate off,
//! so the guard is shown to hold where a static refusal would be missed, and again under
//! `Isolation::Fresh`.

use crate::common;

use pyward::gate::{Policy, Rule};
use pyward::{Executor, Isolation, Job, RetireReason};

/// (family, job A's change, job B's check of the pristine state).
const FAMILIES: &[(&str, &str, &str)] = &[
    (
        "colormap registry",
        "from matplotlib.colors import ListedColormap\nimport matplotlib\nmatplotlib.colormaps.register(ListedColormap(['r', 'g'], name='pyward_a'))",
        "import matplotlib\nfrom matplotlib.colors import ListedColormap\nassert 'pyward_a' not in matplotlib.colormaps\nmatplotlib.colormaps.register(ListedColormap(['b'], name='pyward_a'))",
    ),
    (
        "color sequences",
        "import matplotlib\nmatplotlib.color_sequences.register('pyward_seq', ['r', 'g'])",
        "import matplotlib\nassert 'pyward_seq' not in matplotlib.color_sequences",
    ),
    (
        "named colours",
        "import matplotlib.colors as mc\nmc.get_named_colors_mapping()['red'] = '#00ff00'\nmc.CSS4_COLORS['blue'] = '#00ff00'\nassert mc.to_hex('red') == '#00ff00'",
        "import matplotlib.colors as mc\nassert mc.to_hex('red') == '#ff0000', mc.to_hex('red')\nassert mc.CSS4_COLORS['blue'] == '#0000FF'",
    ),
    (
        "named styles",
        "plt.style.library['ggplot']['lines.linewidth'] = 9.0\nplt.style.library['pyward_style'] = {'lines.linewidth': 7.0}",
        "assert 'pyward_style' not in plt.style.library\nplt.style.use('ggplot')\nassert plt.rcParams['lines.linewidth'] != 9.0",
    ),
    (
        "scales",
        "import matplotlib.scale as ms\nclass PywardScale(ms.LinearScale):\n    name = 'pyward_scale'\nms.register_scale(PywardScale)",
        "import matplotlib.scale as ms\nassert 'pyward_scale' not in ms.get_scale_names()",
    ),
    (
        "projections",
        "from matplotlib.projections import register_projection\nfrom matplotlib.axes import Axes\nclass PywardAxes(Axes):\n    name = 'pyward_proj'\nregister_projection(PywardAxes)",
        "from matplotlib.projections import get_projection_names\nassert 'pyward_proj' not in get_projection_names()",
    ),
    (
        "unit converters",
        "import matplotlib.units as mu\nimport datetime\nclass Bad(mu.ConversionInterface):\n    pass\nmu.registry[datetime.date] = Bad()\nmu.registry[complex] = Bad()",
        "import matplotlib.units as mu\nimport datetime\nassert complex not in mu.registry\nassert type(mu.registry[datetime.date]).__name__ != 'Bad'",
    ),
    (
        "font manager list",
        "from matplotlib.font_manager import fontManager\nfontManager.ttflist.clear()",
        "from matplotlib.font_manager import fontManager\nassert len(fontManager.ttflist) > 0",
    ),
    (
        "pandas options",
        "pd.set_option('display.max_rows', 3)\npd.options.display.precision = 1",
        "assert pd.get_option('display.max_rows') == 60\nassert pd.get_option('display.precision') == 6",
    ),
    (
        "pandas accessors",
        "@pd.api.extensions.register_dataframe_accessor('pyward_acc')\nclass Acc:\n    def __init__(self, df):\n        self.df = df",
        "try:\n    pd.DataFrame({'a': [1]}).pyward_acc\n    raise AssertionError('accessor survived')\nexcept AttributeError:\n    pass",
    ),
    (
        "numpy error state and print options",
        "np.seterr(all='raise')\nnp.set_printoptions(precision=2)",
        "assert np.geterr()['divide'] == 'warn', np.geterr()\nassert np.get_printoptions()['precision'] == 8\nnp.array([1.0]) / 0",
    ),
    (
        "decimal context",
        "import decimal\ndecimal.getcontext().prec = 3",
        "import decimal\nassert decimal.getcontext().prec == 28",
    ),
    (
        "a library class patched",
        "import matplotlib.figure\nmatplotlib.figure.Figure.pyward_marker = 1\nmatplotlib.figure.Figure.get_dpi = lambda self: 1",
        "f = plt.figure()\nassert f.get_dpi() != 1\ntry:\n    f.pyward_marker\n    raise AssertionError('patch survived')\nexcept AttributeError:\n    pass",
    ),
    (
        "rcParams validators",
        "plt.rcParams.validate['lines.linewidth'] = lambda v: 42.0",
        "plt.rcParams['lines.linewidth'] = 2.0\nassert plt.rcParams['lines.linewidth'] == 2.0",
    ),
];

const SAVE: &str = "\nplt.figure()\nplt.plot([0, 1], [1, 0])\nplt.savefig(OUT)\n";

fn run_ok(exec: &Executor, family: &str, code: &str) -> pyward::Outcome {
    let outcome = exec.run(Job::new(format!("{code}{SAVE}"))).unwrap();
    assert!(
        outcome.is_success(),
        "{family}: {}",
        outcome.feedback().unwrap_or_default()
    );
    outcome
}

#[test]
fn each_registry_family_is_pristine_for_the_next_job_on_the_same_worker() {
    let exec = common::builder()
        .preload_pandas(true)
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    for (family, change, check) in FAMILIES {
        let a = run_ok(&exec, family, change);
        let b = run_ok(&exec, family, check);
        assert!(
            a.retired.is_none(),
            "{family}: restored, not retired: {:?}",
            a.retired
        );
        assert_eq!(
            a.worker.as_ref().unwrap().pid,
            b.worker.as_ref().unwrap().pid,
            "{family}: B ran on the same worker"
        );
    }
}

#[test]
fn each_registry_family_is_pristine_under_fresh_isolation() {
    let exec = common::builder()
        .preload_pandas(true)
        .isolation(Isolation::Fresh)
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    for (family, change, check) in FAMILIES {
        let a = run_ok(&exec, family, change);
        let b = run_ok(&exec, family, check);
        assert_ne!(
            a.worker.as_ref().unwrap().pid,
            b.worker.as_ref().unwrap().pid
        );
    }
}

#[test]
fn a_module_first_imported_by_a_job_with_state_of_its_own_retires_the_worker() {
    let exec = common::builder().workers(1).build().unwrap();
    let a = run_ok(
        &exec,
        "import",
        "from scipy import stats\nx = stats.norm.pdf(0.0)",
    );
    let retired = a.retired.as_ref().expect("retired");
    assert_eq!(retired.reason, RetireReason::StateChanged);
    assert!(
        retired.detail.contains("imported by the job"),
        "{}",
        retired.detail
    );
    let b = run_ok(&exec, "after", "x = 1");
    assert_ne!(
        a.worker.as_ref().unwrap().pid,
        b.worker.as_ref().unwrap().pid
    );
}

#[test]
fn registering_into_a_library_registry_is_refused_by_the_gate_with_a_lesson() {
    let policy = Policy::figures();
    for code in [
        "from matplotlib.scale import register_scale\nregister_scale(S)",
        "import matplotlib.projections as p\np.register_projection(A)",
        "@pd.api.extensions.register_dataframe_accessor('x')\nclass A:\n    pass",
        "from matplotlib.font_manager import fontManager\nfontManager.addfont(srcpath('f.ttf'))",
    ] {
        let v = pyward::gate::check(code, &policy).unwrap();
        assert!(!v.is_allowed(), "allowed: {code}");
        assert!(
            v.violations
                .iter()
                .any(|x| x.rule == Rule::RegistryMutation && x.hint.starts_with("instead ")),
            "{code}: {:?}",
            v.violations
        );
    }
    // Ordinary code that merely uses the registries passes; so does registering a
    // colormap or a colour sequence, registries the guard restores (run for real in
    // a_colormap_a_job_registers_is_its_own).
    for code in [
        "import matplotlib\nc = matplotlib.colormaps['viridis']",
        "import matplotlib as mpl\nmpl.colormaps.register(cmap=brand)",
        "import matplotlib\nmatplotlib.color_sequences.register('brand', ['#0b3954', '#ff5a5f'])",
        "plt.imshow(np.eye(3), cmap=plt.get_cmap('magma'))",
        "pd.set_option('display.max_rows', 10)",
    ] {
        let v = pyward::gate::check(code, &policy).unwrap();
        assert!(v.is_allowed(), "{code}: {:?}", v.violations);
    }
}

/// A brand colormap registered and used by name, as model code does, with the gate on:
/// the job draws with it, and the next job on the same worker finds the registry as
/// warm-up left it (the guard restored it; the worker is not retired).
#[test]
fn a_colormap_a_job_registers_is_its_own() {
    let exec = common::builder().workers(1).build().unwrap();
    let brand = "import matplotlib as mpl\nfrom matplotlib.colors import LinearSegmentedColormap\n\
                 mpl.colormaps.register(cmap=LinearSegmentedColormap.from_list('brand', ['#0b3954', '#ff5a5f']))\n\
                 mpl.color_sequences.register('brand_seq', ['#0b3954', '#ff5a5f'])\n\
                 plt.imshow([[0, 1], [1, 0]], cmap='brand')\n";
    let a = run_ok(&exec, "brand colormap", brand);
    assert!(a.retired.is_none(), "{:?}", a.retired);
    let b = run_ok(
        &exec,
        "brand colormap",
        "import matplotlib as mpl\nassert 'brand' not in mpl.colormaps\nassert 'brand_seq' not in mpl.color_sequences\nplt.plot([1, 2])\n",
    );
    assert_eq!(a.worker.unwrap().pid, b.worker.unwrap().pid);
}

#[test]
fn every_registering_function_of_the_allowed_modules_is_reviewed_in_the_guard() {
    let report = common::sweep("registry_sweep.py");
    assert!(
        report["found"].as_array().unwrap().len() >= 20,
        "the discovery finds the known registries: {report}"
    );
    assert_eq!(
        report["unreviewed"],
        serde_json::json!([]),
        "new registering functions: add each to REGISTRARS in python/state_guard/tables.py with what covers it"
    );
    assert!(
        report["guarded"]["containers"].as_u64().unwrap() > 300,
        "{report}"
    );
    assert!(
        report["guarded"]["classes"].as_u64().unwrap() > 30,
        "{report}"
    );
}

/// A job's own object left as a key in a library cache (matplotlib's `to_rgba` cache)
/// would run its code in the next job's lookup (its `__eq__` is called to compare the
/// keys): the guard restores the cache, so the next job on the same worker finds its
/// colour without running the earlier job's code. Gate on, as model code would reach it.
#[test]
fn a_job_s_object_left_in_a_library_cache_runs_in_no_later_job() {
    let exec = common::builder().workers(1).build().unwrap();
    let plant = "import matplotlib.colors as mc\n\
                 class K(tuple):\n    def __eq__(self, other):\n        print('LEAK')\n        return True\n    \
                 def __hash__(self):\n        return hash((0.1, 0.2, 0.3))\n\
                 mc.to_rgba(K((0.1, 0.2, 0.3)))\n";
    let a = run_ok(&exec, "cache key", plant);
    let b = run_ok(
        &exec,
        "cache key",
        "import matplotlib.colors as mc\nprint(mc.to_rgba((0.1, 0.2, 0.3)))\n",
    );
    assert_eq!(a.worker.unwrap().pid, b.worker.unwrap().pid);
    assert!(!b.stdout.contains("LEAK"), "{}", b.stdout);
    assert!(b.stdout.contains("(0.1, 0.2, 0.3, 1)"), "{}", b.stdout);
}
