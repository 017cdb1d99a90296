//! The workspace-hack crate, managed by `cargo hakari`: every member but
//! hearth-bench depends on it, so every build of the demo, the tests, the
//! MPI tests and the Python package asks for the same features of shared
//! dependencies, and `tfhe` (with what it depends on) compiles once for all
//! of them. Regenerate with `cargo hakari generate` after a dependency
//! change; CI checks it with `cargo hakari verify`.
