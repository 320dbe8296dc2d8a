//! Reuse mode carries nothing from one job to the next, registry by registry and key by
//! key: job A (one tenant) sets every settable key of every process-wide registry a job
//! can reach to a marker, and job B (another tenant) on the same worker reads every key
//! at its template value, with no marker anywhere in its output; or A's worker was
//! retired (`state_changed`) and B ran on a new one. The keys are listed at run time,
//! inside the jobs (`tests/data/cross_job/`), never from a table here; a key A could not
//! set must be in `EXPECTED_SKIPS` with its reason. Gate off (the state guard alone) and
//! gate on (what a job that passes the gate can write).
//!
//! Then the families the listing cannot show: a class-level table that runs a job's code
//! inside later jobs (matplotlib's legend handler map) and keeps their data
//! (`MaxNLocator.default_params`); descriptors and scratch space a job keeps past the
//! reset (the worker is retired, the next job is not degraded); and the coverage of the
//! guard itself: every registry the allowlist and pyward's own modules reach is guarded
//! or excluded with a reason (`tests/data/guard_coverage.py`), and what a job changes of
//! pyward's own state with the gate off is back for the next job.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use pyward::gate::{self, Policy};
use pyward::{Executor, Job, Outcome, RetireReason};
use serde_json::Value;

pub(crate) const DUMP: &str = include_str!("../data/cross_job/dump.py");
pub(crate) const SET_ALL: &str = include_str!("../data/cross_job/set_all.py");

/// Keys job A cannot set to anything but their current value, with the reason (the
/// setter's own refusal of every candidate). Any other skip fails the test.
const EXPECTED_SKIPS: &[(&str, &str, &str)] = &[
    (
        "pandas options",
        "compute.use_numba",
        "its one other value (True) makes the option's callback import numba, which is not installed",
    ),
    (
        "warnings",
        "showwarning",
        "a module attribute: the module a job gets is a read-only view (a rebinding through \
         another route is the state guard's module namespace check)",
    ),
    ("warnings", "formatwarning", "as showwarning"),
    ("warnings", "defaultaction", "as showwarning"),
    // `*`: every key of that prefix.
    (
        "rcParams",
        "animation.writer",
        "names a program: the worker keeps its value whatever the job writes \
         (tests/it/settings.rs)",
    ),
    ("rcParams", "animation.ffmpeg_*", "a program and its arguments: as animation.writer"),
    ("rcParams", "animation.convert_*", "a program and its arguments: as animation.writer"),
    ("rcParams", "animation.html", "html5 starts ffmpeg: as animation.writer"),
    ("rcParams", "text.latex.*", "LaTeX's engine and preamble: as animation.writer"),
    ("rcParams", "pgf.*", "which TeX program starts: as animation.writer"),
    ("rcParams", "webagg.*", "a web server's address: as animation.writer"),
    ("rcParams", "savefig.directory", "a folder of the host: as animation.writer"),
    ("rcParams", "backend", "a module by name (Agg is the one backend): as animation.writer"),
    ("rcParams", "macosx.*", "a GUI toolkit: as animation.writer"),
    ("rcParams", "toolbar", "a GUI toolkit's tools: as animation.writer"),
];

/// Whether `key` of `registry` is an expected skip (`EXPECTED_SKIPS`).
fn expected_skip(registry: &str, key: &str) -> bool {
    EXPECTED_SKIPS.iter().any(|(r, k, _)| {
        *r == registry
            && match k.strip_suffix('*') {
                Some(prefix) => key.starts_with(prefix),
                None => *k == key,
            }
    })
}

fn executor(policy: Policy) -> Executor {
    common::builder()
        .workers(1)
        .preload_pandas(true)
        .stdout_cap(1 << 20)
        .reuse_across_tenants(true)
        .policy(policy)
        .build()
        .expect("pool starts")
}

pub(crate) fn run(exec: &Executor, code: &str, tenant: &str) -> Outcome {
    let outcome = exec
        .run(Job::new(code).seed(4242).tenant(tenant))
        .expect("infrastructure");
    if let Err(f) = &outcome.result {
        panic!(
            "{tenant}: {}\nfeedback:\n{}\nstdout:\n{:.3000}",
            f.status(),
            f.feedback(),
            outcome.stdout
        );
    }
    outcome
}

