//! Bitwise operations and bit manipulation.
//!
//! Gates apply bit by bit ([`super::gates`]); a clear operand folds every
//! gate to a constant, a copy or a negation, so operations with
//! immediates are free. Bit-field clear / insert / extract and bit or byte
//! reversal are rewiring (free). Population count sums the bits by column
//! compression; count leading zeros ORs the bits from the top down (a
//! prefix, chained or parallel by the thread count) and counts the
//! positions still zero.

use super::counters::{sum_columns, CompressKind};
use super::gates::{gate, not, Gate};
use super::{Bits, ONE};
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::error::Error;

/// A two-input gate applied bit by bit (the shorter operand zero-extended).
pub fn bitwise(b: &mut CircuitBuilder, g: Gate, x: &Bits, y: &Bits) -> Result<Bits, Error> {
    let mut sel = Selectors::for_bits();
    let zero = b.constant(0);
    let n = x.len().max(y.len());
    let out = (0..n)
        .map(|i| gate(b, &mut sel, g, x.bit_or(i, zero), y.bit_or(i, zero)))
        .collect::<Result<_, _>>()?;
    Ok(Bits::from_vec(out))
}

/// Every bit negated (free).
pub fn not_bits(b: &mut CircuitBuilder, x: &Bits) -> Result<Bits, Error> {
    let out = x
        .wires()
        .iter()
        .map(|&w| not(b, w))
        .collect::<Result<_, _>>()?;
    Ok(Bits::from_vec(out))
}

/// Bits `lsb .. lsb + width` cleared (ARM's BFC; free).
pub fn field_clear(b: &mut CircuitBuilder, x: &Bits, lsb: usize, width: usize) -> Bits {
    let zero = b.constant(0);
    let out = x
        .wires()
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if (lsb..lsb + width).contains(&i) {
                zero
            } else {
                w
            }
        })
        .collect();
    Bits::from_vec(out)
}

/// The low `width` bits of `y` written into `x` at `lsb` (ARM's BFI; free).
pub fn field_insert(b: &mut CircuitBuilder, x: &Bits, y: &Bits, lsb: usize, width: usize) -> Bits {
    let zero = b.constant(0);
    let out = x
        .wires()
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if (lsb..lsb + width).contains(&i) {
                y.bit_or(i - lsb, zero)
            } else {
                w
            }
        })
        .collect();
    Bits::from_vec(out)
}

/// Bits `lsb .. lsb + width` of `x` as an `n`-bit value, zero- or
/// sign-extended (ARM's UBFX / SBFX; free).
pub fn field_extract(
    b: &mut CircuitBuilder,
    x: &Bits,
    lsb: usize,
    width: usize,
    n: usize,
    signed: bool,
) -> Bits {
    let zero = b.constant(0);
    let field: Vec<Wire> = (lsb..lsb + width).map(|i| x.bit_or(i, zero)).collect();
    let fill = if signed {
        field.last().copied().unwrap_or(zero)
    } else {
        zero
    };
    Bits::from_vec(
        (0..n)
            .map(|i| field.get(i).copied().unwrap_or(fill))
            .collect(),
    )
}

/// The bits in reverse order (free).
pub fn reverse_bits(x: &Bits) -> Bits {
    Bits::from_vec(x.wires().iter().rev().copied().collect())
}

/// The bytes in reverse order (free; the width must be whole bytes).
pub fn swap_bytes(x: &Bits) -> Bits {
    let w = x.wires();
    let bytes = w.len() / 8;
    let out = (0..w.len())
        .map(|i| w[(bytes - 1 - i / 8) * 8 + i % 8])
        .collect();
    Bits::from_vec(out)
}

/// The number of set bits, on `n` bits (`n` large enough for the width).
pub fn count_ones(b: &mut CircuitBuilder, x: &Bits, n: usize) -> Result<Bits, Error> {
    sum_columns(b, vec![x.wires().to_vec()], n, CompressKind::Dadda)
}

