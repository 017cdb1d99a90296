//! Job requests: the body of `POST /v1/jobs` is a program file followed
//! by a bundle file, as written by [`hearth::CompiledProgram::to_bytes`]
//! and [`hearth::Bundle::to_bytes`]. Each hearth file's 36-byte header
//! states its payload length, so the two split without a separator.
//!
//! The checks go from cheap to expensive, so that a refusal costs the
//! server little: [`split_job`] checks the two headers (no payload is
//! decoded); [`stated_cost`] decodes the program file without replaying
//! it and admits the job by the cost it states against [`Limits`];
//! [`build_program`] rebuilds the program (every check of the builder
//! again, work bounded by
//! [`hearth::formats::program_file::MAX_PROGRAM_WORK`] and by what the
//! stated cost allows as it goes, [`rebuild_meter`]; and the cost must be
//! the stated one); [`read_bundle`] checks the bundle's entries against
//! the program's inputs before it expands a compact bundle.
//! [`parse_job`] runs them all. Each is public so that a fuzzer can call
//! them on arbitrary bytes: they return an [`ApiError`] for anything,
//! never panic.

use std::path::Path;
use std::time::{Duration, Instant};

use hearth::circuit::{Meter, Spent};
use hearth::crypto::files::{info_from_bytes, FileInfo, FileKind};
use hearth::{Bundle, CompiledProgram, Error, FileError, KeyId, ParameterSet};

use crate::wire::{ApiError, ErrorCode};

/// Bytes of a hearth file header.
pub const HEADER_LEN: usize = 36;

/// What the operator allows one job (the server's `--max-*` options).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes in one request body.
    pub max_body: u64,
    /// Most bootstraps one program may run.
    pub max_pbs: u64,
    /// Most estimated peak memory of one run, bytes
    /// ([`CompiledProgram::memory_estimate`] on `threads`).
    pub max_memory: u64,
    /// Threads the run would use (the memory estimate grows with them).
    pub threads: usize,
}

impl Default for Limits {
    /// 256 MiB bodies, 10 million bootstraps, 8 GiB, 1 thread.
    fn default() -> Limits {
        Limits {
            max_body: 256 << 20,
            max_pbs: 10_000_000,
            max_memory: 8 << 30,
            threads: 1,
        }
    }
}

/// The two files of a job request, split and with their headers checked.
#[derive(Clone, Copy, Debug)]
pub struct JobParts<'a> {
    /// The program file (header and payload).
    pub program: &'a [u8],
    /// The bundle file (header and payload).
    pub bundle: &'a [u8],
    /// The key the bundle is under (from its header).
    pub key_id: KeyId,
    /// The parameter set of both files (they must agree).
    pub params: &'static ParameterSet,
}

/// A job request decoded and admitted: the program, its input bundle and
/// its cost.
#[derive(Clone, Debug)]
pub struct JobRequest {
    /// The program, rebuilt with every check.
    pub program: CompiledProgram,
    /// Its inputs, checked against the program's signature.
    pub bundle: Bundle,
    /// Bootstraps it runs.
    pub pbs: u64,
    /// Its depth in bootstraps.
    pub depth: u64,
    /// Estimated peak memory of the run on [`Limits::threads`], bytes.
    pub memory: u64,
}

/// The code a hearth error on a job's file maps to: an insecure set is
/// [`ErrorCode::InsecureParams`], anything else about the file `code`.
fn file_error(code: ErrorCode, what: &str, e: Error) -> ApiError {
    match e {
        Error::InsecureParams(_) => ApiError::new(ErrorCode::InsecureParams, e.to_string()),
        e => ApiError::new(code, format!("{what}: {e}")),
    }
}

/// Refuses the `INSECURE_*` test sets, as every front end does.
pub fn check_secure(params: &'static ParameterSet, what: &str) -> Result<(), ApiError> {
    ParameterSet::for_front_end(params.name)
        .map(drop)
        .map_err(|e| ApiError::new(ErrorCode::InsecureParams, format!("{what}: {e}")))
}

