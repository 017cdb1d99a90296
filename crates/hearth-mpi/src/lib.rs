//! The MPI backend (`hearth::backend::mpi` with hearth's feature `mpi`): a circuit's bootstraps spread over the
//! ranks of an `mpirun` / `srun` launch, and batch mode (many inputs of one
//! circuit scattered over the ranks).
//!
//! Every rank runs the same program. Rank 0 does the work of the
//! [`CpuBackend`] with more pool threads than it has cores: threads below
//! its own thread count bootstrap locally, each further thread is a
//! *remote slot*, thread `i` of some worker rank. A remote slot sends the
//! combined big-key LWE (rank 0 computes every linear combination) to its
//! worker and waits for the extracted outputs, so the dependency-counting
//! scheduler, cancel, progress and memory accounting are the CPU backend's.
//! A worker ([`Cluster::work`]) runs one receive loop and bootstraps on its
//! own pool with the CPU code.
//!
//! Waiting is polling (`MPI_Improbe` / `MPI_Test`) with sleeps of at most
//! [`POLL_MAX`], so that an idle rank uses no core (Open MPI's blocking
//! calls spin) and every wait on another rank has a deadline: a rank that
//! does not answer within [`Cluster::timeout`] gives [`Error::Rank`] naming
//! it. A rank that dies is `mpirun`'s to report: it ends the whole job.
//!
//! Protocol, per message from rank 0 to a worker (tags):
//! * `0..T` — a bootstrap for slot `t`: `[table, n, offsets[n], lwe]`;
//!   the reply (same tag) is the `n` output LWEs and the nanoseconds the
//!   worker spent, or empty on failure.
//! * `TAG_TABLES` — the accumulators of the next run, concatenated.
//! * `TAG_BATCH` — a circuit and input rows (bincode); the reply is the
//!   output rows or a message, after a `TAG_ALIVE` a second meanwhile.
//! * `TAG_KEY` — another server key's file bytes: keep it beside the
//!   others and serve with it from now on (answered with a hello).
//! * `TAG_USE` — the digest of a key kept: serve with it from now on
//!   (answered with a hello).
//! * `TAG_FORGET` — the digest of a kept key: drop it (no answer).
//! * `TAG_STOP` — end [`Cluster::work`].
//!
//! Rank 0 decides which keys the workers keep ([`Cluster::keep_keys`], the
//! least recently shared dropped first) and mirrors their list, so a key
//! travels once while it is kept. Kept keys are named by the SHA3-256 of
//! their file bytes, not by their key id: an id is a random tag anyone
//! can copy into another key's file, and a server shares keys of many
//! users.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bincode::Options;
use mpi::environment::Universe;
use mpi::point_to_point::{MatchedReceiveVec, Message, Status};
use mpi::request::{Request, Scope, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tfhe::core_crypto::prelude::*;

use hearth_backend::cpu::Remote;
use hearth_backend::{Backend, CpuBackend, RunReport};
use hearth_core::circuit::{Circuit, CircuitWire};
use hearth_core::crypto::bootstrap::accumulator;
use hearth_core::crypto::keys::{Ciphertext, KeyId, ServerKey};
use hearth_core::error::Error;

/// Tag of the accumulators sent before each run.
const TAG_TABLES: i32 = 30_000;
/// Tag of a batch-mode job.
const TAG_BATCH: i32 = 30_001;
/// Tag that ends [`Cluster::serve`].
const TAG_STOP: i32 = 30_002;
/// Tag of a worker's greeting after it has the key.
const TAG_HELLO: i32 = 30_003;
/// Tag of a worker's sign of life during a batch.
const TAG_ALIVE: i32 = 30_004;
/// Tag of another server key's file bytes.
const TAG_KEY: i32 = 30_005;
/// Tag of the digest of a kept key to serve with.
const TAG_USE: i32 = 30_006;
/// Tag of the digest of a kept key to drop.
const TAG_FORGET: i32 = 30_007;

/// SHA3-256 of a key's file bytes: what names a kept key.
type Digest = [u8; 32];

fn digest(bytes: &[u8]) -> Digest {
    use sha3::Digest as _;
    sha3::Sha3_256::digest(bytes).into()
}
/// Most threads a worker may serve (tags below the control tags).
const MAX_WORKER_THREADS: usize = TAG_TABLES as usize;

/// Longest sleep between two polls of a pending message.
pub const POLL_MAX: Duration = Duration::from_micros(200);
/// Longest sleep between two polls once a wait has lasted [`IDLE_AFTER`].
const POLL_IDLE: Duration = Duration::from_millis(1);
/// See [`POLL_IDLE`].
const IDLE_AFTER: Duration = Duration::from_millis(100);

/// The default of [`Cluster::timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The communicator, shared by the pool threads of rank 0 and of a worker:
/// MPI is initialised with `MPI_THREAD_MULTIPLE` ([`Cluster::init`] refuses
/// otherwise), which makes concurrent calls on one communicator legal.
struct Comm(SimpleCommunicator);
// SAFETY: `MPI_THREAD_MULTIPLE` (checked in `Cluster::init`) allows any
// thread to call MPI on this communicator at any time.
unsafe impl Send for Comm {}
unsafe impl Sync for Comm {}

/// This process's place in an MPI launch: initialises MPI (with
/// `MPI_THREAD_MULTIPLE`) and holds hearth's own communicator, a duplicate
/// of `MPI_COMM_WORLD`, so that hearth's messages never meet the caller's.
///
/// Rank 0 runs the program: [`Cluster::share_key`], then
/// [`Cluster::backend`] (on an `Arc<Cluster>`) as often as it likes, then
/// [`Cluster::finish`] (also done on drop). Every other rank calls
/// [`Cluster::work`], which returns when rank 0 finishes.
pub struct Cluster {
    comm: Arc<Comm>,
    timeout: Duration,
    /// Rank 0: the shared key's id and digest, once shared.
    shared: Mutex<Option<(KeyId, Digest)>>,
    /// Rank 0: the keys every worker keeps, least recently shared first,
    /// and how many they may keep.
    kept: Mutex<(Vec<Digest>, usize)>,
    /// Rank 0: key files sent to the workers (each sent to all of them).
    key_transfers: AtomicU64,
    /// Rank 0: each worker's thread count (index `rank - 1`).
    workers: Mutex<Vec<usize>>,
    finished: AtomicBool,
    /// One run at a time: the slots' tags are reused by every run.
    run_lock: Mutex<()>,
    // Last: finalises MPI after the communicator is freed.
    _universe: Universe,
}

impl Cluster {
    /// Initialises MPI for hearth. `timeout`: how long any wait on another
    /// rank may last (a bootstrap's reply, a send, the key's greeting).
    pub fn init(timeout: Duration) -> Result<Cluster, Error> {
        let (universe, level) = mpi::initialize_with_threading(Threading::Multiple)
            .ok_or_else(|| Error::Cluster("MPI was already initialised in this process".into()))?;
        if level != Threading::Multiple {
            return Err(Error::Cluster(format!(
                "the MPI library offers thread level {level:?}; hearth needs MPI_THREAD_MULTIPLE"
            )));
        }
        if timeout.is_zero() {
            return Err(Error::Config("the rank timeout must be positive".into()));
        }
        let comm = Arc::new(Comm(universe.world().duplicate()));
        Ok(Cluster {
            comm,
            timeout,
            shared: Mutex::new(None),
            kept: Mutex::new((Vec::new(), 1)),
            key_transfers: AtomicU64::new(0),
            workers: Mutex::new(Vec::new()),
            finished: AtomicBool::new(false),
            run_lock: Mutex::new(()),
            _universe: universe,
        })
    }

    /// This process's rank (0 runs the program).
    pub fn rank(&self) -> i32 {
        self.comm.0.rank()
    }

    /// Ranks in the launch.
    pub fn size(&self) -> i32 {
        self.comm.0.size()
    }

    /// How long a wait on another rank may last.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Rank 0: how many server keys every worker keeps (at least 1, the
    /// default): sharing a kept key again sends only its id. A server
    /// with several tenants keeps as many as its key cache.
    pub fn keep_keys(&self, n: usize) -> Result<(), Error> {
        self.check_root("keep_keys")?;
        self.kept.lock().unwrap().1 = n.max(1);
        Ok(())
    }

    /// Rank 0: how many key files were sent to the workers so far (a
    /// first share, or a key they no longer kept).
    pub fn key_transfers(&self) -> u64 {
        self.key_transfers.load(Ordering::Relaxed)
    }

    /// Rank 0: makes a server key the workers' key. Its file bytes (from
    /// [`ServerKey::to_bytes`] or, 4-6x smaller,
    /// [`hearth_core::crypto::compressed::CompressedServerKey::to_bytes`]) go to every worker, which
    /// reads them with [`ServerKey::from_bytes`] and answers with its
    /// thread count; a key they keep (see [`Cluster::keep_keys`]) is named
    /// by its id instead. Bytes of the current key do nothing; backends
    /// made for another key refuse to run until it is shared again.
    pub fn share_key(&self, key_bytes: &[u8]) -> Result<(), Error> {
        self.check_root("share_key")?;
        let key_id = hearth_core::crypto::files::info_from_bytes(
            std::path::Path::new("<shared key>"),
            key_bytes,
        )?
        .key_id;
        let named = digest(key_bytes);
        let _one_run = self.run_lock.lock().unwrap();
        let mut shared = self.shared.lock().unwrap();
        if *shared == Some((key_id, named)) {
            return Ok(());
        }
        if self.finished.load(Ordering::Relaxed) {
            return Err(Error::Cluster("the cluster has finished".into()));
        }
        let mut kept = self.kept.lock().unwrap();
        if shared.is_none() {
            // Non-blocking broadcasts on every rank (they do not match
            // blocking ones): the workers wait without spinning. A rank that
            // stopped before taking the key must not hang rank 0: the
            // broadcasts end at the deadline, and the first worker that has
            // not said hello with the key by the next one is named.
            let deadline = Instant::now() + self.timeout;
            let sent = broadcast_until(&self.comm, vec![key_bytes.len() as u64], deadline)
                && broadcast_until(&self.comm, key_bytes.to_vec(), deadline);
            if !sent {
                let deadline = Instant::now() + self.timeout;
                for rank in 1..self.size() {
                    self.receive(rank, TAG_HELLO, deadline)?;
                }
                return Err(Error::Cluster(format!(
                    "every rank took the key, but rank 0's broadcast did not complete within {:?}",
                    self.timeout
                )));
            }
            self.key_transfers.fetch_add(1, Ordering::Relaxed);
        } else if kept.0.contains(&named) {
            // A key they keep: its digest is enough.
            let deadline = Instant::now() + self.timeout;
            for rank in 1..self.size() {
                self.send(rank, TAG_USE, named.to_vec(), deadline)?;
            }
        } else {
            // Another key: the workers are serving the old one and take the
            // new one as a message, first dropping the least recently
            // shared ones beyond what they may keep. Backends of the old
            // key refuse to run.
            let deadline = Instant::now() + self.timeout;
            while kept.0.len() >= kept.1 {
                let old = kept.0.remove(0);
                for rank in 1..self.size() {
                    self.send(rank, TAG_FORGET, old.to_vec(), deadline)?;
                }
            }
            for rank in 1..self.size() {
                self.send(rank, TAG_KEY, key_bytes.to_vec(), deadline)?;
            }
            self.key_transfers.fetch_add(1, Ordering::Relaxed);
        }
        kept.0.retain(|&k| k != named);
        kept.0.push(named);
        let deadline = Instant::now() + self.timeout;
        let mut workers = Vec::new();
        for rank in 1..self.size() {
            let (hello, _) = self.receive(rank, TAG_HELLO, deadline)?;
            match hello.as_slice() {
                [0, threads, id] if *id == key_id.0 => workers.push(*threads as usize),
                [0, _, id] => {
                    return Err(Error::Rank {
                        rank,
                        reason: format!("read the key as {}, not {key_id}", KeyId(*id)),
                    })
                }
                _ => {
                    return Err(Error::Rank {
                        rank,
                        reason: "could not read the shared server key".into(),
                    })
                }
            }
        }
        *self.workers.lock().unwrap() = workers;
        *shared = Some((key_id, named));
        Ok(())
    }

    /// Rank 0: a backend on `threads` local threads plus every worker's
    /// threads, for `key` (which must be the key given to
    /// [`Cluster::share_key`]).
    pub fn backend<'k>(
        self: &Arc<Self>,
        key: &'k ServerKey,
        threads: usize,
    ) -> Result<MpiBackend<'k>, Error> {
        self.check_root("backend")?;
        let shared = *self.shared.lock().unwrap();
        let named = match shared {
            Some((id, named)) if id == key.key_id() => named,
            Some((id, _)) => {
                return Err(Error::WrongKey {
                    expected: id,
                    found: key.key_id(),
                })
            }
            None => {
                return Err(Error::Cluster(
                    "share the key with Cluster::share_key before making a backend".into(),
                ))
            }
        };
        if self.finished.load(Ordering::Relaxed) {
            return Err(Error::Cluster("the cluster has finished".into()));
        }
        if threads == 0 {
            return Err(Error::Config("thread count must be positive".into()));
        }
        let workers = self.workers.lock().unwrap().clone();
        let slots: Vec<(i32, i32)> = workers
            .iter()
            .enumerate()
            .flat_map(|(w, &t)| (0..t as i32).map(move |i| (w as i32 + 1, i)))
            .collect();
        let total = threads + slots.len();
        let cpu = CpuBackend::with_pool(key, Arc::new(CpuBackend::pool(total)?));
        let remote = Arc::new(Slots {
            cluster: self.clone(),
            slots,
            lwe_size: key.params().big_lwe_dimension().to_lwe_size().0,
            sent: AtomicU64::new(0),
            compute_ns: AtomicU64::new(0),
        });
        Ok(MpiBackend {
            cpu: cpu.with_remote(threads, remote.clone()),
            local: CpuBackend::new(key, Some(threads))?,
            remote,
            workers,
            named,
        })
    }

    /// Every other rank: receives the key from rank 0 and serves its
    /// bootstraps and batches on `threads` threads until rank 0 finishes.
    /// Returns `Ok(false)` when rank 0 finished without sharing a key.
    pub fn work(&self, threads: usize) -> Result<bool, Error> {
        if self.rank() == 0 {
            return Err(Error::Cluster(
                "rank 0 runs the program; work() is for the other ranks".into(),
            ));
        }
        let root = self.comm.0.process_at_rank(0);
        let mut len = 0u64;
        mpi::request::scope(|scope| complete(root.immediate_broadcast_into(scope, &mut len)));
        if len == 0 {
            return Ok(false);
        }
        let mut bytes = vec![0u8; len as usize];
        mpi::request::scope(|scope| complete(root.immediate_broadcast_into(scope, &mut bytes[..])));
        let threads = threads.clamp(1, MAX_WORKER_THREADS);
        // The keys kept, by digest; the one served; and whether rank 0
        // dropped that one (it goes when the next one comes).
        let mut keys: Vec<(Digest, ServerKey)> = Vec::new();
        let mut current: Digest = [0; 32];
        let mut forget_current = false;
        let mut next = Next::Key(bytes);
        // Rank 0 waits for this answer to a new key or a kept one.
        let hello = |key: Option<&ServerKey>| {
            let words = match key {
                Some(k) => vec![0, threads as u64, k.key_id().0],
                None => vec![1],
            };
            self.send(0, TAG_HELLO, words, Instant::now() + self.timeout)
        };
        loop {
            if forget_current && matches!(next, Next::Key(_) | Next::Use(_)) {
                keys.retain(|(d, _)| *d != current);
                forget_current = false;
            }
            match next {
                Next::Key(bytes) => {
                    let named = digest(&bytes);
                    let key =
                        ServerKey::from_bytes(std::path::Path::new("<key from rank 0>"), &bytes);
                    drop(bytes);
                    hello(key.as_ref().ok())?;
                    keys.push((named, key?));
                    current = named;
                }
                Next::Use(named) => {
                    let kept = keys.iter().find(|(d, _)| *d == named);
                    hello(kept.map(|(_, k)| k))?;
                    if kept.is_none() {
                        return Err(Error::Cluster(format!(
                            "rank {}: rank 0 named a key this rank does not keep",
                            self.rank()
                        )));
                    }
                    current = named;
                }
                Next::Forget(named) if named == current => forget_current = true,
                Next::Forget(named) => keys.retain(|(d, _)| *d != named),
                Next::Stop => return Ok(true),
            }
            let (_, key) = keys
                .iter()
                .find(|(d, _)| *d == current)
                .expect("the key served is kept");
            next = self.serve(key, threads)?;
        }
    }

    /// A worker's loop: bootstraps, tables and batches with `key` until a
    /// message about keys or the end comes.
    fn serve(&self, key: &ServerKey, threads: usize) -> Result<Next, Error> {
        let cpu = CpuBackend::new(key, Some(threads))?;
        // The same pool, reporting signs of life to rank 0 during batches.
        let comm = self.comm.clone();
        let last = Mutex::new(Instant::now());
        let alive =
            CpuBackend::with_pool(key, cpu.thread_pool().clone()).with_progress(move |_, _| {
                let mut last = last.lock().unwrap();
                if last.elapsed() >= Duration::from_secs(1) {
                    *last = Instant::now();
                    let _ = send_until(&comm, 0, TAG_ALIVE, Vec::<u8>::new(), None);
                }
            });
        let params = key.params();
        let glwe = params.glwe_dimension.to_glwe_size().0 * params.polynomial_size.0;
        let mut tables: Arc<Vec<GlweCiphertextOwned<u64>>> = Arc::new(Vec::new());
        let root = self.comm.0.process_at_rank(0);
        // Bootstraps in flight: while every thread has one, no job can come
        // (rank 0 sends a slot's next job after its reply), so the loop
        // sleeps until one finishes instead of polling.
        let busy = (Mutex::new(0usize), std::sync::Condvar::new());
        cpu.thread_pool()
            .in_place_scope(|scope| -> Result<Next, Error> {
                loop {
                    {
                        let mut n = busy.0.lock().unwrap();
                        while *n >= threads {
                            n = busy.1.wait(n).unwrap();
                        }
                    }
                    let (msg, status) = wait(|| root.immediate_matched_probe());
                    match status.tag() {
                        TAG_STOP => {
                            let _: (Vec<u64>, Status) = (msg, status).matched_receive_vec();
                            return Ok(Next::Stop);
                        }
                        TAG_KEY => {
                            return Ok(Next::Key((msg, status).matched_receive_vec::<u8>().0))
                        }
                        TAG_USE | TAG_FORGET => {
                            let (data, _) = (msg, status).matched_receive_vec::<u8>();
                            let mut named = [0u8; 32];
                            let n = data.len().min(32);
                            named[..n].copy_from_slice(&data[..n]);
                            return Ok(if status.tag() == TAG_USE {
                                Next::Use(named)
                            } else {
                                Next::Forget(named)
                            });
                        }
                        TAG_TABLES => {
                            let (data, _) = (msg, status).matched_receive_vec::<u64>();
                            tables = Arc::new(
                                data.chunks_exact(glwe)
                                    .map(|c| {
                                        GlweCiphertext::from_container(
                                            c.to_vec(),
                                            params.polynomial_size,
                                            CiphertextModulus::new_native(),
                                        )
                                    })
                                    .collect(),
                            );
                        }
                        TAG_BATCH => {
                            let (data, _) = (msg, status).matched_receive_vec::<u8>();
                            let reply = batch_job(&alive, &data);
                            // Rank 0 may still be on its own share: no deadline.
                            send_until(&self.comm, 0, TAG_BATCH, reply, None)?;
                        }
                        tag if (tag as usize) < threads => {
                            let (job, _) = (msg, status).matched_receive_vec::<u64>();
                            let tables = tables.clone();
                            let (cpu, comm, busy) = (&cpu, &self.comm, &busy);
                            *busy.0.lock().unwrap() += 1;
                            scope.spawn(move |_| {
                                let reply = bootstrap_job(cpu, &tables, &job).unwrap_or_default();
                                comm.0.process_at_rank(0).send_with_tag(&reply[..], tag);
                                *busy.0.lock().unwrap() -= 1;
                                busy.1.notify_one();
                            });
                        }
                        tag => {
                            let _: (Vec<u8>, Status) = (msg, status).matched_receive_vec();
                            return Err(Error::Cluster(format!(
                                "rank {}: unexpected message (tag {tag}) from rank 0",
                                self.rank()
                            )));
                        }
                    }
                }
            })
    }

    /// Rank 0: ends the workers' loops (or, before any key was shared,
    /// their wait for one). Idempotent; also done on drop.
    pub fn finish(&self) {
        if self.rank() != 0 || self.finished.swap(true, Ordering::Relaxed) {
            return;
        }
        if self.shared.lock().unwrap().is_none() {
            let mut len = 0u64;
            let root = self.comm.0.process_at_rank(0);
            mpi::request::scope(|scope| complete(root.immediate_broadcast_into(scope, &mut len)));
            return;
        }
        let deadline = Instant::now() + self.timeout;
        for rank in 1..self.size() {
            // A worker that does not take it is past helping; mpirun ends it.
            let _ = self.send(rank, TAG_STOP, Vec::<u64>::new(), deadline);
        }
    }

    /// Ends every rank of the launch with `code` (after an [`Error::Rank`],
    /// whose rank may hold half a message).
    pub fn abort(&self, code: i32) -> ! {
        self.comm.0.abort(code)
    }

    fn check_root(&self, what: &str) -> Result<(), Error> {
        if self.rank() != 0 {
            return Err(Error::Cluster(format!(
                "{what} is for rank 0; rank {} calls Cluster::work",
                self.rank()
            )));
        }
        Ok(())
    }

    fn send<T: Equivalence + 'static>(
        &self,
        rank: i32,
        tag: i32,
        data: Vec<T>,
        deadline: Instant,
    ) -> Result<(), Error> {
        send_until(&self.comm, rank, tag, data, Some((deadline, self.timeout)))
    }

    /// Receives a message of `tag` from `rank`, waiting until `deadline`.
    fn receive(&self, rank: i32, tag: i32, deadline: Instant) -> Result<(Vec<u64>, Status), Error> {
        let process = self.comm.0.process_at_rank(rank);
        let (msg, status): (Message, Status) = poll(
            || process.immediate_matched_probe_with_tag(tag),
            Some(deadline),
        )
        .ok_or_else(|| late(rank, self.timeout))?;
        let data = receive_until(msg, status, deadline).ok_or_else(|| late(rank, self.timeout))?;
        Ok((data, status))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.finish();
    }
}

