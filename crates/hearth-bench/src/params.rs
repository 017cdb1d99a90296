//! `hearth bench params`: the parameter-set study behind `GATES_128`.
//! Published tfhe-rs sets (security parameters unchanged, key-switch
//! decomposition varied) side by side: budgets at each noise margin and
//! failure probability (tfhe-rs's noise formulas), and the latency of one
//! KS-PBS on this machine (1 thread, core_crypto, the same path hearth's
//! engine runs).

use std::path::PathBuf;
use std::time::Instant;

use hearth::crypto::noise::NoiseModel;
use hearth::crypto::params::Budgets;
use hearth::{Error, ParameterSet, ParamsId};
use serde_json::json;
use tfhe::core_crypto::commons::noise_formulas::centered_mean_shifted_modulus_switch::centered_binary_shifted_modulus_switch_additive_variance;
use tfhe::core_crypto::commons::noise_formulas::lwe_keyswitch::keyswitch_additive_variance_132_bits_security_gaussian;
use tfhe::core_crypto::commons::noise_formulas::lwe_programmable_bootstrap::pbs_variance_132_bits_security_gaussian_fft_mul;
use tfhe::core_crypto::prelude::*;

use crate::report::{emit, Table};

/// A candidate: a published set's security parameters and a decomposition.
#[derive(Clone, Copy)]
pub(crate) struct Candidate {
    pub name: &'static str,
    pub n: usize,
    pub k: usize,
    pub big_n: usize,
    /// TUniform bounds (lwe, glwe); `None` for Gaussian (boolean) sets.
    pub tuniform: Option<(u32, u32)>,
    pub pbs: (usize, usize),
    pub ks: (usize, usize),
    /// The key switch lands on a 32-bit small LWE (tfhe-rs's KS32).
    pub ks32: bool,
}

pub(crate) const CANDIDATES: [Candidate; 9] = [
    Candidate {
        name: "V1_8 MESSAGE_1_CARRY_1 2M128 (BITS_128)",
        n: 879,
        k: 4,
        big_n: 512,
        tuniform: Some((46, 17)),
        pbs: (23, 1),
        ks: (5, 3),
        ks32: false,
    },
    Candidate {
        name: "V1_0 MESSAGE_1_CARRY_1 2M64",
        n: 839,
        k: 4,
        big_n: 512,
        tuniform: Some((47, 17)),
        pbs: (23, 1),
        ks: (4, 3),
        ks32: false,
    },
    Candidate {
        name: "V1_0 MESSAGE_1_CARRY_1 2M40",
        n: 799,
        k: 3,
        big_n: 512,
        tuniform: Some((48, 30)),
        pbs: (17, 1),
        ks: (3, 4),
        ks32: false,
    },
    Candidate {
        name: "V1_0 MESSAGE_1_CARRY_1 2M40, KS 2^4 x 3 (GATES_128)",
        n: 799,
        k: 3,
        big_n: 512,
        tuniform: Some((48, 30)),
        pbs: (17, 1),
        ks: (4, 3),
        ks32: false,
    },
    Candidate {
        name: "V1_8 GPU MESSAGE_1_CARRY_1 2M128",
        n: 759,
        k: 1,
        big_n: 2048,
        tuniform: Some((49, 17)),
        pbs: (23, 1),
        ks: (3, 4),
        ks32: false,
    },
    Candidate {
        name: "V1_0 MESSAGE_2_CARRY_2 2M40",
        n: 839,
        k: 1,
        big_n: 2048,
        tuniform: Some((47, 17)),
        pbs: (23, 1),
        ks: (3, 5),
        ks32: false,
    },
    Candidate {
        name: "V1_8 MESSAGE_2_CARRY_2 2M128, KS 2^3 x 5 (DIGITS_128)",
        n: 918,
        k: 1,
        big_n: 2048,
        tuniform: Some((45, 17)),
        pbs: (23, 1),
        ks: (3, 5),
        ks32: false,
    },
    Candidate {
        name: "boolean DEFAULT_PARAMETERS_KS_PBS (2^-64)",
        n: 739,
        k: 3,
        big_n: 512,
        tuniform: None,
        pbs: (10, 2),
        ks: (3, 5),
        ks32: false,
    },
    Candidate {
        name: "boolean PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS",
        n: 770,
        k: 2,
        big_n: 1024,
        tuniform: None,
        pbs: (10, 2),
        ks: (3, 5),
        ks32: false,
    },
];

