//! `hearth inspect`: a program file's signature and cost.

use std::path::PathBuf;

use hearth::{CompiledProgram, Error};
use hearth_cli::options::Threads;

use crate::describe::describe_program;

/// `hearth inspect`.
#[derive(clap::Args)]
pub struct Args {
    /// The program file.
    program: PathBuf,
    #[command(flatten)]
    threads: Threads,
}

/// `hearth inspect`: the memory estimate is for `--threads`.
pub fn run(args: Args) -> Result<(), Error> {
    let prog = CompiledProgram::load(&args.program)?;
    println!("program:     {}", args.program.display());
    describe_program(&prog, args.threads.get());
    Ok(())
}
