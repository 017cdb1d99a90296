//! Transciphering in programs: `U128::aes_key_schedule`,
//! `AesRoundKeys::aes_ctr_decrypt` and `U128::kreyvium_decrypt` against
//! the clear ciphers (RustCrypto's AES-128-CTR, hearth's Kreyvium) on the
//! clear backend, with keys, counters, IVs and ciphertexts as inputs or
//! constants, and the shapes they refuse.

use hearth::api::{AesRoundKeys, Word, U128};
use hearth::symmetric::aes::AesCtr;
use hearth::symmetric::kreyvium::Kreyvium;
use hearth::{Error, Program, DIGITS_KS32_128};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};

fn le(bytes: &[u8]) -> BigInt {
    BigInt::from_bytes_le(num_bigint::Sign::Plus, bytes)
}

/// Two blocks and a half (320 bits) under AES-CTR, the counter an input
/// (so the second and third blocks' counters are encrypted additions),
/// against RustCrypto; and the same with a clear counter, which costs no
/// addition.
#[test]
fn aes_ctr_in_a_program_is_rustcrypto_aes_ctr() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(85);
    for clear_counter in [false, true] {
        for case in 0..3 {
            let (key, iv): ([u8; 16], [u8; 16]) = (rng.gen(), rng.gen());
            // The last case counts across the 128-bit wrap.
            let iv = if case == 2 { [0xff; 16] } else { iv };
            let data: Vec<u8> = (0..40).map(|_| rng.gen()).collect();
            let mut sealed = data.clone();
            AesCtr::new(&key, &iv).apply(&mut sealed);

            let p = Program::new(&DIGITS_KS32_128);
            let k = U128::input(&p);
            let counter = if clear_counter {
                U128::constant(&p, BigInt::from(u128::from_be_bytes(iv)))
            } else {
                U128::input(&p)
            };
            let s = Word::<320, false>::input(&p);
            let keys: AesRoundKeys = k.aes_key_schedule();
            p.output(&keys.aes_ctr_decrypt(&counter, &s));
            let prog = p.build().unwrap();
            let mut inputs = vec![vec![le(&key)]];
            if !clear_counter {
                inputs.push(vec![BigInt::from(u128::from_be_bytes(iv))]);
            }
            inputs.push(vec![le(&sealed)]);
            let out = prog.run_clear(&inputs).unwrap();
            assert_eq!(
                out[0][0],
                le(&data),
                "case {case}, clear counter {clear_counter}"
            );
        }
    }
}

/// Round keys as a program's output, fed to a later program as its input:
/// the schedule paid once per key.
#[test]
fn round_keys_carry_from_one_program_to_the_next() {
    let key: [u8; 16] = *b"hearth-aes-key!!";
    let iv = [7u8; 16];
    let data = *b"sixteen bytes ok";
    let mut sealed = data;
    AesCtr::new(&key, &iv).apply(&mut sealed);

    let p = Program::new(&DIGITS_KS32_128);
    p.output(&U128::input(&p).aes_key_schedule());
    let keys = p.build().unwrap().run_clear(&[vec![le(&key)]]).unwrap();

    let q = Program::new(&DIGITS_KS32_128);
    let rk = AesRoundKeys::input(&q);
    let counter = U128::constant(&q, BigInt::from(u128::from_be_bytes(iv)));
    q.output(&rk.aes_ctr_decrypt(&counter, &U128::input(&q)));
    let out = q
        .build()
        .unwrap()
        .run_clear(&[keys[0].clone(), vec![le(&sealed)]])
        .unwrap();
    assert_eq!(out[0][0], le(&data));
}

/// Kreyvium with the IV an input and with it clear, against the clear
/// cipher.
#[test]
fn kreyvium_in_a_program_is_kreyvium() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(86);
    for clear_iv in [false, true] {
        let (key, iv): ([u8; 16], [u8; 16]) = (rng.gen(), rng.gen());
        let data: [u8; 8] = rng.gen();
        let mut sealed = data;
        Kreyvium::new(&key, &iv).apply(&mut sealed);

        let p = Program::new(&DIGITS_KS32_128);
        let k = U128::input(&p);
        let v = if clear_iv {
            U128::constant(&p, le(&iv))
        } else {
            U128::input(&p)
        };
        let s = Word::<64, false>::input(&p);
        p.output(&k.kreyvium_decrypt(&v, &s));
        let prog = p.build().unwrap();
        let mut inputs = vec![vec![le(&key)]];
        if !clear_iv {
            inputs.push(vec![le(&iv)]);
        }
        inputs.push(vec![le(&sealed)]);
        let out = prog.run_clear(&inputs).unwrap();
        assert_eq!(out[0][0], le(&data), "clear IV {clear_iv}");
    }
}

