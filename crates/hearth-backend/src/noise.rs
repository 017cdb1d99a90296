//! Noise measured: bootstraps of a chosen quadratic weight run on a
//! backend, their errors decrypted and set beside what tfhe-rs's formulas
//! predict ([`crate::crypto::noise::NoiseModel`]). `hearth-bench noise` and
//! the GPU checklist use it; the model itself is the crypto layer's.

use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use tfhe::core_crypto::prelude::*;

use crate::circuit::{Circuit, FreshId, LinearExpr};
use crate::crypto::bootstrap::{accumulator, PbsScratch};
use crate::crypto::keys::{Ciphertext, ClientKey, ServerKey};
use crate::crypto::lut::Lut;
use crate::crypto::noise::NoiseModel;
use crate::crypto::params::Margin;
use crate::error::Error;
use crate::Backend;

/// What [`measure`] observed, beside what [`NoiseModel`] predicts.
#[derive(Clone, Debug, serde::Serialize)]
pub struct NoiseReport {
    /// The parameter set's name.
    pub params: &'static str,
    /// Bootstraps run.
    pub bootstraps: usize,
    /// Quadratic weight of every bootstrap input.
    pub quadratic_weight: u64,
    /// The margin the tables decode with, in units ("1/2", "1" or "2").
    pub margin: String,
    /// Bootstraps whose output decrypted to the wrong digit.
    pub wrong: usize,
    /// Standard deviations, in torus units (fractions of the modulus).
    pub pbs_std_measured: f64,
    /// Predicted by tfhe-rs's formulas.
    pub pbs_std_predicted: f64,
    /// At the blind-rotation input, measured.
    pub input_std_measured: f64,
    /// At the blind-rotation input, predicted.
    pub input_std_predicted: f64,
    /// Mean error at the blind-rotation input (the centered modulus switch
    /// shifts it by half a step of `1 / 2N`).
    pub input_mean_measured: f64,
    /// Wall-clock time.
    pub seconds: f64,
}

