//! A file parsed in two halves at once gives exactly what one thread gives, wherever the cut
//! falls and however long the tail's window: series in the same order with the same samples,
//! the same metadata, warnings, extras and counts, and the same error.

use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;

use ingest::split::{self, Outcome};
use ingest::{Format, SeriesTable};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(crate::common::fixture(name)).unwrap()
}

/// Everything a parse gives, as text.
fn render(result: Result<ingest::ParseSummary, ingest::Error>, t: &SeriesTable) -> String {
    let mut out = String::new();
    match result {
        Ok(s) => {
            writeln!(
                out,
                "ok {} samples={} warnings={}",
                s.format, s.samples, s.warnings
            )
            .unwrap();
        }
        // Nothing of a failed parse is used.
        Err(e) => return format!("error {e}\n"),
    }
    for s in t.iter() {
        let mut samples = Vec::new();
        s.copy_samples(&mut samples).unwrap();
        writeln!(
            out,
            "series {} {} {:?} {:?} {:?} {} {:?} {:?}",
            s.metric, s.scope, s.label, s.statistic, s.params, s.unit, s.direction, samples
        )
        .unwrap();
    }
    writeln!(out, "meta {:?}", t.meta).unwrap();
    writeln!(out, "warnings {:?}", t.warnings).unwrap();
    writeln!(out, "extra {:?}", t.extra).unwrap();
    out
}

fn whole(fmt: &dyn Format, text: &[u8]) -> String {
    let mut t = SeriesTable::new();
    let r = ingest::parse_reader(Path::new("input.txt"), text, Some(fmt.name()), &mut t);
    render(r, &t)
}

fn halves(fmt: &'static dyn Format, text: &[u8], cut: u64, window: u64) -> (String, Outcome) {
    let open = |offset: u64| -> std::io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(&text[offset as usize..]))
    };
    let mut t = SeriesTable::new();
    let r = split::parse_halves(
        Path::new("input.txt"),
        fmt,
        &open,
        (cut, window),
        &mut t,
        &SeriesTable::new,
    );
    let outcome = r.as_ref().map_or(Outcome::Whole, |(_, o)| *o);
    (render(r.map(|(s, _)| s), &t), outcome)
}

/// Splits `text` at every line start but the first, with windows of 1, 3 and 2,000 lines;
/// returns how often the halves met.
fn every_cut(fmt: &'static dyn Format, name: &str, text: &[u8]) -> usize {
    let expected = whole(fmt, text);
    let mut met = 0;
    let starts = text
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' && i + 1 < text.len())
        .map(|(i, _)| i as u64 + 1);
    for cut in starts {
        for window in [1, 3, 2_000] {
            let (got, outcome) = halves(fmt, text, cut, window);
            assert_eq!(
                got, expected,
                "{name}: cut at byte {cut}, window {window} ({outcome:?})"
            );
            met += usize::from(matches!(outcome, Outcome::Met { .. }));
        }
    }
    met
}

fn rcuscale() -> &'static dyn Format {
    ingest::formats::by_name("rcuscale").unwrap()
}

const RCUSCALE: [&str; 4] = [
    "rcuscale/lkml_2021_rcuscale_writer_duration_console_sample.txt",
    "rcuscale/lkml_2022_kfree_rcu_test_total_time_lines.txt",
    "rcuscale/lkml_2025_shazptr_kvm_recheck_summaries_tab_indented.txt",
    "rcuscale/seed001_rcuperf_median_table.txt",
];

#[test]
fn rcuscale_fixtures_split_anywhere_give_the_whole_parse() {
    for name in RCUSCALE {
        every_cut(rcuscale(), name, &fixture(name));
    }
}

