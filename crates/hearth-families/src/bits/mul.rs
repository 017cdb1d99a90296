//! Multiplication: `x * y` modulo `2^width` (`width = n` for Rust's
//! wrapping product, `2n` for the full one).
//!
//! Partial products `x_i and y_j` (one gate each, free against a clear bit)
//! go only into columns below `width`. Signed full products use
//! Baugh-Wooley: the partial products that pair one sign bit with a
//! non-sign bit are negated (NAND) and two constants added, so no sign
//! extension is needed (a wrapping product is the same signed or not).
//! A square (`x * x`, the same bits twice) needs about half the partial
//! products: `x_i x_i = x_i` costs nothing, and `x_i x_j = x_j x_i` is one
//! gate placed once at twice the weight.
//! Then:
//! * [`MulKind::ShiftAdd`]: the rows added one after the other by ripple
//!   adders (the papers' baseline);
//! * [`MulKind::Array`]: the carry-save array of the CSA paper: each row
//!   meets the running (sum, carry) pair in one level of full adders (one
//!   majority each, the sum linear), `n` levels, then one adder;
//!   [`MulKind::ArrayTwoInput`] is the same array with two-input gates only
//!   (five per full adder), the paper's point of comparison;
//! * [`MulKind::Wallace`], [`MulKind::Dadda`], [`MulKind::Widest`]: column
//!   compression with the widest counters the parameters allow
//!   ([`super::counters`]);
//! * [`MulKind::Karatsuba`] (CPU/GPU paper): three half-size products of
//!   the halves and their sums, for full unsigned products of 16 bits and
//!   more;
//! * [`MulKind::Auto`]: the candidate with the least estimated time on the
//!   builder's thread count (the schedule replayed, `Circuit::time_on`).

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Zero};

use super::adders::{add, AdderKind};
use super::convert::resize;
use super::counters::{sum_columns, CompressKind};
use super::gates::{gate, gates_sharing, not, Gate};
use super::{Bits, ONE};
use crate::circuit::{cheapest, CircuitBuilder, Memo, Selectors, Wire};
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// How partial products are summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulKind {
    /// One adder per partial-product row, in sequence.
    ShiftAdd,
    /// The carry-save array: full adders row by row, one final adder.
    Array,
    /// The carry-save array with two-input gates only (the CSA paper's
    /// baseline: sum = two XORs, carry = two ANDs and an OR).
    ArrayTwoInput,
    /// Wallace tree of counters, one final adder.
    Wallace,
    /// Dadda tree of counters, one final adder.
    Dadda,
    /// The widest counters at every stage, one final adder
    /// ([`CompressKind::Widest`]).
    Widest,
    /// Karatsuba's three half-size products.
    Karatsuba,
    /// The cheapest of the others for the planned thread count.
    Auto,
}

impl MulKind {
    /// Every kind but `Auto`.
    pub const CONCRETE: [MulKind; 7] = [
        MulKind::ShiftAdd,
        MulKind::Array,
        MulKind::ArrayTwoInput,
        MulKind::Wallace,
        MulKind::Dadda,
        MulKind::Widest,
        MulKind::Karatsuba,
    ];
}

/// Karatsuba splits while both halves have at least this many bits.
const KARATSUBA_MIN: usize = 8;

/// `x * y mod 2^width`, the operands read as unsigned, or as two's
/// complement when `signed` (which only matters when `width` exceeds the
/// operands).
pub fn mul(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    width: usize,
    signed: bool,
    kind: MulKind,
) -> Result<Bits, Error> {
    // A clear operand: rows of its signed digits only.
    if let Some(k) = y.clear_value(b, signed)? {
        return mul_const(b, x, &k, width, signed);
    }
    if let Some(k) = x.clear_value(b, signed)? {
        return mul_const(b, y, &k, width, signed);
    }
    let n = x.len().max(y.len());
    if signed && width > n {
        // Baugh-Wooley on equal widths, at most 2n bits (the signed
        // product fits them), then sign extension.
        let (x, y) = (resize(b, x, n, true), resize(b, y, n, true));
        let inner = width.min(2 * n);
        let p = mul_kind(b, &x, &y, inner, true, kind)?;
        return Ok(resize(b, &p, width, true));
    }
    mul_kind(b, x, y, width, false, kind)
}

