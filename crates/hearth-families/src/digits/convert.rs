//! Conversion between signed-binary digits and two's-complement bits.
//!
//! Cut `X` into radix-4 blocks `t_B = d_2B + 2 d_(2B+1)` (in [-3, 3]). With
//! `L_B` the value of the digits below `2B`, bits `2B` and `2B + 1` of `X`
//! in two's complement are those of `(t_B - [L_B < 0]) mod 4`: only the
//! *borrow* `[L_B < 0]` of each even prefix is needed. One bootstrap per
//! block reads `2 t_B + v_B`, with `v_B = 1 - 2 [L_B < 0]` (odd values in
//! [-7, 7]), and returns both bits as two interleaved tables of one blind
//! rotation: `n / 2` bootstraps for the bits.
//!
//! The borrows come from a sparse prefix network. The sign of a digit string
//! is that of its most significant non-zero digit, so `g` signs of adjacent
//! pieces combine as `sign(sum_i 2^i s_i)` (one bootstrap, weight 85 for
//! `g = 4` on `DIGITS_128`). Aligned blocks of `g^j` digits get their sign
//! this way, level by level (built only where used), and so do runs of up
//! to `g` adjacent blocks of one level. Each prefix borrow `v_p` combines
//! an earlier one `v_q` (weight 1, never zero) with at most `g - 1` such
//! pieces covering `[q, p)`, or up to `g` pieces when `q = 0`. A planner
//! picks for every `p` the cheapest cover at the smallest depth reachable
//! for all prefixes: the count drops from `n` bootstraps per level
//! (Kogge-Stone) to about `1.4 n` in all (44 instead of 129 at 32 digits)
//! at the same depth `ceil(log_g n) + 1` up to 32 digits, one more at 64.
//!
//! Digits that already are bits (digits in {0, 1}, the top one in [-1, 0] as
//! [`wrap`] and [`from_bits`] leave them) convert for free.
//!
//! The other way is free: two's-complement bits `b_0 .. b_(w-1)` are the
//! digits `b_0, ..., b_(w-2), -b_(w-1)`.

use std::collections::{HashMap, HashSet};

use super::sign::group_size;
use super::Digits;
use crate::circuit::Selectors;
use crate::circuit::{CircuitBuilder, Wire};
use crate::crypto::lut::Lut;
use crate::error::Error;

/// The two's-complement bits of `x` (digits in {0, 1}, least significant
/// first), `len(x) + 1` of them: the last is the sign bit.
pub fn to_bits(b: &mut CircuitBuilder, x: &Digits) -> Result<Vec<Wire>, Error> {
    bits_of(b, x, true, false)
}

