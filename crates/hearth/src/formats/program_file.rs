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

use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::api::ops::{Op, ValueId};
use crate::api::program::{CompiledProgram, Program};
use crate::circuit::{Meter, Spent};
use crate::crypto::encoding::within;
#[cfg(any(test, feature = "testing"))]
use crate::crypto::files::decode;
use crate::crypto::files::{decode_seed, encode, inconsistent, read_bytes, write_file, FileKind};
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
                "a program with a custom operation (Word::from_circuit), or without its operations \
                 (CompiledProgram::without_source), cannot be written to a file"
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
        CompiledProgram::from_bytes_within(origin, bytes, &Meter::unlimited()).0
    }

    /// [`CompiledProgram::from_bytes`] within `meter`'s limits on the
    /// rebuild's work (every builder of this thread counted: scratch
    /// builds of automatic choices too), and what the rebuild spent. A
    /// build over a limit is refused with [`BuildError::Stopped`](crate::error::BuildError::Stopped) as soon
    /// as it passes it. For a server, whose clients state a cost it
    /// cannot check before it has paid for the rebuild.
    ///
    /// Each operation is built as it is decoded: the file's operation list
    /// is never held whole, a custom operation is refused where it
    /// stands, and a thread plan that changes nothing costs its bytes
    /// only ([`Program::set_threads`]).
    pub fn from_bytes_within(
        origin: &Path,
        bytes: &[u8],
        meter: &Meter,
    ) -> (Result<CompiledProgram, Error>, Spent) {
        meter.run(|| rebuild(origin, bytes))
    }

    /// What program bytes state, checked as far as that is cheap (header,
    /// CRC, decoding, the signature's ciphertext counts against the stated
    /// ones) but not built: [`CompiledProgram::from_bytes`] builds the
    /// program and refuses a file whose statements differ from it.
    pub fn peek(origin: &Path, bytes: &[u8]) -> Result<ProgramSummary, Error> {
        ProgramSummary::read(origin, bytes)
    }
}

/// A program file's operations replayed on a fresh program as they are
/// decoded, within [`MAX_PROGRAM_WORK`].
struct Replay<'a> {
    program: Option<Program>,
    params: ParamsId,
    path: &'a Path,
    work: u64,
    /// Why the replay stopped (the decoder is told only that it did).
    refused: Option<Error>,
}

impl Replay<'_> {
    fn refused(&self, e: Error) -> Error {
        inconsistent(self.path, format!("the program does not build: {e}"))
    }

    /// Adds `work` to the running total, refused over [`MAX_PROGRAM_WORK`].
    fn bounded(&mut self, work: u64) -> Result<(), Error> {
        self.work = self.work.saturating_add(work);
        within(
            || "building the program (digit operations and outputs)".into(),
            self.work,
            MAX_PROGRAM_WORK,
        )
        .map_err(|e| self.refused(e))
    }

    /// The program the head plans: its ops come next.
    fn start(&mut self, head: &ProgramHead) {
        let p = Program::new(self.params.params());
        {
            let mut st = p.state.borrow_mut();
            st.builder.set_threads(head.threads);
            st.threads = head.threads;
        }
        self.program = Some(p);
    }

    /// Builds one decoded op.
    fn apply(&mut self, op: Op) -> Result<(), Error> {
        if op == Op::Custom {
            return Err(self.refused(Error::Config("it holds a custom operation".into())));
        }
        let p = self.program.as_ref().expect("started by the head");
        let work = op.work(|id| p.value_len(id));
        self.bounded(work)?;
        let p = self.program.as_ref().expect("started by the head");
        if p.apply(op).is_none() {
            let e = p.state.borrow_mut().error.take();
            let e = e.unwrap_or_else(|| Error::Config("an operation failed".into()));
            return Err(self.refused(e));
        }
        Ok(())
    }

    /// Stops the decoder, keeping why.
    fn stop<E: de::Error>(&mut self, e: Error) -> E {
        self.refused = Some(e);
        E::custom("the program was refused")
    }
}

/// Decodes a program file's payload ([`ProgramData`]'s fields in order)
/// into a [`Replay`]: the head, then each op built as it is read, then
/// the outputs, which are returned with the head.
struct PayloadSeed<'r, 'a>(&'r mut Replay<'a>);

/// Decodes the op list into the [`Replay`].
struct OpsSeed<'r, 'a>(&'r mut Replay<'a>);

