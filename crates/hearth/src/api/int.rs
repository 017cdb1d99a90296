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

use super::program::{digits_within, within, Program, Value};
use crate::circuit::{CircuitBuilder, Wire};
use crate::crypto::encoding::{Shape, MAX_PRODUCTS};
use crate::digits::{self, Comparison, Digits, MulAlgorithm};
use crate::error::Error;

/// A signed integer in a [`Program`] (signed-binary digits: exact, lengths
/// grow as needed).
#[derive(Clone)]
pub struct Int<'p> {
    program: &'p Program,
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
}

impl Program {
    /// Runs `f`; every result is checked to be digits (each in [-1, 1],
    /// quadratic weight at most 1), the promise every operation makes.
    pub(crate) fn int(
        &self,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<Digits, Error>,
    ) -> Int<'_> {
        let digits = self
            .run(|b| {
                digits::check_params(b.params())?;
                let d = f(b)?;
                digits_within("a result", d.len() as u64)?;
                Digits::from_wires(b, d.wires().to_vec())
            })
            .unwrap_or_default();
        Int {
            program: self,
            digits,
        }
    }

    /// An encrypted input of `digits` signed-binary digits (values in
    /// `(-2^digits, 2^digits)`).
    pub fn input(&self, digits: usize) -> Int<'_> {
        self.push_input(Shape::Int { digits });
        self.int(|b| {
            digits_within("an input", digits as u64)?;
            Digits::input(b, digits)
        })
    }

    /// An encrypted input in `bits`-bit two's complement (values in
    /// `[-2^(bits-1), 2^(bits-1))`, encrypted by
    /// [`crate::ClientKey::encrypt_int_twos`]): the digits family's form of
    /// tfhe-rs's `FheInt{bits}`. Its digits are bits (the top one negated),
    /// so subtraction refreshes two positions per bootstrap with no
    /// transfers, comparisons need no subtraction, and wrapping products
    /// no conversion.
    pub fn input_twos(&self, bits: usize) -> Int<'_> {
        self.push_input(Shape::TwosInt { bits });
        self.int(|b| {
            digits_within("an input", bits as u64)?;
            Digits::input_twos(b, bits)
        })
    }

    /// A clear constant (trivial digits: they cost no bootstrap).
    pub fn constant(&self, value: impl Into<BigInt>) -> Int<'_> {
        let v = value.into();
        self.int(|b| {
            digits_within("a constant", v.bits())?;
            Ok(Digits::constant(b, &v))
        })
    }
}

