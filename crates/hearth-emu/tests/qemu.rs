//! Differential test against a real ARM CPU model: each C program of the
//! corpus, compiled with `arm-none-eabi-gcc -O1 -marm`, runs under
//! `qemu-arm` (one instruction per block, CPU state logged) and under the
//! emulator on the clear backend, from qemu's own initial registers; the
//! registers and flags at the exit `svc` and the whole data memory (which
//! the program writes to stdout under qemu) must be equal.
//!
//! Needs `gcc-arm-none-eabi` and `qemu-user` (`.ci/run` installs them).

mod common;

use common::{compile, flag_value, flags_of, qemu, reg_value, Cpu};
use hearth::api::clear_word_value;
use hearth::backend::ClearBackend;
use hearth::GATES_128;
use hearth_emu::{Byte, ClearOracle, Flag, Image, Machine, Policy, State, Stop, Val};

const PROGRAMS: [&str; 6] = ["gcd", "isqrt", "popcount", "bubble", "poly", "crc8"];

/// Runs the emulator from qemu's first state, data memory encrypted
/// (clear digits) when `encrypted`; returns the final state.
fn emulate(image: Image, start: &Cpu, encrypted: bool) -> (State<u64>, u32, u64) {
    let memory = common::memory(&image.data, encrypted);
    let mut state = State::new(start.regs[15], image.data_base, memory);
    for r in 0..15 {
        state.regs[r] = Val::Clear(start.regs[r]);
    }
    state.flags = flags_of(start.psr).map(Flag::Clear);
    let mut m = Machine::new(image, state, &ClearBackend, &GATES_128);
    let mut oracle = ClearOracle(Policy::new(100_000));
    let stop = m
        .run(&mut oracle, 200_000, |_| {})
        .expect("the emulator runs to the exit");
    let Stop::Halted { pc } = stop;
    (m.state, pc, oracle.0.log.len() as u64)
}

fn check(name: &str, encrypted: bool) {
    let elf = compile(name, if encrypted { "enc" } else { "clear" });
    let (states, dump) = qemu(&elf);
    let image = Image::from_elf(&std::fs::read(&elf).unwrap()).unwrap();
    let svc = *image
        .code
        .iter()
        .find(|(_, i)| matches!(i.op, hearth_emu::Op::Svc { .. }))
        .unwrap()
        .0;
    let end = states
        .iter()
        .find(|s| s.regs[15] == svc)
        .expect("qemu reaches the exit svc")
        .clone();
    let (state, pc, decisions) = emulate(image, &states[0], encrypted);
    assert_eq!(pc, svc, "{name}: stopped elsewhere");
    for r in 0..15 {
        assert_eq!(
            reg_value(&state.regs[r]),
            end.regs[r],
            "{name} (encrypted memory: {encrypted}): r{r}"
        );
    }
    let flags: Vec<bool> = state.flags.iter().map(flag_value).collect();
    assert_eq!(flags, flags_of(end.psr).to_vec(), "{name}: NZCV");
    let memory: Vec<u8> = state
        .memory
        .iter()
        .map(|b| match b {
            Byte::Clear(x) => *x,
            Byte::Enc(d) => u8::try_from(clear_word_value(d, false).unwrap()).unwrap(),
        })
        .collect();
    assert_eq!(memory.len(), dump.len(), "{name}: data size");
    assert_eq!(
        memory, dump,
        "{name} (encrypted memory: {encrypted}): data memory"
    );
    if encrypted {
        eprintln!("{name}: {decisions} branch decisions");
    }
}

#[test]
fn corpus_matches_qemu_with_clear_memory() {
    if !common::arm_tools() {
        return;
    }
    for name in PROGRAMS {
        check(name, false);
    }
}

#[test]
fn corpus_matches_qemu_with_encrypted_memory() {
    if !common::arm_tools() {
        return;
    }
    for name in PROGRAMS {
        check(name, true);
    }
}
