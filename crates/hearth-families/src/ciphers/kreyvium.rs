//! Kreyvium under FHE: each round's three new state bits are
//! `a ^ b ^ c ^ d ^ (e & f)`, one bootstrap each with the parity gate
//! ([`crate::bits::parity`]), and every state bit stays a clean bit, so the
//! next round's products read it directly. A keystream bit is the parity of
//! seven state and key bits; XORed with the owner's clear ciphertext bit
//! (a constant) it is the data bit: one more bootstrap. So 3 bootstraps per
//! round, 4 per data bit; the warm-up's 1 152 rounds cost 3 456 once per
//! key and IV. Rounds 66 apart never read each other's bits, so the
//! builder's levels hold up to 66 rounds side by side.

use hearth_core::symmetric::kreyvium::{State, Taps, WARM_UP};

use crate::bits::parity::{xor_all, xor_with};
use crate::bits::ONE;
use crate::circuit::{CircuitBuilder, Wire};
use crate::error::Error;

/// Kreyvium's state under FHE, warmed up: the server's side of the cipher
/// for one key and IV.
pub struct Stream {
    state: State<Wire>,
}

impl Stream {
    /// Loads the encrypted key bits `K1..K128` (bits: 0 or 2) and the clear
    /// IV, and runs the warm-up.
    pub fn new(b: &mut CircuitBuilder, key: &[Wire; 128], iv: &[bool; 128]) -> Result<Self, Error> {
        let (zero, one) = (b.constant(0), b.constant(ONE));
        let iv = iv.map(|x| if x { one } else { zero });
        Stream::load(b, key, &iv)
    }

    /// [`Stream::new`] with the IV's bits `IV1..IV128` as wires (inputs,
    /// or constants): one circuit for every IV.
    pub fn load(
        b: &mut CircuitBuilder,
        key: &[Wire; 128],
        iv: &[Wire; 128],
    ) -> Result<Self, Error> {
        let (zero, one) = (b.constant(0), b.constant(ONE));
        let mut s = Stream {
            state: State::load(key, iv, zero, one),
        };
        for _ in 0..WARM_UP {
            s.round(b)?;
        }
        Ok(s)
    }

    /// The state as bits ([`State::bits`]): to keep a warmed-up stream and
    /// resume it later with [`Stream::resume`].
    pub fn bits(&self) -> Vec<Wire> {
        self.state.bits()
    }

    /// A stream from the bits [`Stream::bits`] gave (encrypted inputs of
    /// a later circuit, or wires); `None` unless there are 544.
    pub fn resume(bits: &[Wire]) -> Option<Self> {
        State::from_bits(bits).map(|state| Stream { state })
    }

    /// One round: the keystream bit's terms (to XOR), the state advanced.
    fn round(&mut self, b: &mut CircuitBuilder) -> Result<[Wire; 7], Error> {
        let t: Taps<Wire> = self.state.taps();
        let and = |v: &[bool]| v[0] & v[1];
        let t1 = xor_with(b, &[t.t1[0], t.t1[1], t.add[0], t.v], &t.and1, &and)?;
        let t2 = xor_with(b, &[t.t2[0], t.t2[1], t.add[1]], &t.and2, &and)?;
        let t3 = xor_with(b, &[t.t3[0], t.t3[1], t.k, t.add[2]], &t.and3, &and)?;
        self.state.shift([t3, t1, t2]);
        Ok([t.t1[0], t.t1[1], t.t2[0], t.t2[1], t.t3[0], t.t3[1], t.k])
    }

    /// The data under `ciphertext` (the owner's clear bits, encrypted with
    /// this stream's next keystream bits): encrypted bits, 0 or 2.
    pub fn decrypt(
        &mut self,
        b: &mut CircuitBuilder,
        ciphertext: &[bool],
    ) -> Result<Vec<Wire>, Error> {
        let bits: Vec<Wire> = ciphertext
            .iter()
            .map(|&c| b.constant(if c { ONE } else { 0 }))
            .collect();
        self.decrypt_wires(b, &bits)
    }

