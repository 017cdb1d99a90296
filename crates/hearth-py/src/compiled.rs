//! `hearth.CompiledProgram`: a built program: its cost, its signature,
//! files, and runs (clear, or encrypted on the CPU or, with the `gpu`
//! feature, the GPU, with progress and Ctrl-C).

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth::backend::{Engine, Evaluator};
use pyo3::exceptions::{PyRuntimeWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::convert::{dtype_name, to_python};
use crate::errors::{HearthError, OrRaise};
use crate::keys::{one_or_tuple, secure, Bundle, InputCall, ServerKey};

/// A compiled program: what it costs (``stats``), what it takes and gives
/// (``signature``), and how to run it. Holds no key.
#[pyclass(module = "hearth", frozen)]
pub struct CompiledProgram {
    inner: Arc<hearth::CompiledProgram>,
}

impl CompiledProgram {
    pub(crate) fn new(inner: hearth::CompiledProgram) -> Self {
        CompiledProgram {
            inner: Arc::new(inner),
        }
    }

    pub(crate) fn inner(&self) -> &hearth::CompiledProgram {
        &self.inner
    }
}

/// Shows a run's progress: tqdm when it is installed, else one line on
/// stderr, redrawn in place on a terminal and written every 10 s to a
/// file or pipe (so logs stay readable).
pub(crate) struct ProgressBar<'py> {
    tqdm: Option<Bound<'py, PyAny>>,
    tty: bool,
    total: usize,
    shown: usize,
    start: Instant,
    written: Option<Instant>,
}

impl<'py> ProgressBar<'py> {
    pub(crate) fn new(py: Python<'py>, total: usize) -> PyResult<Self> {
        let tqdm = match py.import("tqdm") {
            Ok(m) => {
                let kw = PyDict::new(py);
                kw.set_item("total", total)?;
                kw.set_item("unit", "PBS")?;
                kw.set_item("desc", "hearth")?;
                Some(m.getattr("tqdm")?.call((), Some(&kw))?)
            }
            Err(_) => None,
        };
        let tty = py
            .import("sys")?
            .getattr("stderr")?
            .call_method0("isatty")
            .and_then(|t| t.extract())
            .unwrap_or(false);
        Ok(ProgressBar {
            tqdm,
            tty,
            total,
            shown: 0,
            start: Instant::now(),
            written: None,
        })
    }

    pub(crate) fn update(&mut self, py: Python<'py>, done: usize) -> PyResult<()> {
        if done <= self.shown {
            return Ok(());
        }
        match &self.tqdm {
            Some(bar) => {
                bar.call_method1("update", (done - self.shown,))?;
            }
            None => {
                let due = self.written.is_none_or(|t| t.elapsed().as_secs() >= 10);
                if !self.tty && !due && done < self.total {
                    return Ok(());
                }
                self.written = Some(Instant::now());
                let secs = self.start.elapsed().as_secs_f64().max(1e-9);
                let rate = done as f64 / secs;
                let left = (self.total - done) as f64 / rate.max(1e-9);
                let (start, end) = if self.tty { ("\r", "") } else { ("", "\n") };
                let line = format!(
                    "{start}hearth: {done}/{} PBS, {rate:.0} PBS/s, {left:.0} s left {end}",
                    self.total
                );
                let err = py.import("sys")?.getattr("stderr")?;
                err.call_method1("write", (line,))?;
                err.call_method0("flush")?;
            }
        }
        self.shown = done;
        Ok(())
    }

    pub(crate) fn close(self, py: Python<'py>) -> PyResult<()> {
        match self.tqdm {
            Some(bar) => {
                bar.call_method0("close")?;
            }
            None if self.tty => {
                let err = py.import("sys")?.getattr("stderr")?;
                err.call_method1("write", ("\n",))?;
            }
            None => {}
        }
        Ok(())
    }
}

