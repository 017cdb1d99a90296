//! Bundles: many typed encrypted values in one file, for a program's
//! inputs or its outputs. Each entry is one [`Param`] (a name, a shape and
//! tensor dims) and its values; the bundle is bound to one key and
//! parameter set, so a server can check it against the program's
//! signature and its key before anything runs.

use std::path::Path;

use num_bigint::BigInt;
use serde::{Deserialize, Serialize};

use crate::crypto::encoding::{Encrypted, Param, Shape};
use crate::crypto::files::{
    check_lwe, decode, encode, inconsistent, read_bytes, write_atomic, FileKind,
};
use crate::crypto::keys::{ClientKey, KeyId};
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    params: ParamsId,
    key_id: KeyId,
    entries: Vec<Entry>,
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

    /// The bundle as file bytes (header and payload).
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        encode(
            Path::new("<bundle>"),
            FileKind::Bundle,
            self.params,
            self.key_id,
            self,
        )
    }

    /// Reads bundle bytes from anywhere (`origin` names them in errors),
    /// checking every entry and ciphertext.
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<Self, Error> {
        let (info, b): (_, Bundle) = decode(origin, bytes, FileKind::Bundle)?;
        b.checked(origin, info.params, info.key_id)
    }

    /// Writes the bundle atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_atomic(path, &self.to_bytes()?, false)
    }

    /// Reads a bundle written by [`Bundle::save`].
    pub fn load(path: &Path) -> Result<Self, Error> {
        Bundle::from_bytes(path, &read_bytes(path, FileKind::Bundle)?)
    }

    fn checked(self, path: &Path, params: ParamsId, key_id: KeyId) -> Result<Self, Error> {
        if self.params != params || self.key_id != key_id {
            return Err(inconsistent(path, "payload ids differ from the header"));
        }
        let p = params.params();
        for ct in self.values().flat_map(|v| &v.cts) {
            check_lwe(path, &ct.lwe, p)?;
        }
        self.check()
            .map_err(|e| inconsistent(path, format!("bundle: {e}")))?;
        Ok(self)
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
        if params.len() != values.len() {
            return Err(Error::InputCount {
                expected: params.len(),
                found: values.len(),
            });
        }
        let mut entries = Vec::with_capacity(params.len());
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
            let values = vs
                .iter()
                .map(|v| self.encrypt_value(param.shape, v))
                .collect::<Result<_, _>>()?;
            entries.push(Entry {
                param: param.clone(),
                values,
            });
        }
        Bundle::new(self.params().id, self.key_id(), entries)
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
