//! Signed-binary integer algorithms on the clear backend, against plain
//! integer arithmetic: exhaustive for all digit strings of up to 4 digits
//! (every representation, so negative values and redundancy included,
//! unequal lengths included), random for long widths.

use hearth::backend::{Backend, ClearBackend};
use hearth::circuit::CircuitBuilder;
use hearth::digits::{self, value_of, Digits};
use hearth::{Circuit, Error, INSECURE_TEST_DIGITS as P};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};

type BinOp = fn(&mut CircuitBuilder, &Digits, &Digits) -> Result<Digits, Error>;
type Reference = fn(&BigInt, &BigInt) -> BigInt;

/// Every digit string of length `n`, little-endian.
fn all_strings(n: usize) -> Vec<Vec<i64>> {
    (0..3usize.pow(n as u32))
        .map(|mut k| {
            (0..n)
                .map(|_| {
                    let d = (k % 3) as i64 - 1;
                    k /= 3;
                    d
                })
                .collect()
        })
        .collect()
}

fn residues(d: &[i64]) -> Vec<u64> {
    d.iter().map(|&v| v.rem_euclid(32) as u64).collect()
}

/// Runs `circuit` on clear digits and decodes its outputs as one integer.
fn run(circuit: &Circuit, inputs: &[u64]) -> BigInt {
    let out = ClearBackend.evaluate(circuit, inputs).unwrap();
    let signed: Vec<i64> = out
        .iter()
        .map(|&v| {
            let s = if v >= 16 { v as i64 - 32 } else { v as i64 };
            assert!((-1..=1).contains(&s), "output digit {s} is not a digit");
            s
        })
        .collect();
    value_of(&signed)
}

fn binary_circuit(op: BinOp, lx: usize, ly: usize) -> Circuit {
    let mut b = CircuitBuilder::new(&P);
    let x = Digits::input(&mut b, lx).unwrap();
    let y = Digits::input(&mut b, ly).unwrap();
    let z = op(&mut b, &x, &y).unwrap();
    z.output(&mut b).unwrap();
    b.build()
}

fn exhaustive(op: BinOp, reference: fn(&BigInt, &BigInt) -> BigInt) {
    for lx in 1..=4 {
        for ly in 1..=4 {
            let c = binary_circuit(op, lx, ly);
            for dx in all_strings(lx) {
                for dy in all_strings(ly) {
                    let mut inputs = residues(&dx);
                    inputs.extend(residues(&dy));
                    let (x, y) = (value_of(&dx), value_of(&dy));
                    assert_eq!(run(&c, &inputs), reference(&x, &y), "x {dx:?} y {dy:?}");
                }
            }
        }
    }
}

fn random_digits(rng: &mut impl Rng, n: usize) -> Vec<i64> {
    (0..n).map(|_| rng.gen_range(-1..=1)).collect()
}

/// Every digit string of length `n` if `n <= exhaustive_up_to`, else
/// `random` random ones.
fn cases(n: usize, exhaustive_up_to: usize, random: usize, rng: &mut impl Rng) -> Vec<Vec<i64>> {
    if n <= exhaustive_up_to {
        all_strings(n)
    } else {
        (0..random).map(|_| random_digits(rng, n)).collect()
    }
}

fn randomized(
    op: BinOp,
    reference: fn(&BigInt, &BigInt) -> BigInt,
    widths: &[usize],
    cases: usize,
) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    for &n in widths {
        let c = binary_circuit(op, n, n);
        for _ in 0..cases {
            let (dx, dy) = (random_digits(&mut rng, n), random_digits(&mut rng, n));
            let mut inputs = residues(&dx);
            inputs.extend(residues(&dy));
            let (x, y) = (value_of(&dx), value_of(&dy));
            assert_eq!(run(&c, &inputs), reference(&x, &y), "{n} digits");
        }
    }
}

const WIDTHS: [usize; 5] = [8, 16, 32, 64, 128];

