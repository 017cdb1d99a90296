//! Key and ciphertext files.
//!
//! Layout: a fixed 36-byte header, then a bincode payload.
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `HEARTH\0\n` |
//! | 2 | format version (little endian; its kind's, [`FileKind::version`]) |
//! | 2 | kind: 1 client key, 2 server key, 3 ciphertexts, 4 compressed server key, 5 program, 6 bundle, 7 public key |
//! | 2 | parameter-set id |
//! | 2 | reserved (0) |
//! | 8 | key id (0 in a program file: a program holds no key) |
//! | 8 | payload length |
//! | 4 | CRC-32 of the header's first 32 bytes and the payload |
//!
//! The checksum covers the header too (format version 3), so a damaged
//! parameter-set id, kind or key id is a damaged file ([`FileError`]),
//! never a load on another set or a key mismatch later.
//! Reading checks every field before it deserializes, bounds the payload by
//! the largest size the parameter set allows, and checks the decoded entities
//! against the header and the parameter set, so a truncated, corrupted,
//! foreign or mismatched file is a typed [`FileError`], never a panic.
//! Files are written to a temporary name, synced and renamed, then their
//! folder is synced, so a failed write never destroys an existing file and
//! a written one survives a power loss; secret-key files get mode 0600.
//! The payload is serialized straight to the file, so writing never holds
//! a second copy of it in memory.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use bincode::Options;
use serde::de::{DeserializeOwned, DeserializeSeed};
use serde::Serialize;
use tfhe::core_crypto::prelude::*;

use crate::crypto::keys::{Ciphertext, KeyId};
use crate::crypto::params::{ParameterSet, ParamsId};
use crate::error::{Error, FileError};

const MAGIC: [u8; 8] = *b"HEARTH\0\n";
/// The format version this build writes and reads.
/// Version 2: the key-switch key names its word size (KS32 sets). Kind 4
/// (compressed server key) came later without a new version: no existing
/// file changes meaning, and older builds refuse kind 4 as unknown.
/// Kind 7 (public key) came later in the same way.
/// Version 3: the checksum covers the header as well as the payload, and
/// the reserved bytes must be zero. Older files are refused, saying so.
/// Program files have a version of their own since
/// [`PROGRAM_FORMAT_VERSION`]; every other kind is at this one.
pub const FORMAT_VERSION: u16 = 3;
/// The version of program files: 4 since the operations they hold are
/// grouped by family (`Op::Int(IntOp::Add(..))`, not `Op::IntAdd(..)`):
/// a program file of version 3 is refused, saying an older hearth wrote
/// it (compile the program again; keys and values still load). 5 since
/// the signature and stated cost come before the operations
/// ([`crate::formats::program_head`]), so that a client reads them
/// without the operations' vocabulary. 6 since sums of words are fused
/// when a program is built (`hearth::api`'s fuse pass): the operations of
/// an older file build another circuit than the one it states.
pub const PROGRAM_FORMAT_VERSION: u16 = 6;
/// The version of server-key files, whole or compressed: 4 since they
/// hold the packing key ([`crate::crypto::packing`]). A server key of
/// version 3 is refused, saying an older hearth wrote it: generate it again
/// from the client key, which still loads.
pub const SERVER_KEY_FORMAT_VERSION: u16 = 4;
const HEADER_LEN: usize = 36;

/// What a hearth file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// Secret keys.
    ClientKey = 1,
    /// Evaluation keys.
    ServerKey = 2,
    /// A list of ciphertexts.
    Ciphertexts = 3,
    /// Evaluation keys in tfhe-rs's seeded form ([`crate::CompressedServerKey`]),
    /// decompressed by [`crate::ServerKey::load`].
    CompressedServerKey = 4,
    /// A compiled program: its operations and signature, no key
    /// (`hearth::CompiledProgram::save`).
    Program = 5,
    /// Typed encrypted values for a program's inputs or outputs
    /// (`hearth::Bundle`).
    Bundle = 6,
    /// A public key ([`crate::crypto::public_key::PublicKey`]): whole, or
    /// its seed and body.
    PublicKey = 7,
    /// A symmetric key encrypted once for transciphering
    /// ([`crate::formats::transcipher_key::TranscipherKey`]).
    TranscipherKey = 8,
}

