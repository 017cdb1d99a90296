//! The integer family's operations as data ([`IntOp`]): what each reads,
//! what building it may cost, and how it is built on the signed-binary
//! digits family. [`super::Int`]'s methods (`int.rs`) record them; this
//! file is the one place an integer operation is named and evaluated.

use num_bigint::BigInt;
use num_traits::One;
use serde::{Deserialize, Serialize};

use super::operand::{
    bits_work, fused_operands, int, product_work, products_within, sum_work, width_within, Val,
    ValueId,
};
use crate::bits::convert;
use crate::circuit::CircuitBuilder;
use crate::comparison::Comparison;
use crate::crypto::encoding::{digits_within, within, MAX_PRODUCTS};
use crate::digits::{self, Digits, MulAlgorithm};
use crate::error::Error;

/// An operation of the integer family (`Int`, signed-binary digits).
/// Operands are values made before it; lengths come from the operands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum IntOp {
    /// A clear integer (trivial digits).
    Const(BigInt),
    /// `x + y`.
    Add(ValueId, ValueId),
    /// `x - y`.
    Sub(ValueId, ValueId),
    /// `x * y`, exact.
    Mul(ValueId, ValueId),
    /// `-x`.
    Neg(ValueId),
    /// `x + c`.
    AddConst(ValueId, BigInt),
    /// `x * k` for a clear `k`.
    ScalarMul(ValueId, BigInt),
    /// `x << k`.
    Shl(ValueId, usize),
    /// `max(x, y)`.
    Max(ValueId, ValueId),
    /// `min(x, y)`.
    Min(ValueId, ValueId),
    /// `|x|`.
    Abs(ValueId),
    /// `max(x, 0)`.
    Relu(ValueId),
    /// `x * x`.
    Square(ValueId),
    /// The sign of `x`.
    Signum(ValueId),
    /// `x` rounded to a multiple of `2^i`.
    Round(ValueId, usize),
    /// `x <op> y` as one digit, 1 or 0.
    Compare(ValueId, ValueId, Comparison),
    /// The two's-complement bits of `x` as an integer's digits.
    ToBits(ValueId),
    /// `x` wrapped to `n` bits.
    Wrap(ValueId, usize),
    /// `x + y` wrapped to `n` bits.
    WrappingAdd(ValueId, ValueId, usize),
    /// `x * y` wrapped to `n` bits.
    WrappingMul(ValueId, ValueId, usize),
    /// `floor(x / 2^k)`.
    ShrFloor(ValueId, usize),
    /// `x` on at least `n` digits (zero digits on top).
    Widen(ValueId, usize),
    /// The sum of the values.
    Sum(Vec<ValueId>),
    /// `sum x_i y_i + sum k_j z_j + bias`, exact, in one compression.
    FusedSum {
        /// The encrypted products.
        products: Vec<(ValueId, ValueId)>,
        /// The values with clear factors.
        scaled: Vec<(ValueId, BigInt)>,
        /// A clear constant.
        bias: BigInt,
    },
    /// An integer modulo `2^bits` as a word ([`super::Word::from_int`]).
    ToWord {
        /// The integer.
        value: ValueId,
        /// The word's width.
        bits: usize,
        /// Whether two's complement.
        signed: bool,
    },
}

impl IntOp {
    /// The values it reads, in order.
    pub fn operands(&self) -> Vec<ValueId> {
        use IntOp::*;
        match self {
            Const(_) => Vec::new(),
            Neg(x)
            | AddConst(x, _)
            | ScalarMul(x, _)
            | Shl(x, _)
            | Abs(x)
            | Relu(x)
            | Square(x)
            | Signum(x)
            | Round(x, _)
            | ToBits(x)
            | Wrap(x, _)
            | ShrFloor(x, _)
            | Widen(x, _)
            | ToWord { value: x, .. } => vec![*x],
            Add(x, y)
            | Sub(x, y)
            | Mul(x, y)
            | Max(x, y)
            | Min(x, y)
            | Compare(x, y, _)
            | WrappingAdd(x, y, _)
            | WrappingMul(x, y, _) => vec![*x, *y],
            Sum(xs) => xs.clone(),
            FusedSum {
                products, scaled, ..
            } => fused_operands(products, scaled),
        }
    }

    /// Its own share of [`super::Op::work`] (reading the operands is
    /// counted there): products of lengths for multiplications.
    pub(crate) fn work(&self, len: &dyn Fn(ValueId) -> u64) -> u64 {
        use IntOp::*;
        match self {
            Const(k) => bits_work(k),
            Mul(a, b) | WrappingMul(a, b, _) => product_work(len, *a, *b),
            Square(a) => product_work(len, *a, *a),
            ScalarMul(a, k) => len(*a).saturating_mul(bits_work(k)),
            FusedSum {
                products,
                scaled,
                bias,
            } => sum_work(len, products, scaled, bias),
            Shl(_, k) | Round(_, k) | Wrap(_, k) | ShrFloor(_, k) | WrappingAdd(_, _, k) => {
                *k as u64
            }
            ToWord { bits, .. } => *bits as u64,
            _ => 0,
        }
    }

