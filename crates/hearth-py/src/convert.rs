//! Types by name (`"digits8"`, `"twos16"`, `"u32"`, `"i64"`, `"bool"`) and
//! plain values between Python (ints, bools, numpy arrays) and hearth.

use hearth::api::{Param, Shape};
use num_bigint::BigInt;
use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PyTuple};

use crate::errors::ShapeError;

/// Word widths with a Rust type behind them (`u8 ... u128`, `i8 ... i128`).
pub const WORD_BITS: [usize; 5] = [8, 16, 32, 64, 128];

/// The shape a type name stands for.
pub fn parse_dtype(name: &str) -> PyResult<Shape> {
    let number = |rest: &str| rest.parse::<usize>().ok().filter(|&n| n > 0);
    let word = |rest: &str, signed| {
        number(rest)
            .filter(|n| WORD_BITS.contains(n))
            .map(|bits| Shape::Word { bits, signed })
    };
    let shape = match name {
        "bool" => Some(Shape::Word {
            bits: 1,
            signed: false,
        }),
        _ if name.starts_with("digits") => number(&name[6..]).map(|digits| Shape::Int { digits }),
        _ if name.starts_with("twos") => number(&name[4..]).map(|bits| Shape::TwosInt { bits }),
        _ if name.starts_with('u') => word(&name[1..], false),
        _ if name.starts_with('i') => word(&name[1..], true),
        _ => None,
    };
    shape.ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown type `{name}`: use digitsN (an exact integer of N signed-binary digits), \
             twosN (an exact integer given in N-bit two's complement), u8 ... u128, \
             i8 ... i128 or bool"
        ))
    })
}

/// The type name of a shape (an inverse of [`parse_dtype`]).
pub fn dtype_name(shape: Shape) -> String {
    match shape {
        Shape::Int { digits } => format!("digits{digits}"),
        Shape::TwosInt { bits } => format!("twos{bits}"),
        Shape::Word {
            bits: 1,
            signed: false,
        } => "bool".into(),
        Shape::Word { bits, signed } => format!("{}{bits}", if signed { 'i' } else { 'u' }),
    }
}

/// Whether values of this shape are booleans.
pub fn is_bool(shape: Shape) -> bool {
    shape
        == Shape::Word {
            bits: 1,
            signed: false,
        }
}

/// Dimensions from a Python int or tuple of ints (`()` is a scalar).
pub fn dims_of(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if let Ok(n) = shape.extract::<usize>() {
        return Ok(vec![n]);
    }
    shape
        .extract::<Vec<usize>>()
        .map_err(|_| PyTypeError::new_err("a shape is an int or a tuple of ints"))
}

/// One Python integer (or bool, or numpy integer) as a BigInt.
fn int_of(x: &Bound<'_, PyAny>) -> PyResult<BigInt> {
    if let Ok(b) = x.cast::<PyBool>() {
        return Ok(BigInt::from(b.is_true() as u8));
    }
    x.extract::<BigInt>().map_err(|_| {
        PyTypeError::new_err(format!(
            "expected an integer, got {}",
            x.get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })
}

/// The values of one parameter from a Python argument: an int or bool for
/// a scalar, an array-like of its dims (numpy arrays of any integer or
/// bool dtype, nested lists, object arrays of Python ints) otherwise.
pub fn values_of(param: &Param, arg: &Bound<'_, PyAny>) -> PyResult<Vec<BigInt>> {
    if param.dims.is_empty() && !arg.hasattr("shape")? {
        return Ok(vec![int_of(arg)?]);
    }
    let (values, dims) = ints_of_array(arg)?;
    check_dims(param, &dims)?;
    Ok(values)
}

/// The integers of an array-like (numpy arrays of any integer or bool
/// dtype, nested lists, object arrays of Python ints), row-major, and its
/// dims.
pub fn ints_of_array(arg: &Bound<'_, PyAny>) -> PyResult<(Vec<BigInt>, Vec<usize>)> {
    if let Ok(a) = arg.cast::<PyArrayDyn<i64>>() {
        let ro = a.readonly();
        let values = ro.as_array().iter().map(|&v| BigInt::from(v)).collect();
        return Ok((values, a.shape().to_vec()));
    }
    let np = arg.py().import("numpy")?;
    let a = np.call_method1("asarray", (arg,))?;
    let kind: String = a.getattr("dtype")?.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "i" | "u" | "b" | "O") {
        return Err(PyTypeError::new_err(format!(
            "expected integers or booleans, got an array of dtype {}",
            a.getattr("dtype")?.str()?
        )));
    }
    let dims: Vec<usize> = a.getattr("shape")?.extract()?;
    let flat = a.call_method0("ravel")?.call_method0("tolist")?;
    let flat = flat.cast::<PyList>()?;
    let values = flat.iter().map(|x| int_of(&x)).collect::<PyResult<_>>()?;
    Ok((values, dims))
}

fn check_dims(param: &Param, dims: &[usize]) -> PyResult<()> {
    if dims != param.dims.as_slice() {
        return Err(ShapeError::new_err(format!(
            "{} has dims {:?}, a value of dims {dims:?} was given",
            param.name, param.dims
        )));
    }
    Ok(())
}

/// A parameter's values as Python: a bool or int for a scalar, else a
/// numpy array of its dims (bool, int64 when every value fits, else
/// object holding Python ints).
pub fn to_python<'py>(
    py: Python<'py>,
    param: &Param,
    values: Vec<BigInt>,
) -> PyResult<Bound<'py, PyAny>> {
    let boolean = is_bool(param.shape);
    let scalar = |v: BigInt| -> PyResult<Bound<'py, PyAny>> {
        if boolean {
            Ok(PyBool::new(py, v != BigInt::from(0)).to_owned().into_any())
        } else {
            Ok(v.into_pyobject(py)?.into_any())
        }
    };
    if param.dims.is_empty() {
        let v = values
            .into_iter()
            .next()
            .ok_or_else(|| ShapeError::new_err(format!("{}: no value", param.name)))?;
        return scalar(v);
    }
    if boolean {
        let bits: Vec<bool> = values.iter().map(|v| *v != BigInt::from(0)).collect();
        return Ok(PyArray1::from_vec(py, bits)
            .reshape(param.dims.as_slice())?
            .into_any());
    }
    let small: Option<Vec<i64>> = values.iter().map(|v| i64::try_from(v).ok()).collect();
    if let Some(small) = small {
        return Ok(PyArray1::from_vec(py, small)
            .reshape(param.dims.as_slice())?
            .into_any());
    }
    let objs: Vec<Bound<'py, PyAny>> = values
        .into_iter()
        .map(|v| Ok(v.into_pyobject(py)?.into_any()))
        .collect::<PyResult<_>>()?;
    let np = py.import("numpy")?;
    let arr = np.call_method1("empty", (objs.len(), "object"))?;
    for (i, o) in objs.into_iter().enumerate() {
        arr.set_item(i, o)?;
    }
    arr.call_method1("reshape", (PyTuple::new(py, &param.dims)?,))
}
