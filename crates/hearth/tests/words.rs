//! The typed fixed-width words on the clear backend against Rust's own
//! integer methods: every pair of 8-bit operands for every two-operand
//! operation, random pairs at 16, 32, 64 and 128 bits.

use hearth::api::{clear_word, clear_word_value, CompiledProgram, Program, Word, U32};
use hearth::backend::ClearBackend;
use hearth::INSECURE_TEST_BITS as P;
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};

/// Every operation of the API on two inputs of one word type, in one
/// program (outputs in the order of `expected!` below).
fn program<const B: usize, const S: bool>() -> CompiledProgram {
    program_on::<B, S>(&P)
}

fn program_on<const B: usize, const S: bool>(
    params: &'static hearth::ParameterSet,
) -> CompiledProgram {
    let p = Program::new(params);
    p.set_threads(2);
    let x = Word::<B, S>::input(&p);
    let y = Word::<B, S>::input(&p);
    let outs: Vec<Word<B, S>> = vec![
        &x + &y,
        &x - &y,
        &x * &y,
        &x / &y,
        &x % &y,
        &x & &y,
        &x | &y,
        &x ^ &y,
        -&x,
        !&x,
        &x << 3,
        &x >> 3,
        x.rotate_left(3),
        x.rotate_right(5),
        x.shl_by(&y.cast::<B, false>()),
        x.shr_by(&y.cast::<B, false>()),
        x.rotate_left_by(&y.cast::<B, false>()),
        x.rotate_right_by(&y.cast::<B, false>()),
        x.min(&y),
        x.max(&y),
        x.lt(&y).select(&x, &y),
        x.reverse_bits(),
        &x + 100,
        &x * -3,
    ];
    for o in &outs {
        p.output(o);
    }
    for b in [x.eq(&y), x.ne(&y), x.lt(&y), x.le(&y), x.gt(&y), x.ge(&y)] {
        p.output(&b);
    }
    let (v, o) = x.overflowing_add(&y);
    p.output(&v);
    p.output(&o);
    let (v, o) = x.overflowing_sub(&y);
    p.output(&v);
    p.output(&o);
    let (v, o) = x.overflowing_mul(&y);
    p.output(&v);
    p.output(&o);
    let (v, ok) = x.checked_div(&y);
    p.output(&v);
    p.output(&ok);
    p.output(&x.count_ones());
    p.output(&x.leading_zeros());
    p.output(&x.cast::<4, S>());
    p.output(&x.cast::<24, true>());
    p.build().unwrap()
}

/// Rust's results, as values of each output's type (`u128` / `i128`).
macro_rules! expected {
    ($t:ty, $u:ty, $x:expr, $y:expr) => {{
        let (x, y): ($t, $t) = ($x, $y);
        let amount = (y as $u) as u32;
        // Division by zero: all ones (unsigned), -1 or 1 by the dividend's
        // sign (signed); the remainder is the dividend.
        let div0 = |x: $t| -> i128 {
            if (<$t>::MIN as i128) < 0 && (x as i128) < 0 {
                1
            } else {
                (0 as $t).wrapping_sub(1 as $t) as i128
            }
        };
        let mut v: Vec<i128> = vec![
            x.wrapping_add(y) as i128,
            x.wrapping_sub(y) as i128,
            x.wrapping_mul(y) as i128,
            if y == 0 {
                div0(x)
            } else {
                x.wrapping_div(y) as i128
            },
            if y == 0 {
                x as i128
            } else {
                x.wrapping_rem(y) as i128
            },
            (x & y) as i128,
            (x | y) as i128,
            (x ^ y) as i128,
            x.wrapping_neg() as i128,
            (!x) as i128,
            x.wrapping_shl(3) as i128,
            x.wrapping_shr(3) as i128,
            x.rotate_left(3) as i128,
            x.rotate_right(5) as i128,
            x.wrapping_shl(amount) as i128,
            x.wrapping_shr(amount) as i128,
            x.rotate_left(amount) as i128,
            x.rotate_right(amount) as i128,
            x.min(y) as i128,
            x.max(y) as i128,
            if x < y { x } else { y } as i128,
            x.reverse_bits() as i128,
            x.wrapping_add(100 as $t) as i128,
            x.wrapping_mul((-3i64) as $t) as i128,
        ];
        for c in [x == y, x != y, x < y, x <= y, x > y, x >= y] {
            v.push(c as i128);
        }
        let (s, o) = x.overflowing_add(y);
        v.extend([s as i128, o as i128]);
        let (s, o) = x.overflowing_sub(y);
        v.extend([s as i128, o as i128]);
        let (s, o) = x.overflowing_mul(y);
        v.extend([s as i128, o as i128]);
        match x.checked_div(y) {
            Some(q) => v.extend([q as i128, 1]),
            None => v.extend([
                if y == 0 {
                    div0(x)
                } else {
                    x.wrapping_div(y) as i128
                },
                0,
            ]),
        }
        v.push(x.count_ones() as i128);
        v.push(x.leading_zeros() as i128);
        v.push({
            let t = (x as $u & 0xf) as i128;
            if (<$t>::MIN as i128) < 0 && t & 8 != 0 {
                t - 16
            } else {
                t
            }
        });
        v.push({
            let w = x as i128;
            let m = w & 0xff_ffff;
            if m & 0x80_0000 != 0 {
                m - 0x100_0000
            } else {
                m
            }
        });
        v
    }};
}

