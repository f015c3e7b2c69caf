//! The parser's shortcuts against its general path, and the prefix and label helpers.

use super::*;

#[test]
fn prefixes() {
    assert_eq!(split_prefix("rcu-scale: x"), Some(("rcu", " x")));
    assert_eq!(split_prefix("srcu-perf:--- a"), Some(("srcu", "--- a")));
    assert_eq!(split_prefix("rcu-ref-scale: x"), None);
    assert_eq!(split_prefix("see the rcu-scale: x"), None);
}

/// Parses `text` a line at a time, each line through `general` alone when `reference`:
/// what the shortcuts of [`Parser::line`] must reproduce. The results are kept too.
fn line_by_line(text: &str, reference: bool) -> (crate::Dataset, Vec<String>) {
    read_lines(text, reference, true)
}

/// [`line_by_line`], with the memo of prose lines on or off.
fn read_lines(text: &str, reference: bool, memo: bool) -> (crate::Dataset, Vec<String>) {
    let mut ds = crate::Dataset::new();
    let mut results = Vec::new();
    let mut ctx = Ctx::new(&mut ds, None);
    let mut p = Parser::default();
    p.prose_seen.off = !memo;
    for (i, raw) in text.lines().enumerate() {
        ctx.line = i as u64 + 1;
        let r = if reference {
            p.general(raw, &raw[indentation(raw)..], None, &mut ctx)
        } else {
            p.line(raw, &mut ctx)
        };
        results.push(format!("{r:?}"));
    }
    drop(ctx);
    (ds, results)
}

#[test]
fn shortcuts_read_lines_as_the_general_path_does() {
    // Dots and blank lines in each state that reads the next line its own way (a
    // histogram, a wrapped Start-of-test line, a kvm.sh command), between prose and
    // data, quoted, indented and with trailing spaces.
    let states = "\
Histogram bucket size: 1000
1 2
......
1 2
median (usecs) 5 6
......
median (usecs) 7 8
	 \t
rcu-scale:--- Start of test: nreaders=1 nwriters=1
nfakewriters=0
......
nfakereaders=0
kvm.sh --duration 10 \\
......
--configs TREE05 rcuscale.holdoff=3
kvm.sh --duration 20 \\
\x20
--configs TREE05 rcuscale.shutdown=1

with patch:
......
rcu-scale: writer 0 gps: 3
......
rcu-scale:    0 writer-duration:     0 44003961
> ......
......\x20\x20
\t......
.. ..
without patch:

......
rcu-scale:    0 writer-duration:     1 32003582
";
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rcuscale");
    let mut texts = vec![states.to_string()];
    for e in std::fs::read_dir(dir).expect("the fixtures") {
        let path = e.expect("an entry").path();
        if path.extension().is_some_and(|x| x == "txt") {
            texts.push(std::fs::read_to_string(&path).expect("a fixture"));
        }
    }
    assert!(texts.len() >= 5, "the rcuscale fixtures are there");
    for text in &texts {
        let (fast, fast_results) = line_by_line(text, false);
        let (general, general_results) = line_by_line(text, true);
        assert_eq!(fast_results, general_results);
        assert_eq!(fast, general, "{}", &text[..text.len().min(200)]);
    }
    // The crafted text reaches the states it is for.
    let (ds, _) = line_by_line(states, false);
    assert_eq!(ds.meta.get("kvm_duration").map(String::as_str), Some("20"));
    let labels: Vec<_> = ds
        .series
        .iter()
        .map(|s| s.spec.key.label.as_deref())
        .collect();
    assert!(labels.contains(&Some("1 2")), "{labels:?}");
    assert_eq!(ds.meta.get("holdoff"), None);
    assert_eq!(ds.meta.get("shutdown"), None);
    assert_eq!(ds.meta.get("nfakewriters").map(String::as_str), Some("0"));
    assert_eq!(ds.meta.get("nfakereaders"), None);
}

/// Lines taken for prose from the memo are read as the full checks read them: the fixtures
/// and crafted lines, each text three times over so that its prose comes back, a line at a
/// time through `line` and through `general` alone. The crafted lines come back in the
/// states that read lines their own way, after data (where a statistic row is prose) and
/// after prose (where it is a table row), quoted, stamped by dmesg and stating parameters.
#[test]
fn remembered_prose_reads_as_the_checks_do() {
    let crafted = "\
median (usecs) 5 6
Sample of old console output:
median (usecs) 5 6
rcu-scale:    0 writer-duration:     0 44003961
median (usecs) 5 6
nreaders = 10.
nreaders = 20.
nreaders = 10.
Some prose:
[   12.920044] Sample of old console output:
rcu-scale:    0 writer-duration:     2 44003961
> Sample of old console output:
Histogram bucket size: 1000
Sample of old console output:
1 2
median (usecs) 7 8
rcu-scale:--- Start of test: nreaders=1 nwriters=1
Sample of old console output:
nfakewriters=0
kvm.sh --duration 10 \\
Sample of old console output:
--duration 30
Sample of old console output:

rcu-scale:    0 writer-duration:     1 32003582
";
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rcuscale");
    let mut texts = vec![crafted.repeat(3)];
    for e in std::fs::read_dir(dir).expect("the fixtures") {
        let path = e.expect("an entry").path();
        if path.extension().is_some_and(|x| x == "txt") {
            texts.push(std::fs::read_to_string(&path).expect("a fixture").repeat(3));
        }
    }
    for text in &texts {
        for reference in [false, true] {
            let with = read_lines(text, reference, true);
            let without = read_lines(text, reference, false);
            assert_eq!(with, without, "{}", &text[..text.len().min(200)]);
        }
    }
    // The crafted text meets each case it is for.
    let (ds, _) = read_lines(&texts[0], false, true);
    assert_eq!(ds.meta.get("nreaders").map(String::as_str), Some("10"));
    assert_eq!(ds.meta.get("kvm_duration").map(String::as_str), Some("10"));
    assert_eq!(ds.meta.get("nfakewriters"), None);
    assert!(
        ds.series
            .iter()
            .any(|s| s.spec.key.statistic.as_deref() == Some("median"))
    );
}

#[test]
fn wrapped_label_is_joined() {
    let mut p = Prose::default();
    p.text("shazptr (skip_synchronize_self_scan=1, i.e. always let scan kthread to");
    p.text("wakeup):");
    p.blank();
    assert!(p.data());
    assert_eq!(
        p.label(),
        Some("shazptr (skip_synchronize_self_scan=1, i.e. always let scan kthread to wakeup)")
    );
    p.text("a remark without a colon");
    assert!(!p.data());
    assert_eq!(
        p.label(),
        Some("shazptr (skip_synchronize_self_scan=1, i.e. always let scan kthread to wakeup)")
    );
}
