//! Multiplication and squaring.
//!
//! A product of two digits is one bootstrap on the selector `3x + y`
//! (PARMESAN Algorithm 4). Three ways to sum the digit products:
//! * [`MulAlgorithm::Schoolbook`]: all `n * m` products in one level, then
//!   the `m` shifted rows summed as a balanced tree of parallel additions;
//! * [`MulAlgorithm::Karatsuba`]: PARMESAN Algorithm 3 (three half-size
//!   products, recursively), combined by column compression;
//! * [`MulAlgorithm::Counters`]: all products go straight into column
//!   compression ([`super::compress`]): groups of up to 7 digits of a
//!   column are replaced by the digits of their sum, one bootstrap per
//!   output digit, so no addition chain is ever built.
//!
//! [`MulAlgorithm::Auto`] builds each candidate on a scratch builder and
//! keeps the one with the fewest bootstraps (then the lowest depth).
//!
//! Squaring uses `x^2 = sum_i x_i^2 4^i + sum_{i<j} x_i x_j 2^(i+j+1)`
//! (half the products) or PARMESAN's divide and conquer (Algorithm 5) with
//! direct tables for 2- and 3-digit squares; `Auto` picks the cheaper.
//!
//! Length rule: a product of `n` and `m` digits has at most `n + m + 1`
//! digits (its value always fits `n + m`; the final parallel addition may
//! leave one more digit), a square of `n` digits at most `2n + 1`.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::One;

use super::add::{gather_constants, sum_shifted, two_rows};
use super::{add, compress, Digits};
use crate::bits::{self, Bits};
use crate::circuit::Selectors;
use crate::circuit::{CircuitBuilder, Memo, Wire};
use crate::crypto::lut::Lut;
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// How to sum digit products.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulAlgorithm {
    /// Every digit product in one level, then the shifted rows summed by a
    /// balanced tree of parallel additions.
    Schoolbook,
    /// Karatsuba's three half-size products, recursively.
    Karatsuba,
    /// Every digit product straight into column compression.
    Counters,
    /// The candidate with the fewest bootstraps, built on scratch builders.
    Auto,
}

/// Karatsuba recurses while both halves have at least this many digits.
const KARATSUBA_MIN: usize = 4;

/// The product `x * y` of two digits (one bootstrap).
pub fn digit_product(b: &mut CircuitBuilder, x: Wire, y: Wire) -> Result<Wire, Error> {
    let lut = Lut::from_fn(b.params().pi, -4, 4, |s| match s {
        4 | -4 => 1,
        2 | -2 => -1,
        _ => 0,
    })?;
    let s = Selectors::new().linear(b, &[(x, 3), (y, 1)], 0)?;
    Ok(b.bootstrap(s, &lut)?)
}

/// All digit products `x_i y_j`, by column `i + j`.
pub(crate) fn product_columns(
    b: &mut CircuitBuilder,
    x: &Digits,
    y: &Digits,
) -> Result<Vec<Vec<Wire>>, Error> {
    let mut cols = vec![Vec::new(); x.len() + y.len()];
    for (i, &xi) in x.wires().iter().enumerate() {
        for (j, &yj) in y.wires().iter().enumerate() {
            cols[i + j].push(digit_product(b, xi, yj)?);
        }
    }
    Ok(cols)
}

/// `x * y`.
pub fn mul(
    b: &mut CircuitBuilder,
    x: &Digits,
    y: &Digits,
    algo: MulAlgorithm,
) -> Result<Digits, Error> {
    if x.is_empty() || y.is_empty() {
        return Ok(Digits::default());
    }
    match algo {
        MulAlgorithm::Counters => {
            let cols = product_columns(b, x, y)?;
            compress(b, cols)
        }
        MulAlgorithm::Schoolbook => {
            let mut rows = Vec::with_capacity(y.len());
            for (j, &yj) in y.wires().iter().enumerate() {
                let row = x
                    .wires()
                    .iter()
                    .map(|&xi| digit_product(b, xi, yj))
                    .collect::<Result<Vec<_>, _>>()?;
                rows.push(Digits::from_vec(row).shl(b, j));
            }
            add_tree(b, rows)
        }
        MulAlgorithm::Karatsuba => karatsuba(b, x, y),
        MulAlgorithm::Auto => {
            let forms = (
                super::convert::twos_form(b, x)?,
                super::convert::twos_form(b, y)?,
            );
            if let (Some(tx), Some(ty)) = forms {
                let (n, m) = (tx.0.len() + 1, ty.0.len() + 1);
                if twos_pays(b.params().id, b.threads(), Op::Mul, n, m)? {
                    return mul_twos(b, tx, ty);
                }
            }
            let best = choose(b.params().id, Op::Mul, x.len(), y.len())?;
            mul(b, x, y, best)
        }
    }
}

