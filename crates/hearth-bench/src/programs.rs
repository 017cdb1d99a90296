//! `hearth-bench programs`: whole programs (a sum, a dot product, a
//! polynomial, an argmax, a sort, a mixing round, a CRC, a regression, a
//! Hamming distance), T2's TFHE benchmark suite ([`t2`], `--suite t2`)
//! and tfhe-rs's ERC7984 transfer ([`apps`], `--suite apps`), each
//! written once with hearth's word API and once with tfhe-rs's high-level
//! API ([`tfhe_side`], in each of the forms tfhe-rs publishes where it
//! publishes several; [`t2_tfhe`]), both checked against plain
//! Rust on the same inputs: #PBS and depth on the count backend with the
//! simulator's prediction for 16 and 64 threads, or encrypted and timed
//! beside tfhe-rs in one process on the same threads.

mod t2;
#[cfg(feature = "tfhe-rs")]
mod t2_tfhe;
#[cfg(feature = "tfhe-rs")]
mod tfhe_side;

use std::path::Path;
use std::time::{Duration, Instant};

use hearth::api::{Bool, I32, U16, U32, U64, U8};
use hearth::backend::Engine;
use hearth::circuit::schedule::{simulate, Machine};
use hearth::{CompiledProgram, Error, ParameterSet, Program};
use hearth_cli::progress::{generate, steps};
use num_bigint::BigInt;
use rand::SeedableRng;
use serde_json::json;

use crate::plot::GroupedBars;
use crate::report::{emit, median, ms, Table};

/// Threads the simulator predicts each program's time for.
const PREDICT: [usize; 2] = [16, 64];

/// Which programs `--suite` runs.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// The nine programs (a sum, a dot product, ... a Hamming distance).
    Nine,
    /// T2's TFHE benchmark suite (13 programs, keys `t2-...`).
    T2,
    /// tfhe-rs's published application benchmark: the ERC7984
    /// confidential token transfer (key `erc7984`).
    Apps,
    /// All of them.
    All,
}

impl Suite {
    /// Its name in `--suite`, the title and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Nine => "nine",
            Suite::T2 => "t2",
            Suite::Apps => "apps",
            Suite::All => "all",
        }
    }

    /// Its programs.
    pub fn specs(self) -> Vec<Spec> {
        match self {
            Suite::Nine => nine(),
            Suite::T2 => t2::all(),
            Suite::Apps => apps(),
            Suite::All => nine().into_iter().chain(t2::all()).chain(apps()).collect(),
        }
    }
}

/// What to run and where to write it (the command's options).
pub struct Options<'a> {
    /// The programs: the nine, T2's, tfhe-rs's ERC7984, or all.
    pub suite: Suite,
    /// None: count only; else encrypted on this engine, beside tfhe-rs.
    pub engine: Option<Engine>,
    /// The words' set: the one key (`DIGITS_128`, `DIGITS_KS32_128`) or a
    /// words-only one (`GATES_128`, `BITS_128`).
    pub params: &'static ParameterSet,
    pub threads: usize,
    pub cases: &'a [String],
    pub samples: usize,
    /// One bootstrap's time on one thread for the predictions (default:
    /// measured when encrypting, else 11.5 ms, GATES_128 on the 2-core
    /// development machine).
    pub pbs: Option<Duration>,
    pub json: Option<&'a Path>,
    pub plot: Option<&'a Path>,
}

