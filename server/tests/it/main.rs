//! The server's integration tests: one binary, one module per feature.

mod cli;
mod common;
mod detect;
mod upload;
mod web;
