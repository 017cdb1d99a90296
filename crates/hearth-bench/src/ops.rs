//! `hearth bench ops`: the digits operations on the count backend beside
//! PARMESAN, or encrypted beside tfhe-rs's `FheInt` on the same threads.

use crate::catalog::{Inputs, Op};
use hearth::{Error, ParameterSet, DIGITS_128};
use serde_json::json;

use crate::plot::PlotOut;
use crate::report::JsonOut;
use crate::report::{emit, Table};
use hearth::backend::Engine;

#[cfg(feature = "tfhe-rs")]
mod timed;

/// Where `bench ops` (and `kernels`, `programs`) evaluates: the count
/// backend, or encrypted on one of the library's engines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpsBackend {
    /// #PBS, depth and widest level only (no keys, no time).
    Count,
    /// Encrypted and timed beside tfhe-rs: on the CPU (`cpu`), or on the
    /// gpu backend beside tfhe-rs's CUDA integer API (`CudaServerKey`) in
    /// the same run (`gpu`; builds with the `gpu` feature). Not mpi.
    Encrypted(Engine),
}

impl OpsBackend {
    /// `--backend count|cpu|gpu` (the possible values listed in `--help`
    /// and in clap's error).
    pub fn parser() -> impl clap::builder::TypedValueParser<Value = OpsBackend> {
        use clap::builder::TypedValueParser;
        clap::builder::PossibleValuesParser::new(["count", "cpu", "gpu"]).map(|s| {
            match s.as_str() {
                "count" => OpsBackend::Count,
                engine => {
                    OpsBackend::Encrypted(engine.parse().expect("one of the possible values"))
                }
            }
        })
    }

    /// Where the encrypted comparison runs (`None`: count only).
    pub fn engine(self) -> Option<Engine> {
        match self {
            OpsBackend::Count => None,
            OpsBackend::Encrypted(engine) => Some(engine),
        }
    }
}

/// How the timed operands are encrypted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InputsArg {
    /// `n`-bit two's complement (`Program::input_twos`), like `FheInt`.
    Twos,
    /// `n` signed-binary digits (`Program::input`), like PARMESAN.
    SignedBinary,
}

impl From<InputsArg> for Inputs {
    fn from(a: InputsArg) -> Inputs {
        match a {
            InputsArg::Twos => Inputs::Twos,
            InputsArg::SignedBinary => Inputs::SignedBinary,
        }
    }
}

/// What `hearth-bench ops --family int` measures.
pub struct Ints<'a> {
    /// Operand sizes.
    pub bits: &'a [usize],
    /// The operations (`--ops`).
    pub only: &'a [Op],
    /// How the timed operands are encrypted.
    pub inputs: InputsArg,
    /// The set the timed comparison runs on.
    pub params: &'static ParameterSet,
}

pub fn ops(
    backend: OpsBackend,
    timing: Timing,
    ints: Ints<'_>,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    match backend {
        OpsBackend::Count => count(timing.threads, ints.bits, ints.only, json, plot),
        #[cfg(feature = "tfhe-rs")]
        OpsBackend::Encrypted(_) => timed::encrypted(timing, ints, json, plot),
        #[cfg(not(feature = "tfhe-rs"))]
        OpsBackend::Encrypted(_) => Err(crate::tfhe::missing()),
    }
}

/// The operations whose level profiles `bench ops --backend count --plot`
/// draws: a chain (add), a selection (max), a wrapping and an exact
/// product.
const PROFILED: [Op; 4] = [Op::Add, Op::Max, Op::MulWrapping, Op::Mul];

fn count(
    threads: usize,
    bits: &[usize],
    only: &[Op],
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    let mut t = Table::new(
        format!(
            "DIGITS_128 on the count backend, beside PARMESAN (Table 5; `f` = from its cost \
             formulas); two's-complement inputs planned for {threads} threads"
        ),
        &[
            "op",
            "bits",
            "depth",
            "#PBS",
            "widest level",
            "two's-complement inputs: depth",
            "#PBS",
            "time on T (PBS)",
            "PARMESAN depth",
            "PARMESAN #PBS",
            "PARMESAN threads",
            "<= PARMESAN",
        ],
    );
    let mut rows = Vec::new();
    for op in Op::ALL
        .into_iter()
        .filter(|op| only.is_empty() || only.contains(op))
    {
        for &n in bits {
            let st = op.program(&DIGITS_128, n)?.circuit().stats();
            let twos = op.program_on(&DIGITS_128, n, Inputs::Twos, Some(threads))?;
            let tw = twos.circuit().stats();
            let tw_time = twos.circuit().time_on(threads) as f64 / 100.0;
            let r = op.parmesan(n);
            let (rd, rp, rt, ok) = match r {
                Some(r) => {
                    let mark = if r.table { "" } else { " f" };
                    (
                        format!("{}{mark}", r.depth),
                        format!("{}{mark}", r.pbs),
                        r.threads.map_or("-".into(), |t| t.to_string()),
                        if st.depth <= r.depth && st.pbs <= r.pbs {
                            "yes"
                        } else {
                            "NO"
                        }
                        .to_string(),
                    )
                }
                None => ("-".into(), "-".into(), "-".into(), "-".into()),
            };
            t.row(vec![
                op.name(),
                n.to_string(),
                st.depth.to_string(),
                st.pbs.to_string(),
                st.max_width().to_string(),
                tw.depth.to_string(),
                tw.pbs.to_string(),
                format!("{tw_time:.2}"),
                rd,
                rp,
                rt,
                ok,
            ]);
            rows.push(json!({"op": op.name(), "bits": n, "stats": st, "twos": tw,
                "twos_time_on_threads": tw_time, "parmesan": r}));
        }
    }
    emit(
        json.json.as_deref(),
        &json!({"bench": "ops", "backend": "count", "threads": threads, "rows": rows}),
        &[t],
    )?;
    if let (Some(path), Some(&n)) = (&plot.plot, bits.iter().max()) {
        let circuits = PROFILED
            .iter()
            .map(|op| Ok((op.name(), op.program(&DIGITS_128, n)?.circuit().stats())))
            .collect::<Result<Vec<_>, Error>>()?;
        let title = format!(
            "bench ops --backend count: digits (DIGITS_128), {n}-digit signed-binary inputs, {}",
            crate::plot::today()
        );
        crate::plot::save_level_profiles(path, &title, &circuits, threads)?;
    }
    Ok(())
}

/// How the encrypted comparisons are timed.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Where both libraries run (cpu or gpu).
    pub engine: Engine,
    /// Threads for both libraries.
    pub threads: usize,
    /// Timed runs of each side per operation; the tables show medians.
    pub samples: usize,
}

/// The operations timed against tfhe-rs: its `FheInt` products wrap, so
/// each exact product stands beside its wrapping form.
const TIMED: [Op; 13] = [
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::MulWrapping,
    Op::Square,
    Op::SquareWrapping,
    Op::Max,
    Op::Signum,
    Op::Lt,
    Op::Eq,
    Op::ScalarMul(805),
    Op::ScalarMulWrapping(805),
    Op::ScalarMul(4095),
];
