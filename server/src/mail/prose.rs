//! Numbers a mail gives in prose rather than as tool output, read when the parsers find no pair
//! of blocks: lists of `name: value` lines (`one-disable: 564us`) and sentences that state both
//! sides (`Without this patch, ... 4.32 seconds; with it, ... 3.6 seconds`). Pure.

use std::sync::LazyLock;

use ingest::model::{Dataset, SeriesKey, SeriesSpec, Sink, Unit};
use regex::Regex;

use super::claims::unquote;

const UNITS: &str = r"ns|nsecs?|us|µs|usecs?|ms|msecs?|s|secs?|seconds?";

static LIST_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^([A-Za-z][\w.+/-]*(?: [\w.+/-]+){{0,3}})\s*:\s*(?:\(\s*\d+\s*\)\s*)?(\d+(?:\.\d+)?)\s*({UNITS})?\s*$"
    ))
    .expect("regex")
});

static SENTENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(without|before)\b[^.;]*?(\d+(?:\.\d+)?)\s*({UNITS})\b[^.]*?\b(with|after)\b[^.;]*?(\d+(?:\.\d+)?)\s*({UNITS})\b"
    ))
    .expect("regex")
});

fn seconds(unit: &str) -> f64 {
    match unit.to_lowercase().trim_end_matches('s') {
        "n" | "nsec" => 1e-9,
        "u" | "µ" | "usec" => 1e-6,
        "m" | "msec" => 1e-3,
        _ => 1.0,
    }
}

fn add(ds: &mut Dataset, metric: &str, label: &str, value: f64, unit: Option<&str>) {
    let key = SeriesKey::new(metric).label(Some(label.to_string()));
    let (spec, v) = match unit {
        Some(u) => (SeriesSpec::duration(key), value * seconds(u)),
        None => (
            SeriesSpec::new(key, Unit::Count, ingest::Direction::Neutral),
            value,
        ),
    };
    let id = ds.series(&spec);
    ds.sample(id, v);
}

/// The metric a list is about: the last word of the line introducing it (`Here's the
/// latencies:`), or `value`.
fn list_metric(intro: Option<&str>) -> String {
    intro
        .and_then(|l| l.trim().strip_suffix(':'))
        .and_then(|l| l.split_whitespace().last())
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| "value".to_string())
}

/// Mail and MIME header names (`MIME-Version: 1.0`, `X-Mailer`) are not measurements.
fn is_header(name: &str) -> bool {
    let lower = name.to_lowercase();
    [
        "mime-version",
        "content-",
        "x-",
        "message-id",
        "date",
        "lines",
        "status",
    ]
    .iter()
    .any(|h| lower.starts_with(h))
}

/// Reads the prose numbers of `text` into labelled series; empty when there are none.
pub fn read(text: &str) -> Dataset {
    let mut ds = Dataset::new();
    let mut intro: Option<&str> = None;
    let mut in_list = false;
    for raw in text.lines() {
        let line = unquote(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(c) = LIST_LINE.captures(line)
            && !is_header(c[1].trim())
        {
            let metric = list_metric(intro);
            if let Ok(v) = c[2].parse::<f64>() {
                add(
                    &mut ds,
                    &metric,
                    c[1].trim(),
                    v,
                    c.get(3).map(|m| m.as_str()),
                );
            }
            in_list = true;
        } else {
            if !in_list || line.ends_with(':') {
                intro = Some(line);
            }
            in_list = false;
        }
    }
    // Sentences, over paragraphs with their lines joined.
    let mut para = String::new();
    let flush = |para: &mut String, ds: &mut Dataset| {
        for c in SENTENCE.captures_iter(para) {
            let (a, b) = (c[2].parse::<f64>(), c[5].parse::<f64>());
            if let (Ok(a), Ok(b)) = (a, b) {
                add(ds, "time", &c[1].to_lowercase(), a, Some(&c[3]));
                add(ds, "time", &c[4].to_lowercase(), b, Some(&c[6]));
            }
        }
        para.clear();
    };
    for raw in text.lines() {
        let line = unquote(raw).trim();
        if line.is_empty() {
            flush(&mut para, &mut ds);
        } else {
            para.push_str(line);
            para.push(' ');
        }
    }
    flush(&mut para, &mut ds);
    ds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_list_with_counts_in_parentheses() {
        let ds = read(
            "Here's the latencies:\n\n one-disable:\t\t564us\n one-enable:\t\t567us\n\n full-disable: (19043)\t9352us\n",
        );
        assert_eq!(ds.labels(), ["one-disable", "one-enable", "full-disable"]);
        let s = ds.get_labelled("latencies", "all", "full-disable").unwrap();
        assert!((s.samples[0] - 9352e-6).abs() < 1e-12);
    }

    #[test]
    fn without_with_sentence_across_lines() {
        let ds = read(
            "> on a POWER7.  Without this patch, those 202 calls take up a total of\n> 4.32 seconds; with it, they take up 3.6 seconds.  The kernel is\n",
        );
        assert_eq!(
            ds.get_labelled("time", "all", "without").unwrap().samples,
            [4.32]
        );
        assert_eq!(
            ds.get_labelled("time", "all", "with").unwrap().samples,
            [3.6]
        );
    }

    #[test]
    fn plain_prose_gives_nothing() {
        assert!(
            read("MIME-Version: 1.0\nThanks, this looks good to me.\nReviewed-by: Someone\n")
                .series
                .is_empty()
        );
    }
}
