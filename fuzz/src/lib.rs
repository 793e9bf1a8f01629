//! The bodies of the fuzz targets, one module each, and what they share.
//!
//! Each file in `fuzz_targets/` only hands libFuzzer's input to its module's `run`, so a
//! target is the same code whichever toolchain and sanitizer build it: `.ci/fuzz` on
//! stable without a sanitizer, `cargo +nightly fuzz run NAME` with AddressSanitizer for
//! deeper runs by hand. Linking this crate also installs [`limit::Limited`], the global
//! allocator that aborts on any single allocation above [`limit::MAX_ALLOCATION`].
//!
//! [`planted`] is not a target: it is the self-check of `.ci/fuzz`, a target with a
//! failure planted in it that the fuzzer must find before the real targets are trusted.

pub mod check;
pub mod harwell_boeing;
pub mod limit;
pub mod matrix_market;
pub mod planted;
pub mod run_config;
pub mod sweep_spec;
pub mod trace_reader;

#[global_allocator]
static ALLOCATOR: limit::Limited = limit::Limited;
