//! Fixed-width encrypted integers with Rust's semantics: `Word<BITS,
//! SIGNED>` (aliases [`U8`] .. [`U128`], [`I8`] .. [`I128`]) and [`Bool`],
//! on the two's-complement bits family ([`crate::bits`]).
//!
//! Operators wrap like Rust's `wrapping_*` (`+ - * / %`, `-x`, `!x`,
//! `& | ^`, `<< >>` by a clear amount modulo the width); `overflowing_*`
//! return the overflow as a [`Bool`]; comparisons return [`Bool`]s;
//! shifts and rotations by an encrypted amount take it modulo the width,
//! like `wrapping_shl` and `rotate_left`. Division by zero gives all ones
//! (unsigned) and the dividend as remainder, and [`Word::checked_div`]
//! reports it, with signed `MIN / -1`, as Rust's `checked_div` would (a
//! [`Bool`] that is false where Rust returns `None`). Widths are checked
//! at compile time: operands of one operation have one type.
//!
//! ```
//! use hearth::api::{clear_word, clear_word_value, Program, U8};
//! use hearth::backend::ClearBackend;
//! use hearth::INSECURE_TEST_BITS;
//!
//! let p = Program::new(&INSECURE_TEST_BITS);
//! let x = U8::input(&p);
//! let y = U8::input(&p);
//! let z = &(&x * &y) + 7;
//! p.output(&z);
//! p.output(&x.lt(&y));
//! let prog = p.build()?;
//! let out = prog.run(&ClearBackend, &[clear_word(200, 8, false)?, clear_word(3, 8, false)?])?;
//! assert_eq!(clear_word_value(&out[0], false)?, 95.into()); // 607 mod 256
//! assert_eq!(clear_word_value(&out[1], false)?, 0.into());
//! # Ok::<(), hearth::Error>(())
//! ```

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Shl, Shr, Sub};

use num_bigint::BigInt;
use num_traits::{One, Zero};

use super::int::same_len;
use super::program::{within, Program, Value};
use super::Int;
use crate::bits::adders::{self, AdderKind};
use crate::bits::compare;
use crate::bits::gates::{self, Gate};
use crate::bits::mul::{self, MulKind};
use crate::bits::shift::{self, ShiftKind};
use crate::bits::{self as fam, bitwise, convert, div, Bits, ONE};
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::comparison::Comparison;
use crate::crypto::encoding::{Shape, MAX_DIGITS, MAX_PRODUCTS};
use crate::error::Error;

/// An encrypted `BITS`-bit integer, unsigned or two's complement.
#[derive(Clone)]
pub struct Word<'p, const BITS: usize, const SIGNED: bool> {
    program: &'p Program,
    bits: Bits,
}

/// An encrypted `u8`.
pub type U8<'p> = Word<'p, 8, false>;
/// An encrypted `u16`.
pub type U16<'p> = Word<'p, 16, false>;
/// An encrypted `u32`.
pub type U32<'p> = Word<'p, 32, false>;
/// An encrypted `u64`.
pub type U64<'p> = Word<'p, 64, false>;
/// An encrypted `u128`.
pub type U128<'p> = Word<'p, 128, false>;
/// An encrypted `i8`.
pub type I8<'p> = Word<'p, 8, true>;
/// An encrypted `i16`.
pub type I16<'p> = Word<'p, 16, true>;
/// An encrypted `i32`.
pub type I32<'p> = Word<'p, 32, true>;
/// An encrypted `i64`.
pub type I64<'p> = Word<'p, 64, true>;
/// An encrypted `i128`.
pub type I128<'p> = Word<'p, 128, true>;

/// An encrypted boolean.
#[derive(Clone)]
pub struct Bool<'p> {
    program: &'p Program,
    bits: Bits,
}

