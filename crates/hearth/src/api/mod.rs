//! The typed integers users hold: [`Int`] (exact, signed-binary digits).
//! Operations build one circuit lazily; nothing runs until the program does.

pub mod int;

pub use int::{
    clear_digits, clear_value, CompiledProgram, EncryptedInt, Int, Program, MAX_DIGITS,
    MAX_PRODUCTS,
};
