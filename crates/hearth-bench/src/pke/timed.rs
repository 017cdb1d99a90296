//! hearth's public key beside tfhe-rs's `CompactPublicKey` (feature
//! `tfhe-rs`): both from the key that fresh ciphertexts are under (LWE
//! dimension k N = 2048, TUniform(17) on `DIGITS_128` and on tfhe-rs's
//! default set), one value of `--bits` bits each: hearth's unsigned word
//! (a ciphertext per bit, as 0 or 2) and tfhe-rs's `FheUint` (a block of 2
//! bits per ciphertext), in tfhe-rs's plain compact list (`build`) and its
//! packed one (`build_packed`, two blocks per ciphertext, unpacked by
//! bootstraps when expanded).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use hearth::backend::Engine;
use hearth::crypto::encoding::{clear_word, clear_word_value};
use hearth::{ClientKey, Error, Param, PublicKey, Shape};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use tfhe::prelude::{CiphertextList, FheDecrypt, Tagged};
use tfhe::safe_serialization::safe_serialized_size;
use tfhe::{
    CompactCiphertextList, CompactPublicKey, CompressedCompactPublicKey, FheUint16, FheUint32,
    FheUint64, FheUint8, HlCompactable, HlExpandable,
};

use super::{command_line, distribution, Options};
use crate::report::{median, ms, write_out, Table};

/// tfhe-rs's parameter set behind `ConfigBuilder::default()` (CPU build).
const TFHE_SET: &str = "PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128";

/// Values encrypted one at a time per sample (the time per value is
/// their mean).
const ONE_AT_A_TIME: usize = 100;

/// Values of tfhe-rs's packed list expanded per sample: each ciphertext
/// costs two bootstraps there.
const PACKED_EXPAND: usize = 16;

/// The file of `public` as a whole key (mask and body), read back by
/// `PublicKey::from_bytes`: checked to encrypt for `client`.
fn whole_key_file(client: &ClientKey, public: &PublicKey) -> Result<Vec<u8>, Error> {
    let bytes = public.decompressed().to_bytes()?;
    let whole = PublicKey::from_bytes(Path::new("<public key>"), &bytes)?;
    if whole.is_compressed() || client.decrypt(&whole.encrypt(3)?)? != 3 {
        return Err(Error::Internal(
            "the whole public key does not read back as one".into(),
        ));
    }
    Ok(bytes)
}

/// A tfhe-rs error as ours.
fn tfhe_err(e: impl std::fmt::Display) -> Error {
    Error::Config(format!("tfhe-rs: {e}"))
}

fn wrong(what: &str) -> Error {
    Error::Internal(format!("{what}: a value decrypted wrongly"))
}

/// One side's samples for one width.
#[derive(Default)]
struct Side {
    /// Column header.
    name: String,
    /// What one value is, in ciphertexts.
    one_value: String,
    /// Time per value, one at a time.
    one: Vec<Duration>,
    /// Time of the whole list.
    list: Vec<Duration>,
    /// Time to expand `expanded` values of a list.
    expand: Vec<Duration>,
    expanded: usize,
    /// hearth's `encrypt_bundle` of the list and its bytes: what a data
    /// owner does (nothing is expanded).
    api: Vec<Duration>,
    /// Bytes sent: one value, and the list of `--values`.
    bytes_one: u64,
    bytes_list: u64,
    /// Ciphertexts of one value after expansion.
    lwes: usize,
}

impl Side {
    fn json(&self, values: usize, lwe_bytes: u64) -> Value {
        let msv = |v: &[Duration]| (!v.is_empty()).then(|| median(v.to_vec()).as_secs_f64() * 1e3);
        json!({
            "side": self.name,
            "one_value": self.one_value,
            "encrypt_one_value_ms": msv(&self.one),
            "encrypt_list_ms": msv(&self.list),
            "list_values": values,
            "expand_ms": msv(&self.expand),
            "expand_values": self.expanded,
            "encrypt_bundle_ms": msv(&self.api),
            "bytes_one_value": self.bytes_one,
            "bytes_list": self.bytes_list,
            "bytes_per_value_in_list": self.bytes_list as f64 / values as f64,
            "expanded_ciphertexts_per_value": self.lwes,
            "expanded_bytes_per_value": self.lwes as u64 * lwe_bytes,
        })
    }
}

