//! The words beside tfhe-rs's `FheUint`, encrypted and timed on the same threads (feature `tfhe-rs`).

use std::time::{Duration, Instant};

use hearth_cli::progress::{generate, steps};
use rand::{Rng, SeedableRng};

use super::*;
use crate::plot::GroupedBars;
use crate::report::{median, ms};
use tfhe::prelude::*;
use tfhe::{FheUint16, FheUint32, FheUint64, FheUint8};

/// One tfhe-rs operation on `FheUintN` (on the current rayon pool):
/// (time, result as in [`BitsOp::reference`]).
macro_rules! tfhe_op {
    ($name:ident, $fhe:ty, $clear:ty, $n:expr) => {
        fn $name(op: BitsOp, x: u128, y: u128, ck: &tfhe::ClientKey) -> (Duration, u128) {
            let a = <$fhe>::encrypt(x as $clear, ck);
            let b = <$fhe>::encrypt(y as $clear, ck);
            let t = Instant::now();
            let dec = |r: $fhe| -> u128 {
                let v: $clear = r.decrypt(ck);
                v as u128
            };
            let r: Box<dyn FnOnce() -> u128> = match op {
                BitsOp::Add => {
                    let r = &a + &b;
                    Box::new(move || dec(r))
                }
                BitsOp::Sub => {
                    let r = &a - &b;
                    Box::new(move || dec(r))
                }
                BitsOp::Mul => {
                    let r = &a * &b;
                    Box::new(move || dec(r))
                }
                BitsOp::MulConst => {
                    let r = &a * (805u32 as $clear);
                    Box::new(move || dec(r))
                }
                BitsOp::Div => {
                    let r = &a / &b;
                    Box::new(move || dec(r))
                }
                BitsOp::DivConst => {
                    let (q, r) = a.div_rem(7 as $clear);
                    Box::new(move || dec(q) | (dec(r) << $n))
                }
                BitsOp::Rem => {
                    let r = &a % &b;
                    Box::new(move || dec(r))
                }
                BitsOp::ShlEnc => {
                    let r = &a << &b;
                    Box::new(move || dec(r))
                }
                BitsOp::ShrEnc => {
                    let r = &a >> &b;
                    Box::new(move || dec(r))
                }
                BitsOp::RotlEnc => {
                    let r = (&a).rotate_left(&b);
                    Box::new(move || dec(r))
                }
                BitsOp::And => {
                    let r = &a & &b;
                    Box::new(move || dec(r))
                }
                BitsOp::Or => {
                    let r = &a | &b;
                    Box::new(move || dec(r))
                }
                BitsOp::Xor => {
                    let r = &a ^ &b;
                    Box::new(move || dec(r))
                }
                BitsOp::Eq => {
                    let r = a.eq(&b);
                    Box::new(move || {
                        let v: bool = r.decrypt(ck);
                        v as u128
                    })
                }
                BitsOp::Lt => {
                    let r = a.lt(&b);
                    Box::new(move || {
                        let v: bool = r.decrypt(ck);
                        v as u128
                    })
                }
                BitsOp::Max => {
                    let r = a.max(&b);
                    Box::new(move || dec(r))
                }
                BitsOp::Min => {
                    let r = a.min(&b);
                    Box::new(move || dec(r))
                }
                BitsOp::OverflowingAdd => {
                    let (s, o) = a.overflowing_add(&b);
                    Box::new(move || {
                        let ov: bool = o.decrypt(ck);
                        dec(s) | ((ov as u128) << $n)
                    })
                }
                BitsOp::Neg => {
                    let r = -&a;
                    Box::new(move || dec(r))
                }
                BitsOp::CountOnes => {
                    let r = a.count_ones();
                    Box::new(move || {
                        let v: u32 = r.decrypt(ck);
                        v as u128
                    })
                }
                BitsOp::LeadingZeros => {
                    let r = a.leading_zeros();
                    Box::new(move || {
                        let v: u32 = r.decrypt(ck);
                        v as u128
                    })
                }
                BitsOp::Select => {
                    let r = a.lt(&b).select(&a, &b);
                    Box::new(move || dec(r))
                }
            };
            let d = t.elapsed();
            (d, r())
        }
    };
}

tfhe_op!(tfhe8, FheUint8, u8, 8);
tfhe_op!(tfhe16, FheUint16, u16, 16);
tfhe_op!(tfhe32, FheUint32, u32, 32);
tfhe_op!(tfhe64, FheUint64, u64, 64);

