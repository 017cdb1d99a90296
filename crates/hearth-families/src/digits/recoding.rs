//! Koyama-Tsuruoka signed-binary recoding and the sliding-window split of a
//! signed-binary digit string.
//!
//! Scalar multiplication by a known `k` costs one addition per non-zero digit
//! (or per window, with precomputed chains), so we want few non-zero digits and
//! long zero runs between them. The Koyama-Tsuruoka recoding (CRYPTO '92)
//! reaches the minimal Hamming weight like the NAF, but tends to leave longer
//! zero runs, which is what the window split below profits from.
//!
//! All digit strings are little-endian: `digits[i]` weighs `2^i`.
//!
//! # Which variant
//! The textbook pseudo-code of the recoding (and PARMESAN's implementation)
//! stops its walk one bit short of the top bit. That variant is not always of
//! minimal weight: 7 stays `111` (NAF: `100-1`), and so do 1485 of the
//! integers below `2^14`. [`koyama_tsuruoka`] walks every bit and is of
//! minimal weight (checked against the NAF below `2^14`). The textbook variant
//! is kept, crate-private, only to reproduce PARMESAN's Appendix B (see
//! [`crate::digits::asc::parmesan_window_values`]).

/// Koyama-Tsuruoka recoding of the non-negative integer whose little-endian
/// bits are `magnitude_bits`.
///
/// Returns little-endian digits in `{-1, 0, 1}` of the same value, with minimal
/// Hamming weight, at most one digit longer than the input's significant bits,
/// and without most significant zero digits (zero gives an empty vector).
///
/// Method: walk the bits from the least significant one, the walk height going
/// up on a one and down on a zero. Once the height has climbed 3 above its
/// lowest point, the ones there are dense enough that the block from that low
/// point is better written as `2^end - 2^start` plus the complemented bits
/// (`bit - 1`); the block closes at its highest point once the height has
/// fallen 3 below it, or at the end: at the highest point if the walk has
/// come down since, past the top bit otherwise.
pub fn koyama_tsuruoka(magnitude_bits: &[bool]) -> Vec<i8> {
    recode(magnitude_bits, true)
}

/// The textbook variant, whose walk skips the top bit (not always of minimal
/// weight); PARMESAN's Appendix B values come from it.
pub(crate) fn koyama_tsuruoka_textbook(magnitude_bits: &[bool]) -> Vec<i8> {
    recode(magnitude_bits, false)
}

fn recode(magnitude_bits: &[bool], walk_top_bit: bool) -> Vec<i8> {
    let Some(top) = magnitude_bits.iter().rposition(|&b| b) else {
        return Vec::new();
    };
    let bits = &magnitude_bits[..=top];
    let blocks = complement_blocks(bits, if walk_top_bit { bits } else { &bits[..top] });

    // Start from the plain bits (plus room for the carry out of the top bit),
    // then rewrite each block `[start, end)` as `-2^start + 2^end` plus the
    // complemented bits in between.
    let mut digits: Vec<i8> = bits.iter().map(|&b| i8::from(b)).collect();
    digits.push(0);
    for &(start, end) in &blocks {
        for d in &mut digits[start..end] {
            *d -= 1;
        }
        digits[start] -= 1;
        digits[end] += 1;
    }
    debug_assert!(digits.iter().all(|d| (-1..=1).contains(d)));
    while digits.last() == Some(&0) {
        digits.pop();
    }
    digits
}

