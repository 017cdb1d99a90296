//! The encrypted run equals the clear run: a program with an oblivious
//! conditional move, arithmetic, byte stores and a loop whose exit depends
//! on encrypted data (decided by the key owner's oracle), on GATES_128
//! keys and the cpu backend, against the same program on the clear
//! backend; and a compiled C program of the corpus on encrypted memory
//! against qemu-arm (on INSECURE_TEST_BITS, whose circuits are GATES_128's,
//! so that its thousands of bootstraps take seconds).

use crate::common;

use common::reg_value;
use hearth::api::{clear_word, clear_word_value};
use hearth::backend::{ClearBackend, CpuBackend};
use hearth::{GATES_128, INSECURE_TEST_BITS};
use hearth_emu::values;
use hearth_emu::{Byte, ClearOracle, Flag, Image, KeyOracle, Machine, Policy, State, Val};
use hearth_testkit::keys::keys;

const PROGRAM: &str = "
    ldr r1, =buf
    ldr r0, [r1]          @ x (encrypted)
    ldr r2, [r1, #4]      @ y (encrypted)
    cmp r0, r2
    movlt r0, r2          @ max(x, y), obliviously
    add r0, r0, #1
    str r0, [r1, #8]
    eor r3, r0, r2, lsl #3
    strb r3, [r1, #12]
loop:
    subs r4, r4, #1       @ r4 (encrypted) counts down
    bne loop              @ the key owner decides
    svc #0
";

fn image() -> Image {
    hearth_emu::asm::assemble(&format!(
        "_start:\n{PROGRAM}\n.data\nbuf: .word 1234567, 0xfffffff0, 0, 0\n"
    ))
    .unwrap()
}

#[test]
fn encrypted_run_equals_clear_run() {
    // Clear backend.
    let img = image();
    let mem = img
        .data
        .iter()
        .map(|&b| Byte::Enc(clear_word(b, 8, false).unwrap()))
        .collect();
    let mut s = State::new(img.entry, img.data_base, mem);
    s.regs[4] = Val::Enc(clear_word(3, 32, false).unwrap());
    let mut clear = Machine::new(img, s, &ClearBackend, &GATES_128);
    let mut co = ClearOracle(Policy::new(10));
    clear.run(&mut co, 1000, |_| {}).unwrap();
    // Encrypted.
    let (key, server) = keys(&GATES_128);
    let cpu = CpuBackend::new(server, None).unwrap();
    let enc = |v: u64, n: usize| values::encrypt(key, v, n).unwrap();
    let dec = |d: &[hearth::Ciphertext]| values::decrypt(key, d).unwrap();
    let img = image();
    let mem = img
        .data
        .iter()
        .map(|&b| Byte::Enc(enc(b as u64, 8)))
        .collect();
    let mut s = State::new(img.entry, img.data_base, mem);
    s.regs[4] = Val::Enc(enc(3, 32));
    let mut m = Machine::new(img, s, &cpu, &GATES_128);
    let mut ko = KeyOracle {
        key,
        policy: Policy::new(10),
    };
    m.run(&mut ko, 1000, |_| {}).unwrap();
    assert_eq!(ko.policy.log, co.0.log, "the same decisions");
    assert_eq!(ko.policy.log.len(), 3);
    assert_eq!(m.state.pc, clear.state.pc);
    for r in 0..15 {
        let want = reg_value(&clear.state.regs[r]);
        let got = match &m.state.regs[r] {
            Val::Clear(v) => *v,
            Val::Enc(d) => dec(d) as u32,
        };
        assert_eq!(got, want, "r{r}");
    }
    for (i, (a, b)) in m.state.flags.iter().zip(&clear.state.flags).enumerate() {
        let got = match a {
            Flag::Clear(v) => *v,
            Flag::Enc(d) => dec(std::slice::from_ref(d)) == 1,
        };
        assert_eq!(got, common::flag_value(b), "flag {i}");
    }
    for (i, (a, b)) in m.state.memory.iter().zip(&clear.state.memory).enumerate() {
        let got = match a {
            Byte::Clear(v) => *v as u64,
            Byte::Enc(d) => dec(d),
        };
        let want = match b {
            Byte::Clear(v) => *v as u64,
            Byte::Enc(d) => u64::try_from(clear_word_value(d, false).unwrap()).unwrap(),
        };
        assert_eq!(got, want, "byte {i}");
    }
    // max(1234567, -16 as i32) + 1 = 1234568.
    assert_eq!(reg_value(&clear.state.regs[0]), 1_234_568);
}

/// A compiled C program of the corpus (bubble sort of 4 words, conditional
/// stores decided obliviously) on encrypted memory: the data memory
/// decrypts to qemu-arm's.
#[test]
fn encrypted_bubble_sort_equals_qemu() {
    let Some(arm) = common::arm_tools() else {
        return;
    };
    let elf = common::compile(&arm, "bubble", "encrypted");
    let (_, dump) = common::qemu(&arm, &elf);
    let img = Image::from_elf(&std::fs::read(&elf).unwrap()).unwrap();
    let (key, server) = keys(&INSECURE_TEST_BITS);
    let cpu = CpuBackend::new(server, None).unwrap();
    let mem = img
        .data
        .iter()
        .map(|&b| Byte::Enc(values::encrypt(key, b as u64, 8).unwrap()))
        .collect();
    let s = State::new(img.entry, img.data_base, mem);
    let mut m = Machine::new(img, s, &cpu, &INSECURE_TEST_BITS);
    let mut ko = KeyOracle {
        key,
        policy: Policy::new(0),
    };
    m.run(&mut ko, 10_000, |_| {}).unwrap();
    let memory: Vec<u8> = m
        .state
        .memory
        .iter()
        .map(|b| match b {
            Byte::Clear(v) => *v,
            Byte::Enc(d) => values::decrypt(key, d).unwrap() as u8,
        })
        .collect();
    assert_eq!(memory, dump);
}
