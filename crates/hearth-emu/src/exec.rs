//! One instruction as one circuit: its reads become circuit inputs (or
//! constants when clear), its effects are computed with hearth's words,
//! and writes under an encrypted condition become selects between the new
//! and the old values. Clear results stay clear: the builder folds
//! constants, so an instruction on clear operands costs no bootstrap.

use std::collections::HashMap;

use hearth::api::{Bool, Program, Word, I64, U64, U8};

use crate::alu::ArmWord;
use crate::image::Image;
use crate::isa::{Cond, DpOp, Instr, Offset, Op, Operand2, Reg, Shift, ShiftKind, Size};
use crate::machine::EmuError;
use crate::state::{Byte, Flag, State, Val};

/// An `N`-bit register value (N is 32, or 16 in the 16-bit mode).
pub(crate) type R<'p, const N: usize> = Word<'p, N, false>;
type S<'p, const N: usize> = Word<'p, N, true>;

/// Where a circuit output goes.
pub(crate) enum Slot {
    Reg(Reg),
    Flag(usize),
    Byte(usize),
}

/// The reads of one instruction: each register, flag or byte becomes one
/// input (or a constant) the first time it is read.
pub(crate) struct Frame<'p, 's, D, const N: usize> {
    pub p: &'p Program,
    pub state: &'s State<D>,
    pub image: &'s Image,
    pub pc: u32,
    pub instr: Instr,
    pub inputs: Vec<Vec<D>>,
    regs: HashMap<Reg, R<'p, N>>,
    flags: HashMap<usize, Bool<'p>>,
    bytes: HashMap<usize, U8<'p>>,
}

