#![no_main]
//! Fuzz target `documents`: any bytes through the document readers and the text pipeline (the checks: `pocketdex_fuzz::documents`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::documents(data));