#[test]
fn add_exhaustive_and_random() {
    exhaustive(digits::add, |x, y| x + y);
    randomized(digits::add, |x, y| x + y, &WIDTHS, 1000);
}

#[test]
fn sub_exhaustive_and_random() {
    exhaustive(digits::sub, |x, y| x - y);
    randomized(digits::sub, |x, y| x - y, &WIDTHS, 1000);
}

#[test]
fn sum_of_many_operands() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for (count, n) in [(2, 4), (3, 3), (5, 8), (9, 16), (17, 32), (40, 12)] {
        let mut b = CircuitBuilder::new(&P);
        let terms: Vec<Digits> = (0..count)
            .map(|_| Digits::input(&mut b, n).unwrap())
            .collect();
        let s = digits::sum(&mut b, &terms).unwrap();
        s.output(&mut b).unwrap();
        let c = b.build();
        for _ in 0..200 {
            let ds: Vec<Vec<i64>> = (0..count).map(|_| random_digits(&mut rng, n)).collect();
            let inputs: Vec<u64> = ds.iter().flat_map(|d| residues(d)).collect();
            let want: BigInt = ds.iter().map(|d| value_of(d)).sum();
            assert_eq!(run(&c, &inputs), want, "{count} x {n}");
        }
    }
}

#[test]
fn add_costs_at_most_parmesan() {
    // PARMESAN Table 5: n-bit addition, depth 2, 2n bootstraps.
    for n in [4, 8, 16, 32] {
        let st = binary_circuit(digits::add, n, n).stats();
        assert!(st.depth <= 2 && st.pbs <= 2 * n, "{n}: {st:?}");
    }
    // Adding a trivial constant costs only where the constant has digits.
    let mut b = CircuitBuilder::new(&P);
    let x = Digits::input(&mut b, 16).unwrap();
    let z = digits::add_const(&mut b, &x, &BigInt::from(1u32 << 12)).unwrap();
    z.output(&mut b).unwrap();
    assert!(b.build().stats().pbs <= 2 * 4 + 2);
}

use hearth::digits::MulAlgorithm;

fn mul_with(algo: MulAlgorithm) -> BinOp {
    match algo {
        MulAlgorithm::Schoolbook => |b, x, y| digits::mul(b, x, y, MulAlgorithm::Schoolbook),
        MulAlgorithm::Karatsuba => |b, x, y| digits::mul(b, x, y, MulAlgorithm::Karatsuba),
        MulAlgorithm::Counters => |b, x, y| digits::mul(b, x, y, MulAlgorithm::Counters),
        MulAlgorithm::Auto => |b, x, y| digits::mul(b, x, y, MulAlgorithm::Auto),
    }
}

const ALGOS: [MulAlgorithm; 4] = [
    MulAlgorithm::Schoolbook,
    MulAlgorithm::Karatsuba,
    MulAlgorithm::Counters,
    MulAlgorithm::Auto,
];

#[test]
fn mul_exhaustive_every_algorithm() {
    for algo in ALGOS {
        exhaustive(mul_with(algo), |x, y| x * y);
    }
}

#[test]
fn mul_random_widths() {
    randomized(mul_with(MulAlgorithm::Auto), |x, y| x * y, &WIDTHS, 1000);
    randomized(
        mul_with(MulAlgorithm::Karatsuba),
        |x, y| x * y,
        &[16, 33],
        300,
    );
    randomized(mul_with(MulAlgorithm::Schoolbook), |x, y| x * y, &[16], 300);
}

