//! A program's operations as data: every typed operation of [`super::Int`],
//! [`super::Word`] and [`super::Bool`] is one [`Op`] on the values made
//! before it ([`ValueId`]s), and `apply` builds it on the circuit
//! builder. The typed values only name the op; a program records the ops
//! it applied, so it can be written to a file and built again, every
//! check running again, by replaying them ([`super::program_file`]).
//!
//! A circuit alone could not be checked that way: its algorithms narrow
//! ranges by facts interval arithmetic cannot see
//! ([`CircuitBuilder::assume_range`]), which a forged circuit could
//! misstate. Ops are built by the library's own algorithms, so a replayed
//! program is valid by construction, or refused with a typed error.

use num_bigint::BigInt;
use num_traits::{One, Zero};
use serde::{Deserialize, Serialize};

use crate::bits::adders::{self, AdderKind};
use crate::bits::gates::{self, Gate};
use crate::bits::mul::{self as bmul, MulKind};
use crate::bits::shift::{self, ShiftKind};
use crate::bits::{self, bitwise, compare, convert, div, Bits, ONE};
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::comparison::Comparison;
use crate::crypto::encoding::{digits_within, within, Shape, MAX_DIGITS, MAX_PRODUCTS};
use crate::digits::{self, Digits, MulAlgorithm};
use crate::error::Error;

/// A value of a program: the index of the op result that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ValueId(pub u32);

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

/// One typed operation of a program. Operands are values made before it;
/// widths and signedness of words come from the operands, so a forged
/// list of ops can only describe programs the typed API could build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Op {
    /// An encrypted input of this shape.
    Input(Shape),
    /// A clear signed-binary integer (trivial digits).
    IntConst(BigInt),
    /// A clear word: the low `bits` bits of `value`.
    WordConst {
        /// Width.
        bits: usize,
        /// Whether two's complement.
        signed: bool,
        /// The value (reduced modulo `2^bits`).
        value: BigInt,
    },
    /// Plans the ops after it for this many threads
    /// ([`super::Program::set_threads`]).
    PlanThreads(usize),

    /// `x + y`.
    IntAdd(ValueId, ValueId),
    /// `x - y`.
    IntSub(ValueId, ValueId),
    /// `x * y`, exact.
    IntMul(ValueId, ValueId),
    /// `-x`.
    IntNeg(ValueId),
    /// `x + c`.
    IntAddConst(ValueId, BigInt),
    /// `x * k` for a clear `k`.
    IntScalarMul(ValueId, BigInt),
    /// `x << k`.
    IntShl(ValueId, usize),
    /// `max(x, y)`.
    IntMax(ValueId, ValueId),
    /// `min(x, y)`.
    IntMin(ValueId, ValueId),
    /// `|x|`.
    IntAbs(ValueId),
    /// `max(x, 0)`.
    IntRelu(ValueId),
    /// `x * x`.
    IntSquare(ValueId),
    /// The sign of `x`.
    IntSignum(ValueId),
    /// `x` rounded to a multiple of `2^i`.
    IntRound(ValueId, usize),
    /// `x <op> y` as one digit, 1 or 0.
    IntCompare(ValueId, ValueId, Comparison),
    /// The two's-complement bits of `x` as an integer's digits.
    IntToBits(ValueId),
    /// `x` wrapped to `n` bits.
    IntWrap(ValueId, usize),
    /// `x + y` wrapped to `n` bits.
    IntWrappingAdd(ValueId, ValueId, usize),
    /// `x * y` wrapped to `n` bits.
    IntWrappingMul(ValueId, ValueId, usize),
    /// `floor(x / 2^k)`.
    IntShrFloor(ValueId, usize),
    /// `x` on at least `n` digits (zero digits on top).
    IntWiden(ValueId, usize),
    /// The sum of the values.
    IntSum(Vec<ValueId>),
    /// `sum x_i y_i + sum k_j z_j + bias`, exact, in one compression.
    IntFusedSum {
        /// The encrypted products.
        products: Vec<(ValueId, ValueId)>,
        /// The values with clear factors.
        scaled: Vec<(ValueId, BigInt)>,
        /// A clear constant.
        bias: BigInt,
    },

    /// A wrapping two-operand word operation.
    WordArith(WordArith, ValueId, ValueId),
    /// `!x`.
    WordNot(ValueId),
    /// `-x`, wrapping.
    WordNeg(ValueId),
    /// A shift or rotation by a clear amount (shifts modulo the width).
    WordShift(ValueId, ShiftKind, u32),
    /// A shift or rotation by an encrypted unsigned amount, modulo the width.
    WordShiftBy(ValueId, ShiftKind, ValueId),
    /// The wrapped result and Rust's overflow flag: two values.
    WordOverflowing(Overflowing, ValueId, ValueId),
    /// Quotient and remainder: two values.
    WordDivRem(ValueId, ValueId),
    /// Quotient and whether Rust's `checked_div` is `Some`: two values.
    WordCheckedDiv(ValueId, ValueId),
    /// `x <op> y` as a boolean.
    WordCompare(ValueId, ValueId, Comparison),
    /// `max(x, y)`.
    WordMax(ValueId, ValueId),
    /// `min(x, y)`.
    WordMin(ValueId, ValueId),
    /// `sum x_i y_i + sum k_j z_j + bias`, wrapping, in one compression.
    WordFusedSum {
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
    /// `x.count_ones()` as a `u32`.
    WordCountOnes(ValueId),
    /// `x.leading_zeros()` as a `u32`.
    WordLeadingZeros(ValueId),
    /// `x.reverse_bits()`.
    WordReverseBits(ValueId),
    /// `x.swap_bytes()`.
    WordSwapBytes(ValueId),
    /// Bit `i` as a boolean.
    WordBit(ValueId, usize),
    /// Rust's `as`: truncation or extension by the operand's signedness.
    WordCast {
        /// The word.
        value: ValueId,
        /// The new width.
        bits: usize,
        /// The new signedness.
        signed: bool,
    },
    /// A word's exact value as a signed-binary integer.
    WordToInt(ValueId),
    /// An integer modulo `2^bits` as a word.
    IntToWord {
        /// The integer.
        value: ValueId,
        /// The word's width.
        bits: usize,
        /// Whether two's complement.
        signed: bool,
    },
    /// A gate on two booleans.
    BoolGate(Gate, ValueId, ValueId),
    /// `!b`.
    BoolNot(ValueId),
    /// Per bit, `if c { x } else { y }`.
    Select(ValueId, ValueId, ValueId),
    /// A boolean as an unsigned word of this width (0 or 1).
    BoolToWord(ValueId, usize),
    /// Built by code outside the library on the circuit builder
    /// ([`super::Word::from_circuit`]): a program holding one cannot be
    /// written to a file.
    Custom,
}

