//! `sqlx::migrate!` embeds the migrations at build time: rebuild when they change.
fn main() {
    println!("cargo:rerun-if-changed=../migrations/sqlite");
    println!("cargo:rerun-if-changed=../migrations/postgres");
}
