//! The possible values of a wire: an arithmetic progression read modulo
//! `m = 2^pi`.
//!
//! A [`Range`] is `lo, lo + step, ..., hi`. The step matters for noise:
//! values that are `step` apart can be told apart with a margin of
//! `step / 2` units instead of `1 / 2`, so a bootstrap whose selector only
//! takes, say, even values tolerates four times the noise variance (the
//! idea behind TFHE gate bootstrapping).

/// Values `lo, lo + step, ..., hi`, read modulo `m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "mpi", derive(serde::Serialize, serde::Deserialize))]
pub struct Range {
    /// Smallest value.
    pub lo: i64,
    /// Largest value.
    pub hi: i64,
    /// Distance between consecutive values (at least 1).
    pub step: i64,
}

/// `gcd(a, b)` for non-negative integers.
pub(crate) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The inverse of an odd `a` modulo 2^64 (so modulo every power of two):
/// Newton's iteration doubles the correct low bits, from 3 (`a a = 1` mod 8).
#[inline]
fn odd_inverse(a: u64) -> u64 {
    let mut inv = a;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(a.wrapping_mul(inv)));
    }
    inv
}

impl Range {
    /// Every integer `lo..=hi`.
    pub fn new(lo: i64, hi: i64) -> Self {
        Range { lo, hi, step: 1 }
    }

    /// `lo, lo + step, ..., hi` (`hi - lo` a multiple of `step`; any
    /// positive step: `11 x` for `x` in [-1, 1] is -11, 0, 11).
    pub fn with_step(lo: i64, hi: i64, step: i64) -> Self {
        Range { lo, hi, step }
    }

    pub(crate) fn point(v: i64) -> Self {
        Range {
            lo: v,
            hi: v,
            step: 1,
        }
    }

    /// Number of distinct residues mod `m`.
    pub fn count(&self, m: u64) -> u64 {
        let step = self.step.max(1) as u64;
        let period = m / gcd(step % m, m).max(1);
        (((self.hi - self.lo) as u64) / step + 1).min(period)
    }

    /// The distinct residues mod `m`, from `lo` up.
    pub fn residues(&self, m: u64) -> Vec<u64> {
        let step = (self.step as u64) % m;
        let lo = self.lo.rem_euclid(m as i64) as u64;
        (0..self.count(m)).map(|k| (lo + k * step) % m).collect()
    }

    /// Whether residue `x` (in `0..m`) is a possible value. For a
    /// power-of-two `m` (every parameter set's) it neither allocates nor
    /// loops: the clear backend asks it of every bootstrap it evaluates,
    /// and it was most of the time of exhaustive tests.
    ///
    /// `x = lo + k step (mod 2^pi)` has a solution `k` only where `2^t`,
    /// the power of two in `step`, divides `x - lo`; the least is
    /// `(x - lo) / 2^t` times the inverse of the odd part of `step`, mod
    /// `2^pi / 2^t`; `x` is a value where that `k` is within the range.
    #[inline]
    pub fn contains_residue(&self, x: u64, m: u64) -> bool {
        if !m.is_power_of_two() {
            return self.residues(m).contains(&(x % m));
        }
        let mask = m - 1;
        let d = x.wrapping_sub(self.lo as u64) & mask;
        let step = self.step.max(1) as u64 & mask;
        if step == 0 {
            return d == 0;
        }
        let t = step.trailing_zeros();
        if d & ((1 << t) - 1) != 0 {
            return false;
        }
        // Steps 1 and 2 (digits, bits) have no odd part to invert.
        let odd = step >> t;
        let inv = if odd == 1 { 1 } else { odd_inverse(odd) };
        let k = ((d >> t).wrapping_mul(inv)) & (mask >> t);
        (k as u128) * (self.step.max(1) as u128) <= self.hi.abs_diff(self.lo) as u128
    }

    /// Whether every possible residue is one of `lo..=hi` mod `m`.
    pub fn is_within(&self, lo: i64, hi: i64, m: u64) -> bool {
        self.residues(m)
            .iter()
            .all(|&r| (r as i64 - lo).rem_euclid(m as i64) <= hi - lo)
    }

    /// The canonical form of the same residues, for the modulus `m`: a
    /// single value with step 1; a full class of residues (every
    /// `lo + k * gcd(step, m)`) as `lo..lo + m - s` with `0 <= lo < s`;
    /// otherwise the representatives whose midpoint is nearest to zero
    /// (`lo + hi` in `[-m, m)`), so that a constant `-1` reads `-1`, never
    /// `m - 1`.
    pub(crate) fn canonical(self, m: i64) -> Self {
        let step = self.step.max(1);
        let (lo, hi, m128) = (self.lo as i128, self.hi as i128, m as i128);
        let n = (hi - lo) / step as i128 + 1;
        let class = gcd(step as u64 % m as u64, m as u64).max(1) as i64;
        if n > 1 && n >= (m / class) as i128 {
            let lo = lo.rem_euclid(class as i128) as i64;
            return Range {
                lo,
                hi: lo + m - class,
                step: class,
            };
        }
        let step = if n == 1 { 1 } else { step };
        let shift = (lo + hi + m128).div_euclid(2 * m128) * m128;
        Range {
            lo: (lo - shift) as i64,
            hi: (hi - shift) as i64,
            step,
        }
    }