/// What an instruction does, before its condition applies.
#[derive(Default)]
pub(crate) struct Effects<'p, const N: usize> {
    pub regs: Vec<(Reg, R<'p, N>)>,
    pub flags: [Option<Bool<'p>>; 4],
    /// Data-memory index -> new byte.
    pub stores: Vec<(usize, U8<'p>)>,
    /// A new, clear program counter.
    pub jump: Option<u32>,
    pub halt: bool,
}

const FN: usize = 0;
const Z: usize = 1;
const C: usize = 2;
const V: usize = 3;

impl<'p, 's, D: Clone, const N: usize> Frame<'p, 's, D, N> {
    pub fn new(
        p: &'p Program,
        state: &'s State<D>,
        image: &'s Image,
        pc: u32,
        instr: Instr,
    ) -> Self {
        Frame {
            p,
            state,
            image,
            pc,
            instr,
            inputs: Vec::new(),
            regs: HashMap::new(),
            flags: HashMap::new(),
            bytes: HashMap::new(),
        }
    }

    fn err(&self, what: &'static str) -> EmuError {
        EmuError::Encrypted {
            pc: self.pc,
            instr: self.instr.to_string(),
            what,
        }
    }

    fn konst(&self, v: u32) -> R<'p, N> {
        R::constant(self.p, v)
    }

    /// Register `r` (pc reads as the instruction's address + 8).
    pub fn reg(&mut self, r: Reg) -> R<'p, N> {
        if r == 15 {
            return self.konst(self.pc.wrapping_add(8));
        }
        if let Some(w) = self.regs.get(&r) {
            return w.clone();
        }
        let w = match &self.state.regs[r as usize] {
            Val::Clear(v) => self.konst(*v),
            Val::Enc(d) => {
                self.inputs.push(d.clone());
                R::input(self.p)
            }
        };
        self.regs.insert(r, w.clone());
        w
    }

    /// Register `r` when it is clear, else the error for `what`.
    fn clear_reg(&mut self, r: Reg, what: &'static str) -> Result<u32, EmuError> {
        let w = self.reg(r);
        clear_u32(&w).ok_or_else(|| self.err(what))
    }

    pub fn flag(&mut self, i: usize) -> Bool<'p> {
        if let Some(b) = self.flags.get(&i) {
            return b.clone();
        }
        let b = match &self.state.flags[i] {
            Flag::Clear(v) => Bool::constant(self.p, *v),
            Flag::Enc(d) => {
                self.inputs.push(vec![d.clone()]);
                Bool::input(self.p)
            }
        };
        self.flags.insert(i, b.clone());
        b
    }

    /// The byte at `addr`: data memory (clear or encrypted) or clear
    /// read-only memory.
    fn byte(&mut self, addr: u32, len: u32) -> Result<U8<'p>, EmuError> {
        if let Some(i) = self.state.index(addr) {
            if let Some(b) = self.bytes.get(&i) {
                return Ok(b.clone());
            }
            let b = match &self.state.memory[i] {
                Byte::Clear(v) => U8::constant(self.p, *v),
                Byte::Enc(d) => {
                    self.inputs.push(d.clone());
                    U8::input(self.p)
                }
            };
            self.bytes.insert(i, b.clone());
            return Ok(b);
        }
        match self.image.rom_byte(addr) {
            Some(v) => Ok(U8::constant(self.p, v)),
            None => Err(self.out_of_memory(addr, len, "load")),
        }
    }

    fn out_of_memory(&self, addr: u32, len: u32, kind: &'static str) -> EmuError {
        EmuError::Memory {
            pc: self.pc,
            instr: self.instr.to_string(),
            kind,
            addr,
            len,
        }
    }

    /// A little-endian load of `size` (a word is `N` bits), extended to
    /// `N` bits.
    fn load(&mut self, addr: u32, size: Size, signed: bool) -> Result<R<'p, N>, EmuError> {
        let n = bytes::<N>(size);
        let mut v = self.konst(0);
        for k in 0..n {
            let b = self.byte(addr.wrapping_add(k), n)?;
            let w: R<'p, N> = b.cast::<N, false>();
            v = &v | &(&w << (8 * k));
        }
        Ok(match (signed, size) {
            (true, Size::Byte) => v.cast::<8, true>().cast::<N, true>().cast(),
            (true, Size::Half) => v.cast::<16, true>().cast::<N, true>().cast(),
            _ => v,
        })
    }

    /// The data-memory indices of a store of `size` at `addr`.
    fn store(
        &self,
        e: &mut Effects<'p, N>,
        addr: u32,
        size: Size,
        v: &R<'p, N>,
    ) -> Result<(), EmuError> {
        let n = bytes::<N>(size);
        for k in 0..n {
            let a = addr.wrapping_add(k);
            let i = self
                .state
                .index(a)
                .ok_or_else(|| self.out_of_memory(addr, n, "store"))?;
            e.stores.push((i, (v >> (8 * k)).cast::<8, false>()));
        }
        Ok(())
    }

    /// The condition as a [`Bool`] (clear when its flags are).
    pub fn cond(&mut self, c: Cond) -> Bool<'p> {
        use Cond::*;
        let f = |s: &mut Self, i| s.flag(i);
        match c {
            Al => Bool::constant(self.p, true),
            Eq => f(self, Z),
            Ne => !&f(self, Z),
            Cs => f(self, C),
            Cc => !&f(self, C),
            Mi => f(self, FN),
            Pl => !&f(self, FN),
            Vs => f(self, V),
            Vc => !&f(self, V),
            Hi => &f(self, C) & &!&f(self, Z),
            Ls => &!&f(self, C) | &f(self, Z),
            Ge => !&(&f(self, FN) ^ &f(self, V)),
            Lt => &f(self, FN) ^ &f(self, V),
            Gt => &!&f(self, Z) & &!&(&f(self, FN) ^ &f(self, V)),
            Le => &f(self, Z) | &(&f(self, FN) ^ &f(self, V)),
        }
    }

    /// The second operand and, when `need_carry`, the shifter's carry out
    /// (else the old C, unused): circuits hold no dead bootstraps.
    fn operand2(&mut self, op2: Operand2, need_carry: bool) -> (R<'p, N>, Bool<'p>) {
        let c = self.flag(C);
        match op2 {
            Operand2::Imm { value, rotated } => {
                let carry = if rotated {
                    Bool::constant(self.p, (value >> (N - 1)) & 1 == 1)
                } else {
                    c
                };
                (self.konst(value), carry)
            }
            Operand2::Reg { rm, shift } => {
                let x = self.reg(rm);
                self.shift(&x, shift, c, need_carry)
            }
        }
    }

    /// A32's barrel shifter: `(x shifted, carry out)`; the carry is only
    /// built when `need_carry`.
    fn shift(
        &mut self,
        x: &R<'p, N>,
        shift: Shift,
        c: Bool<'p>,
        need_carry: bool,
    ) -> (R<'p, N>, Bool<'p>) {
        match shift {
            Shift::None => (x.clone(), c),
            Shift::Imm(kind, a) => shift_by(self.p, x, kind, a as u32, c),
            Shift::Rrx => {
                let top = &c.to_word::<N>() << (N as u32 - 1);
                (&top | &(x >> 1), x.bit(0))
            }
            Shift::Reg(kind, rs) => {
                let amount = &self.reg(rs) & 0xff;
                match clear_u32(&amount) {
                    Some(a) => shift_by(self.p, x, kind, a, c),
                    None if need_carry => shift_encrypted(self.p, x, kind, &amount, c),
                    None => (shift_encrypted_value(self.p, x, kind, &amount), c),
                }
            }
        }
    }
}

