//! The GPU backend (feature `gpu`): each launch of a [`Plan`] is three
//! kernels on one CUDA stream — the bootstrap inputs combined from stored
//! ciphertexts (`combine.cu`, hearth's only CUDA code), tfhe-rs's batched key
//! switch (its GEMM form from [`GEMM_KEYSWITCH_MIN`] bootstraps), and
//! tfhe-rs's bootstrap with many-LUT extraction (classical, or multi-bit
//! for a set with a grouping factor such as `DIGITS_MB4_128`), writing its
//! outputs straight into their slots. A run allocates and uploads once: the
//! inputs, the tables and the plan's packed rows ([`Plan::packed`]); launches
//! then only queue kernels, without waiting. Ciphertexts stay on the device
//! from the inputs' upload to the outputs' download.
//!
//! Same semantics as [`super::CpuBackend`]: the keys are the server key's
//! (converted once by [`GpuKey::new`] and kept on the device), the key
//! switch is the same, the modulus switch is the same (the classical
//! bootstrap's centered one, `PBS_MS_REDUCTION_T_CENTERED`; the multi-bit
//! bootstrap's own), and many-LUT outputs are read at the same monomial
//! degrees. Ciphertexts differ from the CPU's only by the rounding
//! of the two FFTs, inside the noise the budgets allow for.
//!
//! CUDA errors inside tfhe-rs's code abort the process (its convention);
//! hearth checks a run's device memory, tfhe-rs's scratch included, before
//! it allocates ([`super::device_memory`]) and returns [`Error::TooLarge`]
//! rather than fail there.

use std::ffi::{c_void, CStr};
use std::sync::Arc;

use tfhe::core_crypto::gpu::vec::{CudaVec, GpuIndex};
use tfhe::core_crypto::gpu::{
    convert_lwe_keyswitch_key_async, convert_lwe_multi_bit_programmable_bootstrap_key_async,
    convert_lwe_programmable_bootstrap_key_async, keyswitch_async, CudaStreams,
};
use tfhe::core_crypto::prelude::*;
use tfhe_cuda_backend::bindings::{
    cleanup_cuda_multi_bit_programmable_bootstrap_64, cleanup_cuda_programmable_bootstrap_64,
    cuda_keyswitch_gemm_64_64_async, cuda_multi_bit_programmable_bootstrap_64_async,
    cuda_programmable_bootstrap_64_async, scratch_cuda_multi_bit_programmable_bootstrap_64_async,
    scratch_cuda_programmable_bootstrap_64_async, PBS_MS_REDUCTION_T_CENTERED,
};
use tfhe_cuda_backend::cuda_bind::{cuda_check_valid_malloc, cuda_is_available};

use super::batch::{BatchExecutor, Batched, Launch, Packed, Plan, Rows};
use super::device_memory::DeviceNeeds;
use crate::circuit::Circuit;
use crate::crypto::bootstrap::accumulator;
use crate::crypto::keys::{Ciphertext, KeyId, ServerKey};
use crate::crypto::params::{ParameterSet, ParamsId};
use crate::error::Error;

extern "C" {
    fn hearth_combine_rows_64(
        stream: *mut c_void,
        gpu_index: u32,
        out: *mut u64,
        store: *const u64,
        start: *const u32,
        slot: *const u32,
        weight: *const u64,
        constant: *const u64,
        rows: u32,
        lwe_size: u32,
        delta: u64,
    ) -> i32;
    fn hearth_cuda_free_memory(gpu_index: u32, free_bytes: *mut u64) -> i32;
    fn hearth_cuda_error_string(code: i32) -> *const std::ffi::c_char;
}

/// Whether a CUDA device and driver can be used (device 0).
pub fn gpu_available() -> bool {
    // SAFETY: a plain query (cudaSetDevice(0)); fails cleanly without a driver.
    unsafe { cuda_is_available() != 0 }
}

fn cuda_error(code: i32, what: &str) -> Error {
    // SAFETY: cudaGetErrorString returns a static C string for any code.
    let msg = unsafe { CStr::from_ptr(hearth_cuda_error_string(code)) };
    Error::Gpu(format!("CUDA error in {what}: {}", msg.to_string_lossy()))
}

