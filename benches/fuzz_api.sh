#!/usr/bin/env bash
# Fuzzes `pyward serve` from its own OpenAPI description with schemathesis: every
# operation, generated and mutated requests, every response checked (no 5xx, status
# codes, content types and bodies as described). `make fuzz-api` runs it; arguments are
# passed to `st run` (e.g. --max-time 60). PYWARD names the binary (default: the release
# build).
set -euo pipefail
cd "$(dirname "$0")/.."
st=${SCHEMATHESIS:-.venv-fuzz/bin/st}
pyward=${PYWARD:-./target/release/pyward}
log=$(mktemp)
# With run records, so that the run routes have records to find (and names to refuse).
"$pyward" serve --listen 127.0.0.1:0 --workers 2 --timeout 5 \
  --records "$log.runs" >"$log.out" 2>"$log" &
server=$!
trap 'kill -KILL $server 2>/dev/null || true; rm -rf "$log" "$log.out" "$log.runs"' EXIT
for _ in $(seq 200); do
  url=$(sed -n 's/^pyward serve: listening on //p' "$log.out")
  [ -n "$url" ] && curl -sf "$url/readyz" >/dev/null && break
  sleep 0.2
done
echo "fuzzing $url"
status=0
# Every check, every phase (the stateful one follows the document's links); the hooks
# make a valid request's `array` parts .npy files (benches/fuzz_hooks.py says why).
PYTHONPATH=benches${PYTHONPATH:+:$PYTHONPATH} SCHEMATHESIS_HOOKS=fuzz_hooks "$st" run "$url/v1/openapi.json" --checks all \
  --phases examples,coverage,fuzzing,stateful --workers 2 "$@" || status=$?
kill -TERM $server
wait $server || { echo "the server did not exit cleanly after SIGTERM"; status=1; }
echo "server log: $(grep -c ' job ' "$log" || true) jobs logged, $(grep -c -E 'panicked| ERROR ' "$log" || true) errors logged or panics"
grep -E 'panicked| ERROR ' "$log" | head -5 || true
exit $status
