//! `hearth bench ops --family words`: every operation of the fixed-width
//! words on the count backend (#PBS, depth, planned for the thread count),
//! or encrypted on GATES_128 beside tfhe-rs's `FheUint` on the same
//! threads, with the digits family (DIGITS_128) in the same table where it
//! has the operation.

use crate::catalog::Op as DigitsOp;
use hearth::api::{CompiledProgram, Program, Word};
use hearth::{Error, DIGITS_128, GATES_128};
use serde_json::json;

use crate::ops::{OpsBackend, Timing};
use crate::plot::PlotOut;
use crate::report::JsonOut;
use crate::report::{emit, Table};

#[cfg(feature = "tfhe-rs")]
mod timed;

/// One benchmarked word operation (unsigned operands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitsOp {
    Add,
    Sub,
    Mul,
    MulConst,
    Div,
    Rem,
    DivConst,
    ShlEnc,
    ShrEnc,
    RotlEnc,
    And,
    Or,
    Xor,
    Eq,
    Lt,
    Max,
    Min,
    OverflowingAdd,
    Neg,
    CountOnes,
    LeadingZeros,
    Select,
}

impl BitsOp {
    const ALL: [BitsOp; 22] = [
        BitsOp::Add,
        BitsOp::Sub,
        BitsOp::Mul,
        BitsOp::MulConst,
        BitsOp::Div,
        BitsOp::Rem,
        BitsOp::DivConst,
        BitsOp::ShlEnc,
        BitsOp::ShrEnc,
        BitsOp::RotlEnc,
        BitsOp::And,
        BitsOp::Or,
        BitsOp::Xor,
        BitsOp::Eq,
        BitsOp::Lt,
        BitsOp::Max,
        BitsOp::Min,
        BitsOp::OverflowingAdd,
        BitsOp::Neg,
        BitsOp::CountOnes,
        BitsOp::LeadingZeros,
        BitsOp::Select,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BitsOp::Add => "add",
            BitsOp::Sub => "sub",
            BitsOp::Mul => "mul (wrapping)",
            BitsOp::MulConst => "mul by clear 805",
            BitsOp::Div => "div",
            BitsOp::DivConst => "div_rem by clear 7",
            BitsOp::Rem => "rem",
            BitsOp::ShlEnc => "shl by encrypted",
            BitsOp::ShrEnc => "shr by encrypted",
            BitsOp::RotlEnc => "rotate_left by encrypted",
            BitsOp::And => "bitand",
            BitsOp::Or => "bitor",
            BitsOp::Xor => "bitxor",
            BitsOp::Eq => "eq",
            BitsOp::Lt => "lt",
            BitsOp::Max => "max",
            BitsOp::Min => "min",
            BitsOp::OverflowingAdd => "overflowing_add",
            BitsOp::Neg => "neg",
            BitsOp::CountOnes => "count_ones",
            BitsOp::LeadingZeros => "leading_zeros",
            BitsOp::Select => "select (x < y ? x : y)",
        }
    }

    /// The operations called `names` (every one when empty), in table
    /// order: by their names in the table or [`crate::catalog::slug`]s.
    pub fn named(names: &[String]) -> Result<Vec<BitsOp>, Error> {
        crate::catalog::select(&BitsOp::ALL, names, |op| op.name().to_string())
    }

    /// The digits family's counterpart, where it has one.
    fn digits(self) -> Option<DigitsOp> {
        match self {
            BitsOp::Add => Some(DigitsOp::Add),
            BitsOp::Sub => Some(DigitsOp::Sub),
            BitsOp::Mul => Some(DigitsOp::Mul),
            BitsOp::MulConst => Some(DigitsOp::ScalarMul(805)),
            BitsOp::Max => Some(DigitsOp::Max),
            BitsOp::Lt => Some(DigitsOp::Lt),
            _ => None,
        }
    }

    /// Rust's result on `n`-bit patterns (the flag of overflowing_add in
    /// bit `n`).
    fn reference(self, n: usize, x: u128, y: u128) -> u128 {
        let m = (1u128 << n) - 1;
        let k = (y % n as u128) as u32;
        let r = match self {
            BitsOp::Add => x + y,
            BitsOp::Sub => x.wrapping_sub(y),
            BitsOp::Mul => x.wrapping_mul(y),
            BitsOp::MulConst => x.wrapping_mul(805),
            BitsOp::Div => x.checked_div(y).unwrap_or(m),
            BitsOp::DivConst => return (x / 7) | ((x % 7) << n),
            BitsOp::Rem => x.checked_rem(y).unwrap_or(x),
            BitsOp::ShlEnc => x << k,
            BitsOp::ShrEnc => x >> k,
            BitsOp::RotlEnc => {
                if k == 0 {
                    x
                } else {
                    (x << k) | (x >> (n as u32 - k))
                }
            }
            BitsOp::And => x & y,
            BitsOp::Or => x | y,
            BitsOp::Xor => x ^ y,
            BitsOp::Eq => (x == y) as u128,
            BitsOp::Lt => (x < y) as u128,
            BitsOp::Max => x.max(y),
            BitsOp::Min => x.min(y),
            BitsOp::OverflowingAdd => return ((x + y) & m) | (((x + y > m) as u128) << n),
            BitsOp::Neg => x.wrapping_neg(),
            BitsOp::CountOnes => x.count_ones() as u128,
            BitsOp::LeadingZeros => (x.leading_zeros() - (128 - n as u32)) as u128,
            BitsOp::Select => x.min(y),
        };
        r & m
    }
}

