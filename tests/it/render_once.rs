//! Render-once: every figure of the corpus (`tests/data/figures`) comes out byte-identical
//! with the switch on and off, as PNG, SVG and PDF. A matplotlib upgrade that breaks the
//! patch's assumptions turns render-once off in the worker, and this test fails on it.
//! `make test` compares half of the corpus, `make test-long` all of it
//! (`common::comparison_sample`).

use crate::common;

use common::{builder, comparison_sample, expect_ok, figure_corpus};
use pyward::Job;

#[test]
fn render_once_is_active_and_byte_identical_across_the_corpus() {
    let scripts = figure_corpus();
    assert!(
        scripts.len() >= 30,
        "the corpus has {} figures",
        scripts.len()
    );
    let scripts = comparison_sample(scripts);
    let once = builder().render_once(true).build().unwrap();
    let stock = builder().render_once(false).build().unwrap();
    let mut compared = 0;
    for (name, code) in &scripts {
        for out_name in ["figure.png", "figure.svg", "figure.pdf"] {
            let job = || {
                Job::new(code.as_str())
                    .out_name(out_name)
                    .seed(1)
                    .allow_blank()
            };
            let a = once.run(job()).unwrap();
            let b = stock.run(job()).unwrap();
            if out_name == "figure.png" {
                expect_ok(&a);
                assert!(
                    a.worker.as_ref().unwrap().render_once,
                    "render-once is not active: check the worker's stderr"
                );
                assert!(!b.worker.as_ref().unwrap().render_once);
            }
            assert_eq!(a.status(), b.status(), "{name} as {out_name}");
            assert_eq!(
                a.artifacts().len(),
                b.artifacts().len(),
                "{name} as {out_name}"
            );
            for (x, y) in a.artifacts().iter().zip(b.artifacts()) {
                assert_eq!(x.name, y.name, "{name}");
                assert!(
                    x.bytes == y.bytes,
                    "{name}: {} differs with render-once ({} vs {} bytes)",
                    x.name,
                    x.bytes.len(),
                    y.bytes.len()
                );
                compared += 1;
            }
        }
    }
    println!(
        "{compared} artifacts byte-identical across {} scripts",
        scripts.len()
    );
}

/// A private matplotlib name that render-once relies on moves (or sources are not
/// installed): the pool still starts, with stock savefig, and says why.
fn falls_back_when(breakage: &str, expected: &str) {
    let exec = builder()
        .render_once(true)
        .warm_up_code_for_testing(breakage)
        .build()
        .expect("a broken render-once must never stop the pool");
    let why = exec
        .warmup()
        .render_once_off
        .clone()
        .expect("the warm-up report says render-once is off");
    assert!(why.contains(expected), "{why}");
    let outcome = exec
        .run(Job::new("plt.plot([1, 3, 2])\nplt.savefig(OUT)"))
        .unwrap();
    expect_ok(&outcome);
    assert!(!outcome.worker.as_ref().unwrap().render_once);
}

#[test]
fn a_moved_private_import_turns_render_once_off_not_the_pool() {
    falls_back_when(
        "import matplotlib.layout_engine as le\ndel le.PlaceHolderLayoutEngine\n",
        "ImportError",
    );
}

#[test]
fn missing_installed_sources_turn_render_once_off_not_the_pool() {
    falls_back_when(
        "import inspect\ndef no_source(obj):\n    raise OSError('could not get source code')\ninspect.getsource = no_source\n",
        "OSError",
    );
}
