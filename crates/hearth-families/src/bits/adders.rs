//! Adders: `x + y + carry_in` on `n` bits, with the carry out.
//!
//! * [`AdderKind::Ripple`]: one full adder per bit, i.e. one bootstrap
//!   (the majority is the carry; the sum bit `x + y + c - 2 c'` is linear):
//!   `n` bootstraps at depth `n`, the least work, best on few threads.
//! * Parallel prefix on pairs (G, T) (`prefix.rs`: the networks, shared
//!   with the adders by chunks): [`AdderKind::Sklansky`] (depth `log2 n + 1`, about `n/2 log2 n`
//!   combinations), [`AdderKind::KoggeStone`] (same depth, about
//!   `n log2 n`, fan-out 2), [`AdderKind::BrentKung`] (depth
//!   `2 log2 n`, about `2n`). Depth is at most `2 log2 n + 2` bootstraps
//!   (CryptoEmu section 7.1).
//! * [`AdderKind::Auto`]: the candidate with the least estimated time on
//!   the builder's thread count (the schedule replayed,
//!   `Circuit::time_on`), measured on the count backend and remembered.
//! * [`neg`]: the subtraction `0 - x`, the same ripple cut into groups
//!   whose carries skip ahead ([`NegKind::Skip`]), or a wide prefix OR
//!   ([`NegKind::Prefix`]), whichever is faster for the thread count.

use super::gates::{gate, maj, not, sum_bit, threshold, two_of_three, widest_or, Gate};
pub use super::prefix::AdderKind;
use super::prefix::{or_prefix_wide, prefix_network};
use super::{packed_add, Bits, ONE};
use crate::circuit::{cheapest, CircuitBuilder, Memo, Selectors, Wire};
use crate::crypto::params::{Margin, ParamsId};
use crate::error::Error;

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
        if let Some(v) = threshold(b, &mut sel, &tops, &overflow)? {
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
    // A clear `y`: `not y + 1` is the clear `2^n - y`, so low zeros of it
    // pass through; `x - 0` is `x` with no borrow.
    if let Some(not_y) = super::clear_bits(b, &ys)? {
        let n = ys.len();
        let mut carry = true;
        let mut neg = Vec::with_capacity(n);
        for bit in not_y {
            neg.push(b.constant(if bit != carry { ONE } else { 0 }));
            carry &= bit;
        }
        if carry {
            return Ok((Bits::from_vec(xs), one));
        }
        let zero = b.constant(0);
        return add_wires(b, &xs, &neg, zero, kind);
    }
    add_wires(b, &xs, &ys, one, kind)
}

/// How [`neg`] negates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NegKind {
    /// `0 - x` by the adder [`choose`] picks: few bootstraps, its depth.
    Subtract,
    /// Bit `j` of `-x` is `x_j xor (x_0 or ... or x_(j-1))`: the ORs by a
    /// wide prefix over pairs of bits (`prefix.rs`, `or_prefix_wide`:
    /// depth 2 up to 36 bits on the digits family's sets), then both bits
    /// of each pair from one rotation: about `1.4 n` bootstraps at depth
    /// 3 for 32 bits, where the subtraction's take 10 (16 threads).
    Prefix,
    /// `not x + 1` by ripple, cut into groups: the carry into a group is
    /// the AND of the carry into the previous one and that group's
    /// complemented bits, one wide gate (a NOR of up to 6 bits), so the
    /// groups ripple side by side. The count is the number of those skip
    /// gates: on the digits family's sets `n/2 + count` bootstraps at
    /// about `n/2 - count` levels, which turns the subtraction's chain
    /// into work for two threads.
    Skip(usize),
}

thread_local! {
    static NEG_KINDS: Memo<(ParamsId, usize, usize), NegKind> = Memo::new();
}

/// `-x` on `x.len()` bits (two's complement, wrapping), by the kind with
/// the least predicted time for the builder's thread count.
pub fn neg(b: &mut CircuitBuilder, x: &Bits) -> Result<Bits, Error> {
    let (params, threads, n) = (b.params(), b.threads(), x.len());
    let kind = NEG_KINDS.with(|memo| {
        memo.get_or((params.id, n, threads), || {
            cheapest(params, threads, &neg_kinds(n), |s, k| {
                let x = Bits::input(s, n)?;
                neg_by(s, &x, k)?.output(s)?;
                Ok(())
            })
            .unwrap_or(NegKind::Subtract)
        })
    });
    neg_by(b, x, kind)
}

/// The kinds [`neg`] chooses from for `n` bits: every skip count up to
/// one per four bits.
fn neg_kinds(n: usize) -> Vec<NegKind> {
    let mut kinds = vec![NegKind::Subtract, NegKind::Prefix];
    kinds.extend((1..=n / 4).map(NegKind::Skip));
    kinds
}

