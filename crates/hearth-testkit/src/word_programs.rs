//! Random programs of fixed-width words ([`hearth::api::Word`]), checked
//! against Rust's wrapping integer arithmetic: the bits family's
//! differential test (`tests/programs.rs`) and
//! `hearth-bench fuzz-programs --family words`.
//!
//! A [`WordSpec`] is data: a word type (4, 8, 16, 32 or 64 bits, signed or
//! not), input values and [`WordOp`]s reading earlier values by index
//! (modulo the number of values so far). Every value is an output and must
//! equal the reference computed on `u128` with the width's mask, but those
//! that only one later sum, difference or product reads: the builder may
//! fuse them into it ([`WordSpec::outputs`]), so they are checked through
//! it.
//!
//! Some operations leave the program's type and come back: through every
//! other word type `U8` .. `I128` (Rust's `as`), through `Int` (on the
//! digits family's sets, the key both share) and through `Bool` gates, so
//! one program mixes every integer type under one key.

use std::fmt;

use num_bigint::BigInt;
use rand::Rng;

use super::programs::{Checked, Failure};
use hearth::api::{clear_word, clear_word_value, CompiledProgram, Encrypted, Program, Word};
use hearth::backend::{Backend, ClearBackend};
use hearth::crypto::keys::{Ciphertext, ClientKey};
use hearth::crypto::params::ParameterSet;
use hearth::error::Error;

/// One operation; `usize` fields name earlier values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordOp {
    /// `a + b` (wrapping).
    Add(usize, usize),
    /// `a - b` (wrapping).
    Sub(usize, usize),
    /// `a * b` (wrapping).
    Mul(usize, usize),
    /// `a / b`.
    Div(usize, usize),
    /// `a % b`.
    Rem(usize, usize),
    /// `a & b`.
    And(usize, usize),
    /// `a | b`.
    Or(usize, usize),
    /// `a ^ b`.
    Xor(usize, usize),
    /// `-a` (wrapping).
    Neg(usize),
    /// `!a`.
    Not(usize),
    /// `a << k`.
    Shl(usize, u8),
    /// `a >> k`.
    Shr(usize, u8),
    /// `a.rotate_left(k)`.
    RotateLeft(usize, u8),
    /// `a << b` by an encrypted amount.
    ShlBy(usize, usize),
    /// `a >> b` by an encrypted amount.
    ShrBy(usize, usize),
    /// `a.rotate_right(b)` by an encrypted amount.
    RotateRightBy(usize, usize),
    /// `min(a, b)`.
    Min(usize, usize),
    /// `max(a, b)`.
    Max(usize, usize),
    /// `if a < b { c } else { d }`.
    SelectLt(usize, usize, usize, usize),
    /// `a + c`.
    AddConst(usize, i64),
    /// `a * c`.
    MulConst(usize, i64),
    /// Division and remainder by a clear constant (its low bits).
    DivConst(usize, i64),
    /// `a % c`.
    RemConst(usize, i64),
    /// `a.count_ones()`.
    CountOnes(usize),
    /// `a.leading_zeros()`.
    LeadingZeros(usize),
    /// `a.reverse_bits()`.
    ReverseBits(usize),
    /// The overflow flag of `a + b`, as 0 / 1.
    AddOverflows(usize, usize),
    /// Rust's `checked_div(a, b).is_some()`, as 0 / 1.
    DivOk(usize, usize),
    /// `a == b`, as a word.
    Eq(usize, usize),
    /// `a < b`, as a word.
    Lt(usize, usize),
    /// `Word::fused_sum(&[(a, b)], &[(c, k)], bias)`: `a b + k c + bias`.
    MulAdd(usize, usize, usize, i64, i64),
    /// `((a as T) >> (k % T::BITS)) as W` for word type `T` = [`CAST_TYPES`]`[t]`.
    CastShr(usize, u8, u8),
    /// `(a as T).max(b as T) as W` for `T` = [`CAST_TYPES`]`[t]`.
    CastMax(usize, usize, u8),
    /// `W::from_int(a.to_int() * k + b.to_int())`: through `Int` (on sets
    /// without the digits family, the same value from word operations).
    ViaInt(usize, usize, i64),
    /// `W::from_int(a.to_int().lt(b.to_int()))`: `Int`'s 0 / 1 comparison
    /// (without the digits family: `a < b` on words).
    IntLt(usize, usize),
    /// `((a < b) & !(c == d)) | ((b == c) ^ (a < d))` on `Bool`s, as a word.
    BoolMix(usize, usize, usize, usize),
    /// A table scan: `r = 0`, then for `i` in `0..4`
    /// `r = r ^ (a == k_i).select(b.rotate_left(i), 0)` (`|` for flag bit
    /// 0; the select's sides swapped for bit 1; the constant on the left
    /// of `==` for bit 2), with `k_i = k + i * step`: distinct keys (step
    /// 1 or 2) or one repeated (step 0), so equalities are exclusive or not.
    Scan(usize, usize, u8, u8, u8),
}

/// The word types [`WordOp::CastShr`] and [`WordOp::CastMax`] pass
/// through: (bits, signed).
pub const CAST_TYPES: [(usize, bool); 10] = [
    (8, false),
    (8, true),
    (16, false),
    (16, true),
    (32, false),
    (32, true),
    (64, false),
    (64, true),
    (128, false),
    (128, true),
];

impl WordOp {
    /// Number of kinds [`WordOp::from_parts`] makes.
    pub const KINDS: u8 = 37;