/// A value on the builder: what an op reads and makes.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// Signed-binary digits.
    Int(Digits),
    /// A word's bits (a boolean is one unsigned bit).
    Word(Bits, bool),
}

impl Val {
    /// Its shape (an integer's digits counted; two's-complement inputs
    /// become integers once made).
    pub(crate) fn shape(&self) -> Shape {
        match self {
            Val::Int(d) => Shape::Int { digits: d.len() },
            Val::Word(b, signed) => Shape::Word {
                bits: b.len(),
                signed: *signed,
            },
        }
    }

    /// Its wires, least significant first.
    pub(crate) fn wires(&self) -> &[Wire] {
        match self {
            Val::Int(d) => d.wires(),
            Val::Word(b, _) => b.wires(),
        }
    }
}

impl Op {
    /// Whether it makes signed-binary integers, and whether it makes
    /// words: the families whose parameters it needs.
    pub(crate) fn families(&self) -> (bool, bool) {
        use Op::*;
        match self {
            Input(Shape::Word { .. }) | WordConst { .. } => (false, true),
            Input(_) | IntConst(_) | WordToInt(_) => (true, false),
            PlanThreads(_) | Custom => (false, false),
            IntAdd(..)
            | IntSub(..)
            | IntMul(..)
            | IntNeg(_)
            | IntAddConst(..)
            | IntScalarMul(..)
            | IntShl(..)
            | IntMax(..)
            | IntMin(..)
            | IntAbs(_)
            | IntRelu(_)
            | IntSquare(_)
            | IntSignum(_)
            | IntRound(..)
            | IntCompare(..)
            | IntToBits(_)
            | IntWrap(..)
            | IntWrappingAdd(..)
            | IntWrappingMul(..)
            | IntShrFloor(..)
            | IntWiden(..)
            | IntSum(_)
            | IntFusedSum { .. } => (true, false),
            _ => (false, true),
        }
    }

