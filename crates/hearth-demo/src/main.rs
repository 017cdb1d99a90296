//! `hearth-demo`: the first demo on the cpu backend (`HEARTH_THREADS`
//! threads, else every core). `hearth demo` runs the same demo with the
//! command's options.

use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args_os().len() > 1 {
        eprintln!(
            "hearth-demo takes no options (threads: HEARTH_THREADS); `hearth demo --help` \
             lists the command's (--threads, --backend)"
        );
        return ExitCode::FAILURE;
    }
    match hearth_demo::run(&hearth_demo::Cpu) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
