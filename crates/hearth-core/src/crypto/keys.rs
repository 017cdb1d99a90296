//! Ciphertexts, key identities and the server key (evaluation keys); the
//! client key is in [`super::client_key`], the compressed server key in
//! [`super::compressed`].
//!
//! Ciphertexts between bootstraps are LWE ciphertexts under the GLWE secret
//! key read as an LWE key (dimension `k * N`), as in tfhe-rs's KS-PBS
//! atomic pattern: a bootstrap key-switches to the small key (dimension `n`)
//! and blind-rotates back.

use std::fmt;

use serde::{Deserialize, Serialize};
use tfhe::core_crypto::commons::math::random::Seed;
use tfhe::core_crypto::prelude::*;

pub use crate::crypto::client_key::ClientKey;
pub use crate::crypto::compressed::CompressedServerKey;
use crate::crypto::packing::PackingKey;
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
    /// The parameter set it was made for.
    pub fn params(&self) -> ParamsId {
        self.params
    }

    /// The key pair it was made under.
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// Checks that this ciphertext was made for `params` under `key_id`.
    pub fn check_owner(&self, params: ParamsId, key_id: KeyId) -> Result<(), Error> {
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

    /// The raw LWE ciphertext, taken out.
    pub fn into_lwe(self) -> LweCiphertextOwned<u64> {
        self.lwe
    }

    /// A digit's LWE ciphertext (dimension `k * N`) as one of `params`
    /// under `key_id`: what a backend's bootstrap returns. The shape is
    /// not checked here; [`Ciphertext::check_owner`] checks it.
    pub fn from_lwe(params: ParamsId, key_id: KeyId, lwe: LweCiphertextOwned<u64>) -> Ciphertext {
        Ciphertext {
            params,
            key_id,
            lwe,
        }
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
            // The stored fields and the length first: tfhe derives the
            // dimensions by dividing by levels x output size and by
            // subtracting 1 from the output size, which a forged file
            // could make zero (found by fuzzing).
            k.decomposition_base_log() == p.ks_base_log
                && k.decomposition_level_count() == p.ks_level
                && k.output_lwe_size() == p.lwe_dimension.to_lwe_size()
                && k.as_ref().len()
                    == p.big_lwe_dimension().0 * p.ks_level.0 * (p.lwe_dimension.0 + 1)
                && k.input_key_lwe_dimension() == p.big_lwe_dimension()
                && k.output_key_lwe_dimension() == p.lwe_dimension
                && k.ciphertext_modulus().is_native_modulus()
        }
        match self {
            KeySwitchKey::Native(k) => !p.ks32 && fits_one(k, p),
            KeySwitchKey::Narrow(k) => p.ks32 && fits_one(k, p),
        }
    }
}

/// Public evaluation keys in the standard domain: what is written to disk.
///
/// `bootstrap_key` is a list of GGSW ciphertexts, as tfhe-rs stores both
/// bootstrap keys: one per small-key coefficient for the classical
/// bootstrap; for a multi-bit set, the GGSWs of tfhe-rs's
/// `LweMultiBitBootstrapKey` in its order ([`ParameterSet::bootstrap_ggsw_count`]
/// of them), read as one by [`ServerKey::from_data`]. The file layout is
/// the same for both; the parameter set in the header says which.
#[derive(Serialize, Deserialize)]
pub(crate) struct ServerKeyData {
    pub params: ParamsId,
    pub key_id: KeyId,
    pub bootstrap_key: LweBootstrapKeyOwned<u64>,
    pub keyswitch_key: KeySwitchKey,
    /// Packs results ([`crate::crypto::packing`]).
    pub packing_key: PackingKey,
}

/// The bootstrap key in the Fourier domain, for the classical or the
/// multi-bit blind rotation.
pub(crate) enum FourierKey {
    Classic(FourierLweBootstrapKeyOwned),
    MultiBit(FourierLweMultiBitBootstrapKeyOwned),
}

/// Evaluation keys: Fourier-domain bootstrap key and key-switch key.
pub struct ServerKey {
    pub(crate) data: ServerKeyData,
    pub(crate) fourier_bsk: FourierKey,
}

/// A multi-bit bootstrap key's GGSW list stored as a classical key's (see
/// [`ServerKeyData`]).
pub(crate) fn as_ggsw_list(bsk: LweMultiBitBootstrapKeyOwned<u64>) -> LweBootstrapKeyOwned<u64> {
    let (glwe, poly) = (bsk.glwe_size(), bsk.polynomial_size());
    let (base_log, level) = (
        bsk.decomposition_base_log(),
        bsk.decomposition_level_count(),
    );
    let modulus = bsk.ciphertext_modulus();
    LweBootstrapKey::from_container(bsk.into_container(), glwe, poly, base_log, level, modulus)
}

/// Rounds a torus phase to the nearest multiple of `delta = 2^(64-pi)`.
pub(crate) fn round_to_digit(phase: u64, pi: u32) -> u64 {
    let shift = 64 - pi;
    let rounded = phase.wrapping_add(1u64 << (shift - 1)) >> shift;
    rounded % (1 << pi)
}

