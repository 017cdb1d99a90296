//! `hearth-bench packing`: results as they leave the server, every
//! ciphertext in full and packed ([`hearth::Bundle::packed`]), beside
//! tfhe-rs's `CompressedCiphertextList` of the same values on
//! `ConfigBuilder::default()` with its rated compression set. Sizes are
//! the serialized objects (hearth's bundle files; tfhe-rs's bincode);
//! times are one run each, the pack (compress) on the server's threads,
//! the owner's decryption of every value. Every decryption is compared
//! with the values encrypted.

use std::time::Instant;

use hearth::formats::bundle::Entry;
use hearth::{Bundle, ClientKey, Error, Param, ParameterSet, Shape};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::report::Table;

/// One kind of result.
struct Case {
    what: String,
    shape: Shape,
    values: Vec<i64>,
    /// tfhe-rs's type for the same values.
    tfhe: TfheType,
}

/// The tfhe-rs type a case's values are beside.
#[derive(Clone, Copy)]
enum TfheType {
    U8,
    U32,
    I32,
}

impl TfheType {
    fn name(self) -> &'static str {
        match self {
            TfheType::U8 => "FheUint8",
            TfheType::U32 => "FheUint32",
            TfheType::I32 => "FheInt32",
        }
    }
}

/// What was measured of one case on one side.
#[derive(Default)]
struct Side {
    full: u64,
    packed: u64,
    pack_ms: f64,
    decrypt_ms: f64,
}

