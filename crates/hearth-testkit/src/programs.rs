//! Random programs of the typed integer API ([`hearth::api::int`]), checked
//! against plain `BigInt` arithmetic: the differential test of composed
//! programs (`tests/programs.rs`) and `hearth-bench fuzz-programs`.
//!
//! A [`ProgramSpec`] is data: input digit strings (any signed-binary
//! representation, not only the binary one, or two's complement for inputs
//! made by [`Program::input_twos`]) and a list of [`Op`]s, each
//! reading earlier values by index (taken modulo the number of values so
//! far, so every index is valid and a shrinking test can change freely).
//! Every value, inputs included, is an output; each must decode to its
//! reference value with every digit in {-1, 0, 1}. An operation whose
//! result could exceed [`Limits::max_len`] digits is replaced by a negation,
//! so random programs stay small; the printed program shows what ran.

use std::fmt;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use rand::Rng;

use hearth::api::{CompiledProgram, Encrypted, Int, Program, Shape};
use hearth::backend::{Backend, ClearBackend};
use hearth::crypto::keys::{signed_digit, Ciphertext, ClientKey};
use hearth::crypto::params::ParameterSet;
use hearth::digits::{value_of, Comparison};
use hearth::error::Error;

/// One operation of a random program; `usize` fields name earlier values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `a + b`.
    Add(usize, usize),
    /// `a - b`.
    Sub(usize, usize),
    /// `a * b`.
    Mul(usize, usize),
    /// `-a`.
    Neg(usize),
    /// `a << k`.
    Shl(usize, u8),
    /// `a + c`.
    AddConst(usize, i64),
    /// `a - c`.
    SubConst(usize, i64),
    /// `a * k` (clear).
    ScalarMul(usize, i64),
    /// `a * a`.
    Square(usize),
    /// `signum(a)`.
    Signum(usize),
    /// `a <op> b`.
    Compare(usize, usize, Comparison),
    /// `max(a, b)`.
    Max(usize, usize),
    /// `min(a, b)`.
    Min(usize, usize),
    /// `|a|`.
    Abs(usize),
    /// `max(a, 0)`.
    Relu(usize),
    /// `a.round(i)`.
    Round(usize, u8),
    /// `a` converted to two's-complement bits.
    ToBits(usize),
    /// `Int::sum` of the values.
    Sum(Vec<usize>),
    /// A clear constant.
    Constant(i64),
    /// `Int::wrap(n)`, `Int::wrapping_add`, `Int::wrapping_mul`.
    Wrap(usize, u8),
    /// `a.wrapping_add(b, n)`.
    WrappingAdd(usize, usize, u8),
    /// `a.wrapping_mul(b, n)`.
    WrappingMul(usize, usize, u8),
    /// `Int::fused_sum`: products, clear multiples, a constant.
    FusedSum(Vec<(usize, usize)>, Vec<(usize, i64)>, i64),
    /// `Int::shr_floor(k)`.
    ShrFloor(usize, u8),
}

/// Limits of random programs.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Most inputs.
    pub max_inputs: usize,
    /// Most digits per input.
    pub max_input_len: usize,
    /// Most operations.
    pub max_ops: usize,
    /// Constants have up to this many bits (both signs).
    pub max_const_bits: u32,
    /// No value may need more digits than this (bigger operations are
    /// replaced by negations).
    pub max_len: usize,
}

impl Limits {
    /// Small programs for encrypted runs: up to 3 inputs of 0-8 digits,
    /// 1-6 operations, constants up to `2^16`, values up to 24 digits.
    pub fn small() -> Self {
        Limits {
            max_inputs: 3,
            max_input_len: 8,
            max_ops: 6,
            max_const_bits: 16,
            max_len: 24,
        }
    }
}

impl Default for Limits {
    /// Up to 4 inputs of 0-16 digits, 1-10 operations, constants up to
    /// `2^40`, values up to 48 digits.
    fn default() -> Self {
        Limits {
            max_inputs: 4,
            max_input_len: 16,
            max_ops: 10,
            max_const_bits: 40,
            max_len: 48,
        }
    }
}

