//! Fused sums of products modulo `2^width`: the CSA paper's dot product.
//!
//! The partial products of every encrypted pair (one AND each), the rows
//! of every clear factor's non-adjacent form and the constant's bits go
//! into one column compression ([`super::counters::sum_columns`]): every
//! addition of the dot product is a carry-save one, and a single
//! carry-propagating adder finishes the whole sum.

use num_bigint::BigInt;

use super::counters::{sum_columns, CompressKind};
use super::mul::{const_product_columns, partial_products};
use super::Bits;
use crate::circuit::{CircuitBuilder, Wire};
use crate::error::Error;

/// `(sum_i x_i y_i + sum_j k_j z_j + c) mod 2^width`, the operands read as
/// unsigned or, when `signed`, two's complement (which only matters for
/// operands narrower than `width`).
pub fn dot(
    b: &mut CircuitBuilder,
    pairs: &[(&Bits, &Bits)],
    scaled: &[(&Bits, &BigInt)],
    c: &BigInt,
    width: usize,
    signed: bool,
) -> Result<Bits, Error> {
    let mut cols: Vec<Vec<Wire>> = vec![Vec::new(); width];
    for (x, y) in pairs {
        let (x, y) = (
            super::convert::resize(b, x, width, signed),
            super::convert::resize(b, y, width, signed),
        );
        merge(&mut cols, partial_products(b, &x, &y, width, false)?);
    }
    for (z, k) in scaled {
        let z = super::convert::resize(b, z, width, signed);
        merge(&mut cols, const_product_columns(b, &z, k, width, false)?);
    }
    let cb = Bits::constant(b, c, width);
    merge(&mut cols, cb.wires().iter().map(|&w| vec![w]).collect());
    sum_columns(b, cols, width, CompressKind::Auto)
}

fn merge(cols: &mut [Vec<Wire>], more: Vec<Vec<Wire>>) {
    for (col, extra) in cols.iter_mut().zip(more) {
        col.extend(extra);
    }
}