/// `-x` by `kind`.
pub fn neg_by(b: &mut CircuitBuilder, x: &Bits, kind: NegKind) -> Result<Bits, Error> {
    let n = x.len();
    if kind == NegKind::Subtract || n < 2 {
        let zero = Bits::constant(b, &num_bigint::BigInt::from(0), n);
        return Ok(sub(b, &zero, x, AdderKind::Auto)?.0);
    }
    if let NegKind::Skip(skips) = kind {
        return neg_skipping(b, x, skips);
    }
    let mut sel = Selectors::for_bits();
    let xs = x.wires();
    // Pairs (2i, 2i + 1); p[i] = OR of every bit below pair i + 1.
    let pairs: Vec<Vec<Wire>> = xs.chunks(2).map(|c| c.to_vec()).collect();
    let fan = widest_or(b, &mut sel)?;
    let below = or_prefix_wide(b, &mut sel, &pairs[..pairs.len() - 1], fan)?;
    let mut out = Vec::with_capacity(n);
    for (i, pair) in pairs.iter().enumerate() {
        let lo = pair[0];
        if i == 0 {
            out.push(lo);
            if let Some(&hi) = pair.get(1) {
                out.push(gate(b, &mut sel, Gate::Xor, hi, lo)?);
            }
            continue;
        }
        let p = below[i - 1];
        let Some(&hi) = pair.get(1) else {
            out.push(gate(b, &mut sel, Gate::Xor, lo, p)?);
            continue;
        };
        let low_bit = |v: [bool; 3]| v[0] ^ v[2];
        let high_bit = |v: [bool; 3]| v[1] ^ (v[0] | v[2]);
        match two_of_three(b, [lo, hi, p], [&low_bit, &high_bit])? {
            Some(bits) => out.extend(bits),
            None => {
                out.push(gate(b, &mut sel, Gate::Xor, lo, p)?);
                let any = gate(b, &mut sel, Gate::Or, lo, p)?;
                out.push(gate(b, &mut sel, Gate::Xor, hi, any)?);
            }
        }
    }
    Ok(Bits::from_vec(out))
}

/// `not x + 1` by ripple in groups whose carries skip ahead
/// ([`NegKind::Skip`]). The carry into bit `j` is 1 exactly when bits
/// `0 .. j` are 0: the first skip is the NOR of the first `fan` bits, each
/// next one the NOR of the carry's complement and the next `fan - 1` bits
/// (rounded down to whole chunks where bits are added two at a time). A
/// skip whose gate does not fit the inputs' noise ends the skipping: the
/// rest ripples as one group, which is always exact.
fn neg_skipping(b: &mut CircuitBuilder, x: &Bits, skips: usize) -> Result<Bits, Error> {
    let n = x.len();
    let mut sel = Selectors::for_bits();
    let xs = x.wires();
    let fan = widest_or(b, &mut sel)?;
    let packed = packed_add::applies(b);
    let whole = |k: usize| if packed { k & !1 } else { k };
    // Group starts and the carry into each; the skips come first so
    // that the schedule, which takes ready bootstraps in order, runs
    // the chain of skips before the groups' ripples.
    let mut starts = vec![0];
    let mut carries = vec![b.constant(ONE)];
    while starts.len() <= skips {
        let at = starts[starts.len() - 1];
        let first = starts.len() == 1;
        let span = whole(if first { fan } else { fan - 1 });
        if span == 0 || at + span >= n {
            break;
        }
        let mut ins = Vec::with_capacity(span + 1);
        if !first {
            ins.push(not(b, carries[carries.len() - 1])?);
        }
        ins.extend_from_slice(&xs[at..at + span]);
        let Some(c) = threshold(b, &mut sel, &ins, &|v| !v.iter().any(|&t| t))? else {
            break;
        };
        starts.push(at + span);
        carries.push(c);
    }
    starts.push(n);
    let zero = b.constant(0);
    let mut out = Vec::with_capacity(n);
    for (g, c) in carries.into_iter().enumerate() {
        let group = &xs[starts[g]..starts[g + 1]];
        let nx: Vec<Wire> = group.iter().map(|&w| not(b, w)).collect::<Result<_, _>>()?;
        let zeros = vec![zero; nx.len()];
        let (bits, _) = add_wires(b, &nx, &zeros, c, AdderKind::Ripple)?;
        out.extend_from_slice(bits.wires());
    }
    Ok(Bits::from_vec(out))
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
                not(b, w)
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
    // Low bits where one operand is a clear 0 and nothing carries in are
    // the other operand's: an accumulator that starts at 0, or a constant
    // with trailing zeros, adds from its first set bit.
    if b.constant_value(carry_in)? == Some(0) {
        let mut low = Vec::new();
        for (&x, &y) in xs.iter().zip(ys) {
            if b.constant_value(y)? == Some(0) {
                low.push(x);
            } else if b.constant_value(x)? == Some(0) {
                low.push(y);
            } else {
                break;
            }
        }
        // By chunks of two bits, an odd cut would shift every chunk.
        let k = if low.len() < n && packed_add::applies(b) {
            low.len() & !1
        } else {
            low.len()
        };
        low.truncate(k);
        if k > 0 {
            if k == n {
                return Ok((Bits::from_vec(low), carry_in));
            }
            let (high, carry) = add_wires(b, &xs[k..], &ys[k..], carry_in, kind)?;
            low.extend_from_slice(high.wires());
            return Ok((Bits::from_vec(low), carry));
        }
    }
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

thread_local! {
    static CHOICES: Memo<(ParamsId, usize, usize, bool), AdderKind> = Memo::new();
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
    CHOICES.with(|memo| {
        memo.get_or(key, || {
            cheapest(params, threads, &AdderKind::CONCRETE, |s, kind| {
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
            .unwrap_or(AdderKind::Ripple)
        })
    })
}
