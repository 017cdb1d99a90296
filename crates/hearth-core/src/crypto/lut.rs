//! Negacyclic lookup tables over `Z_{2^pi}`.
//!
//! A bootstrap evaluates a table `f` that satisfies
//! `f(x + 2^(pi-1)) = -f(x) (mod 2^pi)`; the first half of the table
//! determines the rest. A [`Lut`] also records its *domain*: the positions at
//! which its author wants it evaluated. The circuit builder refuses a
//! selector that can take a value outside the domain.

use crate::error::LutError;

/// A negacyclic lookup table with a domain of intended positions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lut {
    pi: u32,
    /// Values at every position of `Z_{2^pi}` (negacyclic by construction;
    /// positions outside the domain and not implied by it hold 0).
    table: Vec<u64>,
    /// `domain[x]`: the table is meant to be read at position `x`.
    domain: Vec<bool>,
}

impl Lut {
    fn empty(pi: u32) -> Result<Self, LutError> {
        if !(1..=8).contains(&pi) {
            return Err(LutError::BadPi(pi));
        }
        let m = 1usize << pi;
        Ok(Lut {
            pi,
            table: vec![0; m],
            domain: vec![false; m],
        })
    }

    /// Sets `f(x) = v` and its negacyclic image, refusing a contradiction.
    fn set(&mut self, defined: &mut [bool], x: i64, v: i64) -> Result<(), LutError> {
        let m = self.table.len() as i64;
        let half = m / 2;
        let x = x.rem_euclid(m) as usize;
        let v = v.rem_euclid(m) as u64;
        let y = (x + half as usize) % m as usize;
        let w = (m as u64 - v) % m as u64;
        for (pos, val) in [(x, v), (y, w)] {
            if defined[pos] && self.table[pos] != val {
                let (other, other_val) = if pos == x { (y, w) } else { (x, v) };
                return Err(LutError::NotNegacyclic {
                    x: pos as u64,
                    a: self.table[pos],
                    y: other as u64,
                    b: (m as u64 - other_val) % m as u64,
                });
            }
        }
        self.table[x] = v;
        self.table[y] = w;
        defined[x] = true;
        defined[y] = true;
        Ok(())
    }

    /// A table from a function on the (signed or unsigned) selector values
    /// `lo..=hi`; the domain is exactly those values mod `2^pi`. Fails if
    /// the values are not negacyclic on that domain.
    pub fn from_fn(pi: u32, lo: i64, hi: i64, f: impl Fn(i64) -> i64) -> Result<Self, LutError> {
        let mut lut = Self::empty(pi)?;
        let mut defined = vec![false; lut.table.len()];
        let m = lut.table.len() as i64;
        if hi < lo {
            return Err(LutError::Parse(format!("empty domain [{lo}, {hi}]")));
        }
        for x in lo..=hi.min(lo + m - 1) {
            lut.set(&mut defined, x, f(x))?;
            lut.domain[x.rem_euclid(m) as usize] = true;
        }
        Ok(lut)
    }

    /// A table defined at the given `(position, value)` points only (and,
    /// by negacyclicity, at their images `x + 2^(pi-1)`); the domain is
    /// those positions. Fails if two points contradict.
    pub fn from_points(pi: u32, points: &[(i64, i64)]) -> Result<Self, LutError> {
        let mut lut = Self::empty(pi)?;
        let mut defined = vec![false; lut.table.len()];
        let m = lut.table.len() as i64;
        for &(x, v) in points {
            lut.set(&mut defined, x, v)?;
            lut.domain[x.rem_euclid(m) as usize] = true;
        }
        Ok(lut)
    }

    /// A table defined on all of `Z_{2^pi}` by its values on the first half
    /// `0..2^(pi-1)` (the negacyclic rest follows).
    pub fn negacyclic(pi: u32, f: impl Fn(i64) -> i64) -> Result<Self, LutError> {
        let half = 1i64 << (pi.clamp(1, 8) - 1);
        let mut lut = Self::from_fn(pi, 0, half - 1, f)?;
        lut.domain.iter_mut().for_each(|d| *d = true);
        Ok(lut)
    }

