//! `hearth-bench budgets`: issue 84's study of cheaper bootstraps. For
//! each circuit (the words at 32 and 64 bits, `Int`'s products at 32, the
//! programs of both suites, all on `DIGITS_KS32_128`) the histogram of its
//! bootstraps by the margin their selector decodes with and their input's
//! quadratic weight, i.e. the smallest budget each needs; then, for second
//! keys that share the main key's GLWE key and switch to a smaller LWE
//! key (or to the same one with a coarser key switch), how many bootstraps
//! each could take, one KS-PBS on each (1 thread, alternating), and the
//! time predicted on 2 threads with the bootstraps that fit moved to it.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::path::PathBuf;

use hearth::circuit::schedule::{simulate, Machine};
use hearth::circuit::{Bootstrap, Circuit};
use hearth::crypto::noise::NoiseModel;
use hearth::crypto::params::{Budgets, Margin};
use hearth::{Error, ParameterSet, DIGITS_KS32_128};
use serde_json::json;

use crate::bits_ops::{self, BitsOp};
use crate::catalog::{Inputs, Op};
use crate::params::{model, set, Candidate, KsPbs, CANDIDATES};
use crate::pbs::RawPbs;
use crate::programs::Suite;
use crate::report::{emit, Table};

/// Failure probability per bootstrap every key is held to.
const LOG2_P_FAIL: f64 = -128.0;

/// Threads the predictions are for (the comparison).
const THREADS: usize = 2;

/// What one bootstrap needs: the margin its selector decodes with and
/// its input's quadratic weight. A set carries it where its budget at
/// that margin is at least the weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Need {
    pub margin: Margin,
    pub weight: u64,
}

impl Need {
    /// Whether a set with `budgets` carries it (fresh inputs of the main
    /// key's noise).
    pub fn fits(&self, budgets: &Budgets) -> bool {
        self.weight <= budgets.at(self.margin)
    }
}

/// The margin bootstrap `b` decodes with: half the smallest distance
/// between two points it reads (its selector's values plus each offset,
/// and their negacyclic images) whose table values differ, as the
/// builder computed it (a table stores the value at unit `p` in its
/// half-unit slot `2p`). A bootstrap whose points all read one value
/// decodes nothing: the widest margin.
pub fn margin(circuit: &Circuit, b: &Bootstrap) -> Margin {
    let m = circuit.params().params().message_modulus();
    let table = &circuit.tables()[b.table];
    let points: Vec<(u64, u64)> = b
        .selector
        .residues(m)
        .into_iter()
        .flat_map(|x| b.offsets.iter().map(move |&o| x + o))
        .flat_map(|p| [p % m, (p + m / 2) % m])
        .map(|p| (p, table[2 * p as usize]))
        .collect();
    let closest = points
        .iter()
        .flat_map(|&(p, v)| {
            points
                .iter()
                .filter(move |&&(_, w)| w != v)
                .map(move |&(q, _)| {
                    let d = p.abs_diff(q);
                    d.min(m - d)
                })
        })
        .min();
    closest.map_or(Margin::Two, Margin::within)
}

/// What each of `circuit`'s bootstraps needs, in order.
pub fn needs(circuit: &Circuit) -> Vec<Need> {
    circuit
        .bootstraps()
        .iter()
        .map(|b| Need {
            margin: margin(circuit, b),
            weight: b.input.quadratic_weight(),
        })
        .collect()
}

/// Bootstraps by margin, then by weight.
pub fn histogram(needs: &[Need]) -> BTreeMap<Margin, BTreeMap<u64, usize>> {
    let mut h: BTreeMap<Margin, BTreeMap<u64, usize>> = BTreeMap::new();
    for n in needs {
        *h.entry(n.margin).or_default().entry(n.weight).or_default() += 1;
    }
    h
}

