//! The typed values users hold, in one [`Program`]: [`Int`] (exact,
//! signed-binary digits: lengths grow as needed) and the fixed-width
//! [`Word`] types with Rust's wrapping semantics ([`U32`], [`I64`], ...)
//! and [`Bool`] (two's-complement bits). Operations build one circuit
//! lazily; nothing runs until the compiled program does.

pub mod bool_op;
pub mod by_id;
mod fuse;
pub mod int;
pub mod int_op;
mod operand;
pub mod ops;
pub mod program;
pub mod table;
pub mod word;
pub mod word_op;

pub use crate::crypto::encoding::{
    clear_digits, clear_digits_twos, clear_value, clear_word, clear_word_value, Encrypted, Plain,
    Shape, MAX_DIGITS, MAX_PRODUCTS,
};
pub use crate::formats::program_head::{ProgramSummary, Signature};
pub use crate::formats::{Bundle, Entry, Param, MAX_VALUES};
pub use int::Int;
pub use ops::{BoolOp, IntOp, Op, ValueId, WordOp};
pub use program::{CompiledProgram, Program, Value};
pub use word::{AesRoundKeys, Bool, Word, I128, I16, I32, I64, I8, U128, U16, U32, U64, U8};
