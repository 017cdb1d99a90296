//! Random instruction streams against qemu-arm, instruction by
//! instruction: registers r0..r14 and NZCV after every instruction of a
//! random stream of register instructions (data processing with every
//! shift and condition, multiplies, divides, bit-field and byte
//! operations) must equal qemu's. Each stream runs twice: with clear
//! values, and with every register and flag encrypted (clear digits) after
//! a clear prologue, so the circuits and the oblivious conditional
//! execution are what is checked.

use crate::common;

use std::fmt::Write;

use common::reference::Model;
use common::{flag_value, flags_of, link, qemu, reg_value, ArmTools, Cpu};
use hearth::api::clear_word;
use hearth::backend::ClearBackend;
use hearth::GATES_128;
use hearth_emu::{decode, Flag, Image, Machine, NoOracle, Op, State, Val};
use rand::{Rng, SeedableRng};

/// Whether `op` is in the tested class: no memory, no branch, no r15.
fn testable(op: &Op) -> bool {
    use hearth_emu::isa::{Operand2, Shift};
    let ok = |r: u8| r != 15;
    match *op {
        Op::Dp { rd, rn, op2, .. } => {
            ok(rd)
                && ok(rn)
                && match op2 {
                    Operand2::Imm { .. } => true,
                    Operand2::Reg { rm, shift } => ok(rm) && !matches!(shift, Shift::Reg(_, 15)),
                }
        }
        Op::MovHalf { rd, .. } => ok(rd),
        Op::Mul {
            rd, rn, rm, acc, ..
        } => ok(rd) && ok(rn) && ok(rm) && acc.is_none_or(|(ra, _)| ok(ra)),
        Op::MulLong {
            rdlo, rdhi, rn, rm, ..
        } => ok(rdlo) && ok(rdhi) && ok(rn) && ok(rm) && rdlo != rdhi,
        Op::Div { rd, rn, rm, .. } => ok(rd) && ok(rn) && ok(rm),
        Op::Clz { rd, rm } | Op::Rbit { rd, rm } | Op::Rev { rd, rm } | Op::Rev16 { rd, rm } => {
            ok(rd) && ok(rm)
        }
        Op::Bfi { rd, rn, .. } => ok(rd) && rn.is_none_or(ok),
        Op::Bfx { rd, rn, .. } => ok(rd) && ok(rn),
        Op::Extend { rd, rm, .. } => ok(rd) && ok(rm),
        _ => false,
    }
}

/// A random testable instruction word (a third unconditional).
fn random_instruction(rng: &mut impl Rng) -> u32 {
    loop {
        let cond = if rng.gen_bool(0.35) {
            14
        } else {
            rng.gen_range(0..14)
        };
        // Bits 27..25: data processing (000, 001) or media (011).
        let class = [0u32, 0, 1, 1, 3][rng.gen_range(0..5)];
        let w = (cond << 28) | (class << 25) | (rng.gen::<u32>() & 0x01ff_ffff);
        if let Ok(i) = decode(0x10000, w) {
            if testable(&i.op) {
                return w;
            }
        }
    }
}

/// Builds and runs one stream; returns the qemu states from the first
/// random instruction on, and the image.
fn stream(arm: &ArmTools, seed: u64, len: usize) -> (Vec<Cpu>, Image, usize) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut s = String::from(".syntax unified\n.arm\n.global _start\n.text\n_start:\n");
    for r in 0..15 {
        let v: u32 = match rng.gen_range(0..4) {
            0 => rng.gen_range(0..40),
            1 => 0xffff_ffff - rng.gen_range(0..40),
            2 => [0, 1, 0x7fff_ffff, 0x8000_0000, 31, 32, 33, 255, 256][rng.gen_range(0..9)],
            _ => rng.gen(),
        };
        writeln!(s, "movw r{r}, #{}\nmovt r{r}, #{}", v & 0xffff, v >> 16).unwrap();
    }
    let prologue = 30;
    for _ in 0..len {
        writeln!(s, ".inst {:#010x}", random_instruction(&mut rng)).unwrap();
    }
    s.push_str("mov r0, #0\nmov r7, #1\nsvc #0\n");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join(format!("stream{seed}.s"));
    std::fs::write(&src, s).unwrap();
    let elf = link(arm, &format!("stream{seed}"), &[src]);
    let (states, _) = qemu(arm, &elf);
    let image = Image::from_elf(&std::fs::read(&elf).unwrap()).unwrap();
    (states, image, prologue)
}