fn run(prog: &CompiledProgram, x: BigInt, y: BigInt, bits: usize, signed: bool) -> Vec<BigInt> {
    let ins = [
        clear_word(x, bits, signed).unwrap(),
        clear_word(y, bits, signed).unwrap(),
    ];
    let out = prog.run(&ClearBackend, &ins).unwrap();
    out.iter()
        .zip(prog.output_shapes())
        .map(|(o, s)| match s {
            hearth::api::Shape::Word { signed, .. } => clear_word_value(o, *signed).unwrap(),
            _ => unreachable!(),
        })
        .collect()
}

/// Outputs read as the values Rust gives, for comparison (unsigned words
/// as non-negative values, booleans 0 / 1).
fn normalise(v: Vec<i128>, prog: &CompiledProgram) -> Vec<BigInt> {
    v.into_iter()
        .zip(prog.output_shapes())
        .map(|(x, s)| match s {
            hearth::api::Shape::Word { bits, signed } => {
                let m = BigInt::from(1) << *bits;
                let x = BigInt::from(x);
                let r = ((x % &m) + &m) % &m;
                if *signed && r >= (&m >> 1) {
                    r - m
                } else {
                    r
                }
            }
            _ => unreachable!(),
        })
        .collect()
}

macro_rules! check {
    ($name:ident, $bits:expr, $signed:expr, $t:ty, $u:ty, exhaustive) => {
        #[test]
        fn $name() {
            let prog = program::<$bits, $signed>();
            for x in <$t>::MIN..=<$t>::MAX {
                for y in <$t>::MIN..=<$t>::MAX {
                    let got = run(&prog, x.into(), y.into(), $bits, $signed);
                    let want = normalise(expected!($t, $u, x, y), &prog);
                    assert_eq!(got, want, "x = {x}, y = {y}");
                }
            }
        }
    };
    ($name:ident, $bits:expr, $signed:expr, $t:ty, $u:ty, random) => {
        #[test]
        fn $name() {
            let prog = program::<$bits, $signed>();
            let mut rng = rand::rngs::StdRng::seed_from_u64($bits);
            let mut pairs: Vec<($t, $t)> = vec![
                (0, 0),
                (<$t>::MAX, <$t>::MAX),
                (<$t>::MIN, (0 as $t).wrapping_sub(1)),
                (<$t>::MAX, 1),
                (5, 0),
            ];
            pairs.extend((0..40).map(|_| (rng.gen(), rng.gen())));
            pairs.extend((0..20).map(|_| (rng.gen(), rng.gen::<$t>() & 0xff)));
            for (x, y) in pairs {
                let got = run(&prog, x.into(), y.into(), $bits, $signed);
                let want = normalise(expected!($t, $u, x, y), &prog);
                assert_eq!(got, want, "x = {x}, y = {y}");
            }
        }
    };
}

check!(u8_every_pair, 8, false, u8, u8, exhaustive);

/// The same operations on a `pi = 5` set (other gate forms: a one-bootstrap
/// multiplexer, 7-to-3 counters), for random 16-bit pairs.
#[test]
fn on_a_pi_5_set() {
    let prog = program_on::<16, true>(&hearth::INSECURE_TEST_DIGITS);
    let mut rng = rand::rngs::StdRng::seed_from_u64(99);
    for _ in 0..40 {
        let (x, y): (i16, i16) = (rng.gen(), rng.gen());
        let got = run(&prog, x.into(), y.into(), 16, true);
        let want = normalise(expected!(i16, u16, x, y), &prog);
        assert_eq!(got, want, "x = {x}, y = {y}");
    }
    // The pi = 5 forms are cheaper: compare with pi = 3.
    let gates = program_on::<16, true>(&P).circuit().stats().pbs;
    assert!(prog.circuit().stats().pbs < gates);
}
check!(i8_every_pair, 8, true, i8, u8, exhaustive);
check!(u16_random, 16, false, u16, u16, random);
check!(i16_random, 16, true, i16, u16, random);
check!(u32_random, 32, false, u32, u32, random);
check!(i32_random, 32, true, i32, u32, random);
check!(u64_random, 64, false, u64, u64, random);
check!(i64_random, 64, true, i64, u64, random);
check!(u128_random, 128, false, u128, u128, random);
check!(i128_random, 128, true, i128, u128, random);

/// Every operation encrypted (release mode): each output decrypts to the
/// clear backend's bits. On INSECURE_TEST_BITS, whose circuits are
/// GATES_128's (same `pi` and budgets), so that their bootstraps take a
/// millisecond each; word programs run on GATES_128 itself in
/// `programs::words` and `program_files`.
#[test]
fn every_operation_encrypted_equals_the_clear_backend() {
    use hearth::backend::CpuBackend;
    use hearth::INSECURE_TEST_BITS;
    use hearth_testkit::word_programs::encrypted_equals_clear;
    let (client, server) = hearth_testkit::keys::keys(&INSECURE_TEST_BITS);
    let cpu = CpuBackend::new(server, None).unwrap();
    // One pair per signedness: the circuit is the same for every input,
    // and every 8-bit pair is checked on the clear backend above.
    for (signed, pairs) in [(false, vec![(200i64, 3i64)]), (true, vec![(-128, -1)])] {
        let prog = if signed {
            program_on::<8, true>(&INSECURE_TEST_BITS)
        } else {
            program_on::<8, false>(&INSECURE_TEST_BITS)
        };
        for (x, y) in pairs {
            let enc = [
                client.encrypt_word_of(x, 8, signed).unwrap(),
                client.encrypt_word_of(y, 8, signed).unwrap(),
            ];
            let words = [
                clear_word(x, 8, signed).unwrap(),
                clear_word(y, 8, signed).unwrap(),
            ];
            let (out, clear) = encrypted_equals_clear(client, &cpu, &prog, &enc, &words)
                .unwrap_or_else(|e| panic!("x = {x}, y = {y}, signed = {signed}: {e}"));
            // The typed decryption reads the same values.
            let first = client.decrypt_word_value(&out[0]).unwrap();
            assert_eq!(first, clear_word_value(&clear[0], signed).unwrap());
        }
    }
}

