//! The circuit builder: wires as exact linear expressions over fresh
//! values, with their quadratic weights and value ranges, and the checks a
//! circuit must pass before it exists.

use rustc_hash::FxHashMap as HashMap;

use super::guard::Guards;
use super::meter;
use super::range::{gcd, Range};
use super::table::Points;
use super::{next_circuit_id, Bootstrap, Circuit, CircuitId, FreshId, LinearExpr};
use crate::crypto::lut::Lut;
use crate::crypto::params::Margin;
use crate::crypto::params::ParameterSet;
use crate::error::BuildError;

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

/// What a bootstrap costs in memory beyond the bytes of its own fields:
/// the allocations behind them (their headers, vectors' spare capacity)
/// and the builder's maps, which find it again, its table and its facts.
/// Measured: a rebuild stopped after 16 897 bootstraps raised the peak
/// resident memory by 29 MiB, 1.8 KiB each, where their fields hold 410
/// bytes.
const BOOTSTRAP_OVERHEAD: usize = 1400;

/// The bytes a wire of `expr` holds, for the [`meter`].
fn wire_bytes(expr: &LinearExpr) -> u64 {
    (std::mem::size_of::<WireData>() + std::mem::size_of_val(&expr.terms[..])) as u64
}

/// Refuses `lo, lo + step, ..., hi` unless it is a non-empty progression.
fn progression(
    lo: i64,
    hi: i64,
    step: i64,
    node: impl FnOnce() -> String,
) -> Result<(), BuildError> {
    if hi < lo || step < 1 || (hi - lo) % step != 0 {
        return Err(BuildError::EmptyRange {
            node: node(),
            lo,
            hi,
        });
    }
    Ok(())
}

/// Builds a [`Circuit`], checking noise, ranges and wire ownership as it goes.
pub struct CircuitBuilder {
    params: &'static ParameterSet,
    circuit: Circuit,
    wires: Vec<WireData>,
    fresh_range: Vec<Range>,
    /// Decoded tables: the points a bootstrap reads -> (slot table, margin level).
    decoded: HashMap<Points, (usize, Option<Margin>)>,
    table_index: HashMap<Vec<u64>, usize>,
    /// Bootstraps made: (selector, table, offsets) -> first output. A
    /// bootstrap is deterministic, so the same selector through the same
    /// table gives the same ciphertext: made once, and its noise counted
    /// as one value (two copies summed weigh 4, not 2).
    made: HashMap<(LinearExpr, usize, Vec<u64>), FreshId>,
    guards: Guards,
    /// Results a family derived, by kind and operand expressions, for a
    /// later operation to reuse ([`CircuitBuilder::remember`]).
    facts: HashMap<(&'static str, Vec<LinearExpr>), Wire>,
    threads: usize,
}

/// The first of `residues` some table of `luts` does not list.
fn first_uncovered(residues: &[u64], luts: &[&Lut]) -> Option<u64> {
    residues
        .iter()
        .copied()
        .find(|&x| luts.iter().any(|l| !l.covers(x as i64)))
}

impl CircuitBuilder {
    /// An empty circuit on `params`.
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
                output_margins: Vec::new(),
                depth: Vec::new(),
            },
            wires: Vec::new(),
            fresh_range: Vec::new(),
            decoded: HashMap::default(),
            table_index: HashMap::default(),
            made: HashMap::default(),
            guards: Guards::default(),
            facts: HashMap::default(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    /// The thread count algorithms plan for (shallow circuits with more
    /// bootstraps pay off only with many threads); defaults to this
    /// machine's cores.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Plans for `threads` threads (at least one).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The parameter set it builds for.
    pub fn params(&self) -> &'static ParameterSet {
        self.params
    }

    fn modulus(&self) -> i64 {
        self.params.message_modulus() as i64
    }