#[test]
fn square_exhaustive_and_random() {
    for algo in [
        MulAlgorithm::Counters,
        MulAlgorithm::Karatsuba,
        MulAlgorithm::Auto,
    ] {
        let op: BinOp = match algo {
            MulAlgorithm::Counters => |b, x, _| digits::square(b, x, MulAlgorithm::Counters),
            MulAlgorithm::Karatsuba => |b, x, _| digits::square(b, x, MulAlgorithm::Karatsuba),
            _ => |b, x, _| digits::square(b, x, MulAlgorithm::Auto),
        };
        exhaustive(op, |x, _| x * x);
        randomized(op, |x, _| x * x, &[8, 16, 32], 300);
    }
    {
        let op: BinOp = |b, x, _| digits::square(b, x, MulAlgorithm::Auto);
        randomized(op, |x, _| x * x, &WIDTHS, 1000);
    }
}

use hearth::digits::{Comparison, ScalarAlgorithm};
use num_traits::Signed;

fn signed_out(circuit: &Circuit, inputs: &[u64]) -> Vec<i64> {
    ClearBackend
        .evaluate(circuit, inputs)
        .unwrap()
        .iter()
        .map(|&v| if v >= 16 { v as i64 - 32 } else { v as i64 })
        .collect()
}

fn sgn(v: &BigInt) -> i64 {
    if v.is_negative() {
        -1
    } else if v.is_positive() {
        1
    } else {
        0
    }
}

/// Unary ops returning digits, over all strings of 1..=6 digits and random wide ones.
fn unary(
    op: fn(&mut CircuitBuilder, &Digits) -> Result<Digits, Error>,
    reference: fn(&BigInt) -> BigInt,
) {
    let check =
        |c: &Circuit, d: &[i64]| assert_eq!(run(c, &residues(d)), reference(&value_of(d)), "{d:?}");
    for n in 1..=6 {
        let mut b = CircuitBuilder::new(&P);
        let x = Digits::input(&mut b, n).unwrap();
        op(&mut b, &x).unwrap().output(&mut b).unwrap();
        let c = b.build();
        for d in all_strings(n) {
            check(&c, &d);
        }
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for n in WIDTHS {
        let mut b = CircuitBuilder::new(&P);
        let x = Digits::input(&mut b, n).unwrap();
        op(&mut b, &x).unwrap().output(&mut b).unwrap();
        let c = b.build();
        for _ in 0..1000 {
            check(&c, &random_digits(&mut rng, n));
        }
    }
}

#[test]
fn signum_and_comparisons() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for n in (1..=6).chain(WIDTHS) {
        let mut b = CircuitBuilder::new(&P);
        let x = Digits::input(&mut b, n).unwrap();
        let s = digits::signum(&mut b, &x).unwrap();
        b.output(s).unwrap();
        let c = b.build();
        let cases: Vec<Vec<i64>> = if n <= 6 {
            all_strings(n)
        } else {
            // Mostly-zero strings too, so the sign hides deep.
            (0..1000)
                .map(|k| {
                    let mut d = vec![0; n];
                    for _ in 0..(k % 4) {
                        d[rng.gen_range(0..n)] = rng.gen_range(-1..=1);
                    }
                    if k % 2 == 0 {
                        d = random_digits(&mut rng, n);
                    }
                    d
                })
                .collect()
        };
        for d in cases {
            assert_eq!(
                signed_out(&c, &residues(&d)),
                vec![sgn(&value_of(&d))],
                "{d:?}"
            );
        }
    }
    for op in Comparison::ALL {
        let f: BinOp = match op {
            Comparison::Lt => |b, x, y| cmp_digit(b, x, y, Comparison::Lt),
            Comparison::Le => |b, x, y| cmp_digit(b, x, y, Comparison::Le),
            Comparison::Gt => |b, x, y| cmp_digit(b, x, y, Comparison::Gt),
            Comparison::Ge => |b, x, y| cmp_digit(b, x, y, Comparison::Ge),
            Comparison::Eq => |b, x, y| cmp_digit(b, x, y, Comparison::Eq),
            Comparison::Ne => |b, x, y| cmp_digit(b, x, y, Comparison::Ne),
        };
        let reference: fn(&BigInt, &BigInt) -> BigInt = match op {
            Comparison::Lt => |x, y| BigInt::from((x < y) as i64),
            Comparison::Le => |x, y| BigInt::from((x <= y) as i64),
            Comparison::Gt => |x, y| BigInt::from((x > y) as i64),
            Comparison::Ge => |x, y| BigInt::from((x >= y) as i64),
            Comparison::Eq => |x, y| BigInt::from((x == y) as i64),
            Comparison::Ne => |x, y| BigInt::from((x != y) as i64),
        };
        exhaustive(f, reference);
        randomized(f, reference, &WIDTHS, 1000);
    }
}

