//! Plaintext evaluation with the exact semantics of the encrypted run:
//! linear operations modulo `2^pi`, bootstraps as negacyclic table reads.

use super::{check_input_count, Backend};
use crate::circuit::{Circuit, LinearExpr};
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// Evaluates circuits on plain digits; checks inputs against their declared
/// ranges and every selector against its proven range.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClearBackend;

fn eval_expr(expr: &LinearExpr, fresh: &[u64], m: u64) -> u64 {
    let mut acc = expr.constant;
    for &(f, w) in &expr.terms {
        let term = (w.rem_euclid(m as i64) as u64).wrapping_mul(fresh[f as usize]) % m;
        acc = (acc + term) % m;
    }
    acc
}

impl Backend for ClearBackend {
    type Digit = u64;

    fn evaluate(&self, circuit: &Circuit, inputs: &[u64]) -> Result<Vec<u64>, Error> {
        check_input_count(circuit, inputs.len())?;
        let params = ParamsId::params(circuit.params);
        let m = params.message_modulus();
        let mut fresh = vec![0u64; circuit.num_fresh()];
        for (i, (&(f, range), &v)) in circuit.inputs.iter().zip(inputs).enumerate() {
            if v >= m || !range.contains_residue(v, m) {
                return Err(Error::InputOutOfRange {
                    input: i,
                    value: v as i64,
                    lo: range.lo,
                    hi: range.hi,
                });
            }
            fresh[f as usize] = v;
        }
        for (i, b) in circuit.bootstraps.iter().enumerate() {
            let x = eval_expr(&b.input, &fresh, m);
            if !b.selector.contains_residue(x, m) {
                return Err(Error::SelectorOutOfRange {
                    bootstrap: i,
                    value: x,
                });
            }
            let table = &circuit.tables[b.table];
            for (j, &offset) in b.offsets.iter().enumerate() {
                fresh[b.first_output as usize + j] = table[2 * ((x + offset) % m) as usize];
            }
        }
        Ok(circuit
            .outputs
            .iter()
            .map(|o| eval_expr(o, &fresh, m))
            .collect())
    }
}
