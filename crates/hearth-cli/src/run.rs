//! `hearth run`: a program on a bundle of encrypted inputs, with the
//! server key only (the server side).

use std::path::PathBuf;
use std::time::Instant;

use hearth::backend::Engine;
use hearth::{Bundle, Error, ServerKey, ServerKeySizes};
use hearth_cli::backend;
use hearth_cli::options::{BackendArg, MaxMemory, Threads};
use hearth_cli::progress::pbs_bar;

use crate::describe::{file_len, load_program, mib};

/// `hearth run`.
#[derive(clap::Args)]
pub struct Args {
    /// The server key (server.key, compressed or not).
    #[arg(long, value_name = "FILE")]
    server_key: PathBuf,
    /// The program file.
    #[arg(long, value_name = "FILE")]
    program: PathBuf,
    /// The bundle of encrypted inputs (from `hearth encrypt`).
    #[arg(long, value_name = "FILE")]
    bundle: PathBuf,
    /// The bundle of encrypted outputs to write: packed into GLWE
    /// ciphertexts (a few bytes per digit) unless `--unpacked`.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Write every output ciphertext in full (to compute on the results
    /// again), not packed.
    #[arg(long)]
    unpacked: bool,
    #[command(flatten)]
    threads: Threads,
    #[command(flatten)]
    backend: BackendArg,
    #[command(flatten)]
    max_memory: MaxMemory,
}

impl Args {
    /// The thread option, when the run is on the mpi backend.
    pub fn mpi_threads(&self) -> Option<Threads> {
        (self.backend.backend == Engine::Mpi).then_some(self.threads)
    }
}

/// `hearth run`: the bundle checked against the program and the key, the
/// memory estimate, keys included, against `--max-memory`, then the run with a progress
/// bar.
pub fn run(args: Args) -> Result<(), Error> {
    let Args {
        server_key,
        program,
        bundle,
        out,
        unpacked,
        threads,
        backend,
        max_memory,
    } = args;
    let (server_key, program, bundle, out) = (&server_key, &program, &bundle, &out);
    let backend = backend.backend;
    let limit = max_memory.bytes();
    let prog = load_program(program)?;
    let input = Bundle::load(bundle)?;
    prog.check_bundle(&input)?;
    let server = ServerKey::load(server_key)?;
    if server.key_id() != input.key_id() {
        return Err(Error::WrongKey {
            expected: server.key_id(),
            found: input.key_id(),
        });
    }
    let threads = threads.resolve()?;
    // The keys in memory: the standard-domain key and the bootstrap key
    // again in the Fourier domain (the same size).
    let sizes = ServerKeySizes::of(server.params());
    let keys = sizes.decompressed() + sizes.bootstrap;
    let run = prog.memory_estimate(threads);
    if keys + run > limit {
        return Err(Error::TooLarge {
            what: format!(
                "the run's estimated memory (bytes: keys {keys}, ciphertexts and accumulators {run}; \
                 raise --max-memory or split the work)"
            ),
            size: keys + run,
            limit,
        });
    }
    // Told before the run: outputs too noisy to pack travel in full.
    let pack = !unpacked
        && match prog.check_packable() {
            Ok(()) => true,
            Err(e) => {
                eprintln!("{e}: writing them unpacked");
                false
            }
        };
    let st = prog.circuit().stats();
    eprintln!(
        "{}: {} PBS, depth {}, estimated memory {:.0} MiB (keys {:.0} MiB)",
        program.display(),
        st.pbs,
        st.depth,
        mib(keys + run),
        mib(keys)
    );
    let start = Instant::now();
    // The library's selector (through `backend::with_bar`): gpu where none
    // can be used runs on the cpu backend, saying why; the bar advances on
    // cpu and mpi.
    let bar = pbs_bar(st.pbs);
    let ev = backend::with_bar(
        backend,
        &server,
        Some(server_key),
        Some(threads),
        Some(&bar),
    )?;
    let result = prog.run_bundle(&ev, &input)?;
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    let packing = Instant::now();
    let result = if pack {
        prog.pack(&server, &result)?
    } else {
        result
    };
    let packing = packing.elapsed().as_secs_f64();
    result.save(out)?;
    let how = if pack {
        format!("packed in {packing:.2} s")
    } else {
        "unpacked".to_string()
    };
    println!(
        "ran {} PBS in {secs:.1} s ({:.0} PBS/s); {} written ({} bytes, {how})",
        st.pbs,
        st.pbs as f64 / secs.max(1e-9),
        out.display(),
        file_len(out)
    );
    Ok(())
}
