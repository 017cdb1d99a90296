//! The two's-complement bits family on the clear backend, against Rust's
//! integer arithmetic: every pair of 8-bit operands for each two-operand
//! operation, random pairs at 16, 32, 64 (and 128) bits.

use hearth::backend::{Backend, ClearBackend};
use hearth::bits::adders::{self, AdderKind};
use hearth::bits::compare;
use hearth::bits::counters::CompressKind;
use hearth::bits::gates::Gate;
use hearth::bits::mul::{self, MulKind};
use hearth::bits::shift::{self, ShiftKind, ShiftNetwork};
use hearth::bits::{bitwise, div, flags, Bits};
use hearth::circuit::schedule::{simulate, Machine};
use hearth::circuit::{CircuitBuilder, Wire};
use hearth::Comparison;
use hearth::{Circuit, Error, ParameterSet, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
use rand::{Rng, SeedableRng};

type Build = dyn Fn(&mut CircuitBuilder, &Bits, &Bits) -> Result<Vec<Bits>, Error>;

/// A circuit of two `n`-bit inputs and the outputs `build` makes.
fn circuit(
    params: &'static ParameterSet,
    n: usize,
    threads: usize,
    build: &Build,
) -> (Circuit, Vec<usize>) {
    let mut b = CircuitBuilder::new(params);
    b.set_threads(threads);
    let x = Bits::input(&mut b, n).unwrap();
    let y = Bits::input(&mut b, n).unwrap();
    let outs = build(&mut b, &x, &y).unwrap();
    let lens = outs.iter().map(Bits::len).collect();
    for o in &outs {
        o.output(&mut b).unwrap();
    }
    // As a program is built: what no output reads is dropped.
    let mut c = b.build();
    c.prune();
    (c, lens)
}

fn bits_of(v: u128, n: usize) -> Vec<u64> {
    (0..n).map(|i| 2 * ((v >> i) & 1) as u64).collect()
}

/// Runs on `(x, y)` and returns each output as an unsigned value.
fn run(c: &(Circuit, Vec<usize>), n: usize, x: u128, y: u128) -> Vec<u128> {
    let mut ins = bits_of(x, n);
    ins.extend(bits_of(y, n));
    let out = ClearBackend.evaluate(&c.0, &ins).unwrap();
    let mut it = out.into_iter();
    c.1.iter()
        .map(|&len| {
            (0..len).fold(0u128, |acc, i| {
                let d = it.next().unwrap();
                assert!(d == 0 || d == 2, "a bit decrypts to {d}");
                acc | ((d as u128 / 2) << i)
            })
        })
        .collect()
}

fn mask(n: usize) -> u128 {
    if n >= 128 {
        u128::MAX
    } else {
        (1u128 << n) - 1
    }
}

/// Sign-extends an n-bit pattern to i128.
fn signed(v: u128, n: usize) -> i128 {
    ((v << (128 - n)) as i128) >> (128 - n)
}

/// Checks `build` against `reference` (operands and results as n-bit
/// patterns, results reduced modulo each output's width) on all 8-bit
/// pairs and random pairs at wider widths.
fn check(
    name: &str,
    widths: &[usize],
    build: &Build,
    reference: &dyn Fn(usize, u128, u128) -> Vec<u128>,
) {
    check_on(&INSECURE_TEST_BITS, name, widths, build, reference)
}

/// [`check`] on the given parameter set.
fn check_on(
    params: &'static ParameterSet,
    name: &str,
    widths: &[usize],
    build: &Build,
    reference: &dyn Fn(usize, u128, u128) -> Vec<u128>,
) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for &n in widths {
        for threads in [1, 16] {
            let c = circuit(params, n, threads, build);
            let pairs: Vec<(u128, u128)> = if n <= 8 {
                (0..1u128 << n)
                    .flat_map(|x| (0..1u128 << n).map(move |y| (x, y)))
                    .collect()
            } else {
                let mut v = vec![
                    (0, 0),
                    (mask(n), mask(n)),
                    (1 << (n - 1), mask(n)),
                    (mask(n) >> 1, 1),
                ];
                v.extend(
                    (0..300).map(|_| (rng.gen::<u128>() & mask(n), rng.gen::<u128>() & mask(n))),
                );
                v
            };
            for (x, y) in pairs {
                let got = run(&c, n, x, y);
                let want: Vec<u128> = reference(n, x, y)
                    .into_iter()
                    .zip(&c.1)
                    .map(|(v, &len)| v & mask(len))
                    .collect();
                assert_eq!(
                    got, want,
                    "{name} on {} n={n} threads={threads} x={x:#x} y={y:#x}",
                    params.name
                );
            }
        }
    }
}

const WIDTHS: &[usize] = &[8, 16, 32, 64];

