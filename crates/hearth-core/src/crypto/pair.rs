//! One classical KS-PBS on two threads, for the moments a circuit has a
//! single bootstrap ready and a second thread would idle (a carry chain).
//!
//! With `k = 1` the accumulator is two polynomials, and each step of the
//! blind rotation treats them alike: thread `t` rotates and decomposes
//! polynomial `t`, transforms it, and once both transforms are published
//! multiplies them by column `t` of the step's GGSW and adds the inverse
//! transform to its own polynomial. The only exchange per step is the two
//! forward transforms (double-buffered, so one wait per step suffices);
//! the key switch is split by input coefficients, whose partial sums add
//! exactly. Every operation is tfhe-rs's own (its FFT, decomposer, key
//! switch and modulus switch) in tfhe-rs's order, so the result is the
//! single-threaded bootstrap's bit for bit.
//!
//! The helper half is offered to the rayon pool the caller runs on; if no
//! thread takes it by the time the calling thread has switched its half of
//! the key, the calling thread does the whole bootstrap alone.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use tfhe::core_crypto::algorithms::polynomial_algorithms::polynomial_wrapping_monic_monomial_div;
use tfhe::core_crypto::fft_impl::fft64::c64;
use tfhe::core_crypto::fft_impl::fft64::crypto::bootstrap::FourierLweBootstrapKeyView;
use tfhe::core_crypto::fft_impl::fft64::math::polynomial::FourierPolynomialMutView;
use tfhe::core_crypto::prelude::*;

use crate::crypto::params::ParameterSet;

const OPEN: u8 = 0;
const JOINED: u8 = 1;
const SOLO: u8 = 2;
/// The step a half publishes when it has finished.
const DONE: usize = usize::MAX;

/// A counter alone on its cache line (the two threads poll each other's).
#[repr(align(128))]
struct Step(AtomicUsize);

/// What the two halves share.
pub(crate) struct Exchange<S> {
    /// The key switch's partial sums, one per half of the input.
    partial: [UnsafeCell<Vec<S>>; 2],
    /// Forward transforms of the decomposed polynomials: `[parity][t]`.
    fourier: [[UnsafeCell<Vec<c64>>; 2]; 2],
    /// Steps each half has published (1: its partial key switch).
    steps: [Step; 2],
    state: AtomicU8,
}

// SAFETY: a buffer `partial[t]` or `fourier[p][t]` is written only by half
// `t`, and read by the other half only after `steps[t]` (a release store,
// read with acquire) says it is complete; half `t` writes
// `fourier[p][t]` again two steps later, which it reaches only after the
// other half has published the next step, i.e. finished reading it.
unsafe impl<S: Send> Sync for Exchange<S> {}

impl<S: UnsignedInteger> Exchange<S> {
    pub(crate) fn new(params: &ParameterSet) -> Self {
        let small = params.lwe_dimension.to_lwe_size().0;
        let fourier = params.polynomial_size.to_fourier_polynomial_size().0;
        let buf = || UnsafeCell::new(vec![c64::default(); fourier]);
        Exchange {
            partial: [
                UnsafeCell::new(vec![S::ZERO; small]),
                UnsafeCell::new(vec![S::ZERO; small]),
            ],
            fourier: [[buf(), buf()], [buf(), buf()]],
            steps: [Step(AtomicUsize::new(0)), Step(AtomicUsize::new(0))],
            state: AtomicU8::new(OPEN),
        }
    }

    fn publish(&self, t: usize, step: usize) {
        self.steps[t].0.store(step, Ordering::Release);
    }

    /// Waits until the other half has published `step`.
    fn wait(&self, t: usize, step: usize) {
        let mut spins = 0u32;
        while self.steps[1 - t].0.load(Ordering::Acquire) < step {
            spins += 1;
            if spins < 4096 {
                std::hint::spin_loop();
            } else {
                // The other half may be descheduled (more threads than
                // cores): let it run.
                std::thread::yield_now();
            }
        }
    }
}

/// Per-half buffers.
struct Local {
    /// The accumulator polynomial before its turn by the body.
    rotated: Vec<u64>,
    decomposed: Vec<u64>,
    product: Vec<c64>,
    buffers: ComputationBuffers,
}

