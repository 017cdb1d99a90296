//! Level-batched evaluation: the engine's interface to executors that run a
//! whole level of bootstraps per call (the GPU), with a CPU executor that CI
//! tests and a clear one that checks plans exhaustively.
//!
//! A [`Plan`] cuts a circuit into levels (a bootstrap's level is one more
//! than the deepest bootstrap it reads) and each level into [`Launch`]es,
//! one per many-LUT shape (outputs per bootstrap). Every fresh value gets a
//! *slot* in the executor's storage. A launch's outputs take one contiguous
//! block, output `j` of its bootstrap `i` at `first + j * n + i`: the layout
//! of tfhe-rs's CUDA many-LUT bootstrap, so outputs land in place. A block
//! is given back after the level that reads its last live value, and reused
//! by later levels; the circuit's inputs take the first block.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use super::{check_input_count, Backend};
use crate::circuit::{Circuit, LinearExpr};
use crate::crypto::params::ParamsId;
use crate::error::Error;
use crate::hooks::Hooks;

/// Index of a ciphertext in an executor's storage.
pub type Slot = u32;

/// Linear combinations of stored values, one row each, in compressed rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    /// Row `r`'s terms are `start[r]..start[r + 1]` (`start[0] = 0`).
    pub start: Vec<u32>,
    /// The stored value each term reads.
    pub slot: Vec<Slot>,
    /// Weights as wrapping `u64` (two's complement).
    pub weight: Vec<u64>,
    /// Each row's constant in digit units (`Z_{2^pi}`); executors scale it
    /// by the parameter set's delta.
    pub constant: Vec<u64>,
}

impl Rows {
    fn new() -> Self {
        Rows {
            start: vec![0],
            ..Rows::default()
        }
    }

    fn push(&mut self, expr: &LinearExpr, slot_of: &[Slot]) {
        for &(f, w) in &expr.terms {
            self.slot.push(slot_of[f as usize]);
            self.weight.push(w as u64);
        }
        self.start.push(self.slot.len() as u32);
        self.constant.push(expr.constant);
    }

    /// Rows (linear combinations) held.
    pub fn len(&self) -> usize {
        self.constant.len()
    }

    /// Whether it holds no row.
    pub fn is_empty(&self) -> bool {
        self.constant.is_empty()
    }

    /// Appends `other`'s rows after these.
    fn append(&mut self, other: &Rows) {
        let base = self.slot.len() as u32;
        self.start
            .extend(other.start[1..].iter().map(|&s| base + s));
        self.slot.extend_from_slice(&other.slot);
        self.weight.extend_from_slice(&other.weight);
        self.constant.extend_from_slice(&other.constant);
    }

    /// Row `r`'s terms `(slot, weight)`.
    pub fn terms(&self, r: usize) -> impl Iterator<Item = (Slot, u64)> + '_ {
        let range = self.start[r] as usize..self.start[r + 1] as usize;
        self.slot[range.clone()]
            .iter()
            .copied()
            .zip(self.weight[range].iter().copied())
    }
}

/// Bootstraps of one level that share their number of outputs: one call of
/// an executor.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Each bootstrap's input.
    pub rows: Rows,
    /// Each bootstrap's table (index into the circuit's tables).
    pub table: Vec<u32>,
    /// Outputs per bootstrap (many-LUT extractions of one blind rotation).
    pub outputs: u32,
    /// Spacing of the extractions in digit units: output `j` reads the
    /// table at the selector plus `j * stride`.
    pub stride: u64,
    /// Output `j` of bootstrap `i` is stored at `first + j * n + i`.
    pub first: Slot,
    /// Each bootstrap's index in the circuit.
    pub bootstraps: Vec<u32>,
}

impl Launch {
    /// Bootstraps in this launch.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the launch has no bootstrap.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Where output `j` of bootstrap `i` is stored.
    pub fn output_slot(&self, i: usize, j: usize) -> Slot {
        self.first + (j * self.len() + i) as Slot
    }
}

/// A circuit laid out for a batched executor.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Storage the executor needs, in ciphertexts.
    pub slots: usize,
    /// Input `i` is stored at slot `i`.
    pub inputs: usize,
    /// Launches by level: a level's launches only read earlier levels.
    pub levels: Vec<Vec<Launch>>,
    /// The circuit's outputs.
    pub outputs: Rows,
}

