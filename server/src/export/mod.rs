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

/// The largest number of further runs a flag names.
const MORE_RUNS_SHOWN: usize = 10_000;

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
        // Past this many, the estimate says only that the change sits on the threshold: no
        // lab would run that many, and the normal approximation means little that far out.
        Inconclusive { more_runs: Some(n) } if *n > MORE_RUNS_SHOWN => format!(
            "inconclusive (over {} more runs)",
            format::grouped(MORE_RUNS_SHOWN as u64)
        ),
        Inconclusive { more_runs: Some(n) } => format!(
            "inconclusive (~{} {})",
            format::grouped(*n as u64),
            format::noun(n, "more run")
        ),
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
pub(crate) fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('~');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use compare::Flag::Inconclusive;

    #[test]
    fn more_runs_read_as_counts_and_stop_at_a_cap() {
        let text = |n| flag_text(&Inconclusive { more_runs: n });
        assert_eq!(text(Some(1)), "inconclusive (~1 more run)");
        assert_eq!(text(Some(3705)), "inconclusive (~3,705 more runs)");
        assert_eq!(text(Some(10_000)), "inconclusive (~10,000 more runs)");
        assert_eq!(text(Some(52_323)), "inconclusive (over 10,000 more runs)");
        assert_eq!(text(None), "inconclusive");
    }
}
