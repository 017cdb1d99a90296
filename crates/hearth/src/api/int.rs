//! Typed signed integers with operator overloading, in the spirit of
//! tfhe-rs's `FheInt`, on top of the signed-binary [`crate::digits`].
//!
//! Operations on [`Int`]s *build* a circuit in a [`Program`]; nothing is
//! evaluated until the finished [`CompiledProgram`] runs on a backend, so
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

use std::cell::RefCell;
use std::ops::{Add, Mul, Neg, Shl, Sub};

use num_bigint::BigInt;
use num_traits::Signed;
use serde::{Deserialize, Serialize};

use crate::backend::Backend;
use crate::circuit::{Circuit, CircuitBuilder};
use crate::crypto::keys::{signed_digit, Ciphertext, ClientKey};
use crate::crypto::params::ParameterSet;
use crate::digits::{self, Comparison, Digits, MulAlgorithm};
use crate::error::Error;

/// The most digits an [`Int`] may have (65 536-bit integers); longer
/// results are refused with [`Error::TooLarge`] before they are built.
pub const MAX_DIGITS: usize = 1 << 16;

/// The most digit products one multiplication may build (`n * m`; a
/// 4 096-digit square): beyond it the circuit would not fit in memory.
pub const MAX_PRODUCTS: u64 = 1 << 24;

/// Refuses `size` digits (or products) for `what` above `limit`.
fn within(what: impl FnOnce() -> String, size: u64, limit: u64) -> Result<(), Error> {
    if size > limit {
        return Err(Error::TooLarge {
            what: what(),
            size,
            limit,
        });
    }
    Ok(())
}

fn digits_within(what: &str, n: u64) -> Result<(), Error> {
    within(|| format!("{what} (digits)"), n, MAX_DIGITS as u64)
}

struct State {
    builder: CircuitBuilder,
    error: Option<Error>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
}

/// A program under construction.
pub struct Program {
    state: RefCell<State>,
}

/// A signed integer in a [`Program`].
#[derive(Clone)]
pub struct Int<'p> {
    program: &'p Program,
    digits: Digits,
}

impl Program {
    /// A new program; a parameter set that cannot carry the digits family
    /// makes [`Program::build`] fail with [`Error::UnsupportedParams`].
    pub fn new(params: &'static ParameterSet) -> Self {
        Program {
            state: RefCell::new(State {
                builder: CircuitBuilder::new(params),
                error: digits::check_params(params).err(),
                inputs: Vec::new(),
                outputs: Vec::new(),
            }),
        }
    }

    /// Runs `f` on the builder; on error, keeps the first and returns zero.
    /// Every result is checked to be digits (each in [-1, 1], quadratic
    /// weight at most 1), the promise every operation makes.
    fn apply(&self, f: impl FnOnce(&mut CircuitBuilder) -> Result<Digits, Error>) -> Int<'_> {
        let mut st = self.state.borrow_mut();
        let digits = if st.error.is_some() {
            Digits::default()
        } else {
            let b = &mut st.builder;
            let checked = f(b).and_then(|d| {
                digits_within("a result", d.len() as u64)?;
                Digits::from_wires(b, d.wires().to_vec())
            });
            match checked {
                Ok(d) => d,
                Err(e) => {
                    st.error = Some(e);
                    Digits::default()
                }
            }
        };
        Int {
            program: self,
            digits,
        }
    }

    /// An encrypted input of `digits` signed-binary digits (values in
    /// `(-2^digits, 2^digits)`).
    pub fn input(&self, digits: usize) -> Int<'_> {
        self.state.borrow_mut().inputs.push(digits);
        self.apply(|b| {
            digits_within("an input", digits as u64)?;
            Digits::input(b, digits)
        })
    }

    /// A clear constant (trivial digits: they cost no bootstrap).
    pub fn constant(&self, value: impl Into<BigInt>) -> Int<'_> {
        let v = value.into();
        self.apply(|b| {
            digits_within("a constant", v.bits())?;
            Ok(Digits::constant(b, &v))
        })
    }

    /// Marks `x` as an output.
    pub fn output(&self, x: &Int<'_>) {
        let mut st = self.state.borrow_mut();
        if st.error.is_some() {
            return;
        }
        let st = &mut *st;
        match x.digits.output(&mut st.builder) {
            Ok(idx) => st.outputs.push(idx.len()),
            Err(e) => st.error = Some(e),
        }
    }

    /// The finished program, or the first error any operation met.
    pub fn build(self) -> Result<CompiledProgram, Error> {
        let st = self.state.into_inner();
        if let Some(e) = st.error {
            return Err(e);
        }
        Ok(CompiledProgram {
            circuit: st.builder.build(),
            inputs: st.inputs,
            outputs: st.outputs,
        })
    }
}

