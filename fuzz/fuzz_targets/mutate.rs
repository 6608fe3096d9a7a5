#![no_main]
//! Fuzz target `mutate`: a valid index or segment edited, its checksums recomputed (the checks: `pocketdex_fuzz::mutate`).

libfuzzer_sys::fuzz_target!(|data: &[u8]| pocketdex_fuzz::mutate(data));
