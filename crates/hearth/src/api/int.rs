//! Typed signed integers with operator overloading, in the spirit of
//! tfhe-rs's `FheInt`, on top of the signed-binary [`crate::digits`].
//!
//! Operations on [`Int`]s *build* a circuit in a [`Program`]; nothing is
//! evaluated until the finished [`super::CompiledProgram`] runs on a backend, so
//! every independent bootstrap of the whole program can run at once.
//! Operators cannot return errors: the first error is kept by the program
//! and reported by [`Program::build`].
//!
//! ```
//! use hearth::backend::ClearBackend;
//! use hearth::api::{clear_digits, clear_value, Program};
//! use hearth::INSECURE_TEST_DIGITS;
//!
//! let p = Program::new(&INSECURE_TEST_DIGITS);
//! let x = p.input(8);
//! let y = p.input(8);
//! let z = &(&x * &y) + &(&x * 3);
//! p.output(&z);
//! p.output(&x.max(&y));
//! let prog = p.build()?;
//! let out = prog.run(&ClearBackend, &[clear_digits(&INSECURE_TEST_DIGITS, 12, 8)?, clear_digits(&INSECURE_TEST_DIGITS, -5, 8)?])?;
//! assert_eq!(clear_value(&INSECURE_TEST_DIGITS, &out[0]), (-60 + 36).into());
//! assert_eq!(clear_value(&INSECURE_TEST_DIGITS, &out[1]), 12.into());
//! # Ok::<(), hearth::Error>(())
//! ```

use std::ops::{Add, Mul, Neg, Shl, Sub};

use num_bigint::BigInt;

use super::operand::Val;
use super::ops::{IntOp, Op, ValueId};
use super::program::{Program, Value, NO_VALUE};
use crate::circuit::Wire;
use crate::comparison::Comparison;
use crate::crypto::encoding::Shape;
use crate::digits::Digits;
use crate::error::Error;

/// A signed integer in a [`Program`] (signed-binary digits: exact, lengths
/// grow as needed).
#[derive(Clone)]
pub struct Int<'p> {
    program: &'p Program,
    id: ValueId,
    digits: Digits,
}

impl Value for Int<'_> {
    fn shape(&self) -> Shape {
        Shape::Int {
            digits: self.digits.len(),
        }
    }

    fn wires(&self) -> &[Wire] {
        self.digits.wires()
    }

    fn program(&self) -> &Program {
        self.program
    }

    fn id(&self) -> ValueId {
        self.id
    }
}

impl Program {
    /// The integer `op` makes (an empty placeholder after an error, kept
    /// for [`Program::build`]).
    pub(crate) fn int(&self, op: Option<impl Into<Op>>) -> Int<'_> {
        let made = op.and_then(|op| self.apply(op.into()));
        match made.as_deref() {
            Some([(id, Val::Int(d))]) => Int {
                program: self,
                id: *id,
                digits: d.clone(),
            },
            Some(_) => {
                self.fail(Error::Internal(
                    "an integer operation made another kind of value".into(),
                ));
                Int::placeholder(self)
            }
            None => Int::placeholder(self),
        }
    }

    /// An encrypted input of `digits` signed-binary digits (values in
    /// `(-2^digits, 2^digits)`).
    pub fn input(&self, digits: usize) -> Int<'_> {
        self.int(Some(Op::Input(Shape::Int { digits })))
    }

    /// An encrypted input in `bits`-bit two's complement (values in
    /// `[-2^(bits-1), 2^(bits-1))`, encrypted by
    /// [`crate::ClientKey::encrypt_int_twos`]): the digits family's form of
    /// tfhe-rs's `FheInt{bits}`. Its digits are bits (the top one negated),
    /// so subtraction refreshes two positions per bootstrap with no
    /// transfers, comparisons need no subtraction, and wrapping products
    /// no conversion.
    pub fn input_twos(&self, bits: usize) -> Int<'_> {
        self.int(Some(Op::Input(Shape::TwosInt { bits })))
    }

    /// A clear constant (trivial digits: they cost no bootstrap).
    pub fn constant(&self, value: impl Into<BigInt>) -> Int<'_> {
        self.int(Some(IntOp::Const(value.into())))
    }
}

impl<'p> Int<'p> {
    pub(crate) fn from_parts(program: &'p Program, id: ValueId, digits: Digits) -> Self {
        Int {
            program,
            id,
            digits,
        }
    }

    fn placeholder(program: &'p Program) -> Int<'p> {
        Int {
            program,
            id: NO_VALUE,
            digits: Digits::default(),
        }
    }

    /// This value's id, or `None` (an error kept) for one of another
    /// program than `program`.
    fn arg(&self, program: &Program) -> Option<ValueId> {
        program.id_of(self, "an integer")
    }

    fn unary(&self, op: impl FnOnce(ValueId) -> IntOp) -> Int<'p> {
        self.program.int(self.arg(self.program).map(op))
    }