/// The half-open bit ranges `[start, end)` that the Koyama-Tsuruoka walk over
/// `walked` (a prefix of `bits`) rewrites with complemented bits; `bits` ends
/// with its (set) top bit.
///
/// Every block starts on a set bit and ends on a clear bit or one past the top
/// bit, so the rewritten digits stay in `{-1, 0, 1}`.
fn complement_blocks(bits: &[bool], walked: &[bool]) -> Vec<(usize, usize)> {
    /// Height difference that opens or closes a block.
    const THRESHOLD: i64 = 3;
    #[derive(Clone, Copy)]
    enum State {
        /// Copying bits; `low` is the lowest height seen since the last block,
        /// reached just before bit `low_at`.
        Plain { low: i64, low_at: usize },
        /// Inside a block opened at `start`; `high` is the highest height seen,
        /// reached just before bit `high_at`.
        Block {
            start: usize,
            high: i64,
            high_at: usize,
        },
    }

    let top = bits.len() - 1;
    let mut blocks = Vec::new();
    let mut height = 0i64;
    let mut state = State::Plain { low: 0, low_at: 0 };
    for (pos, &bit) in walked.iter().enumerate() {
        height += if bit { 1 } else { -1 };
        let next = pos + 1;
        match state {
            State::Plain { low, low_at } => {
                if height >= low + THRESHOLD {
                    state = State::Block {
                        start: low_at,
                        high: height,
                        high_at: next,
                    };
                } else if height < low {
                    state = State::Plain {
                        low: height,
                        low_at: next,
                    };
                }
            }
            State::Block {
                start,
                high,
                high_at,
            } => {
                if height + THRESHOLD <= high {
                    blocks.push((start, high_at));
                    state = State::Plain {
                        low: height,
                        low_at: next,
                    };
                } else if height > high {
                    state = State::Block {
                        start,
                        high: height,
                        high_at: next,
                    };
                }
            }
        }
    }
    if let State::Block {
        start,
        high,
        high_at,
    } = state
    {
        // Ending at the highest point: the block swallows the top bit too.
        blocks.push((start, if height >= high { top + 1 } else { high_at }));
    }
    blocks
}

/// One window of a signed-binary string: it contributes `value * 2^shift`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Odd, possibly negative; `|value| < 2^width`.
    pub value: i64,
    /// Position of the window's least significant (non-zero) digit.
    pub shift: usize,
}