    /// Operation `kind` (modulo [`WordOp::KINDS`]) on operands `a .. d`
    /// (indices, shift amounts, constants): one place for the random
    /// generator and the property test's strategy.
    pub fn from_parts(kind: u8, a: u8, b: u8, c: u8, d: u8) -> WordOp {
        let (a, b, cu, du) = (a as usize, b as usize, c as usize, d as usize);
        match kind % Self::KINDS {
            0 => WordOp::Add(a, b),
            1 => WordOp::Sub(a, b),
            2 => WordOp::Mul(a, b),
            3 => WordOp::Div(a, b),
            4 => WordOp::Rem(a, b),
            5 => WordOp::And(a, b),
            6 => WordOp::Or(a, b),
            7 => WordOp::Xor(a, b),
            8 => WordOp::Neg(a),
            9 => WordOp::Not(a),
            10 => WordOp::Shl(a, c),
            11 => WordOp::Shr(a, c),
            12 => WordOp::RotateLeft(a, c),
            13 => WordOp::ShlBy(a, b),
            14 => WordOp::ShrBy(a, b),
            15 => WordOp::RotateRightBy(a, b),
            16 => WordOp::Min(a, b),
            17 => WordOp::Max(a, b),
            18 => WordOp::SelectLt(a, b, cu, du),
            19 => WordOp::AddConst(a, (c as i64 - 128) * (d as i64 + 1)),
            20 => WordOp::MulConst(a, c as i64 - 128),
            21 => WordOp::CountOnes(a),
            22 => WordOp::LeadingZeros(a),
            23 => WordOp::ReverseBits(a),
            24 => WordOp::AddOverflows(a, b),
            25 => WordOp::DivOk(a, b),
            26 => WordOp::Eq(a, b),
            27 => WordOp::Lt(a, b),
            28 => WordOp::DivConst(a, (c as i64 - 128) * (d as i64 + 1)),
            29 => WordOp::RemConst(a, (c as i64 - 128) * (d as i64 + 1)),
            30 => WordOp::MulAdd(a, b, cu, d as i64 - 128, (c as i64 - 128) * 997),
            31 => WordOp::CastShr(a, c % CAST_TYPES.len() as u8, d),
            32 => WordOp::CastMax(a, b, c % CAST_TYPES.len() as u8),
            33 => WordOp::ViaInt(a, b, c as i64 - 128),
            34 => WordOp::IntLt(a, b),
            35 => WordOp::BoolMix(a, b, cu, du),
            // Small keys often (inputs are often small).
            _ => WordOp::Scan(a, b, if d & 8 == 0 { c % 4 } else { c }, d % 3, d >> 4),
        }
    }
}

/// A random word program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordSpec {
    /// Word width.
    pub bits: usize,
    /// Whether the words are signed.
    pub signed: bool,
    /// Input values, as bit patterns of the width.
    pub inputs: Vec<u64>,
    /// The operations; value `i` is input `i`, then one value per operation.
    pub ops: Vec<WordOp>,
}

fn mask(bits: usize) -> u128 {
    u128::MAX >> (128 - bits)
}

/// Rust's `as` on bit patterns: extended by the source's signedness, then
/// truncated to `to_bits`.
fn cast(v: u128, from: &Ref, to_bits: usize) -> u128 {
    let wide = if from.signed { from.s(v) as u128 } else { v };
    wide & mask(to_bits)
}

/// The reference semantics on bit patterns of `bits` bits.
struct Ref {
    bits: usize,
    signed: bool,
}

impl Ref {
    fn m(&self) -> u128 {
        mask(self.bits)
    }

    fn s(&self, v: u128) -> i128 {
        ((v << (128 - self.bits)) as i128) >> (128 - self.bits)
    }

    fn top(&self, v: u128) -> u128 {
        (v >> (self.bits - 1)) & 1
    }

    fn div_rem(&self, x: u128, y: u128) -> (u128, u128) {
        let m = self.m();
        if y == 0 {
            let q = if self.signed && self.s(x) < 0 { 1 } else { m };
            return (q, x);
        }
        if self.signed {
            let (sx, sy) = (self.s(x), self.s(y));
            (
                (sx.wrapping_div(sy) as u128) & m,
                (sx.wrapping_rem(sy) as u128) & m,
            )
        } else {
            (x / y, x % y)
        }
    }

    fn lt(&self, x: u128, y: u128) -> bool {
        if self.signed {
            self.s(x) < self.s(y)
        } else {
            x < y
        }
    }

    /// The integer a pattern of at most 64 bits stands for.
    fn value(&self, x: u128) -> i128 {
        if self.signed {
            self.s(x)
        } else {
            x as i128
        }
    }

    fn shr(&self, x: u128, k: u32) -> u128 {
        if self.signed {
            (self.s(x) >> k) as u128
        } else {
            x >> k
        }
    }

    /// `op` of [`WordOp::CastShr`] / [`WordOp::CastMax`] in type `t`.
    fn in_type(&self, t: u8, x: u128, y: u128, op: impl Fn(&Ref, u128, u128) -> u128) -> u128 {
        let (bits, signed) = CAST_TYPES[t as usize % CAST_TYPES.len()];
        let to = Ref { bits, signed };
        let r = op(&to, cast(x, self, bits), cast(y, self, bits));
        cast(r, &to, self.bits)
    }