pub(crate) fn set(c: &Candidate, pi: u32) -> ParameterSet {
    let (lwe, glwe) = c.tuniform.unwrap_or((0, 0));
    ParameterSet {
        id: ParamsId::Bits128,
        name: c.name,
        source: c.name,
        security_bits: 128,
        pi,
        budgets: Budgets::from_fn(|_| 0),
        output_budgets: Budgets::from_fn(|_| 0),
        packed_output_budgets: Budgets::from_fn(|_| 0),
        packing: hearth::crypto::params::DIGITS_128.packing,
        log2_p_fail: None,
        lwe_dimension: LweDimension(c.n),
        glwe_dimension: GlweDimension(c.k),
        polynomial_size: PolynomialSize(c.big_n),
        lwe_noise: DynamicDistribution::new_t_uniform(lwe),
        glwe_noise: DynamicDistribution::new_t_uniform(glwe),
        pbs_base_log: DecompositionBaseLog(c.pbs.0),
        pbs_level: DecompositionLevelCount(c.pbs.1),
        ks_base_log: DecompositionBaseLog(c.ks.0),
        ks_level: DecompositionLevelCount(c.ks.1),
        ks32: c.ks32,
        grouping_factor: None,
    }
}

/// tfhe-rs's formulas (TUniform or Gaussian, at 132-bit secure noise).
pub(crate) fn model(c: &Candidate) -> NoiseModel {
    let p = set(c, 3);
    if c.tuniform.is_some() {
        return NoiseModel::of(&p);
    }
    let q = 18446744073709551616.0;
    NoiseModel {
        pbs: pbs_variance_132_bits_security_gaussian_fft_mul(
            p.lwe_dimension,
            p.glwe_dimension,
            p.polynomial_size,
            p.pbs_base_log,
            p.pbs_level,
            53.0,
            q,
        )
        .0,
        keyswitch: keyswitch_additive_variance_132_bits_security_gaussian(
            p.big_lwe_dimension(),
            p.lwe_dimension,
            p.ks_base_log,
            p.ks_level,
            q,
            q,
        )
        .0,
        modulus_switch: centered_binary_shifted_modulus_switch_additive_variance(
            p.lwe_dimension,
            q,
            2.0 * p.polynomial_size.0 as f64,
        )
        .0,
        // Candidates are compared by their bootstraps, not their packing.
        packing: 0.0,
    }
}

/// The key-switch key of a [`KsPbs`]: to a 64-bit small LWE, or to a
/// 32-bit one (KS32).
enum Ksk {
    Native(LweKeyswitchKeyOwned<u64>, LweCiphertextOwned<u64>),
    Narrow(LweKeyswitchKeyOwned<u32>, LweCiphertextOwned<u32>),
}

/// One KS-PBS on a set's dimensions and decompositions (key switch,
/// centered modulus switch, blind rotation, sample extraction; keys with
/// small noise: timing only), ready to run again and again.
pub(crate) struct KsPbs {
    ksk: Ksk,
    fbsk: FourierLweBootstrapKeyOwned,
    fft: Fft,
    buffers: ComputationBuffers,
    input: LweCiphertextOwned<u64>,
    acc0: GlweCiphertextOwned<u64>,
    acc: GlweCiphertextOwned<u64>,
    out: LweCiphertextOwned<u64>,
    log_modulus: CiphertextModulusLog,
}