fn ptr<T: Numeric>(v: &CudaVec<T>) -> *mut c_void {
    v.ptr[0]
}

/// Device memory for `len` values of `T`, allocated in stream order (no
/// wait), or [`Error::TooLarge`].
fn device_vec<T: Numeric>(
    len: usize,
    streams: &CudaStreams,
    what: &str,
) -> Result<CudaVec<T>, Error> {
    let bytes = (len.max(1) * std::mem::size_of::<T>()) as u64;
    // SAFETY: a query of free memory on device 0.
    if !unsafe { cuda_check_valid_malloc(bytes, streams.gpu_indexes[0].get()) } {
        return Err(Error::TooLarge {
            what: format!("{what} (bytes of GPU memory)"),
            size: bytes,
            limit: 0,
        });
    }
    // SAFETY: used only by work queued later on the same stream.
    Ok(unsafe { CudaVec::new_async(len.max(1), streams, 0) })
}

/// `src` copied to new device memory, in stream order. The caller keeps
/// `src` alive until the stream has been synchronised.
fn upload<T: Numeric>(src: &[T], streams: &CudaStreams, what: &str) -> Result<CudaVec<T>, Error> {
    let mut v = device_vec(src.len(), streams, what)?;
    if !src.is_empty() {
        // SAFETY: every `src` handed here outlives the copy (the callers
        // synchronise, or keep the source in `RunBuffers::packed`).
        unsafe { v.copy_from_cpu_async(src, streams, 0) };
    }
    Ok(v)
}

/// A server key on the GPU: the bootstrap key as tfhe-rs's CUDA backend
/// lays it out, the key-switch key, and the stream they run on.
pub struct GpuKey {
    params: ParamsId,
    key_id: KeyId,
    streams: CudaStreams,
    bsk: DeviceBsk,
    ksk: CudaVec<u64>,
}

/// The bootstrap key on the device: the classical one in the Fourier
/// domain, or the multi-bit one (tfhe-rs's CUDA multi-bit bootstrap takes
/// its GGSWs in the standard domain and forms each group's product in the
/// Fourier domain as it goes).
enum DeviceBsk {
    Classic(CudaVec<f64>),
    MultiBit { key: CudaVec<u64>, grouping: u32 },
}

// SAFETY: the stream and device buffers are only used through `&self`
// methods that queue work in order on the one stream; CUDA streams may be
// used from any host thread.
unsafe impl Send for GpuKey {}
unsafe impl Sync for GpuKey {}

impl GpuKey {
    /// Converts `key` for GPU 0, or says why it cannot.
    pub fn new(key: &ServerKey) -> Result<Self, Error> {
        if !gpu_available() {
            return Err(Error::Gpu(
                "no usable CUDA device (no GPU, or no driver)".into(),
            ));
        }
        let p = key.params();
        let Some(keyswitch_key) = key.native_keyswitch_key() else {
            return Err(Error::Gpu(format!(
                "{}: its 32-bit key switch (KS32) does not run on the GPU backend yet",
                p.name
            )));
        };
        let streams = CudaStreams::new_single_gpu(GpuIndex::new(0));
        let host_bsk = key.bootstrap_key().as_ref();
        let bsk = match p.grouping_factor {
            None => {
                let len = lwe_bootstrap_key_size(
                    p.lwe_dimension,
                    p.glwe_dimension.to_glwe_size(),
                    p.polynomial_size,
                    p.pbs_level,
                );
                let mut bsk = device_vec::<f64>(len, &streams, "the bootstrap key")?;
                // SAFETY: the host key outlives the copy (synchronised below).
                unsafe {
                    convert_lwe_programmable_bootstrap_key_async(
                        &streams,
                        &mut bsk,
                        host_bsk,
                        p.lwe_dimension,
                        p.glwe_dimension,
                        p.pbs_level,
                        p.polynomial_size,
                    )
                };
                DeviceBsk::Classic(bsk)
            }
            Some(grouping) => {
                let len = lwe_multi_bit_bootstrap_key_size(
                    p.lwe_dimension,
                    p.glwe_dimension.to_glwe_size(),
                    p.polynomial_size,
                    p.pbs_level,
                    grouping,
                )
                .map_err(|e| Error::Gpu(format!("{}: {e}", p.name)))?;
                if len != host_bsk.len() {
                    return Err(Error::Internal(format!(
                        "{}: a multi-bit bootstrap key of {} words, not {len}",
                        p.name,
                        host_bsk.len()
                    )));
                }
                let mut bsk = device_vec::<u64>(len, &streams, "the bootstrap key")?;
                // SAFETY: as above; the lengths are equal (checked).
                unsafe {
                    convert_lwe_multi_bit_programmable_bootstrap_key_async(
                        &streams,
                        &mut bsk,
                        host_bsk,
                        p.lwe_dimension,
                        p.glwe_dimension,
                        p.pbs_level,
                        p.polynomial_size,
                        grouping,
                    )
                };
                DeviceBsk::MultiBit {
                    key: bsk,
                    grouping: grouping.0 as u32,
                }
            }
        };
        let mut ksk =
            device_vec::<u64>(keyswitch_key.as_ref().len(), &streams, "the key-switch key")?;
        // SAFETY: the host key outlives the copy (synchronised below).
        unsafe { convert_lwe_keyswitch_key_async(&streams, &mut ksk, keyswitch_key.as_ref()) };
        streams.synchronize();
        Ok(GpuKey {
            params: p.id,
            key_id: key.key_id(),
            streams,
            bsk,
            ksk,
        })
    }

