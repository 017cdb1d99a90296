//! The client key: secret keys, key generation, encryption and decryption
//! of digits and of typed values, and its file. Never leaves the data owner.

use std::path::Path;
use std::sync::Mutex;

use num_bigint::BigInt;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use tfhe::core_crypto::prelude::*;

use crate::crypto::compressed::{
    CompressedServerKey, SeededBootstrapKey, SeededKeySwitch, SeededKeySwitchKey,
};
use crate::crypto::encoding::{
    signed_binary_value, value_digits, word_value, Encrypted, Plain, Shape,
};
use crate::crypto::files::{check_ids, inconsistent, FileInfo, FileKind};
use crate::crypto::key_files::KeyFile;
use crate::crypto::keys::{
    as_ggsw_list, digit_from_i64, round_to_digit, signed_digit, Ciphertext, KeyId, KeySwitchKey,
    ServerKey, ServerKeyData,
};
use crate::crypto::packing::{generate_packing_key, SeededPackingKey};
use crate::crypto::params::{ParameterSet, ParamsId};
use crate::error::Error;

/// Secret keys: encrypts and decrypts. Never leaves the data owner.
pub struct ClientKey {
    params: ParamsId,
    key_id: KeyId,
    lwe_secret_key: LweSecretKeyOwned<u64>,
    glwe_secret_key: GlweSecretKeyOwned<u64>,
    encryption: Mutex<EncryptionRandomGenerator<DefaultRandomGenerator>>,
}

/// The serializable part of a [`ClientKey`].
#[derive(Serialize, Deserialize)]
pub(crate) struct ClientKeyData {
    pub params: ParamsId,
    pub key_id: KeyId,
    pub lwe_secret_key: LweSecretKeyOwned<u64>,
    pub glwe_secret_key: GlweSecretKeyOwned<u64>,
}

/// The bit of a phase that stores it as 0 or 2 units: multiples of 2
/// units, rounded at `pi - 1` bits; odd multiples are 1.
fn bit_of_phase(p: &ParameterSet, phase: u64) -> bool {
    round_to_digit(phase, p.pi - 1) % 2 == 1
}

fn encryption_generator() -> EncryptionRandomGenerator<DefaultRandomGenerator> {
    let mut seeder = new_seeder();
    let seeder = seeder.as_mut();
    EncryptionRandomGenerator::<DefaultRandomGenerator>::new(seeder.seed(), seeder)
}

impl ClientKey {
    /// Generates fresh secret keys for `params`.
    pub fn generate(params: &ParameterSet) -> ClientKey {
        let mut seeder = new_seeder();
        let mut secret_generator =
            SecretRandomGenerator::<DefaultRandomGenerator>::new(seeder.as_mut().seed());
        let lwe_secret_key = allocate_and_generate_new_binary_lwe_secret_key(
            params.lwe_dimension,
            &mut secret_generator,
        );
        let glwe_secret_key = allocate_and_generate_new_binary_glwe_secret_key(
            params.glwe_dimension,
            params.polynomial_size,
            &mut secret_generator,
        );
        let key_id = KeyId(rand::rngs::OsRng.next_u64());
        Self::from_data(ClientKeyData {
            params: params.id,
            key_id,
            lwe_secret_key,
            glwe_secret_key,
        })
    }

    pub(crate) fn from_data(data: ClientKeyData) -> ClientKey {
        ClientKey {
            params: data.params,
            key_id: data.key_id,
            lwe_secret_key: data.lwe_secret_key,
            glwe_secret_key: data.glwe_secret_key,
            encryption: Mutex::new(encryption_generator()),
        }
    }

    pub(crate) fn to_data(&self) -> ClientKeyData {
        ClientKeyData {
            params: self.params,
            key_id: self.key_id,
            lwe_secret_key: self.lwe_secret_key.clone(),
            glwe_secret_key: self.glwe_secret_key.clone(),
        }
    }

