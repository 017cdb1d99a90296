//! `hearth bench kernels`: the CSA paper's kernels (16-bit dot products of
//! 16 / 32 / 64 elements, 5x5 and 7x7 convolutions) as whole circuits:
//! #PBS and depth on the count backend, time on the cpu backend, and in
//! the same run tfhe-rs `FheUint16` computing the same dot product its
//! fastest way (all products in parallel, then a parallel sum).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::ValueEnum;
use hearth::api::{CompiledProgram, Program, U16};
use hearth::backend::CpuBackend;
use hearth::kernels::{self, ConvOrder, Padding, Tensor, Weights};
use hearth::{ClientKey, Error, ParameterSet, DIGITS_128, GATES_128};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::json;
use tfhe::prelude::*;
use tfhe::FheUint16;

use crate::report::{emit, ms, Table};
use hearth_cli::progress::{cpu_with_bar, generate, pbs_bar};

/// One benchmark case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Case {
    Dot16,
    Dot32,
    Dot64,
    Conv5,
    Conv7,
}

impl Case {
    const ALL: [Case; 5] = [
        Case::Dot16,
        Case::Dot32,
        Case::Dot64,
        Case::Conv5,
        Case::Conv7,
    ];

    fn name(self) -> String {
        match self {
            Case::Dot16 | Case::Dot32 | Case::Dot64 => format!("dot16 x{}", self.elements()),
            Case::Conv5 | Case::Conv7 => {
                let k = self.kernel();
                format!("conv {k}x{k} on 8x8")
            }
        }
    }

    fn elements(self) -> usize {
        match self {
            Case::Dot16 => 16,
            Case::Dot32 => 32,
            Case::Dot64 => 64,
            Case::Conv5 | Case::Conv7 => 64,
        }
    }

    fn kernel(self) -> usize {
        match self {
            Case::Conv7 => 7,
            _ => 5,
        }
    }

    fn is_dot(self) -> bool {
        matches!(self, Case::Dot16 | Case::Dot32 | Case::Dot64)
    }
}

/// Encrypted weights, or clear ones (a model the server holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Encrypted,
    Clear,
}

/// `build` on a fresh program on `params`, planned for `threads`.
fn compile(
    params: &'static ParameterSet,
    threads: usize,
    build: impl FnOnce(&Program) -> Result<(), Error>,
) -> Result<CompiledProgram, Error> {
    let p = Program::new(params);
    p.set_threads(threads);
    build(&p)?;
    p.build()
}

/// The case on 16-bit words (wrapping, as `FheUint16`): inputs first, then
/// encrypted weights; `w` are the clear weights when `form` is clear.
fn words_program(
    case: Case,
    form: Form,
    w: &[i64],
    threads: usize,
) -> Result<CompiledProgram, Error> {
    compile(&GATES_128, threads, |p| build(p, case, form, w, U16::input))
}

/// The same on exact 16-digit `Int`s (DIGITS_128).
fn ints_program(
    case: Case,
    form: Form,
    w: &[i64],
    threads: usize,
) -> Result<CompiledProgram, Error> {
    compile(&DIGITS_128, threads, |p| {
        build(p, case, form, w, |p| p.input(16))
    })
}

