//! Sums fused across a whole program: users write `a + b + c + ...`,
//! `acc + x * y` in a loop or `x * 3 - y`, and the program, when built,
//! finds each such expression of words and builds it as one
//! [`WordOp::FusedSum`] (one carry-save compression and one final adder,
//! [`crate::bits::dot`]) where that is cheaper than the operations one by
//! one.
//!
//! A *root* is an addition, subtraction, negation, product or fused sum
//! of words. Its *form* is `sum x_i y_i + sum k_j z_j + c` modulo
//! `2^width`, found by expanding every operand that only this expression
//! reads (used once, not an output) and that is itself linear in its own
//! operands: sums, differences, negations, products by a clear word,
//! fused sums, and (with coefficient 1) products of two encrypted words.
//! A value read several times is expanded too when every op that reads it
//! is expanded into the same root and it is linear without encrypted
//! products: a chain such as Fibonacci's `f = f1 + f2`, whose values feed
//! two later sums each, is one linear form of the inputs with clear
//! coefficients, its copies adding their coefficients.
//! Clear words go into the constant. Every rewrite is exact: wrapping
//! arithmetic is arithmetic modulo `2^width`, signed or not.
//!
//! Whether to fuse is measured, not guessed: the fused sum is built on a
//! scratch builder whose inputs stand in for the form's operands (same
//! ranges, same depths, constants kept), and its bootstraps and depth are
//! compared with those the operations it replaces built, as
//! `#PBS / threads + depth` for the threads the root was planned for. Two
//! candidates are tried: products of encrypted words inside the
//! compression, or left to the product's own algorithm (often cheaper for
//! one product). When some root is fused, the program is built again from
//! its ops with those roots replaced and the expanded operations skipped;
//! the ops it keeps, and writes to a file, are the user's, so a file
//! rebuilds to the same circuit.

use std::collections::{BTreeMap, HashMap};

use num_bigint::BigInt;
use num_traits::{One, Zero};

use super::operand::{Val, ValueId};
use super::ops::{Op, WordOp};
use super::program::State;
use super::word_op::WordArith;
use crate::bits::Bits;
use crate::circuit::CircuitBuilder;

/// Expanding stops after this many terms in all (a program of chains that
/// never pay to fuse would otherwise expand each again from every root).
const MAX_EXPANDED: usize = 1 << 20;

/// `sum products + sum k z + bias` of one root.
struct Form {
    bits: usize,
    signed: bool,
    products: Vec<(ValueId, ValueId)>,
    scaled: Vec<(ValueId, BigInt)>,
    bias: BigInt,
    /// The ops the form replaces besides its root.
    absorbed: Vec<usize>,
}

impl Form {
    fn op(&self) -> WordOp {
        WordOp::FusedSum(
            self.bits,
            self.signed,
            self.products.clone(),
            self.scaled.clone(),
            self.bias.clone(),
        )
    }
}

/// What a whole program's ops look like to the pass.
struct View<'a> {
    st: &'a State,
    /// Reads of each value by later ops, plus one if it is an output.
    uses: Vec<u32>,
    /// The ops reading each value (once per read).
    readers: Vec<Vec<usize>>,
    /// Whether each value is an output.
    output: Vec<bool>,
    /// The first value each op makes (`usize::MAX`: none).
    first_value: Vec<usize>,
}