    /// A bound on the digit (or bit) operations building it takes, from
    /// its operands' lengths (`len`): products of lengths for
    /// multiplications and divisions, sums otherwise. Program files bound
    /// the total before building ([`super::program_file`]).
    pub(crate) fn work(&self, len: impl Fn(ValueId) -> u64) -> u64 {
        use Op::*;
        let bits = |k: &BigInt| k.bits().max(1);
        // The square of the longer operand: some algorithms pad the
        // shorter one (a 21 764 x 4-digit product needs gigabytes).
        let mul = |a: &ValueId, b: &ValueId| {
            let n = len(*a).max(len(*b));
            n.saturating_mul(n)
        };
        let fused =
            |products: &[(ValueId, ValueId)], scaled: &[(ValueId, BigInt)], bias: &BigInt| {
                let p = products
                    .iter()
                    .fold(0u64, |t, (a, b)| t.saturating_add(mul(a, b)));
                scaled
                    .iter()
                    .fold(p, |t, (a, k)| {
                        t.saturating_add(len(*a).saturating_mul(bits(k)))
                    })
                    .saturating_add(bits(bias))
            };
        let own = match self {
            Input(shape) => shape.len() as u64,
            IntConst(k) | WordConst { value: k, .. } => bits(k),
            IntMul(a, b) | IntWrappingMul(a, b, _) | WordDivRem(a, b) | WordCheckedDiv(a, b) => {
                mul(a, b)
            }
            WordArith(self::WordArith::Mul | self::WordArith::Div | self::WordArith::Rem, a, b)
            | WordOverflowing(Overflowing::Mul, a, b)
            | WordShiftBy(a, _, b) => mul(a, b),
            IntSquare(a) => mul(a, a),
            IntScalarMul(a, k) => len(*a).saturating_mul(bits(k)),
            IntFusedSum {
                products,
                scaled,
                bias,
            }
            | WordFusedSum {
                products,
                scaled,
                bias,
                ..
            } => fused(products, scaled, bias),
            IntShl(_, k)
            | IntRound(_, k)
            | IntWrap(_, k)
            | IntShrFloor(_, k)
            | BoolToWord(_, k) => *k as u64,
            IntWrappingAdd(_, _, k) | WordBit(_, k) => *k as u64,
            WordCast { bits, .. } | IntToWord { bits, .. } => *bits as u64,
            _ => 0,
        };
        self.operands()
            .iter()
            .fold(own, |t, &x| t.saturating_add(len(x)))
            .saturating_add(1)
    }

    /// The values it reads, in order.
    pub fn operands(&self) -> Vec<ValueId> {
        use Op::*;
        match self {
            Input(_) | IntConst(_) | WordConst { .. } | PlanThreads(_) | Custom => Vec::new(),
            IntNeg(x)
            | IntAddConst(x, _)
            | IntScalarMul(x, _)
            | IntShl(x, _)
            | IntAbs(x)
            | IntRelu(x)
            | IntSquare(x)
            | IntSignum(x)
            | IntRound(x, _)
            | IntToBits(x)
            | IntWrap(x, _)
            | IntShrFloor(x, _)
            | IntWiden(x, _)
            | WordNot(x)
            | WordNeg(x)
            | WordShift(x, _, _)
            | WordCountOnes(x)
            | WordLeadingZeros(x)
            | WordReverseBits(x)
            | WordSwapBytes(x)
            | WordBit(x, _)
            | WordCast { value: x, .. }
            | WordToInt(x)
            | IntToWord { value: x, .. }
            | BoolNot(x)
            | BoolToWord(x, _) => vec![*x],
            IntAdd(x, y)
            | IntSub(x, y)
            | IntMul(x, y)
            | IntMax(x, y)
            | IntMin(x, y)
            | IntCompare(x, y, _)
            | IntWrappingAdd(x, y, _)
            | IntWrappingMul(x, y, _)
            | WordArith(_, x, y)
            | WordShiftBy(x, _, y)
            | WordOverflowing(_, x, y)
            | WordDivRem(x, y)
            | WordCheckedDiv(x, y)
            | WordCompare(x, y, _)
            | WordMax(x, y)
            | WordMin(x, y)
            | BoolGate(_, x, y) => vec![*x, *y],
            Select(c, x, y) => vec![*c, *x, *y],
            IntSum(xs) => xs.clone(),
            IntFusedSum {
                products, scaled, ..
            }
            | WordFusedSum {
                products, scaled, ..
            } => products
                .iter()
                .flat_map(|&(x, y)| [x, y])
                .chain(scaled.iter().map(|(x, _)| *x))
                .collect(),
        }
    }
}