/// The low `len(x)` two's-complement bits of `x` (of `x - 1` when
/// `minus_one`), and the sign bit too when `sign` (it costs one more
/// bootstrap when `len(x)` is even). The `- 1` is free: it is a borrow
/// into the lowest block, so every prefix borrow becomes `[L <= 0]`.
fn bits_of(
    b: &mut CircuitBuilder,
    x: &Digits,
    sign: bool,
    minus_one: bool,
) -> Result<Vec<Wire>, Error> {
    if !minus_one {
        if let Some(bits) = already_bits(b, x, sign)? {
            return Ok(bits);
        }
    }
    let n = x.len();
    let pi = b.params().pi;
    let mut sel = Selectors::new();

    let mut net = Network {
        g: group_size(b),
        digits: x.wires(),
        signs: HashMap::new(),
        sel: &mut sel,
    };
    let plan = Plan::new(n, net.g);
    let mut borrows: Vec<Wire> = vec![b.constant(if minus_one { -1 } else { 1 })];
    for step in &plan.steps {
        let v = net.borrow(b, step, &borrows)?;
        borrows.push(v);
    }
    let lo = Lut::from_fn(pi, -7, 7, |y| (y - 1).div_euclid(2).rem_euclid(2))?;
    let hi = Lut::from_fn(pi, -7, 7, |y| (y - 1).div_euclid(2).rem_euclid(4) / 2)?;
    let m = b.params().message_modulus();
    let mut bits = Vec::with_capacity(n + 1);
    let blocks = n.div_ceil(2);
    for (k, &v) in borrows.iter().enumerate().take(blocks) {
        let d0 = x.digit_or_zero(b, 2 * k);
        let d1 = x.digit_or_zero(b, 2 * k + 1);
        let no_borrow = b.constant_value(v)? == Some(1);
        let top = sign && k + 1 == blocks && n.is_multiple_of(2);
        if no_borrow && in_range(b, d0, 0, 1)? && in_range(b, d1, 0, 1)? {
            bits.extend([d0, d1]);
            if top {
                bits.push(b.constant(0));
            }
            continue;
        }
        let y = sel.linear(b, &[(d0, 2), (d1, 4), (v, 1)], 0)?;
        if b.range(y)?.count(m) <= 8 {
            bits.extend(b.bootstrap_many(y, &[&lo, &hi])?);
        } else {
            bits.push(b.bootstrap(y, &lo)?);
            bits.push(b.bootstrap(y, &hi)?);
        }
        if top {
            // The top block decides the sign: X < 0 iff t < 0, or t = 0
            // and the digits below are negative, iff 2 t + v < 0.
            let neg = Lut::from_fn(pi, -7, 7, |y| (y < 0) as i64)?;
            bits.push(b.bootstrap(y, &neg)?);
        }
    }
    if n == 0 && sign {
        bits.push(b.constant(minus_one as i64));
    }
    // An odd n padded a zero digit: its block's high bit is the sign bit.
    bits.truncate(if sign { n + 1 } else { n });
    Ok(bits)
}

/// The bits of `x` without a bootstrap when its digits are bits already:
/// all in {0, 1} but the top, which may be in [-1, 0] (two's complement).
fn already_bits(
    b: &mut CircuitBuilder,
    x: &Digits,
    sign: bool,
) -> Result<Option<Vec<Wire>>, Error> {
    let Some((mut bits, s)) = twos_form(b, x)? else {
        return Ok(None);
    };
    // A sign digit stands for bit n-1 too: mod 2^n it weighs +2^(n-1).
    if bits.len() < x.len() {
        bits.push(s);
    }
    if sign {
        bits.push(s);
    }
    Ok(Some(bits))
}

/// `x` as two's-complement bits: the bits below its top digit and its sign
/// bit, when every digit is a single fresh value in [0, 1] but the top one,
/// in [-1, 0] (negated, it is the sign bit); digits that are all bits are a
/// non-negative value with a clear 0 as sign. `None` otherwise.
pub(crate) fn twos_form(
    b: &mut CircuitBuilder,
    x: &Digits,
) -> Result<Option<(Vec<Wire>, Wire)>, Error> {
    let Some((&top, low)) = x.wires().split_last() else {
        return Ok(None);
    };
    for &d in low {
        if !in_range(b, d, 0, 1)? {
            return Ok(None);
        }
    }
    Ok(if in_range(b, top, -1, 0)? {
        Some((low.to_vec(), b.neg(top)?))
    } else if in_range(b, top, 0, 1)? {
        Some((x.wires().to_vec(), b.constant(0)))
    } else {
        None
    })
}

/// Whether `w` may stand as a bit as it is: range within `[lo, hi]` and a
/// single fresh value (the digits this module reads may be sums of two).
fn in_range(b: &CircuitBuilder, w: Wire, lo: i64, hi: i64) -> Result<bool, Error> {
    let m = b.params().message_modulus();
    Ok(b.range(w)?.is_within(lo, hi, m) && b.quadratic_weight(w)? <= 1)
}

/// `count` (1 to `g`) adjacent aligned blocks of `g^level` digits, from
/// block `first`: digits `[first g^level, (first + count) g^level)`. One
/// block is its own sign (a digit at level 0); several cost one bootstrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Piece {
    level: u32,
    first: usize,
    count: usize,
}

impl Piece {
    fn block(level: u32, index: usize) -> Self {
        Piece {
            level,
            first: index,
            count: 1,
        }
    }

