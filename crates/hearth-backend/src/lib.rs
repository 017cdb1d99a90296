//! Interchangeable evaluators of a [`Circuit`].
//!
//! | backend | digit type | does |
//! |---|---|---|
//! | [`ClearBackend`] | `u64` in `Z_{2^pi}` | exact plaintext semantics of the encrypted run |
//! | [`CountBackend`] | [`Depth`] | evaluates nothing; depth of each value and [`crate::circuit::Stats`] |
//! | [`CpuBackend`] | [`crate::Ciphertext`] | tfhe-rs key switch + PBS on a thread pool |
//! | [`Batched`]`<`[`CpuBatch`]`>` | [`crate::Ciphertext`] | the same, a whole level per call (the GPU's schedule, tested in CI) |
//! | `GpuBackend` (feature `gpu`) | [`crate::Ciphertext`] | tfhe-rs's CUDA key switch + many-LUT PBS, a whole level per launch |
//! | `MpiBackend` (crate `hearth-mpi`; `hearth::backend::mpi`) | [`crate::Ciphertext`] | the cpu backend's schedule with bootstraps also on other MPI ranks; batch mode |
//!
//! A model of the cpu and MPI backends' schedule (their wall time on P
//! ranks x T threads from a circuit's bootstraps alone) is the core's
//! `circuit::schedule`, which plans are chosen by.

// The core's modules under the names the backends' code uses.
use hearth_core::{circuit, crypto, error};
use hearth_core::{Ciphertext, KeyId, ParamsId};

pub mod batch;
mod clear;
mod count;
pub mod cpu;
mod cpu_batch;
pub mod device_memory;
#[cfg(feature = "gpu")]
mod gpu;
mod hooks;
pub mod noise;

pub use batch::{BatchExecutor, Batched, ClearBatch, Plan};
pub use clear::ClearBackend;
pub use count::{CountBackend, Depth};
pub use cpu::{default_threads, resolve_threads, CpuBackend, RunReport};
pub use cpu_batch::CpuBatch;
#[cfg(feature = "gpu")]
pub use gpu::{gpu_available, GpuBackend, GpuBatch, GpuKey};
pub use hooks::Progress;

use crate::circuit::Circuit;
use crate::error::Error;

/// Evaluates circuits on some representation of digits.
pub trait Backend {
    /// What one digit is for this backend.
    type Digit;

    /// Evaluates `circuit` on `inputs` (one per circuit input, in order) and
    /// returns one digit per circuit output.
    fn evaluate(
        &self,
        circuit: &Circuit,
        inputs: &[Self::Digit],
    ) -> Result<Vec<Self::Digit>, Error>;
}

/// A boxed backend evaluates as the backend in it (so that `dyn Backend`
/// values can run programs: `CompiledProgram::run_encrypted(&boxed, ..)`).
impl<B: Backend + ?Sized> Backend for Box<B> {
    type Digit = B::Digit;

    fn evaluate(
        &self,
        circuit: &Circuit,
        inputs: &[Self::Digit],
    ) -> Result<Vec<Self::Digit>, Error> {
        (**self).evaluate(circuit, inputs)
    }
}

/// `out += w * src` on LWE ciphertexts (wrapping): one term of a linear
/// combination, as every encrypted backend computes it.
pub(crate) fn add_scaled(out: &mut [u64], src: &[u64], w: u64) {
    for (o, &s) in out.iter_mut().zip(src) {
        *o = o.wrapping_add(s.wrapping_mul(w));
    }
}

/// Adds the clear `constant` (digit units) to the body of `out`.
pub(crate) fn add_constant(out: &mut [u64], constant: u64, delta: u64) {
    let body = out.last_mut().expect("LWE has a body");
    *body = body.wrapping_add(constant.wrapping_mul(delta));
}

/// Checks that `circuit` is for `params` and that its inputs are as many
/// as it takes, each made under `params` and `key_id`.
pub(crate) fn check_run(
    circuit: &Circuit,
    params: crate::ParamsId,
    key_id: crate::KeyId,
    inputs: &[crate::Ciphertext],
) -> Result<(), Error> {
    if circuit.params() != params {
        return Err(Error::ParamsMismatch {
            expected: params,
            found: circuit.params(),
        });
    }
    check_input_count(circuit, inputs.len())?;
    inputs
        .iter()
        .try_for_each(|ct| ct.check_owner(params, key_id))
}

fn check_input_count(circuit: &Circuit, found: usize) -> Result<(), Error> {
    if circuit.num_inputs() != found {
        return Err(Error::InputCount {
            expected: circuit.num_inputs(),
            found,
        });
    }
    Ok(())
}