impl KsPbs {
    /// Keys for `p` (its `n`, `k`, `N`, decompositions and `ks32`).
    pub(crate) fn new(p: &ParameterSet) -> Self {
        let mut seeder = new_seeder();
        let mut sg = SecretRandomGenerator::<DefaultRandomGenerator>::new(seeder.as_mut().seed());
        let mut eg = EncryptionRandomGenerator::<DefaultRandomGenerator>::new(
            seeder.as_mut().seed(),
            seeder.as_mut(),
        );
        let lk = allocate_and_generate_new_binary_lwe_secret_key(p.lwe_dimension, &mut sg);
        let gk = allocate_and_generate_new_binary_glwe_secret_key(
            p.glwe_dimension,
            p.polynomial_size,
            &mut sg,
        );
        let noise = DynamicDistribution::new_t_uniform(10);
        let modulus = CiphertextModulus::new_native();
        let bsk = par_allocate_and_generate_new_lwe_bootstrap_key(
            &lk,
            &gk,
            p.pbs_base_log,
            p.pbs_level,
            noise,
            modulus,
            &mut eg,
        );
        let big = gk.as_lwe_secret_key();
        let ksk = if p.ks32 {
            let small: Vec<u32> = lk.as_ref().iter().map(|&b| b as u32).collect();
            let small = LweSecretKey::from_container(small);
            let ksk = allocate_and_generate_new_lwe_keyswitch_key(
                &big,
                &small,
                p.ks_base_log,
                p.ks_level,
                DynamicDistribution::new_t_uniform(2),
                CiphertextModulus::new_native(),
                &mut eg,
            );
            let out = LweCiphertext::new(
                0u32,
                p.lwe_dimension.to_lwe_size(),
                ksk.ciphertext_modulus(),
            );
            Ksk::Narrow(ksk, out)
        } else {
            let ksk = allocate_and_generate_new_lwe_keyswitch_key(
                &big,
                &lk,
                p.ks_base_log,
                p.ks_level,
                noise,
                modulus,
                &mut eg,
            );
            Ksk::Native(
                ksk,
                LweCiphertext::new(0u64, p.lwe_dimension.to_lwe_size(), modulus),
            )
        };
        let mut fbsk = FourierLweBootstrapKey::new(
            bsk.input_lwe_dimension(),
            bsk.glwe_size(),
            bsk.polynomial_size(),
            bsk.decomposition_base_log(),
            bsk.decomposition_level_count(),
        );
        convert_standard_lwe_bootstrap_key_to_fourier(&bsk, &mut fbsk);
        let fft = Fft::new(p.polynomial_size);
        let mut buffers = ComputationBuffers::new();
        buffers.resize(
            blind_rotate_assign_mem_optimized_requirement::<u64>(
                p.glwe_dimension.to_glwe_size(),
                p.polynomial_size,
                fft.as_view(),
            )
            .unaligned_bytes_required(),
        );
        let input = allocate_and_encrypt_new_lwe_ciphertext(
            &big,
            Plaintext(1u64 << 61),
            noise,
            modulus,
            &mut eg,
        );
        let acc0 = GlweCiphertext::new(
            0u64,
            p.glwe_dimension.to_glwe_size(),
            p.polynomial_size,
            modulus,
        );
        KsPbs {
            ksk,
            fbsk,
            fft,
            buffers,
            input,
            acc: acc0.clone(),
            acc0,
            out: LweCiphertext::new(0u64, p.big_lwe_dimension().to_lwe_size(), modulus),
            log_modulus: p.polynomial_size.to_blind_rotation_input_modulus_log(),
        }
    }