    fn params(&self) -> &'static ParameterSet {
        self.params.params()
    }
}

/// The [`Batched`] backend on a GPU.
pub type GpuBackend = Batched<GpuBatch>;

impl GpuBackend {
    /// A GPU backend for `key`'s ciphertexts (its keys converted once).
    pub fn for_key(key: &ServerKey) -> Result<Self, Error> {
        Ok(Batched::new(GpuBatch::new(Arc::new(GpuKey::new(key)?))))
    }
}

/// Launches of at least this many bootstraps key-switch with tfhe-rs's
/// GEMM key switch; smaller ones with its per-ciphertext kernel, which
/// tfhe-rs documents as the faster one up to 128 ciphertexts on an H100.
pub const GEMM_KEYSWITCH_MIN: usize = 128;

/// The plan's packed rows and tables on the device, uploaded once per run.
struct DeviceRows {
    start: CudaVec<u32>,
    slot: CudaVec<u32>,
    weight: CudaVec<u64>,
    constant: CudaVec<u64>,
    table: CudaVec<u64>,
}

impl DeviceRows {
    fn upload(packed: &Packed, s: &CudaStreams) -> Result<Self, Error> {
        let rows = &packed.rows;
        Ok(DeviceRows {
            start: upload(&rows.start, s, "row starts")?,
            slot: upload(&rows.slot, s, "row slots")?,
            weight: upload(&rows.weight, s, "row weights")?,
            constant: upload(&rows.constant, s, "row constants")?,
            table: upload(&packed.table, s, "table indexes")?,
        })
    }
}

/// Buffers of one run on the device.
struct RunBuffers {
    /// Every stored ciphertext (big key), `slots x (kN + 1)`.
    store: CudaVec<u64>,
    /// Bootstrap inputs of the current launch, then their key switches.
    input: CudaVec<u64>,
    small: CudaVec<u64>,
    /// `0, 1, .., widest - 1`: tfhe-rs's index lists (in place, in order).
    identity: CudaVec<u64>,
    /// The circuit's tables as accumulators.
    accumulators: CudaVec<u64>,
    /// Every launch's rows and tables.
    rows: DeviceRows,
    /// Their host copy (the source of copies still queued) and where each
    /// launch starts in it.
    packed: Packed,
    /// Launches queued so far.
    next: usize,
    /// tfhe-rs's bootstrap scratch for the widest launch.
    pbs: *mut i8,
}

/// A [`BatchExecutor`] on a [`GpuKey`].
pub struct GpuBatch {
    key: Arc<GpuKey>,
    run: Option<RunBuffers>,
}

