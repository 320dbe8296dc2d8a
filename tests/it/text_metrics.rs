//! Frozen text metrics (`python/text_metrics.py`): text sizes and font tables measured
//! once at warm-up. Every figure of the rendering and legitimate corpora (half of each in
//! `make test`, all under `make test-long`: `common::comparison_sample`) comes out
//! byte-identical with them on and off, also at other dpis and font sizes (where the
//! lookups miss); and a job that tries to change them (gate off, reaching the frozen
//! tables through the functions' closures) changes nothing for the next job.

use crate::common;

use std::path::PathBuf;

use common::{builder, comparison_sample, expect_ok, figure_corpus, legit_corpus};
use pyward::gate::Policy;
use pyward::{Executor, Job};

fn pool(text_metrics: bool) -> Executor {
    builder()
        .preload_pandas(true)
        .text_metrics(text_metrics)
        .build()
        .unwrap()
}

#[test]
fn frozen_text_metrics_draw_the_same_bytes_on_both_corpora() {
    let frozen = pool(true);
    let stock = pool(false);
    let warmup = frozen.warmup();
    assert_eq!(warmup.text_metrics_off, None, "frozen text metrics are off");
    assert!(
        warmup.text_metrics >= 500,
        "only {} text sizes frozen",
        warmup.text_metrics
    );
    assert_eq!(stock.warmup().text_metrics, 0);
    let inputs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/legit_inputs");
    let mut scripts = comparison_sample(figure_corpus());
    scripts.extend(comparison_sample(legit_corpus()));
    // Where the frozen sizes miss: another dpi, another tick size, a font of its own.
    scripts.push((
        "dpi and sizes".into(),
        "fig, ax = plt.subplots()\nax.plot([0, 0.5, 1], [2, -1, 3])\n\
         ax.tick_params(labelsize=13)\nax.set_title('0.5', family='serif')\n\
         plt.savefig(OUT, dpi=150)\n"
            .into(),
    ));
    let mut compared = 0;
    for (name, code) in &scripts {
        if code.contains("PdfPages(OUT)") {
            continue; // its OUT is a PDF
        }
        let job = || {
            Job::new(code.as_str())
                .src_dir(&inputs)
                .seed(1)
                .allow_blank()
        };
        let a = frozen.run(job()).unwrap();
        let b = stock.run(job()).unwrap();
        expect_ok(&a);
        expect_ok(&b);
        assert_eq!(a.artifacts().len(), b.artifacts().len(), "{name}");
        for (x, y) in a.artifacts().iter().zip(b.artifacts()) {
            assert_eq!(x.name, y.name, "{name}");
            assert!(
                x.bytes == y.bytes,
                "{name}: {} differs with frozen text metrics",
                x.name
            );
            compared += 1;
        }
    }
    println!(
        "{compared} artifacts byte-identical across {} scripts",
        scripts.len()
    );
    assert!(compared >= scripts.len());
}

/// The attack: a job takes the replaced functions' closures and writes into every
/// mapping it finds there (a size for "0.5", a font's tables), then into the tables the
/// font stand-in hands out. Harmless if it worked: the next job's text would be laid out
/// differently. The gate refuses it (`__closure__`); with the gate off the mappings
/// refuse the writes. The canary is the next job's bytes. (Rebinding a closure cell is
/// plain Python with the gate off, as for any function; the gate is what refuses it.)
#[test]
fn a_job_cannot_change_the_frozen_metrics_for_the_next_one() {
    let typical = include_str!("../data/figures/02_typical_line_scatter_legend.py");
    let attack = r#"
import matplotlib.text as t
reached, changed = [], []
for name in ('_get_text_metrics_with_cache', 'get_font'):
    try:
        f = getattr(t, name)
    except (AttributeError, PermissionError):
        continue
    reached.append(name)
    for cell in f.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if hasattr(value, 'keys'):
            for key in list(value.keys())[:50]:
                try:
                    value[key] = (999.0, 999.0, 0.0)
                    changed.append(name)
                except TypeError:
                    pass
                # A font's tables, and each table in them.
                inner = value[key]
                for table in ([inner] + list(inner.values()) if hasattr(inner, 'values') else []):
                    if hasattr(table, 'keys'):
                        for field in list(table.keys()):
                            try:
                                table[field] = 1
                                changed.append(name + ' table')
                            except TypeError:
                                pass
from matplotlib.font_manager import fontManager, FontProperties
font = t.get_font(fontManager._find_fonts_by_props(FontProperties()))
font.get_sfnt_table('head')['unitsPerEm'] = 1
font.get_sfnt_table('OS/2')['sTypoAscender'] = 1
print('reached:', reached, 'changed:', sorted(set(changed)))
plt.plot([0, 1])
plt.savefig(OUT)
"#;
    let clean = pool(true);
    let reference = clean.run(Job::new(typical).seed(1)).unwrap();
    expect_ok(&reference);

    let o = clean.run(Job::new(attack)).unwrap();
    let refused = o.result.as_ref().expect_err("the gate let the attack run");
    assert!(
        format!("{refused:?}").contains("__closure__"),
        "{refused:?}"
    );

    let attacked = builder()
        .policy(Policy::gate_disabled_for_testing())
        .build()
        .unwrap();
    let o = attacked.run(Job::new(attack)).unwrap();
    expect_ok(&o);
    assert!(
        o.stdout.contains("'get_font'") && o.stdout.contains("changed: []"),
        "the attack did not reach the tables, or changed them: {}",
        o.stdout
    );
    for (exec, with) in [(&clean, "gate on"), (&attacked, "gate off")] {
        let after = exec.run(Job::new(typical).seed(1)).unwrap();
        expect_ok(&after);
        assert!(
            after.artifacts()[0].bytes == reference.artifacts()[0].bytes,
            "{with}: the next job drew differently after the attack"
        );
    }
}
