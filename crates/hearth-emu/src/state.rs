//! The machine state: registers, flags and data memory, each value clear
//! (known to the server: constants, addresses, anything computed from
//! clear values only) or encrypted (one digit per bit).

use serde::{Deserialize, Serialize};

/// A 32-bit register value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Val<D> {
    /// Known to the server.
    Clear(u32),
    /// 32 digits, least significant bit first.
    Enc(Vec<D>),
}

/// One flag.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Flag<D> {
    /// Known to the server.
    Clear(bool),
    /// Encrypted: one digit, 0 or 2.
    Enc(D),
}

/// One byte of data memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Byte<D> {
    /// Known to the server.
    Clear(u8),
    /// 8 digits, least significant bit first.
    Enc(Vec<D>),
}

/// Registers (r15 is the clear program counter, kept apart), NZCV and the
/// data memory `[base, base + bytes.len())`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct State<D> {
    /// r0..r14.
    pub regs: Vec<Val<D>>,
    /// The program counter (always clear).
    pub pc: u32,
    /// N, Z, C, V.
    pub flags: [Flag<D>; 4],
    /// The data memory's first address.
    pub base: u32,
    /// The data memory, one value per byte.
    pub memory: Vec<Byte<D>>,
}

impl<D: Clone> State<D> {
    /// Registers r0..r14 and flags clear zero, pc at `entry`, memory as given.
    pub fn new(entry: u32, base: u32, memory: Vec<Byte<D>>) -> Self {
        State {
            regs: vec![Val::Clear(0); 15],
            pc: entry,
            flags: [
                Flag::Clear(false),
                Flag::Clear(false),
                Flag::Clear(false),
                Flag::Clear(false),
            ],
            base,
            memory,
        }
    }

    /// The index of data byte `addr`, if it is in the data memory.
    pub fn index(&self, addr: u32) -> Option<usize> {
        let i = addr.checked_sub(self.base)? as usize;
        (i < self.memory.len()).then_some(i)
    }
}