fn cmp_digit(
    b: &mut CircuitBuilder,
    x: &Digits,
    y: &Digits,
    op: Comparison,
) -> Result<Digits, Error> {
    let w = digits::compare(b, x, y, op)?;
    Digits::from_wires(b, vec![w])
}

#[test]
fn max_min_relu_abs() {
    exhaustive(digits::max, |x, y| x.max(y).clone());
    randomized(digits::max, |x, y| x.max(y).clone(), &WIDTHS, 1000);
    exhaustive(digits::min, |x, y| x.min(y).clone());
    randomized(digits::min, |x, y| x.min(y).clone(), &WIDTHS, 1000);
    unary(digits::relu, |x| x.max(&BigInt::from(0)).clone());
    unary(digits::abs, |x| x.abs());
}

fn round_reference(x: &BigInt, i: usize) -> BigInt {
    // floor((x + 2^(i-1)) / 2^i) * 2^i, halves up.
    if i == 0 {
        return x.clone();
    }
    let m = BigInt::from(1) << i;
    let t = x + (BigInt::from(1) << (i - 1));
    let q = num_integer_floor(&t, &m);
    q * m
}

fn num_integer_floor(a: &BigInt, m: &BigInt) -> BigInt {
    let q = a / m;
    if a.is_negative() && (a % m) != BigInt::from(0) {
        q - 1
    } else {
        q
    }
}

#[test]
fn round_at_every_position() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    for n in (1..=6).chain(WIDTHS) {
        // Every position on short strings; on long ones the edges and a few
        // in between, 1 000 cases in all.
        let positions: Vec<usize> = if n <= 6 {
            (0..=n + 1).collect()
        } else {
            vec![0, 1, 2, 5, n / 2, n - 1, n, n + 1]
        };
        let per = 1000usize.div_ceil(positions.len());
        for i in positions {
            let mut b = CircuitBuilder::new(&P);
            let x = Digits::input(&mut b, n).unwrap();
            digits::round(&mut b, &x, i)
                .unwrap()
                .output(&mut b)
                .unwrap();
            let c = b.build();
            let cases = cases(n, 6, per, &mut rng);
            for d in cases {
                assert_eq!(
                    run(&c, &residues(&d)),
                    round_reference(&value_of(&d), i),
                    "{d:?} at {i}"
                );
            }
        }
    }
}

