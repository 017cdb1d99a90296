//! Circuits: a DAG of cheap linear operations on LWE ciphertexts and
//! bootstraps, built once and evaluated by any `hearth::backend`.
//!
//! The builder does not materialise linear nodes. Every wire *is* a linear
//! expression `sum_i w_i * f_i + c` over *fresh* values `f_i` (encrypted
//! inputs and bootstrap outputs). That makes three things exact and cheap:
//! * the quadratic weight `sum_i w_i^2` of a wire (`x + x` has weight 4, and
//!   `x - x` is the constant 0);
//! * its value range, from the ranges of the fresh values it combines;
//! * evaluation: a bootstrap input is computed straight from fresh values,
//!   with no intermediate ciphertexts.
//!
//! Build-time checks, each a [`crate::BuildError`] naming the node:
//! quadratic weight over the parameter set's budget at a bootstrap input
//! (the budget for the selector's noise margin, see [`table`]) or an output;
//! a selector range not covered by the lookup table's domain; wires from
//! another circuit. A bootstrap of a constant wire is folded to a constant
//! (trivial digits cost no bootstrap).

mod builder;
pub(crate) mod choice;
pub mod cost;
pub mod guard;
pub mod meter;
pub(crate) mod range;
pub mod schedule;
pub mod selectors;
pub mod table;

pub use builder::{CircuitBuilder, Wire};
pub use choice::{cheapest, Memo};
pub use cost::GpuCost;
pub use meter::{Meter, Spent};
pub use range::Range;
pub use selectors::Selectors;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::crypto::params::{Margin, ParameterSet, ParamsId};

/// Identity of one circuit (random per builder).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CircuitId(u64);

fn next_circuit_id() -> CircuitId {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    CircuitId(NEXT.fetch_add(1, Ordering::Relaxed) ^ (std::process::id() as u64) << 40)
}

/// Index of a fresh value: inputs first, then bootstrap outputs in order.
pub type FreshId = u32;

/// `sum_i w_i * fresh_i + constant`, terms sorted by fresh id, no zero weight.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "mpi", derive(serde::Serialize, serde::Deserialize))]
pub struct LinearExpr {
    /// `(fresh value, weight)` pairs.
    pub terms: Vec<(FreshId, i64)>,
    /// Reduced mod `2^pi`.
    pub constant: u64,
}

impl LinearExpr {
    /// The quadratic weight `sum w_i^2` (saturating).
    pub fn quadratic_weight(&self) -> u64 {
        self.terms.iter().fold(0u64, |acc, &(_, w)| {
            acc.saturating_add((w.unsigned_abs()).saturating_mul(w.unsigned_abs()))
        })
    }
}

/// One blind rotation: its input expression, the table it rotates and the
/// offsets (digit units) at which outputs are extracted.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "mpi", derive(serde::Serialize, serde::Deserialize))]
pub struct Bootstrap {
    /// The selector: a linear combination of fresh values.
    pub input: LinearExpr,
    /// Proven range of the selector (checked by the clear backend).
    pub selector: Range,
    /// Index of its slot table in the circuit.
    pub table: usize,
    /// Where each output is read in the rotated accumulator (digit units).
    pub offsets: Vec<u64>,
    /// Fresh id of the first output; output `j` is `first_output + j`.
    pub first_output: FreshId,
}

/// A finished circuit, ready for any backend.
#[derive(Clone, Debug)]
pub struct Circuit {
    pub(crate) id: CircuitId,
    pub(crate) params: ParamsId,
    /// Fresh id and declared range of each input, in input order.
    pub(crate) inputs: Vec<(FreshId, Range)>,
    /// Distinct tables as `2^(pi+1)` half-unit slots (see [`table`]),
    /// referenced by index.
    pub(crate) tables: Vec<Vec<u64>>,
    pub(crate) bootstraps: Vec<Bootstrap>,
    pub(crate) outputs: Vec<LinearExpr>,
    /// The margin each output is decoded with (its values' spacing).
    pub(crate) output_margins: Vec<Margin>,
    /// Depth of each fresh value (0 for inputs).
    pub(crate) depth: Vec<u32>,
}

