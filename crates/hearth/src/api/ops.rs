//! A program's operations as data: every typed operation of [`super::Int`],
//! [`super::Word`] and [`super::Bool`] is one [`Op`] on the values made
//! before it ([`ValueId`]s): an [`IntOp`], a [`WordOp`] or a [`BoolOp`],
//! each family's ops named and evaluated in its own file beside its typed
//! methods (`int_op.rs`, `word_op.rs`, `bool_op.rs`); this file holds what
//! is common (inputs, the thread plan, the work bound, operand checks). The typed values only name the op; a program records the ops
//! it applied, so it can be written to a file and built again, every
//! check running again, by replaying them ([`crate::formats::program_file`]).
//!
//! A circuit alone could not be checked that way: its algorithms narrow
//! ranges by facts interval arithmetic cannot see
//! ([`CircuitBuilder::assume_range`]), which a forged circuit could
//! misstate. Ops are built by the library's own algorithms, so a replayed
//! program is valid by construction, or refused with a typed error.

use num_bigint::BigInt;
use serde::{Deserialize, Serialize};

pub use super::bool_op::BoolOp;
pub use super::int_op::IntOp;
pub use super::word_op::WordOp;
use crate::bits::Bits;
use crate::circuit::{CircuitBuilder, Wire};
use crate::crypto::encoding::{digits_within, within, Shape, MAX_DIGITS, MAX_PRODUCTS};
use crate::digits::Digits;
use crate::error::Error;

/// A value of a program: the index of the op result that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ValueId(pub u32);

/// A two-operand word operation with a result of the operands' width,
/// wrapping like Rust's `wrapping_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WordArith {
    /// `x + y`.
    Add,
    /// `x - y`.
    Sub,
    /// `x * y` (the low half of the product).
    Mul,
    /// `x / y` (all ones, or -1 / 1 when signed, for a zero divisor).
    Div,
    /// `x % y` (the dividend for a zero divisor).
    Rem,
    /// `x & y`.
    And,
    /// `x | y`.
    Or,
    /// `x ^ y`.
    Xor,
}

/// A word operation whose second result is Rust's `overflowing_*` flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Overflowing {
    /// `overflowing_add`.
    Add,
    /// `overflowing_sub`.
    Sub,
    /// `overflowing_mul`.
    Mul,
}

/// One typed operation of a program. Operands are values made before it;
/// widths and signedness of words come from the operands, so a forged
/// list of ops can only describe programs the typed API could build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Op {
    /// An encrypted input of this shape.
    Input(Shape),
    /// Plans the ops after it for this many threads
    /// ([`super::Program::set_threads`]).
    PlanThreads(usize),
    /// An operation of the integer family.
    Int(IntOp),
    /// An operation of the word family.
    Word(WordOp),
    /// An operation of the boolean family.
    Bool(BoolOp),
    /// Built by code outside the library on the circuit builder
    /// ([`super::Word::from_circuit`]): a program holding one cannot be
    /// written to a file.
    Custom,
}

impl From<IntOp> for Op {
    fn from(op: IntOp) -> Op {
        Op::Int(op)
    }
}

impl From<WordOp> for Op {
    fn from(op: WordOp) -> Op {
        Op::Word(op)
    }
}

impl From<BoolOp> for Op {
    fn from(op: BoolOp) -> Op {
        Op::Bool(op)
    }
}

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

impl Op {
    /// Whether it makes signed-binary integers, and whether it makes
    /// words: the families whose parameters it needs.
    pub(crate) fn families(&self) -> (bool, bool) {
        match self {
            Op::Input(Shape::Word { .. }) => (false, true),
            Op::Input(_) => (true, false),
            Op::PlanThreads(_) | Op::Custom => (false, false),
            Op::Int(IntOp::ToWord { .. }) => (false, true),
            Op::Int(_) | Op::Word(WordOp::ToInt(_)) => (true, false),
            Op::Word(_) | Op::Bool(_) => (false, true),
        }
    }

    /// A bound on the digit (or bit) operations building it takes, from
    /// its operands' lengths (`len`): products of lengths for
    /// multiplications and divisions, sums otherwise. Program files bound
    /// the total before building ([`crate::formats::program_file`]).
    pub(crate) fn work(&self, len: impl Fn(ValueId) -> u64) -> u64 {
        let own = match self {
            Op::Input(shape) => shape.len() as u64,
            Op::PlanThreads(_) | Op::Custom => 0,
            Op::Int(op) => op.work(&len),
            Op::Word(op) => op.work(&len),
            Op::Bool(op) => op.work(),
        };
        self.operands()
            .iter()
            .fold(own, |t, &x| t.saturating_add(len(x)))
            .saturating_add(1)
    }

