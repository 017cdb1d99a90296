//! The emulator: fetch (clear), decide the condition, run the instruction
//! as one circuit on a backend, commit its effects.

use std::time::{Duration, Instant};

use hearth::api::{Program, U8};
use hearth::backend::Backend;
use hearth::ParameterSet;

use crate::exec::{clear_u32, execute, may_jump, Frame, Slot};
use crate::image::Image;
use crate::isa::Instr;
use crate::oracle::BranchOracle;
use crate::state::{Byte, Flag, State, Val};

/// Why the emulator stopped with an error. The state is left as it was
/// before the failing instruction, which can be retried or inspected.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// The program counter left the program's code.
    #[error("pc {pc:#010x} is not an instruction of the program")]
    NoInstruction {
        /// The program counter.
        pc: u32,
    },
    /// An address, branch target or write to pc computed from encrypted
    /// data (the server must see it).
    #[error("at {pc:#010x} ({instr}): {what} depends on encrypted data (addresses and branch targets must be clear)")]
    Encrypted {
        /// The instruction's address.
        pc: u32,
        /// The instruction.
        instr: String,
        /// What was encrypted (`a base address`, `a branch target`, ...).
        what: &'static str,
    },
    /// A load or store outside the data memory (and, for a load, outside
    /// the read-only memory).
    #[error("at {pc:#010x} ({instr}): {kind} of {len} byte(s) at {addr:#010x} is outside the data memory")]
    Memory {
        /// The instruction's address.
        pc: u32,
        /// The instruction.
        instr: String,
        /// `load` or `store`.
        kind: &'static str,
        /// The first byte accessed.
        addr: u32,
        /// The bytes accessed.
        len: u32,
    },
    /// An instruction the decoder accepts but the machine does not run in
    /// this form (a flag-setting write to pc, Thumb, MOVT in the 16-bit
    /// mode, ...).
    #[error("at {pc:#010x} ({instr}): unsupported: {why}")]
    Unsupported {
        /// The instruction's address.
        pc: u32,
        /// The instruction.
        instr: String,
        /// What is not supported.
        why: &'static str,
    },
    /// The key owner refused a branch decision (or its budget ran out).
    #[error("at {pc:#010x}: branch decision refused: {why}")]
    Decision {
        /// The branch's address.
        pc: u32,
        /// The oracle's reason.
        why: String,
    },
    /// Building or running the instruction's circuit failed.
    #[error("at {pc:#010x}: {source}")]
    Hearth {
        /// The instruction's address.
        pc: u32,
        /// The library's error.
        #[source]
        source: hearth::Error,
    },
    /// [`Machine::run`]'s step limit was reached before an `svc`.
    #[error("stopped after {0} instructions (the step limit)")]
    StepLimit(u64),
}

/// What one executed instruction cost.
#[derive(Clone, Debug)]
pub struct StepReport {
    /// The instruction's address.
    pub pc: u32,
    /// The instruction.
    pub instr: Instr,
    /// Whether the condition held (`None`: encrypted, applied obliviously).
    pub executed: Option<bool>,
    /// Bootstraps in its circuit.
    pub pbs: usize,
    /// Its circuit's depth in bootstraps.
    pub depth: u32,
    /// Building and running it.
    pub time: Duration,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// At an `svc` (the program's end), pc pointing at it.
    Halted {
        /// The `svc`'s address.
        pc: u32,
    },
}

/// The register width: A32's 32 bits, or a 16-bit mode (CryptoEmu's
/// 16-bit registers) where every register, result, flag and memory word is
/// 16 bits, A32's rules hold with 16 in place of 32 (shift amounts, carries,
/// rotations), word accesses move 2 bytes, and code and data must lie below
/// 64 KiB (`asm::assemble_at` with [`crate::asm::BASES_16`]); MOVT and
/// bit fields beyond bit 15 are refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Width {
    /// A32's 32-bit registers.
    #[default]
    W32,
    /// CryptoEmu's 16-bit registers.
    W16,
}

impl Width {
    /// The register width in bits.
    pub fn bits(self) -> usize {
        match self {
            Width::W32 => 32,
            Width::W16 => 16,
        }
    }
}

