//! Packed results: many LWE ciphertexts key-switched into the
//! coefficients of a few GLWE ciphertexts, then stored at a reduced
//! modulus, so that a result travels at a few bytes per digit instead of
//! `(k N + 1) * 8`.
//!
//! The packing key is tfhe-rs's `LwePackingKeyswitchKey` from the big LWE
//! key (the GLWE key read as an LWE key) to **the same GLWE key**: its
//! rows are GLWE encryptions under the bootstrap's own GLWE key with the
//! bootstrap key's noise distribution, so it adds no secret key and no
//! assumption beyond the circular security the key switch and bootstrap
//! keys already rest on (as tfhe-rs's and every bootstrapped scheme's
//! keys do). The owner decrypts a packed GLWE with the secret key it has;
//! a server that must compute on a packed value again bootstraps it with
//! the server key it has.
//!
//! Noise: packing adds the packing key switch's variance and the storage
//! modulus switch's (tfhe-rs's formulas, [`crate::crypto::noise`]); the
//! builder checks each output against [`ParameterSet::packed_output_budgets`].
//! Packing is exact integer arithmetic modulo `2^64` (tfhe-rs's key
//! switch), so a packed GLWE is the same bits on every machine.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tfhe::core_crypto::algorithms::polynomial_algorithms::polynomial_wrapping_sub_mul_assign;
use tfhe::core_crypto::algorithms::slice_algorithms::slice_wrapping_add_assign;
use tfhe::core_crypto::commons::math::random::Seed;
use tfhe::core_crypto::entities::compressed_modulus_switched_glwe_ciphertext::CompressedModulusSwitchedGlweCiphertext;
use tfhe::core_crypto::prelude::*;

use crate::crypto::compressed::fresh_seed;
use crate::crypto::keys::{Ciphertext, KeyId};
use crate::crypto::params::{ParameterSet, ParamsId};

/// How a set packs its results: the packing key switch's decomposition and
/// the modulus packed GLWE ciphertexts are stored at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packing {
    /// The packing key switch's decomposition base (log2).
    pub base_log: DecompositionBaseLog,
    /// The packing key switch's levels.
    pub level: DecompositionLevelCount,
    /// Bits kept of each stored coefficient (`log2` of the storage modulus).
    pub storage_log_modulus: usize,
}

/// The standard-domain packing key, as a server key holds it.
pub(crate) type PackingKey = LwePackingKeyswitchKeyOwned<u64>;

/// Whether `key` is the packing key of `p` (every stored field and the
/// length before any dimension tfhe derives from them).
pub(crate) fn packing_key_fits(key: &PackingKey, p: &ParameterSet) -> bool {
    let glwe = p.glwe_dimension.to_glwe_size();
    key.decomposition_base_log() == p.packing.base_log
        && key.decomposition_level_count() == p.packing.level
        && key.output_glwe_size() == glwe
        && key.output_polynomial_size() == p.polynomial_size
        && key.as_ref().len()
            == p.big_lwe_dimension().0 * p.packing.level.0 * glwe.0 * p.polynomial_size.0
        && key.input_key_lwe_dimension() == p.big_lwe_dimension()
        && key.ciphertext_modulus().is_native_modulus()
}

/// Generates the packing key of `p` from the GLWE key to itself.
pub(crate) fn generate_packing_key(
    p: &ParameterSet,
    glwe_key: &GlweSecretKeyOwned<u64>,
    generator: &mut EncryptionRandomGenerator<DefaultRandomGenerator>,
) -> PackingKey {
    allocate_and_generate_new_lwe_packing_keyswitch_key(
        &glwe_key.as_lwe_secret_key(),
        glwe_key,
        p.packing.base_log,
        p.packing.level,
        p.glwe_noise,
        CiphertextModulus::new_native(),
        generator,
    )
}

/// The packing key in tfhe-rs's seeded form: one body polynomial per level
/// per big-key element, and the seed of the masks.
#[derive(Serialize, Deserialize)]
pub(crate) struct SeededPackingKey {
    seed: u128,
    base_log: usize,
    level: usize,
    bodies: Vec<u64>,
}

