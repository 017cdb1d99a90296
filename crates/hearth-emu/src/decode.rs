//! A32 machine code to [`Instr`]: the supported subset, and a name for
//! what is outside it so that the error says what was found.

use crate::isa::{Cond, DpOp, Instr, Offset, Op, Operand2, Shift, ShiftKind, Size};

/// An instruction word the emulator does not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unsupported instruction at {addr:#010x}: {word:#010x} ({mnemonic})")]
pub struct Unsupported {
    /// Where it is.
    pub addr: u32,
    /// Its encoding.
    pub word: u32,
    /// The instruction class found (e.g. `swp`, `coprocessor`, `thumb
    /// interworking`), as far as the decoder can tell.
    pub mnemonic: String,
}

fn bits(w: u32, hi: u32, lo: u32) -> u32 {
    (w >> lo) & ((1 << (hi - lo + 1)) - 1)
}

fn bit(w: u32, i: u32) -> bool {
    (w >> i) & 1 == 1
}

fn reg(w: u32, lo: u32) -> u8 {
    bits(w, lo + 3, lo) as u8
}

/// Decodes the word at `addr` (branch targets are absolute).
pub fn decode(addr: u32, word: u32) -> Result<Instr, Unsupported> {
    let no = |m: &str| Unsupported {
        addr,
        word,
        mnemonic: m.to_string(),
    };
    let cond =
        Cond::from_bits(bits(word, 31, 28)).ok_or_else(|| no("unconditional-space instruction"))?;
    let op = match bits(word, 27, 25) {
        0b000 => decode_000(word).ok_or_else(|| no(name_000(word)))?,
        0b001 => decode_001(word).ok_or_else(|| no("msr / hint"))?,
        0b010 => single(word, Offset::Imm(bits(word, 11, 0))),
        0b011 if !bit(word, 4) => single(
            word,
            Offset::Reg {
                rm: reg(word, 0),
                shift: Shift::from_imm(bits(word, 6, 5), bits(word, 11, 7)),
            },
        ),
        0b011 => decode_media(word).ok_or_else(|| no("media instruction"))?,
        0b100 => {
            if bit(word, 22) {
                return Err(no("ldm / stm with user registers"));
            }
            let regs = bits(word, 15, 0) as u16;
            if regs == 0 {
                return Err(no("ldm / stm with no registers"));
            }
            Op::Block {
                load: bit(word, 20),
                rn: reg(word, 16),
                regs,
                up: bit(word, 23),
                before: bit(word, 24),
                writeback: bit(word, 21),
            }
        }
        0b101 => {
            let off = ((bits(word, 23, 0) << 8) as i32 >> 6) as u32;
            Op::Branch {
                link: bit(word, 24),
                target: addr.wrapping_add(8).wrapping_add(off),
            }
        }
        _ if bits(word, 27, 24) == 0b1111 => Op::Svc {
            imm: bits(word, 23, 0),
        },
        _ => return Err(no("coprocessor / floating point")),
    };
    Ok(Instr { cond, op })
}

/// LDR / STR / LDRB / STRB.
fn single(w: u32, offset: Offset) -> Op {
    let size = if bit(w, 22) { Size::Byte } else { Size::Word };
    mem(w, size, false, offset)
}

/// A single load or store with the P, U, W, L, Rn and Rt fields of `w`.
fn mem(w: u32, size: Size, signed: bool, offset: Offset) -> Op {
    Op::Mem {
        load: bit(w, 20),
        size,
        signed,
        rt: reg(w, 12),
        rn: reg(w, 16),
        offset,
        add: bit(w, 23),
        pre: bit(w, 24),
        // Post-indexed accesses always write back (W then means "user").
        writeback: bit(w, 21) || !bit(w, 24),
    }
}

fn name_000(w: u32) -> &'static str {
    if bit(w, 7) && bit(w, 4) {
        match bits(w, 6, 5) {
            0 if bits(w, 27, 24) == 1 => "swp / ldrex / strex",
            0 => "multiply variant",
            _ => "ldrd / strd",
        }
    } else if bits(w, 24, 23) == 0b10 && !bit(w, 20) {
        "mrs / msr / status instruction"
    } else {
        "unknown"
    }
}

fn decode_000(w: u32) -> Option<Op> {
    if bit(w, 7) && bit(w, 4) {
        if bits(w, 6, 5) == 0 {
            return multiply(w);
        }
        return extra_mem(w);
    }
    if bits(w, 24, 23) == 0b10 && !bit(w, 20) {
        return misc(w);
    }
    let shift = if bit(w, 4) {
        Shift::Reg(shift_kind(bits(w, 6, 5)), reg(w, 8))
    } else {
        Shift::from_imm(bits(w, 6, 5), bits(w, 11, 7))
    };
    dp(
        w,
        Operand2::Reg {
            rm: reg(w, 0),
            shift,
        },
    )
}

fn shift_kind(b: u32) -> ShiftKind {
    match b {
        0 => ShiftKind::Lsl,
        1 => ShiftKind::Lsr,
        2 => ShiftKind::Asr,
        _ => ShiftKind::Ror,
    }
}

fn dp(w: u32, op2: Operand2) -> Option<Op> {
    let op = DpOp::from_bits(bits(w, 24, 21));
    // Should-be-zero fields: Rn of MOV / MVN, Rd of the compares.
    if (op.is_move() && bits(w, 19, 16) != 0) || (op.is_test() && bits(w, 15, 12) != 0) {
        return None;
    }
    Some(Op::Dp {
        op,
        s: bit(w, 20),
        rd: reg(w, 12),
        rn: reg(w, 16),
        op2,
    })
}