    fn eval(&self, op: &WordOp, v: &[u128]) -> u128 {
        let (n, m) = (self.bits as u32, self.m());
        let rot = |x: u128, k: u32| {
            let k = k % n;
            if k == 0 {
                x
            } else {
                ((x << k) | (x >> (n - k))) & m
            }
        };
        let r = match *op {
            WordOp::Add(a, b) => v[a].wrapping_add(v[b]),
            WordOp::Sub(a, b) => v[a].wrapping_sub(v[b]),
            WordOp::Mul(a, b) => v[a].wrapping_mul(v[b]),
            WordOp::Div(a, b) => self.div_rem(v[a], v[b]).0,
            WordOp::Rem(a, b) => self.div_rem(v[a], v[b]).1,
            WordOp::And(a, b) => v[a] & v[b],
            WordOp::Or(a, b) => v[a] | v[b],
            WordOp::Xor(a, b) => v[a] ^ v[b],
            WordOp::Neg(a) => v[a].wrapping_neg(),
            WordOp::Not(a) => !v[a],
            WordOp::Shl(a, k) => v[a] << (k as u32 % n),
            WordOp::Shr(a, k) => self.shr(v[a], k as u32 % n),
            WordOp::RotateLeft(a, k) => rot(v[a], k as u32),
            WordOp::ShlBy(a, b) => v[a] << (v[b] as u32 % n),
            WordOp::ShrBy(a, b) => self.shr(v[a], v[b] as u32 % n),
            WordOp::RotateRightBy(a, b) => rot(v[a], n - (v[b] as u32 % n)),
            WordOp::Min(a, b) => {
                if self.lt(v[b], v[a]) {
                    v[b]
                } else {
                    v[a]
                }
            }
            WordOp::Max(a, b) => {
                if self.lt(v[a], v[b]) {
                    v[b]
                } else {
                    v[a]
                }
            }
            WordOp::SelectLt(a, b, c, d) => {
                if self.lt(v[a], v[b]) {
                    v[c]
                } else {
                    v[d]
                }
            }
            WordOp::AddConst(a, c) => v[a].wrapping_add(c as u128),
            WordOp::MulConst(a, c) => v[a].wrapping_mul(c as i128 as u128),
            WordOp::MulAdd(a, b, c, k, bias) => v[a]
                .wrapping_mul(v[b])
                .wrapping_add(v[c].wrapping_mul(k as i128 as u128))
                .wrapping_add(bias as i128 as u128),
            WordOp::DivConst(a, c) => self.div_rem(v[a], c as i128 as u128 & m).0,
            WordOp::RemConst(a, c) => self.div_rem(v[a], c as i128 as u128 & m).1,
            WordOp::CountOnes(a) => v[a].count_ones() as u128,
            WordOp::LeadingZeros(a) => (v[a].leading_zeros() - (128 - n)) as u128,
            WordOp::ReverseBits(a) => v[a].reverse_bits() >> (128 - n),
            WordOp::AddOverflows(a, b) => {
                let s = v[a].wrapping_add(v[b]) & m;
                if self.signed {
                    (self.top(v[a]) == self.top(v[b]) && self.top(s) != self.top(v[a])) as u128
                } else {
                    (v[a] + v[b] > m) as u128
                }
            }
            WordOp::DivOk(a, b) => {
                let min = 1u128 << (n - 1);
                let bad = v[b] == 0 || (self.signed && v[a] == min && v[b] == m);
                (!bad) as u128
            }
            WordOp::Eq(a, b) => (v[a] == v[b]) as u128,
            WordOp::Lt(a, b) | WordOp::IntLt(a, b) => self.lt(v[a], v[b]) as u128,
            WordOp::CastShr(a, t, k) => {
                self.in_type(t, v[a], 0, |to, x, _| to.shr(x, k as u32 % to.bits as u32))
            }
            WordOp::CastMax(a, b, t) => {
                self.in_type(t, v[a], v[b], |to, x, y| if to.lt(x, y) { y } else { x })
            }
            WordOp::ViaInt(a, b, k) => (self.value(v[a]) * k as i128 + self.value(v[b])) as u128,
            WordOp::BoolMix(a, b, c, d) => {
                let (ab, cd) = (self.lt(v[a], v[b]), v[c] == v[d]);
                let (bc, ad) = (v[b] == v[c], self.lt(v[a], v[d]));
                ((ab && !cd) || (bc ^ ad)) as u128
            }
            WordOp::Scan(a, b, k, step, flags) => (0..4u32).fold(0, |r, i| {
                let hit = v[a] == (k as u128 + (i * step as u32) as u128) & m;
                let x = if hit == (flags & 2 == 0) {
                    rot(v[b], i)
                } else {
                    0
                };
                if flags & 1 == 1 {
                    r | x
                } else {
                    r ^ x
                }
            }),
        };
        r & m
    }
}