impl View<'_> {
    fn word_op(&self, v: ValueId) -> Option<&WordOp> {
        match &self.st.ops[self.st.made_by[v.0 as usize]] {
            Op::Word(w) => Some(w),
            _ => None,
        }
    }

    /// The clear value of `v` when a `Const` op made it.
    fn constant(&self, v: ValueId) -> Option<&BigInt> {
        match self.word_op(v)? {
            WordOp::Const(_, _, value) => Some(value),
            _ => None,
        }
    }

    /// The shape of word `v`.
    fn word_shape(&self, v: ValueId) -> Option<(usize, bool)> {
        match self.st.values[v.0 as usize] {
            Val::Word(ref b, s) => Some((b.len(), s)),
            Val::Int(_) => None,
        }
    }

    /// Whether op `i` can be expanded with coefficient `c` (`products`:
    /// whether products of encrypted words may join the form).
    fn expandable(&self, i: usize, c: &BigInt, products: bool) -> bool {
        let Op::Word(w) = &self.st.ops[i] else {
            return false;
        };
        match w {
            WordOp::Arith(WordArith::Add | WordArith::Sub, ..) | WordOp::Neg(_) => true,
            WordOp::Arith(WordArith::Mul, x, y) => {
                self.constant(*x).is_some()
                    || self.constant(*y).is_some()
                    || (products && c.is_one())
            }
            WordOp::FusedSum(_, _, p, ..) => p.is_empty() || (products && c.is_one()),
            _ => false,
        }
    }

    /// Whether op `i` is a sum, difference, negation, product or fused sum
    /// of words (what a polynomial expands).
    fn linear_or_product(&self, i: usize) -> bool {
        self.expandable(i, &BigInt::one(), true)
    }

    /// Whether op `i` is linear in its operands with clear coefficients
    /// (no product of encrypted words).
    fn linear(&self, i: usize) -> bool {
        self.expandable(i, &BigInt::from(2), false)
    }

    /// The linear ops below root `i` whose values are read several times,
    /// all by ops expanded into `i` (`skipped`: ops another root took): the
    /// largest such set reachable from `i` through linear ops.
    fn shared_region(&self, i: usize, skipped: &[bool]) -> Vec<bool> {
        let n = self.st.ops.len();
        let mut inside = vec![false; n];
        let candidate = |j: usize| {
            let v = self.first_value[j];
            j < i && !skipped[j] && v != usize::MAX && !self.output[v] && self.linear(j)
        };
        // Reachable from `i` through ops that `allowed` admits.
        let reach = |allowed: &dyn Fn(usize) -> bool| -> Vec<usize> {
            let mut seen = vec![false; n];
            let (mut stack, mut list) = (vec![i], Vec::new());
            while let Some(j) = stack.pop() {
                for v in self.st.ops[j].operands() {
                    let k = self.st.made_by[v.0 as usize];
                    if !seen[k] && allowed(k) {
                        seen[k] = true;
                        list.push(k);
                        stack.push(k);
                    }
                }
            }
            list
        };
        let mut list = reach(&candidate);
        list.iter().for_each(|&j| inside[j] = true);
        loop {
            // Only ops all of whose readers are inside or the root.
            let mut changed = true;
            while changed {
                changed = false;
                for &j in &list {
                    let v = self.first_value[j];
                    if inside[j] && self.readers[v].iter().any(|&r| r != i && !inside[r]) {
                        inside[j] = false;
                        changed = true;
                    }
                }
            }
            let kept = reach(&|k| inside[k]);
            if kept.len() == list.iter().filter(|&&j| inside[j]).count() {
                return inside;
            }
            inside.iter_mut().for_each(|x| *x = false);
            kept.iter().for_each(|&j| inside[j] = true);
            list = kept;
        }
    }

    /// The form of root op `i` (which makes word `root`), or `None` when
    /// it absorbs nothing. `budget` counts the terms expanded so far;
    /// `shared`: [`View::shared_region`].
    fn form(
        &self,
        i: usize,
        root: ValueId,
        products: bool,
        shared: &[bool],
        budget: &mut usize,
    ) -> Option<Form> {
        let (bits, signed) = self.word_shape(root)?;
        if !self.expandable(i, &BigInt::one(), products) {
            return None;
        }
        let modulus = BigInt::one() << bits;
        let half = BigInt::one() << bits.saturating_sub(1);
        // The representative of `k` modulo 2^bits in (-2^(bits-1), 2^(bits-1)].
        let reduce = |k: BigInt| {
            let r = ((k % &modulus) + &modulus) % &modulus;
            if r > half {
                r - &modulus
            } else {
                r
            }
        };
        let mut form = Form {
            bits,
            signed,
            products: Vec::new(),
            scaled: Vec::new(),
            bias: BigInt::zero(),
            absorbed: Vec::new(),
        };
        let mut scaled: BTreeMap<ValueId, BigInt> = BTreeMap::new();
        // Pending coefficients by op, the latest first: an op read several
        // times is expanded once all its readers have given theirs.
        let mut ops: BTreeMap<usize, BigInt> = BTreeMap::from([(i, BigInt::one())]);
        while let Some((j, c)) = ops.pop_last() {
            if j != i {
                form.absorbed.push(j);
            }
            let Op::Word(w) = &self.st.ops[j] else {
                return None;
            };
            let mut terms: Vec<(ValueId, BigInt)> = Vec::new();
            match w {
                WordOp::Arith(WordArith::Add, x, y) => {
                    terms.extend([(*x, c.clone()), (*y, c)]);
                }
                WordOp::Arith(WordArith::Sub, x, y) => {
                    terms.extend([(*x, c.clone()), (*y, -c)]);
                }
                WordOp::Neg(x) => terms.push((*x, -c)),
                WordOp::Arith(WordArith::Mul, x, y) => match (self.constant(*x), self.constant(*y))
                {
                    (_, Some(k)) => terms.push((*x, c * k)),
                    (Some(k), None) => terms.push((*y, c * k)),
                    (None, None) => form.products.push((*x, *y)),
                },
                WordOp::FusedSum(_, _, p, s, bias) => {
                    form.products.extend(p.iter().copied());
                    terms.extend(s.iter().map(|(z, k)| (*z, &c * k)));
                    form.bias += &c * bias;
                }
                _ => return None,
            }
            for (v, k) in terms {
                *budget = budget.checked_sub(1)?;
                let k = reduce(k);
                if k.is_zero() {
                    continue;
                }
                if let Some(value) = self.constant(v) {
                    form.bias += k * value;
                    continue;
                }
                let j = self.st.made_by[v.0 as usize];
                if shared[j] {
                    *ops.entry(j).or_default() += k;
                } else if self.uses[v.0 as usize] == 1 && self.expandable(j, &k, products) {
                    ops.insert(j, k);
                } else {
                    *scaled.entry(v).or_default() += k;
                }
            }
        }
        if form.absorbed.is_empty() {
            return None;
        }
        form.bias = reduce(std::mem::take(&mut form.bias));
        form.scaled = scaled
            .into_iter()
            .map(|(v, k)| (v, reduce(k)))
            .filter(|(_, k)| !k.is_zero())
            .collect();
        Some(form)
    }

    /// Root op `i` (making word `root`) as a polynomial in one word `x`
    /// with clear coefficients: the ops it absorbs (sums, differences,
    /// negations, products and fused sums whose values only this
    /// expression reads) and the [`WordOp::Polynomial`] replacing it, or
    /// `None` where the expression reads two words, is of degree under 2
    /// or over [`MAX_DEGREE`], or holds no product of encrypted words.
    fn polynomial(&self, i: usize, root: ValueId) -> Option<(Vec<usize>, WordOp)> {
        let shape = self.word_shape(root)?;
        let modulus = BigInt::one() << shape.0;
        let mut walk = PolyWalk {
            view: self,
            shape,
            modulus: &modulus,
            x: None,
            absorbed: Vec::new(),
            products: 0,
            steps: MAX_POLY_OPS,
        };
        let c = walk.op(i)?;
        let (x, absorbed, products) = (walk.x?, walk.absorbed, walk.products);
        let degree = c.iter().rposition(|k| !k.is_zero())?;
        if degree < 2 || products == 0 {
            return None;
        }
        let op = WordOp::Polynomial(shape.0, shape.1, x, c[..=degree].to_vec());
        Some((absorbed, op))
    }

    /// The bootstraps and depth of `form` built on a scratch builder
    /// planned for `threads`, or `None` where it cannot be built.
    fn fused_cost(&self, op: WordOp, threads: usize) -> Option<(usize, u32)> {
        let b = &self.st.builder;
        let mut scratch = CircuitBuilder::new(b.params());
        scratch.set_threads(threads);
        let op = Op::Word(op);
        let mut stand_ins: BTreeMap<ValueId, Val> = BTreeMap::new();
        let mut fresh = HashMap::new();
        for v in op.operands() {
            if stand_ins.contains_key(&v) {
                continue;
            }
            let Val::Word(bits, signed) = &self.st.values[v.0 as usize] else {
                return None;
            };
            let wires = bits
                .wires()
                .iter()
                .map(|&w| scratch.stand_in(b, w, &mut fresh))
                .collect::<Result<Vec<_>, _>>()
                .ok()?;
            let bits = Bits::from_wires(&scratch, wires).ok()?;
            stand_ins.insert(v, Val::Word(bits, *signed));
        }
        let args: Vec<&Val> = op.operands().iter().map(|v| &stand_ins[v]).collect();
        let made = op.apply(&mut scratch, &args).ok()?;
        let depth = made
            .iter()
            .flat_map(|v| v.wires())
            .map(|&w| scratch.depth_of(w).unwrap_or(u32::MAX))
            .max()
            .unwrap_or(0);
        Some((scratch.bootstrap_count(), depth))
    }

    /// The bootstraps the ops `absorbed` and their root `i` built, and
    /// the depth of the root's result `root`.
    fn unfused_cost(&self, i: usize, root: ValueId, absorbed: &[usize]) -> (usize, u32) {
        let pbs = absorbed
            .iter()
            .chain([&i])
            .map(|&j| self.st.op_pbs[j])
            .sum();
        let depth = self.st.values[root.0 as usize]
            .wires()
            .iter()
            .map(|&w| self.st.builder.depth_of(w).unwrap_or(0))
            .max()
            .unwrap_or(0);
        (pbs, depth)
    }
}

