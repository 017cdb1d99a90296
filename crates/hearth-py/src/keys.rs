//! Keys and value bundles: `ClientKey` (encrypts and decrypts; stays with
//! its owner), `PublicKey` (encrypts for it; handed to data owners),
//! `ServerKey` and `CompressedServerKey` (what a server runs with),
//! `Bundle` (typed encrypted values as a file).

use std::path::PathBuf;
use std::sync::Arc;

use hearth::api::Param;
use hearth::formats::param::{self, names};
use hearth::{ParameterSet, ParamsId};
use num_bigint::BigInt;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

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

    /// The public key of this key: it encrypts for this key without being
    /// able to decrypt (for data owners). ``ParamsError`` on a set without
    /// one (``GATES_128``).
    fn public_key(&self, py: Python<'_>) -> PyResult<PublicKey> {
        let inner = py.detach(|| self.inner.public_key()).or_raise()?;
        Ok(PublicKey { inner })
    }

    /// Encrypts the inputs of `program`: positional arguments in the order
    /// the inputs were declared, then keyword arguments by input name;
    /// ints or bools for scalars, array-likes of the declared shape for
    /// tensors. With `only` (a name or a list of names: a run of
    /// consecutive inputs, in order), just those inputs, for
    /// ``Bundle.combine``. With `clear` (a name or a list), those inputs
    /// travel in the clear, each value in its own bytes, for public values
    /// such as a transciphered input's sealed bytes and counter.
    #[pyo3(signature = (program, *args, only = None, clear = None, **named))]
    fn encrypt(
        &self,
        py: Python<'_>,
        program: &CompiledProgram,
        args: &Bound<'_, PyTuple>,
        only: Option<&Bound<'_, PyAny>>,
        clear: Option<&Bound<'_, PyAny>>,
        named: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bundle> {
        let call = InputCall { args, only, named };
        let key = (self.inner.params().id, self.inner.key_id());
        encrypt_inputs(py, program, key, &call, clear, |ps, vs| {
            self.inner.encrypt_bundle(ps, vs)
        })
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

/// Encrypts for one client key without being able to decrypt: what data
/// owners hold. Its bundles run like the client key's own.
#[pyclass(module = "hearth", frozen)]
pub struct PublicKey {
    inner: hearth::PublicKey,
}

#[pymethods]
impl PublicKey {
    /// Reads a key written by ``save``.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| hearth::PublicKey::load(&path)).or_raise()?;
        secure(inner.params().id)?;
        Ok(PublicKey { inner })
    }

    /// Writes the key atomically (compressed when it was made here or read
    /// so: 16 KiB on ``DIGITS_128``).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.save(&path)).or_raise()
    }

    /// The parameter set's name.
    #[getter]
    fn params(&self) -> &'static str {
        self.inner.params().name
    }

    /// The id of the client key it encrypts for (its bundles carry it).
    #[getter]
    fn key_id(&self) -> String {
        self.inner.key_id().to_string()
    }

    /// Whether it is kept as a seed and a body (what its file then holds).
    #[getter]
    fn compressed(&self) -> bool {
        self.inner.is_compressed()
    }

    /// Encrypts inputs of `program` as ``ClientKey.encrypt`` does (the
    /// same arguments, `only` and `clear`), with the public key.
    #[pyo3(signature = (program, *args, only = None, clear = None, **named))]
    fn encrypt(
        &self,
        py: Python<'_>,
        program: &CompiledProgram,
        args: &Bound<'_, PyTuple>,
        only: Option<&Bound<'_, PyAny>>,
        clear: Option<&Bound<'_, PyAny>>,
        named: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bundle> {
        let call = InputCall { args, only, named };
        let key = (self.inner.params().id, self.inner.key_id());
        encrypt_inputs(py, program, key, &call, clear, |ps, vs| {
            self.inner.encrypt_bundle(ps, vs)
        })
    }

    fn __repr__(&self) -> String {
        format!("PublicKey({}, id={})", self.params(), self.key_id())
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
/// ``ClientKey.encrypt`` or ``PublicKey.encrypt``, or several owners'
/// joined by ``Bundle.combine``) or outputs (from ``CompiledProgram.run``).
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

    /// Joins bundles under one key (several data owners' inputs of one
    /// program), their entries in the order given: that order must be the
    /// program's. ``KeyMismatchError`` for bundles of different keys or
    /// sets.
    #[staticmethod]
    fn combine(py: Python<'_>, bundles: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bundles = bundles
            .try_iter()?
            .map(|b| Ok(b?.cast::<Bundle>()?.get().inner.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        if bundles.is_empty() {
            return Err(ShapeError::new_err(
                "Bundle.combine needs at least one bundle",
            ));
        }
        let inner = py.detach(|| hearth::Bundle::combine(bundles)).or_raise()?;
        Ok(Bundle { inner })
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

    /// Whether its values are packed results (``CompiledProgram.pack``, a
    /// server's download): for their owner to decrypt, not a program's
    /// input.
    #[getter]
    fn packed(&self) -> bool {
        self.inner.is_packed()
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

/// A call's values for a program's inputs: positional arguments in the
/// inputs' order, then keyword arguments by name; `only` (a name or a
/// list of names) restricts it to a run of consecutive inputs.
pub(crate) struct InputCall<'a, 'py> {
    pub args: &'a Bound<'py, PyTuple>,
    pub only: Option<&'a Bound<'py, PyAny>>,
    pub named: Option<&'a Bound<'py, PyDict>>,
}

impl InputCall<'_, '_> {
    /// The inputs it gives values for (all of them, or the run `only`
    /// names) and their plain values, in the program's order.
    pub(crate) fn bind<'p>(
        &self,
        inputs: &'p [Param],
    ) -> PyResult<(&'p [Param], Vec<Vec<BigInt>>)> {
        let chosen = match self.only {
            None => inputs,
            Some(only) => run_of(inputs, only)?,
        };
        let (args, named) = (self.args, self.named.filter(|d| !d.is_empty()));
        if named.is_none() && self.only.is_none() && args.len() != inputs.len() {
            return Err(ShapeError::new_err(format!(
                "the program takes {} inputs ({}), {} given",
                inputs.len(),
                names(inputs),
                args.len()
            )));
        }
        if args.len() > chosen.len() {
            return Err(ShapeError::new_err(format!(
                "{} values given by position for {} inputs ({})",
                args.len(),
                chosen.len(),
                names(chosen)
            )));
        }
        let mut given: Vec<Option<Bound<'_, PyAny>>> = args.iter().map(Some).collect();
        given.resize(chosen.len(), None);
        for (k, v) in named.into_iter().flatten() {
            let name: String = k.extract()?;
            let Some(i) = chosen.iter().position(|p| p.name == name) else {
                let why = if inputs.iter().any(|p| p.name == name) {
                    format!(
                        "{name} is not among the inputs only= names ({})",
                        names(chosen)
                    )
                } else {
                    format!(
                        "the program has no input {name} (its inputs: {})",
                        names(inputs)
                    )
                };
                return Err(ShapeError::new_err(why));
            };
            if given[i].is_some() {
                return Err(ShapeError::new_err(format!("{name} is given twice")));
            }
            given[i] = Some(v);
        }
        let missing: Vec<&str> = chosen
            .iter()
            .zip(&given)
            .filter(|(_, g)| g.is_none())
            .map(|(p, _)| p.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ShapeError::new_err(format!(
                "no value for {}",
                missing.join(", ")
            )));
        }
        let values = chosen
            .iter()
            .zip(given.into_iter().flatten())
            .map(|(p, a)| values_of(p, &a))
            .collect::<PyResult<_>>()?;
        Ok((chosen, values))
    }
}

/// The inputs `only` names (a name, or a list of names): a run of
/// consecutive inputs, in the program's order, so that
/// ``Bundle.combine`` can join the data owners' runs into its inputs.
fn run_of<'p>(inputs: &'p [Param], only: &Bound<'_, PyAny>) -> PyResult<&'p [Param]> {
    let wanted: Vec<String> = match only.extract::<String>() {
        Ok(name) => vec![name],
        Err(_) => only
            .extract()
            .map_err(|_| PyTypeError::new_err("only= takes an input's name or a list of names"))?,
    };
    param::run_of(inputs, &wanted).map_err(|e| match e {
        hearth::Error::Dimensions(why) => ShapeError::new_err(format!("only=: {why}")),
        e => crate::errors::to_py(e),
    })
}

/// Encrypts the inputs a call gives for `program` with `encrypt` (a
/// client key's or a public key's `encrypt_bundle`) under a key of
/// `key_params`: the one way both keys take Python values.
pub(crate) fn encrypt_inputs(
    py: Python<'_>,
    program: &CompiledProgram,
    (key_params, key_id): (ParamsId, hearth::KeyId),
    call: &InputCall<'_, '_>,
    clear: Option<&Bound<'_, PyAny>>,
    encrypt: impl FnMut(&[Param], &[Vec<BigInt>]) -> hearth::Result<hearth::Bundle> + Send,
) -> PyResult<Bundle> {
    let (params, values) = call.bind(&program.inner().signature().inputs)?;
    let clear: Vec<String> = match clear {
        None => Vec::new(),
        Some(c) => match c.extract::<String>() {
            Ok(name) => vec![name],
            Err(_) => c.extract().map_err(|_| {
                PyTypeError::new_err("clear= takes an input's name or a list of names")
            })?,
        },
    };
    let expected = program.inner().circuit().params();
    if key_params != expected {
        return Err(hearth::Error::ParamsMismatch {
            expected,
            found: key_params,
        })
        .or_raise();
    }
    let inner = py
        .detach(|| {
            hearth::Bundle::with_clear_values(key_params, key_id, params, &values, &clear, encrypt)
        })
        .or_raise()?;
    Ok(Bundle { inner })
}