    fn binary(&self, other: &Int<'_>, op: impl FnOnce(ValueId, ValueId) -> IntOp) -> Int<'p> {
        let p = self.program;
        let args = self.arg(p).zip(other.arg(p));
        p.int(args.map(|(x, y)| op(x, y)))
    }

    fn comparison(&self, other: &Int<'_>, c: Comparison) -> Int<'p> {
        self.binary(other, |x, y| IntOp::Compare(x, y, c))
    }

    /// Number of digits.
    pub fn len(&self) -> usize {
        self.digits.len()
    }

    /// Whether it has no digits (the value 0).
    pub fn is_empty(&self) -> bool {
        self.digits.is_empty()
    }

    /// The underlying digits.
    pub fn digits(&self) -> &Digits {
        &self.digits
    }

    /// The larger of the two (PARMESAN's maximum: a comparison, then one bootstrap per digit).
    pub fn max(&self, other: &Int<'_>) -> Int<'p> {
        self.binary(other, IntOp::Max)
    }

    /// The smaller of the two.
    pub fn min(&self, other: &Int<'_>) -> Int<'p> {
        self.binary(other, IntOp::Min)
    }

    /// The absolute value.
    pub fn abs(&self) -> Int<'p> {
        self.unary(IntOp::Abs)
    }

    /// `|self - other|`, exact.
    pub fn abs_diff(&self, other: &Int<'_>) -> Int<'p> {
        self.binary(other, IntOp::AbsDiff)
    }

    /// `self ** e` for a clear exponent, exact (`x.pow(0)` is 1): one
    /// square per bit of `e` below its top bit, one product per set bit.
    pub fn pow(&self, e: usize) -> Int<'p> {
        self.unary(|x| IntOp::Pow(x, e))
    }

    /// `max(x, 0)`.
    pub fn relu(&self) -> Int<'p> {
        self.unary(IntOp::Relu)
    }

    /// `x * x`, cheaper than a product of two operands.
    pub fn square(&self) -> Int<'p> {
        self.unary(IntOp::Square)
    }

    /// The sign, one digit in {-1, 0, 1}.
    pub fn signum(&self) -> Int<'p> {
        self.unary(IntOp::Signum)
    }

    /// Rounded to a multiple of `2^i`, halves up.
    pub fn round(&self, i: usize) -> Int<'p> {
        self.unary(|x| IntOp::Round(x, i))
    }

    /// `x * k` for a clear `k` of any size.
    pub fn scalar_mul(&self, k: impl Into<BigInt>) -> Int<'p> {
        let k = k.into();
        self.unary(|x| IntOp::ScalarMul(x, k))
    }

    /// `1` if `self < other`, else `0` (one digit); likewise the others.
    pub fn lt(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Lt)
    }

    /// `x <= y` as a digit: 1 or 0.
    pub fn le(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Le)
    }

    /// `x > y` as a digit: 1 or 0.
    pub fn gt(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Gt)
    }

    /// `x >= y` as a digit: 1 or 0.
    pub fn ge(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Ge)
    }

    /// `x == y` as a digit: 1 or 0.
    pub fn eq(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Eq)
    }

    /// `x != y` as a digit: 1 or 0.
    pub fn ne(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Ne)
    }

    /// The two's-complement bits of `self` (`len + 1` of them), as an
    /// integer whose digits are those bits: its value is `self` mod
    /// `2^(len+1)`.
    pub fn to_bits_as_int(&self) -> Int<'p> {
        self.unary(IntOp::ToBits)
    }

    /// The same value on at least `n` digits: zero digits on top, no
    /// bootstrap (outputs of one tensor share one shape).
    pub fn widen(&self, n: usize) -> Int<'p> {
        self.unary(|x| IntOp::Widen(x, n))
    }

    /// The value wrapped to `n` bits, as Rust's `as i{n}` would: the
    /// integer congruent to `self` modulo `2^n` in `[-2^(n-1), 2^(n-1))`,
    /// as `n` digits (about `1.4 n` bootstraps: the two's-complement
    /// conversion of the low `n` digits; none when they are bits already).
    pub fn wrap(&self, n: usize) -> Int<'p> {
        self.unary(|x| IntOp::Wrap(x, n))
    }

    /// `self + rhs` wrapped to `n` bits (`i{n}::wrapping_add` on values
    /// that fit `n` bits): the addition of the low `n` digits, then
    /// [`Int::wrap`]; for operands that already are bits (two's-complement
    /// inputs, wrapped values) one conversion of `x_i + y_i - 1` does both.
    pub fn wrapping_add(&self, rhs: &Int<'_>, n: usize) -> Int<'p> {
        self.binary(rhs, |x, y| IntOp::WrappingAdd(x, y, n))
    }

    /// `self * rhs` wrapped to `n` bits (`i{n}::wrapping_mul` on values
    /// that fit `n` bits): the operands' low `n` bits, the bit products
    /// below position `n`, two per bootstrap (about `n^2 / 4`), compressed
    /// and converted; the result is `n` digits like [`Int::wrap`]'s. A
    /// square (`x.wrapping_mul(&x, n)`) takes about half the bootstraps.
    pub fn wrapping_mul(&self, rhs: &Int<'_>, n: usize) -> Int<'p> {
        self.binary(rhs, |x, y| IntOp::WrappingMul(x, y, n))
    }

    /// The sum of many integers, by column compression.
    pub fn sum(program: &'p Program, terms: &[Int<'_>]) -> Int<'p> {
        let ids: Option<Vec<ValueId>> = terms.iter().map(|t| t.arg(program)).collect();
        program.int(ids.map(IntOp::Sum))
    }

    /// The program this value belongs to.
    pub fn owner(&self) -> &'p Program {
        self.program
    }

    /// `sum products[i].0 * products[i].1 + sum scaled[j].1 * scaled[j].0 +
    /// bias`, exact: all digit products and every clear factor's shifted
    /// `+-x` rows (one per non-zero recoded digit) go into one column
    /// compression ([`crate::digits::dot()`]), so it costs the products and
    /// one compression, never an addition per term.
    pub fn fused_sum(
        program: &'p Program,
        products: &[(&Int<'_>, &Int<'_>)],
        scaled: &[(&Int<'_>, &BigInt)],
        bias: &BigInt,
    ) -> Int<'p> {
        let products: Option<Vec<_>> = products
            .iter()
            .map(|(x, y)| x.arg(program).zip(y.arg(program)))
            .collect();
        let scaled: Option<Vec<_>> = scaled
            .iter()
            .map(|(x, k)| x.arg(program).map(|x| (x, (*k).clone())))
            .collect();
        program.int(
            products
                .zip(scaled)
                .map(|(products, scaled)| IntOp::FusedSum(products, scaled, bias.clone())),
        )
    }

    /// The dot product `sum_i xs[i] * ys[i]` ([`Int::fused_sum`]); slices of
    /// different lengths are an [`Error::Dimensions`].
    pub fn dot(program: &'p Program, xs: &[Int<'_>], ys: &[Int<'_>]) -> Int<'p> {
        if let Err(e) = same_len("dot product", xs.len(), ys.len()) {
            program.fail(e);
            return Int::placeholder(program);
        }
        let pairs: Vec<_> = xs.iter().zip(ys).collect();
        Int::fused_sum(program, &pairs, &[], &BigInt::from(0))
    }

    /// `sum_i ws[i] * xs[i] + bias` for clear weights ([`Int::fused_sum`]:
    /// no product bootstraps at all).
    pub fn dot_clear(
        program: &'p Program,
        xs: &[Int<'_>],
        ws: &[BigInt],
        bias: &BigInt,
    ) -> Int<'p> {
        if let Err(e) = same_len("dot product with clear weights", xs.len(), ws.len()) {
            program.fail(e);
            return Int::placeholder(program);
        }
        let scaled: Vec<_> = xs.iter().zip(ws).collect();
        Int::fused_sum(program, &[], &scaled, bias)
    }

    /// `floor(self / 2^k)`: an arithmetic shift right (the low digits of a
    /// signed-binary value decide a borrow: `round(self - 2^(k-1), k)`).
    pub fn shr_floor(&self, k: usize) -> Int<'p> {
        self.unary(|x| IntOp::ShrFloor(x, k))
    }
}