/// What ends a worker's [`Cluster::serve`] loop.
enum Next {
    /// A new key's file bytes.
    Key(Vec<u8>),
    /// The digest of a kept key to serve with.
    Use(Digest),
    /// The digest of a kept key to drop.
    Forget(Digest),
    /// The end of [`Cluster::work`].
    Stop,
}

/// Calls `f` until it gives a value or `deadline` passes (`None`),
/// sleeping between calls from 5 us, doubling up to [`POLL_MAX`]; after
/// [`IDLE_AFTER`] without a value, up to [`POLL_IDLE`] (an idle rank then
/// wakes 1 000 times a second, not 5 000).
fn poll<T>(mut f: impl FnMut() -> Option<T>, deadline: Option<Instant>) -> Option<T> {
    let start = Instant::now();
    let mut nap = Duration::from_micros(5);
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now > d) {
            return None;
        }
        std::thread::sleep(nap);
        let cap = if now - start > IDLE_AFTER {
            POLL_IDLE
        } else {
            POLL_MAX
        };
        nap = (nap * 2).min(cap);
    }
}

/// [`poll`] without a deadline.
fn wait<T>(f: impl FnMut() -> Option<T>) -> T {
    match poll(f, None) {
        Some(v) => v,
        None => unreachable!("poll without a deadline returns only a value"),
    }
}

