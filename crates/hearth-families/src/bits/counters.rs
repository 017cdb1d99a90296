//! Counters and column compression: many bits of equal weight become the
//! few bits of their count, so a sum of many numbers needs one carry chain
//! at the end instead of one per operand.
//!
//! A counter of `k` bits outputs the bits of their count: every bit above
//! the lowest is a threshold of the count (one bootstrap each, where the
//! parameters have a form for it); the lowest is the linear remainder
//! `sum x - 2 c_1 - 4 c_2 - ...` when its weight allows. On `pi = 3` that
//! is the full adder (3 bits to 2: one bootstrap) and the half adder (2 to
//! 2: one AND); on `pi >= 5` a 7-to-3 counter costs one bootstrap (its
//! two high bits as two tables of one rotation).
//!
//! [`CompressKind::Wallace`] reduces every column at every level;
//! [`CompressKind::Dadda`] reduces each level only to the next height of
//! Dadda's sequence (2, 3, 4, 6, 9, 13, ...), which uses fewer counters;
//! [`CompressKind::Widest`] gives every column to the widest counters at
//! every level, leaving at most two bits (a counter costs one bootstrap
//! whatever its width); on `pi >= 5` a column with 3 to 5 bits left
//! borrows one to three bits of the next column at weight 2, where that
//! removes more bits (a count `a + 2b <= 7` still fits one rotation: 3 +
//! 2 x 2 bits to 3, where a full adder turns 3 into 2). A sum of 16 `u32`
//! on `DIGITS_128` takes 167 bootstraps this way (185 without borrowing,
//! 224 by Dadda's rule); [`CompressKind::Auto`]
//! takes the fastest for the column heights. All stop at two rows, which
//! one adder finishes.

use num_bigint::BigUint;
use num_traits::{One, Zero};

use super::adders::{add, AdderKind};
use super::gates::threshold;
use super::{on_even_positions, Bits, ONE};
use crate::circuit::{CircuitBuilder, Memo, Selectors, Wire};
use crate::crypto::lut::Lut;
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// How columns are reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompressKind {
    /// Wallace: reduce every column as far as possible at each stage.
    Wallace,
    /// Dadda: reduce only as far as the next stage's height needs.
    Dadda,
    /// Widest first: at each stage every column gives all it can to the
    /// widest counters, and leaves at most two bits (a counter costs one
    /// bootstrap whatever its width, so a 7-to-3 removes four bits where
    /// a full adder removes one).
    Widest,
    /// The one of the three above with the least estimated time for these
    /// column heights on the builder's thread count (from each rule's
    /// schedule of counters and stages).
    Auto,
}

impl CompressKind {
    /// The kinds `Auto` chooses from.
    pub const CONCRETE: [CompressKind; 3] = [
        CompressKind::Dadda,
        CompressKind::Wallace,
        CompressKind::Widest,
    ];
}

/// The concrete kind with the least estimated time for columns of these
/// heights summed on `width` bits with counters of up to `widest` bits:
/// counters over the builder's threads plus stages, from the schedule
/// each rule would follow (no circuit is built), ties to the fewest
/// counters.
fn choose(b: &CircuitBuilder, heights: &[usize], width: usize, widest: usize) -> CompressKind {
    let threads = b.threads().max(1);
    CompressKind::CONCRETE
        .into_iter()
        .min_by_key(|&kind| {
            let (counters, stages) = schedule(heights, width, widest, kind);
            (counters.div_ceil(threads) + stages, counters)
        })
        .unwrap_or(CompressKind::Dadda)
}

