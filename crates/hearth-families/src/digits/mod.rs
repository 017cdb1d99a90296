//! Signed-binary integers: one digit in {-1, 0, 1} per ciphertext
//! (PARMESAN, and the GPU-redundant-representation paper), written as
//! circuit construction so that every operation runs on every backend.
//!
//! A [`Digits`] is a little-endian list of wires, each in {-1, 0, 1} and
//! either *fresh* (an encrypted input or a bootstrap output, or its
//! negation: quadratic weight 1) or a clear constant (a trivial digit,
//! weight 0). Every operation returns digits of that kind, so any output
//! feeds any operation. Digits may be copies of one ciphertext (free
//! shifts, negations and pass-through digits repeat them); lookups read
//! them through [`crate::circuit::Selectors`], which refreshes copies only where
//! the budget needs it. Constant digits cost no bootstrap: the builder folds
//! bootstraps of constants.

pub mod add;
pub mod asc;
pub mod convert;
pub mod dot;
pub mod mul;
pub mod recoding;
pub mod scalar;
pub mod sign;
pub(crate) mod sign_tree;
pub mod wide;

pub use add::{add, add_const, compress, sub, sum};
pub use convert::{from_bits, to_bits, wrap};
pub use dot::dot;
pub use mul::{digit_product, mul, mul_wrapping, square, square_wrapping, MulAlgorithm};
pub use scalar::{scalar_mul, scalar_mul_with, ScalarAlgorithm};
pub use sign::{abs, compare, max, min, non_negative, relu, round, signum, Comparison};

use num_bigint::BigInt;
use num_traits::Signed;

use crate::circuit::{CircuitBuilder, Wire};
use crate::crypto::params::ParameterSet;
use crate::error::{BuildError, Error};

/// A signed-binary integer in a circuit under construction.
#[derive(Clone, Debug, Default)]
pub struct Digits {
    digits: Vec<Wire>,
}

impl Digits {
    /// `n` encrypted input digits (circuit inputs, each in [-1, 1]).
    pub fn input(b: &mut CircuitBuilder, n: usize) -> Result<Self, Error> {
        let digits = (0..n).map(|_| b.input(-1, 1)).collect::<Result<_, _>>()?;
        Ok(Digits { digits })
    }

