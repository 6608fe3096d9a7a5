#![no_main]
//! Fuzz target `methods`: texts through one classical method or `compare` (the checks: `pocketdex_fuzz::methods`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::methods(data));
