//! The word family's operations as data ([`WordOp`]): what each reads,
//! what building it may cost, and how it is built on the two's-complement
//! bits family. [`super::Word`]'s methods (`word.rs`) record them; this
//! file is the one place a word operation is named and evaluated.

use num_bigint::BigInt;
use num_traits::One;
use serde::{Deserialize, Serialize};

use super::operand::{
    bits_work, flag_val, fused_operands, kind_error, product_work, sum_work, width_within, word,
    words, Val, ValueId,
};
use crate::bits::adders::{self, AdderKind};
use crate::bits::gates::{self, Gate};
use crate::bits::mul::{self as bmul, MulKind};
use crate::bits::shift::{self, ShiftKind};
use crate::bits::{self, bitwise, compare, convert, div, Bits, ONE};
use crate::circuit::{CircuitBuilder, Selectors};
use crate::comparison::Comparison;
use crate::crypto::encoding::{within, Shape, MAX_PRODUCTS};
use crate::error::Error;

/// A two-operand word operation with a result of the operands' width,
/// wrapping like Rust's `wrapping_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WordArith {
    /// `x + y`.
    Add,
    /// `x - y`.
    Sub,
    /// `x * y` (the low half of the product).
    Mul,
    /// `x / y` (all ones, or -1 / 1 when signed, for a zero divisor).
    Div,
    /// `x % y` (the dividend for a zero divisor).
    Rem,
    /// `x & y`.
    And,
    /// `x | y`.
    Or,
    /// `x ^ y`.
    Xor,
}

/// A word operation whose second result is Rust's `overflowing_*` flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Overflowing {
    /// `overflowing_add`.
    Add,
    /// `overflowing_sub`.
    Sub,
    /// `overflowing_mul`.
    Mul,
}

/// An operation of the word family (`Word<BITS, SIGNED>`, two's-complement
/// bits, Rust's wrapping semantics). Widths and signedness come from the
/// operands, so a forged list of ops can only describe programs the typed
/// API could build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum WordOp {
    /// A clear word: the low `bits` bits of `value`.
    Const {
        /// Width.
        bits: usize,
        /// Whether two's complement.
        signed: bool,
        /// The value (reduced modulo `2^bits`).
        value: BigInt,
    },
    /// A wrapping two-operand word operation.
    Arith(WordArith, ValueId, ValueId),
    /// `!x`.
    Not(ValueId),
    /// `-x`, wrapping.
    Neg(ValueId),
    /// A shift or rotation by a clear amount (shifts modulo the width).
    Shift(ValueId, ShiftKind, u32),
    /// A shift or rotation by an encrypted unsigned amount, modulo the width.
    ShiftBy(ValueId, ShiftKind, ValueId),
    /// The wrapped result and Rust's overflow flag: two values.
    Overflowing(Overflowing, ValueId, ValueId),
    /// Quotient and remainder: two values.
    DivRem(ValueId, ValueId),
    /// Quotient and whether Rust's `checked_div` is `Some`: two values.
    CheckedDiv(ValueId, ValueId),
    /// `x <op> y` as a boolean.
    Compare(ValueId, ValueId, Comparison),
    /// `max(x, y)`.
    Max(ValueId, ValueId),
    /// `min(x, y)`.
    Min(ValueId, ValueId),
    /// `sum x_i y_i + sum k_j z_j + bias`, wrapping, in one compression.
    FusedSum {
        /// Width.
        bits: usize,
        /// Whether two's complement.
        signed: bool,
        /// The encrypted products.
        products: Vec<(ValueId, ValueId)>,
        /// The values with clear factors.
        scaled: Vec<(ValueId, BigInt)>,
        /// A clear constant.
        bias: BigInt,
    },
    /// `sum_k c_k x^k`, wrapping: a polynomial in one word, as the
    /// program's fusion finds it in chains of sums and products (Horner's
    /// rule, powers). Built from `y = x * x` (a square: about half a
    /// product's bootstraps) by Horner's rule in `y` on coefficients
    /// linear in `x`, `sum_j (c_2j + c_2j+1 x) y^j`: `deg / 2 - 1`
    /// products and one square where Horner's rule in `x` takes `deg - 1`
    /// products.
    Polynomial {
        /// Width.
        bits: usize,
        /// Whether two's complement.
        signed: bool,
        /// The word `x`.
        x: ValueId,
        /// `c_0, c_1, ...` (each taken modulo `2^bits`).
        coefficients: Vec<BigInt>,
    },
    /// `x.count_ones()` as a `u32`.
    CountOnes(ValueId),
    /// `x.leading_zeros()` as a `u32`.
    LeadingZeros(ValueId),
    /// `x.reverse_bits()`.
    ReverseBits(ValueId),
    /// `x.swap_bytes()`.
    SwapBytes(ValueId),
    /// Bit `i` as a boolean.
    Bit(ValueId, usize),
    /// Rust's `as`: truncation or extension by the operand's signedness.
    Cast {
        /// The word.
        value: ValueId,
        /// The new width.
        bits: usize,
        /// The new signedness.
        signed: bool,
    },
    /// A word's exact value as a signed-binary integer
    /// ([`super::Word::to_int`]).
    ToInt(ValueId),
}

