//! `hearth bench kernels`: the CSA paper's kernels (16-bit dot products of
//! 16 / 32 / 64 elements, 5x5 and 7x7 convolutions) as whole circuits:
//! #PBS and depth on the count backend, time on the cpu backend, and in
//! the same run tfhe-rs `FheUint16` computing the same dot product its
//! fastest way (all products in parallel, then a parallel sum).

use std::path::PathBuf;

use clap::ValueEnum;
use hearth::api::{CompiledProgram, Program, U16};
use hearth::kernels::{self, ConvOrder, Padding, Tensor, Weights};
use hearth::{Error, ParameterSet, DIGITS_128, GATES_128};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::report::{emit, Table};

#[cfg(feature = "tfhe-rs")]
mod timed;

/// One benchmark case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Case {
    Dot16,
    Dot32,
    Dot64,
    Conv5,
    Conv7,
}

impl Case {
    const ALL: [Case; 5] = [
        Case::Dot16,
        Case::Dot32,
        Case::Dot64,
        Case::Conv5,
        Case::Conv7,
    ];

    fn name(self) -> String {
        match self {
            Case::Dot16 | Case::Dot32 | Case::Dot64 => format!("dot16 x{}", self.elements()),
            Case::Conv5 | Case::Conv7 => {
                let k = self.kernel();
                format!("conv {k}x{k} on 8x8")
            }
        }
    }

    fn elements(self) -> usize {
        match self {
            Case::Dot16 => 16,
            Case::Dot32 => 32,
            Case::Dot64 => 64,
            Case::Conv5 | Case::Conv7 => 64,
        }
    }

    fn kernel(self) -> usize {
        match self {
            Case::Conv7 => 7,
            _ => 5,
        }
    }

    fn is_dot(self) -> bool {
        matches!(self, Case::Dot16 | Case::Dot32 | Case::Dot64)
    }
}

/// Encrypted weights, or clear ones (a model the server holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Encrypted,
    Clear,
}

/// `build` on a fresh program on `params`, planned for `threads`.
fn compile(
    params: &'static ParameterSet,
    threads: usize,
    build: impl FnOnce(&Program) -> Result<(), Error>,
) -> Result<CompiledProgram, Error> {
    let p = Program::new(params);
    p.set_threads(threads);
    build(&p)?;
    p.build()
}

/// The case on 16-bit words (wrapping, as `FheUint16`): inputs first, then
/// encrypted weights; `w` are the clear weights when `form` is clear.
fn words_program(
    case: Case,
    form: Form,
    w: &[i64],
    threads: usize,
) -> Result<CompiledProgram, Error> {
    compile(&GATES_128, threads, |p| build(p, case, form, w, U16::input))
}

/// The same on exact 16-digit `Int`s (DIGITS_128).
fn ints_program(
    case: Case,
    form: Form,
    w: &[i64],
    threads: usize,
) -> Result<CompiledProgram, Error> {
    compile(&DIGITS_128, threads, |p| {
        build(p, case, form, w, |p| p.input(16))
    })
}

fn build<'p, E: kernels::Element<'p>>(
    p: &'p Program,
    case: Case,
    form: Form,
    w: &[i64],
    input: impl Fn(&'p Program) -> E,
) -> Result<(), Error> {
    let n = case.elements();
    let x = Tensor::new(&[n], (0..n).map(|_| input(p)).collect())?;
    let outs = if case.is_dot() {
        let y = match form {
            Form::Encrypted => {
                let y = Tensor::new(&[n], (0..n).map(|_| input(p)).collect())?;
                kernels::dot(p, &x, &y)?
            }
            Form::Clear => {
                kernels::dot_clear(p, &x, &Tensor::from_i64(&[n], w)?, &BigInt::from(0))?
            }
        };
        vec![y]
    } else {
        let k = case.kernel();
        let x = x.reshape(&[1, 8, 8])?;
        let enc;
        let clear;
        let weights = match form {
            Form::Encrypted => {
                enc = Tensor::new(&[1, 1, k, k], (0..k * k).map(|_| input(p)).collect())?;
                Weights::Encrypted(&enc)
            }
            Form::Clear => {
                clear = Tensor::from_i64(&[1, 1, k, k], w)?;
                Weights::Clear(&clear)
            }
        };
        kernels::conv2d(p, &x, &weights, None, 1, Padding(0), ConvOrder::PerOutput)?.into_data()
    };
    for o in &outs {
        p.output(o);
    }
    Ok(())
}

/// Clear weights of the case: 8-bit signed, fixed seed.
fn clear_weights(case: Case) -> Vec<i64> {
    let n = if case.is_dot() {
        case.elements()
    } else {
        case.kernel().pow(2)
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    (0..n).map(|_| rng.gen_range(-127..=127)).collect()
}

pub fn kernels(
    engine: Option<hearth::backend::Engine>,
    threads: usize,
    cases: &[Case],
    json: Option<PathBuf>,
) -> Result<(), Error> {
    let cases = if cases.is_empty() {
        &Case::ALL[..]
    } else {
        cases
    };
    let mut t = Table::new(
        format!("Kernels on the count backend, planned for {threads} threads"),
        &[
            "kernel",
            "weights",
            "family",
            "#PBS",
            "depth",
            "peak live ciphertexts",
        ],
    );
    let mut rows = Vec::new();
    for &case in cases {
        for form in [Form::Encrypted, Form::Clear] {
            let w = clear_weights(case);
            for (family, prog) in [
                (
                    "U16 words (GATES_128)",
                    words_program(case, form, &w, threads)?,
                ),
                (
                    "Int 16 digits (DIGITS_128)",
                    ints_program(case, form, &w, threads)?,
                ),
            ] {
                let st = prog.circuit().stats();
                t.row(vec![
                    case.name(),
                    format!("{form:?}").to_lowercase(),
                    family.into(),
                    st.pbs.to_string(),
                    st.depth.to_string(),
                    st.peak_live.to_string(),
                ]);
                rows.push(
                    json!({"kernel": case.name(), "weights": format!("{form:?}").to_lowercase(),
                    "family": family, "pbs": st.pbs, "depth": st.depth, "peak_live": st.peak_live}),
                );
            }
        }
    }
    t.note(
        "Words wrap to 16 bits like FheUint16; Ints are exact (the sum of 16-bit products needs 32+ \
         digits). Clear weights are 8-bit signed (seed 3): shifted copies of the inputs, no product \
         bootstraps. Convolutions: one input channel, valid padding, stride 1.",
    );
    let (timed_table, encrypted_rows) = match engine {
        None => (None, Vec::<serde_json::Value>::new()),
        #[cfg(feature = "tfhe-rs")]
        Some(engine) => {
            let (t, r) = timed::encrypted(engine, threads, cases)?;
            (Some(t), r)
        }
        #[cfg(not(feature = "tfhe-rs"))]
        Some(_) => return Err(crate::tfhe::missing()),
    };
    let tables: Vec<Table> = std::iter::once(t).chain(timed_table).collect();
    emit(
        json.as_deref(),
        &json!({"threads": threads, "count": rows, "encrypted": encrypted_rows}),
        &tables,
    )
}