impl Local {
    fn new(params: &ParameterSet, fft: FftView<'_>) -> Self {
        let n = params.polynomial_size.0;
        let fourier = params.polynomial_size.to_fourier_polynomial_size().0;
        let mut buffers = ComputationBuffers::new();
        let req = fft.forward_scratch().or(fft.backward_scratch());
        buffers.resize(req.unaligned_bytes_required());
        Local {
            rotated: vec![0; n],
            decomposed: vec![0; n],
            product: vec![c64::default(); fourier],
            buffers,
        }
    }
}

/// The small LWE's word, and how tfhe-rs key-switches onto it.
pub(crate) trait SmallWord:
    UnsignedTorus + CastInto<usize> + CastFrom<u64> + Send + Sync
{
    /// The key switch's output body for the input body `b`: `b` itself,
    /// or for KS32 `b` rounded to its top 32 bits.
    fn switched_body(b: u64) -> Self;

    fn key_switch(
        ksk: &LweKeyswitchKey<&[Self]>,
        input: &LweCiphertext<&[u64]>,
        out: &mut LweCiphertext<&mut [Self]>,
    );
}

impl SmallWord for u64 {
    fn switched_body(b: u64) -> u64 {
        b
    }

    fn key_switch(
        ksk: &LweKeyswitchKey<&[u64]>,
        input: &LweCiphertext<&[u64]>,
        out: &mut LweCiphertext<&mut [u64]>,
    ) {
        keyswitch_lwe_ciphertext(ksk, input, out);
    }
}

/// KS32 sets: the key switch lands on 32-bit words.
impl SmallWord for u32 {
    fn switched_body(b: u64) -> u32 {
        let rounding =
            SignedDecomposer::<u64>::new(DecompositionBaseLog(32), DecompositionLevelCount(1));
        (rounding.closest_representable(b) >> 32) as u32
    }

    fn key_switch(
        ksk: &LweKeyswitchKey<&[u32]>,
        input: &LweCiphertext<&[u64]>,
        out: &mut LweCiphertext<&mut [u32]>,
    ) {
        keyswitch_lwe_ciphertext_with_scalar_change(ksk, input, out);
    }
}

/// The key switch of input coefficients `range` (with the body when it
/// starts at 0) into `out`: the output is the sum of both halves' outputs.
fn switch_part<S: SmallWord>(
    ksk: &LweKeyswitchKeyOwned<S>,
    input: &[u64],
    t: usize,
    out: &mut [S],
) {
    let big = input.len() - 1;
    let half = big / 2;
    let range = if t == 0 { 0..half } else { half..big };
    let per = ksk.decomposition_level_count().0 * ksk.output_lwe_size().0;
    let sub_ksk = LweKeyswitchKey::from_container(
        &ksk.as_ref()[range.start * per..range.end * per],
        ksk.decomposition_base_log(),
        ksk.decomposition_level_count(),
        ksk.output_lwe_size(),
        ksk.ciphertext_modulus(),
    );
    let mut sub_input: Vec<u64> = input[range].to_vec();
    sub_input.push(if t == 0 { input[big] } else { 0 });
    let sub_input = LweCiphertext::from_container(&sub_input[..], CiphertextModulus::new_native());
    let mut sub_out = LweCiphertext::from_container(out, ksk.ciphertext_modulus());
    S::key_switch(&sub_ksk, &sub_input, &mut sub_out);
}

/// Half `t` of the key switch for `key`, into the exchange.
fn switch_half<S: SmallWord>(
    ex: &Exchange<S>,
    ksk: &LweKeyswitchKeyOwned<S>,
    input: &[u64],
    t: usize,
) {
    // SAFETY: half `t` alone writes `partial[t]`, before publishing step 1.
    let out = unsafe { &mut *ex.partial[t].get() };
    switch_part(ksk, input, t, out);
}

/// The small LWE: both partial sums added (after both published step 1).
fn small_lwe<S: UnsignedInteger>(ex: &Exchange<S>) -> Vec<S> {
    // SAFETY: both partials are complete (steps 1 published) and no half
    // writes them again during this bootstrap.
    let (a, b) = unsafe { (&*ex.partial[0].get(), &*ex.partial[1].get()) };
    a.iter().zip(b).map(|(&x, &y)| x.wrapping_add(y)).collect()
}