/// The value of a word when it is clear.
pub(crate) fn clear_u32<const N: usize>(w: &R<'_, N>) -> Option<u32> {
    let v = w.clear_value()?;
    u32::try_from(v).ok()
}

/// The values an `N`-bit register holds.
pub(crate) fn mask<const N: usize>() -> u32 {
    if N >= 32 {
        u32::MAX
    } else {
        (1 << N) - 1
    }
}

/// The bytes of an access of `size` when a word is `N` bits.
pub(crate) fn bytes<const N: usize>(size: Size) -> u32 {
    match size {
        Size::Word => N as u32 / 8,
        s => s.bytes(),
    }
}

/// Shift by a clear amount (0 keeps `x` and the carry), A32's rules with
/// the word size `N` in place of 32.
fn shift_by<'p, const N: usize>(
    p: &'p Program,
    x: &R<'p, N>,
    kind: ShiftKind,
    a: u32,
    c: Bool<'p>,
) -> (R<'p, N>, Bool<'p>) {
    let n = N as u32;
    let zero = R::constant(p, 0);
    let f = Bool::constant(p, false);
    if a == 0 {
        return (x.clone(), c);
    }
    match kind {
        ShiftKind::Lsl if a < n => (x << a, x.bit((n - a) as usize)),
        ShiftKind::Lsl if a == n => (zero, x.bit(0)),
        ShiftKind::Lsl => (zero, f),
        ShiftKind::Lsr if a < n => (x >> a, x.bit(a as usize - 1)),
        ShiftKind::Lsr if a == n => (zero, x.bit(N - 1)),
        ShiftKind::Lsr => (zero, f),
        ShiftKind::Asr => {
            let s: S<'p, N> = x.cast();
            let k = a.min(n);
            let r = if k == n { &s >> (n - 1) } else { &s >> k };
            (r.cast(), x.bit(k as usize - 1))
        }
        ShiftKind::Ror => {
            let k = a % n;
            if k == 0 {
                (x.clone(), x.bit(N - 1))
            } else {
                (x.rotate_right(k), x.bit(k as usize - 1))
            }
        }
    }
}

