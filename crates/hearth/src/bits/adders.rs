//! Adders: `x + y + carry_in` on `n` bits, with the carry out.
//!
//! * [`AdderKind::Ripple`]: one full adder per bit, i.e. one bootstrap
//!   (the majority is the carry; the sum bit `x + y + c - 2 c'` is linear):
//!   `n` bootstraps at depth `n`, the least work, best on few threads.
//! * Parallel prefix on pairs (G, T): the carry out of a span of bits with
//!   carry in 0 and with carry in 1 (`g = x and y`, `t = x or y` for one
//!   bit). Since `G` implies `T`, two spans combine as
//!   `G = maj(G_hi, T_hi, G_lo)` and `T = maj(G_hi, T_hi, T_lo)`, one
//!   bootstrap each, `T` only where it is read later. The carry in is the
//!   lowest span.
//!   [`AdderKind::Sklansky`] (depth `log2 n + 1`, about `n/2 log2 n`
//!   combinations), [`AdderKind::KoggeStone`] (same depth, about
//!   `n log2 n`, fan-out 2), [`AdderKind::BrentKung`] (depth
//!   `2 log2 n`, about `2n`). Depth is at most `2 log2 n + 2` bootstraps
//!   (CryptoEmu section 7.1).
//! * [`AdderKind::Auto`]: the candidate with the least estimated time on
//!   the builder's thread count, `max(#PBS / threads, depth)`, measured on
//!   the count backend and remembered.

use std::cell::RefCell;
use std::collections::HashMap;

use super::gates::{gate, maj, sum_bit, Gate};
use super::{packed_add, Bits, ONE};
use crate::circuit::{cheapest, CircuitBuilder, Selectors, Wire};
use crate::crypto::params::{Margin, ParamsId};
use crate::error::Error;

/// How to propagate carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdderKind {
    /// One majority per bit: fewest bootstraps, depth n.
    Ripple,
    /// Sklansky's prefix network: depth log2 n, fan-out grows.
    Sklansky,
    /// Kogge-Stone's prefix network: depth log2 n, most bootstraps.
    KoggeStone,
    /// Brent-Kung's prefix network: depth 2 log2 n, few bootstraps.
    BrentKung,
    /// The least estimated time for the builder's thread count.
    Auto,
}

impl AdderKind {
    /// Every kind but `Auto`.
    pub const CONCRETE: [AdderKind; 4] = [
        AdderKind::Ripple,
        AdderKind::Sklansky,
        AdderKind::KoggeStone,
        AdderKind::BrentKung,
    ];
}

/// `x + y + carry_in` on `n = max(len)` bits (shorter operands are
/// zero-extended): the `n` sum bits and the carry out.
pub fn add(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    carry_in: Wire,
    kind: AdderKind,
) -> Result<(Bits, Wire), Error> {
    let (xs, ys) = operands(b, x, y, false)?;
    add_wires(b, &xs, &ys, carry_in, kind)
}

/// `x + y + carry_in` on `n = max(len)` bits (shorter operands are
/// zero-extended): the sum bits, the carry out (unsigned
/// overflow) and, when `signed`, the signed overflow. On the digits family's sets the
/// chunked adder gives no carry into the top bit, so the signed overflow
/// is read from the top bits instead (the operands agree and the sum
/// differs: one bootstrap of `x + y + 2s == 2`); elsewhere it is
/// `c_(n-1) xor c_n`.
pub fn add_overflowing(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    carry_in: Wire,
    kind: AdderKind,
    signed: bool,
) -> Result<(Bits, Wire, Option<Wire>), Error> {
    let (xs, ys) = operands(b, x, y, false)?;
    let n = xs.len();
    let mut sel = Selectors::for_bits();
    if !signed || n == 0 {
        let (sum, carry) = add_wires(b, &xs, &ys, carry_in, kind)?;
        let v = signed.then(|| b.constant(0));
        return Ok((sum, carry, v));
    }
    if packed_add::applies(b) {
        let (sum, carry) = add_wires(b, &xs, &ys, carry_in, kind)?;
        let tops = [xs[n - 1], ys[n - 1], sum.wires()[n - 1]];
        let overflow = |v: &[bool]| v[0] == v[1] && v[2] != v[0];
        if let Some(v) = super::gates::threshold(b, &mut sel, &tops, &overflow)? {
            return Ok((sum, carry, Some(v)));
        }
    }
    let (sum, carries) = add_bitwise(b, &xs, &ys, carry_in, kind)?;
    let v = gate(b, &mut sel, Gate::Xor, carries[n - 1], carries[n])?;
    Ok((sum, carries[n], Some(v)))
}

