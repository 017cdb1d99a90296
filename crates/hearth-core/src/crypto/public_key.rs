//! The public key: anyone holding it encrypts, only the client key
//! decrypts.
//!
//! It is tfhe-rs's LWE compact public key (`core_crypto`) made from the
//! key fresh ciphertexts live under, the GLWE secret key read as an LWE
//! key of dimension `k * N`, with the GLWE noise. That is tfhe-rs's own
//! construction for its KS-PBS sets when no dedicated public-key set is
//! given (`CompactCiphertextListExpansionKind::NoCasting`): a public-key
//! ciphertext is an ordinary ciphertext of the computation key, so no key
//! switch is added and a server cannot tell how an input was encrypted.
//! On `DIGITS_128`, `DIGITS_KS32_128` and `BITS_128` (`k * N = 2048`,
//! TUniform(17)) the encryption has the dimension and noise of tfhe-rs's
//! public-key set `V1_8_PARAM_PKE_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`
//! (128 bits). A compact public key needs a power-of-two dimension, so
//! `GATES_128` (`k * N = 1536`) has none, as in tfhe-rs.
//!
//! Noise: a public-key ciphertext's error is `e * r + e2 - s * e1` (one
//! coefficient of each product), variance `(k N + 1) sigma^2` with
//! `sigma^2` the GLWE noise's variance ([`public_key_variance`]): on
//! `DIGITS_128` 2^-84.6 of the torus, far below the 2^-29.65 of a
//! bootstrap's output that the builder's budgets give every fresh input.
//! Programs therefore keep their budgets and their cost (0 extra
//! bootstraps); a test checks the margin for every set.

use std::path::Path;
use std::sync::Mutex;

use num_bigint::BigInt;
use serde::{Deserialize, Serialize};
use tfhe::core_crypto::commons::math::random::Seed;
use tfhe::core_crypto::prelude::*;

use crate::crypto::compressed::fresh_seed;
use crate::crypto::encoding::{value_digits, Encrypted, Plain, Shape};
use crate::crypto::files::{inconsistent, FileInfo, FileKind};
use crate::crypto::key_files::KeyFile;
use crate::crypto::keys::{digit_from_i64, Ciphertext, ClientKey, KeyId};
use crate::crypto::params::{ParameterSet, ParamsId};
use crate::error::Error;

/// Encrypts under a [`ClientKey`] without holding it: for data owners who
/// must not decrypt (sensors, the users of an app, hospitals pooling
/// records). Its ciphertexts carry the client key's [`KeyId`] and run in
/// every program like the client key's own.
pub struct PublicKey {
    params: ParamsId,
    key_id: KeyId,
    key: LweCompactPublicKeyOwned<u64>,
    /// The same key as a seed and a body, when it was made here or read
    /// compressed: what [`PublicKey::save`] writes (half the bytes).
    seeded: Option<SeededKey>,
    encryption: Mutex<EncryptionRandomGenerator<DefaultRandomGenerator>>,
}

/// A compact public key as a seed (its mask) and its body.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct SeededKey {
    seed: u128,
    body: Vec<u64>,
}

/// What a public-key file holds (the ids are in the header).
#[derive(Serialize, Deserialize)]
pub(crate) enum Stored {
    /// The mask and the body, `2 k N` words.
    Full(Vec<u64>),
    /// The mask's seed and the body, `k N` words.
    Seeded(SeededKey),
}

/// Many values in one ciphertext list: tfhe-rs's LWE compact ciphertext
/// list, one mask per `k N` ciphertexts and one body each (about `k N`
/// times smaller than the ciphertexts it expands to).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactList {
    count: u64,
    data: Vec<u64>,
}

/// Why `params` has no public key, if it has none.
fn unsupported(params: &ParameterSet) -> Option<Error> {
    let n = params.big_lwe_dimension().0;
    (!n.is_power_of_two()).then(|| Error::NoPublicKey {
        params: params.id,
        reason: format!(
            "a compact public key needs a power-of-two dimension and its \
             ciphertexts have k * N = {n} (the digits sets and BITS_128 have one; \
             words run on DIGITS_KS32_128)"
        ),
    })
}

