//! Fused sums of products (dot products, matrix and convolution entries).
//!
//! Every product's digit products, every clear factor's shifted `+-x`
//! rows (one per non-zero Koyama-Tsuruoka digit of the factor) and the
//! constant go into *one* column compression ([`super::compress`]): the
//! partial sums stay redundant until the end and no carry-propagating
//! addition is ever built (the CSA paper's fused accumulation, in
//! signed-binary digits, where even the last addition is carry-free).
//!
//! Length rule: at most the longest column plus the bits of the number of
//! entries in it, plus two.

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use super::mul::product_columns;
use super::scalar::recode;
use super::{compress, Digits};
use crate::circuit::{CircuitBuilder, Wire};
use crate::error::Error;

/// `sum_i x_i y_i + sum_j k_j z_j + c` for encrypted pairs `(x_i, y_i)`,
/// clear factors `k_j` of encrypted `z_j` and a clear constant `c`.
pub fn dot(
    b: &mut CircuitBuilder,
    pairs: &[(&Digits, &Digits)],
    scaled: &[(&Digits, &BigInt)],
    c: &BigInt,
) -> Result<Digits, Error> {
    let mut cols: Vec<Vec<Wire>> = Vec::new();
    for (x, y) in pairs {
        merge(&mut cols, product_columns(b, x, y)?, 0);
    }
    for (z, k) in scaled {
        if k.is_zero() || z.is_empty() {
            continue;
        }
        let nz = z.neg(b)?;
        for (shift, &d) in recode(k).iter().enumerate() {
            if d != 0 {
                let row = if (d > 0) != k.is_negative() { z } else { &nz };
                let row: Vec<Vec<Wire>> = row.wires().iter().map(|&w| vec![w]).collect();
                merge(&mut cols, row, shift);
            }
        }
    }
    let cd = Digits::constant(b, c);
    merge(&mut cols, cd.wires().iter().map(|&w| vec![w]).collect(), 0);
    if cols.iter().all(|c| c.len() <= 1) {
        // Already one signed-binary row (a sum of shifted copies that do
        // not overlap): nothing to add.
        let row = cols
            .into_iter()
            .map(|c| c.first().copied().unwrap_or_else(|| b.constant(0)))
            .collect();
        return Digits::from_wires(b, row);
    }
    compress(b, cols)
}

/// Adds `more` (column `j` of weight `2^(j + shift)`) into `cols`.
fn merge(cols: &mut Vec<Vec<Wire>>, more: Vec<Vec<Wire>>, shift: usize) {
    if cols.len() < more.len() + shift {
        cols.resize(more.len() + shift, Vec::new());
    }
    for (j, col) in more.into_iter().enumerate() {
        cols[j + shift].extend(col);
    }
}
