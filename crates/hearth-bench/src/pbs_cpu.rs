//! `hearth-bench pbs-cpu`: where one KS-PBS spends its time on a CPU
//! thread, what a second thread bootstrapping at once costs it, and
//! bootstraps per second when `m` inputs share one pass over the keys
//! (`hearth::crypto::many`), against `m` standard bootstraps, on 1 and 2
//! threads. Every mode's outputs are checked bit for bit against the
//! standard path's. docs/results/bootstrap-cpu.md reads its tables.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use hearth::backend::{Backend, CpuBackend};
use hearth::crypto::bootstrap::{accumulator, dense_slots};
use hearth::crypto::many::{ManyPbs, Mode, Profile, Rotation, Switch};
use hearth::{ClientKey, Error, Lut, ParameterSet, ServerKey};
use hearth_cli::progress::{generate, steps};
use serde_json::json;
use tfhe::core_crypto::prelude::{CiphertextModulus, GlweCiphertextOwned, LweCiphertextOwned};

use crate::report::{emit, JsonOut, Table};

/// The modes compared, the standard path first.
const MODES: [Mode; 6] = [
    Mode::STANDARD,
    Mode {
        switch: Switch::Each,
        rotation: Rotation::TfheBatch,
    },
    Mode {
        switch: Switch::Each,
        rotation: Rotation::Fused,
    },
    Mode {
        switch: Switch::Batched,
        rotation: Rotation::Each,
    },
    Mode {
        switch: Switch::Batched,
        rotation: Rotation::TfheBatch,
    },
    Mode {
        switch: Switch::Batched,
        rotation: Rotation::Fused,
    },
];

