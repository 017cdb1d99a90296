//! `hearth-bench pbs`: one KS-PBS beside tfhe-rs shortint's on the same
//! parameters, and bootstraps per second by batch size.

use std::time::{Duration, Instant};

use hearth::backend::{Backend, CpuBackend};
use hearth::crypto::bootstrap::{accumulator, dense_slots, PbsScratch};
use hearth::{Ciphertext, CircuitBuilder, ClientKey, Error, Lut, ParameterSet, ServerKey};
use hearth_cli::options::Threads;
use tfhe::core_crypto::prelude::Fft;

use crate::plot::PlotOut;
use crate::report::JsonOut;

#[cfg(feature = "tfhe-rs")]
mod timed;

/// Median time of one KS-PBS through hearth's bootstrap on this thread.
pub struct RawPbs<'a> {
    server: &'a ServerKey,
    scratch: PbsScratch,
    fft: Fft,
    acc: tfhe::core_crypto::prelude::GlweCiphertextOwned<u64>,
    out: [tfhe::core_crypto::prelude::LweCiphertextOwned<u64>; 1],
    input: Vec<u64>,
}

impl<'a> RawPbs<'a> {
    pub fn new(client: &ClientKey, server: &'a ServerKey) -> Result<Self, Error> {
        let p = server.params();
        let fft = Fft::new(p.polynomial_size);
        let lut = Lut::negacyclic(p.pi, |x| x)?;
        Ok(RawPbs {
            server,
            scratch: PbsScratch::new(p, fft.as_view()),
            acc: accumulator(p, &dense_slots(lut.table())),
            out: [server.trivial(0)?.lwe().clone()],
            input: client.encrypt(1)?.lwe().as_ref().to_vec(),
            fft,
        })
    }

    pub fn once(&mut self) -> Duration {
        let t = Instant::now();
        self.scratch.input_mut().copy_from_slice(&self.input);
        self.server.bootstrap_input(
            &mut self.scratch,
            &self.acc,
            &[0],
            self.fft.as_view(),
            &mut self.out,
        );
        t.elapsed()
    }
}

/// Values are this many units apart: 2 on a set that only decodes spread
/// selectors (GATES_128: bits stored as 0 or 2), else 1.
fn spacing(params: &ParameterSet) -> i64 {
    if params.budgets.half == 0 {
        2
    } else {
        1
    }
}

/// A circuit of `n` independent bootstraps (identity on 0 and one step).
pub(crate) fn batch_circuit(
    params: &'static ParameterSet,
    n: usize,
) -> Result<hearth::Circuit, Error> {
    let mut b = CircuitBuilder::new(params);
    let s = spacing(params);
    let lut = Lut::negacyclic(params.pi, |x| x)?;
    for _ in 0..n {
        let x = b.input_with_step(0, s, s)?;
        let y = b.bootstrap(x, &lut)?;
        b.output(y)?;
    }
    Ok(b.build())
}

/// Throughput (PBS/s) of `n` independent bootstraps on `backend`, every
/// output checked; the wall time includes moving inputs and outputs.
fn throughput<B: Backend<Digit = Ciphertext>>(
    client: &ClientKey,
    backend: &B,
    n: usize,
) -> Result<(f64, Duration), Error> {
    let params = client.params();
    let circuit = batch_circuit(params, n)?;
    let s = spacing(params);
    let inputs = (0..n)
        .map(|i| client.encrypt(s * (i % 2) as i64))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    let out = backend.evaluate(&circuit, &inputs)?;
    let wall = start.elapsed();
    for (i, o) in out.iter().enumerate() {
        if client.decrypt(o)? != (s as u64) * (i % 2) as u64 {
            return Err(Error::Config("bench: a bootstrap decrypted wrongly".into()));
        }
    }
    Ok((n as f64 / wall.as_secs_f64(), wall))
}

/// [`throughput`] on a fresh cpu backend of `threads` threads.
pub(crate) fn cpu_throughput(
    client: &ClientKey,
    server: &ServerKey,
    threads: usize,
    n: usize,
) -> Result<(f64, Duration), Error> {
    let backend = CpuBackend::new(server, Some(threads))?;
    // A fresh pool's threads start asleep: one bootstrap first wakes them,
    // so a lone bootstrap finds the second thread to pair with.
    throughput(client, &backend, 1)?;
    throughput(client, &backend, n)
}

/// `hearth-bench pbs`: latency beside tfhe-rs shortint, then throughput
/// by batch size (its comparison needs the feature `tfhe-rs`).
pub fn pbs(
    params: &'static ParameterSet,
    engine: hearth::backend::Engine,
    threads: Threads,
    max_batch: usize,
    samples: usize,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    #[cfg(feature = "tfhe-rs")]
    return timed::pbs(params, engine, threads, max_batch, samples, json, plot);
    #[cfg(not(feature = "tfhe-rs"))]
    {
        let _ = (params, engine, threads, max_batch, samples, json, plot);
        Err(crate::tfhe::missing())
    }
}
