//! Several classical KS-PBS in one pass over the keys (issue 84's study,
//! `hearth-bench pbs-cpu`, docs/results/bootstrap-cpu.md).
//!
//! A standard bootstrap reads the whole key switching key (KS32 on
//! `DIGITS_KS32_128`: 2048 x 5 rows of 919 words, 37.6 MB) and the whole
//! Fourier bootstrap key (918 GGSWs of 64 KiB, 60 MB) once per input.
//! [`ManyPbs`] runs `m` inputs with the loops turned round: row (or GGSW)
//! outer, input inner, so each row of a key is fetched from memory once
//! for all `m` and the other `m - 1` uses hit the cache.
//!
//! Every arithmetic step is tfhe-rs's own, in its order: the key switch is
//! tfhe-rs's decomposer and slice product (wrapping integer sums, exact
//! whatever the order); the rotation is tfhe-rs's batched blind rotation
//! ([`FourierLweBootstrapKeyView::batch_blind_rotate_assign`]), or the
//! paired bootstrap's fused steps (`crypto::pair`), both bit for
//! bit tfhe-rs's one-input rotation. So the outputs equal the standard
//! path's ([`ServerKey::bootstrap_input`] on one thread) bit for bit.

use std::time::Duration;

use tfhe::core_crypto::algorithms::polynomial_algorithms::polynomial_wrapping_monic_monomial_div;
use tfhe::core_crypto::algorithms::slice_algorithms::slice_wrapping_sub_scalar_mul_assign;
use tfhe::core_crypto::fft_impl::fft64::c64;
use tfhe::core_crypto::fft_impl::fft64::crypto::bootstrap::{
    batch_blind_rotate_assign_scratch, FourierLweBootstrapKeyView,
};
use tfhe::core_crypto::fft_impl::fft64::crypto::ggsw::FourierGgswCiphertextView;
use tfhe::core_crypto::fft_impl::fft64::math::polynomial::FourierPolynomialMutView;
use tfhe::core_crypto::prelude::*;

use crate::crypto::bootstrap::{pairs, PbsScratch};
use crate::crypto::keys::{FourierKey, KeySwitchKey, ServerKey};
use crate::crypto::pair::{fmadd_two, rotate_subtract_decompose, switched, SmallWord};
use crate::crypto::params::ParameterSet;

/// How the blind rotations of a group run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rotation {
    /// One `blind_rotate_assign_mem_optimized` per input (the standard
    /// path: `m` passes over the bootstrap key).
    Each,
    /// tfhe-rs's `batch_blind_rotate_assign`: GGSW outer, input inner.
    TfheBatch,
    /// The paired bootstrap's fused step (rotate, subtract and decompose
    /// in one pass; both columns' products from one pair of transforms),
    /// GGSW outer, input inner.
    Fused,
}

/// How the key switches of a group run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// tfhe-rs's key switch per input (`m` passes over the key).
    Each,
    /// Row outer, input inner: one pass over the key for the group.
    Batched,
}

/// A way to run a group: key switch, then rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// The key switches.
    pub switch: Switch,
    /// The blind rotations.
    pub rotation: Rotation,
}

impl Mode {
    /// The standard path: `m` independent bootstraps.
    pub const STANDARD: Mode = Mode {
        switch: Switch::Each,
        rotation: Rotation::Each,
    };

    /// The fastest measured (docs/results/bootstrap-cpu.md): one pass
    /// over each key for the group.
    pub const GROUPED: Mode = Mode {
        switch: Switch::Batched,
        rotation: Rotation::Fused,
    };

    /// A short name for tables.
    pub fn name(self) -> String {
        let s = match self.switch {
            Switch::Each => "KS each",
            Switch::Batched => "KS batched",
        };
        let r = match self.rotation {
            Rotation::Each => "BR each",
            Rotation::TfheBatch => "BR tfhe batch",
            Rotation::Fused => "BR fused batch",
        };
        format!("{s}, {r}")
    }
}

