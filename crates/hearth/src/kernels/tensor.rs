//! Row-major tensors of any element: encrypted values or clear weights.

use num_bigint::BigInt;

use crate::error::Error;

/// A row-major tensor: a vector is `[n]`, a matrix `[rows, cols]`, feature
/// maps `[channels, height, width]`, convolution weights
/// `[out channels, in channels, rows, cols]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T> Tensor<T> {
    /// A tensor of `shape` holding `data` in row-major order; their sizes
    /// must agree.
    pub fn new(shape: &[usize], data: Vec<T>) -> Result<Self, Error> {
        let size = size_of(shape)?;
        if size != data.len() {
            return Err(Error::Dimensions(format!(
                "shape {shape:?} holds {size} elements, {} given",
                data.len()
            )));
        }
        Ok(Tensor {
            shape: shape.to_vec(),
            data,
        })
    }

    /// A tensor of `shape` whose element at each index is `f(index)`.
    pub fn from_fn(shape: &[usize], mut f: impl FnMut(&[usize]) -> T) -> Result<Self, Error> {
        let size = size_of(shape)?;
        let mut idx = vec![0; shape.len()];
        let mut data = Vec::with_capacity(size);
        for _ in 0..size {
            data.push(f(&idx));
            for d in (0..shape.len()).rev() {
                idx[d] += 1;
                if idx[d] < shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Ok(Tensor {
            shape: shape.to_vec(),
            data,
        })
    }

    /// The dimensions, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements in row-major order.
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// The elements, row-major.
    pub fn into_data(self) -> Vec<T> {
        self.data
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether it has no element.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The element at `idx`, or `None` outside the shape.
    pub fn get(&self, idx: &[usize]) -> Option<&T> {
        if idx.len() != self.shape.len() || idx.iter().zip(&self.shape).any(|(i, n)| i >= n) {
            return None;
        }
        let flat = idx
            .iter()
            .zip(&self.shape)
            .fold(0, |acc, (&i, &n)| acc * n + i);
        self.data.get(flat)
    }

    /// The same elements under another shape of the same size.
    pub fn reshape(self, shape: &[usize]) -> Result<Self, Error> {
        Tensor::new(shape, self.data)
    }

    /// Applies `f` to every element.
    pub fn map<U>(&self, f: impl FnMut(&T) -> U) -> Tensor<U> {
        Tensor {
            shape: self.shape.clone(),
            data: self.data.iter().map(f).collect(),
        }
    }

    /// Checks that this tensor has `rank` dimensions; names it `what`.
    pub(crate) fn expect_rank(&self, what: &str, rank: usize) -> Result<(), Error> {
        if self.shape.len() != rank {
            return Err(Error::Dimensions(format!(
                "{what} must have {rank} dimensions, its shape is {:?}",
                self.shape
            )));
        }
        Ok(())
    }
}

impl Tensor<BigInt> {
    /// Clear weights from `i64`s.
    pub fn from_i64(shape: &[usize], data: &[i64]) -> Result<Self, Error> {
        Tensor::new(shape, data.iter().map(|&v| BigInt::from(v)).collect())
    }
}

fn size_of(shape: &[usize]) -> Result<usize, Error> {
    shape
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| Error::Dimensions(format!("shape {shape:?} overflows usize")))
}
