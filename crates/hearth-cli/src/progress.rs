//! Progress on stderr: bars over named steps and over a run's bootstraps,
//! and key generation with its steps shown.

use hearth::backend::CpuBackend;
use hearth::{ClientKey, Error, ParameterSet, ServerKey};
use indicatif::{ProgressBar, ProgressStyle};

/// A bar over named steps, on stderr.
pub fn steps(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    bar
}

/// A bar over the bootstraps of a run: done / total, rate, time left.
pub fn pbs_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} PBS  {per_sec}  {eta} left {msg}",
        )
        .expect("valid template"),
    );
    bar
}

/// The cpu backend on `threads` threads, advancing `bar` as bootstraps finish.
pub fn cpu_with_bar<'k>(
    server: &'k ServerKey,
    threads: usize,
    bar: &ProgressBar,
) -> Result<CpuBackend<'k>, Error> {
    Ok(CpuBackend::new(server, Some(threads))?.with_progress(advance(bar)))
}

/// A backend's progress callback that moves `bar` to the bootstraps done.
pub fn advance(bar: &ProgressBar) -> impl Fn(usize, usize) + Send + Sync + 'static {
    let bar = bar.clone();
    move |done, _| bar.set_position(done as u64)
}

/// Generates keys for a secure set, with progress.
pub fn generate(params: &'static ParameterSet) -> (ClientKey, ServerKey) {
    let bar = steps(2);
    bar.set_message(format!("{}: secret keys", params.name));
    let client = ClientKey::generate(params);
    bar.inc(1);
    bar.set_message(format!("{}: bootstrap and key-switch keys", params.name));
    let server = client.server_key();
    bar.inc(1);
    bar.finish_and_clear();
    (client, server)
}
