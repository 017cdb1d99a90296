//! `hearth-bench pke --noise N`: public-key inputs through bootstraps at
//! the full budget. Every bootstrap reads a linear combination of fresh
//! public-key ciphertexts (each used once) whose integer weights square
//! to the set's dense budget (`budgets.half`), plus a clear constant,
//! through the negacyclic identity table, on the cpu backend; the circuit
//! is built by the `CircuitBuilder`, so its budget check passes on every
//! bootstrap. Measured: the error of every fresh public-key ciphertext
//! (`ClientKey::phase_error`), the error at the blind-rotation input of
//! one bootstrap in [`INPUT_EVERY`], and the error and decryption of every
//! output.

use std::sync::Arc;
use std::time::Instant;

use hearth::backend::{Backend, CpuBackend};
use hearth::crypto::noise::NoiseModel;
use hearth::crypto::public_key::public_key_variance;
use hearth::{Ciphertext, CircuitBuilder, ClientKey, Error, Lut, PublicKey, ServerKey, Wire};
use hearth_cli::progress::steps;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::json;
use tfhe::core_crypto::prelude::{CiphertextModulus, LweCiphertext};

use super::{command_line, distribution, Options};
use crate::report::{write_out, Table};

/// Bootstraps per circuit (and per compact list of inputs).
const ROUND: usize = 256;

/// One bootstrap in this many also has its blind-rotation input's error
/// computed here (a key switch more: about a quarter of a KS-PBS).
pub const INPUT_EVERY: usize = 4;

/// What [`measure`] observed, beside the model.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    /// The parameter set's name.
    pub params: &'static str,
    /// Bootstraps run.
    pub bootstraps: usize,
    /// Quadratic weight of every bootstrap input: the set's dense budget.
    pub quadratic_weight: u64,
    /// Public-key ciphertexts encrypted (one per term).
    pub inputs: usize,
    /// Mean number of terms per bootstrap input.
    pub terms_mean: f64,
    /// The largest |weight| drawn.
    pub largest_weight: i64,
    /// Fresh public-key ciphertexts that decrypted to another digit.
    pub wrong_inputs: usize,
    /// Bootstrap outputs that decrypted to another digit.
    pub wrong: usize,
    /// Standard deviation of a fresh public-key ciphertext's error, torus
    /// units (fractions of the modulus).
    pub pk_std_measured: f64,
    /// `sqrt(public_key_variance)`.
    pub pk_std_model: f64,
    /// Mean of that error, torus units.
    pub pk_mean_measured: f64,
    /// Full chunks of `k N` ciphertexts of a compact list (one mask, one
    /// binary vector `r` and one mask noise `e1` each) among the inputs.
    pub pk_chunks: usize,
    /// The root mean square of a chunk's mean error, torus units: the part
    /// of the errors its ciphertexts share (`std / sqrt(k N)` were they
    /// independent).
    pub pk_chunk_mean_rms: f64,
    /// Bootstraps whose blind-rotation input error was measured.
    pub input_samples: usize,
    /// Standard deviation at the blind-rotation input, measured.
    pub input_std_measured: f64,
    /// Its model for these inputs: `qw * V_pk + V_ks + V_ms`.
    pub input_std_model: f64,
    /// What the budget assumes (inputs as noisy as a bootstrap's output):
    /// `qw * V_pbs + V_ks + V_ms`.
    pub input_std_budget: f64,
    /// Mean error at the blind-rotation input, torus units.
    pub input_mean_measured: f64,
    /// Standard deviation of a bootstrap output's error, measured.
    pub pbs_std_measured: f64,
    /// tfhe-rs's formula for it.
    pub pbs_std_model: f64,
    /// Wall-clock time.
    pub seconds: f64,
}

/// Integer weights, each nonzero, whose squares add up to exactly `qw`:
/// each drawn uniformly up to the largest that still fits.
fn weights(rng: &mut impl Rng, qw: u64) -> Vec<i64> {
    let mut rest = qw;
    let mut ws = Vec::new();
    while rest > 0 {
        let mut top = (rest as f64).sqrt() as u64;
        while top * top > rest {
            top -= 1;
        }
        while (top + 1) * (top + 1) <= rest {
            top += 1;
        }
        let w = rng.gen_range(1..=top);
        rest -= w * w;
        ws.push(if rng.gen_bool(0.5) {
            w as i64
        } else {
            -(w as i64)
        });
    }
    ws
}

