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
use super::operand::Val;
use super::ops::{BoolOp, IntOp, Op, Overflowing, ValueId, WordArith, WordOp};
use super::program::{Program, Value, NO_VALUE};
use super::table::AnyWidth;
use super::Int;
use crate::bits::gates::Gate;
use crate::bits::shift::ShiftKind;
use crate::bits::Bits;
use crate::circuit::{CircuitBuilder, Wire};
use crate::comparison::Comparison;
use crate::crypto::encoding::Shape;
use crate::error::Error;

/// An encrypted `BITS`-bit integer, unsigned or two's complement.
#[derive(Clone)]
pub struct Word<'p, const BITS: usize, const SIGNED: bool> {
    program: &'p Program,
    id: ValueId,
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

/// AES-128's eleven round keys as one word ([`U128::aes_key_schedule`]):
/// round key `r`'s bit `i` of byte `n` at `128 r + 8 n + i`.
pub type AesRoundKeys<'p> = Word<'p, { crate::ciphers::aes::ROUND_KEY_BITS }, false>;

/// An encrypted boolean.
#[derive(Clone)]
pub struct Bool<'p> {
    program: &'p Program,
    id: ValueId,
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

    fn id(&self) -> ValueId {
        self.id
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

    fn id(&self) -> ValueId {
        self.id
    }
}

impl Program {
    /// The words `op` makes, each checked to be `shapes[i]` (after an
    /// error, kept for [`Program::build`]: `None`).
    fn words_of(
        &self,
        op: Option<impl Into<Op>>,
        shapes: &[Shape],
    ) -> Option<Vec<(ValueId, Bits)>> {
        let made = op.and_then(|op| self.apply(op.into()))?;
        let fits = made.len() == shapes.len()
            && made.iter().zip(shapes).all(|((_, v), s)| v.shape() == *s);
        if !fits {
            self.fail(Error::Internal(
                "a word operation made values of another shape".into(),
            ));
            return None;
        }
        Some(
            made.into_iter()
                .map(|(id, v)| match v {
                    Val::Word(b, _) => (id, b),
                    Val::Int(_) => unreachable!("shapes checked: words"),
                })
                .collect(),
        )
    }

    /// `n` clear zero bits: the wires of a value made after an error.
    fn zeros(&self, n: usize) -> Bits {
        let zero = self.state.borrow_mut().builder.constant(0);
        Bits::from_vec(vec![zero; n])
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Word<'p, BITS, SIGNED> {
    const SHAPE: Shape = Shape::Word {
        bits: BITS,
        signed: SIGNED,
    };

    pub(crate) fn from_parts(program: &'p Program, id: ValueId, bits: Bits) -> Self {
        Word { program, id, bits }
    }

    fn from_made(program: &'p Program, made: Option<(ValueId, Bits)>) -> Self {
        match made {
            Some((id, bits)) => Word { program, id, bits },
            None => Word {
                program,
                id: NO_VALUE,
                bits: program.zeros(BITS),
            },
        }
    }

    /// The word `op` makes on `program`.
    fn made(program: &'p Program, op: Option<impl Into<Op>>) -> Self {
        let made = program
            .words_of(op, &[Self::SHAPE])
            .and_then(|v| v.into_iter().next());
        Self::from_made(program, made)
    }

    /// The word and boolean `op` makes (an `overflowing_*`, a checked
    /// division).
    fn with_flag(program: &'p Program, op: Option<WordOp>) -> (Self, Bool<'p>) {
        let made = program.words_of(op, &[Self::SHAPE, Bool::SHAPE]);
        let (w, b) = match made {
            Some(mut v) => {
                let b = v.pop();
                (v.pop(), b)
            }
            None => (None, None),
        };
        (Self::from_made(program, w), Bool::from_made(program, b))
    }

    /// This value's id, or `None` (an error kept) for one of another
    /// program than `program`.
    fn arg(&self, program: &Program) -> Option<ValueId> {
        program.id_of(self, "a word")
    }

    fn unary(&self, op: impl FnOnce(ValueId) -> WordOp) -> Self {
        Self::made(self.program, self.arg(self.program).map(op))
    }

    fn binary(&self, other: &Self, op: impl FnOnce(ValueId, ValueId) -> WordOp) -> Self {
        let p = self.program;
        Self::made(p, self.arg(p).zip(other.arg(p)).map(|(x, y)| op(x, y)))
    }

    fn test(&self, other: &Self, op: impl FnOnce(ValueId, ValueId) -> WordOp) -> Bool<'p> {
        let p = self.program;
        Bool::made(p, self.arg(p).zip(other.arg(p)).map(|(x, y)| op(x, y)))
    }

