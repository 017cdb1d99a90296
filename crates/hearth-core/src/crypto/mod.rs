//! The crypto layer: parameter sets and their noise analysis, keys and
//! ciphertexts, lookup tables, one KS-PBS, key and ciphertext files. Built
//! on tfhe-rs's `core_crypto`; everything above it sees digits and tables.

pub mod bootstrap;
pub mod client_key;
pub mod compressed;
pub mod encoding;
pub mod files;
mod key_files;
pub mod keys;
pub mod lut;
pub mod many;
pub mod noise;
pub mod packing;
pub(crate) mod pair;
pub mod params;
pub mod public_key;
