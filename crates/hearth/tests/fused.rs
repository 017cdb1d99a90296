//! Sums written with operators are fused by the builder where that is
//! cheaper (`api/fuse.rs`): random expressions of sums, differences,
//! negations, products and clear factors, with shared and output
//! intermediates, equal Rust's wrapping arithmetic on the clear backend;
//! the fused circuits cost what `Word::fused_sum` costs; program files
//! rebuild them to the same circuit.

use std::path::Path;

use hearth::api::{clear_word, clear_word_value, CompiledProgram, Program, Word, U32};
use hearth::backend::ClearBackend;
use hearth::{ParameterSet, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
use num_bigint::BigInt;
use proptest::prelude::*;

/// One step of an expression over earlier values (indices modulo the
/// values so far).
#[derive(Clone, Debug)]
enum Step {
    Add(usize, usize),
    Sub(usize, usize),
    Mul(usize, usize),
    Neg(usize),
    MulConst(usize, i64),
    AddConst(usize, i64),
    /// A value no sum reads: ends chains, so the builder sees shared and
    /// non-linear operands.
    Xor(usize, usize),
}

/// A random program: inputs, steps, and which values are outputs besides
/// the last one.
#[derive(Clone, Debug)]
struct Expr {
    inputs: Vec<u64>,
    steps: Vec<Step>,
    outputs: Vec<usize>,
}

fn step() -> impl Strategy<Value = Step> {
    let i = 0usize..64;
    prop_oneof![
        4 => (i.clone(), i.clone()).prop_map(|(a, b)| Step::Add(a, b)),
        2 => (i.clone(), i.clone()).prop_map(|(a, b)| Step::Sub(a, b)),
        2 => (i.clone(), i.clone()).prop_map(|(a, b)| Step::Mul(a, b)),
        1 => i.clone().prop_map(Step::Neg),
        2 => (i.clone(), -300i64..300).prop_map(|(a, k)| Step::MulConst(a, k)),
        1 => (i.clone(), -70000i64..70000).prop_map(|(a, k)| Step::AddConst(a, k)),
        1 => (i.clone(), i).prop_map(|(a, b)| Step::Xor(a, b)),
    ]
}

fn expr() -> impl Strategy<Value = Expr> {
    (
        prop::collection::vec(any::<u64>(), 1..=5),
        prop::collection::vec(step(), 1..=20),
        prop::collection::vec(0usize..64, 0..=3),
    )
        .prop_map(|(inputs, steps, outputs)| Expr {
            inputs,
            steps,
            outputs,
        })
}

impl Expr {
    /// Every value's operands resolved, and the outputs (sorted, the last
    /// value always among them).
    fn resolved(&self) -> (Vec<Step>, Vec<usize>) {
        let n = self.inputs.len();
        let steps = self
            .steps
            .iter()
            .enumerate()
            .map(|(j, s)| {
                let r = |i: usize| i % (n + j);
                match *s {
                    Step::Add(a, b) => Step::Add(r(a), r(b)),
                    Step::Sub(a, b) => Step::Sub(r(a), r(b)),
                    Step::Mul(a, b) => Step::Mul(r(a), r(b)),
                    Step::Neg(a) => Step::Neg(r(a)),
                    Step::MulConst(a, k) => Step::MulConst(r(a), k),
                    Step::AddConst(a, k) => Step::AddConst(r(a), k),
                    Step::Xor(a, b) => Step::Xor(r(a), r(b)),
                }
            })
            .collect();
        let total = n + self.steps.len();
        let mut outputs: Vec<usize> = self.outputs.iter().map(|&i| i % total).collect();
        outputs.push(total - 1);
        outputs.sort_unstable();
        outputs.dedup();
        (steps, outputs)
    }

    /// Plain Rust: every value modulo `2^bits`.
    fn reference(&self, bits: u32) -> Vec<u64> {
        let mask = u64::MAX >> (64 - bits);
        let (steps, _) = self.resolved();
        let mut v: Vec<u64> = self.inputs.iter().map(|x| x & mask).collect();
        for s in steps {
            let x = match s {
                Step::Add(a, b) => v[a].wrapping_add(v[b]),
                Step::Sub(a, b) => v[a].wrapping_sub(v[b]),
                Step::Mul(a, b) => v[a].wrapping_mul(v[b]),
                Step::Neg(a) => v[a].wrapping_neg(),
                Step::MulConst(a, k) => v[a].wrapping_mul(k as u64),
                Step::AddConst(a, k) => v[a].wrapping_add(k as u64),
                Step::Xor(a, b) => v[a] ^ v[b],
            };
            v.push(x & mask);
        }
        v
    }

    fn build<const B: usize, const S: bool>(
        &self,
        params: &'static ParameterSet,
        threads: usize,
    ) -> CompiledProgram {
        let p = Program::new(params);
        p.set_threads(threads);
        let (steps, outputs) = self.resolved();
        let mut v: Vec<Word<B, S>> = self.inputs.iter().map(|_| Word::input(&p)).collect();
        for s in steps {
            let x = match s {
                Step::Add(a, b) => &v[a] + &v[b],
                Step::Sub(a, b) => &v[a] - &v[b],
                Step::Mul(a, b) => &v[a] * &v[b],
                Step::Neg(a) => -&v[a],
                Step::MulConst(a, k) => &v[a] * k,
                Step::AddConst(a, k) => &v[a] + k,
                Step::Xor(a, b) => &v[a] ^ &v[b],
            };
            v.push(x);
        }
        for i in outputs {
            p.output(&v[i]);
        }
        p.build().expect("sums of words always build")
    }

    /// The program on the clear backend against plain Rust, and through a
    /// program file (same circuit, same outputs).
    fn check<const B: usize, const S: bool>(
        &self,
        params: &'static ParameterSet,
        threads: usize,
    ) -> Result<(), String> {
        let prog = self.build::<B, S>(params, threads);
        let mask = u64::MAX >> (64 - B);
        let ins: Vec<Vec<u64>> = self
            .inputs
            .iter()
            .map(|&x| {
                let x = x & mask;
                let value = if S && x >> (B - 1) == 1 {
                    BigInt::from(x) - (BigInt::from(1) << B)
                } else {
                    BigInt::from(x)
                };
                clear_word(value, B, S).unwrap()
            })
            .collect();
        let want = self.reference(B as u32);
        let (_, outputs) = self.resolved();
        let loaded =
            CompiledProgram::from_bytes(Path::new("fused"), &prog.to_bytes().unwrap()).unwrap();
        if loaded.circuit().stats() != prog.circuit().stats() {
            return Err("the program file rebuilds to another circuit".into());
        }
        for run in [&prog, &loaded] {
            let out = run.run(&ClearBackend, &ins).map_err(|e| e.to_string())?;
            for (o, &i) in out.iter().zip(&outputs) {
                let got = clear_word_value(o, S).unwrap();
                let got = u64::try_from(if got < BigInt::from(0) {
                    got + (BigInt::from(1) << B)
                } else {
                    got
                })
                .unwrap();
                if got != want[i] {
                    return Err(format!("value {i}: got {got}, Rust {}", want[i]));
                }
            }
        }
        Ok(())
    }
}

/// 96 cases, or `PROPTEST_CASES` (long runs).
fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok());
    ProptestConfig::with_cases(n.unwrap_or(96))
}

