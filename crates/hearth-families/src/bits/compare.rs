//! Comparisons, minimum, maximum and selection.
//!
//! `x >= y` (unsigned) is the carry out of `x + not y + 1`: only the carry
//! chain, no sum bits. The chain is split into blocks: the first block
//! ripples with the real carry in; every other block ripples twice, with
//! carry in 0 and 1, side by side; then the blocks' carries are joined by
//! one majority each (`c = maj(G, T, c_in)`, as `G` implies `T`). One
//! block is the plain ripple (`n` bootstraps, depth `n`); with `k` blocks,
//! about `2n` bootstraps at depth `n / k + k`. The split with the least
//! estimated time, `max(#PBS / threads, depth)`, is used: on two threads
//! two blocks (about `1.5 n` bootstraps, depth `n / 2 + 1`).
//! Signed comparisons flip the sign bits first (free).
//!
//! Where selectors have room for several bits (`pi >= 5`), comparisons
//! read three bits per bootstrap instead ([`super::packed_compare`]); the form
//! with the least estimated time is used.
//!
//! Equality ORs the XORs of the bits in as wide groups as the parameters
//! allow (two on `pi = 3`): `2n - 1` bootstraps, depth `1 + log2 n`; an XOR
//! with a clear bit is free, so comparing with a constant costs the OR
//! tree only.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::gates::{gate, gates_sharing, maj, mux, not, threshold, Gate};
use super::{clear_bit, clear_bits, packed_compare, value_of, Bits, ONE};
use crate::circuit::{cheapest, CircuitBuilder, Memo, Selectors, Wire};
use crate::comparison::Comparison;
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// Operands padded to a common width (zero or sign extension).
fn padded(b: &mut CircuitBuilder, x: &Bits, y: &Bits, signed: bool) -> (Vec<Wire>, Vec<Wire>) {
    let n = x.len().max(y.len());
    let zero = b.constant(0);
    let fx = if signed { x.top(b) } else { zero };
    let fy = if signed { y.top(b) } else { zero };
    (
        (0..n).map(|i| x.bit_or(i, fx)).collect(),
        (0..n).map(|i| y.bit_or(i, fy)).collect(),
    )
}

/// `x <op> y` as one bit (unsigned, or two's complement when `signed`), by
/// the form with the least estimated time for the width, the parameters
/// and the thread count.
pub fn compare(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    op: Comparison,
    signed: bool,
) -> Result<Wire, Error> {
    let (xs, ys) = padded(b, x, y, signed);
    if let Some(w) = against_clear(b, &xs, &ys, op, signed)? {
        return Ok(w);
    }
    let form = form_for(b, xs.len(), op);
    let guard = match op {
        Comparison::Eq => match (clear_bits(b, &xs)?, clear_bits(b, &ys)?) {
            (None, Some(v)) => Some((xs.clone(), v)),
            (Some(v), None) => Some((ys.clone(), v)),
            _ => None,
        },
        _ => None,
    };
    let eq = lower(b, xs, ys, op, signed, form)?;
    // Set only when the encrypted side holds the clear value.
    if let Some((word, value)) = guard {
        b.guard_equal(eq, &word, value)?;
    }
    Ok(eq)
}