impl WordOp {
    /// The values it reads, in order.
    pub fn operands(&self) -> Vec<ValueId> {
        use WordOp::*;
        match self {
            Const { .. } => Vec::new(),
            Not(x)
            | Neg(x)
            | Shift(x, _, _)
            | CountOnes(x)
            | LeadingZeros(x)
            | ReverseBits(x)
            | SwapBytes(x)
            | Bit(x, _)
            | Cast { value: x, .. }
            | Polynomial { x, .. }
            | ToInt(x) => vec![*x],
            Arith(_, x, y)
            | ShiftBy(x, _, y)
            | Overflowing(_, x, y)
            | DivRem(x, y)
            | CheckedDiv(x, y)
            | Compare(x, y, _)
            | Max(x, y)
            | Min(x, y) => vec![*x, *y],
            FusedSum {
                products, scaled, ..
            } => fused_operands(products, scaled),
        }
    }

    /// Its own share of [`super::Op::work`] (reading the operands is
    /// counted there): products of widths for multiplications, divisions
    /// and shifts by an encrypted amount.
    pub(crate) fn work(&self, len: &dyn Fn(ValueId) -> u64) -> u64 {
        use WordOp::*;
        match self {
            Const { value, .. } => bits_work(value),
            DivRem(a, b)
            | CheckedDiv(a, b)
            | Arith(WordArith::Mul | WordArith::Div | WordArith::Rem, a, b)
            | Overflowing(self::Overflowing::Mul, a, b)
            | ShiftBy(a, _, b) => product_work(len, *a, *b),
            FusedSum {
                products,
                scaled,
                bias,
                ..
            } => sum_work(len, products, scaled, bias),
            Polynomial {
                x, coefficients, ..
            } => product_work(len, *x, *x) * (coefficients.len() as u64 / 2 + 1),
            Bit(_, k) => *k as u64,
            Cast { bits, .. } => *bits as u64,
            _ => 0,
        }
    }

