//! The kernels on words (GATES_128) encrypted and timed, the dot products
//! beside tfhe-rs's `FheUint16` on the same threads (feature `tfhe-rs`).

use std::time::{Duration, Instant};

use hearth::backend::CpuBackend;
use hearth::ClientKey;
use hearth_cli::progress::{cpu_with_bar, generate, pbs_bar};
use rayon::prelude::*;

use super::*;
use crate::report::ms;
use tfhe::prelude::*;
use tfhe::FheUint16;

/// Runs each case on words (GATES_128) and, for the dot products, tfhe-rs
/// `FheUint16` in the same process on the same thread count (with `engine`
/// gpu: hearth's gpu backend beside tfhe-rs's CUDA integer API).
pub(super) fn encrypted(
    engine: hearth::backend::Engine,
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
