//! Every integration test of the workspace's root package in one test binary: one link and one
//! copy of the shared code instead of sixteen (a minute of CI's compile on 2 cores). Each file
//! of `tests/` is a module here; a new one is added below (`autotests = false` in Cargo.toml),
//! and `cargo test --release --test integration FILE::` runs one file's tests.

#[path = "common/mod.rs"]
mod common;

#[path = "clean_failure.rs"]
mod clean_failure;
#[path = "cli.rs"]
mod cli;
#[path = "eval.rs"]
mod eval;
#[path = "fuzz_regressions.rs"]
mod fuzz_regressions;
#[path = "golden.rs"]
mod golden;
#[path = "index.rs"]
mod index;
#[path = "integrity.rs"]
mod integrity;
#[path = "language_idf.rs"]
mod language_idf;
#[path = "languages.rs"]
mod languages;
#[path = "methods.rs"]
mod methods;
#[path = "methods_cli.rs"]
mod methods_cli;
#[path = "parquet.rs"]
mod parquet;
#[path = "serve.rs"]
mod serve;
#[path = "sets.rs"]
mod sets;
#[path = "sets_cli.rs"]
mod sets_cli;
#[path = "signing.rs"]
mod signing;
