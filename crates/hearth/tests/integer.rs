//! The typed integer API, and the digits algorithms on encryption.

use hearth::api::{clear_digits, clear_value, Encrypted, Program, Shape};
use hearth::backend::{ClearBackend, CpuBackend};
use hearth::digits::{self};
use hearth::{ClientKey, Error, ParameterSet, INSECURE_TEST_DIGITS};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};

/// Every required operation on two 8-digit inputs, in one program.
fn all_ops(params: &'static ParameterSet) -> (hearth::api::CompiledProgram, Vec<&'static str>) {
    let p = Program::new(params);
    let x = p.input(8);
    let y = p.input(8);
    let names = vec![
        "x + y",
        "x - y",
        "x * y",
        "x^2",
        "805 x",
        "4095 x",
        "sign x",
        "max",
        "round(x, 3)",
        "bits(x)",
        "|x - y|",
        "x^3",
    ];
    p.output(&(&x + &y));
    p.output(&(&x - &y));
    p.output(&(&x * &y));
    p.output(&x.square());
    p.output(&(&x * 805));
    p.output(&(&x * 4095));
    p.output(&x.signum());
    p.output(&x.max(&y));
    p.output(&x.round(3));
    // Two's-complement bits, as digits in {0, 1}.
    p.output(&x.to_bits_as_int());
    p.output(&x.abs_diff(&y));
    p.output(&x.pow(3));
    (p.build().unwrap(), names)
}

fn reference(name: &str, x: i64, y: i64) -> BigInt {
    let r = match name {
        "x + y" => x + y,
        "x - y" => x - y,
        "x * y" => x * y,
        "x^2" => x * x,
        "805 x" => 805 * x,
        "4095 x" => 4095 * x,
        "sign x" => x.signum(),
        "max" => x.max(y),
        "round(x, 3)" => (x + 4).div_euclid(8) * 8,
        "|x - y|" => (x - y).abs(),
        "x^3" => x.pow(3),
        "bits(x)" => x.rem_euclid(1 << 9),
        _ => unreachable!(),
    };
    BigInt::from(r)
}

#[test]
fn typed_api_on_the_clear_backend() {
    let (prog, names) = all_ops(&INSECURE_TEST_DIGITS);
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    for _ in 0..300 {
        let (x, y) = (rng.gen_range(-255..=255i64), rng.gen_range(-255..=255i64));
        let ins = [
            clear_digits(&INSECURE_TEST_DIGITS, x, 8).unwrap(),
            clear_digits(&INSECURE_TEST_DIGITS, y, 8).unwrap(),
        ];
        let out = prog.run(&ClearBackend, &ins).unwrap();
        for (name, o) in names.iter().zip(&out) {
            assert_eq!(
                clear_value(&INSECURE_TEST_DIGITS, o),
                reference(name, x, y),
                "{name} x {x} y {y}"
            );
        }
    }
}

/// Every operation encrypted, digit for digit equal to the clear backend.
/// On INSECURE_TEST_DIGITS, whose circuits are DIGITS_128's (same `pi` and
/// budgets), so that its bootstraps take a millisecond each; programs run
/// on DIGITS_128 itself in `programs`, `twos` and `kernels_encrypted`.
#[test]
fn every_operation_encrypted_matches_clear_on_8_bit_values() {
    let (prog, names) = all_ops(&INSECURE_TEST_DIGITS);
    let (client, server) = hearth_testkit::keys::keys(&INSECURE_TEST_DIGITS);
    let cpu = CpuBackend::new(server, Some(2)).unwrap();
    for (x, y) in [(-255i64, 254i64)] {
        let ex = client.encrypt_int(x, 8).unwrap();
        let ey = client.encrypt_int(y, 8).unwrap();
        let enc = prog.run_encrypted(&cpu, &[ex, ey]).unwrap();
        let clear = prog
            .run(
                &ClearBackend,
                &[
                    clear_digits(&INSECURE_TEST_DIGITS, x, 8).unwrap(),
                    clear_digits(&INSECURE_TEST_DIGITS, y, 8).unwrap(),
                ],
            )
            .unwrap();
        for ((name, e), c) in names.iter().zip(&enc).zip(&clear) {
            let got: Vec<u64> = e
                .ciphertexts()
                .iter()
                .map(|ct| client.decrypt(ct).unwrap())
                .collect();
            assert_eq!(
                &got, c,
                "{name}: encrypted digits differ from the clear backend"
            );
            assert_eq!(
                client.decrypt_int(e).unwrap(),
                reference(name, x, y),
                "{name}"
            );
        }
    }
}

