//! Compressed server keys: the bootstrap and key-switch keys as tfhe-rs
//! *seeded* keys (`SeededLweBootstrapKey`, `SeededLweKeyswitchKey`).
//!
//! A seeded key stores the bodies of its ciphertexts and one 128-bit seed;
//! the masks are the output of tfhe-rs's AES-CTR generator
//! (`DefaultRandomGenerator`) from that seed, drawn again by
//! tfhe-rs's decompression. Only the masks are left out, so the noise, the
//! decompositions and the decompressed keys are those of
//! [`ClientKey::server_key`](crate::ClientKey::server_key) (with other
//! randomness). The key-switch key shrinks by its output LWE size (`n + 1`),
//! the bootstrap key by the GLWE size (`k + 1`).
//!
//! The file is [`FileKind::CompressedServerKey`]; [`ServerKey::load`] reads
//! it as well as the uncompressed kind.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tfhe::core_crypto::commons::math::random::{Seed, Uniform};
use tfhe::core_crypto::prelude::*;

use crate::crypto::files::{check_ids, inconsistent, FileInfo, FileKind};
use crate::crypto::key_files::KeyFile;
use crate::crypto::keys::{as_ggsw_list, KeyId, KeySwitchKey, ServerKey, ServerKeyData};
use crate::crypto::packing::SeededPackingKey;
use crate::crypto::params::{ParameterSet, ParamsId};
use crate::error::Error;

/// A seeded LWE bootstrap key, as written: tfhe-rs's seeded layout (one
/// body polynomial per GLWE row of each GGSW) and its seed.
#[derive(Serialize, Deserialize)]
pub(crate) struct SeededBootstrapKey {
    seed: u128,
    input_lwe_dimension: usize,
    glwe_size: usize,
    polynomial_size: usize,
    base_log: usize,
    level: usize,
    bodies: Vec<u64>,
}

/// A seeded LWE key-switch key, as written: one body per level per input
/// key element, and the seed of the masks. `S` is the output word (`u32`
/// for KS32 sets).
#[derive(Serialize, Deserialize)]
pub(crate) struct SeededKeySwitch<S> {
    seed: u128,
    input_lwe_dimension: usize,
    output_lwe_dimension: usize,
    base_log: usize,
    level: usize,
    bodies: Vec<S>,
}

/// The seeded key switch onto 64-bit or 32-bit LWE (see
/// [`KeySwitchKey`]).
#[derive(Serialize, Deserialize)]
pub(crate) enum SeededKeySwitchKey {
    Native(SeededKeySwitch<u64>),
    Narrow(SeededKeySwitch<u32>),
}

/// The payload of a compressed server-key file.
#[derive(Serialize, Deserialize)]
pub(crate) struct CompressedServerKeyData {
    params: ParamsId,
    key_id: KeyId,
    bootstrap_key: SeededBootstrapKey,
    keyswitch_key: SeededKeySwitchKey,
    packing_key: SeededPackingKey,
}

/// A mask seed from the platform seeder. Zero, which a file uses for
/// "no seed", is drawn again (probability 2^-128).
pub(crate) fn fresh_seed(seeder: &mut dyn Seeder) -> Seed {
    loop {
        let seed = seeder.seed();
        if seed.0 != 0 {
            return seed;
        }
    }
}