/// The counters and stages `kind` uses on columns of `heights` (as
/// [`sum_columns`] reduces them, bits counted only).
fn schedule(heights: &[usize], width: usize, widest: usize, kind: CompressKind) -> (usize, usize) {
    let mut columns = heights.to_vec();
    let (mut counters, mut stages) = (0, 0);
    loop {
        let height = columns.iter().copied().max().unwrap_or(0);
        if height <= 2 {
            return (counters, stages);
        }
        let target = match kind {
            CompressKind::Dadda => dadda_below(height),
            _ => 2,
        };
        let mut next = vec![0usize; width];
        for j in 0..width {
            let mut col = columns[j];
            loop {
                let h = col + next[j];
                let done = match kind {
                    CompressKind::Widest => col < 3,
                    _ => h <= target || col < 2,
                };
                if done {
                    break;
                }
                if kind == CompressKind::Widest && widest >= 7 && j + 1 < width {
                    let (a, borrowed) = borrow(col, columns[j + 1]);
                    if borrowed > 0 {
                        col -= a;
                        columns[j + 1] -= borrowed;
                        counters += 1;
                        for o in 0..3 {
                            if j + o < width {
                                next[j + o] += 1;
                            }
                        }
                        continue;
                    }
                }
                let k = match kind {
                    CompressKind::Dadda => col.min(widest).min(h - target + 1),
                    _ => col.min(widest),
                };
                col -= k;
                counters += 1;
                let outs = usize::BITS as usize - k.leading_zeros() as usize;
                for o in 0..outs {
                    if j + o < width {
                        next[j + o] += 1;
                    }
                }
            }
            next[j] += col;
        }
        columns = next;
        stages += 1;
    }
}

/// The bits of the count of `group` (least significant first), or `None`
/// when this parameter set has no counter that wide.
pub fn counter(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    group: &[Wire],
) -> Result<Option<Vec<Wire>>, Error> {
    let k = group.len();
    let outs = usize::BITS as usize - k.leading_zeros() as usize;
    let mut bits = vec![b.constant(0); outs];
    let ones: Vec<(Wire, i64)> = group.iter().map(|&w| (w, 1)).collect();
    if let Some(all) = bits_by_count(b, sel, &ones)? {
        return Ok(Some(all));
    }
    for (j, bit) in bits.iter_mut().enumerate().skip(1) {
        let f = move |v: &[bool]| (v.iter().filter(|&&t| t).count() >> j) & 1 == 1;
        match threshold(b, sel, group, &f)? {
            Some(w) => *bit = w,
            None => return Ok(None),
        }
    }
    // The lowest bit: the remainder, linear where its weight allows.
    let mut terms: Vec<(Wire, i64)> = group.iter().map(|&w| (w, 1)).collect();
    for (j, &w) in bits.iter().enumerate().skip(1) {
        terms.push((w, -(1 << j)));
    }
    bits[0] = if b.weight_of(&terms)? <= b.params().budgets.one {
        let s = b.linear(&terms, 0)?;
        b.assume_range(s, 0, ONE, ONE)?
    } else {
        match threshold(b, sel, group, &|v: &[bool]| {
            v.iter().filter(|&&t| t).count() % 2 == 1
        })? {
            Some(w) => w,
            None => return Ok(None),
        }
    };
    Ok(Some(bits))
}

/// The three bits of the count of 4 to 7 bits, where the set has room
/// (`pi >= 5`): the count `sum x` takes 8 even values in the first half of
/// the ring, so bits 1 and 2 are two tables of one blind rotation, read
/// one unit apart (many-LUT, interleaved) where the count's noise is
/// within the margin-1/2 budget, else one rotation each; bit 0 is the
/// linear remainder, or a third table where that would be too noisy.
/// `None` on the gate sets: one threshold per bit.
fn bits_by_count(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    group: &[(Wire, i64)],
) -> Result<Option<Vec<Wire>>, Error> {
    let params = b.params();
    let max: i64 = group.iter().map(|&(_, c)| c).sum();
    if params.pi < 5 || !(4..=7).contains(&max) {
        return Ok(None);
    }
    // Clear bits join the count as a constant; a bit whose range the
    // builder does not know exactly is refreshed (the count's range must
    // stay on the 8 even values).
    let (mut terms, mut offset) = (Vec::with_capacity(group.len()), 0);
    for &(w, c) in group {
        if let Some(v) = b.constant_value(w)? {
            offset += c * v;
        } else if on_even_positions(b, w, ONE)? {
            terms.push((w, c));
        } else {
            terms.push((sel.refresh(b, w)?, c));
        }
    }
    let table = |j: usize| -> Result<Lut, Error> {
        let points: Vec<(i64, i64)> = (0..=max)
            .map(|c| (ONE * c, if (c >> j) & 1 == 1 { ONE } else { 0 }))
            .collect();
        Ok(Lut::from_points(params.pi, &points)?)
    };
    let (t1, t2) = (table(1)?, table(2)?);
    // Bits that share fresh values (a sum's linear low bit beside the
    // bits it was read from) can give the count a range wider than its
    // values: independent copies make it exact again.
    let probe = b.linear(&terms, offset)?;
    if !on_even_positions(b, probe, ONE * max)? {
        for t in terms.iter_mut() {
            t.0 = sel.refresh(b, t.0)?;
        }
    }
    let (s, high) = if b.weight_of(&terms)? <= params.budgets.half {
        let s = b.linear(&terms, offset)?;
        let high = b.bootstrap_many(s, &[&t1, &t2])?;
        (s, high)
    } else {
        let s = sel.linear_within(b, &terms, offset, params.budgets.one)?;
        let high = vec![b.bootstrap(s, &t1)?, b.bootstrap(s, &t2)?];
        (s, high)
    };
    let rest = [(s, 1), (high[0], -2), (high[1], -4)];
    let low = if b.weight_of(&rest)? <= params.budgets.one {
        let v = b.linear(&rest, 0)?;
        b.assume_range(v, 0, ONE, ONE)?
    } else {
        b.bootstrap(s, &table(0)?)?
    };
    Ok(Some(vec![low, high[0], high[1]]))
}