#[test]
fn encrypt_decrypt_integers() {
    let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
    for v in [0i64, 1, -1, 12345, -(1 << 40), i64::MAX, i64::MIN + 1] {
        let e = client.encrypt_int(v, 64).unwrap();
        assert_eq!(client.decrypt_i64(&e).unwrap(), v);
    }
    let big: BigInt = (BigInt::from(1) << 200u32) - BigInt::from(7);
    let e = client.encrypt_int(big.clone(), 201).unwrap();
    assert_eq!(client.decrypt_int(&e).unwrap(), big);
    assert!(matches!(
        client.decrypt_i64(&e),
        Err(Error::DoesNotFit { .. })
    ));
    let v = -(1i128 << 100) + 3;
    assert_eq!(
        client
            .decrypt_i128(&client.encrypt_int(v, 101).unwrap())
            .unwrap(),
        v
    );
    assert!(matches!(
        client.encrypt_int(256, 8),
        Err(Error::DoesNotFit { .. })
    ));
    // A ciphertext that is not a digit is refused on decryption.
    let not_digit =
        Encrypted::new(Shape::Int { digits: 1 }, vec![client.encrypt(5).unwrap()]).unwrap();
    assert!(matches!(
        client.decrypt_int(&not_digit),
        Err(Error::DoesNotFit { .. })
    ));
}

#[test]
fn errors_surface_at_build() {
    let a = Program::new(&INSECURE_TEST_DIGITS);
    let b = Program::new(&INSECURE_TEST_DIGITS);
    let x = a.input(4);
    let y = b.input(4);
    let z = &x + &y; // wires of another program
    a.output(&z);
    assert!(matches!(
        a.build(),
        Err(Error::Build(hearth::BuildError::ForeignWire { .. }))
    ));
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let x = p.input(4);
    p.output(&x);
    let prog = p.build().unwrap();
    assert!(matches!(
        prog.run(&ClearBackend, &[vec![0; 3]]),
        Err(Error::DoesNotFit { .. })
    ));
    assert!(matches!(
        prog.run(&ClearBackend, &[]),
        Err(Error::InputCount { .. })
    ));
    let _ = digits::Comparison::Lt;
}

/// `max` and `min` against a clear zero, on either side, take the sign
/// reduction of `relu` (no difference): every 8-digit value and a
/// two's-complement input, against Rust, and no more bootstraps than
/// `relu`.
#[test]
fn max_and_min_against_zero_are_relu() {
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let x = p.input(8);
    let t = p.input_twos(6);
    let zero = p.constant(0);
    for v in [&x, &t] {
        for o in [
            v.max(&zero),
            zero.max(v),
            v.min(&zero),
            zero.min(v),
            v.relu(),
        ] {
            p.output(&o);
        }
    }
    let prog = p.build().unwrap();
    let cost = |f: &dyn Fn(&Program) -> hearth::api::Int<'_>| {
        let p = Program::new(&INSECURE_TEST_DIGITS);
        let r = f(&p);
        p.output(&r);
        p.build().unwrap().circuit().stats().pbs
    };
    let relu = cost(&|p| p.input(8).relu());
    assert_eq!(cost(&|p| p.constant(0).max(&p.input(8))), relu);
    assert_eq!(cost(&|p| p.input(8).min(&p.constant(0))), relu);
    for xv in -255..=255i64 {
        let tv = xv.clamp(-32, 31);
        let ins = [
            clear_digits(&INSECURE_TEST_DIGITS, xv, 8).unwrap(),
            hearth::api::clear_digits_twos(&INSECURE_TEST_DIGITS, tv, 6).unwrap(),
        ];
        let out = prog.run(&ClearBackend, &ins).unwrap();
        let want: Vec<BigInt> = [xv, tv]
            .iter()
            .flat_map(|&v| [v.max(0), v.max(0), v.min(0), v.min(0), v.max(0)])
            .map(BigInt::from)
            .collect();
        let got: Vec<BigInt> = out
            .iter()
            .map(|o| clear_value(&INSECURE_TEST_DIGITS, o))
            .collect();
        assert_eq!(got, want, "x = {xv}, t = {tv}");
    }
}

/// `pow` by every exponent 0..=6 on every 4-digit value (and on
/// two's-complement inputs), against Rust; an exponent whose result
/// cannot be held is refused with a typed error when built.
#[test]
fn pow_by_each_small_exponent_on_every_value() {
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let x = p.input(4);
    let t = p.input_twos(4);
    for e in 0..=6 {
        p.output(&x.pow(e));
        p.output(&t.pow(e));
    }
    let prog = p.build().unwrap();
    for v in -15..=15i64 {
        for tv in -8..=7i64 {
            let ins = [
                clear_digits(&INSECURE_TEST_DIGITS, v, 4).unwrap(),
                hearth::api::clear_digits_twos(&INSECURE_TEST_DIGITS, tv, 4).unwrap(),
            ];
            let out = prog.run(&ClearBackend, &ins).unwrap();
            for (e, o) in (0..=6u32).zip(out.chunks(2)) {
                let got = (
                    clear_value(&INSECURE_TEST_DIGITS, &o[0]),
                    clear_value(&INSECURE_TEST_DIGITS, &o[1]),
                );
                assert_eq!(
                    got,
                    (BigInt::from(v.pow(e)), BigInt::from(tv.pow(e))),
                    "{v}, {tv} ** {e}"
                );
            }
        }
    }
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let x = p.input(32);
    p.output(&x.pow(usize::MAX));
    let err = p.build().err();
    assert!(matches!(err, Some(Error::TooLarge { .. })), "{err:?}");
}
