//! Server-key files: the evaluation keys written whole or compressed
//! (seeded, [`CompressedServerKey`]), read back with every check against
//! their parameter set.

use std::path::Path;

use crate::crypto::compressed::CompressedServerKey;
use crate::crypto::files::{
    check_ids, decode, encode, inconsistent, info_from_bytes, read_bytes, read_info, write_file,
    FileKind,
};
use crate::crypto::keys::{ServerKey, ServerKeyData};
use crate::error::Error;

impl ServerKey {
    /// Writes the evaluation keys (standard domain).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_file(
            path,
            FileKind::ServerKey,
            self.data.params,
            self.data.key_id,
            &self.data,
            false,
        )
        .map(drop)
    }

    /// The file bytes [`ServerKey::save`] writes (for sending the keys
    /// elsewhere, e.g. to MPI ranks); [`ServerKey::from_bytes`] reads them.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        encode(
            Path::new("<server key>"),
            FileKind::ServerKey,
            self.data.params,
            self.data.key_id,
            &self.data,
        )
    }

    /// Reads evaluation keys written by [`ServerKey::save`] or
    /// [`CompressedServerKey::save`] (decompressed here), checking them
    /// against the parameter set: the file's bytes, then
    /// [`ServerKey::from_bytes`].
    pub fn load(path: &Path) -> Result<ServerKey, Error> {
        let kind = match read_info(path)?.kind {
            FileKind::CompressedServerKey => FileKind::CompressedServerKey,
            _ => FileKind::ServerKey,
        };
        ServerKey::from_bytes(path, &read_bytes(path, kind)?)
    }

    /// Reads server-key file bytes from anywhere (`origin` names them in
    /// errors), with every check of [`ServerKey::load`]; the bytes of a
    /// compressed server key are decompressed.
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<ServerKey, Error> {
        if info_from_bytes(origin, bytes)?.kind == FileKind::CompressedServerKey {
            return Ok(CompressedServerKey::from_bytes(origin, bytes)?.decompress());
        }
        let (info, data): (_, ServerKeyData) = decode(origin, bytes, FileKind::ServerKey)?;
        check_ids(origin, &info, data.params, data.key_id)?;
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
            && bsk.ciphertext_modulus().is_native_modulus();
        if !fits {
            return Err(inconsistent(
                origin,
                format!("evaluation keys do not fit {}", p.name),
            ));
        }
        Ok(ServerKey::from_data(data))
    }
}
