//! `hearth-bench transcipher`: transciphering, hearth's circuits
//! (`hearth::ciphers`) beside tfhe-rs's `transciphering` module on both of
//! tfhe-rs's CPU sets for 2-bit blocks: Kreyvium per 64 bits, AES-128 in
//! counter mode per 16-byte block.
//!
//! Each side sets its stream up once, timed: Kreyvium's key and IV loaded
//! and 1 152 rounds run; AES's key schedule. Then the samples, alternating
//! between the sides, each turn one unit of the owner's ciphertext into
//! encrypted data bits, checked against the data. hearth resumes its
//! set-up state (Kreyvium's 544 encrypted state bits, AES's eleven round
//! keys) in each sample's circuit; tfhe-rs's stream advances by one unit
//! per sample, the owner's ciphertext following it.

use std::time::{Duration, Instant};

use hearth::backend::{Backend, ClearBackend, CpuBackend};
use hearth::{Ciphertext, ClientKey, Error, ParameterSet};
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::report::{median, ms, Table};

mod circuits;
#[cfg(feature = "tfhe-rs")]
mod timed;

pub use circuits::Cipher;

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
    pub cipher: Cipher,
    pub run: Run,
    pub params: &'static ParameterSet,
    pub threads: usize,
    pub samples: usize,
    pub seed: u64,
    pub json: Option<std::path::PathBuf>,
}