/// Runs every program: #PBS, depth and widest level (count backend), the
/// simulator's time for 16 and 64 threads, and with an engine each
/// encrypted `samples` times on random inputs, alternating with tfhe-rs
/// on the same inputs, every output of both checked against plain Rust.
/// Words run on `params`.
pub fn programs(o: Options<'_>) -> Result<(), Error> {
    let Options {
        suite,
        engine,
        params,
        threads,
        cases,
        samples,
        pbs,
        json: json_out,
        plot,
    } = o;
    let mut specs = suite.specs();
    if let Some(bad) = cases.iter().find(|c| !specs.iter().any(|s| s.key == *c)) {
        let keys: Vec<_> = specs.iter().map(|s| s.key).collect();
        let elsewhere = [Suite::Nine, Suite::T2, Suite::Apps]
            .into_iter()
            .find(|other| other.specs().iter().any(|s| s.key == *bad))
            .map_or(String::new(), |other| {
                format!(" (it is in --suite {} and all)", other.name())
            });
        return Err(Error::Config(format!(
            "--cases {bad}: no such program in the {} suite{elsewhere} (programs: {})",
            suite.name(),
            keys.join(", ")
        )));
    }
    if !cases.is_empty() {
        specs.retain(|s| cases.iter().any(|c| c == s.key));
    }
    if plot.is_some() && engine.is_none() {
        return Err(Error::Config(
            "--plot draws the ratios to tfhe-rs: give --backend cpu or gpu".into(),
        ));
    }
    #[cfg(not(feature = "tfhe-rs"))]
    if engine.is_some() {
        return Err(crate::tfhe::missing());
    }
    let keys = engine.map(|_| generate(params));
    let backend = match (&keys, engine) {
        (Some((_, server)), Some(engine)) => Some(hearth_cli::backend::evaluator(
            engine,
            server,
            Some(threads),
        )?),
        _ => None,
    };
    #[cfg(feature = "tfhe-rs")]
    let tfhe = match engine {
        Some(e) => crate::tfhe::tfhe_pools(threads, e)?,
        None => Vec::new(),
    };
    #[cfg(feature = "tfhe-rs")]
    let sets: Vec<&str> = tfhe.iter().map(|(set, _, _)| set.name()).collect();
    #[cfg(not(feature = "tfhe-rs"))]
    let sets: Vec<&str> = Vec::new();
    let pbs_s = match (pbs, &keys) {
        (Some(d), _) => d.as_secs_f64(),
        (None, Some((client, server))) => {
            eprintln!("measuring one bootstrap on {} (1 thread)...", params.name);
            crate::scale::pbs_seconds(client, server, 1)?
        }
        (None, None) => 11.5e-3,
    };
    let mut headers = vec!["program", "#PBS", "depth", "widest level"];
    let predicted: Vec<String> = PREDICT
        .iter()
        .map(|n| format!("predicted, {n} threads (ms)"))
        .collect();
    headers.extend(predicted.iter().map(String::as_str));
    let set_headers: Vec<String> = sets.iter().map(|s| format!("tfhe-rs {s} (ms)")).collect();
    if engine.is_some() {
        headers.extend(["hearth (ms)", "tfhe-rs #PBS"]);
        headers.extend(set_headers.iter().map(String::as_str));
        headers.extend(["reference", "ratio"]);
    }
    let mut t = Table::new(
        format!(
            "Whole programs ({}): hearth's words on {}, planned for {threads} threads{}",
            match suite {
                Suite::Nine => "the nine",
                Suite::T2 => "T2's suite",
                Suite::Apps => "tfhe-rs's application benchmark",
                Suite::All => "the nine, T2's suite and tfhe-rs's application benchmark",
            },
            params.name,
            backend.as_ref().map_or(String::new(), |b| format!(
                ", encrypted on {}, beside tfhe-rs FheUint / FheInt on the same threads (on each of its \
                 CPU sets; the reference is the faster)",
                b.describe()
            ))
        ),
        &headers,
    );
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    // Each time of a program tfhe-rs writes in several forms.
    let mut form_notes: Vec<String> = Vec::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(38);
    let bar = steps(specs.len() as u64);
    for spec in &specs {
        bar.set_message(spec.name);
        let prog = spec.program(params, threads)?;
        let st = prog.circuit().stats();
        let mut cells = vec![
            spec.name.to_string(),
            st.pbs.to_string(),
            st.depth.to_string(),
            st.max_width().to_string(),
        ];
        let mut predicted = Vec::new();
        for n in PREDICT {
            let planned = spec.program(params, n)?;
            let machine = Machine::uniform(1, n, pbs_s, 0.0, 0.0).pairing_for(planned.circuit());
            let wall = simulate(planned.circuit(), &machine).wall_s;
            cells.push(format!("{:.0}", wall * 1e3));
            predicted.push(json!({"threads": n, "ms": wall * 1e3}));
        }
        let mut row = json!({
            "program": spec.name, "pbs": st.pbs, "depth": st.depth, "widest_level": st.max_width(),
            "predicted": predicted,
        });
        if let (Some((client, _)), Some(backend)) = (&keys, &backend) {
            // tfhe-rs's forms of the program (several where tfhe-rs
            // publishes several: each timed, the fastest the reference).
            #[cfg(feature = "tfhe-rs")]
            let forms = tfhe_side::forms(spec.key);
            #[cfg(not(feature = "tfhe-rs"))]
            let forms: &[&str] = &[""];
            let mut hearth_times = Vec::new();
            // Each sample's time, by set and form.
            #[allow(unused_mut)]
            let mut tfhe_times: Vec<Vec<Vec<Duration>>> =
                vec![vec![Vec::new(); forms.len()]; sets.len()];
            #[allow(unused_mut)]
            let mut tfhe_pbs: Vec<Option<u64>> = vec![None; forms.len()];
            for _ in 0..samples.max(1) {
                let ins = spec.random_inputs(&mut rng);
                let want = spec.reference(&ins);
                let cts = spec
                    .inputs
                    .iter()
                    .zip(&ins)
                    .map(|(&(bits, signed), &v)| client.encrypt_word_of(v, bits, signed))
                    .collect::<Result<Vec<_>, _>>()?;
                let start = Instant::now();
                let out = prog.run_encrypted(backend, &cts)?;
                hearth_times.push(start.elapsed());
                let got = out
                    .iter()
                    .map(|o| client.decrypt_word_value(o))
                    .collect::<Result<Vec<_>, _>>()?;
                let want_big: Vec<BigInt> = want.iter().map(|&v| BigInt::from(v)).collect();
                if got != want_big {
                    return Err(Error::Config(format!(
                        "{}: hearth gave {got:?} for {ins:?}, plain Rust {want:?}",
                        spec.name
                    )));
                }
                #[cfg(feature = "tfhe-rs")]
                for (k, (set, ck, pool)) in tfhe.iter().enumerate() {
                    for (f, form) in forms.iter().enumerate() {
                        let run = pool.install(|| match spec.key.strip_prefix("t2-") {
                            Some(t2_key) => t2_tfhe::run(t2_key, ck, &ins),
                            None => tfhe_side::run(spec.key, form, ck, &ins),
                        });
                        if run.outputs != want {
                            let on = format!("{} {form}", set.name());
                            return Err(Error::Config(format!(
                                "{}: tfhe-rs ({}) gave {:?} for {ins:?}, plain Rust {want:?}",
                                spec.name,
                                on.trim_end(),
                                run.outputs
                            )));
                        }
                        tfhe_times[k][f].push(run.time);
                        tfhe_pbs[f] = tfhe_pbs[f].or(run.pbs);
                    }
                }
            }
            let h = median(hearth_times);
            // Medians by set and form; each set's fastest form.
            let tf: Vec<Vec<Duration>> = tfhe_times
                .into_iter()
                .map(|by_form| by_form.into_iter().map(median).collect())
                .collect();
            let fastest: Vec<(Duration, usize)> = tf
                .iter()
                .map(|by_form| {
                    let f = (0..by_form.len()).min_by_key(|&f| by_form[f]);
                    f.map_or((Duration::MAX, 0), |f| (by_form[f], f))
                })
                .collect();
            let (best, reference, form) = fastest
                .iter()
                .zip(&sets)
                .min_by_key(|((t, _), _)| *t)
                .map(|(&(t, f), s)| (t, *s, f))
                .ok_or_else(crate::tfhe::missing_comparison)?;
            let ratio = h.as_secs_f64() / best.as_secs_f64();
            cells.push(ms(h));
            cells.push(tfhe_pbs[form].map_or("-".into(), |n| n.to_string()));
            cells.extend(fastest.iter().map(|&(t, _)| ms(t)));
            let several = forms.len() > 1;
            cells.extend([
                if several {
                    format!("{reference} {}", forms[form])
                } else {
                    reference.to_string()
                },
                format!("{ratio:.2}"),
            ]);
            ratios.push((spec.name.to_string(), "hearth / tfhe-rs".to_string(), ratio));
            row["hearth_ms"] = json!(h.as_secs_f64() * 1e3);
            row["tfhe_ms"] = json!(best.as_secs_f64() * 1e3);
            row["tfhe_ms_by_set"] = sets
                .iter()
                .zip(&fastest)
                .map(|(s, (t, _))| (s.to_string(), json!(t.as_secs_f64() * 1e3)))
                .collect::<serde_json::Map<_, _>>()
                .into();
            row["tfhe_reference"] = json!(reference);
            row["tfhe_pbs"] = json!(tfhe_pbs[form]);
            row["ratio"] = json!(ratio);
            if several {
                row["tfhe_form"] = json!(forms[form]);
                let mut by_form = serde_json::Map::new();
                let mut text = Vec::new();
                for (f, name) in forms.iter().enumerate() {
                    let times: Vec<String> = tf.iter().map(|t| ms(t[f])).collect();
                    let pbs = tfhe_pbs[f].map_or("-".into(), |n| n.to_string());
                    text.push(format!("{name} {} ms ({pbs} PBS)", times.join(" / ")));
                    let ms_by_set: serde_json::Map<_, _> = sets
                        .iter()
                        .zip(&tf)
                        .map(|(s, t)| (s.to_string(), json!(t[f].as_secs_f64() * 1e3)))
                        .collect();
                    let v = json!({"pbs": tfhe_pbs[f], "ms_by_set": ms_by_set});
                    by_form.insert(name.to_string(), v);
                }
                row["tfhe_forms"] = by_form.into();
                form_notes.push(format!(
                    " {}: tfhe-rs's forms, on {}: {}.",
                    spec.name,
                    sets.join(" / "),
                    text.join("; ")
                ));
            }
        }
        t.row(cells);
        rows.push(row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let t2_note = if !matches!(suite, Suite::T2 | Suite::All) {
        ""
    } else {
        " T2's programs (TrustworthyComputing/T2-FHE-Compiler-and-Benchmarks): T2's operations \
         and sizes at the word width each runs at (PIR at 6 bits, T2's 5 on tfhe-rs's nearest \
         width, on both sides), its encrypted zeros and initial values clear, NN nn_10's \
         duplicate dot products computed once on both sides; tfhe-rs selects with clear values \
         and if_then_zero on the CPU, between encrypted values on the GPU (its GPU key lacks \
         them)."
    };
    let apps_note = if !matches!(suite, Suite::Apps | Suite::All) {
        String::new()
    } else {
        format!(
            " ERC7984 (tfhe-rs's tfhe-benchmark erc7984, u64 balances): tfhe-rs runs each of its \
             published forms (whitepaper: ge, then if_then_zero on the amount, a select on the \
             GPU; no_cmux: the amount times the boolean cast to FheUint64; overflow: \
             overflowing_sub's borrow selects the old balance, the amount times its negation is \
             added), the fastest its reference and its #PBS that form's.{}",
            form_notes.concat()
        )
    };
    t.note(&format!(
        "Outputs of both libraries are checked against plain Rust on the same random inputs; times \
         are medians of {samples} samples, hearth and tfhe-rs alternating, encryption and \
         decryption outside the time. tfhe-rs runs on each of its CPU sets (KS_PBS: \
         PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128, its default; KS32: \
         PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128, its benchmark pages' set; on the GPU its \
         default alone); the reference is the faster per program. Ratio: hearth's time / the \
         reference's (below 1: hearth faster). tfhe-rs #PBS from its pbs-stats counter (a build with --features tfhe-pbs-stats; else -). \
         Predicted: hearth's circuit planned for that many threads, on the simulator with {:.1} ms \
         per bootstrap on one thread and none lost to scheduling; tfhe-rs has no circuit to \
         simulate, so it has no predicted column.{t2_note}{apps_note}",
        pbs_s * 1e3
    ));
    emit(
        json_out,
        &json!({"bench": "programs", "suite": suite.name(), "params": params.name, "threads": threads, "samples": samples,
                "pbs_s": pbs_s,
                "backend": engine.map(|e| format!("{e:?}").to_lowercase()), "rows": rows}),
        &[t],
    )?;
    if let Some(path) = plot {
        let chart = GroupedBars::from_triples(
            format!(
                "bench programs --suite {}: hearth words on {} beside tfhe-rs, {}, {}",
                suite.name(),
                params.name,
                crate::plot::threads_word(threads),
                crate::plot::today()
            ),
            "time hearth / tfhe-rs (below 1: hearth faster)".into(),
            &ratios,
        );
        crate::plot::save(path, &crate::plot::ratio_bars(&chart)?)?;
    }
    Ok(())
}

/// One program: its inputs (bits, signed), how hearth builds it, and what
/// plain Rust computes from the same inputs.
pub struct Spec {
    /// Its name in `--cases`.
    pub key: &'static str,
    pub name: &'static str,
    pub inputs: &'static [(usize, bool)],
    build: fn(&Program),
    reference: fn(&[i128]) -> Vec<i128>,
}

impl Spec {
    /// The program on `params` (words need a set of the bits or the
    /// digits family), planned for `threads`.
    pub fn program(
        &self,
        params: &'static ParameterSet,
        threads: usize,
    ) -> Result<CompiledProgram, Error> {
        let p = Program::new(params);
        p.set_threads(threads);
        (self.build)(&p);
        p.build()
    }

    /// Plain Rust's outputs for `inputs` (each within its width).
    pub fn reference(&self, inputs: &[i128]) -> Vec<i128> {
        (self.reference)(inputs)
    }

    /// Random inputs within each input's width.
    pub fn random_inputs(&self, rng: &mut impl rand::Rng) -> Vec<i128> {
        self.inputs
            .iter()
            .map(|&(bits, signed)| {
                let v = rng.gen::<u128>() & ((1u128 << bits) - 1);
                if signed {
                    ((v << (128 - bits)) as i128) >> (128 - bits)
                } else {
                    v as i128
                }
            })
            .collect()
    }
}

const U32X16: &[(usize, bool)] = &[(32, false); 16];
const U16X16: &[(usize, bool)] = &[(16, false); 16];
const U16X32: &[(usize, bool)] = &[(16, false); 32];
const U16X8: &[(usize, bool)] = &[(16, false); 8];
const U32X4: &[(usize, bool)] = &[(32, false); 4];
const U8X8: &[(usize, bool)] = &[(8, false); 8];
const I32X10: &[(usize, bool)] = &[(32, true); 10];
const U32X2: &[(usize, bool)] = &[(32, false); 2];

/// Horner's coefficients, highest degree first.
const HORNER: [u32; 5] = [3, 5, 7, 11, 13];
/// The diabetes model's weights and bias (data/diabetes/model.json).
const DIABETES_WEIGHTS: [i32; 10] = [-27, -99, 297, 139, -258, 124, -36, 44, 370, 14];
const DIABETES_BIAS: i32 = 78704;
/// Batcher's odd-even merge sort on 8 inputs: 19 compare-exchanges.
const SORT8: [(usize, usize); 19] = [
    (0, 1),
    (2, 3),
    (0, 2),
    (1, 3),
    (1, 2),
    (4, 5),
    (6, 7),
    (4, 6),
    (5, 7),
    (5, 6),
    (0, 4),
    (2, 6),
    (2, 4),
    (1, 5),
    (3, 7),
    (3, 5),
    (1, 2),
    (3, 4),
    (5, 6),
];

/// The nine programs, in the order.
pub fn nine() -> Vec<Spec> {
    vec![
        Spec {
            key: "sum",
            name: "sum of 16 u32",
            inputs: U32X16,
            // Written as users write them: the builder fuses the sums.
            build: |p| {
                let xs: Vec<_> = (0..16).map(|_| U32::input(p)).collect();
                let sum = xs[1..].iter().fold(xs[0].clone(), |s, x| &s + x);
                p.output(&sum);
            },
            reference: |x| vec![x.iter().fold(0u32, |s, &v| s.wrapping_add(v as u32)) as i128],
        },
        Spec {
            key: "dot",
            name: "dot product of 16 u16 pairs in u32",
            inputs: U16X32,
            build: |p| {
                let xs: Vec<U32> = (0..32).map(|_| U16::input(p).cast()).collect();
                let dot = (1..16).fold(&xs[0] * &xs[16], |acc, i| &acc + &(&xs[i] * &xs[16 + i]));
                p.output(&dot);
            },
            reference: |x| {
                let s = (0..16).fold(0u32, |s, i| {
                    s.wrapping_add((x[i] as u32).wrapping_mul(x[16 + i] as u32))
                });
                vec![s as i128]
            },
        },
        Spec {
            key: "horner",
            name: "Horner, degree 4, u32",
            inputs: &[(32, false)],
            build: |p| {
                let x = U32::input(p);
                let mut acc = U32::constant(p, HORNER[0]);
                for &c in &HORNER[1..] {
                    acc = &(&acc * &x) + &U32::constant(p, c);
                }
                p.output(&acc);
            },
            reference: |x| {
                let x = x[0] as u32;
                let y = HORNER[1..]
                    .iter()
                    .fold(HORNER[0], |acc, &c| acc.wrapping_mul(x).wrapping_add(c));
                vec![y as i128]
            },
        },
        Spec {
            key: "argmax",
            name: "max and argmax of 16 u16",
            inputs: U16X16,
            build: |p| {
                let mut best: Vec<(U16, U8)> = (0..16)
                    .map(|i| (U16::input(p), U8::constant(p, i)))
                    .collect();
                // A tournament: the later of two wins only when larger, so
                // ties keep the first index, as Rust's below.
                while best.len() > 1 {
                    best = best
                        .chunks(2)
                        .map(|pair| {
                            let ((a, ia), (b, ib)) = (&pair[0], &pair[1]);
                            let later: Bool = b.gt(a);
                            (later.select(b, a), later.select(ib, ia))
                        })
                        .collect();
                }
                p.output(&best[0].0);
                p.output(&best[0].1);
            },
            reference: |x| {
                let max = *x.iter().max().unwrap();
                let arg = x.iter().position(|&v| v == max).unwrap();
                vec![max, arg as i128]
            },
        },
        Spec {
            key: "sort",
            name: "sorting network on 8 u16",
            inputs: U16X8,
            build: |p| {
                let mut v: Vec<U16> = (0..8).map(|_| U16::input(p)).collect();
                for (i, j) in SORT8 {
                    let (lo, hi) = (v[i].min(&v[j]), v[i].max(&v[j]));
                    v[i] = lo;
                    v[j] = hi;
                }
                for x in &v {
                    p.output(x);
                }
            },
            reference: |x| {
                let mut v = x.to_vec();
                v.sort_unstable();
                v
            },
        },
        Spec {
            key: "chacha",
            name: "ChaCha quarter-round, u32",
            inputs: U32X4,
            build: |p| {
                let (mut a, mut b, mut c, mut d) =
                    (U32::input(p), U32::input(p), U32::input(p), U32::input(p));
                for (r1, r2) in [(16, 12), (8, 7)] {
                    a = &a + &b;
                    d = (&d ^ &a).rotate_left(r1);
                    c = &c + &d;
                    b = (&b ^ &c).rotate_left(r2);
                }
                for x in [&a, &b, &c, &d] {
                    p.output(x);
                }
            },
            reference: |x| {
                let [mut a, mut b, mut c, mut d] = [0, 1, 2, 3].map(|i| x[i] as u32);
                for (r1, r2) in [(16, 12), (8, 7)] {
                    a = a.wrapping_add(b);
                    d = (d ^ a).rotate_left(r1);
                    c = c.wrapping_add(d);
                    b = (b ^ c).rotate_left(r2);
                }
                [a, b, c, d].iter().map(|&v| v as i128).collect()
            },
        },
        Spec {
            key: "crc16",
            name: "CRC-16 of 8 bytes",
            inputs: U8X8,
            build: |p| {
                // CRC-16/CCITT-FALSE, bit by bit: shift, and where the top
                // bit was set, xor the polynomial.
                let mut crc = U16::constant(p, 0xffffu32);
                let poly = U16::constant(p, 0x1021u32);
                for _ in 0..8 {
                    let byte: U16 = U8::input(p).cast();
                    crc = &crc ^ &(&byte << 8);
                    for _ in 0..8 {
                        let top = crc.bit(15);
                        let shifted = &crc << 1;
                        crc = top.select(&(&shifted ^ &poly), &shifted);
                    }
                }
                p.output(&crc);
            },
            reference: |x| vec![crc16(x) as i128],
        },
        Spec {
            key: "regression",
            name: "diabetes regression, i32",
            inputs: I32X10,
            build: |p| {
                let xs: Vec<_> = (0..10).map(|_| I32::input(p)).collect();
                let y = xs
                    .iter()
                    .zip(DIABETES_WEIGHTS)
                    .fold(I32::constant(p, DIABETES_BIAS), |acc, (x, w)| {
                        &acc + &(x * w as i64)
                    });
                p.output(&y);
            },
            reference: |x| {
                let y = x
                    .iter()
                    .zip(DIABETES_WEIGHTS)
                    .fold(DIABETES_BIAS, |s, (&v, w)| {
                        s.wrapping_add((v as i32).wrapping_mul(w))
                    });
                vec![y as i128]
            },
        },
        Spec {
            // Where hearth is weakest today: count_ones on words.
            key: "hamming",
            name: "Hamming distance of two u32",
            inputs: U32X2,
            build: |p| {
                let (a, b) = (U32::input(p), U32::input(p));
                p.output(&(&a ^ &b).count_ones());
            },
            reference: |x| vec![((x[0] as u32) ^ (x[1] as u32)).count_ones() as i128],
        },
    ]
}

const U64X3: &[(usize, bool)] = &[(64, false); 3];

/// ERC7984 in plain Rust: `[from, to, amount]` to `[new_from, new_to]`,
/// the amount moved only when `from >= amount` (`to` wraps).
fn erc7984(x: &[i128]) -> Vec<i128> {
    let [from, to, amount] = [0, 1, 2].map(|i| x[i] as u64);
    let moved = if from >= amount { amount } else { 0 };
    vec![
        from.wrapping_sub(moved) as i128,
        to.wrapping_add(moved) as i128,
    ]
}

/// tfhe-rs's application benchmark: the ERC7984 confidential token
/// transfer (tfhe-rs's `tfhe-benchmark` `erc7984`), on `u64` balances.
pub fn apps() -> Vec<Spec> {
    vec![Spec {
        key: "erc7984",
        name: "ERC7984 transfer, u64",
        inputs: U64X3,
        // The whitepaper's form: a comparison, the amount or zero, a
        // subtraction and an addition. The fewest bootstraps of the forms
        // tried: the product by the flag cast to a word and an AND with
        // the flag's mask build the same circuit; the borrow of
        // `overflowing_sub` as the flag costs more and is deeper; adding
        // and subtracting the whole amount first, then selecting both
        // balances, is shallower but costs more bootstraps.
        build: |p| {
            let (from, to, amount) = (U64::input(p), U64::input(p), U64::input(p));
            let enough = from.ge(&amount);
            let moved = enough.select(&amount, &U64::constant(p, 0));
            p.output(&(&from - &moved));
            p.output(&(&to + &moved));
        },
        reference: erc7984,
    }]
}

fn crc16(bytes: &[i128]) -> u16 {
    let mut crc = 0xffffu16;
    for &b in bytes {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// `prog` on the clear backend (one value per input).
#[cfg(test)]
fn run_clear(prog: &CompiledProgram, inputs: &[i128]) -> Vec<i128> {
    let values: Vec<Vec<BigInt>> = inputs.iter().map(|&v| vec![BigInt::from(v)]).collect();
    let out = prog.run_clear(&values).unwrap();
    out.iter()
        .flatten()
        .map(|v| i128::try_from(v).expect("a word fits in i128"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every program on the clear backend equals plain Rust on random
    /// inputs, on the bits family's test set, with the CRC-16 also checked
    /// against its published check value.
    #[test]
    fn every_program_equals_plain_rust_on_the_clear_backend() {
        // The standard check value of CRC-16/CCITT-FALSE ("123456789").
        let check: Vec<i128> = b"123456789".iter().map(|&b| b as i128).collect();
        assert_eq!(crc16(&check), 0x29b1);
        let mut rng = rand::rngs::StdRng::seed_from_u64(38);
        for spec in nine().into_iter().chain(apps()) {
            let prog = spec.program(&hearth::INSECURE_TEST_BITS, 2).unwrap();
            for case in 0..12 {
                let mut ins = spec.random_inputs(&mut rng);
                // Ties and extremes, where the selections decide.
                if case == 0 {
                    ins.iter_mut().for_each(|v| *v = 0);
                } else if case == 1 {
                    let v = ins[0];
                    ins.iter_mut().step_by(2).for_each(|x| *x = v);
                }
                assert_eq!(
                    run_clear(&prog, &ins),
                    spec.reference(&ins),
                    "{}: {ins:?}",
                    spec.name
                );
            }
        }
    }

    /// ERC7984 where it decides: a balance one short of the amount, equal
    /// to it, one more, and a receiver that wraps; the reference as
    /// tfhe-rs's benchmark describes it.
    #[test]
    fn erc7984_moves_the_amount_only_when_the_balance_covers_it() {
        let max = u64::MAX as i128;
        let cases: [([i128; 3], [i128; 2]); 5] = [
            ([99, 5, 100], [99, 5]),
            ([100, 5, 100], [0, 105]),
            ([101, 5, 100], [1, 105]),
            ([max, max, 2], [max - 2, 1]),
            ([0, 7, 0], [0, 7]),
        ];
        let spec = apps().into_iter().find(|s| s.key == "erc7984").unwrap();
        let prog = spec.program(&hearth::INSECURE_TEST_BITS, 2).unwrap();
        for (ins, want) in cases {
            assert_eq!(spec.reference(&ins), want, "{ins:?}");
            assert_eq!(run_clear(&prog, &ins), want, "{ins:?}");
        }
    }
}