#[test]
fn adders() {
    for kind in AdderKind::CONCRETE.into_iter().chain([AdderKind::Auto]) {
        check(
            &format!("add {kind:?}"),
            &[1, 3, 8, 16, 32, 64, 128],
            &move |b, x, y| {
                let one = b.constant(2);
                let (s, c) = adders::add(b, x, y, one, kind)?;
                Ok(vec![s, Bits::from_wires(b, vec![c])?])
            },
            &|n, x, y| {
                let (s1, o1) = x.overflowing_add(y);
                let (s2, o2) = s1.overflowing_add(1);
                let carry = if n == 128 {
                    o1 | o2
                } else {
                    (s2 >> n) & 1 == 1
                };
                vec![s2, carry as u128]
            },
        );
    }
    check(
        "sub",
        WIDTHS,
        &|b, x, y| {
            let (d, c) = adders::sub(b, x, y, AdderKind::Auto)?;
            Ok(vec![d, Bits::from_wires(b, vec![c])?])
        },
        &|_, x, y| vec![x.wrapping_sub(y), (x >= y) as u128],
    );
}

#[test]
fn products() {
    for kind in MulKind::CONCRETE.into_iter().chain([MulKind::Auto]) {
        check(
            &format!("mul {kind:?}"),
            &[8, 16, 32],
            &move |b, x, y| {
                let n = x.len();
                Ok(vec![
                    mul::mul(b, x, y, n, false, kind)?,
                    mul::mul(b, x, y, 2 * n, false, kind)?,
                    mul::mul(b, x, y, 2 * n, true, kind)?,
                ])
            },
            &|n, x, y| {
                let s = (signed(x, n) * signed(y, n)) as u128;
                vec![x.wrapping_mul(y), x * y, s]
            },
        );
    }
}

/// Squares (`x * x`, the same bits twice: half the partial products) by
/// every algorithm, wrapping and full, on both kinds of set, against
/// Rust; the one key's square takes at most 60 % of a product's
/// bootstraps at 32 bits.
#[test]
fn squares() {
    for params in [&INSECURE_TEST_BITS, &INSECURE_TEST_DIGITS] {
        for kind in MulKind::CONCRETE.into_iter().chain([MulKind::Auto]) {
            check_on(
                params,
                &format!("square {kind:?}"),
                &[1, 3, 8, 16, 32],
                &move |b, x, _| {
                    let n = x.len();
                    Ok(vec![
                        mul::mul(b, x, x, n, false, kind)?,
                        mul::mul(b, x, x, 2 * n, false, kind)?,
                        mul::mul(b, x, x, n + 3, false, kind)?,
                    ])
                },
                &|_, x, _| vec![x.wrapping_mul(x), x * x, x * x],
            );
        }
    }
    for threads in [2, 16] {
        let pbs = |square: bool| {
            let (c, _) = circuit(&INSECURE_TEST_DIGITS, 32, threads, &move |b, x, y| {
                let y = if square { x } else { y };
                Ok(vec![mul::mul(b, x, y, 32, false, MulKind::Auto)?])
            });
            c.stats().pbs
        };
        let (square, product) = (pbs(true), pbs(false));
        assert!(
            square * 10 <= product * 6,
            "{threads} threads: a 32-bit square takes {square} bootstraps, a product {product}"
        );
    }
}

/// Unsigned and signed quotient and remainder of `n`-bit patterns, with
/// the documented results for division by zero and Rust's wrapping
/// `MIN / -1`.
fn division_reference(n: usize, x: u128, y: u128) -> [u128; 4] {
    let (sx, sy) = (signed(x, n), signed(y, n));
    let (q, r) = (
        x.checked_div(y).unwrap_or(mask(n)),
        x.checked_rem(y).unwrap_or(x),
    );
    let (sq, sr) = if sy == 0 {
        (if sx >= 0 { -1i128 } else { 1 }, sx)
    } else if sx == signed(1 << (n - 1), n) && sy == -1 {
        (sx, 0)
    } else {
        (sx / sy, sx % sy)
    };
    [q, r, sq as u128, sr as u128]
}

fn div_rems(b: &mut CircuitBuilder, x: &Bits, y: &Bits) -> Result<Vec<Bits>, Error> {
    let (q, r) = div::div_rem(b, x, y, false)?;
    let (sq, sr) = div::div_rem(b, x, y, true)?;
    let z = div::is_zero(b, y)?;
    Ok(vec![q, r, sq, sr, Bits::from_wires(b, vec![z])?])
}

fn div_rems_in_rust(n: usize, x: u128, y: u128) -> Vec<u128> {
    let [q, r, sq, sr] = division_reference(n, x, y);
    vec![q, r, sq, sr, (y == 0) as u128]
}

#[test]
fn division() {
    check("div_rem", &[8, 16, 32], &div_rems, &div_rems_in_rust);
}