    /// Parses a PARMESAN-style listing such as `"1, 2, o, -3"` (values on
    /// `0..2^(pi-1)`, `o` for unused) or `"1, 2 || -3"` (prefix from 0, the
    /// suffix ending at `-1`, the gap filled with `o`). The domain is every
    /// position whose value is given, directly or by negacyclicity.
    pub fn parse(pi: u32, listing: &str) -> Result<Self, LutError> {
        let mut lut = Self::empty(pi)?;
        let m = lut.table.len();
        let half = m / 2;
        let parse_list = |s: &str| -> Result<Vec<Option<i64>>, LutError> {
            if s.trim().is_empty() {
                return Ok(Vec::new());
            }
            s.split(',')
                .map(|t| {
                    let t = t.trim();
                    if t == "o" || t == "∘" || t == "_" {
                        Ok(None)
                    } else {
                        t.parse::<i64>()
                            .map(Some)
                            .map_err(|_| LutError::Parse(format!("`{t}` is not an integer or `o`")))
                    }
                })
                .collect()
        };
        let positioned: Vec<(i64, Option<i64>)> = match listing.split_once("||") {
            None => {
                let values = parse_list(listing)?;
                if values.len() > half {
                    return Err(LutError::TooLong {
                        found: values.len(),
                        max: half,
                        pi,
                    });
                }
                values
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| (i as i64, v))
                    .collect()
            }
            Some((prefix, suffix)) => {
                if suffix.contains("||") {
                    return Err(LutError::Parse("`||` may appear at most once".into()));
                }
                let pre = parse_list(prefix)?;
                let suf = parse_list(suffix)?;
                if pre.len() + suf.len() > m {
                    return Err(LutError::TooLong {
                        found: pre.len() + suf.len(),
                        max: m,
                        pi,
                    });
                }
                let start = -(suf.len() as i64);
                pre.into_iter()
                    .enumerate()
                    .map(|(i, v)| (i as i64, v))
                    .chain(
                        suf.into_iter()
                            .enumerate()
                            .map(|(i, v)| (start + i as i64, v)),
                    )
                    .collect()
            }
        };
        let mut defined = vec![false; m];
        for (x, v) in positioned {
            if let Some(v) = v {
                lut.set(&mut defined, x, v)?;
            }
        }
        lut.domain = defined;
        Ok(lut)
    }

    /// Message bits of the table's domain.
    pub fn pi(&self) -> u32 {
        self.pi
    }

    /// The value at position `x` (any integer; reduced mod `2^pi`).
    pub fn eval(&self, x: i64) -> u64 {
        self.table[x.rem_euclid(self.table.len() as i64) as usize]
    }

    /// Whether position `x` is in the domain.
    pub fn covers(&self, x: i64) -> bool {
        self.domain[x.rem_euclid(self.domain.len() as i64) as usize]
    }

    /// The full table over `Z_{2^pi}`.
    pub fn table(&self) -> &[u64] {
        &self.table
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parmesan_example_3() {
        // pi = 3: (1, 2, o, -3) is (1, 2, o, -3, -1, -2, o, 3).
        let a = Lut::parse(3, "1, 2, o, -3").unwrap();
        assert_eq!(a.table(), &[1, 2, 0, 5, 7, 6, 0, 3]);
        assert_eq!(a.eval(-1), 3);
        assert!(!a.covers(2) && !a.covers(6) && a.covers(7));
        // (1, 2 || -3) is (1, 2, o, 3, -1, -2, o, -3).
        let b = Lut::parse(3, "1, 2 || -3").unwrap();
        assert_eq!(b.table(), &[1, 2, 0, 3, 7, 6, 0, 5]);
        assert_eq!(b.eval(-1), 5); // -3 mod 8
        assert!(b.covers(3) && !b.covers(2));
    }

    #[test]
    fn non_negacyclic_function_is_refused() {
        // Identity on all of Z_8 is not negacyclic.
        let err = Lut::from_fn(3, 0, 7, |x| x).unwrap_err();
        assert!(matches!(err, LutError::NotNegacyclic { .. }));
        // ... but it is on [-2, 2] (and beyond up to width 4).
        let id = Lut::from_fn(3, -2, 1, |x| x).unwrap();
        assert_eq!(id.eval(-2), 6);
        assert!(id.covers(-2) && !id.covers(2));
    }

    #[test]
    fn negacyclic_extends_first_half() {
        let l = Lut::negacyclic(5, |x| x).unwrap();
        for x in 0..16 {
            assert_eq!(l.eval(x), x as u64);
            assert_eq!(l.eval(x + 16), (32 - x as u64) % 32);
        }
    }

    #[test]
    fn bad_listings() {
        assert!(matches!(
            Lut::parse(3, "1, 2, 3, 4, 5"),
            Err(LutError::TooLong { .. })
        ));
        assert!(matches!(Lut::parse(3, "1, x"), Err(LutError::Parse(_))));
        assert!(matches!(
            Lut::parse(3, "1 || 2 || 3"),
            Err(LutError::Parse(_))
        ));
        assert!(matches!(Lut::parse(9, "1"), Err(LutError::BadPi(9))));
        // 1 at position 0 and 1 at position 4 contradict negacyclicity.
        assert!(matches!(
            Lut::parse(3, "1, o, o, o || 1, o, o, o"),
            Err(LutError::NotNegacyclic { .. })
        ));
    }
}