/// An ordering with one side clear, as `x >= k` or its negation for a
/// clear `k`: the low bits where `k` has zeros cannot change it, so they
/// are dropped; `x >= 2^j` is the OR of the bits from `j` up (`x > 0` on
/// unsigned words, the sign bit for `x < 0` on signed ones, no bootstrap);
/// `k = 0` and `k` past the width are clear. `None` where both sides are
/// encrypted (or both clear: the general forms fold them).
fn against_clear(
    b: &mut CircuitBuilder,
    xs: &[Wire],
    ys: &[Wire],
    op: Comparison,
    signed: bool,
) -> Result<Option<Wire>, Error> {
    // `c <op> x` is `x <op'> c`.
    let (word, value, op) = match (clear_bits(b, xs)?, clear_bits(b, ys)?) {
        (None, Some(v)) => (xs, v, op),
        (Some(v), None) => {
            let flipped = match op {
                Comparison::Lt => Comparison::Gt,
                Comparison::Le => Comparison::Ge,
                Comparison::Gt => Comparison::Lt,
                Comparison::Ge => Comparison::Le,
                other => other,
            };
            (ys, v, flipped)
        }
        _ => return Ok(None),
    };
    let (negate, plus_one) = match op {
        Comparison::Ge => (false, false),
        Comparison::Lt => (true, false),
        Comparison::Gt => (false, true),
        Comparison::Le => (true, true),
        Comparison::Eq | Comparison::Ne => return Ok(None),
    };
    let n = word.len();
    // Two's complement orders as unsigned with the sign bits flipped.
    let mut word = word.to_vec();
    let mut value = value;
    if signed && n > 0 {
        word[n - 1] = not(b, word[n - 1])?;
        value[n - 1] = !value[n - 1];
    }
    // Unsigned (its sign bit flipped above), so never negative.
    let mut k = value_of(&value, false).magnitude().clone();
    if plus_one {
        k += 1u32;
    }
    let ge = ge_clear(b, &word, &k)?;
    Ok(Some(if negate { not(b, ge)? } else { ge }))
}

/// `x >= k` (unsigned) for a clear `k`.
fn ge_clear(b: &mut CircuitBuilder, xs: &[Wire], k: &BigUint) -> Result<Wire, Error> {
    let n = xs.len();
    if k.is_zero() {
        return Ok(b.constant(ONE));
    }
    if k.bits() > n as u64 {
        return Ok(b.constant(0));
    }
    let low = k.trailing_zeros().unwrap_or(0) as usize;
    let (xs, k) = (&xs[low..], k >> low);
    let mut sel = Selectors::for_bits();
    if k.is_one() {
        return or_all(b, &mut sel, xs);
    }
    // `k = 2^t + 1`: a bit above `t`, or bit `t` and any bit below it
    // (`x > 0` on signed words): two OR trees side by side and one
    // bootstrap joining them, where the general form compares every bit.
    if k.count_ones() == 2 {
        let t = (k.bits() - 1) as usize;
        let below = or_all(b, &mut sel, &xs[..t])?;
        let above = or_all(b, &mut sel, &xs[t + 1..])?;
        let join = |v: &[bool]| v[0] || (v[1] && v[2]);
        if let Some(w) = threshold(b, &mut sel, &[above, xs[t], below], &join)? {
            return Ok(w);
        }
        let at = gate(b, &mut sel, Gate::And, xs[t], below)?;
        return gate(b, &mut sel, Gate::Or, above, at);
    }
    let ks: Vec<Wire> = (0..xs.len())
        .map(|i| b.constant(if k.bit(i as u64) { ONE } else { 0 }))
        .collect();
    let form = form_for(b, xs.len(), Comparison::Ge);
    lower(b, xs.to_vec(), ks, Comparison::Ge, false, form)
}

/// How a comparison is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// Gates: the carry chain, or XORs and an OR tree.
    Gates,
    /// Signs of several bits per bootstrap, for orderings
    /// ([`packed_compare::order`]).
    Signs,
    /// Zero tests of several bits per bootstrap, counted, for equality
    /// ([`packed_compare::equal_by_counts`]).
    Counts,
}

thread_local! {
    /// The form per parameter set, width, thread count and kind (equality
    /// or ordering).
    static CHOICES: Memo<(ParamsId, usize, usize, bool), Form> = Memo::new();
}