pub(super) fn encrypted(
    Timing {
        engine,
        threads,
        samples,
    }: Timing,
    words: Words<'_>,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    let Words { bits, ops, one_key } = words;
    if let Some(&n) = bits.iter().find(|&&n| ![8, 16, 32, 64].contains(&n)) {
        return Err(Error::Config(format!(
            "--bits {n}: the comparison covers 8, 16, 32 and 64"
        )));
    }
    let (client, server) = generate(&GATES_128);
    let (dclient, dserver) = generate(&DIGITS_128);
    let tfhe = crate::tfhe::tfhe_pools(threads, engine)?;
    let cpu = hearth_cli::backend::evaluator(engine, &server, Some(threads))?;
    let dcpu = hearth_cli::backend::evaluator(engine, &dserver, Some(threads))?;
    // The words on the key they share with `Int` (that of the digits
    // column when it is the same set).
    let own = (one_key.id != DIGITS_128.id).then(|| generate(one_key));
    let (kclient, kserver) = own.as_ref().map_or((&dclient, &dserver), |(c, s)| (c, s));
    let kcpu = hearth_cli::backend::evaluator(engine, kserver, Some(threads))?;
    let key = one_key.name;
    let mut rng = rand::rngs::StdRng::seed_from_u64(23);
    let mut t = Table::new(
        format!(
            "Words on GATES_128 and on {key} (one key with Int), encrypted on {}: hearth beside \
             tfhe-rs FheUint on the {engine:?} (the faster of its CPU sets), and the digits family \
             (DIGITS_128) where it has the operation",
            cpu.describe()
        ),
        &[
            "op",
            "bits",
            "#PBS",
            "hearth bits (ms)",
            "tfhe-rs (ms)",
            "tfhe-rs set",
            "bits / tfhe-rs",
            &format!("{key} #PBS"),
            &format!("hearth on {key} (ms)"),
            &format!("{key} / tfhe-rs"),
            "hearth digits (ms)",
            "digits / tfhe-rs",
        ],
    );
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    // Operations tfhe-rs's engine turned out to lack (tried once each).
    let mut missing = Vec::new();
    let bar = steps((ops.len() * bits.len()) as u64);
    let mut one_ratios = Vec::new();
    for &n in bits {
        for &op in ops {
            bar.set_message(format!("{} at {n} bits", op.name()));
            let m = (1u128 << n) - 1;
            let (x, y) = (rng.gen::<u128>() & m, rng.gen::<u128>() & (m >> (n / 2)));
            // Shift amounts below the width (tfhe-rs does not reduce them
            // modulo the width); no division by zero.
            let y = match op {
                BitsOp::ShlEnc | BitsOp::ShrEnc | BitsOp::RotlEnc => y % n as u128,
                _ => y.max(1),
            };
            let prog = build(op, n, &GATES_128, threads)?;
            let pbs = prog.circuit().stats().pbs;
            let kprog = build(op, n, one_key, threads)?;
            let kpbs = kprog.circuit().stats().pbs;
            let want = op.reference(n, x, y);
            let (mut ours, mut on_key) = (Vec::new(), Vec::new());
            let mut theirs: Vec<Vec<Duration>> = vec![Vec::new(); tfhe.len()];
            for _ in 0..samples {
                for (prog, client, cpu, times) in [
                    (&prog, &client, &cpu, &mut ours),
                    (&kprog, kclient, &kcpu, &mut on_key),
                ] {
                    let ins = [
                        client.encrypt_word_of(x, n, false)?,
                        client.encrypt_word_of(y, n, false)?,
                    ];
                    let start = Instant::now();
                    let out = prog.run_encrypted(cpu, &ins)?;
                    times.push(start.elapsed());
                    let mut got = 0u128;
                    let mut shift = 0;
                    for o in &out {
                        let v = client.decrypt_word_value(o)?;
                        got |= u128::try_from(v).unwrap_or(0) << shift;
                        shift += o.shape().len();
                    }
                    if got != want {
                        return Err(Error::Config(format!(
                            "{} at {n} on {}: hearth gave {got}, expected {want}",
                            op.name(),
                            client.params().name
                        )));
                    }
                }
                for ((set, tck, pool), times) in tfhe.iter().zip(theirs.iter_mut()) {
                    if missing.contains(&op) {
                        break;
                    }
                    // tfhe-rs panics on an operation its engine lacks (its
                    // CUDA API has no count_ones): that operation is shown
                    // without tfhe-rs, the rest of the table goes on.
                    let run = std::panic::AssertUnwindSafe(|| match n {
                        8 => tfhe8(op, x, y, tck),
                        16 => tfhe16(op, x, y, tck),
                        32 => tfhe32(op, x, y, tck),
                        _ => tfhe64(op, x, y, tck),
                    });
                    let Ok((t, v)) = pool.install(|| std::panic::catch_unwind(run)) else {
                        eprintln!("{} at {n}: tfhe-rs on the {engine:?} lacks it", op.name());
                        missing.push(op);
                        break;
                    };
                    if v != want {
                        return Err(Error::Config(format!(
                            "{} at {n}: tfhe-rs ({}) gave {v}, expected {want}",
                            op.name(),
                            set.name()
                        )));
                    }
                    times.push(t);
                }
            }
            let ours = median(ours);
            let on_key = median(on_key);
            // The faster tfhe-rs set is the reference.
            let by_set: Vec<(&str, Duration)> = tfhe
                .iter()
                .zip(theirs)
                .filter(|(_, times)| !times.is_empty() && !missing.contains(&op))
                .map(|((set, _, _), times)| (set.name(), median(times)))
                .collect();
            let best = by_set.iter().min_by_key(|(_, t)| *t).copied();
            let theirs = best.map(|(_, t)| t);
            let digits = match op.digits() {
                Some(d) if n <= 32 => {
                    let prog = d.program(&DIGITS_128, n)?;
                    let mut ins = vec![dclient.encrypt_int(x as i64 >> 1, n)?];
                    if d.arity() == 2 {
                        ins.push(dclient.encrypt_int(y as i64 >> 1, n)?);
                    }
                    let mut times = Vec::new();
                    for _ in 0..samples {
                        let start = Instant::now();
                        prog.run_encrypted(&dcpu, &ins)?;
                        times.push(start.elapsed());
                    }
                    Some(median(times))
                }
                _ => None,
            };
            let ratio = theirs.map(|th| ours.as_secs_f64() / th.as_secs_f64());
            let kratio = theirs.map(|th| on_key.as_secs_f64() / th.as_secs_f64());
            if let Some(r) = kratio {
                one_ratios.push((op.name().to_string(), format!("{n} bits, {key}"), r));
            }
            let dratio = digits
                .zip(theirs)
                .map(|(d, th)| d.as_secs_f64() / th.as_secs_f64());
            if let Some(ratio) = ratio {
                ratios.push((op.name().to_string(), format!("{n} bits, GATES_128"), ratio));
            }
            let fmt = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.2}"));
            t.row(vec![
                op.name().into(),
                n.to_string(),
                pbs.to_string(),
                ms(ours),
                theirs.map_or("-".into(), ms),
                best.map_or("-", |(s, _)| s).to_string(),
                fmt(ratio),
                kpbs.to_string(),
                ms(on_key),
                fmt(kratio),
                digits.map_or("-".into(), ms),
                fmt(dratio),
            ]);
            rows.push(json!({
                "op": op.name(), "bits": n, "pbs": pbs,
                "hearth_ms": ours.as_secs_f64() * 1e3, "tfhe_rs_ms": theirs.map(|th| th.as_secs_f64() * 1e3), "ratio": ratio,
                "tfhe_rs_set": best.map(|(s, _)| s),
                "tfhe_rs_ms_by_set": by_set.iter().map(|(s, t)| (s.to_string(), json!(t.as_secs_f64() * 1e3))).collect::<serde_json::Map<_, _>>(),
                "one_key": key, "one_key_pbs": kpbs, "one_key_ms": on_key.as_secs_f64() * 1e3, "one_key_ratio": kratio,
                "digits_ms": digits.map(|d| d.as_secs_f64() * 1e3), "digits_ratio": dratio,
            }));
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    t.note(
        "Unsigned operands; times are medians of the runs (--samples), hearth and tfhe-rs alternating; results checked against Rust for both libraries. The digits \
         family's product is exact (2n digits), tfhe-rs's wraps. Division by zero is not timed. \
         tfhe-rs runs on each of its CPU sets (KS_PBS, its default; KS32, its benchmark pages'; \
         on the GPU its default alone) and the faster is the reference (its set named). \
         A '-' under tfhe-rs: its engine lacks the operation (its CUDA API has no count_ones).",
    );
    emit(
        json.json.as_deref(),
        &json!({"bench": "ops", "family": "words", "backend": format!("{engine:?}").to_lowercase(), "hearth": cpu.describe(), "threads": threads, "samples": samples, "rows": rows}),
        &[t],
    )?;
    if let Some(path) = &plot.plot {
        ratios.extend(one_ratios);
        let chart = GroupedBars::from_triples(
            format!(
                "bench ops --family words: words on GATES_128 and {key}, {threads} threads, {}",
                crate::plot::today()
            ),
            "time hearth / tfhe-rs FheUint (below 1: hearth faster)".into(),
            &ratios,
        );
        crate::plot::save(path, &crate::plot::ratio_bars(&chart)?)?;
    }
    Ok(())
}