    /// The parameter set of the keys.
    pub fn params(&self) -> &'static ParameterSet {
        self.params.params()
    }

    /// The identity every ciphertext made with this key carries.
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// Generates the matching evaluation keys (bootstrap key and key-switch
    /// key, with tfhe-rs's generators; the bootstrap key in parallel).
    pub fn server_key(&self) -> ServerKey {
        let p = self.params();
        let mut generator = encryption_generator();
        let bootstrap_key = match p.grouping_factor {
            None => par_allocate_and_generate_new_lwe_bootstrap_key(
                &self.lwe_secret_key,
                &self.glwe_secret_key,
                p.pbs_base_log,
                p.pbs_level,
                p.glwe_noise,
                CiphertextModulus::new_native(),
                &mut generator,
            ),
            Some(g) => {
                let mut bsk = LweMultiBitBootstrapKey::new(
                    0u64,
                    p.glwe_dimension.to_glwe_size(),
                    p.polynomial_size,
                    p.pbs_base_log,
                    p.pbs_level,
                    p.lwe_dimension,
                    g,
                    CiphertextModulus::new_native(),
                );
                par_generate_lwe_multi_bit_bootstrap_key(
                    &self.lwe_secret_key,
                    &self.glwe_secret_key,
                    &mut bsk,
                    p.glwe_noise,
                    &mut generator,
                );
                as_ggsw_list(bsk)
            }
        };
        let big_key = self.glwe_secret_key.as_lwe_secret_key();
        let keyswitch_key = if p.ks32 {
            let (small, noise) = self.ks32_target();
            KeySwitchKey::Narrow(allocate_and_generate_new_lwe_keyswitch_key(
                &big_key,
                &small,
                p.ks_base_log,
                p.ks_level,
                noise,
                CiphertextModulus::new_native(),
                &mut generator,
            ))
        } else {
            KeySwitchKey::Native(allocate_and_generate_new_lwe_keyswitch_key(
                &big_key,
                &self.lwe_secret_key,
                p.ks_base_log,
                p.ks_level,
                p.lwe_noise,
                CiphertextModulus::new_native(),
                &mut generator,
            ))
        };
        let packing_key = generate_packing_key(p, &self.glwe_secret_key, &mut generator);
        ServerKey::from_data(ServerKeyData {
            params: self.params,
            key_id: self.key_id,
            bootstrap_key,
            keyswitch_key,
            packing_key,
        })
    }

    /// The same evaluation keys in tfhe-rs's seeded form (same noise
    /// distributions and decompositions as [`ClientKey::server_key`]; the
    /// bootstrap key in parallel): 3.2x (`DIGITS_128`) to 6.6x
    /// (`BITS_128`) smaller on disk, expanded by
    /// [`CompressedServerKey::decompress`] or when [`ServerKey::load`]
    /// reads its file.
    pub fn compressed_server_key(&self) -> CompressedServerKey {
        let p = self.params();
        let mut seeder = new_seeder();
        let seeder = seeder.as_mut();
        let bootstrap_key =
            SeededBootstrapKey::generate(p, &self.lwe_secret_key, &self.glwe_secret_key, seeder);
        let big_key = self.glwe_secret_key.as_lwe_secret_key();
        let keyswitch_key = if p.ks32 {
            let (small, noise) = self.ks32_target();
            SeededKeySwitchKey::Narrow(SeededKeySwitch::generate(
                p, &big_key, &small, noise, seeder,
            ))
        } else {
            SeededKeySwitchKey::Native(SeededKeySwitch::generate(
                p,
                &big_key,
                &self.lwe_secret_key,
                p.lwe_noise,
                seeder,
            ))
        };
        let packing_key = SeededPackingKey::generate(p, &self.glwe_secret_key, seeder);
        CompressedServerKey::new(
            self.params,
            self.key_id,
            bootstrap_key,
            keyswitch_key,
            packing_key,
        )
    }

    /// For KS32 sets: the small key as 32-bit words (the same binary key)
    /// and its noise bound scaled from 2^64 to 2^32.
    pub(crate) fn ks32_target(&self) -> (LweSecretKeyOwned<u32>, DynamicDistribution<u32>) {
        let small: Vec<u32> = self
            .lwe_secret_key
            .as_ref()
            .iter()
            .map(|&b| b as u32)
            .collect();
        let noise = match self.params().lwe_noise {
            DynamicDistribution::TUniform(t) => {
                DynamicDistribution::new_t_uniform(t.bound_log2().saturating_sub(32))
            }
            DynamicDistribution::Gaussian(g) => {
                DynamicDistribution::new_gaussian_from_std_dev(StandardDev(g.std))
            }
        };
        (LweSecretKey::from_container(small), noise)
    }

    /// Encrypts one digit; `value` may be given signed (`[-2^(pi-1), 0)`) or
    /// unsigned (`[0, 2^pi)`).
    pub fn encrypt(&self, value: i64) -> Result<Ciphertext, Error> {
        let p = self.params();
        let digit = digit_from_i64(p, value)?;
        let key = self.glwe_secret_key.as_lwe_secret_key();
        let mut lwe = LweCiphertext::new(
            0u64,
            key.lwe_dimension().to_lwe_size(),
            CiphertextModulus::new_native(),
        );
        let mut generator = self.encryption.lock().unwrap_or_else(|e| e.into_inner());
        encrypt_lwe_ciphertext(
            &key,
            &mut lwe,
            Plaintext(digit.wrapping_mul(p.delta())),
            p.glwe_noise,
            &mut generator,
        );
        Ok(Ciphertext {
            params: self.params,
            key_id: self.key_id,
            lwe,
        })
    }

    /// Decrypts one digit into `Z_{2^pi}` (`0..2^pi`).
    pub fn decrypt(&self, ct: &Ciphertext) -> Result<u64, Error> {
        self.check(ct)?;
        let p = self.params();
        let phase = decrypt_lwe_ciphertext(&self.glwe_secret_key.as_lwe_secret_key(), &ct.lwe).0;
        Ok(round_to_digit(phase, p.pi))
    }

    /// Decrypts a bit stored as 0 or 2, rounding to the nearer of the two
    /// (a margin of one unit, as the bits family's budgets assume).
    pub fn decrypt_bit(&self, ct: &Ciphertext) -> Result<bool, Error> {
        self.check(ct)?;
        let p = self.params();
        let phase = decrypt_lwe_ciphertext(&self.glwe_secret_key.as_lwe_secret_key(), &ct.lwe).0;
        Ok(bit_of_phase(p, phase))
    }

    /// Decrypts one digit, signed view `[-2^(pi-1), 2^(pi-1))`.
    pub fn decrypt_signed(&self, ct: &Ciphertext) -> Result<i64, Error> {
        Ok(signed_digit(self.params(), self.decrypt(ct)?))
    }

    /// The raw error of `ct` against the expected digit, as a signed torus
    /// element in units of 2^-64 (for noise measurements).
    pub fn phase_error(&self, ct: &Ciphertext, expected: u64) -> Result<i64, Error> {
        self.check(ct)?;
        let p = self.params();
        let phase = decrypt_lwe_ciphertext(&self.glwe_secret_key.as_lwe_secret_key(), &ct.lwe).0;
        Ok(phase.wrapping_sub(expected.wrapping_mul(p.delta())) as i64)
    }

    /// The small LWE secret key (for noise measurement after key switching).
    pub fn small_key(&self) -> &LweSecretKeyOwned<u64> {
        &self.lwe_secret_key
    }

    /// The GLWE secret key (packed results decrypt under it).
    pub(crate) fn glwe_key(&self) -> &GlweSecretKeyOwned<u64> {
        &self.glwe_secret_key
    }

    /// The GLWE secret key read as an LWE key: the key fresh ciphertexts
    /// are under (for the public key, and for checking key-switch keys).
    pub(crate) fn big_key(&self) -> LweSecretKey<&[u64]> {
        self.glwe_secret_key.as_lwe_secret_key()
    }

    fn check(&self, ct: &Ciphertext) -> Result<(), Error> {
        ct.check_owner(self.params, self.key_id)
    }

    /// The bytes of its file ([`ClientKey::save`]'s): the secret keys,
    /// for a client that stores them itself (the WebAssembly client keeps
    /// them in the browser's IndexedDB).
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        KeyFile::to_bytes(self)
    }

    /// Writes the secret keys (file mode 0600).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        KeyFile::save(self, path)
    }

    /// Reads secret keys written by [`ClientKey::save`], checking every
    /// field: the file's bytes, then [`ClientKey::from_bytes`].
    pub fn load(path: &Path) -> Result<ClientKey, Error> {
        <ClientKey as KeyFile>::load(path)
    }

    /// Reads client-key file bytes from anywhere (`origin` names them in
    /// errors), with every check of [`ClientKey::load`].
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<ClientKey, Error> {
        <ClientKey as KeyFile>::from_bytes(origin, bytes)
    }

    /// Encrypts `value` on `n` signed-binary digits (`|value| < 2^n`).
    pub fn encrypt_int(&self, value: impl Into<BigInt>, n: usize) -> Result<Encrypted, Error> {
        self.encrypt_value(Shape::Int { digits: n }, &value.into())
    }

    /// Encrypts `value` as a value of `shape`: one ciphertext per digit of
    /// its encoding (an integer's signed-binary or two's-complement digits,
    /// a word's bits as 0 or 2).
    pub fn encrypt_value(&self, shape: Shape, value: &BigInt) -> Result<Encrypted, Error> {
        let cts = value_digits(shape, value)?
            .into_iter()
            .map(|d| self.encrypt(d))
            .collect::<Result<_, _>>()?;
        Encrypted::new(shape, cts)
    }

    /// Encrypts `value` in `n`-bit two's complement (`-2^(n-1) <= value <
    /// 2^(n-1)`), for an input made by `hearth::Program::input_twos`.
    pub fn encrypt_int_twos(&self, value: impl Into<BigInt>, n: usize) -> Result<Encrypted, Error> {
        self.encrypt_value(Shape::TwosInt { bits: n }, &value.into())
    }

    /// Decrypts an integer; every digit must decrypt into {-1, 0, 1}.
    pub fn decrypt_int(&self, x: &Encrypted) -> Result<BigInt, Error> {
        let (Shape::Int { .. } | Shape::TwosInt { .. }) = x.shape else {
            return Err(Error::ShapeMismatch {
                what: "decrypt_int".into(),
                expected: Shape::Int {
                    digits: x.cts.len(),
                },
                found: x.shape,
            });
        };
        self.value_from_phases(x.shape, &self.phases(&x.cts)?)
    }

    /// The phases of `cts` (checked against this key).
    fn phases(&self, cts: &[Ciphertext]) -> Result<Vec<u64>, Error> {
        let key = self.glwe_secret_key.as_lwe_secret_key();
        cts.iter()
            .map(|ct| {
                self.check(ct)?;
                Ok(decrypt_lwe_ciphertext(&key, &ct.lwe).0)
            })
            .collect()
    }

    /// The value of shape `shape` whose digits have these phases (one per
    /// digit): integers' digits rounded to `Z_{2^pi}` and read in
    /// {-1, 0, 1}, words' bits as 0 or 2 units (a margin of one unit).
    pub(crate) fn value_from_phases(&self, shape: Shape, phases: &[u64]) -> Result<BigInt, Error> {
        let p = self.params();
        if let Shape::Word { signed, .. } = shape {
            let bits: Vec<bool> = phases.iter().map(|&phase| bit_of_phase(p, phase)).collect();
            return Ok(word_value(&bits, signed));
        }
        let mut ds = Vec::with_capacity(phases.len());
        for &phase in phases {
            let d = signed_digit(p, round_to_digit(phase, p.pi));
            if !(-1..=1).contains(&d) {
                return Err(Error::DoesNotFit {
                    value: d.to_string(),
                    target: "a signed-binary digit {-1, 0, 1} (not an integer ciphertext?)".into(),
                });
            }
            ds.push(d);
        }
        Ok(signed_binary_value(&ds))
    }

    /// Decrypts an integer to an `i64`, failing if the value does not fit.
    pub fn decrypt_i64(&self, x: &Encrypted) -> Result<i64, Error> {
        let v = self.decrypt_int(x)?;
        i64::try_from(&v).map_err(|_| Error::DoesNotFit {
            value: v.to_string(),
            target: "an i64".into(),
        })
    }

    /// Decrypts an integer to an `i128`, failing if the value does not fit.
    pub fn decrypt_i128(&self, x: &Encrypted) -> Result<i128, Error> {
        let v = self.decrypt_int(x)?;
        i128::try_from(&v).map_err(|_| Error::DoesNotFit {
            value: v.to_string(),
            target: "an i128".into(),
        })
    }

    /// Encrypts `value` as an `n`-bit word (unsigned, or two's complement
    /// when `signed`); a value out of range is an error.
    pub fn encrypt_word_of(
        &self,
        value: impl Into<BigInt>,
        n: usize,
        signed: bool,
    ) -> Result<Encrypted, Error> {
        self.encrypt_value(Shape::Word { bits: n, signed }, &value.into())
    }

    /// Encrypts a Rust integer as the word of its type (`u32` as a 32-bit
    /// unsigned word, ...).
    pub fn encrypt_word<T: Plain>(&self, value: T) -> Result<Encrypted, Error> {
        self.encrypt_word_of(value, T::BITS, T::SIGNED)
    }

    /// Encrypts a boolean (a one-bit word).
    pub fn encrypt_bool(&self, value: bool) -> Result<Encrypted, Error> {
        self.encrypt_word_of(value as u8, 1, false)
    }

    /// Decrypts a word of any width to its value.
    pub fn decrypt_word_value(&self, x: &Encrypted) -> Result<BigInt, Error> {
        let Shape::Word { .. } = x.shape else {
            return Err(Error::ShapeMismatch {
                what: "decrypt a word".into(),
                expected: Shape::Word {
                    bits: x.cts.len(),
                    signed: false,
                },
                found: x.shape,
            });
        };
        self.value_from_phases(x.shape, &self.phases(&x.cts)?)
    }

    /// Decrypts a word into the Rust integer of its type (the shape must
    /// match: a `u32` reads only a 32-bit unsigned word).
    pub fn decrypt_word<T: Plain>(&self, x: &Encrypted) -> Result<T, Error> {
        let want = Shape::Word {
            bits: T::BITS,
            signed: T::SIGNED,
        };
        if x.shape != want {
            return Err(Error::ShapeMismatch {
                what: "decrypt_word".into(),
                expected: want,
                found: x.shape,
            });
        }
        let v = self.decrypt_word_value(x)?;
        T::try_from(v.clone()).map_err(|_| Error::DoesNotFit {
            value: v.to_string(),
            target: want.to_string(),
        })
    }

    /// Decrypts a boolean (a one-bit word).
    pub fn decrypt_bool(&self, x: &Encrypted) -> Result<bool, Error> {
        let want = Shape::Word {
            bits: 1,
            signed: false,
        };
        if x.shape != want {
            return Err(Error::ShapeMismatch {
                what: "decrypt_bool".into(),
                expected: want,
                found: x.shape,
            });
        }
        self.decrypt_bit(&x.cts[0])
    }
}

