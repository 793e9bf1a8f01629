//! The self-check of `.ci/fuzz`, not a target of its own: its body is
//! `numaplace_fuzz::planted`. It lives outside `fuzz_targets/` so that fuzzing runs
//! never pick it up as a target.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaplace_fuzz::planted::run(data));
