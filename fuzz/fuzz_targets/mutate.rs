#![no_main]
//! See `pocketdex_fuzz::mutate`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::mutate(data));
