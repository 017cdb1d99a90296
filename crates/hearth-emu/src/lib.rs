//! hearth-emu: an ARM A32 processor on encrypted registers and memory.
//!
//! Programs are real A32 machine code (ELF executables from
//! `arm-none-eabi-gcc -marm`). Each executed instruction is built as one
//! circuit of hearth's bits family and run on a backend: the clear backend
//! (a debugging emulator) or the cpu backend (encrypted).
//!
//! What the server learns: the program, the program counter (so which
//! instructions run, and the outcome of every branch), and every address
//! (loads and stores must use clear addresses; an address computed from
//! encrypted data is an error). Register values, NZCV and data memory may
//! be encrypted; values computed from clear ones only stay clear.
//! Instructions whose condition depends on encrypted flags run
//! obliviously (both outcomes, selected bit by bit), except branches and
//! other writes to pc, which the key owner decides through a
//! [`BranchOracle`], one encrypted flag bit per decision, under a policy
//! that bounds their number.
//!
//! `svc` ends a run (the program's exit).

pub mod alu;
pub mod asm;
pub mod decode;
pub mod encode;
pub mod exec;
pub mod image;
pub mod isa;
pub mod machine;
pub mod oracle;
pub mod remote;
pub mod state;
pub mod values;

pub use decode::{decode, Unsupported};
pub use image::{Image, LoadError};
pub use isa::{Cond, Instr, Op};
pub use machine::{EmuError, Machine, StepReport, Stop, Width};
pub use oracle::{BranchOracle, ClearOracle, KeyOracle, NoOracle, Policy};
pub use state::{Byte, Flag, RegisterError, State, Val};
