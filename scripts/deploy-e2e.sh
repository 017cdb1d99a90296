#!/usr/bin/env bash
# End to end on loopback, key owner and server as separate processes:
# keygen --compressed -> program file -> encrypt -> hearth server (submit,
# fetch) -> decrypt, compared with the clear model's outputs, for the
# regression (10 rows) on DIGITS_128 and on 32-bit words (GATES_128).
# Prints every file's size. Usage: scripts/deploy-e2e.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p hearth-cli -q
H=$PWD/target/release/hearth
W=${1:-$(mktemp -d)}
mkdir -p "$W"
PORT=$((20000 + RANDOM % 20000))
export HEARTH_SERVER=http://127.0.0.1:$PORT
"$H" server --listen 127.0.0.1:$PORT --data "$W/server" --quiet &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.2; done

run() { # name params app-args...
    local name=$1 params=$2; shift 2
    local d=$W/$name
    "$H" keygen --params "$params" --compressed --out "$d/keys" >/dev/null
    "$H" app regression --rows 10 "$@" --export "$d" >/dev/null
    "$H" encrypt --key "$d/keys/client.key" --program "$d/program.hprog" \
        --values "$d/values.json" --out "$d/in.hb" >/dev/null
    local start
    start=$(date +%s%N)
    local job
    job=$("$H" submit --server-key "$d/keys/server.key" --program "$d/program.hprog" --bundle "$d/in.hb" 2>/dev/null)
    "$H" fetch --job "$job" --wait --out "$d/out.hb" >/dev/null 2>&1
    local ms=$((($(date +%s%N) - start) / 1000000))
    "$H" decrypt --key "$d/keys/client.key" --bundle "$d/out.hb" --out "$d/got.json" 2>/dev/null
    python3 -c "import json,sys; a=json.load(open('$d/got.json')); b=json.load(open('$d/expected.json')); sys.exit(0 if a==b else 1)" \
        && verdict="equal to the clear model" || { echo "$name: DIFFERS"; exit 1; }
    echo "## $name ($params): submit to result $((ms / 1000)).$(printf %03d $((ms % 1000))) s, $verdict"
    for f in keys/client.key keys/server.key program.hprog values.json in.hb out.hb; do
        printf '%-16s %12d bytes\n' "$f" "$(stat -c %s "$d/$f")"
    done
}
run regression-digits DIGITS_128
run regression-words GATES_128 --family words
