//! The A32 instructions the emulator runs, decoded: what each one reads
//! and writes, independent of how it is evaluated.

use std::fmt;

/// A register number, 0..=15 (13 = sp, 14 = lr, 15 = pc).
pub type Reg = u8;

/// The condition field of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    /// Equal (Z).
    Eq,
    /// Not equal (!Z).
    Ne,
    /// Carry set / unsigned higher or same (C).
    Cs,
    /// Carry clear / unsigned lower (!C).
    Cc,
    /// Minus (N).
    Mi,
    /// Plus or zero (!N).
    Pl,
    /// Overflow (V).
    Vs,
    /// No overflow (!V).
    Vc,
    /// Unsigned higher (C and !Z).
    Hi,
    /// Unsigned lower or same (!C or Z).
    Ls,
    /// Signed greater or equal (N == V).
    Ge,
    /// Signed less (N != V).
    Lt,
    /// Signed greater (!Z and N == V).
    Gt,
    /// Signed less or equal (Z or N != V).
    Le,
    /// Always.
    Al,
}

impl Cond {
    /// The condition of encoding `bits` (0..=14).
    pub fn from_bits(bits: u32) -> Option<Cond> {
        use Cond::*;
        [Eq, Ne, Cs, Cc, Mi, Pl, Vs, Vc, Hi, Ls, Ge, Lt, Gt, Le, Al]
            .get(bits as usize)
            .copied()
    }

    /// Its value for clear flags `(n, z, c, v)`.
    pub fn holds(self, n: bool, z: bool, c: bool, v: bool) -> bool {
        use Cond::*;
        match self {
            Eq => z,
            Ne => !z,
            Cs => c,
            Cc => !c,
            Mi => n,
            Pl => !n,
            Vs => v,
            Vc => !v,
            Hi => c && !z,
            Ls => !c || z,
            Ge => n == v,
            Lt => n != v,
            Gt => !z && n == v,
            Le => z || n != v,
            Al => true,
        }
    }

    fn suffix(self) -> &'static str {
        use Cond::*;
        match self {
            Eq => "eq",
            Ne => "ne",
            Cs => "cs",
            Cc => "cc",
            Mi => "mi",
            Pl => "pl",
            Vs => "vs",
            Vc => "vc",
            Hi => "hi",
            Ls => "ls",
            Ge => "ge",
            Lt => "lt",
            Gt => "gt",
            Le => "le",
            Al => "",
        }
    }
}

/// A barrel-shifter operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShiftKind {
    /// Logical shift left.
    Lsl,
    /// Logical shift right.
    Lsr,
    /// Arithmetic shift right.
    Asr,
    /// Rotate right.
    Ror,
}

impl ShiftKind {
    fn from_bits(bits: u32) -> ShiftKind {
        [
            ShiftKind::Lsl,
            ShiftKind::Lsr,
            ShiftKind::Asr,
            ShiftKind::Ror,
        ][(bits & 3) as usize]
    }

    fn name(self) -> &'static str {
        match self {
            ShiftKind::Lsl => "lsl",
            ShiftKind::Lsr => "lsr",
            ShiftKind::Asr => "asr",
            ShiftKind::Ror => "ror",
        }
    }
}

/// How the second register operand is shifted, with A32's encodings
/// resolved: `Imm` amounts are 1..=32 (an encoded `lsr #0` / `asr #0` is
/// 32), `None` is no shift, `Rrx` the rotate through carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shift {
    /// No shift.
    None,
    /// By a clear amount.
    Imm(ShiftKind, u8),
    /// Rotate right by one through the carry.
    Rrx,
    /// By the low byte of a register.
    Reg(ShiftKind, Reg),
}

