//! Two's-complement bits: one encrypted bit per ciphertext, every operation
//! a circuit of gates (the CSA, CPU/GPU and CryptoEmu papers), so it runs
//! on every backend.
//!
//! A bit `b` is stored as the value `2b` (0 or 2): gate selectors then take
//! values at least two units apart and decode with a margin of one unit,
//! which is what lets `hearth::GATES_128` bootstrap with small, fast
//! parameters (TFHE gate bootstrapping, in hearth's terms). Every gate is
//! one bootstrap of a linear selector ([`gates`]); sums such as a full
//! adder's are linear and cost nothing, as long as the weights the builder
//! tracks allow.
//!
//! A [`Bits`] is a little-endian list of such wires: fresh bits, linear
//! combinations known to be 0 or 2 (quadratic weight within the margin-1
//! budget, so a single refresh can always restore them), or clear
//! constants. Every operation returns bits of that kind.

pub mod adders;
pub mod bitwise;
pub mod compare;
pub mod convert;
pub mod counters;
pub mod div;
pub mod dot;
pub mod flags;
mod functions;
pub mod gates;
pub mod mul;
pub mod packed_add;
pub mod packed_compare;
pub mod parity;
mod prefix;
pub mod shift;

use num_bigint::BigInt;
use num_traits::One;

use crate::circuit::{CircuitBuilder, Wire};
use crate::crypto::params::{Margin, ParameterSet};
use crate::error::{BuildError, Error};

/// The stored value of a set bit.
pub const ONE: i64 = 2;

/// A little-endian string of encrypted (or clear) bits.
#[derive(Clone, Debug, Default)]
pub struct Bits {
    bits: Vec<Wire>,
}

/// Checks that `params` can carry the bits family: gates need selector
/// values two units apart (`pi >= 3`), a majority of three fresh bits
/// (weight 3 at margin 1) and an XOR with a doubled selector (weight 8 at
/// margin 2).
pub fn check_params(params: &ParameterSet) -> Result<(), Error> {
    if params.pi < 3 || params.budgets.one < 3 || params.budgets.two < 8 {
        return Err(Error::UnsupportedParams {
            params: params.id,
            family: "two's-complement bits",
            reason: format!(
                "it needs pi >= 3 and budgets >= 3 (margin 1) and >= 8 (margin 2); it has pi = {} \
                 and budgets {:?}",
                params.pi, params.budgets
            ),
        });
    }
    Ok(())
}

/// Whether `w` may stand as a bit: every possible value 0 or 2 and weight
/// within the margin-1 budget (one refresh restores it).
pub(crate) fn is_bit(b: &CircuitBuilder, w: Wire) -> Result<bool, Error> {
    let m = b.params().message_modulus();
    let r = b.range(w)?;
    Ok(r.residues(m).iter().all(|&x| x == 0 || x == ONE as u64)
        && b.quadratic_weight(w)? <= b.params().budgets.one)
}

/// Whether every value `w` can take (modulo the ring) is an even position
/// in `0..=limit`: a bit for `limit = ONE`, or a sum of bits that a table
/// on the first half of the ring reads exactly. Bits that share fresh
/// values can make a sum's range wider than its values.
pub(crate) fn on_even_positions(b: &CircuitBuilder, w: Wire, limit: i64) -> Result<bool, Error> {
    let m = b.params().message_modulus();
    Ok(b.range(w)?
        .residues(m)
        .iter()
        .all(|&x| x % ONE as u64 == 0 && x as i64 <= limit))
}

impl Bits {
    /// `n` encrypted input bits.
    pub fn input(b: &mut CircuitBuilder, n: usize) -> Result<Self, Error> {
        let bits = (0..n)
            .map(|_| b.input_with_step(0, ONE, ONE))
            .collect::<Result<_, _>>()?;
        Ok(Bits { bits })
    }

    /// The low `n` bits of `value` in two's complement, as clear constants.
    pub fn constant(b: &mut CircuitBuilder, value: &BigInt, n: usize) -> Self {
        let modulus = BigInt::one() << n;
        let v = ((value % &modulus) + &modulus) % &modulus;
        let bits = (0..n as u64)
            .map(|i| b.constant(if v.bit(i) { ONE } else { 0 }))
            .collect();
        Bits { bits }
    }

    /// Wraps wires that already are bits.
    pub fn from_wires(b: &CircuitBuilder, bits: Vec<Wire>) -> Result<Self, Error> {
        for (i, &w) in bits.iter().enumerate() {
            if !is_bit(b, w)? {
                let r = b.range(w)?;
                return Err(BuildError::NotABit {
                    node: format!("bit {i}"),
                    lo: r.lo,
                    hi: r.hi,
                    weight: b.quadratic_weight(w)?,
                }
                .into());
            }
        }
        Ok(Bits { bits })
    }

    /// Bits from their wires, least significant first (unchecked: each
    /// wire must hold 0 or 1).
    pub fn from_vec(bits: Vec<Wire>) -> Self {
        Bits { bits }
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// Whether it has no bits.
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The bit wires, least significant first.
    pub fn wires(&self) -> &[Wire] {
        &self.bits
    }

    /// Marks every bit as a circuit output, decoded with a margin of one
    /// unit (`hearth::ClientKey::decrypt_bit`); returns the indices.
    pub fn output(&self, b: &mut CircuitBuilder) -> Result<Vec<usize>, Error> {
        Ok(self
            .bits
            .iter()
            .map(|&w| b.output_decoded(w, Margin::One))
            .collect::<Result<_, _>>()?)
    }

    /// Bit `i`, or the fill bit beyond the top (`fill` for sign extension).
    pub(crate) fn bit_or(&self, i: usize, fill: Wire) -> Wire {
        self.bits.get(i).copied().unwrap_or(fill)
    }

    /// The value when every bit is a clear constant (unsigned, or two's
    /// complement when `signed`), else `None`.
    pub(crate) fn clear_value(
        &self,
        b: &CircuitBuilder,
        signed: bool,
    ) -> Result<Option<BigInt>, Error> {
        Ok(clear_bits(b, &self.bits)?.map(|bits| value_of(&bits, signed)))
    }

    /// The top bit (the sign in two's complement); a clear 0 when empty.
    pub(crate) fn top(&self, b: &mut CircuitBuilder) -> Wire {
        match self.bits.last() {
            Some(&w) => w,
            None => b.constant(0),
        }
    }
}

/// Bit `w` when it is a clear constant, else `None`.
pub(crate) fn clear_bit(b: &CircuitBuilder, w: Wire) -> Result<Option<bool>, Error> {
    Ok(b.constant_value(w)?.map(|v| v.rem_euclid(2 * ONE) == ONE))
}

/// The bits of `wires` when every one is a clear constant, else `None`.
pub(crate) fn clear_bits(b: &CircuitBuilder, wires: &[Wire]) -> Result<Option<Vec<bool>>, Error> {
    wires.iter().map(|&w| clear_bit(b, w)).collect()
}

/// The value of clear bits (0 or 1 each), least significant first:
/// unsigned, or two's complement when `signed`.
pub fn value_of(bits: &[bool], signed: bool) -> BigInt {
    crate::crypto::encoding::word_value(bits, signed)
}