    /// [`Stream::decrypt`] with the ciphertext's bits as wires (inputs, or
    /// constants): one circuit for every ciphertext of this length.
    pub fn decrypt_wires(
        &mut self,
        b: &mut CircuitBuilder,
        ciphertext: &[Wire],
    ) -> Result<Vec<Wire>, Error> {
        let mut out = Vec::with_capacity(ciphertext.len());
        for &c in ciphertext {
            let z = self.round(b)?;
            let mut terms = z.to_vec();
            terms.push(c);
            out.push(xor_all(b, &terms)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, ClearBackend};
    use crate::crypto::params::DIGITS_KS32_128;
    use hearth_core::symmetric::kreyvium::{bits_of, Kreyvium};
    use rand::{Rng, SeedableRng};

    /// Random keys, IVs and data: the circuit on the clear backend gives
    /// the data back from the clear cipher's ciphertext.
    #[test]
    fn transciphered_bits_are_the_data() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(85);
        for _ in 0..3 {
            let (key, iv): ([u8; 16], [u8; 16]) = (rng.gen(), rng.gen());
            let data: Vec<u8> = (0..8).map(|_| rng.gen()).collect();
            let mut sealed = data.clone();
            Kreyvium::new(&key, &iv).apply(&mut sealed);
            let sealed_bits: Vec<bool> = sealed
                .iter()
                .flat_map(|&byte| (0..8).map(move |i| (byte >> i) & 1 == 1))
                .collect();

            let mut b = CircuitBuilder::new(&DIGITS_KS32_128);
            b.set_threads(2);
            let k: Vec<Wire> = (0..128)
                .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
                .collect();
            let k: [Wire; 128] = k.try_into().unwrap();
            let mut s = Stream::new(&mut b, &k, &bits_of(&iv)).unwrap();
            for w in s.decrypt(&mut b, &sealed_bits).unwrap() {
                b.output(w).unwrap();
            }
            let c = b.build();
            let stats = c.stats();
            assert!(stats.pbs <= 3 * (WARM_UP + 64) + 64, "{stats:?}");
            let key_in: Vec<u64> = bits_of(&key).iter().map(|&x| 2 * x as u64).collect();
            let out = ClearBackend.evaluate(&c, &key_in).unwrap();
            let got: Vec<u8> = out
                .chunks(8)
                .map(|c| c.iter().rev().fold(0u8, |a, &v| a << 1 | (v == 2) as u8))
                .collect();
            assert_eq!(got, data);
            eprintln!("kreyvium 64 bits: {} PBS, depth {}", stats.pbs, stats.depth);
        }
    }

    /// Random keys, IVs and data against the clear cipher: one circuit
    /// with the key, the IV and the owner's ciphertext as inputs, on the
    /// clear backend. `HEARTH_KREYVIUM_CASES` cases (default 300; the
    /// book's figure is 10 000).
    #[test]
    fn random_cases_against_the_clear_cipher() {
        let cases: usize = std::env::var("HEARTH_KREYVIUM_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(300);
        let mut b = CircuitBuilder::new(&DIGITS_KS32_128);
        let mut bits = |n: usize| -> Vec<Wire> {
            (0..n)
                .map(|_| b.input_with_step(0, ONE, ONE).unwrap())
                .collect()
        };
        let (k, iv, sealed) = (bits(128), bits(128), bits(64));
        let mut s = Stream::load(&mut b, &k.try_into().unwrap(), &iv.try_into().unwrap()).unwrap();
        for w in s.decrypt_wires(&mut b, &sealed).unwrap() {
            b.output(w).unwrap();
        }
        let c = b.build();
        assert!(c.stats().pbs <= 3 * (WARM_UP + 64) + 64, "{:?}", c.stats());
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x85);
        let encode = |bits: &[bool]| bits.iter().map(|&x| 2 * x as u64).collect::<Vec<u64>>();
        for case in 0..cases {
            let (key, iv, data): ([u8; 16], [u8; 16], [u8; 8]) = (rng.gen(), rng.gen(), rng.gen());
            let mut sealed = data;
            Kreyvium::new(&key, &iv).apply(&mut sealed);
            let mut input = encode(&bits_of(&key));
            input.extend(encode(&bits_of(&iv)));
            input.extend(encode(
                &sealed
                    .iter()
                    .flat_map(|&x| (0..8).map(move |i| (x >> i) & 1 == 1))
                    .collect::<Vec<bool>>(),
            ));
            let out = ClearBackend.evaluate(&c, &input).unwrap();
            let got: Vec<u8> = out
                .chunks(8)
                .map(|c| c.iter().rev().fold(0u8, |a, &v| a << 1 | (v == 2) as u8))
                .collect();
            assert_eq!(got, data, "case {case}");
        }
    }
}
