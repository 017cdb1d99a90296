//! Circuits: a DAG of cheap linear operations on LWE ciphertexts and
//! bootstraps, built once and evaluated by any [`crate::backend`].
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
//! Build-time checks, each a [`BuildError`] naming the node: quadratic weight
//! over the parameter set's budget at a bootstrap input or an output; a
//! selector range not covered by the lookup table's domain; wires from
//! another circuit. A bootstrap of a constant wire is folded to a constant
//! (trivial digits cost no bootstrap).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::BuildError;
use crate::lut::Lut;
use crate::params::{ParameterSet, ParamsId};

/// Identity of one circuit (random per builder).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CircuitId(u64);

fn next_circuit_id() -> CircuitId {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    CircuitId(NEXT.fetch_add(1, Ordering::Relaxed) ^ (std::process::id() as u64) << 40)
}

/// Index of a fresh value: inputs first, then bootstrap outputs in order.
pub type FreshId = u32;

/// A set of integers `lo..=hi` read modulo `2^pi` (a wire's possible values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: i64,
    pub hi: i64,
}

impl Range {
    pub fn new(lo: i64, hi: i64) -> Self {
        Range { lo, hi }
    }

    fn point(v: i64) -> Self {
        Range { lo: v, hi: v }
    }

    /// Number of distinct residues mod `m`.
    pub fn width(&self, m: u64) -> u64 {
        ((self.hi - self.lo) as u64 + 1).min(m)
    }

    /// Whether residue `x` (in `0..m`) is a possible value.
    pub fn contains_residue(&self, x: u64, m: u64) -> bool {
        self.width(m) == m || (x as i64 - self.lo).rem_euclid(m as i64) <= self.hi - self.lo
    }

    /// Whether every possible residue is one of `lo..=hi` mod `m`.
    pub fn is_within(&self, lo: i64, hi: i64, m: u64) -> bool {
        let width = self.width(m) as i64;
        width <= hi - lo + 1 && (self.lo - lo).rem_euclid(m as i64) + width - 1 <= hi - lo
    }

    /// The canonical form of the same residues: the full ring as `0..m`,
    /// else the representatives whose midpoint is nearest to zero
    /// (`lo + hi` in `[-m, m)`), so that a constant `-1` reads `-1`,
    /// never `m - 1`, whichever way it was computed.
    fn canonical(self, m: i64) -> Self {
        let (lo, hi, m) = (self.lo as i128, self.hi as i128, m as i128);
        if hi - lo + 1 >= m {
            return Range {
                lo: 0,
                hi: m as i64 - 1,
            };
        }
        let shift = (lo + hi + m).div_euclid(2 * m) * m;
        Range {
            lo: (lo - shift) as i64,
            hi: (hi - shift) as i64,
        }
    }

    /// The shortest arc of `Z_m` holding all residues in `values`,
    /// written with signed bounds where that is natural.
    fn covering(values: &[u64], m: u64) -> Self {
        let mut seen = vec![false; m as usize];
        for &v in values {
            seen[(v % m) as usize] = true;
        }
        let present: Vec<i64> = (0..m as i64).filter(|&v| seen[v as usize]).collect();
        // Largest gap between consecutive present residues (cyclically).
        let mut best_gap = 0;
        let mut best_end = present[0];
        for (i, &v) in present.iter().enumerate() {
            let next = if i + 1 < present.len() {
                present[i + 1]
            } else {
                present[0] + m as i64
            };
            if next - v > best_gap {
                best_gap = next - v;
                best_end = v;
            }
        }
        // The arc starts after the gap and ends at `best_end`.
        Range {
            lo: best_end + best_gap,
            hi: best_end + m as i64,
        }
        .canonical(m as i64)
    }
}

/// `sum_i w_i * fresh_i + constant`, terms sorted by fresh id, no zero weight.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinearExpr {
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
pub struct Bootstrap {
    pub input: LinearExpr,
    /// Proven range of the selector (checked by the clear backend).
    pub selector: Range,
    pub table: usize,
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
    /// Distinct tables over `Z_{2^pi}`, referenced by index.
    pub(crate) tables: Vec<Vec<u64>>,
    pub(crate) bootstraps: Vec<Bootstrap>,
    pub(crate) outputs: Vec<LinearExpr>,
    /// Depth of each fresh value (0 for inputs).
    pub(crate) depth: Vec<u32>,
}