impl<'p> Int<'p> {
    fn unary(
        &self,
        f: impl FnOnce(&mut CircuitBuilder, &Digits) -> Result<Digits, Error>,
    ) -> Int<'p> {
        self.program.int(|b| f(b, &self.digits))
    }

    fn binary(
        &self,
        other: &Int<'_>,
        f: impl FnOnce(&mut CircuitBuilder, &Digits, &Digits) -> Result<Digits, Error>,
    ) -> Int<'p> {
        self.program.int(|b| f(b, &self.digits, &other.digits))
    }

    fn comparison(&self, other: &Int<'_>, op: Comparison) -> Int<'p> {
        self.binary(other, |b, x, y| {
            let w = digits::compare(b, x, y, op)?;
            Digits::from_wires(b, vec![w])
        })
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
        self.binary(other, digits::max)
    }

    /// The smaller of the two.
    pub fn min(&self, other: &Int<'_>) -> Int<'p> {
        self.binary(other, digits::min)
    }

    /// The absolute value.
    pub fn abs(&self) -> Int<'p> {
        self.unary(digits::abs)
    }

    /// `max(x, 0)`.
    pub fn relu(&self) -> Int<'p> {
        self.unary(digits::relu)
    }

    /// `x * x`, cheaper than a product of two operands.
    pub fn square(&self) -> Int<'p> {
        self.unary(|b, x| {
            products_within(x.len(), x.len())?;
            digits::square(b, x, MulAlgorithm::Auto)
        })
    }

    /// The sign, one digit in {-1, 0, 1}.
    pub fn signum(&self) -> Int<'p> {
        self.unary(|b, x| {
            let w = digits::signum(b, x)?;
            Digits::from_wires(b, vec![w])
        })
    }

    /// Rounded to a multiple of `2^i`, halves up.
    pub fn round(&self, i: usize) -> Int<'p> {
        self.unary(|b, x| digits::round(b, x, i))
    }

    /// `x * k` for a clear `k` of any size.
    pub fn scalar_mul(&self, k: impl Into<BigInt>) -> Int<'p> {
        let k = k.into();
        self.unary(|b, x| {
            digits_within("a scalar product", x.len() as u64 + k.bits())?;
            digits::scalar_mul(b, x, &k)
        })
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
        self.unary(|b, x| {
            let bits = digits::to_bits(b, x)?;
            Digits::from_wires(b, bits)
        })
    }

    /// The value wrapped to `n` bits, as Rust's `as i{n}` would: the
    /// integer congruent to `self` modulo `2^n` in `[-2^(n-1), 2^(n-1))`,
    /// as `n` digits (about `1.4 n` bootstraps: the two's-complement
    /// conversion of the low `n` digits; none when they are bits already).
    pub fn wrap(&self, n: usize) -> Int<'p> {
        self.unary(|b, x| {
            digits_within("a wrapped value", n as u64)?;
            digits::wrap(b, x, n)
        })
    }

    /// `self + rhs` wrapped to `n` bits (`i{n}::wrapping_add` on values
    /// that fit `n` bits): the addition of the low `n` digits, then
    /// [`Int::wrap`]; for operands that already are bits (two's-complement
    /// inputs, wrapped values) one conversion of `x_i + y_i - 1` does both.
    pub fn wrapping_add(&self, rhs: &Int<'_>, n: usize) -> Int<'p> {
        self.binary(rhs, |b, x, y| {
            digits_within("a wrapped value", n as u64)?;
            if let Some(s) = digits::convert::wrapping_add_bits(b, x, y, n)? {
                return Ok(s);
            }
            let (xl, _) = x.split(n);
            let (yl, _) = y.split(n);
            let s = digits::add(b, &xl, &yl)?;
            digits::wrap(b, &s, n)
        })
    }

    /// `self * rhs` wrapped to `n` bits (`i{n}::wrapping_mul` on values
    /// that fit `n` bits): the operands' low `n` bits, the bit products
    /// below position `n`, two per bootstrap (about `n^2 / 4`), compressed
    /// and converted; the result is `n` digits like [`Int::wrap`]'s.
    pub fn wrapping_mul(&self, rhs: &Int<'_>, n: usize) -> Int<'p> {
        self.binary(rhs, |b, x, y| {
            digits_within("a wrapped value", n as u64)?;
            let (xl, _) = x.split(n);
            let (yl, _) = y.split(n);
            products_within(xl.len(), yl.len())?;
            digits::mul_wrapping(b, &xl, &yl, n)
        })
    }

    /// The sum of many integers, by column compression.
    pub fn sum(program: &'p Program, terms: &[Int<'_>]) -> Int<'p> {
        let ds: Vec<Digits> = terms.iter().map(|t| t.digits.clone()).collect();
        program.int(|b| digits::sum(b, &ds))
    }

    /// The program this value belongs to.
    pub fn owner(&self) -> &'p Program {
        self.program
    }

    /// `sum products[i].0 * products[i].1 + sum scaled[j].1 * scaled[j].0 +
    /// bias`, exact: all digit products and every clear factor's shifted
    /// `+-x` rows (one per non-zero recoded digit) go into one column
    /// compression ([`digits::dot()`]), so it costs the products and one
    /// compression, never an addition per term.
    pub fn fused_sum(
        program: &'p Program,
        products: &[(&Int<'_>, &Int<'_>)],
        scaled: &[(&Int<'_>, &BigInt)],
        bias: &BigInt,
    ) -> Int<'p> {
        program.int(|b| {
            let count: u64 = products
                .iter()
                .map(|(x, y)| x.len() as u64 * y.len() as u64)
                .sum();
            within(
                || "a fused sum (digit products)".into(),
                count,
                MAX_PRODUCTS,
            )?;
            let pairs: Vec<_> = products
                .iter()
                .map(|(x, y)| (&x.digits, &y.digits))
                .collect();
            let scaled: Vec<_> = scaled.iter().map(|(x, k)| (&x.digits, *k)).collect();
            digits::dot(b, &pairs, &scaled, bias)
        })
    }

    /// The dot product `sum_i xs[i] * ys[i]` ([`Int::fused_sum`]); slices of
    /// different lengths are an [`Error::Dimensions`].
    pub fn dot(program: &'p Program, xs: &[Int<'_>], ys: &[Int<'_>]) -> Int<'p> {
        if let Err(e) = same_len("dot product", xs.len(), ys.len()) {
            return program.int(|_| Err(e));
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
            return program.int(|_| Err(e));
        }
        let scaled: Vec<_> = xs.iter().zip(ws).collect();
        Int::fused_sum(program, &[], &scaled, bias)
    }

    /// `floor(self / 2^k)`: an arithmetic shift right (the low digits of a
    /// signed-binary value decide a borrow: `round(self - 2^(k-1), k)`).
    pub fn shr_floor(&self, k: usize) -> Int<'p> {
        self.unary(|b, x| {
            if k == 0 {
                return Ok(x.clone());
            }
            digits_within("a shift", k as u64)?;
            let half = BigInt::from(1) << (k - 1);
            let y = digits::add_const(b, x, &-half)?;
            let r = digits::round(b, &y, k)?;
            Ok(r.split(k).1)
        })
    }
}

