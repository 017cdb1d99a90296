//! `hearth bench emu`: CryptoEmu's functional units (its Tables 3-15) on
//! hearth's bits family, 16 and 32 bits: #PBS, depth, time, and time in
//! units of G (one bootstrap on the same machine), beside the paper's
//! latencies in units of its G (TFHE's gate, 25.6 ms, Table 1).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hearth::api::{Program, Word};
use hearth::backend::CpuBackend;
use hearth::{ClientKey, Error, GATES_128};
use hearth_emu::alu::ArmWord;
use serde_json::json;

use crate::report::{emit, ms, Table};
use hearth_cli::progress::generate;

/// TFHE's bootstrapped gate in the paper (NAND, Table 1), ms.
const PAPER_G_MS: f64 = 25.57;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Add,
    Sub,
    Lsl,
    Lsr,
    Asr,
    Mul,
    Udiv,
    And,
    Flags,
}

impl Unit {
    const ALL: [Unit; 9] = [
        Unit::Add,
        Unit::Sub,
        Unit::Lsl,
        Unit::Lsr,
        Unit::Asr,
        Unit::Mul,
        Unit::Udiv,
        Unit::And,
        Unit::Flags,
    ];

    fn name(self) -> &'static str {
        match self {
            Unit::Add => "add",
            Unit::Sub => "sub",
            Unit::Lsl => "lsl by encrypted amount",
            Unit::Lsr => "lsr by encrypted amount",
            Unit::Asr => "asr by encrypted amount",
            Unit::Mul => "mul (unsigned, 2n-bit product)",
            Unit::Udiv => "udiv",
            Unit::And => "and (register)",
            Unit::Flags => "adds (add + NZCV)",
        }
    }

    /// The paper's latency (ms) at 16 and 32 bits (Tables 3-15; the LRS
    /// figure for both right shifts, the adder plus its flag unit for ADDS).
    fn paper_ms(self, bits: usize) -> f64 {
        let (a, b) = match self {
            Unit::Add => (528.482, 941.12),
            Unit::Sub => (715.015, 1115.25),
            Unit::Lsl => (287.92, 474.739),
            Unit::Lsr => (290.517, 497.0),
            Unit::Asr => (296.124, 497.0),
            Unit::Mul => (11316.8, 36929.2),
            Unit::Udiv => (11659.5, 38256.5),
            Unit::And => (47.7228, 55.4597),
            Unit::Flags => (528.482 + 115.901, 941.12 + 169.843),
        };
        if bits == 16 {
            a
        } else {
            b
        }
    }
}

/// Builds `unit` on `W`-bit words: its inputs are encrypted words
/// (`x`, then `y` or a shift amount).
fn build<const W: usize>(p: &Program, unit: Unit) {
    let x = Word::<W, false>::input(p);
    match unit {
        Unit::Lsl | Unit::Lsr | Unit::Asr => {
            let a = Word::<8, false>::input(p);
            let r = match unit {
                Unit::Lsl => x.shl_by(&a),
                Unit::Lsr => x.shr_by(&a),
                _ => x.cast::<W, true>().shr_by(&a).cast(),
            };
            p.output(&r);
        }
        _ => {
            let y = Word::<W, false>::input(p);
            match unit {
                Unit::Add => p.output(&(&x + &y)),
                Unit::Sub => p.output(&(&x - &y)),
                Unit::And => p.output(&(&x & &y)),
                Unit::Udiv => p.output(&(&x / &y)),
                Unit::Flags => {
                    let (s, f) = x.add_with_flags(&y);
                    p.output(&s);
                    for b in [&f.n, &f.z, &f.c, &f.v] {
                        p.output(b);
                    }
                }
                _ if W <= 16 => p.output(&(&x.cast::<32, false>() * &y.cast::<32, false>())),
                _ => p.output(&(&x.cast::<64, false>() * &y.cast::<64, false>())),
            }
        }
    }
}

fn program(bits: usize, unit: Unit, threads: usize) -> Result<hearth::CompiledProgram, Error> {
    let p = Program::new(&GATES_128);
    p.set_threads(threads);
    if bits == 16 {
        build::<16>(&p, unit);
    } else {
        build::<32>(&p, unit);
    }
    p.build()
}

/// One bootstrap's latency on one thread: the median over `n` gates run
/// one at a time.
fn measure_g(key: &ClientKey, cpu1: &CpuBackend<'_>) -> Result<Duration, Error> {
    let p = Program::new(&GATES_128);
    let x = hearth::api::Bool::input(&p);
    let y = hearth::api::Bool::input(&p);
    p.output(&(&x & &y));
    let prog = p.build()?;
    let ins = [key.encrypt_bool(true)?, key.encrypt_bool(false)?];
    let mut times = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        prog.run_encrypted(cpu1, &ins)?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

pub fn emu(threads: usize, json_path: Option<PathBuf>) -> Result<(), Error> {
    let (key, server) = generate(&GATES_128);
    let cpu = CpuBackend::new(&server, Some(threads))?;
    let cpu1 = CpuBackend::new(&server, Some(1))?;
    let g = measure_g(&key, &cpu1)?;
    let g_ms = g.as_secs_f64() * 1e3;
    let mut table = Table::new(
        format!(
            "CryptoEmu's units on GATES_128, {threads} threads (G = {:.2} ms here, {PAPER_G_MS} ms in the paper)",
            g_ms
        ),
        &[
            "unit",
            "bits",
            "#PBS",
            "depth",
            "time (ms)",
            "time / G",
            "paper (ms)",
            "paper / G",
            "paper / hearth, in G",
        ],
    );
    table.note(
        "The paper ran a 48-core machine (its Tables 3-15); hearth runs on the threads above. \
         Times in units of each machine's own bootstrap compare the algorithms, not the hardware.",
    );
    let mut rows = Vec::new();
    for bits in [16usize, 32] {
        for unit in Unit::ALL {
            let prog = program(bits, unit, threads)?;
            let st = prog.circuit().stats();
            let inputs = prog
                .input_shapes()
                .iter()
                .map(|s| {
                    let n = s.len();
                    let v: u64 = if n == 8 {
                        5
                    } else {
                        0x9e37_79b9 & ((1u64 << n) - 1)
                    };
                    key.encrypt_word_of(v.max(1), n, false)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let t = Instant::now();
            prog.run_encrypted(&cpu, &inputs)?;
            let time = t.elapsed();
            let in_g = time.as_secs_f64() * 1e3 / g_ms;
            let paper = unit.paper_ms(bits);
            let paper_g = paper / PAPER_G_MS;
            table.row(vec![
                unit.name().into(),
                bits.to_string(),
                st.pbs.to_string(),
                st.depth.to_string(),
                ms(time),
                format!("{in_g:.1}"),
                format!("{paper:.1}"),
                format!("{paper_g:.1}"),
                format!("{:.2}", paper_g / in_g),
            ]);
            rows.push(json!({
                "unit": unit.name(), "bits": bits, "pbs": st.pbs, "depth": st.depth,
                "time_ms": time.as_secs_f64() * 1e3, "time_in_g": in_g,
                "paper_ms": paper, "paper_in_g": paper_g,
            }));
            eprintln!(
                "{} ({bits} bits): {} PBS, {}",
                unit.name(),
                st.pbs,
                ms(time)
            );
        }
    }
    let json = json!({ "threads": threads, "g_ms": g_ms, "paper_g_ms": PAPER_G_MS, "units": rows });
    emit(json_path.as_deref(), &json, &[table])
}