/// The widest counter (up to 7 bits) these parameters support.
pub fn widest_counter(b: &mut CircuitBuilder) -> Result<usize, Error> {
    let params = b.params();
    WIDEST.with(|memo| {
        memo.try_get_or(params.id, || {
            let mut sel = Selectors::for_bits();
            for k in (3..=7).rev() {
                let mut scratch = CircuitBuilder::new(params);
                let group: Vec<Wire> = (0..k)
                    .map(|_| scratch.input_with_step(0, ONE, ONE))
                    .collect::<Result<_, _>>()?;
                if counter(&mut scratch, &mut sel, &group)?.is_some() {
                    return Ok(k);
                }
            }
            Ok(3)
        })
    })
}

thread_local! {
    /// [`widest_counter`] per parameter set.
    static WIDEST: Memo<ParamsId, usize> = Memo::new();
}

/// `sum_j 2^j (sum of column j)` modulo `2^width`, as `width` bits.
pub fn sum_columns(
    b: &mut CircuitBuilder,
    mut columns: Vec<Vec<Wire>>,
    width: usize,
    kind: CompressKind,
) -> Result<Bits, Error> {
    columns.resize(width, Vec::new());
    columns.truncate(width);
    fold_constants(b, &mut columns)?;
    let widest = widest_counter(b)?;
    let heights: Vec<usize> = columns.iter().map(Vec::len).collect();
    let kind = match kind {
        CompressKind::Auto => choose(b, &heights, width, widest),
        k => k,
    };
    let mut sel = Selectors::for_bits();
    loop {
        let height = columns.iter().map(Vec::len).max().unwrap_or(0);
        if height <= 2 {
            break;
        }
        let target = match kind {
            CompressKind::Dadda => dadda_below(height),
            _ => 2,
        };
        // Low to high: bits a column receives from lower columns at this
        // level count towards its height at the next one.
        let mut next: Vec<Vec<Wire>> = vec![Vec::new(); width];
        for j in 0..width {
            let mut col = arrange(b, std::mem::take(&mut columns[j]))?;
            loop {
                let h = col.len() + next[j].len();
                let done = match kind {
                    CompressKind::Widest => col.len() < 3,
                    _ => h <= target || col.len() < 2,
                };
                if done {
                    break;
                }
                if kind == CompressKind::Widest && widest >= 7 && j + 1 < width {
                    if let Some(outs) =
                        borrowing_counter(b, &mut sel, &mut col, &mut columns[j + 1])?
                    {
                        for (o, w) in outs.into_iter().enumerate() {
                            if j + o < width {
                                next[j + o].push(w);
                            }
                        }
                        continue;
                    }
                }
                // A k-counter leaves one of its k bits here.
                let mut k = match kind {
                    CompressKind::Dadda => col.len().min(widest).min(h - target + 1),
                    _ => col.len().min(widest),
                };
                // A wire twice in a group makes its count a function the
                // search for wide counters does not cover (uniform
                // coefficients only beyond three inputs): such groups
                // take three bits at most, where every form is searched.
                if (1..k).any(|i| col[..i].contains(&col[i])) {
                    k = k.min(3);
                }
                let group: Vec<Wire> = col.drain(..k).collect();
                let outs =
                    counter(b, &mut sel, &group)?.ok_or_else(|| Error::UnsupportedParams {
                        params: b.params().id,
                        family: "two's-complement bits",
                        reason: format!("it has no counter of {k} bits"),
                    })?;
                for (o, w) in outs.into_iter().enumerate() {
                    if j + o < width {
                        next[j + o].push(w);
                    }
                }
            }
            next[j].extend(col);
        }
        fold_constants(b, &mut next)?;
        columns = next;
    }
    let zero = b.constant(0);
    let rows: [Vec<Wire>; 2] = std::array::from_fn(|r| {
        columns
            .iter()
            .map(|c| c.get(r).copied().unwrap_or(zero))
            .collect()
    });
    let [r0, r1] = rows;
    let (sum, _) = add(
        b,
        &Bits::from_vec(r0),
        &Bits::from_vec(r1),
        zero,
        AdderKind::Auto,
    )?;
    Ok(sum)
}

