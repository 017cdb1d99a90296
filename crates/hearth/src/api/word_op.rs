//! The word family's operations ([`WordOp`]), a row each (`op_table!` in
//! `table.rs`): what each reads, what building it may cost, and how it is
//! built on the two's-complement bits family. [`super::Word`]'s methods
//! (`word.rs`) record them; Python calls the rows marked `python` by name.

use num_bigint::BigInt;
use num_traits::One;
use serde::{Deserialize, Serialize};

use super::operand::{
    bits_work, flag_val, kind_error, product_work, sum_work, width_within, word, words, Val,
    ValueId,
};
use super::table::{choice_field, op_table, AnyWidth};
use crate::bits::adders::{self, AdderKind};
use crate::bits::gates::{self, Gate};
use crate::bits::mul::{self as bmul, MulKind};
use crate::bits::shift::{self, ShiftKind};
use crate::bits::{self, bitwise, compare, convert, div, Bits, ONE};
use crate::ciphers::{aes, kreyvium};
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::comparison::Comparison;
use crate::crypto::encoding::{within, Shape, MAX_PRODUCTS};
use crate::error::Error;

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

choice_field!(WordArith {
    Add => "add",
    Sub => "sub",
    Mul => "mul",
    Div => "div",
    Rem => "rem",
    And => "and",
    Or => "or",
    Xor => "xor",
});

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

choice_field!(Overflowing {
    Add => "add",
    Sub => "sub",
    Mul => "mul",
});

/// One word, the result of a build (two's complement if `signed`).
fn one(r: Bits, signed: bool) -> Result<Vec<Val>, Error> {
    Ok(vec![Val::Word(r, signed)])
}

/// A product of `n` by `n` bits, within the bound.
fn square_within(n: usize) -> Result<(), Error> {
    within(
        || format!("a product of {n} by {n} bits"),
        (n * n) as u64,
        MAX_PRODUCTS,
    )
}