/// The variance (torus units) of a public-key encryption's error on
/// `params`: `(k N + 1)` times the GLWE noise's (see the module's notes).
pub fn public_key_variance(params: &ParameterSet) -> f64 {
    let sigma2 = match params.glwe_noise {
        DynamicDistribution::TUniform(t) => {
            // TUniform(b): integers in [-2^b, 2^b], the ends with half weight.
            let b = t.bound_log2() as i32;
            (2f64.powi(2 * b + 1) + 1.0) / 6.0
        }
        DynamicDistribution::Gaussian(g) => (g.std * 2f64.powi(64)).powi(2),
    };
    (params.big_lwe_dimension().0 as f64 + 1.0) * sigma2 / 2f64.powi(128)
}

fn generator() -> EncryptionRandomGenerator<DefaultRandomGenerator> {
    let mut seeder = new_seeder();
    let seeder = seeder.as_mut();
    EncryptionRandomGenerator::<DefaultRandomGenerator>::new(seeder.seed(), seeder)
}

impl ClientKey {
    /// The public key of this client key, made with tfhe-rs's seeded
    /// generator (its file holds the seed and the body). A set whose
    /// ciphertext dimension is not a power of two (`GATES_128`) has none:
    /// [`Error::NoPublicKey`].
    pub fn public_key(&self) -> Result<PublicKey, Error> {
        let p = self.params();
        if let Some(e) = unsupported(p) {
            return Err(e);
        }
        let mut seeder = new_seeder();
        let seeder = seeder.as_mut();
        let seed = fresh_seed(seeder);
        let mut seeded = SeededLweCompactPublicKey::new(
            0u64,
            p.big_lwe_dimension(),
            seed.into(),
            CiphertextModulus::new_native(),
        );
        generate_seeded_lwe_compact_public_key(&self.big_key(), &mut seeded, p.glwe_noise, seeder);
        let body = seeded.into_container();
        PublicKey::from_seeded(p.id, self.key_id(), SeededKey { seed: seed.0, body })
    }
}

impl PublicKey {
    fn from_seeded(params: ParamsId, key_id: KeyId, seeded: SeededKey) -> Result<Self, Error> {
        let key = SeededLweCompactPublicKey::from_container(
            seeded.body.clone(),
            Seed(seeded.seed).into(),
            CiphertextModulus::new_native(),
        )
        .decompress_into_lwe_compact_public_key();
        Ok(PublicKey {
            params,
            key_id,
            key,
            seeded: Some(seeded),
            encryption: Mutex::new(generator()),
        })
    }

