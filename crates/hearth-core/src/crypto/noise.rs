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
use tfhe::core_crypto::commons::noise_formulas::lwe_multi_bit_programmable_bootstrap::{
    multi_bit_pbs_variance_132_bits_security_tuniform_gf_2_fft_mul,
    multi_bit_pbs_variance_132_bits_security_tuniform_gf_3_fft_mul,
    multi_bit_pbs_variance_132_bits_security_tuniform_gf_4_fft_mul,
};
use tfhe::core_crypto::commons::noise_formulas::lwe_packing_keyswitch::packing_keyswitch_additive_variance_132_bits_security_tuniform;
use tfhe::core_crypto::commons::noise_formulas::lwe_programmable_bootstrap::pbs_variance_132_bits_security_tuniform_fft_mul;
use tfhe::core_crypto::commons::noise_formulas::modulus_switch::modulus_switch_additive_variance;
use tfhe::core_crypto::commons::noise_formulas::multi_bit_modulus_switch::multi_bit_modulus_switch_additive_variance;

use crate::crypto::params::{Budgets, ParameterSet};

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
    /// Added to an output by packing it ([`crate::crypto::packing`]): the
    /// packing key switch of a full GLWE (`N` ciphertexts) and the
    /// modulus switch to the storage modulus.
    pub packing: f64,
}

/// Mantissa bits of the f64 FFT used by the blind rotation.
const FFT_MANTISSA_BITS: f64 = 53.0;
const MODULUS: f64 = 18446744073709551616.0; // 2^64
const SMALL_MODULUS_32: f64 = 4294967296.0; // 2^32