// SAFETY: the run's raw scratch pointer is only touched through `&mut self`.
unsafe impl Send for GpuBatch {}

/// Free memory of device 0, in bytes.
fn free_memory() -> Result<u64, Error> {
    let mut free = 0u64;
    // SAFETY: writes one u64.
    let code = unsafe { hearth_cuda_free_memory(0, &mut free) };
    if code != 0 {
        return Err(cuda_error(code, "querying free memory"));
    }
    Ok(free)
}

impl GpuBatch {
    /// An executor on `key` (shared: several executors may use one key).
    pub fn new(key: Arc<GpuKey>) -> Self {
        GpuBatch { key, run: None }
    }

    fn big_size(&self) -> usize {
        self.key.params().big_lwe_dimension().to_lwe_size().0
    }

    /// tfhe-rs's bootstrap scratch for `count` bootstraps (classical or
    /// multi-bit, as the key): its descriptor and size in bytes. With
    /// `allocate` false no device memory is taken (only the host
    /// descriptor, to release with [`Self::cleanup`]).
    fn scratch(&self, count: usize, allocate: bool) -> (*mut i8, u64) {
        let p = self.key.params();
        let s = &self.key.streams;
        let mut buffer: *mut i8 = std::ptr::null_mut();
        // SAFETY: tfhe-rs writes its descriptor into `buffer`.
        let bytes = unsafe {
            match self.key.bsk {
                DeviceBsk::Classic(_) => scratch_cuda_programmable_bootstrap_64_async(
                    s.ptr[0],
                    s.gpu_indexes[0].get(),
                    &mut buffer,
                    p.lwe_dimension.0 as u32,
                    p.glwe_dimension.0 as u32,
                    p.polynomial_size.0 as u32,
                    p.pbs_level.0 as u32,
                    count as u32,
                    allocate,
                    PBS_MS_REDUCTION_T_CENTERED,
                ),
                DeviceBsk::MultiBit { .. } => {
                    scratch_cuda_multi_bit_programmable_bootstrap_64_async(
                        s.ptr[0],
                        s.gpu_indexes[0].get(),
                        &mut buffer,
                        p.glwe_dimension.0 as u32,
                        p.polynomial_size.0 as u32,
                        p.pbs_level.0 as u32,
                        count as u32,
                        allocate,
                    )
                }
            }
        };
        (buffer, bytes)
    }

    /// Releases a descriptor made by [`Self::scratch`] and its memory.
    fn cleanup(&self, buffer: &mut *mut i8) {
        let s = &self.key.streams;
        // SAFETY: `buffer` came from `scratch` on this key (same kind).
        unsafe {
            match self.key.bsk {
                DeviceBsk::Classic(_) => {
                    cleanup_cuda_programmable_bootstrap_64(s.ptr[0], s.gpu_indexes[0].get(), buffer)
                }
                DeviceBsk::MultiBit { .. } => cleanup_cuda_multi_bit_programmable_bootstrap_64(
                    s.ptr[0],
                    s.gpu_indexes[0].get(),
                    buffer,
                ),
            }
        }
    }

    /// Bytes of tfhe-rs's bootstrap scratch for `count` bootstraps, as its
    /// scratch function reports without allocating device memory.
    fn scratch_bytes(&self, count: usize) -> u64 {
        let (mut probe, bytes) = self.scratch(count, false);
        self.cleanup(&mut probe);
        bytes
    }

    /// Enqueues rows `first..first + len` of the run's packed rows,
    /// combined from the store, into `out`.
    fn combine(
        &self,
        run: &RunBuffers,
        first: usize,
        len: usize,
        out: *mut c_void,
    ) -> Result<(), Error> {
        let s = &self.key.streams;
        let rows = &run.rows;
        // SAFETY: every pointer is a live device buffer; rows `first..first
        // + len` exist in the packed arrays, whose term indexes count from
        // their first row, so only the per-row arrays are offset.
        let code = unsafe {
            hearth_combine_rows_64(
                s.ptr[0],
                s.gpu_indexes[0].get(),
                out.cast(),
                ptr(&run.store).cast(),
                ptr(&rows.start).cast::<u32>().add(first),
                ptr(&rows.slot).cast(),
                ptr(&rows.weight).cast(),
                ptr(&rows.constant).cast::<u64>().add(first),
                len as u32,
                self.big_size() as u32,
                self.key.params().delta(),
            )
        };
        if code != 0 {
            return Err(cuda_error(code, "combining bootstrap inputs"));
        }
        Ok(())
    }