/// Half `t` of the blind rotation of `poly` (polynomial `t` of the
/// accumulator) by `msed`.
fn rotate_half<S: UnsignedInteger>(
    ex: &Exchange<S>,
    t: usize,
    poly: &mut [u64],
    msed: &impl ModulusSwitchedLweCiphertext<usize>,
    bsk: FourierLweBootstrapKeyView<'_>,
    fft: FftView<'_>,
    local: &mut Local,
) {
    let base_log = bsk.decomposition_base_log().0;
    let fourier_size = poly.len() / 2;
    {
        local.rotated.copy_from_slice(poly);
        let mut out = Polynomial::from_container(&mut *poly);
        polynomial_wrapping_monic_monomial_div(
            &mut out,
            &Polynomial::from_container(&local.rotated[..]),
            MonomialDegree(msed.body()),
        );
    }
    let mut step = 1;
    for (a, ggsw) in msed.mask().zip(bsk.into_ggsw_iter()) {
        if a == 0 {
            continue;
        }
        step += 1;
        let parity = step % 2;
        rotate_subtract_decompose(poly, a, base_log, &mut local.decomposed);
        {
            // SAFETY: see `Exchange`: this half owns `fourier[parity][t]`
            // until it publishes `step`.
            let mine = unsafe { &mut *ex.fourier[parity][t].get() };
            fft.forward_as_integer(
                FourierPolynomialMutView {
                    data: &mut mine[..],
                },
                Polynomial::from_container(&local.decomposed[..]),
                local.buffers.stack(),
            );
        }
        ex.publish(t, step);
        ex.wait(t, step);
        // SAFETY: both transforms of this step are published; neither is
        // written again before the other half publishes the next step.
        let (f0, f1) = unsafe { (&*ex.fourier[parity][0].get(), &*ex.fourier[parity][1].get()) };
        let level = ggsw.into_levels().next().expect("one level");
        let mut rows = level.into_rows();
        let (r0, r1) = (
            rows.next().expect("row 0").data(),
            rows.next().expect("row 1").data(),
        );
        let column = t * fourier_size..(t + 1) * fourier_size;
        fmadd_two(
            &mut local.product,
            [&r0[column.clone()], &r1[column]],
            [f0, f1],
        );
        fft.add_backward_in_place_as_torus(
            Polynomial::from_container(&mut *poly),
            FourierPolynomialMutView {
                data: &mut local.product[..],
            },
            local.buffers.stack(),
        );
    }
}

/// The one-level signed decomposition of `x` with base `2^base_log`, as
/// tfhe-rs's `SignedDecomposer` gives it: `x` rounded to its top
/// `base_log` bits (half up), as a digit in `[-B/2, B/2]` of which `B/2`
/// stays positive only when the rounding did not carry into it.
#[inline(always)]
fn digit(x: u64, base_log: usize) -> u64 {
    let below = x >> (63 - base_log);
    let rounding = below & 1;
    let res = ((below + 1) >> 1) & ((1u64 << base_log) - 1);
    // Above half, or at half with the rounding bit set: negative.
    let negative = (res + rounding > 1 << (base_log - 1)) as u64;
    res.wrapping_sub(negative << base_log)
}

/// `out = decompose(poly * X^a - poly)` (negacyclic), one pass.
pub(crate) fn rotate_subtract_decompose(poly: &[u64], a: usize, base_log: usize, out: &mut [u64]) {
    let n = poly.len();
    let shift = a % n;
    // `(x ^ m) - m` is `x` for `m = 0` and `-x` for `m = !0`.
    let m = if (a / n) % 2 == 1 { u64::MAX } else { 0 };
    let (wrapped, straight) = out.split_at_mut(shift);
    for ((o, &src), &p) in straight
        .iter_mut()
        .zip(&poly[..n - shift])
        .zip(&poly[shift..])
    {
        let turned = (src ^ m).wrapping_sub(m);
        *o = digit(turned.wrapping_sub(p), base_log);
    }
    let m = !m;
    for ((o, &src), &p) in wrapped
        .iter_mut()
        .zip(&poly[n - shift..])
        .zip(&poly[..shift])
    {
        let turned = (src ^ m).wrapping_sub(m);
        *o = digit(turned.wrapping_sub(p), base_log);
    }
}

