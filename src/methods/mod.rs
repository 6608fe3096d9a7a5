//! The classical near-duplicate methods on the shared text pipeline.
