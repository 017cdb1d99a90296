use std::time::{Duration, Instant};

use hearth::Error;
use tfhe::shortint::parameters::current_params::{
    V1_8_PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128,
    V1_8_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
};
use tfhe::shortint::{gen_keys, ClientKey, ServerKey};
use tfhe::transciphering::{
    AesFheRoundKeys, AesFheState, AesPlainKey, AesPlainState, KreyviumFheState, KreyviumPlainKey,
    KreyviumPlainState, StreamCipher, Transcipherer,
};

use super::Cipher;

use crate::tfhe::TfheSet;

/// One of tfhe-rs's sets: its keys, its set-up stream and the owner's
/// stream beside it.
pub struct Side {
    pub set: TfheSet,
    ck: ClientKey,
    sk: ServerKey,
    fhe: Box<dyn Transcipherer + Send>,
    owner: Box<dyn StreamCipher + Send>,
    pool: rayon::ThreadPool,
    pub setup: Duration,
    pub setup_pbs: Option<u64>,
    pub pbs: Option<u64>,
    pub times: Vec<Duration>,
}

/// Both sets, keyed with `key` and `iv` and set up (timed): Kreyvium's
/// warm-up, AES's key schedule.
pub fn sides(
    cipher: Cipher,
    threads: usize,
    key: &[u8; 16],
    iv: &[u8; 16],
) -> Result<Vec<Side>, Error> {
    [TfheSet::KsPbs, TfheSet::Ks32]
        .into_iter()
        .map(|set| {
            eprintln!("tfhe-rs keys and {} ({})...", cipher.setup(), set.name());
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .map_err(|e| Error::Config(e.to_string()))?;
            let (ck, sk) = match set {
                TfheSet::KsPbs => gen_keys(V1_8_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128),
                TfheSet::Ks32 => gen_keys(V1_8_PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128),
            };
            let (fhe, owner, setup): (
                Box<dyn Transcipherer + Send>,
                Box<dyn StreamCipher + Send>,
                _,
            ) = match cipher {
                Cipher::Kreyvium => {
                    let enc = KreyviumPlainKey::from(*key).encrypt(&ck);
                    pbs_reset();
                    let t = Instant::now();
                    let fhe = pool.install(|| KreyviumFheState::new(enc, *iv, &sk));
                    let setup = t.elapsed();
                    (
                        Box::new(fhe),
                        Box::new(KreyviumPlainState::new(*key, *iv)),
                        setup,
                    )
                }
                Cipher::Aes => {
                    let enc = AesPlainKey::from(*key).encrypt(&ck);
                    pbs_reset();
                    let t = Instant::now();
                    let keys = pool.install(|| AesFheRoundKeys::new(&sk, &enc));
                    let setup = t.elapsed();
                    let iv = u128::from_be_bytes(*iv);
                    let fhe = AesFheState::new(keys, iv);
                    (Box::new(fhe), Box::new(AesPlainState::new(*key, iv)), setup)
                }
            };
            Ok(Side {
                set,
                setup_pbs: pbs_count(),
                ck,
                sk,
                fhe,
                owner,
                pool,
                setup,
                pbs: None,
                times: Vec::new(),
            })
        })
        .collect()
}

impl Side {
    /// The next unit (64 bits, a block): the owner encrypts `data`,
    /// tfhe-rs transciphers it; checked.
    pub fn sample(&mut self, data: &[u8]) -> Result<(), Error> {
        let sym = self
            .owner
            .encrypt(data)
            .map_err(|e| Error::Config(format!("tfhe-rs's plain cipher: {e:?}")))?;
        pbs_reset();
        let t = Instant::now();
        let (fhe, sk) = (&mut self.fhe, &self.sk);
        let blocks = self
            .pool
            .install(|| fhe.transcipher(sk, &sym))
            .map_err(|e| Error::Config(format!("tfhe-rs's transcipher: {e:?}")))?;
        self.times.push(t.elapsed());
        self.pbs = pbs_count();
        // 2-bit blocks, least significant first.
        let mut bytes = vec![0u8; data.len()];
        for (i, b) in blocks.iter().enumerate() {
            let v = self.ck.decrypt(b) as u8 & 3;
            bytes[i / 4] |= v << (2 * (i % 4));
        }
        if bytes != data {
            return Err(Error::Config(format!(
                "tfhe-rs ({}) transciphered {bytes:02x?}, not the data {data:02x?}",
                self.set.name()
            )));
        }
        Ok(())
    }
}

#[cfg(feature = "tfhe-pbs-stats")]
fn pbs_reset() {
    tfhe::reset_pbs_count();
}

#[cfg(feature = "tfhe-pbs-stats")]
fn pbs_count() -> Option<u64> {
    Some(tfhe::get_pbs_count())
}

#[cfg(not(feature = "tfhe-pbs-stats"))]
fn pbs_reset() {}

#[cfg(not(feature = "tfhe-pbs-stats"))]
fn pbs_count() -> Option<u64> {
    None
}