    /// One KS-PBS, in milliseconds.
    pub(crate) fn once(&mut self) -> f64 {
        let fft = self.fft.as_view();
        let t = Instant::now();
        self.acc.as_mut().copy_from_slice(self.acc0.as_ref());
        match &mut self.ksk {
            Ksk::Native(ksk, small) => {
                keyswitch_lwe_ciphertext(ksk, &self.input, small);
                let msed = lwe_ciphertext_centered_binary_modulus_switch::<u64, usize, _>(
                    small.as_view(),
                    self.log_modulus,
                );
                let stack = self.buffers.stack();
                blind_rotate_assign_mem_optimized(&msed, &mut self.acc, &self.fbsk, fft, stack);
            }
            Ksk::Narrow(ksk, small) => {
                keyswitch_lwe_ciphertext_with_scalar_change(ksk, &self.input, small);
                let msed = lwe_ciphertext_centered_binary_modulus_switch::<u32, usize, _>(
                    small.as_view(),
                    self.log_modulus,
                );
                let stack = self.buffers.stack();
                blind_rotate_assign_mem_optimized(&msed, &mut self.acc, &self.fbsk, fft, stack);
            }
        }
        extract_lwe_sample_from_glwe_ciphertext(&self.acc, &mut self.out, MonomialDegree(0));
        t.elapsed().as_secs_f64() * 1e3
    }
}

/// Median time of one KS-PBS (keys with small noise: timing only).
fn latency(c: &Candidate, reps: usize) -> f64 {
    let mut run = KsPbs::new(&set(c, 3));
    let mut times: Vec<f64> = (0..reps).map(|_| run.once()).collect();
    times.sort_by(f64::total_cmp);
    times[reps / 2]
}

pub fn params(samples: usize, json: Option<PathBuf>) -> Result<(), Error> {
    let mut t = Table::new(
        "Candidate parameter sets for the bits family (budgets by tfhe-rs's noise formulas; KS-PBS median, 1 thread)",
        &[
            "source set",
            "n, k, N",
            "PBS, KS",
            "margin 2^-3 (pi=3 gates) @2^-128",
            "margin 2^-3 @2^-64",
            "margin 2^-4 (pi=3 dense, pi=4 gates) @2^-128",
            "margin 2^-5 (pi=4 dense) @2^-128",
            "margin 2^-6 (pi=5 dense) @2^-128",
            "KS-PBS (ms)",
        ],
    );
    let mut rows = Vec::new();
    for c in &CANDIDATES {
        let m = model(c);
        let ms = latency(c, samples.max(3));
        let b = [
            m.budget(2, -128.0),
            m.budget(2, -64.0),
            m.budget(3, -128.0),
            m.budget(4, -128.0),
            m.budget(5, -128.0),
        ];
        t.row(vec![
            c.name.into(),
            format!("{}, {}, {}", c.n, c.k, c.big_n),
            format!("2^{} x {}, 2^{} x {}", c.pbs.0, c.pbs.1, c.ks.0, c.ks.1),
            b[0].to_string(),
            b[1].to_string(),
            b[2].to_string(),
            b[3].to_string(),
            b[4].to_string(),
            format!("{ms:.2}"),
        ]);
        rows.push(json!({
            "set": c.name, "n": c.n, "k": c.k, "N": c.big_n, "pbs": [c.pbs.0, c.pbs.1], "ks": [c.ks.0, c.ks.1],
            "budgets": {"margin_2m3_128": b[0], "margin_2m3_64": b[1], "margin_2m4_128": b[2], "margin_2m5_128": b[3], "margin_2m6_128": b[4]},
            "v_pbs": m.pbs, "v_ks": m.keyswitch, "v_ms": m.modulus_switch, "ks_pbs_ms": ms,
        }));
    }
    t.note(
        "Budgets are the largest quadratic weight at the torus margin and failure probability shown. A \
         gate on bits stored as 0 or 2 at pi = 3 decodes with margin 2^-3 and needs weight 2 (AND) to \
         3 (majority), plus room for unrefreshed sums: GATES_128 is the fastest set with that at \
         2^-128. Two gate outputs from one rotation need pi = 4 (margin 2^-4), which only the N = 2048 \
         sets carry, at about twice the latency. The boolean sets have Gaussian noise and two PBS \
         levels.",
    );
    emit(
        json.as_deref(),
        &json!({"bench": "params", "rows": rows}),
        &[t],
    )
}
