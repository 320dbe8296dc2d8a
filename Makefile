# The contract with a new user: `make demo` and `make test` work from a fresh clone with
# only Rust and a Python 3 built with a shared libpython.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# pyo3 and build.rs embed the virtualenv's interpreter.
export PYO3_PYTHON := $(abspath $(PY))

.PHONY: venv build demo test lint bench soak clean

$(VENV)/.installed: python/requirements.txt
	@$(PYTHON) -c 'import sysconfig, sys; sys.exit(0 if sysconfig.get_config_var("Py_ENABLE_SHARED") else "pyward needs a Python built with --enable-shared (libpython)")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check --no-input -q -r python/requirements.txt
	touch $@

venv: $(VENV)/.installed

build: venv
	cargo build --release --workspace --bins

demo: build
	./target/release/pyward run examples/plot_sales.py examples/plot_scan.py \
		--src examples/data --out demo-out

test: venv
	cargo test --workspace

lint: venv
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings

# Every bench in sequence, then the report (docs/bench/REPORT.md and chart.png, the chart
# drawn by a pyward job). About 5-10 minutes on 2 cores. A quick trial:
# `make bench BENCH_SCALE=0.1` (iteration counts scaled down; the report says TRIAL).
BENCH_SCALE ?= 1
BENCHES     := warm_vs_cold recycle throughput memory modes gate

bench: venv
	rm -rf $(or $(CARGO_TARGET_DIR),target)/pyward-bench
	cargo build --release --workspace --bins
	set -e; for b in $(BENCHES); do \
		PYWARD_BENCH_SCALE=$(BENCH_SCALE) cargo bench --bench $$b; \
	done
	cargo run --release --example bench_report

soak: venv
	cargo build --release --workspace --bins
	cargo run --release --example soak -- 10000 8 2

clean:
	cargo clean
	rm -rf $(VENV) demo-out
