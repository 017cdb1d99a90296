//! Parities: the XOR of any number of bits, with a function of up to three
//! more, in one bootstrap.
//!
//! A bit is stored as 0 or 2 (`ONE`), so a sum of bits is even and a
//! quarter of the ring (`m / 4`, 8 on `pi = 5`) times it is 0 or `m / 2`
//! by the sum's parity alone: the XOR of its bits. A negacyclic table
//! gives opposite outputs half the ring apart, which is exactly an XOR
//! with that parity. Added to the selector `y0 + 2 y1 + 4 y2` of up to
//! `pi - 2` clean bits (even positions of the ring's first half), one
//! table reads `parity ^ h(y)` for any `h`, at a margin of one unit. With
//! no `y`, the table reads the parity alone (outputs half the ring apart:
//! the widest margin).
//!
//! Stream ciphers are made of such steps: Kreyvium's state bits are
//! `a ^ b ^ c ^ d ^ (e & f)`, one bootstrap each, where gates one at a
//! time ([`super::gates`]) would pay for every XOR. The weight of `m / 4`
//! times a sum grows as `(m / 4)^2` per bit (64 on `pi = 5`): the margin-1
//! budget of `DIGITS_KS32_128` takes 57 fresh bits, its margin-2 budget
//! (a parity alone) 283; longer sums are split, their parts refreshed
//! first.

use super::gates::{not, reduce, threshold};
use super::ONE;
use crate::circuit::{CircuitBuilder, Selectors, Wire};
use crate::crypto::lut::Lut;
use crate::crypto::params::Margin;
use crate::error::Error;

