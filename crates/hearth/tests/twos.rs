//! Integers entered in two's complement (`Program::input_twos`): every
//! operation exact on every pair of small values (clear backend, against
//! `i64` arithmetic), mixed with signed-binary operands of other lengths;
//! the costs that make them cheaper than signed-binary inputs; an encrypted
//! run on `DIGITS_128`; typed errors for bad values and mismatched shapes.

use hearth::api::{clear_digits, clear_digits_twos, clear_value, CompiledProgram, Int, Program};
use hearth::backend::{ClearBackend, CpuBackend};
use hearth::{ClientKey, Error, DIGITS_128, INSECURE_TEST_DIGITS as P};

/// An input kind: `len` digits, two's complement or signed-binary.
#[derive(Clone, Copy)]
struct Kind {
    len: usize,
    twos: bool,
}

impl Kind {
    fn values(self) -> Vec<i64> {
        if self.twos {
            let half = 1i64 << (self.len.max(1) - 1);
            if self.len == 0 {
                vec![0]
            } else {
                (-half..half).collect()
            }
        } else {
            let top = (1i64 << self.len) - 1;
            (-top..=top).collect()
        }
    }

    fn input<'p>(self, p: &'p Program) -> Int<'p> {
        if self.twos {
            p.input_twos(self.len)
        } else {
            p.input(self.len)
        }
    }

    fn clear(self, v: i64) -> Vec<u64> {
        if self.twos {
            clear_digits_twos(&P, v, self.len).unwrap()
        } else {
            clear_digits(&P, v, self.len).unwrap()
        }
    }
}

type Build = for<'p> fn(&Int<'p>, &Int<'p>) -> Int<'p>;
type Reference = fn(i64, i64) -> i64;

/// Each binary operation and its plain meaning.
fn operations() -> Vec<(&'static str, Build, Reference)> {
    fn wrap(v: i64, n: u32) -> i64 {
        let m = 1i64 << n;
        (v + m / 2).rem_euclid(m) - m / 2
    }
    vec![
        ("add", |x, y| x + y, |a, b| a + b),
        ("sub", |x, y| x - y, |a, b| a - b),
        ("mul", |x, y| x * y, |a, b| a * b),
        ("lt", |x, y| x.lt(y), |a, b| (a < b) as i64),
        ("le", |x, y| x.le(y), |a, b| (a <= b) as i64),
        ("gt", |x, y| x.gt(y), |a, b| (a > b) as i64),
        ("ge", |x, y| x.ge(y), |a, b| (a >= b) as i64),
        ("eq", |x, y| x.eq(y), |a, b| (a == b) as i64),
        ("ne", |x, y| x.ne(y), |a, b| (a != b) as i64),
        ("max", |x, y| x.max(y), i64::max),
        ("min", |x, y| x.min(y), i64::min),
        (
            "wrapping_add 4",
            |x, y| x.wrapping_add(y, 4),
            |a, b| wrap(a + b, 4),
        ),
        (
            "wrapping_mul 5",
            |x, y| x.wrapping_mul(y, 5),
            |a, b| wrap(a * b, 5),
        ),
        (
            "wrapping square 5",
            |x, _| x.wrapping_mul(x, 5),
            |a, _| wrap(a * a, 5),
        ),
        (
            "wrapping square 2",
            |x, _| x.wrapping_mul(x, 2),
            |a, _| wrap(a * a, 2),
        ),
        (
            "wrapping x13 5",
            |x, _| x.wrapping_mul(&x.owner().constant(13), 5),
            |a, _| wrap(a * 13, 5),
        ),
        ("x^2 - y", |x, y| &x.square() - y, |a, b| a * a - b),
        ("(x - y) - x", |x, y| &(x - y) - x, |_, b| -b),
        (
            "(x - y) < y",
            |x, y| (x - y).lt(y),
            |a, b| (a - b < b) as i64,
        ),
        (
            "max(x, y) - min(x, y)",
            |x, y| &x.max(y) - &x.min(y),
            |a, b| (a - b).abs(),
        ),
    ]
}

/// Every operation on every pair of values of the two kinds.
fn exhaustive(kx: Kind, ky: Kind) {
    let ops = operations();
    let p = Program::new(&P);
    let (x, y) = (kx.input(&p), ky.input(&p));
    for (_, f, _) in &ops {
        p.output(&f(&x, &y));
    }
    let prog: CompiledProgram = p.build().expect("builds");
    for a in kx.values() {
        for b in ky.values() {
            let out = prog
                .run(&ClearBackend, &[kx.clear(a), ky.clear(b)])
                .expect("runs");
            for ((name, _, reference), o) in ops.iter().zip(&out) {
                assert_eq!(
                    clear_value(&P, o),
                    reference(a, b).into(),
                    "{name}({a}, {b}) on {} {} / {} {}",
                    kx.len,
                    if kx.twos { "bits" } else { "digits" },
                    ky.len,
                    if ky.twos { "bits" } else { "digits" },
                );
            }
        }
    }
}

#[test]
fn twos_operands_of_every_length_are_exact() {
    for n in 1..=5 {
        for m in 1..=5 {
            exhaustive(Kind { len: n, twos: true }, Kind { len: m, twos: true });
        }
    }
}

#[test]
fn twos_and_signed_binary_operands_mix() {
    for n in 1..=4 {
        for m in 1..=3 {
            exhaustive(
                Kind { len: n, twos: true },
                Kind {
                    len: m,
                    twos: false,
                },
            );
            exhaustive(
                Kind {
                    len: m,
                    twos: false,
                },
                Kind { len: n, twos: true },
            );
        }
    }
    exhaustive(Kind { len: 0, twos: true }, Kind { len: 3, twos: true });
}

