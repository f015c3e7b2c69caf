//! The server's integration tests: one binary, one module per feature.

mod bisect;
mod cli;
mod common;
mod demo_reports;
mod detect;
mod hardening;
mod history;
mod upgrade;
mod upload;
mod web;