/// `out = rows[0] * f[0] + rows[1] * f[1]`, with the products in
/// tfhe-rs's order (the first a product, the second fused onto it).
pub(crate) fn fmadd_two(out: &mut [c64], rows: [&[c64]; 2], f: [&[c64]; 2]) {
    struct Impl<'a> {
        out: &'a mut [c64],
        rows: [&'a [c64]; 2],
        f: [&'a [c64]; 2],
    }
    impl pulp::WithSimd for Impl<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, simd: S) {
            let out = S::as_mut_simd_c64s(self.out).0;
            let (a0, x0) = (
                S::as_simd_c64s(self.rows[0]).0,
                S::as_simd_c64s(self.f[0]).0,
            );
            let (a1, x1) = (
                S::as_simd_c64s(self.rows[1]).0,
                S::as_simd_c64s(self.f[1]).0,
            );
            for ((((o, a0), x0), a1), x1) in out.iter_mut().zip(a0).zip(x0).zip(a1).zip(x1) {
                let p = simd.mul_c64s(*a0, *x0);
                *o = simd.mul_add_c64s(*a1, *x1, p);
            }
        }
    }
    pulp::Arch::new().dispatch(Impl { out, rows, f });
}

/// The small LWE modulus-switched to `2N` (lazily, as tfhe-rs does).
pub(crate) fn switched<S: UnsignedInteger + CastInto<usize>>(
    small: &[S],
    log_modulus: CiphertextModulusLog,
) -> LazyStandardModulusSwitchedLweCiphertext<S, usize, &[S]> {
    lwe_ciphertext_centered_binary_modulus_switch(
        LweCiphertext::from_container(small, CiphertextModulus::new_native()),
        log_modulus,
    )
}

/// A raw pointer to the accumulator, handed to the helper half.
#[derive(Clone, Copy)]
struct Accumulator(*mut u64);

// SAFETY: the halves touch disjoint polynomials (see `paired`).
unsafe impl Send for Accumulator {}
unsafe impl Sync for Accumulator {}

impl Accumulator {
    /// The pointer (a method, so closures capture the wrapper whole).
    fn get(self) -> *mut u64 {
        self.0
    }
}

/// Half `t` once both partial key switches are published: the small
/// LWE, then the rotation of polynomial `t` of the accumulator.
#[allow(clippy::too_many_arguments)]
fn rotate_paired<S: SmallWord>(
    ex: &Exchange<S>,
    t: usize,
    acc: Accumulator,
    n: usize,
    log_modulus: CiphertextModulusLog,
    params: &ParameterSet,
    bsk: FourierLweBootstrapKeyView<'_>,
    fft: FftView<'_>,
) {
    ex.wait(t, 1);
    let small = small_lwe(ex);
    // SAFETY: paired (state JOINED): half `t` alone owns polynomial `t`.
    let poly = unsafe { std::slice::from_raw_parts_mut(acc.get().add(t * n), n) };
    let mut local = Local::new(params, fft);
    rotate_half(
        ex,
        t,
        poly,
        &switched(&small, log_modulus),
        bsk,
        fft,
        &mut local,
    );
}

/// Whether the calling half waits for a helper.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Helper {
    /// Offer the helper half; if no thread took it once this thread has
    /// switched its half of the key, do the rest alone.
    Offer,
    /// Wait for a helper (tests: the paired path, whatever the load; the
    /// pool must have a second thread).
    #[cfg_attr(not(test), allow(dead_code))]
    Await,
}