/// The number of leading zeros (from the top), on `n` bits. With `p_k` the
/// OR of the `k + 1` highest bits, `z_k = not p_k` is a thermometer code
/// (ones, then zeros) whose count is the answer, and bit `j` of the count
/// of a thermometer code is the alternating sum `z_(2^j - 1) -
/// z_(2 * 2^j - 1) + z_(3 * 2^j - 1) - ...`: linear. Sums too heavy for
/// the budget are split into chunks that start with a `+` term (each 0 or
/// 1, one refresh each); a heavy top bit is refreshed first.
pub fn leading_zeros(b: &mut CircuitBuilder, x: &Bits, n: usize) -> Result<Bits, Error> {
    let mut sel = Selectors::for_bits();
    // From the top: p_k = OR of the k + 1 highest bits.
    let top_down: Vec<Wire> = x.wires().iter().rev().copied().collect();
    let prefix = prefix_or(b, &mut sel, &top_down)?;
    let z: Vec<Wire> = prefix
        .iter()
        .map(|&p| not(b, p))
        .collect::<Result<_, _>>()?;
    let len = z.len();
    let budget = b.params().budgets.one;
    let zero = b.constant(0);
    let mut out = vec![zero; n];
    for (j, bit) in out.iter_mut().enumerate() {
        let stride = 1usize.checked_shl(j as u32).unwrap_or(usize::MAX);
        let terms: Vec<(Wire, i64)> = (1..)
            .map_while(|m: usize| {
                let i = m.checked_mul(stride)? - 1;
                (i < len).then(|| (z[i], if m % 2 == 1 { 1 } else { -1 }))
            })
            .collect();
        if terms.is_empty() {
            continue;
        }
        // Chunks of an even number of terms (each starts with a `+`).
        let mut chunks: Vec<Vec<(Wire, i64)>> = vec![Vec::new()];
        for pair in terms.chunks(2) {
            // `z_0` is the top input bit itself, possibly a heavy sum:
            // refresh a term when its pair alone is over the budget.
            let mut pair = pair.to_vec();
            if b.weight_of(&pair)? > budget {
                for t in &mut pair {
                    if b.quadratic_weight(t.0)? > 1 {
                        t.0 = sel.refresh(b, t.0)?;
                    }
                }
            }
            let pair = &pair[..];
            let mut grown = chunks.last().expect("one chunk").clone();
            grown.extend_from_slice(pair);
            if !chunks.last().expect("one chunk").is_empty() && b.weight_of(&grown)? > budget {
                chunks.push(pair.to_vec());
            } else {
                *chunks.last_mut().expect("one chunk") = grown;
            }
        }
        let parts: Vec<(Wire, i64)> = if chunks.len() == 1 {
            chunks
                .pop()
                .map(|c| c.into_iter().collect())
                .unwrap_or_default()
        } else {
            chunks
                .into_iter()
                .map(|c| {
                    let s = b.linear(&c, 0)?;
                    let s = b.assume_range(s, 0, ONE, ONE)?;
                    Ok((sel.refresh(b, s)?, 1))
                })
                .collect::<Result<_, Error>>()?
        };
        let s = b.linear(&parts, 0)?;
        *bit = b.assume_range(s, 0, ONE, ONE)?;
    }
    Ok(Bits::from_vec(out))
}

/// `p_k = v_0 or ... or v_k`: a chain on few threads, Sklansky's network
/// where `max(#PBS / threads, depth)` is lower.
fn prefix_or(b: &mut CircuitBuilder, sel: &mut Selectors, v: &[Wire]) -> Result<Vec<Wire>, Error> {
    let n = v.len();
    let levels = usize::BITS as usize - n.saturating_sub(1).leading_zeros() as usize;
    let threads = b.threads();
    let chain = n.saturating_sub(1);
    let sklansky = n / 2 * levels;
    let mut p = v.to_vec();
    if chain.max(1) <= sklansky.div_ceil(threads).max(levels) {
        for k in 1..n {
            p[k] = gate(b, sel, Gate::Or, p[k - 1], v[k])?;
        }
        return Ok(p);
    }
    let mut half = 1;
    while half < n {
        for i in 0..n {
            if i & half != 0 {
                let j = (i & !(2 * half - 1)) + half - 1;
                p[i] = gate(b, sel, Gate::Or, p[j], p[i])?;
            }
        }
        half *= 2;
    }
    Ok(p)
}
