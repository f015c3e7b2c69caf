//! The demo's comparisons, every build pair in every text format, checked against snapshots so
//! that a change to how reports are built or printed shows up as a reviewed diff.

use std::process::Command;

/// Every before/after pair the demo database offers (see `cli/demo.rs`).
const PAIRS: [(&str, &str); 17] = [
    ("v4.19", "v5.1"),
    ("1e5aa3d5d53a-parent", "1e5aa3d5d53a"),
    ("v2.6.28-ftrace-disable", "v2.6.28-ftrace-enable"),
    ("v3.8-qs-fqs-jiffies", "v3.8-qs-fqs-from-HZ"),
    ("kvfree-rcu-baseline", "kvfree-rcu-polling"),
    ("rcu-tasks-irq-work-baseline", "rcu-tasks-avoid-irq-work"),
    ("vmalloc-before", "vmalloc-fix-exhaustion"),
    ("lockdep-rcu", "lockdep-shazptr"),
    ("2.6.18-vanilla", "2.6.18-swap-token"),
    ("slub-count-partial-original", "slub-count-partial-patched"),
    ("slob-current", "slob-segregated-free-list"),
    ("sched-without-cluster", "sched-cluster-level"),
    ("rcu-nesting-unmarked", "rcu-nesting-marked"),
    ("git-xdiff-before-strbuf", "git-xdiff-strbuf"),
    ("rcuscale-gps-count-old", "rcuscale-gps-count-fixed"),
    ("v2.6.26", "v3.8.0-test"),
    ("c229828ca6bc-reverted", "c229828ca6bc"),
];

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
        for (base, head) in PAIRS {
            let mut args = vec!["compare", base, head, "--db", &db];
            args.extend(flag);
            all.push_str(&format!("==> {base} .. {head}\n"));
            all.push_str(&quiescent(&args));
        }
        insta::assert_snapshot!(name, all);
    }
}
