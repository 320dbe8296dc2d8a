//! Gate speed: the Rust gate on a realistic ~200-line script, side by side with the same
//! rules written in Python (`python/gate_reference.py`: `ast.parse` + `NodeVisitor`) run
//! in an embedded CPython through pyo3.

use std::ffi::CString;

use criterion::{black_box, criterion_main, Criterion};
use pyo3::prelude::*;
use pyo3::types::PyModule;
use pyward::gate::{self, Policy};

const SCRIPT: &str = include_str!("../tests/data/realistic_200.py");
const REFERENCE: &str = include_str!("../python/gate_reference.py");

fn bench(c: &mut Criterion) {
    Python::initialize();
    let policy = Policy::figures();
    assert!(gate::check(SCRIPT, &policy).expect("checked").is_allowed());
    let mut g = c.benchmark_group("gate_realistic_200");
    g.bench_function("rust_gate", |b| {
        b.iter(|| gate::check(black_box(SCRIPT), black_box(&policy)))
    });
    Python::attach(|py| {
        let code = CString::new(REFERENCE).expect("no nul");
        let m = PyModule::from_code(py, &code, c"gate_reference.py", c"gate_reference")
            .expect("reference module loads");
        let check = m.getattr("check").expect("check()");
        let src = SCRIPT.into_pyobject(py).expect("str");
        let out = check.call1((&src,)).expect("runs");
        assert_eq!(out.len().expect("list"), 0, "reference accepts the script");
        g.bench_function("python_ast_reference", |b| {
            b.iter(|| check.call1((black_box(&src),)).expect("runs"))
        });
    });
    g.finish();
}

#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
use group::benches;
criterion_main!(benches);
