//! Vectors and matrices: elementwise operations, dot products, matrix
//! products (each output entry one fused sum, all entries in one circuit).

use num_bigint::BigInt;

use super::{Element, Tensor};
use crate::api::Program;
use crate::error::Error;

fn same_shape<T, U>(what: &str, a: &Tensor<T>, b: &Tensor<U>) -> Result<(), Error> {
    if a.shape() != b.shape() {
        return Err(Error::Dimensions(format!(
            "{what}: shapes {:?} and {:?} differ",
            a.shape(),
            b.shape()
        )));
    }
    Ok(())
}

fn zip_with<'p, E: Element<'p>>(
    what: &str,
    a: &Tensor<E>,
    b: &Tensor<E>,
    f: impl Fn(&E, &E) -> E,
) -> Result<Tensor<E>, Error> {
    same_shape(what, a, b)?;
    let data = a
        .data()
        .iter()
        .zip(b.data())
        .map(|(x, y)| f(x, y))
        .collect();
    Tensor::new(a.shape(), data)
}

/// `a + b`, elementwise.
pub fn add<'p, E: Element<'p>>(a: &Tensor<E>, b: &Tensor<E>) -> Result<Tensor<E>, Error> {
    zip_with("elementwise addition", a, b, E::add)
}

/// `a - b`, elementwise.
pub fn sub<'p, E: Element<'p>>(a: &Tensor<E>, b: &Tensor<E>) -> Result<Tensor<E>, Error> {
    zip_with("elementwise subtraction", a, b, E::sub)
}

/// `a * b`, elementwise (Hadamard product).
pub fn mul<'p, E: Element<'p>>(a: &Tensor<E>, b: &Tensor<E>) -> Result<Tensor<E>, Error> {
    zip_with("elementwise product", a, b, E::mul)
}

/// `k * a` for a clear scalar `k` (recoding, never a general product).
pub fn scale<'p, E: Element<'p>>(a: &Tensor<E>, k: &BigInt) -> Tensor<E> {
    a.map(|x| x.scale(k))
}

/// `x . y` for two vectors of one length: one fused sum.
pub fn dot<'p, E: Element<'p>>(
    program: &'p Program,
    x: &Tensor<E>,
    y: &Tensor<E>,
) -> Result<E, Error> {
    x.expect_rank("a dot product's left vector", 1)?;
    same_shape("dot product", x, y)?;
    let pairs: Vec<_> = x.data().iter().zip(y.data()).collect();
    Ok(E::fused_sum(program, &pairs, &[], &BigInt::from(0)))
}

/// `x . w + bias` for clear weights `w`: one fused sum of shifted copies.
pub fn dot_clear<'p, E: Element<'p>>(
    program: &'p Program,
    x: &Tensor<E>,
    w: &Tensor<BigInt>,
    bias: &BigInt,
) -> Result<E, Error> {
    x.expect_rank("a dot product's vector", 1)?;
    same_shape("dot product with clear weights", x, w)?;
    let scaled: Vec<_> = x.data().iter().zip(w.data()).collect();
    Ok(E::fused_sum(program, &[], &scaled, bias))
}

/// `(m, k, n)` of a product of `[m, k]` by `[k, n]`.
fn product_dims<T, U>(a: &Tensor<T>, b: &Tensor<U>) -> Result<(usize, usize, usize), Error> {
    a.expect_rank("a matrix product's left operand", 2)?;
    b.expect_rank("a matrix product's right operand", 2)?;
    let (m, k) = (a.shape()[0], a.shape()[1]);
    let (k2, n) = (b.shape()[0], b.shape()[1]);
    if k != k2 {
        return Err(Error::Dimensions(format!(
            "matrix product of {m}x{k} by {k2}x{n}: inner dimensions differ"
        )));
    }
    Ok((m, k, n))
}

/// `a b` for encrypted matrices `[m, k]` and `[k, n]`, the direct batched
/// form: every entry is one fused sum of `k` products, and all `m n`
/// entries are built into one circuit (run in stages with
/// [`super::CannonPlan`] when memory is short).
pub fn matmul<'p, E: Element<'p>>(
    program: &'p Program,
    a: &Tensor<E>,
    b: &Tensor<E>,
) -> Result<Tensor<E>, Error> {
    let (m, k, n) = product_dims(a, b)?;
    let (ad, bd) = (a.data(), b.data());
    Tensor::from_fn(&[m, n], |ij| {
        let pairs: Vec<_> = (0..k)
            .map(|t| (&ad[ij[0] * k + t], &bd[t * n + ij[1]]))
            .collect();
        E::fused_sum(program, &pairs, &[], &BigInt::from(0))
    })
}

