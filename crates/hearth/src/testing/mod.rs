//! Random circuits and random programs, shared by the tests, the
//! benchmarks and `hearth tool fuzz-programs`.

pub mod circuits;
pub mod programs;
pub mod word_programs;