/// Key switch, modulus switch and blind rotation of `input` into `glwe`
/// (the accumulator, `2N` coefficients), on two threads when the pool
/// lends a second. Returns whether it was paired.
#[allow(clippy::too_many_arguments)]
pub(crate) fn key_switch_and_rotate<S: SmallWord>(
    params: &ParameterSet,
    ksk: &LweKeyswitchKeyOwned<S>,
    bsk: FourierLweBootstrapKeyView<'_>,
    input: &[u64],
    glwe: &mut [u64],
    fft: FftView<'_>,
    stack: &mut PodStack,
    helper: Helper,
) -> bool {
    let n = params.polynomial_size.0;
    debug_assert_eq!(glwe.len(), 2 * n);
    let log_modulus = params.polynomial_size.to_blind_rotation_input_modulus_log();
    let ex = Exchange::<S>::new(params);
    let acc = Accumulator(glwe.as_mut_ptr());
    let (paired, ()) = rayon::join(
        || {
            switch_half(&ex, ksk, input, 0);
            ex.publish(0, 1);
            if helper == Helper::Await {
                while ex.state.load(Ordering::Acquire) == OPEN {
                    std::thread::yield_now();
                }
            }
            if ex
                .state
                .compare_exchange(OPEN, SOLO, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                // No helper came: the rest on this thread, the whole
                // accumulator ours.
                switch_half(&ex, ksk, input, 1);
                let small = small_lwe(&ex);
                // SAFETY: the helper never started (state SOLO), so this
                // thread alone holds the accumulator.
                let whole = unsafe { std::slice::from_raw_parts_mut(acc.get(), 2 * n) };
                let mut lut = GlweCiphertext::from_container(
                    whole,
                    params.polynomial_size,
                    CiphertextModulus::new_native(),
                );
                blind_rotate_assign_mem_optimized(
                    &switched(&small, log_modulus),
                    &mut lut,
                    &bsk,
                    fft,
                    stack,
                );
                return false;
            }
            rotate_paired(&ex, 0, acc, n, log_modulus, params, bsk, fft);
            // Return when the helper has: the join then waits no more
            // (a thread waiting in a join may run other jobs).
            ex.wait(0, DONE);
            true
        },
        || {
            if ex
                .state
                .compare_exchange(OPEN, JOINED, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                return;
            }
            switch_half(&ex, ksk, input, 1);
            ex.publish(1, 1);
            rotate_paired(&ex, 1, acc, n, log_modulus, params, bsk, fft);
            ex.publish(1, DONE);
        },
    );
    paired
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::bootstrap::{accumulator, dense_slots, PbsScratch};
    use crate::crypto::keys::{FourierKey, KeySwitchKey};
    use crate::crypto::params::{DIGITS_128, DIGITS_KS32_128};
    use crate::testing::keys::keys;
    use crate::{Ciphertext, Lut};
    use tfhe::core_crypto::algorithms::polynomial_algorithms::polynomial_wrapping_monic_monomial_mul;

    /// On both key-switch widths, a bootstrap given two threads gives the
    /// one-thread bootstrap's ciphertexts bit for bit (whether a helper
    /// joined or not) and decrypts to the table's value; the paired path
    /// itself, forced, equals tfhe-rs's one-thread rotation.
    #[test]
    fn paired_bootstrap_is_the_single_one_bit_for_bit() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for params in [&DIGITS_KS32_128, &DIGITS_128] {
            let (client, server) = keys(params);
            assert!(crate::crypto::bootstrap::pairs(params));
            let FourierKey::Classic(bsk) = &server.fourier_bsk else {
                panic!("classical sets")
            };
            let fft = Fft::new(params.polynomial_size);
            let half = params.message_modulus() / 2;
            let f = |x: i64| (3 * x + 1) % half as i64;
            let lut = Lut::negacyclic(params.pi, f).unwrap();
            let acc = accumulator(params, &dense_slots(lut.table()));
            let mut single = PbsScratch::new(params, fft.as_view());
            let mut paired = PbsScratch::new(params, fft.as_view());
            paired.set_threads(2);
            for x in 0..half {
                let ct = client.encrypt(x as i64).unwrap();
                let mut outs = [
                    [server.new_lwe(), server.new_lwe()],
                    [server.new_lwe(), server.new_lwe()],
                ];
                for (scratch, out) in [&mut single, &mut paired].into_iter().zip(&mut outs) {
                    scratch.input_mut().copy_from_slice(ct.lwe().as_ref());
                    pool.install(|| {
                        server.bootstrap_input(scratch, &acc, &[0, 1], fft.as_view(), out)
                    });
                }
                for (a, b) in outs[0].iter().zip(&outs[1]) {
                    assert_eq!(a.as_ref(), b.as_ref(), "{}: x = {x}", params.name);
                }
                let [y, _] = outs[1].clone();
                let y = Ciphertext::from_lwe(params.id, client.key_id(), y);
                assert_eq!(
                    client.decrypt(&y).unwrap() as i64,
                    f(x as i64),
                    "{}: x = {x}",
                    params.name
                );
                // Directly, with the caller waiting for its helper, so the
                // paired path runs whatever the machine's load: it equals
                // tfhe-rs's whole key switch and blind rotation.
                let input = ct.lwe().as_ref();
                let (paired, alone) = match &server.data.keyswitch_key {
                    KeySwitchKey::Native(ksk) => {
                        both_ways(&pool, params, ksk, bsk.as_view(), input, acc.as_ref(), &fft)
                    }
                    KeySwitchKey::Narrow(ksk) => {
                        both_ways(&pool, params, ksk, bsk.as_view(), input, acc.as_ref(), &fft)
                    }
                };
                assert_eq!(paired, alone, "{}: x = {x}", params.name);
            }
        }
    }

    /// The accumulator rotated by `input` on two halves (the caller
    /// waiting for its helper), and by tfhe-rs's whole key switch and
    /// blind rotation.
    fn both_ways<S: SmallWord>(
        pool: &rayon::ThreadPool,
        params: &ParameterSet,
        ksk: &LweKeyswitchKeyOwned<S>,
        bsk: FourierLweBootstrapKeyView<'_>,
        input: &[u64],
        acc: &[u64],
        fft: &Fft,
    ) -> (Vec<u64>, Vec<u64>) {
        let mut buffers = ComputationBuffers::new();
        buffers.resize(
            blind_rotate_assign_mem_optimized_requirement::<u64>(
                params.glwe_dimension.to_glwe_size(),
                params.polynomial_size,
                fft.as_view(),
            )
            .unaligned_bytes_required(),
        );
        let mut paired = acc.to_vec();
        let joined = pool.install(|| {
            key_switch_and_rotate(
                params,
                ksk,
                bsk,
                input,
                &mut paired,
                fft.as_view(),
                buffers.stack(),
                Helper::Await,
            )
        });
        assert!(
            joined,
            "{}: the caller went on without its helper",
            params.name
        );
        let mut small = vec![S::ZERO; ksk.output_lwe_size().0];
        S::key_switch(
            &ksk.as_view(),
            &LweCiphertext::from_container(input, CiphertextModulus::new_native()),
            &mut LweCiphertext::from_container(&mut small[..], ksk.ciphertext_modulus()),
        );
        let mut alone = acc.to_vec();
        blind_rotate_assign_mem_optimized(
            &switched(
                &small,
                params.polynomial_size.to_blind_rotation_input_modulus_log(),
            ),
            &mut GlweCiphertext::from_container(
                &mut alone[..],
                params.polynomial_size,
                CiphertextModulus::new_native(),
            ),
            &bsk,
            fft.as_view(),
            buffers.stack(),
        );
        (paired, alone)
    }

    /// The fused rotation and decomposition equal tfhe-rs's monomial
    /// product and `SignedDecomposer`, on random polynomials, every kind
    /// of turn, and the values that round to exactly half a base.
    #[test]
    fn fused_decomposition_is_tfhe_rs_one() {
        use rand::Rng;
        let mut rng = rand::thread_rng();
        for base_log in [23, 22, 10] {
            let decomposer = SignedDecomposer::<u64>::new(
                DecompositionBaseLog(base_log),
                DecompositionLevelCount(1),
            );
            let tfhe = |x: u64| decomposer.decompose(x).next().unwrap().value();
            let low = 64 - base_log;
            let half = 1u64 << (base_log - 1);
            for x in [
                0,
                u64::MAX,
                half << low,
                (half << low) - (1 << (low - 1)),
                (half << low) - (1 << (low - 1)) - 1,
                ((half - 1) << low) + (1 << (low - 1)),
            ] {
                assert_eq!(digit(x, base_log), tfhe(x), "{x:#x}");
            }
            for _ in 0..100_000 {
                let x: u64 = rng.gen();
                assert_eq!(digit(x, base_log), tfhe(x), "{x:#x}");
            }
            let n = 64;
            let poly: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
            for a in [0, 1, 5, n - 1, n, n + 3, 2 * n - 1] {
                let mut turned = vec![0u64; n];
                polynomial_wrapping_monic_monomial_mul(
                    &mut Polynomial::from_container(&mut turned[..]),
                    &Polynomial::from_container(&poly[..]),
                    MonomialDegree(a),
                );
                let want: Vec<u64> = turned
                    .iter()
                    .zip(&poly)
                    .map(|(t, p)| tfhe(t.wrapping_sub(*p)))
                    .collect();
                let mut got = vec![0u64; n];
                rotate_subtract_decompose(&poly, a, base_log, &mut got);
                assert_eq!(got, want, "base 2^{base_log}, turn {a}");
            }
        }
    }
}
