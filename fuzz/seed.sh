#!/usr/bin/env bash
# Regenerates the seed corpus in fuzz/seeds/ from real files: keys for the
# INSECURE test sets, ciphertext lists, programs and bundles (written by
# crates/hearth/examples/fuzz_seeds.rs with fresh keys), ELF executables
# of the emulator's test corpus (when arm-none-eabi-gcc is installed) and
# the repository's assembly sources.
#
# Whole server keys (megabytes even for the INSECURE sets) are not seeds:
# they go to fuzz/full-keys/ (ignored by git), for a run that wants them:
#   cargo +nightly fuzz run server_key fuzz/corpus/server_key fuzz/full-keys/server_key -- -max_len=8000000
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cargo run --release -p hearth --example fuzz_seeds -- "$tmp"
for t in client_key server_key compressed_server_key ciphertexts bundle program server_request public_key; do
    if [ ! -d "$tmp/$t" ]; then
        echo "fuzz_seeds wrote no $t seeds: fuzz/seeds/$t left as it is" >&2
        continue
    fi
    mkdir -p "fuzz/seeds/$t"
    for f in "$tmp/$t"/*; do
        case "$f" in
            *.full) mkdir -p "fuzz/full-keys/$t" && cp "$f" "fuzz/full-keys/$t/" ;;
            *) cp "$f" "fuzz/seeds/$t/" ;;
        esac
    done
done

mkdir -p fuzz/seeds/elf fuzz/seeds/asm
corpus=crates/hearth-emu/tests/corpus
if command -v arm-none-eabi-gcc >/dev/null; then
    flags=(-O1 -marm -march=armv7ve -nostdlib -nostartfiles -ffreestanding -T "$corpus/link.ld")
    for c in gcd popcount crc8; do
        arm-none-eabi-gcc "${flags[@]}" "$corpus/start.s" "$corpus/$c.c" -o "fuzz/seeds/elf/$c"
    done
    # Without a symbol table (every word of the code segment is code).
    arm-none-eabi-gcc "${flags[@]}" -s "$corpus/start.s" "$corpus/isqrt.c" -o fuzz/seeds/elf/isqrt-stripped
    # GCC's own assembly output: directives the assembler may refuse.
    for c in gcd bubble; do
        arm-none-eabi-gcc -O1 -marm -march=armv7ve -ffreestanding -S "$corpus/$c.c" -o "fuzz/seeds/asm/$c-gcc.s"
    done
else
    echo "arm-none-eabi-gcc not found: ELF seeds left as they are (Debian: gcc-arm-none-eabi)" >&2
fi
cp "$corpus"/*.s examples/emu/*.s fuzz/seeds/asm/
ls -l fuzz/seeds/*