impl Shift {
    /// The shift of an immediate-shift encoding (`type`, `imm5`).
    pub fn from_imm(kind: u32, imm5: u32) -> Shift {
        let kind = ShiftKind::from_bits(kind);
        match (kind, imm5) {
            (ShiftKind::Lsl, 0) => Shift::None,
            (ShiftKind::Ror, 0) => Shift::Rrx,
            (ShiftKind::Lsr | ShiftKind::Asr, 0) => Shift::Imm(kind, 32),
            _ => Shift::Imm(kind, imm5 as u8),
        }
    }
}

/// The flexible second operand of a data-processing instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand2 {
    /// `imm8` rotated right by `2 * rot`; a non-zero rotation sets the
    /// shifter carry to the value's top bit.
    Imm {
        /// The value.
        value: u32,
        /// Whether the encoding rotated it (the shifter carry is then its top bit).
        rotated: bool,
    },
    /// A register, shifted.
    Reg {
        /// Second operand register.
        rm: Reg,
        /// How it is shifted.
        shift: Shift,
    },
}

/// Data-processing operations, in encoding order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DpOp {
    /// `rd = rn & op2`.
    And,
    /// `rd = rn ^ op2`.
    Eor,
    /// `rd = rn - op2`.
    Sub,
    /// `rd = op2 - rn`.
    Rsb,
    /// `rd = rn + op2`.
    Add,
    /// `rd = rn + op2 + C`.
    Adc,
    /// `rd = rn - op2 - !C`.
    Sbc,
    /// `rd = op2 - rn - !C`.
    Rsc,
    /// Flags of `rn & op2`.
    Tst,
    /// Flags of `rn ^ op2`.
    Teq,
    /// Flags of `rn - op2`.
    Cmp,
    /// Flags of `rn + op2`.
    Cmn,
    /// `rd = rn | op2`.
    Orr,
    /// `rd = op2`.
    Mov,
    /// `rd = rn & !op2`.
    Bic,
    /// `rd = !op2`.
    Mvn,
}

impl DpOp {
    /// The operation of encoding `bits` (the low four bits).
    pub fn from_bits(bits: u32) -> DpOp {
        use DpOp::*;
        [
            And, Eor, Sub, Rsb, Add, Adc, Sbc, Rsc, Tst, Teq, Cmp, Cmn, Orr, Mov, Bic, Mvn,
        ][(bits & 15) as usize]
    }

    /// Compare-type operations write only flags.
    pub fn is_test(self) -> bool {
        matches!(self, DpOp::Tst | DpOp::Teq | DpOp::Cmp | DpOp::Cmn)
    }

    /// Operations whose flags come from an addition (else N, Z from the
    /// result and C from the shifter).
    pub fn is_arithmetic(self) -> bool {
        use DpOp::*;
        matches!(self, Sub | Rsb | Add | Adc | Sbc | Rsc | Cmp | Cmn)
    }

    /// Operations that read no first operand.
    pub fn is_move(self) -> bool {
        matches!(self, DpOp::Mov | DpOp::Mvn)
    }

    fn name(self) -> &'static str {
        use DpOp::*;
        match self {
            And => "and",
            Eor => "eor",
            Sub => "sub",
            Rsb => "rsb",
            Add => "add",
            Adc => "adc",
            Sbc => "sbc",
            Rsc => "rsc",
            Tst => "tst",
            Teq => "teq",
            Cmp => "cmp",
            Cmn => "cmn",
            Orr => "orr",
            Mov => "mov",
            Bic => "bic",
            Mvn => "mvn",
        }
    }
}

/// The size of a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Size {
    /// 8 bits.
    Byte,
    /// 16 bits.
    Half,
    /// 32 bits.
    Word,
}

impl Size {
    /// Bytes it moves.
    pub fn bytes(self) -> u32 {
        match self {
            Size::Byte => 1,
            Size::Half => 2,
            Size::Word => 4,
        }
    }
}

/// The offset of a single load or store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Offset {
    /// A clear immediate.
    Imm(u32),
    /// `rm` shifted by a clear immediate (A32 allows no register shift here).
    Reg {
        /// Second operand register.
        rm: Reg,
        /// How it is shifted.
        shift: Shift,
    },
}