#[test]
fn scalar_mul_by_many_constants() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut ks: Vec<BigInt> = [
        0i64,
        1,
        -1,
        2,
        3,
        805,
        3195,
        4095,
        4096,
        4097,
        -805,
        12345,
        -999_999,
        950_048_719_935,
    ]
    .iter()
    .map(|&k| BigInt::from(k))
    .collect();
    ks.push((BigInt::from(1) << 200u32) - 12345);
    ks.push(BigInt::from(7) - (BigInt::from(3) << 90u32));
    for _ in 0..20 {
        ks.push(BigInt::from(rng.gen_range(-(1i64 << 40)..(1i64 << 40))));
    }
    for k in &ks {
        for n in [1usize, 3, 8, 16] {
            for algo in [
                ScalarAlgorithm::Chains,
                ScalarAlgorithm::Direct,
                ScalarAlgorithm::Auto,
            ] {
                let mut b = CircuitBuilder::new(&P);
                let x = Digits::input(&mut b, n).unwrap();
                digits::scalar_mul_with(&mut b, &x, k, algo)
                    .unwrap()
                    .output(&mut b)
                    .unwrap();
                let c = b.build();
                let cases = cases(n, 3, 100, &mut rng);
                for d in cases {
                    assert_eq!(
                        run(&c, &residues(&d)),
                        k * value_of(&d),
                        "k {k} x {d:?} {algo:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn two_complement_conversion_round_trips() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    for n in (1..=6).chain(WIDTHS) {
        let mut b = CircuitBuilder::new(&P);
        let x = Digits::input(&mut b, n).unwrap();
        let bits = digits::to_bits(&mut b, &x).unwrap();
        for &w in &bits {
            b.output(w).unwrap();
        }
        let back = digits::from_bits(&mut b, &bits).unwrap();
        back.output(&mut b).unwrap();
        let c = b.build();
        let cases = cases(n, 6, 1000, &mut rng);
        for d in cases {
            let out = signed_out(&c, &residues(&d));
            let (bits, digits_back) = out.split_at(n + 1);
            let v = value_of(&d);
            // Two's complement of width n + 1.
            let modulus = BigInt::from(1) << (n + 1);
            let want = ((&v % &modulus) + &modulus) % &modulus;
            let got = bits.iter().rev().fold(BigInt::from(0), |a, &bit| {
                assert!(bit == 0 || bit == 1);
                (a << 1) + bit
            });
            assert_eq!(got, want, "{d:?}");
            assert_eq!(value_of(digits_back), v);
        }
    }
}

#[test]
fn scalar_mul_random_at_every_width() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(19);
    let ks: Vec<BigInt> = vec![
        BigInt::from(805),
        BigInt::from(-4095),
        BigInt::from(rng.gen_range(1i64 << 50..1i64 << 60)),
        (BigInt::from(1) << 130u32) + BigInt::from(rng.gen_range(0..1i64 << 40)),
        BigInt::from(-3195),
    ];
    for n in WIDTHS {
        for k in &ks {
            let mut b = CircuitBuilder::new(&P);
            let x = Digits::input(&mut b, n).unwrap();
            digits::scalar_mul(&mut b, &x, k)
                .unwrap()
                .output(&mut b)
                .unwrap();
            let c = b.build();
            for _ in 0..200 {
                let d = random_digits(&mut rng, n);
                assert_eq!(
                    run(&c, &residues(&d)),
                    k * value_of(&d),
                    "k {k}, {n} digits"
                );
            }
        }
    }
}

#[test]
fn operations_at_256_digits() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(23);
    let ops: [(BinOp, Reference, usize); 5] = [
        (digits::add, |x, y| x + y, 50),
        (digits::sub, |x, y| x - y, 50),
        (mul_with(MulAlgorithm::Counters), |x, y| x * y, 5),
        (digits::max, |x, y| x.max(y).clone(), 50),
        (
            |b, x, y| cmp_digit(b, x, y, Comparison::Lt),
            |x, y| BigInt::from((x < y) as i64),
            50,
        ),
    ];
    for (op, reference, count) in ops {
        let c = binary_circuit(op, 256, 256);
        for _ in 0..count {
            let (dx, dy) = (random_digits(&mut rng, 256), random_digits(&mut rng, 256));
            let mut inputs = residues(&dx);
            inputs.extend(residues(&dy));
            assert_eq!(run(&c, &inputs), reference(&value_of(&dx), &value_of(&dy)));
        }
    }
}

/// Conversion and wrapping when the builder knows more about the digits:
/// bits already (low digits in [0, 1], top in [-1, 0], as `wrap` leaves
/// them), some digits known non-negative, clear constants among them, and
/// every target width below, at and above the length.
#[test]
fn to_bits_and_wrap_use_tracked_ranges() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(29);
    // Per digit: 0 = any, 1 = in [0, 1], 2 = in [-1, 0], 3 = clear constant.
    let kinds_of = |rng: &mut rand::rngs::StdRng, n: usize, style: usize| -> Vec<usize> {
        (0..n)
            .map(|i| match style {
                0 if i + 1 == n => 2,
                0 => 1,
                1 => rng.gen_range(0..4),
                _ => [0, 1, 1, 1, 3][rng.gen_range(0..5)],
            })
            .collect()
    };
    for n in (1..=9).chain([16, 17, 32, 33]) {
        for style in 0..3 {
            let kinds = kinds_of(&mut rng, n, style);
            let consts: Vec<i64> = (0..n).map(|_| rng.gen_range(-1..=1)).collect();
            let mut b = CircuitBuilder::new(&P);
            let mut wires = Vec::new();
            for (i, &k) in kinds.iter().enumerate() {
                wires.push(match k {
                    0 => b.input(-1, 1).unwrap(),
                    1 => b.input(0, 1).unwrap(),
                    2 => b.input(-1, 0).unwrap(),
                    _ => b.constant(consts[i]),
                });
            }
            let x = Digits::from_wires(&b, wires).unwrap();
            let bits = digits::to_bits(&mut b, &x).unwrap();
            for &w in &bits {
                b.output(w).unwrap();
            }
            let widths = [1, n.saturating_sub(1).max(1), n, n + 3];
            for &m in &widths {
                digits::wrap(&mut b, &x, m).unwrap().output(&mut b).unwrap();
            }
            let c = b.build();
            for _ in 0..300 {
                let d: Vec<i64> = kinds
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| match k {
                        0 => rng.gen_range(-1..=1),
                        1 => rng.gen_range(0..=1),
                        2 => rng.gen_range(-1..=0),
                        _ => consts[i],
                    })
                    .collect();
                let inputs: Vec<u64> = kinds
                    .iter()
                    .zip(&d)
                    .filter(|(&k, _)| k != 3)
                    .map(|(_, &v)| v.rem_euclid(32) as u64)
                    .collect();
                let out = signed_out(&c, &inputs);
                let v = value_of(&d);
                let modulus = BigInt::from(1) << (n + 1);
                let want = ((&v % &modulus) + &modulus) % &modulus;
                let got = out[..n + 1].iter().rev().fold(BigInt::from(0), |a, &bit| {
                    assert!(bit == 0 || bit == 1, "{kinds:?} {d:?}");
                    (a << 1) + bit
                });
                assert_eq!(got, want, "to_bits, kinds {kinds:?}, digits {d:?}");
                let mut at = n + 1;
                for &m in &widths {
                    let w = &out[at..at + m];
                    at += m;
                    let half = BigInt::from(1) << (m - 1);
                    let full = BigInt::from(1) << m;
                    let want = ((&v + &half) % &full + &full) % &full - &half;
                    assert!(w[..m - 1].iter().all(|&t| t == 0 || t == 1));
                    assert!(w[m - 1] == 0 || w[m - 1] == -1);
                    assert_eq!(
                        value_of(w),
                        want,
                        "wrap to {m}, kinds {kinds:?}, digits {d:?}"
                    );
                }
            }
        }
    }
}

