//! What a kernel needs of an encrypted integer, for both families.

use num_bigint::BigInt;

use crate::api::{Int, Program, Value, Word};

/// An encrypted integer a kernel can compute on: [`Int`] (exact: results
/// grow as needed) or a [`Word`] (fixed width, wrapping like Rust's
/// `wrapping_*`).
pub trait Element<'p>: Clone + Value + Sized {
    /// The program it belongs to.
    fn owner(&self) -> &'p Program;
    /// A clear constant of this kind.
    fn constant(program: &'p Program, value: &BigInt) -> Self;
    /// The family's addition (exact, or wrapping for words).
    fn add(&self, rhs: &Self) -> Self;
    /// The family's subtraction.
    fn sub(&self, rhs: &Self) -> Self;
    /// The family's product.
    fn mul(&self, rhs: &Self) -> Self;
    /// `k * self` for a clear `k` (recoding; never a general product).
    fn scale(&self, k: &BigInt) -> Self;
    /// `sum products[i].0 * products[i].1 + sum scaled[j].1 * scaled[j].0 +
    /// bias`, as one fused column compression.
    fn fused_sum(
        program: &'p Program,
        products: &[(&Self, &Self)],
        scaled: &[(&Self, &BigInt)],
        bias: &BigInt,
    ) -> Self;
    /// The larger of the two.
    fn max(&self, rhs: &Self) -> Self;
    /// `max(self, 0)`.
    fn relu(&self) -> Self;
    /// `floor(self / 2^k)`.
    fn shr_floor(&self, k: usize) -> Self;
    /// The same value on at least `n` digits (words keep their width), so
    /// results of different lengths can form one tensor of a signature.
    fn widen(&self, n: usize) -> Self;
}

/// Widens every element to the longest one's length (see
/// [`Element::widen`]).
pub fn widen_all<'p, E: Element<'p>>(xs: &[E]) -> Vec<E> {
    let n = xs.iter().map(|x| x.shape().len()).max().unwrap_or(0);
    xs.iter().map(|x| x.widen(n)).collect()
}

impl<'p> Element<'p> for Int<'p> {
    fn owner(&self) -> &'p Program {
        Int::owner(self)
    }
    fn constant(program: &'p Program, value: &BigInt) -> Self {
        program.constant(value.clone())
    }
    fn add(&self, rhs: &Self) -> Self {
        self + rhs
    }
    fn sub(&self, rhs: &Self) -> Self {
        self - rhs
    }
    fn mul(&self, rhs: &Self) -> Self {
        self * rhs
    }
    fn scale(&self, k: &BigInt) -> Self {
        self.scalar_mul(k.clone())
    }
    fn fused_sum(
        program: &'p Program,
        products: &[(&Self, &Self)],
        scaled: &[(&Self, &BigInt)],
        bias: &BigInt,
    ) -> Self {
        Int::fused_sum(program, products, scaled, bias)
    }
    fn max(&self, rhs: &Self) -> Self {
        Int::max(self, rhs)
    }
    fn relu(&self) -> Self {
        Int::relu(self)
    }
    fn shr_floor(&self, k: usize) -> Self {
        Int::shr_floor(self, k)
    }
    fn widen(&self, n: usize) -> Self {
        Int::widen(self, n)
    }
}

impl<'p, const BITS: usize, const SIGNED: bool> Element<'p> for Word<'p, BITS, SIGNED> {
    fn owner(&self) -> &'p Program {
        Word::owner(self)
    }
    fn constant(program: &'p Program, value: &BigInt) -> Self {
        Word::constant(program, value.clone())
    }
    fn add(&self, rhs: &Self) -> Self {
        self + rhs
    }
    fn sub(&self, rhs: &Self) -> Self {
        self - rhs
    }
    fn mul(&self, rhs: &Self) -> Self {
        self * rhs
    }
    fn scale(&self, k: &BigInt) -> Self {
        Word::fused_sum(self.owner(), &[], &[(self, k)], &BigInt::from(0))
    }
    fn fused_sum(
        program: &'p Program,
        products: &[(&Self, &Self)],
        scaled: &[(&Self, &BigInt)],
        bias: &BigInt,
    ) -> Self {
        Word::fused_sum(program, products, scaled, bias)
    }
    fn max(&self, rhs: &Self) -> Self {
        Word::max(self, rhs)
    }
    fn relu(&self) -> Self {
        Word::relu(self)
    }
    fn shr_floor(&self, k: usize) -> Self {
        Word::shr_floor(self, k)
    }
    fn widen(&self, _n: usize) -> Self {
        self.clone()
    }
}
