//! hearth: exact integer arithmetic over TFHE-encrypted data.
//!
//! Algorithms are written once as [`circuit::Circuit`]s — DAGs of cheap linear
//! LWE operations and bootstraps — and evaluated by interchangeable
//! [`backend`]s: `clear` (plaintext, exact semantics), `count` (#PBS, depth),
//! `cpu` (tfhe-rs `core_crypto` key switch + PBS on a thread pool).
//!
//! Where to start reading: [`api`] (the typed values users hold), then the
//! two integer families [`digits`] and [`bits`] that build their circuits,
//! [`circuit`] (the builder and its static checks) and [`crypto`]. The
//! repository's `ARCHITECTURE.md` describes the layers and what each may
//! use, the path of a program from [`Program`] to a backend and back, the
//! static checks, where each paper's algorithms live, and how to add an
//! operation, a backend or a parameter set.
//!
//! **[The book](../book/index.html)** is the user's guide: getting started
//! from Rust, Python, the command line and the server, both integer
//! families and their algorithms, parameters, MPI, GPUs, benchmarks, file
//! formats and troubleshooting (`mdbook build docs` writes it beside these
//! API docs, in `target/doc/book`; its sources are the repository's
//! `docs/`).
//!
//! ```no_run
//! use hearth::{backend::{Backend, ClearBackend, CpuBackend}, CircuitBuilder, ClientKey, Lut, DIGITS_128};
//!
//! let client = ClientKey::generate(&DIGITS_128);
//! let server = client.server_key();
//! let mut b = CircuitBuilder::new(&DIGITS_128);
//! let x = b.input(-1, 1)?;
//! let y = b.input(-1, 1)?;
//! let s = b.add(x, y)?;
//! let sign = Lut::from_fn(5, -2, 2, |v| v.signum())?;
//! let out = b.bootstrap(s, &sign)?;
//! b.output(out)?;
//! let circuit = b.build();
//! let cts = [client.encrypt(1)?, client.encrypt(-1)?];
//! let res = CpuBackend::new(&server, None)?.evaluate(&circuit, &cts)?;
//! assert_eq!(client.decrypt(&res[0])?, ClearBackend.evaluate(&circuit, &[1, 31])?[0]);
//! # Ok::<(), hearth::Error>(())
//! ```

pub mod api;
pub mod kernels;

/// Program-level formats: named inputs and outputs ([`formats::Param`]),
/// bundles of typed encrypted values ([`formats::Bundle`], the core's) and
/// program files ([`formats::program_file`]).
pub mod formats {
    pub use hearth_core::formats::*;
    pub mod program_file;
}
mod select;

// The layers below, each a crate of its own (ARCHITECTURE.md), under the
// names the library has always given them.
pub use hearth_core::{circuit, comparison, crypto, error, symmetric};
pub use hearth_families::{bits, ciphers, digits};

/// Interchangeable evaluators of a [`Circuit`]: the crate `hearth-backend`,
/// with the feature `mpi` the crate `hearth-mpi` as `backend::mpi`, and the
/// one selector of an encrypted backend ([`backend::Evaluator::choose`]).
pub mod backend {
    pub use crate::select::{no_gpu_reason, plan_threads, require_gpu, Chosen, Engine, Evaluator};
    pub use hearth_backend::*;
    #[cfg(feature = "mpi")]
    pub use hearth_mpi as mpi;
    #[cfg(feature = "mpi")]
    pub use hearth_mpi::{Cluster, MpiBackend};
}

pub use api::{
    Bool, Bundle, CompiledProgram, Encrypted, Int, Param, Program, ProgramSummary, Shape,
    Signature, Word,
};
pub use hearth_core::{
    Budgets, BuildError, Ciphertext, Circuit, CircuitBuilder, ClientKey, CompactList, Comparison,
    CompressedServerKey, Error, FileError, KeyId, Lut, LutError, Margin, ParameterSet, ParamsId,
    PublicKey, Result, ServerKey, ServerKeySizes, Stats, Wire, BITS_128, DIGITS_128,
    DIGITS_KS32_128, DIGITS_MB4_128, GATES_128, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS,
};
