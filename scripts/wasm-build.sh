#!/usr/bin/env bash
# Builds the browser client into DIR (default target/web): the crate
# hearth-wasm for wasm32-unknown-unknown, its JavaScript package with
# TypeScript types (wasm-bindgen, in DIR/pkg), the example page (web/), and
# the program it runs (the diabetes regression, DIR/reg). Serve DIR with
# any static file server (docs/browser.md).
#
# Installs what is missing: the wasm32 target (rustup) and the
# `wasm-bindgen` command of the exact version the crate is locked to
# (cargo install, about 2 minutes once).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/web}
# A failed build leaves no page behind (the browser test then skips).
rm -rf "$out"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi
# The command must match the crate: both read one wire format.
# One on PATH of that version serves; else it is installed into
# target/tools and called there by its path (a CI's PATH need not hold
# cargo's bin folder).
version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print }' Cargo.lock)
bindgen=wasm-bindgen
if [ "$("$bindgen" --version 2>/dev/null | cut -d' ' -f2)" != "$version" ]; then
    bindgen=$PWD/target/tools/bin/wasm-bindgen
fi
if [ "$("$bindgen" --version 2>/dev/null | cut -d' ' -f2)" != "$version" ]; then
    # Not --locked: its lock file names versions a registry mirror may lack.
    cargo install -q --root target/tools wasm-bindgen-cli --version "=$version"
fi

cargo build -q --release -p hearth-wasm --target wasm32-unknown-unknown
mkdir -p "$out"
"$bindgen" --target web --out-dir "$out/pkg" target/wasm32-unknown-unknown/release/hearth_wasm.wasm
cp web/index.html web/app.js web/worker.js web/style.css "$out/"

# The page's program and its model in the clear (to show both answers).
hearth=target/release/hearth
if [ ! -x "$hearth" ]; then
    cargo build -q --release -p hearth-cli
fi
"$hearth" app regression --rows 1 --export "$out/reg" >/dev/null
cp data/diabetes/model.json data/diabetes/rows.csv "$out/reg/"

wasm="$out/pkg/hearth_wasm_bg.wasm"
echo "built $out: $wasm $(wc -c <"$wasm") bytes, $(gzip -9c "$wasm" | wc -c) gzipped"