    /// `n` encrypted input digits in two's complement: bits in [0, 1], the
    /// top one in [-1, 0].
    pub fn input_twos(b: &mut CircuitBuilder, n: usize) -> Result<Self, Error> {
        let digits = (0..n)
            .map(|i| {
                if i + 1 == n {
                    b.input(-1, 0)
                } else {
                    b.input(0, 1)
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Digits { digits })
    }

    /// The clear constant `value` as trivial digits (binary, sign applied).
    pub fn constant(b: &mut CircuitBuilder, value: &BigInt) -> Self {
        let sign = if value.is_negative() { -1 } else { 1 };
        let mag = value.abs();
        let digits = (0..mag.bits())
            .map(|i| b.constant(if mag.bit(i) { sign } else { 0 }))
            .collect();
        Digits { digits }
    }

    /// Wraps wires that already are digits: each must have a range within
    /// [-1, 1] and be fresh or constant.
    pub fn from_wires(b: &CircuitBuilder, digits: Vec<Wire>) -> Result<Self, Error> {
        for (i, &w) in digits.iter().enumerate() {
            if !is_digit(b, w)? {
                let r = b.range(w)?;
                return Err(BuildError::NotADigit {
                    node: format!("digit {i}"),
                    lo: r.lo,
                    hi: r.hi,
                    weight: b.quadratic_weight(w)?,
                }
                .into());
            }
        }
        Ok(Digits { digits })
    }

    /// Number of digits (the value lies in `(-2^len, 2^len)`).
    pub fn len(&self) -> usize {
        self.digits.len()
    }

    /// Whether it has no digits.
    pub fn is_empty(&self) -> bool {
        self.digits.is_empty()
    }

    /// The digit wires, least significant first.
    pub fn wires(&self) -> &[Wire] {
        &self.digits
    }

    /// Marks every digit as a circuit output; returns the output indices.
    pub fn output(&self, b: &mut CircuitBuilder) -> Result<Vec<usize>, Error> {
        Ok(self
            .digits
            .iter()
            .map(|&w| b.output(w))
            .collect::<Result<_, _>>()?)
    }

    /// `-self`: free (negates every digit).
    pub fn neg(&self, b: &mut CircuitBuilder) -> Result<Self, Error> {
        let digits = self
            .digits
            .iter()
            .map(|&w| b.neg(w))
            .collect::<Result<_, _>>()?;
        Ok(Digits { digits })
    }

    /// `self * 2^k`: free (prepends trivial zeros).
    pub fn shl(&self, b: &mut CircuitBuilder, k: usize) -> Self {
        let mut digits: Vec<Wire> = (0..k).map(|_| b.constant(0)).collect();
        digits.extend_from_slice(&self.digits);
        Digits { digits }
    }

    /// The digits from position `lo` on, as an integer of their own
    /// (`self = low + high * 2^lo`).
    pub fn split(&self, lo: usize) -> (Digits, Digits) {
        let lo = lo.min(self.len());
        (
            Digits {
                digits: self.digits[..lo].to_vec(),
            },
            Digits {
                digits: self.digits[lo..].to_vec(),
            },
        )
    }

    /// Drops leading digits that are clear zeros.
    pub(crate) fn trimmed(mut self, b: &CircuitBuilder) -> Result<Self, Error> {
        while let Some(&top) = self.digits.last() {
            if b.constant_value(top)? == Some(0) {
                self.digits.pop();
            } else {
                break;
            }
        }
        Ok(self)
    }

    /// The same value on at least `n` positions, the two's-complement way
    /// when the top digit is a sign digit (a fixed sign opposite to the
    /// digit below it, e.g. a top digit in [-1, 0] over bits): `t 2^(m-1) =
    /// -t (2^(m-1) + .. + 2^(n-2)) + t 2^(n-1)` keeps every position in the
    /// sign class of the digits below it (copies of `t`, free). Otherwise
    /// clear zeros are the extension.
    pub(crate) fn extended(&self, b: &mut CircuitBuilder, n: usize) -> Result<Vec<Wire>, Error> {
        let m = self.len();
        let mut out = self.digits.clone();
        if m >= n {
            return Ok(out);
        }
        let sign = |b: &CircuitBuilder, w: Wire| -> Result<i64, Error> {
            let r = b.range(w)?;
            let q = b.params().message_modulus();
            Ok(if b.constant_value(w)?.is_some() {
                0
            } else if r.is_within(-1, 0, q) {
                -1
            } else if r.is_within(0, 1, q) {
                1
            } else {
                0
            })
        };
        let is_sign_digit = m >= 2 && {
            let (top, below) = (sign(b, out[m - 1])?, sign(b, out[m - 2])?);
            top != 0 && top == -below
        };
        if is_sign_digit {
            let t = out[m - 1];
            let nt = b.neg(t)?;
            out[m - 1] = nt;
            out.resize(n - 1, nt);
            out.push(t);
        } else {
            let zero = b.constant(0);
            out.resize(n, zero);
        }
        Ok(out)
    }

    /// The digit at position `i` (a clear zero beyond the top).
    pub(crate) fn digit_or_zero(&self, b: &mut CircuitBuilder, i: usize) -> Wire {
        match self.digits.get(i) {
            Some(&w) => w,
            None => b.constant(0),
        }
    }

    pub(crate) fn from_vec(digits: Vec<Wire>) -> Self {
        Digits { digits }
    }
}

/// Checks that `params` can carry this family: its tables need `pi >= 5`
/// (the transfer table reads [-8, 8]) and its maximum selector, with
/// independent digits, weighs 41.
pub fn check_params(params: &ParameterSet) -> Result<(), Error> {
    if params.pi < 5 || params.budgets.half < 41 {
        return Err(Error::UnsupportedParams {
            params: params.id,
            family: "signed-binary digits",
            reason: format!(
                "it needs pi >= 5 and a budget >= 41; it has pi = {} and budget {}",
                params.pi, params.budgets.half
            ),
        });
    }
    Ok(())
}

/// Whether `w` may stand as a digit: range within [-1, 1], weight <= 1.
pub(crate) fn is_digit(b: &CircuitBuilder, w: Wire) -> Result<bool, Error> {
    let m = b.params().message_modulus();
    Ok(b.range(w)?.is_within(-1, 1, m) && b.quadratic_weight(w)? <= 1)
}

/// The value of clear signed digits, least significant first.
pub fn value_of(digits: &[i64]) -> BigInt {
    crate::crypto::encoding::signed_binary_value(digits)
}
