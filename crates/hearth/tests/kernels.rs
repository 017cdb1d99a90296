//! Kernels on the clear backend against plain Rust integer arithmetic, on
//! random shapes and values, for both families: exact `Int`s and wrapping
//! `I16` / `U8` words.

use hearth::api::{clear_digits, clear_value, clear_word, clear_word_value, Program, Word};
use hearth::backend::ClearBackend;
use hearth::kernels::{self, ConvOrder, Element, Padding, Tensor, Weights};
use hearth::{Error, Int, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
use num_bigint::BigInt;
use proptest::prelude::*;

/// One integer family as the tests see it.
trait Family {
    type E<'p>: Element<'p>;
    fn program() -> Program;
    fn input(p: &Program) -> Self::E<'_>;
    fn encode(v: i64) -> Vec<u64>;
    fn decode(out: &[u64]) -> i64;
    /// What the family computes from the exact value.
    fn reduce(v: i128) -> i64;
}

/// Exact integers on 7 digits.
struct Ints;
impl Family for Ints {
    type E<'p> = Int<'p>;
    fn program() -> Program {
        Program::new(&INSECURE_TEST_DIGITS)
    }
    fn input(p: &Program) -> Int<'_> {
        p.input(7)
    }
    fn encode(v: i64) -> Vec<u64> {
        clear_digits(&INSECURE_TEST_DIGITS, v, 7).unwrap()
    }
    fn decode(out: &[u64]) -> i64 {
        i64::try_from(clear_value(&INSECURE_TEST_DIGITS, out)).unwrap()
    }
    fn reduce(v: i128) -> i64 {
        v as i64
    }
}

/// Words of `B` bits, signed or not: Rust's wrapping arithmetic.
struct Words<const B: usize, const S: bool>;
impl<const B: usize, const S: bool> Family for Words<B, S> {
    type E<'p> = Word<'p, B, S>;
    fn program() -> Program {
        Program::new(&INSECURE_TEST_BITS)
    }
    fn input(p: &Program) -> Word<'_, B, S> {
        Word::input(p)
    }
    fn encode(v: i64) -> Vec<u64> {
        clear_word(Self::reduce(v as i128), B, S).unwrap()
    }
    fn decode(out: &[u64]) -> i64 {
        i64::try_from(clear_word_value(out, S).unwrap()).unwrap()
    }
    fn reduce(v: i128) -> i64 {
        let m = 1i128 << B;
        let mut r = v.rem_euclid(m);
        if S && r >= m / 2 {
            r -= m;
        }
        r as i64
    }
}