/// The most degree [`View::polynomial`] keeps.
const MAX_DEGREE: usize = 16;

/// The most ops and coefficient products one polynomial's walk visits
/// (it recurses: this bounds its depth too).
const MAX_POLY_OPS: usize = 512;

/// A polynomial's coefficients, lowest first, reduced modulo `2^bits`.
type Coefficients = Vec<BigInt>;

/// The walk of [`View::polynomial`] down one expression.
struct PolyWalk<'v, 'a> {
    view: &'v View<'a>,
    shape: (usize, bool),
    modulus: &'v BigInt,
    /// The one word the expression reads, once found.
    x: Option<ValueId>,
    absorbed: Vec<usize>,
    /// Products of two encrypted words absorbed.
    products: usize,
    /// Ops and coefficient products the walk may still visit.
    steps: usize,
}

impl PolyWalk<'_, '_> {
    fn reduce(&self, k: BigInt) -> BigInt {
        ((k % self.modulus) + self.modulus) % self.modulus
    }

    fn add(&self, p: &[BigInt], q: &[BigInt], sign: i32) -> Coefficients {
        (0..p.len().max(q.len()))
            .map(|k| {
                let (a, b) = (
                    p.get(k).cloned().unwrap_or_default(),
                    q.get(k).cloned().unwrap_or_default(),
                );
                self.reduce(a + b * sign)
            })
            .collect()
    }

