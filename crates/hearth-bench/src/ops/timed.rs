//! The digits family beside tfhe-rs's `FheInt`, encrypted and timed on the same threads (feature `tfhe-rs`).

use std::time::{Duration, Instant};

use hearth_cli::progress::{generate, steps};
use rand::{Rng, SeedableRng};
use tfhe::prelude::*;
use tfhe::{FheInt16, FheInt32, FheInt8};

use super::*;
use crate::plot::GroupedBars;
use crate::report::{median, ms};

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
                Op::Square | Op::SquareWrapping => Out::Int(&a * &a),
                Op::Max => Out::Int(a.max(&b)),
                // No signum in tfhe-rs: the two comparisons with zero that make it.
                Op::Signum => Out::Sign(a.gt(0 as $clear), a.lt(0 as $clear)),
                Op::Lt => Out::Bool(a.lt(&b)),
                Op::Eq => Out::Bool(a.eq(&b)),
                Op::ScalarMul(k) | Op::ScalarMulWrapping(k) => Out::Int(&a * (k as $clear)),
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

pub(super) fn encrypted(
    Timing {
        engine,
        threads,
        samples,
    }: Timing,
    Ints {
        bits,
        only,
        inputs,
        params,
    }: Ints<'_>,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    let inputs = Inputs::from(inputs);
    if let Some(&n) = bits.iter().find(|&&n| ![8, 16, 32].contains(&n)) {
        return Err(Error::Config(format!(
            "--bits {n}: the tfhe-rs comparison covers 8, 16 and 32"
        )));
    }
    let timed: Vec<Op> = TIMED
        .into_iter()
        .filter(|op| only.is_empty() || only.contains(op))
        .collect();
    let (client, server) = generate(params);
    let tfhe = crate::tfhe::tfhe_pools(threads, engine)?;
    let hearth = hearth_cli::backend::evaluator(engine, &server, Some(threads))?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let mut t = Table::new(
        format!(
            "{} encrypted on {}, {} inputs: hearth beside tfhe-rs FheInt on the {engine:?} (the faster of its CPU sets)",
            params.name,
            hearth.describe(),
            match inputs {
                Inputs::Twos => "two's-complement",
                Inputs::SignedBinary => "signed-binary",
            }
        ),
        &[
            "op",
            "bits",
            "#PBS",
            "hearth (ms)",
            "tfhe-rs (ms)",
            "tfhe-rs set",
            "ratio hearth / tfhe-rs",
        ],
    );
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let bar = steps((timed.len() * bits.len()) as u64);
    for &n in bits {
        for &op in &timed {
            bar.set_message(format!("{} at {n} bits", op.name()));
            // Operands small enough that tfhe-rs's n-bit result does not wrap.
            let lim = 1i64 << (n / 2 - 1);
            let (x, y) = (rng.gen_range(-lim..lim), rng.gen_range(-lim..lim));
            let prog = op.program_on(params, n, inputs, Some(threads))?;
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
            let mut ours = Vec::new();
            let mut theirs: Vec<Vec<Duration>> = vec![Vec::new(); tfhe.len()];
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
                for ((set, tck, pool), times) in tfhe.iter().zip(theirs.iter_mut()) {
                    let (t, v) = pool.install(|| match n {
                        8 => tfhe8(op, x, y, tck),
                        16 => tfhe16(op, x, y, tck),
                        _ => tfhe32(op, x, y, tck),
                    });
                    if v as i128 != wrapped {
                        return Err(Error::Config(format!(
                            "{} at {n}: tfhe-rs ({}) gave {v}, expected {wrapped}",
                            op.name(),
                            set.name()
                        )));
                    }
                    times.push(t);
                }
            }
            let ours = median(ours);
            // The faster tfhe-rs set is the reference.
            let by_set: Vec<(&str, Duration)> = tfhe
                .iter()
                .zip(theirs)
                .map(|((set, _, _), times)| (set.name(), median(times)))
                .collect();
            let (set, theirs) = *by_set
                .iter()
                .min_by_key(|(_, t)| *t)
                .ok_or_else(crate::tfhe::missing_comparison)?;
            let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
            ratios.push((op.name(), format!("{n} bits"), ratio));
            t.row(vec![
                op.name(),
                n.to_string(),
                pbs.to_string(),
                ms(ours),
                ms(theirs),
                set.to_string(),
                format!("{ratio:.2}"),
            ]);
            rows.push(json!({
                "op": op.name(), "bits": n, "pbs": pbs, "inputs": format!("{inputs:?}"),
                "hearth_ms": ours.as_secs_f64() * 1e3, "tfhe_rs_ms": theirs.as_secs_f64() * 1e3, "ratio": ratio,
                "tfhe_rs_set": set,
                "tfhe_rs_ms_by_set": by_set.iter().map(|(s, t)| (s.to_string(), json!(t.as_secs_f64() * 1e3))).collect::<serde_json::Map<_, _>>(),
            }));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    t.note(
        "hearth returns exact results (a product of n-bit values has 2n digits); tfhe-rs FheIntN wraps \
         to n bits. tfhe-rs has no signum: its time is the two comparisons with zero that make one. \
         tfhe-rs runs on both of its CPU sets (on the GPU its default alone) and the faster is \
         the reference (its set named). \
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
                "bench ops --family int: {}, {kind} inputs, {}, {}",
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