/// Division and products on `pi = 5`, whose rows and final sums go
/// through the chunked adder.
#[test]
fn division_and_products_on_five_bit_sets() {
    check_on(
        &INSECURE_TEST_DIGITS,
        "div_rem on pi = 5",
        &[3, 8, 16],
        &div_rems,
        &div_rems_in_rust,
    );
    for kind in MulKind::CONCRETE.into_iter().chain([MulKind::Auto]) {
        check_on(
            &INSECURE_TEST_DIGITS,
            &format!("mul {kind:?} on pi = 5"),
            &[4, 8, 16],
            &move |b, x, y| {
                let n = x.len();
                Ok(vec![
                    mul::mul(b, x, y, n, false, kind)?,
                    mul::mul(b, x, y, 2 * n, true, kind)?,
                ])
            },
            &|n, x, y| {
                vec![
                    x.wrapping_mul(y),
                    signed(x, n).wrapping_mul(signed(y, n)) as u128,
                ]
            },
        );
    }
}

/// Products and division by a clear constant (recoded rows, reciprocal
/// multiplication): every 8-bit constant with every 8-bit operand, random
/// constants and operands at wider widths, against the same reference as
/// two encrypted operands.
#[test]
fn by_clear_constants() {
    let reference = |n: usize, x: u128, y: u128| -> Vec<u128> {
        let [q, r, sq, sr] = division_reference(n, x, y);
        let full = x.wrapping_mul(y);
        let sfull = signed(x, n).wrapping_mul(signed(y, n)) as u128;
        vec![x.wrapping_mul(y), full, sfull, q, r, sq, sr]
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for n in [8usize, 16, 32, 64] {
        let constants: Vec<u128> = if n == 8 {
            (0..256).collect()
        } else {
            let mut v = vec![
                0,
                1,
                2,
                3,
                7,
                10,
                mask(n),
                mask(n) >> 1,
                1 << (n - 1),
                mask(n) - 2,
            ];
            v.extend((0..12).map(|_| rng.gen::<u128>() & mask(n)));
            v.extend((0..6).map(|_| (rng.gen::<u128>() & mask(n)) >> rng.gen_range(0..n)));
            v
        };
        for d in constants {
            let c = circuit(&INSECURE_TEST_BITS, n, 2, &move |b, x, _| {
                let k = Bits::constant(b, &d.into(), n);
                let (q, r) = div::div_rem(b, x, &k, false)?;
                let (sq, sr) = div::div_rem(b, x, &k, true)?;
                Ok(vec![
                    mul::mul(b, x, &k, n, false, MulKind::Auto)?,
                    mul::mul(b, &k, x, 2 * n, false, MulKind::Auto)?,
                    mul::mul(b, x, &k, 2 * n, true, MulKind::Auto)?,
                    q,
                    r,
                    sq,
                    sr,
                ])
            });
            let xs: Vec<u128> = if n == 8 {
                (0..256).collect()
            } else {
                let mut v = vec![
                    0,
                    1,
                    mask(n),
                    mask(n) >> 1,
                    1 << (n - 1),
                    d,
                    d.wrapping_sub(1) & mask(n),
                ];
                v.extend((0..40).map(|_| rng.gen::<u128>() & mask(n)));
                v
            };
            for x in xs {
                let got = run(&c, n, x, 0);
                let want: Vec<u128> = reference(n, x, d)
                    .into_iter()
                    .zip(&c.1)
                    .map(|(v, &len)| v & mask(len))
                    .collect();
                assert_eq!(got, want, "n={n} x={x:#x} d={d:#x}");
            }
        }
    }
}

/// Every comparison, signed and unsigned, with `max` and `min`.
fn comparisons(b: &mut CircuitBuilder, x: &Bits, y: &Bits) -> Result<Vec<Bits>, Error> {
    let mut out = Vec::new();
    for signed in [false, true] {
        for op in Comparison::ALL {
            let w = compare::compare(b, x, y, op, signed)?;
            out.push(Bits::from_wires(b, vec![w])?);
        }
        out.push(compare::max(b, x, y, signed)?);
        out.push(compare::min(b, x, y, signed)?);
    }
    Ok(out)
}

/// Rust's answers to [`comparisons`].
fn compared(n: usize, x: u128, y: u128) -> Vec<u128> {
    let mut v: Vec<u128> = Comparison::ALL
        .iter()
        .map(|op| op.holds(x, y) as u128)
        .collect();
    v.extend([x.max(y), x.min(y)]);
    let (sx, sy) = (signed(x, n), signed(y, n));
    v.extend(Comparison::ALL.iter().map(|op| op.holds(sx, sy) as u128));
    v.extend([sx.max(sy) as u128, sx.min(sy) as u128]);
    v
}

#[test]
fn comparisons_min_max() {
    check("compare", WIDTHS, &comparisons, &compared);
}

/// On the digits family's sets comparisons read three bits per bootstrap:
/// every width that ends a chunk early (widths 1 to 3: one chunk, whose
/// zero test is the answer), exhaustively up to 8 bits, planned for 1 and
/// 16 threads.
#[test]
fn packed_comparisons_on_five_bit_sets() {
    check_on(
        &INSECURE_TEST_DIGITS,
        "compare",
        &[1, 2, 3, 4, 5, 7, 8, 16, 31, 64, 128],
        &comparisons,
        &compared,
    );
}

/// The packed forms' cost on `pi = 5` (INSECURE_TEST_DIGITS has
/// DIGITS_128's `pi` and budgets), against the gates' 49 and 63 bootstraps.
#[test]
fn packed_comparisons_cost_a_third_of_the_gates() {
    let stats = |op: Comparison, threads: usize| {
        let (c, _) = circuit(&INSECURE_TEST_DIGITS, 32, threads, &move |b, x, y| {
            let w = compare::compare(b, x, y, op, false)?;
            Ok(vec![Bits::from_wires(b, vec![w])?])
        });
        let st = c.stats();
        (st.pbs, st.depth)
    };
    // 11 chunks of 3 bits, their signs by fours, the last table.
    assert_eq!(stats(Comparison::Lt, 2), (15, 3));
    assert_eq!(stats(Comparison::Ge, 2), (15, 3));
    // 11 zero tests of the same chunks, counted in one bootstrap, on any
    // thread count.
    assert_eq!(stats(Comparison::Eq, 1), (12, 2));
    assert_eq!(stats(Comparison::Ne, 16), (12, 2));
}

/// Every adder on `pi = 5`, where it adds chunks of two bits: with a
/// carry in and out, wrapping, subtracting, and chained on its own outputs
/// (sums of sums, a difference of sums), every kind, exhaustive up to 8 bits.
#[test]
fn packed_adders_on_five_bit_sets() {
    for kind in AdderKind::CONCRETE.into_iter().chain([AdderKind::Auto]) {
        check_on(
            &INSECURE_TEST_DIGITS,
            &format!("packed add {kind:?}"),
            &[1, 2, 3, 4, 5, 6, 7, 8, 16, 31, 32, 64, 128],
            &move |b, x, y| {
                let one = b.constant(2);
                let zero = b.constant(0);
                let (s, c) = adders::add(b, x, y, one, kind)?;
                let w = adders::add(b, x, y, zero, kind)?.0;
                let (d, borrow) = adders::sub(b, x, y, kind)?;
                let dw = adders::sub(b, y, x, kind)?.0;
                let ww = adders::add(b, &w, &s, one, kind)?.0;
                let dd = adders::sub(b, &ww, &d, kind)?.0;
                Ok(vec![
                    s,
                    Bits::from_wires(b, vec![c])?,
                    w,
                    d,
                    Bits::from_wires(b, vec![borrow])?,
                    dw,
                    ww,
                    dd,
                ])
            },
            &|n, x, y| {
                let m = mask(n);
                let s = x.wrapping_add(y).wrapping_add(1);
                let carry = if n == 128 {
                    x.checked_add(y).and_then(|v| v.checked_add(1)).is_none()
                } else {
                    (s >> n) & 1 == 1
                };
                let w = x.wrapping_add(y) & m;
                let ww = w.wrapping_add(s & m).wrapping_add(1) & m;
                let d = x.wrapping_sub(y) & m;
                vec![
                    s,
                    carry as u128,
                    w,
                    d,
                    (x >= y) as u128,
                    y.wrapping_sub(x),
                    ww,
                    ww.wrapping_sub(d),
                ]
            },
        );
    }
}

/// The packed adder's cost on `pi = 5`: half the bitwise chain.
#[test]
fn packed_adders_cost() {
    let stats = |kind: AdderKind, threads: usize| {
        let (c, _) = circuit(&INSECURE_TEST_DIGITS, 32, threads, &move |b, x, y| {
            let zero = b.constant(0);
            Ok(vec![adders::add(b, x, y, zero, kind)?.0])
        });
        let st = c.stats();
        (st.pbs, st.depth)
    };
    // 16 chunks of 2 bits: one rotation each (carry and high bit), on
    // the chain.
    assert_eq!(stats(AdderKind::Ripple, 2), (16, 16));
    let (pbs, depth) = stats(AdderKind::Sklansky, 16);
    assert!(depth <= 6 && pbs <= 96, "Sklansky: {pbs} / {depth}");
}

/// Every shift by an encrypted amount, on every network and the chosen one.
fn shifts(b: &mut CircuitBuilder, x: &Bits, y: &Bits) -> Result<Vec<Bits>, Error> {
    let mut out = Vec::new();
    for network in [
        None,
        Some(ShiftNetwork::Barrel),
        Some(ShiftNetwork::Butterfly),
        Some(ShiftNetwork::Masks),
    ] {
        for kind in SHIFT_KINDS {
            out.push(match network {
                None => shift::shift(b, x, kind, y)?,
                Some(network) => shift::shift_by(b, x, kind, y, network)?,
            });
        }
    }
    Ok(out)
}

const SHIFT_KINDS: [ShiftKind; 5] = [
    ShiftKind::Left,
    ShiftKind::Right,
    ShiftKind::ArithRight,
    ShiftKind::RotateLeft,
    ShiftKind::RotateRight,
];

/// [`shifts`] in Rust.
fn shifts_in_rust(n: usize, x: u128, y: u128) -> Vec<u128> {
    let a = (y % n as u128) as u32;
    let sx = signed(x, n);
    let rot = |v: u128, k: u32| ((v << k) | (v >> ((n as u32 - k) % n as u32))) & mask(n);
    let one = [
        x << a,
        x >> a,
        (sx >> a) as u128,
        if a == 0 { x } else { rot(x, a) },
        if a == 0 { x } else { rot(x, n as u32 - a) },
    ];
    one.repeat(4)
}

#[test]
fn shifts_by_encrypted_amounts() {
    check(
        "shifts",
        &[1, 2, 4, 8, 16, 32, 64],
        &shifts,
        &shifts_in_rust,
    );
    // On pi = 5 the ANDs where zeros move in go two per bootstrap.
    check_on(
        &INSECURE_TEST_DIGITS,
        "shifts on pi = 5",
        &[1, 2, 4, 8, 16, 32, 64, 128],
        &shifts,
        &shifts_in_rust,
    );
}

/// Shifts whose amount shares wires with the value (`x << x`, a stage's
/// amount bit among its data bits), and of a value with clear bits (`y`
/// zero-extended, and with a clear one on top), on both kinds of set.
#[test]
fn shifts_by_their_own_bits() {
    let build: &Build = &|b, x, y| {
        let mut out = shifts(b, x, x)?;
        let one = b.constant(2);
        let mut wide = y.wires().to_vec();
        wide.truncate(y.len() / 2);
        let zero = b.constant(0);
        wide.resize(y.len() - 1, zero);
        wide.push(one);
        let wide = Bits::from_wires(b, wide)?;
        out.extend(shifts(b, &wide, x)?);
        Ok(out)
    };
    let rust = |n: usize, x: u128, y: u128| {
        let mut out = shifts_in_rust(n, x, x);
        let wide = (y & mask(n / 2)) | (1 << (n - 1));
        out.extend(shifts_in_rust(n, wide, x));
        out
    };
    check("shifts by their own bits", &[2, 4, 8, 16], build, &rust);
    check_on(
        &INSECURE_TEST_DIGITS,
        "shifts by their own bits on pi = 5",
        &[2, 4, 8, 16, 32],
        build,
        &rust,
    );
}

/// Column sums whose columns hold a wire more than once, of heights 3 to 7
/// (where a column's counter borrows bits of the next on `pi = 5`, and a
/// borrowed copy of a repeated wire must leave its twin in place; found
/// by the program fuzzer), against the same sums in Rust.
#[test]
fn column_sums_with_repeated_bits() {
    // Even and odd columns j: these bits (x or y, index offset from j).
    type Shape = &'static [(bool, usize)];
    const SHAPES: [(Shape, Shape); 4] = [
        (
            &[(true, 0), (true, 0), (false, 0), (true, 1), (false, 2)],
            &[(true, 0), (true, 0), (false, 0), (true, 1), (false, 2)],
        ),
        (
            &[
                (true, 0),
                (true, 0),
                (true, 0),
                (false, 1),
                (false, 1),
                (true, 3),
            ],
            &[
                (false, 0),
                (true, 1),
                (true, 1),
                (false, 0),
                (true, 2),
                (true, 2),
            ],
        ),
        // Three distinct bits, then a column whose two lightest bits are
        // one copy of a repeated wire and another: the even column borrows
        // both.
        (
            &[(true, 0), (false, 0), (true, 2)],
            &[(false, 2), (true, 4), (false, 2)],
        ),
        (
            &[(true, 0), (false, 0), (true, 2), (false, 5)],
            &[(false, 2), (true, 4), (false, 2), (true, 3)],
        ),
    ];
    let bits_of = |j: usize| {
        move |&(even, odd): &(Shape, Shape)| if j.is_multiple_of(2) { even } else { odd }
    };
    let build: &Build = &move |b, x, y| {
        let n = x.len();
        SHAPES
            .iter()
            .map(|shape| {
                let columns = (0..n)
                    .map(|j| {
                        let src = |&(from_x, k): &(bool, usize)| {
                            let v = if from_x { x } else { y };
                            v.wires()[(j + k) % n]
                        };
                        bits_of(j)(shape).iter().map(src).collect()
                    })
                    .collect();
                hearth::bits::counters::sum_columns(b, columns, n, CompressKind::Auto)
            })
            .collect()
    };
    let rust = move |n: usize, x: u128, y: u128| {
        SHAPES
            .iter()
            .map(|shape| {
                let mut total = 0u128;
                for j in 0..n {
                    for &(from_x, k) in bits_of(j)(shape).iter() {
                        let v = if from_x { x } else { y };
                        let bit = (v >> ((j + k) % n)) & 1;
                        total = total.wrapping_add(bit << j);
                    }
                }
                total & mask(n)
            })
            .collect()
    };
    check(
        "column sums with repeated bits",
        &[2, 4, 8, 16, 32],
        build,
        &rust,
    );
    check_on(
        &INSECURE_TEST_DIGITS,
        "column sums with repeated bits on pi = 5",
        &[2, 4, 8, 16, 32, 64],
        build,
        &rust,
    );
}

/// Every gate bitwise, and the NZCV flags of an addition and a subtraction.
fn gates_and_flags(b: &mut CircuitBuilder, x: &Bits, y: &Bits) -> Result<Vec<Bits>, Error> {
    let mut out: Vec<Bits> = Gate::ALL
        .iter()
        .map(|&g| bitwise::bitwise(b, g, x, y))
        .collect::<Result<_, _>>()?;
    let zero = b.constant(0);
    let (s, f) = flags::add_flags(b, x, y, zero)?;
    out.push(s);
    out.push(Bits::from_wires(b, vec![f.n, f.z, f.c, f.v])?);
    let (d, f) = flags::sub_flags(b, x, y)?;
    out.push(d);
    out.push(Bits::from_wires(b, vec![f.n, f.z, f.c, f.v])?);
    Ok(out)
}

/// [`gates_and_flags`] in Rust.
fn gates_and_flags_in_rust(n: usize, x: u128, y: u128) -> Vec<u128> {
    let m = mask(n);
    let mut v: Vec<u128> = Gate::ALL
        .iter()
        .map(|&g| {
            (0..n).fold(0, |acc, i| {
                acc | ((g.eval((x >> i) & 1 == 1, (y >> i) & 1 == 1) as u128) << i)
            })
        })
        .collect();
    let nzcv = |r: u128, c: bool, v: bool| {
        ((r >> (n - 1)) & 1) | (((r & m) == 0) as u128) << 1 | (c as u128) << 2 | (v as u128) << 3
    };
    let s = (x + y) & m;
    let ov = |r: u128, a: u128, b2: u128| {
        let (sa, sb, sr) = ((a >> (n - 1)) & 1, (b2 >> (n - 1)) & 1, (r >> (n - 1)) & 1);
        sa == sb && sr != sa
    };
    v.push(s);
    v.push(nzcv(s, x + y > m, ov(s, x, y)));
    let d = x.wrapping_sub(y) & m;
    let ny = !y & m;
    v.push(d);
    v.push(nzcv(d, x >= y, ov(d, x, ny)));
    v
}

#[test]
fn bitwise_gates_and_flags() {
    check(
        "bitwise",
        WIDTHS,
        &gates_and_flags,
        &gates_and_flags_in_rust,
    );
    // The digits family's sets: flags from the chunked adder, the signed
    // overflow read from the top bits.
    check_on(
        &INSECURE_TEST_DIGITS,
        "bitwise on pi = 5",
        &[1, 2, 3, 4, 5, 8, 16, 32, 64],
        &gates_and_flags,
        &gates_and_flags_in_rust,
    );
}

/// Every gate on `pi = 5` takes two bit positions per bootstrap: 16 at
/// depth 1 for 32 bits, 17 for 33 (the odd top bit alone); a constant
/// operand still folds every gate.
#[test]
fn bitwise_pairs_on_five_bit_sets() {
    for g in Gate::ALL {
        for (n, pbs) in [(32, 16), (33, 17)] {
            let (c, _) = circuit(&INSECURE_TEST_DIGITS, n, 2, &move |b, x, y| {
                Ok(vec![bitwise::bitwise(b, g, x, y)?])
            });
            let st = c.stats();
            assert_eq!((st.pbs, st.depth), (pbs, 1), "{g:?} on {n} bits");
        }
        let (c, _) = circuit(&INSECURE_TEST_DIGITS, 32, 2, &move |b, x, _| {
            let k = Bits::constant(b, &0x1234_5678u32.into(), 32);
            Ok(vec![bitwise::bitwise(b, g, x, &k)?])
        });
        assert_eq!(c.stats().pbs, 0, "{g:?} with a constant");
    }
}

/// `leading_zeros` on `pi = 5`, where the prefix OR takes two steps per
/// bootstrap: every value up to 8 bits (odd widths end on a single step)
/// and, above, random values and the AND of two (whose top bits are clear
/// more often); on 2 threads a 32-bit count is 16 bootstraps.
#[test]
fn leading_zeros_on_five_bit_sets() {
    check_on(
        &INSECURE_TEST_DIGITS,
        "leading_zeros on pi = 5",
        &[1, 2, 3, 5, 8, 16, 31, 32, 64, 128],
        &|b, x, y| {
            let both = bitwise::bitwise(b, Gate::And, x, y)?;
            Ok(vec![
                bitwise::leading_zeros(b, x, 8)?,
                bitwise::leading_zeros(b, &both, 8)?,
            ])
        },
        &|n, x, y| {
            let lz = |v: u128| (v.leading_zeros() - (128 - n as u32)) as u128;
            vec![lz(x), lz(x & y)]
        },
    );
    let (c, _) = circuit(&INSECURE_TEST_DIGITS, 32, 2, &|b, x, _| {
        Ok(vec![bitwise::leading_zeros(b, x, 6)?])
    });
    assert_eq!(c.stats().pbs, 16);
}

/// What the count backend chose on `pi = 5`, 32 bits, 2 threads:
/// `count_ones` by the widest counters, borrowing bits of the next column
/// at the low heights (13 bootstraps with the unread one dropped; 14
/// before; Wallace's rule took 15, Dadda's 21 at depth 11), a
/// product by 805 at most tfhe-rs's 73 bootstraps (76 without borrowing),
/// and shifts and rotations by masks, two per bootstrap (80; the barrel
/// took 129 for a shift, pairing each bit where a zero moves in with the
/// bit its input moves to, and 144 for a rotation; the butterfly of
/// swaps 96).
#[test]
fn counts_and_shifts_cost_on_five_bit_sets() {
    let stats = |build: &Build| {
        let st = circuit(&INSECURE_TEST_DIGITS, 32, 2, build).0.stats();
        (st.pbs, st.depth)
    };
    assert_eq!(
        stats(&|b, x, _| Ok(vec![bitwise::count_ones(b, x, 6)?])),
        (13, 5)
    );
    let (pbs, _) = stats(&|b, x, _| Ok(vec![mul::mul_const(b, x, &805.into(), 32, false)?]));
    assert!(pbs <= 73, "x * 805: {pbs} bootstraps");
    let on =
        |kind, network| stats(&move |b, x, y| Ok(vec![shift::shift_by(b, x, kind, y, network)?]));
    for kind in SHIFT_KINDS {
        let (pbs, depth) = stats(&move |b, x, y| Ok(vec![shift::shift(b, x, kind, y)?]));
        assert_eq!((pbs, depth), (80, 5), "{kind:?}");
        assert_eq!(on(kind, ShiftNetwork::Masks), (80, 5), "{kind:?}");
    }
    for kind in [ShiftKind::Left, ShiftKind::Right] {
        assert_eq!(on(kind, ShiftNetwork::Barrel), (129, 5), "{kind:?}");
    }
    for kind in [ShiftKind::RotateLeft, ShiftKind::RotateRight] {
        assert_eq!(on(kind, ShiftNetwork::Butterfly), (96, 5), "{kind:?}");
        assert_eq!(on(kind, ShiftNetwork::Barrel), (144, 5), "{kind:?}");
    }
}

/// Shifts of shifted words: each carries more noise than the last, past
/// the weight where the masks' last stage still pairs, so the choice falls
/// back to the barrel or the butterfly, and bits whose noise would leave
/// the bits' budget are refreshed; every result builds and stays exact.
#[test]
fn shifts_of_shifted_words() {
    // Indices into `shifts_in_rust`'s five kinds.
    // Arithmetic shifts twice by the same amount: the second's sign masks
    // are the first's (one bootstrap each), so their noise adds up.
    const CHAIN: [(ShiftKind, usize); 7] = [
        (ShiftKind::ArithRight, 2),
        (ShiftKind::ArithRight, 2),
        (ShiftKind::Left, 0),
        (ShiftKind::RotateLeft, 3),
        (ShiftKind::ArithRight, 2),
        (ShiftKind::RotateRight, 4),
        (ShiftKind::Right, 1),
    ];
    let build: &Build = &|b, x, y| {
        let mut v = x.clone();
        let mut out = Vec::new();
        for (kind, _) in CHAIN {
            v = shift::shift(b, &v, kind, y)?;
            out.push(v.clone());
        }
        Ok(out)
    };
    let rust = |n: usize, x: u128, y: u128| {
        let mut v = x;
        CHAIN
            .iter()
            .map(|&(_, i)| {
                v = shifts_in_rust(n, v, y)[i] & mask(n);
                v
            })
            .collect()
    };
    check("shifts of shifted words", &[8, 32], build, &rust);
    check_on(
        &INSECURE_TEST_DIGITS,
        "shifts of shifted words on pi = 5",
        &[8, 32],
        build,
        &rust,
    );
}

/// Counts on `pi = 5`, where a 7-to-3 counter's high bits are two tables
/// of one rotation: every 8-bit pattern, random wider ones, and a count of
/// counts (noisier inputs: one rotation per table).
#[test]
fn counts_on_five_bit_sets() {
    check_on(
        &INSECURE_TEST_DIGITS,
        "count_ones on pi = 5",
        &[4, 7, 8, 16, 32, 64, 128],
        &|b, x, y| {
            let cx = bitwise::count_ones(b, x, 8)?;
            let cy = bitwise::count_ones(b, y, 8)?;
            let mut both: Vec<Wire> = cx.wires().to_vec();
            both.extend_from_slice(cy.wires());
            let cc = bitwise::count_ones(b, &Bits::from_wires(b, both)?, 8)?;
            Ok(vec![cx, cy, cc])
        },
        &|_, x, y| {
            let (cx, cy) = (x.count_ones() as u128, y.count_ones() as u128);
            vec![cx, cy, (cx.count_ones() + cy.count_ones()) as u128]
        },
    );
}

#[test]
fn counts_and_rewiring() {
    check(
        "count_ones / leading_zeros / reverse",
        &[8, 16, 32, 64],
        &|b, x, _| {
            let n = x.len();
            Ok(vec![
                bitwise::count_ones(b, x, 8)?,
                bitwise::leading_zeros(b, x, 8)?,
                bitwise::reverse_bits(x),
                bitwise::swap_bytes(x),
                bitwise::field_extract(b, x, 2, 5, n, true),
                bitwise::field_insert(b, x, &bitwise::reverse_bits(x), 1, 3),
            ])
        },
        &|n, x, _| {
            let rev = (0..n).fold(0, |acc, i| acc | (((x >> i) & 1) << (n - 1 - i)));
            let swap = (0..n / 8).fold(0, |acc, k| {
                acc | (((x >> (8 * k)) & 0xff) << (n - 8 - 8 * k))
            });
            let field = signed((x >> 2) & 0x1f, 5) as u128;
            let ins = (x & !(0b111 << 1)) | ((rev & 0b111) << 1);
            vec![
                x.count_ones() as u128,
                (x.leading_zeros() - (128 - n as u32)) as u128,
                rev,
                swap,
                field,
                ins,
            ]
        },
    );
}

/// Negation by each kind on both kinds of set, against Rust's wrapping
/// negation: of fresh bits, of a sum and of an AND (bits that are not
/// fresh, sharing fresh values with the other input), every value up to 8
/// bits; on the one key at 16 threads the prefix kind is chosen and
/// beats the subtraction's depth, on 2 threads the skipping ripple takes
/// at most 3/4 of the subtraction's rounds.
#[test]
fn negation_by_every_kind() {
    use adders::NegKind;
    for params in [&INSECURE_TEST_BITS, &INSECURE_TEST_DIGITS] {
        for kind in [
            NegKind::Subtract,
            NegKind::Prefix,
            NegKind::Skip(1),
            NegKind::Skip(2),
            NegKind::Skip(8),
        ] {
            check_on(
                params,
                &format!("neg {kind:?}"),
                &[1, 2, 3, 4, 5, 8, 16, 31, 32, 64],
                &move |b, x, y| {
                    let zero = b.constant(0);
                    let sum = adders::add(b, x, y, zero, AdderKind::Auto)?.0;
                    let both = bitwise::bitwise(b, Gate::And, x, y)?;
                    Ok(vec![
                        adders::neg_by(b, x, kind)?,
                        adders::neg_by(b, &sum, kind)?,
                        adders::neg_by(b, &both, kind)?,
                        adders::neg(b, y)?,
                    ])
                },
                &|n, x, y| {
                    let neg = |v: u128| v.wrapping_neg() & mask(n);
                    vec![neg(x), neg(x.wrapping_add(y) & mask(n)), neg(x & y), neg(y)]
                },
            );
        }
    }
    // 32-bit negation by `kind` (None: as `neg` chooses) for `threads`.
    let negation = |threads: usize, kind: Option<NegKind>| {
        circuit(&INSECURE_TEST_DIGITS, 32, threads, &move |b, x, _| {
            Ok(vec![match kind {
                Some(k) => adders::neg_by(b, x, k)?,
                None => adders::neg(b, x)?,
            }])
        })
        .0
    };
    let depth = |threads: usize, kind: Option<NegKind>| {
        let c = negation(threads, kind);
        (c.stats().depth, c.stats().pbs)
    };
    let (prefix, subtract) = (
        depth(16, Some(NegKind::Prefix)),
        depth(16, Some(NegKind::Subtract)),
    );
    assert!(
        prefix.0 <= 3 && prefix.0 < subtract.0,
        "{prefix:?} {subtract:?}"
    );
    assert_eq!(depth(16, None), prefix, "chosen at 16 threads");
    // On 2 threads the skipping ripple runs the subtraction's chain on
    // both threads: more bootstraps, fewer rounds, where bootstraps are
    // not paired; paired, the chain itself takes both threads.
    let unpaired = |kind: NegKind| {
        let c = negation(2, Some(kind));
        simulate(&c, &Machine::host(2, 1.0)).wall_s
    };
    let skip = (1..=8)
        .map(|k| unpaired(NegKind::Skip(k)))
        .fold(f64::INFINITY, f64::min);
    let subtract = unpaired(NegKind::Subtract);
    assert!(
        skip * 4.0 <= subtract * 3.0,
        "skip {skip}, subtraction {subtract}"
    );
    let time = |kind: Option<NegKind>| negation(2, kind).time_on(2);
    let chosen = time(None);
    for kind in [
        NegKind::Subtract,
        NegKind::Prefix,
        NegKind::Skip(1),
        NegKind::Skip(2),
        NegKind::Skip(4),
    ] {
        assert!(chosen <= time(Some(kind)), "chosen {chosen}, {kind:?}");
    }
}
