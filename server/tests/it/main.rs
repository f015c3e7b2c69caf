//! The server's integration tests: one binary, one module per feature.

mod bisect;
mod cli;
mod common;
mod copy_db;
mod demo_reports;
mod detect;
mod engines;
mod hardening;
mod history;
mod history_kept;
mod limits;
mod limits_cli;
mod mail;
mod mail_web;
mod pg_servers;
mod read_only;
mod upgrade;
mod upload;
mod web;
mod web_compare;