/// `x * y` wrapped to `n` bits ([`super::convert::wrap`]), as
/// `n`-bit two's complement does it: modulo `2^n` only the low `n` bits of
/// each operand matter, read as *unsigned* bits (the top bit's weight
/// `-2^(n-1)` is `2^(n-1)` modulo `2^n` for every column it reaches). The
/// bits are cut into 2-bit blocks; each block product `A B` (in [0, 9])
/// below column `n` costs two blind rotations on `A + 4 B`, its low part
/// `A B mod 4` and high part `A B div 4` (about `n^2 / 4` bootstraps, as
/// many as bit products two per rotation, but already half summed);
/// the bit compressor sums them modulo `2^n`. Operands that already are
/// bits (outputs of `wrap`) convert for free. A clear operand may go the
/// words' way instead, where the schedule model predicts it faster.
pub fn mul_wrapping(
    b: &mut CircuitBuilder,
    x: &Digits,
    y: &Digits,
    n: usize,
) -> Result<Digits, Error> {
    let xb = super::convert::low_bits(b, x, n)?;
    let yb = super::convert::low_bits(b, y, n)?;
    for (bits, clear) in [(&xb, &yb), (&yb, &xb)] {
        if let Some(k) = clear_value(b, clear)? {
            if clear_operand_pays_as_words(b, n, &k)? {
                return scalar_as_words(b, bits, &k);
            }
        }
    }
    bits_product(b, &xb, &yb)
}

/// [`mul_wrapping`] of two operands' low bits, `n = len(xb) = len(yb)`,
/// by block products.
fn bits_product(b: &mut CircuitBuilder, xb: &[Wire], yb: &[Wire]) -> Result<Digits, Error> {
    let n = xb.len();
    let mut sel = Selectors::new();
    let mut cols: Vec<Vec<Wire>> = vec![Vec::new(); n];
    if b.budget() >= BLOCK_WEIGHT {
        for (i, xs) in xb.chunks(2).enumerate() {
            for (j, ys) in yb[..n - 2 * i].chunks(2).enumerate() {
                block_product(b, &mut sel, &mut cols, xs, ys, 2 * (i + j))?;
            }
        }
    } else {
        // Sets with less room (the multi-bit set's 51): bit rows, as many
        // products per rotation.
        for (i, &xi) in xb.iter().enumerate() {
            and_row(b, &mut sel, &mut cols, xi, &yb[..n - i], i, false)?;
        }
    }
    sum_bits(b, cols, &mut sel)
}

/// The value of `bits` (unsigned) when every one is a clear constant.
fn clear_value(b: &CircuitBuilder, bits: &[Wire]) -> Result<Option<BigInt>, Error> {
    let clear = bits
        .iter()
        .map(|&w| b.constant_value(w))
        .collect::<Result<Option<Vec<i64>>, _>>()?;
    Ok(clear.map(|v| super::value_of(&v)))
}

/// `k * X` modulo `2^n` for `X`'s `n` low bits `xb` (in {0, 1}) the words'
/// way: the bits doubled (a word's bit is stored as 0 or 2, free), the
/// words' product by a clear operand ([`crate::bits::mul::mul_const`]:
/// rows of `k`'s non-adjacent form, lazy XORs, a carry network), then one
/// bootstrap per bit back to digits.
fn scalar_as_words(b: &mut CircuitBuilder, xb: &[Wire], k: &BigInt) -> Result<Digits, Error> {
    let doubled = xb
        .iter()
        .map(|&w| b.mul_const(w, bits::ONE))
        .collect::<Result<Vec<_>, _>>()?;
    let x = Bits::from_wires(b, doubled)?;
    let p = bits::mul::mul_const(b, &x, k, xb.len(), false)?;
    bits::convert::to_digits(b, &p, true)
}

/// Parameters, threads, width and clear operand of a
/// [`clear_operand_pays_as_words`] answer.
type WordsKey = (ParamsId, usize, usize, BigInt);

thread_local! {
    static WORDS: Memo<WordsKey, bool> = Memo::new();
}

/// Whether [`scalar_as_words`] takes less estimated time on the planned
/// threads ([`crate::circuit::Circuit::time_on`]), then fewer bootstraps,
/// than block products for a product by `k` wrapped to `n` bits: the words
/// need fewer bootstraps (x805 on 32 bits: 96 against 124) but a deeper
/// carry network (17 levels against 8). Built on the count backend from
/// `n` fresh bits and remembered; never on sets the words do not run on.
fn clear_operand_pays_as_words(b: &CircuitBuilder, n: usize, k: &BigInt) -> Result<bool, Error> {
    let params = b.params();
    if n == 0 || bits::check_params(params).is_err() {
        return Ok(false);
    }
    let k = k.mod_floor(&(BigInt::one() << n));
    let threads = b.threads();
    let key = (params.id, threads, n, k.clone());
    WORDS.with(|memo| {
        memo.try_get_or(key, || {
            let cost = |words: bool| -> Result<(u64, usize), Error> {
                let mut t = CircuitBuilder::new(params);
                t.set_threads(threads);
                let xb = (0..n)
                    .map(|_| t.input(0, 1))
                    .collect::<Result<Vec<_>, _>>()?;
                let p = if words {
                    scalar_as_words(&mut t, &xb, &k)?
                } else {
                    let kb: Vec<Wire> =
                        (0..n).map(|i| t.constant(k.bit(i as u64) as i64)).collect();
                    bits_product(&mut t, &xb, &kb)?
                };
                p.output(&mut t)?;
                let c = t.build();
                Ok((c.time_on(threads), c.stats().pbs))
            };
            Ok::<_, Error>(cost(true)? < cost(false)?)
        })
    })
}