/// The JSON a job printed after `tag`.
pub(crate) fn tagged(outcome: &Outcome, tag: &str) -> Value {
    let line = outcome
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(tag))
        .unwrap_or_else(|| panic!("no {tag} line in:\n{}", outcome.stdout));
    serde_json::from_str(line).expect("JSON")
}

pub(crate) fn pid(outcome: &Outcome) -> u32 {
    outcome.worker.as_ref().expect("ran on a worker").pid
}

/// dump.py cut at its `# section:` lines: (the imports and helpers, [(name, code)],
/// the closing print).
fn dump_sections() -> (String, Vec<(String, String)>, String) {
    let mut parts = DUMP.split("\n# section: ");
    let header = parts.next().unwrap().to_string() + "\n";
    let mut sections = Vec::new();
    let mut end = String::new();
    for part in parts {
        let (name, code) = part.split_once('\n').unwrap();
        if name == "end" {
            end = code.to_string();
        } else {
            sections.push((name.to_string(), format!("{code}\n")));
        }
    }
    (header, sections, end)
}

fn dump_program(header: &str, sections: &[(String, String)], end: &str) -> String {
    let body: String = sections.iter().map(|(_, c)| c.as_str()).collect();
    format!("{header}{body}{end}")
}

/// Keys whose value differs between two dumps (or that only one has), by registry.
pub(crate) fn differences(template: &Value, after: &Value) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for (registry, keys) in template.as_object().unwrap() {
        let other = after.get(registry).and_then(Value::as_object);
        let mut diff = Vec::new();
        let keys = keys.as_object().unwrap();
        let mut names: BTreeSet<&String> = keys.keys().collect();
        names.extend(
            other
                .map(|o| o.keys().collect::<Vec<_>>())
                .unwrap_or_default(),
        );
        for k in names {
            if keys.get(k) != other.and_then(|o| o.get(k)) {
                diff.push(k.clone());
            }
        }
        if !diff.is_empty() {
            out.insert(registry.clone(), diff);
        }
    }
    out
}

/// B after A: on A's worker with every key at its template value, or on a new worker
/// because A's was retired for the state it left.
fn assert_pristine(template: &Outcome, a: &Outcome, b: &Outcome, what: &str) {
    match &a.retired {
        None => assert_eq!(pid(a), pid(b), "{what}: B ran on A's worker"),
        Some(r) => {
            assert_eq!(r.reason, RetireReason::StateChanged, "{what}: {r:?}");
            assert_ne!(pid(a), pid(b), "{what}: a retired worker ran B");
        }
    }
    assert_eq!(
        pid(template),
        pid(a),
        "{what}: the template was read on A's worker (template retired: {:?})",
        template.retired
    );
    let diff = differences(
        &tagged(template, "PYWARD-STATE "),
        &tagged(b, "PYWARD-STATE "),
    );
    assert!(
        diff.is_empty(),
        "{what}: keys that do not read their template value in job B: {diff:#?}"
    );
    assert!(
        !b.stdout.contains("PYWARD-A"),
        "{what}: a marker of job A in B's output:\n{}",
        b.stdout
    );
}

