//! `hearth bench ops`: the digits operations on the count backend beside
//! PARMESAN, or encrypted beside tfhe-rs's `FheInt` on the same threads.

use std::time::{Duration, Instant};

use hearth::digits::catalog::{Inputs, Op};
use hearth::{Error, ParameterSet, DIGITS_128};
use rand::{Rng, SeedableRng};
use serde_json::json;
use tfhe::prelude::*;
use tfhe::{FheInt16, FheInt32, FheInt8};

use crate::plot::GroupedBars;
use crate::plot::PlotOut;
use crate::report::JsonOut;
use crate::report::{emit, median, ms, Table};
use hearth_cli::options::Engine;
use hearth_cli::progress::{generate, steps};

/// Where `bench ops` evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OpsBackend {
    /// #PBS, depth and widest level only (no keys, no time).
    Count,
    /// Encrypted, timed, beside tfhe-rs, on the CPU.
    Cpu,
    /// Encrypted on the gpu backend, timed beside tfhe-rs's CUDA integer
    /// API (`CudaServerKey`) in the same run (builds with the `gpu` feature).
    Gpu,
}

impl OpsBackend {
    /// Where the encrypted comparison runs (`None`: count only).
    pub fn engine(self) -> Option<Engine> {
        match self {
            OpsBackend::Count => None,
            OpsBackend::Cpu => Some(Engine::Cpu),
            OpsBackend::Gpu => Some(Engine::Gpu),
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

pub fn ops(
    backend: OpsBackend,
    timing: Timing,
    bits: &[usize],
    inputs: InputsArg,
    params: &'static ParameterSet,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    match backend {
        OpsBackend::Count => count(timing.threads, bits, json, plot),
        OpsBackend::Cpu | OpsBackend::Gpu => {
            encrypted(timing, bits, inputs.into(), params, json, plot)
        }
    }
}

/// The operations whose level profiles `bench ops --backend count --plot`
/// draws: a chain (add), a selection (max), a wrapping and an exact
/// product.
const PROFILED: [Op; 4] = [Op::Add, Op::Max, Op::MulWrapping, Op::Mul];

fn count(threads: usize, bits: &[usize], json: JsonOut, plot: PlotOut) -> Result<(), Error> {
    let mut t = Table::new(
        "DIGITS_128 on the count backend, beside PARMESAN (Table 5; `f` = from its cost formulas)",
        &[
            "op",
            "bits",
            "depth",
            "#PBS",
            "widest level",
            "two's-complement inputs: depth",
            "#PBS",
            "PARMESAN depth",
            "PARMESAN #PBS",
            "PARMESAN threads",
            "<= PARMESAN",
        ],
    );
    let mut rows = Vec::new();
    for op in Op::ALL {
        for &n in bits {
            let st = op.program(&DIGITS_128, n)?.circuit().stats();
            let tw = op
                .program_on(&DIGITS_128, n, Inputs::Twos)?
                .circuit()
                .stats();
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
                rd,
                rp,
                rt,
                ok,
            ]);
            rows.push(json!({"op": op.name(), "bits": n, "stats": st, "twos": tw, "parmesan": r}));
        }
    }
    emit(
        json.json.as_deref(),
        &json!({"bench": "ops", "backend": "count", "rows": rows}),
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

/// The operations timed against tfhe-rs.
const TIMED: [Op; 11] = [
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::MulWrapping,
    Op::Square,
    Op::Max,
    Op::Signum,
    Op::Lt,
    Op::Eq,
    Op::ScalarMul(805),
    Op::ScalarMul(4095),
];

/// One tfhe-rs operation on `N`-bit `FheInt`s: (time, decrypted result).
macro_rules! tfhe_op {
    ($name:ident, $fhe:ty, $clear:ty) => {
        fn $name(op: Op, x: i64, y: i64, ck: &tfhe::ClientKey) -> (Duration, i64) {
            enum Out {
                Int($fhe),
                Bool(tfhe::FheBool),
                Sign(tfhe::FheBool, tfhe::FheBool),
            }
            let a = <$fhe>::encrypt(x as $clear, ck);
            let b = <$fhe>::encrypt(y as $clear, ck);
            let t = Instant::now();
            let r = match op {
                Op::Add => Out::Int(&a + &b),
                Op::Sub => Out::Int(&a - &b),
                Op::Mul | Op::MulWrapping => Out::Int(&a * &b),
                Op::Square => Out::Int(&a * &a),
                Op::Max => Out::Int(a.max(&b)),
                // No signum in tfhe-rs: the two comparisons with zero that make it.
                Op::Signum => Out::Sign(a.gt(0 as $clear), a.lt(0 as $clear)),
                Op::Lt => Out::Bool(a.lt(&b)),
                Op::Eq => Out::Bool(a.eq(&b)),
                Op::ScalarMul(k) => Out::Int(&a * (k as $clear)),
                _ => unreachable!("not timed"),
            };
            let d = t.elapsed();
            let v = match r {
                Out::Int(r) => {
                    let v: $clear = r.decrypt(ck);
                    v as i64
                }
                Out::Bool(r) => {
                    let v: bool = r.decrypt(ck);
                    v as i64
                }
                Out::Sign(g, l) => {
                    let (g, l): (bool, bool) = (g.decrypt(ck), l.decrypt(ck));
                    g as i64 - l as i64
                }
            };
            (d, v)
        }
    };
}

tfhe_op!(tfhe8, FheInt8, i8);
tfhe_op!(tfhe16, FheInt16, i16);
tfhe_op!(tfhe32, FheInt32, i32);

fn encrypted(
    Timing {
        engine,
        threads,
        samples,
    }: Timing,
    bits: &[usize],
    inputs: Inputs,
    params: &'static ParameterSet,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    if let Some(&n) = bits.iter().find(|&&n| ![8, 16, 32].contains(&n)) {
        return Err(Error::Config(format!(
            "--bits {n}: the tfhe-rs comparison covers 8, 16 and 32"
        )));
    }
    let (client, server) = generate(params);
    let (tck, pool) = crate::tfhe::tfhe_pool(threads, engine)?;
    let hearth = hearth_cli::backend::evaluator(engine, &server, Some(threads))?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let mut t = Table::new(
        format!(
            "{} encrypted on {}, {} inputs: hearth beside tfhe-rs FheInt on the {engine:?} (default parameters)",
            params.name,
            hearth.describe(),
            match inputs {
                Inputs::Twos => "two's-complement",
                Inputs::SignedBinary => "signed-binary",
            }
        ),
        &["op", "bits", "#PBS", "hearth (ms)", "tfhe-rs (ms)", "ratio hearth / tfhe-rs"],
    );
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let bar = steps((TIMED.len() * bits.len()) as u64);
    for &n in bits {
        for op in TIMED {
            bar.set_message(format!("{} at {n} bits", op.name()));
            // Operands small enough that tfhe-rs's n-bit result does not wrap.
            let lim = 1i64 << (n / 2 - 1);
            let (x, y) = (rng.gen_range(-lim..lim), rng.gen_range(-lim..lim));
            let prog = op.program_on(params, n, inputs)?;
            let pbs = prog.circuit().stats().pbs;
            let encrypt = |v: i64| match inputs {
                Inputs::Twos => client.encrypt_int_twos(v, n),
                Inputs::SignedBinary => client.encrypt_int(v, n),
            };
            let mut ins = vec![encrypt(x)?];
            if op.arity() == 2 {
                ins.push(encrypt(y)?);
            }
            let want = op.reference(x as i128, y as i128, n);
            let modulus = 1i128 << n;
            let wrapped =
                (want.rem_euclid(modulus) + modulus / 2).rem_euclid(modulus) - modulus / 2;
            let (mut ours, mut theirs) = (Vec::new(), Vec::new());
            for _ in 0..samples {
                let start = Instant::now();
                let out = prog.run_encrypted(&hearth, &ins)?;
                ours.push(start.elapsed());
                let got = client.decrypt_int(&out[0])?;
                if got != want.into() {
                    return Err(Error::Config(format!(
                        "{} at {n}: hearth gave {got}, expected {want}",
                        op.name()
                    )));
                }
                let (t, v) = pool.install(|| match n {
                    8 => tfhe8(op, x, y, &tck),
                    16 => tfhe16(op, x, y, &tck),
                    _ => tfhe32(op, x, y, &tck),
                });
                if v as i128 != wrapped {
                    return Err(Error::Config(format!(
                        "{} at {n}: tfhe-rs gave {v}, expected {wrapped}",
                        op.name()
                    )));
                }
                theirs.push(t);
            }
            let (ours, theirs) = (median(ours), median(theirs));
            let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
            ratios.push((op.name(), format!("{n} bits"), ratio));
            t.row(vec![
                op.name(),
                n.to_string(),
                pbs.to_string(),
                ms(ours),
                ms(theirs),
                format!("{ratio:.2}"),
            ]);
            rows.push(json!({
                "op": op.name(), "bits": n, "pbs": pbs, "inputs": format!("{inputs:?}"),
                "hearth_ms": ours.as_secs_f64() * 1e3, "tfhe_rs_ms": theirs.as_secs_f64() * 1e3, "ratio": ratio,
            }));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    t.note(
        "hearth returns exact results (a product of n-bit values has 2n digits); tfhe-rs FheIntN wraps \
         to n bits. tfhe-rs has no signum: its time is the two comparisons with zero that make one. \
         Times are medians of the runs (--samples), hearth and tfhe-rs alternating; operands \
         below 2^(n/2-1) so that tfhe-rs does not wrap.",
    );
    emit(
        json.json.as_deref(),
        &json!({"bench": "ops", "backend": format!("{engine:?}").to_lowercase(), "hearth": hearth.describe(), "params": params.name, "threads": threads, "samples": samples, "rows": rows}),
        &[t],
    )?;
    if let Some(path) = &plot.plot {
        let kind = match inputs {
            Inputs::Twos => "two's-complement",
            Inputs::SignedBinary => "signed-binary",
        };
        let chart = GroupedBars::from_triples(
            format!(
                "bench ops --family digits: {}, {kind} inputs, {}, {}",
                params.name,
                hearth.describe(),
                crate::plot::today()
            ),
            "time hearth / tfhe-rs FheInt (below 1: hearth faster)".into(),
            &ratios,
        );
        crate::plot::save(path, &crate::plot::ratio_bars(&chart)?)?;
    }
    Ok(())
}
