//! Bootstrap selectors within the noise budget, whatever values they read.
//!
//! A selector is a linear combination `sum_j c_j t_j + k` of digits or bits. Its
//! quadratic weight is `sum_j c_j^2` only if the digits are independent;
//! digits that are copies of one ciphertext (free shifts, negations,
//! pass-through digits and scalar multiplications repeat them) add their
//! coefficients before squaring: four copies of `f` with weights 8, 4, 2, 1
//! weigh 225, not 85. [`Selectors`] reads the weight the builder tracks and,
//! while it is over the budget, refreshes the term whose refresh lowers it
//! most: one identity bootstrap makes an independent copy of weight 1. So
//! algorithms keep their group sizes for independent digits and pay extra
//! bootstraps only for correlated ones.

use rustc_hash::FxHashMap as HashMap;

use crate::circuit::{CircuitBuilder, Wire};
use crate::crypto::lut::Lut;
use crate::error::Error;

/// Makes selectors for one operation; refreshed copies are kept and reused
/// by later selectors (a selector that needs two independent copies of one
/// wire makes a second).
#[derive(Debug, Default)]
pub struct Selectors {
    copies: HashMap<Wire, Vec<Wire>>,
    bits: bool,
}

impl Selectors {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// For selectors over bits stored as 0 or 2: a refresh reads the bit
    /// (even values decode to 0 or 2 by their class mod 4, a table that is
    /// negacyclic on every even value), so it works whatever phantom
    /// values the tracked range admits.
    pub fn for_bits() -> Self {
        Selectors {
            bits: true,
            ..Self::default()
        }
    }

    /// The wire `sum_j c_j t_j + constant`, with as few terms refreshed as
    /// the dense budget needs (none when the terms are independent and the
    /// algorithm's design weight fits).
    pub fn linear(
        &mut self,
        b: &mut CircuitBuilder,
        terms: &[(Wire, i64)],
        constant: i64,
    ) -> Result<Wire, Error> {
        let budget = b.budget();
        self.linear_within(b, terms, constant, budget)
    }

    /// Like [`Selectors::linear`], for a selector read with the given
    /// budget (that of its margin level).
    pub fn linear_within(
        &mut self,
        b: &mut CircuitBuilder,
        terms: &[(Wire, i64)],
        constant: i64,
        budget: u64,
    ) -> Result<Wire, Error> {
        // Most selectors fit as they are: one weight, no refresh.
        if b.weight_of(terms)? <= budget {
            return Ok(b.linear(terms, constant)?);
        }
        let mut terms = terms.to_vec();
        let mut done = vec![false; terms.len()];
        // Every term refreshed (independent copies) weighs sum c^2: if
        // even that is over, refreshing cannot help.
        let mut floor = 0u64;
        for &(w, c) in &terms {
            if b.weight_of(&[(w, 1)])? > 0 {
                floor = floor.saturating_add(c.unsigned_abs().saturating_pow(2));
            }
        }
        if floor > budget {
            return Ok(b.linear(&terms, constant)?);
        }
        loop {
            let weight = b.weight_of(&terms)?;
            if weight <= budget {
                break;
            }
            // The refresh that leaves the least weight: a copy made earlier
            // (free, so it wins ties) or a new one (independent of all).
            let mut best: Option<(u64, bool, usize, Option<Wire>)> = None;
            for j in 0..terms.len() {
                let (w, c) = terms[j];
                if done[j] || b.weight_of(&[(w, 1)])? == 0 {
                    continue;
                }
                let mut rest = terms.clone();
                rest.swap_remove(j);
                let new = b
                    .weight_of(&rest)?
                    .saturating_add(c.unsigned_abs().saturating_pow(2));
                let mut options = vec![(new, true, j, None)];
                for &copy in self.copies.get(&w).into_iter().flatten() {
                    let mut with = rest.clone();
                    with.push((copy, c));
                    options.push((b.weight_of(&with)?, false, j, Some(copy)));
                }
                for o in options {
                    if best.is_none_or(|k| (o.0, o.1, o.2) < (k.0, k.1, k.2)) {
                        best = Some(o);
                    }
                }
            }
            // Shared fresh values may cancel between terms, so one refresh
            // can weigh more than none and still be a step to the floor.
            let Some((_, _, j, copy)) = best else {
                break;
            };
            terms[j].0 = match copy {
                Some(c) => c,
                None => self.refresh(b, terms[j].0)?,
            };
            done[j] = true;
        }
        // Still over budget: the bootstrap reading it reports the weight.
        Ok(b.linear(&terms, constant)?)
    }

    /// A new independent copy of `w` (identity bootstrap on its range: a
    /// bit stored as 0 or 2 keeps its margin of one unit).
    pub fn refresh(&mut self, b: &mut CircuitBuilder, w: Wire) -> Result<Wire, Error> {
        let copy = if self.bits {
            // Every even value of the first half decodes by its class mod
            // 4 (-1 for 0, +1 for 2; the second half follows by
            // negacyclicity), then + 1: the bit as 0 or 2.
            let half = b.params().message_modulus() as i64 / 2;
            let points: Vec<(i64, i64)> = (0..half)
                .step_by(2)
                .map(|v| (v, if (v / 2) % 2 == 1 { 1 } else { -1 }))
                .collect();
            let lut = Lut::from_points(b.params().pi, &points)?;
            let y = b.bootstrap_copy(w, &lut)?;
            let y = b.add_const(y, 1)?;
            b.assume_range(y, 0, 2, 2)?
        } else {
            let r = b.range(w)?;
            let lut = Lut::from_fn(b.params().pi, r.lo, r.hi, |v| v)?;
            b.bootstrap_copy(w, &lut)?
        };
        self.copies.entry(w).or_default().push(copy);
        Ok(copy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::INSECURE_TEST_DIGITS as P;

    #[test]
    fn independent_terms_are_left_alone() {
        let mut b = CircuitBuilder::new(&P);
        let xs: Vec<Wire> = (0..4).map(|_| b.input(-1, 1).unwrap()).collect();
        let terms: Vec<(Wire, i64)> = xs.iter().zip([1, 2, 4, 8]).map(|(&w, c)| (w, c)).collect();
        let s = Selectors::new().linear(&mut b, &terms, 0).unwrap();
        assert_eq!(b.quadratic_weight(s).unwrap(), 85);
        assert_eq!(b.build().stats().pbs, 0);
    }

    #[test]
    fn copies_are_refreshed_until_the_weight_fits() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(-1, 1).unwrap();
        let nx = b.neg(x).unwrap();
        let terms = [(x, 1), (x, 2), (nx, 4), (x, 8)]; // 7 x: weight 49
        let mut sel = Selectors::new();
        let s = sel.linear(&mut b, &terms, 0).unwrap();
        assert_eq!(b.quadratic_weight(s).unwrap(), 49);
        assert_eq!(b.build().stats().pbs, 0);
    }

    #[test]
    fn two_copies_when_one_is_not_enough() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(-1, 1).unwrap();
        // 15 x weighs 225; 7 x + 8 x' weighs 113; two copies are needed.
        let terms = [(x, 1), (x, 2), (x, 4), (x, 8)];
        let mut sel = Selectors::new();
        let s = sel.linear(&mut b, &terms, 0).unwrap();
        assert!(b.quadratic_weight(s).unwrap() <= 112);
        // A second selector reuses the copies: no new bootstrap.
        let t = sel.linear(&mut b, &terms, 0).unwrap();
        assert!(b.quadratic_weight(t).unwrap() <= 112);
        assert_eq!(b.build().stats().pbs, 2);
    }
}