impl<'p> Add<&Int<'_>> for &Int<'p> {
    type Output = Int<'p>;
    fn add(self, rhs: &Int<'_>) -> Int<'p> {
        self.binary(rhs, IntOp::Add)
    }
}

impl<'p> Sub<&Int<'_>> for &Int<'p> {
    type Output = Int<'p>;
    fn sub(self, rhs: &Int<'_>) -> Int<'p> {
        self.binary(rhs, IntOp::Sub)
    }
}

impl<'p> Mul<&Int<'_>> for &Int<'p> {
    type Output = Int<'p>;
    fn mul(self, rhs: &Int<'_>) -> Int<'p> {
        self.binary(rhs, IntOp::Mul)
    }
}

impl<'p> Neg for &Int<'p> {
    type Output = Int<'p>;
    fn neg(self) -> Int<'p> {
        self.unary(IntOp::Neg)
    }
}

impl<'p> Add<i64> for &Int<'p> {
    type Output = Int<'p>;
    fn add(self, rhs: i64) -> Int<'p> {
        self.unary(|x| IntOp::AddConst(x, BigInt::from(rhs)))
    }
}

impl<'p> Sub<i64> for &Int<'p> {
    type Output = Int<'p>;
    fn sub(self, rhs: i64) -> Int<'p> {
        self.unary(|x| IntOp::AddConst(x, -BigInt::from(rhs)))
    }
}

impl<'p> Mul<i64> for &Int<'p> {
    type Output = Int<'p>;
    fn mul(self, rhs: i64) -> Int<'p> {
        self.scalar_mul(rhs)
    }
}

impl<'p> Shl<usize> for &Int<'p> {
    type Output = Int<'p>;
    fn shl(self, k: usize) -> Int<'p> {
        self.unary(|x| IntOp::Shl(x, k))
    }
}

/// Refuses slices of different lengths where an operation pairs them.
pub(crate) fn same_len(what: &str, a: usize, b: usize) -> Result<(), Error> {
    if a != b {
        return Err(Error::Dimensions(format!("{what}: {a} terms against {b}")));
    }
    Ok(())
}