/// `xor(xs) ^ h(ys)` as a bit, where every `x` is a bit or a sum of bits
/// (any even value: its parity is read) and every `y` a bit. One
/// bootstrap; none where the result is a constant, a copy or a negation of
/// one bit. Beside up to `pi - 2` distinct encrypted `ys` (constants
/// folded); with more, `h` is a gate of its own first (two bootstraps).
pub fn xor_with(
    b: &mut CircuitBuilder,
    xs: &[Wire],
    ys: &[Wire],
    h: &dyn Fn(&[bool]) -> bool,
) -> Result<Wire, Error> {
    let m = b.params().message_modulus() as i64;
    let pi = b.params().pi;
    if pi < 3 {
        return Err(Error::Config(format!(
            "a parity needs pi >= 3, {} has {pi}",
            b.params().name
        )));
    }
    // Constants fold: into a flip for the xs, into h for the ys.
    let mut flip = false;
    let mut sums = Vec::with_capacity(xs.len());
    for &x in xs {
        match b.constant_value(x)? {
            Some(v) if v.rem_euclid(2) != 0 => {
                return Err(Error::Config(format!(
                    "a parity reads even values; the constant {v} is odd"
                )));
            }
            Some(v) => flip ^= v.rem_euclid(2 * ONE) == ONE,
            None => sums.push(x),
        }
    }
    let r = reduce(b, ys, h)?;
    if r.inputs.len() > pi as usize - 2 {
        // Too many bits beside the parity for this ring: `h` first, as a
        // gate of its own (one bootstrap where a form exists), then its
        // output beside the parity.
        let g = threshold(b, &mut Selectors::for_bits(), ys, h)?.ok_or_else(|| {
            Error::Config(format!(
                "a parity with a function of {} bits on {} (pi = {pi}): no one-bootstrap form",
                r.inputs.len(),
                b.params().name
            ))
        })?;
        return xor_with(b, xs, &[g], &|v| v[0]);
    }
    let j = r.inputs.len();
    let all = (1u64 << (1 << j)) - 1;
    let constant_h = r.truth == 0 || r.truth == all;
    // A constant h is a flip; the table then reads the parity alone.
    flip ^= constant_h && r.truth == all;
    let truth = if constant_h { 0 } else { r.truth };
    for &x in &sums {
        let range = b.range(x)?;
        if range.residues(m as u64).iter().any(|v| v % 2 != 0) {
            return Err(Error::Config(
                "a parity reads sums of bits; this value can be odd".into(),
            ));
        }
    }
    // A copy or a negation of one bit is free.
    if constant_h && sums.len() <= 1 {
        let Some(&x) = sums.first() else {
            return Ok(b.constant(if flip { ONE } else { 0 }));
        };
        if super::is_bit(b, x)? && (b.range(x)?.lo, b.range(x)?.hi) == (0, ONE) {
            return if flip { not(b, x) } else { Ok(x) };
        }
    }
    // The ys must be clean bits: exactly 0 or 2.
    let mut ys = Vec::with_capacity(j);
    for &y in &r.inputs {
        let range = b.range(y)?;
        ys.push(if (range.lo, range.hi) == (0, ONE) {
            y
        } else {
            super::gates::refresh(b, y)?
        });
    }
    let margin = if constant_h {
        Margin::within(m as u64 / 2)
    } else {
        Margin::One
    };
    let budget = b.params().budgets.at(margin);
    let quarter = m / 4;
    // Sums too heavy for one selector: parts refreshed first, each by a
    // parity of its own (the widest margin).
    loop {
        let mut terms: Vec<(Wire, i64)> = sums.iter().map(|&x| (x, quarter)).collect();
        terms.extend(ys.iter().enumerate().map(|(i, &y)| (y, 1i64 << i)));
        if b.weight_of(&terms)? <= budget || sums.len() <= 1 {
            break;
        }
        let half = sums.len() / 2;
        let part = xor_with(b, &sums[..half], &[], &|_| false)?;
        sums.splice(..half, [part]);
    }
    let mut terms: Vec<(Wire, i64)> = sums.iter().map(|&x| (x, quarter)).collect();
    terms.extend(ys.iter().enumerate().map(|(i, &y)| (y, 1i64 << i)));
    let selector = b.linear(&terms, if flip { m / 2 } else { 0 })?;
    // Table: on the first half's even positions `2 l`, `h` of the bits of
    // `l` (positions no input reaches copy the last one reached), -1 / +1;
    // the second half follows by negacyclicity: the parity's XOR.
    // A parity alone reads 0 and m / 2 only: one point, the widest margin.
    let reached = 1i64 << j;
    let last = if constant_h { 1 } else { m / 2 };
    let points: Vec<(i64, i64)> = (0..last)
        .step_by(2)
        .flat_map(|p| {
            let l = (p / 2).min(reached - 1);
            let v = if (truth >> l) & 1 == 1 { 1 } else { -1 };
            [(p, v), (p + m / 2, -v)]
        })
        .collect();
    let lut = Lut::from_points(pi, &points)?;
    let out = b.bootstrap(selector, &lut)?;
    let out = b.add_const(out, 1)?;
    Ok(b.assume_range(out, 0, ONE, ONE)?)
}