    /// The values it reads, in order.
    pub fn operands(&self) -> Vec<ValueId> {
        match self {
            Op::Input(_) | Op::PlanThreads(_) | Op::Custom => Vec::new(),
            Op::Int(op) => op.operands(),
            Op::Word(op) => op.operands(),
            Op::Bool(op) => op.operands(),
        }
    }

    /// Builds it on `b` from its operands' values (`args`, in the order
    /// of [`Op::operands`]): its results, or a typed error for operands of
    /// the wrong kind or size, or anything the algorithms refuse.
    pub(crate) fn apply(&self, b: &mut CircuitBuilder, args: &[&Val]) -> Result<Vec<Val>, Error> {
        match self {
            Op::Input(shape) => match *shape {
                Shape::Int { digits } => {
                    digits_within("an input", digits as u64)?;
                    Ok(vec![Val::Int(Digits::input(b, digits)?)])
                }
                Shape::TwosInt { bits } => {
                    digits_within("an input", bits as u64)?;
                    Ok(vec![Val::Int(Digits::input_twos(b, bits)?)])
                }
                Shape::Word { bits, signed } => {
                    width_within(bits)?;
                    Ok(vec![Val::Word(Bits::input(b, bits)?, signed)])
                }
            },
            Op::PlanThreads(t) => {
                b.set_threads(*t);
                Ok(Vec::new())
            }
            Op::Int(op) => op.apply(b, args),
            Op::Word(op) => op.apply(b, args),
            Op::Bool(op) => op.apply(b, args),
            Op::Custom => Err(Error::Config(
                "a custom operation (Word::from_circuit) cannot be built from a program file"
                    .into(),
            )),
        }
    }
}

/// The bits of a clear factor or constant, at least 1 (work bounds).
pub(super) fn bits_work(k: &BigInt) -> u64 {
    k.bits().max(1)
}

/// The work of a product: the square of the longer operand (some
/// algorithms pad the shorter one: a 21 764 x 4-digit product needs
/// gigabytes).
pub(super) fn product_work(len: &dyn Fn(ValueId) -> u64, a: ValueId, b: ValueId) -> u64 {
    let n = len(a).max(len(b));
    n.saturating_mul(n)
}

/// The work of a fused sum: its products, its scaled terms, its bias.
pub(super) fn sum_work(
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
pub(super) fn int(v: &Val) -> Result<&Digits, Error> {
    match v {
        Val::Int(d) => Ok(d),
        Val::Word(..) => Err(kind_error("an integer", v)),
    }
}

/// The bits and signedness of a word operand, or a typed error.
pub(super) fn word(v: &Val) -> Result<(&Bits, bool), Error> {
    match v {
        Val::Word(b, s) => Ok((b, *s)),
        Val::Int(_) => Err(kind_error("a word", v)),
    }
}

/// The bit of a boolean operand (a 1-bit unsigned word).
pub(super) fn boolean(v: &Val) -> Result<Wire, Error> {
    match v {
        Val::Word(b, false) if b.len() == 1 => Ok(b.wires()[0]),
        _ => Err(kind_error("a boolean", v)),
    }
}

pub(super) fn kind_error(expected: &str, found: &Val) -> Error {
    Error::DoesNotFit {
        value: found.shape().to_string(),
        target: format!("an operand that must be {expected}"),
    }
}

/// Two words of one type.
pub(super) fn words<'a>(x: &'a Val, y: &'a Val) -> Result<(&'a Bits, &'a Bits, bool), Error> {
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

pub(super) fn products_within(n: usize, m: usize) -> Result<(), Error> {
    within(
        || format!("a product of {n} by {m} digits (digit products)"),
        n as u64 * m as u64,
        MAX_PRODUCTS,
    )
}

pub(super) fn width_within(n: usize) -> Result<(), Error> {
    within(|| "a word (bits)".into(), n as u64, MAX_DIGITS as u64)
}

/// A boolean value from its bit.
pub(super) fn flag_val(w: Wire) -> Val {
    Val::Word(Bits::from_vec(vec![w]), false)
}