impl<const BITS: usize, const SIGNED: bool> Value for Word<'_, BITS, SIGNED> {
    fn shape(&self) -> Shape {
        Shape::Word {
            bits: BITS,
            signed: SIGNED,
        }
    }

    fn wires(&self) -> &[Wire] {
        self.bits.wires()
    }

    fn program(&self) -> &Program {
        self.program
    }
}

impl Value for Bool<'_> {
    fn shape(&self) -> Shape {
        Shape::Word {
            bits: 1,
            signed: false,
        }
    }

    fn wires(&self) -> &[Wire] {
        self.bits.wires()
    }

    fn program(&self) -> &Program {
        self.program
    }
}

impl Program {
    /// Runs `f` and checks its result: `n` bits, each a bit. On an error
    /// (kept for [`Program::build`]) the result is `n` clear zeros.
    fn bits_of(
        &self,
        n: usize,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<Bits, Error>,
    ) -> Bits {
        let r = self.run(|b| {
            fam::check_params(b.params())?;
            within(|| "a word (bits)".into(), n as u64, MAX_DIGITS as u64)?;
            let x = f(b)?;
            if x.len() != n {
                return Err(Error::Config(format!(
                    "internal: an operation returned {} bits for a {n}-bit word",
                    x.len()
                )));
            }
            Bits::from_wires(b, x.wires().to_vec())
        });
        match r {
            Some(x) => x,
            None => {
                let zero = self.state.borrow_mut().builder.constant(0);
                Bits::from_vec(vec![zero; n])
            }
        }
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Word<'p, BITS, SIGNED> {
    fn wrap(
        program: &'p Program,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<Bits, Error>,
    ) -> Self {
        Word {
            program,
            bits: program.bits_of(BITS, f),
        }
    }

    fn same_program(&self, program: &Program) -> Result<(), Error> {
        same_program(self.program, program, "a word")
    }

    fn same(&self, other: &Self) -> Result<(), Error> {
        self.same_program(other.program)
    }

    fn unary(&self, f: impl FnOnce(&mut CircuitBuilder, &Bits) -> Result<Bits, Error>) -> Self {
        Self::wrap(self.program, |b| f(b, &self.bits))
    }

    fn binary(
        &self,
        other: &Self,
        f: impl FnOnce(&mut CircuitBuilder, &Bits, &Bits) -> Result<Bits, Error>,
    ) -> Self {
        Self::wrap(self.program, |b| {
            self.same(other)?;
            f(b, &self.bits, &other.bits)
        })
    }

    fn test(
        &self,
        other: &Self,
        f: impl FnOnce(&mut CircuitBuilder, &Bits, &Bits) -> Result<Wire, Error>,
    ) -> Bool<'p> {
        Bool::wrap(self.program, |b| {
            self.same(other)?;
            f(b, &self.bits, &other.bits)
        })
    }

    /// An encrypted input.
    pub fn input(program: &'p Program) -> Self {
        program.push_input(Shape::Word {
            bits: BITS,
            signed: SIGNED,
        });
        Self::wrap(program, |b| Bits::input(b, BITS))
    }

    /// A clear constant (its low `BITS` bits, two's complement): free.
    pub fn constant(program: &'p Program, value: impl Into<BigInt>) -> Self {
        let v = value.into();
        Self::wrap(program, |b| Ok(Bits::constant(b, &v, BITS)))
    }

    /// The underlying bits.
    pub fn bits(&self) -> &Bits {
        &self.bits
    }

    /// A word built by `f` on `program`'s circuit builder from the
    /// circuit-level functions of [`crate::bits`]: how operations are
    /// added outside the library (hearth-emu's ARM flags and bit fields),
    /// on operands' [`Word::bits`] and [`Bool::wire`]. `f` must return
    /// `BITS` bits, each a bit (checked), and refuse operands of another
    /// program (compare their [`Word::owner`]s). As for every operation,
    /// `f` does not run after an earlier error, and its error is kept for
    /// [`Program::build`] (the word is then clear zeros).
    pub fn from_circuit(
        program: &'p Program,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<Bits, Error>,
    ) -> Self {
        Self::wrap(program, f)
    }