impl<'p> Add<&Int<'_>> for &Int<'p> {
    type Output = Int<'p>;
    fn add(self, rhs: &Int<'_>) -> Int<'p> {
        self.binary(rhs, digits::add)
    }
}

impl<'p> Sub<&Int<'_>> for &Int<'p> {
    type Output = Int<'p>;
    fn sub(self, rhs: &Int<'_>) -> Int<'p> {
        self.binary(rhs, digits::sub)
    }
}

impl<'p> Mul<&Int<'_>> for &Int<'p> {
    type Output = Int<'p>;
    fn mul(self, rhs: &Int<'_>) -> Int<'p> {
        self.binary(rhs, |b, x, y| {
            products_within(x.len(), y.len())?;
            digits::mul(b, x, y, MulAlgorithm::Auto)
        })
    }
}

impl<'p> Neg for &Int<'p> {
    type Output = Int<'p>;
    fn neg(self) -> Int<'p> {
        self.unary(|b, x| x.neg(b))
    }
}

impl<'p> Add<i64> for &Int<'p> {
    type Output = Int<'p>;
    fn add(self, rhs: i64) -> Int<'p> {
        self.unary(|b, x| digits::add_const(b, x, &BigInt::from(rhs)))
    }
}

impl<'p> Sub<i64> for &Int<'p> {
    type Output = Int<'p>;
    fn sub(self, rhs: i64) -> Int<'p> {
        self.unary(|b, x| digits::add_const(b, x, &-BigInt::from(rhs)))
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
        self.unary(|b, x| {
            digits_within("a shift", (x.len() as u64).saturating_add(k as u64))?;
            Ok(x.shl(b, k))
        })
    }
}

/// Refuses slices of different lengths where an operation pairs them.
pub(crate) fn same_len(what: &str, a: usize, b: usize) -> Result<(), Error> {
    if a != b {
        return Err(Error::Dimensions(format!("{what}: {a} terms against {b}")));
    }
    Ok(())
}

fn products_within(n: usize, m: usize) -> Result<(), Error> {
    within(
        || format!("a product of {n} by {m} digits (digit products)"),
        n as u64 * m as u64,
        MAX_PRODUCTS,
    )
}