/// hearth: one sample of encrypting `values` as `bits`-bit words.
fn hearth_sample(
    client: &ClientKey,
    public: &PublicKey,
    bits: usize,
    values: &[u64],
    side: &mut Side,
) -> Result<(), Error> {
    let p = public.params();
    let digits = |v: u64| -> Result<Vec<i64>, Error> {
        Ok(clear_word(v, bits, false)?
            .into_iter()
            .map(|d| d as i64)
            .collect())
    };
    let k = values.len().min(ONE_AT_A_TIME);
    let t = Instant::now();
    for &v in &values[..k] {
        black_box(public.encrypt_list(&digits(v)?)?);
    }
    side.one.push(t.elapsed() / k as u32);
    let t = Instant::now();
    let mut all = Vec::with_capacity(values.len() * bits);
    for &v in values {
        all.extend(digits(v)?);
    }
    let list = public.encrypt_list(&all)?;
    side.list.push(t.elapsed());
    let t = Instant::now();
    let cts = list.expand(p.id, public.key_id())?;
    side.expand.push(t.elapsed());
    side.expanded = values.len();
    for (word, &v) in cts.chunks(bits).zip(values) {
        let d = word
            .iter()
            .map(|c| client.decrypt(c))
            .collect::<Result<Vec<u64>, _>>()?;
        if clear_word_value(&d, false)? != BigInt::from(v) {
            return Err(wrong("hearth's compact list"));
        }
    }
    drop(cts);
    // Through the API: a bundle of one input, as a data owner sends it.
    let shape = Shape::Word {
        bits,
        signed: false,
    };
    let big: Vec<BigInt> = values.iter().map(|&v| BigInt::from(v)).collect();
    let t = Instant::now();
    let bundle = public.encrypt_bundle(&[Param::new("x", shape, &[values.len()])], &[big])?;
    let bytes = bundle.to_bytes()?;
    side.api.push(t.elapsed());
    side.bytes_list = bytes.len() as u64;
    let one = public.encrypt_bundle(
        &[Param::new("x", shape, &[])],
        &[vec![BigInt::from(values[0])]],
    )?;
    if client.decrypt_bundle(&one)?[0].1 != [BigInt::from(values[0])] {
        return Err(wrong("hearth's bundle"));
    }
    side.bytes_one = one.to_bytes()?.len() as u64;
    side.lwes = bits;
    Ok(())
}

/// tfhe-rs: one sample of encrypting `values` as `F` (`C` in the clear),
/// in a plain or a packed compact list. Runs where tfhe-rs's server key is
/// set (the packed list's expansion bootstraps).
fn tfhe_sample<C, F>(
    ck: &tfhe::ClientKey,
    pk: &CompactPublicKey,
    values: &[C],
    packed: bool,
    side: &mut Side,
) -> Result<(), Error>
where
    C: HlCompactable + Copy + PartialEq,
    F: HlExpandable + Tagged + FheDecrypt<C>,
{
    let build = |b: &mut tfhe::CompactCiphertextListBuilder| {
        if packed {
            b.build_packed()
        } else {
            b.build()
        }
    };
    let k = values.len().min(ONE_AT_A_TIME);
    let t = Instant::now();
    for &v in &values[..k] {
        black_box(build(CompactCiphertextList::builder(pk).push(v)));
    }
    side.one.push(t.elapsed() / k as u32);
    let t = Instant::now();
    let list = build(CompactCiphertextList::builder(pk).extend(values.iter().copied()));
    side.list.push(t.elapsed());
    let n = if packed {
        values.len().min(PACKED_EXPAND)
    } else {
        values.len()
    };
    let to_expand = if packed {
        build(CompactCiphertextList::builder(pk).extend(values[..n].iter().copied()))
    } else {
        list.clone()
    };
    let t = Instant::now();
    let expander = to_expand.expand().map_err(tfhe_err)?;
    let out = (0..n)
        .map(|i| match expander.get::<F>(i) {
            Ok(Some(f)) => Ok(f),
            Ok(None) => Err(tfhe_err(format!("no value {i} in the list"))),
            Err(e) => Err(tfhe_err(e)),
        })
        .collect::<Result<Vec<F>, Error>>()?;
    side.expand.push(t.elapsed());
    side.expanded = n;
    for (f, &v) in out.iter().zip(values) {
        let d: C = f.decrypt(ck);
        if d != v {
            return Err(wrong("tfhe-rs's compact list"));
        }
    }
    let one = build(CompactCiphertextList::builder(pk).push(values[0]));
    side.bytes_one = safe_serialized_size(&one).map_err(tfhe_err)?;
    side.bytes_list = safe_serialized_size(&list).map_err(tfhe_err)?;
    Ok(())
}