/// A blind rotation's input, switched to `2N` once (tfhe-rs's centered
/// switch, read back from its lazy form): indexing a mask element is
/// then O(1), which `batch_blind_rotate_assign` needs (it asks each
/// input for element `i` at step `i`).
struct Switched {
    log_modulus: CiphertextModulusLog,
    body: usize,
    mask: Vec<usize>,
}

impl Switched {
    fn new(params: &ParameterSet) -> Self {
        Switched {
            log_modulus: params.polynomial_size.to_blind_rotation_input_modulus_log(),
            body: 0,
            mask: Vec::with_capacity(params.lwe_dimension.0),
        }
    }

    fn set<S: SmallWord>(&mut self, small: &[S]) {
        let lazy = switched(small, self.log_modulus);
        self.mask.clear();
        self.mask.extend(lazy.mask());
        self.body = lazy.body();
    }
}

impl ModulusSwitchedLweCiphertext<usize> for Switched {
    fn log_modulus(&self) -> CiphertextModulusLog {
        self.log_modulus
    }

    fn lwe_dimension(&self) -> LweDimension {
        LweDimension(self.mask.len())
    }

    fn body(&self) -> usize {
        self.body
    }

    fn mask(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.mask.iter().copied()
    }
}

/// The key-switched inputs of a group, in the small key's word.
enum Smalls {
    Native(Vec<Vec<u64>>),
    Narrow(Vec<Vec<u32>>),
}

/// Buffers of the fused rotation step (shared by the inputs of a group:
/// each input finishes its step before the next starts).
struct FusedBuffers {
    decomposed: [Vec<u64>; 2],
    fourier: [Vec<c64>; 2],
    product: Vec<c64>,
}

/// `m` bootstraps at a time on one thread; see the module docs.
pub struct ManyPbs {
    fft: Fft,
    m: usize,
    standard: PbsScratch,
    smalls: Smalls,
    switched: Vec<Switched>,
    /// `m` accumulators, one after another (a GLWE list).
    glwes: Vec<u64>,
    fused: FusedBuffers,
    digits: Vec<u64>,
    buffers: ComputationBuffers,
}

impl ManyPbs {
    /// Buffers for groups of up to `m` inputs on `key`'s classical,
    /// one-level, `k = 1` set ([`pairs`]); `None` on other sets.
    pub fn new(key: &ServerKey, m: usize) -> Option<Self> {
        let p = key.params();
        if !pairs(p) || m == 0 {
            return None;
        }
        let fft = Fft::new(p.polynomial_size);
        let n = p.polynomial_size.0;
        let glwe_size = p.glwe_dimension.to_glwe_size();
        let small = p.lwe_dimension.to_lwe_size().0;
        let mut buffers = ComputationBuffers::new();
        let view = fft.as_view();
        let req = batch_blind_rotate_assign_scratch::<u64>(
            glwe_size,
            p.polynomial_size,
            CiphertextCount(m),
            view,
        )
        .or(view.forward_scratch())
        .or(view.backward_scratch());
        buffers.resize(req.unaligned_bytes_required());
        let fourier = p.polynomial_size.to_fourier_polynomial_size().0;
        Some(ManyPbs {
            standard: PbsScratch::new(p, view),
            smalls: if p.ks32 {
                Smalls::Narrow(vec![vec![0; small]; m])
            } else {
                Smalls::Native(vec![vec![0; small]; m])
            },
            switched: (0..m).map(|_| Switched::new(p)).collect(),
            glwes: vec![0; m * glwe_size.0 * n],
            fused: FusedBuffers {
                decomposed: [vec![0; n], vec![0; n]],
                fourier: [vec![c64::default(); fourier], vec![c64::default(); fourier]],
                product: vec![c64::default(); fourier],
            },
            digits: vec![0; m * p.ks_level.0],
            buffers,
            fft,
            m,
        })
    }

