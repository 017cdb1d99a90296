//! The leading part of a program file: its signature and stated cost
//! ([`ProgramHead`]), written before the operations (since format version 5), so
//! that a client that only encrypts inputs and decrypts results (the
//! WebAssembly client, `crates/hearth-wasm`) reads what it needs without
//! the operations' vocabulary or the engine that rebuilds them
//! ([`ProgramSummary::read`]). `hearth::CompiledProgram::from_bytes` reads
//! the whole file and checks every statement here against the rebuilt
//! program.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::circuit::Stats;
use crate::crypto::files::{decode_head, inconsistent, FileInfo, FileKind};
use crate::crypto::keys::KeyId;
use crate::crypto::params::ParamsId;
use crate::error::Error;
use crate::formats::bundle::full_file_len;
use crate::formats::param::Param;

/// The named inputs and outputs of a program, each a value or a tensor of
/// values of one shape ([`Param`]), in the program's order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// Inputs, in order.
    pub inputs: Vec<Param>,
    /// Outputs, in order.
    pub outputs: Vec<Param>,
}

/// What a program file states before its operations.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProgramHead {
    /// The thread count its algorithms were planned for.
    pub threads: usize,
    /// Its named inputs and outputs.
    pub signature: Signature,
    /// Its stated cost (#PBS, depth, level widths, peak live values).
    pub stats: Stats,
}

/// What a program file states about its program, read without building
/// it: enough to encrypt its inputs, decrypt its outputs, and weigh a run
/// against limits before paying for the rebuild, which then checks every
/// field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramSummary {
    /// The parameter set.
    pub params: ParamsId,
    /// The thread count its algorithms were planned for.
    pub threads: usize,
    /// Its named inputs and outputs.
    pub signature: Signature,
    /// Its stated cost (#PBS, depth, level widths, peak live values).
    pub stats: Stats,
}

impl ProgramSummary {
    /// Reads what program bytes state, checked as far as that is cheap
    /// (header, CRC, decoding, the signature's ciphertext counts against
    /// the stated ones) but not built (`origin` names the bytes in
    /// errors).
    pub fn read(origin: &Path, bytes: &[u8]) -> Result<ProgramSummary, Error> {
        let (info, head): (_, ProgramHead) = decode_head(origin, bytes, FileKind::Program)?;
        check_no_key(origin, &info)?;
        let sig = &head.signature;
        for (params, stated, what) in [
            (&sig.inputs, head.stats.inputs, "input"),
            (&sig.outputs, head.stats.outputs, "output"),
        ] {
            let n = ciphertexts(params)
                .map_err(|e| inconsistent(origin, format!("the signature: {e}")))?;
            if n != stated as u64 {
                return Err(inconsistent(
                    origin,
                    format!(
                        "the signature's {what}s take {n} ciphertexts, the stated cost {stated}"
                    ),
                ));
            }
        }
        Ok(ProgramSummary {
            params: info.params,
            threads: head.threads,
            signature: head.signature,
            stats: head.stats,
        })
    }

    /// Bytes an encrypted run of the stated program needs
    /// ([`memory_estimate`]).
    pub fn memory_estimate(&self, threads: usize) -> u64 {
        memory_estimate(self.params, self.stats.peak_live, threads)
    }

    /// The size of the stated program's result file.
    pub fn result_bytes(&self) -> u64 {
        full_file_len(self.params, &self.signature.outputs)
    }
}

/// Refuses a program file whose header names a key: a program holds no
/// key, so its header's key id is always 0.
pub fn check_no_key(origin: &Path, info: &FileInfo) -> Result<(), Error> {
    if info.key_id != KeyId(0) {
        return Err(inconsistent(
            origin,
            format!(
                "a program names no key, but its header holds key id {}",
                info.key_id
            ),
        ));
    }
    Ok(())
}

/// Bytes an encrypted run needs, from a program's parameter set and peak
/// of live ciphertexts: that many ciphertexts plus one bootstrap
/// accumulator per thread (one formula for built and for stated
/// programs).
pub fn memory_estimate(params: ParamsId, peak_live: usize, threads: usize) -> u64 {
    let params = params.params();
    (peak_live as u64)
        .saturating_mul(params.ciphertext_bytes())
        .saturating_add((threads as u64).saturating_mul(params.accumulator_bytes()))
}

/// The ciphertexts of the values of `params` (refused where a count is).
fn ciphertexts(params: &[Param]) -> Result<u64, Error> {
    params.iter().try_fold(0u64, |n, p| {
        Ok(n.saturating_add((p.count()? as u64).saturating_mul(p.shape.len() as u64)))
    })
}
