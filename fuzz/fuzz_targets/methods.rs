#![no_main]
//! See `pocketdex_fuzz::methods`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::methods(data));
