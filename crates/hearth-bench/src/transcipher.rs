//! `hearth-bench transcipher`: Kreyvium transciphering, hearth's circuit
//! (`hearth::ciphers::kreyvium`) beside tfhe-rs's `transciphering` module
//! on both of tfhe-rs's CPU sets for 2-bit blocks.
//!
//! Each side warms one stream up once (key and IV loaded, 1 152 rounds),
//! timed; then the samples, alternating between the sides, each turn 64
//! bits of the owner's ciphertext into encrypted data bits, checked
//! against the data. hearth resumes its warmed-up state (544 encrypted
//! bits) in each sample's circuit; tfhe-rs's stream advances by 64 bits
//! per sample, the owner's ciphertext following it.

use std::time::{Duration, Instant};

use hearth::backend::{Backend, ClearBackend, CpuBackend};
use hearth::ciphers::kreyvium::Stream;
use hearth::symmetric::kreyvium::{bits_of, Kreyvium};
use hearth::{Ciphertext, CircuitBuilder, ClientKey, Error, ParameterSet};
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::report::{median, ms, Table};

/// `--backend`: timed beside tfhe-rs, or counted.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// Encrypted on the cpu backend, beside tfhe-rs.
    Cpu,
    /// Bootstraps and depth; the circuits checked on the clear backend.
    Count,
}

/// What `hearth-bench transcipher` was asked.
pub struct Options {
    pub run: Run,
    pub params: &'static ParameterSet,
    pub threads: usize,
    pub samples: usize,
    pub seed: u64,
    pub json: Option<std::path::PathBuf>,
}

/// Keystream bits per sample: tfhe-rs's unit for Kreyvium.
const BITS: usize = 64;

