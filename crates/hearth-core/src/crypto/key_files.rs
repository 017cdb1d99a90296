//! Key files: the one way a key becomes a file and a file a key
//! ([`KeyFile`]): the header (kind, parameter set, key id), the payload
//! and its checksum written once for every key type; each type says only
//! what it stores and how a stored key is checked against its set.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::crypto::compressed::CompressedServerKey;
use crate::crypto::files::{
    check_ids, decode, encode, inconsistent, info_from_bytes, read_bytes, read_info, write_file,
    FileInfo, FileKind,
};
use crate::crypto::keys::{KeyId, ServerKey, ServerKeyData};
use crate::crypto::packing::packing_key_fits;
use crate::crypto::params::ParamsId;
use crate::error::Error;

/// A key stored as a file of its own kind. The provided methods are the
/// file functions every key has (the types' own `save`, `to_bytes`,
/// `load` and `from_bytes` call them).
pub(crate) trait KeyFile: Sized {
    /// Its kind of file.
    const KIND: FileKind;
    /// How bytes that come from no file are named in errors.
    const LABEL: &'static str;
    /// Whether the file holds secrets (written with mode 0600).
    const SECRET: bool = false;
    /// What is written after the header.
    type Payload<'a>: Serialize
    where
        Self: 'a;
    /// What is read after the header.
    type Stored: DeserializeOwned;

    /// The parameter set and key pair it belongs to (the header's ids).
    fn file_ids(&self) -> (ParamsId, KeyId);

    /// What its file holds after the header.
    fn payload(&self) -> Self::Payload<'_>;

    /// The key from a decoded file, every field checked against the
    /// header's parameter set (a bad file is a [`crate::FileError`]).
    fn from_stored(origin: &Path, info: &FileInfo, stored: Self::Stored) -> Result<Self, Error>;

    /// The bytes of its file.
    fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let (params, key_id) = self.file_ids();
        encode(
            Path::new(Self::LABEL),
            Self::KIND,
            params,
            key_id,
            &self.payload(),
        )
    }

    /// Writes its file atomically.
    fn save(&self, path: &Path) -> Result<(), Error> {
        let (params, key_id) = self.file_ids();
        write_file(
            path,
            Self::KIND,
            params,
            key_id,
            &self.payload(),
            Self::SECRET,
        )
        .map(drop)
    }

    /// Reads its file: the file's bytes, then [`KeyFile::from_bytes`].
    fn load(path: &Path) -> Result<Self, Error> {
        Self::from_bytes(path, &read_bytes(path, Self::KIND)?)
    }

    /// Reads file bytes from anywhere (`origin` names them in errors):
    /// header, size and checksum, then [`KeyFile::from_stored`].
    fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<Self, Error> {
        let (info, stored) = decode(origin, bytes, Self::KIND)?;
        Self::from_stored(origin, &info, stored)
    }
}

impl KeyFile for ServerKey {
    const KIND: FileKind = FileKind::ServerKey;
    const LABEL: &'static str = "<server key>";
    type Payload<'a> = &'a ServerKeyData;
    type Stored = ServerKeyData;

    fn file_ids(&self) -> (ParamsId, KeyId) {
        (self.data.params, self.data.key_id)
    }

    fn payload(&self) -> &ServerKeyData {
        &self.data
    }

    fn from_stored(origin: &Path, info: &FileInfo, data: ServerKeyData) -> Result<Self, Error> {
        check_ids(origin, info, data.params, data.key_id)?;
        let p = info.params.params();
        let bsk = &data.bootstrap_key;
        // The stored fields and the length before any dimension tfhe
        // derives from them: it divides by their product, which a forged
        // file could make zero or overflow (found by fuzzing).
        let fits = bsk.glwe_size() == p.glwe_dimension.to_glwe_size()
            && bsk.polynomial_size() == p.polynomial_size
            && bsk.decomposition_base_log() == p.pbs_base_log
            && bsk.decomposition_level_count() == p.pbs_level
            && bsk.as_ref().len()
                == p.bootstrap_ggsw_count()
                    * p.pbs_level.0
                    * p.glwe_dimension.to_glwe_size().0.pow(2)
                    * p.polynomial_size.0
            && bsk.input_lwe_dimension().0 == p.bootstrap_ggsw_count()
            && data.keyswitch_key.fits(p)
            && packing_key_fits(&data.packing_key, p)
            && bsk.ciphertext_modulus().is_native_modulus();
        if !fits {
            return Err(inconsistent(
                origin,
                format!("evaluation keys do not fit {}", p.name),
            ));
        }
        Ok(ServerKey::from_data(data))
    }

    /// A compressed server key's file is read too (decompressed here).
    fn load(path: &Path) -> Result<ServerKey, Error> {
        let kind = match read_info(path)?.kind {
            FileKind::CompressedServerKey => FileKind::CompressedServerKey,
            _ => FileKind::ServerKey,
        };
        ServerKey::from_bytes(path, &read_bytes(path, kind)?)
    }

    /// A compressed server key's bytes are read too (decompressed here).
    fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<ServerKey, Error> {
        if info_from_bytes(origin, bytes)?.kind == FileKind::CompressedServerKey {
            return Ok(CompressedServerKey::from_bytes(origin, bytes)?.decompress());
        }
        let (info, data) = decode(origin, bytes, FileKind::ServerKey)?;
        ServerKey::from_stored(origin, &info, data)
    }
}

impl ServerKey {
    /// Writes the evaluation keys (standard domain).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        KeyFile::save(self, path)
    }

    /// The file bytes [`ServerKey::save`] writes (for sending the keys
    /// elsewhere, e.g. to MPI ranks); [`ServerKey::from_bytes`] reads them.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        KeyFile::to_bytes(self)
    }

    /// Reads evaluation keys written by [`ServerKey::save`] or
    /// [`CompressedServerKey::save`] (decompressed here), checking them
    /// against the parameter set: the file's bytes, then
    /// [`ServerKey::from_bytes`].
    pub fn load(path: &Path) -> Result<ServerKey, Error> {
        <ServerKey as KeyFile>::load(path)
    }

    /// Reads server-key file bytes from anywhere (`origin` names them in
    /// errors), with every check of [`ServerKey::load`]; the bytes of a
    /// compressed server key are decompressed.
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<ServerKey, Error> {
        <ServerKey as KeyFile>::from_bytes(origin, bytes)
    }
}