/// Words (u64) a launch's outputs may span: tfhe-rs's CUDA many-LUT
/// bootstrap computes output `j`'s offset `j * n * (kN + 1)` in 32-bit
/// arithmetic, so [`Plan::new`] keeps `outputs * n * (kN + 1)` below 2^32,
/// splitting larger groups (for `DIGITS_128` at 16 outputs, n = 131 000).
pub const MAX_LAUNCH_WORDS: u64 = 1 << 32;

impl Plan {
    /// Lays out `circuit`. Bootstraps whose outputs are not evenly spaced
    /// from offset 0 (never made by `hearth::CircuitBuilder`) are refused.
    pub fn new(circuit: &Circuit) -> Result<Plan, Error> {
        Self::with_max_words(circuit, MAX_LAUNCH_WORDS)
    }

    /// [`Plan::new`] with launches whose outputs span fewer than
    /// `max_words` words (at least one bootstrap each).
    fn with_max_words(circuit: &Circuit, max_words: u64) -> Result<Plan, Error> {
        let lwe_size = ParamsId::params(circuit.params())
            .big_lwe_dimension()
            .to_lwe_size()
            .0 as u64;
        let n_fresh = circuit.num_fresh();
        let mut uses = circuit.use_counts();
        // Group bootstraps by level and output count.
        let mut by_level: Vec<BTreeMap<(u32, u64), Vec<usize>>> = Vec::new();
        for (b, bs) in circuit.bootstraps().iter().enumerate() {
            let stride = bs.offsets.get(1).copied().unwrap_or(0);
            let even = bs
                .offsets
                .iter()
                .enumerate()
                .all(|(j, &o)| o == j as u64 * stride);
            if bs.offsets.is_empty() || !even {
                return Err(Error::Config(format!(
                    "bootstrap {b}: outputs at offsets {:?} are not evenly spaced from 0",
                    bs.offsets
                )));
            }
            let level = circuit.depths()[bs.first_output as usize] as usize;
            if by_level.len() < level {
                by_level.resize_with(level, BTreeMap::new);
            }
            by_level[level - 1]
                .entry((bs.offsets.len() as u32, stride))
                .or_default()
                .push(b);
        }

        let mut layout = Layout::new(n_fresh);
        let inputs: Vec<u32> = circuit.inputs().iter().map(|&(f, _)| f).collect();
        layout.place(&inputs, &uses);

        let mut levels = Vec::with_capacity(by_level.len());
        for groups in &by_level {
            let mut launches = Vec::with_capacity(groups.len());
            let mut read: Vec<u32> = Vec::new();
            for (&(outputs, stride), group) in groups {
                let most = ((max_words - 1) / (outputs as u64 * lwe_size)).max(1) as usize;
                for members in group.chunks(most) {
                    // Output j of member i, in the launch's layout.
                    let fresh: Vec<u32> = (0..outputs)
                        .flat_map(|j| {
                            members
                                .iter()
                                .map(move |&b| circuit.bootstraps()[b].first_output + j)
                        })
                        .collect();
                    let mut rows = Rows::new();
                    for &b in members {
                        let input = &circuit.bootstraps()[b].input;
                        rows.push(input, &layout.slot_of);
                        read.extend(input.terms.iter().map(|&(f, _)| f));
                    }
                    let first = layout.place(&fresh, &uses);
                    launches.push(Launch {
                        rows,
                        table: members
                            .iter()
                            .map(|&b| circuit.bootstraps()[b].table as u32)
                            .collect(),
                        outputs,
                        stride,
                        first,
                        bootstraps: members.iter().map(|&b| b as u32).collect(),
                    });
                }
            }
            // Blocks whose last live value this level read go back.
            for f in read {
                uses[f as usize] -= 1;
                if uses[f as usize] == 0 {
                    layout.release(f);
                }
            }
            levels.push(launches);
        }
        let mut outputs = Rows::new();
        for o in circuit.outputs() {
            outputs.push(o, &layout.slot_of);
        }
        Ok(Plan {
            slots: layout.blocks.end as usize,
            inputs: inputs.len(),
            levels,
            outputs,
        })
    }

