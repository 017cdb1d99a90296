//! `hearth demo`: the first demo (crates/hearth-demo) on the backend and
//! threads the options name.

use hearth::backend::Backend;
use hearth::backend::Evaluator;
use hearth::{Ciphertext, Circuit, Error, ParameterSet, ServerKey};
use hearth_cli::backend::evaluator;
use hearth_cli::options::{BackendArg, Engine, Threads};

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

/// One of the command's evaluators, as the demo takes them.
struct Shown<'k>(Evaluator<'k>);

impl Backend for Shown<'_> {
    type Digit = Ciphertext;

    fn evaluate(&self, circuit: &Circuit, inputs: &[Ciphertext]) -> Result<Vec<Ciphertext>, Error> {
        self.0.evaluate(circuit, inputs)
    }
}

impl hearth_demo::Evaluator for Shown<'_> {
    fn describe(&self) -> String {
        self.0.describe()
    }
}

impl hearth_demo::Evaluators for Chosen {
    fn evaluator<'k>(
        &self,
        server: &'k ServerKey,
    ) -> Result<Box<dyn hearth_demo::Evaluator + 'k>, Error> {
        Ok(Box::new(Shown(evaluator(
            self.engine,
            server,
            self.threads.get(),
        )?)))
    }

    fn plan_threads(&self, params: &'static ParameterSet) -> usize {
        hearth::backend::plan_threads(self.engine.into(), params, self.threads.get()).unwrap_or(1)
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