/// The digits of an integer operand, or a typed error for a word.
fn int(v: &Val) -> Result<&Digits, Error> {
    match v {
        Val::Int(d) => Ok(d),
        Val::Word(..) => Err(kind_error("an integer", v)),
    }
}

/// The bits and signedness of a word operand, or a typed error.
fn word(v: &Val) -> Result<(&Bits, bool), Error> {
    match v {
        Val::Word(b, s) => Ok((b, *s)),
        Val::Int(_) => Err(kind_error("a word", v)),
    }
}

/// The bit of a boolean operand (a 1-bit unsigned word).
fn boolean(v: &Val) -> Result<Wire, Error> {
    match v {
        Val::Word(b, false) if b.len() == 1 => Ok(b.wires()[0]),
        _ => Err(kind_error("a boolean", v)),
    }
}

fn kind_error(expected: &str, found: &Val) -> Error {
    Error::DoesNotFit {
        value: found.shape().to_string(),
        target: format!("an operand that must be {expected}"),
    }
}

/// Two words of one type.
fn words<'a>(x: &'a Val, y: &'a Val) -> Result<(&'a Bits, &'a Bits, bool), Error> {
    let (a, s) = word(x)?;
    let (b, t) = word(y)?;
    if a.len() != b.len() || s != t {
        return Err(Error::ShapeMismatch {
            what: "the second operand".into(),
            expected: x.shape(),
            found: y.shape(),
        });
    }
    Ok((a, b, s))
}

fn products_within(n: usize, m: usize) -> Result<(), Error> {
    within(
        || format!("a product of {n} by {m} digits (digit products)"),
        n as u64 * m as u64,
        MAX_PRODUCTS,
    )
}

fn width_within(n: usize) -> Result<(), Error> {
    within(|| "a word (bits)".into(), n as u64, MAX_DIGITS as u64)
}