impl FileKind {
    fn from_u16(v: u16) -> Option<Self> {
        [
            Self::ClientKey,
            Self::ServerKey,
            Self::Ciphertexts,
            Self::CompressedServerKey,
            Self::Program,
            Self::Bundle,
            Self::PublicKey,
            Self::TranscipherKey,
        ]
        .into_iter()
        .find(|k| *k as u16 == v)
    }

    /// The format version files of this kind are written and read in.
    pub fn version(self) -> u16 {
        match self {
            Self::Program => PROGRAM_FORMAT_VERSION,
            Self::ServerKey | Self::CompressedServerKey => SERVER_KEY_FORMAT_VERSION,
            _ => FORMAT_VERSION,
        }
    }

    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClientKey => "client key",
            Self::ServerKey => "server key",
            Self::Ciphertexts => "ciphertext list",
            Self::CompressedServerKey => "compressed server key",
            Self::Program => "program",
            Self::Bundle => "value bundle",
            Self::PublicKey => "public key",
            Self::TranscipherKey => "transciphering key",
        }
    }
}

/// The decoded header of a hearth file.
#[derive(Clone, Debug)]
pub struct FileInfo {
    /// What the file holds.
    pub kind: FileKind,
    /// Its format version.
    pub version: u16,
    /// The parameter set.
    pub params: ParamsId,
    /// The key pair.
    pub key_id: KeyId,
    /// Payload bytes after the header.
    pub payload_len: u64,
}

/// Largest payload a file of `kind` for `params` may have (generous).
fn payload_limit(kind: FileKind, p: &ParameterSet) -> u64 {
    let big_n = p.big_lwe_dimension().0 as u64;
    let glwe = p.glwe_dimension.to_glwe_size().0 as u64;
    let n = p.lwe_dimension.0 as u64;
    let ggsws = p.bootstrap_ggsw_count() as u64;
    let packing = big_n * p.packing.level.0 as u64 * glwe * p.polynomial_size.0 as u64;
    let words = match kind {
        FileKind::ClientKey => n + big_n,
        FileKind::ServerKey => {
            let bsk = ggsws * glwe * glwe * p.pbs_level.0 as u64 * p.polynomial_size.0 as u64;
            let ksk = big_n * p.ks_level.0 as u64 * (n + 1);
            bsk + ksk + packing
        }
        // Bodies only: one polynomial per GLWE row of the bootstrap key,
        // one word per level of the key-switch key.
        FileKind::CompressedServerKey => {
            let bsk = ggsws * glwe * p.pbs_level.0 as u64 * p.polynomial_size.0 as u64;
            bsk + big_n * p.ks_level.0 as u64 + packing / glwe
        }
        // Up to 2^24 ciphertexts per file.
        FileKind::Ciphertexts | FileKind::Bundle => (big_n + 1) << 24,
        // 64 MiB of operations.
        FileKind::Program => 1 << 23,
        // The mask and the body.
        FileKind::PublicKey => 2 * big_n,
        // 128 ciphertexts, whole at most.
        FileKind::TranscipherKey => (big_n + 1) * 128,
    };
    words * 8 + 4096
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> FileError + '_ {
    move |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The encoding of every payload: bincode, fixed-size integers.
fn options() -> impl Options {
    bincode::DefaultOptions::new().with_fixint_encoding()
}

/// A payload that cannot be encoded (or written, for an I/O error) as
/// an error naming `origin`.
fn encode_err(origin: &Path) -> impl FnOnce(bincode::Error) -> Error + '_ {
    move |e| match *e {
        bincode::ErrorKind::Io(source) => io_err(origin)(source).into(),
        e => FileError::Malformed {
            path: origin.to_path_buf(),
            reason: format!("cannot encode: {e}"),
        }
        .into(),
    }
}

