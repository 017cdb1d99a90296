//! `hearth.Client` and `hearth.Job`: the compute server (`hearth server`)
//! from Python, on the Rust client (`hearth_client::Client`). Every call
//! releases the GIL while it waits for the network; a refusal is raised
//! as the `ServerError` subclass of its code.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_client::{ClientError, JobId, JobState, JobStatus, KeySource};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::compiled::{CompiledProgram, ProgressBar};
use crate::errors::{job_failed, server_error, to_py, OrRaise};
use crate::keys::{Bundle, CompressedServerKey, ServerKey};

/// A `ClientError` as its Python exception.
fn raise(e: ClientError) -> PyErr {
    match e {
        ClientError::Api {
            status,
            code,
            message,
        } => server_error(&code, Some(status), &message),
        ClientError::JobFailed { job, code, message } => {
            job_failed(&code, &format!("job {job} failed ({code}): {message}"))
        }
        ClientError::Hearth(e) => to_py(e),
        other => server_error("", None, &other.to_string()),
    }
}

trait OrRaiseClient<T> {
    fn or_raise_client(self) -> PyResult<T>;
}

impl<T> OrRaiseClient<T> for Result<T, ClientError> {
    fn or_raise_client(self) -> PyResult<T> {
        self.map_err(raise)
    }
}

/// A JSON answer as a Python dict (through `json.loads`).
fn to_dict<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyDict>> {
    let text = serde_json::to_string(value).expect("API types serialize");
    Ok(py
        .import("json")?
        .call_method1("loads", (text,))?
        .cast_into::<PyDict>()?)
}

/// A client of one compute server (``hearth server``).
///
/// ``url`` is ``http://`` or ``https://``; ``token`` the API token the
/// server's operator made for you (``hearth server token add``);
/// ``ca_cert`` a PEM file of the certificate authority to trust for
/// HTTPS instead of the system's.
#[pyclass(module = "hearth", frozen)]
pub struct Client {
    inner: Arc<hearth_client::Client>,
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (url, token = None, ca_cert = None))]
    fn new(url: &str, token: Option<String>, ca_cert: Option<PathBuf>) -> PyResult<Self> {
        let mut builder = hearth_client::Client::builder(url);
        if let Some(t) = token {
            builder = builder.token(t);
        }
        if let Some(c) = ca_cert {
            builder = builder.ca_cert(c);
        }
        Ok(Client {
            inner: Arc::new(builder.build().or_raise_client()?),
        })
    }

    /// The server's address.
    #[getter]
    fn url(&self) -> String {
        self.inner.url().to_string()
    }

    /// The server's version, limits and backend (``GET /v1/info``), as a
    /// dict; ``server`` and ``store`` say which server answered, from its
    /// own data folder (``files``) or a fleet's database (``postgres``).
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = self.inner.clone();
        let info = py.detach(move || inner.info()).or_raise_client()?;
        to_dict(py, &info)
    }

    /// Registers a server key with the server: a ``ServerKey``, a
    /// ``CompressedServerKey`` (13 MB for ``GATES_128`` instead of 80),
    /// the path of a key file (compressed or not) or its bytes. Returns
    /// the server's record of it (``key_id``, ``params``, ``compressed``,
    /// ``bytes``, ``new``: false if it was registered already).
    fn upload_key<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let bytes: Vec<u8> = if let Ok(k) = key.cast::<CompressedServerKey>() {
            let k = &k.get().inner;
            py.detach(|| k.to_bytes()).or_raise()?
        } else if let Ok(k) = key.cast::<ServerKey>() {
            let k = &k.get().inner;
            py.detach(|| k.to_bytes()).or_raise()?
        } else if let Ok(b) = key.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else if let Ok(path) = key.extract::<PathBuf>() {
            let inner = self.inner.clone();
            let info = py
                .detach(move || inner.upload_key(KeySource::Path(&path)))
                .or_raise_client()?;
            return to_dict(py, &info);
        } else {
            return Err(PyTypeError::new_err(
                "upload_key takes a ServerKey, a CompressedServerKey, a path or bytes",
            ));
        };
        let inner = self.inner.clone();
        let info = py
            .detach(move || inner.upload_key(KeySource::Bytes(&bytes)))
            .or_raise_client()?;
        to_dict(py, &info)
    }

    /// Submits ``program`` on ``bundle`` (its inputs, encrypted under a
    /// key registered with ``upload_key``): the job is on the server's
    /// disk when this returns. Refusals (``OverCostError`` over the
    /// server's limits, ``NotFoundError`` for an unknown key, ...) are
    /// raised before anything runs. With ``after`` (a finished job of
    /// this client's tenant), the server joins that job's result before
    /// the bundle's entries: inputs it keeps between jobs, such as AES
    /// round keys, so the bundle carries only the new data; that job must
    /// have been submitted with ``unpacked=True``. The result leaves the
    /// server packed (a few bytes per digit) unless ``unpacked`` is true.
    #[pyo3(signature = (program, bundle, after = None, unpacked = false))]
    fn submit(
        &self,
        py: Python<'_>,
        program: &CompiledProgram,
        bundle: &Bundle,
        after: Option<&Job>,
        unpacked: bool,
    ) -> PyResult<Job> {
        let prog = program.inner().to_bytes().or_raise()?;
        let inputs = bundle.inner.to_bytes().or_raise()?;
        let options = hearth_client::SubmitOptions {
            key: Some(bundle.inner.key_id()),
            with: after.map(|j| j.id),
            unpacked,
        };
        let inner = self.inner.clone();
        let s = py
            .detach(move || inner.submit_with_options(options, &prog, &inputs))
            .or_raise_client()?;
        Ok(Job {
            client: self.inner.clone(),
            id: s.job_id,
            pbs: s.pbs,
            depth: s.depth,
        })
    }

    /// The job of this id (from ``Job.id``, e.g. after a restart of the
    /// client).
    fn job(&self, py: Python<'_>, id: &str) -> PyResult<Job> {
        let id: JobId = id.parse().map_err(|e: hearth_client::ApiError| {
            server_error(e.code.as_str(), None, &e.message)
        })?;
        let inner = self.inner.clone();
        let st = py.detach(move || inner.status(id)).or_raise_client()?;
        Ok(Job {
            client: self.inner.clone(),
            id,
            pbs: st.pbs,
            depth: st.depth,
        })
    }

    fn __repr__(&self) -> String {
        format!("Client({:?})", self.inner.url())
    }
}

