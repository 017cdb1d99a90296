//! One KS-PBS exactly as tfhe-rs performs it for the source parameter sets:
//! key switch to the small key, centered binary modulus switch to `2N`,
//! blind rotation of the accumulator, sample extraction (several extractions
//! at different monomial degrees give several LUT outputs of one rotation).

use tfhe::core_crypto::fft_impl::common::modulus_switch;
use tfhe::core_crypto::prelude::*;

use crate::crypto::keys::{FourierKey, KeySwitchKey, ServerKey};
use crate::crypto::pair::{self, Helper::Offer};
use crate::crypto::params::ParameterSet;

/// Per-thread buffers reused by every bootstrap the thread runs.
pub struct PbsScratch {
    input: LweCiphertextOwned<u64>,
    small: SmallLwe,
    glwe: GlweCiphertextOwned<u64>,
    buffers: ComputationBuffers,
    threads: usize,
}

impl PbsScratch {
    /// The bootstrap input buffer: fill it, then call
    /// [`ServerKey::bootstrap_input`].
    pub fn input_mut(&mut self) -> &mut [u64] {
        self.input.as_mut()
    }

    /// Threads one bootstrap may use, the calling one included; 1 by
    /// default. A multi-bit bootstrap accumulates on the calling thread
    /// while tfhe-rs's `ThreadCount` producers combine the group keys (at
    /// least one producer runs, so one thread still means two). A
    /// classical one given two or more offers half its work to the rayon
    /// pool it runs on (`crypto::pair`; call it from a pool
    /// thread): it runs on two threads if one is idle, else alone.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The bootstrap input these buffers hold (big-key LWE).
    pub fn input(&self) -> &LweCiphertextOwned<u64> {
        &self.input
    }

    /// Buffers for one KS-PBS on `params`.
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
            small: SmallLwe::new(params),
            glwe: GlweCiphertext::new(
                0,
                glwe_size,
                params.polynomial_size,
                CiphertextModulus::new_native(),
            ),
            buffers,
            threads: 1,
        }
    }
}

/// Whether bootstraps on `params` given two threads run on two
/// ([`PbsScratch::set_threads`]): classical ones with `k = 1` and one level.
pub fn pairs(params: &ParameterSet) -> bool {
    params.grouping_factor.is_none() && params.glwe_dimension.0 == 1 && params.pbs_level.0 == 1
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
        scratch.glwe.as_mut().copy_from_slice(acc.as_ref());
        match &self.fourier_bsk {
            FourierKey::Classic(bsk)
                if scratch.threads >= 2 && pairs(p) && rayon::current_thread_index().is_some() =>
            {
                let input = scratch.input.as_ref();
                let glwe = scratch.glwe.as_mut();
                let stack = scratch.buffers.stack();
                let bsk = bsk.as_view();
                match &self.data.keyswitch_key {
                    KeySwitchKey::Native(ksk) => {
                        pair::key_switch_and_rotate(p, ksk, bsk, input, glwe, fft, stack, Offer)
                    }
                    KeySwitchKey::Narrow(ksk) => {
                        pair::key_switch_and_rotate(p, ksk, bsk, input, glwe, fft, stack, Offer)
                    }
                };
            }
            FourierKey::Classic(bsk) => {
                let msed = self.switch(&scratch.input, &mut scratch.small);
                blind_rotate_assign_mem_optimized(
                    &msed,
                    &mut scratch.glwe,
                    bsk,
                    fft,
                    scratch.buffers.stack(),
                );
            }
            FourierKey::MultiBit(bsk) => {
                let small = self.keyswitch(&scratch.input, &mut scratch.small);
                // Deterministic: the same outputs whatever the threads'
                // timing, so every backend's ciphertexts agree bit for bit.
                modulus_switch_multi_bit_blind_rotate_assign(
                    small,
                    &mut scratch.glwe,
                    bsk,
                    ThreadCount(scratch.threads.saturating_sub(1).max(1)),
                    true,
                );
            }
        }
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
    pub fn new_lwe(&self) -> LweCiphertextOwned<u64> {
        LweCiphertext::new(
            0,
            self.params().big_lwe_dimension().to_lwe_size(),
            CiphertextModulus::new_native(),
        )
    }

    /// The phase in `Z_{2N}` the blind rotation turns the accumulator by
    /// for `input`, decrypted with the small secret key `small_key` (noise
    /// measurement): after the key switch, `b - sum a_i s_i` with each
    /// term modulus-switched as the bootstrap switches it. The classical
    /// bootstrap switches every `a_i` (centered); the multi-bit one
    /// switches, per group of `g`, the sum of the `a_i` whose key bits are
    /// set: the one combination of its `2^g - 1` the key selects.
    pub fn switched_phase(&self, input: &LweCiphertextOwned<u64>, small_key: &[u64]) -> u64 {
        let p = self.params();
        let two_n = 2 * p.polynomial_size.0 as u64;
        let log_modulus = p.polynomial_size.to_blind_rotation_input_modulus_log();
        let mut small = SmallLwe::new(p);
        match (&self.fourier_bsk, p.grouping_factor) {
            (FourierKey::MultiBit(_), Some(g)) => {
                let small = self.keyswitch(input, &mut small);
                let (body, mask) = small.as_ref().split_last().expect("a body");
                let switch = |x: u64| modulus_switch(x, log_modulus) as u64;
                let rotation = mask
                    .chunks(g.0)
                    .zip(small_key.chunks(g.0))
                    .map(|(a, s)| {
                        let selected = a.iter().zip(s).fold(0u64, |acc, (&ai, &si)| {
                            acc.wrapping_add(ai.wrapping_mul(si))
                        });
                        switch(selected)
                    })
                    .fold(0u64, |acc, d| (acc + d) % two_n);
                (switch(*body) + two_n - rotation) % two_n
            }
            _ => {
                let msed = self.switch(input, &mut small);
                let dot = msed
                    .mask()
                    .zip(small_key)
                    .fold(0u64, |a, (mi, &si)| a.wrapping_add(mi as u64 * si));
                (msed.body() as u64).wrapping_sub(dot) % two_n
            }
        }
    }

    /// Key-switches `input` onto the 64-bit small key (multi-bit sets, which
    /// are never KS32).
    fn keyswitch<'a>(
        &self,
        input: &LweCiphertextOwned<u64>,
        small: &'a mut SmallLwe,
    ) -> &'a LweCiphertextOwned<u64> {
        match (&self.data.keyswitch_key, small) {
            (KeySwitchKey::Native(ksk), SmallLwe::Native(small)) => {
                keyswitch_lwe_ciphertext(ksk, input, small);
                small
            }
            _ => unreachable!("multi-bit sets key-switch onto 64-bit LWE"),
        }
    }

    /// Key-switches `input` into `small`, then modulus-switches it to `2N`
    /// (centered, lazily: the blind rotation reads it).
    fn switch<'a>(&self, input: &LweCiphertextOwned<u64>, small: &'a mut SmallLwe) -> Switched<'a> {
        let log_modulus = self
            .params()
            .polynomial_size
            .to_blind_rotation_input_modulus_log();
        match (&self.data.keyswitch_key, small) {
            (KeySwitchKey::Native(ksk), SmallLwe::Native(small)) => {
                keyswitch_lwe_ciphertext(ksk, input, small);
                Switched::Native(lwe_ciphertext_centered_binary_modulus_switch(
                    small.as_view(),
                    log_modulus,
                ))
            }
            (KeySwitchKey::Narrow(ksk), SmallLwe::Narrow(small)) => {
                keyswitch_lwe_ciphertext_with_scalar_change(ksk, input, small);
                Switched::Narrow(lwe_ciphertext_centered_binary_modulus_switch(
                    small.as_view(),
                    log_modulus,
                ))
            }
            _ => unreachable!("a scratch is made for its key's parameter set"),
        }
    }
}