/// A handle to a value in a circuit under construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Wire {
    circuit: CircuitId,
    index: u32,
}

#[derive(Clone, Debug)]
struct WireData {
    expr: LinearExpr,
    range: Range,
}

/// Builds a [`Circuit`], checking noise, ranges and wire ownership as it goes.
pub struct CircuitBuilder {
    params: &'static ParameterSet,
    circuit: Circuit,
    wires: Vec<WireData>,
    fresh_range: Vec<Range>,
    table_index: HashMap<Vec<u64>, usize>,
}

impl CircuitBuilder {
    pub fn new(params: &'static ParameterSet) -> Self {
        CircuitBuilder {
            params,
            circuit: Circuit {
                id: next_circuit_id(),
                params: params.id,
                inputs: Vec::new(),
                tables: Vec::new(),
                bootstraps: Vec::new(),
                outputs: Vec::new(),
                depth: Vec::new(),
            },
            wires: Vec::new(),
            fresh_range: Vec::new(),
            table_index: HashMap::new(),
        }
    }

    pub fn params(&self) -> &'static ParameterSet {
        self.params
    }

    fn modulus(&self) -> i64 {
        self.params.message_modulus() as i64
    }

    fn push(&mut self, expr: LinearExpr) -> Wire {
        let m = self.modulus();
        let mut lo = expr.constant as i64;
        let mut hi = lo;
        let mut full = false;
        for &(f, w) in &expr.terms {
            let r = self.fresh_range[f as usize];
            let (a, b) = (r.lo.saturating_mul(w), r.hi.saturating_mul(w));
            lo = lo.saturating_add(a.min(b));
            hi = hi.saturating_add(a.max(b));
            full |= hi - lo >= m || lo.abs() > 1 << 50 || hi.abs() > 1 << 50;
        }
        let range = if full {
            Range::new(0, m - 1)
        } else {
            Range::new(lo, hi)
        };
        self.push_with_range(expr, range)
    }

    fn push_with_range(&mut self, expr: LinearExpr, range: Range) -> Wire {
        let range = range.canonical(self.modulus());
        self.wires.push(WireData { expr, range });
        Wire {
            circuit: self.circuit.id,
            index: (self.wires.len() - 1) as u32,
        }
    }

    fn data(&self, w: Wire, what: &str) -> Result<&WireData, BuildError> {
        if w.circuit != self.circuit.id {
            return Err(BuildError::ForeignWire {
                node: format!("{what} (wire #{})", w.index),
            });
        }
        Ok(&self.wires[w.index as usize])
    }

    fn fresh(&mut self, range: Range, depth: u32) -> FreshId {
        self.fresh_range.push(range);
        self.circuit.depth.push(depth);
        (self.fresh_range.len() - 1) as FreshId
    }

    /// A new encrypted input whose plaintext lies in `lo..=hi` (signed or
    /// unsigned view; the clear backend checks it).
    pub fn input(&mut self, lo: i64, hi: i64) -> Result<Wire, BuildError> {
        let index = self.circuit.inputs.len();
        if hi < lo {
            return Err(BuildError::EmptyRange {
                node: format!("input {index}"),
                lo,
                hi,
            });
        }
        let range = Range::new(lo, hi).canonical(self.modulus());
        let f = self.fresh(range, 0);
        self.circuit.inputs.push((f, range));
        Ok(self.push_with_range(
            LinearExpr {
                terms: vec![(f, 1)],
                constant: 0,
            },
            range,
        ))
    }

    /// A clear constant (a trivial ciphertext: no noise, no bootstrap).
    pub fn constant(&mut self, value: i64) -> Wire {
        let v = value.rem_euclid(self.modulus());
        self.push_with_range(
            LinearExpr {
                terms: Vec::new(),
                constant: v as u64,
            },
            Range::point(v),
        )
    }

    /// The expression `sum_j coef_j * wire_j + constant`, terms merged.
    fn expr_of(&self, terms: &[(Wire, i64)], constant: i64) -> Result<LinearExpr, BuildError> {
        let m = self.modulus();
        let mut acc: Vec<(FreshId, i64)> = Vec::new();
        let mut c = constant.rem_euclid(m);
        for (j, &(w, coef)) in terms.iter().enumerate() {
            let d = self.data(w, &format!("linear term {j}"))?;
            let overflow = || BuildError::WeightOverflow {
                node: format!("linear term {j}"),
            };
            c = (c + (d.expr.constant as i64 * coef.rem_euclid(m)).rem_euclid(m)).rem_euclid(m);
            for &(f, x) in &d.expr.terms {
                acc.push((f, x.checked_mul(coef).ok_or_else(overflow)?));
            }
        }
        acc.sort_unstable_by_key(|&(f, _)| f);
        let mut merged: Vec<(FreshId, i64)> = Vec::with_capacity(acc.len());
        for (f, x) in acc {
            match merged.last_mut() {
                Some((g, y)) if *g == f => {
                    *y = y.checked_add(x).ok_or(BuildError::WeightOverflow {
                        node: "linear".into(),
                    })?
                }
                _ => merged.push((f, x)),
            }
        }
        merged.retain(|&(_, x)| x != 0);
        Ok(LinearExpr {
            terms: merged,
            constant: c as u64,
        })
    }

    /// `sum_j coef_j * wire_j + constant`.
    pub fn linear(&mut self, terms: &[(Wire, i64)], constant: i64) -> Result<Wire, BuildError> {
        let expr = self.expr_of(terms, constant)?;
        Ok(self.push(expr))
    }

    /// The quadratic weight `sum_j coef_j * wire_j` would have, without
    /// making the wire: wires that share fresh values add their weights
    /// before squaring (`x + x` weighs 4, not 2).
    pub fn weight_of(&self, terms: &[(Wire, i64)]) -> Result<u64, BuildError> {
        Ok(self.expr_of(terms, 0)?.quadratic_weight())
    }

    /// The largest quadratic weight a bootstrap input or an output may have.
    pub fn budget(&self) -> u64 {
        self.params.budget
    }

    pub fn add(&mut self, a: Wire, b: Wire) -> Result<Wire, BuildError> {
        self.linear(&[(a, 1), (b, 1)], 0)
    }

    pub fn sub(&mut self, a: Wire, b: Wire) -> Result<Wire, BuildError> {
        self.linear(&[(a, 1), (b, -1)], 0)
    }

    pub fn neg(&mut self, a: Wire) -> Result<Wire, BuildError> {
        self.linear(&[(a, -1)], 0)
    }

    /// Multiplication by a small clear integer (the noise grows by `c^2`).
    pub fn mul_const(&mut self, a: Wire, c: i64) -> Result<Wire, BuildError> {
        self.linear(&[(a, c)], 0)
    }

    pub fn add_const(&mut self, a: Wire, c: i64) -> Result<Wire, BuildError> {
        self.linear(&[(a, 1)], c)
    }

    /// Narrows a wire's range to `lo..=hi`, for invariants interval
    /// arithmetic cannot see. Trusted by the builder; the clear backend
    /// reports any bootstrap whose selector leaves its proven range.
    pub fn assume_range(&mut self, a: Wire, lo: i64, hi: i64) -> Result<Wire, BuildError> {
        let expr = self.data(a, "assume_range")?.expr.clone();
        if hi < lo {
            return Err(BuildError::EmptyRange {
                node: "assume_range".into(),
                lo,
                hi,
            });
        }
        Ok(self.push_with_range(expr, Range::new(lo, hi)))
    }

    /// The current range of a wire.
    pub fn range(&self, a: Wire) -> Result<Range, BuildError> {
        Ok(self.data(a, "range")?.range)
    }

    /// The value of a wire that holds no ciphertext (a clear constant), in
    /// the signed view; `None` for an encrypted wire.
    pub fn constant_value(&self, a: Wire) -> Result<Option<i64>, BuildError> {
        let d = self.data(a, "constant_value")?;
        if !d.expr.terms.is_empty() {
            return Ok(None);
        }
        let m = self.modulus();
        let c = d.expr.constant as i64;
        Ok(Some(if c >= m / 2 { c - m } else { c }))
    }

    /// The quadratic weight of a wire.
    pub fn quadratic_weight(&self, a: Wire) -> Result<u64, BuildError> {
        Ok(self.data(a, "quadratic_weight")?.expr.quadratic_weight())
    }

    fn check_budget(&self, expr: &LinearExpr, node: String) -> Result<(), BuildError> {
        let weight = expr.quadratic_weight();
        if weight > self.params.budget {
            return Err(BuildError::OverBudget {
                node,
                weight,
                budget: self.params.budget,
                params: self.params.id,
            });
        }
        Ok(())
    }

    /// One bootstrap evaluating `lut` on `a`.
    pub fn bootstrap(&mut self, a: Wire, lut: &Lut) -> Result<Wire, BuildError> {
        Ok(self.bootstrap_many(a, &[lut])?[0])
    }

    /// One blind rotation evaluating several tables on `a` (many-LUT): needs
    /// `luts.len() * width(a) <= 2^(pi-1)`.
    pub fn bootstrap_many(&mut self, a: Wire, luts: &[&Lut]) -> Result<Vec<Wire>, BuildError> {
        let node = format!("bootstrap #{}", self.circuit.bootstraps.len());
        let d = self.data(a, &node)?.clone();
        let m = self.params.message_modulus();
        let pi = self.params.pi;
        for lut in luts {
            if lut.pi() != pi {
                return Err(BuildError::LutPiMismatch {
                    node,
                    lut_pi: lut.pi(),
                    pi,
                });
            }
        }
        let width = d.range.width(m);
        let residues: Vec<u64> = (0..width)
            .map(|i| (d.range.lo + i as i64).rem_euclid(m as i64) as u64)
            .collect();
        for lut in luts {
            if let Some(&x) = residues.iter().find(|&&x| !lut.covers(x as i64)) {
                return Err(BuildError::SelectorNotCovered {
                    node,
                    value: x,
                    lo: d.range.lo,
                    hi: d.range.hi,
                    pi,
                });
            }
        }
        // Constant selector: fold.
        if d.expr.terms.is_empty() {
            let x = d.expr.constant as i64;
            return Ok(luts
                .iter()
                .map(|lut| {
                    let v = lut.eval(x);
                    self.push_with_range(
                        LinearExpr {
                            terms: Vec::new(),
                            constant: v,
                        },
                        Range::point(v as i64),
                    )
                })
                .collect());
        }
        self.check_budget(&d.expr, node.clone())?;
        let (table, offsets) = if luts.len() == 1 {
            (luts[0].table().to_vec(), vec![0])
        } else {
            let needed = luts.len() as u64 * width;
            if needed > m / 2 {
                return Err(BuildError::ManyLutTooWide {
                    node,
                    luts: luts.len(),
                    width,
                    needed,
                    available: m / 2,
                });
            }
            let mut table = vec![0u64; m as usize];
            for (j, lut) in luts.iter().enumerate() {
                for i in 0..width as i64 {
                    let x = d.range.lo + i;
                    let pos = (x + j as i64 * width as i64).rem_euclid(m as i64) as usize;
                    let v = lut.eval(x);
                    table[pos] = v;
                    table[(pos + m as usize / 2) % m as usize] = (m - v) % m;
                }
            }
            (table, (0..luts.len() as u64).map(|j| j * width).collect())
        };
        let table_id = match self.table_index.get(&table) {
            Some(&t) => t,
            None => {
                self.circuit.tables.push(table.clone());
                self.table_index
                    .insert(table, self.circuit.tables.len() - 1);
                self.circuit.tables.len() - 1
            }
        };
        let depth = 1 + d
            .expr
            .terms
            .iter()
            .map(|&(f, _)| self.circuit.depth[f as usize])
            .max()
            .unwrap_or(0);
        let first_output = self.fresh_range.len() as FreshId;
        let mut wires = Vec::with_capacity(luts.len());
        for lut in luts {
            let outs: Vec<u64> = residues.iter().map(|&x| lut.eval(x as i64)).collect();
            let range = Range::covering(&outs, m);
            let f = self.fresh(range, depth);
            wires.push(self.push_with_range(
                LinearExpr {
                    terms: vec![(f, 1)],
                    constant: 0,
                },
                range,
            ));
        }
        self.circuit.bootstraps.push(Bootstrap {
            input: d.expr,
            selector: d.range,
            table: table_id,
            offsets,
            first_output,
        });
        Ok(wires)
    }

    /// Marks `a` as an output; returns its output index.
    pub fn output(&mut self, a: Wire) -> Result<usize, BuildError> {
        let node = format!("output {}", self.circuit.outputs.len());
        let expr = self.data(a, &node)?.expr.clone();
        self.check_budget(&expr, node)?;
        self.circuit.outputs.push(expr);
        Ok(self.circuit.outputs.len() - 1)
    }

    pub fn build(self) -> Circuit {
        self.circuit
    }
}

