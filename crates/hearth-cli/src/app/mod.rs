//! `hearth app ...`: applications on real data. Each encrypts its inputs,
//! runs the whole computation as one circuit (with a progress bar:
//! bootstraps done / total, rate, time left), decrypts, and compares with
//! plain Rust integer arithmetic and with the Python reference the data
//! came with.

mod data;
mod digits;
mod pipeline;
mod regression;

use std::path::PathBuf;

use hearth::Error;

use hearth::backend::Engine;
use hearth_cli::options::{BackendArg, FamilyArg, Format, MaxMemory, Threads};

/// What every application takes.
#[derive(clap::Args)]
pub struct Common {
    #[command(flatten)]
    family: FamilyArg,
    #[command(flatten)]
    threads: Threads,
    #[command(flatten)]
    backend: BackendArg,
    #[command(flatten)]
    max_memory: MaxMemory,
    /// Also write the results to this file (default: none): one row per
    /// input with the decrypted and the expected outputs.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The format of --out: json or csv (default: from --out's extension,
    /// csv when it names neither).
    #[arg(long, value_name = "FORMAT", value_enum)]
    format: Option<Format>,
    /// Instead of running, write the compiled program (program.hprog),
    /// its clear inputs (values.json, for `hearth encrypt --values`) and
    /// the clear model's outputs (expected.json, as `hearth decrypt`
    /// prints them) into this folder (default: run).
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
}

#[derive(clap::Subcommand)]
pub enum App {
    /// Linear-regression inference y = X w + b on the diabetes dataset.
    Regression {
        /// Rows to encrypt and evaluate (from the start of the input).
        #[arg(long, value_name = "N", default_value_t = 10)]
        rows: usize,
        /// Features: a CSV with columns f0..f9 (and `target`), or an NPY [rows, 10].
        #[arg(long, value_name = "FILE", default_value = "data/diabetes/rows.csv")]
        input: PathBuf,
        /// The quantised model (weights, bias).
        #[arg(long, value_name = "FILE", default_value = "data/diabetes/model.json")]
        model: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// A small quantised CNN (conv 3x3 + ReLU + avg-pool 2 + dense) on 8x8 digits.
    Digits {
        /// Images to encrypt and classify (from the start of the input).
        #[arg(long, value_name = "N", default_value_t = 3)]
        images: usize,
        /// Images: a CSV with columns p0..p63 (and `label`, `prediction`), or an NPY [n, 8, 8].
        #[arg(
            long,
            value_name = "FILE",
            default_value = "data/digits/test_images.csv"
        )]
        input: PathBuf,
        /// The quantised model.
        #[arg(long, value_name = "FILE", default_value = "data/digits/model.json")]
        model: PathBuf,
        #[command(flatten)]
        common: Common,
    },
}

impl Common {
    /// The thread count the application's program is planned for: the
    /// threads on cpu and mpi, a GPU's own on `--backend gpu`
    /// (`hearth::backend::plan_threads`).
    fn plan_threads(&self, plan: &pipeline::Plan) -> Result<usize, Error> {
        hearth::backend::plan_threads(self.backend.backend, plan.params, self.threads.get())
    }
}

impl App {
    /// The thread option when the application runs on `--backend mpi`.
    pub fn mpi_threads(&self) -> Option<Threads> {
        let (App::Regression { common, .. } | App::Digits { common, .. }) = self;
        (common.backend.backend == Engine::Mpi).then_some(common.threads)
    }
}

pub fn run(app: App) -> Result<(), Error> {
    match app {
        App::Regression {
            rows,
            input,
            model,
            common,
        } => regression::regression(rows, &input, &model, &common),
        App::Digits {
            images,
            input,
            model,
            common,
        } => digits::digits(images, &input, &model, &common),
    }
}