/// A random program: input digit strings and operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramSpec {
    /// Each input's signed-binary digits, least significant first.
    pub inputs: Vec<Vec<i8>>,
    /// Which inputs are entered in two's complement
    /// ([`Program::input_twos`]; a missing entry is `false`): their digits
    /// are read as bits, nonzero meaning 1, the top one negated.
    pub twos: Vec<bool>,
    /// The operations; value `i` is input `i`, then one value per operation.
    pub ops: Vec<Op>,
    /// Operations whose result could exceed this many digits are replaced
    /// (see the module docs).
    pub max_len: usize,
}

/// `v` as an `n`-bit two's-complement integer (Rust's `as i{n}`).
fn wrapped(v: &BigInt, n: u8) -> BigInt {
    if n == 0 {
        return BigInt::zero();
    }
    let m = BigInt::one() << n as usize;
    let half = BigInt::one() << (n as usize - 1);
    (v + &half).mod_floor(&m) - half
}

/// Why a program failed the check.
#[derive(Debug)]
pub enum Failure {
    /// The builder refused a program that should build.
    Build(Error),
    /// The clear backend refused to run it.
    Run(Error),
    /// A value decoded wrongly, or one of its digits is not in {-1, 0, 1}.
    Mismatch {
        /// The value's index.
        value: usize,
        /// What the clear backend gave.
        got: BigInt,
        /// What BigInt arithmetic gives.
        expected: BigInt,
        /// The value's digits.
        digits: Vec<i64>,
    },
    /// The encrypted run decrypted to other digits than the clear backend's.
    Encrypted {
        /// The value's index.
        value: usize,
        /// The clear backend's digits.
        clear: Vec<u64>,
        /// The decrypted digits.
        decrypted: Vec<u64>,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Build(e) => write!(f, "does not build: {e}"),
            Failure::Run(e) => write!(f, "does not run: {e}"),
            Failure::Mismatch {
                value,
                got,
                expected,
                digits,
            } => write!(
                f,
                "v{value} = {got} (digits {digits:?}), expected {expected}"
            ),
            Failure::Encrypted {
                value,
                clear,
                decrypted,
            } => write!(
                f,
                "v{value}: encrypted run decrypts to digits {decrypted:?}, the clear backend gives {clear:?}"
            ),
        }
    }
}

/// What a passing check saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Values checked.
    pub values: usize,
    /// Bootstraps in the program.
    pub pbs: usize,
}

fn random_const(rng: &mut impl Rng, max_bits: u32) -> i64 {
    let bits = if rng.gen_bool(0.5) {
        rng.gen_range(0..=5)
    } else {
        rng.gen_range(0..=max_bits.min(62))
    };
    let v = rng.gen_range(0..=(1i64 << bits));
    if rng.gen_bool(0.5) {
        -v
    } else {
        v
    }
}