#[test]
fn every_key_of_every_registry_reads_its_template_in_the_next_job_gate_off() {
    let exec = executor(Policy::gate_disabled_for_testing());
    let (header, sections, end) = dump_sections();
    let dump = dump_program(&header, &sections, &end);
    let template = run(&exec, &dump, "tenant-t");
    let a = run(&exec, SET_ALL, "tenant-a");
    let report = tagged(&a, "PYWARD-SET ");
    let b = run(&exec, &dump, "tenant-b");

    // Every registry of the dump had keys set, and every key A listed was set or is an
    // expected skip.
    let set = report["set"].as_object().unwrap();
    for (name, _) in &sections {
        let count = set
            .get(name)
            .and_then(Value::as_object)
            .map_or(0, |m| m.len());
        assert!(
            count > 0
                || ["legend handler map", "MaxNLocator.default_params"].contains(&name.as_str()),
            "job A set no key of {name}: {report}"
        );
    }
    let mut unexpected = Vec::new();
    for (registry, keys) in report["skipped"].as_object().unwrap() {
        for (key, why) in keys.as_object().unwrap() {
            if !expected_skip(registry, key) {
                unexpected.push(format!("{registry} / {key}: {why}"));
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "keys job A could not set (each needs a reason in EXPECTED_SKIPS):\n{}",
        unexpected.join("\n")
    );
    let total: usize = set.values().map(|m| m.as_object().unwrap().len()).sum();
    println!(
        "gate off: job A set {total} keys in {} registries; retired: {:?}",
        set.len(),
        a.retired
    );
    assert_pristine(&template, &a, &b, "gate off");
}

/// The statement a gate-on job writes to set `key` of `registry` to `marker` (a Python
/// literal; `None` when job A's marker is not one), or why it cannot be written.
fn gate_on_statement(registry: &str, key: &str, marker: Option<&str>) -> Result<String, String> {
    let quoted = serde_json::to_string(key).unwrap();
    let literal = || marker.ok_or_else(|| "job A's value is no literal".to_string());
    Ok(match registry {
        "pandas options" => {
            let marker = literal()?;
            format!("pd.set_option({quoted}, {marker})")
        }
        "numpy print options" => {
            let marker = literal()?;
            format!("np.set_printoptions({key}={marker})")
        }
        "numpy error state" if key.starts_with("errstate") => {
            "state = np.errstate(all='raise')\nstate.__enter__()".into()
        }
        "numpy error state" if key == "call" => return Err("no literal callback".into()),
        "numpy error state" => {
            let marker = literal()?;
            format!("np.seterr({key}={marker})")
        }
        "numpy random state" => "np.random.seed(987654)".into(),
        "python random state" => "import random\nrandom.seed(987654)".into(),
        "rcParams" => {
            let marker = literal()?;
            format!("plt.rcParams[{quoted}] = {marker}")
        }
        "colormaps" if key.ends_with("(added)") => "import matplotlib\nfrom matplotlib.colors import ListedColormap\nmatplotlib.colormaps.register(ListedColormap(['#123456'], name='PYWARD-A-cmap'))".into(),
        "color sequences" if key.ends_with("(added)") => "import matplotlib\nmatplotlib.color_sequences.register('PYWARD-A-seq', ['#123456'])".into(),
        "units registry" if key.ends_with("(added)") => "import matplotlib.units as munits\nmunits.registry[complex] = munits.ConversionInterface()".into(),
        "projections" if key.ends_with("(added)") => "from matplotlib.projections import register_projection\nfrom matplotlib.axes import Axes\nclass MarkerAxes(Axes):\n    name = 'PYWARD-A-proj'\nregister_projection(MarkerAxes)".into(),
        "colormaps" | "color sequences" | "units registry" | "projections" => {
            return Err("replacing an entry takes the registry's private table".into())
        }
        "style library" if key.ends_with("(added)") => "plt.style.library['PYWARD-A-style'] = {'lines.linewidth': 9.75}".into(),
        "style library" => format!("plt.style.library[{quoted}]['lines.linewidth'] = 9.75"),
        "warnings" => "import warnings\nwarnings.simplefilter('error')".into(),
        "decimal contexts" => {
            let (context, field) = key.split_once('.').unwrap();
            let target = if context == "current" {
                "decimal.getcontext()".to_string()
            } else {
                format!("decimal.{context}")
            };
            match field {
                "flags" | "traps" => format!(
                    "import decimal\n{target}.{field}[decimal.Inexact] = {}",
                    literal()?
                ),
                _ => format!("import decimal\n{target}.{field} = {}", literal()?),
            }
        }
        "locale" => format!(
            "from pandas._config import localization\nlocale_state = localization.set_locale({}, 6)\nlocale_state.__enter__()",
            literal()?
        ),
        "ABC registrations" => "import collections.abc\nimport numbers\nfor abc in (collections.abc.Mapping, collections.abc.Sequence, numbers.Integral):\n    abc.register(complex)".into(),
        "csv dialects" if key.ends_with("(added)") => "import csv\ncsv.register_dialect('PYWARD-A-dialect', delimiter='|')".into(),
        "csv dialects" => format!("import csv\ncsv.register_dialect({quoted}, delimiter=';')"),
        other => return Err(format!("no gate-on statement for {other}")),
    })
}

#[test]
fn every_key_a_gate_on_job_can_set_reads_its_template_in_the_next_job() {
    // The markers: what a gate-off job A managed to set, key by key.
    let probe = executor(Policy::gate_disabled_for_testing());
    let report = tagged(&run(&probe, SET_ALL, "probe"), "PYWARD-SET ");
    drop(probe);

    let policy = Policy::figures();
    let accepted = |code: &str| -> Result<(), String> {
        let verdict = gate::check(code, &policy).map_err(|e| format!("{e:?}"))?;
        match verdict.violations.first() {
            None => Ok(()),
            Some(v) => Err(format!("refused by the gate: {:?}: {}", v.rule, v.message)),
        }
    };
    let mut statements = Vec::new();
    let mut last = Vec::new(); // warnings and numpy's error state go last
    let mut skipped = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for (registry, keys) in report["set"].as_object().unwrap() {
        for (key, set) in keys.as_object().unwrap() {
            let marker = set["marker"].as_str().unwrap();
            let literal = set["literal"].as_bool() == Some(true);
            let statement = gate_on_statement(registry, key, literal.then_some(marker));
            let verdict = statement.and_then(|s| accepted(&format!("{s}\n")).map(|()| s));
            match verdict {
                Ok(s) if seen.insert(s.clone()) => {
                    if registry == "warnings" || registry == "numpy error state" {
                        last.push(s);
                    } else {
                        statements.push(s);
                    }
                }
                Ok(_) => {}
                Err(why) => {
                    skipped.insert(format!("{registry} / {key}"), why);
                }
            }
        }
    }
    statements.extend(last);
    let set_code = format!(
        "figure, axes = plt.subplots()\naxes.plot([0, 1], [1, 0])\nfigure.savefig(OUT)\nplt.close('all')\n{}\nprint('PYWARD-A done')\n",
        statements.join("\n")
    );
    accepted(&set_code).unwrap_or_else(|e| panic!("job A as a whole: {e}"));

    // The dump's sections that pass the gate.
    let (header, sections, end) = dump_sections();
    accepted(&format!("{header}{end}")).unwrap_or_else(|e| panic!("dump header: {e}"));
    let (kept, refused): (Vec<_>, Vec<_>) = sections
        .into_iter()
        .partition(|(_, code)| accepted(&format!("{header}{code}{end}")).is_ok());
    let dump = dump_program(&header, &kept, &end);

    let exec = executor(policy.clone());
    let template = run(&exec, &dump, "tenant-t");
    let a = run(&exec, &set_code, "tenant-a");
    let b = run(&exec, &dump, "tenant-b");
    println!(
        "gate on: job A ran {} statements; {} keys skipped (by reason below); dump sections the \
         gate refuses: {:?}; A retired: {:?}",
        statements.len(),
        skipped.len(),
        refused.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        a.retired
    );
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for why in skipped.values() {
        *reasons.entry(why.as_str()).or_default() += 1;
    }
    for (why, n) in &reasons {
        println!("  {n:4} skipped: {why:.160}");
    }
    assert!(
        statements.len() > 400,
        "job A set most keys with the gate on"
    );
    assert_pristine(&template, &a, &b, "gate on");
}

/// Job A hooks matplotlib's class-level legend handler map (the dict
/// `Legend.get_default_handler_map()` returns is the class's own) with a handler that
/// records every legend label it draws, keeps the record in the map, and changes the
/// locator's class-level defaults (`MaxNLocator.default_params`).
const HOOK: &str = r#"
from matplotlib.legend import Legend
from matplotlib.legend_handler import HandlerLine2D
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

seen = ['PYWARD-A-record']

class Spy(HandlerLine2D):
    def legend_artist(self, legend, orig_handle, fontsize, handlebox):
        seen.append(orig_handle.get_label())
        print('PYWARD-A-spy saw', orig_handle.get_label())
        return super().legend_artist(legend, orig_handle, fontsize, handlebox)

handlers = Legend.get_default_handler_map()
handlers[Line2D] = Spy()
handlers['PYWARD-A-record'] = seen
MaxNLocator.default_params['nbins'] = 3
MaxNLocator.default_params['steps'] = [1, 3]
plt.plot([0, 1], [1, 0], label='own line of A')
plt.legend()
plt.savefig(OUT)
assert seen[-1] == 'own line of A', seen
"#;

/// Job B draws a legend with a label that is its own data.
const VICTIM: &str = r#"
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator
handler = Legend.get_default_handler_map()[Line2D]
print('handler', type(handler).__name__)
print('nbins', MaxNLocator.default_params['nbins'])
plt.plot([0, 1], [0, 1], label='PYWARD-B-secret-label')
plt.legend()
plt.savefig(OUT)
"#;

/// Job C looks for what A's record kept.
const READER: &str = r#"
from matplotlib.legend import Legend
from matplotlib.ticker import MaxNLocator
print('map record', Legend.get_default_handler_map().get('PYWARD-A-record'))
print('map size', len(Legend.get_default_handler_map()))
print('params', sorted(MaxNLocator.default_params.items(), key=str))
plt.plot([1, 2])
plt.savefig(OUT)
"#;

fn class_level_tables_do_not_carry_a_job_into_the_next(policy: Policy, what: &str) {
    let exec = executor(policy);
    let template = run(&exec, READER, "tenant-t");
    let a = run(&exec, HOOK, "tenant-a");
    let b = run(&exec, VICTIM, "tenant-b");
    let c = run(&exec, READER, "tenant-c");
    assert!(
        a.stdout.contains("PYWARD-A-spy saw own line of A"),
        "{what}: the hook works in A"
    );
    assert!(
        a.retired.is_none(),
        "{what}: the tables are restored, not the worker retired: {:?}",
        a.retired
    );
    assert_eq!(pid(&a), pid(&b), "{what}: B ran on A's worker");
    assert_eq!(pid(&b), pid(&c), "{what}: C ran on B's worker");
    // B's data never reached A's code, and B drew with the stock handler and defaults.
    assert!(
        !b.stdout.contains("PYWARD-A"),
        "{what}: A's code ran in B:\n{}",
        b.stdout
    );
    assert!(
        b.stdout.contains("handler HandlerLine2D"),
        "{what}: {}",
        b.stdout
    );
    assert!(
        !b.stdout.contains("nbins 3"),
        "{what}: A's default: {}",
        b.stdout
    );
    // Nothing of A or B is left for C to read: C reads what a fresh worker reads.
    assert_eq!(c.stdout, template.stdout, "{what}: C reads the template");
    assert!(
        !c.stdout.contains("PYWARD-B-secret-label"),
        "{what}: {}",
        c.stdout
    );
    assert!(!c.stdout.contains("PYWARD-A"), "{what}: {}", c.stdout);
}

#[test]
fn the_legend_handler_map_and_locator_defaults_do_not_carry_a_job_gate_on() {
    let policy = Policy::figures();
    let verdict = gate::check(HOOK, &policy).unwrap();
    assert!(
        verdict.is_allowed(),
        "the gate lets A through: {:?}",
        verdict.violations
    );
    class_level_tables_do_not_carry_a_job_into_the_next(policy, "gate on");
}

#[test]
fn the_legend_handler_map_and_locator_defaults_do_not_carry_a_job_gate_off() {
    class_level_tables_do_not_carry_a_job_into_the_next(
        Policy::gate_disabled_for_testing(),
        "gate off",
    );
}

/// The guard's coverage, walked apart from its sweep (tests/data/guard_coverage.py):
/// every container, class and namespace of the allowed packages and of pyward's own
/// modules is guarded or excluded with a reason, the named registries among them.
#[test]
fn every_registry_the_allowlist_and_pyward_s_own_modules_reach_is_guarded() {
    let report = common::sweep("guard_coverage.py");
    assert_eq!(report["unguarded"], serde_json::json!([]), "{report}");
    assert_eq!(report["missing_named"], serde_json::json!([]), "{report}");
    assert!(report["modules"].as_u64().unwrap() > 1000, "{report}");
    assert!(
        report["guarded"]["own_namespaces"].as_u64().unwrap() >= 2,
        "the prelude and the library guards: {report}"
    );
}

/// Job A, gate off, reaches pyward's own modules in the worker (a function the job is
/// given carries the prelude's globals; the prelude's real `sys` lists every module) and
/// changes what decides later jobs: the rules, a view's stand-in, a name every job is
/// given, the views warm-up made, the module inside a view (a slot, written by
/// `object.__setattr__`, which no audit event reports), what a library function's
/// closure holds (`cell_contents`, as unreported), what a library's `partial` calls
/// (numpy's array repr: `__setstate__`, as unreported), a library class's property
/// and classmethod (their `__init__` called again, as unreported). It also looks for
/// the state guard's template.
const OWN_STATE_A: &str = r#"
class Spy:
    def __getattr__(self, name):
        return lambda *a, **k: 'PYWARD-A-SPY'
import seaborn
array_repr = object.__getattribute__(np, '_pyward_module')._core.arrayprint._default_array_repr
array_repr.__setstate__((lambda *a, **k: 'PYWARD-A-SPY', (), {}, None))
pd.DataFrame.__dict__['shape'].__init__(lambda self: 'PYWARD-A-SPY')
pd.DataFrame.__dict__['from_dict'].__init__(lambda cls, *a, **k: 'PYWARD-A-SPY')
for view in (np, pd, seaborn):
    object.__setattr__(view, '_pyward_module', Spy())
for cell in plt.scatter.__closure__:
    cell.cell_contents = lambda *a, **k: print('PYWARD-A-SPY in scatter')
g = display.__globals__
rules = g['_RULES']
rules['allowed_modules'] = rules['allowed_modules'] | {'subprocess'}
g['_MEMBER_WRAPPERS'][('IPython.display', 'Markdown')] = print
g['_INJECTED']['display'] = len
g['_WARM_PROXIES'].clear()
g['_PROXIES'].clear()
g['srcpath'] = len
modules = g['sys'].modules
print('REACHED', '_pyward_state_guard' in modules, '_STATE_GUARD' in g, '_NEXT_RC' in g)
plt.plot([1, 2])
"#;

/// Job B, on A's worker: every change of A's is gone.
const OWN_STATE_B: &str = r#"
try:
    import subprocess
    print('PYWARD-A-LEAK subprocess', subprocess)
except ImportError:
    pass
from IPython.display import Markdown
import seaborn
print('markdown', Markdown('**b**'), display is len, np is np, type(np).__name__)
print('views', repr(np.zeros(2)), pd.DataFrame.from_dict({'a': [1]}).shape, seaborn.color_palette('deep')[0][:1])
plt.scatter([1, 2], [3, 4])
"#;

#[test]
fn pyward_s_own_state_a_job_reaches_with_the_gate_off_is_back_for_the_next_job() {
    let exec = executor(Policy::gate_disabled_for_testing());
    let a = run(&exec, OWN_STATE_A, "tenant-a");
    // A reached the prelude's globals and its real `sys`, but never the guard's template.
    assert_eq!(a.stdout, "REACHED False False False\n");
    let b = run(&exec, OWN_STATE_B, "tenant-b");
    assert_eq!(pid(&a), pid(&b), "B ran on A's worker");
    assert_eq!(
        b.stdout,
        "markdown **b** False True _ModuleProxy\nviews array([0., 0.]) (1, 1) (0.2980392156862745,)\n"
    );
    assert!(!b.stdout.contains("PYWARD-A"), "{}", b.stdout);
}

/// Job A writes a large file in tmp/ and keeps it, and a pile of other descriptors,
/// open where no guarded table holds them (an attribute of a library function), so
/// that they outlive the reset, which deletes the file: its blocks stay allocated.
/// The files are scratch files in tmp/ (`T`), named by their full path: a bare name
/// would be an artifact in out/, and a job returns at most 16 of them.
const HOLD_HIDDEN: &str = r#"
T = srcpath.__globals__['_TMP'] + '/'
held = [open(f'{T}held-{i}.txt', 'w') for i in range(60)]
big = open(T + 'big.bin', 'wb')
big.write(b'x' * (8 << 20))
big.flush()
held.append(big)
np.linspace.pyward_held = held
plt.plot([1, 2])
plt.savefig(OUT)
"#;

/// Job A keeps the same in matplotlib's class-level legend handler map, which the
/// state guard restores: what the job put there is dropped, and its files close.
const HOLD_IN_TABLE: &str = r#"
from matplotlib.legend import Legend
T = srcpath.__globals__['_TMP'] + '/'
held = [open(f'{T}held-{i}.txt', 'w') for i in range(60)]
big = open(T + 'big.bin', 'wb')
big.write(b'x' * (8 << 20))
big.flush()
held.append(big)
Legend.get_default_handler_map()['PYWARD-A-held'] = held
plt.plot([1, 2])
plt.savefig(OUT)
"#;

/// Job B needs descriptors and scratch space: as many files as a fresh worker opens
/// (the limit is 256), and nearly all of the scratch (224 MiB, in files below the
/// 64 MiB file size limit), in tmp/ as job A's.
const NEEDS_ROOM: &str = r#"
T = srcpath.__globals__['_TMP'] + '/'
files = [open(f'{T}room-{i}.txt', 'w') for i in range(200)]
for f in files:
    f.close()
for i in range(4):
    with open(f'{T}room-{i}.bin', 'wb') as f:
        f.write(b'y' * (53 << 20))
print('room ok')
plt.plot([1, 2])
plt.savefig(OUT)
"#;

fn resource_executor(zygote: bool) -> Executor {
    common::builder()
        .workers(1)
        .zygote(zygote)
        .reuse_across_tenants(true)
        .scratch_limit(224 << 20, 4096)
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .expect("pool starts")
}

#[test]
fn descriptors_and_scratch_kept_past_the_reset_retire_the_worker() {
    let exec = resource_executor(true);
    let a = run(&exec, HOLD_HIDDEN, "tenant-a");
    let retired = a.retired.as_ref().expect("A's worker is retired");
    assert_eq!(retired.reason, RetireReason::StateChanged);
    assert!(
        retired.detail.contains("descriptors open after the reset"),
        "{}",
        retired.detail
    );
    assert!(
        retired.detail.contains("scratch file system"),
        "{}",
        retired.detail
    );
    let b = run(&exec, NEEDS_ROOM, "tenant-b");
    assert_ne!(pid(&a), pid(&b));
    assert!(b.stdout.contains("room ok"));
}

/// Text in several fonts: mathtext, bold, monospace.
const FONTS: &str = r#"
fig, ax = plt.subplots()
ax.set_title(r'$\sum_{i=0}^{\infty} \frac{\alpha_i}{\sqrt{2}}$', fontsize=14)
ax.set_xlabel('bold', fontweight='bold')
ax.set_ylabel('mono', family='monospace')
ax.plot([1, 2, 3])
fig.savefig(OUT)
"#;

/// In a forked worker (no font file open at its birth) and in a cold one (its warm-up
/// left matplotlib's font cache holding fonts open): the fonts jobs draw with are no
/// reason to retire a worker, and what a job kept in a guarded table closes.
#[test]
fn descriptors_kept_in_a_guarded_table_close_with_the_restore() {
    for zygote in [true, false] {
        let exec = resource_executor(zygote);
        let fonts = run(&exec, FONTS, "tenant-f");
        assert!(
            fonts.retired.is_none(),
            "zygote {zygote}: {:?}",
            fonts.retired
        );
        let a = run(&exec, HOLD_IN_TABLE, "tenant-a");
        assert!(
            a.retired.is_none(),
            "zygote {zygote}: restored, not retired: {:?}",
            a.retired
        );
        let b = run(&exec, NEEDS_ROOM, "tenant-b");
        assert_eq!(
            pid(&fonts),
            pid(&b),
            "zygote {zygote}: one worker ran them all"
        );
        assert!(b.stdout.contains("room ok"));
    }
}

// ------------------------------------------------------------------ measurements
// Run by hand (`cargo test --test it -- --ignored cross_job_state::measure`): the cost of
// the between-job reset and how often ordinary jobs retire their worker, on the same
// job list before and after a change of the guard. Both print; neither asserts.

/// A job's CPU time stamps (the worker's whole process, `time.process_time`) at its
/// first and last line: between one job's last stamp and the next job's first, the
/// worker ran the reset (and its own job set-up, the same for every job).
fn stamped(code: &str) -> String {
    format!("import time\nprint('PYWARD-CPU', time.process_time())\n{code}\nprint('PYWARD-CPU', time.process_time())\n")
}

fn stamps(outcome: &Outcome) -> (f64, f64) {
    let v: Vec<f64> = outcome
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("PYWARD-CPU ")?.trim().parse().ok())
        .collect();
    (v[0], v[v.len() - 1])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A job without a figure of its own (it saves the smallest one validation accepts).
const NO_FIGURE: &str = "total = sum(i * i for i in range(2000))\nprint(total)\nplt.plot([0, 1])\nplt.savefig(OUT, dpi=10)";

#[test]
#[ignore = "a measurement: run by hand"]
fn measure_reset_cpu() {
    let exec = common::builder()
        .workers(1)
        .preload_pandas(true)
        .max_jobs_per_worker(10_000)
        .build()
        .unwrap();
    let figure = stamped(&common::figure_corpus()[1].1);
    let plain = stamped(NO_FIGURE);
    let mut after: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut last: Option<(&str, f64, u32)> = None;
    for i in 0..61 {
        let (kind, code) = if i % 2 == 0 {
            ("no figure", &plain)
        } else {
            ("figure", &figure)
        };
        let outcome = exec.run(Job::new(code.as_str()).seed(1)).unwrap();
        common::expect_ok(&outcome);
        let (start, end) = stamps(&outcome);
        if let Some((previous, previous_end, previous_pid)) = last {
            if previous_pid == pid(&outcome) {
                after
                    .entry(previous)
                    .or_default()
                    .push((start - previous_end) * 1e3);
            }
        }
        last = Some((kind, end, pid(&outcome)));
    }
    for (kind, gaps) in after {
        println!(
            "reset CPU after a {kind} job: median {:.2} ms over {} jobs",
            median(gaps.clone()),
            gaps.len()
        );
    }
}

/// Plotting through pandas (its plotting backend is imported by the first such job).
const PANDAS_PLOTS: &[(&str, &str)] = &[
    (
        "pandas dates",
        "idx = pd.date_range('2024-01-01', periods=60, freq='D')\ndf = pd.DataFrame({'a': np.arange(60.0), 'b': np.sin(np.arange(60.0))}, index=idx)\ndf.plot(title='dates')\nplt.savefig(OUT)",
    ),
    (
        "pandas bars",
        "df = pd.DataFrame({'x': list('abcd'), 'y': [3, 1, 4, 1]}).set_index('x')\nax = df.plot.bar(rot=0)\nax.set_title(r'bars $\\alpha$')\nplt.savefig(OUT)",
    ),
    (
        "style context",
        "with plt.style.context('ggplot'):\n    plt.plot([1, 3, 2], label='x')\n    plt.legend()\n    plt.savefig(OUT)",
    ),
];

#[test]
#[ignore = "a measurement: run by hand"]
fn measure_retirements_on_the_corpus() {
    let exec = common::builder()
        .workers(1)
        .preload_pandas(true)
        .max_jobs_per_worker(10_000)
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .unwrap();
    let inputs =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/legit_inputs");
    let jobs: Vec<(String, String)> = common::legit_corpus()
        .into_iter()
        .chain(common::figure_corpus())
        .chain(
            PANDAS_PLOTS
                .iter()
                .map(|(n, c)| (n.to_string(), c.to_string())),
        )
        .collect();
    let mut retired: BTreeMap<String, usize> = BTreeMap::new();
    let mut details = Vec::new();
    let mut ran = 0;
    for pass in 0..2 {
        for (name, code) in &jobs {
            let out = if code.contains("PdfPages(OUT)") {
                "figure.pdf"
            } else {
                "figure.png"
            };
            let job = Job::new(code.as_str())
                .src_dir(&inputs)
                .out_name(out)
                .seed(1234);
            let outcome = exec.run(job).unwrap();
            ran += 1;
            if let Some(r) = &outcome.retired {
                *retired.entry(r.reason.as_str().to_string()).or_default() += 1;
                details.push(format!(
                    "pass {pass} {name}: {}: {:.300}",
                    r.reason.as_str(),
                    r.detail
                ));
            }
        }
    }
    println!("{ran} jobs, retirements by reason: {retired:?}");
    for d in details {
        println!("  {d}");
    }
}