/// One A32 instruction of the supported subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A data-processing instruction (AND ... MVN).
    Dp {
        /// The operation.
        op: DpOp,
        /// Whether it sets the flags (the S suffix).
        s: bool,
        /// Destination register.
        rd: Reg,
        /// First operand register.
        rn: Reg,
        /// The second operand.
        op2: Operand2,
    },
    /// MOVW (`top` false: `rd = imm16`) or MOVT (`rd[31:16] = imm16`).
    MovHalf {
        /// MOVT (else MOVW).
        top: bool,
        /// Destination register.
        rd: Reg,
        /// The 16-bit immediate.
        imm16: u16,
    },
    /// MUL (`acc` None), MLA (`rd = rn * rm + ra`) or MLS (`ra - rn * rm`).
    Mul {
        /// Whether it sets the flags (the S suffix).
        s: bool,
        /// Destination register.
        rd: Reg,
        /// First operand register.
        rn: Reg,
        /// Second operand register.
        rm: Reg,
        /// The accumulator register, subtracted (MLS) when the flag is true.
        acc: Option<(Reg, bool)>,
    },
    /// UMULL / SMULL (and UMLAL / SMLAL when `accumulate`).
    MulLong {
        /// Signed (else unsigned).
        signed: bool,
        /// Adds the 64-bit `rdhi:rdlo` to the product.
        accumulate: bool,
        /// Whether it sets the flags (the S suffix).
        s: bool,
        /// Low word of the 64-bit result.
        rdlo: Reg,
        /// High word of the 64-bit result.
        rdhi: Reg,
        /// First operand register.
        rn: Reg,
        /// Second operand register.
        rm: Reg,
    },
    /// UDIV / SDIV (`rd = rn / rm`, 0 when `rm` is 0).
    Div {
        /// Signed (else unsigned).
        signed: bool,
        /// Destination register.
        rd: Reg,
        /// First operand register.
        rn: Reg,
        /// Second operand register.
        rm: Reg,
    },
    /// CLZ: count leading zeros.
    Clz {
        /// Destination register.
        rd: Reg,
        /// Second operand register.
        rm: Reg,
    },
    /// RBIT: reverse the bits.
    Rbit {
        /// Destination register.
        rd: Reg,
        /// Second operand register.
        rm: Reg,
    },
    /// REV: reverse the bytes.
    Rev {
        /// Destination register.
        rd: Reg,
        /// Second operand register.
        rm: Reg,
    },
    /// REV16: reverse the bytes of each halfword.
    Rev16 {
        /// Destination register.
        rd: Reg,
        /// Second operand register.
        rm: Reg,
    },
    /// BFC (`rn` None) or BFI.
    Bfi {
        /// Destination register.
        rd: Reg,
        /// First operand register.
        rn: Option<Reg>,
        /// Lowest bit of the field.
        lsb: u8,
        /// Width of the field in bits.
        width: u8,
    },
    /// UBFX / SBFX.
    Bfx {
        /// Signed (else unsigned).
        signed: bool,
        /// Destination register.
        rd: Reg,
        /// First operand register.
        rn: Reg,
        /// Lowest bit of the field.
        lsb: u8,
        /// Width of the field in bits.
        width: u8,
    },
    /// UXTB / UXTH / SXTB / SXTH with a rotation of 0, 8, 16 or 24.
    Extend {
        /// Signed (else unsigned).
        signed: bool,
        /// Access or extension size.
        size: Size,
        /// Destination register.
        rd: Reg,
        /// Second operand register.
        rm: Reg,
        /// Rotation of `rm` before extending (0, 8, 16 or 24).
        rot: u8,
    },
    /// LDR / STR of any size; `signed` loads extend the sign.
    Mem {
        /// A load (else a store).
        load: bool,
        /// Access or extension size.
        size: Size,
        /// Signed (else unsigned).
        signed: bool,
        /// The register loaded or stored.
        rt: Reg,
        /// Base address register.
        rn: Reg,
        /// Offset from `rn`.
        offset: Offset,
        /// Offset added (else subtracted).
        add: bool,
        /// Offset applied before the access (else after).
        pre: bool,
        /// Whether the address is written back to `rn`.
        writeback: bool,
    },
    /// LDM / STM (PUSH / POP): `before` and `up` give IA / IB / DA / DB.
    Block {
        /// A load (else a store).
        load: bool,
        /// Base address register.
        rn: Reg,
        /// Register list, bit `i` for `ri`.
        regs: u16,
        /// Addresses increase (else decrease).
        up: bool,
        /// Address changes before each access (else after).
        before: bool,
        /// Whether the address is written back to `rn`.
        writeback: bool,
    },
    /// B / BL to an absolute address.
    Branch {
        /// Writes the return address to lr.
        link: bool,
        /// Absolute address.
        target: u32,
    },
    /// BX / BLX to a register.
    BranchReg {
        /// Writes the return address to lr.
        link: bool,
        /// Second operand register.
        rm: Reg,
    },
    /// SVC: the emulator stops here (the program's end).
    Svc {
        /// The 24-bit comment field.
        imm: u32,
    },
}