/// `x * x` wrapped to `n` bits. With `x`'s low bits `x_i`, `x^2 = sum_i
/// x_i 4^i + sum_(i<j) x_i x_j 2^(i+j+1)` modulo `2^n` (`x_i^2 = x_i`):
/// each `x_i` goes to column `2i` for free, and each product `x_i x_j`
/// below column `n` once, two per rotation (`and_row`), summed as
/// [`mul_wrapping`]'s. At 32 bits: 277 bootstraps after the operand's
/// bits against the product's 490. (Bit products beat `block_product`'s
/// 2-bit blocks here, 277 against 295; for a product the blocks win,
/// 490 against 504.)
pub fn square_wrapping(b: &mut CircuitBuilder, x: &Digits, n: usize) -> Result<Digits, Error> {
    let xb = super::convert::low_bits(b, x, n)?;
    let mut sel = Selectors::new();
    let mut cols: Vec<Vec<Wire>> = vec![Vec::new(); n];
    for (i, &xi) in xb.iter().enumerate() {
        if 2 * i < n {
            cols[2 * i].push(xi);
        }
        if 2 * i + 2 < n {
            and_row(b, &mut sel, &mut cols, xi, &xb[i + 1..], 2 * i + 2, false)?;
        }
    }
    sum_bits(b, cols, &mut sel)
}

/// The quadratic weight of [`block_product`]'s selector `A + 4 B` on
/// fresh bits: `1 + 4 + 16 + 64`.
const BLOCK_WEIGHT: u64 = 85;

/// Pushes the product of the blocks `A = sum_k 2^k xs_k` and
/// `B = sum_k 2^k ys_k` (one or two bits each) into column `c` and up:
/// `A B mod 4` at `c` and `A B div 4` at `c + 2` (two rotations on
/// `A + 4 B`); a product of at most 3 goes whole to `c` in one. A clear
/// block costs none. Columns from `cols.len()` on are dropped.
fn block_product(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    cols: &mut [Vec<Wire>],
    xs: &[Wire],
    ys: &[Wire],
    c: usize,
) -> Result<(), Error> {
    let value = |b: &CircuitBuilder, bits: &[Wire]| -> Result<Option<i64>, Error> {
        let mut v = 0;
        for (k, &w) in bits.iter().enumerate() {
            match b.constant_value(w)? {
                Some(x) => v += x << k,
                None => return Ok(None),
            }
        }
        Ok(Some(v))
    };
    // A clear block times the other: the other's bits, once per bit of
    // the clear block, each one column further up (bits compress better
    // than their multiples).
    for (clear, other) in [(xs, ys), (ys, xs)] {
        if let Some(a) = value(b, clear)? {
            for (k, &w) in other.iter().enumerate() {
                for t in 0..2 {
                    if (a >> t) & 1 == 1 && c + k + t < cols.len() {
                        cols[c + k + t].push(w);
                    }
                }
            }
            return Ok(());
        }
    }
    let pi = b.params().pi;
    let terms: Vec<(Wire, i64)> = xs
        .iter()
        .zip([1, 2])
        .chain(ys.iter().zip([4, 8]))
        .map(|(&w, k)| (w, k))
        .collect();
    let s = sel.linear(b, &terms, 0)?;
    let product = |k: i64| (k & 3) * (k >> 2);
    let low = Lut::from_fn(pi, 0, 15, move |k| product(k) & 3)?;
    cols[c].push(b.bootstrap(s, &low)?);
    if xs.len() == 2 && ys.len() == 2 && c + 2 < cols.len() {
        let high = Lut::from_fn(pi, 0, 15, move |k| product(k) >> 2)?;
        cols[c + 2].push(b.bootstrap(s, &high)?);
    }
    Ok(())
}

/// `x * y` exactly for operands in two's-complement form
/// ([`super::convert::twos_form`]: bits below a sign bit), by
/// Baugh-Wooley: with `x = X - s_x 2^(n-1)` and `y = Y - s_y 2^(m-1)`,
/// `x y = X Y + sum_j !(s_x y_j) 2^(n-1+j) + sum_i !(s_y x_i) 2^(m-1+i) +
/// s_x s_y 2^(n+m-2) + 2^(n+m-1) + 2^(n-1) + 2^(m-1)` modulo `2^(n+m)`:
/// only bits, two per blind rotation, summed as [`mul_wrapping`] sums
/// them; the result's `n + m` bits hold the product exactly.
pub(crate) fn mul_twos(
    b: &mut CircuitBuilder,
    (xl, sx): (Vec<Wire>, Wire),
    (yl, sy): (Vec<Wire>, Wire),
) -> Result<Digits, Error> {
    let (n, m) = (xl.len() + 1, yl.len() + 1);
    let w = n + m;
    let mut sel = Selectors::new();
    let mut cols: Vec<Vec<Wire>> = vec![Vec::new(); w];
    for (i, &xi) in xl.iter().enumerate() {
        and_row(b, &mut sel, &mut cols, xi, &yl, i, false)?;
    }
    and_row(b, &mut sel, &mut cols, sx, &yl, n - 1, true)?;
    and_row(b, &mut sel, &mut cols, sy, &xl, m - 1, true)?;
    and_row(b, &mut sel, &mut cols, sx, &[sy], w - 2, false)?;
    for c in [w - 1, n - 1, m - 1] {
        cols[c].push(b.constant(1));
    }
    sum_bits(b, cols, &mut sel)
}

