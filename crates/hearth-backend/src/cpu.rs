//! The CPU backend: tfhe-rs key switch + PBS on a rayon pool.
//!
//! Scheduling is by dependency counting, with no barrier between levels: a
//! bootstrap is spawned the moment the last bootstrap it reads finishes, so
//! independent work from different operations of one circuit overlaps. At
//! most `threads` bootstraps run at once. Each pool thread owns one set of
//! scratch buffers; one FFT plan is shared. Every fresh value is dropped
//! right after its last reader has consumed it.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tfhe::core_crypto::prelude::*;

use super::Backend;
use crate::circuit::{Circuit, LinearExpr};
use crate::crypto::bootstrap::{accumulator, PbsScratch};
use crate::crypto::keys::{Ciphertext, ServerKey};
use crate::crypto::many::{ManyPbs, Mode};
use crate::error::Error;
use crate::hooks::Hooks;

/// What one run measured.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// Bootstraps run.
    pub pbs: usize,
    /// Threads used.
    pub threads: usize,
    /// Most ciphertexts alive at once during the run.
    pub peak_live: usize,
}

/// Evaluates circuits with real encryption on `threads` CPU threads.
pub struct CpuBackend<'k> {
    pub(crate) key: &'k ServerKey,
    pub(crate) pool: Arc<rayon::ThreadPool>,
    threads: usize,
    pub(crate) fft: Fft,
    /// One set of buffers per pool thread.
    pub(crate) scratch: Vec<Mutex<PbsScratch>>,
    hooks: Hooks,
    /// Pool threads from this index on are remote slots of `remote`.
    pub(crate) local: usize,
    pub(crate) remote: Option<Arc<dyn Remote>>,
    /// Per pool thread, buffers for groups of ready bootstraps run in one
    /// pass over the keys ([`CpuBackend::with_group`]); empty when off.
    many: Vec<Mutex<ManyPbs>>,
    /// The group size (1: off).
    group: usize,
}

/// Ready bootstraps a thread takes at once by default (see
/// [`CpuBackend::with_group`]; docs/results/bootstrap-cpu.md).
pub const DEFAULT_GROUP: usize = 8;

/// The group size from `HEARTH_PBS_GROUP` (a positive integer; 1 turns
/// grouping off), else [`DEFAULT_GROUP`]: for measuring the grouped path
/// against the ungrouped one through any command.
pub fn default_group() -> usize {
    std::env::var("HEARTH_PBS_GROUP")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&m| m > 0)
        .unwrap_or(DEFAULT_GROUP)
}

/// Bootstraps run outside this process (the `mpi` backend's workers): a
/// pool thread with index `local + slot` hands its bootstraps to `slot`,
/// so the scheduler, cancel, progress and memory accounting stay one.
pub trait Remote: Send + Sync {
    /// Bootstraps `input` (big-key LWE, the combined terms) with table
    /// `table` of the run and the many-LUT `offsets`, into `outputs`.
    fn bootstrap(
        &self,
        slot: usize,
        table: usize,
        offsets: &[u64],
        input: &[u64],
        outputs: &mut [LweCiphertextOwned<u64>],
    ) -> Result<(), Error>;
}

