//! The deployment commands: `hearth encrypt` (client key, program and
//! clear values to a bundle), `hearth run` (server key, program and
//! bundle to a bundle), `hearth decrypt` (client key and bundle to clear
//! values) and `hearth inspect` (a program's signature and cost). The
//! server side never sees the client key.

use std::path::{Path, PathBuf};
use std::time::Instant;

use hearth::{
    Bundle, ClientKey, CompiledProgram, Error, FileError, ParameterSet, ServerKey, ServerKeySizes,
};

use crate::keygen::pbs_bar;
use crate::options::Threads;

/// `NAME=FILE` of `--input`.
pub fn parse_named_file(s: &str) -> Result<(String, PathBuf), String> {
    let (name, file) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=FILE, found {s:?}"))?;
    if name.is_empty() || file.is_empty() {
        return Err(format!("expected NAME=FILE, found {s:?}"));
    }
    Ok((name.to_string(), PathBuf::from(file)))
}

/// A size: bytes, or with a unit (`KiB`, `MiB`, `GiB`, `TiB`; `K`, `M`,
/// `G`, `T` mean the same).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 8GiB, 512MiB, 1000000)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        "t" | "tib" => 40,
        other => return Err(format!("unknown size unit {other:?} (KiB, MiB, GiB, TiB)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Front ends run only secure parameter sets.
fn secure(p: &'static ParameterSet) -> Result<(), Error> {
    ParameterSet::for_front_end(p.name).map(drop)
}

fn load_program(path: &Path) -> Result<CompiledProgram, Error> {
    let prog = CompiledProgram::load(path)?;
    secure(prog.circuit().params().params())?;
    Ok(prog)
}

fn mib(bytes: u64) -> f64 {
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
    println!("values:      {} entries", b.entries().len());
    for e in b.entries() {
        println!("entry:       {}", e.param);
    }
}

/// `hearth inspect`.
pub fn inspect(program: &Path, threads: Threads) -> Result<(), Error> {
    let prog = CompiledProgram::load(program)?;
    println!("program:     {}", program.display());
    describe_program(&prog, threads.get());
    Ok(())
}

/// `hearth encrypt`.
pub fn encrypt(
    key: &Path,
    program: &Path,
    values: Option<&Path>,
    inputs: &[(String, PathBuf)],
    out: &Path,
) -> Result<(), Error> {
    let client = ClientKey::load(key)?;
    secure(client.params())?;
    let prog = load_program(program)?;
    let sig = &prog.signature().inputs;
    let clear = crate::values::read_inputs(sig, values, inputs)?;
    let bundle = client.encrypt_bundle(sig, &clear)?;
    prog.check_bundle(&bundle)?;
    bundle.save(out)?;
    println!(
        "{} values of {} inputs encrypted under key {} to {} ({} bytes)",
        clear.iter().map(Vec::len).sum::<usize>(),
        sig.len(),
        client.key_id(),
        out.display(),
        file_len(out)
    );
    Ok(())
}

/// `hearth run`: the bundle checked against the program and the key, the
/// memory estimate against `memory_limit`, then the run with a progress
/// bar.
pub fn run(
    server_key: &Path,
    program: &Path,
    bundle: &Path,
    out: &Path,
    threads: Threads,
    backend: crate::engine::Engine,
    memory_limit: Option<u64>,
) -> Result<(), Error> {
    let prog = load_program(program)?;
    let input = Bundle::load(bundle)?;
    prog.check_bundle(&input)?;
    let server = ServerKey::load(server_key)?;
    if server.key_id() != input.key_id() {
        return Err(Error::WrongKey {
            expected: server.key_id(),
            found: input.key_id(),
        });
    }
    let threads = threads.resolve()?;
    // The keys in memory: the standard-domain key and the bootstrap key
    // again in the Fourier domain (the same size).
    let sizes = ServerKeySizes::of(server.params());
    let keys = sizes.decompressed() + sizes.bootstrap;
    let run = prog.memory_estimate(threads);
    if let Some(limit) = memory_limit {
        if keys + run > limit {
            return Err(Error::TooLarge {
                what: format!(
                    "the run's estimated memory (bytes: keys {keys}, ciphertexts and accumulators {run}; \
                     raise --memory-limit or split the work)"
                ),
                size: keys + run,
                limit,
            });
        }
    }
    let st = prog.circuit().stats();
    eprintln!(
        "{}: {} PBS, depth {}, estimated memory {:.0} MiB (keys {:.0} MiB)",
        program.display(),
        st.pbs,
        st.depth,
        mib(keys + run),
        mib(keys)
    );
    let start = Instant::now();
    let result = match crate::engine::gpu_only(backend, &server)? {
        Some(gpu) => prog.run_bundle(&gpu, &input)?,
        None => {
            let bar = pbs_bar(st.pbs);
            let engine = match backend {
                crate::engine::Engine::Gpu => crate::engine::Engine::Cpu,
                other => other,
            };
            let ev = crate::engine::with_bar(
                engine,
                &server,
                Some(server_key),
                Some(threads),
                Some(&bar),
            )?;
            let r = prog.run_bundle(&ev, &input)?;
            bar.finish_and_clear();
            r
        }
    };
    let secs = start.elapsed().as_secs_f64();
    result.save(out)?;
    println!(
        "ran {} PBS in {secs:.1} s ({:.0} PBS/s); {} written ({} bytes)",
        st.pbs,
        st.pbs as f64 / secs.max(1e-9),
        out.display(),
        file_len(out)
    );
    Ok(())
}

/// Where `hearth decrypt` writes.
pub enum DecryptOut {
    /// Stdout, JSON.
    Stdout,
    /// One JSON file.
    Json(PathBuf),
    /// One `.npy` or `.csv` file per entry in a folder.
    Tables(PathBuf, &'static str),
}

/// `hearth decrypt`.
pub fn decrypt(key: &Path, bundle: &Path, out: DecryptOut) -> Result<(), Error> {
    let client = ClientKey::load(key)?;
    let b = Bundle::load(bundle)?;
    let entries = client.decrypt_bundle(&b)?;
    match out {
        DecryptOut::Stdout => {
            println!("{}", crate::values::to_json_object(&entries));
        }
        DecryptOut::Json(path) => {
            let text = serde_json::to_string_pretty(&crate::values::to_json_object(&entries))
                .map_err(|e| Error::Config(e.to_string()))?;
            std::fs::write(&path, text + "\n").map_err(|source| FileError::Io {
                path: path.clone(),
                source,
            })?;
            eprintln!("{} entries written to {}", entries.len(), path.display());
        }
        DecryptOut::Tables(dir, ext) => {
            for f in crate::values::write_tables(&dir, ext, &entries)? {
                eprintln!("wrote {}", f.display());
            }
        }
    }
    Ok(())
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_named_files_parse() {
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("8 parsecs").is_err());
        assert!(parse_size("99999999999TiB").is_err());
        assert_eq!(
            parse_named_file("x=a.npy"),
            Ok(("x".into(), PathBuf::from("a.npy")))
        );
        assert!(parse_named_file("x").is_err());
        assert!(parse_named_file("=a").is_err());
    }
}