/// The book's word example (`docs/words.md`, encrypted there on `U8`) on
/// `U32`, on the clear backend.
#[test]
fn readme_example() {
    use hearth::api::{clear_word, U32};
    let p = Program::new(&P);
    p.set_threads(2);
    let (x, y) = (U32::input(&p), U32::input(&p));
    let z = &(&x * &y) + 7;
    let (q, ok) = x.checked_div(&y);
    p.output(&z);
    p.output(&x.max(&y));
    p.output(&x.rotate_left_by(&y));
    p.output(&q);
    p.output(&ok);
    let prog = p.build().unwrap();
    let out = prog
        .run(
            &ClearBackend,
            &[
                clear_word(70_000u32, 32, false).unwrap(),
                clear_word(3u32, 32, false).unwrap(),
            ],
        )
        .unwrap();
    let v = |i: usize| clear_word_value(&out[i], false).unwrap();
    assert_eq!(v(0), BigInt::from(70_000u32.wrapping_mul(3) + 7));
    assert_eq!(v(1), BigInt::from(70_000));
    assert_eq!(v(2), BigInt::from(70_000u32.rotate_left(3)));
    assert_eq!(v(3), BigInt::from(70_000 / 3));
    assert_eq!(v(4), BigInt::from(1));
}

/// Words to signed-binary integers and back, on a set carrying both
/// families, for every 8-bit value (signed and unsigned).
#[test]
fn conversions_with_the_digits_family() {
    use hearth::api::{clear_value, I8, U8};
    use hearth::INSECURE_TEST_DIGITS as D;
    let p = Program::new(&D);
    let u = U8::input(&p);
    let s = I8::input(&p);
    let ui = u.to_int();
    let si = s.to_int();
    let sum = &ui + &si; // exact, no wrap
    p.output(&sum);
    let back = U8::from_int(&sum); // modulo 2^8
    p.output(&back);
    let prog = p.build().unwrap();
    for x in 0..=255u8 {
        for y in [-128i8, -1, 0, 1, 77, 127] {
            let out = prog
                .run(
                    &ClearBackend,
                    &[
                        clear_word(x, 8, false).unwrap(),
                        clear_word(y, 8, true).unwrap(),
                    ],
                )
                .unwrap();
            let exact = x as i64 + y as i64;
            assert_eq!(clear_value(&D, &out[0]), BigInt::from(exact), "{x} + {y}");
            assert_eq!(
                clear_word_value(&out[1], false).unwrap(),
                BigInt::from(x.wrapping_add(y as u8))
            );
        }
    }
}

/// Division by a clear constant folds every gate with a constant input:
/// far fewer bootstraps than by an encrypted divisor (and exact).
#[test]
fn division_by_a_clear_constant_is_cheaper() {
    let pbs = |divisor: Option<u32>| {
        let p = Program::new(&P);
        let x = U32::input(&p);
        let y = match divisor {
            Some(d) => U32::constant(&p, d),
            None => U32::input(&p),
        };
        let (q, r) = x.div_rem(&y);
        p.output(&q);
        p.output(&r);
        let prog = p.build().unwrap();
        let pbs = prog.circuit().stats().pbs;
        if let Some(d) = divisor {
            for v in [0u32, 1, 6, 7, 1000, u32::MAX, 0x8000_0001] {
                let out = prog
                    .run(&ClearBackend, &[clear_word(v, 32, false).unwrap()])
                    .unwrap();
                assert_eq!(clear_word_value(&out[0], false).unwrap(), (v / d).into());
                assert_eq!(clear_word_value(&out[1], false).unwrap(), (v % d).into());
            }
        }
        pbs
    };
    let encrypted = pbs(None);
    for d in [3u32, 7, 1000, 0x7fff_ffff] {
        let clear = pbs(Some(d));
        assert!(
            2 * clear < encrypted,
            "x / {d}: {clear} PBS vs {encrypted} by an encrypted divisor"
        );
    }
}

/// Operations on clear words fold to constants that later gates read
/// exactly (a clear sum once lost its value when its range was assumed).
#[test]
fn clear_words_fold_exactly() {
    for c in [0u32, 1, 5, 0x8000_0000, 0x00ff_ff00, u32::MAX] {
        let p = Program::new(&P);
        let x = U32::input(&p);
        let k = U32::constant(&p, c);
        p.output(&(&k.leading_zeros() ^ &x));
        p.output(&(&k.count_ones() ^ &x));
        p.output(&(&(&k / 7i64) ^ &x));
        p.output(&(&(&k * 805i64) + &x));
        let prog = p.build().unwrap();
        for v in [0u32, 1, 0xdead_beef] {
            let out = prog
                .run(&ClearBackend, &[clear_word(v, 32, false).unwrap()])
                .unwrap();
            let want = [
                c.leading_zeros() ^ v,
                c.count_ones() ^ v,
                (c / 7) ^ v,
                c.wrapping_mul(805).wrapping_add(v),
            ];
            for (o, w) in out.iter().zip(want) {
                assert_eq!(
                    clear_word_value(o, false).unwrap(),
                    w.into(),
                    "c = {c:#x}, x = {v:#x}"
                );
            }
        }
    }
}