/// The thread count from `HEARTH_THREADS`, else the machine's parallelism.
pub fn default_threads() -> Result<usize, Error> {
    match std::env::var("HEARTH_THREADS") {
        Ok(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| {
                Error::Config(format!("HEARTH_THREADS=`{v}` is not a positive integer"))
            }),
        Err(_) => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// `threads` if given (it must be positive), else [`default_threads`].
pub fn resolve_threads(threads: Option<usize>) -> Result<usize, Error> {
    match threads {
        Some(0) => Err(Error::Config("thread count must be positive".into())),
        Some(t) => Ok(t),
        None => default_threads(),
    }
}

impl<'k> CpuBackend<'k> {
    /// A backend on `threads` threads (see [`resolve_threads`]).
    pub fn new(key: &'k ServerKey, threads: Option<usize>) -> Result<Self, Error> {
        let threads = resolve_threads(threads)?;
        Ok(Self::with_pool(key, Arc::new(Self::pool(threads)?)))
    }

    /// A pool of `threads` bootstrap threads for [`CpuBackend::with_pool`].
    pub fn pool(threads: usize) -> Result<rayon::ThreadPool, Error> {
        if threads == 0 {
            return Err(Error::Config("thread count must be positive".into()));
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("hearth-pbs-{i}"))
            .build()
            .map_err(|e| Error::Config(format!("cannot start {threads} threads: {e}")))
    }

    /// A backend on an existing pool (one per process, shared by backends
    /// of different keys, e.g. a server's jobs): it uses all of the pool's
    /// threads. Runs of backends sharing a pool may overlap; each run's
    /// bootstraps are then interleaved on the pool's threads.
    pub fn with_pool(key: &'k ServerKey, pool: Arc<rayon::ThreadPool>) -> Self {
        let threads = pool.current_num_threads();
        let params = key.params();
        let fft = Fft::new(params.polynomial_size);
        let scratch = (0..threads)
            .map(|_| Mutex::new(PbsScratch::new(params, fft.as_view())))
            .collect();
        CpuBackend {
            key,
            pool,
            threads,
            fft,
            scratch,
            hooks: Hooks::default(),
            local: threads,
            remote: None,
            many: Vec::new(),
            group: 1,
        }
        .with_group(default_group())
    }

    /// Lets a pool thread take up to `m` ready bootstraps at once (no more
    /// than its share of those ready) and run them in one pass over the
    /// key switching and bootstrap keys (`hearth::crypto::many`): the
    /// same ciphertexts bit for bit, less memory traffic. 1 turns it off;
    /// sets other than classical ones with `k = 1` and one level ignore it.
    pub fn with_group(mut self, m: usize) -> Self {
        self.many = if m >= 2 {
            (0..self.threads)
                .map_while(|_| ManyPbs::new(self.key, m).map(Mutex::new))
                .collect()
        } else {
            Vec::new()
        };
        self.group = if self.many.is_empty() { 1 } else { m };
        self
    }

    /// The most ready bootstraps a thread runs at once (1: no grouping).
    pub fn group(&self) -> usize {
        self.group
    }

    /// Calls `f(done, total)` after every bootstrap.
    pub fn with_progress(mut self, f: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        self.hooks.set_progress(f);
        self
    }

    /// Stops a run soon after `flag` is set: bootstraps already started
    /// finish, no new one starts, and the run returns
    /// [`Error::Cancelled`]. The flag is never cleared by the backend.
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Self {
        self.hooks.set_cancel(flag);
        self
    }

    fn cancelled(&self) -> bool {
        self.hooks.cancelled()
    }

    /// Threads of its pool.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The server key it bootstraps with.
    pub fn key(&self) -> &'k ServerKey {
        self.key
    }

    /// Its thread pool (the MPI backend's workers run on it).
    #[doc(hidden)]
    pub fn thread_pool(&self) -> &Arc<rayon::ThreadPool> {
        &self.pool
    }

    /// Pool threads from `local` on hand their bootstraps to `remote`'s
    /// slots (the MPI backend, crate `hearth-mpi`).
    #[doc(hidden)]
    pub fn with_remote(mut self, local: usize, remote: Arc<dyn Remote>) -> Self {
        self.local = local;
        self.remote = Some(remote);
        self.many.clear();
        self.group = 1;
        self
    }

    /// Pool threads that bootstrap here (the rest are remote slots).
    #[doc(hidden)]
    pub fn local_threads(&self) -> usize {
        self.local
    }

    /// Bootstraps the big-key LWE `input` with accumulator `acc` and the
    /// many-LUT `offsets` into `outputs`, on pool thread `thread`'s buffers
    /// (an MPI worker's job).
    #[doc(hidden)]
    pub fn bootstrap_on(
        &self,
        thread: usize,
        input: &[u64],
        acc: &GlweCiphertextOwned<u64>,
        offsets: &[u64],
        outputs: &mut [LweCiphertextOwned<u64>],
    ) {
        let mut scratch = self.scratch[thread].lock().unwrap();
        scratch.set_threads(1);
        scratch.input_mut().copy_from_slice(input);
        self.key
            .bootstrap_input(&mut scratch, acc, offsets, self.fft.as_view(), outputs);
    }

    /// Pool thread `thread`'s buffers, or a fresh set where that thread
    /// already holds them: a bootstrap waiting for its helper half
    /// ([`PbsScratch::set_threads`]) may run another job meanwhile.
    pub(crate) fn scratch_of(&self, thread: usize) -> Scratch<'_> {
        match self.scratch[thread].try_lock() {
            Ok(held) => Scratch::Held(held),
            Err(std::sync::TryLockError::Poisoned(e)) => Scratch::Held(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => Scratch::Fresh(Box::new(PbsScratch::new(
                self.key.params(),
                self.fft.as_view(),
            ))),
        }
    }

    /// Checks that a circuit and its inputs belong to this backend's key.
    pub fn check_run(&self, circuit: &Circuit, inputs: &[Ciphertext]) -> Result<(), Error> {
        super::check_run(circuit, self.key.params().id, self.key.key_id(), inputs)
    }

    /// Evaluates `circuit` and reports time and peak memory.
    pub fn run(
        &self,
        circuit: &Circuit,
        inputs: &[Ciphertext],
    ) -> Result<(Vec<Ciphertext>, RunReport), Error> {
        let start = Instant::now();
        self.check_run(circuit, inputs)?;
        let run = Run::new(self, circuit, inputs);
        self.pool
            .scope(|s| start_roots(&run.pending, |roots| run.offer_all(s, roots)));
        if let Some(e) = run.failure.lock().unwrap().take() {
            return Err(e);
        }
        let done = run.done.load(Ordering::Relaxed);
        if done < circuit.bootstraps().len() {
            return Err(Error::Cancelled {
                done,
                total: circuit.bootstraps().len(),
            });
        }
        let outputs = circuit
            .outputs()
            .iter()
            .map(|o| Ciphertext::from_lwe(self.key.params().id, self.key.key_id(), run.combine(o)))
            .collect();
        let report = RunReport {
            wall: start.elapsed(),
            pbs: circuit.bootstraps().len(),
            threads: self.threads,
            peak_live: run.peak.load(Ordering::Relaxed),
        };
        Ok((outputs, report))
    }
}

impl Backend for CpuBackend<'_> {
    type Digit = Ciphertext;

    fn evaluate(&self, circuit: &Circuit, inputs: &[Ciphertext]) -> Result<Vec<Ciphertext>, Error> {
        Ok(self.run(circuit, inputs)?.0)
    }
}

