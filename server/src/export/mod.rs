//! Renderers of a comparison report, one file per format (JSON, CSV, Markdown, email text,
//! terminal text), all printing numbers through [`crate::format`].

pub mod claims;
pub mod csv;
pub mod email;
pub mod json;
pub mod markdown;
pub mod terminal;

use crate::format;
use crate::report::Row;

/// The flags of a row in words, comma-separated.
fn flags_text(r: &Row) -> String {
    r.cmp
        .flags
        .iter()
        .map(flag_text)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A flag in words.
pub fn flag_text(f: &compare::Flag) -> String {
    use compare::Flag::*;
    match f {
        WelchFallback => "welch (few runs)".into(),
        Ties => "ties".into(),
        PerCpu => "per-cpu values of one run".into(),
        LargeN => "large n".into(),
        MeanMedianDisagree => "mean/median disagree".into(),
        BelowThreshold => "below threshold".into(),
        Inconclusive { more_runs: Some(n) } => {
            format!("inconclusive (~{})", crate::format::count(*n, "more run"))
        }
        Inconclusive { more_runs: None } => "inconclusive".into(),
        Summary => "summary values, no test possible".into(),
        Multiplexed => "counter multiplexed".into(),
    }
}

/// The median of one side in the row's unit, `-` when there is none.
fn median_h(d: &compare::Describe, unit: impl AsRef<str>) -> String {
    format::value(d.median, unit)
}

/// The confidence interval of the change, empty when there is none.
fn ci_text(c: &compare::SeriesComparison) -> String {
    c.ci.as_ref()
        .map(|i| format::percent_interval(i.low, i.high))
        .unwrap_or_default()
}

/// Cuts `s` to `width` characters, marking the cut with `~`.
fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('~');
        t
    }
}
