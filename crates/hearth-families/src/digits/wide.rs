//! Wide redundant digits: radix `R = 2^k` (k = 2 or 3) with digits in
//! `[-(R - 1), R - 1]`, one ciphertext per `k` bits: fewer bootstraps per
//! bit than one signed-binary digit per ciphertext. Additions work on
//! radix-4 groups and comparisons on radix-8 groups (`hearth bench radix`
//! compares them with signed-binary digits on the count backend).
//!
//! * **Conversion** from signed-binary digits is free (`k` digits summed
//!   with weights `1, 2, .., 2^(k-1)`: quadratic weight `(4^k - 1) / 3`);
//!   back, one blind rotation per wide digit yields its `k` binary digits.
//! * **Addition** is carry-free with one bootstrap per digit: with
//!   `s_i = x_i + y_i`, the transfer `t_i = sign(s_i)` when `|s_i| >= T`
//!   (else 0) and the digit `z_i = s_i - R t_i + t_(i-1)` stays linear and
//!   unrefreshed while the weights the builder tracks allow (`T = 2`: the
//!   radix-8 table must be negacyclic over `[-14, 14]`).
//! * **Sign and comparisons**: with every `|z_i| < R`, the sign of the
//!   value is that of its most significant nonzero digit. One bootstrap
//!   per digit gives its sign trit, and the trits go through the signum
//!   reduction of signed-binary digits ([`super::sign`]: groups of four,
//!   the last three answering the comparison). Equality tests each digit for zero
//!   and counts the nonzero ones, up to 15 per bootstrap.

use super::Digits;
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::comparison::Comparison;
use crate::crypto::lut::Lut;
use crate::error::Error;

/// An integer as wide redundant digits, least significant first.
#[derive(Clone, Debug)]
pub struct Wide {
    digits: Vec<Wire>,
    k: u32,
}

impl Wide {
    /// `n` encrypted input digits of radix `2^k`, each in `[-(R-1), R-1]`.
    pub fn input(b: &mut CircuitBuilder, n: usize, k: u32) -> Result<Self, Error> {
        check_k(b, k)?;
        let bound = (1i64 << k) - 1;
        let digits = (0..n)
            .map(|_| b.input(-bound, bound))
            .collect::<Result<_, _>>()?;
        Ok(Wide { digits, k })
    }

    /// Groups signed-binary digits `k` at a time: free.
    pub fn from_digits(b: &mut CircuitBuilder, x: &Digits, k: u32) -> Result<Self, Error> {
        check_k(b, k)?;
        let digits = x
            .wires()
            .chunks(k as usize)
            .map(|group| {
                let terms: Vec<(Wire, i64)> = group
                    .iter()
                    .enumerate()
                    .map(|(j, &w)| (w, 1 << j))
                    .collect();
                Ok(b.linear(&terms, 0)?)
            })
            .collect::<Result<_, Error>>()?;
        Ok(Wide { digits, k })
    }

    /// The signed-binary digits `sign(v) * bit_j(|v|)` of each wide digit
    /// `v`: `k` tables on one selector (one blind rotation for radix 4).
    pub fn to_digits(&self, b: &mut CircuitBuilder) -> Result<Digits, Error> {
        let pi = b.params().pi;
        let bound = self.bound();
        let luts: Vec<Lut> = (0..self.k)
            .map(|j| {
                Lut::from_fn(pi, -bound, bound, move |v| {
                    v.signum() * ((v.abs() >> j) & 1)
                })
            })
            .collect::<Result<_, _>>()?;
        let refs: Vec<&Lut> = luts.iter().collect();
        let mut sel = Selectors::new();
        let mut out = Vec::with_capacity(self.digits.len() * self.k as usize);
        // One blind rotation when the outputs fit the message space.
        let shared = self.k as i64 * (2 * bound + 1) <= 1 << (pi - 1);
        for &d in &self.digits {
            let s = sel.linear(b, &[(d, 1)], 0)?;
            if shared {
                out.extend(b.bootstrap_many(s, &refs)?);
            } else {
                for l in &refs {
                    out.push(b.bootstrap(s, l)?);
                }
            }
        }
        Digits::from_vec(out).trimmed(b)
    }

    /// Number of wide digits.
    pub fn len(&self) -> usize {
        self.digits.len()
    }

    /// Whether it has no digits.
    pub fn is_empty(&self) -> bool {
        self.digits.is_empty()
    }

    /// Bits per digit.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The digit wires, least significant first.
    pub fn wires(&self) -> &[Wire] {
        &self.digits
    }

