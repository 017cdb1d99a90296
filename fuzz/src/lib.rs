//! Helpers shared by the fuzz targets.

/// Length of a hearth file header (`crates/hearth-core/src/crypto/files.rs`).
pub const HEADER_LEN: usize = 36;

/// `data` with the header's payload length and CRC-32 rewritten to match
/// the bytes after the header, so that mutated payloads get past the
/// checksum and reach the deserializer and the checks behind it. `None`
/// when `data` is shorter than a header.
pub fn fix_header(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < HEADER_LEN {
        return None;
    }
    let mut bytes = data.to_vec();
    hearth::crypto::files::reseal(&mut bytes);
    Some(bytes)
}

/// Runs `read` on `data` as given, then on [`fix_header`]'s copy (when it
/// differs). `read` must return, not panic: libFuzzer reports a panic as a
/// crash.
pub fn both<T, E>(data: &[u8], mut read: impl FnMut(&[u8]) -> Result<T, E>) {
    let _ = read(data);
    if let Some(fixed) = fix_header(data) {
        if fixed != data {
            let _ = read(&fixed);
        }
    }
}

/// The largest single allocation a target may make: libFuzzer's
/// `-malloc_limit_mb` needs a sanitizer's malloc hooks, and the targets are
/// built without one (`-s none`, see README.md), so this allocator enforces
/// the same limit: a larger request prints its size and aborts, which
/// libFuzzer reports as a crash with the input that caused it.
pub const MALLOC_LIMIT: usize = 2048 << 20;

struct Limited;

// SAFETY: forwards to the system allocator; only refuses (by aborting)
// requests over the limit.
unsafe impl std::alloc::GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        check(layout.size());
        std::alloc::System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        check(layout.size());
        std::alloc::System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        check(new);
        std::alloc::System.realloc(ptr, layout, new)
    }
}

fn check(size: usize) {
    if size > MALLOC_LIMIT {
        // No allocation here: write the message with a fixed buffer.
        use std::io::Write;
        let mut buf = [0u8; 96];
        let mut w = &mut buf[..];
        let _ = write!(w, "==hearth-fuzz== malloc({size}) exceeds the limit\n");
        let n = 96 - w.len();
        let _ = std::io::stderr().write_all(&buf[..n]);
        std::process::abort();
    }
}

#[global_allocator]
static ALLOC: Limited = Limited;
