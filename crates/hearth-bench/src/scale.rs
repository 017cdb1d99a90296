//! `hearth bench engine --backend mpi` (a random circuit over the ranks of a
//! launch, beside the cpu backend on as many threads and beside the
//! simulator's prediction) and `hearth bench simulate` (predicted times on
//! 1 to 64 ranks).

use std::path::Path;
use std::time::Instant;

use hearth::backend::{Backend, ClearBackend, CpuBackend};
use hearth::circuit::schedule::{simulate, Machine};
use hearth::{Circuit, ClientKey, CompiledProgram, Error, ParameterSet, Program, DIGITS_128};
use hearth_testkit::circuits::random_circuit;
use serde_json::json;

use crate::report::JsonOut;
use crate::report::{emit, Table};
use hearth::backend::Engine;
use hearth_cli::backend::with_bar;
use hearth_cli::options::Threads;
use hearth_cli::progress::{generate, pbs_bar};

/// Seconds per bootstrap on `threads` threads all busy: a batch of
/// independent bootstraps, 32 per thread.
pub(crate) fn pbs_seconds(
    client: &ClientKey,
    server: &hearth::ServerKey,
    threads: usize,
) -> Result<f64, Error> {
    let (per_s, _) = crate::pbs::cpu_throughput(client, server, threads, 32 * threads)?;
    Ok(threads as f64 / per_s)
}

/// How many outputs decrypt to other values than the clear backend's
/// `want`.
pub(crate) fn wrong(
    client: &ClientKey,
    got: &[hearth::Ciphertext],
    want: &[u64],
) -> Result<usize, Error> {
    got.iter()
        .zip(want)
        .map(|(c, &w)| client.decrypt(c).map(|d| (d != w) as usize))
        .sum()
}

/// `bench engine --backend mpi`, on rank 0 of a launch; `with_cpu`: also
/// time the cpu backend on as many threads on rank 0.
pub fn mpi_engine(
    params: &'static ParameterSet,
    threads: Threads,
    bootstraps: usize,
    (streams, seed): (usize, u64),
    cores: Option<usize>,
    with_cpu: bool,
    json: JsonOut,
) -> Result<(), Error> {
    let threads = threads.resolve()?;
    let rc = random_circuit(params, seed, 16, bootstraps, streams)?;
    let stats = rc.circuit.stats();
    let (client, server) = generate(params);
    let inputs = rc.encrypt(&client)?;
    let want = ClearBackend.evaluate(&rc.circuit, &rc.inputs)?;
    let bar = pbs_bar(stats.pbs);
    let mpi = with_bar(Engine::Mpi, &server, None, Some(threads), Some(&bar))?;
    let layout = mpi.threads();
    let slots: usize = layout.iter().sum();
    // The host's speed drifts: calibrated before and after, averaged, on
    // as many threads as run at once on rank 0's cores: all slots up to
    // the shared cores (`--cores`), else rank 0's own threads (ranks bound
    // to cores of their own).
    let busy = cores.map_or(layout[0], |c| c.min(slots)).max(1);
    eprintln!("calibrating: a batch on {busy} threads...");
    let before = pbs_seconds(&client, &server, busy)?;
    bar.set_message(mpi.describe());
    let t = Instant::now();
    let out = mpi.evaluate(&rc.circuit, &inputs)?;
    let mpi_wall = t.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let mpi_wrong = wrong(&client, &out, &want)?;
    let mut cpu_run = None;
    if with_cpu {
        eprintln!("mpi: {mpi_wall:.2} s; now the cpu backend on {slots} threads of rank 0...");
        let cpu = CpuBackend::new(&server, Some(slots))?;
        let t = Instant::now();
        let out = cpu.evaluate(&rc.circuit, &inputs)?;
        cpu_run = Some((t.elapsed().as_secs_f64(), wrong(&client, &out, &want)?));
    }
    let pbs_s = (before + pbs_seconds(&client, &server, busy)?) / 2.0;
    // Loopback shared memory moved a 16.4 KB ciphertext in 2-4 us here
    // (about 5 GB/s); between hosts pass --transfer to `hearth-bench simulate`.
    let transfer_s = params.ciphertext_bytes() as f64 / 5e9;
    let latency_s = hearth::circuit::schedule::POLL_LATENCY_S;
    let predict = |threads: Vec<usize>| {
        simulate(
            &rc.circuit,
            &Machine {
                threads,
                cores,
                pbs_s,
                transfer_s,
                latency_s,
                pair_s: None,
            }
            .pairing_for(&rc.circuit),
        )
    };
    let p_mpi = predict(layout.clone());
    let p_cpu = predict(vec![slots]);
    let mut t = Table::new(
        format!(
            "{}: random circuit ({streams} streams, seed {seed}) on {} beside the cpu backend on {slots} threads",
            params.name,
            mpi.describe()
        ),
        &[
            "backend",
            "#PBS",
            "depth",
            "wall (s)",
            "predicted (s)",
            "predicted / wall",
            "cpu wall / this wall",
            "wrong outputs",
        ],
    );
    let mut runs = vec![(mpi.describe(), mpi_wall, &p_mpi, mpi_wrong)];
    if let Some((wall, wrong)) = cpu_run {
        runs.push((format!("cpu, {slots} threads"), wall, &p_cpu, wrong));
    }
    for (name, wall, p, wrong) in &runs {
        t.row(vec![
            name.clone(),
            stats.pbs.to_string(),
            stats.depth.to_string(),
            format!("{wall:.2}"),
            format!("{:.2}", p.wall_s),
            format!("{:.3}", p.wall_s / wall),
            cpu_run.map_or("-".into(), |(c, _)| format!("{:.3}", c / wall)),
            wrong.to_string(),
        ]);
    }
    let (cpu_wall, cpu_wrong) = cpu_run.map_or((None, 0), |(w, n)| (Some(w), n));
    let value = json!({
        "bench": "engine-mpi",
        "params": params.name,
        "threads": layout,
        "cores": cores,
        "seed": seed,
        "streams": streams,
        "pbs": stats.pbs,
        "depth": stats.depth,
        "pbs_s": pbs_s,
        "transfer_s": transfer_s,
        "latency_s": latency_s,
        "mpi_wall_s": mpi_wall,
        "mpi_predicted_s": p_mpi.wall_s,
        "cpu_threads": slots,
        "cpu_wall_s": cpu_wall,
        "cpu_predicted_s": p_cpu.wall_s,
        "efficiency": cpu_wall.map(|c| c / mpi_wall),
        "wrong_outputs": mpi_wrong + cpu_wrong,
    });
    emit(json.json.as_deref(), &value, &[t])?;
    if mpi_wrong + cpu_wrong > 0 {
        return Err(Error::Config(format!(
            "{} outputs differ from the clear backend",
            mpi_wrong + cpu_wrong
        )));
    }
    Ok(())
}

