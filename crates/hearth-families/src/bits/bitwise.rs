//! Bitwise operations and bit manipulation.
//!
//! Gates apply bit by bit ([`super::gates`]); a clear operand folds every
//! gate to a constant, a copy or a negation, so operations with
//! immediates are free. Bit-field clear / insert / extract and bit or byte
//! reversal are rewiring (free). Population count sums the bits by column
//! compression; count leading zeros ORs the bits from the top down (a
//! prefix, chained or parallel by the thread count) and counts the
//! positions still zero.

use super::counters::{sum_columns, CompressKind};
use super::gates::{gate, guard_gate, not, Gate};
use super::{Bits, ONE};
use crate::circuit::{cheapest, CircuitBuilder, Memo, Selectors, Wire};
use crate::crypto::lut::Lut;
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// A two-input gate applied bit by bit (the shorter operand zero-extended).
/// Where the set has room (`pi >= 5`), two bit positions share one
/// bootstrap (`gate_pair`): a 32-bit AND is 16 bootstraps at depth 1. An
/// OR or XOR of two bits that are never both set (their guards say so,
/// [`crate::circuit::guard`]) is their sum, free.
pub fn bitwise(b: &mut CircuitBuilder, g: Gate, x: &Bits, y: &Bits) -> Result<Bits, Error> {
    let mut sel = Selectors::for_bits();
    let zero = b.constant(0);
    let n = x.len().max(y.len());
    let pair = |i: usize| (x.bit_or(i, zero), y.bit_or(i, zero));
    let mut out = vec![zero; n];
    let mut gated = Vec::with_capacity(n);
    for (i, slot) in out.iter_mut().enumerate() {
        let (p, q) = pair(i);
        match exclusive_sum(b, g, p, q)? {
            Some(w) => *slot = w,
            None => gated.push(i),
        }
    }
    let mut k = 0;
    while k < gated.len() {
        let i = gated[k];
        if let Some(&j) = gated.get(k + 1) {
            if let Some((lo, hi)) = gate_pair(b, g, pair(i), pair(j))? {
                for (at, w) in [(i, lo), (j, hi)] {
                    let (p, q) = pair(at);
                    guard_gate(b, g, p, q, w)?;
                    out[at] = w;
                }
                k += 2;
                continue;
            }
        }
        let (p, q) = pair(i);
        out[i] = gate(b, &mut sel, g, p, q)?;
        k += 1;
    }
    Ok(Bits::from_vec(out))
}

/// `p | q` or `p ^ q` as the sum `p + q` where the two are never both set
/// and the sum is still a bit (its weight within the margin-1 budget);
/// else `None`.
fn exclusive_sum(b: &mut CircuitBuilder, g: Gate, p: Wire, q: Wire) -> Result<Option<Wire>, Error> {
    if !matches!(g, Gate::Or | Gate::Xor) || !b.exclusive(p, q)? {
        return Ok(None);
    }
    if b.weight_of(&[(p, 1), (q, 1)])? > b.params().budgets.one {
        return Ok(None);
    }
    let sum = b.add(p, q)?;
    let w = b.assume_range(sum, 0, ONE, ONE)?;
    guard_gate(b, g, p, q, w)?;
    Ok(Some(w))
}