/// A circuit's fields for sending to another MPI rank of the same job
/// (trusted: what arrives is what rank 0 built). Hidden, and only with the
/// feature `mpi` (the crate `hearth-mpi`): no other code reads a circuit
/// from outside bytes.
#[cfg(feature = "mpi")]
#[doc(hidden)]
#[derive(serde::Serialize, serde::Deserialize)]
pub struct CircuitWire {
    params: ParamsId,
    inputs: Vec<(FreshId, Range)>,
    tables: Vec<Vec<u64>>,
    bootstraps: Vec<Bootstrap>,
    outputs: Vec<LinearExpr>,
    output_margins: Vec<Margin>,
    depth: Vec<u32>,
}

#[cfg(feature = "mpi")]
impl From<&Circuit> for CircuitWire {
    fn from(c: &Circuit) -> Self {
        CircuitWire {
            params: c.params,
            inputs: c.inputs.clone(),
            tables: c.tables.clone(),
            bootstraps: c.bootstraps.clone(),
            outputs: c.outputs.clone(),
            output_margins: c.output_margins.clone(),
            depth: c.depth.clone(),
        }
    }
}

#[cfg(feature = "mpi")]
impl From<CircuitWire> for Circuit {
    fn from(w: CircuitWire) -> Self {
        Circuit {
            id: next_circuit_id(),
            params: w.params,
            inputs: w.inputs,
            tables: w.tables,
            bootstraps: w.bootstraps,
            outputs: w.outputs,
            output_margins: w.output_margins,
            depth: w.depth,
        }
    }
}

/// An output too noisy to be packed ([`Circuit::unpackable_outputs`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unpackable {
    /// Its index among the circuit's outputs.
    pub index: usize,
    /// Its quadratic weight.
    pub weight: u64,
    /// The packed budget for its margin.
    pub budget: u64,
}

/// Hardware-independent cost of a circuit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Number of blind rotations (a many-LUT bootstrap counts once).
    pub pbs: usize,
    /// Longest chain of bootstraps.
    pub depth: u32,
    /// Bootstraps per level (level 1 first).
    pub width_per_level: Vec<usize>,
    /// Ciphertexts alive at once when levels run in order and every value
    /// is freed after its last use (inputs and outputs included).
    pub peak_live: usize,
    /// Encrypted inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
}

impl Stats {
    /// The widest level (ideal thread count).
    pub fn max_width(&self) -> usize {
        self.width_per_level.iter().copied().max().unwrap_or(0)
    }

    /// A lower bound of the time on `threads` threads, in bootstrap
    /// latencies: the depth, or #PBS / threads where more. Plans are
    /// chosen by the schedule itself ([`Circuit::time_on`]).
    pub fn levels_on(&self, threads: usize) -> u64 {
        (self.pbs as u64)
            .div_ceil(threads.max(1) as u64)
            .max(self.depth as u64)
    }
}

impl Circuit {
    /// A circuit of `n_inputs` inputs (digits in `0..2^pi`) and one level of
    /// bootstraps `(input, table)` reading only inputs, one output each,
    /// whose outputs are the circuit's: a batch of independent bootstraps
    /// for measurements. Unchecked, so crate-private.
    pub fn one_level(
        params: &ParameterSet,
        n_inputs: usize,
        tables: Vec<Vec<u64>>,
        bootstraps: Vec<(LinearExpr, usize)>,
    ) -> Circuit {
        let digits = Range {
            lo: 0,
            hi: params.message_modulus() as i64 - 1,
            step: 1,
        };
        let n = n_inputs as FreshId;
        let outputs = (0..bootstraps.len() as FreshId)
            .map(|b| LinearExpr {
                terms: vec![(n + b, 1)],
                constant: 0,
            })
            .collect();
        let mut depth = vec![0; n_inputs];
        depth.resize(n_inputs + bootstraps.len(), 1);
        let output_margins = vec![Margin::Half; bootstraps.len()];
        Circuit {
            id: next_circuit_id(),
            params: params.id,
            inputs: (0..n).map(|f| (f, digits)).collect(),
            tables,
            bootstraps: bootstraps
                .into_iter()
                .enumerate()
                .map(|(b, (input, table))| Bootstrap {
                    input,
                    selector: digits,
                    table,
                    offsets: vec![0],
                    first_output: n + b as FreshId,
                })
                .collect(),
            outputs,
            output_margins,
            depth,
        }
    }

    /// The parameter set it was built for.
    pub fn params(&self) -> ParamsId {
        self.params
    }

    /// Its identity: wires of another circuit are refused by this one's
    /// checks, and backends key their caches by it.
    pub fn id(&self) -> CircuitId {
        self.id
    }

    /// Fresh id and declared range of each input, in input order.
    pub fn inputs(&self) -> &[(FreshId, Range)] {
        &self.inputs
    }

