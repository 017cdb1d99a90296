//! Random circuits and random programs, shared by the tests, the
//! benchmarks and `hearth tool fuzz-programs`, and keys shared by the tests
//! of one process.

pub mod circuits;
pub mod forge;
pub mod keys;
pub mod programs;
pub mod unit;
pub mod word_programs;

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
