//! Tests of detect.
#[allow(unused_imports)]
use crate::common::*;

use ingest::Error;

/// Formats quiescent does not import are refused by name, never mis-read by another parser.
#[test]
fn other_formats_are_refused_by_name() {
    let cases = [
        (
            "other/tracecmd_doc_report_default_cpus8.txt",
            "trace-cmd report",
        ),
        (
            "other/tracecmd_doc_report_-w_wakeup_latency_summary.txt",
            "trace-cmd report",
        ),
        (
            "other/doc54_hist_trigger_synthetic_latency_cyclictest.txt",
            "histogram trigger",
        ),
        ("other/doc54_hwlat_trace.txt", "hwlat tracer trace"),
        (
            "other/doc54_rcutorture_stats_output_start_end.txt",
            "rcutorture statistics",
        ),
    ];
    for (file, what) in cases {
        match ingest::parse_file(&fixture(file), None) {
            Err(Error::Detect { reason, path }) => {
                assert!(reason.contains(what), "{file}: {reason}");
                assert!(reason.contains("does not import"), "{file}: {reason}");
                assert_eq!(path, fixture(file));
            }
            other => panic!("{file}: expected a detection refusal, got {other:?}"),
        }
    }
}

/// Each fixture of the rcuscale, refscale, function_graph and samples folders is detected as
/// its own format.
#[test]
fn fixtures_detect_as_their_format() {
    for (dir, format) in [
        ("rcuscale", "rcuscale"),
        ("refscale", "refscale"),
        ("function_graph", "function_graph"),
        ("samples", "samples"),
    ] {
        let root = fixture(dir);
        let mut n = 0;
        for entry in std::fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let detected = ingest::formats::detect(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(detected.name(), format, "{name}");
            n += 1;
        }
        assert!(n > 0, "{dir} has no fixtures");
    }
}
