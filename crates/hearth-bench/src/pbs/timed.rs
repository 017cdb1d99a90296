//! One KS-PBS of hearth beside tfhe-rs shortint's on the same parameters
//! and on the unmodified source set, then bootstraps per second by batch
//! size (feature `tfhe-rs`).

use hearth::ParamsId;
use hearth_cli::progress::{generate, steps};
use serde_json::json;
use tfhe::shortint::parameters::ClassicPBSParameters;

use super::*;
use crate::report::{emit, median, ms, Table};

/// The tfhe-rs shortint parameters with the same LWE/GLWE parameters and
/// decompositions as `p` (2 message + 2 carry bits + padding is pi = 5;
/// 1 + 1 + padding is pi = 3).
fn shortint_twin(p: &ParameterSet) -> ClassicPBSParameters {
    ClassicPBSParameters {
        lwe_dimension: p.lwe_dimension,
        glwe_dimension: p.glwe_dimension,
        polynomial_size: p.polynomial_size,
        lwe_noise_distribution: p.lwe_noise,
        glwe_noise_distribution: p.glwe_noise,
        pbs_base_log: p.pbs_base_log,
        pbs_level: p.pbs_level,
        ks_base_log: p.ks_base_log,
        ks_level: p.ks_level,
        ..shortint_source(p)
    }
}

/// The unmodified tfhe-rs set `p` is derived from.
fn shortint_source(p: &ParameterSet) -> ClassicPBSParameters {
    use tfhe::shortint::parameters::v1_0::V1_0_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M40 as GATES;
    use tfhe::shortint::parameters::v1_8::{
        V1_8_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M128 as BITS,
        V1_8_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 as DIGITS,
    };
    match p.id {
        // The KS32 set is compared with tfhe-rs's default 64-bit pattern
        // (what `FheInt` runs), its twin being DIGITS_128's; the multi-bit
        // set with it too (tfhe-rs's CPU default, classical).
        ParamsId::Digits128
        | ParamsId::Digits128Ks32
        | ParamsId::Digits128Mb4
        | ParamsId::InsecureTestDigits => DIGITS,
        ParamsId::Gates128 | ParamsId::InsecureTestBits => GATES,
        ParamsId::Bits128 => BITS,
    }
}

/// Median latency of tfhe-rs shortint's `apply_lookup_table` (identity).
struct ShortintPbs {
    client: tfhe::shortint::ClientKey,
    server: tfhe::shortint::ServerKey,
    lut: tfhe::shortint::server_key::LookupTableOwned,
    ct: tfhe::shortint::Ciphertext,
}

impl ShortintPbs {
    fn new(params: ClassicPBSParameters) -> Self {
        let (client, server) = tfhe::shortint::gen_keys(params);
        let lut = server.generate_lookup_table(|x| x);
        let ct = client.encrypt(1);
        ShortintPbs {
            client,
            server,
            lut,
            ct,
        }
    }

    fn once(&self) -> Duration {
        let t = Instant::now();
        let r = self.server.apply_lookup_table(&self.ct, &self.lut);
        let d = t.elapsed();
        assert_eq!(self.client.decrypt(&r), 1, "tfhe-rs bootstrap decrypts");
        d
    }
}