/// Tests a pending request once: `Some` when it has completed (it is
/// then taken), `None` while it is still pending.
fn test_once<'a, D: ?Sized, S: Scope<'a>>(request: &mut Option<Request<'a, D, S>>) -> Option<()> {
    match request.take()?.test() {
        Ok(_) => Some(()),
        Err(r) => {
            *request = Some(r);
            None
        }
    }
}

/// Completes a request by polling, however long it takes (a blocking wait
/// would spin a core for as long as the other side takes to get there).
fn complete<'a, D: ?Sized, S: Scope<'a>>(request: Request<'a, D, S>) {
    let mut request = Some(request);
    wait(|| test_once(&mut request));
}

/// Sends `data`, polling until it is taken or `deadline` passes; on a
/// timeout the buffer is leaked (MPI may still read it).
fn send_until<T: Equivalence + 'static>(
    comm: &Comm,
    rank: i32,
    tag: i32,
    data: Vec<T>,
    deadline: Option<(Instant, Duration)>,
) -> Result<(), Error> {
    let buf: &'static [T] = Box::leak(data.into_boxed_slice());
    let mut request = Some(comm.0.process_at_rank(rank).immediate_send_with_tag(
        StaticScope,
        buf,
        tag,
    ));
    let done = poll(|| test_once(&mut request), deadline.map(|d| d.0));
    match (done, deadline) {
        (Some(()), _) | (None, None) => {
            // SAFETY: the send completed, so MPI no longer reads `buf`, and
            // no other reference to it exists.
            drop(unsafe { Box::from_raw(buf as *const [T] as *mut [T]) });
            Ok(())
        }
        (None, Some((_, timeout))) => {
            std::mem::forget(request);
            Err(late(rank, timeout))
        }
    }
}