/// Which bootstraps of `circuit` run on the second key `cheap` (`true`)
/// rather than on `main`, taken in order: one goes to `cheap` where its
/// input's variance, from the actual keys of the values it reads (inputs
/// count as fresh from `main`), fails at most with [`LOG2_P_FAIL`] on
/// `cheap`. The second value counts bootstraps left on `main` that the
/// cheaper outputs they read would put over its budget (0 where `cheap`'s
/// outputs are no noisier than `main`'s).
pub fn assign(circuit: &Circuit, main: &NoiseModel, cheap: &NoiseModel) -> (Vec<bool>, usize) {
    let pi = circuit.params().params().pi;
    let mut variance = vec![main.pbs; circuit.num_fresh()];
    let mut over = 0;
    let placed = circuit
        .bootstraps()
        .iter()
        .map(|b| {
            let v: f64 = b
                .input
                .terms
                .iter()
                .map(|&(f, w)| (w as f64).powi(2) * variance[f as usize])
                .sum();
            let bits = pi.saturating_sub(margin(circuit, b).log2_spacing()).max(1);
            let fits = |m: &NoiseModel| m.log2_p_fail(bits, v / m.pbs) <= LOG2_P_FAIL;
            let on_cheap = fits(cheap);
            over += usize::from(!on_cheap && !fits(main));
            let out = if on_cheap { cheap.pbs } else { main.pbs };
            for j in 0..b.offsets.len() {
                variance[b.first_output as usize + j] = out;
            }
            on_cheap
        })
        .collect();
    (placed, over)
}

/// Predicted wall time on [`THREADS`] threads with every bootstrap taking
/// `pbs_ms` on one thread (the cpu backend's schedule replayed, pairs
/// included).
fn wall_ms(circuit: &Circuit, pbs_ms: f64) -> f64 {
    let machine = Machine::uniform(1, THREADS, pbs_ms, 0.0, 0.0).pairing_for(circuit);
    simulate(circuit, &machine).wall_s
}

/// A second key: a tfhe-rs set's small LWE key (its `n` and noise) under
/// the main set's GLWE key, with the key switch chosen for hearth's
/// margins; where it came from, and what its security rests on.
struct SecondKey {
    candidate: Candidate,
    source: &'static str,
    /// Whether its outputs are under the main key's big LWE key as they
    /// are (same `k * N`, same GLWE key: one client key).
    one_client_key: &'static str,
}

/// The main set's dimensions as a [`Candidate`].
const MAIN: Candidate = Candidate {
    name: "DIGITS_KS32_128 (main)",
    n: 918,
    k: 1,
    big_n: 2048,
    tuniform: Some((45, 17)),
    pbs: (23, 1),
    ks: (3, 5),
    ks32: true,
};

/// A same-ring second key: the main GLWE key (k = 1, N = 2048,
/// TUniform(17)), a small key of `n` coefficients with TUniform(`b`), the
/// PBS `pbs` and a KS32 key switch `ks`.
const fn same_ring(
    name: &'static str,
    n: usize,
    b: u32,
    pbs: (usize, usize),
    ks: (usize, usize),
) -> Candidate {
    Candidate {
        name,
        n,
        k: 1,
        big_n: 2048,
        tuniform: Some((b, 17)),
        pbs,
        ks,
        ks32: true,
    }
}