    /// An encrypted input.
    pub fn input(program: &'p Program) -> Self {
        Self::made(program, Some(Op::Input(Self::SHAPE)))
    }

    /// A clear constant (its low `BITS` bits, two's complement): free.
    pub fn constant(program: &'p Program, value: impl Into<BigInt>) -> Self {
        Self::made(program, Some(WordOp::Const(BITS, SIGNED, value.into())))
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
    /// [`Program::build`] (the word is then clear zeros). A program with
    /// such a word cannot be written to a file.
    pub fn from_circuit(
        program: &'p Program,
        f: impl FnOnce(&mut CircuitBuilder) -> Result<Bits, Error>,
    ) -> Self {
        let made = program.custom(|b| {
            let bits = f(b)?;
            if bits.len() != BITS {
                return Err(Error::Config(format!(
                    "a custom operation returned {} bits for a {BITS}-bit word",
                    bits.len()
                )));
            }
            Ok(Val::Word(bits, SIGNED))
        });
        Self::from_made(
            program,
            made.map(|(id, v)| match v {
                Val::Word(b, _) => (id, b),
                Val::Int(_) => unreachable!("built as a word"),
            }),
        )
    }

    fn constant_like(&self, value: impl Into<BigInt>) -> Self {
        Self::constant(self.program, value)
    }

    /// `self + rhs` and whether it overflowed (Rust's `overflowing_add`):
    /// the carry out (unsigned), or the carries into and out of the top
    /// bit differing (signed: one XOR more).
    pub fn overflowing_add(&self, rhs: &Self) -> (Self, Bool<'p>) {
        self.overflowing(Overflowing::Add, rhs)
    }

    /// `self - rhs` and whether it overflowed (Rust's `overflowing_sub`):
    /// a borrow (unsigned), or the signed overflow of `x + not y + 1`.
    pub fn overflowing_sub(&self, rhs: &Self) -> (Self, Bool<'p>) {
        self.overflowing(Overflowing::Sub, rhs)
    }

    /// `self * rhs` and whether it overflowed (Rust's `overflowing_mul`):
    /// the full `2 * BITS`-bit product, overflow when its high half is not
    /// the extension of the low one.
    pub fn overflowing_mul(&self, rhs: &Self) -> (Self, Bool<'p>) {
        self.overflowing(Overflowing::Mul, rhs)
    }

    fn overflowing(&self, kind: Overflowing, rhs: &Self) -> (Self, Bool<'p>) {
        let p = self.program;
        let op = self
            .arg(p)
            .zip(rhs.arg(p))
            .map(|(x, y)| WordOp::Overflowing(kind, x, y));
        Self::with_flag(p, op)
    }

    /// `(self / rhs, self % rhs)`, wrapping (see the module doc for zero).
    pub fn div_rem(&self, rhs: &Self) -> (Self, Self) {
        let p = self.program;
        let op = self
            .arg(p)
            .zip(rhs.arg(p))
            .map(|(x, y)| WordOp::DivRem(x, y));
        let made = p.words_of(op, &[Self::SHAPE, Self::SHAPE]);
        let (q, r) = match made {
            Some(mut v) => {
                let r = v.pop();
                (v.pop(), r)
            }
            None => (None, None),
        };
        (Self::from_made(p, q), Self::from_made(p, r))
    }

    /// `self / rhs` and whether Rust's `checked_div` would return `Some`
    /// (false for a zero divisor, and for signed `MIN / -1`).
    pub fn checked_div(&self, rhs: &Self) -> (Self, Bool<'p>) {
        let p = self.program;
        let op = self
            .arg(p)
            .zip(rhs.arg(p))
            .map(|(x, y)| WordOp::CheckedDiv(x, y));
        Self::with_flag(p, op)
    }

    fn cmp(&self, rhs: &Self, c: Comparison) -> Bool<'p> {
        self.test(rhs, |x, y| WordOp::Compare(x, y, c))
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
        self.binary(rhs, WordOp::Max)
    }

