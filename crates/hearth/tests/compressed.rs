//! Compressed server keys (tfhe-rs seeded keys): a decompressed key
//! bootstraps correctly on real parameter sets, a file round trip gives the
//! same bits as decompressing in memory, the files are at least 3x
//! (`DIGITS_128`) / 5x (`GATES_128`) smaller, and damaged or forged files
//! are refused with typed errors. Run in release mode
//! (`cargo test --release -p hearth --test all compressed::`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use hearth::backend::{Backend, ClearBackend, CpuBackend};
use hearth::crypto::files::{info_from_bytes, read_info, reseal, FileKind};
use hearth::formats::{Bundle, Entry, Param};
use hearth::{
    ClientKey, CompressedServerKey, Encrypted, Error, FileError, ParameterSet, ParamsId, ServerKey,
    ServerKeySizes, Shape, BITS_128, DIGITS_128, DIGITS_KS32_128, GATES_128, INSECURE_TEST_BITS,
    INSECURE_TEST_DIGITS,
};
use hearth_testkit::circuits::random_circuit;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-compressed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

/// Encrypts random circuits' inputs, runs them on `server` (cpu backend),
/// decrypts and compares every output digit with the clear backend; the
/// outputs of circuits the builder finds packable are packed with
/// `server`'s packing key, written and read, and decrypt the same.
fn check_circuits(
    client: &ClientKey,
    server: &ServerKey,
    seeds: std::ops::Range<u64>,
    bootstraps: usize,
) {
    let params = client.params();
    let cpu = CpuBackend::new(server, Some(2)).unwrap();
    let mut packed = 0;
    for seed in seeds.clone() {
        let rc = random_circuit(params, seed, 3, bootstraps, 1 + seed as usize % 3).unwrap();
        let expected = ClearBackend.evaluate(&rc.circuit, &rc.inputs).unwrap();
        let cts: Vec<_> = rc
            .inputs
            .iter()
            .map(|&v| client.encrypt(v as i64).unwrap())
            .collect();
        let (out, report) = cpu.run(&rc.circuit, &cts).unwrap();
        let got: Vec<u64> = out.iter().map(|c| client.decrypt(c).unwrap()).collect();
        assert_eq!(got, expected, "{} seed {seed}", params.name);
        assert_eq!(report.pbs, bootstraps, "every bootstrap is real");
        if rc.circuit.unpackable_outputs().is_empty() {
            let digits = Shape::Int { digits: out.len() };
            let value = Encrypted::new(digits, out).unwrap();
            let entry = Entry {
                param: Param::new("out", digits, &[]),
                values: vec![value],
            };
            let bundle = Bundle::new(params.id, client.key_id(), vec![entry]).unwrap();
            let bytes = bundle.packed(server).unwrap().to_bytes().unwrap();
            let back = Bundle::from_bytes(Path::new("packed"), &bytes).unwrap();
            assert!(back.is_packed());
            let unpacked = back.values().next().unwrap().ciphertexts();
            let got: Vec<u64> = unpacked
                .iter()
                .map(|c| client.decrypt(c).unwrap())
                .collect();
            assert_eq!(got, expected, "{} seed {seed}, packed", params.name);
            packed += 1;
        }
    }
    assert!(
        packed * 2 >= seeds.count(),
        "{}: {packed} packed",
        params.name
    );
}

