//! The README's and the book's Rust code blocks as doctests: each
//! markdown file is the doc comment of one item here, so `cargo test
//! --release -p hearth-book --doc` compiles and runs every `rust` block
//! in them (in the book, lines starting with `# ` set up what a block
//! needs; mdBook hides them as rustdoc does. The README's blocks have none:
//! GitHub would show them). The test command runs them; the Python
//! blocks run in `crates/hearth-py/tests/test_docs.py` and the shell blocks
//! in `crates/hearth-cli/tests/docs.rs`.
//!
//! The items exist only when rustdoc collects doctests (`cfg(doctest)`):
//! this crate has no code.

/// The README.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct Readme;

/// `docs/rust.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/rust.md")]
pub struct Rust;

/// `docs/python.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/python.md")]
pub struct Python;

/// `docs/cli.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/cli.md")]
pub struct Cli;

/// `docs/server.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/server.md")]
pub struct Server;

/// `docs/public-key.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/public-key.md")]
pub struct PublicKey;

/// `docs/digits.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/digits.md")]
pub struct Digits;

/// `docs/words.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/words.md")]
pub struct Words;

/// `docs/kernels.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/kernels.md")]
pub struct Kernels;

/// `docs/transciphering.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/transciphering.md")]
pub struct Transciphering;

/// `docs/packed-results.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/packed-results.md")]
pub struct PackedResults;

/// `docs/emulator.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/emulator.md")]
pub struct Emulator;

/// `docs/parameters.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/parameters.md")]
pub struct Parameters;

/// `docs/mpi.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/mpi.md")]
pub struct Mpi;

/// `docs/gpu.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/gpu.md")]
pub struct Gpu;

/// `docs/benchmarks.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/benchmarks.md")]
pub struct Benchmarks;

/// `docs/formats.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/formats.md")]
pub struct Formats;

/// `docs/troubleshooting.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/troubleshooting.md")]
pub struct Troubleshooting;

/// `docs/layout.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/layout.md")]
pub struct Layout;

/// `docs/introduction.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/introduction.md")]
pub struct Introduction;

/// `docs/install.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/install.md")]
pub struct Install;

/// `docs/hello.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/hello.md")]
pub struct Hello;

/// `docs/concepts.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/concepts.md")]
pub struct Concepts;

/// `docs/security.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/security.md")]
pub struct Security;

/// `docs/types.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/types.md")]
pub struct Types;

/// `docs/noise.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/noise.md")]
pub struct Noise;

/// `docs/cost.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/cost.md")]
pub struct Cost;

/// `docs/api.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/api.md")]
pub struct Api;

/// `docs/tutorials/regression.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/tutorials/regression.md")]
pub struct TutorialRegression;

/// `docs/tutorials/argmax.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/tutorials/argmax.md")]
pub struct TutorialArgmax;

/// `docs/tutorials/sensor.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/tutorials/sensor.md")]
pub struct TutorialSensor;

/// `docs/tutorials/arm.md`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/tutorials/arm.md")]
pub struct TutorialArm;
