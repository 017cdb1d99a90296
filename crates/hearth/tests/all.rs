//! The library's integration tests, one module per file, in one test
//! binary: one link instead of one per file, and the two test threads
//! busy across files (`cargo test --release -p hearth --test all twos::`
//! runs one file's tests).

mod batched;
mod bits;
mod by_id;
mod composed;
mod compressed;
mod digits;
mod engine;
mod files;
mod integer;
mod kernels;
mod kernels_encrypted;
mod ks32;
mod mpi;
mod program_files;
mod programs;
mod twos;
mod words;
