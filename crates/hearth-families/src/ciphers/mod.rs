//! Symmetric ciphers' keystreams as circuits on bits, for transciphering:
//! the data owner encrypts with the clear cipher
//! (`hearth_core::symmetric`), the server evaluates the same keystream
//! under the encrypted key and XORs it into the owner's ciphertext, which
//! yields encrypted bits of the data.
//!
//! Both sides share the cipher's description (its state and taps), so the
//! circuit cannot drift from the cipher the owner runs; the tests compare
//! them on random keys.

pub mod aes;
pub mod kreyvium;
mod tower;
