//! The `harwell_boeing` target: its body is `numaplace_fuzz::harwell_boeing`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| numaplace_fuzz::harwell_boeing::run(data));