/// The circuit `bench simulate` replays: `mul32` (a 32-digit product on
/// DIGITS_128) or a program file.
fn circuit_named(name: &str, threads: usize) -> Result<(String, Circuit), Error> {
    if name == "mul32" {
        let p = Program::new(&DIGITS_128);
        p.set_threads(threads);
        let (a, b) = (p.input(32), p.input(32));
        p.output(&(&a * &b));
        return Ok((
            "32-digit product (DIGITS_128)".into(),
            p.build()?.circuit().clone(),
        ));
    }
    let prog = CompiledProgram::load(Path::new(name))?;
    Ok((name.to_string(), prog.circuit().clone()))
}

/// `hearth bench simulate`.
#[allow(clippy::too_many_arguments)]
pub fn simulate_table(
    circuits: &[String],
    ranks: &[usize],
    threads: usize,
    pbs_ms: Option<f64>,
    transfer_us: f64,
    latency_us: f64,
    json: JsonOut,
) -> Result<(), Error> {
    if threads == 0 || ranks.contains(&0) {
        return Err(Error::Config("ranks and threads must be positive".into()));
    }
    let pbs_s = match pbs_ms {
        Some(ms) if ms > 0.0 && ms.is_finite() => ms / 1e3,
        Some(ms) => {
            return Err(Error::Config(format!(
                "--pbs {ms} ms is not a positive time"
            )))
        }
        None => {
            eprintln!("measuring one bootstrap on DIGITS_128 (1 thread)...");
            let (client, server) = generate(&DIGITS_128);
            pbs_seconds(&client, &server, 1)?
        }
    };
    let mut tables = Vec::new();
    let mut rows = Vec::new();
    for name in circuits {
        let (label, circuit) = circuit_named(name, threads)?;
        let st = circuit.stats();
        let mut t = Table::new(
            format!(
                "predicted: {label}, {} PBS, depth {}; {threads} threads per rank, {:.1} ms per PBS, {transfer_us} us per ciphertext, {latency_us} us per remote PBS",
                st.pbs,
                st.depth,
                pbs_s * 1e3
            ),
            &["ranks", "slots", "wall (s)", "speed-up vs 1 rank", "efficiency", "utilisation"],
        );
        let mut one = None;
        for &r in ranks {
            let m = Machine::uniform(r, threads, pbs_s, transfer_us * 1e-6, latency_us * 1e-6)
                .pairing_for(&circuit);
            let p = simulate(&circuit, &m);
            let base = *one.get_or_insert(
                simulate(
                    &circuit,
                    &Machine::uniform(1, threads, pbs_s, 0.0, 0.0).pairing_for(&circuit),
                )
                .wall_s,
            );
            t.row(vec![
                r.to_string(),
                m.slots().to_string(),
                format!("{:.2}", p.wall_s),
                format!("{:.2}", base / p.wall_s),
                format!("{:.3}", base / p.wall_s / r as f64),
                format!("{:.3}", p.utilisation),
            ]);
            rows.push(
                json!({"circuit": label, "pbs": st.pbs, "depth": st.depth, "ranks": r,
                "threads": threads, "wall_s": p.wall_s, "speedup": base / p.wall_s,
                "utilisation": p.utilisation}),
            );
        }
        tables.push(t);
    }
    let value = json!({"bench": "simulate", "pbs_s": pbs_s, "transfer_s": transfer_us * 1e-6,
        "latency_s": latency_us * 1e-6, "rows": rows});
    emit(json.json.as_deref(), &value, &tables)
}
