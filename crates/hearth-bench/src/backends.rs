//! `hearth-bench backends`: the gpu backend (or, without one, the cpu
//! backend again) beside the cpu backend on the same keys and ciphertexts:
//! decrypted values of random circuits and of 32-bit operations, each
//! against the clear backend and plain Rust, and their times.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hearth::backend::Engine;
use hearth::backend::{Backend, ClearBackend, CpuBackend};
use hearth::{Ciphertext, Circuit, ClientKey, Error, ParameterSet, Program};
use hearth_cli::backend::evaluator;
use hearth_cli::progress::generate;
use hearth_testkit::circuits::random_circuit;
use serde_json::json;

use crate::report::{emit, Table};

/// Outputs of `circuit` on `backend`, decrypted, and the run's time.
fn timed<B: Backend<Digit = Ciphertext>>(
    backend: &B,
    client: &ClientKey,
    circuit: &Circuit,
    inputs: &[Ciphertext],
) -> Result<(Vec<u64>, Duration), Error> {
    let t = Instant::now();
    let out = backend.evaluate(circuit, inputs)?;
    let wall = t.elapsed();
    let dec = out
        .iter()
        .map(|c| client.decrypt(c))
        .collect::<Result<_, _>>()?;
    Ok((dec, wall))
}

/// The operands of [`ops32`]'s operations.
const OPERANDS: (i64, i64) = (1_234_567_891, -987_654_321);

/// 32-bit add, mul, max and lt on [`OPERANDS`] in `params`'s family: Ints
/// (exact) on digits sets, signed 32-bit words (wrapping) on bits sets:
/// (label, program, Rust's result).
fn ops32(
    params: &'static ParameterSet,
    threads: usize,
) -> Result<Vec<(String, hearth::CompiledProgram, i128)>, Error> {
    let (x, y) = (OPERANDS.0 as i128, OPERANDS.1 as i128);
    let wrap = |v: i128| v as i32 as i128;
    let ops = ["add", "mul", "max", "lt"];
    let ints = hearth::digits::check_params(params).is_ok();
    let mut out = Vec::new();
    for op in ops {
        let p = Program::new(params);
        p.set_threads(threads);
        let want = match op {
            "add" => x + y,
            "mul" => x * y,
            "max" => x.max(y),
            _ => (x < y) as i128,
        };
        let (kind, want) = if ints {
            let (a, b) = (p.input(32), p.input(32));
            p.output(&match op {
                "add" => &a + &b,
                "mul" => &a * &b,
                "max" => a.max(&b),
                _ => a.lt(&b),
            });
            ("Int", want)
        } else {
            let (a, b) = (I32W::input(&p), I32W::input(&p));
            match op {
                "add" => p.output(&(&a + &b)),
                "mul" => p.output(&(&a * &b)),
                "max" => p.output(&a.max(&b)),
                _ => p.output(&a.lt(&b)),
            }
            ("i32 word", wrap(want))
        };
        out.push((format!("{op}, 32 bits ({kind})"), p.build()?, want));
    }
    Ok(out)
}

/// A signed 32-bit word.
type I32W<'p> = hearth::api::Word<'p, 32, true>;

/// `hearth-bench backends`: the gpu backend (or, without one, the cpu
/// backend again) beside the cpu backend on the same keys and ciphertexts.
pub fn compare(
    params: &'static ParameterSet,
    threads: usize,
    bootstraps: usize,
    seed: u64,
    json: Option<PathBuf>,
) -> Result<(), Error> {
    let (client, server) = generate(params);
    let cpu = CpuBackend::new(&server, Some(threads))?;
    let other = evaluator(Engine::Gpu, &server, Some(threads))?;
    let mut t = Table::new(
        format!(
            "{}: {} beside cpu ({threads} threads), same keys and ciphertexts",
            params.name,
            other.describe()
        ),
        &[
            "circuit",
            "#PBS",
            "depth",
            "cpu (s)",
            "other (s)",
            "cpu / other",
            "wrong (cpu / other)",
        ],
    );
    let mut rows = Vec::new();
    let mut wrong_total = 0;
    let mut record = |label: String,
                      circuit: &Circuit,
                      inputs: &[Ciphertext],
                      want: &[u64]|
     -> Result<(), Error> {
        let (a, ta) = timed(&cpu, &client, circuit, inputs)?;
        let (b, tb) = timed(&other, &client, circuit, inputs)?;
        let wa = a.iter().zip(want).filter(|(x, y)| x != y).count();
        let wb = b.iter().zip(want).filter(|(x, y)| x != y).count();
        wrong_total += wa + wb;
        let st = circuit.stats();
        t.row(vec![
            label.clone(),
            st.pbs.to_string(),
            st.depth.to_string(),
            format!("{:.3}", ta.as_secs_f64()),
            format!("{:.3}", tb.as_secs_f64()),
            format!("{:.2}", ta.as_secs_f64() / tb.as_secs_f64()),
            format!("{wa} / {wb}"),
        ]);
        rows.push(json!({
            "circuit": label, "pbs": st.pbs, "depth": st.depth,
            "cpu_s": ta.as_secs_f64(), "other_s": tb.as_secs_f64(),
            "wrong_cpu": wa, "wrong_other": wb,
        }));
        Ok(())
    };
    // Random circuits of uneven level widths, 2 000 bootstraps each.
    let mut done = 0;
    let mut k = 0;
    while done < bootstraps {
        let size = (bootstraps - done).min(2000);
        let rc = random_circuit(params, seed + k, 16, size, 8)?;
        let inputs = rc.encrypt(&client)?;
        let want = ClearBackend.evaluate(&rc.circuit, &rc.inputs)?;
        record(
            format!("random, seed {}", seed + k),
            &rc.circuit,
            &inputs,
            &want,
        )?;
        done += size;
        k += 1;
    }
    // 32-bit operations of the set's family: Ints (digits) or signed words
    // (bits), each checked on the clear backend against Rust first.
    for (label, prog, want) in ops32(params, threads)? {
        let (x, y) = OPERANDS;
        let ins = match prog.input_shapes()[0] {
            hearth::Shape::Word { .. } => [
                client.encrypt_word_of(x, 32, true)?,
                client.encrypt_word_of(y, 32, true)?,
            ],
            _ => [client.encrypt_int(x, 32)?, client.encrypt_int(y, 32)?],
        };
        let clear = prog.run_clear(&[vec![x.into()], vec![y.into()]])?;
        if clear != [vec![want.into()]] {
            return Err(Error::Config(format!(
                "{label}: the clear backend gives {clear:?}, Rust {want}"
            )));
        }
        let flat: Vec<Ciphertext> = ins.iter().flat_map(|e| e.ciphertexts().to_vec()).collect();
        let clear_in: Vec<u64> = flat
            .iter()
            .map(|c| client.decrypt(c))
            .collect::<Result<_, _>>()?;
        let digits = ClearBackend.evaluate(prog.circuit(), &clear_in)?;
        record(label, prog.circuit(), &flat, &digits)?;
    }
    let value = json!({"bench": "backends", "params": params.name, "threads": threads, "other": other.describe(), "rows": rows});
    emit(json.as_deref(), &value, &[t])?;
    if wrong_total > 0 {
        return Err(Error::Config(format!(
            "{wrong_total} outputs differ from the clear backend"
        )));
    }
    Ok(())
}