impl SeededBootstrapKey {
    /// Encrypts `lwe_key` under `glwe_key` with tfhe-rs's parallel seeded
    /// generator: the masks from a fresh seed, the noise (`p.glwe_noise`)
    /// from another.
    pub(crate) fn generate(
        p: &ParameterSet,
        lwe_key: &LweSecretKeyOwned<u64>,
        glwe_key: &GlweSecretKeyOwned<u64>,
        seeder: &mut dyn Seeder,
    ) -> SeededBootstrapKey {
        let seed = fresh_seed(seeder);
        let (glwe_size, modulus) = (
            p.glwe_dimension.to_glwe_size(),
            CiphertextModulus::new_native(),
        );
        let (poly, base_log, level) = (p.polynomial_size, p.pbs_base_log, p.pbs_level);
        let bodies = match p.grouping_factor {
            None => {
                let mut bsk = SeededLweBootstrapKeyOwned::new(
                    0u64,
                    glwe_size,
                    poly,
                    base_log,
                    level,
                    p.lwe_dimension,
                    seed.into(),
                    modulus,
                );
                par_generate_seeded_lwe_bootstrap_key(
                    lwe_key,
                    glwe_key,
                    &mut bsk,
                    p.glwe_noise,
                    seeder,
                );
                bsk.into_container()
            }
            Some(g) => {
                let mut bsk = SeededLweMultiBitBootstrapKeyOwned::new(
                    0u64,
                    glwe_size,
                    poly,
                    base_log,
                    level,
                    p.lwe_dimension,
                    g,
                    seed.into(),
                    modulus,
                );
                par_generate_seeded_lwe_multi_bit_bootstrap_key(
                    lwe_key,
                    glwe_key,
                    &mut bsk,
                    p.glwe_noise,
                    seeder,
                );
                bsk.into_container()
            }
        };
        SeededBootstrapKey {
            seed: seed.0,
            input_lwe_dimension: p.lwe_dimension.0,
            glwe_size: glwe_size.0,
            polynomial_size: poly.0,
            base_log: base_log.0,
            level: level.0,
            bodies,
        }
    }

    /// Why it does not fit `p`, if it does not.
    fn misfit(&self, p: &ParameterSet) -> Option<String> {
        let glwe = p.glwe_dimension.to_glwe_size().0;
        let expected = [
            p.lwe_dimension.0,
            glwe,
            p.polynomial_size.0,
            p.pbs_base_log.0,
            p.pbs_level.0,
        ];
        let found = [
            self.input_lwe_dimension,
            self.glwe_size,
            self.polynomial_size,
            self.base_log,
            self.level,
        ];
        let bodies = p.bootstrap_ggsw_count() * p.pbs_level.0 * glwe * p.polynomial_size.0;
        if self.seed == 0 {
            Some("the bootstrap key has no seed".into())
        } else if found != expected {
            Some(format!(
                "bootstrap key (n, k + 1, N, base log, levels) = {found:?}, {} needs {expected:?}",
                p.name
            ))
        } else if self.bodies.len() != bodies {
            Some(format!(
                "bootstrap key has {} body words, {} needs {bodies}",
                self.bodies.len(),
                p.name
            ))
        } else {
            None
        }
    }

    /// The standard-domain key: the bodies, and the masks drawn again from
    /// the seed (in parallel). Only for a key that fits its set `p`; a
    /// multi-bit key comes back as its GGSW list (see [`ServerKeyData`]).
    fn decompress(&self, p: &ParameterSet) -> LweBootstrapKeyOwned<u64> {
        let (glwe, poly) = (
            GlweSize(self.glwe_size),
            PolynomialSize(self.polynomial_size),
        );
        let (base_log, level) = (
            DecompositionBaseLog(self.base_log),
            DecompositionLevelCount(self.level),
        );
        let modulus = CiphertextModulus::new_native();
        if let Some(g) = p.grouping_factor {
            let seeded = SeededLweMultiBitBootstrapKey::from_container(
                self.bodies.as_slice(),
                glwe,
                poly,
                base_log,
                level,
                Seed(self.seed).into(),
                g,
                modulus,
            );
            let mut bsk = LweMultiBitBootstrapKeyOwned::new(
                0u64,
                glwe,
                poly,
                base_log,
                level,
                p.lwe_dimension,
                g,
                modulus,
            );
            par_decompress_seeded_lwe_multi_bit_bootstrap_key::<_, _, _, DefaultRandomGenerator>(
                &mut bsk, &seeded,
            );
            return as_ggsw_list(bsk);
        }
        let seeded = SeededLweBootstrapKey::from_container(
            self.bodies.as_slice(),
            glwe,
            poly,
            base_log,
            level,
            Seed(self.seed).into(),
            modulus,
        );
        let mut bsk = LweBootstrapKeyOwned::new(
            0u64,
            seeded.glwe_size(),
            seeded.polynomial_size(),
            seeded.decomposition_base_log(),
            seeded.decomposition_level_count(),
            seeded.input_lwe_dimension(),
            seeded.ciphertext_modulus(),
        );
        par_decompress_seeded_lwe_bootstrap_key::<_, _, _, DefaultRandomGenerator>(
            &mut bsk, &seeded,
        );
        bsk
    }
}

