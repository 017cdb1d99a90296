//! What the `hearth` command and the `hearth-bench` benchmarks share: the
//! options and their value syntax ([`options`]), the choice of backend
//! ([`backend`]), MPI launches ([`cluster`]), progress bars and key
//! generation with progress ([`progress`]), the check that keeps every
//! option's help in one vocabulary ([`help`]), and Markdown for the
//! generated reference pages ([`markdown`]).
//!
//! This is not a library for users: hearth's API is the `hearth` crate.

pub mod backend;
pub mod cluster;
pub mod help;
pub mod markdown;
pub mod options;
pub mod progress;
