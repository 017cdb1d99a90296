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

/// `expr` mod `m = mask + 1` (a power of two): wrapping arithmetic mod
/// 2^64 agrees with it, so one mask at the end is enough.
fn eval_expr(expr: &LinearExpr, fresh: &[u64], mask: u64) -> u64 {
    let mut acc = expr.constant;
    for &(f, w) in &expr.terms {
        acc = acc.wrapping_add((w as u64).wrapping_mul(fresh[f as usize]));
    }
    acc & mask
}

impl Backend for ClearBackend {
    type Digit = u64;

    fn evaluate(&self, circuit: &Circuit, inputs: &[u64]) -> Result<Vec<u64>, Error> {
        check_input_count(circuit, inputs.len())?;
        let params = ParamsId::params(circuit.params());
        let m = params.message_modulus();
        debug_assert!(m.is_power_of_two());
        let mask = m - 1;
        let mut fresh = vec![0u64; circuit.num_fresh()];
        for (i, (&(f, range), &v)) in circuit.inputs().iter().zip(inputs).enumerate() {
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
        for (i, b) in circuit.bootstraps().iter().enumerate() {
            let x = eval_expr(&b.input, &fresh, mask);
            if !b.selector.contains_residue(x, m) {
                return Err(Error::SelectorOutOfRange {
                    bootstrap: i,
                    value: x,
                });
            }
            let table = &circuit.tables()[b.table];
            for (j, &offset) in b.offsets.iter().enumerate() {
                fresh[b.first_output as usize + j] = table[2 * ((x + offset) & mask) as usize];
            }
        }
        Ok(circuit
            .outputs()
            .iter()
            .map(|o| eval_expr(o, &fresh, mask))
            .collect())
    }
}