/// `x * k mod 2^width` for a clear `k`, `x` read as unsigned or two's
/// complement. One row per nonzero digit of `k`'s non-adjacent form (at
/// most half its bits, a third on average), a row `-x` being `not x` plus
/// one; a signed `x` is `u - 2^(n-1) s` with `u` its bits as unsigned, so
/// the sign costs only a clear correction. The rows are summed by column
/// compression.
pub fn mul_const(
    b: &mut CircuitBuilder,
    x: &Bits,
    k: &BigInt,
    width: usize,
    signed: bool,
) -> Result<Bits, Error> {
    let cols = const_product_columns(b, x, k, width, signed)?;
    sum_columns(b, cols, width, CompressKind::Auto)
}

/// The columns [`mul_const`] sums, for callers that add more rows.
pub(crate) fn const_product_columns(
    b: &mut CircuitBuilder,
    x: &Bits,
    k: &BigInt,
    width: usize,
    signed: bool,
) -> Result<Vec<Vec<Wire>>, Error> {
    let modulus = BigInt::one() << width;
    let n = x.len();
    let mut u = x.wires().to_vec();
    let mut correction = BigInt::zero();
    if signed && n > 0 {
        u[n - 1] = not(b, u[n - 1])?;
        correction -= k << (n - 1);
    }
    let k = k.mod_floor(&modulus);
    let zero = b.constant(0);
    let mut cols: Vec<Vec<Wire>> = vec![Vec::new(); width];
    for (i, digit) in non_adjacent_form(&k, width) {
        // Unsigned rows: bits beyond `u` are clear zeros (ones when negated).
        for (j, col) in cols.iter_mut().enumerate().skip(i) {
            let bit = u.get(j - i).copied().unwrap_or(zero);
            col.push(if digit > 0 { bit } else { not(b, bit)? });
        }
        if digit < 0 {
            correction += BigInt::one() << i;
        }
    }
    let correction = correction.mod_floor(&modulus);
    for (j, col) in cols.iter_mut().enumerate() {
        if correction.bit(j as u64) {
            col.push(b.constant(ONE));
        }
    }
    Ok(cols)
}

/// The nonzero digits `(position, +-1)` of the non-adjacent form of
/// `k >= 0`, below `width`.
fn non_adjacent_form(k: &BigInt, width: usize) -> Vec<(usize, i8)> {
    let mut k = k.clone();
    let mut out = Vec::new();
    let mut i = 0;
    while !k.is_zero() && i < width {
        if k.bit(0) {
            let digit: i8 = if k.bit(1) { -1 } else { 1 };
            k -= digit;
            out.push((i, digit));
        }
        k >>= 1u32;
        i += 1;
    }
    out
}

fn mul_kind(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    width: usize,
    signed: bool,
    kind: MulKind,
) -> Result<Bits, Error> {
    let (x, y) = (x.clone(), y.clone());
    let kind = match kind {
        MulKind::Auto => choose(b, x.len(), y.len(), width, signed, same_bits(b, &x, &y)?),
        MulKind::Karatsuba if signed || width < x.len() + y.len() => MulKind::Wallace,
        k => k,
    };
    match kind {
        MulKind::ShiftAdd | MulKind::Array | MulKind::ArrayTwoInput => {
            rows_product(b, &x, &y, width, signed, kind)
        }
        MulKind::Wallace | MulKind::Dadda | MulKind::Widest => {
            let cols = partial_products(b, &x, &y, width, signed)?;
            let compress = match kind {
                MulKind::Wallace => CompressKind::Wallace,
                MulKind::Dadda => CompressKind::Dadda,
                _ => CompressKind::Widest,
            };
            sum_columns(b, cols, width, compress)
        }
        MulKind::Karatsuba => karatsuba(b, &x, &y, width),
        MulKind::Auto => unreachable!("resolved above"),
    }
}

