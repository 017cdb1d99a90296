//! tfhe-rs's side of `bench programs`: each program written with its
//! high-level API as a skilled user would (its fused `sum`, scalar
//! operands where a value is clear, rayon over independent operations,
//! clear selects where the values are clear), on its default parameters,
//! run inside the comparison's thread pool.

use std::time::{Duration, Instant};

use rayon::prelude::*;
use tfhe::prelude::*;
use tfhe::{ClientKey, FheBool, FheInt32, FheUint16, FheUint32, FheUint64, FheUint8};

use super::{DIABETES_BIAS, DIABETES_WEIGHTS, HORNER, SORT8};

/// What one run gave: the decrypted outputs, the time of the encrypted
/// computation alone (encryption and decryption outside), and tfhe-rs's
/// bootstraps in it where the build counts them (`tfhe-pbs-stats`).
pub struct Run {
    pub outputs: Vec<i128>,
    pub time: Duration,
    pub pbs: Option<u64>,
}

/// `f`'s result, its time, and tfhe-rs's bootstraps in it where the build
/// counts them.
pub(super) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration, Option<u64>) {
    #[cfg(feature = "tfhe-pbs-stats")]
    tfhe::reset_pbs_count();
    let start = Instant::now();
    let out = f();
    let time = start.elapsed();
    #[cfg(feature = "tfhe-pbs-stats")]
    let pbs = Some(tfhe::get_pbs_count());
    #[cfg(not(feature = "tfhe-pbs-stats"))]
    let pbs = None;
    (out, time, pbs)
}

fn u32s(ck: &ClientKey, x: &[i128]) -> Vec<FheUint32> {
    x.iter()
        .map(|&v| FheUint32::encrypt(v as u32, ck))
        .collect()
}

fn u16s(ck: &ClientKey, x: &[i128]) -> Vec<FheUint16> {
    x.iter()
        .map(|&v| FheUint16::encrypt(v as u16, ck))
        .collect()
}

/// Whether the current thread's tfhe-rs key is a CPU key (its GPU key has
/// no select between clear values nor `if_then_zero`: they panic there).
pub(super) fn on_cpu() -> bool {
    tfhe::FheUint2::encrypt_trivial(0u8).current_device() == tfhe::Device::Cpu
}

/// A `u32` result, decrypted, as the reference's `i128`.
fn u32_out(y: &FheUint32, ck: &ClientKey) -> i128 {
    let y: u32 = y.decrypt(ck);
    y as i128
}

/// The compare-exchanges of [`SORT8`] in layers of independent ones.
fn sort_layers() -> Vec<Vec<(usize, usize)>> {
    layers(&SORT8)
}

/// The compare-exchanges `net` in layers of independent ones, each placed
/// after every earlier one on its wires (so the layers, run in order,
/// compute what `net` does in its order).
pub(super) fn layers(net: &[(usize, usize)]) -> Vec<Vec<(usize, usize)>> {
    let mut layers: Vec<Vec<(usize, usize)>> = Vec::new();
    let wires = net.iter().map(|&(i, j)| i.max(j) + 1).max().unwrap_or(0);
    let mut ready = vec![0usize; wires];
    for &(i, j) in net {
        let l = ready[i].max(ready[j]);
        if layers.len() <= l {
            layers.push(Vec::new());
        }
        layers[l].push((i, j));
        ready[i] = l + 1;
        ready[j] = l + 1;
    }
    layers
}

/// tfhe-rs's forms of the ERC7984 transfer that compute it as the
/// reference does (the amount moves only when `from >= amount`; `to +
/// amount` wraps): those its ERC7984 benchmark times on the CPU
/// (`tfhe-benchmark/benches/high_level_api/erc7984.rs`, its `par_`
/// functions) and its documentation shows
/// (`tfhe/docs/getting-started/benchmarks/cpu/cpu-erc7984.md`). Its
/// fourth, `safe`, also refuses a transfer that would overflow `to`: another
/// function, left out.
const ERC7984_FORMS: [&str; 3] = ["whitepaper", "no_cmux", "overflow"];

/// The forms tfhe-rs's side times program `key` in, the fastest its
/// reference: tfhe-rs's own for ERC7984, one unnamed form for the others.
pub fn forms(key: &str) -> &'static [&'static str] {
    match key {
        "erc7984" => &ERC7984_FORMS,
        _ => &[""],
    }
}