/// Round keys, keys and counters of the wrong width are refused when the
/// op is built, with the shape that was expected.
#[test]
fn wrong_widths_are_refused_before_anything_runs() {
    use hearth::api::ops::{Op, WordOp};
    use hearth::api::table::AnyWidth;
    use hearth::Shape;
    let word = |bits| {
        Op::Input(Shape::Word {
            bits,
            signed: false,
        })
    };
    let cases = [
        (64, 128, 1408),  // round keys of 64 bits
        (1408, 64, 1408), // a counter of 64 bits
    ];
    for (keys_bits, counter_bits, expected) in cases {
        let p = Program::new(&DIGITS_KS32_128);
        let keys = p.push(word(keys_bits)).unwrap()[0];
        let counter = p.push(word(counter_bits)).unwrap()[0];
        let sealed = p.push(word(128)).unwrap()[0];
        let err = p
            .push(Op::Word(WordOp::AesCtr(
                keys,
                AnyWidth(counter),
                AnyWidth(sealed),
            )))
            .unwrap_err();
        let want = if keys_bits != expected { expected } else { 128 };
        assert!(
            matches!(
                err,
                Error::ShapeMismatch { expected: Shape::Word { bits, signed: false }, .. } if bits == want
            ),
            "{err:?}"
        );
    }
    let p = Program::new(&DIGITS_KS32_128);
    let key = p.push(word(127)).unwrap()[0];
    let err = p.push(Op::Word(WordOp::AesKeySchedule(key))).unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err:?}");
}

/// A program that would use one keystream twice (the same round keys and
/// overlapping clear counter blocks, across the 128-bit wrap too; the same
/// Kreyvium key and IV) is refused with `KeystreamReused`; adjacent blocks
/// and other IVs are not.
#[test]
fn a_keystream_used_twice_is_refused() {
    let aes = |first: u128, second: u128| {
        let p = Program::new(&DIGITS_KS32_128);
        let keys = U128::input(&p).aes_key_schedule();
        // Two blocks each.
        for c in [first, second] {
            let counter = U128::constant(&p, BigInt::from(c));
            p.output(&keys.aes_ctr_decrypt(&counter, &Word::<256, false>::input(&p)));
        }
        p.build().map(|_| ())
    };
    assert!(aes(10, 12).is_ok());
    assert!(aes(12, 10).is_ok());
    for (a, b) in [(10, 11), (10, 10), (11, 10), (u128::MAX, 0), (0, u128::MAX)] {
        let e = aes(a, b).unwrap_err();
        assert!(matches!(e, Error::KeystreamReused(_)), "{a} {b}: {e:?}");
    }
    assert!(aes(u128::MAX, 1).is_ok());

    let kreyvium = |first: u128, second: u128| {
        let p = Program::new(&DIGITS_KS32_128);
        let k = U128::input(&p);
        for iv in [first, second] {
            let iv = U128::constant(&p, BigInt::from(iv));
            p.output(&k.kreyvium_decrypt(&iv, &Word::<8, false>::input(&p)));
        }
        p.build().map(|_| ())
    };
    assert!(kreyvium(1, 2).is_ok());
    let e = kreyvium(5, 5).unwrap_err();
    assert!(matches!(e, Error::KeystreamReused(_)), "{e:?}");
}

/// The data owner's symmetric ciphertext travels in the clear: a bundle
/// joins an encrypted pad (the key's part, sent once) and the sealed
/// bytes as a clear part of one byte per byte. The server reads the clear
/// part as trivial ciphertexts, which flow through XORs and bootstrapped
/// additions like any input, encrypted on an insecure test set.
#[test]
fn sealed_bytes_arrive_in_the_clear_and_compute_encrypted() {
    use hearth::api::U16;
    use hearth::backend::CpuBackend;
    use hearth::{Bundle, ClientKey, INSECURE_TEST_BITS};
    let client = ClientKey::generate(&INSECURE_TEST_BITS);
    let server = client.server_key();
    let p = Program::new(&INSECURE_TEST_BITS);
    let pad = U16::input(&p);
    let sealed = U16::input(&p);
    let data = &sealed ^ &pad;
    p.output(&(&data + &U16::constant(&p, BigInt::from(1))));
    let prog = p.build().unwrap();
    let inputs = &prog.signature().inputs;
    let mut rng = rand::rngs::StdRng::seed_from_u64(86);
    let cpu = CpuBackend::new(&server, Some(2)).unwrap();
    for _ in 0..3 {
        let (pad, plain): (u16, u16) = (rng.gen(), rng.gen());
        let key_part = client
            .encrypt_bundle(&inputs[..1], &[vec![pad.into()]])
            .unwrap();
        let clear = Bundle::clear(
            INSECURE_TEST_BITS.id,
            client.key_id(),
            &inputs[1..],
            &[vec![(plain ^ pad).into()]],
        )
        .unwrap();
        let clear_len = clear.to_bytes().unwrap().len();
        let bundle = Bundle::combine([key_part, clear]).unwrap();
        let out = prog.run_bundle(&cpu, &bundle).unwrap();
        let got = client.decrypt_bundle(&out).unwrap();
        assert_eq!(got[0].1, vec![BigInt::from(plain.wrapping_add(1))]);
        // Two bytes of data, the rest the file's header and entry.
        assert!(clear_len < 120, "{clear_len} bytes");
    }
}

