//! Shifts and rotations.
//!
//! By a clear amount they are rewiring: free. By an encrypted amount,
//! `log2 n` stages, stage `k` moving the value by `2^k` where bit `k` of
//! the amount is set, on the cheapest of three networks
//! ([`ShiftNetwork`]). Only the low `log2 n` bits of the amount count, as
//! in Rust's `wrapping_shl` / `rotate_left` (the amount modulo a
//! power-of-two width).

use super::functions::{functions, Function};
use super::gates::{gates_sharing, not, Gate};
use super::{Bits, ONE};
use crate::circuit::{cheapest, CircuitBuilder, Memo, Selectors, Wire};
use crate::crypto::params::ParamsId;
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

/// How a shift by an encrypted amount is wired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftNetwork {
    /// `log2 n` stages, stage `k` moving the value by `2^k` where bit `k`
    /// of the amount is set: one multiplexer per bit and stage; two that
    /// read only two data bits between them share a bootstrap where the
    /// set has room (a bit where a clear fill moves in and the bit its
    /// input moves to, the halves of a rotation's last stage). At 32 bits
    /// on `pi = 5`: 129 bootstraps for a shift, 144 for a rotation.
    Barrel,
    /// Rotations of a power-of-two width only (others use the barrel):
    /// an inverse butterfly, stage `k` swapping bits `2^k` apart, each
    /// pair one bootstrap of its control and its two bits where the set
    /// has room. The controls depend on the amount alone (pair `j` of
    /// stage `k` swaps when `(a mod 2^k > j) xor a_k`) and are computed
    /// beside the first stages. At 32 bits on `pi = 5`: 96 bootstraps,
    /// the barrel's depth 5.
    Butterfly,
    /// Stage `k` masks every bit with the amount's bit `a_k`,
    /// `m_j = a_k & y_j`, and moves the masks: `y'_i = y_i - m_i + m_j`
    /// with `j` the bit that moves to `i` (a clear zero, or the sign's
    /// mask, where a fill moves in). Where `a_k` is 0 every mask is 0 and
    /// `y` stays; where it is 1, `y_i - y_i + y_j` is the moved bit. A
    /// mask serves the bit it leaves and the bit it lands on, and two
    /// masks share a rotation (they share `a_k`) where the set has room:
    /// `n / 2` bootstraps a stage, 80 at 32 bits on `pi = 5` (`n` a
    /// stage, 160, on `pi = 3`), for shifts and rotations alike. Each stage adds two bootstraps' noise to every
    /// output bit, so it is chosen only where the last stage still fits.
    Masks,
}

thread_local! {
    static NETWORKS: Memo<(ParamsId, usize, usize, usize, Vec<ShiftNetwork>), ShiftNetwork> = Memo::new();
}

/// `x` shifted by the encrypted `amount`, modulo the width (a power of
/// two: `log2 n` stages; other widths use `ceil(log2 n)` stages and take
/// the amount modulo `2^stages`, shifting out completely beyond `n`),
/// by the network with the least predicted time for the builder's thread
/// count.
pub fn shift(
    b: &mut CircuitBuilder,
    x: &Bits,
    kind: ShiftKind,
    amount: &Bits,
) -> Result<Bits, Error> {
    let n = x.len();
    let rotation = butterfly_fits(kind, n);
    let (params, threads) = (b.params(), b.threads());
    let bits = amount.len().min(stages(n));
    let mut candidates = vec![ShiftNetwork::Barrel];
    if rotation {
        candidates.push(ShiftNetwork::Butterfly);
    }
    if masks_fit(b, x, amount)? {
        candidates.push(ShiftNetwork::Masks);
    }
    let network = NETWORKS.with(|memo| {
        memo.get_or((params.id, n, bits, threads, candidates.clone()), || {
            // Shifts of either direction and fill cost the same.
            let like = if rotation {
                ShiftKind::RotateLeft
            } else {
                ShiftKind::Left
            };
            cheapest(params, threads, &candidates, |s, network| {
                let x = Bits::input(s, n)?;
                let a = Bits::input(s, bits)?;
                shift_by(s, &x, like, &a, network)?.output(s)?;
                Ok(())
            })
            .unwrap_or(ShiftNetwork::Barrel)
        })
    });
    shift_by(b, x, kind, amount, network)
}

