//! [`Instr`] to A32 machine code: the inverse of [`crate::decode()`] on the
//! supported subset (`decode(encode(i)) == i`).

use crate::isa::{Instr, Offset, Op, Operand2, Shift, ShiftKind, Size};

fn cond_bits(i: &Instr) -> u32 {
    use crate::isa::Cond::*;
    let c = match i.cond {
        Eq => 0,
        Ne => 1,
        Cs => 2,
        Cc => 3,
        Mi => 4,
        Pl => 5,
        Vs => 6,
        Vc => 7,
        Hi => 8,
        Ls => 9,
        Ge => 10,
        Lt => 11,
        Gt => 12,
        Le => 13,
        Al => 14,
    };
    c << 28
}

fn kind_bits(k: ShiftKind) -> u32 {
    match k {
        ShiftKind::Lsl => 0,
        ShiftKind::Lsr => 1,
        ShiftKind::Asr => 2,
        ShiftKind::Ror => 3,
    }
}

/// The bits 11..4 of a register operand shifted by `shift`.
fn shift_bits(shift: Shift) -> Result<u32, String> {
    Ok(match shift {
        Shift::None => 0,
        Shift::Imm(ShiftKind::Lsl, a) if (1..32).contains(&a) => (a as u32) << 7,
        Shift::Imm(k @ (ShiftKind::Lsr | ShiftKind::Asr), 32) => kind_bits(k) << 5,
        Shift::Imm(k @ (ShiftKind::Lsr | ShiftKind::Asr | ShiftKind::Ror), a)
            if (1..32).contains(&a) =>
        {
            (a as u32) << 7 | kind_bits(k) << 5
        }
        Shift::Rrx => 3 << 5,
        Shift::Reg(k, rs) => (rs as u32) << 8 | kind_bits(k) << 5 | 1 << 4,
        Shift::Imm(k, a) => return Err(format!("{k:?} #{a} cannot be encoded")),
    })
}

/// `(imm8, rot)` with `value = imm8 ror 2 rot`: rot 0 when `!rotated`,
/// else the smallest non-zero rotation.
pub fn encode_imm(value: u32, rotated: bool) -> Option<u32> {
    if !rotated {
        return (value < 256).then_some(value);
    }
    (1..16u32)
        .find(|&r| value.rotate_left(2 * r) < 256)
        .map(|r| r << 8 | value.rotate_left(2 * r))
}