/// Partial products by column, below `width`; Baugh-Wooley for signed
/// operands of equal width `n` (product of `2n` bits).
pub(crate) fn partial_products(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    width: usize,
    signed: bool,
) -> Result<Vec<Vec<Wire>>, Error> {
    if !signed && same_bits(b, x, y)? {
        return square_products(b, x, width);
    }
    let mut sel = Selectors::for_bits();
    let mut cols = vec![Vec::new(); width];
    let (n, m) = (x.len(), y.len());
    let (x, y) = (&reused_fresh(b, x, m)?, &reused_fresh(b, y, n)?);
    let gate_of = |i: usize, j: usize| {
        if signed && ((i == n - 1) != (j == m - 1)) {
            Gate::Nand
        } else {
            Gate::And
        }
    };
    let rows: Vec<Row> = y
        .wires()
        .iter()
        .enumerate()
        .map(|(j, &yj)| {
            let len = n.min(width.saturating_sub(j));
            let products = (0..len).map(|i| (i + j, x.wires()[i], gate_of(i, j)));
            (yj, products.collect())
        })
        .collect();
    gates_by_rows(b, &mut sel, &rows, &mut cols)?;
    if signed {
        // Baugh-Wooley's constants: 2^n + 2^(2n - 1) (equal widths n).
        for c in [n, 2 * n - 1] {
            if c < width {
                let one = b.constant(ONE);
                cols[c].push(one);
            }
        }
    }
    Ok(cols)
}

/// The partial products of `x * x` by column, below `width`: each `x_i`
/// at weight `2^(2i)` (`x_i x_i = x_i`), and for `i < j` one gate
/// `x_i x_j` at `2^(i+j+1)` (the pair's two equal products).
fn square_products(
    b: &mut CircuitBuilder,
    x: &Bits,
    width: usize,
) -> Result<Vec<Vec<Wire>>, Error> {
    let mut sel = Selectors::for_bits();
    let mut cols = vec![Vec::new(); width];
    let n = x.len();
    let x = reused_fresh(b, x, n.saturating_sub(1))?;
    for (i, &xi) in x.wires().iter().enumerate() {
        if 2 * i < width {
            cols[2 * i].push(xi);
        }
    }
    let rows: Vec<Row> = x
        .wires()
        .iter()
        .enumerate()
        .skip(1)
        .map(|(j, &xj)| {
            let len = j.min(width.saturating_sub(j + 1));
            let products = (0..len).map(|i| (i + j + 1, x.wires()[i], Gate::And));
            (xj, products.collect())
        })
        .collect();
    gates_by_rows(b, &mut sel, &rows, &mut cols)?;
    Ok(cols)
}

/// A row of partial products: the operand bit they share and, per
/// product, its column, its other operand bit and its gate.
type Row = (Wire, Vec<(usize, Wire, Gate)>);

/// Each row's products, two per rotation where they share the row's bit
/// ([`gates_sharing`]). A row with an odd number of encrypted products
/// leaves one alone: its product with the pivot (the first encrypted
/// other operand of any row) is kept back and paired with another such
/// row's, the two sharing the pivot (a wrapping 32-bit product has 16
/// odd rows: 8 rotations).
fn gates_by_rows(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    rows: &[Row],
    cols: &mut [Vec<Wire>],
) -> Result<(), Error> {
    let live = |b: &CircuitBuilder, w: Wire| Ok::<_, Error>(b.constant_value(w)?.is_none());
    let mut pivot = None;
    'find: for (_, products) in rows {
        for &(_, w, _) in products {
            if live(b, w)? {
                pivot = Some(w);
                break 'find;
            }
        }
    }
    let mut held: Vec<(usize, (Wire, Gate))> = Vec::new();
    for (shared, products) in rows {
        let mut count = 0;
        for &(_, w, _) in products {
            count += usize::from(live(b, w)?);
        }
        let mut hold = None;
        if count % 2 == 1 && live(b, *shared)? {
            hold = products.iter().position(|&(_, w, _)| Some(w) == pivot);
        }
        if let Some(k) = hold {
            let (c, _, g) = products[k];
            held.push((c, (*shared, g)));
        }
        let kept: Vec<&(usize, Wire, Gate)> = products
            .iter()
            .enumerate()
            .filter(|&(k, _)| Some(k) != hold)
            .map(|(_, p)| p)
            .collect();
        let row: Vec<(Wire, Gate)> = kept.iter().map(|&&(_, w, g)| (w, g)).collect();
        for (&&(c, _, _), p) in kept.iter().zip(gates_sharing(b, sel, &row, *shared)?) {
            cols[c].push(p);
        }
    }
    if let Some(pv) = pivot {
        let others: Vec<(Wire, Gate)> = held.iter().map(|&(_, e)| e).collect();
        for (&(c, _), p) in held.iter().zip(gates_sharing(b, sel, &others, pv)?) {
            cols[c].push(p);
        }
    }
    Ok(())
}