/// Shift by an encrypted amount in [0, 255], through 64-bit words so that
/// the carry is the bit shifted out last.
fn shift_encrypted<'p, const N: usize>(
    p: &'p Program,
    x: &R<'p, N>,
    kind: ShiftKind,
    amount: &R<'p, N>,
    c: Bool<'p>,
) -> (R<'p, N>, Bool<'p>) {
    let n = N as u32;
    let a8: U8<'p> = amount.cast();
    let is_zero = amount.eq(&R::constant(p, 0));
    let zero64 = U64::constant(p, 0);
    let wide: U64<'p> = x.cast();
    let (r, carry) = match kind {
        ShiftKind::Lsl => {
            let z = amount
                .ge(&R::constant(p, 64))
                .select(&zero64, &wide.shl_by(&a8));
            (z.cast::<N, false>(), z.bit(N))
        }
        ShiftKind::Lsr => {
            let z = amount
                .ge(&R::constant(p, 64))
                .select(&zero64, &(&wide << n).shr_by(&a8));
            ((&z >> n).cast::<N, false>(), z.bit(N - 1))
        }
        ShiftKind::Asr => {
            let k = amount
                .ge(&R::constant(p, 63))
                .select(&R::constant(p, 63), amount);
            let s: I64<'p> = x.cast::<N, true>().cast::<64, true>();
            let z = (&s << n).shr_by(&k.cast::<8, false>());
            ((&z >> n).cast::<N, false>(), z.bit(N - 1))
        }
        ShiftKind::Ror => {
            let r = x.rotate_right_by(&a8);
            let top = r.bit(N - 1);
            (r, top)
        }
    };
    let carry = is_zero
        .select(&c.to_word::<1>(), &carry.to_word::<1>())
        .bit(0);
    (r, carry)
}

/// Shift by an encrypted amount in [0, 255], value only: one `N`-bit
/// shifter on the amount's low bits, then the cases from `N` on.
fn shift_encrypted_value<'p, const N: usize>(
    p: &'p Program,
    x: &R<'p, N>,
    kind: ShiftKind,
    amount: &R<'p, N>,
) -> R<'p, N> {
    let low: U8<'p> = (amount & (N as i64 - 1)).cast();
    let big = amount.ge(&R::constant(p, N as u64));
    let zero = R::constant(p, 0);
    match kind {
        ShiftKind::Lsl => big.select(&zero, &x.shl_by(&low)),
        ShiftKind::Lsr => big.select(&zero, &x.shr_by(&low)),
        ShiftKind::Asr => {
            let s: S<'p, N> = x.cast();
            let fill = &s >> (N as u32 - 1);
            big.select(&fill, &s.shr_by(&low)).cast()
        }
        ShiftKind::Ror => x.rotate_right_by(&low),
    }
}

/// The effects of `instr` at `f.pc`: one function per instruction class
/// (data processing, multiplies, divides, byte and bit-field operations,
/// loads and stores, load/store multiple, branches).
pub(crate) fn execute<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
) -> Result<Effects<'p, N>, EmuError> {
    let mut effects = Effects::default();
    let e = &mut effects;
    match f.instr.op {
        Op::Dp { op, s, rd, rn, op2 } => data_processing(f, e, op, s, rd, rn, op2)?,
        Op::MovHalf { top, rd, imm16 } => move_half(f, e, top, rd, imm16)?,
        Op::Mul { s, rd, rn, rm, acc } => multiply(f, e, s, rd, [rn, rm], acc)?,
        Op::MulLong {
            signed,
            accumulate,
            s,
            rdlo,
            rdhi,
            rn,
            rm,
        } => multiply_long(f, e, signed, accumulate, s, [rdlo, rdhi], [rn, rm])?,
        Op::Div { signed, rd, rn, rm } => divide(f, e, signed, rd, rn, rm)?,
        Op::Clz { rd, rm } => unary(f, e, rd, rm, |x| x.leading_zeros().cast())?,
        Op::Rbit { rd, rm } => unary(f, e, rd, rm, |x| x.reverse_bits())?,
        Op::Rev { rd, rm } => unary(f, e, rd, rm, |x| x.swap_bytes())?,
        Op::Rev16 { rd, rm } => unary(f, e, rd, rm, rev16)?,
        Op::Extend {
            signed,
            size,
            rd,
            rm,
            rot,
        } => unary(f, e, rd, rm, |x| extend(x, signed, size, rot))?,
        Op::Bfi { rd, rn, lsb, width } => bit_field_insert(f, e, rd, rn, lsb, width)?,
        Op::Bfx {
            signed,
            rd,
            rn,
            lsb,
            width,
        } => bit_field_extract(f, e, signed, rd, rn, lsb, width)?,
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
            let addr = address(f, e, rn, offset, add, pre, writeback)?;
            load_store(f, e, load, size, signed, rt, addr)?;
        }
        Op::Block {
            load,
            rn,
            regs,
            up,
            before,
            writeback,
        } => {
            let start = block_address(f, e, rn, regs, (up, before), writeback)?;
            load_store_multiple(f, e, load, regs, start)?;
        }
        Op::Branch { link, target } => branch(f, e, link, target),
        Op::BranchReg { link, rm } => branch_exchange(f, e, link, rm)?,
        Op::Svc { .. } => e.halt = true,
    }
    Ok(effects)
}