/// Sums of a sample: count, sum, sum of squares.
#[derive(Default)]
struct Moments {
    n: usize,
    sum: f64,
    sq: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        self.sq += x * x;
    }

    fn mean(&self) -> f64 {
        self.sum / self.n.max(1) as f64
    }

    /// The standard deviation about the mean.
    fn std(&self) -> f64 {
        let m = self.mean();
        (self.sq / self.n.max(1) as f64 - m * m).max(0.0).sqrt()
    }

    /// The root mean square (about zero: the error's size).
    fn rms(&self) -> f64 {
        (self.sq / self.n.max(1) as f64).sqrt()
    }
}

/// One bootstrap of a round: its weights, constant and input digits.
struct Plan {
    weights: Vec<i64>,
    constant: i64,
    first_input: usize,
}

/// Runs `count` bootstraps of public-key inputs at the full budget of
/// `server`'s set on the cpu backend over `pool`, `progress` told the
/// bootstraps done.
pub fn measure(
    client: &ClientKey,
    server: &ServerKey,
    public: &PublicKey,
    pool: Arc<rayon::ThreadPool>,
    count: usize,
    seed: u64,
    progress: &dyn Fn(usize),
) -> Result<Report, Error> {
    let start = Instant::now();
    let p = server.params();
    if client.key_id() != server.key_id() || public.key_id() != client.key_id() {
        return Err(Error::WrongKey {
            expected: server.key_id(),
            found: public.key_id(),
        });
    }
    let qw = p.budgets.half;
    if qw == 0 {
        return Err(Error::Config(format!(
            "{} has no budget for dense selectors (margin 1/2)",
            p.name
        )));
    }
    let m = p.message_modulus();
    let two_n = 2 * p.polynomial_size.0 as u64;
    let step = two_n / m;
    let lut = Lut::negacyclic(p.pi, |x| x)?;
    let backend = CpuBackend::with_pool(server, pool.clone());
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let (mut pk, mut input, mut out) = (Moments::default(), Moments::default(), Moments::default());
    let mut chunk_means = Moments::default();
    let chunk = p.big_lwe_dimension().0;
    let (mut wrong, mut wrong_inputs, mut inputs, mut largest) = (0, 0, 0, 0i64);
    let mut done = 0;
    while done < count {
        let round = (count - done).min(ROUND);
        let mut plans = Vec::with_capacity(round);
        let mut digits: Vec<i64> = Vec::new();
        for _ in 0..round {
            let ws = weights(&mut rng, qw);
            largest = largest.max(ws.iter().map(|w| w.abs()).max().unwrap_or(0));
            let first_input = digits.len();
            digits.extend((0..ws.len()).map(|_| rng.gen_range(0..m as i64)));
            plans.push(Plan {
                weights: ws,
                constant: rng.gen_range(0..m as i64),
                first_input,
            });
        }
        // The inputs: one compact list, expanded as a server would.
        let cts = public
            .encrypt_list(&digits)?
            .expand(p.id, public.key_id())?;
        let mut errors = Vec::with_capacity(cts.len());
        for (ct, &d) in cts.iter().zip(&digits) {
            if client.decrypt(ct)? != d as u64 {
                wrong_inputs += 1;
            }
            errors.push(client.phase_error(ct, d as u64)? as f64 / 2f64.powi(64));
        }
        for &e in &errors {
            pk.add(e);
        }
        for c in errors.chunks_exact(chunk) {
            chunk_means.add(c.iter().sum::<f64>() / chunk as f64);
        }
        inputs += cts.len();
        // The round's circuit, and what each output must decrypt to.
        let mut b = CircuitBuilder::new(p);
        let mut want = Vec::with_capacity(round);
        for plan in &plans {
            let mut terms: Vec<(Wire, i64)> = Vec::with_capacity(plan.weights.len());
            let mut x = plan.constant;
            for (j, &w) in plan.weights.iter().enumerate() {
                terms.push((b.input(0, m as i64 - 1)?, w));
                x += w * digits[plan.first_input + j];
            }
            let selector = b.linear(&terms, plan.constant)?;
            let y = b.bootstrap(selector, &lut)?;
            b.output(y)?;
            want.push(lut.eval(x.rem_euclid(m as i64)));
        }
        let circuit = b.build();
        let outputs = backend.evaluate(&circuit, &cts)?;
        if outputs.len() != round {
            return Err(Error::Internal(format!(
                "{} outputs for {round} bootstraps",
                outputs.len()
            )));
        }
        for (o, &w) in outputs.iter().zip(&want) {
            if client.decrypt(o)? != w {
                wrong += 1;
            }
            out.add(client.phase_error(o, w)? as f64 / 2f64.powi(64));
        }
        // The blind rotation's input error of every INPUT_EVERY-th
        // bootstrap: the combination, key-switched and modulus-switched
        // here, decrypted under the small key.
        let errors: Vec<f64> = pool.install(|| {
            plans
                .par_iter()
                .enumerate()
                .filter(|(k, _)| (done + k) % INPUT_EVERY == 0)
                .map(|(_, plan)| {
                    blind_rotation_error(client, server, &cts, &digits, plan, (two_n, step))
                })
                .collect()
        });
        for e in errors {
            input.add(e);
        }
        done += round;
        progress(done);
    }
    let model = NoiseModel::of(p);
    let v_pk = public_key_variance(p);
    Ok(Report {
        params: p.name,
        bootstraps: count,
        quadratic_weight: qw,
        inputs,
        terms_mean: inputs as f64 / count as f64,
        largest_weight: largest,
        wrong_inputs,
        wrong,
        pk_std_measured: pk.rms(),
        pk_std_model: v_pk.sqrt(),
        pk_mean_measured: pk.mean(),
        pk_chunks: chunk_means.n,
        pk_chunk_mean_rms: chunk_means.rms(),
        input_samples: input.n,
        input_std_measured: input.std(),
        input_std_model: (qw as f64 * v_pk + model.keyswitch + model.modulus_switch).sqrt(),
        input_std_budget: model.variance_at(qw as f64).sqrt(),
        input_mean_measured: input.mean(),
        pbs_std_measured: out.rms(),
        pbs_std_model: model.pbs.sqrt(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The error (torus units) the blind rotation sees for `plan`'s input.
fn blind_rotation_error(
    client: &ClientKey,
    server: &ServerKey,
    cts: &[Ciphertext],
    digits: &[i64],
    plan: &Plan,
    (two_n, step): (u64, u64),
) -> f64 {
    let p = server.params();
    let m = p.message_modulus() as i64;
    let mut acc = vec![0u64; p.big_lwe_dimension().0 + 1];
    let mut x = plan.constant;
    for (j, &w) in plan.weights.iter().enumerate() {
        let i = plan.first_input + j;
        for (a, &c) in acc.iter_mut().zip(cts[i].lwe().as_ref()) {
            *a = a.wrapping_add(c.wrapping_mul(w as u64));
        }
        x += w * digits[i];
    }
    let body = acc.last_mut().expect("a body");
    *body = body.wrapping_add((plan.constant as u64).wrapping_mul(p.delta()));
    let lwe = LweCiphertext::from_container(acc, CiphertextModulus::new_native());
    let phase = server.switched_phase(&lwe, client.small_key().as_ref());
    let x = x.rem_euclid(m) as u64;
    let e = (phase + two_n - x * step) % two_n;
    let e = if e >= two_n / 2 {
        e as f64 - two_n as f64
    } else {
        e as f64
    };
    e / two_n as f64
}

/// `hearth-bench pke --noise N`: the measurement, its table and files.
pub(super) fn noise(o: &Options, count: usize) -> Result<(), Error> {
    let p = o.params;
    let threads = o.threads.resolve()?;
    let bar = steps(3);
    bar.set_message(format!("{}: secret keys and the public key", p.name));
    let client = ClientKey::generate(p);
    let public = client.public_key()?;
    bar.inc(1);
    bar.set_message(format!("{}: bootstrap and key-switch keys", p.name));
    let server = client.server_key();
    bar.finish_and_clear();
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::Config(e.to_string()))?,
    );
    let bar = steps(count as u64);
    bar.set_message(format!(
        "bootstraps of public-key inputs at quadratic weight {}",
        p.budgets.half
    ));
    let progress = bar.clone();
    let r = measure(&client, &server, &public, pool, count, o.seed, &move |d| {
        progress.set_position(d as u64)
    })?;
    bar.finish_and_clear();
    let tables = [table(&r, threads)];
    let json = json!({
        "bench": "pke-noise",
        "command": command_line(),
        "threads": threads,
        "public_key_noise": distribution(p.glwe_noise),
        "public_key_dimension": p.big_lwe_dimension().0,
        "input_every": INPUT_EVERY,
        "seed": o.seed,
        "report": r,
    });
    let preamble = format!(
        "# Public-key inputs through bootstraps ({})\n\n`{}`\n",
        p.name,
        command_line()
    );
    write_out(
        &o.out,
        &format!("noise-{}", p.name),
        &preamble,
        &json,
        &tables,
    )?;
    if r.wrong > 0 || r.wrong_inputs > 0 {
        return Err(Error::Config(format!(
            "{} wrong bootstrap outputs, {} wrong public-key inputs",
            r.wrong, r.wrong_inputs
        )));
    }
    Ok(())
}

/// The report as a table.
fn table(r: &Report, threads: usize) -> Table {
    let p = hearth::ParameterSet::by_name(r.params).expect("a named set");
    let mut t = Table::new(
        format!(
            "{}: {} bootstraps of public-key inputs at quadratic weight {} (the budget), \
             cpu backend, {threads} threads",
            r.params, r.bootstraps, r.quadratic_weight
        ),
        &["quantity", "measured", "model"],
    );
    let log2 = |x: f64| format!("2^{:.2}", x.log2());
    t.row(vec![
        "wrong decryptions after the bootstrap".into(),
        r.wrong.to_string(),
        "0".into(),
    ]);
    t.row(vec![
        format!(
            "fresh public-key ciphertexts decrypted wrong (of {})",
            r.inputs
        ),
        r.wrong_inputs.to_string(),
        "0".into(),
    ]);
    t.row(vec![
        format!(
            "std (rms about 0) of a fresh public-key ciphertext's error ({} ciphertexts)",
            r.inputs
        ),
        log2(r.pk_std_measured),
        format!(
            "{} ((k N + 1) x Var({}))",
            log2(r.pk_std_model),
            distribution(p.glwe_noise)
        ),
    ]);
    t.row(vec![
        "mean of that error, in the model's std".into(),
        format!("{:+.4}", r.pk_mean_measured / r.pk_std_model),
        "0".into(),
    ]);
    t.row(vec![
        format!(
            "mean error of one list chunk of k N ciphertexts (shared r, e1), rms over {} chunks, \
             in the model's std",
            r.pk_chunks
        ),
        format!("{:.4}", r.pk_chunk_mean_rms / r.pk_std_model),
        format!(
            "{:.4} were the errors independent",
            1.0 / (p.big_lwe_dimension().0 as f64).sqrt()
        ),
    ]);
    t.row(vec![
        format!(
            "std at the blind-rotation input (1 bootstrap in {INPUT_EVERY}: {})",
            r.input_samples
        ),
        log2(r.input_std_measured),
        format!(
            "{} (qw x public key + KS + MS); the budget assumes {} (qw x PBS output + KS + MS)",
            log2(r.input_std_model),
            log2(r.input_std_budget)
        ),
    ]);
    t.row(vec![
        "mean at the blind-rotation input".into(),
        format!(
            "{:.3} / 2N",
            r.input_mean_measured * 2.0 * p.polynomial_size.0 as f64
        ),
        "-".into(),
    ]);
    t.row(vec![
        "std of a bootstrap output".into(),
        log2(r.pbs_std_measured),
        format!("{} (tfhe-rs formulas)", log2(r.pbs_std_model)),
    ]);
    // A Gaussian of this std at the blind-rotation input, margin half a
    // unit (dense selectors).
    let p_fail = |std: f64| {
        let m = NoiseModel {
            pbs: 0.0,
            keyswitch: std * std,
            modulus_switch: 0.0,
            packing: 0.0,
        };
        m.log2_p_fail(p.pi, 0.0)
    };
    t.row(vec![
        "log2 p_fail of one bootstrap at this weight".into(),
        format!(
            "{:.1} (from the measured std)",
            p_fail(r.input_std_measured)
        ),
        format!(
            "{:.1} (public-key inputs); {:.1} (the budget's inputs)",
            p_fail(r.input_std_model),
            p_fail(r.input_std_budget)
        ),
    ]);
    t.row(vec![
        "terms per bootstrap input (mean), largest |weight|".into(),
        format!("{:.2}, {}", r.terms_mean, r.largest_weight),
        "-".into(),
    ]);
    t.row(vec![
        "time (s)".into(),
        format!("{:.1}", r.seconds),
        "-".into(),
    ]);
    t
}