/// Pushes `a r_j` (or `!(a r_j)` when `nand`) into column `base + j` for
/// each bit `r_j` of `row`, columns from `cols.len()` on dropped: two
/// products per blind rotation (`a + 2 r_j + 4 r_(j+1)`); a clear `a`
/// costs none.
fn and_row(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    cols: &mut [Vec<Wire>],
    a: Wire,
    row: &[Wire],
    base: usize,
    nand: bool,
) -> Result<(), Error> {
    let row = &row[..row.len().min(cols.len().saturating_sub(base))];
    match b.constant_value(a)? {
        Some(0) => {
            if nand {
                for j in 0..row.len() {
                    cols[base + j].push(b.constant(1));
                }
            }
            return Ok(());
        }
        Some(_) => {
            for (j, &r) in row.iter().enumerate() {
                let p = if nand { b.linear(&[(r, -1)], 1)? } else { r };
                cols[base + j].push(p);
            }
            return Ok(());
        }
        None => {}
    }
    let pi = b.params().pi;
    let bit = |k: i64| (k & 1) * ((k >> 1) & 1);
    let bit_hi = |k: i64| (k & 1) * (k >> 2);
    let luts: [Lut; 2] = if nand {
        [
            Lut::from_fn(pi, 0, 7, move |k| 1 - bit(k))?,
            Lut::from_fn(pi, 0, 7, move |k| 1 - bit_hi(k))?,
        ]
    } else {
        [
            Lut::from_fn(pi, 0, 7, bit)?,
            Lut::from_fn(pi, 0, 7, bit_hi)?,
        ]
    };
    for (k, pair) in row.chunks(2).enumerate() {
        let j = base + 2 * k;
        let terms: Vec<(Wire, i64)> = std::iter::once((a, 1))
            .chain(pair.iter().zip([2, 4]).map(|(&w, c)| (w, c)))
            .collect();
        let s = sel.linear(b, &terms, 0)?;
        let refs: Vec<&Lut> = luts.iter().take(pair.len()).collect();
        for (t, p) in b.bootstrap_many(s, &refs)?.into_iter().enumerate() {
            cols[j + t].push(p);
        }
    }
    Ok(())
}

/// The digits of `sum_c 2^c (sum of column c)` modulo `2^len(cols)`, as a
/// two's-complement value of that width, for columns of non-negative
/// wires: [`compress_bits`], then one conversion.
fn sum_bits(
    b: &mut CircuitBuilder,
    mut cols: Vec<Vec<Wire>>,
    sel: &mut Selectors,
) -> Result<Digits, Error> {
    let n = cols.len();
    // Compressing P + 2^n - 1 leaves two rows with A + B = P - 1 (mod 2^n),
    // so the digits a_c + b_c - 1 (free; two bits each, which the
    // conversion's selectors account for) sum to P - 1 - (2^n - 1) + 2^n.
    for col in &mut cols {
        col.push(b.constant(1));
    }
    let [r0, r1] = compress_bits(b, cols, sel)?;
    let f = r0
        .iter()
        .zip(&r1)
        .map(|(&a, &c)| b.linear(&[(a, 1), (c, 1)], -1))
        .collect::<Result<Vec<_>, _>>()?;
    let bits = super::convert::low_bits(b, &Digits::from_vec(f), n)?;
    super::convert::from_bits(b, &bits)
}

/// Two rows of bits whose sum is `sum_j 2^j (sum of column j)` modulo
/// `2^len(columns)`, for columns of wires in [0, 7]. Each level packs a
/// column's wires into groups whose ranges add up to at most 15. A group
/// of sum at most 7 (8 values) becomes its parity (kept) and its half
/// (carried one column up): two tables of one blind rotation. A larger one
/// costs two rotations: the same, or `S mod 4` (kept) and `S div 4` (two
/// columns up), both at most 3 where a half would reach 7
/// ([`best_split`] picks from which sum on). Levels repeat
/// until every column holds at most two bits. The top column keeps only
/// parities.
pub(crate) fn compress_bits(
    b: &mut CircuitBuilder,
    cols: Vec<Vec<Wire>>,
    sel: &mut Selectors,
) -> Result<[Vec<Wire>; 2], Error> {
    let split_from = best_split(b, &cols)?;
    compress_split(b, cols, sel, split_from)
}