/// Word comparisons on DIGITS_128, the key words share with `Int`, where
/// they read three bits per bootstrap (`bits::packed_compare`), and bitwise
/// operations, two bit positions per bootstrap (`bits::bitwise`, tables
/// read past half the ring): encrypted with real parameters, each result
/// against Rust's operators on `i16` and `u16`.
#[test]
fn comparisons_encrypted_on_the_digits_key() {
    use hearth::api::{Bool, I16, U16};
    use hearth::backend::CpuBackend;
    use hearth::DIGITS_128;
    let (client, server) = hearth_testkit::keys::keys(&DIGITS_128);
    let cpu = CpuBackend::new(server, Some(2)).unwrap();
    let p = Program::new(&DIGITS_128);
    p.set_threads(2);
    let (x, y) = (I16::input(&p), I16::input(&p));
    let (u, v) = (U16::input(&p), U16::input(&p));
    let flags: Vec<Bool> = vec![x.lt(&y), x.ge(&y), x.eq(&y), u.gt(&v), u.le(&v), u.ne(&v)];
    for f in &flags {
        p.output(f);
    }
    p.output(&x.max(&y));
    p.output(&u.min(&v));
    p.output(&(&u & &v));
    p.output(&(&u | &v));
    p.output(&(&x ^ &y));
    // Against constants: two OR trees joined (`x > 0` signed, `u > 5`).
    p.output(&I16::constant(&p, 0).lt(&x));
    p.output(&u.gt(&U16::constant(&p, 5)));
    p.output(&x.relu());
    // 4-bit equality: a zero test and the last table (two bootstraps).
    let (e, f) = (Word::<4, false>::input(&p), Word::<4, false>::input(&p));
    p.output(&e.ne(&f));
    p.output(&e.eq(&f));
    let prog = p.build().unwrap();
    for (a, b) in [(i16::MIN, -1i16), (7, 7), (9, 1)] {
        let (c, d) = (a as u16, b as u16);
        let (e, f) = (c & 0xf, d & 0xf);
        let ins = [
            client.encrypt_word_of(a as i64, 16, true).unwrap(),
            client.encrypt_word_of(b as i64, 16, true).unwrap(),
            client.encrypt_word_of(c as i64, 16, false).unwrap(),
            client.encrypt_word_of(d as i64, 16, false).unwrap(),
            client.encrypt_word_of(e as i64, 4, false).unwrap(),
            client.encrypt_word_of(f as i64, 4, false).unwrap(),
        ];
        let out = prog.run_encrypted(&cpu, &ins).unwrap();
        let got: Vec<i64> = out
            .iter()
            .map(|o| i64::try_from(client.decrypt_word_value(o).unwrap()).unwrap())
            .collect();
        let want: Vec<i64> = vec![
            (a < b) as i64,
            (a >= b) as i64,
            (a == b) as i64,
            (c > d) as i64,
            (c <= d) as i64,
            (c != d) as i64,
            a.max(b) as i64,
            c.min(d) as i64,
            (c & d) as i64,
            (c | d) as i64,
            (a ^ b) as i64,
            (0 < a) as i64,
            (c > 5) as i64,
            a.max(0) as i64,
            (e != f) as i64,
            (e == f) as i64,
        ];
        assert_eq!(got, want, "a = {a}, b = {b}");
    }
}

/// Division by a clear zero (Rust's `checked_div` is `None`; the circuit
/// gives all ones and the dividend) feeds every later operation that
/// reads its bits, on both kinds of set (`hearth-bench fuzz-programs` found
/// `count_ones` of `x / 0` refused on a `pi = 5` set, seed 42).
#[test]
fn division_by_a_clear_zero_composes() {
    let sets = [
        &P,
        &hearth::INSECURE_TEST_DIGITS,
        &hearth::DIGITS_128,
        &hearth::GATES_128,
    ];
    for (params, threads) in sets.into_iter().flat_map(|s| [1, 2, 16].map(|t| (s, t))) {
        let p = Program::new(params);
        p.set_threads(threads);
        let x = U32::input(&p);
        let y = U32::input(&p);
        let q = &x / 0i64;
        let r = &x % 0i64;
        p.output(&q.count_ones());
        p.output(&q.leading_zeros());
        p.output(&(&q + &y));
        p.output(&(&q * &y));
        p.output(&q.max(&y));
        p.output(&r.count_ones());
        p.output(&(&r ^ &y));
        let prog = p
            .build()
            .unwrap_or_else(|e| panic!("{}, {threads} threads: {e}", params.name));
        for (a, b) in [
            (0u32, 0u32),
            (1, 2),
            (1_322_714_955, 7),
            (u32::MAX, u32::MAX),
        ] {
            let ins = [
                clear_word(a, 32, false).unwrap(),
                clear_word(b, 32, false).unwrap(),
            ];
            let out = prog.run(&ClearBackend, &ins).unwrap();
            let (q, r) = (u32::MAX, a);
            let want = [
                q.count_ones(),
                q.leading_zeros(),
                q.wrapping_add(b),
                q.wrapping_mul(b),
                q.max(b),
                r.count_ones(),
                r ^ b,
            ];
            for (i, (o, w)) in out.iter().zip(want).enumerate() {
                assert_eq!(
                    clear_word_value(o, false).unwrap(),
                    w.into(),
                    "{}: output {i}, x = {a}, y = {b}",
                    params.name
                );
            }
        }
        // Signed: -1 for a non-negative dividend, 1 for a negative one.
        let p = Program::new(params);
        p.set_threads(threads);
        let x = hearth::api::I32::input(&p);
        let q = &x / 0i64;
        p.output(&q.count_ones());
        p.output(&q);
        p.output(&(&x % 0i64));
        let prog = p.build().unwrap();
        for a in [0i32, 5, -5, i32::MIN, i32::MAX] {
            let out = prog
                .run(&ClearBackend, &[clear_word(a, 32, true).unwrap()])
                .unwrap();
            let q: i32 = if a < 0 { 1 } else { -1 };
            assert_eq!(
                clear_word_value(&out[0], false).unwrap(),
                q.count_ones().into()
            );
            assert_eq!(clear_word_value(&out[1], true).unwrap(), q.into());
            assert_eq!(clear_word_value(&out[2], true).unwrap(), a.into());
        }
    }
}