impl SeededPackingKey {
    /// Generates it with tfhe-rs's seeded generator: masks from a fresh
    /// seed, noise (`p.glwe_noise`) from another.
    pub(crate) fn generate(
        p: &ParameterSet,
        glwe_key: &GlweSecretKeyOwned<u64>,
        seeder: &mut dyn Seeder,
    ) -> SeededPackingKey {
        let seed = fresh_seed(seeder);
        let mut key = SeededLwePackingKeyswitchKeyOwned::new(
            0u64,
            p.packing.base_log,
            p.packing.level,
            p.big_lwe_dimension(),
            p.glwe_dimension,
            p.polynomial_size,
            seed.into(),
            CiphertextModulus::new_native(),
        );
        generate_seeded_lwe_packing_keyswitch_key(
            &glwe_key.as_lwe_secret_key(),
            glwe_key,
            &mut key,
            p.glwe_noise,
            seeder,
        );
        SeededPackingKey {
            seed: seed.0,
            base_log: p.packing.base_log.0,
            level: p.packing.level.0,
            bodies: key.into_container(),
        }
    }

    /// Why it does not fit `p`, if it does not.
    pub(crate) fn misfit(&self, p: &ParameterSet) -> Option<String> {
        let bodies = p.big_lwe_dimension().0 * p.packing.level.0 * p.polynomial_size.0;
        let expected = [p.packing.base_log.0, p.packing.level.0];
        let found = [self.base_log, self.level];
        if self.seed == 0 {
            Some("the packing key has no seed".into())
        } else if found != expected {
            Some(format!(
                "packing key (base log, levels) = {found:?}, {} needs {expected:?}",
                p.name
            ))
        } else if self.bodies.len() != bodies {
            Some(format!(
                "packing key has {} body words, {} needs {bodies}",
                self.bodies.len(),
                p.name
            ))
        } else {
            None
        }
    }

    /// The standard-domain key (masks drawn again). Only for a key that
    /// fits its set `p`.
    pub(crate) fn decompress(&self, p: &ParameterSet) -> PackingKey {
        let seeded = SeededLwePackingKeyswitchKey::from_container(
            self.bodies.as_slice(),
            DecompositionBaseLog(self.base_log),
            DecompositionLevelCount(self.level),
            p.glwe_dimension.to_glwe_size(),
            p.polynomial_size,
            Seed(self.seed).into(),
            CiphertextModulus::new_native(),
        );
        seeded.decompress_into_lwe_packing_keyswitch_key()
    }
}

/// Whether packing `count` ciphertexts into one GLWE of `p` is cheaper as
/// polynomial products ([`pack_by_products`]) than one key switch each:
/// `k N * count` word products against about `(k + 1) l N^1.6`
/// (Karatsuba), so from about a quarter of a GLWE on.
fn by_products(p: &ParameterSet, count: usize) -> bool {
    4 * count >= p.polynomial_size.0
}

/// The packing key switch of `list` into `out` as tfhe-rs's
/// `keyswitch_lwe_ciphertext_list_and_pack_in_glwe_ciphertext` computes
/// it, bit for bit, regrouped: that function sums, over ciphertexts `j`,
/// `X^j` times the key switch of ciphertext `j`, which is the bodies
/// `sum_j b_j X^j` minus, over the key's rows `(i, l)`, the row times
/// the polynomial `D_il = sum_j d_l(a_ij) X^j` of the `l`-th decomposed
/// digit of every ciphertext's `i`-th mask coefficient. So one GLWE costs
/// `k N l (k + 1)` polynomial products (tfhe-rs's Karatsuba, exact modulo
/// `2^64`) instead of `count k N l (k + 1) N` word products: 8x fewer for
/// a full GLWE on `DIGITS_128`. The rows are summed in parallel.
fn pack_by_products(
    key: &PackingKey,
    list: &LweCiphertextListOwned<u64>,
    out: &mut GlweCiphertextOwned<u64>,
) {
    let (glwe_size, n) = (key.output_glwe_size(), key.output_polynomial_size());
    let levels = key.decomposition_level_count().0;
    let decomposer = SignedDecomposer::<u64>::new(
        key.decomposition_base_log(),
        key.decomposition_level_count(),
    );
    let modulus = key.ciphertext_modulus();
    let rows: Vec<_> = key.iter().collect();
    let zero = || GlweCiphertext::new(0u64, glwe_size, n, modulus);
    let sum = rows
        .par_iter()
        .enumerate()
        .fold(zero, |mut acc, (i, row)| {
            let mut digits = vec![Polynomial::new(0u64, n); levels];
            for (j, lwe) in list.iter().enumerate() {
                let a = decomposer.closest_representable(lwe.as_ref()[i]);
                for (d, term) in digits.iter_mut().zip(decomposer.decompose(a)) {
                    d.as_mut()[j] = term.value();
                }
            }
            // The levels in the order tfhe-rs pairs them with the row.
            for (row_ct, d) in row.iter().zip(&digits) {
                for (mut poly, row_poly) in acc
                    .as_mut_polynomial_list()
                    .iter_mut()
                    .zip(row_ct.as_polynomial_list().iter())
                {
                    polynomial_wrapping_sub_mul_assign(&mut poly, &row_poly, d);
                }
            }
            acc
        })
        .reduce(zero, |mut a, b| {
            slice_wrapping_add_assign(a.as_mut(), b.as_ref());
            a
        });
    out.as_mut().copy_from_slice(sum.as_ref());
    let mut body = out.get_mut_body();
    for (j, lwe) in list.iter().enumerate() {
        let b = &mut body.as_mut()[j];
        *b = b.wrapping_add(*lwe.get_body().data);
    }
}

