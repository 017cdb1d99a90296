//! Every file's 36-byte header is checked whole (format version 3): every
//! single-bit flip of the header of every file kind (a public key and a
//! bundle of public-key ciphertexts too) is a `FileError` from its loader,
//! never a load, a load on another parameter set, or a key mismatch later. Also: reserved bytes must be zero even under a valid
//! checksum, a program's key id must be 0, and files of the previous
//! format version are refused by name.

use std::path::{Path, PathBuf};

use hearth::api::U8;
use hearth::crypto::files::{
    load_ciphertexts, reseal, save_ciphertexts, FORMAT_VERSION, PROGRAM_FORMAT_VERSION,
};
use hearth::formats::{Cipher, TranscipherKey};
use hearth::{
    Bundle, ClientKey, CompiledProgram, CompressedServerKey, Error, FileError, Program, PublicKey,
    ServerKey, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS,
};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-headers-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A loader of one file kind: `Ok(())` where the file loads.
type Loader = fn(&Path) -> Result<(), Error>;

/// Files of every kind under one INSECURE key, each with its loaders.
fn files(d: &Path) -> Vec<(&'static str, PathBuf, Vec<Loader>)> {
    let (client, server) = hearth_testkit::keys::keys(&INSECURE_TEST_DIGITS);
    let path = |name: &str| d.join(name);
    client.save(&path("client.key")).unwrap();
    server.save(&path("server.key")).unwrap();
    client
        .compressed_server_key()
        .save(&path("compressed.key"))
        .unwrap();
    let cts = vec![client.encrypt(1).unwrap(), client.encrypt(-1).unwrap()];
    save_ciphertexts(&path("values.ct"), &cts).unwrap();

    let p = Program::new(&INSECURE_TEST_DIGITS);
    let (x, y) = (p.input(4), p.input(4));
    p.output(&(&x + &y));
    let prog = p.build().unwrap();
    prog.save(&path("program.hprog")).unwrap();
    let big = |v: i64| vec![num_bigint::BigInt::from(v)];
    client
        .encrypt_bundle(&prog.signature().inputs, &[big(5), big(-3)])
        .unwrap()
        .save(&path("values.hb"))
        .unwrap();
    let public = client.public_key().unwrap();
    public.save(&path("public.key")).unwrap();
    public
        .encrypt_bundle(&prog.signature().inputs, &[big(-7), big(2)])
        .unwrap()
        .save(&path("public-values.hb"))
        .unwrap();
    public
        .transcipher_key(Cipher::Aes128, b"a device's key!!")
        .unwrap()
        .save(&path("device.tkey"))
        .unwrap();

    vec![
        (
            "client key",
            path("client.key"),
            vec![|p| ClientKey::load(p).map(drop)],
        ),
        (
            "server key",
            path("server.key"),
            vec![|p| ServerKey::load(p).map(drop)],
        ),
        (
            "compressed server key",
            path("compressed.key"),
            vec![|p| CompressedServerKey::load(p).map(drop), |p| {
                ServerKey::load(p).map(drop)
            }],
        ),
        (
            "ciphertexts",
            path("values.ct"),
            vec![|p| load_ciphertexts(p, None).map(drop)],
        ),
        (
            "program",
            path("program.hprog"),
            vec![|p| CompiledProgram::load(p).map(drop)],
        ),
        (
            "bundle",
            path("values.hb"),
            vec![|p| Bundle::load(p).map(drop)],
        ),
        (
            "public key",
            path("public.key"),
            vec![|p| PublicKey::load(p).map(drop)],
        ),
        (
            "bundle of public-key ciphertexts",
            path("public-values.hb"),
            vec![|p| Bundle::load(p).map(drop)],
        ),
        (
            "transciphering key",
            path("device.tkey"),
            vec![|p| TranscipherKey::load(p).map(drop)],
        ),
    ]
}

