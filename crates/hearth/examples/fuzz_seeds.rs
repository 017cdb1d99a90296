//! Writes real hearth files, small enough to seed the fuzz targets in
//! `fuzz/` (`fuzz/seed.sh` runs it): keys for the INSECURE test sets,
//! ciphertext lists, programs and bundles, public keys.
//!
//! Server keys are megabytes even for the INSECURE sets, more than a fuzzer
//! mutates well, so they are written twice: whole (`*.full`, for
//! `fuzz/seed.sh` only, never committed) and shrunk, with their long
//! vectors cut to a few words (the lengths patched to match, header fixed),
//! so the fuzzer starts from files that decode through to the checks
//! against the parameter set.
//!
//! Usage: `cargo run --release -p hearth --example fuzz_seeds -- DIR`

use std::path::{Path, PathBuf};

use hearth::api::U8;
use hearth::crypto::files::{ciphertexts_from_bytes, reseal, save_ciphertexts};
use hearth::{
    Bundle, ClientKey, CompiledProgram, CompressedServerKey, Program, PublicKey, ServerKey,
    DIGITS_128, GATES_128, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS,
};
use num_bigint::BigInt;

const HEADER_LEN: usize = 36;

/// Cuts each bincode vector of exactly `len` words of `word` bytes (its
/// length found as a little-endian u64 in the payload, the first match
/// after the previous cut) to `keep` words.
fn shrink(bytes: &[u8], lens: &[(usize, usize)], keep: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut from = HEADER_LEN;
    for &(len, word) in lens {
        let needle = (len as u64).to_le_bytes();
        // Fields before a vector are 4 or 8 bytes wide: a length at an
        // offset that is no multiple of 4 is the tail of one field and the
        // head of the next (a level of 1 after a base log of 23 reads as
        // 65536 two bytes in).
        let found = |aligned: bool| {
            (from..out.len() - 8).find(|&i| out[i..i + 8] == needle && (!aligned || i % 4 == 0))
        };
        let at = found(true)
            .or_else(|| found(false))
            .unwrap_or_else(|| panic!("no vector of {len} words"));
        out[at..at + 8].copy_from_slice(&(keep as u64).to_le_bytes());
        let start = at + 8 + keep * word;
        out.drain(start..at + 8 + len * word);
        from = start;
    }
    reseal(&mut out);
    out
}

/// Writes a seed and says how its reader takes it.
fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap();
    let o = Path::new(name);
    let read = match dir.file_name().and_then(|n| n.to_str()) {
        Some("client_key") => ClientKey::from_bytes(o, bytes).map(drop),
        Some("server_key") if !name.ends_with(".full") => ServerKey::from_bytes(o, bytes).map(drop),
        Some("compressed_server_key") => CompressedServerKey::from_bytes(o, bytes).map(drop),
        Some("public_key") => PublicKey::from_bytes(o, bytes).map(drop),
        Some("ciphertexts") => ciphertexts_from_bytes(o, bytes, None).map(drop),
        Some("bundle") => Bundle::from_bytes(o, bytes).map(drop),
        Some("program") => CompiledProgram::from_bytes(o, bytes).map(drop),
        _ => {
            println!("{}/{name}: {} bytes", dir.display(), bytes.len());
            return;
        }
    };
    let read = read.map_or_else(|e| e.to_string(), |()| "reads".into());
    println!("{}/{name}: {} bytes: {read}", dir.display(), bytes.len());
}

/// A small signed-binary program with a tensor input: the sum of a
/// 3-vector and its product with a scalar.
fn secure_digit_program() -> CompiledProgram {
    let p = Program::new(&DIGITS_128);
    let x: Vec<_> = (0..3).map(|_| p.input(3)).collect();
    let k = p.input(2);
    p.output(&(&(&x[0] + &x[1]) + &x[2]));
    p.output(&(&k * &x[1]));
    p.build()
        .unwrap()
        .with_signature(&[("x", &[3]), ("k", &[])], &[("s", &[]), ("kx", &[])])
        .unwrap()
}

