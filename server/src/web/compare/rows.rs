//! One row of the comparison table and its drill-down (statistics, tests, samples, charts).

use compare::{Flag, TestUsed, Verdict};

use super::ViewFilter;
use crate::report::Row;
use crate::web::charts::{self, Ecdf, Strip};
use crate::web::view::{human, pct, prob};

/// One line of the comparison table.
#[derive(Debug, Clone)]
pub struct RowView {
    pub idx: usize,
    pub benchmark: String,
    pub params: String,
    pub name: String,
    pub unit: String,
    pub n: String,
    pub base_med: String,
    pub head_med: String,
    pub change: String,
    pub ci: String,
    pub p: String,
    pub q: String,
    pub delta: String,
    pub verdict: &'static str,
    pub verdict_text: &'static str,
    /// (short text, explanation) of each flag.
    pub flags: Vec<(String, &'static str)>,
    /// Lower-case text the search box matches.
    pub search: String,
    pub significant: bool,
    pub charted: bool,
    /// Passes the table filters (rows that do not are rendered hidden, for live filtering,
    /// unless the table is capped).
    pub shown: bool,
}

pub(super) fn verdict_text(r: &Row) -> &'static str {
    if r.cmp.flags.contains(&Flag::Summary) {
        return "summary values, no test possible";
    }
    match r.cmp.verdict {
        Verdict::Regression => "regression",
        Verdict::Improvement => "improvement",
        Verdict::Increase => "increase",
        Verdict::Decrease => "decrease",
        Verdict::NoSignificantChange => "no significant change",
        Verdict::NotEnoughData => "not enough data",
    }
}

pub(super) fn flag_help(f: &Flag) -> &'static str {
    match f {
        Flag::WelchFallback => {
            "Too few samples for Mann-Whitney to reach alpha: Welch's t-test gave p."
        }
        Flag::Ties => "Tied or quantized values (e.g. 3-decimal time output).",
        Flag::PerCpu => "Samples are per-CPU values of one run, not repeated runs.",
        Flag::LargeN => "Very large n: samples inside one run are not independent.",
        Flag::MeanMedianDisagree => "Mean and median moved in different directions.",
        Flag::BelowThreshold => "Significant, but the change is below the practical threshold.",
        Flag::Inconclusive { .. } => "The interval spans the threshold: more runs would settle it.",
        Flag::Multiplexed => {
            "perf stat multiplexed this counter (counted part of the time, scaled up): its values carry that error."
        }
        Flag::Summary => "Pre-computed summary values, not samples: no test is possible.",
    }
}

pub(super) fn is_change(v: Verdict) -> bool {
    matches!(
        v,
        Verdict::Regression | Verdict::Improvement | Verdict::Increase | Verdict::Decrease
    )
}

pub(super) fn row_view(idx: usize, r: &Row) -> RowView {
    let c = &r.cmp;
    let params = r.params_text();
    let name = r.name();
    RowView {
        idx,
        search: search_text(r, &params, &name),
        benchmark: r.benchmark.clone(),
        params: if params.is_empty() {
            "-".into()
        } else {
            params
        },
        name,
        unit: r.unit.to_string(),
        n: format!("{} / {}", c.base.n, c.head.n),
        base_med: human(c.base.median, &r.unit),
        head_med: human(c.head.median, &r.unit),
        change: pct(c.change_pct),
        ci: c
            .ci
            .as_ref()
            .map(|i| format!("[{:+.2}%, {:+.2}%]", i.low, i.high))
            .unwrap_or_default(),
        p: prob(c.p),
        q: prob(c.q),
        delta: c
            .cliffs_delta
            .map(|d| format!("{d:+.2}"))
            .unwrap_or_else(|| "-".into()),
        verdict: c.verdict.as_str(),
        verdict_text: verdict_text(r),
        // The summary flag is the verdict text already.
        flags: c
            .flags
            .iter()
            .filter(|f| **f != Flag::Summary)
            .map(|f| (crate::export::flag_text(f), flag_help(f)))
            .collect(),
        significant: is_change(c.verdict),
        charted: false,
        shown: true,
    }
}

/// Lower-case text the search box matches: benchmark, parameters and series name.
fn search_text(r: &Row, params: &str, name: &str) -> String {
    format!("{} {} {}", r.benchmark, params, name).to_lowercase()
}

/// Whether a row passes the table filters; its search text is made only for a search.
pub(super) fn keep(r: &Row, f: &ViewFilter) -> bool {
    match f.only.as_deref() {
        Some("regressions") if r.cmp.verdict != Verdict::Regression => return false,
        Some("changes") if !is_change(r.cmp.verdict) => return false,
        _ => {}
    }
    if f.hide_ns && r.cmp.verdict == Verdict::NoSignificantChange {
        return false;
    }
    if let Some(q) = &f.q {
        let q = q.to_lowercase();
        let search = search_text(r, &r.params_text(), &r.name());
        if !q.split_whitespace().all(|w| search.contains(w)) {
            return false;
        }
    }
    true
}

