//! Program files: a [`CompiledProgram`] written as the typed operations it
//! was built from ([`Op`]), its signature and its cost, under the same
//! versioned, bounded, CRC-checked header as keys ([`FileKind::Program`]).
//! No key is inside.
//!
//! Loading builds the program again from its operations, so every check
//! of the builder runs again (noise budgets, table coverage, ranges,
//! sizes): a forged file describes at most a program the typed API could
//! build, and is refused with a typed error otherwise. The cost written
//! beside the operations (#PBS, depth, level widths, peak live values)
//! must equal the rebuilt circuit's, so a file from a hearth whose
//! algorithms differ is refused rather than run at another cost.
//!
//! ```
//! use hearth::backend::CpuBackend;
//! use hearth::{ClientKey, CompiledProgram, Int, Program, INSECURE_TEST_DIGITS};
//! # fn main() -> hearth::Result<()> {
//! let p = Program::new(&INSECURE_TEST_DIGITS);
//! let x: Vec<_> = (0..4).map(|_| p.input(8)).collect();
//! let w = [3.into(), (-1).into(), 4.into(), 1.into()];
//! p.output(&Int::dot_clear(&p, &x, &w, &5.into()));
//! let prog = p.build()?.with_signature(&[("x", &[4])], &[("y", &[])])?;
//! let path = std::env::temp_dir().join(format!("dot-{}.hprog", std::process::id()));
//! prog.save(&path)?; // the key owner
//!
//! let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
//! let values = vec![1.into(), 2.into(), 3.into(), 4.into()];
//! let input = client.encrypt_bundle(&prog.signature().inputs, &[values])?;
//!
//! let prog = CompiledProgram::load(&path)?; // the server: rebuilt, checked
//! let server = client.server_key();
//! let out = prog.run_bundle(&CpuBackend::new(&server, None)?, &input)?;
//! assert_eq!(client.decrypt_bundle(&out)?[0].1, vec![(3 - 2 + 12 + 4 + 5).into()]);
//! # std::fs::remove_file(&path).ok();
//! # Ok(())
//! # }
//! ```

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ops::{Op, ValueId};
use super::program::{CompiledProgram, Program, Signature};
use crate::circuit::Stats;
use crate::crypto::encoding::within;
use crate::crypto::files::{decode, encode, inconsistent, read_bytes, write_atomic, FileKind};
use crate::crypto::keys::KeyId;
use crate::error::Error;

/// The most digit operations loading a program may build, summed over its
/// operations before each is built (products of lengths for
/// multiplications, sums otherwise): a forged file cannot make loading
/// exhaust memory or time (at most about 1.3 GiB and 25 s here: one
/// 1024-digit product). A 64-bit product counts 4 096.
#[cfg(not(fuzzing))]
pub const MAX_PROGRAM_WORK: u64 = 1 << 20;

/// Under `cargo fuzz` (`cfg(fuzzing)`): 1 024 times less (a 32-digit
/// product), so that the fuzzer, which drifts to the largest programs the
/// bound admits, runs 10^6 inputs in minutes rather than hours (2^14 gave
/// about 70 runs/s); every check runs as in production, on smaller
/// programs.
#[cfg(fuzzing)]
pub const MAX_PROGRAM_WORK: u64 = 1 << 10;

/// The payload of a program file.
#[derive(Serialize, Deserialize)]
struct ProgramData {
    /// The thread count the first operations were planned for.
    threads: usize,
    ops: Vec<Op>,
    outputs: Vec<ValueId>,
    signature: Signature,
    stats: Stats,
}

impl CompiledProgram {
    /// The program as file bytes. A program holding an operation built
    /// outside the library ([`crate::Word::from_circuit`]) cannot be
    /// written: its circuit could not be checked when read.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let Some(source) = &self.source else {
            return Err(Error::Config(
                "a program with a custom operation (Word::from_circuit) cannot be written to a file"
                    .into(),
            ));
        };
        let data = ProgramData {
            threads: source.threads,
            ops: source.ops.clone(),
            outputs: source.outputs.clone(),
            signature: self.signature().clone(),
            stats: self.circuit().stats(),
        };
        encode(
            Path::new("<program>"),
            FileKind::Program,
            self.circuit().params(),
            KeyId(0),
            &data,
        )
    }

    /// Writes the program atomically (see [`CompiledProgram::to_bytes`]).
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_atomic(path, &self.to_bytes()?, false)
    }

    /// Reads a program written by [`CompiledProgram::save`], building it
    /// again with every check.
    pub fn load(path: &Path) -> Result<CompiledProgram, Error> {
        CompiledProgram::from_bytes(path, &read_bytes(path, FileKind::Program)?)
    }

    /// Reads program bytes from anywhere (`origin` names them in errors).
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<CompiledProgram, Error> {
        let (info, data): (_, ProgramData) = decode(origin, bytes, FileKind::Program)?;
        // A program holds no key: its header's key id is always 0.
        if info.key_id != KeyId(0) {
            return Err(inconsistent(
                origin,
                format!(
                    "a program names no key, but its header holds key id {}",
                    info.key_id
                ),
            ));
        }
        rebuild(origin, info.params, data)
    }
}

/// Replays `data`'s operations on a fresh program of `params`.
fn rebuild(
    path: &Path,
    params: crate::ParamsId,
    data: ProgramData,
) -> Result<CompiledProgram, Error> {
    let refused = |e: Error| inconsistent(path, format!("the program does not build: {e}"));
    let p = Program::new(params.params());
    p.state.borrow_mut().builder.set_threads(data.threads);
    let mut work = 0u64;
    for op in data.ops {
        if op == Op::Custom {
            return Err(refused(Error::Config("it holds a custom operation".into())));
        }
        work = work.saturating_add(op.work(|id| p.value_len(id)));
        within(
            || "building the program (digit operations)".into(),
            work,
            MAX_PROGRAM_WORK,
        )
        .map_err(refused)?;
        if p.apply(op).is_none() {
            break;
        }
    }
    for id in data.outputs {
        p.output_id(id);
    }
    let mut prog = p.build().map_err(refused)?;
    prog.set_signature(data.signature).map_err(refused)?;
    let stats = prog.circuit().stats();
    if stats != data.stats {
        return Err(inconsistent(
            path,
            format!(
                "the file states {} PBS at depth {}, this hearth builds {} PBS at depth {} \
                 (written by another version?)",
                data.stats.pbs, data.stats.depth, stats.pbs, stats.depth
            ),
        ));
    }
    Ok(prog)
}