proptest! {
    #![proptest_config(cases())]

    /// Random sums, differences, products and clear factors of `u8`,
    /// `i16` and `u32` words on both families' test sets, planned for 2
    /// and 16 threads, equal Rust's wrapping arithmetic.
    #[test]
    fn operator_sums_are_exact(
        e in expr(),
        threads in prop::sample::select(vec![2usize, 16]),
        params in prop::sample::select(vec![&INSECURE_TEST_BITS, &INSECURE_TEST_DIGITS]),
        width in 0..3,
    ) {
        let checked = match width {
            0 => e.check::<8, false>(params, threads),
            1 => e.check::<16, true>(params, threads),
            _ => e.check::<32, false>(params, threads),
        };
        if let Err(why) = checked {
            prop_assert!(false, "{why}\n{e:?}");
        }
    }
}

/// The #PBS of `f`'s program on `params`, planned for 2 threads.
fn pbs(params: &'static ParameterSet, f: impl FnOnce(&Program)) -> usize {
    let p = Program::new(params);
    p.set_threads(2);
    f(&p);
    p.build().unwrap().circuit().stats().pbs
}

/// A sum of 16 words written with `+` costs what `Word::fused_sum` costs,
/// well under 15 separate additions; a dot product written as a loop of
/// `acc + x * y` costs what `Word::dot` costs.
#[test]
fn operator_sums_cost_what_the_fused_calls_cost() {
    let params = &INSECURE_TEST_DIGITS;
    let one = BigInt::from(1);
    let add = pbs(params, |p| {
        let (a, b) = (U32::input(p), U32::input(p));
        p.output(&(&a + &b));
    });
    let chain = pbs(params, |p| {
        let xs: Vec<_> = (0..16).map(|_| U32::input(p)).collect();
        let sum = xs[1..].iter().fold(xs[0].clone(), |s, x| &s + x);
        p.output(&sum);
    });
    let fused = pbs(params, |p| {
        let xs: Vec<_> = (0..16).map(|_| U32::input(p)).collect();
        let scaled: Vec<_> = xs.iter().map(|x| (x, &one)).collect();
        p.output(&U32::fused_sum(p, &[], &scaled, &BigInt::from(0)));
    });
    assert_eq!(chain, fused);
    assert!(chain < 15 * add, "{chain} PBS against 15 x {add}");

    let looped = pbs(params, |p| {
        let xs: Vec<_> = (0..16).map(|_| U32::input(p)).collect();
        let acc = (0..8).fold(U32::constant(p, 0), |acc, i| {
            &acc + &(&xs[2 * i] * &xs[2 * i + 1])
        });
        p.output(&acc);
    });
    let dot = pbs(params, |p| {
        let xs: Vec<_> = (0..16).map(|_| U32::input(p)).collect();
        let (x, y): (Vec<_>, Vec<_>) = (0..8)
            .map(|i| (xs[2 * i].clone(), xs[2 * i + 1].clone()))
            .unzip();
        p.output(&U32::dot(p, &x, &y));
    });
    assert_eq!(looped, dot);
}

