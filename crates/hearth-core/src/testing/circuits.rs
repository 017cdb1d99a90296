//! Random circuits with uneven level widths, for tests and the engine
//! benchmark. Every circuit is valid for its parameter set (weights within
//! budget, tables covering their selectors), and every bootstrap is real
//! (no table is constant on its selector's values). For a set that only
//! decodes spread selectors (dense budget 0, e.g. `GATES_128`), every value
//! is even, so selectors keep a margin of one unit.

use rand::{Rng, SeedableRng};

use crate::circuit::{Circuit, CircuitBuilder, Wire};
use crate::crypto::lut::Lut;
use crate::crypto::params::ParameterSet;
use crate::error::BuildError;

/// A random circuit and inputs (digits in `Z_{2^pi}`) that satisfy its ranges.
pub struct RandomCircuit {
    /// The circuit.
    pub circuit: Circuit,
    /// Clear inputs it accepts.
    pub inputs: Vec<u64>,
}

impl RandomCircuit {
    /// Its clear inputs encrypted under `client`.
    pub fn encrypt(
        &self,
        client: &crate::ClientKey,
    ) -> Result<Vec<crate::Ciphertext>, crate::Error> {
        self.inputs
            .iter()
            .map(|&v| client.encrypt(v as i64))
            .collect()
    }
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
    // Spacing of all values, and the budget selectors get with it.
    let (spread, budget) = if params.budgets.half == 0 {
        (2, params.budgets.one)
    } else {
        (1, params.budgets.half)
    };
    let mut b = CircuitBuilder::new(params);
    let streams = streams.max(1);
    let mut all: Vec<Vec<Wire>> = vec![Vec::new(); streams];
    let mut values = Vec::new();
    for i in 0..inputs.max(streams) {
        let lo = spread * rng.gen_range(-half / spread..half / spread);
        let hi = lo + spread * rng.gen_range(1..4);
        all[i % streams].push(b.input_with_step(lo, hi, spread)?);
        let v = lo + spread * rng.gen_range(0..=(hi - lo) / spread);
        values.push(v.rem_euclid(m) as u64);
    }
    // Random tables over the whole ring, reused so the dedup path is hit.
    let tables: Vec<Lut> = (0..6)
        .map(|_| {
            let vals: Vec<i64> = (0..half)
                .map(|_| spread * rng.gen_range(0..m / spread))
                .collect();
            Lut::negacyclic(params.pi, |x| vals[x as usize]).expect("negacyclic by construction")
        })
        .collect();
    let mut windows = vec![8usize; streams];
    // The builder makes a repeated bootstrap once: count the real ones
    // (with a bound on tries, for circuits too small to vary).
    let mut tries = 0;
    while b.bootstrap_count() < bootstraps && tries < 100 * bootstraps.max(1) {
        tries += 1;
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
            if weight + cw <= budget / 2 {
                weight += cw;
                terms.push((w, c));
            }
        }
        if terms.is_empty() {
            terms.push((wires[wires.len() - 1], 1));
        }
        let mut selector = b.linear(&terms, spread * rng.gen_range(0..m / spread))?;
        // Fallback tables that vary on almost any pair of values.
        let shifted = [1, 3].map(|k| {
            Lut::negacyclic(params.pi, |x| spread * (x + k)).expect("negacyclic by construction")
        });
        let (residues, lut) = loop {
            let range = b.range(selector)?;
            let residues = range.residues(m as u64);
            let varies = |t: &Lut| {
                residues
                    .iter()
                    .any(|&x| t.eval(x as i64) != t.eval(residues[0] as i64))
            };
            let start = rng.gen_range(0..tables.len());
            let found = (0..tables.len())
                .map(|k| &tables[(start + k) % tables.len()])
                .chain(shifted.iter())
                .find(|t| varies(t));
            match found {
                Some(t) => break (residues, t.clone()),
                // Too few values to vary on: read an input instead (two
                // or more values, on the spacing).
                None => selector = wires[0],
            }
        };
        let range = b.range(selector)?;
        let width = residues.len() as i64 * range.step;
        let (a, c) = (rng.gen_range(1..m), rng.gen_range(0..m));
        let f = Lut::from_fn(params.pi, range.lo, range.hi, |x| spread * (a * x + 1));
        let g = Lut::from_fn(params.pi, range.lo, range.hi, |x| spread * (x * x + c));
        match (f, g) {
            (Ok(f), Ok(g)) if width * 2 <= half && rng.gen_ratio(1, 4) => {
                // Many-LUT: two tables in one blind rotation (folded only if
                // both are constant: then the plain table runs instead).
                let outs = b.bootstrap_many(selector, &[&f, &g])?;
                if outs
                    .iter()
                    .all(|&w| b.constant_value(w).ok().flatten().is_some())
                {
                    wires.push(b.bootstrap(selector, &lut)?);
                } else {
                    wires.extend(outs);
                }
            }
            _ => wires.push(b.bootstrap(selector, &lut)?),
        }
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
