//! `hearth-bench noise`: bootstraps at the full noise budget: wrong
//! decryptions, and the measured noise beside the predicted.

use hearth::backend::noise::measure_on;
use hearth::crypto::noise::NoiseModel;
use hearth::crypto::params::Margin;
use hearth::{Error, ParameterSet};
use hearth_cli::options::Threads;
use hearth_cli::progress::{generate, steps};
use serde_json::json;

use crate::report::{emit, JsonOut, Table};

pub fn noise(
    params: &'static ParameterSet,
    (engine, threads): (hearth::backend::Engine, Threads),
    count: usize,
    (weight, margin): (Option<u64>, Option<usize>),
    seed: u64,
    json: JsonOut,
) -> Result<(), Error> {
    if engine == hearth::backend::Engine::Mpi {
        return Err(Error::Config(
            "bench noise runs on cpu or gpu, not mpi".into(),
        ));
    }
    let threads = threads.resolve()?;
    let level = match margin {
        Some(l) => *Margin::ALL.get(l).ok_or_else(|| {
            Error::Config(format!(
                "margin level {l} is not one of 0..{}",
                Margin::ALL.len()
            ))
        })?,
        None => Margin::ALL
            .into_iter()
            .find(|&m| params.budgets.at(m) > 0)
            .unwrap_or(Margin::Half),
    };
    let budget = params.budgets.at(level);
    let qw = weight.unwrap_or(budget);
    if qw == 0 {
        return Err(Error::Config(format!(
            "{} has no budget at margin {level}",
            params.name
        )));
    }
    let (client, server) = generate(params);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(e.to_string()))?;
    let bar = steps(count as u64);
    bar.set_message(format!("bootstraps at quadratic weight {qw}"));
    let progress = bar.clone();
    let gpu = hearth_cli::backend::gpu_only(engine, &server)?;
    let on = match &gpu {
        Some(g) => g.describe(),
        None => format!("cpu, {threads} threads"),
    };
    let r = pool.install(|| {
        measure_on(
            &client,
            &server,
            gpu.as_ref(),
            qw,
            level,
            count,
            seed,
            &move |d| progress.set_position(d as u64),
        )
    })?;
    bar.finish_and_clear();
    let model = NoiseModel::of(params);
    let mut t = Table::new(
        format!(
            "{}: {} bootstraps at quadratic weight {qw}, margin {level} (budget {budget}), on {on}",
            params.name, r.bootstraps
        ),
        &["quantity", "measured", "predicted (tfhe-rs formulas)"],
    );
    let log2 = |x: f64| format!("2^{:.2}", x.log2());
    t.row(vec![
        "wrong decryptions".into(),
        r.wrong.to_string(),
        "0".into(),
    ]);
    t.row(vec![
        "std of a fresh PBS output".into(),
        log2(r.pbs_std_measured),
        log2(r.pbs_std_predicted),
    ]);
    t.row(vec![
        "std at the blind-rotation input".into(),
        log2(r.input_std_measured),
        log2(r.input_std_predicted),
    ]);
    t.row(vec![
        "mean at the blind-rotation input".into(),
        format!(
            "{:.3} / 2N",
            r.input_mean_measured * 2.0 * params.polynomial_size.0 as f64
        ),
        "-".into(),
    ]);
    t.row(vec![
        "log2 p_fail at this weight".into(),
        format!("{:.1} (from measured std)", {
            let m = NoiseModel {
                pbs: 0.0,
                keyswitch: r.input_std_measured.powi(2),
                modulus_switch: 0.0,
                packing: 0.0,
            };
            m.log2_p_fail(params.pi - level.log2_spacing(), 0.0)
        }),
        format!(
            "{:.1}",
            model.log2_p_fail(params.pi - level.log2_spacing(), qw as f64)
        ),
    ]);
    t.row(vec![
        "time (s)".into(),
        format!("{:.1}", r.seconds),
        "-".into(),
    ]);
    let value = json!({"bench": "noise", "on": on, "threads": threads, "report": r});
    emit(json.json.as_deref(), &value, &[t])?;
    if r.wrong > 0 {
        return Err(Error::Config(format!("{} wrong decryptions", r.wrong)));
    }
    Ok(())
}
