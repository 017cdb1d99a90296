//! What `info`, `inspect`, `encrypt` and `run` print about programs and
//! bundles, and the checks they share on files read from a user.

use std::path::Path;

use hearth::{Bundle, CompiledProgram, Error, ParameterSet};

/// Front ends run only secure parameter sets.
pub fn secure(p: &'static ParameterSet) -> Result<(), Error> {
    ParameterSet::for_front_end(p.name).map(drop)
}

/// A program file, on a secure parameter set.
pub fn load_program(path: &Path) -> Result<CompiledProgram, Error> {
    let prog = CompiledProgram::load(path)?;
    secure(prog.circuit().params().params())?;
    Ok(prog)
}

/// Bytes in MiB.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 20) as f64
}

/// Prints a program's signature and cost (#PBS, depth, level widths,
/// memory for `threads` threads).
pub fn describe_program(prog: &CompiledProgram, threads: Option<usize>) {
    let st = prog.circuit().stats();
    let sig = prog.signature();
    println!("parameters:  {}", prog.circuit().params().params().name);
    for p in &sig.inputs {
        println!("input:       {p}");
    }
    for p in &sig.outputs {
        println!("output:      {p}");
    }
    println!(
        "cost:        {} PBS, depth {}, widest level {}, peak {} ciphertexts alive",
        st.pbs,
        st.depth,
        st.max_width(),
        st.peak_live
    );
    let widths: Vec<String> = st.width_per_level.iter().map(usize::to_string).collect();
    println!("levels:      [{}]", widths.join(", "));
    let threads = threads.unwrap_or_else(|| hearth::backend::default_threads().unwrap_or(1));
    println!(
        "memory:      {:.0} MiB estimated on {threads} threads",
        mib(prog.memory_estimate(threads))
    );
}

/// Prints a bundle's key, parameters and entries.
pub fn describe_bundle(b: &Bundle) {
    let sig = b.signature();
    println!("values:      {} entries", sig.len());
    for p in &sig {
        println!("entry:       {p}");
    }
    if b.is_packed() {
        println!("packed:      yes (results for their owner to decrypt; not a program's input)");
    }
}

/// A file's length in bytes (0 if it cannot be read).
pub fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}
