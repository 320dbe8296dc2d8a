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
	cargo build --release --bins

demo: build
	./target/release/pyward run examples/plot_sales.py examples/plot_scan.py \
		--src examples/data --out demo-out

test: venv
	cargo test

lint: venv
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings

bench: venv
	cargo bench --bench warm_vs_cold

soak: venv
	cargo build --release --bins
	cargo run --release --example soak -- 10000 8 2

clean:
	cargo clean
	rm -rf $(VENV) demo-out
