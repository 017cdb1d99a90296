//! The entry for front ends (the Python package): ops given as data by id,
//! typed handles taken back from ids, `CompiledProgram::run_clear`, and a
//! cancelled encrypted run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hearth::api::ops::{IntOp, Op, ValueId};
use hearth::api::U8;
use hearth::backend::CpuBackend;
use hearth::{
    Bool, ClientKey, Comparison, Error, Int, Program, Shape, INSECURE_TEST_BITS,
    INSECURE_TEST_DIGITS,
};
use num_bigint::BigInt;

fn ints(v: &[i64]) -> Vec<BigInt> {
    v.iter().map(|&x| BigInt::from(x)).collect()
}

/// `x * y - 3` and `x < y` on ints pushed by id, against Rust's integers
/// for every pair of 4-digit inputs' corners and a spread inside.
#[test]
fn ops_by_id_give_rust_arithmetic() {
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let x = p.push(Op::Input(Shape::Int { digits: 4 })).unwrap()[0];
    let y = p.push(Op::Input(Shape::Int { digits: 4 })).unwrap()[0];
    let xy = p.push(IntOp::Mul(x, y)).unwrap()[0];
    let out = p.push(IntOp::AddConst(xy, BigInt::from(-3))).unwrap()[0];
    let lt = p.push(IntOp::Compare(x, y, Comparison::Lt)).unwrap()[0];
    assert_eq!(p.shape_of(x), Some(Shape::Int { digits: 4 }));
    assert_eq!(p.shape_of(ValueId(9999)), None);
    // A typed handle from an id joins the typed API.
    let twice = &Int::from_id(&p, out).unwrap() * 2;
    p.output_value(out).unwrap();
    p.output_value(lt).unwrap();
    p.output(&twice);
    let prog = p.build().unwrap();
    for a in [-15i64, -8, -1, 0, 1, 7, 15] {
        for b in [-15i64, -4, 0, 3, 15] {
            let got = prog.run_clear(&[ints(&[a]), ints(&[b])]).unwrap();
            let want = vec![
                ints(&[a * b - 3]),
                ints(&[(a < b) as i64]),
                ints(&[2 * (a * b - 3)]),
            ];
            assert_eq!(got, want, "{a}, {b}");
        }
    }
    // Out of the inputs' range, or the wrong count: typed errors.
    assert!(prog.run_clear(&[ints(&[16]), ints(&[0])]).is_err());
    assert!(matches!(
        prog.run_clear(&[ints(&[1])]),
        Err(Error::InputCount { .. })
    ));
}

#[test]
fn bad_ids_are_errors_and_end_the_program() {
    let p = Program::new(&INSECURE_TEST_BITS);
    let a = p
        .push(Op::Input(Shape::Word {
            bits: 8,
            signed: false,
        }))
        .unwrap()[0];
    // Of another type: a typed error, not a panic.
    assert!(matches!(
        hearth::api::I8::from_id(&p, a),
        Err(Error::ShapeMismatch { .. })
    ));
    assert!(Bool::from_id(&p, a).is_err());
    assert!(U8::from_id(&p, a).is_ok());
    // An id the program never made.
    assert!(p.push(IntOp::Neg(ValueId(4242))).is_err());
    // The program then builds nothing more.
    let again = p.push(Op::Input(Shape::Word {
        bits: 8,
        signed: false,
    }));
    assert!(matches!(again, Err(Error::Config(m)) if m.contains("earlier error")));
    assert!(p.output_value(a).is_err());
    assert!(p.build().is_err());
}

/// A flag set after the first bootstrap stops the run: `Cancelled` with
/// fewer bootstraps done than the circuit has.
#[test]
fn a_cancelled_cpu_run_stops_early() {
    let client = ClientKey::generate(&INSECURE_TEST_DIGITS);
    let server = client.server_key();
    let p = Program::new(&INSECURE_TEST_DIGITS);
    let xs: Vec<Int> = (0..6).map(|_| p.input(6)).collect();
    let mut acc = xs[0].clone();
    for x in &xs[1..] {
        acc = &acc * x;
    }
    p.output(&acc);
    let prog = p.build().unwrap();
    let total = prog.circuit().stats().pbs;
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let cpu = CpuBackend::new(&server, Some(1))
        .unwrap()
        .with_progress(move |_, _| f.store(true, Ordering::Relaxed))
        .with_cancel(flag);
    let inputs: Vec<_> = (1..=6)
        .map(|v| client.encrypt_int(v, 6).unwrap().ciphertexts().to_vec())
        .collect();
    match prog.run(&cpu, &inputs) {
        Err(Error::Cancelled { done, total: t }) => {
            assert_eq!(t, total);
            assert!(done >= 1 && done < total, "{done} of {total}");
        }
        other => panic!("expected Cancelled, got {:?}", other.map(|_| ())),
    }
}
