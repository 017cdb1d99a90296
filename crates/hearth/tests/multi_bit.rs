//! `DIGITS_MB4_128` (tfhe-rs's GPU multi-bit set, grouping factor 4) on
//! the cpu: keys survive a file round trip, whole and compressed; both
//! integer families decrypt exactly; the measured noise matches tfhe-rs's
//! multi-bit formulas at the full budget; and a classical key whose header
//! claims the multi-bit set is refused.

use hearth::api::{Program, U8};
use hearth::backend::noise::measure;
use hearth::backend::CpuBackend;
use hearth::crypto::params::Margin;
use hearth::{ClientKey, Error, FileError, ServerKey, DIGITS_128, DIGITS_MB4_128};

#[test]
fn multi_bit_keys_round_trip_and_programs_are_exact() {
    let d = std::env::temp_dir().join(format!("hearth-mb4-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    // One key through both files: compressed (tfhe-rs's seeded keys), then
    // whole; a key generation and a program run fewer than a round trip
    // of each file on a key of its own.
    let client = ClientKey::generate(&DIGITS_MB4_128);
    client
        .compressed_server_key()
        .save(&d.join("compressed.key"))
        .unwrap();
    let decompressed = ServerKey::load(&d.join("compressed.key")).unwrap();
    decompressed.save(&d.join("server.key")).unwrap();
    let loaded = ServerKey::load(&d.join("server.key")).unwrap();

    // Digits and words in one program, on the key read back from both files.
    let p = Program::new(&DIGITS_MB4_128);
    let (x, y) = (p.input_twos(8), p.input(8));
    p.output(&(&x - &y));
    p.output(&x.lt(&y));
    let (u, v) = (U8::input(&p), U8::input(&p));
    p.output(&(&u * &v));
    p.output(&u.max(&v));
    let prog = p.build().unwrap();
    let (a, b, c, e) = (-128i64, 255i64, 234u8, 77u8);
    let cpu = CpuBackend::new(&loaded, None).unwrap();
    let ins = [
        client.encrypt_int_twos(a, 8).unwrap(),
        client.encrypt_int(b, 8).unwrap(),
        client.encrypt_word(c).unwrap(),
        client.encrypt_word(e).unwrap(),
    ];
    let out = prog.run_encrypted(&cpu, &ins).unwrap();
    let ints: Vec<i64> = out[..2]
        .iter()
        .map(|o| client.decrypt_i64(o).unwrap())
        .collect();
    assert_eq!(ints, [a - b, (a < b) as i64]);
    let words: Vec<u8> = out[2..]
        .iter()
        .map(|o| client.decrypt_word::<u8>(o).unwrap())
        .collect();
    assert_eq!(words, [c.wrapping_mul(e), c.max(e)]);
    // Packed as a server sends them back, with the key read back from
    // both files: the same values.
    let outputs = prog.signature().outputs.clone();
    let entries = outputs
        .iter()
        .zip(out)
        .map(|(p, v)| hearth::formats::bundle::Entry {
            param: p.clone(),
            values: vec![v],
        })
        .collect();
    let full = hearth::Bundle::new(DIGITS_MB4_128.id, client.key_id(), entries).unwrap();
    let packed = prog.pack(&loaded, &full).unwrap();
    assert!(packed.to_bytes().unwrap().len() * 20 < full.to_bytes().unwrap().len());
    assert_eq!(
        client.decrypt_bundle(&packed).unwrap(),
        client.decrypt_bundle(&full).unwrap()
    );

    // A classical DIGITS_128 key whose header names DIGITS_MB4_128 (the
    // checksum made right) is refused: it has n GGSWs, not n / 4 * 15.
    let other = hearth_testkit::keys::keys(&DIGITS_128);
    other.1.save(&d.join("classic.key")).unwrap();
    let mut bytes = std::fs::read(d.join("classic.key")).unwrap();
    bytes[12..14].copy_from_slice(&DIGITS_MB4_128.id.to_u16().to_le_bytes());
    hearth::crypto::files::reseal(&mut bytes);
    std::fs::write(d.join("claims-mb4.key"), &bytes).unwrap();
    assert!(matches!(
        ServerKey::load(&d.join("claims-mb4.key")),
        Err(Error::File(FileError::Inconsistent { .. }))
    ));
    let _ = std::fs::remove_dir_all(&d);
}

/// 400 multi-bit bootstraps at the full margin-1/2 budget: no wrong output,
/// and the noise the blind rotation sees (key switch plus the multi-bit
/// modulus switch) and the bootstrap's output noise are the model's: the
/// standard deviations agree within 12% (3.4 times the relative spread of
/// one measured on 400 samples).
#[test]
#[ignore = "statistical, half a minute of bootstraps: run where HEARTH_LONG_TESTS is set (CI)"]
fn multi_bit_noise_matches_the_model() {
    let (client, server) = hearth_testkit::keys::keys(&DIGITS_MB4_128);
    let budget = DIGITS_MB4_128.budgets.half;
    let r = measure(client, server, budget, Margin::Half, 400, 7, &|_| {}).unwrap();
    assert_eq!(r.wrong, 0);
    let input = r.input_std_measured / r.input_std_predicted;
    let output = r.pbs_std_measured / r.pbs_std_predicted;
    eprintln!("std measured / predicted: input {input:.3}, output {output:.3}");
    assert!((0.88..1.12).contains(&input), "input std ratio {input}");
    assert!((0.88..1.12).contains(&output), "output std ratio {output}");
}

/// The multi-bit set's budget (51 at margin 1/2, against 112 on
/// `DIGITS_128`) still carries both families: random programs of digits
/// and of words build on it and are exact on the clear backend, the
/// circuits the cpu runs encrypted.
#[test]
fn random_programs_of_both_families_are_exact_at_its_budget() {
    use hearth_testkit::programs::{Limits, ProgramSpec};
    use hearth_testkit::word_programs::WordSpec;
    use rand::SeedableRng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(54);
    for i in 0..300 {
        let spec = ProgramSpec::random(&mut rng, &Limits::small());
        if let Err(e) = spec.check(&DIGITS_MB4_128) {
            panic!("digits program {i}: {e:?}\n{spec:?}");
        }
        let words = WordSpec::random(&mut rng, 6);
        if let Err(e) = words.check(&DIGITS_MB4_128, 2) {
            panic!("word program {i}: {e:?}\n{words:?}");
        }
    }
}
