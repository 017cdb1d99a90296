//! A plain-Rust model of the register instructions at any width `w` (32:
//! A32; 16: the 16-bit mode, A32's rules with 16 in place of 32). It is
//! checked against qemu-arm at 32 bits (`tests/instructions.rs`), then used
//! as the reference for the 16-bit mode.

use hearth_emu::isa::{DpOp, Operand2, Shift, ShiftKind, Size};
use hearth_emu::{Instr, Op};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub w: u32,
    pub regs: [u32; 15],
    /// N, Z, C, V.
    pub flags: [bool; 4],
}

impl Model {
    pub fn new(w: u32, regs: [u32; 15], flags: [bool; 4]) -> Self {
        let mut m = Model { w, regs, flags };
        let mask = m.mask();
        for r in &mut m.regs {
            *r &= mask;
        }
        m
    }

    fn mask(&self) -> u32 {
        if self.w == 32 {
            u32::MAX
        } else {
            (1 << self.w) - 1
        }
    }

    fn bit(&self, x: u32, i: u32) -> bool {
        i < self.w && (x >> i) & 1 == 1
    }

    fn sext(&self, x: u32, bits: u32) -> i64 {
        let x = x as i64 & ((1i64 << bits) - 1);
        if (x >> (bits - 1)) & 1 == 1 {
            x - (1i64 << bits)
        } else {
            x
        }
    }

    fn rotr(&self, x: u32, k: u32) -> u32 {
        let k = k % self.w;
        if k == 0 {
            x
        } else {
            ((x >> k) | (x << (self.w - k))) & self.mask()
        }
    }

    /// Shift by a clear amount, with the carry out.
    fn shift_by(&self, x: u32, kind: ShiftKind, a: u32, c: bool) -> (u32, bool) {
        let (w, m) = (self.w, self.mask());
        if a == 0 {
            return (x, c);
        }
        match kind {
            ShiftKind::Lsl if a < w => ((x << a) & m, self.bit(x, w - a)),
            ShiftKind::Lsl if a == w => (0, self.bit(x, 0)),
            ShiftKind::Lsl => (0, false),
            ShiftKind::Lsr if a < w => (x >> a, self.bit(x, a - 1)),
            ShiftKind::Lsr if a == w => (0, self.bit(x, w - 1)),
            ShiftKind::Lsr => (0, false),
            ShiftKind::Asr => {
                let k = a.min(w);
                let s = self.sext(x, w);
                let r = if k == w { s >> (w - 1) } else { s >> k };
                (r as u32 & m, self.bit(x, k - 1))
            }
            ShiftKind::Ror => {
                let k = a % w;
                if k == 0 {
                    (x, self.bit(x, w - 1))
                } else {
                    (self.rotr(x, k), self.bit(x, k - 1))
                }
            }
        }
    }

    fn shift(&self, x: u32, s: Shift) -> (u32, bool) {
        let c = self.flags[2];
        match s {
            Shift::None => (x, c),
            Shift::Imm(k, a) => self.shift_by(x, k, a as u32, c),
            Shift::Rrx => (((c as u32) << (self.w - 1)) | (x >> 1), x & 1 == 1),
            Shift::Reg(k, rs) => self.shift_by(x, k, self.regs[rs as usize] & 0xff, c),
        }
    }

    fn add_with_carry(&self, a: u32, b: u32, cin: bool) -> (u32, [bool; 4]) {
        let (w, m) = (self.w, self.mask());
        let sum = a as u64 + b as u64 + cin as u64;
        let r = sum as u32 & m;
        let v = self.bit((a ^ r) & (b ^ r), w - 1);
        (r, [self.bit(r, w - 1), r == 0, (sum >> w) & 1 == 1, v])
    }