/// Whether [`ShiftNetwork::Masks`] keeps its masks at one bootstrap per
/// two (`pi >= 5`: the selector `y_a + 2 y_b + 4 a_k` at the margin-1/2
/// budget) or per one (`pi = 3`: `y + a_k`, margin 1) up to its last
/// stage, whose bits carry two more bootstraps' noise per earlier stage,
/// and gives bits within the margin-1 budget.
fn masks_fit(b: &CircuitBuilder, x: &Bits, amount: &Bits) -> Result<bool, Error> {
    let params = b.params();
    let k = stages(x.len()).min(amount.len());
    if k == 0 {
        return Ok(false);
    }
    let heaviest = |ws: &[Wire]| -> Result<u64, Error> {
        ws.iter()
            .map(|&w| Ok(b.quadratic_weight(w)?))
            .try_fold(0, |m, w: Result<u64, Error>| Ok(m.max(w?)))
    };
    let y = heaviest(x.wires())?.max(1) + 2 * (k as u64 - 1);
    let a = heaviest(&amount.wires()[..k])?.max(1);
    // The outputs are bits: within the margin-1 budget.
    let out = y + 2 <= params.budgets.one;
    Ok(out
        && if params.pi >= 5 {
            y + 4 * y + 16 * a <= params.budgets.half
        } else {
            y + a <= params.budgets.one
        })
}

/// [`shift`] by the given network (the barrel where the butterfly does
/// not apply).
pub fn shift_by(
    b: &mut CircuitBuilder,
    x: &Bits,
    kind: ShiftKind,
    amount: &Bits,
    network: ShiftNetwork,
) -> Result<Bits, Error> {
    if network == ShiftNetwork::Masks {
        return masks(b, x, kind, amount);
    }
    if network == ShiftNetwork::Butterfly && butterfly_fits(kind, x.len()) {
        if kind == ShiftKind::RotateLeft {
            return butterfly(b, x, amount);
        }
        // Rotating right is rotating the reversed bits left.
        let reversed = |v: &Bits| Bits::from_vec(v.wires().iter().rev().copied().collect());
        return Ok(reversed(&butterfly(b, &reversed(x), amount)?));
    }
    barrel(b, x, kind, amount)
}

/// Stages of a width: `ceil(log2 n)`.
fn stages(n: usize) -> usize {
    usize::BITS as usize - n.saturating_sub(1).leading_zeros() as usize
}

fn butterfly_fits(kind: ShiftKind, n: usize) -> bool {
    matches!(kind, ShiftKind::RotateLeft | ShiftKind::RotateRight) && n >= 4 && n.is_power_of_two()
}

/// `if s { moved } else { kept }`.
fn select(v: &[bool]) -> bool {
    if v[0] {
        v[1]
    } else {
        v[2]
    }
}

fn barrel(b: &mut CircuitBuilder, x: &Bits, kind: ShiftKind, amount: &Bits) -> Result<Bits, Error> {
    let n = x.len();
    let mut sel = Selectors::for_bits();
    let mut cur = x.clone();
    let zero = b.constant(0);
    for k in 0..stages(n).min(amount.len()) {
        let s = amount.wires()[k];
        let moved = shift_clear(b, &cur, kind, 1 << k);
        let picks: Vec<Function> = (0..n)
            .map(|i| Function::new(vec![s, moved.bit_or(i, zero), cur.bit_or(i, zero)], select))
            .collect();
        cur = Bits::from_vec(functions(b, &mut sel, &picks)?);
    }
    Ok(cur)
}

/// [`ShiftNetwork::Masks`].
fn masks(b: &mut CircuitBuilder, x: &Bits, kind: ShiftKind, amount: &Bits) -> Result<Bits, Error> {
    let n = x.len();
    let budget = b.params().budgets.one;
    let mut sel = Selectors::for_bits();
    let mut cur = x.clone();
    for k in 0..stages(n).min(amount.len()) {
        let ands: Vec<(Wire, Gate)> = cur.wires().iter().map(|&w| (w, Gate::And)).collect();
        let m = Bits::from_vec(gates_sharing(b, &mut sel, &ands, amount.wires()[k])?);
        let moved = shift_clear(b, &m, kind, 1 << k);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let mut terms = [
                (cur.wires()[i], 1),
                (m.wires()[i], -1),
                (moved.wires()[i], 1),
            ];
            // A mask made before (the same AND: a sign kept by an earlier
            // shift by the same amount) adds to its own noise: a bit that
            // would leave the bits' budget starts from a fresh copy.
            if b.weight_of(&terms)? > budget {
                terms[0].0 = sel.refresh(b, terms[0].0)?;
            }
            let y = b.linear(&terms, 0)?;
            // A bit: `y_i` where the mask is 0, `y_j` where it is 1.
            out.push(b.assume_range(y, 0, ONE, ONE)?);
        }
        cur = Bits::from_vec(out);
    }
    Ok(cur)
}

