//! Values a bundle carries in the clear: bytes the server may read, such
//! as a symmetric ciphertext with its counter or IV (transciphering), or
//! public constants. Each value takes a fixed number of little-endian
//! bytes set by its shape, so a part of `n` bytes of `u8` data is `n`
//! bytes long. The server turns them into trivial (noiseless) ciphertexts
//! when it reads the bundle.

use num_bigint::BigInt;
use serde::{Deserialize, Serialize};

use crate::crypto::encoding::{value_digits, Shape};
use crate::error::Error;
use crate::formats::param::Param;

/// The values of some entries, each in [`value_width`] bytes, in entry
/// and value order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ClearValues {
    bytes: Vec<u8>,
}

/// Whether values of `shape` are read as two's complement.
fn signed(shape: Shape) -> bool {
    match shape {
        Shape::Word { signed, .. } => signed,
        Shape::Int { .. } | Shape::TwosInt { .. } => true,
    }
}

/// Bytes one value of `shape` takes: its range in bytes (a signed-binary
/// integer of `d` digits spans `±(2^d - 1)`, `d + 1` bits).
pub fn value_width(shape: Shape) -> usize {
    let bits = match shape {
        Shape::Int { digits } => digits + 1,
        Shape::TwosInt { bits } | Shape::Word { bits, .. } => bits,
    };
    bits.div_ceil(8)
}

/// Bytes the values of `params` take (saturating: the caller bounds the
/// counts first).
pub(crate) fn clear_len(params: &[Param]) -> Result<usize, Error> {
    params.iter().try_fold(0usize, |len, p| {
        Ok(len.saturating_add(p.count()?.saturating_mul(value_width(p.shape))))
    })
}

/// The values of `param` from `bytes` laid out as a clear part lays them
/// out (each in [`value_width`] bytes, little-endian, two's complement
/// where signed): raw files of values, such as sealed bytes. The length
/// must be the param's and every value must fit its shape.
pub fn values_from_bytes(param: &Param, bytes: &[u8]) -> Result<Vec<BigInt>, Error> {
    let clear = ClearValues {
        bytes: bytes.to_vec(),
    };
    Ok(clear
        .values(std::slice::from_ref(param))?
        .pop()
        .expect("one param, one list"))
}

impl ClearValues {
    /// `values` (one list per param, already counted) in their bytes;
    /// values that do not fit their shape are refused.
    pub(crate) fn encode(params: &[Param], values: &[Vec<BigInt>]) -> Result<Self, Error> {
        let mut bytes = Vec::new();
        for (p, vs) in params.iter().zip(values) {
            let width = value_width(p.shape);
            for v in vs {
                value_digits(p.shape, v)?;
                let mut b = if signed(p.shape) {
                    v.to_signed_bytes_le()
                } else {
                    v.to_bytes_le().1
                };
                let fill = if v.sign() == num_bigint::Sign::Minus {
                    0xff
                } else {
                    0
                };
                // In range, a value takes at most `width` bytes.
                b.resize(width, fill);
                bytes.extend(b);
            }
        }
        Ok(ClearValues { bytes })
    }

    /// The values of `params`, read back: the byte count must be theirs
    /// and every value must fit its shape.
    pub(crate) fn values(&self, params: &[Param]) -> Result<Vec<Vec<BigInt>>, Error> {
        let needed = clear_len(params)?;
        if needed != self.bytes.len() {
            return Err(Error::Dimensions(format!(
                "{} bytes of clear values for entries of {needed} bytes",
                self.bytes.len()
            )));
        }
        let mut rest = self.bytes.as_slice();
        params
            .iter()
            .map(|p| {
                let width = value_width(p.shape);
                (0..p.count()?)
                    .map(|_| {
                        let (b, tail) = rest.split_at(width);
                        rest = tail;
                        let v = if signed(p.shape) {
                            BigInt::from_signed_bytes_le(b)
                        } else {
                            BigInt::from_bytes_le(num_bigint::Sign::Plus, b)
                        };
                        value_digits(p.shape, &v)?;
                        Ok(v)
                    })
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(bits: usize, signed: bool) -> Shape {
        Shape::Word { bits, signed }
    }

    /// Every value of small shapes goes through its bytes and back, and
    /// takes exactly its width.
    #[test]
    fn values_round_trip_at_their_width() {
        let shapes = [
            word(1, false),
            word(8, false),
            word(8, true),
            word(12, true),
            word(16, false),
            Shape::TwosInt { bits: 9 },
            Shape::Int { digits: 7 },
            Shape::Int { digits: 8 },
        ];
        for shape in shapes {
            let (lo, hi): (i64, i64) = match shape {
                Shape::Word {
                    bits,
                    signed: false,
                } => (0, (1 << bits) - 1),
                Shape::Word { bits, signed: true } | Shape::TwosInt { bits } => {
                    (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
                }
                Shape::Int { digits } => (-(1 << digits) + 1, (1 << digits) - 1),
            };
            let p = Param::new("v", shape, &[(hi - lo + 1) as usize]);
            let values = vec![(lo..=hi).map(BigInt::from).collect::<Vec<_>>()];
            let clear = ClearValues::encode(std::slice::from_ref(&p), &values).unwrap();
            assert_eq!(
                clear.bytes.len(),
                values[0].len() * value_width(shape),
                "{shape}"
            );
            assert_eq!(clear.values(&[p]).unwrap(), values, "{shape}");
        }
    }

    /// Out-of-range values are refused when written and when read.
    #[test]
    fn values_out_of_range_are_refused() {
        let p = Param::new("v", word(12, false), &[]);
        let e = ClearValues::encode(std::slice::from_ref(&p), &[vec![BigInt::from(4096)]]);
        assert!(matches!(e, Err(Error::DoesNotFit { .. })), "{e:?}");
        let forged = ClearValues {
            bytes: vec![0xff, 0xff],
        };
        assert!(matches!(
            forged.values(std::slice::from_ref(&p)),
            Err(Error::DoesNotFit { .. })
        ));
        let short = ClearValues { bytes: vec![1] };
        assert!(matches!(short.values(&[p]), Err(Error::Dimensions(_))));
    }
}