// Data processing.

/// AND .. MVN: the second operand through the barrel shifter, an adder
/// with NZCV for the arithmetic operations when they set flags (plain
/// adders otherwise), N and Z from the result and C from the shifter for
/// the logical ones.
fn data_processing<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    op: DpOp,
    s: bool,
    rd: Reg,
    rn: Reg,
    op2: Operand2,
) -> Result<(), EmuError> {
    let sets_flags = s || op.is_test();
    let (y, shc) = f.operand2(op2, sets_flags && !op.is_arithmetic());
    let x = if op.is_move() { f.konst(0) } else { f.reg(rn) };
    let plain = match op {
        _ if sets_flags => None,
        DpOp::Add => Some(&x + &y),
        DpOp::Sub => Some(&x - &y),
        DpOp::Rsb => Some(&y - &x),
        _ => None,
    };
    let (r, flags) = if let Some(r) = plain {
        (r, [None, None, None, None])
    } else if op.is_arithmetic() {
        arithmetic(f, op, x, y)
    } else {
        let r = logical(op, &x, y);
        if sets_flags {
            let (n, z) = r.nz();
            (r, [Some(n), Some(z), Some(shc), None])
        } else {
            (r, [None, None, None, None])
        }
    };
    if sets_flags {
        if rd == 15 && !op.is_test() {
            return Err(unsupported(
                f,
                "flag-setting write to pc (exception return)",
            ));
        }
        e.flags = flags;
    }
    if !op.is_test() {
        write(f, e, rd, r)?;
    }
    Ok(())
}

/// The result and NZCV of an arithmetic operation: one adder on
/// `a + b + carry in`, A32's subtractions as `x + !y + 1`.
fn arithmetic<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    op: DpOp,
    x: R<'p, N>,
    y: R<'p, N>,
) -> (R<'p, N>, [Option<Bool<'p>>; 4]) {
    let c = f.flag(C);
    let one = Bool::constant(f.p, true);
    let zero = Bool::constant(f.p, false);
    let (a, b, cin) = match op {
        DpOp::Add | DpOp::Cmn => (x, y, zero),
        DpOp::Adc => (x, y, c),
        DpOp::Sub | DpOp::Cmp => (x, !&y, one),
        DpOp::Sbc => (x, !&y, c),
        DpOp::Rsb => (y, !&x, one),
        _ => (y, !&x, c),
    };
    let (r, fl) = a.add_with_carry(&b, &cin);
    (r, [Some(fl.n), Some(fl.z), Some(fl.c), Some(fl.v)])
}

/// The result of a logical operation (or a move).
fn logical<'p, const N: usize>(op: DpOp, x: &R<'p, N>, y: R<'p, N>) -> R<'p, N> {
    match op {
        DpOp::And | DpOp::Tst => x & &y,
        DpOp::Eor | DpOp::Teq => x ^ &y,
        DpOp::Orr => x | &y,
        DpOp::Bic => x & &!&y,
        DpOp::Mov => y,
        _ => !&y,
    }
}

