//! Addition: carry-free addition on radix-4 groups and column compression
//! for many operands.
//!
//! **Two operands** ([`add`]): the column sums `w_i = x_i + y_i` are read
//! in pairs of positions (a radix-4 digit sum `s` in [-6, 6]); one
//! bootstrap gives the transfer `t = sign(s)` when `|s| >= 2`, and the new
//! radix-4 digit `s - 4 t + t_in` in [-3, 3] yields its two binary digits
//! from one blind rotation: two bootstraps per two positions at depth 2,
//! where PARMESAN's Algorithm 1 (transfer `q_i = (w_(i-1) + 3 w_i >< +-4)`
//! and a refresh per position) spends two per position. Low digits whose
//! `w_i` already is a digit (e.g. `x_i + 0`) pass through; below the first
//! `w_i` that can leave [-1, 1] nothing carries, and those positions are
//! refreshed two per blind rotation (the difference of two
//! two's-complement integers: `n / 2` bootstraps, depth 1). The top digit is
//! the last transfer, fresh. Length rule: `max(len x, len y) + 1`, minus
//! leading clear zeros.
//!
//! **Many operands** ([`sum`], [`compress`]): every digit goes into the
//! column of its weight; each level replaces groups of 7 digits of a column
//! by the 3 digits of their sum (3 bootstraps, weights 1, 2, 4) and groups of
//! 3 by the 2 digits of theirs (one blind rotation yielding both outputs:
//! many-LUT), until every column holds at most 2 digits; a final [`add`]
//! of the two rows finishes. Depth grows with the log of the operand
//! count, with no chain of additions.

use num_bigint::BigInt;

use super::{is_digit, Digits};
use crate::circuit::Selectors;
use crate::circuit::{CircuitBuilder, Wire};
use crate::crypto::lut::Lut;
use crate::error::Error;

/// Returns `w` if it is already a digit, else a bootstrap mapping its
/// range onto [-1, 1] (identity on [-1, 1]; the callers guarantee the value
/// lies there).
pub(crate) fn refresh(b: &mut CircuitBuilder, w: Wire) -> Result<Wire, Error> {
    if is_digit(b, w)? {
        return Ok(w);
    }
    let r = b.range(w)?;
    let lut = Lut::from_fn(b.params().pi, r.lo, r.hi, |v| v.clamp(-1, 1))?;
    Ok(b.bootstrap(w, &lut)?)
}

/// `x + y`: carry-free addition on radix-4 groups of digit positions
/// (with pass-through of low digits).
pub fn add(b: &mut CircuitBuilder, x: &Digits, y: &Digits) -> Result<Digits, Error> {
    let n = x.len().max(y.len());
    let (xe, ye) = (x.extended(b, n)?, y.extended(b, n)?);
    let w = xe
        .iter()
        .zip(&ye)
        .map(|(&xi, &yi)| b.add(xi, yi))
        .collect::<Result<Vec<_>, _>>()?;
    // Below the first column sum that can leave [-1, 1] nothing carries:
    // those sums are digits already (or need only a refresh).
    let mut k = 0;
    while k < n
        && b.range(w[k])?
            .is_within(-1, 1, b.params().message_modulus())
    {
        k += 1;
    }
    let mut out = settle(b, &w[..k])?;
    if k < n {
        out.extend(add_columns(b, &w[k..])?);
    }
    Digits::from_vec(out).trimmed(b)
}

/// Digits for wires whose values already are digits (each in [-1, 1]):
/// fresh ones pass through; the others are refreshed two positions per
/// blind rotation (the radix-4 digit `w_i + 2 w_(i+1)` in [-3, 3], two
/// tables), with no transfer. This makes the difference of two
/// two's-complement integers cost one bootstrap per two bits.
fn settle(b: &mut CircuitBuilder, w: &[Wire]) -> Result<Vec<Wire>, Error> {
    let pi = b.params().pi;
    let binary: Vec<Lut> = (0..2)
        .map(|j| Lut::from_fn(pi, -3, 3, move |v| digit_of(v, j)))
        .collect::<Result<_, _>>()?;
    let binary: Vec<&Lut> = binary.iter().collect();
    let mut sel = Selectors::new();
    let mut out = Vec::with_capacity(w.len());
    let mut i = 0;
    while i < w.len() {
        if is_digit(b, w[i])? {
            out.push(w[i]);
            i += 1;
        } else if i + 1 < w.len() {
            let v = sel.linear(b, &[(w[i], 1), (w[i + 1], 2)], 0)?;
            out.extend(b.bootstrap_many(v, &binary)?);
            i += 2;
        } else {
            out.push(refresh(b, w[i])?);
            i += 1;
        }
    }
    Ok(out)
}