impl ProgramSpec {
    /// A random program within `shape`.
    pub fn random(rng: &mut impl Rng, shape: &Limits) -> Self {
        let inputs: Vec<Vec<i8>> = (0..rng.gen_range(1..=shape.max_inputs.max(1)))
            .map(|_| {
                let n = rng.gen_range(0..=shape.max_input_len);
                let sparse = rng.gen_bool(0.3);
                (0..n)
                    .map(|_| {
                        if sparse && rng.gen_bool(0.7) {
                            0
                        } else {
                            rng.gen_range(-1..=1)
                        }
                    })
                    .collect()
            })
            .collect();
        let k = shape.max_const_bits;
        let ops = (0..rng.gen_range(1..=shape.max_ops.max(1)))
            .map(|_| {
                let a = rng.gen::<u16>() as usize;
                let c = rng.gen::<u16>() as usize;
                let w = rng.gen_range(0..=20u8);
                match rng.gen_range(0..24) {
                    0 => Op::Add(a, c),
                    1 => Op::Sub(a, c),
                    2 => Op::Mul(a, c),
                    3 => Op::Neg(a),
                    4 => Op::Shl(a, rng.gen_range(0..=8)),
                    5 => Op::AddConst(a, random_const(rng, k)),
                    6 => Op::SubConst(a, random_const(rng, k)),
                    7 => Op::ScalarMul(a, random_const(rng, k)),
                    8 => Op::Square(a),
                    9 => Op::Signum(a),
                    10 => Op::Compare(a, c, Comparison::ALL[rng.gen_range(0..6)]),
                    11 => Op::Max(a, c),
                    12 => Op::Min(a, c),
                    13 => Op::Abs(a),
                    14 => Op::Relu(a),
                    15 => Op::Round(a, rng.gen_range(0..=20)),
                    16 => Op::ToBits(a),
                    17 => Op::Sum(
                        (0..rng.gen_range(0..=8))
                            .map(|_| rng.gen::<u16>() as usize)
                            .collect(),
                    ),
                    18 => Op::Constant(random_const(rng, k)),
                    19 => Op::Wrap(a, w),
                    20 => Op::WrappingAdd(a, c, w),
                    21 => Op::WrappingMul(a, c, w),
                    22 => Op::FusedSum(
                        (0..rng.gen_range(0..=3))
                            .map(|_| (rng.gen::<u16>() as usize, rng.gen::<u16>() as usize))
                            .collect(),
                        (0..rng.gen_range(0..=3))
                            .map(|_| (rng.gen::<u16>() as usize, random_const(rng, k)))
                            .collect(),
                        random_const(rng, k),
                    ),
                    _ => Op::ShrFloor(a, rng.gen_range(0..=10)),
                }
            })
            .collect();
        let twos = (0..inputs.len()).map(|_| rng.gen_bool(0.4)).collect();
        ProgramSpec {
            inputs,
            twos,
            ops,
            max_len: shape.max_len,
        }
    }