/// Ciphertexts packed into GLWE ciphertexts at the storage modulus: `N`
/// per GLWE, in order, the last GLWE storing only the bodies it uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PackedList {
    count: usize,
    glwes: Vec<CompressedModulusSwitchedGlweCiphertext<u64>>,
}

impl PackedList {
    /// Packs `cts` (all of `p`, fresh from a backend) with `key`, one GLWE
    /// per `N` ciphertexts, the GLWE ciphertexts in parallel.
    pub(crate) fn pack(p: &ParameterSet, key: &PackingKey, cts: &[&Ciphertext]) -> PackedList {
        let n = p.polynomial_size.0;
        let lwe_size = p.big_lwe_dimension().to_lwe_size();
        let chunks: Vec<&[&Ciphertext]> = cts.chunks(n).collect();
        let pack_one = |chunk: &[&Ciphertext]| {
            let modulus = CiphertextModulus::new_native();
            let mut list =
                LweCiphertextList::new(0u64, lwe_size, LweCiphertextCount(chunk.len()), modulus);
            for (mut dst, ct) in list.iter_mut().zip(chunk) {
                dst.as_mut().copy_from_slice(ct.lwe.as_ref());
            }
            let mut glwe = GlweCiphertext::new(
                0u64,
                p.glwe_dimension.to_glwe_size(),
                p.polynomial_size,
                CiphertextModulus::new_native(),
            );
            if by_products(p, chunk.len()) {
                pack_by_products(key, &list, &mut glwe);
            } else if chunks.len() == 1 {
                // One GLWE: its ciphertexts' key switches share the threads.
                par_keyswitch_lwe_ciphertext_list_and_pack_in_glwe_ciphertext(
                    key, &list, &mut glwe,
                );
            } else {
                keyswitch_lwe_ciphertext_list_and_pack_in_glwe_ciphertext(key, &list, &mut glwe);
            }
            CompressedModulusSwitchedGlweCiphertext::compress(
                &glwe,
                CiphertextModulusLog(p.packing.storage_log_modulus),
                LweCiphertextCount(chunk.len()),
            )
        };
        let glwes = chunks.par_iter().map(|c| pack_one(c)).collect();
        PackedList {
            count: cts.len(),
            glwes,
        }
    }

    /// Ciphertexts it holds.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Why it does not hold `count` ciphertexts of `p` as [`PackedList::pack`]
    /// writes them, if it does not: checked before anything reads it, so
    /// that unpacking cannot fail or allocate more than its file holds.
    pub(crate) fn misfit(&self, p: &ParameterSet, count: usize) -> Option<String> {
        let n = p.polynomial_size.0;
        let log = p.packing.storage_log_modulus;
        if self.count != count {
            return Some(format!(
                "a packed list of {} ciphertexts for entries of {count}",
                self.count
            ));
        }
        if self.glwes.len() != count.div_ceil(n) {
            return Some(format!(
                "{} packed GLWE ciphertexts for {count} values ({n} per GLWE on {})",
                self.glwes.len(),
                p.name
            ));
        }
        for (i, g) in self.glwes.iter().enumerate() {
            let bodies = (count - i * n).min(n);
            let len = p.big_lwe_dimension().0 + bodies;
            let ints = g.packed_integers();
            let fits = g.glwe_dimension() == p.glwe_dimension
                && g.polynomial_size() == p.polynomial_size
                && g.bodies_count().0 == bodies
                && g.uncompressed_ciphertext_modulus().is_native_modulus()
                && ints.log_modulus().0 == log
                && ints.initial_len() == len
                && ints.packed_coeffs().len() == (len * log).div_ceil(64);
            if !fits {
                return Some(format!(
                    "packed GLWE {i} does not fit {} ({bodies} bodies at {log} bits)",
                    p.name
                ));
            }
        }
        None
    }