    /// The smaller of the two.
    pub fn min(&self, rhs: &Self) -> Self {
        self.binary(rhs, WordOp::Min)
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
        let products: Option<Vec<_>> = products
            .iter()
            .map(|(x, y)| x.arg(program).zip(y.arg(program)))
            .collect();
        let scaled: Option<Vec<_>> = scaled
            .iter()
            .map(|(x, k)| x.arg(program).map(|x| (x, (*k).clone())))
            .collect();
        let op = products.zip(scaled).map(|(products, scaled)| {
            WordOp::FusedSum(BITS, SIGNED, products, scaled, bias.clone())
        });
        Self::made(program, op)
    }

    /// The dot product `sum_i xs[i] * ys[i]`, wrapping
    /// ([`Word::fused_sum`]); slices of different lengths are an
    /// [`Error::Dimensions`].
    pub fn dot(program: &'p Program, xs: &[Self], ys: &[Self]) -> Self {
        if let Err(e) = same_len("dot product", xs.len(), ys.len()) {
            program.fail(e);
            return Self::made(program, None::<Op>);
        }
        let pairs: Vec<_> = xs.iter().zip(ys).collect();
        Self::fused_sum(program, &pairs, &[], &BigInt::from(0))
    }

    /// `sum_i ws[i] * xs[i] + bias` for clear weights, wrapping
    /// ([`Word::fused_sum`]).
    pub fn dot_clear(program: &'p Program, xs: &[Self], ws: &[BigInt], bias: &BigInt) -> Self {
        if let Err(e) = same_len("dot product with clear weights", xs.len(), ws.len()) {
            program.fail(e);
            return Self::made(program, None::<Op>);
        }
        let scaled: Vec<_> = xs.iter().zip(ws).collect();
        Self::fused_sum(program, &[], &scaled, bias)
    }

    fn shift_by<const A: usize>(&self, kind: ShiftKind, amount: &Word<'_, A, false>) -> Self {
        let p = self.program;
        let op = self
            .arg(p)
            .zip(p.id_of(amount, "a shift amount"))
            .map(|(x, a)| WordOp::ShiftBy(x, kind, a));
        Self::made(p, op)
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
        self.unary(|x| WordOp::Shift(x, ShiftKind::RotateLeft, amount))
    }

    /// Rotates right by a clear amount, modulo the width: free rewiring.
    pub fn rotate_right(&self, amount: u32) -> Self {
        self.unary(|x| WordOp::Shift(x, ShiftKind::RotateRight, amount))
    }

    /// The number of set bits (Rust's `count_ones`).
    pub fn count_ones(&self) -> U32<'p> {
        Word::made(self.program, self.arg(self.program).map(WordOp::CountOnes))
    }

    /// The number of leading zeros (Rust's `leading_zeros`).
    pub fn leading_zeros(&self) -> U32<'p> {
        Word::made(
            self.program,
            self.arg(self.program).map(WordOp::LeadingZeros),
        )
    }

    /// The bits in reverse order (`reverse_bits`): free rewiring.
    pub fn reverse_bits(&self) -> Self {
        self.unary(WordOp::ReverseBits)
    }

    /// The bytes in reverse order (whole bytes only).
    pub fn swap_bytes(&self) -> Self {
        self.unary(WordOp::SwapBytes)
    }

    /// Bit `i` (least significant first) as a [`Bool`]: free. An `i` at
    /// or beyond `BITS` is an error for [`Program::build`].
    pub fn bit(&self, i: usize) -> Bool<'p> {
        Bool::made(
            self.program,
            self.arg(self.program).map(|x| WordOp::Bit(x, i)),
        )
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
        Word::made(
            self.program,
            self.arg(self.program)
                .map(|value| WordOp::Cast(value, B2, S2)),
        )
    }

    /// The exact value as a signed-binary [`Int`] (needs a parameter set
    /// that carries both families, `pi >= 5`).
    pub fn to_int(&self) -> Int<'p> {
        self.program.int(self.arg(self.program).map(WordOp::ToInt))
    }

    /// `x` modulo `2^BITS` as a word (Rust's `as` from a wide integer).
    pub fn from_int(x: &Int<'p>) -> Self {
        let program = x.owner();
        Self::made(
            program,
            program
                .id_of(x, "an integer")
                .map(|value| IntOp::ToWord(value, BITS, SIGNED)),
        )
    }
}

