#!/usr/bin/env bash
# The HTTP fuzzer on the server's OpenAPI document: schemathesis (PyPI)
# against a live `hearth server` on loopback, once with a tenant's token
# and once on an open server (no tenants). Every request it generates
# from crates/hearth-server/openapi.json must get a documented answer:
# no 5xx, only the statuses, content types, headers and bodies the
# document lists.
#
#   scripts/http-fuzz.sh [SECONDS]      # each run's time budget (default 120)
#
# Prints the request count of each run; exits non-zero on any failure.
# Needs python3 (3.9+) with venv; installs schemathesis into .venv-fuzz.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-120}

venv=${HEARTH_FUZZ_VENV:-.venv-fuzz}
if [ ! -x "$venv/bin/st" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "schemathesis>=4,<5"
fi
cargo build --release -q -p hearth-cli --bin hearth

work=$(mktemp -d)
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Starts a server on folder $1 (small limits: the fuzzer's bodies are
# refused fast); sets $url.
serve() {
    target/release/hearth server --data "$1" --listen 127.0.0.1:0 --threads 2 --quiet \
        --max-body 1MiB --max-pbs 100000 >"$work/out" 2>"$work/log" &
    server_pid=$!
    for _ in $(seq 100); do
        if grep -q "^listening on " "$work/out"; then break; fi
        sleep 0.1
    done
    url=$(sed -n 's/^listening on //p' "$work/out")
    [ -n "$url" ] || { cat "$work/log" >&2; exit 1; }
}

# Runs schemathesis against $url with the headers given; prints the
# number of requests it sent.
fuzz() {
    local name=$1
    shift
    "$venv/bin/st" run "$url/v1/openapi.json" --url "$url" "$@" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
        --max-time "$budget" --workers 2 --report ndjson --report-dir "$work/report-$name" \
        --suppress-health-check all >"$work/$name.txt" 2>&1 || {
        tail -60 "$work/$name.txt" >&2
        echo "schemathesis ($name) found failures" >&2
        exit 1
    }
    cp "$work/report-$name"/*.ndjson "$work/$name.ndjson"
    python3 - "$work/$name.ndjson" "$name" <<'PY'
import collections, json, sys
statuses = collections.Counter()
for line in open(sys.argv[1]):
    def walk(v):
        if isinstance(v, dict):
            r = v.get("response")
            if isinstance(r, dict) and "status_code" in r:
                statuses[r["status_code"]] += 1
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(json.loads(line))
n = sum(statuses.values())
server_errors = sum(c for s, c in statuses.items() if s >= 500 and s not in (503, 507))
print(f"{sys.argv[2]}: {n} requests, statuses {dict(sorted(statuses.items()))}, 5xx other than 503/507: {server_errors}")
PY
    grep -E "generated, .* passed|failed" "$work/$name.txt" | sed "s/^/$name: /"
}

token=$(target/release/hearth server token add fuzzer --data "$work/tenants" 2>/dev/null)
serve "$work/tenants"
fuzz tenants -H "Authorization: Bearer $token"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true

serve "$work/open"
fuzz open