/// MOVW (a 16-bit constant) and MOVT (the top half, kept low half).
fn move_half<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    top: bool,
    rd: Reg,
    imm16: u16,
) -> Result<(), EmuError> {
    let r = if top {
        if N < 32 {
            return Err(unsupported(f, "movt in the 16-bit mode"));
        }
        let old = f.reg(rd);
        &(&old & 0xffff) | &f.konst((imm16 as u32) << 16)
    } else {
        f.konst(imm16 as u32)
    };
    write(f, e, rd, r)
}

// Multiplies and divides.

/// MUL, MLA (`acc` = (ra, false)) and MLS (`acc` = (ra, true)): the low
/// word of the product; with S, N and Z.
fn multiply<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    s: bool,
    rd: Reg,
    [rn, rm]: [Reg; 2],
    acc: Option<(Reg, bool)>,
) -> Result<(), EmuError> {
    let prod = &f.reg(rn) * &f.reg(rm);
    let r = match acc {
        None => prod,
        Some((ra, false)) => &prod + &f.reg(ra),
        Some((ra, true)) => &f.reg(ra) - &prod,
    };
    if s {
        let (n, z) = r.nz();
        e.flags[FN] = Some(n);
        e.flags[Z] = Some(z);
    }
    write(f, e, rd, r)
}

/// UMULL, SMULL, UMLAL, SMLAL: the double-word product (plus `rdhi:rdlo`
/// when accumulating); with S, N and Z of the double word.
fn multiply_long<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    signed: bool,
    accumulate: bool,
    s: bool,
    [rdlo, rdhi]: [Reg; 2],
    [rn, rm]: [Reg; 2],
) -> Result<(), EmuError> {
    let widen = |w: R<'p, N>| -> U64<'p> {
        if signed {
            w.cast::<N, true>().cast::<64, true>().cast()
        } else {
            w.cast()
        }
    };
    let (a, b) = (widen(f.reg(rn)), widen(f.reg(rm)));
    let mut prod = &a * &b;
    if accumulate {
        let lo: U64<'p> = f.reg(rdlo).cast();
        let hi: U64<'p> = f.reg(rdhi).cast();
        prod = &prod + &(&lo | &(&hi << N as u32));
    }
    let (lo, hi): (R<'p, N>, R<'p, N>) = (prod.cast(), (&prod >> N as u32).cast());
    if s {
        e.flags[FN] = Some(hi.bit(N - 1));
        e.flags[Z] = Some(&lo.eq(&f.konst(0)) & &hi.eq(&f.konst(0)));
    }
    write(f, e, rdlo, lo)?;
    write(f, e, rdhi, hi)
}

/// UDIV and SDIV (0 on division by zero, as ARM defines it).
fn divide<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    signed: bool,
    rd: Reg,
    rn: Reg,
    rm: Reg,
) -> Result<(), EmuError> {
    let (a, b) = (f.reg(rn), f.reg(rm));
    let q: R<'p, N> = if signed {
        let (a, b): (S<'p, N>, S<'p, N>) = (a.cast(), b.cast());
        (&a / &b).cast()
    } else {
        &a / &b
    };
    let by_zero = b.eq(&f.konst(0));
    write(f, e, rd, by_zero.select(&f.konst(0), &q))
}

// Byte and bit-field operations.

/// `rd = op(rm)`: CLZ, RBIT, REV, REV16 and the extends.
fn unary<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    rd: Reg,
    rm: Reg,
    op: impl FnOnce(R<'p, N>) -> R<'p, N>,
) -> Result<(), EmuError> {
    let r = op(f.reg(rm));
    write(f, e, rd, r)
}