    /// The tightest range holding the residues both ranges allow.
    pub(crate) fn intersect(&self, other: &Range, m: u64) -> Range {
        // The common case, and its answer: no covering is shorter.
        if self == other {
            return *self;
        }
        let mut theirs = vec![false; m as usize];
        for r in other.residues(m) {
            theirs[r as usize] = true;
        }
        let both: Vec<u64> = self
            .residues(m)
            .into_iter()
            .filter(|&r| theirs[r as usize])
            .collect();
        let mut best = if other.count(m) < self.count(m) {
            *other
        } else {
            *self
        };
        // Disjoint sound ranges cannot happen for a reachable value; keep
        // the smaller rather than claim an empty set.
        if !both.is_empty() {
            let c = Range::covering(&both, m);
            if c.count(m) < best.count(m) {
                best = c;
            }
        }
        best
    }

    /// The shortest progression arc of `Z_m` holding all residues in
    /// `values` (a bootstrap's outputs), with the largest step that fits.
    pub(crate) fn covering(values: &[u64], m: u64) -> Self {
        let first = values[0] % m;
        let step = values
            .iter()
            .fold(m, |g, &v| gcd(g, (v % m + m - first) % m))
            .max(1);
        // Work in the quotient: residue first + step * k, k in 0..m/step.
        let q = m / step;
        let mut seen = vec![false; q as usize];
        for &v in values {
            seen[(((v % m + m - first) % m) / step) as usize] = true;
        }
        let present: Vec<i64> = (0..q as i64).filter(|&k| seen[k as usize]).collect();
        let (mut best_gap, mut best_end) = (0, present[0]);
        for (i, &k) in present.iter().enumerate() {
            let next = present.get(i + 1).copied().unwrap_or(present[0] + q as i64);
            if next - k > best_gap {
                best_gap = next - k;
                best_end = k;
            }
        }
        // The arc starts after the largest gap and ends at `best_end`.
        let (start, end) = (best_end + best_gap, best_end + q as i64);
        let s = step as i64;
        Range {
            lo: first as i64 + start * s,
            hi: first as i64 + end * s,
            step: s,
        }
        .canonical(m as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed form against the residues themselves: every range of
    /// small bounds and steps, every residue, moduli 2 to 64 (and a
    /// non-power of two).
    #[test]
    fn contains_residue_is_membership_in_the_residues() {
        for m in [2u64, 4, 8, 16, 32, 64, 12] {
            for lo in -70i64..70 {
                for step in 1i64..40 {
                    for n in 0..6 {
                        let r = Range::with_step(lo, lo + n * step, step);
                        let res = r.residues(m);
                        for x in 0..m {
                            assert_eq!(
                                r.contains_residue(x, m),
                                res.contains(&x),
                                "{r:?} {x} mod {m}"
                            );
                        }
                    }
                }
            }
        }
        let big = Range::with_step(i64::MIN / 4, i64::MAX / 4, 3);
        assert!((0..64).all(|x| big.contains_residue(x, 64)));
    }

    #[test]
    fn covering_prefers_short_signed_arcs() {
        assert_eq!(Range::covering(&[31, 0, 1], 32), Range::new(-1, 1));
        assert_eq!(Range::covering(&[3, 4, 5], 32), Range::new(3, 5));
        assert_eq!(Range::covering(&[16], 32), Range::point(-16));
        assert_eq!(Range::covering(&[29, 30], 32), Range::new(-3, -2));
        assert_eq!(
            Range::covering(&[0, 10, 20], 32),
            Range::with_step(0, 20, 2)
        );
        // Odd values of a gate table: {-1, 1}, step 2.
        assert_eq!(Range::covering(&[7, 1], 8), Range::with_step(-1, 1, 2));
    }

    #[test]
    fn canonical_forms() {
        let m = 8;
        assert_eq!(Range::new(5, 7).canonical(m), Range::new(-3, -1));
        assert_eq!(
            Range::with_step(3, 17, 2).canonical(m),
            Range::with_step(1, 7, 2)
        );
        assert_eq!(Range::point(7).canonical(m), Range::point(-1));
        // Odd steps: 11 x for x in [-1, 1].
        let r = Range::with_step(-11, 11, 11);
        assert_eq!(r.canonical(32), r);
        assert_eq!(r.residues(32), vec![21, 0, 11]);
        assert_eq!(
            Range::with_step(0, 99, 11).canonical(32),
            Range::with_step(-64, 35, 11)
        );
        assert_eq!(
            Range::with_step(0, 352, 11).canonical(32),
            Range::new(0, 31)
        );
    }

    #[test]
    fn residues_and_membership() {
        let r = Range::with_step(-1, 3, 2);
        assert_eq!(r.count(8), 3);
        assert_eq!(r.residues(8), vec![7, 1, 3]);
        assert!(r.contains_residue(1, 8) && !r.contains_residue(0, 8) && !r.contains_residue(5, 8));
        assert!(r.is_within(-1, 3, 8) && !r.is_within(0, 3, 8));
        assert!(Range::new(-1, 1).is_within(-1, 1, 32));
    }
}
