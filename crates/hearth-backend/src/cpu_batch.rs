//! The batched schedule on the CPU: each launch of a [`Plan`] runs as one
//! parallel loop over its bootstraps, on the [`CpuBackend`]'s pool, keys and
//! buffers. It computes exactly what [`CpuBackend`] computes (same key
//! switch, modulus switch, blind rotation and extractions, so the same
//! ciphertexts bit for bit); CI checks the GPU's schedule with it.

use rayon::prelude::*;
use tfhe::core_crypto::prelude::*;

use super::batch::{BatchExecutor, Launch, Plan, Rows};
use super::CpuBackend;
use crate::circuit::Circuit;
use crate::crypto::bootstrap::accumulator;
use crate::crypto::keys::Ciphertext;
use crate::error::Error;

/// A [`BatchExecutor`] on a [`CpuBackend`]: storage is one flat buffer of
/// ciphertexts.
pub struct CpuBatch<'k> {
    cpu: CpuBackend<'k>,
    store: Vec<u64>,
    accumulators: Vec<GlweCiphertextOwned<u64>>,
}

impl<'k> CpuBatch<'k> {
    /// An executor on `cpu`'s thread pool, keys and buffers.
    pub fn new(cpu: CpuBackend<'k>) -> Self {
        CpuBatch {
            cpu,
            store: Vec::new(),
            accumulators: Vec::new(),
        }
    }

    fn lwe_size(&self) -> usize {
        self.cpu.key.params().big_lwe_dimension().to_lwe_size().0
    }

    /// Row `r` of `rows` on the stored values, into `out`.
    fn combine_into(&self, rows: &Rows, r: usize, out: &mut [u64]) {
        let size = out.len();
        out.fill(0);
        for (slot, w) in rows.terms(r) {
            let src = &self.store[slot as usize * size..(slot as usize + 1) * size];
            super::add_scaled(out, src, w);
        }
        super::add_constant(out, rows.constant[r], self.cpu.key.params().delta());
    }
}

impl BatchExecutor for CpuBatch<'_> {
    type Digit = Ciphertext;

    fn start(
        &mut self,
        circuit: &Circuit,
        plan: &Plan,
        inputs: &[Ciphertext],
    ) -> Result<(), Error> {
        self.cpu.check_run(circuit, inputs)?;
        let size = self.lwe_size();
        self.store = vec![0; plan.slots * size];
        for (i, ct) in inputs.iter().enumerate() {
            self.store[i * size..(i + 1) * size].copy_from_slice(ct.lwe().as_ref());
        }
        let params = self.cpu.key.params();
        self.accumulators = circuit
            .tables()
            .iter()
            .map(|t| accumulator(params, t))
            .collect();
        Ok(())
    }

    fn launch(&mut self, _circuit: &Circuit, launch: &Launch) -> Result<(), Error> {
        let key = self.cpu.key;
        let offsets: Vec<u64> = (0..launch.outputs as u64)
            .map(|j| j * launch.stride)
            .collect();
        let this = &*self;
        // A multi-bit bootstrap of a level narrower than the pool takes
        // the idle threads.
        let share = (self.cpu.threads() / launch.len().max(1)).max(1);
        let results: Vec<Vec<LweCiphertextOwned<u64>>> = self.cpu.pool.install(|| {
            (0..launch.len())
                .into_par_iter()
                .map(|i| {
                    let thread = rayon::current_thread_index().expect("runs on the backend's pool");
                    let mut scratch = this.cpu.scratch_of(thread);
                    this.combine_into(&launch.rows, i, scratch.input_mut());
                    scratch.set_threads(share);
                    let mut outs: Vec<_> = offsets.iter().map(|_| key.new_lwe()).collect();
                    key.bootstrap_input(
                        &mut scratch,
                        &this.accumulators[launch.table[i] as usize],
                        &offsets,
                        this.cpu.fft.as_view(),
                        &mut outs,
                    );
                    outs
                })
                .collect()
        });
        let size = self.lwe_size();
        for (i, outs) in results.into_iter().enumerate() {
            for (j, lwe) in outs.into_iter().enumerate() {
                let s = launch.output_slot(i, j) as usize;
                self.store[s * size..(s + 1) * size].copy_from_slice(lwe.as_ref());
            }
        }
        Ok(())
    }

    fn finish(&mut self, outputs: &Rows) -> Result<Vec<Ciphertext>, Error> {
        let key = self.cpu.key;
        let out = (0..outputs.len())
            .map(|r| {
                let mut lwe = key.new_lwe();
                self.combine_into(outputs, r, lwe.as_mut());
                Ciphertext::from_lwe(key.params().id, key.key_id(), lwe)
            })
            .collect();
        self.store = Vec::new();
        Ok(out)
    }
}
