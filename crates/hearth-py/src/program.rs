//! `hearth.Program`: a program under construction. Inputs and outputs are
//! named parameters (a scalar or a tensor of one type), which become the
//! compiled program's signature; values are [`crate::value::Value`]s.

use std::sync::Mutex;

use hearth::api::{IntOp, Op, Shape, ValueId, WordOp};
use hearth::ParameterSet;
use num_bigint::BigInt;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::compiled::CompiledProgram;
use crate::convert::{dims_of, dtype_name, parse_dtype};
use crate::errors::{BuildError, OrRaise};
use crate::value::Value;

/// The builder and the parameters named so far.
struct Builder {
    /// `None` once compiled.
    program: Option<hearth::Program>,
    inputs: Vec<(String, Vec<usize>)>,
    outputs: Vec<(String, Vec<usize>)>,
}

/// A program under construction on one parameter set: inputs, operations
/// on their values, outputs; then `compile()`. Nothing is encrypted or
/// run while it is built.
///
/// An operation the builder refuses raises at once (``BuildError``,
/// ``TooLargeError``, ...) and ends the program: later operations raise.
#[pyclass(module = "hearth", frozen)]
pub struct Program {
    params: &'static ParameterSet,
    inner: Mutex<Builder>,
}

impl Program {
    /// Builds `op` and returns the ids it made.
    pub(crate) fn push(&self, op: impl Into<Op>) -> PyResult<Vec<ValueId>> {
        let b = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let p = b.program.as_ref().ok_or_else(compiled)?;
        p.push(op).or_raise()
    }

    /// The shape of value `id`.
    pub(crate) fn shape_of(&self, id: ValueId) -> PyResult<Shape> {
        let b = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let p = b.program.as_ref().ok_or_else(compiled)?;
        p.shape_of(id)
            .ok_or_else(|| BuildError::new_err(format!("value {} is unknown", id.0)))
    }

    /// Runs `f` on the Rust program (for the kernels' typed handles).
    pub(crate) fn with<T>(&self, f: impl FnOnce(&hearth::Program) -> PyResult<T>) -> PyResult<T> {
        let b = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(b.program.as_ref().ok_or_else(compiled)?)
    }
}

fn compiled() -> PyErr {
    BuildError::new_err("the program was compiled: build a new Program for more operations")
}

fn check_name(names: &[(String, Vec<usize>)], name: &str, what: &str) -> PyResult<()> {
    if name.is_empty() || names.iter().any(|(n, _)| n == name) {
        return Err(PyValueError::new_err(format!(
            "{what} names must be unique and not empty: `{name}`"
        )));
    }
    Ok(())
}

/// Values as Python: one value for a scalar, else a numpy object array of
/// `dims` holding them.
pub(crate) fn values_to_python<'py>(
    py: Python<'py>,
    values: Vec<Value>,
    dims: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    if dims.is_empty() {
        let v = values.into_iter().next().expect("a scalar has one value");
        return Ok(Bound::new(py, v)?.into_any());
    }
    let np = py.import("numpy")?;
    let arr = np.call_method1("empty", (values.len(), "object"))?;
    for (i, v) in values.into_iter().enumerate() {
        arr.set_item(i, Bound::new(py, v)?)?;
    }
    let arr = arr.call_method1("reshape", (PyTuple::new(py, dims)?,))?;
    let class = py.import("hearth._array")?.getattr("Array")?;
    arr.call_method1("view", (class,))
}

/// The values of a Python value or array of values (row-major) and its
/// dims.
pub(crate) fn values_from_python(x: &Bound<'_, PyAny>) -> PyResult<(Vec<Py<Value>>, Vec<usize>)> {
    if let Ok(v) = x.cast::<Value>() {
        return Ok((vec![v.clone().unbind()], vec![]));
    }
    let np = x.py().import("numpy")?;
    let a = np.call_method1("asarray", (x, "object"))?;
    let dims: Vec<usize> = a.getattr("shape")?.extract()?;
    let flat: Vec<Bound<'_, PyAny>> = a.call_method0("ravel")?.call_method0("tolist")?.extract()?;
    let values = flat
        .into_iter()
        .map(|v| {
            v.cast::<Value>().map(|v| v.clone().unbind()).map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(
                    "expected hearth values (make clear ones with Program.constant)",
                )
            })
        })
        .collect::<PyResult<_>>()?;
    Ok((values, dims))
}

#[pymethods]
impl Program {
    /// A new program on the parameter set named `params` (see
    /// ``hearth.parameter_sets()``), its algorithms planned for `threads`
    /// threads (default: this machine's cores).
    #[new]
    #[pyo3(signature = (params, threads = None))]
    fn new(params: &str, threads: Option<usize>) -> PyResult<Self> {
        let params = ParameterSet::for_front_end(params).or_raise()?;
        let program = hearth::Program::new(params);
        if let Some(t) = threads {
            if t == 0 {
                return Err(PyValueError::new_err("threads must be positive"));
            }
            program.set_threads(t);
        }
        Ok(Program {
            params,
            inner: Mutex::new(Builder {
                program: Some(program),
                inputs: Vec::new(),
                outputs: Vec::new(),
            }),
        })
    }