#[test]
fn every_header_bit_flip_is_a_file_error() {
    let d = dir("flips");
    let mut counts = Vec::new();
    for (kind, good, loaders) in files(&d) {
        let bytes = std::fs::read(&good).unwrap();
        for load in &loaders {
            load(&good).unwrap_or_else(|e| panic!("{kind}: the good file fails: {e}"));
        }
        let damaged = d.join("damaged");
        let mut tried = 0;
        for bit in 0..36 * 8 {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            std::fs::write(&damaged, &b).unwrap();
            for load in &loaders {
                match load(&damaged) {
                    Err(Error::File(_)) => {}
                    Ok(()) => panic!("{kind}: header bit {bit} flipped, and the file loads"),
                    Err(e) => panic!("{kind}: header bit {bit} flipped: not a file error: {e:?}"),
                }
                tried += 1;
            }
        }
        counts.push((kind, tried));
    }
    // Eight kinds (bundles both ways), 288 flips each, the compressed key
    // through both loaders.
    assert_eq!(
        counts.iter().map(|c| c.1).sum::<usize>(),
        10 * 288,
        "{counts:?}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `bytes` with `f` applied to its header and the checksum made right
/// again, as a forger would.
fn forged(bytes: &[u8], f: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut b = bytes.to_vec();
    f(&mut b[..36]);
    reseal(&mut b);
    b
}

#[test]
fn reserved_bytes_program_key_ids_and_old_versions_are_refused() {
    let d = dir("forged");
    let p = Program::new(&INSECURE_TEST_BITS);
    let x = U8::input(&p);
    p.output(&(&x + &x));
    let prog = p.build().unwrap();
    let good = prog.to_bytes().unwrap();
    let origin = Path::new("forged");
    CompiledProgram::from_bytes(origin, &good).unwrap();

    // Reserved bytes other than zero, under a right checksum.
    let bad = forged(&good, |h| h[15] = 1);
    assert!(matches!(
        CompiledProgram::from_bytes(origin, &bad),
        Err(Error::File(FileError::Malformed { ref reason, .. })) if reason.contains("reserved")
    ));
    // A program that names a key.
    let bad = forged(&good, |h| h[16] = 7);
    assert!(matches!(
        CompiledProgram::from_bytes(origin, &bad),
        Err(Error::File(FileError::Inconsistent { ref reason, .. })) if reason.contains("key id")
    ));
    // A file of version 2 (payload-only checksum): refused by its
    // version, saying an older hearth wrote it.
    assert_eq!(
        u16::from_le_bytes([good[8], good[9]]),
        PROGRAM_FORMAT_VERSION
    );
    let mut old = good.clone();
    old[8..10].copy_from_slice(&(FORMAT_VERSION - 1).to_le_bytes());
    let crc = crc32fast::hash(&old[36..]);
    old[32..36].copy_from_slice(&crc.to_le_bytes());
    let e = CompiledProgram::from_bytes(origin, &old).unwrap_err();
    assert!(
        matches!(e, Error::File(FileError::UnsupportedVersion { found, .. }) if found == FORMAT_VERSION - 1)
    );
    assert!(e.to_string().contains("older hearth"), "{e}");
    // A program of version 3 (operations before they were grouped by
    // family), 4 (operations before the signature) or 5 (sums not yet
    // fused), whatever its payload: refused as older, before decoding.
    for version in [3u16, 4, 5] {
        let old = forged(&good, |h| h[8..10].copy_from_slice(&version.to_le_bytes()));
        let e = CompiledProgram::from_bytes(origin, &old).unwrap_err();
        assert!(
            matches!(
                e,
                Error::File(FileError::UnsupportedVersion {
                    found,
                    supported: PROGRAM_FORMAT_VERSION,
                    ..
                }) if found == version
            ),
            "{e}"
        );
        assert!(e.to_string().contains("older hearth"), "{e}");
    }
    // A newer one.
    let newer = forged(&good, |h| {
        h[8..10].copy_from_slice(&(PROGRAM_FORMAT_VERSION + 1).to_le_bytes())
    });
    let e = CompiledProgram::from_bytes(origin, &newer).unwrap_err();
    assert!(e.to_string().contains("newer hearth"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}