/// Rank 0: broadcasts `data` to every rank, polling until `deadline`;
/// `false` on a timeout, when the buffer is leaked (MPI may still read it).
fn broadcast_until<T: Equivalence + 'static>(comm: &Comm, data: Vec<T>, deadline: Instant) -> bool {
    let root = comm.0.process_at_rank(0);
    transfer_until(data.into_boxed_slice(), deadline, |buf| {
        root.immediate_broadcast_into(StaticScope, buf)
    })
    .is_some()
}

/// Receives the body of a probed message, or `None` once `deadline`
/// passes. The probe sees a large message's envelope before its body,
/// which comes only while the sender runs: a blocking receive would hang
/// rank 0 on a rank stopped in between (seen on an overloaded machine).
fn receive_until<T: Equivalence + Default + Clone + 'static>(
    msg: Message,
    status: Status,
    deadline: Instant,
) -> Option<Vec<T>> {
    let count = usize::try_from(status.count(T::equivalent_datatype())).unwrap_or(0);
    transfer_until(
        vec![T::default(); count].into_boxed_slice(),
        deadline,
        |buf| msg.immediate_matched_receive_into(StaticScope, buf),
    )
    .map(<[T]>::into_vec)
}

/// Runs the non-blocking transfer `start` makes on `data`, polling until
/// `deadline`: the buffer back once the transfer completed, or `None`,
/// when it is leaked (MPI may still read or write it; the run ends with a
/// rank error).
fn transfer_until<T: 'static>(
    data: Box<[T]>,
    deadline: Instant,
    start: impl FnOnce(&'static mut [T]) -> Request<'static, [T], StaticScope>,
) -> Option<Box<[T]>> {
    let raw: *mut [T] = Box::into_raw(data);
    // SAFETY: `raw` is a live allocation; only the request uses `buf`.
    let buf: &'static mut [T] = unsafe { &mut *raw };
    let mut request = Some(start(buf));
    if poll(|| test_once(&mut request), Some(deadline)).is_some() {
        // SAFETY: the transfer completed, so MPI no longer uses the
        // buffer, and `buf` is no longer used.
        Some(unsafe { Box::from_raw(raw) })
    } else {
        std::mem::forget(request);
        None
    }
}

