//! A transciphering key: a data owner's symmetric key (AES-128 or
//! Kreyvium, 128 bits) encrypted once with the client key or the public
//! key, with the cipher it is for. Its own file kind, so a server or a
//! tool can tell it from a bundle of data and check it; a program takes
//! it as its `U128` key input ([`TranscipherKey::as_input`]).

use std::fmt;
use std::path::Path;

use num_bigint::BigInt;
use serde::{Deserialize, Serialize};

use crate::crypto::encoding::Shape;
use crate::crypto::files::{decode, encode, inconsistent, read_bytes, write_file, FileKind};
use crate::crypto::keys::{ClientKey, KeyId};
use crate::crypto::params::ParamsId;
use crate::crypto::public_key::PublicKey;
use crate::error::Error;
use crate::formats::bundle::{Bundle, Stored, Written};
use crate::formats::param::Param;

/// The symmetric cipher a key is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Cipher {
    /// AES-128 (in counter mode: `U128::aes_key_schedule`, then
    /// `AesRoundKeys::aes_ctr_decrypt`).
    Aes128,
    /// Kreyvium (`U128::kreyvium_decrypt`).
    Kreyvium,
}

impl fmt::Display for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cipher::Aes128 => "AES-128",
            Cipher::Kreyvium => "Kreyvium",
        })
    }
}

/// The name of the key's one entry in its file.
const ENTRY: &str = "key";

/// The entry a transciphering key holds: one unsigned 128-bit word.
fn key_param(name: &str) -> Param {
    Param::new(
        name,
        Shape::Word {
            bits: 128,
            signed: false,
        },
        &[],
    )
}

/// A symmetric key encrypted for one client key, and its cipher.
#[derive(Clone, Debug, PartialEq)]
pub struct TranscipherKey {
    cipher: Cipher,
    /// One entry, [`ENTRY`]: the key's value (its bytes little-endian),
    /// encrypted.
    key: Bundle,
}

/// What its file holds after the header.
#[derive(Serialize)]
struct Out<'a> {
    cipher: Cipher,
    key: Written<'a>,
}

#[derive(Deserialize)]
struct In {
    cipher: Cipher,
    key: Stored,
}

impl TranscipherKey {
    /// The key encrypted by `encrypt` (a client or public key's
    /// `encrypt_bundle`).
    fn encrypted(
        cipher: Cipher,
        key: &[u8; 16],
        encrypt: impl FnOnce(&[Param], &[Vec<BigInt>]) -> Result<Bundle, Error>,
    ) -> Result<Self, Error> {
        let value = BigInt::from(u128::from_le_bytes(*key));
        let key = encrypt(&[key_param(ENTRY)], &[vec![value]])?;
        Ok(TranscipherKey { cipher, key })
    }

    /// What its file holds after the header.
    fn out(&self) -> Out<'_> {
        Out {
            cipher: self.cipher,
            key: self.key.payload(),
        }
    }

    /// The cipher it is for.
    pub fn cipher(&self) -> Cipher {
        self.cipher
    }

    /// The parameter set it is encrypted on.
    pub fn params(&self) -> ParamsId {
        self.key.params()
    }

    /// The client key it is encrypted for.
    pub fn key_id(&self) -> KeyId {
        self.key.key_id()
    }

    /// The key as a bundle for a program's `U128` input named `name`,
    /// to join with the data's bundle ([`Bundle::combine`]).
    pub fn as_input(&self, name: &str) -> Result<Bundle, Error> {
        self.key.renamed(ENTRY, name)
    }

    /// The key as file bytes (header and payload).
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        encode(
            Path::new("<transciphering key>"),
            FileKind::TranscipherKey,
            self.params(),
            self.key_id(),
            &self.out(),
        )
    }

    /// Reads transciphering key bytes from anywhere (`origin` names them
    /// in errors): one encrypted 128-bit word, not in the clear.
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<Self, Error> {
        let (info, stored): (_, In) = decode(origin, bytes, FileKind::TranscipherKey)?;
        let key = Bundle::from_payload(origin, info.params, info.key_id, stored.key)?;
        if key.signature() != [key_param(ENTRY)] {
            return Err(inconsistent(
                origin,
                "a transciphering key holds one unsigned 128-bit word",
            ));
        }
        if key.has_clear_values() {
            return Err(inconsistent(
                origin,
                "a transciphering key in the clear: it must be encrypted",
            ));
        }
        Ok(TranscipherKey {
            cipher: stored.cipher,
            key,
        })
    }

    /// Writes the key atomically.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_file(
            path,
            FileKind::TranscipherKey,
            self.params(),
            self.key_id(),
            &self.out(),
            false,
        )
        .map(drop)
    }

    /// Reads a key written by [`TranscipherKey::save`].
    pub fn load(path: &Path) -> Result<Self, Error> {
        Self::from_bytes(path, &read_bytes(path, FileKind::TranscipherKey)?)
    }
}