fn header(bytes: &[u8], code: ErrorCode, what: &str, kind: FileKind) -> Result<FileInfo, ApiError> {
    let info = info_from_bytes(Path::new(what), bytes).map_err(|e| file_error(code, what, e))?;
    if info.kind != kind {
        return Err(ApiError::new(
            code,
            format!(
                "{what}: a {} file, expected a {}",
                info.kind.name(),
                kind.name()
            ),
        ));
    }
    check_secure(info.params.params(), what)?;
    Ok(info)
}

/// Splits a job body into its program and bundle files, checking both
/// headers (magic, version, kind, parameter set, secure set), that the
/// program file is whole, that the two files are of one parameter set,
/// and that the body is within `max_body`. Nothing is decoded.
pub fn split_job(body: &[u8], max_body: u64) -> Result<JobParts<'_>, ApiError> {
    if body.len() as u64 > max_body {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("{} bytes, over the limit of {max_body}", body.len()),
        ));
    }
    let info = header(body, ErrorCode::BadProgram, "program", FileKind::Program)?;
    let end = info
        .payload_len
        .checked_add(HEADER_LEN as u64)
        .filter(|&end| end <= body.len() as u64)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadProgram,
                format!(
                    "program: its header states {} payload bytes, the body holds {} after it",
                    info.payload_len,
                    body.len() - HEADER_LEN
                ),
            )
        })? as usize;
    let (program, bundle) = body.split_at(end);
    if bundle.is_empty() {
        return Err(ApiError::new(
            ErrorCode::BadBundle,
            "bundle: the body ends after the program (send the program file, then the bundle file)",
        ));
    }
    let binfo = header(bundle, ErrorCode::BadBundle, "bundle", FileKind::Bundle)?;
    if binfo.params != info.params {
        return Err(ApiError::new(
            ErrorCode::BadBundle,
            format!(
                "bundle: of parameter set {}, the program is of {}",
                binfo.params.params().name,
                info.params.params().name
            ),
        ));
    }
    Ok(JobParts {
        program,
        bundle,
        key_id: binfo.key_id,
        params: info.params.params(),
    })
}

/// A job's cost as its program file states it: checked against the
/// limits before anything is rebuilt (the rebuild then refuses a file
/// whose statement is not what it builds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Bootstraps it runs.
    pub pbs: u64,
    /// Its depth in bootstraps.
    pub depth: u64,
    /// Estimated peak memory of the run on [`Limits::threads`], bytes.
    pub memory: u64,
    /// The most bytes its result file can take.
    pub result_bytes: u64,
}

/// The cost the program file of `parts` states, within `limits`
/// ([`ErrorCode::OverCost`] otherwise): cheap, the operations are decoded
/// but not replayed.
pub fn stated_cost(parts: &JobParts<'_>, limits: &Limits) -> Result<Cost, ApiError> {
    let summary = CompiledProgram::peek(Path::new("program"), parts.program)
        .map_err(|e| file_error(ErrorCode::BadProgram, "program", e))?;
    check_secure(summary.params.params(), "program")?;
    let cost = Cost {
        pbs: summary.stats.pbs as u64,
        depth: summary.stats.depth as u64,
        memory: summary.memory_estimate(limits.threads),
        result_bytes: summary.result_bytes(),
    };
    if cost.pbs > limits.max_pbs {
        return Err(ApiError::new(
            ErrorCode::OverCost,
            format!(
                "the program runs {} bootstraps, over the limit of {}",
                cost.pbs, limits.max_pbs
            ),
        ));
    }
    if cost.memory > limits.max_memory {
        return Err(ApiError::new(
            ErrorCode::OverCost,
            format!(
                "the run needs an estimated {} bytes on {} threads, over the limit of {}",
                cost.memory, limits.threads, limits.max_memory
            ),
        ));
    }
    Ok(cost)
}

/// Bootstraps any rebuild may build whatever its program states (its
/// whole cost when that is small): about 0.1 s and 30 MiB here.
pub const REBUILD_BASE: u64 = 1 << 14;

