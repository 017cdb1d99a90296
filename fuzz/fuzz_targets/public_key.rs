//! `hearth::PublicKey::from_bytes(origin, b)` on arbitrary bytes, as given and with the header's length and
//! CRC fixed up (see `hearth_fuzz::fix_header`); a key that loads then
//! encrypts a digit and a short compact list, so a payload that passes
//! the checks must also be a key that works.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let origin = std::path::Path::new("<fuzz>");
    hearth_fuzz::both(data, |b| -> Result<(), hearth::Error> {
        let key = hearth::PublicKey::from_bytes(origin, b)?;
        key.encrypt(1)?;
        let list = key.encrypt_list(&[0, 1, 2])?;
        list.expand(key.params().id, key.key_id()).map(drop)
    });
});