/// `select(c, t ^ K, t)` (a CRC step) costs only the XORs of `c` into the
/// bits `K` flips (two per bootstrap on a `pi = 5` set), a select between
/// equal bits costs nothing, and `t ^ !t` is clear: every `t` and `c` on
/// 8 bits, against Rust.
#[test]
fn selects_between_a_word_and_its_flipped_bits() {
    for (params, per_bootstrap) in [(&P, 1), (&hearth::INSECURE_TEST_DIGITS, 2)] {
        for k in [0u8, 1, 0x80, 0x07, 0xa5, 0xff] {
            let p = Program::new(params);
            let t = Word::<8, false>::input(&p);
            let c = Word::<8, false>::input(&p);
            let s = c.bit(0);
            p.output(&s.select(&(&t ^ k as i64), &t));
            p.output(&(&t ^ &!&t));
            let prog = p.build().unwrap();
            let pbs = prog.circuit().stats().pbs;
            let flips = k.count_ones() as usize;
            assert!(
                pbs <= flips.div_ceil(per_bootstrap),
                "{}: K = {k:#x}: {pbs} PBS for {flips} flipped bits",
                params.name
            );
            for tv in 0..=255u8 {
                for cv in [0u8, 1, 2, 3] {
                    let out = run(&prog, tv.into(), cv.into(), 8, false);
                    let want = if cv & 1 == 1 { tv ^ k } else { tv };
                    assert_eq!(
                        out,
                        [BigInt::from(want), BigInt::from(255)],
                        "t = {tv}, c = {cv}"
                    );
                }
            }
        }
    }
}

/// A table scan `r = r ^ (k == i).select(v_i, 0)` (or with `|`), as T2's
/// PIR writes it: the equalities of one word with clear indices share
/// their chunk tests, each select is ANDs sharing the hit (two per
/// bootstrap on a `pi = 5` set), and the XORs of exclusive hits are sums,
/// free. Every key of a `u4`, every table of random values, both sets;
/// and scans where a key repeats (hits not exclusive: gates again) or the
/// select's sides are swapped, against plain Rust.
#[test]
fn table_scans_are_exact_and_cheap() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(61);
    for params in [&P, &hearth::INSECURE_TEST_DIGITS] {
        // keys: distinct (0..8), one repeated (3 twice), and the select's
        // sides swapped.
        for (keys, swapped) in [
            (vec![0u8, 1, 2, 3, 4, 5, 6, 7], false),
            (vec![0u8, 3, 5, 3, 9], false),
            (vec![1u8, 2, 7], true),
        ] {
            for xor in [true, false] {
                let p = Program::new(params);
                p.set_threads(2);
                let key = Word::<4, false>::input(&p);
                let db: Vec<Word<4, false>> = keys.iter().map(|_| Word::input(&p)).collect();
                let zero = Word::<4, false>::constant(&p, 0);
                let r = keys.iter().zip(&db).fold(zero.clone(), |r, (&i, v)| {
                    let hit = key.eq(&Word::constant(&p, i as i64));
                    let x = if swapped {
                        hit.select(&zero, v)
                    } else {
                        hit.select(v, &zero)
                    };
                    if xor {
                        &r ^ &x
                    } else {
                        &r | &x
                    }
                });
                p.output(&r);
                let prog = p.build().unwrap();
                let st = prog.circuit().stats();
                if params.pi >= 5 && keys.len() == 8 && !swapped {
                    // 8 equalities on shared 3-bit chunk tests (8 + 1 + 8)
                    // and 8 selects of 4 bits at two ANDs per bootstrap; no
                    // XOR or OR costs anything.
                    assert!(st.pbs <= 17 + 16, "{}: {} PBS", params.name, st.pbs);
                    assert!(st.depth <= 3, "{}: depth {}", params.name, st.depth);
                }
                for _ in 0..3 {
                    let vals: Vec<u8> = keys.iter().map(|_| rng.gen_range(0..16)).collect();
                    for k in 0..16u8 {
                        let want = keys.iter().zip(&vals).fold(0u8, |r, (&i, &v)| {
                            let x = if (k == i) != swapped { v } else { 0 };
                            if xor {
                                r ^ x
                            } else {
                                r | x
                            }
                        });
                        let mut ins = vec![clear_word(k, 4, false).unwrap()];
                        ins.extend(vals.iter().map(|&v| clear_word(v, 4, false).unwrap()));
                        let out = prog.run(&ClearBackend, &ins).unwrap();
                        let got = clear_word_value(&out[0], false).unwrap();
                        assert_eq!(
                            got,
                            BigInt::from(want),
                            "{}: keys {keys:?}, swapped {swapped}, xor {xor}, k = {k}, table {vals:?}",
                            params.name
                        );
                    }
                }
            }
        }
    }
}

