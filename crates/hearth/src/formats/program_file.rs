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
//! Rebuilding costs up to [`MAX_PROGRAM_WORK`]; [`CompiledProgram::peek`]
//! reads the stated cost and signature without it ([`ProgramSummary`]), so
//! a server can weigh a file against its limits first.
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

use crate::api::ops::{Op, ValueId};
use crate::api::program::{CompiledProgram, Program};
use crate::crypto::encoding::within;
use crate::crypto::files::{
    decode, encode, inconsistent, read_bytes, write_file, FileInfo, FileKind,
};
use crate::crypto::keys::KeyId;
use crate::crypto::params::ParamsId;
use crate::error::Error;
use crate::formats::program_head::{check_no_key, ProgramHead, ProgramSummary};

/// The most digit operations loading a program may build, summed over its
/// operations before each is built (products of lengths for
/// multiplications, sums otherwise), then over its outputs (each its
/// length, at least 1) before any is marked: a forged file cannot make
/// loading exhaust memory or time (at most about 1.3 GiB and 25 s here: one
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

/// The payload of a program file: what it states (read alone by
/// [`ProgramSummary::read`]), then the operations.
#[derive(Serialize, Deserialize)]
struct ProgramData {
    head: ProgramHead,
    ops: Vec<Op>,
    outputs: Vec<ValueId>,
}

impl CompiledProgram {
    /// What its file holds.
    fn data(&self) -> Result<ProgramData, Error> {
        let Some(source) = &self.source else {
            return Err(Error::Config(
                "a program with a custom operation (Word::from_circuit) cannot be written to a file"
                    .into(),
            ));
        };
        Ok(ProgramData {
            head: ProgramHead {
                threads: source.threads,
                signature: self.signature().clone(),
                stats: self.circuit().stats(),
            },
            ops: source.ops.clone(),
            outputs: source.outputs.clone(),
        })
    }

    /// The program as file bytes. A program holding an operation built
    /// outside the library ([`crate::Word::from_circuit`]) cannot be
    /// written: its circuit could not be checked when read.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        encode(
            Path::new("<program>"),
            FileKind::Program,
            self.circuit().params(),
            KeyId(0),
            &self.data()?,
        )
    }

    /// Writes [`CompiledProgram::to_bytes`]'s bytes atomically, encoded
    /// straight to the file.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        write_file(
            path,
            FileKind::Program,
            self.circuit().params(),
            KeyId(0),
            &self.data()?,
            false,
        )
        .map(drop)
    }

    /// Reads a program written by [`CompiledProgram::save`], building it
    /// again with every check.
    pub fn load(path: &Path) -> Result<CompiledProgram, Error> {
        CompiledProgram::from_bytes(path, &read_bytes(path, FileKind::Program)?)
    }

    /// Reads program bytes from anywhere (`origin` names them in errors).
    pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<CompiledProgram, Error> {
        let (info, data) = decode_program(origin, bytes)?;
        rebuild(origin, info.params, data)
    }

    /// What program bytes state, checked as far as that is cheap (header,
    /// CRC, decoding, the signature's ciphertext counts against the stated
    /// ones) but not built: [`CompiledProgram::from_bytes`] builds the
    /// program and refuses a file whose statements differ from it.
    pub fn peek(origin: &Path, bytes: &[u8]) -> Result<ProgramSummary, Error> {
        ProgramSummary::read(origin, bytes)
    }
}

/// Decodes program bytes: header, CRC, payload, and no key id (a program
/// holds no key, so its header's key id is always 0).
fn decode_program(origin: &Path, bytes: &[u8]) -> Result<(FileInfo, ProgramData), Error> {
    let (info, data): (_, ProgramData) = decode(origin, bytes, FileKind::Program)?;
    check_no_key(origin, &info)?;
    Ok((info, data))
}