const SECOND_KEYS: [SecondKey; 9] = [
    SecondKey {
        candidate: same_ring("n 918, KS 2^4 x 4", 918, 45, (23, 1), (4, 4)),
        source: "V1_8_PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128 as published: the main key's own small key and bootstrap key, its key switch",
        one_client_key: "yes: a second key-switch key only",
    },
    SecondKey {
        candidate: same_ring("n 918, KS 2^5 x 3", 918, 45, (23, 1), (5, 3)),
        source: "the main set's small key and bootstrap key; a coarser key switch",
        one_client_key: "yes: a second key-switch key only",
    },
    SecondKey {
        candidate: same_ring("n 879, KS 2^2 x 8", 879, 46, (23, 1), (2, 8)),
        source: "small key of V1_8_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M128 (= V1_4; n 879, TUniform(46)); a finer key switch",
        one_client_key: "yes: a second small key; GLWE key shared",
    },
    SecondKey {
        candidate: same_ring("n 839", 839, 47, (23, 1), (3, 5)),
        source: "small key of V1_0_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M40 (n 839, TUniform(47))",
        one_client_key: "yes: a second small key; GLWE key shared",
    },
    SecondKey {
        candidate: same_ring("n 799", 799, 48, (23, 1), (3, 5)),
        source: "small key of V1_0_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M40 (n 799, TUniform(48); GATES_128's)",
        one_client_key: "yes: a second small key; GLWE key shared",
    },
    SecondKey {
        candidate: same_ring("n 799, KS 2^2 x 8", 799, 48, (23, 1), (2, 8)),
        source: "the same small key, a finer key switch",
        one_client_key: "yes: a second small key; GLWE key shared",
    },
    SecondKey {
        candidate: same_ring("n 759", 759, 49, (23, 1), (2, 7)),
        source: "V1_8_PARAM_GPU_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M128 (n 759, TUniform(49), k 1, N 2048, GLWE TUniform(17), PBS 2^23 x 1, KS 2^3 x 4)",
        one_client_key: "yes: a second small key; GLWE key shared",
    },
    SecondKey {
        candidate: same_ring("n 720", 720, 50, (22, 1), (1, 13)),
        source: "V1_8_PARAM_GPU_KREYVIUM_MESSAGE_1_CARRY_0_TUNIFORM_2M128 (n 720, TUniform(50), k 1, N 2048, GLWE TUniform(17), PBS 2^22 x 1, KS 2^3 x 4)",
        one_client_key: "yes: a second small key; GLWE key shared",
    },
    SecondKey {
        candidate: CANDIDATES[0],
        source: "V1_8_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M128 as published (BITS_128; n 879, k 4, N 512)",
        one_client_key: "only if its GLWE key is the main key's 2048 bits read as 4 polynomials of 512: one key in two rings, not rated",
    },
];

/// The small keys of tfhe-rs's rated sets that fit under the main GLWE
/// key (`n`, TUniform bound modulo 2^64), and the PBS decomposition of
/// the set each comes from.
const SMALL_KEYS: [(usize, u32, usize); 5] = [
    (918, 45, 23),
    (879, 46, 23),
    (839, 47, 23),
    (799, 48, 23),
    (759, 49, 23),
];

/// For each small key and margin, the KS32 decomposition (base 2^1 to
/// 2^8, 1 to 16 levels) with the largest budget, and the one with the
/// fewest levels whose budget is not 0: what the key switch can do for
/// each key.
fn scan() -> Table {
    let mut t = Table::new(
        "KS32 key switches for each small key under the main GLWE key (pi = 5, p_fail 2^-128): \
         per margin, the largest budget (its decomposition), and the fewest levels with a budget",
        &["n, TUniform", "margin 1/2", "margin 1", "margin 2"],
    );
    for (n, b, pbs) in SMALL_KEYS {
        let decompositions: Vec<((usize, usize), Budgets)> = (1..=16)
            .flat_map(|level| (1..=8).map(move |base| (base, level)))
            .filter(|&(base, level)| base * level <= 32)
            .map(|ks| {
                let c = same_ring("scan", n, b, (pbs, 1), ks);
                let budgets = model(&c).bootstrap_budgets(DIGITS_KS32_128.pi, LOG2_P_FAIL);
                (ks, budgets)
            })
            .collect();
        let mut cells = vec![format!("{n}, {b}")];
        for margin in Margin::ALL {
            let best = decompositions
                .iter()
                .max_by_key(|(ks, bu)| (bu.at(margin), Reverse(ks.1)));
            let fewest = decompositions
                .iter()
                .filter(|(_, bu)| bu.at(margin) > 0)
                .min_by_key(|(ks, bu)| (ks.1, Reverse(bu.at(margin))));
            cells.push(match (best, fewest) {
                (Some(((bb, bl), bu)), Some(((fb, fl), fu))) if bu.at(margin) > 0 => format!(
                    "{} (2^{bb} x {bl}); {} (2^{fb} x {fl})",
                    bu.at(margin),
                    fu.at(margin)
                ),
                _ => "0".into(),
            });
        }
        t.row(cells);
    }
    t.note(
        "Main key: n 918 (DIGITS_KS32_128, 2^3 x 5: 112 / 3713 / 18119). The formulas take each \
         key's noise as the 132-bit-secure TUniform for its n, so a smaller n has a noisier key \
         switch and a slightly smaller modulus-switch noise.",
    );
    t
}

