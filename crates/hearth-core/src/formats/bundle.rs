//! Bundles: many typed encrypted values in one file, for a program's
//! inputs or its outputs. Each entry is one [`Param`] (a name, a shape and
//! tensor dims) and its values; the bundle is bound to one key and
//! parameter set, so a server can check it against the program's
//! signature and its key before anything runs.
//!
//! A bundle fresh from [`ClientKey::encrypt_bundle`] is written compact:
//! its ciphertexts are one tfhe-rs seeded LWE list, stored as one seed and
//! one 64-bit body per ciphertext (about 2 000 times smaller on
//! `DIGITS_128`); reading it draws the masks again from the seed. One from
//! [`PublicKey::encrypt_bundle`] holds one tfhe-rs compact list (one mask
//! per `k N` ciphertexts, one body each). Bundles of different data owners
//! are joined by [`Bundle::combine`] and stay compact: one list per part.
//! Results computed by a server are written in full.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use num_bigint::BigInt;
use serde::{Deserialize, Serialize};
use tfhe::core_crypto::prelude::*;

use crate::crypto::encoding::{value_digits, Encrypted, Shape};
use crate::crypto::files::{
    check_lwe, decode, encode, encoded_len, file_len, inconsistent, read_bytes, write_file,
    FileKind,
};
use crate::crypto::keys::{
    decompress_seeded, trivial_ciphertexts, Ciphertext, ClientKey, KeyId, ServerKey,
};
use crate::crypto::packing::PackedList;
use crate::crypto::params::ParamsId;
use crate::crypto::public_key::{CompactList, PublicKey};
use crate::error::Error;
use crate::formats::clear::ClearValues;
use crate::formats::param::{repeated_name, Param};

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
/// `hearth::CompiledProgram::run_bundle`).
///
/// A compact bundle (from an encryption or a file) keeps its lists and
/// expands them into ciphertexts only when its entries are first read, so
/// a data owner that encrypts and sends never holds the full ciphertexts
/// (1 000 `u32`s: 0.5 GB on `DIGITS_128`).
#[derive(Clone, Debug)]
pub struct Bundle {
    params: ParamsId,
    key_id: KeyId,
    /// The entries with their ciphertexts: given, or expanded from
    /// `parts` when first read.
    entries: OnceLock<Vec<Entry>>,
    /// The ciphertexts as compact lists, one per part, when they came so.
    parts: Option<Arc<Vec<Part>>>,
}

impl PartialEq for Bundle {
    /// The same set, key and values (compact or not).
    fn eq(&self, other: &Bundle) -> bool {
        self.params == other.params
            && self.key_id == other.key_id
            && self.entries() == other.entries()
    }
}

/// Some consecutive entries of a bundle and their ciphertexts as one list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Part {
    params: Vec<Param>,
    list: List,
}

/// How one part's ciphertexts travel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum List {
    /// Under the client key: a seeded LWE list.
    Seeded(Seeded),
    /// Under the public key: a compact list.
    Compact(CompactList),
    /// In the clear, read by the server as trivial ciphertexts.
    Clear(ClearValues),
    /// Results packed into GLWE ciphertexts, for their owner to decrypt.
    Packed(PackedList),
}

/// Ciphertexts in entry and value order as one seeded LWE list: the
/// masks' seed and the bodies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Seeded {
    seed: u128,
    bodies: Vec<u64>,
}

/// What a bundle file holds (the ids are in the header): generic so that
/// one layout is written from borrowed entries and read into owned ones.
#[derive(Serialize, Deserialize)]
pub(crate) enum Payload<E, S, P> {
    /// Every ciphertext whole.
    Full(E),
    /// The entries' params, then their ciphertexts as one seeded list (a
    /// bundle of one part under the client key, as written before parts).
    Seeded(Vec<Param>, S),
    /// Parts, each some entries and their list.
    Parts(P),
}

/// A payload as written.
pub(crate) type Written<'a> = Payload<&'a [Entry], &'a Seeded, &'a [Part]>;

/// A payload as read.
pub(crate) type Stored = Payload<Vec<Entry>, Seeded, Vec<Part>>;

impl Stored {
    /// The entries' names, shapes and dims.
    fn signature(&self) -> Vec<Param> {
        match self {
            Payload::Full(entries) => entries.iter().map(|e| e.param.clone()).collect(),
            Payload::Seeded(params, _) => params.clone(),
            Payload::Parts(parts) => parts.iter().flat_map(|p| p.params.clone()).collect(),
        }
    }

    /// Its parts, where it has lists.
    fn into_parts(self) -> Result<Vec<Part>, Vec<Entry>> {
        match self {
            Payload::Full(entries) => Err(entries),
            Payload::Seeded(params, seeded) => Ok(vec![Part {
                params,
                list: List::Seeded(seeded),
            }]),
            Payload::Parts(parts) => Ok(parts),
        }
    }
}

/// The most ciphertexts a compact bundle may expand to (1 GiB on
/// `DIGITS_128`): its bodies are 2 000 times smaller than what reading
/// them allocates, so the file's size alone does not bound the memory.
pub const MAX_SEEDED_CIPHERTEXTS: usize = 1 << 16;

impl Bundle {
    /// A bundle of `entries` under `params` and `key_id`: every value must
    /// have its entry's shape and count, and every ciphertext must belong
    /// to that key.
    pub fn new(params: ParamsId, key_id: KeyId, entries: Vec<Entry>) -> Result<Self, Error> {
        let b = Bundle {
            params,
            key_id,
            entries: OnceLock::from(entries),
            parts: None,
        };
        b.check()?;
        Ok(b)
    }

    /// A compact bundle of `parts`, checked against `params` by
    /// [`check_parts`] (or made by an encryption): expanded when read.
    fn of_parts(params: ParamsId, key_id: KeyId, parts: Vec<Part>) -> Result<Self, Error> {
        let names = parts.iter().flat_map(|p| &p.params);
        if let Some(name) = repeated_name(names) {
            return Err(Error::Dimensions(format!("two entries are named {name:?}")));
        }
        Ok(Bundle {
            params,
            key_id,
            entries: OnceLock::new(),
            parts: Some(Arc::new(parts)),
        })
    }