    /// Builds it on `b` from its operands' values (`args`, in the order of
    /// [`WordOp::operands`]).
    pub(crate) fn apply(&self, b: &mut CircuitBuilder, args: &[&Val]) -> Result<Vec<Val>, Error> {
        let x = || args[0];
        let y = || args[1];
        let one_int = |d| Ok(vec![Val::Int(d)]);
        match self {
            WordOp::Const {
                bits,
                signed,
                value,
            } => {
                width_within(*bits)?;
                Ok(vec![Val::Word(Bits::constant(b, value, *bits), *signed)])
            }
            WordOp::Arith(a, ..) => {
                let (p, q, signed) = words(x(), y())?;
                let r = match a {
                    WordArith::Add => {
                        let zero = b.constant(0);
                        adders::add(b, p, q, zero, AdderKind::Auto)?.0
                    }
                    WordArith::Sub => adders::sub(b, p, q, AdderKind::Auto)?.0,
                    WordArith::Mul => {
                        let n = p.len();
                        within(
                            || format!("a product of {n} by {n} bits"),
                            (n * n) as u64,
                            MAX_PRODUCTS,
                        )?;
                        bmul::mul(b, p, q, n, false, MulKind::Auto)?
                    }
                    WordArith::Div => div::div_rem(b, p, q, signed)?.0,
                    WordArith::Rem => div::div_rem(b, p, q, signed)?.1,
                    WordArith::And => bitwise::bitwise(b, Gate::And, p, q)?,
                    WordArith::Or => bitwise::bitwise(b, Gate::Or, p, q)?,
                    WordArith::Xor => bitwise::bitwise(b, Gate::Xor, p, q)?,
                };
                Ok(vec![Val::Word(r, signed)])
            }
            WordOp::Not(_) => {
                let (p, signed) = word(x())?;
                Ok(vec![Val::Word(bitwise::not_bits(b, p)?, signed)])
            }
            WordOp::Neg(_) => {
                let (p, signed) = word(x())?;
                Ok(vec![Val::Word(adders::neg(b, p)?, signed)])
            }
            WordOp::Shift(_, kind, amount) => {
                let (p, signed) = word(x())?;
                let k = match kind {
                    ShiftKind::RotateLeft | ShiftKind::RotateRight => *amount as usize,
                    _ => *amount as usize % p.len().max(1),
                };
                Ok(vec![Val::Word(shift::shift_clear(b, p, *kind, k), signed)])
            }
            WordOp::ShiftBy(_, kind, _) => {
                let (p, signed) = word(x())?;
                let (amount, amount_signed) = word(y())?;
                if amount_signed {
                    return Err(kind_error("an unsigned word", y()));
                }
                Ok(vec![Val::Word(shift::shift(b, p, *kind, amount)?, signed)])
            }
            WordOp::Overflowing(kind, ..) => {
                let (p, q, signed) = words(x(), y())?;
                let n = p.len();
                let (r, flag) = match kind {
                    Overflowing::Add => {
                        let zero = b.constant(0);
                        let (s, c, v) =
                            adders::add_overflowing(b, p, q, zero, AdderKind::Auto, signed)?;
                        (s, v.unwrap_or(c))
                    }
                    Overflowing::Sub => {
                        let nq = bitwise::not_bits(b, q)?;
                        let one = b.constant(ONE);
                        let (d, c, v) =
                            adders::add_overflowing(b, p, &nq, one, AdderKind::Auto, signed)?;
                        match v {
                            Some(v) => (d, v),
                            None => (d, gates::not(b, c)?),
                        }
                    }
                    Overflowing::Mul => {
                        within(
                            || format!("a product of {n} by {n} bits"),
                            (n * n) as u64,
                            MAX_PRODUCTS,
                        )?;
                        let full = bmul::mul(b, p, q, 2 * n, signed, MulKind::Auto)?;
                        let (lo, hi) = full.wires().split_at(n);
                        // No overflow: every high bit equals the fill of the low half.
                        let fill = match (signed, lo.last()) {
                            (true, Some(&top)) => top,
                            _ => b.constant(0),
                        };
                        let fills = vec![fill; hi.len()];
                        let mut sel = Selectors::for_bits();
                        let flag = compare::not_equal(b, &mut sel, hi, &fills)?;
                        (Bits::from_vec(lo.to_vec()), flag)
                    }
                };
                Ok(vec![Val::Word(r, signed), flag_val(flag)])
            }
            WordOp::DivRem(..) => {
                let (p, q, signed) = words(x(), y())?;
                let (quot, rem) = div::div_rem(b, p, q, signed)?;
                Ok(vec![Val::Word(quot, signed), Val::Word(rem, signed)])
            }
            WordOp::CheckedDiv(..) => {
                let (p, q, signed) = words(x(), y())?;
                let n = p.len();
                let (quot, _) = div::div_rem(b, p, q, signed)?;
                let zero = div::is_zero(b, q)?;
                let mut sel = Selectors::for_bits();
                let bad = if signed && n > 0 {
                    let min = Bits::constant(b, &(BigInt::one() << (n - 1)), n);
                    let neg_one = Bits::constant(b, &BigInt::from(-1), n);
                    let is_min = compare::compare(b, p, &min, Comparison::Eq, false)?;
                    let is_m1 = compare::compare(b, q, &neg_one, Comparison::Eq, false)?;
                    let both = gates::gate(b, &mut sel, Gate::And, is_min, is_m1)?;
                    gates::gate(b, &mut sel, Gate::Or, zero, both)?
                } else {
                    zero
                };
                let ok = gates::not(b, bad)?;
                Ok(vec![Val::Word(quot, signed), flag_val(ok)])
            }
            WordOp::Compare(_, _, c) => {
                let (p, q, signed) = words(x(), y())?;
                Ok(vec![flag_val(compare::compare(b, p, q, *c, signed)?)])
            }
            WordOp::Max(..) => {
                let (p, q, signed) = words(x(), y())?;
                Ok(vec![Val::Word(compare::max(b, p, q, signed)?, signed)])
            }
            WordOp::Min(..) => {
                let (p, q, signed) = words(x(), y())?;
                Ok(vec![Val::Word(compare::min(b, p, q, signed)?, signed)])
            }
            WordOp::FusedSum {
                bits: n,
                signed,
                products,
                scaled,
                bias,
            } => {
                width_within(*n)?;
                let of_type = |v: &'_ Val| -> Result<(), Error> {
                    let (p, s) = word(v)?;
                    if p.len() != *n || s != *signed {
                        return Err(Error::ShapeMismatch {
                            what: "a term of a fused sum".into(),
                            expected: Shape::Word {
                                bits: *n,
                                signed: *signed,
                            },
                            found: v.shape(),
                        });
                    }
                    Ok(())
                };
                for v in args {
                    of_type(v)?;
                }
                within(
                    || "a fused sum (bit products)".into(),
                    products.len() as u64 * (*n as u64).pow(2),
                    MAX_PRODUCTS,
                )?;
                let (pa, sa) = args.split_at(2 * products.len());
                let pairs = pa
                    .chunks(2)
                    .map(|p| Ok((word(p[0])?.0, word(p[1])?.0)))
                    .collect::<Result<Vec<_>, Error>>()?;
                let scaled = sa
                    .iter()
                    .zip(scaled)
                    .map(|(v, (_, k))| Ok((word(v)?.0, k)))
                    .collect::<Result<Vec<_>, Error>>()?;
                let r = bits::dot::dot(b, &pairs, &scaled, bias, *n, *signed)?;
                Ok(vec![Val::Word(r, *signed)])
            }
            WordOp::Polynomial {
                bits: n,
                signed,
                coefficients,
                ..
            } => {
                let (p, s) = word(x())?;
                if p.len() != *n || s != *signed {
                    return Err(Error::ShapeMismatch {
                        what: "the word of a polynomial".into(),
                        expected: Shape::Word {
                            bits: *n,
                            signed: *signed,
                        },
                        found: x().shape(),
                    });
                }
                within(
                    || "a polynomial (bit products)".into(),
                    (coefficients.len() as u64 / 2 + 1) * (*n as u64).pow(2),
                    MAX_PRODUCTS,
                )?;
                Ok(vec![Val::Word(
                    polynomial(b, p, coefficients, *signed)?,
                    *signed,
                )])
            }
            WordOp::CountOnes(_) => {
                let (p, _) = word(x())?;
                Ok(vec![Val::Word(bitwise::count_ones(b, p, 32)?, false)])
            }
            WordOp::LeadingZeros(_) => {
                let (p, _) = word(x())?;
                Ok(vec![Val::Word(bitwise::leading_zeros(b, p, 32)?, false)])
            }
            WordOp::ReverseBits(_) => {
                let (p, signed) = word(x())?;
                Ok(vec![Val::Word(bitwise::reverse_bits(p), signed)])
            }
            WordOp::SwapBytes(_) => {
                let (p, signed) = word(x())?;
                if !p.len().is_multiple_of(8) {
                    return Err(Error::Config(format!(
                        "swap_bytes needs whole bytes, not {} bits",
                        p.len()
                    )));
                }
                Ok(vec![Val::Word(bitwise::swap_bytes(p), signed)])
            }
            WordOp::Bit(_, i) => {
                let (p, _) = word(x())?;
                let w =
                    p.wires().get(*i).copied().ok_or_else(|| {
                        Error::Config(format!("bit {i} of a {}-bit word", p.len()))
                    })?;
                Ok(vec![flag_val(w)])
            }
            WordOp::Cast {
                bits: n, signed, ..
            } => {
                let (p, from_signed) = word(x())?;
                width_within(*n)?;
                Ok(vec![Val::Word(
                    convert::resize(b, p, *n, from_signed),
                    *signed,
                )])
            }
            WordOp::ToInt(_) => {
                let (p, signed) = word(x())?;
                one_int(convert::to_digits(b, p, signed)?)
            }
        }
    }
}