    /// Marks every digit as a circuit output.
    pub fn output(&self, b: &mut CircuitBuilder) -> Result<Vec<usize>, Error> {
        Ok(self
            .digits
            .iter()
            .map(|&w| b.output(w))
            .collect::<Result<_, _>>()?)
    }

    fn bound(&self) -> i64 {
        (1i64 << self.k) - 1
    }

    fn digit_or_zero(&self, b: &mut CircuitBuilder, i: usize) -> Wire {
        self.digits.get(i).copied().unwrap_or_else(|| b.constant(0))
    }

    /// `-self`: free.
    pub fn neg(&self, b: &mut CircuitBuilder) -> Result<Self, Error> {
        let digits = self
            .digits
            .iter()
            .map(|&w| b.neg(w))
            .collect::<Result<_, _>>()?;
        Ok(Wide { digits, k: self.k })
    }
}

/// Radix 4 and 8 need `pi >= 5` (sums of two radix-8 digits span 29
/// values of `Z_32`).
fn check_k(b: &CircuitBuilder, k: u32) -> Result<(), Error> {
    if !(2..=3).contains(&k) || b.params().pi < 5 {
        return Err(Error::UnsupportedParams {
            params: b.params().id,
            family: "wide redundant digits",
            reason: format!(
                "radix 2^{k}: digits of 2 or 3 bits on pi >= 5 (this set has pi = {})",
                b.params().pi
            ),
        });
    }
    Ok(())
}

fn same_radix(x: &Wide, y: &Wide) -> Result<u32, Error> {
    if x.k != y.k {
        return Err(Error::Internal(format!(
            "wide digits of radix 2^{} and 2^{} do not mix",
            x.k, y.k
        )));
    }
    Ok(x.k)
}

/// The transfer threshold: any `T` in `[2, R - 1]` keeps every new digit
/// within `[-(R - 1), R - 1]`; 2 also makes radix 8's table negacyclic.
const THRESHOLD: i64 = 2;

/// `x + y`: one bootstrap per digit, depth 1; `max(len) + 1` digits.
pub fn add(b: &mut CircuitBuilder, x: &Wide, y: &Wide) -> Result<Wide, Error> {
    let k = same_radix(x, y)?;
    let r = 1i64 << k;
    let bound = r - 1;
    let n = x.len().max(y.len());
    let lut = Lut::from_fn(b.params().pi, -2 * bound, 2 * bound, |s| {
        if s.abs() >= THRESHOLD {
            s.signum()
        } else {
            0
        }
    })?;
    let room = b.budget().saturating_sub((r * r + 1) as u64);
    let mut sel = Selectors::new();
    let mut sums = Vec::with_capacity(n);
    let mut t = Vec::with_capacity(n);
    for i in 0..n {
        let (xi, yi) = (x.digit_or_zero(b, i), y.digit_or_zero(b, i));
        // Room for `- R t_i + t_(i-1)`, so the digit stays refreshable.
        let s = sel.linear_within(b, &[(xi, 1), (yi, 1)], 0, room)?;
        t.push(b.bootstrap(s, &lut)?);
        sums.push(s);
    }
    let zero = b.constant(0);
    let mut digits = Vec::with_capacity(n + 1);
    for i in 0..n {
        let prev = if i > 0 { t[i - 1] } else { zero };
        let z = b.linear(&[(sums[i], 1), (t[i], -r), (prev, 1)], 0)?;
        digits.push(b.assume_range(z, -bound, bound, 1)?);
    }
    digits.push(t.last().copied().unwrap_or(zero));
    Ok(Wide { digits, k })
}

/// `x - y`.
pub fn sub(b: &mut CircuitBuilder, x: &Wide, y: &Wide) -> Result<Wide, Error> {
    let ny = y.neg(b)?;
    add(b, x, &ny)
}

/// `x <op> y` as a digit 0 or 1.
pub fn compare(b: &mut CircuitBuilder, x: &Wide, y: &Wide, op: Comparison) -> Result<Wire, Error> {
    let d = sub(b, x, y)?;
    decide(b, &d, op)
}

/// `d <op> 0` as a digit 0 or 1, for wide digits whose most significant
/// nonzero one has the sign of the value (every `|d_i| < R`).
pub(crate) fn decide(b: &mut CircuitBuilder, d: &Wide, op: Comparison) -> Result<Wire, Error> {
    match op {
        Comparison::Eq | Comparison::Ne => zero_test(b, d, op == Comparison::Eq),
        _ => {
            let trits = sign_trits(b, d)?;
            super::sign_tree::reduce(b, &trits, 3, |s| op.holds_for_sign(s) as i64)
        }
    }
}