/// A select with a clear side is gates of the other side and the
/// condition (`c ? x : 0` an AND, `c ? x : 1` an OR with `!c`, and the
/// mirror images), sharing the condition: every `x`, both conditions,
/// every clear side of 8 bits tried, against Rust.
#[test]
fn selects_with_a_clear_side() {
    for (params, per_bootstrap) in [(&P, 1), (&hearth::INSECURE_TEST_DIGITS, 2)] {
        for k in [0u8, 0xff, 0x5a, 0x01] {
            let p = Program::new(params);
            let x = Word::<8, false>::input(&p);
            let c = Word::<8, false>::input(&p).bit(0);
            let kw = Word::<8, false>::constant(&p, k as i64);
            p.output(&c.select(&x, &kw));
            p.output(&c.select(&kw, &x));
            let prog = p.build().unwrap();
            let pbs = prog.circuit().stats().pbs;
            assert!(
                pbs <= 2 * 8usize.div_ceil(per_bootstrap),
                "{}: K = {k:#x}: {pbs} PBS",
                params.name
            );
            for xv in 0..=255u8 {
                for cv in [0u8, 1] {
                    let out = run(&prog, xv.into(), cv.into(), 8, false);
                    let (a, b) = if cv == 1 { (xv, k) } else { (k, xv) };
                    assert_eq!(
                        out,
                        [BigInt::from(a), BigInt::from(b)],
                        "x = {xv}, c = {cv}"
                    );
                }
            }
        }
    }
}

/// A compare-exchange (`c.select(&y, &x)` and `c.select(&x, &y)`, or
/// `min` and `max`) builds the multiplexers once: the other side of the
/// swap is `x + y` minus the first, bit by bit. Every pair of `u8`s, both
/// sets, against Rust; the pair costs what one select and the
/// comparison cost.
#[test]
fn compare_exchanges_build_one_side() {
    for params in [&P, &hearth::INSECURE_TEST_DIGITS] {
        let cost = |both: bool| {
            let p = Program::new(params);
            p.set_threads(2);
            let x = Word::<8, false>::input(&p);
            let y = Word::<8, false>::input(&p);
            let c = y.lt(&x);
            p.output(&c.select(&y, &x));
            if both {
                p.output(&c.select(&x, &y));
                p.output(&x.min(&y));
                p.output(&x.max(&y));
            }
            p.build().unwrap()
        };
        let (one, prog) = (cost(false), cost(true));
        let (a, b) = (one.circuit().stats().pbs, prog.circuit().stats().pbs);
        // min and max compare `x >= y`, another comparison than `y < x`.
        assert!(
            b <= 2 * a,
            "{}: {b} PBS for the four, {a} for one",
            params.name
        );
        for xv in 0..=255u8 {
            for yv in (0..=255u8).step_by(7) {
                let out = run(&prog, xv.into(), yv.into(), 8, false);
                let (lo, hi) = (xv.min(yv), xv.max(yv));
                let want = [lo, hi, lo, hi].map(BigInt::from);
                assert_eq!(out, want, "{}: x = {xv}, y = {yv}", params.name);
            }
        }
    }
}

/// Sums and differences with clear words, and sums of words whose low
/// bits are clear zeros (an accumulator that starts at 0, a shifted
/// word): the low bits pass through and the adder starts at the first
/// bit that can carry. Every pair of `u8` (a word and a constant, and a
/// word plus another shifted), on both kinds of set, against Rust's
/// wrapping arithmetic; then the costs on the one key.
#[test]
fn sums_with_clear_zeros_add_from_the_first_set_bit() {
    type U8<'p> = Word<'p, 8, false>;
    for params in [&P, &hearth::INSECURE_TEST_DIGITS] {
        for c in 0..=255u8 {
            let p = Program::new(params);
            p.set_threads(2);
            let x = U8::input(&p);
            let y = U8::input(&p);
            let k = U8::constant(&p, c);
            p.output(&(&x + &k));
            p.output(&(&k + &x));
            p.output(&(&x - &k));
            p.output(&(&k - &x));
            p.output(&(&x + &(&y << (c % 8) as u32)));
            p.output(&(&(&x >> (c % 8) as u32) - &(&y << (c % 8) as u32)));
            let prog = p.build().unwrap();
            for v in 0..=255u8 {
                let w = v.rotate_left(3) ^ c;
                let s = (c % 8) as u32;
                let out = prog
                    .run(
                        &ClearBackend,
                        &[
                            clear_word(v, 8, false).unwrap(),
                            clear_word(w, 8, false).unwrap(),
                        ],
                    )
                    .unwrap();
                let want = [
                    v.wrapping_add(c),
                    c.wrapping_add(v),
                    v.wrapping_sub(c),
                    c.wrapping_sub(v),
                    v.wrapping_add(w << s),
                    (v >> s).wrapping_sub(w << s),
                ];
                for (i, (o, want)) in out.iter().zip(want).enumerate() {
                    assert_eq!(
                        clear_word_value(o, false).unwrap(),
                        want.into(),
                        "{}: output {i}, x = {v}, y = {w}, c = {c}",
                        params.name
                    );
                }
            }
        }
    }
    fn pbs(f: impl for<'p> Fn(&'p Program) -> U32<'p>) -> usize {
        let p = Program::new(&hearth::DIGITS_KS32_128);
        p.set_threads(2);
        let r = f(&p);
        p.output(&r);
        p.build().unwrap().circuit().stats().pbs
    }
    assert_eq!(pbs(|p| &U32::constant(p, 0) + &U32::input(p)), 0);
    assert_eq!(pbs(|p| &U32::input(p) + &U32::constant(p, 0)), 0);
    assert_eq!(pbs(|p| &U32::input(p) - &U32::constant(p, 0)), 0);
    let full = pbs(|p| &U32::input(p) + &U32::constant(p, 0x8001));
    let high = pbs(|p| &U32::input(p) + &U32::constant(p, 0x8001_0000u32));
    assert!(2 * high <= full, "x + (c << 16): {high} PBS, x + c: {full}");
    // T2's Jenkins step: the shifted word's low 10 bits are zeros.
    let step = pbs(|p| {
        let h = U32::input(p);
        &h + &(&(&h << 26) >> 16)
    });
    assert!(step <= 12, "h + ((h << 26) >> 16): {step} PBS (was 28)");
}