/// `x` rotated left by `amount` on an inverse butterfly (`x.len()` a power
/// of two). Stages `0 .. log2 n - 1` rotate each half by `a mod n/2`
/// (recursively, the halves side by side); then bit `j` of the low half
/// and bit `j` of the high half swap where `(a mod n/2 > j) xor a_top`.
fn butterfly(b: &mut CircuitBuilder, x: &Bits, amount: &Bits) -> Result<Bits, Error> {
    let n = x.len();
    let levels = n.trailing_zeros() as usize;
    let zero = b.constant(0);
    let a: Vec<Wire> = (0..levels)
        .map(|k| amount.wires().get(k).copied().unwrap_or(zero))
        .collect();
    let mut sel = Selectors::for_bits();
    let controls = rotation_controls(b, &mut sel, &a)?;
    let mut cur = x.wires().to_vec();
    for (k, c) in controls.iter().enumerate() {
        let d = 1 << k;
        let swaps: Vec<Function> = (0..n)
            .map(|i| Function::new(vec![c[i & (d - 1)], cur[i ^ d], cur[i]], select))
            .collect();
        cur = functions(b, &mut sel, &swaps)?;
    }
    Ok(Bits::from_vec(cur))
}

/// The butterfly's controls: `c[k][j] = (a mod 2^k > j) xor a_k` for
/// `j < 2^k`, from the amount bits `a` (one per stage). The thresholds
/// `t_d(j) = (a mod d > j)` are built two amount bits at a time: every
/// control and threshold of the next two stages is a function of
/// `(a_k, a_k+1, t_d(j mod d))`, three bits, two functions per bootstrap.
fn rotation_controls(
    b: &mut CircuitBuilder,
    sel: &mut Selectors,
    a: &[Wire],
) -> Result<Vec<Vec<Wire>>, Error> {
    /// Where an output goes: control `j` of a stage, or threshold `j`.
    enum Slot {
        Control(usize, usize),
        Threshold(usize),
    }
    let levels = a.len();
    let zero = b.constant(0);
    let mut controls: Vec<Vec<Wire>> = (0..levels).map(|k| vec![zero; 1 << k]).collect();
    let value = |v: &[bool], bits: usize| (0..bits).fold(0usize, |s, i| s | (v[i] as usize) << i);
    // Stages 0..=2, and t_8 where stage 3 exists, straight from a_0..a_2.
    let mut fs: Vec<Function> = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
    for k in 0..levels.min(3) {
        for j in 0..1usize << k {
            fs.push(Function::new(a[..=k].to_vec(), move |v: &[bool]| {
                (value(v, k) > j) != v[k]
            }));
            slots.push(Slot::Control(k, j));
        }
    }
    if levels > 3 {
        for j in 0..8 {
            fs.push(Function::new(a[..3].to_vec(), move |v: &[bool]| {
                value(v, 3) > j
            }));
            slots.push(Slot::Threshold(j));
        }
    }
    let mut t = place(b, sel, &fs, &slots, &mut controls, 8)?;
    // Then two stages per round, k and k + 1, from t_(2^k); and t_(2^(k+2)).
    let mut k = 3;
    while k < levels {
        let d = 1usize << k;
        let (u, v) = (a[k], a.get(k + 1).copied());
        let mut fs: Vec<Function> = Vec::new();
        let mut slots: Vec<Slot> = Vec::new();
        for (r, &tr) in t.iter().enumerate() {
            let inputs = vec![u, v.unwrap_or(zero), tr];
            fs.push(Function::new(inputs.clone(), |x: &[bool]| x[2] != x[0]));
            slots.push(Slot::Control(k, r));
            if v.is_some() {
                fs.push(Function::new(inputs.clone(), |x: &[bool]| {
                    (x[0] | x[2]) != x[1]
                }));
                slots.push(Slot::Control(k + 1, r));
                fs.push(Function::new(inputs.clone(), |x: &[bool]| {
                    (x[0] & x[2]) != x[1]
                }));
                slots.push(Slot::Control(k + 1, r + d));
            }
            if k + 2 < levels {
                for q in 0..4usize {
                    fs.push(Function::new(inputs.clone(), move |x: &[bool]| {
                        let hi = x[0] as usize + 2 * x[1] as usize;
                        hi > q || (hi == q && x[2])
                    }));
                    slots.push(Slot::Threshold(r + q * d));
                }
            }
        }
        t = place(b, sel, &fs, &slots, &mut controls, 4 * d)?;
        k += 2;
    }
    return Ok(controls);

    /// Computes `fs`, puts the controls in place and returns the
    /// thresholds (`count` of them, or none).
    fn place(
        b: &mut CircuitBuilder,
        sel: &mut Selectors,
        fs: &[Function],
        slots: &[Slot],
        controls: &mut [Vec<Wire>],
        count: usize,
    ) -> Result<Vec<Wire>, Error> {
        let out = functions(b, sel, fs)?;
        let mut t: Vec<Option<Wire>> = vec![None; count];
        for (slot, w) in slots.iter().zip(out) {
            match *slot {
                Slot::Control(k, j) => controls[k][j] = w,
                Slot::Threshold(j) => t[j] = Some(w),
            }
        }
        Ok(t.into_iter().flatten().collect())
    }
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