    fn constant_like(&self, value: impl Into<BigInt>) -> Self {
        Self::constant(self.program, value)
    }

    /// `self + rhs` and whether it overflowed (Rust's `overflowing_add`):
    /// the carry out (unsigned), or the carries into and out of the top
    /// bit differing (signed: one XOR more).
    pub fn overflowing_add(&self, rhs: &Self) -> (Self, Bool<'p>) {
        let mut flag = None;
        let sum = self.binary(rhs, |b, x, y| {
            let zero = b.constant(0);
            let kind = if SIGNED {
                AdderKind::Ripple
            } else {
                AdderKind::Auto
            };
            let (s, c) = adders::add_carries(b, x, y, zero, kind)?;
            flag = Some(overflow_flag::<BITS, SIGNED>(b, &c)?);
            Ok(s)
        });
        (sum, self.flag_or_zero(flag))
    }

    /// `self - rhs` and whether it overflowed (Rust's `overflowing_sub`):
    /// a borrow (unsigned), or the signed overflow of `x + not y + 1`.
    pub fn overflowing_sub(&self, rhs: &Self) -> (Self, Bool<'p>) {
        let mut flag = None;
        let diff = self.binary(rhs, |b, x, y| {
            let ny = bitwise::not_bits(b, y)?;
            let one = b.constant(ONE);
            let kind = if SIGNED {
                AdderKind::Ripple
            } else {
                AdderKind::Auto
            };
            let (d, c) = adders::add_carries(b, x, &ny, one, kind)?;
            flag = Some(if SIGNED {
                overflow_flag::<BITS, SIGNED>(b, &c)?
            } else {
                gates::not(b, c[BITS])?
            });
            Ok(d)
        });
        (diff, self.flag_or_zero(flag))
    }

    /// `self * rhs` and whether it overflowed (Rust's `overflowing_mul`):
    /// the full `2 * BITS`-bit product, overflow when its high half is not
    /// the extension of the low one.
    pub fn overflowing_mul(&self, rhs: &Self) -> (Self, Bool<'p>) {
        let mut flag = None;
        let low = self.binary(rhs, |b, x, y| {
            within(
                || format!("a product of {BITS} by {BITS} bits"),
                (BITS * BITS) as u64,
                MAX_PRODUCTS,
            )?;
            let full = mul::mul(b, x, y, 2 * BITS, SIGNED, MulKind::Auto)?;
            let (lo, hi) = full.wires().split_at(BITS);
            // No overflow: every high bit equals the fill of the low half.
            let fill = if SIGNED { lo[BITS - 1] } else { b.constant(0) };
            let fills = vec![fill; hi.len()];
            let mut sel = Selectors::for_bits();
            flag = Some(compare::not_equal(b, &mut sel, hi, &fills)?);
            Ok(Bits::from_vec(lo.to_vec()))
        });
        (low, self.flag_or_zero(flag))
    }

