#![no_main]
//! See `pocketdex_fuzz::documents`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::documents(data));
