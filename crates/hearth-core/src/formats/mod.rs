//! Program-level formats: named inputs and outputs ([`Param`]) and bundles
//! of typed encrypted values ([`Bundle`]), with the client key's methods
//! that encrypt and decrypt them. Above the crypto layer, which knows
//! values and ciphertexts but no program. A program file's signature and
//! stated cost ([`program_head`]) are read here; the operations after them
//! are `hearth::formats::program_file`, beside the programs they rebuild.

pub mod bundle;
pub mod clear;
pub mod param;
pub mod program_head;
pub mod transcipher_key;

pub use bundle::{Bundle, Entry};
pub use param::{check_cover, Param, MAX_VALUES};
pub use program_head::{ProgramHead, ProgramSummary, Signature};
pub use transcipher_key::{Cipher, TranscipherKey};
