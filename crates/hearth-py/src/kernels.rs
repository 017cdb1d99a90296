//! The kernels of `hearth::kernels` on Python arrays of values: `dot`,
//! `matmul`, `conv2d` (clear numpy weights or encrypted ones), `relu`,
//! `max_pool`, `avg_pool`. Each call runs the Rust kernel on typed
//! handles of the values, so Python programs get the same fused sums.

use hearth::api::{Int, Program as RustProgram, Shape, ValueId};
use hearth::api::{I128, I16, I32, I64, I8, U128, U16, U32, U64, U8};
use hearth::kernels::{self, ConvOrder, Element, Padding, Tensor, Weights};
use hearth::Error;
use num_bigint::BigInt;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::convert::{dtype_name, ints_of_array};
use crate::errors::{BuildError, OrRaise};
use crate::program::{values_from_python, values_to_python, Program};
use crate::value::Value;

/// Values of one program, row-major, with their dims.
struct Ids {
    ids: Vec<ValueId>,
    dims: Vec<usize>,
}

/// A kernel operand: encrypted values or clear integers.
enum Operand {
    Encrypted(Ids),
    Clear(Tensor<BigInt>),
}

/// One kernel call.
enum Kernel {
    Dot {
        x: Ids,
        y: Operand,
        bias: BigInt,
    },
    Matmul {
        a: Ids,
        b: Operand,
        bias: Option<Tensor<BigInt>>,
    },
    Conv2d {
        x: Ids,
        w: Operand,
        bias: Option<Tensor<BigInt>>,
        stride: usize,
        padding: usize,
    },
    Relu(Ids),
    MaxPool(Ids, usize),
    AvgPool(Ids, usize),
}

/// A typed handle from an id.
trait FromId<'p>: Element<'p> {
    fn from_id(p: &'p RustProgram, id: ValueId) -> Result<Self, Error>;
}

impl<'p> FromId<'p> for Int<'p> {
    fn from_id(p: &'p RustProgram, id: ValueId) -> Result<Self, Error> {
        Int::from_id(p, id)
    }
}

macro_rules! words_from_id {
    ($($t:ident),*) => {$(
        impl<'p> FromId<'p> for $t<'p> {
            fn from_id(p: &'p RustProgram, id: ValueId) -> Result<Self, Error> {
                $t::from_id(p, id)
            }
        }
    )*};
}
words_from_id!(U8, U16, U32, U64, U128, I8, I16, I32, I64, I128);

fn tensor<'p, E: FromId<'p>>(p: &'p RustProgram, x: &Ids) -> Result<Tensor<E>, Error> {
    let data = x
        .ids
        .iter()
        .map(|&id| E::from_id(p, id))
        .collect::<Result<_, _>>()?;
    Tensor::new(&x.dims, data)
}

/// A vector as a one-row (`row`) or one-column matrix.
fn as_matrix<T: Clone>(t: Tensor<T>, row: bool) -> Result<Tensor<T>, Error> {
    match t.shape() {
        [n] => {
            let shape = if row { [1, *n] } else { [*n, 1] };
            t.reshape(&shape)
        }
        _ => Ok(t),
    }
}