    /// Its distinct tables as `2^(pi+1)` half-unit slots (see [`table`]),
    /// which bootstraps reference by index.
    pub fn tables(&self) -> &[Vec<u64>] {
        &self.tables
    }

    /// Its outputs, as linear expressions over fresh values.
    pub fn outputs(&self) -> &[LinearExpr] {
        &self.outputs
    }

    /// The outputs too noisy to be packed ([`crate::crypto::packing`]) and
    /// still decrypt with the set's failure probability: each output's
    /// index, quadratic weight and the set's packed budget for its margin
    /// ([`ParameterSet::packed_output_budgets`]). Empty when its results
    /// may be packed.
    pub fn unpackable_outputs(&self) -> Vec<Unpackable> {
        let budgets = self.params.params().packed_output_budgets;
        self.outputs
            .iter()
            .enumerate()
            .filter_map(|(index, expr)| {
                let margin = self.output_margins.get(index).copied();
                let budget = budgets.at(margin.unwrap_or(Margin::Half));
                let weight = expr.quadratic_weight();
                (weight > budget).then_some(Unpackable {
                    index,
                    weight,
                    budget,
                })
            })
            .collect()
    }

    /// The depth in bootstraps of each fresh value (0 for inputs).
    pub fn depths(&self) -> &[u32] {
        &self.depth
    }

    /// How many inputs it takes.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// How many outputs it gives.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// Its bootstraps, in the order they were built (each after the
    /// bootstraps its input reads).
    pub fn bootstraps(&self) -> &[Bootstrap] {
        &self.bootstraps
    }

    /// For each bootstrap, the bootstraps reading its outputs (one entry
    /// per term), and how many terms of its own input other bootstraps
    /// produce: the dependency counts a scheduler starts from (the cpu
    /// backend's, and the model of it in `hearth-bench`).
    pub fn dependencies(&self) -> (Vec<Vec<u32>>, Vec<u32>) {
        let mut producer = vec![u32::MAX; self.num_fresh()];
        for (b, bs) in self.bootstraps.iter().enumerate() {
            for j in 0..bs.offsets.len() {
                producer[bs.first_output as usize + j] = b as u32;
            }
        }
        let mut consumers = vec![Vec::new(); self.bootstraps.len()];
        let pending = self
            .bootstraps
            .iter()
            .enumerate()
            .map(|(b, bs)| {
                let mut n = 0;
                for &(f, _) in &bs.input.terms {
                    let p = producer[f as usize];
                    if p != u32::MAX {
                        consumers[p as usize].push(b as u32);
                        n += 1;
                    }
                }
                n
            })
            .collect();
        (consumers, pending)
    }

    /// Drops the bootstraps no output depends on (a product's columns
    /// shifted out by a clear factor, a flag nothing reads, a choice's
    /// leftovers) and numbers the fresh values again in their order.
    /// Returns how many it dropped. Programs are pruned when built; a
    /// circuit measured before its outputs are marked is not.
    pub fn prune(&mut self) -> usize {
        let n = self.num_fresh();
        let mut live = vec![false; n];
        for o in &self.outputs {
            for &(f, _) in &o.terms {
                live[f as usize] = true;
            }
        }
        let mut keep = vec![false; self.bootstraps.len()];
        for (k, b) in self.bootstraps.iter().enumerate().rev() {
            let first = b.first_output as usize;
            if live[first..first + b.offsets.len()].iter().any(|&l| l) {
                keep[k] = true;
                for &(f, _) in &b.input.terms {
                    live[f as usize] = true;
                }
            }
        }
        let dropped = keep.iter().filter(|&&k| !k).count();
        if dropped == 0 {
            return 0;
        }
        // Inputs and every output of a kept bootstrap keep a slot.
        let mut kept = vec![false; n];
        for &(f, _) in &self.inputs {
            kept[f as usize] = true;
        }
        for (b, &k) in self.bootstraps.iter().zip(&keep) {
            if k {
                let first = b.first_output as usize;
                kept[first..first + b.offsets.len()].fill(true);
            }
        }
        let mut new_id = vec![FreshId::MAX; n];
        let mut next: FreshId = 0;
        for (f, &k) in kept.iter().enumerate() {
            if k {
                new_id[f] = next;
                next += 1;
            }
        }
        let renumber = |e: &mut LinearExpr| {
            for t in &mut e.terms {
                t.0 = new_id[t.0 as usize];
            }
        };
        let mut bootstraps = Vec::with_capacity(self.bootstraps.len() - dropped);
        for (mut b, k) in std::mem::take(&mut self.bootstraps).into_iter().zip(keep) {
            if k {
                renumber(&mut b.input);
                b.first_output = new_id[b.first_output as usize];
                bootstraps.push(b);
            }
        }
        self.bootstraps = bootstraps;
        self.outputs.iter_mut().for_each(renumber);
        for (f, _) in &mut self.inputs {
            *f = new_id[*f as usize];
        }
        self.depth = std::mem::take(&mut self.depth)
            .into_iter()
            .zip(kept)
            .filter_map(|(d, k)| k.then_some(d))
            .collect();
        dropped
    }