/// The operation as a program on `B`-bit unsigned words; its output read
/// by [`read`].
fn program<const B: usize>(
    op: BitsOp,
    params: &'static hearth::ParameterSet,
    threads: usize,
) -> Result<CompiledProgram, Error> {
    let p = Program::new(params);
    p.set_threads(threads);
    let x = Word::<B, false>::input(&p);
    let y = Word::<B, false>::input(&p);
    match op {
        BitsOp::Add => p.output(&(&x + &y)),
        BitsOp::Sub => p.output(&(&x - &y)),
        BitsOp::Mul => p.output(&(&x * &y)),
        BitsOp::MulConst => p.output(&(&x * 805i64)),
        BitsOp::Div => p.output(&(&x / &y)),
        BitsOp::DivConst => {
            let (q, r) = x.div_rem(&Word::constant(&p, 7));
            p.output(&q);
            p.output(&r);
        }
        BitsOp::Rem => p.output(&(&x % &y)),
        BitsOp::ShlEnc => p.output(&x.shl_by(&y)),
        BitsOp::ShrEnc => p.output(&x.shr_by(&y)),
        BitsOp::RotlEnc => p.output(&x.rotate_left_by(&y)),
        BitsOp::And => p.output(&(&x & &y)),
        BitsOp::Or => p.output(&(&x | &y)),
        BitsOp::Xor => p.output(&(&x ^ &y)),
        BitsOp::Eq => p.output(&x.eq(&y)),
        BitsOp::Lt => p.output(&x.lt(&y)),
        BitsOp::Max => p.output(&x.max(&y)),
        BitsOp::Min => p.output(&x.min(&y)),
        BitsOp::OverflowingAdd => {
            let (s, o) = x.overflowing_add(&y);
            p.output(&s);
            p.output(&o);
        }
        BitsOp::Neg => p.output(&(-&x)),
        BitsOp::CountOnes => p.output(&x.count_ones()),
        BitsOp::LeadingZeros => p.output(&x.leading_zeros()),
        BitsOp::Select => p.output(&x.lt(&y).select(&x, &y)),
    }
    p.build()
}

pub(crate) fn build(
    op: BitsOp,
    n: usize,
    params: &'static hearth::ParameterSet,
    threads: usize,
) -> Result<CompiledProgram, Error> {
    match n {
        8 => program::<8>(op, params, threads),
        16 => program::<16>(op, params, threads),
        32 => program::<32>(op, params, threads),
        64 => program::<64>(op, params, threads),
        _ => Err(Error::Config(format!(
            "--bits {n}: the bits family benchmark covers 8, 16, 32 and 64"
        ))),
    }
}