/// The error for a rank that did not take or send a message in time.
fn late(rank: i32, timeout: Duration) -> Error {
    Error::Rank {
        rank,
        reason: format!("did not answer within {timeout:?}"),
    }
}

/// A worker's bootstrap: `[table, n, offsets[n], lwe]` to the `n` outputs,
/// concatenated; `None` for a malformed job.
fn bootstrap_job(
    cpu: &CpuBackend<'_>,
    tables: &[GlweCiphertextOwned<u64>],
    job: &[u64],
) -> Option<Vec<u64>> {
    let key = cpu.key();
    let lwe_size = key.params().big_lwe_dimension().to_lwe_size().0;
    let (&table, rest) = job.split_first()?;
    let (&n, rest) = rest.split_first()?;
    let n = usize::try_from(n).ok().filter(|&n| n <= rest.len())?;
    let (offsets, input) = rest.split_at(n);
    let acc = tables.get(usize::try_from(table).ok()?)?;
    if input.len() != lwe_size || n == 0 {
        return None;
    }
    let start = Instant::now();
    let mut outputs: Vec<_> = offsets.iter().map(|_| key.new_lwe()).collect();
    let thread = rayon::current_thread_index()?;
    cpu.bootstrap_on(thread, input, acc, offsets, &mut outputs);
    let mut reply: Vec<u64> = outputs
        .iter()
        .flat_map(|o| o.as_ref().iter().copied())
        .collect();
    reply.push(start.elapsed().as_nanos() as u64);
    Some(reply)
}

