//! The `matrix_market` target: its body is `numaplace_fuzz::matrix_market`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaplace_fuzz::matrix_market::run(data));