/// Whether `x` and `y` are the same bits: the same wires, or equal clear
/// bits where the wires differ (widened operands get zeros of their own).
fn same_bits(b: &CircuitBuilder, x: &Bits, y: &Bits) -> Result<bool, Error> {
    if x.len() != y.len() {
        return Ok(false);
    }
    for (&u, &v) in x.wires().iter().zip(y.wires()) {
        if u != v {
            match (b.constant_value(u)?, b.constant_value(v)?) {
                (Some(cu), Some(cv)) if cu == cv => {}
                _ => return Ok(false),
            }
        }
    }
    Ok(true)
}

/// `x` with each bit of weight above 1 refreshed (one bootstrap each)
/// when each is read `uses` times: two partial products share one
/// rotation only from bits of weight 1 ([`gates_sharing`]), so a bit left
/// out of an adder (its sum is linear, weight up to 7) would cost a
/// rotation per product.
fn reused_fresh(b: &mut CircuitBuilder, x: &Bits, uses: usize) -> Result<Bits, Error> {
    if uses < 3 || b.params().pi < 5 {
        return Ok(x.clone());
    }
    let mut wires = Vec::with_capacity(x.len());
    for &w in x.wires() {
        let heavy = b.constant_value(w)?.is_none() && b.quadratic_weight(w)? > 1;
        wires.push(if heavy {
            super::gates::refresh(b, w)?
        } else {
            w
        });
    }
    Bits::from_wires(b, wires)
}

/// Shift-and-add or the carry-save array over rows of partial products.
fn rows_product(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    width: usize,
    signed: bool,
    kind: MulKind,
) -> Result<Bits, Error> {
    let cols = partial_products(b, x, y, width, signed)?;
    // Rows: row r holds the r-th bit of each column (a skewed array of
    // partial products, with the constants in the last rows).
    let height = cols.iter().map(Vec::len).max().unwrap_or(0);
    let zero = b.constant(0);
    let rows: Vec<Bits> = (0..height)
        .map(|r| {
            Bits::from_vec(
                cols.iter()
                    .map(|c| c.get(r).copied().unwrap_or(zero))
                    .collect(),
            )
        })
        .collect();
    let mut rows = rows.into_iter();
    let Some(first) = rows.next() else {
        return Ok(Bits::from_vec(vec![zero; width]));
    };
    if kind == MulKind::ShiftAdd {
        let mut acc = first;
        for row in rows {
            acc = add(b, &acc, &row, zero, AdderKind::Ripple)?.0;
        }
        return Ok(acc);
    }
    // Carry-save: (s, c) + row -> (s', c') with one level of full adders.
    let mut sel = Selectors::for_bits();
    let mut s = first.wires().to_vec();
    let mut c = vec![zero; width];
    for row in rows {
        let mut ns = Vec::with_capacity(width);
        let mut nc = vec![zero; width];
        for k in 0..width {
            let (sum, carry) = if kind == MulKind::ArrayTwoInput {
                full_add_two_input(b, &mut sel, s[k], c[k], row.wires()[k])?
            } else {
                super::gates::full_add(b, &mut sel, s[k], c[k], row.wires()[k])?
            };
            ns.push(sum);
            if k + 1 < width {
                nc[k + 1] = carry;
            }
        }
        s = ns;
        c = nc;
    }
    Ok(add(
        b,
        &Bits::from_vec(s),
        &Bits::from_vec(c),
        zero,
        AdderKind::Auto,
    )?
    .0)
}

