//! The integer family's operations ([`IntOp`]), a row each: what each
//! reads, what building it may cost, and how it is built on the
//! signed-binary digits family (`op_table!` in `table.rs`).
//! [`super::Int`]'s methods (`int.rs`) record them; Python calls the rows
//! marked `python` by name.

use num_bigint::BigInt;
use num_traits::One;

use super::operand::{
    bits_work, int, product_work, products_within, sum_work, width_within, Val, ValueId,
};
use super::table::op_table;
use crate::bits::convert;
use crate::comparison::Comparison;
use crate::crypto::encoding::{digits_within, within, MAX_PRODUCTS};
use crate::digits::{self, Digits, MulAlgorithm};

/// One integer value, the result of a build.
fn one(d: Digits) -> Result<Vec<Val>, crate::error::Error> {
    Ok(vec![Val::Int(d)])
}

/// `d ** e` by squaring and multiplying from the exponent's top bit:
/// one square per bit below it, one product per set bit below it.
fn power(
    b: &mut crate::circuit::CircuitBuilder,
    d: &Digits,
    e: usize,
) -> Result<Digits, crate::error::Error> {
    if e == 0 {
        return Ok(Digits::constant(b, &BigInt::one()));
    }
    let mut acc = d.clone();
    for i in (0..e.ilog2()).rev() {
        products_within(acc.len(), acc.len())?;
        acc = digits::square(b, &acc, MulAlgorithm::Auto)?;
        if e >> i & 1 == 1 {
            products_within(acc.len(), d.len())?;
            acc = digits::mul(b, &acc, d, MulAlgorithm::Auto)?;
        }
    }
    Ok(acc)
}