/// Generates a compressed key, checks that decompressing it in memory and
/// through its file gives the same standard-domain bits (compared as
/// uncompressed key files' bytes), that the compressed file is `min_ratio` times
/// smaller, and that the decompressed key bootstraps correctly.
fn check_set(params: &'static ParameterSet, min_ratio: f64, seeds: std::ops::Range<u64>) {
    let d = dir(params.name);
    let client = ClientKey::generate(params);
    let compressed = client.compressed_server_key();
    assert_eq!(compressed.params().id, params.id);
    assert_eq!(compressed.key_id(), client.key_id());
    compressed.save(&d.join("compressed.key")).unwrap();
    let info = read_info(&d.join("compressed.key")).unwrap();
    assert_eq!(info.kind, FileKind::CompressedServerKey);
    assert_eq!((info.params, info.key_id), (params.id, client.key_id()));

    // In memory, and through both loaders: the same bytes as an
    // uncompressed key file (compared in memory; `save` writes these).
    let server = compressed.decompress();
    let bits = server.to_bytes().unwrap();
    let reloaded = CompressedServerKey::load(&d.join("compressed.key")).unwrap();
    let loaded = ServerKey::load(&d.join("compressed.key")).unwrap();
    assert_eq!(loaded.key_id(), client.key_id());
    assert_eq!(
        info_from_bytes(Path::new("in memory"), &bits).unwrap().kind,
        FileKind::ServerKey
    );
    assert!(bits == reloaded.decompress().to_bytes().unwrap());
    assert!(bits == loaded.to_bytes().unwrap());
    // Saving what was loaded gives the same compressed file.
    reloaded.save(&d.join("again.key")).unwrap();
    assert!(
        std::fs::read(d.join("compressed.key")).unwrap()
            == std::fs::read(d.join("again.key")).unwrap()
    );

    // The sizes it reports are the files' key material: each file adds
    // its 36-byte header and a little framing (ids, dimensions, seeds).
    let sizes = compressed.sizes();
    assert_eq!(sizes, ServerKeySizes::of(params));
    let framing = [
        size(&d.join("compressed.key")) - sizes.compressed(),
        bits.len() as u64 - sizes.decompressed(),
    ];
    assert!(framing.iter().all(|f| (36..256).contains(f)), "{framing:?}");

    let ratio = bits.len() as f64 / size(&d.join("compressed.key")) as f64;
    assert!(
        ratio >= min_ratio,
        "{}: only {ratio:.2}x smaller",
        params.name
    );

    check_circuits(&client, &loaded, seeds, 12);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn digits_128_decompressed_key_is_exact_and_3x_smaller() {
    check_set(&DIGITS_128, 3.0, 0..2);
}

#[test]
fn gates_128_decompressed_key_is_exact_and_5x_smaller() {
    check_set(&GATES_128, 5.0, 10..11);
}

#[test]
fn ks32_decompressed_key_is_exact() {
    // The plain KS32 key switch is already 32-bit: 2.6x.
    check_set(&DIGITS_KS32_128, 2.5, 20..21);
}

#[test]
fn bits_128_decompressed_key_is_exact() {
    check_set(&BITS_128, 4.0, 30..31);
}

#[test]
fn insecure_sets_decompressed_keys_are_exact() {
    for (params, seeds) in [
        (&INSECURE_TEST_DIGITS, 0..20),
        (&INSECURE_TEST_BITS, 100..120),
    ] {
        let client = ClientKey::generate(params);
        let server = client.compressed_server_key().decompress();
        check_circuits(&client, &server, seeds, 30);
    }
}

/// Copies `src` to `dst` with `f` applied to the payload, and the header's
/// length and checksum made to match (a forgery, not damage).
fn forged(src: &Path, dst: &Path, f: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let bytes = std::fs::read(src).unwrap();
    let (header, payload) = bytes.split_at(36);
    let mut payload = payload.to_vec();
    f(&mut payload);
    let mut out = header.to_vec();
    out.extend_from_slice(&payload);
    reseal(&mut out);
    std::fs::write(dst, out).unwrap();
    dst.to_path_buf()
}

/// Copies `src` to `dst` with `f` applied to all of its bytes.
fn patched(src: &Path, dst: &Path, f: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(src).unwrap();
    f(&mut bytes);
    std::fs::write(dst, bytes).unwrap();
    dst.to_path_buf()
}

/// The error both loaders give for `path` (they must agree).
fn refusal(path: &Path) -> FileError {
    let a = match CompressedServerKey::load(path) {
        Err(Error::File(e)) => e,
        Err(e) => panic!("{}: not a file error: {e}", path.display()),
        Ok(_) => panic!("{}: accepted", path.display()),
    };
    match ServerKey::load(path) {
        Err(Error::File(b)) => assert_eq!(
            std::mem::discriminant(&a),
            std::mem::discriminant(&b),
            "{a} / {b}"
        ),
        Err(e) => panic!("{}: not a file error: {e}", path.display()),
        Ok(_) => panic!("{}: accepted by ServerKey::load", path.display()),
    }
    a
}

#[test]
fn bad_compressed_files_are_refused() {
    let d = dir("bad");
    let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let good = d.join("good.key");
    client.compressed_server_key().save(&good).unwrap();
    client.server_key().save(&d.join("plain.key")).unwrap();
    client.save(&d.join("client.key")).unwrap();
    let n = size(&good) as usize;

    // Damage: truncated (payload, header), trailing bytes, a flipped bit.
    let p = patched(&good, &d.join("trunc.key"), |b| b.truncate(n - 100));
    assert!(matches!(refusal(&p), FileError::Truncated { .. }));
    let p = patched(&good, &d.join("trunc2.key"), |b| b.truncate(30));
    assert!(matches!(refusal(&p), FileError::Truncated { .. }));
    let p = patched(&good, &d.join("long.key"), |b| b.push(0));
    assert!(matches!(refusal(&p), FileError::Inconsistent { .. }));
    for at in [40, n / 2, n - 1] {
        let p = patched(&good, &d.join("flip.key"), |b| b[at] ^= 0x10);
        assert!(matches!(refusal(&p), FileError::Corrupted { .. }), "{at}");
    }
    // Header: an absurd length, a length just over the bound, an unknown
    // kind, another set's id.
    let p = patched(&good, &d.join("huge.key"), |b| {
        b[24..32].copy_from_slice(&u64::MAX.to_le_bytes())
    });
    assert!(matches!(refusal(&p), FileError::TooLarge { .. }));
    let p = forged(&good, &d.join("over.key"), |b| b.resize(10 << 20, 0));
    assert!(matches!(refusal(&p), FileError::TooLarge { .. }));
    let p = patched(&good, &d.join("kind.key"), |b| b[10] = 99);
    assert!(matches!(refusal(&p), FileError::Malformed { .. }));
    // Another set's id: a digits key is too large to be a bits key; a bits
    // key named digits has the wrong ids inside.
    let bits_id = ParamsId::InsecureTestBits.to_u16().to_le_bytes();
    let digits_id = ParamsId::InsecureTestDigits.to_u16().to_le_bytes();
    let p = patched(&good, &d.join("pid.key"), |b| {
        b[12..14].copy_from_slice(&bits_id)
    });
    assert!(matches!(refusal(&p), FileError::TooLarge { .. }));
    let bits_key = d.join("bits.key");
    let bits_client = ClientKey::generate(&INSECURE_TEST_BITS);
    bits_client.compressed_server_key().save(&bits_key).unwrap();
    // Damaged (checksum left as it was), then forged (checksum made right).
    let p = patched(&bits_key, &d.join("pid2.key"), |b| {
        b[12..14].copy_from_slice(&digits_id)
    });
    assert!(matches!(refusal(&p), FileError::Corrupted { .. }));
    let p = patched(&bits_key, &d.join("pid3.key"), |b| {
        b[12..14].copy_from_slice(&digits_id);
        reseal(b);
    });
    assert!(
        matches!(refusal(&p), FileError::Inconsistent { ref reason, .. } if reason.contains("ids"))
    );

    // Forgeries with a valid checksum (payload layout, bincode fixint: params
    // u32 variant index, key id u64, then the bootstrap key: seed u128 at
    // 12, five u64 dimensions at 28, the body count at 68).
    // A bits key whose header and payload both say digits: its dimensions
    // do not fit.
    let digits_index = 4u32.to_le_bytes();
    let p = forged(&bits_key, &d.join("relabel.key"), |b| {
        b[0..4].copy_from_slice(&digits_index)
    });
    let p = patched(&p, &d.join("relabel2.key"), |b| {
        b[12..14].copy_from_slice(&digits_id);
        reseal(b);
    });
    assert!(
        matches!(refusal(&p), FileError::Inconsistent { ref reason, .. } if reason.contains("bootstrap key (n")),
        "{:?}",
        refusal(&p)
    );
    let p = forged(&good, &d.join("seed.key"), |b| b[12..28].fill(0));
    assert!(
        matches!(refusal(&p), FileError::Inconsistent { ref reason, .. } if reason.contains("no seed"))
    );
    let p = forged(&good, &d.join("dim.key"), |b| b[28] ^= 1);
    assert!(matches!(refusal(&p), FileError::Inconsistent { .. }));
    // A body count far beyond the payload: decoding fails, nothing huge
    // is allocated.
    let p = forged(&good, &d.join("count.key"), |b| {
        b[68..76].copy_from_slice(&(u64::MAX / 16).to_le_bytes())
    });
    assert!(matches!(refusal(&p), FileError::Malformed { .. }));
    // An unknown key-switch variant (its tag follows the bootstrap bodies).
    let tag = 76
        + 8 * u64::from_le_bytes(
            std::fs::read(&good).unwrap()[36 + 68..36 + 76]
                .try_into()
                .unwrap(),
        ) as usize;
    let p = forged(&good, &d.join("tag.key"), |b| {
        b[tag..tag + 4].copy_from_slice(&7u32.to_le_bytes())
    });
    assert!(matches!(refusal(&p), FileError::Malformed { .. }));
    let p = forged(&good, &d.join("garbage.key"), |b| b.truncate(50));
    assert!(matches!(refusal(&p), FileError::Malformed { .. }));

    // Wrong kinds, both ways.
    assert!(matches!(
        CompressedServerKey::load(&d.join("plain.key")),
        Err(Error::File(FileError::WrongKind {
            found: "server key",
            expected: "compressed server key",
            ..
        }))
    ));
    assert!(matches!(
        CompressedServerKey::load(&d.join("client.key")),
        Err(Error::File(FileError::WrongKind {
            found: "client key",
            ..
        }))
    ));
    assert!(matches!(
        ServerKey::load(&d.join("client.key")),
        Err(Error::File(FileError::WrongKind {
            expected: "server key",
            ..
        }))
    ));
    assert!(matches!(
        ClientKey::load(&good),
        Err(Error::File(FileError::WrongKind {
            found: "compressed server key",
            ..
        }))
    ));
    assert!(matches!(
        hearth::crypto::files::load_ciphertexts(&good, None),
        Err(Error::File(FileError::WrongKind { .. }))
    ));
    // A failed write leaves nothing, and the good file still loads.
    std::fs::create_dir_all(d.join("adir")).unwrap();
    assert!(client
        .compressed_server_key()
        .save(&d.join("adir"))
        .is_err());
    assert_eq!(ServerKey::load(&good).unwrap().key_id(), client.key_id());
    let _ = std::fs::remove_dir_all(&d);
}

/// The median of `runs` timings of `f`, in seconds.
fn median_secs<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            drop(f());
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

/// Sizes and times for the README and docs/results/compressed-keys.md
/// (`cargo test --release -p hearth --test all compressed:: -- --ignored
/// --nocapture`): both kinds of file, generation of each, decompression
/// in memory, and `ServerKey::load` of each file (just written, so from
/// the page cache). Times are medians of 3 runs on all cores.
#[test]
#[ignore]
fn measure_sizes_and_times() {
    let d = dir("measure");
    println!("| set | server.key (bytes) | compressed (bytes) | ratio | server_key() | compressed_server_key() | decompress() | ServerKey::load, plain file | ServerKey::load, compressed file |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for params in [&DIGITS_128, &DIGITS_KS32_128, &GATES_128, &BITS_128] {
        let client = ClientKey::generate(params);
        let (plain_path, compressed_path) = (d.join("plain.key"), d.join("compressed.key"));
        client.server_key().save(&plain_path).unwrap();
        let compressed = client.compressed_server_key();
        compressed.save(&compressed_path).unwrap();
        let t_plain = median_secs(3, || client.server_key());
        let t_compressed = median_secs(3, || client.compressed_server_key());
        let t_decompress = median_secs(3, || compressed.decompress());
        let t_load_plain = median_secs(3, || ServerKey::load(&plain_path).unwrap());
        let t_load_compressed = median_secs(3, || ServerKey::load(&compressed_path).unwrap());
        let (a, b) = (size(&plain_path), size(&compressed_path));
        println!(
            "| {} | {a} | {b} | {:.2}x | {:.2} s | {:.2} s | {:.2} s | {:.2} s | {:.2} s |",
            params.name,
            a as f64 / b as f64,
            t_plain,
            t_compressed,
            t_decompress,
            t_load_plain,
            t_load_compressed,
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}