/// A sum whose partial result is also an output is not fused past it:
/// the partial result is built (and exact) as the user wrote it.
#[test]
fn an_output_stops_the_fusion() {
    let e = Expr {
        inputs: vec![200, 100, 55, 1],
        steps: (1..4).map(|i| Step::Add(i + 2, i)).collect(),
        outputs: vec![4],
    };
    e.check::<8, false>(&INSECURE_TEST_BITS, 2).unwrap();
    let (_, outputs) = e.resolved();
    assert_eq!(outputs, vec![4, 6]);
}

/// A chain whose values are read twice each (Fibonacci's `f = f1 + f2`)
/// is one linear form of the inputs with clear coefficients: 20 steps on
/// `u16` cost what two products by a constant and their sum cost, not 20
/// adders; with the middle of the chain an output, the chain is cut there
/// and still exact. Random inputs, against Rust's wrapping arithmetic.
#[test]
fn chains_of_shared_sums_fuse_into_one_form() {
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(20);
    for params in [&INSECURE_TEST_BITS, &INSECURE_TEST_DIGITS] {
        for middle in [false, true] {
            let p = Program::new(params);
            p.set_threads(2);
            let (mut f1, mut f2) = (Word::<16, false>::input(&p), Word::<16, false>::input(&p));
            for k in 0..20 {
                let f = &f1 + &f2;
                f1 = f2;
                f2 = f;
                if middle && k == 9 {
                    p.output(&f2);
                }
            }
            p.output(&f2);
            let prog = p.build().unwrap();
            let chained = pbs(params, |p| {
                let (a, b) = (Word::<16, false>::input(p), Word::<16, false>::input(p));
                p.output(&(&a + &b));
            });
            let st = prog.circuit().stats();
            if !middle {
                assert!(
                    st.pbs < 20 * chained / 2,
                    "{}: {} PBS, an adder {chained}",
                    params.name,
                    st.pbs
                );
            }
            for _ in 0..50 {
                let (a, b): (u16, u16) = (rand::Rng::gen(&mut rng), rand::Rng::gen(&mut rng));
                let (mut x, mut y) = (a, b);
                let mut want = Vec::new();
                for k in 0..20 {
                    (x, y) = (y, x.wrapping_add(y));
                    if middle && k == 9 {
                        want.push(BigInt::from(y));
                    }
                }
                want.push(BigInt::from(y));
                let ins = [
                    clear_word(a, 16, false).unwrap(),
                    clear_word(b, 16, false).unwrap(),
                ];
                let out = prog.run(&ClearBackend, &ins).unwrap();
                let got: Vec<BigInt> = out
                    .iter()
                    .map(|o| clear_word_value(o, false).unwrap())
                    .collect();
                assert_eq!(got, want, "{}: a = {a}, b = {b}", params.name);
            }
        }
    }
}

