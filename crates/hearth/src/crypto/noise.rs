//! Noise analysis with tfhe-rs's own formulas
//! (`core_crypto::commons::noise_formulas`).
//!
//! One KS-PBS sees, at the blind-rotation input, the error
//! `sum_i w_i e_i + e_ks + e_ms`, where the `e_i` are errors of freshly
//! bootstrapped ciphertexts (variance `V_pbs` each), `e_ks` the key-switch
//! error and `e_ms` the centered modulus-switch error. Its variance is
//! `qw * V_pbs + V_ks + V_ms` with `qw = sum_i w_i^2` (the quadratic weight).
//! Decoding a `pi`-bit digit fails when `|error| >= delta / 2 = 2^-(pi+1)` on
//! the torus; for a centred Gaussian that has probability
//! `erfc(2^-(pi+1) / (sqrt(2) * sigma))`.

use tfhe::core_crypto::commons::noise_formulas::centered_mean_shifted_modulus_switch::centered_binary_shifted_modulus_switch_additive_variance;
use tfhe::core_crypto::commons::noise_formulas::lwe_keyswitch::keyswitch_additive_variance_132_bits_security_tuniform;
use tfhe::core_crypto::commons::noise_formulas::lwe_programmable_bootstrap::pbs_variance_132_bits_security_tuniform_fft_mul;

use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use tfhe::core_crypto::prelude::*;

use crate::backend::Backend;
use crate::circuit::{Circuit, FreshId, LinearExpr};
use crate::crypto::bootstrap::{accumulator, PbsScratch};
use crate::crypto::keys::{Ciphertext, ClientKey, ServerKey};
use crate::crypto::lut::Lut;
use crate::crypto::params::ParameterSet;
use crate::crypto::params::{Budgets, Margin};
use crate::error::Error;

/// Variances (torus units, i.e. fractions of the modulus squared) of the
/// noise sources of one KS-PBS.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseModel {
    /// Output of one PBS (a fresh ciphertext).
    pub pbs: f64,
    /// Added by the key switch.
    pub keyswitch: f64,
    /// Added by the centered modulus switch to `2N`.
    pub modulus_switch: f64,
}

/// Mantissa bits of the f64 FFT used by the blind rotation.
const FFT_MANTISSA_BITS: f64 = 53.0;
const MODULUS: f64 = 18446744073709551616.0; // 2^64
const SMALL_MODULUS_32: f64 = 4294967296.0; // 2^32

impl NoiseModel {
    /// The model for `params` (valid for sets with secure TUniform noise).
    pub fn of(params: &ParameterSet) -> Self {
        let big_n = params.big_lwe_dimension();
        let pbs = pbs_variance_132_bits_security_tuniform_fft_mul(
            params.lwe_dimension,
            params.glwe_dimension,
            params.polynomial_size,
            params.pbs_base_log,
            params.pbs_level,
            FFT_MANTISSA_BITS,
            MODULUS,
        )
        .0;
        // The small LWE lives modulo 2^32 on KS32 sets.
        let small_modulus = if params.ks32 {
            SMALL_MODULUS_32
        } else {
            MODULUS
        };
        let keyswitch = keyswitch_additive_variance_132_bits_security_tuniform(
            big_n,
            params.lwe_dimension,
            params.ks_base_log,
            params.ks_level,
            MODULUS,
            small_modulus,
        )
        .0;
        let modulus_switch = centered_binary_shifted_modulus_switch_additive_variance(
            params.lwe_dimension,
            small_modulus,
            2.0 * params.polynomial_size.0 as f64,
        )
        .0;
        NoiseModel {
            pbs,
            keyswitch,
            modulus_switch,
        }
    }

    /// Variance at the blind-rotation input for a quadratic weight `qw`.
    pub fn variance_at(&self, qw: f64) -> f64 {
        qw * self.pbs + self.keyswitch + self.modulus_switch
    }

    /// log2 of the failure probability of one PBS whose input has
    /// quadratic weight `qw`, for `pi` message bits (margin half a unit).
    pub fn log2_p_fail(&self, pi: u32, qw: f64) -> f64 {
        let margin = 2f64.powi(-(pi as i32 + 1));
        log2_erfc(margin / (self.variance_at(qw).sqrt() * std::f64::consts::SQRT_2))
    }

    /// log2 of the probability that decrypting a ciphertext of quadratic
    /// weight `qw` (fresh errors only: no key switch, no modulus switch)
    /// misses a margin of `2^margin_log2` on the torus.
    pub fn log2_p_decrypt_fail(&self, margin_log2: i32, qw: f64) -> f64 {
        let sigma = (qw * self.pbs).sqrt();
        log2_erfc(2f64.powi(margin_log2) / (sigma * std::f64::consts::SQRT_2))
    }

    /// The largest integer quadratic weight whose failure probability is at
    /// most `2^log2_target`; 0 if even a single fresh input is too noisy.
    pub fn budget(&self, pi: u32, log2_target: f64) -> u64 {
        largest_weight(|qw| self.log2_p_fail(pi, qw) <= log2_target)
    }

    /// Bootstrap budgets for margins of 1/2, 1 and 2 units (selectors whose
    /// values with different outputs are 1, 2 or 4 units apart): the
    /// budgets of `pi`, `pi - 1` and `pi - 2` bits.
    pub fn bootstrap_budgets(&self, pi: u32, log2_target: f64) -> Budgets {
        Budgets::from_fn(|margin| {
            let bits = pi as i64 - margin.log2_spacing() as i64;
            if bits < 1 {
                self.budget(1, log2_target)
            } else {
                self.budget(bits as u32, log2_target)
            }
        })
    }