/// The ERC7984 transfer in tfhe-rs's form `form` (see [`ERC7984_FORMS`]):
/// `(new_from, new_to)`. Written after its benchmark's functions: the
/// whitepaper's `if_then_zero` on the CPU, a select against a trivial zero
/// on the GPU, as its benchmark does there.
fn transfer(
    form: &str,
    from: &FheUint64,
    to: &FheUint64,
    amount: &FheUint64,
    cpu: bool,
) -> (FheUint64, FheUint64) {
    match form {
        // A comparison, then a multiplexer picks the amount or zero.
        "whitepaper" => {
            let enough = from.ge(amount);
            let moved = if cpu {
                enough.if_then_zero(amount)
            } else {
                enough.select(amount, &FheUint64::encrypt_trivial(0u64))
            };
            rayon::join(|| from - &moved, || to + &moved)
        }
        // The comparison's boolean as a 0/1 integer, times the amount.
        "no_cmux" => {
            let moved = amount * FheUint64::cast_from(from.ge(amount));
            rayon::join(|| from - &moved, || to + &moved)
        }
        // The subtraction's borrow is the comparison: keep `from` where it
        // borrowed, and move the amount times its negation.
        "overflow" => {
            let (diff, short) = from.overflowing_sub(amount);
            let enough = !&short;
            rayon::join(
                || short.select(from, &diff),
                || to + (amount * FheUint64::cast_from(enough)),
            )
        }
        other => unreachable!("no ERC7984 form {other}"),
    }
}