/// The samples of both sides for one width, alternating.
#[allow(clippy::too_many_arguments)]
fn width(
    o: &Options,
    bits: usize,
    client: &ClientKey,
    public: &PublicKey,
    ck: &tfhe::ClientKey,
    pk: &CompactPublicKey,
    pool: &rayon::ThreadPool,
    rng: &mut impl Rng,
) -> Result<Vec<Side>, Error> {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let values: Vec<u64> = (0..o.values).map(|_| rng.gen::<u64>() & mask).collect();
    let blocks = bits / 2;
    let mut sides = vec![
        Side {
            name: format!("hearth `U{bits}` ({})", public.params().name),
            one_value: format!("{bits} LWE (a bit each, as 0 or 2)"),
            ..Side::default()
        },
        Side {
            name: format!("tfhe-rs `FheUint{bits}`, `build()`"),
            one_value: format!("{blocks} LWE (2 bits each)"),
            lwes: blocks,
            ..Side::default()
        },
        Side {
            name: format!("tfhe-rs `FheUint{bits}`, `build_packed()`"),
            one_value: format!(
                "{} LWE (4 bits each; {blocks} blocks once expanded)",
                blocks / 2
            ),
            lwes: blocks,
            ..Side::default()
        },
    ];
    for s in 0..o.samples {
        eprintln!("u{bits}: sample {} of {}", s + 1, o.samples);
        pool.install(|| -> Result<(), Error> {
            let [h, plain, packed] = &mut sides[..] else {
                unreachable!("three sides")
            };
            hearth_sample(client, public, bits, &values, h)?;
            macro_rules! both {
                ($c:ty, $f:ty) => {{
                    let v: Vec<$c> = values.iter().map(|&x| x as $c).collect();
                    tfhe_sample::<$c, $f>(ck, pk, &v, false, plain)?;
                    tfhe_sample::<$c, $f>(ck, pk, &v, true, packed)?;
                }};
            }
            match bits {
                8 => both!(u8, FheUint8),
                16 => both!(u16, FheUint16),
                32 => both!(u32, FheUint32),
                _ => both!(u64, FheUint64),
            }
            Ok(())
        })?;
    }
    Ok(sides)
}

