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
//! A second way skips the chains: every non-zero recoded digit of `k`
//! contributes a shifted `+-x`, and all go into one column compression
//! ([`ScalarAlgorithm::Direct`]). Compression shares work across all the
//! terms, so it usually needs fewer bootstraps and levels (x805 on 16 bits:
//! 90 PBS, depth 5, against 114 and 6 with chains); chains win when windows
//! repeat. [`ScalarAlgorithm::Auto`], the default, builds both on the count
//! backend and keeps the cheaper.
//!
//! Length rule: at most `len(x) + bits(|k|) + 2` digits.

use std::collections::HashMap;

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use super::add::sum_shifted;
use super::asc::chain;
use super::recoding::{koyama_tsuruoka, windows};
use super::{add, Digits};
use crate::circuit::{CircuitBuilder, Memo};
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// Window width of the recoded scalar: the chain table covers 12 bits.
const WINDOW: usize = 12;

/// The Koyama-Tsuruoka digits of `|k|`.
pub(crate) fn recode(k: &BigInt) -> Vec<i8> {
    let mag = k.abs();
    let bits: Vec<bool> = (0..mag.bits()).map(|i| mag.bit(i)).collect();
    koyama_tsuruoka(&bits)
}

/// How to multiply by a clear integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarAlgorithm {
    /// Windows evaluated with ASC* chains, then one compressed sum.
    Chains,
    /// One compressed sum of a shifted `+-x` per non-zero recoded digit.
    Direct,
    /// The cheaper of the two on the count backend (fewest bootstraps, then
    /// lowest depth).
    Auto,
}

thread_local! {
    static CHOICES: Memo<(ParamsId, usize, BigInt), ScalarAlgorithm> = Memo::new();
}

/// `k * x` for a clear `k` of any size ([`ScalarAlgorithm::Auto`]).
pub fn scalar_mul(b: &mut CircuitBuilder, x: &Digits, k: &BigInt) -> Result<Digits, Error> {
    scalar_mul_with(b, x, k, ScalarAlgorithm::Auto)
}

/// `k * x` with a chosen algorithm.
pub fn scalar_mul_with(
    b: &mut CircuitBuilder,
    x: &Digits,
    k: &BigInt,
    algo: ScalarAlgorithm,
) -> Result<Digits, Error> {
    match algo {
        ScalarAlgorithm::Chains => scalar_mul_chains(b, x, k),
        ScalarAlgorithm::Direct => scalar_mul_direct(b, x, k),
        ScalarAlgorithm::Auto => {
            let key = (b.params().id, x.len(), k.clone());
            let chosen = CHOICES.with(|memo| {
                memo.try_get_or(key, || {
                    let mut best = None;
                    for a in [ScalarAlgorithm::Direct, ScalarAlgorithm::Chains] {
                        let mut scratch = CircuitBuilder::new(b.params());
                        let sx = Digits::input(&mut scratch, x.len())?;
                        scalar_mul_with(&mut scratch, &sx, k, a)?.output(&mut scratch)?;
                        let st = scratch.build().stats();
                        if best.is_none_or(|(c, _)| (st.pbs, st.depth) < c) {
                            best = Some(((st.pbs, st.depth), a));
                        }
                    }
                    Ok::<_, Error>(best.expect("two candidates").1)
                })
            })?;
            scalar_mul_with(b, x, k, chosen)
        }
    }
}

/// `k * x` as one compressed sum of a shifted `+-x` per non-zero recoded
/// digit of `k`: no chain at all.
pub fn scalar_mul_direct(b: &mut CircuitBuilder, x: &Digits, k: &BigInt) -> Result<Digits, Error> {
    if k.is_zero() || x.is_empty() {
        return Ok(Digits::default());
    }
    let nx = x.neg(b)?;
    let mut terms = Vec::new();
    for (j, &d) in recode(k).iter().enumerate() {
        if d != 0 {
            let positive = (d > 0) != k.is_negative();
            terms.push((if positive { x.clone() } else { nx.clone() }, j));
        }
    }
    match terms.as_slice() {
        [(p, s)] => Ok(p.shl(b, *s)),
        _ => sum_shifted(b, &terms),
    }
}

/// `k * x` for a clear `k`, by windows and chains.
pub fn scalar_mul_chains(b: &mut CircuitBuilder, x: &Digits, k: &BigInt) -> Result<Digits, Error> {
    if k.is_zero() || x.is_empty() {
        return Ok(Digits::default());
    }
    let recoded = recode(k);
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
