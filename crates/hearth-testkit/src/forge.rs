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