/// Every ordering, `max` and `min` of an 8-bit word against every clear
/// constant, on both sides, unsigned and signed, on both kinds of set,
/// against Rust (a clear side drops the constant's trailing zeros, reads
/// `x >= 2^j` and `x >= 2^j + 1` as OR trees, and a clear bound of the
/// type as the answer). Then the costs on the one key.
#[test]
fn comparisons_with_a_clear_side() {
    macro_rules! every_constant {
        ($params:expr, $t:ty, $signed:expr) => {
            for k in <$t>::MIN..=<$t>::MAX {
                let p = Program::new($params);
                p.set_threads(2);
                let x = Word::<8, $signed>::input(&p);
                let c = Word::<8, $signed>::constant(&p, k);
                for o in [
                    x.lt(&c),
                    x.le(&c),
                    x.gt(&c),
                    x.ge(&c),
                    c.lt(&x),
                    c.le(&x),
                    c.gt(&x),
                    c.ge(&x),
                    x.eq(&c),
                    c.ne(&x),
                ] {
                    p.output(&o);
                }
                for o in [x.max(&c), c.max(&x), x.min(&c), c.min(&x)] {
                    p.output(&o);
                }
                let prog = p.build().unwrap();
                for v in <$t>::MIN..=<$t>::MAX {
                    let out = prog
                        .run(&ClearBackend, &[clear_word(v, 8, $signed).unwrap()])
                        .unwrap();
                    let want: Vec<BigInt> = [
                        v < k,
                        v <= k,
                        v > k,
                        v >= k,
                        k < v,
                        k <= v,
                        k > v,
                        k >= v,
                        v == k,
                        k != v,
                    ]
                    .map(|b| BigInt::from(b as u8))
                    .into_iter()
                    .chain([v.max(k), k.max(v), v.min(k), k.min(v)].map(BigInt::from))
                    .collect();
                    let got: Vec<BigInt> = out
                        .iter()
                        .zip(prog.output_shapes())
                        .map(|(o, s)| match s {
                            hearth::api::Shape::Word { signed, .. } => {
                                clear_word_value(o, *signed).unwrap()
                            }
                            _ => unreachable!(),
                        })
                        .collect();
                    assert_eq!(got, want, "{}: x = {v}, k = {k}", $params.name);
                }
            }
        };
    }
    for params in [&P, &hearth::INSECURE_TEST_DIGITS] {
        every_constant!(params, u8, false);
        every_constant!(params, i8, true);
    }
    type I32<'p> = hearth::api::I32<'p>;
    fn pbs(f: impl for<'p> Fn(&'p Program) -> hearth::api::Bool<'p>) -> usize {
        let p = Program::new(&hearth::DIGITS_KS32_128);
        p.set_threads(2);
        let r = f(&p);
        p.output(&r);
        p.build().unwrap().circuit().stats().pbs
    }
    let general = pbs(|p| U32::input(p).gt(&U32::constant(p, 0x1234_5677)));
    assert_eq!(pbs(|p| I32::input(p).lt(&I32::constant(p, 0))), 0, "x < 0");
    assert_eq!(pbs(|p| I32::constant(p, 0).gt(&I32::input(p))), 0, "0 > x");
    assert_eq!(pbs(|p| U32::input(p).ge(&U32::constant(p, 0))), 0, "x >= 0");
    for (what, cost) in [
        ("x > 0", pbs(|p| U32::input(p).gt(&U32::constant(p, 0)))),
        (
            "x < 2^16",
            pbs(|p| U32::input(p).lt(&U32::constant(p, 1 << 16))),
        ),
        ("x > 5", pbs(|p| U32::input(p).gt(&U32::constant(p, 5)))),
        ("i32 0 < x", pbs(|p| I32::constant(p, 0).lt(&I32::input(p)))),
    ] {
        assert!(2 * cost <= general, "{what}: {cost} PBS, x > c: {general}");
    }
    let words = |f: &dyn for<'p> Fn(&'p Program) -> I32<'p>| {
        let p = Program::new(&hearth::DIGITS_KS32_128);
        p.set_threads(2);
        let r = f(&p);
        p.output(&r);
        p.build().unwrap().circuit().stats().pbs
    };
    let relu = words(&|p| I32::input(p).relu());
    assert_eq!(words(&|p| I32::constant(p, 0).max(&I32::input(p))), relu);
    assert!(relu <= 16, "relu: {relu} PBS (the select only)");
    assert_eq!(
        words(&|p| I32::constant(p, i32::MIN).max(&I32::input(p))),
        0
    );
    assert_eq!(
        words(&|p| I32::input(p).min(&I32::constant(p, i32::MAX))),
        0
    );
}