    /// Fresh values: inputs and bootstrap outputs (a backend's slots).
    pub fn num_fresh(&self) -> usize {
        self.depth.len()
    }

    /// For each fresh value, the number of bootstraps that read it, plus one
    /// if an output reads it (outputs are assembled at the end).
    pub fn use_counts(&self) -> Vec<u32> {
        let mut uses = vec![0u32; self.num_fresh()];
        for b in &self.bootstraps {
            for &(f, _) in &b.input.terms {
                uses[f as usize] += 1;
            }
        }
        let mut pinned = vec![false; self.num_fresh()];
        for o in &self.outputs {
            for &(f, _) in &o.terms {
                pinned[f as usize] = true;
            }
        }
        for (u, p) in uses.iter_mut().zip(pinned) {
            *u += p as u32;
        }
        uses
    }

    /// The bytes it holds in memory (its tables, bootstraps, outputs and
    /// depths, with their vectors' spare capacity): what a server keeping
    /// it counts against its memory.
    pub fn heap_bytes(&self) -> u64 {
        use std::mem::size_of;
        let expr = |e: &LinearExpr| size_of::<LinearExpr>() + e.terms.capacity() * 16;
        let tables: usize = self
            .tables
            .iter()
            .map(|t| size_of::<Vec<u64>>() + t.capacity() * 8)
            .sum();
        let bootstraps: usize = self
            .bootstraps
            .iter()
            .map(|b| size_of::<Bootstrap>() + expr(&b.input) + b.offsets.capacity() * 8)
            .sum::<usize>()
            + (self.bootstraps.capacity() - self.bootstraps.len()) * size_of::<Bootstrap>();
        let outputs: usize = self.outputs.iter().map(expr).sum();
        let inputs = self.inputs.capacity() * size_of::<(FreshId, Range)>();
        (size_of::<Circuit>() + tables + bootstraps + outputs + inputs + self.depth.capacity() * 4)
            as u64
    }

