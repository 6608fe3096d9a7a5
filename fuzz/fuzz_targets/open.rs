#![no_main]
//! Fuzz target `open`: any bytes as an index file (the checks: `pocketdex_fuzz::open`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::open(data));