impl<'p> Int<'p> {
    fn unary(
        &self,
        f: impl FnOnce(&mut CircuitBuilder, &Digits) -> Result<Digits, Error>,
    ) -> Int<'p> {
        self.program.apply(|b| f(b, &self.digits))
    }

    fn binary(
        &self,
        other: &Int<'_>,
        f: impl FnOnce(&mut CircuitBuilder, &Digits, &Digits) -> Result<Digits, Error>,
    ) -> Int<'p> {
        self.program.apply(|b| f(b, &self.digits, &other.digits))
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

    pub fn is_empty(&self) -> bool {
        self.digits.is_empty()
    }

    /// The underlying digits.
    pub fn digits(&self) -> &Digits {
        &self.digits
    }

    pub fn max(&self, other: &Int<'_>) -> Int<'p> {
        self.binary(other, digits::max)
    }

    pub fn min(&self, other: &Int<'_>) -> Int<'p> {
        self.binary(other, digits::min)
    }

    pub fn abs(&self) -> Int<'p> {
        self.unary(digits::abs)
    }

    pub fn relu(&self) -> Int<'p> {
        self.unary(digits::relu)
    }

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

    pub fn le(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Le)
    }

    pub fn gt(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Gt)
    }

    pub fn ge(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Ge)
    }

    pub fn eq(&self, other: &Int<'_>) -> Int<'p> {
        self.comparison(other, Comparison::Eq)
    }

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

    /// The sum of many integers, by column compression.
    pub fn sum(program: &'p Program, terms: &[Int<'_>]) -> Int<'p> {
        let ds: Vec<Digits> = terms.iter().map(|t| t.digits.clone()).collect();
        program.apply(|b| digits::sum(b, &ds))
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

fn products_within(n: usize, m: usize) -> Result<(), Error> {
    within(
        || format!("a product of {n} by {m} digits (digit products)"),
        n as u64 * m as u64,
        MAX_PRODUCTS,
    )
}

/// A built program: its circuit and the digit counts of its inputs and
/// outputs.
#[derive(Clone, Debug)]
pub struct CompiledProgram {
    circuit: Circuit,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
}

impl CompiledProgram {
    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    /// Digits of each input, in order.
    pub fn input_lengths(&self) -> &[usize] {
        &self.inputs
    }

    /// Digits of each output, in order.
    pub fn output_lengths(&self) -> &[usize] {
        &self.outputs
    }

    /// Runs on `backend`: one digit vector per input, one per output.
    pub fn run<B: Backend>(
        &self,
        backend: &B,
        inputs: &[Vec<B::Digit>],
    ) -> Result<Vec<Vec<B::Digit>>, Error>
    where
        B::Digit: Clone,
    {
        if inputs.len() != self.inputs.len() {
            return Err(Error::InputCount {
                expected: self.inputs.len(),
                found: inputs.len(),
            });
        }
        let mut flat = Vec::new();
        for (i, (v, &n)) in inputs.iter().zip(&self.inputs).enumerate() {
            if v.len() != n {
                return Err(Error::DoesNotFit {
                    value: format!("input {i} of {} digits", v.len()),
                    target: format!("the program's input of {n} digits"),
                });
            }
            flat.extend_from_slice(v);
        }
        let mut out = backend.evaluate(&self.circuit, &flat)?.into_iter();
        Ok(self
            .outputs
            .iter()
            .map(|&n| out.by_ref().take(n).collect())
            .collect())
    }
}

