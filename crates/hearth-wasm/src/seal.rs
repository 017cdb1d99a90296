//! The data owner's plain ciphers for transciphering, on bytes: AES-128
//! in counter mode (RustCrypto's `aes` and `ctr`) and Kreyvium, as the
//! page calls them. Plain Rust, tested natively (tests/values.rs).

use hearth_core::symmetric::aes::AesCtr;
use hearth_core::symmetric::kreyvium::Kreyvium;

/// 16 bytes, or why not.
fn sixteen(what: &str, b: &[u8]) -> Result<[u8; 16], String> {
    b.try_into()
        .map_err(|_| format!("{what} must be 16 bytes, not {}", b.len()))
}

/// `data` under AES-128-CTR with `key` from the counter block `counter`
/// (a 128-bit big-endian counter): encrypts and decrypts alike.
pub fn aes_ctr(key: &[u8], counter: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    let (key, counter) = (sixteen("the key", key)?, sixteen("the counter", counter)?);
    let mut out = data.to_vec();
    AesCtr::new(&key, &counter).apply(&mut out);
    Ok(out)
}

/// `data` under Kreyvium with `key` and `iv`: encrypts and decrypts alike.
pub fn kreyvium(key: &[u8], iv: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    let (key, iv) = (sixteen("the key", key)?, sixteen("the IV", iv)?);
    let mut out = data.to_vec();
    Kreyvium::new(&key, &iv).apply(&mut out);
    Ok(out)
}
