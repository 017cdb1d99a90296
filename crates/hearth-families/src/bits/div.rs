//! Division: quotient and remainder, unsigned and signed.
//!
//! Non-restoring division: a remainder register of `n + 1` bits; for each
//! quotient bit, from the top, shift the next dividend bit in, then
//! subtract the divisor if the remainder is non-negative, else add it (the
//! divisor's bits XORed with the decision, the decision as the carry in),
//! and the quotient bit is the new remainder's sign, negated. A final
//! addition corrects a negative remainder. Each step is one adder
//! ([`super::adders`], chosen for the thread count) plus `n` XORs that run
//! beside it.
//!
//! By a clear nonzero divisor there is no loop: the quotient is the top of
//! a product by a clear reciprocal (Granlund and Montgomery), the
//! remainder one more compressed sum (`div_rem_const`).
//!
//! Signed division truncates toward zero like Rust's `wrapping_div`
//! (`MIN / -1 = MIN`); the remainder takes the dividend's sign.
//!
//! Division by zero is not a panic: the flag [`is_zero`] reports it (what
//! Rust's `checked_div` turns into `None`), and the circuit gives the
//! quotient all ones and the remainder the dividend (unsigned; signed: the
//! quotient is -1 for a non-negative dividend and 1 for a negative one),
//! as RISC-V and tfhe-rs do for unsigned division.

use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

use super::adders::{add, add_wires, AdderKind};
use super::compare::or_all;
use super::convert::resize;
use super::counters::{sum_columns, CompressKind};
use super::gates::{gate, gates_sharing, not, Gate};
use super::mul::{const_product_columns, mul_const};
use super::{Bits, ONE};
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::error::Error;

/// `(x / y, x % y)` on `n = max(len)` bits (unsigned, or two's complement
/// when `signed`).
pub fn div_rem(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    signed: bool,
) -> Result<(Bits, Bits), Error> {
    let n = x.len().max(y.len());
    let (x, y) = (resize(b, x, n, signed), resize(b, y, n, signed));
    if !signed {
        // A clear power of two divides by rewiring.
        if let Some(k) = clear_power_of_two(b, &y)? {
            let zero = b.constant(0);
            let w = x.wires();
            let q = (0..n)
                .map(|i| w.get(i + k).copied().unwrap_or(zero))
                .collect();
            let r = (0..n).map(|i| if i < k { w[i] } else { zero }).collect();
            return Ok((Bits::from_vec(q), Bits::from_vec(r)));
        }
    }
    if let Some(d) = y.clear_value(b, signed)? {
        if d.is_zero() {
            return div_rem_by_clear_zero(b, &x, signed);
        }
        return div_rem_const(b, &x, &d, signed);
    }
    if !signed {
        return div_rem_unsigned(b, &x, &y);
    }
    let sx = x.top(b);
    let sy = y.top(b);
    let ax = negate_if(b, &x, sx)?;
    let ay = negate_if(b, &y, sy)?;
    let (q, r) = div_rem_unsigned(b, &ax, &ay)?;
    let mut sel = Selectors::for_bits();
    let sq = gate(b, &mut sel, Gate::Xor, sx, sy)?;
    Ok((negate_if(b, &q, sq)?, negate_if(b, &r, sx)?))
}

/// Division by a clear zero, without a bootstrap: the quotient all ones
/// (unsigned) or, signed, -1 for a non-negative dividend and 1 for a
/// negative one (bit 0 set, every other bit the sign's negation); the
/// remainder the dividend. (The general circuit on a clear zero folds
/// into wires whose ranges a later counter could not read.)
fn div_rem_by_clear_zero(
    b: &mut CircuitBuilder,
    x: &Bits,
    signed: bool,
) -> Result<(Bits, Bits), Error> {
    let n = x.len();
    let q = if signed && n > 0 {
        let one = b.constant(ONE);
        let sx = x.top(b);
        let not_sign = not(b, sx)?;
        Bits::from_vec(
            (0..n)
                .map(|i| if i == 0 { one } else { not_sign })
                .collect(),
        )
    } else {
        Bits::constant(b, &-BigInt::one(), n)
    };
    Ok((q, x.clone()))
}

