//! The `run_config` target: its body is `numaplace_fuzz::run_config`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaplace_fuzz::run_config::run(data));
