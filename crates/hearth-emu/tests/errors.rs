//! Bad input gets a typed error and loses nothing: malformed or foreign
//! ELF files, instructions outside the subset (all listed, with address,
//! encoding and mnemonic, before anything runs), accesses outside the data
//! memory, addresses that depend on encrypted data, and a branch decision
//! budget exhausted mid-run (the state stays at the branch).

use crate::common;

use common::{link, ArmTools};
use hearth::api::clear_word;
use hearth::backend::ClearBackend;
use hearth::GATES_128;
use hearth_emu::{
    ClearOracle, EmuError, Flag, Image, LoadError, Machine, NoOracle, Policy, State, Val,
};

/// Assembles `body` (after `_start:`) with GNU as into an image.
fn assemble(arm: &ArmTools, name: &str, body: &str) -> (Image, Vec<u8>) {
    let src = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.s"));
    std::fs::write(
        &src,
        format!(".syntax unified\n.arm\n.global _start\n.text\n_start:\n{body}\n.data\nbuf: .space 16\n"),
    )
    .unwrap();
    let elf = link(arm, name, &[src]);
    let bytes = std::fs::read(elf).unwrap();
    (Image::from_elf(&bytes).unwrap(), bytes)
}

#[test]
fn malformed_files_are_refused() {
    let Some(arm) = common::arm_tools() else {
        return;
    };
    let (_, good) = assemble(&arm, "good", "mov r0, #1\nsvc #0");
    assert!(matches!(
        Image::from_elf(b"not an elf"),
        Err(LoadError::NotElf)
    ));
    assert!(matches!(Image::from_elf(&[]), Err(LoadError::NotElf)));
    // Every truncation fails cleanly (no panic).
    for n in 0..good.len() {
        if let Ok(img) = Image::from_elf(&good[..n]) {
            // Only the section headers (symbols) may be cut away.
            assert!(!img.code.is_empty(), "truncated at {n}");
        }
    }
    let mut big_endian = good.clone();
    big_endian[5] = 2;
    assert!(matches!(
        Image::from_elf(&big_endian),
        Err(LoadError::Unsupported(_))
    ));
    let mut x86 = good.clone();
    x86[18] = 3;
    assert!(matches!(
        Image::from_elf(&x86),
        Err(LoadError::Unsupported(_))
    ));
    // A segment offset pointing past the end of the file.
    let phoff = u32::from_le_bytes(good[28..32].try_into().unwrap()) as usize;
    let mut bad = good.clone();
    bad[phoff + 4..phoff + 8].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    assert!(matches!(
        Image::from_elf(&bad),
        Err(LoadError::Malformed(_))
    ));
    // Random corruption never panics.
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for _ in 0..2000 {
        let mut f = good.clone();
        for _ in 0..rng.gen_range(1..8) {
            let i = rng.gen_range(0..f.len());
            f[i] = rng.gen();
        }
        let _ = Image::from_elf(&f);
    }
}

/// A 32-bit little-endian ARM executable of headers only: one `PT_LOAD`
/// segment per `(vaddr, memsz, flags)`, none with file contents.
fn headers_only_elf(segments: &[(u32, u32, u32)]) -> Vec<u8> {
    let mut f = b"\x7fELF\x01\x01\x01".to_vec();
    f.resize(16, 0);
    let u16s = |f: &mut Vec<u8>, v: &[u16]| v.iter().for_each(|x| f.extend(x.to_le_bytes()));
    let u32s = |f: &mut Vec<u8>, v: &[u32]| v.iter().for_each(|x| f.extend(x.to_le_bytes()));
    u16s(&mut f, &[2, 40]); // ET_EXEC, ARM
    u32s(&mut f, &[1, 0x1_0000, 52, 0, 0]); // version, entry, phoff, shoff, flags
    u16s(&mut f, &[52, 32, segments.len() as u16, 40, 0, 0]);
    for &(vaddr, memsz, flags) in segments {
        u32s(&mut f, &[1, 0, vaddr, vaddr, 0, memsz, flags, 4]);
    }
    f
}

/// Fuzzing regression (`fuzz/`, target `elf`): a 116-byte file asking for
/// one 64 MiB zero-filled executable segment made the loader decode 16 Mi
/// instructions (8.5 s and 900 MB in the fuzz build). Code is now bounded
/// by `MAX_CODE`, checked before anything is decoded.
#[test]
fn huge_code_segments_are_refused_before_decoding() {
    use hearth_emu::image::MAX_CODE;
    let (rx, r) = (5, 4); // PF_R | PF_X, PF_R
    let at_limit = Image::from_elf(&headers_only_elf(&[(0x1_0000, MAX_CODE, rx)])).unwrap();
    assert_eq!(at_limit.code.len(), MAX_CODE as usize / 4);
    for segments in [
        &[(0x1_0000, 1 << 26, rx)][..],
        &[(0x1_0000, MAX_CODE + 4, rx)],
        &[(0x1_0000, MAX_CODE, rx), (0x20_0000, 4, rx)],
    ] {
        let e = Image::from_elf(&headers_only_elf(segments)).unwrap_err();
        assert!(matches!(e, LoadError::Unsupported(_)), "{segments:?}: {e}");
    }
    // Read-only data is not decoded: zero-filled up to the 64 MiB limit.
    let rodata = [(0x1_0000, 4, rx), (0x20_0000, (1 << 26) - 4, r)];
    assert!(Image::from_elf(&headers_only_elf(&rodata)).is_ok());
}