    /// Bootstraps in the plan.
    pub fn bootstraps(&self) -> usize {
        self.levels.iter().flatten().map(Launch::len).sum()
    }

    /// The largest launch, in bootstraps.
    pub fn widest(&self) -> usize {
        self.levels
            .iter()
            .flatten()
            .map(Launch::len)
            .max()
            .unwrap_or(0)
    }
}

/// A plan's rows and tables in one set of arrays: every launch's rows in
/// plan order, then the outputs' rows. An executor that copies its indexes
/// to a device does so once per run and reads launch `k` at row
/// `first_row[k]` (term indexes in `rows.start` count from the first row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packed {
    /// All rows.
    pub rows: Rows,
    /// The table of each bootstrap row (outputs' rows have none).
    pub table: Vec<u64>,
    /// First row of each launch in plan order; the last entry is the
    /// outputs' first row.
    pub first_row: Vec<usize>,
}

impl Plan {
    /// The plan's rows and tables packed for one upload.
    pub fn packed(&self) -> Packed {
        let mut rows = Rows::new();
        let mut table = Vec::new();
        let mut first_row = Vec::new();
        for launch in self.levels.iter().flatten() {
            first_row.push(rows.len());
            rows.append(&launch.rows);
            table.extend(launch.table.iter().map(|&t| t as u64));
        }
        first_row.push(rows.len());
        rows.append(&self.outputs);
        Packed {
            rows,
            table,
            first_row,
        }
    }
}

/// Slots of fresh values while a plan is made.
struct Layout {
    slot_of: Vec<Slot>,
    /// Block of each fresh value, and live values left in each block.
    block_of: Vec<u32>,
    live: Vec<u32>,
    blocks: Blocks,
}

impl Layout {
    fn new(n_fresh: usize) -> Self {
        Layout {
            slot_of: vec![Slot::MAX; n_fresh],
            block_of: vec![u32::MAX; n_fresh],
            live: Vec::new(),
            blocks: Blocks::default(),
        }
    }

    /// A block for `fresh`, in order; given back at once if none is read.
    fn place(&mut self, fresh: &[u32], uses: &[u32]) -> Slot {
        let first = self.blocks.take(fresh.len() as u32);
        let id = self.live.len() as u32;
        let mut live = 0;
        for (k, &f) in fresh.iter().enumerate() {
            self.slot_of[f as usize] = first + k as Slot;
            self.block_of[f as usize] = id;
            live += (uses[f as usize] > 0) as u32;
        }
        self.live.push(live);
        if live == 0 {
            self.blocks.give(first, fresh.len() as u32);
        }
        first
    }

    /// `f` has been read for the last time.
    fn release(&mut self, f: u32) {
        let id = self.block_of[f as usize] as usize;
        self.live[id] -= 1;
        if self.live[id] == 0 {
            let (first, len) = self.blocks.extent(self.slot_of[f as usize]);
            self.blocks.give(first, len);
        }
    }
}

/// First-fit allocation of slot ranges, merging neighbours on return.
#[derive(Default)]
struct Blocks {
    /// Free ranges: start -> length.
    free: BTreeMap<Slot, u32>,
    /// Allocated ranges: start -> length.
    used: BTreeMap<Slot, u32>,
    /// One past the highest slot ever handed out.
    end: Slot,
}

impl Blocks {
    fn take(&mut self, len: u32) -> Slot {
        let found = self
            .free
            .iter()
            .find(|&(_, &l)| l >= len)
            .map(|(&s, &l)| (s, l));
        let first = match found {
            Some((s, l)) => {
                self.free.remove(&s);
                if l > len {
                    self.free.insert(s + len, l - len);
                }
                s
            }
            None => {
                let s = self.end;
                self.end += len;
                s
            }
        };
        self.used.insert(first, len);
        first
    }

    /// The allocated range holding `slot`.
    fn extent(&self, slot: Slot) -> (Slot, u32) {
        let (&s, &l) = self
            .used
            .range(..=slot)
            .next_back()
            .expect("plan invariant: a live value sits in an allocated block");
        (s, l)
    }

