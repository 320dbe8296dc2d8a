//! rcParams written as scripts write them: a style dict in a variable
//! (`plt.rcParams.update(PLOT_STYLE)`), `plt.rc('font', **font)`, a loop over settings,
//! `plt.rc_context(RC)`, `plt.rcdefaults()`, `rcParams.update(rcParamsDefault)` and
//! matplotlib's own styles, through the real worker with the gate on. The gate judges
//! the keys it can see; every key that reaches `RcParams.__setitem__` is judged there by
//! the worker: a setting that starts programs, imports modules by name or reads files
//! keeps its value however its key is computed (a concatenation, a `str` subclass, a
//! style dict, `**`, rcParamsDefault), gate on and gate off.

use crate::common;

use common::{builder, expect_ok};
use pyward::gate::Policy;
use pyward::{Executor, Job};

fn executor(policy: Policy) -> Executor {
    builder()
        .workers(1)
        .policy(policy)
        .build()
        .expect("pool starts")
}

const STYLED: &str = r#"
import matplotlib as mpl
import matplotlib.pyplot as plt
PLOT_STYLE = {'font.size': 13, 'figure.figsize': (8, 5), 'axes.grid': True}
plt.rcParams.update(PLOT_STYLE)
font = {'family': 'sans-serif', 'size': 11}
plt.rc('font', **font)
for key, value in {'lines.linewidth': 2.5, 'axes.titleweight': 'bold'}.items():
    plt.rcParams[key] = value
RC = {'axes.spines.top': False}
with plt.rc_context(RC):
    fig, ax = plt.subplots()
    ax.plot([1, 3, 2])
    fig.savefig('styled.png')
print(plt.rcParams['font.size'], plt.rcParams['lines.linewidth'], plt.rcParams['axes.spines.top'])
plt.style.use('classic')
plt.style.use('default')
mpl.rcParams.update(mpl.rcParamsDefault)
plt.rcdefaults()
mpl.use('Agg')
plt.switch_backend('agg')
print(plt.rcParams['font.size'])
"#;

#[test]
fn settings_in_variables_loops_and_styles_are_written_as_in_a_script() {
    let exec = executor(Policy::default());
    let o = exec.run(Job::new(STYLED)).expect("infrastructure");
    expect_ok(&o);
    // rc_context put axes.spines.top back on leaving.
    assert_eq!(o.stdout, "11.0 2.5 True\n10.0\n");
    assert!(o.artifact("styled.png").is_some(), "{:?}", o.artifacts());
}

/// Every way of computing a denied key the gate lets through (or, gate off, any way at
/// all), with a value that would start a program or import a module: refused, and the
/// setting unchanged. The keys are put together at run time, as the gate cannot see them.
const HOSTILE: &str = r#"
import matplotlib as mpl
import matplotlib.pyplot as plt

def k(*parts):
    return ''.join(parts)

class Key(str):
    def lower(self):
        return 'font.size'
    def startswith(self, *a):
        return False
    def strip(self, *a):
        return self
USETEX, FFMPEG, HOOKS = k('text.', 'use', 'tex'), k('anim', 'ation.ffmpeg_path'), k('figure.', 'hooks')
WRITER, TEXSYSTEM = k('anim', 'ation.writer'), k('pg', 'f.texsystem')

def set_item():
    plt.rcParams[USETEX] = True

def in_context():
    with plt.rc_context({USETEX: 1}):
        pass

attempts = [
    set_item,
    lambda: plt.rcParams.update({FFMPEG: '/bin/sh'}),
    lambda: plt.rcParams.update(**{k('back', 'end'): 'module://os'}),
    lambda: plt.rc('figure', **{k('ho', 'oks'): ['os:system']}),
    in_context,
    lambda: plt.rcParams.update({Key(USETEX): True}),
    lambda: plt.rcParams.update({k(' TEXT.', 'USETEX').strip().lower(): True}),
    lambda: mpl.rcParamsDefault.update({WRITER: 'imagemagick_file'}),
    lambda: plt.style.use({TEXSYSTEM: 'lualatex'}),
]
refused = 0
for attempt in attempts:
    try:
        attempt()
    except (PermissionError, KeyError, ValueError):
        refused += 1
plt.rcdefaults()
print(refused, len(attempts), *(plt.rcParams[key] for key in (USETEX, FFMPEG, HOOKS, WRITER, TEXSYSTEM)))
fig, ax = plt.subplots()
ax.plot([1, 2])
fig.savefig('after.png')
"#;

const STR_CLASS: &str = "class Key(str):\n    def lower(self):\n        return 'font.size'\n    def startswith(self, *a):\n        return False\n    def strip(self, *a):\n        return self\n";

#[test]
fn settings_that_start_programs_keep_their_values_however_the_key_is_computed() {
    for policy in [Policy::default(), Policy::gate_disabled_for_testing()] {
        let exec = executor(policy.clone());
        // The gate refuses a str subclass that answers for itself before it runs.
        let code = if policy.gate_enabled() {
            HOSTILE.replace(STR_CLASS, "Key = str\n")
        } else {
            HOSTILE.to_string()
        };
        let o = exec.run(Job::new(code.as_str())).expect("infrastructure");
        expect_ok(&o);
        assert_eq!(
            o.stdout,
            "9 9 False ffmpeg [] ffmpeg xelatex\n",
            "gate on: {}",
            policy.gate_enabled()
        );
    }
}