/// `hearth-bench pke`.
pub(super) fn pke(o: &Options) -> Result<(), Error> {
    let p = o.params;
    let threads = o.threads.resolve()?;
    let client = ClientKey::generate(p);
    let (ck, pool) = crate::tfhe::tfhe_pool(threads, Engine::Cpu)?;
    eprintln!("public keys...");
    let (mut hearth_gen, mut tfhe_gen, mut tfhe_gen_c) = (Vec::new(), Vec::new(), Vec::new());
    let mut keys = None;
    for _ in 0..o.samples {
        pool.install(|| -> Result<(), Error> {
            let t = Instant::now();
            let public = client.public_key()?;
            hearth_gen.push(t.elapsed());
            let t = Instant::now();
            let pk = CompactPublicKey::new(&ck);
            tfhe_gen.push(t.elapsed());
            let t = Instant::now();
            let cpk = CompressedCompactPublicKey::new(&ck);
            tfhe_gen_c.push(t.elapsed());
            keys = Some((public, pk, cpk));
            Ok(())
        })?;
    }
    let (public, pk, cpk) = keys.expect("at least one sample");
    let hearth_plain = whole_key_file(&client, &public)?.len() as u64;
    let hearth_compressed = public.to_bytes()?.len() as u64;
    let tfhe_plain = safe_serialized_size(&pk).map_err(tfhe_err)?;
    let tfhe_compressed = safe_serialized_size(&cpk).map_err(tfhe_err)?;
    let tp = pk.parameters();
    let hearth_enc = format!(
        "LWE {} (k N), {}",
        p.big_lwe_dimension().0,
        distribution(p.glwe_noise)
    );
    let tfhe_enc = format!(
        "LWE {}, {}",
        tp.encryption_lwe_dimension.0,
        distribution(tp.encryption_noise_distribution)
    );
    let mut keys_table = Table::new(
        format!("Public keys ({threads} threads)"),
        &[
            "library",
            "parameters",
            "encrypts with",
            "public key (bytes)",
            "compressed (bytes)",
            "generate (ms)",
        ],
    );
    keys_table.row(vec![
        "hearth".into(),
        p.name.into(),
        hearth_enc.clone(),
        format!("{hearth_plain} (a whole-key file)"),
        format!("{hearth_compressed} (its file: seed and body)"),
        ms(median(hearth_gen.clone())),
    ]);
    keys_table.row(vec![
        "tfhe-rs 1.8.2".into(),
        format!("{TFHE_SET} (`ConfigBuilder::default()`)"),
        tfhe_enc.clone(),
        format!("{tfhe_plain} (`CompactPublicKey`, `safe_serialize`)"),
        format!("{tfhe_compressed} (`CompressedCompactPublicKey`)"),
        format!(
            "{} / {} (compressed)",
            ms(median(tfhe_gen.clone())),
            ms(median(tfhe_gen_c.clone()))
        ),
    ]);
    keys_table.note(
        "Both public keys are tfhe-rs's LWE compact public key under the key that fresh \
         ciphertexts are under (no key switch after expansion). Sizes are serialized \
         bytes: hearth's file (36-byte header), tfhe-rs's `safe_serialize` (versioned).",
    );
    let lwe_bytes = (p.big_lwe_dimension().0 as u64 + 1) * 8;
    let mut rng = rand::rngs::StdRng::seed_from_u64(o.seed);
    let mut tables = vec![keys_table];
    let mut rows = Vec::new();
    for &bits in &o.bits {
        let sides = width(o, bits, &client, &public, &ck, &pk, &pool, &mut rng)?;
        let n = o.values;
        let mut headers = vec!["quantity"];
        headers.extend(sides.iter().map(|s| s.name.as_str()));
        let mut t = Table::new(
            format!(
                "One {bits}-bit unsigned value: {} beside tfhe-rs {TFHE_SET}, {} samples (medians), {threads} threads",
                p.name, o.samples
            ),
            &headers,
        );
        let row = |label: String, f: &dyn Fn(&Side) -> String| {
            let mut r = vec![label];
            r.extend(sides.iter().map(f));
            r
        };
        let med = |v: &[Duration]| {
            if v.is_empty() {
                "-".to_string()
            } else {
                ms(median(v.to_vec()))
            }
        };
        t.row(row("one value is".into(), &|s| s.one_value.clone()));
        t.row(row(
            format!(
                "encrypt one value at a time (ms per value, mean of {})",
                n.min(ONE_AT_A_TIME)
            ),
            &|s| format!("{:.3}", median(s.one.clone()).as_secs_f64() * 1e3),
        ));
        t.row(row(
            format!("encrypt {n} values as one compact list (ms)"),
            &|s| med(&s.list),
        ));
        t.row(row("  per value in that list (us)".into(), &|s| {
            format!(
                "{:.1}",
                median(s.list.clone()).as_secs_f64() * 1e6 / n as f64
            )
        }));
        t.row(row("bytes sent: one value alone".into(), &|s| {
            s.bytes_one.to_string()
        }));
        t.row(row(format!("bytes sent per value, list of {n}"), &|s| {
            format!("{:.1}", s.bytes_list as f64 / n as f64)
        }));
        t.row(row(
            format!("expand on the server (ms per {n} values)"),
            &|s| {
                let d = median(s.expand.clone()).as_secs_f64() * n as f64 / s.expanded as f64;
                let v = format!("{:.2}", d * 1e3);
                if s.expanded == n {
                    v
                } else {
                    format!("{v} (measured on {}: 2 PBS per LWE)", s.expanded)
                }
            },
        ));
        t.row(row("expanded: ciphertext bytes per value".into(), &|s| {
            (s.lwes as u64 * lwe_bytes).to_string()
        }));
        t.row(row(
            format!("`PublicKey::encrypt_bundle` of {n} values and `to_bytes` (ms; what a data owner runs: nothing expanded)"),
            &|s| med(&s.api),
        ));
        t.note(&format!(
            "Bytes sent: hearth's bundle file (`Bundle::to_bytes`: header, the input's name and \
             shape, one compact list), tfhe-rs's `CompactCiphertextList` through `safe_serialize`. \
             Expanding: hearth's `CompactList::expand` (no bootstrap); tfhe-rs's `expand()` and \
             `get::<FheUint{bits}>` for every value (no bootstrap for `build()`; two per \
             packed ciphertext for `build_packed()`, on the {threads}-thread pool)."
        ));
        rows.push(json!({
            "bits": bits,
            "sides": sides.iter().map(|s| s.json(n, lwe_bytes)).collect::<Vec<_>>(),
        }));
        tables.push(t);
    }
    let json = json!({
        "bench": "pke",
        "command": command_line(),
        "threads": threads,
        "samples": o.samples,
        "values": o.values,
        "hearth": {
            "params": p.name,
            "encrypts_with": hearth_enc,
            "public_key_bytes": hearth_plain,
            "compressed_bytes": hearth_compressed,
            "generate_ms": median(hearth_gen).as_secs_f64() * 1e3,
        },
        "tfhe_rs": {
            "version": "1.8.2",
            "params": TFHE_SET,
            "encrypts_with": tfhe_enc,
            "public_key_bytes": tfhe_plain,
            "compressed_bytes": tfhe_compressed,
            "generate_ms": median(tfhe_gen).as_secs_f64() * 1e3,
            "generate_compressed_ms": median(tfhe_gen_c).as_secs_f64() * 1e3,
        },
        "widths": rows,
    });
    let preamble = format!(
        "# Public-key encryption: hearth beside tfhe-rs ({})\n\n`{}`\n",
        p.name,
        command_line()
    );
    write_out(
        &o.out,
        &format!("pke-{}", p.name),
        &preamble,
        &json,
        &tables,
    )
}