/// The smallest group sum [`compress_bits`] splits as `S mod 4` and
/// `S div 4` (16: never) that costs least for these columns: each
/// candidate is built on a scratch builder from inputs of the same ranges
/// and ranked by levels on the planned threads, then bootstraps, then
/// depth. Which one wins depends on the columns' shape (8 for wrapping
/// products, 10 for most exact ones).
fn best_split(b: &CircuitBuilder, cols: &[Vec<Wire>]) -> Result<i64, Error> {
    let mut best = None;
    for split_from in [8, 10, 16] {
        let mut t = CircuitBuilder::new(b.params());
        t.set_threads(b.threads());
        let mut copy = Vec::with_capacity(cols.len());
        for col in cols {
            let mut c = Vec::with_capacity(col.len());
            for &w in col {
                c.push(match b.constant_value(w)? {
                    Some(v) => t.constant(v),
                    None => {
                        let r = b.range(w)?;
                        t.input_with_step(r.lo, r.hi, r.step)?
                    }
                });
            }
            copy.push(c);
        }
        for row in compress_split(&mut t, copy, &mut Selectors::new(), split_from)? {
            for w in row {
                t.output(w)?;
            }
        }
        let c = t.build();
        let st = c.stats();
        let cost = (c.time_on(b.threads()), st.pbs, st.depth);
        if best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((cost, split_from));
        }
    }
    Ok(best.map_or(16, |(_, s)| s))
}

/// [`compress_bits`] splitting groups of sum `split_from` and more as
/// `S mod 4` / `S div 4`.
fn compress_split(
    b: &mut CircuitBuilder,
    mut cols: Vec<Vec<Wire>>,
    sel: &mut Selectors,
    split_from: i64,
) -> Result<[Vec<Wire>; 2], Error> {
    let n = cols.len();
    let pi = b.params().pi;
    let m = b.params().message_modulus();
    let parity = Lut::from_fn(pi, 0, 15, |s| s & 1)?;
    let half = Lut::from_fn(pi, 0, 15, |s| s >> 1)?;
    let low = Lut::from_fn(pi, 0, 15, |s| s & 3)?;
    let quarter = Lut::from_fn(pi, 0, 15, |s| s >> 2)?;
    // Every wire here is a bit or a half made below: in [0, 7].
    let hi = |b: &CircuitBuilder, w: Wire| -> Result<i64, Error> {
        let r = b.range(w)?;
        debug_assert!(r.is_within(0, 7, m));
        Ok(r.hi.clamp(0, 7))
    };
    // A column is done when it holds at most two bits.
    let settled = |b: &CircuitBuilder, col: &[Wire]| -> Result<bool, Error> {
        let mut total = 0;
        for &w in col {
            let h = hi(b, w)?;
            if h > 1 {
                return Ok(false);
            }
            total += h;
        }
        Ok(col.len() <= 2 && total <= 2)
    };
    loop {
        // Clear constants (all non-negative here) become the bits of their
        // total; bits from position n on are multiples of 2^n.
        gather_constants(b, &mut cols)?;
        cols.resize(n, Vec::new());
        let mut done = true;
        for col in &cols {
            done &= settled(b, col)?;
        }
        if done {
            break;
        }
        let mut next: Vec<Vec<Wire>> = vec![Vec::new(); n + 2];
        // Whether a column below sends a carry into column j this level.
        let mut carry_in = vec![false; n + 2];
        for j in 0..n {
            let top = j + 1 == n;
            // A settled column of two bits that receives a carry is added
            // too (a half adder), so a carry never ripples one column per
            // level.
            if settled(b, &cols[j])? && !(carry_in[j] && cols[j].len() == 2) {
                next[j].extend_from_slice(&cols[j]);
                continue;
            }
            let mut items: Vec<(i64, Wire)> = cols[j]
                .iter()
                .map(|&w| Ok((hi(b, w)?, w)))
                .collect::<Result<_, Error>>()?;
            // First-fit decreasing into groups of range sum <= 15.
            items.sort_by_key(|&(h, _)| std::cmp::Reverse(h));
            let mut groups: Vec<(i64, Vec<Wire>)> = Vec::new();
            for (h, w) in items {
                match groups.iter_mut().find(|g| g.0 + h <= 15) {
                    Some(g) => {
                        g.0 += h;
                        g.1.push(w);
                    }
                    None => groups.push((h, vec![w])),
                }
            }
            for (h, group) in groups {
                if group.len() == 1 && h <= 1 {
                    next[j].push(group[0]);
                    continue;
                }
                let terms: Vec<(Wire, i64)> = group.iter().map(|&w| (w, 1)).collect();
                let s = sel.linear(b, &terms, 0)?;
                if top {
                    next[j].push(b.bootstrap(s, &parity)?);
                } else if h < split_from {
                    let (lo, up) = if h <= 7 {
                        let outs = b.bootstrap_many(s, &[&parity, &half])?;
                        (outs[0], outs[1])
                    } else {
                        (b.bootstrap(s, &parity)?, b.bootstrap(s, &half)?)
                    };
                    next[j].push(lo);
                    next[j + 1].push(up);
                    carry_in[j + 1] = true;
                } else {
                    next[j].push(b.bootstrap(s, &low)?);
                    if j + 2 < n {
                        next[j + 2].push(b.bootstrap(s, &quarter)?);
                        carry_in[j + 2] = true;
                    }
                }
            }
        }
        next.truncate(n);
        cols = next;
    }
    Ok(two_rows(b, &cols))
}