/// The form with the least estimated time for `n`-bit encrypted operands
/// (the packed forms exist on `pi >= 5` only).
fn form_for(b: &CircuitBuilder, n: usize, op: Comparison) -> Form {
    let equality = matches!(op, Comparison::Eq | Comparison::Ne);
    let (params, threads) = (b.params(), b.threads());
    let key = (params.id, n, threads, equality);
    let candidates: &[Form] = if equality {
        &[Form::Gates, Form::Counts]
    } else {
        &[Form::Gates, Form::Signs]
    };
    let probe = if equality {
        Comparison::Eq
    } else {
        Comparison::Lt
    };
    CHOICES.with(|memo| {
        memo.get_or(key, || {
            cheapest(params, threads, candidates, |s, form| {
                let xs = Bits::input(s, n)?.wires().to_vec();
                let ys = Bits::input(s, n)?.wires().to_vec();
                lower(s, xs, ys, probe, false, form)?;
                Ok(())
            })
            .unwrap_or(Form::Gates)
        })
    })
}

/// `x <op> y` on padded operands, in the given form.
fn lower(
    b: &mut CircuitBuilder,
    mut xs: Vec<Wire>,
    mut ys: Vec<Wire>,
    op: Comparison,
    signed: bool,
    form: Form,
) -> Result<Wire, Error> {
    let mut sel = Selectors::for_bits();
    if matches!(op, Comparison::Eq | Comparison::Ne) {
        let eq = op == Comparison::Eq;
        return match form {
            Form::Counts | Form::Signs => packed_compare::equal_by_counts(b, &xs, &ys, eq),
            Form::Gates => {
                let ne = not_equal(b, &mut sel, &xs, &ys)?;
                if eq {
                    not(b, ne)
                } else {
                    Ok(ne)
                }
            }
        };
    }
    if signed {
        if let (Some(tx), Some(ty)) = (xs.last_mut(), ys.last_mut()) {
            *tx = not(b, *tx)?;
            *ty = not(b, *ty)?;
        }
    }
    if form != Form::Gates {
        return packed_compare::order(b, &xs, &ys, op);
    }
    // ge(x, y) = carry of x + not y + 1; gt(x, y) = carry of x + not y.
    let (hi, lo, strict) = match op {
        Comparison::Ge => (&xs, &ys, false),
        Comparison::Lt => (&xs, &ys, false),
        Comparison::Gt => (&xs, &ys, true),
        _ => (&ys, &xs, false), // Le: y >= x
    };
    let nots: Vec<Wire> = lo.iter().map(|&w| not(b, w)).collect::<Result<_, _>>()?;
    let cin = b.constant(if strict { 0 } else { ONE });
    let c = carry_out(b, &mut sel, hi, &nots, cin)?;
    if op == Comparison::Lt {
        not(b, c)
    } else {
        Ok(c)
    }
}

/// `1` when some bit differs.
pub fn not_equal(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    xs: &[Wire],
    ys: &[Wire],
) -> Result<Wire, Error> {
    let diffs: Vec<Wire> = xs
        .iter()
        .zip(ys)
        .map(|(&x, &y)| gate(b, sel, Gate::Xor, x, y))
        .collect::<Result<_, _>>()?;
    or_all(b, sel, &diffs)
}

/// The OR of all `bits` (0 for none), as a tree of the widest OR gates
/// the parameters allow.
pub fn or_all(b: &mut CircuitBuilder, sel: &mut Selectors, bits: &[Wire]) -> Result<Wire, Error> {
    let mut level: Vec<Wire> = Vec::with_capacity(bits.len());
    // Clear bits: a set one decides, cleared ones drop out.
    for &w in bits {
        match b.constant_value(w)? {
            Some(0) => {}
            Some(_) => return Ok(b.constant(ONE)),
            None => level.push(w),
        }
    }
    let fan = super::gates::widest_or(b, sel)?;
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(fan));
        for group in level.chunks(fan) {
            next.push(super::gates::or_n(b, sel, group)?);
        }
        level = next;
    }
    Ok(level.pop().unwrap_or_else(|| b.constant(0)))
}

