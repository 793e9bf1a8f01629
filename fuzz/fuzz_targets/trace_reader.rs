//! The `trace_reader` target: its body is `numaplace_fuzz::trace_reader`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaplace_fuzz::trace_reader::run(data));
