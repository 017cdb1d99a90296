//! Program files and bundles: random composed programs of both families
//! survive a round trip (the loaded program gives the reference values on
//! the clear backend), signatures group inputs into tensors, bundles run
//! encrypted, and forged or damaged files are typed errors.

use std::path::{Path, PathBuf};

use hearth::api::ops::{IntOp, Op, ValueId, WordOp};
use hearth::api::{U16, U32};
use hearth::backend::{ClearBackend, CpuBackend};
use hearth::crypto::files::reseal;
use hearth::{
    Bundle, ClientKey, CompiledProgram, Error, FileError, Param, Program, Shape, Signature, Stats,
    GATES_128, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS,
};
use hearth_testkit::programs::{check_outputs, Limits, ProgramSpec};
use hearth_testkit::word_programs::WordSpec;
use num_bigint::BigInt;
use rand::SeedableRng;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-progfiles-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn reloaded(prog: &CompiledProgram) -> Result<CompiledProgram, Error> {
    let bytes = prog.to_bytes()?;
    CompiledProgram::from_bytes(Path::new("<test>"), &bytes)
}

#[test]
fn random_digit_programs_survive_a_round_trip() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(23);
    let params = &INSECURE_TEST_DIGITS;
    let fails = |spec: &ProgramSpec| -> Option<String> {
        let (prog, expected) = match spec.build(params) {
            Ok(built) => built,
            Err(_) => return None, // refused by the builder: nothing to save
        };
        let loaded = match reloaded(&prog) {
            Ok(p) => p,
            Err(e) => return Some(format!("reload: {e}")),
        };
        if loaded.circuit().stats() != prog.circuit().stats() {
            return Some("stats differ".into());
        }
        let out = loaded
            .run(&ClearBackend, &spec.clear_inputs(params))
            .map_err(|e| e.to_string());
        match out {
            Ok(out) => check_outputs(params, &out, &expected)
                .err()
                .map(|e| e.to_string()),
            Err(e) => Some(e),
        }
    };
    for i in 0..300 {
        let spec = ProgramSpec::random(&mut rng, &Limits::small());
        if let Some(e) = fails(&spec) {
            let small = spec.shrink(|s| fails(s).is_some());
            panic!("program {i}: {e}\n{spec}\nshrunk:\n{small}");
        }
    }
}

#[test]
fn random_word_programs_survive_a_round_trip() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(24);
    let params = &INSECURE_TEST_BITS;
    for i in 0..150 {
        let spec = WordSpec::random(&mut rng, 6);
        let prog = spec.build(params, 2).unwrap();
        let loaded = reloaded(&prog).unwrap_or_else(|e| panic!("program {i}: {e}\n{spec}"));
        assert_eq!(loaded.circuit().stats(), prog.circuit().stats());
        assert_eq!(loaded.output_shapes(), prog.output_shapes());
        // The same circuit: equal outputs on the clear backend for random inputs.
        let ins: Vec<Vec<u64>> = prog
            .input_shapes()
            .iter()
            .map(|s| (0..s.len()).map(|j| ((i + j) % 2) as u64 * 2).collect())
            .collect();
        assert_eq!(
            loaded.run(&ClearBackend, &ins).unwrap(),
            prog.run(&ClearBackend, &ins).unwrap(),
            "program {i}\n{spec}"
        );
    }
}

/// `x: [2, 3]` integers of 4 digits, `k` one integer; outputs the row sums
/// `s: [2]` and `k * x[0][0]`.
fn tensor_program() -> CompiledProgram {
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let x: Vec<_> = (0..6).map(|_| p.input(4)).collect();
    let k = p.input(4);
    for row in x.chunks(3) {
        p.output(&hearth::Int::sum(&p, row));
    }
    p.output(&(&k * &x[0]));
    p.build()
        .unwrap()
        .with_signature(&[("x", &[2, 3]), ("k", &[])], &[("s", &[2]), ("kx", &[])])
        .unwrap()
}

#[test]
fn signatures_group_inputs_into_tensors() {
    let prog = tensor_program();
    let sig = prog.signature();
    assert_eq!(
        sig.inputs[0],
        Param::new("x", Shape::Int { digits: 4 }, &[2, 3])
    );
    assert_eq!(sig.outputs.len(), 2);
    assert_eq!(reloaded(&prog).unwrap().signature(), sig);

    let again = || {
        let p = Program::new(&INSECURE_TEST_DIGITS);
        let a = p.input(4);
        let b = p.input(5);
        p.output(&(&a + &b));
        p.build().unwrap()
    };
    // Mixed shapes in one tensor, too few or too many values, two names alike.
    for (ins, outs) in [
        (&[("ab", &[2][..])][..], &[("y", &[][..])][..]),
        (&[("a", &[]), ("b", &[2])], &[("y", &[])]),
        (&[("a", &[])], &[("y", &[])]),
        (&[("a", &[]), ("a", &[])], &[("y", &[])]),
        (&[("a", &[]), ("b", &[])], &[("y", &[usize::MAX, 2])]),
    ] {
        let e = again().with_signature(ins, outs).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Dimensions(_) | Error::ShapeMismatch { .. } | Error::TooLarge { .. }
            ),
            "{ins:?} {outs:?}: {e:?}"
        );
    }
    assert!(again()
        .with_signature(&[("a", &[]), ("b", &[1])], &[("y", &[1, 1])])
        .is_ok());
}

