//! The data owner's plain ciphers, for transciphering: AES-128 in counter
//! mode (RustCrypto's `aes` and `ctr`) and Kreyvium, on bytes.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::ShapeError;

/// 16 bytes, or a `ShapeError` naming `what`.
fn sixteen(what: &str, b: &[u8]) -> PyResult<[u8; 16]> {
    b.try_into()
        .map_err(|_| ShapeError::new_err(format!("{what} must be 16 bytes, not {}", b.len())))
}

/// AES-128 in counter mode: `data` XORed with the keystream of `key` from
/// the counter block `counter` (16 bytes: a 128-bit big-endian counter,
/// one step per 16-byte block, wrapping at 2^128). Encrypts and decrypts
/// alike. Never use one key and counter block twice: each message starts
/// after the last block of the one before.
#[pyfunction]
pub fn aes_ctr<'py>(
    py: Python<'py>,
    key: &[u8],
    counter: &[u8],
    data: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let (key, counter) = (sixteen("key", key)?, sixteen("counter", counter)?);
    let mut out = data.to_vec();
    hearth::symmetric::aes::AesCtr::new(&key, &counter).apply(&mut out);
    Ok(PyBytes::new(py, &out))
}

/// Kreyvium: `data` XORed with the keystream of `key` and `iv` (16 bytes
/// each). Encrypts and decrypts alike. Never use one key and IV twice.
#[pyfunction]
pub fn kreyvium<'py>(
    py: Python<'py>,
    key: &[u8],
    iv: &[u8],
    data: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let (key, iv) = (sixteen("key", key)?, sixteen("iv", iv)?);
    let mut out = data.to_vec();
    hearth::symmetric::kreyvium::Kreyvium::new(&key, &iv).apply(&mut out);
    Ok(PyBytes::new(py, &out))
}