/// The operation with its indices reduced modulo `n` values.
fn resolved(op: &WordOp, n: usize) -> WordOp {
    let r = |i: usize| i % n;
    match *op {
        WordOp::Add(a, b) => WordOp::Add(r(a), r(b)),
        WordOp::Sub(a, b) => WordOp::Sub(r(a), r(b)),
        WordOp::Mul(a, b) => WordOp::Mul(r(a), r(b)),
        WordOp::Div(a, b) => WordOp::Div(r(a), r(b)),
        WordOp::Rem(a, b) => WordOp::Rem(r(a), r(b)),
        WordOp::And(a, b) => WordOp::And(r(a), r(b)),
        WordOp::Or(a, b) => WordOp::Or(r(a), r(b)),
        WordOp::Xor(a, b) => WordOp::Xor(r(a), r(b)),
        WordOp::Neg(a) => WordOp::Neg(r(a)),
        WordOp::Not(a) => WordOp::Not(r(a)),
        WordOp::Shl(a, k) => WordOp::Shl(r(a), k),
        WordOp::Shr(a, k) => WordOp::Shr(r(a), k),
        WordOp::RotateLeft(a, k) => WordOp::RotateLeft(r(a), k),
        WordOp::ShlBy(a, b) => WordOp::ShlBy(r(a), r(b)),
        WordOp::ShrBy(a, b) => WordOp::ShrBy(r(a), r(b)),
        WordOp::RotateRightBy(a, b) => WordOp::RotateRightBy(r(a), r(b)),
        WordOp::Min(a, b) => WordOp::Min(r(a), r(b)),
        WordOp::Max(a, b) => WordOp::Max(r(a), r(b)),
        WordOp::SelectLt(a, b, c, d) => WordOp::SelectLt(r(a), r(b), r(c), r(d)),
        WordOp::AddConst(a, c) => WordOp::AddConst(r(a), c),
        WordOp::MulConst(a, c) => WordOp::MulConst(r(a), c),
        WordOp::MulAdd(a, b, c, k, bias) => WordOp::MulAdd(r(a), r(b), r(c), k, bias),
        WordOp::DivConst(a, c) => WordOp::DivConst(r(a), c),
        WordOp::RemConst(a, c) => WordOp::RemConst(r(a), c),
        WordOp::CountOnes(a) => WordOp::CountOnes(r(a)),
        WordOp::LeadingZeros(a) => WordOp::LeadingZeros(r(a)),
        WordOp::ReverseBits(a) => WordOp::ReverseBits(r(a)),
        WordOp::AddOverflows(a, b) => WordOp::AddOverflows(r(a), r(b)),
        WordOp::DivOk(a, b) => WordOp::DivOk(r(a), r(b)),
        WordOp::Eq(a, b) => WordOp::Eq(r(a), r(b)),
        WordOp::Lt(a, b) => WordOp::Lt(r(a), r(b)),
        WordOp::CastShr(a, t, k) => WordOp::CastShr(r(a), t, k),
        WordOp::CastMax(a, b, t) => WordOp::CastMax(r(a), r(b), t),
        WordOp::ViaInt(a, b, k) => WordOp::ViaInt(r(a), r(b), k),
        WordOp::IntLt(a, b) => WordOp::IntLt(r(a), r(b)),
        WordOp::BoolMix(a, b, c, d) => WordOp::BoolMix(r(a), r(b), r(c), r(d)),
        WordOp::Scan(a, b, k, step, f) => WordOp::Scan(r(a), r(b), k, step, f),
    }
}

/// The values `op` reads.
fn operands(op: &WordOp) -> Vec<usize> {
    use WordOp::*;
    match *op {
        Neg(a)
        | Not(a)
        | Shl(a, _)
        | Shr(a, _)
        | RotateLeft(a, _)
        | AddConst(a, _)
        | MulConst(a, _)
        | DivConst(a, _)
        | RemConst(a, _)
        | CountOnes(a)
        | LeadingZeros(a)
        | ReverseBits(a)
        | CastShr(a, _, _) => vec![a],
        Add(a, b)
        | Sub(a, b)
        | Mul(a, b)
        | Div(a, b)
        | Rem(a, b)
        | And(a, b)
        | Or(a, b)
        | Xor(a, b)
        | ShlBy(a, b)
        | ShrBy(a, b)
        | RotateRightBy(a, b)
        | Min(a, b)
        | Max(a, b)
        | AddOverflows(a, b)
        | DivOk(a, b)
        | Eq(a, b)
        | Lt(a, b)
        | CastMax(a, b, _)
        | ViaInt(a, b, _)
        | IntLt(a, b)
        | Scan(a, b, ..) => vec![a, b],
        MulAdd(a, b, c, _, _) => vec![a, b, c],
        SelectLt(a, b, c, d) | BoolMix(a, b, c, d) => vec![a, b, c, d],
    }
}

/// Whether `op` is a sum, difference, negation or product: what the
/// builder may fuse with an operand only it reads.
fn fusable(op: &WordOp) -> bool {
    use WordOp::*;
    matches!(
        op,
        Add(..) | Sub(..) | Mul(..) | Neg(_) | AddConst(..) | MulConst(..) | MulAdd(..)
    )
}

/// What [`WordOp::CastShr`] and [`WordOp::CastMax`] do in the other type.
#[derive(Clone, Copy)]
enum InType {
    Shr(u8),
    Max,
}

/// `op` on `x` and `y` cast to `Word<T, TS>`, cast back.
fn in_type<'p, const B: usize, const S: bool, const T: usize, const TS: bool>(
    x: &Word<'p, B, S>,
    y: &Word<'p, B, S>,
    op: InType,
) -> Word<'p, B, S> {
    let x = x.cast::<T, TS>();
    match op {
        InType::Shr(k) => (&x >> k as u32).cast(),
        InType::Max => x.max(&y.cast::<T, TS>()).cast(),
    }
}

/// [`in_type`] for `T` = [`CAST_TYPES`]`[t]`.
fn through<'p, const B: usize, const S: bool>(
    t: u8,
    x: &Word<'p, B, S>,
    y: &Word<'p, B, S>,
    op: InType,
) -> Word<'p, B, S> {
    match CAST_TYPES[t as usize % CAST_TYPES.len()] {
        (8, false) => in_type::<B, S, 8, false>(x, y, op),
        (8, true) => in_type::<B, S, 8, true>(x, y, op),
        (16, false) => in_type::<B, S, 16, false>(x, y, op),
        (16, true) => in_type::<B, S, 16, true>(x, y, op),
        (32, false) => in_type::<B, S, 32, false>(x, y, op),
        (32, true) => in_type::<B, S, 32, true>(x, y, op),
        (64, false) => in_type::<B, S, 64, false>(x, y, op),
        (64, true) => in_type::<B, S, 64, true>(x, y, op),
        (128, false) => in_type::<B, S, 128, false>(x, y, op),
        (128, true) => in_type::<B, S, 128, true>(x, y, op),
        (bits, signed) => unreachable!("CAST_TYPES lists ({bits}, {signed}) without its arm"),
    }
}