/// Builds `op` on `b` from its operands' values (`args`, in the order of
/// [`Op::operands`]): its results, or a typed error for operands of the
/// wrong kind or size, or anything the algorithms refuse.
pub(crate) fn apply(b: &mut CircuitBuilder, op: &Op, args: &[&Val]) -> Result<Vec<Val>, Error> {
    use Op::*;
    let x = || args[0];
    let y = || args[1];
    let one_int = |d: Digits| Ok(vec![Val::Int(d)]);
    match op {
        Input(shape) => match *shape {
            Shape::Int { digits } => {
                digits_within("an input", digits as u64)?;
                one_int(Digits::input(b, digits)?)
            }
            Shape::TwosInt { bits } => {
                digits_within("an input", bits as u64)?;
                one_int(Digits::input_twos(b, bits)?)
            }
            Shape::Word { bits, signed } => {
                width_within(bits)?;
                Ok(vec![Val::Word(Bits::input(b, bits)?, signed)])
            }
        },
        IntConst(v) => {
            digits_within("a constant", v.bits())?;
            one_int(Digits::constant(b, v))
        }
        WordConst {
            bits,
            signed,
            value,
        } => {
            width_within(*bits)?;
            Ok(vec![Val::Word(Bits::constant(b, value, *bits), *signed)])
        }
        PlanThreads(t) => {
            b.set_threads(*t);
            Ok(Vec::new())
        }
        IntAdd(..) => one_int(digits::add(b, int(x())?, int(y())?)?),
        IntSub(..) => one_int(digits::sub(b, int(x())?, int(y())?)?),
        IntMul(..) => {
            let (p, q) = (int(x())?, int(y())?);
            products_within(p.len(), q.len())?;
            one_int(digits::mul(b, p, q, MulAlgorithm::Auto)?)
        }
        IntNeg(_) => one_int(int(x())?.neg(b)?),
        IntAddConst(_, c) => one_int(digits::add_const(b, int(x())?, c)?),
        IntScalarMul(_, k) => {
            let d = int(x())?;
            digits_within("a scalar product", d.len() as u64 + k.bits())?;
            one_int(digits::scalar_mul(b, d, k)?)
        }
        IntShl(_, k) => {
            let d = int(x())?;
            digits_within("a shift", (d.len() as u64).saturating_add(*k as u64))?;
            one_int(d.shl(b, *k))
        }
        IntMax(..) => one_int(digits::max(b, int(x())?, int(y())?)?),
        IntMin(..) => one_int(digits::min(b, int(x())?, int(y())?)?),
        IntAbs(_) => one_int(digits::abs(b, int(x())?)?),
        IntRelu(_) => one_int(digits::relu(b, int(x())?)?),
        IntSquare(_) => {
            let d = int(x())?;
            products_within(d.len(), d.len())?;
            one_int(digits::square(b, d, MulAlgorithm::Auto)?)
        }
        IntSignum(_) => {
            let w = digits::signum(b, int(x())?)?;
            one_int(Digits::from_wires(b, vec![w])?)
        }
        IntRound(_, i) => {
            let d = int(x())?;
            digits_within("a rounding position", *i as u64)?;
            one_int(digits::round(b, d, *i)?)
        }
        IntCompare(_, _, c) => {
            let w = digits::compare(b, int(x())?, int(y())?, *c)?;
            one_int(Digits::from_wires(b, vec![w])?)
        }
        IntToBits(_) => {
            let bits = digits::to_bits(b, int(x())?)?;
            one_int(Digits::from_wires(b, bits)?)
        }
        IntWiden(_, n) => {
            digits_within("a widened value", *n as u64)?;
            let d = int(x())?;
            let mut wires = d.wires().to_vec();
            while wires.len() < *n {
                wires.push(b.constant(0));
            }
            one_int(Digits::from_wires(b, wires)?)
        }
        IntWrap(_, n) => {
            digits_within("a wrapped value", *n as u64)?;
            one_int(digits::wrap(b, int(x())?, *n)?)
        }
        IntWrappingAdd(_, _, n) => {
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
        IntWrappingMul(_, _, n) => {
            let (p, q) = (int(x())?, int(y())?);
            digits_within("a wrapped value", *n as u64)?;
            let (pl, _) = p.split(*n);
            let (ql, _) = q.split(*n);
            products_within(pl.len(), ql.len())?;
            one_int(digits::mul_wrapping(b, &pl, &ql, *n)?)
        }
        IntShrFloor(_, k) => {
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
        IntSum(_) => {
            let ds = args
                .iter()
                .map(|v| int(v).cloned())
                .collect::<Result<Vec<_>, _>>()?;
            one_int(digits::sum(b, &ds)?)
        }
        IntFusedSum {
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
        WordArith(a, ..) => {
            let (p, q, signed) = words(x(), y())?;
            let r = match a {
                self::WordArith::Add => {
                    let zero = b.constant(0);
                    adders::add(b, p, q, zero, AdderKind::Auto)?.0
                }
                self::WordArith::Sub => adders::sub(b, p, q, AdderKind::Auto)?.0,
                self::WordArith::Mul => {
                    let n = p.len();
                    within(
                        || format!("a product of {n} by {n} bits"),
                        (n * n) as u64,
                        MAX_PRODUCTS,
                    )?;
                    bmul::mul(b, p, q, n, false, MulKind::Auto)?
                }
                self::WordArith::Div => div::div_rem(b, p, q, signed)?.0,
                self::WordArith::Rem => div::div_rem(b, p, q, signed)?.1,
                self::WordArith::And => bitwise::bitwise(b, Gate::And, p, q)?,
                self::WordArith::Or => bitwise::bitwise(b, Gate::Or, p, q)?,
                self::WordArith::Xor => bitwise::bitwise(b, Gate::Xor, p, q)?,
            };
            Ok(vec![Val::Word(r, signed)])
        }
        WordNot(_) => {
            let (p, signed) = word(x())?;
            Ok(vec![Val::Word(bitwise::not_bits(b, p)?, signed)])
        }
        WordNeg(_) => {
            let (p, signed) = word(x())?;
            let zero = Bits::constant(b, &BigInt::zero(), p.len());
            let r = adders::sub(b, &zero, p, AdderKind::Auto)?.0;
            Ok(vec![Val::Word(r, signed)])
        }
        WordShift(_, kind, amount) => {
            let (p, signed) = word(x())?;
            let k = match kind {
                ShiftKind::RotateLeft | ShiftKind::RotateRight => *amount as usize,
                _ => *amount as usize % p.len().max(1),
            };
            Ok(vec![Val::Word(shift::shift_clear(b, p, *kind, k), signed)])
        }
        WordShiftBy(_, kind, _) => {
            let (p, signed) = word(x())?;
            let (amount, amount_signed) = word(y())?;
            if amount_signed {
                return Err(kind_error("an unsigned word", y()));
            }
            Ok(vec![Val::Word(shift::shift(b, p, *kind, amount)?, signed)])
        }
        WordOverflowing(kind, ..) => {
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
        WordDivRem(..) => {
            let (p, q, signed) = words(x(), y())?;
            let (quot, rem) = div::div_rem(b, p, q, signed)?;
            Ok(vec![Val::Word(quot, signed), Val::Word(rem, signed)])
        }
        WordCheckedDiv(..) => {
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
        WordCompare(_, _, c) => {
            let (p, q, signed) = words(x(), y())?;
            Ok(vec![flag_val(compare::compare(b, p, q, *c, signed)?)])
        }
        WordMax(..) => {
            let (p, q, signed) = words(x(), y())?;
            Ok(vec![Val::Word(compare::max(b, p, q, signed)?, signed)])
        }
        WordMin(..) => {
            let (p, q, signed) = words(x(), y())?;
            Ok(vec![Val::Word(compare::min(b, p, q, signed)?, signed)])
        }
        WordFusedSum {
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
        WordCountOnes(_) => {
            let (p, _) = word(x())?;
            Ok(vec![Val::Word(bitwise::count_ones(b, p, 32)?, false)])
        }
        WordLeadingZeros(_) => {
            let (p, _) = word(x())?;
            Ok(vec![Val::Word(bitwise::leading_zeros(b, p, 32)?, false)])
        }
        WordReverseBits(_) => {
            let (p, signed) = word(x())?;
            Ok(vec![Val::Word(bitwise::reverse_bits(p), signed)])
        }
        WordSwapBytes(_) => {
            let (p, signed) = word(x())?;
            if !p.len().is_multiple_of(8) {
                return Err(Error::Config(format!(
                    "swap_bytes needs whole bytes, not {} bits",
                    p.len()
                )));
            }
            Ok(vec![Val::Word(bitwise::swap_bytes(p), signed)])
        }
        WordBit(_, i) => {
            let (p, _) = word(x())?;
            let w = p
                .wires()
                .get(*i)
                .copied()
                .ok_or_else(|| Error::Config(format!("bit {i} of a {}-bit word", p.len())))?;
            Ok(vec![flag_val(w)])
        }
        WordCast {
            bits: n, signed, ..
        } => {
            let (p, from_signed) = word(x())?;
            width_within(*n)?;
            Ok(vec![Val::Word(
                convert::resize(b, p, *n, from_signed),
                *signed,
            )])
        }
        WordToInt(_) => {
            let (p, signed) = word(x())?;
            one_int(convert::to_digits(b, p, signed)?)
        }
        IntToWord {
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
        BoolGate(g, ..) => {
            let (p, q) = (boolean(x())?, boolean(y())?);
            Ok(vec![flag_val(gates::gate(
                b,
                &mut Selectors::for_bits(),
                *g,
                p,
                q,
            )?)])
        }
        BoolNot(_) => Ok(vec![flag_val(gates::not(b, boolean(x())?)?)]),
        Select(..) => {
            let c = boolean(args[0])?;
            let (p, q, signed) = words(args[1], args[2])?;
            Ok(vec![Val::Word(compare::select(b, c, p, q)?, signed)])
        }
        BoolToWord(_, n) => {
            let c = boolean(x())?;
            width_within(*n)?;
            let one = Bits::from_vec(vec![c]);
            Ok(vec![Val::Word(convert::resize(b, &one, *n, false), false)])
        }
        Custom => Err(Error::Config(
            "a custom operation (Word::from_circuit) cannot be built from a program file".into(),
        )),
    }
}

/// A boolean value from its bit.
fn flag_val(w: Wire) -> Val {
    Val::Word(Bits::from_vec(vec![w]), false)
}
