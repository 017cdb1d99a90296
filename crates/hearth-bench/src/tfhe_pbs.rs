//! `hearth bench tfhe-pbs` (build with `--features tfhe-pbs-stats`):
//! tfhe-rs's own bootstrap count for each operation hearth is compared
//! with, from its `pbs-stats` counter, beside hearth's #PBS from the count
//! backend (digits on DIGITS_128, words on GATES_128), all planned for the
//! same thread count.

use std::path::PathBuf;

use crate::catalog::{Inputs, Op as DigitsOp};
use hearth::api::{Program, Word};
use hearth::{Error, DIGITS_128, GATES_128};
use serde_json::json;
use tfhe::prelude::*;
use tfhe::{FheInt16, FheInt32, FheInt8};

use crate::report::{emit, Table};

#[derive(Clone, Copy)]
enum Op {
    Add,
    Sub,
    MulWrapping,
    Max,
    Lt,
    Eq,
    Mul805,
}

impl Op {
    const ALL: [Op; 7] = [
        Op::Add,
        Op::Sub,
        Op::MulWrapping,
        Op::Max,
        Op::Lt,
        Op::Eq,
        Op::Mul805,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Sub => "sub",
            Op::MulWrapping => "mul (wrapping)",
            Op::Max => "max",
            Op::Lt => "lt",
            Op::Eq => "eq",
            Op::Mul805 => "mul by clear 805",
        }
    }

    fn digits(self) -> DigitsOp {
        match self {
            Op::Add => DigitsOp::Add,
            Op::Sub => DigitsOp::Sub,
            Op::MulWrapping => DigitsOp::MulWrapping,
            Op::Max => DigitsOp::Max,
            Op::Lt => DigitsOp::Lt,
            Op::Eq => DigitsOp::Eq,
            Op::Mul805 => DigitsOp::ScalarMul(805),
        }
    }
}

/// tfhe-rs's bootstraps for one operation on `FheIntN`.
macro_rules! count_op {
    ($name:ident, $fhe:ty, $clear:ty) => {
        fn $name(op: Op, ck: &tfhe::ClientKey) -> u64 {
            let a = <$fhe>::encrypt(-5 as $clear, ck);
            let b = <$fhe>::encrypt(3 as $clear, ck);
            tfhe::reset_pbs_count();
            match op {
                Op::Add => drop(&a + &b),
                Op::Sub => drop(&a - &b),
                Op::MulWrapping => drop(&a * &b),
                Op::Max => drop(a.max(&b)),
                Op::Lt => drop(a.lt(&b)),
                Op::Eq => drop(a.eq(&b)),
                Op::Mul805 => drop(&a * (805i32 as $clear)),
            }
            tfhe::get_pbs_count()
        }
    };
}

count_op!(count8, FheInt8, i8);
count_op!(count16, FheInt16, i16);
count_op!(count32, FheInt32, i32);

/// hearth's words (unsigned `Word<n>`) on the count backend.
fn words_pbs(op: Op, n: usize, threads: usize) -> Result<usize, Error> {
    fn build<const B: usize>(op: Op, threads: usize) -> Result<usize, Error> {
        let p = Program::new(&GATES_128);
        p.set_threads(threads);
        let x = Word::<B, true>::input(&p);
        let y = Word::<B, true>::input(&p);
        match op {
            Op::Add => p.output(&(&x + &y)),
            Op::Sub => p.output(&(&x - &y)),
            Op::MulWrapping => p.output(&(&x * &y)),
            Op::Max => p.output(&x.max(&y)),
            Op::Lt => p.output(&x.lt(&y)),
            Op::Eq => p.output(&x.eq(&y)),
            Op::Mul805 => p.output(&(&x * 805i64)),
        }
        Ok(p.build()?.circuit().stats().pbs)
    }
    match n {
        8 => build::<8>(op, threads),
        16 => build::<16>(op, threads),
        _ => build::<32>(op, threads),
    }
}

pub fn tfhe_pbs(threads: usize, bits: &[usize], json: Option<PathBuf>) -> Result<(), Error> {
    if let Some(&n) = bits.iter().find(|&&n| ![8, 16, 32].contains(&n)) {
        return Err(Error::Config(format!(
            "--bits {n}: the count covers 8, 16 and 32"
        )));
    }
    let (ck, pool) = crate::tfhe::tfhe_pool(threads, hearth::backend::Engine::Cpu)?;
    let mut t = Table::new(
        format!(
            "#PBS per operation, {threads} threads: tfhe-rs FheInt (pbs-stats counter, default \
             parameters, ~24 ms per PBS here) beside hearth's digits (DIGITS_128, ~24 ms) and words \
             (GATES_128, ~12 ms) on the count backend"
        ),
        &[
            "op",
            "bits",
            "tfhe-rs FheInt",
            "hearth digits, two's-complement inputs",
            "hearth digits, signed-binary inputs",
            "hearth words (signed)",
        ],
    );
    let mut rows = Vec::new();
    for &n in bits {
        for op in Op::ALL {
            let theirs = pool.install(|| match n {
                8 => count8(op, &ck),
                16 => count16(op, &ck),
                _ => count32(op, &ck),
            });
            let twos = op.digits().program_on(&DIGITS_128, n, Inputs::Twos, None)?;
            let twos = twos.circuit().stats().pbs;
            let prog = op.digits().program(&DIGITS_128, n)?;
            let digits = prog.circuit().stats().pbs;
            let words = words_pbs(op, n, threads)?;
            t.row(vec![
                op.name().into(),
                n.to_string(),
                theirs.to_string(),
                twos.to_string(),
                digits.to_string(),
                words.to_string(),
            ]);
            rows.push(json!({"op": op.name(), "bits": n, "tfhe_rs": theirs, "digits_twos": twos, "digits": digits, "words": words}));
        }
    }
    emit(
        json.as_deref(),
        &json!({"bench": "tfhe-pbs", "threads": threads, "rows": rows}),
        &[t],
    )
}
