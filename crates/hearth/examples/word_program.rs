//! The Rust half of the Python overhead benchmark
//! (`crates/hearth-py/bench/overhead.py`): builds the benchmark's 32-bit
//! word program with the typed API, checks it is byte for byte the program
//! the Python package wrote, and runs it once on the Python side's
//! encrypted inputs, timing what `CompiledProgram.run` does in Python
//! (backend made, program run).
//!
//! `word_program DIR THREADS`: reads `DIR/program.hprog`, `DIR/server.key`
//! and `DIR/in.hb`; writes `DIR/rust-out.hb`; prints the run's seconds.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use hearth::api::U32;
use hearth::backend::CpuBackend;
use hearth::{Bundle, CompiledProgram, Error, Program, ServerKey, GATES_128};

/// `y = (a * b + c) ^ (a >> 7)`, `z = a < c`: what overhead.py traces.
fn program() -> Result<CompiledProgram, Error> {
    let p = Program::new(&GATES_128);
    let (a, b, c) = (U32::input(&p), U32::input(&p), U32::input(&p));
    let y = &(&(&a * &b) + &c) ^ &(&a >> 7);
    let z = a.lt(&c);
    p.output(&y);
    p.output(&z);
    p.build()?.with_signature(
        &[("a", &[]), ("b", &[]), ("c", &[])],
        &[("y", &[]), ("z", &[])],
    )
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("word_program: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(threads)) = (args.next(), args.next()) else {
        return Err(Error::Config("usage: word_program DIR THREADS".into()));
    };
    let dir = PathBuf::from(dir);
    let threads: usize = threads
        .parse()
        .map_err(|_| Error::Config(format!("THREADS `{threads}` is not a number")))?;
    let prog = program()?;
    let python = std::fs::read(dir.join("program.hprog"))
        .map_err(|e| Error::Config(format!("{}: {e}", dir.join("program.hprog").display())))?;
    if prog.to_bytes()? != python {
        return Err(Error::Config(
            "the Rust program differs from the Python package's program.hprog".into(),
        ));
    }
    let key = ServerKey::load(&dir.join("server.key"))?;
    let bundle = Bundle::load(&dir.join("in.hb"))?;
    let t = Instant::now();
    let out = prog.run_bundle(&CpuBackend::new(&key, Some(threads))?, &bundle)?;
    let secs = t.elapsed().as_secs_f64();
    out.save(&dir.join("rust-out.hb"))?;
    println!("{secs:.6}");
    Ok(())
}
