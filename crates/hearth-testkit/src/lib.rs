//! hearth's test kit: random programs of both families (with shrinking),
//! forged files, the compute server's hostile clients and footprint probes
//! (`hostile`), with the core's random circuits and shared keys
//! re-exported. Shared by the tests, the benchmarks and `hearth-bench
//! fuzz-programs`; not part of the library's API.
//!
//! The random programs use the library's public API only; the circuit-level
//! helpers (`circuits`, `keys`) live in `hearth_core::testing`, where the
//! layers' own unit tests can use them.

pub mod forge;
#[cfg(target_os = "linux")]
pub mod hostile;
pub mod packing;
#[cfg(unix)]
pub mod postgres;
pub mod programs;
pub mod word_programs;

pub use hearth_core::testing::{circuits, keys};

/// Greedy shrinking: while some candidate `next` proposes still `fails`,
/// move to the first such one. Returns a local minimum.
pub(crate) fn shrink_greedy<T: Clone>(
    start: T,
    next: impl Fn(&T) -> Vec<T>,
    fails: impl Fn(&T) -> bool,
) -> T {
    let mut best = start;
    while let Some(c) = next(&best).into_iter().find(|c| fails(c)) {
        best = c;
    }
    best
}

/// Copies of `spec` with one element of the list `field` picks removed,
/// while more than `keep` remain (shrinking candidates).
pub(crate) fn without_each<T: Clone, I>(
    spec: &T,
    keep: usize,
    field: impl Fn(&mut T) -> &mut Vec<I>,
) -> Vec<T> {
    let mut probe = spec.clone();
    let n = field(&mut probe).len();
    if n <= keep {
        return Vec::new();
    }
    (0..n)
        .map(|i| {
            let mut c = spec.clone();
            field(&mut c).remove(i);
            c
        })
        .collect()
}