/// Results of operations on two's-complement inputs feed every operation
/// again (here a chain through subtraction, maximum and comparison).
#[test]
fn results_feed_further_operations() {
    let p = Program::new(&P);
    let (x, y, z) = (p.input_twos(6), p.input_twos(6), p.input_twos(4));
    let d = &x - &y;
    let m = d.max(&z);
    let out = &(&m * &x) + &m.lt(&y);
    p.output(&out);
    p.output(&(&d - &z).eq(&(&x - &(&y + &z))));
    let prog = p.build().unwrap();
    for (a, b, c) in [
        (31, -32, 7),
        (-32, 31, -8),
        (5, 5, 0),
        (-1, 17, 3),
        (0, -9, -8),
    ] {
        let ins = [
            clear_digits_twos(&P, a, 6).unwrap(),
            clear_digits_twos(&P, b, 6).unwrap(),
            clear_digits_twos(&P, c, 4).unwrap(),
        ];
        let out = prog.run(&ClearBackend, &ins).unwrap();
        let m = (a - b).max(c);
        assert_eq!(clear_value(&P, &out[0]), (m * a + (m < b) as i64).into());
        assert_eq!(clear_value(&P, &out[1]), 1.into());
    }
}

#[test]
fn encrypted_twos_inputs_decrypt_exactly() {
    let (client, server) = hearth_testkit::keys::keys(&DIGITS_128);
    let cpu = CpuBackend::new(server, None).unwrap();
    let p = Program::new(&DIGITS_128);
    let (x, y) = (p.input_twos(16), p.input_twos(16));
    p.output(&(&x - &y));
    p.output(&x.lt(&y));
    p.output(&x.eq(&y));
    p.output(&x.max(&y));
    p.output(&x.wrapping_mul(&y, 16));
    p.output(&y.wrapping_mul(&y, 16));
    let prog = p.build().unwrap();
    // One pair (the extremes): the circuit is the same for every input,
    // and the clear-backend tests above check it on many.
    let (a, b) = (-32768i64, 32767i64);
    let ins = [
        client.encrypt_int_twos(a, 16).unwrap(),
        client.encrypt_int_twos(b, 16).unwrap(),
    ];
    let out = prog.run_encrypted(&cpu, &ins).unwrap();
    let got: Vec<i64> = out.iter().map(|o| client.decrypt_i64(o).unwrap()).collect();
    let want = vec![
        a - b,
        (a < b) as i64,
        (a == b) as i64,
        a.max(b),
        (a as i16).wrapping_mul(b as i16) as i64,
        (b as i16).wrapping_mul(b as i16) as i64,
    ];
    assert_eq!(got, want, "{a}, {b}");
}

#[test]
fn bad_values_and_shapes_are_typed_errors() {
    let client = ClientKey::generate(&P);
    assert!(matches!(
        client.encrypt_int_twos(128, 8),
        Err(Error::DoesNotFit { .. })
    ));
    assert!(matches!(
        client.encrypt_int_twos(-129, 8),
        Err(Error::DoesNotFit { .. })
    ));
    assert!(client.encrypt_int_twos(-128, 8).is_ok());
    assert!(client.encrypt_int_twos(0, 0).is_ok());
    assert!(matches!(
        client.encrypt_int_twos(1, 0),
        Err(Error::DoesNotFit { .. })
    ));
    let p = Program::new(&P);
    let x = p.input_twos(8);
    p.output(&(&x - &x));
    let prog = p.build().unwrap();
    let server = client.server_key();
    let cpu = CpuBackend::new(&server, Some(1)).unwrap();
    // A signed-binary encryption of the same length is refused: its digits
    // may be outside the ranges the program was built for.
    let wrong = client.encrypt_int(5, 8).unwrap();
    assert!(matches!(
        prog.run_encrypted(&cpu, &[wrong]),
        Err(Error::ShapeMismatch { .. })
    ));
    let right = client.encrypt_int_twos(-100, 8).unwrap();
    let out = prog
        .run_encrypted(&cpu, std::slice::from_ref(&right))
        .unwrap();
    assert_eq!(client.decrypt_i64(&out[0]).unwrap(), 0);
    assert_eq!(client.decrypt_i64(&right).unwrap(), -100);
}

/// `wrapping_add` of two's-complement operands (one conversion of
/// `x_i + y_i - 1` with a borrow into the lowest block) at every width up
/// to 40 bits, operands of other widths included, against `i128`.
#[test]
fn wrapping_sums_of_bits_at_every_width() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let wrap = |v: i128, n: usize| {
        let m = 1i128 << n;
        (v + m / 2).rem_euclid(m) - m / 2
    };
    for n in 1..=40usize {
        let (nx, ny) = (rng.gen_range(1..=n + 3), rng.gen_range(1..=n + 3));
        let p = Program::new(&P);
        let (x, y) = (p.input_twos(nx), p.input_twos(ny));
        p.output(&x.wrapping_add(&y, n));
        let prog = p.build().unwrap();
        let range = |k: usize| -(1i128 << (k - 1))..(1i128 << (k - 1));
        for _ in 0..20 {
            let (a, b) = (rng.gen_range(range(nx)), rng.gen_range(range(ny)));
            let ins = [
                clear_digits_twos(&P, a, nx).unwrap(),
                clear_digits_twos(&P, b, ny).unwrap(),
            ];
            let out = prog.run(&ClearBackend, &ins).unwrap();
            assert_eq!(
                clear_value(&P, &out[0]),
                wrap(a + b, n).into(),
                "{a} + {b} at {n} bits"
            );
        }
    }
}