/// Bits `(a, b)` a counter of `pi >= 5` takes from a column with `c`
/// bits left and from the next one with `d`, at weights 1 and 2 (the
/// count `a + 2b <= 7` keeps the 7-to-3 counter's one rotation): `b > 0`
/// only where that removes more bits than a counter of the column alone,
/// as at the low heights a sum ends with (3 + 2 x 2: five bits to three,
/// where a full adder turns three into two).
fn borrow(c: usize, d: usize) -> (usize, usize) {
    let outs = |m: usize| (usize::BITS - m.leading_zeros()) as isize;
    let removed = |(a, b): (usize, usize)| (a + b) as isize - outs(a + 2 * b);
    let mut best = (c.min(7), 0);
    for b in 1..=d.min(3) {
        for a in 1..=c.min(7) {
            if a + 2 * b <= 7 && removed((a, b)) > removed(best) {
                best = (a, b);
            }
        }
    }
    best
}

/// The counter [`borrow`] chooses where it borrows from the next column:
/// its outputs (weights 1, 2, 4), the bits taken out of `col` and `next`
/// (the lightest of `next`); `None`, nothing taken, where it does not
/// borrow or the count does not fit one rotation.
fn borrowing_counter(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    col: &mut Vec<Wire>,
    next: &mut Vec<Wire>,
) -> Result<Option<Vec<Wire>>, Error> {
    let (take, borrowed) = borrow(col.len(), next.len());
    if borrowed == 0 {
        return Ok(None);
    }
    // The lightest bits of `next`, by position (a column may hold a wire
    // twice: only the borrowed copy leaves it).
    let mut light: Vec<(u64, usize)> = next
        .iter()
        .enumerate()
        .map(|(i, &w)| Ok((b.quadratic_weight(w)?, i)))
        .collect::<Result<_, Error>>()?;
    light.sort_unstable();
    let mut taken: Vec<usize> = light[..borrowed].iter().map(|&(_, i)| i).collect();
    let high: Vec<Wire> = taken.iter().map(|&i| next[i]).collect();
    let group: Vec<(Wire, i64)> = col[..take]
        .iter()
        .map(|&w| (w, 1))
        .chain(high.iter().map(|&w| (w, 2)))
        .collect();
    if (1..group.len()).any(|i| group[..i].iter().any(|g| g.0 == group[i].0)) {
        return Ok(None);
    }
    let Some(outs) = bits_by_count(b, sel, &group)? else {
        return Ok(None);
    };
    col.drain(..take);
    taken.sort_unstable();
    for &i in taken.iter().rev() {
        next.remove(i);
    }
    Ok(Some(outs))
}

/// Orders a column so that groups taken from the front pair its heaviest
/// bits (unrefreshed sums) with its lightest (fresh ones): a majority of
/// one sum and two fresh bits fits the budget where three sums would need
/// a refresh.
fn arrange(b: &CircuitBuilder, col: Vec<Wire>) -> Result<Vec<Wire>, Error> {
    let mut by_weight: Vec<(u64, Wire)> = col
        .into_iter()
        .map(|w| Ok((b.quadratic_weight(w)?, w)))
        .collect::<Result<_, Error>>()?;
    by_weight.sort_by_key(|&(q, _)| std::cmp::Reverse(q));
    let mut out = Vec::with_capacity(by_weight.len());
    let (mut lo, mut hi) = (0, by_weight.len());
    while lo < hi {
        out.push(by_weight[lo].1);
        lo += 1;
        for _ in 0..2 {
            if lo < hi {
                hi -= 1;
                out.push(by_weight[hi].1);
            }
        }
    }
    Ok(out)
}

