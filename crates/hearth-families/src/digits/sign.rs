//! Signum-based operations (PARMESAN section 4): signum, comparisons,
//! maximum, minimum, ReLU, absolute value, rounding. The signum itself is
//! the reduction of `sign_tree.rs`.

pub use super::sign_tree::group_size;
use super::sign_tree::reduce;
use super::wide::{self, Wide};
use super::{add, Digits};
use crate::circuit::Selectors;
use crate::circuit::{CircuitBuilder, Wire};
pub use crate::comparison::Comparison;
use crate::crypto::lut::Lut;
use crate::error::Error;

/// The sign of `x` as a digit in {-1, 0, 1}.
pub fn signum(b: &mut CircuitBuilder, x: &Digits) -> Result<Wire, Error> {
    let g = group_size(b);
    reduce(b, x.wires(), g, |s| s)
}

/// `[x >= 0]` as a digit in {0, 1}.
pub fn non_negative(b: &mut CircuitBuilder, x: &Digits) -> Result<Wire, Error> {
    reduce(b, x.wires(), 3, |s| (s >= 0) as i64)
}

/// `x <op> y` as a digit in {0, 1}: where every position's difference
/// `x_i - y_i` stays in [-1, 1] (two's complement operands, sign-extended),
/// those differences grouped three at a time; otherwise a subtraction on
/// radix-8 groups (one bootstrap per three positions, [`super::wide`]).
/// Then the sign
/// of the difference from its digits' sign trits (order) or a zero test
/// of each digit, 15 counted per bootstrap (equality), the last table
/// answering the comparison. The subtraction's digits are never
/// converted back to binary.
pub fn compare(
    b: &mut CircuitBuilder,
    x: &Digits,
    y: &Digits,
    op: Comparison,
) -> Result<Wire, Error> {
    // Two's-complement operands (or any whose digits have matching fixed
    // signs) differ by at most one per position: the difference's groups
    // of three positions already have the sign of the value at their most
    // significant nonzero one, and no subtraction is needed.
    let n = x.len().max(y.len());
    let (xe, ye) = (x.extended(b, n)?, y.extended(b, n)?);
    let m = b.params().message_modulus();
    let mut d = Vec::with_capacity(n);
    for (&xi, &yi) in xe.iter().zip(&ye) {
        let di = b.sub(xi, yi)?;
        if !b.range(di)?.is_within(-1, 1, m) {
            break;
        }
        d.push(di);
    }
    if d.len() == n {
        // Groups as wide as the budget holds (digits that are sums of
        // unrefreshed ones weigh more than 2).
        for k in [3, 2] {
            let mut fits = true;
            for group in d.chunks(k) {
                let terms: Vec<(Wire, i64)> = group
                    .iter()
                    .enumerate()
                    .map(|(j, &w)| (w, 1 << j))
                    .collect();
                fits &= b.weight_of(&terms)? <= b.budget();
            }
            if fits {
                let wd = Wide::from_digits(b, &Digits::from_vec(d), k as u32)?;
                return wide::decide(b, &wd, op);
            }
        }
    }
    let k = subtraction_radix(b);
    let wx = Wide::from_digits(b, x, k)?;
    let wy = Wide::from_digits(b, y, k)?;
    wide::compare(b, &wx, &wy, op)
}

/// Bits per group of the comparison's subtraction: radix 8 where the
/// budget holds a new digit of it (two groups of weight 21, the transfer's
/// 64 and 1: 107), else radix 4 (27).
fn subtraction_radix(b: &CircuitBuilder) -> u32 {
    let weight = |k: u32| 2 * ((1u64 << (2 * k)) - 1) / 3 + (1 << (2 * k)) + 1;
    if b.budget() >= weight(3) {
        3
    } else {
        2
    }
}

