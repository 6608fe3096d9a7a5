//! The evaluation harness: exact similarities, recall and precision per similarity bucket.