/// Hardware-independent cost of a circuit.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
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
    pub inputs: usize,
    pub outputs: usize,
}

impl Stats {
    /// The widest level (ideal thread count).
    pub fn max_width(&self) -> usize {
        self.width_per_level.iter().copied().max().unwrap_or(0)
    }
}

impl Circuit {
    pub fn params(&self) -> ParamsId {
        self.params
    }

    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    pub fn bootstraps(&self) -> &[Bootstrap] {
        &self.bootstraps
    }

    pub(crate) fn num_fresh(&self) -> usize {
        self.depth.len()
    }

    /// For each fresh value, the number of bootstraps that read it, plus one
    /// if an output reads it (outputs are assembled at the end).
    pub(crate) fn use_counts(&self) -> Vec<u32> {
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
    use crate::params::INSECURE_TEST_DIGITS as P;

    #[test]
    fn exact_weights_and_ranges() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(-1, 1).unwrap();
        let y = b.input(-1, 1).unwrap();
        let xx = b.add(x, x).unwrap();
        assert_eq!(b.quadratic_weight(xx).unwrap(), 4);
        assert_eq!(b.range(xx).unwrap(), Range::new(-2, 2));
        let zero = b.sub(x, x).unwrap();
        assert_eq!(b.quadratic_weight(zero).unwrap(), 0);
        let s = b.linear(&[(x, 3), (y, -2)], 1).unwrap();
        assert_eq!(b.quadratic_weight(s).unwrap(), 13);
        assert_eq!(b.range(s).unwrap(), Range::new(-4, 6));
    }