    /// The phases of the packed ciphertexts under `glwe_key` (the owner's
    /// decryption). Only for a list that fits its set.
    pub(crate) fn phases(&self, glwe_key: &GlweSecretKeyOwned<u64>) -> Vec<u64> {
        let mut phases = Vec::with_capacity(self.count);
        for g in &self.glwes {
            let glwe = g.extract();
            let mut plain = PlaintextList::new(0u64, PlaintextCount(glwe.polynomial_size().0));
            decrypt_glwe_ciphertext(glwe_key, &glwe, &mut plain);
            phases.extend(plain.iter().take(g.bodies_count().0).map(|x| *x.0));
        }
        phases
    }

    /// The packed ciphertexts as LWE ciphertexts under the big key (sample
    /// extraction after the modulus is raised again): their noise is the
    /// packed one, so they are for decryption, not a program's input.
    /// Only for a list that fits its set.
    pub(crate) fn unpack(&self, params: ParamsId, key_id: KeyId) -> Vec<Ciphertext> {
        let p = params.params();
        let mut cts = Vec::with_capacity(self.count);
        for g in &self.glwes {
            let glwe = g.extract();
            for j in 0..g.bodies_count().0 {
                let mut lwe = LweCiphertext::new(
                    0u64,
                    p.big_lwe_dimension().to_lwe_size(),
                    CiphertextModulus::new_native(),
                );
                extract_lwe_sample_from_glwe_ciphertext(&glwe, &mut lwe, MonomialDegree(j));
                cts.push(Ciphertext::from_lwe(params, key_id, lwe));
            }
        }
        cts
    }
}

#[cfg(test)]
impl PackedList {
    /// Drops its last GLWE.
    pub(crate) fn truncate_for_tests(&mut self) {
        self.glwes.pop();
    }

    /// Claims `count` ciphertexts.
    pub(crate) fn recount_for_tests(&mut self, count: usize) {
        self.count = count;
    }

    /// Stores its first GLWE again at `bits` bits.
    pub(crate) fn repack_for_tests(&mut self, p: &ParameterSet, bits: usize) {
        let g = &self.glwes[0];
        let glwe = g.extract();
        self.glwes[0] = CompressedModulusSwitchedGlweCiphertext::compress(
            &glwe,
            CiphertextModulusLog(bits),
            g.bodies_count(),
        );
        assert_ne!(bits, p.packing.storage_log_modulus);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::{GATES_128, INSECURE_TEST_DIGITS};

    /// The products give tfhe-rs's packing key switch bit for bit, for a
    /// full GLWE and a partial one, with `k = 1` and `k > 1`.
    #[test]
    fn products_equal_tfhe_rs_packing_key_switch() {
        for p in [&INSECURE_TEST_DIGITS, &GATES_128] {
            let client = crate::ClientKey::generate(p);
            let mut generator = EncryptionRandomGenerator::<DefaultRandomGenerator>::new(
                Seed(7),
                &mut *new_seeder(),
            );
            let key = generate_packing_key(p, client.glwe_key(), &mut generator);
            for count in [p.polynomial_size.0, p.polynomial_size.0 / 2 + 3] {
                let cts: Vec<_> = (0..count)
                    .map(|v| client.encrypt((v % 4) as i64).unwrap())
                    .collect();
                let mut list = LweCiphertextList::new(
                    0u64,
                    p.big_lwe_dimension().to_lwe_size(),
                    LweCiphertextCount(count),
                    CiphertextModulus::new_native(),
                );
                for (mut dst, ct) in list.iter_mut().zip(&cts) {
                    dst.as_mut().copy_from_slice(ct.lwe.as_ref());
                }
                let new = || {
                    GlweCiphertext::new(
                        0u64,
                        p.glwe_dimension.to_glwe_size(),
                        p.polynomial_size,
                        CiphertextModulus::new_native(),
                    )
                };
                let (mut theirs, mut ours) = (new(), new());
                keyswitch_lwe_ciphertext_list_and_pack_in_glwe_ciphertext(&key, &list, &mut theirs);
                pack_by_products(&key, &list, &mut ours);
                assert!(theirs == ours, "{} ({count})", p.name);
            }
        }
    }
}