    /// Decryption budgets for outputs whose values are 1, 2 or 4 units
    /// apart (decoded to the nearest possible value).
    pub fn output_budgets(&self, pi: u32, log2_target: f64) -> Budgets {
        Budgets::from_fn(|margin| {
            let margin_log2 = margin.log2_spacing() as i32 - pi as i32 - 1;
            largest_weight(|qw| self.log2_p_decrypt_fail(margin_log2, qw) <= log2_target)
        })
    }
}

/// The largest integer `qw >= 1` with `ok(qw)` (monotone), or 0.
fn largest_weight(ok: impl Fn(f64) -> bool) -> u64 {
    if !ok(1.0) {
        return 0;
    }
    let (mut lo, mut hi) = (1u64, 1u64 << 40);
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if ok(mid as f64) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

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
    measure_on::<crate::backend::Batched<crate::backend::CpuBatch>>(
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
                    let (mask, b) = server.switched(scratch.input());
                    let dot = mask
                        .iter()
                        .zip(client.small_key().as_ref())
                        .fold(0u64, |a, (&mi, &si)| a.wrapping_add(mi as u64 * si));
                    let phase = (b as u64).wrapping_sub(dot) % two_n;
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
                (Some(lwe), _) | (None, Some(Ciphertext { lwe, .. })) => lwe,
                (None, None) => {
                    return Err(Error::Config("the backend returned too few outputs".into()))
                }
            };
            let key_ct = Ciphertext {
                params: p.id,
                key_id: server.key_id(),
                lwe,
            };
            if client.decrypt(&key_ct)? != want {
                wrong += 1;
            }
            let e_out = client.phase_error(&key_ct, want)? as f64 / 2f64.powi(64);
            pbs_sq += e_out * e_out;
            in_sum += e_in;
            in_sq += e_in * e_in;
            // Replace a random pool member: later inputs read fresh outputs.
            let slot = (k * 7919 + done) % pool.len();
            pool[slot] = (want, key_ct.lwe);
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
        .map(|(_, lwe)| Ciphertext {
            params: p.id,
            key_id: server.key_id(),
            lwe: lwe.clone(),
        })
        .collect();
    let out = backend.evaluate(&circuit, &inputs)?;
    if out.len() != plans.len() {
        return Err(Error::Config(format!(
            "the backend returned {} outputs for {} bootstraps",
            out.len(),
            plans.len()
        )));
    }
    Ok(out)
}

/// `log2(erfc(x))`, accurate also where `erfc` underflows f64.
fn log2_erfc(x: f64) -> f64 {
    let v = libm::erfc(x);
    if v > 1e-300 {
        return v.log2();
    }
    log2_erfc_asymptotic(x)
}

/// `erfc(x) ~ exp(-x^2) / (x sqrt(pi)) (1 - 1/(2x^2))` for large `x`.
fn log2_erfc_asymptotic(x: f64) -> f64 {
    let ln = -x * x - (x * std::f64::consts::PI.sqrt()).ln() + (1.0 - 0.5 / (x * x)).ln();
    ln / std::f64::consts::LN_2
}

#[cfg(feature = "testing")]
pub(crate) mod tests {
    use super::*;
    use crate::crypto::params::{BITS_128, DIGITS_128, DIGITS_KS32_128, GATES_128};

    pub(crate) fn stated_budgets_match_tfhe_formulas() {
        for p in [&DIGITS_128, &DIGITS_KS32_128, &BITS_128, &GATES_128] {
            let model = NoiseModel::of(p);
            let target = p.log2_p_fail.unwrap();
            let budgets = model.bootstrap_budgets(p.pi, target);
            let outputs = model.output_budgets(p.pi, target);
            eprintln!("{}: budgets {budgets:?}, outputs {outputs:?}", p.name);
            assert_eq!(budgets, p.budgets, "{}: computed budgets differ", p.name);
            assert_eq!(
                outputs, p.output_budgets,
                "{}: output budgets differ",
                p.name
            );
            let b = p.budgets.half;
            if b > 0 {
                assert!(model.log2_p_fail(p.pi, b as f64) <= target);
            }
            assert!(model.log2_p_fail(p.pi, (b + 1) as f64) > target);
        }
    }

    pub(crate) fn digits_budget_at_both_targets() {
        let model = NoiseModel::of(&DIGITS_128);
        assert_eq!(model.budget(5, -64.0), 1373);
        assert_eq!(model.budget(5, -128.0), 112);
        // PARMESAN needs 20 (addition), 41 (maximum), 85 (signum level 1).
        assert!(model.budget(5, -128.0) >= 85);
    }

    pub(crate) fn source_decomposition_would_give_a_smaller_budget() {
        let mut source = DIGITS_128;
        source.ks_base_log = tfhe::core_crypto::prelude::DecompositionBaseLog(4);
        source.ks_level = tfhe::core_crypto::prelude::DecompositionLevelCount(4);
        assert_eq!(NoiseModel::of(&source).budget(5, -128.0), 40);
    }

    pub(crate) fn asymptotic_erfc_matches_libm_where_both_work() {
        for x in [12.0, 20.0, 25.0] {
            let exact = libm::erfc(x).log2();
            assert!((log2_erfc_asymptotic(x) - exact).abs() < 0.01, "{x}");
        }
        assert!(log2_erfc(30.0) < log2_erfc(29.0));
    }

    crate::testing::unit::tests![
        stated_budgets_match_tfhe_formulas,
        digits_budget_at_both_targets,
        source_decomposition_would_give_a_smaller_budget,
        asymptotic_erfc_matches_libm_where_both_work,
    ];
}
