//! Python bindings of hearth (the `hearth` package's native module
//! `hearth._hearth`): parameter sets, keys, programs of both integer
//! families built from Python operators, kernels, compiled programs and
//! their files, runs clear or encrypted, and the compute server's client.

mod compiled;
mod convert;
mod errors;
mod kernels;
mod keys;
mod program;
mod remote;
mod symmetric;
mod value;

use pyo3::prelude::*;

/// The names of the parameter sets the package accepts (the INSECURE test
/// sets are refused by every front end).
#[pyfunction]
fn parameter_sets() -> Vec<&'static str> {
    hearth::crypto::params::ALL
        .iter()
        .filter(|p| !p.is_insecure())
        .map(|p| p.name)
        .collect()
}

/// The backends ``CompiledProgram.run`` can use here: ``"cpu"``, and
/// ``"gpu"`` in a wheel built with the `gpu` feature on a machine with a
/// usable CUDA device.
#[pyfunction]
fn backends() -> Vec<&'static str> {
    match hearth::backend::no_gpu_reason() {
        None => vec!["cpu", "gpu"],
        Some(_) => vec!["cpu"],
    }
}

#[pymodule]
fn _hearth(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parameter_sets, m)?)?;
    m.add_function(wrap_pyfunction!(backends, m)?)?;
    m.add_function(wrap_pyfunction!(symmetric::aes_ctr, m)?)?;
    m.add_function(wrap_pyfunction!(symmetric::kreyvium, m)?)?;
    m.add_class::<program::Program>()?;
    m.add_class::<value::Value>()?;
    m.add_function(wrap_pyfunction!(value::_table_ops, m)?)?;
    m.add_class::<compiled::CompiledProgram>()?;
    m.add_class::<keys::ClientKey>()?;
    m.add_class::<keys::PublicKey>()?;
    m.add_class::<keys::ServerKey>()?;
    m.add_class::<keys::CompressedServerKey>()?;
    m.add_class::<keys::Bundle>()?;
    m.add_class::<remote::Client>()?;
    m.add_class::<remote::Job>()?;
    kernels::register(m)?;
    errors::register(m)?;
    Ok(())
}
