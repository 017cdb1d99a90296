//! A program's operations as data: every typed operation of [`super::Int`],
//! [`super::Word`] and [`super::Bool`] is one [`Op`] on the values made
//! before it ([`ValueId`]s): an [`IntOp`], a [`WordOp`] or a [`BoolOp`],
//! each family's ops named and evaluated in its own file beside its typed
//! methods (`int_op.rs`, `word_op.rs`, `bool_op.rs`); this file holds what
//! is common (inputs, the thread plan, the work bound), `operand.rs` the
//! operands' checks the families share. The typed values only name the
//! op; a program records the ops it applied, so it can be written to a file and built again, every
//! check running again, by replaying them ([`crate::formats::program_file`]).
//!
//! A circuit alone could not be checked that way: its algorithms narrow
//! ranges by facts interval arithmetic cannot see
//! ([`CircuitBuilder::assume_range`]), which a forged circuit could
//! misstate. Ops are built by the library's own algorithms, so a replayed
//! program is valid by construction, or refused with a typed error.

use serde::{Deserialize, Serialize};

pub use super::bool_op::BoolOp;
pub use super::int_op::IntOp;
pub use super::operand::ValueId;
use super::operand::{width_within, Val};
pub use super::word_op::{Overflowing, WordArith, WordOp};
use crate::bits::Bits;
use crate::circuit::CircuitBuilder;
use crate::crypto::encoding::{digits_within, Shape};
use crate::digits::Digits;
use crate::error::Error;

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
            Op::Bool(op) => op.work(&len),
        };
        self.operands()
            .iter()
            .fold(own, |t, &x| t.saturating_add(len(x)))
            .saturating_add(1)
    }

    /// The bytes its operand lists hold outside itself (its clear
    /// constants, a few words each, are not counted): for a program's
    /// [`heap_bytes`](super::CompiledProgram::heap_bytes).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Op::Int(IntOp::Sum(_) | IntOp::FusedSum { .. }) | Op::Word(WordOp::FusedSum { .. }) => {
                std::mem::size_of_val(&self.operands()[..])
            }
            _ => 0,
        }
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