/// `xor(xs)`: [`xor_with`] with no function.
pub fn xor_all(b: &mut CircuitBuilder, xs: &[Wire]) -> Result<Wire, Error> {
    xor_with(b, xs, &[], &|_| false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, ClearBackend};
    use crate::crypto::params::{DIGITS_KS32_128, INSECURE_TEST_BITS};
    use rand::{Rng, SeedableRng};

    /// Every input combination of `n_x` bits XORed with every function of
    /// `n_y` bits, on the clear backend, against Rust's `^`.
    fn exhaustive(params: &'static crate::crypto::params::ParameterSet, n_x: usize, n_y: usize) {
        for truth in 0..1u64 << (1 << n_y) {
            let mut b = CircuitBuilder::new(params);
            let xs: Vec<Wire> = (0..n_x)
                .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
                .collect();
            let ys: Vec<Wire> = (0..n_y)
                .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
                .collect();
            let h = move |v: &[bool]| {
                let l: usize = v.iter().enumerate().map(|(i, &x)| (x as usize) << i).sum();
                (truth >> l) & 1 == 1
            };
            let w = xor_with(&mut b, &xs, &ys, &h).unwrap();
            b.output(w).unwrap();
            let c = b.build();
            assert!(
                c.bootstraps().len() <= 1 + n_x / 40,
                "{} bootstraps",
                c.bootstraps().len()
            );
            for combo in 0..1u64 << (n_x + n_y) {
                let bits: Vec<bool> = (0..n_x + n_y).map(|i| (combo >> i) & 1 == 1).collect();
                let input: Vec<u64> = bits.iter().map(|&x| if x { 2 } else { 0 }).collect();
                let out = ClearBackend.evaluate(&c, &input).unwrap()[0];
                let want = bits[..n_x].iter().fold(false, |a, &x| a ^ x) ^ h(&bits[n_x..]);
                assert_eq!(
                    out,
                    if want { 2 } else { 0 },
                    "truth {truth:#x} inputs {bits:?}"
                );
            }
        }
    }

    #[test]
    fn parities_with_every_function_of_three_bits_are_exact() {
        for n_x in 0..=4 {
            for n_y in 0..=3 {
                exhaustive(&DIGITS_KS32_128, n_x, n_y);
            }
        }
    }

    #[test]
    fn small_rings_take_fewer_bits() {
        // pi - 2 bits beside the parity (INSECURE_TEST_BITS: pi = 3).
        let p = &INSECURE_TEST_BITS;
        let room = p.pi as usize - 2;
        exhaustive(p, 3, room);
        // One more: the function is a gate first, then the parity.
        let mut b = CircuitBuilder::new(p);
        let ins: Vec<Wire> = (0..=room + 2)
            .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
            .collect();
        let and = |v: &[bool]| v.iter().all(|&x| x);
        let w = xor_with(&mut b, &ins[..2], &ins[2..], &and).unwrap();
        b.output(w).unwrap();
        let c = b.build();
        assert_eq!(c.stats().pbs, 2);
        for combo in 0..1u64 << ins.len() {
            let v: Vec<bool> = (0..ins.len()).map(|i| (combo >> i) & 1 == 1).collect();
            let input: Vec<u64> = v.iter().map(|&x| 2 * x as u64).collect();
            let out = ClearBackend.evaluate(&c, &input).unwrap()[0];
            assert_eq!(out, 2 * ((v[0] ^ v[1] ^ and(&v[2..])) as u64), "{v:?}");
        }
    }

    /// Long sums, sums that share bits and constants: split where the
    /// budget needs it, exact on random inputs.
    #[test]
    fn long_and_shared_sums_are_exact() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(85);
        for n in [1, 7, 60, 200, 700] {
            let mut b = CircuitBuilder::new(&DIGITS_KS32_128);
            let bits: Vec<Wire> = (0..n)
                .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
                .collect();
            // Sums of up to four bits, some bits in several sums.
            let mut xs = Vec::new();
            let mut picks = Vec::new();
            for _ in 0..n {
                let k = rng.gen_range(1..=4);
                let pick: Vec<usize> = (0..k).map(|_| rng.gen_range(0..n)).collect();
                let terms: Vec<(Wire, i64)> = pick.iter().map(|&i| (bits[i], 1)).collect();
                xs.push(b.linear(&terms, 0).unwrap());
                picks.push(pick);
            }
            let two = b.constant(ONE);
            xs.push(two);
            let ys = [bits[0], bits[n - 1]];
            let w = xor_with(&mut b, &xs, &ys, &|v| v[0] & !v[1]).unwrap();
            b.output(w).unwrap();
            let c = b.build();
            for _ in 0..20 {
                let v: Vec<bool> = (0..n).map(|_| rng.gen()).collect();
                let input: Vec<u64> = v.iter().map(|&x| if x { 2 } else { 0 }).collect();
                let out = ClearBackend.evaluate(&c, &input).unwrap()[0];
                let parity = picks.iter().flatten().fold(true, |a, &i| a ^ v[i]);
                let want = parity ^ (v[0] & !v[n - 1]);
                assert_eq!(out, if want { 2 } else { 0 }, "n {n}");
            }
        }
    }
}
