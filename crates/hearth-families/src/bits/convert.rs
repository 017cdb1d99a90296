//! Conversions: between widths (free), and between bits and signed-binary
//! digits (the digits family) on a parameter set that carries both
//! (`pi >= 5`, e.g. `DIGITS_128`).
//!
//! Bits to digits: each bit, stored as 0 or 2, becomes a digit 0 or 1 (one
//! bootstrap: halving is no linear operation); two's complement
//! `b_0 .. b_(n-1)` is then the digits `b_0, ..., b_(n-2), -b_(n-1)` (free).
//! Digits to bits: [`crate::digits::to_bits`] gives 0/1 bits, doubled for
//! free.

use super::{Bits, ONE};
use crate::circuit::CircuitBuilder;
use crate::crypto::lut::Lut;
use crate::digits::{self, Digits};
use crate::error::Error;

/// `x` on `n` bits: truncated, or extended with zeros (unsigned) or
/// copies of the sign bit (`signed`). Free.
pub fn resize(b: &mut CircuitBuilder, x: &Bits, n: usize, signed: bool) -> Bits {
    let fill = if signed { x.top(b) } else { b.constant(0) };
    Bits::from_vec((0..n).map(|i| x.bit_or(i, fill)).collect())
}

/// The digits of `x` (unsigned, or two's complement when `signed`).
pub fn to_digits(b: &mut CircuitBuilder, x: &Bits, signed: bool) -> Result<Digits, Error> {
    digits::check_params(b.params())?;
    let half = Lut::from_points(b.params().pi, &[(0, 0), (ONE, 1)])?;
    let mut ds = x
        .wires()
        .iter()
        .map(|&w| b.bootstrap(w, &half))
        .collect::<Result<Vec<_>, _>>()?;
    if signed {
        if let Some(top) = ds.last_mut() {
            *top = b.neg(*top)?;
        }
    }
    Digits::from_wires(b, ds)
}

/// The two's-complement bits of `x`: `len(x) + 1` of them (the value
/// always fits).
pub fn from_digits(b: &mut CircuitBuilder, x: &Digits) -> Result<Bits, Error> {
    let bits = digits::to_bits(b, x)?;
    let doubled = bits
        .into_iter()
        .map(|w| b.mul_const(w, ONE))
        .collect::<Result<_, _>>()?;
    Bits::from_wires(b, doubled)
}
