#![no_main]
//! See `pocketdex_fuzz::open`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::open(data));