#[test]
fn bundles_run_encrypted_and_refuse_what_does_not_fit() {
    let d = dir("bundle");
    let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let server = client.server_key();
    let prog = tensor_program();
    prog.save(&d.join("p.hprog")).unwrap();
    let prog = CompiledProgram::load(&d.join("p.hprog")).unwrap();
    let x: Vec<i64> = vec![3, -7, 5, 15, -15, 2];
    let k = -6i64;
    let big = |v: &[i64]| v.iter().map(|&v| BigInt::from(v)).collect::<Vec<_>>();
    let bundle = client
        .encrypt_bundle(&prog.signature().inputs, &[big(&x), big(&[k])])
        .unwrap();
    bundle.save(&d.join("in.hb")).unwrap();
    // Compact: 7 values of 4 digits, one 64-bit body each plus the seed,
    // the params and the header (a full ciphertext alone is larger).
    let size = std::fs::metadata(d.join("in.hb")).unwrap().len();
    let full_ct = 8 * (INSECURE_TEST_DIGITS.big_lwe_dimension().0 as u64 + 1);
    assert!(size < 28 * 8 + 400 && size < full_ct, "{size} bytes");
    let reread = Bundle::load(&d.join("in.hb")).unwrap();
    assert_eq!(reread, bundle);
    let bundle = reread;
    let cpu = CpuBackend::new(&server, Some(2)).unwrap();
    let out = prog.run_bundle(&cpu, &bundle).unwrap();
    out.save(&d.join("out.hb")).unwrap();
    let got = client
        .decrypt_bundle(&Bundle::load(&d.join("out.hb")).unwrap())
        .unwrap();
    assert_eq!(got[0].0.name, "s");
    let rows = [x[0] + x[1] + x[2], x[3] + x[4] + x[5]];
    assert_eq!(got[0].1, big(&rows));
    assert_eq!(got[1].1, big(&[k * x[0]]));

    // Another key: refused by the backend before anything runs.
    let other = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let foreign = other
        .encrypt_bundle(&prog.signature().inputs, &[big(&x), big(&[k])])
        .unwrap();
    assert!(matches!(
        prog.run_bundle(&cpu, &foreign),
        Err(Error::WrongKey { .. })
    ));
    assert!(matches!(
        other.decrypt_bundle(&out),
        Err(Error::WrongKey { .. })
    ));
    // Another signature: the inputs in another order, or a value too few.
    let swapped = vec![
        prog.signature().inputs[1].clone(),
        prog.signature().inputs[0].clone(),
    ];
    let wrong = client
        .encrypt_bundle(&swapped, &[big(&[k]), big(&x)])
        .unwrap();
    assert!(matches!(
        prog.run_bundle(&cpu, &wrong),
        Err(Error::Dimensions(_))
    ));
    assert!(client
        .encrypt_bundle(&prog.signature().inputs, &[big(&x[..5]), big(&[k])])
        .is_err());
    // A value that does not fit its shape.
    assert!(client
        .encrypt_bundle(&prog.signature().inputs, &[big(&x), big(&[16])])
        .is_err());
    // A bundle of the other family's parameters.
    let bits_client = ClientKey::generate(&INSECURE_TEST_BITS);
    let bits = bits_client
        .encrypt_bundle(&prog.signature().inputs, &[big(&x), big(&[k])])
        .unwrap();
    assert!(matches!(
        prog.run_bundle(&cpu, &bits),
        Err(Error::ParamsMismatch { .. })
    ));
    // A bundle file read as a program, and truncated bundles.
    assert!(matches!(
        CompiledProgram::load(&d.join("in.hb")),
        Err(Error::File(FileError::WrongKind { .. }))
    ));
    let bytes = std::fs::read(d.join("in.hb")).unwrap();
    // Another seed (CRC fixed): the masks differ, so the digits decrypt to
    // noise, refused as not digits or decrypting to wrong values. (One
    // output alone may come out right by chance: -18 is about 1% of the
    // products of two random 4-digit values; all three, about 10^-5.)
    let mut forged = bytes.clone();
    let seed_at = forged.len() - 28 * 8 - 8 - 16;
    forged[seed_at] ^= 1;
    reseal(&mut forged);
    let wrong = Bundle::from_bytes(Path::new("forged"), &forged).unwrap();
    let prog_out = prog
        .run_bundle(&cpu, &wrong)
        .and_then(|o| client.decrypt_bundle(&o));
    assert!(prog_out.map_or(true, |v| v[0].1 != big(&rows) || v[1].1 != big(&[k * x[0]])));
    for cut in [0, 10, 36, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            matches!(
                Bundle::from_bytes(Path::new("cut"), &bytes[..cut]),
                Err(Error::File(_))
            ),
            "cut at {cut}"
        );
    }
}