    /// The group size it was made for.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Bootstraps each of `inputs` (big-key LWE, at most `m`) through
    /// `acc` into the matching output (the table read at offset 0).
    pub fn bootstrap(
        &mut self,
        key: &ServerKey,
        mode: Mode,
        inputs: &[&[u64]],
        acc: &GlweCiphertextOwned<u64>,
        outputs: &mut [LweCiphertextOwned<u64>],
    ) {
        let accs = vec![acc; inputs.len()];
        let offsets = vec![&[0u64][..]; inputs.len()];
        let mut outs: Vec<&mut [LweCiphertextOwned<u64>]> =
            outputs.iter_mut().map(std::slice::from_mut).collect();
        self.bootstrap_tables(key, mode, inputs, &accs, &offsets, &mut outs);
    }

    /// Bootstraps input `j` of `inputs` (big-key LWE, at most `m`) through
    /// `accs[j]`, extracting one output per entry of `offsets[j]` into
    /// `outputs[j]` (as [`ServerKey::bootstrap_input`] does).
    pub fn bootstrap_tables(
        &mut self,
        key: &ServerKey,
        mode: Mode,
        inputs: &[&[u64]],
        accs: &[&GlweCiphertextOwned<u64>],
        offsets: &[&[u64]],
        outputs: &mut [&mut [LweCiphertextOwned<u64>]],
    ) {
        let count = inputs.len();
        assert!(count <= self.m && [accs.len(), offsets.len(), outputs.len()] == [count; 3]);
        if mode == Mode::STANDARD {
            for (((input, acc), offsets), out) in
                inputs.iter().zip(accs).zip(offsets).zip(outputs.iter_mut())
            {
                self.standard.input_mut().copy_from_slice(input);
                key.bootstrap_input(&mut self.standard, acc, offsets, self.fft.as_view(), out);
            }
            return;
        }
        self.switch(key, mode.switch, inputs);
        let p = key.params();
        let len = 2 * p.polynomial_size.0;
        for (glwe, acc) in self.glwes.chunks_exact_mut(len).zip(accs) {
            glwe.copy_from_slice(acc.as_ref());
        }
        self.rotate(key, mode.rotation, count);
        let box_size = (p.polynomial_size.0 >> (p.pi - 1)) as u64;
        for ((glwe, offsets), outs) in self.glwes.chunks_exact(len).zip(offsets).zip(outputs) {
            let glwe = GlweCiphertext::from_container(
                glwe,
                p.polynomial_size,
                CiphertextModulus::new_native(),
            );
            for (out, &offset) in outs.iter_mut().zip(*offsets) {
                extract_lwe_sample_from_glwe_ciphertext(
                    &glwe,
                    out,
                    MonomialDegree((offset * box_size) as usize),
                );
            }
        }
    }

    /// Key switch and modulus switch of `inputs` into `self.switched`.
    fn switch(&mut self, key: &ServerKey, how: Switch, inputs: &[&[u64]]) {
        let (digits, switched) = (&mut self.digits, &mut self.switched);
        match (&key.data.keyswitch_key, &mut self.smalls) {
            (KeySwitchKey::Native(ksk), Smalls::Native(s)) => {
                switch_group(ksk, how, inputs, s, digits, switched)
            }
            (KeySwitchKey::Narrow(ksk), Smalls::Narrow(s)) => {
                switch_group(ksk, how, inputs, s, digits, switched)
            }
            _ => unreachable!("made for its key's parameter set"),
        }
    }