/// `hearth-bench transcipher`.
pub fn transcipher(o: &Options) -> Result<(), Error> {
    if o.samples == 0 {
        return Err(Error::Config("--samples: at least one".into()));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(o.seed);
    let (key, iv): ([u8; 16], [u8; 16]) = (rng.gen(), rng.gen());
    let data: Vec<u8> = (0..o.cipher.bytes()).map(|_| rng.gen()).collect();
    if o.run == Run::Count {
        return count(o, &key, &iv, &data);
    }
    let hearth = HearthSide::new(o, &key, &iv)?;
    #[cfg(feature = "tfhe-rs")]
    let mut tfhe_sides = timed::sides(o.cipher, o.threads, &key, &iv)?;
    let mut hearth_times = Vec::with_capacity(o.samples);
    for i in 0..o.samples {
        eprintln!("sample {} of {}", i + 1, o.samples);
        hearth_times.push(hearth.sample(o, &data)?);
        #[cfg(feature = "tfhe-rs")]
        for side in tfhe_sides.iter_mut() {
            side.sample(&data)?;
        }
    }
    let h = median(hearth_times.clone());
    let unit = o.cipher.unit();
    let (setup_s, setup_pbs, unit_ms, unit_pbs, unit_depth, first) = (
        format!("{} (s)", o.cipher.setup()),
        format!("#PBS {}", o.cipher.setup()),
        format!("{unit} (ms)"),
        format!("#PBS {unit}"),
        format!("depth {unit}"),
        format!("first {} bytes (s)", o.cipher.bytes()),
    );
    let ratio_head = format!("{unit} x tfhe-rs");
    let mut table = Table::new(
        format!(
            "{} transciphering, {} threads, {} samples (medians)",
            o.cipher.name(),
            o.threads,
            o.samples
        ),
        &[
            "side",
            &setup_s,
            &setup_pbs,
            &unit_ms,
            &unit_pbs,
            &unit_depth,
            "bytes/s",
            &first,
            &ratio_head,
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
    let per_s = |t: Duration| o.cipher.bytes() as f64 / t.as_secs_f64();
    table.row(vec![
        format!("hearth, {}", o.params.name),
        format!("{:.2}", hearth.setup.as_secs_f64()),
        hearth.setup_pbs.to_string(),
        ms(h),
        hearth.pbs.to_string(),
        hearth.depth.to_string(),
        format!("{:.2}", per_s(h)),
        format!("{:.2}", (hearth.setup + h).as_secs_f64()),
        ratio(h),
    ]);
    rows.push(json!({
        "side": "hearth", "params": o.params.name,
        "setup_ms": hearth.setup.as_secs_f64() * 1e3, "setup_pbs": hearth.setup_pbs,
        "unit_ms": h.as_secs_f64() * 1e3, "samples_ms": hearth_times.iter().map(|t| t.as_secs_f64() * 1e3).collect::<Vec<_>>(),
        "pbs": hearth.pbs, "depth": hearth.depth,
    }));
    #[cfg(feature = "tfhe-rs")]
    for s in &tfhe_sides {
        let t = median(s.times.clone());
        let count = |c: Option<u64>| c.map_or("-".to_string(), |c| c.to_string());
        table.row(vec![
            format!("tfhe-rs, {}", s.set.name()),
            format!("{:.2}", s.setup.as_secs_f64()),
            count(s.setup_pbs),
            ms(t),
            count(s.pbs),
            "-".into(),
            format!("{:.2}", per_s(t)),
            format!("{:.2}", (s.setup + t).as_secs_f64()),
            ratio(t),
        ]);
        rows.push(json!({
            "side": "tfhe-rs", "params": s.set.name(),
            "setup_ms": s.setup.as_secs_f64() * 1e3, "setup_pbs": s.setup_pbs,
            "unit_ms": t.as_secs_f64() * 1e3, "samples_ms": s.times.iter().map(|t| t.as_secs_f64() * 1e3).collect::<Vec<_>>(),
            "pbs": s.pbs,
        }));
    }
    table.note(&format!(
        "{unit}: the owner's ciphertext of {} bytes turned into encrypted data bits after the \
         {} (outputs checked); first {} bytes: a new key's {} and the first sample; the ratio: \
         hearth's {unit} over tfhe-rs's faster set's. hearth's #PBS and depth from its circuit; \
         tfhe-rs's with the feature `tfhe-pbs-stats`. Key, IV and data from seed {}.",
        o.cipher.bytes(),
        o.cipher.setup(),
        o.cipher.bytes(),
        o.cipher.setup(),
        o.seed
    ));
    crate::report::emit(
        o.json.as_deref(),
        &json!({
            "bench": "transcipher", "cipher": o.cipher.name(), "threads": o.threads,
            "samples": o.samples, "seed": o.seed, "bytes": o.cipher.bytes(), "rows": rows,
        }),
        &[table],
    )
}

/// `--backend count`: both circuits' bootstraps and depth, the set-up's
/// state passed from one to the other on the clear backend and the data
/// checked.
fn count(o: &Options, key: &[u8; 16], iv: &[u8; 16], data: &[u8]) -> Result<(), Error> {
    let setup = o.cipher.setup_circuit(o.params, o.threads, iv)?;
    let key_in: Vec<u64> = o.cipher.key_values(key).iter().map(|&v| v as u64).collect();
    let state = ClearBackend.evaluate(&setup, &key_in)?;
    let sealed = o.cipher.seal(key, iv, data);
    let sample = o.cipher.sample_circuit(o.params, o.threads, iv, &sealed)?;
    let out = ClearBackend.evaluate(&sample, &state)?;
    let got = bytes_from(out.iter().map(|&v| Ok(v == 2)))?;
    if got != data {
        return Err(Error::Config(format!(
            "the transciphered bytes {got:02x?} are not the data {data:02x?}"
        )));
    }
    let mut table = Table::new(
        format!(
            "{} transciphering on {}, planned for {} threads (count backend)",
            o.cipher.name(),
            o.params.name,
            o.threads
        ),
        &[
            "circuit",
            "#PBS",
            "depth",
            "widest level",
            "#PBS per data bit",
        ],
    );
    let mut rows = Vec::new();
    for (name, c) in [(o.cipher.setup(), &setup), (o.cipher.unit(), &sample)] {
        let s = c.stats();
        let widest = s.width_per_level.iter().max().copied().unwrap_or(0);
        table.row(vec![
            name.into(),
            s.pbs.to_string(),
            s.depth.to_string(),
            widest.to_string(),
            format!("{:.2}", s.pbs as f64 / (8 * o.cipher.bytes()) as f64),
        ]);
        rows.push(
            json!({ "circuit": name, "pbs": s.pbs, "depth": s.depth, "widest_level": widest }),
        );
    }
    table.note("The sample's circuit resumes the set-up's state; its outputs, on the clear backend, are the data.");
    crate::report::emit(
        o.json.as_deref(),
        &json!({ "bench": "transcipher", "backend": "count", "cipher": o.cipher.name(),
                 "params": o.params.name, "threads": o.threads, "rows": rows }),
        &[table],
    )
}

/// Bytes from bits, least significant first in each byte.
fn bytes_from(bits: impl Iterator<Item = Result<bool, Error>>) -> Result<Vec<u8>, Error> {
    let bits = bits.collect::<Result<Vec<bool>, Error>>()?;
    Ok(bits
        .chunks(8)
        .map(|c| c.iter().rev().fold(0u8, |acc, &b| acc << 1 | b as u8))
        .collect())
}

/// hearth's keys, its set-up state and the sample circuit's counts.
struct HearthSide {
    client: ClientKey,
    server: hearth::ServerKey,
    state: Vec<Ciphertext>,
    setup: Duration,
    setup_pbs: usize,
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
        let c = o.cipher.setup_circuit(o.params, o.threads, iv)?;
        let cts = o
            .cipher
            .key_values(key)
            .iter()
            .map(|&v| client.encrypt(v))
            .collect::<Result<Vec<_>, _>>()?;
        eprintln!("hearth {}: {} bootstraps", o.cipher.setup(), c.stats().pbs);
        let cpu = CpuBackend::new(&server, Some(o.threads))?;
        let t = Instant::now();
        let state = cpu.evaluate(&c, &cts)?;
        let setup = t.elapsed();
        let sample =
            o.cipher
                .sample_circuit(o.params, o.threads, iv, &vec![0; o.cipher.bytes()])?;
        Ok(HearthSide {
            setup_pbs: c.stats().pbs,
            client,
            server,
            state,
            setup,
            pbs: sample.stats().pbs,
            depth: sample.stats().depth,
            iv: *iv,
            key: *key,
        })
    }

    /// One sample: the owner's ciphertext of `data` through the resumed
    /// state, decrypted and checked.
    fn sample(&self, o: &Options, data: &[u8]) -> Result<Duration, Error> {
        let sealed = o.cipher.seal(&self.key, &self.iv, data);
        let c = o
            .cipher
            .sample_circuit(o.params, o.threads, &self.iv, &sealed)?;
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
