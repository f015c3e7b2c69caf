//! Statistics for commit-versus-commit comparisons: pure functions, no I/O.
//!
//! [`compare_series`] takes the base and head samples of one series and returns everything the
//! pages and reports show; [`finish`] applies Benjamini-Hochberg across a whole comparison and
//! sets the verdicts.

mod types;

pub use types::*;