/// The digits of `sum_i w_i 2^i` for column sums `w_i` in [-2, 2]
/// (`len + 1` digits). Positions are grouped in pairs from the top (a
/// single lowest position when the count is odd): a group's sum `s` in
/// [-6, 6] (or [-2, 2]) sends the transfer `t = sign(s)` if `|s| >= 2`
/// to the next group (one bootstrap), keeps `s - R t` in [-2, 2] (or
/// [-1, 1] for a single position), and adds the transfer it receives: a
/// radix-4 digit in [-3, 3] whose two binary digits come from one blind
/// rotation (two tables). Two bootstraps per two positions, depth 2,
/// instead of two per position (PARMESAN's Algorithm 1).
fn add_columns(b: &mut CircuitBuilder, w: &[Wire]) -> Result<Vec<Wire>, Error> {
    let pi = b.params().pi;
    let n = w.len();
    let mut groups: Vec<std::ops::Range<usize>> = Vec::with_capacity(n.div_ceil(2));
    let mut start = 0;
    if n % 2 == 1 {
        groups.push(0..1);
        start = 1;
    }
    while start < n {
        groups.push(start..start + 2);
        start += 2;
    }
    let transfer = |k: usize| -> Result<Lut, Error> {
        let hi = 2 * ((1i64 << k) - 1);
        Ok(Lut::from_fn(pi, -hi, hi, |s| {
            if s.abs() >= 2 {
                s.signum()
            } else {
                0
            }
        })?)
    };
    let (transfer1, transfer2) = (transfer(1)?, transfer(2)?);
    let mut sel = Selectors::new();
    // Room for `- R t + t_in` in the digit read next.
    let room = b.budget().saturating_sub(17);
    let mut sums = Vec::with_capacity(groups.len());
    let mut t = Vec::with_capacity(groups.len());
    for g in &groups {
        let terms: Vec<(Wire, i64)> = g.clone().map(|i| (w[i], 1 << (i - g.start))).collect();
        let s = sel.linear_within(b, &terms, 0, room)?;
        let lut = if g.len() == 1 { &transfer1 } else { &transfer2 };
        t.push(b.bootstrap(s, lut)?);
        sums.push(s);
    }
    let binary: Vec<Lut> = (0..2)
        .map(|j| Lut::from_fn(pi, -3, 3, move |v| digit_of(v, j)))
        .collect::<Result<_, _>>()?;
    let binary: Vec<&Lut> = binary.iter().collect();
    let zero = b.constant(0);
    let mut out = Vec::with_capacity(n + 1);
    for (j, g) in groups.iter().enumerate() {
        let t_in = if j > 0 { t[j - 1] } else { zero };
        let radix = 1i64 << g.len();
        let z = b.linear(&[(sums[j], 1), (t[j], -radix), (t_in, 1)], 0)?;
        let z = sel.linear(b, &[(z, 1)], 0)?;
        if g.len() == 1 {
            // Only the lowest group is single: no transfer in, z in [-1, 1].
            let z = b.assume_range(z, -1, 1, 1)?;
            out.push(refresh(b, z)?);
        } else {
            let z = b.assume_range(z, -3, 3, 1)?;
            out.extend(b.bootstrap_many(z, &binary)?);
        }
    }
    out.push(t.last().copied().unwrap_or(zero));
    Ok(out)
}

/// `x - y`.
pub fn sub(b: &mut CircuitBuilder, x: &Digits, y: &Digits) -> Result<Digits, Error> {
    let ny = y.neg(b)?;
    add(b, x, &ny)
}

/// `x + c` for a clear integer `c` (its digits are trivial: positions where
/// `c` has a zero digit cost nothing extra).
pub fn add_const(b: &mut CircuitBuilder, x: &Digits, c: &BigInt) -> Result<Digits, Error> {
    let cd = Digits::constant(b, c);
    add(b, x, &cd)
}

/// The sum of all `terms`, by column compression.
pub fn sum(b: &mut CircuitBuilder, terms: &[Digits]) -> Result<Digits, Error> {
    let shifted: Vec<(Digits, usize)> = terms.iter().map(|t| (t.clone(), 0)).collect();
    sum_shifted(b, &shifted)
}