fn multiply(w: u32) -> Option<Op> {
    let s = bit(w, 20);
    let (rd, ra, rm, rn) = (reg(w, 16), reg(w, 12), reg(w, 8), reg(w, 0));
    match bits(w, 27, 21) {
        0b000_0000 if ra == 0 => Some(Op::Mul {
            s,
            rd,
            rn,
            rm,
            acc: None,
        }),
        0b000_0001 => Some(Op::Mul {
            s,
            rd,
            rn,
            rm,
            acc: Some((ra, false)),
        }),
        0b000_0011 if !s => Some(Op::Mul {
            s,
            rd,
            rn,
            rm,
            acc: Some((ra, true)),
        }),
        0b000_0100..=0b000_0111 => Some(Op::MulLong {
            signed: bit(w, 22),
            accumulate: bit(w, 21),
            s,
            rdlo: ra,
            rdhi: rd,
            rn,
            rm,
        }),
        _ => None,
    }
}

/// LDRH / STRH / LDRSB / LDRSH.
fn extra_mem(w: u32) -> Option<Op> {
    let load = bit(w, 20);
    let (size, signed) = match (bits(w, 6, 5), load) {
        (0b01, _) => (Size::Half, false),
        (0b10, true) => (Size::Byte, true),
        (0b11, true) => (Size::Half, true),
        _ => return None,
    };
    let offset = if bit(w, 22) {
        Offset::Imm((bits(w, 11, 8) << 4) | bits(w, 3, 0))
    } else {
        if bits(w, 11, 8) != 0 {
            return None;
        }
        Offset::Reg {
            rm: reg(w, 0),
            shift: Shift::None,
        }
    };
    Some(mem(w, size, signed, offset))
}

/// BX, BLX (register), CLZ.
fn misc(w: u32) -> Option<Op> {
    match (bits(w, 22, 21), bits(w, 7, 4)) {
        (0b01, 0b0001) if bits(w, 19, 8) == 0xfff => Some(Op::BranchReg {
            link: false,
            rm: reg(w, 0),
        }),
        (0b01, 0b0011) if bits(w, 19, 8) == 0xfff => Some(Op::BranchReg {
            link: true,
            rm: reg(w, 0),
        }),
        (0b11, 0b0001) if bits(w, 19, 16) == 0xf && bits(w, 11, 8) == 0xf => Some(Op::Clz {
            rd: reg(w, 12),
            rm: reg(w, 0),
        }),
        _ => None,
    }
}

fn decode_001(w: u32) -> Option<Op> {
    if bits(w, 24, 23) == 0b10 && !bit(w, 20) {
        return match bits(w, 22, 21) {
            0b00 | 0b10 => Some(Op::MovHalf {
                top: bit(w, 22),
                rd: reg(w, 12),
                imm16: ((bits(w, 19, 16) << 12) | bits(w, 11, 0)) as u16,
            }),
            _ => None,
        };
    }
    let rot = bits(w, 11, 8) * 2;
    dp(
        w,
        Operand2::Imm {
            value: bits(w, 7, 0).rotate_right(rot),
            rotated: rot != 0,
        },
    )
}

fn decode_media(w: u32) -> Option<Op> {
    let (rd, rn) = (reg(w, 12), reg(w, 0));
    let ones = |hi, lo| bits(w, hi, lo) == (1 << (hi - lo + 1)) - 1;
    let (op8, op7, low) = (bits(w, 27, 20), bits(w, 27, 21), bits(w, 7, 4));
    if (op8 == 0b0111_0001 || op8 == 0b0111_0011) && low == 0b0001 && ones(15, 12) {
        return Some(Op::Div {
            signed: op8 == 0b0111_0001,
            rd: reg(w, 16),
            rn,
            rm: reg(w, 8),
        });
    }
    if op7 == 0b011_1110 && bits(w, 6, 4) == 0b001 {
        let (lsb, msb) = (bits(w, 11, 7), bits(w, 20, 16));
        return (msb >= lsb).then(|| Op::Bfi {
            rd,
            rn: (rn != 15).then_some(rn),
            lsb: lsb as u8,
            width: (msb - lsb + 1) as u8,
        });
    }
    if (op7 == 0b011_1111 || op7 == 0b011_1101) && bits(w, 6, 4) == 0b101 {
        let (lsb, width) = (bits(w, 11, 7), bits(w, 20, 16) + 1);
        return (lsb + width <= 32).then_some(Op::Bfx {
            signed: op7 == 0b011_1101,
            rd,
            rn,
            lsb: lsb as u8,
            width: width as u8,
        });
    }
    if !(ones(19, 16) && (ones(11, 8) || low == 0b0111)) {
        return None;
    }
    match (op8, low) {
        (0b0110_1111, 0b0011) => Some(Op::Rbit { rd, rm: rn }),
        (0b0110_1011, 0b0011) => Some(Op::Rev { rd, rm: rn }),
        (0b0110_1011, 0b1011) => Some(Op::Rev16 { rd, rm: rn }),
        (0b0110_1010 | 0b0110_1011 | 0b0110_1110 | 0b0110_1111, 0b0111) if bits(w, 9, 8) == 0 => {
            Some(Op::Extend {
                signed: !bit(w, 22),
                size: if bit(w, 20) { Size::Half } else { Size::Byte },
                rd,
                rm: rn,
                rot: (bits(w, 11, 10) * 8) as u8,
            })
        }
        _ => None,
    }
}

/// The decodable words among `n` pseudo-random ones (xorshift from
/// `seed`), decoded at `addr`: for the round-trip tests.
#[cfg(test)]
pub(crate) fn random_instructions(
    seed: u64,
    n: usize,
    addr: u32,
) -> impl Iterator<Item = (u32, Instr)> {
    let mut x = seed;
    (0..n).filter_map(move |_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let w = x as u32;
        decode(addr, w).ok().map(|i| (w, i))
    })
}
