//! The emulator's tests, one module per file, in one test binary (one
//! link; `cargo test --release -p hearth-emu --test all qemu::` runs one
//! file's tests). `common` holds the qemu and model helpers they share.

mod alu;
mod asm;
mod common;
mod encrypted;
mod errors;
mod instructions;
mod qemu;
mod remote;
mod width16;