/// A full adder of two-input gates: `t = x xor y`, sum `t xor z`, carry
/// `(x and y) or (z and t)`: five bootstraps, where a majority is one.
fn full_add_two_input(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    x: Wire,
    y: Wire,
    z: Wire,
) -> Result<(Wire, Wire), Error> {
    let t = gate(b, sel, Gate::Xor, x, y)?;
    let sum = gate(b, sel, Gate::Xor, t, z)?;
    let g = gate(b, sel, Gate::And, x, y)?;
    let p = gate(b, sel, Gate::And, z, t)?;
    Ok((sum, gate(b, sel, Gate::Or, g, p)?))
}

/// Karatsuba on full unsigned products: `x y = A 4^h + (C - A - B) 2^h + B`
/// with `A = x1 y1`, `B = x0 y0`, `C = (x0 + x1)(y0 + y1)`; the result
/// modulo `2^width`.
fn karatsuba(b: &mut CircuitBuilder, x: &Bits, y: &Bits, width: usize) -> Result<Bits, Error> {
    let n = x.len().max(y.len());
    let h = n / 2;
    if x.len().min(y.len()) < 2 * KARATSUBA_MIN {
        let cols = partial_products(b, x, y, width, false)?;
        return sum_columns(b, cols, width, CompressKind::Dadda);
    }
    let zero = b.constant(0);
    let split = |v: &Bits| {
        (
            Bits::from_vec(v.wires()[..h.min(v.len())].to_vec()),
            Bits::from_vec(v.wires()[h.min(v.len())..].to_vec()),
        )
    };
    let square = same_bits(b, x, y)?;
    let (x0, x1) = split(x);
    let (y0, y1) = split(y);
    let a = karatsuba(b, &x1, &y1, x1.len() + y1.len())?;
    let bb = karatsuba(b, &x0, &y0, x0.len() + y0.len())?;
    let (xs, xc) = add(b, &x0, &x1, zero, AdderKind::Auto)?;
    let xs = Bits::from_vec([xs.wires(), &[xc]].concat());
    // A square's halves' sums are one sum: C is a square too.
    let ys = if square {
        xs.clone()
    } else {
        let (ys, yc) = add(b, &y0, &y1, zero, AdderKind::Auto)?;
        Bits::from_vec([ys.wires(), &[yc]].concat())
    };
    let c = karatsuba(b, &xs, &ys, xs.len() + ys.len())?;
    // C - A - B >= 0; everything summed in columns, negatives as
    // complements (-v = not v + 1 modulo 2^width).
    let mut cols: Vec<Vec<Wire>> = vec![Vec::new(); width];
    let mut place =
        |b: &mut CircuitBuilder, v: &Bits, shift: usize, negative: bool| -> Result<(), Error> {
            for (j, col) in cols.iter_mut().enumerate().skip(shift) {
                let bit = v.bit_or(j - shift, zero);
                col.push(if negative {
                    super::gates::not(b, bit)?
                } else {
                    bit
                });
            }
            if negative && shift < width {
                cols[shift].push(b.constant(ONE));
            }
            Ok(())
        };
    place(b, &a, 2 * h, false)?;
    place(b, &bb, 0, false)?;
    place(b, &c, h, false)?;
    place(b, &a, h, true)?;
    place(b, &bb, h, true)?;
    sum_columns(b, cols, width, CompressKind::Dadda)
}

type Key = (ParamsId, usize, usize, usize, bool, bool, usize);

thread_local! {
    static CHOICES: Memo<Key, MulKind> = Memo::new();
}

/// The concrete algorithm with the least estimated time (for a square
/// when `square`: `n` bits times themselves).
pub fn choose(
    b: &CircuitBuilder,
    n: usize,
    m: usize,
    width: usize,
    signed: bool,
    square: bool,
) -> MulKind {
    let params = b.params();
    let threads = b.threads();
    let key = (params.id, n, m, width, signed, square, threads);
    CHOICES.with(|memo| {
        memo.get_or(key, || {
            cheapest(params, threads, &MulKind::CONCRETE, |s, kind| {
                let x = Bits::input(s, n)?;
                let y = if square {
                    x.clone()
                } else {
                    Bits::input(s, m)?
                };
                mul(s, &x, &y, width, signed, kind)?.output(s)?;
                Ok(())
            })
            .unwrap_or(MulKind::Dadda)
        })
    })
}
