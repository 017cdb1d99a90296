//! How values become digits: the shape of a program's values, the
//! signed-binary, two's-complement and word encodings of integers, their
//! clear digits (for the clear backend) and the value of digits, and
//! [`Encrypted`] values (ciphertexts with their shape).

use std::fmt;

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use serde::{Deserialize, Serialize};

use crate::crypto::keys::{signed_digit, Ciphertext};
use crate::crypto::params::ParameterSet;
use crate::error::Error;

/// What one program input or output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Shape {
    /// A signed-binary integer of this many digits (digits family).
    Int {
        /// Digits, one ciphertext each.
        digits: usize,
    },
    /// A signed integer of the digits family entered in two's complement
    /// on this many bits: the low digits are bits in {0, 1}, the top one is
    /// in {-1, 0} (weight `-2^(bits-1)`), the values of `i{bits}` (what
    /// tfhe-rs's `FheInt` holds). Operations read these narrower ranges and
    /// skip the conversions signed-binary digits need.
    TwosInt {
        /// Bits, one ciphertext each.
        bits: usize,
    },
    /// A fixed-width two's-complement (or unsigned) integer of this many
    /// bits (bits family); a boolean is one unsigned bit.
    Word {
        /// Bits, one ciphertext each.
        bits: usize,
        /// Whether two's complement (else unsigned).
        signed: bool,
    },
}

impl Shape {
    /// Ciphertexts it takes.
    pub fn len(&self) -> usize {
        match *self {
            Shape::Int { digits } => digits,
            Shape::TwosInt { bits } | Shape::Word { bits, .. } => bits,
        }
    }

    /// Whether it takes no ciphertext.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Shape::Int { digits } => write!(f, "an integer of {digits} digits"),
            Shape::TwosInt { bits } => {
                write!(f, "an integer of {bits} two's-complement digits")
            }
            Shape::Word { bits, signed } => {
                write!(
                    f,
                    "{} {bits}-bit word",
                    if signed { "a signed" } else { "an unsigned" }
                )
            }
        }
    }
}

/// The most digits (or bits) one value may have: larger requests are
/// refused with [`Error::TooLarge`] before they are built.
pub const MAX_DIGITS: usize = 1 << 16;

/// The most digit (or bit) products one multiplication may build.
pub const MAX_PRODUCTS: u64 = 1 << 24;

/// Refuses `size` above `limit` for `what`.
pub fn within(what: impl FnOnce() -> String, size: u64, limit: u64) -> Result<(), Error> {
    if size > limit {
        return Err(Error::TooLarge {
            what: what(),
            size,
            limit,
        });
    }
    Ok(())
}

/// Checks that `n` digits of `what` are at most [`MAX_DIGITS`].
pub fn digits_within(what: &str, n: u64) -> Result<(), Error> {
    within(|| format!("{what} (digits)"), n, MAX_DIGITS as u64)
}

/// An encrypted value: its ciphertexts and what they hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Encrypted {
    pub(crate) shape: Shape,
    pub(crate) cts: Vec<Ciphertext>,
}

impl Encrypted {
    /// Wraps ciphertexts as a value of `shape` (their count must match).
    pub fn new(shape: Shape, cts: Vec<Ciphertext>) -> Result<Self, Error> {
        if cts.len() != shape.len() {
            return Err(Error::DoesNotFit {
                value: format!("{} ciphertexts", cts.len()),
                target: shape.to_string(),
            });
        }
        Ok(Encrypted { shape, cts })
    }

    /// What the ciphertexts hold.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The ciphertexts, least significant first.
    pub fn ciphertexts(&self) -> &[Ciphertext] {
        &self.cts
    }
}

/// The binary digits of `value` (sign applied to each), `n` of them.
/// The digits a key encrypts for `value` as a `shape`: an integer's
/// signed-binary or two's-complement digits, a word's bits as 0 or 2 (the
/// bits family's encoding).
pub(crate) fn value_digits(shape: Shape, value: &BigInt) -> Result<Vec<i64>, Error> {
    match shape {
        Shape::Int { digits } => signed_binary(value, digits),
        Shape::TwosInt { bits } => twos_digits(value, bits),
        Shape::Word { bits, signed } => Ok(word_bits(value, bits, signed)?
            .into_iter()
            .map(|b| 2 * b as i64)
            .collect()),
    }
}

pub(crate) fn signed_binary(value: &BigInt, n: usize) -> Result<Vec<i64>, Error> {
    digits_within("an integer", n as u64)?;
    let mag = value.abs();
    if mag.bits() > n as u64 {
        return Err(Error::DoesNotFit {
            value: value.to_string(),
            target: format!("{n} signed-binary digits"),
        });
    }
    let sign = if value.is_negative() { -1 } else { 1 };
    Ok((0..n as u64)
        .map(|i| if mag.bit(i) { sign } else { 0 })
        .collect())
}