/// The largest height of Dadda's sequence below `h`.
fn dadda_below(h: usize) -> usize {
    let mut d = 2;
    while (d * 3) / 2 < h {
        d = (d * 3) / 2;
    }
    d
}

/// Replaces the clear bits of all columns by the bits of their total (at
/// most one per column, modulo the width), so constants never count
/// towards height.
fn fold_constants(b: &mut CircuitBuilder, columns: &mut [Vec<Wire>]) -> Result<(), Error> {
    let mut total = BigUint::zero();
    let mut any = false;
    for (j, col) in columns.iter_mut().enumerate() {
        let mut kept = Vec::with_capacity(col.len());
        for &w in col.iter() {
            match b.constant_value(w)? {
                Some(v) => {
                    any = true;
                    if v.rem_euclid(2 * ONE) == ONE {
                        total += BigUint::one() << j;
                    }
                }
                None => kept.push(w),
            }
        }
        *col = kept;
    }
    if any {
        for (j, col) in columns.iter_mut().enumerate() {
            if total.bit(j as u64) {
                col.push(b.constant(ONE));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, ClearBackend};
    use crate::crypto::params::INSECURE_TEST_DIGITS;

    /// A column holding one wire twice: its count `2a + b + ... + f` is no
    /// symmetric function, which the 7-bit counters of `pi = 5` do not
    /// cover (it panicked). Every input against the plain sum.
    #[test]
    fn a_column_with_a_repeated_wire_sums_exactly() {
        let mut b = CircuitBuilder::new(&INSECURE_TEST_DIGITS);
        let xs: Vec<Wire> = (0..6)
            .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
            .collect();
        let mut column = vec![xs[0]];
        column.extend(&xs);
        let sum = sum_columns(&mut b, vec![column], 3, CompressKind::Wallace).unwrap();
        sum.output(&mut b).unwrap();
        let circuit = b.build();
        for v in 0..64u64 {
            let ins: Vec<u64> = (0..6).map(|i| ONE as u64 * ((v >> i) & 1)).collect();
            let out = ClearBackend.evaluate(&circuit, &ins).unwrap();
            let got: u64 = out.iter().enumerate().map(|(j, &d)| (d / 2) << j).sum();
            let want = (2 * (v & 1) + (v >> 1).count_ones() as u64) % 8;
            assert_eq!(got, want, "inputs {v:06b}");
        }
    }

    /// Every rule sums columns of every height exactly, on `pi = 5` and
    /// `pi = 3`: random bits in columns of random heights (up to 20) over
    /// 6 bits, against the plain weighted sum modulo 64.
    #[test]
    fn every_rule_sums_columns_exactly() {
        use crate::crypto::params::INSECURE_TEST_BITS;
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for params in [&INSECURE_TEST_DIGITS, &INSECURE_TEST_BITS] {
            for case in 0..12 {
                let heights: Vec<usize> = (0..6).map(|_| rng.gen_range(0..=20)).collect();
                for kind in CompressKind::CONCRETE
                    .into_iter()
                    .chain([CompressKind::Auto])
                {
                    let mut b = CircuitBuilder::new(params);
                    b.set_threads(1 + case % 4 * 5);
                    let columns: Vec<Vec<Wire>> = heights
                        .iter()
                        .map(|&h| {
                            (0..h)
                                .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
                                .collect()
                        })
                        .collect();
                    let sum = sum_columns(&mut b, columns, 6, kind).unwrap();
                    sum.output(&mut b).unwrap();
                    let circuit = b.build();
                    for _ in 0..8 {
                        let bits: Vec<u64> = (0..heights.iter().sum::<usize>())
                            .map(|_| rng.gen_range(0..2))
                            .collect();
                        let mut want = 0u64;
                        let mut k = 0;
                        for (j, &h) in heights.iter().enumerate() {
                            for _ in 0..h {
                                want += bits[k] << j;
                                k += 1;
                            }
                        }
                        let ins: Vec<u64> = bits.iter().map(|&x| ONE as u64 * x).collect();
                        let out = ClearBackend.evaluate(&circuit, &ins).unwrap();
                        let got: u64 = out.iter().enumerate().map(|(j, &d)| (d / 2) << j).sum();
                        assert_eq!(got, want % 64, "{kind:?} on {heights:?}");
                    }
                }
            }
        }
    }
}
