//! Statistics for commit-versus-commit comparisons.