/// `sum_t term_t * 2^shift_t`, by column compression.
pub fn sum_shifted(b: &mut CircuitBuilder, terms: &[(Digits, usize)]) -> Result<Digits, Error> {
    let width = terms.iter().map(|(t, s)| t.len() + s).max().unwrap_or(0);
    let mut columns: Vec<Vec<Wire>> = vec![Vec::new(); width];
    for (t, s) in terms {
        for (j, &w) in t.wires().iter().enumerate() {
            columns[j + s].push(w);
        }
    }
    compress(b, columns)
}

/// Sign-symmetric binary digit `k` of `v`: `sign(v) * bit_k(|v|)`.
fn digit_of(v: i64, k: u32) -> i64 {
    v.signum() * ((v.abs() >> k) & 1)
}

/// Sums the digits of each column (column `j` has weight `2^j`); every input
/// wire must be a digit (fresh or constant).
pub fn compress(b: &mut CircuitBuilder, mut columns: Vec<Vec<Wire>>) -> Result<Digits, Error> {
    let pi = b.params().pi;
    let mut sel = Selectors::new();
    loop {
        gather_constants(b, &mut columns)?;
        let height = columns.iter().map(Vec::len).max().unwrap_or(0);
        if height <= 2 {
            let [r0, r1] = two_rows(b, &columns);
            return add(b, &Digits::from_vec(r0), &Digits::from_vec(r1));
        }
        let mut next: Vec<Vec<Wire>> = vec![Vec::new(); columns.len() + 3];
        for (j, col) in columns.iter().enumerate() {
            let mut rest: &[Wire] = col;
            // At height 3, count every column of 2 or 3 digits at once:
            // each keeps one digit and passes one on, so all end at <= 2
            // (counting only the 3s would ripple a carry across the width).
            while rest.len() >= 7
                || (rest.len() >= 3 && col.len() > 2)
                || (height == 3 && rest.len() >= 2)
            {
                let take = if rest.len() >= 7 {
                    7
                } else {
                    rest.len().min(3)
                };
                let (group, tail) = rest.split_at(take);
                rest = tail;
                let terms: Vec<(Wire, i64)> = group.iter().map(|&w| (w, 1)).collect();
                let s = sel.linear(b, &terms, 0)?;
                let c = take as i64;
                let outs = 64 - (c as u64).leading_zeros();
                let luts: Vec<Lut> = (0..outs)
                    .map(|k| Lut::from_fn(pi, -c, c, move |v| digit_of(v, k)))
                    .collect::<Result<_, _>>()?;
                let refs: Vec<&Lut> = luts.iter().collect();
                let digits = if outs as i64 * (2 * c + 1) <= 1 << (pi - 1) {
                    b.bootstrap_many(s, &refs)?
                } else {
                    refs.iter()
                        .map(|l| b.bootstrap(s, l))
                        .collect::<Result<_, _>>()?
                };
                for (k, d) in digits.into_iter().enumerate() {
                    next[j + k].push(d);
                }
            }
            next[j].extend_from_slice(rest);
        }
        while next.last().is_some_and(Vec::is_empty) {
            next.pop();
        }
        columns = next;
    }
}

/// Columns of at most two wires as two rows (clear zeros where one is
/// short).
pub(crate) fn two_rows(b: &mut CircuitBuilder, columns: &[Vec<Wire>]) -> [Vec<Wire>; 2] {
    let mut rows = [Vec::new(), Vec::new()];
    for col in columns {
        for (r, row) in rows.iter_mut().enumerate() {
            row.push(col.get(r).copied().unwrap_or_else(|| b.constant(0)));
        }
    }
    rows
}

/// Replaces the clear digits of all columns by the digits of their total,
/// at most one per column, so constants never count towards height.
pub(crate) fn gather_constants(
    b: &mut CircuitBuilder,
    columns: &mut Vec<Vec<Wire>>,
) -> Result<(), Error> {
    let mut total = BigInt::from(0);
    for (j, col) in columns.iter_mut().enumerate() {
        let mut kept = Vec::with_capacity(col.len());
        for &w in col.iter() {
            match b.constant_value(w)? {
                Some(v) => total += BigInt::from(v) << j,
                None => kept.push(w),
            }
        }
        *col = kept;
    }
    let c = Digits::constant(b, &total);
    for (j, &w) in c.wires().iter().enumerate() {
        if b.constant_value(w)? != Some(0) {
            if j >= columns.len() {
                columns.resize(j + 1, Vec::new());
            }
            columns[j].push(w);
        }
    }
    Ok(())
}