/// The word program on `Word<B, S>`.
fn build_typed<const B: usize, const S: bool>(
    spec: &WordSpec,
    params: &'static ParameterSet,
    threads: usize,
) -> Result<CompiledProgram, Error> {
    let ints = hearth::digits::check_params(params).is_ok();
    let p = Program::new(params);
    p.set_threads(threads);
    let mut vals: Vec<Word<B, S>> = spec.inputs.iter().map(|_| Word::input(&p)).collect();
    for op in spec.normalized() {
        let v = &vals;
        let y: Word<B, S> = match op {
            WordOp::Add(a, b) => &v[a] + &v[b],
            WordOp::Sub(a, b) => &v[a] - &v[b],
            WordOp::Mul(a, b) => &v[a] * &v[b],
            WordOp::Div(a, b) => &v[a] / &v[b],
            WordOp::Rem(a, b) => &v[a] % &v[b],
            WordOp::And(a, b) => &v[a] & &v[b],
            WordOp::Or(a, b) => &v[a] | &v[b],
            WordOp::Xor(a, b) => &v[a] ^ &v[b],
            WordOp::Neg(a) => -&v[a],
            WordOp::Not(a) => !&v[a],
            WordOp::Shl(a, k) => &v[a] << k as u32,
            WordOp::Shr(a, k) => &v[a] >> k as u32,
            WordOp::RotateLeft(a, k) => v[a].rotate_left(k as u32),
            WordOp::ShlBy(a, b) => v[a].shl_by(&v[b].cast::<B, false>()),
            WordOp::ShrBy(a, b) => v[a].shr_by(&v[b].cast::<B, false>()),
            WordOp::RotateRightBy(a, b) => v[a].rotate_right_by(&v[b].cast::<B, false>()),
            WordOp::Min(a, b) => v[a].min(&v[b]),
            WordOp::Max(a, b) => v[a].max(&v[b]),
            WordOp::SelectLt(a, b, c, d) => v[a].lt(&v[b]).select(&v[c], &v[d]),
            WordOp::AddConst(a, c) => &v[a] + c,
            WordOp::MulConst(a, c) => &v[a] * c,
            WordOp::MulAdd(a, b, c, k, bias) => Word::fused_sum(
                &p,
                &[(&v[a], &v[b])],
                &[(&v[c], &BigInt::from(k))],
                &BigInt::from(bias),
            ),
            WordOp::DivConst(a, c) => &v[a] / c,
            WordOp::RemConst(a, c) => &v[a] % c,
            WordOp::CountOnes(a) => v[a].count_ones().cast::<B, S>(),
            WordOp::LeadingZeros(a) => v[a].leading_zeros().cast::<B, S>(),
            WordOp::ReverseBits(a) => v[a].reverse_bits(),
            WordOp::AddOverflows(a, b) => {
                v[a].overflowing_add(&v[b]).1.to_word::<B>().cast::<B, S>()
            }
            WordOp::DivOk(a, b) => v[a].checked_div(&v[b]).1.to_word::<B>().cast::<B, S>(),
            WordOp::Eq(a, b) => v[a].eq(&v[b]).to_word::<B>().cast::<B, S>(),
            WordOp::Lt(a, b) => v[a].lt(&v[b]).to_word::<B>().cast::<B, S>(),
            WordOp::CastShr(a, t, k) => through(t, &v[a], &v[a], InType::Shr(k)),
            WordOp::CastMax(a, b, t) => through(t, &v[a], &v[b], InType::Max),
            WordOp::ViaInt(a, b, k) if ints => {
                Word::from_int(&(&(&v[a].to_int() * k) + &v[b].to_int()))
            }
            WordOp::ViaInt(a, b, k) => &(&v[a] * k) + &v[b],
            WordOp::IntLt(a, b) if ints => Word::from_int(&v[a].to_int().lt(&v[b].to_int())),
            WordOp::IntLt(a, b) => v[a].lt(&v[b]).to_word::<B>().cast::<B, S>(),
            WordOp::BoolMix(a, b, c, d) => {
                let (ab, cd) = (v[a].lt(&v[b]), v[c].eq(&v[d]));
                let (bc, ad) = (v[b].eq(&v[c]), v[a].lt(&v[d]));
                (&(&ab & &!&cd) | &(&bc ^ &ad))
                    .to_word::<B>()
                    .cast::<B, S>()
            }
            WordOp::Scan(a, b, k, step, flags) => {
                let zero = Word::constant(&p, 0);
                (0..4u32).fold(zero.clone(), |r, i| {
                    let key = Word::constant(&p, k as i64 + (i * step as u32) as i64);
                    let hit = if flags & 4 == 0 {
                        v[a].eq(&key)
                    } else {
                        key.eq(&v[a])
                    };
                    let x = v[b].rotate_left(i);
                    let x = if flags & 2 == 0 {
                        hit.select(&x, &zero)
                    } else {
                        hit.select(&zero, &x)
                    };
                    if flags & 1 == 1 {
                        &r | &x
                    } else {
                        &r ^ &x
                    }
                })
            }
        };
        vals.push(y);
    }
    for i in spec.outputs() {
        p.output(&vals[i]);
    }
    p.build()
}

