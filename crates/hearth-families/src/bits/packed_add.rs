//! Additions that carry two bits per bootstrap, on sets whose selectors
//! have room for them (`pi >= 5`: the digits family's sets, where words
//! share the key of `Int`).
//!
//! The operands are cut into chunks of two bits. With bits stored as 0 or
//! 2, a chunk's sum with the carry into it,
//! `t = x_0 + 2 x_1 + y_0 + 2 y_1 + c` (0 ..= 7), sits at the even
//! positions `0 ..= 14`: the first half of the ring, where any table reads it and one blind rotation evaluates
//! two tables read one unit apart (many-LUT, interleaved). One rotation
//! gives the carry out `t >= 4` and the high bit `(t >> 1) & 1`; the low
//! bit is linear, `t - 2 b_1 - 4 c'`. A 32-bit ripple addition is 16
//! bootstraps at depth 16, where one full adder per bit is 32 at depth 32
//! (tfhe-rs: 16 blocks of two bits).
//!
//! Interleaved tables decode with half the margin, so `t` must weigh at
//! most the margin-1/2 budget (112 on `DIGITS_128`; 11 from fresh bits);
//! where it weighs more the two tables take one rotation each.
//!
//! The carries come by ripple (one rotation per chunk on the chain) or by
//! the prefix networks of [`super::adders`] over the chunks: a chunk's
//! pair (G, T), its carry out with carry in 0 and with carry in 1, is
//! `s >= 4` and `s >= 3` of its sum `s` without the carry, both in one
//! rotation; each chunk's high bit is then one more table of `t`.

use super::prefix::{prefix_network, AdderKind};
use super::{on_even_positions, Bits, ONE};
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::crypto::lut::Lut;
use crate::error::Error;

/// Bits per chunk.
const CHUNK: usize = 2;

/// Whether the builder's set adds by chunks (`pi >= 5`); elsewhere (the
/// gate sets) the bitwise adders run.
pub fn applies(b: &CircuitBuilder) -> bool {
    b.params().pi >= 5
}

/// `xs + ys + carry_in` on `n = xs.len()` bits by chunks of two bits: the
/// sum bits and the carry out.
pub fn add(
    b: &mut CircuitBuilder,
    xs: &[Wire],
    ys: &[Wire],
    carry_in: Wire,
    kind: AdderKind,
) -> Result<(Bits, Wire), Error> {
    let mut sel = Selectors::for_bits();
    let chunks = layout(b, xs, ys, carry_in)?;
    let m = chunks.len();
    let sums: Vec<Vec<(Wire, i64)>> = chunks
        .iter()
        .map(|&(lo, hi)| {
            (lo..hi)
                .flat_map(|j| [(xs[j], 1i64 << (j - lo)), (ys[j], 1i64 << (j - lo))])
                .collect()
        })
        .collect();
    let width = |i: usize| chunks[i].1 - chunks[i].0;
    let with_carry = |i: usize, c: Wire| {
        let mut terms = sums[i].clone();
        terms.push((c, 1));
        terms
    };
    let mut bits = Vec::with_capacity(xs.len());
    let carries = match kind {
        AdderKind::Ripple | AdderKind::Auto => {
            let mut c = vec![carry_in];
            for i in 0..m {
                let w = width(i);
                let t = chunk_sum(b, &mut sel, &with_carry(i, c[i]), w + 1)?;
                // The carry and the high bits of t in as few rotations
                // as its noise allows; the low bit follows linearly.
                let mut fs: Vec<Box<dyn Fn(i64) -> bool>> = vec![Box::new(move |t| t >= 1 << w)];
                fs.extend((1..w).map(|j| Box::new(move |t: i64| (t >> j) & 1 == 1) as _));
                let outs = tables(b, t, &fs)?;
                let (carry, high) = (outs[0], &outs[1..]);
                bits.extend(chunk_bits(b, t, high, carry, w)?);
                c.push(carry);
            }
            c
        }
        _ => {
            let mut g = vec![carry_in];
            let mut t_leaf = vec![None];
            for (i, sum) in sums.iter().enumerate() {
                let w = width(i);
                let s = chunk_sum(b, &mut sel, sum, w + 1)?;
                let fs: Vec<Box<dyn Fn(i64) -> bool>> = vec![
                    Box::new(move |s| s >= 1 << w),
                    Box::new(move |s| s >= (1 << w) - 1),
                ];
                let outs = tables(b, s, &fs)?;
                g.push(outs[0]);
                t_leaf.push(Some(outs[1]));
            }
            let carries = prefix_network(b, &mut sel, g, kind, |_, i| {
                Ok(t_leaf[i].expect("a chunk's T"))
            })?;
            for i in 0..m {
                let w = width(i);
                let t = chunk_sum(b, &mut sel, &with_carry(i, carries[i]), w + 1)?;
                let fs: Vec<Box<dyn Fn(i64) -> bool>> = (1..w)
                    .map(|j| Box::new(move |t: i64| (t >> j) & 1 == 1) as _)
                    .collect();
                let high = tables(b, t, &fs)?;
                bits.extend(chunk_bits(b, t, &high, carries[i + 1], w)?);
            }
            carries
        }
    };
    Ok((Bits::from_vec(bits), carries[m]))
}

