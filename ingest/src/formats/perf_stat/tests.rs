//! The parser's memos against the readings they save, and its small readers.

use super::{Parser, perf_command, strip_box};
use crate::lines::strip_line;
use crate::model::Ctx;

/// Each line of `text` through the parser as the format's parse gives it (none read ahead),
/// with headers and prose remembered or each read afresh: the dataset and what each line
/// returned.
fn read_lines(text: &str, memo: bool) -> (crate::Dataset, Vec<String>) {
    let mut ds = crate::Dataset::new();
    let mut results = Vec::new();
    let mut ctx = Ctx::new(&mut ds, None);
    let mut p = Parser::default();
    p.headers.recent.off = !memo;
    p.prose_seen.off = !memo;
    for (i, raw) in text.lines().enumerate() {
        ctx.line = i as u64 + 1;
        let r = p.line(strip_box(strip_line(raw)), None, &mut ctx);
        results.push(format!("{r:?}"));
    }
    results.push(format!("{:?}", p.finish(&mut ctx)));
    drop(ctx);
    (ds, results)
}

/// `crafted`, and each fixture three times over, read with the memos and without: the same
/// dataset and the same result for every line, and samples read.
fn memos_change_nothing(crafted: String) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/perf_stat");
    let mut texts = vec![crafted];
    for e in std::fs::read_dir(dir).expect("the fixtures") {
        let path = e.expect("an entry").path();
        if path.extension().is_some_and(|x| x == "txt") {
            texts.push(std::fs::read_to_string(&path).expect("a fixture").repeat(3));
        }
    }
    for text in &texts {
        let with = read_lines(text, true);
        let head = &text[..text.len().min(200)];
        assert_eq!(with, read_lines(text, false), "{head}");
        assert!(with.0.sample_count() > 0, "{head}");
    }
}

/// Headers of every kind (runs or none, a command, a target, quoted or not, spaces that
/// are not ASCII), each coming back after others and after itself: remembered, they give
/// what reading them again gives. So do the fixtures.
#[test]
fn remembered_headers_read_as_read_again() {
    let headers = [
        " Performance counter stats for 'hackbench 20 thread 20000' (10 runs):",
        " Performance counter stats for 'hackbench 20 thread 20000' (5 runs):",
        " Performance counter stats for 'make -j8':",
        " Performance counter stats for 'system wide' (3 runs):",
        " Performance counter stats for 'system wide':",
        " Performance counter stats for 'CPU(s) 0-3' (2 runs):",
        " Performance counter stats for CPU(s) 0-3:",
        " Performance counter stats for process id '42':",
        " Performance counter stats for '' (4 runs):",
        " Performance counter stats for 'ls'\u{a0}(7\u{2003}runs):",
        " Performance counter stats for 'ls' (x runs):",
        " Performance counter stats for 'ls' (99999999999 runs):",
        "Performance counter stats for:",
        "Performance counter stats for",
    ];
    let elapsed = "      24.536050899 seconds time elapsed          ( +-  0.24% )";
    let mut text = String::new();
    for round in 0..3 {
        for (i, h) in headers.iter().enumerate() {
            for h in [h, &headers[(i * 5 + round) % headers.len()]] {
                text.push_str(h);
                text.push('\n');
                text.push_str(elapsed);
                text.push_str("\n\n");
            }
        }
    }
    memos_change_nothing(text);
}

/// Lines read as prose in one state that are something else in another (in a block, in a
/// `--table`), and prose, each coming back at once in every other state: remembered, each
/// reads as reading it again reads it. So do the fixtures.
#[test]
fn remembered_prose_reads_as_read_again() {
    let lines = [
        "== original, no patched",
        "On my 32-cpu 2-socket physical machine:",
        "# Final result:",
        "5.189 (-0.293) ###",
        "\u{663} (1) #",
        "x seconds user",
        "x seconds sys",
        "1.00 seconds user",
        "CPU0 1,234 cycles",
        "<not counted> cycles",
        "2) After applying this patchset:",
        "Time: 1.5",
        "Slab: 7936 kB",
        "1) perf stat --null --repeat 10 -- hackbench 20 thread 20000",
        "Intel(R) Xeon(R) CPU E5-2650 v2 @ 2.60GHz",
    ];
    let header = " Performance counter stats for 'hackbench 20 thread 20000' (10 runs):";
    let elapsed = "      24.536050899 seconds time elapsed          ( +-  0.24% )";
    let block = format!("{header}\n\n{elapsed}\n");
    let table = format!("{block}# Table of individual measurements:\n");
    // After prose (out of any block), in a block, in a table, in every order.
    let states = ["Some words.\n", &block, &table];
    let orders = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut text = String::new();
    for l in lines {
        for order in orders {
            for s in order {
                text.push_str(states[s]);
                text.push_str(l);
                text.push('\n');
            }
        }
    }
    memos_change_nothing(text);
}

#[test]
fn box_borders() {
    assert_eq!(strip_box("|  Patched kernel:"), "Patched kernel:");
    assert_eq!(strip_box("| a | b |"), "| a | b |");
    assert_eq!(strip_box("1,2 cycles"), "1,2 cycles");
}

#[test]
fn commands() {
    assert_eq!(
        perf_command("$ perf stat -- make"),
        Some("perf stat -- make")
    );
    assert_eq!(
        perf_command("2) perf stat --null --repeat 10 -- hackbench 32 thread 20000"),
        Some("perf stat --null --repeat 10 -- hackbench 32 thread 20000")
    );
    assert_eq!(perf_command("I ran perf stat on it"), None);
}
