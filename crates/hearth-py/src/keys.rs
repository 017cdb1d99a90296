//! Keys and value bundles: `ClientKey` (encrypts and decrypts; stays with
//! its owner), `ServerKey` and `CompressedServerKey` (what a server runs
//! with), `Bundle` (typed encrypted values as a file).

use std::path::PathBuf;
use std::sync::Arc;

use hearth::{ParameterSet, ParamsId};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::compiled::CompiledProgram;
use crate::convert::{dtype_name, to_python, values_of};
use crate::errors::{OrRaise, ShapeError};

/// Refuses the INSECURE test sets, as every front end does.
pub(crate) fn secure(params: ParamsId) -> PyResult<&'static ParameterSet> {
    ParameterSet::for_front_end(params.params().name).or_raise()
}

/// The outputs as Python: the value itself for one, else a tuple.
pub(crate) fn one_or_tuple<'py>(
    py: Python<'py>,
    mut values: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    if values.len() == 1 {
        return Ok(values.remove(0));
    }
    Ok(PyTuple::new(py, values)?.into_any())
}

/// The secret key: encrypts inputs and decrypts outputs. Never sent to a
/// server.
#[pyclass(module = "hearth", frozen)]
pub struct ClientKey {
    inner: Arc<hearth::ClientKey>,
}

#[pymethods]
impl ClientKey {
    /// A fresh key for the parameter set named `params`.
    #[staticmethod]
    fn generate(py: Python<'_>, params: &str) -> PyResult<Self> {
        let params = ParameterSet::for_front_end(params).or_raise()?;
        let inner = py.detach(|| hearth::ClientKey::generate(params));
        Ok(ClientKey {
            inner: Arc::new(inner),
        })
    }

    /// Reads a key written by ``save``.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| hearth::ClientKey::load(&path)).or_raise()?;
        secure(inner.params().id)?;
        Ok(ClientKey {
            inner: Arc::new(inner),
        })
    }

    /// Writes the key (atomically; keep it private).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.save(&path)).or_raise()
    }

    /// The parameter set's name.
    #[getter]
    fn params(&self) -> &'static str {
        self.inner.params().name
    }

    /// The key's id (bundles and server keys carry it).
    #[getter]
    fn key_id(&self) -> String {
        self.inner.key_id().to_string()
    }

    /// The server key for this key (seconds: bootstrap and key-switching
    /// keys are generated).
    fn server_key(&self, py: Python<'_>) -> ServerKey {
        let inner = py.detach(|| self.inner.server_key());
        ServerKey {
            inner: Arc::new(inner),
        }
    }

    /// The server key in seeded form: several times smaller as a file,
    /// decompressed when loaded.
    fn compressed_server_key(&self, py: Python<'_>) -> CompressedServerKey {
        let inner = py.detach(|| self.inner.compressed_server_key());
        CompressedServerKey { inner }
    }

    /// Encrypts the inputs of `program`, one argument per input in the
    /// order they were declared: ints or bools for scalars, array-likes of
    /// the declared shape for tensors.
    #[pyo3(signature = (program, *args))]
    fn encrypt(
        &self,
        py: Python<'_>,
        program: &CompiledProgram,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Bundle> {
        let inputs = &program.inner().signature().inputs;
        let values = program.input_values(args)?;
        if self.inner.params().id != program.inner().circuit().params() {
            return Err(hearth::Error::ParamsMismatch {
                expected: program.inner().circuit().params(),
                found: self.inner.params().id,
            })
            .or_raise();
        }
        let inner = py
            .detach(|| self.inner.encrypt_bundle(inputs, &values))
            .or_raise()?;
        Ok(Bundle { inner })
    }

    /// Decrypts a bundle: one value for a one-output bundle, else a tuple
    /// (ints, bools, numpy arrays for tensors).
    fn decrypt<'py>(&self, py: Python<'py>, bundle: &Bundle) -> PyResult<Bound<'py, PyAny>> {
        let plain = py
            .detach(|| self.inner.decrypt_bundle(&bundle.inner))
            .or_raise()?;
        let values = plain
            .into_iter()
            .map(|(param, vs)| to_python(py, &param, vs))
            .collect::<PyResult<_>>()?;
        one_or_tuple(py, values)
    }

    fn __repr__(&self) -> String {
        format!("ClientKey({}, id={})", self.params(), self.key_id())
    }
}

