//! Addition: PARMESAN's constant-depth parallel addition (Algorithm 1) and
//! column compression for many operands.
//!
//! **Two operands** ([`add`]): with `w_i = x_i + y_i`, the transfer
//! `q_i = (w_{i-1} + 3 w_i >< +-4)` (one bootstrap, quadratic weight 20) and
//! the refreshed sum digit `z_i = w_i - 2 q_i + q_{i-1}` (one bootstrap):
//! depth 2, two bootstraps per active digit. Low digits whose `w_i` already
//! is a digit (e.g. `x_i + 0`) pass through; the top digit is `q_{n-1}`,
//! fresh without a refresh. Length rule: `max(len x, len y) + 1`, minus
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

/// `f(s) = sign(s) if |s| >= 4 else 0` on [-8, 8]: the transfer digit.
fn transfer_lut(pi: u32) -> Result<Lut, Error> {
    Ok(Lut::from_fn(pi, -8, 8, |s| {
        if s.abs() >= 4 {
            s.signum()
        } else {
            0
        }
    })?)
}

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

/// `x + y` (PARMESAN Algorithm 1, with pass-through of low digits).
pub fn add(b: &mut CircuitBuilder, x: &Digits, y: &Digits) -> Result<Digits, Error> {
    let n = x.len().max(y.len());
    let mut w = Vec::with_capacity(n);
    for i in 0..n {
        let (xi, yi) = (x.digit_or_zero(b, i), y.digit_or_zero(b, i));
        w.push(b.add(xi, yi)?);
    }
    // Low digits whose column sum is already a digit need no carry logic.
    let mut k = 0;
    while k < n && is_digit(b, w[k])? {
        k += 1;
    }
    let mut out: Vec<Wire> = w[..k].to_vec();
    if k < n {
        let lut = transfer_lut(b.params().pi)?;
        let zero = b.constant(0);
        let mut sel = Selectors::new();
        let mut q = Vec::with_capacity(n - k);
        for i in k..n {
            let prev = if i > k { w[i - 1] } else { zero };
            let s = sel.linear(b, &[(prev, 1), (w[i], 3)], 0)?;
            q.push(b.bootstrap(s, &lut)?);
        }
        for i in k..n {
            let q_prev = if i > k { q[i - k - 1] } else { zero };
            let z = sel.linear(b, &[(w[i], 1), (q[i - k], -2), (q_prev, 1)], 0)?;
            out.push(refresh(b, z)?);
        }
        out.push(q[n - k - 1]);
    }
    Digits::from_vec(out).trimmed(b)
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
            let mut rows = [Vec::new(), Vec::new()];
            for col in &columns {
                for (r, row) in rows.iter_mut().enumerate() {
                    row.push(col.get(r).copied().unwrap_or_else(|| b.constant(0)));
                }
            }
            let [r0, r1] = rows;
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

/// Replaces the clear digits of all columns by the digits of their total,
/// at most one per column, so constants never count towards height.
fn gather_constants(b: &mut CircuitBuilder, columns: &mut Vec<Vec<Wire>>) -> Result<(), Error> {
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