impl WordSpec {
    /// A random program: 1-3 inputs, 1-`max_ops` operations, a random type
    /// of 4-64 bits (4 for the narrow forms: one-bit chunks of the
    /// packed equality, short adders and counters).
    pub fn random(rng: &mut impl Rng, max_ops: usize) -> Self {
        let bits = [4, 8, 16, 32, 64][rng.gen_range(0..5)];
        let signed = rng.gen_bool(0.5);
        let m = mask(bits) as u64;
        let inputs = (0..rng.gen_range(1..=3))
            .map(|_| match rng.gen_range(0..4) {
                0 => rng.gen_range(0..4),
                1 => m - rng.gen_range(0..4),
                _ => rng.gen::<u64>() & m,
            })
            .collect();
        let count = rng.gen_range(1..=max_ops.max(1));
        let ops = (0..count)
            .map(|_| {
                let [a, b, c, d] = [0; 4].map(|_: u8| rng.gen::<u8>());
                WordOp::from_parts(rng.gen_range(0..WordOp::KINDS), a, b, c, d)
            })
            .collect();
        WordSpec {
            bits,
            signed,
            inputs,
            ops,
        }
    }

    /// The operations that run (indices resolved).
    pub fn normalized(&self) -> Vec<WordOp> {
        let n = self.inputs.len().max(1);
        self.ops
            .iter()
            .enumerate()
            .map(|(j, op)| resolved(op, n + j))
            .collect()
    }

    /// The values the program outputs: every one but those that a single
    /// later sum, difference, negation or product reads and nothing else
    /// does (the builder may fuse them into it, so they are checked
    /// through it), and always the last one.
    pub fn outputs(&self) -> Vec<usize> {
        let n = self.inputs.len().max(1);
        let ops = self.normalized();
        let total = self.inputs.len() + ops.len();
        let mut reads = vec![0usize; total];
        let mut fused = vec![false; total];
        for op in &ops {
            for a in operands(op) {
                reads[a] += 1;
                fused[a] = fusable(op);
            }
        }
        (0..total)
            .filter(|&i| {
                i + 1 == total || i < n.min(self.inputs.len()) || reads[i] != 1 || !fused[i]
            })
            .collect()
    }

    /// The reference value of every value (inputs, then each operation).
    pub fn expected(&self) -> Vec<u128> {
        let r = Ref {
            bits: self.bits,
            signed: self.signed,
        };
        let mut v: Vec<u128> = self
            .inputs
            .iter()
            .map(|&x| x as u128 & mask(self.bits))
            .collect();
        for op in self.normalized() {
            let x = r.eval(&op, &v);
            v.push(x);
        }
        v
    }

    /// Builds the program on `params`, planning for `threads` threads.
    pub fn build(
        &self,
        params: &'static ParameterSet,
        threads: usize,
    ) -> Result<CompiledProgram, Error> {
        if self.inputs.is_empty() {
            return Err(Error::Config("a word program needs an input".into()));
        }
        match (self.bits, self.signed) {
            (4, false) => build_typed::<4, false>(self, params, threads),
            (4, true) => build_typed::<4, true>(self, params, threads),
            (8, false) => build_typed::<8, false>(self, params, threads),
            (8, true) => build_typed::<8, true>(self, params, threads),
            (16, false) => build_typed::<16, false>(self, params, threads),
            (16, true) => build_typed::<16, true>(self, params, threads),
            (32, false) => build_typed::<32, false>(self, params, threads),
            (32, true) => build_typed::<32, true>(self, params, threads),
            (64, false) => build_typed::<64, false>(self, params, threads),
            (64, true) => build_typed::<64, true>(self, params, threads),
            (b, _) => Err(Error::Config(format!(
                "word programs use 4-64 bits, not {b}"
            ))),
        }
    }

    fn value_of(&self, x: u128) -> BigInt {
        let r = Ref {
            bits: self.bits,
            signed: self.signed,
        };
        if self.signed {
            r.s(x).into()
        } else {
            x.into()
        }
    }

    fn clear_inputs(&self) -> Result<Vec<Vec<u64>>, Error> {
        self.inputs
            .iter()
            .map(|&x| clear_word(self.value_of(x as u128), self.bits, self.signed))
            .collect()
    }

    /// Builds, runs on the clear backend and compares every value.
    pub fn check(&self, params: &'static ParameterSet, threads: usize) -> Result<Checked, Failure> {
        let prog = self.build(params, threads).map_err(Failure::Build)?;
        let ins = self.clear_inputs().map_err(Failure::Run)?;
        let out = prog.run(&ClearBackend, &ins).map_err(Failure::Run)?;
        let expected = self.expected();
        for (o, i) in out.iter().zip(self.outputs()) {
            let e = expected[i];
            let got = clear_word_value(o, self.signed).map_err(Failure::Run)?;
            let expected = self.value_of(e);
            if got != expected {
                return Err(Failure::Mismatch {
                    value: i,
                    got,
                    expected,
                    digits: o.iter().map(|&d| d as i64).collect(),
                });
            }
        }
        Ok(Checked {
            values: out.len(),
            pbs: prog.circuit().stats().pbs,
        })
    }

    /// Runs encrypted on `backend` and checks every output against the
    /// clear backend, bit for bit.
    pub fn check_encrypted<B: Backend<Digit = Ciphertext>>(
        &self,
        client: &ClientKey,
        backend: &B,
        threads: usize,
    ) -> Result<Checked, Failure> {
        self.run_encrypted(client, backend, threads)
            .map(|(checked, _, _)| checked)
    }

