//! `hearth-bench uploads`: what a data owner sends for `--bytes` bytes of
//! data (`u8`s), as the files hearth writes: full LWE ciphertexts (what a
//! server's results are), the client key's seeded list, the public key's
//! compact list, and transciphered (the AES-128-CTR ciphertext and its
//! counter in the clear); and the one-time transciphering key (a `U128`)
//! under each key. Each size is a real bundle's `to_bytes`, save the full
//! one, which is computed from its layout (`full_file_len`) rather than
//! encrypted. Times are the owner's encryption, one run on this machine.

use std::time::Instant;

use hearth::formats::bundle::full_file_len;
use hearth::symmetric::aes::AesCtr;
use hearth::{Bundle, ClientKey, Error, Param, ParameterSet, Shape};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::report::Table;

/// One way to send.
struct Row {
    what: &'static str,
    key: &'static str,
    bytes: u64,
    encrypt_ms: Option<f64>,
}

/// `hearth-bench uploads`.
pub fn uploads(
    params: &'static ParameterSet,
    data_bytes: usize,
    json_path: Option<&std::path::Path>,
) -> Result<(), Error> {
    if data_bytes == 0 || data_bytes > 8192 {
        return Err(Error::Config(
            "--bytes: 1 to 8192 (a bundle expands to at most 65 536 ciphertexts)".into(),
        ));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(85);
    let data: Vec<u8> = (0..data_bytes).map(|_| rng.gen()).collect();
    let (aes_key, iv): ([u8; 16], [u8; 16]) = (rng.gen(), rng.gen());
    eprintln!("keys for {} ...", params.name);
    let client = ClientKey::generate(params);
    let public = client.public_key()?;
    let (id, key_id) = (params.id, client.key_id());

    let byte = Shape::Word {
        bits: 8,
        signed: false,
    };
    let u128_shape = Shape::Word {
        bits: 128,
        signed: false,
    };
    let as_bytes = [Param::new("data", byte, &[data_bytes])];
    let values = vec![data.iter().map(|&b| BigInt::from(b)).collect::<Vec<_>>()];
    let timed = |f: &mut dyn FnMut() -> Result<Bundle, Error>| -> Result<(u64, f64), Error> {
        let start = Instant::now();
        let b = f()?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        Ok((b.to_bytes()?.len() as u64, ms))
    };
    let mut rows = vec![Row {
        what: "the data",
        key: "-",
        bytes: data_bytes as u64,
        encrypt_ms: None,
    }];
    rows.push(Row {
        what: "full LWE ciphertexts (a result's layout)",
        key: "client key",
        bytes: full_file_len(id, &as_bytes),
        encrypt_ms: None,
    });
    let (bytes, ms) = timed(&mut || client.encrypt_bundle(&as_bytes, &values))?;
    rows.push(Row {
        what: "seeded LWE list",
        key: "client key",
        bytes,
        encrypt_ms: Some(ms),
    });
    let (bytes, ms) = timed(&mut || public.encrypt_bundle(&as_bytes, &values))?;
    rows.push(Row {
        what: "compact list",
        key: "public key",
        bytes,
        encrypt_ms: Some(ms),
    });
    // Transciphered: the counter block and the sealed bytes as one word,
    // the inputs of `AesRoundKeys::aes_ctr_decrypt`, both in the clear.
    let sealed_params = [
        Param::new("counter", u128_shape, &[]),
        Param::new(
            "sealed",
            Shape::Word {
                bits: 8 * data_bytes,
                signed: false,
            },
            &[],
        ),
    ];
    let (bytes, ms) = timed(&mut || {
        let mut sealed = data.clone();
        AesCtr::new(&aes_key, &iv).apply(&mut sealed);
        let counter = BigInt::from(u128::from_be_bytes(iv));
        let sealed = BigInt::from_bytes_le(num_bigint::Sign::Plus, &sealed);
        Bundle::clear(id, key_id, &sealed_params, &[vec![counter], vec![sealed]])
    })?;
    rows.push(Row {
        what: "transciphered: AES-128-CTR ciphertext and counter, in the clear",
        key: "(AES key)",
        bytes,
        encrypt_ms: Some(ms),
    });
    let key_params = [Param::new("aes_key", u128_shape, &[])];
    let key_value = vec![vec![BigInt::from_bytes_le(
        num_bigint::Sign::Plus,
        &aes_key,
    )]];
    let (bytes, ms) = timed(&mut || client.encrypt_bundle(&key_params, &key_value))?;
    rows.push(Row {
        what: "one-time: the AES key (a U128)",
        key: "client key",
        bytes,
        encrypt_ms: Some(ms),
    });
    let (bytes, ms) = timed(&mut || public.encrypt_bundle(&key_params, &key_value))?;
    rows.push(Row {
        what: "one-time: the AES key (a U128)",
        key: "public key",
        bytes,
        encrypt_ms: Some(ms),
    });

    let mut table = Table::new(
        format!(
            "Uploading {data_bytes} bytes of data on {} (bundle files)",
            params.name
        ),
        &["sent", "with", "bytes", "x the data", "owner's time (ms)"],
    );
    for r in &rows {
        table.row(vec![
            r.what.to_string(),
            r.key.to_string(),
            r.bytes.to_string(),
            format!("{:.1}", r.bytes as f64 / data_bytes as f64),
            r.encrypt_ms.map_or("-".into(), |ms| format!("{ms:.1}")),
        ]);
    }
    table.note(
        "Each size is the bundle file (header, entry names, payload). The data are u8 values, \
         one ciphertext per bit once on the server. Transciphered uploads need the one-time key \
         on the server first (its rows), then cost the server the cipher's keystream \
         (hearth-bench transcipher). Times: one encryption on this machine.",
    );
    let json = json!({
        "bench": "uploads", "params": params.name, "data_bytes": data_bytes,
        "rows": rows.iter().map(|r| json!({
            "sent": r.what, "with": r.key, "bytes": r.bytes, "encrypt_ms": r.encrypt_ms,
        })).collect::<Vec<_>>(),
    });
    crate::report::emit(json_path, &json, &[table])
}