impl<S> SeededKeySwitch<S>
where
    S: UnsignedTorus + Send + Sync + Encryptable<Uniform, DynamicDistribution<S>>,
    u64: CastInto<S>,
{
    /// Encrypts `input` (the big key) under `output` with tfhe-rs's seeded
    /// generator: the masks from a fresh seed, the noise from another.
    pub(crate) fn generate(
        p: &ParameterSet,
        input: &LweSecretKey<&[u64]>,
        output: &LweSecretKeyOwned<S>,
        noise: DynamicDistribution<S>,
        seeder: &mut dyn Seeder,
    ) -> SeededKeySwitch<S> {
        let seed = fresh_seed(seeder);
        let mut ksk = SeededLweKeyswitchKeyOwned::new(
            S::ZERO,
            p.ks_base_log,
            p.ks_level,
            input.lwe_dimension(),
            output.lwe_dimension(),
            seed.into(),
            CiphertextModulus::new_native(),
        );
        generate_seeded_lwe_keyswitch_key(input, output, &mut ksk, noise, seeder);
        SeededKeySwitch {
            seed: seed.0,
            input_lwe_dimension: ksk.input_key_lwe_dimension().0,
            output_lwe_dimension: ksk.output_key_lwe_dimension().0,
            base_log: ksk.decomposition_base_log().0,
            level: ksk.decomposition_level_count().0,
            bodies: ksk.into_container(),
        }
    }

    /// Why it does not fit `p`, if it does not.
    fn misfit(&self, p: &ParameterSet) -> Option<String> {
        let expected = [
            p.big_lwe_dimension().0,
            p.lwe_dimension.0,
            p.ks_base_log.0,
            p.ks_level.0,
        ];
        let found = [
            self.input_lwe_dimension,
            self.output_lwe_dimension,
            self.base_log,
            self.level,
        ];
        let bodies = p.big_lwe_dimension().0 * p.ks_level.0;
        if self.seed == 0 {
            Some("the key-switch key has no seed".into())
        } else if found != expected {
            Some(format!(
                "key-switch key (input n, output n, base log, levels) = {found:?}, {} needs {expected:?}",
                p.name
            ))
        } else if self.bodies.len() != bodies {
            Some(format!(
                "key-switch key has {} body words, {} needs {bodies}",
                self.bodies.len(),
                p.name
            ))
        } else {
            None
        }
    }

    /// The standard-domain key (masks drawn again in parallel). Only for a
    /// key that fits its set.
    fn decompress(&self) -> LweKeyswitchKeyOwned<S> {
        let seeded = SeededLweKeyswitchKey::from_container(
            self.bodies.as_slice(),
            DecompositionBaseLog(self.base_log),
            DecompositionLevelCount(self.level),
            LweDimension(self.output_lwe_dimension).to_lwe_size(),
            Seed(self.seed).into(),
            CiphertextModulus::new_native(),
        );
        let mut ksk = LweKeyswitchKeyOwned::new(
            S::ZERO,
            seeded.decomposition_base_log(),
            seeded.decomposition_level_count(),
            seeded.input_key_lwe_dimension(),
            seeded.output_key_lwe_dimension(),
            seeded.ciphertext_modulus(),
        );
        par_decompress_seeded_lwe_keyswitch_key::<_, _, _, DefaultRandomGenerator>(
            &mut ksk, &seeded,
        );
        ksk
    }
}

/// Bytes of key material in a server key, compressed and not: what a file
/// of each kind holds besides its header and a few dozen bytes of framing
/// (dimensions, seeds, ids). They depend on the parameter set only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerKeySizes {
    /// Compressed bootstrap key: one body polynomial per GLWE row,
    /// `n (k + 1) l N` 64-bit words.
    pub bootstrap_compressed: u64,
    /// Standard-domain bootstrap key: `n (k + 1)^2 l N` words.
    pub bootstrap: u64,
    /// Compressed key-switch key: one body per level per big-key element,
    /// `k N l_ks` words (32-bit words on KS32 sets).
    pub keyswitch_compressed: u64,
    /// Standard-domain key-switch key: `k N l_ks (n + 1)` words.
    pub keyswitch: u64,
    /// Compressed packing key: one body polynomial per level per big-key
    /// element, `k N l_pack N` words.
    pub packing_compressed: u64,
    /// Standard-domain packing key: `k N l_pack (k + 1) N` words.
    pub packing: u64,
}