impl ClientKey {
    /// Encrypts digits (as [`ClientKey::encrypt`] does, one ciphertext
    /// each) as one tfhe-rs seeded LWE list: the masks come from one fresh
    /// seed, so the list travels as the seed and one body per digit. Returns
    /// the seed and the bodies.
    pub(crate) fn encrypt_seeded(&self, digits: &[i64]) -> Result<(u128, Vec<u64>), Error> {
        let p = self.params();
        let encoded = digits
            .iter()
            .map(|&d| Ok(digit_from_i64(p, d)?.wrapping_mul(p.delta())))
            .collect::<Result<Vec<u64>, Error>>()?;
        let key = self.glwe_secret_key.as_lwe_secret_key();
        let mut seeder = new_seeder();
        let seed = crate::crypto::compressed::fresh_seed(seeder.as_mut());
        let mut seeded = SeededLweCiphertextList::new(
            0u64,
            key.lwe_dimension().to_lwe_size(),
            LweCiphertextCount(encoded.len()),
            seed.into(),
            CiphertextModulus::new_native(),
        );
        par_encrypt_seeded_lwe_ciphertext_list(
            &key,
            &mut seeded,
            &PlaintextList::from_container(encoded),
            p.glwe_noise,
            seeder.as_mut(),
        );
        Ok((seed.0, seeded.into_container()))
    }
}

