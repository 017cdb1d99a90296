//! Programs: one circuit built lazily by typed values ([`super::Int`],
//! [`super::Word`], [`super::Bool`]), then run on any backend; encrypted
//! values with their shapes.
//!
//! Operators cannot return errors: the first error any operation meets is
//! kept by the program and reported by [`Program::build`] (a value made
//! after an error is a placeholder of the right shape).

use std::cell::RefCell;
use std::fmt;

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use serde::{Deserialize, Serialize};

use crate::backend::{Backend, CpuBackend, RunReport};
use crate::circuit::{Circuit, CircuitBuilder, Wire};
use crate::crypto::keys::{signed_digit, Ciphertext, ClientKey};
use crate::crypto::params::ParameterSet;
use crate::digits;
use crate::error::Error;

/// What one program input or output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Shape {
    /// A signed-binary integer of this many digits (digits family).
    Int { digits: usize },
    /// A signed integer of the digits family entered in two's complement
    /// on this many bits: the low digits are bits in {0, 1}, the top one is
    /// in {-1, 0} (weight `-2^(bits-1)`), the values of `i{bits}` (what
    /// tfhe-rs's `FheInt` holds). Operations read these narrower ranges and
    /// skip the conversions signed-binary digits need.
    TwosInt { bits: usize },
    /// A fixed-width two's-complement (or unsigned) integer of this many
    /// bits (bits family); a boolean is one unsigned bit.
    Word { bits: usize, signed: bool },
}

impl Shape {
    /// Ciphertexts it takes.
    pub fn len(&self) -> usize {
        match *self {
            Shape::Int { digits } => digits,
            Shape::TwosInt { bits } | Shape::Word { bits, .. } => bits,
        }
    }

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
pub(crate) fn within(what: impl FnOnce() -> String, size: u64, limit: u64) -> Result<(), Error> {
    if size > limit {
        return Err(Error::TooLarge {
            what: what(),
            size,
            limit,
        });
    }
    Ok(())
}

pub(crate) fn digits_within(what: &str, n: u64) -> Result<(), Error> {
    within(|| format!("{what} (digits)"), n, MAX_DIGITS as u64)
}

pub(crate) struct State {
    pub(crate) builder: CircuitBuilder,
    pub(crate) error: Option<Error>,
    inputs: Vec<Shape>,
    outputs: Vec<Shape>,
}

/// A program under construction: the values made from it build one
/// circuit, so independent work of the whole program runs together.
pub struct Program {
    pub(crate) state: RefCell<State>,
}

/// A typed value of a program: something that can be an output.
pub trait Value {
    /// Its shape.
    fn shape(&self) -> Shape;
    /// Its wires, least significant first.
    fn wires(&self) -> &[Wire];
    /// The program it belongs to.
    fn program(&self) -> &Program;
}

impl Program {
    /// A new program on `params`. Each family checks that the parameters
    /// carry it when its first value is made (the digits family needs
    /// `pi >= 5`, the bits family spread selectors on `pi >= 3`), so a
    /// mismatch is [`Error::UnsupportedParams`] from [`Program::build`].
    pub fn new(params: &'static ParameterSet) -> Self {
        Program {
            state: RefCell::new(State {
                builder: CircuitBuilder::new(params),
                error: None,
                inputs: Vec::new(),
                outputs: Vec::new(),
            }),
        }
    }

    /// Plans algorithms for `threads` threads (default: this machine's
    /// cores): few threads favour fewer bootstraps, many a lower depth.
    pub fn set_threads(&self, threads: usize) {
        self.state.borrow_mut().builder.set_threads(threads);
    }

    pub fn params(&self) -> &'static ParameterSet {
        self.state.borrow().builder.params()
    }

    /// Runs `f` on the builder unless an error came first; keeps the first
    /// error and returns `None` then.
    pub(crate) fn run<T>(
        &self,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<T, Error>,
    ) -> Option<T> {
        let mut st = self.state.borrow_mut();
        if st.error.is_some() {
            return None;
        }
        match f(&mut st.builder) {
            Ok(v) => Some(v),
            Err(e) => {
                st.error = Some(e);
                None
            }
        }
    }

