//! Forged files, as a hostile client of a server would send them: for
//! the tests that show each attack refused.

use hearth::error::Error;

/// Program file `bytes` naming its first output `outputs` times, its
/// stated cost and signature left as they were, its header sealed again:
/// the "output bomb" (a few bytes per output that a rebuild would turn
/// into a ciphertext each). Loading it must refuse it, cheaply.
pub fn program_with_outputs(bytes: &[u8], outputs: usize) -> Result<Vec<u8>, Error> {
    hearth::formats::program_file::forge_outputs(bytes, outputs)
}

/// Program file `bytes` whose operations are replaced by `ops` and its
/// outputs by `outputs`, its stated cost and signature left as they were,
/// its header sealed again: a file that states one cost and builds
/// another.
pub fn program_with_ops(
    bytes: &[u8],
    ops: Vec<hearth::api::ops::Op>,
    outputs: Vec<hearth::api::ops::ValueId>,
) -> Result<Vec<u8>, Error> {
    hearth::formats::program_file::forge_ops(bytes, ops, outputs)
}