#[test]
fn a_word_program_file_runs_on_real_parameters() {
    let (client, server) = hearth_testkit::keys::keys(&GATES_128);
    let p = Program::new(&GATES_128);
    let a = U16::input(&p);
    let b = U16::input(&p);
    p.output(&(&(&a ^ &b) + &a.rotate_left(7)));
    let prog = reloaded(&p.build().unwrap()).unwrap();
    let (x, y) = (0xBEEFu16, 0x4567u16);
    let bundle = client
        .encrypt_bundle(&prog.signature().inputs, &[vec![x.into()], vec![y.into()]])
        .unwrap();
    let cpu = CpuBackend::new(server, None).unwrap();
    let out = client
        .decrypt_bundle(&prog.run_bundle(&cpu, &bundle).unwrap())
        .unwrap();
    assert_eq!(
        out[0].1,
        vec![BigInt::from((x ^ y).wrapping_add(x.rotate_left(7)))]
    );
}

// ------------------------------------------------------------------ forgery

/// The payload layout of a program file, written by hand as a forger
/// would.
#[derive(serde::Serialize)]
struct Forged {
    threads: usize,
    signature: Signature,
    stats: Stats,
    ops: Vec<Op>,
    outputs: Vec<ValueId>,
}

/// A program file of `params` id `id` holding `payload`, with a right CRC.
fn forge(id: u16, payload: &Forged) -> Vec<u8> {
    use bincode::Options;
    let body = bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .serialize(payload)
        .unwrap();
    let mut bytes = b"HEARTH\0\n".to_vec();
    bytes.extend_from_slice(&hearth::crypto::files::PROGRAM_FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&5u16.to_le_bytes());
    bytes.extend_from_slice(&id.to_le_bytes());
    bytes.extend_from_slice(&0u16.to_le_bytes());
    bytes.extend_from_slice(&0u64.to_le_bytes());
    // Length and checksum, then made to match the body.
    bytes.extend_from_slice(&[0; 12]);
    bytes.extend_from_slice(&body);
    reseal(&mut bytes);
    bytes
}