    /// The parameter set of the client key it belongs to.
    pub fn params(&self) -> &'static ParameterSet {
        self.params.params()
    }

    /// The client key's identity, carried by every ciphertext it makes.
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// Whether it is kept as a seed and a body (what its file then holds).
    pub fn is_compressed(&self) -> bool {
        self.seeded.is_some()
    }

    /// The same key kept whole (mask and body): its file is twice the
    /// size, for readers that want the key without drawing its mask.
    pub fn decompressed(&self) -> PublicKey {
        PublicKey {
            params: self.params,
            key_id: self.key_id,
            key: self.key.clone(),
            seeded: None,
            encryption: Mutex::new(generator()),
        }
    }

    /// Encrypts one digit (signed `[-2^(pi-1), 0)` or unsigned `[0, 2^pi)`,
    /// as [`ClientKey::encrypt`]).
    pub fn encrypt(&self, value: i64) -> Result<Ciphertext, Error> {
        let p = self.params();
        let digit = digit_from_i64(p, value)?;
        let mut lwe = LweCiphertext::new(
            0u64,
            p.big_lwe_dimension().to_lwe_size(),
            CiphertextModulus::new_native(),
        );
        let mut generator = self.encryption.lock().unwrap_or_else(|e| e.into_inner());
        encrypt_lwe_ciphertext_with_compact_public_key(
            &self.key,
            &mut lwe,
            Plaintext(digit.wrapping_mul(p.delta())),
            p.glwe_noise,
            p.glwe_noise,
            generator.noise_generator_mut(),
        );
        Ok(Ciphertext::from_lwe(self.params, self.key_id, lwe))
    }

    /// Encrypts digits as one compact list (tfhe-rs's, its products in
    /// parallel).
    pub fn encrypt_list(&self, digits: &[i64]) -> Result<CompactList, Error> {
        let p = self.params();
        let encoded = digits
            .iter()
            .map(|&d| Ok(digit_from_i64(p, d)?.wrapping_mul(p.delta())))
            .collect::<Result<Vec<u64>, Error>>()?;
        let mut list = LweCompactCiphertextList::new(
            0u64,
            p.big_lwe_dimension().to_lwe_size(),
            LweCiphertextCount(encoded.len()),
            CiphertextModulus::new_native(),
        );
        if !encoded.is_empty() {
            let mut generator = self.encryption.lock().unwrap_or_else(|e| e.into_inner());
            par_encrypt_lwe_compact_ciphertext_list_with_compact_public_key(
                &self.key,
                &mut list,
                &PlaintextList::from_container(encoded.as_slice()),
                p.glwe_noise,
                p.glwe_noise,
                generator.noise_generator_mut(),
            );
        }
        Ok(CompactList {
            count: digits.len() as u64,
            data: list.into_container(),
        })
    }

    /// Encrypts `value` as a value of `shape` (as
    /// [`ClientKey::encrypt_value`]).
    pub fn encrypt_value(&self, shape: Shape, value: &BigInt) -> Result<Encrypted, Error> {
        let cts = value_digits(shape, value)?
            .into_iter()
            .map(|d| self.encrypt(d))
            .collect::<Result<_, _>>()?;
        Encrypted::new(shape, cts)
    }

    /// Encrypts many values of one shape as one compact list, expanded.
    pub fn encrypt_values(&self, shape: Shape, values: &[BigInt]) -> Result<Vec<Encrypted>, Error> {
        let mut digits = Vec::with_capacity(values.len() * shape.len());
        for v in values {
            digits.extend(value_digits(shape, v)?);
        }
        let cts = self
            .encrypt_list(&digits)?
            .expand(self.params, self.key_id)?;
        cts.chunks(shape.len().max(1))
            .take(values.len())
            .map(|c| Encrypted::new(shape, c.to_vec()))
            .collect()
    }

    /// Encrypts `value` on `n` signed-binary digits (as
    /// [`ClientKey::encrypt_int`]).
    pub fn encrypt_int(&self, value: impl Into<BigInt>, n: usize) -> Result<Encrypted, Error> {
        self.encrypt_value(Shape::Int { digits: n }, &value.into())
    }

    /// Encrypts a Rust integer as the word of its type (as
    /// [`ClientKey::encrypt_word`]).
    pub fn encrypt_word<T: Plain>(&self, value: T) -> Result<Encrypted, Error> {
        let shape = Shape::Word {
            bits: T::BITS,
            signed: T::SIGNED,
        };
        self.encrypt_value(shape, &value.into())
    }

    /// Encrypts a boolean (a one-bit word).
    pub fn encrypt_bool(&self, value: bool) -> Result<Encrypted, Error> {
        let shape = Shape::Word {
            bits: 1,
            signed: false,
        };
        self.encrypt_value(shape, &BigInt::from(value as u8))
    }

    /// The file's payload: compressed when the key came as a seed.
    fn stored(&self) -> Stored {
        match &self.seeded {
            Some(s) => Stored::Seeded(s.clone()),
            None => Stored::Full(self.key.as_ref().to_vec()),
        }
    }

    /// Bytes of its file (compressed when it was made here or read so).
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        KeyFile::to_bytes(self)
    }

    /// Writes the key (seed and body where it can: `k N` words plus a
    /// header, 16 KiB on `DIGITS_128`).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        KeyFile::save(self, path)
    }

    /// Reads a key written by [`PublicKey::save`].
    pub fn load(path: &Path) -> Result<PublicKey, Error> {
        <PublicKey as KeyFile>::load(path)
    }

    /// Reads public-key file bytes from anywhere (`origin` names them in
    /// errors), checking every field.
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<PublicKey, Error> {
        <PublicKey as KeyFile>::from_bytes(origin, bytes)
    }
}

impl KeyFile for PublicKey {
    const KIND: FileKind = FileKind::PublicKey;
    const LABEL: &'static str = "<public key>";
    type Payload<'a> = Stored;
    type Stored = Stored;

    fn file_ids(&self) -> (ParamsId, KeyId) {
        (self.params, self.key_id)
    }

    fn payload(&self) -> Stored {
        self.stored()
    }