    /// Builds it on `b` from its operands' values (`args`, in the order of
    /// [`IntOp::operands`]).
    pub(crate) fn apply(&self, b: &mut CircuitBuilder, args: &[&Val]) -> Result<Vec<Val>, Error> {
        let x = || args[0];
        let y = || args[1];
        let one_int = |d: Digits| Ok(vec![Val::Int(d)]);
        match self {
            IntOp::Const(v) => {
                digits_within("a constant", v.bits())?;
                one_int(Digits::constant(b, v))
            }
            IntOp::Add(..) => one_int(digits::add(b, int(x())?, int(y())?)?),
            IntOp::Sub(..) => one_int(digits::sub(b, int(x())?, int(y())?)?),
            IntOp::Mul(..) => {
                let (p, q) = (int(x())?, int(y())?);
                products_within(p.len(), q.len())?;
                one_int(digits::mul(b, p, q, MulAlgorithm::Auto)?)
            }
            IntOp::Neg(_) => one_int(int(x())?.neg(b)?),
            IntOp::AddConst(_, c) => one_int(digits::add_const(b, int(x())?, c)?),
            IntOp::ScalarMul(_, k) => {
                let d = int(x())?;
                digits_within("a scalar product", d.len() as u64 + k.bits())?;
                one_int(digits::scalar_mul(b, d, k)?)
            }
            IntOp::Shl(_, k) => {
                let d = int(x())?;
                digits_within("a shift", (d.len() as u64).saturating_add(*k as u64))?;
                one_int(d.shl(b, *k))
            }
            IntOp::Max(..) => one_int(digits::max(b, int(x())?, int(y())?)?),
            IntOp::Min(..) => one_int(digits::min(b, int(x())?, int(y())?)?),
            IntOp::Abs(_) => one_int(digits::abs(b, int(x())?)?),
            IntOp::Relu(_) => one_int(digits::relu(b, int(x())?)?),
            IntOp::Square(_) => {
                let d = int(x())?;
                products_within(d.len(), d.len())?;
                one_int(digits::square(b, d, MulAlgorithm::Auto)?)
            }
            IntOp::Signum(_) => {
                let w = digits::signum(b, int(x())?)?;
                one_int(Digits::from_wires(b, vec![w])?)
            }
            IntOp::Round(_, i) => {
                let d = int(x())?;
                digits_within("a rounding position", *i as u64)?;
                one_int(digits::round(b, d, *i)?)
            }
            IntOp::Compare(_, _, c) => {
                let w = digits::compare(b, int(x())?, int(y())?, *c)?;
                one_int(Digits::from_wires(b, vec![w])?)
            }
            IntOp::ToBits(_) => {
                let bits = digits::to_bits(b, int(x())?)?;
                one_int(Digits::from_wires(b, bits)?)
            }
            IntOp::Widen(_, n) => {
                digits_within("a widened value", *n as u64)?;
                let d = int(x())?;
                let mut wires = d.wires().to_vec();
                while wires.len() < *n {
                    wires.push(b.constant(0));
                }
                one_int(Digits::from_wires(b, wires)?)
            }
            IntOp::Wrap(_, n) => {
                digits_within("a wrapped value", *n as u64)?;
                one_int(digits::wrap(b, int(x())?, *n)?)
            }
            IntOp::WrappingAdd(_, _, n) => {
                let (p, q) = (int(x())?, int(y())?);
                digits_within("a wrapped value", *n as u64)?;
                if let Some(s) = digits::convert::wrapping_add_bits(b, p, q, *n)? {
                    return one_int(s);
                }
                let (pl, _) = p.split(*n);
                let (ql, _) = q.split(*n);
                let s = digits::add(b, &pl, &ql)?;
                one_int(digits::wrap(b, &s, *n)?)
            }
            IntOp::WrappingMul(_, _, n) => {
                let (p, q) = (int(x())?, int(y())?);
                digits_within("a wrapped value", *n as u64)?;
                let (pl, _) = p.split(*n);
                let (ql, _) = q.split(*n);
                products_within(pl.len(), ql.len())?;
                one_int(digits::mul_wrapping(b, &pl, &ql, *n)?)
            }
            IntOp::ShrFloor(_, k) => {
                let d = int(x())?;
                if *k == 0 {
                    return one_int(d.clone());
                }
                digits_within("a shift", *k as u64)?;
                let half = BigInt::one() << (k - 1);
                let shifted = digits::add_const(b, d, &-half)?;
                let r = digits::round(b, &shifted, *k)?;
                one_int(r.split(*k).1)
            }
            IntOp::Sum(_) => {
                let ds = args
                    .iter()
                    .map(|v| int(v).cloned())
                    .collect::<Result<Vec<_>, _>>()?;
                one_int(digits::sum(b, &ds)?)
            }
            IntOp::FusedSum {
                products,
                scaled,
                bias,
            } => {
                let (pa, sa) = args.split_at(2 * products.len());
                let pairs = pa
                    .chunks(2)
                    .map(|p| Ok((int(p[0])?, int(p[1])?)))
                    .collect::<Result<Vec<_>, Error>>()?;
                let count: u64 = pairs
                    .iter()
                    .map(|(p, q)| p.len() as u64 * q.len() as u64)
                    .sum();
                within(
                    || "a fused sum (digit products)".into(),
                    count,
                    MAX_PRODUCTS,
                )?;
                let scaled = sa
                    .iter()
                    .zip(scaled)
                    .map(|(v, (_, k))| Ok((int(v)?, k)))
                    .collect::<Result<Vec<_>, Error>>()?;
                one_int(digits::dot(b, &pairs, &scaled, bias)?)
            }
            IntOp::ToWord {
                bits: n, signed, ..
            } => {
                let d = int(x())?;
                width_within(*n)?;
                let bits = convert::from_digits(b, d)?;
                Ok(vec![Val::Word(
                    convert::resize(b, &bits, *n, true),
                    *signed,
                )])
            }
        }
    }
}