/// Repeated, a file's labels come back: the tail's fresh state meets the head's after a
/// block, and its output is what the whole parse gives from there on.
#[test]
fn rcuscale_fixtures_repeated_meet_and_give_the_whole_parse() {
    for name in RCUSCALE {
        let one = fixture(name);
        let text = [one.as_slice(), b"\n"].concat().repeat(6);
        let met = every_cut(rcuscale(), name, &text);
        assert!(met > 0, "{name}: the halves never met");
    }
    // Every fixture after the other: sections whose labels differ.
    let all: Vec<u8> = RCUSCALE
        .iter()
        .flat_map(|n| [fixture(n), b"\n".to_vec()].concat())
        .collect();
    let text = [all.as_slice(), all.as_slice()].concat();
    assert!(every_cut(rcuscale(), "all fixtures twice", &text) > 0);
}

/// Past the caps on metadata and warnings: what the tail dropped or kept is what the whole
/// parse drops or keeps, and the counts are the whole parse's.
#[test]
fn rcuscale_split_past_the_caps_gives_the_whole_parse() {
    let mut text = String::new();
    for w in 0..10_200 {
        writeln!(text, "rcu-scale: writer {w} gps: 5").unwrap();
        writeln!(text, "rcu-scale:    {w} writer-duration:     0 44003961").unwrap();
        writeln!(text, "rcu-scale: something else {w}").unwrap();
    }
    let text = text.into_bytes();
    let expected = whole(rcuscale(), &text);
    assert!(expected.contains("more than 10000 metadata values"));
    assert!(expected.contains("more than 10000 warnings"));
    let mut met = 0;
    for at in [
        1,
        5_000,
        29_000,
        30_000,
        31_000,
        60_000,
        300_000,
        text.len() - 200,
    ] {
        let cut = text[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1) as u64;
        if cut == 0 {
            continue;
        }
        for window in [1, 50, 2_000] {
            let (got, outcome) = halves(rcuscale(), &text, cut, window);
            assert_eq!(
                got, expected,
                "cut at byte {cut}, window {window} ({outcome:?})"
            );
            met += usize::from(matches!(outcome, Outcome::Met { .. }));
        }
    }
    assert!(met > 0, "the halves never met");
}

/// A file whose tail fails (a bad value past the cut) fails as the whole parse does.
#[test]
fn rcuscale_split_errors_are_the_whole_parse_errors() {
    let one = fixture(RCUSCALE[0]);
    let bad = b"\trcu-scale:    0 writer-duration:     1 -5\n";
    for text in [
        [one.as_slice(), b"\n", one.as_slice(), bad, one.as_slice()].concat(),
        [bad.as_slice(), one.as_slice(), b"\n", one.as_slice()].concat(),
    ] {
        every_cut(rcuscale(), "with a bad value", &text);
    }
}

/// A file past [`split::SPLIT_BYTES`] is cut near its middle and parsed in halves by
/// [`ingest::parse_path`], with the whole parse's output.
#[test]
fn a_large_rcuscale_file_parsed_by_path_gives_the_whole_parse() {
    let one = [fixture(RCUSCALE[0]), fixture(RCUSCALE[2])].concat();
    let copies = split::SPLIT_BYTES as usize / one.len() + 2;
    let text = one.repeat(copies);
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, &text).unwrap();
    let expected = whole(rcuscale(), &text);
    let fresh = || SeriesTable::with_sample_thread();
    let mut t = fresh();
    let r = ingest::parse_path(file.path(), None, &mut t, &fresh);
    t.finish();
    // The name differs from `whole`'s, and nothing in the output names the file.
    assert_eq!(render(r, &t), expected);
    // Cut where parse_path cuts, the halves meet.
    let open = |offset: u64| -> std::io::Result<Box<dyn Read + Send + '_>> {
        Ok(Box::new(&text[offset as usize..]))
    };
    let cut = split::find_cut(&open, text.len() as u64).unwrap().unwrap();
    assert!(cut > text.len() as u64 / 2 && text[cut as usize - 1] == b'\n');
    let (got, outcome) = halves(rcuscale(), &text, cut, split::WINDOW);
    assert_eq!(got, expected);
    assert!(matches!(outcome, Outcome::Met { .. }), "{outcome:?}");
}
