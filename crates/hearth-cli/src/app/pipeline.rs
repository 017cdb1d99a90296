//! Running an application: its inputs planned for the family, the
//! program compiled (or exported for `hearth encrypt`/`run`), run with a
//! progress bar, checked and written.

use super::Common;
use hearth::api::{CompiledProgram, Encrypted, Program, I32};
use hearth::backend::Engine;
use hearth::kernels::io::write_csv;
use hearth::kernels::Tensor;
use hearth::{ClientKey, Error, FileError, ParameterSet, DIGITS_128};
use hearth_cli::backend;
use hearth_cli::options::{Family, Format};
use hearth_cli::progress::{cpu_with_bar, generate, pbs_bar};
use num_bigint::BigInt;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

/// The family's inputs and how to make and encrypt one input value that
/// holds every value of `values`. Both families run on DIGITS_128, the one
/// key of `Int`s and words.
pub(super) struct Plan {
    pub(super) params: &'static ParameterSet,
    family: Family,
    digits: usize,
}

impl Plan {
    pub(super) fn new(family: Family, values: impl Iterator<Item = i64>) -> Result<Self, Error> {
        let max = values.map(|v| v.unsigned_abs()).max().unwrap_or(0);
        let digits = match family {
            Family::Int => (64 - max.leading_zeros() as usize).max(1),
            Family::Words if max > i32::MAX as u64 => {
                return Err(Error::Config(format!(
                    "an input of magnitude {max} does not fit i32"
                )));
            }
            Family::Words => 32,
        };
        Ok(Plan {
            params: &DIGITS_128,
            family,
            digits,
        })
    }

    pub(super) fn encrypt(&self, client: &ClientKey, v: i64) -> Result<Encrypted, Error> {
        match self.family {
            Family::Int => client.encrypt_int(v, self.digits),
            Family::Words => client.encrypt_word(v as i32),
        }
    }

    pub(super) fn decrypt(&self, client: &ClientKey, x: &Encrypted) -> Result<i64, Error> {
        match self.family {
            Family::Int => client.decrypt_i64(x),
            Family::Words => Ok(client.decrypt_word::<i32>(x)? as i64),
        }
    }
}

