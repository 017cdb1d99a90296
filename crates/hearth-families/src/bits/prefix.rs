//! Parallel-prefix carry networks, shared by the bitwise adders
//! ([`super::adders`]) and the adders by chunks ([`super::packed_add`]).
//!
//! A network combines pairs (G, T): the carry out of a span of bits with
//! carry in 0 and with carry in 1 (`g = x and y`, `t = x or y` for one
//! bit). Since `G` implies `T`, two spans combine as
//! `G = maj(G_hi, T_hi, G_lo)` and `T = maj(G_hi, T_hi, T_lo)`, one
//! bootstrap each, `T` only where it is read later. The carry in is the
//! lowest span.

use super::gates::maj;
use crate::circuit::{CircuitBuilder, Selectors, Wire};
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

/// `p_k = v_0 or ... or v_k` for each `k` by a prefix network of `kind`
/// (one two-input OR per node).
pub(crate) fn or_prefix_network(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    v: &[Wire],
    kind: AdderKind,
) -> Result<Vec<Wire>, Error> {
    let (ops, last) = network(kind, v.len());
    let mut node = v.to_vec();
    for op in ops {
        let w = super::gates::gate(b, sel, super::gates::Gate::Or, node[op.lo], node[op.hi])?;
        node.push(w);
    }
    Ok(last.iter().map(|&i| node[i]).collect())
}

/// `p_k = OR of every bit of groups 0 ..= k` for each `k` (each group at
/// most `fan` bits; an empty one ORs to 0), by a prefix of fan-in `fan`
/// (the widest OR one bootstrap computes, [`super::gates::widest_or`]):
/// depth `1 + ceil(log_fan(blocks))`, about one bootstrap per group and
/// level. Level 1 ORs runs of groups holding at most `fan` bits (a prefix
/// within each run, a group of one bit free); each later level merges
/// `fan` spans, a position reading the totals of the spans before its own
/// in the merge and its own prefix (at most `fan` inputs). Where one
/// bootstrap ORs few bits (the gate sets), the fan-in is 2: Sklansky's
/// network.
pub(crate) fn or_prefix_wide(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    groups: &[Vec<Wire>],
    fan: usize,
) -> Result<Vec<Wire>, Error> {
    use super::gates::or_n;
    let fan = fan.max(2);
    let n = groups.len();
    let mut p = Vec::with_capacity(n);
    // Level 1: runs of groups with at most `fan` bits; spans (start, end).
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    let mut held: Vec<Wire> = Vec::new();
    for (k, g) in groups.iter().enumerate() {
        if k > start && held.len() + g.len() > fan {
            spans.push((start, k));
            start = k;
            held.clear();
        }
        held.extend_from_slice(g);
        p.push(or_n(b, sel, &held)?);
    }
    if n > 0 {
        spans.push((start, n));
    }
    // Later levels: `fan` spans at a time.
    while spans.len() > 1 {
        let mut next_spans = Vec::with_capacity(spans.len().div_ceil(fan));
        let mut next = p.clone();
        for merged in spans.chunks(fan) {
            for (j, &(lo, hi)) in merged.iter().enumerate().skip(1) {
                let totals: Vec<Wire> = merged[..j].iter().map(|&(_, e)| p[e - 1]).collect();
                for k in lo..hi {
                    let mut terms = totals.clone();
                    terms.push(p[k]);
                    next[k] = or_n(b, sel, &terms)?;
                }
            }
            next_spans.push((merged[0].0, merged[merged.len() - 1].1));
        }
        p = next;
        spans = next_spans;
    }
    Ok(p)
}
