//! Conversion between signed-binary digits and two's-complement bits.
//!
//! Bit `i` of `X = H 2^i + L` (with `L` the value of digits `0..i`) in two's
//! complement is bit 0 of `d_i - [L < 0]`: only the *sign* of each prefix
//! `L` is needed, and the sign of a digit string is its most significant
//! non-zero digit. So all prefix signs come from a parallel prefix (radix 4,
//! Kogge-Stone shape): level `l` combines, per position, four states
//! `4^(l-1)` apart as `sign(8 s_3 + 4 s_2 + 2 s_1 + s_0)` (weight 85); the
//! first level reads the digits themselves. Then one bootstrap per bit reads
//! `3 d_i + sign(L)`. Depth `ceil(log_4 n) + 1`, where the GPU paper's
//! conversion (Algorithm 9) runs `n` sequential steps of two tables each.
//!
//! The other way is free: two's-complement bits `b_0 .. b_(w-1)` are the
//! digits `b_0, ..., b_(w-2), -b_(w-1)`.

use super::sign::group_size;
use super::Digits;
use crate::circuit::Selectors;
use crate::circuit::{CircuitBuilder, Wire};
use crate::crypto::lut::Lut;
use crate::error::Error;

/// The two's-complement bits of `x` (digits in {0, 1}, least significant
/// first), `len(x) + 1` of them: the last is the sign bit.
pub fn to_bits(b: &mut CircuitBuilder, x: &Digits) -> Result<Vec<Wire>, Error> {
    let n = x.len();
    let pi = b.params().pi;
    let g = group_size(b);
    let mut sel = Selectors::new();
    // states[i]: sign of digits [i - span + 1, i] (all of 0..=i once span >= n).
    let mut states: Vec<Wire> = x.wires().to_vec();
    let mut span = 1;
    while span < n {
        let mut next = Vec::with_capacity(n);
        for i in 0..n {
            let terms: Vec<(Wire, i64)> = (0..g)
                .take_while(|&k| k * span <= i)
                .map(|k| (states[i - k * span], 1i64 << (g - 1 - k)))
                .collect();
            let bound: i64 = terms.iter().map(|&(_, w)| w).sum();
            let s = sel.linear(b, &terms, 0)?;
            let lut = Lut::from_fn(pi, -bound, bound, i64::signum)?;
            next.push(b.bootstrap(s, &lut)?);
        }
        states = next;
        span *= g;
    }
    // bit_i = (d_i - [sign(L_i) < 0]) mod 2, with L_i the digits below i.
    let bit = Lut::from_fn(pi, -4, 4, |t| {
        let d = (t + 1).div_euclid(3);
        let s = t - 3 * d;
        (d - (s < 0) as i64).rem_euclid(2)
    })?;
    let zero = b.constant(0);
    let mut bits = Vec::with_capacity(n + 1);
    for i in 0..=n {
        let d = x.digit_or_zero(b, i);
        let s = if i == 0 { zero } else { states[i - 1] };
        let t = sel.linear(b, &[(d, 3), (s, 1)], 0)?;
        bits.push(b.bootstrap(t, &bit)?);
    }
    Ok(bits)
}

/// `x` wrapped to `n` bits like a two's-complement `n`-bit integer: the
/// value congruent to `x` modulo `2^n` in `[-2^(n-1), 2^(n-1))`, as `n`
/// digits (bits, the top one negated). Digits from position `n` on are
/// multiples of `2^n` and are dropped; the rest go through [`to_bits`].
pub fn wrap(b: &mut CircuitBuilder, x: &Digits, n: usize) -> Result<Digits, Error> {
    if n == 0 {
        return Ok(Digits::default());
    }
    let (low, _) = x.split(n);
    let mut bits = to_bits(b, &low)?;
    // `low` has at most n digits, so its n + 1 bits hold it; keep n
    // (sign-extended when `low` was shorter).
    let sign = *bits.last().expect("to_bits returns len + 1 bits");
    bits.resize(n, sign);
    bits.truncate(n);
    from_bits(b, &bits)
}

/// The digits of a two's-complement bit string (free).
pub fn from_bits(b: &mut CircuitBuilder, bits: &[Wire]) -> Result<Digits, Error> {
    let mut digits = bits.to_vec();
    if let Some(top) = digits.last_mut() {
        *top = b.neg(*top)?;
    }
    Digits::from_wires(b, digits)
}