/// `acc * x + c` in a loop (Horner's rule as users write it), powers
/// `x * x * x * x` and products of sums of one word are polynomials in
/// that word: the builder evaluates them from the square `x * x` by
/// Horner's rule in `x^2`. Degree 4 on `u32` costs under two products
/// (Horner's rule took three products and a product by a constant); every
/// form, with an accumulator that is also an output, signed and
/// unsigned, equals Rust's wrapping arithmetic (every `u8`).
#[test]
fn polynomials_of_one_word_are_built_from_squares() {
    fn horner<const B: usize, const S: bool>(
        p: &Program,
        coefficients: &[i64],
        middle: Option<usize>,
    ) {
        let x = Word::<B, S>::input(p);
        let mut acc = Word::<B, S>::constant(p, coefficients[0]);
        for (k, &c) in coefficients[1..].iter().enumerate() {
            acc = &(&acc * &x) + &Word::<B, S>::constant(p, c);
            if middle == Some(k) {
                p.output(&acc);
            }
        }
        p.output(&acc);
        // Powers, and a product of sums: (x + 3)(x - 5) x - x.
        let x4 = &(&(&x * &x) * &x) * &x;
        p.output(&x4);
        let three = Word::<B, S>::constant(p, 3);
        let five = Word::<B, S>::constant(p, 5);
        let q = &(&(&(&x + &three) * &(&x - &five)) * &x) - &x;
        p.output(&q);
    }
    fn rust(bits: u32, x: i128, coefficients: &[i64], middle: Option<usize>) -> Vec<i128> {
        let m = (1i128 << bits) - 1;
        let mut acc = coefficients[0] as i128 & m;
        let mut out = Vec::new();
        for (k, &c) in coefficients[1..].iter().enumerate() {
            acc = (acc.wrapping_mul(x) + c as i128) & m;
            if middle == Some(k) {
                out.push(acc);
            }
        }
        out.push(acc);
        let x2 = (x * x) & m;
        out.push((x2 * x2) & m);
        out.push(((((x + 3) * (x - 5)) & m) * x - x) & m);
        out
    }
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(21);
    for params in [&INSECURE_TEST_BITS, &INSECURE_TEST_DIGITS] {
        for degree in [2usize, 3, 4, 6] {
            for middle in [None, Some(degree / 2)] {
                let cs: Vec<i64> = (0..=degree)
                    .map(|_| rand::Rng::gen_range(&mut rng, -1000..1000))
                    .collect();
                // Every u8; random i16 and u32.
                let run = |prog: &CompiledProgram, bits: u32, signed: bool, x: i128| {
                    let ins = [clear_word(x, bits as usize, signed).unwrap()];
                    let out = prog.run(&ClearBackend, &ins).unwrap();
                    let got: Vec<i128> = out
                        .iter()
                        .map(|o| {
                            let v = clear_word_value(o, signed).unwrap();
                            i128::try_from(v).unwrap() & ((1i128 << bits) - 1)
                        })
                        .collect();
                    let x = x & ((1i128 << bits) - 1);
                    assert_eq!(
                        got,
                        rust(bits, x, &cs, middle),
                        "{}: {bits} bits, x = {x}, {cs:?}, middle {middle:?}",
                        params.name
                    );
                };
                let p = Program::new(params);
                horner::<8, false>(&p, &cs, middle);
                let prog = p.build().unwrap();
                for x in 0..256 {
                    run(&prog, 8, false, x);
                }
                let p = Program::new(params);
                horner::<16, true>(&p, &cs, middle);
                let prog = p.build().unwrap();
                for _ in 0..40 {
                    run(
                        &prog,
                        16,
                        true,
                        rand::Rng::gen_range(&mut rng, -32768..32768),
                    );
                }
                let p = Program::new(params);
                horner::<32, false>(&p, &cs, middle);
                let prog = p.build().unwrap();
                for _ in 0..40 {
                    run(&prog, 32, false, rand::Rng::gen_range(&mut rng, 0..1 << 32));
                }
            }
        }
    }
    let params = &INSECURE_TEST_DIGITS;
    let product = pbs(params, |p| {
        let (x, y) = (U32::input(p), U32::input(p));
        p.output(&(&x * &y));
    });
    let horner4 = pbs(params, |p| {
        let x = U32::input(p);
        let mut acc = U32::constant(p, 3);
        for c in [5, 7, 11, 13] {
            acc = &(&acc * &x) + &U32::constant(p, c);
        }
        p.output(&acc);
    });
    assert!(
        horner4 < 2 * product,
        "Horner, degree 4: {horner4} PBS, a product {product}"
    );
}