/// `x - y` on `n` bits as `x + not y + 1`: the difference and the carry
/// out, which is 1 exactly when `x >= y` (unsigned; no borrow).
pub fn sub(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    kind: AdderKind,
) -> Result<(Bits, Wire), Error> {
    let (xs, ys) = operands(b, x, y, true)?;
    let one = b.constant(ONE);
    add_wires(b, &xs, &ys, one, kind)
}

/// The operands' bits on `max(len)` positions, zero-extended; `y`
/// complemented (free) when `negate_y`.
fn operands(
    b: &mut CircuitBuilder,
    x: &Bits,
    y: &Bits,
    negate_y: bool,
) -> Result<(Vec<Wire>, Vec<Wire>), Error> {
    let n = x.len().max(y.len());
    let zero = b.constant(0);
    let xs: Vec<Wire> = (0..n).map(|i| x.bit_or(i, zero)).collect();
    let ys: Vec<Wire> = (0..n)
        .map(|i| {
            let w = y.bit_or(i, zero);
            if negate_y {
                super::gates::not(b, w)
            } else {
                Ok(w)
            }
        })
        .collect::<Result<_, _>>()?;
    Ok((xs, ys))
}

/// `xs + ys + carry_in`: the sum bits and the carry out; by chunks of two
/// bits on the digits family's sets ([`super::packed_add`]), else one full
/// adder per bit.
pub(crate) fn add_wires(
    b: &mut CircuitBuilder,
    xs: &[Wire],
    ys: &[Wire],
    carry_in: Wire,
    kind: AdderKind,
) -> Result<(Bits, Wire), Error> {
    let n = xs.len();
    let kind = match kind {
        AdderKind::Auto => choose(b, n),
        k => k,
    };
    if packed_add::applies(b) {
        return packed_add::add(b, xs, ys, carry_in, kind);
    }
    let (sum, carries) = add_bitwise(b, xs, ys, carry_in, kind)?;
    Ok((sum, carries[n]))
}

/// One full adder per bit: the sum bits and every carry.
fn add_bitwise(
    b: &mut CircuitBuilder,
    xs: &[Wire],
    ys: &[Wire],
    carry_in: Wire,
    kind: AdderKind,
) -> Result<(Bits, Vec<Wire>), Error> {
    let n = xs.len();
    let kind = match kind {
        AdderKind::Auto => choose_bitwise(b, n),
        k => k,
    };
    let mut sel = Selectors::for_bits();
    let carries = match kind {
        AdderKind::Ripple => {
            let mut c = vec![carry_in];
            for i in 0..n {
                let next = maj(b, &mut sel, xs[i], ys[i], c[i])?;
                c.push(next);
            }
            c
        }
        _ => prefix_carries(b, &mut sel, xs, ys, carry_in, kind)?,
    };
    let sum = (0..n)
        .map(|i| sum_bit(b, &mut sel, [xs[i], ys[i], carries[i]], carries[i + 1]))
        .collect::<Result<_, _>>()?;
    Ok((Bits::from_vec(sum), carries))
}

/// One combination in a prefix network: node `out` = node `hi` o node `lo`.
#[derive(Clone, Copy)]
struct Op {
    hi: usize,
    lo: usize,
}

/// The operations of a prefix network over `len` leaves (node `i < len` is
/// leaf `i`; operation `k` makes node `len + k`), and for each position
/// the node holding the prefix `0..=i`.
fn network(kind: AdderKind, len: usize) -> (Vec<Op>, Vec<usize>) {
    let mut ops = Vec::new();
    let mut cur: Vec<usize> = (0..len).collect();
    let push = |ops: &mut Vec<Op>, hi: usize, lo: usize| {
        ops.push(Op { hi, lo });
        len + ops.len() - 1
    };
    match kind {
        AdderKind::KoggeStone => {
            let mut d = 1;
            while d < len {
                let prev = cur.clone();
                for i in d..len {
                    cur[i] = push(&mut ops, prev[i], prev[i - d]);
                }
                d *= 2;
            }
        }
        AdderKind::Sklansky => {
            let mut half = 1;
            while half < len {
                for i in 0..len {
                    if i & half != 0 {
                        let j = (i & !(2 * half - 1)) + half - 1;
                        cur[i] = push(&mut ops, cur[i], cur[j]);
                    }
                }
                half *= 2;
            }
        }
        AdderKind::BrentKung => {
            // Up-sweep: spans of 2d ending at positions 2d - 1, 4d - 1, ...
            let mut d = 1;
            while d < len {
                let mut i = 2 * d - 1;
                while i < len {
                    cur[i] = push(&mut ops, cur[i], cur[i - d]);
                    i += 2 * d;
                }
                d *= 2;
            }
            // Down-sweep: fill the positions in between.
            while d > 1 {
                d /= 2;
                let mut i = 3 * d - 1;
                while i < len {
                    cur[i] = push(&mut ops, cur[i], cur[i - d]);
                    i += 2 * d;
                }
            }
        }
        AdderKind::Ripple | AdderKind::Auto => {
            for i in 1..len {
                cur[i] = push(&mut ops, cur[i], cur[i - 1]);
            }
        }
    }
    (ops, cur)
}