    fn flag_or_zero(&self, flag: Option<Wire>) -> Bool<'p> {
        Bool::wrap(self.program, |b| Ok(flag.unwrap_or_else(|| b.constant(0))))
    }

    /// `(self / rhs, self % rhs)`, wrapping (see the module doc for zero).
    pub fn div_rem(&self, rhs: &Self) -> (Self, Self) {
        let mut rem = None;
        let q = self.binary(rhs, |b, x, y| {
            let (q, r) = div::div_rem(b, x, y, SIGNED)?;
            rem = Some(r);
            Ok(q)
        });
        let r = Self::wrap(self.program, |_| {
            rem.ok_or_else(|| Error::Config("division failed before the remainder".into()))
        });
        (q, r)
    }

    /// `self / rhs` and whether Rust's `checked_div` would return `Some`
    /// (false for a zero divisor, and for signed `MIN / -1`).
    pub fn checked_div(&self, rhs: &Self) -> (Self, Bool<'p>) {
        let (q, _) = self.div_rem(rhs);
        let ok = self.test(rhs, |b, x, y| {
            let zero = div::is_zero(b, y)?;
            let mut sel = Selectors::for_bits();
            let bad = if SIGNED {
                let min = Bits::constant(b, &(BigInt::from(1) << (BITS - 1)), BITS);
                let neg_one = Bits::constant(b, &BigInt::from(-1), BITS);
                let is_min = compare::compare(b, x, &min, Comparison::Eq, false)?;
                let is_m1 = compare::compare(b, y, &neg_one, Comparison::Eq, false)?;
                let both = gates::gate(b, &mut sel, Gate::And, is_min, is_m1)?;
                gates::gate(b, &mut sel, Gate::Or, zero, both)?
            } else {
                zero
            };
            gates::not(b, bad)
        });
        (q, ok)
    }

    fn cmp(&self, rhs: &Self, op: Comparison) -> Bool<'p> {
        self.test(rhs, |b, x, y| compare::compare(b, x, y, op, SIGNED))
    }

    /// `self == rhs`.
    pub fn eq(&self, rhs: &Self) -> Bool<'p> {
        self.cmp(rhs, Comparison::Eq)
    }

    /// `self != rhs`.
    pub fn ne(&self, rhs: &Self) -> Bool<'p> {
        self.cmp(rhs, Comparison::Ne)
    }

    /// `self < rhs` (signed or unsigned by the type).
    pub fn lt(&self, rhs: &Self) -> Bool<'p> {
        self.cmp(rhs, Comparison::Lt)
    }

    /// `self <= rhs`.
    pub fn le(&self, rhs: &Self) -> Bool<'p> {
        self.cmp(rhs, Comparison::Le)
    }

    /// `self > rhs`.
    pub fn gt(&self, rhs: &Self) -> Bool<'p> {
        self.cmp(rhs, Comparison::Gt)
    }

    /// `self >= rhs`.
    pub fn ge(&self, rhs: &Self) -> Bool<'p> {
        self.cmp(rhs, Comparison::Ge)
    }

    /// The larger of the two (a comparison, one multiplexer per bit).
    pub fn max(&self, rhs: &Self) -> Self {
        self.binary(rhs, |b, x, y| compare::max(b, x, y, SIGNED))
    }

    /// The smaller of the two.
    pub fn min(&self, rhs: &Self) -> Self {
        self.binary(rhs, |b, x, y| compare::min(b, x, y, SIGNED))
    }

    /// `max(self, 0)` (the identity on unsigned words).
    pub fn relu(&self) -> Self {
        if !SIGNED {
            return self.clone();
        }
        self.max(&self.constant_like(0))
    }

    /// The program this value belongs to.
    pub fn owner(&self) -> &'p Program {
        self.program
    }

    /// `floor(self / 2^k)` (a logical shift when unsigned, arithmetic when
    /// signed), for any `k`: unlike `>>`, amounts of the width or more give
    /// 0 or -1, not a shift modulo the width.
    pub fn shr_floor(&self, k: usize) -> Self {
        if k >= BITS {
            return if SIGNED && BITS > 0 {
                self >> (BITS as u32 - 1)
            } else {
                self.constant_like(0)
            };
        }
        self >> k as u32
    }

    /// `sum products[i].0 * products[i].1 + sum scaled[j].1 * scaled[j].0 +
    /// bias`, wrapping like Rust's `wrapping_mul` / `wrapping_add`: every
    /// partial product, every clear factor's non-adjacent-form rows and the
    /// bias go into one carry-save column compression, and one adder
    /// finishes the whole sum ([`crate::bits::dot`]).
    pub fn fused_sum(
        program: &'p Program,
        products: &[(&Self, &Self)],
        scaled: &[(&Self, &BigInt)],
        bias: &BigInt,
    ) -> Self {
        Self::wrap(program, |b| {
            for (x, y) in products {
                x.same_program(program)?;
                y.same_program(program)?;
            }
            for (x, _) in scaled {
                x.same_program(program)?;
            }
            within(
                || "a fused sum (bit products)".into(),
                products.len() as u64 * (BITS as u64).pow(2),
                MAX_PRODUCTS,
            )?;
            let pairs: Vec<_> = products.iter().map(|(x, y)| (&x.bits, &y.bits)).collect();
            let scaled: Vec<_> = scaled.iter().map(|(x, k)| (&x.bits, *k)).collect();
            fam::dot::dot(b, &pairs, &scaled, bias, BITS, SIGNED)
        })
    }

    /// The dot product `sum_i xs[i] * ys[i]`, wrapping
    /// ([`Word::fused_sum`]); slices of different lengths are an
    /// [`Error::Dimensions`].
    pub fn dot(program: &'p Program, xs: &[Self], ys: &[Self]) -> Self {
        if let Err(e) = same_len("dot product", xs.len(), ys.len()) {
            return Self::wrap(program, |_| Err(e));
        }
        let pairs: Vec<_> = xs.iter().zip(ys).collect();
        Self::fused_sum(program, &pairs, &[], &BigInt::from(0))
    }

    /// `sum_i ws[i] * xs[i] + bias` for clear weights, wrapping
    /// ([`Word::fused_sum`]).
    pub fn dot_clear(program: &'p Program, xs: &[Self], ws: &[BigInt], bias: &BigInt) -> Self {
        if let Err(e) = same_len("dot product with clear weights", xs.len(), ws.len()) {
            return Self::wrap(program, |_| Err(e));
        }
        let scaled: Vec<_> = xs.iter().zip(ws).collect();
        Self::fused_sum(program, &[], &scaled, bias)
    }

    fn shift_by<const A: usize>(&self, kind: ShiftKind, amount: &Word<'_, A, false>) -> Self {
        Self::wrap(self.program, |b| {
            same_program(self.program, amount.program, "a shift amount")?;
            shift::shift(b, &self.bits, kind, &amount.bits)
        })
    }

    /// `self << amount` for an encrypted amount, modulo the width
    /// (`wrapping_shl`).
    pub fn shl_by<const A: usize>(&self, amount: &Word<'_, A, false>) -> Self {
        self.shift_by(ShiftKind::Left, amount)
    }

    /// `self >> amount` for an encrypted amount, modulo the width
    /// (arithmetic for signed words, like Rust).
    pub fn shr_by<const A: usize>(&self, amount: &Word<'_, A, false>) -> Self {
        let kind = if SIGNED {
            ShiftKind::ArithRight
        } else {
            ShiftKind::Right
        };
        self.shift_by(kind, amount)
    }

    /// Rotates left by an encrypted amount, modulo the width (`rotate_left`).
    pub fn rotate_left_by<const A: usize>(&self, amount: &Word<'_, A, false>) -> Self {
        self.shift_by(ShiftKind::RotateLeft, amount)
    }

    /// Rotates right by an encrypted amount, modulo the width (`rotate_right`).
    pub fn rotate_right_by<const A: usize>(&self, amount: &Word<'_, A, false>) -> Self {
        self.shift_by(ShiftKind::RotateRight, amount)
    }

    /// Rotates left by a clear amount, modulo the width: free rewiring.
    pub fn rotate_left(&self, amount: u32) -> Self {
        self.unary(|b, x| {
            Ok(shift::shift_clear(
                b,
                x,
                ShiftKind::RotateLeft,
                amount as usize,
            ))
        })
    }

    /// Rotates right by a clear amount, modulo the width: free rewiring.
    pub fn rotate_right(&self, amount: u32) -> Self {
        self.unary(|b, x| {
            Ok(shift::shift_clear(
                b,
                x,
                ShiftKind::RotateRight,
                amount as usize,
            ))
        })
    }

    /// The number of set bits (Rust's `count_ones`).
    pub fn count_ones(&self) -> U32<'p> {
        Word::wrap(self.program, |b| bitwise::count_ones(b, &self.bits, 32))
    }

    /// The number of leading zeros (Rust's `leading_zeros`).
    pub fn leading_zeros(&self) -> U32<'p> {
        Word::wrap(self.program, |b| bitwise::leading_zeros(b, &self.bits, 32))
    }

    /// The bits in reverse order (`reverse_bits`): free rewiring.
    pub fn reverse_bits(&self) -> Self {
        self.unary(|_, x| Ok(bitwise::reverse_bits(x)))
    }

    /// The bytes in reverse order (whole bytes only).
    pub fn swap_bytes(&self) -> Self {
        self.unary(|_, x| {
            if !BITS.is_multiple_of(8) {
                return Err(Error::Config(format!(
                    "swap_bytes needs whole bytes, not {BITS} bits"
                )));
            }
            Ok(bitwise::swap_bytes(x))
        })
    }

    /// Bit `i` (least significant first) as a [`Bool`]: free. An `i` at
    /// or beyond `BITS` is an error for [`Program::build`].
    pub fn bit(&self, i: usize) -> Bool<'p> {
        Bool::wrap(self.program, |_| {
            self.bits
                .wires()
                .get(i)
                .copied()
                .ok_or_else(|| Error::Config(format!("bit {i} of a {BITS}-bit word")))
        })
    }

    /// The value when every bit is a clear constant (what anyone knows
    /// without a key: built from constants only, or folded), else `None`.
    pub fn clear_value(&self) -> Option<BigInt> {
        let bits = self.program.run(|b| {
            self.bits
                .wires()
                .iter()
                .map(|&w| b.constant_value(w).map_err(Error::from))
                .collect::<Result<Option<Vec<i64>>, Error>>()
        })??;
        let mut v = BigInt::zero();
        for (i, &bit) in bits.iter().enumerate() {
            if bit != 0 {
                v += BigInt::one() << i;
            }
        }
        if SIGNED && bits.last().is_some_and(|&t| t != 0) {
            v -= BigInt::one() << BITS;
        }
        Some(v)
    }

    /// Rust's `as` between integer types: truncation, or extension by this
    /// type's signedness. Free.
    pub fn cast<const B2: usize, const S2: bool>(&self) -> Word<'p, B2, S2> {
        Word::wrap(self.program, |b| {
            Ok(convert::resize(b, &self.bits, B2, SIGNED))
        })
    }

    /// The exact value as a signed-binary [`Int`] (needs a parameter set
    /// that carries both families, `pi >= 5`).
    pub fn to_int(&self) -> Int<'p> {
        self.program
            .int(|b| convert::to_digits(b, &self.bits, SIGNED))
    }

    /// `x` modulo `2^BITS` as a word (Rust's `as` from a wide integer).
    pub fn from_int(x: &'p Int<'p>) -> Self {
        let program = super::program::Value::program(x);
        Self::wrap(program, |b| {
            let bits = convert::from_digits(b, x.digits())?;
            Ok(convert::resize(b, &bits, BITS, true))
        })
    }
}

