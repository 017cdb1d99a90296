//! Multiplication by a clear integer of any size (PARMESAN Algorithm 2).
//!
//! `|k|` is Koyama-Tsuruoka recoded, split into sliding windows of at most
//! 12 digits, and each distinct window value `|w|` is computed once with its
//! addition-subtraction chain with free doubling ([`super::asc::chain`]);
//! distinct windows are independent, so their additions run side by side.
//! The shifted, signed window products are summed by column compression, as
//! one many-operand sum rather than a chain of additions. Multiplying by a
//! power of two is a shift and costs nothing.
//!
//! Length rule: at most `len(x) + bits(|k|) + 1` digits.

use std::collections::HashMap;

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use super::add::sum_shifted;
use super::asc::chain;
use super::recoding::{koyama_tsuruoka, windows};
use super::{add, Digits};
use crate::circuit::CircuitBuilder;
use crate::error::Error;

/// Window width of the recoded scalar: the chain table covers 12 bits.
const WINDOW: usize = 12;

/// `k * x` for a clear `k`.
pub fn scalar_mul(b: &mut CircuitBuilder, x: &Digits, k: &BigInt) -> Result<Digits, Error> {
    if k.is_zero() || x.is_empty() {
        return Ok(Digits::default());
    }
    let mag = k.abs();
    let bits: Vec<bool> = (0..mag.bits()).map(|i| mag.bit(i)).collect();
    let recoded = koyama_tsuruoka(&bits);
    let mut products: HashMap<u32, Digits> = HashMap::new();
    let mut terms = Vec::new();
    for w in windows(&recoded, WINDOW) {
        let v = w.value.unsigned_abs() as u32;
        let p = match products.entry(v) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(replay(b, x, v)?),
        };
        let p = if (w.value < 0) != k.is_negative() {
            p.neg(b)?
        } else {
            p.clone()
        };
        terms.push((p, w.shift));
    }
    match terms.as_slice() {
        [(p, s)] => Ok(p.shl(b, *s)),
        _ => sum_shifted(b, &terms),
    }
}

/// `v * x` for an odd `v <= 4095`, by its chain.
fn replay(b: &mut CircuitBuilder, x: &Digits, v: u32) -> Result<Digits, Error> {
    let mut elems = vec![x.clone()];
    for step in &chain(v).steps {
        let r = &elems[step.r as usize];
        let r = if step.neg_r { r.neg(b)? } else { r.clone() };
        let s = elems[step.s as usize].shl(b, step.shift as usize);
        let s = if step.neg_s { s.neg(b)? } else { s };
        let t = add(b, &r, &s)?;
        // The dropped digits are zero in every signed-binary form.
        let (_, k) = t.split(step.drop as usize);
        elems.push(k);
    }
    Ok(elems.pop().expect("a chain has a last element"))
}
