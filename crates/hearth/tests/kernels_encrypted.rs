//! Kernels encrypted with real parameters (release mode): each result
//! decrypts to the plain Rust integer result.

use hearth::api::{Program, U8};
use hearth::backend::CpuBackend;
use hearth::kernels::{self, ConvOrder, Padding, Tensor, Weights};
use hearth::{DIGITS_128, GATES_128};
use hearth_testkit::keys::keys;
use rand::{Rng, SeedableRng};

/// A 4-element dot product of encrypted 8-bit words (wrapping, as
/// `u8`), on GATES_128 (every length, width and shape on the clear
/// backend in `tests/kernels.rs`).
#[test]
fn dot_product_of_4_words_of_8_bits() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let xs: Vec<u8> = (0..4).map(|_| rng.gen()).collect();
    let ys: Vec<u8> = (0..4).map(|_| rng.gen()).collect();
    let p = Program::new(&GATES_128);
    {
        let t = || Tensor::new(&[4], (0..4).map(|_| U8::input(&p)).collect()).unwrap();
        let (x, y) = (t(), t());
        p.output(&kernels::dot(&p, &x, &y).unwrap());
    }
    let prog = p.build().unwrap();
    let (client, server) = keys(&GATES_128);
    let ins: Vec<_> = xs
        .iter()
        .chain(&ys)
        .map(|&v| client.encrypt_word(v).unwrap())
        .collect();
    let out = prog
        .run_encrypted(&CpuBackend::new(server, None).unwrap(), &ins)
        .unwrap();
    let want = xs
        .iter()
        .zip(&ys)
        .fold(0u8, |a, (&x, &y)| a.wrapping_add(x.wrapping_mul(y)));
    assert_eq!(client.decrypt_word::<u8>(&out[0]).unwrap(), want);
}

/// A 3x3 convolution (clear filter, bias) of an encrypted 4x4 image of
/// exact integers, then ReLU, on DIGITS_128 (every shape, stride and
/// padding on the clear backend in `tests/kernels.rs`).
#[test]
fn convolution_3x3_on_a_4x4_image() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(6);
    let img: Vec<i64> = (0..16).map(|_| rng.gen_range(0..16)).collect();
    let w: Vec<i64> = (0..9).map(|_| rng.gen_range(-4..=4)).collect();
    let p = Program::new(&DIGITS_128);
    {
        let x = Tensor::new(&[1, 4, 4], (0..16).map(|_| p.input(4)).collect()).unwrap();
        let wt = Tensor::from_i64(&[1, 1, 3, 3], &w).unwrap();
        let bias = Tensor::from_i64(&[1], &[-20]).unwrap();
        let y = kernels::conv2d(
            &p,
            &x,
            &Weights::Clear(&wt),
            Some(&bias),
            1,
            Padding(0),
            ConvOrder::PerOutput,
        )
        .unwrap();
        for v in kernels::relu(&y).data() {
            p.output(v);
        }
    }
    let prog = p.build().unwrap();
    let (client, server) = keys(&DIGITS_128);
    let ins: Vec<_> = img
        .iter()
        .map(|&v| client.encrypt_int(v, 4).unwrap())
        .collect();
    let out = prog
        .run_encrypted(&CpuBackend::new(server, None).unwrap(), &ins)
        .unwrap();
    let got: Vec<i64> = out.iter().map(|o| client.decrypt_i64(o).unwrap()).collect();
    let mut want = Vec::new();
    for i in 0..2 {
        for j in 0..2 {
            let s: i64 = (0..9)
                .map(|t| w[t] * img[(i + t / 3) * 4 + j + t % 3])
                .sum::<i64>()
                - 20;
            want.push(s.max(0));
        }
    }
    assert_eq!(got, want);
}
