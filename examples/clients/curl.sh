#!/bin/sh
# Run a file on a pyward server with curl: the figure itself, then the JSON report.
# usage: sh curl.sh http://127.0.0.1:8080 plot.py figure.png
set -eu
url=$1 code=$2 out=$3
auth=${PYWARD_TOKEN:+Authorization: Bearer $PYWARD_TOKEN}
# The PNG (Accept: image/png); a failed job answers with its JSON report instead.
curl -sS --fail-with-body -H "${auth:-X-No-Auth: 1}" -H 'Accept: image/png' \
  -F "code=<$code" -o "$out" -D - "$url/v1/jobs" | grep -i '^x-pyward-status'
# The gate alone.
curl -sS --fail-with-body -H "${auth:-X-No-Auth: 1}" -H 'Content-Type: application/json' \
  --data '{"code": "import os"}' "$url/v1/check"
echo