/// A file's header for a payload of `len` bytes whose CRC-32 state is
/// `payload_crc`.
fn header(
    kind: FileKind,
    params: ParamsId,
    key_id: KeyId,
    len: u64,
    payload_crc: &crc32fast::Hasher,
) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&kind.version().to_le_bytes());
    h[10..12].copy_from_slice(&(kind as u16).to_le_bytes());
    h[12..14].copy_from_slice(&params.to_u16().to_le_bytes());
    // Bytes 14-15 are reserved (0).
    h[16..24].copy_from_slice(&key_id.0.to_le_bytes());
    h[24..32].copy_from_slice(&len.to_le_bytes());
    let crc = checksum(&h, payload_crc);
    h[CHECKED_HEADER_LEN..].copy_from_slice(&crc.to_le_bytes());
    h
}

/// A file's bytes: the header, then `payload` encoded. `origin` names the
/// destination in errors.
pub fn encode<T: Serialize>(
    origin: &Path,
    kind: FileKind,
    params: ParamsId,
    key_id: KeyId,
    payload: &T,
) -> Result<Vec<u8>, Error> {
    let body = options().serialize(payload).map_err(encode_err(origin))?;
    let mut bytes = header(kind, params, key_id, body.len() as u64, &crc_of(&body)).to_vec();
    bytes.extend_from_slice(&body);
    Ok(bytes)
}

/// The bytes `value` takes in a payload.
pub(crate) fn encoded_len<T: Serialize>(value: &T) -> u64 {
    options().serialized_size(value).unwrap_or(u64::MAX)
}

/// The size of a file holding `payload`: the header and its encoding.
pub(crate) fn file_len<T: Serialize>(payload: &T) -> u64 {
    (HEADER_LEN as u64).saturating_add(encoded_len(payload))
}

/// The CRC-32 a file stores: of the header's first 32 bytes (everything
/// but the checksum itself), then of the payload (given as its own CRC
/// state, so that a payload written as it is encoded need not be kept).
fn checksum(header: &[u8], payload_crc: &crc32fast::Hasher) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&header[..CHECKED_HEADER_LEN]);
    h.combine(payload_crc);
    h.finalize()
}

/// The CRC-32 state after `bytes`.
fn crc_of(bytes: &[u8]) -> crc32fast::Hasher {
    let mut h = crc32fast::Hasher::new();
    h.update(bytes);
    h
}

/// The header bytes the checksum covers.
const CHECKED_HEADER_LEN: usize = 32;

/// Rewrites the payload length and checksum in the header at the start of
/// `bytes` to match the bytes after it: for tools that change files on
/// purpose (fuzzers, tests of forged files). `false`, and nothing
/// changed, where `bytes` is shorter than a header.
pub fn reseal(bytes: &mut [u8]) -> bool {
    if bytes.len() < HEADER_LEN {
        return false;
    }
    let (header, payload) = bytes.split_at_mut(HEADER_LEN);
    header[24..32].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    let crc = checksum(header, &crc_of(payload));
    header[CHECKED_HEADER_LEN..].copy_from_slice(&crc.to_le_bytes());
    true
}

/// A writer that passes bytes on and keeps their count and CRC-32.
struct Tally<W> {
    inner: W,
    crc: crc32fast::Hasher,
    len: u64,
}

impl<W: Write> Write for Tally<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the file [`encode`] would make, atomically as [`write_atomic`]
/// does, but serializes `payload` straight to disk: a placeholder header,
/// the payload (counted and checksummed on its way), then the real header
/// over the placeholder. Returns the file's size in bytes.
pub fn write_file<T: Serialize>(
    path: &Path,
    kind: FileKind,
    params: ParamsId,
    key_id: KeyId,
    payload: &T,
    secret: bool,
) -> Result<u64, Error> {
    write_atomic_with(path, secret, |f| {
        f.write_all(&[0; HEADER_LEN]).map_err(io_err(path))?;
        let mut out = BufWriter::new(Tally {
            inner: &mut *f,
            crc: crc32fast::Hasher::new(),
            len: 0,
        });
        options()
            .serialize_into(&mut out, payload)
            .map_err(encode_err(path))?;
        let Tally { crc, len, .. } = out.into_inner().map_err(|e| io_err(path)(e.into_error()))?;
        let h = header(kind, params, key_id, len, &crc);
        f.seek(SeekFrom::Start(0))
            .and_then(|_| f.write_all(&h))
            .map_err(io_err(path))?;
        Ok(HEADER_LEN as u64 + len)
    })
}