/// The overflow of an addition from its carries: the carry out
/// (unsigned), or the carries into and out of the top bit differing
/// (signed).
fn overflow_flag<const BITS: usize, const SIGNED: bool>(
    b: &mut CircuitBuilder,
    carries: &[Wire],
) -> Result<Wire, Error> {
    if SIGNED && BITS > 0 {
        gates::gate(
            b,
            &mut Selectors::for_bits(),
            Gate::Xor,
            carries[BITS - 1],
            carries[BITS],
        )
    } else {
        Ok(carries[BITS])
    }
}

impl<'p> Bool<'p> {
    fn wrap(
        program: &'p Program,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<Wire, Error>,
    ) -> Self {
        Bool {
            program,
            bits: program.bits_of(1, |b| Ok(Bits::from_vec(vec![f(b)?]))),
        }
    }

    fn bit(&self) -> Wire {
        self.bits.wires()[0]
    }

    /// The wire of this bit (stored as 0 or [`crate::bits::ONE`]), for
    /// circuit-level functions (see [`Word::from_circuit`]).
    pub fn wire(&self) -> Wire {
        self.bit()
    }

    /// The program this boolean belongs to.
    pub fn owner(&self) -> &'p Program {
        self.program
    }

    /// A boolean built by `f` on `program`'s circuit builder, as
    /// [`Word::from_circuit`]: `f` returns one wire, checked to be a bit.
    pub fn from_circuit(
        program: &'p Program,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<Wire, Error>,
    ) -> Self {
        Bool::wrap(program, f)
    }

    /// An encrypted input.
    pub fn input(program: &'p Program) -> Self {
        program.push_input(Shape::Word {
            bits: 1,
            signed: false,
        });
        Bool {
            program,
            bits: program.bits_of(1, |b| Bits::input(b, 1)),
        }
    }

    /// The value when it is a clear constant, else `None` (see
    /// [`Word::clear_value`]).
    pub fn clear_value(&self) -> Option<bool> {
        self.program
            .run(|b| Ok(b.constant_value(self.bit())?))?
            .map(|v| v != 0)
    }

    /// A clear constant: free.
    pub fn constant(program: &'p Program, value: bool) -> Self {
        Bool::wrap(program, |b| Ok(b.constant(if value { ONE } else { 0 })))
    }

    fn gate(&self, g: Gate, rhs: &Bool<'_>) -> Bool<'p> {
        Bool::wrap(self.program, |b| {
            same_program(self.program, rhs.program, "a boolean")?;
            gates::gate(b, &mut Selectors::for_bits(), g, self.bit(), rhs.bit())
        })
    }

    /// Per bit, `if self { a } else { b }` (one multiplexer per bit).
    pub fn select<const BITS: usize, const SIGNED: bool>(
        &self,
        a: &Word<'p, BITS, SIGNED>,
        b: &Word<'p, BITS, SIGNED>,
    ) -> Word<'p, BITS, SIGNED> {
        Word::wrap(self.program, |bld| {
            a.same(b)?;
            same_program(self.program, a.program, "a select")?;
            compare::select(bld, self.bit(), &a.bits, &b.bits)
        })
    }

    /// As an unsigned word of any width (0 or 1).
    pub fn to_word<const BITS: usize>(&self) -> Word<'p, BITS, false> {
        Word::wrap(self.program, |b| {
            Ok(convert::resize(b, &self.bits, BITS, false))
        })
    }
}