/// Sums `terms` as a balanced tree of two-operand parallel additions.
fn add_tree(b: &mut CircuitBuilder, mut terms: Vec<Digits>) -> Result<Digits, Error> {
    while terms.len() > 1 {
        let mut next = Vec::with_capacity(terms.len().div_ceil(2));
        for pair in terms.chunks(2) {
            next.push(match pair {
                [a, c] => add(b, a, c)?,
                [a] => a.clone(),
                _ => unreachable!("chunks of two"),
            });
        }
        terms = next;
    }
    Ok(terms.pop().unwrap_or_default())
}

fn karatsuba(b: &mut CircuitBuilder, x: &Digits, y: &Digits) -> Result<Digits, Error> {
    let n = x.len().max(y.len());
    let half = n / 2;
    if x.len().min(y.len()) < 2 * KARATSUBA_MIN || half == 0 {
        return mul(b, x, y, MulAlgorithm::Counters);
    }
    let (x0, x1) = x.split(half);
    let (y0, y1) = y.split(half);
    let a = karatsuba(b, &x1, &y1)?;
    let bb = karatsuba(b, &x0, &y0)?;
    let xs = add(b, &x1, &x0)?;
    let ys = add(b, &y1, &y0)?;
    let c = karatsuba(b, &xs, &ys)?;
    // x y = A 4^h + (C - A - B) 2^h + B
    let na = a.neg(b)?;
    let nb = bb.neg(b)?;
    sum_shifted(
        b,
        &[(a, 2 * half), (c, half), (na, half), (nb, half), (bb, 0)],
    )
}

/// `x^2`.
pub fn square(b: &mut CircuitBuilder, x: &Digits, algo: MulAlgorithm) -> Result<Digits, Error> {
    if x.is_empty() {
        return Ok(Digits::default());
    }
    match algo {
        MulAlgorithm::Counters | MulAlgorithm::Schoolbook => square_counters(b, x),
        MulAlgorithm::Karatsuba => square_divide(b, x),
        MulAlgorithm::Auto => {
            if let Some(tx) = super::convert::twos_form(b, x)? {
                if twos_pays(b.params().id, b.threads(), Op::Square, tx.0.len() + 1, 0)? {
                    return square_twos(b, tx);
                }
            }
            let best = choose(b.params().id, Op::Square, x.len(), x.len())?;
            square(b, x, best)
        }
    }
}

/// `x^2` exactly for an operand in two's-complement form: with
/// `x = X - s 2^(n-1)`, `x^2 = sum_i x_i 4^i + sum_(i<j) x_i x_j 2^(i+j+1)
/// + sum_i !(s x_i) 2^(n+i) + s 2^(2n-2) + 2^(2n-1) + 2^n` modulo `2^(2n)`
/// (Baugh-Wooley with each product `x_i x_j` once): half the bit products
/// of [`mul_twos`].
fn square_twos(b: &mut CircuitBuilder, (xl, s): (Vec<Wire>, Wire)) -> Result<Digits, Error> {
    let n = xl.len() + 1;
    let w = 2 * n;
    let mut sel = Selectors::new();
    let mut cols: Vec<Vec<Wire>> = vec![Vec::new(); w];
    for (i, &xi) in xl.iter().enumerate() {
        cols[2 * i].push(xi);
        and_row(b, &mut sel, &mut cols, xi, &xl[i + 1..], 2 * i + 2, false)?;
    }
    and_row(b, &mut sel, &mut cols, s, &xl, n, true)?;
    cols[w - 2].push(s);
    for c in [w - 1, n] {
        cols[c].push(b.constant(1));
    }
    sum_bits(b, cols, &mut sel)
}

/// `sum x_i^2 4^i + sum_{i<j} x_i x_j 2^(i+j+1)`, compressed.
fn square_counters(b: &mut CircuitBuilder, x: &Digits) -> Result<Digits, Error> {
    let n = x.len();
    let abs = Lut::from_fn(b.params().pi, -1, 1, i64::abs)?;
    let mut cols = vec![Vec::new(); 2 * n];
    for (i, &xi) in x.wires().iter().enumerate() {
        cols[2 * i].push(b.bootstrap(xi, &abs)?);
        for (j, &xj) in x.wires().iter().enumerate().skip(i + 1) {
            cols[i + j + 1].push(digit_product(b, xi, xj)?);
        }
    }
    compress(b, cols)
}

/// PARMESAN Algorithm 5 with direct tables below 4 digits.
fn square_divide(b: &mut CircuitBuilder, x: &Digits) -> Result<Digits, Error> {
    let n = x.len();
    if n <= 3 {
        return square_table(b, x);
    }
    let half = n / 2;
    let (x0, x1) = x.split(half);
    let a = square_divide(b, &x1)?;
    let bb = square_divide(b, &x0)?;
    let c = mul(b, &x1, &x0, MulAlgorithm::Auto)?;
    sum_shifted(b, &[(a, 2 * half), (c, half + 1), (bb, 0)])
}