    /// Checks on the clear backend, then runs encrypted on `backend` and
    /// checks every bit against the clear run: the program and its
    /// encrypted outputs.
    fn run_encrypted<B: Backend<Digit = Ciphertext>>(
        &self,
        client: &ClientKey,
        backend: &B,
        threads: usize,
    ) -> Result<(Checked, CompiledProgram, Vec<Encrypted>), Failure> {
        let params = client.params();
        let checked = self.check(params, threads)?;
        let prog = self.build(params, threads).map_err(Failure::Build)?;
        let inputs = self
            .inputs
            .iter()
            .map(|&x| client.encrypt_word_of(self.value_of(x as u128), self.bits, self.signed))
            .collect::<Result<Vec<Encrypted>, _>>()
            .map_err(Failure::Run)?;
        let clear = self.clear_inputs().map_err(Failure::Run)?;
        let (out, _) = encrypted_equals_clear(client, backend, &prog, &inputs, &clear)?;
        Ok((checked, prog, out))
    }

    /// [`WordSpec::check_encrypted`] on `server`'s cpu backend, then the
    /// outputs packed ([`crate::packing::packed_equals_full`]). `true` when
    /// they could be packed.
    pub fn check_packed(
        &self,
        client: &ClientKey,
        server: &hearth::ServerKey,
    ) -> Result<bool, Failure> {
        let cpu = hearth::backend::CpuBackend::new(server, Some(2)).map_err(Failure::Run)?;
        let (_, prog, out) = self.run_encrypted(client, &cpu, 2)?;
        crate::packing::packed_equals_full(client, server, &prog, &out)
    }

    /// A smaller program that still `fails`.
    pub fn shrink(&self, fails: impl Fn(&WordSpec) -> bool) -> WordSpec {
        let start = WordSpec {
            ops: self.normalized(),
            ..self.clone()
        };
        super::shrink_greedy(
            start,
            |best| {
                let mut candidates = super::without_each(best, 0, |s| &mut s.ops);
                candidates.extend(super::without_each(best, 1, |s| &mut s.inputs));
                for i in 0..best.inputs.len() {
                    if best.inputs[i] != 0 {
                        let mut c = best.clone();
                        c.inputs[i] /= 2;
                        candidates.push(c);
                    }
                }
                candidates
            },
            fails,
        )
    }
}

impl fmt::Display for WordSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ty = format!("{}{}", if self.signed { "I" } else { "U" }, self.bits);
        for (i, &x) in self.inputs.iter().enumerate() {
            writeln!(
                f,
                "let v{i} = {ty}::input(&p); // = {}",
                self.value_of(x as u128)
            )?;
        }
        let n = self.inputs.len();
        for (j, op) in self.normalized().iter().enumerate() {
            writeln!(f, "let v{} = {op:?};", n + j)?;
        }
        Ok(())
    }
}

