//! The emulator's assembler (`hearth_emu::asm::assemble_at`) on arbitrary
//! UTF-8 text, at the 32-bit and the 16-bit machine's bases.
#![no_main]

use hearth_emu::asm::{assemble_at, BASES, BASES_16};
use libfuzzer_sys::fuzz_target;

// Links the allocator that enforces the malloc limit (hearth_fuzz).
extern crate hearth_fuzz;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = assemble_at(text, BASES);
    let _ = assemble_at(text, BASES_16);
});