/// Equality of 4- and 7-bit words on the one key's rules: the last table
/// reads the single-bit chunk's difference beside the other chunks' zero
/// tests (`bits::packed_compare`). Every pair, unsigned and signed, of
/// fresh words, of a sum (an unrefreshed adder output) and against a
/// constant, against Rust; then the costs.
#[test]
fn equality_of_narrow_words() {
    fn every_pair<const B: usize, const S: bool>(params: &'static hearth::ParameterSet) {
        let p = Program::new(params);
        p.set_threads(2);
        let x = Word::<B, S>::input(&p);
        let y = Word::<B, S>::input(&p);
        let s = &x + &y;
        let k = Word::<B, S>::constant(&p, 5);
        for o in [x.eq(&y), x.ne(&y), s.eq(&x), s.ne(&y), x.ne(&k)] {
            p.output(&o);
        }
        let prog = p.build().unwrap();
        let (lo, hi) = if S {
            (-(1i64 << (B - 1)), (1i64 << (B - 1)) - 1)
        } else {
            (0, (1i64 << B) - 1)
        };
        let wrap = |v: i64| {
            let m = 1i64 << B;
            let r = v.rem_euclid(m);
            if S && r > hi {
                r - m
            } else {
                r
            }
        };
        for xv in lo..=hi {
            for yv in lo..=hi {
                let sv = wrap(xv + yv);
                let want = [xv == yv, xv != yv, sv == xv, sv != yv, xv != 5]
                    .map(|t| BigInt::from(t as u8));
                let got = run(&prog, xv.into(), yv.into(), B, S);
                assert_eq!(got, want, "{} u{B} {S}: x = {xv}, y = {yv}", params.name);
            }
        }
    }
    for params in [&hearth::INSECURE_TEST_DIGITS, &hearth::DIGITS_128] {
        every_pair::<4, false>(params);
        every_pair::<4, true>(params);
        every_pair::<7, false>(params);
        every_pair::<7, true>(params);
    }
    fn cost<const B: usize>() -> usize {
        let p = Program::new(&hearth::DIGITS_KS32_128);
        p.set_threads(2);
        let (x, y) = (Word::<B, false>::input(&p), Word::<B, false>::input(&p));
        p.output(&x.ne(&y));
        p.build().unwrap().circuit().stats().pbs
    }
    assert_eq!(cost::<4>(), 2, "u4 ne (two zero tests and the count: 3)");
    assert_eq!(cost::<7>(), 3, "u7 ne (4)");
}

/// Products on the one key's rules pair two partial products per
/// rotation where they share an operand, and the rows with an odd number
/// of products pair their left-over product across rows (sharing `x`'s
/// first encrypted bit). Every pair of `u8`, `i8` and `u4`, `u8`
/// operands widened to 16 bits (clear zeros on top), and squares (rows of
/// `x_i x_j`, `i < j`), against Rust on
/// INSECURE_TEST_DIGITS and DIGITS_128's rules; then the count of the
/// wrapping 32-bit product, tfhe-rs's 440.
#[test]
fn products_pair_the_odd_rows() {
    for params in [&hearth::INSECURE_TEST_DIGITS, &hearth::DIGITS_128] {
        let p = Program::new(params);
        p.set_threads(2);
        let (x, y) = (Word::<8, false>::input(&p), Word::<8, false>::input(&p));
        p.output(&(&x * &y));
        p.output(&(&x.cast::<16, false>() * &y.cast::<16, false>()));
        let (xs, ys) = (x.cast::<8, true>(), y.cast::<8, true>());
        p.output(&(&xs * &ys).cast::<8, false>());
        let (xn, yn) = (x.cast::<4, false>(), y.cast::<4, false>());
        p.output(&(&xn * &yn).cast::<8, false>());
        // Squares: the products `x_i x_j` (i < j) by rows of the same kind.
        p.output(&(&x * &x));
        let xw = x.cast::<16, false>();
        p.output(&(&xw * &xw));
        let prog = p.build().unwrap();
        for a in 0..=255u8 {
            for c in 0..=255u8 {
                let out = prog
                    .run(
                        &ClearBackend,
                        &[
                            clear_word(a, 8, false).unwrap(),
                            clear_word(c, 8, false).unwrap(),
                        ],
                    )
                    .unwrap();
                let want: [u64; 6] = [
                    a.wrapping_mul(c) as u64,
                    a as u64 * c as u64,
                    (a as i8).wrapping_mul(c as i8) as u8 as u64,
                    (((a & 15) * (c & 15)) & 15) as u64,
                    a.wrapping_mul(a) as u64,
                    a as u64 * a as u64,
                ];
                for (i, (o, w)) in out.iter().zip(want).enumerate() {
                    assert_eq!(
                        clear_word_value(o, false).unwrap(),
                        w.into(),
                        "{}: output {i}, x = {a}, y = {c}",
                        params.name
                    );
                }
            }
        }
    }
    let p = Program::new(&hearth::DIGITS_KS32_128);
    p.set_threads(2);
    p.output(&(&U32::input(&p) * &U32::input(&p)));
    let pbs = p.build().unwrap().circuit().stats().pbs;
    assert!(
        pbs <= 440,
        "wrapping u32 product: {pbs} bootstraps (448 before)"
    );
}
