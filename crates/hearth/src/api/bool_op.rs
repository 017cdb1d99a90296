//! The boolean family's operations as data ([`BoolOp`]): what each reads,
//! what building it may cost, and how it is built on one bit of the bits
//! family. [`super::Bool`]'s methods (`word.rs`) record them; this file is
//! the one place a boolean operation is named and evaluated.

use serde::{Deserialize, Serialize};

use super::operand::{boolean, flag_val, width_within, words, Val, ValueId};
use crate::bits::gates::{self, Gate};
use crate::bits::{compare, convert, Bits};
use crate::circuit::{CircuitBuilder, Selectors};
use crate::error::Error;

/// An operation of the boolean family (`Bool`: a one-bit word).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum BoolOp {
    /// A gate on two booleans.
    Gate(Gate, ValueId, ValueId),
    /// `!b`.
    Not(ValueId),
    /// Per bit, `if c { x } else { y }` (`c` a boolean, `x` and `y` words
    /// of one type).
    Select(ValueId, ValueId, ValueId),
    /// A boolean as an unsigned word of this width (0 or 1).
    ToWord(ValueId, usize),
}

impl BoolOp {
    /// The values it reads, in order.
    pub fn operands(&self) -> Vec<ValueId> {
        match self {
            BoolOp::Not(x) | BoolOp::ToWord(x, _) => vec![*x],
            BoolOp::Gate(_, x, y) => vec![*x, *y],
            BoolOp::Select(c, x, y) => vec![*c, *x, *y],
        }
    }

    /// Its own share of [`super::Op::work`] (reading the operands is
    /// counted there).
    pub(crate) fn work(&self) -> u64 {
        match self {
            BoolOp::ToWord(_, k) => *k as u64,
            _ => 0,
        }
    }

    /// Builds it on `b` from its operands' values (`args`, in the order of
    /// [`BoolOp::operands`]).
    pub(crate) fn apply(&self, b: &mut CircuitBuilder, args: &[&Val]) -> Result<Vec<Val>, Error> {
        let x = || args[0];
        let y = || args[1];
        match self {
            BoolOp::Gate(g, ..) => {
                let (p, q) = (boolean(x())?, boolean(y())?);
                Ok(vec![flag_val(gates::gate(
                    b,
                    &mut Selectors::for_bits(),
                    *g,
                    p,
                    q,
                )?)])
            }
            BoolOp::Not(_) => Ok(vec![flag_val(gates::not(b, boolean(x())?)?)]),
            BoolOp::Select(..) => {
                let c = boolean(args[0])?;
                let (p, q, signed) = words(args[1], args[2])?;
                Ok(vec![Val::Word(compare::select(b, c, p, q)?, signed)])
            }
            BoolOp::ToWord(_, n) => {
                let c = boolean(x())?;
                width_within(*n)?;
                let one = Bits::from_vec(vec![c]);
                Ok(vec![Val::Word(convert::resize(b, &one, *n, false), false)])
            }
        }
    }
}