    #[test]
    fn range_covering_prefers_short_signed_arcs() {
        assert_eq!(Range::covering(&[31, 0, 1], 32), Range::new(-1, 1));
        assert_eq!(Range::covering(&[3, 5], 32), Range::new(3, 5));
        assert_eq!(Range::covering(&[16], 32), Range::new(-16, -16));
        assert_eq!(Range::covering(&[29, 30], 32), Range::new(-3, -2));
        assert_eq!(Range::covering(&[0, 10, 20], 32), Range::new(0, 20));
    }

    #[test]
    fn over_budget_is_refused_with_node_name() {
        let mut b = CircuitBuilder::new(&P);
        let x = b.input(0, 0).unwrap();
        let big = b.mul_const(x, 11).unwrap(); // 121 > 112
        let lut = Lut::negacyclic(5, |v| v).unwrap();
        let err = b.bootstrap(big, &lut).unwrap_err();
        assert!(
            matches!(
                err,
                BuildError::OverBudget {
                    weight: 121,
                    budget: 112,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("bootstrap #0"));
        let err = b.output(big).unwrap_err();
        assert!(err.to_string().contains("output 0"), "{err}");
        let ok = b.mul_const(x, 10).unwrap(); // 100
        assert!(b.bootstrap(ok, &lut).is_ok());
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
        // A selector that wraps the whole ring needs a table defined everywhere.
        let wide = b.mul_const(s, 9).unwrap();
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
        let a = b.bootstrap(x, &id).unwrap();
        let c = b.bootstrap(x, &id).unwrap();
        let s = b.add(a, c).unwrap();
        let d = b.bootstrap(s, &id).unwrap();
        b.output(d).unwrap();
        let st = b.build().stats();
        assert_eq!(st.pbs, 3);
        assert_eq!(st.depth, 2);
        assert_eq!(st.width_per_level, vec![2, 1]);
        assert_eq!(st.peak_live, 3);
    }
}
