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
    randomized(mul_with(MulAlgorithm::Auto), |x, y| x * y, &[8, 16, 32, 64], 1000);
    randomized(mul_with(MulAlgorithm::Karatsuba), |x, y| x * y, &[16, 33], 300);
    randomized(mul_with(MulAlgorithm::Schoolbook), |x, y| x * y, &[16], 300);
}

#[test]
fn square_exhaustive_and_random() {
    for algo in [MulAlgorithm::Counters, MulAlgorithm::Karatsuba, MulAlgorithm::Auto] {
        let op: BinOp = match algo {
            MulAlgorithm::Counters => |b, x, _| digits::square(b, x, MulAlgorithm::Counters),
            MulAlgorithm::Karatsuba => |b, x, _| digits::square(b, x, MulAlgorithm::Karatsuba),
            _ => |b, x, _| digits::square(b, x, MulAlgorithm::Auto),
        };
        exhaustive(op, |x, _| x * x);
        randomized(op, |x, _| x * x, &[8, 16, 32], 300);
    }
}
