//! Random circuits with uneven level widths, for tests and the engine
//! benchmark. Every circuit is valid for its parameter set (weights within
//! budget, tables covering their selectors).

use rand::{Rng, SeedableRng};

use crate::circuit::{Circuit, CircuitBuilder, Wire};
use crate::error::BuildError;
use crate::lut::Lut;
use crate::params::ParameterSet;

/// A random circuit and inputs (digits in `Z_{2^pi}`) that satisfy its ranges.
pub struct RandomCircuit {
    pub circuit: Circuit,
    pub inputs: Vec<u64>,
}

/// Builds a circuit of `bootstraps` bootstraps on `inputs` inputs from
/// `seed`, made of `streams` independent computations interleaved (as when
/// several operations share one circuit). Within a stream, sources are drawn
/// from a sliding window of recent wires whose size changes at random, so
/// levels range from narrow chains to wide fans.
pub fn random_circuit(
    params: &'static ParameterSet,
    seed: u64,
    inputs: usize,
    bootstraps: usize,
    streams: usize,
) -> Result<RandomCircuit, BuildError> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let m = params.message_modulus() as i64;
    let half = m / 2;
    let mut b = CircuitBuilder::new(params);
    let streams = streams.max(1);
    let mut all: Vec<Vec<Wire>> = vec![Vec::new(); streams];
    let mut values = Vec::new();
    for i in 0..inputs.max(streams) {
        let lo = rng.gen_range(-half..half);
        let hi = lo + rng.gen_range(0..4);
        all[i % streams].push(b.input(lo, hi)?);
        values.push(rng.gen_range(lo..=hi).rem_euclid(m) as u64);
    }
    // Random tables over the whole ring, reused so the dedup path is hit.
    let tables: Vec<Lut> = (0..6)
        .map(|_| {
            let vals: Vec<i64> = (0..half).map(|_| rng.gen_range(0..m)).collect();
            Lut::negacyclic(params.pi, |x| vals[x as usize]).expect("negacyclic by construction")
        })
        .collect();
    let mut windows = vec![8usize; streams];
    let mut made = 0;
    while made < bootstraps {
        let s = rng.gen_range(0..streams);
        let wires = &mut all[s];
        if rng.gen_ratio(1, 16) {
            windows[s] = [1, 2, 4, 16, 64, 256][rng.gen_range(0..6)];
        }
        let window = windows[s];
        let n_terms = rng.gen_range(1..=3);
        let lo = wires.len().saturating_sub(window);
        let mut terms = Vec::new();
        let mut weight = 0u64;
        for _ in 0..n_terms {
            let w = wires[rng.gen_range(lo..wires.len())];
            let c: i64 = *[-3, -2, -1, 1, 1, 2, 3]
                .get(rng.gen_range(0..7))
                .expect("in range");
            let cw = b.quadratic_weight(w)? * (c * c) as u64;
            if weight + cw <= params.budget / 2 {
                weight += cw;
                terms.push((w, c));
            }
        }
        if terms.is_empty() {
            terms.push((wires[wires.len() - 1], 1));
        }
        let mut selector = b.linear(&terms, rng.gen_range(0..m))?;
        if b.quadratic_weight(selector)? == 0 {
            // The terms cancelled: a constant would fold; read an input too.
            selector = b.add(selector, wires[0])?;
        }
        let range = b.range(selector)?;
        let width = range.width(m as u64) as i64;
        if width * 2 <= half && rng.gen_ratio(1, 4) {
            // Many-LUT: two tables in one blind rotation.
            let (a, c) = (rng.gen_range(0..m), rng.gen_range(0..m));
            let f = Lut::from_fn(params.pi, range.lo, range.hi, |x| a * x + 1)
                .expect("narrow domain is negacyclic");
            let g = Lut::from_fn(params.pi, range.lo, range.hi, |x| x * x + c)
                .expect("narrow domain is negacyclic");
            wires.extend(b.bootstrap_many(selector, &[&f, &g])?);
        } else {
            let lut = &tables[rng.gen_range(0..tables.len())];
            wires.push(b.bootstrap(selector, lut)?);
        }
        made += 1;
    }
    // Outputs: the last few wires of each stream and one linear combination.
    for wires in &all {
        for &w in wires.iter().rev().take(4) {
            b.output(w)?;
        }
        let n = wires.len();
        let mix = b.linear(&[(wires[n - 1], 2), (wires[n / 2], -1)], 3)?;
        b.output(mix)?;
    }
    Ok(RandomCircuit {
        circuit: b.build(),
        inputs: values,
    })
}