    fn mul(&mut self, p: &[BigInt], q: &[BigInt]) -> Option<Coefficients> {
        let degree = |c: &[BigInt]| c.iter().rposition(|k| !k.is_zero());
        let (Some(dp), Some(dq)) = (degree(p), degree(q)) else {
            return Some(Vec::new());
        };
        if dp > 0 && dq > 0 {
            self.products += 1;
        }
        if dp + dq > MAX_DEGREE {
            return None;
        }
        self.steps = self.steps.checked_sub((dp + 1) * (dq + 1))?;
        let mut out = vec![BigInt::zero(); dp + dq + 1];
        for (a, ka) in p[..=dp].iter().enumerate() {
            for (b, kb) in q[..=dq].iter().enumerate() {
                out[a + b] += ka * kb;
            }
        }
        Some(out.into_iter().map(|k| self.reduce(k)).collect())
    }

    /// Value `v`: a constant, an op only this expression reads (expanded),
    /// or the word `x`.
    fn value(&mut self, v: ValueId) -> Option<Coefficients> {
        let view = self.view;
        if view.word_shape(v)? != self.shape {
            return None;
        }
        if let Some(k) = view.constant(v) {
            return Some(vec![self.reduce(k.clone())]);
        }
        let j = view.st.made_by[v.0 as usize];
        let inner = view.uses[v.0 as usize] == 1
            && !view.output[v.0 as usize]
            && view.first_value[j] == v.0 as usize
            && view.linear_or_product(j);
        if inner {
            self.absorbed.push(j);
            return self.op(j);
        }
        match self.x {
            None => self.x = Some(v),
            Some(x) if x != v => return None,
            Some(_) => {}
        }
        Some(vec![BigInt::zero(), BigInt::one()])
    }