/// REV16: the bytes of each halfword swapped.
fn rev16<const N: usize>(x: R<'_, N>) -> R<'_, N> {
    &(&(&x >> 8) & 0x00ff_00ff) | &(&(&x << 8) & 0xff00_ff00u32 as i64)
}

/// UXTB, UXTH, SXTB, SXTH: rotate right by `rot`, then extend the low
/// byte or halfword.
fn extend<const N: usize>(x: R<'_, N>, signed: bool, size: Size, rot: u8) -> R<'_, N> {
    let x = x.rotate_right(rot as u32 % N as u32);
    match (signed, size) {
        (false, Size::Byte) => x.cast::<8, false>().cast(),
        (false, _) => x.cast::<16, false>().cast(),
        (true, Size::Byte) => x.cast::<8, true>().cast::<N, true>().cast(),
        (true, _) => x.cast::<16, true>().cast::<N, true>().cast(),
    }
}

/// BFC (`rn` = None) and BFI.
fn bit_field_insert<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    rd: Reg,
    rn: Option<Reg>,
    lsb: u8,
    width: u8,
) -> Result<(), EmuError> {
    if (lsb + width) as usize > N {
        return Err(unsupported(f, "a bit field beyond the 16-bit word"));
    }
    let old = f.reg(rd);
    let r = match rn {
        None => old.field_clear(lsb as usize, width as usize),
        Some(rn) => old.field_insert(&f.reg(rn), lsb as usize, width as usize),
    };
    write(f, e, rd, r)
}

/// UBFX and SBFX.
fn bit_field_extract<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    signed: bool,
    rd: Reg,
    rn: Reg,
    lsb: u8,
    width: u8,
) -> Result<(), EmuError> {
    if (lsb + width) as usize > N {
        return Err(unsupported(f, "a bit field beyond the 16-bit word"));
    }
    let x = f.reg(rn);
    let r = if signed {
        x.cast::<N, true>()
            .field_extract(lsb as usize, width as usize)
            .cast()
    } else {
        x.field_extract(lsb as usize, width as usize)
    };
    write(f, e, rd, r)
}

// Loads and stores.

/// The address of a single load or store (a clear base plus a clear
/// offset); the base's write-back goes to `e`.
fn address<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    rn: Reg,
    offset: Offset,
    add: bool,
    pre: bool,
    writeback: bool,
) -> Result<u32, EmuError> {
    let base = f.clear_reg(rn, "a base address")?;
    let off = match offset {
        Offset::Imm(i) => i,
        Offset::Reg { rm, shift } => {
            let x = f.reg(rm);
            let c = f.flag(C);
            let (v, _) = f.shift(&x, shift, c, false);
            clear_u32(&v).ok_or_else(|| f.err("an address offset"))?
        }
    };
    let moved = if add {
        base.wrapping_add(off)
    } else {
        base.wrapping_sub(off)
    } & mask::<N>();
    if writeback {
        e.regs.push((rn, f.konst(moved)));
    }
    Ok(if pre { moved } else { base })
}

/// LDR / STR of every size at `addr`.
fn load_store<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    load: bool,
    size: Size,
    signed: bool,
    rt: Reg,
    addr: u32,
) -> Result<(), EmuError> {
    if load {
        let v = f.load(addr, size, signed)?;
        write(f, e, rt, v)
    } else {
        let v = f.reg(rt);
        f.store(e, addr, size, &v)
    }
}

// Load and store multiple.

/// The lowest address an LDM / STM reads or writes (`mode` is (up,
/// before): IA, IB, DA, DB); the base's write-back goes to `e`.
fn block_address<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    rn: Reg,
    regs: u16,
    (up, before): (bool, bool),
    writeback: bool,
) -> Result<u32, EmuError> {
    let base = f.clear_reg(rn, "a base address")?;
    let n = regs.count_ones();
    let step = bytes::<N>(Size::Word);
    let start = match (up, before) {
        (true, false) => base,
        (true, true) => base.wrapping_add(step),
        (false, false) => base.wrapping_sub(step * n).wrapping_add(step),
        (false, true) => base.wrapping_sub(step * n),
    } & mask::<N>();
    let end = if up {
        base.wrapping_add(step * n)
    } else {
        base.wrapping_sub(step * n)
    } & mask::<N>();
    if writeback {
        e.regs.push((rn, f.konst(end)));
    }
    Ok(start)
}

