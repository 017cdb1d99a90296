//! tfhe-rs's side of T2's suite ([`super::t2`]): each program with its
//! high-level API as a skilled user writes it, on `FheUintN` of the width
//! hearth's side has (FheUint4, FheUint6 for PIR, FheUint8, FheUint16,
//! FheUint32): scalar operands where a value is clear, rayon over
//! independent operations, its fused `sum` for the wide sums, `select`.
//! Where the key is on the CPU, clear selects (`FheUintN::select(c, k,
//! 0)`) and `if_then_zero`; tfhe-rs's GPU key has neither (it panics), so
//! there the same programs select between encrypted values. The
//! duplicate sums of NN nn_10 are computed once, as on hearth's side (see
//! [`super::t2`]). Run inside the comparison's thread pool.

use rayon::prelude::*;
use tfhe::prelude::*;
use tfhe::{ClientKey, FheUint16, FheUint32, FheUint4, FheUint6, FheUint8};

use super::t2::{insertion8, BATCHER8, CRC32_POLY, CRC8_POLY, NN_B1, NN_B2, NN_W};
use super::tfhe_side::{layers, on_cpu, timed, Run};

/// `x` encrypted, each value through `f` (to the clear type of `T`).
fn enc<C, T: FheEncrypt<C, ClientKey>>(ck: &ClientKey, x: &[i128], f: fn(i128) -> C) -> Vec<T> {
    x.iter().map(|&v| T::encrypt(f(v), ck)).collect()
}

/// `ys` decrypted, as the reference's `i128`s.
fn out<C: Into<i128>, T: FheDecrypt<C>>(ys: &[T], ck: &ClientKey) -> Vec<i128> {
    ys.iter().map(|y| y.decrypt(ck).into()).collect()
}

/// Eight words through the compare-exchanges `net`, in layers of
/// independent ones: one comparison each, then both selects at once.
fn compare_exchanges(v: Vec<FheUint4>, net: &[(usize, usize)]) -> Vec<FheUint4> {
    let mut v: Vec<Option<FheUint4>> = v.into_iter().map(Some).collect();
    for layer in layers(net) {
        let pairs: Vec<(usize, usize, FheUint4, FheUint4)> = layer
            .iter()
            .map(|&(a, b)| (a, b, v[a].take().unwrap(), v[b].take().unwrap()))
            .collect();
        let done: Vec<(usize, usize, FheUint4, FheUint4)> = pairs
            .into_par_iter()
            .map(|(a, b, x, y)| {
                let c = y.lt(&x);
                let (lo, hi) = rayon::join(|| c.select(&y, &x), || c.select(&x, &y));
                (a, b, lo, hi)
            })
            .collect();
        for (a, b, lo, hi) in done {
            v[a] = Some(lo);
            v[b] = Some(hi);
        }
    }
    v.into_iter().map(|c| c.expect("placed")).collect()
}

