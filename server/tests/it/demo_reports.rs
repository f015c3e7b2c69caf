//! The demo's comparisons, every build pair in every text format, checked against snapshots so
//! that a change to how reports are built or printed shows up as a reviewed diff.

use std::process::Command;

fn quiescent(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .env_remove("QUIESCENT_DB")
        .env("QUIESCENT_LOG", "error")
        .env("COLUMNS", "120")
        .args(args)
        .output()
        .expect("run quiescent");
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

#[test]
fn demo_comparisons_are_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db").display().to_string();
    quiescent(&["demo", "--no-serve", "--db", &db]);
    for (name, flag) in [
        ("demo_csv", Some("--csv")),
        ("demo_markdown", Some("--markdown")),
        ("demo_email", Some("--email")),
        ("demo_terminal", None),
    ] {
        let mut all = String::new();
        for (base, head) in crate::common::DEMO_PAIRS {
            let mut args = vec!["compare", base, head, "--db", &db];
            args.extend(flag);
            all.push_str(&format!("==> {base} .. {head}\n"));
            all.push_str(&quiescent(&args));
        }
        insta::assert_snapshot!(name, all);
    }
}
