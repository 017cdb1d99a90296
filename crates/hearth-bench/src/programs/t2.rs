//! The T2 suite (`hearth-bench programs --suite t2`): the TFHE benchmark
//! programs of T2 (TrustworthyComputing/T2-FHE-Compiler-and-Benchmarks,
//! `src/test/resources/`), ported to hearth's word API at the word width
//! T2 runs each one at, with plain Rust's reference beside each.
//!
//! The ports keep T2's operations, sizes and quirks (the Batcher network's
//! 18 comparators, CRC-32 and the modified Jenkins hash as T2 writes them,
//! the Manhattan distance's `bin` variant, PIR's linear scan), written the
//! way a user writes hearth: operators on words, clear constants clear
//! (T2 encrypts them trivially and runs the full circuit on them; a user
//! of hearth or tfhe-rs would not). What differs from T2, and why:
//!
//! * Widths. T2 has one word width per run (`--w`, default 8); each
//!   program here has the width its T2 README runs it at, or the width
//!   where its values are true: chi-squared at 16 bits (at 8 its outputs
//!   wrap), CRC-32 and Jenkins at 32, Fibonacci at 16 (F(22) = 17711),
//!   NN at 16, PIR at 6 (T2 runs it at 5 bits; tfhe-rs's radix types
//!   have even widths only, FheUint4 and FheUint6 the nearest, and 6 is
//!   the nearest that holds T2's values 1..16: both libraries run it at
//!   6).
//! * Accumulators and initial values T2 encrypts (`sum = 0`, `crc =
//!   0xFFFFFFFF`, `hash = 0`, `res_ = {0, ...}`) are clear constants here;
//!   the inputs are the values T2 encrypts that the computation reads.
//!   Fibonacci's inputs are f1 and f2 (T2's encrypted `fib_` is written
//!   before it is read).
//! * NN nn_10 indexes its weights by the input only, so its ten FC1
//!   neurons compute one dot product with the 784 inputs (only the bias
//!   differs), and its ten FC2 outputs one dot product with the ten
//!   squares. Computed ten times, that product costs tfhe-rs minutes per
//!   run on two threads: on both sides each duplicate sum is computed
//!   once and each neuron adds its own bias. The outputs are T2's.
//! * Manhattan's `~d; d++` is written as the negation it is (`-d`).
//!
//! In the benchmark the inputs are random within each input's width (as
//! the nine programs' are); the tests also run T2's own inputs and check
//! the outputs T2's sources give.

use super::Spec;
use hearth::api::{Program, Word, U16, U32, U8};

/// An encrypted 4-bit word (T2's `--w 4` programs).
type U4<'p> = Word<'p, 4, false>;
/// An encrypted 6-bit word (PIR: T2's 5 bits, at tfhe-rs's nearest
/// width; see the module doc).
type U6<'p> = Word<'p, 6, false>;

/// `v` modulo `2^bits`.
fn wrap(v: i128, bits: u32) -> i128 {
    v & ((1i128 << bits) - 1)
}

/// The 18 compare-exchanges T2's Batcher loop emits for 8 inputs (its
/// bounds leave out the standard network's (6, 7) in the first stage), in
/// its order.
pub(super) const BATCHER8: [(usize, usize); 18] = [
    (0, 1),
    (2, 3),
    (4, 5),
    (0, 2),
    (1, 3),
    (4, 6),
    (5, 7),
    (1, 2),
    (5, 6),
    (0, 4),
    (1, 5),
    (2, 6),
    (3, 7),
    (2, 4),
    (3, 5),
    (1, 2),
    (3, 4),
    (5, 6),
];

/// T2's oblivious insertion sort of 8: for i = 1..7, j = i down to 1,
/// compare-exchange (j - 1, j); 28 of them.
pub(super) fn insertion8() -> Vec<(usize, usize)> {
    (1..8)
        .flat_map(|i| (1..=i).rev().map(|j| (j - 1, j)))
        .collect()
}