/// Bootstraps a rebuild may build per bootstrap its program states, on
/// top of [`REBUILD_BASE`]. Building one costs about 3 µs, running one
/// 20 ms: a rebuild within the limit costs well under the run it states.
/// Measured with every automatic choice made afresh (a new thread, whose
/// choices are not yet remembered): a `u128` product planned for 16
/// threads builds 30 bootstraps per one it keeps (its candidates'
/// scratch circuits), `Int` products 4 to 7, random programs of both
/// families up to 110 with the dead code their outputs do not read. A
/// program whose operations build more than this is refused: its file
/// understates its cost, or most of it is dead code.
pub const REBUILD_PER_PBS: u64 = 128;

/// Bytes any rebuild may allocate (the [`Meter`]'s count, about the rise
/// of the server's peak memory): a program of few bootstraps.
pub const REBUILD_BASE_BYTES: u64 = 24 << 20;

/// Bytes a rebuild may allocate per bootstrap its program states, on top
/// of [`REBUILD_BASE_BYTES`]: 2 KiB per bootstrap it may build, each
/// measured at 1.8 KiB.
pub const REBUILD_BYTES_PER_PBS: u64 = 2048 * REBUILD_PER_PBS;

/// The limits of the rebuild of a program stating `cost` (see
/// [`REBUILD_BASE`], [`REBUILD_PER_PBS`], [`REBUILD_BASE_BYTES`]): its
/// bootstraps and bytes, and a deadline of 2 s plus 20 µs per bootstrap
/// of its limit (several times the measured pace, for a busy machine).
pub fn rebuild_meter(cost: &Cost) -> Meter {
    let bootstraps = REBUILD_BASE.saturating_add(cost.pbs.saturating_mul(REBUILD_PER_PBS));
    let bytes = REBUILD_BASE_BYTES.saturating_add(cost.pbs.saturating_mul(REBUILD_BYTES_PER_PBS));
    let micros = bootstraps.saturating_mul(20);
    let time = Duration::from_secs(2).saturating_add(Duration::from_micros(micros));
    Meter {
        bootstraps,
        bytes,
        deadline: Instant::now().checked_add(time),
    }
}

/// What a rebuild of [`Spent`] work is charged, in bootstraps of the
/// day's limit: one per [`REBUILD_PER_PBS`] it built.
pub fn rebuild_charge(spent: &Spent) -> u64 {
    spent.bootstraps.div_ceil(REBUILD_PER_PBS)
}

/// Rebuilds the program of `parts`, which states `cost`, with every
/// check of the builder, within [`rebuild_meter`]'s limits (a file that
/// understates its cost is refused as soon as its rebuild passes them).
/// The program keeps its circuit only (it is run, never written again).
/// Returns what the rebuild spent either way.
pub fn build_program(
    parts: &JobParts<'_>,
    cost: &Cost,
) -> (Result<CompiledProgram, ApiError>, Spent) {
    let (built, spent) = CompiledProgram::from_bytes_within(
        Path::new("program"),
        parts.program,
        &rebuild_meter(cost),
    );
    let program = match built {
        Ok(p) => p,
        Err(_) if spent.stopped => {
            return (
                Err(ApiError::new(
                    ErrorCode::BadProgram,
                    format!(
                        "program: its rebuild was stopped after {} bootstraps and {} MiB (scratch \
                         builds of automatic choices included), over what a program stating {} \
                         bootstraps may build ({} + {} per stated bootstrap) or past its \
                         deadline: the file understates its cost, or most of its operations are \
                         dead code that no output reads",
                        spent.bootstraps,
                        spent.bytes >> 20,
                        cost.pbs,
                        REBUILD_BASE,
                        REBUILD_PER_PBS
                    ),
                )),
                spent,
            )
        }
        Err(e) => return (Err(file_error(ErrorCode::BadProgram, "program", e)), spent),
    };
    let checked = check_secure(program.circuit().params().params(), "program");
    (checked.map(|()| program.without_source()), spent)
}

