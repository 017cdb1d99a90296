//! `hearth::CompiledProgram::from_bytes(origin, b)` and `peek` (what a
//! client such as the browser's reads: `ProgramSummary::read`) on
//! arbitrary bytes, as given and with the header's length and CRC fixed up
//! (see `hearth_fuzz::fix_header`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let origin = std::path::Path::new("<fuzz>");
    hearth_fuzz::both(data, |b| hearth::CompiledProgram::peek(origin, b));
    hearth_fuzz::both(data, |b| hearth::CompiledProgram::from_bytes(origin, b));
});