impl KeyFile for ClientKey {
    const KIND: FileKind = FileKind::ClientKey;
    const LABEL: &'static str = "<client key>";
    const SECRET: bool = true;
    type Payload<'a> = ClientKeyData;
    type Stored = ClientKeyData;

    fn file_ids(&self) -> (ParamsId, KeyId) {
        (self.params().id, self.key_id())
    }

    fn payload(&self) -> ClientKeyData {
        self.to_data()
    }

    fn from_stored(origin: &Path, info: &FileInfo, data: ClientKeyData) -> Result<Self, Error> {
        check_ids(origin, info, data.params, data.key_id)?;
        let p = info.params.params();
        // The polynomial size first: tfhe derives the GLWE dimension by
        // dividing by it (a forged 0 panicked, found by fuzzing).
        if data.glwe_secret_key.polynomial_size() != p.polynomial_size
            || data.lwe_secret_key.lwe_dimension() != p.lwe_dimension
            || data.glwe_secret_key.glwe_dimension() != p.glwe_dimension
            || data
                .lwe_secret_key
                .as_ref()
                .iter()
                .chain(data.glwe_secret_key.as_ref())
                .any(|&b| b > 1)
        {
            return Err(inconsistent(
                origin,
                format!("secret keys do not fit {}", p.name),
            ));
        }
        Ok(ClientKey::from_data(data))
    }
}