/// The key-switched small LWE: 64-bit, or 32-bit for KS32 sets.
enum SmallLwe {
    Native(LweCiphertextOwned<u64>),
    Narrow(LweCiphertextOwned<u32>),
}

impl SmallLwe {
    fn new(params: &ParameterSet) -> Self {
        let size = params.lwe_dimension.to_lwe_size();
        if params.ks32 {
            SmallLwe::Narrow(LweCiphertext::new(0, size, CiphertextModulus::new_native()))
        } else {
            SmallLwe::Native(LweCiphertext::new(0, size, CiphertextModulus::new_native()))
        }
    }
}

/// A modulus-switched small LWE of either word size.
enum Switched<'a> {
    Native(LazyStandardModulusSwitchedLweCiphertext<u64, usize, &'a [u64]>),
    Narrow(LazyStandardModulusSwitchedLweCiphertext<u32, usize, &'a [u32]>),
}

impl ModulusSwitchedLweCiphertext<usize> for Switched<'_> {
    fn log_modulus(&self) -> CiphertextModulusLog {
        match self {
            Switched::Native(m) => m.log_modulus(),
            Switched::Narrow(m) => m.log_modulus(),
        }
    }

    fn lwe_dimension(&self) -> LweDimension {
        match self {
            Switched::Native(m) => m.lwe_dimension(),
            Switched::Narrow(m) => m.lwe_dimension(),
        }
    }

    fn body(&self) -> usize {
        match self {
            Switched::Native(m) => m.body(),
            Switched::Narrow(m) => m.body(),
        }
    }

    fn mask(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        match self {
            Switched::Native(m) => Either::Left(m.mask()),
            Switched::Narrow(m) => Either::Right(m.mask()),
        }
    }
}

/// One of two iterators over the same items.
enum Either<L, R> {
    Left(L),
    Right(R),
}

impl<T, L: Iterator<Item = T>, R: Iterator<Item = T>> Iterator for Either<L, R> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self {
            Either::Left(l) => l.next(),
            Either::Right(r) => r.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Either::Left(l) => l.size_hint(),
            Either::Right(r) => r.size_hint(),
        }
    }
}

impl<T, L: ExactSizeIterator<Item = T>, R: ExactSizeIterator<Item = T>> ExactSizeIterator
    for Either<L, R>
{
}