/// A statistic of both sides for the numbers under a chart.
#[derive(Debug, Clone)]
pub struct StatLine {
    pub name: &'static str,
    pub base: String,
    pub head: String,
}

/// One series' charts and numbers.
#[derive(Debug, Clone)]
pub struct Detail {
    pub idx: usize,
    pub title: String,
    pub verdict: &'static str,
    pub verdict_text: &'static str,
    pub strip: Option<Strip>,
    pub ecdf: Option<Ecdf>,
    pub stats: Vec<StatLine>,
    /// (name, value) of the tests and effect sizes.
    pub tests: Vec<(&'static str, String)>,
    pub base_samples: String,
    pub head_samples: String,
    pub samples_more: usize,
}

/// Series charted in full on one page.
pub const CHARTS_SHOWN: usize = 30;
/// Sample values listed under a chart per side.
pub(super) const SAMPLES_LISTED: usize = 200;

pub(super) fn detail(idx: usize, r: &Row, base_name: &str, head_name: &str) -> Detail {
    let c = &r.cmp;
    let u = r.unit.as_str();
    let line = |name, f: &dyn Fn(&compare::Describe) -> String| StatLine {
        name,
        base: f(&c.base),
        head: f(&c.head),
    };
    let stats = vec![
        line("n", &|d| d.n.to_string()),
        line("min", &|d| human(d.min, u)),
        line("p25", &|d| human(d.p25, u)),
        line("median", &|d| human(d.median, u)),
        line("mean", &|d| human(d.mean, u)),
        line("p75", &|d| human(d.p75, u)),
        line("p90", &|d| human(d.p90, u)),
        line("p99", &|d| human(d.p99, u)),
        line("max", &|d| human(d.max, u)),
        line("std", &|d| human(d.std, u)),
        line("cv", &|d| {
            d.cv_pct
                .map(|v| format!("{v:.2}%"))
                .unwrap_or_else(|| "-".into())
        }),
    ];
    let mut tests = vec![("change of the median", pct(c.change_pct))];
    if let Some(i) = &c.ci {
        tests.push((
            "interval",
            format!(
                "[{:+.2}%, {:+.2}%] at {}% ({})",
                i.low,
                i.high,
                (i.level * 100.0).round(),
                i.method.replace('_', " ")
            ),
        ));
    }
    if let Some(mw) = &c.mann_whitney {
        tests.push((
            "Mann-Whitney",
            format!("U = {}, p = {} ({})", mw.u, prob(Some(mw.p)), mw.method),
        ));
    }
    if let Some(w) = &c.welch {
        tests.push((
            "Welch's t",
            format!("t = {:.3}, df = {:.1}, p = {}", w.t, w.df, prob(Some(w.p))),
        ));
    }
    if let Some(hl) = &c.hodges_lehmann {
        tests.push(("Hodges-Lehmann shift", human(Some(hl.shift), u)));
    }
    if let Some(d) = c.cliffs_delta {
        tests.push(("Cliff's delta", format!("{d:+.3}")));
    }
    let test = match c.test {
        TestUsed::MannWhitney => "Mann-Whitney",
        TestUsed::Welch => "Welch's t",
        TestUsed::None if c.verdict == Verdict::NotEnoughData => "none: not enough data",
        TestUsed::None => "none",
    };
    tests.push(("p (test used)", format!("{} ({test})", prob(c.p))));
    tests.push(("q (Benjamini-Hochberg)", prob(c.q)));
    let list = |v: &[f64]| {
        v.iter()
            .take(SAMPLES_LISTED)
            .map(|x| crate::format::sig(*x))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let summary = c.flags.contains(&Flag::Summary);
    Detail {
        idx,
        title: format!("{} {} {}", r.benchmark, r.params_text(), r.name())
            .trim()
            .to_string(),
        verdict: c.verdict.as_str(),
        verdict_text: verdict_text(r),
        strip: if summary {
            None
        } else {
            charts::strip(
                &r.base_samples,
                &r.head_samples,
                &c.base,
                &c.head,
                (base_name, head_name),
                u,
            )
        },
        ecdf: if summary {
            None
        } else {
            charts::ecdf(&r.base_samples, &r.head_samples, u)
        },
        stats,
        tests,
        base_samples: list(&r.base_samples),
        head_samples: list(&r.head_samples),
        samples_more: r
            .base_samples
            .len()
            .max(r.head_samples.len())
            .saturating_sub(SAMPLES_LISTED),
    }
}