    fn depth(&self) -> u32 {
        self.level + (self.count > 1) as u32
    }

    /// The pieces this one is made of (none for a digit).
    fn parts(&self, g: usize) -> Vec<Piece> {
        match (self.count, self.level) {
            (1, 0) => Vec::new(),
            (1, l) => (0..g)
                .map(|i| Piece::block(l - 1, self.first * g + i))
                .collect(),
            (c, l) => (0..c).map(|i| Piece::block(l, self.first + i)).collect(),
        }
    }
}

/// How the borrow of one even prefix is made.
#[derive(Clone, Debug)]
struct Step {
    /// The earlier prefix (in blocks of two digits) whose borrow is the
    /// least significant item; 0 for none (the prefix starts at digit 0).
    from: usize,
    /// Pieces covering the rest of the prefix, least significant first.
    pieces: Vec<Piece>,
}

/// The prefix network for `n` digits: one step per even prefix
/// `2, 4, ..., 2 (ceil(n / 2) - 1)`.
struct Plan {
    steps: Vec<Step>,
}

impl Plan {
    fn new(n: usize, g: usize) -> Self {
        let blocks = n.div_ceil(2);
        let none = HashSet::new();
        // Smallest depth every prefix can reach.
        let mut min_depth = vec![0u32; blocks];
        for k in 1..blocks {
            let (_, d, _) = cover(2 * k, g, &min_depth, None, &none).expect("unbounded");
            min_depth[k] = d;
        }
        let target = min_depth.iter().copied().max().unwrap_or(0);
        // Cheapest cover within that depth, sharing what is built; a prefix
        // that later ones may extend keeps one level spare where it can.
        let mut built = HashSet::new();
        let mut depth = vec![0u32; blocks];
        let mut steps = Vec::with_capacity(blocks.saturating_sub(1));
        for k in 1..blocks {
            let allowed = if min_depth[k] < target {
                target - 1
            } else {
                target
            };
            let (step, d, _) = cover(2 * k, g, &depth, Some(allowed), &built)
                .or_else(|| cover(2 * k, g, &depth, None, &built))
                .expect("unbounded");
            for &p in &step.pieces {
                mark_built(p, g, &mut built);
            }
            depth[k] = d;
            steps.push(step);
        }
        Plan { steps }
    }
}