    /// The operations that run: indices resolved, oversized operations
    /// replaced by negations. Lengths are upper bounds from each
    /// operation's documented length rule.
    pub fn normalized(&self) -> Vec<Op> {
        let mut len: Vec<usize> = self.inputs.iter().map(Vec::len).collect();
        let mut ops = Vec::with_capacity(self.ops.len());
        for op in &self.ops {
            let n = len.len();
            let r = |i: usize| i % n;
            let bits = |c: i64| 64 - c.unsigned_abs().leading_zeros() as usize;
            let (op, l) = match *op {
                Op::Add(a, c) => (Op::Add(r(a), r(c)), len[r(a)].max(len[r(c)]) + 1),
                Op::Sub(a, c) => (Op::Sub(r(a), r(c)), len[r(a)].max(len[r(c)]) + 1),
                Op::Mul(a, c) => (Op::Mul(r(a), r(c)), len[r(a)] + len[r(c)] + 1),
                Op::Neg(a) => (Op::Neg(r(a)), len[r(a)]),
                Op::Shl(a, k) => (Op::Shl(r(a), k), len[r(a)] + k as usize),
                Op::AddConst(a, c) => (Op::AddConst(r(a), c), len[r(a)].max(bits(c)) + 1),
                Op::SubConst(a, c) => (Op::SubConst(r(a), c), len[r(a)].max(bits(c)) + 1),
                Op::ScalarMul(a, c) => (Op::ScalarMul(r(a), c), len[r(a)] + bits(c) + 2),
                Op::Square(a) => (Op::Square(r(a)), 2 * len[r(a)] + 1),
                Op::Signum(a) => (Op::Signum(r(a)), 1),
                Op::Compare(a, c, cmp) => (Op::Compare(r(a), r(c), cmp), 1),
                Op::Max(a, c) => (Op::Max(r(a), r(c)), len[r(a)].max(len[r(c)])),
                Op::Min(a, c) => (Op::Min(r(a), r(c)), len[r(a)].max(len[r(c)])),
                Op::Abs(a) => (Op::Abs(r(a)), len[r(a)]),
                Op::Relu(a) => (Op::Relu(r(a)), len[r(a)]),
                Op::Round(a, i) => (Op::Round(r(a), i), len[r(a)] + 1),
                Op::ToBits(a) => (Op::ToBits(r(a)), len[r(a)] + 1),
                Op::Sum(ref ts) => {
                    let ts: Vec<usize> = ts.iter().map(|&t| r(t)).collect();
                    let widest = ts.iter().map(|&t| len[t]).max().unwrap_or(0);
                    let log = usize::BITS - ts.len().leading_zeros();
                    (Op::Sum(ts), widest + log as usize + 2)
                }
                Op::Constant(c) => (Op::Constant(c), bits(c)),
                Op::Wrap(a, w) => (Op::Wrap(r(a), w), w as usize),
                Op::WrappingAdd(a, c, w) => (Op::WrappingAdd(r(a), r(c), w), w as usize),
                Op::WrappingMul(a, c, w) => (Op::WrappingMul(r(a), r(c), w), w as usize),
                Op::FusedSum(ref ps, ref ss, c) => {
                    let ps: Vec<(usize, usize)> = ps.iter().map(|&(a, b)| (r(a), r(b))).collect();
                    let ss: Vec<(usize, i64)> = ss.iter().map(|&(a, k)| (r(a), k)).collect();
                    let widest = ps
                        .iter()
                        .map(|&(a, b)| len[a] + len[b])
                        .chain(ss.iter().map(|&(a, k)| len[a] + bits(k) + 1))
                        .chain([bits(c)])
                        .max()
                        .unwrap_or(0);
                    let count = 1 + ps.len() + ss.len();
                    let log = usize::BITS - count.leading_zeros();
                    (Op::FusedSum(ps, ss, c), widest + log as usize + 2)
                }
                Op::ShrFloor(a, k) => (Op::ShrFloor(r(a), k), len[r(a)] + 2),
            };
            let (op, l) = if l > self.max_len {
                let a = match op {
                    Op::Sum(ref ts) => ts.first().copied().unwrap_or(0),
                    Op::FusedSum(ref ps, _, _) => ps.first().map_or(0, |p| p.0),
                    Op::Add(a, _)
                    | Op::ShrFloor(a, _)
                    | Op::Sub(a, _)
                    | Op::Mul(a, _)
                    | Op::Shl(a, _)
                    | Op::AddConst(a, _)
                    | Op::SubConst(a, _)
                    | Op::ScalarMul(a, _)
                    | Op::Square(a)
                    | Op::Round(a, _)
                    | Op::ToBits(a)
                    | Op::Max(a, _)
                    | Op::Min(a, _)
                    | Op::Abs(a)
                    | Op::Relu(a)
                    | Op::Neg(a)
                    | Op::Signum(a)
                    | Op::Compare(a, _, _)
                    | Op::Wrap(a, _)
                    | Op::WrappingAdd(a, _, _)
                    | Op::WrappingMul(a, _, _) => a,
                    Op::Constant(_) => 0,
                };
                (Op::Neg(a), len[a])
            } else {
                (op, l)
            };
            ops.push(op);
            len.push(l);
        }
        ops
    }