/// `a w + bias` for an encrypted `[m, k]` matrix, clear weights `[k, n]`
/// and an optional clear bias `[n]` (added to every row): linear-layer and
/// linear-regression inference. Every entry is one fused sum of shifted
/// copies of the row's elements: no product bootstraps. Windows are shared
/// across a row: where it saves work, an element's triple `3x` is built
/// once and every weight of its row of `w` is read in width-3 windows
/// (odd digits +-1, +-3: about a quarter of the bits non-zero instead of a
/// third), taking `+-3x` rows where a window needs them.
pub fn matmul_clear<'p, E: Element<'p>>(
    program: &'p Program,
    a: &Tensor<E>,
    w: &Tensor<BigInt>,
    bias: Option<&Tensor<BigInt>>,
) -> Result<Tensor<E>, Error> {
    let (m, k, n) = product_dims(a, w)?;
    let zero = BigInt::from(0);
    if let Some(bias) = bias {
        if bias.shape() != [n] {
            return Err(Error::Dimensions(format!(
                "bias of shape {:?} for {n} output columns",
                bias.shape()
            )));
        }
    }
    let (ad, wd) = (a.data(), w.data());
    // Per weight: (k1, k3) with w = k1 + 3 k3 from its window form.
    let split: Vec<Windows> = wd.iter().map(Windows::of).collect();
    // Per element: its triple, where the windows pay for the addition.
    let triples: Vec<Option<E>> = ad
        .iter()
        .enumerate()
        .map(|(idx, x)| {
            let t = idx % k;
            let len = x.shape().len();
            let row = &split[t * n..(t + 1) * n];
            let plain: usize = row.iter().map(|s| s.plain).sum::<usize>() * len;
            let threes: usize = row.iter().map(|s| s.threes).sum();
            let windowed =
                row.iter().map(|s| s.ones).sum::<usize>() * len + threes * (len + 2) + 2 * len + 4;
            (threes > 0 && windowed < plain).then(|| x.scale(&BigInt::from(3)))
        })
        .collect();
    Tensor::from_fn(&[m, n], |ij| {
        let mut scaled: Vec<(&E, &BigInt)> = Vec::with_capacity(2 * k);
        for t in 0..k {
            let (x, s) = (&ad[ij[0] * k + t], &split[t * n + ij[1]]);
            match &triples[ij[0] * k + t] {
                Some(x3) => {
                    scaled.push((x, &s.k1));
                    scaled.push((x3, &s.k3));
                }
                None => scaled.push((x, &wd[t * n + ij[1]])),
            }
        }
        let b = bias.map_or(&zero, |bias| &bias.data()[ij[1]]);
        E::fused_sum(program, &[], &scaled, b)
    })
}

/// A clear weight read in width-3 windows: `w = k1 + 3 k3`, where `k1`
/// holds the window digits +-1 and `k3` the +-3 (each a non-adjacent
/// form), with their counts and the count of `w`'s own non-adjacent form.
struct Windows {
    k1: BigInt,
    k3: BigInt,
    ones: usize,
    threes: usize,
    plain: usize,
}

impl Windows {
    fn of(w: &BigInt) -> Self {
        let (mut k1, mut k3) = (BigInt::from(0), BigInt::from(0));
        let (mut ones, mut threes) = (0, 0);
        let mut rest = w.clone();
        let mut shift = 0u32;
        let eight = BigInt::from(8);
        while rest != BigInt::from(0) {
            if rest.bit(0) {
                // The odd residue of rest modulo 8, in {-3, -1, 1, 3}.
                let mut d = ((&rest % &eight) + &eight) % &eight;
                if d > BigInt::from(4) {
                    d -= &eight;
                }
                rest -= &d;
                if d.magnitude() == &3u32.into() {
                    k3 += (&d / 3) << shift;
                    threes += 1;
                } else {
                    k1 += &d << shift;
                    ones += 1;
                }
            }
            rest >>= 1u32;
            shift += 1;
        }
        Windows {
            plain: naf_weight(w),
            k1,
            k3,
            ones,
            threes,
        }
    }
}

/// Non-zero digits of the non-adjacent form of `w`.
fn naf_weight(w: &BigInt) -> usize {
    let mut k = num_traits::Signed::abs(w);
    let mut count = 0;
    while k != BigInt::from(0) {
        if k.bit(0) {
            count += 1;
            if k.bit(1) {
                k += 1;
            } else {
                k -= 1;
            }
        }
        k >>= 1u32;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_rebuild_every_weight_with_fewer_digits() {
        let (mut windowed, mut plain) = (0, 0);
        for v in -5000i64..5000 {
            let s = Windows::of(&BigInt::from(v));
            assert_eq!(&s.k1 + 3 * &s.k3, BigInt::from(v), "{v}");
            assert_eq!(naf_weight(&s.k1), s.ones, "{v}: k1 is its own NAF");
            assert_eq!(naf_weight(&s.k3), s.threes, "{v}: k3 is its own NAF");
            windowed += s.ones + s.threes;
            plain += s.plain;
        }
        assert!(
            windowed * 10 < plain * 9,
            "{windowed} window digits vs {plain} NAF digits"
        );
    }
}