/// A pool thread's bootstrap buffers (see [`CpuBackend::scratch_of`]).
pub(crate) enum Scratch<'a> {
    Held(std::sync::MutexGuard<'a, PbsScratch>),
    Fresh(Box<PbsScratch>),
}

impl std::ops::Deref for Scratch<'_> {
    type Target = PbsScratch;
    fn deref(&self) -> &PbsScratch {
        match self {
            Scratch::Held(s) => s,
            Scratch::Fresh(s) => s,
        }
    }
}

impl std::ops::DerefMut for Scratch<'_> {
    fn deref_mut(&mut self) -> &mut PbsScratch {
        match self {
            Scratch::Held(s) => s,
            Scratch::Fresh(s) => s,
        }
    }
}

/// Starts every root (a bootstrap that waits for none), all at once so
/// that the first threads to take them see them all. The roots are taken
/// before the first starts: a bootstrap whose producers all finish while
/// the roots are still being started is started by its last producer,
/// and must not be started again as a root (its second run would read
/// values the first had freed).
fn start_roots(pending: &[AtomicU32], start: impl FnOnce(&[usize])) {
    let roots: Vec<usize> = (0..pending.len())
        .filter(|&b| pending[b].load(Ordering::Relaxed) == 0)
        .collect();
    start(&roots);
}