#[test]
fn forged_programs_are_typed_errors() {
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let a = p.input(4);
    let b = p.input(4);
    p.output(&(&a * &b));
    let prog = p.build().unwrap();
    let id = prog.circuit().params().to_u16();
    let int4 = Shape::Int { digits: 4 };
    let honest = || Forged {
        threads: 2,
        ops: vec![
            Op::PlanThreads(2),
            Op::Input(int4),
            Op::Input(int4),
            IntOp::Mul(ValueId(0), ValueId(1)).into(),
        ],
        outputs: vec![ValueId(2)],
        signature: prog.signature().clone(),
        stats: prog.circuit().stats(),
    };
    let load = |f: &Forged| CompiledProgram::from_bytes(Path::new("forged"), &forge(id, f));
    // The honest file loads (the forger's layout is the real one)...
    let ok = load(&honest());
    assert!(ok.is_ok(), "{:?}", ok.err());
    // ...and every change below is refused with a typed error.
    type Change = Box<dyn Fn(&mut Forged)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "a value read before it is made",
            Box::new(|f| f.ops[3] = IntOp::Mul(ValueId(0), ValueId(7)).into()),
        ),
        ("a custom op", Box::new(|f| f.ops.push(Op::Custom))),
        (
            "a word op on digit parameters",
            Box::new(|f| f.ops.push(WordOp::Not(ValueId(0)).into())),
        ),
        (
            "a word input on digit parameters",
            Box::new(|f| {
                f.ops.push(Op::Input(Shape::Word {
                    bits: 8,
                    signed: false,
                }))
            }),
        ),
        (
            "an output never made",
            Box::new(|f| f.outputs = vec![ValueId(9)]),
        ),
        ("a stated cost that differs", Box::new(|f| f.stats.pbs += 1)),
        (
            "a stated depth that differs",
            Box::new(|f| f.stats.depth = 0),
        ),
        (
            "a signature over too many inputs",
            Box::new(|f| f.signature.inputs[0].dims = vec![3]),
        ),
        (
            "a signature of another shape",
            Box::new(|f| f.signature.inputs[0].shape = Shape::Int { digits: 5 }),
        ),
        (
            "an overflowing tensor",
            Box::new(|f| f.signature.outputs[0].dims = vec![usize::MAX, 4]),
        ),
        (
            "an enormous shift",
            Box::new(|f| f.ops.push(IntOp::Shl(ValueId(0), usize::MAX).into())),
        ),
        (
            "an enormous input",
            Box::new(|f| f.ops.push(Op::Input(Shape::Int { digits: usize::MAX }))),
        ),
        (
            "an enormous constant",
            Box::new(|f| f.ops.push(IntOp::Const(BigInt::from(1) << 100_000).into())),
        ),
    ];
    for (what, change) in cases {
        let mut f = honest();
        change(&mut f);
        match load(&f) {
            Err(Error::File(FileError::Inconsistent { reason, .. })) => {
                eprintln!("{what}: {reason}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    // A file whose header names a word parameter set.
    let bits_id = INSECURE_TEST_BITS.id.to_u16();
    assert!(CompiledProgram::from_bytes(Path::new("f"), &forge(bits_id, &honest())).is_err());
    // Bytes changed after the CRC: corrupted.
    let mut bytes = forge(id, &honest());
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    assert!(matches!(
        CompiledProgram::from_bytes(Path::new("f"), &bytes),
        Err(Error::File(FileError::Corrupted { .. }))
    ));
    // Random payloads with a right CRC never panic.
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let good = forge(id, &honest());
    for _ in 0..2000 {
        use rand::Rng;
        let mut body = good[36..].to_vec();
        for _ in 0..rng.gen_range(1..4) {
            let i = rng.gen_range(0..body.len());
            body[i] = rng.gen();
        }
        let mut bytes = good[..36].to_vec();
        bytes.extend_from_slice(&body);
        reseal(&mut bytes);
        let _ = CompiledProgram::from_bytes(Path::new("f"), &bytes);
    }
}

#[test]
fn custom_ops_cannot_be_saved() {
    let p = Program::new(&INSECURE_TEST_BITS);
    let a = U32::input(&p);
    let b = U32::from_circuit(&p, |_b| Ok(a.bits().clone()));
    p.output(&b);
    let prog = p.build().unwrap();
    assert!(matches!(prog.to_bytes(), Err(Error::Config(_))));
}

/// A program planned for many threads is also built as planned for few
/// (and for more): T2's Jenkins step at 16 threads picks prefix adders op
/// by op, which leave the whole program deeper and wider than the
/// ripples of the 2-thread plan, so the 2-thread circuit is kept. It runs
/// exactly, and its file rebuilds to the same circuit.
#[test]
fn many_thread_programs_keep_the_fastest_whole_plan() {
    let build = |threads: usize| {
        let p = Program::new(&hearth::DIGITS_KS32_128);
        p.set_threads(threads);
        let keys = [U32::input(&p), U32::input(&p)];
        let mut h = U32::constant(&p, 0);
        for k in &keys {
            h = &h + k;
            h = &h + &(&(&h << 26) >> 16);
            h = &h ^ &(&h >> 6);
        }
        p.output(&h);
        p.build().unwrap()
    };
    let (few, many) = (build(2), build(16));
    let (a, b) = (few.circuit(), many.circuit());
    assert!(
        b.time_on(16) <= a.time_on(16),
        "16-thread plan {} / {}, 2-thread plan {} / {} (time on 16: {} vs {})",
        b.stats().pbs,
        b.stats().depth,
        a.stats().pbs,
        a.stats().depth,
        b.time_on(16),
        a.time_on(16)
    );
    assert!(b.stats().pbs <= a.stats().pbs + a.stats().pbs / 4);
    let loaded = reloaded(&many).unwrap();
    assert_eq!(loaded.circuit().stats(), many.circuit().stats());
    let reference = |x: u32, y: u32| {
        let mut h = 0u32;
        for k in [x, y] {
            h = h.wrapping_add(k);
            h = h.wrapping_add((h << 26) >> 16);
            h ^= h >> 6;
        }
        h
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(61);
    for _ in 0..200 {
        let (x, y): (u32, u32) = (rand::Rng::gen(&mut rng), rand::Rng::gen(&mut rng));
        let inputs = [
            hearth::api::clear_word(x, 32, false).unwrap(),
            hearth::api::clear_word(y, 32, false).unwrap(),
        ];
        for prog in [&many, &loaded] {
            let out = prog.run(&ClearBackend, &inputs).unwrap();
            assert_eq!(
                hearth::api::clear_word_value(&out[0], false).unwrap(),
                reference(x, y).into()
            );
        }
    }
}