/// Division by a clear nonzero `d` (Granlund and Montgomery): with
/// `l = ceil(log2 |d|)` and `M = ceil(2^(n + l) / |d|)`, `floor(x / |d|)`
/// is bits `n + l ..` of `x * M` for every `n`-bit `x`, a product by a
/// clear constant; a signed `x` is divided by magnitude and the quotient
/// negated when the signs differ. The remainder `x - q d` is one more
/// compressed sum. Rust's truncating semantics, wrapping at `MIN / -1`.
fn div_rem_const(
    b: &mut CircuitBuilder,
    x: &Bits,
    d: &BigInt,
    signed: bool,
) -> Result<(Bits, Bits), Error> {
    let q = if signed {
        let sx = x.top(b);
        let ax = negate_if(b, x, sx)?;
        let qa = udiv_const(b, &ax, &d.abs())?;
        let differ = if d.is_negative() { not(b, sx)? } else { sx };
        negate_if(b, &qa, differ)?
    } else {
        udiv_const(b, x, d)?
    };
    let n = x.len();
    let mut cols = const_product_columns(b, &q, &-d, n, false)?;
    for (col, &w) in cols.iter_mut().zip(x.wires()) {
        col.push(w);
    }
    let r = sum_columns(b, cols, n, CompressKind::Dadda)?;
    Ok((q, r))
}

/// `floor(x / d)` for an unsigned `x` and a clear `d >= 1`.
fn udiv_const(b: &mut CircuitBuilder, x: &Bits, d: &BigInt) -> Result<Bits, Error> {
    let n = x.len();
    let zero = b.constant(0);
    let l = (d - 1u32).bits() as usize;
    let shifted = |p: &Bits, from: usize| {
        let q = (0..n).map(|i| p.bit_or(from + i, zero)).collect();
        Bits::from_vec(q)
    };
    if (d - 1u32) & d == BigInt::zero() {
        return Ok(shifted(x, l));
    }
    let m = ((BigInt::one() << (n + l)) + d - 1u32) / d;
    // x * M < 2^(2n + 1).
    let p = mul_const(b, x, &m, 2 * n + 1, false)?;
    Ok(shifted(&p, n + l))
}

/// `Some(k)` when `y` is the clear constant `2^k`.
fn clear_power_of_two(b: &CircuitBuilder, y: &Bits) -> Result<Option<usize>, Error> {
    let mut one_at = None;
    for (i, &w) in y.wires().iter().enumerate() {
        match b.constant_value(w)? {
            None => return Ok(None),
            Some(0) => {}
            Some(_) if one_at.is_none() => one_at = Some(i),
            Some(_) => return Ok(None),
        }
    }
    Ok(one_at)
}

/// `1` when every bit of `y` is 0.
pub fn is_zero(b: &mut CircuitBuilder, y: &Bits) -> Result<Wire, Error> {
    let any = or_all(b, &mut Selectors::for_bits(), y.wires())?;
    not(b, any)
}

/// `-x` when the bit `s` is set, else `x`: `(x xor s) + s`.
pub fn negate_if(b: &mut CircuitBuilder, x: &Bits, s: Wire) -> Result<Bits, Error> {
    let mut sel = Selectors::for_bits();
    let xs: Vec<(Wire, Gate)> = x.wires().iter().map(|&w| (w, Gate::Xor)).collect();
    let flipped = gates_sharing(b, &mut sel, &xs, s)?;
    let zero = b.constant(0);
    let zeros: Vec<Wire> = vec![zero; x.len()];
    Ok(add_wires(b, &flipped, &zeros, s, AdderKind::Auto)?.0)
}

fn div_rem_unsigned(b: &mut CircuitBuilder, x: &Bits, y: &Bits) -> Result<(Bits, Bits), Error> {
    let n = x.len();
    let zero = b.constant(0);
    if n == 0 {
        return Ok((Bits::default(), Bits::default()));
    }
    let mut sel = Selectors::for_bits();
    // The divisor on n + 1 bits.
    let ys: Vec<Wire> = (0..=n).map(|i| y.bit_or(i, zero)).collect();
    let flips: Vec<(Wire, Gate)> = ys.iter().map(|&w| (w, Gate::Xor)).collect();
    let mut r: Vec<Wire> = vec![zero; n + 1];
    let mut q: Vec<Wire> = vec![zero; n];
    for i in (0..n).rev() {
        // Subtract when the remainder is non-negative.
        let sub = not(b, r[n])?;
        // r = 2 r + x_i (modulo 2^(n+1)).
        let mut shifted = vec![x.wires()[i]];
        shifted.extend_from_slice(&r[..n]);
        let operand = gates_sharing(b, &mut sel, &flips, sub)?;
        let (sum, _) = add_wires(b, &shifted, &operand, sub, AdderKind::Auto)?;
        r = sum.wires().to_vec();
        q[i] = not(b, r[n])?;
    }
    // A negative remainder gets the divisor back.
    let sign = r[n];
    let back: Vec<Wire> = ys[..n]
        .iter()
        .map(|&w| gate(b, &mut sel, Gate::And, w, sign))
        .collect::<Result<_, _>>()?;
    let (rem, _) = add(
        b,
        &Bits::from_vec(r[..n].to_vec()),
        &Bits::from_vec(back),
        zero,
        AdderKind::Auto,
    )?;
    Ok((Bits::from_vec(q), rem))
}