/// Runs the program `key` on `inputs` with tfhe-rs in its form `form`
/// (one of [`forms`]`(key)`), on the current thread's server key (call
/// inside the pool).
pub fn run(key: &str, form: &str, ck: &ClientKey, x: &[i128]) -> Run {
    let (outputs, time, pbs) = match key {
        "sum" => {
            let xs = u32s(ck, x);
            let (y, t, p) = timed(|| FheUint32::sum(xs.iter().collect::<Vec<_>>()));
            (vec![u32_out(&y, ck)], t, p)
        }
        "dot" => {
            let xs = u16s(ck, x);
            let (y, t, p) = timed(|| {
                let products: Vec<FheUint32> = (0..16)
                    .into_par_iter()
                    .map(|i| {
                        let (a, b) = rayon::join(
                            || FheUint32::cast_from(xs[i].clone()),
                            || FheUint32::cast_from(xs[16 + i].clone()),
                        );
                        &a * &b
                    })
                    .collect();
                FheUint32::sum(products.iter().collect::<Vec<_>>())
            });
            (vec![u32_out(&y, ck)], t, p)
        }
        "horner" => {
            let xe = FheUint32::encrypt(x[0] as u32, ck);
            let (y, t, p) = timed(|| {
                let mut acc = &(&xe * HORNER[0]) + HORNER[1];
                for &c in &HORNER[2..] {
                    acc = &(&acc * &xe) + c;
                }
                acc
            });
            (vec![u32_out(&y, ck)], t, p)
        }
        "argmax" => {
            let xs = u16s(ck, x);
            let cpu = on_cpu();
            let ((m, i), t, p) = timed(|| {
                // The first round's indices are clear: a select between
                // clear values (on the GPU, which has none, between
                // trivial encryptions).
                let mut best: Vec<(FheUint16, FheUint8)> = xs
                    .par_chunks(2)
                    .enumerate()
                    .map(|(k, pair)| {
                        let later: FheBool = pair[1].gt(&pair[0]);
                        let (v, i) = rayon::join(
                            || later.select(&pair[1], &pair[0]),
                            || {
                                let (a, b) = (2 * k as u8 + 1, 2 * k as u8);
                                if cpu {
                                    FheUint8::select(&later, a, b)
                                } else {
                                    let trivial = FheUint8::encrypt_trivial;
                                    later.select(&trivial(a), &trivial(b))
                                }
                            },
                        );
                        (v, i)
                    })
                    .collect();
                while best.len() > 1 {
                    best = best
                        .par_chunks(2)
                        .map(|pair| {
                            let ((a, ia), (b, ib)) = (&pair[0], &pair[1]);
                            let later = b.gt(a);
                            rayon::join(|| later.select(b, a), || later.select(ib, ia))
                        })
                        .collect();
                }
                best.pop().expect("one left")
            });
            let (m, i): (u16, u8) = (m.decrypt(ck), i.decrypt(ck));
            (vec![m as i128, i as i128], t, p)
        }
        "sort" => {
            let xs = u16s(ck, x);
            let (v, t, p) = timed(|| {
                let mut v: Vec<Option<FheUint16>> = xs.into_iter().map(Some).collect();
                for layer in sort_layers() {
                    let pairs: Vec<(usize, usize, FheUint16, FheUint16)> = layer
                        .iter()
                        .map(|&(i, j)| (i, j, v[i].take().unwrap(), v[j].take().unwrap()))
                        .collect();
                    let done: Vec<(usize, usize, FheUint16, FheUint16)> = pairs
                        .into_par_iter()
                        .map(|(i, j, a, b)| {
                            let (lo, hi) = rayon::join(|| a.min(&b), || a.max(&b));
                            (i, j, lo, hi)
                        })
                        .collect();
                    for (i, j, lo, hi) in done {
                        v[i] = Some(lo);
                        v[j] = Some(hi);
                    }
                }
                v.into_iter()
                    .map(|c| c.expect("placed"))
                    .collect::<Vec<_>>()
            });
            let out = v.iter().map(|c| c.decrypt(ck)).map(|y: u16| y as i128);
            (out.collect(), t, p)
        }
        "chacha" => {
            let xs = u32s(ck, x);
            let (v, t, p) = timed(|| {
                let [mut a, mut b, mut c, mut d] = [0, 1, 2, 3].map(|i| xs[i].clone());
                for (r1, r2) in [(16u32, 12u32), (8, 7)] {
                    a = &a + &b;
                    d = (&d ^ &a).rotate_left(r1);
                    c = &c + &d;
                    b = (&b ^ &c).rotate_left(r2);
                }
                [a, b, c, d]
            });
            let out = v.iter().map(|c| c.decrypt(ck)).map(|y: u32| y as i128);
            (out.collect(), t, p)
        }
        "crc16" => {
            let bytes: Vec<FheUint8> = x.iter().map(|&b| FheUint8::encrypt(b as u8, ck)).collect();
            let (y, t, p) = timed(|| {
                let mut crc = FheUint16::encrypt_trivial(0xffffu16);
                for b in &bytes {
                    crc = &crc ^ &(FheUint16::cast_from(b.clone()) << 8u16);
                    for _ in 0..8 {
                        let (top, shifted) = rayon::join(|| crc.ge(0x8000u16), || &crc << 1u16);
                        let xored = &shifted ^ 0x1021u16;
                        crc = top.select(&xored, &shifted);
                    }
                }
                crc
            });
            let y: u16 = y.decrypt(ck);
            (vec![y as i128], t, p)
        }
        "regression" => {
            let xs: Vec<FheInt32> = x.iter().map(|&v| FheInt32::encrypt(v as i32, ck)).collect();
            let (y, t, p) = timed(|| {
                let terms: Vec<FheInt32> = xs
                    .par_iter()
                    .zip(DIABETES_WEIGHTS.par_iter())
                    .map(|(x, &w)| x * w)
                    .collect();
                &terms.iter().sum::<FheInt32>() + DIABETES_BIAS
            });
            let y: i32 = y.decrypt(ck);
            (vec![y as i128], t, p)
        }
        "hamming" => {
            let xs = u32s(ck, x);
            let (y, t, p) = timed(|| (&xs[0] ^ &xs[1]).count_ones());
            let y: u32 = y.decrypt(ck);
            (vec![y as i128], t, p)
        }
        "erc7984" => {
            let [from, to, amount] = [0, 1, 2].map(|i| FheUint64::encrypt(x[i] as u64, ck));
            let cpu = on_cpu();
            let (ys, t, p) = timed(|| transfer(form, &from, &to, &amount, cpu));
            let (new_from, new_to): (u64, u64) = (ys.0.decrypt(ck), ys.1.decrypt(ck));
            (vec![new_from as i128, new_to as i128], t, p)
        }
        other => unreachable!("no tfhe-rs program {other}"),
    };
    Run { outputs, time, pbs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_layers_keep_the_network() {
        let layers = sort_layers();
        let flat: Vec<_> = layers.iter().flatten().copied().collect();
        assert_eq!(flat.len(), SORT8.len());
        for l in &layers {
            let mut seen = [false; 8];
            for &(i, j) in l {
                assert!(!seen[i] && !seen[j], "{l:?}");
                seen[i] = true;
                seen[j] = true;
            }
        }
        // Batcher's 8-input network has depth 6.
        assert_eq!(layers.len(), 6);
    }
}