fn build<'p, E: kernels::Element<'p>>(
    p: &'p Program,
    case: Case,
    form: Form,
    w: &[i64],
    input: impl Fn(&'p Program) -> E,
) -> Result<(), Error> {
    let n = case.elements();
    let x = Tensor::new(&[n], (0..n).map(|_| input(p)).collect())?;
    let outs = if case.is_dot() {
        let y = match form {
            Form::Encrypted => {
                let y = Tensor::new(&[n], (0..n).map(|_| input(p)).collect())?;
                kernels::dot(p, &x, &y)?
            }
            Form::Clear => {
                kernels::dot_clear(p, &x, &Tensor::from_i64(&[n], w)?, &BigInt::from(0))?
            }
        };
        vec![y]
    } else {
        let k = case.kernel();
        let x = x.reshape(&[1, 8, 8])?;
        let enc;
        let clear;
        let weights = match form {
            Form::Encrypted => {
                enc = Tensor::new(&[1, 1, k, k], (0..k * k).map(|_| input(p)).collect())?;
                Weights::Encrypted(&enc)
            }
            Form::Clear => {
                clear = Tensor::from_i64(&[1, 1, k, k], w)?;
                Weights::Clear(&clear)
            }
        };
        kernels::conv2d(p, &x, &weights, None, 1, Padding(0), ConvOrder::PerOutput)?.into_data()
    };
    for o in &outs {
        p.output(o);
    }
    Ok(())
}

/// Clear weights of the case: 8-bit signed, fixed seed.
fn clear_weights(case: Case) -> Vec<i64> {
    let n = if case.is_dot() {
        case.elements()
    } else {
        case.kernel().pow(2)
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    (0..n).map(|_| rng.gen_range(-127..=127)).collect()
}

pub fn kernels(
    engine: Option<hearth_cli::options::Engine>,
    threads: usize,
    cases: &[Case],
    json: Option<PathBuf>,
) -> Result<(), Error> {
    let cases = if cases.is_empty() {
        &Case::ALL[..]
    } else {
        cases
    };
    let mut t = Table::new(
        format!("Kernels on the count backend, planned for {threads} threads"),
        &[
            "kernel",
            "weights",
            "family",
            "#PBS",
            "depth",
            "peak live ciphertexts",
        ],
    );
    let mut rows = Vec::new();
    for &case in cases {
        for form in [Form::Encrypted, Form::Clear] {
            let w = clear_weights(case);
            for (family, prog) in [
                (
                    "U16 words (GATES_128)",
                    words_program(case, form, &w, threads)?,
                ),
                (
                    "Int 16 digits (DIGITS_128)",
                    ints_program(case, form, &w, threads)?,
                ),
            ] {
                let st = prog.circuit().stats();
                t.row(vec![
                    case.name(),
                    format!("{form:?}").to_lowercase(),
                    family.into(),
                    st.pbs.to_string(),
                    st.depth.to_string(),
                    st.peak_live.to_string(),
                ]);
                rows.push(
                    json!({"kernel": case.name(), "weights": format!("{form:?}").to_lowercase(),
                    "family": family, "pbs": st.pbs, "depth": st.depth, "peak_live": st.peak_live}),
                );
            }
        }
    }
    t.note(
        "Words wrap to 16 bits like FheUint16; Ints are exact (the sum of 16-bit products needs 32+ \
         digits). Clear weights are 8-bit signed (seed 3): shifted copies of the inputs, no product \
         bootstraps. Convolutions: one input channel, valid padding, stride 1.",
    );
    let mut tables = vec![t];
    let mut timed = Vec::new();
    if let Some(engine) = engine {
        let (t, r) = encrypted(engine, threads, cases)?;
        tables.push(t);
        timed = r;
    }
    emit(
        json.as_deref(),
        &json!({"threads": threads, "count": rows, "encrypted": timed}),
        &tables,
    )
}

/// Runs each case on words (GATES_128) and, for the dot products, tfhe-rs
/// `FheUint16` in the same process on the same thread count (with `engine`
/// gpu: hearth's gpu backend beside tfhe-rs's CUDA integer API).
fn encrypted(
    engine: hearth_cli::options::Engine,
    threads: usize,
    cases: &[Case],
) -> Result<(Table, Vec<serde_json::Value>), Error> {
    let (client, server) = generate(&GATES_128);
    let (tck, pool) = crate::tfhe::tfhe_pool(threads, engine)?;
    // The key goes to the GPU once, for every case.
    let gpu = hearth_cli::backend::gpu_only(engine, &server)?;
    let mut t = Table::new(
        format!(
            "Kernels encrypted on {}: hearth U16 words (GATES_128) beside tfhe-rs FheUint16 on the \
             {engine:?} (default parameters)",
            match &gpu {
                Some(g) => g.describe(),
                None => format!("cpu, {threads} threads"),
            }
        ),
        &[
            "kernel",
            "weights",
            "#PBS",
            "PBS (ms)",
            "hearth (ms)",
            "bound (ms)",
            "efficiency",
            "peak MiB",
            "tfhe-rs (ms)",
            "ratio",
        ],
    );
    let mut rows = Vec::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let runs = cases.iter().flat_map(|&c| {
        // Both forms for the dot products (the CSA paper's case has
        // encrypted weights), clear filters for the convolutions.
        let forms: &[Form] = if c.is_dot() {
            &[Form::Encrypted, Form::Clear]
        } else {
            &[Form::Clear]
        };
        forms.iter().map(move |&f| (c, f))
    });
    for (case, form) in runs {
        let w = clear_weights(case);
        let prog = words_program(case, form, &w, threads)?;
        let pbs = prog.circuit().stats().pbs;
        let n = case.elements();
        let xs: Vec<u16> = (0..n).map(|_| rng.gen()).collect();
        let ys: Vec<u16> = (0..if form == Form::Encrypted { n } else { 0 })
            .map(|_| rng.gen())
            .collect();
        let mut ins = Vec::new();
        for &v in xs.iter().chain(&ys) {
            ins.push(client.encrypt_word(v)?);
        }
        let start = Instant::now();
        let (out, peak_live) = match &gpu {
            Some(gpu) => (
                prog.run_encrypted(gpu, &ins)?,
                prog.circuit().stats().peak_live,
            ),
            None => {
                let bar = pbs_bar(pbs);
                bar.set_message(format!("hearth {}", case.name()));
                let cpu = cpu_with_bar(&server, threads, &bar)?;
                let (out, report) = prog.run_encrypted_report(&cpu, &ins)?;
                bar.finish_and_clear();
                (out, report.peak_live)
            }
        };
        let ours = start.elapsed();
        let got: Vec<u16> = out
            .iter()
            .map(|o| client.decrypt_word(o))
            .collect::<Result<_, _>>()?;
        let want = reference(case, &xs, &ys, &w);
        if got != want {
            return Err(Error::Config(format!(
                "{}: hearth gave {got:?}, expected {want:?}",
                case.name()
            )));
        }
        // One KS-PBS measured just before this case (the machine drifts);
        // the bound is the CPU's (#PBS spread over its threads).
        let single = single_pbs(&client, &server)?;
        let bound = single.mul_f64(pbs as f64 / threads as f64);
        let peak_mib =
            peak_live as f64 * client.params().ciphertext_bytes() as f64 / (1 << 20) as f64;
        let theirs = if case.is_dot() {
            let (d, v) = pool.install(|| tfhe_dot(&xs, &ys, &w, &tck));
            if v != want[0] {
                return Err(Error::Config(format!(
                    "{}: tfhe-rs gave {v}, expected {}",
                    case.name(),
                    want[0]
                )));
            }
            Some(d)
        } else {
            None
        };
        let ratio = theirs.map(|d| ours.as_secs_f64() / d.as_secs_f64());
        t.row(vec![
            case.name(),
            format!("{form:?}").to_lowercase(),
            pbs.to_string(),
            ms(single),
            ms(ours),
            ms(bound),
            format!("{:.2}", ours.as_secs_f64() / bound.as_secs_f64()),
            format!("{peak_mib:.0}"),
            theirs.map_or("-".into(), ms),
            ratio.map_or("-".into(), |r| format!("{r:.2}")),
        ]);
        rows.push(
            json!({"kernel": case.name(), "weights": format!("{form:?}").to_lowercase(), "pbs": pbs,
            "single_pbs_ms": single.as_secs_f64() * 1e3, "hearth_ms": ours.as_secs_f64() * 1e3, "bound_ms": bound.as_secs_f64() * 1e3,
            "peak_live": peak_live, "peak_mib": peak_mib, "engine": format!("{engine:?}").to_lowercase(),
            "tfhe_rs_ms": theirs.map(|d| d.as_secs_f64() * 1e3), "ratio": ratio}),
        );
    }
    t.note(
        "bound = #PBS x one KS-PBS (column PBS: measured on one thread just before each case) / \
         threads (with the gpu too: the CPU's bound, for scale); efficiency = time / bound. \
         peak MiB = most ciphertexts alive at once x one ciphertext. tfhe-rs: all FheUint16 products in \
         parallel (par_iter; by a clear u16 for clear weights), then a parallel tree sum; one run each, \
         results checked."
    );
    Ok((t, rows))
}

/// One KS-PBS on one thread, median of 20.
fn single_pbs(client: &ClientKey, server: &hearth::ServerKey) -> Result<Duration, Error> {
    let p = Program::new(&GATES_128);
    let x = U16::input(&p);
    let y = U16::input(&p);
    p.output(&x.eq(&y));
    let prog = p.build()?;
    let pbs = prog.circuit().stats().pbs.max(1);
    let cpu = CpuBackend::new(server, Some(1))?;
    let ins = [client.encrypt_word(3u16)?, client.encrypt_word(5u16)?];
    let mut times: Vec<Duration> = (0..20)
        .map(|_| {
            let s = Instant::now();
            prog.run_encrypted(&cpu, &ins)
                .map(|_| s.elapsed() / pbs as u32)
        })
        .collect::<Result<_, _>>()?;
    times.sort();
    Ok(times[times.len() / 2])
}

/// The clear result: wrapping 16-bit arithmetic, like `FheUint16`.
fn reference(case: Case, xs: &[u16], ys: &[u16], w: &[i64]) -> Vec<u16> {
    if case.is_dot() {
        let ys: Vec<u16> = if ys.is_empty() {
            w.iter().map(|&k| k as u16).collect()
        } else {
            ys.to_vec()
        };
        return vec![xs
            .iter()
            .zip(&ys)
            .fold(0u16, |a, (&x, &y)| a.wrapping_add(x.wrapping_mul(y)))];
    }
    let k = case.kernel();
    let o = 8 - k + 1;
    let mut out = Vec::new();
    for i in 0..o {
        for j in 0..o {
            let mut s = 0u16;
            for a in 0..k {
                for b in 0..k {
                    s = s.wrapping_add(xs[(i + a) * 8 + j + b].wrapping_mul(w[a * k + b] as u16));
                }
            }
            out.push(s);
        }
    }
    out
}

/// tfhe-rs's dot product: every product in parallel (by the encrypted `ys`,
/// or by the clear weights `w` when `ys` is empty), then a tree sum.
fn tfhe_dot(xs: &[u16], ys: &[u16], w: &[i64], ck: &tfhe::ClientKey) -> (Duration, u16) {
    let a: Vec<FheUint16> = xs.iter().map(|&v| FheUint16::encrypt(v, ck)).collect();
    let b: Vec<FheUint16> = ys.iter().map(|&v| FheUint16::encrypt(v, ck)).collect();
    let start = Instant::now();
    let mut level: Vec<FheUint16> = if b.is_empty() {
        a.par_iter()
            .zip(w.par_iter())
            .map(|(x, &k)| x * (k as u16))
            .collect()
    } else {
        a.par_iter().zip(b.par_iter()).map(|(x, y)| x * y).collect()
    };
    while level.len() > 1 {
        level = level
            .par_chunks(2)
            .map(|c| {
                if c.len() == 2 {
                    &c[0] + &c[1]
                } else {
                    c[0].clone()
                }
            })
            .collect();
    }
    let d = start.elapsed();
    let v: u16 = level[0].decrypt(ck);
    (d, v)
}
