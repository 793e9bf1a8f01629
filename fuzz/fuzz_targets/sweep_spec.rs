//! The `sweep_spec` target: its body is `numaplace_fuzz::sweep_spec`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaplace_fuzz::sweep_spec::run(data));