/// `g` at two bit positions in one bootstrap, or `None` where one gate per
/// position costs no more (a constant or repeated input folds the gate)
/// or the set has no room.
///
/// With an input negated where needed (`not a = 2 - a`, free), every gate
/// is a function `h` of the count `c` of ones at its position: `s = a + b`
/// takes 0, 2 or 4. The selector `t = s_0 + 3 s_1` takes the nine even
/// values `0 ..= 16` and names both counts. Two interleaved tables read
/// `h(c_0)` at `t` and `h(c_1)` at `t + 1` (margin 1/2 unit, weight 20 for
/// fresh bits). On `pi = 5` the reads at 16 and 17 are the negacyclic
/// images of those at 0 and 1, so each table must give `-v` at count 2
/// where it gives `v` at count 0: a table stored as -1 / 1 (plus one
/// afterwards) does where `h(0) != h(2)`, one stored as 0 / 2 where
/// `h(0) = h(2) = 0`, and where both are 1 the table of `not h` does,
/// negated afterwards.
fn gate_pair(
    b: &mut CircuitBuilder,
    g: Gate,
    lo: (Wire, Wire),
    hi: (Wire, Wire),
) -> Result<Option<(Wire, Wire)>, Error> {
    if b.params().pi < 5 || lo.0 == lo.1 || hi.0 == hi.1 {
        return Ok(None);
    }
    for w in [lo.0, lo.1, hi.0, hi.1] {
        let r = b.range(w)?;
        if b.constant_value(w)?.is_some() || (r.lo, r.hi, r.step) != (0, ONE, ONE) {
            return Ok(None);
        }
    }
    // Inputs to negate so that `g` depends on the count of ones alone.
    let Some((na, nb)) = [(false, false), (true, false), (false, true)]
        .into_iter()
        .find(|&(na, nb)| g.eval(na, !nb) == g.eval(!na, nb))
    else {
        return Ok(None);
    };
    let h = |c: i64| g.eval(na ^ (c >= 1), nb ^ (c == 2));
    // A table of `h`: -1 / 1, 0 / 2, or that of `not h` (see above).
    let (centred, negated) = match (h(0), h(2)) {
        (false, false) => (false, false),
        (true, true) => (false, true),
        _ => (true, false),
    };
    let value = |c: i64| {
        let v = h(c) != negated;
        match (centred, v) {
            (true, true) => 1,
            (true, false) => -1,
            (false, v) => ONE * v as i64,
        }
    };
    let term = |w: Wire, negate: bool, c: i64| (w, if negate { -c } else { c });
    let terms = [
        term(lo.0, na, 1),
        term(lo.1, nb, 1),
        term(hi.0, na, 3),
        term(hi.1, nb, 3),
    ];
    if b.weight_of(&terms)? > b.params().budgets.half {
        return Ok(None);
    }
    let constant = ONE * (na as i64 + nb as i64) * (1 + 3);
    let t = b.linear(&terms, constant)?;
    let table = |digit: fn(i64) -> i64| -> Result<Lut, Error> {
        let points: Vec<(i64, i64)> = (0..=16)
            .step_by(2)
            .map(|t| (t, value(digit(t / 2))))
            .collect();
        Ok(Lut::from_points(b.params().pi, &points)?)
    };
    let (t0, t1) = (table(|v| v % 3)?, table(|v| v / 3)?);
    // Inputs that share fresh values (an amount bit that is also a data
    // bit, outputs of one earlier pair) can leave the selector a wider sound
    // range than the tables list: one gate per bit then (found by `tool
    // fuzz-programs --family words --seed 204`, program 31174).
    if b.uncovered(t, &[&t0, &t1])?.is_some() {
        return Ok(None);
    }
    let outs = b.bootstrap_many(t, &[&t0, &t1])?;
    let mut bit = |w: Wire| -> Result<Wire, Error> {
        let w = match (centred, negated) {
            (true, _) => b.add_const(w, 1)?,
            (false, true) => b.linear(&[(w, -1)], ONE)?,
            (false, false) => w,
        };
        Ok(b.assume_range(w, 0, ONE, ONE)?)
    };
    Ok(Some((bit(outs[0])?, bit(outs[1])?)))
}

/// Every bit negated (free).
pub fn not_bits(b: &mut CircuitBuilder, x: &Bits) -> Result<Bits, Error> {
    let out = x
        .wires()
        .iter()
        .map(|&w| not(b, w))
        .collect::<Result<_, _>>()?;
    Ok(Bits::from_vec(out))
}

