//! Differential test against a real ARM CPU model: each C program of the
//! corpus, compiled with `arm-none-eabi-gcc -O1 -marm`, runs under
//! `qemu-arm` (one instruction per block, CPU state logged) and under the
//! emulator on the clear backend, from qemu's own initial registers; the
//! registers and flags at the exit `svc` and the whole data memory (which
//! the program writes to stdout under qemu) must be equal.
//!
//! A function of two pointers (`dot4.c`, started by `call.s`) runs from
//! its arguments as clear registers, the arrays' addresses taken from the
//! ELF's symbols, as `hearth emu run --clear-reg r0=@a --clear-reg r1=@b`
//! starts it.
//!
//! Needs `gcc-arm-none-eabi` and `qemu-user` (`.ci/run` installs them).

use crate::common;

use common::{compile, corpus, flag_value, flags_of, link_with, qemu, reg_value, ArmTools, Cpu};
use hearth::api::clear_word_value;
use hearth::backend::ClearBackend;
use hearth::GATES_128;
use hearth_emu::{Byte, ClearOracle, Flag, Image, Machine, NoOracle, Policy, State, Stop, Val};

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

fn check(arm: &ArmTools, name: &str, encrypted: bool) {
    let elf = compile(arm, name, if encrypted { "enc" } else { "clear" });
    let (states, dump) = qemu(arm, &elf);
    let image = Image::from_elf(&std::fs::read(&elf).unwrap()).unwrap();
    let svc = exit_svc(&image);
    let end = states
        .iter()
        .find(|s| s.regs[15] == svc)
        .expect("qemu reaches the exit svc")
        .clone();
    let (state, pc, decisions) = emulate(image, &states[0], encrypted);
    assert_eq!(pc, svc, "{name}: stopped elsewhere");
    same_end(name, &state, &end, &dump, encrypted);
    if encrypted {
        eprintln!("{name}: {decisions} branch decisions");
    }
}

/// The first `svc` of `image` (the program's exit).
fn exit_svc(image: &Image) -> u32 {
    *image
        .code
        .iter()
        .find(|(_, i)| matches!(i.op, hearth_emu::Op::Svc { .. }))
        .unwrap()
        .0
}

/// The data memory's bytes (clear digits decoded).
fn bytes_of(state: &State<u64>) -> Vec<u8> {
    state
        .memory
        .iter()
        .map(|b| match b {
            Byte::Clear(x) => *x,
            Byte::Enc(d) => u8::try_from(clear_word_value(d, false).unwrap()).unwrap(),
        })
        .collect()
}

/// The emulator's final `state` has qemu's registers and flags at the exit
/// (`end`) and the data memory qemu wrote (`dump`).
fn same_end(name: &str, state: &State<u64>, end: &Cpu, dump: &[u8], encrypted: bool) {
    for r in 0..15 {
        assert_eq!(
            reg_value(&state.regs[r]),
            end.regs[r],
            "{name} (encrypted memory: {encrypted}): r{r}"
        );
    }
    let flags: Vec<bool> = state.flags.iter().map(flag_value).collect();
    assert_eq!(flags, flags_of(end.psr).to_vec(), "{name}: NZCV");
    let memory = bytes_of(state);
    assert_eq!(memory.len(), dump.len(), "{name}: data size");
    assert_eq!(
        memory, dump,
        "{name} (encrypted memory: {encrypted}): data memory"
    );
}

/// `dot4(a, b)` from `_start` with r0 and r1 the arrays' addresses from
/// the ELF's symbols, clear, every other register and flag zero (what
/// `hearth emu run --clear-reg r0=@a --clear-reg r1=@b` starts with);
/// qemu-arm runs the same code from `qemu_start`, which sets those
/// registers. At the exit: qemu's registers, flags and memory, and
/// `result` the dot product of the ELF's arrays in plain Rust.
fn pointers(arm: &ArmTools, encrypted: bool) {
    let tag = if encrypted { "enc" } else { "clear" };
    let dir = corpus();
    let sources = [dir.join("call.s"), dir.join("dot4.c")];
    let elf = link_with(arm, &format!("dot4-{tag}"), &sources, &[]);
    let for_qemu = link_with(
        arm,
        &format!("dot4-qemu-{tag}"),
        &sources,
        &["-e", "qemu_start"],
    );
    let image = Image::from_elf(&std::fs::read(&elf).unwrap()).unwrap();
    let theirs = Image::from_elf(&std::fs::read(&for_qemu).unwrap()).unwrap();
    // One program, two entries.
    assert_eq!(image.code, theirs.code);
    assert_eq!(image.data, theirs.data);
    assert_eq!(image.entry, image.symbols["_start"]);
    assert_eq!(theirs.entry, image.symbols["qemu_start"]);
    let (a, b) = (image.symbols["a"], image.symbols["b"]);

    let (states, dump) = qemu(arm, &for_qemu);
    let start = states
        .iter()
        .find(|s| s.regs[15] == image.entry)
        .expect("qemu reaches _start");
    let mut want = [0u32; 15];
    want[0] = a;
    want[1] = b;
    for r in (0..13).chain([14]) {
        assert_eq!(start.regs[r], want[r], "qemu at _start: r{r}");
    }
    assert_eq!(flags_of(start.psr), [false; 4], "qemu at _start: NZCV");
    let svc = exit_svc(&image);
    let end = states
        .iter()
        .find(|s| s.regs[15] == svc)
        .expect("qemu reaches the exit svc")
        .clone();

    let memory = common::memory(&image.data, encrypted);
    let mut state = State::new(image.entry, image.data_base, memory);
    state
        .set_registers(&[(0, a), (1, b)], Vec::new(), 32)
        .unwrap();
    let base = image.data_base;
    let word = |data: &[u8], addr: u32| {
        let i = (addr - base) as usize;
        i32::from_le_bytes(data[i..i + 4].try_into().unwrap())
    };
    let dot = (0..4).fold(0i32, |s, i| {
        s.wrapping_add(word(&image.data, a + 4 * i).wrapping_mul(word(&image.data, b + 4 * i)))
    });
    let result = image.symbols["result"];
    let mut m = Machine::new(image, state, &ClearBackend, &GATES_128);
    let stop = m
        .run(&mut NoOracle, 10_000, |_| {})
        .expect("the emulator runs to the exit");
    assert_eq!(stop, Stop::Halted { pc: svc });
    same_end("dot4", &m.state, &end, &dump, encrypted);
    assert_eq!(word(&bytes_of(&m.state), result), dot, "dot4's result");
    // The pointers stayed clear, the data encrypted.
    if encrypted {
        assert!(matches!(
            m.state.memory[(result - m.state.base) as usize],
            Byte::Enc(_)
        ));
    }
}

#[test]
fn corpus_matches_qemu_with_clear_memory() {
    let Some(arm) = common::arm_tools() else {
        return;
    };
    for name in PROGRAMS {
        check(&arm, name, false);
    }
}

#[test]
fn corpus_matches_qemu_with_encrypted_memory() {
    let Some(arm) = common::arm_tools() else {
        return;
    };
    for name in PROGRAMS {
        check(&arm, name, true);
    }
}

#[test]
fn a_function_of_two_pointers_matches_qemu() {
    let Some(arm) = common::arm_tools() else {
        return;
    };
    pointers(&arm, false);
    pointers(&arm, true);
}
