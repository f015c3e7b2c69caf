//! The server's integration tests: one binary, one module per feature.

mod bisect;
mod cli;
mod common;
mod upload;
mod web;
