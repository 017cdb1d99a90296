//! Records the optimisation level this crate is built at: tfhe-rs's
//! generic integer code is compiled here, so timings beside tfhe-rs are
//! fair only at opt-level 3 (the workspace builds this crate at 1 for the
//! test command's sake; `cargo timing -- ARGS` builds it at 3).
fn main() {
    let level = std::env::var("OPT_LEVEL").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=HEARTH_BENCH_OPT_LEVEL={level}");
    println!("cargo:rerun-if-env-changed=OPT_LEVEL");
}