/// Carries `c_0 = carry_in, ..., c_n` by a prefix network over the
/// (generate, transmit) pairs of the carry in and of each bit position.
fn prefix_carries(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    xs: &[Wire],
    ys: &[Wire],
    carry_in: Wire,
    kind: AdderKind,
) -> Result<Vec<Wire>, Error> {
    let mut g = vec![carry_in];
    for i in 0..xs.len() {
        g.push(gate(b, sel, Gate::And, xs[i], ys[i])?);
    }
    let mut or_sel = Selectors::for_bits();
    prefix_network(b, sel, g, kind, |b, i| {
        gate(b, &mut or_sel, Gate::Or, xs[i - 1], ys[i - 1])
    })
}

/// The carry out of every prefix of the leaves `0..len` by a prefix
/// network of `kind`, given each leaf's G (leaf 0: the carry in, whose T
/// is itself) and a way to make leaf `i`'s T, called only where a
/// combination reads it.
pub(crate) fn prefix_network(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    mut g: Vec<Wire>,
    kind: AdderKind,
    mut leaf_t: impl FnMut(&mut CircuitBuilder, usize) -> Result<Wire, Error>,
) -> Result<Vec<Wire>, Error> {
    let len = g.len();
    let (ops, last) = network(kind, len);
    // Which nodes' T is read: a combination reads T_hi for G, and both Ts
    // for its own T when that is read.
    let total = len + ops.len();
    let mut need_t = vec![false; total];
    for (k, op) in ops.iter().enumerate().rev() {
        need_t[op.hi] = true;
        if need_t[len + k] {
            need_t[op.lo] = true;
        }
    }
    let zero = b.constant(0);
    let mut t: Vec<Wire> = Vec::with_capacity(total);
    t.push(g[0]);
    for (i, &need) in need_t.iter().enumerate().take(len).skip(1) {
        t.push(if need { leaf_t(b, i)? } else { zero });
    }
    for (k, op) in ops.iter().enumerate() {
        let (gh, th, gl, tl) = (g[op.hi], t[op.hi], g[op.lo], t[op.lo]);
        let gn = combine(b, sel, gh, th, gl)?;
        let tn = if need_t[len + k] {
            combine(b, sel, gh, th, tl)?
        } else {
            zero
        };
        g.push(gn);
        t.push(tn);
    }
    Ok(last.iter().map(|&node| g[node]).collect())
}

/// The carry out of a high span `(G_hi, T_hi)` given the carry `c` into
/// it: `maj(G_hi, T_hi, c)`, free when `c` is a clear constant.
fn combine(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    gh: Wire,
    th: Wire,
    c: Wire,
) -> Result<Wire, Error> {
    Ok(match b.constant_value(c)? {
        Some(0) => gh,
        Some(_) => th,
        None => maj(b, sel, gh, th, c)?,
    })
}

thread_local! {
    static CHOICES: RefCell<HashMap<(ParamsId, usize, usize, bool), AdderKind>> = RefCell::new(HashMap::new());
}

/// The concrete adder with the least estimated time for `n` bits on the
/// builder's parameters and thread count (by chunks on the digits family's
/// sets).
pub fn choose(b: &CircuitBuilder, n: usize) -> AdderKind {
    choose_for(b, n, false)
}

/// [`choose`] for the adder of one full adder per bit (the signed
/// overflow of [`add_overflowing`] on the gate sets).
fn choose_bitwise(b: &CircuitBuilder, n: usize) -> AdderKind {
    choose_for(b, n, true)
}

fn choose_for(b: &CircuitBuilder, n: usize, bitwise: bool) -> AdderKind {
    let params = b.params();
    let threads = b.threads();
    let key = (params.id, n, threads, bitwise);
    if let Some(k) = CHOICES.with(|c| c.borrow().get(&key).copied()) {
        return k;
    }
    let best = cheapest(params, threads, &AdderKind::CONCRETE, |s, kind| {
        let x = Bits::input(s, n)?;
        let y = Bits::input(s, n)?;
        let cin = s.constant(0);
        let (sum, carry) = if bitwise {
            let (xs, ys) = operands(s, &x, &y, false)?;
            let (sum, carries) = add_bitwise(s, &xs, &ys, cin, kind)?;
            (sum, carries[n])
        } else {
            add(s, &x, &y, cin, kind)?
        };
        sum.output(s)?;
        s.output_decoded(carry, Margin::One)?;
        Ok(())
    })
    .unwrap_or(AdderKind::Ripple);
    CHOICES.with(|c| c.borrow_mut().insert(key, best));
    best
}