/// Runs `prog` on `backend` with the encrypted `inputs` and on the clear
/// backend with `clear` (the same values' clear bits): every output bit
/// must decrypt to the clear backend's. Returns both runs' outputs.
pub fn encrypted_equals_clear<B: Backend<Digit = Ciphertext>>(
    client: &ClientKey,
    backend: &B,
    prog: &CompiledProgram,
    inputs: &[Encrypted],
    clear: &[Vec<u64>],
) -> Result<(Vec<Encrypted>, Vec<Vec<u64>>), Failure> {
    let clear = prog.run(&ClearBackend, clear).map_err(Failure::Run)?;
    let out = prog.run_encrypted(backend, inputs).map_err(Failure::Run)?;
    for (value, (o, c)) in out.iter().zip(&clear).enumerate() {
        let decrypted = o
            .ciphertexts()
            .iter()
            .map(|ct| client.decrypt_bit(ct).map(|b| 2 * b as u64))
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
    Ok((out, clear))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth::crypto::params::INSECURE_TEST_BITS as P;
    use rand::SeedableRng;

    /// Panics, naming the set and thread count, unless `spec` checks on
    /// every one of `sets` for every one of `threads`.
    fn passes(spec: &WordSpec, sets: &[&'static ParameterSet], threads: &[usize]) {
        for params in sets {
            for &t in threads {
                if let Err(e) = spec.check(params, t) {
                    panic!("{}, {t} threads: {e}\n{spec}", params.name);
                }
            }
        }
    }

    #[test]
    fn random_word_programs_pass() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..100 {
            passes(&WordSpec::random(&mut rng, 6), &[&P], &[2]);
        }
    }

    /// Found by `fuzz-programs --family words --seed 2026` (program 15581,
    /// shrunk): the top bit of a difference is a heavy sum, and leading
    /// zeros paired it with another term over the budget of `GATES_128`.
    #[test]
    fn leading_zeros_of_a_difference() {
        let spec = WordSpec {
            bits: 32,
            signed: true,
            inputs: vec![0, 0],
            ops: vec![
                WordOp::Sub(0, 1),
                WordOp::Eq(1, 0),
                WordOp::Sub(2, 1),
                WordOp::LeadingZeros(4),
            ],
        };
        passes(&spec, &[&P, &hearth::crypto::params::GATES_128], &[2]);
    }

    /// Found by `fuzz-programs --family words --seed 5` (program 457,
    /// shrunk) once words ran on DIGITS_128's rules too: a comparison of a
    /// sum with a clear constant, whose bits are unrefreshed sums, with
    /// one of its own operands. The tracked range of a chunk's difference
    /// was wider than its values and than the packed comparison's table.
    #[test]
    fn comparison_of_a_sum_with_its_operand() {
        let spec = WordSpec {
            bits: 8,
            signed: true,
            inputs: vec![0, 3],
            ops: vec![
                WordOp::Sub(0, 1),
                WordOp::AddConst(0, -11178),
                WordOp::SelectLt(3, 0, 3, 1),
            ],
        };
        passes(
            &spec,
            &[&P, &hearth::crypto::params::INSECURE_TEST_DIGITS],
            &[1, 2, 16],
        );
    }

    /// Found by `fuzz-programs --family words --seed 2026` (program 75419,
    /// shrunk): a remainder by a clear constant (heavy linear bits) fed
    /// to a product by a clear constant.
    #[test]
    fn product_of_a_remainder_by_constants() {
        let spec = WordSpec {
            bits: 64,
            signed: true,
            inputs: vec![0, 0],
            ops: vec![
                WordOp::RotateLeft(1, 248),
                WordOp::AddOverflows(0, 2),
                WordOp::RemConst(3, -20790),
                WordOp::MulConst(4, -57),
            ],
        };
        passes(&spec, &[&P, &hearth::crypto::params::GATES_128], &[2]);
    }

    #[test]
    fn a_wrong_reference_is_caught() {
        let spec = WordSpec {
            bits: 8,
            signed: false,
            inputs: vec![200, 100],
            ops: vec![WordOp::Add(0, 1)],
        };
        assert_eq!(spec.expected()[2], 44);
        assert!(spec.check(&P, 2).is_ok());
        let wrong = WordSpec {
            ops: vec![WordOp::Sub(0, 1)],
            ..spec.clone()
        };
        // Same program, other reference: the outputs (300 mod 256) differ.
        let prog = spec.build(&P, 2).unwrap();
        let out = prog
            .run(&ClearBackend, &spec.clear_inputs().unwrap())
            .unwrap();
        assert_ne!(
            clear_word_value(&out[2], false).unwrap(),
            BigInt::from(wrong.expected()[2])
        );
    }

    /// Found by `fuzz-programs --family words --seed 204` (program 31174,
    /// shrunk): a shift by an encrypted amount on DIGITS_128's rules.
    #[test]
    fn shift_by_a_quotient_on_the_digits_key() {
        let spec = WordSpec {
            bits: 64,
            signed: true,
            inputs: vec![1, 0, 3],
            ops: vec![
                WordOp::LeadingZeros(0),
                WordOp::DivOk(0, 2),
                WordOp::MulConst(4, 105),
                WordOp::ShlBy(5, 4),
            ],
        };
        passes(&spec, &[&hearth::crypto::params::DIGITS_128], &[2, 16]);
    }

    /// The reference's casts are Rust's `as`.
    #[test]
    fn reference_casts_are_rusts() {
        let (u8s, i8s) = (
            Ref {
                bits: 8,
                signed: false,
            },
            Ref {
                bits: 8,
                signed: true,
            },
        );
        for x in [0u8, 1, 0x7f, 0x80, 0xfe, 0xff] {
            let v = x as u128;
            assert_eq!(cast(v, &u8s, 16), x as u16 as u128);
            assert_eq!(cast(v, &i8s, 16), x as i8 as u16 as u128);
            assert_eq!(cast(v, &i8s, 128), x as i8 as i128 as u128);
            assert_eq!(cast(v, &u8s, 128), x as u128);
            let wide = Ref {
                bits: 128,
                signed: true,
            };
            let y = (x as i8 as i128).wrapping_mul(-3) as u128;
            assert_eq!(cast(y, &wide, 8), (x as i8).wrapping_mul(-3) as u8 as u128);
        }
    }

    /// Each way out of the program's type and back (every other word type,
    /// `Int`, `Bool`), on every program type, on both families' rules.
    #[test]
    fn programs_through_every_type() {
        let sets: [&'static ParameterSet; 2] = [&P, &hearth::crypto::params::INSECURE_TEST_DIGITS];
        for (bits, signed) in CAST_TYPES.into_iter().filter(|&(b, _)| b <= 64) {
            let m = mask(bits) as u64;
            for inputs in [vec![m, 1], vec![m >> 1, (m >> 1) + 1], vec![5, m - 2]] {
                let mut ops: Vec<WordOp> = (0..CAST_TYPES.len() as u8)
                    .flat_map(|t| [WordOp::CastShr(0, t, 7 + t), WordOp::CastMax(0, 1, t)])
                    .collect();
                ops.extend([
                    WordOp::ViaInt(0, 1, -3),
                    WordOp::IntLt(1, 0),
                    WordOp::BoolMix(0, 1, 1, 0),
                ]);
                let spec = WordSpec {
                    bits,
                    signed,
                    inputs: inputs.clone(),
                    ops,
                };
                passes(&spec, &sets, &[2]);
            }
        }
    }

    /// The programs `tests/programs.proptest-regressions` saved (its seeds
    /// stand for other programs once [`WordOp::KINDS`] grows).
    #[test]
    fn saved_property_test_failures() {
        use WordOp::*;
        let specs = [
            (8, false, vec![0], vec![Not(0), Sub(126, 67), Lt(0, 2)]),
            (
                8,
                true,
                vec![0, 0, 0],
                vec![
                    Add(9, 21),
                    Add(0, 0),
                    MulAdd(208, 75, 17, -63, -110667),
                    Add(0, 0),
                    Add(0, 0),
                    DivOk(0, 37),
                ],
            ),
            (
                32,
                false,
                vec![0],
                vec![
                    Add(0, 0),
                    Add(0, 0),
                    ShlBy(13, 135),
                    MulConst(19, 104),
                    Add(0, 0),
                    Neg(76),
                    MulAdd(4, 0, 11, -122, -116649),
                ],
            ),
            (
                32,
                false,
                vec![0],
                vec![Div(0, 0), Add(0, 0), Add(0, 0), Add(0, 0), CountOnes(116)],
            ),
        ];
        for (bits, signed, inputs, ops) in specs {
            let spec = WordSpec {
                bits,
                signed,
                inputs,
                ops,
            };
            passes(
                &spec,
                &[&P, &hearth::crypto::params::INSECURE_TEST_DIGITS],
                &[2],
            );
        }
    }
}