/// Rank 0's remote slots: slot `s` is thread `slots[s].1` of rank
/// `slots[s].0`.
struct Slots {
    cluster: Arc<Cluster>,
    slots: Vec<(i32, i32)>,
    lwe_size: usize,
    /// Bootstraps sent, over all runs.
    sent: AtomicU64,
    /// A moving average of a worker's time per bootstrap, nanoseconds.
    compute_ns: AtomicU64,
}

impl Remote for Slots {
    fn bootstrap(
        &self,
        slot: usize,
        table: usize,
        offsets: &[u64],
        input: &[u64],
        outputs: &mut [LweCiphertextOwned<u64>],
    ) -> Result<(), Error> {
        let (rank, tag) = self.slots[slot];
        let mut job = Vec::with_capacity(2 + offsets.len() + input.len());
        job.extend([table as u64, offsets.len() as u64]);
        job.extend_from_slice(offsets);
        job.extend_from_slice(input);
        let deadline = Instant::now() + self.cluster.timeout;
        self.cluster.send(rank, tag, job, deadline)?;
        // The worker needs about as long as its last bootstraps took: sleep
        // through most of that before polling (fewer wake-ups on busy cores).
        let usual = self.compute_ns.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_nanos(usual / 10 * 9));
        let (mut reply, _) = self.cluster.receive(rank, tag, deadline)?;
        // The last word: the worker's time on this bootstrap.
        let took = reply.pop().unwrap_or(0);
        let usual = if usual == 0 {
            took
        } else {
            (7 * usual + took) / 8
        };
        self.compute_ns.store(usual, Ordering::Relaxed);
        if reply.len() != outputs.len() * self.lwe_size {
            return Err(Error::Rank {
                rank,
                reason: format!(
                    "could not bootstrap (table {table}; it replied {} words)",
                    reply.len()
                ),
            });
        }
        for (out, chunk) in outputs.iter_mut().zip(reply.chunks_exact(self.lwe_size)) {
            out.as_mut().copy_from_slice(chunk);
        }
        self.sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// Evaluates circuits on rank 0's threads and every worker's (see the
/// module documentation); made by [`Cluster::backend`].
pub struct MpiBackend<'a> {
    cpu: CpuBackend<'a>,
    /// Rank 0's own threads, for its share of a batch.
    local: CpuBackend<'a>,
    remote: Arc<Slots>,
    workers: Vec<usize>,
    /// The digest of the key the workers held when this was made.
    named: Digest,
}