/// Runs `k` on elements of type `E`: the ids of the results and their
/// dims.
fn run<'p, E: FromId<'p>>(
    p: &'p RustProgram,
    k: &Kernel,
) -> Result<(Vec<ValueId>, Vec<usize>), Error> {
    let out = |t: Tensor<E>| {
        (
            t.data().iter().map(|e| e.id()).collect(),
            t.shape().to_vec(),
        )
    };
    Ok(match k {
        Kernel::Dot { x, y, bias } => {
            let x = tensor::<E>(p, x)?;
            let r = match y {
                Operand::Clear(w) => kernels::dot_clear(p, &x, w, bias)?,
                Operand::Encrypted(y) => {
                    let r = kernels::dot(p, &x, &tensor::<E>(p, y)?)?;
                    if *bias == BigInt::from(0) {
                        r
                    } else {
                        r.add(&E::constant(p, bias))
                    }
                }
            };
            (vec![r.id()], vec![])
        }
        Kernel::Matmul { a, b, bias } => {
            let a_vec = a.dims.len() == 1;
            let a = as_matrix(tensor::<E>(p, a)?, true)?;
            let (r, b_vec) = match b {
                Operand::Clear(w) => {
                    let b_vec = w.shape().len() == 1;
                    let w = as_matrix(w.clone(), false)?;
                    (kernels::matmul_clear(p, &a, &w, bias.as_ref())?, b_vec)
                }
                Operand::Encrypted(b) => {
                    if bias.is_some() {
                        return Err(Error::Config(
                            "a bias goes with clear weights (add it after)".into(),
                        ));
                    }
                    let b_vec = b.dims.len() == 1;
                    let b = as_matrix(tensor::<E>(p, b)?, false)?;
                    (kernels::matmul(p, &a, &b)?, b_vec)
                }
            };
            let (ids, mut dims) = out(r);
            if b_vec {
                dims.pop();
            }
            if a_vec {
                dims.remove(0);
            }
            (ids, dims)
        }
        Kernel::Conv2d {
            x,
            w,
            bias,
            stride,
            padding,
        } => {
            let x = tensor::<E>(p, x)?;
            let enc;
            let w = match w {
                Operand::Clear(w) => Weights::Clear(w),
                Operand::Encrypted(w) => {
                    enc = tensor::<E>(p, w)?;
                    Weights::Encrypted(&enc)
                }
            };
            out(kernels::conv2d(
                p,
                &x,
                &w,
                bias.as_ref(),
                *stride,
                Padding(*padding),
                ConvOrder::PerOutput,
            )?)
        }
        Kernel::Relu(x) => out(kernels::relu(&tensor::<E>(p, x)?)),
        Kernel::MaxPool(x, s) => out(kernels::max_pool(&tensor::<E>(p, x)?, *s)?),
        Kernel::AvgPool(x, s) => out(kernels::avg_pool(p, &tensor::<E>(p, x)?, *s)?),
    })
}

/// Runs `k` on the program, on the element type of `shape`.
fn dispatch(
    p: &RustProgram,
    shape: Shape,
    k: &Kernel,
) -> Result<(Vec<ValueId>, Vec<usize>), Error> {
    let r = match shape {
        Shape::Int { .. } | Shape::TwosInt { .. } => run::<Int>(p, k),
        Shape::Word {
            bits: 8,
            signed: false,
        } => run::<U8>(p, k),
        Shape::Word {
            bits: 16,
            signed: false,
        } => run::<U16>(p, k),
        Shape::Word {
            bits: 32,
            signed: false,
        } => run::<U32>(p, k),
        Shape::Word {
            bits: 64,
            signed: false,
        } => run::<U64>(p, k),
        Shape::Word {
            bits: 128,
            signed: false,
        } => run::<U128>(p, k),
        Shape::Word {
            bits: 8,
            signed: true,
        } => run::<I8>(p, k),
        Shape::Word {
            bits: 16,
            signed: true,
        } => run::<I16>(p, k),
        Shape::Word {
            bits: 32,
            signed: true,
        } => run::<I32>(p, k),
        Shape::Word {
            bits: 64,
            signed: true,
        } => run::<I64>(p, k),
        Shape::Word {
            bits: 128,
            signed: true,
        } => run::<I128>(p, k),
        other => Err(Error::Config(format!(
            "no kernel takes {}",
            dtype_name(other)
        ))),
    }?;
    // The typed API keeps an operation's error in the program.
    p.check()?;
    Ok(r)
}

/// The encrypted values of an array and their program.
fn encrypted(x: &Bound<'_, PyAny>) -> PyResult<(Py<Program>, Shape, Ids)> {
    let (values, dims) = values_from_python(x)?;
    let first = values
        .first()
        .ok_or_else(|| PyTypeError::new_err("a kernel needs at least one value"))?
        .get();
    let program = first.program().clone_ref(x.py());
    let shape = first.shape();
    let ids = values
        .iter()
        .map(|v| {
            let v = v.get();
            if v.program().as_ptr() != program.as_ptr() {
                return Err(BuildError::new_err("values of two programs"));
            }
            Ok(v.id())
        })
        .collect::<PyResult<_>>()?;
    Ok((program, shape, Ids { ids, dims }))
}

