//! Bundles: many typed encrypted values in one file, for a program's
//! inputs or its outputs. Each entry is one [`Param`] (a name, a shape and
//! tensor dims) and its values; the bundle is bound to one key and
//! parameter set, so a server can check it against the program's
//! signature and its key before anything runs.
//!
//! A bundle fresh from [`ClientKey::encrypt_bundle`] is written compact:
//! its ciphertexts are one tfhe-rs seeded LWE list, stored as one seed and
//! one 64-bit body per ciphertext (about 2 000 times smaller on
//! `DIGITS_128`); reading it draws the masks again from the seed. Results
//! computed by a server are written in full.

use std::path::Path;
use std::sync::Arc;

use num_bigint::BigInt;
use serde::{Deserialize, Serialize};
use tfhe::core_crypto::commons::math::random::Seed;
use tfhe::core_crypto::prelude::*;

use crate::crypto::encoding::{signed_binary, twos_digits, word_bits, Encrypted, Param, Shape};
use crate::crypto::files::{
    check_lwe, decode, encode, inconsistent, read_bytes, write_atomic, FileKind,
};
use crate::crypto::keys::{Ciphertext, ClientKey, KeyId};
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// One named value or tensor of a bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Name, shape and dims.
    pub param: Param,
    /// The values, row-major: `param.count()` of them, each of
    /// `param.shape`.
    pub values: Vec<Encrypted>,
}

/// Typed encrypted values under one key: a program's inputs (from
/// [`ClientKey::encrypt_bundle`]) or outputs (from
/// [`crate::CompiledProgram::run_bundle`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Bundle {
    params: ParamsId,
    key_id: KeyId,
    entries: Vec<Entry>,
    /// The ciphertexts' seed and bodies, when they came as one seeded list.
    seeded: Option<Arc<Seeded>>,
}

/// Every ciphertext of a bundle, in entry and value order, as one seeded
/// LWE list: the masks' seed and the bodies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Seeded {
    seed: u128,
    bodies: Vec<u64>,
}

/// What a bundle file holds (the ids are in the header).
#[derive(Serialize, Deserialize)]
enum Payload {
    /// Every ciphertext whole.
    Full(Vec<Entry>),
    /// The entries' params, then their ciphertexts as one seeded list.
    Seeded(Vec<Param>, Seeded),
}

/// The most ciphertexts a compact bundle may expand to (1 GiB on
/// `DIGITS_128`): its bodies are 2 000 times smaller than what reading
/// them allocates, so the file's size alone does not bound the memory.
pub const MAX_SEEDED_CIPHERTEXTS: usize = 1 << 16;