/// `v` as `n`-bit two's complement.
fn wrapped(v: &BigInt, n: usize) -> BigInt {
    let full = BigInt::from(1) << n;
    let half = BigInt::from(1) << (n - 1);
    ((v + &half) % &full + &full) % &full - half
}

/// `square_wrapping` against `x * x` wrapped to `n` bits: every digit
/// string of up to 4 digits at every width up to 9, random operands of
/// 5 to 64 digits at widths below, at and above their length, and
/// operands that are bits already; and at 32 bits it costs at most 60 %
/// of the bootstraps of `mul_wrapping` on the same operand twice.
#[test]
fn square_wrapping_matches_wrapped_squares() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(37);
    let mut shapes: Vec<(usize, usize, bool)> = Vec::new();
    for l in 1..=4 {
        for n in 1..=9 {
            shapes.push((l, n, false));
        }
    }
    for l in [5, 8, 16, 32, 33, 64] {
        for n in [l, l + 3, (l / 2).max(1), 7] {
            shapes.push((l, n, false));
            shapes.push((l, n, true));
        }
    }
    for (l, n, pre_wrapped) in shapes {
        let mut b = CircuitBuilder::new(&P);
        let mut x = Digits::input(&mut b, l).unwrap();
        if pre_wrapped {
            x = digits::wrap(&mut b, &x, l).unwrap();
        }
        digits::square_wrapping(&mut b, &x, n)
            .unwrap()
            .output(&mut b)
            .unwrap();
        let c = b.build();
        let cases: Vec<Vec<i64>> = if l <= 4 {
            all_strings(l)
        } else {
            (0..100).map(|_| random_digits(&mut rng, l)).collect()
        };
        for dx in cases {
            let v = value_of(&dx);
            let v = if pre_wrapped { wrapped(&v, l) } else { v };
            let out = signed_out(&c, &residues(&dx));
            assert_eq!(out.len(), n);
            assert!(out[..n - 1].iter().all(|&t| t == 0 || t == 1));
            assert_eq!(
                value_of(&out),
                wrapped(&(&v * &v), n),
                "{l} digits squared to {n} bits, wrapped first {pre_wrapped}: {dx:?}"
            );
        }
    }
    // Bootstraps after those of `wrap` (the operand as bits): none for
    // `None`, the square or the product of the operand with itself.
    let pbs = |square: Option<bool>| {
        let mut b = CircuitBuilder::new(&P);
        let x = Digits::input(&mut b, 32).unwrap();
        let x = digits::wrap(&mut b, &x, 32).unwrap();
        let r = match square {
            None => x,
            Some(true) => digits::square_wrapping(&mut b, &x, 32).unwrap(),
            Some(false) => digits::mul_wrapping(&mut b, &x, &x, 32).unwrap(),
        };
        r.output(&mut b).unwrap();
        b.build().stats().pbs
    };
    let wrap = pbs(None);
    let (square, product) = (pbs(Some(true)) - wrap, pbs(Some(false)) - wrap);
    assert!(
        square * 10 <= product * 6,
        "a 32-bit wrapping square costs {square} bootstraps, the product {product}"
    );
}