    /// Executes a register instruction (no memory, no branch).
    pub fn step(&mut self, i: &Instr) {
        let [n, z, c, v] = self.flags;
        if !i.cond.holds(n, z, c, v) {
            return;
        }
        let m = self.mask();
        let w = self.w;
        let regs = self.regs;
        let r = |x: u8| regs[x as usize];
        match i.op {
            Op::Dp { op, s, rd, rn, op2 } => {
                let (y, shc) = match op2 {
                    Operand2::Imm { value, rotated } => {
                        let v = value & m;
                        (v, if rotated { self.bit(v, w - 1) } else { c })
                    }
                    Operand2::Reg { rm, shift } => self.shift(r(rm), shift),
                };
                let x = r(rn);
                let (res, fl) = if op.is_arithmetic() {
                    let (a, b, cin) = match op {
                        DpOp::Add | DpOp::Cmn => (x, y, false),
                        DpOp::Adc => (x, y, c),
                        DpOp::Sub | DpOp::Cmp => (x, !y & m, true),
                        DpOp::Sbc => (x, !y & m, c),
                        DpOp::Rsb => (y, !x & m, true),
                        _ => (y, !x & m, c),
                    };
                    self.add_with_carry(a, b, cin)
                } else {
                    let res = match op {
                        DpOp::And | DpOp::Tst => x & y,
                        DpOp::Eor | DpOp::Teq => x ^ y,
                        DpOp::Orr => x | y,
                        DpOp::Bic => x & !y,
                        DpOp::Mov => y,
                        _ => !y,
                    } & m;
                    (res, [self.bit(res, w - 1), res == 0, shc, v])
                };
                if s || op.is_test() {
                    self.flags = fl;
                }
                if !op.is_test() {
                    self.regs[rd as usize] = res;
                }
            }
            Op::MovHalf { top, rd, imm16 } => {
                assert!(!top || w == 32, "movt only at 32 bits");
                self.regs[rd as usize] = if top {
                    (r(rd) & 0xffff) | (imm16 as u32) << 16
                } else {
                    imm16 as u32 & m
                };
            }
            Op::Mul { s, rd, rn, rm, acc } => {
                let p = r(rn).wrapping_mul(r(rm));
                let res = match acc {
                    None => p,
                    Some((ra, false)) => p.wrapping_add(r(ra)),
                    Some((ra, true)) => r(ra).wrapping_sub(p),
                } & m;
                if s {
                    self.flags[0] = self.bit(res, w - 1);
                    self.flags[1] = res == 0;
                }
                self.regs[rd as usize] = res;
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
                let full: u128 = if w == 32 {
                    u64::MAX as u128
                } else {
                    (1u128 << (2 * w)) - 1
                };
                let mut p = if signed {
                    (self.sext(r(rn), w) as i128 * self.sext(r(rm), w) as i128) as u128
                } else {
                    r(rn) as u128 * r(rm) as u128
                };
                if accumulate {
                    p = p.wrapping_add((r(rdhi) as u128) << w | r(rdlo) as u128);
                }
                p &= full;
                let (lo, hi) = (p as u32 & m, (p >> w) as u32 & m);
                if s {
                    self.flags[0] = self.bit(hi, w - 1);
                    self.flags[1] = p == 0;
                }
                self.regs[rdlo as usize] = lo;
                self.regs[rdhi as usize] = hi;
            }
            Op::Div { signed, rd, rn, rm } => {
                let q = if r(rm) == 0 {
                    0
                } else if signed {
                    let (a, b) = (self.sext(r(rn), w), self.sext(r(rm), w));
                    (a.wrapping_div(b)) as u32 & m
                } else {
                    r(rn) / r(rm)
                };
                self.regs[rd as usize] = q;
            }
            Op::Clz { rd, rm } => {
                let x = r(rm);
                self.regs[rd as usize] =
                    (0..w).take_while(|&k| !self.bit(x, w - 1 - k)).count() as u32;
            }
            Op::Rbit { rd, rm } => {
                let x = r(rm);
                self.regs[rd as usize] = (0..w)
                    .filter(|&k| self.bit(x, k))
                    .map(|k| 1 << (w - 1 - k))
                    .sum();
            }
            Op::Rev { rd, rm } => {
                let b = r(rm).to_le_bytes();
                let nb = (w / 8) as usize;
                let mut out = 0u32;
                for (k, &byte) in b.iter().take(nb).enumerate() {
                    out |= (byte as u32) << (8 * (nb - 1 - k));
                }
                self.regs[rd as usize] = out;
            }
            Op::Rev16 { rd, rm } => {
                let x = r(rm);
                self.regs[rd as usize] = (((x >> 8) & 0x00ff_00ff) | ((x << 8) & 0xff00_ff00)) & m;
            }
            Op::Bfi { rd, rn, lsb, width } => {
                let f = (((1u64 << width) - 1) as u32) << lsb;
                let src = rn.map_or(0, |rn| r(rn) << lsb);
                self.regs[rd as usize] = ((r(rd) & !f) | (src & f)) & m;
            }
            Op::Bfx {
                signed,
                rd,
                rn,
                lsb,
                width,
            } => {
                let field = (r(rn) >> lsb) & ((1u64 << width) - 1) as u32;
                self.regs[rd as usize] = if signed {
                    self.sext(field, width as u32) as u32 & m
                } else {
                    field
                };
            }
            Op::Extend {
                signed,
                size,
                rd,
                rm,
                rot,
            } => {
                let x = self.rotr(r(rm), rot as u32);
                let bits = if size == Size::Byte { 8 } else { 16 };
                let field = x & ((1u64 << bits) - 1) as u32;
                self.regs[rd as usize] = if signed {
                    self.sext(field, bits) as u32 & m
                } else {
                    field & m
                };
            }
            _ => panic!("the model runs register instructions only: {i}"),
        }
    }
}