impl ClientKey {
    /// `key` (16 bytes) for `cipher`, encrypted once with this key for
    /// transciphering.
    pub fn transcipher_key(&self, cipher: Cipher, key: &[u8; 16]) -> Result<TranscipherKey, Error> {
        TranscipherKey::encrypted(cipher, key, |p, v| self.encrypt_bundle(p, v))
    }
}

impl PublicKey {
    /// `key` (16 bytes) for `cipher`, encrypted once with the public key
    /// for transciphering: what a device without the client key sends.
    pub fn transcipher_key(&self, cipher: Cipher, key: &[u8; 16]) -> Result<TranscipherKey, Error> {
        TranscipherKey::encrypted(cipher, key, |p, v| self.encrypt_bundle(p, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::INSECURE_TEST_BITS;
    use crate::testing::keys::keys;

    /// Made with either key, it reads back from its bytes, decrypts to
    /// the key's value as a program's input, and refuses forged contents:
    /// another entry, the key in the clear, a bundle's kind.
    #[test]
    fn transciphering_keys_round_trip_and_refuse_forgeries() {
        let (client, _) = keys(&INSECURE_TEST_BITS);
        let aes: [u8; 16] = *b"a device's key!!";
        let value = BigInt::from(u128::from_le_bytes(aes));
        let public = client.public_key().unwrap();
        let made = [
            client.transcipher_key(Cipher::Aes128, &aes).unwrap(),
            public.transcipher_key(Cipher::Kreyvium, &aes).unwrap(),
        ];
        for k in &made {
            let bytes = k.to_bytes().unwrap();
            let back = TranscipherKey::from_bytes(Path::new("k"), &bytes).unwrap();
            assert_eq!(&back, k);
            let input = back.as_input("aes_key").unwrap();
            let got = client.decrypt_bundle(&input).unwrap();
            assert_eq!(got, vec![(key_param("aes_key"), vec![value.clone()])]);
            // Not a bundle, nor a bundle a key.
            assert!(Bundle::from_bytes(Path::new("k"), &bytes).is_err());
        }
        assert_eq!(made[1].cipher().to_string(), "Kreyvium");
        let forge = |key: &Bundle| {
            let out = Out {
                cipher: Cipher::Aes128,
                key: key.payload(),
            };
            let (p, id) = (key.params(), key.key_id());
            encode(Path::new("f"), FileKind::TranscipherKey, p, id, &out).unwrap()
        };
        let (id, key_id) = (INSECURE_TEST_BITS.id, client.key_id());
        let clear = Bundle::clear(id, key_id, &[key_param(ENTRY)], &[vec![value.clone()]]);
        let e = TranscipherKey::from_bytes(Path::new("f"), &forge(&clear.unwrap()));
        assert!(e.unwrap_err().to_string().contains("in the clear"));
        let other = client.encrypt_bundle(&[key_param("other")], &[vec![value]]);
        let e = TranscipherKey::from_bytes(Path::new("f"), &forge(&other.unwrap()));
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("one unsigned 128-bit word"));
    }
}
