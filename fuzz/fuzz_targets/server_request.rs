//! The compute server's request parsing on arbitrary bytes:
//! `hearth_server::parse_job` (a job body: a program file, then a bundle
//! file) and `check_key_header` (an uploaded server key). The job body is
//! parsed as given, then with both files' payload lengths and CRCs fixed
//! up (split where the program's header says its payload ends), so that
//! mutations reach the program and bundle decoders behind the checksums.
#![no_main]

use hearth_fuzz::{fix_header, HEADER_LEN};
use hearth_server::request::check_key_header;
use hearth_server::{parse_job, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits::default();
    let _ = check_key_header(data, limits.max_body);
    let _ = parse_job(data, &limits);
    if data.len() < HEADER_LEN {
        return;
    }
    let stated = u64::from_le_bytes(data[24..32].try_into().unwrap());
    let end = (HEADER_LEN as u64)
        .saturating_add(stated)
        .min(data.len() as u64) as usize;
    let (program, bundle) = data.split_at(end);
    let mut fixed = fix_header(program).unwrap_or_default();
    fixed.extend(fix_header(bundle).unwrap_or_else(|| bundle.to_vec()));
    if fixed != data {
        let _ = parse_job(&fixed, &limits);
    }
});