op_table! {
    /// An operation of the integer family (`Int`, signed-binary digits).
    /// Operands are values made before it; lengths come from the operands.
    pub enum IntOp;

    /// A clear integer (trivial digits).
    Const(value: BigInt) "constant" python: false,
        work(len) { bits_work(value) }
        build(b, args) {
            digits_within("a constant", value.bits())?;
            one(Digits::constant(b, value))
        }
    /// `x + y`.
    Add(x: ValueId, y: ValueId) "add" python: false,
        work(len) { 0 }
        build(b, args) { one(digits::add(b, int(args[0])?, int(args[1])?)?) }
    /// `x - y`.
    Sub(x: ValueId, y: ValueId) "sub" python: false,
        work(len) { 0 }
        build(b, args) { one(digits::sub(b, int(args[0])?, int(args[1])?)?) }
    /// `x * y`, exact.
    Mul(x: ValueId, y: ValueId) "mul" python: false,
        work(len) { product_work(len, *x, *y) }
        build(b, args) {
            let (p, q) = (int(args[0])?, int(args[1])?);
            products_within(p.len(), q.len())?;
            one(digits::mul(b, p, q, MulAlgorithm::Auto)?)
        }
    /// `-x`.
    Neg(x: ValueId) "neg" python: false,
        work(len) { 0 }
        build(b, args) { one(int(args[0])?.neg(b)?) }
    /// `x + c`.
    AddConst(x: ValueId, c: BigInt) "add_const" python: false,
        work(len) { 0 }
        build(b, args) { one(digits::add_const(b, int(args[0])?, c)?) }
    /// `x * k` for a clear `k`.
    ScalarMul(x: ValueId, k: BigInt) "scalar_mul" python: false,
        work(len) { len(*x).saturating_mul(bits_work(k)) }
        build(b, args) {
            let d = int(args[0])?;
            digits_within("a scalar product", d.len() as u64 + k.bits())?;
            one(digits::scalar_mul(b, d, k)?)
        }
    /// `x << k`.
    Shl(x: ValueId, k: usize) "shl" python: false,
        work(len) { *k as u64 }
        build(b, args) {
            let d = int(args[0])?;
            digits_within("a shift", (d.len() as u64).saturating_add(*k as u64))?;
            one(d.shl(b, *k))
        }
    /// `max(x, y)`.
    Max(x: ValueId, y: ValueId) "max" python: false,
        work(len) { 0 }
        build(b, args) { one(digits::max(b, int(args[0])?, int(args[1])?)?) }
    /// `min(x, y)`.
    Min(x: ValueId, y: ValueId) "min" python: false,
        work(len) { 0 }
        build(b, args) { one(digits::min(b, int(args[0])?, int(args[1])?)?) }
    /// `|x|`.
    Abs(x: ValueId) "abs" python: false,
        work(len) { 0 }
        build(b, args) { one(digits::abs(b, int(args[0])?)?) }
    /// `max(x, 0)`.
    Relu(x: ValueId) "relu" python: false,
        work(len) { 0 }
        build(b, args) { one(digits::relu(b, int(args[0])?)?) }
    /// `x * x`.
    Square(x: ValueId) "square" python: false,
        work(len) { product_work(len, *x, *x) }
        build(b, args) {
            let d = int(args[0])?;
            products_within(d.len(), d.len())?;
            one(digits::square(b, d, MulAlgorithm::Auto)?)
        }
    /// The sign: -1, 0 or 1 (exact integers).
    Signum(x: ValueId) "signum" python: true,
        work(len) { 0 }
        build(b, args) {
            let w = digits::signum(b, int(args[0])?)?;
            one(Digits::from_wires(b, vec![w])?)
        }
    /// Rounded to a multiple of ``2**i`` (exact integers).
    Round(x: ValueId, i: usize) "round" python: true,
        work(len) { *i as u64 }
        build(b, args) {
            let d = int(args[0])?;
            digits_within("a rounding position", *i as u64)?;
            one(digits::round(b, d, *i)?)
        }
    /// `x <op> y` as one digit, 1 or 0.
    Compare(x: ValueId, y: ValueId, c: Comparison) "compare" python: false,
        work(len) { 0 }
        build(b, args) {
            let w = digits::compare(b, int(args[0])?, int(args[1])?, *c)?;
            one(Digits::from_wires(b, vec![w])?)
        }
    /// The two's-complement bits of ``x`` (one more than its digits) as
    /// an integer's digits: its value is ``x`` modulo ``2**(len(x) + 1)``.
    ToBits(x: ValueId) "to_bits" python: true,
        work(len) { 0 }
        build(b, args) {
            let bits = digits::to_bits(b, int(args[0])?)?;
            one(Digits::from_wires(b, bits)?)
        }
    /// Reduced to ``n``-bit two's complement (exact integers).
    Wrap(x: ValueId, n: usize) "wrap" python: true,
        work(len) { *n as u64 }
        build(b, args) {
            digits_within("a wrapped value", *n as u64)?;
            one(digits::wrap(b, int(args[0])?, *n)?)
        }
    /// ``(x + y)`` reduced to ``n``-bit two's complement.
    WrappingAdd(x: ValueId, y: ValueId, n: usize) "wrapping_add" python: true,
        work(len) { *n as u64 }
        build(b, args) {
            let (p, q) = (int(args[0])?, int(args[1])?);
            digits_within("a wrapped value", *n as u64)?;
            if let Some(s) = digits::convert::wrapping_add_bits(b, p, q, *n)? {
                return one(s);
            }
            let (pl, _) = p.split(*n);
            let (ql, _) = q.split(*n);
            let s = digits::add(b, &pl, &ql)?;
            one(digits::wrap(b, &s, *n)?)
        }
    /// ``(x * y)`` reduced to ``n``-bit two's complement (a square,
    /// ``x.wrapping_mul(x, n)``, in about half the bootstraps).
    WrappingMul(x: ValueId, y: ValueId, n: usize) "wrapping_mul" python: true,
        work(len) { product_work(len, *x, *y) }
        build(b, args) {
            let (p, q) = (int(args[0])?, int(args[1])?);
            digits_within("a wrapped value", *n as u64)?;
            let (pl, _) = p.split(*n);
            let (ql, _) = q.split(*n);
            products_within(pl.len(), ql.len())?;
            if pl.wires() == ql.wires() {
                return one(digits::square_wrapping(b, &pl, *n)?);
            }
            one(digits::mul_wrapping(b, &pl, &ql, *n)?)
        }
    /// `floor(x / 2^k)`.
    ShrFloor(x: ValueId, k: usize) "shr_floor" python: false,
        work(len) { *k as u64 }
        build(b, args) {
            let d = int(args[0])?;
            if *k == 0 {
                return one(d.clone());
            }
            digits_within("a shift", *k as u64)?;
            let half = BigInt::one() << (k - 1);
            let shifted = digits::add_const(b, d, &-half)?;
            let r = digits::round(b, &shifted, *k)?;
            one(r.split(*k).1)
        }
    /// The same integer on at least ``n`` digits (zero digits on top).
    Widen(x: ValueId, n: usize) "widen" python: true,
        work(len) { 0 }
        build(b, args) {
            digits_within("a widened value", *n as u64)?;
            let d = int(args[0])?;
            let mut wires = d.wires().to_vec();
            while wires.len() < *n {
                wires.push(b.constant(0));
            }
            one(Digits::from_wires(b, wires)?)
        }
    /// The sum of the values.
    Sum(xs: Vec<ValueId>) "sum" python: false,
        work(len) { 0 }
        build(b, args) {
            let ds = args
                .iter()
                .map(|v| int(v).cloned())
                .collect::<Result<Vec<_>, _>>()?;
            one(digits::sum(b, &ds)?)
        }
    /// `sum x_i y_i + sum k_j z_j + bias`, exact, in one compression.
    FusedSum(products: Vec<(ValueId, ValueId)>, scaled: Vec<(ValueId, BigInt)>, bias: BigInt)
        "fused_sum" python: false,
        work(len) { sum_work(len, products, scaled, bias) }
        build(b, args) {
            let (pa, sa) = args.split_at(2 * products.len());
            let pairs = pa
                .chunks(2)
                .map(|p| Ok((int(p[0])?, int(p[1])?)))
                .collect::<Result<Vec<_>, crate::error::Error>>()?;
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
                .collect::<Result<Vec<_>, crate::error::Error>>()?;
            one(digits::dot(b, &pairs, &scaled, bias)?)
        }
    /// An integer modulo `2^bits` as a word ([`super::Word::from_int`]),
    /// two's complement if `signed`.
    ToWord(x: ValueId, bits: usize, signed: bool) "to_word" python: false,
        work(len) { *bits as u64 }
        build(b, args) {
            let d = int(args[0])?;
            width_within(*bits)?;
            let wires = convert::from_digits(b, d)?;
            Ok(vec![Val::Word(
                convert::resize(b, &wires, *bits, true),
                *signed,
            )])
        }
    /// ``|x - y|``, exact.
    AbsDiff(x: ValueId, y: ValueId) "abs_diff" python: true,
        work(len) { 0 }
        build(b, args) {
            let d = digits::sub(b, int(args[0])?, int(args[1])?)?;
            one(digits::abs(b, &d)?)
        }
    /// ``x ** e`` for a clear exponent ``e``, exact (``x ** 0`` is 1).
    Pow(x: ValueId, e: usize) "pow" python: true,
        work(len) {
            let n = len(*x).saturating_mul(*e as u64);
            n.saturating_mul(n)
        }
        build(b, args) {
            let d = int(args[0])?;
            digits_within("a power", (d.len() as u64).saturating_mul(*e as u64))?;
            one(power(b, d, *e)?)
        }
}