    /// Op `j`, expanded.
    fn op(&mut self, j: usize) -> Option<Coefficients> {
        self.steps = self.steps.checked_sub(1)?;
        let Op::Word(w) = &self.view.st.ops[j] else {
            return None;
        };
        match w {
            WordOp::Arith(a @ (WordArith::Add | WordArith::Sub), x, y) => {
                let (p, q) = (self.value(*x)?, self.value(*y)?);
                Some(self.add(&p, &q, if *a == WordArith::Add { 1 } else { -1 }))
            }
            WordOp::Neg(x) => {
                let p = self.value(*x)?;
                Some(self.add(&[], &p, -1))
            }
            WordOp::Arith(WordArith::Mul, x, y) => {
                let (p, q) = (self.value(*x)?, self.value(*y)?);
                self.mul(&p, &q)
            }
            WordOp::FusedSum(bits, signed, products, scaled, bias)
                if (*bits, *signed) == self.shape =>
            {
                let mut sum = vec![self.reduce(bias.clone())];
                for (x, y) in products {
                    let (p, q) = (self.value(*x)?, self.value(*y)?);
                    let pq = self.mul(&p, &q)?;
                    sum = self.add(&sum, &pq, 1);
                }
                for (z, k) in scaled {
                    let p = self.value(*z)?;
                    let kp = self.mul(std::slice::from_ref(k), &p)?;
                    sum = self.add(&sum, &kp, 1);
                }
                Some(sum)
            }
            _ => None,
        }
    }
}

/// The time `pbs` bootstraps at `depth` take on `threads`, in bootstraps
/// (Brent's bound: work over threads plus depth).
fn estimate((pbs, depth): (usize, u32), threads: usize) -> usize {
    pbs.div_ceil(threads.max(1)) + depth as usize
}