impl<'de> DeserializeSeed<'de> for PayloadSeed<'_, '_> {
    type Value = (ProgramHead, Vec<ValueId>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_struct("ProgramData", &["head", "ops", "outputs"], self)
    }
}

impl<'de> Visitor<'de> for PayloadSeed<'_, '_> {
    type Value = (ProgramHead, Vec<ValueId>);

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a program: its head, its operations and its outputs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let head: ProgramHead = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        self.0.start(&head);
        seq.next_element_seed(OpsSeed(&mut *self.0))?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        let outputs: Vec<ValueId> = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(2, &self))?;
        Ok((head, outputs))
    }
}

impl<'de> DeserializeSeed<'de> for OpsSeed<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for OpsSeed<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a program's operations")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(op) = seq.next_element::<Op>()? {
            if let Err(e) = self.0.apply(op) {
                return Err(self.0.stop(e));
            }
        }
        Ok(())
    }
}

/// Decodes program `bytes` and builds the program as its ops arrive
/// (header, CRC and key id checked first: a program holds no key, so its
/// header's key id is always 0), then marks its outputs and checks the
/// cost it states.
fn rebuild(path: &Path, bytes: &[u8]) -> Result<CompiledProgram, Error> {
    let info = crate::crypto::files::info_from_bytes(path, bytes)?;
    check_no_key(path, &info)?;
    let mut replay = Replay {
        program: None,
        params: info.params,
        path,
        work: 0,
        refused: None,
    };
    let decoded = decode_seed(path, bytes, FileKind::Program, PayloadSeed(&mut replay));
    if let Some(e) = replay.refused.take() {
        return Err(e);
    }
    let (_, (head, outputs)) = decoded?;
    let p = replay.program.take().expect("the head was decoded");
    // Every output is counted before any is marked: a forged file naming
    // one wide value a million times is refused before it allocates.
    let outputs_work = outputs
        .iter()
        .fold(0u64, |w, &id| w.saturating_add(p.value_len(id).max(1)));
    replay.bounded(outputs_work)?;
    for id in outputs {
        p.output_id(id);
    }
    let mut prog = p.build().map_err(|e| replay.refused(e))?;
    prog.set_signature(head.signature)
        .map_err(|e| replay.refused(e))?;
    let stats = prog.circuit().stats();
    if stats != head.stats {
        return Err(inconsistent(
            path,
            format!(
                "the file states {} PBS at depth {}, this hearth builds {} PBS at depth {} \
                 (written by another version?)",
                head.stats.pbs, head.stats.depth, stats.pbs, stats.depth
            ),
        ));
    }
    Ok(prog)
}

/// Program file `bytes` with its payload changed by `change`, its header
/// sealed again: a forged file, as a hostile client would send it (for
/// tests; `hearth_testkit::forge`).
#[cfg(any(test, feature = "testing"))]
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