/// `mul_wrapping` by a clear operand against `x * k` wrapped to `n` bits:
/// every value of `n <= 7` bits (two's-complement inputs, and signed-binary
/// strings of up to 4 digits) by clear operands of either sign and either
/// side, at widths where block products are kept and where the words' way
/// is; and at 32 bits by 805 the words' way is the one taken (under 100
/// bootstraps, where block products need 124).
#[test]
fn wrapping_products_by_clear_operands_are_exact() {
    let ks: Vec<i64> = (-40..=40)
        .chain([805, -805, 12345, 128, 255, -129, 3195])
        .collect();
    for n in 1..=7usize {
        for twos in [true, false] {
            let l = if twos { n } else { n.min(4) };
            for &k in &ks {
                for clear_first in [false, true] {
                    let mut b = CircuitBuilder::new(&P);
                    let x = if twos {
                        Digits::input_twos(&mut b, l).unwrap()
                    } else {
                        Digits::input(&mut b, l).unwrap()
                    };
                    let c = Digits::constant(&mut b, &BigInt::from(k));
                    let p = if clear_first {
                        digits::mul_wrapping(&mut b, &c, &x, n)
                    } else {
                        digits::mul_wrapping(&mut b, &x, &c, n)
                    };
                    p.unwrap().output(&mut b).unwrap();
                    let circuit = b.build();
                    let cases: Vec<Vec<i64>> = if twos {
                        (0..1i64 << l)
                            .map(|v| {
                                let mut d: Vec<i64> = (0..l).map(|i| (v >> i) & 1).collect();
                                d[l - 1] = -d[l - 1];
                                d
                            })
                            .collect()
                    } else {
                        all_strings(l)
                    };
                    for dx in cases {
                        let out = signed_out(&circuit, &residues(&dx));
                        assert_eq!(out.len(), n);
                        assert_eq!(
                            value_of(&out),
                            wrapped(&(value_of(&dx) * k), n),
                            "{dx:?} x {k} to {n} bits (two's complement {twos})"
                        );
                    }
                }
            }
        }
    }
    let mut b = CircuitBuilder::new(&hearth::DIGITS_KS32_128);
    b.set_threads(2);
    let x = Digits::input_twos(&mut b, 32).unwrap();
    let c = Digits::constant(&mut b, &BigInt::from(805));
    digits::mul_wrapping(&mut b, &x, &c, 32)
        .unwrap()
        .output(&mut b)
        .unwrap();
    let pbs = b.build().stats().pbs;
    assert!(pbs < 100, "x805 wrapped to 32 bits took {pbs} bootstraps");
}

