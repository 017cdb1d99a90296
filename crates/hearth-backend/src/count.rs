//! Evaluates nothing: propagates depths and reports circuit statistics.

use super::{check_input_count, Backend};
use crate::circuit::{Circuit, Stats};
use crate::error::Error;

/// Bootstrap depth of one value (0 for a fresh input).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Depth(pub u32);

/// The hardware-independent backend: #PBS, depth, width per level, peak live
/// ciphertexts ([`CountBackend::stats`]), and the depth of every output given
/// the depths of the inputs ([`Backend::evaluate`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct CountBackend;

impl CountBackend {
    /// The circuit's statistics (#PBS, depth, level widths, peak live values).
    pub fn stats(&self, circuit: &Circuit) -> Stats {
        circuit.stats()
    }
}

impl Backend for CountBackend {
    type Digit = Depth;

    fn evaluate(&self, circuit: &Circuit, inputs: &[Depth]) -> Result<Vec<Depth>, Error> {
        check_input_count(circuit, inputs.len())?;
        let mut depth = vec![0u32; circuit.num_fresh()];
        for (&(f, _), d) in circuit.inputs().iter().zip(inputs) {
            depth[f as usize] = d.0;
        }
        for b in circuit.bootstraps() {
            let d = 1 + b
                .input
                .terms
                .iter()
                .map(|&(f, _)| depth[f as usize])
                .max()
                .unwrap_or(0);
            for j in 0..b.offsets.len() {
                depth[b.first_output as usize + j] = d;
            }
        }
        Ok(circuit
            .outputs()
            .iter()
            .map(|o| {
                Depth(
                    o.terms
                        .iter()
                        .map(|&(f, _)| depth[f as usize])
                        .max()
                        .unwrap_or(0),
                )
            })
            .collect())
    }
}
