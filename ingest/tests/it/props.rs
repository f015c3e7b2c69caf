//! Property tests: no input makes detection or any parser panic, and whatever a parser accepts
//! holds only finite samples; errors point at a line of the input.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use crate::common::*;

/// Tokens typical of the supported formats, so that generated lines reach deep parser states.
const TOKENS: &[&str] = &[
    "real",
    "user",
    "sys",
    "0m49.393s",
    "0m1.0",
    "1:02.03elapsed",
    "Time:",
    "18.693",
    "Running in process mode with",
    "groups",
    "Total time:",
    "sec",
    "[sec]",
    "Performance counter stats for",
    "seconds time elapsed",
    "( +-  0.24% )",
    "<not counted>",
    "task-clock",
    "msec",
    "3,228,188",
    "Function",
    "Hit",
    "Time",
    "Avg",
    "s^2",
    "us",
    "==>",
    "<==",
    "# tracer: function_graph",
    "# tracer: irqsoff",
    "latency:",
    "#101/101",
    "CPU#3",
    "| (M:preempt",
    "=> started at:",
    "bash-3730",
    "1d..1",
    "1us+:",
    "0)",
    "3)",
    "12)",
    "|",
    "{",
    "}",
    "();",
    "func()",
    "} /* f */",
    "/*",
    "*/",
    "+",
    "!",
    "#",
    "*",
    "@",
    "$",
    "1.382",
    "3594274",
    "360.774522",
    "=>",
    "------",
    "[...]",
    "Tracing \"f\"... Ctrl-C to end.",
    "^C",
    "rcu-scale:",
    "srcu-perf:",
    "rcu-scale:---",
    "Start of test:",
    "nreaders=4",
    "writer",
    "gps:",
    "writer-duration:",
    "start:",
    "batches:",
    "!!!",
    "Total time taken by all kfree'ers:",
    "ns,",
    "loops:",
    "memory footprint:",
    "5057MB",
    "Average grace-period duration:",
    "50th percentile grace-period duration:",
    "microseconds",
    "Histogram bucket size:",
    "Running experiment with options:",
    "Grace periods:",
    "median (usecs)",
    "5ms",
    "10ms",
    "v4.19",
    "rcu-ref-scale:",
    "Runs\tTime(ns)",
    "Threads\tTime(ns)",
    "1\t3.286",
    "Experiment #0 (Format: <THREAD-NUM>:<Total loop time in ns>)",
    "0: 123\t1: 456",
    "Points:",
    "Minimum reader duration:",
    "Median",
    "results:",
    "metric,value,unit",
    "param.x",
    "x,1,s",
    "x,-1,ms",
    "\"",
    "{\"series\": [",
    "{\"metric\": \"x\", \"samples\": [1]}",
    "]}",
    "[",
    "]",
    ":",
    ",",
    "=",
    "-",
    ".",
    "0",
    "1",
    "-1",
    "1e308",
    "1e-320",
    "nan",
    "inf",
    "18446744073709551616",
    "99999999999999999999999.5",
    ">",
    "> >",
    "[   12.920044]",
    "\t",
    "   ",
    "label:",
    "== before ==",
    "original:",
];

fn token_line() -> impl Strategy<Value = String> {
    let sep = prop::sample::select(&[" ", "\t", "", "  "][..]);
    prop::collection::vec((prop::sample::select(TOKENS), sep), 0..8).prop_map(|parts| {
        let mut s = String::new();
        for (tok, sep) in parts {
            s.push_str(tok);
            s.push_str(sep);
        }
        s
    })
}

fn all_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(fixture("")).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e != "md") {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

/// Parses with detection and with every format forced; checks what comes back.
fn check(bytes: &[u8]) {
    let path = Path::new("prop.txt");
    let line_count = bytes.split(|&b| b == b'\n').count() as u64;
    let mut results = vec![ingest::parse_bytes(path, bytes, None)];
    for f in ingest::formats::all() {
        results.push(ingest::parse_bytes(path, bytes, Some(f.name())));
    }
    for r in results {
        match r {
            Ok((summary, ds)) => {
                assert_eq!(summary.samples as usize, ds.sample_count());
                for s in &ds.series {
                    assert!(s.samples.iter().all(|v| v.is_finite()), "{:?}", s.spec.key);
                }
            }
            Err(e) => {
                if let Some(line) = e.line() {
                    assert!(
                        line <= line_count,
                        "error at line {line} of {line_count}: {e}"
                    );
                }
            }
        }
    }
    let _ = ingest::formats::detect(&String::from_utf8_lossy(bytes));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check(&bytes);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,600}") {
        check(text.as_bytes());
    }

    #[test]
    fn lines_of_format_tokens_never_panic(lines in prop::collection::vec(token_line(), 0..40)) {
        check(lines.join("\n").as_bytes());
        check(lines.join("\r\n").as_bytes());
    }

    #[test]
    fn edited_fixtures_never_panic(
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
        inserted in prop::collection::vec(token_line(), 1..4),
    ) {
        let files = all_fixtures();
        let text = std::fs::read_to_string(pick.get(&files)).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let pos = at.index(lines.len() + 1);
        for (i, l) in inserted.into_iter().enumerate() {
            lines.insert(pos + i, l);
        }
        let joined = lines.join("\n");
        check(joined.as_bytes());
        // A truncated copy, cut anywhere (even inside a UTF-8 sequence).
        let end = cut.index(joined.len() + 1);
        check(&joined.as_bytes()[..end]);
    }
}

/// Detection answers every fixture and every prefix of it (a file cut short) without panicking:
/// a format, or an error that says what was expected. A whole fixture in a folder named after a
/// format is detected as that format.
#[test]
fn detect_handles_every_fixture_and_its_prefixes() {
    let names: Vec<&str> = ingest::formats::all().iter().map(|f| f.name()).collect();
    let (mut whole, mut prefixes) = (0, 0);
    for f in all_fixtures() {
        let text = std::fs::read_to_string(&f).unwrap();
        let folder = f.parent().unwrap().file_name().unwrap().to_string_lossy();
        let shown = f.display();
        for end in (0..text.len()).step_by(97).chain([text.len()]) {
            if !text.is_char_boundary(end) {
                continue;
            }
            match ingest::formats::detect(&text[..end]) {
                Ok(format) => assert!(names.contains(&format.name()), "{shown}"),
                Err(e) if text[..end].trim().is_empty() => assert!(e.contains("empty"), "{e}"),
                Err(e) => assert!(
                    e.contains("supported formats:") && names.iter().all(|n| e.contains(n)),
                    "{shown} cut at {end}: {e}"
                ),
            }
            prefixes += 1;
        }
        // A whole message is decoded (quoted-printable, base64) before detection, as parsing does.
        let decoded = match ingest::mail::sniff(text.as_bytes()) {
            Some(enc) => {
                String::from_utf8_lossy(&ingest::mail::decode(text.as_bytes(), &enc)).into_owned()
            }
            None => text.clone(),
        };
        let detected = ingest::formats::detect(&decoded).map(|f| f.name());
        if names.contains(&&*folder) {
            assert_eq!(detected, Ok(&*folder), "{shown}");
            whole += 1;
        }
    }
    assert!(
        whole >= 30 && prefixes >= 900,
        "{whole} fixtures, {prefixes} prefixes"
    );
}