impl ServerKeySizes {
    /// The sizes for keys of `p`.
    pub fn of(p: &ParameterSet) -> ServerKeySizes {
        let n = p.lwe_dimension.0 as u64;
        let glwe = p.glwe_dimension.to_glwe_size().0 as u64;
        let ggsws = p.bootstrap_ggsw_count() as u64;
        let bsk_bodies = ggsws * glwe * p.pbs_level.0 as u64 * p.polynomial_size.0 as u64;
        let ksk_bodies = p.big_lwe_dimension().0 as u64 * p.ks_level.0 as u64;
        let ks_word = if p.ks32 { 4 } else { 8 };
        let packing_bodies =
            p.big_lwe_dimension().0 as u64 * p.packing.level.0 as u64 * p.polynomial_size.0 as u64;
        ServerKeySizes {
            packing_compressed: 8 * packing_bodies,
            packing: 8 * packing_bodies * glwe,
            bootstrap_compressed: 8 * bsk_bodies,
            bootstrap: 8 * bsk_bodies * glwe,
            keyswitch_compressed: ks_word * ksk_bodies,
            keyswitch: ks_word * ksk_bodies * (n + 1),
        }
    }

    /// The three compressed keys.
    pub fn compressed(&self) -> u64 {
        self.bootstrap_compressed + self.keyswitch_compressed + self.packing_compressed
    }

    /// The three standard-domain keys (what [`ServerKey::save`] writes).
    pub fn decompressed(&self) -> u64 {
        self.bootstrap + self.keyswitch + self.packing
    }
}

/// Evaluation keys in tfhe-rs's seeded form, 3.2x (`DIGITS_128`) to 6.6x
/// (`BITS_128`) smaller than a [`ServerKey`]: for storing and shipping.
/// [`CompressedServerKey::decompress`] turns it into the [`ServerKey`] the
/// backends use. Made by
/// [`ClientKey::compressed_server_key`](crate::ClientKey::compressed_server_key).
pub struct CompressedServerKey {
    data: CompressedServerKeyData,
}

impl CompressedServerKey {
    pub(crate) fn new(
        params: ParamsId,
        key_id: KeyId,
        bootstrap_key: SeededBootstrapKey,
        keyswitch_key: SeededKeySwitchKey,
        packing_key: SeededPackingKey,
    ) -> CompressedServerKey {
        CompressedServerKey {
            data: CompressedServerKeyData {
                params,
                key_id,
                bootstrap_key,
                keyswitch_key,
                packing_key,
            },
        }
    }

    /// The parameter set of the keys.
    pub fn params(&self) -> &'static ParameterSet {
        self.data.params.params()
    }

    /// The key pair's identity.
    pub fn key_id(&self) -> KeyId {
        self.data.key_id
    }

    /// Its key material, and that of the [`ServerKey`] it decompresses to.
    pub fn sizes(&self) -> ServerKeySizes {
        ServerKeySizes::of(self.params())
    }

    /// Expands the keys: draws the masks again from their seeds (tfhe-rs's
    /// parallel decompression) and converts the bootstrap key to the
    /// Fourier domain, as [`ServerKey::load`] does. The result is the same
    /// bits every time.
    pub fn decompress(&self) -> ServerKey {
        let d = &self.data;
        let keyswitch_key = match &d.keyswitch_key {
            SeededKeySwitchKey::Native(k) => KeySwitchKey::Native(k.decompress()),
            SeededKeySwitchKey::Narrow(k) => KeySwitchKey::Narrow(k.decompress()),
        };
        ServerKey::from_data(ServerKeyData {
            params: d.params,
            key_id: d.key_id,
            bootstrap_key: d.bootstrap_key.decompress(self.params()),
            keyswitch_key,
            packing_key: d.packing_key.decompress(self.params()),
        })
    }

    /// Writes the compressed keys (a [`FileKind::CompressedServerKey`] file).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        KeyFile::save(self, path)
    }

    /// The file bytes [`CompressedServerKey::save`] writes; both
    /// [`CompressedServerKey::from_bytes`] and [`ServerKey::from_bytes`]
    /// read them.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        KeyFile::to_bytes(self)
    }

    /// Reads keys written by [`CompressedServerKey::save`], checking the
    /// ids against the header and every dimension, decomposition, size and
    /// seed against the parameter set (a bad file is a
    /// [`FileError`](crate::FileError)): the file's bytes, then
    /// [`CompressedServerKey::from_bytes`].
    pub fn load(path: &Path) -> Result<CompressedServerKey, Error> {
        <CompressedServerKey as KeyFile>::load(path)
    }

    /// Reads compressed-server-key file bytes from anywhere (`origin`
    /// names them in errors), with every check of
    /// [`CompressedServerKey::load`].
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<CompressedServerKey, Error> {
        <CompressedServerKey as KeyFile>::from_bytes(origin, bytes)
    }
}