/// Replays `data`'s operations on a fresh program of `params`.
fn rebuild(path: &Path, params: ParamsId, data: ProgramData) -> Result<CompiledProgram, Error> {
    let refused = |e: Error| inconsistent(path, format!("the program does not build: {e}"));
    let bounded = |work: u64| {
        within(
            || "building the program (digit operations and outputs)".into(),
            work,
            MAX_PROGRAM_WORK,
        )
        .map_err(refused)
    };
    let p = Program::new(params.params());
    {
        let mut st = p.state.borrow_mut();
        st.builder.set_threads(data.head.threads);
        st.threads = data.head.threads;
    }
    let mut work = 0u64;
    for op in data.ops {
        if op == Op::Custom {
            return Err(refused(Error::Config("it holds a custom operation".into())));
        }
        work = work.saturating_add(op.work(|id| p.value_len(id)));
        bounded(work)?;
        if p.apply(op).is_none() {
            break;
        }
    }
    // Every output is counted before any is marked: a forged file naming
    // one wide value a million times is refused before it allocates.
    let outputs = data
        .outputs
        .iter()
        .fold(0u64, |w, &id| w.saturating_add(p.value_len(id).max(1)));
    bounded(work.saturating_add(outputs))?;
    for id in data.outputs {
        p.output_id(id);
    }
    let mut prog = p.build().map_err(refused)?;
    prog.set_signature(data.head.signature).map_err(refused)?;
    let stats = prog.circuit().stats();
    if stats != data.head.stats {
        return Err(inconsistent(
            path,
            format!(
                "the file states {} PBS at depth {}, this hearth builds {} PBS at depth {} \
                 (written by another version?)",
                data.head.stats.pbs, data.head.stats.depth, stats.pbs, stats.depth
            ),
        ));
    }
    Ok(prog)
}

/// Program file `bytes` with its payload changed by `change`, its header
/// sealed again: a forged file, as a hostile client would send it (for
/// tests; [`hearth_core::testing::forge`]).
#[cfg(feature = "testing")]
fn forge(bytes: &[u8], change: impl FnOnce(&mut ProgramData)) -> Result<Vec<u8>, Error> {
    let (info, mut data): (_, ProgramData) = decode(Path::new("forged"), bytes, FileKind::Program)?;
    change(&mut data);
    encode(
        Path::new("forged"),
        FileKind::Program,
        info.params,
        info.key_id,
        &data,
    )
}

/// [`forge`]: the program's first output named `outputs` times, its
/// stated cost and signature left as they were.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub fn forge_outputs(bytes: &[u8], outputs: usize) -> Result<Vec<u8>, Error> {
    forge(bytes, |d| {
        let first = d.outputs.first().copied().unwrap_or(ValueId(0));
        d.outputs = vec![first; outputs];
    })
}

#[cfg(feature = "testing")]
pub(crate) mod tests {
    use std::time::{Duration, Instant};

    use num_bigint::BigInt;