type Slot = Mutex<Option<Arc<LweCiphertextOwned<u64>>>>;

/// State of one evaluation.
struct Run<'a> {
    backend: &'a CpuBackend<'a>,
    circuit: &'a Circuit,
    accumulators: Vec<GlweCiphertextOwned<u64>>,
    slots: Vec<Slot>,
    uses: Vec<AtomicU32>,
    /// Unfinished producers still awaited by each bootstrap (one per term).
    pending: Vec<AtomicU32>,
    /// For each bootstrap, the bootstraps reading its outputs (one entry per term).
    consumers: Vec<Vec<u32>>,
    done: AtomicUsize,
    /// Bootstraps started or ready to start: a multi-bit bootstrap takes
    /// its share of the local threads (all of them when it runs alone).
    active: AtomicUsize,
    live: AtomicUsize,
    peak: AtomicUsize,
    /// The first remote failure; no bootstrap starts after it.
    failure: Mutex<Option<Error>>,
    failed: AtomicBool,
    /// Ready bootstraps not yet taken (grouping on: each offered one
    /// spawns a task, which takes its thread's share of them).
    ready: Mutex<Vec<usize>>,
    /// Threads running bootstraps they took from `ready`: a thread's share
    /// is the ready ones over the threads not running any.
    running: AtomicUsize,
}

impl<'a> Run<'a> {
    fn new(backend: &'a CpuBackend<'a>, circuit: &'a Circuit, inputs: &[Ciphertext]) -> Self {
        let params = backend.key.params();
        let n_fresh = circuit.num_fresh();
        let (consumers, pending) = circuit.dependencies();
        let pending = pending.into_iter().map(AtomicU32::new).collect();
        let uses: Vec<AtomicU32> = circuit
            .use_counts()
            .into_iter()
            .map(AtomicU32::new)
            .collect();
        let slots: Vec<Slot> = (0..n_fresh).map(|_| Mutex::new(None)).collect();
        let mut live = 0;
        for (&(f, _), ct) in circuit.inputs().iter().zip(inputs) {
            if uses[f as usize].load(Ordering::Relaxed) > 0 {
                *slots[f as usize].lock().unwrap() = Some(Arc::new(ct.lwe().clone()));
                live += 1;
            }
        }
        Run {
            backend,
            circuit,
            accumulators: circuit
                .tables()
                .iter()
                .map(|t| accumulator(params, t))
                .collect(),
            slots,
            uses,
            pending,
            consumers,
            done: AtomicUsize::new(0),
            active: AtomicUsize::new(0),
            live: AtomicUsize::new(live),
            peak: AtomicUsize::new(live),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            ready: Mutex::new(Vec::new()),
            running: AtomicUsize::new(0),
        }
    }

