//! Shared by the qemu differential tests: compile for ARM, run under
//! qemu-arm with the CPU state logged before every instruction.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use hearth::api::{clear_word, clear_word_value};
use hearth_emu::{Byte, Flag, Val};

/// Proof that `arm-none-eabi-gcc` and `qemu-arm` run here: every function
/// that calls them takes one, so a test reaches them only through
/// [`arm_tools`].
pub struct ArmTools(());

/// The ARM tools, if `arm-none-eabi-gcc` and `qemu-arm` run here. Without
/// them the tests that need them say so and pass (`None`), unless
/// `HEARTH_REQUIRE_ARM_TOOLS` is set (`.ci/run` sets it after installing
/// them), where they fail.
pub fn arm_tools() -> Option<ArmTools> {
    let runs = |cmd: &str| {
        Command::new(cmd)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let ok = runs("arm-none-eabi-gcc") && runs("qemu-arm");
    if !ok {
        assert!(
            std::env::var_os("HEARTH_REQUIRE_ARM_TOOLS").is_none(),
            "arm-none-eabi-gcc and qemu-arm are required (Debian: gcc-arm-none-eabi, qemu-user)"
        );
        eprintln!("skipped: arm-none-eabi-gcc or qemu-arm is missing (Debian: gcc-arm-none-eabi, qemu-user)");
    }
    ok.then_some(ArmTools(()))
}

pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Compiles `name.c` with the corpus' start code and linker script into
/// `name-tag.elf` (tests running at once use
/// different tags).
pub fn compile(arm: &ArmTools, name: &str, tag: &str) -> PathBuf {
    let dir = corpus();
    link(
        arm,
        &format!("{name}-{tag}"),
        &[dir.join("start.s"), dir.join(format!("{name}.c"))],
    )
}

/// Links `sources` with the corpus' linker script into `name.elf`.
pub fn link(arm: &ArmTools, name: &str, sources: &[PathBuf]) -> PathBuf {
    link_with(arm, name, sources, &[])
}

/// [`link`] with more `arm-none-eabi-gcc` arguments (e.g. `-e` for
/// another entry).
pub fn link_with(_: &ArmTools, name: &str, sources: &[PathBuf], extra: &[&str]) -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.elf"));
    let dir = corpus();
    let st = Command::new("arm-none-eabi-gcc")
        .args([
            "-O1",
            "-marm",
            "-march=armv7ve",
            "-nostdlib",
            "-nostartfiles",
            "-ffreestanding",
            "-T",
        ])
        .arg(dir.join("link.ld"))
        .args(extra)
        .args(sources)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("arm-none-eabi-gcc runs (arm_tools checked it)");
    assert!(st.success(), "building {name}");
    out
}

/// One logged CPU state: r0..r15 and the PSR.
#[derive(Clone, Debug)]
pub struct Cpu {
    pub regs: [u32; 16],
    pub psr: u32,
}

/// Runs `elf` under qemu-arm: the logged states and what it wrote.
pub fn qemu(_: &ArmTools, elf: &Path) -> (Vec<Cpu>, Vec<u8>) {
    let log = elf.with_extension("log");
    let out = Command::new("qemu-arm")
        .args(["-singlestep", "-d", "cpu,nochain", "-D"])
        .arg(&log)
        .arg(elf)
        .output()
        .expect("qemu-arm runs (arm_tools checked it)");
    assert!(out.status.success(), "qemu-arm {}", elf.display());
    let text = std::fs::read_to_string(&log).unwrap();
    let mut states = Vec::new();
    let mut regs = [0u32; 16];
    for line in text.lines() {
        for field in line.split_whitespace() {
            if let Some((k, v)) = field.split_once('=') {
                let Ok(v) = u32::from_str_radix(v, 16) else {
                    continue;
                };
                if let Some(i) = k.strip_prefix('R').and_then(|i| i.parse::<usize>().ok()) {
                    regs[i] = v;
                } else if k == "PSR" {
                    states.push(Cpu { regs, psr: v });
                }
            }
        }
    }
    (states, out.stdout)
}

pub fn flags_of(psr: u32) -> [bool; 4] {
    [31, 30, 29, 28].map(|b| (psr >> b) & 1 == 1)
}

/// Data memory from initial bytes: encrypted (clear digits) or clear.
pub fn memory(data: &[u8], encrypted: bool) -> Vec<Byte<u64>> {
    data.iter()
        .map(|&b| {
            if encrypted {
                Byte::Enc(clear_word(b, 8, false).unwrap())
            } else {
                Byte::Clear(b)
            }
        })
        .collect()
}

/// A register's value (clear digits decoded).
pub fn reg_value(v: &Val<u64>) -> u32 {
    match v {
        Val::Clear(x) => *x,
        Val::Enc(d) => u32::try_from(clear_word_value(d, false).unwrap()).unwrap(),
    }
}

/// A flag's value (a clear digit is 0 or 2).
pub fn flag_value(f: &Flag<u64>) -> bool {
    match f {
        Flag::Clear(b) => *b,
        Flag::Enc(d) => *d == 2,
    }
}

pub mod reference;