/// The digits of `value` in `n`-bit two's complement: bits, the top one
/// negated (`-1` for a negative value), refusing values outside
/// `[-2^(n-1), 2^(n-1))`.
pub(crate) fn twos_digits(value: &BigInt, n: usize) -> Result<Vec<i64>, Error> {
    if n == 0 && value.is_zero() {
        return Ok(Vec::new());
    }
    let bits = word_bits(value, n, true).map_err(|_| Error::DoesNotFit {
        value: value.to_string(),
        target: Shape::TwosInt { bits: n }.to_string(),
    })?;
    Ok(bits
        .iter()
        .enumerate()
        .map(|(i, &bit)| match (bit, i + 1 == n) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => -1,
        })
        .collect())
}

/// The bits of `value` as an `n`-bit word, refusing values out of range.
pub(crate) fn word_bits(value: &BigInt, n: usize, signed: bool) -> Result<Vec<bool>, Error> {
    digits_within("a word", n as u64)?;
    let (lo, hi) = if signed {
        let half = if n == 0 {
            BigInt::zero()
        } else {
            BigInt::one() << (n - 1)
        };
        (-half.clone(), half - 1)
    } else {
        (BigInt::zero(), (BigInt::one() << n) - 1)
    };
    if *value < lo || *value > hi {
        return Err(Error::DoesNotFit {
            value: value.to_string(),
            target: Shape::Word { bits: n, signed }.to_string(),
        });
    }
    let modulus = BigInt::one() << n;
    let v = ((value % &modulus) + &modulus) % &modulus;
    Ok((0..n as u64).map(|i| v.bit(i)).collect())
}

/// The clear digits (in `Z_{2^pi}`) of `value` on `n` digits, for the clear
/// backend.
pub fn clear_digits(
    params: &ParameterSet,
    value: impl Into<BigInt>,
    n: usize,
) -> Result<Vec<u64>, Error> {
    Ok(residues(params, signed_binary(&value.into(), n)?))
}

/// Signed digits as residues in `Z_{2^pi}`.
fn residues(params: &ParameterSet, digits: Vec<i64>) -> Vec<u64> {
    let m = params.message_modulus() as i64;
    digits.into_iter().map(|d| d.rem_euclid(m) as u64).collect()
}

/// The clear digits (in `Z_{2^pi}`) of `value` in `n`-bit two's
/// complement, for the clear backend (an input made by
/// `hearth::Program::input_twos`).
pub fn clear_digits_twos(
    params: &ParameterSet,
    value: impl Into<BigInt>,
    n: usize,
) -> Result<Vec<u64>, Error> {
    Ok(residues(params, twos_digits(&value.into(), n)?))
}

/// The value of clear digits (in `Z_{2^pi}`).
pub fn clear_value(params: &ParameterSet, digits: &[u64]) -> BigInt {
    let signed: Vec<i64> = digits.iter().map(|&d| signed_digit(params, d)).collect();
    signed_binary_value(&signed)
}

/// The clear bits (0 or 2) of `value` as an `n`-bit word, for the clear
/// backend.
pub fn clear_word(value: impl Into<BigInt>, n: usize, signed: bool) -> Result<Vec<u64>, Error> {
    Ok(word_bits(&value.into(), n, signed)?
        .into_iter()
        .map(|b| 2 * b as u64)
        .collect())
}

/// The value of a clear word's bits (each 0 or 2).
pub fn clear_word_value(bits: &[u64], signed: bool) -> Result<BigInt, Error> {
    let bools = bits
        .iter()
        .map(|&d| match d {
            0 => Ok(false),
            2 => Ok(true),
            v => Err(Error::DoesNotFit {
                value: v.to_string(),
                target: "a bit (0 or 2)".into(),
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(word_value(&bools, signed))
}

/// Rust integers that encrypt as words: their width and signedness.
pub trait Plain: Copy + Into<BigInt> + TryFrom<BigInt> {
    /// Width in bits.
    const BITS: usize;
    /// Whether two's complement.
    const SIGNED: bool;
}

macro_rules! plain {
    ($($t:ty: $bits:expr, $signed:expr;)*) => {$(
        impl Plain for $t {
            const BITS: usize = $bits;
            const SIGNED: bool = $signed;
        }
    )*};
}

plain! {
    u8: 8, false; u16: 16, false; u32: 32, false; u64: 64, false; u128: 128, false;
    i8: 8, true; i16: 16, true; i32: 32, true; i64: 64, true; i128: 128, true;
}

/// The value of signed-binary digits (least significant first):
/// `sum d_i 2^i`.
pub fn signed_binary_value(digits: &[i64]) -> BigInt {
    digits
        .iter()
        .rev()
        .fold(BigInt::zero(), |acc, &d| (acc << 1u32) + BigInt::from(d))
}

/// The value of an `n`-bit word's bits (least significant first), read as
/// two's complement when `signed`.
pub fn word_value(bits: &[bool], signed: bool) -> BigInt {
    let mut v = bits
        .iter()
        .rev()
        .fold(BigInt::zero(), |acc, &bit| (acc << 1u32) + u32::from(bit));
    if signed && bits.last() == Some(&true) {
        v -= BigInt::one() << bits.len();
    }
    v
}
