//! `hearth demo`: the first demo (crates/hearth-demo) on the backend and
//! threads the options name.

use hearth::backend::{Engine, Evaluator};
use hearth::{Error, ServerKey};
use hearth_cli::backend::evaluator;
use hearth_cli::options::{BackendArg, Threads};

/// `hearth demo`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    threads: Threads,
    #[command(flatten)]
    backend: BackendArg,
}

impl Args {
    /// The thread option, when the demo runs on the mpi backend.
    pub fn mpi_threads(&self) -> Option<Threads> {
        (self.backend.backend == Engine::Mpi).then_some(self.threads)
    }
}

/// The demo's evaluators: `--backend` on `--threads`.
struct Chosen {
    engine: Engine,
    threads: Threads,
}

impl hearth_demo::Evaluators for Chosen {
    fn engine(&self) -> Engine {
        self.engine
    }

    fn threads(&self) -> Option<usize> {
        self.threads.get()
    }

    fn evaluator<'k>(&self, server: &'k ServerKey) -> Result<Evaluator<'k>, Error> {
        evaluator(self.engine, server, self.threads.get())
    }
}

/// `hearth demo`.
pub fn run(args: Args) -> Result<(), Error> {
    args.threads.resolve()?;
    hearth_demo::run(&Chosen {
        engine: args.backend.backend,
        threads: args.threads,
    })
}
