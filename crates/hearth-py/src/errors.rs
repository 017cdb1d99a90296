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

create_exception!(
    hearth,
    ServerError,
    HearthError,
    "A compute server refused a request, or could not be reached. `code` is \
     the server's error code (None when no answer came), `status` its HTTP \
     status (None for a failed job)."
);
create_exception!(
    hearth,
    UnauthorizedError,
    ServerError,
    "No API token, or one the server does not know (unknown, mistyped or \
     revoked): code `unauthorized`."
);
create_exception!(
    hearth,
    NotFoundError,
    ServerError,
    "No such job or key for this tenant: codes `not_found`, `unknown_key`."
);
create_exception!(
    hearth,
    OverCostError,
    ServerError,
    "Over the server's limits on one job or request: codes `over_cost` \
     (bootstraps or memory), `too_large` (bytes)."
);
create_exception!(
    hearth,
    BusyError,
    ServerError,
    "The server or the tenant is at a limit that time (or deleting results \
     and keys) lifts; try again later: codes `queue_full`, `too_many_keys`, \
     `key_limit`, `queue_limit`, `daily_limit`, `storage_limit`, \
     `insufficient_storage`."
);
create_exception!(
    hearth,
    NotReadyError,
    ServerError,
    "Not yet: the job is queued or running (`not_ready`), or the key has \
     jobs queued or running (`key_in_use`)."
);
create_exception!(
    hearth,
    BadRequestError,
    ServerError,
    "The server could not use what was sent: codes `bad_request`, \
     `bad_program`, `bad_bundle`, `bad_key`, `insecure_params`, \
     `wrong_key`, `timeout`, `unsupported_media_type`, `misdirected`."
);
create_exception!(
    hearth,
    JobFailedError,
    ServerError,
    "The job ran (or waited) and failed: `code` is its failure's code \
     (`job_failed`, `expired`, `crashed`, ...)."
);

/// The `ServerError` subclass for a server's error `code` (empty: no
/// answer), with `code` and `status` set on the exception.
pub fn server_error(code: &str, status: Option<u16>, message: &str) -> PyErr {
    let err = match code {
        "unauthorized" => UnauthorizedError::new_err(message.to_string()),
        "not_found" | "unknown_key" => NotFoundError::new_err(message.to_string()),
        "over_cost" | "too_large" => OverCostError::new_err(message.to_string()),
        "queue_full"
        | "too_many_keys"
        | "key_limit"
        | "queue_limit"
        | "daily_limit"
        | "storage_limit"
        | "insufficient_storage" => BusyError::new_err(message.to_string()),
        "not_ready" | "key_in_use" => NotReadyError::new_err(message.to_string()),
        "bad_request"
        | "bad_program"
        | "bad_bundle"
        | "bad_key"
        | "insecure_params"
        | "wrong_key"
        | "timeout"
        | "unsupported_media_type"
        | "misdirected" => BadRequestError::new_err(message.to_string()),
        "job_failed" | "expired" | "crashed" => JobFailedError::new_err(message.to_string()),
        _ => ServerError::new_err(message.to_string()),
    };
    with_code(err, (!code.is_empty()).then_some(code), status)
}

/// A job's failure (`code` from its status) as `JobFailedError`.
pub fn job_failed(code: &str, message: &str) -> PyErr {
    with_code(
        JobFailedError::new_err(message.to_string()),
        Some(code),
        None,
    )
}

/// `err` with its `code` and `status` attributes set.
fn with_code(err: PyErr, code: Option<&str>, status: Option<u16>) -> PyErr {
    Python::attach(|py| {
        let value = err.value(py);
        match value
            .setattr("code", code)
            .and_then(|_| value.setattr("status", status))
        {
            Ok(()) => err,
            Err(e) => e,
        }
    })
}

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
        E::UnknownParams(_)
        | E::InsecureParams(_)
        | E::UnsupportedParams { .. }
        | E::NoPublicKey { .. } => ParamsError::new_err(msg),
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
    macro_rules! add {
        ($($class:ident),*) => {
            $(m.add(stringify!($class), py.get_type::<$class>())?;)*
        };
    }
    add!(
        HearthError,
        ParamsError,
        BuildError,
        KeyMismatchError,
        FileError,
        TooLargeError
    );
    m.add("FileTooLargeError", file_too_large(py)?.bind(py))?;
    add!(ShapeError, RangeError, CancelledError);
    add!(
        ServerError,
        UnauthorizedError,
        NotFoundError,
        OverCostError,
        BusyError
    );
    add!(NotReadyError, BadRequestError, JobFailedError);
    Ok(())
}