    fn give(&mut self, first: Slot, len: u32) {
        if len == 0 || self.used.remove(&first).is_none() {
            return;
        }
        let (mut s, mut l) = (first, len);
        if let Some((&ps, &pl)) = self.free.range(..s).next_back() {
            if ps + pl == s {
                self.free.remove(&ps);
                s = ps;
                l += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(s + l)) {
            self.free.remove(&(s + l));
            l += nl;
        }
        self.free.insert(s, l);
    }
}

/// Runs the launches of a [`Plan`] on its own storage.
pub trait BatchExecutor {
    /// What one stored value is.
    type Digit;

    /// Makes room for `plan.slots` values and stores input `i` at slot `i`.
    fn start(
        &mut self,
        circuit: &Circuit,
        plan: &Plan,
        inputs: &[Self::Digit],
    ) -> Result<(), Error>;

    /// Combines each bootstrap's input, bootstraps it through its table
    /// and stores every output in its slot.
    fn launch(&mut self, circuit: &Circuit, launch: &Launch) -> Result<(), Error>;

    /// The rows evaluated on the stored values (the circuit's outputs); the
    /// run ends and its storage may be released.
    fn finish(&mut self, outputs: &Rows) -> Result<Vec<Self::Digit>, Error>;
}

/// A [`Backend`] that evaluates circuits level by level on a
/// [`BatchExecutor`].
pub struct Batched<E> {
    executor: Mutex<E>,
    hooks: Hooks,
}

impl<E: BatchExecutor> Batched<E> {
    /// A backend running plans on `executor`.
    pub fn new(executor: E) -> Self {
        Batched {
            executor: Mutex::new(executor),
            hooks: Hooks::default(),
        }
    }

    /// Calls `f(done, total)` after every launch.
    pub fn with_progress(mut self, f: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        self.hooks.set_progress(f);
        self
    }

    /// Stops a run at the next launch once `flag` is set, returning
    /// [`Error::Cancelled`] (launches already queued finish on the device).
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Self {
        self.hooks.set_cancel(flag);
        self
    }

    /// Runs `circuit` by an already made `plan` of it.
    pub fn run_plan(
        &self,
        circuit: &Circuit,
        plan: &Plan,
        inputs: &[E::Digit],
    ) -> Result<Vec<E::Digit>, Error> {
        check_input_count(circuit, inputs.len())?;
        let mut ex = self
            .executor
            .lock()
            .map_err(|_| Error::Internal("a previous run on this backend panicked".into()))?;
        ex.start(circuit, plan, inputs)?;
        let total = plan.bootstraps();
        let mut done = 0;
        for launch in plan.levels.iter().flatten() {
            if self.hooks.cancelled() {
                return Err(Error::Cancelled { done, total });
            }
            ex.launch(circuit, launch)?;
            done += launch.len();
            self.hooks.report(done, total);
        }
        ex.finish(&plan.outputs)
    }
}

impl<E: BatchExecutor> Backend for Batched<E> {
    type Digit = E::Digit;

    fn evaluate(&self, circuit: &Circuit, inputs: &[E::Digit]) -> Result<Vec<E::Digit>, Error> {
        let plan = Plan::new(circuit)?;
        self.run_plan(circuit, &plan, inputs)
    }
}

/// Plain digits in `Z_{2^pi}`: the batched semantics without encryption,
/// for checking plans against [`super::ClearBackend`]. Like the GPU, it
/// reads every launch from the plan's [`Packed`] arrays.
#[derive(Default)]
pub struct ClearBatch {
    store: Vec<u64>,
    modulus: u64,
    packed: Option<Packed>,
    /// Launches run so far in this run.
    next: usize,
}

impl ClearBatch {
    fn combine(&self, rows: &Rows, r: usize) -> u64 {
        let m = self.modulus;
        rows.terms(r).fold(rows.constant[r] % m, |acc, (s, w)| {
            (acc + w.wrapping_mul(self.store[s as usize]) % m) % m
        })
    }
}

impl BatchExecutor for ClearBatch {
    type Digit = u64;

    fn start(&mut self, circuit: &Circuit, plan: &Plan, inputs: &[u64]) -> Result<(), Error> {
        self.modulus = ParamsId::params(circuit.params()).message_modulus();
        self.store = vec![0; plan.slots];
        self.store[..inputs.len()].copy_from_slice(inputs);
        self.packed = Some(plan.packed());
        self.next = 0;
        Ok(())
    }