/// Bits `lsb .. lsb + width` cleared (ARM's BFC; free).
pub fn field_clear(b: &mut CircuitBuilder, x: &Bits, lsb: usize, width: usize) -> Bits {
    let zero = b.constant(0);
    let out = x
        .wires()
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if (lsb..lsb + width).contains(&i) {
                zero
            } else {
                w
            }
        })
        .collect();
    Bits::from_vec(out)
}

/// The low `width` bits of `y` written into `x` at `lsb` (ARM's BFI; free).
pub fn field_insert(b: &mut CircuitBuilder, x: &Bits, y: &Bits, lsb: usize, width: usize) -> Bits {
    let zero = b.constant(0);
    let out = x
        .wires()
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if (lsb..lsb + width).contains(&i) {
                y.bit_or(i - lsb, zero)
            } else {
                w
            }
        })
        .collect();
    Bits::from_vec(out)
}

/// Bits `lsb .. lsb + width` of `x` as an `n`-bit value, zero- or
/// sign-extended (ARM's UBFX / SBFX; free).
pub fn field_extract(
    b: &mut CircuitBuilder,
    x: &Bits,
    lsb: usize,
    width: usize,
    n: usize,
    signed: bool,
) -> Bits {
    let zero = b.constant(0);
    let field: Vec<Wire> = (lsb..lsb + width).map(|i| x.bit_or(i, zero)).collect();
    let fill = if signed {
        field.last().copied().unwrap_or(zero)
    } else {
        zero
    };
    Bits::from_vec(
        (0..n)
            .map(|i| field.get(i).copied().unwrap_or(fill))
            .collect(),
    )
}

/// The bits in reverse order (free).
pub fn reverse_bits(x: &Bits) -> Bits {
    Bits::from_vec(x.wires().iter().rev().copied().collect())
}

/// The bytes in reverse order (free; the width must be whole bytes).
pub fn swap_bytes(x: &Bits) -> Bits {
    let w = x.wires();
    let bytes = w.len() / 8;
    let out = (0..w.len())
        .map(|i| w[(bytes - 1 - i / 8) * 8 + i % 8])
        .collect();
    Bits::from_vec(out)
}

/// The number of set bits, on `n` bits (`n` large enough for the width):
/// one column compressed, by Wallace's or Dadda's rule, whichever the
/// count backend finds faster for the width and thread count (on `pi = 5`
/// Wallace's 7-to-3 counters at every level: 32 bits in 15 bootstraps at
/// depth 5 on 2 threads, where Dadda's fewer counters per level took 21
/// at depth 11).
pub fn count_ones(b: &mut CircuitBuilder, x: &Bits, n: usize) -> Result<Bits, Error> {
    let kind = count_kind(b, x.len(), n);
    sum_columns(b, vec![x.wires().to_vec()], n, kind)
}

type CountKey = (ParamsId, usize, usize, usize);

thread_local! {
    static COUNT_KINDS: Memo<CountKey, CompressKind> = Memo::new();
}

/// The compression rule with the least estimated time for a count of
/// `bits` bits on `n` output bits.
fn count_kind(b: &CircuitBuilder, bits: usize, n: usize) -> CompressKind {
    let (params, threads) = (b.params(), b.threads());
    let key = (params.id, bits, n, threads);
    let kinds = CompressKind::CONCRETE;
    COUNT_KINDS.with(|memo| {
        memo.get_or(key, || {
            cheapest(params, threads, &kinds, |s, kind| {
                let x = Bits::input(s, bits)?;
                sum_columns(s, vec![x.wires().to_vec()], n, kind)?.output(s)?;
                Ok(())
            })
            .unwrap_or(CompressKind::Dadda)
        })
    })
}