macro_rules! word_binop {
    ($trait:ident, $method:ident, $f:expr) => {
        impl<'p, const BITS: usize, const SIGNED: bool> $trait<&Word<'_, BITS, SIGNED>>
            for &Word<'p, BITS, SIGNED>
        {
            type Output = Word<'p, BITS, SIGNED>;
            fn $method(self, rhs: &Word<'_, BITS, SIGNED>) -> Word<'p, BITS, SIGNED> {
                let f: fn(&mut CircuitBuilder, &Bits, &Bits, bool) -> Result<Bits, Error> = $f;
                Word::wrap(self.program, |b| {
                    same_program(self.program, rhs.program, "a word")?;
                    f(b, &self.bits, &rhs.bits, SIGNED)
                })
            }
        }

        impl<'p, const BITS: usize, const SIGNED: bool> $trait<i64> for &Word<'p, BITS, SIGNED> {
            type Output = Word<'p, BITS, SIGNED>;
            fn $method(self, rhs: i64) -> Word<'p, BITS, SIGNED> {
                let c = self.constant_like(rhs);
                $trait::$method(self, &c)
            }
        }
    };
}

word_binop!(Add, add, |b, x, y, _| {
    let zero = b.constant(0);
    Ok(adders::add(b, x, y, zero, AdderKind::Auto)?.0)
});
word_binop!(Sub, sub, |b, x, y, _| Ok(adders::sub(
    b,
    x,
    y,
    AdderKind::Auto
)?
.0));
word_binop!(Mul, mul, |b, x, y, _| {
    let n = x.len();
    within(
        || format!("a product of {n} by {n} bits"),
        (n * n) as u64,
        MAX_PRODUCTS,
    )?;
    mul::mul(b, x, y, n, false, MulKind::Auto)
});
word_binop!(Div, div, |b, x, y, signed| Ok(div::div_rem(
    b, x, y, signed
)?
.0));
word_binop!(Rem, rem, |b, x, y, signed| Ok(div::div_rem(
    b, x, y, signed
)?
.1));
word_binop!(BitAnd, bitand, |b, x, y, _| bitwise::bitwise(
    b,
    Gate::And,
    x,
    y
));
word_binop!(BitOr, bitor, |b, x, y, _| bitwise::bitwise(
    b,
    Gate::Or,
    x,
    y
));
word_binop!(BitXor, bitxor, |b, x, y, _| bitwise::bitwise(
    b,
    Gate::Xor,
    x,
    y
));

