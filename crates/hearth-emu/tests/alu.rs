//! hearth-emu's ALU words ([`hearth_emu::alu::ArmWord`]: NZCV flags and
//! bit fields) on the clear backend against Rust's integers and ARM's
//! rules: every pair of 8-bit operands, random pairs at 16, 32, 64 and 128
//! bits, a `pi = 5` set, and encrypted on `GATES_128`.

use hearth::api::{clear_word, clear_word_value, CompiledProgram, Program, Shape, Word};
use hearth::backend::ClearBackend;
use hearth::INSECURE_TEST_BITS as P;
use hearth_emu::alu::ArmWord;
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};

/// Every ALU operation on two inputs of one word type, in one program
/// (outputs in the order of `expected!` below).
fn program_on<const B: usize, const S: bool>(
    params: &'static hearth::ParameterSet,
) -> CompiledProgram {
    let p = Program::new(params);
    p.set_threads(2);
    let x = Word::<B, S>::input(&p);
    let y = Word::<B, S>::input(&p);
    for o in [
        x.field_extract(1, 3),
        x.field_insert(&y, 2, 3),
        x.field_clear(1, 2),
    ] {
        p.output(&o);
    }
    let (v, f) = x.add_with_flags(&y);
    p.output(&v);
    for flag in [&f.n, &f.z, &f.c, &f.v] {
        p.output(flag);
    }
    let (v, f) = x.sub_with_flags(&y);
    p.output(&v);
    for flag in [&f.n, &f.z, &f.c, &f.v] {
        p.output(flag);
    }
    let (n, z) = x.nz();
    p.output(&n);
    p.output(&z);
    // ADCS with the carry x's bit 0, SBCS (x + !y + C) with y's bit 1.
    for (rhs, carry) in [(y.clone(), x.bit(0)), (!&y, y.bit(1))] {
        let (v, f) = x.add_with_carry(&rhs, &carry);
        p.output(&v);
        for flag in [&f.n, &f.z, &f.c, &f.v] {
            p.output(flag);
        }
    }
    p.build().unwrap()
}

/// Rust's results, as values of each output's type (`u128` / `i128`).
macro_rules! expected {
    ($t:ty, $u:ty, $x:expr, $y:expr) => {{
        let (x, y): ($t, $t) = ($x, $y);
        let bits = <$t>::BITS;
        let mut v: Vec<i128> = vec![
            {
                let f = ((x as $u) >> 1) & 0b111;
                let f = f as $t;
                // Extended by the type's signedness from 3 bits.
                if (<$t>::MIN as i128) < 0 && f & 0b100 != 0 {
                    (f | !0b111) as i128
                } else {
                    f as i128
                }
            },
            ((x & !(0b111 << 2)) | ((y & 0b111) << 2)) as i128,
            (x & !(0b11 << 1)) as i128,
        ];
        let top = |r: $u| (r >> (bits - 1)) & 1;
        let nzcv =
            |r: $u, c: bool, ov: bool| [top(r) as i128, (r == 0) as i128, c as i128, ov as i128];
        let (ux, uy) = (x as $u, y as $u);
        let (s, c) = ux.overflowing_add(uy);
        v.push(s as $t as i128);
        v.extend(nzcv(s, c, top(ux) == top(uy) && top(s) != top(ux)));
        let (d, borrow) = ux.overflowing_sub(uy);
        v.push(d as $t as i128);
        v.extend(nzcv(d, !borrow, top(ux) != top(uy) && top(d) != top(ux)));
        v.push(top(x as $u) as i128);
        v.push((x == 0) as i128);
        // x + b + cin: the carry out of either addition, signed overflow
        // when the operands' signs agree and the result's differs.
        for (b, cin) in [(uy, ux & 1 == 1), (!uy, (uy >> 1) & 1 == 1)] {
            let (s1, c1) = ux.overflowing_add(b);
            let (s, c2) = s1.overflowing_add(cin as $u);
            v.push(s as $t as i128);
            v.extend(nzcv(s, c1 || c2, top(ux) == top(b) && top(s) != top(ux)));
        }
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
            Shape::Word { signed, .. } => clear_word_value(o, *signed).unwrap(),
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
            Shape::Word { bits, signed } => {
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
            let prog = program_on::<$bits, $signed>(&P);
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
            let prog = program_on::<$bits, $signed>(&P);
            let mut rng = rand::rngs::StdRng::seed_from_u64($bits);
            let mut pairs: Vec<($t, $t)> = vec![
                (0, 0),
                (<$t>::MAX, <$t>::MAX),
                (<$t>::MIN, (0 as $t).wrapping_sub(1)),
                (<$t>::MAX, 1),
                (5, 0),
            ];
            pairs.extend((0..60).map(|_| (rng.gen(), rng.gen())));
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
check!(i8_every_pair, 8, true, i8, u8, exhaustive);
check!(u16_random, 16, false, u16, u16, random);
check!(i16_random, 16, true, i16, u16, random);
check!(u32_random, 32, false, u32, u32, random);
check!(i32_random, 32, true, i32, u32, random);
check!(u64_random, 64, false, u64, u64, random);
check!(i64_random, 64, true, i64, u64, random);
check!(u128_random, 128, false, u128, u128, random);
check!(i128_random, 128, true, i128, u128, random);

/// The same operations on a `pi = 5` set (other gate forms), for random
/// 16-bit pairs.
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
}

/// Every operation encrypted on GATES_128 (release mode): each output
/// decrypts to the clear backend's bits, for a few 8-bit operand pairs.
#[test]
fn every_operation_encrypted_equals_the_clear_backend() {
    use hearth::backend::CpuBackend;
    use hearth::{ClientKey, GATES_128};
    use hearth_testkit::word_programs::encrypted_equals_clear;
    let client = ClientKey::generate(&GATES_128);
    let server = client.server_key();
    let cpu = CpuBackend::new(&server, None).unwrap();
    for (signed, pairs) in [
        (false, vec![(200i64, 3i64), (7, 0)]),
        (true, vec![(-128, -1)]),
    ] {
        let prog = if signed {
            program_on::<8, true>(&GATES_128)
        } else {
            program_on::<8, false>(&GATES_128)
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
            encrypted_equals_clear(&client, &cpu, &prog, &enc, &words)
                .unwrap_or_else(|e| panic!("x = {x}, y = {y}, signed = {signed}: {e}"));
        }
    }
}

/// Operands of another program are an error for `build`, not a panic.
#[test]
fn operands_of_another_program_are_refused() {
    let (p, q) = (Program::new(&P), Program::new(&P));
    let x = Word::<8, false>::input(&p);
    let y = Word::<8, false>::input(&q);
    let (s, f) = x.add_with_carry(&x, &y.bit(0));
    p.output(&s);
    p.output(&f.c);
    assert!(p.build().is_err());
    let p = Program::new(&P);
    let x = Word::<8, false>::input(&p);
    p.output(&x.field_insert(&y, 0, 4));
    let e = p.build().expect_err("a foreign operand");
    assert!(e.to_string().contains("another program"), "{e}");
}