    fn bsk(key: &ServerKey) -> FourierLweBootstrapKeyView<'_> {
        match &key.fourier_bsk {
            FourierKey::Classic(bsk) => bsk.as_view(),
            FourierKey::MultiBit(_) => unreachable!("classical sets only (ManyPbs::new)"),
        }
    }

    /// Blind rotation of the first `count` accumulators by the first
    /// `count` switched inputs.
    fn rotate(&mut self, key: &ServerKey, how: Rotation, count: usize) {
        let p = key.params();
        let fft = self.fft.as_view();
        let bsk = Self::bsk(key);
        let len = 2 * p.polynomial_size.0;
        let glwes = &mut self.glwes[..count * len];
        let switched = &self.switched[..count];
        match how {
            Rotation::Each => {
                for (glwe, msed) in glwes.chunks_exact_mut(len).zip(switched) {
                    let mut glwe = GlweCiphertext::from_container(
                        glwe,
                        p.polynomial_size,
                        CiphertextModulus::new_native(),
                    );
                    blind_rotate_assign_mem_optimized(
                        msed,
                        &mut glwe,
                        &bsk,
                        fft,
                        self.buffers.stack(),
                    );
                }
            }
            Rotation::TfheBatch => {
                let list = GlweCiphertextList::from_container(
                    glwes,
                    p.glwe_dimension.to_glwe_size(),
                    p.polynomial_size,
                    CiphertextModulus::new_native(),
                );
                bsk.batch_blind_rotate_assign(list, switched, fft, self.buffers.stack());
            }
            Rotation::Fused => fused_rotate(
                bsk,
                glwes,
                switched,
                fft,
                &mut self.fused,
                &mut self.buffers,
            ),
        }
    }

    /// Times the pieces of one standard bootstrap of `input` through
    /// `acc` on this thread, `reps` times each (medians): see
    /// [`Profile`]. `clock` reads the time (the bench passes the
    /// thread's CPU time: on a shared machine, time descheduled is not
    /// the bootstrap's).
    pub fn profile(
        &mut self,
        key: &ServerKey,
        input: &[u64],
        acc: &GlweCiphertextOwned<u64>,
        reps: usize,
        clock: fn() -> Duration,
    ) -> Profile {
        let time = |f: &mut dyn FnMut()| {
            let t = clock();
            f();
            clock().saturating_sub(t)
        };
        let p = key.params();
        let n = p.polynomial_size.0;
        let bsk = Self::bsk(key);
        let steps = bsk.input_lwe_dimension().0;
        let mut out = key.new_lwe();
        let mut t = Timings::default();
        let base_log = bsk.decomposition_base_log().0;
        for _ in 0..reps.max(1) {
            t.whole.push(time(&mut || {
                self.standard.input_mut().copy_from_slice(input);
                key.bootstrap_input(
                    &mut self.standard,
                    acc,
                    &[0],
                    self.fft.as_view(),
                    std::slice::from_mut(&mut out),
                );
            }));
            t.key_switch.push(time(
                &mut || match (&key.data.keyswitch_key, &mut self.smalls) {
                    (KeySwitchKey::Native(ksk), Smalls::Native(s)) => {
                        key_switch_one(ksk, input, &mut s[0])
                    }
                    (KeySwitchKey::Narrow(ksk), Smalls::Narrow(s)) => {
                        key_switch_one(ksk, input, &mut s[0])
                    }
                    _ => unreachable!("made for its key's parameter set"),
                },
            ));
            t.modulus_switch.push(time(&mut || match &self.smalls {
                Smalls::Native(s) => self.switched[0].set(&s[0]),
                Smalls::Narrow(s) => self.switched[0].set(&s[0]),
            }));
            self.glwes[..2 * n].copy_from_slice(acc.as_ref());
            t.rotation
                .push(time(&mut || self.rotate(key, Rotation::Each, 1)));
            self.glwes[..2 * n].copy_from_slice(acc.as_ref());
            t.fused
                .push(time(&mut || self.rotate(key, Rotation::Fused, 1)));
            let fft = self.fft.as_view();
            let glwe = GlweCiphertext::from_container(
                &self.glwes[..2 * n],
                p.polynomial_size,
                CiphertextModulus::new_native(),
            );
            t.extract.push(time(&mut || {
                extract_lwe_sample_from_glwe_ciphertext(&glwe, &mut out, MonomialDegree(0))
            }));

            // The rotation's parts, each run for every step of the key on
            // the accumulator's two polynomials, as the fused step runs
            // them (the transforms' inputs are the decomposed polynomials
            // of the step).
            let (poly0, poly1) = self.glwes[..2 * n].split_at(n);
            let f = &mut self.fused;
            let mask = &self.switched[0].mask;
            t.decompose.push(time(&mut || {
                for &a in mask.iter().take(steps) {
                    rotate_subtract_decompose(poly0, a, base_log, &mut f.decomposed[0]);
                    rotate_subtract_decompose(poly1, a, base_log, &mut f.decomposed[1]);
                }
            }));
            let stack = self.buffers.stack();
            t.forward.push(time(&mut || {
                for _ in 0..steps {
                    for (four, dec) in f.fourier.iter_mut().zip(&f.decomposed) {
                        fft.forward_as_integer(
                            FourierPolynomialMutView { data: four },
                            Polynomial::from_container(&dec[..]),
                            &mut *stack,
                        );
                    }
                }
            }));
            let half = n / 2;
            let fmadd_key = |ggsw: FourierGgswCiphertextView<'_>, product: &mut [c64]| {
                let level = ggsw.into_levels().next().expect("one level");
                let mut rows = level.into_rows();
                let (r0, r1) = (rows.next().expect("row 0"), rows.next().expect("row 1"));
                let (r0, r1) = (r0.data(), r1.data());
                for col in 0..2 {
                    let c = col * half..(col + 1) * half;
                    fmadd_two(
                        product,
                        [&r0[c.clone()], &r1[c]],
                        [&f.fourier[0], &f.fourier[1]],
                    );
                }
            };
            let mut product = vec![c64::default(); half];
            t.fmadd.push(time(&mut || {
                for ggsw in bsk.into_ggsw_iter() {
                    fmadd_key(ggsw, &mut product);
                }
            }));
            let first = bsk.into_ggsw_iter().next().expect("a GGSW");
            t.fmadd_cached.push(time(&mut || {
                for _ in 0..steps {
                    fmadd_key(first, &mut product);
                }
            }));
            let mut poly = vec![0u64; n];
            t.backward.push(time(&mut || {
                for _ in 0..steps {
                    for _ in 0..2 {
                        f.product.copy_from_slice(&f.fourier[0]);
                        fft.add_backward_in_place_as_torus(
                            Polynomial::from_container(&mut poly[..]),
                            FourierPolynomialMutView {
                                data: &mut f.product,
                            },
                            &mut *stack,
                        );
                    }
                }
            }));
        }
        t.profile()
    }
}