/// One job on a compute server, from ``Client.submit``.
#[pyclass(module = "hearth", frozen)]
pub struct Job {
    client: Arc<hearth_client::Client>,
    id: JobId,
    pbs: u64,
    depth: u64,
}

impl Job {
    fn fetch_status(&self, py: Python<'_>) -> PyResult<JobStatus> {
        let (inner, id) = (self.client.clone(), self.id);
        py.detach(move || inner.status(id)).or_raise_client()
    }
}

#[pymethods]
impl Job {
    /// The job's id (32 hex digits): the only way to reach it.
    #[getter]
    fn id(&self) -> String {
        self.id.to_string()
    }

    /// Bootstraps the program runs.
    #[getter]
    fn pbs(&self) -> u64 {
        self.pbs
    }

    /// Its depth in bootstraps.
    #[getter]
    fn depth(&self) -> u64 {
        self.depth
    }

    /// Where the job is, as a dict: ``state`` is ``"queued"`` (with
    /// ``position``), ``"running"`` (``done`` of ``total`` bootstraps),
    /// ``"done"`` (``result_bytes``) or ``"failed"`` (``code``,
    /// ``message``).
    fn status<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = self.fetch_status(py)?;
        to_dict(py, &st)
    }

    /// Waits until the job has finished, asking every ``poll`` seconds,
    /// with the same progress display as ``CompiledProgram.run`` (tqdm
    /// when installed). A failed job raises its error (``JobFailedError``);
    /// ``timeout`` seconds without an end raise ``TimeoutError``; Ctrl-C
    /// stops the waiting, not the job.
    #[pyo3(signature = (poll = 0.2, timeout = None, progress = true))]
    fn wait<'py>(
        &self,
        py: Python<'py>,
        poll: f64,
        timeout: Option<f64>,
        progress: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let poll = Duration::from_secs_f64(poll.clamp(0.001, 60.0));
        let start = Instant::now();
        let mut bar = if progress {
            Some(ProgressBar::new(py, self.pbs as usize)?)
        } else {
            None
        };
        let outcome = loop {
            let st = self.fetch_status(py)?;
            let done = match &st.state {
                JobState::Running { done, .. } => *done,
                JobState::Done { .. } => self.pbs,
                _ => 0,
            };
            if let Some(b) = bar.as_mut() {
                b.update(py, done as usize)?;
            }
            match &st.state {
                JobState::Done { .. } => break Ok(st),
                JobState::Failed { code, message } => {
                    break Err(job_failed(
                        code,
                        &format!("job {} failed ({code}): {message}", self.id),
                    ))
                }
                JobState::Queued { .. } | JobState::Running { .. } => {}
            }
            if timeout.is_some_and(|t| start.elapsed().as_secs_f64() >= t) {
                break Err(pyo3::exceptions::PyTimeoutError::new_err(format!(
                    "job {} has not finished in {} s",
                    self.id,
                    timeout.unwrap_or_default()
                )));
            }
            py.detach(|| std::thread::sleep(poll));
            py.check_signals()?;
        };
        if let Some(b) = bar {
            b.close(py)?;
        }
        to_dict(py, &outcome?)
    }

    /// The result bundle of a finished job (its outputs, to decrypt with
    /// ``ClientKey.decrypt``); it stays on the server until ``delete``.
    fn result(&self, py: Python<'_>) -> PyResult<Bundle> {
        let (inner, id) = (self.client.clone(), self.id);
        let b = py
            .detach(move || inner.result_bundle(id))
            .or_raise_client()?;
        Ok(Bundle::new(b))
    }

    /// Deletes the job and its result on the server (a queued job is
    /// cancelled; a running one is ``NotReadyError``).
    fn delete(&self, py: Python<'_>) -> PyResult<()> {
        let (inner, id) = (self.client.clone(), self.id);
        py.detach(move || inner.delete(id)).or_raise_client()
    }

    fn __repr__(&self) -> String {
        format!(
            "Job({:?}, pbs={}, depth={})",
            self.id.to_string(),
            self.pbs,
            self.depth
        )
    }
}