    use super::*;
    use crate::api::{Int, U16, U8};
    use crate::backend::CpuBackend;
    use crate::crypto::encoding::Shape;
    use crate::crypto::files::tests::Scratch;
    use crate::crypto::params::{INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
    use crate::error::FileError;
    use crate::formats::Bundle;
    use hearth_core::testing::keys::keys;

    /// Programs of both families, with tensors, named signatures, both
    /// integer encodings and outputs of several shapes.
    fn programs() -> Vec<CompiledProgram> {
        let tensor = {
            let p = Program::new(&INSECURE_TEST_DIGITS);
            let x: Vec<_> = (0..6).map(|_| p.input(4)).collect();
            let k = p.input(4);
            for row in x.chunks(3) {
                p.output(&Int::sum(&p, row));
            }
            p.output(&(&k * &x[0]));
            p.build()
                .unwrap()
                .with_signature(&[("x", &[2, 3]), ("k", &[])], &[("s", &[2]), ("kx", &[])])
                .unwrap()
        };
        let twos = {
            let p = Program::new(&INSECURE_TEST_DIGITS);
            let a = p.input_twos(6);
            let b = p.input(3);
            p.output(&a.max(&b));
            p.output(&(&a * &b));
            p.build().unwrap()
        };
        let bytes = {
            let p = Program::new(&INSECURE_TEST_BITS);
            let (a, b) = (U8::input(&p), U8::input(&p));
            p.output(&(&a + &b));
            p.output(&a.lt(&b));
            p.output(&(&a * &b));
            p.build()
                .unwrap()
                .with_signature(&[("ab", &[2])], &[("sum", &[]), ("lt", &[]), ("prod", &[])])
                .unwrap()
        };
        let halves = {
            let p = Program::new(&INSECURE_TEST_BITS);
            let x = U16::input(&p);
            p.output(&x.rotate_left(3));
            p.output(&x.swap_bytes());
            p.output(&x.count_ones());
            p.build()
                .unwrap()
                .with_signature(&[("x", &[])], &[("r", &[2]), ("c", &[])])
                .unwrap()
        };
        vec![tensor, twos, bytes, halves]
    }

    /// Input values that fit every shape of [`programs`]: value `i` of a
    /// param is `i % 2` for a bit, else `(3 i + 1) % 8`.
    fn inputs(prog: &CompiledProgram) -> Vec<Vec<BigInt>> {
        prog.signature()
            .inputs
            .iter()
            .map(|p| {
                let m = if p.shape.len() == 1 { 2 } else { 8 };
                (0..p.count().unwrap())
                    .map(|i| BigInt::from((3 * i + 1) % m))
                    .collect()
            })
            .collect()
    }

    /// `bytes` (a program file) with its payload changed by `change`.
    fn forged(bytes: &[u8], change: impl FnOnce(&mut ProgramData)) -> Vec<u8> {
        forge(bytes, change).unwrap()
    }

    /// Whether `e` is the refusal of a file over [`MAX_PROGRAM_WORK`].
    fn over_work(e: &Result<CompiledProgram, Error>) -> bool {
        matches!(e, Err(Error::File(FileError::Inconsistent { reason, .. }))
            if reason.contains("digit operations and outputs"))
    }

    /// A program naming its one 8-bit input as often as the work bound
    /// allows loads; one output more is refused, and so, in well under a
    /// second, is a forged file naming it a million times. A million
    /// outputs never made are a typed error too.
    pub(crate) fn outputs_count_as_work() {
        let word = Shape::Word {
            bits: 8,
            signed: false,
        };
        let input_work = Op::Input(word).work(|_| 0);
        let most = ((MAX_PROGRAM_WORK - input_work) / 8) as usize;
        let p = Program::new(&INSECURE_TEST_BITS);
        let x = U8::input(&p);
        for _ in 0..most {
            p.output(&x);
        }
        let bytes = p.build().unwrap().to_bytes().unwrap();
        let (_, data): (_, ProgramData) =
            decode(Path::new("p"), &bytes, FileKind::Program).unwrap();
        assert_eq!(data.ops, [Op::Input(word)]);
        // Its 131 070 output names are checked in linear time (comparing
        // each with every earlier one took 16 s here).
        let start = Instant::now();
        let loaded = CompiledProgram::from_bytes(Path::new("p"), &bytes).unwrap();
        let took = start.elapsed();
        assert_eq!(loaded.output_shapes().len(), most);
        assert!(took < Duration::from_secs(4), "loaded in {took:?}");

        let load = |b: &[u8]| CompiledProgram::from_bytes(Path::new("forged"), b);
        let e = load(&forged(&bytes, |d| d.outputs.push(ValueId(0))));
        assert!(over_work(&e), "{e:?}");
        let million = forged(&bytes, |d| d.outputs = vec![ValueId(0); 1_000_000]);
        let start = Instant::now();
        let e = load(&million);
        let took = start.elapsed();
        assert!(over_work(&e), "{e:?}");
        assert!(took < Duration::from_secs(1), "refused in {took:?}");
        let e = load(&forged(&bytes, |d| d.outputs = vec![ValueId(9); 1_000_000]));
        assert!(
            matches!(e, Err(Error::File(FileError::Inconsistent { .. }))),
            "{e:?}"
        );
    }

    /// The summary of a program file states what the program built before
    /// the file and the program rebuilt from it report: parameter set,
    /// thread count, signature, cost, memory estimate and result size.
    pub(crate) fn peek_states_what_the_rebuild_reports() {
        for prog in programs() {
            let bytes = prog.to_bytes().unwrap();
            let summary = CompiledProgram::peek(Path::new("p"), &bytes).unwrap();
            let rebuilt = CompiledProgram::from_bytes(Path::new("p"), &bytes).unwrap();
            for q in [&prog, &rebuilt] {
                assert_eq!(summary.params, q.circuit().params());
                assert_eq!(summary.threads, q.source.as_ref().unwrap().threads);
                assert_eq!(&summary.signature, q.signature());
                assert_eq!(summary.stats, q.circuit().stats());
                for t in [1, 2, 16] {
                    assert_eq!(summary.memory_estimate(t), q.memory_estimate(t));
                }
                assert_eq!(summary.result_bytes(), q.result_bytes());
            }
            assert!(summary.memory_estimate(2) > summary.memory_estimate(1));
        }
    }

    /// A summary whose signature and stated cost disagree, or a program
    /// file naming a key, is refused without a rebuild.
    pub(crate) fn peek_refuses_what_does_not_agree() {
        let bytes = programs()[0].to_bytes().unwrap();
        let peek = |b: &[u8]| CompiledProgram::peek(Path::new("forged"), b);
        let mut keyed = bytes.clone();
        keyed[16] = 3;
        crate::crypto::files::reseal(&mut keyed);
        let changes: [fn(&mut ProgramData); 3] = [
            |d| d.head.stats.outputs += 1,
            |d| d.head.stats.inputs -= 1,
            |d| d.head.signature.outputs[0].dims = vec![3],
        ];
        for (i, b) in changes
            .into_iter()
            .map(|c| forged(&bytes, c))
            .chain([keyed])
            .enumerate()
        {
            let e = peek(&b);
            assert!(
                matches!(e, Err(Error::File(FileError::Inconsistent { .. }))),
                "change {i}: {e:?}"
            );
        }
    }

    /// Every program runs encrypted on a bundle read for it, and its
    /// result file is [`CompiledProgram::result_bytes`] long, as its
    /// summary states; the results are the clear run's. A bundle for
    /// another program is refused as [`CompiledProgram::check_bundle`]
    /// refuses it.
    pub(crate) fn results_are_the_size_stated() {
        let d = Scratch::new("results");
        let progs = programs();
        for (i, prog) in progs.iter().enumerate() {
            let (client, server) = keys(prog.circuit().params().params());
            let values = inputs(prog);
            let sent = client
                .encrypt_bundle(&prog.signature().inputs, &values)
                .unwrap()
                .to_bytes()
                .unwrap();
            let input = prog.bundle_from_bytes(Path::new("in"), &sent).unwrap();
            assert_eq!(input, Bundle::from_bytes(Path::new("in"), &sent).unwrap());
            let cpu = CpuBackend::new(server, Some(2)).unwrap();
            let out = prog.run_bundle(&cpu, &input).unwrap();
            let len = out.save_len(&d.join(format!("out{i}"))).unwrap();
            assert_eq!(len, prog.result_bytes(), "program {i}");
            let summary = CompiledProgram::peek(Path::new("p"), &prog.to_bytes().unwrap()).unwrap();
            assert_eq!(len, summary.result_bytes(), "program {i}");
            let got: Vec<_> = client
                .decrypt_bundle(&out)
                .unwrap()
                .into_iter()
                .map(|(_, vs)| vs)
                .collect();
            assert_eq!(got, prog.run_clear(&values).unwrap(), "program {i}");

            let other = &progs[(i + 1) % progs.len()];
            let (other_client, _) = keys(other.circuit().params().params());
            let theirs = other_client
                .encrypt_bundle(&other.signature().inputs, &inputs(other))
                .unwrap();
            let e = prog
                .bundle_from_bytes(Path::new("in"), &theirs.to_bytes().unwrap())
                .unwrap_err();
            let check = prog.check_bundle(&theirs).unwrap_err();
            assert_eq!(e.to_string(), check.to_string(), "program {i}");
        }
    }

    hearth_core::tests![
        outputs_count_as_work,
        peek_states_what_the_rebuild_reports,
        peek_refuses_what_does_not_agree,
        results_are_the_size_stated,
    ];
}