/// `hearth-bench packing`.
pub fn packing(
    params: &'static ParameterSet,
    threads: usize,
    many: usize,
    json_path: Option<&std::path::Path>,
) -> Result<(), Error> {
    if many == 0 || many > 2000 {
        return Err(Error::Config(
            "--values: 1 to 2000 (a bundle holds at most 65 536 ciphertexts)".into(),
        ));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(86);
    let word = |bits| Shape::Word {
        bits,
        signed: false,
    };
    let cases = vec![
        Case {
            what: "one u8".into(),
            shape: word(8),
            values: vec![rng.gen::<u8>() as i64],
            tfhe: TfheType::U8,
        },
        Case {
            what: "one u32".into(),
            shape: word(32),
            values: vec![rng.gen::<u32>() as i64],
            tfhe: TfheType::U32,
        },
        Case {
            // `hearth app regression --rows 1`'s output: y of the first
            // diabetes row, an integer of 19 signed-binary digits.
            what: "the regression's output (one Int of 19 digits)".into(),
            shape: Shape::Int { digits: 19 },
            values: vec![122_778],
            tfhe: TfheType::I32,
        },
        Case {
            what: format!("{many} u32"),
            shape: word(32),
            values: (0..many).map(|_| rng.gen::<u32>() as i64).collect(),
            tfhe: TfheType::U32,
        },
    ];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(e.to_string()))?;
    eprintln!("hearth keys for {} ...", params.name);
    let client = ClientKey::generate(params);
    let server = client.server_key();
    let mut rows = Vec::new();
    for case in &cases {
        eprintln!("hearth: {} ...", case.what);
        let ours = pool.install(|| hearth_side(&client, &server, case))?;
        eprintln!("tfhe-rs: {} ...", case.what);
        let theirs = tfhe_side(&pool, case)?;
        rows.push((case, ours, theirs));
    }

    let mut sizes = Table::new(
        format!(
            "Results leaving the server, {} beside tfhe-rs (bytes)",
            params.name
        ),
        &[
            "result",
            "hearth full",
            "hearth packed",
            "smaller",
            "tfhe-rs full",
            "tfhe-rs compressed",
            "hearth / tfhe-rs packed",
        ],
    );
    let mut times = Table::new(
        format!("Packing and decrypting, {threads} threads (ms per value)"),
        &[
            "result",
            "hearth pack",
            "tfhe-rs compress",
            "hearth decrypt",
            "tfhe-rs decrypt",
        ],
    );
    for (case, ours, theirs) in &rows {
        let n = case.values.len() as f64;
        let label = match theirs {
            Some(_) => format!("{} ({})", case.what, case.tfhe.name()),
            None => case.what.clone(),
        };
        let t = |f: fn(&Side) -> String| theirs.as_ref().map_or("-".into(), f);
        sizes.row(vec![
            label.clone(),
            ours.full.to_string(),
            ours.packed.to_string(),
            format!("{:.0}x", ours.full as f64 / ours.packed as f64),
            t(|s| s.full.to_string()),
            t(|s| s.packed.to_string()),
            theirs.as_ref().map_or("-".into(), |s| {
                format!("{:.2}", ours.packed as f64 / s.packed as f64)
            }),
        ]);
        times.row(vec![
            label,
            format!("{:.2}", ours.pack_ms / n),
            theirs
                .as_ref()
                .map_or("-".into(), |s| format!("{:.2}", s.pack_ms / n)),
            format!("{:.3}", ours.decrypt_ms / n),
            theirs
                .as_ref()
                .map_or("-".into(), |s| format!("{:.2}", s.decrypt_ms / n)),
        ]);
    }
    sizes.note(
        "hearth: the bundle file (header, entry name, payload); a u32 is 32 ciphertexts (one per \
         bit), an Int one per digit. tfhe-rs: bincode of its ciphertexts (2-bit blocks: 16 per \
         u32) and of its CompressedCiphertextList (ConfigBuilder::default() with \
         COMP_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128).",
    );
    times.note(
        "Pack: the server's packing key switch and storage modulus switch; tfhe-rs's \
         CompressedCiphertextListBuilder::build. Decrypt: hearth's owner decrypts the packed \
         GLWE ciphertexts with the secret key alone; tfhe-rs's get + decrypt decompresses each \
         block with a bootstrap (its decompression key) first. One run each on this machine.",
    );
    let json = json!({
        "bench": "packing", "params": params.name, "threads": threads,
        "tfhe_rs": "ConfigBuilder::default() + COMP_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128",
        "rows": rows.iter().map(|(case, ours, theirs)| json!({
            "result": case.what, "values": case.values.len(), "tfhe_type": case.tfhe.name(),
            "hearth": {"full_bytes": ours.full, "packed_bytes": ours.packed,
                       "pack_ms": ours.pack_ms, "decrypt_ms": ours.decrypt_ms},
            "tfhe_rs": theirs.as_ref().map(|s| json!({"full_bytes": s.full,
                       "compressed_bytes": s.packed, "compress_ms": s.pack_ms,
                       "decrypt_ms": s.decrypt_ms})),
        })).collect::<Vec<_>>(),
    });
    crate::report::emit(json_path, &json, &[sizes, times])
}

/// hearth's side: the values encrypted in full, packed, written and read,
/// decrypted by the owner.
fn hearth_side(client: &ClientKey, server: &hearth::ServerKey, case: &Case) -> Result<Side, Error> {
    let values = case
        .values
        .iter()
        .map(|&v| client.encrypt_value(case.shape, &BigInt::from(v)))
        .collect::<Result<Vec<_>, _>>()?;
    let param = Param::new("y", case.shape, &[case.values.len()]);
    let full = Bundle::new(
        client.params().id,
        client.key_id(),
        vec![Entry { param, values }],
    )?;
    let full_bytes = full.to_bytes()?.len() as u64;
    let start = Instant::now();
    let packed = full.packed(server)?;
    let pack_ms = start.elapsed().as_secs_f64() * 1e3;
    let bytes = packed.to_bytes()?;
    let start = Instant::now();
    let read = Bundle::from_bytes(std::path::Path::new("packed"), &bytes)?;
    let decrypted = client.decrypt_bundle(&read)?;
    let decrypt_ms = start.elapsed().as_secs_f64() * 1e3;
    let want: Vec<BigInt> = case.values.iter().map(|&v| BigInt::from(v)).collect();
    if decrypted[0].1 != want {
        return Err(Error::Internal(format!(
            "{}: packed results decrypt wrong",
            case.what
        )));
    }
    Ok(Side {
        full: full_bytes,
        packed: bytes.len() as u64,
        pack_ms,
        decrypt_ms,
    })
}

