//! The emulator's ELF loader (`hearth_emu::Image::from_elf`) on arbitrary
//! bytes; inputs without the ELF magic get it, so every run reaches the
//! header checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

// Links the allocator that enforces the malloc limit (hearth_fuzz).
extern crate hearth_fuzz;

fuzz_target!(|data: &[u8]| {
    if data.starts_with(b"\x7fELF") {
        let _ = hearth_emu::Image::from_elf(data);
    } else {
        let mut file = b"\x7fELF".to_vec();
        file.extend_from_slice(data);
        let _ = hearth_emu::Image::from_elf(&file);
    }
});