    fn launch(&mut self, circuit: &Circuit, launch: &Launch) -> Result<(), Error> {
        let m = self.modulus;
        let packed = self
            .packed
            .take()
            .ok_or_else(|| Error::Internal("launch before start".into()))?;
        let first = packed.first_row[self.next];
        self.next += 1;
        for i in 0..launch.len() {
            let x = self.combine(&packed.rows, first + i);
            let table = &circuit.tables()[packed.table[first + i] as usize];
            for j in 0..launch.outputs as usize {
                let at = (x + j as u64 * launch.stride) % m;
                self.store[launch.output_slot(i, j) as usize] = table[2 * at as usize];
            }
        }
        self.packed = Some(packed);
        Ok(())
    }

    fn finish(&mut self, outputs: &Rows) -> Result<Vec<u64>, Error> {
        let packed = self
            .packed
            .take()
            .ok_or_else(|| Error::Internal("finish before start".into()))?;
        let first = *packed.first_row.last().expect("the outputs' entry");
        let out = (0..outputs.len())
            .map(|r| self.combine(&packed.rows, first + r))
            .collect();
        self.store = Vec::new();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::params::{INSECURE_TEST_BITS, INSECURE_TEST_DIGITS};
    use crate::ClearBackend;
    use hearth_core::testing::circuits::random_circuit;
    use std::sync::atomic::Ordering;

    #[test]
    fn blocks_reuse_and_merge() {
        let mut b = Blocks::default();
        let x = b.take(4);
        let y = b.take(2);
        let z = b.take(3);
        assert_eq!((x, y, z, b.end), (0, 4, 6, 9));
        b.give(x, 4);
        b.give(y, 2);
        // Merged into [0, 6): a block of 5 fits there.
        assert_eq!(b.take(5), 0);
        assert_eq!(b.take(2), 9);
        assert_eq!(b.extent(7), (6, 3));
        b.give(z, 3);
        assert_eq!(b.take(1), 5);
    }

    /// Every slot read holds the fresh value the reader expects: no value
    /// is overwritten before its last reader, and every bootstrap runs once.
    fn check_plan(circuit: &Circuit, plan: &Plan) {
        let mut holder: Vec<u32> = vec![u32::MAX; plan.slots];
        for (i, &(f, _)) in circuit.inputs().iter().enumerate() {
            holder[i] = f;
        }
        let check = |holder: &[u32], rows: &Rows, r: usize, expr: &LinearExpr| {
            let slots: Vec<Slot> = rows.terms(r).map(|(s, _)| s).collect();
            assert_eq!(slots.len(), expr.terms.len());
            for (s, &(f, _)) in slots.iter().zip(&expr.terms) {
                assert_eq!(holder[*s as usize], f, "slot {s} overwritten before read");
            }
        };
        let mut ran = vec![false; circuit.bootstraps().len()];
        for launches in &plan.levels {
            let mut writes = Vec::new();
            for l in launches {
                for (i, &b) in l.bootstraps.iter().enumerate() {
                    let bs = &circuit.bootstraps()[b as usize];
                    check(&holder, &l.rows, i, &bs.input);
                    assert!(!std::mem::replace(&mut ran[b as usize], true));
                    for j in 0..l.outputs {
                        writes.push((l.output_slot(i, j as usize), bs.first_output + j));
                    }
                }
            }
            for (s, f) in writes {
                holder[s as usize] = f;
            }
        }
        assert!(ran.iter().all(|&r| r));
        for (r, o) in circuit.outputs().iter().enumerate() {
            check(&holder, &plan.outputs, r, o);
        }
    }

    #[test]
    fn plans_match_the_clear_backend() {
        for (params, seeds) in [
            (&INSECURE_TEST_DIGITS, 0..40u64),
            (&INSECURE_TEST_BITS, 0..20),
        ] {
            for seed in seeds {
                let rc = random_circuit(
                    params,
                    seed,
                    3,
                    40 + seed as usize * 7,
                    1 + seed as usize % 4,
                )
                .unwrap();
                let plan = Plan::new(&rc.circuit).unwrap();
                check_plan(&rc.circuit, &plan);
                assert!(plan.slots <= rc.circuit.num_fresh());
                let want = ClearBackend.evaluate(&rc.circuit, &rc.inputs).unwrap();
                let got = Batched::new(ClearBatch::default())
                    .evaluate(&rc.circuit, &rc.inputs)
                    .unwrap();
                assert_eq!(got, want, "seed {seed}");
            }
        }
    }

    #[test]
    fn packed_rows_are_each_launchs_rows_in_plan_order() {
        for seed in 0..10u64 {
            let rc = random_circuit(&INSECURE_TEST_DIGITS, seed, 3, 60, 3).unwrap();
            let plan = Plan::new(&rc.circuit).unwrap();
            let packed = plan.packed();
            let launches: Vec<&Launch> = plan.levels.iter().flatten().collect();
            assert_eq!(packed.first_row.len(), launches.len() + 1);
            let row = |rows: &Rows, r: usize| (rows.terms(r).collect::<Vec<_>>(), rows.constant[r]);
            for (k, launch) in launches.iter().enumerate() {
                for i in 0..launch.len() {
                    let at = packed.first_row[k] + i;
                    assert_eq!(row(&packed.rows, at), row(&launch.rows, i), "seed {seed}");
                    assert_eq!(packed.table[at], launch.table[i] as u64);
                }
            }
            let outputs = *packed.first_row.last().unwrap();
            assert_eq!(packed.rows.len(), outputs + plan.outputs.len());
            assert_eq!(packed.table.len(), outputs);
            for r in 0..plan.outputs.len() {
                assert_eq!(row(&packed.rows, outputs + r), row(&plan.outputs, r));
            }
        }
    }

    #[test]
    fn launches_too_wide_for_32_bit_offsets_are_split() {
        // A limit of a few ciphertexts stands for 2^32 words: every group
        // is cut into launches of 1 to 5 bootstraps, and the plans still
        // compute what the clear backend computes.
        let params = &INSECURE_TEST_DIGITS;
        let lwe = params.big_lwe_dimension().to_lwe_size().0 as u64;
        let limit = 5 * lwe + 1;
        let (mut split, mut many) = (0, 0);
        for seed in 0..30u64 {
            let rc = random_circuit(params, seed, 3, 60, 1 + seed as usize % 3).unwrap();
            let (circuit, inputs) = (rc.circuit, rc.inputs);
            let plan = Plan::with_max_words(&circuit, limit).unwrap();
            check_plan(&circuit, &plan);
            for l in plan.levels.iter().flatten() {
                assert!(
                    l.len() == 1 || l.outputs as u64 * l.len() as u64 * lwe < limit,
                    "a launch of {} x {} outputs",
                    l.len(),
                    l.outputs
                );
                many += (l.outputs > 1) as usize;
            }
            split += plan.levels.iter().flatten().count()
                - Plan::new(&circuit).unwrap().levels.iter().flatten().count();
            let want = ClearBackend.evaluate(&circuit, &inputs).unwrap();
            let got = Batched::new(ClearBatch::default())
                .run_plan(&circuit, &plan, &inputs)
                .unwrap();
            assert_eq!(got, want, "seed {seed}");
        }
        assert!(
            split > 0 && many > 0,
            "{split} extra launches, {many} many-LUT"
        );
    }

    #[test]
    fn a_cancelled_run_stops_at_the_next_launch() {
        let rc = random_circuit(&INSECURE_TEST_DIGITS, 7, 3, 60, 2).unwrap();
        let plan = Plan::new(&rc.circuit).unwrap();
        let total = plan.bootstraps();
        assert!(plan.levels.iter().flatten().count() >= 2);
        // Set by the progress callback after the first launch.
        let flag = Arc::new(AtomicBool::new(false));
        let first = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (f, seen) = (flag.clone(), first.clone());
        let backend = Batched::new(ClearBatch::default())
            .with_progress(move |done, _| {
                let _ = seen.compare_exchange(0, done, Ordering::Relaxed, Ordering::Relaxed);
                f.store(true, Ordering::Relaxed);
            })
            .with_cancel(flag);
        match backend.evaluate(&rc.circuit, &rc.inputs) {
            Err(Error::Cancelled { done, total: t }) => {
                assert_eq!((done, t), (first.load(Ordering::Relaxed), total));
                assert!(done < total);
            }
            other => panic!("expected Cancelled, got {other:?}"),
        }
    }
}
