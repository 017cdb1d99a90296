//! Symmetric ciphers on the data owner's side, for transciphering: the
//! owner encrypts data with a light cipher and sends it at its own size;
//! the server evaluates the same cipher's keystream under FHE (the
//! circuits are `hearth_families::ciphers`) and gets FHE ciphertexts of the
//! data.

pub mod aes;
pub mod kreyvium;