    /// Queues one launch: combine, key switch, bootstrap into the store.
    fn enqueue(&self, run: &mut RunBuffers, launch: &Launch) -> Result<(), Error> {
        let p = self.key.params();
        let s = &self.key.streams;
        let n = launch.len();
        let first = *run
            .packed
            .first_row
            .get(run.next)
            .ok_or_else(|| Error::Internal("more launches than the plan has".into()))?;
        run.next += 1;
        self.combine(run, first, n, ptr(&run.input))?;
        // Output j of bootstrap i goes to slot first + j * n + i: tfhe-rs
        // writes many-LUT output j of sample i at out + (j * n + i) * size.
        let out = ptr(&run.store)
            .cast::<u64>()
            .wrapping_add(launch.first as usize * self.big_size());
        let box_size = (p.polynomial_size.0 >> (p.pi - 1)) as u64;
        // SAFETY: buffers sized for the widest launch; `out` has room for
        // outputs x n ciphertexts (the plan's block for this launch); the
        // launch's tables are rows `first..first + n` of the packed tables.
        unsafe {
            if n >= GEMM_KEYSWITCH_MIN {
                cuda_keyswitch_gemm_64_64_async(
                    s.ptr[0],
                    s.gpu_indexes[0].get(),
                    ptr(&run.small),
                    ptr(&run.identity),
                    ptr(&run.input),
                    ptr(&run.identity),
                    ptr(&self.key.ksk),
                    p.big_lwe_dimension().0 as u32,
                    p.lwe_dimension.0 as u32,
                    p.ks_base_log.0 as u32,
                    p.ks_level.0 as u32,
                    n as u32,
                    true,
                );
            } else {
                keyswitch_async(
                    s,
                    &mut run.small,
                    &run.identity,
                    &run.input,
                    &run.identity,
                    p.big_lwe_dimension(),
                    p.lwe_dimension,
                    &self.key.ksk,
                    p.ks_base_log,
                    p.ks_level,
                    n as u32,
                );
            }
            let tables = ptr(&run.rows.table).cast::<u64>().add(first).cast();
            let stride = (launch.stride * box_size) as u32;
            match &self.key.bsk {
                DeviceBsk::Classic(bsk) => cuda_programmable_bootstrap_64_async(
                    s.ptr[0],
                    s.gpu_indexes[0].get(),
                    out.cast(),
                    ptr(&run.identity),
                    ptr(&run.accumulators),
                    tables,
                    ptr(&run.small),
                    ptr(&run.identity),
                    ptr(bsk),
                    run.pbs,
                    p.lwe_dimension.0 as u32,
                    p.glwe_dimension.0 as u32,
                    p.polynomial_size.0 as u32,
                    p.pbs_base_log.0 as u32,
                    p.pbs_level.0 as u32,
                    n as u32,
                    launch.outputs,
                    stride,
                ),
                DeviceBsk::MultiBit { key, grouping } => {
                    cuda_multi_bit_programmable_bootstrap_64_async(
                        s.ptr[0],
                        s.gpu_indexes[0].get(),
                        out.cast(),
                        ptr(&run.identity),
                        ptr(&run.accumulators),
                        tables,
                        ptr(&run.small),
                        ptr(&run.identity),
                        ptr(key),
                        run.pbs,
                        p.lwe_dimension.0 as u32,
                        p.glwe_dimension.0 as u32,
                        p.polynomial_size.0 as u32,
                        *grouping,
                        p.pbs_base_log.0 as u32,
                        p.pbs_level.0 as u32,
                        n as u32,
                        launch.outputs,
                        stride,
                    )
                }
            }
        }
        Ok(())
    }

    fn release(&mut self) {
        if let Some(mut run) = self.run.take() {
            self.key.streams.synchronize();
            self.cleanup(&mut run.pbs);
        }
    }
}