impl NoiseModel {
    /// The model for `params` (valid for sets with secure TUniform noise).
    pub fn of(params: &ParameterSet) -> Self {
        let big_n = params.big_lwe_dimension();
        let pbs_variance = match params.grouping_factor.map(|g| g.0) {
            None => pbs_variance_132_bits_security_tuniform_fft_mul,
            Some(2) => multi_bit_pbs_variance_132_bits_security_tuniform_gf_2_fft_mul,
            Some(3) => multi_bit_pbs_variance_132_bits_security_tuniform_gf_3_fft_mul,
            Some(4) => multi_bit_pbs_variance_132_bits_security_tuniform_gf_4_fft_mul,
            Some(g) => panic!("{}: no noise formula for grouping factor {g}", params.name),
        };
        let pbs = pbs_variance(
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
        let ring = 2.0 * params.polynomial_size.0 as f64;
        // The multi-bit bootstrap rounds each group's key combinations
        // (tfhe-rs's multi-bit modulus switch, not centered).
        let modulus_switch = match params.grouping_factor {
            None => centered_binary_shifted_modulus_switch_additive_variance(
                params.lwe_dimension,
                small_modulus,
                ring,
            ),
            Some(g) => multi_bit_modulus_switch_additive_variance(
                params.lwe_dimension,
                g.0 as f64,
                small_modulus,
                ring,
            ),
        }
        .0;
        let pack = &params.packing;
        let packing = packing_keyswitch_additive_variance_132_bits_security_tuniform(
            big_n,
            params.glwe_dimension,
            params.polynomial_size,
            pack.base_log,
            pack.level,
            params.polynomial_size.0 as f64,
            MODULUS,
        )
        .0 + modulus_switch_additive_variance(
            big_n,
            MODULUS,
            2f64.powi(pack.storage_log_modulus as i32),
        )
        .0;
        NoiseModel {
            pbs,
            keyswitch,
            modulus_switch,
            packing,
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
        log2_p_miss(margin_log2, qw * self.pbs)
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
        self.decrypt_budgets(pi, log2_target, 0.0)
    }

    /// [`NoiseModel::output_budgets`] for outputs that are packed before
    /// they are decrypted (with the variance [`NoiseModel::packing`] added).
    pub fn packed_output_budgets(&self, pi: u32, log2_target: f64) -> Budgets {
        self.decrypt_budgets(pi, log2_target, self.packing)
    }

    fn decrypt_budgets(&self, pi: u32, log2_target: f64, added: f64) -> Budgets {
        Budgets::from_fn(|margin| {
            let margin_log2 = margin.log2_spacing() as i32 - pi as i32 - 1;
            largest_weight(|qw| log2_p_miss(margin_log2, qw * self.pbs + added) <= log2_target)
        })
    }
}

/// log2 of the probability that a centred Gaussian error of `variance`
/// misses a margin of `2^margin_log2` on the torus.
fn log2_p_miss(margin_log2: i32, variance: f64) -> f64 {
    log2_erfc(2f64.powi(margin_log2) / (variance.sqrt() * std::f64::consts::SQRT_2))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::{
        ParameterSet, BITS_128, DIGITS_128, DIGITS_KS32_128, DIGITS_MB4_128, GATES_128,
    };

    /// The secure sets.
    const SECURE: [&ParameterSet; 5] = [
        &DIGITS_128,
        &DIGITS_KS32_128,
        &DIGITS_MB4_128,
        &BITS_128,
        &GATES_128,
    ];

    #[test]
    fn stated_budgets_match_tfhe_formulas() {
        for p in SECURE {
            let model = NoiseModel::of(p);
            let target = p.log2_p_fail.unwrap();
            let budgets = model.bootstrap_budgets(p.pi, target);
            let outputs = model.output_budgets(p.pi, target);
            let packed = model.packed_output_budgets(p.pi, target);
            eprintln!(
                "{}: budgets {budgets:?}, outputs {outputs:?}, packed {packed:?}",
                p.name
            );
            assert_eq!(
                packed, p.packed_output_budgets,
                "{}: packed output budgets differ",
                p.name
            );
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

    /// Each set stores packed results at the fewest bits that keep at
    /// least 3/4 of every output budget: one bit fewer would not.
    #[test]
    fn storage_modulus_is_the_smallest_that_keeps_the_outputs() {
        for p in SECURE {
            let target = p.log2_p_fail.unwrap();
            let keeps = |bits: usize| {
                let mut q = *p;
                q.packing.storage_log_modulus = bits;
                let model = NoiseModel::of(&q);
                let (full, packed) = (
                    model.output_budgets(q.pi, target),
                    model.packed_output_budgets(q.pi, target),
                );
                crate::crypto::params::Margin::ALL
                    .iter()
                    .all(|&m| 4 * packed.at(m) >= 3 * full.at(m))
            };
            let bits = p.packing.storage_log_modulus;
            assert!(keeps(bits), "{}: {bits} bits lose too much", p.name);
            assert!(!keeps(bits - 1), "{}: {} bits would do", p.name, bits - 1);
        }
    }

    #[test]
    fn digits_budget_at_both_targets() {
        let model = NoiseModel::of(&DIGITS_128);
        assert_eq!(model.budget(5, -64.0), 1373);
        assert_eq!(model.budget(5, -128.0), 112);
        // PARMESAN needs 20 (addition), 41 (maximum), 85 (signum level 1).
        assert!(model.budget(5, -128.0) >= 85);
    }

    #[test]
    fn source_decomposition_would_give_a_smaller_budget() {
        let mut source = DIGITS_128;
        source.ks_base_log = tfhe::core_crypto::prelude::DecompositionBaseLog(4);
        source.ks_level = tfhe::core_crypto::prelude::DecompositionLevelCount(4);
        assert_eq!(NoiseModel::of(&source).budget(5, -128.0), 40);
    }

    /// The multi-bit set with its source's key switch (2^3 x 5) would sit
    /// under the digits family's 41; with 2^3 x 6 it carries it.
    #[test]
    fn multi_bit_key_switch_raises_the_budget_past_41() {
        let mut source = DIGITS_MB4_128;
        source.ks_level = tfhe::core_crypto::prelude::DecompositionLevelCount(5);
        assert_eq!(NoiseModel::of(&source).budget(5, -128.0), 38);
        let model = NoiseModel::of(&DIGITS_MB4_128);
        assert!(model.budget(5, -128.0) >= 41);
        // The multi-bit bootstrap is noisier than the classical one with
        // the same dimensions, its modulus switch less so.
        let classic = NoiseModel::of(&DIGITS_128);
        assert!(model.pbs > 3.0 * classic.pbs);
        assert!(model.modulus_switch < classic.modulus_switch);
    }

    #[test]
    fn asymptotic_erfc_matches_libm_where_both_work() {
        for x in [12.0, 20.0, 25.0] {
            let exact = libm::erfc(x).log2();
            assert!((log2_erfc_asymptotic(x) - exact).abs() < 0.01, "{x}");
        }
        assert!(log2_erfc(30.0) < log2_erfc(29.0));
    }
}