/// [`WordOp::Polynomial`]: `sum_k c_k x^k` modulo `2^n` by Horner's rule
/// in `y = x * x`, each step `acc * y + c_2j + c_2j+1 x` one fused sum
/// (a step whose `acc` is still clear is a product by a constant).
fn polynomial(
    b: &mut CircuitBuilder,
    x: &Bits,
    coefficients: &[BigInt],
    signed: bool,
) -> Result<Bits, Error> {
    let n = x.len();
    let modulus = BigInt::one() << n;
    let c = |k: usize| -> BigInt {
        coefficients
            .get(k)
            .map_or_else(BigInt::default, |v| ((v % &modulus) + &modulus) % &modulus)
    };
    let top = coefficients.len().saturating_sub(1) / 2;
    let y = (coefficients.len() > 2)
        .then(|| bmul::mul(b, x, x, n, false, MulKind::Auto))
        .transpose()?;
    // The pending step: `acc * y` (acc materialized) or `k * y` (acc the
    // clear k), plus `c_2j + c_2j+1 x`.
    let mut acc: Option<Bits> = None;
    let mut clear = BigInt::default();
    for j in (0..=top).rev() {
        let mut pairs: Vec<(&Bits, &Bits)> = Vec::new();
        let mut scaled: Vec<(&Bits, BigInt)> = Vec::new();
        if j < top {
            let y = y
                .as_ref()
                .ok_or_else(|| Error::Config("polynomial: no square".into()))?;
            match &acc {
                Some(a) => pairs.push((a, y)),
                None => scaled.push((y, clear.clone())),
            }
        }
        scaled.push((x, c(2 * j + 1)));
        scaled.retain(|(_, k)| !num_traits::Zero::is_zero(k));
        let bias = c(2 * j);
        if pairs.is_empty() && scaled.is_empty() {
            acc = None;
            clear = bias;
            continue;
        }
        let refs: Vec<(&Bits, &BigInt)> = scaled.iter().map(|(v, k)| (*v, k)).collect();
        acc = Some(bits::dot::dot(b, &pairs, &refs, &bias, n, signed)?);
    }
    Ok(match acc {
        Some(a) => a,
        None => Bits::constant(b, &clear, n),
    })
}