impl<'a> MpiBackend<'a> {
    /// Calls `f(done, total)` after every bootstrap (as
    /// [`CpuBackend::with_progress`]).
    pub fn with_progress(mut self, f: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        self.cpu = self.cpu.with_progress(f);
        self
    }

    /// Stops a run soon after `flag` is set (as [`CpuBackend::with_cancel`]).
    pub fn with_cancel(mut self, flag: Arc<std::sync::atomic::AtomicBool>) -> Self {
        self.cpu = self.cpu.with_cancel(flag);
        self
    }

    /// Threads on rank 0 and on each worker (rank `i + 1` at index `i`).
    pub fn threads(&self) -> (usize, &[usize]) {
        (self.cpu.local_threads(), &self.workers)
    }

    fn cluster(&self) -> &Cluster {
        &self.remote.cluster
    }

    /// Bootstraps sent to workers so far.
    pub fn remote_bootstraps(&self) -> u64 {
        self.remote.sent.load(Ordering::Relaxed)
    }

    /// Evaluates `circuit` over all ranks and reports time and peak memory
    /// (`threads` in the report: all slots, local and remote).
    pub fn run(
        &self,
        circuit: &Circuit,
        inputs: &[Ciphertext],
    ) -> Result<(Vec<Ciphertext>, RunReport), Error> {
        let _one_run = self.cluster().run_lock.lock().unwrap();
        self.check_key()?;
        self.cpu.check_run(circuit, inputs)?;
        if !self.workers.is_empty() {
            let params = self.cpu.key().params();
            let tables: Vec<u64> = circuit
                .tables()
                .iter()
                .flat_map(|t| accumulator(params, t).into_container())
                .collect();
            let deadline = Instant::now() + self.cluster().timeout;
            for rank in 1..=self.workers.len() as i32 {
                self.cluster()
                    .send(rank, TAG_TABLES, tables.clone(), deadline)?;
            }
        }
        self.cpu.run(circuit, inputs)
    }