/// Runs T2's program `key` (its `--cases` key without `t2-`) on `x` with
/// tfhe-rs (the current thread's server key; call inside the pool).
pub fn run(key: &str, ck: &ClientKey, x: &[i128]) -> Run {
    let cpu = on_cpu();
    let (outputs, time, pbs) = match key {
        "chi2" => {
            let n: Vec<FheUint16> = enc(ck, x, |v| v as u16);
            let (y, t, p) = timed(|| {
                let (n0, n1, n2) = (&n[0], &n[1], &n[2]);
                let ((n0n2, n1sq), (a, b)) = rayon::join(
                    || rayon::join(|| n0 * n2, || n1 * n1),
                    || rayon::join(|| &(n0 * 2u16) + n1, || &(n2 * 2u16) + n1),
                );
                let alpha = &(&n0n2 * 4u16) - &n1sq;
                let ((alpha, beta1), (beta2, beta3)) = rayon::join(
                    || rayon::join(|| &alpha * &alpha, || &(&a * &a) * 2u16),
                    || rayon::join(|| &a * &b, || &(&b * &b) * 2u16),
                );
                [alpha, beta1, beta2, beta3]
            });
            (out::<u16, _>(&y, ck), t, p)
        }
        "crc8" => {
            let c: Vec<FheUint8> = enc(ck, x, |v| v as u8);
            let (y, t, p) = timed(|| {
                let mut crc = c[0].clone();
                for _ in 0..8 {
                    crc = if cpu {
                        let (poly, shifted) = rayon::join(
                            || FheUint8::select(&crc.ge(0x80u8), CRC8_POLY, 0u8),
                            || &crc << 1u8,
                        );
                        &poly ^ &shifted
                    } else {
                        let (top, shifted) = rayon::join(|| crc.ge(0x80u8), || &crc << 1u8);
                        top.select(&(&shifted ^ CRC8_POLY), &shifted)
                    };
                }
                [crc]
            });
            (out::<u8, _>(&y, ck), t, p)
        }
        "crc32" => {
            let data: Vec<FheUint32> = enc(ck, x, |v| v as u32);
            let (y, t, p) = timed(|| {
                let mut crc: Option<FheUint32> = None;
                for i in (0..4u32).rev() {
                    let byte = (&data[0] << (8 * i)) >> 24u32;
                    // crc starts as all ones: its first XOR is a NOT.
                    let mut c = match crc {
                        None => !&byte,
                        Some(c) => &c ^ &byte,
                    };
                    for _ in 0..8 {
                        c = if cpu {
                            let (poly, t) = rayon::join(
                                || FheUint32::select(&c.is_odd(), CRC32_POLY, 0u32),
                                || &c >> 1u32,
                            );
                            &poly ^ &t
                        } else {
                            let (odd, t) = rayon::join(|| c.is_odd(), || &c >> 1u32);
                            odd.select(&(&t ^ CRC32_POLY), &t)
                        };
                    }
                    crc = Some(c);
                }
                [!&crc.expect("four bytes")]
            });
            (out::<u32, _>(&y, ck), t, p)
        }
        "hamming" => {
            let v: Vec<FheUint4> = enc(ck, x, |v| v as u8);
            let (y, t, p) = timed(|| {
                let ones: Vec<FheUint4> = (0..8)
                    .into_par_iter()
                    .map(|i| FheUint4::cast_from(v[i].ne(&v[8 + i])))
                    .collect();
                [FheUint4::sum(ones.iter().collect::<Vec<_>>())]
            });
            (out::<u8, _>(&y, ck), t, p)
        }
        "manhattan" => {
            let v: Vec<FheUint4> = enc(ck, x, |v| v as u8);
            let (y, t, p) = timed(|| {
                let terms: Vec<FheUint4> = (0..8)
                    .into_par_iter()
                    .map(|i| {
                        let d = &v[i] - &v[8 + i];
                        let (sign, neg) = rayon::join(|| d.ge(8u8), || -&d);
                        sign.select(&neg, &d)
                    })
                    .collect();
                [FheUint4::sum(terms.iter().collect::<Vec<_>>())]
            });
            (out::<u8, _>(&y, ck), t, p)
        }
        "batcher" | "isort" => {
            let v: Vec<FheUint4> = enc(ck, x, |v| v as u8);
            let net = if key == "batcher" {
                BATCHER8.to_vec()
            } else {
                insertion8()
            };
            let (y, t, p) = timed(|| compare_exchanges(v, &net));
            (out::<u8, _>(&y, ck), t, p)
        }
        "jenkins" => {
            let keys: Vec<FheUint32> = enc(ck, x, |v| v as u32);
            let (y, t, p) = timed(|| {
                let mut h: Option<FheUint32> = None;
                for k in &keys {
                    // The hash starts at 0: its first sum is the key.
                    let mut x = match h {
                        None => k.clone(),
                        Some(h) => &h + k,
                    };
                    x = &x + &((&x << 26u32) >> 16u32);
                    x = &x ^ &(&x >> 6u32);
                    h = Some(x);
                }
                let mut h = h.expect("two keys");
                h = &h + &(&h << 3u32);
                h = &h ^ &(&h >> 11u32);
                h = &h + &((&h << 31u32) >> 16u32);
                [(&h << 16u32) >> 16u32]
            });
            (out::<u32, _>(&y, ck), t, p)
        }
        "mmult" => {
            let m: Vec<FheUint8> = enc(ck, x, |v| v as u8);
            let (y, t, p) = timed(|| {
                // Product n is m1[i][k] * m2[k][j] for n = (4 i + j) 4 + k.
                let products: Vec<FheUint8> = (0..64)
                    .into_par_iter()
                    .map(|n| {
                        let (i, j, k) = (n / 16, n / 4 % 4, n % 4);
                        &m[i * 4 + k] * &m[16 + k * 4 + j]
                    })
                    .collect();
                products
                    .par_chunks(4)
                    .map(|row| FheUint8::sum(row.iter().collect::<Vec<_>>()))
                    .collect::<Vec<_>>()
            });
            (out::<u8, _>(&y, ck), t, p)
        }
        "nn10" => {
            let xs: Vec<FheUint16> = enc(ck, x, |v| v as u16);
            let (y, t, p) = timed(|| {
                let terms: Vec<FheUint16> = xs
                    .par_iter()
                    .zip(NN_W.par_iter())
                    .map(|(x, &w)| x * w)
                    .collect();
                let s = FheUint16::sum(terms.iter().collect::<Vec<_>>());
                let l1: Vec<FheUint16> = NN_B1
                    .par_iter()
                    .zip(NN_W.par_iter())
                    .map(|(&b, &w)| {
                        let l = &s + b;
                        &(&l * &l) * w
                    })
                    .collect();
                let t = FheUint16::sum(l1.iter().collect::<Vec<_>>());
                NN_B2.par_iter().map(|&b| &t + b).collect::<Vec<_>>()
            });
            (out::<u16, _>(&y, ck), t, p)
        }
        "pir8" => {
            let v: Vec<FheUint6> = enc(ck, x, |v| v as u8);
            let (key, db) = (&v[0], &v[1..]);
            let (y, t, p) = timed(|| {
                let terms: Vec<FheUint6> = db
                    .par_iter()
                    .enumerate()
                    .map(|(i, entry)| {
                        let hit = key.eq(i as u8);
                        if cpu {
                            hit.if_then_zero(entry)
                        } else {
                            hit.select(entry, &FheUint6::encrypt_trivial(0u8))
                        }
                    })
                    .collect();
                [terms
                    .into_par_iter()
                    .reduce_with(|a, b| &a ^ &b)
                    .expect("16 entries")]
            });
            (out::<u8, _>(&y, ck), t, p)
        }
        "fib20" => {
            let f: Vec<FheUint16> = enc(ck, x, |v| v as u16);
            let (y, t, p) = timed(|| {
                let (mut f1, mut f2) = (f[0].clone(), f[1].clone());
                for _ in 0..20 {
                    let fib = &f1 + &f2;
                    f1 = f2;
                    f2 = fib;
                }
                [f2]
            });
            (out::<u16, _>(&y, ck), t, p)
        }
        "euclid64" => {
            let v: Vec<FheUint8> = enc(ck, x, |v| v as u8);
            let (y, t, p) = timed(|| {
                let squares: Vec<FheUint8> = (0..64)
                    .into_par_iter()
                    .map(|i| {
                        let d = &v[i] - &v[64 + i];
                        &d * &d
                    })
                    .collect();
                [FheUint8::sum(squares.iter().collect::<Vec<_>>())]
            });
            (out::<u8, _>(&y, ck), t, p)
        }
        other => unreachable!("no tfhe-rs program t2-{other}"),
    };
    Run { outputs, time, pbs }
}

#[cfg(test)]
mod tests {
    use super::super::t2::exchange;
    use super::*;

    /// A CPU key is seen as one (so the CPU runs take the clear selects).
    #[test]
    fn a_cpu_key_is_on_the_cpu() {
        let ck = ClientKey::generate(tfhe::ConfigBuilder::default().build());
        tfhe::set_server_key(tfhe::ServerKey::new(&ck));
        assert!(on_cpu());
        tfhe::unset_server_key();
    }

    /// The networks in layers, run layer by layer, do what they do in
    /// T2's order (on every input of 0s and 1s, and on T2's input).
    #[test]
    fn layers_keep_t2s_networks() {
        for net in [BATCHER8.to_vec(), insertion8()] {
            let layered: Vec<(usize, usize)> = layers(&net).into_iter().flatten().collect();
            assert_eq!(layered.len(), net.len());
            let mut inputs: Vec<Vec<i128>> = (0..256u32)
                .map(|b| (0..8).map(|i| (b >> i) as i128 & 1).collect())
                .collect();
            inputs.push(vec![5, 6, 2, 8, 1, 4, 2, 3]);
            for x in inputs {
                assert_eq!(exchange(&x, &layered), exchange(&x, &net), "{x:?}");
            }
        }
    }
}