    /// The ciphertexts of the parts, cut into entries.
    fn expand(&self) -> Vec<Entry> {
        let (params, key_id) = (self.params, self.key_id);
        let mut entries = Vec::new();
        for part in self.parts.iter().flat_map(|p| p.iter()) {
            let cts = match &part.list {
                List::Seeded(s) => decompress_seeded(params, key_id, s.seed, &s.bodies),
                List::Compact(list) => list
                    .expand(params, key_id)
                    .expect("compact lists are checked when their bundle is made"),
                List::Clear(clear) => clear
                    .values(&part.params)
                    .and_then(|values| bundle_digits(&part.params, &values))
                    .and_then(|digits| trivial_ciphertexts(params, key_id, &digits))
                    .expect("clear values are checked when their bundle is made"),
                List::Packed(packed) => packed.unpack(params, key_id),
            };
            entries
                .extend(split(&part.params, cts).expect("lists are checked against their entries"));
        }
        entries
    }

    fn check(&self) -> Result<(), Error> {
        let entries = self.entries();
        if let Some(name) = repeated_name(entries.iter().map(|e| &e.param)) {
            return Err(Error::Dimensions(format!("two entries are named {name:?}")));
        }
        for e in entries {
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

    /// The entries, in order (a compact bundle's lists are expanded at
    /// the first call).
    pub fn entries(&self) -> &[Entry] {
        self.entries.get_or_init(|| self.expand())
    }

    /// The entries' names, shapes and dims (without expanding anything).
    pub fn signature(&self) -> Vec<Param> {
        match (&self.parts, self.entries.get()) {
            (_, Some(entries)) => entries.iter().map(|e| e.param.clone()).collect(),
            (Some(parts), None) => parts.iter().flat_map(|p| p.params.clone()).collect(),
            (None, None) => Vec::new(),
        }
    }

    /// All values in entry order (a program's inputs or outputs in order).
    pub fn values(&self) -> impl Iterator<Item = &Encrypted> {
        self.entries().iter().flat_map(|e| &e.values)
    }

    /// What its file holds: compact when its ciphertexts came as lists.
    pub(crate) fn payload(&self) -> Written<'_> {
        match self.parts.as_deref().map(Vec::as_slice) {
            Some(
                [Part {
                    params,
                    list: List::Seeded(seeded),
                }],
            ) => Payload::Seeded(params.clone(), seeded),
            Some(parts) => Payload::Parts(parts),
            None => Payload::Full(self.entries()),
        }
    }

    /// Joins bundles under one key into one, their entries in the order
    /// given: the inputs that several data owners encrypted (each a run of
    /// a program's inputs, with the public key or the client key) become
    /// the program's bundle. It stays compact when every part is.
    pub fn combine(bundles: impl IntoIterator<Item = Bundle>) -> Result<Bundle, Error> {
        let mut bundles = bundles.into_iter();
        let Some(first) = bundles.next() else {
            return Err(Error::Dimensions("no bundle to combine".into()));
        };
        let (params, key_id) = (first.params, first.key_id);
        let all: Vec<Bundle> = std::iter::once(first).chain(bundles).collect();
        for b in &all {
            if b.params != params {
                return Err(Error::ParamsMismatch {
                    expected: params,
                    found: b.params,
                });
            }
            if b.key_id != key_id {
                return Err(Error::WrongKey {
                    expected: key_id,
                    found: b.key_id,
                });
            }
        }
        if all.iter().all(|b| b.parts.is_some()) {
            let parts = all
                .iter()
                .flat_map(|b| b.parts.iter().flat_map(|p| p.iter()));
            return Bundle::of_parts(params, key_id, parts.cloned().collect());
        }
        let entries = all.iter().flat_map(|b| b.entries().iter().cloned());
        Bundle::new(params, key_id, entries.collect())
    }

    /// The bundle with its entry `from` named `to` (a program's output
    /// given to a later program whose input has another name).
    pub fn renamed(&self, from: &str, to: &str) -> Result<Bundle, Error> {
        let sig = self.signature();
        if !sig.iter().any(|p| p.name == from) {
            return Err(Error::Dimensions(format!(
                "the bundle has no entry {from:?}"
            )));
        }
        let rename = |p: &Param| {
            let mut p = p.clone();
            if p.name == from {
                p.name = to.to_string();
            }
            p
        };
        match &self.parts {
            Some(parts) => {
                let parts = parts
                    .iter()
                    .map(|part| Part {
                        params: part.params.iter().map(rename).collect(),
                        list: part.list.clone(),
                    })
                    .collect();
                Bundle::of_parts(self.params, self.key_id, parts)
            }
            None => {
                let entries = self.entries().iter().map(|e| Entry {
                    param: rename(&e.param),
                    values: e.values.clone(),
                });
                Bundle::new(self.params, self.key_id, entries.collect())
            }
        }
    }

    /// Whether its values are packed results ([`Bundle::packed`]): for
    /// their owner to decrypt, not for a program's input.
    pub fn is_packed(&self) -> bool {
        self.parts
            .iter()
            .flat_map(|p| p.iter())
            .any(|p| matches!(p.list, List::Packed(_)))
    }

    /// The same values packed into GLWE ciphertexts with `key`'s packing
    /// key ([`crate::crypto::packing`]): a few bytes per digit instead of
    /// `(k N + 1) * 8`. Every value's noise must fit the set's
    /// [`ParameterSet::packed_output_budgets`](crate::crypto::params::ParameterSet::packed_output_budgets):
    /// fresh encryptions do, and so do the outputs of a program the
    /// builder found packable (`hearth::CompiledProgram::check_packable`,
    /// which `hearth::CompiledProgram::pack` checks before it calls this). A
    /// packed bundle stays packed.
    pub fn packed(&self, key: &ServerKey) -> Result<Bundle, Error> {
        if self.key_id != key.key_id() {
            return Err(Error::WrongKey {
                expected: key.key_id(),
                found: self.key_id,
            });
        }
        if self.params != key.params().id {
            return Err(Error::ParamsMismatch {
                expected: key.params().id,
                found: self.params,
            });
        }
        if self.is_packed() {
            return Ok(self.clone());
        }
        let cts: Vec<&Ciphertext> = self.values().flat_map(|v| &v.cts).collect();
        let list = PackedList::pack(key.params(), &key.data.packing_key, &cts);
        Bundle::with_list(
            self.params,
            self.key_id,
            &self.signature(),
            List::Packed(list),
        )
    }

    /// Refuses a packed bundle where ciphertexts are computed on: its
    /// values carry the packing's noise, which no program's checks assume.
    pub fn check_not_packed(&self) -> Result<(), Error> {
        if self.is_packed() {
            return Err(Error::Packed(
                "a packed bundle holds results for their owner to decrypt; \
                 a program's inputs must be encrypted values (ask for unpacked results \
                 to compute on them again)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Whether some values travel in the clear ([`Bundle::clear`]).
    pub fn has_clear_values(&self) -> bool {
        self.parts
            .iter()
            .flat_map(|p| p.iter())
            .any(|p| matches!(p.list, List::Clear(_)))
    }

    /// The bundle as file bytes (header and payload).
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        encode(
            Path::new("<bundle>"),
            FileKind::Bundle,
            self.params,
            self.key_id,
            &self.payload(),
        )
    }

    /// Reads bundle bytes from anywhere (`origin` names them in errors),
    /// checking every entry and ciphertext.
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<Self, Error> {
        let (info, payload): (_, Stored) = decode(origin, bytes, FileKind::Bundle)?;
        Self::from_payload(origin, info.params, info.key_id, payload)
    }

    /// [`Bundle::from_bytes`] for a program that takes `inputs` on
    /// `params`: the file's parameter set and entries are compared with
    /// them first (with the errors of
    /// `hearth::CompiledProgram::check_bundle`), before any ciphertext is
    /// checked or a compact bundle expanded, so bytes that do not fit cost
    /// only their decoding.
    pub fn from_bytes_expecting(
        origin: &Path,
        bytes: &[u8],
        params: ParamsId,
        inputs: &[Param],
    ) -> Result<Self, Error> {
        let (info, payload): (_, Stored) = decode(origin, bytes, FileKind::Bundle)?;
        check_inputs(params, inputs, info.params, &payload.signature())?;
        let bundle = Self::from_payload(origin, info.params, info.key_id, payload)?;
        bundle.check_not_packed()?;
        Ok(bundle)
    }

    /// Every check [`Bundle::from_bytes_expecting`] makes, without
    /// expanding a compact bundle (its list is checked against its
    /// entries, so its expansion cannot fail): for a server that admits a
    /// job now and reads its bundle when the job runs.
    pub fn check_bytes_expecting(
        origin: &Path,
        bytes: &[u8],
        params: ParamsId,
        inputs: &[Param],
    ) -> Result<(), Error> {
        let (info, payload): (_, Stored) = decode(origin, bytes, FileKind::Bundle)?;
        check_inputs(params, inputs, info.params, &payload.signature())?;
        match payload.into_parts() {
            Ok(parts) => {
                check_parts(origin, info.params, &parts)?;
                let bundle = Bundle::of_parts(info.params, info.key_id, parts)?;
                bundle.check_not_packed()
            }
            Err(full) => {
                Self::from_payload(origin, info.params, info.key_id, Payload::Full(full)).map(drop)
            }
        }
    }

    /// Writes the bundle atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        self.save_len(path).map(drop)
    }

    /// [`Bundle::save`], returning the file's size in bytes. The payload
    /// is serialized straight to the file, so a large bundle is never held
    /// twice in memory.
    pub fn save_len(&self, path: &Path) -> Result<u64, Error> {
        write_file(
            path,
            FileKind::Bundle,
            self.params,
            self.key_id,
            &self.payload(),
            false,
        )
    }

    /// Reads a bundle written by [`Bundle::save`].
    pub fn load(path: &Path) -> Result<Self, Error> {
        Bundle::from_bytes(path, &read_bytes(path, FileKind::Bundle)?)
    }

    pub(crate) fn from_payload(
        path: &Path,
        params: ParamsId,
        key_id: KeyId,
        payload: Stored,
    ) -> Result<Self, Error> {
        let bad = |e: Error| inconsistent(path, format!("bundle: {e}"));
        let parts = match payload.into_parts() {
            Err(entries) => {
                let p = params.params();
                for ct in entries.iter().flat_map(|e| &e.values).flat_map(|v| &v.cts) {
                    check_lwe(path, &ct.lwe, p)?;
                }
                return Bundle::new(params, key_id, entries).map_err(bad);
            }
            Ok(parts) => parts,
        };
        check_parts(path, params, &parts)?;
        Bundle::of_parts(params, key_id, parts).map_err(bad)
    }
}

/// Checks a compact bundle's lists against their entries' params: one
/// ciphertext per digit the entries need, at most
/// [`MAX_SEEDED_CIPHERTEXTS`] in all, a seed for a seeded list, a compact
/// list of the set's length. Expanding them then cannot fail.
fn check_parts(path: &Path, params: ParamsId, parts: &[Part]) -> Result<(), Error> {
    let bad = |e: Error| inconsistent(path, format!("bundle: {e}"));
    let mut total = 0usize;
    for part in parts {
        let mut needed = 0usize;
        for p in &part.params {
            let n = p.count().map_err(bad)?;
            needed = needed.saturating_add(n.saturating_mul(p.shape.len()));
        }
        total = total.saturating_add(needed);
        if total > MAX_SEEDED_CIPHERTEXTS {
            return Err(bad(Error::TooLarge {
                what: "a compact bundle (ciphertexts)".into(),
                size: total as u64,
                limit: MAX_SEEDED_CIPHERTEXTS as u64,
            }));
        }
        let found = match &part.list {
            List::Seeded(seeded) => {
                if seeded.seed == 0 {
                    return Err(inconsistent(path, "a compact bundle without a seed"));
                }
                seeded.bodies.len()
            }
            List::Compact(list) => {
                if !list.fits(params.params(), needed) {
                    return Err(inconsistent(
                        path,
                        format!(
                            "a compact list that does not hold {needed} ciphertexts of {params}"
                        ),
                    ));
                }
                needed
            }
            List::Clear(clear) => {
                clear.values(&part.params).map_err(bad)?;
                needed
            }
            List::Packed(packed) => {
                if let Some(reason) = packed.misfit(params.params(), needed) {
                    return Err(inconsistent(path, reason));
                }
                packed.len()
            }
        };
        if found != needed {
            return Err(inconsistent(
                path,
                format!("{found} ciphertext bodies for entries of {needed} ciphertexts"),
            ));
        }
    }
    Ok(())
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

/// Checks entries of parameter set `found_params` named, shaped and sized
/// `found` against the inputs a program on `params` takes: the same set,
/// then the same params in order.
pub fn check_inputs(
    params: ParamsId,
    inputs: &[Param],
    found_params: ParamsId,
    found: &[Param],
) -> Result<(), Error> {
    if found_params != params {
        return Err(Error::ParamsMismatch {
            expected: params,
            found: found_params,
        });
    }
    if found != inputs {
        let show = |ps: &[Param]| {
            ps.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Error::Dimensions(format!(
            "the bundle holds [{}], the program takes [{}]",
            show(found),
            show(inputs)
        )));
    }
    Ok(())
}

/// The size of the file [`Bundle::save`] writes for entries `entries` of
/// full ciphertexts under `params` (a program's results), from the
/// encoded sizes of one ciphertext and of the entries without values, so
/// nothing is allocated per value. Saturates where a count is refused.
pub fn full_file_len(params: ParamsId, entries: &[Param]) -> u64 {
    let lwe_size = params.params().big_lwe_dimension().to_lwe_size();
    let ct = encoded_len(&Ciphertext {
        params,
        key_id: KeyId(0),
        lwe: LweCiphertext::new(0u64, lwe_size, CiphertextModulus::new_native()),
    });
    let empty: Vec<Entry> = entries
        .iter()
        .map(|p| Entry {
            param: p.clone(),
            values: Vec::new(),
        })
        .collect();
    entries
        .iter()
        .fold(file_len(&Written::Full(&empty)), |len, p| {
            let value = encoded_len(&Encrypted {
                shape: p.shape,
                cts: Vec::new(),
            })
            .saturating_add((p.shape.len() as u64).saturating_mul(ct));
            let count = p.count().map_or(u64::MAX, |n| n as u64);
            len.saturating_add(count.saturating_mul(value))
        })
}

/// Checks that `values` holds one list per param, each of the param's
/// count (its dims' product).
pub fn check_values(params: &[Param], values: &[Vec<BigInt>]) -> Result<(), Error> {
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

impl Bundle {
    /// A bundle of one part, `params`' values as `list` (just encrypted:
    /// one ciphertext per digit they need).
    fn with_list(
        params_id: ParamsId,
        key_id: KeyId,
        params: &[Param],
        list: List,
    ) -> Result<Bundle, Error> {
        let part = Part {
            params: params.to_vec(),
            list,
        };
        Bundle::of_parts(params_id, key_id, vec![part])
    }
}

/// The digits of one list of values per param, in order.
fn bundle_digits(params: &[Param], values: &[Vec<BigInt>]) -> Result<Vec<i64>, Error> {
    check_values(params, values)?;
    let mut digits = Vec::new();
    for (param, vs) in params.iter().zip(values) {
        for v in vs {
            digits.extend(value_digits(param.shape, v)?);
        }
    }
    Ok(digits)
}

impl Bundle {
    /// A bundle of values in the clear (one list per param, row-major),
    /// for a program on `params_id` run under the key `key_id`: the server
    /// reads them, so they must be public, such as a symmetric
    /// ciphertext and its counter (see `hearth::ciphers`) or constants.
    /// Each value takes its shape's bytes ([`value_width`]): `n` bytes of
    /// `u8`s are `n` bytes. Join it with the encrypted inputs by
    /// [`Bundle::combine`].
    ///
    /// [`value_width`]: crate::formats::clear::value_width
    pub fn clear(
        params_id: ParamsId,
        key_id: KeyId,
        params: &[Param],
        values: &[Vec<BigInt>],
    ) -> Result<Bundle, Error> {
        check_values(params, values)?;
        let list = List::Clear(ClearValues::encode(params, values)?);
        Bundle::with_list(params_id, key_id, params, list)
    }

    /// `values` of `params` (one list per param) as one bundle: the
    /// params named in `in_clear` in the clear ([`Bundle::clear`]), runs
    /// of the others encrypted by `encrypt` (a client or public key's
    /// `encrypt_bundle`), joined in order. A name in `in_clear` that no
    /// param has is refused.
    pub fn with_clear_values(
        params_id: ParamsId,
        key_id: KeyId,
        params: &[Param],
        values: &[Vec<BigInt>],
        in_clear: &[String],
        mut encrypt: impl FnMut(&[Param], &[Vec<BigInt>]) -> Result<Bundle, Error>,
    ) -> Result<Bundle, Error> {
        check_values(params, values)?;
        if let Some(name) = in_clear
            .iter()
            .find(|n| !params.iter().any(|p| &p.name == *n))
        {
            return Err(Error::Dimensions(format!(
                "no input named {name:?} to send in the clear"
            )));
        }
        let is_clear = |p: &Param| in_clear.contains(&p.name);
        let mut parts = Vec::new();
        let mut start = 0;
        while start < params.len() {
            let clear = is_clear(&params[start]);
            let end = start
                + params[start..]
                    .iter()
                    .take_while(|p| is_clear(p) == clear)
                    .count();
            let (ps, vs) = (&params[start..end], &values[start..end]);
            parts.push(if clear {
                Bundle::clear(params_id, key_id, ps, vs)?
            } else {
                encrypt(ps, vs)?
            });
            start = end;
        }
        if parts.is_empty() {
            // No params: an empty bundle of the encryption's kind.
            parts.push(encrypt(params, values)?);
        }
        Bundle::combine(parts)
    }
}

impl PublicKey {
    /// Encrypts one list of values per param (row-major) as
    /// [`ClientKey::encrypt_bundle`] does, with the public key: every
    /// ciphertext in one compact list. The params may be some of a
    /// program's inputs, a run of them in order; [`Bundle::combine`] joins
    /// the bundles of several data owners.
    pub fn encrypt_bundle(
        &self,
        params: &[Param],
        values: &[Vec<BigInt>],
    ) -> Result<Bundle, Error> {
        let list = List::Compact(self.encrypt_list(&bundle_digits(params, values)?)?);
        Bundle::with_list(self.params().id, self.key_id(), params, list)
    }
}

/// A bundle's values, decrypted: each entry's param and its values,
/// row-major.
pub type Decrypted = Vec<(Param, Vec<BigInt>)>;

impl ClientKey {
    /// The values of a bundle whose parts are all packed, decrypted from
    /// their GLWE ciphertexts without unpacking them (`None` for any
    /// other bundle).
    fn decrypt_packed(&self, bundle: &Bundle) -> Option<Result<Decrypted, Error>> {
        let parts = bundle.parts.as_deref()?;
        let packed: Vec<(&[Param], &PackedList)> = parts
            .iter()
            .map(|part| match &part.list {
                List::Packed(list) => Some((part.params.as_slice(), list)),
                _ => None,
            })
            .collect::<Option<_>>()?;
        if bundle.entries.get().is_some() {
            return None;
        }
        let decrypt = || {
            if bundle.params != self.params().id {
                return Err(Error::ParamsMismatch {
                    expected: self.params().id,
                    found: bundle.params,
                });
            }
            let mut out = Vec::new();
            for (params, list) in packed {
                let phases = list.phases(self.glwe_key());
                let mut digits = phases.into_iter();
                for param in params {
                    let values = (0..param.count()?)
                        .map(|_| {
                            let value: Vec<u64> = digits.by_ref().take(param.shape.len()).collect();
                            self.value_from_phases(param.shape, &value)
                        })
                        .collect::<Result<_, _>>()?;
                    out.push((param.clone(), values));
                }
            }
            Ok(out)
        };
        Some(decrypt())
    }

    /// Decrypts a value of any shape.
    pub fn decrypt_value(&self, x: &Encrypted) -> Result<BigInt, Error> {
        match x.shape {
            Shape::Int { .. } | Shape::TwosInt { .. } => self.decrypt_int(x),
            Shape::Word { .. } => self.decrypt_word_value(x),
        }
    }

    /// Encrypts one list of values per param (row-major), e.g. for
    /// `hearth::CompiledProgram::signature`'s inputs.
    pub fn encrypt_bundle(
        &self,
        params: &[Param],
        values: &[Vec<BigInt>],
    ) -> Result<Bundle, Error> {
        let (seed, bodies) = self.encrypt_seeded(&bundle_digits(params, values)?)?;
        let list = List::Seeded(Seeded { seed, bodies });
        Bundle::with_list(self.params().id, self.key_id(), params, list)
    }

    /// Decrypts every entry: its param and its values, row-major.
    pub fn decrypt_bundle(&self, bundle: &Bundle) -> Result<Decrypted, Error> {
        if bundle.key_id != self.key_id() {
            return Err(Error::WrongKey {
                expected: self.key_id(),
                found: bundle.key_id,
            });
        }
        if let Some(decrypted) = self.decrypt_packed(bundle) {
            return decrypted;
        }
        bundle
            .entries()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::{INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
    use crate::testing::keys::keys;
    use crate::testing::Scratch;

    fn int(name: &str, digits: usize, dims: &[usize]) -> Param {
        Param::new(name, Shape::Int { digits }, dims)
    }

    /// Values `0, 1, ...` for each param.
    fn counting(params: &[Param]) -> Vec<Vec<BigInt>> {
        params
            .iter()
            .map(|p| (0..p.count().unwrap()).map(BigInt::from).collect())
            .collect()
    }

    /// A compact bundle under `params` and `key_id` (encrypted) and the
    /// same values as full ciphertexts.
    fn compact_and_full(client: &ClientKey, entries: &[Param]) -> (Bundle, Bundle) {
        let values = counting(entries);
        let compact = client.encrypt_bundle(entries, &values).unwrap();
        let full = entries
            .iter()
            .zip(&values)
            .map(|(p, vs)| Entry {
                param: p.clone(),
                values: vs
                    .iter()
                    .map(|v| client.encrypt_value(p.shape, v).unwrap())
                    .collect(),
            })
            .collect();
        let full = Bundle::new(client.params().id, client.key_id(), full).unwrap();
        (compact, full)
    }

    /// The entries of the tests: a tensor of integers and a word.
    fn entries() -> Vec<Param> {
        vec![
            int("x", 4, &[2, 3]),
            Param::new(
                "w",
                Shape::Word {
                    bits: 3,
                    signed: true,
                },
                &[],
            ),
        ]
    }

    /// Values of every shape packed and decrypted by their owner, from
    /// the file's bytes: the same values; the file is smaller than the
    /// full bundle's; its entries unpack to ciphertexts that decrypt the
    /// same; a packed bundle is refused as a program's input.
    #[test]
    fn packed_bundles_decrypt_to_their_values() {
        for params in [&INSECURE_TEST_DIGITS, &INSECURE_TEST_BITS] {
            let (client, server) = keys(params);
            // More digits than one GLWE holds, so the last GLWE is partial.
            let n = params.polynomial_size.0;
            let mut es = entries();
            es.push(int("big", 11, &[n / 8]));
            let (_, full) = compact_and_full(client, &es);
            let packed = full.packed(server).unwrap();
            assert!(packed.is_packed() && !full.is_packed());
            let bytes = packed.to_bytes().unwrap();
            assert!(bytes.len() * 20 < full.to_bytes().unwrap().len());
            let read = Bundle::from_bytes(Path::new("p"), &bytes).unwrap();
            let want = client.decrypt_bundle(&full).unwrap();
            assert_eq!(client.decrypt_bundle(&read).unwrap(), want);
            // Unpacked into ciphertexts, through the general path.
            let unpacked = Bundle::new(read.params(), read.key_id(), read.entries().to_vec());
            assert_eq!(client.decrypt_bundle(&unpacked.unwrap()).unwrap(), want);
            let e = Bundle::from_bytes_expecting(Path::new("p"), &bytes, params.id, &es);
            assert!(matches!(e, Err(Error::Packed(_))), "{e:?}");
            let e = Bundle::check_bytes_expecting(Path::new("p"), &bytes, params.id, &es);
            assert!(matches!(e, Err(Error::Packed(_))), "{e:?}");
        }
    }

    /// Packing under another key is refused; a damaged packed list (a
    /// GLWE too few, a wrong count, another storage modulus) is a file
    /// error, never a panic.
    #[test]
    fn forged_packed_bundles_are_refused() {
        let (client, server) = keys(&INSECURE_TEST_DIGITS);
        let (_, other) = keys(&INSECURE_TEST_BITS);
        let (_, full) = compact_and_full(client, &entries());
        assert!(full.packed(other).is_err());
        let packed = full.packed(server).unwrap();
        let part = packed.parts.as_ref().unwrap()[0].clone();
        let List::Packed(list) = part.list.clone() else {
            panic!("a packed part");
        };
        let mut forgeries = Vec::new();
        let mut short = list.clone();
        short.truncate_for_tests();
        forgeries.push(short);
        let mut miscounted = list.clone();
        miscounted.recount_for_tests(list.len() + 1);
        forgeries.push(miscounted);
        let mut coarse = list.clone();
        coarse.repack_for_tests(&INSECURE_TEST_DIGITS, 9);
        forgeries.push(coarse);
        for forged in forgeries {
            let parts = vec![Part {
                params: part.params.clone(),
                list: List::Packed(forged),
            }];
            let bytes = encode(
                Path::new("f"),
                FileKind::Bundle,
                packed.params(),
                packed.key_id(),
                &Written::Parts(&parts),
            )
            .unwrap();
            let e = Bundle::from_bytes(Path::new("f"), &bytes).unwrap_err();
            assert!(matches!(e, Error::File(_)), "{e:?}");
        }
    }

    /// [`Bundle::save_len`] writes [`Bundle::to_bytes`] exactly, compact
    /// or full, and returns its size; a full bundle's size is
    /// [`full_file_len`] of its entries.
    #[test]
    fn saved_bundles_are_their_bytes() {
        let d = Scratch::new("bundle-save");
        let (client, _) = keys(&INSECURE_TEST_DIGITS);
        let (compact, full) = compact_and_full(client, &entries());
        for (name, b) in [("compact", &compact), ("full", &full)] {
            let path = d.join(name);
            let len = b.save_len(&path).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(len, bytes.len() as u64, "{name}");
            assert!(bytes == b.to_bytes().unwrap(), "{name}: saved bytes differ");
            assert_eq!(&Bundle::load(&path).unwrap(), b, "{name}");
        }
        let full_len = std::fs::metadata(d.join("full")).unwrap().len();
        assert_eq!(full_file_len(full.params(), &full.signature()), full_len);
        let compact_len = std::fs::metadata(d.join("compact")).unwrap().len();
        assert!(compact_len * 100 < full_len, "{compact_len} vs {full_len}");
        // A refused count saturates.
        let huge = [int("h", 4, &[usize::MAX, 2])];
        assert_eq!(full_file_len(full.params(), &huge), u64::MAX);
    }

    /// The bytes of a compact bundle of `entries` under `params`, every
    /// body 0 (what a forger can write without a key).
    fn forged_compact(params: ParamsId, entries: Vec<Param>) -> Vec<u8> {
        let n = entries
            .iter()
            .map(|p| p.count().unwrap() * p.shape.len())
            .sum();
        let seeded = Seeded {
            seed: 1,
            bodies: vec![0; n],
        };
        let payload: Written<'_> = Payload::Seeded(entries, &seeded);
        encode(
            Path::new("<forged>"),
            FileKind::Bundle,
            params,
            KeyId(7),
            &payload,
        )
        .unwrap()
    }

    /// A compact bundle of [`MAX_SEEDED_CIPHERTEXTS`] ciphertexts (512 MiB
    /// once expanded on this set) that is not what the program takes is
    /// refused from its decoded entries, in far less time than an
    /// expansion; as is one of another parameter set. A small forged
    /// bundle of the same layout reads (so the refusal is the check's).
    #[test]
    fn mismatched_bundles_are_refused_before_expansion() {
        let id = INSECURE_TEST_DIGITS.id;
        let takes = [int("a", 4, &[]), int("b", 4, &[])];
        let wide = vec![int("x", 16, &[MAX_SEEDED_CIPHERTEXTS / 16])];
        let bytes = forged_compact(id, wide);
        let start = std::time::Instant::now();
        let e = Bundle::from_bytes_expecting(Path::new("f"), &bytes, id, &takes);
        let took = start.elapsed();
        match e {
            Err(Error::Dimensions(m)) => assert!(m.contains("the bundle holds [x: "), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(took.as_millis() < 50, "refused in {took:?}");
        let bits = INSECURE_TEST_BITS.id;
        let e = Bundle::from_bytes_expecting(Path::new("f"), &bytes, bits, &takes);
        assert!(
            matches!(e, Err(Error::ParamsMismatch { expected, found }) if expected == bits && found == id),
            "{e:?}"
        );
        let small = forged_compact(id, vec![int("x", 16, &[2])]);
        assert_eq!(
            Bundle::from_bytes(Path::new("f"), &small)
                .unwrap()
                .values()
                .count(),
            2
        );
    }

    /// Bytes that fit read as [`Bundle::from_bytes`] reads them, compact
    /// or full; bytes that do not are refused with the errors of
    /// [`crate::CompiledProgram::check_bundle`]'s check.
    #[test]
    fn expected_bundles_read_as_from_bytes() {
        let (client, _) = keys(&INSECURE_TEST_DIGITS);
        let id = client.params().id;
        let takes = entries();
        let (compact, full) = compact_and_full(client, &takes);
        for b in [&compact, &full] {
            let bytes = b.to_bytes().unwrap();
            let read = Bundle::from_bytes_expecting(Path::new("b"), &bytes, id, &takes).unwrap();
            assert_eq!(read, Bundle::from_bytes(Path::new("b"), &bytes).unwrap());
            assert_eq!(&read, b);
            let mut other = takes.clone();
            other.swap(0, 1);
            let e = Bundle::from_bytes_expecting(Path::new("b"), &bytes, id, &other).unwrap_err();
            let check = check_inputs(id, &other, b.params(), &b.signature()).unwrap_err();
            assert!(matches!(e, Error::Dimensions(_)), "{e:?}");
            assert_eq!(e.to_string(), check.to_string());
            // The check alone agrees, both ways.
            Bundle::check_bytes_expecting(Path::new("b"), &bytes, id, &takes).unwrap();
            let e = Bundle::check_bytes_expecting(Path::new("b"), &bytes, id, &other).unwrap_err();
            assert_eq!(e.to_string(), check.to_string());
        }
    }

    /// A compact bundle that fits is checked without its expansion: 65 536
    /// ciphertexts in milliseconds; a list one body short is refused.
    #[test]
    fn compact_bundles_are_checked_without_expansion() {
        let id = INSECURE_TEST_DIGITS.id;
        let wide = vec![int("x", 16, &[MAX_SEEDED_CIPHERTEXTS / 16])];
        let bytes = forged_compact(id, wide.clone());
        let start = std::time::Instant::now();
        Bundle::check_bytes_expecting(Path::new("f"), &bytes, id, &wide).unwrap();
        let took = start.elapsed();
        assert!(took.as_millis() < 50, "checked in {took:?}");
        let start = std::time::Instant::now();
        let read = Bundle::from_bytes_expecting(Path::new("f"), &bytes, id, &wide).unwrap();
        assert_eq!(read.values().count(), MAX_SEEDED_CIPHERTEXTS / 16);
        eprintln!("checked in {took:?}, expanded in {:?}", start.elapsed());
        let short = {
            let seeded = Seeded {
                seed: 1,
                bodies: vec![0; MAX_SEEDED_CIPHERTEXTS - 1],
            };
            let payload: Written<'_> = Payload::Seeded(wide.clone(), &seeded);
            encode(Path::new("f"), FileKind::Bundle, id, KeyId(7), &payload).unwrap()
        };
        assert!(Bundle::check_bytes_expecting(Path::new("f"), &short, id, &wide).is_err());
        assert!(Bundle::from_bytes(Path::new("f"), &short).is_err());
    }

    /// Entry names are compared in linear time: 200 000 empty entries and
    /// one named like the first are refused at once (comparing each with
    /// every earlier one took minutes).
    #[test]
    fn many_names_are_checked_at_once() {
        let mut entries: Vec<Entry> = (0..200_000)
            .map(|i| Entry {
                param: int(&format!("e{i}"), 4, &[0]),
                values: Vec::new(),
            })
            .collect();
        let id = INSECURE_TEST_DIGITS.id;
        assert!(Bundle::new(id, KeyId(1), entries.clone()).is_ok());
        entries.push(entries[0].clone());
        let start = std::time::Instant::now();
        let e = Bundle::new(id, KeyId(1), entries);
        let took = start.elapsed();
        assert!(
            matches!(e, Err(Error::Dimensions(ref m)) if m == "two entries are named \"e0\""),
            "{e:?}"
        );
        assert!(took.as_millis() < 1000, "refused in {took:?}");
    }

    /// Three data owners with the public key encrypt a run of inputs
    /// each; the joined bundle reads back from its bytes, stays compact
    /// (one list per part), decrypts to every value, and passes the checks
    /// a server makes. Parts under another key or set are refused.
    #[test]
    fn public_key_parts_combine_into_one_bundle() {
        let (client, _) = keys(&INSECURE_TEST_DIGITS);
        let public = client.public_key().unwrap();
        let mut all = entries();
        all.push(int("z", 6, &[4]));
        let values = counting(&all);
        let cut = [0, 1, 2, 3];
        let parts: Vec<Bundle> = cut
            .windows(2)
            .map(|w| {
                public
                    .encrypt_bundle(&all[w[0]..w[1]], &values[w[0]..w[1]])
                    .unwrap()
            })
            .collect();
        let joined = Bundle::combine(parts.clone()).unwrap();
        assert_eq!(joined.signature(), all);
        let bytes = joined.to_bytes().unwrap();
        let (_, full) = compact_and_full(client, &all);
        // One mask of k N words per part, one body per ciphertext.
        assert!(bytes.len() * 8 < full.to_bytes().unwrap().len());
        let origin = Path::new("joined");
        Bundle::check_bytes_expecting(origin, &bytes, joined.params(), &all).unwrap();
        let back = Bundle::from_bytes_expecting(origin, &bytes, joined.params(), &all).unwrap();
        assert_eq!(back, joined);
        let decrypted = client.decrypt_bundle(&back).unwrap();
        let want: Vec<(Param, Vec<BigInt>)> = all.iter().cloned().zip(values.clone()).collect();
        assert_eq!(decrypted, want);
        // A client-key part joins too; a full one makes the join full.
        let first = client.encrypt_bundle(&all[..1], &values[..1]).unwrap();
        let mixed = Bundle::combine([first, parts[1].clone(), parts[2].clone()]).unwrap();
        let back = Bundle::from_bytes(origin, &mixed.to_bytes().unwrap()).unwrap();
        assert_eq!(client.decrypt_bundle(&back).unwrap(), want);
        let (_, full_first) = compact_and_full(client, &all[..1]);
        let with_full = Bundle::combine([full_first, parts[1].clone(), parts[2].clone()]).unwrap();
        assert!(with_full.parts.is_none());
        // Another key, a repeated name, nothing at all.
        let (other, _) = keys(&INSECURE_TEST_BITS);
        let foreign = other
            .public_key()
            .unwrap()
            .encrypt_bundle(&all[2..], &values[2..]);
        let foreign = foreign.unwrap();
        let e = Bundle::combine([parts[0].clone(), foreign]).unwrap_err();
        assert!(matches!(e, Error::ParamsMismatch { .. }), "{e}");
        let e = Bundle::combine([parts[0].clone(), parts[0].clone()]).unwrap_err();
        assert!(e.to_string().contains("two entries"), "{e}");
        assert!(Bundle::combine([]).is_err());
    }

    /// A compact list cut short, resealed: refused before expansion, by
    /// the server's check and by a read.
    #[test]
    fn forged_compact_lists_are_refused() {
        let (client, _) = keys(&INSECURE_TEST_DIGITS);
        let public = client.public_key().unwrap();
        let all = entries();
        let values = counting(&all);
        let b = public.encrypt_bundle(&all, &values).unwrap();
        let mut parts = (*b.parts.clone().unwrap()).clone();
        let List::Compact(list) = &mut parts[0].list else {
            panic!("a public-key bundle holds a compact list")
        };
        *list = list.without_last_word();
        let payload: Written<'_> = Payload::Parts(&parts);
        let forged = encode(
            Path::new("f"),
            FileKind::Bundle,
            b.params(),
            b.key_id(),
            &payload,
        )
        .unwrap();
        let origin = Path::new("forged");
        let e = Bundle::check_bytes_expecting(origin, &forged, b.params(), &all).unwrap_err();
        assert!(e.to_string().contains("compact list"), "{e}");
        assert!(Bundle::from_bytes(origin, &forged).is_err());
    }

    /// A data owner sends bytes in the clear beside an encrypted part:
    /// the clear part takes one byte per `u8`, reads back from the file,
    /// decrypts (as trivial ciphertexts) to its values, and passes the
    /// server's check. Forged clear bytes (a value out of its shape's
    /// range, a byte short) are refused before expansion.
    #[test]
    fn clear_parts_travel_at_the_size_of_the_data() {
        let (client, _) = keys(&INSECURE_TEST_BITS);
        let (id, key) = (client.params().id, client.key_id());
        let byte = Shape::Word {
            bits: 8,
            signed: false,
        };
        let twelve = Shape::Word {
            bits: 12,
            signed: true,
        };
        let secret = [int("k", 3, &[])];
        let public = [
            Param::new("data", byte, &[1000]),
            Param::new("t", twelve, &[2]),
        ];
        let data: Vec<BigInt> = (0..1000).map(|i| BigInt::from((i * 37) % 256)).collect();
        let clear_values = vec![data, vec![BigInt::from(-2048), BigInt::from(2047)]];
        let clear = Bundle::clear(id, key, &public, &clear_values).unwrap();
        let alone = clear.to_bytes().unwrap().len();
        let header_and_names = 200;
        assert!(alone < 1004 + header_and_names, "{alone} bytes");
        let encrypted = client.encrypt_bundle(&secret, &[vec![BigInt::from(-5)]]);
        let joined = Bundle::combine([encrypted.unwrap(), clear.clone()]).unwrap();
        let all: Vec<Param> = secret.iter().chain(&public).cloned().collect();
        let bytes = joined.to_bytes().unwrap();
        let origin = Path::new("joined");
        Bundle::check_bytes_expecting(origin, &bytes, id, &all).unwrap();
        let back = Bundle::from_bytes_expecting(origin, &bytes, id, &all).unwrap();
        let mut want = vec![(secret[0].clone(), vec![BigInt::from(-5)])];
        want.extend(public.iter().cloned().zip(clear_values.clone()));
        assert_eq!(client.decrypt_bundle(&back).unwrap(), want);
        // Trivial ciphertexts: no mask.
        let t = &back.entries()[2].values[0].cts[0];
        assert!(t.lwe.get_mask().as_ref().iter().all(|&m| m == 0));
        // Too many values for the shape, then a byte short.
        let forge = |bytes: Vec<u8>| {
            let parts = [Part {
                params: public[1..].to_vec(),
                list: List::Clear(serde_forge(bytes)),
            }];
            let payload: Written<'_> = Payload::Parts(&parts);
            encode(origin, FileKind::Bundle, id, key, &payload).unwrap()
        };
        for (bytes, says) in [
            (vec![0xff, 0x07, 0, 0x08], "does not fit"),
            (vec![0, 0, 0], "bytes of clear values"),
        ] {
            let forged = forge(bytes);
            let e = Bundle::check_bytes_expecting(origin, &forged, id, &public[1..]).unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
            assert!(Bundle::from_bytes(origin, &forged).is_err());
        }
        // Values out of range are refused when sent.
        let e = Bundle::clear(id, key, &public[1..], &[vec![4096.into(), 0.into()]]);
        assert!(matches!(e, Err(Error::DoesNotFit { .. })), "{e:?}");
    }

    /// Clear and encrypted params interleaved: each run its own part, in
    /// order, decrypting to every value; the clear values take their bytes
    /// only; an unknown name is refused.
    #[test]
    fn clear_and_encrypted_runs_interleave() {
        let (client, _) = keys(&INSECURE_TEST_DIGITS);
        let public = client.public_key().unwrap();
        let (id, key) = (client.params().id, client.key_id());
        let all = vec![
            int("a", 3, &[2]),
            int("b", 5, &[]),
            int("c", 4, &[]),
            int("d", 2, &[3]),
        ];
        let values = counting(&all);
        let clear = ["a".to_string(), "c".to_string(), "d".to_string()];
        let mixed = Bundle::with_clear_values(id, key, &all, &values, &clear, |ps, vs| {
            public.encrypt_bundle(ps, vs)
        })
        .unwrap();
        let kinds: Vec<&str> = mixed
            .parts
            .as_deref()
            .unwrap()
            .iter()
            .map(|p| match p.list {
                List::Clear(_) => "clear",
                List::Compact(_) => "compact",
                List::Seeded(_) => "seeded",
                List::Packed(_) => "packed",
            })
            .collect();
        assert_eq!(kinds, ["clear", "compact", "clear"]);
        let back = Bundle::from_bytes(Path::new("m"), &mixed.to_bytes().unwrap()).unwrap();
        let want: Vec<(Param, Vec<BigInt>)> = all.iter().cloned().zip(values.clone()).collect();
        assert_eq!(client.decrypt_bundle(&back).unwrap(), want);
        let e = Bundle::with_clear_values(id, key, &all, &values, &["e".into()], |ps, vs| {
            client.encrypt_bundle(ps, vs)
        });
        assert!(e.unwrap_err().to_string().contains("no input named \"e\""));
    }

    /// Clear values of raw `bytes`, as a forger writes them.
    fn serde_forge(bytes: Vec<u8>) -> ClearValues {
        bincode::deserialize(&bincode::serialize(&bytes).unwrap()).unwrap()
    }
}