#[pymethods]
impl CompiledProgram {
    /// Reads a program file, building it again with every check.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py
            .detach(|| hearth::CompiledProgram::load(&path))
            .or_raise()?;
        secure(inner.circuit().params())?;
        Ok(CompiledProgram::new(inner))
    }

    /// Writes the program file (ops, signature and cost; no key).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.save(&path)).or_raise()
    }

    /// Reads program bytes (``to_bytes``).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let inner = py
            .detach(|| hearth::CompiledProgram::from_bytes(Path::new("<bytes>"), data))
            .or_raise()?;
        secure(inner.circuit().params())?;
        Ok(CompiledProgram::new(inner))
    }

    /// The program as file bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_raise()?))
    }

    /// The parameter set's name.
    #[getter]
    fn params(&self) -> &'static str {
        self.inner.circuit().params().params().name
    }

    /// Its cost from the count backend: ``pbs`` (bootstraps), ``depth``,
    /// ``level_widths`` (bootstraps per level), ``peak_live`` (most
    /// ciphertexts alive), ``inputs`` and ``outputs`` (ciphertexts).
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.circuit().stats();
        let d = PyDict::new(py);
        d.set_item("pbs", s.pbs)?;
        d.set_item("depth", s.depth)?;
        d.set_item("level_widths", s.width_per_level.clone())?;
        d.set_item("peak_live", s.peak_live)?;
        d.set_item("inputs", s.inputs)?;
        d.set_item("outputs", s.outputs)?;
        Ok(d)
    }

    /// Estimated peak memory of an encrypted run on `threads` threads
    /// (default: this machine's cores), in bytes.
    #[pyo3(signature = (threads = None))]
    fn memory_estimate(&self, threads: Option<usize>) -> PyResult<u64> {
        let t = hearth::backend::resolve_threads(threads).or_raise()?;
        Ok(self.inner.memory_estimate(t))
    }

    /// Inputs and outputs: ``{"inputs": [(name, dtype, dims)], "outputs": [...]}``.
    #[getter]
    fn signature<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let list = |ps: &[hearth::api::Param]| -> Vec<(String, String, Vec<usize>)> {
            ps.iter()
                .map(|p| (p.name.clone(), dtype_name(p.shape), p.dims.clone()))
                .collect()
        };
        let sig = self.inner.signature();
        let d = PyDict::new(py);
        d.set_item("inputs", list(&sig.inputs))?;
        d.set_item("outputs", list(&sig.outputs))?;
        Ok(d)
    }

    /// Runs on plain values with the clear backend (no keys, no noise):
    /// the outputs as ``ClientKey.decrypt`` gives them. Inputs as
    /// ``ClientKey.encrypt`` takes them (by position, then by name). For
    /// tests and debugging.
    #[pyo3(signature = (*args, **named))]
    fn run_clear<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        named: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let call = InputCall {
            args,
            only: None,
            named,
        };
        let (_, values) = call.bind(&self.inner.signature().inputs)?;
        let inner = self.inner.clone();
        let outs = py.detach(move || inner.run_clear(&values)).or_raise()?;
        let params = &self.inner.signature().outputs;
        let values = params
            .iter()
            .zip(outs)
            .map(|(p, vs)| to_python(py, p, vs))
            .collect::<PyResult<_>>()?;
        one_or_tuple(py, values)
    }

    /// Packs ``results`` (this program's outputs from ``run``) into GLWE
    /// ciphertexts with ``server_key``'s packing key: what a server sends
    /// back, a few bytes per digit; ``ClientKey.decrypt`` reads it.
    /// ``HearthError`` when the outputs are too noisy to pack (said before
    /// any work).
    fn pack(&self, py: Python<'_>, server_key: &ServerKey, results: &Bundle) -> PyResult<Bundle> {
        let packed = py
            .detach(|| self.inner.pack(&server_key.inner, &results.inner))
            .or_raise()?;
        Ok(Bundle::new(packed))
    }

    /// Runs on encrypted inputs (a bundle from ``ClientKey.encrypt``) with
    /// `server_key`; returns the encrypted outputs as a bundle.
    ///
    /// The GIL is released while it runs; `progress` shows bootstraps
    /// done / total, rate and time left (tqdm when installed). Ctrl-C
    /// stops the run within about a bootstrap per thread and raises
    /// ``KeyboardInterrupt``; nothing of it is left running. `backend`
    /// ``"gpu"`` runs on tfhe-rs's CUDA code in a wheel built with the
    /// ``gpu`` feature; elsewhere it warns and runs on the CPU (with
    /// ``HEARTH_REQUIRE_GPU`` set it raises instead).
    #[pyo3(signature = (server_key, inputs, backend = "cpu", threads = None, progress = true))]
    fn run(
        &self,
        py: Python<'_>,
        server_key: &ServerKey,
        inputs: &Bundle,
        backend: &str,
        threads: Option<usize>,
        progress: bool,
    ) -> PyResult<Bundle> {
        let warn = |py: Python<'_>, why: &str| {
            let msg = format!("backend=\"gpu\": {why}; running on the CPU");
            PyErr::warn(
                py,
                &py.get_type::<PyRuntimeWarning>(),
                &CString::new(msg)?,
                1,
            )
        };
        let engine = match backend {
            "cpu" => Engine::Cpu,
            "gpu" => Engine::Gpu,
            other => {
                return Err(PyValueError::new_err(format!(
                    "backend `{other}`: use \"cpu\" or \"gpu\""
                )))
            }
        };
        // The library's rule (`Engine::usable`, as `Evaluator::choose`
        // below): a GPU that cannot be used is warned of before the run,
        // which goes on the CPU (an error under HEARTH_REQUIRE_GPU).
        let (engine, fallback) = engine.usable().or_raise()?;
        if let Some(why) = fallback {
            warn(py, &why)?;
        }
        self.inner.check_bundle(&inputs.inner).or_raise()?;
        let threads = hearth::backend::resolve_threads(threads).or_raise()?;
        let total = self.inner.circuit().stats().pbs;
        let done = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (handle, rx) = {
            let (program, key, bundle) = (
                self.inner.clone(),
                server_key.inner.clone(),
                inputs.inner.clone(),
            );
            let (done, cancel) = (done.clone(), cancel.clone());
            let progress = move |d, _| {
                done.fetch_max(d, Ordering::Relaxed);
            };
            // The result comes back on a channel: the caller waits on it,
            // without the GIL, waking every 100 ms for progress and signals.
            let (tx, rx) = mpsc::channel();
            let handle = std::thread::spawn(move || {
                // The library's selector: a GPU that fails to take the
                // key falls back too, and the reason comes back.
                let mut fallback = None;
                let result = Evaluator::choose(engine, &key, Some(threads)).and_then(|chosen| {
                    fallback = chosen.fallback;
                    let ev = chosen.evaluator.with_progress(progress).with_cancel(cancel);
                    program.run_bundle(&ev, &bundle)
                });
                let _ = tx.send((result, fallback));
            });
            (handle, rx)
        };
        let mut bar = if progress {
            Some(ProgressBar::new(py, total)?)
        } else {
            None
        };
        let mut rx = rx;
        let outcome = loop {
            // (`Receiver` is not `Sync`: it goes in and comes back out.)
            let (got, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(100)), rx));
            rx = back;
            if let Some(bar) = &mut bar {
                bar.update(py, done.load(Ordering::Relaxed))?;
            }
            match got {
                Ok(result) => break Ok(Some(result)),
                // The worker ended without sending: it panicked.
                Err(RecvTimeoutError::Disconnected) => break Ok(None),
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let Err(e) = py.check_signals() {
                cancel.store(true, Ordering::Relaxed);
                break Err(e);
            }
        };
        // The worker ends soon after a cancel (a bootstrap per thread); a
        // panic in it shows as a closed channel above.
        let _ = py.detach(|| handle.join());
        if let Some(bar) = bar {
            bar.close(py)?;
        }
        let (result, fallback) = outcome?
            .ok_or_else(|| HearthError::new_err("internal error: the run's thread panicked"))?;
        if let Some(why) = fallback {
            warn(py, &why)?;
        }
        let out = result.or_raise()?;
        Ok(Bundle::new(out))
    }

    fn __repr__(&self) -> String {
        let s = self.inner.circuit().stats();
        format!(
            "CompiledProgram({}, pbs={}, depth={})",
            self.params(),
            s.pbs,
            s.depth
        )
    }
}