/// Sliding-window split of a little-endian signed-binary digit string.
///
/// Greedy from the most significant non-zero digit: each window spans at most
/// `width` digits and starts and ends on a non-zero digit, so its value is odd.
/// Windows come out most significant first, and
/// `sum(value * 2^shift)` equals the value of `digits`.
///
/// # Panics
/// If `width` is 0 or above 62 (the value would not fit an `i64`), or a digit
/// is outside `{-1, 0, 1}`.
pub fn windows(digits: &[i8], width: usize) -> Vec<Window> {
    assert!(
        (1..=62).contains(&width),
        "window width {width} not in 1..=62"
    );
    assert!(
        digits.iter().all(|d| (-1..=1).contains(d)),
        "signed-binary digits must be -1, 0 or 1"
    );
    let mut out = Vec::new();
    let mut end = digits.len(); // digits[end..] are already covered
    while let Some(hi) = digits[..end].iter().rposition(|&d| d != 0) {
        let floor = (hi + 1).saturating_sub(width);
        // digits[hi] is non-zero, so this always finds something.
        let lo = floor + digits[floor..=hi].iter().position(|&d| d != 0).unwrap_or(0);
        let value = digits[lo..=hi]
            .iter()
            .rev()
            .fold(0i64, |acc, &d| 2 * acc + i64::from(d));
        out.push(Window { value, shift: lo });
        end = lo;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn bits_of(mut n: u128) -> Vec<bool> {
        let mut bits = Vec::new();
        while n > 0 {
            bits.push(n & 1 == 1);
            n >>= 1;
        }
        bits
    }

    fn value_of(digits: &[i8]) -> i128 {
        digits
            .iter()
            .rev()
            .fold(0i128, |acc, &d| 2 * acc + i128::from(d))
    }

    fn weight(digits: &[i8]) -> usize {
        digits.iter().filter(|&&d| d != 0).count()
    }

    /// Non-adjacent form, for comparison.
    fn naf(mut n: i128) -> Vec<i8> {
        let mut digits = Vec::new();
        while n != 0 {
            let d = if n & 1 == 0 {
                0
            } else {
                2 - n.rem_euclid(4) as i8
            };
            digits.push(d);
            n = (n - i128::from(d)) / 2;
        }
        digits
    }

    /// Weight of the NAF of a bit string of any length (carry-based NAF).
    fn naf_weight_of_bits(bits: &[bool]) -> usize {
        let bit = |i: usize| bits.get(i).copied().map_or(0, u8::from);
        let (mut carry, mut w) = (0, 0);
        for i in 0..=bits.len() {
            match bit(i) + carry {
                1 => {
                    w += 1;
                    carry = bit(i + 1); // ...11 becomes -1 plus a carry
                }
                2 => carry = 1,
                _ => carry = 0,
            }
        }
        w
    }

    /// Schoolbook evaluation on base-2^32 limbs (little-endian, signed limbs
    /// normalised at the end), for values beyond 128 bits.
    fn limbs_of_digits(digits: &[i8]) -> Vec<u32> {
        let mut limbs = vec![0i64; digits.len() / 32 + 2];
        for (i, &d) in digits.iter().enumerate() {
            limbs[i / 32] += i64::from(d) << (i % 32);
        }
        normalise(limbs)
    }

    fn limbs_of_bits(bits: &[bool]) -> Vec<u32> {
        let mut limbs = vec![0i64; bits.len() / 32 + 2];
        for (i, &b) in bits.iter().enumerate() {
            limbs[i / 32] += i64::from(b) << (i % 32);
        }
        normalise(limbs)
    }

    fn normalise(mut limbs: Vec<i64>) -> Vec<u32> {
        let mut carry = 0i64;
        for l in &mut limbs {
            let v = *l + carry;
            *l = v.rem_euclid(1 << 32);
            carry = v.div_euclid(1 << 32);
        }
        assert_eq!(carry, 0, "negative or overflowing value");
        let mut out: Vec<u32> = limbs.into_iter().map(|l| l as u32).collect();
        while out.last() == Some(&0) {
            out.pop();
        }
        out
    }

    #[test]
    fn kt_round_trip_small() {
        for n in 0..=5000u128 {
            let bits = bits_of(n);
            let kt = koyama_tsuruoka(&bits);
            assert_eq!(value_of(&kt) as u128, n, "{n}: {kt:?}");
            assert!(kt.len() <= bits.len() + 1);
            assert_ne!(kt.last(), Some(&0));
        }
    }

    #[test]
    fn kt_round_trip_large() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x4b54);
        for _ in 0..500 {
            let bits: Vec<bool> = (0..200).map(|_| rng.gen()).collect();
            let kt = koyama_tsuruoka(&bits);
            assert!(kt.iter().all(|d| (-1..=1).contains(d)));
            assert_eq!(limbs_of_digits(&kt), limbs_of_bits(&bits));
            assert!(weight(&kt) <= naf_weight_of_bits(&bits));
            // Windows over a big recoding add up as well.
            let mut sum = vec![0i64; 9];
            for w in windows(&kt, 12) {
                let (limb, off) = (w.shift / 32, w.shift % 32);
                sum[limb] += w.value << off;
                sum = normalise_signed(sum);
            }
            assert_eq!(normalise(sum), limbs_of_bits(&bits));
        }
        // Long runs of ones and of zeros.
        let mut bits = vec![true; 500];
        bits.extend(vec![false; 100]);
        bits.extend(vec![true; 3]);
        let kt = koyama_tsuruoka(&bits);
        assert_eq!(limbs_of_digits(&kt), limbs_of_bits(&bits));
        assert_eq!(weight(&kt), 4); // 2^603 - 2^600 + 2^500 - 1
    }

    /// Keeps limbs small while summing shifted windows (carries may be negative).
    fn normalise_signed(mut limbs: Vec<i64>) -> Vec<i64> {
        let mut carry = 0i64;
        for l in &mut limbs {
            let v = *l + carry;
            *l = v.rem_euclid(1 << 32);
            carry = v.div_euclid(1 << 32);
        }
        if let Some(last) = limbs.last_mut() {
            *last += carry << 32;
        }
        limbs
    }

    #[test]
    fn kt_round_trip_u128() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..2000 {
            let n: u128 = rng.gen::<u128>() >> rng.gen_range(8..=127);
            assert_eq!(value_of(&koyama_tsuruoka(&bits_of(n))) as u128, n);
        }
    }

    #[test]
    fn kt_weight_is_minimal() {
        for n in 0..(1u128 << 14) {
            let kt = koyama_tsuruoka(&bits_of(n));
            assert!(weight(&kt) <= weight(&naf(n as i128)), "{n}: {kt:?}");
            assert_eq!(naf_weight_of_bits(&bits_of(n)), weight(&naf(n as i128)));
        }
    }

    #[test]
    fn textbook_variant_is_exact_but_not_minimal() {
        assert_eq!(koyama_tsuruoka(&bits_of(7)), [-1, 0, 0, 1]);
        assert_eq!(koyama_tsuruoka_textbook(&bits_of(7)), [1, 1, 1]);
        let mut worse = 0;
        for n in 0..(1u128 << 14) {
            let kt = koyama_tsuruoka_textbook(&bits_of(n));
            assert_eq!(value_of(&kt) as u128, n);
            assert!(kt.iter().all(|d| (-1..=1).contains(d)));
            worse += usize::from(weight(&kt) > weight(&naf(n as i128)));
        }
        assert_eq!(worse, 1485);
    }

    #[test]
    fn kt_example_from_parmesan() {
        // Figure 3 of PARMESAN: windows (885, 30), (-3247, 16), (1087, 0).
        let n = 950_048_719_935u128;
        let kt = koyama_tsuruoka(&bits_of(n));
        let got: Vec<(i64, usize)> = windows(&kt, 12)
            .into_iter()
            .map(|w| (w.value, w.shift))
            .collect();
        assert_eq!(got, [(885, 30), (-3247, 16), (1087, 0)]);
    }

    #[test]
    fn windows_are_odd_bounded_and_exact() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        for width in [1, 2, 5, 12] {
            for n in 0..=5000u128 {
                let digits = if rng.gen() {
                    koyama_tsuruoka(&bits_of(n))
                } else {
                    naf(n as i128)
                };
                let mut sum = 0i128;
                let mut prev_shift = usize::MAX;
                for w in windows(&digits, width) {
                    assert_eq!(w.value.rem_euclid(2), 1, "{n}: even window");
                    assert!(w.value.unsigned_abs() < 1 << width);
                    assert!(w.shift < prev_shift, "windows overlap");
                    assert_ne!(digits[w.shift], 0);
                    prev_shift = w.shift;
                    sum += i128::from(w.value) << w.shift;
                }
                assert_eq!(sum, n as i128);
            }
        }
        // Arbitrary signed-binary strings, negative values included: windows
        // are disjoint, and each is exactly the digits it covers.
        for _ in 0..2000 {
            let digits: Vec<i8> = (0..40).map(|_| rng.gen_range(-1..=1)).collect();
            let mut covered = digits.len();
            let mut sum = 0i128;
            for w in windows(&digits, 7) {
                assert!(w.shift < covered);
                let span = &digits[w.shift..covered.min(w.shift + 7)];
                assert_eq!(i128::from(w.value), value_of(span));
                assert!(digits[w.shift..covered].iter().skip(7).all(|&d| d == 0));
                covered = w.shift;
                sum += i128::from(w.value) << w.shift;
            }
            assert!(digits[..covered].iter().all(|&d| d == 0));
            assert_eq!(sum, value_of(&digits));
        }
        assert!(windows(&[], 12).is_empty());
        assert!(windows(&[0, 0, 0], 12).is_empty());
    }
}