    /// Bootstraps `bs` are ready: each runs in a task of its own, or with
    /// grouping on they join the ready list together (so that the first
    /// thread to take sees them all) and a task per bootstrap is spawned
    /// to take a share of it.
    fn offer_all<'s>(&'s self, scope: &rayon::Scope<'s>, bs: &[usize]) {
        if bs.is_empty() {
            return;
        }
        self.active.fetch_add(bs.len(), Ordering::Relaxed);
        if self.backend.many.is_empty() {
            for &b in bs {
                scope.spawn(move |s| self.execute(s, b, false));
            }
        } else {
            self.ready.lock().unwrap().extend_from_slice(bs);
            for _ in bs {
                scope.spawn(move |s| self.take(s));
            }
        }
    }

    /// Takes this thread's share of the ready bootstraps (at most the
    /// group size, at most the ready count over the threads not running
    /// any, rounded up) and runs them: one alone as ever (it may pair),
    /// several as a group.
    fn take<'s>(&'s self, scope: &rayon::Scope<'s>) {
        let group: Vec<usize> = {
            let mut ready = self.ready.lock().unwrap();
            if ready.is_empty() {
                return;
            }
            let others = self.running.fetch_add(1, Ordering::Relaxed);
            let idle = self.backend.local.saturating_sub(others).max(1);
            let m = self.backend.group().min(ready.len().div_ceil(idle));
            let at = ready.len() - m;
            ready.drain(at..).rev().collect()
        };
        match group[..] {
            [b] => self.execute(scope, b, true),
            _ => self.execute_group(scope, &group),
        }
    }

    /// A thread that took bootstraps from the ready list is done running
    /// them (before it offers their readers).
    fn release(&self, taken: bool) {
        if taken {
            self.running.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Bootstraps `group` (two or more) in one pass over the keys on this
    /// thread's [`ManyPbs`].
    fn execute_group<'s>(&'s self, scope: &rayon::Scope<'s>, group: &[usize]) {
        if self.backend.cancelled() || self.failed.load(Ordering::Relaxed) {
            self.active.fetch_sub(group.len(), Ordering::Relaxed);
            self.release(true);
            return;
        }
        let key = self.backend.key;
        let bss: Vec<_> = group
            .iter()
            .map(|&b| &self.circuit.bootstraps()[b])
            .collect();
        let inputs: Vec<Vec<u64>> = bss
            .iter()
            .map(|bs| {
                let mut input = vec![0; key.params().big_lwe_dimension().to_lwe_size().0];
                self.combine_into(&bs.input, &mut input, true);
                input
            })
            .collect();
        let mut outputs: Vec<Vec<LweCiphertextOwned<u64>>> = bss
            .iter()
            .map(|bs| bs.offsets.iter().map(|_| key.new_lwe()).collect())
            .collect();
        {
            let thread = rayon::current_thread_index().expect("runs on the backend's pool");
            let mut many = self.backend.many[thread].lock().unwrap();
            let inputs: Vec<&[u64]> = inputs.iter().map(|v| &v[..]).collect();
            let accs: Vec<_> = bss.iter().map(|bs| &self.accumulators[bs.table]).collect();
            let offsets: Vec<&[u64]> = bss.iter().map(|bs| &bs.offsets[..]).collect();
            let mut outs: Vec<&mut [LweCiphertextOwned<u64>]> =
                outputs.iter_mut().map(|o| &mut o[..]).collect();
            many.bootstrap_tables(key, Mode::GROUPED, &inputs, &accs, &offsets, &mut outs);
        }
        self.release(true);
        let mut next = Vec::new();
        for (&b, outputs) in group.iter().zip(outputs) {
            self.active.fetch_sub(1, Ordering::Relaxed);
            self.finish(b, outputs, &mut next);
        }
        self.offer_all(scope, &next);
    }

    fn value(&self, f: u32) -> Arc<LweCiphertextOwned<u64>> {
        self.slots[f as usize]
            .lock()
            .unwrap()
            .clone()
            .expect("scheduler invariant: a value is stored before its readers run")
    }

    /// `expr` evaluated on the stored fresh values, into `out`. Releases
    /// each value read when `release` is set (its last reader frees it).
    fn combine_into(&self, expr: &LinearExpr, out: &mut [u64], release: bool) {
        out.fill(0);
        for &(f, w) in &expr.terms {
            super::add_scaled(out, self.value(f).as_ref().as_ref(), w as u64);
            if release && self.uses[f as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                *self.slots[f as usize].lock().unwrap() = None;
                self.live.fetch_sub(1, Ordering::Relaxed);
            }
        }
        super::add_constant(out, expr.constant, self.backend.key.params().delta());
    }

    fn combine(&self, expr: &LinearExpr) -> LweCiphertextOwned<u64> {
        let mut lwe = self.backend.key.new_lwe();
        self.combine_into(expr, lwe.as_mut(), false);
        lwe
    }

    /// Bootstraps `b` alone (`taken`: from the ready list).
    fn execute<'s>(&'s self, scope: &rayon::Scope<'s>, b: usize, taken: bool) {
        if self.backend.cancelled() || self.failed.load(Ordering::Relaxed) {
            self.active.fetch_sub(1, Ordering::Relaxed);
            self.release(taken);
            return;
        }
        let bs = &self.circuit.bootstraps()[b];
        let key = self.backend.key;
        let mut outputs: Vec<LweCiphertextOwned<u64>> =
            bs.offsets.iter().map(|_| key.new_lwe()).collect();
        {
            let thread = rayon::current_thread_index().expect("runs on the backend's pool");
            let mut scratch = self.backend.scratch_of(thread);
            let scratch = &mut *scratch;
            self.combine_into(&bs.input, scratch.input_mut(), true);
            match &self.backend.remote {
                Some(remote) if thread >= self.backend.local => {
                    let slot = thread - self.backend.local;
                    let input = scratch.input_mut();
                    if let Err(e) =
                        remote.bootstrap(slot, bs.table, &bs.offsets, input, &mut outputs)
                    {
                        self.failed.store(true, Ordering::Relaxed);
                        self.failure.lock().unwrap().get_or_insert(e);
                        self.active.fetch_sub(1, Ordering::Relaxed);
                        self.release(taken);
                        return;
                    }
                }
                _ => {
                    let active = self.active.load(Ordering::Relaxed).max(1);
                    scratch.set_threads(self.backend.local / active);
                    key.bootstrap_input(
                        scratch,
                        &self.accumulators[bs.table],
                        &bs.offsets,
                        self.backend.fft.as_view(),
                        &mut outputs,
                    )
                }
            }
        }
        self.active.fetch_sub(1, Ordering::Relaxed);
        self.release(taken);
        let mut next = Vec::new();
        self.finish(b, outputs, &mut next);
        self.offer_all(scope, &next);
    }

    /// Stores bootstrap `b`'s outputs, reports it and adds the bootstraps
    /// it was the last to wait for to `next` (offered by the caller).
    fn finish(&self, b: usize, outputs: Vec<LweCiphertextOwned<u64>>, next: &mut Vec<usize>) {
        let bs = &self.circuit.bootstraps()[b];
        let mut stored = 0;
        for (j, out) in outputs.into_iter().enumerate() {
            let f = bs.first_output as usize + j;
            if self.uses[f].load(Ordering::Relaxed) > 0 {
                *self.slots[f].lock().unwrap() = Some(Arc::new(out));
                stored += 1;
            }
        }
        let live = self.live.fetch_add(stored, Ordering::Relaxed) + stored;
        self.peak.fetch_max(live, Ordering::Relaxed);
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        self.backend
            .hooks
            .report(done, self.circuit.bootstraps().len());
        for &c in &self.consumers[b] {
            if self.pending[c as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                next.push(c as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bootstrap 0 finishes the moment it is started (as it may when the
    /// thread starting the roots is preempted) and starts its reader, 2;
    /// 2 must not be started again when the roots' loop reaches it.
    #[test]
    fn a_reader_made_ready_while_roots_start_is_started_once() {
        let pending: Vec<AtomicU32> = [0, 0, 1].into_iter().map(AtomicU32::new).collect();
        let mut started = Vec::new();
        start_roots(&pending, |roots| {
            for &b in roots {
                started.push(b);
                if b == 0 && pending[2].fetch_sub(1, Ordering::AcqRel) == 1 {
                    started.push(2);
                }
            }
        });
        started.sort_unstable();
        assert_eq!(started, [0, 1, 2]);
    }
}