/// Squares of up to 3 digits: `X = sum 2^i x_i` is a linear selector
/// (|X| <= 7); each binary digit of `X^2` is one table (bit 1 is always 0).
fn square_table(b: &mut CircuitBuilder, x: &Digits) -> Result<Digits, Error> {
    let n = x.len();
    let terms: Vec<(Wire, i64)> = x
        .wires()
        .iter()
        .enumerate()
        .map(|(i, &w)| (w, 1 << i))
        .collect();
    let s = Selectors::new().linear(b, &terms, 0)?;
    let max = (1i64 << n) - 1;
    let bits = 2 * n;
    let pi = b.params().pi;
    let luts: Vec<(usize, Lut)> = (0..bits)
        .filter(|&k| k != 1)
        .map(|k| Ok((k, Lut::from_fn(pi, -max, max, move |v| ((v * v) >> k) & 1)?)))
        .collect::<Result<_, Error>>()?;
    let width = (2 * max + 1) as usize;
    let per = ((1usize << (pi - 1)) / width).max(1);
    let mut digits: Vec<Wire> = vec![b.constant(0); bits];
    for chunk in luts.chunks(per) {
        let refs: Vec<&Lut> = chunk.iter().map(|(_, l)| l).collect();
        let outs = if refs.len() == 1 {
            vec![b.bootstrap(s, refs[0])?]
        } else {
            b.bootstrap_many(s, &refs)?
        };
        for ((k, _), w) in chunk.iter().zip(outs) {
            digits[*k] = w;
        }
    }
    Digits::from_vec(digits).trimmed(b)
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    Mul,
    Square,
}

thread_local! {
    static CHOICES: Memo<(ParamsId, Op, usize, usize), MulAlgorithm> = Memo::new();
}

/// Parameters, operation, operand bits and threads of a [`twos_pays`] answer.
type TwosKey = (ParamsId, Op, usize, usize, usize);

thread_local! {
    static TWOS: Memo<TwosKey, bool> = Memo::new();
}

/// Whether [`mul_twos`] of `n`- and `m`-bit two's-complement operands (or
/// [`square_twos`] of an `n`-bit one, `m` unused) takes less estimated time
/// on `threads` threads ([`crate::circuit::Circuit::time_on`]: more depth,
/// fewer bootstraps), then fewer bootstraps, than the best digit-product
/// algorithm on the same operands; measured on the count backend and
/// remembered.
fn twos_pays(params: ParamsId, threads: usize, op: Op, n: usize, m: usize) -> Result<bool, Error> {
    let key = (params, op, n, m, threads);
    let cost = |twos: bool| -> Result<(u64, usize, u32), Error> {
        let mut b = CircuitBuilder::new(params.params());
        let x = Digits::input_twos(&mut b, n)?;
        let tx = super::convert::twos_form(&mut b, &x)?.expect("two's-complement input");
        let out = match op {
            Op::Mul => {
                let y = Digits::input_twos(&mut b, m)?;
                let ty = super::convert::twos_form(&mut b, &y)?.expect("two's-complement input");
                if twos {
                    mul_twos(&mut b, tx, ty)?
                } else {
                    mul(&mut b, &x, &y, choose(params, op, n, m)?)?
                }
            }
            Op::Square if twos => square_twos(&mut b, tx)?,
            Op::Square => square(&mut b, &x, choose(params, op, n, n)?)?,
        };
        out.output(&mut b)?;
        let c = b.build();
        let st = c.stats();
        Ok((c.time_on(threads), st.pbs, st.depth))
    };
    TWOS.with(|memo| memo.try_get_or(key, || Ok(cost(true)? < cost(false)?)))
}

/// The algorithm with the fewest bootstraps (then lowest depth) for these
/// lengths, measured on the count backend and remembered.
fn choose(params: ParamsId, op: Op, n: usize, m: usize) -> Result<MulAlgorithm, Error> {
    CHOICES.with(|memo| memo.try_get_or((params, op, n, m), || measure(params, op, n, m)))
}

