//! Comparisons that read several bits per bootstrap, on sets whose
//! selectors have room for them (`pi >= 5`: the digits family's sets, where
//! words share the key of `Int`).
//!
//! Bits are stored as 0 or 2, so over a chunk of `k` bits the difference
//! `d = sum_i 2^i (x_i - y_i)` takes the even values of
//! `-2(2^k - 1) ..= 2(2^k - 1)`, two units apart (margin one). Its sign is
//! an odd function, and an odd function is negacyclic on any range within
//! `|d| < 2^(pi-1)`: one bootstrap gives the sign of a chunk of
//! `k = pi - 2` bits (3 on `pi = 5`). The chunks' signs are digits in
//! {-1, 0, 1} whose most significant nonzero one is the sign of `x - y`,
//! so the digits family's signum reduction (`digits::sign::reduce`,
//! four per bootstrap on `DIGITS_128`) finishes the work, its last table
//! answering the comparison as a bit. A 32-bit `x < y` is 11 + 3 + 1 = 15
//! bootstraps at depth 3, where the carry chain of [`super::compare`]
//! takes 49 at depth 17.
//!
//! Equality tests each chunk's difference for zero and counts the chunks
//! that differ ([`equal_by_counts`]: 12 bootstraps, depth 2 at 32 bits).
//! The zero test reads the same 3-bit chunks as the signs: a table that is
//! 1 at 0 and 0 elsewhere is negacyclic on any range inside `(-2^(pi-1),
//! 2^(pi-1))`, since 0 is its own negation and the image of the one point
//! at 0, `2^(pi-1)`, is no value of the chunk.
//! (A table that is 1 on the *nonzero* values would need chunks of 2 bits:
//! `2` and `2 - 2^(pi-1)` are both values of a 3-bit chunk.)

use super::ONE;
use crate::circuit::{CircuitBuilder, Range, Selectors, Wire};
use crate::comparison::Comparison;
use crate::crypto::lut::Lut;
use crate::digits::sign_tree::{group_size, reduce};
use crate::digits::wide::any_flag;
use crate::error::Error;

/// The largest chunk whose difference `2(2^k - 1)` stays below `limit`.
fn chunk_bits(limit: u64) -> usize {
    let mut k = 0;
    while 2 * ((1u64 << (k + 1)) - 1) < limit {
        k += 1;
    }
    k
}

/// Refuses sets where packing gains nothing (chunks of one bit, or sign
/// groups of one), so that the carry chain is used there.
fn check(b: &CircuitBuilder, k: usize) -> Result<(), Error> {
    if k < 2 || group_size(b) < 2 {
        let p = b.params();
        return Err(Error::UnsupportedParams {
            params: p.id,
            family: "two's-complement bits",
            reason: format!(
                "packed comparisons need pi >= 5 and a budget of 5 at margin 1/2; it has pi = {}",
                p.pi
            ),
        });
    }
    Ok(())
}

/// `sum_i 2^i (x_i - y_i)` over one chunk, refreshing bits whose weight
/// would not let it decode two units apart. A bit that is a sum of other
/// values (an unrefreshed adder output) can make the tracked range of the
/// difference wider than its values: when the range does not `fit` the
/// table, the chunk's bits are refreshed (fresh bits give the exact range).
fn difference(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    xs: &[Wire],
    ys: &[Wire],
    fits: impl Fn(Range) -> bool,
) -> Result<Wire, Error> {
    let terms = |xs: &[Wire], ys: &[Wire]| -> Vec<(Wire, i64)> {
        xs.iter()
            .zip(ys)
            .enumerate()
            .flat_map(|(i, (&x, &y))| [(x, 1i64 << i), (y, -(1i64 << i))])
            .collect()
    };
    // The zero test's table decodes at the margin-1/2 budget (found by
    // the property tests once noisier adder outputs reached it); the
    // signs take the same, the strictest.
    let budget = b.params().budgets.half;
    let d = sel.linear_within(b, &terms(xs, ys), 0, budget)?;
    if fits(b.range(d)?) {
        return Ok(d);
    }
    let mut fresh = |b: &mut CircuitBuilder, ws: &[Wire]| -> Result<Vec<Wire>, Error> {
        ws.iter()
            .map(|&w| match b.constant_value(w)? {
                Some(_) => Ok(w),
                None => sel.refresh(b, w),
            })
            .collect()
    };
    let (fx, fy) = (fresh(b, xs)?, fresh(b, ys)?);
    sel.linear_within(b, &terms(&fx, &fy), 0, budget)
}