/// A small 8-bit word program.
fn secure_word_program() -> CompiledProgram {
    let p = Program::new(&GATES_128);
    let a = U8::input(&p);
    let b = U8::input(&p);
    p.output(&(&(&a & &b) + &b.rotate_left(1)));
    p.build().unwrap()
}

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).expect("usage: fuzz_seeds DIR"));
    let sub = |name: &str| {
        let d = out.join(name);
        std::fs::create_dir_all(&d).unwrap();
        d
    };
    let pks = sub("public_key");
    let (keys, servers, compressed, cts, bundles, programs, jobs) = (
        sub("client_key"),
        sub("server_key"),
        sub("compressed_server_key"),
        sub("ciphertexts"),
        sub("bundle"),
        sub("program"),
        sub("server_request"),
    );
    let tmp = std::env::temp_dir().join(format!("hearth-fuzz-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let read = |f: &dyn Fn(&Path)| {
        let p = tmp.join("f");
        f(&p);
        std::fs::read(&p).unwrap()
    };

    for (tag, params) in [
        ("digits", &INSECURE_TEST_DIGITS),
        ("bits", &INSECURE_TEST_BITS),
    ] {
        let client = ClientKey::generate(params);
        write(&keys, tag, &read(&|p| client.save(p).unwrap()));

        let (n, big_n) = (params.lwe_dimension.0, params.big_lwe_dimension().0);
        let (glwe, poly) = (
            params.glwe_dimension.to_glwe_size().0,
            params.polynomial_size.0,
        );
        let (pbs_level, ks_level) = (params.pbs_level.0, params.ks_level.0);

        let server = read(&|p| client.server_key().save(p).unwrap());
        write(&servers, &format!("{tag}.full"), &server);
        let bsk = n * glwe * glwe * pbs_level * poly;
        let ksk = big_n * ks_level * (n + 1);
        write(
            &servers,
            &format!("{tag}-shrunk"),
            &shrink(&server, &[(bsk, 8), (ksk, 8)], 3),
        );
        write(&servers, &format!("{tag}-head"), &server[..4096]);

        let comp = read(&|p| client.compressed_server_key().save(p).unwrap());
        write(&compressed, &format!("{tag}.full"), &comp);
        let bsk_bodies = n * pbs_level * glwe * poly;
        let ksk_bodies = big_n * ks_level;
        write(
            &compressed,
            &format!("{tag}-shrunk"),
            &shrink(&comp, &[(bsk_bodies, 8), (ksk_bodies, 8)], 3),
        );
        // A compressed key is also a server-key file (decompressed on load).
        write(
            &servers,
            &format!("{tag}-compressed-shrunk"),
            &shrink(&comp, &[(bsk_bodies, 8), (ksk_bodies, 8)], 3),
        );

        let list: Vec<_> = (0..3).map(|v| client.encrypt(v).unwrap()).collect();
        let list = read(&|p| save_ciphertexts(p, &list).unwrap());
        write(&cts, tag, &list);
        // Every ciphertext cut to 2 words: small files that decode whole.
        let lwe = [(big_n + 1, 8); 3];
        write(&cts, &format!("{tag}-shrunk"), &shrink(&list, &lwe, 2));

        // A program and a bundle of its inputs.
        let prog: CompiledProgram = if params.id == INSECURE_TEST_DIGITS.id {
            let p = Program::new(params);
            let x: Vec<_> = (0..2).map(|_| p.input(2)).collect();
            let k = p.input_twos(3);
            p.output(&(&x[0] + &x[1]));
            p.output(&(&k * &x[0]));
            p.build()
                .unwrap()
                .with_signature(&[("x", &[2]), ("k", &[])], &[("s", &[]), ("kx", &[])])
                .unwrap()
        } else {
            let p = Program::new(params);
            let a = U8::input(&p);
            let b = U8::input(&p);
            p.output(&(&(&a ^ &b) + &a.rotate_left(3)));
            p.build().unwrap()
        };
        write(&programs, tag, &prog.to_bytes().unwrap());
        let ins = &prog.signature().inputs;
        let values: Vec<Vec<BigInt>> = ins
            .iter()
            .map(|param| {
                (0..param.count().unwrap())
                    .map(|i| BigInt::from(i + 1))
                    .collect()
            })
            .collect();
        let bundle = client.encrypt_bundle(ins, &values).unwrap();
        write(&bundles, tag, &bundle.to_bytes().unwrap());
        // The public key: compressed, its body cut to 3 words (decodes
        // whole, fails the size check), whole; and the bundle of the same
        // values under it (one compact list).
        let public = client.public_key().unwrap();
        let seeded = public.to_bytes().unwrap();
        write(&pks, tag, &seeded);
        write(
            &pks,
            &format!("{tag}-shrunk"),
            &shrink(&seeded, &[(big_n, 8)], 3),
        );
        write(
            &pks,
            &format!("{tag}-whole"),
            &public.decompressed().to_bytes().unwrap(),
        );
        let by_public = public.encrypt_bundle(ins, &values).unwrap();
        write(
            &bundles,
            &format!("{tag}-public"),
            &by_public.to_bytes().unwrap(),
        );
        // The same values as full ciphertexts (how outputs are written),
        // and with every ciphertext cut to 2 words.
        let full = Bundle::new(bundle.params(), bundle.key_id(), bundle.entries().to_vec())
            .unwrap()
            .to_bytes()
            .unwrap();
        write(&bundles, &format!("{tag}-full"), &full);
        let count = bundle.values().map(|v| v.ciphertexts().len()).sum();
        write(
            &bundles,
            &format!("{tag}-full-shrunk"),
            &shrink(&full, &vec![(big_n + 1, 8); count], 2),
        );
    }

    // Job requests for the compute server: a program file then its input
    // bundle, on the secure sets (the server refuses the INSECURE ones).
    for (tag, prog) in [
        ("digits", secure_digit_program()),
        ("bits", secure_word_program()),
    ] {
        let params = prog.circuit().params().params();
        let client = ClientKey::generate(params);
        let ins = &prog.signature().inputs;
        let values: Vec<Vec<BigInt>> = ins
            .iter()
            .map(|param| {
                (0..param.count().unwrap())
                    .map(|i| BigInt::from(i + 2))
                    .collect()
            })
            .collect();
        let mut body = prog.to_bytes().unwrap();
        body.extend(
            client
                .encrypt_bundle(ins, &values)
                .unwrap()
                .to_bytes()
                .unwrap(),
        );
        write(&jobs, tag, &body);
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}