    /// Records that an input of `shape` was made.
    pub(crate) fn push_input(&self, shape: Shape) {
        self.state.borrow_mut().inputs.push(shape);
    }

    /// Marks `x` as an output.
    pub fn output(&self, x: &impl Value) {
        if !std::ptr::eq(x.program(), self) {
            let mut st = self.state.borrow_mut();
            if st.error.is_none() {
                st.error = Some(
                    crate::error::BuildError::ForeignWire {
                        node: "output (a value of another program)".into(),
                    }
                    .into(),
                );
            }
            return;
        }
        let shape = x.shape();
        // Words are read bit by bit with a margin of one unit.
        let level = match shape {
            Shape::Int { .. } | Shape::TwosInt { .. } => 0,
            Shape::Word { .. } => 1,
        };
        let ok = self.run(|b| {
            for &w in x.wires() {
                b.output_decoded(w, level)?;
            }
            Ok(())
        });
        if ok.is_some() {
            self.state.borrow_mut().outputs.push(shape);
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

/// A built program: its circuit and the shapes of its inputs and outputs.
#[derive(Clone, Debug)]
pub struct CompiledProgram {
    circuit: Circuit,
    inputs: Vec<Shape>,
    outputs: Vec<Shape>,
}

impl CompiledProgram {
    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    /// The shape of each input, in order.
    pub fn input_shapes(&self) -> &[Shape] {
        &self.inputs
    }

    /// The shape of each output, in order.
    pub fn output_shapes(&self) -> &[Shape] {
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
        let flat = self.flatten(inputs)?;
        Ok(self.split(backend.evaluate(&self.circuit, &flat)?))
    }

    /// The inputs as one list of circuit inputs, each checked against its
    /// declared shape.
    fn flatten<D: Clone>(&self, inputs: &[Vec<D>]) -> Result<Vec<D>, Error> {
        if inputs.len() != self.inputs.len() {
            return Err(Error::InputCount {
                expected: self.inputs.len(),
                found: inputs.len(),
            });
        }
        let mut flat = Vec::new();
        for (i, (v, shape)) in inputs.iter().zip(&self.inputs).enumerate() {
            if v.len() != shape.len() {
                return Err(Error::DoesNotFit {
                    value: format!("input {i} of {} ciphertexts", v.len()),
                    target: format!("the program's input {i}, {shape}"),
                });
            }
            flat.extend_from_slice(v);
        }
        Ok(flat)
    }

    /// The circuit's outputs, one vector per program output.
    fn split<D>(&self, out: Vec<D>) -> Vec<Vec<D>> {
        let mut out = out.into_iter();
        self.outputs
            .iter()
            .map(|s| out.by_ref().take(s.len()).collect())
            .collect()
    }

    /// Runs on encrypted values (e.g. on a [`crate::backend::CpuBackend`]);
    /// each input must have the shape the program declared.
    pub fn run_encrypted<B: Backend<Digit = Ciphertext>>(
        &self,
        backend: &B,
        inputs: &[Encrypted],
    ) -> Result<Vec<Encrypted>, Error> {
        let ins = self.encrypted_inputs(inputs)?;
        Ok(self.wrap_outputs(self.run(backend, &ins)?))
    }

    /// [`CompiledProgram::run_encrypted`] on the cpu backend, with its
    /// report (time, peak ciphertexts alive).
    pub fn run_encrypted_report(
        &self,
        cpu: &CpuBackend<'_>,
        inputs: &[Encrypted],
    ) -> Result<(Vec<Encrypted>, RunReport), Error> {
        let flat = self.flatten(&self.encrypted_inputs(inputs)?)?;
        let (out, report) = cpu.run(&self.circuit, &flat)?;
        Ok((self.wrap_outputs(self.split(out)), report))
    }

    fn encrypted_inputs(&self, inputs: &[Encrypted]) -> Result<Vec<Vec<Ciphertext>>, Error> {
        for (i, (x, shape)) in inputs.iter().zip(&self.inputs).enumerate() {
            if x.shape != *shape {
                return Err(Error::ShapeMismatch {
                    what: format!("input {i}"),
                    expected: *shape,
                    found: x.shape,
                });
            }
        }
        Ok(inputs.iter().map(|x| x.cts.clone()).collect())
    }

    fn wrap_outputs(&self, out: Vec<Vec<Ciphertext>>) -> Vec<Encrypted> {
        out.into_iter()
            .zip(&self.outputs)
            .map(|(cts, &shape)| Encrypted { shape, cts })
            .collect()
    }

    /// Bytes an encrypted run needs, estimated before it starts: the most
    /// ciphertexts alive at once (levels in order, each value freed after
    /// its last use) times one ciphertext, plus one bootstrap accumulator
    /// per thread.
    pub fn memory_estimate(&self, threads: usize) -> u64 {
        let params = self.circuit.params.params();
        let live = self.circuit.stats().peak_live as u64;
        live * params.ciphertext_bytes() + threads as u64 * params.accumulator_bytes()
    }

    /// Refuses a run whose [`CompiledProgram::memory_estimate`] exceeds
    /// `limit` bytes, with [`Error::TooLarge`], before anything runs.
    pub fn check_memory(&self, threads: usize, limit: u64) -> Result<(), Error> {
        within(
            || "the run's estimated memory (bytes; raise the limit or split the work)".into(),
            self.memory_estimate(threads),
            limit,
        )
    }
}

/// An encrypted value: its ciphertexts and what they hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Encrypted {
    shape: Shape,
    cts: Vec<Ciphertext>,
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

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The ciphertexts, least significant first.
    pub fn ciphertexts(&self) -> &[Ciphertext] {
        &self.cts
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

/// The digits of `value` in `n`-bit two's complement: bits, the top one
/// negated (`-1` for a negative value), refusing values outside
/// `[-2^(n-1), 2^(n-1))`.
fn twos_digits(value: &BigInt, n: usize) -> Result<Vec<i64>, Error> {
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
fn word_bits(value: &BigInt, n: usize, signed: bool) -> Result<Vec<bool>, Error> {
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
/// [`Program::input_twos`]).
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
    digits::value_of(&signed)
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
    Ok(crate::bits::value_of(&bools, signed))
}

/// Rust integers that encrypt as words: their width and signedness.
pub trait Plain: Copy + Into<BigInt> + TryFrom<BigInt> {
    const BITS: usize;
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

impl ClientKey {
    /// Encrypts `value` on `n` signed-binary digits (`|value| < 2^n`).
    pub fn encrypt_int(&self, value: impl Into<BigInt>, n: usize) -> Result<Encrypted, Error> {
        self.encrypt_digits(Shape::Int { digits: n }, signed_binary(&value.into(), n)?)
    }

    /// One ciphertext per digit, as a value of `shape`.
    fn encrypt_digits(&self, shape: Shape, digits: Vec<i64>) -> Result<Encrypted, Error> {
        let cts = digits
            .into_iter()
            .map(|d| self.encrypt(d))
            .collect::<Result<_, _>>()?;
        Ok(Encrypted { shape, cts })
    }

    /// Encrypts `value` in `n`-bit two's complement (`-2^(n-1) <= value <
    /// 2^(n-1)`), for an input made by [`Program::input_twos`].
    pub fn encrypt_int_twos(&self, value: impl Into<BigInt>, n: usize) -> Result<Encrypted, Error> {
        self.encrypt_digits(Shape::TwosInt { bits: n }, twos_digits(&value.into(), n)?)
    }

    /// Decrypts an integer; every digit must decrypt into {-1, 0, 1}.
    pub fn decrypt_int(&self, x: &Encrypted) -> Result<BigInt, Error> {
        let (Shape::Int { .. } | Shape::TwosInt { .. }) = x.shape else {
            return Err(Error::ShapeMismatch {
                what: "decrypt_int".into(),
                expected: Shape::Int {
                    digits: x.cts.len(),
                },
                found: x.shape,
            });
        };
        let mut ds = Vec::with_capacity(x.cts.len());
        for ct in &x.cts {
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

    /// Decrypts an integer to an `i64`, failing if the value does not fit.
    pub fn decrypt_i64(&self, x: &Encrypted) -> Result<i64, Error> {
        let v = self.decrypt_int(x)?;
        i64::try_from(&v).map_err(|_| Error::DoesNotFit {
            value: v.to_string(),
            target: "an i64".into(),
        })
    }

    /// Decrypts an integer to an `i128`, failing if the value does not fit.
    pub fn decrypt_i128(&self, x: &Encrypted) -> Result<i128, Error> {
        let v = self.decrypt_int(x)?;
        i128::try_from(&v).map_err(|_| Error::DoesNotFit {
            value: v.to_string(),
            target: "an i128".into(),
        })
    }

    /// Encrypts `value` as an `n`-bit word (unsigned, or two's complement
    /// when `signed`); a value out of range is an error.
    pub fn encrypt_word_of(
        &self,
        value: impl Into<BigInt>,
        n: usize,
        signed: bool,
    ) -> Result<Encrypted, Error> {
        let cts = word_bits(&value.into(), n, signed)?
            .into_iter()
            .map(|bit| self.encrypt(2 * bit as i64))
            .collect::<Result<_, _>>()?;
        Ok(Encrypted {
            shape: Shape::Word { bits: n, signed },
            cts,
        })
    }

    /// Encrypts a Rust integer as the word of its type (`u32` as a 32-bit
    /// unsigned word, ...).
    pub fn encrypt_word<T: Plain>(&self, value: T) -> Result<Encrypted, Error> {
        self.encrypt_word_of(value, T::BITS, T::SIGNED)
    }

    /// Encrypts a boolean (a one-bit word).
    pub fn encrypt_bool(&self, value: bool) -> Result<Encrypted, Error> {
        self.encrypt_word_of(value as u8, 1, false)
    }

    /// Decrypts a word of any width to its value.
    pub fn decrypt_word_value(&self, x: &Encrypted) -> Result<BigInt, Error> {
        let Shape::Word { signed, .. } = x.shape else {
            return Err(Error::ShapeMismatch {
                what: "decrypt a word".into(),
                expected: Shape::Word {
                    bits: x.cts.len(),
                    signed: false,
                },
                found: x.shape,
            });
        };
        let bits = x
            .cts
            .iter()
            .map(|ct| self.decrypt_bit(ct))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(crate::bits::value_of(&bits, signed))
    }

    /// Decrypts a word into the Rust integer of its type (the shape must
    /// match: a `u32` reads only a 32-bit unsigned word).
    pub fn decrypt_word<T: Plain>(&self, x: &Encrypted) -> Result<T, Error> {
        let want = Shape::Word {
            bits: T::BITS,
            signed: T::SIGNED,
        };
        if x.shape != want {
            return Err(Error::ShapeMismatch {
                what: "decrypt_word".into(),
                expected: want,
                found: x.shape,
            });
        }
        let v = self.decrypt_word_value(x)?;
        T::try_from(v.clone()).map_err(|_| Error::DoesNotFit {
            value: v.to_string(),
            target: want.to_string(),
        })
    }

    /// Decrypts a boolean (a one-bit word).
    pub fn decrypt_bool(&self, x: &Encrypted) -> Result<bool, Error> {
        let want = Shape::Word {
            bits: 1,
            signed: false,
        };
        if x.shape != want {
            return Err(Error::ShapeMismatch {
                what: "decrypt_bool".into(),
                expected: want,
                found: x.shape,
            });
        }
        self.decrypt_bit(&x.cts[0])
    }
}