/// Per digit, `if s then a_i else c_i`, where `s` is a {0, 1} digit: one
/// bootstrap per digit on the selector `s + 2 a_i + 6 c_i` (weight 41).
fn select(b: &mut CircuitBuilder, s: Wire, a: &Digits, c: &Digits) -> Result<Digits, Error> {
    let n = a.len().max(c.len());
    let pi = b.params().pi;
    let lut = Lut::from_fn(pi, -8, 9, |t| {
        let bit = t.rem_euclid(2);
        let u = (t - bit) / 2;
        let ci = (u + 1).div_euclid(3);
        let ai = u - 3 * ci;
        if bit == 1 {
            ai
        } else {
            ci
        }
    })?;
    let mut sel = Selectors::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (ai, ci) = (a.digit_or_zero(b, i), c.digit_or_zero(b, i));
        let t = sel.linear(b, &[(s, 1), (ai, 2), (ci, 6)], 0)?;
        out.push(b.bootstrap(t, &lut)?);
    }
    Digits::from_vec(out).trimmed(b)
}

/// `max(x, y)` (PARMESAN Algorithm 7).
pub fn max(b: &mut CircuitBuilder, x: &Digits, y: &Digits) -> Result<Digits, Error> {
    let s = match against_zero(b, x, y)? {
        Some((v, s)) => return select(b, s, v, &Digits::default()),
        None => compare(b, x, y, Comparison::Ge)?,
    };
    select(b, s, x, y)
}

/// `min(x, y)`.
pub fn min(b: &mut CircuitBuilder, x: &Digits, y: &Digits) -> Result<Digits, Error> {
    let s = match against_zero(b, x, y)? {
        Some((v, s)) => return select(b, s, &Digits::default(), v),
        None => compare(b, x, y, Comparison::Ge)?,
    };
    select(b, s, y, x)
}

/// Where one side is a clear zero: the other and its `[v >= 0]`, the
/// sign reduction of [`relu`] (no difference to take).
fn against_zero<'a>(
    b: &mut CircuitBuilder,
    x: &'a Digits,
    y: &'a Digits,
) -> Result<Option<(&'a Digits, Wire)>, Error> {
    let zero = |b: &CircuitBuilder, d: &Digits| -> Result<bool, Error> {
        for &w in d.wires() {
            if b.constant_value(w)? != Some(0) {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let v = match (zero(b, x)?, zero(b, y)?) {
        (false, true) => x,
        (true, false) => y,
        _ => return Ok(None),
    };
    Ok(Some((v, non_negative(b, v)?)))
}

/// `max(x, 0)`: no subtraction needed.
pub fn relu(b: &mut CircuitBuilder, x: &Digits) -> Result<Digits, Error> {
    let s = non_negative(b, x)?;
    let zero = Digits::default();
    select(b, s, x, &zero)
}

/// `|x|`.
pub fn abs(b: &mut CircuitBuilder, x: &Digits) -> Result<Digits, Error> {
    let s = non_negative(b, x)?;
    let nx = x.neg(b)?;
    select(b, s, x, &nx)
}

/// `x` rounded to a multiple of `2^i`, halves rounded up:
/// `floor((x + 2^(i-1)) / 2^i) * 2^i` (PARMESAN Algorithm 8). The digits
/// below `i` decide a rounding digit `t` from `2 x_(i-1) + sign(low part)`;
/// then `t` is added to the digits from `i` up. Length rule: at most
/// `len(x) + 1` digits (`i` of them clear zeros).
pub fn round(b: &mut CircuitBuilder, x: &Digits, i: usize) -> Result<Digits, Error> {
    if i == 0 {
        return Ok(x.clone());
    }
    if i > x.len() {
        // |x| < 2^len <= 2^(i-1): rounds to 0.
        return Ok(Digits::default());
    }
    let (low, high) = x.split(i - 1);
    let s = if low.is_empty() {
        b.constant(0)
    } else {
        let g = group_size(b);
        reduce(b, low.wires(), g, |s| s)?
    };
    let top = high.digit_or_zero(b, 0);
    let (_, high) = high.split(1);
    let sel = Selectors::new().linear(b, &[(top, 2), (s, 1)], 0)?;
    let lut = Lut::from_fn(b.params().pi, -3, 3, |v| match v {
        2 | 3 => 1,
        -3 => -1,
        _ => 0,
    })?;
    let t = b.bootstrap(sel, &lut)?;
    let t = Digits::from_vec(vec![t]);
    let u = add(b, &high, &t)?;
    Ok(u.shl(b, i))
}
