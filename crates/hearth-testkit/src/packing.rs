//! Packed results against full ones: what a server sends back, decrypted
//! by its owner, must be what the full ciphertexts decrypt to.

use std::path::Path;

use hearth::crypto::keys::Ciphertext;
use hearth::formats::bundle::Entry;
use hearth::{Bundle, ClientKey, CompiledProgram, Encrypted, ServerKey};

use crate::programs::Failure;

/// Packs `out` (`prog`'s encrypted outputs, in order) with `server`'s
/// packing key, through the file's bytes, and checks that every digit
/// unpacks to the digit the full ciphertext decrypts to and that the
/// owner's decryption of the packed bundle (from its GLWE ciphertexts)
/// equals that of the full one. `Ok(false)`, checking nothing, where
/// the builder finds the outputs too noisy to pack.
pub fn packed_equals_full(
    client: &ClientKey,
    server: &ServerKey,
    prog: &CompiledProgram,
    out: &[Encrypted],
) -> Result<bool, Failure> {
    if prog.check_packable().is_err() {
        return Ok(false);
    }
    let mut values = out.iter().cloned();
    let entries = prog
        .signature()
        .outputs
        .iter()
        .map(|p| {
            let n = p.count().map_err(Failure::Run)?;
            Ok(Entry {
                param: p.clone(),
                values: values.by_ref().take(n).collect(),
            })
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    let full = Bundle::new(client.params().id, client.key_id(), entries).map_err(Failure::Run)?;
    let packed = prog.pack(server, &full).map_err(Failure::Run)?;
    let bytes = packed.to_bytes().map_err(Failure::Run)?;
    let packed = Bundle::from_bytes(Path::new("packed"), &bytes).map_err(Failure::Run)?;
    // The owner's decryption, straight from the GLWE ciphertexts (a
    // value's decoding may refuse digits: then both must refuse alike).
    let (from_packed, from_full) = (client.decrypt_bundle(&packed), client.decrypt_bundle(&full));
    if format!("{from_packed:?}") != format!("{from_full:?}") {
        return Err(Failure::Run(hearth::Error::Internal(format!(
            "packed results decrypt to {from_packed:?}, full ones to {from_full:?}"
        ))));
    }
    // Digit for digit, through the unpacked ciphertexts.
    let digits = |cts: &[Ciphertext]| {
        cts.iter()
            .map(|ct| client.decrypt(ct))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Failure::Run)
    };
    let unpacked = Bundle::new(packed.params(), packed.key_id(), packed.entries().to_vec())
        .map_err(Failure::Run)?;
    for (value, (p, f)) in unpacked.values().zip(full.values()).enumerate() {
        let (decrypted, clear) = (digits(p.ciphertexts())?, digits(f.ciphertexts())?);
        if decrypted != clear {
            return Err(Failure::Encrypted {
                value,
                clear,
                decrypted,
            });
        }
    }
    Ok(true)
}
