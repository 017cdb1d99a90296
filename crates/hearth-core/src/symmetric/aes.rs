//! AES-128 in counter mode (NIST SP 800-38A) on the data owner's side:
//! RustCrypto's `aes` and `ctr` crates, the 16-byte counter block counted
//! as one big-endian integer (`Ctr128BE`).
//!
//! The server evaluates the same keystream under FHE
//! (`hearth_families::ciphers::aes`): block `i` of the keystream is
//! `AES_k(counter + i)`. What the circuit needs beyond the cipher itself
//! (the key schedule's round constants, the S-box as a table, the bit
//! order) is here, so both sides read one description.

use aes::cipher::{BlockCipherEncrypt, KeyInit, KeyIvInit, StreamCipher};

/// Bytes in a block, a key and a counter block.
pub const BLOCK: usize = 16;

/// AES-128's rounds.
pub const ROUNDS: usize = 10;

/// The key schedule's round constants `rcon[1..=10]` (the first byte of
/// each; the other three are zero).
pub const RCON: [u8; ROUNDS] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

/// The S-box's affine constant.
pub const AFFINE_CONSTANT: u8 = 0x63;

/// AES's field, GF(2^8) modulo `x^8 + x^4 + x^3 + x + 1`.
pub fn field_mul(a: u8, b: u8) -> u8 {
    let (mut a, mut b, mut r) = (a, b, 0u8);
    while b != 0 {
        if b & 1 == 1 {
            r ^= a;
        }
        a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
        b >>= 1;
    }
    r
}

/// The S-box's affine map, without its constant: bit `i` of the result
/// is `b_i + b_{i+4} + b_{i+5} + b_{i+6} + b_{i+7}` (indices mod 8).
pub fn affine_linear(x: u8) -> u8 {
    x ^ x.rotate_left(1) ^ x.rotate_left(2) ^ x.rotate_left(3) ^ x.rotate_left(4)
}

/// The inverse in AES's field (0 for 0).
pub fn field_inverse(x: u8) -> u8 {
    // x^254: eight squarings and products.
    let mut r = 1u8;
    for bit in (0..8).rev() {
        r = field_mul(r, r);
        if (254u32 >> bit) & 1 == 1 {
            r = field_mul(r, x);
        }
    }
    r
}

/// The S-box, from its definition: the field inverse, then the affine map.
pub fn sbox(x: u8) -> u8 {
    affine_linear(field_inverse(x)) ^ AFFINE_CONSTANT
}

/// One block encrypted with RustCrypto's AES-128.
pub fn encrypt_block(key: &[u8; BLOCK], block: &[u8; BLOCK]) -> [u8; BLOCK] {
    let cipher = aes::Aes128::new(key.into());
    let mut out = (*block).into();
    cipher.encrypt_block(&mut out);
    out.into()
}

/// The counter block `blocks` blocks after `counter` (big-endian,
/// wrapping at 2^128, as `Ctr128BE` counts).
pub fn counter_after(counter: &[u8; BLOCK], blocks: u64) -> [u8; BLOCK] {
    u128::from_be_bytes(*counter)
        .wrapping_add(blocks as u128)
        .to_be_bytes()
}

/// AES-128 in counter mode on clear bytes: what the data owner runs.
/// Encryption and decryption are the same XOR with the keystream.
pub struct AesCtr {
    cipher: ctr::Ctr128BE<aes::Aes128>,
}

impl AesCtr {
    /// The stream under `key` whose first keystream block is
    /// `AES_key(counter)`.
    pub fn new(key: &[u8; BLOCK], counter: &[u8; BLOCK]) -> Self {
        AesCtr {
            cipher: ctr::Ctr128BE::new(key.into(), counter.into()),
        }
    }

    /// XORs the next keystream bytes into `data`.
    pub fn apply(&mut self, data: &mut [u8]) {
        self.cipher.apply_keystream(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex<const N: usize>(s: &str) -> [u8; N] {
        let v: Vec<u8> = (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect();
        v.try_into().unwrap()
    }

    /// FIPS-197, appendix C.1 (AES-128), and appendix B's example.
    #[test]
    fn fips_197_examples() {
        let key = hex::<16>("000102030405060708090a0b0c0d0e0f");
        let pt = hex::<16>("00112233445566778899aabbccddeeff");
        assert_eq!(
            encrypt_block(&key, &pt),
            hex::<16>("69c4e0d86a7b0430d8cdb78070b4c55a")
        );
        let key = hex::<16>("2b7e151628aed2a6abf7158809cf4f3c");
        let pt = hex::<16>("3243f6a8885a308d313198a2e0370734");
        assert_eq!(
            encrypt_block(&key, &pt),
            hex::<16>("3925841d02dc09fbdc118597196a0b32")
        );
    }

    /// NIST SP 800-38A, F.5.1 (CTR-AES128.Encrypt) and F.5.2 (Decrypt).
    #[test]
    fn sp_800_38a_counter_mode() {
        let key = hex::<16>("2b7e151628aed2a6abf7158809cf4f3c");
        let counter = hex::<16>("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
        let plain: Vec<u8> = [
            "6bc1bee22e409f96e93d7e117393172a",
            "ae2d8a571e03ac9c9eb76fac45af8e51",
            "30c81c46a35ce411e5fbc1191a0a52ef",
            "f69f2445df4f9b17ad2b417be66c3710",
        ]
        .iter()
        .flat_map(|s| hex::<16>(s))
        .collect();
        let sealed: Vec<u8> = [
            "874d6191b620e3261bef6864990db6ce",
            "9806f66b7970fdff8617187bb9fffdff",
            "5ae4df3edbd5d35e5b4f09020db03eab",
            "1e031dda2fbe03d1792170a0f3009cee",
        ]
        .iter()
        .flat_map(|s| hex::<16>(s))
        .collect();
        let mut data = plain.clone();
        AesCtr::new(&key, &counter).apply(&mut data);
        assert_eq!(data, sealed);
        AesCtr::new(&key, &counter).apply(&mut data);
        assert_eq!(data, plain);
        // Block by block: the keystream is AES of the counter blocks.
        for (i, chunk) in sealed.chunks(BLOCK).enumerate() {
            let ks = encrypt_block(&key, &counter_after(&counter, i as u64));
            let got: Vec<u8> = chunk.iter().zip(ks).map(|(c, k)| c ^ k).collect();
            assert_eq!(got, plain[i * BLOCK..(i + 1) * BLOCK]);
        }
    }

    /// The S-box from its definition against the published first row and
    /// a few entries of FIPS-197's table.
    #[test]
    fn sbox_from_its_definition() {
        let row0 = hex::<16>("637c777bf26b6fc53001672bfed7ab76");
        for (i, &v) in row0.iter().enumerate() {
            assert_eq!(sbox(i as u8), v);
        }
        assert_eq!(sbox(0x53), 0xed);
        assert_eq!(sbox(0xff), 0x16);
        for x in 1..=255u8 {
            assert_eq!(field_mul(x, field_inverse(x)), 1);
        }
    }

    /// The counter wraps at 2^128, as `Ctr128BE` does.
    #[test]
    fn counter_wraps() {
        assert_eq!(counter_after(&[0xff; 16], 1), [0; 16]);
        let key = [7u8; 16];
        let mut data = [0u8; 32];
        AesCtr::new(&key, &[0xff; 16]).apply(&mut data);
        assert_eq!(data[16..], encrypt_block(&key, &[0; 16]));
    }
}
