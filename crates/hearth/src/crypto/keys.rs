//! Keys and ciphertexts (entities), key generation, encryption and decryption.
//!
//! Ciphertexts between bootstraps are LWE ciphertexts under the GLWE secret
//! key read as an LWE key (dimension `k * N`), as in tfhe-rs's KS-PBS
//! atomic pattern: a bootstrap key-switches to the small key (dimension `n`)
//! and blind-rotates back.

use std::fmt;
use std::sync::Mutex;

use rand::RngCore;
use serde::{Deserialize, Serialize};
use tfhe::core_crypto::prelude::*;

use crate::crypto::params::{ParameterSet, ParamsId};
use crate::error::Error;

/// Random identity of one key pair, carried by every ciphertext made with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeyId(pub u64);

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// One encrypted digit of `Z_{2^pi}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ciphertext {
    pub(crate) params: ParamsId,
    pub(crate) key_id: KeyId,
    pub(crate) lwe: LweCiphertextOwned<u64>,
}

impl Ciphertext {
    pub fn params(&self) -> ParamsId {
        self.params
    }

    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// Checks that this ciphertext was made for `params` under `key_id`.
    pub(crate) fn check_owner(&self, params: ParamsId, key_id: KeyId) -> Result<(), Error> {
        if self.params != params {
            return Err(Error::ParamsMismatch {
                expected: params,
                found: self.params,
            });
        }
        if self.key_id != key_id {
            return Err(Error::WrongKey {
                expected: key_id,
                found: self.key_id,
            });
        }
        // A ciphertext read from elsewhere (a file, the network) may carry
        // the right ids and the wrong shape: refuse it before any backend
        // reads it.
        let p = params.params();
        if self.lwe.lwe_size() != p.big_lwe_dimension().to_lwe_size()
            || !self.lwe.ciphertext_modulus().is_native_modulus()
        {
            return Err(Error::Config(format!(
                "a ciphertext of LWE size {} does not fit {}",
                self.lwe.lwe_size().0,
                p.name
            )));
        }
        Ok(())
    }

    /// The raw LWE ciphertext (dimension `k * N`).
    pub fn lwe(&self) -> &LweCiphertextOwned<u64> {
        &self.lwe
    }
}

/// Reduces a signed value into `Z_{2^pi}`, refusing values outside
/// `[-2^(pi-1), 2^pi)` (both the signed and the unsigned view are accepted).
pub(crate) fn digit_from_i64(params: &ParameterSet, value: i64) -> Result<u64, Error> {
    let m = params.message_modulus() as i64;
    if value < -(m / 2) || value >= m {
        return Err(Error::ValueOutOfRange {
            value,
            params: params.id,
            min: -(m / 2),
            max: m - 1,
        });
    }
    Ok(value.rem_euclid(m) as u64)
}

/// The signed view of a digit: `[-2^(pi-1), 2^(pi-1))`.
pub fn signed_digit(params: &ParameterSet, digit: u64) -> i64 {
    let m = params.message_modulus();
    let d = digit % m;
    if d >= m / 2 {
        d as i64 - m as i64
    } else {
        d as i64
    }
}

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

/// The key switch to the small key, onto 64-bit LWE (the classic KS-PBS
/// pattern) or 32-bit LWE (tfhe-rs's KS32 pattern,
/// [`ParameterSet::ks32`]).
#[derive(Serialize, Deserialize)]
pub(crate) enum KeySwitchKey {
    Native(LweKeyswitchKeyOwned<u64>),
    Narrow(LweKeyswitchKeyOwned<u32>),
}

impl KeySwitchKey {
    /// Input and output dimensions, decomposition, and whether it is the
    /// 32-bit kind with a native modulus and the expected size.
    pub(crate) fn fits(&self, p: &ParameterSet) -> bool {
        fn fits_one<S: UnsignedInteger>(k: &LweKeyswitchKeyOwned<S>, p: &ParameterSet) -> bool {
            k.input_key_lwe_dimension() == p.big_lwe_dimension()
                && k.output_key_lwe_dimension() == p.lwe_dimension
                && k.decomposition_base_log() == p.ks_base_log
                && k.decomposition_level_count() == p.ks_level
                && k.as_ref().len()
                    == p.big_lwe_dimension().0 * p.ks_level.0 * (p.lwe_dimension.0 + 1)
                && k.ciphertext_modulus().is_native_modulus()
        }
        match self {
            KeySwitchKey::Native(k) => !p.ks32 && fits_one(k, p),
            KeySwitchKey::Narrow(k) => p.ks32 && fits_one(k, p),
        }
    }
}