/// The best way to make the borrow of digits `[0, p)`: an earlier even
/// prefix and at most `g - 1` pieces, or at most `g` pieces from digit 0.
/// With a depth `limit`, the cheapest within it (`None` if there is none);
/// without, the shallowest. Returns the step, its depth and its new
/// bootstraps (blocks not yet `built`, plus the borrow itself).
fn cover(
    p: usize,
    g: usize,
    prefix_depth: &[u32],
    limit: Option<u32>,
    built: &HashSet<Piece>,
) -> Option<(Step, u32, usize)> {
    // Ranking of a partial cover by (depth, cost): cheapest first under a
    // limit, shallowest first without.
    let key = |d: u32, c: usize| match limit {
        Some(_) => (c, d as usize),
        None => (d as usize, c),
    };
    // best[e][u]: the best cover of [e, p) by u pieces, as (depth, cost,
    // last piece, previous end).
    type Cell = Option<(u32, usize, Piece, usize)>;
    let mut best: Vec<Vec<Cell>> = vec![vec![None; g + 1]; p + 1];
    let mut done: Option<(Step, u32, usize)> = None;
    let consider = |step: Step, d: u32, c: usize, done: &mut Option<(Step, u32, usize)>| {
        if limit.is_some_and(|l| d > l) {
            return;
        }
        if done
            .as_ref()
            .is_none_or(|(_, bd, bc)| key(d, c) < key(*bd, *bc))
        {
            *done = Some((step, d, c));
        }
    };
    let path = |best: &Vec<Vec<Cell>>, mut e: usize, mut u: usize| {
        let mut pieces = Vec::with_capacity(u);
        while u > 0 {
            let (_, _, piece, prev) = best[e][u].expect("on the path");
            pieces.push(piece);
            e = prev;
            u -= 1;
        }
        pieces
    };
    for e in (0..=p).rev() {
        for u in 0..=g {
            let (d, c) = if e == p && u == 0 {
                (0, 0)
            } else {
                match best[e][u] {
                    Some((d, c, _, _)) => (d, c),
                    None => continue,
                }
            };
            if u > 0 && e == 0 {
                let step = Step {
                    from: 0,
                    pieces: path(&best, e, u),
                };
                consider(step, d + 1, c + 1, &mut done);
                continue;
            }
            if u > 0 && u < g && e % 2 == 0 {
                let d = d.max(prefix_depth[e / 2]);
                let step = Step {
                    from: e / 2,
                    pieces: path(&best, e, u),
                };
                consider(step, d + 1, c + 1, &mut done);
            }
            if u == g {
                continue;
            }
            let mut size = 1;
            let mut level = 0;
            while size <= e && e % size == 0 {
                for count in 1..=g.min(e / size) {
                    let piece = Piece {
                        level,
                        first: e / size - count,
                        count,
                    };
                    let pd = d.max(piece.depth());
                    if limit.is_some_and(|l| pd >= l) {
                        continue;
                    }
                    let pc = c + new_bootstraps(piece, g, built);
                    let s = e - count * size;
                    let better = match best[s][u + 1] {
                        None => true,
                        Some((bd, bc, _, _)) => key(pd, pc) < key(bd, bc),
                    };
                    if better {
                        best[s][u + 1] = Some((pd, pc, piece, e));
                    }
                }
                size *= g;
                level += 1;
            }
        }
    }
    done
}

/// Bootstraps needed to make `p`, given the pieces already built.
fn new_bootstraps(p: Piece, g: usize, built: &HashSet<Piece>) -> usize {
    if p.depth() == 0 || built.contains(&p) {
        return 0;
    }
    1 + p
        .parts(g)
        .into_iter()
        .map(|q| new_bootstraps(q, g, built))
        .sum::<usize>()
}

fn mark_built(p: Piece, g: usize, built: &mut HashSet<Piece>) {
    if p.depth() == 0 || !built.insert(p) {
        return;
    }
    for q in p.parts(g) {
        mark_built(q, g, built);
    }
}

/// Builds piece signs (memoized) and prefix borrows.
struct Network<'a> {
    /// Pieces combined per bootstrap ([`group_size`]).
    g: usize,
    digits: &'a [Wire],
    signs: HashMap<Piece, Wire>,
    sel: &'a mut Selectors,
}

impl Network<'_> {
    /// The sign of a piece, in {-1, 0, 1}.
    fn sign(&mut self, b: &mut CircuitBuilder, p: Piece) -> Result<Wire, Error> {
        let g = self.g;
        if p.depth() == 0 {
            return Ok(self.digits[p.first]);
        }
        if let Some(&w) = self.signs.get(&p) {
            return Ok(w);
        }
        let parts = p.parts(g);
        let mut terms = Vec::with_capacity(parts.len());
        for (i, q) in parts.into_iter().enumerate() {
            terms.push((self.sign(b, q)?, 1i64 << i));
        }
        let bound = (1i64 << terms.len()) - 1;
        let x = self.sel.linear(b, &terms, 0)?;
        let lut = Lut::from_fn(b.params().pi, -bound, bound, i64::signum)?;
        let w = b.bootstrap(x, &lut)?;
        self.signs.insert(p, w);
        Ok(w)
    }

    /// The borrow `1 - 2 [L < 0]` of the prefix a step describes.
    fn borrow(
        &mut self,
        b: &mut CircuitBuilder,
        s: &Step,
        borrows: &[Wire],
    ) -> Result<Wire, Error> {
        let mut terms = Vec::with_capacity(self.g);
        if s.from > 0 {
            terms.push((borrows[s.from], 1i64));
        }
        for &p in &s.pieces {
            let w = self.sign(b, p)?;
            terms.push((w, 1i64 << terms.len()));
        }
        let bound: i64 = terms.iter().map(|&(_, c)| c).sum();
        let x = self.sel.linear(b, &terms, 0)?;
        // A prefix from digit 0 whose pieces are all zero keeps the borrow
        // into the lowest block (`borrows[0]`, 1 or -1).
        let base = if b.constant_value(borrows[0])? == Some(1) {
            1
        } else {
            -1
        };
        let lut = Lut::from_fn(b.params().pi, -bound, bound, |x| match x.signum() {
            0 => base,
            s => s,
        })?;
        Ok(b.bootstrap(x, &lut)?)
    }
}

