# The contract with a new user: `make demo` and `make test` work from a fresh clone with
# only Rust, a Python 3 built with a shared libpython, and Node.js with npm (the page).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# pyo3 and build.rs embed the virtualenv's interpreter.
export PYO3_PYTHON := $(abspath $(PY))

.PHONY: venv build demo test test-long test-ui web web-check lint arch bench profile soak fuzz-api \
	redis-server chromium mcp-client fonts clean

$(VENV)/.installed: python/requirements.txt
	@$(PYTHON) -c 'import sysconfig, sys; sys.exit(0 if sysconfig.get_config_var("Py_ENABLE_SHARED") else "pyward needs a Python built with --enable-shared (libpython)")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check --no-input -q -r python/requirements.txt
	touch $@

venv: $(VENV)/.installed fonts

# A font with Chinese, Japanese and Korean glyphs (Debian's fonts-wqy-microhei): without
# one, such text in a figure is drawn as boxes (python/prelude/fonts.py). Installed when
# the machine has none; a machine where it cannot be installed still builds and runs.
CJK_FONT := /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
fonts:
	@[ -f $(CJK_FONT) ] || { \
		echo "installing fonts-wqy-microhei (Debian package)"; \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$sudo apt-get update -qq && $$sudo apt-get install -y -qq fonts-wqy-microhei >/dev/null \
		|| echo "warning: no CJK font installed: Chinese, Japanese and Korean text in figures will be boxes"; }

build: venv
	cargo build --release --workspace --bins

demo: build
	./target/release/pyward run examples/plot_sales.py examples/plot_scan.py \
		--src examples/data --out demo-out
	./target/release/pyward run examples/allocation/allocation.py \
		--src examples/allocation --checks examples/allocation/checks.toml --out demo-out/

# The queue-mode tests and bench start their own redis-server; it comes from the
# distribution when the machine has none.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "installing redis-server (Debian package)"; \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$sudo apt-get update -qq && $$sudo apt-get install -y -qq redis-server >/dev/null; }

# The MCP tests' client (cli/tests/mcp.rs): the official MCP Python SDK, pinned, in a
# virtualenv of its own: test tooling, never the worker's packages.
MCP_VENV := .venv-mcp

$(MCP_VENV)/.installed:
	$(PYTHON) -m venv $(MCP_VENV)
	$(MCP_VENV)/bin/pip install --disable-pip-version-check --no-input -q 'mcp==2.3.0'
	touch $@

mcp-client: $(MCP_VENV)/.installed

test: venv redis-server mcp-client
	PYWARD_MCP_PYTHON=$(abspath $(MCP_VENV))/bin/python cargo test --workspace
	$(MAKE) test-ui

# The long tests, left out of `make test` (#[ignore]): the closed-loop load on
# `pyward serve` (four loads of 30 s; PYWARD_LOAD_SECONDS shortens them) and the
# measurements the tests keep for running by hand; then the comparisons of two pools
# that `make test` runs on half of the corpora, on all of them.
test-long: venv redis-server mcp-client
	cargo build --workspace --bins
	PYWARD_MCP_PYTHON=$(abspath $(MCP_VENV))/bin/python cargo test --workspace -- --ignored
	PYWARD_WHOLE_CORPUS=1 cargo test --test it -- render_once:: png_encoding:: figures_in_memory:: text_metrics::

# The page `pyward serve` serves at / (cli/web: Vite + TypeScript + CodeMirror). Its
# built files are committed in cli/web/dist and embedded in the binary, so building
# pyward needs no Node; `make web` rebuilds them after a change to cli/web.
WEB := cli/web
UI  := tests/ui

$(WEB)/node_modules/.package-lock.json: $(WEB)/package-lock.json
	cd $(WEB) && npm ci --no-audit --no-fund --loglevel=error

$(UI)/node_modules/.package-lock.json: $(UI)/package-lock.json
	cd $(UI) && npm ci --no-audit --no-fund --loglevel=error

web: $(WEB)/node_modules/.package-lock.json
	cd $(WEB) && npm run build

# The committed page is what its sources build to.
web-check: web
	@test -z "$$(git status --porcelain -- $(WEB)/dist)" || { \
		git status --short -- $(WEB)/dist; \
		echo "$(WEB)/dist is not what $(WEB) builds to: run make web and commit it"; exit 1; }

# The page's end-to-end tests drive Debian's Chromium; it comes from the distribution
# when the machine has none (Playwright's own browser download is not used).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium (Debian package)"; \
		sudo=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$sudo apt-get update -qq && $$sudo apt-get install -y -qq chromium >/dev/null; }

# A real server (the workspace's debug build) and headless Chromium through Playwright;
# the records start with a repair loop that the repair_loop example runs. Screenshots of
# each view in target/ui-test.
test-ui: venv chromium $(UI)/node_modules/.package-lock.json
	cargo build --workspace --bins --example repair_loop
	cd $(UI) && npm test

lint: venv
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(MAKE) arch
	$(MAKE) web-check

# The module graph: no cycle between modules, no arrow up the library's layers
# (tests/it/architecture.rs reads the sources; the layers are listed there). Built with
# the workspace's features, as `make test` builds it: the library is compiled once.
arch: venv
	cargo test --workspace --test it architecture::

# Every bench in sequence, then the report (docs/bench/REPORT.md and chart.png, the chart
# drawn by a pyward job). About 5-10 minutes on 2 cores. A quick trial:
# `make bench BENCH_SCALE=0.1` (iteration counts scaled down; the report says TRIAL).
BENCH_SCALE ?= 1
BENCHES     := warm_vs_cold recycle throughput memory modes gate serve queue tables mcp

bench: venv redis-server
	rm -rf $(or $(CARGO_TARGET_DIR),target)/pyward-bench
	cargo build --release --workspace --bins
	set -e; for b in $(BENCHES); do \
		PYWARD_BENCH_SCALE=$(BENCH_SCALE) cargo bench --bench $$b; \
	done
	cargo run --release --example bench_report

# Where a warm worker's time goes on the bench's tiny and typical figures (cProfile,
# the worker's own prelude and render-once): docs/bench/PROFILE.md.
profile: venv
	$(PY) benches/profile_render.py docs/bench/PROFILE.md

soak: venv
	cargo build --release --workspace --bins
	cargo run --release --example soak -- 10000 8 2

# Fuzz `pyward serve` from its own OpenAPI description (schemathesis, in its own
# virtualenv): no 5xx, no crash, no hang, every answer as described.
FUZZ_VENV    := .venv-fuzz
FUZZ_SECONDS ?= 120

$(FUZZ_VENV)/.installed:
	$(PYTHON) -m venv $(FUZZ_VENV)
	$(FUZZ_VENV)/bin/pip install --disable-pip-version-check --no-input -q 'schemathesis==4.32.5'
	touch $@

fuzz-api: build $(FUZZ_VENV)/.installed
	benches/fuzz_api.sh --max-time $(FUZZ_SECONDS)

clean:
	cargo clean
	rm -rf $(VENV) $(FUZZ_VENV) $(MCP_VENV) demo-out $(WEB)/node_modules $(UI)/node_modules
