//! The allocation limit of every fuzz target.
//!
//! libFuzzer's own `-malloc_limit_mb` needs a sanitizer's allocator hooks, so it does
//! nothing in the build `.ci/fuzz` runs on the stable toolchain, which has no sanitizer.
//! This global allocator enforces the limit itself, in every build: an allocation (or
//! reallocation) of more than [`MAX_ALLOCATION`] bytes prints what it asked for and
//! aborts, which libFuzzer reports as a crash and saves the input for. A parser sizing a
//! buffer from a number in its input before checking it is found this way even when the
//! memory would never have been touched (and so never counted by `-rss_limit_mb`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;

/// The largest single allocation a target may make: 1 GiB.
pub const MAX_ALLOCATION: usize = 1 << 30;

/// The start of the message an allocation above the limit prints before aborting
/// (`.ci/fuzz` reads it to name the failure).
pub const MESSAGE: &str = "fuzz: allocation above the limit";

/// The system allocator, refusing any single allocation above [`MAX_ALLOCATION`] by
/// aborting the process.
pub struct Limited;

impl Limited {
    fn check(size: usize) {
        if size > MAX_ALLOCATION {
            // Formatting integers into the unbuffered standard error allocates nothing.
            let _ = writeln!(
                std::io::stderr(),
                "{MESSAGE}: {size} bytes at once, more than {MAX_ALLOCATION}"
            );
            std::process::abort();
        }
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// only addition is a size check that may abort the process before the call.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::check(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::check(new_size);
        System.realloc(ptr, layout, new_size)
    }
}