/// An operand: encrypted values of `program`, or clear integers.
fn operand(x: &Bound<'_, PyAny>, program: &Py<Program>) -> PyResult<Operand> {
    match encrypted(x) {
        Ok((p, _, ids)) => {
            if p.as_ptr() != program.as_ptr() {
                return Err(BuildError::new_err("values of two programs"));
            }
            Ok(Operand::Encrypted(ids))
        }
        Err(_) => {
            let (values, dims) = ints_of_array(x)?;
            Ok(Operand::Clear(Tensor::new(&dims, values).or_raise()?))
        }
    }
}

fn clear_bias(bias: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Tensor<BigInt>>> {
    bias.map(|b| {
        let (values, dims) = ints_of_array(b)?;
        Tensor::new(&dims, values).or_raise()
    })
    .transpose()
}

fn call<'py>(
    py: Python<'py>,
    program: Py<Program>,
    shape: Shape,
    k: Kernel,
) -> PyResult<Bound<'py, PyAny>> {
    let prog = program.get();
    let (ids, dims) = prog.with(|p| dispatch(p, shape, &k).or_raise())?;
    let values = ids
        .into_iter()
        .map(|id| Ok(Value::new(program.clone_ref(py), id, prog.shape_of(id)?)))
        .collect::<PyResult<Vec<_>>>()?;
    values_to_python(py, values, &dims)
}

/// ``sum(x[i] * y[i]) + bias`` as one fused sum: `x` encrypted, `y`
/// encrypted or clear integers.
#[pyfunction]
#[pyo3(signature = (x, y, bias = BigInt::from(0)))]
fn dot<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    bias: BigInt,
) -> PyResult<Bound<'py, PyAny>> {
    let (program, shape, x) = encrypted(x)?;
    let y = operand(y, &program)?;
    call(py, program, shape, Kernel::Dot { x, y, bias })
}

/// The matrix product ``a @ b (+ bias)``: `a` encrypted ``[m, k]`` (or a
/// vector), `b` encrypted or clear ``[k, n]`` (or a vector); `bias` is
/// clear ``[n]``, with clear `b` only.
#[pyfunction]
#[pyo3(signature = (a, b, bias = None))]
fn matmul<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    bias: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (program, shape, a) = encrypted(a)?;
    let b = operand(b, &program)?;
    let bias = clear_bias(bias)?;
    call(py, program, shape, Kernel::Matmul { a, b, bias })
}

/// A 2-D convolution (cross-correlation, as in CNNs): `x` is encrypted
/// ``[C, H, W]``, `w` clear or encrypted ``[R, C, K, L]``, `bias` clear
/// ``[R]``; zero `padding` on every side.
#[pyfunction]
#[pyo3(signature = (x, w, bias = None, stride = 1, padding = 0))]
fn conv2d<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    w: &Bound<'py, PyAny>,
    bias: Option<&Bound<'py, PyAny>>,
    stride: usize,
    padding: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (program, shape, x) = encrypted(x)?;
    let w = operand(w, &program)?;
    let bias = clear_bias(bias)?;
    call(
        py,
        program,
        shape,
        Kernel::Conv2d {
            x,
            w,
            bias,
            stride,
            padding,
        },
    )
}

/// ``max(x, 0)`` elementwise.
#[pyfunction]
fn relu<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let (program, shape, x) = encrypted(x)?;
    call(py, program, shape, Kernel::Relu(x))
}

/// Max over ``s x s`` windows of a ``[C, H, W]`` array.
#[pyfunction]
fn max_pool<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, s: usize) -> PyResult<Bound<'py, PyAny>> {
    let (program, shape, x) = encrypted(x)?;
    call(py, program, shape, Kernel::MaxPool(x, s))
}

/// Floor of the mean over ``s x s`` windows (`s` a power of two).
#[pyfunction]
fn avg_pool<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, s: usize) -> PyResult<Bound<'py, PyAny>> {
    let (program, shape, x) = encrypted(x)?;
    call(py, program, shape, Kernel::AvgPool(x, s))
}

/// Adds the kernels to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dot, m)?)?;
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(conv2d, m)?)?;
    m.add_function(wrap_pyfunction!(relu, m)?)?;
    m.add_function(wrap_pyfunction!(max_pool, m)?)?;
    m.add_function(wrap_pyfunction!(avg_pool, m)?)?;
    Ok(())
}