impl ServerKey {
    /// The keys with the bootstrap key converted to the Fourier domain.
    /// `data` must fit its parameter set (generated, or checked when read).
    pub(crate) fn from_data(data: ServerKeyData) -> ServerKey {
        let bsk = &data.bootstrap_key;
        let p = data.params.params();
        let fourier_bsk = match p.grouping_factor {
            None => {
                let mut fourier = FourierLweBootstrapKey::new(
                    bsk.input_lwe_dimension(),
                    bsk.glwe_size(),
                    bsk.polynomial_size(),
                    bsk.decomposition_base_log(),
                    bsk.decomposition_level_count(),
                );
                par_convert_standard_lwe_bootstrap_key_to_fourier(bsk, &mut fourier);
                FourierKey::Classic(fourier)
            }
            Some(g) => {
                let multi_bit = LweMultiBitBootstrapKey::from_container(
                    bsk.as_ref(),
                    bsk.glwe_size(),
                    bsk.polynomial_size(),
                    bsk.decomposition_base_log(),
                    bsk.decomposition_level_count(),
                    g,
                    bsk.ciphertext_modulus(),
                );
                let mut fourier = FourierLweMultiBitBootstrapKey::new(
                    p.lwe_dimension,
                    bsk.glwe_size(),
                    bsk.polynomial_size(),
                    bsk.decomposition_base_log(),
                    bsk.decomposition_level_count(),
                    g,
                );
                par_convert_standard_lwe_multi_bit_bootstrap_key_to_fourier(
                    &multi_bit,
                    &mut fourier,
                );
                FourierKey::MultiBit(fourier)
            }
        };
        ServerKey { data, fourier_bsk }
    }

    /// The parameter set of the keys.
    pub fn params(&self) -> &'static ParameterSet {
        self.data.params.params()
    }

    /// The key pair's identity.
    pub fn key_id(&self) -> KeyId {
        self.data.key_id
    }

    /// The bootstrap key in the standard domain (a device backend converts
    /// it to its own): for a multi-bit set, its GGSW list (see
    /// [`ParameterSet::grouping_factor`]).
    #[doc(hidden)]
    pub fn bootstrap_key(&self) -> &LweBootstrapKeyOwned<u64> {
        &self.data.bootstrap_key
    }

    /// The key-switch key onto 64-bit LWE, or `None` for a KS32 set.
    #[doc(hidden)]
    pub fn native_keyswitch_key(&self) -> Option<&LweKeyswitchKeyOwned<u64>> {
        match &self.data.keyswitch_key {
            KeySwitchKey::Native(k) => Some(k),
            KeySwitchKey::Narrow(_) => None,
        }
    }

    /// A trivial (noiseless, unencrypted) ciphertext of `value`.
    pub fn trivial(&self, value: i64) -> Result<Ciphertext, Error> {
        let mut cts = trivial_ciphertexts(self.data.params, self.data.key_id, &[value])?;
        Ok(cts.pop().expect("one digit, one ciphertext"))
    }

    /// Checks that `ct` was made under this key.
    pub fn check(&self, ct: &Ciphertext) -> Result<(), Error> {
        ct.check_owner(self.data.params, self.data.key_id)
    }
}

/// Trivial (noiseless, unencrypted) ciphertexts of `digits` under
/// `params`, labelled with `key_id`: values a bundle carries in the clear.
pub(crate) fn trivial_ciphertexts(
    params: ParamsId,
    key_id: KeyId,
    digits: &[i64],
) -> Result<Vec<Ciphertext>, Error> {
    let p = params.params();
    digits
        .iter()
        .map(|&d| {
            let digit = digit_from_i64(p, d)?;
            let lwe = allocate_and_trivially_encrypt_new_lwe_ciphertext(
                p.big_lwe_dimension().to_lwe_size(),
                Plaintext(digit.wrapping_mul(p.delta())),
                CiphertextModulus::new_native(),
            );
            Ok(Ciphertext {
                params,
                key_id,
                lwe,
            })
        })
        .collect()
}

/// The ciphertexts of a seeded list under `params` and `key_id`: the masks
/// drawn again from `seed` by tfhe-rs.
pub(crate) fn decompress_seeded(
    params: ParamsId,
    key_id: KeyId,
    seed: u128,
    bodies: &[u64],
) -> Vec<Ciphertext> {
    let lwe_size = params.params().big_lwe_dimension().to_lwe_size();
    let seeded = SeededLweCiphertextList::from_container(
        bodies,
        lwe_size,
        Seed(seed).into(),
        CiphertextModulus::new_native(),
    );
    let mut full = LweCiphertextList::new(
        0u64,
        lwe_size,
        LweCiphertextCount(bodies.len()),
        CiphertextModulus::new_native(),
    );
    decompress_seeded_lwe_ciphertext_list::<_, _, _, DefaultRandomGenerator>(&mut full, &seeded);
    full.as_ref()
        .chunks_exact(lwe_size.0)
        .map(|c| Ciphertext {
            params,
            key_id,
            lwe: LweCiphertext::from_container(c.to_vec(), CiphertextModulus::new_native()),
        })
        .collect()
}