/// Transciphering: the data owner encrypts with a light cipher and sends
/// the ciphertext at the size of the data; its key, encrypted once, is a
/// `U128` input, and these methods turn the owner's ciphertext (an
/// unsigned word of any width whose value's little-endian bytes are the
/// ciphertext's bytes, as an input or a constant) into the encrypted data.
impl<'p> U128<'p> {
    /// AES-128's round keys of this key (its value's little-endian bytes
    /// are the key): 40 S-boxes, 3 400 bootstraps on `DIGITS_KS32_128`.
    /// Output them from one program to start later ones from them.
    pub fn aes_key_schedule(&self) -> AesRoundKeys<'p> {
        Word::made(
            self.program,
            self.arg(self.program).map(WordOp::AesKeySchedule),
        )
    }

    /// Kreyvium with this key: the data under `sealed`, the owner's
    /// ciphertext from the first keystream bit after loading `iv` (key and
    /// IV bytes are their values' little-endian bytes, the published
    /// vectors' order). The warm-up, then 4 bootstraps a data bit.
    pub fn kreyvium_decrypt<const N: usize>(
        &self,
        iv: &U128<'p>,
        sealed: &Word<'p, N, false>,
    ) -> Word<'p, N, false> {
        let p = self.program;
        let op = (|| {
            Some(WordOp::Kreyvium(
                self.arg(p)?,
                iv.arg(p)?,
                AnyWidth(sealed.arg(p)?),
            ))
        })();
        Word::made(p, op)
    }
}

impl<'p> AesRoundKeys<'p> {
    /// AES-128 in counter mode with these round keys: the data under
    /// `sealed`, the owner's ciphertext whose first block was encrypted
    /// with the counter block `counter` (the block is the value's
    /// big-endian bytes, as RustCrypto's `Ctr128BE` and tfhe-rs's `AesIv`
    /// count). 8 752 bootstraps a block on `DIGITS_KS32_128`; a clear
    /// counter costs nothing, an encrypted one an addition per block after
    /// the first.
    pub fn aes_ctr_decrypt<const N: usize>(
        &self,
        counter: &U128<'p>,
        sealed: &Word<'p, N, false>,
    ) -> Word<'p, N, false> {
        let p = self.program;
        let op = (|| {
            Some(WordOp::AesCtr(
                self.arg(p)?,
                AnyWidth(counter.arg(p)?),
                AnyWidth(sealed.arg(p)?),
            ))
        })();
        Word::made(p, op)
    }
}

impl<'p> Bool<'p> {
    const SHAPE: Shape = Shape::Word {
        bits: 1,
        signed: false,
    };

    pub(crate) fn from_parts(program: &'p Program, id: ValueId, bits: Bits) -> Self {
        Bool { program, id, bits }
    }

    fn from_made(program: &'p Program, made: Option<(ValueId, Bits)>) -> Self {
        match made {
            Some((id, bits)) => Bool { program, id, bits },
            None => Bool {
                program,
                id: NO_VALUE,
                bits: program.zeros(1),
            },
        }
    }

    /// The boolean `op` makes on `program`.
    fn made(program: &'p Program, op: Option<impl Into<Op>>) -> Self {
        let made = program
            .words_of(op, &[Self::SHAPE])
            .and_then(|v| v.into_iter().next());
        Self::from_made(program, made)
    }

    fn arg(&self, program: &Program) -> Option<ValueId> {
        program.id_of(self, "a boolean")
    }

    /// The wire of this bit (stored as 0 or [`crate::bits::ONE`]), for
    /// circuit-level functions (see [`Word::from_circuit`]).
    pub fn wire(&self) -> Wire {
        self.bits.wires()[0]
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
        let made = program.custom(|b| Ok(Val::Word(Bits::from_vec(vec![f(b)?]), false)));
        Self::from_made(
            program,
            made.map(|(id, v)| match v {
                Val::Word(b, _) => (id, b),
                Val::Int(_) => unreachable!("built as a boolean"),
            }),
        )
    }

    /// An encrypted input.
    pub fn input(program: &'p Program) -> Self {
        Self::made(program, Some(Op::Input(Self::SHAPE)))
    }

