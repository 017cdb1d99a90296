//! Shifts and rotations.
//!
//! By a clear amount they are rewiring: free. By an encrypted amount, a
//! barrel shifter: stage `k` moves the value by `2^k` where bit `k` of the
//! amount is set, one multiplexer per bit (an AND where the moved-in bit is
//! a clear zero, two of them per bootstrap on `pi >= 5`). Only the low
//! `log2 n` bits of the amount count, as in Rust's `wrapping_shl` /
//! `rotate_left` (the amount modulo a power-of-two width).

use super::bitwise::gate_pair;
use super::gates::{mux, not, Gate};
use super::Bits;
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::error::Error;

/// A shift or rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ShiftKind {
    /// Logical shift left (LSL).
    Left,
    /// Logical shift right (LSR), zeros in.
    Right,
    /// Arithmetic shift right (ASR), copies of the sign bit in.
    ArithRight,
    /// Rotate left.
    RotateLeft,
    /// Rotate right (ROR).
    RotateRight,
}

/// `x` shifted by a clear `amount` (reduced modulo the width for
/// rotations; shifts by the width or more give all fill bits).
pub fn shift_clear(b: &mut CircuitBuilder, x: &Bits, kind: ShiftKind, amount: usize) -> Bits {
    let n = x.len();
    if n == 0 {
        return x.clone();
    }
    let zero = b.constant(0);
    let sign = x.top(b);
    let w = x.wires();
    let out = (0..n)
        .map(|i| match kind {
            ShiftKind::Left => i.checked_sub(amount).map_or(zero, |j| w[j]),
            ShiftKind::Right => w.get(i + amount).copied().unwrap_or(zero),
            ShiftKind::ArithRight => w.get(i + amount).copied().unwrap_or(sign),
            ShiftKind::RotateLeft => w[(i + n - amount % n) % n],
            ShiftKind::RotateRight => w[(i + amount % n) % n],
        })
        .collect();
    Bits::from_vec(out)
}

/// `x` shifted by the encrypted `amount`, modulo the width (a power of
/// two: `log2 n` stages; other widths use `ceil(log2 n)` stages and take
/// the amount modulo `2^stages`, shifting out completely beyond `n`).
pub fn shift(
    b: &mut CircuitBuilder,
    x: &Bits,
    kind: ShiftKind,
    amount: &Bits,
) -> Result<Bits, Error> {
    let n = x.len();
    let stages = usize::BITS as usize - n.saturating_sub(1).leading_zeros() as usize;
    let mut sel = Selectors::for_bits();
    let mut cur = x.clone();
    let zero = b.constant(0);
    for k in 0..stages.min(amount.len()) {
        let s = amount.wires()[k];
        let moved = shift_clear(b, &cur, kind, 1 << k);
        // Where a clear zero moves in, the bit is `!s & cur`: two such
        // positions share one bootstrap where the set has room.
        let mut zeros = Vec::new();
        for i in 0..n {
            if b.constant_value(moved.bit_or(i, zero))? == Some(0) {
                zeros.push(i);
            }
        }
        let mut out: Vec<Option<Wire>> = vec![None; n];
        for pair in zeros.chunks_exact(2) {
            let (i, j) = (pair[0], pair[1]);
            let (x, y) = (cur.bit_or(i, zero), cur.bit_or(j, zero));
            if let Some((p, q)) = gate_pair(b, Gate::AndNY, (s, x), (s, y))? {
                (out[i], out[j]) = (Some(p), Some(q));
            }
        }
        let out: Vec<Wire> = (0..n)
            .map(|i| match out[i] {
                Some(w) => Ok(w),
                None => mux(b, &mut sel, s, moved.bit_or(i, zero), cur.bit_or(i, zero)),
            })
            .collect::<Result<_, _>>()?;
        cur = Bits::from_vec(out);
    }
    Ok(cur)
}

/// `1` when the encrypted amount is at least the width `n` (Rust's
/// `checked_shl` gives `None` then).
pub fn amount_overflows(b: &mut CircuitBuilder, amount: &Bits, n: usize) -> Result<Wire, Error> {
    if amount.len() < usize::BITS as usize && n >> amount.len() != 0 {
        // The amount cannot reach n.
        return Ok(b.constant(0));
    }
    let n_bits = super::Bits::constant(b, &(n as u64).into(), amount.len());
    let lt = super::compare::compare(b, amount, &n_bits, crate::comparison::Comparison::Lt, false)?;
    not(b, lt)
}
