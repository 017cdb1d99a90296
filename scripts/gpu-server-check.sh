#!/usr/bin/env bash
# The compute server on the gpu (a step of gpu-measure.sh's `check`): the
# regression program on DIGITS_128 submitted to `hearth server --backend
# gpu` (with HEARTH_REQUIRE_GPU set there, so no fallback to the cpu),
# fetched, decrypted and compared with the same bundle run by `hearth run
# --backend cpu`. Prints one markdown line; exits 1 on any difference.
#
# Usage: scripts/gpu-server-check.sh HEARTH THREADS
#   HEARTH   the command to run (dist/gpu/hearth-gpu on the GPU machine;
#            target/release/hearth here, where it checks the script itself
#            on the cpu fallback unless HEARTH_REQUIRE_GPU is set)
set -euo pipefail
h=$1
threads=$2
d=$(mktemp -d)
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
    rm -rf "$d"
}
trap cleanup EXIT

"$h" keygen --params DIGITS_128 --compressed --out "$d/keys" >/dev/null
"$h" app regression --rows 1 --export "$d/reg" >/dev/null
"$h" encrypt --key "$d/keys/client.key" --program "$d/reg/program.hprog" \
    --values "$d/reg/values.json" --out "$d/in.hb" >/dev/null
"$h" run --backend cpu --threads "$threads" --server-key "$d/keys/server.key" \
    --program "$d/reg/program.hprog" --bundle "$d/in.hb" --out "$d/cpu.hb" >/dev/null 2>&1

"$h" server --backend gpu --threads "$threads" --listen 127.0.0.1:0 --data "$d/srv" \
    >"$d/server.out" 2>"$d/server.log" &
server=$!
for _ in $(seq 600); do
    grep -q "listening on" "$d/server.out" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$d/server.log" >&2; exit 1; }
    sleep 0.1
done
url=$(sed -n 's/^listening on //p' "$d/server.out")
start=$(date +%s%N)
HEARTH_SERVER=$url "$h" submit --server-key "$d/keys/server.key" \
    --program "$d/reg/program.hprog" --bundle "$d/in.hb" >"$d/job.txt"
HEARTH_SERVER=$url "$h" fetch --job "$(cat "$d/job.txt")" --out "$d/gpu.hb" --wait >/dev/null 2>&1
took=$((($(date +%s%N) - start) / 1000000))
"$h" decrypt --key "$d/keys/client.key" --bundle "$d/cpu.hb" --out "$d/cpu.json" >/dev/null
"$h" decrypt --key "$d/keys/client.key" --bundle "$d/gpu.hb" --out "$d/gpu.json" >/dev/null
backend=$(sed -n 's/^hearth server: jobs on \([^,]*\),.*/\1/p' "$d/server.log")
if [ "$(cat "$d/cpu.json")" = "$(cat "$d/gpu.json")" ]; then
    echo "| hearth server --backend gpu (jobs on $backend) | regression, 1 row, DIGITS_128 | submitted, run, fetched in ${took} ms | decrypted equal to hearth run --backend cpu |"
else
    echo "| hearth server --backend gpu (jobs on $backend) | regression | DIFFERENT: $(cat "$d/gpu.json") vs $(cat "$d/cpu.json") |"
    exit 1
fi