    /// The value when it is a clear constant, else `None` (see
    /// [`Word::clear_value`]).
    pub fn clear_value(&self) -> Option<bool> {
        self.program
            .run(|b| Ok(b.constant_value(self.wire())?))?
            .map(|v| v != 0)
    }

    /// A clear constant: free.
    pub fn constant(program: &'p Program, value: bool) -> Self {
        Self::made(
            program,
            Some(WordOp::Const(1, false, BigInt::from(value as u8))),
        )
    }

    fn gate(&self, g: Gate, rhs: &Bool<'_>) -> Bool<'p> {
        let p = self.program;
        Self::made(
            p,
            self.arg(p)
                .zip(rhs.arg(p))
                .map(|(x, y)| BoolOp::Gate(g, x, y)),
        )
    }

    /// Per bit, `if self { a } else { b }` (one multiplexer per bit).
    pub fn select<const BITS: usize, const SIGNED: bool>(
        &self,
        a: &Word<'p, BITS, SIGNED>,
        b: &Word<'p, BITS, SIGNED>,
    ) -> Word<'p, BITS, SIGNED> {
        let p = self.program;
        let op = self
            .arg(p)
            .zip(a.arg(p))
            .zip(b.arg(p))
            .map(|((c, x), y)| BoolOp::Select(c, x, y));
        Word::made(p, op)
    }

    /// As an unsigned word of any width (0 or 1).
    pub fn to_word<const BITS: usize>(&self) -> Word<'p, BITS, false> {
        Word::made(
            self.program,
            self.arg(self.program).map(|x| BoolOp::ToWord(x, BITS)),
        )
    }
}

macro_rules! word_binop {
    ($trait:ident, $method:ident, $arith:expr) => {
        impl<'p, const BITS: usize, const SIGNED: bool> $trait<&Word<'_, BITS, SIGNED>>
            for &Word<'p, BITS, SIGNED>
        {
            type Output = Word<'p, BITS, SIGNED>;
            fn $method(self, rhs: &Word<'_, BITS, SIGNED>) -> Word<'p, BITS, SIGNED> {
                let p = self.program;
                Word::made(
                    p,
                    self.arg(p)
                        .zip(rhs.arg(p))
                        .map(|(x, y)| WordOp::Arith($arith, x, y)),
                )
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

word_binop!(Add, add, WordArith::Add);
word_binop!(Sub, sub, WordArith::Sub);
word_binop!(Mul, mul, WordArith::Mul);
word_binop!(Div, div, WordArith::Div);
word_binop!(Rem, rem, WordArith::Rem);
word_binop!(BitAnd, bitand, WordArith::And);
word_binop!(BitOr, bitor, WordArith::Or);
word_binop!(BitXor, bitxor, WordArith::Xor);

impl<'p, const BITS: usize, const SIGNED: bool> Neg for &Word<'p, BITS, SIGNED> {
    type Output = Word<'p, BITS, SIGNED>;
    fn neg(self) -> Word<'p, BITS, SIGNED> {
        self.unary(WordOp::Neg)
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Not for &Word<'p, BITS, SIGNED> {
    type Output = Word<'p, BITS, SIGNED>;
    fn not(self) -> Word<'p, BITS, SIGNED> {
        self.unary(WordOp::Not)
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Shl<u32> for &Word<'p, BITS, SIGNED> {
    type Output = Word<'p, BITS, SIGNED>;
    /// By `amount % BITS`, like `wrapping_shl`.
    fn shl(self, amount: u32) -> Word<'p, BITS, SIGNED> {
        self.unary(|x| WordOp::Shift(x, ShiftKind::Left, amount))
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Shr<u32> for &Word<'p, BITS, SIGNED> {
    type Output = Word<'p, BITS, SIGNED>;
    /// By `amount % BITS`, like `wrapping_shr` (arithmetic when signed).
    fn shr(self, amount: u32) -> Word<'p, BITS, SIGNED> {
        let kind = if SIGNED {
            ShiftKind::ArithRight
        } else {
            ShiftKind::Right
        };
        self.unary(|x| WordOp::Shift(x, kind, amount))
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
        Bool::made(self.program, self.arg(self.program).map(BoolOp::Not))
    }
}