/// The number of leading zeros (from the top), on `n` bits. With `p_k` the
/// OR of the `k + 1` highest bits, `z_k = not p_k` is a thermometer code
/// (ones, then zeros) whose count is the answer, and bit `j` of the count
/// of a thermometer code is the alternating sum `z_(2^j - 1) -
/// z_(2 * 2^j - 1) + z_(3 * 2^j - 1) - ...`: linear. Sums too heavy for
/// the budget are split into chunks that start with a `+` term (each 0 or
/// 1, one refresh each); a heavy top bit is refreshed first.
pub fn leading_zeros(b: &mut CircuitBuilder, x: &Bits, n: usize) -> Result<Bits, Error> {
    let mut sel = Selectors::for_bits();
    // From the top: p_k = OR of the k + 1 highest bits.
    let top_down: Vec<Wire> = x.wires().iter().rev().copied().collect();
    let prefix = prefix_or(b, &mut sel, &top_down)?;
    let z: Vec<Wire> = prefix
        .iter()
        .map(|&p| not(b, p))
        .collect::<Result<_, _>>()?;
    let len = z.len();
    let budget = b.params().budgets.one;
    let zero = b.constant(0);
    let mut out = vec![zero; n];
    for (j, bit) in out.iter_mut().enumerate() {
        let stride = 1usize.checked_shl(j as u32).unwrap_or(usize::MAX);
        let terms: Vec<(Wire, i64)> = (1..)
            .map_while(|m: usize| {
                let i = m.checked_mul(stride)? - 1;
                (i < len).then(|| (z[i], if m % 2 == 1 { 1 } else { -1 }))
            })
            .collect();
        if terms.is_empty() {
            continue;
        }
        // Chunks of an even number of terms (each starts with a `+`).
        let mut chunks: Vec<Vec<(Wire, i64)>> = vec![Vec::new()];
        for pair in terms.chunks(2) {
            // `z_0` is the top input bit itself, possibly a heavy sum:
            // refresh a term when its pair alone is over the budget.
            let mut pair = pair.to_vec();
            if b.weight_of(&pair)? > budget {
                for t in &mut pair {
                    if b.quadratic_weight(t.0)? > 1 {
                        t.0 = sel.refresh(b, t.0)?;
                    }
                }
            }
            let pair = &pair[..];
            let mut grown = chunks.last().expect("one chunk").clone();
            grown.extend_from_slice(pair);
            if !chunks.last().expect("one chunk").is_empty() && b.weight_of(&grown)? > budget {
                chunks.push(pair.to_vec());
            } else {
                *chunks.last_mut().expect("one chunk") = grown;
            }
        }
        let parts: Vec<(Wire, i64)> = if chunks.len() == 1 {
            chunks
                .pop()
                .map(|c| c.into_iter().collect())
                .unwrap_or_default()
        } else {
            chunks
                .into_iter()
                .map(|c| {
                    let s = b.linear(&c, 0)?;
                    let s = b.assume_range(s, 0, ONE, ONE)?;
                    Ok((sel.refresh(b, s)?, 1))
                })
                .collect::<Result<_, Error>>()?
        };
        let s = b.linear(&parts, 0)?;
        *bit = b.assume_range(s, 0, ONE, ONE)?;
    }
    Ok(Bits::from_vec(out))
}

/// How [`prefix_or`] computes its ORs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum OrPrefix {
    /// A chain, two steps per bootstrap where the set has room
    /// (`or_two_steps`): fewest bootstraps.
    Chain,
    /// Sklansky's network of two-input ORs: depth `log2 n`.
    Sklansky,
    /// The widest ORs the set has ([`super::prefix::or_prefix_wide`]):
    /// depth `log_6 n` on the digits family's sets.
    Wide,
}

thread_local! {
    static OR_PREFIXES: Memo<(ParamsId, usize, usize), OrPrefix> = Memo::new();
}

