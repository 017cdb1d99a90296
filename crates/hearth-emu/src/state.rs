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

    /// Sets a run's initial registers: `clear` ones as clear values
    /// (public inputs such as pointers: addresses computed from them stay
    /// clear, so loads and stores through them work), `encrypted` ones as
    /// their digits (one per bit). For `bits`-bit registers: a register
    /// outside r0..r14, one given twice (in either list), a clear value
    /// that does not fit or a digit count other than `bits` is refused,
    /// and the state is then unchanged.
    pub fn set_registers(
        &mut self,
        clear: &[(u8, u32)],
        encrypted: Vec<(u8, Vec<D>)>,
        bits: usize,
    ) -> Result<(), RegisterError> {
        let mut seen = [false; 15];
        let mut take = |r: u8| -> Result<(), RegisterError> {
            let slot = seen
                .get_mut(r as usize)
                .ok_or(RegisterError::NotARegister(r))?;
            if std::mem::replace(slot, true) {
                return Err(RegisterError::Twice(r));
            }
            Ok(())
        };
        for &(r, value) in clear {
            take(r)?;
            if bits < 32 && value >> bits != 0 {
                return Err(RegisterError::TooWide {
                    reg: r,
                    value,
                    bits,
                });
            }
        }
        for (r, digits) in &encrypted {
            take(*r)?;
            if digits.len() != bits {
                return Err(RegisterError::Digits {
                    reg: *r,
                    found: digits.len(),
                    bits,
                });
            }
        }
        for &(r, value) in clear {
            self.regs[r as usize] = Val::Clear(value);
        }
        for (r, digits) in encrypted {
            self.regs[r as usize] = Val::Enc(digits);
        }
        Ok(())
    }
}

/// Why initial registers were refused ([`State::set_registers`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// Only r0..r14 can be given (pc starts at the entry).
    #[error("r{0}: registers are r0..r14 (sp, lr)")]
    NotARegister(u8),
    /// The same register given twice, clear or encrypted.
    #[error("r{0} is given twice")]
    Twice(u8),
    /// A clear value wider than the registers.
    #[error("r{reg} = {value:#x} does not fit {bits} bits")]
    TooWide {
        /// The register.
        reg: u8,
        /// The value given.
        value: u32,
        /// The register width.
        bits: usize,
    },
    /// An encrypted value with a digit count other than the width.
    #[error("r{reg} with {found} ciphertexts, expected {bits}")]
    Digits {
        /// The register.
        reg: u8,
        /// The digits given.
        found: usize,
        /// The register width.
        bits: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_checked_before_any_is_set() {
        let fresh = || State::<u64>::new(0x10000, 0x20000, Vec::new());
        let mut s = fresh();
        s.set_registers(&[(0, 0x20000), (13, 7)], vec![(1, vec![0; 32])], 32)
            .unwrap();
        assert_eq!(s.regs[0], Val::Clear(0x20000));
        assert_eq!(s.regs[13], Val::Clear(7));
        assert_eq!(s.regs[1], Val::Enc(vec![0; 32]));
        let refused = [
            (vec![(15, 1)], vec![], 32, RegisterError::NotARegister(15)),
            (vec![(2, 1), (2, 3)], vec![], 32, RegisterError::Twice(2)),
            (
                vec![(2, 1)],
                vec![(2, vec![0; 32])],
                32,
                RegisterError::Twice(2),
            ),
            (
                vec![(3, 0x1_0000)],
                vec![],
                16,
                RegisterError::TooWide {
                    reg: 3,
                    value: 0x1_0000,
                    bits: 16,
                },
            ),
            (
                vec![(0, 1)],
                vec![(4, vec![0; 16])],
                32,
                RegisterError::Digits {
                    reg: 4,
                    found: 16,
                    bits: 32,
                },
            ),
        ];
        for (clear, enc, bits, err) in refused {
            let mut s = fresh();
            assert_eq!(s.set_registers(&clear, enc, bits), Err(err));
            assert_eq!(s, fresh(), "nothing set");
        }
    }
}