/// [`forge`]: the program's operations replaced by `ops` (its outputs
/// by `outputs`), its stated cost and signature left as they were.
#[cfg(feature = "testing")]
#[doc(hidden)]
pub fn forge_ops(bytes: &[u8], ops: Vec<Op>, outputs: Vec<ValueId>) -> Result<Vec<u8>, Error> {
    forge(bytes, |d| {
        d.ops = ops;
        d.outputs = outputs;
    })
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use num_bigint::BigInt;

    use super::*;
    use crate::api::{Int, U16, U8};
    use crate::backend::CpuBackend;
    use crate::crypto::encoding::Shape;
    use crate::crypto::params::{INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
    use crate::error::FileError;
    use crate::formats::Bundle;
    use hearth_core::testing::keys::keys;
    use hearth_core::testing::Scratch;

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
    #[test]
    fn outputs_count_as_work() {
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
    #[test]
    fn peek_states_what_the_rebuild_reports() {
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
    #[test]
    fn peek_refuses_what_does_not_agree() {
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
    #[test]
    fn results_are_the_size_stated() {
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

    /// A file stating the cost of a sum of two 8-digit integers whose
    /// operations ask for a product of two 1 020-digit ones (within
    /// [`MAX_PROGRAM_WORK`]: about a million digit operations, seconds and
    /// gigabytes to build): within a meter for its stated cost its rebuild
    /// stops as soon as it passes the meter's limits, in a fraction of a
    /// second, having built about that many bootstraps. The program it
    /// states loads within the same meter.
    #[test]
    fn a_rebuild_stops_at_its_meters_limits() {
        let p = Program::new(&INSECURE_TEST_DIGITS);
        let (a, b) = (p.input(8), p.input(8));
        p.output(&(&a + &b));
        let honest = p.build().unwrap().to_bytes().unwrap();
        let wide = Shape::Int { digits: 1020 };
        let ops = vec![
            Op::Input(wide),
            Op::Input(wide),
            Op::Int(crate::api::ops::IntOp::Mul(ValueId(0), ValueId(1))),
        ];
        let forged = forge(&honest, |d| {
            d.ops = ops;
            d.outputs = vec![ValueId(2)];
        })
        .unwrap();
        let meter = Meter {
            bootstraps: 4096,
            bytes: 64 << 20,
            deadline: None,
        };
        let (ok, spent) = CompiledProgram::from_bytes_within(Path::new("honest"), &honest, &meter);
        assert!(
            ok.is_ok() && !spent.stopped && spent.bootstraps > 0,
            "{spent:?}"
        );
        let start = Instant::now();
        let (e, spent) = CompiledProgram::from_bytes_within(Path::new("forged"), &forged, &meter);
        let took = start.elapsed();
        let e = e.unwrap_err().to_string();
        assert!(
            e.contains("stopped") && e.contains("4096 bootstraps"),
            "{e}"
        );
        assert!(spent.stopped && spent.bootstraps == 4097, "{spent:?}");
        assert!(took < Duration::from_secs(1), "stopped after {took:?}");
        // Bytes: the same file stopped by a small byte limit instead.
        let bytes = Meter {
            bootstraps: u64::MAX,
            bytes: 1 << 20,
            deadline: None,
        };
        let (e, spent) = CompiledProgram::from_bytes_within(Path::new("forged"), &forged, &bytes);
        assert!(
            e.is_err() && spent.stopped && spent.bytes > 1 << 20,
            "{spent:?}"
        );
        // Past a deadline.
        let late = Meter {
            deadline: Some(Instant::now()),
            ..Meter::unlimited()
        };
        let (e, spent) = CompiledProgram::from_bytes_within(Path::new("forged"), &forged, &late);
        assert!(e.unwrap_err().to_string().contains("deadline") && spent.stopped);
    }

    /// A custom operation is refused where it stands: a file of a million
    /// of them (4 MB) is refused without decoding the rest, and the thread
    /// plans that change nothing, a million more, are neither recorded nor
    /// refused: the program loads and builds what it states.
    #[test]
    fn operations_are_built_as_they_are_decoded() {
        let p = Program::new(&INSECURE_TEST_BITS);
        let (a, b) = (U8::input(&p), U8::input(&p));
        p.output(&(&a + &b));
        let prog = p.build().unwrap();
        let bytes = prog.to_bytes().unwrap();
        let (_, data): (_, ProgramData) =
            decode(Path::new("p"), &bytes, FileKind::Program).unwrap();
        let threads = data.head.threads;
        let bomb = forged(&bytes, |d| d.ops = vec![Op::Custom; 1_000_000]);
        let start = Instant::now();
        let (e, spent) =
            CompiledProgram::from_bytes_within(Path::new("bomb"), &bomb, &Meter::unlimited());
        assert!(e.unwrap_err().to_string().contains("custom operation"));
        assert!(
            start.elapsed() < Duration::from_millis(200),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(spent.bytes, 0, "nothing was built");

        let padded = forged(&bytes, |d| {
            let plans = std::iter::repeat_n(Op::PlanThreads(threads), 1_000_000);
            let mut ops: Vec<Op> = plans.collect();
            ops.append(&mut d.ops);
            // Plans in a row: only the last counts.
            ops.extend([Op::PlanThreads(threads + 1), Op::PlanThreads(threads)]);
            d.ops = ops;
        });
        let loaded = CompiledProgram::from_bytes(Path::new("padded"), &padded).unwrap();
        let source = loaded.source.as_ref().unwrap();
        assert_eq!(
            source.ops, data.ops,
            "the plans that change nothing are not kept"
        );
        assert_eq!(loaded.circuit().stats(), prog.circuit().stats());
        let small = loaded.heap_bytes();
        assert!(small < 1 << 20, "{small} bytes");
        assert!(loaded.without_source().heap_bytes() < small);
    }
}