op_table! {
    /// An operation of the word family (`Word<BITS, SIGNED>`,
    /// two's-complement bits, Rust's wrapping semantics). Widths and
    /// signedness come from the operands, so a forged list of ops can only
    /// describe programs the typed API could build.
    pub enum WordOp;

    /// A clear word: the low `bits` bits of `value`, two's complement if
    /// `signed`.
    Const(bits: usize, signed: bool, value: BigInt) "constant" python: false,
        work(len) { bits_work(value) }
        build(b, args) {
            width_within(*bits)?;
            one(Bits::constant(b, value, *bits), *signed)
        }
    /// A wrapping two-operand word operation (`op`: add, sub, mul, div,
    /// rem, and, or, xor).
    Arith(op: WordArith, x: ValueId, y: ValueId) "arith" python: false,
        work(len) {
            match op {
                WordArith::Mul | WordArith::Div | WordArith::Rem => product_work(len, *x, *y),
                _ => 0,
            }
        }
        build(b, args) {
            let (p, q, signed) = words(args[0], args[1])?;
            let r = match op {
                WordArith::Add => {
                    let zero = b.constant(0);
                    adders::add(b, p, q, zero, AdderKind::Auto)?.0
                }
                WordArith::Sub => adders::sub(b, p, q, AdderKind::Auto)?.0,
                WordArith::Mul => {
                    let n = p.len();
                    square_within(n)?;
                    bmul::mul(b, p, q, n, false, MulKind::Auto)?
                }
                WordArith::Div => div::div_rem(b, p, q, signed)?.0,
                WordArith::Rem => div::div_rem(b, p, q, signed)?.1,
                WordArith::And => bitwise::bitwise(b, Gate::And, p, q)?,
                WordArith::Or => bitwise::bitwise(b, Gate::Or, p, q)?,
                WordArith::Xor => bitwise::bitwise(b, Gate::Xor, p, q)?,
            };
            one(r, signed)
        }
    /// `!x`.
    Not(x: ValueId) "not" python: false,
        work(len) { 0 }
        build(b, args) {
            let (p, signed) = word(args[0])?;
            one(bitwise::not_bits(b, p)?, signed)
        }
    /// `-x`, wrapping.
    Neg(x: ValueId) "neg" python: false,
        work(len) { 0 }
        build(b, args) {
            let (p, signed) = word(args[0])?;
            one(adders::neg(b, p)?, signed)
        }
    /// A shift or rotation by a clear amount (shifts modulo the width).
    Shift(x: ValueId, kind: ShiftKind, amount: u32) "shift" python: false,
        work(len) { 0 }
        build(b, args) {
            let (p, signed) = word(args[0])?;
            let k = match kind {
                ShiftKind::RotateLeft | ShiftKind::RotateRight => *amount as usize,
                _ => *amount as usize % p.len().max(1),
            };
            one(shift::shift_clear(b, p, *kind, k), signed)
        }
    /// A shift or rotation by an encrypted unsigned amount, modulo the
    /// width.
    ShiftBy(x: ValueId, kind: ShiftKind, amount: ValueId) "shift_by" python: false,
        work(len) { product_work(len, *x, *amount) }
        build(b, args) {
            let (p, signed) = word(args[0])?;
            let (a, amount_signed) = word(args[1])?;
            if amount_signed {
                return Err(kind_error("an unsigned word", args[1]));
            }
            one(shift::shift(b, p, *kind, a)?, signed)
        }
    /// The wrapped result of `op` (add, sub, mul) and Rust's overflow
    /// flag: two values.
    Overflowing(op: Overflowing, x: ValueId, y: ValueId) "overflowing" python: false,
        work(len) {
            match op {
                Overflowing::Mul => product_work(len, *x, *y),
                _ => 0,
            }
        }
        build(b, args) {
            let (p, q, signed) = words(args[0], args[1])?;
            let n = p.len();
            let (r, flag) = match op {
                Overflowing::Add => {
                    let zero = b.constant(0);
                    let (s, c, v) =
                        adders::add_overflowing(b, p, q, zero, AdderKind::Auto, signed)?;
                    (s, v.unwrap_or(c))
                }
                Overflowing::Sub => {
                    let nq = bitwise::not_bits(b, q)?;
                    let carry = b.constant(ONE);
                    let (d, c, v) =
                        adders::add_overflowing(b, p, &nq, carry, AdderKind::Auto, signed)?;
                    match v {
                        Some(v) => (d, v),
                        None => (d, gates::not(b, c)?),
                    }
                }
                Overflowing::Mul => {
                    square_within(n)?;
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
    /// Quotient and remainder (Rust's truncating `/` and `%`): two values.
    DivRem(x: ValueId, y: ValueId) "div_rem" python: false,
        work(len) { product_work(len, *x, *y) }
        build(b, args) {
            let (p, q, signed) = words(args[0], args[1])?;
            let (quot, rem) = div::div_rem(b, p, q, signed)?;
            Ok(vec![Val::Word(quot, signed), Val::Word(rem, signed)])
        }
    /// Quotient and whether Rust's `checked_div` is `Some`: two values.
    CheckedDiv(x: ValueId, y: ValueId) "checked_div" python: false,
        work(len) { product_work(len, *x, *y) }
        build(b, args) {
            let (p, q, signed) = words(args[0], args[1])?;
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
    /// `x <op> y` as a boolean.
    Compare(x: ValueId, y: ValueId, c: Comparison) "compare" python: false,
        work(len) { 0 }
        build(b, args) {
            let (p, q, signed) = words(args[0], args[1])?;
            Ok(vec![flag_val(compare::compare(b, p, q, *c, signed)?)])
        }
    /// `max(x, y)`.
    Max(x: ValueId, y: ValueId) "max" python: false,
        work(len) { 0 }
        build(b, args) {
            let (p, q, signed) = words(args[0], args[1])?;
            one(compare::max(b, p, q, signed)?, signed)
        }
    /// `min(x, y)`.
    Min(x: ValueId, y: ValueId) "min" python: false,
        work(len) { 0 }
        build(b, args) {
            let (p, q, signed) = words(args[0], args[1])?;
            one(compare::min(b, p, q, signed)?, signed)
        }
    /// `sum x_i y_i + sum k_j z_j + bias`, wrapping, in one compression:
    /// a word of `bits` bits, two's complement if `signed`.
    FusedSum(
        bits: usize,
        signed: bool,
        products: Vec<(ValueId, ValueId)>,
        scaled: Vec<(ValueId, BigInt)>,
        bias: BigInt
    ) "fused_sum" python: false,
        work(len) { sum_work(len, products, scaled, bias) }
        build(b, args) {
            let n = *bits;
            width_within(n)?;
            for v in args {
                of_type(v, n, *signed, "a term of a fused sum")?;
            }
            within(
                || "a fused sum (bit products)".into(),
                products.len() as u64 * (n as u64).pow(2),
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
            one(crate::bits::dot::dot(b, &pairs, &scaled, bias, n, *signed)?, *signed)
        }
    /// `sum_k c_k x^k`, wrapping (`x` a word of `bits` bits, two's
    /// complement if `signed`; each `c_k` taken modulo `2^bits`): a
    /// polynomial in one word, as the program's fusion finds it in chains
    /// of sums and products (Horner's rule, powers). Built from `y = x * x`
    /// (a square: about half a product's bootstraps) by Horner's rule in
    /// `y` on coefficients linear in `x`, `sum_j (c_2j + c_2j+1 x) y^j`:
    /// `deg / 2 - 1` products and one square where Horner's rule in `x`
    /// takes `deg - 1` products.
    Polynomial(bits: usize, signed: bool, x: ValueId, coefficients: Vec<BigInt>)
        "polynomial" python: false,
        work(len) { product_work(len, *x, *x) * (coefficients.len() as u64 / 2 + 1) }
        build(b, args) {
            let n = *bits;
            of_type(args[0], n, *signed, "the word of a polynomial")?;
            let (p, _) = word(args[0])?;
            within(
                || "a polynomial (bit products)".into(),
                (coefficients.len() as u64 / 2 + 1) * (n as u64).pow(2),
                MAX_PRODUCTS,
            )?;
            one(polynomial(b, p, coefficients, *signed)?, *signed)
        }
    /// The bits set, as a ``u32`` (Rust's ``count_ones``; words).
    CountOnes(x: ValueId) "count_ones" python: true,
        work(len) { 0 }
        build(b, args) {
            let (p, _) = word(args[0])?;
            one(bitwise::count_ones(b, p, 32)?, false)
        }
    /// The leading zero bits, as a ``u32`` (Rust's ``leading_zeros``; words).
    LeadingZeros(x: ValueId) "leading_zeros" python: true,
        work(len) { 0 }
        build(b, args) {
            let (p, _) = word(args[0])?;
            one(bitwise::leading_zeros(b, p, 32)?, false)
        }
    /// The bits in reverse order (words).
    ReverseBits(x: ValueId) "reverse_bits" python: true,
        work(len) { 0 }
        build(b, args) {
            let (p, signed) = word(args[0])?;
            one(bitwise::reverse_bits(p), signed)
        }
    /// The bytes in reverse order (words of whole bytes).
    SwapBytes(x: ValueId) "swap_bytes" python: true,
        work(len) { 0 }
        build(b, args) {
            let (p, signed) = word(args[0])?;
            if !p.len().is_multiple_of(8) {
                return Err(Error::Config(format!(
                    "swap_bytes needs whole bytes, not {} bits",
                    p.len()
                )));
            }
            one(bitwise::swap_bytes(p), signed)
        }
    /// Bit ``i`` (0 the lowest) as a boolean (words).
    Bit(x: ValueId, i: usize) "bit" python: true,
        work(len) { *i as u64 }
        build(b, args) {
            let (p, _) = word(args[0])?;
            let w = p
                .wires()
                .get(*i)
                .copied()
                .ok_or_else(|| Error::Config(format!("bit {i} of a {}-bit word", p.len())))?;
            Ok(vec![flag_val(w)])
        }
    /// Rust's `as`: the word `x` as `bits` bits, two's complement if
    /// `signed` (truncated, or extended by `x`'s own signedness).
    Cast(x: ValueId, bits: usize, signed: bool) "cast" python: false,
        work(len) { *bits as u64 }
        build(b, args) {
            let (p, from_signed) = word(args[0])?;
            width_within(*bits)?;
            one(convert::resize(b, p, *bits, from_signed), *signed)
        }
    /// A word's exact value as a signed-binary integer
    /// ([`super::Word::to_int`]).
    ToInt(x: ValueId) "to_int" python: false,
        work(len) { 0 }
        build(b, args) {
            let (p, signed) = word(args[0])?;
            Ok(vec![Val::Int(convert::to_digits(b, p, signed)?)])
        }
    /// AES-128's key schedule, for transciphering: the eleven round keys of
    /// a 128-bit key word (the key's bytes are its value's little-endian
    /// bytes), as one unsigned word of 1 408 bits, round key `r`'s bit `i`
    /// of byte `n` at `128 r + 8 n + i`. 40 S-boxes: a program that
    /// outputs it lets later programs start from the round keys.
    AesKeySchedule(key: ValueId) "aes_key_schedule" python: true,
        work(len) { 8_000 }
        build(b, args) {
            let key = unsigned_bits(args[0], 128, "an AES-128 key")?;
            let keys = aes::expand_key(b, key.wires())?;
            one(Bits::from_vec(keys.concat()), false)
        }
    /// AES-128 in counter mode, for transciphering: the data under
    /// `sealed`, the owner's ciphertext as an unsigned word (the bytes are
    /// its value's little-endian bytes; any width), given `round_keys`
    /// from `aes_key_schedule` and `counter`, the first counter block as a
    /// 128-bit word (the block is its value's big-endian bytes, as
    /// `Ctr128BE` and tfhe-rs's `AesIv` count). Keystream block `j` is
    /// `AES(counter + j)`: folded for a clear counter, one encrypted
    /// addition per block otherwise.
    AesCtr(round_keys: ValueId, counter: AnyWidth, sealed: AnyWidth) "aes_ctr" python: true,
        work(len) { len(sealed.0).div_ceil(128).saturating_mul(20_000) }
        build(b, args) {
            let keys = unsigned_bits(args[0], aes::ROUND_KEY_BITS, "AES-128 round keys")?;
            let counter = unsigned_bits(args[1], 128, "an AES counter block")?;
            let (data, _) = word(args[2])?;
            let keys: Vec<Vec<Wire>> = keys.wires().chunks(128).map(<[Wire]>::to_vec).collect();
            let mut out = Vec::with_capacity(data.len());
            for (j, chunk) in data.wires().chunks(128).enumerate() {
                let block = counter_block(b, counter, j)?;
                out.extend(aes::decrypt_block(b, &keys, &block, &aes::wire_bits(chunk))?);
            }
            one(Bits::from_vec(out), false)
        }
    /// Kreyvium, for transciphering: the data under `sealed` (as for
    /// `aes_ctr`), given `key` and `iv`, 128-bit words whose values'
    /// little-endian bytes are the key's and IV's bytes (the published
    /// vectors' order). The warm-up's 1 152 rounds, then four bootstraps
    /// a data bit.
    Kreyvium(key: ValueId, iv: ValueId, sealed: AnyWidth) "kreyvium" python: true,
        work(len) { len(sealed.0).saturating_add(1_152).saturating_mul(8) }
        build(b, args) {
            let key = unsigned_bits(args[0], 128, "a Kreyvium key")?;
            let iv = unsigned_bits(args[1], 128, "a Kreyvium IV")?;
            let (data, _) = word(args[2])?;
            // K1 is the most significant bit of the key's value.
            let order = |w: &Bits| -> [Wire; 128] { std::array::from_fn(|i| w.wires()[127 - i]) };
            let mut stream = kreyvium::Stream::load(b, &order(key), &order(iv))?;
            one(Bits::from_vec(stream.decrypt_wires(b, data.wires())?), false)
        }
}

/// The bits of an unsigned word of `n` bits, or what `what` must be.
fn unsigned_bits<'v>(v: &'v Val, n: usize, what: &str) -> Result<&'v Bits, Error> {
    of_type(v, n, false, what)?;
    Ok(word(v)?.0)
}

/// AES's counter block `j` blocks after `counter` (a 128-bit word whose
/// value's big-endian bytes are the block), in the block's bit order
/// (bit `i` of byte `n` at `8 n + i`): the clear sum for a clear
/// counter, an encrypted addition otherwise.
fn counter_block(b: &mut CircuitBuilder, counter: &Bits, j: usize) -> Result<Vec<aes::Lin>, Error> {
    let value = if j == 0 {
        counter.clone()
    } else {
        let step = Bits::constant(b, &BigInt::from(j), 128);
        let zero = b.constant(0);
        adders::add(b, counter, &step, zero, AdderKind::Auto)?.0
    };
    // Bit `i` of byte `n` of the block is bit `8 (15 - n) + i` of the value.
    let wires = value.wires();
    Ok((0..128)
        .map(|k| {
            let (n, i) = (k / 8, k % 8);
            let w = wires[8 * (15 - n) + i];
            match b.constant_value(w) {
                Ok(Some(v)) => aes::Lin::constant(v == ONE),
                _ => aes::Lin::of(w),
            }
        })
        .collect())
}

/// An error unless `v` is a word of `n` bits and this signedness.
fn of_type(v: &Val, n: usize, signed: bool, what: &str) -> Result<(), Error> {
    let (p, s) = word(v)?;
    if p.len() != n || s != signed {
        return Err(Error::ShapeMismatch {
            what: what.into(),
            expected: Shape::Word { bits: n, signed },
            found: v.shape(),
        });
    }
    Ok(())
}

/// [`WordOp::Polynomial`]: `sum_k c_k x^k` modulo `2^n` by Horner's rule
/// in `y = x * x`, each step `acc * y + c_2j + c_2j+1 x` one fused sum
/// (a step whose `acc` is still clear is a product by a constant).
fn polynomial(
    b: &mut CircuitBuilder,
    x: &Bits,
    coefficients: &[BigInt],
    signed: bool,
) -> Result<Bits, Error> {
    let n = x.len();
    let modulus = BigInt::one() << n;
    let c = |k: usize| -> BigInt {
        coefficients
            .get(k)
            .map_or_else(BigInt::default, |v| ((v % &modulus) + &modulus) % &modulus)
    };
    let top = coefficients.len().saturating_sub(1) / 2;
    let y = (coefficients.len() > 2)
        .then(|| bmul::mul(b, x, x, n, false, MulKind::Auto))
        .transpose()?;
    // The pending step: `acc * y` (acc materialized) or `k * y` (acc the
    // clear k), plus `c_2j + c_2j+1 x`.
    let mut acc: Option<Bits> = None;
    let mut clear = BigInt::default();
    for j in (0..=top).rev() {
        let mut pairs: Vec<(&Bits, &Bits)> = Vec::new();
        let mut scaled: Vec<(&Bits, BigInt)> = Vec::new();
        if j < top {
            let y = y
                .as_ref()
                .ok_or_else(|| Error::Config("polynomial: no square".into()))?;
            match &acc {
                Some(a) => pairs.push((a, y)),
                None => scaled.push((y, clear.clone())),
            }
        }
        scaled.push((x, c(2 * j + 1)));
        scaled.retain(|(_, k)| !num_traits::Zero::is_zero(k));
        let bias = c(2 * j);
        if pairs.is_empty() && scaled.is_empty() {
            acc = None;
            clear = bias;
            continue;
        }
        let refs: Vec<(&Bits, &BigInt)> = scaled.iter().map(|(v, k)| (*v, k)).collect();
        acc = Some(bits::dot::dot(b, &pairs, &refs, &bias, n, signed)?);
    }
    Ok(match acc {
        Some(a) => a,
        None => Bits::constant(b, &clear, n),
    })
}