/// Writes `bytes` to a temporary name beside `path`, syncs, and renames
/// it over `path`: readers see the old file or the whole new one.
pub fn write_atomic(path: &Path, bytes: &[u8], secret: bool) -> Result<(), Error> {
    write_atomic_with(path, secret, |f| {
        Ok(f.write_all(bytes).map_err(io_err(path))?)
    })
}

/// [`write_atomic`] with the bytes written by `write` to the temporary
/// file; then the file is synced, renamed over `path`, and its folder
/// synced. The temporary file is removed on an error before the rename;
/// an error syncing the folder comes after it (the new file is in place,
/// its durability unknown).
fn write_atomic_with<R>(
    path: &Path,
    secret: bool,
    write: impl FnOnce(&mut File) -> Result<R, Error>,
) -> Result<R, Error> {
    let tmp: PathBuf = {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        // The process and a count: two threads writing the same file at
        // once each write their own, and the last rename wins whole.
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        name.push(format!(".tmp{}-{n}", std::process::id()));
        path.with_file_name(name)
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    let result = (|| -> Result<R, Error> {
        let mut f = options.open(&tmp).map_err(io_err(path))?;
        let r = write(&mut f)?;
        f.sync_all()
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(io_err(path))?;
        Ok(r)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    let r = result?;
    sync_dir(folder(path)).map_err(io_err(path))?;
    Ok(r)
}

/// The folder holding `path` (`.` for a bare file name).
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Syncs folder `dir`: a rename or removal inside it is durable only once
/// the folder itself is on disk (unix; elsewhere nothing to do).
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Removes file `path` and syncs its folder, so a power loss cannot bring
/// it back; `Ok(false)` when it was not there.
pub fn remove_durable(path: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => sync_dir(folder(path)).map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Reads and checks the header of any hearth file.
pub fn read_info(path: &Path) -> Result<FileInfo, Error> {
    let mut f = std::fs::File::open(path).map_err(io_err(path))?;
    let mut header = [0u8; HEADER_LEN];
    let got = read_up_to(&mut f, &mut header).map_err(io_err(path))?;
    parse_header(path, &header[..got])
}

/// Checks the header at the start of `bytes` (a file received rather
/// than read: `origin` names it in errors).
pub fn info_from_bytes(origin: &Path, bytes: &[u8]) -> Result<FileInfo, Error> {
    parse_header(origin, &bytes[..bytes.len().min(HEADER_LEN)])
}

fn parse_header(path: &Path, header: &[u8]) -> Result<FileInfo, Error> {
    if header.len() < MAGIC.len() || header[..8] != MAGIC {
        return Err(FileError::BadMagic {
            path: path.to_path_buf(),
        }
        .into());
    }
    if header.len() < HEADER_LEN {
        return Err(FileError::Truncated {
            path: path.to_path_buf(),
            found: 0,
            expected: HEADER_LEN as u64,
        }
        .into());
    }
    let u16_at = |i: usize| u16::from_le_bytes([header[i], header[i + 1]]);
    let u64_at = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().expect("8 bytes"));
    let version = u16_at(8);
    // The kind first: each kind has its version. A version no kind has is
    // reported as a version (a newer hearth may have added kinds).
    let kind = match FileKind::from_u16(u16_at(10)) {
        Some(kind) => kind,
        None if version > PROGRAM_FORMAT_VERSION => {
            return Err(FileError::UnsupportedVersion {
                path: path.to_path_buf(),
                found: version,
                supported: PROGRAM_FORMAT_VERSION,
            }
            .into())
        }
        None => {
            return Err(FileError::Malformed {
                path: path.to_path_buf(),
                reason: format!("unknown file kind {}", u16_at(10)),
            }
            .into())
        }
    };
    if version != kind.version() {
        return Err(FileError::UnsupportedVersion {
            path: path.to_path_buf(),
            found: version,
            supported: kind.version(),
        }
        .into());
    }
    let params = ParamsId::from_u16(u16_at(12)).ok_or(FileError::UnknownParamsId {
        path: path.to_path_buf(),
        id: u16_at(12),
    })?;
    if u16_at(14) != 0 {
        return Err(FileError::Malformed {
            path: path.to_path_buf(),
            reason: format!("reserved header bytes 14-15 hold {}, not 0", u16_at(14)),
        }
        .into());
    }
    Ok(FileInfo {
        kind,
        version,
        params,
        key_id: KeyId(u64_at(16)),
        payload_len: u64_at(24),
    })
}

fn read_up_to(f: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// Checks a header's kind, its payload length against the kind's limit,
/// and the bytes available after the header against that length.
fn check_size(
    path: &Path,
    info: &FileInfo,
    expected: FileKind,
    available: u64,
) -> Result<(), Error> {
    if info.kind != expected {
        return Err(FileError::WrongKind {
            path: path.to_path_buf(),
            found: info.kind.name(),
            expected: expected.name(),
        }
        .into());
    }
    let limit = payload_limit(expected, info.params.params());
    if info.payload_len > limit {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            size: info.payload_len,
            limit,
        }
        .into());
    }
    if available < info.payload_len {
        return Err(FileError::Truncated {
            path: path.to_path_buf(),
            found: available,
            expected: info.payload_len,
        }
        .into());
    }
    if available > info.payload_len {
        return Err(inconsistent(
            path,
            format!("{} bytes after the payload", available - info.payload_len),
        ));
    }
    Ok(())
}

/// Decodes a whole file held in memory: header, size, CRC, payload.
pub fn decode<T: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    expected: FileKind,
) -> Result<(FileInfo, T), Error> {
    decode_with(path, bytes, expected, options())
}

/// [`decode`] of the payload's leading part only (the CRC still covers
/// it all): what a program file states before its operations
/// ([`crate::formats::program_head`]).
pub fn decode_head<T: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    expected: FileKind,
) -> Result<(FileInfo, T), Error> {
    decode_with(path, bytes, expected, options().allow_trailing_bytes())
}

