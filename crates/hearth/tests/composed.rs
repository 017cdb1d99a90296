//! Composed programs through the public `Program` / `Int` API: the
//! reproductions of issue 7 as regression tests.

use hearth::api::{clear_digits, clear_value, Int, Program};
use hearth::backend::ClearBackend;
use hearth::INSECURE_TEST_DIGITS as P;
use num_bigint::BigInt;

/// Builds `f` on inputs of the given `(value, digits)` and returns its value
/// on the clear backend.
fn run(inputs: &[(i64, usize)], f: impl for<'p> Fn(&'p Program, &[Int<'p>]) -> Int<'p>) -> BigInt {
    run_with_len(inputs, f).0
}

/// Like [`run`], with the number of output digits.
fn run_with_len(
    inputs: &[(i64, usize)],
    f: impl for<'p> Fn(&'p Program, &[Int<'p>]) -> Int<'p>,
) -> (BigInt, usize) {
    let p = Program::new(&P);
    let xs: Vec<Int> = inputs.iter().map(|&(_, n)| p.input(n)).collect();
    let out = f(&p, &xs);
    p.output(&out);
    let prog = p.build().expect("the program builds");
    let ins: Vec<Vec<u64>> = inputs
        .iter()
        .map(|&(v, n)| clear_digits(&P, v, n).unwrap())
        .collect();
    let res = prog.run(&ClearBackend, &ins).expect("the program runs");
    (clear_value(&P, &res[0]), res[0].len())
}

#[test]
fn add_negative_constant_longer_than_operand() {
    assert_eq!(run(&[(1, 3)], |_, x| &x[0] + -129), BigInt::from(-128));
}

#[test]
fn add_constant_longer_than_operand() {
    assert_eq!(run(&[(-44, 6)], |_, x| &x[0] + 222), BigInt::from(178));
}

#[test]
fn add_constant_on_four_digits() {
    assert_eq!(run(&[(5, 4)], |_, x| &x[0] + 100), BigInt::from(105));
}

#[test]
fn subtract_self_equality() {
    assert_eq!(
        run(&[(2337, 12), (3, 2)], |_, x| &x[0] - &x[1].eq(&x[1])),
        BigInt::from(2336)
    );
}

#[test]
fn scale_self_comparison() {
    assert_eq!(
        run(&[(5, 4)], |_, x| &x[0].ge(&x[0]) * -3920),
        BigInt::from(-3920)
    );
}

#[test]
fn bits_of_scaled_signum() {
    // -4584 on its `n` two's-complement bits, read back as an unsigned value.
    let (v, n) = run_with_len(&[(-7, 4)], |_, x| (&x[0].signum() * 4584).to_bits_as_int());
    assert_eq!(v, (BigInt::from(1) << n) - 4584);
}

#[test]
fn bits_of_scaled_digit() {
    assert_eq!(
        run(&[(1, 1)], |_, x| (&x[0] * 1554).to_bits_as_int()),
        BigInt::from(1554)
    );
}

#[test]
fn signum_of_scaled_value() {
    assert_eq!(
        run(&[(-3, 2)], |_, x| (&x[0] * -2807).signum()),
        BigInt::from(1)
    );
}

/// Every operation on every kind of operand the API can produce: empty
/// (`x - x`), one digit, trivial (constants), repeated and equal operands.
#[test]
fn degenerate_operands() {
    assert_eq!(run(&[(0, 0)], |_, x| x[0].signum()), BigInt::from(0));
    // x - x has no digits at all; every operation accepts it.
    let v = run(&[(77, 8)], |p, x| {
        let e = &x[0] - &x[0];
        let parts = [
            &e + &x[0],
            &e * &x[0],
            e.square(),
            e.signum(),
            e.max(&x[0]),
            e.min(&x[0]),
            e.abs(),
            e.relu(),
            e.round(3),
            e.to_bits_as_int(),
            &e * 12345,
            &e << 5,
            e.lt(&e),
            Int::sum(p, &[e.clone(), e.clone()]),
        ];
        Int::sum(p, &parts)
    });
    // 77 + 0 + 0 + 0 + 77 + 0 + 0 + 0 + 0 + 0 + 0 + 0 + 0 + 0
    assert_eq!(v, BigInt::from(154));
    // Constants only: folded, no bootstrap, exact.
    let p = Program::new(&P);
    let c = &(&p.constant(-1234) * &p.constant(567)) + &p.constant(1i64 << 40).signum();
    p.output(&c);
    let prog = p.build().unwrap();
    assert_eq!(prog.circuit().stats().pbs, 0);
    let out = prog.run(&ClearBackend, &[]).unwrap();
    assert_eq!(clear_value(&P, &out[0]), BigInt::from(-1234 * 567 + 1));
}

#[test]
fn unsupported_parameters_and_oversized_requests_are_typed_errors() {
    use hearth::{Error, INSECURE_TEST_BITS};
    let p = Program::new(&INSECURE_TEST_BITS);
    let x = p.input(4);
    p.output(&(&x + &x));
    assert!(matches!(p.build(), Err(Error::UnsupportedParams { .. })));

    let p = Program::new(&P);
    let x = p.input(4);
    p.output(&(&x << (1usize << 40)));
    assert!(matches!(p.build(), Err(Error::TooLarge { .. })));

    let p = Program::new(&P);
    let x = p.input(5000);
    p.output(&(&x * &x));
    assert!(matches!(p.build(), Err(Error::TooLarge { .. })));

    // An integer of another program.
    let p = Program::new(&P);
    let q = Program::new(&P);
    let (x, y) = (p.input(3), q.input(3));
    p.output(&(&x + &y));
    assert!(matches!(
        p.build(),
        Err(Error::Build(hearth::BuildError::ForeignWire { .. }))
    ));

    assert!(matches!(
        clear_digits(&P, 1, usize::MAX),
        Err(Error::TooLarge { .. })
    ));
}

/// Found by `hearth-bench fuzz-programs --seed 2027` (program 2660): a
/// wrapping product whose compressed rows hold a known bit next to a
/// clear one; their sum, a bit by range but two ciphertexts by noise, must
/// not pass as a digit.
#[test]
fn wrapping_product_of_constant_and_shifted_sum() {
    for v in [-1i64, 0, 1] {
        let got = run(&[(v, 1)], |p, x| {
            let s = (&x[0] + &(&x[0] - &x[0])).shr_floor(6);
            p.constant(73_257_585_097i64).wrapping_mul(&s, 7)
        });
        let s = (v).div_euclid(64) as i128;
        let want = ((73_257_585_097i128 * s).rem_euclid(128) + 64).rem_euclid(128) - 64;
        assert_eq!(got, BigInt::from(want), "v = {v}");
    }
}