/// The ciphertexts of a seeded list under `params` and `key_id`: the masks
/// drawn again from `seed` by tfhe-rs.
pub(crate) fn decompress(
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

impl Bundle {
    /// A bundle of `entries` under `params` and `key_id`: every value must
    /// have its entry's shape and count, and every ciphertext must belong
    /// to that key.
    pub fn new(params: ParamsId, key_id: KeyId, entries: Vec<Entry>) -> Result<Self, Error> {
        let b = Bundle {
            params,
            key_id,
            entries,
            seeded: None,
        };
        b.check()?;
        Ok(b)
    }

    fn check(&self) -> Result<(), Error> {
        for (i, e) in self.entries.iter().enumerate() {
            if self.entries[..i]
                .iter()
                .any(|f| f.param.name == e.param.name)
            {
                return Err(Error::Dimensions(format!(
                    "two entries are named {:?}",
                    e.param.name
                )));
            }
            let n = e.param.count()?;
            if e.values.len() != n {
                return Err(Error::Dimensions(format!(
                    "{} holds {} values, its dims {:?} need {n}",
                    e.param.name,
                    e.values.len(),
                    e.param.dims
                )));
            }
            for v in &e.values {
                if v.shape != e.param.shape || v.cts.len() != v.shape.len() {
                    return Err(Error::ShapeMismatch {
                        what: format!("a value of {}", e.param.name),
                        expected: e.param.shape,
                        found: v.shape,
                    });
                }
                for ct in &v.cts {
                    ct.check_owner(self.params, self.key_id)?;
                }
            }
        }
        Ok(())
    }

    /// The parameter set of every ciphertext.
    pub fn params(&self) -> ParamsId {
        self.params
    }

    /// The key every ciphertext is under.
    pub fn key_id(&self) -> KeyId {
        self.key_id
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entries' names, shapes and dims.
    pub fn signature(&self) -> Vec<Param> {
        self.entries.iter().map(|e| e.param.clone()).collect()
    }

    /// All values in entry order (a program's inputs or outputs in order).
    pub fn values(&self) -> impl Iterator<Item = &Encrypted> {
        self.entries.iter().flat_map(|e| &e.values)
    }

    /// The bundle as file bytes (header and payload): compact when its
    /// ciphertexts came as one seeded list.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let payload = match &self.seeded {
            Some(seeded) => Payload::Seeded(self.signature(), (**seeded).clone()),
            None => Payload::Full(self.entries.clone()),
        };
        encode(
            Path::new("<bundle>"),
            FileKind::Bundle,
            self.params,
            self.key_id,
            &payload,
        )
    }

    /// Reads bundle bytes from anywhere (`origin` names them in errors),
    /// checking every entry and ciphertext.
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<Self, Error> {
        let (info, payload): (_, Payload) = decode(origin, bytes, FileKind::Bundle)?;
        Self::from_payload(origin, info.params, info.key_id, payload)
    }

    /// Writes the bundle atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_atomic(path, &self.to_bytes()?, false)
    }

    /// Reads a bundle written by [`Bundle::save`].
    pub fn load(path: &Path) -> Result<Self, Error> {
        Bundle::from_bytes(path, &read_bytes(path, FileKind::Bundle)?)
    }

    fn from_payload(
        path: &Path,
        params: ParamsId,
        key_id: KeyId,
        payload: Payload,
    ) -> Result<Self, Error> {
        let bad = |e: Error| inconsistent(path, format!("bundle: {e}"));
        let b = match payload {
            Payload::Full(entries) => {
                let p = params.params();
                for ct in entries.iter().flat_map(|e| &e.values).flat_map(|v| &v.cts) {
                    check_lwe(path, &ct.lwe, p)?;
                }
                Bundle::new(params, key_id, entries).map_err(bad)?
            }
            Payload::Seeded(params_list, seeded) => {
                let mut needed = 0usize;
                for p in &params_list {
                    let n = p.count().map_err(bad)?;
                    needed = needed.saturating_add(n.saturating_mul(p.shape.len()));
                }
                if seeded.seed == 0 {
                    return Err(inconsistent(path, "a compact bundle without a seed"));
                }
                if needed > MAX_SEEDED_CIPHERTEXTS {
                    return Err(bad(Error::TooLarge {
                        what: "a compact bundle (ciphertexts)".into(),
                        size: needed as u64,
                        limit: MAX_SEEDED_CIPHERTEXTS as u64,
                    }));
                }
                if seeded.bodies.len() != needed {
                    return Err(inconsistent(
                        path,
                        format!(
                            "{} ciphertext bodies for entries of {needed} ciphertexts",
                            seeded.bodies.len()
                        ),
                    ));
                }
                let cts = decompress(params, key_id, seeded.seed, &seeded.bodies);
                let mut b = Bundle::new(params, key_id, split(&params_list, cts)?).map_err(bad)?;
                b.seeded = Some(Arc::new(seeded));
                b
            }
        };
        Ok(b)
    }
}