/// `mul_wrapping` against `x * y` wrapped to `n` bits: every digit string
/// of up to 3 digits at every width up to 8, random operands of unequal
/// lengths at widths below, at and above them, and operands that are bits
/// already (outputs of `wrap`).
#[test]
fn mul_wrapping_matches_wrapped_products() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    let mut shapes: Vec<(usize, usize, usize, bool)> = Vec::new();
    for lx in 1..=3 {
        for ly in 1..=3 {
            for n in 1..=8 {
                shapes.push((lx, ly, n, false));
            }
        }
    }
    for (lx, ly) in [(8, 8), (16, 16), (32, 32), (20, 9), (5, 33), (64, 64)] {
        for n in [lx.min(ly), lx.max(ly), lx + 3, (lx / 2).max(1)] {
            shapes.push((lx, ly, n, false));
            shapes.push((lx, ly, n, true));
        }
    }
    for (lx, ly, n, pre_wrapped) in shapes {
        let mut b = CircuitBuilder::new(&P);
        let mut x = Digits::input(&mut b, lx).unwrap();
        let mut y = Digits::input(&mut b, ly).unwrap();
        if pre_wrapped {
            x = digits::wrap(&mut b, &x, lx).unwrap();
            y = digits::wrap(&mut b, &y, ly).unwrap();
        }
        digits::mul_wrapping(&mut b, &x, &y, n)
            .unwrap()
            .output(&mut b)
            .unwrap();
        let c = b.build();
        let exhaustive = lx + ly <= 6;
        let cases: Vec<(Vec<i64>, Vec<i64>)> = if exhaustive {
            all_strings(lx)
                .into_iter()
                .flat_map(|dx| all_strings(ly).into_iter().map(move |dy| (dx.clone(), dy)))
                .collect()
        } else {
            (0..100)
                .map(|_| (random_digits(&mut rng, lx), random_digits(&mut rng, ly)))
                .collect()
        };
        for (dx, dy) in cases {
            let mut inputs = residues(&dx);
            inputs.extend(residues(&dy));
            let (vx, vy) = (value_of(&dx), value_of(&dy));
            let (vx, vy) = if pre_wrapped {
                (wrapped(&vx, lx), wrapped(&vy, ly))
            } else {
                (vx, vy)
            };
            let out = signed_out(&c, &inputs);
            assert_eq!(out.len(), n);
            assert!(out[..n - 1].iter().all(|&t| t == 0 || t == 1));
            assert_eq!(
                value_of(&out),
                wrapped(&(&vx * &vy), n),
                "{lx}x{ly} digits to {n} bits, wrapped first {pre_wrapped}: {dx:?} {dy:?}"
            );
        }
    }
}
