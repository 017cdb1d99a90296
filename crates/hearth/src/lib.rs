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
pub mod backend;
pub mod bits;
pub mod circuit;
pub mod comparison;
pub mod crypto;
pub mod digits;
pub mod error;
pub mod kernels;
#[cfg(feature = "testing")]
pub mod testing;

pub use api::{
    Bool, Bundle, CompiledProgram, Encrypted, Int, Param, Program, ProgramSummary, Shape,
    Signature, Word,
};
pub use circuit::{Circuit, CircuitBuilder, Stats, Wire};
pub use comparison::Comparison;
pub use crypto::compressed::{CompressedServerKey, ServerKeySizes};
pub use crypto::keys::{Ciphertext, ClientKey, KeyId, ServerKey};
pub use crypto::lut::Lut;
pub use crypto::params::{
    Budgets, Margin, ParameterSet, ParamsId, BITS_128, DIGITS_128, DIGITS_KS32_128, GATES_128,
    INSECURE_TEST_BITS, INSECURE_TEST_DIGITS,
};
pub use error::{BuildError, Error, FileError, LutError, Result};