    /// The ids are the header's (the payload holds none).
    fn from_stored(origin: &Path, info: &FileInfo, stored: Stored) -> Result<Self, Error> {
        let p = info.params.params();
        if unsupported(p).is_some() {
            return Err(inconsistent(
                origin,
                format!("{} has no public key", p.name),
            ));
        }
        let n = p.big_lwe_dimension().0;
        match stored {
            Stored::Seeded(s) if s.body.len() == n && s.seed != 0 => {
                PublicKey::from_seeded(info.params, info.key_id, s)
            }
            Stored::Full(data) if data.len() == 2 * n => Ok(PublicKey {
                params: info.params,
                key_id: info.key_id,
                key: LweCompactPublicKey::from_container(data, CiphertextModulus::new_native()),
                seeded: None,
                encryption: Mutex::new(generator()),
            }),
            _ => Err(inconsistent(
                origin,
                format!("a public key that does not fit {}", p.name),
            )),
        }
    }
}

impl CompactList {
    /// How many ciphertexts it expands to.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether it holds no ciphertext.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Checks its length against `params` and an expected count: then
    /// [`CompactList::expand`] cannot fail.
    pub(crate) fn fits(&self, params: &ParameterSet, count: usize) -> bool {
        let n = params.big_lwe_dimension();
        self.count == count as u64
            && self.data.len() == lwe_compact_ciphertext_list_size(n, LweCiphertextCount(count))
    }

    /// The list with its last word dropped: one that fits no count (for
    /// forged-file tests).
    #[cfg(test)]
    pub(crate) fn without_last_word(&self) -> CompactList {
        let mut data = self.data.clone();
        data.pop();
        CompactList {
            count: self.count,
            data,
        }
    }

