//! The sign of digits (PARMESAN section 4), shared by the comparisons of
//! `sign.rs`, `radix.rs` and the bits' packed comparisons.
//!
//! **Signum** is a parallel reduction: groups of `g` digits are combined
//! as `sum_i 2^i a_i` (the most significant non-zero digit decides the sign)
//! and bootstrapped to their sign, until one value remains. The first level
//! reads the digits themselves, with no bootstrap before it. The group size
//! is the largest `g <= pi - 1` whose weight `sum_i 4^i = (4^g - 1) / 3`
//! fits the budget (`g = 4`, weight 85, on `DIGITS_128`): depth
//! `ceil(log_g n)`. A final table can return something other than the sign
//! (e.g. `x >= 0`); such tables are only negacyclic on `[-7, 7]`, so the
//! last group then has at most 3 values.

use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::crypto::lut::Lut;
use crate::error::Error;

/// Largest signum group size for the builder's parameter set.
pub fn group_size(b: &CircuitBuilder) -> usize {
    let p = b.params();
    let mut g = 1;
    while g < (p.pi - 1) as usize && ((1u64 << (2 * (g + 1))) - 1) / 3 <= p.budgets.half {
        g += 1;
    }
    g
}

/// `sum_i 2^i v_i` over a group of digits, and its range bound `2^len - 1`.
fn weighted(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    group: &[Wire],
) -> Result<(Wire, i64), Error> {
    let terms: Vec<(Wire, i64)> = group
        .iter()
        .enumerate()
        .map(|(i, &w)| (w, 1 << i))
        .collect();
    Ok((sel.linear(b, &terms, 0)?, (1i64 << group.len()) - 1))
}

/// Reduces digits (least significant first) to `last(sign(value))`, where
/// `last` is applied by the final table over groups of at most
/// `last_group` values. A group of one digit is its own sign.
pub(crate) fn reduce(
    b: &mut CircuitBuilder,
    digits: &[Wire],
    last_group: usize,
    last: impl Fn(i64) -> i64,
) -> Result<Wire, Error> {
    let pi = b.params().pi;
    let g = group_size(b);
    let mut sel = Selectors::new();
    let mut vals = digits.to_vec();
    loop {
        if vals.len() <= last_group {
            let (s, bound) = weighted(b, &mut sel, &vals)?;
            let lut = Lut::from_fn(pi, -bound, bound, |v| last(v.signum()))?;
            return Ok(b.bootstrap(s, &lut)?);
        }
        let mut next = Vec::with_capacity(vals.len().div_ceil(g));
        for group in vals.chunks(g) {
            if let [one] = group {
                next.push(*one);
                continue;
            }
            let (s, bound) = weighted(b, &mut sel, group)?;
            let lut = Lut::from_fn(pi, -bound, bound, i64::signum)?;
            next.push(b.bootstrap(s, &lut)?);
        }
        vals = next;
    }
}