/// Builds `f` on encrypted tensors of `shapes` (values from `vals`), runs
/// it on the clear backend and returns the outputs' values.
fn run<F: Family>(
    shapes: &[Vec<usize>],
    vals: &[Vec<i64>],
    f: impl for<'p> Fn(&'p Program, &[Tensor<F::E<'p>>]) -> Result<Vec<F::E<'p>>, Error>,
) -> Result<Vec<i64>, Error> {
    let p = F::program();
    p.set_threads(2);
    {
        let ins: Vec<Tensor<F::E<'_>>> = shapes
            .iter()
            .map(|s| {
                let n = s.iter().product();
                Tensor::new(s, (0..n).map(|_| F::input(&p)).collect())
            })
            .collect::<Result<_, _>>()?;
        for o in &f(&p, &ins)? {
            p.output(o);
        }
    }
    let prog = p.build()?;
    let clear: Vec<Vec<u64>> = vals.iter().flatten().map(|&v| F::encode(v)).collect();
    let res = prog.run(&ClearBackend, &clear)?;
    Ok(res.iter().map(|o| F::decode(o)).collect())
}

fn matmul_ref(a: &[i64], b: &[i64], m: usize, k: usize, n: usize) -> Vec<i128> {
    let mut c = vec![0i128; m * n];
    for i in 0..m {
        for j in 0..n {
            for t in 0..k {
                c[i * n + j] += a[i * k + t] as i128 * b[t * n + j] as i128;
            }
        }
    }
    c
}

fn check_matmul<F: Family>(m: usize, k: usize, n: usize, a: &[i64], b: &[i64]) {
    let got = run::<F>(
        &[vec![m, k], vec![k, n]],
        &[a.to_vec(), b.to_vec()],
        |p, t| Ok(kernels::matmul(p, &t[0], &t[1])?.into_data()),
    )
    .unwrap();
    let want: Vec<i64> = matmul_ref(a, b, m, k, n)
        .into_iter()
        .map(F::reduce)
        .collect();
    assert_eq!(got, want, "{m}x{k} by {k}x{n}: {a:?} {b:?}");
}

fn check_matmul_clear<F: Family>(m: usize, k: usize, n: usize, a: &[i64], w: &[i64], bias: &[i64]) {
    let wt = Tensor::from_i64(&[k, n], w).unwrap();
    let bt = Tensor::from_i64(&[n], bias).unwrap();
    let got = run::<F>(&[vec![m, k]], &[a.to_vec()], |p, t| {
        Ok(kernels::matmul_clear(p, &t[0], &wt, Some(&bt))?.into_data())
    })
    .unwrap();
    let want: Vec<i64> = matmul_ref(a, w, m, k, n)
        .into_iter()
        .enumerate()
        .map(|(i, v)| F::reduce(v + bias[i % n] as i128))
        .collect();
    assert_eq!(got, want, "{m}x{k} by clear {k}x{n}: {a:?} {w:?} {bias:?}");
}

fn check_elementwise<F: Family>(a: &[i64], b: &[i64], k: i64) {
    let n = a.len();
    let kb = BigInt::from(k);
    let got = run::<F>(&[vec![n], vec![n]], &[a.to_vec(), b.to_vec()], |_, t| {
        let mut v = kernels::add(&t[0], &t[1])?.into_data();
        v.extend(kernels::sub(&t[0], &t[1])?.into_data());
        v.extend(kernels::mul(&t[0], &t[1])?.into_data());
        v.extend(kernels::scale(&t[0], &kb).into_data());
        Ok(v)
    })
    .unwrap();
    let mut want = Vec::new();
    for f in [
        |x: i128, y: i128, _: i128| x + y,
        |x, y, _| x - y,
        |x, y, _| x * y,
        |x, _, k| x * k,
    ] {
        want.extend(
            a.iter()
                .zip(b)
                .map(|(&x, &y)| F::reduce(f(x as i128, y as i128, k as i128))),
        );
    }
    assert_eq!(got, want, "{a:?} {b:?} k = {k}");
}

/// Plain convolution: `x` `[q, h, w]`, weights `[r, q, kh, kw]`.
#[allow(clippy::too_many_arguments)]
fn conv_ref(
    x: &[i64],
    w: &[i64],
    bias: &[i64],
    (q, h, wid): (usize, usize, usize),
    (r, kh, kw): (usize, usize, usize),
    stride: usize,
    pad: usize,
) -> (Vec<i128>, usize, usize) {
    let oh = (h + 2 * pad - kh) / stride + 1;
    let ow = (wid + 2 * pad - kw) / stride + 1;
    let mut out = vec![0i128; r * oh * ow];
    for o in 0..r {
        for i in 0..oh {
            for j in 0..ow {
                let mut s = bias[o] as i128;
                for c in 0..q {
                    for k in 0..kh {
                        for l in 0..kw {
                            let (y, z) = (
                                (i * stride + k) as i64 - pad as i64,
                                (j * stride + l) as i64 - pad as i64,
                            );
                            if y >= 0 && z >= 0 && (y as usize) < h && (z as usize) < wid {
                                s += x[(c * h + y as usize) * wid + z as usize] as i128
                                    * w[((o * q + c) * kh + k) * kw + l] as i128;
                            }
                        }
                    }
                }
                out[(o * oh + i) * ow + j] = s;
            }
        }
    }
    (out, oh, ow)
}

#[allow(clippy::too_many_arguments)]
fn check_conv<F: Family>(
    x: &[i64],
    w: &[i64],
    bias: &[i64],
    dims: (usize, usize, usize),
    kdims: (usize, usize, usize),
    stride: usize,
    pad: usize,
    encrypted_weights: bool,
    order: ConvOrder,
) {
    let (q, h, wid) = dims;
    let (r, kh, kw) = kdims;
    let bt = Tensor::from_i64(&[r], bias).unwrap();
    let (want, oh, ow) = conv_ref(x, w, bias, dims, kdims, stride, pad);
    let mut shapes = vec![vec![q, h, wid]];
    let mut vals = vec![x.to_vec()];
    if encrypted_weights {
        shapes.push(vec![r, q, kh, kw]);
        vals.push(w.to_vec());
    }
    let wc = Tensor::from_i64(&[r, q, kh, kw], w).unwrap();
    let got = run::<F>(&shapes, &vals, |p, t| {
        let weights = if encrypted_weights {
            Weights::Encrypted(&t[1])
        } else {
            Weights::Clear(&wc)
        };
        let y = kernels::conv2d(p, &t[0], &weights, Some(&bt), stride, Padding(pad), order)?;
        assert_eq!(y.shape(), [r, oh, ow]);
        Ok(y.into_data())
    })
    .unwrap();
    let want: Vec<i64> = want.into_iter().map(F::reduce).collect();
    assert_eq!(
        got, want,
        "conv {dims:?} {kdims:?} stride {stride} pad {pad} {order:?} enc {encrypted_weights}"
    );
}

fn check_pools<F: Family>(x: &[i64], c: usize, h: usize, w: usize, s: usize) {
    let got = run::<F>(&[vec![c, h, w]], &[x.to_vec()], |p, t| {
        let mut v = kernels::relu(&t[0]).into_data();
        v.extend(kernels::max_pool(&t[0], s)?.into_data());
        v.extend(kernels::avg_pool(p, &t[0], s)?.into_data());
        Ok(v)
    })
    .unwrap();
    let xs: Vec<i64> = x.iter().map(|&v| F::reduce(v as i128)).collect();
    let mut want: Vec<i64> = xs.iter().map(|&v| v.max(0)).collect();
    let (ph, pw) = (h / s, w / s);
    let window = |ch: usize, i: usize, j: usize| -> Vec<i64> {
        (0..s * s)
            .map(|t| xs[(ch * h + i * s + t / s) * w + j * s + t % s])
            .collect()
    };
    for ch in 0..c {
        for i in 0..ph {
            for j in 0..pw {
                want.push(*window(ch, i, j).iter().max().unwrap());
            }
        }
    }
    for ch in 0..c {
        for i in 0..ph {
            for j in 0..pw {
                let sum: i128 = window(ch, i, j).iter().map(|&v| v as i128).sum();
                // Words sum in their width (wrapping), then shift.
                want.push((F::reduce(sum) as i128).div_euclid((s * s) as i128) as i64);
            }
        }
    }
    assert_eq!(got, want, "pools of {c}x{h}x{w} by {s}: {xs:?}");
}

fn vals(n: usize, lo: i64, hi: i64) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(lo..=hi, n)
}