/// [`choose`]'s measurement: each candidate built on a scratch builder.
fn measure(params: ParamsId, op: Op, n: usize, m: usize) -> Result<MulAlgorithm, Error> {
    let candidates: &[MulAlgorithm] = match op {
        Op::Mul => &[
            MulAlgorithm::Counters,
            MulAlgorithm::Karatsuba,
            MulAlgorithm::Schoolbook,
        ],
        Op::Square => &[MulAlgorithm::Counters, MulAlgorithm::Karatsuba],
    };
    let mut best = None;
    for &algo in candidates {
        let mut b = CircuitBuilder::new(params.params());
        let x = Digits::input(&mut b, n)?;
        let out = match op {
            Op::Mul => {
                let y = Digits::input(&mut b, m)?;
                mul(&mut b, &x, &y, algo)?
            }
            Op::Square => square(&mut b, &x, algo)?,
        };
        out.output(&mut b)?;
        let st = b.build().stats();
        let key = (st.pbs, st.depth);
        if best.is_none_or(|(k, _)| key < k) {
            best = Some((key, algo));
        }
    }
    let (_, algo) = best.expect("at least one candidate");
    Ok(algo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, ClearBackend};
    use crate::crypto::params::INSECURE_TEST_DIGITS as P;

    /// Baugh-Wooley on every pair of two's-complement values of 1 to 5
    /// bits (whether or not `Auto` would pick it), against `i64` products.
    #[test]
    fn twos_products_are_exact() {
        for n in 1..=5usize {
            for m in 1..=5usize {
                let mut b = CircuitBuilder::new(&P);
                let x = Digits::input_twos(&mut b, n).unwrap();
                let y = Digits::input_twos(&mut b, m).unwrap();
                let tx = super::super::convert::twos_form(&mut b, &x)
                    .unwrap()
                    .unwrap();
                let ty = super::super::convert::twos_form(&mut b, &y)
                    .unwrap()
                    .unwrap();
                let p = mul_twos(&mut b, tx, ty).unwrap();
                p.output(&mut b).unwrap();
                let c = b.build();
                let digits = |v: i64, k: usize| -> Vec<u64> {
                    (0..k)
                        .map(|i| {
                            let bit = (v >> i) & 1;
                            let d = if i + 1 == k { -bit } else { bit };
                            d.rem_euclid(32) as u64
                        })
                        .collect()
                };
                for a in -(1i64 << (n - 1))..(1 << (n - 1)) {
                    for bv in -(1i64 << (m - 1))..(1 << (m - 1)) {
                        let mut ins = digits(a, n);
                        ins.extend(digits(bv, m));
                        let out = ClearBackend.evaluate(&c, &ins).unwrap();
                        let ds: Vec<i64> = out
                            .iter()
                            .map(|&r| if r >= 16 { r as i64 - 32 } else { r as i64 })
                            .collect();
                        assert!(ds.iter().all(|d| d.abs() <= 1));
                        assert_eq!(
                            super::super::value_of(&ds),
                            (a * bv).into(),
                            "{n}x{m}: {a} * {bv}"
                        );
                    }
                }
            }
        }
    }

    /// The two's-complement square on every value of 1 to 7 bits.
    #[test]
    fn twos_squares_are_exact() {
        for n in 1..=7usize {
            let mut b = CircuitBuilder::new(&P);
            let x = Digits::input_twos(&mut b, n).unwrap();
            let tx = super::super::convert::twos_form(&mut b, &x)
                .unwrap()
                .unwrap();
            square_twos(&mut b, tx).unwrap().output(&mut b).unwrap();
            let c = b.build();
            for a in -(1i64 << (n - 1))..(1 << (n - 1)) {
                let ins: Vec<u64> = (0..n)
                    .map(|i| {
                        let bit = (a >> i) & 1;
                        (if i + 1 == n { -bit } else { bit }).rem_euclid(32) as u64
                    })
                    .collect();
                let ds: Vec<i64> = ClearBackend
                    .evaluate(&c, &ins)
                    .unwrap()
                    .iter()
                    .map(|&r| if r >= 16 { r as i64 - 32 } else { r as i64 })
                    .collect();
                assert!(ds.iter().all(|d| d.abs() <= 1));
                assert_eq!(super::super::value_of(&ds), (a * a).into(), "{n}: {a}^2");
            }
        }
    }

    /// Every split of the compressor on random columns of wires in [0, 1],
    /// [0, 2] and [0, 3] (as block products leave them, with tall columns
    /// so groups above 7 occur), widths 1 to 12: the two rows are bits and
    /// sum to the columns' total modulo `2^n`.
    #[test]
    fn compressed_rows_keep_the_sum() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for n in 1..=12usize {
            for split_from in [8, 10, 16] {
                let mut b = CircuitBuilder::new(&P);
                let mut his = Vec::new();
                let cols: Vec<Vec<Wire>> = (0..n)
                    .map(|_| {
                        let h = rng.gen_range(0..=24);
                        (0..h)
                            .map(|_| {
                                let hi = rng.gen_range(1..=3);
                                his.push(hi);
                                b.input(0, hi).unwrap()
                            })
                            .collect()
                    })
                    .collect();
                let shape: Vec<usize> = cols.iter().map(Vec::len).collect();
                let rows = compress_split(&mut b, cols, &mut Selectors::new(), split_from).unwrap();
                for row in &rows {
                    assert_eq!(row.len(), n);
                    for &w in row {
                        b.output(w).unwrap();
                    }
                }
                let c = b.build();
                for _ in 0..200 {
                    let ins: Vec<u64> =
                        his.iter().map(|&hi| rng.gen_range(0..=hi) as u64).collect();
                    let mut want = 0u64;
                    let mut at = 0;
                    for (j, &h) in shape.iter().enumerate() {
                        want += ins[at..at + h].iter().sum::<u64>() << j;
                        at += h;
                    }
                    let out = ClearBackend.evaluate(&c, &ins).unwrap();
                    assert!(
                        out.iter().all(|&v| v <= 1),
                        "bits, n {n}, split {split_from}"
                    );
                    let got: u64 = out[..n]
                        .iter()
                        .chain(&out[n..])
                        .enumerate()
                        .map(|(i, &v)| v << (i % n))
                        .sum();
                    let mask = (1u64 << n) - 1;
                    assert_eq!(
                        got & mask,
                        want & mask,
                        "n {n}, split {split_from}, {shape:?}"
                    );
                }
            }
        }
    }
}