/// Checks the bundle of `parts` for `program` as [`read_bundle`] does,
/// without expanding a compact bundle: for admission, where the bundle is
/// not used yet.
pub fn check_bundle(program: &CompiledProgram, parts: &JobParts<'_>) -> Result<(), ApiError> {
    program
        .check_bundle_bytes(Path::new("bundle"), parts.bundle)
        .map_err(|e| file_error(ErrorCode::BadBundle, "bundle", e))
}

/// Decodes the bundle of `parts` for `program`: its entries are checked
/// against the program's inputs before a compact bundle is expanded.
pub fn read_bundle(program: &CompiledProgram, parts: &JobParts<'_>) -> Result<Bundle, ApiError> {
    program
        .bundle_from_bytes(Path::new("bundle"), parts.bundle)
        .map_err(|e| file_error(ErrorCode::BadBundle, "bundle", e))
}

/// Decodes and admits a job body (see the module doc), cheap checks
/// first: the headers ([`split_job`]), the stated cost against `limits`
/// ([`stated_cost`]: [`ErrorCode::OverCost`]), then the program rebuilt
/// ([`ErrorCode::BadProgram`] when it does not build, or not at the cost
/// it states) and the bundle decoded for it ([`ErrorCode::BadBundle`]).
/// CPU-heavy for large programs (bounded): the server calls it off its
/// async threads.
pub fn parse_job(body: &[u8], limits: &Limits) -> Result<JobRequest, ApiError> {
    let parts = split_job(body, limits.max_body)?;
    let cost = stated_cost(&parts, limits)?;
    let program = build_program(&parts, &cost).0?;
    let bundle = read_bundle(&program, &parts)?;
    Ok(JobRequest {
        program,
        bundle,
        pbs: cost.pbs,
        depth: cost.depth,
        memory: cost.memory,
    })
}

/// Checks the header of an uploaded server key (compressed or not) and
/// refuses insecure sets; the key itself is checked when it is loaded.
pub fn check_key_header(bytes: &[u8], max_body: u64) -> Result<FileInfo, ApiError> {
    if bytes.len() as u64 > max_body {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("{} bytes, over the limit of {max_body}", bytes.len()),
        ));
    }
    let info = info_from_bytes(Path::new("server key"), bytes)
        .map_err(|e| file_error(ErrorCode::BadKey, "server key", e))?;
    if !matches!(
        info.kind,
        FileKind::ServerKey | FileKind::CompressedServerKey
    ) {
        return Err(ApiError::new(
            ErrorCode::BadKey,
            format!("a {} file, expected a server key", info.kind.name()),
        ));
    }
    check_secure(info.params.params(), "server key")?;
    let expected = (bytes.len() - HEADER_LEN) as u64;
    if info.payload_len != expected {
        return Err(ApiError::new(
            ErrorCode::BadKey,
            format!(
                "server key: its header states {} payload bytes, {expected} were sent",
                info.payload_len
            ),
        ));
    }
    Ok(info)
}

