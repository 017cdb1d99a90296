//! One KS-PBS exactly as tfhe-rs performs it for the source parameter sets:
//! key switch to the small key, centered binary modulus switch to `2N`,
//! blind rotation of the accumulator, sample extraction (several extractions
//! at different monomial degrees give several LUT outputs of one rotation).

use tfhe::core_crypto::prelude::*;

use crate::crypto::keys::ServerKey;
use crate::crypto::params::ParameterSet;

/// Per-thread buffers reused by every bootstrap the thread runs.
pub struct PbsScratch {
    input: LweCiphertextOwned<u64>,
    small: LweCiphertextOwned<u64>,
    glwe: GlweCiphertextOwned<u64>,
    buffers: ComputationBuffers,
}

impl PbsScratch {
    /// The bootstrap input buffer: fill it, then call
    /// [`ServerKey::bootstrap_input`].
    pub fn input_mut(&mut self) -> &mut [u64] {
        self.input.as_mut()
    }

    pub(crate) fn input(&self) -> &LweCiphertextOwned<u64> {
        &self.input
    }

    pub fn new(params: &ParameterSet, fft: FftView<'_>) -> Self {
        let glwe_size = params.glwe_dimension.to_glwe_size();
        let mut buffers = ComputationBuffers::new();
        buffers.resize(
            blind_rotate_assign_mem_optimized_requirement::<u64>(
                glwe_size,
                params.polynomial_size,
                fft,
            )
            .unaligned_bytes_required(),
        );
        PbsScratch {
            input: LweCiphertext::new(
                0,
                params.big_lwe_dimension().to_lwe_size(),
                CiphertextModulus::new_native(),
            ),
            small: LweCiphertext::new(
                0,
                params.lwe_dimension.to_lwe_size(),
                CiphertextModulus::new_native(),
            ),
            glwe: GlweCiphertext::new(
                0,
                glwe_size,
                params.polynomial_size,
                CiphertextModulus::new_native(),
            ),
            buffers,
        }
    }
}

/// The half-unit slots of a table given on every residue (`table[x]` at
/// `x`): slot `j` covers `[j/2, j/2 + 1/2)` units, so residue `x` owns the
/// two slots around it.
pub fn dense_slots(table: &[u64]) -> Vec<u64> {
    let m = table.len();
    (0..2 * m).map(|j| table[j.div_ceil(2) % m]).collect()
}

/// Builds the accumulator (test polynomial) of a table given as `2^(pi+1)`
/// half-unit slots (see [`crate::circuit::table`]): slot `j` fills
/// `N / 2^pi` coefficients with `slots[j] * delta`. Coefficient `i` is read
/// for a selector at `i / (N / 2^(pi-1))` units, so with [`dense_slots`]
/// each digit sits in the middle of its box, as in tfhe-rs; with wider
/// spacing the boxes follow the selector's possible values.
pub fn accumulator(params: &ParameterSet, slots: &[u64]) -> GlweCiphertextOwned<u64> {
    let n = params.polynomial_size.0;
    let m = params.message_modulus() as usize;
    debug_assert_eq!(slots.len(), 2 * m);
    let slot_size = n / m;
    let delta = params.delta();
    let mut acc = GlweCiphertext::new(
        0u64,
        params.glwe_dimension.to_glwe_size(),
        params.polynomial_size,
        CiphertextModulus::new_native(),
    );
    let mut body = acc.get_mut_body();
    for (i, c) in body.as_mut().iter_mut().enumerate() {
        *c = slots[i / slot_size].wrapping_mul(delta);
    }
    acc
}

impl ServerKey {
    /// Bootstraps `scratch.input` through `acc` and extracts one output per
    /// entry of `offsets` (in digit units: output `j` reads the table at the
    /// selector plus `offsets[j]`).
    pub fn bootstrap_input(
        &self,
        scratch: &mut PbsScratch,
        acc: &GlweCiphertextOwned<u64>,
        offsets: &[u64],
        fft: FftView<'_>,
        outputs: &mut [LweCiphertextOwned<u64>],
    ) {
        let p = self.params();
        keyswitch_lwe_ciphertext(&self.data.keyswitch_key, &scratch.input, &mut scratch.small);
        let log_modulus = p.polynomial_size.to_blind_rotation_input_modulus_log();
        let msed = lwe_ciphertext_centered_binary_modulus_switch::<u64, usize, _>(
            scratch.small.as_view(),
            log_modulus,
        );
        scratch.glwe.as_mut().copy_from_slice(acc.as_ref());
        blind_rotate_assign_mem_optimized(
            &msed,
            &mut scratch.glwe,
            &self.fourier_bsk,
            fft,
            scratch.buffers.stack(),
        );
        let box_size = (p.polynomial_size.0 >> (p.pi - 1)) as u64;
        for (out, &offset) in outputs.iter_mut().zip(offsets) {
            extract_lwe_sample_from_glwe_ciphertext(
                &scratch.glwe,
                out,
                MonomialDegree((offset * box_size) as usize),
            );
        }
    }

    /// An empty ciphertext of the size bootstraps produce.
    pub(crate) fn new_lwe(&self) -> LweCiphertextOwned<u64> {
        LweCiphertext::new(
            0,
            self.params().big_lwe_dimension().to_lwe_size(),
            CiphertextModulus::new_native(),
        )
    }

    /// The key-switch then modulus-switch image of `input`, as `(mask, body)`
    /// in `Z_{2N}`: what the blind rotation sees (noise measurement).
    pub(crate) fn switched(&self, input: &LweCiphertextOwned<u64>) -> (Vec<usize>, usize) {
        let p = self.params();
        let mut small = LweCiphertext::new(
            0,
            p.lwe_dimension.to_lwe_size(),
            CiphertextModulus::new_native(),
        );
        keyswitch_lwe_ciphertext(&self.data.keyswitch_key, input, &mut small);
        let log_modulus = p.polynomial_size.to_blind_rotation_input_modulus_log();
        let msed = lwe_ciphertext_centered_binary_modulus_switch::<u64, usize, _>(
            small.as_view(),
            log_modulus,
        );
        (msed.mask().collect(), msed.body())
    }
}