/// The sign trit of each digit, least significant first (a digit already
/// in [-1, 1], such as the top transfer, is its own): the trits have the
/// sign of `x` at their first nonzero one from the top, as digits would.
fn sign_trits(b: &mut CircuitBuilder, x: &Wide) -> Result<Vec<Wire>, Error> {
    let bound = x.bound();
    let sign = Lut::from_fn(b.params().pi, -bound, bound, i64::signum)?;
    let mut sel = Selectors::new();
    x.wires()
        .iter()
        .map(|&d| {
            if super::is_digit(b, d)? {
                return Ok(d);
            }
            let s = sel.linear(b, &[(d, 1)], 0)?;
            Ok(b.bootstrap(s, &sign)?)
        })
        .collect()
}

/// `x == 0` (or `x != 0`) as a digit: each digit tested for zero, the
/// nonzero ones counted up to 15 per bootstrap.
fn zero_test(b: &mut CircuitBuilder, x: &Wide, eq: bool) -> Result<Wire, Error> {
    let pi = b.params().pi;
    let bound = x.bound();
    let nonzero = Lut::from_fn(pi, -bound, bound, |v| (v != 0) as i64)?;
    let mut sel = Selectors::new();
    let mut flags = Vec::with_capacity(x.len());
    for &d in x.wires() {
        match b.constant_value(d)? {
            Some(0) => {}
            Some(_) => return Ok(b.constant(!eq as i64)),
            None => {
                let s = sel.linear(b, &[(d, 1)], 0)?;
                flags.push(b.bootstrap(s, &nonzero)?);
            }
        }
    }
    any_flag(b, flags, 15, |any| (any != eq) as i64)
}

