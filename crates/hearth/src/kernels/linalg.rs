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
/// copies of the row's elements: no product bootstraps.
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
    Tensor::from_fn(&[m, n], |ij| {
        let scaled: Vec<_> = (0..k)
            .map(|t| (&ad[ij[0] * k + t], &wd[t * n + ij[1]]))
            .collect();
        let b = bias.map_or(&zero, |bias| &bias.data()[ij[1]]);
        E::fused_sum(program, &[], &scaled, b)
    })
}
