//! Kernels: vectors, matrices, dot products, convolutions, activations and
//! pooling over encrypted integers of either family ([`Element`]: [`Int`]
//! or any [`Word`]), built into the caller's [`Program`] so that every
//! independent bootstrap of the whole kernel runs together.
//!
//! Every sum of products is *fused*: all partial products and clear-weight
//! rows of one output go into one column compression ([`Element::fused_sum`]),
//! so a dot product or a convolution output costs its products and one
//! compression, with at most one carry-propagating addition (none in the
//! digits family). Clear weights never cost a general product: each
//! contributes shifted copies of its operand, one per non-zero recoded
//! digit.
//!
//! Shapes are checked before anything is built: a mismatch is an
//! [`Error::Dimensions`]; errors inside the circuit are kept by the
//! program as usual.
//!
//! ```
//! use hearth::api::{clear_digits, clear_value, Program};
//! use hearth::backend::ClearBackend;
//! use hearth::kernels::{self, Tensor};
//! use hearth::INSECURE_TEST_DIGITS;
//!
//! let p = Program::new(&INSECURE_TEST_DIGITS);
//! let x = Tensor::new(&[2, 2], (0..4).map(|_| p.input(6)).collect())?;
//! let w = Tensor::from_i64(&[2, 1], &[3, -2])?;
//! let y = kernels::matmul_clear(&p, &x, &w, None)?; // [2, 1]
//! for v in y.data() { p.output(v); }
//! let prog = p.build()?;
//! let ins: Vec<_> = [5, 7, -1, 4].iter()
//!     .map(|&v| clear_digits(&INSECURE_TEST_DIGITS, v, 6)).collect::<Result<_, _>>()?;
//! let out = prog.run(&ClearBackend, &ins)?;
//! assert_eq!(clear_value(&INSECURE_TEST_DIGITS, &out[0]), (15 - 14).into());
//! assert_eq!(clear_value(&INSECURE_TEST_DIGITS, &out[1]), (-3 - 8).into());
//! # Ok::<(), hearth::Error>(())
//! ```

mod cannon;
mod conv;
mod element;
pub mod io;
pub(crate) mod linalg;
mod tensor;

pub use cannon::{CannonPlan, Family, Ints, Words};
pub use conv::{avg_pool, conv2d, max_pool, relu, ConvOrder, Padding, Weights};
pub use element::{widen_all, Element};
pub use linalg::{add, dot, dot_clear, matmul, matmul_clear, mul, scale, sub};
pub use tensor::Tensor;

#[cfg(doc)]
use crate::api::{Int, Program, Word};
#[cfg(doc)]
use crate::error::Error;