/// [`decode`] through a [`DeserializeSeed`]: a payload decoded into
/// state of the caller's as it is read (a program file's operations, each
/// built as it arrives), once header, size and CRC are checked.
pub fn decode_seed<'de, S: DeserializeSeed<'de>>(
    path: &Path,
    bytes: &'de [u8],
    expected: FileKind,
    seed: S,
) -> Result<(FileInfo, S::Value), Error> {
    let (info, body) = checked_payload(path, bytes, expected)?;
    let value = options()
        .with_limit(info.payload_len)
        .deserialize_seed(seed, body)
        .map_err(|e| FileError::Malformed {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    Ok((info, value))
}

/// [`decode`] with bincode `options`.
fn decode_with<T: DeserializeOwned>(
    path: &Path,
    bytes: &[u8],
    expected: FileKind,
    options: impl Options,
) -> Result<(FileInfo, T), Error> {
    let (info, body) = checked_payload(path, bytes, expected)?;
    let value = options
        .with_limit(info.payload_len)
        .deserialize(body)
        .map_err(|e| FileError::Malformed {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    Ok((info, value))
}

/// The header of `bytes` and its payload, once the header, the size and
/// the CRC are checked.
fn checked_payload<'b>(
    path: &Path,
    bytes: &'b [u8],
    expected: FileKind,
) -> Result<(FileInfo, &'b [u8]), Error> {
    let info = info_from_bytes(path, bytes)?;
    check_size(path, &info, expected, (bytes.len() - HEADER_LEN) as u64)?;
    let stored = u32::from_le_bytes(
        bytes[CHECKED_HEADER_LEN..HEADER_LEN]
            .try_into()
            .expect("4 bytes"),
    );
    let body = &bytes[HEADER_LEN..];
    if checksum(bytes, &crc_of(body)) != stored {
        return Err(FileError::Corrupted {
            path: path.to_path_buf(),
        }
        .into());
    }
    Ok((info, body))
}

/// Reads the bytes of a file of kind `expected`: its size is checked
/// from the header before the payload is read, so a huge or short file
/// costs nothing. The bytes are then checked again, in full, by
/// [`decode`] (through a `from_bytes`).
pub fn read_bytes(path: &Path, expected: FileKind) -> Result<Vec<u8>, Error> {
    let info = read_info(path)?;
    let file_len = std::fs::metadata(path).map_err(io_err(path))?.len();
    check_size(
        path,
        &info,
        expected,
        file_len.saturating_sub(HEADER_LEN as u64),
    )?;
    let mut bytes = Vec::with_capacity(HEADER_LEN + info.payload_len as usize);
    std::fs::File::open(path)
        .and_then(|f| {
            f.take(HEADER_LEN as u64 + info.payload_len)
                .read_to_end(&mut bytes)
        })
        .map_err(io_err(path))?;
    Ok(bytes)
}

/// The error of file `path` whose parts disagree (`reason` says how).
pub fn inconsistent(path: &Path, reason: impl Into<String>) -> Error {
    FileError::Inconsistent {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
    .into()
}

/// Checks the ids inside a payload against its header.
pub(crate) fn check_ids(
    path: &Path,
    info: &FileInfo,
    params: ParamsId,
    key_id: KeyId,
) -> Result<(), Error> {
    if params != info.params || key_id != info.key_id {
        return Err(inconsistent(path, "payload ids differ from the header"));
    }
    Ok(())
}

pub(crate) fn check_lwe(
    path: &Path,
    lwe: &LweCiphertextOwned<u64>,
    p: &ParameterSet,
) -> Result<(), Error> {
    if lwe.lwe_size() != p.big_lwe_dimension().to_lwe_size()
        || !lwe.ciphertext_modulus().is_native_modulus()
    {
        return Err(inconsistent(
            path,
            format!("ciphertext does not fit {}", p.name),
        ));
    }
    Ok(())
}

/// Writes ciphertexts (all under one key) to `path`.
pub fn save_ciphertexts(path: &Path, cts: &[Ciphertext]) -> Result<(), Error> {
    let Some(first) = cts.first() else {
        return Err(inconsistent(path, "no ciphertexts to write"));
    };
    for ct in cts {
        ct.check_owner(first.params, first.key_id)?;
    }
    write_file(
        path,
        FileKind::Ciphertexts,
        first.params,
        first.key_id,
        &cts,
        false,
    )
    .map(drop)
}

/// Reads ciphertexts, checking they belong to `key_id` when given: the
/// file's bytes, then [`ciphertexts_from_bytes`].
pub fn load_ciphertexts(path: &Path, key_id: Option<KeyId>) -> Result<Vec<Ciphertext>, Error> {
    ciphertexts_from_bytes(path, &read_bytes(path, FileKind::Ciphertexts)?, key_id)
}

/// Reads ciphertext-list file bytes from anywhere (`origin` names them in
/// errors), with every check of [`load_ciphertexts`].
pub fn ciphertexts_from_bytes(
    origin: &Path,
    bytes: &[u8],
    key_id: Option<KeyId>,
) -> Result<Vec<Ciphertext>, Error> {
    let (info, cts): (_, Vec<Ciphertext>) = decode(origin, bytes, FileKind::Ciphertexts)?;
    if let Some(expected) = key_id {
        if info.key_id != expected {
            return Err(Error::WrongKey {
                expected,
                found: info.key_id,
            });
        }
    }
    let p = info.params.params();
    for ct in &cts {
        check_ids(origin, &info, ct.params, ct.key_id)?;
        check_lwe(origin, &ct.lwe, p)?;
    }
    Ok(cts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::INSECURE_TEST_DIGITS;
    use crate::testing::Scratch;

    /// The names in folder `d`, sorted.
    fn names(d: &Path) -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        n.sort();
        n
    }

    /// A payload whose encoding fails after its first bytes.
    struct Unencodable;

    impl Serialize for Unencodable {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::{Error as _, SerializeSeq};
            let mut seq = s.serialize_seq(Some(2))?;
            seq.serialize_element(&vec![7u64; 10_000])?;
            drop(seq);
            Err(S::Error::custom("refused on purpose"))
        }
    }

    /// Files written as they are encoded hold exactly [`encode`]'s bytes,
    /// for payloads smaller and larger than the write buffer, with the
    /// CRC-32 of the covered bytes; the size returned is the file's; they
    /// read back.
    #[test]
    fn streamed_files_are_the_encoded_bytes() {
        let d = Scratch::new("streamed");
        let id = INSECURE_TEST_DIGITS.id;
        let payloads: [Vec<u64>; 3] = [
            Vec::new(),
            vec![1, 2, 3],
            (0..300_000u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                .collect(),
        ];
        for (i, payload) in payloads.iter().enumerate() {
            let path = d.join(format!("f{i}"));
            let kind = FileKind::Ciphertexts;
            let len = write_file(&path, kind, id, KeyId(42 + i as u64), payload, false).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(len, bytes.len() as u64);
            let encoded = encode(&path, kind, id, KeyId(42 + i as u64), payload).unwrap();
            assert!(bytes == encoded, "payload {i}: streamed bytes differ");
            // The stored CRC is the CRC-32 of header[..32] then the payload.
            let covered = [&bytes[..CHECKED_HEADER_LEN], &bytes[HEADER_LEN..]].concat();
            let stored =
                u32::from_le_bytes(bytes[CHECKED_HEADER_LEN..HEADER_LEN].try_into().unwrap());
            assert_eq!(stored, crc32fast::hash(&covered), "payload {i}");
            assert_eq!(file_len(payload), len);
            let (info, back): (_, Vec<u64>) = decode(&path, &bytes, kind).unwrap();
            assert_eq!((info.key_id, &back), (KeyId(42 + i as u64), payload));
        }
    }

    /// A write that fails midway leaves the old file as it was and no
    /// temporary file; a write into a folder that does not exist is an
    /// I/O error.
    #[test]
    fn failed_writes_leave_the_old_file() {
        let d = Scratch::new("failed-write");
        let path = d.join("f");
        write_atomic(&path, b"old", false).unwrap();
        let id = INSECURE_TEST_DIGITS.id;
        let e = write_file(&path, FileKind::Program, id, KeyId(0), &Unencodable, false);
        assert!(
            matches!(e, Err(Error::File(FileError::Malformed { ref reason, .. })) if reason.contains("refused on purpose")),
            "{e:?}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(names(&d), ["f"]);
        let e = write_atomic(&d.join("missing").join("f"), b"new", false);
        assert!(matches!(e, Err(Error::File(FileError::Io { .. }))), "{e:?}");
    }

    /// Durable removal removes what is there and says whether it was;
    /// syncing a folder opens it (a missing one is an error); a bare file
    /// name's folder is the current one.
    #[test]
    fn removals_and_folder_syncs() {
        let d = Scratch::new("remove");
        let path = d.join("f");
        write_atomic(&path, b"x", false).unwrap();
        assert!(remove_durable(&path).unwrap());
        assert!(!path.exists());
        assert!(!remove_durable(&path).unwrap());
        assert!(remove_durable(&d).is_err(), "a folder is not a file");
        sync_dir(&d).unwrap();
        #[cfg(unix)]
        assert!(sync_dir(&d.join("missing")).is_err());
        assert_eq!(folder(Path::new("f")), Path::new("."));
        assert_eq!(folder(&path), &*d);
    }
}
