//! Register and memory values under a client key: a value of `bits` bits
//! is that many encrypted bits (least significant first), as the machine
//! holds them in [`crate::Val::Enc`] and [`crate::Byte::Enc`].

use hearth::api::{Encrypted, Shape};
use hearth::{Ciphertext, ClientKey, Error};

/// `value` as `bits` encrypted bits (an error if it does not fit).
pub fn encrypt(key: &ClientKey, value: u64, bits: usize) -> Result<Vec<Ciphertext>, Error> {
    Ok(key
        .encrypt_word_of(value, bits, false)?
        .ciphertexts()
        .to_vec())
}

/// The unsigned value of encrypted bits (at most 64 of them).
pub fn decrypt(key: &ClientKey, bits: &[Ciphertext]) -> Result<u64, Error> {
    let e = Encrypted::new(
        Shape::Word {
            bits: bits.len(),
            signed: false,
        },
        bits.to_vec(),
    )?;
    let v = key.decrypt_word_value(&e)?;
    u64::try_from(&v).map_err(|_| Error::Config(format!("{v} does not fit 64 bits")))
}