/// An emulator over `backend`'s digits (clear digits on
/// [`hearth::backend::ClearBackend`], ciphertexts on the cpu backend).
pub struct Machine<'a, B: Backend> {
    /// The program.
    pub image: Image,
    /// Registers, flags and data memory, as the last instruction left them.
    pub state: State<B::Digit>,
    backend: &'a B,
    params: &'static ParameterSet,
    threads: Option<usize>,
    width: Width,
    /// Instructions executed so far.
    pub steps: u64,
    /// Bootstraps spent so far.
    pub pbs: u64,
}

impl<'a, B: Backend> Machine<'a, B>
where
    B::Digit: Clone,
{
    /// A machine running `image` from `state` on `backend`, building its
    /// circuits for `params` (a bits-family set such as `GATES_128`).
    pub fn new(
        image: Image,
        state: State<B::Digit>,
        backend: &'a B,
        params: &'static ParameterSet,
    ) -> Self {
        Machine {
            image,
            state,
            backend,
            params,
            threads: None,
            width: Width::W32,
            steps: 0,
            pbs: 0,
        }
    }

    /// Runs with registers of this width (registers given as encrypted
    /// values must have as many digits).
    pub fn set_width(&mut self, width: Width) {
        self.width = width;
    }

    /// The register width it runs with.
    pub fn width(&self) -> Width {
        self.width
    }

    /// Plans circuits for this many threads.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = Some(threads);
    }

    /// Runs until an `svc`, at most `max_steps` instructions, calling
    /// `progress` after each one.
    pub fn run(
        &mut self,
        oracle: &mut dyn BranchOracle<B::Digit>,
        max_steps: u64,
        mut progress: impl FnMut(&StepReport),
    ) -> Result<Stop, EmuError> {
        for _ in 0..max_steps {
            match self.step(oracle)? {
                Ok(report) => progress(&report),
                Err(stop) => return Ok(stop),
            }
        }
        Err(EmuError::StepLimit(max_steps))
    }

    /// Executes one instruction: `Ok(Ok(report))`, or `Ok(Err(stop))` at
    /// the program's end.
    pub fn step(
        &mut self,
        oracle: &mut dyn BranchOracle<B::Digit>,
    ) -> Result<Result<StepReport, Stop>, EmuError> {
        match self.width {
            Width::W32 => self.step_n::<32>(oracle),
            Width::W16 => self.step_n::<16>(oracle),
        }
    }

    fn step_n<const N: usize>(
        &mut self,
        oracle: &mut dyn BranchOracle<B::Digit>,
    ) -> Result<Result<StepReport, Stop>, EmuError> {
        let start = Instant::now();
        let pc = self.state.pc;
        if N < 32 && pc > 0xfff0 {
            return Err(EmuError::Unsupported {
                pc,
                instr: String::new(),
                why: "code beyond 64 KiB in the 16-bit mode",
            });
        }
        let instr = *self
            .image
            .code
            .get(&pc)
            .ok_or(EmuError::NoInstruction { pc })?;
        let hearth = |source| EmuError::Hearth { pc, source };
        let p = Program::new(self.params);
        if let Some(t) = self.threads {
            p.set_threads(t);
        }
        let mut f = Frame::<_, N>::new(&p, &self.state, &self.image, pc, instr);
        let cond = f.cond(instr.cond);
        let mut executed = cond.clear_value();
        if executed.is_none() && may_jump(&instr) {
            // A branch under an encrypted condition: the key owner decides.
            let digit = self.reveal_condition::<N>(pc, instr).map_err(hearth)?;
            let taken = oracle
                .decide(pc, &digit)
                .map_err(|why| EmuError::Decision { pc, why })?;
            executed = Some(taken);
        }
        if executed == Some(false) {
            self.state.pc = pc.wrapping_add(4);
            self.steps += 1;
            return Ok(Ok(StepReport {
                pc,
                instr,
                executed,
                pbs: 0,
                depth: 0,
                time: start.elapsed(),
            }));
        }
        let e = execute(&mut f)?;
        if e.halt {
            return Ok(Err(Stop::Halted { pc }));
        }
        // Under an encrypted condition every write keeps the old value
        // when the condition is false.
        let oblivious = executed.is_none().then_some(&cond);
        let mut slots: Vec<Slot> = Vec::new();
        let mut regs: Vec<(u8, Val<B::Digit>)> = Vec::new();
        let mut flags: Vec<(usize, Flag<B::Digit>)> = Vec::new();
        let mut bytes: Vec<(usize, Byte<B::Digit>)> = Vec::new();
        for (r, v) in &e.regs {
            let v = match oblivious {
                Some(c) => c.select(v, &f.reg(*r)),
                None => v.clone(),
            };
            match clear_u32(&v) {
                Some(x) => regs.push((*r, Val::Clear(x))),
                None => {
                    p.output(&v);
                    slots.push(Slot::Reg(*r));
                }
            }
        }
        for (i, fl) in e.flags.iter().enumerate() {
            let Some(fl) = fl else { continue };
            let fl = match oblivious {
                Some(c) => c
                    .select(&fl.to_word::<1>(), &f.flag(i).to_word::<1>())
                    .bit(0),
                None => fl.clone(),
            };
            match fl.clear_value() {
                Some(x) => flags.push((i, Flag::Clear(x))),
                None => {
                    p.output(&fl);
                    slots.push(Slot::Flag(i));
                }
            }
        }
        for (i, b) in &e.stores {
            let b: U8<'_> = match oblivious {
                Some(c) => {
                    let old = match &self.state.memory[*i] {
                        Byte::Clear(v) => U8::constant(&p, *v),
                        Byte::Enc(d) => {
                            f.inputs.push(d.clone());
                            U8::input(&p)
                        }
                    };
                    c.select(b, &old)
                }
                None => b.clone(),
            };
            match b.clear_value().and_then(|v| u8::try_from(v).ok()) {
                Some(x) => bytes.push((*i, Byte::Clear(x))),
                None => {
                    p.output(&b);
                    slots.push(Slot::Byte(*i));
                }
            }
        }
        let jump = e.jump;
        let inputs = std::mem::take(&mut f.inputs);
        drop(e);
        drop(cond);
        drop(f);
        let prog = p.build().map_err(hearth)?;
        let stats = prog.circuit().stats();
        let outs = if slots.is_empty() {
            Vec::new()
        } else {
            prog.run(self.backend, &inputs).map_err(hearth)?
        };
        for (slot, out) in slots.into_iter().zip(outs) {
            match slot {
                Slot::Reg(r) => regs.push((r, Val::Enc(out))),
                Slot::Flag(i) => {
                    flags.push((i, Flag::Enc(out.into_iter().next().expect("one bit"))))
                }
                Slot::Byte(i) => bytes.push((i, Byte::Enc(out))),
            }
        }
        for (r, v) in regs {
            self.state.regs[r as usize] = v;
        }
        for (i, v) in flags {
            self.state.flags[i] = v;
        }
        for (i, v) in bytes {
            self.state.memory[i] = v;
        }
        self.state.pc = jump.unwrap_or(pc.wrapping_add(4));
        self.steps += 1;
        self.pbs += stats.pbs as u64;
        Ok(Ok(StepReport {
            pc,
            instr,
            executed,
            pbs: stats.pbs,
            depth: stats.depth,
            time: start.elapsed(),
        }))
    }

    /// The encrypted condition of `instr` as one digit (a circuit of its
    /// own), for the key owner to decide.
    fn reveal_condition<const N: usize>(
        &self,
        pc: u32,
        instr: Instr,
    ) -> Result<B::Digit, hearth::Error> {
        let p = Program::new(self.params);
        let mut f = Frame::<_, N>::new(&p, &self.state, &self.image, pc, instr);
        let c = f.cond(instr.cond);
        p.output(&c);
        let inputs = std::mem::take(&mut f.inputs);
        drop(c);
        drop(f);
        let out = p.build()?.run(self.backend, &inputs)?;
        Ok(out[0][0].clone())
    }
}
