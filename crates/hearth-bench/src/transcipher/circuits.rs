//! hearth's side of `hearth-bench transcipher`: each cipher's set-up
//! circuit (from the encrypted key to the state the samples resume), its
//! sample circuit (from that state and the owner's ciphertext to data
//! bits), and the owner's ciphertext.

use hearth::ciphers::{aes, kreyvium::Stream};
use hearth::symmetric::aes::{AesCtr, BLOCK, ROUNDS};
use hearth::symmetric::kreyvium::{bits_of, Kreyvium};
use hearth::{Circuit, CircuitBuilder, Error, ParameterSet, Wire};

/// `--cipher`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cipher {
    /// Kreyvium, 64 bits of keystream per sample after the warm-up.
    Kreyvium,
    /// AES-128 in counter mode, one 16-byte block per sample after the
    /// key schedule.
    Aes,
}

impl Cipher {
    /// The cipher's name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Cipher::Kreyvium => "kreyvium",
            Cipher::Aes => "aes-128",
        }
    }

    /// Bytes of data per sample: tfhe-rs's unit for each cipher.
    pub fn bytes(self) -> usize {
        match self {
            Cipher::Kreyvium => 8,
            Cipher::Aes => BLOCK,
        }
    }

    /// What a sample is, in the tables.
    pub fn unit(self) -> &'static str {
        match self {
            Cipher::Kreyvium => "64 bits",
            Cipher::Aes => "one block",
        }
    }

    /// What the set-up is, in the tables.
    pub fn setup(self) -> &'static str {
        match self {
            Cipher::Kreyvium => "warm-up (1 152 rounds)",
            Cipher::Aes => "key schedule",
        }
    }

    /// Encrypted bits the set-up yields and a sample reads.
    fn state_bits(self) -> usize {
        match self {
            Cipher::Kreyvium => 544,
            Cipher::Aes => (ROUNDS + 1) * 8 * BLOCK,
        }
    }

    /// The owner's ciphertext of `data` (one sample's bytes) under `key`
    /// and `iv`: Kreyvium's first bytes after the warm-up, AES-CTR's first
    /// block (counter block `iv`).
    pub fn seal(self, key: &[u8; 16], iv: &[u8; 16], data: &[u8]) -> Vec<u8> {
        let mut sealed = data.to_vec();
        match self {
            Cipher::Kreyvium => Kreyvium::new(key, iv).apply(&mut sealed),
            Cipher::Aes => AesCtr::new(key, iv).apply(&mut sealed),
        }
        sealed
    }

    /// The set-up: the 128 encrypted key bits (bit `i` of byte `n` at
    /// `8 n + i`; Kreyvium's in its own order, [`bits_of`]) in, the state
    /// out.
    pub fn setup_circuit(
        self,
        params: &'static ParameterSet,
        threads: usize,
        iv: &[u8; 16],
    ) -> Result<Circuit, Error> {
        let mut b = CircuitBuilder::new(params);
        b.set_threads(threads);
        let k = bits(&mut b, 128)?;
        let state = match self {
            Cipher::Kreyvium => {
                let k: [Wire; 128] = k.try_into().expect("128 inputs");
                Stream::new(&mut b, &k, &bits_of(iv))?.bits()
            }
            Cipher::Aes => aes::expand_key(&mut b, &k)?.concat(),
        };
        for w in state {
            b.output(w)?;
        }
        Ok(b.build())
    }

    /// One sample: the set-up's state in, `sealed`'s data bits out (least
    /// significant first in each byte).
    pub fn sample_circuit(
        self,
        params: &'static ParameterSet,
        threads: usize,
        iv: &[u8; 16],
        sealed: &[u8],
    ) -> Result<Circuit, Error> {
        let mut b = CircuitBuilder::new(params);
        b.set_threads(threads);
        let state = bits(&mut b, self.state_bits())?;
        let out = match self {
            Cipher::Kreyvium => {
                let sealed: Vec<bool> = sealed
                    .iter()
                    .flat_map(|&x| (0..8).map(move |i| (x >> i) & 1 == 1))
                    .collect();
                Stream::resume(&state)
                    .expect("544 state bits")
                    .decrypt(&mut b, &sealed)?
            }
            Cipher::Aes => {
                let keys: Vec<Vec<Wire>> = state.chunks(8 * BLOCK).map(<[Wire]>::to_vec).collect();
                let block: [u8; BLOCK] = sealed
                    .try_into()
                    .map_err(|_| Error::Config(format!("an AES sample is {BLOCK} bytes")))?;
                aes::decrypt_block(
                    &mut b,
                    &keys,
                    &aes::clear_bits(iv),
                    &aes::clear_bits(&block),
                )?
            }
        };
        for w in out {
            b.output(w)?;
        }
        Ok(b.build())
    }

    /// The key's bits as the set-up circuit reads them, as values (0 or 2).
    pub fn key_values(self, key: &[u8; 16]) -> Vec<i64> {
        match self {
            Cipher::Kreyvium => bits_of(key).iter().map(|&x| 2 * x as i64).collect(),
            Cipher::Aes => (0..128)
                .map(|j| 2 * ((key[j / 8] >> (j % 8)) & 1) as i64)
                .collect(),
        }
    }
}

/// `n` encrypted bits as inputs.
fn bits(b: &mut CircuitBuilder, n: usize) -> Result<Vec<Wire>, Error> {
    (0..n)
        .map(|_| b.input_with_step(0, 2, 2).map_err(Error::from))
        .collect()
}