/// Public evaluation keys in the standard domain: what is written to disk.
#[derive(Serialize, Deserialize)]
pub(crate) struct ServerKeyData {
    pub params: ParamsId,
    pub key_id: KeyId,
    pub bootstrap_key: LweBootstrapKeyOwned<u64>,
    pub keyswitch_key: KeySwitchKey,
}

/// Evaluation keys: Fourier-domain bootstrap key and key-switch key.
pub struct ServerKey {
    pub(crate) data: ServerKeyData,
    pub(crate) fourier_bsk: FourierLweBootstrapKeyOwned,
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

    pub fn params(&self) -> &'static ParameterSet {
        self.params.params()
    }

    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// Generates the matching evaluation keys (bootstrap key and key-switch
    /// key, with tfhe-rs's generators; the bootstrap key in parallel).
    pub fn server_key(&self) -> ServerKey {
        let p = self.params();
        let mut generator = encryption_generator();
        let bootstrap_key = par_allocate_and_generate_new_lwe_bootstrap_key(
            &self.lwe_secret_key,
            &self.glwe_secret_key,
            p.pbs_base_log,
            p.pbs_level,
            p.glwe_noise,
            CiphertextModulus::new_native(),
            &mut generator,
        );
        let big_key = self.glwe_secret_key.as_lwe_secret_key();
        let keyswitch_key = if p.ks32 {
            // The same binary key as 32-bit words; the noise bound scaled
            // from 2^64 to 2^32.
            let small: Vec<u32> = self
                .lwe_secret_key
                .as_ref()
                .iter()
                .map(|&b| b as u32)
                .collect();
            let noise = match p.lwe_noise {
                DynamicDistribution::TUniform(t) => {
                    DynamicDistribution::new_t_uniform(t.bound_log2().saturating_sub(32))
                }
                DynamicDistribution::Gaussian(g) => {
                    DynamicDistribution::new_gaussian_from_std_dev(StandardDev(g.std))
                }
            };
            KeySwitchKey::Narrow(allocate_and_generate_new_lwe_keyswitch_key(
                &big_key,
                &LweSecretKey::from_container(small),
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
        ServerKey::from_data(ServerKeyData {
            params: self.params,
            key_id: self.key_id,
            bootstrap_key,
            keyswitch_key,
        })
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
        // Multiples of 2 units: round at pi - 1 bits; odd multiples are 1.
        Ok(round_to_digit(phase, p.pi - 1) % 2 == 1)
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
    pub(crate) fn small_key(&self) -> &LweSecretKeyOwned<u64> {
        &self.lwe_secret_key
    }

    fn check(&self, ct: &Ciphertext) -> Result<(), Error> {
        ct.check_owner(self.params, self.key_id)
    }
}

/// Rounds a torus phase to the nearest multiple of `delta = 2^(64-pi)`.
pub(crate) fn round_to_digit(phase: u64, pi: u32) -> u64 {
    let shift = 64 - pi;
    let rounded = phase.wrapping_add(1u64 << (shift - 1)) >> shift;
    rounded % (1 << pi)
}

impl ServerKey {
    pub(crate) fn from_data(data: ServerKeyData) -> ServerKey {
        let bsk = &data.bootstrap_key;
        let mut fourier_bsk = FourierLweBootstrapKey::new(
            bsk.input_lwe_dimension(),
            bsk.glwe_size(),
            bsk.polynomial_size(),
            bsk.decomposition_base_log(),
            bsk.decomposition_level_count(),
        );
        par_convert_standard_lwe_bootstrap_key_to_fourier(bsk, &mut fourier_bsk);
        ServerKey { data, fourier_bsk }
    }

    pub fn params(&self) -> &'static ParameterSet {
        self.data.params.params()
    }

    pub fn key_id(&self) -> KeyId {
        self.data.key_id
    }

    /// A trivial (noiseless, unencrypted) ciphertext of `value`.
    pub fn trivial(&self, value: i64) -> Result<Ciphertext, Error> {
        let p = self.params();
        let digit = digit_from_i64(p, value)?;
        let lwe = allocate_and_trivially_encrypt_new_lwe_ciphertext(
            p.big_lwe_dimension().to_lwe_size(),
            Plaintext(digit.wrapping_mul(p.delta())),
            CiphertextModulus::new_native(),
        );
        Ok(Ciphertext {
            params: self.data.params,
            key_id: self.data.key_id,
            lwe,
        })
    }

    /// Checks that `ct` was made under this key.
    pub fn check(&self, ct: &Ciphertext) -> Result<(), Error> {
        ct.check_owner(self.data.params, self.data.key_id)
    }
}
