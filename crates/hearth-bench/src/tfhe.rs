//! tfhe-rs's side of the comparisons (feature `tfhe-rs`, on by default):
//! its keys on a thread pool, on the CPU or (feature `gpu`) as its
//! `CudaServerKey`.

#[cfg(feature = "tfhe-rs")]
use hearth::backend::Engine;
#[cfg(feature = "tfhe-rs")]
use hearth::backend::{no_gpu_reason, require_gpu};
use hearth::Error;

/// The error of a comparison with tfhe-rs in a build without them
/// (`--no-default-features`, as the test command builds this crate).
#[cfg(not(feature = "tfhe-rs"))]
pub fn missing() -> Error {
    Error::Config(
        "this build has no comparisons with tfhe-rs: build hearth-bench with its default \
         features (`cargo run --release -p hearth-bench -- ...`)"
            .into(),
    )
}

/// The error of a comparison that timed no tfhe-rs set (a build without
/// them: see [`missing`]).
pub fn missing_comparison() -> Error {
    Error::Config("no tfhe-rs set was timed: build hearth-bench with its default features".into())
}

/// The optimisation level this binary was built at (`build.rs`).
pub const OPT_LEVEL: &str = env!("HEARTH_BENCH_OPT_LEVEL");

/// tfhe-rs's generic integer code is compiled in this crate: below
/// opt-level 3 (the release profile builds it at 1) tfhe-rs runs a few
/// percent slower than it can, so say so before timing it.
#[cfg(feature = "tfhe-rs")]
fn warn_unless_fully_optimised() {
    if OPT_LEVEL != "3" {
        eprintln!(
            "warning: hearth-bench is built at opt-level {OPT_LEVEL}: tfhe-rs's generic code \
             compiled here runs a few percent slower than at 3; for timings beside tfhe-rs \
             run `cargo timing -- ARGS` (docs/benchmarks.md)"
        );
    }
}

#[cfg(feature = "tfhe-rs")]
/// tfhe-rs's two CPU parameter sets for 2-bit blocks: the default of
/// `ConfigBuilder::default()` (64-bit key switch) and the one its own CPU
/// benchmark pages use (32-bit key switch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfheSet {
    /// `PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128`.
    KsPbs,
    /// `PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128`.
    Ks32,
}

#[cfg(feature = "tfhe-rs")]
impl TfheSet {
    /// Its short name in tables.
    pub fn name(self) -> &'static str {
        match self {
            TfheSet::KsPbs => "KS_PBS",
            TfheSet::Ks32 => "KS32",
        }
    }
}

#[cfg(feature = "tfhe-rs")]
/// [`tfhe_pool`] on each set a comparison times: both on the CPU, the
/// default alone on the GPU (tfhe-rs's GPU keys have sets of their own).
pub fn tfhe_pools(
    threads: usize,
    engine: Engine,
) -> Result<Vec<(TfheSet, tfhe::ClientKey, TfhePool)>, Error> {
    let sets: &[TfheSet] = match engine {
        Engine::Gpu => &[TfheSet::KsPbs],
        _ => &[TfheSet::KsPbs, TfheSet::Ks32],
    };
    sets.iter()
        .map(|&set| {
            let (ck, pool) = tfhe_pool_on(threads, engine, set)?;
            Ok((set, ck, pool))
        })
        .collect()
}

#[cfg(feature = "tfhe-rs")]
/// [`tfhe_pool_on`] on tfhe-rs's default set.
pub fn tfhe_pool(threads: usize, engine: Engine) -> Result<(tfhe::ClientKey, TfhePool), Error> {
    tfhe_pool_on(threads, engine, TfheSet::KsPbs)
}

#[cfg(feature = "tfhe-rs")]
/// tfhe-rs keys on `set` and a pool of `threads` workers that each hold
/// its server key (tfhe-rs keeps the key per thread, and its operations
/// fan out over the current pool): run tfhe-rs inside `pool.install`. With
/// `engine` gpu, the key is tfhe-rs's `CudaServerKey`, so its integer
/// operations run on the GPU (`HEARTH_REQUIRE_GPU` rules as for hearth's
/// own gpu backend).
pub fn tfhe_pool_on(
    threads: usize,
    engine: Engine,
    set: TfheSet,
) -> Result<(tfhe::ClientKey, TfhePool), Error> {
    warn_unless_fully_optimised();
    eprintln!("generating tfhe-rs keys ({})...", set.name());
    let config = match set {
        TfheSet::KsPbs => tfhe::ConfigBuilder::default().build(),
        TfheSet::Ks32 => tfhe::ConfigBuilder::with_custom_parameters(
            tfhe::shortint::parameters::PARAM_MESSAGE_2_CARRY_2_KS32_PBS_TUNIFORM_2M128,
        )
        .build(),
    };
    let ck = tfhe::ClientKey::generate(config);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(e.to_string()))?;
    if engine == Engine::Gpu {
        if let Some(set) = gpu_key(&ck)? {
            pool.broadcast(|_| set());
            pool.install(set);
            return Ok((ck, TfhePool(pool)));
        }
    }
    let sk = tfhe::ServerKey::new(&ck);
    pool.broadcast(|_| tfhe::set_server_key(sk.clone()));
    pool.install(|| tfhe::set_server_key(sk.clone()));
    Ok((ck, TfhePool(pool)))
}

#[cfg(feature = "tfhe-rs")]
/// The pool of [`tfhe_pool`]: dropping it drops each worker's tfhe-rs key
/// while the process is still running. Left to the workers' own exit, a
/// `CudaServerKey` would be freed after the CUDA driver has begun to shut
/// down, and tfhe-rs aborts on that error ("driver shutting down").
pub struct TfhePool(rayon::ThreadPool);

#[cfg(feature = "tfhe-rs")]
impl std::ops::Deref for TfhePool {
    type Target = rayon::ThreadPool;

    fn deref(&self) -> &rayon::ThreadPool {
        &self.0
    }
}

#[cfg(feature = "tfhe-rs")]
impl Drop for TfhePool {
    fn drop(&mut self) {
        self.0.broadcast(|_| tfhe::unset_server_key());
    }
}

#[cfg(feature = "tfhe-rs")]
/// A function that makes tfhe-rs's `CudaServerKey` for `ck` the current
/// thread's key (call it on every thread that runs tfhe-rs), or `None`
/// where no GPU can be used (said on stderr; an error with
/// `HEARTH_REQUIRE_GPU`).
#[cfg(feature = "gpu")]
pub fn gpu_key(ck: &tfhe::ClientKey) -> Result<Option<impl Fn() + Sync>, Error> {
    if let Some(why) = no_gpu_reason() {
        require_gpu(why)?;
        eprintln!("hearth: tfhe-rs on the gpu: {why}; on the cpu");
        return Ok(None);
    }
    let key = tfhe::CompressedServerKey::new(ck).decompress_to_gpu();
    Ok(Some(move || tfhe::set_server_key(key.clone())))
}

#[cfg(feature = "tfhe-rs")]
/// Without the gpu feature, tfhe-rs runs on the CPU (said on stderr; an
/// error with `HEARTH_REQUIRE_GPU`).
#[cfg(not(feature = "gpu"))]
pub fn gpu_key(_: &tfhe::ClientKey) -> Result<Option<fn()>, Error> {
    let why = no_gpu_reason().unwrap_or_default();
    require_gpu(why)?;
    eprintln!("hearth: tfhe-rs on the gpu: {why}; on the cpu");
    Ok(None)
}