fn check_stream(arm: &ArmTools, seed: u64, len: usize, encrypted: bool) {
    let (states, image, prologue) = stream(arm, seed, len);
    let mut state: State<u64> = State::new(states[0].regs[15], image.data_base, Vec::new());
    for r in 0..15 {
        state.regs[r] = Val::Clear(states[0].regs[r]);
    }
    state.flags = flags_of(states[0].psr).map(Flag::Clear);
    let mut m = Machine::new(image, state, &ClearBackend, &GATES_128);
    let mut model: Option<Model> = None;
    for k in 0..prologue + len {
        if k == prologue {
            let regs: Vec<u32> = m.state.regs.iter().map(reg_value).collect();
            let flags: Vec<bool> = m.state.flags.iter().map(flag_value).collect();
            model = Some(Model::new(
                32,
                regs.try_into().unwrap(),
                flags.try_into().unwrap(),
            ));
        }
        if k == prologue && encrypted {
            for r in 0..15 {
                let v = reg_value(&m.state.regs[r]);
                m.state.regs[r] = Val::Enc(clear_word(v, 32, false).unwrap());
            }
            for f in &mut m.state.flags {
                *f = Flag::Enc(if flag_value(f) { 2 } else { 0 });
            }
        }
        let instr = m.image.code[&m.state.pc];
        m.step(&mut NoOracle).unwrap().unwrap();
        let want = &states[k + 1];
        if let Some(model) = &mut model {
            // The model of the 16-bit mode, at 32 bits, against qemu.
            model.step(&instr);
            assert_eq!(
                (&model.regs[..], &model.flags[..]),
                (&want.regs[..15], &flags_of(want.psr)[..]),
                "model: seed {seed}, instruction {k} ({instr})"
            );
        }
        let got: Vec<u32> = m.state.regs.iter().map(reg_value).collect();
        let flags: Vec<bool> = m.state.flags.iter().map(flag_value).collect();
        assert_eq!(
            (got.as_slice(), flags.as_slice()),
            (&want.regs[..15], &flags_of(want.psr)[..]),
            "seed {seed}, instruction {k} ({instr}), encrypted {encrypted}"
        );
    }
}

#[test]
fn random_streams_match_qemu() {
    let Some(arm) = common::arm_tools() else {
        return;
    };
    for seed in 0..200 {
        check_stream(&arm, seed, 60, false);
    }
}

#[test]
fn random_streams_match_qemu_on_encrypted_values() {
    let Some(arm) = common::arm_tools() else {
        return;
    };
    for seed in 1000..1040 {
        check_stream(&arm, seed, 40, true);
    }
}

/// The 16-bit mode against the model (itself checked against qemu at 32
/// bits above): random register instructions, assembled by hearth-emu's
/// own assembler below 64 KiB, after every instruction; clear and
/// encrypted (clear digits) registers and flags.
#[test]
fn random_streams_in_the_16_bit_mode_match_the_model() {
    use hearth_emu::asm::{assemble_at, BASES_16};
    use hearth_emu::Width;
    for seed in 0..200u64 {
        let encrypted = seed % 4 == 3;
        let mut rng = rand::rngs::StdRng::seed_from_u64(5000 + seed);
        let mut instrs = Vec::new();
        while instrs.len() < 50 {
            let i = decode(0, random_instruction(&mut rng)).unwrap();
            let fits = match i.op {
                Op::MovHalf { top, .. } => !top,
                Op::Bfi { lsb, width, .. } | Op::Bfx { lsb, width, .. } => lsb + width <= 16,
                _ => true,
            };
            if fits {
                instrs.push(i);
            }
        }
        let regs: [u32; 15] = std::array::from_fn(|_| match rng.gen_range(0..3) {
            0 => rng.gen_range(0..40),
            1 => 0xffff - rng.gen_range(0..40),
            _ => rng.gen_range(0..0x10000),
        });
        let flags: [bool; 4] = std::array::from_fn(|_| rng.gen());
        let text: Vec<String> = instrs.iter().map(|i| i.to_string()).collect();
        let image = assemble_at(&format!("{}\nsvc #0\n", text.join("\n")), BASES_16).unwrap();
        let mut state: State<u64> = State::new(image.entry, image.data_base, Vec::new());
        for (slot, &v) in state.regs.iter_mut().zip(&regs) {
            *slot = if encrypted {
                Val::Enc(clear_word(v, 16, false).unwrap())
            } else {
                Val::Clear(v)
            };
        }
        state.flags = flags.map(|f| {
            if encrypted {
                Flag::Enc(if f { 2 } else { 0 })
            } else {
                Flag::Clear(f)
            }
        });
        let mut m = Machine::new(image, state, &ClearBackend, &GATES_128);
        m.set_width(Width::W16);
        let mut model = Model::new(16, regs, flags);
        for k in 0..instrs.len() {
            // The assembled instruction (an immediate below 256 is written
            // unrotated, whatever the random word had).
            let i = m.image.code[&m.state.pc];
            m.step(&mut NoOracle).unwrap().unwrap();
            model.step(&i);
            let got: Vec<u32> = m
                .state
                .regs
                .iter()
                .map(|v| match v {
                    Val::Clear(x) => *x,
                    Val::Enc(d) => {
                        u32::try_from(hearth::api::clear_word_value(d, false).unwrap()).unwrap()
                    }
                })
                .collect();
            let f: Vec<bool> = m.state.flags.iter().map(flag_value).collect();
            assert_eq!(
                (got.as_slice(), f.as_slice()),
                (&model.regs[..], &model.flags[..]),
                "seed {seed}, instruction {k} ({i}), encrypted {encrypted}"
            );
        }
    }
}