    /// Builds the program (every value an output) and the reference value
    /// of each output.
    pub fn build(
        &self,
        params: &'static ParameterSet,
    ) -> Result<(CompiledProgram, Vec<BigInt>), Error> {
        let p = Program::new(params);
        let mut vals: Vec<(Int, BigInt)> = Vec::new();
        for (i, digits) in self.input_digits().iter().enumerate() {
            let ds: Vec<i64> = digits.iter().map(|&d| d as i64).collect();
            let x = if self.is_twos(i) {
                p.input_twos(digits.len())
            } else {
                p.input(digits.len())
            };
            vals.push((x, value_of(&ds)));
        }
        for op in self.normalized() {
            let v = |i: usize| &vals[i].1;
            let x = |i: usize| &vals[i].0;
            let new = match op {
                Op::Add(a, c) => (x(a) + x(c), v(a) + v(c)),
                Op::Sub(a, c) => (x(a) - x(c), v(a) - v(c)),
                Op::Mul(a, c) => (x(a) * x(c), v(a) * v(c)),
                Op::Neg(a) => (-x(a), -v(a)),
                Op::Shl(a, k) => (x(a) << k as usize, v(a) << k as usize),
                Op::AddConst(a, c) => (x(a) + c, v(a) + c),
                Op::SubConst(a, c) => (x(a) - c, v(a) - c),
                Op::ScalarMul(a, c) => (x(a) * c, v(a) * c),
                Op::Square(a) => (x(a).square(), v(a) * v(a)),
                Op::Signum(a) => (x(a).signum(), v(a).signum()),
                Op::Compare(a, c, cmp) => {
                    let s = (v(a) - v(c)).signum();
                    let r = BigInt::from(cmp.holds_for_sign(i64::try_from(&s).unwrap_or(0)) as i64);
                    let y = match cmp {
                        Comparison::Lt => x(a).lt(x(c)),
                        Comparison::Le => x(a).le(x(c)),
                        Comparison::Gt => x(a).gt(x(c)),
                        Comparison::Ge => x(a).ge(x(c)),
                        Comparison::Eq => x(a).eq(x(c)),
                        Comparison::Ne => x(a).ne(x(c)),
                    };
                    (y, r)
                }
                Op::Max(a, c) => (x(a).max(x(c)), v(a).max(v(c)).clone()),
                Op::Min(a, c) => (x(a).min(x(c)), v(a).min(v(c)).clone()),
                Op::Abs(a) => (x(a).abs(), v(a).abs()),
                Op::Relu(a) => (x(a).relu(), v(a).max(&BigInt::zero()).clone()),
                Op::Round(a, i) => {
                    let r = if i == 0 {
                        v(a).clone()
                    } else {
                        let half = BigInt::one() << (i as usize - 1);
                        (v(a) + half).div_floor(&(BigInt::one() << i as usize)) << i as usize
                    };
                    (x(a).round(i as usize), r)
                }
                Op::ToBits(a) => {
                    let y = x(a).to_bits_as_int();
                    let modulus = BigInt::one() << (x(a).len() + 1);
                    (y, v(a).mod_floor(&modulus))
                }
                Op::Sum(ref ts) => {
                    let ints: Vec<Int> = ts.iter().map(|&t| x(t).clone()).collect();
                    let total = ts.iter().map(|&t| v(t)).sum();
                    (Int::sum(&p, &ints), total)
                }
                Op::Constant(c) => (p.constant(c), BigInt::from(c)),
                Op::Wrap(a, w) => (x(a).wrap(w as usize), wrapped(v(a), w)),
                Op::WrappingAdd(a, c, w) => (
                    x(a).wrapping_add(x(c), w as usize),
                    wrapped(&(v(a) + v(c)), w),
                ),
                Op::WrappingMul(a, c, w) => (
                    x(a).wrapping_mul(x(c), w as usize),
                    wrapped(&(v(a) * v(c)), w),
                ),
                Op::FusedSum(ref ps, ref ss, c) => {
                    let ks: Vec<BigInt> = ss.iter().map(|&(_, k)| BigInt::from(k)).collect();
                    let pairs: Vec<(&Int, &Int)> = ps.iter().map(|&(a, b)| (x(a), x(b))).collect();
                    let scaled: Vec<(&Int, &BigInt)> =
                        ss.iter().zip(&ks).map(|(&(a, _), k)| (x(a), k)).collect();
                    let total: BigInt = ps.iter().map(|&(a, b)| v(a) * v(b)).sum::<BigInt>()
                        + ss.iter()
                            .zip(&ks)
                            .map(|(&(a, _), k)| v(a) * k)
                            .sum::<BigInt>()
                        + c;
                    (Int::fused_sum(&p, &pairs, &scaled, &BigInt::from(c)), total)
                }
                Op::ShrFloor(a, k) => (
                    x(a).shr_floor(k as usize),
                    v(a).div_floor(&(BigInt::one() << k as usize)),
                ),
            };
            vals.push(new);
        }
        for (x, _) in &vals {
            p.output(x);
        }
        let expected = vals.into_iter().map(|(_, v)| v).collect();
        Ok((p.build()?, expected))
    }