    /// #PBS, depth, width per level and peak live ciphertexts.
    pub fn stats(&self) -> Stats {
        let depth = self
            .bootstraps
            .iter()
            .map(|b| self.depth[b.first_output as usize])
            .max()
            .unwrap_or(0);
        let mut width_per_level = vec![0usize; depth as usize];
        let mut order: Vec<usize> = (0..self.bootstraps.len()).collect();
        for b in &self.bootstraps {
            width_per_level[self.depth[b.first_output as usize] as usize - 1] += 1;
        }
        order.sort_by_key(|&i| self.depth[self.bootstraps[i].first_output as usize]);
        let mut uses = self.use_counts();
        let mut live = self.num_inputs();
        let mut peak = live;
        for i in order {
            let b = &self.bootstraps[i];
            live += b.offsets.len();
            peak = peak.max(live);
            for &(f, _) in &b.input.terms {
                uses[f as usize] -= 1;
                if uses[f as usize] == 0 {
                    live -= 1;
                }
            }
        }
        // Values never read at all are freed at once (counted while made).
        Stats {
            pbs: self.bootstraps.len(),
            depth,
            width_per_level,
            peak_live: peak.max(self.outputs.len()),
            inputs: self.num_inputs(),
            outputs: self.outputs.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::lut::Lut;
    use crate::crypto::params::INSECURE_TEST_DIGITS as P;
    use crate::error::BuildError;

    #[test]
    fn exact_weights_and_ranges() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(-1, 1).unwrap();
        let y = b.input(-1, 1).unwrap();
        let xx = b.add(x, x).unwrap();
        assert_eq!(b.quadratic_weight(xx).unwrap(), 4);
        assert_eq!(b.range(xx).unwrap(), Range::with_step(-2, 2, 2));
        let zero = b.sub(x, x).unwrap();
        assert_eq!(b.quadratic_weight(zero).unwrap(), 0);
        let s = b.linear(&[(x, 3), (y, -2)], 1).unwrap();
        assert_eq!(b.quadratic_weight(s).unwrap(), 13);
        assert_eq!(b.range(s).unwrap(), Range::new(-4, 6));
    }

    #[test]
    fn over_budget_is_refused_with_node_name() {
        let mut b = CircuitBuilder::new(&P);
        let (x, y, z) = (
            b.input(-1, 1).unwrap(),
            b.input(-1, 1).unwrap(),
            b.input(-1, 1).unwrap(),
        );
        // Dense (step 1), weight 100 + 36 + 1 = 137 > 112.
        let big = b.linear(&[(x, 10), (y, 6), (z, 1)], 0).unwrap();
        let lut = Lut::negacyclic(5, |v| v).unwrap();
        let err = b.bootstrap(big, &lut).unwrap_err();
        assert!(
            matches!(
                err,
                BuildError::OverBudget {
                    weight: 137,
                    budget: 112,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("bootstrap #0"));
        let ok = b.linear(&[(x, 10), (y, 3), (z, 1)], 0).unwrap(); // 110
        assert!(b.bootstrap(ok, &lut).is_ok());
        // Outputs have their own (decryption) budget.
        let huge = b.mul_const(big, 3).unwrap(); // 1 233 > 1 200
        let err = b.output(huge).unwrap_err();
        assert!(err.to_string().contains("output 0"), "{err}");
        assert!(b.output(big).is_ok());
    }

    #[test]
    fn spread_selectors_get_the_wide_budget() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(-1, 1).unwrap();
        // 11 x takes -11, 0, 11: far apart, so the 2-unit-margin budget
        // applies to its weight 121.
        let spread = b.mul_const(x, 11).unwrap();
        let lut = Lut::negacyclic(5, |v| v).unwrap();
        assert!(b.bootstrap(spread, &lut).is_ok());
        // A table that only reads the sign of 11 x (-1, 0, 1) and has equal
        // outputs on neighbours still decodes at the wide margin.
        let sign = Lut::from_fn(5, -11, 11, |v| v.signum()).unwrap();
        assert!(b.bootstrap(spread, &sign).is_ok());
    }

    #[test]
    fn constant_tables_fold() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(-1, 1).unwrap();
        let zero = Lut::from_fn(5, -1, 1, |_| 0).unwrap();
        let y = b.bootstrap(x, &zero).unwrap();
        assert_eq!(b.constant_value(y).unwrap(), Some(0));
        assert_eq!(b.build().stats().pbs, 0);
    }

    /// Tables of one rotation that are constant on the selector's range
    /// are constants; the others still share one rotation.
    #[test]
    fn constant_tables_of_a_rotation_fold() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(0, 3).unwrap();
        // x in 0..=3: `x >= 4` is constant, `x & 1` and `x >> 1` are not.
        let carry = Lut::from_fn(5, 0, 7, |v| i64::from(v >= 4)).unwrap();
        let low = Lut::from_fn(5, 0, 7, |v| v & 1).unwrap();
        let high = Lut::from_fn(5, 0, 7, |v| v >> 1).unwrap();
        let outs = b.bootstrap_many(x, &[&low, &carry, &high]).unwrap();
        assert_eq!(b.constant_value(outs[1]).unwrap(), Some(0));
        assert_eq!(b.constant_value(outs[0]).unwrap(), None);
        assert_eq!(b.range(outs[2]).unwrap(), Range::new(0, 1));
        for &o in &outs {
            b.output(o).unwrap();
        }
        let c = b.build();
        assert_eq!(c.stats().pbs, 1);
        assert_eq!(c.bootstraps()[0].offsets.len(), 2);
    }