/// The carry out of `xs + ys + cin`, by the block split with the least
/// estimated time.
pub(crate) fn carry_out(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    xs: &[Wire],
    ys: &[Wire],
    cin: Wire,
) -> Result<Wire, Error> {
    let n = xs.len();
    let blocks = best_split(n, b.threads());
    let size = n.div_ceil(blocks.max(1)).max(1);
    let mut carry = cin;
    for (k, start) in (0..n).step_by(size).enumerate() {
        let end = (start + size).min(n);
        if k == 0 {
            carry = ripple(b, sel, &xs[start..end], &ys[start..end], carry)?;
        } else {
            let zero = b.constant(0);
            let one = b.constant(ONE);
            let g = ripple(b, sel, &xs[start..end], &ys[start..end], zero)?;
            let t = ripple(b, sel, &xs[start..end], &ys[start..end], one)?;
            carry = match b.constant_value(carry)? {
                Some(0) => g,
                Some(_) => t,
                None => maj(b, sel, g, t, carry)?,
            };
        }
    }
    Ok(carry)
}

/// The carry out of a ripple over `xs + ys + c`.
fn ripple(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    xs: &[Wire],
    ys: &[Wire],
    mut c: Wire,
) -> Result<Wire, Error> {
    for (&x, &y) in xs.iter().zip(ys) {
        c = maj(b, sel, x, y, c)?;
    }
    Ok(c)
}

/// The number of blocks with the least `max(#PBS / threads, depth)` for an
/// `n`-bit carry chain (ties: fewer bootstraps).
fn best_split(n: usize, threads: usize) -> usize {
    (1..=n.clamp(1, 16))
        .map(|k| {
            let size = n.div_ceil(k);
            let k = n.div_ceil(size);
            let pbs = size + 2 * (n - size) + (k - 1);
            let depth = size + (k - 1);
            (pbs.div_ceil(threads).max(depth), pbs, k)
        })
        .min()
        .map_or(1, |(_, _, k)| k)
}

/// Per bit, `if s { x } else { y }`. Bits where one side is clear are
/// gates of the other side and `s` (`s and x` where `y` is a clear 0, a
/// ReLU's or a table scan's select), and where `x` is `y` with some bits
/// flipped (`select(c, t ^ K, t)`, a CRC step) those bits are `s xor y`:
/// gates sharing `s`, two per bootstrap where the set allows. The other
/// side of a swap (`select(s, y, x)` after `select(s, x, y)`, a
/// compare-exchange's pair) is free: bit by bit `x + y` minus the first.
pub fn select(b: &mut CircuitBuilder, s: Wire, x: &Bits, y: &Bits) -> Result<Bits, Error> {
    let mut sel = Selectors::for_bits();
    let zero = b.constant(0);
    let n = x.len().max(y.len());
    let mut out = Vec::with_capacity(n);
    let mut shared = Vec::new();
    for i in 0..n {
        let (xi, yi) = (x.bit_or(i, zero), y.bit_or(i, zero));
        let gate = match (clear_bit(b, xi)?, clear_bit(b, yi)?) {
            // Both clear: the multiplexer folds them.
            (Some(_), Some(_)) => None,
            // `s ? x : 0`, `s ? x : 1`.
            (None, Some(false)) => Some((xi, Gate::And)),
            (None, Some(true)) => Some((xi, Gate::OrYN)),
            // `s ? 0 : y`, `s ? 1 : y`.
            (Some(false), None) => Some((yi, Gate::AndYN)),
            (Some(true), None) => Some((yi, Gate::Or)),
            (None, None) => (b.offset_from(xi, yi, -1)? == Some(ONE)).then_some((yi, Gate::Xor)),
        };
        match gate {
            Some(g) => {
                shared.push((i, g));
                out.push(zero);
            }
            None => {
                let w = match swapped(b, s, xi, yi)? {
                    Some(w) => w,
                    None => mux(b, &mut sel, s, xi, yi)?,
                };
                b.remember("mux", &[s, xi, yi], w)?;
                out.push(w);
            }
        }
    }
    let gates: Vec<_> = shared.iter().map(|&(_, g)| g).collect();
    for ((i, _), w) in shared.iter().zip(gates_sharing(b, &mut sel, &gates, s)?) {
        out[*i] = w;
    }
    Ok(Bits::from_vec(out))
}