/// `cts` cut into the values of `params`, in order (their total must
/// match).
fn split(params: &[Param], cts: Vec<Ciphertext>) -> Result<Vec<Entry>, Error> {
    let mut cts = cts.into_iter();
    params
        .iter()
        .map(|p| {
            let values = (0..p.count()?)
                .map(|_| Encrypted::new(p.shape, cts.by_ref().take(p.shape.len()).collect()))
                .collect::<Result<_, _>>()?;
            Ok(Entry {
                param: p.clone(),
                values,
            })
        })
        .collect()
}

/// Checks that `values` holds one list per param, each of the param's
/// count (its dims' product).
pub(crate) fn check_values(params: &[Param], values: &[Vec<BigInt>]) -> Result<(), Error> {
    if params.len() != values.len() {
        return Err(Error::InputCount {
            expected: params.len(),
            found: values.len(),
        });
    }
    for (param, vs) in params.iter().zip(values) {
        let n = param.count()?;
        if vs.len() != n {
            return Err(Error::Dimensions(format!(
                "{} needs {n} values (dims {:?}), {} given",
                param.name,
                param.dims,
                vs.len()
            )));
        }
    }
    Ok(())
}

/// The digits [`ClientKey::encrypt`] takes for `value` as a `shape`: an
/// integer's signed-binary or two's-complement digits, a word's bits as 0
/// or 2 (the bits family's encoding).
fn plain_digits(shape: Shape, value: &BigInt) -> Result<Vec<i64>, Error> {
    match shape {
        Shape::Int { digits } => signed_binary(value, digits),
        Shape::TwosInt { bits } => twos_digits(value, bits),
        Shape::Word { bits, signed } => Ok(word_bits(value, bits, signed)?
            .into_iter()
            .map(|b| 2 * b as i64)
            .collect()),
    }
}

impl ClientKey {
    /// Encrypts `value` as a value of `shape`: an integer on its digits
    /// (signed-binary or two's complement), or a word.
    pub fn encrypt_value(&self, shape: Shape, value: &BigInt) -> Result<Encrypted, Error> {
        match shape {
            Shape::Int { digits } => self.encrypt_int(value.clone(), digits),
            Shape::TwosInt { bits } => self.encrypt_int_twos(value.clone(), bits),
            Shape::Word { bits, signed } => self.encrypt_word_of(value.clone(), bits, signed),
        }
    }

    /// Decrypts a value of any shape.
    pub fn decrypt_value(&self, x: &Encrypted) -> Result<BigInt, Error> {
        match x.shape {
            Shape::Int { .. } | Shape::TwosInt { .. } => self.decrypt_int(x),
            Shape::Word { .. } => self.decrypt_word_value(x),
        }
    }

    /// Encrypts one list of values per param (row-major), e.g. for
    /// [`crate::CompiledProgram::signature`]'s inputs.
    pub fn encrypt_bundle(
        &self,
        params: &[Param],
        values: &[Vec<BigInt>],
    ) -> Result<Bundle, Error> {
        check_values(params, values)?;
        let mut digits = Vec::new();
        for (param, vs) in params.iter().zip(values) {
            for v in vs {
                digits.extend(plain_digits(param.shape, v)?);
            }
        }
        let (seed, bodies, cts) = self.encrypt_seeded(&digits)?;
        let mut b = Bundle::new(self.params().id, self.key_id(), split(params, cts)?)?;
        b.seeded = Some(Arc::new(Seeded { seed, bodies }));
        Ok(b)
    }

    /// Decrypts every entry: its param and its values, row-major.
    pub fn decrypt_bundle(&self, bundle: &Bundle) -> Result<Vec<(Param, Vec<BigInt>)>, Error> {
        if bundle.key_id != self.key_id() {
            return Err(Error::WrongKey {
                expected: self.key_id(),
                found: bundle.key_id,
            });
        }
        bundle
            .entries
            .iter()
            .map(|e| {
                let vs = e
                    .values
                    .iter()
                    .map(|v| self.decrypt_value(v))
                    .collect::<Result<_, _>>()?;
                Ok((e.param.clone(), vs))
            })
            .collect()
    }
}