/// Medians of one bootstrap's pieces on one thread ([`ManyPbs::profile`]).
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// The whole standard bootstrap (`ServerKey::bootstrap_input`).
    pub whole: Duration,
    /// tfhe-rs's key switch (KS32: with the scalar change).
    pub key_switch: Duration,
    /// The centered modulus switch to `2N` (read out of its lazy form).
    pub modulus_switch: Duration,
    /// `blind_rotate_assign_mem_optimized`.
    pub rotation: Duration,
    /// The fused rotation on one input.
    pub fused: Duration,
    /// One sample extraction.
    pub extract: Duration,
    /// The rotation's parts over all steps: rotate, subtract and
    /// decompose both polynomials.
    pub decompose: Duration,
    /// Two forward transforms per step.
    pub forward: Duration,
    /// Both columns' products per step, streaming the key's GGSWs.
    pub fmadd: Duration,
    /// The same products on one GGSW (in cache) every step.
    pub fmadd_cached: Duration,
    /// Two inverse transforms (added to a polynomial) per step.
    pub backward: Duration,
}

impl Profile {
    /// The parts by name, the whole bootstrap first.
    pub fn parts(&self) -> [(&'static str, Duration); 11] {
        [
            ("whole bootstrap", self.whole),
            ("key switch", self.key_switch),
            ("modulus switch", self.modulus_switch),
            ("blind rotation (tfhe-rs)", self.rotation),
            ("blind rotation (fused)", self.fused),
            ("sample extraction", self.extract),
            ("rotate+subtract+decompose", self.decompose),
            ("forward FFTs", self.forward),
            ("fmadd (key streamed)", self.fmadd),
            ("fmadd (one GGSW, cached)", self.fmadd_cached),
            ("inverse FFTs", self.backward),
        ]
    }
}

#[derive(Default)]
struct Timings {
    whole: Vec<Duration>,
    key_switch: Vec<Duration>,
    modulus_switch: Vec<Duration>,
    rotation: Vec<Duration>,
    fused: Vec<Duration>,
    extract: Vec<Duration>,
    decompose: Vec<Duration>,
    forward: Vec<Duration>,
    fmadd: Vec<Duration>,
    fmadd_cached: Vec<Duration>,
    backward: Vec<Duration>,
}

impl Timings {
    fn profile(self) -> Profile {
        let m = |mut v: Vec<Duration>| {
            v.sort();
            v.get(v.len() / 2).copied().unwrap_or_default()
        };
        Profile {
            whole: m(self.whole),
            key_switch: m(self.key_switch),
            modulus_switch: m(self.modulus_switch),
            rotation: m(self.rotation),
            fused: m(self.fused),
            extract: m(self.extract),
            decompose: m(self.decompose),
            forward: m(self.forward),
            fmadd: m(self.fmadd),
            fmadd_cached: m(self.fmadd_cached),
            backward: m(self.backward),
        }
    }
}

/// tfhe-rs's key switch of one input into `small`.
fn key_switch_one<S: SmallWord>(ksk: &LweKeyswitchKeyOwned<S>, input: &[u64], small: &mut [S]) {
    let input = LweCiphertext::from_container(input, CiphertextModulus::new_native());
    let mut out = LweCiphertext::from_container(small, ksk.ciphertext_modulus());
    S::key_switch(&ksk.as_view(), &input, &mut out);
}

/// Key switch (`how`) and modulus switch of `inputs` into `switched`.
fn switch_group<S: SmallWord>(
    ksk: &LweKeyswitchKeyOwned<S>,
    how: Switch,
    inputs: &[&[u64]],
    smalls: &mut [Vec<S>],
    digits: &mut [u64],
    switched: &mut [Switched],
) {
    let smalls = &mut smalls[..inputs.len()];
    match how {
        Switch::Each => {
            for (input, small) in inputs.iter().zip(smalls.iter_mut()) {
                key_switch_one(ksk, input, small);
            }
        }
        Switch::Batched => key_switch_batched(ksk, inputs, smalls, digits),
    }
    for (small, msed) in smalls.iter().zip(switched) {
        msed.set(small);
    }
}

/// tfhe-rs's key switch of every input, row of the key outer, input
/// inner: the same digits and the same wrapping products as
/// `keyswitch_lwe_ciphertext(_with_scalar_change)`, summed in another
/// order (exact: integers modulo the word).
fn key_switch_batched<S: SmallWord>(
    ksk: &LweKeyswitchKeyOwned<S>,
    inputs: &[&[u64]],
    smalls: &mut [Vec<S>],
    digits: &mut [u64],
) {
    let levels = ksk.decomposition_level_count().0;
    let decomposer = SignedDecomposer::<u64>::new(
        ksk.decomposition_base_log(),
        ksk.decomposition_level_count(),
    );
    let big = ksk.input_key_lwe_dimension().0;
    for (input, small) in inputs.iter().zip(smalls.iter_mut()) {
        small.fill(S::ZERO);
        *small.last_mut().expect("a body") = S::switched_body(input[big]);
    }
    for (i, block) in ksk.iter().enumerate() {
        for (input, d) in inputs.iter().zip(digits.chunks_exact_mut(levels)) {
            for (d, term) in d.iter_mut().zip(decomposer.decompose(input[i])) {
                *d = term.value();
            }
        }
        for (l, row) in block.iter().enumerate() {
            for (small, d) in smalls.iter_mut().zip(digits.chunks_exact(levels)) {
                if d[l] != 0 {
                    slice_wrapping_sub_scalar_mul_assign(small, row.as_ref(), S::cast_from(d[l]));
                }
            }
        }
    }
}

/// The fused blind rotation of the accumulators `glwes` (each `2N`
/// words) by `switched`, GGSW outer, accumulator inner.
fn fused_rotate(
    bsk: FourierLweBootstrapKeyView<'_>,
    glwes: &mut [u64],
    switched: &[Switched],
    fft: FftView<'_>,
    f: &mut FusedBuffers,
    buffers: &mut ComputationBuffers,
) {
    let n = bsk.polynomial_size().0;
    let half = n / 2;
    let base_log = bsk.decomposition_base_log().0;
    let mut turned = vec![0u64; n];
    for (glwe, msed) in glwes.chunks_exact_mut(2 * n).zip(switched) {
        for poly in glwe.chunks_exact_mut(n) {
            turned.copy_from_slice(poly);
            polynomial_wrapping_monic_monomial_div(
                &mut Polynomial::from_container(poly),
                &Polynomial::from_container(&turned[..]),
                MonomialDegree(msed.body),
            );
        }
    }
    let stack = buffers.stack();
    for (i, ggsw) in bsk.into_ggsw_iter().enumerate() {
        let level = ggsw.into_levels().next().expect("one level");
        let mut rows = level.into_rows();
        let (r0, r1) = (rows.next().expect("row 0"), rows.next().expect("row 1"));
        let (r0, r1) = (r0.data(), r1.data());
        for (glwe, msed) in glwes.chunks_exact_mut(2 * n).zip(switched) {
            let a = msed.mask[i];
            if a == 0 {
                continue;
            }
            let (p0, p1) = glwe.split_at_mut(n);
            rotate_subtract_decompose(p0, a, base_log, &mut f.decomposed[0]);
            rotate_subtract_decompose(p1, a, base_log, &mut f.decomposed[1]);
            for (four, dec) in f.fourier.iter_mut().zip(&f.decomposed) {
                fft.forward_as_integer(
                    FourierPolynomialMutView { data: four },
                    Polynomial::from_container(&dec[..]),
                    &mut *stack,
                );
            }
            for (col, poly) in [p0, p1].into_iter().enumerate() {
                let c = col * half..(col + 1) * half;
                fmadd_two(
                    &mut f.product,
                    [&r0[c.clone()], &r1[c]],
                    [&f.fourier[0], &f.fourier[1]],
                );
                fft.add_backward_in_place_as_torus(
                    Polynomial::from_container(poly),
                    FourierPolynomialMutView {
                        data: &mut f.product,
                    },
                    &mut *stack,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::bootstrap::{accumulator, dense_slots};
    use crate::crypto::params::{DIGITS_128, DIGITS_KS32_128};
    use crate::testing::keys::keys;
    use crate::Lut;

    /// On both key-switch widths, every mode gives the standard path's
    /// outputs bit for bit, for groups of 1 to 4 random-valued inputs
    /// (and a short group), and they decrypt to the table's values.
    #[test]
    fn every_mode_is_the_standard_bootstrap_bit_for_bit() {
        for params in [&DIGITS_KS32_128, &DIGITS_128] {
            let (client, server) = keys(params);
            let half = params.message_modulus() / 2;
            let f = |x: i64| (3 * x + 1) % half as i64;
            let lut = Lut::negacyclic(params.pi, f).unwrap();
            let acc = accumulator(params, &dense_slots(lut.table()));
            let mut many = ManyPbs::new(server, 4).unwrap();
            let values: Vec<i64> = (0..4).map(|i| (i * 5 + 3) % half as i64).collect();
            let cts: Vec<_> = values.iter().map(|&v| client.encrypt(v).unwrap()).collect();
            let inputs: Vec<&[u64]> = cts.iter().map(|c| c.lwe().as_ref()).collect();
            let run = |many: &mut ManyPbs, mode: Mode, k: usize| {
                let mut outs: Vec<_> = (0..k).map(|_| server.new_lwe()).collect();
                many.bootstrap(server, mode, &inputs[..k], &acc, &mut outs);
                outs
            };
            let standard = run(&mut many, Mode::STANDARD, 4);
            for (o, &v) in standard.iter().zip(&values) {
                let ct = crate::Ciphertext::from_lwe(params.id, server.key_id(), o.clone());
                assert_eq!(client.decrypt(&ct).unwrap(), f(v) as u64);
            }
            for switch in [Switch::Each, Switch::Batched] {
                for rotation in [Rotation::Each, Rotation::TfheBatch, Rotation::Fused] {
                    let mode = Mode { switch, rotation };
                    assert_eq!(run(&mut many, mode, 4), standard, "{}", mode.name());
                    assert_eq!(run(&mut many, mode, 3), standard[..3], "{}", mode.name());
                }
            }
        }
    }
}