/// CRC-32's (reflected) polynomial.
pub(super) const CRC32_POLY: u32 = 0xEDB8_8320;
/// CRC-8's polynomial (MSB first).
pub(super) const CRC8_POLY: u8 = 0x07;
/// NN nn_10's FC1 biases.
pub(super) const NN_B1: [u16; 10] = [185, 203, 192, 21, 99, 43, 30, 237, 83, 55];
/// NN nn_10's FC2 biases.
pub(super) const NN_B2: [u16; 10] = [166, 139, 171, 172, 85, 101, 196, 172, 21, 28];
/// NN nn_10's weights, T2's values (1..=256), indexed by the input alone.
#[rustfmt::skip]
pub(super) const NN_W: [u16; 784] = [
    86, 66, 101, 237, 254, 15, 170, 22, 70, 49, 71, 207, 164, 204, 85, 242,
    247, 135, 69, 82, 135, 9, 9, 178, 80, 36, 43, 47, 185, 87, 216, 64,
    190, 175, 212, 108, 219, 89, 103, 1, 212, 46, 195, 253, 167, 222, 69, 135,
    52, 36, 164, 129, 19, 199, 38, 145, 120, 109, 76, 35, 145, 29, 60, 59,
    85, 231, 168, 76, 14, 243, 132, 136, 28, 23, 32, 210, 125, 217, 1, 52,
    231, 118, 119, 126, 32, 96, 193, 230, 107, 100, 191, 197, 237, 208, 106, 164,
    33, 177, 213, 199, 141, 10, 254, 141, 18, 118, 168, 182, 197, 246, 58, 41,
    212, 52, 126, 169, 99, 95, 151, 4, 150, 199, 9, 41, 204, 60, 127, 251,
    93, 239, 37, 67, 6, 136, 89, 40, 129, 68, 229, 96, 255, 205, 18, 124,
    88, 193, 64, 164, 39, 7, 107, 10, 227, 22, 176, 77, 98, 193, 181, 207,
    26, 37, 125, 151, 199, 164, 149, 76, 141, 78, 64, 1, 217, 11, 198, 187,
    5, 163, 159, 224, 215, 173, 255, 185, 27, 153, 124, 224, 214, 55, 179, 48,
    20, 37, 231, 172, 242, 85, 199, 164, 217, 176, 119, 135, 30, 117, 199, 229,
    191, 19, 13, 226, 31, 13, 226, 5, 217, 184, 8, 199, 89, 225, 100, 18,
    232, 94, 165, 198, 255, 7, 43, 185, 5, 57, 68, 199, 133, 1, 139, 107,
    168, 127, 184, 132, 121, 47, 210, 129, 133, 84, 133, 120, 75, 229, 89, 139,
    84, 61, 50, 187, 98, 80, 255, 130, 140, 28, 241, 2, 198, 105, 88, 9,
    145, 88, 81, 216, 31, 155, 253, 68, 49, 44, 185, 7, 100, 140, 12, 155,
    161, 246, 95, 53, 167, 148, 250, 28, 60, 149, 240, 15, 44, 131, 54, 101,
    191, 128, 85, 160, 43, 10, 240, 144, 224, 236, 155, 27, 41, 46, 18, 116,
    16, 245, 221, 5, 2, 252, 147, 76, 211, 71, 183, 26, 5, 138, 60, 85,
    172, 144, 242, 251, 173, 65, 193, 152, 240, 1, 135, 62, 156, 81, 205, 140,
    146, 15, 56, 174, 148, 230, 182, 141, 195, 22, 205, 75, 60, 116, 35, 63,
    106, 169, 182, 256, 72, 235, 250, 28, 11, 140, 144, 232, 255, 23, 138, 133,
    251, 201, 69, 49, 197, 250, 1, 166, 140, 89, 168, 123, 249, 246, 37, 80,
    49, 193, 107, 176, 71, 103, 136, 38, 239, 110, 54, 202, 255, 175, 196, 192,
    196, 152, 115, 205, 228, 46, 185, 151, 132, 108, 188, 107, 242, 192, 69, 240,
    250, 159, 116, 252, 187, 48, 220, 55, 54, 91, 54, 35, 119, 199, 9, 121,
    173, 30, 183, 245, 57, 50, 179, 14, 43, 190, 45, 103, 175, 149, 145, 41,
    101, 33, 83, 172, 71, 16, 71, 252, 138, 76, 159, 56, 158, 51, 193, 129,
    19, 86, 246, 117, 43, 128, 199, 186, 117, 30, 225, 93, 33, 25, 33, 45,
    152, 139, 102, 56, 12, 182, 134, 198, 34, 46, 249, 172, 67, 187, 128, 33,
    128, 100, 161, 240, 114, 199, 109, 16, 4, 1, 85, 250, 171, 178, 218, 215,
    157, 141, 102, 126, 175, 215, 52, 89, 125, 68, 159, 47, 91, 224, 218, 80,
    16, 194, 172, 62, 159, 92, 12, 23, 8, 59, 163, 25, 165, 230, 210, 139,
    16, 175, 10, 166, 160, 42, 142, 213, 55, 119, 120, 235, 205, 107, 200, 81,
    65, 138, 146, 51, 41, 190, 253, 225, 136, 168, 117, 71, 88, 135, 209, 38,
    3, 21, 202, 158, 55, 208, 184, 236, 107, 32, 28, 20, 2, 24, 13, 149,
    154, 20, 72, 224, 89, 227, 145, 79, 213, 188, 72, 31, 77, 247, 85, 193,
    133, 39, 16, 200, 242, 211, 156, 39, 207, 162, 46, 184, 163, 51, 97, 132,
    1, 177, 48, 59, 250, 250, 66, 1, 189, 80, 53, 109, 192, 43, 221, 40,
    232, 256, 135, 224, 184, 32, 113, 39, 37, 18, 201, 1, 47, 115, 187, 46,
    40, 109, 130, 124, 73, 131, 171, 240, 187, 79, 6, 221, 27, 107, 57, 192,
    71, 249, 86, 220, 114, 204, 35, 214, 45, 199, 236, 237, 71, 1, 224, 32,
    92, 64, 243, 78, 39, 68, 74, 149, 29, 229, 116, 220, 178, 244, 37, 82,
    106, 95, 149, 192, 151, 90, 144, 132, 33, 254, 118, 28, 15, 192, 241, 227,
    200, 64, 8, 149, 58, 70, 29, 7, 152, 22, 124, 173, 60, 202, 40, 42,
    193, 73, 196, 114, 14, 247, 137, 18, 106, 172, 94, 66, 241, 189, 65, 110,
    114, 73, 116, 80, 209, 55, 27, 199, 139, 2, 109, 174, 253, 45, 47, 47,
];