/// The calling thread's CPU time: the machine may be shared, and time
/// spent descheduled is not the bootstrap's (memory stalls count).
fn thread_cpu() -> Duration {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The process's CPU time (all its threads).
fn process_cpu() -> Duration {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn cpu_clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; `id` is one of the
    // CPU-time clocks Linux knows.
    unsafe { libc::clock_gettime(id, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `f(t)` on `threads` threads started together: the longest wall
/// time, and the largest CPU time a thread spent.
fn together(threads: usize, f: impl Fn(usize) + Sync) -> (Duration, Duration) {
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, f) = (&barrier, &f);
                s.spawn(move || {
                    barrier.wait();
                    let (start, cpu) = (Instant::now(), thread_cpu());
                    f(t);
                    (start.elapsed(), thread_cpu() - cpu)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a bench thread"))
            .fold((Duration::ZERO, Duration::ZERO), |(w, c), (tw, tc)| {
                (w.max(tw), c.max(tc))
            })
    })
}

/// Field-wise medians of profiles.
fn median_profile(profiles: &[Profile]) -> Vec<(&'static str, Duration)> {
    let names: Vec<&'static str> = profiles[0].parts().iter().map(|p| p.0).collect();
    names
        .iter()
        .enumerate()
        .map(|(i, &name)| {
            let mut v: Vec<Duration> = profiles.iter().map(|p| p.parts()[i].1).collect();
            v.sort();
            (name, v[v.len() / 2])
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Inputs, table and per-thread buffers of the bench.
struct Setup<'k> {
    server: &'k ServerKey,
    acc: GlweCiphertextOwned<u64>,
    inputs: Vec<Vec<u64>>,
}

impl<'k> Setup<'k> {
    fn new(client: &ClientKey, server: &'k ServerKey, count: usize) -> Result<Self, Error> {
        let p = server.params();
        let lut = Lut::negacyclic(p.pi, |x| x)?;
        let half = p.message_modulus() as i64 / 2;
        let inputs = (0..count)
            .map(|i| {
                Ok(client
                    .encrypt((i as i64 * 5 + 1) % half)?
                    .lwe()
                    .as_ref()
                    .to_vec())
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Setup {
            server,
            acc: accumulator(p, &dense_slots(lut.table())),
            inputs,
        })
    }

    /// One group of `m` through `mode` on `many`, thread `t`'s inputs.
    fn group(&self, many: &mut ManyPbs, mode: Mode, t: usize) -> Vec<LweCiphertextOwned<u64>> {
        let m = many.m();
        let inputs: Vec<&[u64]> = self.inputs[t * m..(t + 1) * m]
            .iter()
            .map(|v| &v[..])
            .collect();
        let mut outs: Vec<_> = (0..m).map(|_| self.server.new_lwe()).collect();
        many.bootstrap(self.server, mode, &inputs, &self.acc, &mut outs);
        outs
    }
}

/// `hearth-bench pbs-cpu`.
pub fn pbs_cpu(
    params: &'static ParameterSet,
    groups: &[usize],
    batches: &[usize],
    rounds: usize,
    reps: usize,
    json: JsonOut,
) -> Result<(), Error> {
    if batches.contains(&0) {
        return Err(Error::Config(
            "--batches: a batch holds at least one bootstrap".into(),
        ));
    }
    let (client, server) = generate(params);
    let max_m = groups.iter().copied().max().unwrap_or(1);
    let setup = Setup::new(&client, &server, 2 * max_m)?;
    let no_many = || {
        Error::Config(format!(
            "pbs-cpu: {} is not a classical k = 1 set",
            params.name
        ))
    };
    let rounds = rounds.max(1);

    // 1. Profile on one thread, and the same on each of two threads at
    // once, alternating.
    let bar = steps((2 * rounds) as u64);
    bar.set_message("profile: 1 thread, then 2 at once");
    let mut pair = [
        ManyPbs::new(&server, 1).ok_or_else(no_many)?,
        ManyPbs::new(&server, 1).ok_or_else(no_many)?,
    ];
    let (mut alone, mut both) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        alone.push(pair[0].profile(&server, &setup.inputs[0], &setup.acc, reps, thread_cpu));
        bar.inc(1);
        let [a, b] = &mut pair;
        let slots = [std::sync::Mutex::new(a), std::sync::Mutex::new(b)];
        let out: [std::sync::Mutex<Option<Profile>>; 2] = Default::default();
        together(2, |t| {
            let mut many = slots[t].lock().unwrap();
            let p = many.profile(&server, &setup.inputs[t], &setup.acc, reps, thread_cpu);
            *out[t].lock().unwrap() = Some(p);
        });
        let [o0, _] = out;
        both.push(o0.into_inner().unwrap().expect("thread 0 profiled"));
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (alone, both) = (median_profile(&alone), median_profile(&both));
    let whole = alone[0].1.as_secs_f64();
    let mut prof = Table::new(
        format!(
            "{}: one KS-PBS by parts, thread CPU time, median of {rounds} rounds x {reps} (1 thread; and 2 threads each bootstrapping at once)",
            params.name
        ),
        &[
            "part",
            "1 thread (ms)",
            "share of the bootstrap",
            "2 threads at once (ms)",
            "2 at once / alone",
        ],
    );
    for ((name, a), (_, b)) in alone.iter().zip(&both) {
        prof.row(vec![
            name.to_string(),
            format!("{:.3}", a.as_secs_f64() * 1e3),
            format!("{:.1}%", 100.0 * a.as_secs_f64() / whole),
            format!("{:.3}", b.as_secs_f64() * 1e3),
            format!("{:.2}", b.as_secs_f64() / a.as_secs_f64()),
        ]);
    }
    prof.note(
        "The rotation's parts (rotate+subtract+decompose, forward FFTs, products, inverse FFTs) \
         are each run alone over all 918 steps; `fmadd cached` repeats one GGSW's products \
         (key in L1/L2) where `fmadd` streams the key.",
    );

    // 2. Throughput by group size, modes alternating within each round.
    let mut rows = Vec::new();
    let mut values = Vec::new();
    let bar = steps((groups.len() * 2 * rounds) as u64);
    for &m in groups {
        let mut manys: Vec<ManyPbs> = (0..2)
            .map(|_| ManyPbs::new(&server, m).ok_or_else(no_many))
            .collect::<Result<_, _>>()?;
        // Bit for bit: every mode gives the standard path's outputs.
        for (t, many) in manys.iter_mut().enumerate() {
            let standard = setup.group(many, Mode::STANDARD, t);
            for &mode in &MODES[1..] {
                if setup.group(many, mode, t) != standard {
                    return Err(Error::Config(format!(
                        "pbs-cpu: {} differs from the standard bootstrap (m = {m})",
                        mode.name()
                    )));
                }
            }
            for (o, v) in standard.iter().zip(&setup.inputs[t * m..]) {
                let ct = hearth::Ciphertext::from_lwe(params.id, server.key_id(), o.clone());
                let lwe =
                    LweCiphertextOwned::from_container(v.clone(), CiphertextModulus::new_native());
                let input = hearth::Ciphertext::from_lwe(params.id, server.key_id(), lwe);
                if client.decrypt(&ct)? != client.decrypt(&input)? {
                    return Err(Error::Config(
                        "pbs-cpu: a bootstrap decrypted wrongly".into(),
                    ));
                }
            }
        }
        for threads in [1, 2] {
            bar.set_message(format!("m = {m}, {threads} thread(s)"));
            // Per mode: wall PBS/s, CPU ms per PBS (the busiest thread),
            // and both as ratios to the standard path in the same round.
            let mut wall_pbs: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
            let mut cpu_ms: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
            let mut wall_ratio: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
            let mut cpu_ratio: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
            for _ in 0..rounds {
                let mut this = Vec::new();
                for &mode in &MODES {
                    let slots: Vec<_> = manys.iter_mut().map(std::sync::Mutex::new).collect();
                    let (wall, cpu) = together(threads, |t| {
                        let mut many = slots[t].lock().unwrap();
                        setup.group(&mut many, mode, t);
                    });
                    this.push((
                        (threads * m) as f64 / wall.as_secs_f64(),
                        cpu.as_secs_f64() * 1e3 / m as f64,
                    ));
                }
                for (i, (w, c)) in this.iter().enumerate() {
                    wall_pbs[i].push(*w);
                    cpu_ms[i].push(*c);
                    wall_ratio[i].push(w / this[0].0);
                    cpu_ratio[i].push(this[0].1 / c);
                }
                bar.inc(1);
            }
            for (i, mode) in MODES.iter().enumerate() {
                let (w, c) = (median(wall_pbs[i].clone()), median(cpu_ms[i].clone()));
                let (wr, cr) = (median(wall_ratio[i].clone()), median(cpu_ratio[i].clone()));
                rows.push(vec![
                    m.to_string(),
                    threads.to_string(),
                    mode.name(),
                    format!("{c:.2}"),
                    format!("{cr:.3}"),
                    format!("{w:.1}"),
                    format!("{wr:.3}"),
                ]);
                values.push(json!({
                    "m": m, "threads": threads, "mode": mode.name(),
                    "cpu_ms_per_pbs": c, "cpu_speedup_vs_standard": cr,
                    "wall_pbs_per_s": w, "wall_speedup_vs_standard": wr,
                }));
            }
        }
    }
    bar.finish_and_clear();

    // 3. The cpu backend on 2 threads: batches of independent bootstraps
    // with grouping off (1) and on (the default group), alternating.
    let group = hearth::backend::cpu::DEFAULT_GROUP;
    let bar = steps((batches.len() * rounds) as u64);
    bar.set_message(format!("cpu backend, 2 threads: group 1 vs {group}"));
    let mut engine_rows = Vec::new();
    for &n in batches {
        let circuit = crate::pbs::batch_circuit(params, n)?;
        let inputs = (0..n)
            .map(|i| client.encrypt((i % 2) as i64))
            .collect::<Result<Vec<_>, _>>()?;
        let backends = [
            CpuBackend::new(&server, Some(2))?.with_group(1),
            CpuBackend::new(&server, Some(2))?.with_group(group),
        ];
        let mut outs = Vec::new();
        for b in &backends {
            outs.push(b.evaluate(&circuit, &inputs)?); // warm-up, and the check
        }
        let lwes = |v: &[hearth::Ciphertext]| -> Vec<Vec<u64>> {
            v.iter().map(|c| c.lwe().as_ref().to_vec()).collect()
        };
        if lwes(&outs[0]) != lwes(&outs[1]) {
            return Err(Error::Config("pbs-cpu: grouped run differs".into()));
        }
        let (mut walls, mut cpus) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
        let (mut wall_ratio, mut cpu_ratio) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            let mut this = Vec::new();
            for b in &backends {
                let (start, cpu) = (Instant::now(), process_cpu());
                b.evaluate(&circuit, &inputs)?;
                this.push((
                    start.elapsed().as_secs_f64(),
                    (process_cpu() - cpu).as_secs_f64(),
                ));
            }
            for (i, (w, c)) in this.iter().enumerate() {
                walls[i].push(n as f64 / w);
                cpus[i].push(c * 1e3 / n as f64);
            }
            wall_ratio.push(this[0].0 / this[1].0);
            cpu_ratio.push(this[0].1 / this[1].1);
            bar.inc(1);
        }
        engine_rows.push((
            n,
            [median(walls[0].clone()), median(walls[1].clone())],
            [median(cpus[0].clone()), median(cpus[1].clone())],
            median(wall_ratio),
            median(cpu_ratio),
        ));
    }
    bar.finish_and_clear();
    let mut eng = Table::new(
        format!(
            "{}: cpu backend on 2 threads, independent bootstraps, group 1 (off) vs {group}, median of {rounds} alternating rounds",
            params.name
        ),
        &[
            "batch",
            "PBS/s, group 1",
            &format!("PBS/s, group {group}"),
            "speed-up (wall)",
            "CPU ms per PBS, group 1",
            &format!("CPU ms per PBS, group {group}"),
            "speed-up (CPU)",
        ],
    );
    for (n, w, c, wr, cr) in &engine_rows {
        eng.row(vec![
            n.to_string(),
            format!("{:.1}", w[0]),
            format!("{:.1}", w[1]),
            format!("{wr:.3}"),
            format!("{:.2}", c[0]),
            format!("{:.2}", c[1]),
            format!("{cr:.3}"),
        ]);
    }
    eng.note("CPU: the process's CPU time (both threads) per bootstrap. Outputs of both runs equal bit for bit.");

    let mut thr = Table::new(
        format!(
            "{}: bootstraps per second, groups of m per thread, median of {rounds} alternating rounds",
            params.name
        ),
        &[
            "m",
            "threads",
            "mode",
            "CPU ms per PBS",
            "speed-up (CPU)",
            "wall PBS/s",
            "speed-up (wall)",
        ],
    );
    for r in rows {
        thr.row(r);
    }
    thr.note(
        "CPU ms per PBS: the busiest thread's CPU time over its m bootstraps. Speed-ups: \
         the standard path's time over the mode's, in the same round (median of the rounds' \
         ratios). Every mode's outputs equal the standard path's bit for bit (checked before \
         timing).",
    );
    let part = |v: &[(&str, Duration)]| {
        v.iter()
            .map(|(n, d)| (n.to_string(), json!(d.as_secs_f64() * 1e3)))
            .collect::<serde_json::Map<_, _>>()
    };
    let value = json!({
        "bench": "pbs-cpu",
        "params": params.name,
        "rounds": rounds,
        "reps": reps,
        "profile_ms_1_thread": part(&alone),
        "profile_ms_2_threads_at_once": part(&both),
        "throughput": values,
        "engine_2_threads": engine_rows.iter().map(|(n, w, c, wr, cr)| json!({
            "batch": n, "group": group,
            "pbs_per_s_group_1": w[0], "pbs_per_s_grouped": w[1], "wall_speedup": wr,
            "cpu_ms_per_pbs_group_1": c[0], "cpu_ms_per_pbs_grouped": c[1], "cpu_speedup": cr,
        })).collect::<Vec<_>>(),
    });
    emit(json.json.as_deref(), &value, &[prof, thr, eng])
}