/// One circuit of the study.
struct Row {
    name: String,
    circuit: Circuit,
}

/// The circuits: the words table at 32 and 64 bits, `Int`'s wrapping
/// product, square and product by 805 at 32 bits (two's-complement
/// inputs), and every program of both suites; all on `DIGITS_KS32_128`,
/// planned for [`THREADS`].
fn rows() -> Result<Vec<Row>, Error> {
    let p = &DIGITS_KS32_128;
    let mut rows = Vec::new();
    for n in [32, 64] {
        for op in BitsOp::named(&[])? {
            let prog = bits_ops::build(op, n, p, THREADS)?;
            rows.push(Row {
                name: format!("words {n}: {}", op.name()),
                circuit: prog.circuit().clone(),
            });
        }
    }
    for op in [Op::MulWrapping, Op::Square, Op::ScalarMul(805)] {
        let prog = op.program_on(p, 32, Inputs::Twos, Some(THREADS))?;
        rows.push(Row {
            name: format!("Int 32: {}", op.name()),
            circuit: prog.circuit().clone(),
        });
    }
    for spec in Suite::All.specs() {
        let prog = spec.program(p, THREADS)?;
        rows.push(Row {
            name: format!("program: {}", spec.name),
            circuit: prog.circuit().clone(),
        });
    }
    Ok(rows)
}

/// KS-PBS on one thread, `samples` rounds, alternating: hearth's engine
/// on `DIGITS_KS32_128` (its own keys), then each set of `sets` through
/// core_crypto. Gives the engine's median, each set's median, and each
/// set's median over the rounds of its time over the first set's in the
/// same round (steadier than a ratio of medians on a shared machine).
fn timings(sets: &[ParameterSet], samples: usize) -> Result<(f64, Vec<f64>, Vec<f64>), Error> {
    let (client, server) = hearth_cli::progress::generate(&DIGITS_KS32_128);
    let mut engine = RawPbs::new(&client, &server)?;
    let mut runs: Vec<KsPbs> = sets.iter().map(KsPbs::new).collect();
    let mut times = vec![Vec::new(); runs.len() + 1];
    let mut ratios = vec![Vec::new(); runs.len()];
    // One round first to warm caches and threads, not counted.
    for round in 0..=samples {
        let t = engine.once().as_secs_f64() * 1e3;
        let ts: Vec<f64> = runs.iter_mut().map(KsPbs::once).collect();
        if round > 0 {
            times[0].push(t);
            for (i, &t) in ts.iter().enumerate() {
                times[i + 1].push(t);
                ratios[i].push(t / ts[0]);
            }
        }
    }
    let median = |mut t: Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let mut medians = times.into_iter().map(median);
    let engine = medians.next().unwrap_or_default();
    Ok((
        engine,
        medians.collect(),
        ratios.into_iter().map(median).collect(),
    ))
}

