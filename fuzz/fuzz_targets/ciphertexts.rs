//! `hearth::crypto::files::ciphertexts_from_bytes(origin, b, None)` on arbitrary bytes, as given and with the header's length and
//! CRC fixed up (see `hearth_fuzz::fix_header`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let origin = std::path::Path::new("<fuzz>");
    hearth_fuzz::both(data, |b| {
        hearth::crypto::files::ciphertexts_from_bytes(origin, b, None)
    });
});