/// One bootstrap of `f` on every value `w` can take.
pub(super) fn apply(
    b: &mut CircuitBuilder,
    w: Wire,
    f: impl Fn(i64) -> i64,
) -> Result<Wire, Error> {
    let r = b.range(w)?;
    let points: Vec<(i64, i64)> = (r.lo..=r.hi)
        .step_by(r.step.max(1) as usize)
        .map(|v| (v, f(v)))
        .collect();
    let lut = Lut::from_points(b.params().pi, &points)?;
    Ok(b.bootstrap(w, &lut)?)
}

/// A wire of -1 or 1 as a bit (0 or 2).
fn as_bit(b: &mut CircuitBuilder, pm: Wire) -> Result<Wire, Error> {
    let w = b.add_const(pm, 1)?;
    Ok(b.assume_range(w, 0, 2, ONE)?)
}

/// -1 or 1 for false or true.
fn pm(t: bool) -> i64 {
    if t {
        1
    } else {
        -1
    }
}

/// The signs of `x - y` over chunks of `pi - 2` bits, least significant
/// first.
fn chunk_signs(b: &mut CircuitBuilder, xs: &[Wire], ys: &[Wire]) -> Result<Vec<Wire>, Error> {
    let k = chunk_bits(b.params().message_modulus() / 2);
    check(b, k)?;
    let half = b.params().message_modulus() as i64 / 2;
    // An odd table is negacyclic on any range strictly inside (-half, half).
    let fits = |r: Range| -half < r.lo && r.hi < half;
    let mut sel = Selectors::for_bits();
    let signs = xs
        .chunks(k)
        .zip(ys.chunks(k))
        .map(|(cx, cy)| {
            let d = difference(b, &mut sel, cx, cy, fits)?;
            apply(b, d, i64::signum)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    // Equal chunks (a sign extension's fill bits) give one sign, made once:
    // a copy below another never decides (where it is nonzero, so is the
    // higher one), and summing copies would add their noise coherently.
    let mut kept: Vec<Wire> = Vec::with_capacity(signs.len());
    for (i, &s) in signs.iter().enumerate() {
        if distinct_from(b, s, &signs[i + 1..])? {
            kept.push(s);
        }
    }
    Ok(kept)
}

/// Whether `w` differs from every wire of `others` as an expression.
fn distinct_from(b: &CircuitBuilder, w: Wire, others: &[Wire]) -> Result<bool, Error> {
    for &o in others {
        if b.offset_from(w, o, 1)? == Some(0) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `x <op> y` for an ordering `op` on unsigned bits of equal length, as a
/// bit.
pub fn order(
    b: &mut CircuitBuilder,
    xs: &[Wire],
    ys: &[Wire],
    op: Comparison,
) -> Result<Wire, Error> {
    let signs = chunk_signs(b, xs, ys)?;
    if signs.is_empty() {
        return Ok(b.constant(if op.holds_for_sign(0) { ONE } else { 0 }));
    }
    // An ordering is a threshold on the sign: its -1/1 table is odd about
    // it, so the last group may be as wide as any.
    let g = group_size(b);
    let w = reduce(b, &signs, g, |s| pm(op.holds_for_sign(s)))?;
    as_bit(b, w)
}

/// `x == y` (or `!=` when `!eq`): a zero test of each chunk's difference
/// (1 where the chunk is equal), then the chunks that differ counted.
pub fn equal_by_counts(
    b: &mut CircuitBuilder,
    xs: &[Wire],
    ys: &[Wire],
    eq: bool,
) -> Result<Wire, Error> {
    let half = b.params().message_modulus() / 2;
    let k = chunk_bits(half);
    check(b, k)?;
    let answer = |t: bool| if t == eq { ONE } else { 0 };
    let mut sel = Selectors::for_bits();
    let mut diffs = Vec::new();
    // Inside (-half, half): `half`, the image of 0, is no value.
    let fits = |r: Range| -(half as i64) < r.lo && r.hi < half as i64;
    for (cx, cy) in xs.chunks(k).zip(ys.chunks(k)) {
        let d = difference(b, &mut sel, cx, cy, fits)?;
        match b.constant_value(d)? {
            Some(0) => {}
            Some(_) => return Ok(b.constant(answer(false))),
            // Equal chunks (fill bits) are tested once.
            None if !distinct_from(b, d, &diffs)? => {}
            None => diffs.push(d),
        }
    }
    if let [d] = diffs[..] {
        // The equality bit itself (0 or 2: the same even table), negated
        // in the clear for `!=`.
        let same = apply(b, d, |v| if v == 0 { ONE } else { 0 })?;
        return Ok(if eq {
            same
        } else {
            b.linear(&[(same, -1)], ONE)?
        });
    }
    if diffs.is_empty() {
        return Ok(b.constant(answer(true)));
    }
    if let Some(w) = with_one_bit_chunk(b, &mut sel, &diffs, eq)? {
        return Ok(w);
    }
    let differs = diffs
        .into_iter()
        .map(|d| {
            let same = apply(b, d, |v| (v == 0) as i64)?;
            Ok(b.linear(&[(same, -1)], 1)?)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    // The last table gives -1/1, negacyclic even at 0 and 2^(pi-1) (equal,
    // and all 2^(pi-1) differ): it may count up to half the ring.
    let w = any_flag(b, differs, half as usize, |any| pm(any != eq))?;
    as_bit(b, w)
}

/// Two or three chunks, one of them a single bit (a 4- or 7-bit word):
/// the last table reads that bit's difference `d` (-2, 0 or 2) beside
/// the other chunks' zero tests, `sigma = d + 4 (chunks that differ)`,
/// and answers whether `sigma` is 0, saving the bit's own zero test.
/// `sigma` spans `-2 ..= 10`, less than half the ring, and is 0 only when
/// every chunk is equal; the answer is -1 or 1 (negacyclic where the
/// span would reach half the ring, hence at most three chunks).
fn with_one_bit_chunk(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    diffs: &[Wire],
    eq: bool,
) -> Result<Option<Wire>, Error> {
    const STEP: i64 = 4;
    if !(2..=3).contains(&diffs.len()) {
        return Ok(None);
    }
    let mut bit = None;
    for (i, &d) in diffs.iter().enumerate() {
        let r = b.range(d)?;
        if -2 <= r.lo && r.hi <= 2 {
            bit = Some(i);
        }
    }
    let Some(i) = bit else {
        return Ok(None);
    };
    let mut terms = vec![(diffs[i], 1)];
    for (j, &d) in diffs.iter().enumerate() {
        if j != i {
            let same = apply(b, d, |v| if v == 0 { STEP } else { 0 })?;
            terms.push((same, -1));
        }
    }
    let others = (diffs.len() - 1) as i64;
    let budget = b.params().budgets.half;
    let sigma = sel.linear_within(b, &terms, STEP * others, budget)?;
    let w = apply(b, sigma, |v| pm((v == 0) == eq))?;
    Ok(Some(as_bit(b, w)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_sizes_on_five_bits() {
        // |d| <= 14 < 16: the signs and the zero tests of 3-bit chunks.
        assert_eq!(chunk_bits(16), 3);
        assert_eq!(chunk_bits(8), 2);
        assert_eq!(chunk_bits(4), 1);
    }
}
