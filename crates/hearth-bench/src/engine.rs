//! `hearth-bench engine`: the cpu backend's scheduler on random circuits of
//! uneven level widths, beside the `#PBS x PBS / T` bound.

use std::time::Duration;

use hearth::backend::{Backend, ClearBackend};
use hearth::{Error, ParameterSet};
use hearth_cli::options::Threads;
use hearth_cli::progress::generate;
use hearth_testkit::circuits::random_circuit;
use serde_json::json;

use crate::report::{emit, median, ms, JsonOut, Table};

pub fn engine(
    params: &'static ParameterSet,
    threads: Threads,
    bootstraps: usize,
    streams: usize,
    seed: u64,
    json: JsonOut,
) -> Result<(), Error> {
    let threads = threads.resolve()?;
    let rc = random_circuit(params, seed, 16, bootstraps, streams)?;
    let stats = rc.circuit.stats();
    let (client, server) = generate(params);
    let mut raw = crate::pbs::RawPbs::new(&client, &server)?;
    raw.once();
    // Single-PBS time sampled before and after the run: the host's speed drifts.
    let mut samples: Vec<Duration> = (0..15).map(|_| raw.once()).collect();

    let inputs = rc.encrypt(&client)?;
    let bar = hearth_cli::progress::pbs_bar(stats.pbs);
    bar.set_message(format!("on {threads} threads"));
    let cpu = hearth_cli::progress::cpu_with_bar(&server, threads, &bar)?;
    let (out, report) = cpu.run(&rc.circuit, &inputs)?;
    bar.finish_and_clear();
    samples.extend((0..15).map(|_| raw.once()));
    let single = median(samples);
    let expected = ClearBackend.evaluate(&rc.circuit, &rc.inputs)?;
    let wrong = crate::scale::wrong(&client, &out, &expected)?;

    let bound = single.as_secs_f64() * stats.pbs as f64 / threads as f64;
    let wall = report.wall.as_secs_f64();
    let efficiency = bound / wall;
    let widths = &stats.width_per_level;
    let mut t = Table::new(
        format!(
            "{}: engine on a random circuit ({streams} streams, seed {seed}), {threads} threads",
            params.name
        ),
        &[
            "#PBS",
            "depth",
            "level widths min / median / max",
            "single PBS (ms, median before + after)",
            "bound #PBS x PBS / T (s)",
            "wall (s)",
            "wall / bound",
            "throughput vs bound",
            "peak live (run / level order)",
            "wrong outputs",
        ],
    );
    let mut sorted = widths.clone();
    sorted.sort();
    t.row(vec![
        stats.pbs.to_string(),
        stats.depth.to_string(),
        format!(
            "{} / {} / {}",
            sorted[0],
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1]
        ),
        ms(single),
        format!("{bound:.2}"),
        format!("{wall:.2}"),
        format!("{:.3}", wall / bound),
        format!("{:.1}%", efficiency * 100.0),
        format!("{} / {}", report.peak_live, stats.peak_live),
        wrong.to_string(),
    ]);
    let value = json!({
        "bench": "engine",
        "params": params.name,
        "threads": threads,
        "seed": seed,
        "streams": streams,
        "stats": stats,
        "single_pbs_ms": single.as_secs_f64() * 1e3,
        "bound_s": bound,
        "wall_s": wall,
        "wall_over_bound": wall / bound,
        "peak_live_run": report.peak_live,
        "wrong_outputs": wrong,
    });
    emit(json.json.as_deref(), &value, &[t])?;
    if wrong > 0 {
        return Err(Error::Config(format!(
            "{wrong} outputs differ from the clear backend"
        )));
    }
    Ok(())
}
