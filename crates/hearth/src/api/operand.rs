//! The values ops read and make ([`ValueId`] in a program, [`Val`] on the
//! builder) and the checks every family's ops share: an operand's kind
//! and size, and the work bounds of products and fused sums.

use num_bigint::BigInt;
use serde::{Deserialize, Serialize};

use crate::bits::Bits;
use crate::circuit::Wire;
use crate::crypto::encoding::{within, Shape, MAX_DIGITS, MAX_PRODUCTS};
use crate::digits::Digits;
use crate::error::Error;

/// A value of a program: the index of the op result that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ValueId(pub u32);

/// A value on the builder: what an op reads and makes.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// Signed-binary digits.
    Int(Digits),
    /// A word's bits (a boolean is one unsigned bit).
    Word(Bits, bool),
}

impl Val {
    /// Its shape (an integer's digits counted; two's-complement inputs
    /// become integers once made).
    pub(crate) fn shape(&self) -> Shape {
        match self {
            Val::Int(d) => Shape::Int { digits: d.len() },
            Val::Word(b, signed) => Shape::Word {
                bits: b.len(),
                signed: *signed,
            },
        }
    }

    /// Its wires, least significant first.
    pub(crate) fn wires(&self) -> &[Wire] {
        match self {
            Val::Int(d) => d.wires(),
            Val::Word(b, _) => b.wires(),
        }
    }
}

/// The bits of a clear factor or constant, at least 1 (work bounds).
pub(crate) fn bits_work(k: &BigInt) -> u64 {
    k.bits().max(1)
}

/// The work of a product: the square of the longer operand (some
/// algorithms pad the shorter one: a 21 764 x 4-digit product needs
/// gigabytes).
pub(crate) fn product_work(len: &dyn Fn(ValueId) -> u64, a: ValueId, b: ValueId) -> u64 {
    let n = len(a).max(len(b));
    n.saturating_mul(n)
}

/// The work of a fused sum: its products, its scaled terms, its bias.
pub(crate) fn sum_work(
    len: &dyn Fn(ValueId) -> u64,
    products: &[(ValueId, ValueId)],
    scaled: &[(ValueId, BigInt)],
    bias: &BigInt,
) -> u64 {
    let p = products.iter().fold(0u64, |t, (a, b)| {
        t.saturating_add(product_work(len, *a, *b))
    });
    scaled
        .iter()
        .fold(p, |t, (a, k)| {
            t.saturating_add(len(*a).saturating_mul(bits_work(k)))
        })
        .saturating_add(bits_work(bias))
}

/// The digits of an integer operand, or a typed error for a word.
pub(crate) fn int(v: &Val) -> Result<&Digits, Error> {
    match v {
        Val::Int(d) => Ok(d),
        Val::Word(..) => Err(kind_error("an integer", v)),
    }
}

/// The bits and signedness of a word operand, or a typed error.
pub(crate) fn word(v: &Val) -> Result<(&Bits, bool), Error> {
    match v {
        Val::Word(b, s) => Ok((b, *s)),
        Val::Int(_) => Err(kind_error("a word", v)),
    }
}

/// The bit of a boolean operand (a 1-bit unsigned word).
pub(crate) fn boolean(v: &Val) -> Result<Wire, Error> {
    match v {
        Val::Word(b, false) if b.len() == 1 => Ok(b.wires()[0]),
        _ => Err(kind_error("a boolean", v)),
    }
}

pub(crate) fn kind_error(expected: &str, found: &Val) -> Error {
    Error::DoesNotFit {
        value: found.shape().to_string(),
        target: format!("an operand that must be {expected}"),
    }
}

/// Two words of one type.
pub(crate) fn words<'a>(x: &'a Val, y: &'a Val) -> Result<(&'a Bits, &'a Bits, bool), Error> {
    let (a, s) = word(x)?;
    let (b, t) = word(y)?;
    if a.len() != b.len() || s != t {
        return Err(Error::ShapeMismatch {
            what: "the second operand".into(),
            expected: x.shape(),
            found: y.shape(),
        });
    }
    Ok((a, b, s))
}

pub(crate) fn products_within(n: usize, m: usize) -> Result<(), Error> {
    within(
        || format!("a product of {n} by {m} digits (digit products)"),
        n as u64 * m as u64,
        MAX_PRODUCTS,
    )
}

pub(crate) fn width_within(n: usize) -> Result<(), Error> {
    within(|| "a word (bits)".into(), n as u64, MAX_DIGITS as u64)
}

/// A boolean value from its bit.
pub(crate) fn flag_val(w: Wire) -> Val {
    Val::Word(Bits::from_vec(vec![w]), false)
}
