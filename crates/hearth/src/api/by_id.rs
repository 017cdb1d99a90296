//! Values by id: the entry for front ends that hold a program's values as
//! data rather than as borrowed typed handles (the Python package). An op
//! given as data is built at once and its error returned, and a typed
//! handle ([`Int`], [`Word`], [`Bool`]) can be taken back from an id, so
//! the kernels of [`crate::kernels`] serve those front ends too.

use super::operand::Val;
use super::ops::{Op, ValueId};
use super::program::Program;
use super::{Bool, Int, Word};
use crate::bits::Bits;
use crate::crypto::encoding::Shape;
use crate::error::Error;

impl Program {
    /// Builds `op` (operands are ids this program made) and returns the ids
    /// of its results. Its error, if any, is returned here; the program then
    /// builds nothing more ([`Program::build`] refuses it).
    pub fn push(&self, op: impl Into<Op>) -> Result<Vec<ValueId>, Error> {
        self.earlier_error()?;
        match self.apply(op.into()) {
            Some(made) => Ok(made.into_iter().map(|(id, _)| id).collect()),
            None => Err(self.take_error()),
        }
    }

    /// The shape of value `id` (a two's-complement input is an integer of
    /// its digits once made), or `None` for an id this program has not made.
    pub fn shape_of(&self, id: ValueId) -> Option<Shape> {
        self.value(id).map(|v| v.shape())
    }

    /// Marks value `id` as an output (see [`Program::output`]).
    pub fn output_value(&self, id: ValueId) -> Result<(), Error> {
        self.earlier_error()?;
        self.output_id(id);
        self.earlier_error().map_err(|_| self.take_error())
    }

    /// The error an operation of the typed API met since the last call
    /// (the typed API keeps errors in the program), handed out; the
    /// program builds nothing more after one.
    pub fn check(&self) -> Result<(), Error> {
        if self.state.borrow().error.is_some() {
            return Err(self.take_error());
        }
        Ok(())
    }

    /// The error an earlier operation met, as an error to return again.
    fn earlier_error(&self) -> Result<(), Error> {
        match &self.state.borrow().error {
            Some(e) => Err(Error::Config(format!(
                "the program stopped at an earlier error: {e}"
            ))),
            None => Ok(()),
        }
    }

    /// The error just kept, handed to the caller; a note of it stays so
    /// that the program builds nothing more.
    fn take_error(&self) -> Error {
        let mut st = self.state.borrow_mut();
        let e = st
            .error
            .take()
            .unwrap_or_else(|| Error::Internal("an op failed with no error".into()));
        st.error = Some(Error::Config(format!("an operation failed: {e}")));
        e
    }

    /// Value `id`, checked to be of `shape`.
    fn value_of(&self, id: ValueId, shape: Shape) -> Result<Val, Error> {
        let v = self
            .value(id)
            .ok_or_else(|| Error::Config(format!("value {} was not made by this program", id.0)))?;
        if v.shape() != shape {
            return Err(Error::ShapeMismatch {
                what: format!("value {}", id.0),
                expected: shape,
                found: v.shape(),
            });
        }
        Ok(v)
    }
}

fn bits_of(v: Val) -> Bits {
    match v {
        Val::Word(b, _) => b,
        Val::Int(_) => unreachable!("shape checked: a word"),
    }
}

impl<'p> Int<'p> {
    /// The integer value `id` of `program` (an error if it is not one).
    pub fn from_id(program: &'p Program, id: ValueId) -> Result<Self, Error> {
        let shape = program
            .shape_of(id)
            .filter(|s| matches!(s, Shape::Int { .. }))
            .ok_or_else(|| Error::Config(format!("value {} is not an integer", id.0)))?;
        match program.value_of(id, shape)? {
            Val::Int(digits) => Ok(Int::from_parts(program, id, digits)),
            Val::Word(..) => unreachable!("shape checked: an integer"),
        }
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Word<'p, BITS, SIGNED> {
    /// The word value `id` of `program` (an error if it is not one of this
    /// width and signedness).
    pub fn from_id(program: &'p Program, id: ValueId) -> Result<Self, Error> {
        let shape = Shape::Word {
            bits: BITS,
            signed: SIGNED,
        };
        let bits = bits_of(program.value_of(id, shape)?);
        Ok(Word::from_parts(program, id, bits))
    }
}

impl<'p> Bool<'p> {
    /// The boolean value `id` of `program` (a one-bit unsigned value).
    pub fn from_id(program: &'p Program, id: ValueId) -> Result<Self, Error> {
        let shape = Shape::Word {
            bits: 1,
            signed: false,
        };
        let bits = bits_of(program.value_of(id, shape)?);
        Ok(Bool::from_parts(program, id, bits))
    }
}