const U4X8: &[(usize, bool)] = &[(4, false); 8];
const U4X16: &[(usize, bool)] = &[(4, false); 16];
const U6X17: &[(usize, bool)] = &[(6, false); 17];
const U8X32: &[(usize, bool)] = &[(8, false); 32];
const U8X128: &[(usize, bool)] = &[(8, false); 128];
const U16X784: &[(usize, bool)] = &[(16, false); 784];

/// Eight 4-bit inputs through the compare-exchanges `net`, as T2 writes
/// one: `c = y < x`, then `x' = c ? y : x` and `y' = c ? x : y`.
fn compare_exchanges(p: &Program, net: &[(usize, usize)]) {
    let mut v: Vec<U4> = (0..8).map(|_| U4::input(p)).collect();
    for &(a, b) in net {
        let c = v[b].lt(&v[a]);
        let (lo, hi) = (c.select(&v[b], &v[a]), c.select(&v[a], &v[b]));
        v[a] = lo;
        v[b] = hi;
    }
    for x in &v {
        p.output(x);
    }
}

/// Plain Rust's [`compare_exchanges`].
pub(super) fn exchange(x: &[i128], net: &[(usize, usize)]) -> Vec<i128> {
    let mut v = x.to_vec();
    for &(a, b) in net {
        if v[b] < v[a] {
            v.swap(a, b);
        }
    }
    v
}

/// CRC-32 of the four bytes of `data` (least significant first), bit by
/// bit as T2 writes it: reflected, initial value and final XOR all ones.
pub(super) fn crc32(data: u32) -> u32 {
    let mut crc = u32::MAX;
    for i in (0..4).rev() {
        crc ^= (data << (8 * i)) >> 24;
        for _ in 0..8 {
            let t = crc >> 1;
            crc = if crc & 1 == 1 { t ^ CRC32_POLY } else { t };
        }
    }
    !crc
}

/// CRC-8 (polynomial 0x07, MSB first), initial value the byte itself.
pub(super) fn crc8(byte: u8) -> u8 {
    let mut crc = byte;
    for _ in 0..8 {
        let t = if crc >> 7 == 1 { CRC8_POLY } else { 0 };
        crc = t ^ (crc << 1);
    }
    crc
}