/// `p_k = v_0 or ... or v_k`, by the way with the least predicted time for
/// the builder's thread count.
fn prefix_or(b: &mut CircuitBuilder, sel: &mut Selectors, v: &[Wire]) -> Result<Vec<Wire>, Error> {
    let (params, threads, n) = (b.params(), b.threads(), v.len());
    let kinds = [OrPrefix::Chain, OrPrefix::Sklansky, OrPrefix::Wide];
    let kind = OR_PREFIXES.with(|memo| {
        memo.get_or((params.id, n, threads), || {
            cheapest(params, threads, &kinds, |s, k| {
                let x = Bits::input(s, n)?;
                let p = prefix_or_by(s, &mut Selectors::for_bits(), x.wires(), k)?;
                Bits::from_vec(p).output(s)?;
                Ok(())
            })
            .unwrap_or(OrPrefix::Chain)
        })
    });
    prefix_or_by(b, sel, v, kind)
}

fn prefix_or_by(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    v: &[Wire],
    kind: OrPrefix,
) -> Result<Vec<Wire>, Error> {
    let n = v.len();
    let mut p = v.to_vec();
    match kind {
        OrPrefix::Chain => {
            let mut k = 1;
            while k < n {
                if k + 1 < n {
                    if let Some((a, c)) = or_two_steps(b, p[k - 1], v[k], v[k + 1])? {
                        (p[k], p[k + 1]) = (a, c);
                        k += 2;
                        continue;
                    }
                }
                p[k] = gate(b, sel, Gate::Or, p[k - 1], v[k])?;
                k += 1;
            }
        }
        OrPrefix::Sklansky => {
            p = super::prefix::or_prefix_network(b, sel, v, super::prefix::AdderKind::Sklansky)?;
        }
        OrPrefix::Wide => {
            let groups: Vec<Vec<Wire>> = v.iter().map(|&w| vec![w]).collect();
            let fan = super::gates::widest_or(b, sel)?;
            p = super::prefix::or_prefix_wide(b, sel, &groups, fan)?;
        }
    }
    Ok(p)
}

/// `p or v` and `p or v or w` in one bootstrap, or `None` where the set
/// has no room, an input is not a plain bit or the selector would be over
/// the budget. Both are thresholds of `t = 2(p + v) + w` (bits as 0 or 2:
/// the even values `0 ..= 10`): the first at `t >= 4`, the second at
/// `t >= 2`, read by two interleaved tables (margin 1/2 unit, weight 9 for
/// fresh bits).
fn or_two_steps(
    b: &mut CircuitBuilder,
    p: Wire,
    v: Wire,
    w: Wire,
) -> Result<Option<(Wire, Wire)>, Error> {
    if b.params().pi < 5 {
        return Ok(None);
    }
    for x in [p, v, w] {
        let r = b.range(x)?;
        if b.constant_value(x)?.is_some() || (r.lo, r.hi, r.step) != (0, ONE, ONE) {
            return Ok(None);
        }
    }
    let terms = [(p, 2), (v, 2), (w, 1)];
    if b.weight_of(&terms)? > b.params().budgets.half {
        return Ok(None);
    }
    let t = b.linear(&terms, 0)?;
    let threshold = |at: i64| -> Result<Lut, Error> {
        let points: Vec<(i64, i64)> = (0..=10)
            .step_by(2)
            .map(|t| (t, if t >= at { 1 } else { -1 }))
            .collect();
        Ok(Lut::from_points(b.params().pi, &points)?)
    };
    let (first, second) = (threshold(4)?, threshold(2)?);
    // As in `gate_pair`: shared fresh values can widen the sound range.
    if b.uncovered(t, &[&first, &second])?.is_some() {
        return Ok(None);
    }
    let outs = b.bootstrap_many(t, &[&first, &second])?;
    let mut bit = |x: Wire| -> Result<Wire, Error> {
        let x = b.add_const(x, 1)?;
        Ok(b.assume_range(x, 0, ONE, ONE)?)
    };
    Ok(Some((bit(outs[0])?, bit(outs[1])?)))
}