/// `x` wrapped to `n` bits like a two's-complement `n`-bit integer: the
/// value congruent to `x` modulo `2^n` in `[-2^(n-1), 2^(n-1))`, as `n`
/// digits (bits, the top one negated). Digits from position `n` on are
/// multiples of `2^n` and are dropped; the rest go through [`to_bits`].
pub fn wrap(b: &mut CircuitBuilder, x: &Digits, n: usize) -> Result<Digits, Error> {
    let bits = low_bits(b, x, n)?;
    from_bits(b, &bits)
}

/// The low `n` two's-complement bits of `x` (sign-extended when `x` is
/// shorter), as wires in {0, 1}.
pub(crate) fn low_bits(b: &mut CircuitBuilder, x: &Digits, n: usize) -> Result<Vec<Wire>, Error> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let (low, _) = x.split(n);
    // `low` has at most n digits; when shorter, its sign bit extends it.
    let mut bits = bits_of(b, &low, low.len() < n, false)?;
    let sign = *bits
        .last()
        .expect("n > 0 and low has a digit or a sign bit");
    bits.resize(n, sign);
    Ok(bits)
}

/// [`low_bits`] when they cost nothing (the digits already are bits, as
/// two's-complement inputs and outputs of `wrap` are), else `None`.
fn free_low_bits(b: &mut CircuitBuilder, x: &Digits, n: usize) -> Result<Option<Vec<Wire>>, Error> {
    let (low, _) = x.split(n);
    if low.is_empty() {
        return Ok(Some(vec![b.constant(0); n]));
    }
    let Some(mut bits) = already_bits(b, &low, low.len() < n)? else {
        return Ok(None);
    };
    let sign = *bits.last().expect("low has a digit");
    bits.resize(n, sign);
    Ok(Some(bits))
}

/// `x + y` wrapped to `n` bits when both operands' low `n` bits are free
/// (`free_low_bits`), else `None`: with `X`, `Y` those bits read as
/// unsigned, `X + Y = X - ~Y - 1 + 2^n`, and `X - ~Y` has the digits
/// `x_i + y_i - 1`, each in [-1, 1] with no bootstrap; the conversion
/// takes the `- 1` as its first borrow. One conversion in all, where an
/// addition and a conversion would be needed otherwise.
pub fn wrapping_add_bits(
    b: &mut CircuitBuilder,
    x: &Digits,
    y: &Digits,
    n: usize,
) -> Result<Option<Digits>, Error> {
    if n == 0 {
        return Ok(None);
    }
    let (Some(u), Some(v)) = (free_low_bits(b, x, n)?, free_low_bits(b, y, n)?) else {
        return Ok(None);
    };
    let d = u
        .iter()
        .zip(&v)
        .map(|(&ui, &vi)| b.linear(&[(ui, 1), (vi, 1)], -1))
        .collect::<Result<Vec<_>, _>>()?;
    let bits = bits_of(b, &Digits::from_vec(d), false, true)?;
    Ok(Some(from_bits(b, &bits)?))
}

/// The digits of a two's-complement bit string (free).
pub fn from_bits(b: &mut CircuitBuilder, bits: &[Wire]) -> Result<Digits, Error> {
    let mut digits = bits.to_vec();
    if let Some(top) = digits.last_mut() {
        *top = b.neg(*top)?;
    }
    Digits::from_wires(b, digits)
}
