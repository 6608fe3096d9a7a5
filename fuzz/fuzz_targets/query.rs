#![no_main]
//! See `pocketdex_fuzz::query`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::query(data));
