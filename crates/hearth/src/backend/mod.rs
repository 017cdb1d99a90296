//! Interchangeable evaluators of a [`Circuit`].
//!
//! | backend | digit type | does |
//! |---|---|---|
//! | [`ClearBackend`] | `u64` in `Z_{2^pi}` | exact plaintext semantics of the encrypted run |
//! | [`CountBackend`] | [`Depth`] | evaluates nothing; depth of each value and [`crate::circuit::Stats`] |
//! | [`CpuBackend`] | [`crate::Ciphertext`] | tfhe-rs key switch + PBS on a thread pool |

mod clear;
mod count;
mod cpu;

pub use clear::ClearBackend;
pub use count::{CountBackend, Depth};
pub use cpu::{default_threads, resolve_threads, CpuBackend, Progress, RunReport};

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

fn check_input_count(circuit: &Circuit, found: usize) -> Result<(), Error> {
    if circuit.num_inputs() != found {
        return Err(Error::InputCount {
            expected: circuit.num_inputs(),
            found,
        });
    }
    Ok(())
}