/// T2's modified one-at-a-time hash of two 32-bit keys.
pub(super) fn jenkins(keys: &[u32]) -> u32 {
    let mut h = 0u32;
    for &k in keys {
        h = h.wrapping_add(k);
        h = h.wrapping_add((h << 26) >> 16);
        h ^= h >> 6;
    }
    h = h.wrapping_add(h << 3);
    h ^= h >> 11;
    h = h.wrapping_add((h << 31) >> 16);
    (h << 16) >> 16
}

/// NN nn_10's ten outputs for 784 inputs, in u16.
pub(super) fn nn(x: &[i128]) -> Vec<i128> {
    let s = x.iter().zip(NN_W).fold(0u16, |s, (&v, w)| {
        s.wrapping_add((v as u16).wrapping_mul(w))
    });
    let t = NN_B1.iter().zip(NN_W).fold(0u16, |t, (&b, w)| {
        let l = s.wrapping_add(b);
        t.wrapping_add(l.wrapping_mul(l).wrapping_mul(w))
    });
    NN_B2.iter().map(|&b| t.wrapping_add(b) as i128).collect()
}

/// The 13 programs of T2's suite.
pub fn all() -> Vec<Spec> {
    vec![
        Spec {
            key: "t2-chi2",
            name: "T2 chi-squared, u16",
            inputs: &[(16, false); 3],
            build: |p| {
                let (n0, n1, n2) = (U16::input(p), U16::input(p), U16::input(p));
                // alpha = (4 N0 N2 - N1^2)^2
                let alpha = &(&(&n0 * &n2) * 4) - &(&n1 * &n1);
                let alpha = &alpha * &alpha;
                // 2 N0 + N1 and 2 N2 + N1
                let a = &(&n0 * 2) + &n1;
                let b = &(&n2 * 2) + &n1;
                let beta1 = &(&a * &a) * 2;
                let beta2 = &a * &b;
                let beta3 = &(&b * &b) * 2;
                for y in [&alpha, &beta1, &beta2, &beta3] {
                    p.output(y);
                }
            },
            reference: |x| {
                let [n0, n1, n2] = [0, 1, 2].map(|i| x[i] as u16);
                let alpha = n0
                    .wrapping_mul(n2)
                    .wrapping_mul(4)
                    .wrapping_sub(n1.wrapping_mul(n1));
                let a = n0.wrapping_mul(2).wrapping_add(n1);
                let b = n2.wrapping_mul(2).wrapping_add(n1);
                [
                    alpha.wrapping_mul(alpha),
                    a.wrapping_mul(a).wrapping_mul(2),
                    a.wrapping_mul(b),
                    b.wrapping_mul(b).wrapping_mul(2),
                ]
                .iter()
                .map(|&v| v as i128)
                .collect()
            },
        },
        Spec {
            key: "t2-crc8",
            name: "T2 CRC-8 of a byte, u8",
            inputs: &[(8, false)],
            build: |p| {
                let mut crc = U8::input(p);
                let (poly, zero) = (U8::constant(p, CRC8_POLY), U8::constant(p, 0));
                for _ in 0..8 {
                    // T2: t = crc >>> 7; t = t ? 7 : 0 (the select reads
                    // bit 0 of t: crc's top bit).
                    let t = crc.bit(7).select(&poly, &zero);
                    crc = &t ^ &(&crc << 1);
                }
                p.output(&crc);
            },
            reference: |x| vec![crc8(x[0] as u8) as i128],
        },
        Spec {
            key: "t2-crc32",
            name: "T2 CRC-32 of 4 bytes, u32",
            inputs: &[(32, false)],
            build: |p| {
                let data = U32::input(p);
                let mut crc = U32::constant(p, u32::MAX);
                for i in (0..4).rev() {
                    crc = &crc ^ &(&(&data << (8 * i)) >> 24);
                    for _ in 0..8 {
                        // T2: crc = (crc) ? t ^ poly : t, on crc's bit 0.
                        let t = &crc >> 1;
                        crc = crc.bit(0).select(&(&t ^ CRC32_POLY as i64), &t);
                    }
                }
                p.output(&!&crc);
            },
            reference: |x| vec![crc32(x[0] as u32) as i128],
        },
        Spec {
            key: "t2-hamming",
            name: "T2 Hamming distance of 8 u4",
            inputs: U4X16,
            build: |p| {
                let v: Vec<U4> = (0..16).map(|_| U4::input(p)).collect();
                let sum = (0..8).fold(U4::constant(p, 0), |sum, i| {
                    &sum + &v[i].ne(&v[8 + i]).to_word::<4>()
                });
                p.output(&sum);
            },
            reference: |x| {
                let n = (0..8).filter(|&i| x[i] != x[8 + i]).count();
                vec![wrap(n as i128, 4)]
            },
        },
        Spec {
            key: "t2-manhattan",
            name: "T2 Manhattan distance of 8 u4",
            inputs: U4X16,
            build: |p| {
                let v: Vec<U4> = (0..16).map(|_| U4::input(p)).collect();
                let dist = (0..8).fold(U4::constant(p, 0), |dist, i| {
                    let d = &v[i] - &v[8 + i];
                    // T2: sign = d >>> 3 (the top bit); ~d + 1 = -d.
                    &dist + &d.bit(3).select(&-&d, &d)
                });
                p.output(&dist);
            },
            reference: |x| {
                let dist = (0..8).fold(0, |dist, i| {
                    let d = wrap(x[i] - x[8 + i], 4);
                    let abs = if d >> 3 == 1 { wrap(-d, 4) } else { d };
                    wrap(dist + abs, 4)
                });
                vec![dist]
            },
        },
        Spec {
            key: "t2-batcher",
            name: "T2 Batcher sort of 8 u4 (its 18 comparators)",
            inputs: U4X8,
            build: |p| compare_exchanges(p, &BATCHER8),
            reference: |x| exchange(x, &BATCHER8),
        },
        Spec {
            key: "t2-isort",
            name: "T2 insertion sort of 8 u4",
            inputs: U4X8,
            build: |p| compare_exchanges(p, &insertion8()),
            reference: |x| exchange(x, &insertion8()),
        },
        Spec {
            key: "t2-jenkins",
            name: "T2 Jenkins hash of 2 u32",
            inputs: &[(32, false); 2],
            build: |p| {
                let keys = [U32::input(p), U32::input(p)];
                let mut h = U32::constant(p, 0);
                for k in &keys {
                    h = &h + k;
                    // T2: ((h << 10) << 16) >>> 16
                    h = &h + &(&(&h << 26) >> 16);
                    h = &h ^ &(&h >> 6);
                }
                h = &h + &(&h << 3);
                h = &h ^ &(&h >> 11);
                // T2: ((h << 15) << 16) >>> 16, then (h << 16) >>> 16
                h = &h + &(&(&h << 31) >> 16);
                p.output(&(&(&h << 16) >> 16));
            },
            reference: |x| vec![jenkins(&[x[0] as u32, x[1] as u32]) as i128],
        },
        Spec {
            key: "t2-mmult",
            name: "T2 4x4 matrix product, u8",
            inputs: U8X32,
            build: |p| {
                let m: Vec<U8> = (0..32).map(|_| U8::input(p)).collect();
                let (m1, m2) = m.split_at(16);
                for i in 0..4 {
                    for j in 0..4 {
                        let r = (0..4).fold(U8::constant(p, 0), |r, k| {
                            &r + &(&m1[i * 4 + k] * &m2[k * 4 + j])
                        });
                        p.output(&r);
                    }
                }
            },
            reference: |x| {
                let (m1, m2) = x.split_at(16);
                let mut out = Vec::new();
                for i in 0..4 {
                    for j in 0..4 {
                        let r = (0..4).fold(0u8, |r, k| {
                            r.wrapping_add((m1[i * 4 + k] as u8).wrapping_mul(m2[k * 4 + j] as u8))
                        });
                        out.push(r as i128);
                    }
                }
                out
            },
        },
        Spec {
            key: "t2-nn10",
            name: "T2 NN nn_10 (784 u16 inputs, clear weights)",
            inputs: U16X784,
            build: |p| {
                let x: Vec<U16> = (0..784).map(|_| U16::input(p)).collect();
                // FC1: one dot product with the inputs, shared by the ten
                // neurons (see the module doc), each adding its bias; the
                // square as activation.
                let s = x
                    .iter()
                    .zip(NN_W)
                    .fold(U16::constant(p, 0), |s, (x, w)| &s + &(x * w as i64));
                let l1: Vec<U16> = NN_B1
                    .iter()
                    .map(|&b| {
                        let l = &s + b as i64;
                        &l * &l
                    })
                    .collect();
                // FC2: again one dot product (with w[0..10]) for the ten
                // outputs, each adding its bias.
                let t = l1
                    .iter()
                    .zip(NN_W)
                    .fold(U16::constant(p, 0), |t, (l, w)| &t + &(l * w as i64));
                for b in NN_B2 {
                    p.output(&(&t + b as i64));
                }
            },
            reference: nn,
        },
        Spec {
            key: "t2-pir8",
            name: "T2 PIR, 16 entries of u6",
            inputs: U6X17,
            build: |p| {
                let key = U6::input(p);
                let db: Vec<U6> = (0..16).map(|_| U6::input(p)).collect();
                let zero = U6::constant(p, 0);
                let result = db.iter().enumerate().fold(zero.clone(), |r, (i, v)| {
                    let hit = key.eq(&U6::constant(p, i));
                    &r ^ &hit.select(v, &zero)
                });
                p.output(&result);
            },
            reference: |x| {
                let r = (0..16).fold(0, |r, i| r ^ if x[0] == i as i128 { x[1 + i] } else { 0 });
                vec![r]
            },
        },
        Spec {
            key: "t2-fib20",
            name: "T2 Fibonacci, 20 steps, u16",
            inputs: &[(16, false); 2],
            build: |p| {
                let (mut f1, mut f2) = (U16::input(p), U16::input(p));
                for _ in 0..20 {
                    let fib = &f1 + &f2;
                    f1 = f2;
                    f2 = fib;
                }
                p.output(&f2);
            },
            reference: |x| {
                let (mut f1, mut f2) = (x[0] as u16, x[1] as u16);
                for _ in 0..20 {
                    (f1, f2) = (f2, f1.wrapping_add(f2));
                }
                vec![f2 as i128]
            },
        },
        Spec {
            key: "t2-euclid64",
            name: "T2 squared Euclidean distance of 64 u8",
            inputs: U8X128,
            build: |p| {
                let x: Vec<U8> = (0..128).map(|_| U8::input(p)).collect();
                let dist = (0..64).fold(U8::constant(p, 0), |dist, i| {
                    let d = &x[i] - &x[64 + i];
                    &dist + &(&d * &d)
                });
                p.output(&dist);
            },
            reference: |x| {
                let dist = (0..64).fold(0u8, |dist, i| {
                    let d = (x[i] as u8).wrapping_sub(x[64 + i] as u8);
                    dist.wrapping_add(d.wrapping_mul(d))
                });
                vec![dist as i128]
            },
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::run_clear;
    use rand::SeedableRng;

    fn spec(key: &str) -> Spec {
        all().into_iter().find(|s| s.key == key).unwrap()
    }

    /// T2's own inputs give the outputs its sources state (worked out in
    /// T2's semantics at these widths), from plain Rust and from hearth on
    /// the clear backend.
    #[test]
    fn t2_inputs_give_t2_outputs() {
        let ten = |v: &[i128]| v.to_vec();
        let mut euclid = vec![10; 128];
        euclid[..8].copy_from_slice(&[10, 15, 3, 9, 11, 13, 12, 10]);
        euclid[64..72].copy_from_slice(&[11, 13, 3, 10, 11, 11, 12, 12]);
        let mut pir = vec![3];
        pir.extend(1..=16);
        let mmult: Vec<i128> = (0..10).chain(0..6).chain(4..10).chain(0..10).collect();
        let cases: Vec<(&str, Vec<i128>, Vec<i128>)> = vec![
            ("t2-chi2", vec![2, 7, 9], vec![529, 242, 275, 1250]),
            ("t2-crc8", vec![66], vec![201]),
            ("t2-crc32", vec![0x6665_6542], vec![0xE21E_1DEE]),
            (
                "t2-hamming",
                ten(&[1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 3, 3, 5, 5, 2, 3]),
                vec![5],
            ),
            // 18 and 17 are encrypted in 4 bits by T2: 2 and 1.
            (
                "t2-manhattan",
                ten(&[
                    10,
                    15,
                    3,
                    8,
                    18 % 16,
                    7,
                    4,
                    10,
                    11,
                    13,
                    3,
                    11,
                    17 % 16,
                    4,
                    7,
                    10,
                ]),
                vec![13],
            ),
            (
                "t2-batcher",
                vec![5, 6, 2, 8, 1, 4, 2, 3],
                vec![1, 2, 2, 3, 4, 5, 6, 8],
            ),
            (
                "t2-isort",
                vec![5, 6, 2, 8, 1, 4, 2, 3],
                vec![1, 2, 2, 3, 4, 5, 6, 8],
            ),
            ("t2-jenkins", vec![24930, 25444], vec![59878]),
            (
                "t2-mmult",
                mmult,
                vec![
                    30, 36, 32, 38, 110, 132, 104, 126, 110, 128, 56, 74, 70, 84, 68, 82,
                ],
            ),
            (
                "t2-nn10",
                (0..784).map(|i| i % 256).collect(),
                vec![3277, 3250, 3282, 3283, 3196, 3212, 3307, 3283, 3132, 3139],
            ),
            ("t2-pir8", pir, vec![4]),
            ("t2-fib20", vec![1, 1], vec![17711]),
            ("t2-euclid64", euclid, vec![14]),
        ];
        assert_eq!(cases.len(), all().len());
        for (key, ins, want) in cases {
            let s = spec(key);
            assert_eq!(s.inputs.len(), ins.len(), "{key}");
            assert_eq!(s.reference(&ins), want, "{key}: plain Rust");
            let prog = s.program(&hearth::INSECURE_TEST_BITS, 2).unwrap();
            assert_eq!(run_clear(&prog, &ins), want, "{key}: hearth");
        }
    }

    /// Every T2 program on the clear backend equals plain Rust on random
    /// inputs (and on zeros and ties), on the bits family's test set.
    #[test]
    fn every_t2_program_equals_plain_rust_on_the_clear_backend() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(41);
        let keys: Vec<&str> = crate::programs::Suite::All
            .specs()
            .iter()
            .map(|s| s.key)
            .collect();
        let unique: std::collections::BTreeSet<_> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len(), "keys unique across suites");
        assert_eq!(keys.len(), 9 + 13 + 1);
        for spec in all() {
            let prog = spec.program(&hearth::INSECURE_TEST_BITS, 2).unwrap();
            for case in 0..10 {
                let mut ins = spec.random_inputs(&mut rng);
                if case == 0 {
                    ins.iter_mut().for_each(|v| *v = 0);
                } else if case == 1 {
                    let v = ins[0];
                    ins.iter_mut().step_by(2).for_each(|x| *x = v);
                } else if case < 5 && spec.key == "t2-pir8" {
                    // Keys that hit an entry (a random 6-bit key hits one
                    // time in four).
                    ins[0] = [0, 7, 15][case - 2];
                }
                assert_eq!(
                    run_clear(&prog, &ins),
                    spec.reference(&ins),
                    "{}: {ins:?}",
                    spec.name
                );
            }
        }
    }

    /// The networks as T2 emits them: Batcher's 18 comparators miss (6, 7)
    /// and so fail on 16 of the 256 inputs of 0s and 1s; the insertion
    /// sort's 28 sort every one (so every input, by the 0-1 principle).
    #[test]
    fn the_networks_are_t2s() {
        let zero_one =
            |bits: u32| -> Vec<i128> { (0..8).map(|i| (bits >> i) as i128 & 1).collect() };
        let sorted = |v: &[i128]| v.windows(2).all(|w| w[0] <= w[1]);
        let batcher_fails = (0..256u32)
            .filter(|&b| !sorted(&exchange(&zero_one(b), &BATCHER8)))
            .count();
        assert_eq!(batcher_fails, 16);
        assert_eq!(insertion8().len(), 28);
        assert!((0..256u32).all(|b| sorted(&exchange(&zero_one(b), &insertion8()))));
    }

    /// The CRCs are the standard ones: CRC-32 of "Beef" (T2's bytes) is
    /// zlib's, and T2's CRC-8 of one byte, chained over bytes, gives
    /// CRC-8/SMBUS's check value (polynomial 7, initial value 0).
    #[test]
    fn the_crcs_are_standard() {
        assert_eq!(crc32(u32::from_le_bytes(*b"Beef")), 0xE21E_1DEE);
        let check = b"123456789".iter().fold(0u8, |crc, &b| crc8(crc ^ b));
        assert_eq!(check, 0xF4);
    }
}
