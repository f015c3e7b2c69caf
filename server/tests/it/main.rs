//! The server's integration tests: one binary, one module per feature.

mod common;
mod web;