    /// Batch mode: `circuit` on each row of inputs, the rows scattered over
    /// the ranks in proportion to their threads (no traffic per bootstrap),
    /// each rank evaluating its rows with its own CPU backend; the output
    /// rows come back in order. A worker that sends no sign of life (one a
    /// second while it works) within the timeout gives [`Error::Rank`].
    pub fn run_batch(
        &self,
        circuit: &Circuit,
        rows: &[Vec<Ciphertext>],
    ) -> Result<Vec<Vec<Ciphertext>>, Error> {
        let _one_run = self.cluster().run_lock.lock().unwrap();
        self.check_key()?;
        for row in rows {
            self.cpu.check_run(circuit, row)?;
        }
        let weights: Vec<usize> = std::iter::once(self.cpu.local_threads())
            .chain(self.workers.iter().copied())
            .collect();
        let bounds = shares(rows.len(), &weights);
        let deadline = Instant::now() + self.cluster().timeout;
        for (w, pair) in bounds.windows(2).enumerate().skip(1) {
            let job = BatchJob {
                circuit: circuit.into(),
                rows: rows[pair[0]..pair[1]].to_vec(),
            };
            let bytes = codec()
                .serialize(&job)
                .map_err(|e| Error::Cluster(format!("cannot encode a batch: {e}")))?;
            self.cluster().send(w as i32, TAG_BATCH, bytes, deadline)?;
        }
        let mut out = batch_on(&self.local, circuit, &rows[..bounds[1]])?;
        for (w, pair) in bounds.windows(2).enumerate().skip(1) {
            let back = self.batch_reply(w as i32)?;
            if back.len() != pair[1] - pair[0] {
                return Err(Error::Rank {
                    rank: w as i32,
                    reason: format!("returned {} rows of {}", back.len(), pair[1] - pair[0]),
                });
            }
            out.extend(back);
        }
        Ok(out)
    }

    /// The workers must still hold this backend's key (see
    /// [`Cluster::share_key`]).
    fn check_key(&self) -> Result<(), Error> {
        match *self.cluster().shared.lock().unwrap() {
            Some((_, named)) if named == self.named => Ok(()),
            _ => Err(Error::Cluster(
                "the cluster's workers now hold another server key: share this one again and make a new backend".into(),
            )),
        }
    }

    /// Waits for `rank`'s batch reply, taking its signs of life meanwhile.
    fn batch_reply(&self, rank: i32) -> Result<Vec<Vec<Ciphertext>>, Error> {
        let timeout = self.cluster().timeout;
        let process = self.cluster().comm.0.process_at_rank(rank);
        loop {
            let (msg, status) = poll(
                || process.immediate_matched_probe(),
                Some(Instant::now() + timeout),
            )
            .ok_or_else(|| Error::Rank {
                rank,
                reason: format!("sent no sign of life within {timeout:?} of its batch"),
            })?;
            let bytes: Vec<u8> =
                receive_until(msg, status, Instant::now() + timeout).ok_or_else(|| {
                    Error::Rank {
                        rank,
                        reason: format!("stopped sending its batch reply for {timeout:?}"),
                    }
                })?;
            match status.tag() {
                TAG_ALIVE => continue,
                TAG_BATCH => {
                    let reply: Result<Vec<Vec<Ciphertext>>, String> =
                        codec().deserialize(&bytes).map_err(|e| Error::Rank {
                            rank,
                            reason: format!("sent a malformed batch reply: {e}"),
                        })?;
                    return reply.map_err(|reason| Error::Rank { rank, reason });
                }
                tag => {
                    return Err(Error::Rank {
                        rank,
                        reason: format!("sent an unexpected message (tag {tag}) during a batch"),
                    })
                }
            }
        }
    }
}

/// Bounds of contiguous shares of `n` rows by `weights`: share `i` is
/// `bounds[i]..bounds[i + 1]`.
fn shares(n: usize, weights: &[usize]) -> Vec<usize> {
    let total: usize = weights.iter().sum::<usize>().max(1);
    let mut bounds = vec![0];
    let mut acc = 0;
    for w in weights {
        acc += w;
        bounds.push(n * acc / total);
    }
    bounds
}

/// `circuit` on every row, the rows' bootstraps interleaved on `cpu`'s pool.
fn batch_on(
    cpu: &CpuBackend<'_>,
    circuit: &Circuit,
    rows: &[Vec<Ciphertext>],
) -> Result<Vec<Vec<Ciphertext>>, Error> {
    cpu.thread_pool().install(|| {
        rows.par_iter()
            .map(|row| cpu.run(circuit, row).map(|(out, _)| out))
            .collect()
    })
}

#[derive(Serialize, Deserialize)]
struct BatchJob {
    circuit: CircuitWire,
    rows: Vec<Vec<Ciphertext>>,
}

fn codec() -> impl Options {
    bincode::DefaultOptions::new().with_fixint_encoding()
}

/// A worker's batch: the reply, bincode of `Result<rows, message>`.
fn batch_job(cpu: &CpuBackend<'_>, data: &[u8]) -> Vec<u8> {
    let result: Result<Vec<Vec<Ciphertext>>, String> = codec()
        .deserialize::<BatchJob>(data)
        .map_err(|e| format!("malformed batch: {e}"))
        .and_then(|job| {
            let circuit = Circuit::from(job.circuit);
            for row in &job.rows {
                cpu.check_run(&circuit, row).map_err(|e| e.to_string())?;
            }
            batch_on(cpu, &circuit, &job.rows).map_err(|e| e.to_string())
        });
    codec().serialize(&result).unwrap_or_default()
}

impl Backend for MpiBackend<'_> {
    type Digit = Ciphertext;

    fn evaluate(&self, circuit: &Circuit, inputs: &[Ciphertext]) -> Result<Vec<Ciphertext>, Error> {
        Ok(self.run(circuit, inputs)?.0)
    }
}