#[test]
fn unsupported_instructions_are_all_listed_before_running() {
    let Some(arm) = common::arm_tools() else {
        return;
    };
    let src = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("unsupported.s");
    std::fs::write(
        &src,
        ".syntax unified\n.arm\n.global _start\n.text\n_start:\nmov r0, #1\n.inst 0xe10f1000 @ mrs r1, apsr\n.inst 0xee300a81 @ vadd.f32 s0, s1, s2\n.inst 0xe1042093 @ swp r2, r3, [r4]\nsvc #0\n",
    )
    .unwrap();
    let elf = link(&arm, "unsupported", &[src]);
    let err = Image::from_elf(&std::fs::read(elf).unwrap()).unwrap_err();
    let LoadError::Instructions(list) = err else {
        panic!("{err}")
    };
    assert_eq!(list.len(), 3, "{list:?}");
    assert_eq!(list[0].addr, 0x10004);
    assert!(list[0].mnemonic.contains("mrs"), "{}", list[0]);
    assert!(list[1].mnemonic.contains("coprocessor"), "{}", list[1]);
    assert!(list[2].mnemonic.contains("swp"), "{}", list[2]);
    assert!(list[2].to_string().contains("0x0001000c"), "{}", list[2]);
}

/// `body` through hearth-emu's own assembler (no toolchain needed).
fn own(body: &str) -> Image {
    hearth_emu::asm::assemble(&format!("_start:\n{body}\n.data\nbuf: .space 16\n")).unwrap()
}

fn machine(image: Image) -> Machine<'static, ClearBackend> {
    let memory = image
        .data
        .iter()
        .map(|&b| hearth_emu::Byte::Clear(b))
        .collect();
    let state = State::new(image.entry, image.data_base, memory);
    Machine::new(image, state, &ClearBackend, &GATES_128)
}

#[test]
fn memory_outside_the_data_is_refused_and_nothing_changes() {
    let image = own("ldr r1, =buf\nmov r0, #7\nstr r0, [r1, #12]\nstr r0, [r1, #14]\nsvc #0");
    let mut m = machine(image);
    for _ in 0..3 {
        m.step(&mut NoOracle).unwrap().unwrap();
    }
    let before = m.state.clone();
    let err = m.step(&mut NoOracle).unwrap_err();
    assert!(
        matches!(
            err,
            EmuError::Memory {
                kind: "store",
                len: 4,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(m.state, before, "a refused store changes nothing");
}

#[test]
fn encrypted_addresses_are_refused() {
    let image = own("ldr r1, =buf\nadd r1, r1, r2\nldr r0, [r1]\nsvc #0");
    let mut m = machine(image);
    m.state.regs[2] = Val::Enc(clear_word(4, 32, false).unwrap());
    m.step(&mut NoOracle).unwrap().unwrap();
    m.step(&mut NoOracle).unwrap().unwrap();
    let before = m.state.clone();
    let err = m.step(&mut NoOracle).unwrap_err();
    assert!(matches!(err, EmuError::Encrypted { .. }), "{err}");
    assert_eq!(m.state, before);
}

#[test]
fn exhausted_decision_budget_stops_at_the_branch() {
    // Counts r0 down to zero: one decision per iteration.
    let image = own("loop:\nsubs r0, r0, #1\nbne loop\nsvc #0");
    let mut m = machine(image);
    m.state.regs[0] = Val::Enc(clear_word(5, 32, false).unwrap());
    let mut oracle = ClearOracle(Policy::new(3));
    let err = m.run(&mut oracle, 1000, |_| {}).unwrap_err();
    assert!(matches!(err, EmuError::Decision { .. }), "{err}");
    assert_eq!(oracle.0.log.len(), 3);
    assert!(oracle
        .0
        .log
        .iter()
        .all(|&(pc, taken)| pc == 0x10004 && taken));
    // The state is kept: r0 = 1, pc at the branch; a larger budget resumes.
    assert_eq!(m.state.pc, 0x10004);
    let Val::Enc(d) = &m.state.regs[0] else {
        panic!("r0 stays encrypted")
    };
    assert_eq!(hearth::api::clear_word_value(d, false).unwrap(), 1.into());
    let mut more = ClearOracle(Policy::new(10));
    m.run(&mut more, 1000, |_| {}).unwrap();
    assert_eq!(more.0.log, vec![(0x10004, true), (0x10004, false)]);
    assert!(matches!(m.state.flags[1], Flag::Enc(2)));
}
