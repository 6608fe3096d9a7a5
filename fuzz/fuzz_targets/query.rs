#![no_main]
//! Fuzz target `query`: any query text against a fixed index (the checks: `pocketdex_fuzz::query`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::query(data));
