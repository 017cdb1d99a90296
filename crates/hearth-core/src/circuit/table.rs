//! How a bootstrap decodes its selector: the accumulator layout and the
//! noise margin it leaves.
//!
//! A blind rotation reads its (noisy) selector as a position on the torus.
//! Only the values the selector can take matter, with their negacyclic
//! images (`x + m/2` reads `-f(x)`). Each position of the accumulator gets
//! the output of the *nearest* such point, so the boundary between two
//! points with different outputs lies halfway between them: selectors whose
//! values are spread out (a gate on bits stored as 0 or 2) tolerate more
//! noise than dense ones. The margin is half the distance from a point to
//! the nearest point with another output; it picks which budget applies.
//!
//! A table is stored as `2m` *slots* of half a unit: slot `j` covers
//! `[j/2, j/2 + 1/2)` units, which is also where the boundaries can fall.

use std::collections::BTreeMap;

pub use crate::crypto::bootstrap::dense_slots;
use crate::crypto::params::Margin;

/// Output values at selector positions (negacyclic images included).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Points {
    m: u64,
    values: BTreeMap<u64, u64>,
}

impl Points {
    pub(crate) fn new(m: u64) -> Self {
        Points {
            m,
            values: BTreeMap::new(),
        }
    }

    /// Records `f(pos) = v` and `f(pos + m/2) = -v`; `false` on a
    /// contradiction with an earlier point.
    pub(crate) fn insert(&mut self, pos: u64, v: u64) -> bool {
        let (m, pos, v) = (self.m, pos % self.m, v % self.m);
        for (p, val) in [(pos, v), ((pos + m / 2) % m, (m - v) % m)] {
            match self.values.insert(p, val) {
                Some(old) if old != val => return false,
                _ => {}
            }
        }
        true
    }

    /// The margin: the widest whose spacing every point keeps from any
    /// point with another output; `None` when every point has the same
    /// output (nothing to decode).
    pub(crate) fn margin(&self) -> Option<Margin> {
        let m = self.m as i64;
        let mut min_dist: Option<i64> = None;
        for (&p, &v) in &self.values {
            for (&q, &w) in &self.values {
                if v != w {
                    let d = (p as i64 - q as i64).rem_euclid(m);
                    let d = d.min(m - d);
                    min_dist = Some(min_dist.map_or(d, |x| x.min(d)));
                }
            }
        }
        Some(Margin::within(min_dist? as u64))
    }

    /// The `2m` half-unit slots: each takes the output of the point nearest
    /// to its centre (never a tie: centres sit at quarter units).
    pub(crate) fn slots(&self) -> Vec<u64> {
        let m4 = 4 * self.m as i64;
        (0..2 * self.m as i64)
            .map(|j| {
                let centre = 2 * j + 1;
                self.values
                    .iter()
                    .min_by_key(|&(&p, _)| {
                        let d = (centre - 4 * p as i64).rem_euclid(m4);
                        d.min(m4 - d)
                    })
                    .map_or(0, |(_, &v)| v)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_tables_keep_the_usual_layout() {
        let table: Vec<u64> = (0..8).map(|x| x * 3 % 8).collect();
        let mut p = Points::new(8);
        for x in 0..4 {
            // A negacyclic table: f(x + 4) = -f(x).
            assert!(p.insert(x, table[x as usize]));
        }
        let t: Vec<u64> = (0..8)
            .map(|x| {
                if x < 4 {
                    table[x]
                } else {
                    (8 - table[x - 4]) % 8
                }
            })
            .collect();
        assert_eq!(p.slots(), dense_slots(&t));
        assert_eq!(p.margin(), Some(Margin::Half));
    }

    #[test]
    fn spread_points_get_wide_margins() {
        // AND on bits stored as 0 or 2: selector a + b at 0, 2, 4 with
        // outputs -1, -1, 1 (then + 1).
        let mut p = Points::new(8);
        assert!(p.insert(0, 7) && p.insert(2, 7) && p.insert(4, 1));
        assert_eq!(p.margin(), Some(Margin::One));
        // Boundaries halfway: 0 and 2 read -1 up to unit 3, then 4 reads 1.
        let s = p.slots();
        assert_eq!(&s[..8], &[7, 7, 7, 7, 7, 7, 1, 1]);
        // XOR with the selector doubled: 0 and 4 only, margin 2 units.
        let mut x = Points::new(8);
        assert!(x.insert(0, 7) && x.insert(4, 1));
        assert_eq!(x.margin(), Some(Margin::Two));
        // A contradiction is refused.
        assert!(!x.insert(4, 7));
    }

    #[test]
    fn constant_outputs_need_no_decoding() {
        let mut p = Points::new(8);
        assert!(p.insert(1, 0) && p.insert(2, 0));
        assert_eq!(p.margin(), None);
    }
}