/// An instruction: its operation and condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instr {
    /// When it executes.
    pub cond: Cond,
    /// The operation.
    pub op: Op,
}

fn reg_name(r: Reg) -> String {
    match r {
        13 => "sp".into(),
        14 => "lr".into(),
        15 => "pc".into(),
        _ => format!("r{r}"),
    }
}

fn shift_text(shift: Shift) -> String {
    match shift {
        Shift::None => String::new(),
        Shift::Imm(k, a) => format!(", {} #{a}", k.name()),
        Shift::Rrx => ", rrx".into(),
        Shift::Reg(k, rs) => format!(", {} {}", k.name(), reg_name(rs)),
    }
}

fn reg_list(regs: u16) -> String {
    let names: Vec<String> = (0..16)
        .filter(|i| regs & (1 << i) != 0)
        .map(reg_name)
        .collect();
    format!("{{{}}}", names.join(", "))
}

impl fmt::Display for Instr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.cond.suffix();
        let r = reg_name;
        match self.op {
            Op::Dp { op, s, rd, rn, op2 } => {
                let s = if s && !op.is_test() { "s" } else { "" };
                let op2 = match op2 {
                    Operand2::Imm { value, .. } => format!("#{value}"),
                    Operand2::Reg { rm, shift } => format!("{}{}", r(rm), shift_text(shift)),
                };
                if op.is_test() {
                    write!(f, "{}{c} {}, {op2}", op.name(), r(rn))
                } else if op.is_move() {
                    write!(f, "{}{s}{c} {}, {op2}", op.name(), r(rd))
                } else {
                    write!(f, "{}{s}{c} {}, {}, {op2}", op.name(), r(rd), r(rn))
                }
            }
            Op::MovHalf { top, rd, imm16 } => {
                write!(
                    f,
                    "mov{}{c} {}, #{imm16}",
                    if top { "t" } else { "w" },
                    r(rd)
                )
            }
            Op::Mul { s, rd, rn, rm, acc } => {
                let s = if s { "s" } else { "" };
                match acc {
                    None => write!(f, "mul{s}{c} {}, {}, {}", r(rd), r(rn), r(rm)),
                    Some((ra, false)) => {
                        write!(f, "mla{s}{c} {}, {}, {}, {}", r(rd), r(rn), r(rm), r(ra))
                    }
                    Some((ra, true)) => {
                        write!(f, "mls{c} {}, {}, {}, {}", r(rd), r(rn), r(rm), r(ra))
                    }
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
            } => write!(
                f,
                "{}{}{}{c} {}, {}, {}, {}",
                if signed { "s" } else { "u" },
                if accumulate { "mlal" } else { "mull" },
                if s { "s" } else { "" },
                r(rdlo),
                r(rdhi),
                r(rn),
                r(rm)
            ),
            Op::Div { signed, rd, rn, rm } => write!(
                f,
                "{}div{c} {}, {}, {}",
                if signed { "s" } else { "u" },
                r(rd),
                r(rn),
                r(rm)
            ),
            Op::Clz { rd, rm } => write!(f, "clz{c} {}, {}", r(rd), r(rm)),
            Op::Rbit { rd, rm } => write!(f, "rbit{c} {}, {}", r(rd), r(rm)),
            Op::Rev { rd, rm } => write!(f, "rev{c} {}, {}", r(rd), r(rm)),
            Op::Rev16 { rd, rm } => write!(f, "rev16{c} {}, {}", r(rd), r(rm)),
            Op::Bfi {
                rd,
                rn: None,
                lsb,
                width,
            } => write!(f, "bfc{c} {}, #{lsb}, #{width}", r(rd)),
            Op::Bfi {
                rd,
                rn: Some(rn),
                lsb,
                width,
            } => write!(f, "bfi{c} {}, {}, #{lsb}, #{width}", r(rd), r(rn)),
            Op::Bfx {
                signed,
                rd,
                rn,
                lsb,
                width,
            } => write!(
                f,
                "{}bfx{c} {}, {}, #{lsb}, #{width}",
                if signed { "s" } else { "u" },
                r(rd),
                r(rn)
            ),
            Op::Extend {
                signed,
                size,
                rd,
                rm,
                rot,
            } => {
                let rot = if rot == 0 {
                    String::new()
                } else {
                    format!(", ror #{rot}")
                };
                write!(
                    f,
                    "{}xt{}{c} {}, {}{rot}",
                    if signed { "s" } else { "u" },
                    if size == Size::Byte { "b" } else { "h" },
                    r(rd),
                    r(rm)
                )
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
                let name = if load { "ldr" } else { "str" };
                let sz = match (signed, size) {
                    (false, Size::Word) | (true, Size::Word) => "",
                    (false, Size::Byte) => "b",
                    (false, Size::Half) => "h",
                    (true, Size::Byte) => "sb",
                    (true, Size::Half) => "sh",
                };
                let sign = if add { "" } else { "-" };
                let off = match offset {
                    Offset::Imm(0) if add => String::new(),
                    Offset::Imm(i) => format!(", #{sign}{i}"),
                    Offset::Reg { rm, shift } => {
                        format!(", {sign}{}{}", r(rm), shift_text(shift))
                    }
                };
                if pre {
                    let wb = if writeback { "!" } else { "" };
                    write!(f, "{name}{sz}{c} {}, [{}{off}]{wb}", r(rt), r(rn))
                } else {
                    let off = if off.is_empty() { ", #0".into() } else { off };
                    write!(f, "{name}{sz}{c} {}, [{}]{off}", r(rt), r(rn))
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
                let mode = match (up, before) {
                    (true, false) => "ia",
                    (true, true) => "ib",
                    (false, false) => "da",
                    (false, true) => "db",
                };
                let wb = if writeback { "!" } else { "" };
                write!(
                    f,
                    "{}{mode}{c} {}{wb}, {}",
                    if load { "ldm" } else { "stm" },
                    r(rn),
                    reg_list(regs)
                )
            }
            Op::Branch { link, target } => {
                write!(f, "b{}{c} {target:#x}", if link { "l" } else { "" })
            }
            Op::BranchReg { link, rm } => {
                write!(f, "b{}x{c} {}", if link { "l" } else { "" }, r(rm))
            }
            Op::Svc { imm } => write!(f, "svc{c} #{imm}"),
        }
    }
}