    /// The range of `expr` from the ranges of the fresh values it reads
    /// (exact about repeated values: `x - x` is 0).
    fn fresh_based_range(&self, expr: &LinearExpr) -> Range {
        let m = self.modulus();
        let mut lo = expr.constant as i64;
        let mut hi = lo;
        let mut full = false;
        // Step of the value (gcd of |w| * step) and of its residues.
        let (mut step, mut class) = (0u64, m as u64);
        let mut base = expr.constant as i64;
        for &(f, w) in &expr.terms {
            let r = self.fresh_range[f as usize];
            let (a, b) = (r.lo.saturating_mul(w), r.hi.saturating_mul(w));
            lo = lo.saturating_add(a.min(b));
            hi = hi.saturating_add(a.max(b));
            full |= lo.abs() > 1 << 50 || hi.abs() > 1 << 50;
            match w.unsigned_abs().checked_mul(r.step as u64) {
                Some(t) if t < 1 << 50 => step = gcd(step, t),
                _ => full = true,
            }
            let wm = w.rem_euclid(m);
            class = gcd(class, (wm as u64 * r.step as u64) % m as u64);
            base = (base + wm * r.lo.rem_euclid(m)).rem_euclid(m);
        }
        let range = if full {
            let class = class.max(1) as i64;
            let lo = base.rem_euclid(class);
            Range::with_step(lo, lo + m - class, class)
        } else {
            Range::with_step(lo, hi, step.max(1) as i64)
        };
        range.canonical(m)
    }

    /// The range of `sum_j c_j w_j + constant` from the wires' own ranges
    /// (which carry [`CircuitBuilder::assume_range`] facts), or `None` on
    /// overflow.
    fn wire_based_range(&self, terms: &[(Wire, i64)], constant: i64) -> Option<Range> {
        let m = self.modulus();
        let (mut lo, mut hi) = (
            constant.rem_euclid(m) as i128,
            constant.rem_euclid(m) as i128,
        );
        let mut step = 0u64;
        for &(w, c) in terms {
            let r = self.data(w, "range").ok()?.range;
            let (a, b) = (r.lo as i128 * c as i128, r.hi as i128 * c as i128);
            lo += a.min(b);
            hi += a.max(b);
            step = gcd(step, c.unsigned_abs().checked_mul(r.step as u64)?);
        }
        if lo.abs() > 1 << 50 || hi.abs() > 1 << 50 || step >= 1 << 50 {
            return None;
        }
        Some(Range::with_step(lo as i64, hi as i64, step.max(1) as i64).canonical(m))
    }

    fn push_with_range(&mut self, expr: LinearExpr, range: Range) -> Wire {
        let range = range.canonical(self.modulus());
        self.wires.push(WireData { expr, range });
        Wire {
            circuit: self.circuit.id,
            index: (self.wires.len() - 1) as u32,
        }
    }

    /// `what` names the wire in an error; formatted only then (the hot
    /// path passes `format_args!`).
    fn data(&self, w: Wire, what: impl std::fmt::Display) -> Result<&WireData, BuildError> {
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
        self.input_with_step(lo, hi, 1)
    }

    /// A new encrypted input taking the values `lo, lo + step, ..., hi`
    /// (e.g. a bit stored as 0 or 2: spread values decode with a wider
    /// noise margin).
    pub fn input_with_step(&mut self, lo: i64, hi: i64, step: i64) -> Result<Wire, BuildError> {
        let index = self.circuit.inputs.len();
        progression(lo, hi, step, || format!("input {index} (step {step})"))?;
        let range = Range::with_step(lo, hi, step).canonical(self.modulus());
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
        self.constant_residue(v as u64)
    }

