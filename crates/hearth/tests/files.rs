//! Key and ciphertext files: round trips, and every kind of bad file refused
//! with a typed error (never a panic), leaving existing files intact.

use std::path::{Path, PathBuf};

use hearth::crypto::files::{load_ciphertexts, read_info, reseal, save_ciphertexts, FileKind};
use hearth::{ClientKey, Error, FileError, ServerKey, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn patched(src: &Path, dst: &Path, f: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(src).unwrap();
    f(&mut bytes);
    std::fs::write(dst, bytes).unwrap();
    dst.to_path_buf()
}

#[test]
fn round_trips() {
    let d = dir("round");
    let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let server = client.server_key();
    client.save(&d.join("client.key")).unwrap();
    server.save(&d.join("server.key")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.join("client.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let client2 = ClientKey::load(&d.join("client.key")).unwrap();
    let server2 = ServerKey::load(&d.join("server.key")).unwrap();
    assert_eq!(client2.key_id(), client.key_id());
    assert_eq!(server2.key_id(), client.key_id());

    let cts: Vec<_> = (-3..5).map(|v| client.encrypt(v).unwrap()).collect();
    save_ciphertexts(&d.join("x.ct"), &cts).unwrap();
    let back = load_ciphertexts(&d.join("x.ct"), Some(client.key_id())).unwrap();
    assert_eq!(back, cts);
    let values: Vec<i64> = back
        .iter()
        .map(|c| client2.decrypt_signed(c).unwrap())
        .collect();
    assert_eq!(values, (-3..5).collect::<Vec<_>>());

    let info = read_info(&d.join("server.key")).unwrap();
    assert_eq!(info.kind, FileKind::ServerKey);
    assert_eq!(info.key_id, client.key_id());
    // The reloaded server key bootstraps correctly.
    let t = server2.trivial(7).unwrap();
    assert_eq!(client.decrypt(&t).unwrap(), 7);
}

#[test]
fn bad_files_are_refused() {
    let d = dir("bad");
    let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let other = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let cts: Vec<_> = (0..4).map(|v| client.encrypt(v).unwrap()).collect();
    let good = d.join("good.ct");
    save_ciphertexts(&good, &cts).unwrap();
    let good_len = std::fs::metadata(&good).unwrap().len() as usize;
    client.save(&d.join("client.key")).unwrap();

    let load = |p: &Path| load_ciphertexts(p, Some(client.key_id()));
    let file_err = |r: Result<Vec<hearth::Ciphertext>, Error>| match r {
        Err(Error::File(e)) => e,
        other => panic!("expected a file error, got {other:?}"),
    };

    // Truncated: in the payload, and inside the header.
    let p = patched(&good, &d.join("trunc.ct"), |b| b.truncate(good_len - 100));
    assert!(matches!(file_err(load(&p)), FileError::Truncated { .. }));
    let p = patched(&good, &d.join("trunc2.ct"), |b| b.truncate(20));
    assert!(matches!(file_err(load(&p)), FileError::Truncated { .. }));
    // Trailing garbage.
    let p = patched(&good, &d.join("long.ct"), |b| b.extend_from_slice(b"xx"));
    assert!(matches!(file_err(load(&p)), FileError::Inconsistent { .. }));
    // Corrupted payload byte.
    let p = patched(&good, &d.join("flip.ct"), |b| b[good_len - 10] ^= 0x40);
    assert!(matches!(file_err(load(&p)), FileError::Corrupted { .. }));
    // Not a hearth file, and an empty file.
    let p = patched(&good, &d.join("magic.ct"), |b| b[0] = b'X');
    assert!(matches!(file_err(load(&p)), FileError::BadMagic { .. }));
    let p = patched(&good, &d.join("empty.ct"), |b| b.clear());
    assert!(matches!(file_err(load(&p)), FileError::BadMagic { .. }));
    // Newer format version.
    let p = patched(&good, &d.join("version.ct"), |b| b[8] = 9);
    assert!(matches!(
        file_err(load(&p)),
        FileError::UnsupportedVersion { found: 9, .. }
    ));
    // Unknown parameter-set id, and another set's id (payload disagrees).
    let p = patched(&good, &d.join("pid.ct"), |b| b[12] = 77);
    assert!(matches!(
        file_err(load(&p)),
        FileError::UnknownParamsId { id: 77, .. }
    ));
    let bits = hearth::ParamsId::InsecureTestBits.to_u16().to_le_bytes();
    let p = patched(&good, &d.join("pid2.ct"), |b| {
        b[12..14].copy_from_slice(&bits)
    });
    assert!(matches!(file_err(load(&p)), FileError::Corrupted { .. }));
    // The same with the checksum made right: the payload's ids disagree.
    let p = patched(&good, &d.join("pid3.ct"), |b| {
        b[12..14].copy_from_slice(&bits);
        reseal(b);
    });
    assert!(matches!(file_err(load(&p)), FileError::Inconsistent { .. }));
    // Absurd payload length.
    let p = patched(&good, &d.join("huge.ct"), |b| {
        b[24..32].copy_from_slice(&u64::MAX.to_le_bytes())
    });
    assert!(matches!(file_err(load(&p)), FileError::TooLarge { .. }));
    // Valid checksum over a malformed payload.
    let p = patched(&good, &d.join("malformed.ct"), |b| {
        b.truncate(36);
        b.extend_from_slice(&[0xffu8; 16]);
        reseal(b);
    });
    assert!(matches!(file_err(load(&p)), FileError::Malformed { .. }));
    // Wrong kind of file.
    assert!(matches!(
        file_err(load(&d.join("client.key"))),
        FileError::WrongKind {
            expected: "ciphertext list",
            ..
        }
    ));
    assert!(matches!(
        ServerKey::load(&good),
        Err(Error::File(FileError::WrongKind { .. }))
    ));
    // Wrong key.
    assert!(matches!(
        load_ciphertexts(&good, Some(other.key_id())),
        Err(Error::WrongKey { .. })
    ));
    // Missing file.
    assert!(matches!(
        file_err(load(&d.join("nope.ct"))),
        FileError::Io { .. }
    ));

    // A write that fails (target is a directory) leaves nothing half-written.
    std::fs::create_dir_all(d.join("adir")).unwrap();
    assert!(save_ciphertexts(&d.join("adir"), &cts).is_err());
    // Saving a mixed list is refused before anything is written.
    let mixed = vec![cts[0].clone(), other.encrypt(1).unwrap()];
    assert!(matches!(
        save_ciphertexts(&d.join("mixed.ct"), &mixed),
        Err(Error::WrongKey { .. })
    ));
    assert!(!d.join("mixed.ct").exists());
    // The good file is still readable after all this.
    assert_eq!(load(&good).unwrap(), cts);
}

#[test]
fn keys_that_do_not_fit_their_parameters_are_refused() {
    let d = dir("fit");
    let digits = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let bits = ClientKey::generate(&INSECURE_TEST_BITS);
    digits.save(&d.join("digits.key")).unwrap();
    bits.save(&d.join("bits.key")).unwrap();
    // Relabel the header of a bits key as digits: ids inside disagree.
    let digits_id = hearth::ParamsId::InsecureTestDigits.to_u16().to_le_bytes();
    let p = patched(&d.join("bits.key"), &d.join("relabel.key"), |b| {
        b[12..14].copy_from_slice(&digits_id);
        reseal(b);
    });
    assert!(matches!(
        ClientKey::load(&p),
        Err(Error::File(FileError::Inconsistent { .. }))
    ));
    let server = digits.server_key();
    server.save(&d.join("server.key")).unwrap();
    let p = patched(&d.join("server.key"), &d.join("server-trunc.key"), |b| {
        b.truncate(b.len() / 2)
    });
    assert!(matches!(
        ServerKey::load(&p),
        Err(Error::File(FileError::Truncated { .. }))
    ));
}

fn u64_at(b: &[u8], at: usize) -> usize {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize
}

/// Fuzzing regressions (`fuzz/`, targets `client_key` and `server_key`):
/// key files with a valid header and CRC whose stored sizes make tfhe's
/// derived dimensions divide by zero or overflow (a polynomial size, level
/// count, GLWE size or LWE size of 0, a level count whose product wraps to
/// 0) panicked in `ClientKey::load` / `ServerKey::load`. Each is now an
/// `Inconsistent` file error, from bytes and from a path alike.
#[test]
fn forged_key_sizes_are_typed_errors_not_panics() {
    let d = dir("forged-sizes");
    let client = ClientKey::generate(&INSECURE_TEST_BITS);
    client.save(&d.join("client.key")).unwrap();
    client.server_key().save(&d.join("server.key")).unwrap();
    let client_bytes = std::fs::read(d.join("client.key")).unwrap();
    let server_bytes = std::fs::read(d.join("server.key")).unwrap();
    let origin = Path::new("forged");
    // from_bytes reads what load reads.
    assert_eq!(
        ClientKey::from_bytes(origin, &client_bytes)
            .unwrap()
            .key_id(),
        client.key_id()
    );
    assert_eq!(
        ServerKey::from_bytes(origin, &server_bytes)
            .unwrap()
            .key_id(),
        client.key_id()
    );
    let inconsistent = |r: Result<(), Error>, what: &str| {
        assert!(
            matches!(r, Err(Error::File(FileError::Inconsistent { .. }))),
            "{what}: {r:?}"
        )
    };

    // Client key payload: ids (12 bytes), the LWE key (length, words), the
    // GLWE key (length, words), its polynomial size (the last 8 bytes).
    for poly in [0u64, u64::MAX] {
        let mut b = client_bytes.clone();
        let at = b.len() - 8;
        b[at..].copy_from_slice(&poly.to_le_bytes());
        reseal(&mut b);
        inconsistent(
            ClientKey::from_bytes(origin, &b).map(drop),
            &format!("client key, polynomial size {poly}"),
        );
        std::fs::write(d.join("forged.key"), &b).unwrap();
        inconsistent(ClientKey::load(&d.join("forged.key")).map(drop), "load");
    }

    // Server key payload: ids (12 bytes); the bootstrap key's words
    // (length, words), GLWE size, polynomial size, base log, levels,
    // modulus (24 bytes); the key-switch variant (4 bytes), its words,
    // base log, levels, output LWE size.
    let bsk_end = 36 + 20 + 8 * u64_at(&server_bytes, 48);
    let (glwe, poly, bsk_levels) = (bsk_end, bsk_end + 8, bsk_end + 24);
    let ksk_len = bsk_end + 56 + 4;
    let ksk_end = ksk_len + 8 + 8 * u64_at(&server_bytes, ksk_len);
    let (ksk_levels, ksk_out) = (ksk_end + 8, ksk_end + 16);
    // INSECURE_TEST_BITS: (k + 1)^2 N = 2^11, so 2^53 levels wrap to 0.
    for (what, at, value) in [
        ("bootstrap GLWE size 0", glwe, 0u64),
        ("bootstrap polynomial size 0", poly, 0),
        ("bootstrap levels 0", bsk_levels, 0),
        ("bootstrap levels 2^53", bsk_levels, 1 << 53),
        ("bootstrap levels 2^63", bsk_levels, 1 << 63),
        ("key-switch levels 0", ksk_levels, 0),
        ("key-switch levels 2^63", ksk_levels, 1 << 63),
        ("key-switch output size 0", ksk_out, 0),
        ("key-switch output size 2^63", ksk_out, 1 << 63),
    ] {
        let mut b = server_bytes.clone();
        b[at..at + 8].copy_from_slice(&value.to_le_bytes());
        reseal(&mut b);
        inconsistent(ServerKey::from_bytes(origin, &b).map(drop), what);
    }
}