#[cfg(feature = "tfhe-rs")]
fn tfhe_side(pool: &rayon::ThreadPool, case: &Case) -> Result<Option<Side>, Error> {
    use tfhe::prelude::*;
    use tfhe::shortint::parameters::COMP_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128;
    use tfhe::{CompressedCiphertextList, CompressedCiphertextListBuilder, FheInt32, FheUint32};
    use tfhe::{FheUint8, ServerKey};

    let fail = |e: tfhe::Error| Error::Internal(format!("tfhe-rs: {e}"));
    let config = tfhe::ConfigBuilder::default()
        .enable_compression(COMP_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128)
        .build();
    let ck = tfhe::ClientKey::generate(config);
    let sk = ServerKey::new(&ck);
    pool.broadcast(|_| tfhe::set_server_key(sk.clone()));
    pool.install(|| tfhe::set_server_key(sk.clone()));
    fn run<T, P>(
        pool: &rayon::ThreadPool,
        ck: &tfhe::ClientKey,
        values: &[P],
        fail: impl Fn(tfhe::Error) -> Error,
    ) -> Result<Side, Error>
    where
        T: FheEncrypt<P, tfhe::ClientKey>
            + FheDecrypt<P>
            + Clone
            + Send
            + Sync
            + serde::Serialize
            + tfhe::HlCompressible
            + tfhe::HlExpandable
            + Tagged,
        P: Copy + PartialEq + std::fmt::Debug + Send + Sync,
    {
        let cts: Vec<T> = values.iter().map(|&v| T::encrypt(v, ck)).collect();
        let full = bincode::serialize(&cts).map_err(|e| Error::Internal(e.to_string()))?;
        let start = Instant::now();
        let list: CompressedCiphertextList = pool
            .install(|| {
                let mut builder = CompressedCiphertextListBuilder::new();
                for c in &cts {
                    builder.push(c.clone());
                }
                builder.build()
            })
            .map_err(&fail)?;
        let pack_ms = start.elapsed().as_secs_f64() * 1e3;
        let bytes = bincode::serialize(&list).map_err(|e| Error::Internal(e.to_string()))?;
        let start = Instant::now();
        let got = pool.install(|| {
            (0..values.len())
                .map(|i| {
                    let x: T = list.get(i)?.expect("pushed");
                    Ok(x.decrypt(ck))
                })
                .collect::<Result<Vec<P>, tfhe::Error>>()
        });
        let got = got.map_err(&fail)?;
        let decrypt_ms = start.elapsed().as_secs_f64() * 1e3;
        if got != values {
            return Err(Error::Internal("tfhe-rs decrypted other values".into()));
        }
        Ok(Side {
            full: full.len() as u64,
            packed: bytes.len() as u64,
            pack_ms,
            decrypt_ms,
        })
    }
    let side = match case.tfhe {
        TfheType::U8 => {
            let v: Vec<u8> = case.values.iter().map(|&v| v as u8).collect();
            run::<FheUint8, u8>(pool, &ck, &v, fail)
        }
        TfheType::U32 => {
            let v: Vec<u32> = case.values.iter().map(|&v| v as u32).collect();
            run::<FheUint32, u32>(pool, &ck, &v, fail)
        }
        TfheType::I32 => {
            let v: Vec<i32> = case.values.iter().map(|&v| v as i32).collect();
            run::<FheInt32, i32>(pool, &ck, &v, fail)
        }
    };
    pool.broadcast(|_| tfhe::unset_server_key());
    side.map(Some)
}

#[cfg(not(feature = "tfhe-rs"))]
fn tfhe_side(_pool: &rayon::ThreadPool, _case: &Case) -> Result<Option<Side>, Error> {
    Ok(None)
}