/// `s ? x : y` as `x + y - (s ? y : x)` where that multiplexer was built
/// before and the sum is still a bit (weight within the margin-1 budget).
fn swapped(b: &mut CircuitBuilder, s: Wire, x: Wire, y: Wire) -> Result<Option<Wire>, Error> {
    let Some(m) = b.recall("mux", &[s, y, x])? else {
        return Ok(None);
    };
    let terms = [(x, 1), (y, 1), (m, -1)];
    if b.weight_of(&terms)? > b.params().budgets.one {
        return Ok(None);
    }
    let w = b.linear(&terms, 0)?;
    Ok(Some(b.assume_range(w, 0, ONE, ONE)?))
}

/// `max(x, y)` (unsigned, or signed).
pub fn max(b: &mut CircuitBuilder, x: &Bits, y: &Bits, signed: bool) -> Result<Bits, Error> {
    if clear_first(b, x, y)? {
        return max(b, y, x, signed);
    }
    if let Some(pick) = extreme_side(b, x, y, signed)? {
        return Ok(if pick.x_is_max { x.clone() } else { y.clone() });
    }
    let ge = compare(b, x, y, Comparison::Ge, signed)?;
    select(b, ge, x, y)
}

/// `min(x, y)` (unsigned, or signed).
pub fn min(b: &mut CircuitBuilder, x: &Bits, y: &Bits, signed: bool) -> Result<Bits, Error> {
    if clear_first(b, x, y)? {
        return min(b, y, x, signed);
    }
    if let Some(pick) = extreme_side(b, x, y, signed)? {
        return Ok(if pick.x_is_max { y.clone() } else { x.clone() });
    }
    let ge = compare(b, x, y, Comparison::Ge, signed)?;
    select(b, ge, y, x)
}

/// Whether `x` is clear and `y` is not: `max` and `min` then compare
/// `y >= x`, where ties do not matter and a clear bound is cheaper on the
/// right (`max(0, x)` is `x >= 0` on signed words, the sign bit, where
/// `0 >= x` would need every bit).
fn clear_first(b: &CircuitBuilder, x: &Bits, y: &Bits) -> Result<bool, Error> {
    Ok(clear_bits(b, x.wires())?.is_some() && clear_bits(b, y.wires())?.is_none())
}

/// Which side of a `max` or `min` is the larger, where one side is a clear
/// bound of the type (0 or the largest value unsigned, the smallest or
/// largest signed): `max(0, x)` is `x` on unsigned words.
struct Extreme {
    x_is_max: bool,
}

fn extreme_side(
    b: &CircuitBuilder,
    x: &Bits,
    y: &Bits,
    signed: bool,
) -> Result<Option<Extreme>, Error> {
    if x.len() != y.len() || x.is_empty() {
        return Ok(None);
    }
    let n = x.len();
    // The clear side's place: -1 the type's least value, 1 its largest.
    let bound = |bits: &[bool]| -> Option<i8> {
        let (body, top) = (&bits[..n - 1], bits[n - 1]);
        let all = |v: bool| body.iter().all(|&t| t == v);
        match (signed, top) {
            (false, _) if all(top) => Some(if top { 1 } else { -1 }),
            (true, true) if all(false) => Some(-1),
            (true, false) if all(true) => Some(1),
            _ => None,
        }
    };
    Ok(
        match (clear_bits(b, x.wires())?, clear_bits(b, y.wires())?) {
            (Some(_), Some(_)) | (None, None) => None,
            (Some(cx), None) => bound(&cx).map(|p| Extreme { x_is_max: p > 0 }),
            (None, Some(cy)) => bound(&cy).map(|p| Extreme { x_is_max: p < 0 }),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_blocks_on_two_threads() {
        assert_eq!(best_split(32, 1), 1);
        assert_eq!(best_split(32, 2), 2);
        assert!(best_split(32, 16) > 2);
    }
}
