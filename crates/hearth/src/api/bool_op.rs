//! The boolean family's operations ([`BoolOp`]), a row each (`op_table!`
//! in `table.rs`): what each reads, what building it may cost, and how it
//! is built on one bit of the bits family. [`super::Bool`]'s methods
//! (`word.rs`) record them.

use super::operand::{boolean, flag_val, width_within, words, Val, ValueId};
use super::table::op_table;
use crate::bits::gates::{self, Gate};
use crate::bits::{compare, convert, Bits};
use crate::circuit::Selectors;

op_table! {
    /// An operation of the boolean family (`Bool`: a one-bit word).
    pub enum BoolOp;

    /// A gate on two booleans.
    Gate(gate: Gate, x: ValueId, y: ValueId) "gate" python: false,
        work(len) { 0 }
        build(b, args) {
            let (p, q) = (boolean(args[0])?, boolean(args[1])?);
            let w = gates::gate(b, &mut Selectors::for_bits(), *gate, p, q)?;
            Ok(vec![flag_val(w)])
        }
    /// `!x`.
    Not(x: ValueId) "not" python: false,
        work(len) { 0 }
        build(b, args) { Ok(vec![flag_val(gates::not(b, boolean(args[0])?)?)]) }
    /// Per bit, `if c { x } else { y }` (`c` a boolean, `x` and `y` words
    /// of one type).
    Select(c: ValueId, x: ValueId, y: ValueId) "select" python: false,
        work(len) { 0 }
        build(b, args) {
            let c = boolean(args[0])?;
            let (p, q, signed) = words(args[1], args[2])?;
            Ok(vec![Val::Word(compare::select(b, c, p, q)?, signed)])
        }
    /// A boolean as an unsigned word of this width (0 or 1).
    ToWord(x: ValueId, bits: usize) "to_word" python: false,
        work(len) { *bits as u64 }
        build(b, args) {
            let c = boolean(args[0])?;
            width_within(*bits)?;
            let one = Bits::from_vec(vec![c]);
            Ok(vec![Val::Word(convert::resize(b, &one, *bits, false), false)])
        }
}