    /// The expression `sum_j coef_j * wire_j + constant`, terms merged.
    fn expr_of(&self, terms: &[(Wire, i64)], constant: i64) -> Result<LinearExpr, BuildError> {
        let m = self.modulus();
        let mut acc: Vec<(FreshId, i64)> = Vec::new();
        let mut c = constant.rem_euclid(m);
        for (j, &(w, coef)) in terms.iter().enumerate() {
            let d = self.data(w, format_args!("linear term {j}"))?;
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
    /// The range is the intersection of two sound ones: from the fresh
    /// values (exact about repeated values) and from the terms' own ranges
    /// (which keep what [`CircuitBuilder::assume_range`] established).
    pub fn linear(&mut self, terms: &[(Wire, i64)], constant: i64) -> Result<Wire, BuildError> {
        let expr = self.expr_of(terms, constant)?;
        meter::spend(0, wire_bytes(&expr))?;
        let m = self.params.message_modulus();
        let mut range = self.fresh_based_range(&expr);
        if let Some(r) = self.wire_based_range(terms, constant) {
            range = range.intersect(&r, m);
        }
        Ok(self.push_with_range(expr, range))
    }

    /// The quadratic weight `sum_j coef_j * wire_j` would have, without
    /// making the wire: wires that share fresh values add their weights
    /// before squaring (`x + x` weighs 4, not 2).
    pub fn weight_of(&self, terms: &[(Wire, i64)]) -> Result<u64, BuildError> {
        Ok(self.expr_of(terms, 0)?.quadratic_weight())
    }

    /// The largest quadratic weight a bootstrap input may have when its
    /// selector is dense (values one unit apart).
    pub fn budget(&self) -> u64 {
        self.params.budgets.half
    }

    /// `a + b` (linear: no bootstrap).
    pub fn add(&mut self, a: Wire, b: Wire) -> Result<Wire, BuildError> {
        self.linear(&[(a, 1), (b, 1)], 0)
    }

    /// `a - b` (linear).
    pub fn sub(&mut self, a: Wire, b: Wire) -> Result<Wire, BuildError> {
        self.linear(&[(a, 1), (b, -1)], 0)
    }

    /// `-a` (linear).
    pub fn neg(&mut self, a: Wire) -> Result<Wire, BuildError> {
        self.linear(&[(a, -1)], 0)
    }

    /// Multiplication by a small clear integer (the noise grows by `c^2`).
    pub fn mul_const(&mut self, a: Wire, c: i64) -> Result<Wire, BuildError> {
        self.linear(&[(a, c)], 0)
    }

    /// `a + c` for a clear `c` (linear).
    pub fn add_const(&mut self, a: Wire, c: i64) -> Result<Wire, BuildError> {
        self.linear(&[(a, 1)], c)
    }

    /// Narrows a wire's range to `lo, lo + step, ..., hi`, for invariants
    /// interval arithmetic cannot see (e.g. a sum of two gate outputs of
    /// which at most one is set). Trusted by the builder; the clear backend
    /// reports any bootstrap whose selector leaves its proven range.
    pub fn assume_range(
        &mut self,
        a: Wire,
        lo: i64,
        hi: i64,
        step: i64,
    ) -> Result<Wire, BuildError> {
        let d = self.data(a, "assume_range")?;
        let expr = d.expr.clone();
        progression(lo, hi, step, || format!("assume_range (step {step})"))?;
        // A clear constant keeps its exact range: folding reads it.
        if expr.terms.is_empty() {
            return Ok(a);
        }
        Ok(self.push_with_range(expr, Range::with_step(lo, hi, step)))
    }

    /// Notes that bit `bit` is set only when the bits `word` hold `value`
    /// (least significant first): an equality with a clear value. See
    /// [`super::guard`].
    pub fn guard_equal(
        &mut self,
        bit: Wire,
        word: &[Wire],
        value: Vec<bool>,
    ) -> Result<(), BuildError> {
        let key = self.data(bit, "guard")?.expr.clone();
        let word = self.exprs(word, "guarded word")?;
        self.guards.equal(&key, word, value);
        Ok(())
    }

    /// Notes that bit `bit` is set only when every bit of `ands` is (an AND
    /// of them).
    pub fn guard_and(&mut self, bit: Wire, ands: &[Wire]) -> Result<(), BuildError> {
        let key = self.data(bit, "guard")?.expr.clone();
        let ands = self.exprs(ands, "guard")?;
        self.guards.and(&key, &ands.iter().collect::<Vec<_>>());
        Ok(())
    }

    /// Notes that bit `bit` is set only when `x` or `y` is (an OR or XOR).
    pub fn guard_or(&mut self, bit: Wire, x: Wire, y: Wire) -> Result<(), BuildError> {
        let key = self.data(bit, "guard")?.expr.clone();
        let (x, y) = (
            self.data(x, "guard")?.expr.clone(),
            self.data(y, "guard")?.expr.clone(),
        );
        self.guards.or(&key, &x, &y);
        Ok(())
    }

    /// Notes that `value` is what a family computes as `kind` of `operands`
    /// (e.g. a multiplexer of three bits), so that a later operation can
    /// derive its own result from it ([`CircuitBuilder::recall`]). Keyed by
    /// the operands' expressions: wires of equal value match.
    pub fn remember(
        &mut self,
        kind: &'static str,
        operands: &[Wire],
        value: Wire,
    ) -> Result<(), BuildError> {
        self.data(value, "remember")?;
        let key = self.exprs(operands, "remember")?;
        self.facts.insert((kind, key), value);
        Ok(())
    }

    /// What [`CircuitBuilder::remember`] noted as `kind` of `operands`.
    pub fn recall(
        &self,
        kind: &'static str,
        operands: &[Wire],
    ) -> Result<Option<Wire>, BuildError> {
        let key = self.exprs(operands, "recall")?;
        Ok(self.facts.get(&(kind, key)).copied())
    }

    /// The expressions of `wires` (`what` names them in an error).
    fn exprs(&self, wires: &[Wire], what: &str) -> Result<Vec<LinearExpr>, BuildError> {
        wires
            .iter()
            .map(|&w| Ok(self.data(w, what)?.expr.clone()))
            .collect()
    }

    /// Whether bits `x` and `y` are never both set, by their guards.
    pub fn exclusive(&self, x: Wire, y: Wire) -> Result<bool, BuildError> {
        let (x, y) = (&self.data(x, "guard")?.expr, &self.data(y, "guard")?.expr);
        Ok(self.guards.exclusive(x, y))
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

    /// `Some(k)` when `a` holds `sign * b + k` (mod `2^pi`) for every
    /// value of the fresh values both read (their expressions differ by a
    /// constant after `b`'s is multiplied by `sign`, which is 1 or -1):
    /// lets gates see that one input is another, or its complement.
    pub fn offset_from(&self, a: Wire, b: Wire, sign: i64) -> Result<Option<i64>, BuildError> {
        let (ea, eb) = (
            &self.data(a, "offset_from")?.expr,
            &self.data(b, "offset_from")?.expr,
        );
        let same = ea.terms.len() == eb.terms.len()
            && ea
                .terms
                .iter()
                .zip(&eb.terms)
                .all(|(&(fa, wa), &(fb, wb))| fa == fb && Some(wa) == wb.checked_mul(sign));
        let m = self.modulus();
        Ok(same.then(|| (ea.constant as i64 - sign * eb.constant as i64).rem_euclid(m)))
    }

    /// The quadratic weight of a wire.
    pub fn quadratic_weight(&self, a: Wire) -> Result<u64, BuildError> {
        Ok(self.data(a, "quadratic_weight")?.expr.quadratic_weight())
    }

    fn check_budget(&self, expr: &LinearExpr, node: String, budget: u64) -> Result<(), BuildError> {
        let weight = expr.quadratic_weight();
        if weight > budget {
            return Err(BuildError::OverBudget {
                node,
                weight,
                budget,
                params: self.params.id,
            });
        }
        Ok(())
    }

    /// A residue of `a`'s tracked range that one of `luts` does not list:
    /// where [`CircuitBuilder::bootstrap_many`] would refuse `a` with
    /// [`BuildError::SelectorNotCovered`]. Callers with a cheaper circuit
    /// in mind ask first and take another where it is `Some`.
    pub fn uncovered(&self, a: Wire, luts: &[&Lut]) -> Result<Option<u64>, BuildError> {
        let m = self.params.message_modulus();
        let range = self.data(a, "selector")?.range;
        Ok(first_uncovered(&range.residues(m), luts))
    }

    /// One bootstrap evaluating `lut` on `a`.
    pub fn bootstrap(&mut self, a: Wire, lut: &Lut) -> Result<Wire, BuildError> {
        Ok(self.bootstrap_many(a, &[lut])?[0])
    }

    /// Like [`CircuitBuilder::bootstrap`], always a new bootstrap (never
    /// one made before on the same selector and table): the copies
    /// [`super::Selectors`] makes of a wire whose copies a selector sums.
    ///
    /// The builder counts such copies as independent values. A backend
    /// computes them from the same ciphertext with the same key, so they
    /// are the same ciphertext and their noise adds coherently (`7 x + 8 x'`
    /// weighs 225 as `15 x` does, not 113): an open issue, see
    /// `ARCHITECTURE.md`.
    pub fn bootstrap_copy(&mut self, a: Wire, lut: &Lut) -> Result<Wire, BuildError> {
        Ok(self.bootstrap_with(a, &[lut], false)?[0])
    }

    /// One blind rotation evaluating several tables on `a` (many-LUT): table
    /// `j` is read at the selector plus `j * span`: the number of values
    /// times the step where that fits; else 1 (interleaved) when the step is
    /// at least the number of tables; else the length of the selector's arc.
    /// All reads must fit in `2^(pi-1)` consecutive positions, except
    /// interleaved ones whose reads past them meet the negacyclic images of
    /// the first ones with the values the tables give there. The noise
    /// budget that applies depends on how far apart the selector's values
    /// with different outputs are (see [`super::table`]).
    pub fn bootstrap_many(&mut self, a: Wire, luts: &[&Lut]) -> Result<Vec<Wire>, BuildError> {
        self.bootstrap_with(a, luts, true)
    }

    /// [`CircuitBuilder::bootstrap_many`]; `reuse`: return the outputs of
    /// the same bootstrap made before, if any.
    fn bootstrap_with(
        &mut self,
        a: Wire,
        luts: &[&Lut],
        reuse: bool,
    ) -> Result<Vec<Wire>, BuildError> {
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
        let residues = d.range.residues(m);
        if let Some(x) = first_uncovered(&residues, luts) {
            return Err(BuildError::SelectorNotCovered {
                node,
                value: x,
                lo: d.range.lo,
                hi: d.range.hi,
                pi,
            });
        }
        // Outputs that do not depend on the selector are constants.
        let outs: Vec<Vec<u64>> = luts
            .iter()
            .map(|lut| residues.iter().map(|&x| lut.eval(x as i64)).collect())
            .collect();
        let constant = |o: &Vec<u64>| o.iter().all(|&v| v == o[0]);
        if d.expr.terms.is_empty() || outs.iter().all(constant) {
            return Ok(outs.iter().map(|o| self.constant_residue(o[0])).collect());
        }
        // Some are: only the others are read from the rotation (a carry
        // that the selector's range rules out costs nothing).
        if outs.iter().any(constant) {
            let varying: Vec<&Lut> = luts
                .iter()
                .zip(&outs)
                .filter(|(_, o)| !constant(o))
                .map(|(&lut, _)| lut)
                .collect();
            let mut read = self.bootstrap_with(a, &varying, reuse)?.into_iter();
            return Ok(outs
                .iter()
                .map(|o| {
                    if constant(o) {
                        self.constant_residue(o[0])
                    } else {
                        read.next().expect("one output per varying table")
                    }
                })
                .collect());
        }
        // Table j reads at selector + j * span: a span that is a multiple of
        // the step keeps every read on the selector's spacing (and margin);
        // the arc's length is the tightest packing.
        let spaced = d.range.count(m) * d.range.step as u64;
        let arc = (d.range.hi - d.range.lo) as u64;
        let n = luts.len() as u64;
        let packed = match n {
            1 => 0,
            n if n * spaced <= m / 2 => spaced,
            // Interleaved: a selector on every `step`-th value leaves room
            // between its values for up to `step` tables, one unit apart.
            n if d.range.step as u64 >= n && arc + n <= m / 2 => 1,
            _ => arc + 1,
        };
        let layout = |span: u64| -> Option<Points> {
            let mut points = Points::new(m);
            for (j, o) in outs.iter().enumerate() {
                for (&x, &v) in residues.iter().zip(o) {
                    if !points.insert(x + j as u64 * span, v) {
                        return None;
                    }
                }
            }
            Some(points)
        };
        // Interleaved reads may also run past half the ring, onto the
        // negacyclic images of the first reads, where those images agree
        // with the tables (two bits' gates on one selector, see
        // `bits::bitwise`): the points decide.
        let first = (n * packed <= m / 2).then(|| layout(packed)).flatten();
        let (span, points) = match first {
            Some(points) => (packed, points),
            None => match (n > 1 && d.range.step as u64 >= n)
                .then(|| layout(1))
                .flatten()
            {
                Some(points) => (1, points),
                None => {
                    return Err(BuildError::ManyLutTooWide {
                        node,
                        luts: luts.len(),
                        width: packed,
                        needed: n * packed,
                        available: m / 2,
                    })
                }
            },
        };
        let tables = self.circuit.tables.len();
        let (table_id, margin) = self.decode(points);
        let table_bytes: usize = self.circuit.tables[tables..]
            .iter()
            .map(|t| 2 * std::mem::size_of_val(&t[..]))
            .sum();
        let offsets: Vec<u64> = (0..luts.len() as u64).map(|j| j * span).collect();
        let ranges: Vec<Range> = outs.iter().map(|o| Range::covering(o, m)).collect();
        let key = (d.expr, table_id, offsets);
        if let Some(&first) = self.made.get(&key).filter(|_| reuse) {
            let same = (0..ranges.len()).all(|j| self.fresh_range[first as usize + j] == ranges[j]);
            if same {
                return Ok(self.outputs_of(first, &ranges));
            }
        }
        let (expr, _, offsets) = key;
        let budget = self.params.budgets.at(margin.unwrap_or(Margin::Two));
        self.check_budget(&expr, node, budget)?;
        // The bootstrap, its entry among those made, and its outputs' wires.
        let bytes = BOOTSTRAP_OVERHEAD
            + std::mem::size_of::<Bootstrap>()
            + 2 * (std::mem::size_of_val(&expr.terms[..]) + std::mem::size_of_val(&offsets[..]))
            + ranges.len() * (std::mem::size_of::<WireData>() + 16)
            + table_bytes;
        meter::spend(1, bytes as u64)?;
        let depth = 1 + expr
            .terms
            .iter()
            .map(|&(f, _)| self.circuit.depth[f as usize])
            .max()
            .unwrap_or(0);
        let first_output = self.fresh_range.len() as FreshId;
        for &range in &ranges {
            self.fresh(range, depth);
        }
        self.made
            .insert((expr.clone(), table_id, offsets.clone()), first_output);
        self.circuit.bootstraps.push(Bootstrap {
            input: expr,
            selector: d.range,
            table: table_id,
            offsets,
            first_output,
        });
        Ok(self.outputs_of(first_output, &ranges))
    }

    /// Wires for the outputs `first..` of a bootstrap, with their ranges.
    fn outputs_of(&mut self, first: FreshId, ranges: &[Range]) -> Vec<Wire> {
        ranges
            .iter()
            .enumerate()
            .map(|(j, &range)| {
                let expr = LinearExpr {
                    terms: vec![(first + j as FreshId, 1)],
                    constant: 0,
                };
                self.push_with_range(expr, range)
            })
            .collect()
    }

    /// The slot table and margin of `points`, each table stored once.
    fn decode(&mut self, points: Points) -> (usize, Option<Margin>) {
        if let Some(&hit) = self.decoded.get(&points) {
            return hit;
        }
        let slots = points.slots();
        let margin = points.margin();
        let id = match self.table_index.get(&slots) {
            Some(&t) => t,
            None => {
                self.circuit.tables.push(slots.clone());
                self.table_index
                    .insert(slots, self.circuit.tables.len() - 1);
                self.circuit.tables.len() - 1
            }
        };
        self.decoded.insert(points, (id, margin));
        (id, margin)
    }

    /// A constant wire holding residue `v`.
    fn constant_residue(&mut self, v: u64) -> Wire {
        self.push_with_range(
            LinearExpr {
                terms: Vec::new(),
                constant: v,
            },
            Range::point(v as i64),
        )
    }

    /// Marks `a` as an output; returns its output index. Its weight is
    /// checked against the decryption budget for its value spacing: an
    /// output whose values are `2^k` apart is decoded to the nearest of
    /// them (e.g. a bit stored as 0 or 2).
    pub fn output(&mut self, a: Wire) -> Result<usize, BuildError> {
        let node = format!("output {}", self.circuit.outputs.len());
        let r = self.data(a, &node)?.range;
        let margin = if r.count(self.params.message_modulus()) > 1 {
            Margin::within(1 << r.step.trailing_zeros().min(2))
        } else {
            Margin::Half
        };
        self.output_decoded(a, margin)
    }

    /// Marks `a` as an output that the client decodes to the nearest
    /// multiple of `margin.spacing()` units (plus its offset), e.g.
    /// [`Margin::One`] for bits read with [`crate::ClientKey::decrypt_bit`].
    /// Its values must all lie on that lattice.
    pub fn output_decoded(&mut self, a: Wire, margin: Margin) -> Result<usize, BuildError> {
        let node = format!("output {}", self.circuit.outputs.len());
        let d = self.data(a, &node)?;
        let (expr, r) = (d.expr.clone(), d.range);
        let m = self.params.message_modulus();
        let residues = r.residues(m);
        let spacing = margin.spacing();
        if residues
            .iter()
            .any(|&x| !(x + m - residues[0]).is_multiple_of(spacing))
        {
            return Err(BuildError::SelectorNotCovered {
                node: format!("{node} (decoded {spacing} units apart)"),
                value: residues[0],
                lo: r.lo,
                hi: r.hi,
                pi: self.params.pi,
            });
        }
        self.check_budget(&expr, node, self.params.output_budgets.at(margin))?;
        self.circuit.outputs.push(expr);
        self.circuit.output_margins.push(margin);
        Ok(self.circuit.outputs.len() - 1)
    }

    /// Bootstraps built so far.
    pub fn bootstrap_count(&self) -> usize {
        self.circuit.bootstraps.len()
    }

    /// The depth of `a`: that of the deepest bootstrap it reads (0 for
    /// inputs and constants).
    pub fn depth_of(&self, a: Wire) -> Result<u32, BuildError> {
        let d = self.data(a, "depth_of")?;
        Ok(d.expr
            .terms
            .iter()
            .map(|&(f, _)| self.circuit.depth[f as usize])
            .max()
            .unwrap_or(0))
    }

    /// A wire of this builder standing in for `w` of `other`: the same
    /// linear expression and range over fresh inputs that stand in for
    /// `other`'s fresh values (same ranges, same depths; `fresh` maps
    /// them, so wires sharing a value share its stand-in). For trying an
    /// algorithm on a scratch builder (its bootstraps and depth), as the
    /// program layer does before it fuses a sum.
    #[doc(hidden)]
    pub fn stand_in(
        &mut self,
        other: &CircuitBuilder,
        w: Wire,
        fresh: &mut std::collections::HashMap<FreshId, FreshId>,
    ) -> Result<Wire, BuildError> {
        let d = other.data(w, "stand_in")?;
        let mut terms = Vec::with_capacity(d.expr.terms.len());
        for &(f, x) in &d.expr.terms {
            let g = match fresh.get(&f) {
                Some(&g) => g,
                None => {
                    let range = other.fresh_range[f as usize];
                    let g = self.fresh(range, other.circuit.depth[f as usize]);
                    self.circuit.inputs.push((g, range));
                    fresh.insert(f, g);
                    g
                }
            };
            terms.push((g, x));
        }
        terms.sort_unstable_by_key(|&(g, _)| g);
        let expr = LinearExpr {
            terms,
            constant: d.expr.constant,
        };
        Ok(self.push_with_range(expr, d.range))
    }

    /// The finished circuit (every bootstrap made, read or not:
    /// [`Circuit::prune`] drops the unread ones).
    pub fn build(self) -> Circuit {
        self.circuit
    }
}