/// Maps an error from loading a stored or uploaded key.
pub(crate) fn key_error(e: Error) -> ApiError {
    match e {
        Error::File(FileError::Io { .. }) => ApiError::new(ErrorCode::Internal, e.to_string()),
        e => file_error(ErrorCode::BadKey, "server key", e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth::api::U8;
    use hearth::{ClientKey, Program, GATES_128, INSECURE_TEST_BITS};
    use num_bigint::BigInt;

    fn program(params: &'static ParameterSet) -> CompiledProgram {
        let p = Program::new(params);
        let a = U8::input(&p);
        let b = U8::input(&p);
        p.output(&(&a + &b));
        p.build().unwrap()
    }

    fn fixture() -> (Vec<u8>, Vec<u8>, ClientKey) {
        let prog = program(&GATES_128);
        let client = ClientKey::generate(&GATES_128);
        let bundle = client
            .encrypt_bundle(
                &prog.signature().inputs,
                &[vec![BigInt::from(200)], vec![BigInt::from(100)]],
            )
            .unwrap();
        (prog.to_bytes().unwrap(), bundle.to_bytes().unwrap(), client)
    }

    fn code<T: std::fmt::Debug>(r: Result<T, ApiError>) -> ErrorCode {
        r.expect_err("refused").code
    }

    #[test]
    fn a_job_splits_parses_and_is_admitted_by_cost() {
        let (p, b, client) = fixture();
        let body = [p.clone(), b.clone()].concat();
        let parts = split_job(&body, u64::MAX).unwrap();
        assert_eq!(parts.program, &p[..]);
        assert_eq!(parts.bundle, &b[..]);
        assert_eq!(parts.key_id, client.key_id());
        assert_eq!(parts.params.name, "GATES_128");
        let limits = Limits {
            threads: 2,
            ..Limits::default()
        };
        let job = parse_job(&body, &limits).unwrap();
        assert!(job.pbs > 0 && job.depth > 0 && job.depth <= job.pbs);
        assert_eq!(job.memory, job.program.memory_estimate(2));
        assert_eq!(job.bundle.key_id(), client.key_id());

        // Cost limits: one bootstrap fewer, one byte less memory.
        let tight = Limits {
            max_pbs: job.pbs - 1,
            ..limits.clone()
        };
        assert_eq!(code(parse_job(&body, &tight)), ErrorCode::OverCost);
        let tight = Limits {
            max_memory: job.memory - 1,
            ..limits.clone()
        };
        assert_eq!(code(parse_job(&body, &tight)), ErrorCode::OverCost);
        let exact = Limits {
            max_pbs: job.pbs,
            max_memory: job.memory,
            max_body: body.len() as u64,
            ..limits.clone()
        };
        assert!(parse_job(&body, &exact).is_ok());
        let small = Limits {
            max_body: body.len() as u64 - 1,
            ..limits.clone()
        };
        assert_eq!(code(parse_job(&body, &small)), ErrorCode::TooLarge);

        // Truncations: inside the program, right after it, inside the bundle.
        for cut in [0, 10, HEADER_LEN, p.len() - 1] {
            assert_eq!(
                code(split_job(&body[..cut], u64::MAX)),
                ErrorCode::BadProgram
            );
        }
        assert_eq!(
            code(split_job(&body[..p.len()], u64::MAX)),
            ErrorCode::BadBundle
        );
        for cut in [p.len() + 1, p.len() + HEADER_LEN, body.len() - 1] {
            assert_eq!(code(parse_job(&body[..cut], &limits)), ErrorCode::BadBundle);
        }
        // Trailing bytes after the bundle.
        let long = [body.clone(), vec![0]].concat();
        assert_eq!(code(parse_job(&long, &limits)), ErrorCode::BadBundle);
        // The files in the other order, twice the same file.
        assert_eq!(
            code(split_job(&[b.clone(), p.clone()].concat(), u64::MAX)),
            ErrorCode::BadProgram
        );
        assert_eq!(
            code(split_job(&[p.clone(), p.clone()].concat(), u64::MAX)),
            ErrorCode::BadBundle
        );
        // One flipped payload byte: the checksum.
        for at in [HEADER_LEN + 3, p.len() + HEADER_LEN + 3] {
            let mut bad = body.clone();
            bad[at] ^= 1;
            let c = code(parse_job(&bad, &limits));
            assert_eq!(
                c,
                if at < p.len() {
                    ErrorCode::BadProgram
                } else {
                    ErrorCode::BadBundle
                }
            );
        }
        // A payload length that overflows.
        let mut bad = body.clone();
        bad[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(code(split_job(&bad, u64::MAX)), ErrorCode::BadProgram);

        // A bundle for another program (one input instead of two).
        let q = Program::new(&GATES_128);
        let x = U8::input(&q);
        q.output(&(&x + &x));
        let q = q.build().unwrap();
        let one = client
            .encrypt_bundle(&q.signature().inputs, &[vec![BigInt::from(3)]])
            .unwrap()
            .to_bytes()
            .unwrap();
        let body = [p.clone(), one].concat();
        assert_eq!(code(parse_job(&body, &limits)), ErrorCode::BadBundle);
    }

    /// A poor man's fuzzer: random changes to a valid body (header
    /// fields, lengths, single bytes, cuts, splices) are each accepted or
    /// refused with a code, never a panic.
    #[test]
    fn mutated_bodies_are_refused_without_panics() {
        use rand::{Rng, SeedableRng};
        let (p, b, _) = fixture();
        let body = [p.clone(), b.clone()].concat();
        let limits = Limits::default();
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut codes = std::collections::BTreeMap::new();
        for _ in 0..3000 {
            let mut m = body.clone();
            // Mostly the two headers and the program, where the decisions are.
            let hot = [0..HEADER_LEN, p.len()..p.len() + HEADER_LEN, 0..p.len()];
            for _ in 0..rng.gen_range(1..4) {
                match rng.gen_range(0..5) {
                    0 => {
                        let r = hot[rng.gen_range(0..hot.len())].clone();
                        let i = rng.gen_range(r);
                        // An earlier cut may have shortened the body.
                        if let Some(byte) = m.get_mut(i) {
                            *byte = rng.gen();
                        }
                    }
                    1 => {
                        let i = rng.gen_range(0..m.len());
                        m[i] ^= 1 << rng.gen_range(0..8);
                    }
                    2 => m.truncate(rng.gen_range(0..m.len())),
                    3 => {
                        // A length field set to something else.
                        let at = if rng.gen() { 24 } else { p.len() + 24 };
                        if m.len() >= at + 8 {
                            let v: u64 = match rng.gen_range(0..3) {
                                0 => rng.gen(),
                                1 => rng.gen_range(0..1 << 20),
                                _ => u64::MAX - rng.gen_range(0..64),
                            };
                            m[at..at + 8].copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    _ => {
                        let i = rng.gen_range(0..m.len());
                        let junk: Vec<u8> = (0..rng.gen_range(1..64)).map(|_| rng.gen()).collect();
                        m.splice(i..i, junk);
                    }
                }
                if m.is_empty() {
                    break;
                }
            }
            let c = match parse_job(&m, &limits) {
                Ok(_) => "accepted",
                Err(e) => e.code.as_str(),
            };
            *codes.entry(c).or_insert(0) += 1;
        }
        eprintln!("3000 mutated bodies: {codes:?}");
        assert!(
            codes.keys().all(|c| [
                "accepted",
                "bad_program",
                "bad_bundle",
                "insecure_params",
                "too_large"
            ]
            .contains(c)),
            "{codes:?}"
        );
    }

    #[test]
    fn insecure_sets_and_garbage_are_refused() {
        let prog = program(&INSECURE_TEST_BITS);
        let client = ClientKey::generate(&INSECURE_TEST_BITS);
        let bundle = client
            .encrypt_bundle(
                &prog.signature().inputs,
                &[vec![BigInt::from(1)], vec![BigInt::from(2)]],
            )
            .unwrap();
        let body = [prog.to_bytes().unwrap(), bundle.to_bytes().unwrap()].concat();
        assert_eq!(code(split_job(&body, u64::MAX)), ErrorCode::InsecureParams);
        let key = client.compressed_server_key();
        let dir = std::env::temp_dir().join(format!("hearth-server-req-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        key.save(&dir.join("k")).unwrap();
        let key_bytes = std::fs::read(dir.join("k")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            code(check_key_header(&key_bytes, u64::MAX)),
            ErrorCode::InsecureParams
        );
        // Garbage of every length up to two headers, and a program as a key.
        for n in 0..80 {
            let junk: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(code(split_job(&junk, u64::MAX)), ErrorCode::BadProgram);
            assert_eq!(code(check_key_header(&junk, u64::MAX)), ErrorCode::BadKey);
        }
        let p = program(&GATES_128).to_bytes().unwrap();
        assert_eq!(code(check_key_header(&p, u64::MAX)), ErrorCode::BadKey);
        assert_eq!(code(check_key_header(&key_bytes, 10)), ErrorCode::TooLarge);
        // A GATES program with an INSECURE bundle: the bundle is refused.
        let mixed = [p, bundle.to_bytes().unwrap()].concat();
        assert_eq!(code(split_job(&mixed, u64::MAX)), ErrorCode::InsecureParams);
    }
}