/// Builds `kernel` on encrypted inputs of `shape` in `plan`'s family.
pub(super) fn compile(
    plan: &Plan,
    threads: usize,
    shape: &[usize],
    kernel: &dyn Fn(&Program, Inputs<'_>) -> Result<(), Error>,
) -> Result<CompiledProgram, Error> {
    let p = Program::new(plan.params);
    p.set_threads(threads);
    {
        let n: usize = shape.iter().product();
        let inputs = match plan.family {
            Family::Int => Inputs::Ints(Tensor::new(
                shape,
                (0..n).map(|_| p.input(plan.digits)).collect(),
            )?),
            Family::Words => Inputs::Words(Tensor::new(
                shape,
                (0..n).map(|_| I32::input(&p)).collect(),
            )?),
        };
        kernel(&p, inputs)?;
    }
    p.build()
}

/// The encrypted inputs of either family.
pub(super) enum Inputs<'p> {
    Ints(Tensor<hearth::Int<'p>>),
    Words(Tensor<I32<'p>>),
}

/// Calls `$f` (generic over the element type) on the inputs.
macro_rules! each_family {
    ($inputs:expr, $f:ident, $p:expr $(, $arg:expr)*) => {
        match $inputs {
            $crate::app::pipeline::Inputs::Ints(x) => $f($p, &x $(, $arg)*),
            $crate::app::pipeline::Inputs::Words(x) => $f($p, &x $(, $arg)*),
        }
    };
}
pub(super) use each_family;

/// `--export DIR`: the program file, its inputs and the expected outputs
/// (each a JSON object of the signature's names, nested by its dims).
pub(super) fn export(
    dir: &Path,
    prog: &CompiledProgram,
    inputs: &[(&str, &[i64])],
    outputs: &[(&str, &[i64])],
) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| FileError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let write = |name: &str, params: &[hearth::Param], values: &[(&str, &[i64])]| {
        let entries: Vec<_> = params
            .iter()
            .zip(values)
            .map(|(p, (_, vs))| (p.clone(), vs.iter().map(|&v| BigInt::from(v)).collect()))
            .collect();
        let path = dir.join(name);
        crate::values::write_json(&path, &entries)?;
        Ok::<_, Error>(path)
    };
    let sig = prog.signature();
    let program = dir.join("program.hprog");
    prog.save(&program)?;
    let values = write("values.json", &sig.inputs, inputs)?;
    let expected = write("expected.json", &sig.outputs, outputs)?;
    let st = prog.circuit().stats();
    for f in [&program, &values, &expected] {
        let len = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        println!("wrote {} ({len} bytes)", f.display());
    }
    println!(
        "{}: {} PBS, depth {}; run it with `hearth encrypt --values {}`, `hearth run`, `hearth decrypt`",
        prog.circuit().params().params().name,
        st.pbs,
        st.depth,
        values.display()
    );
    Ok(())
}

/// Encrypts `values`, runs `prog`, decrypts its outputs; prints a summary.
pub(super) fn execute(
    prog: &CompiledProgram,
    plan: &Plan,
    values: &[i64],
    common: &Common,
) -> Result<Vec<i64>, Error> {
    let threads = common.threads.resolve()?;
    let st = prog.circuit().stats();
    let estimate = prog.memory_estimate(threads);
    eprintln!(
        "circuit: {} PBS, depth {}, widest level {}, estimated memory {:.0} MiB",
        st.pbs,
        st.depth,
        st.max_width(),
        estimate as f64 / (1 << 20) as f64
    );
    prog.check_memory(threads, common.max_memory.bytes())?;
    let (client, server) = generate(plan.params);
    let ins: Vec<Encrypted> = values
        .iter()
        .map(|&v| plan.encrypt(&client, v))
        .collect::<Result<_, _>>()?;
    let bar = pbs_bar(st.pbs);
    if let Some(gpu) = backend::gpu_only(common.backend.backend, &server)? {
        let start = Instant::now();
        let out = prog.run_encrypted(&gpu, &ins)?;
        eprintln!(
            "ran {} PBS on the gpu in {:.1} s",
            st.pbs,
            start.elapsed().as_secs_f64()
        );
        return out.iter().map(|o| plan.decrypt(&client, o)).collect();
    }
    if common.backend.backend == Engine::Mpi {
        let mpi = backend::with_bar(
            common.backend.backend,
            &server,
            None,
            Some(threads),
            Some(&bar),
        )?;
        let start = Instant::now();
        let out = prog.run_encrypted(&mpi, &ins)?;
        bar.finish_and_clear();
        eprintln!(
            "ran {} PBS on {} in {:.1} s",
            st.pbs,
            mpi.describe(),
            start.elapsed().as_secs_f64()
        );
        return out.iter().map(|o| plan.decrypt(&client, o)).collect();
    }
    let cpu = cpu_with_bar(&server, threads, &bar)?;
    let start = Instant::now();
    let (out, report) = prog.run_encrypted_report(&cpu, &ins)?;
    let wall = start.elapsed();
    bar.finish_and_clear();
    eprintln!(
        "ran {} PBS on {} threads in {:.1} s ({:.0} PBS/s), peak {} ciphertexts alive ({:.0} MiB)",
        report.pbs,
        threads,
        wall.as_secs_f64(),
        report.pbs as f64 / wall.as_secs_f64(),
        report.peak_live,
        (report.peak_live as u64 * plan.params.ciphertext_bytes()) as f64 / (1 << 20) as f64
    );
    out.iter().map(|o| plan.decrypt(&client, o)).collect()
}

/// Writes the results where `--out` asks, then fails unless every
/// decrypted `what` equals the clear model's.
pub(super) fn conclude(
    common: &Common,
    exact: bool,
    header: &[&str],
    table: &[Vec<i64>],
    summary: Value,
    what: &str,
) -> Result<(), Error> {
    if let Some(out) = &common.out {
        let format = common
            .format
            .or_else(|| Format::of_path(out))
            .unwrap_or(Format::Csv);
        write_results(out, format, header, table, summary)?;
    }
    if !exact {
        return Err(Error::Config(format!(
            "decrypted {what} differ from the clear model"
        )));
    }
    Ok(())
}

pub(super) fn write_results(
    out: &Path,
    format: Format,
    header: &[&str],
    rows: &[Vec<i64>],
    summary: Value,
) -> Result<(), Error> {
    if format == Format::Npy {
        return Err(Error::Config(
            "`hearth app --out` writes json or csv, not npy".into(),
        ));
    }
    if format == Format::Json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|r| {
                Value::Object(
                    header
                        .iter()
                        .zip(r)
                        .map(|(h, v)| (h.to_string(), json!(v)))
                        .collect(),
                )
            })
            .collect();
        let text = serde_json::to_string_pretty(&json!({"summary": summary, "rows": rows}))
            .map_err(|e| Error::Config(e.to_string()))?;
        std::fs::write(out, text).map_err(|source| FileError::Io {
            path: out.to_path_buf(),
            source,
        })?;
        Ok(())
    } else {
        write_csv(out, header, rows)
    }
}
