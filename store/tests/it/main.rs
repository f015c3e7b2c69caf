//! Integration tests of the store: every public read and write on both engines (`engines`), the
//! import's SQLite specifics and the packed samples (the upgrade of a release-0.1 database is
//! tested end to end by the server's `upgrade` tests).

mod engines;
mod import;
mod packing;

use std::path::PathBuf;

/// A parser fixture (the ingest crate's test inputs).
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ingest/tests/fixtures")
        .join(rel)
}