    /// The ciphertexts, each as a [`Ciphertext`] of `params` under `key_id`
    /// (tfhe-rs's expansion, in parallel).
    pub fn expand(&self, params: ParamsId, key_id: KeyId) -> Result<Vec<Ciphertext>, Error> {
        let p = params.params();
        if unsupported(p).is_some() || !self.fits(p, self.len()) {
            return Err(Error::Config(format!(
                "a compact list of {} ciphertexts that does not fit {}",
                self.count, p.name
            )));
        }
        if self.is_empty() {
            return Ok(Vec::new());
        }
        let lwe_size = p.big_lwe_dimension().to_lwe_size();
        let list = LweCompactCiphertextList::from_container(
            self.data.as_slice(),
            lwe_size,
            LweCiphertextCount(self.len()),
            CiphertextModulus::new_native(),
        );
        let mut out = LweCiphertextList::new(
            0u64,
            lwe_size,
            LweCiphertextCount(self.len()),
            CiphertextModulus::new_native(),
        );
        par_expand_lwe_compact_ciphertext_list(&mut out, &list);
        Ok(out
            .as_ref()
            .chunks_exact(lwe_size.0)
            .map(|c| {
                let lwe =
                    LweCiphertext::from_container(c.to_vec(), CiphertextModulus::new_native());
                Ciphertext::from_lwe(params, key_id, lwe)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::noise::NoiseModel;
    use crate::crypto::params::{ALL, GATES_128, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
    use crate::testing::keys::keys;
    use crate::testing::Scratch;

    /// Every digit value, both signs, decrypts exactly, one at a time and
    /// as a compact list longer than one mask's `k N`.
    #[test]
    fn public_key_ciphertexts_decrypt_under_the_client_key() {
        for p in [&INSECURE_TEST_DIGITS, &INSECURE_TEST_BITS] {
            let (client, _) = keys(p);
            let public = client.public_key().unwrap();
            assert_eq!(public.key_id(), client.key_id());
            let m = p.message_modulus() as i64;
            for v in -(m / 2)..m {
                let ct = public.encrypt(v).unwrap();
                assert_eq!(client.decrypt(&ct).unwrap(), v.rem_euclid(m) as u64);
            }
            let n = p.big_lwe_dimension().0;
            let digits: Vec<i64> = (0..n as i64 + 7).map(|i| (i * 7919) % m).collect();
            let list = public.encrypt_list(&digits).unwrap();
            assert_eq!(list.len(), digits.len());
            let cts = list.expand(p.id, client.key_id()).unwrap();
            for (ct, d) in cts.iter().zip(&digits) {
                assert_eq!(client.decrypt(ct).unwrap(), *d as u64);
            }
            assert!(public.encrypt(m).is_err());
        }
    }

    /// Typed values: integers and words, one by one and in one list.
    #[test]
    fn typed_values_round_trip() {
        let (client, _) = keys(&INSECURE_TEST_DIGITS);
        let public = client.public_key().unwrap();
        let x = public.encrypt_int(-12345, 16).unwrap();
        assert_eq!(client.decrypt_i64(&x).unwrap(), -12345);
        let w = public.encrypt_word(0xBEEFu16).unwrap();
        assert_eq!(client.decrypt_word::<u16>(&w).unwrap(), 0xBEEF);
        assert!(client
            .decrypt_bool(&public.encrypt_bool(true).unwrap())
            .unwrap());
        let shape = Shape::Word {
            bits: 8,
            signed: true,
        };
        let values: Vec<BigInt> = (-128..128).map(BigInt::from).collect();
        let enc = public.encrypt_values(shape, &values).unwrap();
        assert_eq!(enc.len(), values.len());
        for (e, v) in enc.iter().zip(&values) {
            assert_eq!(&client.decrypt_value(e).unwrap(), v);
        }
        assert!(public.encrypt_int(1 << 20, 16).is_err());
    }

    /// Files: compressed as made, whole when read from a whole file; a
    /// truncated or foreign-set payload is a typed error.
    #[test]
    fn public_key_files_round_trip() {
        let dir = Scratch::new("public-key");
        let (client, _) = keys(&INSECURE_TEST_DIGITS);
        let public = client.public_key().unwrap();
        let path = dir.join("public.key");
        public.save(&path).unwrap();
        let n = INSECURE_TEST_DIGITS.big_lwe_dimension().0 as u64;
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(len < n * 8 + 200, "{len}");
        let back = PublicKey::load(&path).unwrap();
        assert_eq!(back.key.as_ref(), public.key.as_ref());
        let ct = back.encrypt(3).unwrap();
        assert_eq!(client.decrypt(&ct).unwrap(), 3);
        // A whole key reads too.
        let whole = back.decompressed();
        assert!(back.is_compressed() && !whole.is_compressed());
        let bytes = whole.to_bytes().unwrap();
        assert!(bytes.len() as u64 > 2 * n * 8);
        let again = PublicKey::from_bytes(Path::new("whole"), &bytes).unwrap();
        assert_eq!(again.key.as_ref(), public.key.as_ref());
        // A body of the wrong length, resealed: inconsistent, no panic.
        let short = Stored::Seeded(SeededKey {
            seed: 9,
            body: vec![0; n as usize - 1],
        });
        let bytes = crate::crypto::files::encode(
            Path::new("x"),
            FileKind::PublicKey,
            INSECURE_TEST_DIGITS.id,
            client.key_id(),
            &short,
        )
        .unwrap();
        let e = PublicKey::from_bytes(Path::new("short"), &bytes)
            .err()
            .unwrap();
        assert!(e.to_string().contains("does not fit"), "{e}");
        // A compact list that does not fit its set is an error.
        let list = public.encrypt_list(&[1, 2, 3]).unwrap();
        let bad = list.without_last_word();
        assert!(bad
            .expand(INSECURE_TEST_DIGITS.id, client.key_id())
            .is_err());
        assert!(list.expand(INSECURE_TEST_BITS.id, client.key_id()).is_err());
    }

    /// The sets with a public key, and its noise against the budgets: a
    /// public-key input must be no noisier than the bootstrap output every
    /// budget assumes, for every secure set that has one.
    #[test]
    fn public_key_noise_fits_every_budget() {
        let (client, _) = keys(&INSECURE_TEST_DIGITS);
        assert!(client.public_key().is_ok());
        assert!(unsupported(&GATES_128).is_some());
        for p in ALL.iter().filter(|p| !p.is_insecure()) {
            if unsupported(p).is_some() {
                continue;
            }
            let v = public_key_variance(p);
            let pbs = NoiseModel::of(p).pbs;
            eprintln!(
                "{}: public key 2^{:.2}, PBS 2^{:.2}",
                p.name,
                v.log2(),
                pbs.log2()
            );
            assert!(v < pbs / 1e6, "{}", p.name);
        }
    }
}