pub(super) fn pbs(
    params: &'static ParameterSet,
    engine: hearth::backend::Engine,
    threads: Threads,
    max_batch: usize,
    samples: usize,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    let threads = threads.resolve()?;
    let (client, server) = generate(params);

    // Latency: hearth, tfhe-rs on the same parameters, tfhe-rs on the
    // unmodified source set, interleaved so drift hits all alike.
    eprintln!("generating tfhe-rs shortint keys (same parameters, and source set)...");
    let twin = ShortintPbs::new(shortint_twin(params));
    let source = ShortintPbs::new(shortint_source(params));
    let mut raw = RawPbs::new(&client, &server)?;
    let (mut ours, mut theirs, mut theirs_source) = (Vec::new(), Vec::new(), Vec::new());
    raw.once();
    twin.once();
    source.once();
    let bar = steps(samples as u64);
    bar.set_message("single-PBS latency");
    for _ in 0..samples {
        ours.push(raw.once());
        theirs.push(twin.once());
        theirs_source.push(source.once());
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (ours, theirs, theirs_source) = (median(ours), median(theirs), median(theirs_source));
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    let ratio_source = ours.as_secs_f64() / theirs_source.as_secs_f64();

    // Throughput through the engine.
    let mut batches = Vec::new();
    let mut n = 1;
    while n <= max_batch {
        batches.push(n);
        n *= 2;
    }
    let gpu = hearth_cli::backend::gpu_only(engine, &server)?;
    let bar = steps(batches.len() as u64 + 1);
    let mut rows = Vec::new();
    if let Some(gpu) = &gpu {
        throughput(&client, gpu, 1)?; // warm-up: first launches load the kernels
    }
    for &n in &batches {
        bar.set_message(format!("batch {n} on {threads} threads"));
        let (pbs_s, wall) = cpu_throughput(&client, &server, threads, n)?;
        let on_gpu = match &gpu {
            Some(gpu) => {
                bar.set_message(format!("batch {n} on the gpu"));
                Some(throughput(&client, gpu, n)?)
            }
            None => None,
        };
        rows.push((n, wall, pbs_s, on_gpu));
        bar.inc(1);
    }
    // Speed-up: 1 thread and T threads alternating, median of 3 each, so
    // that noise from the host hits both alike.
    let scale_batch = max_batch.min(32 * threads).max(1);
    bar.set_message(format!("batch {scale_batch}: 1 thread vs {threads}"));
    let (mut ones, mut manys) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        ones.push(cpu_throughput(&client, &server, 1, scale_batch)?.0);
        manys.push(cpu_throughput(&client, &server, threads, scale_batch)?.0);
    }
    ones.sort_by(f64::total_cmp);
    manys.sort_by(f64::total_cmp);
    let (one, many) = (ones[1], manys[1]);
    bar.finish_and_clear();

    let mut lat = Table::new(
        format!(
            "{}: single KS-PBS latency, median of {samples} (1 thread)",
            params.name
        ),
        &[
            "hearth (ms)",
            "tfhe-rs shortint, same parameters (ms)",
            "ratio",
            "tfhe-rs shortint, source set (ms)",
            "ratio",
        ],
    );
    lat.row(vec![
        ms(ours),
        ms(theirs),
        format!("{ratio:.3}"),
        ms(theirs_source),
        format!("{ratio_source:.3}"),
    ]);
    let mut thr = match gpu {
        Some(_) => Table::new(
            format!(
                "{}: throughput, gpu backend beside the cpu backend on {threads} threads (inputs and outputs moved included)",
                params.name
            ),
            &[
                "batch",
                "cpu wall (ms)",
                "cpu PBS/s",
                "gpu wall (ms)",
                "gpu PBS/s",
                "gpu / cpu",
            ],
        ),
        None => Table::new(
            format!("{}: engine throughput on {threads} threads", params.name),
            &["batch", "wall (ms)", "PBS/s"],
        ),
    };
    for (n, wall, p, on_gpu) in &rows {
        let mut row = vec![n.to_string(), ms(*wall), format!("{p:.1}")];
        if let Some((gp, gwall)) = on_gpu {
            row.extend([ms(*gwall), format!("{gp:.1}"), format!("{:.2}", gp / p)]);
        }
        thr.row(row);
    }
    let mut scale = Table::new(
        format!(
            "{}: scaling at batch {scale_batch} (median of 3 alternating runs)",
            params.name
        ),
        &[
            "PBS/s, 1 thread",
            &format!("PBS/s, {threads} threads"),
            "speed-up",
        ],
    );
    scale.row(vec![
        format!("{one:.1}"),
        format!("{many:.1}"),
        format!("{:.2}", many / one),
    ]);
    let value = json!({
        "bench": "pbs",
        "params": params.name,
        "threads": threads,
        "latency_ms": {
            "hearth": ours.as_secs_f64() * 1e3,
            "tfhe_rs_same_params": theirs.as_secs_f64() * 1e3,
            "ratio": ratio,
            "tfhe_rs_source_set": theirs_source.as_secs_f64() * 1e3,
            "ratio_source": ratio_source,
        },
        "throughput": rows.iter().map(|(n, w, p, g)| json!({
            "batch": n,
            "wall_ms": w.as_secs_f64() * 1e3,
            "pbs_per_s": p,
            "gpu_wall_ms": g.map(|(_, gw)| gw.as_secs_f64() * 1e3),
            "gpu_pbs_per_s": g.map(|(gp, _)| gp),
        })).collect::<Vec<_>>(),
        "scaling": {"batch": scale_batch, "one_thread_pbs_per_s": one, "threads_pbs_per_s": many, "speedup": many / one},
    });
    emit(json.json.as_deref(), &value, &[lat, thr, scale])?;
    if let Some(path) = &plot.plot {
        let mut series = vec![crate::plot::Series {
            name: format!("cpu, {}, by batch", crate::plot::threads_word(threads)),
            points: rows.iter().map(|(n, _, p, _)| (*n as f64, *p)).collect(),
        }];
        if rows.iter().any(|r| r.3.is_some()) {
            series.push(crate::plot::Series {
                name: "gpu, by batch".into(),
                points: rows
                    .iter()
                    .filter_map(|(n, _, _, g)| Some((*n as f64, g.as_ref()?.0)))
                    .collect(),
            });
        }
        for (t, v) in [(1, one), (threads, many)] {
            series.push(crate::plot::Series {
                name: format!(
                    "cpu, {}, batch {scale_batch}, median of 3",
                    crate::plot::threads_word(t)
                ),
                points: vec![(scale_batch as f64, v)],
            });
        }
        let title = format!(
            "bench pbs: {} throughput, {threads} threads, {}",
            params.name,
            crate::plot::today()
        );
        crate::plot::save(path, &crate::plot::throughput(&title, &series)?)?;
    }
    Ok(())
}