/// The machine word of `i` at `addr`.
pub fn encode(addr: u32, i: &Instr) -> Result<u32, String> {
    let c = cond_bits(i);
    let r = |x: u8, at: u32| (x as u32) << at;
    Ok(match i.op {
        Op::Dp { op, s, rd, rn, op2 } => {
            let base = c | (op as u32) << 21 | (s as u32) << 20 | r(rn, 16) | r(rd, 12);
            match op2 {
                Operand2::Imm { value, rotated } => {
                    let imm = encode_imm(value, rotated)
                        .ok_or_else(|| format!("#{value} is not an A32 immediate"))?;
                    base | 1 << 25 | imm
                }
                Operand2::Reg { rm, shift } => base | shift_bits(shift)? | rm as u32,
            }
        }
        Op::MovHalf { top, rd, imm16 } => {
            let v = imm16 as u32;
            c | 0x0300_0000 | (top as u32) << 22 | (v >> 12) << 16 | r(rd, 12) | (v & 0xfff)
        }
        Op::Mul { s, rd, rn, rm, acc } => {
            let base = c | r(rd, 16) | r(rm, 8) | 0x90 | rn as u32;
            match acc {
                None => base | (s as u32) << 20,
                Some((ra, false)) => base | 1 << 21 | (s as u32) << 20 | r(ra, 12),
                Some((ra, true)) => base | 0x0060_0000 | r(ra, 12),
            }
        }
        Op::MulLong {
            signed,
            accumulate,
            s,
            rdlo,
            rdhi,
            rn,
            rm,
        } => {
            c | 0x0080_0090
                | (signed as u32) << 22
                | (accumulate as u32) << 21
                | (s as u32) << 20
                | r(rdhi, 16)
                | r(rdlo, 12)
                | r(rm, 8)
                | rn as u32
        }
        Op::Div { signed, rd, rn, rm } => {
            let op = if signed { 0x0710_f010 } else { 0x0730_f010 };
            c | op | r(rd, 16) | r(rm, 8) | rn as u32
        }
        Op::Clz { rd, rm } => c | 0x016f_0f10 | r(rd, 12) | rm as u32,
        Op::Rbit { rd, rm } => c | 0x06ff_0f30 | r(rd, 12) | rm as u32,
        Op::Rev { rd, rm } => c | 0x06bf_0f30 | r(rd, 12) | rm as u32,
        Op::Rev16 { rd, rm } => c | 0x06bf_0fb0 | r(rd, 12) | rm as u32,
        Op::Bfi { rd, rn, lsb, width } => {
            let msb = (lsb + width - 1) as u32;
            c | 0x07c0_0010 | msb << 16 | r(rd, 12) | (lsb as u32) << 7 | rn.unwrap_or(15) as u32
        }
        Op::Bfx {
            signed,
            rd,
            rn,
            lsb,
            width,
        } => {
            let op = if signed { 0x07a0_0050 } else { 0x07e0_0050 };
            c | op | ((width - 1) as u32) << 16 | r(rd, 12) | (lsb as u32) << 7 | rn as u32
        }
        Op::Extend {
            signed,
            size,
            rd,
            rm,
            rot,
        } => {
            let op = match (signed, size) {
                (true, Size::Byte) => 0x06af_0070,
                (true, _) => 0x06bf_0070,
                (false, Size::Byte) => 0x06ef_0070,
                (false, _) => 0x06ff_0070,
            };
            c | op | r(rd, 12) | ((rot / 8) as u32) << 10 | rm as u32
        }
        Op::Mem {
            load,
            size,
            signed,
            rt,
            rn,
            offset,
            add,
            pre,
            writeback,
        } => {
            let w = (pre && writeback) as u32;
            let base = c
                | (pre as u32) << 24
                | (add as u32) << 23
                | w << 21
                | (load as u32) << 20
                | r(rn, 16)
                | r(rt, 12);
            if size == Size::Word || (size == Size::Byte && !signed) {
                let b = (size == Size::Byte) as u32;
                match offset {
                    Offset::Imm(v) if v < 4096 => base | 0x0400_0000 | b << 22 | v,
                    Offset::Imm(v) => return Err(format!("offset #{v} exceeds 4095")),
                    Offset::Reg { rm, shift } => {
                        if matches!(shift, Shift::Reg(..)) {
                            return Err("register-shifted offsets do not exist".into());
                        }
                        base | 0x0600_0000 | b << 22 | shift_bits(shift)? | rm as u32
                    }
                }
            } else {
                let sh = match (signed, size) {
                    (false, Size::Half) => 1,
                    (true, Size::Byte) => 2,
                    _ => 3,
                };
                if !load && signed {
                    return Err("signed stores do not exist".into());
                }
                let base = base | 1 << 7 | sh << 5 | 1 << 4;
                match offset {
                    Offset::Imm(v) if v < 256 => base | 1 << 22 | (v >> 4) << 8 | (v & 15),
                    Offset::Imm(v) => return Err(format!("offset #{v} exceeds 255")),
                    Offset::Reg {
                        rm,
                        shift: Shift::None,
                    } => base | rm as u32,
                    Offset::Reg { .. } => return Err("halfword offsets take no shift".into()),
                }
            }
        }
        Op::Block {
            load,
            rn,
            regs,
            up,
            before,
            writeback,
        } => {
            c | 0x0800_0000
                | (before as u32) << 24
                | (up as u32) << 23
                | (writeback as u32) << 21
                | (load as u32) << 20
                | r(rn, 16)
                | regs as u32
        }
        Op::Branch { link, target } => {
            let off = target.wrapping_sub(addr.wrapping_add(8)) as i32;
            if off % 4 != 0 || !(-(1 << 25)..(1 << 25)).contains(&off) {
                return Err(format!("branch target {target:#x} out of reach"));
            }
            c | 0x0a00_0000 | (link as u32) << 24 | ((off >> 2) as u32 & 0x00ff_ffff)
        }
        Op::BranchReg { link, rm } => c | 0x012f_ff10 | (link as u32) << 5 | rm as u32,
        Op::Svc { imm } => c | 0x0f00_0000 | (imm & 0x00ff_ffff),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;

    /// Every decodable word re-encodes to an instruction that decodes the
    /// same (random words, a million of them).
    #[test]
    fn decode_encode_round_trip() {
        let mut seen = 0;
        for (w, i) in crate::decode::random_instructions(0x1234_5678_9abc_def0, 1_000_000, 0x8000) {
            seen += 1;
            let e = encode(0x8000, &i).unwrap_or_else(|e| panic!("{w:#010x} ({i}): {e}"));
            assert_eq!(decode(0x8000, e), Ok(i), "{w:#010x} ({i}) -> {e:#010x}");
        }
        assert!(seen > 100_000, "{seen}");
    }
}
