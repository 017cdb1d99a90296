//! The command's tests, one module per file, in one test binary (one
//! link; `cargo test --release -p hearth-cli --test all deploy::` runs
//! one file's tests).

mod cli;
mod deploy;
mod docs;
mod server;