/// Runs `count` bootstraps whose inputs each combine `qw` distinct fresh
/// ciphertexts (bootstrap outputs) with weights +-1, so each input has
/// quadratic weight exactly `qw`. Every value is a multiple of
/// `margin.spacing()`, and each table decodes to the nearest such value:
/// the margin the budget for `margin` assumes. For every bootstrap it decrypts the
/// key-switched, modulus-switched input under the small key (the error the
/// blind rotation sees) and the output under the big key, and checks the
/// output digit. Work runs on the current rayon pool, in rounds of 256.
pub fn measure(
    client: &ClientKey,
    server: &ServerKey,
    qw: u64,
    margin: Margin,
    count: usize,
    seed: u64,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<NoiseReport, Error> {
    measure_on::<crate::Batched<crate::CpuBatch>>(
        client, server, None, qw, margin, count, seed, progress,
    )
}

/// [`measure`] with every round's bootstraps run on `backend` (the GPU's)
/// as one circuit of 4 096 independent bootstraps, where `None` runs them
/// here on tfhe-rs's CPU bootstrap. The errors at the blind-rotation input
/// are computed here either way (the key switch is exact integer
/// arithmetic, the same on every backend); the outputs' errors and
/// decryptions are the backend's.
#[allow(clippy::too_many_arguments)]
pub fn measure_on<B: Backend<Digit = Ciphertext>>(
    client: &ClientKey,
    server: &ServerKey,
    backend: Option<&B>,
    qw: u64,
    margin: Margin,
    count: usize,
    seed: u64,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<NoiseReport, Error> {
    let start = std::time::Instant::now();
    let p = server.params();
    if client.key_id() != server.key_id() {
        return Err(Error::WrongKey {
            expected: server.key_id(),
            found: client.key_id(),
        });
    }
    let m = p.message_modulus();
    let two_n = 2 * p.polynomial_size.0 as u64;
    let step = two_n / m;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let s = 1u64 << margin.log2_spacing().min(p.pi - 1);
    let table: Vec<i64> = (0..m / 2)
        .map(|_| s as i64 * rng.gen_range(0..(m / s) as i64))
        .collect();
    let lut = Lut::negacyclic(p.pi, |x| table[x as usize])?;
    // Each half-unit slot reads the nearest multiple of s (centres at
    // quarter units, so never a tie).
    let spread: Vec<u64> = (0..2 * m)
        .map(|j| {
            let nearest = ((2 * j + 1) as f64 / 4.0 / s as f64).round() as u64 * s;
            lut.eval((nearest % m) as i64)
        })
        .collect();
    let acc = accumulator(p, &spread);
    let fft = Fft::new(p.polynomial_size);
    let pool_size = (2 * qw as usize).max(64);
    // A pool of fresh ciphertexts with known digits: bootstraps of encryptions.
    let mut pool: Vec<(u64, LweCiphertextOwned<u64>)> = (0..pool_size)
        .into_par_iter()
        .map_init(
            || PbsScratch::new(p, fft.as_view()),
            |scratch, i| {
                let v = (i as u64 * 7 + 3) * s % m;
                let ct = client.encrypt(v as i64).expect("digit in range");
                scratch.input_mut().copy_from_slice(ct.lwe().as_ref());
                let mut out = [server.new_lwe()];
                server.bootstrap_input(scratch, &acc, &[0], fft.as_view(), &mut out);
                let [out] = out;
                (lut.eval(v as i64), out)
            },
        )
        .collect();
    let (mut wrong, mut done) = (0usize, 0usize);
    let (mut pbs_sq, mut in_sum, mut in_sq) = (0f64, 0f64, 0f64);
    let here = backend.is_none();
    let round_size = if here { 256 } else { 4096 };
    while done < count {
        let round = (count - done).min(round_size);
        // Plans: sources, signs and a constant per bootstrap of the round.
        let plans: Vec<(Vec<(usize, bool)>, u64)> = (0..round)
            .map(|_| {
                let idx = sample(&mut rng, pool.len(), qw as usize);
                let terms = idx.into_iter().map(|i| (i, rng.gen_bool(0.5))).collect();
                (terms, s * rng.gen_range(0..m / s))
            })
            .collect();
        let results: Vec<(u64, Option<LweCiphertextOwned<u64>>, f64)> = plans
            .par_iter()
            .map_init(
                || PbsScratch::new(p, fft.as_view()),
                |scratch, (terms, c)| {
                    let input = scratch.input_mut();
                    input.fill(0);
                    let mut x = *c;
                    for &(i, negative) in terms {
                        let (v, ct) = &pool[i];
                        for (o, &s) in input.iter_mut().zip(ct.as_ref()) {
                            *o = if negative {
                                o.wrapping_sub(s)
                            } else {
                                o.wrapping_add(s)
                            };
                        }
                        x = if negative {
                            (x + m - v) % m
                        } else {
                            (x + v) % m
                        };
                    }
                    let body = input.last_mut().expect("body");
                    *body = body.wrapping_add(c.wrapping_mul(p.delta()));
                    // Error at the blind-rotation input, in units of 1/2N.
                    let phase = server.switched_phase(scratch.input(), client.small_key().as_ref());
                    let e = (phase + two_n - x * step) % two_n;
                    let e = if e >= two_n / 2 {
                        e as f64 - two_n as f64
                    } else {
                        e as f64
                    };
                    let out = here.then(|| {
                        let mut out = [server.new_lwe()];
                        server.bootstrap_input(scratch, &acc, &[0], fft.as_view(), &mut out);
                        let [out] = out;
                        out
                    });
                    (lut.eval(x as i64), out, e / two_n as f64)
                },
            )
            .collect();
        let mut outputs = match backend {
            Some(b) => Some(run_round(b, server, &spread, &pool, &plans)?.into_iter()),
            None => None,
        };
        for (k, (want, out, e_in)) in results.into_iter().enumerate() {
            let lwe = match (out, outputs.as_mut().and_then(|o| o.next())) {
                (Some(lwe), _) => lwe,
                (None, Some(ct)) => ct.into_lwe(),
                (None, None) => {
                    return Err(Error::Internal(
                        "the backend returned too few outputs".into(),
                    ))
                }
            };
            let key_ct = Ciphertext::from_lwe(p.id, server.key_id(), lwe);
            if client.decrypt(&key_ct)? != want {
                wrong += 1;
            }
            let e_out = client.phase_error(&key_ct, want)? as f64 / 2f64.powi(64);
            pbs_sq += e_out * e_out;
            in_sum += e_in;
            in_sq += e_in * e_in;
            // Replace a random pool member: later inputs read fresh outputs.
            let slot = (k * 7919 + done) % pool.len();
            pool[slot] = (want, key_ct.into_lwe());
        }
        done += round;
        progress(done);
    }
    let model = NoiseModel::of(p);
    let n = count.max(1) as f64;
    let mean = in_sum / n;
    Ok(NoiseReport {
        params: p.name,
        bootstraps: count,
        quadratic_weight: qw,
        margin: margin.to_string(),
        wrong,
        pbs_std_measured: (pbs_sq / n).sqrt(),
        pbs_std_predicted: model.pbs.sqrt(),
        input_std_measured: (in_sq / n - mean * mean).max(0.0).sqrt(),
        input_std_predicted: model.variance_at(qw as f64).sqrt(),
        input_mean_measured: mean,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// One round's bootstraps as one circuit on `backend`: the pool's
/// ciphertexts are the inputs, each plan a bootstrap through `table`.
fn run_round<B: Backend<Digit = Ciphertext>>(
    backend: &B,
    server: &ServerKey,
    table: &[u64],
    pool: &[(u64, LweCiphertextOwned<u64>)],
    plans: &[(Vec<(usize, bool)>, u64)],
) -> Result<Vec<Ciphertext>, Error> {
    let p = server.params();
    let bootstraps = plans
        .iter()
        .map(|(terms, c)| {
            let terms = terms
                .iter()
                .map(|&(i, negative)| (i as FreshId, if negative { -1 } else { 1 }))
                .collect();
            (
                LinearExpr {
                    terms,
                    constant: *c,
                },
                0,
            )
        })
        .collect();
    let circuit = Circuit::one_level(p, pool.len(), vec![table.to_vec()], bootstraps);
    let inputs: Vec<Ciphertext> = pool
        .iter()
        .map(|(_, lwe)| Ciphertext::from_lwe(p.id, server.key_id(), lwe.clone()))
        .collect();
    let out = backend.evaluate(&circuit, &inputs)?;
    if out.len() != plans.len() {
        return Err(Error::Internal(format!(
            "the backend returned {} outputs for {} bootstraps",
            out.len(),
            plans.len()
        )));
    }
    Ok(out)
}