/// The standard vectors, transciphered: FIPS-197's AES-128 examples
/// (Appendix B and C.1: a block's keystream is AES of the counter block,
/// so the example's output sealed under its input decrypts to zeros),
/// SP 800-38A F.5.1's four CTR-AES128 blocks, and the Kreyvium authors'
/// four vectors (64 bits of keystream each), each turned back into the
/// data by the program on the clear backend.
#[test]
fn standard_vectors_decrypt_after_transciphering() {
    let hex = |s: &str| -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let aes = |key: &[u8], counter: &[u8], sealed: &[u8]| -> BigInt {
        let p = Program::new(&DIGITS_KS32_128);
        let (k, c) = (U128::input(&p), U128::input(&p));
        let s = Word::<512, false>::input(&p);
        p.output(&k.aes_key_schedule().aes_ctr_decrypt(&c, &s));
        let mut padded = sealed.to_vec();
        padded.resize(64, 0);
        let out = p
            .build()
            .unwrap()
            .run_clear(&[
                vec![le(key)],
                vec![BigInt::from_bytes_be(num_bigint::Sign::Plus, counter)],
                vec![le(&padded)],
            ])
            .unwrap();
        // The padding's keystream is cut off: only the sealed bytes count.
        let bytes = out[0][0].to_bytes_le().1;
        le(&bytes[..sealed.len().min(bytes.len())])
    };
    // FIPS-197 Appendix B and C.1: AES(input) = output.
    for (key, input, output) in [
        (
            "2b7e151628aed2a6abf7158809cf4f3c",
            "3243f6a8885a308d313198a2e0370734",
            "3925841d02dc09fbdc118597196a0b32",
        ),
        (
            "000102030405060708090a0b0c0d0e0f",
            "00112233445566778899aabbccddeeff",
            "69c4e0d86a7b0430d8cdb78070b4c55a",
        ),
    ] {
        assert_eq!(aes(&hex(key), &hex(input), &hex(output)), BigInt::from(0));
    }
    // SP 800-38A F.5.1 (CTR-AES128.Encrypt): four blocks.
    let plain = hex(concat!(
        "6bc1bee22e409f96e93d7e117393172a",
        "ae2d8a571e03ac9c9eb76fac45af8e51",
        "30c81c46a35ce411e5fbc1191a0a52ef",
        "f69f2445df4f9b17ad2b417be66c3710"
    ));
    let sealed = hex(concat!(
        "874d6191b620e3261bef6864990db6ce",
        "9806f66b7970fdff8617187bb9fffdff",
        "5ae4df3edbd5d35e5b4f09020db03eab",
        "1e031dda2fbe03d1792170a0f3009cee"
    ));
    let key = hex("2b7e151628aed2a6abf7158809cf4f3c");
    let counter = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    assert_eq!(aes(&key, &counter, &sealed), le(&plain));
    // Kreyvium: the authors' first 64 keystream bits, sealed over data.
    for (k, v, z) in hearth::symmetric::kreyvium::VECTORS {
        let data = *b"8 bytes!";
        let sealed: Vec<u8> = hex(z).iter().zip(data).map(|(a, b)| a ^ b).collect();
        let p = Program::new(&DIGITS_KS32_128);
        let (key, iv) = (U128::input(&p), U128::input(&p));
        p.output(&key.kreyvium_decrypt(&iv, &Word::<64, false>::input(&p)));
        let out = p
            .build()
            .unwrap()
            .run_clear(&[vec![le(&hex(k))], vec![le(&hex(v))], vec![le(&sealed)]])
            .unwrap();
        assert_eq!(out[0][0], le(&data), "key {k}");
    }
}