    /// The parameter set's name.
    #[getter]
    fn params(&self) -> &'static str {
        self.params.name
    }

    /// An encrypted input named `name` of type `dtype` (``"digits8"``,
    /// ``"twos16"``, ``"u32"``, ``"i64"``, ``"bool"``, ...): one value, or
    /// a numpy object array of values when `shape` is given.
    #[pyo3(signature = (name, dtype, shape = None))]
    fn input<'py>(
        slf: &Bound<'py, Self>,
        name: &str,
        dtype: &str,
        shape: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = slf.get();
        let kind = parse_dtype(dtype)?;
        let dims = shape.map(dims_of).transpose()?.unwrap_or_default();
        let count = dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= hearth::api::MAX_VALUES)
            .ok_or_else(|| {
                crate::errors::TooLargeError::new_err(format!(
                    "{name}: dims {dims:?} hold more than {} values",
                    hearth::api::MAX_VALUES
                ))
            })?;
        check_name(&this.inner.lock().unwrap().inputs, name, "input")?;
        let mut values = Vec::with_capacity(count);
        for _ in 0..count {
            let id = this.push(Op::Input(kind))?[0];
            values.push(Value::new(slf.clone().unbind(), id, this.shape_of(id)?));
        }
        this.inner
            .lock()
            .unwrap()
            .inputs
            .push((name.to_string(), dims.clone()));
        values_to_python(py, values, &dims)
    }

    /// A clear value of type `dtype` (free: no bootstrap).
    fn constant<'py>(
        slf: &Bound<'py, Self>,
        value: BigInt,
        dtype: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let op: Op = match parse_dtype(dtype)? {
            Shape::Int { .. } | Shape::TwosInt { .. } => IntOp::Const(value).into(),
            Shape::Word { bits, signed } => WordOp::Const(bits, signed, value).into(),
        };
        let this = slf.get();
        let id = this.push(op)?[0];
        let v = Value::new(slf.clone().unbind(), id, this.shape_of(id)?);
        Ok(Bound::new(slf.py(), v)?.into_any())
    }

    /// Marks `value` (a value, or an array of values of one type) as the
    /// output named `name`. Exact integers of different lengths in one
    /// array are widened to the longest.
    fn output(slf: &Bound<'_, Self>, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let this = slf.get();
        check_name(&this.inner.lock().unwrap().outputs, name, "output")?;
        let (values, dims) = values_from_python(value)?;
        if values.is_empty() {
            return Err(PyValueError::new_err(format!(
                "{name}: an output holds values"
            )));
        }
        let mut ids = Vec::with_capacity(values.len());
        let mut shapes = Vec::with_capacity(values.len());
        for v in &values {
            let v = v.get();
            v.check_program(slf)?;
            ids.push(v.id());
            shapes.push(v.shape());
        }
        let longest = shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Int { digits } => Some(*digits),
                _ => None,
            })
            .max();
        if let Some(n) = longest {
            for (id, s) in ids.iter_mut().zip(&mut shapes) {
                if matches!(s, Shape::Int { digits } if *digits < n) {
                    *id = this.push(IntOp::Widen(*id, n))?[0];
                    *s = Shape::Int { digits: n };
                }
            }
        }
        if let Some(other) = shapes.iter().find(|s| **s != shapes[0]) {
            return Err(crate::errors::ShapeError::new_err(format!(
                "{name}: one output holds values of one type, not {} and {}",
                dtype_name(shapes[0]),
                dtype_name(*other)
            )));
        }
        let mut b = this.inner.lock().unwrap();
        let p = b.program.as_ref().ok_or_else(compiled)?;
        for id in ids {
            p.output_value(id).or_raise()?;
        }
        b.outputs.push((name.to_string(), dims));
        let _ = py;
        Ok(())
    }

    /// The finished program: its circuit built, every noise budget
    /// checked. The Program cannot be used after.
    fn compile(&self, py: Python<'_>) -> PyResult<CompiledProgram> {
        let (program, inputs, outputs) = {
            let mut b = self.inner.lock().unwrap();
            let p = b.program.take().ok_or_else(compiled)?;
            (p, b.inputs.clone(), b.outputs.clone())
        };
        let built = py.detach(move || {
            let ins: Vec<(&str, &[usize])> = inputs
                .iter()
                .map(|(n, d)| (n.as_str(), d.as_slice()))
                .collect();
            let outs: Vec<(&str, &[usize])> = outputs
                .iter()
                .map(|(n, d)| (n.as_str(), d.as_slice()))
                .collect();
            program.build()?.with_signature(&ins, &outs)
        });
        Ok(CompiledProgram::new(built.or_raise()?))
    }

    fn __repr__(&self) -> String {
        let b = self.inner.lock().unwrap();
        format!(
            "Program({}, inputs={:?}, outputs={:?}{})",
            self.params.name,
            b.inputs.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            b.outputs.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            if b.program.is_none() {
                ", compiled"
            } else {
                ""
            }
        )
    }
}