/// `margin: count (largest weight)` for each margin with bootstraps.
fn summary(h: &BTreeMap<Margin, BTreeMap<u64, usize>>) -> String {
    h.iter()
        .map(|(m, ws)| {
            let count: usize = ws.values().sum();
            let max = ws.keys().max().copied().unwrap_or(0);
            format!("{m}: {count} (w <= {max})")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn budgets(samples: usize, json: Option<PathBuf>) -> Result<(), Error> {
    let main = NoiseModel::of(&DIGITS_KS32_128);
    let keys: Vec<(&SecondKey, ParameterSet, NoiseModel, Budgets)> = SECOND_KEYS
        .iter()
        .map(|k| {
            let s = set(&k.candidate, DIGITS_KS32_128.pi);
            let m = model(&k.candidate);
            let b = m.bootstrap_budgets(DIGITS_KS32_128.pi, LOG2_P_FAIL);
            (k, s, m, b)
        })
        .collect();
    let mut sets = vec![DIGITS_KS32_128];
    sets.extend(keys.iter().map(|(_, s, _, _)| *s));
    eprintln!("timing one KS-PBS on each set, {samples} rounds, alternating...");
    let (engine_ms, ms, ratios) = timings(&sets, samples.max(1))?;
    let main_ms = ms[0];
    // Each key's time as the main key's times its median ratio.
    let ms: Vec<f64> = ratios.iter().map(|r| r * main_ms).collect();

    let mut t = Table::new(
        format!(
            "Second keys under DIGITS_KS32_128's GLWE key: budgets for pi = 5 without padding at \
             p_fail 2^{LOG2_P_FAIL} (hearth's noise formulas) and one KS-PBS on 1 thread \
             (medians of {samples}, alternating; hearth's engine on DIGITS_KS32_128: {engine_ms:.2} ms)"
        ),
        &[
            "key",
            "n, k, N",
            "PBS, KS",
            "budgets 1/2, 1, 2",
            "V_pbs, V_ks, V_ms (log2)",
            "KS-PBS (ms)",
            "x main",
            "one client key",
            "source",
        ],
    );
    let row = |c: &Candidate, b: &Budgets, m: &NoiseModel, ms: f64| {
        vec![
            c.name.to_string(),
            format!("{}, {}, {}", c.n, c.k, c.big_n),
            format!(
                "2^{} x {}, 2^{} x {}{}",
                c.pbs.0,
                c.pbs.1,
                c.ks.0,
                c.ks.1,
                if c.ks32 { " (KS32)" } else { "" }
            ),
            format!("{}, {}, {}", b.half, b.one, b.two),
            format!(
                "{:.2}, {:.2}, {:.2}",
                m.pbs.log2(),
                m.keyswitch.log2(),
                m.modulus_switch.log2()
            ),
            format!("{ms:.2}"),
            format!("{:.3}", ms / main_ms),
        ]
    };
    let mut cells = row(&MAIN, &DIGITS_KS32_128.budgets, &main, main_ms);
    cells.extend(["-".into(), DIGITS_KS32_128.source.into()]);
    t.row(cells);
    let mut key_rows = vec![json!({
        "key": MAIN.name, "n": MAIN.n, "k": MAIN.k, "N": MAIN.big_n, "budgets": [DIGITS_KS32_128.budgets.half, DIGITS_KS32_128.budgets.one, DIGITS_KS32_128.budgets.two],
        "v_pbs": main.pbs, "v_ks": main.keyswitch, "v_ms": main.modulus_switch, "ks_pbs_ms": main_ms, "engine_ms": engine_ms,
    })];
    for ((k, _, m, b), &kms) in keys.iter().zip(&ms[1..]) {
        let mut cells = row(&k.candidate, b, m, kms);
        cells.extend([k.one_client_key.into(), k.source.into()]);
        t.row(cells);
        key_rows.push(json!({
            "key": k.candidate.name, "n": k.candidate.n, "k": k.candidate.k, "N": k.candidate.big_n,
            "pbs": [k.candidate.pbs.0, k.candidate.pbs.1], "ks": [k.candidate.ks.0, k.candidate.ks.1], "ks32": k.candidate.ks32,
            "budgets": [b.half, b.one, b.two], "v_pbs": m.pbs, "v_ks": m.keyswitch, "v_ms": m.modulus_switch,
            "ks_pbs_ms": kms, "ratio_to_main": kms / main_ms, "source": k.source, "one_client_key": k.one_client_key,
        }));
    }
    t.note(
        "Budgets: the largest quadratic weight of fresh inputs at margin 1/2, 1 and 2 units \
         (selector values 1, 2, 4 units apart). KS-PBS: key switch, centered modulus switch, blind \
         rotation and sample extraction through core_crypto (keys of small noise: timing only); \
         x main: the median over the rounds of its time over DIGITS_KS32_128's in the same round \
         (KS-PBS column: that ratio times the main key's median).",
    );

    let mut headers = vec!["circuit".to_string(), "#PBS".into(), "by margin".into()];
    headers.extend(
        keys.iter()
            .map(|(k, _, _, b)| format!("{} ({}/{}/{})", k.candidate.name, b.half, b.one, b.two)),
    );
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut h = Table::new(
        format!(
            "What each circuit's bootstraps need (DIGITS_KS32_128, planned for {THREADS} threads): \
             bootstraps by margin (largest weight), and per second key (its budgets) the bootstraps \
             it takes and the predicted time on {THREADS} threads over all on the main key"
        ),
        &headers,
    );
    let mut circuit_rows = Vec::new();
    for r in rows()? {
        let needs = needs(&r.circuit);
        let hist = histogram(&needs);
        let total = needs.len();
        let old = wall_ms(&r.circuit, main_ms);
        let mut cells = vec![r.name.clone(), total.to_string(), summary(&hist)];
        let mut per_key = Vec::new();
        for ((k, _, m, b), &kms) in keys.iter().zip(&ms[1..]) {
            let fit = needs.iter().filter(|n| n.fits(b)).count();
            let (placed, over) = assign(&r.circuit, &main, m);
            let cheap = placed.iter().filter(|&&c| c).count();
            let avg = ((total - cheap) as f64 * main_ms + cheap as f64 * kms) / total.max(1) as f64;
            let new = wall_ms(&r.circuit, avg);
            let ratio = if old > 0.0 { new / old } else { 1.0 };
            cells.push(format!("{cheap} ({ratio:.3})"));
            per_key.push(json!({
                "key": k.candidate.name, "fits_static": fit, "on_key": cheap, "over_on_main": over,
                "predicted_ms": new, "predicted_ratio": ratio,
            }));
        }
        h.row(cells);
        let hist_json: BTreeMap<String, BTreeMap<u64, usize>> =
            hist.into_iter().map(|(m, w)| (m.to_string(), w)).collect();
        circuit_rows.push(json!({
            "circuit": r.name, "pbs": total, "histogram": hist_json,
            "predicted_ms_main": old, "keys": per_key,
        }));
    }
    h.note(&format!(
        "By margin: bootstraps whose selector values with different outputs are 1/2, 1 or 2 units \
         from the nearest boundary, and the largest quadratic weight among them (a bootstrap needs \
         a budget at least its weight at its margin). Per key: bootstraps that key carries, taken \
         in order with the variance of the keys that made their inputs, at p_fail 2^{LOG2_P_FAIL}; \
         in brackets the predicted time on {THREADS} threads over the time with all on the main \
         key. The schedule takes one time per bootstrap, so each is the work-weighted mean of the \
         two keys' KS-PBS ({main_ms:.2} ms for the main key, measured above)."
    ));
    emit(
        json.as_deref(),
        &json!({"bench": "budgets", "threads": THREADS, "samples": samples, "log2_p_fail": LOG2_P_FAIL,
                "engine_ms": engine_ms, "keys": key_rows, "rows": circuit_rows}),
        &[t, scan(), h],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth::{CircuitBuilder, Lut, INSECURE_TEST_DIGITS};

    /// [`MAIN`] restates `DIGITS_KS32_128` for the candidates' tables (the
    /// timed set is `DIGITS_KS32_128` itself): the two must not drift.
    #[test]
    fn main_candidate_is_digits_ks32_128() {
        let p = &DIGITS_KS32_128;
        let from_main = set(&MAIN, p.pi);
        assert_eq!(
            (MAIN.n, MAIN.k, MAIN.big_n, MAIN.pbs, MAIN.ks, MAIN.ks32),
            (
                p.lwe_dimension.0,
                p.glwe_dimension.0,
                p.polynomial_size.0,
                (p.pbs_base_log.0, p.pbs_level.0),
                (p.ks_base_log.0, p.ks_level.0),
                p.ks32
            )
        );
        assert_eq!(
            (from_main.lwe_noise, from_main.glwe_noise),
            (p.lwe_noise, p.glwe_noise)
        );
    }

    /// Four bootstraps whose needs are known by hand (pi = 5): a dense
    /// selector, an AND and a weighted sum of bits stored as 0 or 2, and
    /// an XOR on a doubled selector.
    fn four() -> Circuit {
        let mut b = CircuitBuilder::new(&INSECURE_TEST_DIGITS);
        let x = b.input(0, 3).unwrap();
        let a = b.input_with_step(0, 2, 2).unwrap();
        let c = b.input_with_step(0, 2, 2).unwrap();
        // Values 0..3 one unit apart, weight 1.
        let id = Lut::from_fn(5, 0, 3, |v| v).unwrap();
        let y = b.bootstrap(x, &id).unwrap();
        b.output(y).unwrap();
        // a + c in 0, 2, 4: AND, margin 1 unit, weight 2.
        let s = b.add(a, c).unwrap();
        let and = Lut::from_points(5, &[(0, 0), (2, 0), (4, 2)]).unwrap();
        let y = b.bootstrap(s, &and).unwrap();
        b.output(y).unwrap();
        // 2a + 2c in 0, 4, 8: XOR, margin 2 units, weight 8.
        let d = b.linear(&[(a, 2), (c, 2)], 0).unwrap();
        let xor = Lut::from_points(5, &[(0, 0), (4, 2), (8, 0)]).unwrap();
        let y = b.bootstrap(d, &xor).unwrap();
        b.output(y).unwrap();
        // 3a + c in 0, 2, 6, 8 (the range also holds 4): values 2 apart,
        // margin 1 unit, weight 10.
        let w = b.linear(&[(a, 3), (c, 1)], 0).unwrap();
        let all = Lut::from_points(5, &[(0, 0), (2, 1), (4, 1), (6, 2), (8, 3)]).unwrap();
        let y = b.bootstrap(w, &all).unwrap();
        b.output(y).unwrap();
        b.build()
    }

    #[test]
    fn needs_of_hand_built_bootstraps() {
        let c = four();
        let need = |margin, weight| Need { margin, weight };
        assert_eq!(
            needs(&c),
            [
                need(Margin::Half, 1),
                need(Margin::One, 2),
                need(Margin::Two, 8),
                need(Margin::One, 10),
            ]
        );
        let h = histogram(&needs(&c));
        assert_eq!(h[&Margin::One], BTreeMap::from([(2, 1), (10, 1)]));
        assert_eq!(
            summary(&h),
            "1/2: 1 (w <= 1); 1: 2 (w <= 10); 2: 1 (w <= 8)"
        );
        let small = Budgets {
            half: 0,
            one: 5,
            two: 100,
        };
        let fit: Vec<bool> = needs(&c).iter().map(|n| n.fits(&small)).collect();
        assert_eq!(fit, [false, true, true, false]);
    }

    #[test]
    fn assignment_follows_the_noise() {
        let c = four();
        let main = NoiseModel::of(&DIGITS_KS32_128);
        assert_eq!(assign(&c, &main, &main), (vec![true; 4], 0));
        // A key switch that leaves no budget at all takes nothing.
        let noisy = NoiseModel {
            keyswitch: 1e-3,
            ..main
        };
        assert_eq!(assign(&c, &main, &noisy), (vec![false; 4], 0));
        // The main key's margin-2 budget but nothing narrower: the XOR only.
        let wide = NoiseModel {
            keyswitch: main.keyswitch * 100.0,
            ..main
        };
        let (placed, over) = assign(&c, &main, &wide);
        assert_eq!((placed, over), (vec![false, false, true, false], 0));
    }

    /// The margins read back agree with the builder's: every bootstrap
    /// of the words at 8 bits fits the budgets it was checked against.
    #[test]
    fn words_fit_the_budgets_they_were_built_for() {
        let p = &DIGITS_KS32_128;
        for op in BitsOp::named(&[]).unwrap() {
            let prog = bits_ops::build(op, 8, p, THREADS).unwrap();
            let needs = needs(prog.circuit());
            assert!(!needs.is_empty(), "{}", op.name());
            assert!(needs.iter().all(|n| n.fits(&p.budgets)), "{}", op.name());
        }
    }
}
