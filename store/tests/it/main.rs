//! Integration tests of the store: the import and the upgrade of a database from an earlier
//! release.

mod import;

use std::path::PathBuf;

/// A parser fixture (the ingest crate's test inputs).
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ingest/tests/fixtures")
        .join(rel)
}