    /// Whether input `i` is entered in two's complement.
    pub fn is_twos(&self, i: usize) -> bool {
        self.twos.get(i).copied().unwrap_or(false)
    }

    /// Each input's digits as they are encrypted: two's-complement inputs
    /// as bits (nonzero digits are 1, the top one negated).
    pub fn input_digits(&self) -> Vec<Vec<i8>> {
        self.inputs
            .iter()
            .enumerate()
            .map(|(i, ds)| {
                if !self.is_twos(i) {
                    return ds.clone();
                }
                let n = ds.len();
                ds.iter()
                    .enumerate()
                    .map(|(j, &d)| {
                        let bit = (d != 0) as i8;
                        if j + 1 == n {
                            -bit
                        } else {
                            bit
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The clear input digits (in `Z_{2^pi}`) of each input.
    pub fn clear_inputs(&self, params: &ParameterSet) -> Vec<Vec<u64>> {
        let m = params.message_modulus() as i64;
        self.input_digits()
            .iter()
            .map(|ds| {
                ds.iter()
                    .map(|&d| (d as i64).rem_euclid(m) as u64)
                    .collect()
            })
            .collect()
    }

    /// Builds, runs on the clear backend and compares every value with
    /// its reference.
    pub fn check(&self, params: &'static ParameterSet) -> Result<Checked, Failure> {
        let (prog, expected) = self.build(params).map_err(Failure::Build)?;
        let out = prog
            .run(&ClearBackend, &self.clear_inputs(params))
            .map_err(Failure::Run)?;
        check_outputs(params, &out, &expected)?;
        Ok(Checked {
            values: expected.len(),
            pbs: prog.circuit().stats().pbs,
        })
    }
}

impl ProgramSpec {
    /// Runs encrypted on `backend` and checks that every output decrypts to
    /// the clear backend's digits, digit for digit (and that those are
    /// right).
    pub fn check_encrypted<B: Backend<Digit = Ciphertext>>(
        &self,
        client: &ClientKey,
        backend: &B,
    ) -> Result<Checked, Failure> {
        self.check_encrypted_then(client, backend, |_, _| Ok(()))
    }

    /// [`ProgramSpec::check_encrypted`] on `server`'s cpu backend, then the
    /// outputs packed ([`crate::packing::packed_equals_full`]). `true` when
    /// they could be packed.
    pub fn check_packed(
        &self,
        client: &ClientKey,
        server: &hearth::ServerKey,
    ) -> Result<bool, Failure> {
        let cpu = hearth::backend::CpuBackend::new(server, Some(2)).map_err(Failure::Run)?;
        let mut packed = false;
        self.check_encrypted_then(client, &cpu, |prog, out| {
            packed = crate::packing::packed_equals_full(client, server, prog, out)?;
            Ok(())
        })?;
        Ok(packed)
    }

    fn check_encrypted_then<B: Backend<Digit = Ciphertext>>(
        &self,
        client: &ClientKey,
        backend: &B,
        then: impl FnOnce(&CompiledProgram, &[Encrypted]) -> Result<(), Failure>,
    ) -> Result<Checked, Failure> {
        let params = client.params();
        let (prog, expected) = self.build(params).map_err(Failure::Build)?;
        let clear = prog
            .run(&ClearBackend, &self.clear_inputs(params))
            .map_err(Failure::Run)?;
        check_outputs(params, &clear, &expected)?;
        let inputs = self
            .input_digits()
            .iter()
            .enumerate()
            .map(|(i, ds)| {
                let cts = ds
                    .iter()
                    .map(|&d| client.encrypt(d as i64))
                    .collect::<Result<_, _>>()?;
                let shape = if self.is_twos(i) {
                    Shape::TwosInt { bits: ds.len() }
                } else {
                    Shape::Int { digits: ds.len() }
                };
                Encrypted::new(shape, cts)
            })
            .collect::<Result<Vec<_>, Error>>()
            .map_err(Failure::Run)?;
        let out = prog.run_encrypted(backend, &inputs).map_err(Failure::Run)?;
        for (value, (o, c)) in out.iter().zip(&clear).enumerate() {
            let decrypted = o
                .ciphertexts()
                .iter()
                .map(|ct| client.decrypt(ct))
                .collect::<Result<Vec<_>, _>>()
                .map_err(Failure::Run)?;
            if &decrypted != c {
                return Err(Failure::Encrypted {
                    value,
                    clear: c.clone(),
                    decrypted,
                });
            }
        }
        then(&prog, &out)?;
        Ok(Checked {
            values: expected.len(),
            pbs: prog.circuit().stats().pbs,
        })
    }

    /// A smaller program that still `fails`: greedily drops operations and
    /// inputs, shortens inputs and zeroes digits while the failure stays.
    pub fn shrink(&self, fails: impl Fn(&ProgramSpec) -> bool) -> ProgramSpec {
        let start = ProgramSpec {
            ops: self.normalized(),
            ..self.clone()
        };
        super::shrink_greedy(
            start,
            |best| {
                let mut candidates = super::without_each(best, 0, |s| &mut s.ops);
                if best.inputs.len() > 1 {
                    for i in 0..best.inputs.len() {
                        let mut c = best.clone();
                        c.inputs.remove(i);
                        if i < c.twos.len() {
                            c.twos.remove(i);
                        }
                        candidates.push(c);
                    }
                }
                for i in 0..best.inputs.len() {
                    if best.is_twos(i) {
                        let mut c = best.clone();
                        c.twos[i] = false;
                        candidates.push(c);
                    }
                    if !best.inputs[i].is_empty() {
                        let mut c = best.clone();
                        c.inputs[i].pop();
                        candidates.push(c);
                    }
                    for j in 0..best.inputs[i].len() {
                        if best.inputs[i][j] != 0 {
                            let mut c = best.clone();
                            c.inputs[i][j] = 0;
                            candidates.push(c);
                        }
                    }
                }
                candidates
            },
            fails,
        )
    }
}

/// Compares clear output digits with reference values.
pub fn check_outputs(
    params: &ParameterSet,
    out: &[Vec<u64>],
    expected: &[BigInt],
) -> Result<(), Failure> {
    for (i, (o, e)) in out.iter().zip(expected).enumerate() {
        let digits: Vec<i64> = o.iter().map(|&d| signed_digit(params, d)).collect();
        let got = value_of(&digits);
        if &got != e || digits.iter().any(|d| d.abs() > 1) {
            return Err(Failure::Mismatch {
                value: i,
                got,
                expected: e.clone(),
                digits,
            });
        }
    }
    Ok(())
}

impl fmt::Display for ProgramSpec {
    /// The program as it runs (see [`ProgramSpec::normalized`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, ds) in self.input_digits().iter().enumerate() {
            let v: Vec<i64> = ds.iter().map(|&d| d as i64).collect();
            let kind = if self.is_twos(i) {
                "input_twos"
            } else {
                "input"
            };
            writeln!(
                f,
                "let v{i} = {kind}({} digits) = {}; // digits {ds:?}",
                ds.len(),
                value_of(&v)
            )?;
        }
        let n = self.inputs.len();
        for (j, op) in self.normalized().iter().enumerate() {
            let rhs = match op {
                Op::Add(a, c) => format!("&v{a} + &v{c}"),
                Op::Sub(a, c) => format!("&v{a} - &v{c}"),
                Op::Mul(a, c) => format!("&v{a} * &v{c}"),
                Op::Neg(a) => format!("-&v{a}"),
                Op::Shl(a, k) => format!("&v{a} << {k}"),
                Op::AddConst(a, c) => format!("&v{a} + {c}"),
                Op::SubConst(a, c) => format!("&v{a} - {c}"),
                Op::ScalarMul(a, c) => format!("&v{a} * {c}"),
                Op::Square(a) => format!("v{a}.square()"),
                Op::Wrap(a, w) => format!("v{a}.wrap({w})"),
                Op::WrappingAdd(a, c, w) => format!("v{a}.wrapping_add(&v{c}, {w})"),
                Op::WrappingMul(a, c, w) => format!("v{a}.wrapping_mul(&v{c}, {w})"),
                Op::Signum(a) => format!("v{a}.signum()"),
                Op::Compare(a, c, cmp) => {
                    format!("v{a}.{}(&v{c})", format!("{cmp:?}").to_lowercase())
                }
                Op::Max(a, c) => format!("v{a}.max(&v{c})"),
                Op::Min(a, c) => format!("v{a}.min(&v{c})"),
                Op::Abs(a) => format!("v{a}.abs()"),
                Op::Relu(a) => format!("v{a}.relu()"),
                Op::Round(a, i) => format!("v{a}.round({i})"),
                Op::ToBits(a) => format!("v{a}.to_bits_as_int()"),
                Op::Sum(ts) => {
                    let names: Vec<String> = ts.iter().map(|t| format!("v{t}")).collect();
                    format!("Int::sum(&p, &[{}])", names.join(", "))
                }
                Op::Constant(c) => format!("p.constant({c})"),
                Op::FusedSum(ps, ss, c) => {
                    let ps: Vec<String> =
                        ps.iter().map(|(a, b)| format!("(&v{a}, &v{b})")).collect();
                    let ss: Vec<String> = ss.iter().map(|(a, k)| format!("(&v{a}, {k})")).collect();
                    format!(
                        "Int::fused_sum(&p, &[{}], &[{}], {c})",
                        ps.join(", "),
                        ss.join(", ")
                    )
                }
                Op::ShrFloor(a, k) => format!("v{a}.shr_floor({k})"),
            };
            writeln!(f, "let v{} = {rhs};", n + j)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth::crypto::params::INSECURE_TEST_DIGITS as P;
    use rand::SeedableRng;

    #[test]
    fn oversized_operations_become_negations() {
        let spec = ProgramSpec {
            inputs: vec![vec![1; 16]],
            twos: vec![],
            ops: vec![Op::Mul(0, 0), Op::Mul(1, 1), Op::Shl(7, 3)],
            max_len: 40,
        };
        assert_eq!(
            spec.normalized(),
            vec![Op::Mul(0, 0), Op::Neg(1), Op::Shl(1, 3)]
        );
        assert!(spec.to_string().contains("let v2 = -&v1;"));
    }

    #[test]
    fn a_wrong_reference_is_caught() {
        let spec = ProgramSpec {
            inputs: vec![vec![1, 0, -1]],
            twos: vec![true],
            ops: vec![Op::AddConst(0, 5)],
            max_len: 40,
        };
        let (prog, mut expected) = spec.build(&P).unwrap();
        let out = prog.run(&ClearBackend, &spec.clear_inputs(&P)).unwrap();
        assert!(check_outputs(&P, &out, &expected).is_ok());
        expected[1] += 1;
        assert!(matches!(
            check_outputs(&P, &out, &expected),
            Err(Failure::Mismatch { value: 1, .. })
        ));
    }

    #[test]
    fn random_programs_pass() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..200 {
            let spec = ProgramSpec::random(&mut rng, &Limits::default());
            if let Err(e) = spec.check(&P) {
                panic!("{e}\n{spec}");
            }
        }
    }
}