    #[test]
    fn uncovered_selector_is_refused() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(-1, 1).unwrap();
        let y = b.input(-1, 1).unwrap();
        let lut = Lut::from_fn(5, -1, 1, |v| v).unwrap();
        assert!(b.bootstrap(x, &lut).is_ok());
        let s = b.add(x, y).unwrap();
        let err = b.bootstrap(s, &lut).unwrap_err();
        assert!(
            matches!(err, BuildError::SelectorNotCovered { value: 30, .. }),
            "{err}"
        );
        // A selector that wraps the whole ring needs a table defined
        // everywhere (9 s + x takes 39 consecutive values).
        let wide = b.linear(&[(s, 9), (x, 1)], 0).unwrap();
        let partial = Lut::from_fn(5, -15, 15, |v| v.signum()).unwrap();
        assert!(b.bootstrap(wide, &partial).is_err());
    }

    #[test]
    fn foreign_wires_are_refused() {
        let mut a = CircuitBuilder::new(&P);
        let mut b = CircuitBuilder::new(&P);
        let x = a.input(0, 1).unwrap();
        let y = b.input(0, 1).unwrap();
        assert!(matches!(b.add(x, y), Err(BuildError::ForeignWire { .. })));
        assert!(matches!(b.output(x), Err(BuildError::ForeignWire { .. })));
    }

    #[test]
    fn constant_bootstraps_fold() {
        let mut b = CircuitBuilder::new(&P);
        let c = b.constant(-3);
        let lut = Lut::from_fn(5, -8, 7, |v| 2 * v).unwrap();
        let y = b.bootstrap(c, &lut).unwrap();
        assert_eq!(b.range(y).unwrap(), Range::new(-6, -6));
        assert_eq!(b.build().stats().pbs, 0);
    }

    #[test]
    fn stats_of_a_small_dag() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(0, 3).unwrap();
        let id = Lut::from_fn(5, 0, 15, |v| v).unwrap();
        let double = Lut::from_fn(5, 0, 15, |v| 2 * v).unwrap();
        let a = b.bootstrap(x, &id).unwrap();
        let c = b.bootstrap(x, &double).unwrap();
        let s = b.add(a, c).unwrap();
        let d = b.bootstrap(s, &id).unwrap();
        b.output(d).unwrap();
        let st = b.build().stats();
        assert_eq!(st.pbs, 3);
        assert_eq!(st.depth, 2);
        assert_eq!(st.width_per_level, vec![2, 1]);
        assert_eq!(st.peak_live, 3);
    }

    #[test]
    fn identical_bootstraps_are_made_once() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(0, 3).unwrap();
        let id = Lut::from_fn(5, 0, 15, |v| v).unwrap();
        let a = b.bootstrap(x, &id).unwrap();
        let c = b.bootstrap(x, &id).unwrap();
        // One ciphertext twice: its noise adds coherently.
        let s = b.add(a, c).unwrap();
        assert_eq!(b.quadratic_weight(s).unwrap(), 4);
        // Another table, or another selector, is another bootstrap.
        let double = Lut::from_fn(5, 0, 15, |v| 2 * v).unwrap();
        b.bootstrap(x, &double).unwrap();
        let x1 = b.add_const(x, 1).unwrap();
        b.bootstrap(x1, &id).unwrap();
        assert_eq!(b.build().stats().pbs, 3);
    }

    #[test]
    fn unread_bootstraps_are_pruned() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(0, 3).unwrap();
        let id = Lut::from_fn(5, 0, 15, |v| v).unwrap();
        let double = Lut::from_fn(5, 0, 15, |v| 2 * v).unwrap();
        let a = b.bootstrap(x, &id).unwrap();
        // Read by nothing that reaches an output: dropped, with the
        // bootstrap that only it reads.
        let unread = b.bootstrap(x, &double).unwrap();
        b.bootstrap(unread, &id).unwrap();
        // An input declared after bootstraps keeps its place.
        let y = b.input(0, 3).unwrap();
        let s = b.add(a, y).unwrap();
        let out = b.bootstrap(s, &id).unwrap();
        b.output(out).unwrap();
        b.output(a).unwrap();
        let mut c = b.build();
        assert_eq!(c.stats().pbs, 4);
        let before = (c.inputs().len(), c.outputs().len());
        assert_eq!(c.prune(), 2);
        assert_eq!(c.prune(), 0);
        assert_eq!((c.inputs().len(), c.outputs().len()), before);
        let st = c.stats();
        assert_eq!((st.pbs, st.depth), (2, 2));
        // Fresh values: the two inputs and two outputs, numbered in order,
        // every bootstrap reading only earlier values.
        assert_eq!(c.num_fresh(), 4);
        let ids: Vec<FreshId> = c.inputs().iter().map(|&(f, _)| f).collect();
        assert_eq!(ids, vec![0, 2]);
        for boot in &c.bootstraps {
            assert!(boot.input.terms.iter().all(|&(f, _)| f < boot.first_output));
        }
        assert_eq!(c.outputs()[0].terms, vec![(3, 1)]);
        assert_eq!(c.outputs()[1].terms, vec![(1, 1)]);
        assert_eq!(c.depths(), &[0, 1, 0, 2]);
    }
}