/// `st` with every sum that pays fused, built again; `st` itself when none
/// does (or when the program holds a custom operation, which cannot be
/// built again).
pub(super) fn fuse(st: State) -> State {
    if st.ops.contains(&Op::Custom) {
        return st;
    }
    let mut uses = vec![0u32; st.values.len()];
    for op in &st.ops {
        for v in op.operands() {
            uses[v.0 as usize] += 1;
        }
    }
    let mut readers = vec![Vec::new(); st.values.len()];
    for (i, op) in st.ops.iter().enumerate() {
        for v in op.operands() {
            readers[v.0 as usize].push(i);
        }
    }
    let mut output = vec![false; st.values.len()];
    for v in &st.output_ids {
        uses[v.0 as usize] += 1;
        output[v.0 as usize] = true;
    }
    let mut first_value = vec![usize::MAX; st.ops.len()];
    for (v, &i) in st.made_by.iter().enumerate().rev() {
        first_value[i] = v;
    }
    let view = View {
        st: &st,
        uses,
        readers,
        output,
        first_value: first_value.clone(),
    };
    // The threads each op was planned for.
    let mut threads = Vec::with_capacity(st.ops.len());
    let mut t = st.threads;
    for op in &st.ops {
        if let Op::PlanThreads(n) = op {
            t = (*n).max(1);
        }
        threads.push(t);
    }
    let mut replaced: BTreeMap<usize, WordOp> = BTreeMap::new();
    let mut skipped = vec![false; st.ops.len()];
    let mut budget = MAX_EXPANDED;
    // Latest first: a root absorbs the ops below it before they are tried
    // as roots of their own.
    for i in (0..st.ops.len()).rev() {
        if skipped[i] || first_value[i] == usize::MAX {
            continue;
        }
        let root = ValueId(first_value[i] as u32);
        // The best rewrite: (gain, ops absorbed, the op replacing the root).
        let mut best: Option<(usize, Vec<usize>, WordOp)> = None;
        let mut consider = |absorbed: Vec<usize>, op: WordOp| {
            let Some(fused) = view.fused_cost(op.clone(), threads[i]) else {
                return;
            };
            let (old, new) = (
                estimate(view.unfused_cost(i, root, &absorbed), threads[i]),
                estimate(fused, threads[i]),
            );
            if new < old && best.as_ref().is_none_or(|(gain, ..)| old - new > *gain) {
                best = Some((old - new, absorbed, op));
            }
        };
        let mut with_products = false;
        let shared = if view.linear(i) || view.expandable(i, &BigInt::one(), true) {
            view.shared_region(i, &skipped)
        } else {
            vec![false; st.ops.len()]
        };
        for products in [true, false] {
            if !products && !with_products {
                // The same form again.
                break;
            }
            let Some(form) = view.form(i, root, products, &shared, &mut budget) else {
                continue;
            };
            with_products = !form.products.is_empty();
            consider(form.absorbed.clone(), form.op());
        }
        if let Some((absorbed, op)) = view.polynomial(i, root) {
            consider(absorbed, op);
        }
        if let Some((_, absorbed, op)) = best {
            for &j in &absorbed {
                skipped[j] = true;
            }
            replaced.insert(i, op);
        }
    }
    if replaced.is_empty() {
        return st;
    }
    match rebuild(&st, &replaced, &skipped) {
        Some(fused) => fused,
        None => st,
    }
}

/// `st`'s program built again with the ops of `replaced` replaced and the
/// `skipped` ones not built (their values, which nothing else reads, kept
/// as placeholders), or `None` if that fails.
fn rebuild(st: &State, replaced: &BTreeMap<usize, WordOp>, skipped: &[bool]) -> Option<State> {
    let mut new = State::new(st.builder.params(), Some(st.threads));
    let mut next_value = 0;
    for (i, op) in st.ops.iter().enumerate() {
        let made = st.made_by[next_value..]
            .iter()
            .take_while(|&&j| j == i)
            .count();
        let old = &st.values[next_value..next_value + made];
        next_value += made;
        if skipped[i] {
            new.record(op.clone(), old.to_vec(), 0);
            continue;
        }
        let vals = match replaced.get(&i) {
            Some(fused) => new.push(&Op::Word(fused.clone()), op.clone()).ok()?,
            None => new.push(op, op.clone()).ok()?,
        };
        let same_shapes =
            vals.len() == made && vals.iter().zip(old).all(|(a, b)| a.shape() == b.shape());
        if !same_shapes {
            return None;
        }
    }
    for &id in &st.output_ids {
        new.mark_output(id).ok()?;
    }
    Some(new)
}