/// LDM / STM (PUSH / POP): the registers of `regs`, lowest first, from
/// `start` up.
fn load_store_multiple<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    load: bool,
    regs: u16,
    start: u32,
) -> Result<(), EmuError> {
    let step = bytes::<N>(Size::Word);
    let mut addr = start;
    for r in (0..16u8).filter(|r| regs & (1 << r) != 0) {
        if load {
            let v = f.load(addr, Size::Word, false)?;
            write(f, e, r, v)?;
        } else {
            let v = f.reg(r);
            f.store(e, addr, Size::Word, &v)?;
        }
        addr = addr.wrapping_add(step) & mask::<N>();
    }
    Ok(())
}

// Branches.

/// B and BL.
fn branch<'p, D: Clone, const N: usize>(
    f: &Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    link: bool,
    target: u32,
) {
    if link {
        e.regs.push((14, f.konst(f.pc.wrapping_add(4))));
    }
    e.jump = Some(target);
}

/// BX and BLX to a clear, ARM-state address.
fn branch_exchange<'p, D: Clone, const N: usize>(
    f: &mut Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    link: bool,
    rm: Reg,
) -> Result<(), EmuError> {
    let target = f.clear_reg(rm, "a branch target")?;
    if target & 1 == 1 {
        return Err(unsupported(f, "switch to Thumb state"));
    }
    if link {
        e.regs.push((14, f.konst(f.pc.wrapping_add(4))));
    }
    e.jump = Some(target);
    Ok(())
}

fn unsupported<D: Clone, const N: usize>(f: &Frame<'_, '_, D, N>, why: &'static str) -> EmuError {
    EmuError::Unsupported {
        pc: f.pc,
        instr: f.instr.to_string(),
        why,
    }
}

/// Writes `v` to `rd`; a write to pc is a jump to a clear, word-aligned
/// address.
fn write<'p, D: Clone, const N: usize>(
    f: &Frame<'p, '_, D, N>,
    e: &mut Effects<'p, N>,
    rd: Reg,
    v: R<'p, N>,
) -> Result<(), EmuError> {
    if rd != 15 {
        // A later write to the same register wins (LDM with the base).
        e.regs.retain(|(r, _)| *r != rd);
        e.regs.push((rd, v));
        return Ok(());
    }
    let target = clear_u32(&v).ok_or_else(|| f.err("a write to pc"))?;
    if target & 3 != 0 {
        return Err(EmuError::Unsupported {
            pc: f.pc,
            instr: f.instr.to_string(),
            why: "jump to a Thumb or unaligned address",
        });
    }
    e.jump = Some(target);
    Ok(())
}

/// Whether `instr` may change the program counter (its condition must
/// then be decided before it runs).
pub(crate) fn may_jump(instr: &Instr) -> bool {
    match instr.op {
        Op::Dp { op, rd, .. } => rd == 15 && !op.is_test(),
        Op::MovHalf { rd, .. }
        | Op::Clz { rd, .. }
        | Op::Rbit { rd, .. }
        | Op::Rev { rd, .. }
        | Op::Rev16 { rd, .. }
        | Op::Bfi { rd, .. }
        | Op::Bfx { rd, .. }
        | Op::Extend { rd, .. }
        | Op::Div { rd, .. }
        | Op::Mul { rd, .. } => rd == 15,
        Op::MulLong { rdlo, rdhi, .. } => rdlo == 15 || rdhi == 15,
        Op::Mem { load, rt, .. } => load && rt == 15,
        Op::Block { load, regs, .. } => load && regs & 0x8000 != 0,
        Op::Branch { .. } | Op::BranchReg { .. } | Op::Svc { .. } => true,
    }
}