/// `last(some flag is set)` for flags of 0 or 1: counted up to
/// `2^(pi-1) - 1` per bootstrap (each count a flag again), the last table
/// reading the count of at most `last_group` flags.
pub(crate) fn any_flag(
    b: &mut CircuitBuilder,
    mut flags: Vec<Wire>,
    last_group: usize,
    last: impl Fn(bool) -> i64,
) -> Result<Wire, Error> {
    let p = b.params();
    let (pi, budget) = (p.pi, p.budgets.half as usize);
    let group = (p.message_modulus() as usize / 2 - 1).min(budget);
    if group < 2 {
        return Err(Error::UnsupportedParams {
            params: p.id,
            family: "signed-binary digits",
            reason: "counting flags needs pi >= 3 and a budget of 2 at margin 1/2".into(),
        });
    }
    let mut sel = Selectors::new();
    let mut count = |b: &mut CircuitBuilder, flags: &[Wire], lut: &Lut| -> Result<Wire, Error> {
        let terms: Vec<(Wire, i64)> = flags.iter().map(|&w| (w, 1)).collect();
        let s = sel.linear(b, &terms, 0)?;
        Ok(b.bootstrap(s, lut)?)
    };
    loop {
        if flags.len() <= last_group.min(budget) {
            let lut = Lut::from_fn(pi, 0, flags.len() as i64, |v| last(v != 0))?;
            return count(b, &flags, &lut);
        }
        let any = Lut::from_fn(pi, 0, group as i64, |v| (v != 0) as i64)?;
        flags = flags
            .chunks(group)
            .map(|g| count(b, g, &any))
            .collect::<Result<_, Error>>()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, ClearBackend, CountBackend};
    use crate::crypto::params::{DIGITS_128, INSECURE_TEST_DIGITS as P};
    use rand::{Rng, SeedableRng};

    fn signed(r: u64) -> i64 {
        if r >= 16 {
            r as i64 - 32
        } else {
            r as i64
        }
    }

    fn value(digits: &[i64], radix: i64) -> i64 {
        digits.iter().rev().fold(0, |acc, &d| acc * radix + d)
    }

    /// `(x + y) + w`, `x - y`, every comparison of `x + y` with `w`
    /// (unrefreshed operands), and the sum back as binary digits, against
    /// integer arithmetic on random digit strings (every digit value).
    #[test]
    fn composed_operations_are_exact() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(4);
        for k in [2u32, 3] {
            let radix = 1i64 << k;
            let bound = radix - 1;
            for n in [1usize, 2, 3, 5] {
                let mut b = CircuitBuilder::new(&P);
                let x = Wide::input(&mut b, n, k).unwrap();
                let y = Wide::input(&mut b, n, k).unwrap();
                let w = Wide::input(&mut b, n, k).unwrap();
                let s = add(&mut b, &x, &y).unwrap();
                let s2 = add(&mut b, &s, &w).unwrap();
                let d = sub(&mut b, &x, &y).unwrap();
                let mut lens = vec![s.len(), s2.len(), d.len()];
                s.output(&mut b).unwrap();
                s2.output(&mut b).unwrap();
                d.output(&mut b).unwrap();
                for op in Comparison::ALL {
                    let c = compare(&mut b, &s, &w, op).unwrap();
                    b.output(c).unwrap();
                    lens.push(1);
                }
                let bin = s2.to_digits(&mut b).unwrap();
                bin.output(&mut b).unwrap();
                lens.push(bin.len());
                let c = b.build();
                for _ in 0..2000 {
                    let vals: Vec<Vec<i64>> = (0..3)
                        .map(|_| (0..n).map(|_| rng.gen_range(-bound..=bound)).collect())
                        .collect();
                    let ins: Vec<u64> = vals
                        .iter()
                        .flatten()
                        .map(|&v| v.rem_euclid(32) as u64)
                        .collect();
                    let out: Vec<i64> = ClearBackend
                        .evaluate(&c, &ins)
                        .unwrap()
                        .into_iter()
                        .map(signed)
                        .collect();
                    let (xv, yv, wv) = (
                        value(&vals[0], radix),
                        value(&vals[1], radix),
                        value(&vals[2], radix),
                    );
                    let mut at = 0;
                    let mut next = |len: usize| {
                        let part = out[at..at + len].to_vec();
                        at += len;
                        part
                    };
                    let ctx = format!("k={k} n={n} x={xv} y={yv} w={wv}");
                    let sum = next(lens[0]);
                    assert!(sum.iter().all(|d| d.abs() <= bound), "{ctx}");
                    assert_eq!(value(&sum, radix), xv + yv, "{ctx}");
                    assert_eq!(value(&next(lens[1]), radix), xv + yv + wv, "{ctx}");
                    assert_eq!(value(&next(lens[2]), radix), xv - yv, "{ctx}");
                    for (j, op) in Comparison::ALL.into_iter().enumerate() {
                        let got = next(lens[3 + j])[0];
                        assert_eq!(got, op.holds(xv + yv, wv) as i64, "{ctx} {op:?}");
                    }
                    let bin = next(lens[9]);
                    assert_eq!(super::super::value_of(&bin), (xv + yv + wv).into(), "{ctx}");
                }
            }
        }
    }

    /// From signed-binary digits and back, through an addition.
    #[test]
    fn conversions_round_trip() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for k in [2u32, 3] {
            let mut b = CircuitBuilder::new(&P);
            let x = Digits::input(&mut b, 7).unwrap();
            let y = Digits::input(&mut b, 5).unwrap();
            let wx = Wide::from_digits(&mut b, &x, k).unwrap();
            let wy = Wide::from_digits(&mut b, &y, k).unwrap();
            let s = add(&mut b, &wx, &wy).unwrap().to_digits(&mut b).unwrap();
            s.output(&mut b).unwrap();
            let c = b.build();
            for _ in 0..3000 {
                let ds: Vec<i64> = (0..12).map(|_| rng.gen_range(-1..=1)).collect();
                let ins: Vec<u64> = ds.iter().map(|&v| v.rem_euclid(32) as u64).collect();
                let out: Vec<i64> = ClearBackend
                    .evaluate(&c, &ins)
                    .unwrap()
                    .into_iter()
                    .map(signed)
                    .collect();
                let want = super::super::value_of(&ds[..7]) + super::super::value_of(&ds[7..]);
                assert!(out.iter().all(|d| d.abs() <= 1));
                assert_eq!(super::super::value_of(&out), want, "k={k} {ds:?}");
            }
        }
    }

    #[test]
    fn an_addition_costs_one_bootstrap_per_digit() {
        for k in [2u32, 3] {
            let mut b = CircuitBuilder::new(&DIGITS_128);
            let x = Wide::input(&mut b, 16, k).unwrap();
            let y = Wide::input(&mut b, 16, k).unwrap();
            add(&mut b, &x, &y).unwrap().output(&mut b).unwrap();
            let c = b.build();
            assert_eq!(c.stats().pbs, 16);
            assert_eq!(c.stats().depth, 1);
            let _ = CountBackend;
        }
    }
}