/// `hearth-bench transcipher`.
pub fn transcipher(o: &Options) -> Result<(), Error> {
    if o.samples == 0 {
        return Err(Error::Config("--samples: at least one".into()));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(o.seed);
    let (key, iv): ([u8; 16], [u8; 16]) = (rng.gen(), rng.gen());
    let data: Vec<u8> = (0..BITS / 8).map(|_| rng.gen()).collect();
    if o.run == Run::Count {
        return count(o, &key, &iv, &data);
    }
    let hearth = HearthSide::new(o, &key, &iv)?;
    #[cfg(feature = "tfhe-rs")]
    let mut tfhe_sides = timed::sides(o.threads, &key, &iv)?;
    let mut hearth_times = Vec::with_capacity(o.samples);
    for i in 0..o.samples {
        eprintln!("sample {} of {}", i + 1, o.samples);
        hearth_times.push(hearth.sample(o, &data)?);
        #[cfg(feature = "tfhe-rs")]
        for side in tfhe_sides.iter_mut() {
            side.sample(&data)?;
        }
    }
    let h64 = median(hearth_times.clone());
    let mut table = Table::new(
        format!(
            "Kreyvium transciphering, {} threads, {} samples (medians)",
            o.threads, o.samples
        ),
        &[
            "side",
            "warm-up (s)",
            "#PBS warm-up",
            "64 bits (ms)",
            "#PBS 64 bits",
            "depth 64 bits",
            "bytes/s",
            "first 8 bytes (s)",
            "64 bits x tfhe-rs",
        ],
    );
    let mut rows = Vec::new();
    #[cfg(feature = "tfhe-rs")]
    let fastest = tfhe_sides
        .iter()
        .map(|s| median(s.times.clone()))
        .min()
        .unwrap_or_default();
    #[cfg(not(feature = "tfhe-rs"))]
    let fastest = Duration::ZERO;
    let ratio = |t: Duration| {
        if fastest.is_zero() {
            "-".to_string()
        } else {
            format!("{:.2}", t.as_secs_f64() / fastest.as_secs_f64())
        }
    };
    let per_s = |t: Duration| (BITS / 8) as f64 / t.as_secs_f64();
    table.row(vec![
        format!("hearth, {}", o.params.name),
        format!("{:.2}", hearth.warm_up.as_secs_f64()),
        hearth.warm_up_pbs.to_string(),
        ms(h64),
        hearth.pbs.to_string(),
        hearth.depth.to_string(),
        format!("{:.2}", per_s(h64)),
        format!("{:.2}", (hearth.warm_up + h64).as_secs_f64()),
        ratio(h64),
    ]);
    rows.push(json!({
        "side": "hearth", "params": o.params.name,
        "warm_up_ms": hearth.warm_up.as_secs_f64() * 1e3, "warm_up_pbs": hearth.warm_up_pbs,
        "bits_ms": h64.as_secs_f64() * 1e3, "samples_ms": hearth_times.iter().map(|t| t.as_secs_f64() * 1e3).collect::<Vec<_>>(),
        "pbs": hearth.pbs, "depth": hearth.depth,
    }));
    #[cfg(feature = "tfhe-rs")]
    for s in &tfhe_sides {
        let t = median(s.times.clone());
        let count = |c: Option<u64>| c.map_or("-".to_string(), |c| c.to_string());
        table.row(vec![
            format!("tfhe-rs, {}", s.set.name()),
            format!("{:.2}", s.warm_up.as_secs_f64()),
            count(s.warm_up_pbs),
            ms(t),
            count(s.pbs),
            "-".into(),
            format!("{:.2}", per_s(t)),
            format!("{:.2}", (s.warm_up + t).as_secs_f64()),
            ratio(t),
        ]);
        rows.push(json!({
            "side": "tfhe-rs", "params": s.set.name(),
            "warm_up_ms": s.warm_up.as_secs_f64() * 1e3, "warm_up_pbs": s.warm_up_pbs,
            "bits_ms": t.as_secs_f64() * 1e3, "samples_ms": s.times.iter().map(|t| t.as_secs_f64() * 1e3).collect::<Vec<_>>(),
            "pbs": s.pbs,
        }));
    }
    table.note(&format!(
        "64 bits: the owner's ciphertext of 8 bytes turned into encrypted data bits after the \
         warm-up (outputs checked); first 8 bytes: a new key or IV's warm-up and the first 64 \
         bits; the ratio: hearth's 64 bits over tfhe-rs's faster set's. hearth's #PBS and depth \
         from its circuit; tfhe-rs's with the feature `tfhe-pbs-stats`. Key, IV and data from \
         seed {}.",
        o.seed
    ));
    crate::report::emit(
        o.json.as_deref(),
        &json!({
            "bench": "transcipher", "cipher": "kreyvium", "threads": o.threads,
            "samples": o.samples, "seed": o.seed, "bits": BITS, "rows": rows,
        }),
        &[table],
    )
}

/// `--backend count`: both circuits' bootstraps and depth, the warm-up's
/// state passed from one to the other on the clear backend and the data
/// checked.
fn count(o: &Options, key: &[u8; 16], iv: &[u8; 16], data: &[u8]) -> Result<(), Error> {
    let warm = warm_up_circuit(o, iv)?;
    let key_in: Vec<u64> = bits_of(key).iter().map(|&x| 2 * x as u64).collect();
    let state = ClearBackend.evaluate(&warm, &key_in)?;
    let sample = sample_circuit(o, &sealed_bits(key, iv, data))?;
    let out = ClearBackend.evaluate(&sample, &state)?;
    let got = bytes_from(out.iter().map(|&v| Ok(v == 2)))?;
    if got != data {
        return Err(Error::Config(format!(
            "the transciphered bytes {got:02x?} are not the data {data:02x?}"
        )));
    }
    let mut table = Table::new(
        format!(
            "Kreyvium transciphering on {}, planned for {} threads (count backend)",
            o.params.name, o.threads
        ),
        &["circuit", "#PBS", "depth", "widest level", "#PBS per round"],
    );
    let mut rows = Vec::new();
    for (name, c, per) in [
        ("warm-up (1 152 rounds)", &warm, 1152),
        ("64 bits", &sample, BITS),
    ] {
        let s = c.stats();
        let widest = s.width_per_level.iter().max().copied().unwrap_or(0);
        table.row(vec![
            name.into(),
            s.pbs.to_string(),
            s.depth.to_string(),
            widest.to_string(),
            format!("{:.2}", s.pbs as f64 / per as f64),
        ]);
        rows.push(
            json!({ "circuit": name, "pbs": s.pbs, "depth": s.depth, "widest_level": widest }),
        );
    }
    table.note("The 64 bits' circuit resumes the warmed-up state; its outputs, on the clear backend, are the data.");
    crate::report::emit(
        o.json.as_deref(),
        &json!({ "bench": "transcipher", "backend": "count", "cipher": "kreyvium",
                 "params": o.params.name, "threads": o.threads, "rows": rows }),
        &[table],
    )
}

/// The owner's ciphertext of `data` at the first keystream bits after the
/// warm-up, as bits (least significant first in each byte).
fn sealed_bits(key: &[u8; 16], iv: &[u8; 16], data: &[u8]) -> Vec<bool> {
    let mut sealed = data.to_vec();
    Kreyvium::new(key, iv).apply(&mut sealed);
    sealed
        .iter()
        .flat_map(|&b| (0..8).map(move |i| (b >> i) & 1 == 1))
        .collect()
}

/// Bytes from bits, least significant first in each byte.
fn bytes_from(bits: impl Iterator<Item = Result<bool, Error>>) -> Result<Vec<u8>, Error> {
    let bits = bits.collect::<Result<Vec<bool>, Error>>()?;
    Ok(bits
        .chunks(8)
        .map(|c| c.iter().rev().fold(0u8, |acc, &b| acc << 1 | b as u8))
        .collect())
}

/// The warm-up: the encrypted key bits in, the 544 state bits out.
fn warm_up_circuit(o: &Options, iv: &[u8; 16]) -> Result<hearth::Circuit, Error> {
    let mut b = CircuitBuilder::new(o.params);
    b.set_threads(o.threads);
    let k = key_inputs(&mut b)?;
    let s = Stream::new(&mut b, &k, &bits_of(iv))?;
    for w in s.bits() {
        b.output(w)?;
    }
    Ok(b.build())
}

/// hearth's keys, its warmed-up stream state and the sample circuit.
struct HearthSide {
    client: ClientKey,
    server: hearth::ServerKey,
    state: Vec<Ciphertext>,
    warm_up: Duration,
    warm_up_pbs: usize,
    pbs: usize,
    depth: u32,
    iv: [u8; 16],
    key: [u8; 16],
}

impl HearthSide {
    fn new(o: &Options, key: &[u8; 16], iv: &[u8; 16]) -> Result<Self, Error> {
        eprintln!("generating hearth keys ({})...", o.params.name);
        let client = ClientKey::generate(o.params);
        let server = client.server_key();
        let c = warm_up_circuit(o, iv)?;
        let cts = bits_of(key)
            .iter()
            .map(|&x| client.encrypt(2 * x as i64))
            .collect::<Result<Vec<_>, _>>()?;
        eprintln!("hearth warm-up: {} bootstraps", c.stats().pbs);
        let cpu = CpuBackend::new(&server, Some(o.threads))?;
        let t = Instant::now();
        let state = cpu.evaluate(&c, &cts)?;
        let warm_up = t.elapsed();
        let (pbs, depth) = {
            let c = sample_circuit(o, &[false; BITS])?;
            (c.stats().pbs, c.stats().depth)
        };
        Ok(HearthSide {
            warm_up_pbs: c.stats().pbs,
            client,
            server,
            state,
            warm_up,
            pbs,
            depth,
            iv: *iv,
            key: *key,
        })
    }

    /// One sample: the owner's ciphertext of `data` (the first 64 bits
    /// after the warm-up) through the resumed stream, decrypted and
    /// checked.
    fn sample(&self, o: &Options, data: &[u8]) -> Result<Duration, Error> {
        let c = sample_circuit(o, &sealed_bits(&self.key, &self.iv, data))?;
        let cpu = CpuBackend::new(&self.server, Some(o.threads))?;
        let t = Instant::now();
        let out = cpu.evaluate(&c, &self.state)?;
        let took = t.elapsed();
        let got = bytes_from(out.iter().map(|ct| Ok(self.client.decrypt(ct)? == 2)))?;
        if got != data {
            return Err(Error::Config(format!(
                "hearth's transciphered bytes {got:02x?} are not the data {data:02x?}"
            )));
        }
        Ok(took)
    }
}

/// 128 encrypted key bits as inputs.
fn key_inputs(b: &mut CircuitBuilder) -> Result<[hearth::Wire; 128], Error> {
    let k = (0..128)
        .map(|_| b.input_with_step(0, 2, 2))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(k.try_into().expect("128 inputs"))
}

/// The circuit of one sample: the warmed-up state as inputs, `sealed`'s
/// bits out as data bits.
fn sample_circuit(o: &Options, sealed: &[bool]) -> Result<hearth::Circuit, Error> {
    let mut b = CircuitBuilder::new(o.params);
    b.set_threads(o.threads);
    let ins = (0..544)
        .map(|_| b.input_with_step(0, 2, 2))
        .collect::<Result<Vec<_>, _>>()?;
    let mut s = Stream::resume(&ins).expect("544 state bits");
    for w in s.decrypt(&mut b, sealed)? {
        b.output(w)?;
    }
    Ok(b.build())
}

#[cfg(feature = "tfhe-rs")]
mod timed {
    use std::time::{Duration, Instant};

    use hearth::Error;
    use tfhe::shortint::parameters::current_params::{
        V1_8_PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128,
        V1_8_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128,
    };
    use tfhe::shortint::{gen_keys, ClientKey, ServerKey};
    use tfhe::transciphering::{
        KreyviumFheState, KreyviumPlainKey, KreyviumPlainState, StreamCipher, Transcipherer,
    };

    use crate::tfhe::TfheSet;

    /// One of tfhe-rs's sets: its keys, its warmed-up stream and the
    /// owner's stream beside it.
    pub struct Side {
        pub set: TfheSet,
        ck: ClientKey,
        sk: ServerKey,
        fhe: KreyviumFheState,
        owner: KreyviumPlainState,
        pool: rayon::ThreadPool,
        pub warm_up: Duration,
        pub warm_up_pbs: Option<u64>,
        pub pbs: Option<u64>,
        pub times: Vec<Duration>,
    }

    /// Both sets, keyed with `key` and `iv` and warmed up (timed).
    pub fn sides(threads: usize, key: &[u8; 16], iv: &[u8; 16]) -> Result<Vec<Side>, Error> {
        [TfheSet::KsPbs, TfheSet::Ks32]
            .into_iter()
            .map(|set| {
                eprintln!("tfhe-rs keys and warm-up ({})...", set.name());
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| Error::Config(e.to_string()))?;
                let (ck, sk) = match set {
                    TfheSet::KsPbs => gen_keys(V1_8_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128),
                    TfheSet::Ks32 => gen_keys(V1_8_PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128),
                };
                let enc = KreyviumPlainKey::from(*key).encrypt(&ck);
                pbs_reset();
                let t = Instant::now();
                let fhe = pool.install(|| KreyviumFheState::new(enc, *iv, &sk));
                let warm_up = t.elapsed();
                Ok(Side {
                    set,
                    warm_up_pbs: pbs_count(),
                    ck,
                    sk,
                    fhe,
                    owner: KreyviumPlainState::new(*key, *iv),
                    pool,
                    warm_up,
                    pbs: None,
                    times: Vec::new(),
                })
            })
            .collect()
    }

    impl Side {
        /// The next 64 bits: the owner encrypts `data`, tfhe-rs
        /// transciphers it; checked.
        pub fn sample(&mut self, data: &[u8]) -> Result<(), Error> {
            let sym = self
                .owner
                .encrypt(data)
                .map_err(|e| Error::Config(format!("tfhe-rs's Kreyvium: {e:?}")))?;
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
}
