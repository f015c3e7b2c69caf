// New migrations must be re-embedded by `sqlx::migrate!` in the ingest crate; templates too.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
    println!("cargo:rerun-if-changed=../templates");
}
