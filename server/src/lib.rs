//! quiescent's binary crate: the command line and the web application.
//!
//! `app(state)` builds the axum router so tests can drive it with `tower::ServiceExt::oneshot`.

pub mod cache;
pub mod cli;
pub mod config;
pub mod error;
pub mod export;
pub mod format;
pub mod history;
pub mod mail;
pub mod state;
pub mod tokens;
pub mod web;

pub use error::AppError;
pub use state::AppState;
pub use web::app;
pub mod report;

/// Natural order of strings (digit runs by value): `cpu2` before `cpu10`, `5` before `10`.
pub fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    ingest::natural_cmp(a, b)
}