impl CompiledProgram {
    /// Runs on encrypted integers (e.g. on a [`crate::backend::CpuBackend`]).
    pub fn run_encrypted<B: Backend<Digit = Ciphertext>>(
        &self,
        backend: &B,
        inputs: &[EncryptedInt],
    ) -> Result<Vec<EncryptedInt>, Error> {
        let ins: Vec<Vec<Ciphertext>> = inputs.iter().map(|x| x.digits.clone()).collect();
        Ok(self
            .run(backend, &ins)?
            .into_iter()
            .map(|digits| EncryptedInt { digits })
            .collect())
    }
}

/// The binary digits of `value` (sign applied to each), `n` of them.
fn signed_binary(value: &BigInt, n: usize) -> Result<Vec<i64>, Error> {
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

/// The clear digits (in `Z_{2^pi}`) of `value` on `n` digits, for the clear
/// backend.
pub fn clear_digits(
    params: &ParameterSet,
    value: impl Into<BigInt>,
    n: usize,
) -> Result<Vec<u64>, Error> {
    let m = params.message_modulus() as i64;
    Ok(signed_binary(&value.into(), n)?
        .into_iter()
        .map(|d| d.rem_euclid(m) as u64)
        .collect())
}

/// The value of clear digits (in `Z_{2^pi}`).
pub fn clear_value(params: &ParameterSet, digits: &[u64]) -> BigInt {
    let signed: Vec<i64> = digits.iter().map(|&d| signed_digit(params, d)).collect();
    digits::value_of(&signed)
}

/// An encrypted signed integer: one ciphertext per signed-binary digit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EncryptedInt {
    pub digits: Vec<Ciphertext>,
}

impl ClientKey {
    /// Encrypts `value` on `n` digits (`|value| < 2^n`).
    pub fn encrypt_int(&self, value: impl Into<BigInt>, n: usize) -> Result<EncryptedInt, Error> {
        let digits = signed_binary(&value.into(), n)?
            .into_iter()
            .map(|d| self.encrypt(d))
            .collect::<Result<_, _>>()?;
        Ok(EncryptedInt { digits })
    }

    /// Decrypts an integer; every digit must decrypt into {-1, 0, 1}.
    pub fn decrypt_int(&self, x: &EncryptedInt) -> Result<BigInt, Error> {
        let mut ds = Vec::with_capacity(x.digits.len());
        for ct in &x.digits {
            let d = self.decrypt_signed(ct)?;
            if !(-1..=1).contains(&d) {
                return Err(Error::DoesNotFit {
                    value: d.to_string(),
                    target: "a signed-binary digit {-1, 0, 1} (not an integer ciphertext?)".into(),
                });
            }
            ds.push(d);
        }
        Ok(digits::value_of(&ds))
    }

    /// Decrypts to an `i64`, failing if the value does not fit.
    pub fn decrypt_i64(&self, x: &EncryptedInt) -> Result<i64, Error> {
        let v = self.decrypt_int(x)?;
        i64::try_from(&v).map_err(|_| Error::DoesNotFit {
            value: v.to_string(),
            target: "an i64".into(),
        })
    }

    /// Decrypts to an `i128`, failing if the value does not fit.
    pub fn decrypt_i128(&self, x: &EncryptedInt) -> Result<i128, Error> {
        let v = self.decrypt_int(x)?;
        i128::try_from(&v).map_err(|_| Error::DoesNotFit {
            value: v.to_string(),
            target: "an i128".into(),
        })
    }
}
