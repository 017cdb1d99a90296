//! The library's integration tests, one module per file, in one test
//! binary: one link instead of one per file, and the two test threads
//! busy across files (`cargo test --release -p hearth --test all twos::`
//! runs one file's tests). The MPI tests are a binary of their own
//! (`--test mpi`): each launches `mpirun` on it, and their timeouts must
//! not compete with the encrypted tests for the cores.

mod batched;
mod bits;
mod by_id;
mod composed;
mod compressed;
mod digits;
mod engine;
mod files;
mod fused;
mod headers;
mod integer;
mod kernels;
mod kernels_encrypted;
mod ks32;
mod multi_bit;
mod op_table;
mod program_files;
mod programs;
mod transcipher;
mod twos;
mod words;