/// The chunks `(lo, hi)`: pairs of bits from bit 0, or a single bit 0 and
/// pairs from bit 1, whichever needs fewer rotations (a chunk whose sum
/// weighs more than the margin-1/2 budget takes two), then puts less noise
/// on the chunks' high bits (weight 2: their noise counts four times).
/// Sums of sums have noisy low bits; a shift by one, as between a
/// division's rows, moves them to the other phase.
fn layout(
    b: &CircuitBuilder,
    xs: &[Wire],
    ys: &[Wire],
    carry_in: Wire,
) -> Result<Vec<(usize, usize)>, Error> {
    let n = xs.len();
    let chunks = |first: usize| -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let mut lo = 0;
        let mut w = first;
        while lo < n {
            v.push((lo, (lo + w).min(n)));
            lo += w;
            w = CHUNK;
        }
        v
    };
    let half = b.params().budgets.half;
    let zero = |w: Wire| Ok::<_, Error>(b.constant_value(w)? == Some(0));
    // A single first bit with a clear 0 on one side and no carry in
    // carries nothing: its sum is linear, no rotation.
    let free_first = zero(carry_in)? && n > 0 && (zero(xs[0])? || zero(ys[0])?);
    // (rotations, weight on high bits), the carries counted fresh.
    let cost = |layout: &[(usize, usize)]| -> Result<(usize, u64), Error> {
        let (mut rotations, mut high) = (0, 0u64);
        for &(lo, hi) in layout {
            if lo == 0 && hi == 1 && free_first {
                continue;
            }
            let mut t = 1u64;
            for j in lo..hi {
                let w = b
                    .quadratic_weight(xs[j])?
                    .saturating_add(b.quadratic_weight(ys[j])?);
                let w = w.saturating_mul(1 << (2 * (j - lo)));
                t = t.saturating_add(w);
                if j > lo {
                    high = high.saturating_add(w);
                }
            }
            rotations += if hi - lo > 1 && t > half { 2 } else { 1 };
        }
        Ok((rotations, high))
    };
    let (even, odd) = (chunks(CHUNK), chunks(1));
    Ok(if cost(&odd)? < cost(&even)? {
        odd
    } else {
        even
    })
}

/// A chunk's sum bits from its sum `t`, its high bits (1 ..= w - 1) and its
/// carry out: the low bit `t - sum 2^j b_j - 2^w c'` is linear, or one
/// more table where that sum would weigh more than a bit may.
fn chunk_bits(
    b: &mut CircuitBuilder,
    t: Wire,
    high: &[Wire],
    carry: Wire,
    w: usize,
) -> Result<Vec<Wire>, Error> {
    let mut terms = vec![(t, 1), (carry, -(1i64 << w))];
    terms.extend(high.iter().enumerate().map(|(j, &h)| (h, -(2i64 << j))));
    let low = if b.weight_of(&terms)? <= b.params().budgets.one {
        let v = b.linear(&terms, 0)?;
        if b.constant_value(v)?.is_some() {
            v
        } else {
            b.assume_range(v, 0, ONE, ONE)?
        }
    } else {
        tables(b, t, &[Box::new(|t| t & 1 == 1)])?[0]
    };
    let mut out = vec![low];
    out.extend_from_slice(high);
    Ok(out)
}

/// The linear sum of a chunk, whose values are the even positions
/// `0 ..= 2^(bits+1) - 2`. A bit whose range the builder does not know
/// exactly would widen it: then the chunk's bits are refreshed, which
/// gives the exact range.
fn chunk_sum(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    terms: &[(Wire, i64)],
    bits: usize,
) -> Result<Wire, Error> {
    let budget = b.params().budgets.one;
    let plain = sel.linear_within(b, terms, 0, budget)?;
    if on_even_positions(b, plain, ONE * ((1i64 << bits) - 1))? {
        return Ok(plain);
    }
    let fresh: Vec<(Wire, i64)> = terms
        .iter()
        .map(|&(w, c)| match b.constant_value(w)? {
            Some(_) => Ok((w, c)),
            None => Ok((sel.refresh(b, w)?, c)),
        })
        .collect::<Result<_, Error>>()?;
    sel.linear_within(b, &fresh, 0, budget)
}

/// The predicates `fs` of a chunk sum (counted in bits; the wire holds
/// twice it) as bits: two tables per rotation, interleaved, where the
/// sum's noise allows the margin-1/2 budget, else one per rotation. A
/// clear sum gives clear bits.
fn tables(
    b: &mut CircuitBuilder,
    w: Wire,
    fs: &[Box<dyn Fn(i64) -> bool>],
) -> Result<Vec<Wire>, Error> {
    let m = b.params().message_modulus() as i64;
    let bit = |t: bool| if t { ONE } else { 0 };
    if let Some(v) = b.constant_value(w)? {
        let t = v.rem_euclid(m) / ONE;
        return Ok(fs.iter().map(|f| b.constant(bit(f(t)))).collect());
    }
    let range = b.range(w)?;
    let pi = b.params().pi;
    let luts: Vec<Lut> = fs
        .iter()
        .map(|f| {
            let points: Vec<(i64, i64)> = (range.lo..=range.hi)
                .step_by(range.step.max(1) as usize)
                .map(|v| (v, bit(f(v.rem_euclid(m) / ONE))))
                .collect();
            Lut::from_points(pi, &points)
        })
        .collect::<Result<_, _>>()?;
    let per = if b.quadratic_weight(w)? <= b.params().budgets.half {
        2
    } else {
        1
    };
    let mut out = Vec::with_capacity(fs.len());
    for group in luts.chunks(per) {
        let refs: Vec<&Lut> = group.iter().collect();
        out.extend(b.bootstrap_many(w, &refs)?);
    }
    Ok(out)
}
