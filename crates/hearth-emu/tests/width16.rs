//! The 16-bit mode's memory and errors: words are 2 bytes (loads, stores,
//! PUSH / POP slots, literal loads), clear and encrypted, and what it
//! refuses (MOVT, bit fields beyond bit 15, code above 64 KiB).

use crate::common;

use hearth::api::clear_word_value;
use hearth::backend::ClearBackend;
use hearth::GATES_128;
use hearth_emu::asm::{assemble, assemble_at, BASES_16};
use hearth_emu::{Byte, EmuError, Image, Machine, NoOracle, State, Val, Width};

const PROGRAM: &str = "
_start:
    ldr sp, =stack_top
    ldr r1, =data
    ldr r0, [r1]            @ 0x1234: a word is 2 bytes
    ldrh r2, [r1, #2]       @ 0x5678
    add r3, r0, r2          @ 0x68ac
    str r3, [r1, #4]
    push {r0, r2, lr}       @ 3 slots of 2 bytes
    pop {r4, r5, r6}
    ldrb r7, [r1, #1]       @ 0x12
    ldrsb r8, [r1, #6]      @ 0xf0 -> 0xfff0
    mov r9, #0x10000        @ truncated to 16 bits: 0
    mvn r10, #0             @ 0xffff
    ldr r11, =0x12345678    @ the literal's low half: 0x5678
    svc #0
    .data
data:
    .hword 0x1234, 0x5678, 0
    .byte 0xf0, 0
    .space 32
stack_top:
";

fn run(encrypted: bool) -> (State<u64>, Image) {
    let image = assemble_at(PROGRAM, BASES_16).unwrap();
    let mem = common::memory(&image.data, encrypted);
    let state = State::new(image.entry, image.data_base, mem);
    let mut m = Machine::new(image.clone(), state, &ClearBackend, &GATES_128);
    m.set_width(Width::W16);
    m.run(&mut NoOracle, 100, |_| {}).unwrap();
    (m.state, image)
}

fn value(v: &Val<u64>) -> u32 {
    match v {
        Val::Clear(x) => *x,
        Val::Enc(d) => {
            assert_eq!(d.len(), 16, "16-bit registers");
            u32::try_from(clear_word_value(d, false).unwrap()).unwrap()
        }
    }
}

#[test]
fn words_are_two_bytes() {
    for encrypted in [false, true] {
        let (s, image) = run(encrypted);
        let r: Vec<u32> = s.regs.iter().map(value).collect();
        let data = image.data_base;
        assert_eq!(r[0], 0x1234);
        assert_eq!(r[1], data);
        assert_eq!(r[2], 0x5678);
        assert_eq!(r[3], 0x68ac);
        assert_eq!((r[4], r[5], r[6]), (0x1234, 0x5678, 0), "push / pop");
        assert_eq!(r[7], 0x12);
        assert_eq!(r[8], 0xfff0);
        assert_eq!(r[9], 0);
        assert_eq!(r[10], 0xffff);
        assert_eq!(r[11], 0x5678);
        assert_eq!(r[13], data + 8 + 32, "sp back at the top");
        let byte = |i: usize| match &s.memory[i] {
            Byte::Clear(b) => *b,
            Byte::Enc(d) => u8::try_from(clear_word_value(d, false).unwrap()).unwrap(),
        };
        assert_eq!((byte(4), byte(5)), (0xac, 0x68), "a 2-byte store");
        // PUSH stored r0, r2, lr in 2-byte slots just below the top.
        assert_eq!((byte(34), byte(35)), (0x34, 0x12), "r0's slot");
        assert_eq!((byte(36), byte(37)), (0x78, 0x56), "r2's slot");
        assert_eq!((byte(38), byte(39)), (0, 0), "lr's slot");
    }
}

fn refused(text: &str, at_16: bool) -> EmuError {
    let image = if at_16 {
        assemble_at(text, BASES_16).unwrap()
    } else {
        assemble(text).unwrap()
    };
    let state = State::new(image.entry, image.data_base, Vec::new());
    let mut m = Machine::new(image, state, &ClearBackend, &GATES_128);
    m.set_width(Width::W16);
    let before = m.state.clone();
    let e = m.run(&mut NoOracle, 10, |_| {}).unwrap_err();
    assert_eq!(m.state, before, "nothing changes");
    e
}

#[test]
fn the_16_bit_mode_refuses_what_does_not_fit() {
    let e = refused("movt r0, #1\nsvc #0", true);
    assert!(e.to_string().contains("movt"), "{e}");
    let e = refused("bfi r0, r1, #12, #8\nsvc #0", true);
    assert!(e.to_string().contains("bit field"), "{e}");
    let e = refused("ubfx r0, r1, #15, #2\nsvc #0", true);
    assert!(e.to_string().contains("bit field"), "{e}");
    let e = refused("mov r0, #1\nsvc #0", false);
    assert!(e.to_string().contains("64 KiB"), "{e}");
}