impl<'p, const BITS: usize, const SIGNED: bool> Neg for &Word<'p, BITS, SIGNED> {
    type Output = Word<'p, BITS, SIGNED>;
    fn neg(self) -> Word<'p, BITS, SIGNED> {
        let zero = self.constant_like(0);
        &zero - self
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Not for &Word<'p, BITS, SIGNED> {
    type Output = Word<'p, BITS, SIGNED>;
    fn not(self) -> Word<'p, BITS, SIGNED> {
        self.unary(bitwise::not_bits)
    }
}

/// A clear shift amount modulo the width, as Rust's `wrapping_shl`.
fn wrapped_amount<const BITS: usize>(amount: u32) -> usize {
    amount as usize % BITS.max(1)
}

impl<'p, const BITS: usize, const SIGNED: bool> Shl<u32> for &Word<'p, BITS, SIGNED> {
    type Output = Word<'p, BITS, SIGNED>;
    /// By `amount % BITS`, like `wrapping_shl`.
    fn shl(self, amount: u32) -> Word<'p, BITS, SIGNED> {
        let k = wrapped_amount::<BITS>(amount);
        self.unary(|b, x| Ok(shift::shift_clear(b, x, ShiftKind::Left, k)))
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Shr<u32> for &Word<'p, BITS, SIGNED> {
    type Output = Word<'p, BITS, SIGNED>;
    /// By `amount % BITS`, like `wrapping_shr` (arithmetic when signed).
    fn shr(self, amount: u32) -> Word<'p, BITS, SIGNED> {
        let k = wrapped_amount::<BITS>(amount);
        let kind = if SIGNED {
            ShiftKind::ArithRight
        } else {
            ShiftKind::Right
        };
        self.unary(|b, x| Ok(shift::shift_clear(b, x, kind, k)))
    }
}

macro_rules! bool_binop {
    ($trait:ident, $method:ident, $gate:expr) => {
        impl<'p> $trait<&Bool<'_>> for &Bool<'p> {
            type Output = Bool<'p>;
            fn $method(self, rhs: &Bool<'_>) -> Bool<'p> {
                self.gate($gate, rhs)
            }
        }
    };
}

bool_binop!(BitAnd, bitand, Gate::And);
bool_binop!(BitOr, bitor, Gate::Or);
bool_binop!(BitXor, bitxor, Gate::Xor);

impl<'p> Not for &Bool<'p> {
    type Output = Bool<'p>;
    fn not(self) -> Bool<'p> {
        Bool::wrap(self.program, |b| gates::not(b, self.bit()))
    }
}

/// Refuses `what` from another program than `this` one.
fn same_program(this: &Program, other: &Program, what: &str) -> Result<(), Error> {
    if std::ptr::eq(this, other) {
        Ok(())
    } else {
        Err(crate::error::BuildError::ForeignWire {
            node: format!("{what} of another program"),
        }
        .into())
    }
}