impl KeyFile for CompressedServerKey {
    const KIND: FileKind = FileKind::CompressedServerKey;
    const LABEL: &'static str = "<compressed server key>";
    type Payload<'a> = &'a CompressedServerKeyData;
    type Stored = CompressedServerKeyData;

    fn file_ids(&self) -> (ParamsId, KeyId) {
        (self.data.params, self.data.key_id)
    }

    fn payload(&self) -> &CompressedServerKeyData {
        &self.data
    }

    fn from_stored(
        origin: &Path,
        info: &FileInfo,
        data: CompressedServerKeyData,
    ) -> Result<Self, Error> {
        check_ids(origin, info, data.params, data.key_id)?;
        let p = info.params.params();
        let ksk = match (&data.keyswitch_key, p.ks32) {
            (SeededKeySwitchKey::Native(k), false) => k.misfit(p),
            (SeededKeySwitchKey::Narrow(k), true) => k.misfit(p),
            (SeededKeySwitchKey::Native(_), true) => {
                Some(format!("a 64-bit key switch, {} needs 32-bit", p.name))
            }
            (SeededKeySwitchKey::Narrow(_), false) => {
                Some(format!("a 32-bit key switch, {} needs 64-bit", p.name))
            }
        };
        let packing = data.packing_key.misfit(p);
        if let Some(reason) = data.bootstrap_key.misfit(p).or(ksk).or(packing) {
            return Err(inconsistent(origin, reason));
        }
        Ok(CompressedServerKey { data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::files::write_file;
    use crate::crypto::params::{DIGITS_128, DIGITS_KS32_128, INSECURE_TEST_DIGITS};
    use crate::error::FileError;
    use crate::ClientKey;

    /// Every field that must fit the set, changed one at a time and written
    /// with a valid header and checksum: each file is refused as
    /// inconsistent, naming what does not fit.
    #[test]
    fn forged_fields_are_refused() {
        let d = std::env::temp_dir().join(format!("hearth-compressed-unit-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
        let good = d.join("good.key");
        client.compressed_server_key().save(&good).unwrap();
        assert!(CompressedServerKey::load(&good).is_ok());

        // What the refusal must name, and the change to the payload.
        type Forgery = (&'static str, fn(&mut CompressedServerKeyData));
        let forgeries: Vec<Forgery> = vec![
            ("no seed", |k| k.bootstrap_key.seed = 0),
            ("(n, k + 1", |k| k.bootstrap_key.input_lwe_dimension += 1),
            ("(n, k + 1", |k| k.bootstrap_key.glwe_size = 3),
            ("(n, k + 1", |k| k.bootstrap_key.polynomial_size /= 2),
            ("(n, k + 1", |k| k.bootstrap_key.base_log -= 1),
            ("(n, k + 1", |k| k.bootstrap_key.level = 2),
            ("body words", |k| {
                k.bootstrap_key.bodies.pop();
            }),
            ("body words", |k| k.bootstrap_key.bodies.clear()),
            ("no seed", |k| match &mut k.keyswitch_key {
                SeededKeySwitchKey::Native(s) => s.seed = 0,
                SeededKeySwitchKey::Narrow(_) => unreachable!(),
            }),
            ("(input n", |k| match &mut k.keyswitch_key {
                SeededKeySwitchKey::Native(s) => s.output_lwe_dimension -= 1,
                SeededKeySwitchKey::Narrow(_) => unreachable!(),
            }),
            ("(input n", |k| match &mut k.keyswitch_key {
                SeededKeySwitchKey::Native(s) => s.level = 0,
                SeededKeySwitchKey::Narrow(_) => unreachable!(),
            }),
            ("body words", |k| match &mut k.keyswitch_key {
                SeededKeySwitchKey::Native(s) => s.bodies.push(1),
                SeededKeySwitchKey::Narrow(_) => unreachable!(),
            }),
            ("32-bit key switch", |k| {
                k.keyswitch_key = SeededKeySwitchKey::Narrow(SeededKeySwitch {
                    seed: 1,
                    input_lwe_dimension: 1024,
                    output_lwe_dimension: 96,
                    base_log: 4,
                    level: 5,
                    bodies: vec![0; 1024 * 5],
                })
            }),
            ("ids differ", |k| k.key_id.0 ^= 1),
        ];
        for (i, (reason, forge)) in forgeries.into_iter().enumerate() {
            let mut key = CompressedServerKey::load(&good).unwrap();
            forge(&mut key.data);
            let path = d.join(format!("forged{i}.key"));
            // The header keeps the genuine ids; the payload says otherwise.
            write_file(
                &path,
                FileKind::CompressedServerKey,
                INSECURE_TEST_DIGITS.id,
                client.key_id(),
                &key.data,
                false,
            )
            .unwrap();
            for result in [
                CompressedServerKey::load(&path).err(),
                ServerKey::load(&path).err(),
            ] {
                match result {
                    Some(Error::File(FileError::Inconsistent { reason: r, .. })) => {
                        assert!(r.contains(reason), "forgery {i}: {r}")
                    }
                    other => panic!("forgery {i} ({reason}): {other:?}"),
                }
            }
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    /// Decrypts every ciphertext of the decompressed key-switch key and
    /// checks its error against the set's TUniform bound: within it, and
    /// the largest of the 10 240 errors above half of it (the key switch
    /// of [`ClientKey::server_key`] draws the same distribution).
    fn check_keyswitch_noise<S>(
        ksk: &SeededKeySwitch<S>,
        small: &LweSecretKey<&[S]>,
        big: &[u64],
        bound_log2: u32,
    ) where
        S: UnsignedTorus + Send + Sync + Encryptable<Uniform, DynamicDistribution<S>>,
        u64: CastInto<S>,
    {
        let standard = ksk.decompress();
        let levels = standard.decomposition_level_count().0;
        let base_log = standard.decomposition_base_log().0;
        let mut largest = 0u128;
        for (block, &s) in standard.iter().zip(big) {
            for (i, ct) in block.iter().enumerate() {
                // Level `levels - i`: s * 2^(bits - base_log * level).
                let shift = S::BITS - base_log * (levels - i);
                let expected = <u64 as CastInto<S>>::cast_into(s) << shift;
                let error = decrypt_lwe_ciphertext(small, &ct).0.wrapping_sub(expected);
                let magnitude = error.into_signed().wrapping_abs().into_unsigned();
                largest = largest.max(<S as CastInto<u128>>::cast_into(magnitude));
            }
        }
        assert!(
            largest <= 1 << bound_log2,
            "error 2^{:.1}",
            (largest as f64).log2()
        );
        assert!(
            largest > 1 << (bound_log2 - 1),
            "error 2^{:.1}",
            (largest as f64).log2()
        );
    }

    #[test]
    fn keyswitch_noise_is_the_sets() {
        for params in [&DIGITS_128, &DIGITS_KS32_128] {
            let client = ClientKey::generate(params);
            let big = client.big_key();
            let mut seeder = new_seeder();
            let DynamicDistribution::TUniform(t) = params.lwe_noise else {
                panic!("TUniform sets")
            };
            if params.ks32 {
                let (small, noise) = client.ks32_target();
                let ksk = SeededKeySwitch::generate(params, &big, &small, noise, seeder.as_mut());
                check_keyswitch_noise(&ksk, &small.as_view(), big.as_ref(), t.bound_log2() - 32);
            } else {
                let small = client.small_key();
                let ksk = SeededKeySwitch::generate(
                    params,
                    &big,
                    small,
                    params.lwe_noise,
                    seeder.as_mut(),
                );
                check_keyswitch_noise(&ksk, &small.as_view(), big.as_ref(), t.bound_log2());
            }
        }
    }
}