/// What the words benchmark covers.
pub struct Words<'a> {
    /// Widths.
    pub bits: &'a [usize],
    /// Operations, in table order.
    pub ops: &'a [BitsOp],
    /// The digits family's set on which the words also run (the key they
    /// share with `Int`), beside GATES_128.
    pub one_key: &'static hearth::ParameterSet,
}

pub fn ops(
    backend: OpsBackend,
    timing: Timing,
    words: Words<'_>,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    match backend {
        OpsBackend::Count => count(timing.threads, words, json, plot),
        #[cfg(feature = "tfhe-rs")]
        OpsBackend::Encrypted(_) => timed::encrypted(timing, words, json, plot),
        #[cfg(not(feature = "tfhe-rs"))]
        OpsBackend::Encrypted(_) => Err(crate::tfhe::missing()),
    }
}

/// The operations whose level profiles `bench ops --family words --backend
/// count --plot` draws: a chain (add), a selection (max), a product and a
/// barrel shifter (division, a chain of about n^2 levels, would flatten
/// the others).
const PROFILED: [BitsOp; 4] = [BitsOp::Add, BitsOp::Max, BitsOp::Mul, BitsOp::ShlEnc];

fn count(threads: usize, words: Words<'_>, json: JsonOut, plot: PlotOut) -> Result<(), Error> {
    let Words { bits, ops, one_key } = words;
    let key = one_key.name;
    let mut t = Table::new(
        format!(
            "Words on GATES_128 and on {key} (one key with Int) on the count backend, planned for \
             {threads} threads (digits: DIGITS_128)"
        ),
        &[
            "op",
            "bits",
            "#PBS",
            "depth",
            "widest level",
            "time on T (PBS)",
            &format!("{key} #PBS"),
            &format!("{key} depth"),
            &format!("{key} time on T (PBS)"),
            "digits #PBS",
            "digits depth",
        ],
    );
    let mut rows = Vec::new();
    for &n in bits {
        for &op in ops {
            let gates = build(op, n, &GATES_128, threads)?;
            let st = gates.circuit().stats();
            let est = gates.circuit().time_on(threads) as f64 / 100.0;
            let one_program = build(op, n, one_key, threads)?;
            let one = one_program.circuit().stats();
            let one_est = one_program.circuit().time_on(threads) as f64 / 100.0;
            let digits = match op.digits() {
                Some(d) => Some(d.program(&DIGITS_128, n)?.circuit().stats()),
                None => None,
            };
            t.row(vec![
                op.name().into(),
                n.to_string(),
                st.pbs.to_string(),
                st.depth.to_string(),
                st.max_width().to_string(),
                format!("{est:.2}"),
                one.pbs.to_string(),
                one.depth.to_string(),
                format!("{one_est:.2}"),
                digits.as_ref().map_or("-".into(), |d| d.pbs.to_string()),
                digits.as_ref().map_or("-".into(), |d| d.depth.to_string()),
            ]);
            rows.push(
                json!({"op": op.name(), "bits": n, "stats": st, "one_key": one, "digits": digits,
                    "time_on_threads": est, "one_key_time_on_threads": one_est}),
            );
        }
    }
    t.note(
        "The digits family's product is exact (2n digits); the words' wraps to n bits. One GATES_128 \
         PBS costs about 0.5x of a DIGITS_128 one (`hearth bench params`). On the digits family's \
         sets (pi = 5) words compare three bits per bootstrap. Time on T: the cpu backend's \
         schedule on T threads replayed, in bootstrap latencies (what plans are chosen by; a \
         bootstrap run alone on two threads counts 0.6).",
    );
    emit(
        json.json.as_deref(),
        &json!({"bench": "ops", "family": "words", "backend": "count", "threads": threads, "one_key": key, "rows": rows}),
        &[t],
    )?;
    if let (Some(path), Some(&n)) = (&plot.plot, bits.iter().max()) {
        let circuits = PROFILED
            .iter()
            .map(|&op| {
                let st = build(op, n, &GATES_128, threads)?.circuit().stats();
                Ok((op.name().to_string(), st))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let title = format!(
            "bench ops --family words --backend count: u{n} words (GATES_128), planned for {threads} threads, {}",
            crate::plot::today()
        );
        crate::plot::save_level_profiles(path, &title, &circuits, threads)?;
    }
    Ok(())
}