fn mat() -> impl Strategy<Value = (usize, usize, usize, Vec<i64>, Vec<i64>, Vec<i64>)> {
    (0usize..4, 0usize..4, 1usize..4).prop_flat_map(|(m, k, n)| {
        (
            Just(m),
            Just(k),
            Just(n),
            vals(m * k, -100, 100),
            vals(k * n, -100, 100),
            vals(n, -500, 500),
        )
    })
}

/// Input dims, kernel dims, stride, padding, input, weights, bias.
type ConvCase = (
    (usize, usize, usize),
    (usize, usize, usize),
    usize,
    usize,
    Vec<i64>,
    Vec<i64>,
    Vec<i64>,
);

fn conv_case() -> impl Strategy<Value = ConvCase> {
    (
        1usize..3,
        2usize..5,
        2usize..5,
        1usize..3,
        1usize..4,
        1usize..4,
        1usize..3,
        0usize..2,
    )
        .prop_filter("kernel fits", |&(_, h, w, _, kh, kw, _, p)| {
            kh <= h + 2 * p && kw <= w + 2 * p
        })
        .prop_flat_map(|(q, h, w, r, kh, kw, stride, pad)| {
            (
                Just((q, h, w)),
                Just((r, kh, kw)),
                Just(stride),
                Just(pad),
                vals(q * h * w, -40, 40),
                vals(r * q * kh * kw, -20, 20),
                vals(r, -100, 100),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn matmul_is_exact((m, k, n, a, b, _) in mat()) {
        check_matmul::<Ints>(m, k, n, &a, &b);
        check_matmul::<Words<16, true>>(m, k, n, &a, &b);
        check_matmul::<Words<8, false>>(m, k, n, &a, &b);
    }

    #[test]
    fn matmul_with_clear_weights_is_exact((m, k, n, a, w, bias) in mat()) {
        check_matmul_clear::<Ints>(m, k, n, &a, &w, &bias);
        check_matmul_clear::<Words<16, true>>(m, k, n, &a, &w, &bias);
        check_matmul_clear::<Words<8, false>>(m, k, n, &a, &w, &bias);
    }

    #[test]
    fn elementwise_is_exact(a in vals(3, -120, 120), b in vals(3, -120, 120), k in -300i64..300) {
        check_elementwise::<Ints>(&a, &b, k);
        check_elementwise::<Words<16, true>>(&a, &b, k);
        check_elementwise::<Words<8, false>>(&a, &b, k);
    }

    #[test]
    fn convolutions_are_exact(
        (dims, kdims, stride, pad, x, w, bias) in conv_case(),
        enc in any::<bool>(),
        per_tap in any::<bool>(),
    ) {
        let order = if per_tap { ConvOrder::PerTap } else { ConvOrder::PerOutput };
        check_conv::<Ints>(&x, &w, &bias, dims, kdims, stride, pad, enc, order);
        check_conv::<Words<16, true>>(&x, &w, &bias, dims, kdims, stride, pad, enc, order);
    }

    #[test]
    fn activations_and_pools_are_exact(
        (c, h, w, s, x) in (1usize..3, 1usize..3).prop_flat_map(|(c, s)| {
            let lo = if s == 1 { 1 } else { 2 };
            (Just(c), lo * s..=2 * s + 1, lo * s..=2 * s + 1, Just(s)).prop_flat_map(|(c, h, w, s)| {
                (Just(c), Just(h), Just(w), Just(s), vals(c * h * w, -60, 60))
            })
        }),
    ) {
        let s = s.next_power_of_two();
        if s <= h && s <= w {
            check_pools::<Ints>(&x, c, h, w, s);
            check_pools::<Words<16, true>>(&x, c, h, w, s);
            check_pools::<Words<8, false>>(&x, c, h, w, s);
        }
    }
}

#[test]
fn dot_products_of_every_length_are_exact() {
    for n in 0..6usize {
        let a: Vec<i64> = (0..n as i64).map(|i| 37 - 13 * i).collect();
        let b: Vec<i64> = (0..n as i64).map(|i| 5 * i - 11).collect();
        let want: i128 = a.iter().zip(&b).map(|(&x, &y)| x as i128 * y as i128).sum();
        let got = run::<Ints>(&[vec![n], vec![n]], &[a.clone(), b.clone()], |p, t| {
            Ok(vec![kernels::dot(p, &t[0], &t[1])?])
        })
        .unwrap();
        assert_eq!(got, vec![want as i64]);
        let got = run::<Words<16, true>>(&[vec![n], vec![n]], &[a.clone(), b.clone()], |p, t| {
            Ok(vec![kernels::dot(p, &t[0], &t[1])?])
        })
        .unwrap();
        assert_eq!(got, vec![Words::<16, true>::reduce(want)]);
        let w = Tensor::from_i64(&[n], &b).unwrap();
        let got = run::<Ints>(&[vec![n]], std::slice::from_ref(&a), |p, t| {
            Ok(vec![kernels::dot_clear(p, &t[0], &w, &BigInt::from(-7))?])
        })
        .unwrap();
        assert_eq!(got, vec![want as i64 - 7]);
    }
}

#[test]
fn repeated_operands_and_huge_clear_weights_are_exact() {
    // x . x with the same ciphertexts on both sides, and weights far
    // beyond the operands' width.
    let x = [93i64, -77, 5];
    let w: Vec<i64> = vec![(1 << 40) + 3, -(1 << 35) - 1, 0];
    let wt = Tensor::from_i64(&[3], &w).unwrap();
    let got = run::<Ints>(&[vec![3]], &[x.to_vec()], |p, t| {
        Ok(vec![
            kernels::dot(p, &t[0], &t[0])?,
            kernels::dot_clear(p, &t[0], &wt, &BigInt::from(1i64 << 50))?,
        ])
    })
    .unwrap();
    let sq: i64 = x.iter().map(|v| v * v).sum();
    let lin: i128 = x
        .iter()
        .zip(&w)
        .map(|(&a, &b)| a as i128 * b as i128)
        .sum::<i128>()
        + (1i128 << 50);
    assert_eq!(got, vec![sq, lin as i64]);
    let got = run::<Words<16, true>>(&[vec![3]], &[x.to_vec()], |p, t| {
        Ok(vec![
            kernels::dot(p, &t[0], &t[0])?,
            kernels::dot_clear(p, &t[0], &wt, &BigInt::from(1i64 << 50))?,
        ])
    })
    .unwrap();
    assert_eq!(
        got,
        vec![
            Words::<16, true>::reduce(sq as i128),
            Words::<16, true>::reduce(lin)
        ]
    );
}

#[test]
fn shapes_that_do_not_fit_are_refused_before_building() {
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let t = |s: &[usize]| {
        Tensor::new(s, (0..s.iter().product()).map(|_| p.input(4)).collect()).unwrap()
    };
    let is_dims = |r: Result<Tensor<Int<'_>>, Error>| matches!(r, Err(Error::Dimensions(_)));
    assert!(is_dims(kernels::matmul(&p, &t(&[2, 3]), &t(&[2, 3]))));
    assert!(is_dims(kernels::add(&t(&[2]), &t(&[3]))));
    let w = Tensor::from_i64(&[1, 2, 3, 3], &[1; 18]).unwrap();
    let conv = |x: &Tensor<Int<'_>>, stride| {
        kernels::conv2d(
            &p,
            x,
            &Weights::Clear(&w),
            None,
            stride,
            Padding(0),
            ConvOrder::PerOutput,
        )
        .map(|_| ())
    };
    assert!(matches!(conv(&t(&[1, 4, 4]), 1), Err(Error::Dimensions(_)))); // Q = 2 expected
    assert!(matches!(conv(&t(&[2, 2, 4]), 1), Err(Error::Dimensions(_)))); // kernel too tall
    assert!(matches!(conv(&t(&[2, 4, 4]), 0), Err(Error::Dimensions(_)))); // stride 0
    assert!(matches!(
        kernels::avg_pool(&p, &t(&[1, 6, 6]), 3),
        Err(Error::Dimensions(_))
    ));
    assert!(matches!(
        kernels::max_pool(&t(&[1, 2, 2]), 3),
        Err(Error::Dimensions(_))
    ));
    assert!(matches!(
        Tensor::new(&[2, 2], vec![1, 2, 3]),
        Err(Error::Dimensions(_))
    ));
    let bad_bias = Tensor::from_i64(&[2], &[1, 2]).unwrap();
    let w2 = Tensor::from_i64(&[4, 1], &[1; 4]).unwrap();
    assert!(matches!(
        kernels::matmul_clear(&p, &t(&[1, 4]), &w2, Some(&bad_bias)),
        Err(Error::Dimensions(_))
    ));
    // Int::dot with slices of different lengths: a typed error from build().
    let p = Program::new(&INSECURE_TEST_DIGITS);
    {
        let a = [p.input(3)];
        p.output(&Int::dot(&p, &a, &[]));
    }
    assert!(matches!(p.build(), Err(Error::Dimensions(_))));
}

/// Cannon's stages on the clear backend against plain matrix products,
/// for both families and block counts that do and do not divide the
/// dimensions; its largest stage needs less memory than the direct form.
#[test]
fn cannon_equals_the_plain_product() {
    use hearth::api::Shape;
    use hearth::kernels::CannonPlan;
    let (m, k, n) = (4usize, 5usize, 3usize);
    let a: Vec<i64> = (0..m * k).map(|i| (i as i64 * 37) % 61 - 30).collect();
    let b: Vec<i64> = (0..k * n).map(|i| (i as i64 * 53) % 47 - 23).collect();
    let want = matmul_ref(&a, &b, m, k, n);
    for q in 1..=4 {
        let plan = CannonPlan::new::<kernels::Ints>(
            &INSECURE_TEST_DIGITS,
            (m, k, n),
            Shape::Int { digits: 7 },
            q,
            2,
        )
        .unwrap();
        assert_eq!(plan.stages().len(), q);
        let enc = |v: &[i64]| v.iter().map(|&x| Ints::encode(x)).collect::<Vec<_>>();
        let out = plan.run(&ClearBackend, &enc(&a), &enc(&b)).unwrap();
        let got: Vec<i64> = out.iter().map(|o| Ints::decode(o)).collect();
        assert_eq!(
            got,
            want.iter().map(|&v| v as i64).collect::<Vec<_>>(),
            "Ints, q = {q}"
        );
        let plan = CannonPlan::new::<kernels::Words<16, true>>(
            &INSECURE_TEST_BITS,
            (m, k, n),
            Shape::Word {
                bits: 16,
                signed: true,
            },
            q,
            2,
        )
        .unwrap();
        let enc = |v: &[i64]| {
            v.iter()
                .map(|&x| Words::<16, true>::encode(x))
                .collect::<Vec<_>>()
        };
        let out = plan.run(&ClearBackend, &enc(&a), &enc(&b)).unwrap();
        let got: Vec<i64> = out.iter().map(|o| Words::<16, true>::decode(o)).collect();
        assert_eq!(
            got,
            want.iter()
                .map(|&v| Words::<16, true>::reduce(v))
                .collect::<Vec<_>>(),
            "Words, q = {q}"
        );
    }
    // Memory: 12x12 by 12x12 in 4 stages against the direct form.
    let direct = {
        let p = Program::new(&INSECURE_TEST_DIGITS);
        {
            let t = |s: &[usize]| {
                Tensor::new(s, (0..s.iter().product()).map(|_| p.input(8)).collect()).unwrap()
            };
            for v in kernels::matmul(&p, &t(&[12, 12]), &t(&[12, 12]))
                .unwrap()
                .data()
            {
                p.output(v);
            }
        }
        p.build().unwrap()
    };
    let plan = CannonPlan::new::<kernels::Ints>(
        &INSECURE_TEST_DIGITS,
        (12, 12, 12),
        Shape::Int { digits: 8 },
        4,
        2,
    )
    .unwrap();
    eprintln!(
        "12x12 by 12x12, 8 digits: direct {} bytes ({} PBS), Cannon q = 4 {} bytes ({} PBS)",
        direct.memory_estimate(2),
        direct.circuit().stats().pbs,
        plan.memory_estimate(2),
        plan.stages()
            .iter()
            .map(|s| s.circuit().stats().pbs)
            .sum::<usize>()
    );
    assert!(plan.memory_estimate(2) < direct.memory_estimate(2));
    let limit = plan.memory_estimate(2);
    assert!(matches!(
        direct.check_memory(2, limit),
        Err(Error::TooLarge { .. })
    ));
}

/// Wide clear layers share each element's triple across its row of
/// weights: exact for both families, and fewer bootstraps than one
/// independent dot product per output.
#[test]
fn wide_clear_layers_share_windows_and_stay_exact() {
    let (m, k, n) = (2usize, 3usize, 12usize);
    let a: Vec<i64> = (0..m * k).map(|i| (i as i64 * 41) % 97 - 48).collect();
    let w: Vec<i64> = (0..k * n)
        .map(|i| (i as i64 * 2731) % 8191 - 4095)
        .collect();
    let bias: Vec<i64> = (0..n as i64).map(|j| 100 * j - 600).collect();
    check_matmul_clear::<Ints>(m, k, n, &a, &w, &bias);
    check_matmul_clear::<Words<16, true>>(m, k, n, &a, &w, &bias);
    let pbs = |shared: bool| {
        let p = Program::new(&INSECURE_TEST_DIGITS);
        {
            let x = Tensor::new(&[m, k], (0..m * k).map(|_| p.input(7)).collect()).unwrap();
            let wt = Tensor::from_i64(&[k, n], &w).unwrap();
            if shared {
                for v in kernels::matmul_clear(&p, &x, &wt, None).unwrap().data() {
                    p.output(v);
                }
            } else {
                for i in 0..m {
                    let row = Tensor::new(&[k], x.data()[i * k..(i + 1) * k].to_vec()).unwrap();
                    for j in 0..n {
                        let col = Tensor::from_i64(
                            &[k],
                            &(0..k).map(|t| w[t * n + j]).collect::<Vec<_>>(),
                        )
                        .unwrap();
                        p.output(&kernels::dot_clear(&p, &row, &col, &BigInt::from(0)).unwrap());
                    }
                }
            }
        }
        p.build().unwrap().circuit().stats().pbs
    };
    let (shared, independent) = (pbs(true), pbs(false));
    eprintln!("2x3 by 3x12, 13-bit weights: {shared} PBS shared, {independent} independent");
    assert!(shared < independent);
}