/// The evaluation key a server runs programs with (no secret in it).
#[pyclass(module = "hearth", frozen)]
pub struct ServerKey {
    pub(crate) inner: Arc<hearth::ServerKey>,
}

#[pymethods]
impl ServerKey {
    /// Reads a server key file, compressed or not.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| hearth::ServerKey::load(&path)).or_raise()?;
        secure(inner.params().id)?;
        Ok(ServerKey {
            inner: Arc::new(inner),
        })
    }

    /// Writes the key in full (see ``ClientKey.compressed_server_key`` for
    /// a smaller file).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.save(&path)).or_raise()
    }

    /// The parameter set's name.
    #[getter]
    fn params(&self) -> &'static str {
        self.inner.params().name
    }

    /// The id of the client key it belongs to.
    #[getter]
    fn key_id(&self) -> String {
        self.inner.key_id().to_string()
    }

    fn __repr__(&self) -> String {
        format!("ServerKey({}, id={})", self.params(), self.key_id())
    }
}

/// A server key in seeded form (tfhe-rs seeded bootstrap and key-switching
/// keys): the file to send to a server.
#[pyclass(module = "hearth", frozen)]
pub struct CompressedServerKey {
    pub(crate) inner: hearth::CompressedServerKey,
}

#[pymethods]
impl CompressedServerKey {
    /// Reads a compressed server key file.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py
            .detach(|| hearth::CompressedServerKey::load(&path))
            .or_raise()?;
        secure(inner.params().id)?;
        Ok(CompressedServerKey { inner })
    }

    /// Writes the key (``ServerKey.load`` reads it back decompressed).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.save(&path)).or_raise()
    }

    /// The full server key.
    fn decompress(&self, py: Python<'_>) -> ServerKey {
        let inner = py.detach(|| self.inner.decompress());
        ServerKey {
            inner: Arc::new(inner),
        }
    }

    /// The parameter set's name.
    #[getter]
    fn params(&self) -> &'static str {
        self.inner.params().name
    }
}

/// Typed encrypted values under one key: a program's inputs (from
/// ``ClientKey.encrypt``) or outputs (from ``CompiledProgram.run``).
#[pyclass(module = "hearth", frozen)]
pub struct Bundle {
    pub(crate) inner: hearth::Bundle,
}

impl Bundle {
    pub(crate) fn new(inner: hearth::Bundle) -> Self {
        Bundle { inner }
    }
}

#[pymethods]
impl Bundle {
    /// Reads a bundle file.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| hearth::Bundle::load(&path)).or_raise()?;
        secure(inner.params())?;
        Ok(Bundle { inner })
    }

    /// Writes the bundle atomically.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.save(&path)).or_raise()
    }

    /// Reads bundle bytes (``to_bytes``).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py
            .detach(|| hearth::Bundle::from_bytes(std::path::Path::new("<bytes>"), data))
            .or_raise()?;
        secure(inner.params())?;
        Ok(Bundle { inner })
    }

    /// The bundle as file bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_raise()?))
    }

    /// The parameter set's name.
    #[getter]
    fn params(&self) -> &'static str {
        self.inner.params().params().name
    }

    /// The id of the key its values are encrypted under.
    #[getter]
    fn key_id(&self) -> String {
        self.inner.key_id().to_string()
    }

    /// Its entries: ``(name, dtype, dims)``.
    #[getter]
    fn entries(&self) -> Vec<(String, String, Vec<usize>)> {
        self.inner
            .signature()
            .into_iter()
            .map(|p| (p.name, dtype_name(p.shape), p.dims))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!("Bundle({}, {:?})", self.params(), self.entries())
    }
}

/// The plain values of a program's inputs from Python arguments.
pub(crate) fn input_values(
    inputs: &[hearth::api::Param],
    args: &Bound<'_, PyTuple>,
) -> PyResult<Vec<Vec<num_bigint::BigInt>>> {
    if args.len() != inputs.len() {
        return Err(ShapeError::new_err(format!(
            "the program takes {} inputs ({}), {} given",
            inputs.len(),
            inputs
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            args.len()
        )));
    }
    inputs
        .iter()
        .zip(args.iter())
        .map(|(p, a)| values_of(p, &a))
        .collect()
}
