//! Python exception classes mirroring hearth's error kinds; each carries
//! the Rust message.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

create_exception!(
    hearth,
    HearthError,
    PyException,
    "Base class of every hearth error."
);
create_exception!(
    hearth,
    ParamsError,
    HearthError,
    "An unknown parameter set, an INSECURE test set (refused by the Python \
     package), or one that cannot carry the program."
);
create_exception!(
    hearth,
    BuildError,
    HearthError,
    "The builder refused the program: a noise budget, a lookup table, a \
     value of another program, or an operation after an earlier error."
);
create_exception!(
    hearth,
    KeyMismatchError,
    HearthError,
    "A key, value bundle or program of another key or parameter set."
);
create_exception!(
    hearth,
    FileError,
    HearthError,
    "A file could not be read or written, or it is damaged, truncated, \
     forged or of another kind."
);
create_exception!(
    hearth,
    TooLargeError,
    HearthError,
    "Over a size, work or memory limit (a file, a program, a run)."
);
create_exception!(
    hearth,
    ShapeError,
    HearthError,
    "Values of the wrong type, count or dimensions for a program or an \
     operation."
);
create_exception!(
    hearth,
    RangeError,
    HearthError,
    "A value does not fit its type (an input out of its digits' range, a \
     word constant too wide)."
);
create_exception!(
    hearth,
    CancelledError,
    HearthError,
    "A run stopped before it finished (by a cancel request)."
);

/// `FileTooLargeError`: a file over its size limit is a damaged or forged
/// file and a size limit at once, so it derives from `FileError` and
/// `TooLargeError` (made once, with Python's `type`: `create_exception!`
/// takes one base).
static FILE_TOO_LARGE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn file_too_large(py: Python<'_>) -> PyResult<&Py<PyType>> {
    FILE_TOO_LARGE.get_or_try_init(py, || {
        let bases = PyTuple::new(
            py,
            [py.get_type::<FileError>(), py.get_type::<TooLargeError>()],
        )?;
        let dict = PyDict::new(py);
        dict.set_item("__module__", "hearth")?;
        dict.set_item(
            "__doc__",
            "A file whose stated size is over its limit: a FileError and a TooLargeError.",
        )?;
        let class = py
            .get_type::<PyType>()
            .call1(("FileTooLargeError", bases, dict))?;
        Ok(class.cast_into::<PyType>()?.unbind())
    })
}

/// The Python exception for a hearth error.
pub fn to_py(e: hearth::Error) -> PyErr {
    use hearth::Error as E;
    let msg = e.to_string();
    match e {
        E::UnknownParams(_) | E::InsecureParams(_) | E::UnsupportedParams { .. } => {
            ParamsError::new_err(msg)
        }
        E::ParamsMismatch { .. } | E::WrongKey { .. } => KeyMismatchError::new_err(msg),
        E::ValueOutOfRange { .. } | E::DoesNotFit { .. } | E::InputOutOfRange { .. } => {
            RangeError::new_err(msg)
        }
        E::TooLarge { .. } => TooLargeError::new_err(msg),
        E::ShapeMismatch { .. } | E::Dimensions(_) | E::InputCount { .. } => {
            ShapeError::new_err(msg)
        }
        E::Build(_) | E::Lut(_) | E::SelectorOutOfRange { .. } => BuildError::new_err(msg),
        E::File(hearth::FileError::TooLarge { .. }) => {
            Python::attach(|py| match file_too_large(py) {
                Ok(class) => PyErr::from_type(class.bind(py).clone(), msg),
                Err(e) => e,
            })
        }
        E::File(_) => FileError::new_err(msg),
        E::Cancelled { .. } => CancelledError::new_err(msg),
        _ => HearthError::new_err(msg),
    }
}

/// `?` for hearth results in binding code.
pub trait OrRaise<T> {
    /// The value, or the error as its Python exception.
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, hearth::Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("HearthError", py.get_type::<HearthError>())?;
    m.add("ParamsError", py.get_type::<ParamsError>())?;
    m.add("BuildError", py.get_type::<BuildError>())?;
    m.add("KeyMismatchError", py.get_type::<KeyMismatchError>())?;
    m.add("FileError", py.get_type::<FileError>())?;
    m.add("TooLargeError", py.get_type::<TooLargeError>())?;
    m.add("FileTooLargeError", file_too_large(py)?.bind(py))?;
    m.add("ShapeError", py.get_type::<ShapeError>())?;
    m.add("RangeError", py.get_type::<RangeError>())?;
    m.add("CancelledError", py.get_type::<CancelledError>())?;
    Ok(())
}