impl Drop for GpuBatch {
    fn drop(&mut self) {
        self.release();
    }
}

impl BatchExecutor for GpuBatch {
    type Digit = Ciphertext;

    fn start(
        &mut self,
        circuit: &Circuit,
        plan: &Plan,
        inputs: &[Ciphertext],
    ) -> Result<(), Error> {
        self.release();
        super::check_run(circuit, self.key.params, self.key.key_id, inputs)?;
        let p = self.key.params();
        let s = &self.key.streams;
        let big = self.big_size();
        let widest = plan.widest().max(plan.outputs.len()).max(1);
        let packed = plan.packed();
        // Everything the run allocates, checked at once against free
        // memory: tfhe-rs aborts the process on a failed allocation.
        DeviceNeeds::of_run(
            p,
            plan,
            &packed,
            circuit.tables().len(),
            self.scratch_bytes(widest),
        )
        .check(free_memory()?)?;
        let store = device_vec::<u64>(plan.slots.max(1) * big, s, "the run's ciphertexts")?;
        let flat: Vec<u64> = inputs
            .iter()
            .flat_map(|ct| ct.lwe().as_ref().iter().copied())
            .collect();
        if !flat.is_empty() {
            // SAFETY: `flat` lives until the synchronisation at the end of start.
            unsafe {
                tfhe_cuda_backend::cuda_bind::cuda_memcpy_async_to_gpu(
                    ptr(&store),
                    flat.as_ptr().cast(),
                    (flat.len() * 8) as u64,
                    s.ptr[0],
                    s.gpu_indexes[0].get(),
                );
            }
        }
        let input = device_vec::<u64>(widest * big, s, "bootstrap inputs")?;
        let small = device_vec::<u64>(
            widest * p.lwe_dimension.to_lwe_size().0,
            s,
            "key-switched inputs",
        )?;
        let identity = upload(&(0..widest as u64).collect::<Vec<_>>(), s, "index lists")?;
        let accs: Vec<u64> = circuit
            .tables()
            .iter()
            .flat_map(|t| accumulator(p, t).into_container())
            .collect();
        let accumulators = upload(&accs, s, "lookup tables")?;
        let rows = DeviceRows::upload(&packed, s)?;
        // tfhe-rs's scratch for `widest` bootstraps (its size was part of
        // the check above).
        let (pbs, _) = self.scratch(widest, true);
        // The uploads above read host vectors: wait before they go.
        s.synchronize();
        self.run = Some(RunBuffers {
            store,
            input,
            small,
            identity,
            accumulators,
            rows,
            packed,
            next: 0,
            pbs,
        });
        Ok(())
    }

    fn launch(&mut self, _circuit: &Circuit, launch: &Launch) -> Result<(), Error> {
        let mut run = self
            .run
            .take()
            .ok_or_else(|| Error::Internal("launch before start".into()))?;
        let result = self.enqueue(&mut run, launch);
        self.run = Some(run);
        result
    }

    fn finish(&mut self, outputs: &Rows) -> Result<Vec<Ciphertext>, Error> {
        let run = self
            .run
            .take()
            .ok_or_else(|| Error::Internal("finish before start".into()))?;
        let s = &self.key.streams;
        let big = self.big_size();
        let first = *run.packed.first_row.last().expect("the outputs' entry");
        let buf = device_vec::<u64>(outputs.len().max(1) * big, s, "the outputs")?;
        let combined = self.combine(&run, first, outputs.len(), ptr(&buf));
        self.run = Some(run);
        combined?;
        let mut host = vec![0u64; outputs.len() * big];
        if !host.is_empty() {
            // SAFETY: `host` has the size of the rows copied; synchronised below.
            unsafe { buf.copy_to_cpu_async(&mut host, s, 0) };
        }
        s.synchronize();
        let out = host
            .chunks_exact(big)
            .map(|c| {
                let lwe =
                    LweCiphertext::from_container(c.to_vec(), CiphertextModulus::new_native());
                Ciphertext::from_lwe(self.key.params, self.key.key_id, lwe)
            })
            .collect();
        self.release();
        Ok(out)
    }
}
